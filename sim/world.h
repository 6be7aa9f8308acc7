/*
 * world: the simulated cluster built from a scenario, and its results.
 *
 * The world owns the engine, the node pool and the jobs. Entities publish
 * what they do on the metric bus; sinks (reports/) turn that into the JSON
 * summary, the results store and the dashboard. Job-level fidelity: a
 * training job advances in segments of whole steps whose duration comes from
 * models/training (one event per segment, not per step), so a 54-day
 * 16K-GPU run is a few thousand events.
 */
/*
 * What the world publishes on the metric bus (names are stable: the results
 * store and the dashboard read them):
 *   samples, entity "cluster": gpus_training, gpus_checkpoint,
 *     gpus_restarting, gpus_batch (GPUs held by jobs in each state),
 *     gpus_failed (GPUs on failed or drained nodes), queue_length;
 *     entity <job name>: progress (0..1).
 *   events (entity, kind): <job> job_submit, job_start, job_end,
 *     checkpoint_start, checkpoint_end, job_down, job_restart, job_waiting,
 *     job_shrink, node_replaced; "cluster" failure, node_repaired,
 *     node_drained. A failure's detail reads "node N: <cause> (<component>)".
 * A sample is published when the value changes; idle GPUs are the cluster's
 * GPUs minus the states above.
 */
#ifndef CT_WORLD_H
#define CT_WORLD_H

#include <stdint.h>

#include "models/cost.h"
#include "scenarios/scenario.h"
#include "sim/benchset.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/serving.h"
#include "sim/world_types.h"

typedef struct world_totals {
    int gpus, nodes;
    double simulated_s;
    double gpu_busy_s;                 /* integral of GPUs held by jobs over time (GPU-seconds) */
    double gpu_training_s, gpu_checkpoint_s, gpu_restarting_s, gpu_batch_s;
    double gpu_serving_s;              /* held by inference replicas, and of it: */
    double gpu_serving_prefill_s, gpu_serving_decode_s, gpu_serving_loading_s, gpu_serving_idle_s;
    /* Productive GPU-seconds: training steps kept (not lost and redone),
     * batch runs not cut short (by a failure, a drain, a preemption or a
     * time limit; runs still going at the end count), serving replicas
     * computing (prefill and decode). gpu_busy_s counts allocation. */
    double gpu_productive_s;
    double gpu_redone_s;               /* training GPU-seconds lost and done again */
    double gpu_batch_lost_s;           /* batch GPU-seconds of runs cut short */
    double gpu_hours;                  /* provisioned GPU-hours */
    double cost_usd;                   /* cost.cost_usd: the cost model's total */
    cost_result cost;                  /* money, energy and CO2 (models/cost.h) */
    uint64_t events;
    double fragmented_gpu_hours;       /* free GPUs no queued job could use, integrated */
    double cloud_node_hours, cloud_cost_usd;   /* rented cloud nodes (<cloud>) */
    int failures;                      /* component failures, all nodes */
    int nodes_drained;                 /* lemon nodes taken out of service */
    int nodes_unavailable_at_start;    /* <unavailable> nodes out of service at t = 0 */
    int nodes_draining_at_start;       /* <unavailable state="draining"> nodes at t = 0 */
} world_totals;

/* A replay of a live cluster's history (the trace's actual_start column):
 * the simulated starts against the real scheduler's, over the trace jobs
 * that have both. */
typedef struct world_replay {
    int jobs;
    double wait_error_median_s;        /* |simulated start - actual start| (= the wait's error): median */
    double wait_error_p90_s;           /* and 90th percentile (nearest rank); NAN with no jobs */
    double start_order_kendall_tau;    /* Kendall's tau-b of the two start orders; NAN below 2 jobs */
} world_replay;
world_replay world_get_replay(const world *w);

/* Build the world for a loaded scenario. The scenario must outlive the
 * world. Returns NULL with err set ("file:line: ..." for a plan that cannot
 * run, e.g. does not fit in GPU memory). */
world *world_new(const scenario *s, metric_bus *bus, char *err, size_t errlen);
void world_free(world *w);                       /* NULL is a no-op */

engine *world_engine(world *w);

/* Run until every job finished, or the scenario's duration, or until_s
 * (whichever is first; until_s <= 0 means no extra limit). Returns 0. */
int world_run(world *w, double until_s);

/* The scenario's microbenchmarks (sim/benchset.h), built with the world
 * and priced on its first node type's fabric; hardware mode records its
 * measurements there. Owned by the world; the simulation never reads it. */
benchset *world_benchset(const world *w);

int world_job_count(const world *w);
/* Job i's outcome as of its last event, written to *out (the world keeps
 * each job as a compact core and, for a training job, a side record: no
 * job_result of its own). Returns out, or NULL for an index out of range. */
const job_result *world_job(const world *w, int i, job_result *out);

/* What the jobs take in memory (issue 23: at most 256 bytes per job in the
 * core). core_size is one core record; the rest are bytes all told: the
 * cores, the training jobs' side records with their step model figures,
 * the node arrays of jobs on more than one node (a one-node job's node is
 * in its core), the generated names ("group-17"). Allocator overhead is
 * not counted; the trace's rows and texts are the scenario's. */
typedef struct world_job_memory {
    size_t core_size;
    size_t cores_bytes, training_bytes, nodes_bytes, names_bytes;
} world_job_memory;
world_job_memory world_job_bytes(const world *w);
/* Job i's own GPU-hours (the GPUs it held, in any state, integrated; after
 * world_finish up to the end) and what they cost at its node type's price
 * per GPU-hour (cost_price_per_gpu_hour): the job's share of the bill, not
 * the cluster's. 0 for an unknown i. */
double world_job_gpu_hours(const world *w, int i);
double world_job_cost_usd(const world *w, int i);
world_totals world_get_totals(const world *w);

/* Scheduler queues (one "default" queue when the scenario has none). */
typedef struct queue_result {
    char name[SC_NAME_MAX];
    int quota_gpus;
    int jobs, started, waiting;        /* waiting: never started by the end */
    double gpu_hours;                  /* used by its jobs */
    double quota_share;                /* gpu_hours / (quota x run time); 0 without quota */
    double mean_wait_s, p95_wait_s;
    double slowdown;                   /* mean (wait + run) / run */
} queue_result;

int world_queue_count(const world *w);
queue_result world_queue(const world *w, int i);

/* Inference services (<inference>), in scenario order; results complete
 * after world_run(). world_serving gives the service itself (latency
 * samples for CDFs: serving_samples). */
int world_service_count(const world *w);
const service_result *world_service(const world *w, int i);
const serving *world_serving(const world *w, int i);

/* Failure kinds (one per <failure> or profile cause) and how many happened. */
int world_failure_kinds(const world *w);
void world_failure_kind(const world *w, int i, const char **component, const char **cause, int *count);

/* ==== live control: for the dashboard =======================================
 * Run in slices, look at nodes and jobs while running, change the world
 * through commands. world_run() is world_advance() to the end followed by
 * world_finish(); driving a run in slices gives the same results. */

/* 1 when the run is over: every job and service finished, the scenario's
 * duration reached, nothing left to happen, or the books closed. */
int world_done(const world *w);

/* Run up to simulated time until_s (capped at the scenario's duration),
 * without closing the books: call again to go on. Returns world_done(). */
int world_advance(world *w, double until_s);

/* Dispatch one event (not past the scenario's duration). Returns 1 when an
 * event ran, 0 when the run is over. */
int world_step_event(world *w);

/* Close the books at the current time as world_run() does at its end (jobs
 * still going, services, totals; closes the metric bus). Once only; later
 * calls and commands do nothing. */
void world_finish(world *w);

/* A node failure now, through the same path as a modelled one: jobs on the
 * node are interrupted, the event log reads "node N: injected (node)", the
 * node goes to repair (the node component's default repair time) and the
 * failure counts under component "node", cause "injected". Returns 0, or
 * -1 when the node is not up or spare (nothing done). */
int world_inject_failure(world *w, int node);

/* Drain (on = 1): take the node out of service as an operator would; jobs
 * on it move off like after a health-check finding (checkpoint, no work
 * lost; batch jobs go back to the queue). Undrain (on = 0): back in
 * service (or to the spare pool when below its target), waiting jobs
 * restart. Returns 0, or -1 when there is nothing to do (nothing done). */
int world_drain(world *w, int node, int on);

/* What a node is doing, for the map. FAILED is a fault not (yet) under
 * repair (e.g. hidden on an idle node); REPAIRING is down with its repair
 * under way. */
typedef enum world_activity {
    WA_IDLE, WA_TRAINING, WA_BATCH, WA_SERVING, WA_CHECKPOINT, WA_RESTARTING,
    WA_FAILED, WA_REPAIRING, WA_SPARE, WA_DRAINED, WA_OFF, WA_COUNT
} world_activity;
const char *world_activity_name(world_activity a);

typedef struct world_node_view {
    world_activity activity;
    int job;                           /* a job on the node (index), -1 none */
    int gpus, free_gpus, failures;
    int rack, rack_nodes;              /* its rack (cluster_node_rack) and nodes per rack */
} world_node_view;

int world_node_count(const world *w);
int world_nodes_per_leaf(const world *w);        /* of the first pool's fabric; 0 unknown */
/* Fill out[0 .. world_node_count()-1]. */
void world_node_views(const world *w, world_node_view *out);

/* Where jobs and replicas say they run, against the cluster's counts: the
 * nodes whose running jobs and held replicas list more GPUs than the
 * cluster counts as used there (any GPU at all on a node out of service).
 * A failure takes its node out of service before its jobs requeue, so
 * none should exist (docs/failures.md, "What a failure does to the jobs
 * on the node"). Returns how many, the first of them in *first (-1 when
 * none); -1 when out of memory. O(nodes + the jobs' nodes): for tests. */
int world_overlisted_nodes(const world *w, int *first);

/* A job as it stands now (world_job() holds figures as of its last event). */
typedef struct world_job_live {
    const char *phase;                 /* queued running checkpoint down waiting restart done */
    double progress;                   /* 0..1 */
    double eta_s;                      /* time left at the current step time, no failures; -1 unknown */
    double step_s;                     /* current step time (training), else 0 */
    double ettr;                       /* so far (training, once started), else -1 */
} world_job_live;
/* Returns 0, or -1 for an index out of range. */
int world_job_view(const world *w, int i, world_job_live *v);

#endif
