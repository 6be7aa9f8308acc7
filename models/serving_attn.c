/*
 * serving_attn: the attention core of the serving model (serving.h): the
 * (query, key) work of prefill and decode, priced by the roofline or, where
 * the engine runs TensorRT-LLM's kernels and the GPU has figures for them,
 * by the laws fitted to NVIDIA's measured call times (docs/serving.md
 * "Prefill attention, measured").
 */
#include <math.h>

#include "models/gpu.h"
#include "models/serving.h"
#include "models/transformer.h"

/* Prefill attention's price. By default its causal FLOPs run at
 * eff_prefill_attention of the bf16 peak. Under the context-FMHA law
 * (p.trtllm_fmha, where the GPU has figures) TensorRT-LLM's context
 * attention call costs, per layer,
 *     t = fixed + tile · Σ heads · ceil(c / 64) + causal FLOPs / rate,
 * fitted to NVIDIA's measured call times (docs/serving.md "Prefill
 * attention, measured"). The kernel runs in fp8 when the KV cache is fp8:
 * the attention op takes its fp8-output path whenever the cache is fp8 and
 * the context FMHA is paged, as TensorRT-LLM's PyTorch backend runs it
 * (thop/attentionOp.cpp, as ai-dynamo/aiconfigurator's
 * collector/trtllm/collect_attn.py reads it). */
static void init_context_fmha(serve_model *s, const gpu_spec *g) {
    s->prefill_attn_flops_per_s = gpu_peak_flops(g, PREC_BF16) * s->p.eff_prefill_attention *
                                  (g->eff_sustained > 0 ? g->eff_sustained : 1);
    s->ctx_fmha_s = s->ctx_fmha_tile_s = 0;
    if (!s->p.trtllm_fmha || !(g->ctx_fmha_s > 0)) return;
    int fp8 = s->kv == PREC_FP8 && g->eff_ctx_fmha_fp8 > 0 && gpu_peak_flops(g, PREC_FP8) > 0;
    double eff = fp8 ? g->eff_ctx_fmha_fp8 : g->eff_ctx_fmha_bf16;
    if (!(eff > 0)) return;
    s->prefill_attn_flops_per_s = gpu_peak_flops(g, fp8 ? PREC_FP8 : PREC_BF16) * eff;
    s->ctx_fmha_s = g->ctx_fmha_s;
    s->ctx_fmha_tile_s = fp8 ? g->ctx_fmha_tile_fp8_s : g->ctx_fmha_tile_bf16_s;
}

double serve_chunk_pairs(double c, double o) { return c * o + c * (c + 1) / 2; }

double serve_chunk_tiles(double c) { return c > 0 ? ceil(c / 64) : 0; }

double serve_prefill_fmha_s(const serve_model *sm, double tiles) {
    if (!(tiles > 0) || !(sm->ctx_fmha_s > 0)) return 0;
    double heads = (double)sm->m.heads / sm->tp;     /* query heads of one GPU */
    return sm->layers * (sm->ctx_fmha_s + sm->ctx_fmha_tile_s * heads * (tiles / sm->attn_dp));
}

/* MLA decode, measured (docs/moe-serving.md "MLA decode, measured"). Where
 * the engine runs TensorRT-LLM's MLA generation path (p.trtllm_mla) and the
 * GPU has figures for the KV cache's precision, one layer's call on one GPU
 * of h query heads, for n sequences whose contexts sum to P, costs
 *     t = fixed + n·(seq + head·h) + max(P·pair FLOPs / rate, P·latent bytes / bw)
 * (mla_rope_generation: the rope of the queries' rope part, their fp8
 * quantisation with an fp8 cache, the latent's append; then the generation
 * FMHA over the latent cache, in fp8 with an fp8 cache), the law fitted to
 * NVIDIA's measured call times (ai-dynamo/aiconfigurator
 * systems/data/<gpu>/mla/trtllm/1.3.0rc20/generation_mla_perf.parquet,
 * collector/trtllm/collect_mla.py). Off: the roofline of serve_context_s. */
static void init_mla_gen(serve_model *s, const gpu_spec *g) {
    s->mla_gen_s = s->mla_gen_seq_s = s->mla_gen_flops_per_s = s->mla_gen_bytes_per_s = 0;
    if (!s->p.trtllm_mla || s->m.kv_lora_rank <= 0) return;
    int fp8 = s->kv == PREC_FP8;
    if (!fp8 && s->kv != PREC_BF16 && s->kv != PREC_FP16) return;
    double fixed = fp8 ? g->mla_gen_fp8_s : g->mla_gen_bf16_s, seq = fp8 ? g->mla_gen_seq_fp8_s : g->mla_gen_seq_bf16_s;
    double head = fp8 ? g->mla_gen_head_fp8_s : g->mla_gen_head_bf16_s;
    double eff = fp8 ? g->eff_mla_gen_fp8 : g->eff_mla_gen_bf16, eff_hbm = fp8 ? g->eff_mla_gen_hbm_fp8 : g->eff_mla_gen_hbm_bf16;
    double peak = gpu_peak_flops(g, fp8 ? PREC_FP8 : PREC_BF16);
    if (!(fixed > 0 && eff > 0 && eff_hbm > 0 && peak > 0 && g->hbm_bw_bytes_per_s > 0)) return;
    s->mla_gen_s = fixed;
    s->mla_gen_seq_s = seq + head * s->m.heads / s->tp;
    s->mla_gen_flops_per_s = peak * eff;
    s->mla_gen_bytes_per_s = g->hbm_bw_bytes_per_s * eff_hbm;
}

/* Attention-core FLOPs per (query, key) pair of all layers on one GPU:
 * 4·q_dim/tp (QK^T and PV); MLA prefill runs per head over qk_dim + v_dim;
 * MLA decode runs absorbed over the latent (DeepSeek-V2, arXiv 2405.04434,
 * section 2.1.3; DeepSeek's FlashMLA kernel): scores over kv_lora + rope
 * and the product with the kv_lora-wide latent. */
static double pair_flops(const serve_model *s, int decode) {
    const llm_spec *m = &s->m;
    if (m->kv_lora_rank <= 0) return 4 * (s->q_dim / s->tp) * s->layers;
    tf_dims d;
    tf_dims_of(m, &d);
    double hpg = d.heads / s->tp;
    double per = decode ? 2 * hpg * (m->kv_lora_rank + m->rope_head_dim) + 2 * hpg * m->kv_lora_rank
                        : 2 * hpg * (d.qk_dim + d.v_dim);
    return per * s->layers;
}

/* Decode attention's compute (tc) and KV read (tm) are both proportional
 * to the context: tc = pair_flops · ctx / attn_dp / rate, tm = ctx ·
 * kv_bytes_per_token / bandwidth. When their ratio is at most 1/2 the
 * read is the larger at every context (each side carries a few roundings,
 * ~1e-15 of its value, far inside a factor of two), and serve_context_s's
 * max(tc, tm) is tm without pricing tc: the same number for less work
 * (pricing tc was ~5% of a 1e7-request run). Dense GQA models on today's GPUs are read-bound by a wide
 * margin; MLA's absorbed decode is not (tests/test_serving_memo.c). */
#define DECODE_READ_BOUND_RATIO 0.5

static int decode_read_bound(const serve_model *s) {
    double tc = gpu_attention_s(&s->g, PREC_BF16, pair_flops(s, 1) * (1.0 / s->attn_dp));
    double tm = s->kv_bytes_per_token / (s->hbm_bytes_per_s * s->p.engine_kv_eff);
    return tc >= 0 && tm > 0 && tc <= DECODE_READ_BOUND_RATIO * tm;
}

/* Keys the decoding sequences' layers read, averaged over the layers:
 * global layers the whole context; windowed ones at most the window, from
 * the mean context; chunked ones their chunk so far, decode_local when the
 * caller tracks it (sim/serving_chunk.c), else as a window. */
static double decode_attended(const serve_model *s, double decode_ctx, double decode_seqs, double decode_local) {
    int w = tf_windowed_layers(&s->m), L = s->m.layers;
    if (w == 0 || L <= 0 || !(decode_seqs > 0)) return decode_ctx;
    if (s->m.attn_chunked && decode_local >= 0) return ((L - w) * decode_ctx + w * decode_local) / L;
    return decode_seqs * tf_mean_attended(&s->m, decode_ctx / decode_seqs);
}

double serve_context_s(const serve_model *sm, double prefill_pairs, double prefill_tiles, double decode_ctx,
                       double decode_seqs, serve_breakdown *bd) {
    return serve_context_local_s(sm, prefill_pairs, prefill_tiles, decode_ctx, decode_seqs, -1, bd);
}

double serve_context_local_s(const serve_model *sm, double prefill_pairs, double prefill_tiles, double decode_ctx,
                             double decode_seqs, double decode_local, serve_breakdown *bd) {
    const serve_model *s = sm;
    double attn = 0, kv = 0;
    if (prefill_pairs > 0) {
        attn = pair_flops(s, 0) * (prefill_pairs / s->attn_dp) / s->prefill_attn_flops_per_s;
    }
    attn += serve_prefill_fmha_s(s, prefill_tiles);
    decode_ctx = decode_attended(s, decode_ctx, decode_seqs, decode_local);
    if (decode_ctx > 0 && s->mla_gen_s > 0) {        /* the MLA generation law, all layers of one GPU */
        double tm = decode_ctx * s->kv_bytes_per_token / s->mla_gen_bytes_per_s;
        double tc = pair_flops(s, 1) * (decode_ctx / s->attn_dp) / s->mla_gen_flops_per_s;
        kv = s->layers * (s->mla_gen_s + decode_seqs / s->attn_dp * s->mla_gen_seq_s) + (tc > tm ? tc : tm);
    } else if (decode_ctx > 0) {
        double tm = decode_ctx * s->kv_bytes_per_token / (s->hbm_bytes_per_s * s->p.engine_kv_eff);
        double tc = s->decode_read_bound ? 0 : gpu_attention_s(&s->g, PREC_BF16, pair_flops(s, 1) * (decode_ctx / s->attn_dp));
        kv = tc > tm ? tc : tm;
    }
    if (bd) {
        bd->attention_s = attn;
        bd->kv_read_s = kv;
    }
    return attn + kv;
}

void serve_attn_init(serve_model *sm, const gpu_spec *g) {
    init_context_fmha(sm, g);
    init_mla_gen(sm, g);
    sm->decode_read_bound = decode_read_bound(sm);
}
