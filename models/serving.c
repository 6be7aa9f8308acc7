/*
 * serving: iteration time and KV capacity of an inference server (see
 * serving.h).
 *
 * serve_model_init does the architecture arithmetic once; serve_iter_s is
 * the hot path of the serving simulation (one call per simulated batch
 * iteration): five GEMM rooflines, two attention terms, one elementwise
 * term and, with tensor parallelism, two collective lookups.
 */
#include "models/serving.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/gpu.h"
#include "models/transformer.h"

/* Defaults of serve_params, each with where it comes from. */
const serve_param_doc serve_param_docs[] = {
    { "kv_memory_fraction", 0.90,
      "vLLM gpu_memory_utilization and TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction both default to 0.9" },
    { "runtime_reserve_bytes", 2e9,
      "CUDA context (~0.5 GB), cuBLAS/cuBLASLt workspaces, NCCL buffers and captured CUDA graphs: vLLM's "
      "start-up memory profile reports 1-3 GiB of non-torch and graph memory per H100" },
    { "block_tokens", 16, "vLLM's default KV block size (Kwon et al. 2023, PagedAttention)" },
    { "kernel_gap_s", 2e-6,
      "launch plus tail between dependent kernels replayed from a CUDA graph, ~1.5-3 us on Hopper and Ampere "
      "(estimate from Nsight Systems traces of decode steps; not fitted to the validation rows)" },
    { "kernels_per_layer", 12,
      "input norm, QKV GEMM, rotary + KV write, attention, output GEMM, all-reduce, residual + norm, "
      "gate/up GEMM, activation, down GEMM, all-reduce, residual" },
    { "eff_fp8_gemm", 0.70 / 0.75,
      "hardware_peaks.csv: cuBLASLt FP8 GEMMs reach 0.70 of the H100 FP8 peak against the 0.75 BF16 eff-gemm "
      "of models/catalog/gpus.xml" },
    { "eff_prefill_attention", 0.50,
      "FlashAttention-3 causal forward, head dim 128, BF16 on H100: 400-640 TFLOP/s from 1K to 16K tokens "
      "(Shah et al. 2024, Fig. 5), about half the tensor peak; TensorRT-LLM's Hopper FMHA and FlashInfer are "
      "of the same design" },
    { NULL, 0, NULL }
};

void serve_params_default(serve_params *p) {
    p->kv_memory_fraction = serve_param_docs[0].def;
    p->runtime_reserve_bytes = serve_param_docs[1].def;
    p->block_tokens = (int)serve_param_docs[2].def;
    p->kernel_gap_s = serve_param_docs[3].def;
    p->kernels_per_layer = serve_param_docs[4].def;
    p->eff_fp8_gemm = serve_param_docs[5].def;
    p->eff_prefill_attention = serve_param_docs[6].def;
}

/* Rows of logits the activation workspace holds: vLLM profiles its sampler
 * with max_num_seqs (256) dummy sequences. */
#define LOGIT_ROWS 256.0

/* Bytes per element of activations entering a linear layer: W8A8 schemes
 * quantise them to one byte, the others keep bf16. */
static double act_in_bytes(precision compute) {
    return (compute == PREC_FP8 || compute == PREC_INT8) ? 1 : 2;
}

/* The tensor precision linear layers run at for a weight precision. */
static precision compute_of(precision w) {
    switch (w) {
    case PREC_FP8: return PREC_FP8;
    case PREC_INT8: return PREC_INT8;
    case PREC_FP16: return PREC_FP16;
    default: return PREC_BF16;          /* bf16, and int4 weight-only (W4A16) */
    }
}

int serve_model_init(serve_model *sm, const llm_spec *m, const gpu_spec *g, const fabric *f, int tp,
                     precision w, precision kv, int token_budget, const serve_params *p, char *why,
                     size_t whylen) {
#define BAD(...) do { if (why) snprintf(why, whylen, __VA_ARGS__); return -1; } while (0)
    if (!sm || !m || !g) BAD("no model or GPU");
    if (tp < 1) BAD("tp must be at least 1");
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->vocab < 1) BAD("model %s has no shape", m->name);
    if (m->heads % tp != 0) BAD("tp %d must divide %s's %d attention heads", tp, m->name, m->heads);
    if (!(w == PREC_BF16 || w == PREC_FP16 || w == PREC_FP8 || w == PREC_INT8 || w == PREC_INT4))
        BAD("weights must be bf16, fp16, fp8, int8 or int4, not %s", precision_name(w));
    if (!(kv == PREC_BF16 || kv == PREC_FP16 || kv == PREC_FP8 || kv == PREC_INT8 || kv == PREC_INT4))
        BAD("the KV cache must be bf16, fp16, fp8, int8 or int4, not %s", precision_name(kv));
    if (tp > 1 && (!f || !f->node)) BAD("tp %d needs the node's fabric", tp);
    if (!(g->hbm_bytes > 0 && g->hbm_bw_bytes_per_s > 0)) BAD("GPU %s has no HBM figures", g->name);
    if (token_budget < 1) BAD("the token budget must be at least 1");
#undef BAD
    serve_model s;
    memset(&s, 0, sizeof s);
    s.m = *m;
    s.g = *g;
    if (f) {
        s.f = *f;
        s.has_fabric = 1;
    }
    s.tp = tp;
    s.weights = w;
    s.compute = compute_of(w);
    s.kv = kv;
    if (p) s.p = *p;
    else serve_params_default(&s.p);
    if (s.p.block_tokens < 1) s.p.block_tokens = 16;
    s.token_budget = token_budget;

    tf_dims d;
    tf_dims_of(m, &d);
    s.q_dim = d.q_dim;
    s.kv_dim = d.kv_dim;
    s.hidden = d.h;
    s.vocab = d.vocab;
    s.layers = d.layers;
    s.experts = m->experts > 1 ? m->experts : 1;
    s.experts_per_token = s.experts > 1 ? (m->experts_per_token > 0 ? m->experts_per_token : 2) : 1;
    s.kv_heads_per_gpu = ceil(d.kv_heads / tp);      /* tp > kv_heads replicates heads */

    double wb = precision_bytes(w);
    double attn_params = d.h * (d.q_dim + 2 * d.kv_dim) + d.q_dim * d.h;
    double ffn_params = (d.gated ? 3 : 2) * d.h * d.f * s.experts;
    s.layer_weight_bytes = (attn_params + ffn_params) * wb / tp;
    double emb = tf_embedding_params(m) * 2 / tp;      /* vocab-parallel, kept in bf16 */
    double head = tf_output_params(m) * 2 / tp;
    double norms = (2.0 * d.h * d.layers + d.h) * 2;
    s.weight_bytes = s.layer_weight_bytes * d.layers + emb + head + norms;
    s.kv_bytes_per_token = 2.0 * d.layers * s.kv_heads_per_gpu * d.head_dim * precision_bytes(kv);
    double ffn_act = (d.gated ? 2 : 1) * d.f * (s.experts > 1 ? s.experts_per_token : 1);
    s.activation_bytes = token_budget * ((d.q_dim + 2 * d.kv_dim) / tp + ffn_act / tp + 2 * d.h) * 2 +
                         LOGIT_ROWS * d.vocab / tp * 4;
    double left = g->hbm_bytes - s.weight_bytes - s.activation_bytes - s.p.runtime_reserve_bytes;
    s.kv_capacity_bytes = left * s.p.kv_memory_fraction;
    double block_bytes = s.kv_bytes_per_token * s.p.block_tokens;
    s.kv_blocks = s.kv_capacity_bytes > 0 ? (long long)floor(s.kv_capacity_bytes / block_bytes) : 0;
    s.kv_capacity_tokens = (double)s.kv_blocks * s.p.block_tokens;
    s.hbm_bytes_per_s = gpu_hbm_bytes_per_s(g);
    *sm = s;
    return 0;
}

int serve_fits(const serve_model *sm, double tokens) {
    return sm->kv_blocks > 0 && sm->kv_capacity_tokens >= tokens;
}

double serve_model_bytes(const serve_model *sm) { return sm->weight_bytes * sm->tp; }

double serve_chunk_pairs(double c, double o) { return c * o + c * (c + 1) / 2; }

precision serve_default_kv(precision w) {
    if (w == PREC_FP8) return PREC_FP8;
    if (w == PREC_FP16) return PREC_FP16;
    return PREC_BF16;
}

double serve_pcie_s(const node_spec *node, double bytes) {
    double bw = node && node->pcie_bw_bytes_per_s > 0 ? node->pcie_bw_bytes_per_s : 25e9;
    return bytes > 0 ? bytes / bw : 0;
}

/* Tensor rate for a GEMM shape at the model's compute precision. */
static double gemm_rate(const serve_model *sm, precision c, double m, double n, double k) {
    double r = gpu_gemm_flops_per_s(&sm->g, c, m, n, k);
    if (c == PREC_FP8 && sm->g.tflops[PREC_FP8] > 0) r *= sm->p.eff_fp8_gemm;
    return r;
}

/* One linear layer on one GPU: `count` GEMMs of m×k by k×n sharing the
 * FLOPs, weights read once each. */
static double linear_s(const serve_model *sm, precision c, double wbytes, double m, double n, double k,
                       double count) {
    if (!(m > 0)) return 0;
    double flops = 2 * m * n * k * count;
    double rate = gemm_rate(sm, c, m, n, k);
    double bytes = (n * k * wbytes + m * k * act_in_bytes(c) + m * n * 2) * count;
    double tc = rate > 0 ? flops / rate : 0;
    double tm = bytes / sm->hbm_bytes_per_s;
    return tc > tm ? tc : tm;
}

static double collective_s(const serve_model *sm, coll_op op, double bytes) {
    if (sm->tp <= 1 || !(bytes > 0) || !sm->has_fabric) return 0;
    int per_node = sm->f.node->gpus < sm->tp ? sm->f.node->gpus : sm->tp;
    coll_group grp = { sm->tp, per_node, 1 };
    coll_result r;
    if (coll_time(&sm->f, op, bytes, &grp, COLL_AUTO, &r) < 0) return 0;
    return r.time_s;
}

double serve_tokens_s(const serve_model *sm, double tokens, double rows, serve_breakdown *bd) {
    serve_breakdown z;
    memset(&z, 0, sizeof z);
    const serve_model *s = sm;
    if (tokens > 0) {
        tf_gemm gm[4];
        tf_layer_gemms(&s->m, tokens, s->tp, gm);
        double wb = precision_bytes(s->weights);
        double layer = linear_s(s, s->compute, wb, gm[0].m, gm[0].n, gm[0].k, 1) +
                       linear_s(s, s->compute, wb, gm[1].m, gm[1].n, gm[1].k, 1);
        if (s->experts > 1) {
            /* Each token visits experts_per_token of E experts; the batch
             * touches E·(1 - (1 - k/E)^tokens) of them, each read once. */
            double E = s->experts, k = s->experts_per_token;
            double used = E * (1 - pow(1 - k / E, tokens));
            if (used < 1) used = 1;
            double per = tokens * k / used;
            layer += linear_s(s, s->compute, wb, per, gm[2].n, gm[2].k, used) +
                     linear_s(s, s->compute, wb, per, gm[3].n, gm[3].k, used);
        } else {
            layer += linear_s(s, s->compute, wb, gm[2].m, gm[2].n, gm[2].k, 1) +
                     linear_s(s, s->compute, wb, gm[3].m, gm[3].n, gm[3].k, 1);
        }
        z.linear_s = layer * s->layers;
        z.lm_head_s = linear_s(s, PREC_BF16, 2, rows, s->vocab / s->tp, s->hidden, 1);
        tf_elementwise e;
        tf_layer_elementwise(&s->m, 2, &e);
        double per_token = s->layers * (e.hidden_bytes + e.split_bytes / s->tp) + s->kv_bytes_per_token +
                           2 * s->hidden;            /* embedding row */
        z.elementwise_s = tokens * per_token / s->hbm_bytes_per_s;
        if (s->tp > 1) {
            z.comm_s = 2 * s->layers * collective_s(s, COLL_ALLREDUCE, tokens * s->hidden * 2);
            if (rows > 0) z.comm_s += collective_s(s, COLL_ALLGATHER, rows * s->vocab * 2);
        }
        z.launch_s = s->p.kernel_gap_s * (s->p.kernels_per_layer * s->layers + 4);
    }
    double t = z.linear_s + z.lm_head_s + z.elementwise_s + z.comm_s + z.launch_s;
    if (bd) {
        bd->linear_s = z.linear_s;
        bd->lm_head_s = z.lm_head_s;
        bd->elementwise_s = z.elementwise_s;
        bd->comm_s = z.comm_s;
        bd->launch_s = z.launch_s;
    }
    return t;
}

double serve_context_s(const serve_model *sm, double prefill_pairs, double decode_ctx, serve_breakdown *bd) {
    const serve_model *s = sm;
    double qd = s->q_dim / s->tp, attn = 0, kv = 0;
    if (prefill_pairs > 0) {
        double rate = gpu_peak_flops(&s->g, PREC_BF16) * s->p.eff_prefill_attention *
                      (s->g.eff_sustained > 0 ? s->g.eff_sustained : 1);
        attn = 4 * qd * s->layers * prefill_pairs / rate;
    }
    if (decode_ctx > 0) {
        double tc = gpu_attention_s(&s->g, PREC_BF16, 4 * qd * s->layers * decode_ctx);
        double tm = decode_ctx * s->kv_bytes_per_token / s->hbm_bytes_per_s;
        kv = tc > tm ? tc : tm;
    }
    if (bd) {
        bd->attention_s = attn;
        bd->kv_read_s = kv;
    }
    return attn + kv;
}

double serve_iter_s(const serve_model *sm, const serve_batch *b, serve_breakdown *bd) {
    double tokens = b->prefill_tokens + b->decode_seqs;
    serve_breakdown z;
    memset(&z, 0, sizeof z);
    double t = 0;
    if (tokens > 0)
        t = serve_tokens_s(sm, tokens, b->decode_seqs + b->prefill_done, &z) +
            serve_context_s(sm, b->prefill_pairs, b->decode_ctx, &z);
    z.total_s = t;
    if (bd) *bd = z;
    return t;
}

double serve_weight_floor_s(const serve_model *sm) {
    /* Decode of one token reads every layer's weights (MoE: the shared ones
     * and experts_per_token experts) and the lm head. */
    double layer = sm->layer_weight_bytes;
    if (sm->experts > 1) {
        tf_dims d;
        tf_dims_of(&sm->m, &d);
        double wb = precision_bytes(sm->weights);
        double expert = (d.gated ? 3 : 2) * d.h * d.f * wb / sm->tp;
        layer -= expert * (sm->experts - sm->experts_per_token);
    }
    double head = sm->vocab * sm->hidden * 2 / sm->tp;
    return (layer * sm->layers + head) / sm->g.hbm_bw_bytes_per_s;
}
