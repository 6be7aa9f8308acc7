/*
 * store_batch: many rows of one table per INSERT statement (store_int.h:
 * store_batch_insert). A run writes ~300,000 events and 100,000 jobs on
 * the 10K-GPU year; one prepared single-row INSERT per row pays, for every
 * row, the statement's start and halt, opening a cursor on the table and
 * seeking it from the root, and resetting the statement. A multi-row
 * INSERT ... VALUES (...), (...) pays them once per STORE_BATCH_ROWS rows
 * (SQLite: "INSERT", https://sqlite.org/lang_insert.html, the VALUES
 * clause with several rows). The rows and their order are the same, so
 * the table is the same, rowids included.
 *
 * The rows come from a source that binds row i at a parameter offset. A
 * table's last rows (fewer than a statement holds) are asked for again,
 * one by one, for the table's single-row statement.
 */
#include "reports/store_int.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* "head VALUES (?, ...), ..." with rows rows of ncols parameters. */
static char *batch_sql(const char *head, int ncols, int rows) {
    size_t hn = strlen(head), n = hn + 8 + (size_t)rows * (3 * (size_t)ncols + 3);
    char *z = malloc(n), *p = z;
    if (!z) return NULL;
    memcpy(p, head, hn);
    p += hn;
    memcpy(p, " VALUES ", 8);
    p += 8;
    for (int r = 0; r < rows; r++) {
        if (r) *p++ = ',';
        *p++ = '(';
        for (int c = 0; c < ncols; c++) {
            if (c) *p++ = ',';
            *p++ = '?';
        }
        *p++ = ')';
    }
    *p = 0;
    return z;
}

int store_batch_rows(sqlite3 *db, int ncols) {
    int limit = sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, -1), rows = STORE_BATCH_ROWS;
    if (ncols > 0 && limit / ncols < rows) rows = limit / ncols;
    return rows < 1 ? 1 : rows;
}

int store_kept_batch(store *st, kept_stmt k, const char *head, int ncols, sqlite3_stmt **q) {
    if (st->kept[k]) return store_kept(st, k, NULL, q);
    char *sql = batch_sql(head, ncols, store_batch_rows(st->db, ncols));
    int rc = sql ? store_kept(st, k, sql, q) : SQLITE_NOMEM;
    free(sql);
    return rc;
}

/* Step q once and make it ready for the next rows. */
static int step(sqlite3_stmt *q) {
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int store_batch_insert(sqlite3_stmt *many, sqlite3_stmt *one, store_row_fn row, void *ctx, int64_t *n) {
    int ncols = sqlite3_bind_parameter_count(one);
    int rows = ncols > 0 ? sqlite3_bind_parameter_count(many) / ncols : 0, k = 0, rc = SQLITE_OK;
    int64_t i = 0;
    for (; rows > 1; i++) {
        rc = row(ctx, many, k * ncols, i);
        if (rc != SQLITE_OK) break;
        if (++k == rows) {
            if ((rc = step(many)) != SQLITE_OK) break;
            k = 0;
        }
    }
    sqlite3_reset(many);
    sqlite3_clear_bindings(many);
    if (rows > 1 && rc != SQLITE_DONE) return rc;
    /* the rows bound to no whole statement, one at a time */
    for (i -= k, rc = SQLITE_OK; rc == SQLITE_OK; i++) {
        rc = row(ctx, one, 0, i);
        if (rc == SQLITE_OK) rc = step(one);
    }
    if (n) *n = i - 1;
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}
