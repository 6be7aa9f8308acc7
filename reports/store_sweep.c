/*
 * store_sweep: the sweep tables of the results store and merging databases
 * (the public names are sweepdb_*, see sweepdb.h; the tables are section
 * @sweeps of reports/schema.sql).
 *
 * Load: a sweep writes one transaction per replica (a runs row, its jobs,
 * queues and services, one sweep_runs row): a few milliseconds each, done
 * by the sweep's parent process while the workers simulate. A merge copies
 * whole tables with INSERT ... SELECT over an ATTACHed file, shifting ids
 * by the destination's largest id, so it costs about one copy of the data.
 */
#include "reports/sweepdb.h"
#include "reports/store_int.h"
#include "base/errmsg.h"
#include "base/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

static int fail(store *st, int rc, const char *what, char *err, size_t errlen) {
    errmsg_set(err, errlen, "%s: %s: %s", store_path(st), what, sqlite3_errmsg(st->db));
    return store_sql_status(rc);
}

int sweepdb_begin(store *st, const char *scenario_name, const char *file, const char *xml, const char *params,
                  const char *sets, int replicas, int64_t *sweep, char *err, size_t errlen) {
    sqlite3 *db = st->db;
    int rc = store_exec(db, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) rc = store_schema_run(st, "sweeps");
    sqlite3_stmt *q = NULL;
    *sweep = 0;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT id FROM sweeps WHERE scenario_xml = ? AND params = ? AND sets = ? "
                                    "ORDER BY id LIMIT 1", -1, &q, NULL);
    if (rc == SQLITE_OK) {
        store_bind(q, "ttt", xml, params, sets);
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) *sweep = sqlite3_column_int64(q, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(q);
    q = NULL;
    if (rc == SQLITE_OK && *sweep) {
        rc = sqlite3_prepare_v2(db, "UPDATE sweeps SET replicas = max(replicas, ?) WHERE id = ?", -1, &q, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_int(q, 1, replicas);
            sqlite3_bind_int64(q, 2, *sweep);
            rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        }
    } else if (rc == SQLITE_OK) {
        char when[32];
        store_utc_now(when, sizeof when);
        rc = sqlite3_prepare_v2(db, "INSERT INTO sweeps(scenario, scenario_file, scenario_xml, params, sets, "
                                    "replicas, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &q, NULL);
        if (rc == SQLITE_OK) {
            store_bind(q, "tttttit", scenario_name, file, xml, params, sets, replicas, when);
            rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
            *sweep = sqlite3_last_insert_rowid(db);
        }
    }
    sqlite3_finalize(q);
    if (rc == SQLITE_OK) rc = store_exec(db, "COMMIT");
    if (rc != SQLITE_OK) {
        int s = fail(st, rc, "cannot record the sweep", err, errlen);
        store_exec(db, "ROLLBACK");
        return s;
    }
    return STORE_OK;
}

/* Run the kept statement k (sql) on (sweep, key, text): a sweep point's
 * row keyed by its values. Returns an SQLite code. */
static int put_point_row(store *st, kept_stmt k, const char *sql, int64_t sweep, const char *key, const char *text) {
    sqlite3_stmt *q = NULL;
    int rc = store_kept(st, k, sql, &q);
    if (rc == SQLITE_OK) {
        store_bind(q, "Itt", sweep, key, text);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        store_kept_done(q);
    }
    return rc;
}

int sweepdb_point(store *st, int64_t sweep, const char *key, const char *x, char *err, size_t errlen) {
    int rc = put_point_row(st, KEPT_SWEEP_POINT, "INSERT OR IGNORE INTO sweep_points(sweep_id, key, x) VALUES (?, ?, ?)",
                           sweep, key, x);
    return rc == SQLITE_OK ? STORE_OK : fail(st, rc, "cannot record a sweep point", err, errlen);
}

int sweepdb_done(store *st, int64_t sweep, const char *key, int replicas, unsigned char *done, char *err,
                 size_t errlen) {
    memset(done, 0, (size_t)replicas);
    sqlite3_stmt *q = NULL;
    int rc = store_kept(st, KEPT_SWEEP_DONE,
                        "SELECT r.replica FROM sweep_runs r JOIN runs u ON u.id = r.run_id "
                        "WHERE r.sweep_id = ? AND r.point_key = ? AND u.status = 'complete'", &q);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, sweep);
        sqlite3_bind_text(q, 2, key, -1, SQLITE_STATIC);
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            int r = sqlite3_column_int(q, 0);
            if (r >= 0 && r < replicas) done[r] = 1;
        }
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        store_kept_done(q);
    }
    return rc == SQLITE_OK ? STORE_OK : fail(st, rc, "cannot read the sweep", err, errlen);
}

/* The sweep_runs row of a replica's run. Returns an SQLite code. */
static int insert_sweep_run(store *st, int64_t sweep, const char *key, int replica, uint64_t seed, int64_t run) {
    sqlite3_stmt *q = NULL;
    int rc = store_kept(st, KEPT_SWEEP_RUN, "INSERT INTO sweep_runs(sweep_id, point_key, replica, seed, run_id) "
                                            "VALUES (?, ?, ?, ?, ?)", &q);
    if (rc == SQLITE_OK) {
        store_bind(q, "ItiII", sweep, key, replica, (int64_t)seed, run);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        store_kept_done(q);
    }
    return rc;
}

int sweepdb_record(store *st, int64_t sweep, const char *key, int replica, const scenario *s, const char *json,
                   char *err, size_t errlen) {
    sqlite3 *db = st->db;
    int rc = store_exec(db, "SAVEPOINT sweep_record");
    if (rc != SQLITE_OK) return fail(st, rc, "cannot write", err, errlen);
    int64_t run = 0;
    int status = store_run_insert(st, s, json, &run, err, errlen);
    if (status == STORE_OK) {
        rc = insert_sweep_run(st, sweep, key, replica, s->seed, run);
        if (rc == SQLITE_OK) rc = store_exec(db, "RELEASE sweep_record");
        if (rc != SQLITE_OK) status = fail(st, rc, "cannot record the sweep run", err, errlen);
    }
    if (status != STORE_OK) store_exec(db, "ROLLBACK TO sweep_record; RELEASE sweep_record");
    return status;
}

int sweepdb_batch(store *st, int begin, char *err, size_t errlen) {
    sqlite3 *db = st->db;
    if (!begin && sqlite3_get_autocommit(db)) return STORE_OK;
    int rc = store_exec(db, begin ? "BEGIN IMMEDIATE" : "COMMIT");
    if (rc == SQLITE_OK) return STORE_OK;
    int s = fail(st, rc, begin ? "cannot write" : "cannot commit the sweep's runs", err, errlen);
    if (!begin) store_exec(db, "ROLLBACK");
    return s;
}

int sweepdb_values(store *st, int64_t sweep, const char *key, const metric_path *m, double **v, int *n, char *err,
                   size_t errlen) {
    *v = NULL;
    *n = 0;
    char field[200];
    snprintf(field, sizeof field, "$.%s", m->field);
    const char *sql =
        m->array[0]
            ? "SELECT (SELECT json_extract(j.value, ?3) FROM json_each(u.results_json, ?4) j "
              "        WHERE json_extract(j.value, '$.name') = ?5 LIMIT 1) "
              "FROM sweep_runs r JOIN runs u ON u.id = r.run_id "
              "WHERE r.sweep_id = ?1 AND r.point_key = ?2 AND u.status = 'complete' ORDER BY r.replica"
            : "SELECT coalesce(json_extract(u.results_json, ?3), json_extract(u.results_json, '$.cluster.' || ?6)) "
              "FROM sweep_runs r JOIN runs u ON u.id = r.run_id "
              "WHERE r.sweep_id = ?1 AND r.point_key = ?2 AND u.status = 'complete' ORDER BY r.replica";
    char arr[32];
    snprintf(arr, sizeof arr, "$.%s", m->array);
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
    double *out = NULL;
    int k = 0;
    size_t cap = 0;
    if (rc == SQLITE_OK) {
        store_bind(q, "Itt", sweep, key, field);
        if (m->array[0]) {
            sqlite3_bind_text(q, 4, arr, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, 5, m->elem, -1, SQLITE_STATIC);
        } else {
            sqlite3_bind_text(q, 6, m->field, -1, SQLITE_STATIC);
        }
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            if (GROW(out, cap, (size_t)k + 1)) {
                rc = SQLITE_NOMEM;
                break;
            }
            int t = sqlite3_column_type(q, 0);
            out[k++] = t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(q, 0) : NAN;
        }
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_OK) {
        free(out);
        return fail(st, rc, "cannot read the sweep's results", err, errlen);
    }
    *v = out;
    *n = k;
    return STORE_OK;
}

int sweepdb_unfit(store *st, int64_t sweep, const char *key, const char *reason, char *err, size_t errlen) {
    int rc = put_point_row(st, KEPT_SWEEP_UNFIT, "INSERT OR REPLACE INTO sweep_unfit(sweep_id, point_key, reason) "
                                                 "VALUES (?, ?, ?)", sweep, key, reason);
    return rc == SQLITE_OK ? STORE_OK : fail(st, rc, "cannot record a point that does not fit", err, errlen);
}

char *sweepdb_unfit_reason(store *st, int64_t sweep, const char *key) {
    sqlite3_stmt *q = NULL;
    char *out = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT reason FROM sweep_unfit WHERE sweep_id = ? AND point_key = ?", -1, &q,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, sweep);
        sqlite3_bind_text(q, 2, key, -1, SQLITE_STATIC);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
            out = strdup((const char *)sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
    return out;
}

int sweepdb_stat(store *st, int64_t sweep, const char *key, const char *metric, const char *statistic, int runs,
                 int missing, double value, double ci_low, double ci_high, double ci_level, char *err, size_t errlen) {
    sqlite3_stmt *q = NULL;
    int rc = store_kept(st, KEPT_SWEEP_STAT, "INSERT OR REPLACE INTO sweep_stats(sweep_id, point_key, metric, statistic, "
                        "runs, missing, value, ci_low, ci_high, ci_level) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &q);
    if (rc == SQLITE_OK) {
        /* an infinite estimate or end (a run that never ended counts as
         * +inf against a goal) is stored as null, like a missing one */
        store_bind(q, "Itttiinnnd", sweep, key, metric, statistic, runs, missing, value, ci_low, ci_high, ci_level);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        store_kept_done(q);
    }
    return rc == SQLITE_OK ? STORE_OK : fail(st, rc, "cannot record a sweep statistic", err, errlen);
}

int sweepdb_latest(store *st, int64_t *sweep) {
    sqlite3_stmt *q = NULL;
    *sweep = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT max(id) FROM sweeps", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        *sweep = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return *sweep > 0;
}

/* ---- merge ------------------------------------------------------------------ */

static long long scalar(sqlite3 *db, const char *sql, int *rc) {
    sqlite3_stmt *q = NULL;
    long long v = 0;
    *rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    if (*rc == SQLITE_OK) {
        *rc = sqlite3_step(q);
        if (*rc == SQLITE_ROW) {
            v = sqlite3_column_int64(q, 0);
            *rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(q);
    return v;
}

static int has_table(sqlite3 *db, const char *schema, const char *table) {
    char sql[256];
    int rc;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s.sqlite_schema WHERE type = 'table' AND name = '%s'", schema, table);
    return scalar(db, sql, &rc) > 0 && rc == SQLITE_OK;
}

/* INSERT INTO main.T(cols) SELECT cols FROM src.T WHERE cond, where a
 * column named in shift[] is replaced by "col + offset". The columns are
 * the destination's that the source has too: a source of an older schema
 * version read as it is (STORE_READ_OLDEST) lacks the newer columns, which
 * stay NULL. */
static int copy_table(sqlite3 *db, const char *table, const char *const *shift, const long long *offset,
                      const char *cond) {
    char sql[8192], cols[4096] = "", sel[4096] = "";
    size_t nc = 0, ns = 0;
    sqlite3_stmt *q = NULL;
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s', 'main') WHERE name IN "
                              "(SELECT name FROM pragma_table_info('%s', 'src')) ORDER BY cid", table, table);
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    while (rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(q, 0);
        int k = -1;
        for (int i = 0; shift[i]; i++)
            if (!strcmp(shift[i], c)) k = i;
        nc += (size_t)snprintf(cols + nc, sizeof cols - nc, "%s\"%s\"", nc ? ", " : "", c);
        if (k >= 0) ns += (size_t)snprintf(sel + ns, sizeof sel - ns, "%s\"%s\" + %lld", ns ? ", " : "", c, offset[k]);
        else ns += (size_t)snprintf(sel + ns, sizeof sel - ns, "%s\"%s\"", ns ? ", " : "", c);
        if (nc >= sizeof cols || ns >= sizeof sel) rc = SQLITE_TOOBIG;
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_OK) return rc;
    char *ins = sqlite3_mprintf("INSERT INTO main.%s(%s) SELECT %s FROM src.%s WHERE %s", table, cols, sel, table, cond);
    if (!ins) return SQLITE_NOMEM;
    rc = store_exec(db, ins);
    sqlite3_free(ins);
    return rc;
}

/* Each source sweep in temp.map_sweep beside the destination's same sweep
 * (same scenario text, paths and overrides: its replicas raised to the
 * source's) or a new one. */
static int map_sweeps(sqlite3 *db) {
    sqlite3_stmt *s = NULL, *find = NULL, *ins = NULL, *map = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id, scenario, scenario_file, scenario_xml, params, sets, replicas, "
                                    "created_at FROM src.sweeps ORDER BY id", -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT id FROM main.sweeps WHERE scenario_xml = ?1 AND params = ?2 AND sets = ?3 "
                                    "ORDER BY id LIMIT 1", -1, &find, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO main.sweeps(scenario, scenario_file, scenario_xml, params, sets, "
                                    "replicas, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &ins, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO temp.map_sweep VALUES (?, ?)", -1, &map, NULL);
    while (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        for (int i = 0; i < 3; i++) sqlite3_bind_value(find, i + 1, sqlite3_column_value(s, 3 + i));
        sqlite3_int64 dst = 0;
        if (sqlite3_step(find) == SQLITE_ROW) dst = sqlite3_column_int64(find, 0);
        sqlite3_reset(find);
        if (dst) {
            char up[128];
            snprintf(up, sizeof up, "UPDATE main.sweeps SET replicas = max(replicas, %d) WHERE id = %lld",
                     sqlite3_column_int(s, 6), (long long)dst);
            rc = store_exec(db, up);
        } else {
            for (int i = 0; i < 7; i++) sqlite3_bind_value(ins, i + 1, sqlite3_column_value(s, 1 + i));
            rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
            sqlite3_reset(ins);
            dst = sqlite3_last_insert_rowid(db);
        }
        if (rc != SQLITE_OK) break;
        sqlite3_bind_int64(map, 1, sqlite3_column_int64(s, 0));
        sqlite3_bind_int64(map, 2, dst);
        rc = sqlite3_step(map) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(map);
    }
    sqlite3_finalize(s);
    sqlite3_finalize(find);
    sqlite3_finalize(ins);
    sqlite3_finalize(map);
    return rc;
}

/* The source's runs not skipped and their rows, ids shifted past the
 * destination's (*off_run: the shift of runs.id). *step names what failed. */
static int copy_runs(sqlite3 *db, long long *off_run, const char **step) {
    long long off_series = 0;
    int rc = SQLITE_OK;
    *off_run = scalar(db, "SELECT coalesce(max(id), 0) FROM main.runs", &rc);
    if (rc == SQLITE_OK) off_series = scalar(db, "SELECT coalesce(max(id), 0) FROM main.series", &rc);
    const char *id_only[] = { "id", NULL }, *run_only[] = { "run_id", NULL }, *series_cols[] = { "id", "run_id", NULL },
               *points_cols[] = { "series_id", NULL };
    long long o_run[] = { *off_run }, o_series[] = { off_series, *off_run }, o_points[] = { off_series };
    const char *keep = "run_id NOT IN (SELECT run_id FROM temp.skip_runs)";
    if (rc == SQLITE_OK)
        *step = "runs", rc = copy_table(db, "runs", id_only, o_run, "id NOT IN (SELECT run_id FROM temp.skip_runs)");
    static const char *const per_run[] = { "jobs", "queues", "services", "failure_kinds", "events", NULL };
    for (int i = 0; rc == SQLITE_OK && per_run[i]; i++)
        if (has_table(db, "src", per_run[i])) *step = per_run[i], rc = copy_table(db, per_run[i], run_only, o_run, keep);
    if (rc == SQLITE_OK) *step = "series", rc = copy_table(db, "series", series_cols, o_series, keep);
    if (rc == SQLITE_OK)
        *step = "points", rc = copy_table(db, "points", points_cols, o_points,
                                          "series_id IN (SELECT id FROM src.series WHERE run_id NOT IN "
                                          "(SELECT run_id FROM temp.skip_runs))");
    return rc;
}

/* The source's sweep points, replicas (their runs shifted by off_run) and
 * points that do not fit, joined to the mapped sweeps. */
static int copy_sweep_rows(sqlite3 *db, long long off_run, const char **step) {
    *step = "sweep points";
    int rc = store_exec(db, "INSERT OR IGNORE INTO main.sweep_points(sweep_id, key, x) SELECT m.dst, p.key, p.x "
                            "FROM src.sweep_points p JOIN temp.map_sweep m ON m.src = p.sweep_id");
    if (rc == SQLITE_OK) {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "INSERT INTO main.sweep_runs(sweep_id, point_key, replica, seed, run_id) SELECT m.dst, r.point_key, "
                 "r.replica, r.seed, r.run_id + %lld FROM src.sweep_runs r JOIN temp.map_sweep m ON m.src = "
                 "r.sweep_id WHERE r.run_id NOT IN (SELECT run_id FROM temp.skip_runs)", off_run);
        *step = "sweep runs", rc = store_exec(db, sql);
    }
    if (rc == SQLITE_OK && has_table(db, "src", "sweep_unfit"))
        *step = "sweep misfits", rc = store_exec(db, "INSERT OR IGNORE INTO main.sweep_unfit(sweep_id, point_key, reason) "
                                                     "SELECT m.dst, u.point_key, u.reason FROM src.sweep_unfit u "
                                                     "JOIN temp.map_sweep m ON m.src = u.sweep_id");
    return rc;
}

/* Everything of the attached source in one transaction. */
static int merge_attached(store *st, int *added, int *skipped, const char **step) {
    sqlite3 *db = st->db;
    *step = "begin";
    int rc = store_exec(db, "BEGIN IMMEDIATE");
    int src_sweeps = has_table(db, "src", "sweeps");
    if (rc == SQLITE_OK) *step = "sweep tables", rc = store_schema_run(st, "sweeps");
    if (rc == SQLITE_OK) *step = "maps", rc = store_exec(db, "DROP TABLE IF EXISTS temp.map_sweep; DROP TABLE IF EXISTS temp.skip_runs;"
                                                           "CREATE TEMP TABLE map_sweep(src INTEGER PRIMARY KEY, dst INTEGER);"
                                                           "CREATE TEMP TABLE skip_runs(run_id INTEGER PRIMARY KEY);");
    if (rc == SQLITE_OK && src_sweeps) *step = "sweeps", rc = map_sweeps(db);
    /* the source's runs of replicas the destination has */
    if (rc == SQLITE_OK && src_sweeps)
        *step = "skips", rc = store_exec(db, "INSERT OR IGNORE INTO temp.skip_runs SELECT r.run_id FROM src.sweep_runs r "
                                             "JOIN temp.map_sweep m ON m.src = r.sweep_id WHERE EXISTS (SELECT 1 FROM "
                                             "main.sweep_runs d WHERE d.sweep_id = m.dst AND d.point_key = r.point_key "
                                             "AND d.replica = r.replica)");
    long long off_run = 0;
    if (rc == SQLITE_OK) rc = copy_runs(db, &off_run, step);
    if (rc == SQLITE_OK && src_sweeps) rc = copy_sweep_rows(db, off_run, step);
    if (rc == SQLITE_OK) {
        *skipped = (int)scalar(db, "SELECT count(*) FROM temp.skip_runs", &rc);
        if (rc == SQLITE_OK)
            *added = (int)scalar(db, "SELECT count(*) FROM src.runs WHERE id NOT IN (SELECT run_id FROM temp.skip_runs)", &rc);
    }
    if (rc == SQLITE_OK) *step = "commit", rc = store_exec(db, "COMMIT");
    return rc;
}

int sweepdb_merge(store *st, const char *src_path, int *added, int *skipped, char *err, size_t errlen) {
    *added = *skipped = 0;
    /* the source must be a results database this program reads */
    store *chk = NULL;
    int status = store_open(src_path, STORE_READ, &chk, err, errlen);
    store_close(chk);
    if (status != STORE_OK) return status;
    sqlite3 *db = st->db;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS src", -1, &q, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(q, 1, src_path, -1, SQLITE_STATIC);
        rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_OK) return fail(st, rc, "cannot attach the database to merge", err, errlen);
    const char *step = "begin";
    rc = merge_attached(st, added, skipped, &step);
    int out = STORE_OK;
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot merge %s (%s): %s", store_path(st), src_path, step, sqlite3_errmsg(db));
        out = store_sql_status(rc);
        store_exec(db, "ROLLBACK");
    }
    store_exec(db, "DROP TABLE IF EXISTS temp.map_sweep; DROP TABLE IF EXISTS temp.skip_runs");
    store_exec(db, "DETACH DATABASE src");
    return out;
}
