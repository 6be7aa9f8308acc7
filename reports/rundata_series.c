/*
 * rundata_series: a run's time series and events, read on demand. A series
 * has at most STORE_MAX_POINTS buckets (2,000 rows; a job's or service's
 * are stored without the buckets that repeat the one before, and filled
 * back here); the events of one kind are O(events of that kind) (a year of
 * a 10K-GPU cluster: a few thousand failures).
 */
#include "reports/rundata_int.h"

#include <stdlib.h>
#include <string.h>

/* Four columns of cap rows each in one block; room for one more row. */
typedef struct cols { double *block; int n, cap; } cols;

static int cols_push(cols *c, const double v[4]) {
    if (c->n == c->cap) {
        int c2 = c->cap ? 2 * c->cap : 256;
        double *p = realloc(c->block, (size_t)c2 * 4 * sizeof *p);
        if (!p) return -1;
        /* four arrays of cap each, moved apart to c2 each */
        for (int a = 3; a >= 1; a--) memmove(p + (size_t)a * c2, p + (size_t)a * c->cap, (size_t)c->n * sizeof *p);
        c->block = p;
        c->cap = c2;
    }
    for (int a = 0; a < 4; a++) c->block[(size_t)a * c->cap + c->n] = v[a];
    c->n++;
    return 0;
}

/* Bucket k of the stored rows, after the last one pushed: a job's or a
 * service's series leaves out a bucket equal to the one before
 * (store_run.c), so buckets n..k-1 repeat the last, at t = k * W. */
static int cols_fill(cols *c, int k, double bucket_s) {
    if (c->n == 0 || k - c->n > STORE_MAX_POINTS || !(bucket_s > 0)) return 0;   /* none left out */
    while (c->n < k) {
        double v[4];
        for (int a = 1; a < 4; a++) v[a] = c->block[(size_t)a * c->cap + c->n - 1];
        v[0] = c->n * bucket_s;
        if (cols_push(c, v) < 0) return -1;
    }
    return 0;
}

int rundata_series(rundata_db *rd, const rundata *r, const char *entity, const char *name, double **t,
                   double **dt, double **mean, double **max) {
    *t = *dt = *mean = *max = NULL;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(rd->db,
                                "SELECT p.t_s, p.dt_s, p.mean, p.max, p.k FROM points p JOIN series s ON s.id = p.series_id "
                                "WHERE s.run_id = ? AND s.entity = ? AND s.name = ? ORDER BY p.k", -1, &q, NULL);
    if (rc != SQLITE_OK) return -1;
    sqlite3_bind_int64(q, 1, r->id);
    sqlite3_bind_text(q, 2, entity, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, name, -1, SQLITE_STATIC);
    cols c = { 0 };
    while (sqlite3_step(q) == SQLITE_ROW) {
        double v[4];
        for (int a = 0; a < 4; a++) v[a] = sqlite3_column_double(q, a);
        if (cols_fill(&c, sqlite3_column_int(q, 4), r->bucket_s) < 0 || cols_push(&c, v) < 0) {
            free(c.block);
            sqlite3_finalize(q);
            return -1;
        }
    }
    sqlite3_finalize(q);
    if (!c.block) return 0;
    *t = c.block;
    *dt = c.block + c.cap;
    *mean = c.block + 2 * (size_t)c.cap;
    *max = c.block + 3 * (size_t)c.cap;
    return c.n;
}

double rundata_cost_at(rundata_db *rd, const rundata *r, double t_s) {
    double *t, *dt, *mean, *max;
    int n = rundata_series(rd, r, "cluster", "cost_usd", &t, &dt, &mean, &max);
    double v = NAN;
    for (int k = 0; k < n; k++) {
        if (t_s > t[k] + dt[k] && k + 1 < n) continue;
        double start = k ? max[k - 1] : 0;         /* the value at the bucket's start */
        double f = dt[k] > 0 ? (t_s - t[k]) / dt[k] : 1;
        v = start + (max[k] - start) * fmin(1, fmax(0, f));
        break;
    }
    free(t);
    if (isnan(v) && r->simulated_s > 0 && !isnan(r->cost_usd)) v = r->cost_usd * fmin(1, t_s / r->simulated_s);
    return v;
}

static void time_row(sqlite3_stmt *q, void *row) { *(double *)row = sqlite3_column_double(q, 0); }

int rundata_event_times(rundata_db *rd, const rundata *r, const char *kind, double **t) {
    *t = NULL;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(rd->db, "SELECT t_s FROM events WHERE run_id = ? AND kind = ? ORDER BY seq", -1, &q, NULL)) {
        sqlite3_finalize(q);
        return -1;
    }
    sqlite3_bind_int64(q, 1, r->id);
    sqlite3_bind_text(q, 2, kind, -1, SQLITE_STATIC);
    int n = 0;
    if (rd_read_rows(q, (void **)t, &n, sizeof **t, time_row) != SQLITE_OK) {
        free(*t);
        *t = NULL;
        return -1;
    }
    return n;
}
