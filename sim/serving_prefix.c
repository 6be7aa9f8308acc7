/*
 * serving_prefix: prefix caching (docs/prefix-caching.md). The cache
 * itself (pcache_*, serving_prefix.h), where requests' prefixes come from
 * (shared system prompts, conversations whose next turn extends the last,
 * a trace's block hashes), and how a replica uses its cache: an admitted
 * request takes the longest run of its leading blocks the cache holds and
 * prefills only the rest; when its prompt is computed its blocks join the
 * cache, and when it ends they stay there, idle, until the running
 * requests need the memory (least recently used first).
 *
 * KV memory of a replica (bytes per GPU): kv_used counts what running
 * requests hold, each cached block in use once however many share it;
 * idle cached blocks are counted apart (pcache.idle_bytes) and are free
 * to take: admission looks at kv_used alone, and the idle blocks are
 * evicted while kv_used + idle exceeds the capacity. A request holds
 * pfx_ref cached blocks; its own blocks are the rest of its cache.
 */
#include "sim/serving_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* ---- the cache ---------------------------------------------------------- */

static uint64_t mix64(uint64_t x) {         /* splitmix64's finaliser (Steele et al. 2014) */
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void pcache_init(pcache *c) {
    memset(c, 0, sizeof *c);
    c->free_ent = c->lru_head = c->lru_tail = -1;
}

void pcache_free(pcache *c) {
    free(c->slot);
    free(c->ent);
    pcache_init(c);
}

void pcache_clear(pcache *c) {
    int64_t evicted = c->evicted;
    pcache_free(c);
    c->evicted = evicted;
}

static size_t home(const pcache *c, uint64_t key) { return (size_t)(mix64(key) & (c->n_slot - 1)); }

int32_t pcache_find(const pcache *c, uint64_t key) {
    if (c->n_slot == 0) return -1;
    for (size_t h = home(c, key);; h = (h + 1) & (c->n_slot - 1)) {
        int32_t e = c->slot[h];
        if (e < 0) return -1;
        if (c->ent[e].key == key) return e;
    }
}

static void lru_unlink(pcache *c, int32_t e) {
    pcache_ent *x = &c->ent[e];
    if (x->prev >= 0) c->ent[x->prev].next = x->next;
    else c->lru_head = x->next;
    if (x->next >= 0) c->ent[x->next].prev = x->prev;
    else c->lru_tail = x->prev;
    x->prev = x->next = -1;
}

static void lru_push(pcache *c, int32_t e) {
    pcache_ent *x = &c->ent[e];
    x->prev = c->lru_tail;
    x->next = -1;
    if (c->lru_tail >= 0) c->ent[c->lru_tail].next = e;
    else c->lru_head = e;
    c->lru_tail = e;
}

double pcache_ref(pcache *c, int32_t e) {
    pcache_ent *x = &c->ent[e];
    if (x->ref++ > 0) return 0;
    lru_unlink(c, e);
    c->idle_bytes -= x->bytes;
    return x->bytes;
}

double pcache_unref(pcache *c, int32_t e) {
    pcache_ent *x = &c->ent[e];
    if (--x->ref > 0) return 0;
    lru_push(c, e);
    c->idle_bytes += x->bytes;
    return x->bytes;
}

static void slot_put(pcache *c, int32_t e) {
    size_t h = home(c, c->ent[e].key);
    while (c->slot[h] >= 0) h = (h + 1) & (c->n_slot - 1);
    c->slot[h] = e;
}

/* Double the table (load factor at most one half). 0, or -1 when out of memory. */
static int grow_table(pcache *c) {
    size_t n = c->n_slot ? c->n_slot * 2 : 1024;
    int32_t *s = malloc(n * sizeof *s);
    if (!s) return -1;
    for (size_t k = 0; k < n; k++) s[k] = -1;
    int32_t *old = c->slot;
    size_t n_old = c->n_slot;
    c->slot = s;
    c->n_slot = n;
    for (size_t k = 0; k < n_old; k++)
        if (old[k] >= 0) slot_put(c, old[k]);
    free(old);
    return 0;
}

int32_t pcache_insert(pcache *c, uint64_t key, double bytes) {
    if ((size_t)(c->live + 1) * 2 > c->n_slot && grow_table(c) < 0) return -1;
    int32_t e = c->free_ent;
    if (e >= 0) {
        c->free_ent = c->ent[e].next;
    } else {
        if (c->n_ent == INT32_MAX || GROW(c->ent, c->cap_ent, (size_t)c->n_ent + 1)) return -1;
        e = c->n_ent++;
    }
    c->ent[e] = (pcache_ent){ key, bytes, 1, -1, -1 };
    c->live++;
    slot_put(c, e);
    return e;
}

/* Take entry e out of the table (backward-shift deletion: the entries after
 * it in its probe run move back, so no lookup ever meets a hole early). */
static void slot_delete(pcache *c, int32_t e) {
    size_t mask = c->n_slot - 1, h = home(c, c->ent[e].key);
    while (c->slot[h] != e) h = (h + 1) & mask;
    for (size_t j = (h + 1) & mask; c->slot[j] >= 0; j = (j + 1) & mask) {
        size_t want = home(c, c->ent[c->slot[j]].key);
        /* slot j's entry may move to the hole h when h lies on its probe path */
        if (((j - want) & mask) >= ((j - h) & mask)) {
            c->slot[h] = c->slot[j];
            h = j;
        }
    }
    c->slot[h] = -1;
}

int64_t pcache_trim(pcache *c, double max_idle) {
    int64_t n = 0;
    while (c->idle_bytes > max_idle && c->lru_head >= 0) {
        int32_t e = c->lru_head;
        lru_unlink(c, e);
        c->idle_bytes -= c->ent[e].bytes;
        slot_delete(c, e);
        c->ent[e].next = c->free_ent;
        c->free_ent = e;
        c->live--;
        n++;
    }
    if (c->lru_head < 0) c->idle_bytes = 0;   /* no rounding left behind */
    c->evicted += n;
    return n;
}

uint64_t pfx_chain_key(const pfx_chain *ch, const uint32_t *trace_blocks, int32_t k, int model) {
    uint64_t salt = mix64(0x7072656669780000ull + (uint64_t)model);   /* "prefix" + model */
    if (ch->trace_off >= 0 && trace_blocks) return mix64(salt ^ trace_blocks[ch->trace_off + k]);
    uint64_t id = k < ch->head_blocks ? ch->head_id : ch->tail_id;
    return mix64(salt ^ mix64(id) ^ mix64((uint64_t)k + 0x51ED270B27ull));
}

/* ---- where prefixes come from -------------------------------------------- */

#define HEAD_ID_BASE (1ull << 63)            /* shared prompts' ids, apart from conversations' */
#define SESSION_ID_BASE (1ull << 62)         /* a trace's session ids, apart from generated ones */

/* prefix-order="shuffled" or "grouped": the count requests split as evenly
 * as the prompts allow (request i of the grouped order carries prompt
 * i * prefixes / count), in that order or in a seeded random permutation
 * of it (Fisher-Yates). bench_serving's generated-shared-prefix dataset
 * builds its requests group by group and shuffles them unless told
 * --gsp-ordered (sgl-project/sglang,
 * python/sglang/benchmark/datasets/generated_shared_prefix.py). */
static int deal_deck(serving *sv) {
    const sc_inference *c = sv->cfg;
    int64_t n = c->count;
    int p = c->prefixes > 1 ? c->prefixes : 1;
    sv->pfx_deck = malloc((size_t)n * sizeof *sv->pfx_deck);
    if (!sv->pfx_deck) return -1;
    sv->pfx_deck_n = n;
    for (int64_t i = 0; i < n; i++) sv->pfx_deck[i] = (int32_t)((double)i * p / (double)n);
    if (!strcmp(c->prefix_order, "shuffled")) {
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)rng_uniform_int(sv->r_pfx, (uint64_t)i + 1);
            int32_t t = sv->pfx_deck[i];
            sv->pfx_deck[i] = sv->pfx_deck[j];
            sv->pfx_deck[j] = t;
        }
    }
    return 0;
}

int sv_prefix_init(serving *sv) {
    const sc_inference *c = sv->cfg;
    sv->prefix_on = c->prefix_caching;
    sv->pfx_block = sv->trace_blocks && sv->trace_block_tokens > 0 ? sv->trace_block_tokens : sv->block;
    sv->next_tail = 1;
    if (c->prefix_tokens <= 0 && c->sessions <= 0) return 0;
    char comp[SC_NAME_MAX + 32];
    snprintf(comp, sizeof comp, "serving/%s/prefixes", c->name);
    sv->r_pfx = rng_new(sv->s->seed, comp, 0);
    if (!sv->r_pfx) return -1;
    int n = c->prefixes > 1 ? c->prefixes : 1;
    if (c->prefix_tokens > 0 && c->prefix_zipf > 0 && n > 1) {
        sv->pfx_cum = malloc((size_t)n * sizeof *sv->pfx_cum);
        if (!sv->pfx_cum) return -1;
        double sum = 0;
        for (int k = 0; k < n; k++) sv->pfx_cum[k] = sum += pow(k + 1.0, -c->prefix_zipf);
    }
    if (c->prefix_tokens > 0 && c->count > 0 && strcmp(c->prefix_order, "drawn") && deal_deck(sv) < 0) return -1;
    if (c->sessions > 0) {
        sv->sess = calloc((size_t)c->sessions, sizeof *sv->sess);
        if (!sv->sess) return -1;
        for (int k = 0; k < c->sessions; k++) sv->sess[k].turn = c->turns;   /* starts one at first use */
    }
    return 0;
}

void sv_prefix_free(serving *sv) {
    for (int i = 0; i < sv->n_reps; i++) pcache_free(&sv->reps[i].pc);
    free(sv->pfx_cum);
    free(sv->pfx_deck);
    free(sv->sess);
    rng_free(sv->r_pfx);
}

/* Which shared prompt a request carries: the next of the deck when there
 * is one; else -1 none (a share 1 - prefix-share
 * of the requests), else uniform or Zipf over the prompts. Draws the same
 * numbers whatever the outcome, so the stream stays aligned. */
static int draw_head(serving *sv) {
    const sc_inference *c = sv->cfg;
    if (c->prefix_tokens <= 0) return -1;
    if (sv->pfx_deck) return sv->pfx_deck[sv->pfx_dealt++ % sv->pfx_deck_n];
    double u = rng_uniform(sv->r_pfx), v = rng_uniform(sv->r_pfx);
    if (u >= c->prefix_share) return -1;
    int n = c->prefixes > 1 ? c->prefixes : 1;
    if (!sv->pfx_cum) return (int)(v * n);
    double x = v * sv->pfx_cum[n - 1];
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sv->pfx_cum[mid] > x) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

static void set_chain(const serving *sv, pfx_chain *ch, int head, uint64_t tail, int64_t prompt) {
    int64_t n = prompt / sv->pfx_block;
    ch->head_id = head >= 0 ? HEAD_ID_BASE + (uint64_t)head : 0;
    ch->head_blocks = head >= 0 ? sv->cfg->prefix_tokens / sv->pfx_block : 0;
    ch->tail_id = tail;
    ch->n_blocks = (int32_t)(n < INT32_MAX ? n : INT32_MAX);
}

/* A conversation's next turn: its prompt is the shared prompt, every
 * earlier turn's input and reply, and the new input. A conversation that
 * has had its turns, or whose next turn would not fit the model, ends and
 * a new one starts in its place. */
static int64_t draw_turn(serving *sv, int input, int output, int model, pfx_chain *ch) {
    const sc_inference *c = sv->cfg;
    const serve_model *sm = &sv->models[model];
    double ctx = sm->m.max_context > 1 ? sm->m.max_context : 1e18;
    if (sm->kv_capacity_tokens < ctx) ctx = sm->kv_capacity_tokens;
    pfx_session *s = &sv->sess[rng_uniform_int(sv->r_pfx, (uint64_t)c->sessions)];
    int64_t head = s->head >= 0 ? c->prefix_tokens : 0;
    if (s->turn >= c->turns || (double)(head + s->history + input + output) > ctx) {
        s->id = sv->next_tail++;
        s->history = 0;
        s->turn = 0;
        s->head = draw_head(sv);
        head = s->head >= 0 ? c->prefix_tokens : 0;
    }
    int64_t prompt = head + s->history + input;
    s->history += input + output;
    s->turn++;
    set_chain(sv, ch, s->head, s->id, prompt);
    ch->grows = 1;
    return prompt;
}

int sv_prefix_draw(serving *sv, int input, int output, int model, pfx_chain *ch) {
    memset(ch, 0, sizeof *ch);
    ch->trace_off = -1;
    if (!sv->r_pfx) return input;
    int64_t prompt;
    if (sv->cfg->sessions > 0) {
        prompt = draw_turn(sv, input, output, model, ch);
    } else {
        int head = draw_head(sv);
        prompt = input + (head >= 0 ? (int64_t)sv->cfg->prefix_tokens : 0);
        set_chain(sv, ch, head, sv->next_tail++, prompt);
    }
    return (int)(prompt < INT32_MAX ? prompt : INT32_MAX);
}

void sv_prefix_from_trace(const serving *sv, const reqtrace_row *row, pfx_chain *ch) {
    memset(ch, 0, sizeof *ch);
    ch->trace_off = -1;
    if (row->n_blocks > 0 && sv->trace_blocks) {
        ch->trace_off = row->block_off;
        ch->n_blocks = row->n_blocks;
    } else if (row->session >= 0) {             /* the prompt holds the conversation so far */
        set_chain(sv, ch, -1, SESSION_ID_BASE + (uint64_t)row->session, row->input);
        ch->grows = 1;
    }
}

/* ---- a replica's use of its cache --------------------------------------- */

static uint64_t req_key(const serving *sv, const req *q, int32_t k) {
    return pfx_chain_key(&q->chain, sv->trace_blocks, k, q->model);
}

/* Leading blocks of q's prompt that may be cached: whole blocks of its input. */
static int32_t usable_blocks(const serving *sv, const req *q) {
    int32_t n = q->input / sv->pfx_block;
    return q->chain.n_blocks < n ? q->chain.n_blocks : n;
}

static double entry_bytes(const serving *sv, int model) {
    return sv->block_bytes[model] / sv->block * sv->pfx_block;
}

int32_t sv_prefix_match(const replica *r, const req *q) {
    const serving *sv = r->sv;
    int32_t n = usable_blocks(sv, q), k = 0;
    if (!sv->prefix_on) return 0;
    while (k < n && pcache_find(&r->pc, req_key(sv, q, k)) >= 0) k++;
    return k;
}

int32_t sv_prefix_blocks(const serving *sv, const req *q) { return usable_blocks(sv, q); }

uint64_t sv_prefix_key(const serving *sv, const req *q, int32_t k) { return req_key(sv, q, k); }

double sv_prefix_admit(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    q->pfx_ref = 0;
    sv->prompt_tokens_admitted += q->prompt;
    if (!sv->prefix_on) return 0;
    int32_t n = usable_blocks(sv, q);
    double shared = 0;
    while (q->pfx_ref < n) {
        int32_t e = pcache_find(&r->pc, req_key(sv, q, q->pfx_ref));
        if (e < 0) break;
        r->kv_used += pcache_ref(&r->pc, e);
        shared += r->pc.ent[e].bytes;
        q->pfx_ref++;
    }
    /* at least the last prompt token is computed, to sample the first
     * output token (vLLM recomputes it on a full hit) */
    int64_t hit = (int64_t)q->pfx_ref * sv->pfx_block;
    if (hit > q->prompt - 1) hit = q->prompt - 1;
    if (hit > 0) {
        q->prefilled = (int32_t)hit;
        r->outstanding -= (double)hit;
        sv->prefill_tokens_saved += (double)hit;
    }
    return shared;
}

/* Make blocks pfx_ref .. n - 1 of q cached entries it uses: new ones hold
 * what were its own blocks; one another request cached meanwhile is
 * shared, and q's own copy freed. Stops when out of memory. */
static void cache_blocks(replica *r, req *q, int32_t n) {
    serving *sv = r->sv;
    double eb = entry_bytes(sv, q->model);
    while (q->pfx_ref < n) {
        uint64_t key = req_key(sv, q, q->pfx_ref);
        int32_t e = pcache_find(&r->pc, key);
        if (e >= 0) r->kv_used += pcache_ref(&r->pc, e) - eb;
        else if (pcache_insert(&r->pc, key, eb) < 0) return;
        q->pfx_ref++;
    }
}

void sv_prefix_insert(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    if (sv->prefix_on) cache_blocks(r, q, usable_blocks(sv, q));
}

double sv_prefix_release(replica *r, int32_t i, int done) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    if (!sv->prefix_on) return 0;
    /* a conversation's finished turn leaves its reply cached too: the
     * next turn's prompt starts with it */
    if (done && q->chain.grows && q->pfx_ref == usable_blocks(sv, q))
        cache_blocks(r, q, (q->input + q->output - 1) / sv->pfx_block);
    double shared = 0;
    for (int32_t k = q->pfx_ref - 1; k >= 0; k--) {   /* deepest first: evicted before its parents */
        int32_t e = pcache_find(&r->pc, req_key(sv, q, k));
        shared += r->pc.ent[e].bytes;
        r->kv_used -= pcache_unref(&r->pc, e);
    }
    q->pfx_ref = 0;
    return shared;
}

void sv_prefix_trim(replica *r) {
    if (!r->sv->prefix_on) return;
    double room = r->kv_cap - r->kv_used;
    pcache_trim(&r->pc, room > 0 ? room : 0);
}

void sv_prefix_lost(replica *r) { pcache_clear(&r->pc); }
