/*
 * results: the run's results as the contract's JSON (CONTRACT.md) and as a
 * human summary. Both read the finished world; neither changes it.
 */
#ifndef CT_RESULTS_H
#define CT_RESULTS_H

#include <stdio.h>

#include "reports/json.h"
#include "scenarios/scenario.h"
#include "sim/world.h"

/* Append the whole results object to j. Fields named wall_* are the only
 * ones that differ between two runs of the same scenario and seed. */
void results_json(json *j, const scenario *s, const world *w, double wall_s);

/* Print the human summary. */
void results_summary(FILE *f, const scenario *s, const world *w, double wall_s);

/* The microbenchmark cases as a table, predicted next to measured, with
 * the error per case and a summary line (median and max |error| over the
 * cases measured and predicted). Prints nothing without cases. */
void results_microbench_table(FILE *f, const world *w);

/* |error| statistics over the cases both predicted and measured: their
 * count, median and max |error_pct|. Returns the count (0: median and max
 * are 0). */
int results_microbench_errors(const world *w, double *median_abs_pct, double *max_abs_pct);

#endif
