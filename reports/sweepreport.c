/*
 * sweepreport: tables and charts of a sweep (see sweepreport.h).
 *
 * Everything comes from the database: the sweep's paths, its points and,
 * per point and metric, the replicas' values (sweepdb_values), summarised
 * by goal_stats_of. A sweep of P points, M metrics and R replicas reads
 * P*M small queries over P*R runs' JSON: a 100-point, 10-replica sweep
 * reports in well under a second.
 */
#include "reports/sweepreport.h"
#include "base/errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "reports/charts.h"
#include "reports/fileout.h"
#include "models/confidence.h"
#include "reports/goal.h"
#include "reports/sweepdb.h"

#define MAX_AXES 8
#define MAX_METRICS 64

typedef struct sdata {
    int64_t id;
    char scenario[128], file[512], sets[1024];
    int replicas;
    int n_axes;
    char axes[MAX_AXES][256];
    int n_points;
    char **key;
    char (*val)[MAX_AXES][64];
    double (*x)[MAX_AXES];
    int n_metrics;
    metric_path m[MAX_METRICS];
    goal_stats *stat;                /* [point * n_metrics + metric] */
    int varies[MAX_METRICS];
    char **unfit;                    /* per point: why it does not fit, or NULL */
    int n_unfit;
} sdata;

static void sdata_free(sdata *d) {
    for (int p = 0; p < d->n_points; p++) free(d->key[p]);
    for (int p = 0; d->unfit && p < d->n_points; p++) free(d->unfit[p]);
    free(d->unfit);
    free(d->key);
    free(d->val);
    free(d->x);
    free(d->stat);
}

static void add_metric(sdata *d, const char *z) {
    char e[256];
    if (d->n_metrics < MAX_METRICS && goal_metric_parse(z, &d->m[d->n_metrics], e, sizeof e) == 0) d->n_metrics++;
}

/* The metrics of the sweep's scenario, from one of its runs. */
static void find_metrics(sqlite3 *db, sdata *d) {
    static const char *const base[] = { "simulated_s", "cluster.cost_usd", "cluster.gpu_utilization",
                                        "cluster.energy_kwh", "failures.total", NULL };
    static const char *const train[] = { "end_s", "ettr", "lost_work_s", "interruptions", "checkpoint_interval_s",
                                         "time.checkpoint_stall_s", "time.waiting_for_nodes_s", NULL };
    static const char *const serve[] = { "ttft_p99_s", "tpot_p99_s", "e2e_p99_s", "slo_attainment",
                                         "output_tokens_per_s", NULL };
    static const char *const queue[] = { "mean_wait_s", "p95_wait_s", NULL };
    for (int i = 0; base[i]; i++) add_metric(d, base[i]);
    sqlite3_stmt *q = NULL;
    const char *sql =
        "WITH one AS (SELECT u.results_json AS j FROM sweep_runs r JOIN runs u ON u.id = r.run_id "
        "             WHERE r.sweep_id = ?1 AND u.status = 'complete' ORDER BY r.run_id LIMIT 1) "
        "SELECT 'jobs', json_extract(e.value, '$.name') FROM one, json_each(one.j, '$.jobs') e "
        "  WHERE json_extract(e.value, '$.kind') = 'training' "
        "UNION ALL SELECT 'services', json_extract(e.value, '$.name') FROM one, json_each(one.j, '$.services') e "
        "UNION ALL SELECT 'queues', json_extract(e.value, '$.name') FROM one, json_each(one.j, '$.queues') e";
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) return;
    sqlite3_bind_int64(q, 1, d->id);
    int per[3] = { 0, 0, 0 };
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *arr = (const char *)sqlite3_column_text(q, 0), *name = (const char *)sqlite3_column_text(q, 1);
        if (!arr || !name) continue;
        int k = !strcmp(arr, "jobs") ? 0 : !strcmp(arr, "services") ? 1 : 2;
        if (per[k]++ >= 8) continue;
        const char *const *f = k == 0 ? train : k == 1 ? serve : queue;
        for (int i = 0; f[i]; i++) {
            char z[256];
            snprintf(z, sizeof z, "%s[%s].%s", arr, name, f[i]);
            add_metric(d, z);
        }
    }
    sqlite3_finalize(q);
}

static int sdata_load(store *st, int64_t sweep, sdata *d, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    sqlite3 *db = store_db(st);
    if (!sweep && !sweepdb_latest(st, &sweep)) {
        errmsg_set(err, errlen, "%s: no sweep in this database", store_path(st));
        return 2;
    }
    d->id = sweep;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT scenario, scenario_file, replicas, sets FROM sweeps WHERE id = ?", -1, &q, NULL);
    int found = 0;
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, sweep);
        if (sqlite3_step(q) == SQLITE_ROW) {
            found = 1;
            snprintf(d->scenario, sizeof d->scenario, "%s", (const char *)sqlite3_column_text(q, 0));
            snprintf(d->file, sizeof d->file, "%s", (const char *)sqlite3_column_text(q, 1));
            d->replicas = sqlite3_column_int(q, 2);
            snprintf(d->sets, sizeof d->sets, "%s", (const char *)sqlite3_column_text(q, 3));
        }
    }
    sqlite3_finalize(q);
    if (!found) {
        errmsg_set(err, errlen, "%s: no sweep %lld", store_path(st), (long long)sweep);
        return rc == SQLITE_OK ? 2 : 1;
    }
    rc = sqlite3_prepare_v2(db, "SELECT value FROM json_each((SELECT params FROM sweeps WHERE id = ?))", -1, &q, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, sweep);
        while (sqlite3_step(q) == SQLITE_ROW && d->n_axes < MAX_AXES)
            snprintf(d->axes[d->n_axes++], sizeof d->axes[0], "%s", (const char *)sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
    /* points in the order of their values (numbers before words) */
    char sql[2048];
    int n = snprintf(sql, sizeof sql, "SELECT key, x FROM sweep_points WHERE sweep_id = ? ORDER BY ");
    for (int a = 0; a < d->n_axes; a++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, "coalesce(json_extract(x, '$[%d]'), json_extract(key, '$[%d]')), ", a, a);
    snprintf(sql + n, sizeof sql - (size_t)n, "key");
    rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    int cap = 0;
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, sweep);
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            if (d->n_points == cap) {
                cap = cap ? 2 * cap : 32;
                char **k = realloc(d->key, (size_t)cap * sizeof *k);
                if (k) d->key = k;
                void *v = k ? realloc(d->val, (size_t)cap * sizeof *d->val) : NULL;
                if (v) d->val = v;
                void *x = v ? realloc(d->x, (size_t)cap * sizeof *d->x) : NULL;
                if (x) d->x = x;
                if (!x) {
                    rc = SQLITE_NOMEM;
                    break;
                }
            }
            int p = d->n_points;
            d->key[p] = strdup((const char *)sqlite3_column_text(q, 0));
            if (!d->key[p]) {
                rc = SQLITE_NOMEM;
                break;
            }
            d->n_points++;
            sqlite3_stmt *e = NULL;
            for (int a = 0; a < MAX_AXES; a++) d->x[p][a] = NAN, d->val[p][a][0] = 0;
            if (sqlite3_prepare_v2(db, "SELECT j.key, j.value, json_extract(?2, '$[' || j.key || ']') FROM json_each(?1) j",
                                   -1, &e, NULL) == SQLITE_OK) {
                sqlite3_bind_text(e, 1, d->key[p], -1, SQLITE_STATIC);
                sqlite3_bind_text(e, 2, (const char *)sqlite3_column_text(q, 1), -1, SQLITE_TRANSIENT);
                while (sqlite3_step(e) == SQLITE_ROW) {
                    int a = sqlite3_column_int(e, 0);
                    if (a < 0 || a >= MAX_AXES) continue;
                    snprintf(d->val[p][a], sizeof d->val[p][a], "%s", (const char *)sqlite3_column_text(e, 1));
                    if (sqlite3_column_type(e, 2) != SQLITE_NULL) d->x[p][a] = sqlite3_column_double(e, 2);
                }
            }
            sqlite3_finalize(e);
        }
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot read the sweep: %s", store_path(st), sqlite3_errmsg(db));
        return 1;
    }
    find_metrics(db, d);
    d->unfit = calloc((size_t)d->n_points + 1, sizeof *d->unfit);
    for (int p = 0; d->unfit && p < d->n_points; p++)
        if ((d->unfit[p] = sweepdb_unfit_reason(st, d->id, d->key[p]))) d->n_unfit++;
    d->stat = calloc((size_t)(d->n_points ? d->n_points : 1) * (size_t)(d->n_metrics ? d->n_metrics : 1), sizeof *d->stat);
    if (!d->stat || !d->unfit) {
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    for (int p = 0; p < d->n_points; p++)
        for (int m = 0; m < d->n_metrics; m++) {
            double *v = NULL;
            int nv = 0;
            if (sweepdb_values(st, d->id, d->key[p], &d->m[m], &v, &nv, err, errlen) != STORE_OK) return 1;
            goal_stats_of(v, nv, &d->stat[p * d->n_metrics + m]);
            free(v);
        }
    for (int m = 0; m < d->n_metrics; m++) {
        const goal_stats *a = &d->stat[m];
        for (int p = 0; p < d->n_points; p++) {
            const goal_stats *b = &d->stat[p * d->n_metrics + m];
            if (b->n == 0) continue;
            if (b->p10 != b->p90 || (a->n && b->mean != a->mean) || b->missing) d->varies[m] = 1;
        }
    }
    return 0;
}

/* ---- formatting -------------------------------------------------------------- */

static int ends(const char *z, const char *suf) {
    size_t n = strlen(z), k = strlen(suf);
    return n >= k && !strcmp(z + n - k, suf);
}

static const char *fmt(const metric_path *m, double v, char *b, size_t n) {
    const char *f = m->field;
    double a = fabs(v);
    if (isnan(v)) snprintf(b, n, "n/a");
    else if (ends(f, "_s")) {
        if (a < 1) snprintf(b, n, "%.3g ms", v * 1e3);
        else if (a < 120) snprintf(b, n, "%.3g s", v);
        else if (a < 2 * 3600) snprintf(b, n, "%.1f min", v / 60);
        else if (a < 2 * 86400) snprintf(b, n, "%.2f h", v / 3600);
        else snprintf(b, n, "%.2f d", v / 86400);
    } else if (ends(f, "_usd")) {
        if (a >= 1e9) snprintf(b, n, "$%.3gB", v / 1e9);
        else if (a >= 1e6) snprintf(b, n, "$%.3gM", v / 1e6);
        else if (a >= 1e4) snprintf(b, n, "$%.3gk", v / 1e3);
        else snprintf(b, n, "$%.4g", v);
    } else if (ends(f, "ettr") || ends(f, "utilization") || ends(f, "attainment")) {
        snprintf(b, n, "%.4f", v);
    } else {
        snprintf(b, n, "%.4g", v);
    }
    return b;
}

/* The last step of a path, for column heads: ".../checkpoint/@interval" -> "checkpoint/@interval" */
static const char *short_path(const char *z) {
    const char *at = strrchr(z, '@');
    if (!at || at == z) return z;
    const char *p = at - 1;                           /* the '/' before '@' */
    while (p > z && p[-1] != '/') p--;
    return p;
}

/* "(lo..hi)", the mean's interval; "(n/a)" with fewer than 2 runs. */
static const char *ci_text(const metric_path *m, const goal_stats *s, char *b, size_t n) {
    char lo[64], hi[64];
    if (isnan(s->mean_lo) || isnan(s->mean_hi)) snprintf(b, n, "(n/a)");
    else snprintf(b, n, "(%s..%s)", fmt(m, s->mean_lo, lo, sizeof lo), fmt(m, s->mean_hi, hi, sizeof hi));
    return b;
}

int sweepreport_store_stats(store *st, int64_t sweep, char *err, size_t errlen) {
    sdata d;
    if (sdata_load(st, sweep, &d, err, errlen) != 0) {
        sdata_free(&d);
        return 1;
    }
    int rc = sweepdb_batch(st, 1, err, errlen) == STORE_OK ? 0 : 1;
    for (int p = 0; p < d.n_points && rc == 0; p++)
        for (int m = 0; m < d.n_metrics && rc == 0 && !d.unfit[p]; m++) {
            const goal_stats *s = &d.stat[p * d.n_metrics + m];
            if (sweepdb_stat(st, d.id, d.key[p], d.m[m].text, "mean", s->n, s->missing, s->mean, s->mean_lo, s->mean_hi,
                             CONFIDENCE_LEVEL, err, errlen) != STORE_OK)
                rc = 1;
        }
    char e2[256];
    if (sweepdb_batch(st, 0, rc ? e2 : err, rc ? sizeof e2 : errlen) != STORE_OK) rc = 1;
    sdata_free(&d);
    return rc;
}

int sweepreport_table(store *st, int64_t sweep, FILE *f) {
    sdata d;
    char err[1024];
    if (sdata_load(st, sweep, &d, err, sizeof err) != 0) {
        fprintf(f, "(no table: %s)\n", err);
        sdata_free(&d);
        return 1;
    }
    char same[4096] = "";
    size_t sn = 0;
    if (d.n_unfit) {
        fprintf(f, "\ndoes not fit (recorded, not run):\n");
        for (int p = 0; p < d.n_points; p++) {
            if (!d.unfit[p]) continue;
            fprintf(f, "  ");
            for (int a = 0; a < d.n_axes; a++) fprintf(f, "%s%s=%s", a ? " " : "", short_path(d.axes[a]), d.val[p][a]);
            fprintf(f, ": %s\n", d.unfit[p]);
        }
    }
    for (int m = 0; m < d.n_metrics; m++) {
        if (!d.varies[m]) {
            char v[64];
            if (d.n_points && d.stat[m].n) {
                int w = snprintf(same + sn, sizeof same - sn, "%s%s = %s", sn ? ", " : "", d.m[m].text, fmt(&d.m[m], d.stat[m].mean, v, sizeof v));
                if (w > 0 && (size_t)w < sizeof same - sn) sn += (size_t)w;
            }
            continue;
        }
        fprintf(f, "\n%s (across replicas):\n", d.m[m].text);
        fprintf(f, "  ");
        for (int a = 0; a < d.n_axes; a++) fprintf(f, "%-22s ", short_path(d.axes[a]));
        fprintf(f, "%5s %12s %25s %12s %12s\n", "runs", "mean", "(95% CI of the mean)", "p10", "p90");
        for (int p = 0; p < d.n_points; p++) {
            const goal_stats *s = &d.stat[p * d.n_metrics + m];
            char a1[64], a2[64], a3[64], ci[160];
            fprintf(f, "  ");
            for (int a = 0; a < d.n_axes; a++) fprintf(f, "%-22s ", d.val[p][a]);
            if (d.unfit[p]) {
                fprintf(f, "%5d %12s\n", 0, "does not fit");
                continue;
            }
            ci_text(&d.m[m], s, ci, sizeof ci);
            fprintf(f, "%5d %12s %25s %12s %12s%s\n", s->n, fmt(&d.m[m], s->mean, a1, sizeof a1), ci,
                    fmt(&d.m[m], s->p10, a2, sizeof a2), fmt(&d.m[m], s->p90, a3, sizeof a3),
                    s->missing ? "  (some runs without a value)" : "");
        }
    }
    if (sn) fprintf(f, "\nthe same at every point: %s\n", same);
    sdata_free(&d);
    return 0;
}

/* ---- files ----------------------------------------------------------------------- */

/* y scale for a metric: seconds shown in the unit its largest value reads best in */
static double y_unit(const sdata *d, int m, const char **name) {
    double mx = 0;
    for (int p = 0; p < d->n_points; p++) {
        double v = d->stat[p * d->n_metrics + m].p90;
        if (isfinite(v) && fabs(v) > mx) mx = fabs(v);
    }
    *name = "";
    if (ends(d->m[m].field, "_s")) {
        if (mx >= 2 * 86400) return *name = "days", 86400;
        if (mx >= 2 * 3600) return *name = "hours", 3600;
        if (mx >= 120) return *name = "minutes", 60;
        return *name = "seconds", 1;
    }
    if (ends(d->m[m].field, "_usd")) {
        if (mx >= 1e6) return *name = "million US$", 1e6;
        return *name = "US$", 1;
    }
    return 1;
}

/* z as gnuplot text: control characters (a line break would end a comment
 * or a command) as spaces, invalid UTF-8 as U+FFFD; in a single-quoted
 * string (quoted) ' doubled, gnuplot's escape there. */
static void gp_put(FILE *f, const char *z, int quoted) {
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
        int n = *p < 0x80 ? 1 : fileout_utf8_len(p);
        if (n > 1) {
            fwrite(p, 1, (size_t)n, f);
            p += n - 1;
        } else if (n == 0) {
            fputs("\xEF\xBF\xBD", f);
        } else if (*p == '\'' && quoted) {
            fputs("''", f);
        } else {
            fputc(*p < 0x20 || *p == 0x7F ? ' ' : *p, f);
        }
    }
}

static void gp_text(FILE *f, const char *z) { gp_put(f, z, 0); }

/* z then tail as one gnuplot single-quoted string that nothing in them
 * can end. */
static void gp_str(FILE *f, const char *z, const char *tail) {
    fputc('\'', f);
    gp_put(f, z, 1);
    gp_put(f, tail, 1);
    fputc('\'', f);
}

/* Chart every varying metric: x = the first path's values; one line per
 * combination of the other paths' values. Returns charts drawn; their
 * files are m<i>.svg. */
static int draw_charts(const sdata *d, const char *dir, int *drawn, char *note, size_t notelen) {
    char path[4200], why[1024];
    snprintf(path, sizeof path, "%s/sweep.gp", dir);
    fileout go;
    if (fileout_open(&go, path, 0, 0666, why, sizeof why) != 0) {
        snprintf(note, notelen, "charts not drawn: %.900s", why);
        return 0;
    }
    FILE *gp = go.f;
    int numeric = 1;
    double xmin = INFINITY, xmax = -INFINITY;
    for (int p = 0; p < d->n_points; p++) {
        double x = d->x[p][0];
        if (isnan(x)) numeric = 0;
        else {
            if (x < xmin) xmin = x;
            if (x > xmax) xmax = x;
        }
    }
    /* distinct first-axis values, in point order, for the tics */
    int nd = 0, *first = calloc((size_t)d->n_points + 1, sizeof *first), *xi = calloc((size_t)d->n_points + 1, sizeof *xi);
    for (int p = 0; first && xi && p < d->n_points; p++) {
        int k = 0;
        while (k < nd && strcmp(d->val[first[k]][0], d->val[p][0])) k++;
        if (k == nd) first[nd++] = p;
        xi[p] = k;
    }
    fprintf(gp, "# Charts of sweep %lld (", (long long)d->id);
    gp_text(gp, d->scenario);
    fprintf(gp, "), drawn by `clustertwin report`: gnuplot sweep.gp\n"
                "set terminal svg size 720,360 fixed noenhanced font 'Helvetica,12' background rgb 'white'\n"
                "set encoding utf8\nset grid\nset key outside right top\nset xlabel ");
    gp_str(gp, d->axes[0], "");
    fprintf(gp, "\n");
    if (numeric && xmin > 0 && xmax / xmin >= 8) fprintf(gp, "set logscale x 2\n");
    fprintf(gp, "set xtics (");
    for (int k = 0; k < nd; k++) {
        fputs(k ? ", " : "", gp);
        gp_str(gp, d->val[first[k]][0], "");
        fprintf(gp, " %.17g", numeric ? d->x[first[k]][0] : (double)k);
    }
    fprintf(gp, ")\n");
    if (!numeric) fprintf(gp, "set xrange [-0.5:%d.5]\n", nd - 1);
    /* the other axes' combinations: the series */
    int ns = 0, *series = calloc((size_t)d->n_points + 1, sizeof *series), *sfirst = calloc((size_t)d->n_points + 1, sizeof *sfirst);
    for (int p = 0; series && sfirst && p < d->n_points; p++) {
        int k = 0;
        for (; k < ns; k++) {
            int same = 1;
            for (int a = 1; a < d->n_axes; a++) same &= !strcmp(d->val[sfirst[k]][a], d->val[p][a]);
            if (same) break;
        }
        if (k == ns) sfirst[ns++] = p;
        series[p] = k;
    }
    int planned = 0;
    for (int m = 0; m < d->n_metrics && series && first && xi; m++) {
        if (!d->varies[m]) continue;
        char dat[4200];
        snprintf(dat, sizeof dat, "%s/m%d.dat", dir, m);
        fileout dout;
        if (fileout_open(&dout, dat, 0, 0666, why, sizeof why) != 0) continue;
        FILE *df = dout.f;
        const char *unit;
        double u = y_unit(d, m, &unit);
        for (int s = 0; s < ns; s++) {
            fprintf(df, "# series %d\n", s);
            for (int p = 0; p < d->n_points; p++) {
                if (series[p] != s) continue;
                const goal_stats *g = &d->stat[p * d->n_metrics + m];
                if (g->n == 0) continue;
                fprintf(df, "%.17g %.17g %.17g %.17g\n", numeric ? d->x[p][0] : (double)xi[p], g->mean / u, g->p10 / u,
                        g->p90 / u);
            }
            fprintf(df, "\n\n");
        }
        if (fileout_close(&dout, why, sizeof why) != 0) continue;
        fprintf(gp, "\nset output 'm%d.svg'\nset title ", m);
        char tail[64];
        snprintf(tail, sizeof tail, ": mean, p10..p90 of %d replicas", d->replicas);
        gp_str(gp, d->m[m].text, tail);
        fputs("\nset ylabel ", gp);
        gp_str(gp, unit, "");
        fputs("\nplot ", gp);
        for (int s = 0; s < ns; s++) {
            char label[512] = "";
            size_t k = 0;
            for (int a = 1; a < d->n_axes; a++) {
                int w = snprintf(label + k, sizeof label - k, "%s%s=%s", a > 1 ? ", " : "", short_path(d->axes[a]),
                                 d->val[sfirst[s]][a]);
                if (w > 0 && (size_t)w < sizeof label - k) k += (size_t)w;
            }
            fprintf(gp, "%s'm%d.dat' index %d using 1:2:3:4 with yerrorlines lw 2 title ", s ? ", \\\n     " : "", m, s);
            gp_str(gp, d->n_axes > 1 ? label : "mean (bars: p10..p90)", "");
        }
        fprintf(gp, "\n");
        drawn[planned++] = m;
    }
    fprintf(gp, "\nunset output\n");
    if (fileout_close(&go, why, sizeof why) != 0) {
        snprintf(note, notelen, "charts not drawn: %.900s", why);
        planned = 0;
    }
    free(first);
    free(xi);
    free(series);
    free(sfirst);
    if (!planned) return 0;
    for (int i = 0; i < planned; i++) {
        char svg[32];
        snprintf(svg, sizeof svg, "m%d.svg", drawn[i]);
        if (!charts_svg_target_ok(dir, svg)) {
            snprintf(note, notelen, "charts not drawn: %.600s/%s is not a regular file (gnuplot would wait on it "
                     "or replace it)", dir, svg);
            return 0;
        }
    }
    int rc = charts_gnuplot(dir, "sweep.gp", "sweep-charts.log");
    int ok = 0;
    for (int i = 0; i < planned; i++) {
        char svg[32];
        snprintf(svg, sizeof svg, "m%d.svg", drawn[i]);
        if (charts_svg_complete(dir, svg)) drawn[ok++] = drawn[i];
    }
    if (rc == 127 && ok == 0)
        snprintf(note, notelen, "Charts are not drawn: gnuplot could not be run (install Debian's gnuplot-nox, or "
                                "point CLUSTERTWIN_GNUPLOT at gnuplot); their data and script are in %.600s.", dir);
    else if (ok < planned)
        snprintf(note, notelen, "gnuplot drew %d of %d charts (exit status %d; its messages are in %.600s/sweep-charts.log).",
                 ok, planned, rc, dir);
    return ok;
}

static void html_table(FILE *f, const sdata *d, int m) {
    fprintf(f, "<table>\n<tr>");
    for (int a = 0; a < d->n_axes; a++) {
        fprintf(f, "<th>");
        fileout_html(f, short_path(d->axes[a]));
        fprintf(f, "</th>");
    }
    fprintf(f, "<th class=\"n\">runs</th><th class=\"n\">mean</th><th class=\"n\">95%% CI of the mean</th>"
               "<th class=\"n\">p10</th><th class=\"n\">p90</th><th class=\"n\">min</th><th class=\"n\">max</th></tr>\n");
    for (int p = 0; p < d->n_points; p++) {
        const goal_stats *s = &d->stat[p * d->n_metrics + m];
        char b[6][64], ci[160];
        fprintf(f, "<tr>");
        for (int a = 0; a < d->n_axes; a++) {
            fprintf(f, "<td>");
            fileout_html(f, d->val[p][a]);
            fprintf(f, "</td>");
        }
        if (d->unfit[p]) {
            fprintf(f, "<td class=\"n\">0</td><td colspan=\"6\">does not fit: ");
            fileout_html(f, d->unfit[p]);
            fprintf(f, "</td></tr>\n");
            continue;
        }
        fprintf(f, "<td class=\"n\">%d%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
                s->n, s->missing ? "*" : "", fmt(&d->m[m], s->mean, b[0], 64), ci_text(&d->m[m], s, ci, sizeof ci),
                fmt(&d->m[m], s->p10, b[1], 64), fmt(&d->m[m], s->p90, b[2], 64), fmt(&d->m[m], s->min, b[3], 64),
                fmt(&d->m[m], s->max, b[4], 64));
    }
    fprintf(f, "</table>\n");
}

static int write_html(const sdata *d, const char *dir, const char *db_path, char *note, size_t notelen, char *path,
                      size_t pathlen, char *err, size_t errlen) {
    int drawn[MAX_METRICS];
    int nd = draw_charts(d, dir, drawn, note, notelen);
    snprintf(path, pathlen, "%s/index.html", dir);
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return -1;
    FILE *f = o.f;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n"
               "<head><meta charset=\"utf-8\"/><title>Sweep of ");
    fileout_html(f, d->scenario);
    fprintf(f, "</title>\n<style>body{font-family:Helvetica,Arial,sans-serif;margin:2em;max-width:1100px}"
               "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border-bottom:1px solid #ddd;padding:.2em .6em;"
               "text-align:left}.n{text-align:right;font-variant-numeric:tabular-nums}h2{margin-top:2em}"
               ".meta{color:#555}</style></head>\n<body>\n<h1>Sweep of ");
    fileout_html(f, d->scenario);
    fprintf(f, "</h1>\n<p class=\"meta\">Scenario ");
    fileout_html(f, d->file);
    fprintf(f, "; database ");
    fileout_html(f, db_path);
    fprintf(f, "; sweep %lld: %d points, %d replicas each (seeds derived from the scenario's seed and the replica). "
               "Varied: ", (long long)d->id, d->n_points, d->replicas);
    for (int a = 0; a < d->n_axes; a++) {
        fprintf(f, "%s<code>", a ? ", " : "");
        fileout_html(f, d->axes[a]);
        fprintf(f, "</code>");
    }
    if (strcmp(d->sets, "[]")) {
        fprintf(f, ". Fixed: <code>");
        fileout_html(f, d->sets);
        fprintf(f, "</code>");
    }
    fprintf(f, ". Each table gives the metric across the replicas of each point: mean, the 95%% confidence "
               "interval of the mean (Student t), 10th and 90th percentile (linear interpolation; the spread of the "
               "runs, not an interval), min and max; * marks points where some runs have no value (a job that "
               "never ended).</p>\n");
    if (d->n_unfit) {
        fprintf(f, "<h2>Points that do not fit</h2>\n<p>Recorded and not run:</p>\n<ul>\n");
        for (int p = 0; p < d->n_points; p++) {
            if (!d->unfit[p]) continue;
            fprintf(f, "<li>");
            for (int a = 0; a < d->n_axes; a++) {
                fprintf(f, "%s<code>", a ? " " : "");
                fileout_html(f, short_path(d->axes[a]));
                fprintf(f, "=");
                fileout_html(f, d->val[p][a]);
                fprintf(f, "</code>");
            }
            fprintf(f, ": ");
            fileout_html(f, d->unfit[p]);
            fprintf(f, "</li>\n");
        }
        fprintf(f, "</ul>\n");
    }
    if (note[0]) {
        fprintf(f, "<p class=\"meta\">");
        fileout_html(f, note);
        fprintf(f, "</p>\n");
    }
    char same[8192] = "";
    size_t sn = 0;
    for (int m = 0; m < d->n_metrics; m++) {
        if (!d->varies[m]) {
            char v[64];
            if (d->n_points && d->stat[m].n) {
                int w = snprintf(same + sn, sizeof same - sn, "%s%s = %s", sn ? "; " : "", d->m[m].text,
                                 fmt(&d->m[m], d->stat[m].mean, v, sizeof v));
                if (w > 0 && (size_t)w < sizeof same - sn) sn += (size_t)w;
            }
            continue;
        }
        fprintf(f, "<h2>");
        fileout_html(f, d->m[m].text);
        fprintf(f, "</h2>\n");
        for (int i = 0; i < nd; i++)
            if (drawn[i] == m) fprintf(f, "<p><img src=\"m%d.svg\" alt=\"chart\" width=\"720\" height=\"360\"/></p>\n", m);
        html_table(f, d, m);
    }
    if (sn) {
        fprintf(f, "<h2>The same at every point</h2>\n<p>");
        fileout_html(f, same);
        fprintf(f, "</p>\n");
    }
    fprintf(f, "</body>\n</html>\n");
    return fileout_close(&o, err, errlen) ? -1 : 0;
}

static int write_md(const sdata *d, const char *dir, char *path, size_t pathlen, char *err, size_t errlen) {
    snprintf(path, pathlen, "%s/report.md", dir);
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return -1;
    FILE *f = o.f;
    fputs("# Sweep of ", f);
    fileout_md(f, d->scenario);
    fprintf(f, "\n\n%d points x %d replicas of ", d->n_points, d->replicas);
    fileout_md(f, d->file);
    fputs(". Varied:", f);
    for (int a = 0; a < d->n_axes; a++) {
        fputs(a ? ", " : " ", f);
        fileout_md(f, d->axes[a]);
    }
    fprintf(f, ".\n");
    for (int m = 0; m < d->n_metrics; m++) {
        if (!d->varies[m]) continue;
        fputs("\n## ", f);
        fileout_md(f, d->m[m].text);
        fputs("\n\n|", f);
        for (int a = 0; a < d->n_axes; a++) {
            fputc(' ', f);
            fileout_md(f, short_path(d->axes[a]));
            fputs(" |", f);
        }
        fprintf(f, " runs | mean | 95%% CI of the mean | p10 | p90 |\n|");
        for (int a = 0; a < d->n_axes; a++) fprintf(f, "---|");
        fprintf(f, "--:|--:|--:|--:|--:|\n");
        for (int p = 0; p < d->n_points; p++) {
            const goal_stats *s = &d->stat[p * d->n_metrics + m];
            char b[3][64], ci[160];
            fprintf(f, "|");
            for (int a = 0; a < d->n_axes; a++) {
                fputc(' ', f);
                fileout_md(f, d->val[p][a]);
                fputs(" |", f);
            }
            if (d->unfit[p]) {
                fputs(" 0 | does not fit: ", f);
                fileout_md(f, d->unfit[p]);
                fputs(" | | | |\n", f);
                continue;
            }
            fprintf(f, " %d | %s | %s | %s | %s |\n", s->n, fmt(&d->m[m], s->mean, b[0], 64),
                    ci_text(&d->m[m], s, ci, sizeof ci), fmt(&d->m[m], s->p10, b[1], 64), fmt(&d->m[m], s->p90, b[2], 64));
        }
    }
    return fileout_close(&o, err, errlen) ? -1 : 0;
}

static int write_csv(const sdata *d, const char *dir, char *path, size_t pathlen, char *err, size_t errlen) {
    char file[4200];
    snprintf(path, pathlen, "%s", dir);
    snprintf(file, sizeof file, "%s/sweep.csv", dir);
    fileout o;
    if (fileout_open(&o, file, 0, 0666, err, errlen) != 0) return -1;
    FILE *f = o.f;
    for (int a = 0; a < d->n_axes; a++) {
        fileout_csv(f, d->axes[a]);
        fputc(',', f);
    }
    fprintf(f, "metric,runs,missing,mean,p10,p50,p90,min,max,mean_ci_low,mean_ci_high,ci_level,does_not_fit\n");
    for (int p = 0; p < d->n_points; p++)
        for (int m = 0; m < d->n_metrics; m++) {
            const goal_stats *s = &d->stat[p * d->n_metrics + m];
            for (int a = 0; a < d->n_axes; a++) {
                fileout_csv(f, d->val[p][a]);
                fputc(',', f);
            }
            fileout_csv(f, d->m[m].text);
            fprintf(f, ",%d,%d", s->n, s->missing);
            double v[] = { s->mean, s->p10, s->p50, s->p90, s->min, s->max, s->mean_lo, s->mean_hi };
            for (int i = 0; i < 8; i++) {
                if (isnan(v[i])) fprintf(f, ",");
                else fprintf(f, ",%.10g", v[i]);
            }
            fprintf(f, ",%g,", CONFIDENCE_LEVEL);
            if (d->unfit[p]) fileout_csv(f, d->unfit[p]);
            fprintf(f, "\n");
        }
    return fileout_close(&o, err, errlen) ? -1 : 0;
}

int sweepreport_write(store *st, int64_t sweep, const report_opts *o, char *main_file, size_t mainlen, char *notes,
                      size_t noteslen, char *err, size_t errlen) {
    if (notes && noteslen) notes[0] = 0;
    sdata d;
    int rc = sdata_load(st, sweep, &d, err, errlen);
    if (rc) {
        sdata_free(&d);
        return rc;
    }
    if (fileout_mkdirs(o->out_dir) != 0) {
        errmsg_set(err, errlen, "cannot create %s: %s", o->out_dir, strerror(errno));
        sdata_free(&d);
        return 1;
    }
    char note[1024] = "";
    int w = o->format == REPORT_CSV ? write_csv(&d, o->out_dir, main_file, mainlen, err, errlen)
            : o->format == REPORT_MD ? write_md(&d, o->out_dir, main_file, mainlen, err, errlen)
                                     : write_html(&d, o->out_dir, o->db_path, note, sizeof note, main_file, mainlen,
                                                  err, errlen);
    if (w < 0) rc = 1;
    if (note[0] && notes) snprintf(notes, noteslen, "%s\n", note);
    sdata_free(&d);
    return rc;
}
