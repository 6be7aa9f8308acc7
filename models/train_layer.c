/*
 * train_layer: one transformer layer of a training step on one GPU for one
 * micro-batch (see train_layer.h): its GEMMs and their low-precision casts,
 * the attention core, elementwise work, recomputation, and the tensor-,
 * context- and expert-parallel communication it exposes.
 */
#include "models/train_layer.h"

#include <math.h>
#include <string.h>

#include "models/attn_kernel.h"
#include "models/gpu.h"
#include "models/train_moe.h"
#include "models/train_symm_tp.h"
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
double train_layer_hw_flops_per_token(const llm_spec *m, const train_plan *p) {
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
static double fused_attention_s(const gpu_spec *g, const train_plan *p, double flops, gpu_attn_pass pass,
                                double flops_per_exp) {
    double t = gpu_attention_pass_s(g, p->precision, flops, pass, flops_per_exp);
    if (p->attn_kernel != ATTN_FLASH3 || !gpu_is_hopper(g) || !(t > 0)) return t;
    double floor_s = flops / (0.75 * gpu_peak_flops(g, PREC_BF16));
    return fmax(t / 1.5, floor_s);
}

/* A fused pass at the layer's head dim: the kernel reaches a lower fraction
 * of its head-dim-128 efficiency at smaller head dims (attn_kernel.h). The
 * head dim is QK^T's inner size (qk_dim), FlashAttention's headdim. */
static double shaped_attention_s(const gpu_spec *g, const train_plan *p, const tf_dims *d, double flops,
                                 gpu_attn_pass pass, double flops_per_exp) {
    attn_kernel_family fam = p->attn_kernel == ATTN_FLASH3 && gpu_is_hopper(g) ? ATTN_KERNEL_FA3 : ATTN_KERNEL_FA2;
    return fused_attention_s(g, p, flops, pass, flops_per_exp) / attn_kernel_hdim_factor(fam, pass, d->qk_dim);
}

/* Attention core of one layer per micro-batch, forward (returned) and
 * backward (*bwd): queries on this GPU against all s keys; win_f and win_b
 * the forward's and backward's work per layer against a full causal
 * layer's (attn_kernel_window_work). */
static double attention_s(const gpu_spec *g, const train_plan *p, const train_params *q,
                          const tf_dims *dp, double tokens, double win_f, double win_b, double *bwd) {
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
         * except under MLA); windowed layers compute the tiles their
         * window reaches (win_f, win_b on the causal count). */
        double flops = 2 * tokens * s * (d.qk_dim + d.v_dim) * heads * tf_causal_fraction(s);
        double flops_b = q->attn_bwd_factor * flops;
        if (win_f != 1) flops *= win_f;
        if (win_b != 1) flops_b *= win_b;
        /* Causal-masked kernels: the whole layer, or under (load-balanced)
         * context parallelism the first ring step's block, 1/cp of the
         * work; the other steps' blocks are unmasked (cp_costs). The
         * backward's FLOPs are attn_bwd_factor times the forward's. */
        double causal = p->cp > 1 ? 1.0 / p->cp : 1;
        /* One exponential per score element in each pass (the forward's
         * softmax, the backward's recomputed P): the pass's FLOPs per
         * exponential (gpu_attention_exp_eff). */
        double per_exp = 2 * (d.qk_dim + d.v_dim);
        attn_f = shaped_attention_s(g, p, &d, flops * causal, GPU_ATTN_FWD_CAUSAL, per_exp)
               + shaped_attention_s(g, p, &d, flops * (1 - causal), GPU_ATTN_FWD_FULL, per_exp);
        attn_b = shaped_attention_s(g, p, &d, flops_b, GPU_ATTN_BWD, q->attn_bwd_factor * per_exp);
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
 * to hide behind. A stack without cp-overlap waits for every exchange
 * where it is issued, so no block hides any (torch.compile traces the
 * ring, and a traced functional collective is waited for at once:
 * docs/torchtitan-mechanisms.md). Each step after the first merges its
 * block into the running output by log-sum-exp (forward) and adds its dQ,
 * dK, dV into the fp32 sums (backward). docs/context-parallel.md. */
static cp_cost cp_costs(const train_plan *p, const fabric *f, const tf_dims *d, double tokens,
                        double attn_f, double attn_b) {
    cp_cost c = { 0, 0, 0, 0 };
    if (p->cp <= 1) return c;
    int gpn = train_domain_gpus(f);
    double tp = p->tp, cp = p->cp, act = 2, steps = cp - 1;
    double q_cols = d->q_dim / tp;
    double kv_cols = p->stack.kv_repeat ? q_cols : fmax(d->kv_dim / tp, d->head_dim);
    double kv = tokens * 2 * kv_cols;                 /* K and V elements of one chunk */
    int hide = p->stack.cp_overlap;
    double blk_f = hide ? attn_f / cp : 0, blk_b = hide ? attn_b / cp : 0;
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

/* ---- Async TP as PyTorch's micro-pipeline ------------------------------- */

/* Async TP on (tp_overlap > 0) under a stack that runs PyTorch's
 * symmetric-memory micro-pipeline, with sequence parallelism, on a dense
 * layer whose four GEMMs tf_layer_gemms gives (no MoE, no MLA). */
static int symm_tp_applies(const llm_spec *m, const train_plan *p, const train_params *q) {
    return p->stack.async_tp_pipeline && q->tp_overlap > 0 && p->tp > 1 && p->sequence_parallel &&
           !tf_is_moe(m) && m->kv_lora_rank <= 0;
}

/* The layer's TP collectives under the micro-pipeline (train_symm_tp):
 * one pass forward; backward the input-gradient passes (1 + whole: each
 * all-gather's gradient is a reduce-scatter and each reduce-scatter's an
 * all-gather) and, under per-op checkpointing, the two all-gathers again.
 * Replaces the exposed and hidden TP traffic of the default rule and adds
 * the pipeline's compute. */
static void symm_tp_costs(const llm_spec *m, const train_plan *p, const gpu_spec *g, double tokens,
                          double act, double t_ag, double t_rs, double whole, int sac_ops,
                          train_layer_cost *c) {
    tf_gemm gm[4];
    tf_layer_gemms(m, tokens, p->tp, gm);
    symm_tp_pass sp;
    train_symm_tp_pass(g, p, gm, t_ag, t_rs, act, &sp);
    double n_ag = 1 + whole + (sac_ops ? 1 : 0), n_rs = 1 + whole;
    double total = 2 * (t_ag + t_rs) + n_ag * 2 * t_ag + n_rs * 2 * t_rs;
    c->comm_fwd = sp.exposed[0] + sp.exposed[1];
    c->comm_bwd = n_ag * sp.exposed[0] + n_rs * sp.exposed[1];
    c->hidden_comm = fmax(0, total - c->comm_fwd - c->comm_bwd);
    c->fwd += sp.extra[0] + sp.extra[1];
    c->bwd += n_ag * sp.extra[0] + n_rs * sp.extra[1];
}

/* ---- One layer ------------------------------------------------------------ */

double train_layer_total(const train_layer_cost *c) {
    return c->fwd + c->bwd + c->recompute + c->comm_fwd + c->comm_bwd + c->ep_comm + c->host;
}

/* The layer's GEMMs forward (backward = input gradient + weight gradient,
 * same shapes: twice) and their FP8/FP4 casts (*cast_f, *cast_b). A dense
 * model without MLA: QKV, output, FFN in and out (tf_layer_gemms);
 * otherwise the attention's GEMMs (tf_attn_gemms) and, in a dense layer,
 * its FFN's; a MoE layer's FFN is moe_ffn_costs'. */
static double layer_gemm_s(const llm_spec *m, const train_plan *p, const gpu_spec *g, train_layer_kind kind,
                           double tokens, double *cast_f, double *cast_b) {
    tf_gemm gm[TF_ATTN_GEMMS_MAX + 2];
    int n = 4;
    if (!tf_is_moe(m) && m->kv_lora_rank <= 0) {
        tf_layer_gemms(m, tokens, p->tp, gm);
    } else {
        n = tf_attn_gemms(m, tokens, p->tp, gm);
        if (kind == TRAIN_LAYER_DENSE) {
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
                        const moe_ffn_cost *mc, double whole, train_layer_cost *c) {
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

void train_layer_costs(const llm_spec *m, const train_plan *p, const fabric *f,
                       const train_params *q, train_layer_kind kind, train_layer_cost *c) {
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
    if (kind == TRAIN_LAYER_MOE) moe_ffn_costs(m, p, f, tokens, &mc);

    /* Attention core: queries on this GPU against all s keys. */
    double win_f = attn_kernel_window_work(m, g, GPU_ATTN_FWD_CAUSAL, s);
    double win_b = attn_kernel_window_work(m, g, GPU_ATTN_BWD, s);
    double attn_b, attn_f = attention_s(g, p, q, &d, tokens, win_f, win_b, &attn_b);

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
    double t_tp = 0, t_ag = 0, t_rs = 0;
    if (p->tp > 1) {
        int rpn = p->tp < gpn ? p->tp : gpn;
        double bytes = tokens * d.h * act;
        t_ag = train_coll_s(f, COLL_ALLGATHER, bytes, p->tp, rpn, gpn / rpn);
        if (p->sequence_parallel) {
            t_rs = train_coll_s(f, COLL_REDUCESCATTER, bytes, p->tp, rpn, gpn / rpn);
            t_tp = 2 * (t_ag + t_rs);
        } else
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
    if (symm_tp_applies(m, p, q)) symm_tp_costs(m, p, g, tokens, act, t_ag, t_rs, whole, sac_ops, c);

    /* Context parallel (cp_costs); a recomputed forward repeats its traffic. */
    c->comm_fwd += cpc.comm_fwd;
    c->comm_bwd += cpc.comm_bwd + whole * cpc.comm_fwd;
    /* Overlapped TP communication slows the GEMMs it runs beside. */
    c->bwd += c->hidden_comm * q->overlap_slowdown;
    ep_exposure(p, q, g, &mc, whole, c);
    c->gaps = (q->kernels_per_layer + extra_kernels) * q->kernel_gap_s * (3 + whole);
    /* Host-bound time per layer per micro-batch (stack layer-overhead): on
     * the critical path of every pipeline slot, bubble slots included. A
     * MoE layer adds its dispatcher's host sync, once per forward pass
     * (recomputed forwards too). */
    c->host = p->stack.layer_overhead_s;
    if (kind == TRAIN_LAYER_MOE) c->host += (1 + whole) * train_moe_dispatch_sync_s(p, f);
}
