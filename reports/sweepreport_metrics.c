/*
 * sweepreport_metrics: what a sweep's metric is called, how its numbers
 * read and which way is better, so the sweep report speaks like the run
 * report ("Cost", not cluster.cost_usd) and can say which point is best.
 */
#include "reports/sweepreport_int.h"

#include <math.h>
#include <string.h>

#include "base/numfmt.h"

/* A metric the reports know: its field (inside its element for jobs[],
 * services[], queues[]; "cluster." may be left out), name and direction. */
static const struct {
    const char *array, *field, *name;
    int better;
} known[] = {
    { "", "simulated_s", "Simulated time", 0 },
    { "", "cost_usd", "Cost", -1 },
    { "", "gpu_utilization", "GPU utilisation", +1 },
    { "", "energy_kwh", "Energy", -1 },
    { "", "co2_kg", "CO2", -1 },
    { "", "gpu_hours", "GPU-hours", -1 },
    { "", "failures.total", "Failures", -1 },
    { "jobs", "end_s", "Finished at", -1 },
    { "jobs", "ettr", "Goodput (ETTR)", +1 },
    { "jobs", "lost_work_s", "Training lost and redone", -1 },
    { "jobs", "interruptions", "Job interruptions", -1 },
    { "jobs", "checkpoint_interval_s", "Checkpoint interval", 0 },
    { "jobs", "time.checkpoint_stall_s", "Checkpoint stalls", -1 },
    { "jobs", "time.waiting_for_nodes_s", "Waiting for nodes", -1 },
    { "jobs", "step_time_s", "Step time", -1 },
    { "jobs", "mfu", "MFU", +1 },
    { "services", "ttft_p99_s", "TTFT p99", -1 },
    { "services", "tpot_p99_s", "TPOT p99", -1 },
    { "services", "e2e_p99_s", "End-to-end p99", -1 },
    { "services", "slo_attainment", "SLO attainment", +1 },
    { "services", "output_tokens_per_s", "Output tokens/s", +1 },
    { "services", "goodput_requests_per_s", "SLO goodput", +1 },
    { "queues", "mean_wait_s", "Mean queue wait", -1 },
    { "queues", "p95_wait_s", "95th percentile wait", -1 },
};
#define N_KNOWN (int)(sizeof known / sizeof *known)

static int known_of(const metric_path *m) {
    const char *f = m->field;
    if (!m->array[0] && !strncmp(f, "cluster.", 8)) f += 8;
    for (int i = 0; i < N_KNOWN; i++)
        if (!strcmp(known[i].array, m->array) && !strcmp(known[i].field, f)) return i;
    return -1;
}

int sweep_metric_name(const metric_path *m, char *b, size_t n) {
    int k = known_of(m);
    if (k < 0) {
        snprintf(b, n, "%s", m->text);
        return 0;
    }
    static const char *const what[][2] = { { "jobs", "job" }, { "services", "service" }, { "queues", "queue" } };
    const char *kind = "";
    for (size_t i = 0; i < sizeof what / sizeof *what; i++)
        if (!strcmp(m->array, what[i][0])) kind = what[i][1];
    if (m->array[0]) snprintf(b, n, "%s, %s %s", known[k].name, kind, m->elem);
    else snprintf(b, n, "%s", known[k].name);
    return 1;
}

int sweep_metric_better(const metric_path *m) {
    int k = known_of(m);
    return k < 0 ? 0 : known[k].better;
}

static int ends(const char *z, const char *suf) {
    size_t n = strlen(z), k = strlen(suf);
    return n >= k && !strcmp(z + n - k, suf);
}

const char *sweep_fmt(const metric_path *m, double v, char *b, size_t n) {
    const char *f = m->field;
    char x[48];
    if (isnan(v)) snprintf(b, n, "n/a");
    else if (ends(f, "_per_s")) snprintf(b, n, "%s/s", nf_count(v, x, sizeof x));
    else if (ends(f, "_s")) nf_duration(v, b, n);
    else if (ends(f, "_usd")) nf_usd(v, b, n);
    else if (ends(f, "_kwh")) nf_energy_kwh(v, b, n);
    else if (ends(f, "_kg")) nf_mass_kg(v, b, n);
    else if (ends(f, "ettr") || ends(f, "utilization") || ends(f, "attainment") || ends(f, "mfu")) nf_pct(v, b, n);
    else nf_count(v, b, n);
    return b;
}

const char *sweep_ci_text(const metric_path *m, const goal_stats *s, char *b, size_t n) {
    char lo[64], hi[64];
    if (isnan(s->mean_lo) || isnan(s->mean_hi)) snprintf(b, n, "(n/a)");
    else snprintf(b, n, "(%s..%s)", sweep_fmt(m, s->mean_lo, lo, sizeof lo), sweep_fmt(m, s->mean_hi, hi, sizeof hi));
    return b;
}

const char *sweep_short_path(const char *z) {
    const char *at = strrchr(z, '@');
    if (!at || at == z) return z;
    const char *p = at - 1;                           /* the '/' before '@' */
    while (p > z && p[-1] != '/') p--;
    return p;
}

void sweep_point_label(const sdata *d, int p, char *b, size_t n) {
    size_t k = 0;
    b[0] = 0;
    for (int a = 0; a < d->s.n_axes && k < n; a++) {
        int w = snprintf(b + k, n - k, "%s%s=%s", a ? ", " : "", sweep_short_path(d->s.axes[a]), d->s.val[p][a]);
        if (w < 0) break;
        k += (size_t)w;
    }
}

/* |x - y| as a share of |y|, "12.5%" (or "0%" when y is 0). */
static const char *gap(double x, double y, char *b, size_t n) {
    return nf_pct(y != 0 ? fabs(x - y) / fabs(y) : 0, b, n);
}

int sweep_best_sentence(const sdata *d, int m, char *b, size_t n) {
    b[0] = 0;
    int dir = sweep_metric_better(&d->m[m]), best = -1, next = -1, worst = -1, count = 0;
    if (!dir || !d->varies[m]) return -1;
    for (int p = 0; p < d->s.n_points; p++) {
        const goal_stats *s = sd_stat(d, p, m);
        if (d->s.unfit[p] || s->n == 0 || isnan(s->mean)) continue;
        double v = dir * s->mean;                 /* larger is better */
        count++;
        if (best < 0 || v > dir * sd_stat(d, best, m)->mean) {
            next = best;
            best = p;
        } else if (next < 0 || v > dir * sd_stat(d, next, m)->mean) {
            next = p;
        }
        if (worst < 0 || v < dir * sd_stat(d, worst, m)->mean) worst = p;
    }
    if (count < 2) return -1;
    const goal_stats *sb = sd_stat(d, best, m), *sn = sd_stat(d, next, m), *sw = sd_stat(d, worst, m);
    char name[256], lb[512], ln[512], lw[512], vb[64], vn[64], vw[64], g1[48], g2[32];
    sweep_metric_name(&d->m[m], name, sizeof name);
    sweep_point_label(d, best, lb, sizeof lb);
    sweep_point_label(d, next, ln, sizeof ln);
    sweep_point_label(d, worst, lw, sizeof lw);
    const char *way = dir < 0 ? "below" : "above";
    /* A lead under 0.05% is a tie to the figures shown. */
    int level = sn->mean == 0 ? sb->mean == 0 : fabs(sb->mean - sn->mean) < 5e-4 * fabs(sn->mean);
    if (level) snprintf(g1, sizeof g1, "level with");
    else snprintf(g1 + strlen(gap(sb->mean, sn->mean, g1, sizeof g1)), sizeof g1 - strlen(g1), " %s", way);
    int k = snprintf(b, n, "%s is best at %s: %s (%s is better), %s the next best point (%s: %s)", name, lb,
                     sweep_fmt(&d->m[m], sb->mean, vb, sizeof vb), dir < 0 ? "lower" : "higher", g1, ln,
                     sweep_fmt(&d->m[m], sn->mean, vn, sizeof vn));
    int level_worst = fabs(sb->mean - sw->mean) < 5e-4 * fabs(sw->mean);
    if (worst != next && !level_worst && k > 0 && (size_t)k < n)
        k += snprintf(b + k, n - (size_t)k, " and %s %s the worst (%s: %s)", gap(sb->mean, sw->mean, g2, sizeof g2),
                      way, lw, sweep_fmt(&d->m[m], sw->mean, vw, sizeof vw));
    /* Replicas vary: when the two best means' 95% intervals overlap, the
     * lead may be noise. */
    int overlap = !isnan(sb->mean_lo) && !isnan(sn->mean_lo) && sb->mean_lo <= sn->mean_hi && sn->mean_lo <= sb->mean_hi;
    if (k > 0 && (size_t)k < n)
        snprintf(b + k, n - (size_t)k, "%s", overlap ? "; the two best are within each other's 95% confidence "
                                                        "interval, so more replicas would be needed to tell them apart."
                                                      : ".");
    return best;
}
