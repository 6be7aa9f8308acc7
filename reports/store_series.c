/*
 * store_series: a run's time series as rows of the series and points
 * tables, in the run's last transaction (store_int.h: store_series_write).
 *
 * A job's or service's series leaves out a bucket equal bit for bit to the
 * one before it (first and last kept): a job's progress is flat before it
 * starts and after it ends, so a 10K-GPU year stores ~35,000 points for
 * its 962 jobs instead of 1.85M. Readers fill the gaps (rundata_series);
 * cluster series are whole, for SQL over them. The flat stretches that the
 * resampler holds without storing (series_runs) are stepped over, not
 * read bucket by bucket, and the points go 32 rows an INSERT
 * (store_batch.c): 67 perf samples of the simulating thread's tail before,
 * 38 after ("The results store, sixth round", docs/performance.md). The rows are
 * the same, in the same order.
 */
#include "reports/store_int.h"
#include "base/grow.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* One series' points to write, the rows of store_batch_insert. */
typedef struct point_rows {
    sqlite3_int64 id;                  /* series.id */
    int n;
    size_t cap;
    struct point {
        int k;
        double t_s, b[4];              /* dt_s, mean, min, max */
    } *p;
} point_rows;

static int point_row(void *ctx, sqlite3_stmt *q, int base, int64_t i) {
    const point_rows *r = ctx;
    if (i >= r->n) return SQLITE_DONE;
    const struct point *p = &r->p[i];
    int rc = sqlite3_bind_int64(q, base + 1, r->id);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(q, base + 2, p->k);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(q, base + 3, p->t_s);
    for (int c = 0; c < 4 && rc == SQLITE_OK; c++) rc = sqlite3_bind_double(q, base + 4 + c, p->b[c]);
    return rc;
}

static int add_point(point_rows *r, int k, double t_s, const double b[4]) {
    if (GROW(r->p, r->cap, (size_t)r->n + 1)) return SQLITE_NOMEM;
    r->p[r->n].k = k;
    r->p[r->n].t_s = t_s;
    memcpy(r->p[r->n++].b, b, 4 * sizeof *b);
    return SQLITE_OK;
}

/* The points of series i into r: every bucket, or (elide) those that
 * differ from the one before, first and last kept. */
static int collect(const store *st, int i, int elide, point_rows *r) {
    int n = series_points(st->ss, i), lead, held, rc = SQLITE_OK;
    series_runs(st->ss, i, &lead, &held);
    double was[4] = { 0 };
    for (int k = 0; rc == SQLITE_OK && k < n; k++) {
        if (elide && k >= 1 && k < lead - 1 && k < n - 2) k = (lead < n - 1 ? lead : n - 1) - 1;   /* as bucket 0 */
        else if (elide && k > held && k < n - 2) k = n - 2;                                     /* as bucket held */
        double t, b[4];
        series_point(st->ss, i, k, &t, &b[0], &b[1], &b[2], &b[3]);
        if (elide && k > 0 && k < n - 1 && !memcmp(b, was, sizeof b)) continue;   /* the row before holds */
        memcpy(was, b, sizeof b);
        rc = add_point(r, k, t, b);
    }
    return rc;
}

/* The run's cost so far as a series on series 0's grid: it accrues at a
 * constant rate (provisioned node-hours at the node price), so cost(t) =
 * cost_usd * t / simulated_s. */
static int collect_cost(const store *st, double simulated_s, double cost_usd, point_rows *r) {
    double rate = simulated_s > 0 ? cost_usd / simulated_s : 0;
    int rc = SQLITE_OK;
    for (int k = 0; rc == SQLITE_OK && k < series_points(st->ss, 0); k++) {
        double t, dt, mean, mn, mx;
        series_point(st->ss, 0, k, &t, &dt, &mean, &mn, &mx);
        double b[4] = { dt, rate * (t + dt / 2), rate * t, rate * (t + dt) };
        rc = add_point(r, k, t, b);
    }
    return rc;
}

/* The series row (entity, name), then its points from r. */
static int put_series(store *st, sqlite3_stmt *ser, sqlite3_stmt *many, sqlite3_stmt *one, const char *entity,
                      const char *name, point_rows *r) {
    int rc = store_bind(ser, "Itt", st->run, entity, name);
    if (rc == SQLITE_OK) rc = sqlite3_step(ser);
    sqlite3_reset(ser);
    if (rc != SQLITE_DONE) return rc;
    r->id = sqlite3_last_insert_rowid(st->db);
    return store_batch_insert(many, one, point_row, r, NULL);
}

int store_series_write(store *st, double simulated_s, double cost_usd) {
    static const char head[] = "INSERT INTO points(series_id, k, t_s, dt_s, mean, min, max)";
    sqlite3_stmt *one = NULL, *ser = NULL, *many = NULL;
    int rc = sqlite3_prepare_v2(st->db, "INSERT INTO points(series_id, k, t_s, dt_s, mean, min, max) "
                                        "VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &one, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(st->db, "INSERT INTO series(run_id, entity, name) VALUES (?, ?, ?)", -1, &ser, NULL);
    if (rc == SQLITE_OK) rc = store_kept_batch(st, KEPT_POINTS_MANY, head, 7, &many);
    point_rows r = { 0 };
    int has_cost = 0;
    for (int i = 0; rc == SQLITE_OK && i < st->n_names; i++) {
        const char *entity = st->series_entity[i], *name = st->series_name[i];
        has_cost |= !strcmp(entity, "cluster") && !strcmp(name, "cost_usd");
        r.n = 0;
        rc = collect(st, i, strcmp(entity, "cluster") != 0, &r);
        if (rc == SQLITE_OK) rc = put_series(st, ser, many, one, entity, name, &r);
    }
    if (rc == SQLITE_OK && !has_cost && st->n_names > 0) {
        r.n = 0;
        rc = collect_cost(st, simulated_s, cost_usd, &r);
        if (rc == SQLITE_OK) rc = put_series(st, ser, many, one, "cluster", "cost_usd", &r);
    }
    free(r.p);
    sqlite3_finalize(one);
    sqlite3_finalize(ser);
    return rc;
}
