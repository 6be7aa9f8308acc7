/*
 * rundata_series: a run's time series and events, read on demand. A series
 * has at most STORE_MAX_POINTS buckets (2,000 rows); the events of one kind
 * are O(events of that kind) (a year of a 10K-GPU cluster: a few thousand
 * failures).
 */
#include "reports/rundata_int.h"

#include <stdlib.h>
#include <string.h>

int rundata_series(rundata_db *rd, const rundata *r, const char *entity, const char *name, double **t,
                   double **dt, double **mean, double **max) {
    *t = *dt = *mean = *max = NULL;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(rd->db,
                                "SELECT p.t_s, p.dt_s, p.mean, p.max FROM points p JOIN series s ON s.id = p.series_id "
                                "WHERE s.run_id = ? AND s.entity = ? AND s.name = ? ORDER BY p.k", -1, &q, NULL);
    if (rc != SQLITE_OK) return -1;
    sqlite3_bind_int64(q, 1, r->id);
    sqlite3_bind_text(q, 2, entity, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, name, -1, SQLITE_STATIC);
    int n = 0, cap = 0;
    double *block = NULL;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (n == cap) {
            int c2 = cap ? 2 * cap : 256;
            double *p = realloc(block, (size_t)c2 * 4 * sizeof *p);
            if (!p) {
                free(block);
                sqlite3_finalize(q);
                return -1;
            }
            /* four arrays of cap each, moved apart to c2 each */
            for (int a = 3; a >= 1; a--) memmove(p + (size_t)a * c2, p + (size_t)a * cap, (size_t)n * sizeof *p);
            block = p;
            cap = c2;
        }
        for (int a = 0; a < 4; a++) block[(size_t)a * cap + n] = sqlite3_column_double(q, a);
        n++;
    }
    sqlite3_finalize(q);
    if (!block) return 0;
    *t = block;
    *dt = block + cap;
    *mean = block + 2 * (size_t)cap;
    *max = block + 3 * (size_t)cap;
    return n;
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
