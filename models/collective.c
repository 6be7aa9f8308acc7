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
 * each algorithm a (ring, tree, NVLS) and protocol p (LL, LL128, Simple)
 * that NCCL offers for the op and the group:
 *
 *   t(a,p,S) = launch + base_p + hops_intra(a)*hop_nvlink_p
 *            + hops_inter(a)*hop_net_p
 *            + S*spb(a)/eff_p * ramp_p(S)                      LL, LL128
 *            + S*spb(a) + min(S, channels*window)*spb(a)       Simple
 *
 * and COLL_AUTO takes the fastest (a,p), as NCCL does per size.
 *
 * spb(a), seconds per byte of S, is the slower of two pipelined stages:
 *
 *   NVLink:  bytes each GPU sends per byte of S / (NVLink bw * eff)
 *   NICs:    bytes each node sends per byte of S / (group's NIC bw)
 *
 *   op, algorithm          per GPU on NVLink    per node on NICs
 *   all-reduce ring        2(n-1)/n             2(n-1)/n
 *   all-reduce tree        2 (chain up, down)   2 (double binary tree)  / eff_tree
 *   all-reduce NVLS        1 + 1/r (eff_nvls)   2 (a tree between nodes) / eff_tree
 *   all-gather, red-scat   (n-1)/n; NVLS 1      (n-1)/n
 *   broadcast ring         1                    1
 *   alltoall               (r-1)/n              r(n-r)/n
 *   sendrecv               1                    1 (one rank's NICs)
 *
 * with n ranks, r per node. A ring crosses each node boundary once per
 * channel, so its traffic through a node's NICs equals one rank's link
 * traffic: multi-node ring busbw is the node's NIC bandwidth (8 x 400 Gb/s
 * x eff = ~370 GB/s), the figure nccl-tests reports. NVLS all-reduce moves
 * (1 + 1/r) S per GPU each way (the switch reads every GPU's buffer once for
 * the multimem reduce, then multicasts each GPU's reduced slice). The
 * busiest node of a double binary tree sends 2S (S on two nodes; we keep 2S,
 * as NCCL's model does, and published 2-node runs match 16-node ones).
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

#include <math.h>
#include <stddef.h>
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
static const char *const algo_names[COLL_ALGO_COUNT] = { "auto", "ring", "tree", "nvls" };
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

/* What one call knows of the group on the fabric. Built once per call. */
typedef struct shape {
    const node_spec *node;
    int n, r, nodes;            /* ranks, ranks per node, nodes spanned */
    double nvl_bw;              /* per GPU per direction, achievable (ring Simple) */
    double nvls_bw;             /* per GPU per direction, NVLS multicast */
    double net_bw;              /* the group's share of one node's NICs */
    double rank_net_bw;         /* one rank's share (sendrecv) */
    double hop_nvl[COLL_PROTO_COUNT];
    double hop_net[COLL_PROTO_COUNT];
    double base[COLL_PROTO_COUNT];
    double eff[COLL_PROTO_COUNT];
} shape;

static int ilog2_floor(int x) {
    int k = 0;
    while (x > 1) { x >>= 1; k++; }
    return k;
}

/* GPU-to-GPU bandwidth per GPU per direction: NVLink, or PCIe for GPUs
 * without it (at the same achievable fraction). */
static double gpu_link_bw(const node_spec *nd) {
    return nd->nvlink_bw_bytes_per_s > 0 ? nd->nvlink_bw_bytes_per_s : nd->pcie_bw_bytes_per_s;
}

/* NIC bandwidth reachable by k ranks of one node when c groups of that
 * shape leave the node at once. */
static double nic_share(const fabric *f, int k, int c) {
    const node_spec *nd = f->node;
    double per_rank = nd->nics >= nd->gpus ? (double)nd->nics / nd->gpus : 1.0;
    double nics = per_rank * k;
    if (nics > nd->nics) nics = nd->nics;
    if (nics > (double)nd->nics / c) nics = (double)nd->nics / c;
    double bw = nics * f->nic->bw_bytes_per_s * f->nic->eff_coll;
    if (f->mode == NIC_OVERLAY) bw *= f->overlay_bw_fraction;
    return bw;
}

/* Fill s; -1 when the fabric or the group is not usable. */
static int shape_init(shape *s, const fabric *f, const coll_group *g) {
    if (!f || !g || !f->node || !f->nic) return -1;
    const node_spec *nd = f->node;
    if (nd->gpus < 1 || nd->nics < 0) return -1;
    if (g->ranks < 1 || g->ranks_per_node < 1 || g->ranks_per_node > g->ranks ||
        g->ranks_per_node > nd->gpus || g->concurrent_per_node < 1)
        return -1;
    if (!(f->oversubscription >= 1)) return -1;
    s->node = nd;
    s->n = g->ranks;
    s->r = g->ranks_per_node;
    /* f->nodes is no limit: sweeps ask about groups before sizing a cluster. */
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
        int cross_leaf = f->topology != TOPO_SINGLE_SWITCH && f->nodes_per_leaf > 0 &&
                         s->nodes > f->nodes_per_leaf;
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

/* Seconds per byte of a stage: traffic per byte of S over bandwidth bw;
 * 0 when the stage carries nothing. */
static double stage(double traffic, double bw) {
    return traffic > 0 ? traffic / bw : 0;
}

/* One candidate: latency (s) and seconds per byte of S at Simple. */
typedef struct plan {
    double lat_s[COLL_PROTO_COUNT];
    double spb;
    int proto_ok[COLL_PROTO_COUNT];
    double ll_ch_bytes;         /* ramp threshold per channel for LL */
    int fill;                   /* Simple pays the pipeline fill */
} plan;

static double max2(double a, double b) { return a > b ? a : b; }

/* Ring hop latency: steps in all, inter of them between nodes. */
static void ring_latency(plan *p, const shape *s, int steps, int inter) {
    if (inter > steps) inter = steps;
    for (int k = 0; k < COLL_PROTO_COUNT; k++)
        p->lat_s[k] = s->base[k] + (steps - inter) * s->hop_nvl[k] + inter * s->hop_net[k];
}

/* Build the plan of algorithm a for op on s; 0, or -1 when NCCL does not
 * offer it. */
static int make_plan(plan *p, const shape *s, coll_op op, coll_algo a) {
    int n = s->n, r = s->r, N = s->nodes;
    int multi = N > 1;
    double fn = n;
    memset(p, 0, sizeof *p);
    for (int k = 0; k < COLL_PROTO_COUNT; k++) p->proto_ok[k] = 1;
    p->fill = 1;
    p->ll_ch_bytes = s->node->ll_channel_bytes;
    int nvls_ok = s->node->nvls && s->node->nvswitch && r > 1 && s->nvls_bw > 0;

    switch (op) {
    case COLL_ALLREDUCE:
        if (a == COLL_RING) {
            double t = 2.0 * (n - 1) / fn;
            p->spb = max2(stage(r > 1 ? t : 0, s->nvl_bw), stage(multi ? t : 0, s->net_bw));
            ring_latency(p, s, 2 * (n - 1), multi ? 2 * N : 0);
            p->ll_ch_bytes *= n;
            return 0;
        }
        if (a == COLL_TREE) {
            double eff = s->node->eff_tree;
            p->spb = max2(stage(r > 1 ? 2 : 0, s->nvl_bw * eff),
                          stage(multi ? 2 : 0, s->net_bw * eff));
            int depth = multi ? ilog2_floor(N) : 0;
            for (int k = 0; k < COLL_PROTO_COUNT; k++)
                p->lat_s[k] = s->base[k] + 2 * ((r - 1) * s->hop_nvl[k] + depth * s->hop_net[k]);
            /* NCCL's tree runs below its model at 4 KB - 1 MB (tuning.cc
             * treeCorrectionFactor 0.4-0.7): as slow to spread over
             * channels as a ring. */
            p->ll_ch_bytes *= n;
            return 0;
        }
        if (a == COLL_NVLS) {
            if (!nvls_ok) return -1;
            p->spb = max2(stage(1.0 + 1.0 / r, s->nvls_bw),
                          stage(multi ? 2 : 0, s->net_bw * s->node->eff_tree));
            p->proto_ok[COLL_LL] = p->proto_ok[COLL_LL128] = 0;
            p->lat_s[COLL_SIMPLE] = s->node->nvls_latency_s +
                                    (multi ? 2 * ilog2_floor(N) * s->hop_net[COLL_SIMPLE] : 0);
            return 0;
        }
        return -1;
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER:
        if (a == COLL_RING) {
            double t = (n - 1) / fn;
            p->spb = max2(stage(r > 1 ? t : 0, s->nvl_bw), stage(multi ? t : 0, s->net_bw));
            ring_latency(p, s, n - 1, multi ? N - 1 : 0);
            return 0;
        }
        if (a == COLL_NVLS) {
            if (!nvls_ok || multi) return -1;
            p->spb = stage(1, s->nvls_bw);
            p->proto_ok[COLL_LL] = p->proto_ok[COLL_LL128] = 0;
            p->lat_s[COLL_SIMPLE] = s->node->nvls_latency_s;
            return 0;
        }
        return -1;
    case COLL_BROADCAST:
        if (a != COLL_RING) return -1;
        p->spb = max2(stage(r > 1 ? 1 : 0, s->nvl_bw), stage(multi ? 1 : 0, s->net_bw));
        ring_latency(p, s, n - 1, multi ? N - 1 : 0);
        return 0;
    case COLL_ALLTOALL:
        if (a != COLL_RING) return -1;
        /* Grouped sends to every peer: each peer costs one LL-size hop to
         * post and complete, remote peers a network hop. */
        p->spb = max2(stage((r - 1) / fn, s->nvl_bw),
                      stage(multi ? r * (double)(n - r) / fn : 0, s->net_bw));
        for (int k = 0; k < COLL_PROTO_COUNT; k++)
            p->lat_s[k] = (r - 1) * s->hop_nvl[COLL_LL] + (n - r) * s->hop_net[COLL_LL] +
                          s->hop_nvl[k];
        p->proto_ok[COLL_LL128] = 0;
        p->fill = 0;
        return 0;
    case COLL_SENDRECV:
        if (a != COLL_RING) return -1;
        /* nccl-tests sendrecv: every rank sends to the next; across a node
         * boundary one rank's NICs carry it. */
        p->spb = max2(stage(r > 1 ? 1 : 0, s->nvl_bw), stage(multi ? 1 : 0, s->rank_net_bw));
        for (int k = 0; k < COLL_PROTO_COUNT; k++)
            p->lat_s[k] = multi ? s->hop_net[k] : s->hop_nvl[k];
        p->proto_ok[COLL_LL128] = 0;
        p->fill = 0;
        return 0;
    default:
        return -1;
    }
}

/* Best protocol of a plan for S bytes: time (without launch) and proto. */
static double plan_time(const plan *p, const shape *s, double S, coll_proto *proto) {
    const node_spec *nd = s->node;
    double ch = nd->coll_channels > 0 ? nd->coll_channels : 1;
    double best = INFINITY;
    for (int k = 0; k < COLL_PROTO_COUNT; k++) {
        if (!p->proto_ok[k] || !(s->eff[k] > 0)) continue;
        double t = p->lat_s[k];
        if (k == COLL_SIMPLE) {
            double win = ch * nd->coll_window_bytes;
            t += S * p->spb + (p->fill ? (S < win ? S : win) * p->spb : 0);
        } else {
            /* Channels NCCL runs for this size: one per threshold bytes
             * (continuous, so that time never falls as the size grows). */
            double thr = k == COLL_LL ? p->ll_ch_bytes : nd->ll_channel_bytes;
            double used = thr > 0 ? S / thr : ch;
            if (used < 1) used = 1;
            if (used > ch) used = ch;
            t += S * p->spb / s->eff[k] * (ch / used);
        }
        if (t < best) {
            best = t;
            *proto = (coll_proto)k;
        }
    }
    return best;
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
    double best = INFINITY;
    for (int a = COLL_RING; a < COLL_ALGO_COUNT; a++) {
        if (algo != COLL_AUTO && a != (int)algo) continue;
        plan p;
        if (make_plan(&p, &s, op, (coll_algo)a) < 0) continue;
        coll_proto proto = COLL_SIMPLE;
        double t = plan_time(&p, &s, bytes, &proto);
        if (t < best) {
            best = t;
            out.algo = (coll_algo)a;
            out.proto = proto;
        }
    }
    if (!isfinite(best)) return -1;   /* the algorithm asked for is not offered */
    out.time_s = s.node->coll_launch_s + best;
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
        if (nd->gpus < 2) return -1;
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
