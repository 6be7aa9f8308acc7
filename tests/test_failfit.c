/*
 * test_failfit: fitting failure rates from a history (models/failfit.c).
 *
 * The exact Poisson interval against published chi-square quantiles
 * (any chi-square table, e.g. NIST/SEMATECH e-Handbook of Statistical
 * Methods, section 1.3.6.7.4):
 *   χ²(0.975; 2) = 7.377759   -> k = 0: upper rate 3.688879 / T
 *   χ²(0.025; 2) = 0.050636   -> k = 1: lower 0.025318 / T
 *   χ²(0.975; 4) = 11.143287  -> k = 1: upper 5.571643 / T
 *   χ²(0.025; 20) = 9.590777  -> k = 10: lower 4.795389 / T
 *   χ²(0.975; 22) = 36.780712 -> k = 10: upper 18.390356 / T
 * (Garwood's 95% limits for 10 events, 4.795 and 18.39, as tabulated in
 * Ulm, "A simple method to calculate the confidence interval of a
 * standardized mortality ratio", Am. J. Epidemiol. 131, 1990.)
 * Then the classification of reasons and XIDs, and the merging of one
 * failure seen by several sources.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "models/failfit.h"

#define NEAR(x, want, rel) assert_true(fabs((x) / (want) - 1) < (rel))

static void test_poisson_interval(void **state) {
    (void)state;
    failfit_rate r;
    double T = 1000 * 3600.0;                      /* 1000 instance-hours */
    assert_int_equal(failfit_poisson(10, T, 0.95, &r), 0);
    NEAR(r.rate_per_s * T, 10, 1e-12);
    NEAR(r.rate_lo_per_s * T, 4.795389, 1e-6);
    NEAR(r.rate_hi_per_s * T, 18.390356, 1e-6);
    NEAR(r.mtbf_s, 100 * 3600.0, 1e-12);
    NEAR(r.mtbf_lo_s, T / 18.390356, 1e-6);
    NEAR(r.mtbf_hi_s, T / 4.795389, 1e-6);
    assert_int_equal(failfit_poisson(1, T, 0.95, &r), 0);
    NEAR(r.rate_lo_per_s * T, 0.025318, 1e-4);
    NEAR(r.rate_hi_per_s * T, 5.571643, 1e-6);
    /* no failure: the rate's upper end only, the MTBF's lower end only */
    assert_int_equal(failfit_poisson(0, T, 0.95, &r), 0);
    assert_true(r.rate_per_s == 0 && r.rate_lo_per_s == 0);
    NEAR(r.rate_hi_per_s * T, 3.688879, 1e-6);
    assert_true(isinf(r.mtbf_s) && isinf(r.mtbf_hi_s));
    NEAR(r.mtbf_lo_s, T / 3.688879, 1e-6);
    /* refusals */
    assert_int_equal(failfit_poisson(-1, T, 0.95, &r), -1);
    assert_int_equal(failfit_poisson(1, 0, 0.95, &r), -1);
    assert_int_equal(failfit_poisson(1, T, 1, &r), -1);
}

static void test_classes(void **state) {
    (void)state;
    assert_int_equal(failfit_xid(79).component, REL_GPU);
    assert_int_equal(failfit_xid(79).needs_repair, 1);
    assert_true(failfit_xid(79).mttr_s == REL_MTTR_GPU_SWAP_S);
    assert_int_equal(failfit_xid(48).component, REL_HBM);
    assert_int_equal(failfit_xid(95).component, REL_HBM);
    assert_int_equal(failfit_xid(13).component, FAILFIT_APP);
    assert_int_equal(failfit_xid(92).component, FAILFIT_INFO);
    assert_int_equal(failfit_xid(999).component, REL_GPU);
    assert_int_equal(failfit_reason("XID 79").component, REL_GPU);
    assert_string_equal(failfit_reason("gpu3 Xid: 48 DBE").cause, "HBM double-bit ECC (XID 48)");
    assert_int_equal(failfit_reason("ECC errors above threshold").component, REL_HBM);
    assert_int_equal(failfit_reason("IB link down mlx5_2").component, REL_NIC);
    assert_int_equal(failfit_reason("kernel panic").component, REL_NODE);
    assert_int_equal(failfit_reason("Not responding").component, REL_NODE);
    assert_int_equal(failfit_reason("Prolog error").component, REL_SOFTWARE);
    assert_int_equal(failfit_reason("scheduled maintenance").component, FAILFIT_PLANNED);
    assert_int_equal(failfit_reason("Reboot ASAP").component, FAILFIT_PLANNED);
    assert_string_equal(failfit_reason("weird thing").cause, "other (unclassified reason)");
    assert_int_equal(failfit_reason(NULL).component, REL_NODE);
}

static failfit_event ev(double t, const char *node, failfit_source src, failfit_class c, double down) {
    failfit_event e;
    memset(&e, 0, sizeof e);
    e.t_s = t, e.down_s = down, e.source = src, e.c = c, e.n_nodes = 1;
    snprintf(e.node[0], sizeof e.node[0], "%s", node);
    return e;
}

/* One XID 79 seen three ways is one GPU failure; planned work absorbs the
 * NODE_FAIL it caused; an application XID is no failure; events apart in
 * time or on other nodes stay apart. */
static void test_fit_merges(void **state) {
    (void)state;
    failfit_class nf = { REL_NODE, "node failure (NODE_FAIL job end)", 1, REL_MTTR_REBOOT_S };
    failfit_event e[8];
    int n = 0;
    e[n++] = ev(1000, "gpu01", FAILFIT_SRC_NODE_FAIL, nf, 0);
    e[n++] = ev(1030, "gpu01", FAILFIT_SRC_REASON, failfit_reason("XID 79"), 7200);
    e[n++] = ev(990, "gpu01", FAILFIT_SRC_XID, failfit_xid(79), 0);
    e[n++] = ev(50000, "gpu02", FAILFIT_SRC_REASON, failfit_reason("maintenance"), 3600);
    e[n++] = ev(50100, "gpu02", FAILFIT_SRC_NODE_FAIL, nf, 0);
    e[n++] = ev(90000, "gpu03", FAILFIT_SRC_XID, failfit_xid(13), 0);
    e[n++] = ev(99000, "gpu04", FAILFIT_SRC_REASON, failfit_reason("IB link down"), 0);
    e[n++] = ev(99000 + 2 * FAILFIT_SAME_FAILURE_S, "gpu04", FAILFIT_SRC_REASON, failfit_reason("IB link down"), 0);
    failfit_fleet f = { 30 * 86400.0, 4, 8, 8, 0 };
    failfit_row rows[8], comp[REL_COMPONENT_COUNT];
    failfit_counts k;
    int nr = failfit_fit(e, n, &f, FAILFIT_SAME_FAILURE_S, 0.95, rows, 8, comp, &k);
    assert_int_equal(nr, 2);
    assert_int_equal(k.events_in, 8);
    assert_int_equal(k.failures, 3);
    assert_int_equal(k.planned, 1);
    assert_int_equal(k.app, 1);
    assert_int_equal(k.merged, 3);
    assert_int_equal(rows[0].component, REL_GPU);
    assert_string_equal(rows[0].cause, "GPU fell off the bus (XID 79)");
    assert_true(rows[0].r.events == 1 && rows[0].n_down == 1 && rows[0].mttr_s == 7200);
    assert_true(rows[0].instances == 32);
    NEAR(rows[0].r.mtbf_s, 30 * 86400.0 * 32, 1e-12);
    assert_int_equal(rows[1].component, REL_NIC);
    assert_true(rows[1].r.events == 2 && rows[1].mttr_s == REL_MTTR_LINK_S);
    assert_true(comp[REL_NIC].r.events == 2 && comp[REL_HBM].r.events == 0 && comp[REL_NODE].instances == 4);
    NEAR(comp[REL_HBM].r.mtbf_lo_s, 30 * 86400.0 * 32 / 3.688879, 1e-6);
    f.nodes = 0;
    assert_int_equal(failfit_fit(e, n, &f, 600, 0.95, rows, 8, comp, &k), -1);
}

/* Three nodes fail 6 times each (kernel panics, an hour down each), the
 * hours between drawn from a Weibull of shape 0.4: the fit sees exactly
 * those 15 lifetimes and the 3 censored tails to the window's end, rejects
 * the exponential and writes the shape; with 2 gaps a node (6) it fits but
 * does not write; with 1 a node (3) it does not fit. */
static int panics(failfit_event *e, int per_node, double *x, int *n_x, double *c, int *n_c, double t_end) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    int n = 0;
    *n_x = *n_c = 0;
    for (int node = 0; node < 3; node++) {
        double t = 1e9 + node * 100;
        char name[16];
        snprintf(name, sizeof name, "gpu%02d", node + 1);
        for (int i = 0; i < per_node; i++) {
            e[n++] = ev(t, name, FAILFIT_SRC_REASON, failfit_reason("kernel panic"), 3600);
            double life = 3600 * (1 + gsl_ran_weibull(rng, 100, 0.4));
            if (i + 1 < per_node) x[(*n_x)++] = life;
            else c[(*n_c)++] = t_end - (t + 3600);
            t += 3600 + life;
        }
    }
    gsl_rng_free(rng);
    return n;
}

static void test_fit_weibull(void **state) {
    (void)state;
    failfit_event e[18];
    failfit_row rows[18], comp[REL_COMPONENT_COUNT];
    failfit_counts k;
    double x[18], c[3], t_end = 1e9 + 400 * 86400.0;
    int n_x, n_c, n = panics(e, 6, x, &n_x, c, &n_c, t_end);
    failfit_fleet f = { 400 * 86400.0, 3, 8, 8, t_end };
    assert_int_equal(failfit_fit(e, n, &f, FAILFIT_SAME_FAILURE_S, 0.95, rows, 18, comp, &k), 1);
    assert_int_equal(k.failures, 18);
    weibull_fit want;
    assert_int_equal(weibull_fit_mle(x, n_x, c, n_c, 0.95, &want), 0);
    const failfit_row *t = &comp[REL_NODE];
    assert_true(t->has_wb && t->wb.complete == 15 && t->wb.censored == 3);
    NEAR(t->wb.shape, want.shape, 1e-9);
    NEAR(t->wb.scale, want.scale, 1e-9);
    assert_true(t->wb.shape_hi < 1 && t->wb.p_exponential < 0.05 && t->weibull);
    assert_true(rows[0].component == REL_NODE && rows[0].weibull && rows[0].wb.shape == t->wb.shape);
    assert_true(!comp[REL_GPU].has_wb && !comp[REL_GPU].weibull);
    n = panics(e, 3, x, &n_x, c, &n_c, t_end);
    assert_int_equal(failfit_fit(e, n, &f, FAILFIT_SAME_FAILURE_S, 0.95, rows, 18, comp, &k), 1);
    assert_true(comp[REL_NODE].has_wb && comp[REL_NODE].wb.complete == 6 && !comp[REL_NODE].weibull && !rows[0].weibull);
    n = panics(e, 2, x, &n_x, c, &n_c, t_end);
    assert_int_equal(failfit_fit(e, n, &f, FAILFIT_SAME_FAILURE_S, 0.95, rows, 18, comp, &k), 1);
    assert_true(!comp[REL_NODE].has_wb && !rows[0].weibull);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poisson_interval),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_fit_merges),
        cmocka_unit_test(test_fit_weibull),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
