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
 *   prefix-aware   SGLang's cache-aware rule on the replicas' caches:
 *                  shortest queue when the load is out of balance, else
 *                  the longest cached prefix when it covers enough of the
 *                  prompt, else the smallest cache
 *   kv-aware       the largest share of KV cache free
 *   cache-aware    SGLang's router as it runs: the same rule on its own
 *                  approximate record of the prompts it sent each replica,
 *                  written the moment it routes (the replica's `tree`)
 *
 * With none ready a request waits in `pending` until one is
 * (sv_route_pending). A replica that gets a request is kicked
 * (serving_core.c). O(replicas) per request; prefix-aware and cache-aware
 * add the lookups of the request's leading blocks on each replica.
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
/* The approximate tree's eviction (same file's defaults): every 60 s
 * (eviction_interval_secs) each worker's tree is cut back, least recently
 * used leaves first, to 2^26 characters (max_tree_size, counted per worker
 * in tenant_char_count, sgl-router/src/policies/tree.rs). The tree holds
 * text; here it holds token blocks, at 4 characters per token (OpenAI's
 * rule of thumb for English text, help.openai.com "What are tokens and how
 * to count them?"). */
#define TREE_EVICT_INTERVAL_S 60.0
#define TREE_MAX_CHARS 67108864.0
#define CHARS_PER_TOKEN 4.0

int sv_router_kind(const char *name) {
    static const char *const k[] = { "round-robin", "least-tokens", "random", "power-of-two", "prefix-aware", "kv-aware",
                                     "cache-aware" };
    for (int i = 0; i < 7; i++)
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

/* ---- cache-aware: the router's approximate tree --------------------------
 * SGLang's router keeps, per worker, a radix tree of the prompts it has
 * sent there (tree.insert(text, url) as select_worker returns, on both of
 * its paths, sgl-router/src/policies/cache_aware.rs), never asking the
 * workers what they hold. Here a replica's `tree` is a set of block keys:
 * a key names its whole prefix, so the set is that radix tree cut at block
 * boundaries. Entries are never in use (ref 0), so all sit on the LRU
 * list; `bytes` holds tokens. */

/* Leading blocks of q's prompt in r's tree. */
static int32_t tree_match(const replica *r, const req *q) {
    const serving *sv = r->sv;
    int32_t n = sv_prefix_blocks(sv, q), k = 0;
    while (k < n && pcache_find(&r->tree, sv_prefix_key(sv, q, k)) >= 0) k++;
    return k;
}

/* q's prompt is sent to r: its blocks join r's tree, or are used again.
 * Deepest first, so a prompt's first blocks are the most recently used
 * and its leaves go first (SGLang evicts leaves only). */
static void tree_insert(replica *r, const req *q) {
    serving *sv = r->sv;
    for (int32_t k = sv_prefix_blocks(sv, q) - 1; k >= 0; k--) {
        uint64_t key = sv_prefix_key(sv, q, k);
        int32_t e = pcache_find(&r->tree, key);
        if (e < 0) e = pcache_insert(&r->tree, key, sv->pfx_block);
        else pcache_ref(&r->tree, e);
        if (e >= 0) pcache_unref(&r->tree, e);
    }
}

/* The periodic eviction pass, when one is due. */
static void tree_evict(serving *sv) {
    sim_time now = now_of(sv), period = sim_from_s(TREE_EVICT_INTERVAL_S);
    if (sv->tree_evict_at == 0) sv->tree_evict_at = now + period;
    if (now < sv->tree_evict_at) return;
    sv->tree_evict_at = now + period - (now - sv->tree_evict_at) % period;
    for (int i = 0; i < sv->n_reps; i++) pcache_trim(&sv->reps[i].tree, TREE_MAX_CHARS / CHARS_PER_TOKEN);
}

void sv_router_forget(replica *r) { pcache_clear(&r->tree); }

void sv_router_free(serving *sv) {
    for (int i = 0; i < sv->n_reps; i++) pcache_free(&sv->reps[i].tree);
}

/* SGLang's cache-aware rule (sgl-project/sglang sgl-router/src/policies/
 * cache_aware.rs): under imbalance the least loaded; else the longest
 * prefix if it covers more than CACHE_THRESHOLD of the prompt (ties: the
 * less loaded); else the smallest (ties: the less loaded). prefix-aware
 * reads the replicas' caches; cache-aware its own tree, and records the
 * request there. */
static int pick_prefix(serving *sv, int model, int pass, const req *q) {
    int approx = sv->router == ROUTE_CACHE;
    int64_t lo = -1, hi = -1;
    int least = -1, best = -1, small = -1;
    int32_t best_k = -1, small_n = 0;
    for (int i = 0; i < sv->n_reps; i++) {
        if (!candidate(sv, i, model, pass)) continue;
        const replica *r = &sv->reps[i];
        int64_t h = held(r);
        if (least < 0 || h < lo) lo = h, least = i;
        if (h > hi) hi = h;
        int32_t k = approx ? tree_match(r, q) : sv_prefix_match(r, q);
        if (k > best_k || (k == best_k && h < held(&sv->reps[best]))) best_k = k, best = i;
        int32_t size = approx ? r->tree.live : r->pc.live;
        if (small < 0 || size < small_n || (size == small_n && h < held(&sv->reps[small]))) small = i, small_n = size;
    }
    if (least < 0) return -1;
    double covered = q->input > 0 ? (double)best_k * sv->pfx_block / q->input : 0;
    int k = hi - lo > CACHE_BALANCE_ABS && (double)hi > CACHE_BALANCE_REL * (double)lo ? least
          : covered > CACHE_THRESHOLD                                                 ? best
                                                                                      : small;
    if (approx) {
        tree_evict(sv);
        tree_insert(&sv->reps[k], q);
    }
    return k;
}

/* least-tokens and kv-aware: the first candidate with the fewest
 * outstanding tokens (kv-aware: the most KV free, then those); -1 none.
 * One pass over the replicas (once a request: 10M times in the 1e7 run). */
static int pick_least(const serving *sv, int model, int pass) {
    int best = -1;
    if (sv->router == ROUTE_LEAST_TOKENS) {       /* the least so far in a register: no branch to mispredict */
        double lo = 0;
        for (int i = 0; i < sv->n_reps; i++) {
            if (!candidate(sv, i, model, pass)) continue;
            double o = sv->reps[i].outstanding;
            int take = best < 0 || o < lo;
            lo = take ? o : lo;
            best = take ? i : best;
        }
        return best;
    }
    for (int i = 0; i < sv->n_reps; i++) {
        if (!candidate(sv, i, model, pass)) continue;
        const replica *r = &sv->reps[i], *b = best >= 0 ? &sv->reps[best] : NULL;
        int better = !b || (sv->router == ROUTE_KV
                                ? kv_free(r) > kv_free(b) || (kv_free(r) == kv_free(b) && r->outstanding < b->outstanding)
                                : r->outstanding < b->outstanding);
        if (better) best = i;
    }
    return best;
}

/* The replica a request goes to; -1 when none is ready. */
static int route_pick(serving *sv, const req *q) {
    /* round-robin ignores where models are loaded, as it always has */
    int pass = sv->router == ROUTE_ROUND_ROBIN ? 1 : candidate_pass(sv, q->model);
    if (sv->router == ROUTE_LEAST_TOKENS || sv->router == ROUTE_KV) return pick_least(sv, q->model, pass);
    int64_t n = 0;
    for (int i = 0; i < sv->n_reps; i++) n += candidate(sv, i, q->model, pass);
    if (n == 0) return -1;
    if (sv->router == ROUTE_PREFIX || sv->router == ROUTE_CACHE) return pick_prefix(sv, q->model, pass, q);
    return pick_drawn(sv, q->model, pass, n);
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
