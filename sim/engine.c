/*
 * engine: the discrete-event kernel: a 4-ary min-heap of (time, sequence)
 * keys over a slot table that holds each event's handler and argument.
 *
 * Expected load: the hold pattern (pop the earliest event, its handler
 * schedules one or two more) with 1e3..1e6 pending, plus frequent cancels.
 * Measured (tests/bench_engine.c, one core of a 2.6 GHz EPYC): about 20 M
 * events/s at 1e3 pending, 10 M at 1e5, 4 M at 1e6, where memory latency
 * dominates. So:
 *
 *   - A heap entry is 16 bytes and four siblings share one 64-byte cache
 *     line; the heap is half as deep as a binary one, and a level costs one
 *     cache line. Nothing about an event but its key lives in the heap.
 *   - Two prefetches hide most of the cache misses of big queues: the next
 *     level's lines during a sift-down, and the slot of the next event to
 *     run while the current one is popped (see sift_down and pop_root).
 *   - Cancel is lazy (Redis ae.c style): it clears the slot's handler and
 *     leaves the heap entry, which is dropped when it reaches the top. Cancel
 *     is O(1); when dead entries outnumber live ones (and there are at least
 *     COMPACT_MIN), the heap is filtered and rebuilt in O(n), so the heap
 *     never holds more than about twice the pending events. Amortised O(1).
 *   - Events scheduled in time order go to a second queue, the lane: a
 *     plain array in key order, appended to when an event is no earlier
 *     than the lane's last one (its key is then greater: later sequence),
 *     popped from its front. The next event is the lesser of the heap's
 *     root and the lane's head, so the order is the same (time, sequence)
 *     order as one heap's. A trace's submissions, all scheduled before the
 *     run in submit order, then cost O(1) each, and the heap holds only
 *     what the run schedules (the 10K-GPU year's 99,038 submissions made
 *     every pop a sift through a heap of up to 99,000 entries; bench_sched's
 *     world, best of 20: 0.050-0.053 s -> 0.043 s; docs/performance.md,
 *     "Issue 23: the SimPy peer"). Cancelled lane entries are dropped as
 *     the heap's are: at the front, or by the compaction.
 *   - Slots are recycled through a LIFO free list, so the event a handler
 *     schedules reuses the slot of the event being dispatched, already in
 *     cache. No allocation per event; the arrays grow by doubling. At most
 *     2^28 events can be pending (or cancelled and not yet dropped); past
 *     that engine_schedule() fails as it does when out of memory.
 *
 * Heap layout (entries of 16 bytes, array 64-byte aligned):
 *
 *     index:  0  1  2 | 3    | 4  5  6  7 | 8  9 10 11 | 12 ...
 *             unused  | root | children 3 | children 4 | children 5
 *
 *   children(p) = 4p-8 .. 4p-5 (one cache line), parent(c) = c/4 + 2.
 *   Live entries occupy [ROOT, end); every entry from end to the capacity
 *   holds the SENTINEL key (greater than any real key), so a sift-down
 *   compares four children without checking how many exist.
 *
 * Heap key (compared as one unsigned 128-bit number, time in the high half):
 *
 *     t   : sim_time, never negative (time starts at 0, never goes back)
 *     key : seq << SLOT_BITS | slot    seq = insertion sequence (FIFO ties)
 *
 *   seq has 64 - SLOT_BITS = 36 bits. When it runs out (after ~6.9e10
 *   schedules) the heap is sorted and renumbered from 0, keeping the order;
 *   a sorted array is a valid heap. O(n log n) once per 6.9e10 schedules.
 *
 * Slots and ids: an event id is gen << 32 | slot index, gen >= 1, so 0 is
 * never an id. A slot's gen is bumped when its event runs or is cancelled,
 * which makes every old id for it stale. (An id repeats only after 2^32
 * reuses of one slot.) A slot is in one of three states:
 *
 *     pending    fn != NULL, one entry in the heap
 *     cancelled  fn == NULL, one (dead) entry still in the heap
 *     free       fn == NULL, on the free list, not in the heap
 */
#include "sim/engine.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT_BITS 28
#define SLOT_MAX ((uint32_t)1 << SLOT_BITS)     /* slot indexes are < SLOT_MAX */
#define SLOT_MASK ((uint64_t)SLOT_MAX - 1)
#define SEQ_LIMIT ((uint64_t)1 << (64 - SLOT_BITS))
#define NO_SLOT UINT32_MAX

#define ROOT 3
#define PAD 16                      /* entries kept past `end`: children
                                       (<= 3) and prefetches (<= 15) */
#define COMPACT_MIN 1024            /* no rebuild for fewer dead entries */

typedef struct hent {
    uint64_t t;                     /* sim_time, >= 0 */
    uint64_t key;                   /* seq << SLOT_BITS | slot */
} hent;

typedef struct slot {
    event_fn fn;                    /* NULL: cancelled or free */
    void *arg;
    uint32_t gen;                   /* high half of the current id; >= 1 */
    uint32_t next_free;             /* free-list link, NO_SLOT at the end */
} slot;

struct engine {
    hent *heap;                     /* 64-byte aligned, cap entries */
    size_t end;                     /* live entries are [ROOT, end) */
    size_t cap;
    hent *lane;                     /* [lhead, lend) in key order */
    size_t lhead, lend, lcap;
    slot *slots;
    uint32_t nslots;
    uint32_t free_head;             /* NO_SLOT when the free list is empty */
    sim_time now;
    uint64_t seq;                   /* next insertion sequence, < SEQ_LIMIT */
    size_t npending;
    size_t ndead;                   /* cancelled entries still in the heap */
    uint64_t ndispatched;
    int stop;
};

static const hent SENTINEL = { UINT64_MAX, UINT64_MAX };

/* (t, key) as one 128-bit number: a single compare-and-borrow in the loops. */
__extension__ typedef unsigned __int128 u128;

static inline u128 hkey(hent h) {
    return ((u128)h.t << 64) | h.key;
}

static inline uint32_t hslot(hent h) {
    return (uint32_t)(h.key & SLOT_MASK);
}

/* Move x up from hole position pos. */
static inline void sift_up(hent *h, size_t pos, hent x) {
    u128 kx = hkey(x);
    while (pos > ROOT) {
        size_t parent = pos / 4 + 2;
        if (hkey(h[parent]) <= kx)
            break;
        h[pos] = h[parent];
        pos = parent;
    }
    h[pos] = x;
}

/* The least of the four children starting at c. Entries past the end are
 * SENTINEL, so all four can be read. Branch-free: which child is least is
 * a coin toss the branch predictor would lose. */
static inline size_t min_child(const hent *h, size_t c) {
    u128 k0 = hkey(h[c]), k1 = hkey(h[c + 1]);
    u128 k2 = hkey(h[c + 2]), k3 = hkey(h[c + 3]);
    size_t m01 = k1 < k0 ? c + 1 : c;
    u128 k01 = k1 < k0 ? k1 : k0;
    size_t m23 = k3 < k2 ? c + 3 : c + 2;
    u128 k23 = k3 < k2 ? k3 : k2;
    return k23 < k01 ? m23 : m01;
}

/* Move x down from hole position pos, heap ending at end.
 *
 * The four children of c..c+3 are the 16 entries (four cache lines) from
 * 4c-8; they are prefetched while this level is compared, so the next
 * level's line is on its way before we know which one it is. Without this
 * a sift through a heap bigger than the caches waits for memory at every
 * level (bench_engine hold model, 1e6 pending: 2.1 -> 4.0 M events/s). */
static inline void sift_down(hent *h, size_t pos, size_t end, hent x) {
    u128 kx = hkey(x);
    for (;;) {
        size_t c = 4 * pos - 8;
        if (c >= end)
            break;
        size_t g = 4 * c - 8;
        if (g < end) {              /* g + 15 < cap: see PAD */
            const char *q = (const char *)&h[g];
            __builtin_prefetch(q);
            __builtin_prefetch(q + 64);
            __builtin_prefetch(q + 128);
            __builtin_prefetch(q + 192);
        }
        size_t m = min_child(h, c);
        if (hkey(h[m]) >= kx)
            break;
        h[pos] = h[m];
        pos = m;
    }
    h[pos] = x;
}

/* Remove the root. The heap must not be empty.
 *
 * The new root is the least child of the old one, known after the first
 * level; its slot is prefetched then, so the next dispatch finds it in cache.
 * With 1e5..1e6 pending the slot table is far bigger than L2, and without
 * this each dispatch stalls on one cache miss (bench_engine, 1e6 pending:
 * 3.0 -> 4.0 M events/s; 1e5: 7.5 -> 9.9). */
static inline void pop_root(engine *e) {
    hent *h = e->heap;
    size_t last = --e->end;
    hent x = h[last];
    h[last] = SENTINEL;
    if (last <= ROOT + 1) {         /* x was the only child, or the root */
        if (last == ROOT + 1)
            h[ROOT] = x;
        return;
    }
    size_t m = min_child(h, 4 * ROOT - 8);
    __builtin_prefetch(&e->slots[hslot(h[m])], 1);
    if (hkey(h[m]) >= hkey(x)) {
        h[ROOT] = x;
        return;
    }
    h[ROOT] = h[m];
    sift_down(h, m, last, x);
}

static void slot_release(engine *e, uint32_t i) {
    e->slots[i].next_free = e->free_head;
    e->free_head = i;
}

/* Restore the heap property over [ROOT, end) in O(n) (Floyd). */
static void heapify(engine *e) {
    if (e->end <= ROOT + 1)
        return;
    size_t last = e->end - 1;
    for (size_t p = last / 4 + 2 + 1; p-- > ROOT;)
        sift_down(e->heap, p, e->end, e->heap[p]);
}

/* Drop the dead entries of cancelled events and free their slots; the live
 * ones keep their keys but the heap order must then be restored. */
static void drop_dead(engine *e) {
    hent *h = e->heap;
    size_t w = ROOT;
    for (size_t r = ROOT; r < e->end; r++) {
        uint32_t i = hslot(h[r]);
        if (e->slots[i].fn)
            h[w++] = h[r];
        else
            slot_release(e, i);
    }
    for (size_t r = w; r < e->end; r++)
        h[r] = SENTINEL;
    e->end = w;
    w = 0;
    for (size_t r = e->lhead; r < e->lend; r++) {
        uint32_t i = hslot(e->lane[r]);
        if (e->slots[i].fn)
            e->lane[w++] = e->lane[r];
        else
            slot_release(e, i);
    }
    e->lhead = 0;
    e->lend = w;
    e->ndead = 0;
}

static void compact(engine *e) {
    drop_dead(e);
    heapify(e);
}

static int cmp_hent(const void *a, const void *b) {
    u128 ka = hkey(*(const hent *)a), kb = hkey(*(const hent *)b);
    return (ka > kb) - (ka < kb);
}

/* The sequence counter ran out: renumber the live events 0..n-1 in order,
 * the heap's (sorted: still a valid heap) and the lane's merged by key. */
static void renumber(engine *e) {
    drop_dead(e);
    hent *h = e->heap + ROOT, *l = e->lane;
    size_t nh = e->end - ROOT, nl = e->lend, a = 0, b = 0;
    qsort(h, nh, sizeof *h, cmp_hent);
    for (uint64_t i = 0; a < nh || b < nl; i++) {
        hent *x = b == nl || (a < nh && hkey(h[a]) < hkey(l[b])) ? &h[a++] : &l[b++];
        x->key = (i << SLOT_BITS) | hslot(*x);
    }
    e->seq = nh + nl;
}

/* Room for one more heap entry plus the sentinel padding. 0 or -1 (OOM,
 * heap unchanged). */
static int heap_reserve(engine *e) {
    if (e->end + 1 + PAD <= e->cap)
        return 0;
    size_t ncap = e->cap * 2;
    hent *h = aligned_alloc(64, ncap * sizeof *h);
    if (!h)
        return -1;
    memcpy(h, e->heap, e->end * sizeof *h);
    for (size_t i = e->end; i < ncap; i++)
        h[i] = SENTINEL;
    free(e->heap);
    e->heap = h;
    e->cap = ncap;
    return 0;
}

/* Whether an event at t goes to the lane: no earlier than its last one
 * (then its key is the greater, its sequence being the later). */
static int lane_takes(const engine *e, uint64_t t) {
    return e->lhead == e->lend || t >= e->lane[e->lend - 1].t;
}

/* Room for one more lane entry: the lane moved to the front of its array
 * when its popped half is the larger, else the array doubled. 0 or -1 (OOM,
 * lane unchanged). */
static int lane_reserve(engine *e) {
    if (e->lend < e->lcap)
        return 0;
    if (e->lhead >= e->lcap / 2 && e->lhead > 0) {
        memmove(e->lane, e->lane + e->lhead, (e->lend - e->lhead) * sizeof *e->lane);
        e->lend -= e->lhead;
        e->lhead = 0;
        return 0;
    }
    size_t ncap = e->lcap ? e->lcap * 2 : 64;
    hent *l = realloc(e->lane, ncap * sizeof *l);
    if (!l)
        return -1;
    e->lane = l;
    e->lcap = ncap;
    return 0;
}

/* A free slot's index, or NO_SLOT when out of memory (nothing changed).
 * The slot stays on the free list until the caller takes it. */
static uint32_t slot_reserve(engine *e) {
    if (e->free_head != NO_SLOT)
        return e->free_head;
    if (e->nslots >= SLOT_MAX)
        return NO_SLOT;
    uint32_t n = e->nslots ? e->nslots * 2 : 64;
    if (n > SLOT_MAX)
        n = SLOT_MAX;
    slot *s = realloc(e->slots, (size_t)n * sizeof *s);
    if (!s)
        return NO_SLOT;
    for (uint32_t i = n; i-- > e->nslots;) {
        s[i].fn = NULL;
        s[i].arg = NULL;
        s[i].gen = 1;
        s[i].next_free = e->free_head;
        e->free_head = i;
    }
    e->slots = s;
    e->nslots = n;
    return e->free_head;
}

int engine_reserve(engine *e, size_t n) {
    if (n > SLOT_MAX - e->nslots) return -1;
    size_t lneed = e->lend + n;
    if (lneed > e->lcap) {
        hent *l = realloc(e->lane, lneed * sizeof *l);
        if (!l) return -1;
        e->lane = l;
        e->lcap = lneed;
    }
    uint32_t want = e->nslots + (uint32_t)n;
    if (want <= e->nslots) return 0;
    slot *s = realloc(e->slots, (size_t)want * sizeof *s);
    if (!s) return -1;
    for (uint32_t i = want; i-- > e->nslots;) {     /* free list lowest first, as slot_reserve leaves it */
        s[i] = (slot){ NULL, NULL, 1, e->free_head };
        e->free_head = i;
    }
    e->slots = s;
    e->nslots = want;
    return 0;
}

engine *engine_new(void) {
    engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->cap = 64;
    e->heap = aligned_alloc(64, e->cap * sizeof *e->heap);
    if (!e->heap) {
        free(e);
        return NULL;
    }
    for (size_t i = 0; i < e->cap; i++)
        e->heap[i] = SENTINEL;
    e->end = ROOT;
    e->free_head = NO_SLOT;
    return e;
}

void engine_free(engine *e) {
    if (!e)
        return;
    free(e->heap);
    free(e->lane);
    free(e->slots);
    free(e);
}

sim_time engine_now(const engine *e) {
    return e->now;
}

const sim_time *engine_clock(const engine *e) {
    return &e->now;
}

event_id engine_schedule(engine *e, sim_time t_ns, event_fn fn, void *arg) {
    assert(fn);
    if (t_ns < e->now)
        t_ns = e->now;
    int to_lane = lane_takes(e, (uint64_t)t_ns);
    if ((to_lane ? lane_reserve(e) : heap_reserve(e)) != 0)
        return 0;
    if (e->seq == SEQ_LIMIT)
        renumber(e);                /* frees slots: before slot_reserve */
    uint32_t i = slot_reserve(e);
    if (i == NO_SLOT)
        return 0;
    slot *s = &e->slots[i];
    e->free_head = s->next_free;
    s->fn = fn;
    s->arg = arg;
    hent x = { (uint64_t)t_ns, (e->seq++ << SLOT_BITS) | i };
    if (to_lane)
        e->lane[e->lend++] = x;
    else
        sift_up(e->heap, e->end++, x);
    e->npending++;
    return ((event_id)s->gen << 32) | i;
}

event_id engine_after(engine *e, sim_time delay_ns, event_fn fn, void *arg) {
    if (delay_ns < 0)
        delay_ns = 0;
    sim_time t = delay_ns > SIM_FOREVER - e->now ? SIM_FOREVER : e->now + delay_ns;
    return engine_schedule(e, t, fn, arg);
}

int engine_cancel(engine *e, event_id id) {
    uint32_t i = (uint32_t)id;
    if (i >= e->nslots)
        return 0;
    slot *s = &e->slots[i];
    if (s->gen != (uint32_t)(id >> 32) || !s->fn)
        return 0;
    s->fn = NULL;
    s->arg = NULL;
    if (++s->gen == 0)
        s->gen = 1;
    e->npending--;
    e->ndead++;
    if (e->ndead >= COMPACT_MIN && e->ndead > e->npending)
        compact(e);
    return 1;
}

/* The next entry, live or dead: the lesser of the heap's root and the
 * lane's head. 1 with *top and *in_lane set, 0 when both are empty. */
static inline int peek(const engine *e, hent *top, int *in_lane) {
    int h = e->end > ROOT, l = e->lhead < e->lend;
    if (!h && !l)
        return 0;
    *in_lane = !h || (l && hkey(e->lane[e->lhead]) < hkey(e->heap[ROOT]));
    *top = *in_lane ? e->lane[e->lhead] : e->heap[ROOT];
    return 1;
}

/* Remove the entry peek() gave. The lane's next head's slot is asked for,
 * as pop_root does for the heap's new root. */
static inline void take(engine *e, int in_lane) {
    if (!in_lane) {
        pop_root(e);
        return;
    }
    if (++e->lhead == e->lend) {
        e->lhead = e->lend = 0;
        return;
    }
    __builtin_prefetch(&e->slots[hslot(e->lane[e->lhead])], 1);
}

/* Drop dead entries from the front; afterwards the next entry (if any) is
 * live. */
static inline void skip_dead(engine *e) {
    hent top;
    int in_lane;
    while (peek(e, &top, &in_lane)) {
        uint32_t i = hslot(top);
        if (e->slots[i].fn)
            return;
        take(e, in_lane);
        slot_release(e, i);
        e->ndead--;
    }
}

/* Take the next entry and run it, at time t_ns. It must be live; s is its
 * slot. The id is retired and the slot freed before the call: a cancel of
 * this event returns 0, and the handler's next schedule reuses the slot. */
static inline void dispatch(engine *e, slot *s, sim_time t_ns, int in_lane) {
    event_fn fn = s->fn;
    void *arg = s->arg;
    s->fn = NULL;
    s->arg = NULL;
    if (++s->gen == 0)
        s->gen = 1;
    s->next_free = e->free_head;
    e->free_head = (uint32_t)(s - e->slots);
    take(e, in_lane);
    e->npending--;
    e->ndispatched++;
    e->now = t_ns;
    fn(e, arg);
}

int engine_step(engine *e) {
    skip_dead(e);
    hent top;
    int in_lane;
    if (!peek(e, &top, &in_lane))
        return 0;
    if ((sim_time)top.t > SIM_HORIZON)
        return 0;                   /* beyond the horizon: never runs */
    dispatch(e, &e->slots[hslot(top)], (sim_time)top.t, in_lane);
    return 1;
}

uint64_t engine_run(engine *e, sim_time until_ns) {
    uint64_t n0 = e->ndispatched;
    int to_horizon = until_ns >= SIM_HORIZON;
    if (to_horizon)
        until_ns = SIM_HORIZON;     /* later events never run */
    int stopped = 0;
    hent top;
    int in_lane;
    for (;;) {
        if (e->stop) {
            stopped = 1;
            break;
        }
        if (!peek(e, &top, &in_lane))
            break;
        /* A dead entry later than until_ns is left for later: every other
         * entry is later still. */
        if ((sim_time)top.t > until_ns)
            break;
        uint32_t i = hslot(top);
        slot *s = &e->slots[i];
        if (!s->fn) {
            take(e, in_lane);
            slot_release(e, i);
            e->ndead--;
            continue;
        }
        dispatch(e, s, (sim_time)top.t, in_lane);
    }
    if (!stopped && !to_horizon && until_ns > e->now)
        e->now = until_ns;
    e->stop = 0;
    return e->ndispatched - n0;
}

void engine_stop(engine *e) {
    e->stop = 1;
}

size_t engine_pending(const engine *e) {
    return e->npending;
}

sim_time engine_next_time(engine *e) {
    skip_dead(e);
    hent top;
    int in_lane;
    return peek(e, &top, &in_lane) ? (sim_time)top.t : SIM_FOREVER;
}

uint64_t engine_dispatched(const engine *e) {
    return e->ndispatched;
}

void engine_debug_set_seq(engine *e, uint64_t seq) {
    if (seq > SEQ_LIMIT)
        seq = SEQ_LIMIT;
    if (seq > e->seq)
        e->seq = seq;
}

uint64_t engine_debug_seq_limit(void) {
    return SEQ_LIMIT;
}

int engine_check_s(double t_s, char *why, size_t len) {
    sim_time ns;
    if (sim_ns_from_s(t_s, &ns) == 0)
        return 0;
    if (why && len) {
        if (t_s > SIM_HORIZON_S)
            snprintf(why, len, "is beyond the simulated clock's horizon of 100 years (%.4g s)", SIM_HORIZON_S);
        else
            snprintf(why, len, "is not a finite time of at least 0 s");
    }
    return -1;
}
