/*
 * train_plan: the parallel plan of a training job, and the software figures
 * the step model reads beside it.
 *
 * A plan says how a job splits over its GPUs (tensor, pipeline, data and
 * context parallelism), what it shards and recomputes, its batch and the
 * software stack it runs (fused or unfused attention, sequence
 * parallelism: a named profile, models/stack). This header holds the plan's types, their names as a
 * scenario spells them, the defaults a scenario may leave out and the
 * check against a model's architecture. models/memory and models/training
 * both read plans; the dependency runs one way:
 *
 *   training -> memory -> train_plan
 */
#ifndef CT_TRAIN_PLAN_H
#define CT_TRAIN_PLAN_H

#include <stddef.h>

#include "models/catalog.h"
#include "models/stack.h"

typedef enum sharding { SHARD_NONE, SHARD_ZERO1, SHARD_ZERO2, SHARD_FSDP } sharding;
typedef enum recompute { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL } recompute;
/* DUALPIPE: DeepSeek-V3's bidirectional schedule (arXiv 2412.19437, section
 * 3.2.1): micro-batches enter from both ends of the pipeline, forward and
 * backward chunks of two micro-batches run paired so each one's
 * communication hides under the other's compute; bubble (PP/2-1)(F&B+B-3W)
 * (its Table 2), two copies of the parameters, PP+1 micro-batches of
 * activations on a stage. */
typedef enum pp_schedule { PP_1F1B, PP_INTERLEAVED, PP_DUALPIPE } pp_schedule;
/* How a MoE layer's all-to-all dispatch and combine meet compute:
 *   NONE      on the critical path (Megatron-Core's default)
 *   A2A       hidden behind the other micro-batch's forward or backward
 *             (Megatron-Core --overlap-moe-expert-parallel-comm, "1F1B
 *             all-to-all overlap": a forward chunk of one micro-batch runs
 *             beside the backward chunk of another)
 *   DUALPIPE  DeepSeek-V3's overlap of the same pairs inside DualPipe
 *             (section 3.2.1): the same exposure rule, with DualPipe's
 *             bubble when the schedule is dualpipe. */
typedef enum moe_overlap { MOE_OVERLAP_NONE, MOE_OVERLAP_A2A, MOE_OVERLAP_DUALPIPE } moe_overlap;
/* Microscaling FP4 of precision="fp4": NVFP4 (16-element blocks with an
 * E4M3 scale, and one FP32 scale per tensor: NVIDIA, "Pretraining Large
 * Language Models with NVFP4", arXiv 2509.25149, section 2) or MXFP4
 * (32-element blocks with an E8M0 scale: OCP Microscaling Formats (MX)
 * Specification v1.0, 2023, section 5). */
typedef enum fp4_recipe { FP4_NONE, FP4_NVFP4, FP4_MXFP4, FP4_COUNT } fp4_recipe;
/* Megatron-Core's token dispatcher of a MoE layer (--moe-token-dispatcher-type):
 *   FLEX      the host never waits for the device (the default: today's
 *             pricing; DeepEP and HybridEP as flex backends)
 *   ALLTOALL  the NCCL all-to-all dispatcher: dropless, it copies the tokens
 *             per expert and the split sizes to the host and waits for them
 *             once in every MoE layer's forward, before the dispatch
 *             all-to-all (megatron/core/transformer/moe/token_dispatcher.py
 *             at core_v0.15.0, MoEAlltoAllTokenDispatcher.preprocess,
 *             sync point "before_ep_alltoall", and _maybe_dtoh_and_synchronize:
 *             d2h_event.synchronize()), so the device idles while the host
 *             enqueues the all-to-all (train_moe_dispatch_sync_s). */
typedef enum moe_dispatcher { MOE_DISPATCHER_FLEX, MOE_DISPATCHER_ALLTOALL } moe_dispatcher;
/* selective_kind (what selective recomputation recomputes) is in
 * models/stack.h: a stack may name the kind its software runs. */

int sharding_parse(const char *z);          /* -1 when unknown */
const char *sharding_name(sharding s);
int recompute_parse(const char *z);
const char *recompute_name(recompute r);
int pp_schedule_parse(const char *z);
const char *pp_schedule_name(pp_schedule s);
int moe_overlap_parse(const char *z);
const char *moe_overlap_name(moe_overlap o);
int fp4_recipe_parse(const char *z);        /* "nvfp4", "mxfp4"; -1 when unknown */
const char *fp4_recipe_name(fp4_recipe r);
int moe_dispatcher_parse(const char *z);    /* "flex", "alltoall"; -1 when unknown */
/* Bytes per element of an FP4 tensor with its block scales: 0.5 + 1/16
 * (NVFP4: one E4M3 byte per 16; the per-tensor FP32 scale is negligible),
 * 0.5 + 1/32 (MXFP4: one E8M0 byte per 32). */
double fp4_element_bytes(fp4_recipe r);

typedef struct train_plan {
    int tp, pp, dp, cp;              /* gpus = tp*pp*dp*cp */
    sharding sharding;
    int global_batch;                /* sequences per step */
    int micro_batch;                 /* sequences per micro-batch; 0 = auto: the model tries
                                        the divisors of global_batch/dp and keeps the fastest
                                        that fits (result.micro_batch says which) */
    int seq_len;
    precision precision;             /* compute precision of GEMMs (bf16, fp8) */
    recompute recompute;
    pp_schedule schedule;
    int virtual_stages;              /* interleaving factor v (1 for 1F1B); 0 = auto: the
                                        model picks 1F1B or interleaved with the v that is
                                        fastest and fits (result.virtual_stages says which) */
    int sequence_parallel;           /* 1: TP uses reduce-scatter/all-gather (Megatron SP);
                                        negative: not given, the software-stack rule decides
                                        (train_plan_defaults) */
    int attn_unfused;                /* 0: fused attention kernels (FlashAttention, causal
                                        blocks skipped); 1: unfused QK^T, softmax, dropout
                                        and PV kernels over the full s×s scores, as in
                                        Megatron-LM 2021; negative: not given, the
                                        software-stack rule decides */
    selective_kind selective;        /* under recompute=selective: ATTENTION recomputes the
                                        attention core and the elementwise ops between GEMMs
                                        (Korthikanti et al. 2022, the Megatron-LM/NeMo
                                        meaning, made for TP with sequence parallelism);
                                        LAYERS recomputes every other layer whole (the
                                        torchtitan/FSDP meaning: without TP there is no SP to
                                        shard what attention-only recompute leaves); OPS
                                        recomputes what torchtitan's per-op policy does not
                                        save (models/stack.h). AUTO (0): the stack's kind,
                                        else ATTENTION when tp > 1, else LAYERS */
    stack_spec stack;                /* the software stack (models/stack.h). Name empty or
                                        "auto": train_plan_defaults infers it from the plan
                                        (train_plan_auto_stack) and the step model reads the
                                        figures of its train_params; a named profile from the
                                        catalog: its figures replace those train_params
                                        fields, and its attention kernel and sequence
                                        parallelism decide where the plan gives none */
    int stack_given;                 /* 1: stack is a profile the scenario named */
    int fp8_recipe;                  /* under precision fp8: an fp8_recipe; 0 (FP8_NONE):
                                        the stack's (train_plan_defaults resolves it) */
    int attn_kernel;                 /* stack_attention the layers run; resolved by
                                        train_plan_defaults from attn_unfused and the stack */
    int recompute_modules;           /* under SELECTIVE_MODULES: RECOMPUTE_MOD_* (models/stack.h) */
    int async_tp;                    /* 0: the stack's TP overlap; 1: async TP (collectives
                                        decomposed and overlapped with their GEMMs); -1:
                                        vanilla TP, nothing overlapped (scenario async-tp=) */
    /* Mixture of experts (models/train_moe.h); ignored for a dense model. */
    int ep;                          /* expert-parallel size: the experts split over ep
                                        GPUs carved out of the tp*dp*cp ranks as in
                                        Megatron-Core; 0 or 1: every GPU holds every expert */
    int etp;                         /* expert tensor parallel size (each expert's FFN split
                                        over etp GPUs; Megatron-Core
                                        --expert-tensor-parallel-size); 0: 1 */
    double expert_imbalance;         /* tokens of the busiest expert rank / the mean; 0: 1 */
    double capacity_factor;          /* > 0: experts drop tokens beyond this factor of the
                                        mean (GShard), capping the imbalance; 0: dropless */
    int route_nodes;                 /* > 0: node-limited routing: a token's experts lie on
                                        at most this many nodes, and one copy per node
                                        crosses the NICs (DeepSeek-V3 section 2.1.2, M = 4) */
    moe_overlap moe_overlap;         /* all-to-all against compute; -1: not given (dualpipe
                                        under pipeline-schedule dualpipe, else none) */
    int fp4_recipe;                  /* under precision fp4: an fp4_recipe; 0: nvfp4 */
    moe_dispatcher moe_dispatcher;   /* the MoE token dispatcher; 0: flex (no host sync) */
} train_plan;

/* Figures of the step model that belong to the software rather than the
 * hardware (hardware efficiencies live in the catalog: gpu_spec eff_*,
 * node_spec eff_nvlink, nic_spec eff_bw). Each default says where it comes
 * from in train_params_default(); calibration may replace any of them. */
typedef struct train_params {
    double tp_overlap;               /* fraction of TP communication hidden behind GEMMs */
    double dp_overlap;               /* fraction of the last micro-batch's backward (and the
                                        first one's forward) that gradient reduction (and
                                        ZeRO parameter gathers) can hide under */
    double p2p_overlap;              /* fraction of pipeline send/recv hidden */
    double overlap_slowdown;         /* compute slows by this fraction while an overlapped
                                        collective runs (NCCL kernels take SMs and HBM) */
    double kernel_gap_s;             /* idle time between dependent kernels */
    double kernels_per_layer;        /* kernels per layer per forward pass (backward: 2x) */
    double step_overhead_s;          /* per step: data loading, loss scaling, logging */
    double grad_bytes;               /* bytes per gradient element accumulated and reduced */
    double optimizer_state_bytes;    /* per parameter (Adam: fp32 master, m, v = 12) */
    double optimizer_traffic_bytes;  /* HBM bytes the optimizer step moves per parameter */
    double attn_bwd_factor;          /* fused attention backward FLOPs / forward FLOPs */
    double reserved_bytes;           /* per GPU: CUDA context, NCCL buffers, allocator slack */
} train_params;

void train_params_default(train_params *q);

/* Bytes per gradient element for a plan: 2 under fp16 training (loss-scaled
 * fp16 gradients accumulate and reduce in fp16, Megatron-LM's default),
 * else q->grad_bytes (bf16 training keeps fp32 gradients). */
double train_grad_bytes(const train_plan *p, const train_params *q);

/* The stack `auto` chooses for a plan (a scenario without stack=, or with
 * stack="auto"), named and filled into s with the figures that reproduce
 * the step model's defaults:
 *
 *   recompute=full and sharding=none  -> megatron-lm-2021
 *       (Narayanan et al., SC'21): unfused attention, no sequence
 *       parallelism (TP all-reduces whole activations).
 *   sharding=fsdp                     -> torchtitan (FSDP2, fused
 *       attention through PyTorch SDPA, SP with TP)
 *   anything else                     -> megatron-core-2023 (fused
 *       attention, sequence parallelism whenever tp > 1)
 *
 * Each of the three is also a profile of models/catalog/stacks.xml with the
 * same figures, so naming it gives the same step. Why the rule reads the
 * plan is below (train_plan_defaults). */
void train_plan_auto_stack(const train_plan *p, stack_spec *s);

/* Fill the defaults a scenario may leave out (a negative value means "not
 * given"): cp 1, micro_batch 0 (auto, see above), selective kind by tp, the
 * stack (train_plan_auto_stack when none is named), the FP8 recipe (the
 * stack's when none is given), and attention and sequence parallelism from
 * the stack where the plan does not give them. For `auto` this is the rule:
 *
 *   recompute=full and sharding=none  -> the Megatron-LM 2021 recipe
 *       (Narayanan et al., SC'21): unfused attention, no sequence
 *       parallelism (TP all-reduces whole activations).
 *   anything else (selective or no recomputation, or any ZeRO/FSDP
 *   sharding)                         -> the 2022+ stack: fused attention
 *       (FlashAttention), sequence parallelism whenever tp > 1.
 *
 * Why: the two choices go together physically. With unfused attention
 * each layer stores 5·heads·s² bytes of scores per sequence (Korthikanti et
 * al. 2022, Table 2), so unsharded Megatron-LM before 2022 had to recompute
 * whole layers to fit large models, and its SC'21 runs all did. Sequence
 * parallelism with selective recomputation (Korthikanti et al. 2022) and
 * FlashAttention (Dao et al. 2022) removed that need, so a 2022+ unsharded
 * plan recomputes selectively or not at all; and the sharded stacks the
 * model is checked against (PyTorch FSDP in torchtitan and llm-foundry,
 * Llama 3's FSDP over pipeline stages) run fused attention whether or not
 * they also recompute whole layers for memory. Known exceptions name their
 * stack in the scenario: Megatron-DeepSpeed with ZeRO-1 before
 * FlashAttention (BLOOM, 2022) is stack="megatron-deepspeed-2022"
 * (docs/software-stacks.md).
 *
 * The rule reads only the plan, never the precision: gradient bytes follow
 * the precision alone (train_grad_bytes), so a 2021 recipe replayed in
 * bf16 reduces fp32 gradients, as Megatron-LM does under --bf16 (it forces
 * accumulate_allreduce_grads_in_fp32), where the SC'21 runs in fp16
 * reduced fp16 ones. The cost of the rule: a
 * modern plan that recomputes fully without sharding (a DDP fine-tune
 * short of memory) gets the 2021 kernels unless it says attention="fused"
 * (and sequence-parallel="true"); explicit values always win.
 *
 * With tp = 1 sequence parallelism is off whatever was given. The schedule
 * stays as given; virtual_stages 0 stays 0 (auto, see above) except with
 * pp = 1, where it is 1. Idempotent. */
void train_plan_defaults(train_plan *p);

/* The defaults that depend on the model, before train_plan_defaults: an
 * MLA model (kv_lora_rank > 0) recomputes selectively the attention way
 * whatever tp: RMSNorm and the up-projections from the cached latents
 * (DeepSeek-V3 section 3.2.3). m may be NULL (nothing to do). */
void train_plan_model_defaults(train_plan *p, const llm_spec *m);

/* Expert parallel sizes of a plan (1 when not given), and the expert data
 * parallel size: the GPUs of one pipeline stage (tp*dp*cp) over ep*etp. */
int train_plan_ep(const train_plan *p);
int train_plan_etp(const train_plan *p);
int train_plan_edp(const train_plan *p);
/* The imbalance the busiest expert GPU runs at: expert_imbalance (at least
 * 1), capped by capacity_factor when experts drop tokens beyond it. */
double train_plan_imbalance(const train_plan *p);

/* Pipeline slots beyond the transformer layers: Megatron-Core's
 * --account-for-embedding-in-pipeline-split and
 * --account-for-loss-in-pipeline-split count the input embedding and the
 * loss as one layer each when it splits layers over pp x virtual stages
 * (megatron/core/transformer/transformer_layer.py,
 * get_transformer_layer_offset: num_layers += 1 for each). The twin takes
 * them as set exactly when pp x virtual-stages exceeds the layers (up to
 * layers + 2): a split the published recipes run (Llama 3.1 405B pp16 vp8
 * = 128 = 126 + 2; Qwen3-235B pp32 vp3 = 96 = 94 + 2). 0 or 2. */
int train_plan_pipeline_extra_slots(const llm_spec *m, const train_plan *p);

/* Check a plan against the architecture (divisibility of heads by tp, layers
 * by pp*v, global batch by dp*micro_batch, experts by ep, ...). Returns 0, or -1 with a
 * reason in why. */
int train_plan_check(const llm_spec *m, const train_plan *p, char *why, size_t len);

#endif
