/*
 * sched_where: where the running jobs hold GPUs, kept as the world places
 * and releases them (sched_placed, sched_unplaced), for preemption.
 *
 * Per node: the scheduler jobs on it (id, GPUs there, queue, priority).
 * Per pool: its nodes that run jobs, in buckets by (the highest priority
 * of a job on the node, GPUs used on it, the set of its jobs' queues);
 * each bucket is a bitmap over the pool's nodes with a second level of
 * one bit per non-empty word, so that the next node of a bucket at or
 * after a given one costs O(1) words in practice. A preemption attempt
 * (sched_preempt.c) walks the buckets that may hold victims in (priority,
 * GPUs to free) order and their nodes in node-number order, the order it
 * took nodes in when it gathered them all, and stops when the head fits:
 * O(the nodes it looks at), not O(every node of every candidate).
 *
 * A placement costs O(the node's jobs + the pool's buckets): buckets are
 * few (priorities x GPUs per node x the queue sets seen together).
 * When memory runs out the index is marked unusable (q->where_ok = 0) and
 * preemption gathers the candidates' nodes as before: same choices. A
 * scheduler without preemption and quotas never evicts: it keeps none.
 */
#include "sim/sched.h"
#include "sim/sched_int.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

_Static_assert(sizeof(wnode) == 32, "a node's record is half a cache line");

/* The queue's bit in a bucket's set of queues; WHERE_OTHER stands for a
 * queue beyond the mask and for a job the scheduler does not run. */
static uint64_t queue_bit(int qi) { return 1ull << (qi >= 0 && qi < WHERE_OTHER ? qi : WHERE_OTHER); }

int sched_where_init(sched *q) {
    if (!q->evicts) return 0;      /* nothing is ever evicted: no index */
    int nodes = cluster_node_count(q->c);
    q->n_where = nodes;
    size_t bytes = ((size_t)nodes + 1) * sizeof *q->where;
    bytes = (bytes + 63) / 64 * 64;
    q->where = aligned_alloc(64, bytes);                 /* a record never straddles two cache lines */
    if (q->where) memset(q->where, 0, bytes);
    q->pool_first = calloc((size_t)q->n_pools + 1, sizeof *q->pool_first);
    q->pool_nodes = calloc((size_t)q->n_pools + 1, sizeof *q->pool_nodes);
    if (!q->where || !q->pool_first || !q->pool_nodes) return -1;
    /* A pool's nodes are contiguous (sim/cluster.c). */
    for (int n = nodes - 1; n >= 0; n--) {
        int p = cluster_node_pool(q->c, n);
        q->pool_first[p] = n;
        q->pool_nodes[p]++;
    }
    q->where_ok = 1;
    return 0;
}

void sched_where_free(sched *q) {
    for (int n = 0; q->where && n < q->n_where; n++) free(q->where[n].more);
    for (int b = 0; b < q->n_wb; b++) {
        free(q->wb[b].bits);
        free(q->wb[b].top);
    }
    void *v[] = { q->where, q->wb, q->pool_first, q->pool_nodes, q->odd, q->mark, q->touched, q->wscratch };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) free(v[i]);
}

/* The bucket of key (pool, prio, used, qmask), made when new. -1: out of memory. */
static int bucket_of(sched *q, int pool, int prio, int used, uint64_t qmask) {
    for (int b = 0; b < q->n_wb; b++) {
        const wbucket *x = &q->wb[b];
        if (x->pool == pool && x->prio == prio && x->used == used && x->qmask == qmask) return b;
    }
    size_t words = (size_t)q->pool_nodes[pool] / 64 + 1;
    if (GROW(q->wb, q->cap_wb, (size_t)q->n_wb + 1)) return -1;
    wbucket *x = &q->wb[q->n_wb];
    *x = (wbucket){ pool, prio, used, qmask, 0, calloc(words, sizeof *x->bits), calloc(words / 64 + 1, sizeof *x->top) };
    if (!x->bits || !x->top) {
        free(x->bits);
        free(x->top);
        return -1;
    }
    return q->n_wb++;
}

static void bucket_put(sched *q, int b, int node, int on) {
    wbucket *x = &q->wb[b];
    int i = node - q->pool_first[x->pool];
    uint64_t bit = 1ull << (i & 63);
    if (on) {
        x->bits[i >> 6] |= bit;
        x->top[i >> 12] |= 1ull << ((i >> 6) & 63);
        x->count++;
        return;
    }
    x->bits[i >> 6] &= ~bit;
    if (!x->bits[i >> 6]) x->top[i >> 12] &= ~(1ull << ((i >> 6) & 63));
    x->count--;
}

/* Node `node` leaves the list of over-listed nodes (the last takes its place). */
static void odd_drop(sched *q, int node) {
    int i = -q->where[node].bucket - 1, last = q->odd[--q->n_odd];
    q->odd[i] = last;
    q->where[last].bucket = -1 - i;
}

/* The node's key from its jobs, and its move to that bucket. 0, or -1 when
 * out of memory (the index is then unusable). */
static int node_rekey(sched *q, int node) {
    wnode *w = &q->where[node];
    if (w->bucket > 0) bucket_put(q, w->bucket - 1, node, 0);
    if (w->bucket < 0) odd_drop(q, node);
    w->bucket = 0;
    if (w->n == 0) return 0;
    int prio = w->one.prio, pool = cluster_node_pool(q->c, node), listed = 0;
    uint64_t qmask = 0;
    for (int i = 0; i < w->n; i++) {
        const struct went *e = sched_went(w, i);
        if (e->prio > prio) prio = e->prio;
        qmask |= queue_bit(e->queue);
        listed += e->gpus;
    }
    /* GPUs used as the cluster counts them (what a victim node's cost was
     * when all were gathered), not the jobs' sum. The two differed on a
     * node where a job started while the node was failing (before the
     * world took a failing node out of service ahead of its jobs'
     * requeue: docs/failures.md). Such an over-listed node's key as
     * gathering sees it depends on the head (only candidates count), so
     * it goes in no bucket but in the list of over-listed nodes, which the
     * walk keys one by one; the world no longer makes one, and the
     * sanitized build aborts if it does. The cluster changes a node's
     * free GPUs without telling only when it leaves service or comes back
     * idle: the walk skips both. */
    int used = cluster_pool_spec(q->c, pool)->gpus - cluster_node_free_gpus(q->c, node);
#ifdef CT_SCHED_CROSSCHECK
    if (listed > used) {
        fprintf(stderr, "sched_where: node %d listed for %d GPUs, %d used\n", node, listed, used);
        abort();
    }
#endif
    if (listed > used) {
        if (GROW(q->odd, q->cap_odd, (size_t)q->n_odd + 1)) return -1;
        q->odd[q->n_odd] = node;
        w->bucket = -1 - q->n_odd++;
        return 0;
    }
    int b = bucket_of(q, pool, prio, used, qmask);
    if (b < 0) return -1;
    bucket_put(q, b, node, 1);
    w->bucket = b + 1;
    return 0;
}

void sched_placed(sched *q, int id, int node, int gpus) {
    if (!q->where_ok || node < 0 || node >= q->n_where) return;
    wnode *w = &q->where[node];
    int r = sched_run_index(q, id);
    size_t cap = (size_t)w->cap;
    int qi = r >= 0 ? q->running[r].queue : -1;
    if (gpus > SHRT_MAX || qi > SHRT_MAX || (w->n > 0 && (GROW(w->more, cap, (size_t)w->n) || cap > INT32_MAX))) {
        q->where_ok = 0;
        return;
    }
    w->cap = (int)cap;
    /* A job the scheduler does not run is never a candidate: its queue
     * stands as WHERE_OTHER, which only the exact test per node reads. */
    struct went e = { id, r >= 0 ? q->running[r].priority : 0, (short)gpus, (short)qi };
    if (w->n == 0) w->one = e;
    else w->more[w->n - 1] = e;
    w->n++;
    if (node_rekey(q, node) < 0) q->where_ok = 0;
}

void sched_unplaced(sched *q, int id, int node) {
    if (!q->where_ok || node < 0 || node >= q->n_where) return;
    wnode *w = &q->where[node];
    for (int i = 0; i < w->n; i++)
        if (sched_went(w, i)->id == id) {
            struct went last = *sched_went(w, --w->n);
            if (i == 0) w->one = last;
            else w->more[i - 1] = last;
            break;
        }
    if (node_rekey(q, node) < 0) q->where_ok = 0;
}

int sched_where_kept(const sched *q) { return q->where_ok; }

void sched_where_prefetch(const sched *q, int node) {
    if (q->where_ok && node >= 0 && node < q->n_where) __builtin_prefetch(&q->where[node], 1);
}

/* The first node of bucket b at or after node `from`; -1 when none. */
int sched_where_next(const sched *q, int b, int from) {
    const wbucket *x = &q->wb[b];
    int first = q->pool_first[x->pool], n = q->pool_nodes[x->pool];
    int i = from - first, words = n / 64 + 1;
    if (i < 0) i = 0;
    if (i >= n) return -1;
    uint64_t m = x->bits[i >> 6] & (~0ull << (i & 63));
    if (m) return first + (i & ~63) + __builtin_ctzll(m);
    /* The next non-empty word, from the second level. */
    int wi = (i >> 6) + 1;
    for (int t = wi >> 6; t <= (words - 1) >> 6; t++) {
        uint64_t tm = x->top[t];
        if (t == wi >> 6) tm &= ~0ull << (wi & 63);
        if (tm) {
            int w = t * 64 + __builtin_ctzll(tm);
            return first + w * 64 + __builtin_ctzll(x->bits[w]);
        }
    }
    return -1;
}

/* The pool's non-empty buckets into out (room for q->n_wb), by (priority,
 * GPUs used); returns how many. */
int sched_where_buckets(const sched *q, int pool, int *out) {
    int n = 0;
    for (int b = 0; b < q->n_wb; b++) {
        const wbucket *x = &q->wb[b];
        if (x->pool != pool || x->count == 0) continue;
        int k = n++;
        while (k > 0 && (q->wb[out[k - 1]].prio > x->prio ||
                         (q->wb[out[k - 1]].prio == x->prio && q->wb[out[k - 1]].used > x->used))) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = b;
    }
    return n;
}
