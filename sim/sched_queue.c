/*
 * sched_queue: the queued jobs. Per class (queue, priority) an array of
 * the class's jobs in (submit time, id) order, the order the policy takes
 * each class in (sched.c's take_order merges the classes).
 *
 * Why per class, and why both ends move. The 100K-GPU year backs up
 * ~25,000 jobs: one array of all of them moved its tail on every start
 * and every requeue (memmove, 11% of the run; 28% of the 1M-GPU year),
 * and a pass that wanted the first jobs of one class walked past every
 * other class's jobs to reach them. A job starts or is requeued near the
 * front of its class (a pass looks at the first `depth` jobs; a requeued
 * job keeps its submit time), so a class keeps room below its first job
 * (v[0..head)) and a removal or an insertion moves whichever side of the
 * slot is shorter: O(min(place, jobs behind it)), O(depth) in practice
 * instead of O(backlog). The live jobs stay contiguous: a pass reads the
 * first jobs of a class without skipping anything. The moves shift the
 * slots a pass's order holds (q->order), which are fixed here.
 */
#include "sim/sched_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

#define ROOM_MIN 32                /* room below head left alone up to this (re-centring costs the jobs) */

/* The class of (queue, priority), created when first seen; -1 when out of memory. */
static int class_of(sched *q, int qi, int priority) {
    for (int c = 0; c < q->n_cls; c++)
        if (q->classes[c].queue == qi && q->classes[c].prio == priority) return c;
    if (GROW(q->classes, q->cap_classes, (size_t)q->n_cls + 1)) return -1;
    q->classes[q->n_cls] = (sclass){ .queue = qi, .prio = priority };
    return q->n_cls++;
}

int sched_queue_class(sched *q, const sched_job *j) {
    return class_of(q, j->queue, q->policy == SCHED_FIFO ? 0 : j->priority);
}

static int *small_slot(sched *q, const sched_job *j) {
    int per = cluster_pool_spec(q->c, j->pool)->gpus;
    return j->gpus >= 1 && j->gpus < per && j->gpus < SMALL_MAX ? &q->small[j->pool * SMALL_MAX + j->gpus] : NULL;
}

/* A job joins (delta 1) or leaves (-1) the queue: the per-pool counts
 * follow. 0, or -1 when out of memory (nothing is counted). */
static int count_queued(sched *q, const sched_job *j, int delta) {
    if (sched_cset_add(&q->psz[j->pool].sizes, j->gpus, delta) < 0) return -1;
    q->psz[j->pool].n_queued += delta;
    int *sl = small_slot(q, j);
    if (sl) *sl += delta;
    return 0;
}

/* Slots [from, to) of class c moved by delta: the pass's order follows. */
static void moved(sched *q, int c, int from, int to, int delta) {
    for (int k = 0; k < q->n_order; k++)
        if (q->order[k].c == c && q->order[k].i >= from && q->order[k].i < to) q->order[k].i += delta;
}

/* The first slot of k at or after head ordered after j. */
static int place_of(const sclass *k, const sched_job *j) {
    int lo = k->head, hi = k->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const sched_job *m = &k->v[mid];
        if (m->submit_s > j->submit_s || (m->submit_s == j->submit_s && m->id > j->id)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* The blocks of class k over slots [from, to) get their least GPUs again,
 * from the queued jobs (slots head..n) in them. O(to - from + QBLOCK). */
static void remin(sclass *k, int from, int to) {
    for (int b = from >> QBLOCK_SHIFT; b <= (to - 1) >> QBLOCK_SHIFT && to > from; b++) {
        int lo = b << QBLOCK_SHIFT, hi = lo + QBLOCK, m = INT_MAX;
        if (lo < k->head) lo = k->head;
        if (hi > k->n) hi = k->n;
        for (int i = lo; i < hi; i++)
            if (k->v[i].gpus < m) m = k->v[i].gpus;
        k->bmin[b] = m;
    }
}

/* A job appended at slot p (the usual submit): its block's least is the
 * block's old one or the job's, without reading the block's jobs; the
 * old one counts only when the block had a queued job below p. */
static void append_min(sclass *k, int p) {
    int b = p >> QBLOCK_SHIFT, first = b << QBLOCK_SHIFT, g = k->v[p].gpus;
    int others = p > first && p > k->head;
    k->bmin[b] = others && k->bmin[b] < g ? k->bmin[b] : g;
#ifdef CT_SCHED_CROSSCHECK
    int m = k->bmin[b];
    remin(k, p, p + 1);
    if (k->bmin[b] != m) abort();
#endif
}

/* Room for one more job at the end of class c: re-centred to slot 0 when
 * the room below head outgrows the jobs, else grown. 0, or -1. */
static int make_room(sched *q, int c) {
    sclass *k = &q->classes[c];
    if (k->head > ROOM_MIN && k->head > k->count) {
        memmove(k->v, k->v + k->head, (size_t)k->count * sizeof *k->v);
        moved(q, c, k->head, k->n, -k->head);
        int was = k->n;
        k->n = k->count;
        k->head = 0;
        remin(k, 0, was);
    }
    if (GROW(k->v, k->cap, (size_t)k->n + 1) || GROW(k->bmin, k->cap_bmin, (k->cap >> QBLOCK_SHIFT) + 1)) return -1;
    return 0;
}

int sched_queue_add(sched *q, const sched_job *j) {
    int c = sched_queue_class(q, j);
    if (c < 0 || make_room(q, c) < 0 || count_queued(q, j, 1) < 0) return -1;
    sclass *k = &q->classes[c];
    /* New jobs arrive in time order: an append but for requeued jobs. */
    int p = place_of(k, j), lo, hi;                     /* the slots that change: [lo, hi) */
    if (k->head > 0 && p - k->head < k->n - p) {        /* the jobs before it move down */
        memmove(&k->v[k->head - 1], &k->v[k->head], (size_t)(p - k->head) * sizeof *k->v);
        moved(q, c, k->head, p, -1);
        k->head--;
        p--;
        lo = k->head, hi = p + 1;
    } else {                                           /* the jobs after it move up */
        memmove(&k->v[p + 1], &k->v[p], (size_t)(k->n - p) * sizeof *k->v);
        moved(q, c, p, k->n, 1);
        k->n++;
        lo = p, hi = k->n;
    }
    k->v[p] = *j;
    k->v[p].running = 0;
    if (hi - lo == 1 && p == k->n - 1) append_min(k, p);
    else remin(k, lo, hi);
    k->count++;
    q->n_queued++;
    return 0;
}

void sched_queue_remove(sched *q, qref r) {
    sclass *k = &q->classes[r.c];
    count_queued(q, &k->v[r.i], -1);
    if (r.i - k->head < k->n - 1 - r.i) {             /* the jobs before it move up */
        memmove(&k->v[k->head + 1], &k->v[k->head], (size_t)(r.i - k->head) * sizeof *k->v);
        moved(q, r.c, k->head, r.i, 1);
        k->head++;
        remin(k, k->head - 1, r.i + 1);
    } else {                                           /* the jobs after it move down */
        memmove(&k->v[r.i], &k->v[r.i + 1], (size_t)(k->n - 1 - r.i) * sizeof *k->v);
        moved(q, r.c, r.i + 1, k->n, -1);
        k->n--;
        remin(k, r.i, k->n + 1);
    }
    k->count--;
    q->n_queued--;
}

qref sched_queue_find(const sched *q, int id) {
    for (int c = 0; c < q->n_cls; c++) {
        const sclass *k = &q->classes[c];
        for (int i = k->head; i < k->n; i++)
            if (k->v[i].id == id) return (qref){ c, i };
    }
    return (qref){ -1, -1 };
}

/* The earliest (submit, id) queued job of the pool over all classes. */
int sched_oldest(const sched *q, int pool) {
    const sched_job *best = NULL;
    for (int c = 0; c < q->n_cls; c++) {
        const sclass *k = &q->classes[c];
        for (int i = k->head; i < k->n; i++) {
            const sched_job *j = &k->v[i];
            if (j->pool != pool) continue;
            if (!best || j->submit_s < best->submit_s || (j->submit_s == best->submit_s && j->id < best->id)) best = j;
            break;                           /* the class's first of the pool */
        }
    }
    return best ? best->id : -1;
}
