/*
 * serving_disagg: disaggregated serving, the link between a service's
 * prefill pool and its decode pool (serving_disagg.h says how they work
 * together; docs/disaggregated-serving.md what is modelled and why).
 */
#include "sim/serving_disagg.h"

#include <stdlib.h>
#include <string.h>

#include "models/serving_kv.h"

/* ---- the hosts each pool is given ----------------------------------------- */

static int acquire_prefill(void *ctx, int gpus, int tag, int *granted) {
    sv_disagg *dg = ctx;
    return dg->host.acquire(dg->host.ctx, gpus, tag, granted);
}

static int acquire_decode(void *ctx, int gpus, int tag, int *granted) {
    sv_disagg *dg = ctx;
    return dg->host.acquire(dg->host.ctx, gpus, tag + SV_DECODE_TAG, granted);
}

static void release_any(void *ctx, int handle) {
    sv_disagg *dg = ctx;
    dg->host.release(dg->host.ctx, handle);
}

static int same_domain_any(void *ctx, int a, int b) {
    sv_disagg *dg = ctx;
    return dg->host.same_domain ? dg->host.same_domain(dg->host.ctx, a, b) : 0;
}

/* The prefill pool has every request it will get done: so does the
 * decode pool once it has decoded what it holds. */
static void prefill_finished(void *ctx) {
    sv_disagg *dg = ctx;
    dg->prefill_finished = 1;
    serving *d = dg->pool[1];
    if (!d) return;                          /* still being built: sv_disagg_attach does it */
    d->arrivals_done = 1;
    sv_check_finished(d);
}

static void decode_finished(void *ctx) {
    sv_disagg *dg = ctx;
    if (dg->host.finished) dg->host.finished(dg->host.ctx);
}

/* ---- building ------------------------------------------------------------- */

/* A pool's settings: the service's, with the pool's numbers; the decode
 * pool's metrics and events under "NAME.decode". */
static void pool_cfg(sc_inference *to, const sc_inference *c, const struct sc_serve_pool *p, int decode) {
    *to = *c;
    to->replicas = p->replicas;
    to->tp = p->tp;
    to->ep = p->ep;
    to->max_batch = p->max_batch;
    to->token_budget = p->token_budget;
    if (!decode) return;
    to->prefix_caching = 0;                  /* prompts, and so their prefixes, are the prefill pool's */
    static const char suffix[] = ".decode";
    size_t n = strlen(c->name);
    if (n > SC_NAME_MAX - sizeof suffix) n = SC_NAME_MAX - sizeof suffix;
    memcpy(to->name + n, suffix, sizeof suffix);
}

sv_disagg *sv_disagg_new(const scenario *s, const sc_inference *cfg, const node_spec *node, const serving_host *host) {
    sv_disagg *dg = calloc(1, sizeof *dg);
    if (!dg) return NULL;
    pool_cfg(&dg->cfg[0], cfg, &cfg->prefill, 0);
    pool_cfg(&dg->cfg[1], cfg, &cfg->decode, 1);
    dg->host = *host;
    dg->pool_host[0] = (serving_host){ dg, acquire_prefill, release_any, prefill_finished, same_domain_any };
    dg->pool_host[1] = (serving_host){ dg, acquire_decode, release_any, decode_finished, same_domain_any };
    /* two nodes: a transfer between nodes crosses the NICs */
    dg->have_fabric = fabric_init(&dg->f, s->cat, node, 2) == 0;
    dg->free_xfer = NIL;
    return dg;
}

int sv_disagg_attach(sv_disagg *dg, serving *prefill, serving *decode) {
    dg->pool[0] = prefill;
    dg->pool[1] = decode;
    decode->stats = prefill;
    dg->inflight = calloc((size_t)decode->cap_reps, sizeof *dg->inflight);
    dg->queued = calloc((size_t)decode->cap_reps, sizeof *dg->queued);
    if (!dg->inflight || !dg->queued) return -1;
    if (dg->prefill_finished) prefill_finished(dg);
    return 0;
}

void sv_disagg_free(sv_disagg *dg) {
    if (!dg) return;
    for (int b = 0; b < dg->n_blk; b++) free(dg->blk[b]);
    free(dg->blk);
    free(dg->inflight);
    free(dg->queued);
    free(dg->s_xfer.x);
    free(dg);
}

/* ---- transfer records ----------------------------------------------------- */

static sv_xfer *xfer_at(sv_disagg *dg, int32_t k) { return &dg->blk[k / XFER_BLOCK][k % XFER_BLOCK]; }

/* A free record; NULL when out of memory. */
static sv_xfer *xfer_alloc(sv_disagg *dg) {
    if (dg->free_xfer == NIL) {
        if (dg->n_xfer % XFER_BLOCK == 0) {
            size_t cap = (size_t)dg->n_blk;
            sv_xfer **p = realloc(dg->blk, (cap + 1) * sizeof *p);
            if (!p) return NULL;
            dg->blk = p;
            dg->blk[dg->n_blk] = malloc(XFER_BLOCK * sizeof **p);
            if (!dg->blk[dg->n_blk]) return NULL;
            dg->n_blk++;
        }
        xfer_at(dg, dg->n_xfer)->next_free = NIL;
        dg->free_xfer = dg->n_xfer++;
    }
    int32_t k = dg->free_xfer;
    sv_xfer *x = xfer_at(dg, k);
    dg->free_xfer = x->next_free;
    x->next_free = k;                        /* its own index, for xfer_release */
    x->dg = dg;
    return x;
}

static void xfer_release(sv_disagg *dg, sv_xfer *x) {
    int32_t k = x->next_free;
    x->next_free = dg->free_xfer;
    dg->free_xfer = k;
}

/* ---- the hand-off --------------------------------------------------------- */

/* What request q will take of a decode replica's cache, bytes per GPU (as
 * serving_batch.c's admission counts it). */
static double decode_bytes(const serving *d, const req *q) {
    int64_t tokens = d->reserve ? (int64_t)q->input + q->output : q->prompt;
    return blocks_for(d, tokens) * d->block_bytes[q->model];
}

/* The ready decode replica least loaded by KV cache: in use, on its way
 * and waiting in its queue, over its capacity (the lowest index on a tie);
 * -1 when none is ready. */
static int pick_decode(sv_disagg *dg) {
    const serving *d = dg->pool[1];
    int best = -1;
    double best_load = 0;
    for (int i = 0; i < d->n_reps; i++) {
        const replica *r = &d->reps[i];
        if (r->state != R_READY || !(r->kv_cap > 0)) continue;
        if (r->ms[0].queue.n == 0) dg->queued[i] = 0;   /* nothing waits (a lost replica's queue went on) */
        double load = (r->kv_used + dg->inflight[i] + dg->queued[i]) / r->kv_cap;
        if (best < 0 || load < best_load) {
            best = i;
            best_load = load;
        }
    }
    return best;
}

/* Seconds the cache of q takes from prefill replica r to decode replica
 * dst (models/serving_kv.h), counted in the service's transfer figures. */
static double transfer_s(sv_disagg *dg, const replica *r, const req *q, int dst, double iter_s) {
    serving *p = dg->pool[0];
    const serving *d = dg->pool[1];
    const serve_model *sm = &p->models[q->model];
    double bytes = serve_kv_transfer_bytes(sm, q->prompt);
    int same = dst >= 0 && same_domain_any(dg, r->handle, d->reps[dst].handle);
    serve_kv_link l = { p->rep_gpus, d->rep_gpus, same, !strcmp(p->cfg->kv_transfer, "layerwise"), sm->layers, iter_s };
    double t = dg->have_fabric && bytes > 0 ? serve_kv_transfer_s(&dg->f, bytes, &l) : 0;
    if (!(t >= 0)) t = 0;
    dg->bytes_sum += bytes > 0 ? bytes : 0;
    if (same && dg->have_fabric && fabric_domain_gpus(&dg->f) >= 2) dg->n_nvlink++;
    else dg->n_network++;
    sv_sample_add(p, &dg->s_xfer, t);
    return t;
}

/* Request k of the decode pool, its cache arrived: into the queue of the
 * replica it was sent to, or routed when that one is gone. */
static void place(sv_disagg *dg, int32_t k, const sv_xfer *x) {
    serving *d = dg->pool[1];
    req *q = &d->rq[k];
    replica *r = x->dst >= 0 ? &d->reps[x->dst] : NULL;
    if (!r || r->state != R_READY) {
        sv_route(d, k);
        return;
    }
    sv_queue_push(d, &r->ms[q->model].queue, k);
    r->outstanding += q->output - q->gen;
    dg->queued[x->dst] += x->dst_bytes;
    sv_kick(r);
}

/* The copy is done: the prefill replica frees the blocks (when it still
 * holds the GPUs it sent from), the request moves to the decode pool. */
static void deliver(sv_disagg *dg, const sv_xfer *x) {
    serving *p = dg->pool[0], *d = dg->pool[1];
    req *q = &p->rq[x->req];
    replica *src = &p->reps[x->src];
    int held = src->state == R_READY || src->state == R_DRAINING || src->state == R_STARTING;
    if (held && src->held_since == x->src_since) {
        double shared = sv_prefix_release(src, x->req, 1);   /* its cached prefix stays cached */
        src->kv_used -= q->blocks * p->block_bytes[q->model] - shared;
        sv_kick(src);                        /* room for more prompts */
    }
    if (x->dst >= 0) dg->inflight[x->dst] -= x->dst_bytes;
    int32_t k = NIL;
    if ((double)q->input + q->output <= d->models[q->model].kv_capacity_tokens) k = sv_req_alloc(d);
    if (k == NIL) {
        p->rejected++;                       /* it can never fit a decode replica (or out of memory) */
        sv_closed_next(p);
    } else {
        req *n = &d->rq[k];
        n->t_arrive = q->t_arrive;
        n->t_first = q->t_first;
        n->t_admit = q->t_admit;
        n->input = q->input;
        n->output = q->output;
        n->prompt = n->prefilled = q->prompt;
        n->gen = q->gen;
        n->model = q->model;
        n->cls = q->cls;
        n->admitted = 1;
        n->state = RQ_QUEUED;
        d->in_system++;
        place(dg, k, x);
    }
    sv_req_free(p, x->req);
    p->in_system--;
    sv_check_finished(p);
}

static void on_delivered(engine *e, void *arg) {
    (void)e;
    sv_xfer *x = arg;
    sv_disagg *dg = x->dg;
    deliver(dg, x);
    xfer_release(dg, x);
}

void sv_disagg_send(replica *r, int32_t i, double iter_s) {
    serving *sv = r->sv;
    sv_disagg *dg = sv->dg;
    req *q = &sv->rq[i];
    list_remove(sv->rq, &r->running, i);
    r->ms[q->model].running--;
    r->outstanding -= q->output - q->gen;    /* its decode is the other pool's */
    q->state = RQ_SENT;
    int dst = pick_decode(dg);
    double t = transfer_s(dg, r, q, dst, iter_s);
    sv_xfer tmp, *x = xfer_alloc(dg);
    int pooled = x != NULL;
    if (!pooled) x = &tmp;                   /* out of memory: it arrives at once */
    x->dg = dg;
    x->req = i;
    x->src = r->index;
    x->dst = dst;
    x->src_since = r->held_since;
    x->dst_bytes = decode_bytes(dg->pool[1], q);
    if (dst >= 0) dg->inflight[dst] += x->dst_bytes;
    if (pooled) engine_after(sv->e, sim_from_s(t), on_delivered, x);
    else deliver(dg, x);
}

void sv_disagg_admitted(replica *r, const req *q, double bytes) {
    (void)q;
    sv_disagg *dg = r->sv->dg;
    dg->queued[r->index] -= bytes;
    if (dg->queued[r->index] < 0) dg->queued[r->index] = 0;
}

/* ---- the results ---------------------------------------------------------- */

static void pool_result(service_pool_result *o, const serving *sv) {
    const service_result *R = &sv->res;
    o->replicas = R->replicas;
    o->replicas_peak = R->replicas_peak;
    o->tp = sv->cfg->tp;
    o->ep = sv->cfg->ep > 1 ? sv->cfg->ep : 1;
    o->gpus_peak = R->replicas_peak * sv->rep_gpus;
    o->max_batch = sv->max_batch;
    o->busy_fraction = R->busy_fraction;
    o->gpu_hours = R->gpu_hours;
    o->kv_utilization_mean = R->kv_utilization_mean;
    o->batch_mean = R->batch_mean;
    o->iterations = R->iterations;
}

/* GPU time, energy and cost: both pools'. */
static void merge_resources(service_result *R, const service_result *D) {
    double h = R->gpu_hours + D->gpu_hours;
    R->avg_gpu_power_w = h > 0 ? (R->avg_gpu_power_w * R->gpu_hours + D->avg_gpu_power_w * D->gpu_hours) / h : 0;
    R->gpu_hours = h;
    R->gpu_prefill_s += D->gpu_prefill_s;
    R->gpu_decode_s += D->gpu_decode_s;
    R->gpu_loading_s += D->gpu_loading_s;
    R->energy_kwh += D->energy_kwh;
    R->co2_kg += D->co2_kg;
    R->cost_usd += D->cost_usd;
    R->energy_per_output_token_j = R->output_tokens > 0 ? R->energy_kwh * 3.6e6 / R->output_tokens : -1;
    R->cost_per_million_tokens_usd = R->output_tokens > 0 ? R->cost_usd / (R->output_tokens / 1e6) : -1;
}

/* Counters and the replicas of both pools; the cache figures of the
 * decode pool, where a request's cache lives longest. */
static void merge_counts(sv_disagg *dg, service_result *R, const service_result *D) {
    const serving *p = dg->pool[0], *d = dg->pool[1];
    R->replicas += D->replicas;
    R->replicas_peak += D->replicas_peak;
    R->replicas_mean += D->replicas_mean;
    R->tp = D->tp;
    R->ep = D->ep;
    R->preemptions += D->preemptions;
    R->swaps += D->swaps;
    R->iterations += D->iterations;
    R->replica_losses += D->replica_losses;
    R->requests_restarted += D->requests_restarted;
    double held = p->replica_s + d->replica_s;
    R->busy_fraction = held > 0 ? (p->busy_s + d->busy_s) / held : 0;
    R->batch_mean = R->iterations ? (p->batch_sum + d->batch_sum) / (double)R->iterations : 0;
    R->kv_utilization_mean = D->kv_utilization_mean;
    if (D->kv_utilization_peak > R->kv_utilization_peak) R->kv_utilization_peak = D->kv_utilization_peak;
    R->kv_capacity_tokens = D->kv_capacity_tokens;
    R->weight_bytes_per_gpu = D->weight_bytes_per_gpu;
    R->kv_bytes_per_token = D->kv_bytes_per_token;
    R->kv_blocks_per_replica = D->kv_blocks_per_replica;
}

void sv_disagg_close(sv_disagg *dg) {
    service_result *R = &dg->pool[0]->res;
    const service_result *D = &dg->pool[1]->res;
    if (R->disaggregated) return;            /* closed before */
    pool_result(&R->pool[0], dg->pool[0]);
    pool_result(&R->pool[1], dg->pool[1]);
    R->disaggregated = 1;
    R->gpus_peak = R->pool[0].gpus_peak + R->pool[1].gpus_peak;
    merge_resources(R, D);
    merge_counts(dg, R, D);
    sv_samples_summary(&dg->s_xfer, &R->kv_transfer_p50_s, &R->kv_transfer_p99_s, &R->kv_transfer_mean_s);
    int64_t n = dg->n_nvlink + dg->n_network;
    R->kv_transfer_bytes_mean = n > 0 ? dg->bytes_sum / (double)n : 0;
    R->kv_transfers_nvlink = dg->n_nvlink;
    R->kv_transfers_network = dg->n_network;
}
