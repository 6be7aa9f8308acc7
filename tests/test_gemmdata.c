/*
 * test_gemmdata: the GEMM operands of the GPU backends and the check of a
 * result (hw/gemmdata.c), on the host alone.
 *
 *   - Each format's stored word is the value it claims (decoded here by
 *     hand: IEEE fields, bf16 as the top of a binary32, E4M3 bias 7), never
 *     subnormal, NaN or zero; tf32 words leave the 13 bits tf32 drops clear.
 *   - The data is random-looking: every mantissa bit is set in 40-60% of
 *     4096 elements, both signs and all four exponents occur; the same
 *     index gives the same value, A and B differ, and a filled slice
 *     equals the values one by one.
 *   - Output decoding of known binary16 and bf16 words.
 *   - The tolerance's figures at k = 16384 (2^-9 of mag for fp32
 *     accumulation, 2^-6 more for fp8).
 *   - The check at k = 16384 (bf16 and fp8) and k = 7168 (fp16): the sum as
 *     an fp32 accumulator computes it, rounded to the output, passes; the
 *     sum with B read transposed fails at least one of the 16 entries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hw/gemmdata.h"

static const precision all[] = { PREC_FP64, PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16, PREC_FP8 };
#define NALL (sizeof all / sizeof *all)

/* The word decoded by hand: fields of (bias, exponent bits, mantissa bits). */
static double by_hand(precision p, uint64_t w) {
    int eb = 11, mb = 52, bias = 1023;
    switch (p) {
    case PREC_FP32: case PREC_TF32: eb = 8, mb = 23, bias = 127; break;
    case PREC_FP16: eb = 5, mb = 10, bias = 15; break;
    case PREC_BF16: eb = 8, mb = 7, bias = 127; break;
    case PREC_FP8: eb = 4, mb = 3, bias = 7; break;
    default: break;
    }
    uint64_t f = w & ((UINT64_C(1) << mb) - 1), e = (w >> mb) & ((UINT64_C(1) << eb) - 1), s = w >> (mb + eb);
    assert_true(e != 0);                     /* no subnormals or zeros */
    double v = ldexp(1.0 + ldexp((double)f, -mb), (int)e - bias);
    return s & 1 ? -v : v;
}

static void test_values(void **state) {
    (void)state;
    for (size_t t = 0; t < NALL; t++) {
        precision p = all[t];
        int mb = p == PREC_FP64 ? 52 : p == PREC_FP32 ? 23 : p == PREC_BF16 ? 7 : p == PREC_FP8 ? 3 : 10;
        int set[52] = { 0 }, neg = 0, exps[4] = { 0 };
        for (uint64_t i = 0; i < 4096; i++) {
            uint64_t w;
            double v = gemmdata_value(p, GEMMDATA_A, i, &w);
            if (p == PREC_FP8) assert_true((w & 0x7f) != 0x7f);         /* not E4M3's NaN */
            if (p == PREC_TF32) assert_int_equal(w & 0x1fff, 0);
            if (v != by_hand(p, w)) fail_msg("%s element %d: %.17g, word %llx", precision_name(p), (int)i, v,
                                             (unsigned long long)w);
            double a = fabs(v);
            assert_true(a >= 1.0 / 16 && a < 1);
            exps[(int)-floor(log2(a)) - 1]++;
            neg += v < 0;
            uint64_t f = p == PREC_TF32 ? (w >> 13) & 1023 : w & ((UINT64_C(1) << mb) - 1);
            for (int b = 0; b < mb; b++) set[b] += (int)((f >> b) & 1);
            assert_true(v == gemmdata_value(p, GEMMDATA_A, i, NULL));
        }
        for (int b = 0; b < mb; b++)
            if (set[b] < 1638 || set[b] > 2458) fail_msg("%s mantissa bit %d set %d of 4096", precision_name(p), b, set[b]);
        assert_true(neg > 1638 && neg < 2458);
        for (int e = 0; e < 4; e++) assert_true(exps[e] > 800);
    }
}

static void test_fill(void **state) {
    (void)state;
    for (size_t t = 0; t < NALL; t++) {
        precision p = all[t];
        size_t w = gemmdata_in_bytes(p);
        unsigned char buf[50 * 8];
        gemmdata_fill(p, GEMMDATA_B, 100, 50, buf);
        int same_as_a = 0;
        for (int i = 0; i < 50; i++) {
            uint64_t want, got = 0;
            gemmdata_value(p, GEMMDATA_B, 100 + (uint64_t)i, &want);
            memcpy(&got, buf + (size_t)i * w, w);            /* little-endian words */
            assert_true(got == want);
            same_as_a += gemmdata_value(p, GEMMDATA_A, 100 + (uint64_t)i, NULL) ==
                         gemmdata_value(p, GEMMDATA_B, 100 + (uint64_t)i, NULL);
        }
        assert_true(same_as_a < 10);
    }
    assert_int_equal(gemmdata_in_bytes(PREC_INT8), 0);
    assert_int_equal(gemmdata_out_bytes(PREC_FP8), 2);
    assert_int_equal(gemmdata_out_bytes(PREC_TF32), 4);
}

static void test_decode(void **state) {
    (void)state;
    static const uint16_t h[] = { 0x3c00, 0xc000, 0x0001, 0x7bff, 0x3555, 0x7c00 };
    static const double hv[] = { 1, -2, 0x1p-24, 65504, 0.333251953125, INFINITY };
    for (int i = 0; i < 6; i++) assert_true(gemmdata_decode(PREC_FP16, &h[i]) == hv[i]);
    uint16_t b = 0x3eab;                      /* bf16 0.333984375 */
    assert_true(gemmdata_decode(PREC_BF16, &b) == 0.333984375);
    assert_true(gemmdata_decode(PREC_FP8, &b) == 0.333984375);   /* fp8 GEMMs write bf16 */
    float f = 1.5f;
    double d = -2.25;
    assert_true(gemmdata_decode(PREC_TF32, &f) == 1.5);
    assert_true(gemmdata_decode(PREC_FP64, &d) == -2.25);
}

static void test_tolerance(void **state) {
    (void)state;
    double t = gemmdata_tolerance(PREC_FP32, 16384, 0, 1);
    assert_true(t > 0x1p-9 && t < 0x1p-9 * 1.01);
    double b = gemmdata_tolerance(PREC_BF16, 16384, 100, 1000);   /* + 2^-7 of |want| for the bf16 output */
    assert_true(b > 1000 * 0x1p-9 + 100 * 0x1p-7 && b < 1.01 * (1000 * 0x1p-9 + 100 * 0x1p-7));
    double f8 = gemmdata_tolerance(PREC_FP8, 16384, 0, 1);
    assert_true(f8 > 0x1p-6 + 0x1p-9 && f8 < 0.0185);
    assert_true(gemmdata_tolerance(PREC_FP64, 16384, 0, 1) < 1e-11);
}

/* C(i,j) as a device might compute it: products and an fp32 running sum,
 * rounded to the output (bf16 or fp16, to nearest through the decoder's
 * own formats: a float rounded by hand). B read transposed when misread. */
static double device_sum(const gemmdata_shape *g, int i, int j, int misread) {
    float s = 0;
    for (int p = 0; p < g->k; p++) {
        uint64_t ib = misread ? (uint64_t)j + (uint64_t)p * g->n : (uint64_t)p + (uint64_t)j * g->k;
        uint64_t ia = g->a_transposed ? (uint64_t)p + (uint64_t)i * g->k : (uint64_t)i + (uint64_t)p * g->m;
        s += (float)(gemmdata_value(g->prec, GEMMDATA_A, ia, NULL) * gemmdata_value(g->prec, GEMMDATA_B, ib, NULL));
    }
    int keep = g->prec == PREC_FP16 ? 11 : 8;         /* significant bits of the output */
    int e;
    double m = frexp(s, &e);
    return ldexp(nearbyint(ldexp(m, keep)), e - keep);
}

static void test_check(void **state) {
    (void)state;
    static const gemmdata_shape shapes[] = {
        { PREC_BF16, 64, 64, 16384, 0, 0, 0 }, { PREC_FP8, 64, 64, 16384, 1, 0, 0 }, { PREC_FP16, 128, 96, 7168, 0, 0, 0 }
    };
    char why[256];
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        const gemmdata_shape *g = &shapes[c];
        int caught = 0;
        for (int s = 0; s < 16; s++) {
            int i, j;
            gemmdata_grid(g, s, &i, &j);
            if (gemmdata_check(g, i, j, device_sum(g, i, j, 0), why, sizeof why) != 0) fail_msg("honest: %s", why);
            if (gemmdata_check(g, i, j, device_sum(g, i, j, 1), why, sizeof why) != 0) {
                caught++;
                assert_non_null(strstr(why, "(layout or transpose wrong?)"));
            }
        }
        if (caught == 0) fail_msg("%s: B read transposed passed all 16 entries", precision_name(g->prec));
    }
    /* the grid: corners and thirds */
    gemmdata_shape g = { PREC_BF16, 16, 7168, 2048, 0, 0, 0 };
    int i, j;
    gemmdata_grid(&g, 0, &i, &j);
    assert_true(i == 0 && j == 0);
    gemmdata_grid(&g, 15, &i, &j);
    assert_true(i == 15 && j == 7167);
    gemmdata_grid(&g, 6, &i, &j);
    assert_true(i == 5 && j == 4778);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),  cmocka_unit_test(test_fill),  cmocka_unit_test(test_decode),
        cmocka_unit_test(test_tolerance), cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
