/*
 * test_sweepdb: sweeps in the results database and merging databases
 * (reports/sweepdb.h, reports/store_sweep.c).
 *
 * Replicas recorded from their JSON read back per point and metric in
 * replica order, a missing value as NaN; "done" lists exactly the replicas
 * stored; the same sweep (scenario text, paths, overrides) is found again
 * and its replica count only grows; merging two databases that hold
 * different replicas of one sweep gives one sweep with all of them, and a
 * second merge of the same source adds nothing; a source of schema version
 * 3 (read as it is, without version 4's columns) merges, those columns
 * NULL; a source that is not a results database is refused and leaves the
 * destination as it was. A point that does not fit is recorded with its
 * reason (and merged with its sweep); a statistic with an infinite end is
 * stored with a null end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "reports/goal.h"
#include "reports/store.h"
#include "reports/sweepdb.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_sweepdb.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path(char *b, size_t n, const char *name) { snprintf(b, n, "%s/%s", dir, name); }

/* The first column of sql's first row, read through a connection of the
 * test's own (the store keeps its connection to itself). */
static int64_t count(store *st, const char *sql) {
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open_v2(store_path(st), &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return n;
}

/* A run's JSON as the contract has it, with the fields the tests read. */
static void run_json(char *b, size_t n, int seed, double end_s, int with_service) {
    char end[32];
    if (isnan(end_s)) snprintf(end, sizeof end, "null");
    else snprintf(end, sizeof end, "%.17g", end_s);
    snprintf(b, n,
             "{\"scenario\": \"t\", \"seed\": %d, \"version\": \"test\", \"simulated_s\": %g, \"wall_s\": 0.1,"
             " \"events\": 5, \"cluster\": {\"gpus\": 8, \"cost_usd\": %g},"
             " \"jobs\": [{\"name\": \"other\", \"kind\": \"batch\", \"end_s\": 1},"
             "            {\"name\": \"pretrain\", \"kind\": \"training\", \"end_s\": %s}],"
             " \"services\": [%s], \"failures\": {\"total\": 0}}",
             seed, isnan(end_s) ? 1000.0 : end_s, 100.0 * seed, end,
             with_service ? "{\"name\": \"chat\", \"requests\": 10, \"ttft_p99_s\": 0.5}" : "");
}

static void record(store *st, int64_t sw, const char *key, int r, double end_s) {
    scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "t");
    snprintf(s.file, sizeof s.file, "t.xml");
    s.xml_text = (char *)"<scenario name=\"t\"/>";
    s.xml_len = strlen(s.xml_text);
    s.seed = (uint64_t)(r + 1);
    char js[1024], err[512];
    run_json(js, sizeof js, r + 1, end_s, 1);
    assert_int_equal(sweepdb_record(st, sw, key, r, &s, js, err, sizeof err), STORE_OK);
}

static void test_record_and_read(void **state) {
    (void)state;
    char db[128], err[512];
    path(db, sizeof db, "a.db");
    store *st = NULL;
    assert_int_equal(store_open(db, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    int64_t sw = 0, again = 0;
    assert_int_equal(sweepdb_begin(st, "t", "t.xml", "<x/>", "[\"a/@b\"]", "[]", 3, &sw, err, sizeof err), STORE_OK);
    assert_true(sw > 0);
    assert_int_equal(sweepdb_point(st, sw, "[\"1\"]", "[1]", err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_point(st, sw, "[\"1\"]", "[1]", err, sizeof err), STORE_OK);   /* again: no-op */
    record(st, sw, "[\"1\"]", 2, 300);
    record(st, sw, "[\"1\"]", 0, 100);
    record(st, sw, "[\"1\"]", 1, NAN);                 /* never ended */
    unsigned char done[5];
    assert_int_equal(sweepdb_done(st, sw, "[\"1\"]", 5, done, err, sizeof err), STORE_OK);
    assert_memory_equal(done, ((unsigned char[]){ 1, 1, 1, 0, 0 }), 5);
    assert_int_equal(sweepdb_done(st, sw, "[\"2\"]", 5, done, err, sizeof err), STORE_OK);
    assert_memory_equal(done, ((unsigned char[]){ 0, 0, 0, 0, 0 }), 5);

    metric_path m;
    double *v = NULL;
    int n = 0;
    assert_int_equal(goal_metric_parse("jobs[pretrain].end_s", &m, err, sizeof err), 0);
    assert_int_equal(sweepdb_values(st, sw, "[\"1\"]", &m, &v, &n, err, sizeof err), STORE_OK);
    assert_int_equal(n, 3);
    assert_true(v[0] == 100 && isnan(v[1]) && v[2] == 300);             /* replica order */
    free(v);
    assert_int_equal(goal_metric_parse("cost_usd", &m, err, sizeof err), 0);    /* cluster's */
    assert_int_equal(sweepdb_values(st, sw, "[\"1\"]", &m, &v, &n, err, sizeof err), STORE_OK);
    assert_true(n == 3 && v[0] == 100 && v[1] == 200 && v[2] == 300);
    free(v);
    assert_int_equal(goal_metric_parse("services[chat].ttft_p99_s", &m, err, sizeof err), 0);
    assert_int_equal(sweepdb_values(st, sw, "[\"1\"]", &m, &v, &n, err, sizeof err), STORE_OK);
    assert_true(n == 3 && v[1] == 0.5);
    free(v);
    assert_int_equal(goal_metric_parse("services[nope].ttft_p99_s", &m, err, sizeof err), 0);
    assert_int_equal(sweepdb_values(st, sw, "[\"1\"]", &m, &v, &n, err, sizeof err), STORE_OK);
    assert_true(n == 3 && isnan(v[0]));
    free(v);

    /* the same sweep is found again; replicas only grow */
    assert_int_equal(sweepdb_begin(st, "t", "t.xml", "<x/>", "[\"a/@b\"]", "[]", 2, &again, err, sizeof err), STORE_OK);
    assert_int_equal(again, sw);
    int64_t other = 0;
    assert_int_equal(sweepdb_begin(st, "t", "t.xml", "<x/>", "[\"a/@c\"]", "[]", 2, &other, err, sizeof err), STORE_OK);
    assert_true(other != sw);
    int64_t latest = 0;
    assert_int_equal(sweepdb_latest(st, &latest), 1);
    assert_int_equal(latest, other);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT replicas FROM sweeps WHERE id = %lld", (long long)sw);
    assert_int_equal(count(st, sql), 3);
    /* the runs rows carry the JSON's figures, jobs rows too */
    assert_int_equal(count(st, "SELECT count(*) FROM runs r JOIN jobs j ON j.run_id = r.id "
                               "WHERE r.status = 'complete' AND j.name = 'pretrain'"), 3);
    store_close(st);
}


static void test_merge(void **state) {
    (void)state;
    char a[128], b[128], junk[128], err[512];
    path(a, sizeof a, "ma.db");
    path(b, sizeof b, "mb.db");
    path(junk, sizeof junk, "junk.db");
    store *sa = NULL, *sb = NULL;
    int64_t wa = 0, wb = 0;
    assert_int_equal(store_open(a, STORE_WRITE, &sa, err, sizeof err), STORE_OK);
    assert_int_equal(store_open(b, STORE_WRITE, &sb, err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_begin(sa, "t", "t.xml", "<x/>", "[\"p\"]", "[]", 2, &wa, err, sizeof err), STORE_OK);
    /* b has an unrelated sweep first, so ids differ between the files */
    int64_t unrelated = 0;
    assert_int_equal(sweepdb_begin(sb, "u", "u.xml", "<u/>", "[\"q\"]", "[]", 1, &unrelated, err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_point(sb, unrelated, "[\"9\"]", "[9]", err, sizeof err), STORE_OK);
    record(sb, unrelated, "[\"9\"]", 0, 9);
    assert_int_equal(sweepdb_begin(sb, "t", "t.xml", "<x/>", "[\"p\"]", "[]", 4, &wb, err, sizeof err), STORE_OK);
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "[\"2\"]" : "[\"1\"]";
        assert_int_equal(sweepdb_point(sa, wa, key, k ? "[2]" : "[1]", err, sizeof err), STORE_OK);
        assert_int_equal(sweepdb_point(sb, wb, key, k ? "[2]" : "[1]", err, sizeof err), STORE_OK);
        record(sa, wa, key, 0, 10 + k);              /* a: replicas 0, 1 */
        record(sa, wa, key, 1, 20 + k);
        record(sb, wb, key, 1, 20 + k);              /* b: replicas 1, 2 (1 duplicates a's) */
        record(sb, wb, key, 2, 30 + k);
    }
    store_close(sb);
    int added = 0, skipped = 0;
    assert_int_equal(sweepdb_merge(sa, b, &added, &skipped, err, sizeof err), STORE_OK);
    assert_int_equal(added, 3);                      /* the unrelated sweep's run and replica 2 of both points */
    assert_int_equal(skipped, 2);
    assert_int_equal(count(sa, "SELECT count(*) FROM sweeps"), 2);
    assert_int_equal(count(sa, "SELECT replicas FROM sweeps WHERE id = 1"), 4);
    assert_int_equal(count(sa, "SELECT count(*) FROM sweep_runs WHERE sweep_id = 1"), 6);
    assert_int_equal(count(sa, "SELECT count(*) FROM runs"), 7);
    assert_int_equal(count(sa, "SELECT count(*) FROM sweep_runs r LEFT JOIN runs u ON u.id = r.run_id WHERE u.id IS NULL"), 0);
    assert_int_equal(count(sa, "SELECT count(*) FROM jobs"), 14);
    /* the merged replica reads back with its own value */
    metric_path m;
    double *v = NULL;
    int n = 0;
    assert_int_equal(goal_metric_parse("jobs[pretrain].end_s", &m, err, sizeof err), 0);
    assert_int_equal(sweepdb_values(sa, wa, "[\"2\"]", &m, &v, &n, err, sizeof err), STORE_OK);
    assert_true(n == 3 && v[0] == 11 && v[1] == 21 && v[2] == 31);
    free(v);
    /* again: nothing new */
    assert_int_equal(sweepdb_merge(sa, b, &added, &skipped, err, sizeof err), STORE_OK);
    assert_int_equal(added, 0);                      /* every run of b is a sweep replica a holds now */
    assert_int_equal(skipped, 5);
    assert_int_equal(count(sa, "SELECT count(*) FROM runs"), 7);
    /* a version 3 source: no serving columns */
    char c[128];
    path(c, sizeof c, "mc.db");
    store *sc = NULL;
    int64_t wc = 0;
    assert_int_equal(store_open(c, STORE_WRITE, &sc, err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_begin(sc, "v", "v.xml", "<v/>", "[\"r\"]", "[]", 1, &wc, err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_point(sc, wc, "[\"5\"]", "[5]", err, sizeof err), STORE_OK);
    record(sc, wc, "[\"5\"]", 0, 55);
    store_close(sc);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(c, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "ALTER TABLE runs DROP COLUMN gpu_hours_by_state_serving; ALTER TABLE services "
                                      "DROP COLUMN goodput_requests_per_s; ALTER TABLE jobs DROP COLUMN gpu_hours; "
                                      "ALTER TABLE jobs DROP COLUMN cost_usd; ALTER TABLE microbenchmarks DROP COLUMN groups; PRAGMA user_version = 3", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    if (sweepdb_merge(sa, c, &added, &skipped, err, sizeof err) != STORE_OK) fail_msg("%s", err);
    assert_int_equal(added, 1);
    assert_int_equal(count(sa, "SELECT count(*) FROM runs"), 8);
    assert_int_equal(count(sa, "SELECT count(*) FROM runs WHERE gpu_hours_by_state_serving IS NULL"), 8);
    /* a file that is not a database */
    FILE *f = fopen(junk, "w");
    assert_non_null(f);
    fputs("this is not an SQLite database, only some text long enough to be read as a header", f);
    fclose(f);
    int64_t before = count(sa, "SELECT count(*) FROM runs");
    assert_int_equal(sweepdb_merge(sa, junk, &added, &skipped, err, sizeof err), STORE_BAD_INPUT);
    assert_int_equal(count(sa, "SELECT count(*) FROM runs"), before);
    store_close(sa);
}

static void test_unfit_and_stats(void **state) {
    (void)state;
    char a[128], b[128], err[512];
    path(a, sizeof a, "ua.db");
    path(b, sizeof b, "ub.db");
    store *sa = NULL, *sb = NULL;
    int64_t wa = 0, wb = 0;
    assert_int_equal(store_open(a, STORE_WRITE, &sa, err, sizeof err), STORE_OK);
    assert_int_equal(store_open(b, STORE_WRITE, &sb, err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_begin(sa, "t", "t.xml", "<x/>", "[\"p\"]", "[]", 1, &wa, err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_begin(sb, "t", "t.xml", "<x/>", "[\"p\"]", "[]", 1, &wb, err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_point(sb, wb, "[\"64\"]", "[64]", err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_unfit(sb, wb, "[\"64\"]", "job x needs 1024 GPUs, the cluster has 544", err, sizeof err),
                     STORE_OK);
    char *why = sweepdb_unfit_reason(sb, wb, "[\"64\"]");
    assert_non_null(why);
    assert_string_equal(why, "job x needs 1024 GPUs, the cluster has 544");
    free(why);
    assert_null(sweepdb_unfit_reason(sb, wb, "[\"1\"]"));
    store_close(sb);
    int added = 0, skipped = 0;
    assert_int_equal(sweepdb_merge(sa, b, &added, &skipped, err, sizeof err), STORE_OK);
    why = sweepdb_unfit_reason(sa, wa, "[\"64\"]");
    assert_non_null(why);
    free(why);
    /* statistics: replaced on the same key; an infinite end is null */
    assert_int_equal(sweepdb_point(sa, wa, "[\"1\"]", "[1]", err, sizeof err), STORE_OK);
    assert_int_equal(sweepdb_stat(sa, wa, "[\"1\"]", "jobs[x].end_s", "p90", 10, 0, 5, 4, INFINITY, 0.95, err, sizeof err),
                     STORE_OK);
    assert_int_equal(sweepdb_stat(sa, wa, "[\"1\"]", "jobs[x].end_s", "p90", 20, 0, 5, 4, 6, 0.95, err, sizeof err),
                     STORE_OK);
    assert_int_equal(count(sa, "SELECT count(*) FROM sweep_stats"), 1);
    assert_int_equal(count(sa, "SELECT runs FROM sweep_stats WHERE ci_high = 6"), 20);
    assert_int_equal(sweepdb_stat(sa, wa, "[\"1\"]", "jobs[x].end_s", "mean", 10, 0, 5, 4, INFINITY, 0.95, err, sizeof err),
                     STORE_OK);
    assert_int_equal(count(sa, "SELECT count(*) FROM sweep_stats WHERE statistic = 'mean' AND ci_high IS NULL"), 1);
    store_close(sa);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_read),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_unfit_and_stats),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
