/*
 * test_cudafp8: fp8 GEMM on the cuda backend (hw/cuda.c through cuBLASLt,
 * hw/cudalib.c) against the stand-in libraries built only for tests
 * (build/tests/libstandin-{cuda,cudart,cublas,cublaslt}.so, selected with
 * the CT_*_LIB environment variables; they run on host memory).
 *
 *   - The cuBLASLt stand-in's own numbers, called directly: E4M3 decoding
 *     (fractions, a subnormal, negatives, the largest), the A scale, bf16
 *     rounding; only the "TN" layout and multiples of 16 have an algorithm;
 *     shapes that disagree are invalid.
 *   - The backend: fp8 GEMMs on random E4M3 operands measured (hw/cuda.c
 *     checks 16 entries of the result against host sums), and failed when
 *     the library reads A in the wrong layout; a note for compute capability < 8.9 (8.9 is
 *     enough), for no cuBLASLt (the other GEMMs still measured) and for
 *     dimensions that are not multiples of 16.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/backend.h"
#include "tests/standins.h"

static void check(const mb_measurement *m) {
    assert_true(m->reps >= 3 && m->min_s > 0);
    assert_true(m->min_s <= m->time_s && m->time_s <= m->max_s);
}

/* The cuBLASLt stand-in itself, called directly: a 16 x 32 x 16 TN matmul
 * of E4M3 values (fractions, a subnormal, negatives, the largest) against
 * sums computed here from a decoding table written out by hand. */
static void test_cublaslt_standin(void **state) {
    (void)state;
    void *lib = dlopen("build/tests/libstandin-cublaslt.so", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    int (*create)(void **), (*destroy)(void *), (*desc_create)(void **, int, int), (*desc_destroy)(void *),
        (*desc_set)(void *, int, const void *, size_t), (*layout)(void **, int, uint64_t, uint64_t, int64_t),
        (*layout_destroy)(void *), (*pref_create)(void **), (*pref_destroy)(void *),
        (*heur)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *),
        (*mm)(void *, void *, const void *, const void *, void *, const void *, void *, const void *, const void *,
              void *, void *, void *, const void *, void *, size_t, void *);
    void *f;
#define LOOK(var, name) (f = dlsym(lib, name), assert_non_null(f), memcpy(&var, &f, sizeof f))
    LOOK(create, "cublasLtCreate");
    LOOK(destroy, "cublasLtDestroy");
    LOOK(desc_create, "cublasLtMatmulDescCreate");
    LOOK(desc_destroy, "cublasLtMatmulDescDestroy");
    LOOK(desc_set, "cublasLtMatmulDescSetAttribute");
    LOOK(layout, "cublasLtMatrixLayoutCreate");
    LOOK(layout_destroy, "cublasLtMatrixLayoutDestroy");
    LOOK(pref_create, "cublasLtMatmulPreferenceCreate");
    LOOK(pref_destroy, "cublasLtMatmulPreferenceDestroy");
    LOOK(heur, "cublasLtMatmulAlgoGetHeuristic");
    LOOK(mm, "cublasLtMatmul");
#undef LOOK
    /* E4M3 bytes and their values (OCP FP8 E4M3: bias 7, no infinities) */
    static const unsigned char byte[8] = { 0x38, 0x39, 0xB0, 0x01, 0x7E, 0x00, 0x44, 0xC2 };
    static const double val[8] = { 1.0, 1.125, -0.5, 0.001953125, 448.0, 0.0, 3.0, -2.5 };
    enum { M = 16, N = 32, K = 16 };
    unsigned char A[K * M], B[K * N];    /* A stored k x m (TN), B k x n */
    int ai[K * M], bi[K * N];
    for (int i = 0; i < M; i++)
        for (int p = 0; p < K; p++) {
            ai[p + i * K] = (i * 5 + p * 3 + i * p) % 8;
            A[p + i * K] = byte[ai[p + i * K]];
        }
    for (int j = 0; j < N; j++)
        for (int p = 0; p < K; p++) {
            bi[p + j * K] = (j * 7 + p + 1) % 5 ? (j + 2 * p) % 4 : 2;
            B[p + j * K] = byte[bi[p + j * K]];
        }
    uint16_t D[M * N];
    float half = 0.5f;                   /* A's scale: halves every product */
    const void *sp = &half;
    int ta = 1, tb = 0;
    void *h, *desc, *la, *lb, *lc, *pref;
    assert_int_equal(create(&h), 0);
    assert_int_equal(desc_create(&desc, 68, 0), 0);
    assert_int_equal(desc_set(desc, 3, &ta, sizeof ta), 0);
    assert_int_equal(desc_set(desc, 4, &tb, sizeof tb), 0);
    assert_int_equal(desc_set(desc, 17, &sp, sizeof sp), 0);
    assert_int_equal(layout(&la, 28, K, M, K), 0);
    assert_int_equal(layout(&lb, 28, K, N, K), 0);
    assert_int_equal(layout(&lc, 14, M, N, M), 0);
    assert_int_equal(pref_create(&pref), 0);
    unsigned char res[96];               /* sizeof(cublasLtMatmulHeuristicResult_t) */
    int got = 0;
    assert_int_equal(heur(h, desc, la, lb, lc, lc, pref, 1, res, &got), 0);
    assert_int_equal(got, 1);
    float one = 1, zero = 0;
    assert_int_equal(mm(h, desc, &one, A, la, B, lb, &zero, D, lc, D, lc, res, NULL, 0, NULL), 0);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double want = 0;
            for (int p = 0; p < K; p++) want += 0.5 * val[ai[p + i * K]] * val[bi[p + j * K]];
            uint32_t u = (uint32_t)D[i + j * M] << 16;
            float gotv;
            memcpy(&gotv, &u, sizeof gotv);
            if (!(fabs(gotv - want) <= fabs(want) / 256)) fail_msg("D(%d,%d) = %g, want %g", i, j, (double)gotv, want);
        }
    /* NN (A not transposed) and a dimension not a multiple of 16: no fp8 algorithm */
    ta = 0;
    assert_int_equal(desc_set(desc, 3, &ta, sizeof ta), 0);
    void *la2;
    assert_int_equal(layout(&la2, 28, M, K, M), 0);
    assert_int_equal(heur(h, desc, la2, lb, lc, lc, pref, 1, res, &got), 15);
    assert_int_equal(got, 0);
    layout_destroy(la2);
    ta = 1;
    assert_int_equal(desc_set(desc, 3, &ta, sizeof ta), 0);
    void *lb2, *lc2;
    assert_int_equal(layout(&lb2, 28, K, 24, K), 0);
    assert_int_equal(layout(&lc2, 14, M, 24, M), 0);
    assert_int_equal(heur(h, desc, la, lb2, lc2, lc2, pref, 1, res, &got), 15);
    layout_destroy(lb2);
    layout_destroy(lc2);
    /* shapes that disagree (B has 32 rows, A's k is 16) */
    void *lb3;
    assert_int_equal(layout(&lb3, 28, 32, N, 32), 0);
    assert_int_equal(heur(h, desc, la, lb3, lc, lc, pref, 1, res, &got), 7);
    layout_destroy(lb3);
    layout_destroy(la);
    layout_destroy(lb);
    layout_destroy(lc);
    pref_destroy(pref);
    desc_destroy(desc);
    destroy(h);
    dlclose(lib);
}

static void test_cuda_fp8(void **state) {
    (void)state;
    standins();
    hw_opts o = quick();
    hw_backend *b = NULL;
    char err[512], why[256];
    mb_measurement m;
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), 0);
    assert_non_null(strstr(hw_environment(b)->libraries, "cuBLASLt 130000"));
    /* measured; hw/cuda.c checks 16 entries of C against host sums (hw/gemmdata.c) */
    mb_case g = { .kind = MBC_GEMM, .m = 64, .n = 48, .k = 32, .precision = PREC_FP8 };
    int rc = hw_measure(b, &g, &m, why, sizeof why);
    if (rc != HW_OK) fail_msg("fp8 64x48x32: %s", why);
    check(&m);
    assert_true(m.tflops > 0);
    mb_case sq = { .kind = MBC_GEMM, .m = 128, .n = 128, .k = 128, .precision = PREC_FP8 };
    assert_int_equal(hw_measure(b, &sq, &m, why, sizeof why), HW_OK);
    /* the library reading A in the wrong layout: the check fails the case */
    setenv("CT_STANDIN_LT_MISREAD", "1", 1);
    assert_int_equal(hw_measure(b, &sq, &m, why, sizeof why), HW_FAILED);
    assert_non_null(strstr(why, "layout or transpose wrong"));
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_FAILED);
    unsetenv("CT_STANDIN_LT_MISREAD");
    /* dimensions that are not multiples of 16 */
    mb_case odd = { .kind = MBC_GEMM, .m = 64, .n = 40, .k = 32, .precision = PREC_FP8 };
    assert_int_equal(hw_measure(b, &odd, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "multiples of 16; this case is 64x40x32"));
    odd.n = 48, odd.k = 24;
    assert_int_equal(hw_measure(b, &odd, &m, why, sizeof why), HW_UNSUPPORTED);
    mb_case i8 = { .kind = MBC_GEMM, .m = 64, .n = 64, .k = 64, .precision = PREC_INT8 };
    assert_int_equal(hw_measure(b, &i8, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "not int8"));
    hw_close(b);
    /* an A100 (8.0): a note, not a failure; Ada (8.9) is enough */
    setenv("CT_STANDIN_CC", "8.0", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), 0);
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_string_equal(why, "fp8 GEMM needs compute capability 8.9+ (Ada/Hopper); this GPU is 8.0");
    hw_close(b);
    setenv("CT_STANDIN_CC", "8.9", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), 0);
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_OK);
    hw_close(b);
    standins();
    /* no cuBLASLt: the backend opens, fp8 says which library is missing */
    setenv("CT_CUBLASLT_LIB", "build/tests/no-such-libcublasLt.so", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), 0);
    assert_null(strstr(hw_environment(b)->libraries, "cuBLASLt"));
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "no cuBLASLt: build/tests/no-such-libcublasLt.so"));
    mb_case f32 = { .kind = MBC_GEMM, .m = 32, .n = 16, .k = 8, .precision = PREC_FP32 };
    assert_int_equal(hw_measure(b, &f32, &m, why, sizeof why), HW_OK);
    hw_close(b);
    standins();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cublaslt_standin),
        cmocka_unit_test(test_cuda_fp8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
