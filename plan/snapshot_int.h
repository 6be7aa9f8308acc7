/*
 * snapshot_int: the plan of a snapshot before it is written (private to
 * plan/snapshot*.c): node groups by catalog type (snapshot_nodes.c), the
 * trace's rows (snapshot_jobs.c, snapshot_replay.c) and the run-time
 * ratios (snapshot_history.c); snapshot.c writes the files.
 */
#ifndef CT_PLAN_SNAPSHOT_INT_H
#define CT_PLAN_SNAPSHOT_INT_H

#include <stdio.h>

#include "plan/snapshot.h"

#define SNAP_TYPE_MAX 64

typedef struct snap_group {
    char type[SNAP_TYPE_MAX];        /* the catalog type, or its variant "dgx-h100-4gpu" */
    char base[SNAP_TYPE_MAX];        /* the catalog type a variant is based on ("" none) */
    int gpus;                        /* GPUs per node */
    const char **names;              /* the nodes, in natural order (borrowed from the live record) */
    int n;
} snap_group;

typedef struct snap_plan {
    const live_cluster *c;
    const snapshot_opts *o;
    snap_group *groups;
    int n_groups;
    long long cluster_gpus;
    const live_node **up;            /* nodes in service, sorted by name for binary search */
    int n_up;
    const live_node **out;           /* down, drained and draining nodes with GPUs */
    unsigned char *out_draining;     /* parallel to out: drained under a running job (also in up) */
    int n_out, n_draining;
} snap_plan;

/* Group c's GPU nodes by catalog type; 2 with err for an unknown model
 * (without --node-type) or no GPU node; 1 out of memory; 0 ok. */
int snap_nodes(snap_plan *p, snapshot_summary *sum, char *err, size_t errlen);
void snap_plan_free(snap_plan *p);
/* <catalog> variants (when any) and <cluster> with its <unavailable>. */
void snap_write_cluster(FILE *f, const snap_plan *p);
/* 1, claiming the GPUs in held (GPUs of each p->up node), when a running job
 * of gpus GPUs can be written on its hostlist: every node in service, as
 * many nodes (at most 64) as its GPUs fill, none over-full with the jobs
 * claimed before (time-sliced or MIG GPUs can be shared; the twin's nodes
 * cannot). 0: the job is written without nodes and the scheduler places it. */
int snap_claim(const snap_plan *p, int *held, const char *hostlist, int gpus);

/* A partition's GPU nodes as ` nodes="gpu[01-04]"` when sinfo lists them
 * and they are not every GPU node (then nothing: any node). */
void snap_write_partition_nodes(FILE *f, const snap_plan *p, const char *part);
/* <scheduler> with one <queue> per partition (those of the jobs too). */
void snap_write_scheduler(FILE *f, const snap_plan *p);
/* The snapshot's trace rows (running, pending, held). -1 out of memory. */
int snap_write_jobs(FILE *f, const snap_plan *p, snapshot_summary *sum);
/* The history as a replay trace. -1 out of memory. */
int snap_write_replay(FILE *f, const snap_plan *p, snapshot_summary *sum);
/* <runtime-history> (nothing when no finished job qualifies). -1 out of memory. */
int snap_write_history(FILE *f, const snap_plan *p, snapshot_summary *sum);

/* A partition's time limit in seconds (0 none). */
double snap_partition_limit_s(const live_cluster *c, const char *name);

/* Node names gathered from hostlists (with repeats): snap_names_add is
 * hostlist_expand's sink (1 when out of memory, so it returns -2). */
typedef struct snap_names {
    char **v;
    size_t n, cap;
} snap_names;
int snap_names_add(void *ctx, const char *name);
void snap_names_sort(snap_names *s);                     /* strcmp order, for bsearch */
void snap_names_free(snap_names *s);

/* Natural order of names: "gpu2" before "gpu10". */
int snap_natcmp(const char *a, const char *b);

/* Seconds as a duration the loader reads ("172800s"). */
void snap_duration(char *b, size_t n, double s);

#endif
