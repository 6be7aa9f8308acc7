/*
 * train_moe: the routed FFN of one mixture-of-experts layer in a training
 * step, on one GPU for one micro-batch, and the GEMM and collective helpers
 * the step model shares with it (models/training.c).
 *
 * A MoE layer replaces the dense FFN by
 *   router     a GEMM of the tokens against h x experts weights (kept in
 *              BF16: DeepSeek-V3 section 3.3.1 keeps the gating in its
 *              original precision), and the top-k selection;
 *   dispatch   an all-to-all over the ep GPUs of the EP group: every token
 *              to its k experts (tokens*k*h elements per GPU), in FP8 where
 *              the stack dispatches so (stack fp8-activations);
 *   experts    per local expert (experts/ep of them), the gated FFN on the
 *              tokens routed to it: tokens*k*ep/experts rows on average, x
 *              expert-imbalance on the busiest GPU (it sets the pace), run
 *              as a grouped GEMM: each expert's GEMM at the efficiency the
 *              GPU's roofline gives its own small shape (gemm_half_dim);
 *   shared     the always-on experts as a dense FFN split over tp;
 *   permute    the copies of rows into expert order and back (Megatron-Core
 *              moe_utils.permute / unpermute): memory-bound;
 *   combine    the all-to-all back, in BF16.
 * The backward doubles the GEMMs and the copies and runs both all-to-alls
 * again with gradients (BF16).
 *
 * Placement of an EP group (docs/moe-training.md): Megatron-Core orders
 * expert ranks etp fastest, then ep, so the ep members lie etp GPUs apart.
 * Those inside one NVLink domain (fabric_domain_gpus) exchange over NVLink;
 * a group spanning domains goes through the NICs (collective's all-to-all,
 * r(n-r)/n of the buffer through a node's NICs). With node-limited routing
 * (route_nodes = M: DeepSeek-V3 section 2.1.2) a token reaches at most M
 * nodes and crosses the NICs once per node, then fans out over NVLink
 * (section 3.2.2); the two hops run at once, so the slower one counts.
 * The flex dispatcher (DeepEP, HybridEP) forwards that way whatever the
 * routing: once per node the token's experts fall in (train_moe_groups_hit);
 * the alltoall dispatcher (NCCL) sends each of the k copies itself.
 */
#ifndef CT_TRAIN_MOE_H
#define CT_TRAIN_MOE_H

#include "models/catalog.h"
#include "models/collective.h"
#include "models/train_plan.h"

/* The routed FFN of one MoE layer, one GPU, one micro-batch. */
typedef struct moe_ffn_cost {
    double fwd, bwd;           /* compute: router, shared and routed experts, permutes */
    double a2a_fwd, a2a_bwd;   /* all-to-all (dispatch + combine), before any overlap */
    double expert_rows;        /* rows of one local expert's GEMMs on the busiest GPU */
    double local_experts;      /* experts one GPU holds (experts / ep) */
} moe_ffn_cost;

/* tokens: the micro-batch's tokens on this GPU before the tp split
 * (micro_batch * seq_len / cp). The plan's defaults applied. */
void moe_ffn_costs(const llm_spec *m, const train_plan *p, const fabric *f, double tokens,
                   moe_ffn_cost *c);

/* Expected number of groups (nodes, each holding experts/groups of the
 * experts) that a token's k experts fall in under balanced routing: the
 * copies of a token the flex dispatcher sends through the NICs. */
double train_moe_groups_hit(double experts, double k, double groups);

/* Device idle time per forward pass of one MoE layer that the dispatcher's
 * host synchronisation costs (train_plan.h, moe_dispatcher): 0 for flex;
 * under alltoall the host waits for the tokens per expert, so the device's
 * queue is empty when the host enqueues the dispatch all-to-all, and the
 * device waits for that enqueue: the node's collective launch and host
 * enqueue time (catalog coll-launch-latency, node_spec.coll_launch_s). */
double train_moe_dispatch_sync_s(const train_plan *p, const fabric *f);

/* A GEMM of the layers under the plan's precision. In FP8 or FP4 it runs
 * at that peak with the GEMM's fixed cost (pipeline fill, epilogue:
 * latency, not tensor-core work) unchanged in time, so the size at which
 * a GEMM reaches half its efficiency grows with the peak: gemm_half_dim x
 * (low-precision peak / BF16 peak). */
double train_gemm_s(const gpu_spec *g, const train_plan *p, double m, double n, double k);

/* Bytes of HBM traffic per element quantized under the plan's precision:
 * the FP8 recipe's (models/stack.c, fp8_cast_bytes), or under FP4 the same
 * count for FP4 elements with their block scales (fp4_element_bytes):
 * NVFP4's per-tensor FP32 scale needs an amax pass before the cast (two
 * reads), MXFP4's power-of-two block scales none (one). 0 in BF16. */
double train_cast_bytes_per_elem(const train_plan *p);

/* One collective of `bytes` over `ranks` GPUs, per_node of them in a node,
 * conc such groups leaving a node at once: coll_time's seconds, 0 for one
 * rank or nothing to send. */
double train_coll_s(const fabric *f, coll_op op, double bytes, int ranks, int per_node, int conc);

/* GPUs that reach one another over NVLink: the fabric's NVLink domain
 * (fabric_domain_gpus: the node, or a rack of trays such as GB200 NVL72's
 * 72 GPUs over 18 trays of 4), 8 without a node. Where the step model
 * places a TP, CP, DP or pipeline group, this is the unit coll_group's
 * ranks_per_node and concurrent_per_node count in (models/collective.h). */
int train_domain_gpus(const fabric *f);

/* Ranks of a communicator of `ranks` GPUs at stride `stride` that share a
 * group of gpn consecutive GPUs (a node, or an NVLink domain). */
int train_per_node(int ranks, int stride, int gpn);

#endif
