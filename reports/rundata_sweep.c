/*
 * rundata_sweep: a sweep's points and values (see rundata_sweep.h). A sweep
 * of P points reads P small queries for the points' values; a metric's
 * values are P*R rows of JSON (sweepdb_values), read per point on demand.
 */
#include "reports/rundata_sweep.h"
#include "reports/rundata_int.h"
#include "base/errmsg.h"
#include "base/grow.h"
#include "reports/sweepdb.h"

#include <stdlib.h>
#include <string.h>

int rundata_sweep_latest(rundata_db *rd, int64_t *sweep) { return sweepdb_latest(rd->st, sweep); }

void rundata_sweep_free(rd_sweep *s) {
    for (int p = 0; p < s->n_points; p++) free(s->key[p]);
    for (int p = 0; s->unfit && p < s->n_points; p++) free(s->unfit[p]);
    free(s->unfit);
    free(s->key);
    free(s->val);
    free(s->x);
    memset(s, 0, sizeof *s);
}

/* The sweeps row and its varied paths. SQLITE_OK, SQLITE_DONE (no such
 * sweep) or the read's error. */
static int load_header(sqlite3 *db, rd_sweep *s) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT scenario, scenario_file, replicas, sets FROM sweeps WHERE id = ?", -1, &q,
                                NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_int64(q, 1, s->id);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        rd_col_text(q, 0, s->scenario, sizeof s->scenario);
        rd_col_text(q, 1, s->file, sizeof s->file);
        s->replicas = sqlite3_column_int(q, 2);
        rd_col_text(q, 3, s->sets, sizeof s->sets);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_OK) return rc;
    if (sqlite3_prepare_v2(db, "SELECT value FROM json_each((SELECT params FROM sweeps WHERE id = ?))", -1, &q, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(q, 1, s->id);
        while (sqlite3_step(q) == SQLITE_ROW && s->n_axes < RD_SWEEP_AXES)
            rd_col_text(q, 0, s->axes[s->n_axes++], sizeof s->axes[0]);
    }
    sqlite3_finalize(q);
    return SQLITE_OK;
}

/* Point p's values: key as written, x in SI units (null for words). */
static void point_values(sqlite3 *db, rd_sweep *s, int p, const char *x) {
    sqlite3_stmt *e = NULL;
    for (int a = 0; a < RD_SWEEP_AXES; a++) s->x[p][a] = NAN, s->val[p][a][0] = 0;
    if (sqlite3_prepare_v2(db, "SELECT j.key, j.value, json_extract(?2, '$[' || j.key || ']') FROM json_each(?1) j",
                           -1, &e, NULL) == SQLITE_OK) {
        sqlite3_bind_text(e, 1, s->key[p], -1, SQLITE_STATIC);
        sqlite3_bind_text(e, 2, x ? x : "[]", -1, SQLITE_TRANSIENT);
        while (sqlite3_step(e) == SQLITE_ROW) {
            int a = sqlite3_column_int(e, 0);
            if (a < 0 || a >= RD_SWEEP_AXES) continue;
            rd_col_text(e, 1, s->val[p][a], sizeof s->val[p][a]);
            if (sqlite3_column_type(e, 2) != SQLITE_NULL) s->x[p][a] = sqlite3_column_double(e, 2);
        }
    }
    sqlite3_finalize(e);
}

/* The points in the order of their values (numbers before words). */
static int load_points(sqlite3 *db, rd_sweep *s) {
    char sql[2048];
    int n = snprintf(sql, sizeof sql, "SELECT key, x FROM sweep_points WHERE sweep_id = ? ORDER BY ");
    for (int a = 0; a < s->n_axes; a++)
        n += snprintf(sql + n, sizeof sql - (size_t)n,
                      "coalesce(json_extract(x, '$[%d]'), json_extract(key, '$[%d]')), ", a, a);
    snprintf(sql + n, sizeof sql - (size_t)n, "key");
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    if (rc != SQLITE_OK) return rc;
    size_t ck = 0, cv = 0, cx = 0;
    sqlite3_bind_int64(q, 1, s->id);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        size_t need = (size_t)s->n_points + 1;
        if (GROW(s->key, ck, need) || GROW(s->val, cv, need) || GROW(s->x, cx, need)) {
            rc = SQLITE_NOMEM;
            break;
        }
        int p = s->n_points;
        const unsigned char *key = sqlite3_column_text(q, 0);
        if (!(s->key[p] = strdup(key ? (const char *)key : "[]"))) {
            rc = SQLITE_NOMEM;
            break;
        }
        s->n_points++;
        point_values(db, s, p, (const char *)sqlite3_column_text(q, 1));
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The training jobs, services and queues of one of the sweep's complete
 * runs (the first), RD_SWEEP_NAMES of each at most. */
static void load_names(sqlite3 *db, rd_sweep *s) {
    sqlite3_stmt *q = NULL;
    const char *sql =
        "WITH one AS (SELECT u.results_json AS j FROM sweep_runs r JOIN runs u ON u.id = r.run_id "
        "             WHERE r.sweep_id = ?1 AND u.status = 'complete' ORDER BY r.run_id LIMIT 1) "
        "SELECT 0, json_extract(e.value, '$.name') FROM one, json_each(one.j, '$.jobs') e "
        "  WHERE json_extract(e.value, '$.kind') = 'training' "
        "UNION ALL SELECT 1, json_extract(e.value, '$.name') FROM one, json_each(one.j, '$.services') e "
        "UNION ALL SELECT 2, json_extract(e.value, '$.name') FROM one, json_each(one.j, '$.queues') e";
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) return;
    sqlite3_bind_int64(q, 1, s->id);
    while (sqlite3_step(q) == SQLITE_ROW) {
        int k = sqlite3_column_int(q, 0);
        if (k < 0 || k >= RD_SWEEP_KINDS || sqlite3_column_type(q, 1) == SQLITE_NULL) continue;
        if (s->n_names[k] < RD_SWEEP_NAMES) rd_col_text(q, 1, s->names[k][s->n_names[k]++], sizeof s->names[0][0]);
    }
    sqlite3_finalize(q);
}

int rundata_sweep_load(rundata_db *rd, int64_t sweep, rd_sweep *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    const char *path = rundata_path(rd);
    if (!sweep && !sweepdb_latest(rd->st, &sweep)) {
        errmsg_set(err, errlen, "%s: no sweep in this database", path);
        return 2;
    }
    s->id = sweep;
    int rc = load_header(rd->db, s);
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: no sweep %lld", path, (long long)sweep);
        return rc == SQLITE_DONE ? 2 : 1;
    }
    if ((rc = load_points(rd->db, s)) != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot read the sweep: %s", path,
                   rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(rd->db));
        return 1;
    }
    load_names(rd->db, s);
    s->unfit = calloc((size_t)s->n_points + 1, sizeof *s->unfit);
    if (!s->unfit) {
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    for (int p = 0; p < s->n_points; p++)
        if ((s->unfit[p] = sweepdb_unfit_reason(rd->st, s->id, s->key[p]))) s->n_unfit++;
    return 0;
}

int rundata_sweep_values(rundata_db *rd, const rd_sweep *s, int p, const metric_path *m, double **v, int *n,
                         char *err, size_t errlen) {
    return sweepdb_values(rd->st, s->id, s->key[p], m, v, n, err, errlen);
}
