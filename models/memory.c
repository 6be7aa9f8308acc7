/*
 * memory: per-GPU bytes of a training plan (see memory.h for the model).
 *
 * A handful of multiplications per stage; mem_explain re-evaluates the
 * plan under a few changes to suggest one that fits.
 */
#include "models/memory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/transformer.h"

#define ACT_BYTES 2.0          /* activations in bf16/fp16 */
#define E5M6_BYTES 1.5         /* DeepSeek-V3's 12-bit cache of the attention output (section 3.3.2) */
#define WEIGHT_BYTES 2.0       /* working copy of the weights in bf16/fp16 */
#define LOSS_BYTES_PER_LOGIT 4.0 /* the loss's fp32 softmax (see memory.h) */
#define BF16_GRAD_BYTES 2.0    /* gradient buffer under grad-reduce-bf16 (see memory.h) */
#define FP32_MAIN_GRAD_BYTES 4.0 /* the optimizer's fp32 gradients then (see memory.h) */

static int floor_pos(double x) {
    double f = floor(x + 1e-9);
    return f > 0 ? (int)f : 0;
}

double mem_pp_layout(int layers, int pp, double e, double c, mem_layout *lay) {
    if (pp <= 1) {
        lay->first = lay->mid = lay->last = layers;
        return layers + e + c;
    }
    double fe = e - floor(e), fc = c - floor(c);
    int k0 = layers / pp - 2 - (int)ceil(e > c ? e : c);
    if (k0 < 0) k0 = 0;
    double best = -1;
    for (int k = k0; best < 0 && k <= layers + (int)ceil(e + c) + 2; k++) {
        double cand[3] = { k, k + fc, k + fe };
        /* ascending order of the three candidates */
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 3; j++)
                if (cand[j] < cand[i]) { double t = cand[i]; cand[i] = cand[j]; cand[j] = t; }
        for (int i = 0; i < 3 && best < 0; i++) {
            double M = cand[i];
            long cap = (long)floor_pos(M - e) + floor_pos(M - c) + (long)(pp - 2) * floor_pos(M);
            if (cap >= layers) best = M;
        }
    }
    int first = floor_pos(best - e), last = floor_pos(best - c), mid = pp > 2 ? floor_pos(best) : 0;
    long surplus = (long)first + last + (long)(pp - 2) * mid - layers;
    int take = surplus < first ? (int)surplus : first;
    first -= take;
    surplus -= take;
    take = surplus < last ? (int)surplus : last;
    last -= take;
    lay->first = first;
    lay->mid = pp > 2 ? mid : (first > last ? first : last);
    lay->last = last;
    /* Busiest load as laid out (never above best). */
    double load = first + e;
    if (last + c > load) load = last + c;
    if (pp > 2 && mid > load) load = mid;
    return load;
}

/* Bytes per token a layer keeps under torchtitan's per-op checkpointing
 * (SELECTIVE_OPS; the policy in models/transformer.h,
 * tf_layer_sac_ops_gemms): the block's input, the saved matmul outputs the
 * backward reads (wq: Q, wv: V, w1: the gate), the attention output (SDPA,
 * its log-sum-exp negligible) and, under sequence parallelism, the
 * attention reduce-scatter's output (the residual the second norm reads).
 * Eager checkpointing caches every saved op's output, needed or not: w2's
 * (every token of the sequence, the full hidden width of a partial sum) and
 * the second reduce-scatter's too; torch.compile's partitioner drops them. */
static double sac_ops_act_per_token(const tf_dims *d, const train_plan *p) {
    double tp = p->tp > 0 ? p->tp : 1, hid_div = p->sequence_parallel ? tp : 1;
    double hidden = (p->sequence_parallel ? 2 : 1) * d->h;
    double split = 2 * d->q_dim + d->kv_dim + d->f;
    double extra = 0;
    if (stack_elementwise_parse(p->stack.elementwise) == ELEM_EAGER)
        extra = d->h + (p->sequence_parallel ? d->h / hid_div : 0);
    return ACT_BYTES * (hidden / hid_div + split / tp + extra);
}

/* Bytes per token of one layer's saved activations under recompute r
 * (RECOMPUTE_FULL gives the working set of the layer being recomputed). */
static double layer_act_per_token(const llm_spec *m, const train_plan *p, recompute r) {
    tf_dims d;
    tf_dims_of(m, &d);
    double tp = p->tp > 0 ? p->tp : 1;
    double hid_div = p->sequence_parallel ? tp : 1;
    /* Under FP8 the linear layers save their inputs for the weight gradient
     * as the FP8 copies they cast (Transformer Engine's Linear and
     * LayerNormLinear, torchao's Float8Linear): 1 byte, not 2 (under FP4
     * the FP4 copy with its block scales, fp4_element_bytes). The inputs:
     * the norm outputs, the attention output (proj) and the activation
     * output (fc2). */
    double lin = p->precision == PREC_FP8 ? 0.5
               : p->precision == PREC_FP4 ? fp4_element_bytes((fp4_recipe)p->fp4_recipe) / ACT_BYTES : 1;
    /* Q, K and V as the attention keeps them: under MLA the per-head
     * query/key (qk_dim) and value (v_dim) widths, and the latents (not
     * split by tp). A MoE layer's FFN: its shared experts as a dense FFN,
     * and per token k x imbalance dispatched rows on the busiest GPU, each
     * keeping its input and its expert's intermediates (split by etp). */
    double qd = d.q_dim, kv2 = 2 * d.kv_dim, f = d.f, whole = 0, rows = 0, fe = 0;
    if (m->kv_lora_rank > 0) {
        qd = d.heads * d.qk_dim;
        kv2 = d.heads * (d.qk_dim + d.v_dim);
        whole = m->kv_lora_rank + m->rope_head_dim + (m->q_lora_rank > 0 ? m->q_lora_rank : 0);
    }
    if (tf_is_moe(m)) {
        fe = (m->expert_ffn_hidden > 0 ? m->expert_ffn_hidden : m->ffn_hidden) / (double)train_plan_etp(p);
        f = m->shared_experts * fe * train_plan_etp(p);
        rows = m->experts_per_token * train_plan_imbalance(p) * train_plan_etp(p) / tp;
    }
    double ffn_out = (d.gated ? 2 : 1) * f;
    /* The SwiGLU inputs of the experts: FP8 where the stack caches them so. */
    int low = p->precision == PREC_FP8 || p->precision == PREC_FP4;
    double swiglu_in = (d.gated ? 2 : 1) * fe * (low && p->stack.fp8_activations ? 0.5 : 1);
    double hidden, split, scores = 0;
    if (r == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_OPS) return sac_ops_act_per_token(&d, p);
    int modules = r == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_MODULES;
    if (r == RECOMPUTE_SELECTIVE && !modules) {
        /* Keep the norm inputs (the residual stream) and what the GEMMs and
         * the attention backward need; recompute norms, the activation
         * function and (unfused) the attention scores. Under MLA the
         * up-projected Q, K, V are recomputed from the latents too: only
         * the attention output is kept (DeepSeek-V3 section 3.2.3). */
        hidden = 2 * d.h;
        double out = low && p->stack.fp8_activations ? E5M6_BYTES / ACT_BYTES : 1 + lin;
        split = (m->kv_lora_rank > 0 ? out * d.heads * d.v_dim : (1 + lin) * qd + kv2) + ffn_out;
        whole += rows * (lin * d.h + swiglu_in);
    } else {
        hidden = (2 + 2 * lin) * d.h;           /* norm inputs and outputs */
        split = (1 + lin) * qd + kv2 + ffn_out + lin * f;
        whole += rows * (lin * d.h + swiglu_in + lin * fe);
        if (p->attn_unfused)                    /* softmax out, dropout mask and out */
            scores = 5 * (d.heads / tp) * p->seq_len / ACT_BYTES;
        /* Megatron-Core's recompute modules drop what they recompute: the
         * two norms' outputs (the inputs of QKV and FC1), and each routed
         * row's activation output (its FC2 input), rebuilt from the FC1
         * output the row keeps. */
        if (modules && (p->recompute_modules & RECOMPUTE_MOD_LAYERNORM)) hidden -= 2 * lin * d.h;
        if (modules && (p->recompute_modules & RECOMPUTE_MOD_MOE_ACT)) whole -= rows * lin * fe;
    }
    return ACT_BYTES * (hidden / hid_div + split / tp + scores + whole);
}

double mem_layer_activation_bytes(const llm_spec *m, const train_plan *p) {
    double tokens = (double)p->micro_batch * p->seq_len / (p->cp > 0 ? p->cp : 1);
    recompute r = p->recompute;
    if (r == RECOMPUTE_FULL || (r == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_LAYERS))
        r = RECOMPUTE_NONE;                     /* what a layer that is kept holds */
    return tokens * layer_act_per_token(m, p, r);
}

double mem_stage_params(const llm_spec *m, const train_plan *p, int n, int first, int last,
                        double *expert) {
    double tp = p->tp > 0 ? p->tp : 1;
    double x, e = 0, exp_div = (double)train_plan_ep(p) * train_plan_etp(p);
    tf_param_counts pc;
    tf_param_counts_of(m, &pc);
    if (!tf_is_moe(m)) {
        x = n * pc.layer;
    } else {
        /* The routed layers of the stage: all of them but the dense ones
         * that lead the model (a whole model keeps its count exactly). */
        int nm = n < tf_moe_layers(m) ? n : tf_moe_layers(m);
        x = nm * pc.moe_layer_other + (n - nm) * pc.dense_layer;
        e = nm * pc.moe_layer_routed;
    }
    if (first) x += pc.embedding;
    if (last) x += (p->pp > 1 && m->tied_embeddings) ? pc.embedding : pc.output;
    if (last && m->mtp_depth > 0) {
        /* The MTP modules sit on the last stage (DeepSeek-V3 section 3.2.1). */
        double routed = m->mtp_depth * pc.moe_layer_routed;
        x += pc.mtp - routed;
        e += routed;
    }
    *expert = e / exp_div;
    return x / tp;
}

typedef struct stage_mem { double w, g, o, a, x; } stage_mem;

/* Bytes per parameter of the weights a GPU holds (see memory.h): bf16,
 * plus the FP8 copies a stack caches between micro-batches; or, with FP8
 * primary weights, only the FP8 weight and its transpose. */
static double weight_bytes_per_param(const train_plan *p) {
    if (p->precision != PREC_FP8) return WEIGHT_BYTES;
    fp8_recipe r = (fp8_recipe)p->fp8_recipe;
    if (p->stack.fp8_param) return fp8_weight_bytes(r);
    return WEIGHT_BYTES + (p->stack.fp8_weight_cache ? fp8_weight_bytes(r) : 0);
}

static void stage_bytes(const llm_spec *m, const train_plan *p, int v, int n, int index,
                        const train_params *q, int nmicro, stage_mem *s) {
    int pp = p->pp > 0 ? p->pp : 1;
    int first = index == 0, last = index == pp - 1;
    /* Sharding spans the context-parallel ranks too (same weights); expert
     * weights shard over their expert data-parallel group instead. */
    double dp = (double)(p->dp > 0 ? p->dp : 1) * (p->cp > 0 ? p->cp : 1), tp = p->tp > 0 ? p->tp : 1;
    double edp = train_plan_edp(p);
    double ex, params = mem_stage_params(m, p, n, first, last, &ex);
    int fsdp_flat = p->sharding == SHARD_FSDP && pp == 1;

    double wbytes = weight_bytes_per_param(p);
    if (fsdp_flat && p->stack.fsdp_reshard) {
        /* The sharded parameters are the fp32 master copy (counted with the
         * optimizer state); bf16 exists only for the gathered layers. */
        int gathered = n < 2 ? n : 2;
        tf_param_counts pc;
        tf_param_counts_of(m, &pc);
        s->w = tf_is_moe(m) && n > 0 ? wbytes * gathered * (params + ex) / n
                                     : wbytes * gathered * pc.layer / tp;
    } else {
        /* Without resharding after the forward, every layer's gathered
         * weights stay until its backward. */
        s->w = wbytes * (params + ex);
    }
    int grad_shard = p->sharding == SHARD_ZERO2 || fsdp_flat;
    double grad_div = grad_shard ? dp : 1, grad_div_e = grad_shard ? edp : 1;
    double opt_div = p->sharding == SHARD_NONE ? 1 : dp, opt_div_e = p->sharding == SHARD_NONE ? 1 : edp;
    if (p->stack.grad_reduce_bf16 && p->precision != PREC_FP16) {
        /* A bf16 gradient buffer, and the optimizer's fp32 copy of the
         * gradients it steps on, sharded as its state is (memory.h). */
        s->g = BF16_GRAD_BYTES * params / grad_div + FP32_MAIN_GRAD_BYTES * params / opt_div
             + BF16_GRAD_BYTES * ex / grad_div_e + FP32_MAIN_GRAD_BYTES * ex / opt_div_e;
    } else {
        s->g = train_grad_bytes(p, q) * params / grad_div + train_grad_bytes(p, q) * ex / grad_div_e;
    }
    s->o = q->optimizer_state_bytes * params / opt_div + q->optimizer_state_bytes * ex / opt_div_e;

    /* DualPipe keeps PP+1 micro-batches' activations (DeepSeek-V3 Table 2). */
    double in_flight = p->schedule == PP_DUALPIPE ? pp + 1 : pp - index;
    if (in_flight > nmicro) in_flight = nmicro;
    if (in_flight < 1) in_flight = 1;
    if (index == 0 && p->schedule == PP_INTERLEAVED && v > 1)
        in_flight *= 1 + (double)(pp - 1) / ((double)pp * v);
    double tokens = (double)p->micro_batch * p->seq_len / (p->cp > 0 ? p->cp : 1);
    double input = ACT_BYTES * m->hidden / (p->sequence_parallel ? tp : 1);
    double none = layer_act_per_token(m, p, RECOMPUTE_NONE);
    double working = n > 0 ? none : 0;         /* the layer being recomputed */
    if (p->recompute == RECOMPUTE_FULL) {
        s->a = tokens * (in_flight * n * input + working);
    } else if (p->recompute == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_LAYERS) {
        int whole = (n + 1) / 2;               /* every other layer keeps its input only */
        s->a = tokens * (in_flight * (whole * input + (n - whole) * none) + working);
    } else {
        s->a = tokens * in_flight * n * layer_act_per_token(m, p, p->recompute);
    }
    /* The loss on the last stage keeps one fp32 copy of its (tp-local)
     * logits for the backward (see memory.h). */
    s->x = q->reserved_bytes + (last ? tokens * m->vocab / tp * LOSS_BYTES_PER_LOGIT : 0);
}

/* DualPipe puts two pipeline chunks on each GPU, stage i's and stage
 * PP-1-i's (DeepSeek-V3 section 3.2.1, Table 2: two copies of the
 * parameters): the GPU of the first stage also holds the last's (with the
 * output head and its loss, and the MTP modules), a middle one two middle
 * chunks. Weights, gradients and optimizer state add; the activations are
 * the PP+1 micro-batches of one chunk that stage_bytes counted (the
 * larger); reserved bytes once. */
static void dualpipe_pairs(stage_mem st[3]) {
    stage_mem ends = st[0];
    ends.w += st[2].w;
    ends.g += st[2].g;
    ends.o += st[2].o;
    ends.a = fmax(st[0].a, st[2].a);
    ends.x = st[2].x;
    st[1].w *= 2;
    st[1].g *= 2;
    st[1].o *= 2;
    st[0] = st[2] = ends;
}

int mem_estimate(const llm_spec *m, const train_plan *p, int v, const mem_layout *lay,
                 const gpu_spec *g, const train_params *q, memory_breakdown *out) {
    /* A plan built by hand may not have been through train_plan_defaults:
     * its stack is then the one `auto` would choose. */
    train_plan resolved = *p;
    if (!p->stack_given && !p->stack.name[0]) train_plan_auto_stack(p, &resolved.stack);
    p = &resolved;
    int pp = p->pp > 0 ? p->pp : 1;
    int nmicro = p->global_batch / ((p->dp > 0 ? p->dp : 1) * (p->micro_batch > 0 ? p->micro_batch : 1));
    if (nmicro < 1) nmicro = 1;
    int idx[3] = { 0, pp > 2 ? 1 : pp - 1, pp - 1 };
    int layers[3] = { lay->first, pp > 2 ? lay->mid : lay->last, lay->last };
    memset(out, 0, sizeof *out);
    stage_mem st[3];
    for (int i = 0; i < 3; i++) stage_bytes(m, p, v, layers[i], idx[i], q, nmicro, &st[i]);
    if (p->schedule == PP_DUALPIPE && pp > 1) dualpipe_pairs(st);
    for (int i = 0; i < 3; i++) {
        stage_mem s = st[i];
        double total = s.w + s.g + s.o + s.a + s.x;
        if (total > out->total_bytes) {
            out->weights_bytes = s.w;
            out->grads_bytes = s.g;
            out->optimizer_bytes = s.o;
            out->activations_bytes = s.a;
            out->other_bytes = s.x;
            out->total_bytes = total;
        }
    }
    return out->total_bytes <= g->hbm_bytes;
}

/* Memory of plan p after the same layout rule training uses (output layer
 * counted as one layer's worth: close enough to judge a fit). */
static double total_of(const llm_spec *m, const train_plan *p, int v, const gpu_spec *g,
                       const train_params *q) {
    mem_layout lay;
    memory_breakdown mb;
    mem_pp_layout(m->layers, p->pp, 0, 1, &lay);
    mem_estimate(m, p, v, &lay, g, q, &mb);
    return mb.total_bytes;
}

/* A suggestion must be a plan the job can run: the same GPUs (tp·pp·dp·cp
 * unchanged, so a deeper pipeline or wider TP takes its GPUs from dp),
 * tp within one node, valid by train_plan_check's rules (heads by tp,
 * layers by pp·v, global batch by dp·micro-batch), and fitting in HBM by
 * this memory model. Issue 17: "try pp=4" was offered to a job on one node
 * with dp=1, i.e. a plan needing 32 GPUs. */
void mem_explain(const llm_spec *m, const train_plan *p, int v, const gpu_spec *g, int node_gpus,
                 const train_params *q, const memory_breakdown *mb, char *why, size_t len) {
    char tries[2][48];
    int n = 0;
    if (node_gpus < 1) node_gpus = 8;
    for (int i = 0; i < 7 && n < 2; i++) {
        train_plan t = *p;
        char z[48];
        int tv = v;
        switch (i) {
        case 0:
            if (p->recompute == RECOMPUTE_FULL) continue;
            t.recompute = RECOMPUTE_FULL;
            snprintf(z, sizeof z, "recompute=full");
            break;
        case 1:
            if (p->sharding != SHARD_NONE || p->dp < 2) continue;
            t.sharding = SHARD_ZERO1;
            snprintf(z, sizeof z, "sharding=zero1");
            break;
        case 2:
            if (p->sharding == SHARD_FSDP || p->dp < 2) continue;
            t.sharding = SHARD_FSDP;
            snprintf(z, sizeof z, "sharding=fsdp");
            break;
        case 3:
            if (p->micro_batch <= 1) continue;
            t.micro_batch = 1;
            snprintf(z, sizeof z, "micro-batch=1");
            break;
        case 4:
        case 6: {
            /* Deeper pipeline on the same GPUs: dp shrinks by the factor. */
            int k = i == 4 ? 2 : 4;
            if (p->dp % k != 0) continue;
            t.pp = p->pp * k;
            t.dp = p->dp / k;
            t.schedule = PP_1F1B;
            t.virtual_stages = 1;
            tv = 1;
            snprintf(z, sizeof z, "pp=%d dp=%d", t.pp, t.dp);
            break;
        }
        default:
            /* Wider TP on the same GPUs, inside a node. */
            if (p->dp % 2 != 0 || p->tp * 2 > node_gpus) continue;
            t.tp = p->tp * 2;
            t.dp = p->dp / 2;
            t.sequence_parallel = 1;
            snprintf(z, sizeof z, "tp=%d dp=%d", t.tp, t.dp);
            break;
        }
        char bad[160];
        if (train_plan_check(m, &t, bad, sizeof bad) < 0) continue;
        if (total_of(m, &t, tv, g, q) <= g->hbm_bytes)
            snprintf(tries[n++], sizeof tries[0], "%s", z);
    }
    int w = snprintf(why, len, "needs %.1f GB per GPU, %s has %.1f GB", mb->total_bytes / 1e9,
                     g->name, g->hbm_bytes / 1e9);
    if (w < 0 || (size_t)w >= len) return;
    if (n == 1) snprintf(why + w, len - (size_t)w, "; try %s", tries[0]);
    else if (n == 2) snprintf(why + w, len - (size_t)w, "; try %s or %s", tries[0], tries[1]);
    else snprintf(why + w, len - (size_t)w, "; no single change of recompute, sharding, pp or tp fits on these GPUs");
}
