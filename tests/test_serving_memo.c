/*
 * test_serving_memo: the memo of serve_tokens_s (sim/serving_memo.c).
 *
 * A remembered price must be the very number serve_tokens_s gives (the
 * memo may never move a result), every pair priced must be remembered
 * until the table reaches its cap, and the table must stay within its
 * cap (MEMO_MAX_BITS) however many pairs come. The pairs are those of a
 * token budget of 8192 and up to 100 rows of logits: 819,200 of them, more
 * than the capped table holds (786,432), so it starts again empty once.
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
#define ROWS 100

/* A bare service of one model, Llama 3 70B fp8 on two H100s: only what the memo reads. */
static serving *service_of(serve_model *sm) {
    serving *sv = calloc(1, sizeof *sv);
    assert_non_null(sv);
    *sm = layout_on(catalog_llm(cat, "llama3-70b"), "dgx-h100", 2, 1, PREC_FP8);
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

/* Every pair, first seen and seen again, is serve_tokens_s's number, bit for bit. */
static void test_same_numbers(void **state) {
    (void)state;
    serve_model sm;
    serving *sv = service_of(&sm);
    for (int pass = 0; pass < 2; pass++)
        for (int64_t t = 1; t <= 2048; t += 7)
            for (int64_t r = 0; r <= ROWS; r += 3) {
                double want = serve_tokens_s(&sm, (double)t, (double)r, NULL), got = sv_tokens_s(sv, 0, t, r);
                assert_memory_equal(&got, &want, sizeof got);
            }
    free_service(sv);
}

/* Pairs are remembered, not priced again: after the model changes under
 * the memo, every pair seen since the table last started gives its old
 * number. The table never passes its cap, and starts again past it. */
static void test_remembers_within_cap(void **state) {
    (void)state;
    serve_model sm;
    serving *sv = service_of(&sm);
    size_t cap_pairs = (size_t)3 << (MEMO_MAX_BITS - 2), seen = 0;
    int restarted = 0;
    for (int64_t t = 1; t <= TOKENS; t++)
        for (int64_t r = 1; r <= ROWS; r++) {
            size_t before = sv->memo[0].n;
            sv_tokens_s(sv, 0, t, r);
            if (sv->memo[0].n < before) restarted = 1;
            seen++;
            assert_true(sv->memo[0].bits <= MEMO_MAX_BITS);
            assert_true(4 * sv->memo[0].n <= 3 * ((size_t)1 << sv->memo[0].bits));
        }
    assert_true(seen > cap_pairs);
    assert_true(restarted);
    size_t kept = sv->memo[0].n;
    assert_true(kept > 0 && kept < cap_pairs);
    serve_model old = sm;
    sm.p.kernel_gap_s *= 2;                   /* a new evaluation would now differ */
    /* the last `kept` pairs seen, newest first */
    size_t k = 0;
    for (int64_t t = TOKENS; t >= 1 && k < kept; t--)
        for (int64_t r = ROWS; r >= 1 && k < kept; r--, k++) {
            double want = serve_tokens_s(&old, (double)t, (double)r, NULL), got = sv_tokens_s(sv, 0, t, r);
            assert_memory_equal(&got, &want, sizeof got);
        }
    double fresh = sv_tokens_s(sv, 0, TOKENS + 1, 1);   /* never seen: priced with the changed model */
    assert_true(fresh == serve_tokens_s(&sm, TOKENS + 1, 1, NULL));
    assert_true(fresh != serve_tokens_s(&old, TOKENS + 1, 1, NULL));
    free_service(sv);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_numbers),
        cmocka_unit_test(test_remembers_within_cap),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
