/*
 * serving_prefix: a replica's prefix cache of KV blocks (vLLM's automatic
 * prefix caching, SGLang's radix cache; docs/prefix-caching.md).
 *
 * A prompt's leading tokens are cut into blocks of a fixed size; a block's
 * key (a 64-bit hash) names the whole prefix up to and including it, as
 * Mooncake's traces name theirs (hash_ids), so the cached prefix of a
 * prompt is its longest run of leading blocks whose keys the cache holds.
 *
 * An entry is a cached block: its key, the bytes of KV cache it holds on
 * each GPU, and how many running requests use it. Entries no request uses
 * stay cached on a least-recently-used list and are evicted from its head
 * when the running requests need the memory; entries in use are never
 * evicted. Keys are found through an open-addressing hash table (linear
 * probing, deletion by backward shift), so every operation is O(1) on
 * average and nothing ever scans all entries.
 *
 * This header holds the cache alone; how requests and replicas use it is
 * in serving_prefix.c (sv_prefix_*, declared in serving_int.h).
 */
#ifndef CT_SERVING_PREFIX_H
#define CT_SERVING_PREFIX_H

#include <stddef.h>
#include <stdint.h>

typedef struct pcache_ent {
    uint64_t key;
    double bytes;                  /* KV cache it holds, per GPU */
    int32_t ref;                   /* running requests using it */
    int32_t prev, next;            /* LRU list (ref 0), or the free list (next) */
} pcache_ent;

typedef struct pcache {
    int32_t *slot;                 /* hash table: entry index, -1 empty */
    size_t n_slot;                 /* a power of two, or 0 before the first insert */
    pcache_ent *ent;
    size_t cap_ent;
    int32_t n_ent, free_ent, live;
    int32_t lru_head, lru_tail;    /* unused entries, least recently used first */
    double idle_bytes;             /* bytes of the entries no request uses */
    int64_t evicted;               /* entries evicted to make room */
} pcache;

/* The prefix identity of a request: which keys its leading blocks have.
 * Block k < n_blocks has key trace_blocks[trace_off + k] when trace_off >=
 * 0 (a trace's own hashes), else it is made from head_id for k <
 * head_blocks (a shared system prompt) and tail_id after (the conversation,
 * or the request alone). n_blocks 0: nothing to cache. */
typedef struct pfx_chain {
    uint64_t head_id, tail_id;
    int64_t trace_off;
    int32_t head_blocks, n_blocks;
    int32_t grows;                 /* a conversation's turn: the next turn extends its prompt and reply */
} pfx_chain;

void pcache_init(pcache *c);
void pcache_free(pcache *c);
/* Drop every entry (the GPUs holding them are gone). */
void pcache_clear(pcache *c);
/* The entry holding key, or -1. */
int32_t pcache_find(const pcache *c, uint64_t key);
/* Use entry e once more; returns the bytes that were idle and now are in use. */
double pcache_ref(pcache *c, int32_t e);
/* Use entry e once less; returns the bytes that became idle (0 while others use it). */
double pcache_unref(pcache *c, int32_t e);
/* A new entry for key (not in the cache), used once; -1 when out of memory. */
int32_t pcache_insert(pcache *c, uint64_t key, double bytes);
/* Evict idle entries, least recently used first, until at most max_idle
 * bytes are idle. Returns the entries evicted. */
int64_t pcache_trim(pcache *c, double max_idle);

/* The key of block k of a chain (trace_blocks: the trace's hashes, or
 * NULL), for a model: the same prompt under two models is two prefixes. */
uint64_t pfx_chain_key(const pfx_chain *ch, const uint32_t *trace_blocks, int32_t k, int model);

#endif
