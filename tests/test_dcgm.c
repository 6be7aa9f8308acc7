/*
 * test_dcgm: DCGM-exporter telemetry (scenarios/dcgm.c) from the samples
 * in tests/failhist/: a Prometheus query_range answer (two hosts, XIDs
 * 79, 13 and 48, a double-bit counter that grows, is reset and grows, a
 * row remap failure; GPU_UTIL, POWER_USAGE and an SM clock series that is
 * skipped) and one scrape in the text exposition format (two hosts of 8
 * GPUs, an XID 95 with a timestamp). The expected events are read off the
 * files by hand; malformed files are refused naming file and line.
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

#include "scenarios/dcgm.h"

#define T0 1793491200.0                /* 2026-11-01T00:00:00Z, the range's start */
#define STEP (6 * 3600.0)

static void test_query_range(void **state) {
    (void)state;
    char err[512] = "";
    dcgm_data d;
    memset(&d, 0, sizeof d);
    if (dcgm_read_prom_json(&d, "tests/failhist/dcgm-range.json", err, sizeof err) < 0) fail_msg("%s", err);
    assert_int_equal(d.skipped_series, 1);               /* the SM clock */
    assert_string_equal(d.model, "NVIDIA H100 80GB HBM3");
    dcgm_fleet fl;
    assert_int_equal(dcgm_fleet_of(&d, &fl), 0);
    assert_int_equal(fl.hosts, 2);
    assert_int_equal(fl.gpus_per_host, 4);               /* GPUs 0 and 3 reported: index 3 means 4 at least */
    assert_true(fl.t_first_s == T0 && fl.t_last_s == T0 + 8 * STEP);
    assert_true(fl.util_mean_pct > 70 && fl.util_mean_pct < 100);
    dcgm_event *ev = NULL;
    int n = dcgm_events(&d, &ev);
    assert_int_equal(n, 6);
    /* sorted by metric, host, GPU, time: XIDs first */
    assert_true(ev[0].metric == DCGM_XID && ev[0].xid == 79 && !strcmp(ev[0].host, "gpu01") && ev[0].gpu == 3);
    assert_true(ev[0].t_s == T0 + 3 * STEP);
    assert_true(ev[1].xid == 13 && ev[1].t_s == T0 + STEP && !strcmp(ev[1].host, "gpu02"));
    assert_true(ev[2].xid == 48 && ev[2].t_s == T0 + 4 * STEP);
    assert_true(ev[3].metric == DCGM_ECC_DBE && ev[3].count == 2 && ev[3].t_s == T0 + 4 * STEP);
    assert_true(ev[4].metric == DCGM_ECC_DBE && ev[4].count == 1 && ev[4].t_s == T0 + 8 * STEP);   /* after a reset */
    assert_true(ev[5].metric == DCGM_REMAP_FAILURE && ev[5].t_s == T0 + 6 * STEP);
    free(ev);
    dcgm_free(&d);
}

static void test_scrape(void **state) {
    (void)state;
    char err[512] = "";
    dcgm_data d;
    memset(&d, 0, sizeof d);
    if (dcgm_read_text(&d, "tests/failhist/dcgm-scrape.txt", 1795685400, err, sizeof err) < 0) fail_msg("%s", err);
    assert_int_equal(d.skipped_series, 16);
    assert_int_equal(d.n, 64);
    dcgm_fleet fl;
    assert_int_equal(dcgm_fleet_of(&d, &fl), 0);
    assert_int_equal(fl.hosts, 2);
    assert_int_equal(fl.gpus_per_host, 8);
    assert_true(fabs(fl.power_mean_w - (15 * 684.5 + 88.125) / 16) < 1e-9);
    dcgm_event *ev = NULL;
    int n = dcgm_events(&d, &ev);
    assert_int_equal(n, 1);
    assert_true(ev[0].xid == 95 && !strcmp(ev[0].host, "gpu04") && ev[0].gpu == 5 && ev[0].t_s == 1793880000);
    free(ev);
    dcgm_free(&d);
}

/* path is refused with exactly want, and d keeps what it had. */
static void refused(int text, const char *path, const char *want) {
    char err[512] = "";
    dcgm_data d;
    memset(&d, 0, sizeof d);
    int rc = text ? dcgm_read_text(&d, path, 0, err, sizeof err) : dcgm_read_prom_json(&d, path, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_string_equal(err, want);
    assert_int_equal(d.n, 0);
    dcgm_free(&d);
}

static void test_malformed(void **state) {
    (void)state;
    refused(0, "tests/failhist/dcgm-bad-status.json",
            "tests/failhist/dcgm-bad-status.json:1: status: expected \"success\" (the query's error: invalid "
            "parameter \"query\": 1:1: parse error: unexpected end of input)");
    refused(0, "tests/failhist/dcgm-bad-pair.json",
            "tests/failhist/dcgm-bad-pair.json:4: data.result[0].values[1]: expected [unix_time, \"value\"] (a "
            "number and a numeric string)");
    refused(1, "tests/failhist/dcgm-bad-label.txt",
            "tests/failhist/dcgm-bad-label.txt:3: expected a quoted label value (Prometheus text format: "
            "name{label=\"value\"} value [ms])");
    refused(0, "tests/failhist/nope.json", "tests/failhist/nope.json:0: cannot open: No such file or directory");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_range),
        cmocka_unit_test(test_scrape),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
