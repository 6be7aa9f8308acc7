/*
 * test_serving_spec: speculative decoding (models/serving_spec, its hooks
 * in sim/serving_*; docs/speculative-decoding.md).
 *
 * Where the expected figures come from:
 * - Expected tokens per step, fixed acceptance a and k guesses:
 *   (1 - a^(k+1)) / (1 - a) (Leviathan, Kalman and Matias 2023, eq. 1);
 *   per position, 1 + sum_i prod_{j<=i} a_j. a = 0 gives 1, a = 1 gives k+1.
 * - Batch 1 decode reads every weight once for one token, so verifying
 *   k+1 tokens costs about one decode step and speculation speeds decoding
 *   up; at a large batch the verification is compute-bound and costs about
 *   k+1 decode steps, so the gain shrinks below 1 (the low- vs high-QPS
 *   result of the vLLM team's speculative decoding post, 2024-10-17).
 * - Published speed-ups are replayed through the CLI by tests/cli_spec.sh
 *   (tests/validation/replays/inference_spec.csv).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/catalogfix.h"
#include "tests/servefix.h"
#include "tests/simrun.h"

#include "models/serving.h"
#include "models/serving_spec.h"
#include "sim/serving.h"

/* A preset of the catalog on a node type (tests/servefix.h). */
static serve_model model_on(const char *llm, const char *node_type, int tp, int ep, precision w) {
    return layout_on(catalog_llm(cat, llm), node_type, tp, ep, w);
}

static serve_spec spec_of(spec_method m, int k, double a, const serve_model *draft) {
    serve_spec sp = { m, k, { 0 }, draft };
    for (int i = 0; i < SPEC_MAX_TOKENS; i++) sp.accept[i] = a;
    return sp;
}

/* Seconds per output token of a decode batch of n sequences of context
 * ctx each: a plain step, or 1/E of a speculative one. */
static double plain_per_token(const serve_model *sm, double n, double ctx) {
    serve_batch b = { 0 };
    b.decode_seqs = n;
    b.decode_ctx = n * ctx;
    return serve_tokens_s(sm, n, n, NULL) + serve_context_s(sm, 0, 0, b.decode_ctx, n, NULL);
}

static double spec_per_token(const serve_spec *sp, const serve_model *sm, double n, double ctx) {
    serve_batch b = { 0 };
    b.decode_seqs = n;
    b.decode_ctx = n * ctx;
    return serve_spec_iter_s(sp, sm, &b, NULL);
}

static void test_expected_tokens(void **state) {
    (void)state;
    serve_spec sp = spec_of(SPEC_EAGLE, 4, 0.7, NULL);
    assert_float_equal(serve_spec_expected_tokens(&sp), (1 - pow(0.7, 5)) / (1 - 0.7), 1e-12);
    sp = spec_of(SPEC_EAGLE, 3, 0, NULL);
    assert_float_equal(serve_spec_expected_tokens(&sp), 1, 1e-12);
    sp = spec_of(SPEC_EAGLE, 3, 1, NULL);
    assert_float_equal(serve_spec_expected_tokens(&sp), 4, 1e-12);
    /* per position: 1 + 0.8 + 0.8*0.5 + 0.8*0.5*0.25 */
    serve_spec pp = { SPEC_MTP, 3, { 0.8, 0.5, 0.25 }, NULL };
    assert_float_equal(serve_spec_expected_tokens(&pp), 2.3, 1e-12);
    /* the bisection inverts the fixed form */
    for (int k = 1; k <= 8; k++) {
        double a = serve_spec_fixed_acceptance(1 + 0.6 * k, k);
        serve_spec fx = spec_of(SPEC_EAGLE, k, a, NULL);
        assert_float_equal(serve_spec_expected_tokens(&fx), 1 + 0.6 * k, 1e-9);
    }
    assert_int_equal(spec_method_parse("mtp"), SPEC_MTP);
    assert_int_equal(spec_method_parse("ngram"), -1);
    assert_string_equal(spec_method_name(SPEC_DRAFT), "draft");
}

/* Llama 3.1 8B on one H100 with a Llama 3.2 1B draft, 4 guesses at 0.7:
 * faster than plain decoding at batch 1, the gain shrinking with the
 * batch, slower at 256. */
static void test_speedup_low_vs_high_batch(void **state) {
    (void)state;
    serve_model t = model_on("llama3.1-8b", "dgx-h100", 1, 1, PREC_BF16);
    serve_model d = model_on("llama3.2-1b", "dgx-h100", 1, 1, PREC_BF16);
    serve_spec sp = spec_of(SPEC_DRAFT, 4, 0.7, &d);
    const double n[] = { 1, 8, 32, 128, 256 };
    double prev = INFINITY;
    for (int i = 0; i < 5; i++) {
        double s = plain_per_token(&t, n[i], 2000) / spec_per_token(&sp, &t, n[i], 2000);
        printf("  batch %3.0f: speed-up %.2f\n", n[i], s);
        assert_true(s < prev);
        prev = s;
        if (n[i] == 1) assert_true(s > 1.3);
    }
    assert_true(prev < 1);
}

/* Verifying k+1 tokens of one sequence costs about a decode step (weights
 * read once); of 256 sequences, several (compute-bound). */
static void test_verify_cost(void **state) {
    (void)state;
    serve_model t = model_on("llama3-70b", "dgx-h100", 4, 1, PREC_FP8);
    serve_spec sp = spec_of(SPEC_EAGLE, 4, 0.8, NULL);
    double one = plain_per_token(&t, 1, 1000), many = plain_per_token(&t, 256, 1000);
    double v1 = serve_spec_step_s(&sp, &t, 1, 1000), vn = serve_spec_step_s(&sp, &t, 256, 256 * 1000.0);
    printf("  batch 1: step %.2f ms vs decode %.2f ms; batch 256: %.2f ms vs %.2f ms\n", v1 * 1e3, one * 1e3,
           vn * 1e3, many * 1e3);
    assert_true(v1 < 1.4 * one);
    assert_true(vn > 2.5 * many);
}

/* The proposer's memory: a draft's weights and KV cache; a head's one
 * layer of the target. */
static void test_proposer_memory(void **state) {
    (void)state;
    serve_model t = model_on("llama3.1-8b", "dgx-h100", 1, 1, PREC_BF16);
    serve_model d = model_on("llama3.2-1b", "dgx-h100", 1, 1, PREC_BF16);
    serve_spec dr = spec_of(SPEC_DRAFT, 4, 0.7, &d), hd = spec_of(SPEC_EAGLE, 4, 0.7, NULL);
    /* Llama 3.2 1B in bf16: 1.24e9 parameters (tied embeddings), 2.47 GB */
    assert_true(fabs(serve_spec_weight_bytes(&dr, &t) / 2.47e9 - 1) < 0.02);
    /* its KV: 2 x 16 layers x 8 heads x 64 x 2 bytes = 32 KiB per token */
    assert_float_equal(serve_spec_kv_bytes_per_token(&dr, &t), 32768, 1e-6);
    assert_float_equal(serve_spec_kv_bytes_per_token(&hd, &t), t.kv_bytes_per_token / 32, 1e-6);
    assert_float_equal(serve_spec_weight_bytes(&hd, &t), t.layer_weight_bytes, 1e-6);
    serve_spec none = { SPEC_NONE, 0, { 0 }, NULL };
    assert_float_equal(serve_spec_weight_bytes(&none, &t), 0, 0);
}

/* Prompt chunks in a speculative iteration cost what they add to the
 * verification pass plus the proposer's prefill of them; never less
 * than nothing, and a prompt alone costs at least its plain prefill. */
static void test_prefill_in_iteration(void **state) {
    (void)state;
    serve_model t = model_on("llama3.1-8b", "dgx-h100", 1, 1, PREC_BF16);
    serve_model d = model_on("llama3.2-1b", "dgx-h100", 1, 1, PREC_BF16);
    serve_spec sp = spec_of(SPEC_DRAFT, 3, 0.6, &d);
    serve_batch b = { 0 };
    b.prefill_tokens = 2048;
    b.prefill_pairs = serve_chunk_pairs(2048, 0);
    b.prefill_done = 1;
    double alone = serve_spec_iter_s(&sp, &t, &b, NULL), plain = serve_iter_s(&t, &b, NULL);
    assert_true(alone > plain);
    assert_true(alone < 1.5 * plain);
    b.decode_seqs = 16;
    b.decode_ctx = 16 * 1000.0;
    double dec, mixed = serve_spec_iter_s(&sp, &t, &b, &dec);
    assert_true(dec > 0 && mixed > dec);
    assert_float_equal(dec, spec_per_token(&sp, &t, 16, 1000), 1e-12);
}

static const char *SVC =
    "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster><workload>"
    "<inference name=\"s\" model=\"llama3.1-8b\" tp=\"1\" replicas=\"1\" max-batch=\"%d\">"
    "<arrivals process=\"%s\" %s count=\"%d\"/><requests input-tokens=\"1000\" output-tokens=\"300\"/>%s"
    "</inference></workload></scenario>";

static service_result run_svc(int max_batch, const char *process, const char *rate, int count, const char *spec) {
    char xml[2048];
    snprintf(xml, sizeof xml, SVC, max_batch, process, rate, count, spec);
    run r = simulate(xml, 3);
    service_result s = *world_service(r.w, 0);
    done(&r);
    return s;
}

/* Through the simulator: at light load the draft cuts the time per output
 * token; offline at a large batch it costs throughput; every request
 * completes; the same seed gives the same results; the proposer's
 * memory leaves a smaller KV cache. */
static void test_service(void **state) {
    (void)state;
    const char *spec = "<speculative method=\"draft\" draft-model=\"llama3.2-1b\" tokens=\"4\" acceptance=\"0.7\"/>";
    service_result lp = run_svc(256, "poisson", "rate=\"0.5/s\"", 100, "");
    service_result ls = run_svc(256, "poisson", "rate=\"0.5/s\"", 100, spec);
    service_result ls2 = run_svc(256, "poisson", "rate=\"0.5/s\"", 100, spec);
    service_result hp = run_svc(256, "offline", "", 2000, "");
    service_result hs = run_svc(256, "offline", "", 2000, spec);
    printf("  light load TPOT p50 %.2f -> %.2f ms; offline %.0f -> %.0f tokens/s; E %.3f\n", lp.tpot_p50_s * 1e3,
           ls.tpot_p50_s * 1e3, hp.output_tokens_per_s, hs.output_tokens_per_s, ls.spec_tokens_per_step);
    assert_int_equal(ls.requests, 100);
    assert_int_equal(hs.requests, 2000);
    assert_true(ls.tpot_p50_s < 0.7 * lp.tpot_p50_s);
    assert_true(hs.output_tokens_per_s < hp.output_tokens_per_s);
    assert_memory_equal(&ls, &ls2, sizeof ls);
    assert_true(ls.kv_capacity_tokens < lp.kv_capacity_tokens);
    assert_true(ls.weight_bytes_per_gpu > lp.weight_bytes_per_gpu + 2e9);
    assert_string_equal(ls.spec_method, "draft");
    assert_int_equal(ls.spec_draft_tokens, 4);
    assert_float_equal(ls.spec_tokens_per_step, (1 - pow(0.7, 5)) / 0.3, 1e-9);
    assert_float_equal(ls.spec_acceptance, (ls.spec_tokens_per_step - 1) / 4, 1e-12);
    assert_int_equal(lp.spec_draft_tokens, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_tokens),
        cmocka_unit_test(test_speedup_low_vs_high_batch),
        cmocka_unit_test(test_verify_cost),
        cmocka_unit_test(test_proposer_memory),
        cmocka_unit_test(test_prefill_in_iteration),
        cmocka_unit_test(test_service),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
