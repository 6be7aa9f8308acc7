/*
 * test_transformer: parameter and FLOP counts of dense decoder layers
 * (models/transformer.c).
 *
 * Expected figures:
 *   - Megatron-LM (Narayanan et al., SC'21) Eq. 3: FLOPs per iteration with
 *     full recomputation = 96·B·s·l·h²·(1 + s/6h + V/16lh) for MHA and a 4h
 *     non-gated FFN; must hold to rounding for every model of its Table 1.
 *   - Parameter counts of the catalog presets against their published sizes
 *     (model cards / config.json): Llama 3 8B 8.03B, 70B 70.6B, 405B 405.9B,
 *     Llama 2 7B 6.74B, 13B 13.0B, 70B 69.0B, GPT-3 175B 174.6B; within 0.5%
 *     (the presets omit biases and position embeddings).
 *   - A gated FFN left unsaid is inferred (gated unless ffn = 4·hidden) as
 *     every preset has it: SwiGLU Llamas, GeLU GPT-3 and MPT-7B.
 *   - The 2025-2026 presets (Qwen3, Llama 4, gpt-oss, Mixtral 8x22B, Llama
 *     3.1, Granite): total and active counts against their model cards
 *     within 2% and 3%, and the layer structure behind them (interleaved
 *     MoE, query wider than hidden, windows); docs/models-moe.md.
 *   - The 6·N + 12·l·h·s rule of thumb (Kaplan et al. 2020; PaLM App. B) for
 *     model FLOPs per token, which our count reproduces exactly when N is
 *     the matmul parameters plus the output projection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/catalog.h"
#include "models/transformer.h"
#include "scenarios/catalog_xml.h"

/* The parameter counts of m (models/transformer.h), by value. */
static tf_param_counts pc_of(const llm_spec *m) {
    tf_param_counts c;
    tf_param_counts_of(m, &c);
    return c;
}


static llm_spec mha(int layers, int h, int heads, int vocab) {
    llm_spec m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "gpt-%d-%d", layers, h);
    m.layers = layers;
    m.hidden = h;
    m.ffn_hidden = 4 * h;
    m.heads = heads;
    m.kv_heads = heads;
    m.vocab = vocab;
    m.gated_ffn = 0;
    return m;
}

static void assert_rel(double got, double want, double tol, const char *what) {
    double e = fabs(got - want) / fabs(want);
    if (e > tol) {
        print_error("%s: got %.6g want %.6g (relative error %.2g > %.2g)\n", what, got, want, e, tol);
        fail();
    }
}

/* The built-in catalog, loaded (the test fails when it does not load). */
static catalog *builtin_catalog(void) {
    char err[512];
    catalog *c = catalog_new();
    assert_non_null(c);
    if (catalog_load_builtin(c, err, sizeof err) < 0) {
        print_error("catalog: %s\n", err);
        fail();
    }
    return c;
}

/* Megatron Table 1: (layers, hidden, heads). */
static const int table1[][3] = {
    { 24, 2304, 24 }, { 30, 3072, 32 }, { 36, 4096, 32 }, { 40, 6144, 48 }, { 48, 8192, 64 },
    { 60, 10240, 80 }, { 80, 12288, 96 }, { 96, 16384, 128 }, { 105, 20480, 128 }, { 128, 25600, 160 },
};

static void test_eq3(void **state) {
    (void)state;
    const double s = 2048, V = 51200;
    for (size_t i = 0; i < sizeof table1 / sizeof table1[0]; i++) {
        llm_spec m = mha(table1[i][0], table1[i][1], table1[i][2], (int)V);
        double l = m.layers, h = m.hidden;
        double eq3 = 96 * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));   /* per sequence, B = 1 */
        assert_rel(tf_hw_flops_per_token(&m, s, RECOMPUTE_FULL, 0) * s, eq3, 1e-12, m.name);
        /* Without recomputation it is 3/4 of the layer part (72 instead of 96). */
        double eq_none = 72 * s * l * h * h * (1 + s / (6 * h)) + 6 * s * h * V;
        assert_rel(tf_hw_flops_per_token(&m, s, RECOMPUTE_NONE, 0) * s, eq_none, 1e-12, m.name);
        assert_rel(tf_model_flops_per_token(&m, s) * s, eq_none, 1e-12, m.name);
    }
}

static void test_recompute_order(void **state) {
    (void)state;
    llm_spec m = mha(32, 4096, 32, 50000);
    double none = tf_hw_flops_per_token(&m, 4096, RECOMPUTE_NONE, 0);
    double sel = tf_hw_flops_per_token(&m, 4096, RECOMPUTE_SELECTIVE, 0);
    double half = tf_hw_flops_per_token(&m, 4096, RECOMPUTE_SELECTIVE, 0.5);
    double full = tf_hw_flops_per_token(&m, 4096, RECOMPUTE_FULL, 0);
    assert_true(none < sel && sel < half && half < full);
    /* Selective (attention core) adds exactly one forward of the core. */
    assert_rel(sel - none, m.layers * tf_layer_attn_flops(&m, 4096), 1e-12, "selective");
    /* Half the layers recomputed: halfway between none and full. */
    assert_rel(half - none, 0.5 * (full - none), 1e-12, "selective layers");
}

static void test_presets(void **state) {
    (void)state;
    catalog *c = builtin_catalog();
    static const struct { const char *name; double params; } want[] = {
        { "llama3-8b", 8.03e9 },   { "llama3-70b", 70.55e9 }, { "llama3-405b", 405.85e9 },
        { "llama2-7b", 6.74e9 },   { "llama2-13b", 13.02e9 }, { "llama2-70b", 68.98e9 },
        { "gpt3-175b", 174.6e9 },
        /* OPT-13B: 40 x (4 x 5120^2 + 2 x 5120 x 20480) + 50272 x 5120 tied = 12.84B
         * (the OPT paper's Table 1 names it 13B; its 2048 learned positions are not counted). */
        { "opt-13b", 12.84e9 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const llm_spec *m = catalog_llm(c, want[i].name);
        assert_non_null(m);
        assert_rel(pc_of(m).total, want[i].params, 0.005, want[i].name);
    }
    catalog_free(c);
}

/* MoE totals and active counts as the model cards state them: DeepSeek-V3
 * 671B total, 37B activated (arXiv 2412.19437, abstract); its MTP module
 * about 14B with the shared embedding and head (section 5.4.1 of the repo
 * README: 685B = 671B + 14B), here without them (~11.5B). Mixtral 8x7B:
 * 46.7B total, 12.9B active (Jiang et al. 2024, section 2). A dense model's
 * active count is its total. */
static void test_moe_counts(void **state) {
    (void)state;
    catalog *c = builtin_catalog();
    const llm_spec *ds = catalog_llm(c, "deepseek-v3");
    assert_non_null(ds);
    assert_int_equal(tf_moe_layers(ds), 58);
    assert_rel(pc_of(ds).total, 671e9, 0.01, "deepseek-v3 total");
    assert_rel(pc_of(ds).active, 37e9, 0.03, "deepseek-v3 active");
    assert_rel(pc_of(ds).mtp + 2 * pc_of(ds).embedding, 14e9, 0.10, "deepseek-v3 mtp");
    /* MLA caches the 512 latent and one 64-wide rotary key per layer. */
    assert_true(tf_kv_elems_per_layer(ds) == 576);
    const llm_spec *mx = catalog_llm(c, "mixtral-8x7b");
    assert_non_null(mx);
    assert_rel(pc_of(mx).total, 46.7e9, 0.01, "mixtral total");
    assert_rel(pc_of(mx).active, 12.9e9, 0.01, "mixtral active");
    const llm_spec *l3 = catalog_llm(c, "llama3-70b");
    assert_true(pc_of(l3).active == pc_of(l3).total);
    /* A window shrinks what windowed layers attend to, not the global ones. */
    llm_spec w = *l3;
    w.attn_window = 128;
    w.global_every = 2;
    assert_rel(tf_mean_attended(&w, 8192), (40 * 8192.0 + 40 * 128.0) / 80, 1e-12, "window");
    catalog_free(c);
}

/* The 2025-2026 presets (models/catalog/llms.xml) against the totals and
 * active counts their model cards state (docs/models-moe.md has the table
 * and the sources). Residuals the count leaves, all under the tolerances:
 *   - Llama 4 Scout and Maverick: Meta's totals (109B, 400B) are of the
 *     multimodal checkpoint; the preset is the text model, without the
 *     vision encoder and projector (~0.9B), so Scout counts ~1% low.
 *   - gpt-oss: the count omits the q/k/v/o, router and expert biases and
 *     the per-head attention sinks (~40M in 117B). OpenAI's active figure
 *     leaves the input embedding out (a lookup; the unembedding is in it):
 *     5.7B with the embedding, 5.1B without, so that is compared.
 *   - Qwen3: the per-head q/k RMSNorm weights (2 x 128 per layer) are not
 *     counted (~24K in 235B).
 *   - Granite: the size is the bf16 checkpoint's bytes / 2 (8.17B), read
 *     from shard sizes rounded to 10 MB. */
static void test_presets_2026(void **state) {
    (void)state;
    catalog *c = builtin_catalog();
    static const struct {
        const char *name;
        double total, active;  /* model card; active 0: dense (= total) */
        int no_embed;          /* the card's active count leaves the embedding out */
    } want[] = {
        { "qwen3-235b-a22b", 235e9, 22e9, 0 },  { "qwen3-30b-a3b", 30.5e9, 3.3e9, 0 },
        { "llama4-scout", 109e9, 17e9, 0 },     { "llama4-maverick", 400e9, 17e9, 0 },
        { "gpt-oss-120b", 116.8e9, 5.1e9, 1 },  { "gpt-oss-20b", 20.9e9, 3.6e9, 1 },
        { "mixtral-8x22b", 141e9, 39e9, 0 },    { "qwen3-8b", 8.2e9, 0, 0 },
        { "qwen3-32b", 32.8e9, 0, 0 },          { "llama3.1-70b", 70.55e9, 0, 0 },
        { "llama3.1-405b", 405.85e9, 0, 0 },    { "granite-3.3-8b", 8.17e9, 0, 0 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const llm_spec *m = catalog_llm(c, want[i].name);
        assert_non_null(m);
        assert_rel(pc_of(m).total, want[i].total, 0.02, want[i].name);
        double active = pc_of(m).active - (want[i].no_embed ? pc_of(m).embedding : 0);
        if (want[i].active > 0) assert_rel(active, want[i].active, 0.03, want[i].name);
        else assert_true(pc_of(m).active == pc_of(m).total);
        assert_true(tf_is_moe(m) == (want[i].active > 0));
    }
    catalog_free(c);
}

/* The layer structure behind those counts: Maverick's MoE on every other
 * layer, Qwen3's query wider than the hidden size (64 x 128 = 8192 on
 * 4096), GPT-OSS's and Llama 4's windows, and the KV cache of each. */
static void test_presets_2026_structure(void **state) {
    (void)state;
    catalog *c = builtin_catalog();
    const llm_spec *mav = catalog_llm(c, "llama4-maverick");
    const llm_spec *scout = catalog_llm(c, "llama4-scout");
    const llm_spec *qw = catalog_llm(c, "qwen3-235b-a22b");
    const llm_spec *oss = catalog_llm(c, "gpt-oss-120b");
    assert_true(mav && scout && qw && oss);
    assert_int_equal(tf_moe_layers(mav), 24);
    assert_int_equal(tf_dense_layers(mav), 24);
    assert_int_equal(tf_moe_layers(scout), 48);
    /* A token passes one routed and the shared expert (2 x 8192 wide), as
     * wide as Maverick's dense layers (16384): the two active counts differ
     * by their routers only. */
    assert_rel(pc_of(mav).active - pc_of(scout).active,
               24 * pc_of(mav).router - 48 * pc_of(scout).router, 1e-9, "llama4 active");
    tf_dims d;
    tf_dims_of(qw, &d);
    assert_true(d.q_dim == 8192 && d.kv_dim == 512);
    assert_rel(pc_of(qw).attn, 4096.0 * (8192 + 2 * 512) + 8192.0 * 4096, 1e-12, "qwen3 attn");
    assert_true(tf_kv_elems_per_layer(qw) == 1024);
    assert_true(tf_kv_elems_per_layer(oss) == 2 * 8 * 64);
    /* Half of GPT-OSS's layers see 128 tokens; 3 in 4 of Llama 4's see 8192. */
    assert_rel(tf_mean_attended(oss, 65536), (18 * 65536.0 + 18 * 128.0) / 36, 1e-12, "gpt-oss window");
    assert_rel(tf_mean_attended(scout, 131072), (12 * 131072.0 + 36 * 8192.0) / 48, 1e-12, "llama4 chunk");
    catalog_free(c);
}

/* gated_ffn not given (-1): inferred from ffn_hidden, and the inference
 * agrees with every preset's published architecture (SwiGLU Llamas, GeLU
 * GPT-3, MPT-7B and ReLU OPT-13B with ffn = 4·hidden). */
static void test_gated_inferred(void **state) {
    (void)state;
    catalog *c = builtin_catalog();
    static const char *const names[] = { "llama3-8b", "llama3-70b", "llama3-405b", "llama2-7b",
                                         "llama2-13b", "llama2-70b", "gpt3-175b", "mpt-7b", "opt-13b" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const llm_spec *m = catalog_llm(c, names[i]);
        assert_non_null(m);
        llm_spec u = *m;
        u.gated_ffn = -1;
        tf_dims a, b;
        tf_dims_of(m, &a);
        tf_dims_of(&u, &b);
        assert_int_equal(a.gated, b.gated);
        assert_true(pc_of(&u).total == pc_of(m).total);
    }
    catalog_free(c);
}

static void test_six_n(void **state) {
    (void)state;
    /* GQA and a gated FFN: Llama 3 70B. */
    llm_spec m = mha(80, 8192, 64, 128256);
    m.kv_heads = 8;
    m.ffn_hidden = 28672;
    m.gated_ffn = 1;
    double n = m.layers * pc_of(&m).layer_matmul + pc_of(&m).output;
    double s = 8192;
    assert_rel(tf_model_flops_per_token(&m, s), 6 * n + 12.0 * m.layers * m.hidden * s, 1e-12, "6N+12lhs");
    /* GQA: K and V have kv_heads·head_dim columns; gated FFN three matrices. */
    double h = 8192, kv = 8 * 128, f = 28672;
    assert_rel(pc_of(&m).layer_matmul, h * (h + 2 * kv) + h * h + 3 * h * f, 1e-12, "layer");
}

static void test_gemm_shapes(void **state) {
    (void)state;
    llm_spec m = mha(1, 12288, 96, 50000);
    m.kv_heads = 8;
    m.gated_ffn = 1;
    m.ffn_hidden = 32768;
    for (int tp = 1; tp <= 8; tp *= 2) {
        tf_gemm g[4];
        double tokens = 4096;
        tf_layer_gemms(&m, tokens, tp, g);
        double flops = 0;
        for (int i = 0; i < 4; i++) {
            assert_true(g[i].m == tokens && g[i].n > 0 && g[i].k > 0);
            flops += 2 * g[i].m * g[i].n * g[i].k;
        }
        assert_rel(flops * tp, tokens * tf_layer_gemm_flops(&m), 1e-12, "gemm shapes");
    }
}

/* Prompt pairs under each attention kind against a count, position by
 * position: global layers see every earlier key and themselves, windowed
 * ones the last W, chunked ones the earlier keys of their own chunk; the
 * layers' mean weighs them by their numbers (global_every). */
static double brute_pairs(double o, double c, double w, int kind) {
    double n = 0;
    for (double p = o; p < o + c; p++)
        n += kind == 0 ? p + 1 : kind == 1 ? fmin(p + 1, w) : fmod(p, w) + 1;
    return n;
}

static void test_mean_pairs(void **state) {
    (void)state;
    llm_spec g = mha(8, 1024, 8, 1000), win = g, chk = g;
    win.attn_window = chk.attn_window = 64;
    win.global_every = chk.global_every = 4;      /* 6 of 8 layers local */
    chk.attn_chunked = 1;
    static const double cases[][2] = { { 0, 1 }, { 0, 64 }, { 0, 200 }, { 63, 2 }, { 100, 37 }, { 128, 128 },
                                       { 190, 300 }, { 1000, 1 } };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double o = cases[i][0], c = cases[i][1], full = brute_pairs(o, c, 0, 0);
        assert_rel(tf_mean_pairs(&g, o, c), full, 1e-12, "global");
        assert_rel(tf_mean_pairs(&g, o, c), c * o + c * (c + 1) / 2, 1e-12, "serve_chunk_pairs' form");
        assert_rel(tf_mean_pairs(&win, o, c), (2 * full + 6 * brute_pairs(o, c, 64, 1)) / 8, 1e-12, "window");
        assert_rel(tf_mean_pairs(&chk, o, c), (2 * full + 6 * brute_pairs(o, c, 64, 2)) / 8, 1e-12, "chunk");
    }
    /* past the first chunk, a chunk's queries attend fewer keys than a window's */
    assert_true(tf_mean_pairs(&chk, 4096, 64) < tf_mean_pairs(&win, 4096, 64));
    assert_true(tf_mean_pairs(&chk, 0, 64) == tf_mean_pairs(&win, 0, 64));
}

static void test_causal_and_elementwise(void **state) {
    (void)state;
    assert_rel(tf_causal_fraction(8192), 0.5, 1e-3, "causal");
    assert_true(tf_causal_fraction(1) == 1);
    llm_spec gelu = mha(1, 4096, 32, 1000), glu = gelu;
    glu.gated_ffn = 1;
    tf_elementwise a, b;
    tf_layer_elementwise(&gelu, 2, &a);
    tf_layer_elementwise(&glu, 2, &b);
    assert_true(a.hidden_bytes == b.hidden_bytes);
    assert_true(b.split_bytes > a.split_bytes);         /* SwiGLU reads two inputs */
    assert_true(tf_unfused_score_bytes(2) == 13);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eq3),
        cmocka_unit_test(test_recompute_order),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_moe_counts),
        cmocka_unit_test(test_presets_2026),
        cmocka_unit_test(test_presets_2026_structure),
        cmocka_unit_test(test_gated_inferred),
        cmocka_unit_test(test_six_n),
        cmocka_unit_test(test_gemm_shapes),
        cmocka_unit_test(test_causal_and_elementwise),
        cmocka_unit_test(test_mean_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
