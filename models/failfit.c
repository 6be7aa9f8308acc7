/*
 * failfit: classes of failure reasons and XIDs, and exact Poisson rates
 * (failfit.h).
 */
#include "models/failfit.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

/*
 * NVIDIA XID codes that say which part failed. Source: NVIDIA, "Xid
 * Errors" and its Xid catalogue for Ampere and newer GPUs
 * (docs.nvidia.com/deploy/xid-errors/, "Analyzing Xid Errors with the Xid
 * Catalog": each code's mnemonic and resolution bucket) and "Dynamic Page
 * Retirement" (docs.nvidia.com/deploy/dynamic-page-retirement/, XID 48 a
 * double-bit error, 63 a page retired or row remapped, 64 a retirement or
 * remap that failed). The component each is charged to and whether a part
 * is replaced are this program's reading of those descriptions:
 *
 *   48  double-bit (uncorrectable) ECC error          HBM, reset clears it (row remapped)
 *   64  page retirement / row remap failed            HBM, the GPU is replaced
 *   94  contained uncorrectable ECC error             HBM, reset clears it
 *   95  uncontained uncorrectable ECC error           HBM, reset; the node's jobs all die
 *   74  NVLink error                                  GPU, reset clears it
 *   79  GPU has fallen off the bus                    GPU, the GPU is replaced
 *   61, 62  internal micro-controller halt            GPU, reset
 *   119, 120  GPU system processor (GSP) timeout/error GPU, reset
 *   13, 31, 43, 45  the application's fault            not a fleet failure
 *   63  row remap recorded (pending reset)             informational
 *   92  high single-bit ECC rate                       informational (a warning, nothing failed)
 *
 * Repair times are the failure model's named estimates (REL_MTTR_*,
 * reliability.h): a GPU swap for a replaced GPU, a reboot for a reset.
 */
static const struct { int xid; failfit_class c; } xid_table[] = {
    { 48, { REL_HBM, "HBM double-bit ECC (XID 48)", 1, REL_MTTR_REBOOT_S } },
    { 64, { REL_HBM, "HBM row remap failed (XID 64)", 1, REL_MTTR_GPU_SWAP_S } },
    { 94, { REL_HBM, "HBM contained ECC (XID 94)", 1, REL_MTTR_REBOOT_S } },
    { 95, { REL_HBM, "HBM uncontained ECC (XID 95)", 1, REL_MTTR_REBOOT_S } },
    { 74, { REL_GPU, "NVLink error (XID 74)", 1, REL_MTTR_REBOOT_S } },
    { 79, { REL_GPU, "GPU fell off the bus (XID 79)", 1, REL_MTTR_GPU_SWAP_S } },
    { 61, { REL_GPU, "GPU micro-controller halt (XID 61)", 1, REL_MTTR_REBOOT_S } },
    { 62, { REL_GPU, "GPU micro-controller halt (XID 62)", 1, REL_MTTR_REBOOT_S } },
    { 119, { REL_GPU, "GPU system processor (XID 119)", 1, REL_MTTR_REBOOT_S } },
    { 120, { REL_GPU, "GPU system processor (XID 120)", 1, REL_MTTR_REBOOT_S } },
    { 13, { FAILFIT_APP, "application (XID 13)", 0, 0 } },
    { 31, { FAILFIT_APP, "application (XID 31)", 0, 0 } },
    { 43, { FAILFIT_APP, "application (XID 43)", 0, 0 } },
    { 45, { FAILFIT_APP, "application (XID 45)", 0, 0 } },
    { 63, { FAILFIT_INFO, "row remap recorded (XID 63)", 0, 0 } },
    { 92, { FAILFIT_INFO, "high single-bit ECC rate (XID 92)", 0, 0 } },
};

failfit_class failfit_xid(int xid) {
    for (size_t i = 0; i < sizeof xid_table / sizeof xid_table[0]; i++)
        if (xid_table[i].xid == xid) return xid_table[i].c;
    return (failfit_class){ REL_GPU, "GPU, other XID", 1, REL_MTTR_REBOOT_S };
}

/*
 * Reasons in words, first match wins (so "ECC" is HBM before "GPU" is
 * GPU). The words are those operators write in Slurm drain reasons and
 * Kubernetes node conditions; the classes follow the Llama 3 failure
 * table's components (The Llama 3 Herd of Models, 2024, Table 5: faulty
 * GPU, HBM, NIC, network switch/cable, host parts, SSD, software) and
 * Slurm's own reasons ("Not responding", "Kill task failed", "Prolog
 * error", "Epilog error", "reboot requested": slurm.conf(5) and
 * scontrol(1)). Planned work is not a failure.
 */
static const struct { const char *words; failfit_class c; } reason_table[] = {
    { "maint|upgrade|reserv|reboot requested|reboot asap|admin|decommission|testing",
      { FAILFIT_PLANNED, "planned", 0, 0 } },
    { "ecc|row remap|remapped row|dbe|hbm|page retire", { REL_HBM, "HBM ECC or row remap", 1, REL_MTTR_REBOOT_S } },
    { "nvlink|fabric manager|nvswitch", { REL_GPU, "NVLink or NVSwitch", 1, REL_MTTR_REBOOT_S } },
    { "fallen off|off the bus|gpu lost|gpu missing|gpu count|gres|gpu", { REL_GPU, "GPU", 1, REL_MTTR_GPU_SWAP_S } },
    { "ib link|infiniband|hca|mlx|nic|roce|ethernet|port down|link down|link flap",
      { REL_NIC, "NIC or IB link", 1, REL_MTTR_LINK_S } },
    { "cable|optic|transceiver|switch", { REL_SWITCH, "network switch or cable", 1, REL_MTTR_LINK_S } },
    { "nvme|ssd|disk|raid", { REL_STORAGE, "local disk", 1, REL_MTTR_NODE_PART_S } },
    { "kernel panic|panic|oops|lockup|hung task|mce|machine check", { REL_NODE, "kernel panic or MCE", 1,
                                                                       REL_MTTR_REBOOT_S } },
    { "out of memory|oom", { REL_SOFTWARE, "software or health check", 0, 0 } },
    { "psu|power|fan|thermal|dimm|memory|cpu|bmc|motherboard|hardware", { REL_NODE, "host hardware", 1,
                                                                            REL_MTTR_NODE_PART_S } },
    { "not responding|unexpectedly reboot|node fail|node_fail|unreachable|notready|kubelet stopped",
      { REL_NODE, "node not responding", 1, REL_MTTR_REBOOT_S } },
    { "prolog|epilog|kill task failed|health check|healthcheck|nhc|nccl|cuda|driver|software|slurmd|munge",
      { REL_SOFTWARE, "software or health check", 0, 0 } },
};

/* 1 when reason (lower-cased) holds one of the '|'-separated words at the
 * start of a word ("nic" in "NIC down", not in "kernel panic"). */
static int holds_word(const char *lower, const char *words) {
    const char *w = words;
    while (*w) {
        const char *bar = strchr(w, '|');
        size_t n = bar ? (size_t)(bar - w) : strlen(w);
        for (const char *p = lower; *p; p++)
            if ((p == lower || !isalnum((unsigned char)p[-1])) && !strncmp(p, w, n)) return 1;
        w += n + (bar != NULL);
    }
    return 0;
}

/* The XID number a reason names ("XID 79", "Xid: 48", "xid=94"), or -1. */
static int reason_xid(const char *lower) {
    for (const char *p = strstr(lower, "xid"); p; p = strstr(p + 1, "xid")) {
        const char *q = p + 3;
        while (*q == ' ' || *q == ':' || *q == '=' || *q == '-' || *q == '_') q++;
        if (isdigit((unsigned char)*q)) return (int)strtol(q, NULL, 10);
    }
    return -1;
}

failfit_class failfit_reason(const char *reason) {
    char lower[256];
    size_t n = 0;
    for (; reason && reason[n] && n + 1 < sizeof lower; n++) lower[n] = (char)tolower((unsigned char)reason[n]);
    lower[n] = 0;
    int xid = reason_xid(lower);
    if (xid >= 0) return failfit_xid(xid);
    for (size_t i = 0; i < sizeof reason_table / sizeof reason_table[0]; i++)
        if (holds_word(lower, reason_table[i].words)) return reason_table[i].c;
    return (failfit_class){ REL_NODE, "other (unclassified reason)", 1, REL_MTTR_REBOOT_S };
}

int failfit_poisson(double k, double exposure_s, double level, failfit_rate *out) {
    if (!(k >= 0) || !(exposure_s > 0) || !(level > 0 && level < 1) || !out) return -1;
    double a = 1 - level;
    failfit_rate r = { .events = k, .exposure_s = exposure_s };
    r.rate_per_s = k / exposure_s;
    r.rate_lo_per_s = k > 0 ? gsl_cdf_chisq_Pinv(a / 2, 2 * k) / (2 * exposure_s) : 0;
    r.rate_hi_per_s = gsl_cdf_chisq_Pinv(1 - a / 2, 2 * k + 2) / (2 * exposure_s);
    r.mtbf_s = k > 0 ? exposure_s / k : INFINITY;
    r.mtbf_lo_s = 1 / r.rate_hi_per_s;
    r.mtbf_hi_s = k > 0 ? 1 / r.rate_lo_per_s : INFINITY;
    *out = r;
    return 0;
}

/* ---- Fitting a history ------------------------------------------------ */

static int by_time(const void *a, const void *b) {
    const failfit_event *x = a, *y = b;
    if (x->t_s != y->t_s) return x->t_s < y->t_s ? -1 : 1;
    return (int)x->source - (int)y->source;
}

/* How well an event says what failed: lower is better; 100 for events
 * that are not fleet failures (application faults, information). */
static int specificity(const failfit_event *e) {
    if (e->c.component < 0) return 100;
    if (e->source == FAILFIT_SRC_REASON && !strncmp(e->c.cause, "other", 5)) return 2;
    return e->source == FAILFIT_SRC_XID ? 0 : e->source == FAILFIT_SRC_REASON ? 1 : 3;
}

static int share_node(const failfit_event *a, const failfit_event *b) {
    for (int i = 0; i < a->n_nodes; i++)
        for (int j = 0; j < b->n_nodes; j++)
            if (a->node[i][0] && !strcmp(a->node[i], b->node[j])) return 1;
    return 0;
}

/* One failure: the events merged into it. */
typedef struct cluster { int first, best, planned; double down_s; } cluster;

/* Merge ev (sorted by time) into clusters (room for n); returns how many. */
static int merge_events(const failfit_event *ev, int n, double merge_s, cluster *cl) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        int hit = -1;
        for (int k = m - 1; k >= 0 && ev[i].t_s - ev[cl[k].first].t_s <= merge_s; k--)
            if (share_node(&ev[cl[k].best], &ev[i]) || share_node(&ev[cl[k].first], &ev[i])) {
                hit = k;
                break;
            }
        if (hit < 0) {
            cl[m] = (cluster){ i, i, 0, 0 };
            hit = m++;
        } else if (specificity(&ev[i]) < specificity(&ev[cl[hit].best])) {
            cl[hit].best = i;
        }
        cl[hit].planned |= ev[i].c.component == FAILFIT_PLANNED;
        if (ev[i].down_s > cl[hit].down_s) cl[hit].down_s = ev[i].down_s;
    }
    return m;
}

static double instances_of(int comp, const failfit_fleet *f) {
    rel_scope s = rel_component_scope((rel_component)comp);
    double per = s == REL_PER_GPU ? f->gpus_per_node : s == REL_PER_NIC ? f->nics_per_node : 1;
    return per * f->nodes;
}

static int by_row(const void *a, const void *b) {
    const failfit_row *x = a, *y = b;
    if (x->component != y->component) return x->component - y->component;
    if (x->r.events != y->r.events) return x->r.events > y->r.events ? -1 : 1;
    return strcmp(x->cause, y->cause);
}

/* Add one failure (class c, down time down_s) to the row of its cause. */
static int add_failure(failfit_row *rows, int nr, int max, const failfit_class *c, double down_s) {
    int i = 0;
    while (i < nr && !(rows[i].component == c->component && !strcmp(rows[i].cause, c->cause))) i++;
    if (i == nr) {
        if (nr == max) return nr;
        memset(&rows[nr], 0, sizeof rows[nr]);
        rows[nr].component = c->component;
        snprintf(rows[nr].cause, sizeof rows[nr].cause, "%s", c->cause);
        rows[nr].needs_repair = c->needs_repair;
        rows[nr].mttr_s = c->mttr_s;
        nr++;
    }
    rows[i].r.events += 1;
    if (down_s > 0) rows[i].mttr_s = (rows[i].mttr_s * rows[i].n_down + down_s) / (rows[i].n_down + 1), rows[i].n_down++;
    return nr;
}

/* Each row's and each component's rate over window x instances. */
static void rates(failfit_row *rows, int nr, const failfit_fleet *f, double level, failfit_row *by_comp) {
    for (int c = 0; c < REL_COMPONENT_COUNT; c++) {
        memset(&by_comp[c], 0, sizeof by_comp[c]);
        by_comp[c].component = c;
        by_comp[c].instances = instances_of(c, f);
    }
    for (int i = 0; i < nr; i++) {
        failfit_row *t = &by_comp[rows[i].component];
        t->r.events += rows[i].r.events;
        t->mttr_s += rows[i].mttr_s * rows[i].r.events;
        rows[i].instances = instances_of(rows[i].component, f);
        failfit_poisson(rows[i].r.events, f->window_s * rows[i].instances, level, &rows[i].r);
    }
    for (int c = 0; c < REL_COMPONENT_COUNT; c++) {
        failfit_row *t = &by_comp[c];
        if (t->r.events > 0) t->mttr_s /= t->r.events;
        failfit_poisson(t->r.events, f->window_s * (t->instances > 0 ? t->instances : 1), level, &t->r);
    }
}

/* One counted failure, for the time between failures: its component,
 * node, time and down time. */
typedef struct seen { int comp; const char *node; double t_s, down_s; } seen;

static int by_instance(const void *a, const void *b) {
    const seen *x = a, *y = b;
    if (x->comp != y->comp) return x->comp - y->comp;
    int c = strcmp(x->node, y->node);
    if (c) return c;
    return x->t_s < y->t_s ? -1 : x->t_s > y->t_s;
}

/* Component comp's lifetimes from s (sorted by instance): from each
 * failure (plus its down time) to the node's next one into x, from its
 * last to t_end_s (when later) into c. */
static void lifetimes(const seen *s, int n, int comp, double t_end_s, double *x, int *n_x, double *c, int *n_c) {
    *n_x = *n_c = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].comp != comp) continue;
        double from = s[i].t_s + s[i].down_s;
        if (i + 1 < n && s[i + 1].comp == comp && !strcmp(s[i + 1].node, s[i].node)) {
            double gap = s[i + 1].t_s > from ? s[i + 1].t_s - from : s[i + 1].t_s - s[i].t_s;
            if (gap > 0) x[(*n_x)++] = gap;
        } else if (t_end_s > from) {
            c[(*n_c)++] = t_end_s - from;
        }
    }
}

/* Each component's Weibull fit of s (n failures; sorted here), and
 * whether each cause is written as Weibull (failfit.h). -1: out of memory. */
static int weibull_rows(seen *s, int n, const failfit_fleet *f, double level, failfit_row *rows, int nr,
                        failfit_row *by_comp) {
    double *x = malloc(((size_t)n + 1) * 2 * sizeof *x), *c = x ? x + n + 1 : NULL;
    if (!x) return -1;
    if (n > 0) qsort(s, (size_t)n, sizeof *s, by_instance);
    for (int k = 0; k < REL_COMPONENT_COUNT; k++) {
        failfit_row *t = &by_comp[k];
        int n_x, n_c;
        lifetimes(s, n, k, f->t_end_s, x, &n_x, c, &n_c);
        t->has_wb = n_x >= FAILFIT_WEIBULL_MIN_GAPS && weibull_fit_mle(x, n_x, c, n_c, level, &t->wb) == 0;
        t->weibull = t->has_wb && n_x >= FAILFIT_WEIBULL_WRITE_GAPS && t->wb.p_exponential < 1 - level &&
                     t->wb.shape <= REL_SHAPE_MAX;
    }
    for (int i = 0; i < nr; i++) {
        const failfit_row *t = &by_comp[rows[i].component];
        double per_node = t->instances / f->nodes, share = t->r.events / rows[i].r.events;
        rows[i].has_wb = t->has_wb, rows[i].wb = t->wb;
        rows[i].wb_mtbf_s = t->has_wb ? rel_weibull_mean_s(t->wb.scale, t->wb.shape) * per_node * share : NAN;
        rows[i].weibull = t->weibull && isfinite(rows[i].wb_mtbf_s) &&
                          rel_weibull_check(rows[i].wb_mtbf_s, t->wb.shape, NULL, 0) == 0;
    }
    free(x);
    return 0;
}

/* The counted failures of the clusters, each on one node (none: left out). */
static int seen_of(const failfit_event *ev, const cluster *cl, int m, seen *s) {
    int n = 0;
    for (int k = 0; k < m; k++) {
        const failfit_event *b = &ev[cl[k].best];
        if (cl[k].planned || b->c.component < 0 || b->n_nodes < 1 || !b->node[0][0]) continue;
        s[n++] = (seen){ b->c.component, b->node[0], ev[cl[k].first].t_s, cl[k].down_s };
    }
    return n;
}

int failfit_fit(failfit_event *ev, int n, const failfit_fleet *f, double merge_s, double level, failfit_row *rows,
                int max, failfit_row *by_comp, failfit_counts *counts) {
    if (!f || f->nodes < 1 || f->gpus_per_node < 0 || !(f->window_s > 0) || n < 0) return -1;
    memset(counts, 0, sizeof *counts);
    counts->events_in = n;
    cluster *cl = n > 0 ? malloc((size_t)n * sizeof *cl) : NULL;
    if (n > 0 && !cl) return -1;
    if (n > 0) qsort(ev, (size_t)n, sizeof *ev, by_time);
    int m = merge_events(ev, n, merge_s, cl), nr = 0;
    counts->merged = n - m;
    for (int k = 0; k < m; k++) {
        const failfit_class *c = &ev[cl[k].best].c;
        if (cl[k].planned) counts->planned++;
        else if (c->component == FAILFIT_APP) counts->app++;
        else if (c->component == FAILFIT_INFO) counts->info++;
        else counts->failures++, nr = add_failure(rows, nr, max, c, cl[k].down_s);
    }
    rates(rows, nr, f, level, by_comp);
    seen *sn = malloc(((size_t)m + 1) * sizeof *sn);
    int rc = sn ? weibull_rows(sn, seen_of(ev, cl, m, sn), f, level, rows, nr, by_comp) : -1;
    free(sn);
    free(cl);
    if (rc < 0) return -1;
    qsort(rows, (size_t)nr, sizeof *rows, by_row);
    return nr;
}
