/*
 * test_store_series: the resampler's held buckets (reports/series.c: a
 * series' lead, held at its first value, and its tail after series_close
 * are worked out when read, not stored) give every bucket to the bit.
 *
 * Times are multiples of 2^-10 s and values small integers, so every
 * integral is exact in binary floating point whatever the order of the
 * additions: each bucket read (start, covered time, mean, min, max) must
 * equal the exact one computed here from the step function, bit for bit,
 * including after the grid has doubled many times, a first change on a
 * bucket edge, a value set back to the lead's, a second close and a sample
 * after a close; and the stretches series_runs says are equal are.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "reports/series.h"

typedef struct change {
    double t, v;
} change;

/* Exact integral, covered time, min and max of the step function (initial,
 * then the changes) over [a, b) clipped to [0, end). */
static void exact(const change *c, int n, double initial, double end, double a, double b, double q[4]) {
    q[0] = q[1] = 0;
    q[2] = INFINITY;
    q[3] = -INFINITY;
    if (b > end) b = end;
    double v = initial, t = 0;
    for (int i = 0; i <= n; i++) {
        double until = i < n ? c[i].t : end;
        double lo = fmax(t, a), hi = fmin(until, b);
        if (hi > lo) {
            q[0] += v * (hi - lo);
            q[1] += hi - lo;
            q[2] = fmin(q[2], v);
            q[3] = fmax(q[3], v);
        }
        if (i < n) v = c[i].v, t = c[i].t;
    }
}

static void same_bits(double got, double want, const char *what, int k) {
    if (memcmp(&got, &want, sizeof got) != 0) fail_msg("bucket %d: %s = %.17g, want %.17g", k, what, got, want);
}

/* series_runs' stretches: buckets 1 .. lead - 1 are bucket 0 and held + 1
 * .. points - 2 are bucket held, every field to the bit (the store steps
 * over them: store_series.c). */
static void check_runs(const series_set *ss, int i) {
    int lead, held, n = series_points(ss, i);
    series_runs(ss, i, &lead, &held);
    double first[5], at[5], q[5];
    series_point(ss, i, 0, &first[0], &first[1], &first[2], &first[3], &first[4]);
    if (held < n) series_point(ss, i, held, &at[0], &at[1], &at[2], &at[3], &at[4]);
    for (int k = 1; k < n - 1; k++) {
        if (k >= lead && k <= held) continue;
        const double *want = k < lead ? first : at;
        series_point(ss, i, k, &q[0], &q[1], &q[2], &q[3], &q[4]);
        for (int f = 1; f < 5; f++) same_bits(q[f], want[f], "a held run's field", k);
    }
}

/* Every bucket of series i against the exact step function closed at end. */
static void check(const series_set *ss, int i, const change *c, int n, double initial, double end) {
    check_runs(ss, i);
    double w = series_bucket_s(ss);
    assert_int_equal(series_points(ss, i), (int)ceil(end / w));
    for (int k = 0; k < series_points(ss, i); k++) {
        double t, dt, mean, mn, mx, q[4];
        series_point(ss, i, k, &t, &dt, &mean, &mn, &mx);
        exact(c, n, initial, end, k * w, (k + 1) * w, q);
        same_bits(t, k * w, "t_s", k);
        same_bits(dt, q[1], "dt_s", k);
        same_bits(mean, q[0] / q[1], "mean", k);
        same_bits(mn, q[2], "min", k);
        same_bits(mx, q[3], "max", k);
    }
}

/* A job's progress: 0 for a long lead, a few steps, 1 to the end; beside
 * it a series never sampled and one whose first change is on an edge. */
static void test_lead_and_tail(void **state) {
    (void)state;
    series_set *ss = series_new(16);
    int job = series_add(ss, 0), idle = series_add(ss, 3), edge = series_add(ss, 2);
    const change prog[] = { { 1000.5, 0.25 }, { 1001, 0.5 }, { 1003.75, 0.75 }, { 1010, 1 } };
    const change at_edge[] = { { 512, 1 }, { 600, 2 }, { 700, 2 } };
    for (int i = 0; i < 4; i++) assert_int_equal(series_put(ss, job, prog[i].t, prog[i].v), 0);
    for (int i = 0; i < 3; i++) assert_int_equal(series_put(ss, edge, at_edge[i].t, at_edge[i].v), 0);
    double end = 20000.0 + 1.0 / 1024;
    assert_int_equal(series_close(ss, end), 0);
    assert_int_equal(series_close(ss, end), 0);               /* the store closes twice */
    check(ss, job, prog, 4, 0, end);
    check(ss, idle, NULL, 0, 3, end);
    check(ss, edge, at_edge, 3, 2, end);
    series_free(ss);
}

/* A sample after a close stores the held tail first; the grid then widens
 * over held leads of odd length. */
static void test_after_close(void **state) {
    (void)state;
    series_set *ss = series_new(8);
    int a = series_add(ss, 1), b = series_add(ss, 0);
    const change ca[] = { { 40, 2 }, { 90, 1 } }, cb[] = { { 120, 1 } };
    assert_int_equal(series_put(ss, a, 40, 2), 0);
    assert_int_equal(series_close(ss, 50), 0);
    assert_int_equal(series_put(ss, a, 90, 1), 0);
    assert_int_equal(series_put(ss, b, 120, 1), 0);
    assert_int_equal(series_close(ss, 300), 0);
    check(ss, a, ca, 2, 1, 300);
    check(ss, b, cb, 1, 0, 300);
    series_free(ss);
}

/* Random dyadic step functions, many at once, against the exact ones. */
static void test_random(void **state) {
    (void)state;
    srand(7);
    enum { NS = 24, NC = 40 };
    series_set *ss = series_new(2000);
    change c[NS][NC];
    int n[NS] = { 0 };
    double init[NS], t = 0;
    for (int i = 0; i < NS; i++) init[i] = rand() % 3, series_add(ss, init[i]);
    for (int step = 0; step < NS * NC / 2; step++) {
        t += (rand() % 4096) / 64.0 + (rand() % 8 == 0 ? 1e5 : 0);   /* now and then a long hold */
        int i = rand() % NS;
        if (n[i] == NC) continue;
        double v = rand() % 4;
        c[i][n[i]++] = (change){ t, v };
        assert_int_equal(series_put(ss, i, t, v), 0);
    }
    double end = t + 12345.5;
    assert_int_equal(series_close(ss, end), 0);
    for (int i = 0; i < NS; i++) check(ss, i, c[i], n[i], init[i], end);
    series_free(ss);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lead_and_tail),
        cmocka_unit_test(test_after_close),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
