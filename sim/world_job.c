/*
 * world_job: the job state machine. A job holds GPUs of one node pool at
 * once (gang start, never partial); the scheduler starts and evicts it
 * (world.c's sched_ops), failures interrupt it (job_hit_node, from the
 * repair file's hooks).
 *
 * A training job is a small state machine, one pending event at a time:
 *
 *   QUEUED -> RUNNING <-> CHECKPOINT (stall)            -> DONE
 *                |  failure on one of its nodes
 *                v
 *              DOWN (crash seen at once, hang after the watchdog)
 *                v
 *            WAITING (no replacement node yet)  ->  RESTART (reschedule,
 *                                                   process start, load)
 *                                                      -> RUNNING
 *
 * Progress is counted in steps (fractional while running), so the event
 * count is per segment (checkpoint, hourly progress report, failure), not
 * per step: a 54-day 16K-GPU run is a few thousand events. An async
 * checkpoint stalls only for the copy to host memory; the write to storage
 * finishes in the background and only then becomes the restart point.
 *
 * Time of a training job, from first start to end, splits exactly into
 * training kept + work redone (after failures, after preemption) + checkpoint
 * stalls + down and restarting + waiting for nodes (job_result.time).
 *
 * A batch job runs for its duration; a failure or a preemption sends it
 * back to the queue to start again from scratch.
 */
#include "sim/world_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void training_start_running(job *j);
static void commit_progress(job *j);
static void requeue(job *j);
static void try_restart(job *j);
static void on_restarted(engine *e, void *arg);
static void on_detected(engine *e, void *arg);
static void flow_apply(job *j, double step_s);

static int phase_state(const job *j) {
    if (j->kind == JOB_BATCH) return j->ph == PH_RUNNING ? GS_BATCH : -1;
    switch (j->ph) {
    case PH_RUNNING: return GS_TRAINING;
    case PH_CHECKPOINT: return GS_CHECKPOINT;
    case PH_DOWN:
    case PH_WAITING:
    case PH_RESTART: return GS_RESTARTING;
    default: return -1;
    }
}

static int held_gpus(const job *j) { return j->n_held * j->gpus_per_node; }

/* dt more in the job's current phase: time running (every job's), and a
 * training job's time breakdown (job_result.time; a batch job has none). */
static void count_phase_time(job *j, double dt) {
    if (j->ph == PH_RUNNING) j->run_s += dt;
    if (!j->tr) return;
    job_time *T = &j->tr->time;
    switch (j->ph) {
    case PH_CHECKPOINT: T->checkpoint_stall_s += dt; break;
    case PH_DOWN:
    case PH_RESTART: T->restart_s += dt; break;
    case PH_WAITING: T->waiting_s += dt; break;
    case PH_QUEUED:                   /* back in the queue after a preemption */
        if (j->started_once) T->waiting_s += dt;
        break;
    default: break;
    }
}

/* Move a job to phase ph, keeping the time accounting and GPU states. */
static void set_phase(job *j, phase ph) {
    world *w = j->w;
    double dt = sim_to_s(now_of(w) - j->ph_since);
    count_phase_time(j, dt);
    int from = phase_state(j), g = held_gpus(j);
    if (from >= 0) {
        j->gpu_s += g * dt;
        j->held_s += dt;
    }
    if (from >= 0) world_add_state(w, from, -g);
    w->n_waiting += (ph == PH_WAITING) - (j->ph == PH_WAITING);
    if ((j->ph == PH_QUEUED || j->ph == PH_DONE) != (ph == PH_QUEUED || ph == PH_DONE))
        w->active[j->index >> 6] ^= 1ull << (j->index & 63);
    int left_running = j->ph == PH_RUNNING && ph != PH_RUNNING && j->kind == JOB_TRAINING;
    j->ph = ph;
    j->ph_since = now_of(w);
    int to = phase_state(j);
    if (to >= 0) world_add_state(w, to, g);
    if (left_running) world_flow_reprice(w, flow_apply);
}

/* ---- nodes held by jobs ----------------------------------------------- */

/* How many nodes ahead a loop over a job's nodes asks for their records:
 * a job's nodes are spread over the cluster (1.5 nodes a run of
 * consecutive ones in the 1M-GPU year), so each node's three records (the
 * cluster's, the world's, the scheduler's index) are cache misses that
 * the loop would otherwise wait for one after the other. */
#define NODE_AHEAD 8

static void prefetch_node(world *w, int n) {
    if (n < 0) return;
    __builtin_prefetch(&w->use[n], 1);
    cluster_prefetch(w->c, n);
    if (w->where_kept) sched_where_prefetch(w->q, n);
}

/* Node n takes slot i of the job. */
static void hold_node(job *j, int i, int n) {
    world *w = j->w;
    j->nodes[i] = n;
    j->n_held++;
    w->use[n].jobs++;
    w->use[n].job = j->index;
    if (w->where_kept) sched_placed(w->q, j->index, n, j->gpus_per_node);
}

/* The world's side of slot i's node going back, the cluster's done: the
 * scheduler's index and the node's use, an idle cloud node's release
 * clock, a draining node's end; the slot is left empty (-1). */
static void left_node(job *j, int i) {
    world *w = j->w;
    int n = j->nodes[i];
    if (w->where_kept) sched_unplaced(w->q, j->index, n);
    node_use *u = &w->use[n];
    u->jobs--;
    if (u->job == j->index) u->job = -1;
    j->nodes[i] = -1;
    j->n_held--;
    if (w->s->has_cloud && cluster_is_cloud(w->c, n) && u->jobs == 0 && u->replicas == 0) w->on_node.idle(w, n);
    if (u->drain) repair_node_left(w, n);
}

/* Slot i's node goes back to the pool. */
void job_release_node(job *j, int i) {
    int n = j->nodes[i];
    if (n < 0) return;
    cluster_release(j->w->c, &n, 1, j->gpus_per_node);
    left_node(j, i);
}

/* Every node of the job goes back: the cluster's side for all of them in
 * one call, then the world's node by node. The same as job_release_node
 * on each in turn: what the world's side reads of the cluster is the
 * node's own state (the index's key) or counts by node state (a drain's
 * end), which another node's free GPUs do not change. */
static void release_nodes(job *j) {
    world *w = j->w;
    cluster_release(w->c, j->nodes, j->n_nodes, j->gpus_per_node);
    if (w->where_kept || w->s->has_cloud) {
        for (int i = 0; i < j->n_nodes; i++) {
            if (i + NODE_AHEAD < j->n_nodes) prefetch_node(w, j->nodes[i + NODE_AHEAD]);
            if (j->nodes[i] >= 0) left_node(j, i);
        }
        return;
    }
    /* left_node without its index and cloud steps, which neither
     * applies: the loop reads no world field per node. */
    int *nodes = j->nodes;
    for (int i = 0; i < j->n_nodes; i++) {
        if (i + NODE_AHEAD < j->n_nodes) prefetch_node(w, nodes[i + NODE_AHEAD]);
        int n = nodes[i];
        if (n < 0) continue;
        node_use *u = &w->use[n];
        u->jobs--;
        if (u->job == j->index) u->job = -1;
        nodes[i] = -1;
        j->n_held--;
        if (u->drain) repair_node_left(w, n);
    }
}

/* j ended (for any reason: Slurm's afterany): the jobs waiting for it
 * enter the queue (each at its place by submit time). */
static void release_dependents(job *j) {
    world *w = j->w;
    int k = j->dep_head;
    j->dep_head = -1;
    while (k >= 0) {
        job *d = &w->jobs[k];
        k = d->dep_next;
        d->dep_next = -1;
        sched_job v = job_sched_view(d);
        sched_submit(w->q, &v);
        world_event(w, d->name, "job_eligible", "%s ended", j->name);
    }
}

static void finish(job *j) {
    world *w = j->w;
    job_train *tr = j->tr;
    if (tr && j->state != JOB_TIMEOUT) tr->progress = (double)tr->steps_total;
    if (tr && tr->ev_write) engine_cancel(w->e, tr->ev_write);
    if (tr) tr->ev_write = 0;
    if (j->ev_timeout) engine_cancel(w->e, j->ev_timeout);
    j->ev_timeout = 0;
    set_phase(j, PH_DONE);
    if (tr) tr->time.kept_s = j->run_s - tr->time.redone_s;
    release_nodes(j);
    sched_finished(w->q, j->index);
    if (j->state != JOB_TIMEOUT) j->state = JOB_DONE;
    j->end_s = now_s(w);
    world_event(w, j->name, "job_end", "%s after %.0f s", job_state_name(j->state), j->end_s - j->start_s);
    release_dependents(j);
    w->unfinished--;
    if (w->unfinished == 0) engine_stop(w->e);
    else w->dispatch(w);
}

/* A job past its time limit is ended where it stands. */
static void on_timeout(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    world *w = j->w;
    j->ev_timeout = 0;
    if (j->ph == PH_DONE || j->ph == PH_QUEUED) return;
    if (j->kind == JOB_TRAINING && j->ph == PH_RUNNING) commit_progress(j);
    if (j->ev_phase) engine_cancel(w->e, j->ev_phase);
    j->ev_phase = 0;
    j->state = JOB_TIMEOUT;
    if (j->kind == JOB_BATCH && j->ph == PH_RUNNING)   /* killed before it finished: lost */
        w->batch_lost_gpu_s += j->gpus * sim_to_s(now_of(w) - j->ph_since);
    world_event(w, j->name, "job_timeout", "time limit of %.0f s reached", j->timeout_s);
    if (j->kind == JOB_TRAINING) j->tr->progress = j->tr->durable;   /* only what was saved is kept */
    finish(j);
}

/* ---- training: progress and checkpoints ---------------------------------- */

double job_progress_now(const job *j) {
    const job_train *tr = j->tr;
    if (j->ph != PH_RUNNING) return tr->progress;
    double p = tr->progress + sim_to_s(now_of(j->w) - tr->run_since) / tr->step_s;
    return p > (double)tr->steps_total ? (double)tr->steps_total : p;
}

static void commit_progress(job *j) {
    job_train *tr = j->tr;
    tr->progress = job_progress_now(j);
    tr->run_since = now_of(j->w);
    tr->steps_done = (int64_t)floor(tr->progress + 1e-9);
    tr->tokens_done = tr->perf ? (double)tr->steps_done * tr->perf->tokens_per_step : 0;
}

static void on_run_event(engine *e, void *arg);
static void on_stall_end(engine *e, void *arg);
static void on_write_end(engine *e, void *arg);

/* Schedule the next thing a running job does: finish, checkpoint or report. */
static void schedule_run_event(job *j) {
    job_train *tr = j->tr;
    double target = (double)tr->steps_total;
    if (tr->ckpt_every > 0 && tr->next_ckpt < target) target = tr->next_ckpt;
    double report = tr->progress + REPORT_S / tr->step_s;
    if (report < target) target = report;
    /* At least 1 ns on: a target a rounding error away would otherwise be
     * rescheduled at the same instant for ever. */
    double dt = (target - tr->progress) * tr->step_s;
    j->ev_phase = engine_after(j->w->e, sim_from_s(dt > 1e-9 ? dt : 1e-9), on_run_event, j);
}

static void training_start_running(job *j) {
    set_phase(j, PH_RUNNING);
    j->tr->run_since = now_of(j->w);
    schedule_run_event(j);
    world_flow_reprice(j->w, flow_apply);
}

/* The flow model (sim/world_flow.c): a job's step time at its share of the
 * fabric; a running job's progress so far is kept at the old one. */
static void flow_apply(job *j, double step_s) {
    job_train *tr = j->tr;
    if (step_s == tr->step_s) return;
    if (j->ph != PH_RUNNING) {
        tr->step_s = step_s;
        return;
    }
    commit_progress(j);
    if (j->ev_phase) engine_cancel(j->w->e, j->ev_phase);
    tr->step_s = step_s;
    schedule_run_event(j);
}

static void start_checkpoint(job *j) {
    world *w = j->w;
    job_train *tr = j->tr;
    if (tr->inflight >= 0) {
        /* The previous async write is still going: skip this one rather than
         * queue writes (the storage is the bottleneck). */
        tr->next_ckpt = tr->progress + tr->ckpt_every;
        tr->checkpoints_skipped++;
        schedule_run_event(j);
        return;
    }
    set_phase(j, PH_CHECKPOINT);
    tr->checkpoints++;
    world_event(w, j->name, "checkpoint_start", "step %lld%s", (long long)tr->steps_done,
                tr->ckpt_note ? tr->ckpt_note : "");
    j->ev_phase = engine_after(w->e, sim_from_s(tr->stall_s), on_stall_end, j);
}

static void on_run_event(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    job_train *tr = j->tr;
    j->ev_phase = 0;
    commit_progress(j);
    metrics_sample(j->w->bus, tr->m_progress, now_of(j->w), tr->progress / (double)tr->steps_total);
    if (tr->progress >= (double)tr->steps_total - 1e-9) {
        finish(j);
    } else if (tr->ckpt_every > 0 && tr->progress >= tr->next_ckpt - 1e-9) {
        start_checkpoint(j);
    } else {
        schedule_run_event(j);
    }
}

static void on_stall_end(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    job_train *tr = j->tr;
    j->ev_phase = 0;
    tr->next_ckpt = tr->progress + tr->ckpt_every;
    if (!strcmp(tr->t->checkpoint.mode, "async")) {
        tr->inflight = tr->progress;
        tr->ev_write = engine_after(j->w->e, sim_from_s(tr->background_s), on_write_end, j);
    } else {
        tr->durable = tr->progress;
        world_event(j->w, j->name, "checkpoint_end", "step %lld saved", (long long)tr->steps_done);
    }
    training_start_running(j);
}

static void on_write_end(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    job_train *tr = j->tr;
    tr->ev_write = 0;
    tr->durable = tr->inflight;
    tr->inflight = -1;
    world_event(j->w, j->name, "checkpoint_end", "step %.0f saved (async)", floor(tr->durable));
}

/* ---- queueing and preemption ------------------------------------------------ */

/* What the scheduler knows of the job: for backfill, when it should end. */
sched_job job_sched_view(const job *j) {
    const job_train *tr = j->tr;
    sched_job v = { j->index, j->queue, tr ? tr->t->priority : j->priority, j->pool, j->gpus, j->submit_s, 0, 0 };
    if (tr) {
        double left = ((double)tr->steps_total - tr->progress) * tr->step_s;
        v.expected_end_s = left + (j->started_once ? j->w->s->failure_cfg.restart_s + tr->load_s : 0);
    } else {
        v.expected_end_s = j->duration_s;
    }
    if (j->timeout_s > 0 && j->timeout_s < v.expected_end_s) v.expected_end_s = j->timeout_s;
    return v;
}

/* Back to the queue (a batch job hit by a failure, a preempted job): give
 * back every GPU; a training job keeps its durable progress. */
static void requeue(job *j) {
    world *w = j->w;
    if (j->kind == JOB_BATCH && j->ph == PH_RUNNING)   /* the run is lost: it starts again */
        w->batch_lost_gpu_s += j->gpus * sim_to_s(now_of(w) - j->ph_since);
    if (j->ev_phase) engine_cancel(w->e, j->ev_phase);
    j->ev_phase = 0;
    if (j->ev_timeout) engine_cancel(w->e, j->ev_timeout);
    j->ev_timeout = 0;
    set_phase(j, PH_QUEUED);
    release_nodes(j);
    j->lost_nodes = 0;
    j->state = JOB_PENDING;
    sched_finished(w->q, j->index);
    sched_job v = job_sched_view(j);
    sched_submit(w->q, &v);
}

/* lost_s of training to do again, to the job's total, its cause's share
 * (*cause) and the world's GPU-seconds of work not kept. */
static void count_redone(job *j, double lost_s, double *cause) {
    j->tr->time.redone_s += lost_s;
    *cause += lost_s;
    j->w->redone_gpu_s += lost_s * j->gpus;
}

/* The scheduler evicts a running job for a more important one (by). A
 * training job with checkpoints saves on the way out (the scheduler's grace
 * period; the save is counted as instantaneous); without, it loses the work
 * since its last checkpoint. A batch job starts again from scratch. */
void job_preempt(job *j, const char *by) {
    world *w = j->w;
    job_train *tr = j->tr;
    if (j->ph == PH_QUEUED || j->ph == PH_DONE) return;
    if (j->kind == JOB_TRAINING) {
        if (j->ph == PH_RUNNING) commit_progress(j);
        if (tr->ev_write) engine_cancel(w->e, tr->ev_write);
        tr->ev_write = 0;
        tr->inflight = -1;
        if (tr->ckpt_every > 0) {
            tr->durable = tr->progress;
        } else if (tr->progress > tr->durable) {
            count_redone(j, (tr->progress - tr->durable) * tr->step_s, &tr->time.redone_preemption_s);
            tr->progress = tr->durable;
            commit_progress(j);
        }
        tr->next_ckpt = tr->progress + tr->ckpt_every;
    }
    j->preemptions++;
    world_event(w, j->name, "job_preempted", "by %s", by);
    requeue(j);
}

/* ---- training: failures and recovery --------------------------------------- */

/* A failure (or a health-check drain when planned) hits a running job. */
static void interrupt(job *j, int node, const failure_proc *p, int planned) {
    world *w = j->w;
    job_train *tr = j->tr;
    if (j->ph == PH_QUEUED || j->ph == PH_DONE) return;
    if (j->tr && j->ph == PH_RUNNING) commit_progress(j);
    if (j->ph != PH_DOWN && j->ev_phase) {     /* a detection under way goes on */
        engine_cancel(w->e, j->ev_phase);
        j->ev_phase = 0;
    }
    if (p->needs_repair || planned) {
        for (int i = 0; i < j->n_nodes; i++)
            if (j->nodes[i] == node) {
                j->nodes[i] = -1;
                j->n_held--;
                j->lost_nodes++;
                w->use[node].jobs--;
                sched_unplaced(w->q, j->index, node);
                /* held since the phase began: set_phase counts only the GPUs held at its end */
                if (phase_state(j) >= 0) j->gpu_s += j->gpus_per_node * sim_to_s(now_of(w) - j->ph_since);
                world_add_state(w, phase_state(j), -j->gpus_per_node);
            }
        if (w->use[node].job == j->index) w->use[node].job = -1;
    }
    if (j->kind == JOB_BATCH) {
        /* A batch job restarts from scratch on new GPUs: give back what it
         * holds and queue it again at the head. */
        j->interruptions++;
        requeue(j);
        w->dispatch(w);
        return;
    }
    if (j->ph == PH_DOWN) return;              /* recovering: the lost node is noted */
    if (j->ph == PH_WAITING || j->ph == PH_RESTART) {
        if (j->ph == PH_RESTART) set_phase(j, PH_WAITING);
        try_restart(j);
        return;
    }
    tr->planned = planned;
    tr->fail_progress = tr->progress;
    if (planned) {
        /* Found by a periodic health check before it hit the job: the job
         * checkpoints and moves off the node, losing no work. */
        tr->planned_interruptions++;
        tr->durable = tr->progress;
        if (tr->ev_write) engine_cancel(w->e, tr->ev_write);
        tr->ev_write = 0;
        tr->inflight = -1;
        set_phase(j, PH_CHECKPOINT);
        j->ev_phase = engine_after(w->e, sim_from_s(tr->stall_s), on_detected, j);
        return;
    }
    j->interruptions++;
    set_phase(j, PH_DOWN);
    const sc_failures_cfg *fc = &w->s->failure_cfg;
    double detect = p->detect == DETECT_HANG ? fc->watchdog_s : fc->crash_detect_s;
    j->ev_phase = engine_after(w->e, sim_from_s(detect), on_detected, j);
}

static void on_detected(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    world *w = j->w;
    job_train *tr = j->tr;
    j->ev_phase = 0;
    /* Roll back to the last durable checkpoint; an async write in flight is lost. */
    if (tr->ev_write) engine_cancel(w->e, tr->ev_write);
    tr->ev_write = 0;
    tr->inflight = -1;
    double lost = tr->fail_progress - tr->durable;
    if (lost > 0) count_redone(j, lost * tr->step_s, &tr->time.redone_failures_s);
    tr->progress = tr->durable;
    tr->next_ckpt = tr->progress + tr->ckpt_every;
    commit_progress(j);
    world_event(w, j->name, "job_down", "rolled back to step %.0f, %.0f s of work lost%s", floor(tr->durable),
                lost * tr->step_s, tr->planned ? " (planned)" : "");
    set_phase(j, PH_WAITING);
    try_restart(j);
}

/* ---- elastic training: shrink and grow -------------------------------------
 * An elastic job that lost nodes and finds no replacement goes on with the
 * data-parallel replicas it has whole; when the nodes come back (a repair,
 * a spare) it grows back to its original size. Either way the training
 * model plans the step again (models/training.c): the global batch is kept
 * (the same recipe, learning-rate schedule, steps and tokens; the fewer
 * replicas each run more micro-batches, i.e. gradient accumulation), so the
 * per-GPU memory is unchanged for activations and grows for FSDP/ZeRO
 * shards spread over fewer GPUs. A data-parallel size dp' is usable when
 * the global batch divides evenly among its replicas and the plan fits in
 * memory; the job takes the largest such dp' not above the replicas it
 * has whole, and gives back the nodes beyond them. No usable dp': it
 * waits for nodes like a rigid job. */

/* The step at data-parallel size dp (the rest of the plan as given); 0, or
 * -1 when the plan is invalid there or does not fit. */
static int plan_at(const job *j, int dp, train_result *r) {
    world *w = j->w;
    const job_train *tr = j->tr;
    train_plan p = tr->t->plan;
    p.dp = dp;
    char why[256];
    fabric f;
    if (train_plan_check(&tr->t->model, &p, why, sizeof why) < 0 || world_fabric(w, j->pool, &f) < 0) return -1;
    if (train_step(&tr->t->model, &p, &f, r) < 0 || !r->fits) return -1;
    return 0;
}

static void set_plan(job *j, const train_result *r, int gpus) {
    /* Progress so far is in steps, at the old step time. */
    if (j->ph == PH_RUNNING) commit_progress(j);
    *j->tr->perf = *r;
    j->tr->step_s = r->step_s;
    j->gpus = gpus;
}

static void shrink(job *j) {
    world *w = j->w;
    job_train *tr = j->tr;
    const train_plan *p = &tr->t->plan;
    int model_gpus = p->tp * p->pp * p->cp;
    int have = held_gpus(j);
    train_result r;
    int dp = have / model_gpus;
    while (dp >= 1 && plan_at(j, dp, &r) < 0) dp--;
    if (dp < 1) return;
    int removed = 0;
    for (int i = 0; i < j->n_nodes; i++)
        if (j->nodes[i] < 0) removed++;
    /* Give back whole nodes beyond what dp replicas use (from the end). */
    int keep = (dp * model_gpus + j->gpus_per_node - 1) / j->gpus_per_node;
    int live = j->n_nodes - removed;
    for (int i = j->n_nodes - 1; i >= 0 && live > keep; i--) {
        if (j->nodes[i] < 0) continue;
        world_add_state(w, phase_state(j), -j->gpus_per_node);
        job_release_node(j, i);
        live--;
    }
    double old_s = tr->step_s;
    set_plan(j, &r, dp * model_gpus);
    if (!tr->shrinks) w->n_shrunk++;
    tr->shrinks++;
    j->lost_nodes = 0;
    world_event(w, j->name, "job_shrink",
                "continues on %d GPUs (dp %d of %d, global batch %d kept, %d micro-batches): %d nodes lost, none "
          "to replace them; step %.3f s (was %.3f s)",
          j->gpus, dp, p->dp, p->global_batch, r.micro_batches, removed, r.step_s, old_s);
}

/* A shrunk job takes nodes back (spares, then idle nodes) and, once it has
 * all of them, restarts at its original size (restart overhead and
 * checkpoint load; the job saves on the way, as when preempted). Only a job
 * running (not checkpointing or restarting); the next repair tries again. */
static void try_grow(job *j) {
    world *w = j->w;
    job_train *tr = j->tr;
    if (j->ph != PH_RUNNING || !j->tr || !tr->t->elastic || j->gpus >= tr->t->gpus) return;
    int missing = 0;
    for (int i = 0; i < j->n_nodes; i++) missing += j->nodes[i] < 0;
    if (missing == 0) return;
    train_result r;
    if (plan_at(j, tr->t->plan.dp, &r) < 0) return;
    int got[64], n_got = 0;
    if (missing > 64) return;
    for (int k = 0; k < missing; k++) {
        int n = cluster_take_spare(w->c, j->pool, j->gpus_per_node);
        if (n < 0) n = cluster_take_idle(w->c, j->pool, j->gpus_per_node);
        if (n < 0 || w->use[n].latent) {
            if (n >= 0) cluster_release(w->c, &n, 1, j->gpus_per_node);
            cluster_release(w->c, got, n_got, j->gpus_per_node);
            return;
        }
        got[n_got++] = n;
    }
    commit_progress(j);
    if (j->ev_phase) engine_cancel(w->e, j->ev_phase);
    j->ev_phase = 0;
    if (tr->ev_write) engine_cancel(w->e, tr->ev_write);
    tr->ev_write = 0;
    tr->inflight = -1;
    tr->durable = tr->progress;
    tr->next_ckpt = tr->progress + tr->ckpt_every;
    for (int i = 0, k = 0; i < j->n_nodes; i++) {
        if (j->nodes[i] >= 0) continue;
        hold_node(j, i, got[k++]);
        world_add_state(w, phase_state(j), j->gpus_per_node);
    }
    double old_s = tr->step_s;
    int old_gpus = j->gpus;
    set_plan(j, &r, tr->t->gpus);
    tr->grows++;
    world_event(w, j->name, "job_grow",
                "back to %d GPUs (dp %d) from %d: %d nodes returned; step %.3f s (was %.3f s)", j->gpus,
                tr->t->plan.dp, old_gpus, missing, r.step_s, old_s);
    set_phase(j, PH_RESTART);
    j->ev_phase = engine_after(w->e, sim_from_s(w->s->failure_cfg.restart_s + tr->load_s), on_restarted, j);
}

/* Replace lost nodes from warm spares, then idle nodes, else wait (or
 * shrink when the job is elastic); then restart. */
static void try_restart(job *j) {
    world *w = j->w;
    job_train *tr = j->tr;
    if (j->ph != PH_WAITING) return;
    for (int i = 0; i < j->n_nodes && j->lost_nodes > 0; i++) {
        if (j->nodes[i] >= 0) continue;
        int n = cluster_take_spare(w->c, j->pool, j->gpus_per_node);
        const char *from = "warm spare";
        if (n < 0) {
            n = cluster_take_idle(w->c, j->pool, j->gpus_per_node);
            from = "idle node";
        }
        if (n < 0) break;
        if (w->use[n].latent) {
            /* A replacement node is always checked before use: its hidden
             * fault is found now and it goes to repair. */
            const failure_proc *lp = failures_proc(w->f, w->use[n].latent - 1);
            cluster_release(w->c, &n, 1, j->gpus_per_node);
            w->use[n].latent = 0;
            repair_node_down(w, n, lp);
            i--;
            continue;
        }
        hold_node(j, i, n);
        j->lost_nodes--;
        /* held from now only: set_phase counts it from the phase's start */
        if (phase_state(j) >= 0) j->gpu_s -= j->gpus_per_node * sim_to_s(now_of(w) - j->ph_since);
        world_add_state(w, phase_state(j), j->gpus_per_node);
        world_event(w, j->name, "node_replaced", "node %d (%s)", n, from);
    }
    if (j->lost_nodes > 0 && tr->t->elastic) shrink(j);
    if (j->lost_nodes > 0) {
        if (!tr->waited_for_nodes)
            world_event(w, j->name, "job_waiting", "waiting for %d replacement node(s): no spare or idle node",
                        j->lost_nodes);
        tr->waited_for_nodes = 1;
        return;
    }
    set_phase(j, PH_RESTART);
    double t = w->s->failure_cfg.restart_s + tr->load_s;
    j->ev_phase = engine_after(w->e, sim_from_s(t), on_restarted, j);
}

static void on_restarted(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    j->ev_phase = 0;
    world_event(j->w, j->name, "job_restart", "resumed at step %.0f", floor(j->tr->progress));
    training_start_running(j);
}

/* Every job using the node. Whole-node jobs own their nodes, so the usual
 * case is the one job in node_use.job; shared nodes need a scan. */
void job_hit_node(world *w, int node, const failure_proc *p, int planned) {
    if (w->use[node].jobs <= 0) return;
    int ji = w->use[node].job;
    if (w->use[node].jobs == 1 && ji >= 0) {
        interrupt(&w->jobs[ji], node, p, planned);
        return;
    }
    for (int i = 0; i < w->n_jobs && w->use[node].jobs > 0; i++) {
        job *j = &w->jobs[i];
        if (j->ph == PH_QUEUED || j->ph == PH_DONE) continue;
        for (int k = 0; k < j->n_nodes; k++)
            if (j->nodes[k] == node) {
                interrupt(j, node, p, planned);
                break;
            }
    }
}

/* ---- starting jobs ------------------------------------------------------ */

static void on_batch_end(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    j->ev_phase = 0;
    finish(j);
}

/* The step time where the job actually landed: a job spread over more leaf
 * switches than it needs sends its data-parallel traffic through the
 * (oversubscribed) spine. The collective model sees a group spanning more
 * than nodes_per_leaf nodes as crossing leaves, so the fabric is given
 * nodes / leaves-spanned nodes per leaf. */
static void place_training(job *j) {
    world *w = j->w;
    job_train *tr = j->tr;
    fabric f;
    if (j->n_nodes < 2 || tr->shrinks || world_fabric(w, j->pool, &f) < 0) return;
    int L = f.nodes_per_leaf > 0 ? f.nodes_per_leaf : 1, leaves = 0;
    for (int i = 0; i < j->n_nodes; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = j->nodes[k] / L == j->nodes[i] / L;
        leaves += !seen;
    }
    tr->leaf_groups = leaves;
    int eff = (j->n_nodes + leaves - 1) / leaves;
    if (eff < f.nodes_per_leaf) f.nodes_per_leaf = eff;
    train_result r;
    if (train_step(&tr->t->model, &tr->t->plan, &f, &r) == 0 && r.fits) {
        *tr->perf = r;
        tr->step_s = r.step_s;
    }
}

/* The job holds its n nodes (j->nodes) from now, having run elapsed_s
 * before (a snapshot's running job; else 0): its time limit and a batch
 * job's run are what is left of them. */
static void begin(job *j, int n, double elapsed_s) {
    world *w = j->w;
    for (int i = 0; i < n && w->where_kept; i++) {
        if (i + NODE_AHEAD < n) prefetch_node(w, j->nodes[i + NODE_AHEAD]);
        hold_node(j, i, j->nodes[i]);
    }
    for (int i = 0; i < n && !w->where_kept; i++) {      /* hold_node without the index's step */
        if (i + NODE_AHEAD < n) prefetch_node(w, j->nodes[i + NODE_AHEAD]);
        node_use *u = &w->use[j->nodes[i]];
        u->jobs++;
        u->job = j->index;
    }
    if (!w->where_kept) j->n_held += n;
    if (j->kind == JOB_TRAINING) place_training(j);
    j->state = JOB_RUNNING;
    int again = j->started_once;
    if (!again) {
        j->start_s = now_s(w) - elapsed_s;
        /* exact in ns; a submit before t = 0 is not a clock value */
        j->queue_wait_s = elapsed_s > 0 || j->submit_s < 0 ? j->start_s - j->submit_s
                                                               : sim_to_s(now_of(w) - sim_from_s(j->submit_s));
        if (j->queue_wait_s < 0) j->queue_wait_s = 0;
    }
    world_event(w, j->name, "job_start", "%d GPUs on %d nodes of %s%s", j->gpus, n,
                cluster_pool_spec(w->c, j->pool)->name, again ? " (resumed)" : elapsed_s > 0 ? " (running at t = 0)" : "");
    double limit_left = j->timeout_s - elapsed_s, run_left = j->duration_s - elapsed_s;
    if (j->timeout_s > 0) j->ev_timeout = engine_after(w->e, sim_from_s(limit_left > 0 ? limit_left : 0), on_timeout, j);
    if (j->kind == JOB_TRAINING && again) {
        /* Resumed after a preemption: restart overhead and checkpoint load. */
        set_phase(j, PH_RESTART);
        j->ev_phase = engine_after(w->e, sim_from_s(w->s->failure_cfg.restart_s + j->tr->load_s), on_restarted, j);
    } else if (j->kind == JOB_TRAINING) {
        training_start_running(j);
    } else {
        set_phase(j, PH_RUNNING);
        j->ev_phase = engine_after(w->e, sim_from_s(run_left > 0 ? run_left : 0), on_batch_end, j);
    }
    /* A node that failed unseen while idle (no start health check): the
     * job crashes on it as soon as it starts. (None ever: no look.) */
    for (int i = 0; i < j->n_nodes && w->any_latent; i++) {
        int nd = j->nodes[i];
        if (nd < 0 || !w->use[nd].latent) continue;
        const failure_proc *lp = failures_proc(w->f, w->use[nd].latent - 1);
        w->use[nd].latent = 0;
        world_event(w, "cluster", "failure", "node %d: %s found when job %s started on it", nd, lp->cause, j->name);
        repair_node_down(w, nd, lp);          /* out of service before the job requeues */
        interrupt(j, nd, lp, 0);
        if (j->ph == PH_QUEUED) break;        /* a batch job went back to the queue */
    }
}

void job_start(job *j) {
    int n = sched_alloc(j->w->q, j->queue, j->pool, j->gpus, j->nodes, j->n_nodes);
    if (n < 0) return;                       /* dispatch checked; cannot happen */
    begin(j, n, 0);
}

int job_start_running(job *j, const int *nodes, double elapsed_s) {
    world *w = j->w;
    int n = j->n_nodes;
    if (nodes) {
        for (int i = 0; i < n; i++)
            if (cluster_take_gpus(w->c, nodes[i], j->gpus_per_node) < 0) {
                cluster_release(w->c, nodes, i, j->gpus_per_node);
                return -1;
            }
        memcpy(j->nodes, nodes, (size_t)n * sizeof *nodes);
    } else if ((n = sched_alloc(w->q, j->queue, j->pool, j->gpus, j->nodes, j->n_nodes)) < 0) {
        return -1;
    }
    sched_job v = job_sched_view(j);
    v.running = 1;
    v.expected_end_s = now_s(w) + (v.expected_end_s > elapsed_s ? v.expected_end_s - elapsed_s : 0);
    sched_adopt(w->q, &v);
    begin(j, n, elapsed_s);
    j->started_once = 1;
    return 0;
}

/* The job's submit time: it enters the scheduler's queue, or, when it
 * waits for another job still to end (trace after), that job's list of
 * dependents (job_release_dependents puts it in the queue). */
void job_on_submit(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    world *w = j->w;
    /* A trace's jobs are submitted in index order: the next core (its
     * four cache lines, from calloc'd memory last read when the world was
     * built) is asked for while this one is handled. */
    for (int k = 0; k < (int)sizeof *j; k += 64) __builtin_prefetch((const char *)(j + 1) + k);
    job *dep = j->after >= 0 ? &w->jobs[j->after] : NULL;
    if (dep && dep->ph != PH_DONE) {
        j->dep_next = dep->dep_head;
        dep->dep_head = j->index;
        world_event(w, j->name, "job_submit", "%d GPUs, eligible once %s ends", j->gpus, dep->name);
        return;
    }
    world_event(w, j->name, "job_submit", "%d GPUs", j->gpus);
    sched_job v = job_sched_view(j);
    w->submit(w, &v);
}

/* A node is back in service: jobs waiting for nodes take it (scanned only
 * when some wait: a 100K-job trace on 100K GPUs repairs a node every few
 * minutes), and after a repair shrunk jobs try to grow back. */
void job_node_back(world *w, int repaired) {
    for (int i = 0; i < w->n_jobs && w->n_waiting > 0; i++)
        if (w->jobs[i].ph == PH_WAITING) try_restart(&w->jobs[i]);
    for (int i = 0; i < w->n_jobs && w->n_shrunk > 0 && repaired; i++) try_grow(&w->jobs[i]);
}

/* The end of a run for a job still going: its phase accounted up to now. */
void job_close(job *j) {
    if (j->ph == PH_QUEUED || j->ph == PH_DONE) return;
    if (j->kind == JOB_TRAINING) commit_progress(j);
    phase ph = j->ph;
    set_phase(j, ph);               /* account the current phase up to now */
    if (j->tr && ph == PH_RUNNING) j->tr->run_since = now_of(j->w);
    if (j->tr) j->tr->time.kept_s = j->run_s - j->tr->time.redone_s;
}
