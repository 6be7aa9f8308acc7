/*
 * training: one training step of a dense decoder on a parallel plan.
 *
 * The step is built bottom-up from one transformer layer on one GPU for one
 * micro-batch (b sequences of s tokens, s/cp of them on this GPU):
 *
 *   layer = GEMMs (models/gpu roofline, shapes split by tp)
 *         + attention core (fused: causal FLOPs at eff_attention; unfused:
 *           batched GEMMs over the full square plus the memory traffic of
 *           softmax and dropout on the scores)
 *         + elementwise (norms, residuals, activation, rotary; memory-bound,
 *           hidden-state work replicated over tp unless sequence parallel)
 *         + exposed TP collectives (2 all-reduces per pass, or 2
 *           all-gathers + 2 reduce-scatters with sequence parallelism),
 *           sized and timed by models/collective on the node's NVLink
 *         + exposed ring-attention K/V traffic under cp (each hop hides
 *           behind one block of attention)
 *   passes: forward, backward (2x GEMMs, attn_bwd_factor x attention, 2x
 *           elementwise), plus recomputation: a whole forward (full), half
 *           the layers' forwards (selective=LAYERS) or the attention core
 *           (unfused) and elementwise ops (selective=ATTENTION).
 *
 *   t_mb  = busiest stage per micro-batch: its layers x layer, where the
 *           output layer and loss weigh as their time does on the last
 *           stage and stages are as even as whole layers allow.
 *   step  = m·t_mb                               compute + exposed TP/CP
 *         + (p-1)/v·t_mb + 2v sends per micro-batch
 *                                                pipeline bubble (1F1B or
 *                                                interleaved; Narayanan
 *                                                et al., SC'21, 2.2)
 *         + exposed DP over dp·cp GPUs: all-reduce (none), reduce-scatter
 *           + all-gather (ZeRO-1/2, FSDP with pp > 1) beyond what the last
 *           micro-batch's backward and the first one's forward hide; FSDP
 *           with pp = 1 gathers each layer before its forward and again
 *           before its backward and reduce-scatters its gradient, every
 *           micro-batch, one layer ahead; hidden traffic still costs
 *           overlap_slowdown of its time
 *         + optimizer (memory-bound over the parameters a GPU updates)
 *         + other (kernel gaps, per-step host work)
 *   m = global_batch / (dp·micro_batch) micro-batches per pipeline.
 *
 * Hardware efficiencies come from the catalog (gpu_spec eff_gemm,
 * gemm_half_dim, eff_attention, eff_hbm, eff_sustained; the collective
 * model's node and NIC figures); software figures from train_params.
 *
 * Cost: about 20 collective-model calls and a loop over candidate
 * interleaving factors with a memory estimate each: a few microseconds.
 * An auto micro-batch (micro_batch 0) repeats that for each divisor of the
 * sequences per pipeline up to the first that does not fit, at most
 * MICRO_AUTO_MAX times.
 */
#include "models/training.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/gpu.h"
#include "models/memory.h"
#include "models/transformer.h"

/* ---- Plan ----------------------------------------------------------------- */

/* Fraction of layers recomputed whole under the plan's recompute mode. */
static double layer_recompute_fraction(const train_plan *p) {
    if (p->recompute == RECOMPUTE_FULL) return 1;
    if (p->recompute == RECOMPUTE_SELECTIVE && p->selective == SELECTIVE_LAYERS) return 0.5;
    return 0;
}

/* ---- Communication helpers ---------------------------------------------- */

static double coll(const fabric *f, coll_op op, double bytes, int ranks, int per_node, int conc) {
    if (ranks <= 1 || !(bytes > 0)) return 0;
    coll_group g = { ranks, per_node < 1 ? 1 : per_node, conc < 1 ? 1 : conc };
    coll_result r;
    if (coll_time(f, op, bytes, &g, COLL_AUTO, &r) < 0) return 0;
    return r.time_s;
}

/* Ranks of a communicator of `ranks` GPUs at stride `stride` (GPUs between
 * consecutive members) that share a node of gpn GPUs. */
static int per_node(int ranks, int stride, int gpn) {
    if (stride >= gpn) return 1;
    int k = gpn / stride;
    return ranks < k ? ranks : k;
}

/* ---- One layer ------------------------------------------------------------ */

typedef struct layer_cost {
    double fwd;            /* compute of one forward pass */
    double bwd;            /* compute of the backward pass */
    double recompute;      /* extra compute of recomputation */
    double comm_fwd;       /* exposed TP/CP communication, forward */
    double comm_bwd;       /* exposed TP/CP communication, backward (+ recompute) */
    double hidden_comm;    /* TP communication overlapped with compute */
    double gaps;           /* kernel gaps per micro-batch */
} layer_cost;

static double layer_total(const layer_cost *c) {
    return c->fwd + c->bwd + c->recompute + c->comm_fwd + c->comm_bwd;
}

static void layer_costs(const llm_spec *m, const train_plan *p, const fabric *f,
                        const train_params *q, layer_cost *c) {
    const gpu_spec *g = f->gpu;
    int gpn = f->node->gpus > 0 ? f->node->gpus : 8;
    tf_dims d;
    tf_dims_of(m, &d);
    double tp = p->tp, cp = p->cp, b = p->micro_batch, s = p->seq_len;
    double tokens = b * s / cp;
    const double act = 2;

    /* GEMMs: backward = input gradient + weight gradient, same shapes. */
    tf_gemm gm[4];
    tf_layer_gemms(m, tokens, p->tp, gm);
    double gemm = 0;
    for (int i = 0; i < 4; i++) gemm += gpu_gemm_s(g, p->precision, gm[i].m, gm[i].n, gm[i].k, 1);

    /* Attention core: queries on this GPU against all s keys. */
    double heads = d.heads / tp;
    double attn_f, attn_b;
    if (p->attn_unfused) {
        double batch = b * heads;
        double mm = gpu_gemm_s(g, p->precision, tokens / b, s, d.head_dim, batch)   /* QK^T */
                  + gpu_gemm_s(g, p->precision, tokens / b, d.head_dim, s, batch);  /* PV */
        double scores = tokens * heads * s;
        double mem = gpu_memory_s(g, scores * tf_unfused_score_bytes(act));
        attn_f = mm + mem;
        /* Backward: dP and dV products, dK and dQ products; dropout and
         * softmax backward read the gradient, mask and probabilities and
         * write one gradient each: ~19 bytes per score against 13. */
        attn_b = 2 * mm + mem * 19.0 / 13.0;
    } else {
        double flops = 2 * 2 * tokens * s * d.head_dim * heads * tf_causal_fraction(s);
        attn_f = gpu_attention_s(g, p->precision, flops);
        attn_b = q->attn_bwd_factor * attn_f;
    }

    /* Elementwise: hidden-state work is replicated over tp unless SP. */
    tf_elementwise ew;
    tf_layer_elementwise(m, act, &ew);
    double elem_f = gpu_memory_s(g, tokens * (ew.hidden_bytes / (p->sequence_parallel ? tp : 1)
                                              + ew.split_bytes / tp));

    c->fwd = gemm + attn_f + elem_f;
    c->bwd = 2 * gemm + attn_b + 2 * elem_f;
    /* Recomputation: whole layers (full, or every other one under
     * selective=LAYERS), or the attention core (unfused only: fused kernels
     * recompute it inside their backward anyway) and the elementwise ops. */
    double whole = layer_recompute_fraction(p);
    c->recompute = whole * c->fwd;
    if (p->recompute == RECOMPUTE_SELECTIVE && whole == 0)
        c->recompute = elem_f + (p->attn_unfused ? attn_f : 0);

    /* Tensor parallel: per pass 2 all-reduces, or 2 all-gathers and 2
     * reduce-scatters of the full activation (nccl-tests size convention). */
    double t_tp = 0;
    if (p->tp > 1) {
        int rpn = p->tp < gpn ? p->tp : gpn;
        double bytes = tokens * d.h * act;
        if (p->sequence_parallel)
            t_tp = 2 * (coll(f, COLL_ALLGATHER, bytes, p->tp, rpn, gpn / rpn)
                        + coll(f, COLL_REDUCESCATTER, bytes, p->tp, rpn, gpn / rpn));
        else
            t_tp = 2 * coll(f, COLL_ALLREDUCE, bytes, p->tp, rpn, gpn / rpn);
    }
    double tp_passes_bwd = 1 + whole;
    double exposed = 1 - q->tp_overlap;
    c->comm_fwd = t_tp * exposed;
    c->comm_bwd = t_tp * tp_passes_bwd * exposed;
    c->hidden_comm = t_tp * (1 + tp_passes_bwd) * q->tp_overlap;

    /* Context parallel: a ring passes K and V chunks (cp-1 hops) in the
     * forward, K, V and their gradients in the backward, each hop hidden
     * behind one block of attention. */
    if (p->cp > 1) {
        double kv_cols = d.kv_dim / tp > d.head_dim ? d.kv_dim / tp : d.head_dim;
        double bytes = tokens * 2 * kv_cols * act;
        int same = p->tp * p->cp <= gpn;
        double hop_f = p2p_time_s(f, bytes, same, gpn);
        double hop_b = p2p_time_s(f, 2 * bytes, same, gpn);
        double hops = cp - 1;
        double ef = hop_f - attn_f / cp, eb = hop_b - attn_b / cp;
        c->comm_fwd += hops * (ef > 0 ? ef : 0);
        c->comm_bwd += hops * (eb > 0 ? eb : 0) + whole * hops * (ef > 0 ? ef : 0);
    }
    /* Overlapped TP communication slows the GEMMs it runs beside. */
    c->bwd += c->hidden_comm * q->overlap_slowdown;
    c->gaps = q->kernels_per_layer * q->kernel_gap_s * (3 + whole);
}

/* ---- Step ----------------------------------------------------------------- */

/* Micro-batch sizes an auto plan tries at most (divisors of the sequences
 * per pipeline, smallest first; each try costs one plan evaluation). Memory
 * ends the search long before this in practice. */
#define MICRO_AUTO_MAX 24

typedef struct step_parts {
    double compute, comm, bubble, dp, opt, other;
} step_parts;

static int fail(train_result *r, const char *why) {
    snprintf(r->why, sizeof r->why, "%s", why);
    return -1;
}

int train_step(const llm_spec *m, const train_plan *p, const fabric *f, train_result *r) {
    return train_step_with(m, p, f, NULL, r);
}

/* One step of a checked plan whose micro-batch is given (>= 1). */
static void step_fixed(const llm_spec *m, const train_plan *p, const fabric *f,
                       const train_params *q, train_result *r) {
    memset(r, 0, sizeof *r);
    const gpu_spec *g = f->gpu;
    int gpn = f->node->gpus > 0 ? f->node->gpus : 8;
    tf_dims d;
    tf_dims_of(m, &d);
    double tp = p->tp, s = p->seq_len, b = p->micro_batch;
    double tokens = b * s / p->cp;
    int nmicro = p->global_batch / (p->dp * p->micro_batch);

    layer_cost lc;
    layer_costs(m, p, f, q, &lc);
    double t_layer = layer_total(&lc);

    /* Output layer and loss on the last stage (vocab-parallel over tp):
     * GEMM forward and backward, fp32 softmax cross-entropy traffic (~12
     * bytes per logit over both passes), and under SP the gather of the
     * final hidden state. Embedding lookup and its gradient on the first. */
    double vloc = d.vocab / tp;
    double t_out = 3 * gpu_gemm_s(g, p->precision, tokens, vloc, d.h, 1)
                 + gpu_memory_s(g, tokens * vloc * 12);
    if (p->sequence_parallel && p->tp > 1) {
        int rpn = p->tp < gpn ? p->tp : gpn;
        t_out += 2 * coll(f, COLL_ALLGATHER, tokens * d.h * 2, p->tp, rpn, gpn / rpn);
    }
    double t_emb = gpu_memory_s(g, tokens * d.h * 2 * 3);

    /* Busiest stage. */
    mem_layout lay;
    double load;
    if (p->pp == 1) {
        load = mem_pp_layout(m->layers, 1, 0, 0, &lay);
    } else {
        load = mem_pp_layout(m->layers, p->pp, t_emb / t_layer, t_out / t_layer, &lay);
    }
    double t_mb = p->pp == 1 ? m->layers * t_layer + t_out + t_emb : load * t_layer;
    double stage_layers = p->pp == 1 ? m->layers : load;
    /* Compute vs exposed TP/CP comm on the busiest stage per micro-batch. */
    double comm_mb = stage_layers * (lc.comm_fwd + lc.comm_bwd);
    double compute_mb = t_mb - comm_mb;
    double gaps_mb = stage_layers * lc.gaps;

    /* Parameters a GPU of the busiest stage holds (already split by tp). */
    double lp = tf_layer_params(m);
    double par_first = (lay.first * lp + tf_embedding_params(m)) / tp;
    double par_last = (lay.last * lp + (p->pp > 1 && m->tied_embeddings ? tf_embedding_params(m)
                                                                        : tf_output_params(m))) / tp;
    double par_mid = lay.mid * lp / tp;
    double par = p->pp == 1 ? (m->layers * lp + tf_embedding_params(m) + tf_output_params(m)) / tp
                            : fmax(par_mid, fmax(par_first, par_last));

    /* Data parallel. Context-parallel ranks hold the same weights, so
     * gradients reduce (and ZeRO/FSDP shard) over dp*cp GPUs, tp apart. */
    double dp_exposed = 0, dp_hidden = 0, gbytes = train_grad_bytes(p, q);
    int nred = p->dp * p->cp;
    if (nred > 1) {
        int rpn = per_node(nred, p->tp, gpn);
        int conc = gpn / rpn;
        double t_fwd_mb = stage_layers * lc.fwd, t_bwd_mb = stage_layers * (lc.bwd + lc.recompute);
        if (p->sharding == SHARD_FSDP && p->pp == 1) {
            /* Per micro-batch: gather each layer before its forward and again
             * before its backward, reduce-scatter its gradient after; one
             * layer prefetched ahead of compute. Embedding and output
             * weights are units too. */
            double ag = coll(f, COLL_ALLGATHER, lp / tp * 2, nred, rpn, conc);
            double rs = coll(f, COLL_REDUCESCATTER, lp / tp * gbytes, nred, rpn, conc);
            double eo = (tf_embedding_params(m) + tf_output_params(m)) / tp;
            double ag_eo = coll(f, COLL_ALLGATHER, eo * 2, nred, rpn, conc);
            double rs_eo = coll(f, COLL_REDUCESCATTER, eo * gbytes, nred, rpn, conc);
            double lf = lc.fwd + lc.comm_fwd, lb = lc.bwd + lc.recompute + lc.comm_bwd;
            double L = m->layers;
            double ex = ag_eo + ag                                   /* nothing to hide the first under */
                      + (L - 1) * fmax(0, ag - lf)
                      + L * fmax(0, ag + rs - lb)
                      + rs + rs_eo;                                  /* the last ones after compute */
            double total = ag_eo + rs_eo + L * (2 * ag + rs);
            dp_exposed = nmicro * ex;
            dp_hidden = nmicro * fmax(0, total - ex);
        } else {
            double grads = par * gbytes;
            if (p->sharding == SHARD_NONE) {
                double ar = coll(f, COLL_ALLREDUCE, grads, nred, rpn, conc);
                double win = q->dp_overlap * t_bwd_mb;
                dp_exposed = fmax(0, ar - win);
                dp_hidden = ar - dp_exposed;
            } else {
                /* ZeRO-1, and FSDP across pipeline stages (gathered once per
                 * step, as Llama 3 did): reduce-scatter the gradients under
                 * the last backward, gather the updated bf16 weights under
                 * the first forward. ZeRO-2 keeps only its gradient shard,
                 * so it reduce-scatters under every micro-batch's backward. */
                double rs = coll(f, COLL_REDUCESCATTER, grads, nred, rpn, conc);
                double ag = coll(f, COLL_ALLGATHER, par * 2, nred, rpn, conc);
                double times = p->sharding == SHARD_ZERO2 ? nmicro : 1;
                double e1 = times * fmax(0, rs - q->dp_overlap * t_bwd_mb);
                double e2 = fmax(0, ag - q->dp_overlap * t_fwd_mb);
                dp_exposed = e1 + e2;
                dp_hidden = times * rs + ag - dp_exposed;
            }
        }
    }
    double dp_s = dp_exposed + dp_hidden * q->overlap_slowdown;

    /* Optimizer over the parameters this GPU updates. */
    double upd = par / (p->sharding == SHARD_NONE ? 1 : nred);
    double opt_s = gpu_memory_s(g, upd * q->optimizer_traffic_bytes);

    /* Pipeline: bubble and point-to-point sends of the activation (split
     * over tp: Megatron's scatter/gather, or sequence parallelism). */
    double t_p2p = 0;
    if (p->pp > 1) {
        double bytes = tokens * d.h * 2 / tp;
        int same = (long)p->tp * p->cp * p->dp < gpn;
        t_p2p = p2p_time_s(f, bytes, same, gpn) * (1 - q->p2p_overlap);
    }

    /* Interleaving factor: given, or the fastest that fits. */
    int vmax = 1;
    if (p->pp > 1 && (p->virtual_stages == 0 || p->schedule == PP_INTERLEAVED)) {
        vmax = m->layers / p->pp;
        if (vmax < 1) vmax = 1;
        if (nmicro < p->pp) vmax = 1;   /* interleaving needs m >= p micro-batches */
    }
    int vlo = (p->schedule == PP_INTERLEAVED && vmax >= 2) ? 2 : 1, vhi = vmax;
    if (p->virtual_stages > 0) vlo = vhi = p->virtual_stages;

    double best = -1;
    step_parts bp = { 0 };
    int best_v = vlo, best_fits = 0;
    memory_breakdown best_mem = { 0 };
    for (int v = vlo; v <= vhi; v++) {
        train_plan pv = *p;
        pv.virtual_stages = v;
        pv.schedule = v > 1 ? PP_INTERLEAVED : p->schedule;
        memory_breakdown mb;
        int fits = mem_estimate(m, &pv, v, &lay, g, q, &mb);
        step_parts sp;
        double p2p_mb = p->pp > 1 ? 2 * v * t_p2p : 0;
        sp.compute = nmicro * compute_mb;
        sp.comm = nmicro * comm_mb;
        sp.bubble = p->pp > 1 ? (double)(p->pp - 1) / v * (t_mb + p2p_mb) + nmicro * p2p_mb : 0;
        sp.dp = dp_s;
        sp.opt = opt_s;
        sp.other = nmicro * gaps_mb + q->step_overhead_s;
        double t = sp.compute + sp.comm + sp.bubble + sp.dp + sp.opt + sp.other;
        /* Prefer fitting plans; among equals, the fastest. */
        int better = best < 0 || (fits && !best_fits) || (fits == best_fits && t < best * (1 - 1e-9));
        if (better) {
            best = t;
            bp = sp;
            best_v = v;
            best_fits = fits;
            best_mem = mb;
        }
    }

    r->step_s = best;
    r->t.compute_s = bp.compute;
    r->t.tp_comm_s = bp.comm;
    r->t.pp_bubble_s = bp.bubble;
    r->t.dp_comm_s = bp.dp;
    r->t.optimizer_s = bp.opt;
    r->t.other_s = bp.other;
    r->mem = best_mem;
    r->fits = best_fits;
    r->virtual_stages = best_v;
    r->stage_layers = p->pp == 1 ? m->layers
                                 : (lay.mid > lay.first ? (lay.mid > lay.last ? lay.mid : lay.last)
                                                        : (lay.first > lay.last ? lay.first : lay.last));
    r->bubble_fraction = best > 0 ? bp.bubble / best : 0;
    r->micro_batches = nmicro;

    long gpus = (long)p->tp * p->pp * p->dp * p->cp;
    r->params = tf_params(m);
    r->tokens_per_step = (double)p->global_batch * s;
    r->model_flops_per_step = r->tokens_per_step * tf_model_flops_per_token(m, s);
    r->hw_flops_per_step = r->tokens_per_step * tf_hw_flops_per_token(m, s, p->recompute,
                                                                       p->recompute == RECOMPUTE_SELECTIVE
                                                                           ? layer_recompute_fraction(p) : 0);
    r->model_tflops_per_gpu = r->model_flops_per_step / best / gpus / 1e12;
    r->hardware_tflops_per_gpu = r->hw_flops_per_step / best / gpus / 1e12;
    double peak = gpu_peak_flops(g, p->precision);
    r->mfu = peak > 0 ? r->model_tflops_per_gpu * 1e12 / peak : 0;
    r->tokens_per_s_per_gpu = r->tokens_per_step / best / gpus;
    if (!r->fits) {
        train_plan pv = *p;
        pv.virtual_stages = best_v;
        mem_explain(m, &pv, best_v, g, f->node ? f->node->gpus : 0, q, &r->mem, r->why, sizeof r->why);
    }
    r->micro_batch = p->micro_batch;
}

int train_step_with(const llm_spec *m, const train_plan *plan, const fabric *f,
                    const train_params *qp, train_result *r) {
    if (!r) return -1;
    memset(r, 0, sizeof *r);
    if (!m || !plan || !f) return fail(r, "train_step: missing model, plan or fabric");
    if (!f->gpu || !f->node) return fail(r, "train_step: the fabric has no GPU or node type");
    train_params qd;
    if (!qp) {
        train_params_default(&qd);
        qp = &qd;
    }
    train_plan p = *plan;
    train_plan_defaults(&p);
    if (train_plan_check(m, &p, r->why, sizeof r->why) < 0) return -1;
    if (p.micro_batch > 0) {
        step_fixed(m, &p, f, qp, r);
        return 0;
    }
    /* Auto micro-batch: the divisors b of the sequences per pipeline, in
     * increasing order, until one does not fit (activations grow with b,
     * so no larger one would) or MICRO_AUTO_MAX have been tried; the
     * fastest that fits wins, ties to the smaller b. */
    int n = p.global_batch / p.dp, tried = 0;
    train_result c;
    for (int b = 1; b <= n && tried < MICRO_AUTO_MAX; b++) {
        if (n % b != 0) continue;
        p.micro_batch = b;
        step_fixed(m, &p, f, qp, &c);
        tried++;
        if (tried == 1 || (c.fits && !r->fits) || (c.fits == r->fits && c.step_s < r->step_s * (1 - 1e-9)))
            *r = c;
        if (!c.fits) break;
    }
    return 0;
}
