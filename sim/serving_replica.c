/*
 * serving_replica: the replicas of a service and the models resident on
 * them. A replica asks the host (the world's scheduler) for tp GPUs, starts
 * (a start-up time) when they are granted, drains when scaled down, and
 * loses its sequences' KV cache when the GPUs are taken away. With several
 * models, a replica loads a model that has waiting requests and unloads
 * the least recently used idle ones to make room (one load at a time).
 *
 * Replicas never move: pending events point at them, so the array is sized
 * for the autoscaler's maximum when the service is built.
 *
 * The service ends here too (sv_check_finished): when arrivals are over
 * and no request is left, its idle replicas give their GPUs back and the
 * host is told.
 */
#include "sim/serving_int.h"

#include <stdlib.h>
#include <string.h>

/* Start loading a model that has waiting requests, unloading idle models
 * (least recently used first) to make room. One load at a time. */
static void on_loaded(engine *e, void *arg);

void sv_maybe_load(replica *r) {
    serving *sv = r->sv;
    if (sv->n_models == 1 || r->loading >= 0) return;
    int want = -1;
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        if (ms->resident != M_UNLOADED || ms->queue.n == 0) continue;
        if (want < 0 || sv_queue_before(sv, ms->queue.head, r->ms[want].queue.head)) want = m;
    }
    if (want < 0) return;
    double w = sv->models[want].weight_bytes;
    for (;;) {
        double cap = kv_cap_for(sv, r->weights + w);
        if (cap >= min_kv(sv) && cap >= r->kv_used) break;
        /* Idle models first (nothing waiting), then ones with only a queue. */
        int lru = -1;
        for (int pass = 0; pass < 2 && lru < 0; pass++)
            for (int m = 0; m < sv->n_models; m++) {
                mstate *ms = &r->ms[m];
                if (ms->resident != M_LOADED || ms->running > 0 || ms->swapped.n > 0) continue;
                if (pass == 0 && ms->queue.n > 0) continue;
                if (lru < 0 || ms->last_used < r->ms[lru].last_used) lru = m;
            }
        if (lru < 0) return;                     /* wait for running work to finish */
        r->ms[lru].resident = M_UNLOADED;
        r->weights -= sv->models[lru].weight_bytes;
        r->kv_cap = kv_cap_for(sv, r->weights);
        sv->res.model_unloads++;
        sv_event(sv, "model_unload", "replica %d: %s (least recently used)", r->index, sv->models[lru].m.name);
    }
    r->ms[want].resident = M_LOADING;
    r->loading = want;
    r->load_t0 = now_of(sv);
    r->weights += w;
    r->kv_cap = kv_cap_for(sv, r->weights);
    sv_event(sv, "model_load", "replica %d: %s, %.1f s", r->index, sv->models[want].m.name, sv->load_s[want]);
    r->ev_load = engine_after(sv->e, sim_from_s(sv->load_s[want]), on_loaded, r);
}

static void on_loaded(engine *e, void *arg) {
    (void)e;
    replica *r = arg;
    serving *sv = r->sv;
    r->ev_load = 0;
    if (r->loading < 0) return;
    sv_account_load(r);
    r->ms[r->loading].resident = M_LOADED;
    r->ms[r->loading].last_used = now_of(sv);
    r->loading = -1;
    sv->res.model_loads++;
    sv_kick(r);
}

static replica *new_replica(serving *sv) {
    /* Pending events point at replicas, so they never move: the array is
     * allocated up front to the autoscaler's maximum (serving_new). */
    if (sv->n_reps == sv->cap_reps) return NULL;
    replica *r = &sv->reps[sv->n_reps];
    memset(r, 0, sizeof *r);
    r->sv = sv;
    r->index = sv->n_reps++;                 /* counted now: serving_free frees what is allocated */
    r->state = R_STOPPED;
    r->loading = -1;
    r->handle = -1;
    r->load_t0 = -1;
    list_init(&r->running);
    list_init(&r->prefill);
    pcache_init(&r->pc);
    pcache_init(&r->tree);
    r->ms = calloc((size_t)sv->n_models, sizeof *r->ms);
    if (!r->ms) return NULL;
    for (int m = 0; m < sv->n_models; m++) {
        list_init(&r->ms[m].queue);
        list_init(&r->ms[m].swapped);
        r->ms[m].bucket = calloc((size_t)sv->block, sizeof *r->ms[m].bucket);
        if (!r->ms[m].bucket || sv_chunk_init(&r->ms[m], &sv->models[m].m) < 0) return NULL;
    }
    return r;
}

/* Models resident at start: in the order given, while they fit. */
static void warm_models(replica *r) {
    serving *sv = r->sv;
    r->weights = 0;
    for (int m = 0; m < sv->n_models; m++) r->ms[m].resident = M_UNLOADED;
    for (int m = 0; m < sv->n_models; m++) {
        double w = sv->models[m].weight_bytes;
        if (m == 0 || kv_cap_for(sv, r->weights + w) >= min_kv(sv)) {
            r->ms[m].resident = M_LOADED;
            r->weights += w;
        }
    }
    r->kv_cap = kv_cap_for(sv, r->weights);
}

void sv_publish_replicas(serving *sv) {
    int ready = 0;
    for (int i = 0; i < sv->n_reps; i++) ready += sv->reps[i].state == R_READY;
    metrics_sample(sv->bus, sv->m_replicas, now_of(sv), ready);
}

void sv_release_replica(replica *r) {
    serving *sv = r->sv;
    if (r->state == R_STOPPED || r->handle < 0) return;
    if (r->state == R_REQUESTED) {           /* still queued at the scheduler: withdraw */
        sv->host.release(sv->host.ctx, r->handle);
        r->handle = -1;
        r->state = R_STOPPED;
        return;
    }
    if (r->ev_load) engine_cancel(sv->e, r->ev_load);
    if (r->ev_ready) engine_cancel(sv->e, r->ev_ready);
    r->ev_load = r->ev_ready = 0;
    r->loading = -1;
    sv_account_load(r);
    sv_integrate_reps(sv);
    sv->active_reps--;
    sv->host.release(sv->host.ctx, r->handle);
    r->handle = -1;
    r->state = R_STOPPED;
    sv_event(sv, "replica_stop", "replica %d gave back %d GPUs", r->index, sv->rep_gpus);
    sv_publish_replicas(sv);
}

/* Stop routing to a replica: its waiting requests go to the others; it
 * gives its GPUs back when what it runs has finished. */
void sv_drain(replica *r) {
    serving *sv = r->sv;
    r->state = R_DRAINING;
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        while (ms->queue.n > 0) {
            int32_t i = ms->queue.head;
            req *q = &sv->rq[i];
            list_remove(sv->rq, &ms->queue, i);
            r->outstanding -= (q->prompt - q->prefilled) + (q->output - q->gen);
            q->prompt = q->input + q->gen;   /* nothing of it is cached here */
            sv_route(sv, i);
        }
    }
    sv_kick(r);
}

static void on_ready(engine *e, void *arg) {
    (void)e;
    replica *r = arg;
    serving *sv = r->sv;
    r->ev_ready = 0;
    if (r->state != R_STARTING) return;
    sv_account_load(r);
    r->state = R_READY;
    sv_event(sv, "replica_ready", "replica %d", r->index);
    sv_publish_replicas(sv);
    sv_route_pending(sv);
    sv_kick(r);
}

/* Ask the host for a replica's GPUs; it starts (ready after startup_s; 0 =
 * at once) when they are granted, which may happen before this returns.
 * Returns 0 when the GPUs are held now, 1 when the request waits in the
 * scheduler's queue, -1 when no replica can be added. */
int sv_start_replica(serving *sv, double startup_s) {
    replica *r = NULL;
    for (int i = 0; i < sv->n_reps && !r; i++)
        if (sv->reps[i].state == R_STOPPED && sv->reps[i].ms && sv->reps[i].ms[sv->n_models - 1].bucket) r = &sv->reps[i];
    if (!r) r = new_replica(sv);
    if (!r) return -1;
    r->state = R_REQUESTED;
    r->startup_s = startup_s;
    r->handle = -1;
    int granted = 0;
    int h = sv->host.acquire(sv->host.ctx, sv->rep_gpus, r->index, &granted);
    if (h < 0) {
        r->state = R_STOPPED;
        return -1;
    }
    r->handle = h;
    if (!granted) return 1;
    sv_replica_granted(sv, r->index);
    return 0;
}

/* Time for a replica to come back after it lost its GPUs: the autoscaler's
 * start-up time when given, else loading the resident weights again. */
static double restart_s(const serving *sv) {
    if (sv->cfg->autoscale_startup_s > 0) return sv->cfg->autoscale_startup_s;
    double t = 0, w = 0;
    for (int m = 0; m < sv->n_models; m++) {
        double add = sv->models[m].weight_bytes;
        if (m > 0 && kv_cap_for(sv, w + add) < min_kv(sv)) break;
        w += add;
        t += sv->load_s[m];
    }
    return t;
}

void sv_replica_granted(serving *sv, int tag) {
    if (tag < 0 || tag >= sv->n_reps) return;
    replica *r = &sv->reps[tag];
    if (r->state != R_REQUESTED) return;
    sv_integrate_reps(sv);
    sv->active_reps++;
    if (sv->active_reps > sv->res.replicas_peak) sv->res.replicas_peak = sv->active_reps;
    r->iter = 0;
    r->outstanding = 0;
    r->kv_used = 0;
    sv_prefix_lost(r);                        /* new GPUs: nothing cached */
    sv_router_forget(r);                      /* and a new worker to the router */
    r->held_since = now_of(sv);
    warm_models(r);
    if (r->startup_s > 0) {
        r->state = R_STARTING;
        r->load_t0 = now_of(sv);
        r->ev_ready = engine_after(sv->e, sim_from_s(r->startup_s), on_ready, r);
    } else {
        r->state = R_READY;
        sv_publish_replicas(sv);
        sv_route_pending(sv);
    }
}

/* Every sequence on the replica loses its KV cache (the GPUs are gone):
 * running ones are recomputed from their prompt and what they generated,
 * swapped ones too (their host copy was on the lost node), and waiting
 * ones go to the other replicas. */
static void evict_all(replica *r) {
    serving *sv = r->sv;
    int64_t it = r->iter;                     /* the iteration in flight is lost */
    while (r->running.n > 0) {
        int32_t i = r->running.tail;
        req *q = &sv->rq[i];
        mstate *ms = &r->ms[q->model];
        list_remove(sv->rq, &r->running, i);
        ms->running--;
        if (q->state == RQ_PREFILL) {
            plist_remove(sv->rq, &r->prefill, i);
        } else {
            sv_heap_remove(r, i);
            ms->n_dec--;
            ms->S -= q->base;
            if (!sv->reserve) ms->bucket[imod(q->base, sv->block)]--;
            q->gen += (int32_t)(it - q->dec_start);
        }
        q->prompt = q->input + q->gen;
        q->prefilled = 0;
        q->blocks = 0;
        q->state = RQ_QUEUED;
        sv->res.requests_restarted++;
        list_push_front(sv->rq, &ms->queue, i);
    }
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        while (ms->swapped.n > 0) {
            int32_t i = ms->swapped.head;
            req *q = &sv->rq[i];
            list_remove(sv->rq, &ms->swapped, i);
            q->prompt = q->input + q->gen;
            q->prefilled = 0;
            q->blocks = 0;
            q->state = RQ_QUEUED;
            sv->res.requests_restarted++;
            sv_queue_push(sv, &ms->queue, i);
        }
        ms->ghost_n = ms->ghost_S = 0;
        sv_chunk_clear(ms);                   /* every decoder and ghost has gone */
        memset(&ms->b, 0, sizeof ms->b);
        if (ms->resident == M_LOADING) ms->resident = M_UNLOADED;
    }
    r->kv_used = 0;
    sv_prefix_lost(r);
    r->swap_s = 0;
    r->n_ch = 0;
    r->produced = 0;
    r->prompt_only = 0;
    r->busy = 0;
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        while (ms->queue.n > 0) {
            int32_t i = ms->queue.head;
            list_remove(sv->rq, &ms->queue, i);
            sv_route(sv, i);
        }
    }
    r->outstanding = 0;
}

void sv_replica_lost(serving *sv, int tag, const char *why) {
    if (tag < 0 || tag >= sv->n_reps) return;
    replica *r = &sv->reps[tag];
    if (r->state != R_READY && r->state != R_STARTING && r->state != R_DRAINING) return;
    int was_draining = r->state == R_DRAINING;
    if (r->busy) sv_account_iteration(r, 0);     /* the part done before the GPUs went */
    sv_account_load(r);
    if (r->ev_iter) engine_cancel(sv->e, r->ev_iter);
    if (r->ev_load) engine_cancel(sv->e, r->ev_load);
    if (r->ev_ready) engine_cancel(sv->e, r->ev_ready);
    r->ev_iter = r->ev_load = r->ev_ready = 0;
    r->loading = -1;
    sv_integrate_reps(sv);
    sv->active_reps--;
    sv->res.replica_losses++;
    r->state = R_REQUESTED;                   /* the host queued the request again */
    r->startup_s = restart_s(sv);
    sv_event(sv, "replica_lost", "replica %d: %s", r->index, why ? why : "GPUs taken back");
    sv_publish_replicas(sv);
    evict_all(r);
    /* A replica on its way out is not asked for again. */
    if (was_draining || sv->finished) sv_release_replica(r);
}

void sv_check_finished(serving *sv) {
    if (sv->finished || !sv->arrivals_done || sv->in_system > 0 || sv->backlog > 0) return;
    sv->finished = 1;
    sv->t_finished = now_of(sv);
    if (sv->ev_tick) engine_cancel(sv->e, sv->ev_tick);
    if (sv->ev_scale) engine_cancel(sv->e, sv->ev_scale);
    sv->ev_tick = sv->ev_scale = 0;
    for (int i = 0; i < sv->n_reps; i++)
        if (!sv->reps[i].busy) sv_release_replica(&sv->reps[i]);
    sv_event(sv, "service_end", "%lld requests completed", (long long)sv->res.requests);
    if (sv->host.finished) sv->host.finished(sv->host.ctx);
}
