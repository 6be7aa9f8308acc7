/*
 * test_reliability: failure processes per component instance
 * (models/reliability.c) against the Llama 3 failure table.
 *
 * What it models: one failure process per GPU, NIC or node of a job, each
 * with a per-instance MTBF, a detection kind and a repair need; the built-in
 * profile "llama3" splits the published interruptions by cause.
 *
 * Expected figures (validation README, "Failures"; The Llama 3 Herd of
 * Models, 2024, section 3.3.4 and Table 5): 419 unexpected interruptions in
 * 54 days on 16,384 H100 GPUs (2,048 DGX H100 nodes, eight compute NICs
 * each), so a mean time to interruption of 54·24/419 = 3.09 h, about 3.8
 * failures per 1000 node-days, and a per-GPU MTBF near 50,700 h if every
 * failure is charged to the GPU count. Each cause's share of the job's rate
 * must be its count over 419. Weibull conversions are checked against
 * Γ(1 + 1/k) by hand (Γ(2.25) = 1.1330, Γ(1.5) = √π/2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>

#include "models/catalog.h"
#include "models/numerics.h"
#include "models/reliability.h"
#include "scenarios/catalog_xml.h"
#include "scenarios/csv.h"

#define DAY 86400.0
#define HOUR 3600.0

/* The built-in catalog, where the fleet profiles are (models/catalog/reliability.xml). */
static catalog *cat;

static int load_catalog(void **state) {
    (void)state;
    char err[256];
    cat = catalog_new();
    return cat && catalog_load_builtin(cat, err, sizeof err) == 0 ? 0 : -1;
}

static int free_catalog(void **state) {
    (void)state;
    catalog_free(cat);
    return 0;
}

static void assert_near(double got, double want, double tol, const char *what) {
    if (!(fabs(got - want) <= tol)) {
        fprintf(stderr, "%s: got %.6g, want %.6g +- %.3g\n", what, got, want, tol);
        fail();
    }
}

/* The Llama 3 job as a fleet: 2,048 DGX H100 nodes from the catalog. */
static rel_fleet llama3_fleet(void) {
    char err[256];
    catalog *c = catalog_new();
    assert_non_null(c);
    assert_int_equal(catalog_load_builtin(c, err, sizeof err), 0);
    const node_spec *n = catalog_node(c, "dgx-h100");
    assert_non_null(n);
    rel_fleet f;
    assert_int_equal(rel_fleet_of(&f, n, 2048), 0);
    assert_int_equal(rel_instances_per_node(REL_GPU, n), 8);
    assert_int_equal(rel_instances_per_node(REL_NIC, n), 8);
    assert_int_equal(rel_instances_per_node(REL_SWITCH, n), 1);
    catalog_free(c);
    return f;
}

static int expand_llama3(rel_process *p, int max) {
    rel_spec s = { .profile = "llama3" };
    char why[128];
    int n = rel_expand(cat, &s, 1, p, max, why, sizeof why);
    assert_true(n > 0);
    return n;
}

/* The table as published: 18 causes summing to 419. */
static void test_profile_table(void **state) {
    (void)state;
    const rel_profile *p = rel_profile_find(cat, "llama3");
    assert_non_null(p);
    assert_null(rel_profile_find(cat, "bloom"));
    assert_int_equal(p->n_causes, 18);
    assert_near(rel_profile_total(p), 419, 0, "total");
    assert_int_equal(p->gpus, 16384);
    assert_near(p->window_s, 54 * DAY, 0, "window");
    /* Two rows by label and class. */
    assert_string_equal(p->causes[0].label, "faulty GPU");
    assert_int_equal(p->causes[0].count, 148);
    assert_int_equal(p->causes[2].component, REL_SOFTWARE);
    assert_int_equal(p->causes[2].needs_repair, 0);
}

/* 419 ± 1 interruptions expected in 54 days at 16,384 GPUs; MTTI 3.09 h. */
static void test_llama3_rate(void **state) {
    (void)state;
    rel_process p[32];
    int n = expand_llama3(p, 32);
    assert_int_equal(n, 18);
    rel_fleet f = llama3_fleet();
    assert_near(f.gpus, 16384, 0, "gpus");
    assert_near(f.nics, 16384, 0, "nics");
    double rate = rel_job_rate_per_s(p, n, &f);
    double expect = rate * 54 * DAY;
    printf("llama3 profile: %.2f interruptions in 54 d at 16,384 GPUs, MTTI %.3f h\n",
           expect, rel_mtti_s(rate) / HOUR);
    assert_near(expect, 419, 1, "interruptions in 54 d");
    assert_near(rel_mtti_s(rate) / HOUR, 3.09, 0.01, "MTTI (h)");

    /* Half the job, half the rate: every cause scales with instances. */
    rel_fleet half = { f.gpus / 2, f.nodes / 2, f.nics / 2 };
    assert_near(rel_job_rate_per_s(p, n, &half) * 54 * DAY, 419.0 / 2, 0.5, "8,192 GPUs");
}

/* Each cause's share of the rate is its count over 419. */
static void test_cause_shares(void **state) {
    (void)state;
    const rel_profile *prof = rel_profile_find(cat, "llama3");
    rel_process p[32];
    int n = expand_llama3(p, 32);
    rel_fleet f = llama3_fleet();
    double rate = rel_job_rate_per_s(p, n, &f);
    for (int i = 0; i < n; i++) {
        double share = rel_job_rate_per_s(&p[i], 1, &f) / rate;
        assert_string_equal(p[i].cause, prof->causes[i].label);
        assert_near(share, prof->causes[i].count / 419.0, 1e-9, p[i].cause);
    }
    /* Per-instance MTBFs: faulty GPU 54 d · 16,384 / 148 = 143,468 h per GPU;
     * network switch/cable 54 d · 2,048 / 35 = 75,835 h per node. */
    assert_near(p[0].mtbf_s / HOUR, 54 * 24.0 * 16384 / 148, 1e-6, "faulty GPU MTBF");
    assert_near(p[3].mtbf_s / HOUR, 54 * 24.0 * 2048 / 35, 1e-6, "switch MTBF");
    assert_int_equal(p[3].scope, REL_PER_NODE);
    assert_int_equal(p[7].scope, REL_PER_NIC);
}

/* The README's derived figures: per-GPU MTBF ~50,700 h; ~3.8 failures per
 * 1000 node-days; N·t/MTBF gives the 419 back. */
static void test_derived_figures(void **state) {
    (void)state;
    const rel_profile *p = rel_profile_find(cat, "llama3");
    double m = rel_profile_gpu_mtbf_s(p);
    assert_near(m / HOUR, 50700, 50, "per-GPU MTBF (h)");
    assert_near(419.0 / (2048 * 54) * 1000, 3.79, 0.01, "failures per 1000 node-days");
    assert_near(rel_mean_interruptions(16384, 54 * DAY, m), 419, 1e-6, "N t / MTBF");
    double count[2] = { 16384, 2048 }, mtbf[2] = { 100000 * HOUR, 50000 * HOUR };
    assert_near(rel_rate_per_s(count, mtbf, 2), 16384 / (100000 * HOUR) + 2048 / (50000 * HOUR),
                1e-18, "rate from counts");
    assert_true(isinf(rel_mtti_s(0)));
}

/* Detection and repair follow the cause: software restarts only; NCCL
 * watchdog timeouts, GSP hangs, switch/cable faults and SDC wait for the
 * watchdog (10 min); crashes are seen in seconds. */
static void test_detection_repair(void **state) {
    (void)state;
    rel_process p[32];
    int n = expand_llama3(p, 32);
    int restart_only = 0, watchdog = 0;
    for (int i = 0; i < n; i++) {
        if (!p[i].needs_repair) {
            restart_only += rel_profile_find(cat, "llama3")->causes[i].count;
            assert_int_equal(p[i].component, REL_SOFTWARE);
            assert_near(p[i].mttr_s, 0, 0, "software mttr");
        } else {
            assert_true(p[i].mttr_s >= REL_MTTR_REBOOT_S);
        }
        if (p[i].detection == REL_DETECT_WATCHDOG) {
            watchdog += rel_profile_find(cat, "llama3")->causes[i].count;
            assert_near(p[i].detect_s, REL_WATCHDOG_S, 0, "watchdog delay");
        } else {
            assert_near(p[i].detect_s, REL_CRASH_DETECT_S, 0, "crash delay");
        }
    }
    assert_int_equal(restart_only, 54 + 7 + 2);
    assert_int_equal(watchdog, 35 + 17 + 7 + 6);
    assert_near(rel_mttr_default_s(REL_GPU), 3 * DAY, 0, "GPU swap");
    assert_near(rel_mttr_default_s(REL_SOFTWARE), 0, 0, "software");
}

/* A profile restricted to one class, and rescaled by an mtbf. */
static void test_profile_filter_scale(void **state) {
    (void)state;
    rel_process p[32];
    char why[128];
    rel_spec gpu = { .profile = "llama3", .component = "gpu" };
    int n = rel_expand(cat, &gpu, 1, p, 32, why, sizeof why);
    assert_int_equal(n, 5);       /* faulty GPU, SRAM, GSP, SDC, thermal interface */
    rel_fleet f = llama3_fleet();
    assert_near(rel_job_rate_per_s(p, n, &f) * 54 * DAY, 148 + 19 + 17 + 6 + 6, 1e-6, "GPU causes");

    /* mtbf="25350h" with the profile: twice the published rate, same mix. */
    rel_spec twice = { .profile = "llama3", .mtbf_s = rel_profile_gpu_mtbf_s(rel_profile_find(cat, "llama3")) / 2 };
    n = rel_expand(cat, &twice, 1, p, 32, why, sizeof why);
    assert_int_equal(n, 18);
    assert_near(rel_job_rate_per_s(p, n, &f) * 54 * DAY, 838, 1e-6, "rescaled");
}

/* A plain <failure component="node" mtbf="1.2y" distribution="weibull"
 * shape="0.8"/>: the scale keeps the mean; defaults fill the rest. */
static void test_single_spec(void **state) {
    (void)state;
    rel_spec s[2] = {
        { .component = "node", .mtbf_s = 1.2 * 365 * DAY, .distribution = "weibull", .shape = 0.8 },
        { .component = "gpu", .mtbf_s = 50700 * HOUR, .mttr_s = 3600, .cause = "xid 79" },
    };
    rel_process p[2];
    char why[128];
    assert_int_equal(rel_expand(cat, s, 2, p, 2, why, sizeof why), 2);
    assert_int_equal(p[0].distribution, REL_WEIBULL);
    assert_near(p[0].scale_s, 1.2 * 365 * DAY / 1.1330030963193471, 1, "Weibull scale");
    assert_near(rel_weibull_mean_s(p[0].scale_s, 0.8), 1.2 * 365 * DAY, 1e-3, "Weibull mean");
    assert_string_equal(p[0].cause, "node");
    assert_near(p[0].mttr_s, REL_MTTR_NODE_PART_S, 0, "node default mttr");
    assert_int_equal(p[0].needs_repair, 1);
    assert_int_equal(p[1].distribution, REL_EXPONENTIAL);
    assert_near(p[1].shape, 1, 0, "exponential shape");
    assert_near(p[1].scale_s, p[1].mtbf_s, 0, "exponential scale");
    assert_string_equal(p[1].cause, "xid 79");
    assert_near(p[1].mttr_s, 3600, 0, "given mttr");

    /* Counting call: max 0 returns the size to allocate. */
    rel_spec both[2] = { s[0], { .profile = "llama3" } };
    assert_int_equal(rel_expand(cat, both, 2, NULL, 0, why, sizeof why), 19);
    assert_int_equal(rel_expand(cat, both, 2, p, 2, why, sizeof why), 19);
}

static void test_weibull(void **state) {
    (void)state;
    assert_near(rel_weibull_scale_s(100, 1), 100, 1e-12, "shape 1");
    assert_near(rel_weibull_mean_s(100, 2), 100 * sqrt(M_PI) / 2, 1e-9, "shape 2: Γ(1.5)");
    assert_near(rel_weibull_mean_s(rel_weibull_scale_s(7, 0.7), 0.7), 7, 1e-9, "round trip");
    assert_true(isnan(rel_weibull_mean_s(100, 0)));
    assert_true(isnan(rel_weibull_scale_s(-1, 1)));
}

/* Issue 16: shape 0.005 asks for Γ(201), which overflows a double; GSL's
 * gamma aborted the program (exit 134). In log space the scale is tiny but
 * exact; the check refuses it by name instead of failing at one instant. */
static void test_weibull_tiny_shape(void **state) {
    (void)state;
    double mean = 1.2 * 365 * DAY;
    double scale = rel_weibull_scale_s(mean, 0.005);
    assert_true(scale >= 0 && !isnan(scale));             /* underflows to 0, no NaN */
    assert_true(isinf(rel_weibull_mean_s(1, 0.005)));    /* overflows to +inf, no abort */
    char why[400];
    assert_int_equal(rel_weibull_check(mean, 0.005, why, sizeof why), -1);
    assert_non_null(strstr(why, "a Weibull shape of 0.005"));
    assert_non_null(strstr(why, "below the clock's resolution of 1 ns"));
    assert_int_equal(rel_weibull_check(mean, 0.0058, why, sizeof why), -1);
    assert_int_equal(rel_weibull_check(mean, 0.8, why, sizeof why), 0);
    /* The least shape it suggests passes; a bit less does not. */
    double min = rel_weibull_min_shape(mean);
    assert_true(min > 0.0058 && min < 1);
    assert_int_equal(rel_weibull_check(mean, min, NULL, 0), 0);
    assert_int_equal(rel_weibull_check(mean, min * 0.99, NULL, 0), -1);
    /* Through rel_expand, as world_new calls it. */
    rel_process p[2];
    rel_spec s = { .component = "node", .mtbf_s = mean, .distribution = "weibull", .shape = 0.005 };
    assert_int_equal(rel_expand(cat, &s, 1, p, 2, why, sizeof why), -1);
    assert_non_null(strstr(why, "use a shape of at least"));
    rel_spec prof = { .profile = "llama3", .distribution = "weibull", .shape = 0.005 };
    assert_int_equal(rel_expand(cat, &prof, 1, NULL, 0, why, sizeof why), -1);
}

/* A GSL error (here Γ(201) overflowing, and a domain error) is recorded
 * and returned as a value once numerics_gsl_install() ran; before, GSL's
 * default handler called abort(). */
static void test_gsl_error_does_not_abort(void **state) {
    (void)state;
    numerics_gsl_install();
    unsigned long n0 = numerics_gsl_error_count();
    double g = gsl_sf_gamma(201.0);
    assert_true(isinf(g) || isnan(g) || g == 0);
    assert_true(numerics_gsl_error_count() > n0);
    assert_non_null(strstr(numerics_gsl_last_error(), "gamma"));
    gsl_sf_result r;
    assert_int_not_equal(gsl_sf_lngamma_e(0.0, &r), GSL_SUCCESS);      /* pole: domain error */
    assert_true(numerics_gsl_error_count() > n0 + 1);
}

static void test_errors(void **state) {
    (void)state;
    rel_process p[4];
    char why[160];
    rel_spec bad[] = {
        { .component = "tpu", .mtbf_s = 1 },
        { .component = "gpu" },
        { .component = "gpu", .mtbf_s = 1, .distribution = "weibull" },
        { .component = "gpu", .mtbf_s = 1, .distribution = "lognormal" },
        { .profile = "bloom" },
        { .component = "gpu", .mtbf_s = 1, .mttr_s = -1 },
        { .component = "node", .mtbf_s = 1e-20 },          /* gaps round to 0 ns: never ends */
        { .profile = "llama3", .mtbf_s = 0.5 },
        { 0 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        assert_int_equal(rel_expand(cat, &bad[i], 1, p, 4, why, sizeof why), -1);
        assert_true(why[0] != 0);
    }
    rel_expand(cat, &bad[0], 1, p, 4, why, sizeof why);
    assert_non_null(strstr(why, "tpu"));
    /* An unknown profile names every built-in one, from the table. */
    rel_expand(cat, &bad[4], 1, p, 4, why, sizeof why);
    for (int i = 0; i < rel_profile_count(cat); i++) assert_non_null(strstr(why, rel_profile_at(cat, i)->name));
    /* A class the profile has no cause of is an error, not zero processes. */
    rel_spec none = { .profile = "rsc1-a100", .component = "gpu" };
    assert_int_equal(rel_expand(cat, &none, 1, p, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "no cause"));
    assert_int_equal(rel_component_parse("switch"), REL_SWITCH);
    assert_int_equal(rel_component_parse(NULL), -1);
    assert_int_equal(rel_process_init(p, REL_GPU, NULL, 0, REL_EXPONENTIAL, 1, 0, REL_DETECT_CRASH, 1), -1);
    assert_int_equal(rel_fleet_of(NULL, NULL, 1), -1);
}

/* Residual life of an instance that has survived to age a, drawn from a
 * fixed-seed stream, against the analytic conditional survival
 * S(a + t) / S(a), S(t) = exp(-(t/scale)^shape): the share of 20,000 draws
 * beyond each conditional quartile and decile must be within 4 binomial
 * standard deviations (sqrt(p(1-p)/n) = 0.0035 at p = 0.5). Then the
 * inversion itself: the cumulative hazard between a and a + t equals
 * -ln u to 1e-9, at ages up to 10^4 scales (where a naive
 * scale·((a/scale)^k − ln u)^(1/k) − a loses every digit). */
static void test_weibull_residual(void **state) {
    (void)state;
    const double scale = 1000 * 3600.0;
    const struct { double shape, age_s; } c[] = {
        { 0.5, 8760 * 3600.0 }, { 0.7, 0 }, { 1.5, 2 * 1000 * 3600.0 }, { 3, 500 * 3600.0 }, { 0.3, 1e4 * 1000 * 3600.0 },
    };
    enum { N = 20000 };
    static double t[N];
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 17);
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        double sh = c[k].shape, a = c[k].age_s, s_a = rel_weibull_survival(scale, sh, a);
        for (int i = 0; i < N; i++) t[i] = rel_weibull_residual_s(scale, sh, a, gsl_rng_uniform_pos(g));
        const double q[] = { 0.9, 0.75, 0.5, 0.25, 0.1 };       /* conditional survival levels */
        for (size_t j = 0; j < sizeof q / sizeof q[0]; j++) {
            /* the t where S(a + t) / S(a) = q: (a + t)/scale = ((a/scale)^k - ln q)^(1/k) */
            double tq = scale * pow(pow(a / scale, sh) - log(q[j]), 1 / sh) - a;
            if (k == 4) continue;                   /* tq itself cancels at 10^4 scales; checked below */
            assert_true(fabs(rel_weibull_survival(scale, sh, a + tq) / s_a - q[j]) < 1e-9);
            int beyond = 0;
            for (int i = 0; i < N; i++) beyond += t[i] > tq;
            double emp = (double)beyond / N, sd = sqrt(q[j] * (1 - q[j]) / N);
            if (fabs(emp - q[j]) > 4 * sd)
                fail_msg("shape %g age %g s: %.4f of draws beyond the %.2f level, expected %.2f +- %.4f", sh, a, emp,
                         q[j], q[j], 4 * sd);
        }
        for (double u = 1e-6; u < 1; u *= 3) {
            double r = rel_weibull_residual_s(scale, sh, a, u);
            assert_true(r >= 0 && isfinite(r));
            double h = a > 0 ? pow(a / scale, sh) * expm1(sh * log1p(r / a)) : pow(r / scale, sh);
            if (fabs(h + log(u)) > 1e-9 * -log(u)) fail_msg("shape %g age %g u %g: hazard %.12g, want %.12g", sh, a, u, h, -log(u));
        }
    }
    gsl_rng_free(g);
    /* age 0 is the plain draw; bad arguments */
    assert_true(rel_weibull_residual_s(scale, 0.7, 0, 0.3) == scale * pow(-log(0.3), 1 / 0.7));
    assert_true(isnan(rel_weibull_residual_s(scale, 0.7, -1, 0.3)));
    assert_true(isnan(rel_weibull_residual_s(scale, 0.7, 0, 0)));
    assert_true(isnan(rel_weibull_residual_s(0, 0.7, 0, 0.5)));
    assert_true(rel_weibull_residual_s(scale, 0.7, 5, 1) == 0);        /* u = 1: fails at once */
}

/* ---- Fleet profiles ------------------------------------------------------ */

/* Every profile reproduces its own study: its observed fleet (window ·
 * GPUs, nodes, NICs) expects exactly the published count in the window,
 * through the same expansion a scenario gets; names are unique and listed. */
static void test_fleet_profiles(void **state) {
    (void)state;
    char names[512];
    rel_profile_names(cat, names, sizeof names);
    assert_true(rel_profile_count(cat) >= 5);
    for (int i = 0; i < rel_profile_count(cat); i++) {
        const rel_profile *p = rel_profile_at(cat, i);
        assert_ptr_equal(rel_profile_find(cat, p->name), p);
        assert_non_null(strstr(names, p->name));
        assert_true(p->source[0] && p->fleet[0]);
        rel_process proc[32];
        rel_spec s = { .profile = p->name };
        char why[256];
        int n = rel_expand(cat, &s, 1, proc, 32, why, sizeof why);
        assert_int_equal(n, p->n_causes);
        rel_fleet f = { p->gpus, p->nodes, p->nics };
        double expect = rel_job_rate_per_s(proc, n, &f) * p->window_s;
        printf("%-15s %8.2f failures in %5.0f d on %6d GPUs / %5d nodes (published %.2f)\n", p->name, expect,
               p->window_s / DAY, p->gpus, p->nodes, rel_profile_total(p));
        assert_near(expect, rel_profile_total(p), 1e-9 * rel_profile_total(p), p->name);
    }
    assert_null(rel_profile_at(cat, rel_profile_count(cat)));
    assert_null(rel_profile_at(cat, -1));
    /* Two derived figures by hand: OPT-175B 105 restarts in 60 d of 124
     * nodes, BLOOM 1.5 GPU failures a week of 384 GPUs. */
    assert_near(rel_profile_cause_mtbf_s(rel_profile_find(cat, "opt175b-a100"), 1), 60 * DAY * 124 / 70, 1e-6, "opt auto");
    assert_near(rel_profile_gpu_mtbf_s(rel_profile_find(cat, "bloom176b-a100")) / HOUR, 384 * 7 * 24 / 1.5, 1e-9, "bloom");
}

/* A profile of one's own fleet through the catalog: its causes expand like
 * the built-in ones; base= copies a profile and keeps its causes unless
 * the new entry lists its own. */
static void test_user_profile(void **state) {
    (void)state;
    static const char xml[] =
        "<catalog>\n"
        " <failure-profile name=\"site\" window=\"90d\" gpus=\"64\" nodes=\"8\" nics=\"64\">\n"
        "  <cause label=\"bad GPU\" component=\"gpu\" count=\"6\" detection=\"crash\" repair=\"gpu-swap\"/>\n"
        "  <cause label=\"hang\" component=\"software\" count=\"3\" detection=\"watchdog\" repair=\"restart\"/>\n"
        " </failure-profile>\n"
        " <failure-profile base=\"llama3\" name=\"llama3-long\" window=\"108d\"/>\n"
        "</catalog>\n";
    char err[256], why[128];
    catalog *c = catalog_new();
    assert_int_equal(catalog_load_builtin(c, err, sizeof err), 0);
    assert_int_equal(catalog_load_memory(c, xml, sizeof xml - 1, "t.xml", err, sizeof err), 0);
    const rel_profile *p = rel_profile_find(c, "site");
    assert_non_null(p);
    assert_int_equal(p->n_causes, 2);
    rel_process proc[4];
    rel_spec s = { .profile = "site" };
    assert_int_equal(rel_expand(c, &s, 1, proc, 4, why, sizeof why), 2);
    assert_near(proc[0].mtbf_s, 90 * DAY * 64 / 6, 1e-6, "site GPU mtbf");
    assert_int_equal(proc[0].needs_repair, 1);
    assert_near(proc[0].mttr_s, REL_MTTR_GPU_SWAP_S, 0, "gpu-swap");
    assert_int_equal(proc[1].detection, REL_DETECT_WATCHDOG);
    assert_int_equal(proc[1].needs_repair, 0);
    /* Twice the window, the same counts: every cause half as often. */
    const rel_profile *l = rel_profile_find(c, "llama3-long");
    assert_non_null(l);
    assert_int_equal(l->n_causes, 18);
    assert_near(rel_profile_gpu_mtbf_s(l), 2 * rel_profile_gpu_mtbf_s(rel_profile_find(c, "llama3")), 1e-6, "base");
    /* Not in another catalog: the built-in one knows neither. */
    assert_null(rel_profile_find(cat, "site"));
    assert_int_equal(rel_expand(cat, &s, 1, NULL, 0, why, sizeof why), -1);
    assert_non_null(strstr(why, "unknown failure profile \"site\""));
    catalog_free(c);
}

/* The validation file's columns (tests/validation/failures.csv). */
enum { V_ID, V_SOURCE, V_PROFILE, V_GPUS, V_NODE, V_METRIC, V_EXPECTED, V_TOL, V_SET, V_MECH, V_COLS };

static double median(double *v, int n) {
    for (int i = 1; i < n; i++)                 /* insertion sort: a few dozen rows */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? NAN : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAX_ROWS 128

/* One row: the profile's prediction and its signed error in percent. */
static double replay_row(const catalog *c, const csv_record *r, const char *path) {
    const rel_profile *p = rel_profile_find(cat, r->f[V_PROFILE]);
    const node_spec *n = catalog_node(c, r->f[V_NODE]);
    int m = rel_metric_parse(r->f[V_METRIC]);
    if (!p || !n || m < 0) fail_msg("%s:%ld: unknown profile, node type or metric", path, r->line);
    double got, want = atof(r->f[V_EXPECTED]);
    if (rel_profile_predict(p, n, atoi(r->f[V_GPUS]), (rel_metric)m, &got) < 0 || !(want > 0))
        fail_msg("%s:%ld: no prediction", path, r->line);
    return 100 * (got - want) / want;
}

/* Replay every row; a row whose |error| exceeds its tolerance fails the
 * test. Prints the table and the median |error| of each set. */
static void test_validation_csv(void **state) {
    (void)state;
    const char *path = "tests/validation/failures.csv";
    char err[256];
    infile_err ie;
    csv *r = csv_open(path, "a CSV file", &ie);
    assert_non_null(r);
    catalog *c = catalog_new();
    assert_int_equal(catalog_load_builtin(c, err, sizeof err), 0);
    csv_record rec;
    double abs_err[2][MAX_ROWS];
    int rows[2] = { 0, 0 }, missed = 0;
    assert_int_equal(csv_next(r, &rec, err, sizeof err), 1);             /* the header */
    assert_string_equal(rec.f[V_ID], "id");
    while (csv_next(r, &rec, err, sizeof err) == 1) {
        assert_int_equal(csv_columns(r, &rec, V_COLS, V_COLS, "10 columns", err, sizeof err), 0);
        int set = strcmp(rec.f[V_SET], "heldout") == 0;
        assert_true(set || strcmp(rec.f[V_SET], "calibration") == 0);
        double e = replay_row(c, &rec, path), tol = atof(rec.f[V_TOL]);
        printf("  %-26s %-11s %-15s %+8.1f%% (tolerance %g%%)\n", rec.f[V_ID], rec.f[V_SET], rec.f[V_PROFILE], e, tol);
        if (!(fabs(e) <= tol)) {
            print_error("%s:%ld: %s is off by %+.1f%%, beyond its %g%%\n", path, rec.line, rec.f[V_ID], e, tol);
            missed++;
        }
        assert_true(rows[set] < MAX_ROWS);
        abs_err[set][rows[set]++] = fabs(e);
    }
    csv_close(r);
    catalog_free(c);
    printf("failures.csv: calibration %d rows, median |error| %.1f%%; held out %d rows, median |error| %.1f%%\n",
           rows[0], median(abs_err[0], rows[0]), rows[1], median(abs_err[1], rows[1]));
    assert_true(rows[0] >= 5 && rows[1] >= 5);
    assert_int_equal(missed, 0);
}

/* A job's figures from a profile by hand: RSC-1, 6.50 per 1000 node-days,
 * 2,048 nodes -> 24 / (2048 · 0.0065) h. */
static void test_predict(void **state) {
    (void)state;
    char err[256];
    catalog *c = catalog_new();
    assert_int_equal(catalog_load_builtin(c, err, sizeof err), 0);
    const node_spec *n = catalog_node(c, "dgx-a100-80gb");
    double h, r;
    assert_int_equal(rel_profile_predict(rel_profile_find(cat, "rsc1-a100"), n, 16384, REL_METRIC_MTTI_H, &h), 0);
    assert_near(h, 24 / (2048 * 0.0065), 1e-9, "rsc1 16k mtti");
    assert_int_equal(rel_profile_predict(rel_profile_find(cat, "rsc1-a100"), n, 8, REL_METRIC_PER_1000_NODE_DAYS, &r), 0);
    assert_near(r, 6.50, 1e-9, "rsc1 rate");
    assert_int_equal(rel_profile_predict(rel_profile_find(cat, "llama3"), n, 0, REL_METRIC_MTTI_H, &h), -1);
    assert_int_equal(rel_metric_parse("mtti_h"), REL_METRIC_MTTI_H);
    assert_int_equal(rel_metric_parse("mtbf"), -1);
    catalog_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weibull_residual),
        cmocka_unit_test(test_profile_table),
        cmocka_unit_test(test_llama3_rate),
        cmocka_unit_test(test_cause_shares),
        cmocka_unit_test(test_derived_figures),
        cmocka_unit_test(test_detection_repair),
        cmocka_unit_test(test_profile_filter_scale),
        cmocka_unit_test(test_single_spec),
        cmocka_unit_test(test_weibull),
        cmocka_unit_test(test_weibull_tiny_shape),
        cmocka_unit_test(test_gsl_error_does_not_abort),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_fleet_profiles),
        cmocka_unit_test(test_user_profile),
        cmocka_unit_test(test_validation_csv),
        cmocka_unit_test(test_predict),
    };
    return cmocka_run_group_tests(tests, load_catalog, free_catalog);
}
