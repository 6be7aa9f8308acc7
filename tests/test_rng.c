/*
 * test_rng: seeded streams and the distributions drawn from them.
 *
 * Seeds: derived seeds differ per (seed, component, index) and are pinned to
 * values computed by an independent Python transcription of the derivation
 * (splitmix64 over FNV-1a) and of xoshiro256**, so a change to either breaks
 * this test and the change is deliberate.
 *
 * Distributions: each is sampled 1e5 times; the sample mean must be within
 * 5 standard errors of the formula's mean (SE = sd / sqrt(n)) and the sample
 * variance within 5 standard errors of the formula's variance
 * (SE = sqrt((m4 - s^4) / n), m4 the sample fourth central moment). With a
 * fixed seed the test is deterministic; 5 sigma leaves room for any seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"

#define NDRAW 100000

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void test_derive_seed(void **state) {
    (void)state;
    /* Pinned: see the file comment. */
    assert_true(rng_derive_seed(0, "gpu", 0) == 11557390505811337903ULL);
    assert_true(rng_derive_seed(42, "arrivals/chat", 7) == 15273250173218942976ULL);

    uint64_t a = rng_derive_seed(1, "gpu", 0);
    assert_true(a == rng_derive_seed(1, "gpu", 0));           /* stable */
    assert_true(a != rng_derive_seed(1, "gpu", 1));           /* index */
    assert_true(a != rng_derive_seed(1, "nic", 0));           /* component */
    assert_true(a != rng_derive_seed(2, "gpu", 0));           /* seed */
    assert_true(rng_derive_seed(1, "", 0) == rng_derive_seed(1, NULL, 0));

    /* No collisions over 3 components x 20,000 indexes x 2 seeds. */
    enum { NIDX = 20000 };
    static const char *comps[] = { "gpu", "gpu/", "arrivals/chat" };
    size_t n = 0;
    uint64_t *v = malloc(2 * 3 * NIDX * sizeof *v);
    assert_non_null(v);
    for (uint64_t s = 0; s < 2; s++)
        for (int c = 0; c < 3; c++)
            for (uint64_t i = 0; i < NIDX; i++)
                v[n++] = rng_derive_seed(s, comps[c], i);
    qsort(v, n, sizeof *v, cmp_u64);
    for (size_t i = 1; i < n; i++)
        assert_true(v[i] != v[i - 1]);
    free(v);
}

static void test_streams(void **state) {
    (void)state;
    /* The generator's first outputs, pinned (xoshiro256** seeded with
     * rng_derive_seed(42, "arrivals/chat", 7) through splitmix64). */
    rng *r = rng_new(42, "arrivals/chat", 7);
    assert_non_null(r);
    uint64_t x0 = rng_uniform_int(r, UINT64_MAX);
    uint64_t x1 = rng_uniform_int(r, UINT64_MAX);
    assert_true(x0 == 5858658827887145023ULL);
    assert_true(x1 == 1373756157962484505ULL);
    rng_free(r);

    /* Same (seed, component, index): same sequence. Else: different. */
    rng *a = rng_new(7, "gpu", 3), *b = rng_new(7, "gpu", 3);
    rng *c = rng_new(7, "gpu", 4), *d = rng_new(8, "gpu", 3);
    int differ_c = 0, differ_d = 0;
    for (int i = 0; i < 1000; i++) {
        double ua = rng_uniform(a);
        assert_true(ua == rng_uniform(b));
        differ_c += ua != rng_uniform(c);
        differ_d += ua != rng_uniform(d);
    }
    assert_true(differ_c > 990 && differ_d > 990);
    rng_free(a);
    rng_free(b);
    rng_free(c);
    rng_free(d);
    rng_free(NULL);
}

static void test_uniform(void **state) {
    (void)state;
    rng *r = rng_new(1, "uniform", 0);
    long count[6] = { 0 };
    double sum = 0;
    for (int i = 0; i < NDRAW; i++) {
        double u = rng_uniform(r);
        assert_true(u >= 0 && u < 1);
        sum += u;
        double p = rng_uniform_pos(r);
        assert_true(p > 0 && p < 1);
        uint64_t k = rng_uniform_int(r, 6);
        assert_true(k < 6);
        count[k]++;
        assert_true(rng_uniform_int(r, 1) == 0);
    }
    /* mean 1/2, sd sqrt(1/12) */
    assert_true(fabs(sum / NDRAW - 0.5) < 5 * sqrt(1.0 / 12 / NDRAW));
    for (int k = 0; k < 6; k++) {
        double p = 1.0 / 6, sd = sqrt(NDRAW * p * (1 - p));
        assert_true(fabs(count[k] - NDRAW * p) < 5 * sd);
    }
    rng_free(r);
}

/* ---- moments ---------------------------------------------------------- */

typedef double (*draw_fn)(rng *r, double a, double b);

/* Draw NDRAW values and check mean and variance at 5 standard errors. */
static void check_moments(const char *what, draw_fn f, double a, double b,
                          double mean, double var) {
    rng *r = rng_new(2024, what, 0);
    assert_non_null(r);
    double *x = malloc(NDRAW * sizeof *x);
    assert_non_null(x);
    double s = 0;
    for (int i = 0; i < NDRAW; i++) {
        x[i] = f(r, a, b);
        assert_true(x[i] >= 0);
        s += x[i];
    }
    double m = s / NDRAW, m2 = 0, m4 = 0;
    for (int i = 0; i < NDRAW; i++) {
        double dd = (x[i] - m) * (x[i] - m);
        m2 += dd;
        m4 += dd * dd;
    }
    m2 /= NDRAW;
    m4 /= NDRAW;
    double se_mean = sqrt(var / NDRAW);
    double se_var = sqrt((m4 - m2 * m2) / NDRAW);
    if (fabs(m - mean) > 5 * se_mean || fabs(m2 - var) > 5 * se_var)
        fail_msg("%s(%g, %g): mean %g (want %g +- %g), variance %g (want %g +- %g)",
                 what, a, b, m, mean, 5 * se_mean, m2, var, 5 * se_var);
    free(x);
    rng_free(r);
}

static double d_exponential(rng *r, double a, double b) {
    (void)b;
    return rng_exponential(r, a);
}
static double d_weibull(rng *r, double a, double b) { return rng_weibull(r, a, b); }
static double d_weibull_mean(rng *r, double a, double b) { return rng_weibull_mean(r, a, b); }
static double d_lognormal(rng *r, double a, double b) { return rng_lognormal(r, a, b); }
static double d_lognormal_mean_cv(rng *r, double a, double b) {
    return rng_lognormal_mean_cv(r, a, b);
}
static double d_gamma(rng *r, double a, double b) { return rng_gamma(r, a, b); }
static double d_gamma_mean_cv(rng *r, double a, double b) { return rng_gamma_mean_cv(r, a, b); }
static double d_poisson(rng *r, double a, double b) {
    (void)b;
    return rng_poisson(r, a);
}

/* Weibull(scale l, shape k): mean l G(1+1/k), var l^2 (G(1+2/k) - G(1+1/k)^2). */
static void check_weibull(double l, double k) {
    double g1 = tgamma(1 + 1 / k), g2 = tgamma(1 + 2 / k);
    check_moments("weibull", d_weibull, l, k, l * g1, l * l * (g2 - g1 * g1));
    /* Same shape with the mean given instead of the scale. */
    double mean = 3600;
    double sc = mean / g1;
    check_moments("weibull_mean", d_weibull_mean, mean, k, mean, sc * sc * (g2 - g1 * g1));
}

static void test_continuous(void **state) {
    (void)state;
    check_moments("exponential", d_exponential, 2.5, 0, 2.5, 2.5 * 2.5);
    check_moments("exponential", d_exponential, 1e9, 0, 1e9, 1e18);
    check_weibull(100, 0.7);        /* infant mortality */
    check_weibull(100, 1.0);        /* exponential */
    check_weibull(100, 2.5);        /* wear-out */
    /* lognormal(mu, s): mean e^(mu+s^2/2), var (e^(s^2)-1) e^(2mu+s^2) */
    double mu = 1.0, s = 0.5;
    check_moments("lognormal", d_lognormal, mu, s, exp(mu + s * s / 2),
                  (exp(s * s) - 1) * exp(2 * mu + s * s));
    check_moments("lognormal", d_lognormal, -2.0, 0.25, exp(-2.0 + 0.25 * 0.25 / 2),
                  (exp(0.0625) - 1) * exp(-4.0 + 0.0625));
    check_moments("lognormal_mean_cv", d_lognormal_mean_cv, 200, 0.3, 200, 60.0 * 60.0);
    check_moments("lognormal_mean_cv", d_lognormal_mean_cv, 0.01, 0.8, 0.01, 0.008 * 0.008);
    /* gamma(k, t): mean k t, var k t^2 */
    check_moments("gamma", d_gamma, 2.0, 3.0, 6.0, 18.0);
    check_moments("gamma", d_gamma, 0.5, 10.0, 5.0, 50.0);
    check_moments("gamma_mean_cv", d_gamma_mean_cv, 50, 0.2, 50, 100);
    check_moments("gamma_mean_cv", d_gamma_mean_cv, 1, 2.0, 1, 4);
    /* poisson(l): mean l, var l (GSL switches algorithm above 10) */
    check_moments("poisson", d_poisson, 3.5, 0, 3.5, 3.5);
    check_moments("poisson", d_poisson, 250, 0, 250, 250);
    rng *r = rng_new(3, "poisson", 0);
    assert_int_equal(rng_poisson(r, 0), 0);
    rng_free(r);
}

/* ---- discrete and empirical ------------------------------------------- */

static void test_discrete(void **state) {
    (void)state;
    const double w[] = { 1, 2, 3, 4, 0 };
    rng_discrete *d = rng_discrete_new(w, 5);
    assert_non_null(d);
    rng *r = rng_new(5, "discrete", 0);
    long count[5] = { 0 };
    for (int i = 0; i < NDRAW; i++) {
        size_t k = rng_discrete_draw(r, d);
        assert_true(k < 5);
        count[k]++;
    }
    assert_int_equal(count[4], 0);
    for (int k = 0; k < 4; k++) {
        double p = w[k] / 10, sd = sqrt(NDRAW * p * (1 - p));
        assert_true(fabs(count[k] - NDRAW * p) < 5 * sd);
    }
    rng_discrete_free(d);

    const double one[] = { 0.3 };
    d = rng_discrete_new(one, 1);
    assert_non_null(d);
    assert_int_equal(rng_discrete_draw(r, d), 0);
    rng_discrete_free(d);
    rng_free(r);

    /* Errors: no weights, a negative, NaN or infinite one, all zero. */
    const double neg[] = { 1, -1 }, zero[] = { 0, 0 };
    const double nan_w[] = { 1, NAN }, inf_w[] = { 1, INFINITY };
    assert_null(rng_discrete_new(w, 0));
    assert_null(rng_discrete_new(neg, 2));
    assert_null(rng_discrete_new(zero, 2));
    assert_null(rng_discrete_new(nan_w, 2));
    assert_null(rng_discrete_new(inf_w, 2));
    rng_discrete_free(NULL);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_empirical(void **state) {
    (void)state;
    /* 1001 samples of a skewed distribution, given unsorted. */
    enum { NS = 1001 };
    double xs[NS], copy[NS];
    rng *src = rng_new(6, "empirical/src", 0);
    for (int i = 0; i < NS; i++)
        xs[i] = rng_lognormal(src, 3, 1);
    rng_free(src);
    memcpy(copy, xs, sizeof xs);
    rng_empirical *p = rng_empirical_new(xs, NS);
    assert_non_null(p);
    assert_memory_equal(xs, copy, sizeof xs);      /* input untouched */
    qsort(copy, NS, sizeof *copy, cmp_double);
    double lo = copy[0], hi = copy[NS - 1], med = copy[NS / 2];

    rng *r = rng_new(6, "empirical", 0);
    double *d = malloc(NDRAW * sizeof *d);
    assert_non_null(d);
    for (int i = 0; i < NDRAW; i++) {
        d[i] = rng_empirical_draw(r, p);
        assert_true(d[i] >= lo && d[i] <= hi);
    }
    qsort(d, NDRAW, sizeof *d, cmp_double);
    /* The draws' median is the samples' median, up to sampling noise: the
     * sample quantile at 0.5 +- 5 sd of a proportion, 5 sqrt(0.25 / n). */
    double q = 5 * sqrt(0.25 / NDRAW);
    double qlo = copy[(int)((0.5 - q) * (NS - 1))];
    double qhi = copy[(int)((0.5 + q) * (NS - 1)) + 1];
    double dmed = d[NDRAW / 2];
    if (!(dmed >= qlo && dmed <= qhi))
        fail_msg("empirical median %g, samples' median %g (want in [%g, %g])",
                 dmed, med, qlo, qhi);
    free(d);
    rng_empirical_free(p);

    /* One sample: always it. */
    const double one = 42.5;
    p = rng_empirical_new(&one, 1);
    assert_non_null(p);
    for (int i = 0; i < 100; i++)
        assert_true(rng_empirical_draw(r, p) == 42.5);
    rng_empirical_free(p);

    /* Ties and two samples. */
    const double two[] = { 7, 3 };
    p = rng_empirical_new(two, 2);
    for (int i = 0; i < 1000; i++) {
        double v = rng_empirical_draw(r, p);
        assert_true(v >= 3 && v <= 7);
    }
    rng_empirical_free(p);
    rng_free(r);

    /* Errors. */
    const double bad[] = { 1, NAN, 3 }, bad_inf[] = { 1, INFINITY };
    assert_null(rng_empirical_new(xs, 0));
    assert_null(rng_empirical_new(bad, 3));
    assert_null(rng_empirical_new(bad_inf, 2));
    rng_empirical_free(NULL);
}

/* Counter-based streams (failure clocks): a pure function of (key, n),
 * in (0, 1), uniform (mean 1/2 and variance 1/12 of 100,000 draws within
 * 5 standard errors), and neighbouring keys or counters unrelated (the
 * correlation of consecutive draws and of two streams under 0.02, about
 * 6 standard errors of 1/sqrt(100,000)). */
static void test_counter_stream(void **state) {
    (void)state;
    uint64_t k1 = rng_derive_seed(1, "failures/gpu/faulty GPU", 3), k2 = rng_derive_seed(1, "failures/gpu/faulty GPU", 4);
    assert_true(rng_counter_uniform_pos(k1, 7) == rng_counter_uniform_pos(k1, 7));
    enum { N = 100000 };
    double sum = 0, sum2 = 0, lag = 0, cross = 0, prev = 0.5;
    for (uint64_t n = 0; n < N; n++) {
        double u = rng_counter_uniform_pos(k1, n), v = rng_counter_uniform_pos(k2, n);
        assert_true(u > 0 && u < 1);
        sum += u;
        sum2 += (u - 0.5) * (u - 0.5);
        lag += (u - 0.5) * (prev - 0.5);
        cross += (u - 0.5) * (v - 0.5);
        prev = u;
    }
    assert_true(fabs(sum / N - 0.5) < 5 * sqrt(1.0 / 12 / N));
    assert_true(fabs(sum2 / N - 1.0 / 12) < 5 * sqrt(1.0 / 180 / N));
    assert_true(fabs(lag / N * 12) < 0.02);
    assert_true(fabs(cross / N * 12) < 0.02);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_stream),
        cmocka_unit_test(test_derive_seed),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_continuous),
        cmocka_unit_test(test_discrete),
        cmocka_unit_test(test_empirical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
