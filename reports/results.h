/*
 * results: the run's results as the contract's JSON (CONTRACT.md). The
 * human summary (results_summary.h) and the microbenchmark tables
 * (results_microbench.h) are included here so callers need one header.
 * All read the finished world; none changes it.
 */
#ifndef CT_RESULTS_H
#define CT_RESULTS_H

#include <stdio.h>

#include "reports/json.h"
#include "reports/results_microbench.h"
#include "reports/results_summary.h"
#include "scenarios/scenario.h"
#include "sim/world.h"

/* Append the whole results object to j. Fields named wall_* are the only
 * ones that differ between two runs of the same scenario and seed. */
void results_json(json *j, const scenario *s, const world *w, double wall_s);

#endif
