/*
 * store: the SQLite results database (see store.h for the life of a run).
 *
 * Load: a 54-day 16K-GPU run publishes ~90,000 events (mostly checkpoint
 * start/end) and ~50,000 samples. Events are buffered and written 16,384 at
 * a time in short transactions (a prepared INSERT each, ~1-2 us), so the
 * write lock is held for tens of milliseconds, not for the whole run.
 * Samples go to the in-memory resampler (reports/series.h) and are written
 * once, at the end, as at most STORE_MAX_POINTS rows per series. Measured:
 * that run takes 0.26 s without the store and 0.52 s with it; a run of
 * 60,000 batch jobs (180,000 events) 0.15 s and ~1.5 s, most of it writing
 * the jobs and the 15 MB JSON text. A run adds ~0.4 MB of series points and
 * ~60 bytes per event to the file.
 *
 * Journal: SQLite's default rollback journal, not WAL. A results file is
 * copied around, kept next to scenarios, often on NFS home directories of
 * cluster login nodes where WAL's shared memory does not work; with the
 * rollback journal the database is one file at rest. Its cost, readers
 * blocked while a batch commits, is a few milliseconds per batch.
 * A killed writer leaves a hot journal that the next connection (the
 * report's too: it opens read-write for that reason) rolls back.
 *
 * The jobs, queues, services and cluster columns are filled from the run's
 * JSON results, parsed by SQLite's JSON functions, so the database and the
 * JSON agree field for field by construction: a field at JSON path a.b
 * has the column a_b; a field with no column (added to the JSON after this
 * schema) is kept in the row's `extra` (or `cluster_extra`) JSON object
 * under "a.b".
 */
#include "reports/store.h"
#include "reports/fileout.h"
#include "base/errmsg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "reports/series.h"

/* 'CTR1' in the file header: tells our databases from other SQLite files. */
#define STORE_APPLICATION_ID 0x43545231

/* Schema version 2 added the microbenchmark cases of a run (the JSON's
 * microbenchmarks[], predicted and measured) and where they were measured
 * (the JSON's hardware object). Both versions' tables are created for a
 * new file; a version 1 file gets these by migration. */
#define HW_TABLES_SQL \
    "CREATE TABLE microbenchmarks (\n" \
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n" \
    "  idx INTEGER NOT NULL,                -- position in microbenchmarks[]\n" \
    "  op TEXT NOT NULL,                    -- allreduce ... sendrecv | gemm | copy | storage-write\n" \
    "  ranks INTEGER, size_bytes REAL, m INTEGER, n INTEGER, k INTEGER, precision TEXT,\n" \
    "  kind TEXT,                           -- copies: d2d | h2d | d2h | host\n" \
    "  files INTEGER,\n" \
    "  predicted_s REAL, predicted_busbw_GBps REAL, predicted_algbw_GBps REAL, predicted_GBps REAL,\n" \
    "  predicted_tflops REAL, model TEXT,\n" \
    "  measured_s REAL,                     -- per operation, by hardware.statistic; NULL = not measured\n" \
    "  measured_busbw_GBps REAL, measured_algbw_GBps REAL, measured_GBps REAL, measured_tflops REAL,\n" \
    "  error_pct REAL,                      -- 100 (predicted - measured) / measured\n" \
    "  measured_min_s REAL, measured_q1_s REAL, measured_q3_s REAL, measured_max_s REAL,\n" \
    "  warmup INTEGER, reps INTEGER, iters INTEGER,\n" \
    "  measured_read_s REAL, measured_read_GBps REAL,   -- storage: reading the files back\n" \
    "  note TEXT,                           -- why a case was not measured or priced\n" \
    "  extra TEXT,\n" \
    "  PRIMARY KEY (run_id, idx)\n" \
    ");\n" \
    "CREATE TABLE hardware (                -- the JSON's hardware object (run --backend)\n" \
    "  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,\n" \
    "  backend TEXT, host TEXT, cpu TEXT, devices TEXT, libraries TEXT, ranks INTEGER,\n" \
    "  profile TEXT, profile_source TEXT\n" \
    ");\n"

/*
 * Schema version 2 (see STORE_SCHEMA_VERSION). Times in simulated seconds from the start of the run
 * unless the name starts with wall (wall-clock). NULL = not known or not
 * happened (a JSON null).
 */
#define SCHEMA_SQL_VERSION 2              /* schema_sql's version: a new file is migrated on */
static const char schema_sql[] =
    /* One row per `clustertwin run`. Inserted 'incomplete' before the
     * simulation starts; the figures are filled and status set to
     * 'complete' in the run's last transaction. */
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  status TEXT NOT NULL CHECK (status IN ('incomplete', 'complete')),\n"
    "  scenario TEXT NOT NULL,              -- <scenario name>\n"
    "  scenario_file TEXT NOT NULL,         -- the path given to run\n"
    "  scenario_xml TEXT NOT NULL,          -- the scenario file's text\n"
    "  seed INTEGER NOT NULL,\n"
    "  version TEXT NOT NULL,               -- clustertwin version\n"
    "  wall_started_at TEXT NOT NULL,       -- UTC, ISO 8601\n"
    "  wall_s REAL,                         -- wall-clock seconds of the simulation\n"
    "  simulated_s REAL,\n"
    "  events INTEGER,                      -- engine events dispatched\n"
    "  failures_total INTEGER,\n"
    /* cluster.* of the JSON results */
    "  nodes INTEGER,\n"
    "  gpus INTEGER,\n"
    "  gpu_utilization REAL,                -- allocated: GPU-time held by work / provisioned GPU-time\n"
    "  gpu_hours REAL,                      -- provisioned\n"
    "  gpu_busy_hours REAL,\n"
    "  cost_usd REAL,\n"
    "  energy_kwh REAL,                     -- NULL without an energy model\n"
    "  co2_kg REAL,                         -- NULL without an energy model\n"
    /* cluster.cost.* (models/cost.h): the parts of cost_usd and energy */
    "  cost_owned INTEGER, cost_compute_usd REAL, cost_storage_usd REAL, cost_cloud_usd REAL,\n"
    "  cost_electricity_usd REAL, cost_cloud_gpu_hours REAL, cost_storage_tb_months REAL,\n"
    "  cost_gpu_kwh REAL, cost_overhead_kwh REAL, cost_it_kwh REAL, cost_avg_it_power_kw REAL,\n"
    "  cost_avg_power_kw REAL, cost_pue REAL, cost_carbon_kg_per_kwh REAL,\n"
    "  cost_electricity_usd_per_kwh REAL,\n"
    "  gpu_hours_by_state_training REAL,\n"
    "  gpu_hours_by_state_checkpoint REAL,\n"
    "  gpu_hours_by_state_restarting REAL,\n"
    "  gpu_hours_by_state_batch REAL,\n"
    "  gpu_hours_by_state_idle REAL,\n"
    "  nodes_drained INTEGER,\n"
    "  cluster_extra TEXT,                  -- JSON: cluster fields without a column\n"
    "  series_bucket_s REAL,                -- grid of this run's time series\n"
    "  results_json TEXT                    -- the whole `run --json` document\n"
    ");\n"
    /* jobs[] of the JSON results, one row each, in the same order. */
    "CREATE TABLE jobs (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  idx INTEGER NOT NULL,                -- position in jobs[]\n"
    "  name TEXT NOT NULL, kind TEXT NOT NULL, gpus INTEGER, queue TEXT, state TEXT,\n"
    "  preemptions INTEGER, submit_s REAL, start_s REAL, end_s REAL, queue_wait_s REAL,\n"
    /* training jobs only (NULL for batch jobs) */
    "  step_time_s REAL, steps_total INTEGER, steps_done INTEGER, tokens_done REAL,\n"
    "  model_tflops_per_gpu REAL, hardware_tflops_per_gpu REAL, mfu REAL,\n"
    "  tokens_per_s_per_gpu REAL, params REAL, micro_batches INTEGER,\n"
    "  breakdown_compute_s REAL, breakdown_tp_comm_s REAL, breakdown_pp_bubble_s REAL,\n"
    "  breakdown_dp_comm_s REAL, breakdown_optimizer_s REAL, breakdown_other_s REAL,\n"
    "  interruptions INTEGER, planned_interruptions INTEGER, lost_work_s REAL,\n"
    "  checkpoint_size_bytes REAL, checkpoint_write_s REAL, checkpoint_stall_s REAL,\n"
    "  checkpoint_interval_s REAL, checkpoints INTEGER, shrinks INTEGER,\n"
    "  ettr REAL,                           -- training kept / elapsed since first start\n"
    "  time_elapsed_s REAL, time_training_kept_s REAL, time_redone_s REAL,\n"
    "  time_checkpoint_stall_s REAL, time_restart_s REAL, time_waiting_for_nodes_s REAL,\n"
    "  memory_per_gpu_weights_bytes REAL, memory_per_gpu_grads_bytes REAL,\n"
    "  memory_per_gpu_optimizer_bytes REAL, memory_per_gpu_activations_bytes REAL,\n"
    "  memory_per_gpu_other_bytes REAL, memory_per_gpu_total_bytes REAL,\n"
    "  extra TEXT,                          -- JSON: job fields without a column\n"
    "  PRIMARY KEY (run_id, idx)\n"
    ");\n"
    "CREATE INDEX jobs_name ON jobs(run_id, name);\n"
    /* queues[] of the JSON results (the scheduler's queues). */
    "CREATE TABLE queues (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  idx INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL, quota_gpus INTEGER, jobs INTEGER, started INTEGER, waiting INTEGER,\n"
    "  gpu_hours REAL, quota_share REAL, mean_wait_s REAL, p95_wait_s REAL, slowdown REAL,\n"
    "  extra TEXT,\n"
    "  PRIMARY KEY (run_id, idx)\n"
    ");\n"
    /* services[] of the JSON results (inference). */
    "CREATE TABLE services (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  idx INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL, requests INTEGER, replicas INTEGER, output_tokens_per_s REAL,\n"
    "  ttft_p50_s REAL, ttft_p99_s REAL, tpot_p50_s REAL, tpot_p99_s REAL,\n"
    "  e2e_p99_s REAL, slo_attainment REAL,\n"
    "  extra TEXT,\n"
    "  PRIMARY KEY (run_id, idx)\n"
    ");\n"
    /* Failures by kind (a <failure> element or a profile's cause). */
    "CREATE TABLE failure_kinds (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  idx INTEGER NOT NULL,\n"
    "  component TEXT NOT NULL, cause TEXT NOT NULL, count INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, idx)\n"
    ");\n"
    /* Every event published on the metric bus (sim/world.h lists the
     * kinds): failures, repairs, restarts, checkpoints, job starts/ends. */
    "CREATE TABLE events (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  seq INTEGER NOT NULL,                -- publishing order\n"
    "  t_s REAL NOT NULL,\n"
    "  entity TEXT NOT NULL,                -- a job name or 'cluster'\n"
    "  kind TEXT NOT NULL,\n"
    "  node INTEGER,                        -- from a detail reading 'node N...'\n"
    "  detail TEXT NOT NULL,\n"
    "  PRIMARY KEY (run_id, seq)\n"
    ") WITHOUT ROWID;\n"
    /* Time series: one row per (run, entity, name); points are buckets
     * [t_s, t_s + dt_s) of a power-of-two width (runs.series_bucket_s),
     * at most 2000 per series, with the time-weighted mean and the least
     * and greatest value held in the bucket. Series: cluster gpus_training,
     * gpus_checkpoint, gpus_restarting, gpus_batch, gpus_serving, gpus_failed,
     * gpus_idle (cluster GPUs minus the five busy states), queue_length,
     * cost_usd (so far; max = the value at the bucket's end); <job>
     * progress (0..1). */
    "CREATE TABLE series (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  entity TEXT NOT NULL, name TEXT NOT NULL,\n"
    "  UNIQUE (run_id, entity, name)\n"
    ");\n"
    "CREATE TABLE points (\n"
    "  series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
    "  k INTEGER NOT NULL,                  -- bucket number: t_s = k * bucket width\n"
    "  t_s REAL NOT NULL, dt_s REAL NOT NULL,\n"
    "  mean REAL NOT NULL, min REAL NOT NULL, max REAL NOT NULL,\n"
    "  PRIMARY KEY (series_id, k)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW failure_events AS SELECT * FROM events WHERE kind IN\n"
    "  ('failure', 'node_repaired', 'node_drained', 'node_replaced', 'job_down',\n"
    "   'job_restart', 'job_waiting', 'job_shrink');\n"
    "CREATE VIEW checkpoint_events AS SELECT * FROM events WHERE kind IN\n"
    "  ('checkpoint_start', 'checkpoint_end');\n"
    "CREATE VIEW cluster_series AS SELECT s.run_id, s.name, p.t_s, p.dt_s, p.mean, p.min, p.max\n"
    "  FROM series s JOIN points p ON p.series_id = s.id WHERE s.entity = 'cluster';\n"
    HW_TABLES_SQL;

/* JSON fields with a column: the column is the path with '.' -> '_'. */
static const char *const job_fields[] = {
    "name", "kind", "gpus", "queue", "state", "preemptions", "submit_s", "start_s", "end_s", "queue_wait_s",
    "step_time_s", "steps_total", "steps_done", "tokens_done", "model_tflops_per_gpu",
    "hardware_tflops_per_gpu", "mfu", "tokens_per_s_per_gpu", "params", "micro_batches",
    "breakdown.compute_s", "breakdown.tp_comm_s", "breakdown.pp_bubble_s", "breakdown.dp_comm_s",
    "breakdown.optimizer_s", "breakdown.other_s", "interruptions", "planned_interruptions",
    "lost_work_s", "checkpoint_size_bytes", "checkpoint_write_s", "checkpoint_stall_s",
    "checkpoint_interval_s", "checkpoints", "shrinks", "ettr", "time.elapsed_s",
    "time.training_kept_s", "time.redone_s", "time.checkpoint_stall_s", "time.restart_s",
    "time.waiting_for_nodes_s", "memory_per_gpu.weights_bytes", "memory_per_gpu.grads_bytes",
    "memory_per_gpu.optimizer_bytes", "memory_per_gpu.activations_bytes",
    "memory_per_gpu.other_bytes", "memory_per_gpu.total_bytes",
    /* schema version 4 (ACCOUNTING_SQL) */
    "lost_work_after_failures_s", "lost_work_after_preemption_s", "time.redone_after_failures_s",
    "time.redone_after_preemption_s", "gpu_hours", "cost_usd", NULL
};
static const char *const microbench_fields[] = {
    "op", "ranks", "size_bytes", "m", "n", "k", "precision", "kind", "files", "predicted_s",
    "predicted_busbw_GBps", "predicted_algbw_GBps", "predicted_GBps", "predicted_tflops", "model", "measured_s",
    "measured_busbw_GBps", "measured_algbw_GBps", "measured_GBps", "measured_tflops", "error_pct",
    "measured_min_s", "measured_q1_s", "measured_q3_s", "measured_max_s", "warmup", "reps", "iters",
    "measured_read_s", "measured_read_GBps", "note", "measured_median_s", NULL
};
static const char *const queue_fields[] = {
    "name", "quota_gpus", "jobs", "started", "waiting", "gpu_hours", "quota_share", "mean_wait_s",
    "p95_wait_s", "slowdown", NULL
};
static const char *const service_fields[] = {
    "name", "requests", "replicas", "output_tokens_per_s", "ttft_p50_s", "ttft_p99_s",
    "tpot_p50_s", "tpot_p99_s", "e2e_p99_s", "slo_attainment", "goodput_requests_per_s", NULL
};
static const char *const cluster_fields[] = {
    "nodes", "gpus", "gpu_utilization", "gpu_hours", "gpu_busy_hours", "cost_usd", "energy_kwh",
    "co2_kg", "cost.owned", "cost.compute_usd", "cost.storage_usd", "cost.cloud_usd",
    "cost.electricity_usd", "cost.cloud_gpu_hours", "cost.storage_tb_months", "cost.gpu_kwh",
    "cost.overhead_kwh", "cost.it_kwh", "cost.avg_it_power_kw", "cost.avg_power_kw", "cost.pue",
    "cost.carbon_kg_per_kwh", "cost.electricity_usd_per_kwh", "gpu_hours_by_state.training", "gpu_hours_by_state.checkpoint",
    "gpu_hours_by_state.restarting", "gpu_hours_by_state.batch", "gpu_hours_by_state.idle",
    "nodes_drained",
    /* schema version 4 (ACCOUNTING_SQL) */
    "gpu_utilization_allocated", "gpu_utilization_productive", "gpu_productive_hours", "gpu_hours_by_state.serving", NULL
};

#define EVENT_BATCH 16384

typedef struct pending_event {
    double t_s;
    size_t entity, kind, detail;       /* offsets into the arena */
} pending_event;

/* The job and service states whose sum, taken from the cluster's GPUs, is
 * idle. */
#define N_BUSY 5
static const char *const busy_names[N_BUSY] = { "gpus_training", "gpus_checkpoint", "gpus_restarting",
                                                "gpus_batch", "gpus_serving" };

struct store {
    sqlite3 *db;
    char *path;
    int64_t run;
    int finished;
    int interrupted;                   /* store_run_interrupted(): finish leaves it 'incomplete' */
    int failed;                        /* sticky: a write during the run failed */
    char why[512];
    /* the sink */
    series_set *ss;
    int *series_of;                    /* metric id -> series index, -1 none */
    int n_of;
    char **series_entity, **series_name;
    int n_names, cap_names;
    int busy_of[N_BUSY];                    /* busy_names[i] -> series, -1 none */
    double busy_value[N_BUSY];
    int idle;                          /* series of gpus_idle */
    int gpus;
    pending_event *ev;
    int n_ev;
    char *arena;
    size_t arena_n, arena_cap;
    int64_t seq;
    sqlite3_stmt *ins_event;
};

/* SQLite's message with the OS error behind it, e.g. "disk I/O error (File
 * too large)": SQLite's own words rarely say that the disk is full. */
static const char *db_why(sqlite3 *db, int rc, char *buf, size_t len) {
    if ((rc & 0xff) == SQLITE_NOMEM || (!db && rc != SQLITE_OK)) {
        snprintf(buf, len, "out of memory");
        return buf;
    }
    if (sqlite3_errcode(db) == SQLITE_OK) {   /* the handle's error was reset: the code says it */
        snprintf(buf, len, "%s", sqlite3_errstr(rc));
        return buf;
    }
    int e = sqlite3_system_errno(db);
    if (e) snprintf(buf, len, "%s (%s)", sqlite3_errmsg(db), strerror(e));
    else snprintf(buf, len, "%s", sqlite3_errmsg(db));
    return buf;
}

int store_sql_status(int rc) {
    return (rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT ? STORE_BAD_INPUT : STORE_FAILED;
}

static int exec(sqlite3 *db, const char *sql) {
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* ---- opening and the schema ---------------------------------------------- */

static int int_pragma(sqlite3 *db, const char *sql, int *out) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* Schema version 3: what measured_s is (the hardware's statistic: the
 * fastest repetition or the median), the median beside it, and the cpu
 * backend's measured core peak. */
#define STATISTIC_SQL \
    "ALTER TABLE microbenchmarks ADD COLUMN measured_median_s REAL;\n" \
    "ALTER TABLE hardware ADD COLUMN statistic TEXT;   -- measured_s is: 'min' | 'median'\n" \
    "ALTER TABLE hardware ADD COLUMN peak_fp64_flops REAL;   -- cpu: one core's FMA peak, measured\n" \
    "ALTER TABLE hardware ADD COLUMN peak_fp32_flops REAL;\n"

/* Schema version 4, part 1: utilisation by allocation and by work kept, named
 * apart (gpu_utilization stays, meaning allocation), and training work lost
 * to failures and to preemption as separate columns (lost_work_s and
 * time_redone_s stay, the sum of the two). */
#define ACCOUNTING_SQL \
    "ALTER TABLE runs ADD COLUMN gpu_utilization_allocated REAL;   -- = gpu_utilization: GPUs held / provisioned\n" \
    "ALTER TABLE runs ADD COLUMN gpu_utilization_productive REAL;  -- work kept / provisioned GPU-time\n" \
    "ALTER TABLE runs ADD COLUMN gpu_productive_hours REAL;\n" \
    "ALTER TABLE jobs ADD COLUMN lost_work_after_failures_s REAL;\n" \
    "ALTER TABLE jobs ADD COLUMN lost_work_after_preemption_s REAL;\n" \
    "ALTER TABLE jobs ADD COLUMN time_redone_after_failures_s REAL;\n" \
    "ALTER TABLE jobs ADD COLUMN time_redone_after_preemption_s REAL;\n"
/* Schema version 4, part 2: the GPU-hours held by inference replicas (the JSON's
 * cluster.gpu_hours_by_state.serving; idle is the GPUs minus all five busy
 * states), a service's SLO goodput (services[].goodput_requests_per_s:
 * requests per second that met every latency objective) and a job's own
 * GPU-hours and their cost (jobs[].gpu_hours, jobs[].cost_usd; the cluster's
 * cost is runs.cost_usd). Columns only, so
 * a version 3 file is read as it is (STORE_READ_OLDEST): its readers take
 * the missing columns as not known. */
#define SERVING_SQL \
    "ALTER TABLE runs ADD COLUMN gpu_hours_by_state_serving REAL;\n" \
    "ALTER TABLE services ADD COLUMN goodput_requests_per_s REAL;   -- requests/s that met the SLO\n" \
    "ALTER TABLE jobs ADD COLUMN gpu_hours REAL;        -- the GPUs the job held, integrated\n" \
    "ALTER TABLE jobs ADD COLUMN cost_usd REAL;         -- gpu_hours at its node type's price\n"

/* Upgrades from older schema versions: migrations[v - 1] takes version v
 * to v + 1. Additive only: new tables and columns, never a changed one. A
 * new file is created at version 2 (schema_sql) and migrated from there. */
static const char *const migrations[] = { HW_TABLES_SQL, STATISTIC_SQL, ACCOUNTING_SQL SERVING_SQL, NULL };

/* Check the file's identity and version; create or migrate the schema when
 * writing. Runs inside BEGIN IMMEDIATE when writing, so two processes
 * creating the same new file do not both create the schema. */
static int check_schema(store *st, store_mode mode, char *err, size_t errlen) {
    sqlite3 *db = st->db;
    int app = 0, ver = 0, tables = 0, rc;
    if ((rc = int_pragma(db, "PRAGMA application_id", &app)) != SQLITE_OK ||
        (rc = int_pragma(db, "PRAGMA user_version", &ver)) != SQLITE_OK ||
        (rc = int_pragma(db, "SELECT count(*) FROM sqlite_schema", &tables)) != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: %s", st->path,
               store_sql_status(rc) == STORE_BAD_INPUT ? "not an SQLite database (clustertwin results database expected)"
                                                 : sqlite3_errmsg(db));
        return store_sql_status(rc);
    }
    if (app != STORE_APPLICATION_ID && (app != 0 || tables > 0)) {
        errmsg_set(err, errlen, "%s: an SQLite database of another program, not clustertwin results", st->path);
        return STORE_BAD_INPUT;
    }
    if (app == 0) {                                    /* a new, empty file */
        if (mode == STORE_READ) {
            errmsg_set(err, errlen, "%s: an empty database, no runs in it", st->path);
            return STORE_BAD_INPUT;
        }
        char pragmas[128];
        snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
                 STORE_APPLICATION_ID, SCHEMA_SQL_VERSION);
        if ((rc = exec(db, schema_sql)) != SQLITE_OK || (rc = exec(db, pragmas)) != SQLITE_OK) {
            errmsg_set(err, errlen, "%s: cannot create the schema: %s", st->path, sqlite3_errmsg(db));
            return store_sql_status(rc);
        }
        ver = SCHEMA_SQL_VERSION;                      /* migrated below to the current version */
    }
    if (ver > STORE_SCHEMA_VERSION) {
        errmsg_set(err, errlen, "%s: written by a newer clustertwin (results schema version %d; this one "
                            "reads versions up to %d)", st->path, ver, STORE_SCHEMA_VERSION);
        return STORE_BAD_INPUT;
    }
    if (ver < STORE_SCHEMA_VERSION) {
        if (ver < 1 || ver > (int)(sizeof migrations / sizeof *migrations) - 1 || !migrations[ver - 1]) {
            errmsg_set(err, errlen, "%s: results schema version %d is not supported (this clustertwin "
                                "reads version %d)", st->path, ver, STORE_SCHEMA_VERSION);
            return STORE_BAD_INPUT;
        }
        if (mode == STORE_READ && ver >= STORE_READ_OLDEST) return STORE_OK;   /* read as it is */
        if (mode == STORE_READ) {
            errmsg_set(err, errlen, "%s: results schema version %d is older than this clustertwin's %d; "
                                "store a run in it once (run --db) to upgrade it", st->path, ver,
                   STORE_SCHEMA_VERSION);
            return STORE_BAD_INPUT;
        }
        for (int v = ver; v < STORE_SCHEMA_VERSION; v++) {
            char bump[64];
            snprintf(bump, sizeof bump, "PRAGMA user_version = %d;", v + 1);
            if ((rc = exec(db, migrations[v - 1])) != SQLITE_OK || (rc = exec(db, bump)) != SQLITE_OK) {
                errmsg_set(err, errlen, "%s: cannot upgrade the results schema from version %d: %s",
                       st->path, v, sqlite3_errmsg(db));
                return STORE_FAILED;
            }
        }
    }
    return STORE_OK;
}

/* PRAGMA quick_check on an existing file before anything reads or writes
 * it: a corrupt database is refused (STORE_BAD_INPUT, err naming the file
 * and what the check found) rather than written into or reported on. A
 * file that is not SQLite at all keeps its own message; a busy or failing
 * read is STORE_FAILED. */
static int quick_check(sqlite3 *db, const char *path, char *err, size_t errlen) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &q, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(q);
    int status = STORE_OK;
    if (rc == SQLITE_ROW) {
        const char *z = (const char *)sqlite3_column_text(q, 0);
        if (!z || strcmp(z, "ok")) {
            errmsg_set(err, errlen, "%s: the database is corrupt (quick_check: %.300s)", path, z ? z : "no answer");
            status = STORE_BAD_INPUT;
        }
    } else if ((rc & 0xff) == SQLITE_CORRUPT) {
        errmsg_set(err, errlen, "%s: the database is corrupt (quick_check: %.300s)", path, sqlite3_errmsg(db));
        status = STORE_BAD_INPUT;
    } else if ((rc & 0xff) == SQLITE_NOTADB) {
        errmsg_set(err, errlen, "%s: not an SQLite database (clustertwin results database expected)", path);
        status = STORE_BAD_INPUT;
    } else if (rc != SQLITE_DONE) {
        status = store_sql_status(rc);
        errmsg_set(err, errlen, "%s: cannot read: %s", path, sqlite3_errmsg(db));
    }
    sqlite3_finalize(q);
    return status;
}

int store_open(const char *path, store_mode mode, store **out, char *err, size_t errlen) {
    *out = NULL;
    if (!path || !*path) {
        errmsg_set(err, errlen, "results database: empty path");
        return STORE_BAD_INPUT;
    }
    /* Where the file is: a symlink is followed (the link stays a link); the
     * target is opened, and removed on failure only when this call made it. */
    char target[FILEOUT_PATH_MAX];
    int existed;
    unsigned tmode;
    if (fileout_resolve(path, target, sizeof target, &existed, &tmode) != 0) {
        errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return errno == ELOOP ? STORE_BAD_INPUT : STORE_FAILED;
    }
    struct stat sb = { .st_mode = (mode_t)tmode };
    if (existed && S_ISDIR(sb.st_mode)) {
        errmsg_set(err, errlen, "%s: is a directory (a results database file expected)", path);
        return STORE_BAD_INPUT;
    }
    if (existed && !S_ISREG(sb.st_mode)) {
        errmsg_set(err, errlen, "%s: not a regular file (a results database file expected)", path);
        return STORE_BAD_INPUT;
    }
    if (!existed && mode == STORE_READ) {
        errmsg_set(err, errlen, "%s: no such file", path);
        return STORE_BAD_INPUT;
    }
    store *st = calloc(1, sizeof *st);
    if (!st || !(st->path = strdup(path))) {
        free(st);
        errmsg_set(err, errlen, "%s: out of memory", path);
        return STORE_FAILED;
    }
    if (!existed && mode == STORE_WRITE) {
        /* A new file needs a writable directory; say so plainly (SQLite
         * would report its last fallback, often "No such file"). */
        char dir[4096];
        const char *slash = strrchr(target, '/');
        if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - target) + (slash == target), target);
        else snprintf(dir, sizeof dir, ".");
        if (access(dir, W_OK | X_OK) != 0) {
            errmsg_set(err, errlen, "%s: cannot open: cannot create the file: %s", path, strerror(errno));
            free(st->path);
            free(st);
            return STORE_FAILED;
        }
    }
    st->idle = -1;
    for (int i = 0; i < N_BUSY; i++) st->busy_of[i] = -1;
    /* Read-write even for reading: a run killed mid-transaction leaves a
     * hot journal that only a writer can roll back. */
    int flags = SQLITE_OPEN_READWRITE | (mode == STORE_WRITE ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(target, &st->db, flags, NULL), status = STORE_OK;
    if (rc != SQLITE_OK) {
        int e = st->db ? sqlite3_system_errno(st->db) : ENOMEM;
        errmsg_set(err, errlen, "%s: cannot open: %s", path, e ? strerror(e) : sqlite3_errmsg(st->db));
        status = STORE_FAILED;
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_timeout(st->db, 30000);
    if (mode == STORE_WRITE && sqlite3_db_readonly(st->db, "main") == 1) {
        errmsg_set(err, errlen, "%s: cannot write (permission denied)", path);
        status = STORE_FAILED;
        goto fail;
    }
    /* First of all, before a pragma reads the schema: is it intact? */
    if (existed && (status = quick_check(st->db, path, err, errlen)) != STORE_OK) goto fail;
    /* A run's last transaction can be tens of MB (60,000 jobs and their
     * JSON); a cache that holds it avoids spilling pages mid-transaction,
     * each spill an extra journal sync. */
    if ((rc = exec(st->db, "PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536")) != SQLITE_OK) {
        status = store_sql_status(rc);
        errmsg_set(err, errlen, "%s: %s", path, status == STORE_BAD_INPUT ? "not an SQLite database" : sqlite3_errmsg(st->db));
        goto fail;
    }
    if (mode == STORE_WRITE && (rc = exec(st->db, "BEGIN IMMEDIATE")) != SQLITE_OK) {
        status = store_sql_status(rc);
        errmsg_set(err, errlen, "%s: %s", path,
               status == STORE_BAD_INPUT ? "not an SQLite database (clustertwin results database expected)"
                                         : sqlite3_errmsg(st->db));
        goto fail;
    }
    status = check_schema(st, mode, err, errlen);
    if (mode == STORE_WRITE) {
        if (status == STORE_OK && (rc = exec(st->db, "COMMIT")) != SQLITE_OK) {
            status = store_sql_status(rc);
            char why[256];
            errmsg_set(err, errlen, "%s: cannot write: %s", path, db_why(st->db, rc, why, sizeof why));
        }
        if (status != STORE_OK) exec(st->db, "ROLLBACK");
    }
    if (status != STORE_OK) goto fail;
    *out = st;
    return STORE_OK;
fail:
    sqlite3_close(st->db);
    st->db = NULL;
    if (!existed && mode == STORE_WRITE) {
        char j[FILEOUT_PATH_MAX + 16];
        unlink(target);
        snprintf(j, sizeof j, "%s-journal", target);
        unlink(j);
    }
    store_close(st);
    return status;
}

void store_close(store *st) {
    if (!st) return;
    sqlite3_finalize(st->ins_event);
    sqlite3_close(st->db);
    series_free(st->ss);
    for (int i = 0; i < st->n_names; i++) {
        free(st->series_entity[i]);
        free(st->series_name[i]);
    }
    free(st->series_entity);
    free(st->series_name);
    free(st->series_of);
    free(st->ev);
    free(st->arena);
    free(st->path);
    free(st);
}

void *store_db(store *st) { return st->db; }
const char *store_path(const store *st) { return st->path; }
int64_t store_run_id(const store *st) { return st ? st->run : 0; }

/* ---- the sink ----------------------------------------------------------- */

static void sink_fail(store *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sink_fail(store *st, const char *fmt, ...) {
    if (st->failed) return;
    st->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->why, sizeof st->why, fmt, ap);
    va_end(ap);
}

/* A new series named (entity, name); its index or -1 (failed set). */
static int new_series(store *st, const char *entity, const char *name, double initial) {
    if (st->n_names == st->cap_names) {
        int n = st->cap_names ? 2 * st->cap_names : 16;
        char **e = realloc(st->series_entity, (size_t)n * sizeof *e);
        if (e) st->series_entity = e;
        char **m = e ? realloc(st->series_name, (size_t)n * sizeof *m) : NULL;
        if (m) st->series_name = m;
        if (!e || !m) {
            sink_fail(st, "%s: out of memory", st->path);
            return -1;
        }
        st->cap_names = n;
    }
    char *e = strdup(entity), *m = strdup(name);
    int i = e && m ? series_add(st->ss, initial) : -1;
    if (i < 0) {
        free(e);
        free(m);
        sink_fail(st, "%s: out of memory", st->path);
        return -1;
    }
    st->series_entity[st->n_names] = e;
    st->series_name[st->n_names++] = m;
    return i;
}

static void on_register(void *ctx, metric_id id, const char *entity, const char *name) {
    store *st = ctx;
    if (st->failed || st->finished || id < 0) return;
    if (id >= st->n_of) {
        int n = st->n_of ? st->n_of : 16;
        while (n <= id) n *= 2;
        int *p = realloc(st->series_of, (size_t)n * sizeof *p);
        if (!p) {
            sink_fail(st, "%s: out of memory", st->path);
            return;
        }
        for (int i = st->n_of; i < n; i++) p[i] = -1;
        st->series_of = p;
        st->n_of = n;
    }
    int i = new_series(st, entity, name, 0);
    st->series_of[id] = i;
    if (i >= 0 && !strcmp(entity, "cluster"))
        for (int k = 0; k < N_BUSY; k++)
            if (!strcmp(name, busy_names[k])) st->busy_of[k] = i;
}

static void on_sample(void *ctx, metric_id id, sim_time t, double value) {
    store *st = ctx;
    if (st->failed || st->finished || id < 0 || id >= st->n_of || st->series_of[id] < 0) return;
    int i = st->series_of[id];
    double t_s = sim_to_s(t);
    if (series_put(st->ss, i, t_s, value) < 0) sink_fail(st, "%s: out of memory", st->path);
    for (int k = 0; k < N_BUSY; k++) {
        if (st->busy_of[k] != i) continue;
        st->busy_value[k] = value;
        double busy = 0;
        for (int q = 0; q < N_BUSY; q++) busy += st->busy_value[q];
        if (series_put(st->ss, st->idle, t_s, st->gpus - busy) < 0) sink_fail(st, "%s: out of memory", st->path);
    }
}

/* "node 12: ..." -> 12; -1 when the detail does not start so. */
static long node_of(const char *detail) {
    if (strncmp(detail, "node ", 5) != 0) return -1;
    char *end;
    long n = strtol(detail + 5, &end, 10);
    return end > detail + 5 && n >= 0 ? n : -1;
}

/* Write the buffered events; inside the caller's transaction when txn. */
static int flush_events(store *st, int txn) {
    if (st->n_ev == 0) return SQLITE_OK;
    int rc = SQLITE_OK;
    if (!st->ins_event)
        rc = sqlite3_prepare_v2(st->db, "INSERT INTO events(run_id, seq, t_s, entity, kind, node, detail) "
                                        "VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &st->ins_event, NULL);
    if (rc == SQLITE_OK && !txn) rc = exec(st->db, "BEGIN IMMEDIATE");
    for (int i = 0; rc == SQLITE_OK && i < st->n_ev; i++) {
        const pending_event *e = &st->ev[i];
        sqlite3_stmt *q = st->ins_event;
        const char *detail = st->arena + e->detail;
        long node = node_of(detail);
        sqlite3_bind_int64(q, 1, st->run);
        sqlite3_bind_int64(q, 2, st->seq + i);
        sqlite3_bind_double(q, 3, e->t_s);
        sqlite3_bind_text(q, 4, st->arena + e->entity, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 5, st->arena + e->kind, -1, SQLITE_STATIC);
        if (node >= 0) sqlite3_bind_int64(q, 6, node);
        else sqlite3_bind_null(q, 6);
        sqlite3_bind_text(q, 7, detail, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        sqlite3_reset(q);
    }
    if (rc == SQLITE_OK && !txn) rc = exec(st->db, "COMMIT");
    if (rc != SQLITE_OK) {
        char why[256];
        sink_fail(st, "%s: cannot write events: %s", st->path, db_why(st->db, rc, why, sizeof why));
        if (!txn) exec(st->db, "ROLLBACK");
        return rc;
    }
    st->seq += st->n_ev;
    st->n_ev = 0;
    st->arena_n = 0;
    return SQLITE_OK;
}

static int arena_put(store *st, const char *z, size_t *off) {
    size_t n = strlen(z) + 1;
    if (st->arena_n + n > st->arena_cap) {
        size_t cap = st->arena_cap ? st->arena_cap : 65536;
        while (cap < st->arena_n + n) cap *= 2;
        char *p = realloc(st->arena, cap);
        if (!p) return -1;
        st->arena = p;
        st->arena_cap = cap;
    }
    memcpy(st->arena + st->arena_n, z, n);
    *off = st->arena_n;
    st->arena_n += n;
    return 0;
}

static void on_event(void *ctx, sim_time t, const char *entity, const char *kind, const char *detail) {
    store *st = ctx;
    if (st->failed || st->finished) return;
    pending_event *e = &st->ev[st->n_ev];
    e->t_s = sim_to_s(t);
    if (arena_put(st, entity ? entity : "", &e->entity) < 0 || arena_put(st, kind ? kind : "", &e->kind) < 0 ||
        arena_put(st, detail ? detail : "", &e->detail) < 0) {
        sink_fail(st, "%s: out of memory", st->path);
        return;
    }
    if (++st->n_ev == EVENT_BATCH) flush_events(st, 0);
}

static void on_close(void *ctx, sim_time t) {
    store *st = ctx;
    if (st->failed || st->finished) return;
    if (series_close(st->ss, sim_to_s(t)) < 0) sink_fail(st, "%s: out of memory", st->path);
}

/* ---- a run --------------------------------------------------------------- */

/* The runs row of a new run, status 'incomplete', stamped with the wall
 * clock. Returns SQLITE_DONE when inserted (outside a transaction the row
 * is durable at once). */
static int insert_run_row(store *st, const scenario *s) {
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(st->db,
                                "INSERT INTO runs(status, scenario, scenario_file, scenario_xml, seed, version, "
                                "wall_started_at) VALUES ('incomplete', ?, ?, ?, ?, ?, ?)", -1, &q, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(q, 1, s->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, s->file, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, s->xml_text ? s->xml_text : "", s->xml_text ? (int)s->xml_len : 0, SQLITE_STATIC);
        sqlite3_bind_int64(q, 4, (sqlite3_int64)s->seed);
        sqlite3_bind_text(q, 5, CT_VERSION, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 6, when, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
    }
    sqlite3_finalize(q);
    return rc;
}

int store_run_begin(store *st, const scenario *s, metric_bus *bus, char *err, size_t errlen) {
    if (st->run) {
        errmsg_set(err, errlen, "%s: a run is already being recorded", st->path);
        return STORE_FAILED;
    }
    st->ss = series_new(STORE_MAX_POINTS);
    st->ev = malloc(EVENT_BATCH * sizeof *st->ev);
    st->gpus = scenario_gpus(s);
    if (!st->ss || !st->ev || (st->idle = new_series(st, "cluster", "gpus_idle", st->gpus)) < 0) {
        errmsg_set(err, errlen, "%s: out of memory", st->path);
        return STORE_FAILED;
    }
    int rc = insert_run_row(st, s);   /* autocommit: the row is durable now */
    if (rc != SQLITE_DONE) {
        char why[256];
        errmsg_set(err, errlen, "%s: cannot write: %s", st->path, db_why(st->db, rc, why, sizeof why));
        return store_sql_status(rc);
    }
    st->run = sqlite3_last_insert_rowid(st->db);
    /* Once subscribed the store must stay open while the bus publishes, so
     * a failure from here on (out of memory in on_register) is reported by
     * store_run_finish. */
    metric_sink sink = { st, on_register, on_sample, on_event, on_close };
    if (metrics_subscribe(bus, &sink) < 0) {
        errmsg_set(err, errlen, "%s: out of memory", st->path);
        return STORE_FAILED;
    }
    return STORE_OK;
}

/* A prepared statement from SQL built at run time. */
static int prepare(store *st, const char *sql, sqlite3_stmt **q) {
    return sqlite3_prepare_v2(st->db, sql, -1, q, NULL);
}

/* Append to a growing string; -1 when out of memory. */
typedef struct sbuf {
    char *z;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->z ? b->z + b->n : NULL, b->z ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if (b->z && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *p = realloc(b->z, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->z = p;
        b->cap = cap;
    }
}

/* The column for a JSON field path: '.' -> '_'. */
static void sb_column(sbuf *b, const char *path) {
    char col[128];
    snprintf(col, sizeof col, "%s", path);
    for (char *p = col; *p; p++)
        if (*p == '.') *p = '_';
    sb_add(b, "%s", col);
}

/* "(SELECT json_group_object(...) FROM json_tree(src, root) WHERE the leaf
 * is not one of fields)": the fields without a column, as a JSON object
 * keyed by their path below root (NULL when there are none). json_tree
 * quotes keys that are not plain words in fullkey ($."end_s"); the quotes
 * are dropped to compare and to name. */
static void sb_extra(sbuf *b, const char *src, const char *root, const char *const *fields) {
    size_t skip = strlen(root) + 2;          /* "$" root "." */
    sb_add(b, "(SELECT NULLIF(json_group_object(substr(replace(t.fullkey, '\"', ''), %zu), t.atom), '{}') "
              "FROM json_tree(%s, '$%s') t WHERE t.type NOT IN ('object', 'array') "
              "AND replace(t.fullkey, '\"', '') NOT IN (",
           skip + 1, src, root);
    for (int i = 0; fields[i]; i++) sb_add(b, "%s'$%s.%s'", i ? ", " : "", root, fields[i]);
    sb_add(b, "))");
}

/* A json_tree fullkey below an array element without the quotes it puts
 * around keys that are not plain words (breakdown."compute_s"). */
static void unquote(const char *z, char *out, size_t len) {
    size_t n = 0;
    for (; *z && n + 1 < len; z++)
        if (*z != '"') out[n++] = *z;
    out[n] = 0;
}

/* Append z to b as a JSON string. */
static void sb_json_string(sbuf *b, const char *z) {
    sb_add(b, "\"");
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
        if (*p == '"' || *p == '\\') sb_add(b, "\\%c", *p);
        else if (*p < 0x20) sb_add(b, "\\u%04x", *p);
        else sb_add(b, "%c", *p);
    }
    sb_add(b, "\"");
}

/* Rows of `table` from the elements of the JSON array `array`, in one pass
 * over their leaves (json_tree parses the document once): a leaf whose path
 * has a column is bound to it as SQLite parsed it; the others are gathered
 * into the row's extra object. (json_extract per column re-reads the
 * element for every column: 20x slower on a 60,000-job run.) */
static int insert_array(store *st, const char *table, const char *array, const char *const *fields,
                        const char *json_text, sqlite3_int64 idx0) {
    int nf = 0;
    while (fields[nf]) nf++;
    sbuf b = { 0 }, x = { 0 };
    sb_add(&b, "INSERT INTO %s(run_id, idx", table);
    for (int i = 0; i < nf; i++) {
        sb_add(&b, ", ");
        sb_column(&b, fields[i]);
    }
    sb_add(&b, ", extra) VALUES (?1, ?2");
    for (int i = 0; i <= nf; i++) sb_add(&b, ", ?%d", i + 3);
    sb_add(&b, ")");
    char rsql[256];
    size_t skip = strlen(array) + 3;      /* "$." array "[" */
    snprintf(rsql, sizeof rsql,
             "SELECT t.fullkey, t.atom, t.type FROM json_tree(?1, '$.%s') t", array);
    sqlite3_stmt *ins = NULL, *rd = NULL;
    int rc = b.oom ? SQLITE_NOMEM : prepare(st, b.z, &ins);
    if (rc == SQLITE_OK) rc = prepare(st, rsql, &rd);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(rd, 1, json_text, -1, SQLITE_STATIC);
    sqlite3_int64 cur = -1;
    int nextra = 0;
    for (;;) {
        int more = rc == SQLITE_OK ? sqlite3_step(rd) : SQLITE_DONE;
        if (more != SQLITE_ROW && more != SQLITE_DONE) rc = more;
        int row = rc == SQLITE_OK && more == SQLITE_ROW;
        /* "$.jobs[12].breakdown.compute_s" -> key 12, path "breakdown.compute_s" */
        const char *full = row ? (const char *)sqlite3_column_text(rd, 0) : NULL;
        const char *type = row ? (const char *)sqlite3_column_text(rd, 2) : NULL;
        char path[256] = "";
        sqlite3_int64 key = -1;
        if (full && strlen(full) > skip) {
            char *end;
            key = strtoll(full + skip, &end, 10);
            if (end[0] == ']' && end[1] == '.') unquote(end + 2, path, sizeof path);
        }
        int starts = row && key >= 0 && key != cur;      /* the first row of the next element */
        if (rc == SQLITE_OK && cur >= 0 && (!row || starts)) {   /* element cur is whole */
            if (nextra) {
                sb_add(&x, "}");
                if (!x.oom) rc = sqlite3_bind_text(ins, nf + 3, x.z, -1, SQLITE_TRANSIENT);
            }
            if (rc == SQLITE_OK) rc = x.oom ? SQLITE_NOMEM : sqlite3_step(ins);
            if (rc == SQLITE_DONE) rc = SQLITE_OK;
            sqlite3_reset(ins);
            sqlite3_clear_bindings(ins);
        }
        if (rc != SQLITE_OK || !row) break;
        if (starts) {
            cur = key;
            nextra = 0;
            x.n = 0;
            rc = sqlite3_bind_int64(ins, 1, st->run);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(ins, 2, idx0 + key);
            if (rc != SQLITE_OK) break;
        }
        if (!path[0] || !type || !strcmp(type, "object") || !strcmp(type, "array")) continue;
        int i = 0;
        while (i < nf && strcmp(fields[i], path)) i++;
        if (i < nf) {
            if ((rc = sqlite3_bind_value(ins, i + 3, sqlite3_column_value(rd, 1))) != SQLITE_OK) break;
            continue;
        }
        const char *atom = (const char *)sqlite3_column_text(rd, 1);
        sb_add(&x, nextra++ ? "," : "{");
        sb_json_string(&x, path);
        if (!type || !strcmp(type, "null")) sb_add(&x, ":null");
        else if (!strcmp(type, "true") || !strcmp(type, "false")) sb_add(&x, ":%s", type);
        else if (!strcmp(type, "text")) {
            sb_add(&x, ":");
            sb_json_string(&x, atom ? atom : "");
        } else sb_add(&x, ":%s", atom ? atom : "null");
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(rd);
    free(b.z);
    free(x.z);
    return rc;
}

/* ---- the jobs array, a slice at a time ------------------------------------
 * A run's JSON holds one object per job: 250 bytes each, 2.5 GB for the ten
 * million rows a job trace may hold. Parsed whole by SQLite's json_tree it
 * cost about 1.5 KB of memory a job, and past SQLite's longest value (1 GB)
 * it could not be bound at all. So jobs[] is cut out of the text (our own
 * JSON writer's output: strings escaped, no comments) and inserted JOB_SLICE
 * elements at a time; a document too long for one value is kept in
 * runs.results_json with "jobs":[] (the jobs table holds them). */
#define JOB_SLICE 4096

static size_t skip_ws(const char *z, size_t i, size_t n) {
    while (i < n && (z[i] == ' ' || z[i] == '\n' || z[i] == '\r' || z[i] == '\t')) i++;
    return i;
}

/* The end of the JSON value that starts at z[i] (strings with their escapes,
 * objects and arrays by depth); n when it does not end. */
static size_t value_end(const char *z, size_t i, size_t n) {
    int depth = 0;
    for (; i < n; i++) {
        char c = z[i];
        if (c == '"') {
            for (i++; i < n && z[i] != '"'; i++)
                if (z[i] == '\\') i++;
            if (depth == 0) return i < n ? i + 1 : n;
        } else if (c == '{' || c == '[') depth++;
        else if (c == '}' || c == ']') {
            if (depth == 0) return i;          /* a literal's end: its container closes */
            if (--depth == 0) return i + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) return i;
    }
    return n;
}

/* Where the top-level member `key` (an array) sits in the document z:
 * 0 with [*a, *b) the array's text, -1 when there is none. */
static int find_array(const char *z, size_t n, const char *key, size_t *a, size_t *b) {
    size_t i = skip_ws(z, 0, n), klen = strlen(key);
    if (i >= n || z[i] != '{') return -1;
    for (i = skip_ws(z, i + 1, n); i < n && z[i] == '"';) {
        size_t k0 = i + 1, k1 = value_end(z, i, n) - 1;
        i = skip_ws(z, k1 + 1, n);
        if (i >= n || z[i] != ':') return -1;
        size_t v0 = skip_ws(z, i + 1, n), v1 = value_end(z, v0, n);
        if (k1 - k0 == klen && !memcmp(z + k0, key, klen) && v0 < n && z[v0] == '[') {
            *a = v0;
            *b = v1;
            return 0;
        }
        i = skip_ws(z, v1, n);
        if (i < n && z[i] == ',') i = skip_ws(z, i + 1, n);
    }
    return -1;
}

/* The jobs of the array text z[a, b), JOB_SLICE at a time. */
static int insert_jobs(store *st, const char *z, size_t a, size_t b) {
    sbuf x = { 0 };
    int rc = SQLITE_OK;
    sqlite3_int64 idx0 = 0;
    /* a slice is at most JOB_SLICE jobs and a quarter of the longest value */
    size_t most = (size_t)sqlite3_limit(st->db, SQLITE_LIMIT_LENGTH, -1) / 4;
    size_t i = skip_ws(z, a + 1, b);
    while (rc == SQLITE_OK && i < b && z[i] != ']') {
        x.n = 0;
        sb_add(&x, "{\"jobs\":[");
        int k = 0;
        while (k < JOB_SLICE && (k == 0 || x.n < most) && i < b && z[i] != ']') {
            size_t e = value_end(z, i, b);
            sb_add(&x, "%s%.*s", k ? "," : "", (int)(e - i), z + i);
            k++;
            i = skip_ws(z, e, b);
            if (i < b && z[i] == ',') i = skip_ws(z, i + 1, b);
        }
        sb_add(&x, "]}");
        rc = x.oom ? SQLITE_NOMEM : insert_array(st, "jobs", "jobs", job_fields, x.z, idx0);
        idx0 += k;
    }
    free(x.z);
    return rc;
}

/* The run row's figures from the JSON, and status 'complete' (an
 * interrupted run keeps 'incomplete'). */
static int update_run(store *st, const char *json_text, const char *fields_json, double bucket_s) {
    sbuf b = { 0 };
    sb_add(&b, "UPDATE runs SET status = '%s', results_json = ?4, series_bucket_s = ?3, ",
           st->interrupted ? "incomplete" : "complete");
    sb_add(&b, "scenario = json_extract(?2, '$.scenario'), seed = json_extract(?2, '$.seed'), "
               "version = json_extract(?2, '$.version'), wall_s = json_extract(?2, '$.wall_s'), "
               "simulated_s = json_extract(?2, '$.simulated_s'), events = json_extract(?2, '$.events'), "
               "failures_total = json_extract(?2, '$.failures.total')");
    for (int i = 0; cluster_fields[i]; i++) {
        sb_add(&b, ", ");
        sb_column(&b, cluster_fields[i]);
        sb_add(&b, " = json_extract(?2, '$.cluster.%s')", cluster_fields[i]);
    }
    sb_add(&b, ", cluster_extra = ");
    sb_extra(&b, "?2", ".cluster", cluster_fields);
    sb_add(&b, " WHERE id = ?1");
    if (b.oom) {
        free(b.z);
        return SQLITE_NOMEM;
    }
    sqlite3_stmt *q = NULL;
    int rc = prepare(st, b.z, &q);
    free(b.z);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, st->run);
        sqlite3_bind_text(q, 2, fields_json, -1, SQLITE_STATIC);
        sqlite3_bind_double(q, 3, bucket_s);
        sqlite3_bind_text(q, 4, json_text, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = sqlite3_changes(st->db) == 1 ? SQLITE_OK : SQLITE_NOTFOUND;
    }
    sqlite3_finalize(q);
    return rc;
}

static int insert_series_row(store *st, const char *entity, const char *name, sqlite3_int64 *id) {
    sqlite3_stmt *q = NULL;
    int rc = prepare(st, "INSERT INTO series(run_id, entity, name) VALUES (?, ?, ?)", &q);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, st->run);
        sqlite3_bind_text(q, 2, entity, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, name, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    *id = sqlite3_last_insert_rowid(st->db);
    return rc;
}

static int insert_point(sqlite3_stmt *q, sqlite3_int64 id, int k, double t, double dt, double mean, double mn,
                        double mx) {
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_int(q, 2, k);
    sqlite3_bind_double(q, 3, t);
    sqlite3_bind_double(q, 4, dt);
    sqlite3_bind_double(q, 5, mean);
    sqlite3_bind_double(q, 6, mn);
    sqlite3_bind_double(q, 7, mx);
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Every series, plus cluster cost_usd (so far) when the world did not
 * publish it: the run's cost accrues at a constant rate (provisioned
 * node-hours at the node price), so cost(t) = cost_usd * t / simulated_s. */
static int write_series(store *st, const world_totals *tot) {
    sqlite3_stmt *q = NULL;
    int rc = prepare(st, "INSERT INTO points(series_id, k, t_s, dt_s, mean, min, max) VALUES (?, ?, ?, ?, ?, ?, ?)", &q);
    int has_cost = 0;
    for (int i = 0; rc == SQLITE_OK && i < st->n_names; i++) {
        sqlite3_int64 id;
        if (!strcmp(st->series_entity[i], "cluster") && !strcmp(st->series_name[i], "cost_usd")) has_cost = 1;
        rc = insert_series_row(st, st->series_entity[i], st->series_name[i], &id);
        for (int k = 0; rc == SQLITE_OK && k < series_points(st->ss, i); k++) {
            double t, dt, mean, mn, mx;
            series_point(st->ss, i, k, &t, &dt, &mean, &mn, &mx);
            rc = insert_point(q, id, k, t, dt, mean, mn, mx);
        }
    }
    if (rc == SQLITE_OK && !has_cost && st->n_names > 0) {
        sqlite3_int64 id;
        rc = insert_series_row(st, "cluster", "cost_usd", &id);
        double T = tot->simulated_s, rate = T > 0 ? tot->cost_usd / T : 0;
        for (int k = 0; rc == SQLITE_OK && k < series_points(st->ss, 0); k++) {
            double t, dt, mean, mn, mx;
            series_point(st->ss, 0, k, &t, &dt, &mean, &mn, &mx);
            rc = insert_point(q, id, k, t, dt, rate * (t + dt / 2), rate * t, rate * (t + dt));
        }
    }
    sqlite3_finalize(q);
    return rc;
}

static int write_failure_kinds(store *st, const world *w) {
    sqlite3_stmt *q = NULL;
    int rc = prepare(st, "INSERT INTO failure_kinds(run_id, idx, component, cause, count) VALUES (?, ?, ?, ?, ?)", &q);
    for (int i = 0; rc == SQLITE_OK && i < world_failure_kinds(w); i++) {
        const char *comp, *cause;
        int count;
        world_failure_kind(w, i, &comp, &cause, &count);
        sqlite3_bind_int64(q, 1, st->run);
        sqlite3_bind_int(q, 2, i);
        sqlite3_bind_text(q, 3, comp, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 4, cause, -1, SQLITE_STATIC);
        sqlite3_bind_int(q, 5, count);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rc;
}

/* The hardware row, when the JSON has a hardware object. */
static int insert_hardware(store *st, const char *json_text) {
    sqlite3_stmt *q = NULL;
    int rc = prepare(st, "INSERT INTO hardware(run_id, backend, host, cpu, devices, libraries, ranks, profile, "
                         "profile_source, statistic, peak_fp64_flops, peak_fp32_flops) "
                         "SELECT ?1, json_extract(?2, '$.hardware.backend'), "
                         "json_extract(?2, '$.hardware.host'), json_extract(?2, '$.hardware.cpu'), "
                         "json_extract(?2, '$.hardware.devices'), json_extract(?2, '$.hardware.libraries'), "
                         "json_extract(?2, '$.hardware.ranks'), json_extract(?2, '$.hardware.profile'), "
                         "json_extract(?2, '$.hardware.profile_source'), json_extract(?2, '$.hardware.statistic'), "
                         "json_extract(?2, '$.hardware.peak_fp64_flops'), json_extract(?2, '$.hardware.peak_fp32_flops') "
                         "WHERE json_type(?2, '$.hardware') = 'object'", &q);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, st->run);
        sqlite3_bind_text(q, 2, json_text, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    return rc;
}

void store_run_interrupted(store *st) {
    if (st) st->interrupted = 1;
}

int store_run_finish(store *st, const world *w, const char *results_json, char *err, size_t errlen) {
    if (!st->run || st->finished) {
        errmsg_set(err, errlen, "%s: no run being recorded", st->path);
        return STORE_FAILED;
    }
    world_totals tot = world_get_totals(w);
    if (!st->failed && series_close(st->ss, tot.simulated_s) < 0) sink_fail(st, "%s: out of memory", st->path);
    if (!results_json) sink_fail(st, "%s: out of memory", st->path);
    if (st->failed) {
        errmsg_set(err, errlen, "%s (run %lld left incomplete)", st->why, (long long)st->run);
        st->finished = 1;
        return STORE_FAILED;
    }
    st->finished = 1;
    const char *step = "begin";
    int rc = exec(st->db, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) step = "events", rc = flush_events(st, 1);
    if (rc == SQLITE_OK) step = "series", rc = write_series(st, &tot);
    if (rc == SQLITE_OK) step = "failures", rc = write_failure_kinds(st, w);
    /* jobs[] a slice at a time; every other figure from the document
     * without jobs[] (SQLite's JSON functions parse what they are given,
     * and the jobs are nearly all of it); the document is kept whole in
     * runs.results_json unless it is longer than SQLite's longest value. */
    size_t n = strlen(results_json), a = 0, b = 0;
    int has_jobs = find_array(results_json, n, "jobs", &a, &b) == 0;
    char *rest = NULL;
    const char *doc = results_json;
    if (rc == SQLITE_OK && has_jobs) step = "jobs", rc = insert_jobs(st, results_json, a, b);
    if (rc == SQLITE_OK && has_jobs) {
        rest = malloc(n - (b - a) + 3);
        if (!rest) rc = SQLITE_NOMEM;
        else {
            memcpy(rest, results_json, a);
            memcpy(rest + a, "[]", 2);
            memcpy(rest + a + 2, results_json + b, n - b + 1);
            doc = rest;
        }
    }
    int whole = n < (size_t)sqlite3_limit(st->db, SQLITE_LIMIT_LENGTH, -1);
    if (rc == SQLITE_OK) step = "queues", rc = insert_array(st, "queues", "queues", queue_fields, doc, 0);
    if (rc == SQLITE_OK) step = "services", rc = insert_array(st, "services", "services", service_fields, doc, 0);
    if (rc == SQLITE_OK)
        step = "microbenchmarks", rc = insert_array(st, "microbenchmarks", "microbenchmarks", microbench_fields, doc, 0);
    if (rc == SQLITE_OK) step = "hardware", rc = insert_hardware(st, doc);
    if (rc == SQLITE_OK) step = "run", rc = update_run(st, whole ? results_json : doc, doc, series_bucket_s(st->ss));
    free(rest);
    if (rc == SQLITE_OK) step = "commit", rc = exec(st->db, "COMMIT");
    if (rc != SQLITE_OK) {
        char why[256];
        errmsg_set(err, errlen, "%s: cannot write the run (%s): %s (run %lld left incomplete)", st->path, step,
               db_why(st->db, rc, why, sizeof why), (long long)st->run);
        exec(st->db, "ROLLBACK");
        return STORE_FAILED;
    }
    return STORE_OK;
}

/* ---- runs recorded from their JSON alone (sweeps) ------------------------ */

int store_run_insert(store *st, const scenario *s, const char *results_json, int64_t *run_id, char *err,
                     size_t errlen) {
    int rc = insert_run_row(st, s);
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    const char *step = "run";
    if (rc == SQLITE_OK) {
        st->run = sqlite3_last_insert_rowid(st->db);
        step = "jobs", rc = insert_array(st, "jobs", "jobs", job_fields, results_json, 0);
    }
    if (rc == SQLITE_OK) step = "queues", rc = insert_array(st, "queues", "queues", queue_fields, results_json, 0);
    if (rc == SQLITE_OK) step = "services", rc = insert_array(st, "services", "services", service_fields, results_json, 0);
    if (rc == SQLITE_OK) step = "run", rc = update_run(st, results_json, results_json, 0);
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot write the run (%s): %s", st->path, step, sqlite3_errmsg(st->db));
        return store_sql_status(rc);
    }
    if (run_id) *run_id = st->run;
    return STORE_OK;
}

/* ---- measurements read back (calibration) ------------------------------- */

int store_measurements(store *st, const char *backend, store_measurement **out, int *n, char *err, size_t errlen) {
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = NULL;
    int rc = prepare(st, "SELECT m.op, m.ranks, m.size_bytes, m.m, m.n, m.k, m.precision, m.kind, m.files, "
                         "m.measured_s, m.measured_read_s, m.run_id, h.backend, h.host, h.peak_fp64_flops, "
                         "h.peak_fp32_flops, h.statistic "
                         "FROM microbenchmarks m JOIN runs r ON r.id = m.run_id "
                         "JOIN hardware h ON h.run_id = m.run_id "
                         "WHERE r.status = 'complete' AND m.measured_s > 0 AND (?1 IS NULL OR h.backend = ?1) "
                         "ORDER BY m.run_id, m.idx", &q);
    if (rc == SQLITE_OK && backend) sqlite3_bind_text(q, 1, backend, -1, SQLITE_STATIC);
    store_measurement *v = NULL;
    int cnt = 0, cap = 0;
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        const char *op = (const char *)sqlite3_column_text(q, 0);
        const char *prec = (const char *)sqlite3_column_text(q, 6), *kind = (const char *)sqlite3_column_text(q, 7);
        store_measurement x;
        memset(&x, 0, sizeof x);
        if (!op) continue;
        if (!strcmp(op, "gemm")) {
            x.c.kind = MBC_GEMM;
            x.c.m = sqlite3_column_int(q, 3);
            x.c.n = sqlite3_column_int(q, 4);
            x.c.k = sqlite3_column_int(q, 5);
            int p = prec ? precision_parse(prec) : -1;
            if (p < 0) continue;
            x.c.precision = (precision)p;
        } else if (!strcmp(op, "copy")) {
            int k = kind ? copy_kind_parse(kind) : -1;
            if (k < 0) continue;
            x.c.kind = MBC_COPY;
            x.c.copy = (copy_kind)k;
        } else if (!strcmp(op, "storage-write")) {
            x.c.kind = MBC_STORAGE;
            x.c.files = sqlite3_column_int(q, 8);
        } else {
            int o = coll_op_parse(op);
            if (o < 0) continue;
            x.c.kind = MBC_COLLECTIVE;
            x.c.op = (coll_op)o;
            x.c.ranks = sqlite3_column_int(q, 1);
        }
        x.c.size_bytes = sqlite3_column_double(q, 2);
        x.time_s = sqlite3_column_double(q, 9);
        x.read_s = sqlite3_column_double(q, 10);
        x.run_id = sqlite3_column_int64(q, 11);
        snprintf(x.backend, sizeof x.backend, "%s", sqlite3_column_text(q, 12) ? (const char *)sqlite3_column_text(q, 12) : "");
        snprintf(x.host, sizeof x.host, "%s", sqlite3_column_text(q, 13) ? (const char *)sqlite3_column_text(q, 13) : "");
        x.peak_fp64_flops = sqlite3_column_double(q, 14);      /* NULL reads as 0: not measured */
        x.peak_fp32_flops = sqlite3_column_double(q, 15);
        snprintf(x.statistic, sizeof x.statistic, "%s",
                 sqlite3_column_text(q, 16) ? (const char *)sqlite3_column_text(q, 16) : "median");   /* before v3: median */
        if (cnt == cap) {
            cap = cap ? 2 * cap : 64;
            store_measurement *p = realloc(v, (size_t)cap * sizeof *p);
            if (!p) {
                rc = SQLITE_NOMEM;
                break;
            }
            v = p;
        }
        v[cnt++] = x;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(q);
    if (rc != SQLITE_OK) {
        free(v);
        errmsg_set(err, errlen, "%s: cannot read the measurements: %s", st->path, sqlite3_errmsg(st->db));
        return STORE_FAILED;
    }
    *out = v;
    *n = cnt;
    return STORE_OK;
}
