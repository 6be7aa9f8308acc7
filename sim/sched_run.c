/*
 * sched_run: the running set. Running jobs sit in one array (q->running,
 * a job leaving is replaced by the last one, as before), found by id in
 * O(1) (q->run_of), and kept per pool in a 4-ary min-heap by expected
 * end (q->rheap), so that the EASY reservation reads the running jobs in
 * end order without sorting them all on every pass. A heap entry holds
 * the end beside the index: a sift compares without reading the job. Each
 * start and end sifts (a job ending is usually at the root: the ends are
 * known), so the heap is 4-ary, half as deep as a binary one; the 10K-GPU
 * FIFO year (bench_sched) spent 9% of its time there through the index
 * and 12% in the binary heap after it.
 *
 * The reservation is the heap's only reader, and it reads rarely where
 * the queue is short: the 10K-GPU FIFO year (bench_sched) starts and ends
 * 197,000 jobs, each a sift of a heap of ~100 running jobs (12% of its
 * time), for 687 reservations. So each pool's heap counts the changes
 * since a reservation last read it, and once they outnumber its entries
 * it goes loose: a start appends, an end moves the last entry into its
 * place, a new end is written where it stands, and the next reservation
 * orders it again (Floyd's O(n) heapify, paid for by the n changes before
 * it). Where a blocked head reads it at nearly every pass (the 100K-GPU
 * and 1M-GPU years' backlogs) it stays ordered. Which jobs a walk reads,
 * and in which order, do not depend on the heap's shape (below).
 *
 * Per (pool, queue) it also counts the running jobs by priority
 * (q->rprio), for sched_preempt.c's quick test for candidates: only
 * when a job may be evicted at all (q->evicts).
 *
 * Order kept: the reservation adds running jobs by (expected end, index
 * in q->running), the order the pass sorted them in before. The heap keys
 * on the end alone; jobs of equal end are gathered and taken in index
 * order, so the moves of the array (which change indices) never have to
 * reach the heap's order.
 */
#include "sim/sched_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* An end time as an integer key of the same order, so that the sifts'
 * tournament compiles to conditional moves (the compiler branches on a
 * double compare): a double's bits, the sign bit flipped for one at or
 * above zero and every bit for one below, order as the doubles do (-0
 * before +0: a tie then ordered, which changes the heap's shape, never
 * which jobs a walk in end order reads, by ends compared as doubles). */
static uint64_t end_key(double e) {
    uint64_t u;
    memcpy(&u, &e, sizeof u);
    return u >> 63 ? ~u : u | (1ull << 63);
}

static double key_end(uint64_t k) {
    uint64_t u = k >> 63 ? k & ~(1ull << 63) : ~k;
    double e;
    memcpy(&e, &u, sizeof e);
    return e;
}

static double end_at(const struct rheap *h, int pos) { return key_end(h->v[pos].end_key); }

static void heap_set(sched *q, struct rheap *h, int pos, struct rent x) {
    h->v[pos] = x;
    q->run_hpos[x.r] = pos;
}

#define ARITY 4                    /* children of heap position p: ARITY * p + 1 .. ARITY * p + ARITY (least_child compares four) */

static void sift_up(sched *q, struct rheap *h, int pos) {
    struct rent x = h->v[pos];
    while (pos > 0 && h->v[(pos - 1) / ARITY].end_key > x.end_key) {
        heap_set(q, h, pos, h->v[(pos - 1) / ARITY]);
        pos = (pos - 1) / ARITY;
    }
    heap_set(q, h, pos, x);
}

/* The child of least end among c .. c + ARITY - 1 (those below h->n). A
 * full family is a branch-free tournament, as in sim/engine.c's
 * min_child: which child is least is a coin toss the branch predictor
 * would lose (a compare loop there was 8% of bench_sched). */
static int least_child(const struct rheap *h, int c) {
    const struct rent *v = h->v;
    if (h->n - c < ARITY) {
        int m = c;
        for (int k = c + 1; k < h->n; k++) m = v[k].end_key < v[m].end_key ? k : m;
        return m;
    }
    uint64_t e0 = v[c].end_key, e1 = v[c + 1].end_key, e2 = v[c + 2].end_key, e3 = v[c + 3].end_key;
    int m01 = e1 < e0 ? c + 1 : c, m23 = e3 < e2 ? c + 3 : c + 2;
    uint64_t a = e1 < e0 ? e1 : e0, b = e3 < e2 ? e3 : e2;
    return b < a ? m23 : m01;
}

static void sift_down(sched *q, struct rheap *h, int pos) {
    struct rent x = h->v[pos];
    for (;;) {
        int c = ARITY * pos + 1;
        if (c >= h->n) break;
        int m = least_child(h, c);
        if (h->v[m].end_key >= x.end_key) break;
        heap_set(q, h, pos, h->v[m]);
        pos = m;
    }
    heap_set(q, h, pos, x);
}

/* A change to h: past as many changes as it has entries since it was
 * last read in order, it is left loose (the cost of ordering it again is
 * then no more than what keeping it ordered cost). */
static void touched(struct rheap *h) {
    if (!h->loose && ++h->churn > h->n) h->loose = 1;
}

/* h in heap order again, for a reader (Floyd: each parent sifted down,
 * the last first). */
static void order(sched *q, struct rheap *h) {
    if (h->loose)
        for (int p = (h->n - 2) / ARITY; h->n > 1 && p >= 0; p--) sift_down(q, h, p);
    h->loose = 0;
    h->churn = 0;
#ifdef CT_SCHED_CROSSCHECK
    for (int i = 0; i < h->n; i++)
        if ((i > 0 && h->v[(i - 1) / ARITY].end_key > h->v[i].end_key) || q->run_hpos[h->v[i].r] != i) abort();
#endif
}

/* The multiset of a few distinct ints (the running priorities here, the
 * queued sizes in sched.c): a linear search is shortest. */
int sched_cset_add(cset *s, int key, int delta) {
    int i = 0;
    while (i < s->n && s->v[i].key < key) i++;
    if (i == s->n || s->v[i].key != key) {
        if (GROW(s->v, s->cap, (size_t)s->n + 1)) return -1;
        memmove(&s->v[i + 1], &s->v[i], (size_t)(s->n - i) * sizeof *s->v);   /* distinct values: a few */
        s->v[i] = (struct cval){ key, 0 };
        s->n++;
    }
    s->v[i].count += delta;
    return 0;
}

/* The slot of id in run_of, grown (new slots -1) as ids grow. NULL: out of memory. */
static int *run_slot(sched *q, int id) {
    if (id < 0) return NULL;
    if ((size_t)id >= q->cap_run_of) {
        size_t old = q->cap_run_of;
        if (GROW(q->run_of, q->cap_run_of, (size_t)id + 1)) return NULL;
        for (size_t i = old; i < q->cap_run_of; i++) q->run_of[i] = -1;
    }
    return &q->run_of[id];
}

int sched_run_index(const sched *q, int id) {
    return id >= 0 && (size_t)id < q->cap_run_of ? q->run_of[id] : -1;
}

int sched_run_add(sched *q, const sched_job *j) {
    int *slot = run_slot(q, j->id);
    struct rheap *h = &q->rheap[j->pool];
    if (!slot || GROW(q->running, q->cap_running, (size_t)q->n_running + 1) ||
        GROW(q->run_hpos, q->cap_run_hpos, (size_t)q->n_running + 1) || GROW(h->v, h->cap, (size_t)h->n + 1) ||
        (q->evicts && sched_cset_add(&q->rprio[j->pool * q->n_queues + j->queue], j->priority, 1) < 0))
        return -1;
    int r = q->n_running++;
    q->running[r] = *j;
    q->running[r].running = 1;
    *slot = r;
    h->n++;
    heap_set(q, h, h->n - 1, (struct rent){ end_key(j->expected_end_s), r });
    touched(h);
    if (!h->loose) sift_up(q, h, h->n - 1);
    return 0;
}

/* Take heap position pos out of h. */
static void heap_remove(sched *q, struct rheap *h, int pos) {
    struct rent last = h->v[--h->n];
    touched(h);
    if (pos == h->n) return;
    heap_set(q, h, pos, last);
    if (h->loose) return;
    sift_up(q, h, pos);
    sift_down(q, h, q->run_hpos[last.r]);
}

void sched_run_remove(sched *q, int i) {
    const sched_job *j = &q->running[i];
    if (q->evicts) sched_cset_add(&q->rprio[j->pool * q->n_queues + j->queue], j->priority, -1);   /* seen: no allocation */
    heap_remove(q, &q->rheap[q->running[i].pool], q->run_hpos[i]);
    q->run_of[q->running[i].id] = -1;
    int last = --q->n_running;
    if (i == last) return;
    q->running[i] = q->running[last];             /* the last job takes the slot */
    q->run_hpos[i] = q->run_hpos[last];
    q->rheap[q->running[i].pool].v[q->run_hpos[i]].r = i;
    q->run_of[q->running[i].id] = i;
}

void sched_run_set_end(sched *q, int i, double end_s) {
    struct rheap *h = &q->rheap[q->running[i].pool];
    q->running[i].expected_end_s = end_s;
    h->v[q->run_hpos[i]].end_key = end_key(end_s);
    touched(h);
    if (h->loose) return;
    sift_up(q, h, q->run_hpos[i]);
    sift_down(q, h, q->run_hpos[i]);
}

/* ---- the reservation -------------------------------------------------- */

/* The frontier of a walk of the pool's heap in end order: heap positions
 * in a min-heap of their own. */
static void front_push(sched *q, const struct rheap *h, int pos) {
    int *f = q->front, k = q->n_front++;
    double e = end_at(h, pos);
    while (k > 0 && end_at(h, f[(k - 1) / 2]) > e) {
        f[k] = f[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    f[k] = pos;
}

static int front_pop(sched *q, const struct rheap *h) {
    int *f = q->front, top = f[0], pos = f[--q->n_front], k = 0, n = q->n_front;
    double e = end_at(h, pos);
    for (;;) {
        int l = 2 * k + 1, m = l;
        if (l >= n) break;
        if (l + 1 < n && end_at(h, f[l + 1]) < end_at(h, f[l])) m = l + 1;
        if (end_at(h, f[m]) >= e) break;
        f[k] = f[m];
        k = m;
    }
    if (n > 0) f[k] = pos;
    /* The popped position's children join the frontier. */
    for (int c = ARITY * top + 1; c <= ARITY * top + ARITY && c < h->n; c++) front_push(q, h, c);
    return top;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Earliest time enough GPUs of the pool are free for `gpus`, counting the
 * running jobs' expected ends, and the GPUs spare then (*extra); 1e300
 * when they never are. Visits only the jobs that end before that time
 * (and their heap children): O(k log k) for k of them. */
double sched_run_reservation(sched *q, int pool, int gpus, double now_s, int *extra) {
    struct rheap *h = &q->rheap[pool];
    int free_gpus = cluster_pool_free_gpus(q->c, pool);
    double t = now_s;
    *extra = 0;
    if (GROW(q->front, q->cap_front, (size_t)h->n + 1) || GROW(q->group, q->cap_group, (size_t)h->n + 1))
        return 1e300;
    order(q, h);
    q->n_front = 0;
    if (h->n > 0) front_push(q, h, 0);
    while (free_gpus < gpus && q->n_front > 0) {
        /* Every job of the next end time, taken in index order. */
        double e = end_at(h, q->front[0]);
        int n = 0;
        do q->group[n++] = h->v[front_pop(q, h)].r;
        while (q->n_front > 0 && end_at(h, q->front[0]) == e);
        qsort(q->group, (size_t)n, sizeof *q->group, cmp_int);
        for (int k = 0; k < n && free_gpus < gpus; k++) {
            free_gpus += q->running[q->group[k]].gpus;
            t = e;
        }
    }
    *extra = free_gpus - gpus;
    return free_gpus >= gpus ? t : 1e300;
}
