/*
 * collective: time of one NCCL collective on the cluster's topology.
 *
 * Load: a few calls per job set-up, many in sweeps. A call is arithmetic on
 * the stack: no allocation, no I/O, under 0.1 us. Every figure comes from
 * the catalog (node_spec, nic_spec: vendor peaks, named efficiencies and
 * latencies with their sources in models/catalog/nodes.xml and nics.xml and
 * defaults in the field tables) or from the fabric (fabric_defaults below);
 * none is hidden here.
 *
 * The model is NCCL's own way of choosing an algorithm, made physical. For
 * each algorithm a (ring, tree, NVLS, NVLS-tree, CollNet direct/chain, PAT;
 * models/nccl_plan.c) and protocol p (LL, LL128, Simple) that NCCL offers
 * for the op and the group, among those the fabric forces:
 *
 *   t(a,p,S) = launch + base_p + hops_intra(a)*hop_nvlink_p
 *            + hops_inter(a)*hop_net_p
 *            + S*spb(a)/eff_p * ramp_p(S)                      LL, LL128
 *            + S*spb(a) + min(S, channels*window)*spb(a)       Simple
 *
 * and COLL_AUTO takes the (a,p) NCCL's own model rates fastest per size
 * (latency + S / bandwidth, LL128 at 0.92: nccl_plan.c model_time), priced
 * as above. LL128 rings also pay their busiest channel's share of NCCL's
 * whole-chunk dealing (nccl_plan.c ll128_imbalance).
 *
 * spb(a), seconds per byte of S, is the slower of two pipelined stages:
 *
 *   NVLink:  bytes each GPU sends per byte of S / (NVLink bw * eff)
 *   NICs:    bytes each node sends per byte of S / (group's NIC bw)
 *
 *   op, algorithm          per GPU on NVLink    per node on NICs
 *   all-reduce ring        2(n-1)/n             2(n-1)/n
 *   all-reduce tree        2 (chain up, down)   2 (double binary tree; 1 on 2 nodes) / eff_tree
 *   all-reduce NVLS        1 + 1/r (eff_nvls)   1 (SHARP switches reduce; else not offered)
 *   all-reduce NVLS-tree   1 + 1/r (eff_nvls)   as the tree / eff_tree
 *   all-reduce CollNet     2(r-1)/r; chain 2    1 (SHARP switches reduce)
 *   all-gather, red-scat   (n-1)/n; NVLS 1      (n-1)/n; PAT (n-1)/n at 0.75
 *   broadcast ring         1                    1
 *   alltoall               (r-1)/n              r(n-r)/n
 *   sendrecv               1                    1 (one rank's NICs)
 *
 * with n ranks, r per NVLink domain ("node" in this file: an HGX node, or
 * a GB200 NVL72 rack of 18 trays whose GPUs share one NVLink switch fabric;
 * the domain's NICs are its trays' NICs together; docs/rack-scale.md).
 * Inside a 72-GPU domain the same formulas hold with r = 72: a ring or tree
 * takes 72-rank step latencies, NVLS reduces in the NVLink switch trays
 * (NVLink SHARP spans the NVL72 domain), and the all-to-all is one flat
 * NVLink exchange. A ring crosses each node boundary once per
 * channel, so its traffic through a node's NICs equals one rank's link
 * traffic: multi-node ring busbw is the node's NIC bandwidth (8 x 400 Gb/s
 * x eff = ~370 GB/s), the figure nccl-tests reports. NVLS all-reduce moves
 * (1 + 1/r) S per GPU each way (the switch reads every GPU's buffer once for
 * the multimem reduce, then multicasts each GPU's reduced slice). The
 * busiest node of a double binary tree sends 2S, but S on two nodes, where
 * each tree's root is the other's leaf (NCCL's tuning model uses the
 * intra-node bandwidth there): two-node trees beat the ring's NIC bound.
 * docs/collectives.md gives every rule with its source.
 *
 * The group's NIC bandwidth: a rank drives nics/gpus NICs (at least one);
 * the group drives r of those, at most its share nics/concurrent_per_node
 * when several groups leave the node at once. Through an overlay network
 * it is overlay_bw_fraction of that and every inter-node message pays
 * overlay_latency_s more. A group spanning more than one leaf switch gets
 * 1/oversubscription of it: the planning view of a busy cluster, where every
 * node under a leaf sends across the spine at once (NCCL orders its rings by
 * rank, not by leaf).
 *
 * Latency follows NCCL's tuning model (src/graph/tuning.cc): a base per
 * protocol, a per-hop latency per protocol on NVLink and on the network
 * (ring: 2(n-1) steps for all-reduce, 2N of them between nodes; tree:
 * 2((r-1) intra + log2 N inter); NVLS: one switch operation plus a tree
 * between nodes), plus the launch and host enqueue that nccl-tests sees.
 *
 * Protocols scale bandwidth (LL 8-byte lines half flags and polling ~1/4,
 * LL128 120/128 of each line) and LL/LL128 ramp: NCCL adds a channel only
 * when each gets ll_channel_bytes per rank (times n for LL rings and trees),
 * so small messages run on few channels (the flat small-size end of
 * nccl-tests curves). Simple moves a window per channel per step: a message that fits
 * in one window per channel cannot overlap its stages and pays its transfer
 * twice; larger ones pay one window (pipeline fill).
 */
#include "models/collective.h"

#include "models/nccl_plan.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- Fabric defaults ---------------------------------------------------- */

/* Nodes under one leaf switch. A DGX SuperPOD scalable unit puts 32 nodes
 * under each rail's leaf (QM9700: 64 NDR ports, 32 down and 32 up). */
#define FABRIC_NODES_PER_LEAF 32

/* Overlay network (pods reaching each other through VXLAN/Geneve and the
 * kernel TCP stack instead of RDMA on the NICs directly). The field reports
 * direct multi-NIC access halves latency and gives 7x the bandwidth:
 * - bandwidth: 1/7 of the direct figure;
 * - latency: kernel TCP plus encapsulation costs 10-20 us per message more
 *   than RDMA (sockperf vs ib_send_lat). 12 us per inter-node message makes
 *   a small p2p message or all-reduce on 2-8 nodes 1.8-2.7x as slow as
 *   direct (test_collective checks 2 and 4 nodes and p2p); the ratio grows
 *   with the inter-node hops of larger groups. */
#define FABRIC_OVERLAY_LATENCY_S 12e-6
#define FABRIC_OVERLAY_BW_FRACTION (1.0 / 7.0)

void fabric_defaults(fabric *f) {
    memset(f, 0, sizeof *f);
    f->topology = TOPO_FAT_TREE;
    f->oversubscription = 1;
    f->mode = NIC_DIRECT;
    f->nodes_per_leaf = FABRIC_NODES_PER_LEAF;
    f->nodes = 1;
    f->overlay_latency_s = FABRIC_OVERLAY_LATENCY_S;
    f->overlay_bw_fraction = FABRIC_OVERLAY_BW_FRACTION;
}

int fabric_domain_gpus(const fabric *f) {
    if (!f || !f->node) return 0;
    int g = f->node->gpus;
    return f->node->nvlink_domain > g ? f->node->nvlink_domain : g;
}

int fabric_init(fabric *f, const catalog *c, const node_spec *node, int nodes) {
    if (!f || !c || !node || nodes < 1) return -1;
    const gpu_spec *gpu = catalog_gpu(c, node->gpu);
    const nic_spec *nic = catalog_nic(c, node->nic);
    if (!gpu || !nic) return -1;
    fabric_defaults(f);
    f->node = node;
    f->gpu = gpu;
    f->nic = nic;
    f->nodes = nodes;
    return 0;
}

/* ---- Names --------------------------------------------------------------- */

static const char *const op_names[COLL_OP_COUNT] = {
    "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "sendrecv"
};
static const char *const algo_names[COLL_ALGO_COUNT] = {
    "auto", "ring", "tree", "nvls", "nvls-tree", "collnet-direct", "collnet-chain", "pat"
};
static const char *const proto_names[COLL_PROTO_COUNT] = { "LL", "LL128", "Simple" };

int coll_op_parse(const char *z) {
    for (int i = 0; z && i < COLL_OP_COUNT; i++)
        if (strcmp(z, op_names[i]) == 0) return i;
    return -1;
}

const char *coll_op_name(coll_op op) {
    return ((int)op >= 0 && op < COLL_OP_COUNT) ? op_names[op] : "?";
}

const char *coll_algo_name(coll_algo a) {
    return ((int)a >= 0 && a < COLL_ALGO_COUNT) ? algo_names[a] : "?";
}

const char *coll_proto_name(coll_proto p) {
    return ((int)p >= 0 && p < COLL_PROTO_COUNT) ? proto_names[p] : "?";
}

#define ALL_ALGOS (((1u << COLL_ALGO_COUNT) - 1) & ~1u)
#define ALL_PROTOS ((1u << COLL_PROTO_COUNT) - 1)

int coll_algo_mask_parse(const char *z, unsigned *mask) {
    if (!z) return -1;
    if (!strcmp(z, "auto")) *mask = 0;
    else if (!strcmp(z, "collnet")) *mask = 1u << COLL_COLLNET_DIRECT | 1u << COLL_COLLNET_CHAIN;
    else {
        int a = 1;
        while (a < COLL_ALGO_COUNT && strcmp(z, algo_names[a]) != 0) a++;
        if (a == COLL_ALGO_COUNT) return -1;
        *mask = 1u << a;
    }
    return 0;
}

int coll_proto_mask_parse(const char *z, unsigned *mask) {
    static const char *const lower[COLL_PROTO_COUNT] = { "ll", "ll128", "simple" };
    if (!z) return -1;
    if (!strcmp(z, "auto")) {
        *mask = 0;
        return 0;
    }
    for (int p = 0; p < COLL_PROTO_COUNT; p++)
        if (!strcmp(z, lower[p])) {
            *mask = 1u << p;
            return 0;
        }
    return -1;
}

double coll_busbw_factor(coll_op op, int n) {
    if (n < 1) return 0;
    switch (op) {
    case COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER:
    case COLL_ALLTOALL: return (double)(n - 1) / n;
    case COLL_BROADCAST:
    case COLL_SENDRECV: return 1;
    default: return 0;
    }
}

/* ---- The model ----------------------------------------------------------- */

/* GPU-to-GPU bandwidth per GPU per direction: NVLink, or PCIe for GPUs
 * without it (at the same achievable fraction). */
static double gpu_link_bw(const node_spec *nd) {
    return nd->nvlink_bw_bytes_per_s > 0 ? nd->nvlink_bw_bytes_per_s : nd->pcie_bw_bytes_per_s;
}

/* Nodes (trays) in one NVLink domain: 1 for an HGX node, 18 for a GB200
 * NVL72 rack of 4-GPU trays. */
static int domain_nodes(const fabric *f) {
    return fabric_domain_gpus(f) / f->node->gpus;
}

/* NIC bandwidth reachable by k ranks of one NVLink domain when c groups of
 * that shape leave the domain at once. A domain's NICs are the sum of its
 * trays' (GB200 NVL72: 18 trays x 4 ConnectX-7 = 72 NICs; each GPU keeps
 * its own NIC, NVIDIA GB200 NVL72 reference architecture), so for a
 * node-sized domain this is the node's NICs as before. */
static double nic_share(const fabric *f, int k, int c) {
    const node_spec *nd = f->node;
    double per_rank = nd->nics >= nd->gpus ? (double)nd->nics / nd->gpus : 1.0;
    double domain_nics = (double)nd->nics * domain_nodes(f);
    double nics = per_rank * k;
    if (nics > domain_nics) nics = domain_nics;
    if (nics > domain_nics / c) nics = domain_nics / c;
    double bw = nics * f->nic->bw_bytes_per_s * f->nic->eff_coll;
    if (f->mode == NIC_OVERLAY) bw *= f->overlay_bw_fraction;
    if (f->net_share > 0 && f->net_share < 1) bw *= f->net_share;
    return bw;
}

/* Fill s; -1 when the fabric or the group is not usable. */
static int shape_init(shape *s, const fabric *f, const coll_group *g) {
    if (!f || !g || !f->node || !f->nic) return -1;
    const node_spec *nd = f->node;
    if (nd->gpus < 1 || nd->nics < 0) return -1;
    if (g->ranks < 1 || g->ranks_per_node < 1 || g->ranks_per_node > g->ranks ||
        g->ranks_per_node > fabric_domain_gpus(f) || g->concurrent_per_node < 1)
        return -1;
    if (!(f->oversubscription >= 1)) return -1;
    s->node = nd;
    s->sharp = f->sharp != 0;
    s->n = g->ranks;
    s->r = g->ranks_per_node;
    /* f->nodes is no limit: sweeps ask about groups before sizing a cluster.
     * s->nodes counts NVLink domains (nodes of an HGX cluster, racks of an
     * NVL72 one): everything inside one talks over NVLink. */
    s->nodes = (g->ranks + g->ranks_per_node - 1) / g->ranks_per_node;

    double link = gpu_link_bw(nd);
    s->nvl_bw = link * nd->eff_nvlink;
    s->nvls_bw = link * nd->eff_nvls;
    if (s->r > 1 && !(s->nvl_bw > 0)) return -1;

    s->net_bw = s->rank_net_bw = 0;
    if (s->nodes > 1) {
        if (nd->nics < 1 || !(f->nic->bw_bytes_per_s > 0)) return -1;
        s->net_bw = nic_share(f, s->r, g->concurrent_per_node);
        s->rank_net_bw = nic_share(f, 1, g->concurrent_per_node);
        /* Leaf switches count trays: a domain of r ranks spans
         * ceil(r / gpus) of them. */
        int trays = s->nodes * ((s->r + nd->gpus - 1) / nd->gpus);
        int cross_leaf = f->topology != TOPO_SINGLE_SWITCH && f->nodes_per_leaf > 0 &&
                         trays > f->nodes_per_leaf;
        if (cross_leaf) {
            s->net_bw /= f->oversubscription;
            s->rank_net_bw /= f->oversubscription;
        }
        if (!(s->net_bw > 0)) return -1;
    }

    double wire = f->nic->latency_s + (f->mode == NIC_OVERLAY ? f->overlay_latency_s : 0);
    s->hop_nvl[COLL_LL] = nd->nvlink_hop_ll_s;
    s->hop_nvl[COLL_LL128] = nd->nvlink_hop_ll128_s;
    s->hop_nvl[COLL_SIMPLE] = nd->nvlink_hop_simple_s;
    s->hop_net[COLL_LL] = wire + f->nic->hop_ll_s;
    s->hop_net[COLL_LL128] = wire + f->nic->hop_ll128_s;
    s->hop_net[COLL_SIMPLE] = wire + f->nic->hop_simple_s;
    s->base[COLL_LL] = nd->coll_base_ll_s;
    s->base[COLL_LL128] = nd->coll_base_ll128_s;
    s->base[COLL_SIMPLE] = nd->coll_base_simple_s;
    s->eff[COLL_LL] = nd->eff_ll;
    s->eff[COLL_LL128] = nd->eff_ll128;
    s->eff[COLL_SIMPLE] = 1;
    return 0;
}

int coll_offered(const fabric *f, coll_op op, const coll_group *g, coll_algo a, char *why,
                 size_t len) {
    shape s;
    if (why && len) why[0] = 0;
    if ((int)op < 0 || op >= COLL_OP_COUNT || shape_init(&s, f, g) < 0) {
        if (why && len) snprintf(why, len, "invalid fabric or group");
        return 0;
    }
    return nccl_offered(&s, op, a, why, len);
}

/* The (algorithm, protocol) among the masks that NCCL's own model rates
 * fastest (nccl_plan_time): its time as run without the launch (INFINITY
 * when none is offered), out->algo and out->proto. */
static double best_choice(const shape *s, coll_op op, double S, unsigned algos, unsigned protos,
                          coll_result *out) {
    double best = INFINITY, t_run = INFINITY;
    for (int a = COLL_RING; a < COLL_ALGO_COUNT; a++) {
        plan p;
        if (!(algos & (1u << a)) || nccl_plan_make(&p, s, op, (coll_algo)a) < 0) continue;
        coll_proto proto = COLL_SIMPLE;
        double m = INFINITY, t = nccl_plan_time(&p, s, S, protos, &proto, &m);
        if (m < best) {
            best = m;
            t_run = t;
            out->algo = (coll_algo)a;
            out->proto = proto;
        }
    }
    return t_run;
}

/* Forcing as NCCL_ALGO/NCCL_PROTO do; what nothing forced is offered for
 * falls back to NCCL's own choice (NCCL 2.18 tuning.cc never disables the
 * ring for ops other than all-reduce), flagged in out->fallback. An
 * explicit algo may fall back on the protocol only. */
static double choose(const fabric *f, const shape *s, coll_op op, double S, coll_algo algo,
                     coll_result *out) {
    unsigned algos = algo != COLL_AUTO ? 1u << algo : f->algo_mask ? f->algo_mask : ALL_ALGOS;
    unsigned protos = f->proto_mask ? f->proto_mask : ALL_PROTOS;
    if (op == COLL_ALLTOALL || op == COLL_SENDRECV) {
        if (algo == COLL_AUTO) algos = 1u << COLL_RING;    /* point-to-point: no choice */
        if (protos != ALL_PROTOS && !(protos & ~(1u << COLL_LL128))) protos = ALL_PROTOS;
    }
    double t = best_choice(s, op, S, algos, protos, out);
    if (isfinite(t)) return t;
    t = best_choice(s, op, S, algos, ALL_PROTOS, out);
    if (!isfinite(t) && algo == COLL_AUTO) t = best_choice(s, op, S, ALL_ALGOS, ALL_PROTOS, out);
    out->fallback = isfinite(t);
    return t;
}

int coll_time(const fabric *f, coll_op op, double bytes, const coll_group *g,
              coll_algo algo, coll_result *r) {
    shape s;
    if (!r || (int)op < 0 || op >= COLL_OP_COUNT || (int)algo < 0 || algo >= COLL_ALGO_COUNT)
        return -1;
    if (!isfinite(bytes) || bytes < 0) return -1;
    if (shape_init(&s, f, g) < 0) return -1;

    coll_result out = { .algo = algo == COLL_AUTO ? COLL_RING : algo, .proto = COLL_SIMPLE };
    if (s.n == 1) {
        /* NCCL returns at once (a local copy when out of place). */
        *r = out;
        return 0;
    }
    double best = choose(f, &s, op, bytes, algo, &out);
    if (!isfinite(best)) return -1;   /* the algorithm asked for is not offered */
    out.time_s = s.node->coll_launch_s + best;
    plan chosen;
    if (nccl_plan_make(&chosen, &s, op, out.algo) == 0) {
        out.lat_s = s.node->coll_launch_s + chosen.lat_s[out.proto];
        out.xfer_s = bytes * chosen.spb;
    }
    if (out.time_s > 0) {
        out.algbw_bytes_per_s = bytes / out.time_s;
        out.busbw_bytes_per_s = out.algbw_bytes_per_s * coll_busbw_factor(op, s.n);
    }
    *r = out;
    return 0;
}

double p2p_time_s(const fabric *f, double bytes, int same_node, int concurrent_per_node) {
    if (!f || !f->node || !f->nic || !isfinite(bytes) || bytes < 0 || concurrent_per_node < 1)
        return -1;
    const node_spec *nd = f->node;
    double lat, bw, eff_ll = nd->eff_ll, hop_simple;
    if (same_node) {
        if (fabric_domain_gpus(f) < 2) return -1;
        bw = gpu_link_bw(nd) * nd->eff_nvlink;
        lat = nd->nvlink_latency_s;
        hop_simple = nd->nvlink_hop_simple_s;
    } else {
        if (nd->nics < 1) return -1;
        bw = nic_share(f, 1, concurrent_per_node);
        lat = f->nic->latency_s + f->nic->hop_ll_s;
        hop_simple = f->nic->latency_s + f->nic->hop_simple_s;
        if (f->mode == NIC_OVERLAY) {
            lat += f->overlay_latency_s;
            hop_simple += f->overlay_latency_s;
        }
    }
    if (!(bw > 0)) return -1;
    /* LL for small messages, Simple (a flag handshake per step) for large. */
    double t_ll = eff_ll > 0 ? lat + bytes / (bw * eff_ll) : INFINITY;
    double t_simple = hop_simple + bytes / bw;
    return nd->coll_launch_s + (t_ll < t_simple ? t_ll : t_simple);
}
