/*
 * snapshot_nodes: a live cluster's GPU nodes as <nodes> groups of catalog
 * types, and those out of service or draining as <unavailable>
 * (snapshot_int.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hostlist.h"
#include "models/catalog.h"
#include "plan/snapshot_int.h"
#include "plan/status.h"
#include "reports/fileout.h"
#include "scenarios/catalog_xml.h"

/* GPU model as a source names it (Slurm's GRES type "h100", Kubernetes'
 * nvidia.com/gpu.product "NVIDIA-H100-80GB-HBM3"), matched lower-case
 * by the first pattern it contains, to the catalog's node type with that
 * GPU (models/catalog/nodes.xml). Longer names first: "gb200" before
 * "b200", "h200" before "h20", "a100-40" before "a100". */
static const struct { const char *pattern, *type; } gpu_types[] = {
    { "gb300", "gb300-nvl72" }, { "gb200", "gb200-nvl72" }, { "b300", "hgx-b300" },   { "b200", "dgx-b200" },
    { "h200", "hgx-h200" },     { "h100", "dgx-h100" },     { "h800", "hgx-h800" },   { "h20", "hgx-h20" },
    { "a100-40", "dgx-a100-40gb" }, { "a100_40", "dgx-a100-40gb" }, { "a100", "dgx-a100-80gb" },
    { "mi355", "mi355x-8" },    { "mi325", "mi325x-8" },    { "mi300", "mi300x-8" },
};

static const char *type_of(const char *model, const char *fallback) {
    char low[128];
    size_t i = 0;
    for (; model[i] && i + 1 < sizeof low; i++) low[i] = (char)tolower((unsigned char)model[i]);
    low[i] = 0;
    for (size_t k = 0; low[0] && k < sizeof gpu_types / sizeof gpu_types[0]; k++)
        if (strstr(low, gpu_types[k].pattern)) return gpu_types[k].type;
    return fallback;
}

int snap_natcmp(const char *a, const char *b) {
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y) return x < y ? -1 : 1;
            if (ea - a != eb - b) return (ea - a) < (eb - b) ? -1 : 1;   /* "01" after "1" */
            a = ea, b = eb;
        } else {
            if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
            a++, b++;
        }
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_nat(const void *x, const void *y) { return snap_natcmp(*(const char *const *)x, *(const char *const *)y); }

/* The group of (type, gpus), made when new: its index, -1 out of memory. */
static int group_of(snap_plan *p, const node_spec *spec, int gpus) {
    char name[SNAP_TYPE_MAX];
    if (gpus == spec->gpus) snprintf(name, sizeof name, "%s", spec->name);
    else snprintf(name, sizeof name, "%.40s-%dgpu", spec->name, gpus);
    for (int g = 0; g < p->n_groups; g++)
        if (!strcmp(p->groups[g].type, name)) return g;
    snap_group *ng = realloc(p->groups, (size_t)(p->n_groups + 1) * sizeof *ng);
    if (!ng) return -1;
    p->groups = ng;
    snap_group *g = &ng[p->n_groups];
    memset(g, 0, sizeof *g);
    snprintf(g->type, sizeof g->type, "%s", name);
    if (gpus != spec->gpus) snprintf(g->base, sizeof g->base, "%s", spec->name);
    g->gpus = gpus;
    g->names = malloc((size_t)p->c->n_nodes * sizeof *g->names);
    return g->names ? p->n_groups++ : -1;
}

static int unknown_model(const catalog *cat, const live_node *n, const char *type, char *err, size_t errlen) {
    char names[2048];
    catalog_names(cat, "node", names, sizeof names);
    if (type)
        snprintf(err, errlen, "--node-type %s: not a node type of the catalog; expected one of: %s", type, names);
    else
        snprintf(err, errlen, "node %s: GPU model '%s' has no catalog node type; give --node-type NAME (one of: %s)",
                 n->name, n->gpu_model[0] ? n->gpu_model : "(none named)", names);
    return PLAN_BAD_INPUT;
}

static int cmp_node_name(const void *a, const void *b) {
    return strcmp((*(const live_node *const *)a)->name, (*(const live_node *const *)b)->name);
}

int snap_names_add(void *ctx, const char *name) {
    snap_names *b = ctx;
    char *z = strdup(name);
    if (!z || GROW(b->v, b->cap, b->n + 1)) return free(z), 1;
    b->v[b->n++] = z;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void snap_names_sort(snap_names *s) {
    if (s->n) qsort(s->v, s->n, sizeof *s->v, cmp_str);
}

void snap_names_free(snap_names *s) {
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

/* The names of the nodes running jobs hold, sorted: a drained (Slurm's
 * DRAIN) or cordoned node among them is draining, and keeps the job.
 * -1 when out of memory (a malformed list names no node). */
static int busy_collect(const live_cluster *c, snap_names *b) {
    char why[256];
    for (int i = 0; i < c->n_jobs; i++)
        if (c->jobs[i].state == LIVE_RUNNING && c->jobs[i].node_list[0] &&
            hostlist_expand(c->jobs[i].node_list, snap_names_add, b, why, sizeof why) == -2)
            return -1;
    snap_names_sort(b);
    return 0;
}

/* Place node n in its group. 0, 1 out of memory, 2 unknown type. */
static int place(snap_plan *p, const catalog *cat, const live_node *n, int busy, char *err, size_t errlen) {
    const char *type = type_of(n->gpu_model, p->o->node_type);
    if (p->o->node_type && !catalog_node(cat, p->o->node_type)) return unknown_model(cat, n, p->o->node_type, err, errlen);
    const node_spec *spec = type ? catalog_node(cat, type) : NULL;
    if (!spec) return unknown_model(cat, n, NULL, err, errlen);
    int g = group_of(p, spec, n->gpus);
    if (g < 0) return 1;
    p->groups[g].names[p->groups[g].n++] = n->name;
    p->cluster_gpus += n->gpus;
    int draining = n->state == LIVE_DRAINED && busy && !p->o->replay;
    if (n->state == LIVE_UP || p->o->replay || draining) p->up[p->n_up++] = n;   /* a replay's nodes were up then */
    if (n->state != LIVE_UP && !p->o->replay) {
        p->out_draining[p->n_out] = (unsigned char)draining;
        p->out[p->n_out++] = n;
        p->n_draining += draining;
    }
    return 0;
}

int snap_nodes(snap_plan *p, snapshot_summary *sum, char *err, size_t errlen) {
    const live_cluster *c = p->c;
    catalog *cat = catalog_new();
    p->up = malloc(((size_t)c->n_nodes + 1) * sizeof *p->up);
    p->out = malloc(((size_t)c->n_nodes + 1) * sizeof *p->out);
    p->out_draining = malloc((size_t)c->n_nodes + 1);
    snap_names busy = { 0 };
    if (!cat || !p->up || !p->out || !p->out_draining || busy_collect(c, &busy) < 0)
        return catalog_free(cat), snap_names_free(&busy), snprintf(err, errlen, "out of memory"), 1;
    if (catalog_load_builtin(cat, err, errlen) < 0) return catalog_free(cat), snap_names_free(&busy), 1;
    int rc = 0;
    for (int i = 0; i < c->n_nodes && rc == 0; i++) {
        const char *name = c->nodes[i].name;
        int b = busy.n && bsearch(&name, busy.v, busy.n, sizeof *busy.v, cmp_str);
        if (c->nodes[i].gpus <= 0) sum->nodes_without_gpus++;
        else rc = place(p, cat, &c->nodes[i], b, err, errlen);
    }
    catalog_free(cat);
    snap_names_free(&busy);
    if (rc) return rc;
    if (!p->n_groups) return snprintf(err, errlen, "no node with GPUs in the cluster's state"), PLAN_BAD_INPUT;
    for (int g = 0; g < p->n_groups; g++) qsort(p->groups[g].names, (size_t)p->groups[g].n, sizeof (char *), cmp_nat);
    qsort(p->up, (size_t)p->n_up, sizeof *p->up, cmp_node_name);
    sum->nodes = p->n_up + p->n_out - p->n_draining, sum->nodes_unavailable = p->n_out - p->n_draining;
    sum->nodes_draining = p->n_draining;
    return 0;
}

void snap_plan_free(snap_plan *p) {
    for (int g = 0; g < p->n_groups; g++) free(p->groups[g].names);
    free(p->groups), free(p->up), free(p->out), free(p->out_draining);
}


/* The nodes of a running job's hostlist, as indices into p->up (-1: not
 * in service), gathered by hostlist_expand. */
typedef struct node_pick {
    const snap_plan *p;
    int *idx;
    long n, cap;
} node_pick;

/* The index in p->up of the node named name, or -1 (binary search). */
static int up_index(const snap_plan *p, const char *name) {
    int lo = 0, hi = p->n_up - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(p->up[mid]->name, name);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int pick_node(void *ctx, const char *name) {
    node_pick *k = ctx;
    if (k->n == k->cap) return 1;                    /* more nodes than the job can fill */
    k->idx[k->n++] = up_index(k->p, name);
    return 0;
}

int snap_claim(const snap_plan *p, int *held, const char *hostlist, int gpus) {
    char why[256];
    if (!*hostlist || gpus <= 0) return 0;
    int idx[64];
    node_pick k = { p, idx, 0, 64 };
    if (hostlist_expand(hostlist, pick_node, &k, why, sizeof why) <= 0 || k.n == 0) return 0;
    for (long i = 0; i < k.n; i++)
        if (idx[i] < 0) return 0;                    /* down, drained or unknown */
    int per = p->up[idx[0]]->gpus;
    long need = per <= 0 ? -1 : gpus < per ? 1 : (gpus + per - 1) / per;
    int each = gpus < per ? gpus : per;
    if (k.n != need) return 0;                       /* a gang only partly placed */
    for (long i = 0; i < k.n; i++)
        if (held[idx[i]] + each > p->up[idx[i]]->gpus) return 0;   /* time-sliced or MIG: over-full */
    for (long i = 0; i < k.n; i++) held[idx[i]] += each;
    return 1;
}

/* names as a hostlist, attribute-escaped. */
static void write_hostlist(FILE *f, const char *const *names, size_t n) {
    size_t len = n * HOSTLIST_NAME_MAX + 1;
    char *buf = malloc(len);
    if (buf && hostlist_compress(names, n, buf, len) >= 0) fileout_html(f, buf);
    else for (size_t i = 0; i < n; i++) fprintf(f, "%s", i ? "," : ""), fileout_html(f, names[i]);
    free(buf);
}

/* Nodes out of service, one <unavailable> per state and reason. */
static void write_unavailable(FILE *f, const snap_plan *p) {
    const char **names = malloc(((size_t)p->n_out + 1) * sizeof *names);
    char *done = calloc((size_t)p->n_out + 1, 1);
    for (int i = 0; names && done && i < p->n_out; i++) {
        if (done[i]) continue;
        int n = 0;
        for (int k = i; k < p->n_out; k++)
            if (!done[k] && p->out[k]->state == p->out[i]->state && p->out_draining[k] == p->out_draining[i] &&
                !strcmp(p->out[k]->reason, p->out[i]->reason))
                names[n++] = p->out[k]->name, done[k] = 1;
        qsort(names, (size_t)n, sizeof *names, cmp_nat);
        fprintf(f, "    <unavailable nodes=\"");
        write_hostlist(f, names, (size_t)n);
        fprintf(f, "\" state=\"%s\"", p->out[i]->state == LIVE_DOWN ? "down" : p->out_draining[i] ? "draining" : "drained");
        if (p->out[i]->reason[0]) fprintf(f, " reason=\""), fileout_html(f, p->out[i]->reason), fprintf(f, "\"");
        fprintf(f, "/>\n");
    }
    free(names), free(done);
}

/* Is part one of the comma-separated names in list? */
static int in_list(const char *list, const char *part) {
    size_t n = strlen(part);
    for (const char *z = list; *z; z += strcspn(z, ","), z += *z == ',')
        if (strcspn(z, ",") == n && !strncmp(z, part, n)) return 1;
    return 0;
}

void snap_write_partition_nodes(FILE *f, const snap_plan *p, const char *part) {
    const live_cluster *c = p->c;
    const char **names = malloc(((size_t)c->n_nodes + 1) * sizeof *names);
    int n = 0, all = 0;
    for (int i = 0; names && i < c->n_nodes; i++) {
        if (c->nodes[i].gpus <= 0) continue;
        all++;
        if (in_list(c->nodes[i].partitions, part)) names[n++] = c->nodes[i].name;
    }
    if (n > 0 && n < all) {
        qsort(names, (size_t)n, sizeof *names, cmp_nat);
        fprintf(f, " nodes=\"");
        write_hostlist(f, names, (size_t)n);
        fprintf(f, "\"");
    }
    free(names);
}

void snap_write_cluster(FILE *f, const snap_plan *p) {
    int variants = 0;
    for (int g = 0; g < p->n_groups; g++) variants += p->groups[g].base[0] != 0;
    if (variants) {
        fprintf(f, "  <!-- Node types whose GPU count differs from the catalog's. -->\n  <catalog>\n");
        for (int g = 0; g < p->n_groups; g++)
            if (p->groups[g].base[0])
                fprintf(f, "    <node name=\"%s\" base=\"%s\" gpus=\"%d\"/>\n", p->groups[g].type, p->groups[g].base,
                        p->groups[g].gpus);
        fprintf(f, "  </catalog>\n");
    }
    fprintf(f, "  <cluster>\n");
    for (int g = 0; g < p->n_groups; g++) {
        fprintf(f, "    <nodes type=\"%s\" count=\"%d\" names=\"", p->groups[g].type, p->groups[g].n);
        write_hostlist(f, p->groups[g].names, (size_t)p->groups[g].n);
        fprintf(f, "\"/>\n");
    }
    write_unavailable(f, p);
    fprintf(f, "  </cluster>\n");
}
