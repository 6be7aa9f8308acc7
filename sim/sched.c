/*
 * sched: queues, quotas, policies, gang starts, EASY backfill, preemption.
 *
 * Representation: queued jobs in one array kept in (submit time, id) order;
 * running jobs in another (unordered). A dispatch pass sorts a candidate
 * order by the policy, starts the head while it fits, tries preemption
 * (priority or quota reclaim) for a blocked head, then backfills behind its
 * reservation. Costs O(q log q + q*r) per pass for q queued and r running.
 */
#include "sim/sched.h"

#include <stdlib.h>
#include <string.h>

typedef struct queue {
    char name[SC_NAME_MAX];
    int quota;                     /* guaranteed GPUs; 0 = none */
    int used;
} queue;

struct sched {
    cluster *c;
    sched_ops ops;
    sched_policy policy;
    int backfill, preemption;
    queue *queues;
    int n_queues;
    int total_gpus;
    sched_job *queued;
    int n_queued, cap_queued;
    sched_job *running;
    int n_running, cap_running;
    int *order;                    /* scratch: candidate order */
    int cap_order;
    int *key;                      /* scratch: order_queue()'s bucket per queued job */
    int cap_key;
    double now;
    int *held;                     /* jobs evicted during this dispatch pass: they */
    int n_held, cap_held;          /* wait for the next pass (no evict-restart ping-pong) */
};

static int grow(void **p, int *cap, int need, size_t size) {
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

sched *sched_new(const scenario *s, cluster *c, const sched_ops *ops) {
    sched *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->c = c;
    q->ops = *ops;
    q->policy = !strcmp(s->sched_policy, "priority") ? SCHED_PRIORITY
              : !strcmp(s->sched_policy, "fair") ? SCHED_FAIR : SCHED_FIFO;
    q->backfill = !strcmp(s->sched_backfill, "easy");
    q->preemption = s->sched_preemption;
    q->n_queues = s->n_queues > 0 ? s->n_queues : 1;
    q->queues = calloc((size_t)q->n_queues, sizeof *q->queues);
    if (!q->queues) {
        sched_free(q);
        return NULL;
    }
    if (s->n_queues == 0) strcpy(q->queues[0].name, "default");
    for (int i = 0; i < s->n_queues; i++) {
        memcpy(q->queues[i].name, s->queues[i].name, sizeof q->queues[i].name);
        q->queues[i].quota = s->queues[i].quota_gpus;
    }
    for (int p = 0; p < cluster_pool_count(c); p++) q->total_gpus += cluster_pool_gpus(c, p);
    return q;
}

void sched_free(sched *q) {
    if (!q) return;
    free(q->queues);
    free(q->queued);
    free(q->running);
    free(q->order);
    free(q->key);
    free(q->held);
    free(q);
}

int sched_queue_of(const sched *q, const char *name) {
    for (int i = 0; name && i < q->n_queues; i++)
        if (!strcmp(q->queues[i].name, name)) return i;
    return 0;
}

int sched_queue_count(const sched *q) { return q->n_queues; }
const char *sched_queue_name(const sched *q, int i) { return q->queues[i].name; }
int sched_queue_quota(const sched *q, int i) { return q->queues[i].quota; }
int sched_queue_used(const sched *q, int i) { return q->queues[i].used; }
int sched_queued(const sched *q) { return q->n_queued; }

int sched_oldest(const sched *q, int pool) {
    for (int i = 0; i < q->n_queued; i++)       /* kept in submit order */
        if (q->queued[i].pool == pool) return q->queued[i].id;
    return -1;
}

void sched_submit(sched *q, const sched_job *j) {
    if (grow((void **)&q->queued, &q->cap_queued, q->n_queued + 1, sizeof *q->queued) < 0) return;
    /* Insert in (submit, id) order; new jobs arrive in time order, so this
     * is an append except for requeued jobs. */
    int i = q->n_queued;
    while (i > 0 && (q->queued[i - 1].submit_s > j->submit_s ||
                     (q->queued[i - 1].submit_s == j->submit_s && q->queued[i - 1].id > j->id))) {
        q->queued[i] = q->queued[i - 1];
        i--;
    }
    q->queued[i] = *j;
    q->queued[i].running = 0;
    q->n_queued++;
}

int sched_withdraw(sched *q, int job) {
    for (int i = 0; i < q->n_queued; i++)
        if (q->queued[i].id == job) {
            memmove(&q->queued[i], &q->queued[i + 1], (size_t)(q->n_queued - i - 1) * sizeof *q->queued);
            q->n_queued--;
            return 1;
        }
    return 0;
}

static int running_index(const sched *q, int job) {
    for (int i = 0; i < q->n_running; i++)
        if (q->running[i].id == job) return i;
    return -1;
}

void sched_finished(sched *q, int job) {
    int i = running_index(q, job);
    if (i < 0) return;
    q->queues[q->running[i].queue].used -= q->running[i].gpus;
    q->running[i] = q->running[--q->n_running];
}

void sched_update_end(sched *q, int job, double end_s) {
    int i = running_index(q, job);
    if (i >= 0) q->running[i].expected_end_s = end_s;
}

/* Dominant share of a queue: GPUs used over its quota (or over the
 * cluster when it has none). */
static double share(const sched *q, int qi) {
    const queue *u = &q->queues[qi];
    double base = u->quota > 0 ? u->quota : (q->total_gpus > 0 ? q->total_gpus : 1);
    return u->used / base;
}

static const sched *sort_ctx;

static int is_held(const sched *q, int id) {
    for (int i = 0; i < q->n_held; i++)
        if (q->held[i] == id) return 1;
    return 0;
}

static int cmp_order(const void *a, const void *b) {
    const sched *q = sort_ctx;
    const sched_job *x = &q->queued[*(const int *)a], *y = &q->queued[*(const int *)b];
    int hx = q->n_held && is_held(q, x->id), hy = q->n_held && is_held(q, y->id);
    if (hx != hy) return hx - hy;                 /* held jobs last */
    if (q->policy == SCHED_FAIR) {
        double sx = share(q, x->queue), sy = share(q, y->queue);
        if (sx != sy) return sx < sy ? -1 : 1;
    }
    if (q->policy != SCHED_FIFO && x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
    if (x->submit_s != y->submit_s) return x->submit_s < y->submit_s ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* q->order[0..n_queued) = the queued jobs in cmp_order's order, without
 * calling it Q log Q times per dispatch (at 100,000 GPUs the queue reaches
 * thousands of jobs and a dispatch runs per job event). q->queued is kept
 * in (submit, id) order, cmp_order's last keys, so a stable sort on the
 * leading keys (held, share of the queue [fair], priority [not fifo]) gives
 * the same order: a counting sort over their distinct values, O(Q + K).
 * Returns -1 (and the caller falls back to qsort) with more than 32
 * distinct priorities or shares, or when out of memory. */
static int order_queue(sched *q) {
    enum { MAXV = 32 };
    double shares[MAXV];
    int prios[MAXV], ns = 0, np = 0;
    int srank[64];
    if (q->n_queues > 64 || grow((void **)&q->key, &q->cap_key, q->n_queued, sizeof *q->key) < 0) return -1;
    /* Share ranks: how many distinct shares are smaller (ties share a rank). */
    for (int k = 0; k < q->n_queues; k++) {
        double v = q->policy == SCHED_FAIR ? share(q, k) : 0;
        int seen = 0;
        for (int i = 0; i < ns; i++) seen |= shares[i] == v;
        if (!seen) {
            if (ns == MAXV) return -1;
            shares[ns++] = v;
        }
    }
    for (int k = 0; k < q->n_queues; k++) {
        double v = q->policy == SCHED_FAIR ? share(q, k) : 0;
        srank[k] = 0;
        for (int i = 0; i < ns; i++) srank[k] += shares[i] < v;
    }
    /* Priorities present, higher first. */
    for (int i = 0; i < q->n_queued; i++) {
        int v = q->policy == SCHED_FIFO ? 0 : q->queued[i].priority, seen = 0;
        for (int k = 0; k < np && !seen; k++) seen = prios[k] == v;
        if (!seen) {
            if (np == MAXV) return -1;
            prios[np++] = v;
        }
    }
    int nb = 2 * ns * np, count[2 * MAXV * MAXV + 1];
    memset(count, 0, (size_t)(nb + 1) * sizeof *count);
    for (int i = 0; i < q->n_queued; i++) {
        const sched_job *j = &q->queued[i];
        int v = q->policy == SCHED_FIFO ? 0 : j->priority, pr = 0;
        for (int k = 0; k < np; k++) pr += prios[k] > v;
        int held = q->n_held && is_held(q, j->id);
        int b = (held * ns + srank[j->queue]) * np + pr;
        q->key[i] = b;
        count[b + 1]++;
    }
    for (int b = 0; b < nb; b++) count[b + 1] += count[b];
    for (int i = 0; i < q->n_queued; i++) q->order[count[q->key[i]]++] = i;
    return 0;
}

static void start_queued(sched *q, int qi_index) {
    sched_job j = q->queued[qi_index];
    memmove(&q->queued[qi_index], &q->queued[qi_index + 1],
            (size_t)(q->n_queued - qi_index - 1) * sizeof *q->queued);
    q->n_queued--;
    if (grow((void **)&q->running, &q->cap_running, q->n_running + 1, sizeof *q->running) < 0) return;
    j.running = 1;
    j.expected_end_s = q->now + j.expected_end_s;       /* queued: runtime; running: end time */
    q->running[q->n_running++] = j;
    q->queues[j.queue].used += j.gpus;
    q->ops.start(q->ops.ctx, j.id);
}

/* Running jobs by (expected end, index) and by (GPUs, index), for qsort:
 * the index makes ties deterministic. */
static int cmp_end(const void *a, const void *b) {
    const sched *q = sort_ctx;
    int x = *(const int *)a, y = *(const int *)b;
    double ex = q->running[x].expected_end_s, ey = q->running[y].expected_end_s;
    if (ex != ey) return ex < ey ? -1 : 1;
    return (x > y) - (x < y);
}

static int cmp_gpus(const void *a, const void *b) {
    const sched *q = sort_ctx;
    int x = *(const int *)a, y = *(const int *)b;
    int gx = q->running[x].gpus, gy = q->running[y].gpus;
    if (gx != gy) return gx < gy ? -1 : 1;
    return (x > y) - (x < y);
}

static int queued_index(const sched *q, int id) {
    for (int i = 0; i < q->n_queued; i++)
        if (q->queued[i].id == id) return i;
    return -1;
}

/* Evict running jobs of the head's pool to let it start: lower priority
 * (when preemption is on) or borrowing above their queue's quota (when the
 * head's queue is below its own). Victims with the fewest GPUs first, most
 * recently started last... Returns 1 when the head can start after. */
static int try_preempt(sched *q, const sched_job *head) {
    const queue *hq = &q->queues[head->queue];
    int reclaim = hq->quota > 0 && hq->used + head->gpus <= hq->quota;
    if (!q->preemption && !reclaim) return 0;
    int free_gpus = cluster_pool_free_gpus(q->c, head->pool), avail = free_gpus;
    int *cand = malloc((size_t)(q->n_running + 1) * sizeof *cand);
    if (!cand) return 0;
    int n = 0;
    for (int i = 0; i < q->n_running; i++) {
        const sched_job *r = &q->running[i];
        if (r->pool != head->pool) continue;
        const queue *rq = &q->queues[r->queue];
        /* A queue's guaranteed GPUs are never taken: only jobs of queues
         * without a quota, or above theirs, are evicted (otherwise priority
         * preemption and quota reclaim would evict each other forever). */
        int unguarded = rq->quota == 0 || rq->used > rq->quota;
        int lower = q->preemption && r->priority < head->priority && unguarded;
        int borrowing = reclaim && r->queue != head->queue && rq->quota > 0 && rq->used > rq->quota;
        if (lower || borrowing) cand[n++] = i;
    }
    /* Fewest GPUs first, then longest running (lowest index). */
    sort_ctx = q;
    qsort(cand, (size_t)n, sizeof *cand, cmp_gpus);
    int need = 0;
    while (need < n && avail < head->gpus) avail += q->running[cand[need++]].gpus;
    int ok = avail >= head->gpus;
    if (ok) {
        /* Evict by id: indices shift as jobs leave the running list. */
        int *ids = malloc((size_t)(need + 1) * sizeof *ids);
        if (!ids) {
            free(cand);
            return 0;
        }
        for (int i = 0; i < need; i++) ids[i] = q->running[cand[i]].id;
        for (int i = 0; i < need && !cluster_can_alloc(q->c, head->pool, head->gpus); i++) {
            if (grow((void **)&q->held, &q->cap_held, q->n_held + 1, sizeof *q->held) == 0)
                q->held[q->n_held++] = ids[i];
            q->ops.preempt(q->ops.ctx, ids[i], head->id);
        }
        free(ids);
    }
    free(cand);
    return ok && cluster_can_alloc(q->c, head->pool, head->gpus);
}

/* Earliest time enough GPUs of the pool are free for the head, counting
 * running jobs' expected ends; and how many GPUs are spare then. */
static double reservation(const sched *q, const sched_job *head, int *extra) {
    int free_gpus = cluster_pool_free_gpus(q->c, head->pool);
    double t = q->now;
    int n = 0;
    int *idx = malloc((size_t)(q->n_running + 1) * sizeof *idx);
    if (!idx) {
        *extra = 0;
        return 1e300;
    }
    for (int i = 0; i < q->n_running; i++)
        if (q->running[i].pool == head->pool) idx[n++] = i;
    /* Thousands of jobs run on a large cluster: O(n log n), not insertion. */
    sort_ctx = q;
    qsort(idx, (size_t)n, sizeof *idx, cmp_end);
    int i = 0;
    while (free_gpus < head->gpus && i < n) {
        free_gpus += q->running[idx[i]].gpus;
        t = q->running[idx[i]].expected_end_s;
        i++;
    }
    free(idx);
    *extra = free_gpus - head->gpus;
    return free_gpus >= head->gpus ? t : 1e300;
}

/* Could anything start now? Without preemption or quotas a job can start
 * only if its pool has at least its GPUs free: when no queued job passes
 * that test, the pass (and its sort) is skipped. O(queued). */
static int anything_can_start(const sched *q) {
    if (q->preemption) return 1;
    for (int i = 0; i < q->n_queues; i++)
        if (q->queues[i].quota > 0) return 1;
    for (int i = 0; i < q->n_queued; i++)
        if (q->queued[i].gpus <= cluster_pool_free_gpus(q->c, q->queued[i].pool)) return 1;
    return 0;
}

void sched_dispatch(sched *q, double now_s) {
    q->now = now_s;
    q->n_held = 0;
    for (int guard = 0; guard < 1000000 && q->n_queued > 0; guard++) {
        if (!anything_can_start(q)) return;
        if (grow((void **)&q->order, &q->cap_order, q->n_queued, sizeof *q->order) < 0) return;
        for (int i = 0; i < q->n_queued; i++) q->order[i] = i;
        sort_ctx = q;
        /* The queue is kept in submit order: FIFO needs no sort. */
        if ((q->policy != SCHED_FIFO || q->n_held) && order_queue(q) < 0)
            qsort(q->order, (size_t)q->n_queued, sizeof *q->order, cmp_order);
        const sched_job *head = &q->queued[q->order[0]];
        if (q->n_held && is_held(q, head->id)) return;    /* only just-evicted jobs are left */
        /* Above its quota a job still starts on idle GPUs: it borrows them,
         * and try_preempt() lets their owner reclaim them. */
        if (cluster_can_alloc(q->c, head->pool, head->gpus)) {
            start_queued(q, q->order[0]);
            continue;
        }
        int head_id = head->id, before = q->n_queued;
        sched_job h = *head;
        int freed = try_preempt(q, &h);
        if (freed) {
            int k = queued_index(q, head_id);
            if (k >= 0) {
                start_queued(q, k);
                continue;
            }
        }
        if (q->n_queued != before) continue;    /* evicted jobs joined the queue: new order */
        if (!q->backfill) return;
        /* EASY backfill behind the head's reservation. */
        int extra;
        double shadow = reservation(q, &h, &extra);
        /* One scan behind the same reservation (EASY): a started job
         * leaves the queue, so the later order entries past its slot move
         * down by one. When a start changed the queue otherwise (a job
         * requeued from a callback), the pass starts over. */
        int started = 0, n_order = q->n_queued;
        for (int oi = 1; oi < n_order; oi++) {
            const sched_job *j = &q->queued[q->order[oi]];
            if (q->n_held && is_held(q, j->id)) continue;
            if (!cluster_can_alloc(q->c, j->pool, j->gpus)) continue;
            int fits_before = now_s + j->expected_end_s <= shadow;
            int fits_beside = j->pool != h.pool || j->gpus <= extra;
            if (!fits_before && !fits_beside) continue;
            if (!fits_before && j->pool == h.pool) extra -= j->gpus;
            int k = q->order[oi], n_before = q->n_queued;
            start_queued(q, k);
            started = 1;
            if (q->n_queued != n_before - 1) {         /* the queue changed under us: a new pass */
                started = 2;
                break;
            }
            for (int r = oi + 1; r < n_order; r++)
                if (q->order[r] > k) q->order[r]--;
        }
        /* One EASY scan per pass: the head still waits for its reservation,
         * and what could start beside or before it has. */
        if (started != 2) return;
    }
}

int sched_fragmented_gpus(const sched *q) {
    if (q->n_queued == 0) return 0;
    int frag = 0;
    for (int p = 0; p < cluster_pool_count(q->c); p++) {
        int smallest = 1 << 30, any = 0;
        for (int i = 0; i < q->n_queued; i++)
            if (q->queued[i].pool == p) {
                any = 1;
                if (q->queued[i].gpus < smallest) smallest = q->queued[i].gpus;
            }
        if (!any) continue;
        const node_spec *ns = cluster_pool_spec(q->c, p);
        /* Free GPUs on partly used nodes, too few for the smallest waiting
         * job: from the cluster's count of nodes by free GPUs. */
        for (int f = 1; f < ns->gpus && f < smallest; f++) frag += f * cluster_nodes_with_free(q->c, p, f);
    }
    return frag;
}
