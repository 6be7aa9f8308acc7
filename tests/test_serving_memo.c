/*
 * test_serving_memo: the memo of serve_tokens_s (sim/serving_memo.c) and
 * the two halves it keeps (models/serving.h serve_tokens_part,
 * serve_rows_part, serve_tokens_sum).
 *
 * A remembered price must be the very number serve_tokens_s gives (the
 * memo may never move a result), bit for bit, for dense and expert-parallel
 * models, with and without tensor parallelism, for no rows of logits and
 * for counts past the memo's cap (priced afresh). Each count is priced
 * once: after the model changes under the memo, the counts seen give their
 * old halves and new counts the changed model's. The price for as many
 * rows as tokens and the graph batch, remembered whole, are the same
 * numbers too, as is serve_context_s where it skips pricing the decode's
 * attention compute (models/serving.c decode_read_bound).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/catalogfix.h"
#include "tests/servefix.h"

#include "sim/serving_int.h"

#define TOKENS 8192
#define ROWS 300

/* A bare service of one model: only what the memo reads. */
static serving *service_of(serve_model *sm) {
    serving *sv = calloc(1, sizeof *sv);
    assert_non_null(sv);
    sv->n_models = 1;
    sv->models = sm;
    sv->memo = calloc(1, sizeof *sv->memo);
    assert_non_null(sv->memo);
    return sv;
}

static void free_service(serving *sv) {
    sv_memo_free(sv);
    free(sv);
}

static void assert_same(serving *sv, const serve_model *sm, int64_t t, int64_t r) {
    double want = serve_tokens_s(sm, (double)t, (double)r, NULL), got = sv_tokens_s(sv, 0, t, r);
    if (memcmp(&got, &want, sizeof got) != 0) fail_msg("tokens %lld rows %lld: %.17g, not %.17g", (long long)t,
                                                       (long long)r, got, want);
}

/* Every pair, first seen and seen again, is serve_tokens_s's number. */
static void same_numbers(serve_model sm) {
    serving *sv = service_of(&sm);
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t t = 1; t <= TOKENS; t += 13)
            for (int64_t r = 0; r <= ROWS; r += 7) assert_same(sv, &sm, t, r);
        assert_same(sv, &sm, MEMO_DENSE_MAX - 1, 1);      /* the last count kept */
        assert_same(sv, &sm, MEMO_DENSE_MAX + 5, 2);      /* past the cap: priced afresh */
    }
    assert_true(sv->memo[0].cap_tok <= MEMO_DENSE_MAX && sv->memo[0].cap_row <= MEMO_DENSE_MAX);
    free_service(sv);
}

static void test_same_numbers_dense_tp(void **state) {
    (void)state;
    same_numbers(layout_on(catalog_llm(cat, "llama3-70b"), "dgx-h100", 2, 1, PREC_FP8));
}

static void test_same_numbers_dense_one_gpu(void **state) {
    (void)state;
    same_numbers(layout_on(catalog_llm(cat, "llama3-8b"), "dgx-h100", 1, 1, PREC_BF16));
}

static void test_same_numbers_expert_parallel(void **state) {
    (void)state;
    serve_model sm = layout_on(catalog_llm(cat, "deepseek-v3"), "hgx-h200", 8, 8, PREC_FP8);
    serve_tok_part tp;
    serve_tokens_part(&sm, 64, &tp);
    assert_true(tp.a2a_s > 0 && tp.allreduce_s > 0);   /* every term of the sum is exercised */
    same_numbers(sm);
}

/* The halves add up to serve_tokens_s's breakdown, part by part. */
static void test_breakdown(void **state) {
    (void)state;
    serve_model sm = layout_on(catalog_llm(cat, "deepseek-v3"), "hgx-h200", 8, 8, PREC_FP8);
    serve_breakdown a, b;
    serve_tok_part tp;
    serve_row_part rp;
    double t = serve_tokens_s(&sm, 300, 40, &a);
    serve_tokens_part(&sm, 300, &tp);
    serve_rows_part(&sm, 40, &rp);
    assert_true(serve_tokens_sum(&sm, &tp, &rp, &b) == t);
    assert_true(a.linear_s == b.linear_s && a.lm_head_s == b.lm_head_s && a.elementwise_s == b.elementwise_s);
    assert_true(a.comm_s == b.comm_s && a.a2a_s == b.a2a_s && a.launch_s == b.launch_s);
    assert_true(t == a.linear_s + a.lm_head_s + a.elementwise_s + a.comm_s + a.launch_s);
    assert_true(serve_tokens_s(&sm, 0, 5, &a) == 0 && a.linear_s == 0 && a.comm_s == 0);
}

/* Counts are remembered, not priced again: after the GPU's memory gets
 * slower under the memo (every half moves), the pairs of counts seen give
 * their old numbers, a new token count the changed model's own half. */
static void test_remembers(void **state) {
    (void)state;
    serve_model sm = layout_on(catalog_llm(cat, "llama3-70b"), "dgx-h100", 2, 1, PREC_FP8);
    serving *sv = service_of(&sm);
    for (int64_t t = 1; t <= TOKENS; t++) sv_tokens_s(sv, 0, t, t % (ROWS + 1));
    serve_model old = sm;
    sm.hbm_bytes_per_s /= 2;
    for (int64_t t = 1; t <= TOKENS; t += 5) {
        int64_t r = (t * 7) % (ROWS + 1);              /* a pair never asked for, of counts seen */
        double want = serve_tokens_s(&old, (double)t, (double)r, NULL), got = sv_tokens_s(sv, 0, t, r);
        assert_memory_equal(&got, &want, sizeof got);
    }
    serve_tok_part tp;
    serve_row_part rp;
    serve_tokens_part(&sm, TOKENS + 1, &tp);           /* never seen: the changed model's */
    serve_rows_part(&old, 1, &rp);                     /* seen: the old model's */
    double fresh = sv_tokens_s(sv, 0, TOKENS + 1, 1);
    assert_true(fresh == serve_tokens_sum(&sm, &tp, &rp, NULL));
    assert_true(fresh != serve_tokens_s(&old, TOKENS + 1, 1, NULL));
    free_service(sv);
}

/* As many rows as tokens (the memo's third array) and the decode-only
 * iteration's graph batch, first asked and asked again: the numbers
 * serve_tokens_s and serve_graph_batch give. */
static void test_same_counts(void **state) {
    (void)state;
    serve_model sm = layout_on(catalog_llm(cat, "llama3-70b"), "dgx-h100", 2, 1, PREC_FP8);
    char why[128];
    assert_int_equal(serve_graph_sizes_parse("1,2,4,8-512/8", &sm.p, why, sizeof why), 0);   /* vLLM's */
    serving *sv = service_of(&sm);
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t n = 1; n <= 2 * TOKENS; n += 3) assert_same(sv, &sm, n, n);
        for (int64_t n = 1; n <= 1000; n++)
            assert_int_equal(sv_graph_batch(sv, 0, n), (int64_t)serve_graph_batch(&sm.p, (double)n));
    }
    assert_true(sv->memo[0].cap_same > 0 && sv->memo[0].cap_graph > 0);
    assert_int_equal(sv_graph_batch(sv, 0, 3), 4);      /* the next captured size */
    assert_int_equal(sv_graph_batch(sv, 0, 513), 513);  /* past the largest: run as it is */
    free_service(sv);
}

/* Where serve_model_init proves decode attention read-bound, its compute
 * is not priced: serve_context_s gives the same number as pricing both,
 * at every context, with and without prompts in the batch. */
static void same_context(serve_model sm) {
    serve_model both = sm;
    both.decode_read_bound = 0;
    for (double ctx = 1; ctx < 1e9; ctx *= 1.37)
        for (int k = 0; k < 3; k++) {
            double pairs = k == 0 ? 0 : k == 1 ? 1e5 : 3e7, seqs = ctx < 256 ? 1 : 256;
            serve_breakdown a, b;
            double x = serve_context_s(&sm, pairs, 0, ctx, seqs, &a);
            double y = serve_context_s(&both, pairs, 0, ctx, seqs, &b);
            assert_memory_equal(&x, &y, sizeof x);
            assert_memory_equal(&a.kv_read_s, &b.kv_read_s, sizeof a.kv_read_s);
        }
}

static void test_decode_read_bound(void **state) {
    (void)state;
    serve_model gqa = layout_on(catalog_llm(cat, "llama3-70b"), "dgx-h100", 2, 1, PREC_FP8);
    assert_int_equal(gqa.decode_read_bound, 1);         /* 8 KV heads for 64 query heads */
    same_context(gqa);
    same_context(layout_on(catalog_llm(cat, "llama3-8b"), "dgx-h100", 1, 1, PREC_BF16));
    same_context(layout_on(catalog_llm(cat, "deepseek-v3"), "hgx-h200", 8, 8, PREC_FP8));
    serve_model mla = layout_on(catalog_llm(cat, "deepseek-v3"), "hgx-h200", 8, 8, PREC_FP8);
    assert_int_equal(mla.decode_read_bound, 0);         /* MLA decode over one latent: not read-bound by 2x */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_numbers_dense_tp),
        cmocka_unit_test(test_same_numbers_dense_one_gpu),
        cmocka_unit_test(test_same_numbers_expert_parallel),
        cmocka_unit_test(test_breakdown),
        cmocka_unit_test(test_remembers),
        cmocka_unit_test(test_same_counts),
        cmocka_unit_test(test_decode_read_bound),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
