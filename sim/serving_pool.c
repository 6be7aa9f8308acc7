/*
 * serving_pool: the request pool and each replica's finish heap.
 *
 * Requests live in one array (indices, never pointers, so the pool can
 * grow); a free list threaded through `next` recycles slots, so the pool
 * holds the requests waiting or running, not all that ever arrived.
 * A replica's decoding sequences sit in a binary heap keyed by the
 * iteration they finish in (then by index, so the order in which they
 * leave is the keys' order, whatever the heap's shape): O(log batch) per
 * push or pop. The entries hold the finish iteration beside the index, so
 * a sift compares entries of the heap's own array and touches no request
 * (reading the requests' records was 5% of a 1e7-request run; writing
 * each moved request's heap position, the next 4%). Removing a sequence
 * that has not finished (a preemption, a lost replica) finds it by a scan
 * of the heap, O(batch), as rare as those are.
 */
#include "sim/serving_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* A new request slot; -1 when out of memory. */
int32_t sv_req_alloc(serving *sv) {
    if (sv->free_rq == NIL) {
        if (sv->n_rq == sv->cap_rq) {
            if (sv->cap_rq >= INT32_MAX / 2) return NIL;
            int32_t cap = sv->cap_rq ? sv->cap_rq * 2 : 1024;
            req *p = realloc(sv->rq, (size_t)cap * sizeof *p);
            if (!p) return NIL;
            sv->rq = p;
            sv->cap_rq = cap;
        }
        sv->rq[sv->n_rq].next = sv->free_rq;
        sv->free_rq = sv->n_rq++;
    }
    int32_t i = sv->free_rq;
    sv->free_rq = sv->rq[i].next;
    memset(&sv->rq[i], 0, sizeof sv->rq[i]);
    sv->rq[i].prev = sv->rq[i].next = sv->rq[i].pprev = sv->rq[i].pnext = NIL;
    sv->rq[i].t_first = sv->rq[i].t_admit = -1;
    return i;
}

void sv_req_free(serving *sv, int32_t i) {
    sv->rq[i].next = sv->free_rq;
    sv->free_rq = i;
}

/* (iter, r) before: without branches, as which of two children is the
 * smaller is a coin toss a branch predictor loses. */
static int heap_less(fin a, fin b) {
    return (a.iter < b.iter) | ((a.iter == b.iter) & (a.r < b.r));
}

/* Past the last entry while a pop walks down: no entry is after it. */
static const fin FIN_END = { INT64_MAX, INT32_MAX };

/* Put x in the hole at pos, moving it up past larger parents. */
static void heap_up(fin *h, int64_t pos, fin x) {
    while (pos > 0) {
        int64_t parent = (pos - 1) / 2;
        if (!heap_less(x, h[parent])) break;
        h[pos] = h[parent];
        pos = parent;
    }
    h[pos] = x;
}

/* Put x in the hole at pos, moving it down past smaller children (n entries). */
static void heap_down(fin *h, int64_t n, int64_t pos, fin x) {
    for (;;) {
        int64_t c = 2 * pos + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_less(h[c + 1], h[c])) c++;
        if (!heap_less(h[c], x)) break;
        h[pos] = h[c];
        pos = c;
    }
    h[pos] = x;
}

int sv_heap_push(replica *r, int32_t i, int64_t finish_iter) {
    if ((size_t)r->heap_n + 1 > r->heap_cap && GROW(r->heap, r->heap_cap, (size_t)r->heap_n + 1)) return -1;
    heap_up(r->heap, r->heap_n++, (fin){ finish_iter, i });
    return 0;
}

/* The top leaves by Floyd's bottom-up deletion (Knuth, TAOCP vol. 3,
 * 5.2.3, exercise 18): the hole it leaves goes down to a leaf by the
 * smaller child, one comparison a level, and the last entry, which
 * belongs near the bottom, goes up from there (a step or none). */
int32_t sv_heap_pop(replica *r) {
    fin *h = r->heap, top = h[0], last = h[--r->heap_n];
    int64_t n = r->heap_n, pos = 0;
    if (n == 0) return top.r;
    h[n] = FIN_END;                            /* a last child's right sibling, never taken */
    for (int64_t c = 1; c < n; c = 2 * pos + 1) {
        c += heap_less(h[c + 1], h[c]);
        h[pos] = h[c];
        pos = c;
    }
    heap_up(h, pos, last);
    return top.r;
}

void sv_heap_remove(replica *r, int32_t i) {
    fin *h = r->heap;
    int64_t pos = 0;
    while (h[pos].r != i) pos++;               /* a preemption or a lost replica: O(batch) */
    fin last = h[--r->heap_n];
    if (pos == r->heap_n) return;
    if (pos > 0 && heap_less(last, h[(pos - 1) / 2])) heap_up(h, pos, last);
    else heap_down(h, r->heap_n, pos, last);
}
