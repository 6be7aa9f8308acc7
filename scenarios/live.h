/*
 * live: a live cluster's state as a source reports it (Slurm's squeue,
 * sinfo and sacct; Kubernetes pods and Kueue workloads), in one plain form
 * that every reader fills and the snapshot writer (plan/snapshot.c) turns
 * into a scenario. Times are seconds relative to the snapshot (t = 0 is the
 * moment the state was read: a submit time in the past is negative).
 * Strings are owned by the record (malloc'd; live_free releases them).
 */
#ifndef CT_LIVE_H
#define CT_LIVE_H

#include <stddef.h>

typedef enum live_node_state { LIVE_UP, LIVE_DOWN, LIVE_DRAINED } live_node_state;
typedef enum live_job_state { LIVE_PENDING, LIVE_RUNNING, LIVE_HELD } live_job_state;

typedef struct live_node {
    char *name;                      /* host name */
    int gpus;                        /* GPUs it offers (GRES gpu or nvidia.com/gpu); 0: none */
    char *gpu_model;                 /* as the source names it ("h100", "NVIDIA-H100-80GB-HBM3"); "" unknown */
    live_node_state state;           /* DRAIN/DRAINING/DRAINED and cordoned: drained; DOWN, NOT_RESPONDING, FAIL: down */
    char *reason;                    /* why it is down or drained ("" none) */
    double since_s;                  /* when that began, <= 0; 0 when unknown */
    double since_unix_s;             /* the same in Unix seconds (Slurm's reason time); 0 when unknown */
    char *partitions;                /* comma-separated partition or pool names ("" none) */
} live_node;

typedef struct live_job {
    char *id;                        /* the source's id: "1234", "1234_7" (array task), a pod/workload uid */
    char *name, *user, *account, *partition;
    live_job_state state;
    char *reason;                    /* a pending job's reason (Resources, Priority, Dependency, held...) */
    int gpus;                        /* GPUs in all */
    int nodes;                       /* nodes asked for or held (0: unknown) */
    char *node_list;                 /* running: the nodes held, as a Slurm hostlist ("" unknown) */
    double submit_s;                 /* <= 0 */
    double start_s;                  /* running: <= 0; else 0 */
    double limit_s;                  /* time limit; 0 = none */
    double priority;                 /* the source's priority (higher first) */
    char *after;                     /* the id this job depends on ("" none) */
} live_job;

typedef struct live_partition {
    char *name;
    double max_time_s;               /* 0 = unlimited */
    double priority_tier;            /* Slurm PriorityTier; Kueue ClusterQueue order */
    int quota_gpus;                  /* 0 = none */
} live_partition;

/* One finished job of the history: how long it ran against what it asked
 * for, the sample a forecast draws run times from. */
typedef struct live_history {
    char *user, *account;
    double run_s, limit_s;
    /* Where the source tells them (Slurm's sacct), for replaying the
     * history as a trace; "" / 0 when unknown. */
    char *id, *name, *partition;
    char *state;                     /* the source's end state: "COMPLETED", "TIMEOUT", "FAILED", ... */
    double submit_unix_s, start_unix_s;   /* wall-clock (Unix seconds); start 0: never started */
    int gpus;                        /* GPUs it held (0: none or unknown) */
    char *node_list;                 /* the nodes it ran on, as a Slurm hostlist ("" unknown) */
    int attempts;                    /* times it ran: a requeued job > 1 (only the last is kept) */
} live_history;

typedef struct live_cluster {
    char *source;                    /* "Slurm 22.05.8 (data parser v0.0.38)" */
    double snapshot_unix_s;          /* the snapshot's wall-clock time (Unix seconds); 0 unknown */
    live_node *nodes;           int n_nodes;
    live_job *jobs;             int n_jobs;
    live_partition *parts;      int n_parts;
    live_history *history;      int n_history;
    int jobs_without_gpus;           /* CPU-only jobs left out */
    size_t cap_nodes, cap_jobs, cap_parts, cap_history;   /* the arrays' room (live_add_*) */
} live_cluster;

/* Room for one more record (zeroed) at the end of each array: the new
 * record, or NULL when memory runs out. */
live_node *live_add_node(live_cluster *c);
live_job *live_add_job(live_cluster *c);
live_partition *live_add_partition(live_cluster *c);
live_history *live_add_history(live_cluster *c);
/* strdup of z ("" for NULL) into *dst; -1 when memory runs out. */
int live_set(char **dst, const char *z);
void live_free(live_cluster *c);

#endif
