/*
 * rundata: one stored run read back from the results database as plain
 * structs, for the report writers (reports/report.c, reports/charts.c).
 * Reads only; a value that is NULL in the database (not known, not
 * happened, no energy model) is NAN here.
 */
#ifndef CT_RUNDATA_H
#define CT_RUNDATA_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* Where a training step's time goes (jobs.breakdown_*). */
enum { RD_COMPUTE, RD_TP_COMM, RD_PP_BUBBLE, RD_DP_COMM, RD_OPTIMIZER, RD_OTHER, RD_PARTS };
extern const char *const rd_part_label[RD_PARTS];

typedef struct rd_job {
    char name[96], kind[16], queue[64], state[16];
    int gpus;
    double submit_s, start_s, end_s, queue_wait_s;
    /* training only (NAN for batch jobs) */
    double step_time_s, steps_total, steps_done, mfu, model_tflops_per_gpu, tokens_per_s_per_gpu;
    double part_s[RD_PARTS];
    double interruptions, lost_work_s, checkpoints, checkpoint_interval_s, checkpoint_write_s;
    double ettr, elapsed_s, kept_s, redone_s, checkpoint_stall_s, restart_s, waiting_s;
    double memory_bytes;
    /* the job's own GPU-hours and their cost at its node type's price
     * (schema 4; NAN for a run stored before) */
    double gpu_hours, cost_usd;
} rd_job;

typedef struct rd_kind {
    char component[32], cause[96];
    int count;
} rd_kind;

/* A scheduler queue as the world summarised it (queues[] of the JSON). */
typedef struct rd_queue {
    char name[96];
    double quota_gpus, gpu_hours, mean_wait_s, p95_wait_s, slowdown;
} rd_queue;

/* An inference service (services[] of the stored results JSON). Latencies
 * in seconds; NAN when not measured (or, for the cost, not priced). The
 * latency CDF: at percentile cdf_pct[k] (0-100), the TTFT, TPOT and
 * end-to-end latencies; n_cdf points (0 when the JSON has none). */
#define RD_CDF_MAX 32
typedef struct rd_service {
    char name[96];
    double requests, replicas, output_tokens_per_s, ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s, e2e_p99_s;
    double slo_attainment, cost_per_million_tokens_usd;
    double requests_per_s;           /* completed requests / (last completion - first arrival) */
    /* SLO goodput: requests per second that met every latency objective
     * (goodput_requests_per_s of the JSON; requests_per_s x slo_attainment
     * for a run stored before it, which is the same figure). */
    double goodput_requests_per_s;
    double gpu_hours, cost_usd, output_tokens;
    int n_cdf;
    double cdf_pct[RD_CDF_MAX], cdf_ttft[RD_CDF_MAX], cdf_tpot[RD_CDF_MAX], cdf_e2e[RD_CDF_MAX];
} rd_service;

typedef struct rundata {
    int64_t id;
    char status[16], scenario[96], scenario_file[512], version[32], wall_started_at[40];
    long long seed;
    char *scenario_xml;
    double wall_s, simulated_s, events, failures_total, microbenchmarks;
    double nodes, gpus, gpu_utilization, gpu_hours, gpu_busy_hours, cost_usd, energy_kwh, co2_kg;
    double hours_training, hours_checkpoint, hours_restarting, hours_batch, hours_idle;
    /* GPU-hours held by inference replicas: the runs column (schema 4), or
     * for a run stored before it, busy minus the four job states (busy
     * always counted the replicas). */
    double hours_serving;
    double nodes_drained, bucket_s;
    rd_job *jobs;
    int n_jobs;
    rd_kind *kinds;
    int n_kinds;
    rd_queue *queues;
    int n_queues;
    rd_service *services;
    int n_services;
} rundata;

/* Load run id (0: the latest complete run, else the latest run). Returns
 * 0, or 2 (no such run, no runs) / 1 (a read failed) with err set; *out
 * is NULL then. */
int rundata_load(sqlite3 *db, int64_t id, rundata **out, char *err, size_t errlen);
void rundata_free(rundata *r);                   /* NULL is a no-op */

/* The training job the headline is about: the one with the most GPUs (the
 * first of equals), or NULL. */
const rd_job *rundata_main_job(const rundata *r);

/* The run's cost so far at time t (from the stored cost_usd series,
 * interpolated in its bucket; cost_usd * t / simulated_s without one). */
double rundata_cost_at(sqlite3 *db, const rundata *r, double t_s);

/* A cluster series (entity 'cluster', name) as arrays of n buckets
 * (t, dt, mean, max): malloc'd, the caller frees *t (one block). Returns
 * n >= 0, or -1 when out of memory. */
int rundata_series(sqlite3 *db, const rundata *r, const char *entity, const char *name, double **t,
                   double **dt, double **mean, double **max);

#endif
