/*
 * rundata_int: what the reader's files (reports/rundata*.c) share and no
 * one else sees: the reader's two handles and the column helpers.
 */
#ifndef CT_RUNDATA_INT_H
#define CT_RUNDATA_INT_H

#include <math.h>
#include <stdio.h>

#include <sqlite3.h>

#include "reports/rundata.h"
#include "reports/store.h"

struct rundata_db {
    store *st;                       /* opened STORE_READ: the file's check, and the sweepdb_* reads */
    sqlite3 *db;                     /* our own read-only connection */
};

/* Which run a read takes when none is named (id 0): the latest complete
 * run, else the latest; appended to a SELECT from runs. */
#define RD_DEFAULT_RUN "ORDER BY status = 'complete' DESC, id DESC LIMIT 1"

/* A column as a number, NAN for NULL. */
static inline double rd_col_num(sqlite3_stmt *q, int i) {
    return sqlite3_column_type(q, i) == SQLITE_NULL ? NAN : sqlite3_column_double(q, i);
}

/* A column as text into buf ("" for NULL), truncated to len. */
static inline void rd_col_text(sqlite3_stmt *q, int i, char *buf, size_t len) {
    const unsigned char *z = sqlite3_column_text(q, i);
    snprintf(buf, len, "%s", z ? (const char *)z : "");
}

/* Text columns into fixed buffers: column col into buf of len bytes. */
typedef struct rd_text_col { int col; char *buf; size_t len; } rd_text_col;
static inline void rd_cols_text(sqlite3_stmt *q, const rd_text_col *cols, size_t n) {
    for (size_t i = 0; i < n; i++) rd_col_text(q, cols[i].col, cols[i].buf, cols[i].len);
}
#define RD_TEXT(c, field) { (c), (field), sizeof(field) }

/* Copies the statement's current row into row (zeroed before). */
typedef void rd_fill_fn(sqlite3_stmt *q, void *row);

/* Appends every row q yields to the array *rows (*n items of size bytes),
 * fill copying each; q comes prepared and bound and is finalized here.
 * Returns SQLITE_OK, SQLITE_NOMEM, or the step's error; the rows read before
 * a failure stay in *rows, for the caller to free. */
int rd_read_rows(sqlite3_stmt *q, void **rows, int *n, size_t size, rd_fill_fn *fill);

/* 1 when table has the column (a file read at an older schema version may
 * not). */
int rd_has_column(sqlite3 *db, const char *table, const char *column);

#endif
