/*
 * train_plan: names, defaults and checks of a training job's parallel plan
 * (see train_plan.h), and the defaults of the software figures.
 *
 * No model here: every function reads or fills a plan or a train_params
 * and returns at once.
 */
#include "models/train_plan.h"

#include <stdio.h>
#include <string.h>

/* ---- Names -------------------------------------------------------------- */

static const char *shard_names[] = { "none", "zero1", "zero2", "fsdp" };
static const char *recompute_names[] = { "none", "selective", "full" };
static const char *schedule_names[] = { "1f1b", "interleaved", "dualpipe" };
static const char *overlap_names[] = { "none", "a2a", "dualpipe" };
static const char *fp4_names[] = { "none", "nvfp4", "mxfp4" };

static int lookup(const char *z, const char *const *names, int n) {
    for (int i = 0; z && i < n; i++)
        if (strcmp(z, names[i]) == 0) return i;
    return -1;
}

int sharding_parse(const char *z) {
    if (z && strcmp(z, "zero3") == 0) return SHARD_FSDP;
    return lookup(z, shard_names, 4);
}
const char *sharding_name(sharding s) { return (s >= 0 && s <= SHARD_FSDP) ? shard_names[s] : "?"; }
int recompute_parse(const char *z) { return lookup(z, recompute_names, 3); }
const char *recompute_name(recompute r) {
    return (r >= 0 && r <= RECOMPUTE_FULL) ? recompute_names[r] : "?";
}
int pp_schedule_parse(const char *z) { return lookup(z, schedule_names, 3); }
const char *pp_schedule_name(pp_schedule s) {
    return (s >= 0 && s <= PP_DUALPIPE) ? schedule_names[s] : "?";
}
int moe_overlap_parse(const char *z) { return lookup(z, overlap_names, 3); }
const char *moe_overlap_name(moe_overlap o) {
    return (o >= 0 && o <= MOE_OVERLAP_DUALPIPE) ? overlap_names[o] : "?";
}
int fp4_recipe_parse(const char *z) {
    int r = lookup(z, fp4_names, FP4_COUNT);
    return r == FP4_NONE ? -1 : r;
}
int moe_dispatcher_parse(const char *z) {
    static const char *const names[] = { "flex", "alltoall" };
    return lookup(z, names, 2);
}
const char *fp4_recipe_name(fp4_recipe r) {
    return (r >= 0 && r < FP4_COUNT) ? fp4_names[r] : "?";
}
/* Sources in train_plan.h (fp4_recipe). */
double fp4_element_bytes(fp4_recipe r) {
    return 0.5 + (r == FP4_MXFP4 ? 1.0 / 32 : 1.0 / 16);
}

/* ---- Parameters ----------------------------------------------------------- */

void train_params_default(train_params *q) {
    /* The software figures are the stack field table's defaults (the stack
     * `auto` gives a plan it does not take for the 2021 recipe); their
     * sources follow. */
    stack_spec d;
    stack_defaults(&d);
    /* Megatron-LM overlaps TP collectives with GEMMs only with
     * --tp-comm-overlap (Transformer Engine userbuffers); off by default,
     * and absent from the 2021 code the Megatron validation rows used. */
    q->tp_overlap = d.tp_overlap;
    /* PyTorch DDP/FSDP and Megatron --overlap-grad-reduce launch bucketed
     * reductions as gradients become ready (Li et al., "PyTorch
     * Distributed", VLDB 2020): the whole last backward can hide them. */
    q->dp_overlap = d.dp_overlap;
    /* Megatron-LM's 1F1B waits on its batched isend/irecv before the next
     * micro-batch: the transfer sits on the critical path. */
    q->p2p_overlap = d.p2p_overlap;
    /* NCCL runs collectives as kernels on 8-32 SMs (of 108-132) and streams
     * through HBM; GEMMs running beside them lose about a tenth of their
     * speed (Rashidi et al., "Enabling Compute-Communication Overlap in
     * Distributed Deep Learning Training Platforms", ISCA 2021, measure
     * 10-20%; we take the low end because buckets do not overlap all of
     * compute). */
    q->overlap_slowdown = 0.25;
    /* Back-to-back dependent kernels leave the GPU idle about a
     * microsecond each when the CPU runs ahead of the GPU (the tail of one
     * kernel to the head of the next in Nsight timelines of large-model
     * training; launch latency itself is hidden by the queue). */
    q->kernel_gap_s = d.kernel_gap_s;
    /* Kernels per layer per forward: 4-6 GEMMs, 2 norms, attention (1-3),
     * rotary, activation, residual adds, dropout, TP collectives. */
    q->kernels_per_layer = 20;
    /* Data loader hand-off, loss-scale/inf checks, logging: a few ms. */
    q->step_overhead_s = d.step_overhead_s;
    /* Gradients accumulate and reduce in fp32 (Megatron main_grad buffers;
     * PyTorch FSDP mixed precision with reduce_dtype=float32, the
     * torchtitan and MosaicML default). */
    q->grad_bytes = 4;
    /* Mixed-precision Adam: fp32 master weights, first and second moments
     * (Rajbhandari et al., ZeRO, SC'20: K = 12). */
    q->optimizer_state_bytes = 12;
    /* The fused Adam step reads master, m, v and the fp32 gradient (16 B),
     * writes master, m, v (12 B) and the bf16 weight (2 B); gradient-norm
     * clipping reads the gradients once more (4 B) and zeroing them for the
     * next step writes them (4 B): 38 bytes per parameter. */
    q->optimizer_traffic_bytes = 38;
    /* FlashAttention-2 (Dao, 2023, section 4.1): backward = 2.5 x forward
     * matmul FLOPs (it recomputes QK^T and the softmax). */
    q->attn_bwd_factor = 2.5;
    /* CUDA context (~0.5 GB), NCCL buffers per communicator, and allocator
     * fragmentation: PyTorch jobs on 80 GB GPUs typically reach ~77 GB of
     * allocations before running out of memory. */
    q->reserved_bytes = 3e9;
}

double train_grad_bytes(const train_plan *p, const train_params *q) {
    return p->precision == PREC_FP16 ? 2 : q->grad_bytes;
}

/* ---- Plan ----------------------------------------------------------------- */

void train_plan_auto_stack(const train_plan *p, stack_spec *s) {
    stack_defaults(s);
    const char *name = "megatron-core-2023";
    if (p->recompute == RECOMPUTE_FULL && p->sharding == SHARD_NONE) {
        name = "megatron-lm-2021";
        snprintf(s->attention, sizeof s->attention, "%s", stack_attention_name(ATTN_FUSED_SOFTMAX));
        s->sequence_parallel = 0;
    } else if (p->sharding == SHARD_FSDP) {
        name = "torchtitan";
        s->fp8_weight_cache = 0;       /* torchao casts weights each forward */
        snprintf(s->fp8_recipe, sizeof s->fp8_recipe, "%s", fp8_recipe_name(FP8_TENSORWISE));
    }
    snprintf(s->name, sizeof s->name, "%s", name);
}

/* The attention kernel: the stack's, unless the plan says fused or unfused
 * and the stack's kernel is not of that kind: then flash2, or Megatron's
 * unfused attention with its fused scale-mask-softmax kernel (what
 * attention="unfused" has always meant in a scenario). */
static int attention_kernel(const train_plan *p) {
    int k = stack_attention_parse(p->stack.attention);
    if (k < 0) k = ATTN_FLASH2;
    int unfused = k == ATTN_UNFUSED || k == ATTN_FUSED_SOFTMAX;
    if (p->attn_unfused < 0 || p->attn_unfused == unfused) return k;
    return p->attn_unfused ? ATTN_FUSED_SOFTMAX : ATTN_FLASH2;
}

void train_plan_defaults(train_plan *p) {
    if (p->tp < 1) p->tp = 1;
    if (p->pp < 1) p->pp = 1;
    if (p->cp < 1) p->cp = 1;
    if (p->micro_batch < 0) p->micro_batch = 0;
    /* The stack: named, or inferred (train_plan_auto_stack). */
    if (!p->stack_given) train_plan_auto_stack(p, &p->stack);
    if (p->fp8_recipe <= FP8_NONE || p->fp8_recipe >= FP8_COUNT) {
        int r = fp8_recipe_parse(p->stack.fp8_recipe);
        p->fp8_recipe = r > FP8_NONE ? r : FP8_DELAYED;
    }
    p->attn_kernel = attention_kernel(p);
    if (p->attn_unfused < 0) p->attn_unfused = p->attn_kernel == ATTN_UNFUSED || p->attn_kernel == ATTN_FUSED_SOFTMAX;
    if (p->sequence_parallel < 0) p->sequence_parallel = p->tp > 1 && p->stack.sequence_parallel;
    if (p->tp == 1) p->sequence_parallel = 0;
    if (p->virtual_stages < 0) p->virtual_stages = 0;
    if (p->pp == 1) p->virtual_stages = 1;
    if (p->schedule == PP_1F1B && p->virtual_stages > 1) p->schedule = PP_INTERLEAVED;
    if (p->selective == SELECTIVE_AUTO) {
        int k = selective_kind_parse(p->stack.selective);
        p->selective = k > SELECTIVE_AUTO ? (selective_kind)k
                                          : p->tp > 1 ? SELECTIVE_ATTENTION : SELECTIVE_LAYERS;
    }
    if (p->ep < 1) p->ep = 1;
    if (p->etp < 1) p->etp = 1;
    if (!(p->expert_imbalance > 0)) p->expert_imbalance = 1;
    if ((int)p->moe_overlap < 0)
        p->moe_overlap = p->schedule == PP_DUALPIPE ? MOE_OVERLAP_DUALPIPE : MOE_OVERLAP_NONE;
    if (p->fp4_recipe <= FP4_NONE || p->fp4_recipe >= FP4_COUNT) p->fp4_recipe = FP4_NVFP4;
    if (p->schedule == PP_DUALPIPE) p->virtual_stages = 1;
}

void train_plan_model_defaults(train_plan *p, const llm_spec *m) {
    if (m && m->kv_lora_rank > 0 && p->selective == SELECTIVE_AUTO) p->selective = SELECTIVE_ATTENTION;
}

int train_plan_ep(const train_plan *p) { return p->ep > 1 ? p->ep : 1; }
int train_plan_etp(const train_plan *p) { return p->etp > 1 ? p->etp : 1; }
int train_plan_edp(const train_plan *p) {
    long stage = (long)(p->tp > 0 ? p->tp : 1) * (p->dp > 0 ? p->dp : 1) * (p->cp > 0 ? p->cp : 1);
    long e = (long)train_plan_ep(p) * train_plan_etp(p);
    return stage % e == 0 ? (int)(stage / e) : 1;
}

double train_plan_imbalance(const train_plan *p) {
    double imb = p->expert_imbalance >= 1 ? p->expert_imbalance : 1;
    if (p->capacity_factor > 0 && imb > p->capacity_factor) imb = p->capacity_factor;
    return imb;
}

int train_plan_pipeline_extra_slots(const llm_spec *m, const train_plan *p) {
    return p->virtual_stages > 1 && (long)p->pp * p->virtual_stages > m->layers ? 2 : 0;
}

/* The expert-parallel part of the check: Megatron-Core's rules
 * (megatron/core/parallel_state.py initialize_model_parallel: the expert
 * grid etp x ep x edp tiles the tp x cp x dp ranks of a stage; each rank
 * holds experts/ep whole experts). */
static int check_moe(const llm_spec *m, const train_plan *p, char *why, size_t len) {
#define BAD(...) do { snprintf(why, len, __VA_ARGS__); return -1; } while (0)
    int ep = train_plan_ep(p), etp = train_plan_etp(p);
    long stage = (long)p->tp * p->dp * p->cp;
    if (m->experts <= 1) {
        if (ep > 1 || etp > 1) BAD("ep and etp need a mixture-of-experts model (%s is dense)", m->name);
        return 0;
    }
    if (m->experts_per_token < 1 || m->experts_per_token > m->experts)
        BAD("model %s: experts-per-token must be 1..experts (%d)", m->name, m->experts);
    if (m->experts % ep != 0) BAD("experts (%d) must be a multiple of ep (%d)", m->experts, ep);
    if (stage % ((long)ep * etp) != 0)
        BAD("ep*etp (%d*%d) must divide tp*dp*cp = %ld, the GPUs of a pipeline stage", ep, etp, stage);
    if (etp > p->tp) BAD("etp (%d) may not exceed tp (%d)", etp, p->tp);
    if (p->tp % etp != 0) BAD("tp (%d) must be a multiple of etp (%d)", p->tp, etp);
    int fe = m->expert_ffn_hidden > 0 ? m->expert_ffn_hidden : m->ffn_hidden;
    if (fe % etp != 0) BAD("expert-ffn-hidden (%d) must be a multiple of etp (%d)", fe, etp);
    if (p->expert_imbalance < 1) BAD("expert-imbalance must be at least 1 (max/mean), got %g", p->expert_imbalance);
    if (p->capacity_factor < 0) BAD("capacity-factor must be positive");
    return 0;
#undef BAD
}

int train_plan_check(const llm_spec *m, const train_plan *p, char *why, size_t len) {
#define BAD(...) do { snprintf(why, len, __VA_ARGS__); return -1; } while (0)
    int kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->ffn_hidden < 1 || m->vocab < 1)
        BAD("model %s: layers, hidden, ffn-hidden, heads and vocab must be positive", m->name);
    if (m->hidden % m->heads != 0)
        BAD("hidden (%d) must be a multiple of heads (%d)", m->hidden, m->heads);
    if (m->heads % kv != 0) BAD("heads (%d) must be a multiple of kv-heads (%d)", m->heads, kv);
    if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->cp < 1)
        BAD("tp, pp, dp and cp must be at least 1 (got %d, %d, %d, %d)", p->tp, p->pp, p->dp, p->cp);
    if (m->heads % p->tp != 0) BAD("heads (%d) must be a multiple of tp (%d)", m->heads, p->tp);
    if (kv % p->tp != 0 && p->tp % kv != 0)
        BAD("kv-heads (%d) and tp (%d) must divide one another", kv, p->tp);
    if (m->ffn_hidden % p->tp != 0) BAD("ffn-hidden (%d) must be a multiple of tp (%d)", m->ffn_hidden, p->tp);
    if (p->pp > m->layers) BAD("pp (%d) exceeds the model's %d layers", p->pp, m->layers);
    if (p->virtual_stages > 1 && (long)p->pp * p->virtual_stages > m->layers + 2)
        BAD("pp*virtual-stages (%d*%d) exceeds the model's %d layers and the embedding and loss slots (%d)",
            p->pp, p->virtual_stages, m->layers, m->layers + 2);
    if (p->micro_batch < 0) BAD("micro-batch must be at least 1 (0: the model picks)");
    if (p->seq_len < 1) BAD("seq-len must be at least 1");
    if (p->seq_len % p->cp != 0) BAD("seq-len (%d) must be a multiple of cp (%d)", p->seq_len, p->cp);
    if (p->global_batch < 1) BAD("global-batch must be at least 1");
    if (p->micro_batch == 0 && p->global_batch % p->dp != 0)
        BAD("global-batch (%d) must be a multiple of dp (%d)", p->global_batch, p->dp);
    if (p->micro_batch > 0 && p->global_batch % ((long)p->dp * p->micro_batch) != 0)
        BAD("global-batch (%d) must be a multiple of dp*micro-batch = %d*%d", p->global_batch, p->dp,
            p->micro_batch);
    if (p->precision < 0 || p->precision >= PREC_COUNT) BAD("unknown precision");
    if (p->schedule == PP_DUALPIPE && (p->pp < 2 || p->pp % 2 != 0))
        BAD("pipeline-schedule dualpipe needs an even pp of at least 2 (got %d)", p->pp);
    return check_moe(m, p, why, len);
#undef BAD
}
