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

/* A column as a number, NAN for NULL. */
static inline double rd_col_num(sqlite3_stmt *q, int i) {
    return sqlite3_column_type(q, i) == SQLITE_NULL ? NAN : sqlite3_column_double(q, i);
}

/* A column as text into buf ("" for NULL), truncated to len. */
static inline void rd_col_text(sqlite3_stmt *q, int i, char *buf, size_t len) {
    const unsigned char *z = sqlite3_column_text(q, i);
    snprintf(buf, len, "%s", z ? (const char *)z : "");
}

/* 1 when table has the column (a file read at an older schema version may
 * not). */
int rd_has_column(sqlite3 *db, const char *table, const char *column);

#endif
