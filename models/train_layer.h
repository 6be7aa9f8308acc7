/*
 * train_layer: the cost of one transformer layer of a training step on one
 * GPU for one micro-batch (b sequences of s tokens, s/cp of them on this
 * GPU), dense or mixture-of-experts (the routed FFN: models/train_moe), under
 * the plan's software stack. models/training builds the step from it.
 *
 *   layer = GEMMs (models/gpu roofline, shapes split by tp)
 *         + attention core (fused: causal FLOPs at the GPU's attention
 *           efficiency of each pass, models/gpu.h; unfused:
 *           batched GEMMs over the full square plus the memory traffic of
 *           softmax and dropout on the scores)
 *         + elementwise (norms, residuals, activation, rotary; memory-bound,
 *           hidden-state work replicated over tp unless sequence parallel)
 *         + exposed TP collectives (2 all-reduces per pass, or 2
 *           all-gathers + 2 reduce-scatters with sequence parallelism),
 *           sized and timed by models/collective on the node's NVLink
 *         + exposed ring-attention K/V traffic under cp (each hop hides
 *           behind one block of attention)
 *   passes: forward, backward (2x GEMMs, attn_bwd_factor x attention, 2x
 *           elementwise), plus recomputation: a whole forward (full), half
 *           the layers' forwards (selective=LAYERS) or the attention core
 *           (unfused) and elementwise ops (selective=ATTENTION).
 *
 * Pure functions of plain structs; a layer costs a few roofline and
 * collective-model calls.
 */
#ifndef CT_TRAIN_LAYER_H
#define CT_TRAIN_LAYER_H

#include "models/catalog.h"
#include "models/collective.h"
#include "models/train_plan.h"

/* One layer, one GPU, one micro-batch (seconds). */
typedef struct train_layer_cost {
    double fwd;            /* compute of one forward pass */
    double bwd;            /* compute of the backward pass */
    double recompute;      /* extra compute of recomputation */
    double comm_fwd;       /* exposed TP/CP communication, forward */
    double comm_bwd;       /* exposed TP/CP communication, backward (+ recompute) */
    double hidden_comm;    /* TP communication overlapped with compute */
    double ep_comm;        /* exposed expert-parallel all-to-all, all passes */
    double gaps;           /* kernel gaps per micro-batch */
    double host;           /* the stack's layer-overhead: the GPU waiting on the host */
} train_layer_cost;

/* Which FFN a layer runs: a dense one, or a MoE layer's routed experts. */
typedef enum train_layer_kind { TRAIN_LAYER_DENSE, TRAIN_LAYER_MOE } train_layer_kind;

/* The layer's whole time on the critical path: compute of every pass,
 * exposed TP/CP and expert-parallel communication, host-bound time. */
double train_layer_total(const train_layer_cost *c);

/* Cost of one layer of `kind` for one micro-batch on one GPU of fabric f
 * under plan p (defaults applied, checked) and software figures q. */
void train_layer_costs(const llm_spec *m, const train_plan *p, const fabric *f,
                       const train_params *q, train_layer_kind kind, train_layer_cost *c);

/* FLOPs per token the GPUs execute (tf_hw_flops_per_token), with per-op
 * checkpointing's recomputed matmuls in place of the attention core. */
double train_layer_hw_flops_per_token(const llm_spec *m, const train_plan *p);

#endif
