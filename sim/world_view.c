/*
 * world_view: read-only views of the world for reports and the dashboard:
 * jobs' results and costs, the totals (GPU states, goodput, cost, energy,
 * CO2), queues, services, failure kinds, and the live views of nodes and
 * jobs. Nothing here changes the world; each view is computed when asked
 * (O(jobs) for a queue, O(nodes + holdings) for the node map).
 */
#include "sim/world_int.h"
#include "sim/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/rankstat.h"

int world_job_count(const world *w) { return w->n_jobs; }

/* The record from the job's core and, for a training job, its side record. */
const job_result *world_job(const world *w, int i, job_result *out) {
    if (i < 0 || i >= w->n_jobs) return NULL;
    const job *j = &w->jobs[i];
    *out = (job_result){ .name = j->name, .kind = (job_kind)j->kind, .state = (job_state)j->state, .gpus = j->gpus,
                         .queue = j->queue_name, .submit_s = j->submit_s, .start_s = j->start_s, .end_s = j->end_s,
                         .queue_wait_s = j->queue_wait_s, .preemptions = j->preemptions,
                         .interruptions = j->interruptions, .trace_row = j->trace_row };
    const job_train *tr = j->tr;
    if (!tr) return out;
    out->steps_total = tr->steps_total;
    out->steps_done = tr->steps_done;
    out->tokens_done = tr->tokens_done;
    out->perf = tr->perf;
    out->planned_interruptions = tr->planned_interruptions;
    out->shrinks = tr->shrinks;
    out->grows = tr->grows;
    out->leaf_groups = tr->leaf_groups;
    out->waited_for_nodes = tr->waited_for_nodes;
    out->checkpoints = tr->checkpoints;
    out->checkpoints_skipped = tr->checkpoints_skipped;
    out->checkpoint_size_bytes = tr->checkpoint_size_bytes;
    out->checkpoint_write_s = tr->checkpoint_write_s;
    out->checkpoint_stall_s = tr->checkpoint_stall_s;
    out->checkpoint_interval_s = tr->checkpoint_interval_s;
    out->time = tr->time;
    return out;
}

world_job_memory world_job_bytes(const world *w) {
    world_job_memory m = { sizeof(job), (size_t)w->n_jobs * sizeof(job), 0, 0, 0 };
    for (int i = 0; i < w->n_jobs; i++) {
        const job *j = &w->jobs[i];
        if (j->nodes && j->nodes != &j->node1) m.nodes_bytes += (size_t)j->n_nodes * sizeof *j->nodes;
        if (j->tr) m.training_bytes += sizeof *j->tr + sizeof *j->tr->perf;
    }
    m.names_bytes = build_names_bytes(w);
    return m;
}

double world_job_gpu_hours(const world *w, int i) {
    return (i >= 0 && i < w->n_jobs) ? w->jobs[i].gpu_s / 3600 : 0;
}

double world_job_cost_usd(const world *w, int i) {
    if (i < 0 || i >= w->n_jobs) return 0;
    const node_spec *ns = cluster_pool_spec(w->c, w->jobs[i].pool);
    return world_job_gpu_hours(w, i) * cost_price_per_gpu_hour(ns, ns ? catalog_gpu(w->s->cat, ns->gpu) : NULL);
}

/* The GPU states of a pool: its share of the cluster's. */
static void pool_states(cost_pool *p, const world_totals *t, double share) {
    p->gpu_state_s[COST_TRAINING] = share * t->gpu_training_s;
    p->gpu_state_s[COST_CHECKPOINT] = share * t->gpu_checkpoint_s;
    p->gpu_state_s[COST_RESTARTING] = share * t->gpu_restarting_s;
    p->gpu_state_s[COST_BATCH] = share * t->gpu_batch_s;
    p->gpu_state_s[COST_SERVING_PREFILL] = share * t->gpu_serving_prefill_s;
    p->gpu_state_s[COST_SERVING_DECODE] = share * t->gpu_serving_decode_s;
    p->gpu_state_s[COST_SERVING_LOADING] = share * t->gpu_serving_loading_s;
    p->gpu_state_s[COST_SERVING_IDLE] = share * t->gpu_serving_idle_s;
}

/* Cost, energy and CO2 (models/cost.h) into t->cost. Every node is
 * provisioned for the whole run (spares and failed nodes count as idle).
 * GPU states are integrated for the whole cluster: each <nodes> entry gets
 * its share by GPU count, exact with one node type; rented nodes get the
 * rest (1 - onprem). */
static void totals_cost(const world *w, world_totals *t, double onprem, const node_spec *cloud_ns) {
    const sc_cost *sc = &w->s->cost;
    cost_params cp = { .simulated_s = t->simulated_s, .pue = sc->pue, .carbon_kg_per_kwh = sc->carbon_kg_per_kwh,
                       .electricity_usd_per_kwh = sc->electricity_usd_per_kwh, .owned = sc->owned };
    int rc = cost_init(&t->cost, &cp);
    for (int i = 0; i < w->s->n_nodes && rc == 0; i++) {
        const node_spec *ns = scenario_node_spec(w->s, i);
        const gpu_spec *g = catalog_gpu(w->s->cat, ns->gpu);
        double share = t->gpus > 0 ? onprem * w->s->nodes[i].count * ns->gpus / t->gpus : 0;
        cost_pool p = { .gpus_per_node = ns->gpus, .node_s = w->s->nodes[i].count * t->simulated_s,
                        .gpu_idle_w = g ? g->idle_w : 0, .gpu_tdp_w = g ? g->tdp_w : 0,
                        .node_overhead_w = ns->overhead_w,
                        .price_per_gpu_hour_usd = cost_price_per_gpu_hour(ns, g) };
        pool_states(&p, t, share);
        rc = cost_add_pool(&t->cost, &p);
    }
    if (cloud_ns && t->cloud_node_hours > 0 && rc == 0) {
        const gpu_spec *g = catalog_gpu(w->s->cat, cloud_ns->gpu);
        cost_pool p = { .gpus_per_node = cloud_ns->gpus, .node_s = t->cloud_node_hours * 3600,
                        .gpu_idle_w = g ? g->idle_w : 0, .gpu_tdp_w = g ? g->tdp_w : 0,
                        .node_overhead_w = cloud_ns->overhead_w,
                        .price_per_gpu_hour_usd = cost_price_per_gpu_hour(cloud_ns, g), .cloud_burst = 1 };
        pool_states(&p, t, 1 - onprem);
        rc = cost_add_pool(&t->cost, &p);
    }
    for (int i = 0; i < w->s->n_storage && rc == 0; i++) {
        const storage_spec *k = catalog_storage(w->s->cat, w->s->storage[i].kind);
        cost_storage st = { .capacity_bytes = w->s->storage[i].capacity_bytes,
                            .price_per_tb_month_usd = k ? k->price_per_tb_month_usd : 0, .held_s = t->simulated_s };
        rc = cost_add_storage(&t->cost, &st);
    }
    if (rc < 0)   /* a catalog override the model cannot price (e.g. tdp below idle): unknown */
        t->cost.cost_usd = t->cost.energy_kwh = t->cost.co2_kg = NAN;
}

world_totals world_get_totals(const world *w) {
    world_totals t = { 0 };
    t.simulated_s = sim_to_s(engine_now(w->e));
    t.events = engine_dispatched(w->e);
    for (int i = 0; i < GS_COUNT; i++) t.gpu_busy_s += w->gpu_state_s[i];
    t.gpu_training_s = w->gpu_state_s[GS_TRAINING];
    t.gpu_checkpoint_s = w->gpu_state_s[GS_CHECKPOINT];
    t.gpu_restarting_s = w->gpu_state_s[GS_RESTARTING];
    t.gpu_batch_s = w->gpu_state_s[GS_BATCH];
    /* Serving replicas: held time from the world, what they did from the
     * services (sim/serving.h gpu_*_s); idle is the rest. */
    t.gpu_serving_s = w->gpu_state_s[GS_SERVING];
    for (int i = 0; i < w->n_svc; i++) {
        const service_result *r = serving_result(w->svc[i].sv);
        t.gpu_serving_prefill_s += r->gpu_prefill_s;
        t.gpu_serving_decode_s += r->gpu_decode_s;
        t.gpu_serving_loading_s += r->gpu_loading_s;
    }
    double sv_busy = t.gpu_serving_prefill_s + t.gpu_serving_decode_s + t.gpu_serving_loading_s;
    if (sv_busy > t.gpu_serving_s) {       /* an iteration counted past the last integration */
        double k = sv_busy > 0 ? t.gpu_serving_s / sv_busy : 0;
        t.gpu_serving_prefill_s *= k;
        t.gpu_serving_decode_s *= k;
        t.gpu_serving_loading_s *= k;
        sv_busy = t.gpu_serving_s;
    }
    t.gpu_serving_idle_s = t.gpu_serving_s - sv_busy;
    t.gpu_redone_s = w->redone_gpu_s < t.gpu_training_s ? w->redone_gpu_s : t.gpu_training_s;
    t.gpu_batch_lost_s = w->batch_lost_gpu_s < t.gpu_batch_s ? w->batch_lost_gpu_s : t.gpu_batch_s;
    t.gpu_productive_s = (t.gpu_training_s - t.gpu_redone_s) + (t.gpu_batch_s - t.gpu_batch_lost_s) +
                         t.gpu_serving_prefill_s + t.gpu_serving_decode_s;
    for (int i = 0; i < w->s->n_nodes; i++) {
        const node_spec *ns = scenario_node_spec(w->s, i);
        t.nodes += w->s->nodes[i].count;
        t.gpus += w->s->nodes[i].count * ns->gpus;
    }
    t.gpu_hours = t.gpus * t.simulated_s / 3600.0;
    t.cloud_node_hours = (w->cloud_node_s + cluster_cloud_up(w->c) * sim_to_s(engine_now(w->e) - w->cloud_since)) / 3600;
    const node_spec *cloud_ns = w->cloud_pool >= 0 ? cluster_pool_spec(w->c, w->cloud_pool) : NULL;
    double cloud_gpu_h = cloud_ns ? t.cloud_node_hours * cloud_ns->gpus : 0;
    /* Busy GPU-time is split between owned and rented GPUs by their
     * provisioned GPU-hours (rented nodes are mostly busy while up, so this
     * leans towards under-counting their share). */
    double onprem = t.gpu_hours + cloud_gpu_h > 0 ? t.gpu_hours / (t.gpu_hours + cloud_gpu_h) : 1;
    t.gpu_hours += cloud_gpu_h;
    totals_cost(w, &t, onprem, cloud_ns);
    t.cost_usd = t.cost.cost_usd;
    t.failures = w->n_fail_total;
    t.fragmented_gpu_hours = (w->frag_gpu_s + w->frag_now * sim_to_s(engine_now(w->e) - w->frag_since)) / 3600;
    t.cloud_cost_usd = t.cost.cloud_usd;
    t.nodes_drained = w->drained;
    t.nodes_unavailable_at_start = w->unavailable_at_start;
    t.nodes_draining_at_start = w->draining_at_start;
    return t;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int world_queue_count(const world *w) { return sched_queue_count(w->q); }

/* Per-queue figures from the jobs' results: GPU-hours used against the
 * quota over the run, waits (mean, p95) and slowdown ((wait + run) / run). */
queue_result world_queue(const world *w, int qi) {
    queue_result r = { 0 };
    snprintf(r.name, sizeof r.name, "%s", sched_queue_name(w->q, qi));
    r.quota_gpus = sched_queue_quota(w->q, qi);
    double sim = sim_to_s(engine_now(w->e));
    double *waits = malloc(((size_t)w->n_jobs + 1) * sizeof *waits);
    double slow = 0;
    for (int i = 0; i < w->n_jobs; i++) {
        const job *j = &w->jobs[i];
        if (j->queue != qi) continue;
        r.jobs++;
        if (!j->started_once) {
            if (j->submit_s <= sim) r.waiting++;       /* submitted, never started */
            continue;
        }
        double end = j->end_s >= 0 ? j->end_s : sim;
        r.gpu_hours += j->gpu_s / 3600;
        if (waits) waits[r.started] = j->queue_wait_s;
        r.mean_wait_s += j->queue_wait_s;
        /* Slowdown: time from submission to the end (or now) over the time
         * it actually held GPUs (preempted stretches count as waiting). */
        if (j->held_s > 0) slow += (end - j->submit_s) / j->held_s;
        r.started++;
    }
    if (r.started > 0) {
        r.mean_wait_s /= r.started;
        r.slowdown = slow / r.started;
        if (waits) {
            qsort(waits, (size_t)r.started, sizeof *waits, cmp_double);
            int k = (int)ceil(0.95 * r.started) - 1;
            r.p95_wait_s = waits[k < 0 ? 0 : k];
        }
    }
    if (r.quota_gpus > 0 && sim > 0) r.quota_share = r.gpu_hours / (r.quota_gpus * sim / 3600);
    free(waits);
    return r;
}

int world_failure_kinds(const world *w) { return (w->f ? failures_proc_count(w->f) : 0) + (w->injected > 0); }

void world_failure_kind(const world *w, int i, const char **component, const char **cause, int *count) {
    if (i >= (w->f ? failures_proc_count(w->f) : 0)) {   /* failures injected from the dashboard */
        *component = "node";
        *cause = "injected";
        *count = w->injected;
        return;
    }
    const failure_proc *p = failures_proc(w->f, i);
    *component = p->component;
    *cause = p->cause;
    *count = w->fail_by_proc[i];
}

/* ---- services --------------------------------------------------------- */

int world_service_count(const world *w) { return w->n_svc; }

const service_result *world_service(const world *w, int i) {
    return (i >= 0 && i < w->n_svc) ? serving_result(w->svc[i].sv) : NULL;
}

const serving *world_serving(const world *w, int i) {
    return (i >= 0 && i < w->n_svc) ? w->svc[i].sv : NULL;
}

/* ---- the dashboard's live views ------------------------------------------ */

const char *world_activity_name(world_activity a) {
    static const char *z[] = { "idle", "training", "batch", "serving", "checkpointing", "restarting",
                               "failed", "repairing", "spare", "drained", "off" };
    return (a >= 0 && a < WA_COUNT) ? z[a] : "?";
}

int world_node_count(const world *w) { return cluster_node_count(w->c); }

int world_nodes_per_leaf(const world *w) {
    fabric f;
    if (cluster_pool_count(w->c) == 0 || world_fabric(w, 0, &f) < 0) return 0;
    return f.nodes_per_leaf;
}

/* O(nodes + GPU holdings of the services). */
void world_node_views(const world *w, world_node_view *out) {
    int n = cluster_node_count(w->c);
    for (int i = 0; i < n; i++) {
        world_node_view *v = &out[i];
        v->job = -1;
        v->failures = cluster_node_failures(w->c, i);
        v->gpus = cluster_gpus_per_node(w->c, i);
        v->free_gpus = cluster_node_free_gpus(w->c, i);
        v->rack = cluster_node_rack(w->c, i);
        v->rack_nodes = cluster_rack_nodes(cluster_pool_spec(w->c, cluster_node_pool(w->c, i)));
        switch (cluster_node_state(w->c, i)) {
        case NODE_FAILED: v->activity = w->node[i].repair_ev ? WA_REPAIRING : WA_FAILED; continue;
        case NODE_SPARE: v->activity = WA_SPARE; continue;
        case NODE_DRAINED: v->activity = WA_DRAINED; continue;
        case NODE_OFF: v->activity = WA_OFF; continue;
        case NODE_UP: case NODE_DRAINING: break;     /* a draining node still runs its jobs */
        }
        v->activity = w->use[i].latent ? WA_FAILED : WA_IDLE;
        if (w->use[i].jobs <= 0) continue;
        v->job = w->use[i].job;
        const job *j = v->job >= 0 ? &w->jobs[v->job] : NULL;
        if (!j || j->kind == JOB_BATCH) v->activity = WA_BATCH;
        else if (j->ph == PH_CHECKPOINT) v->activity = WA_CHECKPOINT;
        else if (j->ph == PH_RUNNING) v->activity = WA_TRAINING;
        else v->activity = WA_RESTARTING;
    }
    for (int k = 0; k < w->n_hold; k++) {
        const holding *g = &w->hold[k];
        if (g->state != H_HELD) continue;
        for (int i = 0; i < g->n; i++)
            if (g->nodes[i] >= 0 && g->nodes[i] < n && out[g->nodes[i]].activity == WA_IDLE)
                out[g->nodes[i]].activity = WA_SERVING;
    }
}

/* GPUs each node's running jobs and held replicas list, into listed[]. */
static void listed_gpus(const world *w, int *listed) {
    for (int i = 0; i < w->n_jobs; i++) {
        const job *j = &w->jobs[i];
        if (j->ph == PH_QUEUED || j->ph == PH_DONE) continue;
        for (int k = 0; k < j->n_nodes; k++)
            if (j->nodes[k] >= 0) listed[j->nodes[k]] += j->gpus_per_node;
    }
    for (int k = 0; k < w->n_hold; k++) {
        const holding *g = &w->hold[k];
        for (int i = 0; g->state == H_HELD && i < g->n; i++)
            if (g->nodes[i] >= 0) listed[g->nodes[i]] += g->gpus_each;
    }
}

int world_overlisted_nodes(const world *w, int *first) {
    int n = cluster_node_count(w->c), bad = 0;
    int *listed = calloc((size_t)n + 1, sizeof *listed);
    *first = -1;
    if (!listed) return -1;
    listed_gpus(w, listed);
    for (int i = 0; i < n; i++) {
        node_state st = cluster_node_state(w->c, i);
        int in_service = st == NODE_UP || st == NODE_DRAINING;
        int used = in_service ? cluster_gpus_per_node(w->c, i) - cluster_node_free_gpus(w->c, i) : 0;
        if (listed[i] <= used) continue;
        if (bad++ == 0) *first = i;
    }
    free(listed);
    return bad;
}

int world_job_view(const world *w, int i, world_job_live *v) {
    if (i < 0 || i >= w->n_jobs) return -1;
    const job *j = &w->jobs[i];
    const job_train *tr = j->tr;
    static const char *ph[] = { "queued", "running", "checkpoint", "down", "waiting", "restart", "done" };
    double now = now_s(w);
    v->phase = ph[j->ph];
    v->step_s = tr ? tr->step_s : 0;
    v->eta_s = -1;
    v->ettr = -1;
    if (tr) {
        double total = (double)tr->steps_total;
        double p = job_progress_now(j);
        v->progress = total > 0 ? p / total : 0;
        if (j->ph == PH_DONE) v->eta_s = 0;
        else if (j->ph != PH_QUEUED) v->eta_s = (total - p) * tr->step_s;
        if (j->start_s >= 0) {
            double end = j->end_s >= 0 ? j->end_s : now;
            double run = j->run_s + (j->ph == PH_RUNNING ? now - sim_to_s(j->ph_since) : 0);
            double kept = run - tr->time.redone_s;
            if (j->ph == PH_DOWN) kept -= (tr->fail_progress - tr->durable) * tr->step_s;   /* about to be redone */
            v->ettr = end - j->start_s > 0 ? kept / (end - j->start_s) : 1;
            if (v->ettr < 0) v->ettr = 0;
        }
    } else {
        v->progress = j->ph == PH_DONE ? 1 : 0;
        if (j->ph == PH_RUNNING && j->duration_s > 0) {
            double done = now - sim_to_s(j->ph_since);
            v->progress = done / j->duration_s > 1 ? 1 : done / j->duration_s;
            v->eta_s = j->duration_s - done > 0 ? j->duration_s - done : 0;
        } else if (j->ph == PH_DONE) {
            v->eta_s = 0;
        }
    }
    return 0;
}

/* ---- replay: the simulated schedule against the real one ----------------- */

world_replay world_get_replay(const world *w) {
    const scenario *s = w->s;
    world_replay r = { 0, NAN, NAN, NAN };
    size_t n = (size_t)s->n_trace_jobs + 1;
    double *sim = malloc(n * sizeof *sim), *act = malloc(n * sizeof *act), *err = malloc(n * sizeof *err);
    if (sim && act && err) {
        for (int i = 0; i < s->n_trace_jobs; i++) {
            const job *j = &w->jobs[w->trace_first + i];
            double a = s->trace_jobs[i].actual_start_s;
            if (isnan(a) || !j->started_once) continue;
            sim[r.jobs] = j->start_s;
            act[r.jobs] = a;
            err[r.jobs] = fabs(j->start_s - a);
            r.jobs++;
        }
        r.start_order_kendall_tau = rankstat_kendall_tau_b(sim, act, (size_t)r.jobs);
        r.wait_error_median_s = rankstat_quantile(err, (size_t)r.jobs, 0.5);
        r.wait_error_p90_s = rankstat_quantile(err, (size_t)r.jobs, 0.9);
    }
    free(sim);
    free(act);
    free(err);
    return r;
}
