/*
 * rundata: the one reader of the results database. Every report writer
 * (reports/report*.c, reports/charts*.c, reports/sweepreport*.c) reads
 * through it and gets plain structs; none of them sees SQLite. The store
 * (reports/store.h, reports/sweepdb.h) is the one writer.
 *
 *   rundata_open      checks the file as store_open(STORE_READ) does (same
 *                     messages, same statuses), then opens its own
 *                     read-only connection
 *   rundata_load      one run: its row, jobs, failure kinds, queues and
 *                     services (reports/rundata.c)
 *   rundata_document  one run's whole JSON results (reports/rundata_doc.c)
 *   rundata_series    a time series; rundata_event_times, the events of a
 *                     kind; rundata_cost_at (reports/rundata_series.c)
 *   rundata_list      the runs; rundata_micro, rundata_hardware: measured
 *                     microbenchmarks; rundata_rows: the raw rows of a
 *                     table for the CSV files (reports/rundata_rows.c)
 *   rundata_sweep_*   a sweep's points and values (reports/rundata_sweep.h)
 *
 * A value that is NULL in the database (not known, not happened, no energy
 * model) is NAN here. Statuses as store.h: 0, 1 (a read failed), 2 (bad
 * input: not a results database, no such run), with err set to one line.
 */
#ifndef CT_RUNDATA_H
#define CT_RUNDATA_H

#include <stddef.h>
#include <stdint.h>

/* The reader: a read-only view of one results database. */
typedef struct rundata_db rundata_db;

/* Open the results database at path for reading. Returns 0 with *out
 * owning a new reader; else *out is NULL and err holds store_open's
 * message for the same file (byte for byte), status 1 or 2. */
int rundata_open(const char *path, rundata_db **out, char *err, size_t errlen);
void rundata_close(rundata_db *rd);              /* NULL is a no-op */
const char *rundata_path(const rundata_db *rd);  /* as given to rundata_open */

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
    /* a class or model of services[parent] (rundata.parts; is_model 0: a
     * class); -1 for a service */
    int parent, is_model;
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
    /* For a run that is not complete: the events stored so far and the
     * simulated time of the last (NAN when none); 0 and NAN otherwise. */
    double events_stored, last_event_s;
    rd_job *jobs;
    int n_jobs;
    rd_kind *kinds;
    int n_kinds;
    rd_queue *queues;
    int n_queues;
    rd_service *services;
    int n_services;
    rd_service *parts;               /* the services' classes, then models, by service */
    int n_parts;
} rundata;

/* Load run id (0: the latest complete run, else the latest run). Returns
 * 0, or 2 (no such run, no runs) / 1 (a read failed) with err set; *out
 * is NULL then. */
int rundata_load(rundata_db *rd, int64_t id, rundata **out, char *err, size_t errlen);
void rundata_free(rundata *r);                   /* NULL is a no-op */

/* The training job the headline is about: the one with the most GPUs (the
 * first of equals), or NULL. */
const rd_job *rundata_main_job(const rundata *r);

/* ---- the whole results document (reports/rundata_doc.c) ------------------ */

/* A run's JSON results as `run --json` wrote them, less the final newline:
 * text malloc'd (rundata_document_free). */
typedef struct rd_document {
    int64_t id;
    char status[16];
    char *text;
} rd_document;

/* The document of run id (0: the latest complete run, else the latest),
 * jobs[] rebuilt from the jobs table when the run was stored without them
 * (store_run_json). Returns 0, or 2 (no such run, no runs, a run with no
 * document: killed before it finished) / 1 (a read failed) with err set
 * naming the database; out->text is NULL then. */
int rundata_document(rundata_db *rd, int64_t id, rd_document *out, char *err, size_t errlen);
void rundata_document_free(rd_document *d);

/* ---- time series and events (reports/rundata_series.c) ------------------- */

/* The run's cost so far at time t (from the stored cost_usd series,
 * interpolated in its bucket; cost_usd * t / simulated_s without one). */
double rundata_cost_at(rundata_db *rd, const rundata *r, double t_s);

/* A series (entity, name: 'cluster', 'gpus_idle') as arrays of n buckets
 * (t, dt, mean, max): malloc'd, the caller frees *t (one block). Returns
 * n >= 0 (0: no such series, all NULL), or -1 when out of memory. */
int rundata_series(rundata_db *rd, const rundata *r, const char *entity, const char *name, double **t,
                   double **dt, double **mean, double **max);

/* The simulated times of the run's events of kind ('failure', ...), in
 * their order: *t malloc'd (NULL when none), caller frees. Returns the
 * count, or -1 when the read failed. */
int rundata_event_times(rundata_db *rd, const rundata *r, const char *kind, double **t);

/* ---- runs, microbenchmarks, raw rows (reports/rundata_rows.c) ------------ */

/* One line of the run list. */
typedef struct rd_run_row {
    int64_t id;
    long long seed;
    char status[16], scenario[256], wall_started_at[40];
    double simulated_s, cost_usd;
} rd_run_row;

/* Every run, by id: *out malloc'd (caller frees), *n its length. Returns
 * 0, or 1 with err "cannot read: <why>". */
int rundata_list(rundata_db *rd, rd_run_row **out, int *n, char *err, size_t errlen);

/* A microbenchmark case of a run (the microbenchmarks table). Texts are ""
 * and numbers NAN when NULL. */
typedef struct rd_micro {
    char op[32], kind[32], precision[16], note[256];
    int ranks, m, n, k, files, reps;
    double size_bytes, predicted_s, measured_s, measured_min_s, measured_max_s, error_pct;
} rd_micro;

/* The run's microbenchmark cases in their order: *out malloc'd (NULL when
 * none), caller frees. Returns the count, or -1 when the read failed. */
int rundata_micro(rundata_db *rd, const rundata *r, rd_micro **out);

/* Where a run's microbenchmarks were measured (the hardware table). Texts
 * are "" when NULL; found 0 when the run has no row. */
typedef struct rd_hardware {
    int found, ranks;
    char backend[32], host[128], cpu[256], devices[512], libraries[512], profile[256], profile_source[512];
} rd_hardware;
void rundata_hardware(rundata_db *rd, const rundata *r, rd_hardware *hw);

/* The raw rows of a table for the CSV files, for runs a and b (the same
 * id twice for one run), a's rows first:
 *   RD_ROWS_RUNS      every column of runs but the scenario and JSON texts
 *   RD_ROWS_JOBS, RD_ROWS_FAILURES, RD_ROWS_EVENTS   every column
 *   RD_ROWS_SERIES    series joined to their points
 * row(ctx, ncol, z, number) is called once with the column names (number
 * all 0), then once per row: z[i] NULL for NULL, number[i] 1 when the
 * value is a number (not text). Returns 0, or 1 with err "cannot read the
 * database: <why>". */
typedef enum rd_rows { RD_ROWS_RUNS, RD_ROWS_JOBS, RD_ROWS_FAILURES, RD_ROWS_EVENTS, RD_ROWS_SERIES } rd_rows;
typedef void (*rd_row_fn)(void *ctx, int ncol, const char *const *z, const unsigned char *number);
int rundata_rows(rundata_db *rd, rd_rows table, int64_t a, int64_t b, rd_row_fn row, void *ctx, char *err,
                 size_t errlen);

#endif
