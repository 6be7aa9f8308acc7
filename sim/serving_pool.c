/*
 * serving_pool: the request pool and each replica's finish heap.
 *
 * Requests live in one array (indices, never pointers, so the pool can
 * grow); a free list threaded through `next` recycles slots, so the pool
 * holds the requests waiting or running, not all that ever arrived.
 * A replica's decoding sequences sit in a binary heap keyed by the
 * iteration they finish in (then by index): O(log batch) per push or
 * removal, and each request knows its heap position for removal by index.
 * The entries hold the finish iteration beside the index, so a sift
 * compares entries of the heap's own array and reads no request (reading
 * the requests' 136-byte records was 5% of a 1e7-request run).
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
    sv->rq[i].prev = sv->rq[i].next = sv->rq[i].pprev = sv->rq[i].pnext = sv->rq[i].heap = NIL;
    sv->rq[i].t_first = sv->rq[i].t_admit = -1;
    return i;
}

void sv_req_free(serving *sv, int32_t i) {
    sv->rq[i].next = sv->free_rq;
    sv->free_rq = i;
}

static int heap_less(fin a, fin b) {
    if (a.iter != b.iter) return a.iter < b.iter;
    return a.r < b.r;
}

static void heap_set(replica *r, int64_t pos, fin x) {
    r->heap[pos] = x;
    r->sv->rq[x.r].heap = (int32_t)pos;
}

static void heap_up(replica *r, int64_t pos) {
    fin x = r->heap[pos];
    while (pos > 0) {
        int64_t parent = (pos - 1) / 2;
        if (!heap_less(x, r->heap[parent])) break;
        heap_set(r, pos, r->heap[parent]);
        pos = parent;
    }
    heap_set(r, pos, x);
}

static void heap_down(replica *r, int64_t pos) {
    fin x = r->heap[pos];
    for (;;) {
        int64_t c = 2 * pos + 1;
        if (c >= r->heap_n) break;
        if (c + 1 < r->heap_n && heap_less(r->heap[c + 1], r->heap[c])) c++;
        if (!heap_less(r->heap[c], x)) break;
        heap_set(r, pos, r->heap[c]);
        pos = c;
    }
    heap_set(r, pos, x);
}

int sv_heap_push(replica *r, int32_t i, int64_t finish_iter) {
    if (GROW(r->heap, r->heap_cap, (size_t)r->heap_n + 1)) return -1;
    heap_set(r, r->heap_n++, (fin){ finish_iter, i });
    heap_up(r, r->heap_n - 1);
    return 0;
}

void sv_heap_remove(replica *r, int32_t i) {
    int64_t pos = r->sv->rq[i].heap;
    r->sv->rq[i].heap = NIL;
    fin last = r->heap[--r->heap_n];
    if (pos == r->heap_n) return;
    heap_set(r, pos, last);
    if (pos > 0) heap_up(r, pos);              /* the top (a finish) has nowhere up to go */
    heap_down(r, r->sv->rq[last.r].heap);
}
