/*
 * sweepreport_int: what the sweep report's files share (reports/sweepreport*.c):
 * the sweep as read (reports/rundata_sweep.h) with its metrics and their
 * statistics per point, and how a metric is named, read and judged.
 *
 *   sweepreport.c          loading, the terminal table, the stored stats,
 *                          Markdown and CSV
 *   sweepreport_metrics.c  names, number styles, directions, the best point
 *   sweepreport_html.c     the HTML page
 *   sweepreport_charts.c   the gnuplot charts and the heatmaps
 */
#ifndef CT_SWEEPREPORT_INT_H
#define CT_SWEEPREPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "reports/goal.h"
#include "reports/rundata_sweep.h"

#define MAX_METRICS 64

typedef struct sdata {
    rd_sweep s;                      /* the sweep: paths, points, why a point does not fit */
    int n_metrics;
    metric_path m[MAX_METRICS];
    goal_stats *stat;                /* [point * n_metrics + metric] */
    int varies[MAX_METRICS];
} sdata;

/* The statistics of point p, metric m. */
static inline const goal_stats *sd_stat(const sdata *d, int p, int m) { return &d->stat[p * d->n_metrics + m]; }

/* ---- sweepreport_metrics.c ------------------------------------------------- */

/* A metric's name as the run report says it ("GPU utilisation", "Cost",
 * "Goodput (ETTR), job pretrain"), or its path when it has none. Returns 1
 * when named. */
int sweep_metric_name(const metric_path *m, char *b, size_t n);

/* -1 when lower is better (cost, latency), +1 when higher is (utilisation,
 * goodput), 0 when the metric has no known direction. */
int sweep_metric_better(const metric_path *m);

/* v in the metric's style (base/numfmt.h); "n/a" for NAN. */
const char *sweep_fmt(const metric_path *m, double v, char *b, size_t n);

/* "(lo..hi)", the mean's 95% interval; "(n/a)" with fewer than 2 runs. */
const char *sweep_ci_text(const metric_path *m, const goal_stats *s, char *b, size_t n);

/* The last step of a path: ".../checkpoint/@interval" -> "checkpoint/@interval". */
const char *sweep_short_path(const char *z);

/* Point p as "checkpoint/@interval=30min, spares/@warm=2". */
void sweep_point_label(const sdata *d, int p, char *b, size_t n);

/* The best point of metric m in one sentence: where, its value, and how
 * far ahead of the next best and of the worst point. "" when the metric
 * has no direction or fewer than two points have a value. Returns the
 * best point, or -1. */
int sweep_best_sentence(const sdata *d, int m, char *b, size_t n);

/* ---- sweepreport_charts.c -------------------------------------------------- */

/* Chart every varying metric with gnuplot (mN.svg); the charts drawn go in
 * drawn[], their count is returned; why some are missing in note. */
int sweep_draw_charts(const sdata *d, const char *dir, int *drawn, char *note, size_t notelen);

/* The heatmap of metric m for a sweep of exactly two varied paths: DIR/hmM.svg
 * written, its name in file. 0, or -1 (not two paths, or not written). */
int sweep_heatmap(const sdata *d, int m, const char *dir, char *file, size_t flen);

/* ---- sweepreport_html.c ---------------------------------------------------- */

int sweep_write_html(const sdata *d, const char *dir, const char *db_path, char *note, size_t notelen, char *path,
                     size_t pathlen, char *err, size_t errlen);

#endif
