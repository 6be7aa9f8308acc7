/*
 * training: one training step of a decoder, dense or mixture-of-experts
 * (the routed FFN of a MoE layer: models/train_moe.c; docs/moe-training.md),
 * on a parallel plan.
 *
 * The step is built bottom-up from one transformer layer on one GPU for one
 * micro-batch (b sequences of s tokens, s/cp of them on this GPU):
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
 *   t_mb  = busiest stage per micro-batch: its layers x layer, where the
 *           output layer and loss weigh as their time does on the last
 *           stage and stages are as even as whole layers allow.
 *   step  = m·t_mb                               compute + exposed TP/CP
 *         + (p-1)/v·t_mb + 2v sends per micro-batch
 *                                                pipeline bubble (1F1B or
 *                                                interleaved; Narayanan
 *                                                et al., SC'21, 2.2)
 *         + exposed DP over dp·cp GPUs: all-reduce (none), reduce-scatter
 *           + all-gather (ZeRO-1/2, FSDP with pp > 1) beyond what the last
 *           micro-batch's backward and the first one's forward hide; FSDP
 *           with pp = 1 gathers each layer before its forward and again
 *           before its backward and reduce-scatters its gradient, every
 *           micro-batch, one layer ahead; hidden traffic still costs
 *           overlap_slowdown of its time
 *         + optimizer (memory-bound over the parameters a GPU updates)
 *         + other (kernel gaps, the stack's host-bound time per layer
 *           and micro-batch, per-step host work)
 *   m = global_batch / (dp·micro_batch) micro-batches per pipeline.
 *
 * Hardware efficiencies come from the catalog (gpu_spec eff_gemm,
 * gemm_half_dim, eff_attention, eff_hbm, eff_sustained; the collective
 * model's node and NIC figures); software figures from train_params.
 *
 * Cost: about 20 collective-model calls and a loop over candidate
 * interleaving factors with a memory estimate each: a few microseconds.
 * An auto micro-batch (micro_batch 0) repeats that for each divisor of the
 * sequences per pipeline up to the first that does not fit, at most
 * MICRO_AUTO_MAX times.
 */
#include "models/training.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/gpu.h"
#include "models/memory.h"
#include "models/train_dp_bytes.h"
#include "models/train_moe.h"
#include "models/transformer.h"

/* ---- Plan ----------------------------------------------------------------- */

/* Fraction of layers recomputed whole under the plan's recompute mode. */
static double layer_recompute_fraction(const train_plan *p) {
    if (p->recompute == RECOMPUTE_FULL) return 1;
    if (p->recompute == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_LAYERS) return 0.5;
    return 0;
}

/* Under per-op checkpointing (SELECTIVE_OPS) wo runs again when eager
 * checkpointing replays the block, or when no saved reduce-scatter output
 * holds the residual after attention (no sequence parallelism); see
 * tf_layer_sac_ops_gemms. */
static int sac_ops_with_wo(const train_plan *p) {
    return stack_elementwise_parse(p->stack.elementwise) == ELEM_EAGER || !p->sequence_parallel;
}

/* FLOPs per token the GPUs execute (tf_hw_flops_per_token), with per-op
 * checkpointing's recomputed matmuls in place of the attention core. */
static double hw_flops_per_token(const llm_spec *m, const train_plan *p) {
    if (p->recompute == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_MODULES)
        return tf_hw_flops_per_token(m, p->seq_len, RECOMPUTE_NONE, 0);   /* no GEMM runs again */
    if (p->recompute != RECOMPUTE_SELECTIVE || p->selective != SELECTIVE_OPS)
        return tf_hw_flops_per_token(m, p->seq_len, p->recompute,
                                     p->recompute == RECOMPUTE_SELECTIVE ? layer_recompute_fraction(p) : 0);
    tf_gemm gm[3];
    int n = tf_layer_sac_ops_gemms(m, 1, 1, sac_ops_with_wo(p), gm);
    double flops = 0;
    for (int i = 0; i < n; i++) flops += 2 * gm[i].n * gm[i].k;
    return tf_hw_flops_per_token(m, p->seq_len, RECOMPUTE_NONE, 0) + m->layers * flops;
}

/* ---- Kernels under the stack ---------------------------------------------- */

/* FP8 (FP4) casts of one layer's n GEMM operands per micro-batch: the
 * forward casts each GEMM's input (and its weight, unless the stack keeps
 * low-precision weight copies), the backward each output gradient.
 * Returns the forward's time; *bwd gets the backward's. */
static double fp8_cast_s(const gpu_spec *g, const train_plan *p, const tf_gemm *gm, int n, double *bwd) {
    *bwd = 0;
    double per = train_cast_bytes_per_elem(p);
    if (!(per > 0)) return 0;
    double in = 0, out = 0, w = 0;
    for (int i = 0; i < n; i++) {
        in += gm[i].m * gm[i].k;
        out += gm[i].m * gm[i].n;
        w += gm[i].k * gm[i].n;
    }
    *bwd = gpu_memory_s(g, out * per);
    return gpu_memory_s(g, (in + (p->stack.fp8_weight_cache ? 0 : w)) * per);
}

/* FlashAttention-3 uses Hopper's asynchronous tensor-core instructions
 * (wgmma, TMA): H100, H200, H800, H20. Elsewhere a flash3 stack runs
 * FlashAttention-2. */
static int gpu_is_hopper(const gpu_spec *g) { return strcmp(g->arch, "hopper") == 0; }

/* Fused attention pass of `flops`: the GPU's FlashAttention-2 efficiency
 * for that pass (gpu_attention_pass_s), or under flash3 on Hopper 1.5x
 * that, no higher than 75% of the peak (Shah et al., "FlashAttention-3",
 * 2024, abstract: 1.5-2.0x FlashAttention-2's speed in FP16/BF16, up to
 * 740 TFLOP/s = 75% of H100's peak; we take the low end). */
static double fused_attention_s(const gpu_spec *g, const train_plan *p, double flops, gpu_attn_pass pass) {
    double t = gpu_attention_pass_s(g, p->precision, flops, pass);
    if (p->attn_kernel != ATTN_FLASH3 || !gpu_is_hopper(g) || !(t > 0)) return t;
    double floor_s = flops / (0.75 * gpu_peak_flops(g, PREC_BF16));
    return fmax(t / 1.5, floor_s);
}

/* Attention core of one layer per micro-batch, forward (returned) and
 * backward (*bwd): queries on this GPU against all s keys. */
static double attention_s(const gpu_spec *g, const train_plan *p, const train_params *q,
                          const tf_dims *dp, double tokens, double attended, double *bwd) {
    const tf_dims d = *dp;
    double b = p->micro_batch, s = p->seq_len;
    const double act = 2;
    double heads = d.heads / p->tp;
    double attn_f, attn_b;
    if (p->attn_unfused) {
        /* Attention stays bf16 under FP8 (Transformer Engine's DotProductAttention
         * and torchao alike quantize only the linear layers). */
        precision ap = p->precision == PREC_FP8 || p->precision == PREC_FP4 ? PREC_BF16 : p->precision;
        double batch = b * heads;
        double mm = gpu_gemm_s(g, ap, tokens / b, s, d.head_dim, batch)   /* QK^T */
                  + gpu_gemm_s(g, ap, tokens / b, d.head_dim, s, batch);  /* PV */
        double scores = tokens * heads * s;
        /* Unfused eager kernels (attention="unfused" in a stack) also scale
         * and mask in passes of their own: a read and a write each. */
        double extra = p->attn_kernel == ATTN_UNFUSED ? 4 * act : 0;
        double mem = gpu_memory_s(g, scores * (tf_unfused_score_bytes(act) + extra));
        attn_f = mm + mem;
        /* Backward: dP and dV products, dK and dQ products; dropout and
         * softmax backward read the gradient, mask and probabilities and
         * write one gradient each: ~19 bytes per score against 13. */
        attn_b = 2 * mm + mem * 19.0 / 13.0;
    } else {
        /* QK^T over qk_dim and PV over v_dim per head (head_dim both,
         * except under MLA); windowed layers attend to fewer keys
         * (tf_mean_attended, scaled on the causal count). */
        double flops = 2 * tokens * s * (d.qk_dim + d.v_dim) * heads * tf_causal_fraction(s);
        if (attended < s) flops *= attended / s;
        /* Causal-masked kernels: the whole layer, or under (load-balanced)
         * context parallelism the first ring step's block, 1/cp of the
         * work; the other steps' blocks are unmasked (cp_costs). The
         * backward's FLOPs are attn_bwd_factor times the forward's. */
        double causal = p->cp > 1 ? 1.0 / p->cp : 1;
        attn_f = fused_attention_s(g, p, flops * causal, GPU_ATTN_FWD_CAUSAL)
               + fused_attention_s(g, p, flops * (1 - causal), GPU_ATTN_FWD_FULL);
        attn_b = fused_attention_s(g, p, q->attn_bwd_factor * flops, GPU_ATTN_BWD);
    }

    *bwd = attn_b;
    return attn_f;
}

/* Elementwise work of one layer's forward per micro-batch: hidden-state
 * work is replicated over tp unless SP; as fused kernels or eager ops, as
 * the stack runs them (tf_layer_elementwise counts both). *extra_kernels
 * gets the kernels eager ops launch beyond the fused count that
 * kernels_per_layer holds. */
static double elementwise_s(const llm_spec *m, const train_plan *p, const gpu_spec *g, double tokens,
                            double *extra_kernels) {
    tf_elementwise ew;
    tf_layer_elementwise(m, 2, &ew);
    int eager = stack_elementwise_parse(p->stack.elementwise) == ELEM_EAGER;
    double tp = p->tp;
    *extra_kernels = eager ? ew.kernels_eager - ew.kernels : 0;
    return gpu_memory_s(g, tokens * ((eager ? ew.hidden_bytes_eager : ew.hidden_bytes)
                                         / (p->sequence_parallel ? tp : 1)
                                     + (eager ? ew.split_bytes_eager : ew.split_bytes) / tp));
}

/* ---- Context parallelism --------------------------------------------------- */

/* What context parallelism adds to one layer per micro-batch: exposed
 * K/V traffic of a forward pass and of the backward, and the merge work of
 * each ring step (memory-bound, added to compute). */
typedef struct cp_cost {
    double comm_fwd, comm_bwd;   /* exposed: one forward pass; the backward */
    double merge_fwd, merge_bwd; /* online-softmax merges and gradient sums */
} cp_cost;

/* Bytes per element of the ring's running sums: the partial output and the
 * K/V/Q gradients accumulate in fp32 (PyTorch context_parallel,
 * _cp_options.convert_to_f32; Transformer Engine's CP likewise corrects its
 * output in fp32). A merge reads the sum (4) and the block's bf16 result
 * (2) and writes the sum (4). */
#define CP_SUM_BYTES 4.0
#define CP_MERGE_BYTES 10.0

/* Context parallel (ring attention: Liu et al., "Ring Attention with
 * Blockwise Transformers", 2023), causal load-balanced: each of the cp
 * ranks holds sequence chunks i and 2cp-1-i, so each of its cp steps is
 * one equal block of attention (its share / cp). K and V columns per GPU:
 * the kv heads over tp (at least one head), or every query head when the
 * stack repeats K and V before the kernel (torchtitan's repeat_kv).
 *   ring       (Transformer Engine p2p; PyTorch's alltoall rotater): cp-1
 *              hops of K,V, each hidden behind one block; the backward's
 *              hops carry K,V and dK,dV.
 *   allgather  (PyTorch's default rotate method, _AllGatherRotater): one
 *              all-gather of every rank's K,V per pass, waited for after
 *              the first block, so only that block hides it; the backward
 *              gathers again, and passes fp32 dK,dV round the ring
 *              (all-to-all hops), each behind one block.
 * Either way the last dK,dV hop follows the last block with nothing left
 * to hide behind. Each step after the first merges its block into the
 * running output by log-sum-exp (forward) and adds its dQ, dK, dV into
 * the fp32 sums (backward). docs/context-parallel.md. */
static cp_cost cp_costs(const train_plan *p, const fabric *f, const tf_dims *d, double tokens,
                        double attn_f, double attn_b) {
    cp_cost c = { 0, 0, 0, 0 };
    if (p->cp <= 1) return c;
    int gpn = train_domain_gpus(f);
    double tp = p->tp, cp = p->cp, act = 2, steps = cp - 1;
    double q_cols = d->q_dim / tp;
    double kv_cols = p->stack.kv_repeat ? q_cols : fmax(d->kv_dim / tp, d->head_dim);
    double kv = tokens * 2 * kv_cols;                 /* K and V elements of one chunk */
    double blk_f = attn_f / cp, blk_b = attn_b / cp;
    int same = p->tp * p->cp <= gpn;
    double hop_g;                                    /* one dK,dV hop */
    if (p->stack.cp_allgather) {
        int rpn = train_per_node(p->cp, p->tp, gpn);
        double ag = train_coll_s(f, COLL_ALLGATHER, cp * kv * act, p->cp, rpn, gpn / rpn);
        hop_g = p2p_time_s(f, kv * CP_SUM_BYTES, same, gpn);
        c.comm_fwd = fmax(0, ag - blk_f);
        c.comm_bwd = fmax(0, ag - blk_b) + steps * fmax(0, hop_g - blk_b);
    } else {
        double hop_f = p2p_time_s(f, kv * act, same, gpn);
        double hop_b = p2p_time_s(f, 2 * kv * act, same, gpn);
        hop_g = p2p_time_s(f, kv * act, same, gpn);
        c.comm_fwd = steps * fmax(0, hop_f - blk_f);
        c.comm_bwd = steps * fmax(0, hop_b - blk_b);
    }
    c.comm_bwd += hop_g;
    const gpu_spec *g = f->gpu;
    c.merge_fwd = gpu_memory_s(g, steps * tokens * q_cols * CP_MERGE_BYTES);
    c.merge_bwd = gpu_memory_s(g, steps * (tokens * q_cols + kv) * CP_MERGE_BYTES);
    return c;
}

/* torchtitan's per-op selective checkpointing (SELECTIVE_OPS): the
 * matmuls it runs again in the backward (tf_layer_sac_ops_gemms), with the
 * FP8 casts of their inputs and weights, which the policy does not save
 * either (it saves only the amax, a read this ignores). */
static double sac_ops_s(const llm_spec *m, const train_plan *p, const gpu_spec *g, double tokens) {
    tf_gemm gm[3];
    int n = tf_layer_sac_ops_gemms(m, tokens, p->tp, sac_ops_with_wo(p), gm);
    double t = 0, cast = 0;
    for (int i = 0; i < n; i++) {
        t += train_gemm_s(g, p, gm[i].m, gm[i].n, gm[i].k);
        cast += gm[i].m * gm[i].k + gm[i].k * gm[i].n;
    }
    if (p->precision == PREC_FP8) t += gpu_memory_s(g, cast * fp8_cast_bytes((fp8_recipe)p->fp8_recipe));
    return t;
}

/* ---- One layer ------------------------------------------------------------ */

typedef struct layer_cost {
    double fwd;            /* compute of one forward pass */
    double bwd;            /* compute of the backward pass */
    double recompute;      /* extra compute of recomputation */
    double comm_fwd;       /* exposed TP/CP communication, forward */
    double comm_bwd;       /* exposed TP/CP communication, backward (+ recompute) */
    double hidden_comm;    /* TP communication overlapped with compute */
    double ep_comm;        /* exposed expert-parallel all-to-all, all passes */
    double gaps;           /* kernel gaps per micro-batch */
    double host;           /* the stack's layer-overhead: the GPU waiting on the host */
} layer_cost;

/* Which FFN a layer runs: a dense one, or a MoE layer's routed experts. */
typedef enum layer_kind { LAYER_DENSE, LAYER_MOE } layer_kind;

static double layer_total(const layer_cost *c) {
    return c->fwd + c->bwd + c->recompute + c->comm_fwd + c->comm_bwd + c->ep_comm + c->host;
}

/* The layer's GEMMs forward (backward = input gradient + weight gradient,
 * same shapes: twice) and their FP8/FP4 casts (*cast_f, *cast_b). A dense
 * model without MLA: QKV, output, FFN in and out (tf_layer_gemms);
 * otherwise the attention's GEMMs (tf_attn_gemms) and, in a dense layer,
 * its FFN's; a MoE layer's FFN is moe_ffn_costs'. */
static double layer_gemm_s(const llm_spec *m, const train_plan *p, const gpu_spec *g, layer_kind kind,
                           double tokens, double *cast_f, double *cast_b) {
    tf_gemm gm[TF_ATTN_GEMMS_MAX + 2];
    int n = 4;
    if (!tf_is_moe(m) && m->kv_lora_rank <= 0) {
        tf_layer_gemms(m, tokens, p->tp, gm);
    } else {
        n = tf_attn_gemms(m, tokens, p->tp, gm);
        if (kind == LAYER_DENSE) {
            tf_ffn_gemms(m, tokens, m->ffn_hidden, p->tp, gm + n);
            n += 2;
        }
    }
    double gemm = 0;
    for (int i = 0; i < n; i++) gemm += train_gemm_s(g, p, gm[i].m, gm[i].n, gm[i].k);
    *cast_f = fp8_cast_s(g, p, gm, n, cast_b);
    return gemm;
}

/* MLA's up-projections of one forward (the GEMMs out of the query and KV
 * latents), which selective recomputation runs again from the cached
 * latents (DeepSeek-V3 section 3.2.3). 0 without MLA. */
static double mla_up_s(const llm_spec *m, const train_plan *p, const gpu_spec *g, double tokens) {
    if (m->kv_lora_rank <= 0) return 0;
    tf_gemm gm[TF_ATTN_GEMMS_MAX];
    int n = tf_attn_gemms(m, tokens, p->tp, gm);
    double t = 0;
    for (int i = 0; i < n; i++)
        if (gm[i].k == m->kv_lora_rank || (m->q_lora_rank > 0 && gm[i].k == m->q_lora_rank))
            t += train_gemm_s(g, p, gm[i].m, gm[i].n, gm[i].k);
    return t;
}

/* Compute's slowdown while overlapped all-to-all kernels hold comm_sms of
 * the GPU's SMs (stack comm-sms): the GEMMs beside them are launched on the
 * rest (DeepSeek-V3 sections 3.2.2 and 3.5.1; DeepGEMM's set_num_sms and
 * DeepEP's Buffer.set_num_sms split the SMs so), so the compute of a chunk
 * that runs beside communication takes sms / (sms - comm_sms) of its time.
 * 1 when the stack names no partition or the GPU's SM count is unknown. */
static double sm_partition(const train_plan *p, const gpu_spec *g) {
    int comm = p->stack.comm_sms;
    if (comm <= 0 || g->sms <= comm) return 1;
    return (double)g->sms / (g->sms - comm);
}

/* The all-to-all of a MoE layer against compute (moe_overlap): on the
 * critical path, or hidden behind the compute of the micro-batch whose
 * chunk runs beside it (the layer's forward, backward and recompute),
 * what exceeds it exposed. Hidden traffic slows compute: by the stack's SM
 * partition (sm_partition) where it names one, else by overlap_slowdown of
 * its time, as other overlapped collectives do. */
static void ep_exposure(const train_plan *p, const train_params *q, const gpu_spec *g,
                        const moe_ffn_cost *mc, double whole, layer_cost *c) {
    double a2a = mc->a2a_fwd * (1 + whole) + mc->a2a_bwd;
    if (!(a2a > 0)) return;
    c->ep_comm = a2a;
    if (p->moe_overlap == MOE_OVERLAP_NONE) return;
    double part = sm_partition(p, g);
    c->fwd *= part;
    c->bwd *= part;
    c->recompute *= part;
    c->ep_comm = fmax(0, a2a - (c->fwd + c->bwd + c->recompute));
    if (part == 1) c->bwd += (a2a - c->ep_comm) * q->overlap_slowdown;
}

static void layer_costs(const llm_spec *m, const train_plan *p, const fabric *f,
                        const train_params *q, layer_kind kind, layer_cost *c) {
    const gpu_spec *g = f->gpu;
    int gpn = train_domain_gpus(f);
    tf_dims d;
    tf_dims_of(m, &d);
    double tp = p->tp, cp = p->cp, b = p->micro_batch, s = p->seq_len;
    double tokens = b * s / cp;
    const double act = 2;
    memset(c, 0, sizeof *c);

    double cast_b, cast_f, gemm = layer_gemm_s(m, p, g, kind, tokens, &cast_f, &cast_b);
    moe_ffn_cost mc = { 0, 0, 0, 0, 0, 0 };
    if (kind == LAYER_MOE) moe_ffn_costs(m, p, f, tokens, &mc);

    /* Attention core: queries on this GPU against all s keys. */
    double attn_b, attn_f = attention_s(g, p, q, &d, tokens, tf_mean_attended(m, s), &attn_b);

    double extra_kernels, elem_f = elementwise_s(m, p, g, tokens, &extra_kernels);

    cp_cost cpc = cp_costs(p, f, &d, tokens, attn_f, attn_b);

    c->fwd = gemm + cast_f + attn_f + cpc.merge_fwd + elem_f + mc.fwd;
    c->bwd = 2 * gemm + cast_b + attn_b + cpc.merge_bwd + 2 * elem_f + mc.bwd;
    /* Recomputation: whole layers (full, or every other one under
     * selective=LAYERS), or the attention core (unfused only: fused kernels
     * recompute it inside their backward anyway) and the elementwise ops. */
    double whole = layer_recompute_fraction(p);
    c->recompute = whole * c->fwd;
    if (p->recompute == RECOMPUTE_SELECTIVE && whole == 0)
        c->recompute = elem_f + (p->attn_unfused ? attn_f : 0) + mla_up_s(m, p, g, tokens);
    int sac_ops = p->recompute == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_OPS;
    if (sac_ops) c->recompute = elem_f + sac_ops_s(m, p, g, tokens);
    if (p->recompute == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_MODULES) c->recompute = elem_f;

    /* Tensor parallel: per pass 2 all-reduces, or 2 all-gathers and 2
     * reduce-scatters of the full activation (nccl-tests size convention). */
    double t_tp = 0, t_ag = 0;
    if (p->tp > 1) {
        int rpn = p->tp < gpn ? p->tp : gpn;
        double bytes = tokens * d.h * act;
        t_ag = train_coll_s(f, COLL_ALLGATHER, bytes, p->tp, rpn, gpn / rpn);
        if (p->sequence_parallel)
            t_tp = 2 * (t_ag + train_coll_s(f, COLL_REDUCESCATTER, bytes, p->tp, rpn, gpn / rpn));
        else
            t_tp = 2 * train_coll_s(f, COLL_ALLREDUCE, bytes, p->tp, rpn, gpn / rpn);
    }
    /* Per-op checkpointing saves the reduce-scatters' outputs, not the
     * all-gathers': the backward gathers both sequence-parallel inputs again. */
    double tp_passes_bwd = 1 + whole + (sac_ops && p->sequence_parallel ? 2 * t_ag / t_tp : 0);
    /* Decomposed overlap (Transformer Engine userbuffers, Wang et al.,
     * ASPLOS'23) splits each GEMM into tp chunks and hides each chunk's
     * transfer behind the previous chunk's GEMM: the first stays exposed. */
    double exposed = q->tp_overlap > 0 ? fmax(1 - q->tp_overlap, 1.0 / tp) : 1;
    c->comm_fwd = t_tp * exposed;
    c->comm_bwd = t_tp * tp_passes_bwd * exposed;
    c->hidden_comm = t_tp * (1 + tp_passes_bwd) * (1 - exposed);

    /* Context parallel (cp_costs); a recomputed forward repeats its traffic. */
    c->comm_fwd += cpc.comm_fwd;
    c->comm_bwd += cpc.comm_bwd + whole * cpc.comm_fwd;
    /* Overlapped TP communication slows the GEMMs it runs beside. */
    c->bwd += c->hidden_comm * q->overlap_slowdown;
    ep_exposure(p, q, g, &mc, whole, c);
    c->gaps = (q->kernels_per_layer + extra_kernels) * q->kernel_gap_s * (3 + whole);
    /* Host-bound time per layer per micro-batch (stack layer-overhead): on
     * the critical path of every pipeline slot, bubble slots included. */
    c->host = p->stack.layer_overhead_s;
}

/* ---- Step ----------------------------------------------------------------- */

/* Micro-batch sizes an auto plan tries at most (divisors of the sequences
 * per pipeline, smallest first; each try costs one plan evaluation). Memory
 * ends the search long before this in practice. */
#define MICRO_AUTO_MAX 24

typedef struct step_parts {
    double compute, comm, bubble, dp, opt, other, ep;
} step_parts;

static int fail(train_result *r, const char *why) {
    snprintf(r->why, sizeof r->why, "%s", why);
    return -1;
}

int train_step(const llm_spec *m, const train_plan *p, const fabric *f, train_result *r) {
    return train_step_with(m, p, f, NULL, r);
}

/* The busiest pipeline stage per micro-batch, before the schedule is
 * chosen: its layout, time, the exposed TP/CP communication in it and the
 * parameters one of its GPUs holds. */
typedef struct stage_work {
    layer_cost lc;         /* one layer, one micro-batch */
    mem_layout lay;        /* layers of the first, middle and last stage */
    double t_mb;           /* busiest stage per micro-batch */
    double stage_layers;   /* its load in layers (embedding and output by their time) */
    double compute_mb;     /* of t_mb: compute */
    double comm_mb;        /* of t_mb: exposed TP/CP communication */
    double ep_mb;          /* of t_mb: exposed expert-parallel all-to-all */
    double gaps_mb;        /* kernel gaps and host-bound layer time per micro-batch */
    double par;            /* parameters a GPU of the busiest stage holds (split by tp),
                              routed experts aside */
    double par_exp;        /* routed expert parameters it holds (split by ep*etp) */
    double f_mb, b_mb, w_mb; /* its forward, backward and weight-gradient compute per
                              micro-batch (DualPipe's F, B and W) */
} stage_work;

/* The layer the busiest stage is made of. Dense model: its one layer.
 * MoE: with pipelining a MoE layer (the dense layers lead the first stage,
 * which also carries the embedding; a middle stage is all MoE layers);
 * without, the mean of the model's dense and MoE layers. */
static void stage_layer(const llm_spec *m, const train_plan *p, const fabric *f,
                        const train_params *q, layer_cost *lc, double *t_moe) {
    layer_costs(m, p, f, q, tf_is_moe(m) ? LAYER_MOE : LAYER_DENSE, lc);
    *t_moe = layer_total(lc);
    if (!tf_is_moe(m) || p->pp > 1) return;
    layer_cost dn;
    layer_costs(m, p, f, q, LAYER_DENSE, &dn);
    double a = (double)tf_moe_layers(m) / m->layers, b = 1 - a;
    lc->fwd = a * lc->fwd + b * dn.fwd;
    lc->bwd = a * lc->bwd + b * dn.bwd;
    lc->recompute = a * lc->recompute + b * dn.recompute;
    lc->comm_fwd = a * lc->comm_fwd + b * dn.comm_fwd;
    lc->comm_bwd = a * lc->comm_bwd + b * dn.comm_bwd;
    lc->hidden_comm = a * lc->hidden_comm + b * dn.hidden_comm;
    lc->ep_comm = a * lc->ep_comm + b * dn.ep_comm;
    lc->gaps = a * lc->gaps + b * dn.gaps;
    lc->host = a * lc->host + b * dn.host;
}

/* Parameters of a GPU of the busiest stage (mem_stage_params). */
static void stage_params(const llm_spec *m, const train_plan *p, stage_work *w) {
    if (p->pp == 1) {
        w->par = mem_stage_params(m, p, m->layers, 1, 1, &w->par_exp);
        return;
    }
    double e[3], x[3] = { mem_stage_params(m, p, w->lay.first, 1, 0, &e[0]),
                          mem_stage_params(m, p, w->lay.mid, 0, 0, &e[1]),
                          mem_stage_params(m, p, w->lay.last, 0, 1, &e[2]) };
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (x[i] + e[i] > x[k] + e[k]) k = i;
    w->par = x[k];
    w->par_exp = e[k];
}

/* Lay the layers out over the pipeline stages and time the busiest one. */
static void busiest_stage(const llm_spec *m, const train_plan *p, const fabric *f,
                          const train_params *q, stage_work *w) {
    const gpu_spec *g = f->gpu;
    int gpn = train_domain_gpus(f);
    tf_dims d;
    tf_dims_of(m, &d);
    double tp = p->tp, s = p->seq_len, b = p->micro_batch;
    double tokens = b * s / p->cp;

    double t_moe;
    stage_layer(m, p, f, q, &w->lc, &t_moe);
    double t_layer = layer_total(&w->lc);
    double t_work = t_layer - w->lc.host;   /* what the embedding and loss weigh against */

    /* Output layer and loss on the last stage (vocab-parallel over tp):
     * GEMM forward and backward, fp32 softmax cross-entropy traffic (~12
     * bytes per logit over both passes), and under SP the gather of the
     * final hidden state. Embedding lookup and its gradient on the first. */
    double vloc = d.vocab / tp;
    /* The output layer stays bf16 in every stack (Megatron-Core's output
     * layer is not a Transformer Engine module; torchao's float8
     * conversion skips "output" by default). */
    precision po = p->precision == PREC_FP8 || p->precision == PREC_FP4 ? PREC_BF16 : p->precision;
    double t_out = 3 * gpu_gemm_s(g, po, tokens, vloc, d.h, 1)
                 + gpu_memory_s(g, tokens * vloc * 12);
    if (p->sequence_parallel && p->tp > 1) {
        int rpn = p->tp < gpn ? p->tp : gpn;
        t_out += 2 * train_coll_s(f, COLL_ALLGATHER, tokens * d.h * 2, p->tp, rpn, gpn / rpn);
    }
    /* Multi-token prediction (DeepSeek-V3 section 2.2) on the last stage:
     * per depth, a 2h -> h projection, one more (MoE) layer and the shared
     * output head with its loss again. */
    if (m->mtp_depth > 0)
        t_out += m->mtp_depth * (t_moe + t_out + 3 * train_gemm_s(g, p, tokens, d.h, 2 * d.h));
    double t_emb = gpu_memory_s(g, tokens * d.h * 2 * 3);

    double load;
    if (p->pp == 1) {
        load = mem_pp_layout(m->layers, 1, 0, 0, &w->lay);
    } else {
        /* Embedding and loss counted as pipeline layers (train_plan.h,
         * train_plan_pipeline_extra_slots) take at least a layer's slot. */
        double e = t_emb / t_work, c = t_out / t_work;
        if (train_plan_pipeline_extra_slots(m, p)) e = fmax(e, 1), c = fmax(c, 1);
        load = mem_pp_layout(m->layers, p->pp, e, c, &w->lay);
    }
    w->t_mb = p->pp == 1 ? m->layers * t_layer + t_out + t_emb : load * t_layer;
    w->stage_layers = p->pp == 1 ? m->layers : load;
    w->comm_mb = w->stage_layers * (w->lc.comm_fwd + w->lc.comm_bwd);
    w->ep_mb = w->stage_layers * w->lc.ep_comm;
    double host_mb = w->stage_layers * w->lc.host;
    w->compute_mb = w->t_mb - w->comm_mb - w->ep_mb - host_mb;
    w->gaps_mb = w->stage_layers * w->lc.gaps + host_mb;
    /* DualPipe's W: the weight-gradient half of the backward's GEMM work
     * (the backward is an input-gradient and a weight-gradient GEMM per
     * forward GEMM, models/training.c layer_costs). */
    double fwd_share = w->lc.fwd / (w->lc.fwd + w->lc.bwd + w->lc.recompute);
    w->f_mb = w->compute_mb * fwd_share;
    w->b_mb = w->compute_mb - w->f_mb;
    w->w_mb = 0.5 * fmin(w->b_mb, 2 * w->f_mb);
    stage_params(m, p, w);
}

/* Data-parallel traffic of one step, exposed and hidden behind compute. */
typedef struct dp_cost {
    double exposed, hidden;
} dp_cost;

/* One layer's FSDP gather (*ag, bf16) and gradient reduce-scatter (*rs).
 * With expert parallelism (ep*etp > 1) a layer's routed experts are not
 * dense weights: each GPU holds only its EP rank's experts, sharded over
 * the expert data-parallel group (edp GPUs, ep*etp apart), and gathers and
 * reduces them there; the rest of the layer over dp*cp as before
 * (Megatron-Core 0.15, "Support FSDP with EP for MoE models", MoE README;
 * Megatron-FSDP shards each parameter over its own data-parallel group). */
static void fsdp_layer_colls(const llm_spec *m, const train_plan *p, const fabric *f, double gbytes,
                             int nred, int rpn, int conc, double *ag, double *rs) {
    double tp = p->tp, lp = tf_layer_params(m), routed = 0;
    long span = (long)train_plan_ep(p) * train_plan_etp(p);
    if (span > 1 && m->layers > 0)
        routed = tf_moe_layers(m) * tf_moe_layer_routed_params(m) / m->layers;
    *ag = train_coll_s(f, COLL_ALLGATHER, (lp - routed) / tp * train_dp_param_bytes(p), nred, rpn, conc);
    *rs = train_coll_s(f, COLL_REDUCESCATTER, (lp - routed) / tp * gbytes, nred, rpn, conc);
    if (!(routed > 0)) return;
    int gpn = train_domain_gpus(f), edp = train_plan_edp(p);
    int erpn = train_per_node(edp, (int)span, gpn);
    *ag += train_coll_s(f, COLL_ALLGATHER, routed / span * train_dp_param_bytes(p), edp, erpn, gpn / erpn);
    *rs += train_coll_s(f, COLL_REDUCESCATTER, routed / span * gbytes, edp, erpn, gpn / erpn);
}

/* FSDP without pipelining, per micro-batch: gather each layer before its
 * forward and again before its backward (not again when the stack keeps
 * gathered weights: fsdp_reshard 0), reduce-scatter its gradient after;
 * one layer prefetched ahead of compute (none without fsdp_prefetch: each
 * gather then waits in full). Embedding and output weights are units too. */
static dp_cost dp_fsdp_flat(const llm_spec *m, const train_plan *p, const fabric *f,
                            const stage_work *w, double gbytes, int nred, int rpn, int conc,
                            int nmicro) {
    double tp = p->tp, ag, rs;
    const layer_cost *lc = &w->lc;
    fsdp_layer_colls(m, p, f, gbytes, nred, rpn, conc, &ag, &rs);
    double eo = (tf_embedding_params(m) + tf_output_params(m)) / tp;
    double ag_eo = train_coll_s(f, COLL_ALLGATHER, eo * 2, nred, rpn, conc);
    double rs_eo = train_coll_s(f, COLL_REDUCESCATTER, eo * gbytes, nred, rpn, conc);
    double pre = p->stack.fsdp_prefetch ? 1 : 0;
    double agb = p->stack.fsdp_reshard ? ag : 0;             /* the backward's gather */
    double lf = pre * (lc->fwd + lc->comm_fwd), lb = pre * (lc->bwd + lc->recompute + lc->comm_bwd);
    double L = m->layers;
    double ex = ag_eo + ag                                   /* nothing to hide the first under */
              + (L - 1) * fmax(0, ag - lf)
              + L * fmax(0, agb + rs - lb)
              + rs + rs_eo;                                  /* the last ones after compute */
    double total = ag_eo + rs_eo + L * (ag + agb + rs);
    dp_cost c = { nmicro * ex, nmicro * fmax(0, total - ex) };
    return c;
}

/* Gradient all-reduce (no sharding), or ZeRO-1, and FSDP across pipeline
 * stages (gathered once per step, as Llama 3 did): reduce-scatter the
 * gradients under the last backward, gather the updated bf16 weights under
 * the first forward. ZeRO-2 keeps only its gradient shard, so it
 * reduce-scatters under every micro-batch's backward. */
static dp_cost dp_per_step(const train_plan *p, const fabric *f, const train_params *q,
                           const stage_work *w, double gbytes, int nred, int rpn, int conc,
                           int nmicro) {
    double t_fwd_mb = w->stage_layers * w->lc.fwd;
    double t_bwd_mb = w->stage_layers * (w->lc.bwd + w->lc.recompute);
    double grads = w->par * gbytes;
    dp_cost c;
    if (p->sharding == SHARD_NONE) {
        double ar = train_coll_s(f, COLL_ALLREDUCE, grads, nred, rpn, conc);
        double win = q->dp_overlap * t_bwd_mb;
        c.exposed = fmax(0, ar - win);
        c.hidden = ar - c.exposed;
    } else {
        double rs = train_coll_s(f, COLL_REDUCESCATTER, grads, nred, rpn, conc);
        double ag = train_coll_s(f, COLL_ALLGATHER, w->par * train_dp_param_bytes(p), nred, rpn, conc);
        double times = p->sharding == SHARD_ZERO2 ? nmicro : 1;
        double e1 = times * fmax(0, rs - q->dp_overlap * t_bwd_mb);
        double e2 = fmax(0, ag - q->dp_overlap * t_fwd_mb);
        c.exposed = e1 + e2;
        c.hidden = times * rs + ag - c.exposed;
    }
    return c;
}

/* Data parallel time of one step. Context-parallel ranks hold the same
 * weights, so gradients reduce (and ZeRO/FSDP shard) over dp*cp GPUs, tp
 * apart; hidden traffic still costs overlap_slowdown of its time. */
static double dp_time(const llm_spec *m, const train_plan *p, const fabric *f,
                      const train_params *q, const stage_work *w, int nmicro) {
    int gpn = train_domain_gpus(f);
    double gbytes = train_dp_grad_bytes(p, q);
    int nred = p->dp * p->cp;
    dp_cost c = { 0, 0 };
    if (nred > 1) {
        int rpn = train_per_node(nred, p->tp, gpn);
        int conc = gpn / rpn;
        if (p->sharding == SHARD_FSDP && p->pp == 1)
            c = dp_fsdp_flat(m, p, f, w, gbytes, nred, rpn, conc, nmicro);
        else
            c = dp_per_step(p, f, q, w, gbytes, nred, rpn, conc, nmicro);
    }
    /* Routed experts reduce (and shard) over their expert data-parallel
     * group, ep*etp GPUs apart (Megatron-Core's expert grid etp, ep, edp),
     * beside the dense reduction and under the same backward; FSDP without
     * pipelining moves them layer by layer instead (fsdp_layer_colls). */
    int edp = train_plan_edp(p);
    int flat_ep = p->sharding == SHARD_FSDP && p->pp == 1 && train_plan_ep(p) * train_plan_etp(p) > 1;
    if (w->par_exp > 0 && edp > 1 && !flat_ep) {
        stage_work we = *w;
        we.par = w->par_exp;
        int stride = train_plan_ep(p) * train_plan_etp(p);
        int rpn = train_per_node(edp, stride, gpn);
        dp_cost ce = dp_per_step(p, f, q, &we, gbytes, edp, rpn, gpn / rpn, nmicro);
        c.exposed += ce.exposed;
        c.hidden += ce.hidden;
    }
    return c.exposed + c.hidden * q->overlap_slowdown;
}

/* Pipeline point-to-point send of one micro-batch's activation (split over
 * tp: Megatron's scatter/gather, or sequence parallelism), exposed part. */
static double p2p_send_time(const llm_spec *m, const train_plan *p, const fabric *f,
                            const train_params *q) {
    if (p->pp <= 1) return 0;
    int gpn = train_domain_gpus(f);
    double tokens = (double)p->micro_batch * p->seq_len / p->cp;
    double bytes = tokens * m->hidden * 2 / p->tp;
    int same = (long)p->tp * p->cp * p->dp < gpn;
    return p2p_time_s(f, bytes, same, gpn) * (1 - q->p2p_overlap);
}

/* The pipeline schedule chosen for a step: interleaving factor, its time
 * parts, and the memory of the busiest stage under it. */
typedef struct schedule_pick {
    double step_s;
    step_parts t;
    int v, fits;
    memory_breakdown mem;
} schedule_pick;

/* DualPipe's bubble (DeepSeek-V3, arXiv 2412.19437, Table 2):
 * (PP/2 - 1)(F&B + B - 3W), with F, B and W the busiest stage's forward,
 * full backward and weight-gradient compute per micro-batch and F&B the
 * pair of a forward and a backward chunk run together: their compute adds
 * (the pairing hides communication, not arithmetic), F + B. The pipeline
 * sends of each bubble slot count as in 1F1B. */
static double dualpipe_bubble_s(const train_plan *p, const stage_work *w, double p2p_mb) {
    double fb = w->f_mb + w->b_mb;
    return (p->pp / 2.0 - 1) * (fb + w->b_mb - 3 * w->w_mb + p2p_mb);
}

/* Interleaving factor: given, or the fastest that fits among the
 * schedules the stack runs (stack_runs_interleaved: DeepSpeed's pipeline
 * engine runs 1F1B only). dp_s and opt_s do not depend on it; the bubble
 * and the sends do. */
static void pick_schedule(const llm_spec *m, const train_plan *p, const fabric *f,
                          const train_params *q, const stage_work *w, int nmicro,
                          double dp_s, double opt_s, schedule_pick *out) {
    double t_p2p = p2p_send_time(m, p, f, q);
    int vmax = 1;
    int auto_v = p->virtual_stages == 0 && stack_runs_interleaved(&p->stack);
    if (p->pp > 1 && (auto_v || p->schedule == PP_INTERLEAVED)) {
        vmax = (m->layers + (p->virtual_stages > 1 ? train_plan_pipeline_extra_slots(m, p) : 0)) / p->pp;
        if (vmax < 1) vmax = 1;
        if (nmicro < p->pp) vmax = 1;   /* interleaving needs m >= p micro-batches */
    }
    int vlo = (p->schedule == PP_INTERLEAVED && vmax >= 2) ? 2 : 1, vhi = vmax;
    if (p->virtual_stages > 0) vlo = vhi = p->virtual_stages;

    memset(out, 0, sizeof *out);
    out->step_s = -1;
    out->v = vlo;
    for (int v = vlo; v <= vhi; v++) {
        train_plan pv = *p;
        pv.virtual_stages = v;
        pv.schedule = v > 1 ? PP_INTERLEAVED : p->schedule;
        memory_breakdown mb;
        int fits = mem_estimate(m, &pv, v, &w->lay, f->gpu, q, &mb);
        step_parts sp;
        double p2p_mb = p->pp > 1 ? 2 * v * t_p2p : 0;
        sp.compute = nmicro * w->compute_mb;
        sp.comm = nmicro * w->comm_mb;
        sp.bubble = p->pp > 1 ? (double)(p->pp - 1) / v * (w->t_mb + p2p_mb) + nmicro * p2p_mb : 0;
        if (p->schedule == PP_DUALPIPE)
            sp.bubble = dualpipe_bubble_s(p, w, p2p_mb) + nmicro * p2p_mb;
        sp.ep = nmicro * w->ep_mb;
        sp.dp = dp_s;
        sp.opt = opt_s;
        sp.other = nmicro * w->gaps_mb + q->step_overhead_s;
        double t = sp.compute + sp.comm + sp.bubble + sp.dp + sp.opt + sp.other + sp.ep;
        /* Prefer fitting plans; among equals, the fastest. */
        double best = out->step_s;
        int better = best < 0 || (fits && !out->fits) || (fits == out->fits && t < best * (1 - 1e-9));
        if (better) {
            out->step_s = t;
            out->t = sp;
            out->v = v;
            out->fits = fits;
            out->mem = mb;
        }
    }
}

/* Fill r from the chosen schedule: times, memory, throughput and MFU, and
 * why it does not fit when it does not. */
static void fill_result(const llm_spec *m, const train_plan *p, const fabric *f,
                        const train_params *q, const stage_work *w, int nmicro,
                        const schedule_pick *k, train_result *r) {
    double best = k->step_s, s = p->seq_len;
    const mem_layout *lay = &w->lay;
    r->step_s = best;
    r->t.compute_s = k->t.compute;
    r->t.tp_comm_s = k->t.comm;
    r->t.pp_bubble_s = k->t.bubble;
    r->t.dp_comm_s = k->t.dp;
    r->t.optimizer_s = k->t.opt;
    r->t.other_s = k->t.other;
    r->t.ep_comm_s = k->t.ep;
    r->mem = k->mem;
    r->fits = k->fits;
    r->virtual_stages = k->v;
    r->stage_layers = p->pp == 1 ? m->layers
                                 : (lay->mid > lay->first ? (lay->mid > lay->last ? lay->mid : lay->last)
                                                          : (lay->first > lay->last ? lay->first : lay->last));
    r->bubble_fraction = best > 0 ? k->t.bubble / best : 0;
    r->micro_batches = nmicro;

    long gpus = (long)p->tp * p->pp * p->dp * p->cp;
    r->params = tf_params(m);
    r->active_params = tf_active_params(m);
    r->ep = train_plan_ep(p);
    r->etp = train_plan_etp(p);
    r->schedule = k->v > 1 ? PP_INTERLEAVED : p->schedule == PP_DUALPIPE ? PP_DUALPIPE : PP_1F1B;
    r->tokens_per_step = (double)p->global_batch * s;
    r->model_flops_per_step = r->tokens_per_step * tf_model_flops_per_token(m, s);
    r->hw_flops_per_step = r->tokens_per_step * hw_flops_per_token(m, p);
    r->model_tflops_per_gpu = r->model_flops_per_step / best / gpus / 1e12;
    r->hardware_tflops_per_gpu = r->hw_flops_per_step / best / gpus / 1e12;
    double peak = gpu_peak_flops(f->gpu, p->precision);
    r->mfu = peak > 0 ? r->model_tflops_per_gpu * 1e12 / peak : 0;
    r->tokens_per_s_per_gpu = r->tokens_per_step / best / gpus;
    if (!r->fits) {
        train_plan pv = *p;
        pv.virtual_stages = k->v;
        mem_explain(m, &pv, k->v, f->gpu, f->node ? f->node->gpus : 0, q, &r->mem, r->why,
                    sizeof r->why);
    }
    r->micro_batch = p->micro_batch;
    snprintf(r->stack, sizeof r->stack, "%s", p->stack.name);
}

/* One step of a checked plan whose micro-batch is given (>= 1): time the
 * busiest stage, add data-parallel traffic and the optimizer, pick the
 * pipeline schedule, and report. */
static void step_fixed(const llm_spec *m, const train_plan *p, const fabric *f,
                       const train_params *q, train_result *r) {
    memset(r, 0, sizeof *r);
    int nmicro = p->global_batch / (p->dp * p->micro_batch);
    stage_work w;
    busiest_stage(m, p, f, q, &w);
    double dp_s = dp_time(m, p, f, q, &w, nmicro);
    /* Optimizer over the parameters this GPU updates. */
    double upd = w.par / (p->sharding == SHARD_NONE ? 1 : p->dp * p->cp)
               + w.par_exp / (p->sharding == SHARD_NONE ? 1 : train_plan_edp(p));
    double opt_s = gpu_memory_s(f->gpu, upd * q->optimizer_traffic_bytes);
    schedule_pick k;
    pick_schedule(m, p, f, q, &w, nmicro, dp_s, opt_s, &k);
    fill_result(m, p, f, q, &w, nmicro, &k, r);
}

int train_step_with(const llm_spec *m, const train_plan *plan, const fabric *f,
                    const train_params *qp, train_result *r) {
    if (!r) return -1;
    memset(r, 0, sizeof *r);
    if (!m || !plan || !f) return fail(r, "train_step: missing model, plan or fabric");
    if (!f->gpu || !f->node) return fail(r, "train_step: the fabric has no GPU or node type");
    train_params qd;
    if (qp) qd = *qp;
    else train_params_default(&qd);
    train_plan p = *plan;
    train_plan_model_defaults(&p, m);
    train_plan_defaults(&p);
    /* A named stack's figures replace the software figures of the params;
     * under `auto` they are the params' own (train_plan_auto_stack). */
    if (p.stack_given) {
        qd.tp_overlap = p.stack.tp_overlap;
        qd.dp_overlap = p.stack.dp_overlap;
        qd.p2p_overlap = p.stack.p2p_overlap;
        qd.kernel_gap_s = p.stack.kernel_gap_s;
        qd.step_overhead_s = p.stack.step_overhead_s;
        /* Adam: the fp32 master weight and two moments of the stack's width. */
        if (p.stack.adam_moment_bytes > 0) qd.optimizer_state_bytes = 4 + 2 * p.stack.adam_moment_bytes;
    }
    /* async-tp= overrides the stack: on, TP collectives decomposed and
     * overlapped with their GEMMs (Wang et al., ASPLOS'23; PyTorch async TP
     * with torch.compile: torchtitan experimental.enable_async_tensor_parallel,
     * "Introducing Async Tensor Parallelism in PyTorch", PyTorch forums 2024), one chunk in tp
     * exposed as with Transformer Engine's userbuffers; off, vanilla TP
     * with every collective on the critical path. */
    if (p.async_tp) qd.tp_overlap = p.async_tp > 0 ? 1 : 0;
    qp = &qd;
    if (train_plan_check(m, &p, r->why, sizeof r->why) < 0) return -1;
    if (p.micro_batch > 0) {
        step_fixed(m, &p, f, qp, r);
        return 0;
    }
    /* A stack that fixes the micro-batch count of a pipeline runs
     * microbatches_per_stage x pp of them (torchtitan: as many as stages,
     * pipeline_parallel_microbatches's default), when they divide the
     * sequences per pipeline. */
    int n = p.global_batch / p.dp, tried = 0;
    int nmb = p.stack.microbatches_per_stage * p.pp;
    if (p.pp > 1 && nmb > 0 && n % nmb == 0) {
        p.micro_batch = n / nmb;
        step_fixed(m, &p, f, qp, r);
        return 0;
    }
    /* Auto micro-batch: the divisors b of the sequences per pipeline, in
     * increasing order, until one does not fit (activations grow with b,
     * so no larger one would) or MICRO_AUTO_MAX have been tried; the
     * fastest that fits wins, ties to the smaller b. */
    train_result c;
    for (int b = 1; b <= n && tried < MICRO_AUTO_MAX; b++) {
        if (n % b != 0) continue;
        p.micro_batch = b;
        step_fixed(m, &p, f, qp, &c);
        tried++;
        if (tried == 1 || (c.fits && !r->fits) || (c.fits == r->fits && c.step_s < r->step_s * (1 - 1e-9)))
            *r = c;
        if (!c.fits) break;
    }
    return 0;
}
