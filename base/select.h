/*
 * select: order statistics of an array of doubles without sorting it.
 *
 *   size_t ranks[] = { 49, 98 };               // 0-based, ascending
 *   select_ranks(x, n, ranks, 2);              // x[49], x[98] as if sorted
 *
 * After select_ranks, x is a permutation of its input in which x[k] holds
 * the value that sorting x ascending would put at k, for every requested k,
 * and the array is partitioned around each (x[i] <= x[k] for i < k, x[i] >=
 * x[k] for i > k). Values that compare equal are interchangeable, so the
 * values read at the ranks are those of a full sort (a -0.0 and a 0.0 may
 * trade places, as they may under qsort).
 *
 * Algorithm: introselect (Musser, "Introspective Sorting and Selection
 * Algorithms", Software: Practice and Experience 27(8), 1997) over several
 * ranks at once: a quickselect with a median-of-3 pivot and Hoare's
 * partition (few swaps; runs of equal values split in the middle),
 * descending only into the parts that hold a requested rank; when a range
 * has been partitioned 2 log2(n) times without finishing, its pivots come
 * from the median of medians of five (Blum, Floyd, Pratt, Rivest and Tarjan, "Time bounds for
 * selection", JCSS 7(4), 1973), which bounds the worst case at O(n) per
 * rank path. No randomness: the same input gives the same permutation.
 * Cost: O(n log m) comparisons for m ranks (m = 13 for serving's CDF and
 * percentiles), against O(n log n) for qsort with a callback per compare:
 * on 1M doubles 6x faster than glibc's qsort when random, 40x when sorted.
 * NaN is never in the data this serves (latencies); with NaN the call
 * still ends but the order is undefined, as with qsort.
 *
 * select_values gives the values at the ranks instead of placing them:
 * radix passes on the values' bits first narrow millions of values to the
 * few thousand near the ranks (select.c), then introselect; serving's
 * close reads its percentiles that way (6x faster on 4M latencies).
 */
#ifndef CT_SELECT_H
#define CT_SELECT_H

#include <stddef.h>

/* Place the k-th smallest (0-based) value of x[0..n) at x[k]; k < n. */
void select_nth(double *x, size_t n, size_t k);

/* select_nth for each of nk ranks, given ascending (repeats allowed),
 * each < n, in one pass that shares the partitions. A later call may move
 * the values an earlier one placed: select every rank you read at once. */
void select_ranks(double *x, size_t n, const size_t *ranks, size_t nk);

/* select_ranks with the median-of-3 partitions limited to budget (0: the
 * median of medians from the first partition, as the fallback runs). */
void select_ranks_budget(double *x, size_t n, const size_t *ranks, size_t nk, int budget);

/* select_ranks at the nearest-rank indices (select_pct_index) of the nq
 * percentiles q (ascending); afterwards x[select_pct_index(q[i], n)] is the
 * q[i]-th percentile. Only the last call's ranks hold: another selection
 * moves values. Returns 0, or -1 when more than SELECT_PCT_STACK
 * percentiles need memory that is not there (x then unchanged). */
#define SELECT_PCT_STACK 64
int select_percentiles(double *x, size_t n, const double *q, size_t nq);

/* The values of ranks[0..nk) (ascending, repeats allowed, each < n) of
 * x[0..n) into out[0..nk), as a full sort would put them (a -0.0 and a
 * 0.0 may trade places); x is left a permutation of its input, in no
 * order to rely on. Radix passes on the values' bits narrow the array to
 * the few values near the ranks, introselect finishes (select.c says
 * how): several times faster than select_ranks on millions of values.
 * Without memory for its 320 KB of counts it runs select_ranks alone. */
void select_values(double *x, size_t n, const size_t *ranks, size_t nk, double *out);

/* select_values at the nearest-rank indices of the nq percentiles q
 * (ascending): out[i] is the q[i]-th percentile, -1 when n is 0. Returns
 * 0, or -1 when more than SELECT_PCT_STACK percentiles need memory that
 * is not there (x and out then unchanged). */
int select_percentile_values(double *x, size_t n, const double *q, size_t nq, double *out);

/* The 0-based index of the nearest-rank q-th percentile of n values
 * (q in [0, 100]): ceil(q/100 * n) - 1, clamped to [0, n-1]; n > 0. */
size_t select_pct_index(double q, size_t n);

#endif
