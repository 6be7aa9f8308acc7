/*
 * rundata: the reader's connection and one stored run as plain structs.
 * One query for the run row, one each for its jobs (O(jobs); a
 * 60,000-job run is ~25 MB in memory), failure kinds, queues and
 * services; series, events and raw rows are read on demand
 * (reports/rundata_series.c, reports/rundata_rows.c).
 */
#include "reports/rundata_int.h"
#include "base/errmsg.h"
#include "base/grow.h"

#include <stdlib.h>
#include <string.h>

const char *const rd_part_label[RD_PARTS] = { "compute", "TP comm", "pipeline bubble", "DP/FSDP comm",
                                              "optimizer", "other" };

int rd_has_column(sqlite3 *db, const char *table, const char *column) {
    sqlite3_stmt *q = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1, &q, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, column, -1, SQLITE_STATIC);
        if (sqlite3_step(q) == SQLITE_ROW) n = sqlite3_column_int(q, 0);
    }
    sqlite3_finalize(q);
    return n > 0;
}

int rd_read_rows(sqlite3_stmt *q, void **rows, int *n, size_t size, rd_fill_fn *fill) {
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (grow_array(rows, &cap, (size_t)*n + 1, size)) {
            rc = SQLITE_NOMEM;
            break;
        }
        char *row = (char *)*rows + (size_t)(*n)++ * size;
        memset(row, 0, size);
        fill(q, row);
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- the reader ---------------------------------------------------------- */

int rundata_open(const char *path, rundata_db **out, char *err, size_t errlen) {
    *out = NULL;
    rundata_db *rd = calloc(1, sizeof *rd);
    if (!rd) {
        errmsg_set(err, errlen, "%s: out of memory", path ? path : "");
        return STORE_FAILED;
    }
    /* The check, and the hot journal of a killed writer rolled back: the
     * store does both when it opens the file for reading. */
    int rc = store_open(path, STORE_READ, &rd->st, err, errlen);
    if (rc != STORE_OK) {
        free(rd);
        return rc;
    }
    if (sqlite3_open_v2(path, &rd->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot open: %s", path, rd->db ? sqlite3_errmsg(rd->db) : "out of memory");
        rundata_close(rd);
        return STORE_FAILED;
    }
    sqlite3_busy_timeout(rd->db, 30000);
    *out = rd;
    return 0;
}

void rundata_close(rundata_db *rd) {
    if (!rd) return;
    sqlite3_close(rd->db);
    store_close(rd->st);
    free(rd);
}

const char *rundata_path(const rundata_db *rd) { return store_path(rd->st); }

void rundata_free(rundata *r) {
    if (!r) return;
    free(r->scenario_xml);
    free(r->jobs);
    free(r->kinds);
    free(r->queues);
    free(r->services);
    free(r->parts);
    free(r);
}

static const char run_sql[] =
    "SELECT id, status, scenario, scenario_file, version, wall_started_at, seed, scenario_xml, wall_s, "
    "simulated_s, events, failures_total, json_array_length(results_json, '$.microbenchmarks'), nodes, gpus, "
    "gpu_utilization, gpu_hours, gpu_busy_hours, cost_usd, energy_kwh, co2_kg, gpu_hours_by_state_training, "
    "gpu_hours_by_state_checkpoint, gpu_hours_by_state_restarting, gpu_hours_by_state_batch, "
    "gpu_hours_by_state_idle, nodes_drained, series_bucket_s, %s FROM runs ";

static const char job_sql[] =
    "SELECT name, kind, queue, state, gpus, submit_s, start_s, end_s, queue_wait_s, step_time_s, steps_total, "
    "steps_done, mfu, model_tflops_per_gpu, tokens_per_s_per_gpu, breakdown_compute_s, breakdown_tp_comm_s, "
    "breakdown_pp_bubble_s, breakdown_dp_comm_s, breakdown_optimizer_s, breakdown_other_s, interruptions, "
    "lost_work_s, checkpoints, checkpoint_interval_s, checkpoint_write_s, ettr, time_elapsed_s, "
    "time_training_kept_s, time_redone_s, time_checkpoint_stall_s, time_restart_s, time_waiting_for_nodes_s, "
    "memory_per_gpu_total_bytes, %s FROM jobs WHERE run_id = ? ORDER BY idx";

/* The figures of a service, or of one of its classes or models, read from
 * the JSON object v (service_row's columns 0-15). */
#define SERVICE_COLS(v)                                                                                        \
    "json_extract(" v ", '$.name'), json_extract(" v ", '$.requests'), "                                     \
    "json_extract(" v ", '$.replicas'), json_extract(" v ", '$.output_tokens_per_s'), "                      \
    "json_extract(" v ", '$.ttft_p50_s'), json_extract(" v ", '$.ttft_p99_s'), "                             \
    "json_extract(" v ", '$.tpot_p50_s'), json_extract(" v ", '$.tpot_p99_s'), "                             \
    "json_extract(" v ", '$.e2e_p99_s'), json_extract(" v ", '$.slo_attainment'), "                          \
    "json_extract(" v ", '$.cost_per_million_tokens_usd'), json_extract(" v ", '$.requests_per_s'), "        \
    "json_extract(" v ", '$.goodput_requests_per_s'), json_extract(" v ", '$.gpu_hours'), "                  \
    "json_extract(" v ", '$.cost_usd'), json_extract(" v ", '$.output_tokens') "
#define SERVICES_OF_RUN "runs r, json_each(CASE WHEN json_valid(r.results_json) THEN r.results_json END, '$.services') s "

static const char service_sql[] =
    "SELECT " SERVICE_COLS("s.value") "FROM " SERVICES_OF_RUN "WHERE r.id = ? ORDER BY s.key";

/* The services' classes, then their models (docs/serving-slo.md): the
 * service columns, then the service's index, 0 class / 1 model, the index. */
static const char part_sql[] =
    "SELECT " SERVICE_COLS("c.value") ", s.key, 0, c.key FROM " SERVICES_OF_RUN ", json_each(s.value, '$.classes') c "
    "WHERE r.id = ?1 UNION ALL "
    "SELECT " SERVICE_COLS("c.value") ", s.key, 1, c.key FROM " SERVICES_OF_RUN ", json_each(s.value, '$.by_model') c "
    "WHERE r.id = ?1 ORDER BY 17, 18, 19";

/* One row per CDF point: service index, point index, percentile, TTFT, TPOT, e2e. */
static const char cdf_sql[] =
    "SELECT s.key, c.key, c.value, json_extract(s.value, '$.latency_cdf.ttft_s[' || c.key || ']'), "
    "json_extract(s.value, '$.latency_cdf.tpot_s[' || c.key || ']'), "
    "json_extract(s.value, '$.latency_cdf.e2e_s[' || c.key || ']') "
    "FROM runs r, json_each(CASE WHEN json_valid(r.results_json) THEN r.results_json END, '$.services') s, "
    "json_each(s.value, '$.latency_cdf.percentiles') c "
    "WHERE r.id = ? ORDER BY s.key, c.key";

/* The run row of id (0: the latest complete, else the latest). Returns
 * SQLITE_OK, SQLITE_DONE when there is no such run, SQLITE_NOMEM or the
 * read's error. */
static int load_run_row(sqlite3 *db, int64_t id, rundata *r) {
    char sql[2048];
    sqlite3_stmt *q = NULL;
    /* A version 3 file (read as it is) has none of version 4's columns. */
    int used = snprintf(sql, sizeof sql, run_sql,
                        rd_has_column(db, "runs", "gpu_hours_by_state_serving") ? "gpu_hours_by_state_serving" : "NULL");
    snprintf(sql + used, sizeof sql - (size_t)used, "%s",
             id > 0 ? "WHERE id = ?" : RD_DEFAULT_RUN);
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    if (rc != SQLITE_OK) return rc;
    if (id > 0) sqlite3_bind_int64(q, 1, id);
    if ((rc = sqlite3_step(q)) != SQLITE_ROW) {
        sqlite3_finalize(q);
        return rc;
    }
    r->id = sqlite3_column_int64(q, 0);
    const rd_text_col text[] = { RD_TEXT(1, r->status), RD_TEXT(2, r->scenario), RD_TEXT(3, r->scenario_file),
                                 RD_TEXT(4, r->version), RD_TEXT(5, r->wall_started_at) };
    rd_cols_text(q, text, sizeof text / sizeof *text);
    r->seed = sqlite3_column_int64(q, 6);
    const unsigned char *xml = sqlite3_column_text(q, 7);
    r->scenario_xml = strdup(xml ? (const char *)xml : "");
    double *f[] = { &r->wall_s, &r->simulated_s, &r->events, &r->failures_total, &r->microbenchmarks, &r->nodes,
                    &r->gpus, &r->gpu_utilization, &r->gpu_hours, &r->gpu_busy_hours, &r->cost_usd,
                    &r->energy_kwh, &r->co2_kg, &r->hours_training, &r->hours_checkpoint, &r->hours_restarting,
                    &r->hours_batch, &r->hours_idle, &r->nodes_drained, &r->bucket_s, &r->hours_serving };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) *f[i] = rd_col_num(q, 8 + (int)i);
    if (isnan(r->hours_serving)) {
        double d = r->gpu_busy_hours - r->hours_training - r->hours_checkpoint - r->hours_restarting - r->hours_batch;
        r->hours_serving = isnan(d) ? NAN : fmax(0, d);
    }
    sqlite3_finalize(q);
    return r->scenario_xml ? SQLITE_OK : SQLITE_NOMEM;
}

static void job_row(sqlite3_stmt *q, void *row) {
    rd_job *j = row;
    rd_col_text(q, 0, j->name, sizeof j->name);
    rd_col_text(q, 1, j->kind, sizeof j->kind);
    rd_col_text(q, 2, j->queue, sizeof j->queue);
    rd_col_text(q, 3, j->state, sizeof j->state);
    j->gpus = sqlite3_column_int(q, 4);
    double *g[] = { &j->submit_s, &j->start_s, &j->end_s, &j->queue_wait_s, &j->step_time_s, &j->steps_total,
                    &j->steps_done, &j->mfu, &j->model_tflops_per_gpu, &j->tokens_per_s_per_gpu,
                    &j->part_s[0], &j->part_s[1], &j->part_s[2], &j->part_s[3], &j->part_s[4], &j->part_s[5],
                    &j->interruptions, &j->lost_work_s, &j->checkpoints, &j->checkpoint_interval_s,
                    &j->checkpoint_write_s, &j->ettr, &j->elapsed_s, &j->kept_s, &j->redone_s,
                    &j->checkpoint_stall_s, &j->restart_s, &j->waiting_s, &j->memory_bytes, &j->gpu_hours,
                    &j->cost_usd };
    for (size_t i = 0; i < sizeof g / sizeof *g; i++) *g[i] = rd_col_num(q, 5 + (int)i);
}

static int load_jobs(sqlite3 *db, rundata *r) {
    char sql[2048];
    sqlite3_stmt *q = NULL;
    snprintf(sql, sizeof sql, job_sql, rd_has_column(db, "jobs", "cost_usd") ? "gpu_hours, cost_usd" : "NULL, NULL");
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(q, 1, r->id);
    return rd_read_rows(q, (void **)&r->jobs, &r->n_jobs, sizeof *r->jobs, job_row);
}

static void kind_row(sqlite3_stmt *q, void *row) {
    rd_kind *k = row;
    rd_col_text(q, 0, k->component, sizeof k->component);
    rd_col_text(q, 1, k->cause, sizeof k->cause);
    k->count = sqlite3_column_int(q, 2);
}

static int load_kinds(sqlite3 *db, rundata *r) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT component, cause, count FROM failure_kinds WHERE run_id = ? ORDER BY idx",
                                -1, &q, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(q, 1, r->id);
    return rd_read_rows(q, (void **)&r->kinds, &r->n_kinds, sizeof *r->kinds, kind_row);
}

static void queue_row(sqlite3_stmt *q, void *row) {
    rd_queue *u = row;
    rd_col_text(q, 0, u->name, sizeof u->name);
    u->quota_gpus = rd_col_num(q, 1);
    u->gpu_hours = rd_col_num(q, 2);
    u->mean_wait_s = rd_col_num(q, 3);
    u->p95_wait_s = rd_col_num(q, 4);
    u->slowdown = rd_col_num(q, 5);
}

static int load_queues(sqlite3 *db, rundata *r) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT name, quota_gpus, gpu_hours, mean_wait_s, p95_wait_s, slowdown FROM queues "
                                    "WHERE run_id = ? ORDER BY idx", -1, &q, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(q, 1, r->id);
    return rd_read_rows(q, (void **)&r->queues, &r->n_queues, sizeof *r->queues, queue_row);
}

static void service_row(sqlite3_stmt *q, void *row) {
    rd_service *v = row;
    rd_col_text(q, 0, v->name, sizeof v->name);
    double *g[] = { &v->requests, &v->replicas, &v->output_tokens_per_s, &v->ttft_p50_s, &v->ttft_p99_s,
                    &v->tpot_p50_s, &v->tpot_p99_s, &v->e2e_p99_s, &v->slo_attainment,
                    &v->cost_per_million_tokens_usd, &v->requests_per_s, &v->goodput_requests_per_s,
                    &v->gpu_hours, &v->cost_usd, &v->output_tokens };
    for (size_t i = 0; i < sizeof g / sizeof *g; i++) *g[i] = rd_col_num(q, 1 + (int)i);
    if (isnan(v->goodput_requests_per_s)) v->goodput_requests_per_s = v->requests_per_s * v->slo_attainment;
    v->parent = -1;
}

static void part_row(sqlite3_stmt *q, void *row) {
    rd_service *v = row;
    service_row(q, row);
    v->parent = sqlite3_column_int(q, 16);
    v->is_model = sqlite3_column_int(q, 17);
}

/* r->parts: the services' classes and models (none in a run stored before them). */
static int load_parts(sqlite3 *db, rundata *r) {
    sqlite3_stmt *q = NULL;
    int rc;
    if (!r->n_services) return SQLITE_OK;
    if ((rc = sqlite3_prepare_v2(db, part_sql, -1, &q, NULL)) != SQLITE_OK) return rc;
    sqlite3_bind_int64(q, 1, r->id);
    return rd_read_rows(q, (void **)&r->parts, &r->n_parts, sizeof *r->parts, part_row);
}

/* r->services from the stored results JSON (none when it has none). */
static int load_services(sqlite3 *db, rundata *r) {
    sqlite3_stmt *q = NULL;
    int rc;
    if ((rc = sqlite3_prepare_v2(db, service_sql, -1, &q, NULL)) != SQLITE_OK) return rc;
    sqlite3_bind_int64(q, 1, r->id);
    rc = rd_read_rows(q, (void **)&r->services, &r->n_services, sizeof *r->services, service_row);
    if (rc != SQLITE_OK) return rc;
    if (!r->n_services) return SQLITE_OK;
    if ((rc = sqlite3_prepare_v2(db, cdf_sql, -1, &q, NULL)) != SQLITE_OK) return rc;
    sqlite3_bind_int64(q, 1, r->id);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int i = sqlite3_column_int(q, 0);
        if (i < 0 || i >= r->n_services) continue;
        rd_service *v = &r->services[i];
        if (v->n_cdf >= RD_CDF_MAX || sqlite3_column_int(q, 1) != v->n_cdf) continue;
        int k = v->n_cdf++;
        v->cdf_pct[k] = rd_col_num(q, 2);
        v->cdf_ttft[k] = rd_col_num(q, 3);
        v->cdf_tpot[k] = rd_col_num(q, 4);
        v->cdf_e2e[k] = rd_col_num(q, 5);
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* How far a run that is not complete got: its events stored so far. */
static int load_progress(sqlite3 *db, rundata *r) {
    r->events_stored = 0;
    r->last_event_s = NAN;
    if (!strcmp(r->status, "complete")) return SQLITE_OK;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*), max(t_s) FROM events WHERE run_id = ?", -1, &q, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, r->id);
        if (sqlite3_step(q) == SQLITE_ROW) {
            r->events_stored = sqlite3_column_double(q, 0);
            r->last_event_s = rd_col_num(q, 1);
        }
    }
    sqlite3_finalize(q);
    return SQLITE_OK;                /* a note in the headline, never a reason to fail */
}

int rundata_load(rundata_db *rd, int64_t id, rundata **out, char *err, size_t errlen) {
    *out = NULL;
    rundata *r = calloc(1, sizeof *r);
    if (!r) {
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    int rc = load_run_row(rd->db, id, r);
    if (rc == SQLITE_DONE) {
        if (id > 0) errmsg_set(err, errlen, "no run %lld in the database", (long long)id);
        else errmsg_set(err, errlen, "no runs in the database");
        rundata_free(r);
        return 2;
    }
    int (*const step[])(sqlite3 *, rundata *) = { load_jobs, load_kinds, load_queues, load_services, load_parts,
                                                           load_progress };
    for (size_t i = 0; i < sizeof step / sizeof *step && rc == SQLITE_OK; i++) rc = step[i](rd->db, r);
    if (rc != SQLITE_OK) {
        if (rc == SQLITE_NOMEM) errmsg_set(err, errlen, "out of memory");
        else errmsg_set(err, errlen, "cannot read the database: %s", sqlite3_errmsg(rd->db));
        rundata_free(r);
        return 1;
    }
    *out = r;
    return 0;
}

const rd_job *rundata_main_job(const rundata *r) {
    const rd_job *best = NULL;
    for (int i = 0; i < r->n_jobs; i++)
        if (!strcmp(r->jobs[i].kind, "training") && (!best || r->jobs[i].gpus > best->gpus)) best = &r->jobs[i];
    return best;
}
