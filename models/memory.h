/*
 * memory: bytes one GPU holds during a training step, and whether they fit.
 *
 * Per GPU of each pipeline stage:
 *   weights     2 bytes per parameter held (bf16/fp16); under FP8, plus the
 *               FP8 copies a stack caches (fp8-weight-cache), or with FP8
 *               primary weights (stack fp8-param) only the FP8 weight and
 *               its transpose (docs/software-stacks.md, "Memory"). Under FSDP without
 *               pipelining a GPU keeps only two gathered layers in bf16 (the
 *               one running and the one prefetched; its shard is the fp32
 *               master copy in the optimizer state); with pipelining the
 *               stage's weights stay gathered for the step.
 *   grads       train_grad_bytes() per parameter (fp32 accumulation, fp16
 *               under fp16 training), 1/dp of them under ZeRO-2 and FSDP
 *               without pipelining. A stack with grad-reduce-bf16 holds a
 *               bf16 buffer (2 bytes, sharded the same way) and the
 *               optimizer's fp32 copy of its gradients (4 bytes, sharded as
 *               the optimizer state): Megatron Core's distributed optimizer,
 *               4 + 16/d bytes per parameter for 16-bit gradients.
 *   optimizer   optimizer_state_bytes per parameter (Adam: fp32 master,
 *               first and second moments = 12), 1/dp under ZeRO-1/2 and FSDP.
 *               "dp" here is dp·cp: context-parallel ranks hold the same
 *               weights and share the sharding.
 *   activations per layer and micro-batch, following Korthikanti et al.,
 *               "Reducing Activation Recomputation in Large Transformer
 *               Models" (2022), Table 2, generalised to GQA and gated FFNs
 *               and without dropout masks (modern LLMs train without
 *               dropout): norm inputs and outputs on the hidden state
 *               (replicated over tp unless sequence parallel), Q, K, V, the
 *               attention output and FFN intermediates (split over tp), and
 *               with unfused attention 5·heads·s bytes per token of scores,
 *               softmax and dropout mask. With fused attention the kernel
 *               keeps only its output (already counted) and a log-sum-exp
 *               per row and head (negligible): no s×s term, and an MHA
 *               layer with a 4h GeLU FFN holds 32·s·b·h bytes without tp,
 *               Korthikanti's 34 less the 2 of dropout masks. Selective
 *               recompute of the
 *               attention kind keeps only the norm inputs, Q, K, V, the
 *               attention output and the FFN's first output; of the layers
 *               kind, every other layer keeps only its input. Full
 *               recompute keeps only each layer's input plus one layer's
 *               working set. A 1F1B stage i holds min(m, p-i) micro-batches
 *               in flight; the interleaved schedule multiplies the first
 *               stage's by 1 + (p-1)/(p·v) (same paper, section 4.2.3).
 *   other       on the last stage, 4 bytes per tp-local logit: the one
 *               fp32 copy the loss keeps for its backward (Megatron-LM's
 *               vocab-parallel cross-entropy upcasts the logits and turns
 *               the softmax into the gradient in place; torchtitan frees
 *               the bf16 logits before the backward and keeps fp32
 *               log-probabilities; llm-foundry's fused cross-entropy keeps
 *               the bf16 logits and writes a bf16 gradient, 2 + 2);
 *               and reserved bytes (CUDA context, NCCL buffers, allocator
 *               slack).
 * The busiest stage is reported.
 */
#ifndef CT_MEMORY_H
#define CT_MEMORY_H

#include <stddef.h>

#include "models/catalog.h"
#include "models/train_plan.h"

typedef struct memory_breakdown {
    double weights_bytes, grads_bytes, optimizer_bytes, activations_bytes, other_bytes;
    double total_bytes;              /* per GPU, the busiest pipeline stage */
} memory_breakdown;

/* Layers of each pipeline stage: first, middle and last (equal when pp=1). */
typedef struct mem_layout {
    int first, mid, last;
} mem_layout;

/* Estimate the busiest stage of plan p (defaults already applied) with
 * model parameters q. v is the interleaving factor in use. Fills out and
 * returns 1 when it fits the GPU's HBM, 0 when not. */
int mem_estimate(const llm_spec *m, const train_plan *p, int v, const mem_layout *lay,
                 const gpu_spec *g, const train_params *q, memory_breakdown *out);

/* Activation bytes one layer keeps for one micro-batch on one GPU (not
 * counting full recompute, which keeps only the layer input). */
double mem_layer_activation_bytes(const llm_spec *m, const train_plan *p);

/* Parameters one GPU of a stage with n layers holds (first, last: whether
 * it is the first or last stage), split by tp; *expert gets the routed
 * experts' weights it holds, split by ep*etp (0 for a dense model). The
 * last stage holds the MTP modules. */
double mem_stage_params(const llm_spec *m, const train_plan *p, int n, int first, int last,
                        double *expert);

/* "needs 93.1 GB per GPU, H100-SXM5-80GB has 80 GB; try recompute=full or
 * pp=16 dp=4": tries recompute=full, ZeRO-1, FSDP, micro-batch 1, pp x2,
 * tp x2 (within a node of node_gpus GPUs; 0 = 8), pp x4, on the same GPUs
 * (pp and tp take theirs from dp), each valid for the model and the global
 * batch, and names the first two the memory model says fit. */
void mem_explain(const llm_spec *m, const train_plan *p, int v, const gpu_spec *g, int node_gpus,
                 const train_params *q, const memory_breakdown *mb, char *why, size_t len);

/* Even-as-possible split of layers over pp stages when the first stage also
 * carries embed_cost and the last out_cost (in layers' worth of time): the
 * smallest busiest-stage load. Returns that load (layers plus extra), and
 * the stage sizes in lay. Surplus capacity is taken from the first stage,
 * which holds the most activations. */
double mem_pp_layout(int layers, int pp, double embed_cost, double out_cost, mem_layout *lay);

#endif
