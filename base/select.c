/*
 * select: introselect over several ranks at once (select.h).
 */
#include "base/select.h"

#include <math.h>
#include <stdlib.h>

/* Ranges this short are finished by insertion sort: below ~16 elements it
 * beats another partition (the cut-off of Musser's introsort, and of
 * glibc's and libstdc++'s sorts). */
#define SELECT_SMALL 16

static void swap_at(double *x, size_t i, size_t j) {
    double t = x[i];
    x[i] = x[j];
    x[j] = t;
}

static void insertion_sort(double *x, size_t lo, size_t hi) {
    for (size_t i = lo + 1; i < hi; i++) {
        double v = x[i];
        size_t j = i;
        for (; j > lo && x[j - 1] > v; j--) x[j] = x[j - 1];
        x[j] = v;
    }
}

/* The index of the median of x[a], x[b], x[c]. */
static size_t median3(const double *x, size_t a, size_t b, size_t c) {
    if (x[a] > x[b]) {
        size_t t = a;
        a = b;
        b = t;
    }
    if (x[b] <= x[c]) return b;              /* x[a] <= x[b] <= x[c] */
    return x[a] > x[c] ? a : c;
}

/* Hoare's partition of [lo, hi) around the value at x[lo] (Cormen et al.,
 * Introduction to Algorithms, problem 7-1): [lo, j] <= p <= [j + 1, hi),
 * both parts non-empty (lo <= j < hi - 1) when hi - lo >= 2. Values equal
 * to p stop both scans, so runs of equal values split in the middle. */
static size_t partition(double *x, size_t lo, size_t hi) {
    double p = x[lo];
    size_t i = lo - 1, j = hi;          /* i wraps below lo only before its first ++ */
    for (;;) {
        do i++;
        while (x[i] < p);
        do j--;
        while (x[j] > p);
        if (i >= j) return j;
        swap_at(x, i, j);
    }
}

static void select_range(double *x, size_t lo, size_t hi, const size_t *k, size_t nk, int budget);

/* The index of the median of the medians of groups of five of [lo, hi):
 * the medians are gathered at the range's front and their median selected
 * (with no budget: pure BFPRT, linear). */
static size_t mom_pivot(double *x, size_t lo, size_t hi) {
    size_t m = lo;
    for (size_t g = lo; g < hi; g += 5) {
        size_t e = hi - g > 5 ? g + 5 : hi;
        insertion_sort(x, g, e);
        swap_at(x, m++, g + (e - g) / 2);
    }
    size_t mid = lo + (m - lo) / 2;
    select_range(x, lo, m, &mid, 1, 0);
    return mid;
}

/* Place ranks k[0..nk) (ascending, each in [lo, hi)) of [lo, hi). budget:
 * median-of-3 partitions left before the median of medians takes over. */
static void select_range(double *x, size_t lo, size_t hi, const size_t *k, size_t nk, int budget) {
    while (nk > 0 && hi - lo > SELECT_SMALL) {
        size_t piv;
        if (budget > 0) {
            piv = median3(x, lo, lo + (hi - lo) / 2, hi - 1);
            budget--;
        } else {
            piv = mom_pivot(x, lo, hi);
        }
        swap_at(x, lo, piv);
        size_t j = partition(x, lo, hi), nl = 0;
        while (nl < nk && k[nl] <= j) nl++;
        select_range(x, lo, j + 1, k, nl, budget);
        k += nl;
        nk -= nl;
        lo = j + 1;
    }
    if (nk > 0) insertion_sort(x, lo, hi);
}

static int depth_budget(size_t n) {
    int b = 0;
    while (n > 1) {
        n >>= 1;
        b += 2;                                /* 2 log2(n), as Musser's introsort */
    }
    return b;
}

void select_ranks_budget(double *x, size_t n, const size_t *ranks, size_t nk, int budget) {
    if (n > 0 && nk > 0) select_range(x, 0, n, ranks, nk, budget);
}

void select_ranks(double *x, size_t n, const size_t *ranks, size_t nk) {
    select_ranks_budget(x, n, ranks, nk, depth_budget(n));
}

void select_nth(double *x, size_t n, size_t k) { select_ranks(x, n, &k, 1); }

size_t select_pct_index(double q, size_t n) {
    double rank = ceil(q / 100.0 * (double)n);
    size_t k = rank < 1 ? 0 : (size_t)rank - 1;
    return k >= n ? n - 1 : k;
}

int select_percentiles(double *x, size_t n, const double *q, size_t nq) {
    size_t stack[SELECT_PCT_STACK] = { 0 }, *k = nq > SELECT_PCT_STACK ? malloc(nq * sizeof *k) : stack;
    if (!k) return -1;
    for (size_t i = 0; i < nq; i++) k[i] = n ? select_pct_index(q[i], n) : 0;
    select_ranks(x, n, k, nq);
    if (k != stack) free(k);
    return 0;
}
