/*
 * world: builds the cluster and the jobs from a scenario and runs them.
 * This file holds the world's life (new, free, run, the end of a run), the
 * dispatch pass and the scheduler's callbacks, and the hooks through which
 * the files below reach up; the rest lives in one file per concept, which
 * this file composes (world_int.h lists them and the order of their calls).
 *
 * Jobs take GPUs of one node pool at once (gang start, never partial);
 * the scheduler (sim/sched) decides which job starts, where, and which to
 * evict, and the world carries it out through sched_ops. A training job
 * is a small state machine (world_job.c); failures come from sim/failures
 * through world_repair.c; inference services ask for GPUs through
 * world_hold.c.
 */
#include "sim/world_int.h"
#include "sim/world.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "models/numerics.h"

/* The models and the trace reader bound times by NUMERICS_MAX_TIME_S; the
 * engine runs to SIM_HORIZON_S: one number. */
_Static_assert((long long)NUMERICS_MAX_TIME_S == (long long)SIM_HORIZON_S, "the time bound is the clock's horizon");

/* ---- the scheduler's callbacks -------------------------------------------
 * Scheduler ids 0 .. n_jobs-1 are jobs; n_jobs + k is service holding k. */

static void sched_start(void *ctx, int id) {
    world *w = ctx;
    if (is_hold(w, id)) {
        hold_start(w, id - w->n_jobs);
        return;
    }
    job *j = &w->jobs[id];
    job_start(j);
    j->started_once = 1;
}

/* The scheduler evicts a running job (or a replica) for a more important one. */
static void sched_preempt(void *ctx, int id, int by) {
    world *w = ctx;
    if (is_hold(w, id)) {
        char why[SC_NAME_MAX + 32];
        snprintf(why, sizeof why, "preempted by %s", world_entry_name(w, by));
        hold_lost(w, id - w->n_jobs, why);
        return;
    }
    job_preempt(&w->jobs[id], world_entry_name(w, by));
}

/* Where a running job (or a replica) holds GPUs, for the scheduler's
 * choice of victims: its UP nodes and the GPUs on each. */
static int sched_nodes(void *ctx, int id, int *out, int cap, int *gpus_each) {
    world *w = ctx;
    const int *nodes;
    int n;
    if (is_hold(w, id)) {
        const holding *g = &w->hold[id - w->n_jobs];
        if (g->state != H_HELD) return 0;
        nodes = g->nodes;
        n = g->n;
        *gpus_each = g->gpus_each;
    } else {
        const job *j = &w->jobs[id];
        nodes = j->nodes;
        n = j->n_nodes;
        *gpus_each = j->gpus_per_node;
    }
    int k = 0;
    for (int i = 0; i < n && k < cap; i++)
        if (nodes[i] >= 0) out[k++] = nodes[i];
    return k;
}

static void dispatch_end(world *w);

/* Let the scheduler start what it can; then sample the queue and the
 * fragmentation, and see whether the cloud should grow. Callbacks from the
 * scheduler may ask for another pass (a job requeued while it ran). */
static void dispatch(world *w) {
    if (w->in_dispatch) {
        w->redispatch = 1;
        return;
    }
    w->in_dispatch = 1;
    do {
        w->redispatch = 0;
        sched_dispatch(w->q, now_s(w));
    } while (w->redispatch);
    dispatch_end(w);
}

/* A job enters the queue and a dispatch pass follows: the same as
 * sched_submit and dispatch, but a job that finds the queue empty and can
 * start is the pass's head and its first start, which sched_start_alone
 * makes without the queue. The pass goes on from there as it would (its
 * loop runs while jobs are queued: a callback may have requeued one) and
 * then the passes the callbacks asked for. */
static void submit(world *w, const sched_job *v) {
    if (w->in_dispatch) {
        sched_submit(w->q, v);
        w->redispatch = 1;
        return;
    }
    w->in_dispatch = 1;
    w->redispatch = 0;
    int started = sched_start_alone(w->q, v, now_s(w));
    if (!started) sched_submit(w->q, v);
    if (!started || sched_queued(w->q) > 0) sched_dispatch(w->q, now_s(w));
    while (w->redispatch) {
        w->redispatch = 0;
        sched_dispatch(w->q, now_s(w));
    }
    dispatch_end(w);
}

/* After the passes: the fragmentation and queue samples, the cloud. */
static void dispatch_end(world *w) {
    w->in_dispatch = 0;
    sim_time t = now_of(w);
    if (w->frag_now) w->frag_gpu_s += w->frag_now * sim_to_s(t - w->frag_since);   /* else + 0: a division saved */
    w->frag_since = t;
    w->frag_now = sched_fragmented_gpus(w->q);
    metrics_sample(w->bus, w->m_queue, t, sched_queued(w->q));
    metrics_sample(w->bus, w->m_frag, t, w->frag_now);
    if (w->cloud_pool >= 0) cloud_autoscale(w);
}

/* ---- what runs on a node (the repair file's hooks) ------------------------ */

static void node_hit(world *w, int node, const failure_proc *p, int planned) {
    job_hit_node(w, node, p, planned);
    hold_hit_node(w, node, p);
}

static void node_back(world *w, int node, int repaired) {
    (void)node;
    job_node_back(w, repaired);
    dispatch(w);
}

/* ---- building ----------------------------------------------------------- */

/* The engine, the cluster, one record per node and the scheduler.
 * 0, or -1 when out of memory. */
static int build_cluster(world *w) {
    const scenario *s = w->s;
    w->e = engine_new();
    w->c = cluster_new(s);
    w->r_health = rng_new(s->seed, "health-checks", 0);
    if (!w->e || !w->c || !w->r_health) return -1;
    w->clock = engine_clock(w->e);
    int nodes = cluster_node_count(w->c);
    w->node = calloc((size_t)nodes + 1, sizeof *w->node);
    w->use = calloc((size_t)nodes + 1, sizeof *w->use);
    if (!w->node || !w->use) return -1;
    for (int i = 0; i < nodes; i++) {
        w->node[i] = (node_rec){ .w = w, .index = i };
        w->use[i] = (node_use){ .job = -1 };
    }
    w->on_node = (node_hooks){ node_hit, node_back, cloud_node_idle };
    w->dispatch = dispatch;
    w->submit = submit;
    cluster_set_spread(w->c, !strcmp(s->sched_placement, "spread"), s->network.nodes_per_leaf);
    sched_ops ops = { w, sched_start, sched_preempt, sched_nodes };
    w->q = sched_new(s, w->c, &ops);
    if (!w->q) return -1;
    w->where_kept = sched_where_kept(w->q);
    w->cloud_pool = s->has_cloud ? cluster_pool_of_type(w->c, s->cloud_node_type) : -1;
    return 0;
}

/* The cluster's series on the bus (their order is the store's). */
static void register_metrics(world *w) {
    static const char *state_names[GS_COUNT] = { "gpus_training", "gpus_checkpoint", "gpus_restarting",
                                                 "gpus_batch", "gpus_serving" };
    for (int i = 0; i < GS_COUNT; i++) w->m_state[i] = metrics_register(w->bus, "cluster", state_names[i]);
    w->m_queue = metrics_register(w->bus, "cluster", "queue_length");
    w->m_failed = metrics_register(w->bus, "cluster", "gpus_failed");
    w->m_frag = metrics_register(w->bus, "cluster", "gpus_fragmented");
}

/* The microbenchmarks, priced on the first pool's fabric. 0, or -1. */
static int build_benchset(world *w) {
    fabric f;
    int have_fabric = cluster_pool_count(w->c) > 0 && world_fabric(w, 0, &f) == 0;
    w->bench = benchset_new(w->s, have_fabric ? &f : NULL);
    return w->bench ? 0 : -1;
}

/* Each step returns 0, -1 when out of memory, or -2 with err set. */
world *world_new(const scenario *s, metric_bus *bus, char *err, size_t errlen) {
    numerics_gsl_install();             /* a GSL error is a value, never an abort */
    world *w = calloc(1, sizeof *w);
    int rc = w ? 0 : -1;
    if (w) {
        w->s = s;
        w->bus = bus;
        w->acquiring = -1;
        rc = build_cluster(w);
    }
    if (rc == 0) rc = repair_build_failures(w, err, errlen);
    if (rc == 0) rc = build_jobs(w, err, errlen);
    if (rc == 0) {
        register_metrics(w);
        rc = build_submit(w, err, errlen);
    }
    if (rc == 0) rc = build_benchset(w);
    if (rc == 0 && hold_build_services(w, err, errlen) < 0) rc = -2;
    if (rc == 0) return w;
    if (rc == -1) errmsg_set(err, errlen, "%s:0: out of memory building the world", s->file);
    world_free(w);
    return NULL;
}

void world_free(world *w) {
    if (!w) return;
    hold_free(w);
    failures_free(w->f);
    engine_free(w->e);
    cluster_free(w->c);
    rng_free(w->r_health);
    free(w->node);
    free(w->use);
    build_free(w);
    sched_free(w->q);
    free(w->fail_by_proc);
    benchset_free(w->bench);
    world_flow_free(w);
    free(w);
}

engine *world_engine(world *w) { return w->e; }

benchset *world_benchset(const world *w) { return w->bench; }

int world_run(world *w, double until_s) {
    double limit = w->s->duration_s > 0 ? w->s->duration_s : 0;
    if (until_s > 0 && (limit == 0 || until_s < limit)) limit = until_s;
    if (w->unfinished > 0) engine_run(w->e, limit > 0 ? sim_from_s(limit) : SIM_FOREVER);
    world_finish(w);
    return 0;
}

/* ==== live control: for the dashboard =======================================
 * The dashboard (tui/) runs the world in slices of simulated time, reads
 * per-node and per-job views, and changes the world only through commands
 * (world_inject_failure, world_drain: the repair file carries them out). A run driven in
 * slices dispatches the same events in the same order as world_run(): the
 * slices only choose where the clock pauses, and nothing is scheduled from
 * outside a handler except by the commands.
 */

static sim_time live_limit(const world *w) {
    return w->s->duration_s > 0 ? sim_from_s(w->s->duration_s) : SIM_FOREVER;
}

int world_inject_failure(world *w, int node) { return repair_inject(w, node); }

int world_drain(world *w, int node, int on) { return repair_drain(w, node, on); }

int world_done(const world *w) {
    return w->closed || w->unfinished == 0 || engine_now(w->e) >= live_limit(w) || engine_pending(w->e) == 0;
}

int world_advance(world *w, double until_s) {
    if (world_done(w)) return 1;
    sim_time t = sim_from_s(until_s), lim = live_limit(w);
    if (t > lim) t = lim;
    if (t >= now_of(w)) engine_run(w->e, t);
    return world_done(w);
}

int world_step_event(world *w) {
    if (world_done(w) || engine_next_time(w->e) > live_limit(w)) return 0;
    return engine_step(w->e);
}

/* The end of a run: jobs still going have their phase accounted up to now,
 * services close their books, the bus is closed. */
void world_finish(world *w) {
    if (w->closed) return;
    for (int k = 0; k <= (w->n_jobs - 1) / 64 && w->n_jobs > 0; k++)   /* the active jobs, in index order */
        for (uint64_t b = w->active[k]; b; b &= b - 1) job_close(&w->jobs[k * 64 + __builtin_ctzll(b)]);
    for (int i = 0; i < w->n_svc; i++) serving_close(w->svc[i].sv);
    world_integrate_states(w);
    metrics_close(w->bus, now_of(w));
    w->closed = 1;
}
