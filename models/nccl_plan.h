/*
 * nccl_plan: NCCL's algorithms and protocols as alpha-beta plans, private
 * to models/collective.c (which builds the shape and picks the plan NCCL's
 * own model rates fastest). See docs/collectives.md for the model and its sources.
 */
#ifndef CT_NCCL_PLAN_H
#define CT_NCCL_PLAN_H

#include <stddef.h>

#include "models/collective.h"

/* What one call knows of the group on the fabric. Built once per call
 * (collective.c shape_init). */
typedef struct shape {
    const node_spec *node;
    int n, r, nodes;            /* ranks, ranks per NVLink domain, domains spanned
                                   (a domain is a node, or an NVL72 rack of trays) */
    int sharp;                  /* the fabric's switches reduce (IB SHARP) */
    double nvl_bw;              /* per GPU per direction, achievable (ring Simple) */
    double nvls_bw;             /* per GPU per direction, NVLS multicast */
    double net_bw;              /* the group's share of one node's NICs */
    double rank_net_bw;         /* one rank's share (sendrecv) */
    double hop_nvl[COLL_PROTO_COUNT];
    double hop_net[COLL_PROTO_COUNT];
    double base[COLL_PROTO_COUNT];
    double eff[COLL_PROTO_COUNT];
} shape;

/* One candidate (algorithm): latency per protocol and seconds per byte of
 * S at Simple. */
typedef struct plan {
    double lat_s[COLL_PROTO_COUNT];
    double spb;
    int proto_ok[COLL_PROTO_COUNT];
    double ll_ch_bytes;         /* ramp threshold per channel for LL */
    int fill;                   /* Simple pays the pipeline fill */
    int ll128_slots;            /* LL128 ring chunks per channel per loop (n for
                                   all-reduce, 1 for all-gather and reduce-scatter);
                                   0: no chunk imbalance modelled */
    double ll128_share;         /* of S, the bytes those chunks deal (1, or 1/n) */
} plan;

/* 1 when NCCL offers algorithm a for op on s, else 0 with why filled
 * (why may be NULL). */
int nccl_offered(const shape *s, coll_op op, coll_algo a, char *why, size_t len);

/* Build the plan of algorithm a for op on s: 0, or -1 when not offered. */
int nccl_plan_make(plan *p, const shape *s, coll_op op, coll_algo a);

/* The protocol of p allowed by proto_mask (bit 1 << proto; never 0) that
 * NCCL's own model picks for S bytes (*proto, and that model's time in
 * *model_s, may be NULL): its time as run, without the launch; INFINITY
 * when none. */
double nccl_plan_time(const plan *p, const shape *s, double S, unsigned proto_mask, coll_proto *proto,
                      double *model_s);

#endif
