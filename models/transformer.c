/*
 * transformer: the arithmetic of a dense decoder layer (see transformer.h).
 *
 * Everything is a closed formula in the architecture's sizes; callers ask
 * once per plan, so nothing is cached.
 */
#include "models/transformer.h"

#include <math.h>

void tf_dims_of(const llm_spec *m, tf_dims *d) {
    d->h = m->hidden;
    d->f = m->ffn_hidden;
    d->heads = m->heads > 0 ? m->heads : 1;
    d->kv_heads = m->kv_heads > 0 ? m->kv_heads : d->heads;
    d->head_dim = m->head_dim > 0 ? m->head_dim : d->h / d->heads;
    d->q_dim = d->heads * d->head_dim;
    d->kv_dim = d->kv_heads * d->head_dim;
    int mla = m->kv_lora_rank > 0;
    d->qk_dim = d->head_dim + (mla ? m->rope_head_dim : 0);
    d->v_dim = mla && m->v_head_dim > 0 ? m->v_head_dim : d->head_dim;
    d->vocab = m->vocab;
    d->layers = m->layers;
    /* Not given (negative): SwiGLU models shrink the FFN to keep its
     * weights near a 4h GeLU FFN's (8/3·h rounded: Llama 11008 for 4096,
     * 13824 for 5120; 3.25-3.5h in Llama 3), so exactly 4h means GeLU (GPT,
     * MPT). */
    d->gated = m->gated_ffn < 0 ? m->ffn_hidden != 4 * m->hidden : m->gated_ffn != 0;
}

int tf_is_moe(const llm_spec *m) { return m->experts > 1; }

int tf_moe_layers(const llm_spec *m) {
    if (!tf_is_moe(m)) return 0;
    int rest = m->layers - (m->dense_layers > 0 ? m->dense_layers : 0);
    int every = m->moe_every > 0 ? m->moe_every : 1;
    return rest > 0 ? rest / every : 0;
}

int tf_dense_layers(const llm_spec *m) { return m->layers - tf_moe_layers(m); }

static double ffn_params(const tf_dims *d, double inner) {
    return (d->gated ? 3 : 2) * d->h * inner;
}

/* One layer's attention matmuls: QKV and the output projection, or MLA's
 * query, KV-latent and output projections. */
static double attn_params(const llm_spec *m, const tf_dims *d) {
    if (m->kv_lora_rank <= 0) return d->h * (d->q_dim + 2 * d->kv_dim) + d->q_dim * d->h;
    double q = m->q_lora_rank > 0 ? d->h * m->q_lora_rank + m->q_lora_rank * d->heads * d->qk_dim
                                  : d->h * d->heads * d->qk_dim;
    double kv = d->h * (m->kv_lora_rank + m->rope_head_dim) +
                m->kv_lora_rank * d->heads * (d->head_dim + d->v_dim);
    return q + kv + d->heads * d->v_dim * d->h;
}

/* FFN weights of all layers: stored (every expert) or active (top-k). */
static double ffn_total(const llm_spec *m, const tf_param_counts *c, int active) {
    int moe = tf_moe_layers(m);
    double experts = m->shared_experts + (active ? m->experts_per_token : m->experts);
    return tf_dense_layers(m) * c->dense_ffn + moe * (c->router + experts * c->expert_ffn);
}

static double per_layer(const llm_spec *m, double total) {
    return m->layers > 0 ? total / m->layers : 0;
}

/* Two RMSNorms per layer, and MLA's norms on its two latents. */
static double layer_norm_params(const llm_spec *m) {
    double n = 2.0 * m->hidden;
    if (m->kv_lora_rank > 0) n += m->kv_lora_rank + (m->q_lora_rank > 0 ? m->q_lora_rank : 0);
    return n;
}

/* DeepSeek-V3 section 2.2: each MTP module is a 2h -> h projection of the
 * normalised hidden state and the next token's embedding, and one
 * transformer block (a MoE layer in V3); embedding and output head are
 * shared with the main model. */
static double mtp_params(const llm_spec *m, const tf_param_counts *c) {
    if (m->mtp_depth <= 0) return 0;
    double h = m->hidden;
    double ffn = tf_is_moe(m) ? c->router + (m->experts + m->shared_experts) * c->expert_ffn : c->dense_ffn;
    return m->mtp_depth * (2 * h * h + c->attn + ffn + layer_norm_params(m) + 3 * h);
}

void tf_param_counts_of(const llm_spec *m, tf_param_counts *c) {
    tf_dims d;
    tf_dims_of(m, &d);
    double norms = layer_norm_params(m);
    c->expert_ffn = ffn_params(&d, m->expert_ffn_hidden > 0 ? m->expert_ffn_hidden : m->ffn_hidden);
    c->dense_ffn = ffn_params(&d, d.f);
    c->router = tf_is_moe(m) ? (double)m->hidden * m->experts : 0;
    c->attn = attn_params(m, &d);
    c->layer_matmul = c->attn + per_layer(m, ffn_total(m, c, 0));
    c->layer_active_matmul = c->attn + per_layer(m, ffn_total(m, c, 1));
    c->layer = c->layer_matmul + norms;
    c->moe_layer_routed = tf_is_moe(m) ? m->experts * c->expert_ffn : 0;
    c->moe_layer_other = c->attn + c->router + m->shared_experts * c->expert_ffn + norms;
    c->dense_layer = c->attn + c->dense_ffn + norms;
    c->embedding = (double)m->vocab * m->hidden;
    c->output = m->tied_embeddings ? 0 : (double)m->vocab * m->hidden;
    c->total = m->layers * c->layer + c->embedding + c->output + m->hidden;   /* + the final norm */
    c->active = m->layers * (c->layer_active_matmul + norms) + c->embedding + c->output + m->hidden;
    c->mtp = mtp_params(m, c);
}

/* Layers whose attention is windowed. */
int tf_windowed_layers(const llm_spec *m) {
    if (m->attn_window <= 0) return 0;
    return m->global_every > 0 ? m->layers - m->layers / m->global_every : m->layers;
}

double tf_mean_attended(const llm_spec *m, double ctx) {
    int w = tf_windowed_layers(m);
    if (w == 0 || m->layers <= 0 || ctx <= m->attn_window) return ctx;
    return ((m->layers - w) * ctx + w * (double)m->attn_window) / m->layers;
}

/* (query, key) pairs of the first n positions of a sequence on one layer:
 * position p (0-based) attends p + 1 keys on a global layer, min(p + 1, W)
 * under a window of W, and (p mod W) + 1 within chunks of W (Llama 4's
 * chunked attention: the earlier keys of its own chunk and itself). */
static double layer_pairs(double n, double w, int kind) {
    if (kind == 0 || n <= w) return n * (n + 1) / 2;
    if (kind == 1) return w * (w + 1) / 2 + (n - w) * w;
    double k = floor(n / w), r = n - k * w;
    return k * w * (w + 1) / 2 + r * (r + 1) / 2;
}

double tf_mean_pairs(const llm_spec *m, double o, double c) {
    int w = tf_windowed_layers(m);
    double full = layer_pairs(o + c, 0, 0) - layer_pairs(o, 0, 0);
    if (w == 0 || m->layers <= 0) return full;
    int kind = m->attn_chunked ? 2 : 1;
    double win = m->attn_window;
    double local = layer_pairs(o + c, win, kind) - layer_pairs(o, win, kind);
    return ((m->layers - w) * full + w * local) / m->layers;
}

double tf_kv_elems_per_layer(const llm_spec *m) {
    tf_dims d;
    tf_dims_of(m, &d);
    return m->kv_lora_rank > 0 ? (double)m->kv_lora_rank + m->rope_head_dim : 2 * d.kv_dim;
}

double tf_kv_cache_elems(const llm_spec *m, double ctx) {
    return tf_kv_elems_per_layer(m) * m->layers * tf_mean_attended(m, ctx);
}

double tf_layer_gemm_flops(const llm_spec *m) {
    tf_param_counts c;
    tf_param_counts_of(m, &c);
    return 2 * c.layer_active_matmul;
}

double tf_layer_attn_flops(const llm_spec *m, double seq) {
    tf_dims d;
    tf_dims_of(m, &d);
    /* QK^T (2·s·qk_dim per head) and PV (2·s·v_dim per head) per query. */
    return 2 * tf_mean_attended(m, seq) * d.heads * (d.qk_dim + d.v_dim);
}

double tf_output_flops(const llm_spec *m) {
    return 2.0 * m->vocab * m->hidden; /* logits; tied or not, the matmul runs */
}

double tf_model_flops_per_token(const llm_spec *m, double seq) {
    double layer = tf_layer_gemm_flops(m) + tf_layer_attn_flops(m, seq);
    return 3 * (m->layers * layer + tf_output_flops(m));
}

double tf_hw_flops_per_token(const llm_spec *m, double seq, recompute r, double layer_fraction) {
    double gemm = tf_layer_gemm_flops(m), attn = tf_layer_attn_flops(m, seq);
    double layer = 3 * (gemm + attn);
    if (r == RECOMPUTE_FULL) layer += gemm + attn;
    else if (r == RECOMPUTE_SELECTIVE) layer += layer_fraction > 0 ? layer_fraction * (gemm + attn) : attn;
    return m->layers * layer + 3 * tf_output_flops(m);
}

double tf_causal_fraction(double seq) {
    return seq > 0 ? (seq + 1) / (2 * seq) : 1;
}

void tf_layer_gemms(const llm_spec *m, double tokens, int tp, tf_gemm out[4]) {
    tf_dims d;
    tf_dims_of(m, &d);
    double t = tp > 0 ? tp : 1;
    out[0] = (tf_gemm){ tokens, (d.q_dim + 2 * d.kv_dim) / t, d.h };
    out[1] = (tf_gemm){ tokens, d.h, d.q_dim / t };
    out[2] = (tf_gemm){ tokens, (d.gated ? 2 : 1) * d.f / t, d.h };
    out[3] = (tf_gemm){ tokens, d.h, d.f / t };
}

/* Sources: torchtitan torchtitan/parallelisms/parallelize_llama.py at commit
 * 9dec370 (Dec 2024; torchtitan/models/llama3/parallelize_llama.py at
 * 820504e, June 2025, is the same): _save_list holds aten.mm, the two SDPA
 * ops, _c10d_functional.reduce_scatter_tensor, abs and max; the policy of
 * _apply_ac_to_transformer_block saves a listed op's output unless it is an
 * mm whose count in the block is even. The block's mms in forward order:
 * torchtitan/models/llama/model.py (Attention: wq, wk, wv, wo; FeedForward:
 * w2(silu(w1(x)) * w3(x))). */
int tf_layer_sac_ops_gemms(const llm_spec *m, double tokens, int tp, int with_wo, tf_gemm out[3]) {
    tf_dims d;
    tf_dims_of(m, &d);
    double t = tp > 0 ? tp : 1;
    int n = 0;
    out[n++] = (tf_gemm){ tokens, d.kv_dim / t, d.h };              /* wk */
    if (with_wo) out[n++] = (tf_gemm){ tokens, d.h, d.q_dim / t };  /* wo */
    if (d.gated) out[n++] = (tf_gemm){ tokens, d.f / t, d.h };      /* w3 */
    return n;
}

void tf_ffn_gemms(const llm_spec *m, double tokens, double inner, int tp, tf_gemm out[2]) {
    tf_dims d;
    tf_dims_of(m, &d);
    double t = tp > 0 ? tp : 1;
    out[0] = (tf_gemm){ tokens, (d.gated ? 2 : 1) * inner / t, d.h };
    out[1] = (tf_gemm){ tokens, d.h, inner / t };
}

int tf_attn_gemms(const llm_spec *m, double tokens, int tp, tf_gemm out[TF_ATTN_GEMMS_MAX]) {
    tf_dims d;
    tf_dims_of(m, &d);
    double t = tp > 0 ? tp : 1;
    if (m->kv_lora_rank <= 0) {
        out[0] = (tf_gemm){ tokens, (d.q_dim + 2 * d.kv_dim) / t, d.h };
        out[1] = (tf_gemm){ tokens, d.h, d.q_dim / t };
        return 2;
    }
    int n = 0;
    double qr = m->q_lora_rank, kr = m->kv_lora_rank;
    if (qr > 0) {
        out[n++] = (tf_gemm){ tokens, qr, d.h };
        out[n++] = (tf_gemm){ tokens, d.heads * d.qk_dim / t, qr };
    } else {
        out[n++] = (tf_gemm){ tokens, d.heads * d.qk_dim / t, d.h };
    }
    out[n++] = (tf_gemm){ tokens, kr + m->rope_head_dim, d.h };
    out[n++] = (tf_gemm){ tokens, d.heads * (d.head_dim + d.v_dim) / t, kr };
    out[n++] = (tf_gemm){ tokens, d.h, d.heads * d.v_dim / t };
    return n;
}

/* Bytes per element of the upcast the eager model code makes before a norm
 * or a rotation (x.float(): fp32). */
#define EAGER_UPCAST_BYTES 4.0

/* The eager ops, as the Llama model code writes them (torchtitan
 * torchtitan/models/norms.py RMSNorm and models/llama/model.py at commit
 * 9dec370, Dec 2024; Hugging Face LlamaRMSNorm is the same chain), bytes per
 * element of the op's width at a = act_bytes, u = EAGER_UPCAST_BYTES:
 *   RMSNorm   x.float() (a+u), pow(2) (2u), mean (u), +eps and rsqrt (per
 *             token, nothing per element), x*rsqrt (2u), type_as (u+a),
 *             *weight (2a): 4a+6u, 8 kernels
 *   rotary    q.float() (a+u), complex product with freqs_cis (2u),
 *             view_as_real/flatten (views), type_as (u+a): 2a+4u per tensor,
 *             3 kernels, for Q and for K
 *   SwiGLU    silu(gate) (2a), silu*up (3a): 5a per f, 2 kernels (GeLU:
 *             one op, 2a, as fused)
 *   residual  x + y (3a), 1 kernel each, as fused
 * Copies present either way (repeat_kv's expanded K and V, the attention
 * output's transpose().contiguous()) feed extern kernels (SDPA, GEMMs) that
 * no compiler fuses into, so neither count holds them: they sit inside the
 * GPU's measured efficiencies as before. Fused: one kernel per norm, one for
 * the rotary of Q and K, one for the activation, one per residual add
 * (Transformer Engine and Megatron's fused kernels; torch.compile's Inductor
 * fuses each chain of pointwise ops and reductions into one generated
 * kernel: Ansel et al., "PyTorch 2", ASPLOS'24, TorchInductor; torchtitan,
 * Liang et al., arXiv 2410.06511, section 2.3.2). */
static void elementwise_eager(const tf_dims *d, double a, tf_elementwise *e) {
    const double u = EAGER_UPCAST_BYTES;
    double norm = 4 * a + 6 * u, rope = 2 * a + 4 * u, add = 3 * a;
    e->hidden_bytes_eager = (2 * norm + 2 * add) * d->h;
    e->split_bytes_eager = rope * (d->q_dim + d->kv_dim) + (d->gated ? 5 : 2) * a * d->f;
    e->kernels_eager = 2 * 8 + 2 * 3 + (d->gated ? 2 : 1) + 2;
    e->kernels = 2 + 1 + 1 + 2;
}

void tf_layer_elementwise(const llm_spec *m, double act_bytes, tf_elementwise *e) {
    tf_dims d;
    tf_dims_of(m, &d);
    /* Two norms (read h, write h) and two residual adds (read 2h, write h). */
    e->hidden_bytes = (2 * 2 + 2 * 3) * d.h * act_bytes;
    /* Activation function: SwiGLU reads gate and up and writes their
     * product (3f), GeLU reads and writes f (2f). Rotary embedding reads
     * and writes Q and K. */
    double act = (d.gated ? 3 : 2) * d.f;
    double rope = 2 * (d.q_dim + d.kv_dim);
    e->split_bytes = (act + rope) * act_bytes;
    elementwise_eager(&d, act_bytes, e);
}

double tf_unfused_score_bytes(double act_bytes) {
    return 6 * act_bytes + 1;
}
