/*
 * test_confidence: confidence intervals of a mean and of a quantile
 * (models/confidence.c), against figures worked out by hand.
 *
 *   mean of 1..10: x̄ = 5.5, s = 3.02765, t(0.975, 9) = 2.262157 (any t
 *     table), so 5.5 ± 2.165852 = [3.334148, 7.665852]
 *   median of 10 runs at 95%: the classical order-statistic interval
 *     [x(2), x(9)] (Conover 1999, table A3), coverage 1 - 2·B(1; 10, 0.5)
 *     = 0.9785
 *   p90 of 10 runs: lower end x(7) (B(6; 10, 0.9) = 0.0128 <= 0.025 <
 *     B(7) = 0.0702), no upper end (1 - 0.9^10 = 0.651 < 0.975); the
 *     fewest runs with both ends is 36 (0.9^35 = 0.02503 > 0.025 >=
 *     0.9^36 = 0.02253)
 *   p90 of 100 runs: [x(84), x(96)]
 * Exact binomial sums were checked with Python's math.comb.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "models/confidence.h"

static void test_mean(void **state) {
    (void)state;
    double x[10], lo, hi;
    for (int i = 0; i < 10; i++) x[i] = i + 1;
    assert_int_equal(confidence_mean(x, 10, 0.95, &lo, &hi), 0);
    assert_true(fabs(lo - 3.334148) < 1e-5 && fabs(hi - 7.665852) < 1e-5);
    /* equal values: a point */
    double same[4] = { 2, 2, 2, 2 };
    assert_int_equal(confidence_mean(same, 4, 0.95, &lo, &hi), 0);
    assert_true(lo == 2 && hi == 2);
    /* one run has no interval; an infinite value makes the mean infinite */
    assert_int_equal(confidence_mean(x, 1, 0.95, &lo, &hi), -1);
    assert_true(isnan(lo) && isnan(hi));
    double inf[3] = { 1, 2, INFINITY };
    assert_int_equal(confidence_mean(inf, 3, 0.95, &lo, &hi), 0);
    assert_true(isinf(lo) && lo > 0 && isinf(hi));
    /* a higher level is wider */
    double lo99, hi99;
    confidence_mean(x, 10, 0.99, &lo99, &hi99);
    assert_true(lo99 < 3.334148 && hi99 > 7.665852);
}

static void test_quantile(void **state) {
    (void)state;
    double x[100], lo, hi;
    int l, u;
    for (int i = 0; i < 100; i++) x[i] = i + 1;           /* x(k) = k */
    assert_int_equal(confidence_quantile(x, 10, 0.5, 0.95, &lo, &hi, &l, &u), 0);
    assert_int_equal(l, 2);
    assert_int_equal(u, 9);
    assert_true(lo == 2 && hi == 9);
    assert_int_equal(confidence_quantile(x, 10, 0.9, 0.95, &lo, &hi, &l, &u), 0);
    assert_int_equal(l, 7);
    assert_int_equal(u, 11);
    assert_true(lo == 7 && isinf(hi) && hi > 0);
    assert_int_equal(confidence_quantile(x, 36, 0.9, 0.95, &lo, &hi, &l, &u), 0);
    assert_true(u == 36 && hi == 36);
    assert_int_equal(confidence_quantile(x, 35, 0.9, 0.95, &lo, &hi, &l, &u), 0);
    assert_true(u == 36 && isinf(hi));
    assert_int_equal(confidence_quantile(x, 100, 0.9, 0.95, &lo, &hi, &l, &u), 0);
    assert_int_equal(l, 84);
    assert_int_equal(u, 96);
    /* a p10 mirrors a p90: no lower end with 10 runs */
    assert_int_equal(confidence_quantile(x, 10, 0.1, 0.95, &lo, &hi, &l, &u), 0);
    assert_true(l == 0 && isinf(lo) && lo < 0 && u == 4);
    assert_int_equal(confidence_quantile_min_runs(0.9, 0.95, 1000), 36);
    assert_int_equal(confidence_quantile_min_runs(0.5, 0.95, 1000), 6);
    assert_int_equal(confidence_quantile_min_runs(0.9, 0.95, 20), 21);
    assert_int_equal(confidence_quantile(x, 0, 0.5, 0.95, &lo, &hi, NULL, NULL), -1);
    assert_int_equal(confidence_quantile(x, 10, 1.0, 0.95, &lo, &hi, NULL, NULL), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean),
        cmocka_unit_test(test_quantile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
