/*
 * storefix: what the results-database tests share (test_store,
 * test_store_open): a temporary folder for their files (the group's setup
 * and teardown), the small scenario they record, and reading the database
 * back with SQLite itself: a prepared statement, one number, one text.
 * Include after <cmocka.h>.
 */
#ifndef CT_TEST_STOREFIX_H
#define CT_TEST_STOREFIX_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* A 16-node H100 cluster for 20 days: a training job checkpointing every
 * 2 h under GPU and node failures, and 300 batch jobs. */
static const char small_xml[] =
    "<scenario name=\"store-test\" seed=\"1\" duration=\"20d\">"
    "<cluster><nodes type=\"dgx-h100\" count=\"16\"/>"
    "<storage name=\"ckpt\" kind=\"parallel-fs\" bandwidth=\"200GB/s\"/><spares warm=\"1\"/></cluster>"
    "<failures><failure component=\"gpu\" mtbf=\"3000h\" cause=\"faulty GPU\"/>"
    "<failure component=\"node\" mtbf=\"2000h\" mttr=\"1d\"/></failures>"
    "<workload><training name=\"job\" gpus=\"64\" tp=\"8\" pp=\"1\" dp=\"8\" sharding=\"fsdp\""
    " global-batch=\"64\" seq-len=\"4096\" tokens=\"300G\" storage=\"ckpt\"><model preset=\"llama3-8b\"/>"
    "<checkpoint interval=\"2h\" mode=\"async\" layout=\"sharded\"/></training>"
    "<jobs name=\"batch\" count=\"300\" arrivals=\"poisson\" rate=\"2/h\" gpus=\"8\" duration=\"3h\""
    " duration-distribution=\"exponential\"/></workload></scenario>";

/* The group's temporary folder (setup makes it, teardown removes it). */
static char tmpdir[256];

static inline int setup(void **state) {
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_store.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int teardown(void **state) {
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static inline const char *tpath(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* Reading the database back in a test: open, prepare (a failure fails the
 * test), and one value of a query. */
static inline sqlite3 *db_open(const char *path) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) fail_msg("open %s", path);
    return db;
}

static inline sqlite3_stmt *q(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    return st;
}

/* The first column of the first row of sql (with ?1 = a) as a double. */
static inline double num(sqlite3 *db, const char *sql, int64_t a) {
    sqlite3_stmt *st = q(db, sql);
    sqlite3_bind_int64(st, 1, a);
    double v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_double(st, 0) : NAN;
    sqlite3_finalize(st);
    return v;
}

static inline char *text(sqlite3 *db, const char *sql, int64_t a) {
    sqlite3_stmt *st = q(db, sql);
    sqlite3_bind_int64(st, 1, a);
    char *z = strdup(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)
                         ? (const char *)sqlite3_column_text(st, 0) : "");
    sqlite3_finalize(st);
    return z;
}

#endif
