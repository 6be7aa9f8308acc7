/*
 * goal: what a capacity plan must meet, "METRIC OP VALUE [@ pNN | @ mean]",
 * and whether the Monte Carlo replicas of a configuration meet it.
 *
 * METRIC is a metric path (reports/goal.h), OP one of <= < >= >, VALUE a
 * number with any unit (90d, 1s, 2TB/s). The confidence says which statistic
 * across replicas must meet it: "<= 90d @ p90" holds when the 90th
 * percentile of the replicas is at most 90 days (so 9 runs in 10 finish in
 * time); for >= and > the mirrored percentile (p10 for @ p90) is used, so
 * "@ pNN" always reads "holds in NN% of the runs". Default: @ p50.
 *
 * A replica whose metric is missing (a job that never ended: null) counts
 * as failing the goal.
 *
 * Confidence (models/confidence.h): the statistic a goal compares comes
 * with its interval (t for @ mean, the distribution-free order-statistic
 * interval for @ pNN). A goal is decided when that interval lies entirely
 * on one side of its threshold.
 */
#ifndef CT_PLAN_GOAL_H
#define CT_PLAN_GOAL_H

#include <stddef.h>

#include "reports/goal.h"

typedef enum goal_op { GOAL_LE, GOAL_LT, GOAL_GE, GOAL_GT } goal_op;

typedef struct goal {
    metric_path metric;
    goal_op op;
    double value;                    /* SI units */
    char value_text[64];             /* as written: "90d" */
    double confidence;               /* 0.9 for @ p90; 0.5 default */
    int use_mean;                    /* @ mean */
} goal;

/* Parse a goal; -1 with err set. */
int goal_parse(const char *z, goal *g, char *err, size_t errlen);

/* Whether the goal holds for the replicas' values v[0..n) (NaN = missing,
 * counted against the goal). *stat receives the statistic compared (the
 * percentile or the mean). v is reordered. */
int goal_met(const goal *g, double *v, int n, double *stat);

/* A goal over replicas with its confidence interval. */
typedef struct goal_check_result {
    double stat;                     /* the statistic compared (as goal_met) */
    double lo, hi;                   /* its interval at the level asked (NaN: none,
                                        -inf/+inf: that end needs more runs) */
    int meets;                       /* the point estimate meets the goal (goal_met) */
    int decided;                     /* the interval lies on one side of the threshold:
                                        then meets is what the interval says */
} goal_check_result;

/* goal_met with the statistic's confidence interval at level (0..1) over
 * v[0..n) (NaN = missing, counted against the goal). v is reordered. */
void goal_check(const goal *g, double *v, int n, double level, goal_check_result *out);

/* The statistic the goal compares, as text: "p90", "p10" (">= ... @ p90"),
 * "mean"; and the quantile (0..1) it is, or -1 for the mean. */
double goal_statistic(const goal *g, char *b, size_t n);

/* "p90" / "mean" and the operator as text, for messages. */
const char *goal_op_text(goal_op op);

#endif
