/*
 * world_types: the opaque world and a job's outcome (job_result), the
 * types that the world's own files share with its callers. sim/world.h
 * includes it and adds the world's functions and the records they return;
 * the world's files below world.c need this header only (through
 * sim/world_int.h), not world.h, so that none of them depends on world.c,
 * the file at the top that composes them.
 */
#ifndef CT_WORLD_TYPES_H
#define CT_WORLD_TYPES_H

#include <stdint.h>

#include "models/training.h"

typedef struct world world;

typedef enum job_kind { JOB_TRAINING, JOB_BATCH } job_kind;
typedef enum job_state { JOB_PENDING, JOB_RUNNING, JOB_DONE, JOB_FAILED, JOB_TIMEOUT } job_state;

const char *job_kind_name(job_kind k);
const char *job_state_name(job_state s);

/* Where a training job's time went, from its first start to its end (or
 * the end of the run). The parts sum to the elapsed time; redone_s is
 * redone_failures_s + redone_preemption_s. */
typedef struct job_time {
    double kept_s;                     /* training whose result was kept */
    double redone_s;                   /* training lost and done again: failures and preemption */
    double redone_failures_s;          /* of it, rolled back after failures */
    double redone_preemption_s;        /* of it, lost when the scheduler evicted the job
                                          (no checkpoints to save on the way out) */
    double checkpoint_stall_s;         /* training stopped for checkpoints */
    double restart_s;                  /* detecting a failure, restarting, loading */
    double waiting_s;                  /* waiting for replacement nodes */
} job_time;

/* One job's outcome (CONTRACT.md jobs[]). Times in seconds; -1 = not yet. */
typedef struct job_result {
    const char *name;                  /* owned by the scenario or the world */
    job_kind kind;
    job_state state;
    int gpus;
    const char *queue;                 /* owned by the scenario */
    double submit_s, start_s, end_s, queue_wait_s;
    /* training only */
    int64_t steps_total, steps_done;
    double tokens_done;
    const train_result *perf;          /* the step model's figures for this job; NULL for a batch job */
    /* failures and checkpoints (training) */
    int preemptions;                   /* evicted by the scheduler */
    int interruptions;                 /* unplanned: failures that hit the job */
    int planned_interruptions;         /* faults found by health checks first */
    int shrinks;                       /* times an elastic job shrank */
    int grows;                         /* times it grew back to its size */
    int leaf_groups;                   /* leaf switches its nodes span (last start) */
    int waited_for_nodes;              /* 1 when it ever waited for a node */
    int checkpoints, checkpoints_skipped;
    double checkpoint_size_bytes;
    double checkpoint_write_s;         /* one checkpoint, to durable storage */
    double checkpoint_stall_s;         /* one checkpoint, training stopped */
    double checkpoint_interval_s;      /* chosen interval; 0 = no checkpoints */
    job_time time;
    int trace_row;                     /* its row of the scenario's trace_jobs (id, user, state at t = 0, actual
                                          start: scenario.h sc_trace_job); -1: not a trace batch job */
} job_result;

#endif
