/*
 * stack: named software stacks, the figures of a training step that belong
 * to the software a job runs rather than to its plan or its hardware.
 *
 * A stack profile (models/catalog/stacks.xml, a <stack> entry of the
 * catalog, its source in a comment beside it) says which attention kernel
 * the layers run, whether tensor parallelism uses sequence parallelism,
 * how much tensor-parallel, data-parallel and pipeline communication hides
 * behind compute, how FSDP gathers (prefetched or not, resharded after the
 * forward or kept), the idle time between kernels, the host work per step
 * and the FP8 recipe a job with precision="fp8" uses by default.
 * docs/software-stacks.md describes every profile.
 *
 * The FP8 recipes (Transformer Engine and torchao):
 *   delayed     per-tensor scale from an amax history: one read per cast
 *   tensorwise  per-tensor scale from the tensor itself ("current scaling"):
 *               an amax pass, then the cast: two reads
 *   rowwise     a scale per row (torchao float8 rowwise): two reads, and
 *               GEMMs with per-row scales in their epilogue
 *   mxfp8       a scale per 32 elements (OCP MX, Blackwell tensor cores):
 *               block amax and cast in one read
 *   blockwise   DeepSeek-V3's fine-grained scaling (arXiv 2412.19437,
 *               section 3.3.1): an FP32 scale per 1x128 tile of activations
 *               and per 128x128 block of weights, amax and cast in one read
 *               of the tile (Transformer Engine Float8BlockScaling)
 * Layers: models/catalog <- stack <- train_plan.
 */
#ifndef CT_STACK_H
#define CT_STACK_H

#include <stddef.h>

#include "models/catalog.h"

typedef enum stack_attention {
    ATTN_UNFUSED,          /* QK^T, scale+mask, softmax, dropout, PV: separate kernels over s x s */
    ATTN_FUSED_SOFTMAX,    /* as unfused, with scale+mask+softmax in one kernel (Megatron 2022) */
    ATTN_FLASH2,           /* FlashAttention-2: tiles, no s x s scores in memory */
    ATTN_FLASH3,           /* FlashAttention-3 on Hopper (H100/H200/H800); FlashAttention-2 elsewhere */
    ATTN_COUNT
} stack_attention;

/* What selective recomputation recomputes (train_plan.selective):
 *   AUTO       the stack's kind, else ATTENTION with tp > 1 and LAYERS without
 *   ATTENTION  the attention core and the elementwise ops between GEMMs
 *              (Korthikanti et al. 2022; Megatron-LM, NeMo)
 *   LAYERS     every other layer whole (torchtitan's selective_ac_option="2")
 *   OPS        torchtitan's per-op policy (selective_ac_option="op", the
 *              default of its Llama 3 8B config): the outputs of the matmuls,
 *              SDPA and the TP reduce-scatters are saved, except every second
 *              matmul of a block; everything else is recomputed in the
 *              backward (models/transformer.h, tf_layer_sac_ops_gemms).
 *   MODULES    Megatron-Core's --recompute-modules (train_plan.recompute_modules,
 *              a RECOMPUTE_MOD_* mask): the layer keeps what it keeps without
 *              recomputation but the outputs of the listed modules, which the
 *              backward recomputes (megatron/core/transformer/transformer_config.py,
 *              recompute_modules: "layernorm" the input layernorms, "moe_act"
 *              the activation function of the MoE MLP). Set by the scenario's
 *              recompute-modules=, never by a stack. */
typedef enum selective_kind {
    SELECTIVE_AUTO, SELECTIVE_ATTENTION, SELECTIVE_LAYERS, SELECTIVE_OPS, SELECTIVE_MODULES, SELECTIVE_COUNT
} selective_kind;
enum { RECOMPUTE_MOD_LAYERNORM = 1, RECOMPUTE_MOD_MOE_ACT = 2 };

typedef enum fp8_recipe {
    FP8_NONE, FP8_DELAYED, FP8_TENSORWISE, FP8_ROWWISE, FP8_MXFP8, FP8_BLOCKWISE, FP8_COUNT
} fp8_recipe;

typedef struct stack_spec {
    char name[CATALOG_NAME_MAX];
    char attention[16];              /* a stack_attention name */
    int sequence_parallel;           /* 1: TP runs with sequence parallelism */
    double tp_overlap;               /* fraction of TP communication hidden behind GEMMs */
    int async_tp_pipeline;           /* 1: async TP is PyTorch's symmetric-memory micro-
                                        pipeline (docs/torchtitan-mechanisms.md): a chunk's
                                        transfer hides behind one chunk's GEMM at most */
    double dp_overlap;               /* fraction of the backward (forward) that gradient
                                        reduction (parameter gathers) may hide under */
    double p2p_overlap;              /* fraction of pipeline sends hidden */
    int fsdp_prefetch;               /* 1: FSDP issues the next layer's gather ahead */
    int fsdp_reshard;                /* 1: FSDP frees gathered weights after the forward and
                                        gathers them again for the backward */
    int cp_allgather;                /* 1: context parallelism all-gathers K and V once per
                                        layer pass (PyTorch context_parallel's default rotate
                                        method); 0: passes them hop by hop round the ring */
    int kv_repeat;                   /* 1: K and V reach attention repeated to every query
                                        head (GQA expanded before the kernel) */
    int cp_overlap;                  /* 1: the context-parallel K/V exchange runs beside the
                                        attention blocks; 0: each collective is waited for
                                        where it is issued (traced by torch.compile) */
    int microbatches_per_stage;      /* pp > 1, micro-batch left to the model: this many
                                        micro-batches per pipeline stage (torchtitan: 1);
                                        0: the fastest micro-batch that fits */
    double kernel_gap_s;             /* idle time between dependent kernels */
    double step_overhead_s;          /* host work per step */
    char fp8_recipe[16];             /* recipe under precision="fp8" (an fp8_recipe name) */
    int fp8_weight_cache;            /* 1: FP8 copies of the weights (and their transposes)
                                        persist between micro-batches (Transformer Engine) */
    char pipeline_schedules[32];     /* the pipeline schedules the software runs, comma
                                        separated: "1f1b,interleaved" (default) or "1f1b" */
    char elementwise[16];            /* a stack_elementwise name: how the norms, rotary,
                                        activation and casts run (fused kernels or eager ops) */
    int fp8_param;                   /* 1: FP8 primary weights under precision="fp8" (TE
                                        fp8_model_init; Megatron fp8_param_gather): no bf16 copy */
    int grad_reduce_bf16;            /* 1: gradients accumulate and reduce in bf16 (Megatron
                                        grad_reduce_in_fp32=False, Apex grad_sync_dtype=bf16) */
    char selective[16];              /* a selective_kind name: what recompute="selective"
                                        recomputes under this stack; empty or "auto": by tp */
    int fp8_activations;             /* 1: under precision fp8 (or fp4), DeepSeek-V3's
                                        low-precision storage and communication (sections
                                        3.3.2-3.3.3): the MoE dispatch sends FP8 with 1x128
                                        tile scales (the combine stays BF16), the experts'
                                        SwiGLU inputs are cached in FP8, and the attention
                                        output is cached once in E5M6 (1.5 bytes) for both
                                        the attention backward and the output projection;
                                        0: BF16 (Megatron-Core default) */
    double adam_moment_bytes;        /* bytes of each of Adam's two moments; 0: fp32 (4).
                                        DeepSeek-V3 keeps them in BF16 (section 3.3.2) */
    int comm_sms;                    /* SMs the MoE all-to-all kernels hold while they run
                                        beside compute under moe-overlap (DeepSeek-V3 section
                                        3.5.1: 20 of the H800's 132); the GEMMs are launched
                                        on the rest (docs/moe-training.md). 0: the overlapped
                                        all-to-all slows compute by overlap_slowdown instead */
    double layer_overhead_s;         /* time the GPU waits per layer per micro-batch, whatever
                                        the micro-batch size: the host synchronised with the
                                        device inside each checkpointed layer (DeepSpeed
                                        activation checkpointing's synchronize_each_layer,
                                        CUDA_LAUNCH_BLOCKING=1), so the layer's launches lie
                                        on the critical path. 0: the host runs ahead */
} stack_spec;

/* How a stack runs the elementwise work of a layer (models/transformer.c,
 * tf_layer_elementwise counts both):
 *   fused  one kernel per chain of elementwise ops: each norm, the rotary
 *          embedding of Q and K, the gated activation (Megatron/Transformer
 *          Engine fused kernels; torch.compile's Inductor fusion)
 *   eager  PyTorch eager mode: every op of the model code is its own
 *          kernel that reads its inputs from HBM and writes its output back,
 *          fp32 upcasts included */
typedef enum stack_elementwise { ELEM_FUSED, ELEM_EAGER, ELEM_COUNT } stack_elementwise;

/* Generated from models/catalog_fields.txt, like the other kinds' tables. */
extern const catalog_field catalog_fields_stack[];

/* Names as a scenario spells them; parse returns -1 for an unknown name. */
int stack_attention_parse(const char *z);
const char *stack_attention_name(stack_attention a);
int fp8_recipe_parse(const char *z);
const char *fp8_recipe_name(fp8_recipe r);
int stack_elementwise_parse(const char *z);         /* empty: fused */
int selective_kind_parse(const char *z);            /* empty: auto; a stack's kinds (not modules) */
/* "layernorm moe_act" (spaces or commas): a RECOMPUTE_MOD_* mask; -1 on a
 * name that is not one of them (Megatron-Core's other modules are not priced). */
int recompute_modules_parse(const char *z);
const char *selective_kind_name(selective_kind k);

/* 1 when the stack runs interleaved pipeline schedules (its
 * pipeline-schedules lists "interleaved", or is empty: the default). */
int stack_runs_interleaved(const stack_spec *s);

/* The field-table defaults: what `auto` gives a plan it does not take for
 * the 2021 recipe (see train_plan_auto_stack). */
void stack_defaults(stack_spec *s);

/* The catalog's stack of that name; NULL when absent. */
const stack_spec *stack_find(const catalog *c, const char *name);

/* 0, or -1 with why when an attention or FP8 recipe name is unknown. */
int stack_check(const stack_spec *s, char *why, size_t len);

/* ---- FP8 recipes ---------------------------------------------------------- */

/* Bytes of HBM traffic per element quantized (reads of the bf16 tensor,
 * writes of its FP8 copies and scales). */
double fp8_cast_bytes(fp8_recipe r);

/* Bytes per parameter of the FP8 weight copies a stack that caches them
 * (stack_spec fp8_weight_cache) keeps beside the bf16 weights. */
double fp8_weight_bytes(fp8_recipe r);

#endif
