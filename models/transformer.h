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
    double f;          /* FFN inner size */
    double heads, kv_heads, head_dim;
    double q_dim;      /* heads·head_dim (= h) */
    double kv_dim;     /* kv_heads·head_dim */
    double vocab;
    int layers;
    int gated;         /* 1: three FFN matrices */
} tf_dims;

/* Fill d from m (kv_heads 0 means heads). */
void tf_dims_of(const llm_spec *m, tf_dims *d);

/* Weights of one layer's matmuls (QKV, output projection, FFN). */
double tf_layer_matmul_params(const llm_spec *m);
/* One layer's weights including its two norms. */
double tf_layer_params(const llm_spec *m);
/* Input embedding, output projection (0 when tied), total parameters. */
double tf_embedding_params(const llm_spec *m);
double tf_output_params(const llm_spec *m);
double tf_params(const llm_spec *m);

/* Forward FLOPs per token of one layer's matmuls. */
double tf_layer_gemm_flops(const llm_spec *m);
/* Forward FLOPs per token of one layer's attention core, full square, for
 * a context of seq keys. */
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
