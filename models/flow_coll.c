/*
 * flow_coll: collectives unrolled into steps of flows (see flow_coll.h).
 *
 * Each phase of an algorithm is a pattern: the flows of one of its steps,
 * added to the network by one function below. A phase of k identical steps
 * costs one flow_run, its time k times that run's.
 */
#include "models/flow_coll.h"

#include <math.h>
#include <string.h>

static const char *const algo_names[FLOW_ALGO_COUNT] = { "auto", "ring", "tree", "nvls", "nvls-tree",
                                                         "hierarchical" };

const char *flow_algo_name(flow_algo a) {
    return (int)a >= 0 && a < FLOW_ALGO_COUNT ? algo_names[a] : "?";
}

/* Where the group's rank d of domain k is: topology node and GPU. */
static void locate(const flow_topo *t, const flow_group *g, int k, int d, int *node, int *gpu) {
    int dom = g->dom ? g->dom[k] : k, x = g->first_gpu + d;
    *node = dom * t->domain_nodes + x / t->gpus;
    *gpu = x % t->gpus;
}

/* A flow of bytes from rank a of domain ka to rank b of domain kb; 0 when
 * the two are the same GPU, 1 when added, -1 on error. */
static int add_flow(flow_net *net, const flow_topo *t, const flow_group *g, int ka, int a, int kb, int b,
                    double bytes) {
    int sn, sg, dn, dg, path[FLOW_PATH_MAX];
    locate(t, g, ka, a, &sn, &sg);
    locate(t, g, kb, b, &dn, &dg);
    int len = flow_topo_path(t, sn, sg, dn, dg, path);
    if (len < 0) return -1;
    if (len == 0) return 0;
    return flow_add(net, path, len, bytes) < 0 ? -1 : 1;
}

static int domains(const flow_group *g) {
    return (g->ranks + g->ranks_per_node - 1) / g->ranks_per_node;
}

/* A ring step inside each domain: rank i to i+1 of the r (domain-local
 * ring; one domain: the whole ring). */
static int intra_ring(flow_net *net, const flow_topo *t, const flow_group *g, double chunk) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    for (int k = 0; k < N && r > 1; k++)
        for (int i = 0; i < r; i++) {
            int a = add_flow(net, t, g, k, i, k, (i + 1) % r, chunk);
            if (a < 0) return -1;
            added += a;
        }
    return added;
}

/* A chain through domain k for channel c (from rank c on): up (towards
 * rank c) and down, each bytes. */
static int chain(flow_net *net, const flow_topo *t, const flow_group *g, int k, int c, double bytes) {
    int r = g->ranks_per_node, added = 0;
    for (int j = 0; j + 1 < r; j++) {
        int a = (c + j) % r, b = (c + j + 1) % r;
        int u = add_flow(net, t, g, k, b, k, a, bytes), d = u < 0 ? -1 : add_flow(net, t, g, k, a, k, b, bytes);
        if (d < 0) return -1;
        added += u + d;
    }
    return added;
}

int flow_coll_ring_step(flow_net *net, const flow_topo *t, const flow_group *g, double chunk) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    if (N == 1) return intra_ring(net, t, g, chunk);
    double each = chunk / r;                 /* r channels */
    for (int k = 0; k < N; k++)
        for (int c = 0; c < r; c++) {
            for (int j = 0; j + 1 < r; j++) {
                int a = add_flow(net, t, g, k, (c + j) % r, k, (c + j + 1) % r, each);
                if (a < 0) return -1;
                added += a;
            }
            int a = add_flow(net, t, g, k, c, (k + 1) % N, c, each);
            if (a < 0) return -1;
            added += a;
        }
    return added;
}

/* Domain of tree position p in tree `which` (0: in order, 1: mirrored). */
static int tree_dom(int N, int which, int p) { return which ? N - 1 - p : p; }

/* The double binary tree between domains, per channel c through rank c's
 * NIC: S/(2r) up and down each edge of each tree (bytes = S/r). */
static int trees(flow_net *net, const flow_topo *t, const flow_group *g, double bytes) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    for (int which = 0; which < 2; which++)
        for (int p = 1; p < N; p++) {
            int child = tree_dom(N, which, p), parent = tree_dom(N, which, (p - 1) / 2);
            for (int c = 0; c < r; c++) {
                int u = add_flow(net, t, g, child, c, parent, c, bytes / 2);
                int d = u < 0 ? -1 : add_flow(net, t, g, parent, c, child, c, bytes / 2);
                if (d < 0) return -1;
                added += u + d;
            }
        }
    return added;
}

/* The tree all-reduce's steady state: chains inside, trees between. */
static int tree_step(flow_net *net, const flow_topo *t, const flow_group *g, double S) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    for (int k = 0; k < N; k++)
        for (int c = 0; c < r; c++) {
            int a = chain(net, t, g, k, c, S / r);
            if (a < 0) return -1;
            added += a;
        }
    int a = N > 1 ? trees(net, t, g, S / r) : 0;
    return a < 0 ? -1 : added + a;
}

/* Each rank's bytes into its NVLink switch and back. */
static int nvls_step(flow_net *net, const flow_topo *t, const flow_group *g, double bytes) {
    int r = g->ranks_per_node, N = domains(g);
    for (int k = 0; k < N; k++)
        for (int i = 0; i < r; i++) {
            int node, gpu, path[FLOW_PATH_MAX];
            locate(t, g, k, i, &node, &gpu);
            if (flow_topo_switch_path(t, node, gpu, path) < 0 || flow_add(net, path, 2, bytes) < 0) return -1;
        }
    return N * r;
}

/* Rank i of every domain to rank i of the next: one ring per rail. */
static int rail_rings(flow_net *net, const flow_topo *t, const flow_group *g, double chunk) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    for (int k = 0; k < N; k++)
        for (int i = 0; i < r; i++) {
            int a = add_flow(net, t, g, k, i, (k + 1) % N, i, chunk);
            if (a < 0) return -1;
            added += a;
        }
    return added;
}

/* ---- phases ----------------------------------------------------------------- */

typedef enum pattern { P_RING, P_INTRA_RING, P_RAIL_RING, P_TREE, P_NVLS, P_NVLS_TREE } pattern;

typedef struct phase {
    pattern kind;
    double bytes;               /* per flow (or per rank for the tree: S) */
    long long steps;            /* identical steps */
} phase;

static int add_pattern(flow_net *net, const flow_topo *t, const flow_group *g, const phase *p) {
    const node_spec *nd = t->f.node;
    double tree = p->bytes / nd->eff_tree, nvls = p->bytes * nd->eff_nvlink / nd->eff_nvls;
    switch (p->kind) {
    case P_RING: return flow_coll_ring_step(net, t, g, p->bytes);
    case P_INTRA_RING: return intra_ring(net, t, g, p->bytes);
    case P_RAIL_RING: return rail_rings(net, t, g, p->bytes);
    case P_TREE: return tree_step(net, t, g, tree);
    case P_NVLS: return nvls_step(net, t, g, nvls);
    case P_NVLS_TREE: {
        /* NVLS inside (the tree's reduce and broadcast through the switch), a tree between. */
        int a = nvls_step(net, t, g, nvls * (1.0 + 1.0 / g->ranks_per_node));
        int b = a < 0 ? -1 : trees(net, t, g, p->bytes / g->ranks_per_node / nd->eff_tree);
        return b < 0 ? -1 : a + b;
    }
    }
    return -1;
}

/* The phases of algorithm a for op; how many, or -1 when a does not serve
 * op on g. */
static int phases_of(flow_algo a, coll_op op, const flow_group *g, double S, phase *ph) {
    int n = g->ranks, r = g->ranks_per_node, N = domains(g), ar = op == COLL_ALLREDUCE;
    int gather = op == COLL_ALLGATHER || op == COLL_REDUCESCATTER;
    switch (a) {
    case FLOW_RING:
        if (!ar && !gather) return -1;
        ph[0] = (phase){ P_RING, S / n, ar ? 2LL * (n - 1) : n - 1 };
        return 1;
    case FLOW_TREE:
        if (!ar) return -1;
        ph[0] = (phase){ P_TREE, S, 1 };
        return 1;
    case FLOW_NVLS:
        if ((!ar && !gather) || N > 1 || r < 2) return -1;
        ph[0] = (phase){ P_NVLS, ar ? S * (1.0 + 1.0 / r) : S, 1 };
        return 1;
    case FLOW_NVLS_TREE:
        if (!ar || N < 2 || r < 2) return -1;
        ph[0] = (phase){ P_NVLS_TREE, S, 1 };
        return 1;
    case FLOW_HIER: {
        if (!ar) return -1;
        int k = 0;
        if (r > 1) ph[k++] = (phase){ P_INTRA_RING, S / r, r - 1 };
        if (N > 1) ph[k++] = (phase){ P_RAIL_RING, S / ((double)r * N), 2LL * (N - 1) };
        if (r > 1) ph[k++] = (phase){ P_INTRA_RING, S / r, r - 1 };
        return k;
    }
    default: return -1;
    }
}

/* The closed form's algorithm for the latency of a flow algorithm. */
static coll_algo nccl_of(flow_algo a) {
    switch (a) {
    case FLOW_TREE: return COLL_TREE;
    case FLOW_NVLS: return COLL_NVLS;
    case FLOW_NVLS_TREE: return COLL_NVLS_TREE;
    default: return COLL_RING;     /* ring, and the hierarchical ring's steps */
    }
}

/* The flow algorithm for NCCL's choice; FLOW_AS_NCCL when not unrolled. */
static flow_algo flow_of(coll_algo a, int domains_n) {
    switch (a) {
    case COLL_RING: return FLOW_RING;
    case COLL_TREE: return FLOW_TREE;
    case COLL_NVLS: return domains_n == 1 ? FLOW_NVLS : FLOW_AS_NCCL;
    case COLL_NVLS_TREE: return FLOW_NVLS_TREE;
    default: return FLOW_AS_NCCL;
    }
}

/* Run the phases: their flow time into r. 0, or -1. */
static int run_phases(flow_net *net, const flow_topo *t, const flow_group *g, const phase *ph, int k,
                      flow_coll_result *r) {
    for (int i = 0; i < k; i++) {
        flow_clear(net);
        int added = add_pattern(net, t, g, &ph[i]);
        if (added < 0) return -1;
        double step = flow_run(net, NULL);
        if (step < 0) return -1;
        r->flows_s += (double)ph[i].steps * step;
        r->steps += ph[i].steps;
        r->solves++;
        if (added > r->flows) r->flows = added;
    }
    flow_clear(net);
    return 0;
}

static int group_ok(const flow_topo *t, const flow_group *g) {
    int dg = t->domain_nodes * t->gpus;
    if (g->ranks < 1 || g->ranks_per_node < 1 || g->ranks_per_node > g->ranks || g->first_gpu < 0 ||
        g->first_gpu + g->ranks_per_node > dg || g->ranks % g->ranks_per_node)
        return 0;
    int N = domains(g), D = t->nodes / t->domain_nodes;
    for (int k = 0; k < N; k++) {
        int d = g->dom ? g->dom[k] : k;
        if (d < 0 || d >= D) return 0;
    }
    return 1;
}

int flow_coll_time(flow_net *net, const flow_topo *t, coll_op op, double bytes, const flow_group *g,
                   flow_algo algo, flow_coll_result *r) {
    if (!net || !t || !g || !r || !isfinite(bytes) || bytes < 0 || (int)algo < 0 || algo >= FLOW_ALGO_COUNT ||
        !group_ok(t, g))
        return -1;
    memset(r, 0, sizeof *r);
    coll_group cg = { g->ranks, g->ranks_per_node, 1 };
    coll_result cr;
    coll_algo want = algo == FLOW_AS_NCCL ? COLL_AUTO : nccl_of(algo);
    /* NCCL's tuning model does not see the spine (tuning.cc knows the
     * node's NICs, not the switches above them): it chooses as on a
     * non-blocking fabric; the flows then meet the real one. */
    fabric nccl_view = t->f;
    nccl_view.oversubscription = 1;
    if (coll_time(&nccl_view, op, bytes, &cg, want, &cr) < 0) return -1;
    r->closed_s = r->time_s = cr.time_s;
    r->closed_xfer_s = cr.xfer_s;
    r->nccl_algo = cr.algo;
    r->proto = cr.proto;
    r->algo = algo == FLOW_AS_NCCL ? flow_of(cr.algo, domains(g)) : algo;
    phase ph[3];
    int k = r->algo == FLOW_AS_NCCL ? -1 : phases_of(r->algo, op, g, bytes, ph);
    if (k < 0) {
        if (algo != FLOW_AS_NCCL) return -1;
        return 0;                              /* not unrolled: the closed form */
    }
    r->unrolled = 1;
    if (g->ranks == 1 || bytes == 0) return 0;
    if (run_phases(net, t, g, ph, k, r) < 0) return -1;
    double wire = cr.xfer_s > 0 ? (cr.time_s - cr.lat_s) / cr.xfer_s : 1;
    r->time_s = cr.lat_s + wire * r->flows_s;
    return 0;
}

int flow_coll_packed(const fabric *f, coll_op op, double bytes, const coll_group *g, flow_coll_result *r) {
    if (!f || !f->node || !g || g->ranks < 1 || g->ranks_per_node < 1 || g->ranks % g->ranks_per_node) return -1;
    int per_dom = fabric_domain_gpus(f) / f->node->gpus;
    int nodes = (g->ranks / g->ranks_per_node) * (per_dom > 0 ? per_dom : 1);
    flow_net *net = flow_net_new();
    flow_topo t;
    flow_group fg = { g->ranks, g->ranks_per_node, NULL, 0 };
    int rc = net && flow_topo_build(&t, net, f, nodes) == 0 ? flow_coll_time(net, &t, op, bytes, &fg, FLOW_AS_NCCL, r)
                                                           : -1;
    flow_net_free(net);
    return rc;
}
