/*
 * test_series: the results store's resampler (reports/series.h) against a
 * naive reference. A script of random step functions (random times, some
 * on bucket edges, some repeated) is fed to a series_set; the reference
 * keeps every (t, v) change and integrates it exactly over each bucket of
 * the final grid. Expected: the grid width is the smallest power of two
 * >= 2^-10 s with ceil(T / W) <= max; each bucket's mean matches the exact
 * integral / covered time to 1e-9 relative (sums in a different order);
 * min and max match exactly (values held for a positive time only).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "reports/series.h"

/* cmocka 1.1.5 has no assert_double_equal. */
#define assert_double_equal(a, b, eps) near_((a), (b), (eps), #a, __LINE__)
static void near_(double got, double want, double eps, const char *what, int line) {
    if (!(fabs(got - want) <= eps))
        fail_msg("line %d: %s = %.17g, want %.17g (+- %.3g)", line, what, got, want, eps);
}

typedef struct change {
    double t, v;
} change;

/* Exact integral, min and max of the step function over [a, b). */
static void reference(const change *c, int n, double initial, double a, double b, double *sum,
                      double *mn, double *mx) {
    *sum = 0;
    *mn = INFINITY;
    *mx = -INFINITY;
    double v = initial, t = 0;
    for (int i = 0; i <= n; i++) {
        double end = i < n ? c[i].t : b;
        double lo = fmax(t, a), hi = fmin(end, b);
        if (hi > lo) {
            *sum += v * (hi - lo);
            *mn = fmin(*mn, v);
            *mx = fmax(*mx, v);
        }
        if (i < n) {
            v = c[i].v;
            t = c[i].t;
        }
    }
}

static uint64_t rng_state = 88172645463325252ULL;
static double urand(void) {        /* xorshift64: the test's own stream */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void check_against_reference(int max, int nseries, int nchanges, double t_end) {
    series_set *ss = series_new(max);
    assert_non_null(ss);
    change **c = calloc((size_t)nseries, sizeof *c);
    int *n = calloc((size_t)nseries, sizeof *n);
    double *init = calloc((size_t)nseries, sizeof *init);
    assert_true(c && n && init);
    for (int s = 0; s < nseries; s++) {
        init[s] = floor(urand() * 10);
        assert_int_equal(series_add(ss, init[s]), s);
        c[s] = calloc((size_t)(nchanges * nseries), sizeof **c);
        assert_non_null(c[s]);
    }
    /* Interleave the series' changes in time order, as the bus does. */
    double t = 0;
    for (int k = 0; k < nchanges * nseries; k++) {
        double r = urand();
        if (r < 0.1) { /* the same instant again */ }
        else if (r < 0.2) t = ceil(t / 0.5) * 0.5;            /* on a coarse edge */
        else t += urand() * t_end / nchanges / nseries * 2;
        if (t >= t_end) break;
        int s = (int)(urand() * nseries);
        double v = floor(urand() * 100);
        c[s][n[s]++] = (change){ t, v };
        assert_int_equal(series_put(ss, s, t, v), 0);
    }
    assert_int_equal(series_close(ss, t_end), 0);

    double w = series_bucket_s(ss);
    assert_true(ceil(t_end / w) <= max);
    assert_true(w == ldexp(1, -10) || ceil(t_end / (w / 2)) > max);
    assert_double_equal(log2(w), round(log2(w)), 0);
    for (int s = 0; s < nseries; s++) {
        int np = series_points(ss, s);
        assert_int_equal(np, (int)ceil(t_end / w));
        double covered = 0;
        for (int k = 0; k < np; k++) {
            double t0, dt, mean, mn, mx, sum, rmn, rmx;
            series_point(ss, s, k, &t0, &dt, &mean, &mn, &mx);
            assert_double_equal(t0, k * w, 0);
            double end = fmin((k + 1) * w, t_end);
            assert_double_equal(dt, end - t0, 1e-9 * w);
            reference(c[s], n[s], init[s], t0, end, &sum, &rmn, &rmx);
            assert_double_equal(mean, sum / (end - t0), 1e-9 * (1 + fabs(mean)));
            assert_double_equal(mn, rmn, 0);
            assert_double_equal(mx, rmx, 0);
            covered += dt;
        }
        assert_double_equal(covered, t_end, 1e-9 * t_end);
        free(c[s]);
    }
    free(c);
    free(n);
    free(init);
    series_free(ss);
}

static void test_short_run_fine_grid(void **state) {
    (void)state;
    check_against_reference(2000, 3, 200, 1.5);          /* 1.5 s: W = 2^-10 s */
}

static void test_long_run_merges(void **state) {
    (void)state;
    check_against_reference(2000, 5, 3000, 54 * 86400.0);   /* 54 days: many merges */
}

static void test_small_bound(void **state) {
    (void)state;
    for (int i = 0; i < 20; i++) check_against_reference(8, 2, 50, 1 + urand() * 1000);
}

/* A run with no sample: each series keeps its initial value. */
static void test_no_samples(void **state) {
    (void)state;
    series_set *ss = series_new(2000);
    assert_int_equal(series_add(ss, 1024), 0);
    assert_int_equal(series_close(ss, 3600), 0);
    assert_double_equal(series_bucket_s(ss), 2.0, 0);       /* 3600/2 = 1800 <= 2000 */
    assert_int_equal(series_points(ss, 0), 1800);
    double t, dt, mean, mn, mx;
    series_point(ss, 0, 1799, &t, &dt, &mean, &mn, &mx);
    assert_double_equal(t, 3598, 0);
    assert_double_equal(dt, 2, 0);
    assert_double_equal(mean, 1024, 0);
    series_free(ss);
}

/* Zero-length runs write nothing; an earlier time is taken as "now". */
static void test_edges(void **state) {
    (void)state;
    series_set *ss = series_new(4);
    assert_int_equal(series_add(ss, 0), 0);
    assert_int_equal(series_close(ss, 0), 0);
    assert_int_equal(series_points(ss, 0), 0);
    assert_int_equal(series_put(ss, 0, 10, 5), 0);
    assert_int_equal(series_put(ss, 0, 3, 7), 0);            /* before 10: at 10 */
    assert_int_equal(series_close(ss, 16), 0);
    assert_double_equal(series_bucket_s(ss), 4, 0);
    double t, dt, mean, mn, mx;
    series_point(ss, 0, 2, &t, &dt, &mean, &mn, &mx);        /* [8, 12): 0 then 7 */
    assert_double_equal(mean, 3.5, 0);
    assert_double_equal(mn, 0, 0);
    assert_double_equal(mx, 7, 0);                           /* 5 held for no time */
    series_free(ss);
    series_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_run_fine_grid),
        cmocka_unit_test(test_long_run_merges),
        cmocka_unit_test(test_small_bound),
        cmocka_unit_test(test_no_samples),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
