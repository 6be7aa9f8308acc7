/*
 * test_gpu: roofline time per operation class (models/gpu.c).
 *
 * Expected figures come from the definitions and the catalog entries
 * (models/catalog/gpus.xml): a large square BF16 GEMM on an H100 runs at
 * peak x eff_gemm x d/(d + gemm_half_dim) x eff_sustained; a GEMM with
 * one row (a decode step) is bound by reading its weights at
 * hbm x eff_hbm; memory-bound kernels scale linearly with bytes and do
 * not throttle; a precision without a tensor path falls back to bf16.
 * The shape curve must rise monotonically with size and stay below the
 * large-GEMM efficiency.
 *
 * Power caps (models/power.h): the DVFS law leaves every rate as it was at
 * the limit eff_sustained was measured at; tensor rates fall monotonically
 * with the cap while HBM rates do not move; the law is its textbook anchor
 * (Hennessy and Patterson 1.5: 0.85 of the clock at 0.85 of the voltage
 * leaves 0.85^3 = 0.614 of the dynamic power, to 0.1%); and at deep caps
 * it is an upper bound on the measured clock (facebookexperimental/triton
 * PR 2023: a GB300 capped from 1400 W to 500 W ran cuBLAS GEMMs at ~617
 * TFLOP/s against 1600-2174, at most 0.39 of the uncapped rate).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/catalogfix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/catalog.h"
#include "models/gpu.h"
#include "models/power.h"
#include "scenarios/catalog_xml.h"

static const gpu_spec *a100, *h100, *gb200, *gb300;

static int setup(void **state) {
    if (catalog_setup(state) < 0) return -1;
    a100 = catalog_gpu(cat, "A100-SXM4-80GB");
    h100 = catalog_gpu(cat, "H100-SXM5-80GB");
    gb200 = catalog_gpu(cat, "GB200-B200-186GB");
    gb300 = catalog_gpu(cat, "GB300-B300-288GB");
    return a100 && h100 && gb200 && gb300 ? 0 : -1;
}


static void assert_rel(double got, double want, double tol) {
    if (fabs(got - want) > tol * fabs(want)) {
        print_error("got %.6g want %.6g\n", got, want);
        fail();
    }
}

static void test_peaks(void **state) {
    (void)state;
    assert_rel(gpu_peak_flops(h100, PREC_BF16), 989e12, 1e-12);
    assert_rel(gpu_peak_flops(h100, PREC_FP8), 1979e12, 1e-12);
    assert_rel(gpu_peak_flops(a100, PREC_FP8), 312e12, 1e-12);    /* no fp8: runs bf16 */
    assert_rel(gpu_peak_flops(a100, PREC_FP16), 312e12, 1e-12);
}

static void test_large_gemm(void **state) {
    (void)state;
    double d = 8192;
    double t = gpu_gemm_s(h100, PREC_BF16, d, d, d, 1);
    double rate = 989e12 * h100->eff_gemm * d / (d + h100->gemm_half_dim) * h100->eff_sustained;
    assert_rel(t, 2 * d * d * d / rate, 1e-12);
    assert_rel(gpu_gemm_flops_per_s(h100, PREC_BF16, d, d, d), rate, 1e-12);
    /* Batched: the same GEMM four times takes four times as long. */
    assert_rel(gpu_gemm_s(h100, PREC_BF16, 1024, 1024, 1024, 4), 4 * gpu_gemm_s(h100, PREC_BF16, 1024, 1024, 1024, 1),
               1e-12);
}

static void test_skinny_gemm(void **state) {
    (void)state;
    /* One token through a 8192 x 28672 weight: read 470 MB of bf16 weights. */
    double t = gpu_gemm_s(h100, PREC_BF16, 1, 28672, 8192, 1);
    double bytes = (1.0 * 8192 + 8192.0 * 28672) * 2 + 28672.0 * 2;
    assert_rel(t, bytes / (h100->hbm_bw_bytes_per_s * h100->eff_hbm), 1e-12);
}

static void test_shape_curve(void **state) {
    (void)state;
    double prev = 0;
    for (double d = 64; d <= 65536; d *= 2) {
        double e = gpu_gemm_eff(a100, PREC_BF16, d, d, d);
        assert_true(e > prev);
        assert_true(e < a100->eff_gemm);
        prev = e;
    }
    assert_rel(gpu_gemm_eff(a100, PREC_BF16, a100->gemm_half_dim, a100->gemm_half_dim, a100->gemm_half_dim),
               a100->eff_gemm / 2, 1e-12);
}

static void test_memory_and_attention(void **state) {
    (void)state;
    double bw = h100->hbm_bw_bytes_per_s * h100->eff_hbm;
    assert_rel(gpu_memory_s(h100, 1e9), 1e9 / bw, 1e-12);
    assert_rel(gpu_memory_s(h100, 3e9), 3 * gpu_memory_s(h100, 1e9), 1e-12);
    assert_true(gpu_memory_s(h100, 0) == 0);
    double rate = 989e12 * h100->eff_attention * h100->eff_sustained;
    assert_rel(gpu_attention_s(h100, PREC_BF16, 1e15), 1e15 / rate, 1e-12);
    /* Attention stays in bf16 under fp8 GEMMs. */
    assert_rel(gpu_attention_s(h100, PREC_FP8, 1e15), 1e15 / rate, 1e-12);
}

/* Attention by pass: the H100's FlashAttention-2 figures (FA3 paper, Figs.
 * 5 and 6: forward 335 TFLOP/s causal and 370 unmasked, backward 322, of
 * a 989 peak); a GPU without them runs every pass at eff_attention. */
static void test_attention_passes(void **state) {
    (void)state;
    double s = h100->eff_sustained;
    assert_rel(gpu_attention_pass_s(h100, PREC_BF16, 1e15, GPU_ATTN_FWD_CAUSAL, 0), 1e15 / (989e12 * 0.339 * s), 1e-12);
    assert_rel(gpu_attention_pass_s(h100, PREC_FP8, 1e15, GPU_ATTN_FWD_FULL, 0), 1e15 / (989e12 * 0.374 * s), 1e-12);
    assert_rel(gpu_attention_pass_s(h100, PREC_BF16, 1e15, GPU_ATTN_BWD, 0), 1e15 / (989e12 * 0.326 * s), 1e-12);
    assert_true(gpu_attention_pass_s(h100, PREC_BF16, 1e15, GPU_ATTN_BWD, 0) >
                gpu_attention_pass_s(h100, PREC_BF16, 1e15, GPU_ATTN_FWD_FULL, 0));
    for (int pass = GPU_ATTN_FWD_CAUSAL; pass <= GPU_ATTN_BWD; pass++)
        assert_true(gpu_attention_pass_s(a100, PREC_BF16, 1e15, (gpu_attn_pass)pass, 0) ==
                    gpu_attention_s(a100, PREC_BF16, 1e15));
}

/* Softmax exponentials (mechanism "exp", docs/blackwell-ultra.md). The
 * H100 measured its own figures: any FLOPs per exponential leave them be.
 * A GB200 (512 bf16 FLOPs per exponential) carrying the H100's figure
 * (measured at 256) adds (512 - 256) / f of the peak's time per FLOP: the
 * forward at head dim 128 (f = 512) runs at 1 / (1/0.35 + 0.5), the
 * backward (f = 2.5 x 512) at 1 / (1/0.35 + 0.2). A GB300, whose doubled
 * exponential rate is the Hopper balance again, keeps the figure, so at
 * equal bf16 peaks and sustained fractions its forward is
 * (1/0.35 + 0.5) * 0.35 = 1.175x faster than the GB200's. A GPU with more
 * exponentials per FLOP than the reference gets faster, never above its
 * peak; a GPU without the figures is as before. */
static void test_attention_exponentials(void **state) {
    (void)state;
    for (int pass = GPU_ATTN_FWD_CAUSAL; pass <= GPU_ATTN_BWD; pass++)
        assert_true(gpu_attention_pass_s(h100, PREC_BF16, 1e15, (gpu_attn_pass)pass, 512) ==
                    gpu_attention_pass_s(h100, PREC_BF16, 1e15, (gpu_attn_pass)pass, 0));
    double s = gb200->eff_sustained;
    assert_rel(gpu_attention_pass_s(gb200, PREC_BF16, 1e15, GPU_ATTN_FWD_CAUSAL, 512),
               1e15 / (2500e12 * s / (1 / 0.35 + 0.5)), 1e-12);
    assert_rel(gpu_attention_pass_s(gb200, PREC_BF16, 1e15, GPU_ATTN_BWD, 1280),
               1e15 / (2500e12 * s / (1 / 0.35 + 0.2)), 1e-12);
    assert_rel(gpu_attention_pass_s(gb300, PREC_BF16, 1e15, GPU_ATTN_FWD_CAUSAL, 512),
               1e15 / (2500e12 * gb300->eff_sustained * 0.35), 1e-12);
    assert_rel(gpu_attention_pass_s(gb200, PREC_BF16, 1e15, GPU_ATTN_FWD_CAUSAL, 512) /
               gpu_attention_pass_s(gb300, PREC_BF16, 1e15, GPU_ATTN_FWD_CAUSAL, 512),
               (1 / 0.35 + 0.5) * 0.35 * gb300->eff_sustained / s, 1e-12);
    /* The exponentials weigh less as the FLOPs per exponential grow. */
    assert_true(gpu_attention_exp_eff(gb200, 0.35, 512) < gpu_attention_exp_eff(gb200, 0.35, 1280));
    gpu_spec more = *gb200;
    more.bf16_flops_per_exp = 128;
    assert_rel(gpu_attention_exp_eff(&more, 0.35, 512), 1 / (1 / 0.35 - 0.25), 1e-12);
    more.bf16_flops_per_exp = 1;
    assert_true(gpu_attention_exp_eff(&more, 0.35, 64) == 1);
    assert_true(gpu_attention_exp_eff(a100, 0.55, 512) == 0.55);
    gpu_spec noref = *gb200;
    noref.eff_attention_flops_per_exp = 0;
    assert_true(gpu_attention_exp_eff(&noref, 0.35, 512) == 0.35);
}

static void test_defaults_for_hand_built(void **state) {
    (void)state;
    gpu_spec g = { 0 };
    g.tflops[PREC_BF16] = 100;
    g.hbm_bw_bytes_per_s = 1e12;
    /* Efficiencies left at 0 take the field-table defaults. */
    assert_true(gpu_gemm_s(&g, PREC_BF16, 4096, 4096, 4096, 1) > 0);
    assert_rel(gpu_memory_s(&g, 1e12), 1 / 0.85, 1e-12);
}

/* A cap at the limit eff_sustained was measured at changes nothing, bit for bit. */
static void test_power_identity(void **state) {
    (void)state;
    gpu_spec c;
    char why[256];
    assert_true(power_sustained_fraction(h100) == h100->eff_sustained);
    assert_int_equal(power_cap_gpu(h100, h100->tdp_w, &c, why, sizeof why), 0);
    assert_string_equal(c.name, "H100-SXM5-80GB@700W");
    assert_true(gpu_gemm_flops_per_s(&c, PREC_BF16, 8192, 8192, 8192) ==
                gpu_gemm_flops_per_s(h100, PREC_BF16, 8192, 8192, 8192));
    assert_true(gpu_attention_s(&c, PREC_BF16, 1e15) == gpu_attention_s(h100, PREC_BF16, 1e15));
    /* The 96 GB board runs at 500 W by default; capped back up to the 700 W
     * its eff-sustained was measured at, it holds exactly that. */
    const gpu_spec *v = catalog_gpu(cat, "H100-SXM5-96GB");
    assert_non_null(v);
    assert_true(power_sustained_fraction(v) < v->eff_sustained);
    assert_int_equal(power_cap_gpu(v, 700, &c, why, sizeof why), 0);
    assert_true(power_sustained_fraction(&c) == v->eff_sustained);
}

/* Lower caps: lower tensor rates, strictly; HBM untouched; energy at the cap. */
static void test_power_monotone(void **state) {
    (void)state;
    double last_rate = 0, hbm = gpu_hbm_bytes_per_s(h100);
    for (double cap = 100; cap <= 700; cap += 25) {
        gpu_spec c;
        char why[256];
        assert_int_equal(power_cap_gpu(h100, cap, &c, why, sizeof why), 0);
        double rate = gpu_gemm_flops_per_s(&c, PREC_BF16, 8192, 8192, 8192);
        assert_true(rate > last_rate);
        assert_true(gpu_hbm_bytes_per_s(&c) == hbm);
        assert_true(gpu_memory_s(&c, 1e9) == gpu_memory_s(h100, 1e9));
        assert_true(c.tdp_w == cap);             /* the energy model's full-load power */
        last_rate = rate;
    }
    assert_true(last_rate == gpu_gemm_flops_per_s(h100, PREC_BF16, 8192, 8192, 8192));
    /* The law itself: f/f_ref = ((P - idle) / (P_ref - idle))^(1/3). */
    assert_rel(power_clock_ratio(70, 700, 500), cbrt(430.0 / 630.0), 1e-12);
    assert_rel(power_at_clock_w(70, 700, power_clock_ratio(70, 700, 500)), 500, 1e-12);
}

static void test_power_published(void **state) {
    (void)state;
    /* Hennessy and Patterson, section 1.5: 0.85 voltage and clock -> 0.61. */
    assert_rel(power_at_clock_w(0, 1, 0.85), 0.614, 1e-3);
    /* GB300, 1400 W -> 500 W: measured at most 2174/617 = 0.39 of the rate;
     * the law keeps more clock for any idle power below 400 W. */
    for (double idle = 0; idle < 400; idle += 50)
        assert_true(power_clock_ratio(idle, 1400, 500) > 617.0 / 1600);
}

static void test_power_cap_errors(void **state) {
    (void)state;
    gpu_spec c = { 0 };
    char why[256] = "";
    assert_int_equal(power_cap_gpu(h100, 701, &c, why, sizeof why), -1);
    assert_non_null(strstr(why, "above H100-SXM5-80GB's maximum power limit of 700 W"));
    assert_int_equal(power_cap_gpu(h100, 70, &c, why, sizeof why), -1);
    assert_non_null(strstr(why, "not above H100-SXM5-80GB's idle power of 70 W"));
    assert_string_equal(c.name, "");             /* out untouched on error */
    /* A name that would not fit. */
    gpu_spec longname = *h100;
    memset(longname.name, 'x', sizeof longname.name - 1);
    longname.name[sizeof longname.name - 1] = 0;
    assert_int_equal(power_cap_gpu(&longname, 500, &c, why, sizeof why), -1);
    assert_non_null(strstr(why, "longer than"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peaks),
        cmocka_unit_test(test_large_gemm),
        cmocka_unit_test(test_skinny_gemm),
        cmocka_unit_test(test_shape_curve),
        cmocka_unit_test(test_memory_and_attention),
        cmocka_unit_test(test_attention_passes),
        cmocka_unit_test(test_attention_exponentials),
        cmocka_unit_test(test_defaults_for_hand_built),
        cmocka_unit_test(test_power_identity),
        cmocka_unit_test(test_power_monotone),
        cmocka_unit_test(test_power_published),
        cmocka_unit_test(test_power_cap_errors),
    };
    return cmocka_run_group_tests(tests, setup, catalog_teardown);
}
