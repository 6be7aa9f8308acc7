/*
 * serving: how long one batch iteration of an LLM inference server takes,
 * and how much KV cache fits, from the roofline of each kernel.
 *
 * One iteration runs every sequence of the batch through the model once:
 * decode sequences add one token each, prefill sequences add a chunk of
 * their prompt (continuous batching mixes both). Per kernel, on one GPU of
 * a tp-way tensor-parallel group, time = max(FLOPs / rate, bytes / HBM):
 *
 *   linear layers   tokens × 2·W FLOPs against the weight bytes (read once
 *                   per iteration) plus activations: compute-bound with many
 *                   tokens (prefill), memory-bound at small batch (decode)
 *   lm head         one row per sequence that samples a token this iteration
 *   attention       prefill: 4·q_dim FLOPs per (query, key) pair over the
 *                   causal triangle, at a forward-kernel efficiency
 *                   (compute-bound); decode: the whole KV
 *                   cache of every decode sequence read once (memory-bound)
 *   elementwise     norms, residuals, rotary, activation, KV writes (HBM)
 *   tensor parallel 2 all-reduces per layer of tokens × hidden × 2 bytes and
 *                   an all-gather of the logits (models/collective)
 *   launch gaps     a fixed time per kernel: launch and tail between
 *                   dependent kernels that no roofline sees (a routed-
 *                   expert FFN launches 6 more than a dense one)
 *   host            the CPU prepares the next iteration meanwhile; an
 *                   iteration lasts at least 29.4 us per sequence
 *
 * The terms add up: kernels of one iteration run one after another. Weight
 * precision sets the bytes per weight (bf16 2, fp8 1, int4 0.5) and the
 * tensor rate (fp8: W8A8 on the FP8 tensor cores, its bf16 inputs turned into
 * fp8 by passes of their own where the engine runs them, act_quant_fp8;
 * int8: W8A8 SmoothQuant;
 * int4: W4A16, dequantised in the kernel, so bf16 tensor rate). The
 * embedding and the lm head stay bf16 under quantisation, as ModelOpt,
 * AWQ and GPTQ checkpoints keep them. fp4 weights are NVFP4 (an E2M1
 * element plus an FP8 scale per 16: 4.5 bits) or MXFP4 (an E8M0 scale per
 * 32: 4.25 bits), run on FP4 tensor cores where the GPU has them (W4A4;
 * an NVFP4 GEMM input not already fp4 pays a quantisation pass,
 * docs/fp4-serving-path.md),
 * else dequantised to bf16 (W4A16); on a mixture-of-experts model only the
 * experts are fp4 and the rest stays bf16, as GPT-OSS ships.
 *
 * Mixture of experts (docs/moe-serving.md): memory holds every expert
 * (total parameters), FLOPs count the experts a token goes to (active
 * parameters), and a step reads the experts its tokens touch: for B tokens
 * routed top-k of E uniformly, E·(1 - (1 - k/E)^B) distinct experts. With
 * expert parallelism (ep) the routed experts are sharded over ep GPUs (each
 * sliced over tp/ep when ep < tp); when ep > tp, attention runs data
 * parallel in ep/tp groups of tp GPUs. Each MoE layer adds an all-to-all
 * dispatch and combine over the ep GPUs, exposed (not overlapped).
 * Multi-head latent attention caches its latent (DeepSeek-V3: 576 elements
 * per layer per token, the same on every tp rank); sliding-window layers
 * read at most their window in decode.
 *
 * Memory per GPU: weights + activation workspace for the token budget +
 * a runtime reserve; a fraction of what is left holds the paged KV cache,
 * in blocks of block_tokens tokens.
 *
 * Pure functions of plain structs, allocation-free; serve_iter_s is called
 * once per simulated iteration (millions of times a run): a handful of cbrt
 * and two collective lookups.
 */
#ifndef CT_SERVING_MODEL_H
#define CT_SERVING_MODEL_H

#include "models/catalog.h"
#include "models/collective.h"
#include "models/train_plan.h"

#define SERVE_GRAPH_SIZES_MAX 128

/* Named efficiencies and sizes of a serving stack. Defaults and their
 * sources: serve_params_default() and the table in models/serving.c. */
typedef struct serve_params {
    double kv_memory_fraction;   /* share of memory left after weights, activations and
                                    the reserve given to the KV cache (0.9) */
    double runtime_reserve_bytes;/* CUDA context, library workspaces, NCCL buffers,
                                    CUDA graphs, per GPU (2 GB) */
    int block_tokens;            /* tokens per KV block (16) */
    double kernel_gap_s;         /* launch and tail time per kernel (2 us) */
    double kernels_per_layer;    /* kernels of one layer's forward (12) */
    double eff_fp8_gemm;         /* FP8 GEMM efficiency relative to BF16 on GPUs with an
                                    FP8 path (0.70 / 0.75 = 0.933) */
    double eff_prefill_attention;/* causal forward attention kernels vs the bf16 tensor
                                    peak (0.50); the catalog's eff-attention is forward +
                                    backward, for training */
    double host_s_per_seq;       /* host (CPU) work per sequence of an iteration: scheduling,
                                    input preparation, sampling bookkeeping (29.4 us); an
                                    iteration lasts at least this times its sequences */
    double moe_kernels_per_layer;/* kernels of a routed-expert FFN beyond the dense FFN's
                                    three (5) */
    /* The engine (models/catalog/engines.xml; defaults: the ideal engine) */
    double host_step_s;          /* host time of every iteration besides its sequences' (0) */
    double engine_gemm_eff;      /* the engine's GEMM rate over the serving model's (1): an
                                    older engine's unfused, untuned kernels (engines.xml) */
    double engine_kv_eff;        /* the engine's KV-cache read rate in decode attention over the
                                    serving model's (1): an older paged-attention kernel */
    int host_sync;               /* 1: host and GPU work add up (vLLM's synchronous
                                    loop); 0: the host works ahead, the longer sets the pace */
    int act_quant_fp8;           /* 1: a kernel of its own turns each bf16 input of an FP8
                                    GEMM into fp8 (TensorRT-LLM's PyTorch backend); 0: the
                                    conversion is fused into its producer, not priced (0;
                                    docs/fp4-serving-path.md) */
    int cutlass_moe;             /* 1: the routed experts run TensorRT-LLM's CUTLASS fused MoE,
                                    priced by the GPU's measured cutlass-moe-* law where it has
                                    one for the experts' precision; 0: grouped GEMMs at the
                                    copy rate (0; docs/moe-serving.md "The CUTLASS fused MoE") */
    int trtllm_fmha;             /* 1: prefill attention runs TensorRT-LLM's context FMHA, priced
                                    by the GPU's measured context-fmha-* law (fp8 compute with an
                                    fp8 KV cache); 0: causal FLOPs at eff_prefill_attention (0;
                                    docs/serving.md "Prefill attention, measured") */
    int trtllm_mla;              /* 1: an MLA model's decode attention runs TensorRT-LLM's MLA
                                    generation call, priced by the GPU's measured mla-gen-* law
                                    for the KV cache's precision; 0: the absorbed FLOPs at
                                    eff-attention or the latent read, the longer (0;
                                    docs/moe-serving.md "MLA decode, measured") */
    int moe_comm;                /* how an attention-DP replica moves tokens to its experts and
                                    back (serve_moe_comm; SERVE_MOE_COMM_AUTO: docs/moe-serving.md
                                    "MoE communication under attention DP") */
    int n_graph_sizes;           /* captured CUDA-graph batch sizes, ascending (0: none) */
    int graph_sizes[SERVE_GRAPH_SIZES_MAX];
    int graph_rank_limit;        /* one rank's batch limit: padding never takes a rank's batch
                                    above it, the engine runs that batch uncaptured at its own
                                    size (TensorRT-LLM's CUDAGraphRunner._get_padded_batch);
                                    0: no limit */
} serve_params;

void serve_params_default(serve_params *p);

/* Read a list of CUDA-graph batch sizes, "1,2,4,8-248/8,256-512/16"
 * (items: a size, or first-last/step) into p (ascending, distinct). Returns
 * 0, or -1 with the reason in why (not a positive whole number, a range
 * that is empty or descends, sizes out of order, more than
 * SERVE_GRAPH_SIZES_MAX sizes). "" gives none. */
int serve_graph_sizes_parse(const char *z, serve_params *p, char *why, size_t whylen);

/* The MoE communication of a replica whose attention runs data parallel
 * (ep > tp), as the `moe-comm` attribute names it:
 *   AUTO       TensorRT-LLM 1.2's own choice: ALLTOALL while the replica's
 *              GPUs are inside one NVLink domain (an HGX node, a GB200 NVL72
 *              rack), ALLGATHER when it spans domains
 *   ALLTOALL   each GPU sends its tokens' rows to their experts' GPUs and
 *              takes the outputs back (NVLink one- or two-sided all-to-all,
 *              DeepEP)
 *   ALLGATHER  every GPU gathers every token of the replica before the MoE
 *              and the partial outputs are reduce-scattered after it (NCCL;
 *              the fallback of TensorRT-LLM, vLLM and SGLang)
 * serve_moe_comm_parse reads "auto", "alltoall", "allgather"; -1 when
 * unknown. */
enum { SERVE_MOE_COMM_AUTO, SERVE_MOE_COMM_ALLTOALL, SERVE_MOE_COMM_ALLGATHER };
int serve_moe_comm_parse(const char *z);

/* The batch a decode-only iteration of n sequences runs as: the smallest
 * captured size at least n, or n above the largest (or without graphs). */
double serve_graph_batch(const serve_params *p, double n);

/* Name, default and source of each serve_params figure, for the README and
 * for tests that hold the defaults to their sources. NULL-terminated. */
typedef struct serve_param_doc { const char *name; double def; const char *source; } serve_param_doc;
extern const serve_param_doc serve_param_docs[];

/* A model deployed on a tp-way group of one GPU type: constants computed
 * once (serve_model_init) so serve_iter_s is cheap. Plain value; copyable. */
/* Bytes per stored element of a weight or KV precision (fp4: with the
 * block scales of its format, fp4_element_bytes in models/train_plan.h;
 * FP4_NONE reads as NVFP4). */
double serve_elem_bytes(precision p, fp4_recipe fmt);

/* How one replica's GPUs split the model: attention over tp, routed
 * experts over ep. The replica holds max(tp, ep) GPUs (serve_layout_gpus);
 * one of tp and ep divides the other. */
typedef struct serve_layout {
    int tp;                      /* tensor parallelism of attention and dense layers */
    int ep;                      /* expert parallelism (1: experts split over tp like a dense FFN) */
    fp4_recipe fp4;              /* what fp4 weights and KV mean (FP4_NONE: nvfp4) */
} serve_layout;

int serve_layout_gpus(const serve_layout *l);

typedef struct serve_model {
    llm_spec m;
    gpu_spec g;
    fabric f;                    /* for tp > 1 */
    int has_fabric;
    int tp;
    precision weights;           /* storage precision of the linear layers */
    precision compute;           /* tensor-core precision of the linear layers */
    precision kv;                /* KV cache element precision */
    serve_params p;
    /* derived, per GPU of the group */
    double weight_bytes;         /* all weights held by one GPU */
    double layer_weight_bytes;   /* one layer's linear weights on one GPU */
    double kv_bytes_per_token;   /* K and V of all layers, one token, one GPU */
    double activation_bytes;     /* workspace for token_budget tokens */
    double kv_capacity_bytes;    /* KV cache per GPU; <= 0 when the model does not fit */
    double kv_capacity_tokens;   /* whole blocks × block_tokens */
    long long kv_blocks;
    int token_budget;
    /* cached rates */
    double hbm_bytes_per_s;
    double fp8_gemm_bytes_per_s; /* weight stream of an FP8 dense GEMM bound by it (gpus.xml
                                    eff-hbm-gemm-fp8; else hbm_bytes_per_s) */
    double fp8_gemm_call_s;      /* its fixed time a call beyond the launch gap (gpus.xml
                                    gemm-call-latency-fp8 less kernel_gap_s; 0: none) */
    double bf16_gemm_bytes_per_s; /* the same for a BF16/FP16 dense GEMM (gpus.xml
                                     eff-hbm-gemm-bf16; else hbm_bytes_per_s) */
    double bf16_gemm_call_s;     /* (gpus.xml gemm-call-latency-bf16 less kernel_gap_s; 0: none) */
    double cmoe_layer_s;         /* the CUTLASS fused-MoE law of the experts' precision (gpus.xml
                                    cutlass-moe-*): fixed time per MoE layer, 0 where the law
                                    is off (p.cutlass_moe 0 or no figure for the GPU) */
    double cmoe_expert_s;        /* its time per local expert touched */
    double cmoe_route_bytes_per_s; /* the rate the MoE routing kernels' traffic moves at: the
                                      law's, else hbm_bytes_per_s */
    double prefill_attn_flops_per_s; /* the rate of prefill attention's causal FLOPs: the
                                        context-FMHA law's, else eff_prefill_attention of the
                                        bf16 peak (× eff_sustained) */
    double ctx_fmha_s;           /* the law's fixed time of one layer's call (0: law off) */
    double ctx_fmha_tile_s;      /* its time per 64-row query tile and head of one GPU (0: off) */
    double mla_gen_s;            /* the MLA generation law (p.trtllm_mla): fixed time of one
                                    layer's call (0: law off) */
    double mla_gen_seq_s;        /* its time per sequence of one GPU, its heads included */
    double mla_gen_flops_per_s;  /* the rate of its absorbed (query, key) FLOPs */
    double mla_gen_bytes_per_s;  /* the rate of its latent-cache read */
    double q_dim, kv_dim, hidden, vocab;
    double kv_heads_per_gpu;
    int layers;
    int experts, experts_per_token;
    /* mixture of experts and layout */
    int ep, etp, attn_dp, gpus;  /* experts over ep GPUs, each sliced etp ways; attention in
                                    attn_dp data-parallel groups of tp GPUs; gpus per replica */
    int moe_allgather;           /* 1: the MoE's tokens are all-gathered and its outputs
                                    reduce-scattered (p.moe_comm resolved; attn_dp > 1 only) */
    int moe_layers, dense_layers, shared_experts;
    double expert_params;        /* one expert's FFN weights */
    double w_bytes, w_expert_bytes;   /* bytes per weight: non-expert and expert linear layers */
    precision compute_expert;    /* tensor precision of the experts' GEMMs */
    fp4_recipe fp4;
    double total_params, active_params;   /* tf_param_counts' total and active */
    double attn_params;          /* one layer's attention matmul weights (tf_param_counts.attn) */
    double act_quant_elems;      /* NVFP4 W4A4, or FP8 with act_quant_fp8: activation elements
                                    per token of the attention group that a separate
                                    quantisation kernel turns into fp4 or fp8 before their
                                    GEMM, all layers (0 on other paths;
                                    docs/fp4-serving-path.md) */
    double act_quant_kernels;    /* those kernels per iteration (each one launch gap) */
    double act_quant_ar_elems;   /* FP8 at tp > 1: the passes a fused all-reduce absorbs while
                                    its message fits the fused kernel's workspace; paid as
                                    above in an iteration whose message does not */
    double act_quant_ar_kernels; /* those passes' kernels */
    double act_quant_ar_tokens;  /* the most tokens per attention group whose all-reduce
                                    message fits that workspace (0: no such fusion) */
    int decode_read_bound;       /* 1: decode attention's compute is at most half its KV read
                                    at every context (serve_model_init proves it), so
                                    serve_context_s skips the compute's price; 0: price both */
} serve_model;

/* Build the constants for model m on GPU g with tp-way tensor parallelism
 * over fabric f (may be NULL when tp == 1), weight precision w (bf16, fp16,
 * fp8, int8, int4), KV precision kv, a token budget per iteration (sizes
 * the activation workspace) and params p (NULL: defaults). Returns 0, or -1
 * with a reason in why when the input is invalid (tp < 1, a tp that does
 * not divide the heads, a precision without weights meaning, NULL model or
 * GPU); sm is then unchanged. A model too big for the GPUs is not an error
 * here: kv_capacity_bytes <= 0 says so (serve_fits). */
int serve_model_init(serve_model *sm, const llm_spec *m, const gpu_spec *g, const fabric *f, int tp,
                     precision w, precision kv, int token_budget, const serve_params *p, char *why,
                     size_t whylen);

/* The same with a layout: expert parallelism and the fp4 format (w and kv
 * may then also be fp4). Invalid as well: ep on a dense model, ep not
 * dividing the experts, tp and ep of which neither divides the other. */
int serve_model_init_layout(serve_model *sm, const llm_spec *m, const gpu_spec *g, const fabric *f,
                            const serve_layout *lay, precision w, precision kv, int token_budget,
                            const serve_params *p, char *why, size_t whylen);

/* The attention constants of sm on GPU g (models/serving_attn.c): the
 * rates and laws serve_context_s prices with. serve_model_init_layout calls
 * it once the shape, memory and engine parameters are set. */
void serve_attn_init(serve_model *sm, const gpu_spec *g);

/* 1 when the weights, workspace and reserve leave room for at least one
 * sequence of `tokens` tokens in the KV cache. */
int serve_fits(const serve_model *sm, double tokens);

/* Weight bytes of the whole model (all GPUs of the group; replicas of
 * attention under attention data parallelism counted each): what a load
 * moves. */
double serve_model_bytes(const serve_model *sm);

/* What one iteration computes. Tokens and pairs are totals over the batch. */
typedef struct serve_batch {
    double prefill_tokens;       /* prompt tokens computed (chunks) */
    double prefill_pairs;        /* Σ over those tokens of the keys each attends to
                                    (causal: a chunk of c tokens after o cached ones
                                    adds c·o + c(c+1)/2) */
    double prefill_done;         /* sequences whose prompt completes (they sample a token) */
    double decode_seqs;          /* sequences generating one token */
    double decode_ctx;           /* Σ of their context lengths (KV tokens read) */
    double prefill_tiles;        /* Σ over the prompt chunks of their 64-row query tiles,
                                    ceil(c / 64) (serve_chunk_tiles): what the context-FMHA law
                                    charges per tile beside the pairs */
    double decode_local;         /* chunked attention (llm attn_chunked): Σ over the decoding
                                    sequences of the keys a chunked layer reads, ((ctx - 1) mod
                                    chunk) + 1 each; used when local_known, else estimated from
                                    the mean context as a window's */
    int local_known;
} serve_batch;

/* Prefill pairs of a chunk of c tokens after o cached ones on a global
 * layer, the causal triangle's c·o + c(c+1)/2 (the simulator takes each
 * layer kind's, windows and chunks applied: models/transformer.h
 * tf_mean_pairs). */
double serve_chunk_pairs(double c, double o);

/* The 64-row query tiles of a prompt chunk of c tokens, ceil(c / 64). */
double serve_chunk_tiles(double c);

/* Under the context-FMHA law (p.trtllm_fmha and the GPU's figures), what
 * an iteration with prefill pays beside its causal FLOPs: each layer's
 * fixed call time and the time per query tile and head over `tiles` 64-row
 * query tiles; 0 without prefill (tiles 0) or with the law off. */
double serve_prefill_fmha_s(const serve_model *sm, double tiles);

/* Where an iteration's time goes (seconds; the parts sum to the total). */
typedef struct serve_breakdown {
    double linear_s, lm_head_s, attention_s, kv_read_s, elementwise_s, comm_s, launch_s;
    double a2a_s;                /* of comm_s: expert-parallel dispatch and combine */
    double host_s;               /* not a part: the host's time for the iteration; the
                                    total is at least this (serve_host_s) */
    double total_s;
} serve_breakdown;

/* Time of one iteration; 0 for an empty batch. bd may be NULL. It is the
 * sum of the two parts below (which a caller may price separately: the
 * first depends only on two whole numbers, so a simulator can memoise it),
 * or the host time of its sequences when that is longer. */
double serve_iter_s(const serve_model *sm, const serve_batch *b, serve_breakdown *bd);

/* The part that depends on how many tokens go through the layers and how
 * many rows of logits are sampled: linear layers, lm head, elementwise
 * work, tensor-parallel collectives, launch gaps. bd may be NULL (else its
 * fields of these parts are set, the others left). */
double serve_tokens_s(const serve_model *sm, double tokens, double rows, serve_breakdown *bd);

/* serve_tokens_s in two halves, each a function of one whole number, so
 * that a simulator may remember each in a small table: what `tokens`
 * tokens cost through the layers (linear layers, elementwise work, the
 * tensor-parallel all-reduces, expert-parallel dispatch), and what
 * sampling `rows` rows of logits costs (lm head, its all-gather).
 * serve_tokens_sum adds two halves up as serve_tokens_s does: the same
 * number, bit for bit (tokens > 0). bd may be NULL. */
typedef struct serve_tok_part {
    double linear_s, elementwise_s, allreduce_s, a2a_s;
    double quant_kernels;        /* activation-quantisation kernels of the iteration */
} serve_tok_part;
typedef struct serve_row_part { double lm_head_s, allgather_s; } serve_row_part;
void serve_tokens_part(const serve_model *sm, double tokens, serve_tok_part *p);
void serve_rows_part(const serve_model *sm, double rows, serve_row_part *p);
double serve_tokens_sum(const serve_model *sm, const serve_tok_part *tp, const serve_row_part *rp,
                        serve_breakdown *bd);

/* The part that depends on context: prefill attention over prefill_pairs
 * (query, key) pairs in prefill_tiles 64-row query tiles (serve_chunk_tiles;
 * what the context-FMHA law charges beside the pairs, serve_prefill_fmha_s)
 * and the decode reads of decode_ctx cached tokens over decode_seqs
 * sequences (their mean context decides what sliding-window layers read). */
double serve_context_s(const serve_model *sm, double prefill_pairs, double prefill_tiles, double decode_ctx,
                       double decode_seqs, serve_breakdown *bd);
/* serve_context_s with decode_local, the chunked layers' keys summed over
 * the decoding sequences (serve_batch decode_local); < 0: not known, the
 * window's estimate from the mean context. */
double serve_context_local_s(const serve_model *sm, double prefill_pairs, double prefill_tiles, double decode_ctx,
                             double decode_seqs, double decode_local, serve_breakdown *bd);

/* One MoE layer's routed experts on one GPU for `tokens` tokens of the
 * replica, as NVIDIA's fused-MoE measurements time them (router GEMM and
 * shared experts left out): the permute, activation and finalize
 * traffic, the grouped GEMMs and, under the CUTLASS fused-MoE law
 * (p.cutlass_moe), its fixed and per-expert time; the kernels' launch gaps
 * outside that law are serve_tokens_sum's. 0 for a dense model. */
double serve_moe_layer_s(const serve_model *sm, double tokens);

/* Distinct experts of E that B tokens routed top-k touch, in expectation
 * under uniform routing: E·(1 - (1 - k/E)^B), at least 1. */
double serve_experts_touched(double E, double k, double B);

/* Rows a decode-only iteration of `seqs` sequences runs through its linear
 * layers when the engine replays captured graphs. Every attention-DP rank
 * replays the same graph: the largest rank's batch, ceil(seqs / attn_dp)
 * under the even spread the step model assumes, padded to the next captured
 * size, so the replica runs attn_dp times that size (TensorRT-LLM gathers
 * each rank's batch size and pads all of them to the padded maximum;
 * CUDAGraphRunner._get_padded_batch). A rank batch above the largest
 * captured size, or one whose padded size passes p.graph_rank_limit, runs
 * uncaptured at its own size: seqs. Without graphs: seqs. */
double serve_graph_rows(const serve_model *sm, double seqs);

/* Host time of an iteration of `seqs` sequences: host_step_s plus
 * host_s_per_seq per sequence of one attention-DP group (each group's rank
 * runs its own loop over its share; seqs / attn_dp, all of them without
 * attention DP). With an overlapping engine the CPU prepares
 * iteration i+1 while the GPUs run iteration i (TensorRT-LLM's overlap
 * scheduler, SGLang's zero-overhead scheduler), so an iteration lasts the
 * longer of its GPU time and this (docs/moe-serving.md); with a synchronous
 * one (host_sync) the two add up (serve_pace_s). */
double serve_host_s(const serve_model *sm, double seqs);

/* The duration of an iteration whose GPU work takes gpu_s and whose host
 * work takes host_s, by the engine's scheduler. */
double serve_pace_s(const serve_params *p, double gpu_s, double host_s);

/* Lower bound of any decode step: all weights of one GPU read once at the
 * HBM peak (no efficiency). The roofline floor test holds serve_iter_s to
 * it. */
double serve_weight_floor_s(const serve_model *sm);

/* The KV precision a stack uses by default for a weight precision: FP8
 * and FP4 checkpoints (NVIDIA ModelOpt, as TensorRT-LLM serves them)
 * quantise the KV cache to FP8; the others keep it in bf16 (fp16 for fp16). */
precision serve_default_kv(precision weights);

/* Seconds to move `bytes` over PCIe for one GPU of the node (swap, load). */
double serve_pcie_s(const node_spec *node, double bytes);

#endif
