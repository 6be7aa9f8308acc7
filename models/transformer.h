/*
 * transformer: parameters, FLOPs and bytes of a dense decoder transformer,
 * per token and per layer, as pure arithmetic on the architecture.
 *
 * Conventions (the published ones, so the figures compare with papers):
 *   - A matmul of a weight with W elements costs 2·W FLOPs per token forward,
 *     4·W backward (input and weight gradients).
 *   - The attention core (QK^T and the product with V) costs 2·2·s·q_dim
 *     FLOPs per token forward over a context of s keys, counted over the
 *     full s×s square as Megatron-LM (Narayanan et al. 2021, Eq. 3), PaLM
 *     (Chowdhery et al. 2022, App. B) and MosaicML/torchtitan MFU do. Causal
 *     kernels execute about half of it: tf_causal_fraction() says how much.
 *   - Only the output projection (logits) of the vocabulary counts; the
 *     input embedding is a lookup (Eq. 3's 6·B·s·h·V term).
 * With MHA, a 4h non-gated FFN and full recomputation, tf_hw_flops_per_token
 * is exactly Megatron's Eq. 3 divided by B·s: 96·l·h²·(1 + s/6h + V/16lh).
 *
 * GQA: K and V have kv_heads·head_dim columns each (head_dim = hidden/heads).
 * Gated FFN (SwiGLU): three h×f matrices instead of two. A negative
 * gated_ffn means "not given": gated unless ffn_hidden is exactly 4·hidden
 * (tf_dims_of says why).
 */
#ifndef CT_TRANSFORMER_H
#define CT_TRANSFORMER_H

#include "models/catalog.h"
#include "models/train_plan.h"

/* Derived sizes of an architecture. */
typedef struct tf_dims {
    double h;          /* hidden */
    double f;          /* FFN inner size of a dense layer */
    double heads, kv_heads, head_dim;
    double q_dim;      /* heads·head_dim (= h unless head_dim is given) */
    double kv_dim;     /* kv_heads·head_dim */
    double qk_dim;     /* per head, query/key: head_dim, + rope_head_dim under MLA */
    double v_dim;      /* per head, value: head_dim, or v_head_dim under MLA */
    double vocab;
    int layers;
    int gated;         /* 1: three FFN matrices */
} tf_dims;

/* Fill d from m (kv_heads 0 means heads). */
void tf_dims_of(const llm_spec *m, tf_dims *d);

/* ---- Mixture of experts and attention variants -------------------------
 *
 * A MoE model (experts > 1) keeps `dense_layers` dense layers first, then
 * every `moe_every`-th layer of the rest routes its FFN: a router (h × experts
 * weights), top-k routed experts and `shared_experts` always-on experts, each
 * a (gated) FFN of expert_ffn_hidden. Counted as the field counts them:
 *   - total parameters hold every expert (DeepSeek-V3 671B);
 *   - active parameters are those one token passes through: attention,
 *     dense FFNs, router, k + shared experts per MoE layer, embeddings and
 *     output (DeepSeek-V3 37B, Qwen3-235B-A22B 22B);
 *   - model FLOPs are 6 × the active matmul weights per token plus the
 *     attention core and the logits (MFU of a MoE run, as DeepSeek, Megatron
 *     Core and torchtitan report it). The MTP modules (mtp_depth) are
 *     neither in the 671B nor in the MFU basis; tf_param_counts.mtp counts them.
 * Multi-head latent attention (kv_lora_rank > 0; DeepSeek-V2/V3): the query
 * goes through a q_lora_rank bottleneck (or a full h × heads·qk_dim matrix),
 * keys and values through a shared kv_lora_rank latent plus one
 * rope_head_dim rotary key, expanded per head to head_dim (+ rope) for keys
 * and v_head_dim for values; the KV cache holds only the latent and the
 * rotary key. Sliding-window or chunked attention (attn_window) limits
 * what a layer attends to, except every global_every-th layer. */
int tf_is_moe(const llm_spec *m);
/* Layers with a routed FFN, and with a dense one (they sum to layers). */
int tf_moe_layers(const llm_spec *m);
int tf_dense_layers(const llm_spec *m);
/* Elements of the KV cache one layer keeps per token: 2·kv_heads·head_dim,
 * or kv_lora_rank + rope_head_dim under MLA (tf_kv_cache_elems: summed over
 * layers for a context of ctx tokens per sequence, windows applied). */
double tf_kv_elems_per_layer(const llm_spec *m);
double tf_kv_cache_elems(const llm_spec *m, double ctx);
/* Keys a layer attends to on average over the layers, for a context of
 * ctx tokens (ctx without windows; windowed layers see min(ctx, window)). */
double tf_mean_attended(const llm_spec *m, double ctx);
/* (query, key) pairs of c prompt positions after o cached ones, o..o+c-1,
 * averaged over the layers: c·o + c(c+1)/2 on global layers, fewer on
 * windowed or chunked ones (attn_window, attn_chunked). */
double tf_mean_pairs(const llm_spec *m, double o, double c);
/* Layers of m that attend to a window of attn_window keys (0 without one). */
int tf_windowed_layers(const llm_spec *m);

/* The parameter counts of a model, whole and by part: what its weights
 * hold (a MoE model's every expert) and what one token passes through. */
typedef struct tf_param_counts {
    double expert_ffn;           /* one routed expert's FFN */
    double dense_ffn;            /* a dense layer's FFN */
    double router;               /* a MoE layer's router (0 for a dense model) */
    double attn;                 /* one layer's attention matmuls (QKV or MLA
                                    projections, output) */
    double layer_matmul;         /* one layer's matmuls (QKV, output projection,
                                    FFN), mean over the layers, every expert */
    double layer_active_matmul;  /* of those, what one token uses */
    double layer;                /* one layer with its two norms, mean over layers */
    double moe_layer_routed;     /* a MoE layer's routed experts (every expert) */
    double moe_layer_other;      /* what a MoE layer holds besides them: attention,
                                    router, shared experts, norms */
    double dense_layer;          /* a dense layer with its norms (layer's dense
                                    counterpart of moe_layer_other) */
    double embedding;            /* input embedding */
    double output;               /* output projection (0 when tied) */
    double total;                /* every parameter */
    double active;               /* those one token passes through (= total for
                                    a dense model) */
    double mtp;                  /* multi-token prediction modules (beyond total) */
} tf_param_counts;

/* Fill c from m. */
void tf_param_counts_of(const llm_spec *m, tf_param_counts *c);

/* Forward FLOPs per token of one layer's matmuls (active weights, mean
 * over layers). */
double tf_layer_gemm_flops(const llm_spec *m);
/* Forward FLOPs per token of one layer's attention core, full square, for
 * a context of seq keys (mean over layers when some are windowed). */
double tf_layer_attn_flops(const llm_spec *m, double seq);
/* Forward FLOPs per token of the output projection. */
double tf_output_flops(const llm_spec *m);

/* FLOPs per token of a training step (forward + backward) by the model
 * alone: the MFU basis. */
double tf_model_flops_per_token(const llm_spec *m, double seq);
/* FLOPs per token the GPUs execute under a recompute mode: full adds a
 * forward of every layer; selective adds a forward of the attention core
 * (Korthikanti et al. 2022) when layer_fraction is 0, else a whole forward
 * of that fraction of the layers. The output layer is never recomputed. */
double tf_hw_flops_per_token(const llm_spec *m, double seq, recompute r, double layer_fraction);

/* Fraction of the full-square attention work a causal kernel executes for a
 * sequence of seq tokens split over cp ranks (load-balanced chunks): about
 * (s+1)/2s. */
double tf_causal_fraction(double seq);

/* The four GEMMs of one layer's forward pass on one GPU of a tp-way split,
 * for `tokens` rows: QKV, output projection, FFN in (gate and up fused),
 * FFN out. m = tokens, k = reduction dimension, n = output columns. */
typedef struct tf_gemm { double m, n, k; } tf_gemm;
void tf_layer_gemms(const llm_spec *m, double tokens, int tp, tf_gemm out[4]);

/* The matmuls torchtitan's per-op selective checkpointing (selective_kind
 * SELECTIVE_OPS, models/stack.h) runs again in a layer's backward, in the
 * shapes of tf_layer_gemms; returns how many (at most 3). The policy saves
 * every matmul output but the block's even-numbered ones: of wq, wk, wv, wo,
 * w1, w3, w2 (GeLU: fc1, fc2) it recomputes wk, wo and w3 (fc2). The
 * backward needs wk's output (K, for the attention backward) and w3's (the
 * gated activation's backward and w2's input), not fc2's; wo's output only
 * when the residual after attention is not saved (no sequence-parallel
 * reduce-scatter, whose output the policy keeps). Eager checkpointing
 * replays the block up to the last tensor the backward needs, wo included;
 * torch.compile's partitioner recomputes only what the backward needs:
 * with_wo says whether wo runs again. */
int tf_layer_sac_ops_gemms(const llm_spec *m, double tokens, int tp, int with_wo, tf_gemm out[3]);
/* The GEMMs of one layer's attention on one GPU of a tp split, for `tokens`
 * rows: QKV and the output projection (2), or under MLA the query down and
 * up projections (without q_lora_rank one h x heads*qk_dim matrix), the
 * KV down projection to the latent and rotary key, its up projection to
 * keys and values, and the output projection (5 or 4). The down
 * projections are replicated over tp (Megatron-Core's MLA runs them as
 * plain linears); the rest split by columns or rows. Returns the count. */
#define TF_ATTN_GEMMS_MAX 5
int tf_attn_gemms(const llm_spec *m, double tokens, int tp, tf_gemm out[TF_ATTN_GEMMS_MAX]);
/* The two GEMMs of a (gated) FFN of `inner` columns split over tp. */
void tf_ffn_gemms(const llm_spec *m, double tokens, double inner, int tp, tf_gemm out[2]);

/* Memory traffic of the elementwise work of one layer's forward pass, bytes
 * per token at act_bytes per element: norms and residual adds over the
 * hidden state (divided by tp only with sequence parallelism), and the FFN
 * activation function and rotary embedding over tensor-parallel columns
 * (always divided by tp). The backward pass moves about twice as much.
 * Counted twice: as fused kernels (one read of each input and one write of
 * each output per chain of ops) and as PyTorch eager ops (every op of the
 * Llama model code a kernel of its own, fp32 upcasts included), with the
 * kernels each way launches. */
typedef struct tf_elementwise {
    double hidden_bytes;   /* norms, residual adds: replicated across tp without SP */
    double split_bytes;    /* activation function, rotary: split across tp */
    double hidden_bytes_eager;   /* the same work as eager ops */
    double split_bytes_eager;
    double kernels;        /* elementwise kernels per layer forward, fused */
    double kernels_eager;  /* and eager */
} tf_elementwise;
void tf_layer_elementwise(const llm_spec *m, double act_bytes, tf_elementwise *e);

/* Bytes per score element that unfused attention moves in the forward pass
 * (write QK^T, read/write scale-mask-softmax, read/write dropout and its
 * mask, read for the product with V): 13 at 2-byte scores (Megatron-LM
 * 2021 kernels). The backward pass moves about twice as much. */
double tf_unfused_score_bytes(double act_bytes);

#endif
