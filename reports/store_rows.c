/*
 * store_rows: a run's JSON results as rows (jobs, queues, services,
 * microbenchmarks) and as the run row's figures.
 *
 * The columns are filled from the run's JSON results, parsed by SQLite's
 * JSON functions, so the database and the JSON agree field for field by
 * construction: a field at JSON path a.b has the column a_b; a field with
 * no column (added to the JSON after this schema) is kept in the row's
 * `extra` (or `cluster_extra`) JSON object under "a.b". A column added to
 * reports/schema.sql is filled once its JSON path is in the list here.
 *
 * Load: a sweep writes one run per replica and a run of a job trace
 * millions of jobs, so the INSERTs and the json_tree reader of each table
 * and the run row's UPDATE are kept prepared for the store's life.
 */
#include "reports/store.h"
#include "reports/store_int.h"
#include "base/errmsg.h"
#include "base/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

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
    "measured_read_s", "measured_read_GBps", "note", "measured_median_s",
    /* schema version 5 */
    "groups", NULL
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

int store_insert_run_row(store *st, const scenario *s, int64_t *id) {
    char when[32];
    store_utc_now(when, sizeof when);
    sqlite3_stmt *q = NULL;
    int rc = store_kept(st, KEPT_RUN_ROW,
                        "INSERT INTO runs(status, scenario, scenario_file, scenario_xml, seed, version, "
                        "wall_started_at) VALUES ('incomplete', ?, ?, ?, ?, ?, ?)", &q);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(q, 1, s->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, s->file, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, s->xml_text ? s->xml_text : "", s->xml_text ? (int)s->xml_len : 0, SQLITE_STATIC);
        sqlite3_bind_int64(q, 4, (sqlite3_int64)s->seed);
        sqlite3_bind_text(q, 5, CT_VERSION, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 6, when, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        store_kept_done(q);
        if (rc == SQLITE_OK) *id = sqlite3_last_insert_rowid(st->db);
    }
    return rc;
}

/* A growing string; oom is set (and sticks) when memory runs out. */
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
        if (GROW(b->z, b->cap, b->n + (size_t)k + 1)) {
            b->oom = 1;
            return;
        }
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

/* The tables filled from an array of the JSON results of the same name. */
typedef enum row_table { ROWS_JOBS, ROWS_QUEUES, ROWS_SERVICES, ROWS_MICROBENCHMARKS } row_table;
static const struct {
    const char *name;
    const char *const *fields;
} tables[] = { { "jobs", job_fields }, { "queues", queue_fields }, { "services", service_fields },
               { "microbenchmarks", microbench_fields } };

static int n_fields(const char *const *fields) {
    int n = 0;
    while (fields[n]) n++;
    return n;
}

/* The kept INSERT of table t (run_id, idx, a column per field, extra:
 * parameters 1, 2, 3..nf+2, nf+3) and its json_tree reader (parameter 1:
 * the document); with many (may be NULL), the INSERT of
 * store_batch_rows rows. */
static int row_statements(store *st, row_table t, sqlite3_stmt **ins, sqlite3_stmt **rd, sqlite3_stmt **many) {
    const char *table = tables[t].name;
    const char *const *fields = tables[t].fields;
    int nf = n_fields(fields);
    sbuf b = { 0 };
    sb_add(&b, "INSERT INTO %s(run_id, idx", table);
    for (int i = 0; i < nf; i++) {
        sb_add(&b, ", ");
        sb_column(&b, fields[i]);
    }
    sb_add(&b, ", extra)");
    int rc = b.oom ? SQLITE_NOMEM : SQLITE_OK;
    if (rc == SQLITE_OK && many) rc = store_kept_batch(st, KEPT_JOBS_MANY, b.z, nf + 3, many);
    sb_add(&b, " VALUES (?1, ?2");
    for (int i = 0; i <= nf; i++) sb_add(&b, ", ?%d", i + 3);
    sb_add(&b, ")");
    char rsql[256];
    snprintf(rsql, sizeof rsql, "SELECT t.fullkey, t.atom, t.type FROM json_tree(?1, '$.%s') t", table);
    if (rc == SQLITE_OK) rc = b.oom ? SQLITE_NOMEM : store_kept(st, (kept_stmt)(KEPT_ROWS_INSERT + t), b.z, ins);
    if (rc == SQLITE_OK) rc = store_kept(st, (kept_stmt)(KEPT_ROWS_TREE + t), rsql, rd);
    free(b.z);
    return rc;
}

/* Add a leaf without a column to the element's extra object x (its nth). */
static void extra_add(sbuf *x, int n, const char *path, const char *type, const char *atom) {
    sb_add(x, n ? "," : "{");
    sb_json_string(x, path);
    if (!type || !strcmp(type, "null")) sb_add(x, ":null");
    else if (!strcmp(type, "true") || !strcmp(type, "false")) sb_add(x, ":%s", type);
    else if (!strcmp(type, "text")) {
        sb_add(x, ":");
        sb_json_string(x, atom ? atom : "");
    } else sb_add(x, ":%s", atom ? atom : "null");
}

/* Insert the row of a whole element: its extra object (nextra leaves in x)
 * bound last. The statement is reset and its bindings cleared. */
static int insert_row(sqlite3_stmt *ins, int nf, sbuf *x, int nextra) {
    int rc = SQLITE_OK;
    if (nextra) {
        sb_add(x, "}");
        if (!x->oom) rc = sqlite3_bind_text(ins, nf + 3, x->z, -1, SQLITE_TRANSIENT);
    }
    if (rc == SQLITE_OK) rc = x->oom ? SQLITE_NOMEM : sqlite3_step(ins);
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    store_kept_done(ins);
    return rc;
}

/* Rows of table t from the elements of the JSON array of the same name, in
 * one pass over their leaves (json_tree parses the document once): a leaf
 * whose path has a column is bound to it as SQLite parsed it; the others
 * are gathered into the row's extra object. (json_extract per column
 * re-reads the element for every column: 20x slower on a 60,000-job run.)
 * Element k is row idx0 + k. */
static int insert_array(store *st, row_table t, const char *json_text, sqlite3_int64 idx0) {
    const char *const *fields = tables[t].fields;
    int nf = n_fields(fields);
    size_t skip = strlen(tables[t].name) + 3;      /* "$." array "[" */
    sbuf x = { 0 };
    sqlite3_stmt *ins = NULL, *rd = NULL;
    int rc = row_statements(st, t, &ins, &rd, NULL);
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
        if (rc == SQLITE_OK && cur >= 0 && (!row || starts)) rc = insert_row(ins, nf, &x, nextra);   /* cur is whole */
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
        extra_add(&x, nextra++, path, type, (const char *)sqlite3_column_text(rd, 1));
    }
    if (ins) store_kept_done(ins);
    if (rd) store_kept_done(rd);
    free(x.z);
    return rc;
}

/* ---- the jobs array -------------------------------------------------------
 * A run's JSON holds one object per job: 250 bytes each, 2.5 GB for the ten
 * million rows a job trace may hold. Parsed whole by SQLite's json_tree it
 * cost about 1.5 KB of memory a job, and past SQLite's longest value (1 GB)
 * it could not be bound at all; a slice at a time it was still 85% of the
 * store's time. So jobs[] is found in the text (our own JSON writer's
 * output: strings escaped, no comments) and its elements read straight
 * from it (store_jobs.c). runs.results_json keeps the document with
 * "jobs":[] when the jobs table holds every job in a form that gives back
 * the same text (store_doc.c rebuilds it), or when it is too long for one
 * value; otherwise whole. */

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
 * 0 with *a at the array's '[', -1 when there is none. The array itself is
 * not scanned: the jobs reader finds its end. */
int store_find_array(const char *z, size_t n, const char *key, size_t *a) {
    size_t i = skip_ws(z, 0, n), klen = strlen(key);
    if (i >= n || z[i] != '{') return -1;
    for (i = skip_ws(z, i + 1, n); i < n && z[i] == '"';) {
        size_t k0 = i + 1, k1 = value_end(z, i, n) - 1;
        i = skip_ws(z, k1 + 1, n);
        if (i >= n || z[i] != ':') return -1;
        size_t v0 = skip_ws(z, i + 1, n);
        if (k1 - k0 == klen && !memcmp(z + k0, key, klen) && v0 < n && z[v0] == '[') {
            *a = v0;
            return 0;
        }
        i = skip_ws(z, value_end(z, v0, n), n);
        if (i < n && z[i] == ',') i = skip_ws(z, i + 1, n);
    }
    return -1;
}

const char *const *store_job_paths(void) { return job_fields; }

int store_jobs_statements(store *st, sqlite3_stmt **many, sqlite3_stmt **one, const char *const **fields) {
    sqlite3_stmt *rd = NULL;
    *fields = job_fields;
    return row_statements(st, ROWS_JOBS, one, &rd, many);
}

/* The jobs of the array opening at z[a]: found written when they were
 * watched as the JSON was built, else scanned from the text
 * (store_jobs.c); *b receives its end. */
static int insert_jobs(store *st, const char *z, size_t a, size_t n, size_t *b) {
    int watched = store_jobs_watched(st, z, a, n, b);
    if (watched) return watched > 0 ? SQLITE_OK : SQLITE_MISMATCH;
    sqlite3_stmt *ins = NULL, *many = NULL;
    const char *const *fields;
    int rc = store_jobs_statements(st, &many, &ins, &fields);
    return rc == SQLITE_OK ? store_jobs_insert(st, many, ins, fields, z, a, n, b) : rc;
}

/* The run row's UPDATE: its figures from the JSON (?2), the document kept
 * (?4), the series' grid (?3) and its status (?5) for run ?1. */
static int update_statement(store *st, sqlite3_stmt **q) {
    if (st->kept[KEPT_UPDATE_RUN]) return store_kept(st, KEPT_UPDATE_RUN, NULL, q);
    sbuf b = { 0 };
    sb_add(&b, "UPDATE runs SET status = ?5, results_json = ?4, series_bucket_s = ?3, ");
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
    int rc = b.oom ? SQLITE_NOMEM : store_kept(st, KEPT_UPDATE_RUN, b.z, q);
    free(b.z);
    return rc;
}

/* The run row's figures from the JSON fields_json, the document json_text
 * kept, and status 'complete' (an interrupted run keeps 'incomplete'). */
static int update_run(store *st, const char *json_text, const char *fields_json, double bucket_s) {
    sqlite3_stmt *q = NULL;
    int rc = update_statement(st, &q);
    if (rc == SQLITE_OK) {
        store_bind(q, "Itdtt", st->run, fields_json, bucket_s, json_text, st->interrupted ? "incomplete" : "complete");
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = sqlite3_changes(st->db) == 1 ? SQLITE_OK : SQLITE_NOTFOUND;
        store_kept_done(q);
    }
    return rc;
}

/* ---- a recorded run's results (store_run_finish) -------------------------- */

/* The document without its jobs[] ("jobs":[] in its place), or NULL when
 * out of memory; [a, b) is the array's text. */
static char *without_jobs(const char *z, size_t n, size_t a, size_t b) {
    char *rest = malloc(n - (b - a) + 3);
    if (rest) {
        memcpy(rest, z, a);
        memcpy(rest + a, "[]", 2);
        memcpy(rest + a + 2, z + b, n - b + 1);
    }
    return rest;
}

int store_insert_results(store *st, const char *results_json, double bucket_s, const char **step) {
    /* jobs[] a slice at a time; every other figure from the document
     * without jobs[] (SQLite's JSON functions parse what they are given,
     * and the jobs are nearly all of it). runs.results_json keeps that
     * document when the jobs' rows rebuild them (store_run_json): the 10K-
     * GPU year's 33 MB were written twice, once as rows, and were the
     * largest part of its last commit ("The results store, fifth round",
     * docs/performance.md); else it is kept whole unless it is longer
     * than SQLite's longest value. */
    size_t n = strlen(results_json), a = 0, b = 0;
    int has_jobs = store_find_array(results_json, n, "jobs", &a) == 0, rc = SQLITE_OK;
    char *rest = NULL;
    const char *doc = results_json;
    if (has_jobs) *step = "jobs", rc = insert_jobs(st, results_json, a, n, &b);
    if (rc == SQLITE_OK && has_jobs) {
        rest = without_jobs(results_json, n, a, b);
        if (!rest) rc = SQLITE_NOMEM;
        else doc = rest;
    }
    int whole = (!has_jobs || st->jobs_odd) && n < (size_t)sqlite3_limit(st->db, SQLITE_LIMIT_LENGTH, -1);
    if (rc == SQLITE_OK) *step = "queues", rc = insert_array(st, ROWS_QUEUES, doc, 0);
    if (rc == SQLITE_OK) *step = "services", rc = insert_array(st, ROWS_SERVICES, doc, 0);
    if (rc == SQLITE_OK) *step = "microbenchmarks", rc = insert_array(st, ROWS_MICROBENCHMARKS, doc, 0);
    if (rc == SQLITE_OK) *step = "hardware", rc = store_insert_hardware(st, doc);
    if (rc == SQLITE_OK) *step = "run", rc = update_run(st, whole ? results_json : doc, doc, bucket_s);
    free(rest);
    return rc;
}

/* ---- runs recorded from their JSON alone (sweeps) ------------------------ */

int store_run_insert(store *st, const scenario *s, const char *results_json, int64_t *run_id, char *err,
                     size_t errlen) {
    int rc = store_insert_run_row(st, s, &st->run);
    const char *step = "run";
    if (rc == SQLITE_OK) step = "jobs", rc = insert_array(st, ROWS_JOBS, results_json, 0);
    if (rc == SQLITE_OK) step = "queues", rc = insert_array(st, ROWS_QUEUES, results_json, 0);
    if (rc == SQLITE_OK) step = "services", rc = insert_array(st, ROWS_SERVICES, results_json, 0);
    if (rc == SQLITE_OK) step = "run", rc = update_run(st, results_json, results_json, 0);
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot write the run (%s): %s", st->path, step, sqlite3_errmsg(st->db));
        return store_sql_status(rc);
    }
    if (run_id) *run_id = st->run;
    return STORE_OK;
}

