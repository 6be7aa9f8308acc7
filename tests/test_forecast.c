/*
 * test_forecast: the statistics of a forecast (plan/forecast_stats.c) and
 * the forecast itself on a scenario whose answers are known by hand
 * (plan/forecast.c, forecast_run.c, forecast_json.c).
 *
 * Percentiles are the inverse of the empirical distribution (Hyndman and
 * Fan 1996, definition 1): of n replicas the pNN is the ceil(n NN/100)-th
 * smallest, checked against that formula written out naively on random
 * samples; a replica where the job did not start (INFINITY) makes the
 * percentile null exactly when fewer than NN% of the replicas started it.
 *
 * The hand-made scenario: one 8-GPU node busy with an 8-GPU job for 2 h;
 * waiting behind it (first come, first served) an 8-GPU job of 1 h, one of
 * 4 days and one of 1 h, all submitted at t = 0, and one more submitted
 * later. No failures: every replica is the same, so "next" starts at
 * exactly 7200 s, "long" at 10800 s, "stuck" not within the 3-day horizon
 * (the queue never drains), and the GPUs are busy all day on days 1 and 2.
 * With a second node, "next" starts at once and the queue drains at 2 h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/forecast.h"
#include "plan/forecast_stats.h"

static void test_percentile_nearest_rank(void **state) {
    (void)state;
    double v[20];
    for (int i = 0; i < 20; i++) v[i] = 20 - i;              /* 20..1, unsorted */
    assert_true(forecast_stats_percentile(v, 20, 10) == 2);
    assert_true(forecast_stats_percentile(v, 20, 50) == 10);
    assert_true(forecast_stats_percentile(v, 20, 90) == 18);
    assert_true(forecast_stats_percentile(v, 20, 100) == 20);
    assert_true(v[0] == 20);                                  /* not reordered */
    /* 18 of 20 started: p90 is the 18th, still a value; 17 of 20: null */
    v[0] = v[1] = INFINITY;
    assert_true(forecast_stats_percentile(v, 20, 90) == 18);
    v[2] = INFINITY;
    assert_true(isnan(forecast_stats_percentile(v, 20, 90)));
    assert_true(forecast_stats_percentile(v, 20, 50) == 10);
    assert_true(fabs(forecast_stats_share(v, 20) - 0.85) < 1e-12);
    assert_true(isnan(forecast_stats_percentile(v, 0, 50)));
    assert_true(isnan(forecast_stats_percentile(v, 20, 0)));
    double one = INFINITY;
    assert_true(isnan(forecast_stats_percentile(&one, 1, 10)));
    assert_true(forecast_stats_share(&one, 1) == 0);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Against the definition written out: the smallest x with at least p% of
 * the sample at or below it. */
static void test_percentile_against_definition(void **state) {
    (void)state;
    srand(7);
    for (int trial = 0; trial < 500; trial++) {
        int n = 1 + rand() % 40;
        double v[40], s[40];
        for (int i = 0; i < n; i++) v[i] = rand() % 5 == 0 ? INFINITY : rand() % 1000;
        memcpy(s, v, sizeof v);
        qsort(s, (size_t)n, sizeof *s, cmp);
        double p = 1 + rand() % 100;
        double want = NAN;
        for (int i = 0; i < n; i++)
            if ((i + 1) * 100.0 >= p * n) {
                want = isinf(s[i]) ? NAN : s[i];
                break;
            }
        double got = forecast_stats_percentile(v, n, p);
        assert_true((isnan(want) && isnan(got)) || got == want);
    }
}

static void test_drain(void **state) {
    (void)state;
    double s[4] = { 100, 50, INFINITY, 300 };
    unsigned char c[4] = { 1, 1, 0, 0 };
    assert_true(forecast_stats_drain(s, c, 4) == 100);        /* the jobs not waiting do not count */
    c[3] = 1;
    assert_true(forecast_stats_drain(s, c, 4) == 300);
    c[2] = 1;
    assert_true(isinf(forecast_stats_drain(s, c, 4)));       /* one never started: never drained */
    memset(c, 0, sizeof c);
    assert_true(forecast_stats_drain(s, c, 4) == 0);          /* nothing waiting: drained now */
}

static void test_days(void **state) {
    (void)state;
    forecast_days d;
    assert_int_equal(forecast_days_init(&d, 3, 100), 0);
    forecast_days_level(&d, 0, 8);
    forecast_days_level(&d, 150, 4);                          /* 8 GPUs for 150 s, then 4 */
    forecast_days_close(&d, 175);                             /* known up to 175 s */
    assert_true(fabs(forecast_days_util(&d, 0, 8) - 1.0) < 1e-12);
    /* day 2: 8 x 50 + 4 x 25 GPU-s over the 75 s known, of 8 GPUs */
    assert_true(fabs(forecast_days_util(&d, 1, 8) - (400.0 + 100.0) / (8 * 75.0)) < 1e-12);
    assert_true(isnan(forecast_days_util(&d, 2, 8)));       /* nothing of day 3 known */
    assert_true(isnan(forecast_days_util(&d, 3, 8)));
    forecast_days_free(&d);
}

/* ---- a forecast on the hand-made scenario ------------------------------------ */

static char dir[64];

static void write_file(const char *name, const char *text) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_forecast.XXXXXX");
    if (!mkdtemp(dir)) return -1;
    write_file("s.xml", "<scenario name=\"fc\" seed=\"3\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
                        "<workload><jobs name=\"busy\" count=\"1\" gpus=\"8\" duration=\"2h\" arrivals=\"fixed\"/>"
                        "<trace href=\"j.csv\"/></workload></scenario>\n");
    write_file("j.csv", "submit,gpus,duration,name\n0,8,1h,next\n0,8,4d,long\n0,8,1h,stuck\n3600,8,1h,later\n");
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void run_forecast(forecast *f, int jobs) {
    char path[128];
    snprintf(path, sizeof path, "%s/s.xml", dir);
    assert_int_equal(forecast_init(f, path), PLAN_OK);
    f->replicas = 5;
    f->days = 2;
    f->horizon_s = 3 * 86400;
    assert_int_equal(forecast_add_vary(f, "cluster/nodes/@count=2"), PLAN_OK);
    assert_int_equal(forecast_prepare(f), PLAN_OK);
    assert_int_equal(forecast_run(f, jobs), PLAN_OK);
}

static int job_index(const forecast *f, int v, const char *name) {
    for (int i = 0; i < f->v[v].n_jobs; i++)
        if (!strcmp(f->v[v].jobs[i].name, name)) return i;
    fail_msg("no job %s", name);
    return -1;
}

static void test_forecast_by_hand(void **state) {
    (void)state;
    forecast f;
    run_forecast(&f, 1);
    assert_int_equal(f.n_variants, 2);
    assert_string_equal(f.v[0].label, "baseline");
    assert_string_equal(f.v[1].label, "cluster/nodes/@count=2");
    int next = job_index(&f, 0, "next"), lng = job_index(&f, 0, "long"), stuck = job_index(&f, 0, "stuck");
    int later = job_index(&f, 0, "later");
    assert_true(forecast_start(&f, 0, next, 10) == 7200 && forecast_start(&f, 0, next, 90) == 7200);
    assert_true(forecast_start(&f, 0, lng, 50) == 10800);
    assert_true(forecast_started_share(&f, 0, next) == 1);
    assert_true(isnan(forecast_start(&f, 0, stuck, 10)) && forecast_started_share(&f, 0, stuck) == 0);
    assert_string_equal(f.v[0].jobs[later].state, "later");
    assert_int_equal(f.v[0].jobs[later].waiting, 0);
    assert_string_equal(f.v[0].jobs[stuck].state, "pending");
    assert_true(isnan(forecast_drain(&f, 0, 10)));              /* stuck never starts */
    assert_true(fabs(forecast_util(&f, 0, 0) - 1) < 1e-9 && fabs(forecast_util(&f, 0, 1) - 1) < 1e-9);
    /* two nodes: "next" starts at once, "stuck" when "busy" ends, and
     * then the queue of t = 0 is drained; half the GPUs idle after 2 h
     * until "later" starts at 3 h (1 h), then only "long": 8 of 16 */
    assert_true(forecast_start(&f, 1, job_index(&f, 1, "next"), 90) == 0);
    assert_true(forecast_drain(&f, 1, 10) == 7200 && forecast_drain(&f, 1, 90) == 7200);
    assert_true(forecast_util(&f, 1, 1) == 0.5);
    forecast_free(&f);
}

static void test_forecast_workers_agree(void **state) {
    (void)state;
    forecast a, b;
    run_forecast(&a, 1);
    run_forecast(&b, 3);
    json *ja = json_new(), *jb = json_new();
    forecast_json(&a, ja);
    forecast_json(&b, jb);
    assert_string_equal(json_text(ja, NULL), json_text(jb, NULL));
    json_free(ja);
    json_free(jb);
    forecast_free(&a);
    forecast_free(&b);
}

static void test_bad_what_ifs(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/s.xml", dir);
    forecast f;
    assert_int_equal(forecast_init(&f, path), PLAN_OK);
    assert_int_equal(forecast_add_set(&f, "jobs[next].priority=x"), PLAN_BAD_INPUT);
    assert_int_equal(forecast_add_set(&f, "jobs[next].prio=1"), PLAN_BAD_INPUT);
    assert_int_equal(forecast_add_vary(&f, "jobs[nobody].priority=1,2"), PLAN_OK);
    assert_int_equal(forecast_prepare(&f), PLAN_BAD_INPUT);      /* no job is named nobody */
    forecast_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile_nearest_rank),
        cmocka_unit_test(test_percentile_against_definition),
        cmocka_unit_test(test_drain),
        cmocka_unit_test(test_days),
        cmocka_unit_test(test_forecast_by_hand),
        cmocka_unit_test(test_forecast_workers_agree),
        cmocka_unit_test(test_bad_what_ifs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
