/*
 * test_gpubackends: the cuda and nccl backends (hw/cuda.c, hw/nccl.c,
 * hw/cudalib.c) against stand-in vendor libraries built only for tests
 * (tests/standin/NAME.c built as build/tests/libstandin-NAME.so), selected with the
 * CT_*_LIB environment variables. The stand-ins run on host memory: what
 * is checked is the backends' logic, not GPU speed.
 *
 *   - Missing pieces are named: no driver (the driver library cannot be
 *     loaded), no device (the driver reports 0 GPUs), no libnccl.
 *   - cuda: d2d/h2d/d2h copies and an fp32 GEMM measured through events,
 *     with the environment (device names, versions) recorded; a GEMM type
 *     cuBLAS refuses is a failure with the call named; storage, host
 *     copies and collectives are unsupported with a reason.
 *   - nccl: the six collectives over the stand-in's two GPUs; a case with
 *     more ranks than GPUs is unsupported; non-collectives are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/backend.h"

static void standins(void) {
    setenv("CT_CUDA_DRIVER_LIB", "build/tests/libstandin-cuda.so", 1);
    setenv("CT_CUDART_LIB", "build/tests/libstandin-cudart.so", 1);
    setenv("CT_CUBLAS_LIB", "build/tests/libstandin-cublas.so", 1);
    setenv("CT_CUBLASLT_LIB", "build/tests/libstandin-cublaslt.so", 1);
    setenv("CT_NCCL_LIB", "build/tests/libstandin-nccl.so", 1);
    setenv("CT_STANDIN_GPUS", "2", 1);
    unsetenv("CT_STANDIN_FAIL_MALLOC");
}

static hw_opts quick(void) {
    hw_opts o;
    hw_opts_default(&o);
    o.reps = 3;
    o.warmup = 1;
    o.min_rep_s = 1e-4;
    o.budget_s = 0.02;
    return o;
}

static void test_missing(void **state) {
    (void)state;
    standins();
    hw_opts o = quick();
    hw_backend *b = NULL;
    char err[512];
    setenv("CT_CUDA_DRIVER_LIB", "build/tests/no-such-libcuda.so", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), -1);
    assert_null(b);
    assert_non_null(strstr(err, "no NVIDIA driver"));
    assert_int_equal(hw_open("nccl", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no NVIDIA driver"));
    standins();
    setenv("CT_STANDIN_GPUS", "0", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no CUDA device"));
    standins();
    setenv("CT_NCCL_LIB", "build/tests/no-such-libnccl.so", 1);
    assert_int_equal(hw_open("nccl", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no libnccl"));
    standins();
    setenv("CT_CUDART_LIB", "build/tests/no-such-libcudart.so", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no CUDA runtime"));
    standins();
}

static void check(const mb_measurement *m) {
    assert_true(m->reps >= 3 && m->min_s > 0);
    assert_true(m->min_s <= m->time_s && m->time_s <= m->max_s);
}

static void test_cuda(void **state) {
    (void)state;
    standins();
    hw_opts o = quick();
    hw_backend *b = NULL;
    char err[512], why[256];
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), 0);
    const hw_env *e = hw_environment(b);
    assert_string_equal(e->backend, "cuda");
    assert_non_null(strstr(e->devices, "Stand-in GPU 0 (not a GPU) x2"));
    assert_non_null(strstr(e->libraries, "CUDA runtime 13.0"));
    mb_measurement m;
    for (int k = COPY_D2D; k <= COPY_D2H; k++) {
        mb_case c = { .kind = MBC_COPY, .copy = (copy_kind)k, .size_bytes = 1 << 20 };
        assert_int_equal(hw_measure(b, &c, &m, why, sizeof why), HW_OK);
        check(&m);
        assert_true(m.algbw_bytes_per_s > 0);
    }
    mb_case g = { .kind = MBC_GEMM, .m = 32, .n = 16, .k = 8, .precision = PREC_FP32 };
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_OK);
    check(&m);
    assert_true(m.tflops > 0);
    g.precision = PREC_FP64;
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_OK);
    g.precision = PREC_BF16;           /* the stand-in's cuBLAS refuses bf16 */
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_FAILED);
    assert_non_null(strstr(why, "cublasGemmEx (bf16"));
    mb_case h = { .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = 4096 };
    assert_int_equal(hw_measure(b, &h, &m, why, sizeof why), HW_UNSUPPORTED);
    mb_case s = { .kind = MBC_STORAGE, .size_bytes = 4096, .files = 1 };
    assert_int_equal(hw_measure(b, &s, &m, why, sizeof why), HW_UNSUPPORTED);
    mb_case a = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = 4096 };
    assert_int_equal(hw_measure(b, &a, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "nccl"));
    /* Device memory that cannot be had is a failure, not a crash. */
    setenv("CT_STANDIN_FAIL_MALLOC", "1", 1);
    mb_case d = { .kind = MBC_COPY, .copy = COPY_D2D, .size_bytes = 1 << 20 };
    assert_int_equal(hw_measure(b, &d, &m, why, sizeof why), HW_FAILED);
    assert_non_null(strstr(why, "cannot allocate"));
    unsetenv("CT_STANDIN_FAIL_MALLOC");
    hw_close(b);
}

static void test_nccl(void **state) {
    (void)state;
    standins();
    hw_opts o = quick();
    hw_backend *b = NULL;
    char err[512], why[256];
    assert_int_equal(hw_open("nccl", &o, &b, err, sizeof err), 0);
    const hw_env *e = hw_environment(b);
    assert_int_equal(e->ranks, 2);
    assert_non_null(strstr(e->libraries, "NCCL 2.23.4"));
    mb_measurement m;
    for (int op = 0; op < COLL_OP_COUNT; op++) {
        mb_case c = { .kind = MBC_COLLECTIVE, .op = (coll_op)op, .ranks = 2, .size_bytes = 65536 };
        int rc = hw_measure(b, &c, &m, why, sizeof why);
        if (rc != HW_OK) fail_msg("%s: %s", coll_op_name((coll_op)op), why);
        check(&m);
        assert_true(m.busbw_bytes_per_s > 0);
    }
    mb_case big = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 8, .size_bytes = 65536 };
    assert_int_equal(hw_measure(b, &big, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "2 GPU(s)"));
    mb_case g = { .kind = MBC_GEMM, .m = 8, .n = 8, .k = 8, .precision = PREC_FP32 };
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_UNSUPPORTED);
    hw_close(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_cuda),
        cmocka_unit_test(test_nccl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
