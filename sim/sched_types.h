/*
 * sched_types: the scheduler's names shared by its callers (sim/sched.h
 * includes this) and by its own lower files (sched_int.h), so that those
 * depend on nothing above them: the policy, what the scheduler knows of a
 * job, the handle, and the callbacks into the world.
 */
#ifndef CT_SCHED_TYPES_H
#define CT_SCHED_TYPES_H

typedef enum sched_policy { SCHED_FIFO, SCHED_PRIORITY, SCHED_FAIR } sched_policy;

/* What the scheduler knows of a job. */
typedef struct sched_job {
    int id;                        /* the world's job index */
    int queue;                     /* index into the scheduler's queues */
    int priority;
    int pool;                      /* node pool it runs on */
    int gpus;
    double submit_s;
    double expected_end_s;         /* running: when it should end (backfill); queued: runtime */
    int running;
} sched_job;

typedef struct sched sched;

/* Callbacks into the world. start() must allocate and start the job
 * (cluster_can_alloc was true). preempt() must stop the job and give its
 * GPUs back; the job is requeued by the world with sched_submit().
 * nodes() writes the nodes a running job holds GPUs on (at most cap) and
 * the GPUs it holds on each to *gpus_each, and returns how many. */
typedef struct sched_ops {
    void *ctx;
    void (*start)(void *ctx, int job);
    void (*preempt)(void *ctx, int job, int by_job);
    int (*nodes)(void *ctx, int job, int *nodes_out, int cap, int *gpus_each);
} sched_ops;

#endif
