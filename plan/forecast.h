/*
 * forecast: a snapshot of a cluster (a scenario whose t = 0 is now) run
 * forward many times, and what the runs say: when each job waiting now
 * starts (p10, p50, p90 over the replicas), when the queue of now drains,
 * how busy the GPUs are each day; the same for what-if variants.
 *
 *   forecast_init          the scenario file
 *   forecast_add_set       --set PATH=VALUE: a change applied to every variant
 *   forecast_add_vary      --vary PATH=V1,V2,...: one variant per value,
 *                          beside the baseline (not a grid: sweep does grids)
 *   forecast_prepare       every variant's scenario loaded and its world
 *                          built once: all bad input is found before any run
 *   forecast_run           the replicas, on jobs worker processes (plan/pool.h)
 *   forecast_json          the results (docs/forecast.md)
 *
 * PATH is an attribute path of scenarios/override.h (cluster/nodes/@count),
 * or jobs[NAME].priority: the priority of the trace or training job whose
 * name (or trace id) is NAME, a whole number.
 *
 * Replica r of a variant runs with seed S + r, S being --seed or else the
 * variant's scenario seed; every replica's numbers are kept by (variant,
 * replica), so the results do not depend on how many workers ran them.
 * A run ends when its work is done, at the scenario's duration, or at the
 * horizon, whichever is first.
 *
 * Functions print their messages as "clustertwin forecast: ..." and return
 * a plan/status.h status.
 */
#ifndef CT_PLAN_FORECAST_H
#define CT_PLAN_FORECAST_H

#include <stdint.h>

#include "plan/grid.h"
#include "reports/json.h"

#define FORECAST_MAX_VARIANTS 64
#define FORECAST_MAX_JOB_SETS 32

/* A job as the snapshot has it. */
typedef struct forecast_job {
    char id[SC_NAME_MAX];            /* the trace's id, else the name */
    char name[SC_NAME_MAX];
    char user[SC_NAME_MAX];          /* "" when the trace gives none */
    int gpus;
    const char *state;               /* at the snapshot: pending running held later */
    int waiting;                     /* pending at the snapshot: counted in the drain */
} forecast_job;

/* One variant: its scenario and every replica's numbers. */
typedef struct forecast_variant {
    char label[512];                 /* "baseline", or "PATH=VALUE" */
    scenario *s;                     /* loaded, what-ifs applied */
    uint64_t seed0;                  /* replica 0's seed */
    int gpus;                        /* the cluster's GPUs */
    forecast_job *jobs;
    int n_jobs;
    double *start_s;                 /* [job * replicas + r]: INFINITY = did not start */
    double *drain_s;                 /* [r] */
    double *util;                    /* [day * replicas + r]: NaN = not known */
} forecast_variant;

/* A job what-if: jobs[NAME].priority = each of values[0..n). */
typedef struct forecast_job_set {
    char name[SC_NAME_MAX];
    long *values;
    int n;
    char *text;                      /* as given, for labels */
} forecast_job_set;

/* A --vary: an attribute axis (an index into sw.axes) or a job what-if. */
typedef struct forecast_axis {
    int axis;                        /* sw.axes index, or -1 */
    forecast_job_set job;
} forecast_axis;

typedef struct forecast {
    sweep sw;                        /* the file, the attribute --set and --vary */
    forecast_job_set job_sets[FORECAST_MAX_JOB_SETS];
    int n_job_sets;
    forecast_axis axes[SWEEP_MAX_AXES];
    int n_axes;
    int replicas;                    /* default 20 */
    int days;                        /* utilisation for this many days (default 7) */
    double horizon_s;                /* a run stops here (default 30 days) */
    int has_seed;
    uint64_t seed;
    forecast_variant *v;
    int n_variants;
    double wall_s;
} forecast;

int forecast_init(forecast *f, const char *file);
void forecast_free(forecast *f);
int forecast_add_set(forecast *f, const char *arg);
int forecast_add_vary(forecast *f, const char *arg);

/* Load every variant and build its world once; fills v[], jobs[]. */
int forecast_prepare(forecast *f);

/* Run every replica of every variant on `jobs` worker processes (1: in
 * this process). PLAN_OK, or PLAN_FAILED (printed: a run failed, a worker
 * died, interrupted). */
int forecast_run(forecast *f, int jobs);

/* The statistics of variant v: job i's start pNN (NaN: fewer than p% of
 * replicas started it; also for jobs not waiting at the snapshot), the share of
 * replicas that started it, the drain pNN, day k's mean utilisation (NaN:
 * not known in any replica). */
double forecast_start(const forecast *f, int v, int i, double p);
double forecast_started_share(const forecast *f, int v, int i);
double forecast_drain(const forecast *f, int v, double p);
double forecast_util(const forecast *f, int v, int k);

/* The baseline's snapshot-time (ISO 8601 UTC), or NULL when it has none. */
const char *forecast_snapshot_time(const forecast *f);

/* The whole forecast as JSON (docs/forecast.md). */
void forecast_json(const forecast *f, json *j);

#endif
