/*
 * collective: time of one NCCL-style collective on the cluster's topology.
 *
 * Alpha-beta model per algorithm (ring, tree, NVLink SHARP) with a protocol
 * efficiency per algorithm; hierarchical groups (NVLink inside the NVLink
 * domain: the node, or a rack of trays such as GB200 NVL72; the NICs between
 * domains); several NICs per node shared by the groups that run
 * at once; fat-tree oversubscription above the leaf switches; direct
 * multi-NIC access vs an overlay network.
 *
 * Pure functions of plain structs: no engine, no I/O. Sizes follow
 * nccl-tests: `bytes` is the per-rank buffer count*sizeof(type) as
 * all_reduce_perf/all_gather_perf print in their "size" column (for
 * all-gather and reduce-scatter that is the full, gathered buffer).
 */
#ifndef CT_COLLECTIVE_H
#define CT_COLLECTIVE_H

#include <stddef.h>

#include "models/catalog.h"

typedef enum coll_op {
    COLL_ALLREDUCE, COLL_ALLGATHER, COLL_REDUCESCATTER, COLL_ALLTOALL,
    COLL_BROADCAST, COLL_SENDRECV, COLL_OP_COUNT
} coll_op;

/* NCCL's algorithms (src/graph/tuning.cc ncclTopoTuneModel, NCCL 2.18-2.23):
 * ring; tree (double binary tree between nodes, a chain inside); NVLS
 * (NVLink SHARP inside the node; across nodes only with IB SHARP);
 * NVLS-tree (NVLS inside, a tree over the NICs between nodes); CollNet
 * direct and chain (IB SHARP switches reduce between nodes); PAT (all-gather
 * and reduce-scatter at one GPU per node, NCCL 2.23+). */
typedef enum coll_algo {
    COLL_AUTO, COLL_RING, COLL_TREE, COLL_NVLS, COLL_NVLS_TREE, COLL_COLLNET_DIRECT,
    COLL_COLLNET_CHAIN, COLL_PAT, COLL_ALGO_COUNT
} coll_algo;

/* PAT moves the ring's bytes at 0.75 of the ring's bus bandwidth (NVIDIA/nccl
 * src/graph/tuning.cc, ncclTopoTuneModel: "if (a == NCCL_ALGO_PAT) busBw *=
 * .75", NCCL 2.23-2.30). The closed form (models/nccl_plan.c) and the
 * unrolled flows (models/flow_coll.c) both apply it. */
#define COLL_PAT_BW_FRACTION 0.75

typedef enum nic_mode { NIC_DIRECT, NIC_OVERLAY } nic_mode;

typedef enum topology_kind { TOPO_FAT_TREE, TOPO_RAIL_OPTIMIZED, TOPO_SINGLE_SWITCH } topology_kind;

/* NCCL's protocols: LL (8-byte flag+data stores, lowest latency), LL128
 * (128-byte lines, 120 of data), Simple (bulk copies with a flag per step). */
typedef enum coll_proto { COLL_LL, COLL_LL128, COLL_SIMPLE, COLL_PROTO_COUNT } coll_proto;

/* "allreduce" -> COLL_ALLREDUCE; -1 when unknown. */
int coll_op_parse(const char *z);
const char *coll_op_name(coll_op op);
const char *coll_algo_name(coll_algo a);
const char *coll_proto_name(coll_proto p);   /* "LL", "LL128", "Simple" */

/* Forcing, as NCCL_ALGO and NCCL_PROTO do: a set of algorithms (bit 1 << a)
 * or protocols (bit 1 << p); 0 = NCCL's own choice among all. Names:
 * "auto", "ring", "tree", "nvls", "nvls-tree", "collnet" (direct and chain),
 * "collnet-direct", "collnet-chain", "pat"; "auto", "ll", "ll128",
 * "simple". Return 0 with *mask set, or -1 for an unknown name. */
int coll_algo_mask_parse(const char *z, unsigned *mask);
int coll_proto_mask_parse(const char *z, unsigned *mask);

/* What a collective sees of the cluster. */
typedef struct fabric {
    const node_spec *node;
    const gpu_spec *gpu;
    const nic_spec *nic;
    topology_kind topology;
    double oversubscription;        /* >= 1: leaf uplink bandwidth = downlink / this */
    nic_mode mode;
    int nodes_per_leaf;             /* nodes under one leaf switch (rail group) */
    int nodes;                      /* nodes in the cluster */
    /* Overlay network costs (used when mode == NIC_OVERLAY); defaults from
     * fabric_defaults(). */
    double overlay_latency_s;       /* added per message (encapsulation, vSwitch) */
    double overlay_bw_fraction;     /* per-node bandwidth reachable through the overlay,
                                       as a fraction of the direct (RDMA) figure */
    int sharp;                      /* 1: the switches between nodes reduce in-network
                                       (InfiniBand SHARP): CollNet and NVLS across nodes */
    unsigned algo_mask;             /* forced algorithms (coll_algo_mask_parse); 0 = all */
    unsigned proto_mask;            /* forced protocols; 0 = all */
    double net_share;               /* fraction of its NICs' bandwidth a group gets on a
                                       fabric shared with other jobs (the flow model,
                                       sim/world_flow.c); 0 = all of it */
    double a2a_net_share;           /* the same for a MoE step's expert-parallel all-to-all
                                       (models/train_moe.c), measured on the all-to-all's own
                                       flows; 0 = net_share */
    int flow_model;                 /* <network model="flow">: microbenchmark collectives
                                       are priced by models/flow_coll; coll_time ignores it */
} fabric;

/* Default network settings, no node: fat-tree, oversubscription 1, direct,
 * 32 nodes per leaf, one node, the overlay costs the field reports. */
void fabric_defaults(fabric *f);

/* Fill the fabric for a node type from the catalog with default network
 * settings (fabric_defaults). Returns 0, or -1 when node is NULL, nodes < 1
 * or the node's GPU or NIC is not in the catalog (f unchanged). */
int fabric_init(fabric *f, const catalog *c, const node_spec *node, int nodes);

/* GPUs in one NVLink (scale-up) domain of the fabric's node type: the
 * node's gpus, or node->nvlink_domain when the domain spans several nodes
 * (GB200 NVL72: 72 over 18 trays). 0 without a node. */
int fabric_domain_gpus(const fabric *f);

/* How a communicator lies on the cluster. The unit is the NVLink domain
 * (fabric_domain_gpus): an HGX node, or a rack of trays (GB200 NVL72: 18
 * trays of 4 GPUs behind NVLink switch trays). Ranks in one domain talk
 * over NVLink; only traffic between domains uses the NICs, and a domain's
 * NICs are the sum of its trays' NICs. For nodes that are their own domain
 * (every 8-GPU node) "domain" reads "node", as the field names say. */
typedef struct coll_group {
    int ranks;                      /* GPUs in the communicator */
    int ranks_per_node;             /* ranks per NVLink domain
                                       (1..fabric_domain_gpus(f)) */
    int concurrent_per_node;        /* communicators of this shape running at the
                                       same time in one NVLink domain, sharing its
                                       NICs (e.g. 8 DP groups under TP=8); >= 1 */
} coll_group;

typedef struct coll_result {
    double time_s;
    coll_algo algo;                 /* the algorithm chosen (or given) */
    double algbw_bytes_per_s;       /* bytes / time */
    double busbw_bytes_per_s;       /* nccl-tests bus bandwidth */
    coll_proto proto;               /* the protocol chosen (fastest for the size) */
    int fallback;                   /* 1: nothing the fabric forces is offered for this op
                                       and group, so NCCL's own choice was used */
    double lat_s;                   /* of time_s: launch, base and hop latencies */
    double xfer_s;                  /* bytes x the plan's seconds per byte at its slowest
                                       stage; time_s - lat_s is this times the protocol's
                                       efficiency and pipeline fill (models/flow_coll
                                       replaces it with the flows' time) */
} coll_result;

/* Time of one collective of `bytes` on group g. algo COLL_AUTO picks the
 * (algorithm, protocol) that NCCL's own model rates fastest among those
 * NCCL offers for the op and group and the fabric forces (f->algo_mask, f->proto_mask); when none of those is
 * offered it falls back to NCCL's own choice and sets r->fallback. An
 * explicit algo ignores the fabric's algo_mask. Returns 0, or -1 on invalid
 * input (r unchanged).
 *
 * Invalid: NULL arguments, a fabric without node or NIC, op or algo out of
 * range, bytes negative or not finite, ranks < 1, ranks_per_node outside
 * 1..min(ranks, fabric_domain_gpus(f)), concurrent_per_node < 1, oversubscription < 1,
 * or an algorithm NCCL does not offer for this op and group (see
 * coll_offered). f->nodes is not a limit on the group. alltoall and sendrecv
 * are point-to-point: they report COLL_RING.
 *
 * One rank: time 0, bandwidths 0. Pure and allocation-free; about 0.1 us. */
int coll_time(const fabric *f, coll_op op, double bytes, const coll_group *g,
              coll_algo algo, coll_result *r);

/* Whether NCCL offers algorithm a for op on group g of the fabric: ring
 * always; tree: all-reduce; NVLS: all-reduce, all-gather, reduce-scatter on
 * NVLS nodes with >= 2 GPUs of the group per node, across nodes all-reduce
 * with f->sharp only; NVLS-tree: all-reduce across nodes on NVLS nodes;
 * CollNet: all-reduce across nodes with f->sharp (direct: NVSwitch nodes);
 * PAT: all-gather and reduce-scatter at one GPU per node across nodes.
 * 1 or 0; why (may be NULL) says what is missing. */
int coll_offered(const fabric *f, coll_op op, const coll_group *g, coll_algo a, char *why,
                 size_t len);

/* nccl-tests bus bandwidth factor: allreduce 2(n-1)/n, allgather and
 * reducescatter (n-1)/n, alltoall (n-1)/n, broadcast and sendrecv 1. */
double coll_busbw_factor(coll_op op, int n);

/* Point-to-point transfer of bytes between two GPUs (pipeline activations):
 * same NVLink domain (same_node) over NVLink, else over the NICs.
 * concurrent_per_node as above:
 * transfers leaving one node at the same time (e.g. the tp GPUs of a stage).
 * Returns seconds, or -1 on invalid input (as coll_time). Cross-leaf
 * oversubscription is not applied: pipeline neighbours are adjacent nodes. */
double p2p_time_s(const fabric *f, double bytes, int same_node, int concurrent_per_node);

#endif
