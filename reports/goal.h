/*
 * goal: metric paths into the JSON results and the statistics of a metric
 * across Monte Carlo replicas (the goals over them, and their check, are
 * the planner's: plan/goal.h).
 *
 * A metric path addresses the contract's JSON (CONTRACT.md):
 *   jobs[pretrain].end_s        the element of jobs[] whose name is pretrain
 *   services[chat].ttft_p99_s   likewise in services[] (also queues[])
 *   cluster.cost_usd            an object's field; nested: jobs[x].time.redone_s
 *   simulated_s                 a top-level field
 *   cost_usd                    a bare name not at the top level is cluster's
 *
 * A replica whose metric is missing (a job that never ended: null) is
 * skipped by the statistics and reported as missing.
 *
 * Confidence (models/confidence.h): the mean comes with its Student t
 * interval at CONFIDENCE_LEVEL.
 */
#ifndef CT_GOAL_H
#define CT_GOAL_H

#include <stddef.h>

typedef struct metric_path {
    char array[16];                  /* "jobs", "services", "queues" or "" */
    char elem[64];                   /* the element's name when array[0] */
    char field[192];                 /* dotted path inside the element / document */
    char text[192];                  /* as written, for messages */
} metric_path;

/* Parse a metric path; -1 with err set. */
int goal_metric_parse(const char *z, metric_path *m, char *err, size_t errlen);

typedef struct goal_stats {
    int n;                           /* replicas with a value */
    int missing;                     /* replicas without one */
    double mean, p10, p50, p90, min, max;
    double mean_lo, mean_hi;         /* the mean's CONFIDENCE_LEVEL interval (NaN: n < 2) */
} goal_stats;

/* Statistics of v[0..n) (NaN = missing). The percentiles interpolate
 * linearly between order statistics (R's type 7). v is reordered. */
void goal_stats_of(double *v, int n, goal_stats *s);

/* The q-quantile (0..1) of sorted x[0..n), n >= 1. */
double goal_quantile(const double *x, int n, double q);

/* Sort v[0..n) in increasing order (no NaN in it). */
void goal_sort(double *v, int n);

#endif
