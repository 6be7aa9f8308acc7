/*
 * nccl_plan: which algorithms NCCL offers for an op and group, and each
 * one's alpha-beta plan (latency per protocol, seconds per byte).
 *
 * Read from NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel, NCCL
 * 2.18-2.23) and made physical: where NCCL multiplies a per-channel bus
 * bandwidth by a correction, this file counts the bytes each GPU moves over
 * NVLink and each node moves over its NICs (see collective.c's table and
 * docs/collectives.md). No code is taken from NCCL.
 */
#include "models/nccl_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- NCCL tuning constants (tuning.cc ncclTopoTuneModel, 2.23) --------- */

/* CollNet direct: each local rank adds 0.4 us of arity serialisation. */
#define NCCL_COLLNET_ARITY_S 0.4e-6
/* PAT (all-gather/reduce-scatter at one GPU per node): base latency 8 us,
 * a log2(nodes) part at 1/3.5 of the network hop, a linear 2.8 us per
 * rank, and 0.75 of the ring's bus bandwidth (COLL_PAT_BW_FRACTION,
 * models/collective.h). */
#define NCCL_PAT_BASE_S 8e-6
#define NCCL_PAT_LOG_DIVISOR 3.5
#define NCCL_PAT_RANK_S 2.8e-6
/* Ring LL128 bandwidth in NCCL's model: 0.92 of Simple's at two or more
 * GPUs per node (ncclTopoTuneModel: "busBw * (ppn < 2 ? 0.7 : 0.92)"); the
 * per-channel ceilings perChMaxRingLL128Bws do not bind on NVSwitch nodes
 * (Ampere: 12 graph channels x 20 GB/s = the 240 GB/s NVLink rate). */
#define NCCL_LL128_MODEL_FACTOR 0.92

/* LL128 ring chunking (NCCL 2.18 src/collectives/device/all_reduce.h,
 * all_gather.h, reduce_scatter.h, runRing): a loop gives each (channel,
 * rank) slot a chunk of a whole number of minChunkSize = nthreads x
 * calcBytePerGrain / 2 = 640 x 60 / 2 = 19200 bytes (NCCL_LL128_MAX_NTHREADS
 * 640; a grain is 8 lines' data, 8 x 120/128 x 8 B = 60 B, prims_ll128.h),
 * at most one step of the LL128 buffer's data, 120 x 640 x 8 B x 15/16 =
 * 576000 bytes (init.cc DEFAULT_LL128_BUFFSIZE / NCCL_STEPS, devcomm.h). */
#define NCCL_LL128_MIN_CHUNK_BYTES 19200.0
#define NCCL_LL128_STEP_BYTES 576000.0

static int ilog2_floor(int x) {
    int k = 0;
    while (x > 1) { x >>= 1; k++; }
    return k;
}

static double max2(double a, double b) { return a > b ? a : b; }

/* Seconds per byte of a stage: traffic per byte of S over bandwidth bw;
 * 0 when the stage carries nothing. */
static double stage(double traffic, double bw) {
    return traffic > 0 ? traffic / bw : 0;
}

/* ---- What NCCL offers ------------------------------------------------------ */

static int nvls_hardware(const shape *s) {
    return s->node->nvls && s->node->nvswitch && s->nvls_bw > 0;
}

static int is_gather(coll_op op) { return op == COLL_ALLGATHER || op == COLL_REDUCESCATTER; }

/* Why NVLS or NVLS-tree is not offered, or NULL. */
static const char *nvls_missing(const shape *s, coll_op op, coll_algo a) {
    int multi = s->nodes > 1;
    if (!nvls_hardware(s)) return "needs NVSwitch nodes with NVLink SHARP (nvls=\"true\")";
    if (s->r < 2) return "needs at least 2 GPUs of the group in each node";
    if (a == COLL_NVLS_TREE) {
        if (op != COLL_ALLREDUCE) return "runs all-reduce only";
        return multi ? NULL : "runs across nodes only (NVLS inside one node)";
    }
    if (op != COLL_ALLREDUCE && !is_gather(op)) return "runs all-reduce, all-gather and reduce-scatter only";
    if (multi && op != COLL_ALLREDUCE) return "runs all-gather and reduce-scatter inside one node only";
    if (multi && !s->sharp) return "across nodes needs SHARP switches (<network sharp=\"true\">)";
    return NULL;
}

/* Why CollNet or PAT is not offered, or NULL. */
static const char *other_missing(const shape *s, coll_op op, coll_algo a) {
    int multi = s->nodes > 1;
    if (a == COLL_PAT) {
        if (!is_gather(op)) return "runs all-gather and reduce-scatter only";
        return s->r == 1 && multi ? NULL : "runs at one GPU per node across nodes only";
    }
    if (!s->sharp) return "needs SHARP switches (<network sharp=\"true\">)";
    if (op != COLL_ALLREDUCE) return "runs all-reduce only";
    if (!multi) return "runs across nodes only";
    if (a == COLL_COLLNET_DIRECT && !s->node->nvswitch) return "direct needs NVSwitch nodes";
    return NULL;
}

int nccl_offered(const shape *s, coll_op op, coll_algo a, char *why, size_t len) {
    const char *no = NULL;
    switch (a) {
    case COLL_RING: break;
    case COLL_TREE: no = op == COLL_ALLREDUCE ? NULL : "runs all-reduce only"; break;
    case COLL_NVLS:
    case COLL_NVLS_TREE: no = nvls_missing(s, op, a); break;
    case COLL_COLLNET_DIRECT:
    case COLL_COLLNET_CHAIN:
    case COLL_PAT: no = other_missing(s, op, a); break;
    default: no = "is not an algorithm"; break;
    }
    if (no && why && len) snprintf(why, len, "%s %s", coll_algo_name(a), no);
    return no == NULL;
}

/* ---- Plans ------------------------------------------------------------------ */

static void plan_reset(plan *p, const shape *s) {
    memset(p, 0, sizeof *p);
    for (int k = 0; k < COLL_PROTO_COUNT; k++) p->proto_ok[k] = 1;
    /* LL128 by architecture (tuning.cc): NCCL enables it only where the
     * GPUs talk over NVLink (typeIntra <= PATH_NVB); over PCIe it is off. */
    p->proto_ok[COLL_LL128] = s->node->nvlink_bw_bytes_per_s > 0;
    p->fill = 1;
    p->ll_ch_bytes = s->node->ll_channel_bytes;
}

/* Simple only, one latency (NVLS, NVLS-tree, CollNet, PAT). */
static void simple_only(plan *p, double lat_s) {
    p->proto_ok[COLL_LL] = p->proto_ok[COLL_LL128] = 0;
    p->lat_s[COLL_SIMPLE] = lat_s;
}

/* Ring hop latency: steps in all, inter of them between nodes. */
static void ring_latency(plan *p, const shape *s, int steps, int inter) {
    if (inter > steps) inter = steps;
    for (int k = 0; k < COLL_PROTO_COUNT; k++)
        p->lat_s[k] = s->base[k] + (steps - inter) * s->hop_nvl[k] + inter * s->hop_net[k];
}

/* Bytes a node sends over its NICs per byte of S in a double binary tree:
 * 2 (up and down), but 1 on two nodes, where each tree's root is the
 * other's leaf (tuning.cc uses the intra-node bandwidth for trees at
 * nNodes <= 2 and doubles NVLS-tree's inter-node bandwidth there; NVIDIA/nccl
 * issue #946: "2x less traffic on the network"). */
static double tree_net_traffic(int nodes) { return nodes == 2 ? 1 : 2; }

static void plan_ring(plan *p, const shape *s, coll_op op) {
    int n = s->n, r = s->r, N = s->nodes, multi = N > 1;
    double t = op == COLL_ALLREDUCE ? 2.0 * (n - 1) / n : is_gather(op) ? (double)(n - 1) / n : 1;
    p->spb = max2(stage(r > 1 ? t : 0, s->nvl_bw), stage(multi ? t : 0, s->net_bw));
    if (op == COLL_ALLREDUCE) {
        ring_latency(p, s, 2 * (n - 1), multi ? 2 * N : 0);
        p->ll_ch_bytes *= n;
        p->ll128_slots = n;        /* the whole buffer in n chunks per channel */
        p->ll128_share = 1;
    } else {
        ring_latency(p, s, n - 1, multi ? N - 1 : 0);
        if (is_gather(op)) {       /* each rank's part in one chunk per channel */
            p->ll128_slots = 1;
            p->ll128_share = 1.0 / n;
        }
    }
}

static void plan_tree(plan *p, const shape *s) {
    int r = s->r, N = s->nodes, multi = N > 1;
    double eff = s->node->eff_tree;
    p->spb = max2(stage(r > 1 ? 2 : 0, s->nvl_bw * eff),
                  stage(multi ? tree_net_traffic(N) : 0, s->net_bw * eff));
    int depth = multi ? ilog2_floor(N) : 0;
    for (int k = 0; k < COLL_PROTO_COUNT; k++)
        p->lat_s[k] = s->base[k] + 2 * ((r - 1) * s->hop_nvl[k] + depth * s->hop_net[k]);
    /* NCCL's tree runs below its model at 4 KB - 1 MB (tuning.cc
     * treeCorrectionFactor 0.4-0.7): as slow to spread over channels as a
     * ring. */
    p->ll_ch_bytes *= s->n;
}

/* NVLS all-reduce moves (1 + 1/r) S per GPU each way through the switch;
 * all-gather and reduce-scatter S. Across nodes (IB SHARP) each node's
 * NICs carry S each way: the switches reduce. */
static void plan_nvls(plan *p, const shape *s, coll_op op) {
    int multi = s->nodes > 1;
    double intra = op == COLL_ALLREDUCE ? 1.0 + 1.0 / s->r : 1;
    p->spb = max2(stage(intra, s->nvls_bw), stage(multi ? 1 : 0, s->net_bw));
    simple_only(p, s->node->nvls_latency_s + (multi ? s->hop_net[COLL_SIMPLE] : 0));
}

/* NVLS inside each node, a double binary tree over the NICs between the
 * nodes' NVLS heads. */
static void plan_nvls_tree(plan *p, const shape *s) {
    int N = s->nodes;
    p->spb = max2(stage(1.0 + 1.0 / s->r, s->nvls_bw),
                  stage(tree_net_traffic(N), s->net_bw * s->node->eff_tree));
    simple_only(p, s->node->nvls_latency_s + 2 * ilog2_floor(N) * s->hop_net[COLL_SIMPLE]);
}

/* CollNet: the switches reduce, so each node's NICs carry S each way.
 * Direct: a reduce-scatter and an all-gather over NVLink to and from the
 * GPUs next to the NICs; chain: a chain inside the node, as the tree. */
static void plan_collnet(plan *p, const shape *s, coll_algo a) {
    int r = s->r;
    double hop = s->hop_nvl[COLL_SIMPLE], net = s->hop_net[COLL_SIMPLE];
    if (a == COLL_COLLNET_DIRECT) {
        p->spb = max2(stage(2.0 * (r - 1) / r, s->nvl_bw), stage(1, s->net_bw));
        simple_only(p, 2 * ((r > 1) * hop + (r - 1) * NCCL_COLLNET_ARITY_S) + net);
    } else {
        p->spb = max2(stage(r > 1 ? 2 : 0, s->nvl_bw * s->node->eff_tree), stage(1, s->net_bw));
        simple_only(p, 2 * (r - 1) * hop + net);
    }
}

/* PAT: the ring's bytes at 0.75 of its bandwidth, a latency logarithmic in
 * the nodes plus a linear part per rank. */
static void plan_pat(plan *p, const shape *s) {
    int n = s->n;
    p->spb = stage((double)(n - 1) / n, s->net_bw * COLL_PAT_BW_FRACTION);
    simple_only(p, NCCL_PAT_BASE_S + ilog2_floor(s->nodes) * s->hop_net[COLL_SIMPLE] / NCCL_PAT_LOG_DIVISOR +
                       n * NCCL_PAT_RANK_S);
}

/* alltoall and sendrecv: grouped point-to-point sends, as a ring. */
static void plan_p2p(plan *p, const shape *s, coll_op op) {
    int n = s->n, r = s->r, multi = s->nodes > 1;
    double fn = n;
    p->proto_ok[COLL_LL128] = 0;
    p->fill = 0;
    if (op == COLL_ALLTOALL) {
        /* Each peer costs one LL-size hop to post and complete, remote
         * peers a network hop. */
        p->spb = max2(stage((r - 1) / fn, s->nvl_bw), stage(multi ? r * (double)(n - r) / fn : 0, s->net_bw));
        for (int k = 0; k < COLL_PROTO_COUNT; k++)
            p->lat_s[k] = (r - 1) * s->hop_nvl[COLL_LL] + (n - r) * s->hop_net[COLL_LL] + s->hop_nvl[k];
        return;
    }
    /* nccl-tests sendrecv: every rank sends to the next; across a node
     * boundary one rank's NICs carry it. */
    p->spb = max2(stage(r > 1 ? 1 : 0, s->nvl_bw), stage(multi ? 1 : 0, s->rank_net_bw));
    for (int k = 0; k < COLL_PROTO_COUNT; k++) p->lat_s[k] = multi ? s->hop_net[k] : s->hop_nvl[k];
}

int nccl_plan_make(plan *p, const shape *s, coll_op op, coll_algo a) {
    if (!nccl_offered(s, op, a, NULL, 0)) return -1;
    if ((op == COLL_ALLTOALL || op == COLL_SENDRECV) && a != COLL_RING) return -1;
    plan_reset(p, s);
    switch (a) {
    case COLL_RING:
        if (op == COLL_ALLTOALL || op == COLL_SENDRECV) plan_p2p(p, s, op);
        else plan_ring(p, s, op);
        return 0;
    case COLL_TREE: plan_tree(p, s); return 0;
    case COLL_NVLS: plan_nvls(p, s, op); return 0;
    case COLL_NVLS_TREE: plan_nvls_tree(p, s); return 0;
    case COLL_COLLNET_DIRECT:
    case COLL_COLLNET_CHAIN: plan_collnet(p, s, a); return 0;
    case COLL_PAT: plan_pat(p, s); return 0;
    default: return -1;
    }
}

/* Bytes the busiest of nc channels moves in an LL128 ring over the
 * average, >= 1, for D bytes dealt in slots chunks per channel per loop
 * (NCCL_LL128_MIN_CHUNK_BYTES): full loops are even; the last one rounds
 * its chunks up to whole minimum chunks, so the first channels fill every
 * slot while the last ones get less or nothing, and a channel (one SM)
 * cannot take over another's data. */
static double ll128_imbalance(double D, int nc, int slots) {
    double g = (double)nc * slots, loop = g * NCCL_LL128_STEP_BYTES;
    double loops = floor(D / loop), R = D - loops * loop;
    if (!(D > 0) || !(R > 0) || slots < 1) return 1;
    double chunk = ceil(R / (g * NCCL_LL128_MIN_CHUNK_BYTES)) * NCCL_LL128_MIN_CHUNK_BYTES;
    if (chunk > NCCL_LL128_STEP_BYTES) chunk = NCCL_LL128_STEP_BYTES;
    /* Channel 0 holds slots 0, nc, 2 nc, ...: full ones, then what is left. */
    double full = R >= chunk ? floor((R - chunk) / (nc * chunk)) + 1 : 0;
    if (full > slots) full = slots;
    double rest = full < slots ? R - full * nc * chunk : 0;
    double first = full * chunk + (rest > 0 ? (rest < chunk ? rest : chunk) : 0);
    return (loops * loop / nc + first) / (D / nc);
}

/* One protocol's time for S bytes. Simple moves a window per channel per
 * step: a message that fits in one window per channel cannot overlap its
 * stages and pays its transfer twice; larger ones pay one window. LL and
 * LL128 run on the channels the size fills (one per threshold bytes,
 * continuous so that time never falls as the size grows). */
static double proto_time(const plan *p, const shape *s, double S, int k) {
    const node_spec *nd = s->node;
    double ch = nd->coll_channels > 0 ? nd->coll_channels : 1;
    double t = p->lat_s[k];
    if (k == COLL_SIMPLE) {
        double win = ch * nd->coll_window_bytes;
        return t + S * p->spb + (p->fill ? (S < win ? S : win) * p->spb : 0);
    }
    double thr = k == COLL_LL ? p->ll_ch_bytes : nd->ll_channel_bytes;
    double used = thr > 0 ? S / thr : ch;
    if (used < 1) used = 1;
    if (used > ch) used = ch;
    /* Once the size fills every channel (below, the ramp above prices the
     * few channels NCCL runs). */
    double spread = k == COLL_LL128 && p->ll128_slots > 0 && used >= ch
                        ? ll128_imbalance(S * p->ll128_share, (int)ch, p->ll128_slots) : 1;
    return t + S * p->spb / s->eff[k] * (ch / used) * spread;
}

/* NCCL's own estimate of a protocol's time (tuning.cc ncclTopoGetAlgoTime:
 * latency + bytes / bandwidth): no channel ramp, no pipeline fill, and
 * LL128 at tuning.cc's ring factor 0.92 (NCCL_LL128_MODEL_FACTOR) whatever
 * the architecture: NCCL chooses with this, the GPU then runs what it
 * chose (proto_time). */
static double model_time(const plan *p, const shape *s, double S, int k) {
    double f = k == COLL_LL128 ? NCCL_LL128_MODEL_FACTOR : s->eff[k];
    return p->lat_s[k] + S * p->spb / f;
}

double nccl_plan_time(const plan *p, const shape *s, double S, unsigned proto_mask, coll_proto *proto,
                      double *model_s) {
    double best = INFINITY, t = INFINITY;
    for (int k = 0; k < COLL_PROTO_COUNT; k++) {
        if (!p->proto_ok[k] || !(s->eff[k] > 0) || !(proto_mask & (1u << k))) continue;
        double m = model_time(p, s, S, k);
        if (m < best) {
            best = m;
            t = proto_time(p, s, S, k);
            *proto = (coll_proto)k;
        }
    }
    if (model_s) *model_s = best;
    return t;
}
