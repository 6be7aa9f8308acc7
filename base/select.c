/*
 * select: introselect over several ranks at once (select.h).
 */
#include "base/select.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- select_values: radix passes before the selection -------------------
 * A double's bits, the sign bit flipped for a positive value and all bits
 * flipped for a negative one, order as the values do (IEEE 754-2008's
 * totalOrder without NaN, 5.10; the key of radix sorts of floats, Terdiman,
 * "Radix Sort Revisited", 2000). A pass counts a range's keys by the
 * RADIX_BITS bits below those all its keys share, keeps the buckets that
 * hold a wanted rank, gathers each kept bucket in a run at the range's
 * front, and goes on in each run alone. A run's keys share RADIX_BITS more
 * bits than the range's, so after at most four passes a run's keys are
 * all equal. Three reads of the range a pass (its key range, the counts,
 * the gathering) against introselect's log2(ranks) partitions with a
 * mispredicted branch per element: on serving's five arrays of 4M
 * latencies at the close of a 1e7-request run, ~6% of the run before. */
#define RADIX_BITS 16
#define RADIX_BUCKETS ((size_t)1 << RADIX_BITS)
#define RADIX_DEPTH 4                             /* 64 bits / RADIX_BITS */
/* Ranges shorter than this go to introselect: radix counting's fixed cost
 * (clearing 65,536 counts) is then a large part of the work. */
#define RADIX_MIN ((size_t)1 << 14)

static uint64_t key_of(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | (uint64_t)1 << 63;
}

static double value_of(uint64_t key) {
    uint64_t u = key >> 63 ? key & ~((uint64_t)1 << 63) : ~key;
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* A kept bucket: its number, its values, the values in lower buckets, and
 * the ranks k[j0..j1) it holds. */
typedef struct run { size_t bucket, count, below, j0, j1; } run;

/* The passes' room: bucket counts, which buckets are kept, and the kept
 * runs of each depth (at most one per rank). */
typedef struct radix {
    uint32_t *count;
    unsigned char *keep;
    run *runs;
    size_t nk;
} radix;

/* The lowest and highest key of x[0..n), n > 0. */
static void key_range(const double *x, size_t n, uint64_t *lo, uint64_t *hi) {
    uint64_t a = key_of(x[0]), b = a;
    for (size_t i = 1; i < n; i++) {
        uint64_t c = key_of(x[i]);
        if (c < a) a = c;
        if (c > b) b = c;
    }
    *lo = a;
    *hi = b;
}

/* Move the values of x[0..n) whose bucket is marked in keep (or is `only`
 * when keep is NULL) to the front; returns how many. */
static size_t gather(double *x, size_t n, int shift, uint64_t base, const unsigned char *keep, size_t only) {
    size_t front = 0;
    for (size_t i = 0; i < n; i++) {
        size_t b = (size_t)((key_of(x[i]) >> shift) - base);
        if (keep ? keep[b] : b == only) swap_at(x, i, front++);
    }
    return front;
}

/* Count x[0..n) by bucket, mark and list the kept runs (ranks k ascending,
 * each < n); returns how many runs. */
static size_t count_runs(const radix *r, const double *x, size_t n, const size_t *k, size_t nk, int shift,
                         uint64_t base, run *runs) {
    memset(r->count, 0, RADIX_BUCKETS * sizeof *r->count);
    memset(r->keep, 0, RADIX_BUCKETS);
    for (size_t i = 0; i < n; i++) r->count[(key_of(x[i]) >> shift) - base]++;
    size_t below = 0, nr = 0, j = 0;
    for (size_t b = 0; b < RADIX_BUCKETS && j < nk; b++) {
        size_t j0 = j;
        while (j < nk && k[j] < below + r->count[b]) j++;
        if (j > j0) {
            r->keep[b] = 1;
            runs[nr++] = (run){ b, r->count[b], below, j0, j };
        }
        below += r->count[b];
    }
    return nr;
}

/* Rank k[j] of x[0..n) into out[j], for the nk ranks (ascending, < n);
 * k is renumbered on the way. */
static void radix_select(const radix *r, double *x, size_t n, size_t *k, size_t nk, double *out, int depth) {
    uint64_t lo, hi;
    key_range(x, n, &lo, &hi);
    if (lo == hi) {                                /* all equal: every rank is this value */
        for (size_t j = 0; j < nk; j++) out[j] = value_of(lo);
        return;
    }
    if (n < RADIX_MIN || depth >= RADIX_DEPTH) {
        select_ranks(x, n, k, nk);
        for (size_t j = 0; j < nk; j++) out[j] = x[k[j]];
        return;
    }
    int top = 63;
    while (!((lo ^ hi) >> top & 1)) top--;
    int shift = top >= RADIX_BITS - 1 ? top - (RADIX_BITS - 1) : 0;
    uint64_t base = lo >> shift;
    run *runs = r->runs + (size_t)depth * r->nk;
    size_t nr = count_runs(r, x, n, k, nk, shift, base, runs);
    size_t front = gather(x, n, shift, base, r->keep, 0), at = 0;
    for (size_t g = 0; g < nr; g++) {              /* each run in turn at the front of what is left */
        if (g + 1 < nr) gather(x + at, front - at, shift, base, NULL, runs[g].bucket);
        for (size_t j = runs[g].j0; j < runs[g].j1; j++) k[j] -= runs[g].below;
        at += runs[g].count;
    }
    at = 0;
    for (size_t g = 0; g < nr; g++) {
        radix_select(r, x + at, runs[g].count, k + runs[g].j0, runs[g].j1 - runs[g].j0, out + runs[g].j0, depth + 1);
        at += runs[g].count;
    }
}

void select_values(double *x, size_t n, const size_t *ranks, size_t nk, double *out) {
    if (n == 0 || nk == 0) return;
    radix r = { malloc(RADIX_BUCKETS * sizeof *r.count), malloc(RADIX_BUCKETS),
                malloc(RADIX_DEPTH * nk * sizeof *r.runs), nk };
    size_t *k = malloc(nk * sizeof *k);
    if (r.count && r.keep && r.runs && k && n <= UINT32_MAX) {
        memcpy(k, ranks, nk * sizeof *k);
        radix_select(&r, x, n, k, nk, out, 0);
    } else {                                       /* no room for the counts: introselect alone */
        select_ranks(x, n, ranks, nk);
        for (size_t j = 0; j < nk; j++) out[j] = x[ranks[j]];
    }
    free(r.count);
    free(r.keep);
    free(r.runs);
    free(k);
}

int select_percentile_values(double *x, size_t n, const double *q, size_t nq, double *out) {
    size_t stack[SELECT_PCT_STACK] = { 0 }, *k = nq > SELECT_PCT_STACK ? malloc(nq * sizeof *k) : stack;
    if (!k) return -1;
    for (size_t i = 0; i < nq; i++) {
        k[i] = n ? select_pct_index(q[i], n) : 0;
        out[i] = -1;
    }
    select_values(x, n, k, nq, out);
    if (k != stack) free(k);
    return 0;
}
