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
                                                         "hierarchical", "alltoall", "pat", "collnet-direct",
                                                         "collnet-chain" };

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

/* ---- all-to-all, PAT, CollNet ---------------------------------------------- */

int flow_coll_alltoall_step(flow_net *net, const flow_topo *t, const flow_group *g, double chunk) {
    int r = g->ranks_per_node, N = domains(g), n = g->ranks, added = 0;
    for (int k = 0; k < N; k++)
        for (int i = 0; i < r; i++)
            for (int d = 1; d < n; d++) {    /* the peers in the order of NCCL's rounds: +1, +2, ... */
                int q = (k * r + i + d) % n;
                int a = add_flow(net, t, g, k, i, q / r, q % r, chunk);
                if (a < 0) return -1;
                added += a;
            }
    return added;
}

/* Chunks of S/n each rank sends at dimension d (distance 2^d) of PAT, the
 * dimension-reversed Bruck all-gather: having taken the higher dimensions,
 * a rank holds the chunks at offsets that are multiples of 2^(d+1) and
 * passes on those its peer 2^d away still lacks (offset + 2^d < n; PAT
 * skips the steps with s >= nranks, NVIDIA/nccl src/include/collectives.h
 * PatAGAlgorithm). Over all dimensions: n-1 chunks, the ring's bytes. */
static double pat_chunks(int n, int d) {
    long long dist = 1LL << d;
    return n > dist ? (double)((n - dist - 1) / (2 * dist) + 1) : 0;
}

/* One PAT step: each rank (one per domain) to the rank dist away (dist < 0:
 * backwards, as the all-gather sends; NVIDIA/nccl src/device/prims_simple.h,
 * "Connect to all ranks +/- 2^n"). */
static int pat_step(flow_net *net, const flow_topo *t, const flow_group *g, int dist, double bytes) {
    int N = domains(g), added = 0;
    for (int k = 0; k < N; k++) {
        int a = add_flow(net, t, g, k, 0, ((k + dist) % N + N) % N, 0, bytes);
        if (a < 0) return -1;
        added += a;
    }
    return added;
}

/* A flow of bytes over the one link `link`: 1, or -1. */
static int add_link_flow(flow_net *net, int link, double bytes) {
    return flow_add(net, &link, 1, bytes) < 0 ? -1 : 1;
}

/* Whether domain k's channel-c NIC is on a switch an earlier domain's is. */
static int switch_seen(const flow_topo *t, const flow_group *g, int k, int c, int sw) {
    for (int e = 0; e < k; e++) {
        int node, gpu;
        locate(t, g, e, c, &node, &gpu);
        if (flow_topo_switch(t, node, flow_topo_nic_of(t, gpu)) == sw) return 1;
    }
    return 0;
}

/* SHARP between domains, per channel c through rank c's NIC: every domain
 * sends its bytes up into its switch and takes the result down, each once;
 * where the group spans switches, each switch it uses sends the reduced
 * stream of the channel up to the spine once and takes the result back,
 * whatever the number of its nodes in the group (it has reduced them). */
static int sharp_net(flow_net *net, const flow_topo *t, const flow_group *g, double bytes) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    for (int c = 0; c < r; c++) {
        int sw0 = -2, spans = 0;
        for (int k = 0; k < N; k++) {
            int node, gpu;
            locate(t, g, k, c, &node, &gpu);
            int local = flow_topo_nic_of(t, gpu), nic = node * t->nics + local, sw = flow_topo_switch(t, node, local);
            if (add_link_flow(net, t->nic_up + nic, bytes) < 0 || add_link_flow(net, t->nic_down + nic, bytes) < 0)
                return -1;
            added += 2;
            spans |= sw0 != -2 && sw != sw0;
            if (sw0 == -2) sw0 = sw;
        }
        for (int k = 0; spans && k < N; k++) {
            int node, gpu;
            locate(t, g, k, c, &node, &gpu);
            int sw = flow_topo_switch(t, node, flow_topo_nic_of(t, gpu));
            if (sw < 0 || switch_seen(t, g, k, c, sw)) continue;
            if (add_link_flow(net, t->sw_up + sw, bytes) < 0 || add_link_flow(net, t->sw_down + sw, bytes) < 0)
                return -1;
            added += 2;
        }
    }
    return added;
}

/* CollNet direct inside each domain: a reduce-scatter to the GPUs next to
 * the NICs and an all-gather back, S/r each way between every two ranks. */
static int pairs(flow_net *net, const flow_topo *t, const flow_group *g, double bytes) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    for (int k = 0; k < N; k++)
        for (int i = 0; i < r; i++)
            for (int j = 0; j < r; j++) {
                int a = i == j ? 0 : add_flow(net, t, g, k, i, k, j, bytes);
                if (a < 0) return -1;
                added += a;
            }
    return added;
}

/* CollNet all-reduce's steady state: inside each domain the direct
 * exchange (2S/r between every two ranks) or the chains of the tree (S/r
 * per channel at eff-tree); S/r per channel through SHARP between. */
static int collnet_step(flow_net *net, const flow_topo *t, const flow_group *g, double S, int chain_in) {
    int r = g->ranks_per_node, N = domains(g), added = 0;
    if (!chain_in) added = pairs(net, t, g, 2 * S / r);
    for (int k = 0; chain_in && k < N; k++)
        for (int c = 0; c < r && added >= 0; c++) {
            int a = chain(net, t, g, k, c, S / r / t->f.node->eff_tree);
            added = a < 0 ? -1 : added + a;
        }
    int b = added < 0 ? -1 : sharp_net(net, t, g, S / r);
    return b < 0 ? -1 : added + b;
}

/* ---- phases ----------------------------------------------------------------- */

typedef enum pattern {
    P_RING, P_INTRA_RING, P_RAIL_RING, P_TREE, P_NVLS, P_NVLS_TREE, P_ALLTOALL, P_PAT, P_COLLNET, P_COLLNET_CHAIN
} pattern;

typedef struct phase {
    pattern kind;
    double bytes;               /* per flow (or per rank for the tree and CollNet: S) */
    long long steps;            /* identical steps */
    int dist;                   /* PAT: the peer's distance (negative: backwards) */
} phase;

/* Phases of one algorithm at most: PAT's one per dimension of up to 2^31 ranks. */
#define FLOW_PHASES_MAX 32

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
    case P_ALLTOALL: return flow_coll_alltoall_step(net, t, g, p->bytes);
    case P_PAT: return pat_step(net, t, g, p->dist, p->bytes);
    case P_COLLNET: return collnet_step(net, t, g, p->bytes, 0);
    case P_COLLNET_CHAIN: return collnet_step(net, t, g, p->bytes, 1);
    }
    return -1;
}

/* PAT's phases, one per dimension from the farthest (S. Jeaugey, "PAT: a
 * new algorithm for all-gather and reduce-scatter operations at scale",
 * arXiv 2506.20252, 2025: the Bruck algorithm with its dimensions
 * reversed, so the farthest peer gets the least data), each rank's chunks
 * at PAT's share of the bandwidth (COLL_PAT_BW_FRACTION). */
static int pat_phases(coll_op op, int n, double S, phase *ph) {
    int dims = 0;
    while ((1LL << dims) < n) dims++;
    for (int d = dims - 1, k = 0; d >= 0; d--, k++)
        ph[k] = (phase){ P_PAT, pat_chunks(n, d) * S / n / COLL_PAT_BW_FRACTION, 1,
                         op == COLL_ALLGATHER ? -(1 << d) : 1 << d };
    return dims;
}

/* The phases of algorithm a for op; how many, or -1 when a does not serve
 * op on g. */
static int phases_of(flow_algo a, coll_op op, const flow_group *g, double S, phase *ph) {
    int n = g->ranks, r = g->ranks_per_node, N = domains(g), ar = op == COLL_ALLREDUCE;
    int gather = op == COLL_ALLGATHER || op == COLL_REDUCESCATTER;
    switch (a) {
    case FLOW_RING:
        if (!ar && !gather) return -1;
        ph[0] = (phase){ P_RING, S / n, ar ? 2LL * (n - 1) : n - 1, 0 };
        return 1;
    case FLOW_TREE:
        if (!ar) return -1;
        ph[0] = (phase){ P_TREE, S, 1, 0 };
        return 1;
    case FLOW_NVLS:
        if ((!ar && !gather) || N > 1 || r < 2) return -1;
        ph[0] = (phase){ P_NVLS, ar ? S * (1.0 + 1.0 / r) : S, 1, 0 };
        return 1;
    case FLOW_NVLS_TREE:
        if (!ar || N < 2 || r < 2) return -1;
        ph[0] = (phase){ P_NVLS_TREE, S, 1, 0 };
        return 1;
    case FLOW_HIER: {
        if (!ar) return -1;
        int k = 0;
        if (r > 1) ph[k++] = (phase){ P_INTRA_RING, S / r, r - 1, 0 };
        if (N > 1) ph[k++] = (phase){ P_RAIL_RING, S / ((double)r * N), 2LL * (N - 1), 0 };
        if (r > 1) ph[k++] = (phase){ P_INTRA_RING, S / r, r - 1, 0 };
        return k;
    }
    case FLOW_ALLTOALL:
        if (op != COLL_ALLTOALL) return -1;
        ph[0] = (phase){ P_ALLTOALL, S / n, 1, 0 };
        return 1;
    case FLOW_PAT:
        if (!gather || r != 1 || N < 2) return -1;
        return pat_phases(op, n, S, ph);
    case FLOW_COLLNET_DIRECT:
    case FLOW_COLLNET_CHAIN:
        if (!ar || N < 2) return -1;
        ph[0] = (phase){ a == FLOW_COLLNET_DIRECT ? P_COLLNET : P_COLLNET_CHAIN, S, 1, 0 };
        return 1;
    default: return -1;
    }
}

/* The closed form's algorithm for the latency of a flow algorithm. */
static coll_algo nccl_of(flow_algo a) {
    switch (a) {
    case FLOW_TREE: return COLL_TREE;
    case FLOW_NVLS: return COLL_NVLS;
    case FLOW_NVLS_TREE: return COLL_NVLS_TREE;
    case FLOW_PAT: return COLL_PAT;
    case FLOW_COLLNET_DIRECT: return COLL_COLLNET_DIRECT;
    case FLOW_COLLNET_CHAIN: return COLL_COLLNET_CHAIN;
    default: return COLL_RING;     /* ring, the hierarchical ring's steps, all-to-all's point-to-point plan */
    }
}

/* The flow algorithm for NCCL's choice; FLOW_AS_NCCL when not unrolled. */
static flow_algo flow_of(coll_algo a, coll_op op, int domains_n) {
    if (op == COLL_ALLTOALL) return FLOW_ALLTOALL;   /* point-to-point: the closed form reports "ring" */
    switch (a) {
    case COLL_RING: return FLOW_RING;
    case COLL_TREE: return FLOW_TREE;
    case COLL_NVLS: return domains_n == 1 ? FLOW_NVLS : FLOW_AS_NCCL;
    case COLL_NVLS_TREE: return FLOW_NVLS_TREE;
    case COLL_PAT: return FLOW_PAT;
    case COLL_COLLNET_DIRECT: return FLOW_COLLNET_DIRECT;
    case COLL_COLLNET_CHAIN: return FLOW_COLLNET_CHAIN;
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
    r->algo = algo == FLOW_AS_NCCL ? flow_of(cr.algo, op, domains(g)) : algo;
    phase ph[FLOW_PHASES_MAX];
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
