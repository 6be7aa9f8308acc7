/*
 * test_serving_kernels: the serving model's laws for kernels NVIDIA has
 * measured inside TensorRT-LLM (models/serving.c): the CUTLASS fused MoE
 * (init_cutlass_moe, serve_moe_layer_s; docs/moe-serving.md "The CUTLASS
 * fused MoE") and the context attention call (init_context_fmha,
 * serve_prefill_fmha_s; docs/serving.md "Prefill attention, measured"),
 * the W4A8 rate of MXFP4 experts on Blackwell (init_shape;
 * docs/moe-serving.md "Thirteenth pass") and the MLA generation call
 * (models/serving_attn.c init_mla_gen; docs/moe-serving.md "MLA decode,
 * measured"). Each replays measured times of
 * ai-dynamo/aiconfigurator's tables at shapes the fits held out, against
 * the law and against the roofline it replaces.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/catalogfix.h"
#include "tests/servefix.h"

#include "models/catalog.h"
#include "models/serving.h"

/* The CUTLASS fused-MoE law (models/serving.c init_cutlass_moe; gpus.xml
 * cutlass-moe-*; docs/moe-serving.md "The CUTLASS fused MoE"). NVIDIA's
 * measured layer times of TensorRT-LLM's CUTLASS NVFP4 fused MoE on one B200
 * (ai-dynamo/aiconfigurator, b200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet,
 * moe_torch_flow_cutlass, balanced routing, tp = ep = 1), in us by tokens:
 * Qwen3-30B-A3B (hidden 2048, 128 experts of 768, top 8; a shape of the fit)
 * and Llama 4 Scout (hidden 5120, 16 experts of 8192, top 1; a held-out
 * shape). With the law the twin's layer is nearer every point than the
 * roofline price (its grouped GEMMs at the copy rate, as the trtllm-gen
 * kernels run), which is at least 40% short of the points up to 4,096
 * tokens; it lands within 35% (the held-out p90 of the fit) of every Qwen3
 * point and of Scout's from 1,024 tokens. Scout at 64 and 256 tokens stays
 * about half the measured time: its 16 large experts at 4-16 rows each
 * stream their weights at 2.5-2.8 TB/s, which the law (one weight rate for
 * every shape) does not hold. An MXFP4 checkpoint (GPT-OSS) takes the
 * NVFP4 figures on Blackwell (the same block-scaled weight path) and none on
 * Hopper (TRITON there); the law is off for a block-scaled FP8 one on
 * Blackwell (DeepSeek-V3: TRTLLM there), and where it is on the layer's
 * kernels but the router pay no launch gap of their own. */
static void test_cutlass_moe_law(void **state) {
    (void)state;
    static const double tokens[] = { 64, 256, 1024, 4096, 16384 };
    static const struct { const char *llm; double us[5]; } rows[] = {
        { "qwen3-30b-a3b", { 162.7, 173.7, 222.3, 529.6, 1816.8 } },
        { "llama4-scout", { 409.0, 451.9, 359.2, 545.3, 1883.8 } },
    };
    serve_params on, off;
    serve_params_default(&on);
    serve_params_default(&off);
    on.cutlass_moe = 1;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const llm_spec *m = catalog_llm(cat, rows[r].llm);
        serve_model law = layout_on_params(m, "dgx-b200", 1, 1, PREC_FP4, &on);
        serve_model roof = layout_on_params(m, "dgx-b200", 1, 1, PREC_FP4, &off);
        assert_true(law.cmoe_layer_s > 30e-6 && roof.cmoe_layer_s == 0);
        for (int i = 0; i < 5; i++) {
            double meas = rows[r].us[i] * 1e-6, t = serve_moe_layer_s(&law, tokens[i]);
            double t0 = serve_moe_layer_s(&roof, tokens[i]);
            printf("  %s, %5.0f tokens: measured %6.1f us, law %6.1f us (%+.0f%%), roofline %6.1f us (%+.0f%%)\n",
                   rows[r].llm, tokens[i], meas * 1e6, t * 1e6, 100 * (t / meas - 1), t0 * 1e6, 100 * (t0 / meas - 1));
            assert_true(fabs(t / meas - 1) < fabs(t0 / meas - 1));
            if (r == 0 || tokens[i] >= 1024) assert_true(fabs(t / meas - 1) < 0.35);
            if (tokens[i] <= 4096) assert_true(t0 < 0.6 * meas);
        }
        serve_breakdown a, b;
        serve_tokens_s(&law, 512, 512, &a);
        serve_tokens_s(&roof, 512, 512, &b);
        assert_true(fabs(b.launch_s - a.launch_s - on.kernel_gap_s * 8 * law.moe_layers) < 1e-12);
    }
    /* Hopper FP8, a held-out shape of the H100 fit: Mixtral 8x22B (hidden
     * 6144, 8 experts of 16384, top 2) with its experts split over 8 GPUs
     * (moe_tp 8), h100_sxm/moe/trtllm/1.3.0rc20, at decode-sized batches of
     * 1 to 1,024 tokens: within 35% of every point and nearer than the
     * roofline over them. At prefill-sized batches this shape is
     * compute-bound and the twin's FP8 grouped-GEMM rate, not the law, is
     * off (8,192 tokens: measured 1,112 us, roofline 1,464, law 1,831;
     * docs/moe-serving.md "What it does not hold"). */
    static const double mx_tokens[] = { 1, 64, 256, 1024 }, mx_us[] = { 52.9, 133.5, 151.3, 211.3 };
    double sum_law = 0, sum_roof = 0;
    serve_model h = layout_on_params(catalog_llm(cat, "mixtral-8x22b"), "dgx-h100", 8, 1, PREC_FP8, &on);
    serve_model h0 = layout_on_params(catalog_llm(cat, "mixtral-8x22b"), "dgx-h100", 8, 1, PREC_FP8, &off);
    for (int i = 0; i < 4; i++) {
        double meas = mx_us[i] * 1e-6, t = serve_moe_layer_s(&h, mx_tokens[i]), t0 = serve_moe_layer_s(&h0, mx_tokens[i]);
        printf("  mixtral-8x22b fp8 8xH100, %4.0f tokens: measured %6.1f us, law %6.1f us (%+.0f%%), roofline %6.1f us "
               "(%+.0f%%)\n", mx_tokens[i], meas * 1e6, t * 1e6, 100 * (t / meas - 1), t0 * 1e6, 100 * (t0 / meas - 1));
        assert_true(fabs(t / meas - 1) < 0.35);
        sum_law += fabs(t / meas - 1);
        sum_roof += fabs(t0 / meas - 1);
    }
    assert_true(sum_law < sum_roof);
    const llm_spec *oss = catalog_llm(cat, "gpt-oss-120b");
    serve_model gpt = layout_fmt_on(oss, "dgx-b200", 1, 1, PREC_FP4, FP4_MXFP4, PREC_FP8, &on);
    assert_true(gpt.cmoe_layer_s == catalog_gpu(cat, catalog_node(cat, "dgx-b200")->gpu)->cutlass_moe_fp4_s &&
                gpt.cmoe_layer_s > 0);
    assert_int_equal(gpt.compute_expert, PREC_FP8);
    gpt = layout_fmt_on(oss, "hgx-h200", 1, 1, PREC_FP4, FP4_MXFP4, PREC_BF16, &on);
    assert_true(gpt.cmoe_layer_s == 0);
    /* DeepSeek-V3's block-scaled FP8 checkpoint: TRTLLM on Blackwell, CUTLASS on Hopper */
    const llm_spec *ds = catalog_llm(cat, "deepseek-v3");
    assert_true(ds->fp8_block_scales);
    assert_true(layout_on_params(ds, "dgx-b200", 8, 8, PREC_FP8, &on).cmoe_layer_s == 0);
    assert_true(layout_on_params(ds, "hgx-h200", 8, 8, PREC_FP8, &on).cmoe_layer_s > 0);
    serve_model dense = preset_on("llama3-70b", "dgx-h100", 2, PREC_FP8);
    assert_true(serve_moe_layer_s(&dense, 1024) == 0);
}

/* MXFP4 experts on Blackwell run W4A8 (models/serving.c init_shape): mxfp8
 * activations against mxfp4 weights, a mixed MMA at the FP8 rate, not the
 * FP4 one. NVIDIA's measured layer times of TensorRT-LLM's MXFP4 x MXFP8
 * fused MoE on one B200 (ai-dynamo/aiconfigurator,
 * b200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet, moe_dtype
 * w4a8_mxfp4_mxfp8, balanced routing, tp = ep = 1; the TRTLLM backend's
 * kernels, so the model is built without the CUTLASS law), in us by
 * tokens, for GPT-OSS-120B's experts (hidden 2880, 128 experts of 2880,
 * top 4) and GPT-OSS-20B's (32 of them): from 4,096 tokens the layer is
 * bound by its tensor work and the twin lands within 15% of every point;
 * priced at the FP4 rate it would be at least 20% short of them (35% from
 * 8,192 tokens). Nothing was fitted to these times. */
static void test_mxfp4_w4a8_moe(void **state) {
    (void)state;
    static const double tokens[] = { 4096, 8192, 16384 };
    static const struct { const char *llm; double us[3]; } rows[] = {
        { "gpt-oss-120b", { 486, 884, 1655 } },
        { "gpt-oss-20b", { 432, 827, 1611 } },
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        serve_model sm = layout_fmt_on(catalog_llm(cat, rows[r].llm), "dgx-b200", 1, 1, PREC_FP4, FP4_MXFP4, PREC_FP8,
                                       NULL);
        assert_int_equal(sm.compute_expert, PREC_FP8);
        assert_int_equal(sm.compute, PREC_BF16);
        serve_model fp4 = sm;
        fp4.compute_expert = PREC_FP4;
        for (int i = 0; i < 3; i++) {
            double meas = rows[r].us[i] * 1e-6, t = serve_moe_layer_s(&sm, tokens[i]);
            double t4 = serve_moe_layer_s(&fp4, tokens[i]);
            printf("  %s mxfp4 B200, %5.0f tokens: measured %6.1f us, w4a8 %6.1f us (%+.0f%%), at the fp4 rate "
                   "%6.1f us (%+.0f%%)\n", rows[r].llm, tokens[i], meas * 1e6, t * 1e6, 100 * (t / meas - 1),
                   t4 * 1e6, 100 * (t4 / meas - 1));
            assert_true(fabs(t / meas - 1) < 0.15);
            assert_true(t4 < (tokens[i] >= 8192 ? 0.65 : 0.8) * meas);
        }
    }
    /* NVFP4 experts quantise their input to fp4 and keep the FP4 rate;
     * Hopper has no FP4 tensor cores (W4A16, the bf16 rate) */
    assert_int_equal(layout_on(catalog_llm(cat, "gpt-oss-120b"), "dgx-b200", 1, 1, PREC_FP4).compute_expert,
                     PREC_FP4);
    assert_int_equal(layout_on(catalog_llm(cat, "gpt-oss-120b"), "hgx-h200", 1, 1, PREC_FP4).compute_expert,
                     PREC_BF16);
}

/* A measured kernel law against one measured point: within 20% of it, and
 * nearer than the roofline price it replaces (t0). */
static void law_nearer(double meas, double t, double t0) {
    assert_true(fabs(t / meas - 1) < 0.20);
    assert_true(fabs(t / meas - 1) < fabs(t0 / meas - 1));
}

/* The context-FMHA law (models/serving.c init_context_fmha): NVIDIA's
 * measured TensorRT-LLM context-attention call times for 32 query and 8 KV
 * heads of 128 (Llama 3.1 8B's attention; a shape held out of the fit) in
 * ai-dynamo/aiconfigurator <gpu>/attention/trtllm/1.3.0rc10/
 * context_attention_perf.parquet, in us by (batch, prompt tokens): fp8
 * compute on an fp8 cache on a B200 and an H100, bf16 on bf16 on an H100.
 * One layer's call is serve_context_s over the prompts' causal pairs plus
 * serve_prefill_fmha_s over their 64-row query tiles, all layers' over the
 * layers. The law lands within 20% of every point (the fit's held-out p90
 * is 16-25%) and nearer than the roofline (causal FLOPs at half the bf16
 * peak), which is over half short at 512 tokens and below (the fixed and
 * per-tile times) and on a B200 long at 8,192 tokens and more; it is off for an
 * engine without it and on a GPU without figures. */
static void test_context_fmha_law(void **state) {
    (void)state;
    static const double batch[] = { 1, 16, 8, 4, 2, 1 }, len[] = { 256, 512, 1024, 4096, 8192, 16384 };
    static const struct { const char *node; precision w; double us[6]; } rows[] = {
        { "dgx-b200", PREC_FP8, { 18.9, 130.9, 151.6, 591.9, 1009.1, 1686.7 } },
        { "dgx-h100", PREC_FP8, { 17.8, 196.7, 237.7, 1074.8, 1731.9, 3255.9 } },
        { "dgx-h100", PREC_BF16, { 18.8, 212.3, 270.2, 1247.1, 2264.3, 4380.5 } },
    };
    serve_params on, off;
    serve_params_default(&on);
    serve_params_default(&off);
    on.trtllm_fmha = 1;
    const llm_spec *m = catalog_llm(cat, "llama3.1-8b");
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        serve_model law = layout_on_params(m, rows[r].node, 1, 1, rows[r].w, &on);
        serve_model roof = layout_on_params(m, rows[r].node, 1, 1, rows[r].w, &off);
        assert_true(law.ctx_fmha_s > 10e-6 && roof.ctx_fmha_s == 0);
        for (int i = 0; i < 6; i++) {
            double pairs = batch[i] * serve_chunk_pairs(len[i], 0), tiles = batch[i] * serve_chunk_tiles(len[i]);
            double meas = rows[r].us[i] * 1e-6;
            double t = (serve_context_s(&law, pairs, 0, 0, 0, NULL) + serve_prefill_fmha_s(&law, tiles)) / law.layers;
            double t0 = (serve_context_s(&roof, pairs, 0, 0, 0, NULL) + serve_prefill_fmha_s(&roof, tiles)) / roof.layers;
            printf("  %s %s, %2.0f x %5.0f tokens: measured %7.1f us, law %7.1f us (%+.0f%%), roofline %7.1f us "
                   "(%+.0f%%)\n", rows[r].node, rows[r].w == PREC_FP8 ? "fp8" : "bf16", batch[i], len[i], meas * 1e6,
                   t * 1e6, 100 * (t / meas - 1), t0 * 1e6, 100 * (t0 / meas - 1));
            law_nearer(meas, t, t0);
            if (len[i] <= 512) assert_true(t0 < 0.5 * meas);
        }
    }
    /* a whole iteration pays it through serve_iter_s, and not without prefill */
    serve_model law = layout_on_params(m, "dgx-b200", 1, 1, PREC_FP8, &on);
    serve_batch b = { 0 };
    b.prefill_tokens = 1024;
    b.prefill_pairs = serve_chunk_pairs(1024, 0);
    b.prefill_tiles = serve_chunk_tiles(1024);
    serve_breakdown with, without;
    double t1 = serve_iter_s(&law, &b, &with);
    b.prefill_tiles = 0;
    double t2 = serve_iter_s(&law, &b, &without);
    assert_true(fabs(t1 - t2 - serve_prefill_fmha_s(&law, 16)) < 1e-12 && t1 > t2);
    assert_true(with.attention_s > without.attention_s);
    assert_true(serve_prefill_fmha_s(&law, 0) == 0);
    /* no figures on an A100: the roofline price */
    serve_model a100 = layout_on_params(m, "dgx-a100-80gb", 1, 1, PREC_BF16, &on);
    assert_true(a100.ctx_fmha_s == 0);
    assert_true(serve_chunk_tiles(1) == 1 && serve_chunk_tiles(64) == 1 && serve_chunk_tiles(65) == 2);
}

/* The MLA generation law (models/serving_attn.c init_mla_gen; gpus.xml
 * mla-gen-*; docs/moe-serving.md "MLA decode, measured"). NVIDIA's
 * measured times of one layer's MLA generation call in TensorRT-LLM
 * (ai-dynamo/aiconfigurator <gpu>/mla/trtllm/1.3.0rc20/
 * generation_mla_perf.parquet: mla_rope_generation and the generation FMHA,
 * DeepSeek-V3's latent, 128 query heads on one GPU, an fp8 KV cache), in us,
 * at batch sizes the fit held out (32, 128, 512) by context: the twin's
 * decode attention of deepseek-v3 at tp 1, over its layers. The law lands
 * within 20% of every point (the held-out p90 of the fits is 21-29%) and
 * nearer than the roofline it replaces (absorbed FLOPs at eff-attention of
 * the bf16 peak, or the latent read), which is over 40% long on a B200 at
 * every point and over 25% on an H200. The law is off for an engine
 * without it, for a model without MLA, and on a GPU without figures. */
static void test_mla_gen_law(void **state) {
    (void)state;
    static const double batch[] = { 128, 512, 32, 128 }, ctx[] = { 8192, 2048, 32768, 1024 };
    static const struct { const char *node; double us[4]; } rows[] = {
        { "dgx-b200", { 136.7, 173.6, 128.4, 41.5 } },
        { "hgx-h200", { 438.5, 514.0, 416.4, 90.3 } },
    };
    serve_params on, off;
    serve_params_default(&on);
    serve_params_default(&off);
    on.trtllm_mla = 1;
    const llm_spec *m = catalog_llm(cat, "deepseek-v3");
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        serve_model law = layout_on_params(m, rows[r].node, 1, 1, PREC_FP8, &on);
        serve_model roof = layout_on_params(m, rows[r].node, 1, 1, PREC_FP8, &off);
        assert_true(law.kv == PREC_FP8 && law.mla_gen_s > 5e-6 && roof.mla_gen_s == 0);
        for (int i = 0; i < 4; i++) {
            double meas = rows[r].us[i] * 1e-6, n = batch[i];
            double t = serve_context_s(&law, 0, 0, n * ctx[i], n, NULL) / law.layers;
            double t0 = serve_context_s(&roof, 0, 0, n * ctx[i], n, NULL) / roof.layers;
            printf("  %s fp8 cache, %4.0f x %5.0f: measured %6.1f us, law %6.1f us (%+.0f%%), roofline %6.1f us "
                   "(%+.0f%%)\n", rows[r].node, n, ctx[i], meas * 1e6, t * 1e6, 100 * (t / meas - 1), t0 * 1e6,
                   100 * (t0 / meas - 1));
            law_nearer(meas, t, t0);
            assert_true(t0 > (r == 0 ? 1.4 : 1.25) * meas);
        }
    }
    /* an iteration's decode pays it as its KV read */
    serve_model law = layout_on_params(m, "dgx-b200", 1, 1, PREC_FP8, &on);
    serve_breakdown bd;
    serve_batch b = { 0 };
    b.decode_seqs = 64;
    b.decode_ctx = 64 * 4096.0;
    serve_iter_s(&law, &b, &bd);
    assert_true(fabs(bd.kv_read_s - serve_context_s(&law, 0, 0, b.decode_ctx, 64, NULL)) < 1e-12);
    /* off without MLA, and on an A100 (no figures) */
    serve_model gqa = layout_on_params(catalog_llm(cat, "llama3.1-8b"), "dgx-b200", 1, 1, PREC_FP8, &on);
    serve_model a100 = layout_on_params(m, "dgx-a100-80gb", 1, 1, PREC_BF16, &on);
    assert_true(gqa.mla_gen_s == 0 && a100.mla_gen_s == 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cutlass_moe_law),
        cmocka_unit_test(test_context_fmha_law),
        cmocka_unit_test(test_mxfp4_w4a8_moe),
        cmocka_unit_test(test_mla_gen_law),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
