/*
 * cluster: node table, pools, allocation, spares.
 */
#include "sim/cluster.h"

#include <stdlib.h>
#include <string.h>

typedef struct node {
    unsigned char state;           /* node_state */
    unsigned char pool;
    short free_gpus;
    int failures;
} node;

typedef struct pool {
    const node_spec *spec;
    int first, count;              /* nodes [first, first+count) */
    int up_gpus, free_gpus;
    int idle;                      /* UP nodes with every GPU free */
    int spare_target, spares;
} pool;

struct cluster {
    node *nodes;
    int n_nodes;
    pool *pools;
    int n_pools;
};

const char *node_state_name(node_state s) {
    static const char *z[] = { "up", "failed", "spare", "drained" };
    return (s >= 0 && s <= NODE_DRAINED) ? z[s] : "?";
}

cluster *cluster_new(const scenario *s) {
    cluster *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->n_nodes = scenario_node_count(s);
    c->nodes = calloc((size_t)c->n_nodes + 1, sizeof *c->nodes);
    c->pools = calloc((size_t)s->n_nodes + 1, sizeof *c->pools);
    if (!c->nodes || !c->pools) {
        cluster_free(c);
        return NULL;
    }
    /* Nodes of one type are contiguous: pool k owns [first, first+count). */
    int next = 0;
    for (int t = 0; t < s->n_nodes; t++) {
        int k = -1;
        for (int i = 0; i < c->n_pools; i++)
            if (!strcmp(c->pools[i].spec->name, s->nodes[t].type)) k = i;
        if (k >= 0) continue;                       /* merged below */
        k = c->n_pools++;
        pool *p = &c->pools[k];
        p->spec = scenario_node_spec(s, t);
        p->first = next;
        for (int u = t; u < s->n_nodes; u++)
            if (!strcmp(s->nodes[u].type, s->nodes[t].type)) p->count += s->nodes[u].count;
        for (int i = 0; i < p->count; i++) {
            node *n = &c->nodes[next + i];
            n->pool = (unsigned char)k;
            n->state = NODE_UP;
            n->free_gpus = (short)p->spec->gpus;
        }
        p->up_gpus = p->free_gpus = p->count * p->spec->gpus;
        p->idle = p->count;
        next += p->count;
    }
    /* Warm spares come out of the first pool. */
    if (c->n_pools > 0 && s->spares_warm > 0) {
        pool *p = &c->pools[0];
        int w = s->spares_warm < p->count ? s->spares_warm : p->count;
        p->spare_target = w;
        for (int i = 0; i < w; i++) {
            node *n = &c->nodes[p->first + p->count - 1 - i];
            n->state = NODE_SPARE;
            n->free_gpus = 0;
            p->up_gpus -= p->spec->gpus;
            p->free_gpus -= p->spec->gpus;
            p->idle--;
            p->spares++;
        }
    }
    return c;
}

void cluster_free(cluster *c) {
    if (!c) return;
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

/* Set a node's free GPUs, keeping the pool's counters (free GPUs, idle
 * whole nodes) in step. Only for UP nodes. */
static void set_free(cluster *c, int i, int free_gpus) {
    node *n = &c->nodes[i];
    pool *p = &c->pools[n->pool];
    p->idle -= n->free_gpus == p->spec->gpus;
    p->free_gpus += free_gpus - n->free_gpus;
    n->free_gpus = (short)free_gpus;
    p->idle += n->free_gpus == p->spec->gpus;
}

/* Best fit for a sub-node job: the UP node with the fewest free GPUs that
 * still fit; -1 when none. */
static int best_fit(const cluster *c, const pool *p, int gpus) {
    int best = -1;
    for (int i = p->first; i < p->first + p->count; i++) {
        const node *n = &c->nodes[i];
        if (n->state != NODE_UP || n->free_gpus < gpus) continue;
        if (best < 0 || n->free_gpus < c->nodes[best].free_gpus) best = i;
        if (n->free_gpus == gpus) break;
    }
    return best;
}

static int nodes_for(const pool *p, int gpus) { return (gpus + p->spec->gpus - 1) / p->spec->gpus; }

int cluster_can_alloc(const cluster *c, int pi, int gpus) {
    const pool *p = &c->pools[pi];
    if (gpus > p->free_gpus) return 0;
    if (gpus < p->spec->gpus) return best_fit(c, p, gpus) >= 0;
    return p->idle >= nodes_for(p, gpus);
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
    for (int i = p->first; i < p->first + p->count && k < need; i++) {
        node *n = &c->nodes[i];
        if (n->state != NODE_UP || n->free_gpus != p->spec->gpus) continue;
        set_free(c, i, 0);
        out[k++] = i;
    }
    return k;
}

void cluster_release(cluster *c, const int *nodes, int n, int gpus_each) {
    for (int i = 0; i < n; i++) {
        node *x = &c->nodes[nodes[i]];
        if (x->state != NODE_UP) continue;
        int g = x->free_gpus + gpus_each;
        int max = c->pools[x->pool].spec->gpus;
        set_free(c, nodes[i], g > max ? max : g);
    }
}

void cluster_fail(cluster *c, int n) {
    node *x = &c->nodes[n];
    pool *p = &c->pools[x->pool];
    x->failures++;
    if (x->state == NODE_UP) {
        set_free(c, n, 0);
        p->up_gpus -= p->spec->gpus;
    } else if (x->state == NODE_SPARE) {
        p->spares--;
    } else {
        return;
    }
    x->state = NODE_FAILED;
    x->free_gpus = 0;
}

void cluster_repair(cluster *c, int n) {
    node *x = &c->nodes[n];
    pool *p = &c->pools[x->pool];
    if (x->state != NODE_FAILED) return;
    if (p->spares < p->spare_target) {
        x->state = NODE_SPARE;
        p->spares++;
        return;
    }
    x->state = NODE_UP;
    x->free_gpus = 0;
    p->up_gpus += p->spec->gpus;
    set_free(c, n, p->spec->gpus);
}

void cluster_drain(cluster *c, int n) {
    node *x = &c->nodes[n];
    pool *p = &c->pools[x->pool];
    if (x->state == NODE_UP) {
        set_free(c, n, 0);
        p->up_gpus -= p->spec->gpus;
    } else if (x->state == NODE_SPARE) {
        p->spares--;
    }
    x->state = NODE_DRAINED;
    x->free_gpus = 0;
}

int cluster_take_spare(cluster *c, int pi, int gpus_each) {
    pool *p = &c->pools[pi];
    if (p->spares == 0) return -1;
    for (int i = p->first + p->count - 1; i >= p->first; i--) {
        node *x = &c->nodes[i];
        if (x->state != NODE_SPARE) continue;
        x->state = NODE_UP;
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

void cluster_counts(const cluster *c, int counts[4]) {
    counts[0] = counts[1] = counts[2] = counts[3] = 0;
    for (int i = 0; i < c->n_nodes; i++) counts[c->nodes[i].state]++;
}
