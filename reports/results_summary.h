/*
 * results_summary: the human summary of a finished run, as `clustertwin
 * run` prints it: the cluster's use and cost, each training job and
 * service, failures, queues, and the microbenchmark tables last. Numbers
 * through base/numfmt; the JSON (results.h) keeps full precision.
 */
#ifndef CT_RESULTS_SUMMARY_H
#define CT_RESULTS_SUMMARY_H

#include <stdio.h>

#include "scenarios/scenario.h"
#include "sim/world.h"

/* Print the human summary of world w, run from scenario s in wall_s
 * seconds, to f. */
void results_summary(FILE *f, const scenario *s, const world *w, double wall_s);

#endif
