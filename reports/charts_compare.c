/*
 * charts_compare: two runs' charts overlaid on shared axes, so a
 * difference reads as the gap between two lines rather than between two
 * pictures side by side. One chart per quantity; run A is drawn in blue,
 * run B in orange, each with its legend entry. Every quantity is a curve
 * (x, y) per run, written as two blocks of one data file (cmp-KEY.dat);
 * a run without the quantity (no training job, no service) is left out
 * of that chart, and a chart neither run has is not drawn.
 */
#include "reports/charts_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const colour[2] = { "#1565c0", "#ef6c00" };

/* One run's curve: n points (x, y), malloc'd. */
typedef struct curve {
    double *x, *y;
    int n;
} curve;

static void curve_free(curve *c) {
    free(c->x);
    free(c->y);
    memset(c, 0, sizeof *c);
}

/* Room for n points; 0, or -1 (out of memory: the curve is empty). */
static int curve_alloc(curve *c, int n) {
    c->n = 0;
    c->x = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->x);
    c->y = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->y);
    if (c->x && c->y) return 0;
    curve_free(c);
    return -1;
}

/* How an overlaid chart reads. */
typedef struct overlay {
    const char *key, *title, *caption;
    const char *settings;            /* gnuplot lines before plot: labels, ranges */
    const char *with;                /* "lines", "steps" */
    const char *using;               /* "1:2", "1:($2*100)" */
} overlay;

/* Write the curves of runs a and b (those with points) as cmp-KEY.dat and
 * their plot; nothing when neither has a point. */
static void draw_overlay(plan *p, const overlay *o, const curve c[2], const char *const label[2]) {
    if (c[0].n == 0 && c[1].n == 0) return;
    FILE *f = open_in(p, o->key, ".dat");
    if (!f) return;
    int block = 0;
    for (int k = 0; k < 2; k++) {
        if (!c[k].n) continue;
        fprintf(f, "%s# %s: %s\n", block++ ? "\n\n" : "", label[k], o->title);
        for (int i = 0; i < c[k].n; i++) fprintf(f, "%.9g %.9g\n", c[k].x[i], c[k].y[i]);
    }
    if (close_in(p) != 0) return;
    begin(p, o->key, o->title, o->caption);
    fprintf(p->gp, "%sset key inside top left vertical noenhanced\nplot ", o->settings);
    block = 0;
    for (int k = 0; k < 2; k++) {
        if (!c[k].n) continue;
        fprintf(p->gp, "%s'%s%s.dat' index %d u %s w %s lw 2 lc rgb '%s' t ", block ? ", \\\n  " : "", p->prefix,
                o->key, block, o->using, o->with, colour[k]);
        gp_quote(p->gp, label[k]);
        block++;
    }
    fputs("\n", p->gp);
}

/* ---- the curves ---------------------------------------------------------- */

/* GPUs busy (every state but idle) at the end of each bucket, by time. */
static void busy_curve(plan *p, rundata_db *rd, const rundata *r, curve *c) {
    static const char *const busy[] = { "gpus_training", "gpus_checkpoint", "gpus_restarting", "gpus_batch",
                                        "gpus_serving" };
    double *t[5], *dt[5], *mean[5], *mx[5];
    int n[5], npts = -1, first = -1;
    for (int i = 0; i < 5; i++) {
        n[i] = rundata_series(rd, r, "cluster", busy[i], &t[i], &dt[i], &mean[i], &mx[i]);
        if (n[i] > 0 && (npts < 0 || n[i] < npts)) npts = n[i];
        if (n[i] > 0 && first < 0) first = i;
    }
    if (npts > 0 && curve_alloc(c, 2 * npts) == 0)
        for (int k = 0; k < npts; k++) {
            double s = 0;
            for (int i = 0; i < 5; i++) s += n[i] > 0 ? mean[i][k] : 0;
            for (int e = 0; e < 2; e++) {                  /* the bucket's mean from its start to its end */
                c->x[c->n] = (t[first][k] + e * dt[first][k]) / p->unit_s;
                c->y[c->n++] = s;
            }
        }
    for (int i = 0; i < 5; i++) free(t[i]);
}

/* A cluster series' bucket maxima at each bucket's end, from (0, 0). */
static void series_curve(plan *p, rundata_db *rd, const rundata *r, const char *entity, const char *name,
                         curve *c) {
    double *t, *dt, *mean, *mx;
    int n = rundata_series(rd, r, entity, name, &t, &dt, &mean, &mx);
    if (n > 0 && curve_alloc(c, n + 1) == 0) {
        c->x[0] = c->y[0] = 0;
        c->n = 1;
        for (int k = 0; k < n; k++) {
            c->x[c->n] = (t[k] + dt[k]) / p->unit_s;
            c->y[c->n++] = mx[k];
        }
    }
    free(t);
}

/* Failures so far: a step up at each failure, to the end of the run. */
static void failures_curve(plan *p, rundata_db *rd, const rundata *r, curve *c) {
    double *t = NULL;
    int n = rundata_event_times(rd, r, "failure", &t);
    if (n >= 0 && r->simulated_s > 0 && curve_alloc(c, n + 2) == 0) {
        c->x[0] = c->y[0] = 0;
        c->n = 1;
        for (int k = 0; k < n; k++) {
            c->x[c->n] = t[k] / p->unit_s;
            c->y[c->n++] = k + 1;
        }
        c->x[c->n] = r->simulated_s / p->unit_s;
        c->y[c->n++] = n;
    }
    free(t);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The share of all jobs that waited at most x (unit_s) to start: a CDF of
 * 5 jobs or more. */
static void waits_curve(const rundata *r, double unit_s, curve *c) {
    int n = 0;
    if (curve_alloc(c, r->n_jobs) != 0) return;
    for (int i = 0; i < r->n_jobs; i++)
        if (!isnan(r->jobs[i].queue_wait_s)) c->x[n++] = r->jobs[i].queue_wait_s;
    if (n < 5) {
        curve_free(c);
        return;
    }
    qsort(c->x, (size_t)n, sizeof *c->x, cmp_double);
    for (int k = 0; k < n; k++) {
        c->x[k] /= unit_s;
        c->y[k] = (k + 1) / (double)n;
    }
    c->n = n;
}

/* The first service's TTFT CDF: (latency s, percentile). */
static void ttft_curve(const rundata *r, curve *c) {
    if (!r->n_services || curve_alloc(c, r->services[0].n_cdf) != 0) return;
    const rd_service *v = &r->services[0];
    for (int k = 0; k < v->n_cdf; k++)
        if (!isnan(v->cdf_pct[k]) && v->cdf_ttft[k] > 0) {
            c->x[c->n] = v->cdf_ttft[k];
            c->y[c->n++] = v->cdf_pct[k];
        }
    if (c->n < 2) curve_free(c);
}

/* ---- the charts ------------------------------------------------------------ */

static void time_charts(plan *p, rundata_db *rd, const rundata *const run[2], const char *const label[2]) {
    char xr[160];
    double end = fmax(run[0]->simulated_s, run[1]->simulated_s);
    snprintf(xr, sizeof xr, "set xlabel 'time (%s)'\nset xrange [0:%.9g]\nset yrange [0:*]\n", p->unit,
             end / p->unit_s);
    curve c[2] = { { 0 } };
    char s[400];
    snprintf(s, sizeof s, "%sset ylabel 'GPUs busy'\n", xr);
    overlay util = { "util", "GPUs busy over time",
                     "GPUs held by jobs in any state and by inference replicas (all but idle), bucket means.", s,
                     "lines", "1:2" };
    for (int k = 0; k < 2; k++) busy_curve(p, rd, run[k], &c[k]);
    draw_overlay(p, &util, c, label);
    for (int k = 0; k < 2; k++) curve_free(&c[k]);

    char s2[400];
    snprintf(s2, sizeof s2, "%sset ylabel 'USD'\nset format y '$%%.1s%%c'\n", xr);
    overlay cost = { "cost", "Cost so far", "What each run has cost up to each time.", s2, "lines", "1:2" };
    for (int k = 0; k < 2; k++) series_curve(p, rd, run[k], "cluster", "cost_usd", &c[k]);
    draw_overlay(p, &cost, c, label);
    for (int k = 0; k < 2; k++) curve_free(&c[k]);

    char s3[400];
    snprintf(s3, sizeof s3, "%sset ylabel 'failures'\n", xr);
    overlay fail = { "failures", "Failures so far", "Component failures up to each time.", s3, "steps", "1:2" };
    for (int k = 0; k < 2; k++) failures_curve(p, rd, run[k], &c[k]);
    draw_overlay(p, &fail, c, label);
    for (int k = 0; k < 2; k++) curve_free(&c[k]);

    char s4[400];
    snprintf(s4, sizeof s4, "set xlabel 'time (%s)'\nset xrange [0:%.9g]\nset ylabel 'steps done (%%)'\n"
                            "set yrange [0:105]\n", p->unit, end / p->unit_s);
    overlay prog = { "progress", "Training progress",
                     "Share of the headline training job's steps done over time (the job with the most GPUs).", s4,
                     "lines", "1:($2*100)" };
    for (int k = 0; k < 2; k++) {
        const rd_job *j = rundata_main_job(run[k]);
        if (j) series_curve(p, rd, run[k], j->name, "progress", &c[k]);
    }
    draw_overlay(p, &prog, c, label);
    for (int k = 0; k < 2; k++) curve_free(&c[k]);
}

/* The headline training job's step split into its parts, one bar per run. */
static void steps_chart(plan *p, const rundata *const run[2], const char *const label[2]) {
    const rd_job *j[2] = { rundata_main_job(run[0]), rundata_main_job(run[1]) };
    if ((!j[0] || isnan(j[0]->step_time_s)) && (!j[1] || isnan(j[1]->step_time_s))) return;
    FILE *f = open_in(p, "steps", ".dat");
    if (!f) return;
    fprintf(f, "# run");
    for (int k = 0; k < RD_PARTS; k++) fprintf(f, ", %s (s)", rd_part_label[k]);
    fprintf(f, "\n");
    for (int r = 0; r < 2; r++) {
        dat_quote(f, label[r]);
        for (int k = 0; k < RD_PARTS; k++)
            fprintf(f, " %.9g", j[r] && !isnan(j[r]->part_s[k]) ? j[r]->part_s[k] : 0);
        fprintf(f, "\n");
    }
    if (close_in(p) != 0) return;
    steps_plot(p, "The headline training job's step time in each run, split into compute, tensor-parallel "
                  "communication, the pipeline bubble, data-parallel (or FSDP) communication, the optimizer and the "
                  "rest.", 0.5);
}

static void distribution_charts(plan *p, const rundata *const run[2], const char *const label[2]) {
    curve c[2] = { { 0 } };
    double mx = 0, unit_s;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < run[k]->n_jobs; i++)
            if (!isnan(run[k]->jobs[i].queue_wait_s)) mx = fmax(mx, run[k]->jobs[i].queue_wait_s);
    const char *unit = charts_time_unit(mx, &unit_s);
    char s[256];
    snprintf(s, sizeof s, "set xlabel 'queue wait (%s)'\nset ylabel 'jobs (%%)'\nset yrange [0:100]\n"
                          "set xrange [0:*]\n", unit);
    overlay waits = { "waits", "Queue waits", "Cumulative distribution of the time jobs waited to start, all queues.",
                      s, "steps", "1:($2*100)" };
    for (int k = 0; k < 2; k++) waits_curve(run[k], unit_s, &c[k]);
    draw_overlay(p, &waits, c, label);
    for (int k = 0; k < 2; k++) curve_free(&c[k]);

    overlay ttft = { "latency", "Time to first token",
                     "Cumulative distribution of the first inference service's time to first token, log scale.",
                     "set logscale x 10\nset xlabel 'time to first token (s)'\nset ylabel 'requests (%)'\n"
                     "set yrange [0:100]\n", "linespoints", "1:2" };
    for (int k = 0; k < 2; k++) ttft_curve(run[k], &c[k]);
    draw_overlay(p, &ttft, c, label);
    for (int k = 0; k < 2; k++) curve_free(&c[k]);
}

void charts_compare(rundata_db *rd, const rundata *a, const rundata *b, const char *dir, charts *out) {
    plan p;
    char title[320], la[128], lb[128];
    snprintf(title, sizeof title, "run %lld (%s) and run %lld (%s)", (long long)a->id, a->scenario, (long long)b->id,
             b->scenario);
    if (plan_start(&p, out, dir, "cmp-", title) != 0) return;
    p.unit = charts_time_unit(fmax(a->simulated_s, b->simulated_s), &p.unit_s);
    snprintf(la, sizeof la, "A: run %lld", (long long)a->id);
    snprintf(lb, sizeof lb, "B: run %lld", (long long)b->id);
    const rundata *const run[2] = { a, b };
    const char *const label[2] = { la, lb };
    if (a->simulated_s > 0 || b->simulated_s > 0) time_charts(&p, rd, run, label);
    steps_chart(&p, run, label);
    distribution_charts(&p, run, label);
    plan_finish(&p);
}
