/*
 * world: builds the cluster and the jobs from a scenario and runs them.
 *
 * Jobs take GPUs of one node pool at once (gang start, never partial).
 * Dispatch is strict FIFO in submit order for now; the scheduler of a later
 * issue (queues, priorities, backfill, preemption) replaces dispatch() and
 * keeps this interface.
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
 */
#include "sim/world.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/checkpoint.h"
#include "models/numerics.h"
#include "models/reliability.h"
#include "sim/cluster.h"
#include "sim/failures.h"
#include "sim/rng.h"
#include "sim/sched.h"
#include "sim/serving.h"

#define REPORT_S 3600.0            /* a running job reports progress hourly */

typedef enum phase {
    PH_QUEUED, PH_RUNNING, PH_CHECKPOINT, PH_DOWN, PH_WAITING, PH_RESTART, PH_DONE
} phase;

/* GPU states for utilisation time series (CONTRACT: by state). */
enum { GS_TRAINING, GS_CHECKPOINT, GS_RESTARTING, GS_BATCH, GS_SERVING, GS_COUNT };

typedef struct job {
    job_result r;
    world *w;
    int index;
    int pool;
    int *nodes;                    /* nodes held (-1: a lost node not yet replaced) */
    int n_nodes;
    int gpus_per_node;             /* GPUs used on each node */
    phase ph;
    sim_time ph_since;
    event_id ev_phase;             /* the phase's pending event */
    /* batch */
    double duration_s;
    /* training */
    const sc_training *t;
    train_result *perf;            /* the world's perf[] entry, also r.perf */
    double step_s;                 /* current step time (grows when a job shrinks) */
    double progress;               /* steps done as of run_since */
    sim_time run_since;
    double durable;                /* steps saved by the last completed checkpoint */
    double inflight;               /* steps an async write in flight will save; -1 none */
    event_id ev_write;
    double ckpt_every;             /* steps between checkpoints; 0 = none */
    double next_ckpt;              /* progress at which the next checkpoint is due */
    double stall_s, background_s, load_s;
    char ckpt_note[128];           /* said at each checkpoint_start ("" none): a streamed gather */
    int lost_nodes;                /* nodes to replace before a restart */
    int planned;                   /* the current interruption was planned (health check) */
    double fail_progress;          /* progress when the current interruption hit */
    double run_s;                  /* time spent running (kept + redone) */
    double gpu_s, held_s;          /* GPU-seconds held, and time holding GPUs */
    int started_once;              /* has held GPUs (a later queue stretch is waiting) */
    int queue;                     /* scheduler queue */
    int priority;
    int line;                      /* of its element, for messages */
    double timeout_s;              /* per start; 0 = none */
    event_id ev_timeout;
    metric_id m_progress;
} job;

struct world {
    const scenario *s;
    engine *e;
    metric_bus *bus;
    cluster *c;
    failures *f;
    rng *r_health;                 /* health-check coverage draws */
    job *jobs;
    int n_jobs;
    train_result *perf;            /* one per training job (job.perf points here) */
    struct name_chunk *names;      /* generated job names ("group-17"), freed with the world */
    sched *q;                      /* queues, policies, backfill, preemption */
    int in_dispatch, redispatch;   /* dispatch is not re-entered from its callbacks */
    double frag_gpu_s;             /* integral of fragmented free GPUs */
    int frag_now;
    sim_time frag_since;
    /* cloud autoscaling */
    int cloud_pool;                /* pool of the cloud node type, -1 none */
    int cloud_pending;             /* nodes being provisioned */
    event_id ev_scale;             /* pending scale-up check */
    double cloud_node_s;           /* rented node-seconds */
    sim_time cloud_since;
    double *idle_since;            /* per node: when it last became idle (cloud release) */
    struct release_arg *release_args;
    int *job_of_node;              /* a job running on each node, -1 none */
    short *jobs_on_node;           /* how many jobs use each node */
    short *latent;                 /* 1 + failure kind of a fault on an idle node nobody saw; 0 none */
    struct repair *repairs;        /* one per node: the pending repair's argument */
    event_id *repair_ev;
    double *lemon_since;           /* start of each node's failure-count window */
    int *lemon_count;
    int gpus_state[GS_COUNT];
    double gpu_state_s[GS_COUNT];
    sim_time state_since;
    double redone_gpu_s;           /* training GPU-seconds of steps lost and done again */
    double batch_lost_gpu_s;       /* batch GPU-seconds of runs cut short */
    int unfinished;
    int n_waiting;                     /* jobs in PH_WAITING (for nodes after a failure) */
    int n_shrunk;                      /* elastic jobs that ever shrank (repairs look for growth) */
    int n_fail_total;
    int *fail_by_proc;
    int drained;
    metric_id m_state[GS_COUNT], m_queue, m_failed, m_frag;
    mb_case *mb;
    mb_prediction *mb_pred;
    int *mb_ok;
    int n_mb;
    mb_measurement *mb_meas;
    int *mb_measured;
    char (*mb_note)[256];
    host_profile *mb_host;              /* NULL: cases priced by the GPU models */
    mb_hardware *mb_hw;
    /* inference services (sim/serving) and the GPUs their replicas hold */
    struct svc_host *svc;
    int n_svc;
    struct holding *hold;          /* replicas' GPU requests (scheduler ids n_jobs + index) */
    int n_hold, cap_hold;
    short *svc_on_node;            /* replicas placed on each node */
    int acquiring;                 /* holding being asked for in svc_acquire, -1 none */
    int injected, closed;          /* live control: failures injected; books closed */
};

typedef struct release_arg { world *w; int node; } release_arg;
static void on_release_check(engine *e, void *arg);

const char *job_kind_name(job_kind k) { return k == JOB_TRAINING ? "training" : "batch"; }

const char *job_state_name(job_state s) {
    static const char *z[] = { "pending", "running", "done", "failed", "timeout" };
    return z[s];
}

static sim_time now_of(const world *w) { return engine_now(w->e); }
static double now_s(const world *w) { return sim_to_s(engine_now(w->e)); }

static void event(world *w, const char *entity, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void event(world *w, const char *entity, const char *kind, const char *fmt, ...) {
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    metrics_event(w->bus, now_of(w), entity, kind, detail);
}

/* ---- GPU state accounting ------------------------------------------------ */

static void integrate(world *w) {
    sim_time t = now_of(w);
    double dt = sim_to_s(t - w->state_since);
    for (int i = 0; i < GS_COUNT; i++) w->gpu_state_s[i] += w->gpus_state[i] * dt;
    w->state_since = t;
}

static void add_state(world *w, int gs, int gpus) {
    if (gpus == 0) return;
    integrate(w);
    w->gpus_state[gs] += gpus;
    metrics_sample(w->bus, w->m_state[gs], now_of(w), w->gpus_state[gs]);
}

static int phase_state(const job *j) {
    if (j->r.kind == JOB_BATCH) return j->ph == PH_RUNNING ? GS_BATCH : -1;
    switch (j->ph) {
    case PH_RUNNING: return GS_TRAINING;
    case PH_CHECKPOINT: return GS_CHECKPOINT;
    case PH_DOWN:
    case PH_WAITING:
    case PH_RESTART: return GS_RESTARTING;
    default: return -1;
    }
}

static int held_gpus(const job *j) {
    int n = 0;
    for (int i = 0; i < j->n_nodes; i++) n += j->nodes[i] >= 0;
    return n * j->gpus_per_node;
}

/* Move a job to phase ph, keeping the time accounting and GPU states. */
static void set_phase(job *j, phase ph) {
    world *w = j->w;
    double dt = sim_to_s(now_of(w) - j->ph_since);
    job_time *T = &j->r.time;
    switch (j->ph) {
    case PH_RUNNING: j->run_s += dt; break;
    case PH_CHECKPOINT: T->checkpoint_stall_s += dt; break;
    case PH_DOWN:
    case PH_RESTART: T->restart_s += dt; break;
    case PH_WAITING: T->waiting_s += dt; break;
    case PH_QUEUED:                   /* back in the queue after a preemption */
        if (j->started_once) T->waiting_s += dt;
        break;
    default: break;
    }
    int from = phase_state(j), g = held_gpus(j);
    if (from >= 0) {
        j->gpu_s += g * dt;
        j->held_s += dt;
    }
    if (from >= 0) add_state(w, from, -g);
    w->n_waiting += (ph == PH_WAITING) - (j->ph == PH_WAITING);
    j->ph = ph;
    j->ph_since = now_of(w);
    int to = phase_state(j);
    if (to >= 0) add_state(w, to, g);
}

/* ---- nodes held by jobs ----------------------------------------------- */

/* Node n takes slot i of the job. */
static void hold_node(job *j, int i, int n) {
    world *w = j->w;
    j->nodes[i] = n;
    w->jobs_on_node[n]++;
    w->job_of_node[n] = j->index;
}

/* Slot i's node goes back to the pool (an idle cloud node starts its
 * release clock); the slot is left empty (-1). */
static void release_node(job *j, int i) {
    world *w = j->w;
    int n = j->nodes[i];
    if (n < 0) return;
    cluster_release(w->c, &n, 1, j->gpus_per_node);
    w->jobs_on_node[n]--;
    if (w->job_of_node[n] == j->index) w->job_of_node[n] = -1;
    j->nodes[i] = -1;
    if (cluster_is_cloud(w->c, n) && w->jobs_on_node[n] == 0 && w->svc_on_node[n] == 0) {
        w->idle_since[n] = now_s(w);
        engine_after(w->e, sim_from_s(w->s->cloud_idle_release_s), on_release_check, &w->release_args[n]);
    }
}

static void release_nodes(job *j) {
    for (int i = 0; i < j->n_nodes; i++) release_node(j, i);
}

static void dispatch(world *w);
static void training_start_running(job *j);
static void on_release_check(engine *e, void *arg);
static void on_restarted(engine *e, void *arg);
static void commit_progress(job *j);
static void requeue(job *j);

static void finish(job *j) {
    world *w = j->w;
    if (j->r.kind == JOB_TRAINING && j->r.state != JOB_TIMEOUT) j->progress = (double)j->r.steps_total;
    if (j->ev_write) engine_cancel(w->e, j->ev_write);
    j->ev_write = 0;
    if (j->ev_timeout) engine_cancel(w->e, j->ev_timeout);
    j->ev_timeout = 0;
    set_phase(j, PH_DONE);
    j->r.time.kept_s = j->run_s - j->r.time.redone_s;
    release_nodes(j);
    sched_finished(w->q, j->index);
    if (j->r.state != JOB_TIMEOUT) j->r.state = JOB_DONE;
    j->r.end_s = now_s(w);
    event(w, j->r.name, "job_end", "%s after %.0f s", job_state_name(j->r.state), j->r.end_s - j->r.start_s);
    w->unfinished--;
    if (w->unfinished == 0) engine_stop(w->e);
    else dispatch(w);
}

/* A job past its time limit is ended where it stands. */
static void on_timeout(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    world *w = j->w;
    j->ev_timeout = 0;
    if (j->ph == PH_DONE || j->ph == PH_QUEUED) return;
    if (j->r.kind == JOB_TRAINING && j->ph == PH_RUNNING) commit_progress(j);
    if (j->ev_phase) engine_cancel(w->e, j->ev_phase);
    j->ev_phase = 0;
    j->r.state = JOB_TIMEOUT;
    if (j->r.kind == JOB_BATCH && j->ph == PH_RUNNING)   /* killed before it finished: lost */
        w->batch_lost_gpu_s += j->r.gpus * sim_to_s(now_of(w) - j->ph_since);
    event(w, j->r.name, "job_timeout", "time limit of %.0f s reached", j->timeout_s);
    if (j->r.kind == JOB_TRAINING) j->progress = j->durable;   /* only what was saved is kept */
    finish(j);
}

/* ---- training: progress and checkpoints ---------------------------------- */

static double progress_now(const job *j) {
    if (j->ph != PH_RUNNING) return j->progress;
    double p = j->progress + sim_to_s(now_of(j->w) - j->run_since) / j->step_s;
    return p > (double)j->r.steps_total ? (double)j->r.steps_total : p;
}

static void commit_progress(job *j) {
    j->progress = progress_now(j);
    j->run_since = now_of(j->w);
    j->r.steps_done = (int64_t)floor(j->progress + 1e-9);
    j->r.tokens_done = j->r.perf ? (double)j->r.steps_done * j->r.perf->tokens_per_step : 0;
}

static void on_run_event(engine *e, void *arg);
static void on_stall_end(engine *e, void *arg);
static void on_write_end(engine *e, void *arg);

/* Schedule the next thing a running job does: finish, checkpoint or report. */
static void schedule_run_event(job *j) {
    double target = (double)j->r.steps_total;
    if (j->ckpt_every > 0 && j->next_ckpt < target) target = j->next_ckpt;
    double report = j->progress + REPORT_S / j->step_s;
    if (report < target) target = report;
    /* At least 1 ns on: a target a rounding error away would otherwise be
     * rescheduled at the same instant for ever. */
    double dt = (target - j->progress) * j->step_s;
    j->ev_phase = engine_after(j->w->e, sim_from_s(dt > 1e-9 ? dt : 1e-9), on_run_event, j);
}

static void training_start_running(job *j) {
    set_phase(j, PH_RUNNING);
    j->run_since = now_of(j->w);
    schedule_run_event(j);
}

static void start_checkpoint(job *j) {
    world *w = j->w;
    if (j->inflight >= 0) {
        /* The previous async write is still going: skip this one rather than
         * queue writes (the storage is the bottleneck). */
        j->next_ckpt = j->progress + j->ckpt_every;
        j->r.checkpoints_skipped++;
        schedule_run_event(j);
        return;
    }
    set_phase(j, PH_CHECKPOINT);
    j->r.checkpoints++;
    event(w, j->r.name, "checkpoint_start", "step %lld%s", (long long)j->r.steps_done, j->ckpt_note);
    j->ev_phase = engine_after(w->e, sim_from_s(j->stall_s), on_stall_end, j);
}

static void on_run_event(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    j->ev_phase = 0;
    commit_progress(j);
    metrics_sample(j->w->bus, j->m_progress, now_of(j->w), j->progress / (double)j->r.steps_total);
    if (j->progress >= (double)j->r.steps_total - 1e-9) {
        finish(j);
    } else if (j->ckpt_every > 0 && j->progress >= j->next_ckpt - 1e-9) {
        start_checkpoint(j);
    } else {
        schedule_run_event(j);
    }
}

static void on_stall_end(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    j->ev_phase = 0;
    j->next_ckpt = j->progress + j->ckpt_every;
    if (!strcmp(j->t->checkpoint.mode, "async")) {
        j->inflight = j->progress;
        j->ev_write = engine_after(j->w->e, sim_from_s(j->background_s), on_write_end, j);
    } else {
        j->durable = j->progress;
        event(j->w, j->r.name, "checkpoint_end", "step %lld saved", (long long)j->r.steps_done);
    }
    training_start_running(j);
}

static void on_write_end(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    j->ev_write = 0;
    j->durable = j->inflight;
    j->inflight = -1;
    event(j->w, j->r.name, "checkpoint_end", "step %.0f saved (async)", floor(j->durable));
}

/* ---- training: failures and recovery --------------------------------------- */

static void on_detected(engine *e, void *arg);
static void on_restarted(engine *e, void *arg);
static void node_down(world *w, int node, const failure_proc *p);

static void try_restart(job *j);

static sched_job sched_view(const job *j) {
    sched_job v = { j->index, j->queue, j->t ? j->t->priority : j->priority, j->pool, j->r.gpus,
                    j->r.submit_s, 0, 0 };
    if (j->r.kind == JOB_TRAINING) {
        double left = ((double)j->r.steps_total - j->progress) * j->step_s;
        v.expected_end_s = left + (j->r.start_s >= 0 ? j->w->s->failure_cfg.restart_s + j->load_s : 0);
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
    if (j->r.kind == JOB_BATCH && j->ph == PH_RUNNING)   /* the run is lost: it starts again */
        w->batch_lost_gpu_s += j->r.gpus * sim_to_s(now_of(w) - j->ph_since);
    if (j->ev_phase) engine_cancel(w->e, j->ev_phase);
    j->ev_phase = 0;
    if (j->ev_timeout) engine_cancel(w->e, j->ev_timeout);
    j->ev_timeout = 0;
    set_phase(j, PH_QUEUED);
    release_nodes(j);
    j->lost_nodes = 0;
    j->r.state = JOB_PENDING;
    sched_finished(w->q, j->index);
    sched_job v = sched_view(j);
    sched_submit(w->q, &v);
}

/* The scheduler evicts a running job for a more important one. A training
 * job with checkpoints saves on the way out (the scheduler's grace period;
 * the save is counted as instantaneous); without, it loses the work since
 * its last checkpoint. A batch job starts again from scratch. */
static int is_holding(const world *w, int id);
static const char *entry_name(const world *w, int id);
static void holding_lost(world *w, int k, const char *why);
static sched_job holding_view(const world *w, int k);
static void hit_replicas(world *w, int node, const failure_proc *p);

/* lost_s of training to do again, to the job's total, its cause's share
 * (*cause) and the world's GPU-seconds of work not kept. */
static void count_redone(job *j, double lost_s, double *cause) {
    j->r.time.redone_s += lost_s;
    *cause += lost_s;
    j->w->redone_gpu_s += lost_s * j->r.gpus;
}

static void preempt_job(void *ctx, int ji, int by) {
    world *w = ctx;
    if (is_holding(w, ji)) {
        char why[SC_NAME_MAX + 32];
        snprintf(why, sizeof why, "preempted by %s", entry_name(w, by));
        holding_lost(w, ji - w->n_jobs, why);
        return;
    }
    job *j = &w->jobs[ji];
    if (j->ph == PH_QUEUED || j->ph == PH_DONE) return;
    if (j->r.kind == JOB_TRAINING) {
        if (j->ph == PH_RUNNING) commit_progress(j);
        if (j->ev_write) engine_cancel(w->e, j->ev_write);
        j->ev_write = 0;
        j->inflight = -1;
        if (j->ckpt_every > 0) {
            j->durable = j->progress;
        } else if (j->progress > j->durable) {
            count_redone(j, (j->progress - j->durable) * j->step_s, &j->r.time.redone_preemption_s);
            j->progress = j->durable;
            commit_progress(j);
        }
        j->next_ckpt = j->progress + j->ckpt_every;
    }
    j->r.preemptions++;
    event(w, j->r.name, "job_preempted", "by %s", entry_name(w, by));
    requeue(j);
}

static void sched_start(void *ctx, int ji);

/* A failure (or a health-check drain when planned) hits a running job. */
static void interrupt(job *j, int node, const failure_proc *p, int planned) {
    world *w = j->w;
    if (j->ph == PH_QUEUED || j->ph == PH_DONE) return;
    if (j->ph == PH_RUNNING) commit_progress(j);
    if (j->ph != PH_DOWN && j->ev_phase) {     /* a detection under way goes on */
        engine_cancel(w->e, j->ev_phase);
        j->ev_phase = 0;
    }
    if (p->needs_repair || planned) {
        for (int i = 0; i < j->n_nodes; i++)
            if (j->nodes[i] == node) {
                j->nodes[i] = -1;
                j->lost_nodes++;
                w->jobs_on_node[node]--;
                /* held since the phase began: set_phase counts only the GPUs held at its end */
                if (phase_state(j) >= 0) j->gpu_s += j->gpus_per_node * sim_to_s(now_of(w) - j->ph_since);
                add_state(w, phase_state(j), -j->gpus_per_node);
            }
        if (w->job_of_node[node] == j->index) w->job_of_node[node] = -1;
    }
    if (j->r.kind == JOB_BATCH) {
        /* A batch job restarts from scratch on new GPUs: give back what it
         * holds and queue it again at the head. */
        j->r.interruptions++;
        requeue(j);
        dispatch(w);
        return;
    }
    if (j->ph == PH_DOWN) return;              /* recovering: the lost node is noted */
    if (j->ph == PH_WAITING || j->ph == PH_RESTART) {
        if (j->ph == PH_RESTART) set_phase(j, PH_WAITING);
        try_restart(j);
        return;
    }
    j->planned = planned;
    j->fail_progress = j->progress;
    if (planned) {
        /* Found by a periodic health check before it hit the job: the job
         * checkpoints and moves off the node, losing no work. */
        j->r.planned_interruptions++;
        j->durable = j->progress;
        if (j->ev_write) engine_cancel(w->e, j->ev_write);
        j->ev_write = 0;
        j->inflight = -1;
        set_phase(j, PH_CHECKPOINT);
        j->ev_phase = engine_after(w->e, sim_from_s(j->stall_s), on_detected, j);
        return;
    }
    j->r.interruptions++;
    set_phase(j, PH_DOWN);
    const sc_failures_cfg *fc = &w->s->failure_cfg;
    double detect = p->detect == DETECT_HANG ? fc->watchdog_s : fc->crash_detect_s;
    j->ev_phase = engine_after(w->e, sim_from_s(detect), on_detected, j);
}

static void on_detected(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    world *w = j->w;
    j->ev_phase = 0;
    /* Roll back to the last durable checkpoint; an async write in flight is lost. */
    if (j->ev_write) engine_cancel(w->e, j->ev_write);
    j->ev_write = 0;
    j->inflight = -1;
    double lost = j->fail_progress - j->durable;
    if (lost > 0) count_redone(j, lost * j->step_s, &j->r.time.redone_failures_s);
    j->progress = j->durable;
    j->next_ckpt = j->progress + j->ckpt_every;
    commit_progress(j);
    event(w, j->r.name, "job_down", "rolled back to step %.0f, %.0f s of work lost%s", floor(j->durable),
          lost * j->step_s, j->planned ? " (planned)" : "");
    set_phase(j, PH_WAITING);
    try_restart(j);
}

static int fabric_for(const world *w, int pool, fabric *f);

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
    train_plan p = j->t->plan;
    p.dp = dp;
    char why[256];
    fabric f;
    if (train_plan_check(&j->t->model, &p, why, sizeof why) < 0 || fabric_for(w, j->pool, &f) < 0) return -1;
    if (train_step(&j->t->model, &p, &f, r) < 0 || !r->fits) return -1;
    return 0;
}

static void set_plan(job *j, const train_result *r, int gpus) {
    /* Progress so far is in steps, at the old step time. */
    if (j->ph == PH_RUNNING) commit_progress(j);
    *j->perf = *r;
    j->step_s = r->step_s;
    j->r.gpus = gpus;
}

static void shrink(job *j) {
    world *w = j->w;
    const train_plan *p = &j->t->plan;
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
        add_state(w, phase_state(j), -j->gpus_per_node);
        release_node(j, i);
        live--;
    }
    double old_s = j->step_s;
    set_plan(j, &r, dp * model_gpus);
    if (!j->r.shrinks) w->n_shrunk++;
    j->r.shrinks++;
    j->lost_nodes = 0;
    event(w, j->r.name, "job_shrink",
          "continues on %d GPUs (dp %d of %d, global batch %d kept, %d micro-batches): %d nodes lost, none "
          "to replace them; step %.3f s (was %.3f s)",
          j->r.gpus, dp, p->dp, p->global_batch, r.micro_batches, removed, r.step_s, old_s);
}

/* A shrunk job takes nodes back (spares, then idle nodes) and, once it has
 * all of them, restarts at its original size (restart overhead and
 * checkpoint load; the job saves on the way, as when preempted). Only a job
 * running (not checkpointing or restarting); the next repair tries again. */
static void try_grow(job *j) {
    world *w = j->w;
    if (j->ph != PH_RUNNING || !j->t->elastic || j->r.gpus >= j->t->gpus) return;
    int missing = 0;
    for (int i = 0; i < j->n_nodes; i++) missing += j->nodes[i] < 0;
    if (missing == 0) return;
    train_result r;
    if (plan_at(j, j->t->plan.dp, &r) < 0) return;
    int got[64], n_got = 0;
    if (missing > 64) return;
    for (int k = 0; k < missing; k++) {
        int n = cluster_take_spare(w->c, j->pool, j->gpus_per_node);
        if (n < 0) n = cluster_take_idle(w->c, j->pool, j->gpus_per_node);
        if (n < 0 || w->latent[n]) {
            if (n >= 0) cluster_release(w->c, &n, 1, j->gpus_per_node);
            cluster_release(w->c, got, n_got, j->gpus_per_node);
            return;
        }
        got[n_got++] = n;
    }
    commit_progress(j);
    if (j->ev_phase) engine_cancel(w->e, j->ev_phase);
    j->ev_phase = 0;
    if (j->ev_write) engine_cancel(w->e, j->ev_write);
    j->ev_write = 0;
    j->inflight = -1;
    j->durable = j->progress;
    j->next_ckpt = j->progress + j->ckpt_every;
    for (int i = 0, k = 0; i < j->n_nodes; i++) {
        if (j->nodes[i] >= 0) continue;
        hold_node(j, i, got[k++]);
        add_state(w, phase_state(j), j->gpus_per_node);
    }
    double old_s = j->step_s;
    int old_gpus = j->r.gpus;
    set_plan(j, &r, j->t->gpus);
    j->r.grows++;
    event(w, j->r.name, "job_grow", "back to %d GPUs (dp %d) from %d: %d nodes returned; step %.3f s (was %.3f s)",
          j->r.gpus, j->t->plan.dp, old_gpus, missing, r.step_s, old_s);
    set_phase(j, PH_RESTART);
    j->ev_phase = engine_after(w->e, sim_from_s(w->s->failure_cfg.restart_s + j->load_s), on_restarted, j);
}

/* Replace lost nodes from warm spares, then idle nodes, else wait (or
 * shrink when the job is elastic); then restart. */
static void try_restart(job *j) {
    world *w = j->w;
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
        if (w->latent[n]) {
            /* A replacement node is always checked before use: its hidden
             * fault is found now and it goes to repair. */
            const failure_proc *lp = failures_proc(w->f, w->latent[n] - 1);
            cluster_release(w->c, &n, 1, j->gpus_per_node);
            w->latent[n] = 0;
            node_down(w, n, lp);
            i--;
            continue;
        }
        hold_node(j, i, n);
        j->lost_nodes--;
        /* held from now only: set_phase counts it from the phase's start */
        if (phase_state(j) >= 0) j->gpu_s -= j->gpus_per_node * sim_to_s(now_of(w) - j->ph_since);
        add_state(w, phase_state(j), j->gpus_per_node);
        event(w, j->r.name, "node_replaced", "node %d (%s)", n, from);
    }
    if (j->lost_nodes > 0 && j->t->elastic) shrink(j);
    if (j->lost_nodes > 0) {
        if (!j->r.waited_for_nodes)
            event(w, j->r.name, "job_waiting", "waiting for %d replacement node(s): no spare or idle node", j->lost_nodes);
        j->r.waited_for_nodes = 1;
        return;
    }
    set_phase(j, PH_RESTART);
    double t = w->s->failure_cfg.restart_s + j->load_s;
    j->ev_phase = engine_after(w->e, sim_from_s(t), on_restarted, j);
}

static void on_restarted(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    j->ev_phase = 0;
    event(j->w, j->r.name, "job_restart", "resumed at step %.0f", floor(j->progress));
    training_start_running(j);
}

static void on_repaired(engine *e, void *arg);

typedef struct repair { world *w; int node; int replaced; } repair;   /* replaced: cold-provisioned */

/* Every job using the node. Whole-node jobs own their nodes, so the usual
 * case is the one job in job_of_node; shared nodes need a scan. */
static void hit_jobs(world *w, int node, const failure_proc *p, int planned) {
    if (w->jobs_on_node[node] <= 0) return;
    int ji = w->job_of_node[node];
    if (w->jobs_on_node[node] == 1 && ji >= 0) {
        interrupt(&w->jobs[ji], node, p, planned);
        return;
    }
    for (int i = 0; i < w->n_jobs && w->jobs_on_node[node] > 0; i++) {
        job *j = &w->jobs[i];
        if (j->ph == PH_QUEUED || j->ph == PH_DONE) continue;
        for (int k = 0; k < j->n_nodes; k++)
            if (j->nodes[k] == node) {
                interrupt(j, node, p, planned);
                break;
            }
    }
}

/* GPUs out of service (failed or drained nodes), for the time series. */
static void publish_failed(world *w) {
    int counts[5];
    cluster_counts(w->c, counts);
    int per = cluster_pool_count(w->c) ? cluster_pool_spec(w->c, 0)->gpus : 8;
    metrics_sample(w->bus, w->m_failed, now_of(w), (double)(counts[NODE_FAILED] + counts[NODE_DRAINED]) * per);
}

/* The node leaves service: repair (or cold replacement), or drained when
 * it has failed too often (a lemon). */
static void node_down(world *w, int node, const failure_proc *p) {
    const sc_failures_cfg *fc = &w->s->failure_cfg;
    double t = now_s(w);
    cluster_fail(w->c, node);
    if (t - w->lemon_since[node] > fc->lemon_window_s) {
        w->lemon_since[node] = t;
        w->lemon_count[node] = 0;
    }
    w->lemon_count[node]++;
    publish_failed(w);
    if (fc->lemon_threshold > 0 && w->lemon_count[node] >= fc->lemon_threshold) {
        cluster_drain(w->c, node);
        w->drained++;
        event(w, "cluster", "node_drained", "node %d: %d failures in %.0f days (lemon)", node,
              w->lemon_count[node], fc->lemon_window_s / 86400);
        return;
    }
    if (w->repair_ev[node]) return;          /* already being repaired */
    double mttr = p->mttr_s;
    w->repairs[node].replaced = w->s->cold_provision_s > 0 && w->s->cold_provision_s < mttr;
    if (w->repairs[node].replaced) mttr = w->s->cold_provision_s;
    w->repair_ev[node] = engine_after(w->e, sim_from_s(mttr), on_repaired, &w->repairs[node]);
}

static void node_failed(void *ctx, int node, int proc) {
    world *w = ctx;
    const failure_proc *p = failures_proc(w->f, proc);
    const sc_failures_cfg *fc = &w->s->failure_cfg;
    w->n_fail_total++;
    w->fail_by_proc[proc]++;
    int used = w->jobs_on_node[node] > 0 || w->svc_on_node[node] > 0;
    int down = cluster_node_state(w->c, node) == NODE_FAILED;
    event(w, "cluster", "failure", "node %d: %s (%s)%s", node, p->cause, p->component,
          used ? "" : down ? " while the node is down for repair" : " on an unused node");
    /* A part of a node under repair (parts fail on their own clocks): it is
     * replaced in the same repair, which waits for it (on_repaired). */
    if (down) return;
    /* A share of hardware faults is caught by periodic health checks first. */
    int planned = used && p->needs_repair && fc->health_coverage > 0 &&
                  rng_uniform(w->r_health) < fc->health_coverage;
    hit_jobs(w, node, p, planned);
    hit_replicas(w, node, p);
    if (!p->needs_repair) return;
    if (!used && !fc->health_at_start && cluster_node_state(w->c, node) == NODE_UP) {
        /* Nobody checks an idle node: the fault stays hidden until a job
         * starts on it and crashes. */
        if (!w->latent[node]) w->latent[node] = (short)(proc + 1);
        return;
    }
    node_down(w, node, p);
}

static void on_repaired(engine *e, void *arg) {
    (void)e;
    repair *r = arg;
    world *w = r->w;
    int node = r->node;
    w->repair_ev[node] = 0;
    if (cluster_node_state(w->c, node) != NODE_FAILED) return;
    if (r->replaced) {
        failures_node_replaced(w->f, node);        /* new hardware: every part is new */
    } else {
        /* Only the failed parts were replaced; one that failed during the
         * repair keeps the node out until its own replacement is in. */
        sim_time ready = failures_node_ready(w->f, node);
        if (ready > now_of(w)) {
            w->repair_ev[node] = engine_after(w->e, ready - now_of(w), on_repaired, r);
            return;
        }
    }
    cluster_repair(w->c, node);
    publish_failed(w);
    event(w, "cluster", "node_repaired", "node %d back in service", node);
    /* Scan for waiting jobs only when there are some: a 100K-job trace on
     * 100K GPUs repairs a node every few minutes. */
    for (int i = 0; i < w->n_jobs && w->n_waiting > 0; i++)
        if (w->jobs[i].ph == PH_WAITING) try_restart(&w->jobs[i]);
    for (int i = 0; i < w->n_jobs && w->n_shrunk > 0; i++) try_grow(&w->jobs[i]);
    dispatch(w);
}

/* ---- starting jobs ------------------------------------------------------ */

static void on_batch_end(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    j->ev_phase = 0;
    finish(j);
}

static int fabric_for(const world *w, int pool, fabric *f);

/* The step time where the job actually landed: a job spread over more leaf
 * switches than it needs sends its data-parallel traffic through the
 * (oversubscribed) spine. The collective model sees a group spanning more
 * than nodes_per_leaf nodes as crossing leaves, so the fabric is given
 * nodes / leaves-spanned nodes per leaf. */
static void place_training(job *j) {
    world *w = j->w;
    fabric f;
    if (j->n_nodes < 2 || j->r.shrinks || fabric_for(w, j->pool, &f) < 0) return;
    int L = f.nodes_per_leaf > 0 ? f.nodes_per_leaf : 1, leaves = 0;
    for (int i = 0; i < j->n_nodes; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = j->nodes[k] / L == j->nodes[i] / L;
        leaves += !seen;
    }
    j->r.leaf_groups = leaves;
    int eff = (j->n_nodes + leaves - 1) / leaves;
    if (eff < f.nodes_per_leaf) f.nodes_per_leaf = eff;
    train_result r;
    if (train_step(&j->t->model, &j->t->plan, &f, &r) == 0 && r.fits) {
        *j->perf = r;
        j->step_s = r.step_s;
    }
}

static void start(job *j) {
    world *w = j->w;
    int cap = j->n_nodes;
    int n = cluster_alloc(w->c, j->pool, j->r.gpus, j->nodes, cap);
    if (n < 0) return;                       /* dispatch checked; cannot happen */
    for (int i = 0; i < n; i++) hold_node(j, i, j->nodes[i]);
    if (j->r.kind == JOB_TRAINING) place_training(j);
    j->r.state = JOB_RUNNING;
    int again = j->r.start_s >= 0;
    if (!again) {
        j->r.start_s = now_s(w);
        j->r.queue_wait_s = sim_to_s(now_of(w) - sim_from_s(j->r.submit_s));   /* exact in ns */
    }
    event(w, j->r.name, "job_start", "%d GPUs on %d nodes of %s%s", j->r.gpus, n,
          cluster_pool_spec(w->c, j->pool)->name, again ? " (resumed)" : "");
    if (j->timeout_s > 0) j->ev_timeout = engine_after(w->e, sim_from_s(j->timeout_s), on_timeout, j);
    if (j->r.kind == JOB_TRAINING && again) {
        /* Resumed after a preemption: restart overhead and checkpoint load. */
        set_phase(j, PH_RESTART);
        j->ev_phase = engine_after(w->e, sim_from_s(w->s->failure_cfg.restart_s + j->load_s), on_restarted, j);
    } else if (j->r.kind == JOB_TRAINING) {
        training_start_running(j);
    } else {
        set_phase(j, PH_RUNNING);
        j->ev_phase = engine_after(w->e, sim_from_s(j->duration_s), on_batch_end, j);
    }
    /* A node that failed unseen while idle (no start health check): the
     * job crashes on it as soon as it starts. */
    for (int i = 0; i < j->n_nodes; i++) {
        int nd = j->nodes[i];
        if (nd < 0 || !w->latent[nd]) continue;
        const failure_proc *lp = failures_proc(w->f, w->latent[nd] - 1);
        w->latent[nd] = 0;
        event(w, "cluster", "failure", "node %d: %s found when job %s started on it", nd, lp->cause, j->r.name);
        interrupt(j, nd, lp, 0);
        node_down(w, nd, lp);
        if (j->ph == PH_QUEUED) break;        /* a batch job went back to the queue */
    }
}

static void holding_start(world *w, int k);

static void sched_start(void *ctx, int ji) {
    world *w = ctx;
    if (is_holding(w, ji)) {
        holding_start(w, ji - w->n_jobs);
        return;
    }
    job *j = &w->jobs[ji];
    start(j);
    j->started_once = 1;
}

static void autoscale(world *w);

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
    w->in_dispatch = 0;
    sim_time t = now_of(w);
    w->frag_gpu_s += w->frag_now * sim_to_s(t - w->frag_since);
    w->frag_since = t;
    w->frag_now = sched_fragmented_gpus(w->q);
    metrics_sample(w->bus, w->m_queue, t, sched_queued(w->q));
    metrics_sample(w->bus, w->m_frag, t, w->frag_now);
    if (w->cloud_pool >= 0) autoscale(w);
}

static void on_submit(engine *e, void *arg) {
    (void)e;
    job *j = arg;
    world *w = j->w;
    sched_job v = sched_view(j);
    sched_submit(w->q, &v);
    event(w, j->r.name, "job_submit", "%d GPUs", j->r.gpus);
    dispatch(w);
}

/* ---- cloud autoscaling ------------------------------------------------------
 * Scale up when the oldest queued job that could run on the cloud type has
 * waited scale-up-after: rent enough nodes for it (up to max-nodes), ready
 * after provision-time. A cloud node idle for idle-release goes back. Rented
 * node-seconds are billed at the node type's price. */

static void cloud_account(world *w) {
    sim_time t = now_of(w);
    w->cloud_node_s += cluster_cloud_up(w->c) * sim_to_s(t - w->cloud_since);
    w->cloud_since = t;
}

static void on_provisioned(engine *e, void *arg) {
    (void)e;
    world *w = arg;
    cloud_account(w);
    int n = cluster_cloud_rent(w->c, w->cloud_pool);
    w->cloud_pending--;
    if (n >= 0) {
        w->idle_since[n] = now_s(w);
        event(w, "cluster", "cloud_node_up", "node %d rented", n);
    }
    dispatch(w);
}

static void on_scale_check(engine *e, void *arg) {
    (void)e;
    world *w = arg;
    w->ev_scale = 0;
    autoscale(w);
}

static void on_release_check(engine *e, void *arg);

static void autoscale(world *w) {
    const scenario *s = w->s;
    int hid = sched_oldest(w->q, w->cloud_pool);
    if (hid < 0 || w->cloud_pending > 0) return;
    sched_job head_v = is_holding(w, hid) ? holding_view(w, hid - w->n_jobs) : sched_view(&w->jobs[hid]);
    const sched_job *head = &head_v;
    double waited = now_s(w) - head->submit_s;
    if (waited + 1e-6 < s->cloud_scale_up_after_s) {
        /* Look again when the head will have waited long enough (at least
         * 1 us on: never a re-check at the same instant). */
        double dt = s->cloud_scale_up_after_s - waited;
        if (!w->ev_scale) w->ev_scale = engine_after(w->e, sim_from_s(dt > 1e-6 ? dt : 1e-6), on_scale_check, w);
        return;
    }
    const node_spec *ns = cluster_pool_spec(w->c, w->cloud_pool);
    int short_gpus = head->gpus - cluster_pool_free_gpus(w->c, w->cloud_pool);
    int want = short_gpus > 0 ? (short_gpus + ns->gpus - 1) / ns->gpus : 0;
    int room = s->cloud_max_nodes - cluster_cloud_up(w->c) - w->cloud_pending;
    if (want > room) want = room;
    for (int i = 0; i < want; i++) {
        w->cloud_pending++;
        engine_after(w->e, sim_from_s(s->cloud_provision_s), on_provisioned, w);
    }
    if (want > 0) event(w, "cluster", "cloud_scale_up", "renting %d %s nodes for %s", want, ns->name, entry_name(w, hid));
}

static void on_release_check(engine *e, void *arg) {
    (void)e;
    release_arg *r = arg;
    world *w = r->w;
    int n = r->node;
    if (cluster_node_state(w->c, n) == NODE_UP && w->jobs_on_node[n] == 0 && w->svc_on_node[n] == 0 &&
        now_s(w) - w->idle_since[n] >= w->s->cloud_idle_release_s - 1e-6) {
        cloud_account(w);
        cluster_cloud_release(w->c, n);
        event(w, "cluster", "cloud_node_down", "node %d released after %.0f s idle", n, now_s(w) - w->idle_since[n]);
    }
}

/* ---- building ----------------------------------------------------------- */

static int fabric_for(const world *w, int pool, fabric *f) {
    const scenario *s = w->s;
    const node_spec *ns = cluster_pool_spec(w->c, pool);
    if (fabric_init(f, s->cat, ns, cluster_node_count(w->c)) < 0) return -1;
    f->topology = s->network.topology;
    f->oversubscription = s->network.oversubscription;
    f->mode = s->network.nic_mode;
    if (s->network.nodes_per_leaf > 0) f->nodes_per_leaf = s->network.nodes_per_leaf;
    return 0;
}

static int alloc_nodes(job *j) {
    const node_spec *ns = cluster_pool_spec(j->w->c, j->pool);
    j->n_nodes = j->r.gpus < ns->gpus ? 1 : (j->r.gpus + ns->gpus - 1) / ns->gpus;
    j->gpus_per_node = j->r.gpus < ns->gpus ? j->r.gpus : ns->gpus;
    j->nodes = malloc((size_t)j->n_nodes * sizeof *j->nodes);
    if (!j->nodes) return -1;
    for (int i = 0; i < j->n_nodes; i++) j->nodes[i] = -1;
    return 0;
}

/* Checkpoint size and costs from models/checkpoint, and the interval
 * (fixed, or Daly's optimum for the job's own failure rate). */
static int plan_checkpoints(world *w, job *j, const fabric *f, char *err, size_t errlen) {
    const sc_training *t = j->t;
    const scenario *s = w->s;
    j->inflight = -1;
    if (!t->checkpoint.present) return 0;
    const sc_storage *st = NULL;
    for (int i = 0; i < s->n_storage; i++)
        if (!strcmp(s->storage[i].name, t->storage)) st = &s->storage[i];
    if (!st && s->n_storage > 0) st = &s->storage[0];
    ckpt_size z;
    ckpt_io io;
    ckpt_io_params q;
    ckpt_io_params_default(&q);
    int layout = ckpt_layout_parse(t->checkpoint.layout), mode = ckpt_mode_parse(t->checkpoint.mode);
    ckpt_job cj = { &t->plan, f, st ? catalog_storage(s->cat, st->kind) : NULL, st ? st->bw_bytes_per_s : 0,
                    layout < 0 ? CKPT_SHARDED : (ckpt_layout)layout, mode < 0 ? CKPT_SYNC : (ckpt_mode)mode, 0,
                    t->checkpoint.streaming_gather };
    if (ckpt_job_size(&t->model, &t->plan, &z) < 0 || ckpt_io_time(&cj, &z, &q, &io) < 0) return 0;
    char why[512];
    if (ckpt_host_check(&cj, &io, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <checkpoint layout=\"rank0\">: %s", s->file, t->checkpoint.line, why);
        return -1;
    }
    if (io.stream_chunks > 0)
        snprintf(j->ckpt_note, sizeof j->ckpt_note, "; rank 0 streams the %.3g TB gather through %.3g TB of host memory "
                 "in %d chunks", io.written_bytes / 1e12, io.host_budget_bytes / 1e12, io.stream_chunks);
    j->r.checkpoint_size_bytes = z.total_bytes;
    j->r.checkpoint_write_s = io.write_s;
    j->r.checkpoint_stall_s = io.stall_s;
    j->stall_s = io.stall_s;
    j->background_s = io.background_s;
    j->load_s = io.load_s;
    double interval_s = t->checkpoint.interval_s;
    if (t->checkpoint.interval_auto) {
        double rate = w->f ? failures_rate_per_s(w->f, j->n_nodes) : 0;
        interval_s = rate > 0 ? ckpt_auto_interval_s(&io, 1.0 / rate) : 0;
    }
    j->r.checkpoint_interval_s = interval_s;
    j->ckpt_every = interval_s > 0 ? interval_s / j->step_s : 0;
    if (j->ckpt_every > 0 && j->ckpt_every < 1) j->ckpt_every = 1;     /* at most every step */
    j->next_ckpt = j->ckpt_every;
    return 0;
}

/* An input time of element ELEM (attribute ATTR) on line LINE must be a
 * clock value (engine_check_s). 0, or -1 with err set. */
static int input_time(const scenario *s, int line, const char *elem, const char *attr, double t_s, char *err,
                      size_t errlen) {
    char why[160];
    if (engine_check_s(t_s, why, sizeof why) == 0) return 0;
    snprintf(err, errlen, "%s:%d: <%s %s=\"%g s\">: %s %s", s->file, line, elem, attr, t_s, attr, why);
    return -1;
}

/* A rate whose mean gap, 1/rate, must be a clock value: rate="1e-300/s"
 * puts the first arrival 1e300 s away. 0, or -1 with err set. */
static int input_rate(const scenario *s, int line, const char *elem, double rate_per_s, char *err, size_t errlen) {
    char why[160];
    if (engine_check_s(1.0 / rate_per_s, why, sizeof why) == 0) return 0;
    snprintf(err, errlen, "%s:%d: <%s rate=\"%g/s\">: the mean time between arrivals, 1/rate = %g s, %s", s->file,
             line, elem, rate_per_s, 1.0 / rate_per_s, why);
    return -1;
}

/* A model's output that becomes a time (a step, a checkpoint write) must
 * be positive (or 0 when zero_ok) and a clock value; an infinite or NaN
 * one came from a catalog figure such as hbm-bw="1e-300B/s" and used to run
 * forever. 0, or -1 with err naming the job and the figures of its GPU,
 * NIC and storage. */
static int model_time(const scenario *s, const sc_training *t, const fabric *f, const char *what, double t_s,
                      int zero_ok, double storage_bw, char *err, size_t errlen) {
    char why[160];
    if ((t_s > 0 || (zero_ok && t_s == 0)) && engine_check_s(t_s, why, sizeof why) == 0) return 0;
    if (!(t_s > 0)) snprintf(why, sizeof why, "is not a positive finite time");
    t_s = isnan(t_s) ? fabs(t_s) : t_s;         /* "nan", not "-nan" */
    char st[64] = "";
    if (storage_bw > 0) snprintf(st, sizeof st, ", storage bandwidth %g B/s", storage_bw);
    snprintf(err, errlen,
             "%s:%d: <training name=\"%s\">: the model gives %s of %g s, which %s; check the catalog figures it "
             "used: GPU %s (hbm-bw=%g B/s, bf16-tflops=%g), NIC %s (bandwidth=%g B/s)%s",
             s->file, t->line, t->name, what, t_s, why, f->gpu ? f->gpu->name : "?",
             f->gpu ? f->gpu->hbm_bw_bytes_per_s : 0, f->gpu ? f->gpu->tflops[PREC_BF16] : 0,
             f->nic ? f->nic->name : "none", f->nic ? f->nic->bw_bytes_per_s : 0, st);
    return -1;
}

static int build_training(world *w, const sc_training *t, job *j, char *err, size_t errlen) {
    const scenario *s = w->s;
    j->t = t;
    j->pool = cluster_pool_of_type(w->c, t->node_type);
    fabric f;
    if (j->pool < 0 || fabric_for(w, j->pool, &f) < 0) {
        snprintf(err, errlen, "%s:%d: <training name=\"%s\">: node type %s has no GPU or NIC in the catalog",
                 s->file, t->line, t->name, t->node_type);
        return -1;
    }
    if (train_step(&t->model, &t->plan, &f, j->perf) < 0 || !j->perf->fits) {
        snprintf(err, errlen, "%s:%d: <training name=\"%s\">: %s", s->file, t->line, t->name, j->perf->why);
        return -1;
    }
    if (model_time(s, t, &f, "a step time", j->perf->step_s, 0, 0, err, errlen) < 0 ||
        (engine_check_s((double)t->steps * j->perf->step_s, NULL, 0) < 0 &&
         snprintf(err, errlen, "%s:%d: <training name=\"%s\">: %lld steps of %g s take %g s, beyond the simulated "
                  "clock's horizon of 100 years (%.4g s); give fewer steps or tokens", s->file, t->line, t->name,
                  (long long)t->steps, j->perf->step_s, (double)t->steps * j->perf->step_s, SIM_HORIZON_S) > 0) ||
        input_time(s, t->line, "training", "submit", t->submit_s, err, errlen) < 0 ||
        input_time(s, t->line, "training", "timeout", t->timeout_s, err, errlen) < 0 ||
        (t->checkpoint.present && !t->checkpoint.interval_auto &&
         input_time(s, t->checkpoint.line, "checkpoint", "interval", t->checkpoint.interval_s, err, errlen) < 0))
        return -1;
    j->r.kind = JOB_TRAINING;
    j->r.gpus = t->gpus;
    j->r.steps_total = t->steps;
    j->r.submit_s = t->submit_s;
    j->step_s = j->perf->step_s;
    j->r.name = t->name;
    j->r.queue = t->queue;
    j->queue = sched_queue_of(w->q, t->queue);
    j->priority = t->priority;
    j->timeout_s = t->timeout_s;
    j->line = t->line;
    if (alloc_nodes(j) < 0) {
        snprintf(err, errlen, "%s:%d: out of memory building the world", s->file, t->line);
        return -1;
    }
    if (plan_checkpoints(w, j, &f, err, errlen) < 0) return -1;
    double st_bw = 0;
    for (int i = 0; i < s->n_storage; i++)
        if (!strcmp(s->storage[i].name, t->storage) || (!t->storage[0] && i == 0)) st_bw = s->storage[i].bw_bytes_per_s;
    if (model_time(s, t, &f, "a checkpoint stall", j->stall_s, 1, st_bw, err, errlen) < 0 ||
        model_time(s, t, &f, "a background checkpoint write", j->background_s, 1, st_bw, err, errlen) < 0 ||
        model_time(s, t, &f, "a checkpoint load", j->load_s, 1, st_bw, err, errlen) < 0 ||
        model_time(s, t, &f, "a checkpoint interval", j->r.checkpoint_interval_s, 1, st_bw, err, errlen) < 0)
        return -1;
    return 0;
}

#define MAX_SIZES 256

/* Expand the scenario's microbenchmarks over their size sweeps and price
 * each case on the first node type's fabric. */
static int build_microbench(world *w) {
    const scenario *s = w->s;
    int n = 0;
    double sizes[MAX_SIZES];
    for (int i = 0; i < s->n_microbench; i++) {
        const sc_microbench *b = &s->microbench[i];
        n += (b->kind == MB_COLLECTIVE || b->kind == MB_COPY)
                 ? mb_sizes(b->min_bytes, b->max_bytes, b->factor, sizes, MAX_SIZES) : 1;
    }
    if (n == 0) return 0;
    w->mb = calloc((size_t)n, sizeof *w->mb);
    w->mb_pred = calloc((size_t)n, sizeof *w->mb_pred);
    w->mb_ok = calloc((size_t)n, sizeof *w->mb_ok);
    w->mb_meas = calloc((size_t)n, sizeof *w->mb_meas);
    w->mb_measured = calloc((size_t)n, sizeof *w->mb_measured);
    w->mb_note = calloc((size_t)n, sizeof *w->mb_note);
    if (!w->mb || !w->mb_pred || !w->mb_ok || !w->mb_meas || !w->mb_measured || !w->mb_note) return -1;

    fabric f;
    int have_fabric = cluster_pool_count(w->c) > 0 && fabric_for(w, 0, &f) == 0;
    mb_env env = { have_fabric ? &f : NULL, NULL, 0 };
    if (s->n_storage > 0) {
        env.storage = catalog_storage(s->cat, s->storage[0].kind);
        env.storage_bw_bytes_per_s = s->storage[0].bw_bytes_per_s;
    }
    for (int i = 0; i < s->n_microbench; i++) {
        const sc_microbench *b = &s->microbench[i];
        mb_case c = { 0 };
        c.precision = b->precision;
        int ns = 1;
        sizes[0] = b->size_bytes;
        switch (b->kind) {
        case MB_COLLECTIVE:
            c.kind = MBC_COLLECTIVE;
            c.op = b->op;
            c.ranks = b->ranks;
            ns = mb_sizes(b->min_bytes, b->max_bytes, b->factor, sizes, MAX_SIZES);
            break;
        case MB_GEMM:
            c.kind = MBC_GEMM;
            c.m = b->m;
            c.n = b->n;
            c.k = b->k;
            break;
        case MB_COPY:
            c.kind = MBC_COPY;
            c.copy = (copy_kind)copy_kind_parse(b->copy_kind);
            ns = mb_sizes(b->min_bytes, b->max_bytes, b->factor, sizes, MAX_SIZES);
            break;
        case MB_STORAGE_WRITE:
            c.kind = MBC_STORAGE;
            c.files = b->files;
            c.path = b->path;
            break;
        }
        for (int k = 0; k < ns; k++) {
            c.size_bytes = sizes[k];
            w->mb[w->n_mb] = c;
            w->mb_ok[w->n_mb] = mb_predict(&c, &env, &w->mb_pred[w->n_mb]) == 0;
            w->n_mb++;
        }
    }
    if (s->host_profile) world_microbench_use_host(w, s->host_profile);
    return 0;
}

void world_microbench_use_host(world *w, const host_profile *h) {
    if (!w->mb_host && !(w->mb_host = malloc(sizeof *w->mb_host))) return;
    *w->mb_host = *h;
    for (int i = 0; i < w->n_mb; i++) {
        w->mb_note[i][0] = 0;
        w->mb_ok[i] = host_predict(h, &w->mb[i], &w->mb_pred[i], w->mb_note[i], sizeof w->mb_note[i]) == 0;
    }
}

const host_profile *world_microbench_host(const world *w) { return w->mb_host; }

int world_microbench_set_measured(world *w, int i, const mb_measurement *m, const char *note) {
    if (i < 0 || i >= w->n_mb) return -1;
    w->mb_measured[i] = m != NULL;
    if (m) w->mb_meas[i] = *m;
    if (note) snprintf(w->mb_note[i], sizeof w->mb_note[i], "%s", note);
    return 0;
}

const mb_measurement *world_microbench_measured(const world *w, int i) {
    return (i >= 0 && i < w->n_mb && w->mb_measured[i]) ? &w->mb_meas[i] : NULL;
}

const char *world_microbench_note(const world *w, int i) { return (i >= 0 && i < w->n_mb) ? w->mb_note[i] : ""; }

void world_microbench_set_hardware(world *w, const mb_hardware *hw) {
    if (!w->mb_hw && !(w->mb_hw = malloc(sizeof *w->mb_hw))) return;
    *w->mb_hw = *hw;
}

const mb_hardware *world_microbench_hardware(const world *w) { return w->mb_hw; }

int world_microbench_count(const world *w) { return w->n_mb; }
const mb_case *world_microbench_case(const world *w, int i) { return (i >= 0 && i < w->n_mb) ? &w->mb[i] : NULL; }
const mb_prediction *world_microbench_prediction(const world *w, int i) {
    return (i >= 0 && i < w->n_mb && w->mb_ok[i]) ? &w->mb_pred[i] : NULL;
}

/* The scenario's failure processes: its own <failure> elements, expanded
 * profiles, with repair-time defaults from models/reliability. */
static int build_failures(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    if (s->n_failures == 0) return 0;
    rel_spec *spec = calloc((size_t)s->n_failures, sizeof *spec);
    if (!spec) return -1;
    for (int i = 0; i < s->n_failures; i++) {
        const sc_failure *sf = &s->failures[i];
        if (input_time(s, sf->line, "failure", "mttr", sf->mttr_s, err, errlen) < 0) {
            free(spec);
            return -2;
        }
        spec[i] = (rel_spec){ sf->component, sf->profile, sf->mtbf_s, sf->distribution, sf->shape,
                              sf->mttr_s, sf->cause };
    }
    char why[256];
    int n = rel_expand(spec, s->n_failures, NULL, 0, why, sizeof why);
    rel_process *rp = n > 0 ? calloc((size_t)n, sizeof *rp) : NULL;
    failure_proc *fp = n > 0 ? calloc((size_t)n, sizeof *fp) : NULL;
    w->fail_by_proc = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof *w->fail_by_proc);
    int rc = -1;
    if (n > 0 && (!rp || !fp || !w->fail_by_proc)) goto out;   /* out of memory, not bad input */
    if (n < 0 || rel_expand(spec, s->n_failures, rp, n, why, sizeof why) != n) {
        int bad = 0;            /* the element at fault, not always the first */
        while (bad < s->n_failures - 1 && rel_expand(&spec[bad], 1, NULL, 0, NULL, 0) >= 0) bad++;
        snprintf(err, errlen, "%s:%d: <failure>: %s", s->file, s->failures[bad].line, why);
        rc = -2;
        goto out;
    }
    if (!rp || !fp || !w->fail_by_proc) goto out;
    const node_spec *ns = cluster_pool_count(w->c) ? cluster_pool_spec(w->c, 0) : NULL;
    for (int i = 0; i < n; i++) {
        const rel_process *r = &rp[i];
        failure_proc *f = &fp[i];
        snprintf(f->component, sizeof f->component, "%s", rel_component_name(r->component));
        snprintf(f->cause, sizeof f->cause, "%s", r->cause);
        f->per_node = rel_instances_per_node(r->component, ns);
        f->mtbf_s = r->mtbf_s;
        f->weibull = r->distribution == REL_WEIBULL;
        f->shape = r->shape;
        f->mttr_s = r->mttr_s > 0 ? r->mttr_s : rel_mttr_default_s(r->component);
        f->detect = r->detection == REL_DETECT_WATCHDOG ? DETECT_HANG : DETECT_CRASH;
        f->needs_repair = r->needs_repair;
        f->age_s = r->needs_repair ? s->failure_cfg.fleet_age_s : 0;   /* software starts with the job */
    }
    w->f = failures_new(w->e, w->c, fp, n, s->seed, node_failed, w);
    rc = w->f ? 0 : -1;
out:
    free(spec);
    free(rp);
    free(fp);
    return rc;
}

/* ---- inference services --------------------------------------------------
 * A service's replica asks for GPUs the way a job does: its request (a
 * "holding") enters the scheduler's queue with the service's queue and
 * priority, under the id n_jobs + holding index. When the scheduler starts
 * it, the world takes a tp-GPU group of one pool (best fit inside a node,
 * whole nodes beyond one) and tells the service. A node failure under a
 * replica, or a preemption by a more important job, takes the GPUs back and
 * queues the request again; the service recomputes what the replica ran. */

enum { H_FREE, H_QUEUED, H_HELD };
typedef struct holding {
    int *nodes;
    int n, gpus_each, gpus;
    int state;                     /* H_FREE, H_QUEUED, H_HELD */
    int svc, tag;                  /* the service and its replica number */
    double since_s;                /* submit time of the current request */
} holding;
typedef struct svc_host { world *w; int index; int pool; int queue; serving *sv; } svc_host;

static int is_holding(const world *w, int id) { return id >= w->n_jobs; }

/* Name of a scheduler entry (a job, or a service replica) for events. */
static const char *entry_name(const world *w, int id) {
    if (id < w->n_jobs) return w->jobs[id].r.name;
    return w->s->inference[w->hold[id - w->n_jobs].svc].name;
}

static sched_job holding_view(const world *w, int k) {
    const holding *g = &w->hold[k];
    const svc_host *h = &w->svc[g->svc];
    const sc_inference *f = &w->s->inference[g->svc];
    /* A replica holds its GPUs until the service ends: no end for backfill. */
    sched_job v = { w->n_jobs + k, h->queue, f->priority, h->pool, g->gpus, g->since_s, 1e18, 0 };
    return v;
}

/* Where a running job (or a replica) holds GPUs, for the scheduler's
 * choice of victims: its UP nodes and the GPUs on each. */
static int sched_nodes(void *ctx, int ji, int *out, int cap, int *gpus_each) {
    world *w = ctx;
    const int *nodes;
    int n;
    if (is_holding(w, ji)) {
        const holding *g = &w->hold[ji - w->n_jobs];
        if (g->state != H_HELD) return 0;
        nodes = g->nodes;
        n = g->n;
        *gpus_each = g->gpus_each;
    } else {
        const job *j = &w->jobs[ji];
        nodes = j->nodes;
        n = j->n_nodes;
        *gpus_each = j->gpus_per_node;
    }
    int k = 0;
    for (int i = 0; i < n && k < cap; i++)
        if (nodes[i] >= 0) out[k++] = nodes[i];
    return k;
}

static int svc_acquire(void *ctx, int gpus, int tag, int *granted) {
    svc_host *h = ctx;
    world *w = h->w;
    int k = 0;
    while (k < w->n_hold && w->hold[k].state != H_FREE) k++;
    if (k == w->n_hold) {
        if (w->n_hold == w->cap_hold) {
            int cap = w->cap_hold ? w->cap_hold * 2 : 16;
            holding *p = realloc(w->hold, (size_t)cap * sizeof *p);
            if (!p) return -1;
            w->hold = p;
            w->cap_hold = cap;
        }
        w->hold[w->n_hold++] = (holding){ 0 };
    }
    holding *g = &w->hold[k];
    int per = cluster_pool_spec(w->c, h->pool)->gpus;
    int n = gpus <= per ? 1 : (gpus + per - 1) / per;
    if (g->n < n || !g->nodes) {
        int *p = realloc(g->nodes, (size_t)n * sizeof *p);
        if (!p) return -1;
        g->nodes = p;
    }
    g->n = n;
    g->gpus_each = gpus <= per ? gpus : per;
    g->gpus = gpus;
    g->svc = h->index;
    g->tag = tag;
    g->since_s = now_s(w);
    g->state = H_QUEUED;
    sched_job v = holding_view(w, k);
    sched_submit(w->q, &v);
    w->acquiring = k;                 /* granted during this dispatch: the caller is told by *granted */
    dispatch(w);
    w->acquiring = -1;
    *granted = g->state == H_HELD;
    return k;
}

/* The scheduler starts a replica's request: take the GPUs, start it. */
static void holding_start(world *w, int k) {
    holding *g = &w->hold[k];
    svc_host *h = &w->svc[g->svc];
    if (g->state != H_QUEUED) return;
    if (cluster_alloc(w->c, h->pool, g->gpus, g->nodes, g->n) < 0) return;   /* dispatch checked */
    for (int i = 0; i < g->n; i++) w->svc_on_node[g->nodes[i]]++;
    g->state = H_HELD;
    add_state(w, GS_SERVING, g->gpus);
    if (k != w->acquiring && h->sv) serving_granted(h->sv, g->tag);
}

/* GPUs a replica holds go back to the pool. */
static void holding_drop(world *w, int k) {
    holding *g = &w->hold[k];
    cluster_release(w->c, g->nodes, g->n, g->gpus_each);
    for (int i = 0; i < g->n; i++) w->svc_on_node[g->nodes[i]]--;
    sched_finished(w->q, w->n_jobs + k);
    add_state(w, GS_SERVING, -g->gpus);
}

static void svc_release(void *ctx, int k) {
    svc_host *h = ctx;
    world *w = h->w;
    holding *g = &w->hold[k];
    if (g->state == H_QUEUED) {
        sched_withdraw(w->q, w->n_jobs + k);
    } else if (g->state == H_HELD) {
        holding_drop(w, k);
    }
    g->state = H_FREE;
    dispatch(w);
}

/* A replica loses its GPUs (why: a failure, a preemption) and asks again. */
static void holding_lost(world *w, int k, const char *why) {
    holding *g = &w->hold[k];
    if (g->state != H_HELD) return;
    holding_drop(w, k);
    g->state = H_QUEUED;
    g->since_s = now_s(w);
    sched_job v = holding_view(w, k);
    sched_submit(w->q, &v);
    serving_replica_lost(w->svc[g->svc].sv, g->tag, why);   /* may withdraw it (svc_release) */
}

/* A failure on a node hits the replicas placed on it. */
static void hit_replicas(world *w, int node, const failure_proc *p) {
    if (w->svc_on_node[node] <= 0) return;
    char why[160];
    snprintf(why, sizeof why, "node %d failed: %s (%s)", node, p->cause, p->component);
    for (int k = 0; k < w->n_hold && w->svc_on_node[node] > 0; k++) {
        holding *g = &w->hold[k];
        if (g->state != H_HELD) continue;
        for (int i = 0; i < g->n; i++)
            if (g->nodes[i] == node) {
                holding_lost(w, k, why);
                break;
            }
    }
}

static void svc_finished(void *ctx) {
    svc_host *h = ctx;
    world *w = h->w;
    if (--w->unfinished == 0) engine_stop(w->e);
}

/* Services run on the pool named by node-type, else the first pool whose
 * GPU is the service's gpu (or the first pool). */
static int build_services(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    if (s->n_inference == 0) return 0;
    w->svc = calloc((size_t)s->n_inference, sizeof *w->svc);
    if (!w->svc) {
        snprintf(err, errlen, "%s:0: out of memory building the services", s->file);
        return -1;
    }
    for (int i = 0; i < s->n_inference; i++) {
        const sc_inference *f = &s->inference[i];
        int pool = -1;
        if (f->node_type[0]) pool = cluster_pool_of_type(w->c, f->node_type);
        for (int p = 0; p < cluster_pool_count(w->c) && pool < 0 && !f->node_type[0]; p++)
            if (!f->gpu[0] || !strcmp(cluster_pool_spec(w->c, p)->gpu, f->gpu)) pool = p;
        if (pool < 0) {
            snprintf(err, errlen, "%s:%d: <inference name=\"%s\">: the cluster has no <nodes> %s %s", s->file, f->line,
                     f->name, f->node_type[0] ? "of type" : "with GPU", f->node_type[0] ? f->node_type : f->gpu);
            return -1;
        }
        svc_host *h = &w->svc[i];
        h->w = w;
        h->index = i;
        h->pool = pool;
        h->queue = sched_queue_of(w->q, f->queue);
        serving_host host = { h, svc_acquire, svc_release, svc_finished };
        w->unfinished++;
        h->sv = serving_new(w->e, w->bus, s, f, cluster_pool_spec(w->c, pool), &host, err, errlen);
        if (!h->sv) return -1;
        w->n_svc++;
    }
    return 0;
}

int world_service_count(const world *w) { return w->n_svc; }

const service_result *world_service(const world *w, int i) {
    return (i >= 0 && i < w->n_svc) ? serving_result(w->svc[i].sv) : NULL;
}

const serving *world_serving(const world *w, int i) {
    return (i >= 0 && i < w->n_svc) ? w->svc[i].sv : NULL;
}

/* The models and the trace reader bound times by NUMERICS_MAX_TIME_S; the
 * engine runs to SIM_HORIZON_S: one number. */
_Static_assert((long long)NUMERICS_MAX_TIME_S == (long long)SIM_HORIZON_S, "the time bound is the clock's horizon");

/* Generated job names live in chunks freed with the world: a job's name
 * is a pointer, so ten million jobs do not each carry a fixed buffer. */
typedef struct name_chunk {
    struct name_chunk *next;
    size_t used, cap;
    char text[];
} name_chunk;

/* A copy of "prefix-k" owned by the world; NULL when out of memory. */
static const char *numbered_name(world *w, const char *prefix, int k) {
    int n = snprintf(NULL, 0, "%s-%d", prefix, k) + 1;
    name_chunk *c = w->names;
    if (!c || c->cap - c->used < (size_t)n) {
        size_t cap = (size_t)n > 65536 ? (size_t)n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = w->names;
        c->used = 0;
        c->cap = cap;
        w->names = c;
    }
    char *z = c->text + c->used;
    snprintf(z, (size_t)n, "%s-%d", prefix, k);
    c->used += (size_t)n;
    return z;
}

/* The next job of w->jobs as a batch job (kind, GPUs, queue, priority,
 * line); its name, submit time and duration are the caller's to set.
 * Returns it, or NULL when out of memory (w->n_jobs then counts it, and
 * world_free frees what it holds). */
static job *add_batch_job(world *w, int gpus, const char *queue, int priority, double timeout_s, int line) {
    job *j = &w->jobs[w->n_jobs];
    j->w = w;
    j->index = w->n_jobs++;
    j->r.kind = JOB_BATCH;
    j->r.gpus = gpus;
    j->pool = 0;
    j->r.queue = queue;
    j->queue = sched_queue_of(w->q, queue);
    j->priority = priority;
    j->timeout_s = timeout_s;
    j->line = line;
    return alloc_nodes(j) < 0 ? NULL : j;
}

/* The trace's batch jobs (scenario.trace_jobs), in file order. */
static int add_trace_jobs(world *w) {
    const scenario *s = w->s;
    for (int i = 0; i < s->n_trace_jobs; i++) {
        const sc_trace_job *t = &s->trace_jobs[i];
        const char *queue = t->queue >= 0 ? s->queues[t->queue].name : "default";
        job *j = add_batch_job(w, t->gpus, queue, t->priority, 0, t->line);
        if (!j) return -1;
        j->r.name = s->trace_names + t->name;
        j->r.submit_s = t->submit_s;
        j->duration_s = t->duration_s;
    }
    return 0;
}

/* The jobs of <jobs> group i: arrivals, durations and sizes drawn from
 * the group's own streams. 0; -1 when out of memory; -2 with err set when
 * one of its times is not a clock value. */
static int add_group_jobs(world *w, int i, char *err, size_t errlen) {
    const scenario *s = w->s;
    const sc_jobs *g = &s->jobs[i];
    rng *ra = rng_new(s->seed, "jobs/arrivals", (uint64_t)i);
    rng *rd = rng_new(s->seed, "jobs/durations", (uint64_t)i);
    rng *rs = rng_new(s->seed, "jobs/sizes", (uint64_t)i);
    rng_discrete *sizes = g->n_sizes ? rng_discrete_new(g->size_weights, (size_t)g->n_sizes) : NULL;
    int rc = !ra || !rd || !rs || (g->n_sizes && !sizes) ? -1 : 0;
    if (rc == 0 && (input_time(s, g->line, "jobs", "submit", g->submit_s, err, errlen) < 0 ||
                    input_time(s, g->line, "jobs", "duration", g->duration_s, err, errlen) < 0 ||
                    input_time(s, g->line, "jobs", "timeout", g->timeout_s, err, errlen) < 0 ||
                    (g->rate_per_s > 0 && input_rate(s, g->line, "jobs", g->rate_per_s, err, errlen) < 0)))
        rc = -2;
    double t = g->submit_s;
    for (int k = 0; k < g->count && rc == 0; k++) {
        int gpus = sizes ? g->sizes[rng_discrete_draw(rs, sizes)] : g->gpus;
        job *j = add_batch_job(w, gpus, g->queue, g->priority, g->timeout_s, g->line);
        if (!j || !(j->r.name = numbered_name(w, g->name, k))) {
            rc = -1;
            break;
        }
        if (!strcmp(g->arrivals, "poisson")) t += rng_exponential(ra, 1.0 / g->rate_per_s);
        else if (g->rate_per_s > 0) t = g->submit_s + k / g->rate_per_s;
        j->r.submit_s = t;
        if (!strcmp(g->duration_distribution, "exponential"))
            j->duration_s = rng_exponential(rd, g->duration_s);
        else if (!strcmp(g->duration_distribution, "lognormal"))
            j->duration_s = rng_lognormal_mean_cv(rd, g->duration_s, 1.0);
        else
            j->duration_s = g->duration_s;
    }
    rng_free(ra);
    rng_free(rd);
    rng_free(rs);
    rng_discrete_free(sizes);
    return rc;
}

world *world_new(const scenario *s, metric_bus *bus, char *err, size_t errlen) {
    numerics_gsl_install();             /* a GSL error is a value, never an abort */
    world *w = calloc(1, sizeof *w);
    if (!w) goto oom;
    w->s = s;
    w->bus = bus;
    w->acquiring = -1;
    w->e = engine_new();
    w->c = cluster_new(s);
    w->r_health = rng_new(s->seed, "health-checks", 0);
    if (!w->e || !w->c || !w->r_health) goto oom;
    int nodes = cluster_node_count(w->c);
    w->job_of_node = malloc(((size_t)nodes + 1) * sizeof *w->job_of_node);
    w->jobs_on_node = calloc((size_t)nodes + 1, sizeof *w->jobs_on_node);
    w->svc_on_node = calloc((size_t)nodes + 1, sizeof *w->svc_on_node);
    w->latent = calloc((size_t)nodes + 1, sizeof *w->latent);
    w->repairs = calloc((size_t)nodes + 1, sizeof *w->repairs);
    w->repair_ev = calloc((size_t)nodes + 1, sizeof *w->repair_ev);
    if (!w->jobs_on_node || !w->svc_on_node || !w->repairs || !w->repair_ev) goto oom;
    for (int i = 0; i < nodes; i++) {
        w->repairs[i].w = w;
        w->repairs[i].node = i;
    }
    w->idle_since = calloc((size_t)nodes + 1, sizeof *w->idle_since);
    w->release_args = calloc((size_t)nodes + 1, sizeof *w->release_args);
    if (!w->idle_since || !w->release_args) goto oom;
    for (int i = 0; i < nodes; i++) {
        w->release_args[i].w = w;
        w->release_args[i].node = i;
    }
    cluster_set_spread(w->c, !strcmp(s->sched_placement, "spread"), s->network.nodes_per_leaf);
    sched_ops ops = { w, sched_start, preempt_job, sched_nodes };
    w->q = sched_new(s, w->c, &ops);
    if (!w->q) goto oom;
    w->cloud_pool = s->has_cloud ? cluster_pool_of_type(w->c, s->cloud_node_type) : -1;
    w->lemon_since = calloc((size_t)nodes + 1, sizeof *w->lemon_since);
    w->lemon_count = calloc((size_t)nodes + 1, sizeof *w->lemon_count);
    if (!w->job_of_node || !w->latent || !w->lemon_since || !w->lemon_count) goto oom;
    for (int i = 0; i < nodes; i++) w->job_of_node[i] = -1;
    int frc = build_failures(w, err, errlen);
    if (frc == -2) {
        world_free(w);
        return NULL;
    }
    if (frc < 0) goto oom;

    long long n = (long long)s->n_training + s->n_trace_jobs;
    for (int i = 0; i < s->n_jobs; i++) n += s->jobs[i].count;
    if (n >= INT_MAX) {
        snprintf(err, errlen, "%s:0: %lld jobs; at most %d", s->file, n, INT_MAX - 1);
        world_free(w);
        return NULL;
    }
    w->jobs = calloc((size_t)n + 1, sizeof *w->jobs);
    w->perf = calloc((size_t)s->n_training + 1, sizeof *w->perf);
    if (!w->jobs || !w->perf) goto oom;

    for (int i = 0; i < s->n_training; i++) {
        job *j = &w->jobs[w->n_jobs];
        j->w = w;
        j->index = w->n_jobs;
        j->perf = &w->perf[i];
        j->r.perf = j->perf;
        if (build_training(w, &s->training[i], j, err, errlen) < 0) {
            free(j->nodes);                 /* not yet counted in n_jobs: world_free misses it */
            world_free(w);
            return NULL;
        }
        w->n_jobs++;
    }

    /* Generic batch jobs: arrivals and durations from their own streams;
     * the trace's batch jobs where its <trace> stands among the groups. */
    for (int i = 0; i <= s->n_jobs; i++) {
        if (i == s->trace_after && add_trace_jobs(w) < 0) goto oom;
        int grc = i < s->n_jobs ? add_group_jobs(w, i, err, errlen) : 0;
        if (grc == -2) {
            world_free(w);
            return NULL;
        }
        if (grc < 0) goto oom;
    }

    static const char *state_names[GS_COUNT] = { "gpus_training", "gpus_checkpoint", "gpus_restarting",
                                                 "gpus_batch", "gpus_serving" };
    for (int i = 0; i < GS_COUNT; i++) w->m_state[i] = metrics_register(bus, "cluster", state_names[i]);
    w->m_queue = metrics_register(bus, "cluster", "queue_length");
    w->m_failed = metrics_register(bus, "cluster", "gpus_failed");
    w->m_frag = metrics_register(bus, "cluster", "gpus_fragmented");
    for (int i = 0; i < w->n_jobs; i++) {
        job *j = &w->jobs[i];
        j->ph = PH_QUEUED;
        j->r.state = JOB_PENDING;
        j->r.start_s = j->r.end_s = j->r.queue_wait_s = -1;
        int capacity = cluster_pool_capacity(w->c, j->pool);
        int spare_gpus = j->pool == 0 ? s->spares_warm * cluster_pool_spec(w->c, 0)->gpus : 0;
        if (j->r.gpus > capacity - spare_gpus) {
            snprintf(err, errlen, "%s:%d: job %s needs %d GPUs, the cluster has %d of its node type%s%s",
                     s->file, j->line, j->r.name, j->r.gpus, capacity - spare_gpus,
                     spare_gpus ? " once its warm spares are held back" : "",
                     w->cloud_pool == j->pool ? " (cloud nodes included)" : "");
            world_free(w);
            return NULL;
        }
        if (j->r.kind == JOB_TRAINING) j->m_progress = metrics_register(bus, j->r.name, "progress");
        if (!engine_schedule(w->e, sim_from_s(j->r.submit_s), on_submit, j)) goto oom;
    }
    w->unfinished = w->n_jobs;
    if (build_microbench(w) < 0) goto oom;
    if (build_services(w, err, errlen) < 0) {
        world_free(w);
        return NULL;
    }
    return w;
oom:
    snprintf(err, errlen, "%s:0: out of memory building the world", s->file);
    world_free(w);
    return NULL;
}

void world_free(world *w) {
    if (!w) return;
    for (int i = 0; i < w->n_svc; i++) serving_free(w->svc[i].sv);
    free(w->svc);
    for (int i = 0; i < w->n_hold; i++) free(w->hold[i].nodes);
    free(w->hold);
    failures_free(w->f);
    engine_free(w->e);
    cluster_free(w->c);
    rng_free(w->r_health);
    free(w->jobs_on_node);
    free(w->svc_on_node);
    free(w->repairs);
    free(w->repair_ev);
    for (int i = 0; i < w->n_jobs; i++) free(w->jobs[i].nodes);
    free(w->jobs);
    free(w->perf);
    while (w->names) {
        name_chunk *c = w->names;
        w->names = c->next;
        free(c);
    }
    sched_free(w->q);
    free(w->idle_since);
    free(w->release_args);
    free(w->job_of_node);
    free(w->latent);
    free(w->lemon_since);
    free(w->lemon_count);
    free(w->fail_by_proc);
    free(w->mb);
    free(w->mb_pred);
    free(w->mb_ok);
    free(w->mb_meas);
    free(w->mb_measured);
    free(w->mb_note);
    free(w->mb_host);
    free(w->mb_hw);
    free(w);
}

engine *world_engine(world *w) { return w->e; }

int world_run(world *w, double until_s) {
    double limit = w->s->duration_s > 0 ? w->s->duration_s : 0;
    if (until_s > 0 && (limit == 0 || until_s < limit)) limit = until_s;
    if (w->unfinished > 0) engine_run(w->e, limit > 0 ? sim_from_s(limit) : SIM_FOREVER);
    world_finish(w);
    return 0;
}

int world_job_count(const world *w) { return w->n_jobs; }

const job_result *world_job(const world *w, int i) {
    return (i >= 0 && i < w->n_jobs) ? &w->jobs[i].r : NULL;
}

double world_job_gpu_hours(const world *w, int i) {
    return (i >= 0 && i < w->n_jobs) ? w->jobs[i].gpu_s / 3600 : 0;
}

double world_job_cost_usd(const world *w, int i) {
    if (i < 0 || i >= w->n_jobs) return 0;
    const node_spec *ns = cluster_pool_spec(w->c, w->jobs[i].pool);
    return world_job_gpu_hours(w, i) * cost_price_per_gpu_hour(ns, ns ? catalog_gpu(w->s->cat, ns->gpu) : NULL);
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
    /* Cost, energy and CO2 (models/cost.h). Every node is provisioned for
     * the whole run (spares and failed nodes count as idle). GPU states are
     * integrated for the whole cluster: each <nodes> entry gets its share by
     * GPU count, exact with one node type. */
    const sc_cost *sc = &w->s->cost;
    cost_params cp = { .simulated_s = t.simulated_s, .pue = sc->pue, .carbon_kg_per_kwh = sc->carbon_kg_per_kwh,
                       .electricity_usd_per_kwh = sc->electricity_usd_per_kwh, .owned = sc->owned };
    int rc = cost_init(&t.cost, &cp);
    for (int i = 0; i < w->s->n_nodes && rc == 0; i++) {
        const node_spec *ns = scenario_node_spec(w->s, i);
        const gpu_spec *g = catalog_gpu(w->s->cat, ns->gpu);
        double share = t.gpus > 0 ? onprem * w->s->nodes[i].count * ns->gpus / t.gpus : 0;
        cost_pool p = { .gpus_per_node = ns->gpus, .node_s = w->s->nodes[i].count * t.simulated_s,
                        .gpu_idle_w = g ? g->idle_w : 0, .gpu_tdp_w = g ? g->tdp_w : 0,
                        .node_overhead_w = ns->overhead_w,
                        .price_per_gpu_hour_usd = cost_price_per_gpu_hour(ns, g) };
        p.gpu_state_s[COST_TRAINING] = share * t.gpu_training_s;
        p.gpu_state_s[COST_CHECKPOINT] = share * t.gpu_checkpoint_s;
        p.gpu_state_s[COST_RESTARTING] = share * t.gpu_restarting_s;
        p.gpu_state_s[COST_BATCH] = share * t.gpu_batch_s;
        p.gpu_state_s[COST_SERVING_PREFILL] = share * t.gpu_serving_prefill_s;
        p.gpu_state_s[COST_SERVING_DECODE] = share * t.gpu_serving_decode_s;
        p.gpu_state_s[COST_SERVING_LOADING] = share * t.gpu_serving_loading_s;
        p.gpu_state_s[COST_SERVING_IDLE] = share * t.gpu_serving_idle_s;
        rc = cost_add_pool(&t.cost, &p);
    }
    if (cloud_ns && t.cloud_node_hours > 0 && rc == 0) {
        const gpu_spec *g = catalog_gpu(w->s->cat, cloud_ns->gpu);
        cost_pool p = { .gpus_per_node = cloud_ns->gpus, .node_s = t.cloud_node_hours * 3600,
                        .gpu_idle_w = g ? g->idle_w : 0, .gpu_tdp_w = g ? g->tdp_w : 0,
                        .node_overhead_w = cloud_ns->overhead_w,
                        .price_per_gpu_hour_usd = cost_price_per_gpu_hour(cloud_ns, g), .cloud_burst = 1 };
        p.gpu_state_s[COST_TRAINING] = (1 - onprem) * t.gpu_training_s;
        p.gpu_state_s[COST_CHECKPOINT] = (1 - onprem) * t.gpu_checkpoint_s;
        p.gpu_state_s[COST_RESTARTING] = (1 - onprem) * t.gpu_restarting_s;
        p.gpu_state_s[COST_BATCH] = (1 - onprem) * t.gpu_batch_s;
        p.gpu_state_s[COST_SERVING_PREFILL] = (1 - onprem) * t.gpu_serving_prefill_s;
        p.gpu_state_s[COST_SERVING_DECODE] = (1 - onprem) * t.gpu_serving_decode_s;
        p.gpu_state_s[COST_SERVING_LOADING] = (1 - onprem) * t.gpu_serving_loading_s;
        p.gpu_state_s[COST_SERVING_IDLE] = (1 - onprem) * t.gpu_serving_idle_s;
        rc = cost_add_pool(&t.cost, &p);
    }
    for (int i = 0; i < w->s->n_storage && rc == 0; i++) {
        const storage_spec *k = catalog_storage(w->s->cat, w->s->storage[i].kind);
        cost_storage st = { .capacity_bytes = w->s->storage[i].capacity_bytes,
                            .price_per_tb_month_usd = k ? k->price_per_tb_month_usd : 0, .held_s = t.simulated_s };
        rc = cost_add_storage(&t.cost, &st);
    }
    if (rc < 0)   /* a catalog override the model cannot price (e.g. tdp below idle): unknown */
        t.cost.cost_usd = t.cost.energy_kwh = t.cost.co2_kg = NAN;
    t.cost_usd = t.cost.cost_usd;
    t.failures = w->n_fail_total;
    t.fragmented_gpu_hours = (w->frag_gpu_s + w->frag_now * sim_to_s(engine_now(w->e) - w->frag_since)) / 3600;
    t.cloud_cost_usd = t.cost.cloud_usd;
    t.nodes_drained = w->drained;
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
        if (j->r.start_s < 0) {
            if (j->r.submit_s <= sim) r.waiting++;       /* submitted, never started */
            continue;
        }
        double end = j->r.end_s >= 0 ? j->r.end_s : sim;
        r.gpu_hours += j->gpu_s / 3600;
        if (waits) waits[r.started] = j->r.queue_wait_s;
        r.mean_wait_s += j->r.queue_wait_s;
        /* Slowdown: time from submission to the end (or now) over the time
         * it actually held GPUs (preempted stretches count as waiting). */
        if (j->held_s > 0) slow += (end - j->r.submit_s) / j->held_s;
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

/* ==== live control: for the dashboard =======================================
 * The dashboard (tui/) runs the world in slices of simulated time, reads
 * per-node and per-job views, and changes the world only through these
 * commands. A run driven in slices dispatches the same events in the same
 * order as world_run(): the slices only choose where the clock pauses, and
 * nothing is scheduled from outside a handler except by the commands below.
 */

static sim_time live_limit(const world *w) {
    return w->s->duration_s > 0 ? sim_from_s(w->s->duration_s) : SIM_FOREVER;
}

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
    for (int i = 0; i < w->n_jobs; i++) {
        job *j = &w->jobs[i];
        if (j->ph == PH_QUEUED || j->ph == PH_DONE) continue;
        if (j->r.kind == JOB_TRAINING) commit_progress(j);
        phase ph = j->ph;
        set_phase(j, ph);               /* account the current phase up to now */
        if (ph == PH_RUNNING) j->run_since = now_of(w);
        j->r.time.kept_s = j->run_s - j->r.time.redone_s;
    }
    for (int i = 0; i < w->n_svc; i++) serving_close(w->svc[i].sv);
    integrate(w);
    metrics_close(w->bus, now_of(w));
    w->closed = 1;
}

int world_inject_failure(world *w, int node) {
    if (w->closed || node < 0 || node >= cluster_node_count(w->c)) return -1;
    node_state st = cluster_node_state(w->c, node);
    if (st != NODE_UP && st != NODE_SPARE) return -1;
    failure_proc p = { "node", "injected", 1, 0, 0, 0, rel_mttr_default_s(REL_NODE), DETECT_CRASH, 1, 0 };
    w->n_fail_total++;
    w->injected++;
    int used = w->jobs_on_node[node] > 0 || w->svc_on_node[node] > 0;
    event(w, "cluster", "failure", "node %d: %s (%s)%s", node, p.cause, p.component, used ? "" : " on an unused node");
    hit_jobs(w, node, &p, 0);
    hit_replicas(w, node, &p);
    w->latent[node] = 0;                 /* whatever was hidden goes to repair too */
    node_down(w, node, &p);
    return 0;
}

int world_drain(world *w, int node, int on) {
    if (w->closed || node < 0 || node >= cluster_node_count(w->c)) return -1;
    node_state st = cluster_node_state(w->c, node);
    if (on) {
        if (st == NODE_DRAINED || st == NODE_OFF) return -1;
        /* Out of service first, so jobs moved off it cannot land on it. */
        cluster_drain(w->c, node);
        failure_proc p = { "node", "drained", 1, 0, 0, 0, 0, DETECT_CRASH, 1, 0 };
        hit_jobs(w, node, &p, 1);
        hit_replicas(w, node, &p);
        publish_failed(w);
        event(w, "cluster", "node_drained", "node %d: by the operator", node);
        return 0;
    }
    if (st != NODE_DRAINED || cluster_undrain(w->c, node) < 0) return -1;
    w->latent[node] = 0;
    publish_failed(w);
    event(w, "cluster", "node_undrained", "node %d back in service", node);
    for (int i = 0; i < w->n_jobs; i++)
        if (w->jobs[i].ph == PH_WAITING) try_restart(&w->jobs[i]);
    dispatch(w);
    return 0;
}

const char *world_activity_name(world_activity a) {
    static const char *z[] = { "idle", "training", "batch", "serving", "checkpointing", "restarting",
                               "failed", "repairing", "spare", "drained", "off" };
    return (a >= 0 && a < WA_COUNT) ? z[a] : "?";
}

int world_node_count(const world *w) { return cluster_node_count(w->c); }

int world_nodes_per_leaf(const world *w) {
    fabric f;
    if (cluster_pool_count(w->c) == 0 || fabric_for(w, 0, &f) < 0) return 0;
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
        switch (cluster_node_state(w->c, i)) {
        case NODE_FAILED: v->activity = w->repair_ev[i] ? WA_REPAIRING : WA_FAILED; continue;
        case NODE_SPARE: v->activity = WA_SPARE; continue;
        case NODE_DRAINED: v->activity = WA_DRAINED; continue;
        case NODE_OFF: v->activity = WA_OFF; continue;
        case NODE_UP: break;
        }
        v->activity = w->latent[i] ? WA_FAILED : WA_IDLE;
        if (w->jobs_on_node[i] <= 0) continue;
        v->job = w->job_of_node[i];
        const job *j = v->job >= 0 ? &w->jobs[v->job] : NULL;
        if (!j || j->r.kind == JOB_BATCH) v->activity = WA_BATCH;
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

int world_job_view(const world *w, int i, world_job_live *v) {
    if (i < 0 || i >= w->n_jobs) return -1;
    const job *j = &w->jobs[i];
    static const char *ph[] = { "queued", "running", "checkpoint", "down", "waiting", "restart", "done" };
    double now = now_s(w);
    v->phase = ph[j->ph];
    v->step_s = j->r.kind == JOB_TRAINING ? j->step_s : 0;
    v->eta_s = -1;
    v->ettr = -1;
    if (j->r.kind == JOB_TRAINING) {
        double total = (double)j->r.steps_total;
        double p = progress_now(j);
        v->progress = total > 0 ? p / total : 0;
        if (j->ph == PH_DONE) v->eta_s = 0;
        else if (j->ph != PH_QUEUED) v->eta_s = (total - p) * j->step_s;
        if (j->r.start_s >= 0) {
            double end = j->r.end_s >= 0 ? j->r.end_s : now;
            double run = j->run_s + (j->ph == PH_RUNNING ? now - sim_to_s(j->ph_since) : 0);
            double kept = run - j->r.time.redone_s;
            if (j->ph == PH_DOWN) kept -= (j->fail_progress - j->durable) * j->step_s;   /* about to be redone */
            v->ettr = end - j->r.start_s > 0 ? kept / (end - j->r.start_s) : 1;
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
