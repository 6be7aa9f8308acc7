/*
 * rankstat: order statistics of plain arrays, for comparing a simulated
 * schedule with the one a real scheduler ran (the replay object of a
 * snapshot's results, docs/cluster-state.md).
 */
#ifndef CT_RANKSTAT_H
#define CT_RANKSTAT_H

#include <stddef.h>

/* Kendall's tau-b between x and y (n pairs): +1 when they order the pairs
 * alike, -1 when reversed; ties handled as in Kendall (1945), computed in
 * O(n log n) by Knight's (1966) merge-sort count of discordant pairs (the
 * method of scipy.stats.kendalltau). NAN when n < 2, when either side is
 * all ties, or out of memory. */
double rankstat_kendall_tau_b(const double *x, const double *y, size_t n);

/* The q-quantile (0 < q <= 1) by nearest rank: the ceil(q n)-th smallest
 * (as the queues' p95 wait). Sorts v in place. NAN when n = 0. */
double rankstat_quantile(double *v, size_t n, double q);

#endif
