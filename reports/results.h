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

/* The keys a job's object in jobs[] can have, in the order results_json
 * writes them ("a.b": member b of object a), ended by a NULL path: when
 * one is there ('a' always, 't' for a training job, 'o' only when the
 * job's trace has that column) and what it holds ('s' a string, 'i' an
 * integer as json_int writes it, 'n' a number as json_num writes it; any
 * may be null). The results store rebuilds a job's object
 * from its row by this list (reports/store_doc.c). */
typedef struct results_key {
    const char *path;
    char when, type;
} results_key;
extern const results_key results_job_keys[];

#endif
