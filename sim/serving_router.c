/*
 * serving_router: which replica a request goes to (<inference router=>,
 * docs/prefix-caching.md says what each policy does and where it comes
 * from). Among ready replicas, those holding the request's model first
 * (but for round-robin):
 *
 *   round-robin    the next one in turn
 *   least-tokens   the fewest outstanding tokens (prompt and output still
 *                  to process)
 *   random         uniform (seeded)
 *   power-of-two   two drawn at random (seeded), the one with fewer
 *                  outstanding tokens (Mitzenmacher 2001)
 *   prefix-aware   SGLang's cache-aware router: shortest queue when the
 *                  load is out of balance, else the longest cached prefix
 *                  when it covers enough of the prompt, else the smallest
 *                  cache
 *   kv-aware       the largest share of KV cache free
 *
 * With none ready a request waits in `pending` until one is
 * (sv_route_pending). A replica that gets a request is kicked
 * (serving_core.c). O(replicas) per request; prefix-aware adds the cache
 * lookups of the request's leading blocks on each replica.
 */
#include "sim/serving_int.h"

#include <string.h>

/* SGLang router defaults (sgl-project/sglang,
 * sgl-model-gateway/bindings/python/src/sglang_router/router_args.py):
 * imbalanced when max - min running requests > 64 and max > 1.5 · min;
 * a cached prefix counts when it covers more than 0.3 of the prompt. */
#define CACHE_BALANCE_ABS 64
#define CACHE_BALANCE_REL 1.5
#define CACHE_THRESHOLD 0.3

int sv_router_kind(const char *name) {
    static const char *const k[] = { "round-robin", "least-tokens", "random", "power-of-two", "prefix-aware", "kv-aware" };
    for (int i = 0; i < 6; i++)
        if (!strcmp(name, k[i])) return i;
    return ROUTE_LEAST_TOKENS;
}

static int routable(const replica *r) { return r->state == R_READY; }

/* The replicas a request of this model may go to: ready ones holding the
 * model when there are any (pass 0), else every ready one (pass 1). */
static int candidate_pass(const serving *sv, int model) {
    if (sv->n_models == 1) return 1;
    for (int i = 0; i < sv->n_reps; i++)
        if (routable(&sv->reps[i]) && sv->reps[i].ms[model].resident != M_UNLOADED) return 0;
    return 1;
}

static int candidate(const serving *sv, int i, int model, int pass) {
    const replica *r = &sv->reps[i];
    return routable(r) && (pass == 1 || r->ms[model].resident != M_UNLOADED);
}

/* Requests a replica holds (waiting, running, swapped out): SGLang's load. */
static int64_t held(const replica *r) {
    int64_t n = r->running.n;
    for (int m = 0; m < r->sv->n_models; m++) n += r->ms[m].queue.n + r->ms[m].swapped.n;
    return n;
}

static double kv_free(const replica *r) { return r->kv_cap > 0 ? 1 - r->kv_used / r->kv_cap : 0; }

/* The k-th candidate (k from 0), or -1. */
static int nth_candidate(const serving *sv, int model, int pass, int64_t k) {
    for (int i = 0; i < sv->n_reps; i++)
        if (candidate(sv, i, model, pass) && k-- == 0) return i;
    return -1;
}

/* round-robin, random and power-of-two: the candidates in turn or drawn. */
static int pick_drawn(serving *sv, int model, int pass, int64_t n) {
    if (sv->router == ROUTE_ROUND_ROBIN) {
        for (int k = 0; k < sv->n_reps; k++) {
            int i = (sv->rr + k) % sv->n_reps;
            if (candidate(sv, i, model, pass)) {
                sv->rr = (i + 1) % sv->n_reps;
                return i;
            }
        }
        return -1;
    }
    int a = nth_candidate(sv, model, pass, (int64_t)rng_uniform_int(sv->r_route, (uint64_t)n));
    if (sv->router == ROUTE_RANDOM || n < 2) return a;
    uint64_t kb = rng_uniform_int(sv->r_route, (uint64_t)n - 1);   /* a second, distinct one */
    int b = nth_candidate(sv, model, pass, (int64_t)kb);
    if (b >= a) b = nth_candidate(sv, model, pass, (int64_t)kb + 1);
    return sv->reps[b].outstanding < sv->reps[a].outstanding ? b : a;
}

/* SGLang's cache-aware rule (sgl-project/sglang sgl-router/src/policies/
 * cache_aware.rs): under imbalance the least loaded; else the longest
 * cached prefix if it covers more than CACHE_THRESHOLD of the prompt
 * (ties: the less loaded); else the smallest cache (ties: the less loaded). */
static int pick_prefix(serving *sv, int model, int pass, const req *q) {
    int64_t lo = -1, hi = -1;
    int least = -1, best = -1, small = -1;
    int32_t best_k = -1;
    for (int i = 0; i < sv->n_reps; i++) {
        if (!candidate(sv, i, model, pass)) continue;
        const replica *r = &sv->reps[i];
        int64_t h = held(r);
        if (least < 0 || h < lo) lo = h, least = i;
        if (h > hi) hi = h;
        int32_t k = sv_prefix_match(r, q);
        if (k > best_k || (k == best_k && h < held(&sv->reps[best]))) best_k = k, best = i;
        if (small < 0 || r->pc.live < sv->reps[small].pc.live ||
            (r->pc.live == sv->reps[small].pc.live && h < held(&sv->reps[small])))
            small = i;
    }
    if (least < 0) return -1;
    if (hi - lo > CACHE_BALANCE_ABS && (double)hi > CACHE_BALANCE_REL * (double)lo) return least;
    double covered = q->input > 0 ? (double)best_k * sv->pfx_block / q->input : 0;
    return covered > CACHE_THRESHOLD ? best : small;
}

/* The replica a request goes to; -1 when none is ready. */
static int route_pick(serving *sv, const req *q) {
    /* round-robin ignores where models are loaded, as it always has */
    int pass = sv->router == ROUTE_ROUND_ROBIN ? 1 : candidate_pass(sv, q->model);
    int64_t n = 0;
    for (int i = 0; i < sv->n_reps; i++) n += candidate(sv, i, q->model, pass);
    if (n == 0) return -1;
    if (sv->router == ROUTE_ROUND_ROBIN || sv->router == ROUTE_RANDOM || sv->router == ROUTE_POWER_OF_TWO)
        return pick_drawn(sv, q->model, pass, n);
    if (sv->router == ROUTE_PREFIX) return pick_prefix(sv, q->model, pass, q);
    int best = -1;
    for (int i = 0; i < sv->n_reps; i++) {
        if (!candidate(sv, i, q->model, pass)) continue;
        const replica *r = &sv->reps[i], *b = best >= 0 ? &sv->reps[best] : NULL;
        int better = !b || (sv->router == ROUTE_KV
                                ? kv_free(r) > kv_free(b) || (kv_free(r) == kv_free(b) && r->outstanding < b->outstanding)
                                : r->outstanding < b->outstanding);
        if (better) best = i;
    }
    return best;
}

/* Queue request i on replica r, behind the others of its model. */
static void enqueue(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    sv_queue_push(sv, &r->ms[q->model].queue, i);
    r->outstanding += q->input + q->output;
    sv_kick(r);
}

void sv_route(serving *sv, int32_t i) {
    int k = route_pick(sv, &sv->rq[i]);
    if (k < 0) sv_queue_push(sv, &sv->pending, i);
    else enqueue(&sv->reps[k], i);
}

void sv_route_pending(serving *sv) {
    while (sv->pending.n > 0) {
        int32_t i = sv->pending.head;
        int k = route_pick(sv, &sv->rq[i]);
        if (k < 0) return;
        list_remove(sv->rq, &sv->pending, i);
        enqueue(&sv->reps[k], i);
    }
}
