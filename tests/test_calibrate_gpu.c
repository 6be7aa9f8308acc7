/*
 * test_calibrate_gpu: the GPU groups of calibrate (models/calibrate_gpu.h)
 * on the measurements of one H200 (tests/validation/measured/
 * h200-cuda-2026-11-25.json, the cuda backend on scenarios/twin-h200.xml;
 * its bf16/fp16/fp32/tf32 GEMM operands were zeros, so these checks are of
 * the mechanism, not of the H200's physics).
 *
 * The fixture goes the way a real session's measurements go: imported into
 * a results database (store_import_results, what calibrate --from-json
 * does), read back (store_measurements), fitted. Checked:
 * - routing: every cuda row lands in a gpu.* group, never a host group (the
 *   bug this fixes: an 8192^3 SGEMM fitted as the host core's gemm.fp32);
 *   a cpu row of the same shape lands in the host's; nccl rows in none;
 * - the held-out sizes (every other size of each group, never fitted) are
 *   predicted with a median |error| of at most 10% (the project's
 *   validation target), and better than the catalog's uncalibrated values
 *   predict the same points;
 * - the device string names the catalog GPU (form factor, memory), and a
 *   device the catalog lacks is an error, not a guess;
 * - a profile's <gpu-profile> is written and read back value for value,
 *   and applying it moves the precision it names and no other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/catalogfix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/calibrate.h"
#include "models/calibrate_gpu.h"
#include "models/gpu.h"
#include "reports/store.h"
#include "scenarios/infile.h"
#include "scenarios/profile.h"

#define FIXTURE "tests/validation/measured/h200-cuda-2026-11-25-random.json"

/* The fixture's measurements as fit points, through a database. */
static cal_point *fixture_points(int *n) {
    char err[1024], db[] = "/tmp/ct-calgpu-XXXXXX";
    int fd = mkstemp(db);
    assert_true(fd >= 0);
    close(fd);
    unlink(db);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(infile_load(FIXTURE, INFILE_CATALOG_MAX_BYTES, "fixture", &text, &len, err, sizeof err), 0);
    store *st = NULL;
    assert_int_equal(store_open(db, STORE_WRITE, &st, err, sizeof err), STORE_OK);
    assert_int_equal(store_import_results(st, text, FIXTURE, NULL, err, sizeof err), STORE_OK);
    store_measurement *ms = NULL;
    assert_int_equal(store_measurements(st, NULL, &ms, n, err, sizeof err), STORE_OK);
    store_close(st);
    unlink(db);
    free(text);
    assert_int_equal(*n, 122);                  /* 128 cases, 6 fp8 ones not measured */
    cal_point *pts = calloc((size_t)*n, sizeof *pts);
    for (int i = 0; i < *n; i++) {
        pts[i].c = ms[i].c;
        pts[i].time_s = ms[i].time_s;
        snprintf(pts[i].backend, sizeof pts[i].backend, "%s", ms[i].backend);
        assert_string_equal(ms[i].devices, "NVIDIA H200 x1 (measuring on GPU 0)");
    }
    free(ms);
    return pts;
}

static void h200_target(cal_target *t) {
    memset(t, 0, sizeof *t);
    host_profile_default(&t->host);
    t->gpu = *catalog_gpu(cat, "H200-SXM-141GB");
    t->node = *catalog_node(cat, "hgx-h200");
    t->has_gpu = 1;
}

static void test_routing(void **state) {
    (void)state;
    mb_case g = { .kind = MBC_GEMM, .m = 8192, .n = 8192, .k = 8192, .precision = PREC_FP32 };
    assert_string_equal(calibrate_group_of(&g, "cuda"), "gpu.gemm.fp32");
    assert_string_equal(calibrate_group_of(&g, "cpu"), "gemm.fp32");
    mb_case d2d = { .kind = MBC_COPY, .copy = COPY_D2D, .size_bytes = 1 << 20 };
    assert_string_equal(calibrate_group_of(&d2d, "cuda"), "gpu.copy");
    assert_null(calibrate_group_of(&d2d, "cpu"));
    mb_case ar = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 8, .size_bytes = 1 << 20 };
    assert_null(calibrate_group_of(&ar, "nccl"));
    assert_string_equal(calibrate_group_of(&ar, "mpi"), "coll.allreduce");
}

/* Median |error| in % of the held-out points, predicted by t. */
static double held_median(const cal_point *pts, const cal_residual *res, int n, const cal_target *t) {
    double *e = calloc((size_t)n, sizeof *e);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (res[i].held) e[k++] = fabs(calibrate_gpu_predict_s(t, &pts[i].c) / pts[i].time_s - 1) * 100;
    for (int i = 1; i < k; i++)             /* insertion sort: a few dozen */
        for (int j = i; j > 0 && e[j] < e[j - 1]; j--) {
            double x = e[j];
            e[j] = e[j - 1], e[j - 1] = x;
        }
    double m = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
    free(e);
    return k > 0 ? m : NAN;
}

static void test_fixture_fit(void **state) {
    (void)state;
    int n;
    cal_point *pts = fixture_points(&n);
    cal_target t, before;
    h200_target(&t);
    before = t;
    cal_report rep;
    cal_residual *res = calloc((size_t)n, sizeof *res);
    char err[256];
    int ng = calibrate_fit(pts, n, 1, &t, NULL, &rep, res, err, sizeof err);
    assert_true(ng >= 4);
    for (int g = 0; g < rep.n_groups; g++) assert_memory_equal(rep.group[g].name, "gpu.", 4);
    int held = 0;
    for (int i = 0; i < n; i++) {
        assert_true(res[i].group >= 0);             /* every cuda row is fitted or held out by a GPU group */
        assert_memory_equal(rep.group[res[i].group].name, "gpu.", 4);
        held += res[i].held;
    }
    assert_true(held >= n / 3);
    double after_pct = held_median(pts, res, n, &t), before_pct = held_median(pts, res, n, &before);
    print_message("held out: %d points, median |error| %.1f%% calibrated, %.1f%% catalog\n", held, after_pct,
                  before_pct);
    assert_true(after_pct <= 10);
    assert_true(after_pct < before_pct);
    assert_memory_equal(&t.host, &before.host, sizeof t.host);     /* no GPU row moved the host */
    free(res);
    free(pts);
}

static void test_device_names(void **state) {
    (void)state;
    char name[64], err[512];
    static const char *const cases[][2] = {
        { "NVIDIA H200 x1 (measuring on GPU 0)", "H200-SXM-141GB" },
        { "NVIDIA H200 NVL x2", "H200-NVL-141GB" },
        { "NVIDIA H100 80GB HBM3 x8", "H100-SXM5-80GB" },
        { "NVIDIA H100 PCIe x1", "H100-PCIe-80GB" },
        { "AMD Instinct MI300X x8", "MI300X-192GB" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(calibrate_gpu_of_device(cat, cases[i][0], name, sizeof name, err, sizeof err), 0);
        assert_string_equal(name, cases[i][1]);
    }
    assert_int_equal(calibrate_gpu_of_device(cat, "Stand-in GPU x8", name, sizeof name, err, sizeof err), -1);
    assert_non_null(strstr(err, "--gpu"));
}

static void test_profile_round_trip(void **state) {
    (void)state;
    gpu_profile g = { .gpu = "H200-SXM-141GB" }, back;
    assert_int_equal(gpu_profile_set(&g, "gpu.gemm.bf16.eff", 0.81, 0.02), 0);
    assert_int_equal(gpu_profile_set(&g, "gpu.pcie.bw", 5.5e10, NAN), 0);
    assert_int_equal(gpu_profile_set(&g, "gpu.gemm.bf16.peak", 1, 0), -1);
    host_profile h;
    host_profile_default(&h);
    char path[] = "/tmp/ct-gpuprof-XXXXXX", err[512];
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    assert_int_equal(profile_write(f, &h, NULL, &g, "test", err, sizeof err), 0);
    fclose(f);
    assert_int_equal(profile_load_gpu(path, &h, &back, err, sizeof err), 0);
    unlink(path);
    assert_string_equal(back.gpu, "H200-SXM-141GB");
    assert_int_equal(back.n, 2);
    assert_true(back.value[0] == 0.81 && back.stderr_[0] == 0.02 && isnan(back.stderr_[1]));
    gpu_spec s = *catalog_gpu(cat, "H200-SXM-141GB");
    node_spec nd = *catalog_node(cat, "hgx-h200");
    double fp8 = gpu_gemm_eff(&s, PREC_FP8, 4096, 4096, 4096);
    gpu_profile_apply(&back, &s, &nd);
    assert_true(fabs(gpu_gemm_eff(&s, PREC_BF16, 1e9, 1e9, 1e9) - 0.81) < 1e-3);   /* the curve's top */
    assert_true(gpu_gemm_eff(&s, PREC_FP8, 4096, 4096, 4096) == fp8);            /* another precision: as it was */
    assert_true(nd.pcie_bw_bytes_per_s == 5.5e10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routing),
        cmocka_unit_test(test_fixture_fit),
        cmocka_unit_test(test_device_names),
        cmocka_unit_test(test_profile_round_trip),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
