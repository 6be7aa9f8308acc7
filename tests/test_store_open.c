/*
 * test_store_open: opening the SQLite results database (reports/store.h)
 * and misusing it.
 *
 * Expected, and where it comes from:
 * - the schema is created at version STORE_SCHEMA_VERSION with our
 *   application id and journal mode delete; reopening leaves it as it was;
 * - a newer version, another program's database, a file that is not a
 *   database, a directory, a FIFO and a corrupt database (a b-tree page
 *   overwritten) are refused (STORE_BAD_INPUT) with a message naming the
 *   file, and left as they were; a path in a missing directory fails
 *   (STORE_FAILED) and creates nothing; older versions are read as they
 *   are or upgraded in place by a writer; a symlink is followed and kept;
 * - calls out of order are errors, not crashes.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/storefix.h"

#include "reports/store.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

static void test_schema(void **state) {
    (void)state;
    const char *path = tpath("schema.db");
    char err[512];
    store *st = NULL;
    assert_int_equal(store_open(path, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    sqlite3 *db = db_open(path);
    assert_int_equal((int)num(db, "PRAGMA user_version", 0), STORE_SCHEMA_VERSION);
    assert_int_equal((int)num(db, "PRAGMA application_id", 0), 0x43545231);
    static const char *objects[] = { "runs", "jobs", "queues", "services", "failure_kinds", "events", "series", "points",
                                     "failure_events", "checkpoint_events", "cluster_series" };
    for (size_t i = 0; i < sizeof objects / sizeof *objects; i++) {
        sqlite3_stmt *s = q(db, "SELECT count(*) FROM sqlite_schema WHERE name = ?");
        sqlite3_bind_text(s, 1, objects[i], -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        if (sqlite3_column_int(s, 0) != 1) fail_msg("no %s in the schema", objects[i]);
        sqlite3_finalize(s);
    }
    char *mode = text(db, "PRAGMA journal_mode", 0);
    assert_string_equal(mode, "delete");
    free(mode);
    sqlite3_close(db);
    /* Reopening for reading and for writing leaves it as it was. */
    assert_int_equal(store_open(path, STORE_READ, &st, err, sizeof err), STORE_OK);
    store_close(st);
    assert_int_equal(store_open(path, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    store_close(NULL);
}

static void expect_refused(const char *path, store_mode mode, int want, const char *words) {
    char err[512] = "";
    store *st = (store *)1;
    int rc = store_open(path, mode, &st, err, sizeof err);
    if (rc != want) fail_msg("%s: status %d, want %d (%s)", path, rc, want, err);
    assert_null(st);
    if (!strstr(err, path)) fail_msg("message '%s' does not name %s", err, path);
    if (!strstr(err, words)) fail_msg("message '%s' lacks '%s'", err, words);
}

/* What schema version 5 added: dropped to make a file of version 4 or older. */
#define V5_COLUMNS_DROP "ALTER TABLE microbenchmarks DROP COLUMN groups; "

/* What schema versions 4 and 5 added: dropped to make a file of version 3 or older. */
#define V4_COLUMNS_DROP V5_COLUMNS_DROP \
    "ALTER TABLE runs DROP COLUMN gpu_utilization_allocated; ALTER TABLE runs DROP COLUMN gpu_utilization_productive; " \
    "ALTER TABLE runs DROP COLUMN gpu_productive_hours; ALTER TABLE jobs DROP COLUMN lost_work_after_failures_s; " \
    "ALTER TABLE jobs DROP COLUMN lost_work_after_preemption_s; " \
    "ALTER TABLE jobs DROP COLUMN time_redone_after_failures_s; " \
    "ALTER TABLE jobs DROP COLUMN time_redone_after_preemption_s; " \
    "ALTER TABLE runs DROP COLUMN gpu_hours_by_state_serving; ALTER TABLE services DROP COLUMN goodput_requests_per_s; " \
    "ALTER TABLE jobs DROP COLUMN gpu_hours; ALTER TABLE jobs DROP COLUMN cost_usd; "

static void test_open_errors(void **state) {
    (void)state;
    struct stat sb;
    /* A directory. */
    expect_refused(tmpdir, STORE_WRITE, STORE_BAD_INPUT, "is a directory");
    /* A text file: refused and left unchanged. */
    const char *txt = tpath("notes.txt");
    FILE *f = fopen(txt, "w");
    fputs("these are not the results you are looking for\n", f);
    fclose(f);
    expect_refused(txt, STORE_WRITE, STORE_BAD_INPUT, "not an SQLite database");
    expect_refused(txt, STORE_READ, STORE_BAD_INPUT, "not an SQLite database");
    assert_int_equal(stat(txt, &sb), 0);
    assert_int_equal((int)sb.st_size, 46);
    /* Another program's SQLite database. */
    const char *other = tpath("other.db");
    sqlite3 *db = NULL;
    sqlite3_open(other, &db);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_refused(other, STORE_WRITE, STORE_BAD_INPUT, "another program");
    /* Ours, written by a newer clustertwin. */
    const char *newer = tpath("newer.db");
    char err[512];
    store *st = NULL;
    assert_int_equal(store_open(newer, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(newer);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_refused(newer, STORE_WRITE, STORE_BAD_INPUT, "newer clustertwin");
    expect_refused(newer, STORE_READ, STORE_BAD_INPUT, "newer clustertwin");
    /* Version 1 (before the microbenchmarks and hardware tables): refused for
     * reading, upgraded in place by a writer. */
    const char *v1 = tpath("v1.db");
    assert_int_equal(store_open(v1, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v1);
    assert_int_equal(sqlite3_exec(db, V4_COLUMNS_DROP "DROP TABLE microbenchmarks; DROP TABLE hardware; PRAGMA user_version = 1",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_refused(v1, STORE_READ, STORE_BAD_INPUT, "older than this clustertwin");
    assert_int_equal(store_open(v1, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v1);
    assert_int_equal((int)num(db, "PRAGMA user_version", 0), STORE_SCHEMA_VERSION);
    assert_int_equal((int)num(db, "SELECT count(*) FROM sqlite_schema WHERE name IN ('microbenchmarks', 'hardware')", 0), 2);
    sqlite3_close(db);
    /* Version 2 (before the statistic columns): upgraded by a writer. */
    const char *v2 = tpath("v2.db");
    assert_int_equal(store_open(v2, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v2);
    assert_int_equal(sqlite3_exec(db, V4_COLUMNS_DROP "ALTER TABLE microbenchmarks DROP COLUMN measured_median_s; "
                                      "ALTER TABLE hardware DROP COLUMN statistic; ALTER TABLE hardware DROP COLUMN peak_fp64_flops; "
                                      "ALTER TABLE hardware DROP COLUMN peak_fp32_flops; "
                                      "PRAGMA user_version = 2",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_refused(v2, STORE_READ, STORE_BAD_INPUT, "older than this clustertwin");
    assert_int_equal(store_open(v2, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v2);
    assert_int_equal((int)num(db, "PRAGMA user_version", 0), STORE_SCHEMA_VERSION);
    assert_int_equal((int)num(db, "SELECT count(*) FROM pragma_table_info('hardware') WHERE name = 'statistic'", 0), 1);
    assert_int_equal(
        (int)num(db, "SELECT count(*) FROM pragma_table_info('microbenchmarks') WHERE name = 'measured_median_s'", 0), 1);
    sqlite3_close(db);
    /* Version 3 (before version 4's columns): read as it is (no upgrade, the
     * new columns absent), upgraded by a writer. */
    const char *v3 = tpath("v3.db");
    assert_int_equal(store_open(v3, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v3);
    assert_int_equal(sqlite3_exec(db, V4_COLUMNS_DROP "PRAGMA user_version = 3",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(store_open(v3, STORE_READ, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v3);
    assert_int_equal((int)num(db, "PRAGMA user_version", 0), 3);
    sqlite3_close(db);
    assert_int_equal(store_open(v3, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v3);
    assert_int_equal((int)num(db, "PRAGMA user_version", 0), STORE_SCHEMA_VERSION);
    assert_int_equal((int)num(db, "SELECT count(*) FROM pragma_table_info('runs') WHERE name LIKE 'gpu_utilization_%'", 0), 2);
    assert_int_equal((int)num(db, "SELECT count(*) FROM pragma_table_info('jobs') WHERE name LIKE '%redone_after_%' "
                                  "OR name LIKE 'lost_work_after_%'", 0), 4);
    assert_int_equal((int)num(db, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = "
                                  "'gpu_hours_by_state_serving'", 0), 1);
    assert_int_equal((int)num(db, "SELECT count(*) FROM pragma_table_info('services') WHERE name = "
                                  "'goodput_requests_per_s'", 0), 1);
    sqlite3_close(db);
    /* Version 4 (before the grouped GEMMs' column): read as it is, upgraded by a writer. */
    const char *v4 = tpath("v4.db");
    assert_int_equal(store_open(v4, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v4);
    assert_int_equal(sqlite3_exec(db, V5_COLUMNS_DROP "PRAGMA user_version = 4", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(store_open(v4, STORE_READ, &st, err, sizeof err), STORE_OK);
    store_close(st);
    assert_int_equal(store_open(v4, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    db = db_open(v4);
    assert_int_equal((int)num(db, "PRAGMA user_version", 0), STORE_SCHEMA_VERSION);
    assert_int_equal((int)num(db, "SELECT count(*) FROM pragma_table_info('microbenchmarks') WHERE name = 'groups'", 0), 1);
    sqlite3_close(db);
    /* Missing: reading refuses and creates nothing; an empty file has no runs. */
    const char *missing = tpath("missing.db");
    expect_refused(missing, STORE_READ, STORE_BAD_INPUT, "no such file");
    assert_int_not_equal(stat(missing, &sb), 0);
    const char *empty = tpath("empty.db");
    close(open(empty, O_CREAT | O_WRONLY, 0644));
    expect_refused(empty, STORE_READ, STORE_BAD_INPUT, "no runs");
    /* A directory that does not exist: the write fails, nothing is created. */
    const char *nodir = tpath("no/such/dir/r.db");
    expect_refused(nodir, STORE_WRITE, STORE_FAILED, "cannot open");
    assert_int_not_equal(stat(tpath("no"), &sb), 0);
    expect_refused("", STORE_WRITE, STORE_BAD_INPUT, "");
}

/* A corrupt database (a b-tree page overwritten, the header intact) is
 * refused for writing and for reading, named, and left byte for byte; a
 * FIFO is refused, not replaced; a symlinked database is followed and the
 * link kept (issue 16). */
static void test_corrupt_and_not_ours(void **state) {
    (void)state;
    const char *path = tpath("corrupt.db");
    char err[512];
    store *st = NULL;
    assert_int_equal(store_open(path, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    sqlite3 *db = db_open(path);
    /* the runs table's root page: not read when the schema is, so only a
     * check of the b-trees finds it broken */
    int psize = (int)num(db, "PRAGMA page_size", 0), root = (int)num(db, "SELECT rootpage FROM sqlite_schema WHERE name = 'runs'", 0);
    sqlite3_close(db);
    assert_true(root >= 2);
    char *junk = malloc((size_t)psize);
    assert_non_null(junk);
    memset(junk, 0xAA, (size_t)psize);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, junk, (size_t)psize, (off_t)psize * (root - 1)), psize);
    close(fd);
    free(junk);
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    expect_refused(path, STORE_WRITE, STORE_BAD_INPUT, "the database is corrupt (quick_check");
    expect_refused(path, STORE_READ, STORE_BAD_INPUT, "the database is corrupt (quick_check");
    assert_int_equal(stat(path, &after), 0);
    assert_true(before.st_size == after.st_size && before.st_mtime == after.st_mtime);
    /* a FIFO: refused, still a FIFO (and no wait for a writer) */
    const char *fifo = tpath("fifo.db");
    assert_int_equal(mkfifo(fifo, 0666), 0);
    expect_refused(fifo, STORE_WRITE, STORE_BAD_INPUT, "not a regular file");
    assert_int_equal(lstat(fifo, &after), 0);
    assert_true(S_ISFIFO(after.st_mode));
    /* a dangling symlink: the database is created at its target */
    const char *link = tpath("link.db");
    assert_int_equal(symlink("target.db", link), 0);
    assert_int_equal(store_open(link, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    store_close(st);
    assert_int_equal(lstat(link, &after), 0);
    assert_true(S_ISLNK(after.st_mode));
    assert_int_equal(stat(tpath("target.db"), &after), 0);
    assert_true(S_ISREG(after.st_mode) && after.st_size > 0);
}

/* Misuse is an error, not a crash. */
static void test_misuse(void **state) {
    (void)state;
    char err[512] = "";
    store *st = NULL;
    assert_int_equal(store_open(tpath("misuse.db"), STORE_WRITE, &st, err, sizeof err), STORE_OK);
    assert_int_equal(store_run_id(st), 0);
    scenario *s = NULL;
    assert_int_equal(scenario_load_memory(small_xml, strlen(small_xml), "t.xml", &s, err, sizeof err), 0);
    metric_bus *bus = metrics_new();
    world *w = world_new(s, bus, err, sizeof err);
    assert_int_equal(store_run_finish(st, w, "{}", err, sizeof err), STORE_FAILED);   /* not begun */
    assert_int_equal(store_run_begin(st, s, bus, err, sizeof err), STORE_OK);
    assert_int_equal(store_run_begin(st, s, bus, err, sizeof err), STORE_FAILED);           /* twice */
    world_run(w, 0);
    assert_int_equal(store_run_finish(st, w, NULL, err, sizeof err), STORE_FAILED);   /* no JSON */
    assert_non_null(strstr(err, "incomplete"));
    assert_int_equal(store_run_finish(st, w, "{}", err, sizeof err), STORE_FAILED);   /* already ended */
    store_close(st);
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_corrupt_and_not_ours),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
