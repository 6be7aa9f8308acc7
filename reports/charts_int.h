/*
 * charts_int: what the chart files share (reports/charts*.c): a plan of
 * charts, one gnuplot script and one data file per chart, written through
 * fileout, then drawn by one gnuplot process.
 *
 *   charts.c           the plan, the script's strings, running gnuplot
 *   charts_run.c       the charts of one run
 *   charts_compare.c   the charts of two runs overlaid on shared axes
 */
#ifndef CT_CHARTS_INT_H
#define CT_CHARTS_INT_H

#include <stdio.h>

#include "reports/charts.h"
#include "reports/fileout.h"

typedef struct plan {
    charts *out;
    chart planned[CHARTS_MAX];
    int n;
    const char *dir, *prefix;
    char script[128], log[128];      /* PREFIXcharts.gp, PREFIXcharts.log */
    FILE *gp;                        /* the script */
    fileout gpo;                     /* ... as written through fileout */
    fileout dat;                     /* the one data file open at a time */
    double unit_s;
    const char *unit;
} plan;

/* Start the plan: the script DIR/PREFIXcharts.gp, opened with its header
 * (what it draws: title, a comment). 0, or -1 with out->note set. */
int plan_start(plan *p, charts *out, const char *dir, const char *prefix, const char *title);

/* Close the script, run gnuplot on it and list in p->out each chart whose
 * SVG is complete; what is missing is said in p->out->note. */
void plan_finish(plan *p);

/* Open DIR/PREFIX NAME EXT through fileout (one data file at a time, in
 * p->dat); NULL when it cannot be written. close_in finishes it: 0, or -1
 * when it could not be written (the chart is then left out). */
FILE *open_in(plan *p, const char *name, const char *ext);
int close_in(plan *p);

/* Start a chart: its output file in the script and its entry. */
void begin(plan *p, const char *key, const char *title, const char *caption);

/* The step-time breakdown's plot of PREFIXsteps.dat (a label, then the
 * RD_PARTS parts in seconds, per row): one stacked bar per row. */
void steps_plot(plan *p, const char *caption, double boxwidth);

/* z as a gnuplot single-quoted string; as a data-file string ("..."). */
void gp_quote(FILE *f, const char *z);
void dat_quote(FILE *f, const char *z);

#endif
