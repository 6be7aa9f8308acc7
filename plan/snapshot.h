/*
 * snapshot: a live cluster's state (scenarios/live.h, filled from Slurm or
 * Kubernetes) written as a scenario: S.xml and its job trace S.jobs.csv
 * beside it, whose t = 0 is the moment the state was read
 * (docs/live-cluster.md; the elements are docs/cluster-state.md's).
 *
 *   nodes       grouped by catalog node type (the GPU model mapped, or
 *               --node-type), named with Slurm hostlists; a group whose
 *               nodes hold another GPU count than the catalog's gets a
 *               <catalog><node base=> variant
 *   down/drained nodes   <unavailable state reason>
 *   partitions  <queue name max-time>; scheduler priority + EASY backfill
 *               (Slurm's defaults: sched/backfill, priority/multifactor)
 *   jobs        trace rows: running (elapsed, nodes), pending, held; Slurm
 *               priorities (ordered by partition PriorityTier, then
 *               priority) as ranks 1..K; `after` only to jobs in the trace
 *   history     <runtime-history> ratios run/limit of COMPLETED, TIMEOUT
 *               and FAILED jobs: the last SNAPSHOT_RATIOS_PER_KEY of each
 *               user and account, the last SNAPSHOT_RATIOS_CLUSTER in all
 *
 * Replay instead writes the history as the trace (submit, gpus, duration =
 * the run time, limit, actual_start), its t = 0 the first submit, so that
 * `clustertwin run` compares the scheduler model with what Slurm did.
 *
 * Both files are written in a new folder beside S.xml, loaded back through
 * the scenario loader (a snapshot that does not load is an error, nothing
 * written), then renamed into place; an existing target that is not a
 * regular file is refused.
 */
#ifndef CT_PLAN_SNAPSHOT_H
#define CT_PLAN_SNAPSHOT_H

#include <stddef.h>

#include "scenarios/live.h"

/* Bounds on what the history adds to the scenario: the most recent jobs
 * speak for a user's habits (Tsafrir, Etsion and Feitelson, IEEE TPDS
 * 18(6) 2007, predict from a user's last two jobs); these only keep the
 * file small, they are not fitted. */
#define SNAPSHOT_RATIOS_PER_KEY 64
#define SNAPSHOT_RATIOS_CLUSTER 1024

typedef struct snapshot_opts {
    const char *out;                 /* S.xml (S.jobs.csv beside it) */
    const char *node_type;           /* catalog node type for GPU models the map does not know; NULL */
    double at_unix_s;                /* the snapshot's wall-clock time */
    int replay;                      /* write c->history as the trace */
    double default_limit_s;          /* a job with no limit of its own or its partition's: this (0: left out) */
} snapshot_opts;

typedef struct snapshot_summary {
    int nodes, nodes_unavailable, nodes_without_gpus;
    int nodes_draining;              /* drained or cordoned under a running job: written state="draining" */
    int running, pending, held;      /* trace rows (replay: pending = the history's jobs) */
    int left_out_no_limit;           /* jobs with no time limit anywhere */
    int left_out_too_big;            /* jobs asking more GPUs than the cluster has */
    int history_jobs;                /* sacct jobs whose ratios were kept */
    char csv[4096];                  /* the trace's path */
} snapshot_summary;

/* Write the scenario. Returns a plan/status.h status: 2 with err for what
 * the state cannot be written as (an unknown GPU model without
 * --node-type, no GPU node, a target that is not a regular file), 1 when
 * a write failed. */
int snapshot_write(const live_cluster *c, const snapshot_opts *o, snapshot_summary *sum, char *err, size_t errlen);

/* A replay without sinfo: the nodes named in the history's node lists,
 * each with the most GPUs per node any job held (a homogeneous cluster;
 * their GPU model unknown: --node-type names their type). A plan/status.h
 * status with err. */
int snapshot_infer_nodes(live_cluster *c, char *err, size_t errlen);

#endif
