/*
 * results_microbench: the microbenchmark cases of a finished run as a
 * person reads them in the terminal. Collectives print as nccl-tests
 * prints them (size, count, type, time in us, algbw and busbw in GB/s),
 * predicted next to measured where a backend measured them; GEMMs, copies
 * and storage writes follow in a table of their own. docs/hardware.md says
 * what each column is. The JSON (reports/results.c) keeps full precision.
 */
#ifndef CT_RESULTS_MICROBENCH_H
#define CT_RESULTS_MICROBENCH_H

#include <stdio.h>

#include "sim/world.h"

/* The microbenchmark cases as tables (collectives in nccl-tests columns,
 * then the other kinds), the measured columns only when a backend measured
 * some case, and a summary line (median and max |error| over the cases
 * measured and predicted). Prints nothing without cases. */
void results_microbench_table(FILE *f, const world *w);

/* |error| statistics over the cases both predicted and measured: their
 * count, median and max |error_pct|. Returns the count (0: median and max
 * are 0). */
int results_microbench_errors(const world *w, double *median_abs_pct, double *max_abs_pct);

#endif
