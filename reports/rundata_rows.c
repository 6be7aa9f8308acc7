/*
 * rundata_rows: the reader's tables as rows: the run list, a run's
 * microbenchmark cases and where they were measured, and the raw rows the
 * CSV files copy (events: O(events), streamed to the caller row by row,
 * never held in memory).
 */
#include "reports/rundata_int.h"
#include "base/errmsg.h"

#include <stdlib.h>
#include <string.h>

static void run_row(sqlite3_stmt *q, void *row) {
    rd_run_row *w = row;
    w->id = sqlite3_column_int64(q, 0);
    rd_col_text(q, 1, w->status, sizeof w->status);
    rd_col_text(q, 2, w->scenario, sizeof w->scenario);
    w->seed = sqlite3_column_int64(q, 3);
    rd_col_text(q, 4, w->wall_started_at, sizeof w->wall_started_at);
    w->simulated_s = rd_col_num(q, 5);
    w->cost_usd = rd_col_num(q, 6);
}

int rundata_list(rundata_db *rd, rd_run_row **out, int *n, char *err, size_t errlen) {
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(rd->db, "SELECT id, status, scenario, seed, wall_started_at, simulated_s, cost_usd "
                                        "FROM runs ORDER BY id", -1, &q, NULL);
    if (rc == SQLITE_OK) rc = rd_read_rows(q, (void **)out, n, sizeof **out, run_row);
    else sqlite3_finalize(q);
    if (rc == SQLITE_OK) return 0;
    errmsg_set(err, errlen, "cannot read: %s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(rd->db));
    free(*out);
    *out = NULL;
    *n = 0;
    return 1;
}

static void micro_row(sqlite3_stmt *q, void *row) {
    rd_micro *c = row;
    rd_col_text(q, 0, c->op, sizeof c->op);
    rd_col_text(q, 1, c->kind, sizeof c->kind);
    rd_col_text(q, 2, c->precision, sizeof c->precision);
    c->ranks = sqlite3_column_int(q, 3);
    c->size_bytes = sqlite3_column_double(q, 4);
    int *shape[] = { &c->m, &c->n, &c->k, &c->files };
    for (size_t i = 0; i < sizeof shape / sizeof *shape; i++) *shape[i] = sqlite3_column_int(q, 5 + (int)i);
    double *fig[] = { &c->predicted_s, &c->measured_s, &c->measured_min_s, &c->measured_max_s, &c->error_pct };
    for (size_t i = 0; i < sizeof fig / sizeof *fig; i++) *fig[i] = rd_col_num(q, 9 + (int)i);
    rd_col_text(q, 14, c->note, sizeof c->note);
    c->reps = sqlite3_column_int(q, 15);
}

int rundata_micro(rundata_db *rd, const rundata *r, rd_micro **out) {
    *out = NULL;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(rd->db, "SELECT op, kind, precision, ranks, size_bytes, m, n, k, files, predicted_s, "
                                   "measured_s, measured_min_s, measured_max_s, error_pct, note, reps FROM "
                                   "microbenchmarks WHERE run_id = ? ORDER BY idx", -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return -1;
    }
    sqlite3_bind_int64(q, 1, r->id);
    int n = 0;
    if (rd_read_rows(q, (void **)out, &n, sizeof **out, micro_row) != SQLITE_OK) {
        free(*out);
        *out = NULL;
        return -1;
    }
    return n;
}

void rundata_hardware(rundata_db *rd, const rundata *r, rd_hardware *hw) {
    memset(hw, 0, sizeof *hw);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(rd->db, "SELECT backend, host, cpu, devices, libraries, ranks, profile, profile_source "
                                   "FROM hardware WHERE run_id = ?", -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, r->id);
        if (sqlite3_step(q) == SQLITE_ROW) {
            hw->found = 1;
            const rd_text_col text[] = { RD_TEXT(0, hw->backend), RD_TEXT(1, hw->host), RD_TEXT(2, hw->cpu),
                                         RD_TEXT(3, hw->devices), RD_TEXT(4, hw->libraries),
                                         RD_TEXT(6, hw->profile), RD_TEXT(7, hw->profile_source) };
            rd_cols_text(q, text, sizeof text / sizeof *text);
            hw->ranks = sqlite3_column_int(q, 5);
        }
    }
    sqlite3_finalize(q);
}

/* ---- raw rows for the CSV files ------------------------------------------ */

/* runs.csv: every column of runs but the two large texts. */
static void runs_sql(sqlite3 *db, char *sql, size_t len) {
    char cols[8192] = "";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('runs') WHERE name NOT IN "
                               "('scenario_xml', 'results_json')", -1, &q, NULL) == SQLITE_OK)
        while (sqlite3_step(q) == SQLITE_ROW) {
            size_t n = strlen(cols);
            snprintf(cols + n, sizeof cols - n, "%s\"%s\"", n ? ", " : "", (const char *)sqlite3_column_text(q, 0));
        }
    sqlite3_finalize(q);
    snprintf(sql, len, "SELECT %s FROM runs WHERE id IN (?1, ?2) ORDER BY id = ?2, id", cols);
}

#define ROWS_STR_(x) #x
#define ROWS_STR(x) ROWS_STR_(x)
#define STORE_MAX_POINTS_SQL ROWS_STR(STORE_MAX_POINTS)

static const char *const rows_sql[] = {
    [RD_ROWS_JOBS] = "SELECT * FROM jobs WHERE run_id IN (?1, ?2) ORDER BY run_id = ?2, idx",
    [RD_ROWS_FAILURES] = "SELECT * FROM failure_kinds WHERE run_id IN (?1, ?2) ORDER BY run_id = ?2, idx",
    [RD_ROWS_EVENTS] = "SELECT * FROM events WHERE run_id IN (?1, ?2) ORDER BY run_id = ?2, seq",
    /* every bucket: one the store left out (it repeats the one before:
     * store_run.c) is the last stored row at or before it, at t = k * W */
    [RD_ROWS_SERIES] = "WITH RECURSIVE ks(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM ks WHERE k < " STORE_MAX_POINTS_SQL
                       "), last(id, run_id, entity, name, n) AS (SELECT s.id, s.run_id, s.entity, s.name, "
                       "(SELECT MAX(k) FROM points WHERE series_id = s.id) FROM series s WHERE s.run_id IN (?1, ?2)) "
                       "SELECT l.run_id, l.entity, l.name, ks.k, CASE WHEN p.k = ks.k THEN p.t_s "
                       "ELSE ks.k * r.series_bucket_s END AS t_s, p.dt_s, p.mean, p.min, p.max "
                       "FROM last l JOIN runs r ON r.id = l.run_id JOIN ks ON ks.k <= l.n "
                       "JOIN points p ON p.series_id = l.id AND p.k = (SELECT MAX(k) FROM points "
                       "WHERE series_id = l.id AND k <= ks.k) ORDER BY l.run_id = ?2, l.id, ks.k",
};

#define ROWS_MAX_COLS 256

int rundata_rows(rundata_db *rd, rd_rows table, int64_t a, int64_t b, rd_row_fn row, void *ctx, char *err,
                 size_t errlen) {
    char sql[9000];
    if (table == RD_ROWS_RUNS) runs_sql(rd->db, sql, sizeof sql);
    else snprintf(sql, sizeof sql, "%s", rows_sql[table]);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(rd->db, sql, -1, &q, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "cannot read the database: %s", sqlite3_errmsg(rd->db));
        sqlite3_finalize(q);
        return 1;
    }
    sqlite3_bind_int64(q, 1, a);
    sqlite3_bind_int64(q, 2, b);
    int n = sqlite3_column_count(q), rc;
    if (n > ROWS_MAX_COLS) n = ROWS_MAX_COLS;
    const char *z[ROWS_MAX_COLS];
    unsigned char number[ROWS_MAX_COLS] = { 0 };
    for (int i = 0; i < n; i++) z[i] = sqlite3_column_name(q, i);
    row(ctx, n, z, number);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++) {
            int type = sqlite3_column_type(q, i);
            z[i] = (const char *)sqlite3_column_text(q, i);
            number[i] = type == SQLITE_INTEGER || type == SQLITE_FLOAT;
        }
        row(ctx, n, z, number);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        errmsg_set(err, errlen, "cannot read the database: %s", sqlite3_errmsg(rd->db));
        return 1;
    }
    return 0;
}
