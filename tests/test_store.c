/*
 * test_store: the SQLite results database (reports/store.h).
 *
 * What it models: `clustertwin run FILE --db PATH` recording runs of a
 * 16-node H100 cluster (a training job hit by GPU and node failures,
 * checkpointing every 2 h, plus 300 batch jobs) into one database file.
 * (Opening the file, its schema and what is refused: test_store_open.)
 * Expected, and where it comes from:
 * - a run's rows equal its JSON results field for field: every leaf of
 *   jobs[i] and of cluster is its column (path a.b -> a_b) or is kept in
 *   extra, with the same value; every non-NULL column is a JSON leaf;
 * - the same run checked against the world itself (not the JSON): every
 *   bus event is a row; failure kinds and counts; each time series holds at
 *   most STORE_MAX_POINTS points and its integral equals the JSON's GPU-hours
 *   by state (to 1e-6: the JSON prints 10 digits);
 * - two runs and a reopen: ids, rows and cascade deletes;
 * - a writer SIGKILLed at random points (in a child process) leaves a
 *   database that passes PRAGMA integrity_check, earlier runs unchanged,
 *   the killed run 'incomplete' with no jobs and only whole event batches.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "tests/storefix.h"

#include "reports/json.h"
#include "reports/results.h"
#include "reports/rundata.h"
#include "reports/store.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

/* ~60,000 events: several event batches are committed during the run. */
static const char long_xml[] =
    "<scenario name=\"long\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"16\"/></cluster>"
    "<workload><jobs name=\"b\" count=\"20000\" arrivals=\"poisson\" rate=\"1200/h\" gpus=\"1\""
    " duration=\"10min\" duration-distribution=\"exponential\"/></workload></scenario>";

/* 1,057 batch jobs: written in three blocks of rows, 512, 512 and 33 (one
 * statement of 32 rows and one row alone). */
static const char blocks_xml[] =
    "<scenario name=\"blocks\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"16\"/></cluster>"
    "<workload><jobs name=\"b\" count=\"1057\" arrivals=\"poisson\" rate=\"600/h\" gpus=\"1\""
    " duration=\"10min\" duration-distribution=\"exponential\"/></workload></scenario>";

/* serving-chat-70b's fleet: 4 replicas of tp 2 on one 8-GPU node, all of
 * them from time 0 (taken while the world is built, before the store
 * subscribes). Expected: gpu_hours_by_state.serving is the whole node (8
 * GPUs x the simulated time), in the JSON, in its runs column and as the
 * integral of the gpus_serving series; nothing idle; the six states add up
 * to the provisioned GPU-hours; the service's SLO goodput is stored. */
static const char serving_xml[] =
    "<scenario name=\"serving-test\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
    "<workload><inference name=\"chat\" model=\"llama3-70b\" precision=\"fp8\" tp=\"2\" replicas=\"4\">"
    "<arrivals process=\"poisson\" rate=\"10/s\" count=\"2000\"/>"
    "<requests input-tokens=\"1000\" output-tokens=\"200\"/><slo ttft=\"1s\" tpot=\"50ms\" percentile=\"99\"/>"
    "</inference></workload></scenario>";

/* ---- running a scenario into a store ------------------------------------- */

/* FNV-1a of z and a separator, onto h: the events' texts in order. */
static uint64_t fnv(uint64_t h, const char *z) {
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (h ^ 0x1f) * 1099511628211ull;
}

/* The bus's events as a sink without on_eventv sees them: formatted by
 * the bus (vsnprintf), counted and hashed in publishing order. */
typedef struct seen {
    long n;
    uint64_t hash;
} seen;

static void count_event(void *ctx, sim_time t, const char *e, const char *k, const char *d) {
    (void)t;
    seen *c = ctx;
    c->n++;
    c->hash = fnv(fnv(fnv(c->hash, e), k), d ? d : "");
}

typedef struct recorded {
    int64_t id;
    char *json;                      /* the run's JSON results (malloc) */
    long bus_events;
    uint64_t bus_hash;
    world_totals tot;
    int n_kinds;
    char kinds[32][2][SC_NAME_MAX];
    int kind_count[32];
} recorded;

/* When > 0, the writer's connection gets this as SQLite's longest value
 * (SQLITE_LIMIT_LENGTH), as if the run's JSON were too long for one. */
static int max_value_bytes;

/* When set, the store reads the jobs as the JSON is built (store_run_watch,
 * as clustertwin run does) instead of from the finished text. */
static int watching;
/* When set, the first tweak_from in the run's JSON becomes tweak_to before
 * the store reads it (a job its row cannot give back). */
static const char *tweak_from, *tweak_to;

/* z with the first tweak_from replaced (malloc'd; z freed). */
static char *tweaked(char *z) {
    char *at = tweak_from ? strstr(z, tweak_from) : NULL;
    if (!at) return z;
    size_t a = (size_t)(at - z), nf = strlen(tweak_from), nt = strlen(tweak_to), n = strlen(z);
    char *out = malloc(n - nf + nt + 1);
    assert_non_null(out);
    memcpy(out, z, a);
    memcpy(out + a, tweak_to, nt);
    memcpy(out + a + nt, z + a + nf, n - a - nf + 1);
    free(z);
    return out;
}

/* Simulate xml with seed into the database at path; fills r. */
static void record(const char *path, const char *xml, unsigned long long seed, recorded *r) {
    char err[1024] = "";
    scenario *s = NULL;
    memset(r, 0, sizeof *r);
    if (scenario_load_memory(xml, strlen(xml), "test.xml", &s, err, sizeof err) != 0) fail_msg("%s", err);
    s->seed = seed;
    metric_bus *bus = metrics_new();
    world *w = world_new(s, bus, err, sizeof err);
    if (!w) fail_msg("%s", err);
    seen c = { 0, 14695981039346656037ull };
    metric_sink counter = { &c, NULL, NULL, count_event, NULL, NULL };
    assert_int_equal(metrics_subscribe(bus, &counter), 0);
    store *st = NULL;
    if (store_open(path, STORE_WRITE, &st, err, sizeof err) != STORE_OK) fail_msg("%s", err);
    if (max_value_bytes > 0) store_test_max_value_bytes(st, max_value_bytes);
    if (store_run_begin(st, s, bus, err, sizeof err) != STORE_OK) fail_msg("%s", err);
    r->id = store_run_id(st);
    world_run(w, 0);
    json *j = json_new();
    if (watching) store_run_watch(st, j);
    results_json(j, s, w, 0.25);
    r->json = tweaked(strdup(json_text(j, NULL)));
    r->bus_events = c.n;
    r->bus_hash = c.hash;
    if (store_run_finish(st, w, r->json, err, sizeof err) != STORE_OK) fail_msg("%s", err);
    r->tot = world_get_totals(w);
    r->n_kinds = world_failure_kinds(w);
    assert_true(r->n_kinds <= 32);
    for (int i = 0; i < r->n_kinds; i++) {
        const char *comp, *cause;
        world_failure_kind(w, i, &comp, &cause, &r->kind_count[i]);
        snprintf(r->kinds[i][0], SC_NAME_MAX, "%s", comp);
        snprintf(r->kinds[i][1], SC_NAME_MAX, "%s", cause);
    }
    json_free(j);
    store_close(st);
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
}

/* ---- the database against the JSON -------------------------------------- */

/* Two SQL values are the same JSON value: both NULL, equal numbers, equal text. */
static int same_value(sqlite3_value *a, sqlite3_value *b) {
    int ta = sqlite3_value_type(a), tb = sqlite3_value_type(b);
    if (ta == SQLITE_NULL || tb == SQLITE_NULL) return ta == tb;
    if ((ta == SQLITE_INTEGER || ta == SQLITE_FLOAT) && (tb == SQLITE_INTEGER || tb == SQLITE_FLOAT))
        return sqlite3_value_double(a) == sqlite3_value_double(b);
    if (ta == SQLITE_TEXT && tb == SQLITE_TEXT)
        return !strcmp((const char *)sqlite3_value_text(a), (const char *)sqlite3_value_text(b));
    return 0;
}

/* Every leaf below JSON path `root` (an object, or each element of an
 * array when `array`) equals its column in `table` (path a.b -> column a_b)
 * or its entry in the row's extra column; every non-NULL column is a leaf.
 * where: the row's WHERE clause with ?1 = run id and ?2 = element index. */
static void check_rows_match_json(sqlite3 *db, const char *json_text, int64_t run, const char *table,
                                  const char *root, int array, const char *where, const char *extra) {
    char sql[1024];
    /* The table's columns. */
    char cols[128][64];
    int ncol = 0;
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
    sqlite3_stmt *ti = q(db, sql);
    while (sqlite3_step(ti) == SQLITE_ROW && ncol < 128)
        snprintf(cols[ncol++], 64, "%s", (const char *)sqlite3_column_text(ti, 0));
    sqlite3_finalize(ti);

    /* Leaves: (element, path below it, value). */
    if (array)
        snprintf(sql, sizeof sql,
                 "SELECT e.key, substr(replace(t.fullkey, '\"', ''), 3), t.atom FROM json_each(?1, '%s') e, "
                 "json_tree(e.value) t WHERE t.type NOT IN ('object', 'array')", root);
    else
        snprintf(sql, sizeof sql,
                 "SELECT 0, substr(replace(t.fullkey, '\"', ''), %zu), t.atom FROM json_tree(?1, '%s') t "
                 "WHERE t.type NOT IN ('object', 'array')", strlen(root) + 2, root);
    sqlite3_stmt *leaves = q(db, sql);
    sqlite3_bind_text(leaves, 1, json_text, -1, SQLITE_STATIC);
    int elements = 0, n_leaves = 0, n_extra = 0;
    int64_t last = -1;
    static unsigned char matched[100000][128 / 8];
    memset(matched, 0, sizeof matched);
    while (sqlite3_step(leaves) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(leaves, 0);
        assert_true(k < 100000);
        if (k != last) elements++, last = k;
        const char *path = (const char *)sqlite3_column_text(leaves, 1);
        char col[128];
        snprintf(col, sizeof col, "%s", path);
        for (char *p = col; *p; p++)
            if (*p == '.') *p = '_';
        int c = 0;
        while (c < ncol && strcmp(cols[c], col)) c++;
        if (c < ncol)
            snprintf(sql, sizeof sql, "SELECT \"%s\" FROM %s WHERE %s", col, table, where);
        else
            snprintf(sql, sizeof sql, "SELECT json_extract(%s, '$.\"%s\"'), json_type(%s, '$.\"%s\"') FROM %s WHERE %s",
                     extra, path, extra, path, table, where);
        sqlite3_stmt *v = q(db, sql);
        sqlite3_bind_int64(v, 1, run);
        sqlite3_bind_int64(v, 2, k);
        if (sqlite3_step(v) != SQLITE_ROW) fail_msg("%s: no row for element %lld", table, (long long)k);
        if (!same_value(sqlite3_column_value(v, 0), sqlite3_column_value(leaves, 2)))
            fail_msg("%s[%lld].%s: database %s, JSON %s", table, (long long)k, path,
                     sqlite3_column_text(v, 0) ? (const char *)sqlite3_column_text(v, 0) : "NULL",
                     sqlite3_column_text(leaves, 2) ? (const char *)sqlite3_column_text(leaves, 2) : "null");
        if (c < ncol) matched[k][c / 8] |= (unsigned char)(1 << (c % 8));
        else {
            if (!sqlite3_column_text(v, 1)) fail_msg("%s[%lld].%s: neither a column nor in %s", table, (long long)k, path, extra);
            n_extra++;
        }
        n_leaves++;
        sqlite3_finalize(v);
    }
    sqlite3_finalize(leaves);
    assert_true(n_leaves > 0);

    /* Every non-NULL column is a JSON leaf (but the keys and extra). */
    for (int k = 0; k < elements; k++)
        for (int c = 0; c < ncol; c++) {
            if (!strcmp(cols[c], "run_id") || !strcmp(cols[c], "idx") || !strcmp(cols[c], "id") ||
                !strcmp(cols[c], extra) || matched[k][c / 8] & (1 << (c % 8)))
                continue;
            snprintf(sql, sizeof sql, "SELECT \"%s\" IS NOT NULL FROM %s WHERE %s", cols[c], table, where);
            sqlite3_stmt *v = q(db, sql);
            sqlite3_bind_int64(v, 1, run);
            sqlite3_bind_int64(v, 2, k);
            int nonnull = sqlite3_step(v) == SQLITE_ROW && sqlite3_column_int(v, 0);
            sqlite3_finalize(v);
            if (nonnull && strcmp(table, "runs"))    /* runs: its own columns besides cluster */
                fail_msg("%s[%d].%s is set but is not in the JSON", table, k, cols[c]);
        }
    /* The extra objects hold exactly the leaves without a column. */
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s t, json_each(t.%s) WHERE %s", table, extra,
             array ? "t.run_id = ?1" : "t.id = ?1");
    assert_int_equal((int)num(db, sql, run), n_extra);
}

/* ---- tests --------------------------------------------------------------- */

static void check_run(const char *path, const recorded *r) {
    sqlite3 *db = db_open(path);
    char *status = text(db, "SELECT status FROM runs WHERE id = ?1", r->id);
    assert_string_equal(status, "complete");
    free(status);
    /* The document, kept without its jobs when their rows give them back
     * (store_doc.c), is the run's JSON byte for byte once rebuilt. */
    store *st = NULL;
    char err[512], *whole = NULL;
    assert_int_equal(store_open(path, STORE_READ, &st, err, sizeof err), STORE_OK);
    assert_int_equal(store_run_json(st, r->id, &whole, err, sizeof err), STORE_OK);
    assert_non_null(whole);
    assert_string_equal(whole, r->json);
    free(whole);
    store_close(st);
    sqlite3_stmt *js = q(db, "SELECT json_array_length(?2, '$.jobs') > 0 AND json_array_length(results_json, "
                             "'$.jobs') = 0 FROM runs WHERE id = ?1");
    sqlite3_bind_int64(js, 1, r->id);
    sqlite3_bind_text(js, 2, r->json, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(js), SQLITE_ROW);
    int dropped = sqlite3_column_int(js, 0);
    sqlite3_finalize(js);
    if (!tweak_from) assert_true(dropped || !strstr(r->json, "\"jobs\": [\n"));   /* held once, as rows */
    else assert_false(dropped);        /* a job its row cannot give back: kept whole */
    char *xml = text(db, "SELECT scenario_xml FROM runs WHERE id = ?1", r->id);
    assert_true(!strcmp(xml, small_xml) || !strcmp(xml, long_xml) || !strcmp(xml, serving_xml));
    free(xml);

    /* Field for field against the JSON. */
    check_rows_match_json(db, r->json, r->id, "jobs", "$.jobs", 1, "run_id = ?1 AND idx = ?2", "extra");
    check_rows_match_json(db, r->json, r->id, "runs", "$.cluster", 0, "id = ?1 AND ?2 = 0", "cluster_extra");
    if (num(db, "SELECT json_array_length(results_json, '$.queues') FROM runs WHERE id = ?1", r->id) > 0)
        check_rows_match_json(db, r->json, r->id, "queues", "$.queues", 1, "run_id = ?1 AND idx = ?2", "extra");
    assert_int_equal((int)num(db, "SELECT count(*) FROM queues WHERE run_id = ?1", r->id),
                     (int)num(db, "SELECT coalesce(json_array_length(results_json, '$.queues'), 0) FROM runs WHERE id = ?1", r->id));
    static const char *top[][2] = { { "scenario", "$.scenario" }, { "seed", "$.seed" }, { "version", "$.version" },
                                    { "simulated_s", "$.simulated_s" }, { "wall_s", "$.wall_s" },
                                    { "events", "$.events" }, { "failures_total", "$.failures.total" } };
    for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT %s = json_extract(results_json, '%s') FROM runs WHERE id = ?1", top[i][0], top[i][1]);
        if (num(db, sql, r->id) != 1) fail_msg("runs.%s differs from the JSON's %s", top[i][0], top[i][1]);
    }
    js = q(db, "SELECT (SELECT count(*) FROM jobs WHERE run_id = ?1) = json_array_length(?2, '$.jobs')");
    sqlite3_bind_int64(js, 1, r->id);
    sqlite3_bind_text(js, 2, r->json, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(js), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(js, 0), 1);
    sqlite3_finalize(js);

    /* Against the world. */
    assert_int_equal((long)num(db, "SELECT count(*) FROM events WHERE run_id = ?1", r->id), r->bus_events);
    assert_int_equal((long)num(db, "SELECT max(seq) + 1 FROM events WHERE run_id = ?1", r->id), r->bus_events);
    assert_int_equal((int)num(db, "SELECT gpus FROM runs WHERE id = ?1", r->id), r->tot.gpus);
    assert_int_equal((int)num(db, "SELECT count(*) FROM failure_kinds WHERE run_id = ?1", r->id), r->n_kinds);
    int failures = 0;
    for (int i = 0; i < r->n_kinds; i++) {
        sqlite3_stmt *s = q(db, "SELECT component, cause, count FROM failure_kinds WHERE run_id = ?1 AND idx = ?2");
        sqlite3_bind_int64(s, 1, r->id);
        sqlite3_bind_int(s, 2, i);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(s, 0), r->kinds[i][0]);
        assert_string_equal((const char *)sqlite3_column_text(s, 1), r->kinds[i][1]);
        assert_int_equal(sqlite3_column_int(s, 2), r->kind_count[i]);
        failures += r->kind_count[i];
        sqlite3_finalize(s);
    }
    assert_int_equal((int)num(db, "SELECT count(*) FROM events WHERE run_id = ?1 AND kind = 'failure'", r->id),
                     failures);
    assert_int_equal(failures, r->tot.failures);

    /* Series: bounded, on the run's grid, integrals equal to the GPU-hours. */
    assert_true(num(db, "SELECT max(n) FROM (SELECT count(*) AS n FROM points p JOIN series s ON s.id = p.series_id "
                        "WHERE s.run_id = ?1 GROUP BY s.id)", r->id) <= STORE_MAX_POINTS);
    assert_true(num(db, "SELECT count(*) FROM series WHERE run_id = ?1", r->id) >= 9);
    double w = num(db, "SELECT series_bucket_s FROM runs WHERE id = ?1", r->id);
    assert_true(w > 0 && ceil(r->tot.simulated_s / w) <= STORE_MAX_POINTS && ceil(r->tot.simulated_s / w * 2) > STORE_MAX_POINTS);
    static const char *states[][2] = { { "gpus_training", "training" }, { "gpus_checkpoint", "checkpoint" },
                                       { "gpus_restarting", "restarting" }, { "gpus_batch", "batch" },
                                       { "gpus_serving", "serving" }, { "gpus_idle", "idle" } };
    for (size_t i = 0; i < sizeof states / sizeof *states; i++) {
        char sql[512];
        snprintf(sql, sizeof sql, "SELECT sum(mean * dt_s) / 3600 FROM cluster_series WHERE run_id = ?1 AND name = '%s'",
                 states[i][0]);
        double got = num(db, sql, r->id);
        snprintf(sql, sizeof sql, "SELECT json_extract(results_json, '$.cluster.gpu_hours_by_state.%s') FROM runs WHERE id = ?1",
                 states[i][1]);
        double want = num(db, sql, r->id);
        if (!(fabs(got - want) <= 1e-6 * fmax(1, r->tot.gpu_hours)))
            fail_msg("%s: series integral %.10g GPU-h, JSON %.10g", states[i][0], got, want);
    }
    /* Cost so far ends at the run's cost. */
    double cost_end = num(db, "SELECT max FROM cluster_series WHERE run_id = ?1 AND name = 'cost_usd' ORDER BY t_s DESC LIMIT 1", r->id);
    double cost = num(db, "SELECT cost_usd FROM runs WHERE id = ?1", r->id);
    assert_true(fabs(cost_end - cost) <= 1e-6 * cost);
    assert_true(num(db, "SELECT count(*) FROM checkpoint_events WHERE run_id = ?1", r->id) > 0);
    sqlite3_close(db);
}

static void test_serving_hours(void **state) {
    (void)state;
    const char *path = tpath("serving.db");
    recorded r;
    record(path, serving_xml, 1, &r);
    sqlite3 *db = db_open(path);
    /* The columns equal the JSON, field for field. */
    check_rows_match_json(db, r.json, r.id, "runs", "$.cluster", 0, "id = ?1 AND ?2 = 0", "cluster_extra");
    check_rows_match_json(db, r.json, r.id, "services", "$.services", 1, "run_id = ?1 AND idx = ?2", "extra");
    double all = 8 * r.tot.simulated_s / 3600;
    assert_true(all > 0);
    double json_serving = num(db, "SELECT json_extract(results_json, '$.cluster.gpu_hours_by_state.serving') "
                                  "FROM runs WHERE id = ?1", r.id);
    double col = num(db, "SELECT gpu_hours_by_state_serving FROM runs WHERE id = ?1", r.id);
    double series = num(db, "SELECT sum(mean * dt_s) / 3600 FROM cluster_series WHERE run_id = ?1 AND "
                            "name = 'gpus_serving'", r.id);
    double idle = num(db, "SELECT gpu_hours_by_state_idle FROM runs WHERE id = ?1", r.id);
    double sum = num(db, "SELECT gpu_hours_by_state_training + gpu_hours_by_state_checkpoint + "
                         "gpu_hours_by_state_restarting + gpu_hours_by_state_batch + gpu_hours_by_state_serving + "
                         "gpu_hours_by_state_idle - gpu_hours FROM runs WHERE id = ?1", r.id);
    if (!(fabs(json_serving - all) <= 1e-6 * all) || !(fabs(col - all) <= 1e-6 * all) ||
        !(fabs(series - all) <= 1e-6 * all) || !(fabs(idle) <= 1e-6 * all) || !(fabs(sum) <= 1e-6 * all))
        fail_msg("serving GPU-hours: JSON %.10g, column %.10g, series %.10g, want %.10g; idle %.10g; "
                 "states - provisioned %.10g", json_serving, col, series, all, idle, sum);
    double rps = num(db, "SELECT json_extract(extra, '$.requests_per_s') FROM services WHERE run_id = ?1", r.id);
    double slo = num(db, "SELECT slo_attainment FROM services WHERE run_id = ?1", r.id);
    double good = num(db, "SELECT goodput_requests_per_s FROM services WHERE run_id = ?1", r.id);
    assert_true(rps > 0 && slo > 0 && slo <= 1);
    assert_true(fabs(good - rps * slo) <= 1e-9 * rps);
    sqlite3_close(db);
    free(r.json);
}

static void test_run_matches_json(void **state) {
    (void)state;
    const char *path = tpath("one.db");
    recorded r;
    record(path, small_xml, 1, &r);
    assert_true(r.tot.failures > 0);          /* the scenario does exercise failures */
    assert_int_equal(r.id, 1);
    check_run(path, &r);
    /* A job's cost is its own GPU-hours at the node type's price: the jobs'
     * GPU-hours add up to the busy GPU-hours (no service here), and at cloud
     * prices each costs what the provisioned GPU-hours cost per hour. */
    sqlite3 *db = db_open(path);
    double jobs_h = num(db, "SELECT sum(gpu_hours) FROM jobs WHERE run_id = ?1", r.id);
    double busy_h = num(db, "SELECT gpu_busy_hours FROM runs WHERE id = ?1", r.id);
    assert_true(jobs_h > 0 && fabs(jobs_h - busy_h) <= 1e-6 * busy_h);
    assert_int_equal((int)num(db, "SELECT cost_owned FROM runs WHERE id = ?1", r.id), 0);
    double price = num(db, "SELECT cost_compute_usd / gpu_hours FROM runs WHERE id = ?1", r.id);
    assert_true(price > 0);
    assert_int_equal((int)num(db, "SELECT count(*) FROM jobs WHERE run_id = ?1 AND "
                                  "abs(cost_usd - gpu_hours * (SELECT cost_compute_usd / gpu_hours FROM runs WHERE "
                                  "id = ?1)) > 1e-6 * (1 + cost_usd)", r.id), 0);
    sqlite3_close(db);
    free(r.json);
}

/* Every event once, in publishing order: seq 0, 1, ... with times that
 * never go back, as many as the bus published. */
static void check_events(sqlite3 *db, const recorded *r) {
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT entity, kind, detail FROM events WHERE run_id = ?1 ORDER BY seq", -1,
                                        &q, NULL), SQLITE_OK);
    sqlite3_bind_int64(q, 1, r->id);
    uint64_t h = 14695981039346656037ull;   /* the details the writer made, as the bus made them */
    while (sqlite3_step(q) == SQLITE_ROW)
        for (int c = 0; c < 3; c++) h = fnv(h, sqlite3_column_text(q, c) ? (const char *)sqlite3_column_text(q, c) : "");
    sqlite3_finalize(q);
    assert_true(h == r->bus_hash);
    assert_int_equal((long)num(db, "SELECT count(*) FROM events WHERE run_id = ?1", r->id), r->bus_events);
    assert_int_equal((long)num(db, "SELECT max(seq) + 1 FROM events WHERE run_id = ?1", r->id), r->bus_events);
    assert_int_equal((int)num(db, "SELECT count(*) FROM events a JOIN events b ON b.run_id = a.run_id AND "
                                  "b.seq = a.seq + 1 WHERE a.run_id = ?1 AND b.t_s < a.t_s", r->id), 0);
}

/* Rows written many to a statement, in blocks by the writer thread: every
 * job field for field as in the JSON, each submitted once; events across
 * several batches (long_xml: ~60,000) each once, in order. */
static void test_rows_in_blocks(void **state) {
    (void)state;
    const char *path = tpath("blocks.db");
    recorded r, l;
    record(path, blocks_xml, 1, &r);
    record(path, long_xml, 1, &l);
    assert_true(l.bus_events > 3 * 16384);
    sqlite3 *db = db_open(path);
    assert_int_equal((int)num(db, "SELECT count(*) FROM jobs WHERE run_id = ?1", r.id), 1057);
    check_rows_match_json(db, r.json, r.id, "jobs", "$.jobs", 1, "run_id = ?1 AND idx = ?2", "extra");
    assert_int_equal((int)num(db, "SELECT max(idx) + 1 FROM jobs WHERE run_id = ?1", r.id), 1057);
    assert_int_equal((int)num(db, "SELECT count(*) FROM jobs j WHERE run_id = ?1 AND (SELECT count(*) FROM events e "
                                  "WHERE e.run_id = j.run_id AND e.entity = j.name AND e.kind = 'job_submit') != 1",
                              r.id), 0);
    check_events(db, &r);
    check_events(db, &l);
    assert_int_equal((int)num(db, "SELECT count(*) FROM jobs WHERE run_id = ?1", l.id), 20000);
    sqlite3_close(db);
    free(r.json);
    free(l.json);
}

/* The same runs with the jobs read as the JSON is built: the same rows,
 * 1057 jobs (two whole blocks of 512 and a part) and 20,000. */
static void test_rows_watched(void **state) {
    watching = 1;
    test_rows_in_blocks(state);
    watching = 0;
}

/* A job's series leaves out the buckets that repeat the one before (the
 * training job's progress is flat once it has finished, well before the
 * 20 days end); the reader gives every bucket back: as many as a cluster
 * series, on the grid t = k * W, each left-out bucket a copy of the one
 * before, the stored ones (the first and the last among them) as stored.
 * The CSV rows (rundata_rows) give the same buckets. */
static long csv_rows;
static void count_row(void *ctx, int ncol, const char *const *z, const unsigned char *number) {
    (void)ncol, (void)number;
    if (z[1] && !strcmp(z[1], (const char *)ctx) && z[2] && !strcmp(z[2], "progress")) csv_rows++;
}

static void test_job_series_filled(void **state) {
    (void)state;
    const char *path = tpath("series.db");
    recorded r;
    record(path, small_xml, 1, &r);
    sqlite3 *db = db_open(path);
    int all = (int)num(db, "SELECT count(*) FROM points p JOIN series s ON s.id = p.series_id WHERE s.run_id = ?1 "
                           "AND s.entity = 'cluster' AND s.name = 'gpus_idle'", r.id);
    int kept = (int)num(db, "SELECT count(*) FROM points p JOIN series s ON s.id = p.series_id WHERE s.run_id = ?1 "
                            "AND s.entity = 'job' AND s.name = 'progress'", r.id);
    assert_true(kept > 2 && kept < all / 2);               /* left out: most of the run */
    char err[512];
    rundata_db *rd = NULL;
    rundata *run = NULL;
    assert_int_equal(rundata_open(path, &rd, err, sizeof err), 0);
    assert_int_equal(rundata_load(rd, r.id, &run, err, sizeof err), 0);
    double *t, *dt, *mean, *mx;
    int n = rundata_series(rd, run, "job", "progress", &t, &dt, &mean, &mx);
    assert_int_equal(n, all);
    sqlite3_stmt *st = q(db, "SELECT p.k, p.dt_s, p.mean, p.max FROM points p JOIN series s ON s.id = p.series_id "
                             "WHERE s.run_id = ?1 AND s.entity = 'job' AND s.name = 'progress' ORDER BY p.k");
    sqlite3_bind_int64(st, 1, r.id);
    int more = sqlite3_step(st) == SQLITE_ROW;
    for (int k = 0; k < n; k++) {
        assert_true(t[k] == k * run->bucket_s);
        if (more && sqlite3_column_int(st, 0) == k) {       /* stored: as stored */
            assert_true(dt[k] == sqlite3_column_double(st, 1) && mean[k] == sqlite3_column_double(st, 2) &&
                        mx[k] == sqlite3_column_double(st, 3));
            more = sqlite3_step(st) == SQLITE_ROW;
        } else {                                           /* left out: the one before */
            assert_true(k > 0 && dt[k] == dt[k - 1] && mean[k] == mean[k - 1] && mx[k] == mx[k - 1]);
        }
    }
    assert_false(more);                                    /* every stored row was met */
    sqlite3_finalize(st);
    csv_rows = 0;
    assert_int_equal(rundata_rows(rd, RD_ROWS_SERIES, r.id, r.id, count_row, "job", err, sizeof err), 0);
    assert_int_equal(csv_rows, n);
    free(t);
    rundata_free(run);
    rundata_close(rd);
    sqlite3_close(db);
    free(r.json);
}

/* Job names that the JSON escapes (a quote, a backslash, a newline) or
 * holds as UTF-8 (a non-ASCII letter) are stored unescaped, field for
 * field as the JSON reads. */
static const char escaped_xml[] =
    "<scenario name=\"esc\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
    "<workload><jobs name=\"q&quot;b\\s/\xc3\xa9&#10;t\" count=\"3\" arrivals=\"poisson\" rate=\"2/h\" gpus=\"8\""
    " duration=\"3h\"/></workload></scenario>";

static void test_escaped_names(void **state) {
    (void)state;
    const char *path = tpath("esc.db");
    recorded r;
    record(path, escaped_xml, 1, &r);
    sqlite3 *db = db_open(path);
    check_rows_match_json(db, r.json, r.id, "jobs", "$.jobs", 1, "run_id = ?1 AND idx = ?2", "extra");
    char *name = text(db, "SELECT name FROM jobs WHERE run_id = ?1 AND idx = 0", r.id);
    assert_non_null(strstr(name, "q\"b\\s/\xc3\xa9\nt"));
    free(name);
    sqlite3_close(db);
    free(r.json);
}

/* A run whose JSON is longer than SQLite's longest value (1 GB as built:
 * about four million jobs; here the limit is lowered to 24 KB for a run of
 * 400 jobs) is stored all the same: every job in the jobs table, in order,
 * field for field as in the JSON, inserted a slice at a time; the run row
 * keeps the document with "jobs":[] and every other figure. It used to
 * fail with "string or blob too big" and leave the run incomplete. */
static void test_run_longer_than_one_value(void **state) {
    (void)state;
    const char *path = tpath("long.db");
    const char *xml = "<scenario name=\"many\" duration=\"30d\"><cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
                      "<workload><jobs name=\"b\" count=\"400\" gpus=\"1\" duration=\"2h\" rate=\"1/min\"/></workload>"
                      "</scenario>";
    recorded r;
    max_value_bytes = 24 * 1024;
    record(path, xml, 1, &r);
    max_value_bytes = 0;
    assert_true(strlen(r.json) > 24 * 1024);
    sqlite3 *db = db_open(path);
    assert_true(num(db, "SELECT count(*) FROM jobs WHERE run_id = ?1", r.id) == 400);
    sqlite3_stmt *st = q(db, "SELECT count(*) FROM jobs j WHERE j.run_id = ?1 AND j.name = "
                             "json_extract(?2, '$.jobs[' || j.idx || '].name') AND j.end_s = "
                             "json_extract(?2, '$.jobs[' || j.idx || '].end_s')");
    sqlite3_bind_int64(st, 1, r.id);
    sqlite3_bind_text(st, 2, r.json, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 400);
    sqlite3_finalize(st);
    assert_true(num(db, "SELECT json_array_length(results_json, '$.jobs') FROM runs WHERE id = ?1", r.id) == 0);
    char *status = text(db, "SELECT status FROM runs WHERE id = ?1", r.id);
    assert_string_equal(status, "complete");
    free(status);
    assert_true(num(db, "SELECT gpus FROM runs WHERE id = ?1", r.id) == 16);
    sqlite3_close(db);
    free(r.json);
}

/* A job whose row would not give back its text keeps the run's document
 * whole: a key results_job_keys does not list, keys out of its order, a
 * whole number written as a decimal (SQLite would give back 1500), a
 * boolean. */
static void test_document_kept_whole(void **state) {
    (void)state;
    static const char *const tweaks[][2] = {
        { "\"kind\": \"", "\"zzz\": 1,\n      \"kind\": \"" },
        { "\"kind\": \"training\",\n      \"gpus\": 64", "\"gpus\": 64,\n      \"kind\": \"training\"" },
        { "\"submit_s\": 0,", "\"submit_s\": 1.5e+03," },
        { "\"preemptions\": 0,", "\"preemptions\": false," },
    };
    for (size_t i = 0; i < sizeof tweaks / sizeof *tweaks; i++) {
        char name[32];
        snprintf(name, sizeof name, "whole%zu.db", i);
        const char *path = tpath(name);
        recorded r;
        tweak_from = tweaks[i][0];
        tweak_to = tweaks[i][1];
        record(path, small_xml, 1, &r);
        if (!strstr(r.json, tweak_to)) fail_msg("tweak %zu not applied", i);
        check_run(path, &r);
        tweak_from = tweak_to = NULL;
        free(r.json);
    }
}

static void test_two_runs_and_reopen(void **state) {
    (void)state;
    const char *path = tpath("two.db");
    recorded a, b, c;
    record(path, small_xml, 1, &a);
    record(path, small_xml, 2, &b);
    assert_int_equal(a.id, 1);
    assert_int_equal(b.id, 2);
    check_run(path, &a);
    check_run(path, &b);
    assert_string_not_equal(a.json, b.json);   /* another seed, another run */
    /* Reopened later: a third run appends; the first two are unchanged. */
    record(path, small_xml, 1, &c);
    assert_int_equal(c.id, 3);
    check_run(path, &a);
    check_run(path, &c);
    sqlite3 *db = db_open(path);
    assert_int_equal((int)num(db, "SELECT count(*) FROM runs WHERE status = 'complete'", 0), 3);
    /* Deleting a run deletes its rows (foreign keys, ON DELETE CASCADE). */
    assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id = 2", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal((int)num(db, "SELECT (SELECT count(*) FROM jobs WHERE run_id = 2) + (SELECT count(*) FROM events "
                                  "WHERE run_id = 2) + (SELECT count(*) FROM series WHERE run_id = 2) + "
                                  "(SELECT count(*) FROM points WHERE series_id NOT IN (SELECT id FROM series))", 0), 0);
    char *ok = text(db, "PRAGMA integrity_check", 0);
    assert_string_equal(ok, "ok");
    free(ok);
    sqlite3_close(db);
    check_run(path, &a);
    free(a.json);
    free(b.json);
    free(c.json);
}

/* ---- a writer killed at random points ------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double frand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* In a child: record long_xml into path, telling the parent (one byte on
 * fd) once the run row is committed, then waiting for the parent's go (a
 * byte, or end of file, on go) before it runs. Never returns. */
static void child_run(const char *path, int fd, int go) {
    char err[1024];
    scenario *s = NULL;
    if (scenario_load_memory(long_xml, strlen(long_xml), "long.xml", &s, err, sizeof err) != 0) _exit(3);
    metric_bus *bus = metrics_new();
    world *w = world_new(s, bus, err, sizeof err);
    store *st = NULL;
    if (!w || store_open(path, STORE_WRITE, &st, err, sizeof err) != STORE_OK ||
        store_run_begin(st, s, bus, err, sizeof err) != STORE_OK)
        _exit(4);
    if (write(fd, "x", 1) != 1) _exit(5);
    char c;
    if (read(go, &c, 1) < 0) _exit(7);
    world_run(w, 0);
    json *j = json_new();
    results_json(j, s, w, 0);
    int rc = store_run_finish(st, w, json_text(j, NULL), err, sizeof err);
    _exit(rc == STORE_OK ? 0 : 6);
}

/* Fork a writer and SIGKILL it delay_s after its run row is committed
 * (never, when delay_s < 0; when delay_s == 0, before it runs a single
 * event: it waits for the go that is never sent, so it is certainly
 * killed mid-run, however busy the machine). Returns the wall time from
 * start to the child's end. */
static double run_child(const char *path, double delay_s) {
    int fds[2], go[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(pipe(go), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        close(go[1]);
        child_run(path, fds[1], go[0]);
    }
    close(fds[1]);
    close(go[0]);
    char c;
    double t0 = now_s();
    if (read(fds[0], &c, 1) != 1) fail_msg("the writer died before it began its run");
    close(fds[0]);
    if (delay_s == 0) kill(pid, SIGKILL);        /* still waiting for its go */
    else if (write(go[1], "g", 1) != 1) fail_msg("the writer died before its go");
    close(go[1]);
    if (delay_s > 0) {
        struct timespec ts = { (time_t)delay_s, (long)((delay_s - floor(delay_s)) * 1e9) };
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (delay_s < 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        fail_msg("the writer failed (status %d)", status);
    return now_s() - t0;
}

typedef struct snapshot {
    int64_t id;
    double jobs, events, points, json_len;
} snapshot;

static snapshot snap(sqlite3 *db, int64_t id) {
    snapshot s = { id, 0, 0, 0, 0 };
    s.jobs = num(db, "SELECT count(*) FROM jobs WHERE run_id = ?1", id);
    s.events = num(db, "SELECT count(*) FROM events WHERE run_id = ?1", id);
    s.points = num(db, "SELECT count(*) FROM points p JOIN series s ON s.id = p.series_id WHERE s.run_id = ?1", id);
    s.json_len = num(db, "SELECT length(results_json) FROM runs WHERE id = ?1", id);
    return s;
}

static void test_killed_writer(void **state) {
    (void)state;
    const char *path = tpath("killed.db");
    recorded first;
    record(path, small_xml, 1, &first);
    double full_s = run_child(path, -1);      /* a whole run, to know how long one takes */
    sqlite3 *db = db_open(path);
    snapshot before[2] = { snap(db, 1), snap(db, 2) };
    sqlite3_close(db);
    assert_true(before[1].events > 16384);    /* more than one event batch */

    int incomplete = 0, kills = 5;
    for (int k = 0; k < kills; k++) {
        double delay = frand() * full_s * 1.1;
        if (k == 0) delay = 0;        /* one certainly mid-run (see run_child) */
        run_child(path, delay);
        /* Reopening rolls back a half-written transaction (hot journal). */
        char err[512];
        store *st = NULL;
        if (store_open(path, STORE_WRITE, &st, err, sizeof err) != STORE_OK) fail_msg("after kill %d: %s", k, err);
        store_close(st);
        db = db_open(path);
        char *ok = text(db, "PRAGMA integrity_check", 0);
        if (strcmp(ok, "ok")) fail_msg("after a kill at %.3f s: integrity_check: %s", delay, ok);
        free(ok);
        assert_int_equal((int)num(db, "SELECT count(*) FROM pragma_foreign_key_check", 0), 0);
        for (int i = 0; i < 2; i++) {
            snapshot now = snap(db, before[i].id);
            assert_memory_equal(&now, &before[i], sizeof now);
        }
        int64_t id = 3 + k;
        char *status = text(db, "SELECT status FROM runs WHERE id = ?1", id);
        if (!strcmp(status, "incomplete")) {
            incomplete++;
            /* The last transaction never committed: no jobs, no series;
             * events only in whole batches. */
            assert_int_equal((int)num(db, "SELECT count(*) FROM jobs WHERE run_id = ?1", id), 0);
            assert_int_equal((int)num(db, "SELECT count(*) FROM series WHERE run_id = ?1", id), 0);
            assert_int_equal((long)num(db, "SELECT count(*) FROM events WHERE run_id = ?1", id) % 16384, 0);
            assert_true(num(db, "SELECT results_json IS NULL FROM runs WHERE id = ?1", id) == 1);
        } else {
            assert_string_equal(status, "complete");
            snapshot s = snap(db, id);
            s.id = before[1].id;
            assert_memory_equal(&s, &before[1], sizeof s);   /* the same run, whole */
        }
        free(status);
        sqlite3_close(db);
    }
    print_message("killed %d writers at random points: %d left incomplete, %d had finished (a run takes %.2f s)\n",
                  kills, incomplete, kills - incomplete, full_s);
    assert_true(incomplete >= 1);      /* the kill at the go (k = 0), whatever the machine's speed */
    /* The database still takes runs. */
    recorded after;
    record(path, small_xml, 1, &after);
    assert_int_equal(after.id, 3 + kills);
    check_run(path, &after);
    free(after.json);
    free(first.json);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_matches_json),
        cmocka_unit_test(test_serving_hours),
        cmocka_unit_test(test_job_series_filled),
        cmocka_unit_test(test_rows_in_blocks),
        cmocka_unit_test(test_rows_watched),
        cmocka_unit_test(test_escaped_names),
        cmocka_unit_test(test_run_longer_than_one_value),
        cmocka_unit_test(test_document_kept_whole),
        cmocka_unit_test(test_two_runs_and_reopen),
        cmocka_unit_test(test_killed_writer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
