/*
 * serving_memo: serve_tokens_s of each model memoised by (tokens, rows).
 *
 * The part of an iteration's price that depends on two whole numbers only
 * (models/serving.h: linear layers, lm head, elementwise work, collectives,
 * launch gaps) is a pure function, so a remembered value is the same number
 * as a new evaluation and the results do not move. A decode batch keeps its
 * (graph) size for many iterations and budget-filled iterations repeat, but
 * the prompts' chunks make many distinct pairs: a 1M-request chat service
 * of lognormal prompts met 151,845 distinct pairs in 4.2M lookups, and a
 * direct-mapped table of 4,096 slots (the memo before this file) missed on
 * 870,542 of them, most of them pairs it had seen and lost to a collision.
 *
 * So each model keeps every pair it has priced, in an open-addressing table
 * (linear probing, at most three quarters full, doubled as it fills: a hit
 * probes 2.5 slots on average, a miss 8.5, Knuth TAOCP vol. 3, 6.4, most
 * of them in one cache line). That table outgrows the CPU's caches (4 MB
 * for those 151,845 pairs), so the small direct-mapped table stays in
 * front of it for the pairs that repeat from one iteration to the next: a
 * lookup reaches the big table only on a collision in the small one.
 * Distinct pairs are at most (token budget) x (rows); past 2^MEMO_MAX_BITS
 * slots (16 MB, 786,432 pairs; the 1e7-request service of
 * tests/bench_serving.c meets 300,907, in 8 MB) the table starts again
 * empty, which costs evaluations, never a different number.
 */
#include "sim/serving_int.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_MIN_BITS 12                    /* the first table: 4,096 slots, 64 KB */

static size_t memo_cap(const memo *c) { return (size_t)1 << c->bits; }

/* Whether n keys leave the table at most three quarters full. */
static int memo_fits(const memo *c, size_t n) { return 4 * n <= 3 * memo_cap(c); }

/* Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the top bits of key * 2^64/phi. */
static size_t memo_slot(uint64_t key, int bits) {
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* A new empty table of 2^bits slots in place of c's; 0, or -1 when out of memory (c unchanged). */
static int memo_reset(memo *c, int bits) {
    size_t bytes = ((size_t)1 << bits) * sizeof(memo_entry);
    memo_entry *t = bits > MEMO_MIN_BITS ? sv_big_alloc(bytes) : malloc(bytes);
    if (!t) return -1;
    memset(t, 0, bytes);
    free(c->slot);
    c->slot = t;
    c->bits = bits;
    c->n = 0;
    return 0;
}

static void memo_put(memo *c, uint64_t key, double val) {
    size_t mask = memo_cap(c) - 1, h = memo_slot(key, c->bits);
    while (c->slot[h].key != 0) h = (h + 1) & mask;
    c->slot[h].key = key;
    c->slot[h].val = val;
    c->n++;
}

/* Room for one more key at most MEMO_LOAD full: double the table (its keys
 * moved over), or start again empty at the cap. Out of memory, the value
 * is not remembered (-1). */
static int memo_room(memo *c) {
    if (c->slot && memo_fits(c, c->n + 1)) return 0;
    if (!c->slot) return memo_reset(c, MEMO_MIN_BITS);
    if (c->bits >= MEMO_MAX_BITS) return memo_reset(c, c->bits);
    memo old = *c;
    c->slot = NULL;
    if (memo_reset(c, old.bits + 1) < 0) {
        *c = old;
        return -1;
    }
    for (size_t k = 0; k < memo_cap(&old); k++)
        if (old.slot[k].key != 0) memo_put(c, old.slot[k].key, old.slot[k].val);
    free(old.slot);
    return 0;
}

double sv_tokens_s(serving *sv, int m, int64_t tokens, int64_t rows) {
    /* tokens >= 1 (an iteration with no token is not priced), so no key is 0, the empty slot */
    uint64_t key = ((uint64_t)tokens << 32) | (uint64_t)rows;
    memo *c = &sv->memo[m];
    memo_entry *near = &c->near[memo_slot(key, MEMO_NEAR_BITS)];
    if (near->key == key) return near->val;
    near->key = key;
    if (c->slot) {
        size_t mask = memo_cap(c) - 1;
        for (size_t h = memo_slot(key, c->bits); c->slot[h].key != 0; h = (h + 1) & mask)
            if (c->slot[h].key == key) return near->val = c->slot[h].val;
    }
    near->val = serve_tokens_s(&sv->models[m], (double)tokens, (double)rows, NULL);
    if (memo_room(c) == 0) memo_put(c, key, near->val);
    return near->val;
}

void sv_memo_free(serving *sv) {
    for (int m = 0; sv->memo && m < sv->n_models; m++) free(sv->memo[m].slot);
    free(sv->memo);
    sv->memo = NULL;
}
