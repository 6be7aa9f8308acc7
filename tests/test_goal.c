/*
 * test_goal: metric paths, goals and replica statistics (plan/goal.c, reports/goal.c).
 *
 * The percentiles follow R's default (type 7): for sorted x[0..n) and q,
 * h = (n-1)q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]);
 * checked against that formula written out naively, on random samples. A
 * goal "@ pNN" holds when NN% of the runs meet it: for <= the NN-th
 * percentile is compared, for >= the (100-NN)-th; a missing value (a job
 * that never ended) counts against the goal.
 *
 * goal_check adds the statistic's confidence interval (models/confidence.h)
 * and says the goal is decided only when the interval lies on one side of
 * the threshold: for ten runs of 1..10 days, "<= 12d @ mean" is decided
 * (95% interval 3.33..7.67 d), "<= 6d @ mean" is not; a p90 of ten runs
 * has no upper end (it needs 36), so "<= 100d @ p90" cannot be decided
 * as met, while ">= 20d @ p90" (the 10th percentile's interval, lower
 * end -inf, upper x(4) = 4 d) is decided as missed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/goal.h"

static void test_metric_paths(void **state) {
    (void)state;
    metric_path m;
    char err[256];
    assert_int_equal(goal_metric_parse("jobs[pretrain].end_s", &m, err, sizeof err), 0);
    assert_string_equal(m.array, "jobs");
    assert_string_equal(m.elem, "pretrain");
    assert_string_equal(m.field, "end_s");
    assert_int_equal(goal_metric_parse(" services[\"chat\"].ttft_p99_s ", &m, err, sizeof err), 0);
    assert_string_equal(m.elem, "chat");
    assert_string_equal(m.field, "ttft_p99_s");
    assert_int_equal(goal_metric_parse("jobs[a].time.redone_s", &m, err, sizeof err), 0);
    assert_string_equal(m.field, "time.redone_s");
    assert_int_equal(goal_metric_parse("cluster.cost_usd", &m, err, sizeof err), 0);
    assert_string_equal(m.array, "");
    assert_string_equal(m.field, "cluster.cost_usd");
    assert_int_equal(goal_metric_parse("widgets[a].b", &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "jobs[...]"));
    assert_int_equal(goal_metric_parse("jobs[a]", &m, err, sizeof err), -1);
    assert_int_equal(goal_metric_parse("jobs[].x", &m, err, sizeof err), -1);
    assert_int_equal(goal_metric_parse("cluster.", &m, err, sizeof err), -1);
    assert_int_equal(goal_metric_parse("a;drop", &m, err, sizeof err), -1);
    assert_int_equal(goal_metric_parse("", &m, err, sizeof err), -1);
}

static void test_goals(void **state) {
    (void)state;
    goal g;
    char err[256];
    assert_int_equal(goal_parse("jobs[pretrain].end_s <= 90d @ p90", &g, err, sizeof err), 0);
    assert_int_equal(g.op, GOAL_LE);
    assert_true(g.value == 90 * 86400.0);
    assert_true(g.confidence == 0.9);
    assert_string_equal(g.value_text, "90d");
    assert_int_equal(goal_parse("services[chat].ttft_p99_s<1s", &g, err, sizeof err), 0);
    assert_int_equal(g.op, GOAL_LT);
    assert_true(g.value == 1 && g.confidence == 0.5 && !g.use_mean);
    assert_int_equal(goal_parse("jobs[x].ettr >= 0.9 @ mean", &g, err, sizeof err), 0);
    assert_int_equal(g.op, GOAL_GE);
    assert_true(g.use_mean);
    assert_int_equal(goal_parse("cluster.cost_usd > 2M", &g, err, sizeof err), 0);
    assert_true(g.value == 2e6 && g.op == GOAL_GT);
    assert_int_equal(goal_parse("x = 3", &g, err, sizeof err), -1);
    assert_int_equal(goal_parse("x <= soon", &g, err, sizeof err), -1);
    assert_int_equal(goal_parse("x <= 3 @ q90", &g, err, sizeof err), -1);
    assert_int_equal(goal_parse("x <= 3 @ p100", &g, err, sizeof err), -1);
}

static double naive_quantile(const double *sorted, int n, double q) {
    double h = (n - 1) * q;
    int lo = (int)floor(h), hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_stats_against_reference(void **state) {
    (void)state;
    srand(7);
    for (int t = 0; t < 200; t++) {
        int n = 1 + rand() % 40;
        double v[64], s[64];
        for (int i = 0; i < n; i++) v[i] = s[i] = (rand() % 1000) / 7.0;
        qsort(s, (size_t)n, sizeof *s, cmp);
        goal_stats st;
        goal_stats_of(v, n, &st);
        double sum = 0;
        for (int i = 0; i < n; i++) sum += s[i];
        assert_int_equal(st.n, n);
        assert_true(fabs(st.mean - sum / n) < 1e-9);
        assert_true(fabs(st.p10 - naive_quantile(s, n, 0.1)) < 1e-9);
        assert_true(fabs(st.p90 - naive_quantile(s, n, 0.9)) < 1e-9);
        assert_true(st.min == s[0] && st.max == s[n - 1]);
        assert_true(st.p10 <= st.p50 && st.p50 <= st.p90);
    }
    double v[4] = { 3, NAN, 1, 2 };
    goal_stats st;
    goal_stats_of(v, 4, &st);
    assert_int_equal(st.n, 3);
    assert_int_equal(st.missing, 1);
    assert_true(st.mean == 2 && st.p50 == 2);
}

static void test_goal_met(void **state) {
    (void)state;
    goal g;
    char err[256];
    /* ten runs ending on days 81..90: p90 = 89.1 d */
    double days[10];
    for (int i = 0; i < 10; i++) days[i] = (90 - i) * 86400.0;
    double stat;
    assert_int_equal(goal_parse("jobs[a].end_s <= 89.2d @ p90", &g, err, sizeof err), 0);
    assert_int_equal(goal_met(&g, days, 10, &stat), 1);
    assert_true(fabs(stat - 89.1 * 86400) < 1e-6);
    assert_int_equal(goal_parse("jobs[a].end_s <= 89d @ p90", &g, err, sizeof err), 0);
    assert_int_equal(goal_met(&g, days, 10, &stat), 0);
    /* >= @ p90 compares the 10th percentile: 90% of the runs at least */
    double e[5] = { 0.95, 0.91, 0.80, 0.93, 0.97 };
    assert_int_equal(goal_parse("jobs[a].ettr >= 0.85 @ p90", &g, err, sizeof err), 0);
    assert_int_equal(goal_met(&g, e, 5, &stat), 0);            /* p10 = 0.844 */
    assert_true(fabs(stat - 0.844) < 1e-12);
    assert_int_equal(goal_parse("jobs[a].ettr >= 0.85 @ p50", &g, err, sizeof err), 0);
    assert_int_equal(goal_met(&g, e, 5, &stat), 1);
    /* a run without a value fails a goal at p90 even when the rest meet it */
    double m[10] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, NAN };
    assert_int_equal(goal_parse("jobs[a].end_s <= 2 @ p90", &g, err, sizeof err), 0);
    assert_int_equal(goal_met(&g, m, 10, &stat), 0);
    assert_true(isinf(stat));
    double m2[10] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, NAN };
    assert_int_equal(goal_parse("jobs[a].end_s <= 2 @ p50", &g, err, sizeof err), 0);
    assert_int_equal(goal_met(&g, m2, 10, &stat), 1);
    assert_int_equal(goal_met(&g, m2, 0, &stat), 0);            /* no runs: not met */
}

static void test_goal_check(void **state) {
    (void)state;
    goal g;
    char err[256];
    double v[10];
    goal_check_result r;
#define DAYS() for (int i = 0; i < 10; i++) v[i] = (10 - i) * 86400.0
    DAYS();
    assert_int_equal(goal_parse("jobs[a].end_s <= 12d @ mean", &g, err, sizeof err), 0);
    goal_check(&g, v, 10, 0.95, &r);
    assert_true(r.meets && r.decided);
    assert_true(fabs(r.lo / 86400 - 3.334148) < 1e-5 && fabs(r.hi / 86400 - 7.665852) < 1e-5);
    DAYS();
    assert_int_equal(goal_parse("jobs[a].end_s <= 6d @ mean", &g, err, sizeof err), 0);
    goal_check(&g, v, 10, 0.95, &r);
    assert_true(r.meets && !r.decided);                 /* 5.5 d meets; the interval straddles 6 d */
    DAYS();
    assert_int_equal(goal_parse("jobs[a].end_s <= 5d @ mean", &g, err, sizeof err), 0);
    goal_check(&g, v, 10, 0.95, &r);
    assert_true(!r.meets && !r.decided);
    DAYS();
    assert_int_equal(goal_parse("jobs[a].end_s <= 100d @ p90", &g, err, sizeof err), 0);
    goal_check(&g, v, 10, 0.95, &r);
    assert_true(r.meets && !r.decided && isinf(r.hi) && r.lo == 7 * 86400.0);
    DAYS();
    assert_int_equal(goal_parse("jobs[a].end_s >= 20d @ p90", &g, err, sizeof err), 0);
    goal_check(&g, v, 10, 0.95, &r);
    assert_true(!r.meets && r.decided && isinf(r.lo) && r.hi == 4 * 86400.0);
    /* a run that never ended: +inf for an upper goal, decided as missed at the mean */
    DAYS();
    v[3] = NAN;
    assert_int_equal(goal_parse("jobs[a].end_s <= 100d @ mean", &g, err, sizeof err), 0);
    goal_check(&g, v, 10, 0.95, &r);
    assert_true(!r.meets && r.decided);
    char name[16];
    assert_int_equal(goal_parse("jobs[a].ettr >= 0.9 @ p90", &g, err, sizeof err), 0);
    assert_true(fabs(goal_statistic(&g, name, sizeof name) - 0.1) < 1e-12);
    assert_string_equal(name, "p10");
    /* the spread's statistics carry the mean's interval */
    DAYS();
    goal_stats st;
    goal_stats_of(v, 10, &st);
    assert_true(fabs(st.mean_lo / 86400 - 3.334148) < 1e-5 && fabs(st.mean_hi / 86400 - 7.665852) < 1e-5);
#undef DAYS
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metric_paths),
        cmocka_unit_test(test_goals),
        cmocka_unit_test(test_stats_against_reference),
        cmocka_unit_test(test_goal_met),
        cmocka_unit_test(test_goal_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
