/*
 * test_serving_chunk: the simulator's running sum of what chunked
 * attention's layers read in decode (sim/serving_chunk.c) against a count
 * over the sequences, iteration by iteration, as sequences enter and leave
 * decode at any context, bases below 1 included; a model without chunked
 * layers keeps no tree and answers -1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/serving_int.h"

#define C 64
#define N 300

/* Keys a chunked layer reads for one sequence of context p: the earlier
 * keys of its own chunk and itself. */
static int64_t keys(int64_t p) { return (p - 1) % C + 1; }

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void test_against_count(void **state) {
    (void)state;
    llm_spec m;
    memset(&m, 0, sizeof m);
    m.layers = 48;
    m.attn_window = C;
    m.global_every = 4;
    m.attn_chunked = 1;
    mstate ms;
    memset(&ms, 0, sizeof ms);
    assert_int_equal(sv_chunk_init(&ms, &m), 0);
    assert_int_equal(ms.chunk, C);
    int64_t base[N];
    int on[N] = { 0 }, n = 0;
    int64_t S = 0;
    uint64_t seed = 7;
    for (int64_t it = 0; it < 5 * C + 7; it++) {
        /* a few enter (context k at iteration it: base k + 1 - it, as
         * serving_batch.c's enter_decode sets it) and a few leave */
        for (int j = 0; j < 4; j++) {
            int i = (int)(lcg(&seed) % N);
            if (!on[i]) {
                int64_t k = 1 + (int64_t)(lcg(&seed) % (3 * C));
                base[i] = k + 1 - it;
                sv_chunk_put(&ms, base[i], 1);
                S += base[i];
                on[i] = 1;
                n++;
            } else if (lcg(&seed) % 2) {
                sv_chunk_put(&ms, base[i], -1);
                S -= base[i];
                on[i] = 0;
                n--;
            }
        }
        int64_t want = 0;
        for (int i = 0; i < N; i++)
            if (on[i]) want += keys(base[i] + it);
        assert_true(sv_chunk_keys(&ms, S, it) == (double)want);
        assert_true(ms.cn == n);
    }
    sv_chunk_clear(&ms);
    assert_true(sv_chunk_keys(&ms, 0, 12345) == 0);
    free(ms.cfw);
}

static void test_no_chunks(void **state) {
    (void)state;
    llm_spec m;
    memset(&m, 0, sizeof m);
    m.layers = 36;
    m.attn_window = 128;                /* a sliding window: the mean context answers */
    m.global_every = 2;
    mstate ms;
    memset(&ms, 0, sizeof ms);
    assert_int_equal(sv_chunk_init(&ms, &m), 0);
    assert_null(ms.cfw);
    sv_chunk_put(&ms, 100, 1);
    assert_true(sv_chunk_keys(&ms, 100, 3) == -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_count),
        cmocka_unit_test(test_no_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
