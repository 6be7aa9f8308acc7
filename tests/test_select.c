/*
 * test_select: base/select.h against qsort. For random and adversarial
 * inputs (sorted, reversed, all equal, two values, organ pipe, sawtooth,
 * few distinct values, a median-of-3 killer) and every size up to 70 and
 * some large ones: the values at the requested ranks equal the sorted
 * array's, the array stays a permutation of its input, and it is
 * partitioned around each rank. The median-of-medians fallback is run on
 * its own (budget 0) over the same inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/select.h"
#include "tests/rndfix.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { RANDOM, SORTED, REVERSED, EQUAL, TWO, ORGAN, SAWTOOTH, FEW, KILLER, N_KINDS };

static void fill(double *x, size_t n, int kind) {
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case RANDOM: x[i] = (double)(rnd() >> 11) / 9007199254740992.0; break;
        case SORTED: x[i] = (double)i; break;
        case REVERSED: x[i] = (double)(n - i); break;
        case EQUAL: x[i] = 3.5; break;
        case TWO: x[i] = (double)(i % 2); break;
        case ORGAN: x[i] = (double)(i < n / 2 ? i : n - i); break;
        case SAWTOOTH: x[i] = (double)(i % 17); break;
        case FEW: x[i] = (double)(rnd() % 4); break;
        default: x[i] = 0; break;
        }
    }
    if (kind == KILLER) {
        /* Musser's median-of-3 killer (1997, section 4) for an even n: the
         * first half pairs 1, k+1, 3, k+3, ...; the second half 2, 4, ... 2k. */
        size_t k = n / 2;
        for (size_t i = 0; i < k; i++) x[i] = (double)(i % 2 ? k + i : i + 1);
        for (size_t i = k; i < n; i++) x[i] = (double)(2 * (i - k + 1));
    }
}

/* Select ranks k[0..nk) of a copy of x (budget < 0: the default) and check
 * it against the sorted array. */
static void check(const double *x, size_t n, const size_t *k, size_t nk, int budget) {
    double *a = malloc((n + 1) * sizeof *a), *s = malloc((n + 1) * sizeof *s), *b = malloc((n + 1) * sizeof *b);
    assert_non_null(a);
    assert_non_null(s);
    assert_non_null(b);
    memcpy(a, x, n * sizeof *a);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    if (budget < 0) select_ranks(a, n, k, nk);
    else select_ranks_budget(a, n, k, nk, budget);
    for (size_t j = 0; j < nk; j++) {
        assert_true(a[k[j]] == s[k[j]]);
        for (size_t i = 0; i < n; i++) {
            if (i < k[j]) assert_true(a[i] <= a[k[j]]);
            if (i > k[j]) assert_true(a[i] >= a[k[j]]);
        }
    }
    memcpy(b, a, n * sizeof *b);           /* a permutation of the input */
    qsort(b, n, sizeof *b, cmp_double);
    assert_memory_equal(b, s, n * sizeof *b);
    free(a);
    free(s);
    free(b);
}

/* The CDF points of sim/serving_types.h and the percentiles serving reads. */
static const double cdf_q[] = { 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100 };
#define N_CDF (sizeof cdf_q / sizeof *cdf_q)

static void check_all_ways(const double *x, size_t n) {
    size_t k[N_CDF];
    for (size_t j = 0; j < N_CDF; j++) k[j] = select_pct_index(cdf_q[j], n);
    check(x, n, k, N_CDF, -1);
    check(x, n, k, N_CDF, 0);
    for (size_t r = 0; r < n && r < 40; r++) {      /* one rank at a time, each end */
        size_t one = r % 2 ? n - 1 - r / 2 : r / 2;
        check(x, n, &one, 1, -1);
    }
}

static void test_select_small_sizes(void **state) {
    (void)state;
    double x[70];
    for (int kind = 0; kind < N_KINDS; kind++)
        for (size_t n = 1; n <= 70; n++) {
            fill(x, n, kind);
            check_all_ways(x, n);
        }
}

static void test_select_large(void **state) {
    (void)state;
    static const size_t sizes[] = { 1000, 4096, 30001, 100000 };
    double *x = malloc(100000 * sizeof *x);
    assert_non_null(x);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int kind = 0; kind < N_KINDS; kind++) {
            size_t n = sizes[s];
            fill(x, n, kind);
            size_t k[N_CDF];
            for (size_t j = 0; j < N_CDF; j++) k[j] = select_pct_index(cdf_q[j], n);
            check(x, n, k, N_CDF, -1);
            check(x, n, k, N_CDF, 0);
        }
    free(x);
}

/* Every rank at once gives the sorted array; repeated ranks are fine. */
static void test_select_every_rank(void **state) {
    (void)state;
    double x[300];
    size_t k[600];
    for (int kind = 0; kind < N_KINDS; kind++) {
        fill(x, 300, kind);
        for (size_t i = 0; i < 600; i++) k[i] = i / 2;
        check(x, 300, k, 600, -1);
        check(x, 300, k, 600, 0);
    }
}

/* The nearest-rank index, as sim/serving_stats.c computed it before. */
static void test_select_pct_index(void **state) {
    (void)state;
    assert_int_equal(select_pct_index(50, 1), 0);
    assert_int_equal(select_pct_index(0, 10), 0);
    assert_int_equal(select_pct_index(50, 10), 4);
    assert_int_equal(select_pct_index(99, 10), 9);
    assert_int_equal(select_pct_index(99, 1000), 989);
    assert_int_equal(select_pct_index(99.9, 1000), 999);     /* 99.9/100 * 1000 = 999.0000000000001 */
    for (size_t n = 1; n < 5000; n += 7)
        for (size_t j = 0; j < N_CDF; j++) {
            double rank = ceil(cdf_q[j] / 100.0 * (double)n);      /* the formula of old */
            size_t k = rank < 1 ? 0 : (size_t)rank - 1;
            assert_int_equal(select_pct_index(cdf_q[j], n), k >= n ? n - 1 : k);
        }
    assert_int_equal(select_pct_index(100, 1000), 999);
    assert_int_equal(select_pct_index(150, 7), 6);
    double x[200];
    fill(x, 200, RANDOM);
    assert_int_equal(select_percentiles(x, 200, cdf_q, N_CDF), 0);
    double s[200];
    memcpy(s, x, sizeof s);
    qsort(s, 200, sizeof *s, cmp_double);
    for (size_t j = 0; j < N_CDF; j++) {
        size_t i = select_pct_index(cdf_q[j], 200);
        assert_true(x[i] == s[i]);
    }
    assert_int_equal(select_percentiles(x, 0, cdf_q, N_CDF), 0);   /* nothing to select */
}

/* A sorted copy of x[0..n). */
static double *sorted_copy(const double *x, size_t n) {
    double *s = malloc((n + 1) * sizeof *s);
    assert_non_null(s);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    return s;
}

/* select_values against the sorted array: the values at the ranks, and x
 * still a permutation of its input. */
static void check_values(const double *x, size_t n, const size_t *k, size_t nk) {
    double out[64], *a = malloc(n * sizeof *a), *s = sorted_copy(x, n);
    assert_true(nk <= 64);
    assert_non_null(a);
    memcpy(a, x, n * sizeof *a);
    select_values(a, n, k, nk, out);
    for (size_t j = 0; j < nk; j++) assert_true(out[j] == s[k[j]]);
    qsort(a, n, sizeof *a, cmp_double);
    assert_memory_equal(a, s, n * sizeof *a);
    free(a);
    free(s);
}

/* Past the size where radix passes run (select.c: 16,384): the inputs
 * above, and latency-like ones: spread over many octaves, of both signs,
 * most values one number (a queue wait of 0) with a tail, and values a
 * few ulps apart (every pass down to the last bits). */
static void test_select_values(void **state) {
    (void)state;
    static const size_t sizes[] = { 7, 20000, 100003, 400000 };
    double *x = malloc(400000 * sizeof *x);
    assert_non_null(x);
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z], k[N_CDF], all[64];
        for (size_t j = 0; j < N_CDF; j++) k[j] = select_pct_index(cdf_q[j], n);
        for (size_t j = 0; j < 64; j++) all[j] = j * (n - 1) / 63;
        for (int kind = 0; kind < N_KINDS + 4; kind++) {
            if (kind < N_KINDS) fill(x, n, kind);
            for (size_t i = 0; kind >= N_KINDS && i < n; i++) {
                double u = (double)(rnd() >> 11) / 9007199254740992.0;
                x[i] = kind == N_KINDS       ? exp(40 * u - 20)                       /* octaves */
                     : kind == N_KINDS + 1   ? (u - 0.5) * exp(30 * u)                /* signs */
                     : kind == N_KINDS + 2   ? (i % 3 ? 0 : -log(u + 1e-300))         /* zeros, tail */
                                             : nextafter(1.0, 2.0) * (1 + (double)(rnd() % 8) * 0x1p-52);
            }
            check_values(x, n, k, N_CDF);
            check_values(x, n, all, 64);
            size_t one = n / 2;
            check_values(x, n, &one, 1);
        }
    }
    double y[3] = { 2, 1, 3 }, out[N_CDF];
    assert_int_equal(select_percentile_values(y, 3, cdf_q, N_CDF, out), 0);
    assert_true(out[0] == 1 && out[4] == 2 && out[N_CDF - 1] == 3);
    assert_int_equal(select_percentile_values(y, 0, cdf_q, N_CDF, out), 0);
    assert_true(out[0] == -1 && out[N_CDF - 1] == -1);                  /* none: -1 */
    free(x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_small_sizes),
        cmocka_unit_test(test_select_large),
        cmocka_unit_test(test_select_every_rank),
        cmocka_unit_test(test_select_pct_index),
        cmocka_unit_test(test_select_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
