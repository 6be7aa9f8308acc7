/*
 * test_attn_kernel: attention at head dim 64 and in sliding windows
 * (models/attn_kernel.c; docs/moe-training.md, "Attention at head dim 64
 * and in sliding windows").
 *   - Head dim: the ratios are the bars of Shah et al., FlashAttention-3
 *     (arXiv 2407.08608), Fig. 5 and 6 at 16K tokens (FlashAttention-2
 *     backward 291 TFLOP/s at head dim 64 against 322 at 128); linear
 *     between 64 and 128, flat outside.
 *   - Windows: tile pairs counted with FlashAttention's BlockInfo rule. At
 *     4,096 tokens with 128 x 128 tiles a causal layer computes 32·33/2 =
 *     528 tiles and a 128-token window 1 + 31·2 = 63; with Blackwell's
 *     256 x 128 forward tiles 16·17 = 272 and 2 + 15·3 = 47.
 * The layer tests check what each mechanism does to a gpt-oss-120b layer;
 * each fails without its mechanism. None asserts a timing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "catalogfix.h"
#include "tests/planfix.h"
#include "tests/trainfix.h"
#include "models/attn_kernel.h"
#include "models/train_layer.h"

static void test_hdim_factor(void **state) {
    (void)state;
    assert_true(attn_kernel_hdim_factor(ATTN_KERNEL_FA2, GPU_ATTN_BWD, 64) == 291.0 / 322.0);
    assert_true(attn_kernel_hdim_factor(ATTN_KERNEL_FA3, GPU_ATTN_FWD_CAUSAL, 64) == 473.0 / 616.0);
    assert_true(attn_kernel_hdim_factor(ATTN_KERNEL_FA2, GPU_ATTN_FWD_FULL, 32) == 324.0 / 370.0);
    double mid = attn_kernel_hdim_factor(ATTN_KERNEL_FA2, GPU_ATTN_FWD_CAUSAL, 96);
    assert_true(fabs(mid - (1 + 299.0 / 335.0) / 2) < 1e-15);
    for (int pass = 0; pass < 3; pass++) {
        assert_true(attn_kernel_hdim_factor(ATTN_KERNEL_FA2, (gpu_attn_pass)pass, 128) == 1);
        assert_true(attn_kernel_hdim_factor(ATTN_KERNEL_FA3, (gpu_attn_pass)pass, 192) == 1);
    }
}

static void test_tiles(void **state) {
    (void)state;
    assert_true(attn_kernel_tiles(4096, 0, 128, 128) == 528);
    assert_true(attn_kernel_tiles(4096, 128, 128, 128) == 63);
    assert_true(attn_kernel_tiles(4096, 0, 256, 128) == 272);
    assert_true(attn_kernel_tiles(4096, 128, 256, 128) == 47);
    assert_true(attn_kernel_tiles(4096, 4096, 128, 128) == 528);   /* a window as long as the sequence */
    assert_true(attn_kernel_tiles(100, 0, 128, 128) == 1);         /* one partial tile */
    fabric f;
    fabric_for(&f, "dgx-b200", 8);
    const llm_spec *oss = catalog_llm(cat, "gpt-oss-120b"), *llama = catalog_llm(cat, "llama3-8b");
    assert_non_null(oss);
    assert_non_null(llama);
    assert_true(attn_kernel_window_work(llama, f.gpu, GPU_ATTN_FWD_CAUSAL, 4096) == 1);
    assert_true(attn_kernel_window_work(oss, f.gpu, GPU_ATTN_FWD_CAUSAL, 128) == 1);
    assert_true(fabs(attn_kernel_window_work(oss, f.gpu, GPU_ATTN_FWD_CAUSAL, 4096) - (1 + 47.0 / 272) / 2) < 1e-15);
    assert_true(fabs(attn_kernel_window_work(oss, f.gpu, GPU_ATTN_BWD, 4096) - (1 + 63.0 / 528) / 2) < 1e-15);
}

/* One MoE layer of m on 8 B200s (EP 8, micro-batch 1 of 4K, fused attention). */
static void oss_layer(const llm_spec *m, train_layer_cost *c) {
    train_plan p = planfix(1, 1, 8, 64, 4096, PREC_BF16);
    p.ep = 8;
    p.recompute = RECOMPUTE_NONE;
    p.sequence_parallel = -1;
    p.attn_unfused = -1;
    train_plan_defaults(&p);
    assert_int_equal(p.attn_unfused, 0);
    fabric f;
    fabric_for(&f, "dgx-b200", 8);
    train_params q;
    train_params_default(&q);
    train_layer_costs(m, &p, &f, &q, TRAIN_LAYER_MOE, c);
}

/* Head dim: gpt-oss-120b's 64 heads of 64 against 32 heads of 128 with the
 * same query and KV widths (4,096 and 512) and so the same FLOPs everywhere:
 * only the attention kernel's efficiency differs, and head dim 64 is the
 * slower in both passes. */
static void test_layer_head_dim(void **state) {
    (void)state;
    llm_spec m64 = *catalog_llm(cat, "gpt-oss-120b");
    m64.attn_window = 0;
    llm_spec m128 = m64;
    m128.heads = 32;
    m128.head_dim = 128;
    m128.kv_heads = 4;
    train_layer_cost c64, c128;
    oss_layer(&m64, &c64);
    oss_layer(&m128, &c128);
    assert_true(c64.fwd > c128.fwd && c64.bwd > c128.bwd);
    assert_true(c64.bwd - c128.bwd > c64.fwd - c128.fwd);   /* the backward is 2.5x the work */
}

/* Windows: a window within one key tile of another computes the same tiles.
 * With Blackwell's 256 x 128 forward and 128 x 128 backward tiles, windows
 * of 64 and 128 tokens reach the same key tiles, so the layers cost the
 * same; counting attended keys instead would make 64 the cheaper. A window
 * of 512 reaches more tiles and costs more. */
static void test_layer_window(void **state) {
    (void)state;
    llm_spec w128 = *catalog_llm(cat, "gpt-oss-120b"), w64 = w128, w512 = w128;
    w64.attn_window = 64;
    w512.attn_window = 512;
    train_layer_cost c64, c128, c512;
    oss_layer(&w64, &c64);
    oss_layer(&w128, &c128);
    oss_layer(&w512, &c512);
    assert_true(c64.fwd == c128.fwd && c64.bwd == c128.bwd);
    assert_true(c512.fwd > c128.fwd && c512.bwd > c128.bwd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hdim_factor),
        cmocka_unit_test(test_tiles),
        cmocka_unit_test(test_layer_head_dim),
        cmocka_unit_test(test_layer_window),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
