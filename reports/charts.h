/*
 * charts: a run's charts drawn by gnuplot as SVG files, for the HTML report.
 *
 * charts_draw() writes, into the report's directory, one data file per
 * chart (PREFIXutil.dat, ...) and a gnuplot script (PREFIXcharts.gp), then
 * runs `gnuplot PREFIXcharts.gp` there as a child process (the program is
 * $CLUSTERTWIN_GNUPLOT when set, else gnuplot from PATH). The data and the
 * script stay in the directory so a reader can restyle a chart. A chart is
 * listed only when its SVG file exists and is complete, so the report
 * never points at a missing image; without gnuplot, none is, and the note
 * says why.
 *
 * The charts: GPUs by state over time (training, checkpoint, restarting,
 * batch, serving and idle stacked, with the GPUs out of service as a
 * line), cost so far, failures and restarts on a timeline, the step-time
 * breakdown of each training job, training progress, and the queue-wait
 * CDF of each queue, and the TTFT, TPOT and end-to-end latency CDFs of
 * each inference service, and the microbenchmarks' predicted vs
 * measured times (key micro) when the run measured any.
 * charts_compare() draws two runs' charts overlaid (reports/charts_compare.c).
 */
#ifndef CT_CHARTS_H
#define CT_CHARTS_H

#include <stddef.h>

#include "reports/rundata.h"

#define CHARTS_MAX 10

typedef struct chart {
    char key[16];                    /* util, cost, failures, steps, progress, waits, latency */
    char file[128];                  /* PREFIX key .svg, relative to the directory */
    char title[96];
    char caption[320];
} chart;

typedef struct charts {
    chart c[CHARTS_MAX];
    int n;
    char note[512];                  /* why charts are missing, "" when none is */
} charts;

/* Draw r's charts into dir (which exists), read through rd. Never fails as
 * a whole: what could not be drawn is left out of out->c and explained in
 * out->note. */
void charts_draw(rundata_db *rd, const rundata *r, const char *dir, const char *prefix, charts *out);

/* The charts of two runs overlaid on shared axes, one chart per quantity
 * and one line (or bar) per run with a legend "A: run N", "B: run M":
 * busy GPUs, cost so far, failures so far, the headline training job's
 * progress and step-time breakdown, queue waits and the first service's
 * time to first token. Files cmp-KEY.svg (keys as charts_draw's, script
 * cmp-charts.gp); a quantity neither run has is left out. */
void charts_compare(rundata_db *rd, const rundata *a, const rundata *b, const char *dir, charts *out);

/* The chart with this key, or NULL when it was not drawn. */
const chart *charts_find(const charts *c, const char *key);

/* The time unit for a run of simulated_s seconds: its name ("days") and
 * its length in seconds. */
const char *charts_time_unit(double simulated_s, double *unit_s);

/* Run gnuplot ($CLUSTERTWIN_GNUPLOT, else gnuplot from PATH) on script
 * in dir, its messages in dir/log. Returns its exit status (127: could
 * not be started). For other reports' charts (the sweep report's). */
int charts_gnuplot(const char *dir, const char *script, const char *log);

/* 1 when dir/file is a complete SVG (gnuplot finished it). */
int charts_svg_complete(const char *dir, const char *file);

/* DIR/FILE is nothing yet or (after symlinks) a regular file: gnuplot may
 * write it. A FIFO there would make gnuplot wait forever, a device would
 * be written into: the charts are then not drawn. */
int charts_svg_target_ok(const char *dir, const char *file);

#endif
