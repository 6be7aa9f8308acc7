/*
 * confidence: confidence intervals for what Monte Carlo replicas estimate,
 * the mean of a metric and one of its quantiles. Pure functions over
 * arrays; GSL supplies the Student t and binomial distributions.
 *
 *   mean      x̄ ± t(1 - α/2, n - 1) · s / √n  (Student t; exact when the
 *             metric is normal, and close for the sums of many small
 *             delays a run's metric usually is)
 *   quantile  [x(l), x(u)], order statistics of the sorted sample chosen
 *             from the binomial distribution of how many of n runs fall
 *             below the true q-quantile (K ~ Bin(n, q)), so that
 *             P(K >= l) >= 1 - α/2 and P(K <= u - 1) >= 1 - α/2: coverage
 *             at least 1 - α for any continuous distribution, no shape
 *             assumed (Conover, Practical Nonparametric Statistics, 3rd
 *             ed., 1999, §3.2; Hahn & Meeker, Statistical Intervals, 1991,
 *             §5.2). With too few runs an end does not exist: the lower
 *             end is then -inf, the upper +inf (a p90 needs 36 runs for a
 *             finite upper end at 95%).
 *
 * The level every report uses is CONFIDENCE_LEVEL.
 */
#ifndef CT_CONFIDENCE_H
#define CT_CONFIDENCE_H

/* Two-sided confidence level of the intervals the program reports: 95%,
 * the conventional level of simulation output analysis (Law, Simulation
 * Modeling and Analysis, 5th ed., 2015, ch. 9). */
#define CONFIDENCE_LEVEL 0.95

/* The interval for the mean of x[0..n) at level (0 < level < 1). Returns
 * 0 with *lo <= *hi; -1 with both NaN when n < 2, level is out of range,
 * or a value is not finite (an infinite value, such as a run that never
 * ended counted against a goal, makes both ends that infinity instead,
 * returning 0). */
int confidence_mean(const double *x, int n, double level, double *lo, double *hi);

/* The distribution-free interval for the q-quantile (0 < q < 1) of the
 * sorted sample x[0..n) (values may be infinite). Returns 0 with *lo, *hi
 * (-inf / +inf where that end does not exist with n runs) and, when l and
 * u are not NULL, the 1-based ranks used (0 and n + 1 for a missing end);
 * -1 with NaNs when n < 1 or q or level is out of range. */
int confidence_quantile(const double *x, int n, double q, double level, double *lo, double *hi, int *l, int *u);

/* The fewest runs for which the interval of the q-quantile has both ends
 * at level (at most max_n; max_n + 1 when even max_n is too few). */
int confidence_quantile_min_runs(double q, double level, int max_n);

#endif
