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

#endif
