/*
 * test_serving_prefix: prefix caching and the routing policies of issue 21
 * (sim/serving_prefix.c, sim/serving_router.c, docs/prefix-caching.md).
 *
 * - The cache alone: keys found after many inserts and evictions (the
 *   backward-shift deletion keeps every probe run whole), blocks in use
 *   never evicted, idle ones evicted least recently used first.
 * - A shared system prompt: with caching the prompt's cached blocks are
 *   not prefilled, so time to first token falls and offline throughput
 *   rises; the hit rate is what the workload allows (the shared prompt's
 *   whole blocks over the prompt tokens, less the first miss of each).
 * - Nothing shared: caching changes no latency and no throughput.
 * - A cache too small for the prompts evicts and still serves everything.
 * - Conversations: each turn's prompt holds the earlier turns, which the
 *   cache serves.
 * - Routing: prefix-aware keeps a prompt's requests on the replica that
 *   caches it (a higher hit rate than least-tokens over four replicas);
 *   random and power-of-two are seeded (same seed, same bytes) and
 *   power-of-two queues less than random.
 * - prefix-order: shuffled and grouped deal each prompt exactly count /
 *   prefixes requests (one at a time on one replica, each prompt misses
 *   exactly once, where independent draws leave some prompts out); grouped
 *   sends a prompt's requests together, so round-robin spreads them before
 *   any is cached and hits less than in the shuffled order.
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

#include "tests/simrun.h"

#include "sim/serving.h"
#include "sim/serving_prefix.h"
#include "sim/world.h"

static const service_result *svc(const run *r) { return world_service(r->w, 0); }

/* vLLM's way of serving: paged KV cache, chunked prefill */
#define VLLM "kv-allocation=\"on-demand\" chunked-prefill=\"true\" token-budget=\"2048\" max-batch=\"256\" "

/* A scenario with one Llama 3.1 8B service (128K context) on one DGX
 * H100. attrs: its <inference> attributes; body: its children. */
static char *one_service(char *buf, size_t len, const char *attrs, const char *body) {
    snprintf(buf, len,
             "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
             "<workload><inference name=\"svc\" model=\"llama3.1-8b\" %s>%s</inference></workload></scenario>",
             attrs, body);
    return buf;
}

/* Run the service with prefix caching off and on. */
static void run_both(const char *attrs, const char *body, run *off, run *on) {
    char xml[2048], a[512];
    snprintf(a, sizeof a, VLLM "%s prefix-caching=\"false\"", attrs);
    *off = simulate(one_service(xml, sizeof xml, a, body), 1);
    snprintf(a, sizeof a, VLLM "%s prefix-caching=\"true\"", attrs);
    *on = simulate(one_service(xml, sizeof xml, a, body), 1);
}

/* ---- the cache ----------------------------------------------------------- */

static void test_pcache(void **state) {
    (void)state;
    pcache c;
    pcache_init(&c);
    enum { N = 5000 };
    for (uint64_t k = 0; k < N; k++) assert_true(pcache_insert(&c, k * 7919, 10) >= 0);
    for (uint64_t k = 0; k < N; k++) assert_true(pcache_find(&c, k * 7919) >= 0);
    assert_int_equal(pcache_find(&c, 3), -1);
    /* all in use: nothing is evicted */
    assert_int_equal(pcache_trim(&c, 0), 0);
    /* release in order: key 0 first (least recently used) */
    for (uint64_t k = 0; k < N; k++) assert_true(pcache_unref(&c, pcache_find(&c, k * 7919)) == 10);
    assert_true(fabs(c.idle_bytes - 10.0 * N) < 1e-9);
    /* using an idle one again takes it off the LRU list */
    assert_true(pcache_ref(&c, pcache_find(&c, 0)) == 10);
    assert_int_equal(pcache_trim(&c, 10.0 * (N - 1) - 10.0 * 1000), 1000);   /* keys 1 .. 1000 go */
    assert_true(pcache_find(&c, 0) >= 0);
    for (uint64_t k = 1; k <= 1000; k++) assert_int_equal(pcache_find(&c, k * 7919), -1);
    for (uint64_t k = 1001; k < N; k++) assert_true(pcache_find(&c, k * 7919) >= 0);
    /* slots are reused and every key stays reachable */
    for (uint64_t k = 0; k < 2000; k++) assert_true(pcache_insert(&c, 1000003 + k, 10) >= 0);
    for (uint64_t k = 1001; k < N; k++) assert_true(pcache_find(&c, k * 7919) >= 0);
    for (uint64_t k = 0; k < 2000; k++) assert_true(pcache_find(&c, 1000003 + k) >= 0);
    assert_int_equal(c.evicted, 1000);
    pcache_free(&c);
}

/* ---- a shared system prompt ---------------------------------------------- */

static void test_shared_prompt(void **state) {
    (void)state;
    run off, on;
    const char *body = "<arrivals process=\"poisson\" rate=\"20/s\" count=\"3000\"/>"
                       "<requests input-tokens=\"200\" output-tokens=\"100\" prefix-tokens=\"1600\" prefixes=\"10\"/>";
    run_both("", body, &off, &on);
    const service_result *a = svc(&off), *b = svc(&on);
    printf("  1600-token prompt of 10: TTFT mean %.1f ms off, %.1f ms on; hit rate %.3f\n", a->ttft_mean_s * 1e3,
           b->ttft_mean_s * 1e3, b->prefix_hit_rate);
    assert_int_equal(a->requests, 3000);
    assert_int_equal(b->requests, 3000);
    assert_true(b->ttft_mean_s < 0.5 * a->ttft_mean_s);
    /* 1600 of 1800 tokens are cached but for the first request of each prompt */
    double most = 1600.0 / 1800;
    assert_true(b->prefix_hit_rate <= most);
    assert_true(b->prefix_hit_rate > most * (1 - 10.0 / 3000) - 1e-3);
    assert_true(fabs(b->prefill_tokens_saved - b->prefix_hit_rate * 1800 * 3000) < 1);
    assert_int_equal(a->prefix_caching, 0);
    done(&off);
    done(&on);

    /* offline (every request at once): more output tokens per second */
    body = "<arrivals process=\"offline\" count=\"3000\"/>"
           "<requests input-tokens=\"200\" output-tokens=\"100\" prefix-tokens=\"1600\" prefixes=\"10\"/>";
    run_both("", body, &off, &on);
    printf("  offline: %.0f tokens/s off, %.0f on\n", svc(&off)->output_tokens_per_s, svc(&on)->output_tokens_per_s);
    assert_true(svc(&on)->output_tokens_per_s > 1.2 * svc(&off)->output_tokens_per_s);
    done(&off);
    done(&on);
}

static void test_nothing_shared(void **state) {
    (void)state;
    run off, on;
    const char *body = "<arrivals process=\"poisson\" rate=\"20/s\" count=\"2000\"/>"
                       "<requests input-tokens=\"1000\" output-tokens=\"100\" input-distribution=\"lognormal\"/>";
    run_both("", body, &off, &on);
    const service_result *a = svc(&off), *b = svc(&on);
    assert_true(b->prefix_caching);
    assert_true(b->prefix_hit_rate == 0);
    assert_true(a->ttft_mean_s == b->ttft_mean_s);
    assert_true(a->ttft_p99_s == b->ttft_p99_s);
    assert_true(a->tpot_mean_s == b->tpot_mean_s);
    assert_true(a->output_tokens_per_s == b->output_tokens_per_s);
    done(&off);
    done(&on);
}

/* 200 prompts of 30k tokens (6M) do not fit one replica's cache (some
 * 400K tokens of Llama 3.1 8B in bf16): blocks are evicted,
 * every request is served, and popular (Zipf) prompts still hit. */
static void test_eviction(void **state) {
    (void)state;
    run off, on;
    const char *body = "<arrivals process=\"poisson\" rate=\"2/s\" count=\"1500\"/>"
                       "<requests input-tokens=\"100\" output-tokens=\"50\" prefix-tokens=\"30000\" prefixes=\"200\""
                       " prefix-zipf=\"1\"/>";
    run_both("", body, &off, &on);
    const service_result *b = svc(&on);
    printf("  30k-token prompts of 200 (Zipf): hit rate %.3f, %lld blocks evicted\n", b->prefix_hit_rate,
           (long long)b->prefix_evictions);
    assert_int_equal(b->requests, 1500);
    assert_true(b->prefix_evictions > 0);
    assert_true(b->prefix_hit_rate > 0.3 && b->prefix_hit_rate < 0.99);
    assert_true(b->kv_utilization_peak <= 1 + 1e-9);
    assert_true(b->ttft_mean_s < svc(&off)->ttft_mean_s);
    done(&off);
    done(&on);
}

/* 50 conversations of 6 turns: a turn's prompt is the earlier turns and a
 * new 300-token input, which is all the cache can miss (and the reply's
 * last partial block). */
static void test_sessions(void **state) {
    (void)state;
    run off, on;
    const char *body = "<arrivals process=\"poisson\" rate=\"4/s\" count=\"1200\"/>"
                       "<requests input-tokens=\"300\" output-tokens=\"200\" sessions=\"50\" turns=\"6\"/>";
    run_both("", body, &off, &on);
    const service_result *a = svc(&off), *b = svc(&on);
    printf("  conversations: hit rate %.3f, TTFT mean %.1f ms off, %.1f ms on\n", b->prefix_hit_rate,
           a->ttft_mean_s * 1e3, b->ttft_mean_s * 1e3);
    /* turns 1..6 have prompts of 300, 800, ..., 2800 tokens (9300 in
     * all); the earlier turns of turns 2..6 can be cached (7500) */
    assert_true(b->prefix_hit_rate > 0.6 && b->prefix_hit_rate <= 7500.0 / 9300);
    assert_true(b->ttft_mean_s < a->ttft_mean_s);
    assert_true(a->input_tokens == b->input_tokens);   /* the same requests */
    done(&off);
    done(&on);
}

/* ---- routing --------------------------------------------------------------- */

/* body's requests over four caching replicas behind router. */
static run routed(const char *router, const char *body) {
    char xml[2048], a[256];
    snprintf(a, sizeof a, VLLM "replicas=\"4\" prefix-caching=\"true\" router=\"%s\"", router);
    return simulate(one_service(xml, sizeof xml, a, body), 1);
}

static void test_prefix_aware_router(void **state) {
    (void)state;
    const char *body = "<arrivals process=\"poisson\" rate=\"10/s\" count=\"4000\"/>"
                       "<requests input-tokens=\"200\" output-tokens=\"100\" prefix-tokens=\"8000\" prefixes=\"200\"/>";
    run lt = routed("least-tokens", body), pa = routed("prefix-aware", body);
    printf("  200 prompts over 4 replicas: hit rate %.3f least-tokens, %.3f prefix-aware; TTFT mean %.1f, %.1f ms\n",
           svc(&lt)->prefix_hit_rate, svc(&pa)->prefix_hit_rate, svc(&lt)->ttft_mean_s * 1e3, svc(&pa)->ttft_mean_s * 1e3);
    assert_int_equal(svc(&pa)->requests, 4000);
    assert_true(svc(&pa)->prefix_hit_rate > svc(&lt)->prefix_hit_rate + 0.05);
    assert_true(svc(&pa)->ttft_mean_s < svc(&lt)->ttft_mean_s);
    done(&lt);
    done(&pa);
}

/* Requests sent at once (a closed loop whose users each send one): no
 * cache holds anything when they are routed, so prefix-aware spreads a
 * prompt's requests as the loads dictate; cache-aware records each prompt
 * as it routes it and keeps the rest of its group with it. */
static void test_cache_aware_router(void **state) {
    (void)state;
    const char *body = "<arrivals process=\"closed\" users=\"512\" count=\"512\"/>"
                       "<requests input-tokens=\"128\" output-tokens=\"64\" prefix-tokens=\"2048\" prefixes=\"32\"/>";
    run pa = routed("prefix-aware", body), ca = routed("cache-aware", body), ca2 = routed("cache-aware", body);
    printf("  512 requests at once, 32 prompts over 4 replicas: hit rate %.3f prefix-aware, %.3f cache-aware;"
           " %.0f, %.0f output tokens/s\n", svc(&pa)->prefix_hit_rate, svc(&ca)->prefix_hit_rate,
           svc(&pa)->output_tokens_per_s, svc(&ca)->output_tokens_per_s);
    assert_int_equal(svc(&ca)->requests, 512);
    /* grouped, a prompt misses once per replica it is sent to: at most 32
     * of the 512 miss; 2048 of each 2176 tokens can hit */
    assert_true(svc(&ca)->prefix_hit_rate > svc(&pa)->prefix_hit_rate + 0.1);
    assert_true(svc(&ca)->prefix_hit_rate <= (512.0 - 32) / 512 * 2048 / 2176 + 1e-9);
    assert_true(svc(&ca)->output_tokens_per_s > svc(&pa)->output_tokens_per_s);
    assert_true(svc(&ca)->ttft_mean_s == svc(&ca2)->ttft_mean_s);   /* deterministic */
    done(&pa);
    done(&ca);
    done(&ca2);
}

static void test_drawn_routers(void **state) {
    (void)state;
    char xml[2048];
    const char *body = "<arrivals process=\"poisson\" rate=\"3/s\" count=\"20000\"/>"
                       "<requests input-tokens=\"500\" output-tokens=\"300\" input-distribution=\"lognormal\""
                       " input-cv=\"2\" output-distribution=\"lognormal\" output-cv=\"2\"/>";
    const char *names[4] = { "random", "power-of-two", "kv-aware", "round-robin" };
    double queue[4];
    for (int k = 0; k < 4; k++) {
        char a[256];
        snprintf(a, sizeof a, "replicas=\"4\" max-batch=\"2\" router=\"%s\"", names[k]);
        run r1 = simulate(one_service(xml, sizeof xml, a, body), 1);
        run r2 = simulate(one_service(xml, sizeof xml, a, body), 1);
        assert_int_equal(svc(&r1)->requests, 20000);
        queue[k] = svc(&r1)->queue_mean_s;
        assert_true(svc(&r1)->queue_mean_s == svc(&r2)->queue_mean_s);   /* seeded */
        assert_true(svc(&r1)->ttft_p99_s == svc(&r2)->ttft_p99_s);
        done(&r1);
        done(&r2);
    }
    printf("  mean queue: random %.2f s, power-of-two %.2f s, kv-aware %.2f s, round-robin %.2f s\n", queue[0],
           queue[1], queue[2], queue[3]);
    assert_true(queue[1] < 0.5 * queue[0]);
}

/* 64 requests over 32 prompts of 2048 tokens (128 blocks) and 128 tokens
 * of their own, in the order given, to `replicas` replicas behind router;
 * users: requests in flight at once. */
static run dealt(const char *order, const char *router, int replicas, int users) {
    char xml[2048], a[256], body[512];
    snprintf(a, sizeof a, VLLM "replicas=\"%d\" prefix-caching=\"true\" router=\"%s\"", replicas, router);
    snprintf(body, sizeof body,
             "<arrivals process=\"closed\" users=\"%d\" count=\"64\"/><requests input-tokens=\"128\""
             " output-tokens=\"16\" prefix-tokens=\"2048\" prefixes=\"32\" prefix-order=\"%s\"/>", users, order);
    return simulate(one_service(xml, sizeof xml, a, body), 1);
}

static void test_prefix_order(void **state) {
    (void)state;
    run dr = dealt("drawn", "round-robin", 1, 1), sh = dealt("shuffled", "round-robin", 1, 1);
    run gr = dealt("grouped", "round-robin", 1, 1);
    double exact = (64.0 - 32) / 64 * 2048 / 2176;   /* each of the 32 prompts misses once */
    printf("  one at a time, 64 requests over 32 prompts: hit rate %.4f drawn, %.4f shuffled, %.4f grouped"
           " (dealt evenly: %.4f)\n", svc(&dr)->prefix_hit_rate, svc(&sh)->prefix_hit_rate,
           svc(&gr)->prefix_hit_rate, exact);
    assert_true(fabs(svc(&sh)->prefix_hit_rate - exact) < 1e-9);
    assert_true(fabs(svc(&gr)->prefix_hit_rate - exact) < 1e-9);
    assert_true(svc(&dr)->prefix_hit_rate > exact + 0.01);   /* 64 draws of 32 leave some prompts out */
    run shr = dealt("shuffled", "round-robin", 4, 64), grr = dealt("grouped", "round-robin", 4, 64);
    printf("  all at once over 4 replicas, round-robin: hit rate %.3f shuffled, %.3f grouped\n",
           svc(&shr)->prefix_hit_rate, svc(&grr)->prefix_hit_rate);
    assert_int_equal(svc(&grr)->requests, 64);
    assert_true(svc(&grr)->prefix_hit_rate < svc(&shr)->prefix_hit_rate);
    done(&dr);
    done(&sh);
    done(&gr);
    done(&shr);
    done(&grr);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcache),
        cmocka_unit_test(test_shared_prompt),
        cmocka_unit_test(test_nothing_shared),
        cmocka_unit_test(test_eviction),
        cmocka_unit_test(test_sessions),
        cmocka_unit_test(test_prefix_aware_router),
        cmocka_unit_test(test_cache_aware_router),
        cmocka_unit_test(test_drawn_routers),
        cmocka_unit_test(test_prefix_order),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
