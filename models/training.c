/*
 * training: one training step of a decoder, dense or mixture-of-experts
 * (the routed FFN of a MoE layer: models/train_moe.c; docs/moe-training.md),
 * on a parallel plan.
 *
 * The step is built bottom-up from one transformer layer on one GPU for one
 * micro-batch (models/train_layer: GEMMs, attention core, elementwise work,
 * exposed TP and CP collectives, recomputation):
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
 *         + other (kernel gaps, the stack's host-bound time per layer
 *           and micro-batch, per-step host work)
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
#include "models/train_dp_bytes.h"
#include "models/train_layer.h"
#include "models/train_moe.h"
#include "models/transformer.h"

/* ---- Step ----------------------------------------------------------------- */

/* Micro-batch sizes an auto plan tries at most (divisors of the sequences
 * per pipeline, smallest first; each try costs one plan evaluation). Memory
 * ends the search long before this in practice. */
#define MICRO_AUTO_MAX 24

typedef struct step_parts {
    double compute, comm, bubble, dp, opt, other, ep;
} step_parts;

static int fail(train_result *r, const char *why) {
    snprintf(r->why, sizeof r->why, "%s", why);
    return -1;
}

int train_step(const llm_spec *m, const train_plan *p, const fabric *f, train_result *r) {
    return train_step_with(m, p, f, NULL, r);
}

/* The busiest pipeline stage per micro-batch, before the schedule is
 * chosen: its layout, time, the exposed TP/CP communication in it and the
 * parameters one of its GPUs holds. */
typedef struct stage_work {
    train_layer_cost lc;         /* one layer, one micro-batch */
    mem_layout lay;        /* layers of the first, middle and last stage */
    double t_mb;           /* busiest stage per micro-batch */
    double stage_layers;   /* its load in layers (embedding and output by their time) */
    double compute_mb;     /* of t_mb: compute */
    double comm_mb;        /* of t_mb: exposed TP/CP communication */
    double ep_mb;          /* of t_mb: exposed expert-parallel all-to-all */
    double gaps_mb;        /* kernel gaps and host-bound layer time per micro-batch */
    double par;            /* parameters a GPU of the busiest stage holds (split by tp),
                              routed experts aside */
    double par_exp;        /* routed expert parameters it holds (split by ep*etp) */
    double f_mb, b_mb, w_mb; /* its forward, backward and weight-gradient compute per
                              micro-batch (DualPipe's F, B and W) */
} stage_work;

/* The layer the busiest stage is made of. Dense model: its one layer.
 * MoE: with pipelining a MoE layer (the dense layers lead the first stage,
 * which also carries the embedding; a middle stage is all MoE layers);
 * without, the mean of the model's dense and MoE layers. */
static void stage_layer(const llm_spec *m, const train_plan *p, const fabric *f,
                        const train_params *q, train_layer_cost *lc, double *t_moe) {
    train_layer_costs(m, p, f, q, tf_is_moe(m) ? TRAIN_LAYER_MOE : TRAIN_LAYER_DENSE, lc);
    *t_moe = train_layer_total(lc);
    if (!tf_is_moe(m) || p->pp > 1) return;
    train_layer_cost dn;
    train_layer_costs(m, p, f, q, TRAIN_LAYER_DENSE, &dn);
    double a = (double)tf_moe_layers(m) / m->layers, b = 1 - a;
    lc->fwd = a * lc->fwd + b * dn.fwd;
    lc->bwd = a * lc->bwd + b * dn.bwd;
    lc->recompute = a * lc->recompute + b * dn.recompute;
    lc->comm_fwd = a * lc->comm_fwd + b * dn.comm_fwd;
    lc->comm_bwd = a * lc->comm_bwd + b * dn.comm_bwd;
    lc->hidden_comm = a * lc->hidden_comm + b * dn.hidden_comm;
    lc->ep_comm = a * lc->ep_comm + b * dn.ep_comm;
    lc->gaps = a * lc->gaps + b * dn.gaps;
    lc->host = a * lc->host + b * dn.host;
}

/* Parameters of a GPU of the busiest stage (mem_stage_params). */
static void stage_params(const llm_spec *m, const train_plan *p, stage_work *w) {
    if (p->pp == 1) {
        w->par = mem_stage_params(m, p, m->layers, 1, 1, &w->par_exp);
        return;
    }
    double e[3], x[3] = { mem_stage_params(m, p, w->lay.first, 1, 0, &e[0]),
                          mem_stage_params(m, p, w->lay.mid, 0, 0, &e[1]),
                          mem_stage_params(m, p, w->lay.last, 0, 1, &e[2]) };
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (x[i] + e[i] > x[k] + e[k]) k = i;
    w->par = x[k];
    w->par_exp = e[k];
}

/* Lay the layers out over the pipeline stages and time the busiest one. */
static void busiest_stage(const llm_spec *m, const train_plan *p, const fabric *f,
                          const train_params *q, stage_work *w) {
    const gpu_spec *g = f->gpu;
    int gpn = train_domain_gpus(f);
    tf_dims d;
    tf_dims_of(m, &d);
    double tp = p->tp, s = p->seq_len, b = p->micro_batch;
    double tokens = b * s / p->cp;

    double t_moe;
    stage_layer(m, p, f, q, &w->lc, &t_moe);
    double t_layer = train_layer_total(&w->lc);
    double t_work = t_layer - w->lc.host;   /* what the embedding and loss weigh against */

    /* Output layer and loss on the last stage (vocab-parallel over tp):
     * GEMM forward and backward, fp32 softmax cross-entropy traffic (~12
     * bytes per logit over both passes), and under SP the gather of the
     * final hidden state. Embedding lookup and its gradient on the first. */
    double vloc = d.vocab / tp;
    /* The output layer stays bf16 in every stack (Megatron-Core's output
     * layer is not a Transformer Engine module; torchao's float8
     * conversion skips "output" by default). */
    precision po = p->precision == PREC_FP8 || p->precision == PREC_FP4 ? PREC_BF16 : p->precision;
    double t_out = 3 * gpu_gemm_s(g, po, tokens, vloc, d.h, 1)
                 + gpu_memory_s(g, tokens * vloc * 12);
    if (p->sequence_parallel && p->tp > 1) {
        int rpn = p->tp < gpn ? p->tp : gpn;
        t_out += 2 * train_coll_s(f, COLL_ALLGATHER, tokens * d.h * 2, p->tp, rpn, gpn / rpn);
    }
    /* Multi-token prediction (DeepSeek-V3 section 2.2) on the last stage:
     * per depth, a 2h -> h projection, one more (MoE) layer and the shared
     * output head with its loss again. */
    if (m->mtp_depth > 0)
        t_out += m->mtp_depth * (t_moe + t_out + 3 * train_gemm_s(g, p, tokens, d.h, 2 * d.h));
    double t_emb = gpu_memory_s(g, tokens * d.h * 2 * 3);

    double load;
    if (p->pp == 1) {
        load = mem_pp_layout(m->layers, 1, 0, 0, &w->lay);
    } else {
        /* Embedding and loss counted as pipeline layers (train_plan.h,
         * train_plan_pipeline_extra_slots) take at least a layer's slot. */
        double e = t_emb / t_work, c = t_out / t_work;
        if (train_plan_pipeline_extra_slots(m, p)) e = fmax(e, 1), c = fmax(c, 1);
        load = mem_pp_layout(m->layers, p->pp, e, c, &w->lay);
    }
    w->t_mb = p->pp == 1 ? m->layers * t_layer + t_out + t_emb : load * t_layer;
    w->stage_layers = p->pp == 1 ? m->layers : load;
    w->comm_mb = w->stage_layers * (w->lc.comm_fwd + w->lc.comm_bwd);
    w->ep_mb = w->stage_layers * w->lc.ep_comm;
    double host_mb = w->stage_layers * w->lc.host;
    w->compute_mb = w->t_mb - w->comm_mb - w->ep_mb - host_mb;
    w->gaps_mb = w->stage_layers * w->lc.gaps + host_mb;
    /* DualPipe's W: the weight-gradient half of the backward's GEMM work
     * (the backward is an input-gradient and a weight-gradient GEMM per
     * forward GEMM, models/train_layer.c train_layer_costs). */
    double fwd_share = w->lc.fwd / (w->lc.fwd + w->lc.bwd + w->lc.recompute);
    w->f_mb = w->compute_mb * fwd_share;
    w->b_mb = w->compute_mb - w->f_mb;
    w->w_mb = 0.5 * fmin(w->b_mb, 2 * w->f_mb);
    stage_params(m, p, w);
}

/* Data-parallel traffic of one step, exposed and hidden behind compute. */
typedef struct dp_cost {
    double exposed, hidden;
} dp_cost;

/* One layer's FSDP gather (*ag, bf16) and gradient reduce-scatter (*rs).
 * With expert parallelism (ep*etp > 1) a layer's routed experts are not
 * dense weights: each GPU holds only its EP rank's experts, sharded over
 * the expert data-parallel group (edp GPUs, ep*etp apart), and gathers and
 * reduces them there; the rest of the layer over dp*cp as before
 * (Megatron-Core 0.15, "Support FSDP with EP for MoE models", MoE README;
 * Megatron-FSDP shards each parameter over its own data-parallel group). */
static void fsdp_layer_colls(const llm_spec *m, const train_plan *p, const fabric *f, double gbytes,
                             int nred, int rpn, int conc, double *ag, double *rs) {
    tf_param_counts pc;
    tf_param_counts_of(m, &pc);
    double tp = p->tp, lp = pc.layer, routed = 0;
    long span = (long)train_plan_ep(p) * train_plan_etp(p);
    if (span > 1 && m->layers > 0)
        routed = tf_moe_layers(m) * pc.moe_layer_routed / m->layers;
    *ag = train_coll_s(f, COLL_ALLGATHER, (lp - routed) / tp * train_dp_param_bytes(p), nred, rpn, conc);
    *rs = train_coll_s(f, COLL_REDUCESCATTER, (lp - routed) / tp * gbytes, nred, rpn, conc);
    if (!(routed > 0)) return;
    int gpn = train_domain_gpus(f), edp = train_plan_edp(p);
    int erpn = train_per_node(edp, (int)span, gpn);
    *ag += train_coll_s(f, COLL_ALLGATHER, routed / span * train_dp_param_bytes(p), edp, erpn, gpn / erpn);
    *rs += train_coll_s(f, COLL_REDUCESCATTER, routed / span * gbytes, edp, erpn, gpn / erpn);
}

/* FSDP without pipelining, per micro-batch: gather each layer before its
 * forward and again before its backward (not again when the stack keeps
 * gathered weights: fsdp_reshard 0), reduce-scatter its gradient after;
 * one layer prefetched ahead of compute (none without fsdp_prefetch: each
 * gather then waits in full). Embedding and output weights are units too. */
static dp_cost dp_fsdp_flat(const llm_spec *m, const train_plan *p, const fabric *f,
                            const stage_work *w, double gbytes, int nred, int rpn, int conc,
                            int nmicro) {
    double tp = p->tp, ag, rs;
    const train_layer_cost *lc = &w->lc;
    fsdp_layer_colls(m, p, f, gbytes, nred, rpn, conc, &ag, &rs);
    tf_param_counts pc;
    tf_param_counts_of(m, &pc);
    double eo = (pc.embedding + pc.output) / tp;
    double ag_eo = train_coll_s(f, COLL_ALLGATHER, eo * 2, nred, rpn, conc);
    double rs_eo = train_coll_s(f, COLL_REDUCESCATTER, eo * gbytes, nred, rpn, conc);
    double pre = p->stack.fsdp_prefetch ? 1 : 0;
    double agb = p->stack.fsdp_reshard ? ag : 0;             /* the backward's gather */
    double lf = pre * (lc->fwd + lc->comm_fwd), lb = pre * (lc->bwd + lc->recompute + lc->comm_bwd);
    double L = m->layers;
    double ex = ag_eo + ag                                   /* nothing to hide the first under */
              + (L - 1) * fmax(0, ag - lf)
              + L * fmax(0, agb + rs - lb)
              + rs + rs_eo;                                  /* the last ones after compute */
    double total = ag_eo + rs_eo + L * (ag + agb + rs);
    dp_cost c = { nmicro * ex, nmicro * fmax(0, total - ex) };
    return c;
}

/* Gradient all-reduce (no sharding), or ZeRO-1, and FSDP across pipeline
 * stages (gathered once per step, as Llama 3 did): reduce-scatter the
 * gradients under the last backward, gather the updated bf16 weights under
 * the first forward. ZeRO-2 keeps only its gradient shard, so it
 * reduce-scatters under every micro-batch's backward. */
static dp_cost dp_per_step(const train_plan *p, const fabric *f, const train_params *q,
                           const stage_work *w, double gbytes, int nred, int rpn, int conc,
                           int nmicro) {
    double t_fwd_mb = w->stage_layers * w->lc.fwd;
    double t_bwd_mb = w->stage_layers * (w->lc.bwd + w->lc.recompute);
    double grads = w->par * gbytes;
    dp_cost c;
    if (p->sharding == SHARD_NONE) {
        double ar = train_coll_s(f, COLL_ALLREDUCE, grads, nred, rpn, conc);
        double win = q->dp_overlap * t_bwd_mb;
        c.exposed = fmax(0, ar - win);
        c.hidden = ar - c.exposed;
    } else {
        double rs = train_coll_s(f, COLL_REDUCESCATTER, grads, nred, rpn, conc);
        double ag = train_coll_s(f, COLL_ALLGATHER, w->par * train_dp_param_bytes(p), nred, rpn, conc);
        double times = p->sharding == SHARD_ZERO2 ? nmicro : 1;
        double e1 = times * fmax(0, rs - q->dp_overlap * t_bwd_mb);
        double e2 = fmax(0, ag - q->dp_overlap * t_fwd_mb);
        c.exposed = e1 + e2;
        c.hidden = times * rs + ag - c.exposed;
    }
    return c;
}

/* Data parallel time of one step. Context-parallel ranks hold the same
 * weights, so gradients reduce (and ZeRO/FSDP shard) over dp*cp GPUs, tp
 * apart; hidden traffic still costs overlap_slowdown of its time. */
static double dp_time(const llm_spec *m, const train_plan *p, const fabric *f,
                      const train_params *q, const stage_work *w, int nmicro) {
    int gpn = train_domain_gpus(f);
    double gbytes = train_dp_grad_bytes(p, q);
    int nred = p->dp * p->cp;
    dp_cost c = { 0, 0 };
    if (nred > 1) {
        int rpn = train_per_node(nred, p->tp, gpn);
        int conc = gpn / rpn;
        if (p->sharding == SHARD_FSDP && p->pp == 1)
            c = dp_fsdp_flat(m, p, f, w, gbytes, nred, rpn, conc, nmicro);
        else
            c = dp_per_step(p, f, q, w, gbytes, nred, rpn, conc, nmicro);
    }
    /* Routed experts reduce (and shard) over their expert data-parallel
     * group, ep*etp GPUs apart (Megatron-Core's expert grid etp, ep, edp),
     * beside the dense reduction and under the same backward; FSDP without
     * pipelining moves them layer by layer instead (fsdp_layer_colls). */
    int edp = train_plan_edp(p);
    int flat_ep = p->sharding == SHARD_FSDP && p->pp == 1 && train_plan_ep(p) * train_plan_etp(p) > 1;
    if (w->par_exp > 0 && edp > 1 && !flat_ep) {
        stage_work we = *w;
        we.par = w->par_exp;
        int stride = train_plan_ep(p) * train_plan_etp(p);
        int rpn = train_per_node(edp, stride, gpn);
        dp_cost ce = dp_per_step(p, f, q, &we, gbytes, edp, rpn, gpn / rpn, nmicro);
        c.exposed += ce.exposed;
        c.hidden += ce.hidden;
    }
    return c.exposed + c.hidden * q->overlap_slowdown;
}

/* Pipeline point-to-point send of one micro-batch's activation (split over
 * tp: Megatron's scatter/gather, or sequence parallelism), exposed part. */
static double p2p_send_time(const llm_spec *m, const train_plan *p, const fabric *f,
                            const train_params *q) {
    if (p->pp <= 1) return 0;
    int gpn = train_domain_gpus(f);
    double tokens = (double)p->micro_batch * p->seq_len / p->cp;
    double bytes = tokens * m->hidden * 2 / p->tp;
    int same = (long)p->tp * p->cp * p->dp < gpn;
    return p2p_time_s(f, bytes, same, gpn) * (1 - q->p2p_overlap);
}

/* The pipeline schedule chosen for a step: interleaving factor, its time
 * parts, and the memory of the busiest stage under it. */
typedef struct schedule_pick {
    double step_s;
    step_parts t;
    int v, fits;
    memory_breakdown mem;
} schedule_pick;

/* DualPipe's bubble (DeepSeek-V3, arXiv 2412.19437, Table 2):
 * (PP/2 - 1)(F&B + B - 3W), with F, B and W the busiest stage's forward,
 * full backward and weight-gradient compute per micro-batch and F&B the
 * pair of a forward and a backward chunk run together: their compute adds
 * (the pairing hides communication, not arithmetic), F + B. The pipeline
 * sends of each bubble slot count as in 1F1B. */
static double dualpipe_bubble_s(const train_plan *p, const stage_work *w, double p2p_mb) {
    double fb = w->f_mb + w->b_mb;
    return (p->pp / 2.0 - 1) * (fb + w->b_mb - 3 * w->w_mb + p2p_mb);
}

/* Interleaving factor: given, or the fastest that fits among the
 * schedules the stack runs (stack_runs_interleaved: DeepSpeed's pipeline
 * engine runs 1F1B only). dp_s and opt_s do not depend on it; the bubble
 * and the sends do. */
static void pick_schedule(const llm_spec *m, const train_plan *p, const fabric *f,
                          const train_params *q, const stage_work *w, int nmicro,
                          double dp_s, double opt_s, schedule_pick *out) {
    double t_p2p = p2p_send_time(m, p, f, q);
    int vmax = 1;
    int auto_v = p->virtual_stages == 0 && stack_runs_interleaved(&p->stack);
    if (p->pp > 1 && (auto_v || p->schedule == PP_INTERLEAVED)) {
        vmax = (m->layers + (p->virtual_stages > 1 ? train_plan_pipeline_extra_slots(m, p) : 0)) / p->pp;
        if (vmax < 1) vmax = 1;
        if (nmicro < p->pp) vmax = 1;   /* interleaving needs m >= p micro-batches */
    }
    int vlo = (p->schedule == PP_INTERLEAVED && vmax >= 2) ? 2 : 1, vhi = vmax;
    if (p->virtual_stages > 0) vlo = vhi = p->virtual_stages;

    memset(out, 0, sizeof *out);
    out->step_s = -1;
    out->v = vlo;
    for (int v = vlo; v <= vhi; v++) {
        train_plan pv = *p;
        pv.virtual_stages = v;
        pv.schedule = v > 1 ? PP_INTERLEAVED : p->schedule;
        memory_breakdown mb;
        int fits = mem_estimate(m, &pv, v, &w->lay, f->gpu, q, &mb);
        step_parts sp;
        double p2p_mb = p->pp > 1 ? 2 * v * t_p2p : 0;
        sp.compute = nmicro * w->compute_mb;
        sp.comm = nmicro * w->comm_mb;
        sp.bubble = p->pp > 1 ? (double)(p->pp - 1) / v * (w->t_mb + p2p_mb) + nmicro * p2p_mb : 0;
        if (p->schedule == PP_DUALPIPE)
            sp.bubble = dualpipe_bubble_s(p, w, p2p_mb) + nmicro * p2p_mb;
        sp.ep = nmicro * w->ep_mb;
        sp.dp = dp_s;
        sp.opt = opt_s;
        sp.other = nmicro * w->gaps_mb + q->step_overhead_s;
        double t = sp.compute + sp.comm + sp.bubble + sp.dp + sp.opt + sp.other + sp.ep;
        /* Prefer fitting plans; among equals, the fastest. */
        double best = out->step_s;
        int better = best < 0 || (fits && !out->fits) || (fits == out->fits && t < best * (1 - 1e-9));
        if (better) {
            out->step_s = t;
            out->t = sp;
            out->v = v;
            out->fits = fits;
            out->mem = mb;
        }
    }
}

/* Fill r from the chosen schedule: times, memory, throughput and MFU, and
 * why it does not fit when it does not. */
static void fill_result(const llm_spec *m, const train_plan *p, const fabric *f,
                        const train_params *q, const stage_work *w, int nmicro,
                        const schedule_pick *k, train_result *r) {
    double best = k->step_s, s = p->seq_len;
    const mem_layout *lay = &w->lay;
    r->step_s = best;
    r->t.compute_s = k->t.compute;
    r->t.tp_comm_s = k->t.comm;
    r->t.pp_bubble_s = k->t.bubble;
    r->t.dp_comm_s = k->t.dp;
    r->t.optimizer_s = k->t.opt;
    r->t.other_s = k->t.other;
    r->t.ep_comm_s = k->t.ep;
    r->mem = k->mem;
    r->fits = k->fits;
    r->virtual_stages = k->v;
    r->stage_layers = p->pp == 1 ? m->layers
                                 : (lay->mid > lay->first ? (lay->mid > lay->last ? lay->mid : lay->last)
                                                          : (lay->first > lay->last ? lay->first : lay->last));
    r->bubble_fraction = best > 0 ? k->t.bubble / best : 0;
    r->micro_batches = nmicro;

    long gpus = (long)p->tp * p->pp * p->dp * p->cp;
    tf_param_counts pc;
    tf_param_counts_of(m, &pc);
    r->params = pc.total;
    r->active_params = pc.active;
    r->ep = train_plan_ep(p);
    r->etp = train_plan_etp(p);
    r->schedule = k->v > 1 ? PP_INTERLEAVED : p->schedule == PP_DUALPIPE ? PP_DUALPIPE : PP_1F1B;
    r->tokens_per_step = (double)p->global_batch * s;
    r->model_flops_per_step = r->tokens_per_step * tf_model_flops_per_token(m, s);
    r->hw_flops_per_step = r->tokens_per_step * train_layer_hw_flops_per_token(m, p);
    r->model_tflops_per_gpu = r->model_flops_per_step / best / gpus / 1e12;
    r->hardware_tflops_per_gpu = r->hw_flops_per_step / best / gpus / 1e12;
    double peak = gpu_peak_flops(f->gpu, p->precision);
    r->mfu = peak > 0 ? r->model_tflops_per_gpu * 1e12 / peak : 0;
    r->tokens_per_s_per_gpu = r->tokens_per_step / best / gpus;
    if (!r->fits) {
        train_plan pv = *p;
        pv.virtual_stages = k->v;
        mem_explain(m, &pv, k->v, f->gpu, f->node ? f->node->gpus : 0, q, &r->mem, r->why,
                    sizeof r->why);
    }
    r->micro_batch = p->micro_batch;
    snprintf(r->stack, sizeof r->stack, "%s", p->stack.name);
}

/* One step of a checked plan whose micro-batch is given (>= 1): time the
 * busiest stage, add data-parallel traffic and the optimizer, pick the
 * pipeline schedule, and report. */
static void step_fixed(const llm_spec *m, const train_plan *p, const fabric *f,
                       const train_params *q, train_result *r) {
    memset(r, 0, sizeof *r);
    int nmicro = p->global_batch / (p->dp * p->micro_batch);
    stage_work w;
    busiest_stage(m, p, f, q, &w);
    double dp_s = dp_time(m, p, f, q, &w, nmicro);
    /* Optimizer over the parameters this GPU updates. */
    double upd = w.par / (p->sharding == SHARD_NONE ? 1 : p->dp * p->cp)
               + w.par_exp / (p->sharding == SHARD_NONE ? 1 : train_plan_edp(p));
    double opt_s = gpu_memory_s(f->gpu, upd * q->optimizer_traffic_bytes);
    schedule_pick k;
    pick_schedule(m, p, f, q, &w, nmicro, dp_s, opt_s, &k);
    fill_result(m, p, f, q, &w, nmicro, &k, r);
}

int train_step_with(const llm_spec *m, const train_plan *plan, const fabric *f,
                    const train_params *qp, train_result *r) {
    if (!r) return -1;
    memset(r, 0, sizeof *r);
    if (!m || !plan || !f) return fail(r, "train_step: missing model, plan or fabric");
    if (!f->gpu || !f->node) return fail(r, "train_step: the fabric has no GPU or node type");
    train_params qd;
    if (qp) qd = *qp;
    else train_params_default(&qd);
    train_plan p = *plan;
    train_plan_model_defaults(&p, m);
    train_plan_defaults(&p);
    /* A named stack's figures replace the software figures of the params;
     * under `auto` they are the params' own (train_plan_auto_stack). */
    if (p.stack_given) {
        qd.tp_overlap = p.stack.tp_overlap;
        qd.dp_overlap = p.stack.dp_overlap;
        qd.p2p_overlap = p.stack.p2p_overlap;
        qd.kernel_gap_s = p.stack.kernel_gap_s;
        qd.step_overhead_s = p.stack.step_overhead_s;
        /* Adam: the fp32 master weight and two moments of the stack's width. */
        if (p.stack.adam_moment_bytes > 0) qd.optimizer_state_bytes = 4 + 2 * p.stack.adam_moment_bytes;
    }
    /* async-tp= overrides the stack: on, TP collectives decomposed and
     * overlapped with their GEMMs (Wang et al., ASPLOS'23; PyTorch async TP
     * with torch.compile: torchtitan experimental.enable_async_tensor_parallel,
     * "Introducing Async Tensor Parallelism in PyTorch", PyTorch forums 2024), one chunk in tp
     * exposed as with Transformer Engine's userbuffers; off, vanilla TP
     * with every collective on the critical path. */
    if (p.async_tp) qd.tp_overlap = p.async_tp > 0 ? 1 : 0;
    qp = &qd;
    if (train_plan_check(m, &p, r->why, sizeof r->why) < 0) return -1;
    if (p.micro_batch > 0) {
        step_fixed(m, &p, f, qp, r);
        return 0;
    }
    /* A stack that fixes the micro-batch count of a pipeline runs
     * microbatches_per_stage x pp of them (torchtitan: as many as stages,
     * pipeline_parallel_microbatches's default), when they divide the
     * sequences per pipeline. */
    int n = p.global_batch / p.dp, tried = 0;
    int nmb = p.stack.microbatches_per_stage * p.pp;
    if (p.pp > 1 && nmb > 0 && n % nmb == 0) {
        p.micro_batch = n / nmb;
        step_fixed(m, &p, f, qp, r);
        return 0;
    }
    /* Auto micro-batch: the divisors b of the sequences per pipeline, in
     * increasing order, until one does not fit (activations grow with b,
     * so no larger one would) or MICRO_AUTO_MAX have been tried; the
     * fastest that fits wins, ties to the smaller b. */
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
