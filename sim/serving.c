/*
 * serving: the public entry points of a service (serving.h): building one
 * from its <inference> (checked inputs, models priced on the node's GPUs,
 * the KV cache sized, random streams, arrivals, initial replicas), the
 * host's calls, the results, and freeing it. How a service is held is in
 * serving_int.h; what it does, concept by concept, in the other
 * serving_*.c files, which this one composes: they call each other in one
 * order only, below this one (serving_int.h, docs/architecture-serving.md).
 */
#include "sim/serving.h"
#include "sim/serving_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/gpu.h"
#include "sim/serving_disagg.h"

/* A disaggregated service's decode replicas have host tags SV_DECODE_TAG
 * and up (serving_disagg.h): *sv becomes that pool, the tag its index. */
static int pool_of_tag(serving **sv, int tag) {
    if (!(*sv)->dg || tag < SV_DECODE_TAG) return tag;
    *sv = (*sv)->dg->pool[1];
    return tag - SV_DECODE_TAG;
}

void serving_granted(serving *sv, int tag) {
    tag = pool_of_tag(&sv, tag);
    sv_replica_granted(sv, tag);
}

void serving_replica_lost(serving *sv, int tag, const char *why) {
    tag = pool_of_tag(&sv, tag);
    sv_replica_lost(sv, tag, why);
}

void serving_close(serving *sv) {
    if (sv->dg) sv_stats_close(sv->dg->pool[1]);
    sv_stats_close(sv);
    sv_slo_close(sv);
    if (sv->dg) sv_disagg_close(sv->dg);
}

const service_result *serving_result(const serving *sv) { return &sv->res; }

int serving_done(const serving *sv) { return sv->finished && (!sv->dg || sv->dg->pool[1]->finished); }

size_t serving_samples(const serving *sv, const char *which, const double **x) {
    const samples *p = !strcmp(which, "ttft") ? &sv->s_ttft : !strcmp(which, "tpot") ? &sv->s_tpot
                     : !strcmp(which, "e2e") ? &sv->s_e2e : !strcmp(which, "queue") ? &sv->s_queue : NULL;
    if (!p) return 0;
    *x = p->x;
    return p->n;
}

static void free_one(serving *sv);

void serving_free(serving *sv) {
    if (!sv) return;
    sv_disagg *dg = sv->role == SV_PREFILL ? sv->dg : NULL;
    if (dg) free_one(dg->pool[1]);
    free_one(sv);
    sv_disagg_free(dg);
}

static void free_one(serving *sv) {
    if (!sv) return;
    sv_prefix_free(sv);
    sv_router_free(sv);
    sv_slo_free(sv);
    for (int i = 0; i < sv->n_reps; i++) {
        replica *r = &sv->reps[i];
        for (int m = 0; r->ms && m < sv->n_models; m++) {
            free(r->ms[m].bucket);
            free(r->ms[m].cfw);
        }
        free(r->ms);
        free(r->heap);
        free(r->ch);
    }
    free(sv->reps);
    free(sv->rq);
    free(sv->models);
    free(sv->share_cum);
    free(sv->load_s);
    free(sv->block_bytes);
    sv_memo_free(sv);
    free(sv->trace);
    free(sv->len_law);
    free(sv->trace_blocks);
    free(sv->s_ttft.x);
    free(sv->s_tpot.x);
    free(sv->s_e2e.x);
    free(sv->s_queue.x);
    free(sv->s_ttft_admit.x);
    rng_free(sv->r_arr);
    rng_free(sv->r_len);
    rng_free(sv->r_mod);
    rng_free(sv->r_res);
    rng_free(sv->r_route);
    free(sv);
}

/* The largest coefficient of variation of a length or inter-arrival
 * distribution: beyond it almost every draw is the minimum and the mean
 * rests on draws too rare to appear in a run (and at about 1e154 cv² is no
 * longer a double: the lognormal's parameters become NaN). */
#define CV_MAX 1000.0

/* Every number of <inference> that becomes a time on the clock or a
 * distribution's parameter, range-checked before anything is scheduled.
 * 0, or -1 with err "FILE:LINE: <element attr="v">: why". */
static int check_inputs(const scenario *s, const sc_inference *c, char *err, size_t errlen) {
    char why[160];
    int al = c->arrivals_line > 0 ? c->arrivals_line : c->line;
    if (engine_check_s(c->arrival_start_s, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <arrivals start=\"%g s\">: start %s", s->file, al, c->arrival_start_s, why);
        return -1;
    }
    if (engine_check_s(c->arrival_start_s + c->arrival_duration_s, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <arrivals duration=\"%g s\">: start + duration %s", s->file, al,
                 c->arrival_duration_s, why);
        return -1;
    }
    int timed = !strcmp(c->arrival_process, "poisson") || !strcmp(c->arrival_process, "bursty") ||
                !strcmp(c->arrival_process, "diurnal");
    if (timed && (!(c->rate_per_s > 0) || engine_check_s(1.0 / c->rate_per_s, why, sizeof why) < 0)) {
        snprintf(err, errlen, "%s:%d: <arrivals rate=\"%g/s\">: the mean time between arrivals (%g s) %s", s->file,
                 al, c->rate_per_s, 1.0 / c->rate_per_s, c->rate_per_s > 0 ? why : "is not finite");
        return -1;
    }
    if (!strcmp(c->arrival_process, "bursty") && !(c->arrival_cv > 0 && c->arrival_cv <= CV_MAX)) {
        snprintf(err, errlen, "%s:%d: <arrivals cv=\"%g\">: cv must be in (0, %g]", s->file, al, c->arrival_cv, CV_MAX);
        return -1;
    }
    if (!strcmp(c->arrival_process, "diurnal") &&
        (!(c->diurnal_period_s > 0) || engine_check_s(c->diurnal_period_s, why, sizeof why) < 0)) {
        snprintf(err, errlen, "%s:%d: <arrivals period=\"%g s\">: period %s", s->file, al, c->diurnal_period_s,
                 c->diurnal_period_s > 0 ? why : "must be positive");
        return -1;
    }
    const char *dist[2] = { c->input_dist, c->output_dist };
    const double cv[2] = { c->input_cv, c->output_cv };
    for (int i = 0; i < 2; i++) {
        int uses_cv = !strcmp(dist[i], "lognormal") || !strcmp(dist[i], "gamma");
        if (uses_cv && !(cv[i] > 0 && cv[i] <= CV_MAX)) {
            snprintf(err, errlen, "%s:%d: <inference name=\"%s\">: <requests %s-cv=\"%g\">: %s-cv must be in (0, %g]",
                     s->file, c->line, c->name, i ? "output" : "input", cv[i], i ? "output" : "input", CV_MAX);
            return -1;
        }
    }
    if (engine_check_s(c->model_load_s, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <inference model-load-time=\"%g s\">: model-load-time %s", s->file, c->line,
                 c->model_load_s, why);
        return -1;
    }
    if (c->autoscale) {
        int l = c->autoscale_line > 0 ? c->autoscale_line : c->line;
        const double v[3] = { c->autoscale_interval_s, c->autoscale_startup_s, c->autoscale_cooldown_s };
        static const char *const name[3] = { "interval", "startup", "cooldown" };
        for (int i = 0; i < 3; i++)
            if (engine_check_s(v[i], why, sizeof why) < 0) {
                snprintf(err, errlen, "%s:%d: <autoscale %s=\"%g s\">: %s %s", s->file, l, name[i], v[i], name[i], why);
                return -1;
            }
        /* A tick must move the clock, and a run of hours must not take
         * billions of them. */
        if (!(c->autoscale_interval_s >= 1e-3)) {
            snprintf(err, errlen, "%s:%d: <autoscale interval=\"%g s\">: interval must be at least 1ms", s->file, l,
                     c->autoscale_interval_s);
            return -1;
        }
    }
    return 0;
}

/* A model's time for one iteration or one load must be a time the clock
 * can hold; a catalog figure such as hbm-bw="1e-300B/s" made it infinite
 * or NaN and the replica never finished an iteration. 0, or -1 with err
 * naming the figures of the GPU it came from. */
static int check_model_time(const scenario *s, const sc_inference *c, const gpu_spec *g, const char *what,
                            double t_s, char *err, size_t errlen) {
    char why[160];
    if (t_s > 0 && engine_check_s(t_s, why, sizeof why) == 0) return 0;
    if (!(t_s > 0)) snprintf(why, sizeof why, "is not a positive finite time");
    t_s = isnan(t_s) ? fabs(t_s) : t_s;         /* "nan", not "-nan" */
    snprintf(err, errlen,
             "%s:%d: <inference name=\"%s\">: the serving model gives %s of %g s, which %s; check the catalog "
             "figures of GPU %s (hbm-bw=%g B/s, bf16-tflops=%g)",
             s->file, c->line, c->name, what, t_s, why, g->name, g->hbm_bw_bytes_per_s, g->tflops[PREC_BF16]);
    return -1;
}

/* The service's models on the node's GPUs (priced by models/serving), each
 * with its KV block size, load time and share of the requests; checks that
 * the times they give can be on the clock. 0, or -1 with err. */
static int init_models(serving *sv, const serve_params *p, double *max_act, char *err, size_t errlen) {
    const scenario *s = sv->s;
    const sc_inference *c = sv->cfg;
    const gpu_spec *g = catalog_gpu(s->cat, sv->node->gpu);
    fabric f;
    int have_fabric = fabric_init(&f, s->cat, sv->node, 1) == 0;
    int fp4 = fp4_recipe_parse(c->fp4_recipe);
    serve_layout lay = { c->tp, c->ep > 1 ? c->ep : 1, fp4 < 0 ? FP4_NVFP4 : (fp4_recipe)fp4 };
    double sum = 0;
    size_t o = 0;
    *max_act = 0;
    for (int m = 0; m < sv->n_models; m++) {
        const char *name = c->n_models ? c->models[m].model : c->model;
        precision w = c->n_models ? c->models[m].precision : c->precision;
        precision kv = c->n_models ? c->models[m].kv_precision : c->kv_precision;
        const llm_spec *ls = catalog_llm(s->cat, name);
        char why[256];
        if (!ls || !g ||
            serve_model_init_layout(&sv->models[m], ls, g, have_fabric ? &f : NULL, &lay, w, kv, sv->budget, p,
                                    why, sizeof why) < 0) {
            snprintf(err, errlen, "%s:%d: <inference name=\"%s\">: %s", s->file, c->line, c->name,
                     !ls ? "unknown model" : !g ? "the node's GPU is not in the catalog" : why);
            return -1;
        }
        const serve_model *sm = &sv->models[m];
        if (sm->activation_bytes > *max_act) *max_act = sm->activation_bytes;
        sum += c->n_models ? c->models[m].share : 1;
        sv->share_cum[m] = sum;
        sv->block_bytes[m] = sm->kv_bytes_per_token * sv->block;
        if (sv_spec_init(sv, m, g, have_fabric ? &f : NULL, &lay, p, err, errlen) < 0) return -1;
        sv->load_s[m] = c->model_load_s > 0 ? c->model_load_s : serve_pcie_s(sv->node, sm->weight_bytes);
        if (check_model_time(s, c, g, "a model load time", sv->load_s[m], err, errlen) < 0 ||
            check_model_time(s, c, g, "a one-token iteration time", serve_tokens_s(sm, 1, 1, NULL), err, errlen) < 0 ||
            check_model_time(s, c, g, "a full-budget iteration time",
                             serve_tokens_s(sm, sv->budget, sv->max_batch, NULL), err, errlen) < 0)
            return -1;
        o += (size_t)snprintf(sv->res.models + o, o < sizeof sv->res.models ? sizeof sv->res.models - o : 0,
                              "%s%s", m ? ", " : "", name);
        if (o >= sizeof sv->res.models) o = sizeof sv->res.models - 1;
    }
    return 0;
}

/* Each model's KV cache when it is alone on a replica (what one request
 * must fit in): at least one block, and with several models the share a
 * model load must leave. 0, or -1 with err. */
static int size_kv_caches(serving *sv, char *err, size_t errlen) {
    const sc_inference *c = sv->cfg;
    for (int m = 0; m < sv->n_models; m++) {
        serve_model *sm = &sv->models[m];
        double cap = kv_cap_for(sv, sm->weight_bytes);
        sm->kv_capacity_bytes = cap;
        sm->kv_blocks = (long long)floor(cap / sv->block_bytes[m]);
        sm->kv_capacity_tokens = (double)sm->kv_blocks * sv->block;
        if (sm->kv_blocks < 1 || cap < min_kv(sv) * (sv->n_models > 1)) {
            snprintf(err, errlen,
                     "%s:%d: <inference name=\"%s\">: %s (%s, %.1f GB of weights per GPU) does not fit on %d %s "
                     "with room for its KV cache; use a larger tp or a smaller precision",
                     sv->s->file, c->line, c->name, sm->m.name, precision_name(sm->weights), sm->weight_bytes / 1e9,
                     sv->rep_gpus, sm->g.name);
            return -1;
        }
    }
    const serve_model *m0 = &sv->models[0];
    sv->res.weight_bytes_per_gpu = m0->weight_bytes;
    sv->res.kv_capacity_tokens = m0->kv_capacity_tokens;
    sv->res.kv_bytes_per_token = m0->kv_bytes_per_token * sv->rep_gpus;
    sv->res.active_params = m0->active_params;
    sv->res.total_params = m0->total_params;
    sv->res.kv_blocks_per_replica = (int)(m0->kv_blocks > INT32_MAX ? INT32_MAX : m0->kv_blocks);
    return 0;
}

/* The scheduler's settings: batch limits, KV allocation and preemption,
 * batching and routing. */
static void init_policy(serving *sv, serve_params *p) {
    const sc_inference *c = sv->cfg;
    sv->block = p->block_tokens;
    sv->kv_frac = p->kv_memory_fraction;
    sv->budget = c->token_budget > 0 ? c->token_budget : 8192;
    sv->max_batch = c->max_batch > 0 ? c->max_batch : 256;
    sv->rep_gpus = c->ep > c->tp ? c->ep : c->tp;
    /* attn-dp-limits="per-rank" (TensorRT-LLM): each attention-DP rank runs
     * a scheduler of its own with these limits, so the replica admits
     * attn_dp times them; each GPU's activation workspace stays one rank's
     * budget (serve_model_init_layout divides by attn_dp) and the KV cache
     * stays the replica's (docs/moe-serving.md "Per-rank budgets under
     * attention DP") */
    int attn_dp = sv->rep_gpus / (c->tp > 0 ? c->tp : 1);
    if (attn_dp > 1 && !strcmp(c->attn_dp_limits, "per-rank")) {
        sv->budget = (int)fmin((double)sv->budget * attn_dp, INT32_MAX);
        sv->max_batch = (int)fmin((double)sv->max_batch * attn_dp, INT32_MAX);
    }
    /* a CUDA graph is padded no further than one rank's batch limit */
    p->graph_rank_limit = sv->max_batch / (attn_dp > 1 ? attn_dp : 1);
    sv->reserve = strcmp(c->kv_allocation, "on-demand") != 0;
    sv->chunked = c->chunked_prefill;
    sv->prefill_alone = c->prefill_alone && !sv->chunked;
    sv->static_b = !strcmp(c->batching, "static");
    if (sv->static_b) sv->reserve = 1;
    sv->swap = !strcmp(c->kv_preemption, "swap");
    sv->router = sv_router_kind(c->router);
}

/* Random streams, one per purpose. 0, or -1 when out of memory. */
static int init_rngs(serving *sv) {
    const sc_inference *c = sv->cfg;
    char comp[SC_NAME_MAX + 32];
    snprintf(comp, sizeof comp, "serving/%s/arrivals", c->name);
    sv->r_arr = rng_new(sv->s->seed, comp, 0);
    snprintf(comp, sizeof comp, "serving/%s/lengths", c->name);
    sv->r_len = rng_new(sv->s->seed, comp, 0);
    snprintf(comp, sizeof comp, "serving/%s/models", c->name);
    sv->r_mod = rng_new(sv->s->seed, comp, 0);
    snprintf(comp, sizeof comp, "serving/%s/reservoir", c->name);
    sv->r_res = rng_new(sv->s->seed, comp, 0);
    snprintf(comp, sizeof comp, "serving/%s/router", c->name);
    sv->r_route = rng_new(sv->s->seed, comp, 0);
    return sv->r_arr && sv->r_len && sv->r_mod && sv->r_res && sv->r_route ? 0 : -1;
}

/* Per-model arrays, the memo tables empty. 0, or -1 when out of memory. */
static int alloc_models(serving *sv) {
    const sc_inference *c = sv->cfg;
    sv->n_models = c->n_models > 0 ? c->n_models : 1;
    sv->models = calloc((size_t)sv->n_models, sizeof *sv->models);
    sv->share_cum = calloc((size_t)sv->n_models, sizeof *sv->share_cum);
    sv->load_s = calloc((size_t)sv->n_models, sizeof *sv->load_s);
    sv->block_bytes = calloc((size_t)sv->n_models, sizeof *sv->block_bytes);
    sv->memo = calloc((size_t)sv->n_models, sizeof *sv->memo);   /* empty: tables made on first use */
    return sv->models && sv->share_cum && sv->load_s && sv->block_bytes && sv->memo ? 0 : -1;
}

/* The replica pool, sized for the autoscaler's maximum up front so
 * replicas never move (events point at them); *initial is how many start.
 * 0, or -1 when out of memory. */
static int alloc_replicas(serving *sv, int *initial) {
    const sc_inference *c = sv->cfg;
    int n = c->replicas;
    int most = c->autoscale ? (c->max_replicas > n ? c->max_replicas : n) : n;
    if (c->autoscale) {
        if (n < c->min_replicas) n = c->min_replicas;
        if (n > c->max_replicas) n = c->max_replicas;
    }
    sv->reps = calloc((size_t)most, sizeof *sv->reps);
    if (!sv->reps) return -1;
    sv->cap_reps = most;
    sv->res.replicas = n;
    *initial = n;
    return 0;
}

/* The service's metrics. Registered before the first replica starts: a
 * replica that is ready at once publishes the replicas count (an id still
 * 0 would be the world's gpus_training). */
static void register_metrics(serving *sv) {
    const char *name = sv->cfg->name;
    sv->m_queue = metrics_register(sv->bus, name, "queue_length");
    sv->m_running = metrics_register(sv->bus, name, "running");
    sv->m_replicas = metrics_register(sv->bus, name, "replicas");
    sv->m_kv = metrics_register(sv->bus, name, "kv_utilization");
    sv->m_tps = metrics_register(sv->bus, name, "output_tokens_per_s");
    sv->m_ttft99 = metrics_register(sv->bus, name, "ttft_p99_s");
    sv->m_tpot99 = metrics_register(sv->bus, name, "tpot_p99_s");
}

/* Take the initial replicas' GPUs from the host: all free now, or the
 * service is not built (err; what was taken is given back). */
static int start_replicas(serving *sv, int initial, char *err, size_t errlen) {
    const sc_inference *c = sv->cfg;
    for (int k = 0; k < initial; k++) {
        if (sv_start_replica(sv, 0) != 0) {
            snprintf(err, errlen,
                     "%s:%d: <inference name=\"%s\">: replica %d of %d needs %d free GPUs of %s; the cluster has no more",
                     sv->s->file, c->line, c->name, k + 1, initial, sv->rep_gpus, sv->node->name);
            /* Last first: the queued request goes before GPUs come free. */
            for (int i = sv->n_reps - 1; i >= 0; i--) sv_release_replica(&sv->reps[i]);
            return -1;
        }
    }
    return 0;
}

/* The engine's host figures (models/catalog/engines.xml; the loader has
 * checked them): none named, the ideal engine's defaults. The captured CUDA
 * graphs are the service's: the engine's list or the scenario's. */
static void engine_params(const scenario *s, const sc_inference *c, serve_params *p) {
    const engine_spec *en = c->engine[0] ? catalog_engine(s->cat, c->engine) : NULL;
    char why[256];
    if (serve_graph_sizes_parse(c->cuda_graph_sizes, p, why, sizeof why) < 0) p->n_graph_sizes = 0;
    if (!en) return;
    p->host_step_s = en->host_step_s;
    p->host_sync = !strcmp(en->scheduler, "sync");
    if (en->host_s_per_seq > 0) p->host_s_per_seq = en->host_s_per_seq;
    if (en->gemm_efficiency > 0) p->engine_gemm_eff = en->gemm_efficiency;
    if (en->kv_read_efficiency > 0) p->engine_kv_eff = en->kv_read_efficiency;
}

/* A decode pool draws no arrivals (its requests come from the prefill
 * pool) but keeps the service's window for its ticks. */
static int init_arrivals(serving *sv, char *err, size_t errlen) {
    if (sv->role != SV_DECODE) return sv_arrivals_init(sv, err, errlen);
    sv->t_start = sim_from_s(sv->cfg->arrival_start_s);
    sv->t_stop = SIM_FOREVER;
    return 0;
}

/* A service, or one pool (role) of disaggregated service dg. */
static serving *build(engine *e, metric_bus *bus, const scenario *s, const sc_inference *c, const node_spec *node,
                      const serving_host *host, int role, sv_disagg *dg, char *err, size_t errlen) {
    serving *sv = calloc(1, sizeof *sv);
    if (!sv) goto oom;
    sv->role = role;
    sv->dg = dg;
    sv->e = e;
    sv->bus = bus;
    sv->s = s;
    sv->cfg = c;
    sv->node = node;
    sv->host = *host;
    sv->start_iteration = sv_start_iteration;
    sv->pending.head = sv->pending.tail = NIL;
    sv->free_rq = NIL;
    sv->low_since = -1;
    snprintf(sv->res.name, sizeof sv->res.name, "%s", c->name);
    sv->res.tp = c->tp;
    sv->res.ep = c->ep > 1 ? c->ep : 1;
    if (alloc_models(sv) < 0) goto oom;
    serve_params p;
    serve_params_default(&p);
    if (c->block_tokens > 0) p.block_tokens = c->block_tokens;
    if (c->kv_memory_fraction > 0) p.kv_memory_fraction = c->kv_memory_fraction;
    if (node && node->host_s_per_seq > 0) p.host_s_per_seq = node->host_s_per_seq;
    engine_params(s, c, &p);
    p.act_quant_fp8 = !strcmp(c->fp8_act_quant, "kernel");
    p.cutlass_moe = !strcmp(c->fused_moe, "cutlass");
    p.trtllm_fmha = !strcmp(c->context_fmha, "trtllm");
    p.trtllm_mla = !strcmp(c->mla_decode, "trtllm");
    int moe_comm = serve_moe_comm_parse(c->moe_comm);     /* checked by the loader */
    p.moe_comm = moe_comm > 0 ? moe_comm : SERVE_MOE_COMM_AUTO;
    init_policy(sv, &p);
    double max_act;
    if (init_models(sv, &p, &max_act, err, errlen) < 0) goto fail;
    sv->usable = sv->models[0].g.hbm_bytes - p.runtime_reserve_bytes - max_act;
    if (size_kv_caches(sv, err, errlen) < 0) goto fail;
    if (init_rngs(sv) < 0 || sv_slo_init(sv) < 0) goto oom;
    if (init_arrivals(sv, err, errlen) < 0) goto fail;
    if (sv_prefix_init(sv) < 0) goto oom;
    int initial;
    if (alloc_replicas(sv, &initial) < 0) goto oom;
    register_metrics(sv);
    if (start_replicas(sv, initial, err, errlen) < 0) goto fail;
    if (role != SV_DECODE) sv_arrivals_start(sv);
    sv->ev_tick = engine_schedule(e, sv->t_start, sv_on_tick, sv);
    if (c->autoscale) sv->ev_scale = engine_schedule(e, sv->t_start + sim_from_s(c->autoscale_interval_s), sv_on_scale, sv);
    sv_event(sv, "service_start", "%d replicas of %d GPUs: %s", initial, sv->rep_gpus, sv->res.models);
    sv_publish_replicas(sv);
    if (sv->arrivals_done) sv_check_finished(sv);
    return sv;
oom:
    snprintf(err, errlen, "%s:%d: out of memory building <inference name=\"%s\">", s->file, c->line, c->name);
fail:
    free_one(sv);
    return NULL;
}

/* Its prefill pool, then its decode pool, linked (serving_disagg.h); the
 * prefill pool stands for the service. */
static serving *new_disaggregated(engine *e, metric_bus *bus, const scenario *s, const sc_inference *c,
                                  const node_spec *node, const serving_host *host, char *err, size_t errlen) {
    sv_disagg *dg = sv_disagg_new(s, c, node, host);
    serving *p = NULL, *d = NULL;
    if (!dg) goto oom;
    p = build(e, bus, s, &dg->cfg[0], node, &dg->pool_host[0], SV_PREFILL, dg, err, errlen);
    if (p) d = build(e, bus, s, &dg->cfg[1], node, &dg->pool_host[1], SV_DECODE, dg, err, errlen);
    if (!d) goto fail;
    if (sv_disagg_attach(dg, p, d) < 0) goto oom;
    return p;
oom:
    snprintf(err, errlen, "%s:%d: out of memory building <inference name=\"%s\">", s->file, c->line, c->name);
fail:
    for (int i = p ? p->n_reps - 1 : -1; i >= 0; i--) sv_release_replica(&p->reps[i]);
    free_one(d);
    free_one(p);
    sv_disagg_free(dg);
    return NULL;
}

serving *serving_new(engine *e, metric_bus *bus, const scenario *s, const sc_inference *c,
                     const node_spec *node, const serving_host *host, char *err, size_t errlen) {
    if (check_inputs(s, c, err, errlen) < 0) return NULL;
    if (c->disaggregated) return new_disaggregated(e, bus, s, c, node, host, err, errlen);
    return build(e, bus, s, c, node, host, SV_COLOCATED, NULL, err, errlen);
}
