/*
 * flow_coll: a collective unrolled into its algorithm's steps, each step a
 * set of flows on the network of models/flow_topo, priced by max-min
 * sharing (models/flow). docs/flow-fabric.md gives the model.
 *
 * Algorithms (n ranks, r per NVLink domain, N domains, S bytes):
 * - ring: 2(n-1) steps (all-reduce; n-1 for all-gather, reduce-scatter)
 *   of S/n from each rank to the next. Across domains it runs r channels:
 *   channel c goes through the domain's ranks from rank c, r-1 NVLink
 *   flows of S/(n r), and leaves for the next domain through rank c's NIC
 *   to the same NIC (rail) there. On one domain, one ring of n NVLink flows.
 * - tree (all-reduce): NCCL's double binary tree between domains (each
 *   domain a leaf of one tree and inside the other; two domains: each
 *   tree's root is the other's leaf), S/2 per tree up and down per
 *   channel's NIC, and a chain through the domain's ranks per channel, all
 *   at once: the steady state of the chunk pipeline. At eff-tree.
 * - NVLS: each rank's buffer through its NVLink switch and back: one flow
 *   of (1 + 1/r) S (all-reduce; S for all-gather, reduce-scatter) per
 *   rank, at eff-nvls. NVLS-tree adds the tree's flows between domains.
 * - hierarchical (all-reduce): a reduce-scatter ring inside each domain
 *   (r-1 steps of S/r), then on each rail a ring all-reduce of S/r across
 *   the domains (2(N-1) steps of S/(r N)), then an all-gather ring inside.
 * - all-to-all: every rank sends S/n to every other rank, all at once.
 *   NCCL orders the peers in rounds (NVIDIA/nccl src/init.cc
 *   ncclP2pSchedule: round by round each rank sends to one peer and
 *   receives from another, peer groups taken in a quadratic order) but puts
 *   every round of a grouped call in one kernel plan on its p2p channels
 *   (src/enqueue.cc scheduleP2pTasksToPlan, channel base per round in
 *   src/include/channel.h ncclP2pChannelBaseForRound), so the rounds are in
 *   flight together: their flows share the links at once.
 * - PAT (all-gather, reduce-scatter at one rank per domain, NCCL 2.23+):
 *   ceil(log2 n) steps, one per dimension from the farthest: the peer 2^d
 *   away gets the chunks of S/n that the dimension-reversed Bruck algorithm
 *   passes there (n-1 chunks in all), at 0.75 of the bandwidth as NCCL's
 *   tuning model says (COLL_PAT_BW_FRACTION).
 * - CollNet (all-reduce with SHARP switches, direct and chain): inside each
 *   domain the direct exchange (2S/r between every two ranks) or the
 *   tree's chains; between domains each channel's NIC sends S/r up once and
 *   receives S/r down once, the switches reducing; a group spanning
 *   switches adds one stream of S/r per switch and channel to and from the
 *   spine, however many of its nodes the switch holds.
 *
 * A step's time is its slowest flow (flow_run: rates re-solved as flows
 * end). The steps of one phase send equal chunks between the same
 * neighbours, so their flows are identical and one solve prices them all:
 * the cost is one solve per phase, O((F P + L) log L) for F flows, not one
 * per step. The time reported is the closed form's latency (launch, base,
 * per-step hops of models/collective.c for the same algorithm and
 * protocol) plus the flows' time scaled by the closed form's protocol
 * efficiency and pipeline fill (coll_result: (time_s - lat_s) / xfer_s), so
 * a collective whose flows meet no one else agrees with coll_time where
 * the flows have the closed form's bottleneck.
 */
#ifndef CT_FLOW_COLL_H
#define CT_FLOW_COLL_H

#include "models/collective.h"
#include "models/flow.h"
#include "models/flow_topo.h"

typedef enum flow_algo {
    FLOW_AS_NCCL,               /* what coll_time chooses (all but broadcast, send/receive and
                                   NVLS across domains unrolled) */
    FLOW_RING, FLOW_TREE, FLOW_NVLS, FLOW_NVLS_TREE, FLOW_HIER,
    FLOW_ALLTOALL, FLOW_PAT, FLOW_COLLNET_DIRECT, FLOW_COLLNET_CHAIN, FLOW_ALGO_COUNT
} flow_algo;

const char *flow_algo_name(flow_algo a);        /* "ring", "tree", "nvls", "nvls-tree", "hierarchical",
                                                   "alltoall", "pat", "collnet-direct", "collnet-chain" */

/* Where a communicator lies: ranks_per_node ranks on each of its NVLink
 * domains (as coll_group), domain k being topology domain dom[k] (NULL: k),
 * its ranks the domain's GPUs first_gpu, first_gpu + 1, ... */
typedef struct flow_group {
    int ranks;
    int ranks_per_node;
    const int *dom;
    int first_gpu;
} flow_group;

typedef struct flow_coll_result {
    double time_s;              /* the collective, flows and latency */
    double flows_s;             /* the unrolled steps' flow time */
    double closed_s;            /* coll_time for the same algorithm on the topology's fabric
                                   seen as NCCL sees it: without the spine's oversubscription */
    double closed_xfer_s;       /* coll_result.xfer_s of it */
    flow_algo algo;             /* what was unrolled */
    coll_algo nccl_algo;        /* the closed form's algorithm priced for latency */
    coll_proto proto;
    int unrolled;               /* 0: NCCL chose an algorithm not unrolled (broadcast, send/receive,
                                   NVLS across domains): time_s is the closed form's */
    long long steps;            /* steps unrolled */
    int solves;                 /* flow solves (one per phase of identical steps) */
    int flows;                  /* flows in the largest step */
} flow_coll_result;

/* The collective op of bytes on group g over topology t (its links in net;
 * flows in net are replaced). 0, or -1 on invalid input, an algorithm that
 * does not serve op on g, or out of memory. */
int flow_coll_time(flow_net *net, const flow_topo *t, coll_op op, double bytes, const flow_group *g,
                   flow_algo algo, flow_coll_result *r);

/* The collective on group g (its ranks packed on the first NVLink domains
 * of fabric f, as a nccl-tests run on whole nodes), over a network of just
 * those domains' nodes, algorithm as NCCL chooses it. 0, or -1 (invalid
 * input, out of memory). */
int flow_coll_packed(const fabric *f, coll_op op, double bytes, const coll_group *g, flow_coll_result *r);

/* Add the flows of one step of a ring all-reduce of chunk bytes per rank
 * (as flow_coll_time's ring) to net without running them; flows added, or
 * -1. Used to put several communicators' traffic on one fabric. */
int flow_coll_ring_step(flow_net *net, const flow_topo *t, const flow_group *g, double chunk);

/* Add the flows of an all-to-all (as flow_coll_time's), chunk bytes from
 * every rank to every other rank (S/n of an S-byte buffer), to net without
 * running them; flows added, or -1. Used, as the ring step is, to put
 * several communicators' traffic on one fabric. */
int flow_coll_alltoall_step(flow_net *net, const flow_topo *t, const flow_group *g, double chunk);

#endif
