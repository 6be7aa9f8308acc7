/*
 * cluster: node table, pools, allocation, spares.
 */
#include "sim/cluster.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    unsigned char state;           /* node_state */
    unsigned char pool;
    unsigned char cloud;           /* 1: a rentable cloud node */
    short free_gpus;
    int failures;
} node;

typedef struct pool {
    const node_spec *spec;
    int first, count;              /* nodes [first, first+count) */
    int up_gpus, free_gpus;
    int idle;                      /* UP nodes with every GPU free */
    int spare_target, spares;
    int cloud_first, cloud_count;  /* cloud nodes [cloud_first, +count), inside [first, first+count) */
    int *by_free;                  /* by_free[f]: UP nodes with exactly f > 0 free GPUs (0..gpus) */
    uint64_t *with_free;           /* row f (words each): bit per UP node of the pool with exactly f > 0 free GPUs */
    int *fit_word;                 /* fit_word[f]: row f's words below it are 0 */
    int words;                     /* (count + 63) / 64, at least 1 */
    int rack_nodes, rack_first;    /* nodes per rack; the pool's first rack number */
    int domain_nodes;              /* nodes per NVLink domain (1: the node) */
} pool;

struct cluster {
    node *nodes;
    int n_nodes;
    pool *pools;
    int n_pools;
    int cloud_up;
    int spread, per_leaf;
    int n_state[NODE_DRAINING + 1];   /* nodes in each node_state, kept as states change */
};

void cluster_set_spread(cluster *c, int spread, int nodes_per_leaf) {
    c->spread = spread;
    c->per_leaf = nodes_per_leaf > 0 ? nodes_per_leaf : 32;
}

const char *node_state_name(node_state s) {
    static const char *z[] = { "up", "failed", "spare", "drained", "off", "draining" };
    return (s >= 0 && s <= NODE_DRAINING) ? z[s] : "?";
}

/* Node off (an offset in pool p) into (on = 1) or out of row f of
 * with_free; a bit set below fit_word[f] lowers it. */
static void with_free_set(pool *p, int f, int off, int on) {
    uint64_t *word = &p->with_free[(size_t)f * (size_t)p->words + (size_t)(off >> 6)];
    uint64_t bit = 1ull << (off & 63);
    if (!on) {
        *word &= ~bit;
        return;
    }
    *word |= bit;
    if (off >> 6 < p->fit_word[f]) p->fit_word[f] = off >> 6;
}

cluster *cluster_new(const scenario *s) {
    cluster *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    int cloud = s->has_cloud ? s->cloud_max_nodes : 0;
    c->n_nodes = scenario_node_count(s) + cloud;
    c->nodes = calloc((size_t)c->n_nodes + 1, sizeof *c->nodes);
    c->pools = calloc((size_t)s->n_nodes + 2, sizeof *c->pools);
    if (!c->nodes || !c->pools) {
        cluster_free(c);
        return NULL;
    }
    /* Pools by node type, in order of first appearance, the cloud type last
     * if it is new. Nodes of a pool are contiguous: on-premises first, then
     * its cloud nodes: pool k owns [first, first+count). */
    const char *types[64];
    int n_types = 0;
    for (int t = 0; t < s->n_nodes && n_types < 63; t++) {
        int seen = 0;
        for (int i = 0; i < n_types; i++) seen |= !strcmp(types[i], s->nodes[t].type);
        if (!seen) types[n_types++] = s->nodes[t].type;
    }
    if (cloud > 0) {
        int seen = 0;
        for (int i = 0; i < n_types; i++) seen |= !strcmp(types[i], s->cloud_node_type);
        if (!seen) types[n_types++] = s->cloud_node_type;
    }
    int next = 0;
    for (int k = 0; k < n_types; k++) {
        pool *p = &c->pools[c->n_pools++];
        p->spec = catalog_node(s->cat, types[k]);
        p->first = next;
        for (int u = 0; u < s->n_nodes; u++)
            if (!strcmp(s->nodes[u].type, types[k])) p->count += s->nodes[u].count;
        int onprem = p->count;
        if (cloud > 0 && !strcmp(types[k], s->cloud_node_type)) {
            p->cloud_first = next + onprem;
            p->cloud_count = cloud;
            p->count += cloud;
        }
        for (int i = 0; i < p->count; i++) {
            node *n = &c->nodes[next + i];
            n->pool = (unsigned char)k;
            n->cloud = i >= onprem;
            n->state = n->cloud ? NODE_OFF : NODE_UP;
            n->free_gpus = n->cloud ? 0 : (short)p->spec->gpus;
        }
        p->up_gpus = p->free_gpus = onprem * p->spec->gpus;
        p->idle = onprem;
        p->by_free = calloc((size_t)p->spec->gpus + 1, sizeof *p->by_free);
        p->words = p->count / 64 + 1;
        p->with_free = calloc((size_t)(p->spec->gpus + 1) * (size_t)p->words, sizeof *p->with_free);
        p->fit_word = calloc((size_t)p->spec->gpus + 1, sizeof *p->fit_word);
        if (!p->by_free || !p->with_free || !p->fit_word) {
            cluster_free(c);
            return NULL;
        }
        p->rack_nodes = cluster_rack_nodes(p->spec);
        p->rack_first = k > 0 ? c->pools[k - 1].rack_first +
                                    (c->pools[k - 1].count + c->pools[k - 1].rack_nodes - 1) / c->pools[k - 1].rack_nodes
                              : 0;
        p->domain_nodes = p->spec->nvlink_domain > p->spec->gpus ? p->spec->nvlink_domain / p->spec->gpus : 1;
        p->by_free[p->spec->gpus] = onprem;
        for (int i = 0; i < onprem; i++) with_free_set(p, p->spec->gpus, i, 1);
        next += p->count;
    }
    /* Warm spares come out of the first pool's on-premises nodes. */
    if (c->n_pools > 0 && s->spares_warm > 0) {
        pool *p = &c->pools[0];
        int onprem = p->count - p->cloud_count;
        int w = s->spares_warm < onprem ? s->spares_warm : onprem;
        p->spare_target = w;
        for (int i = 0; i < w; i++) {
            node *n = &c->nodes[p->first + onprem - 1 - i];
            n->state = NODE_SPARE;
            n->free_gpus = 0;
            p->by_free[p->spec->gpus]--;
            with_free_set(p, p->spec->gpus, onprem - 1 - i, 0);
            p->up_gpus -= p->spec->gpus;
            p->free_gpus -= p->spec->gpus;
            p->idle--;
            p->spares++;
        }
    }
    for (int i = 0; i < c->n_nodes; i++) c->n_state[c->nodes[i].state]++;
    return c;
}

void cluster_free(cluster *c) {
    if (!c) return;
    for (int i = 0; c->pools && i < c->n_pools; i++) {
        free(c->pools[i].by_free);
        free(c->pools[i].with_free);
        free(c->pools[i].fit_word);
    }
    free(c->nodes);
    free(c->pools);
    free(c);
}

int cluster_node_count(const cluster *c) { return c->n_nodes; }
int cluster_pool_count(const cluster *c) { return c->n_pools; }

int cluster_pool_of_type(const cluster *c, const char *type) {
    for (int i = 0; i < c->n_pools; i++)
        if (!strcmp(c->pools[i].spec->name, type)) return i;
    return -1;
}

const node_spec *cluster_pool_spec(const cluster *c, int p) { return c->pools[p].spec; }
int cluster_pool_gpus(const cluster *c, int p) { return c->pools[p].up_gpus; }
int cluster_pool_free_gpus(const cluster *c, int p) { return c->pools[p].free_gpus; }
int cluster_node_pool(const cluster *c, int n) { return c->nodes[n].pool; }
node_state cluster_node_state(const cluster *c, int n) { return (node_state)c->nodes[n].state; }
int cluster_node_free_gpus(const cluster *c, int n) { return c->nodes[n].free_gpus; }
int cluster_node_failures(const cluster *c, int n) { return c->nodes[n].failures; }
int cluster_gpus_per_node(const cluster *c, int n) { return c->pools[c->nodes[n].pool].spec->gpus; }

int cluster_rack_nodes(const node_spec *ns) {
    if (ns && ns->gpus > 0 && ns->nvlink_domain > ns->gpus) return ns->nvlink_domain / ns->gpus;
    return CLUSTER_RACK_NODES;
}

int cluster_node_rack(const cluster *c, int n) {
    const pool *p = &c->pools[c->nodes[n].pool];
    return p->rack_first + (n - p->first) / p->rack_nodes;
}

int cluster_rack_count(const cluster *c) {
    if (c->n_pools == 0) return 0;
    const pool *p = &c->pools[c->n_pools - 1];
    return p->rack_first + (p->count + p->rack_nodes - 1) / p->rack_nodes;
}

/* A node changes state; the counts by state follow. */
static void set_state(cluster *c, node *x, node_state st) {
    c->n_state[x->state]--;
    c->n_state[st]++;
    x->state = (unsigned char)st;
}

/* A pool's counters as a loop over its nodes changes them: the fields
 * read once into locals and the counts summed, written back by pool_done
 * (a store to an int counter could alias p->spec->gpus, and the compiler
 * would read every field again per node: a job's start and end change
 * 1M nodes' free GPUs in the 10K-GPU year). */
typedef struct pool_edit {
    pool *p;
    node *nodes;                   /* the cluster's */
    int G, first;
    size_t W;
    uint64_t *rows;
    int *by_free, *fit_word;
    int d_idle, d_free;
} pool_edit;

static inline pool_edit pool_open(cluster *c, int pi) {
    pool *p = &c->pools[pi];
    return (pool_edit){ p, c->nodes, p->spec->gpus, p->first, (size_t)p->words, p->with_free,
                        p->by_free, p->fit_word, 0, 0 };
}

static inline void pool_done(const pool_edit *e) {
    e->p->idle += e->d_idle;
    e->p->free_gpus += e->d_free;
}

/* Set UP node i's free GPUs (a node of e's pool), keeping the pool's
 * counters (free GPUs, idle whole nodes, nodes and rows by free count) in
 * step. */
static inline __attribute__((always_inline)) void pool_set(pool_edit *e, int i, int free_gpus) {
    node *n = &e->nodes[i];
    int was = n->free_gpus, off = i - e->first, wd = off >> 6;
    uint64_t bit = 1ull << (off & 63);
    /* No GPU is ever double-allocated or freed twice. */
    assert(free_gpus >= 0 && free_gpus <= e->G);
    e->d_idle += (free_gpus == e->G) - (was == e->G);
    e->d_free += free_gpus - was;
    if (was > 0) {
        e->by_free[was]--;
        e->rows[(size_t)was * e->W + (size_t)wd] &= ~bit;
    }
    n->free_gpus = (short)free_gpus;
    if (free_gpus > 0) {
        e->by_free[free_gpus]++;
        e->rows[(size_t)free_gpus * e->W + (size_t)wd] |= bit;
        if (wd < e->fit_word[free_gpus]) e->fit_word[free_gpus] = wd;
    }
}

/* dn whole nodes of e's pool went from every GPU free to none (dn < 0)
 * or back (dn > 0), their free GPUs and their bits of row G set by the
 * caller: the counts pool_set would have kept for each. A whole-node
 * job's nodes (most of a trace's node changes) then cost a bit each, not
 * a pool_set's chain of counter updates. G > 0. */
static inline void whole_nodes(pool_edit *e, int dn) {
    e->d_idle += dn;
    e->d_free += dn * e->G;
    e->by_free[e->G] += dn;
}

/* Set one UP node's free GPUs (pool_set on its own). */
static void set_free(cluster *c, int i, int free_gpus) {
    pool_edit e = pool_open(c, c->nodes[i].pool);
    pool_set(&e, i, free_gpus);
    pool_done(&e);
}

int cluster_nodes_with_free(const cluster *c, int pi, int free_gpus) {
    const pool *p = &c->pools[pi];
    return free_gpus > 0 && free_gpus <= p->spec->gpus ? p->by_free[free_gpus] : 0;
}

/* Best fit for a sub-node job: the UP node with the fewest free GPUs that
 * still fit; -1 when none. */
static int best_fit(const cluster *c, pool *p, int gpus) {
    int best = -1;
    if (!c->spread) {
        /* Packing: the lowest-numbered UP node with the fewest free GPUs
         * that fit: the first bit of that count's row, instead of a scan
         * of the nodes (12,800 of them at 100,000 GPUs). */
        int f = gpus > 0 ? gpus : 1;
        while (f <= p->spec->gpus && p->by_free[f] == 0) f++;
        if (f > p->spec->gpus) return -1;
        const uint64_t *row = &p->with_free[(size_t)f * (size_t)p->words];
        int w = p->fit_word[f];
        while (w < p->words && !row[w]) w++;
        p->fit_word[f] = w;             /* the words it passed are 0 */
        if (w < p->words) best = p->first + w * 64 + __builtin_ctzll(row[w]);
#ifdef CT_SCHED_CROSSCHECK
        int scan = -1;                  /* the lowest such node, by a scan */
        for (int i = p->first; i < p->first + p->count && scan < 0; i++)
            if (c->nodes[i].state == NODE_UP && c->nodes[i].free_gpus == f) scan = i;
        if (scan != best) abort();
#endif
        if (best >= 0) return best;
        /* by_free and the rows disagree: fall back to the full scan. */
    }
    for (int i = p->first; i < p->first + p->count; i++) {
        const node *n = &c->nodes[i];
        if (n->state != NODE_UP || n->free_gpus < gpus) continue;
        if (c->spread) {                       /* worst fit: the emptiest node */
            if (best < 0 || n->free_gpus > c->nodes[best].free_gpus) best = i;
            continue;
        }
        if (best < 0 || n->free_gpus < c->nodes[best].free_gpus) best = i;
        if (n->free_gpus == gpus) break;
    }
    return best;
}

static int nodes_for(const pool *p, int gpus) { return (gpus + p->spec->gpus - 1) / p->spec->gpus; }

int cluster_can_alloc(const cluster *c, int pi, int gpus) {
    const pool *p = &c->pools[pi];
    if (gpus > p->free_gpus) return 0;
    if (gpus < p->spec->gpus) {                /* some UP node with >= gpus free: O(GPUs per node) */
        for (int f = gpus > 0 ? gpus : 1; f <= p->spec->gpus; f++)
            if (p->by_free[f] > 0) return 1;
        return 0;
    }
    return p->idle >= nodes_for(p, gpus);
}

int cluster_fit_limit(const cluster *c, int pi) {
    const pool *p = &c->pools[pi];
    int lim = p->idle > 0 ? p->idle * p->spec->gpus : 0;
    for (int f = p->spec->gpus - 1; f >= 1 && lim == 0; f--)
        if (p->by_free[f] > 0) lim = f;
    return lim < p->free_gpus ? lim : p->free_gpus;
}

/* The pool's node off (an offset in the pool, maybe past its end), taken
 * whole into *out when it is up and idle. Returns 1 when taken, else 0. */
static int take_idle(cluster *c, const pool *p, int off, int *out) {
    if (off >= p->count) return 0;
    int i = p->first + off;
    const node *n = &c->nodes[i];
    if (n->state != NODE_UP || n->free_gpus != p->spec->gpus) return 0;
    set_free(c, i, 0);
    *out = i;
    return 1;
}

/* Idle UP nodes of the pool's NVLink domain starting at offset d0. */
static int domain_idle(const cluster *c, const pool *p, int d0) {
    int idle = 0;
    for (int i = d0; i < d0 + p->domain_nodes && i < p->count; i++) {
        const node *n = &c->nodes[p->first + i];
        idle += n->state == NODE_UP && n->free_gpus == p->spec->gpus;
    }
    return idle;
}

/* Up to want idle nodes of the domain at d0 into out; how many. */
static int take_in_domain(cluster *c, const pool *p, int d0, int want, int *out) {
    int k = 0;
    for (int i = d0; i < d0 + p->domain_nodes && k < want; i++) k += take_idle(c, p, i, &out[k]);
    return k;
}

/* Packing on a multi-node NVLink domain (GB200 NVL72 trays): whole idle
 * domains while the job needs a whole one, the rest in the domain with the
 * fewest idle nodes that still holds it (best fit, so whole domains stay
 * free for the next big job). Returns the nodes taken; the caller takes
 * any still missing from the idle nodes in order. */
static int alloc_domains(cluster *c, const pool *p, int need, int *out) {
    int D = p->domain_nodes, k = 0;
    for (int d0 = 0; d0 < p->count && need - k >= D; d0 += D)
        if (domain_idle(c, p, d0) == D) k += take_in_domain(c, p, d0, D, &out[k]);
    int rest = need - k, best = -1, best_idle = 0;
    for (int d0 = 0; rest > 0 && d0 < p->count; d0 += D) {
        int idle = domain_idle(c, p, d0);
        if (idle >= rest && (best < 0 || idle < best_idle)) {
            best = d0;
            best_idle = idle;
        }
    }
    if (best >= 0) k += take_in_domain(c, p, best, rest, &out[k]);
    return k;
}

/* Packing: the lowest-numbered idle nodes of pool pi into out[k..need),
 * the first bits of row G (the UP nodes with every GPU free, kept exact
 * by pool_set) from its first word that may be set; the new k. It was a
 * bitset of nodes that might be idle, cleared only when a scan found a
 * node taken, which each packing scan re-read node by node: 10% of
 * bench_sched (docs/performance.md, "Issue 23: the SimPy peer, second
 * round"). */
static int pack_idle(cluster *c, int pi, int need, int *out, int k) {
    pool_edit e = pool_open(c, pi);
    uint64_t *row = &e.rows[(size_t)e.G * e.W];
    int w = e.fit_word[e.G], words = (int)e.W, k0 = k;
    while (w < words && !row[w]) w++;
    e.fit_word[e.G] = w;                               /* the words it passed are 0 */
    for (; w < words && k < need; w++) {
        uint64_t bits = row[w];
        for (; bits && k < need; bits &= bits - 1) {
            int i = e.first + w * 64 + __builtin_ctzll(bits);
            assert(e.nodes[i].free_gpus == e.G);
            e.nodes[i].free_gpus = 0;
            out[k++] = i;
        }
        row[w] = bits;                                 /* the bits taken leave the row */
    }
    whole_nodes(&e, k0 - k);
    pool_done(&e);
    return k;
}

/* The sanitized build: out[k0..k) are the lowest-numbered nodes that were
 * idle, by a scan of the pool. */
static void check_packed(const cluster *c, const pool *p, const int *out, int k0, int k) {
#ifdef CT_SCHED_CROSSCHECK
    for (int i = p->first, t = k0; i < p->first + p->count && t < k; i++) {
        int taken = out[t] == i;
        if (!taken && c->nodes[i].state == NODE_UP && c->nodes[i].free_gpus == p->spec->gpus) abort();
        t += taken;
    }
#else
    (void)c, (void)p, (void)out, (void)k0, (void)k;
#endif
}

int cluster_alloc(cluster *c, int pi, int gpus, int *out, int cap) {
    pool *p = &c->pools[pi];
    if (!cluster_can_alloc(c, pi, gpus)) return -1;
    if (gpus < p->spec->gpus) {
        int n = best_fit(c, p, gpus);
        if (cap < 1) return -1;
        set_free(c, n, c->nodes[n].free_gpus - gpus);
        out[0] = n;
        return 1;
    }
    int need = nodes_for(p, gpus), k = 0;
    if (need > cap) return -1;
    if (!c->spread) {
        if (p->domain_nodes > 1) k = alloc_domains(c, p, need, out);
        int k0 = k;
        k = pack_idle(c, pi, need, out, k);
        check_packed(c, p, out, k0, k);
        return k;
    }
    /* spread: node r*L + l visited as (l, r), one node per leaf group
     * before the next. */
    int L = c->per_leaf;
    int rows = (p->count + L - 1) / L;
    for (int a = 0; a < L && k < need; a++)
        for (int b = 0; b < rows && k < need; b++) k += take_idle(c, p, b * L + a, &out[k]);
    return k;
}

/* How many nodes ahead cluster_release asks for a node's record: a job's
 * nodes are spread over the cluster (sim/world_job.c, NODE_AHEAD), so at
 * 1M GPUs each record is a cache miss the loop would otherwise wait for. */
#define CLUSTER_AHEAD 8

/* The nodes of the set a job of gpus GPUs would take, into out (NULL: just
 * count); how many, or -1 when it does not fit now. */
static int pick_in(const cluster *c, int pi, int gpus, const int *set, int n_set, int *out, int cap) {
    const pool *p = &c->pools[pi];
    int per = p->spec->gpus, need = nodes_for(p, gpus), k = 0, best = -1;
    for (int i = 0; i < n_set && k < need; i++) {
        const node *x = &c->nodes[set[i]];
        if (x->pool != pi || x->state != NODE_UP) continue;
        if (gpus >= per) {
            if (x->free_gpus != per) continue;
            if (out && k < cap) out[k] = set[i];
            k++;
        } else if (x->free_gpus >= gpus &&
                   (best < 0 || (c->spread ? x->free_gpus > c->nodes[best].free_gpus
                                           : x->free_gpus < c->nodes[best].free_gpus))) {
            best = set[i];
        }
    }
    if (gpus < per) {
        if (best < 0) return -1;
        if (out && cap > 0) out[0] = best;
        return 1;
    }
    return k == need && need <= cap ? k : -1;
}

int cluster_can_alloc_in(const cluster *c, int pi, int gpus, const int *set, int n_set) {
    if (gpus > c->pools[pi].free_gpus) return 0;
    return pick_in(c, pi, gpus, set, n_set, NULL, 1 << 30) >= 0;
}

int cluster_alloc_in(cluster *c, int pi, int gpus, const int *set, int n_set, int *out, int cap) {
    int k = gpus > c->pools[pi].free_gpus ? -1 : pick_in(c, pi, gpus, set, n_set, out, cap);
    int each = gpus < c->pools[pi].spec->gpus ? gpus : c->pools[pi].spec->gpus;
    for (int i = 0; i < k; i++) set_free(c, out[i], c->nodes[out[i]].free_gpus - each);
    return k;
}

int cluster_take_gpus(cluster *c, int n, int gpus) {
    const node *x = &c->nodes[n];
    if (x->state != NODE_UP || x->free_gpus < gpus) return -1;
    set_free(c, n, x->free_gpus - gpus);
    return 0;
}

/* From nodes[i] on, the nodes of nodes[i]'s pool (an empty slot or a
 * node not UP passed over) get gpus_each GPUs back, through one
 * pool_edit; returns where a node of another pool stands (n: none). */
static int release_in_pool(cluster *c, const int *nodes, int i, int n, int gpus_each) {
    while (i < n && nodes[i] < 0) i++;
    if (i == n) return n;
    int pi = c->nodes[nodes[i]].pool;
    pool_edit e = pool_open(c, pi);
    int whole = e.G > 0 && gpus_each >= e.G, back = 0, low = INT_MAX;
    uint64_t *row = &e.rows[(size_t)e.G * e.W];
    for (; i < n; i++) {
        if (nodes[i] < 0) continue;
        if (i + CLUSTER_AHEAD < n && nodes[i + CLUSTER_AHEAD] >= 0) __builtin_prefetch(&c->nodes[nodes[i + CLUSTER_AHEAD]], 1);
        node *x = &c->nodes[nodes[i]];
        if (x->pool != pi) break;
        if (x->state != NODE_UP) continue;
        if (whole && x->free_gpus == 0) {             /* none free to all free: counted below */
            int off = nodes[i] - e.first;
            x->free_gpus = (short)e.G;
            row[off >> 6] |= 1ull << (off & 63);
            low = off >> 6 < low ? off >> 6 : low;
            back++;
            continue;
        }
        int g = x->free_gpus + gpus_each;
        pool_set(&e, nodes[i], g > e.G ? e.G : g);
    }
    whole_nodes(&e, back);
    if (low < e.fit_word[e.G]) e.fit_word[e.G] = low;
    pool_done(&e);
    return i;
}

void cluster_release(cluster *c, const int *nodes, int n, int gpus_each) {
    for (int i = 0; i < n;) i = release_in_pool(c, nodes, i, n, gpus_each);
}

void cluster_prefetch(const cluster *c, int n) { __builtin_prefetch(&c->nodes[n], 1); }

void cluster_fail(cluster *c, int n) {
    node *x = &c->nodes[n];
    pool *p = &c->pools[x->pool];
    x->failures++;
    if (x->state == NODE_UP || x->state == NODE_DRAINING) {
        if (x->state == NODE_UP) set_free(c, n, 0);
        p->up_gpus -= p->spec->gpus;
    } else if (x->state == NODE_SPARE) {
        p->spares--;
    } else {
        return;
    }
    set_state(c, x, NODE_FAILED);
    x->free_gpus = 0;
}

void cluster_repair(cluster *c, int n) {
    node *x = &c->nodes[n];
    pool *p = &c->pools[x->pool];
    if (x->state != NODE_FAILED) return;
    if (p->spares < p->spare_target) {
        set_state(c, x, NODE_SPARE);
        p->spares++;
        return;
    }
    set_state(c, x, NODE_UP);
    x->free_gpus = 0;
    p->up_gpus += p->spec->gpus;
    set_free(c, n, p->spec->gpus);
}

void cluster_drain(cluster *c, int n) {
    node *x = &c->nodes[n];
    pool *p = &c->pools[x->pool];
    if (x->state == NODE_UP || x->state == NODE_DRAINING) {
        if (x->state == NODE_UP) set_free(c, n, 0);
        p->up_gpus -= p->spec->gpus;
    } else if (x->state == NODE_SPARE) {
        p->spares--;
    }
    set_state(c, x, NODE_DRAINED);
    x->free_gpus = 0;
}

int cluster_begin_drain(cluster *c, int n) {
    node *x = &c->nodes[n];
    if (x->state != NODE_UP) return -1;
    set_free(c, n, 0);                        /* its free GPUs leave the pool's counts */
    set_state(c, x, NODE_DRAINING);
    return 0;
}

int cluster_draining(const cluster *c) { return c->n_state[NODE_DRAINING]; }

int cluster_take_spare(cluster *c, int pi, int gpus_each) {
    pool *p = &c->pools[pi];
    if (p->spares == 0) return -1;
    for (int i = p->first + p->count - 1; i >= p->first; i--) {
        node *x = &c->nodes[i];
        if (x->state != NODE_SPARE) continue;
        set_state(c, x, NODE_UP);
            x->free_gpus = 0;
        p->spares--;
        p->up_gpus += p->spec->gpus;
        set_free(c, i, p->spec->gpus - gpus_each);
        return i;
    }
    return -1;
}

int cluster_take_idle(cluster *c, int pi, int gpus_each) {
    pool *p = &c->pools[pi];
    if (p->idle == 0) return -1;
    for (int i = p->first; i < p->first + p->count; i++) {
        node *x = &c->nodes[i];
        if (x->state != NODE_UP || x->free_gpus != p->spec->gpus) continue;
        set_free(c, i, p->spec->gpus - gpus_each);
        return i;
    }
    return -1;
}

void cluster_counts(const cluster *c, int counts[5]) {
    for (int i = 0; i < 5; i++) counts[i] = c->n_state[i];
}

int cluster_is_cloud(const cluster *c, int n) { return c->nodes[n].cloud; }
int cluster_cloud_up(const cluster *c) { return c->cloud_up; }

int cluster_pool_capacity(const cluster *c, int pi) {
    return c->pools[pi].count * c->pools[pi].spec->gpus;
}

int cluster_cloud_rent(cluster *c, int pi) {
    pool *p = &c->pools[pi];
    for (int i = p->cloud_first; i < p->cloud_first + p->cloud_count; i++) {
        node *x = &c->nodes[i];
        if (x->state != NODE_OFF) continue;
        set_state(c, x, NODE_UP);
            x->free_gpus = 0;
        p->up_gpus += p->spec->gpus;
        set_free(c, i, p->spec->gpus);
        c->cloud_up++;
        return i;
    }
    return -1;
}

void cluster_cloud_release(cluster *c, int n) {
    node *x = &c->nodes[n];
    pool *p = &c->pools[x->pool];
    if (!x->cloud || x->state != NODE_UP || x->free_gpus != p->spec->gpus) return;
    set_free(c, n, 0);
    p->up_gpus -= p->spec->gpus;
    set_state(c, x, NODE_OFF);
    c->cloud_up--;
}

int cluster_undrain(cluster *c, int n) {
    node *x = &c->nodes[n];
    if (x->state != NODE_DRAINED) return -1;
    set_state(c, x, NODE_FAILED);             /* then the repair path: up, or a spare when short */
    cluster_repair(c, n);
    return 0;
}
