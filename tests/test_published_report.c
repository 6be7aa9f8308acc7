/*
 * test_published_report: the statistics of the published-case report
 * (reports/published_report.h), worked by hand: the signed error, within
 * tolerance, the median of an odd and an even count, and the summary
 * groups (all, per file, per set in the order calibration then heldout,
 * per mechanism tag with a case of two tags in both and a case of none
 * under "none"); a case without a result counts in no_result only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/published_report.h"

static pubrep_case mk(const char *file, const char *set, const char *mech, double expected, double predicted) {
    pubrep_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.file, sizeof c.file, "%s", file);
    snprintf(c.id, sizeof c.id, "case");
    snprintf(c.set, sizeof c.set, "%s", set);
    snprintf(c.mechanism, sizeof c.mechanism, "%s", mech);
    c.expected = expected;
    c.predicted = predicted;
    c.tolerance_pct = 10;
    return c;
}

static const pubrep_summary *group(const pubrep *r, const char *name) {
    for (size_t i = 0; i < r->n_groups; i++)
        if (!strcmp(r->groups[i].group, name)) return &r->groups[i];
    fail_msg("no group %s", name);
    return NULL;
}

static void test_error_and_within(void **state) {
    (void)state;
    pubrep_case c = mk("a.csv", "calibration", "", 200, 230);
    assert_float_equal(pubrep_error_pct(&c), 15.0, 1e-12);       /* 100 (230 - 200) / 200 */
    assert_int_equal(pubrep_within(&c), 0);                      /* 15% > 10% */
    c.predicted = 190;
    assert_float_equal(pubrep_error_pct(&c), -5.0, 1e-12);
    assert_int_equal(pubrep_within(&c), 1);
    c.tolerance_pct = NAN;
    assert_int_equal(pubrep_within(&c), -1);                     /* no tolerance: unknown */
    c.predicted = NAN;
    assert_true(isnan(pubrep_error_pct(&c)));
}

static void test_median(void **state) {
    (void)state;
    double odd[] = { 5, -1, 3 }, even[] = { 4, 1, 3, 2 };
    assert_float_equal(pubrep_median(odd, 3), 3, 0);
    assert_float_equal(pubrep_median(even, 4), 2.5, 0);
    assert_true(isnan(pubrep_median(odd, 0)));
}

static void test_summary_groups(void **state) {
    (void)state;
    pubrep r = { 0 };
    const pubrep_case cases[] = {
        mk("b.csv", "heldout", "power+stack", 100, 120),   /* +20 */
        mk("b.csv", "heldout", "stack", 100, 90),          /* -10 */
        mk("a.csv", "calibration", "", 100, 104),          /* +4 */
        mk("a.csv", "calibration", "power", 100, NAN),     /* no result */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) assert_int_equal(pubrep_add(&r, &cases[i]), 0);
    assert_int_equal(pubrep_summarize(&r), 0);
    static const char *const order[] = { "all", "file:b.csv", "file:a.csv", "set:calibration", "set:heldout",
                                         "training:heldout", "training:calibration",
                                         "mechanism:none", "mechanism:power", "mechanism:stack" };
    assert_int_equal(r.n_groups, 10);
    for (int i = 0; i < 10; i++) assert_string_equal(r.groups[i].group, order[i]);
    const pubrep_summary *all = group(&r, "all");
    assert_int_equal(all->n, 3);
    assert_int_equal(all->no_result, 1);
    assert_float_equal(all->median_abs_error_pct, 10, 1e-9);     /* |e| = 4, 10, 20 */
    assert_float_equal(all->max_abs_error_pct, 20, 1e-9);
    assert_float_equal(all->median_signed_error_pct, 4, 1e-9);   /* e = -10, 4, 20 */
    const pubrep_summary *stack = group(&r, "mechanism:stack");
    assert_int_equal(stack->n, 2);
    assert_float_equal(stack->median_abs_error_pct, 15, 1e-9);
    assert_float_equal(stack->median_signed_error_pct, 5, 1e-9);
    const pubrep_summary *power = group(&r, "mechanism:power");
    assert_int_equal(power->n, 1);
    assert_int_equal(power->no_result, 1);
    assert_float_equal(power->max_abs_error_pct, 20, 1e-9);
    const pubrep_summary *cal = group(&r, "set:calibration");
    assert_int_equal(cal->n, 1);
    assert_float_equal(cal->median_signed_error_pct, 4, 1e-9);
    assert_int_equal(group(&r, "mechanism:none")->n, 1);
    assert_int_equal(group(&r, "training:heldout")->n, 2);             /* a kind within a set */
    assert_float_equal(group(&r, "training:heldout")->median_abs_error_pct, 15, 1e-9);
    assert_int_equal(group(&r, "training:calibration")->no_result, 1);
    pubrep_free(&r);
}

static void test_empty(void **state) {
    (void)state;
    pubrep r = { 0 };
    assert_int_equal(pubrep_summarize(&r), 0);
    assert_int_equal(r.n_groups, 1);
    assert_int_equal(r.groups[0].n, 0);
    assert_true(isnan(r.groups[0].median_abs_error_pct));
    pubrep_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_and_within),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_summary_groups),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
