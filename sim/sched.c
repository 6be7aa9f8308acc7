/*
 * sched: queues, quotas, policies, gang starts, EASY backfill, preemption.
 *
 * Representation: queued jobs in one array kept in (submit time, id) order,
 * each tagged with its class (queue, priority) whose count and first index
 * are kept; running jobs in another array (unordered). A dispatch pass
 * builds the policy's order lazily from the classes, only as far as the
 * head and `depth` jobs behind it (build_order), starts the head while it
 * fits, tries preemption (priority or quota reclaim) for a blocked head,
 * then backfills behind its reservation in one scan. A pass costs
 * O(depth + classes + r log r) for r running, whatever the backlog; a
 * submit O(log q) plus the array move.
 */
#include "sim/sched.h"

#include <stdlib.h>
#include <string.h>

/* Jobs a scheduling pass considers (the head, and behind it the EASY
 * backfill scan), as Slurm's bf_max_job_test (default 500). */
#define SCHED_DEFAULT_DEPTH 500
#define SMALL_MAX 64                     /* per-pool job-size counts below a node's GPUs */

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
    int *cls;                      /* class of each queued job (parallel to queued) */
    int cap_cls;
    /* Classes: (queue, priority) pairs seen. Per class the queued count and
     * a hint: no queued job of the class sits below index first[c]. The
     * pass builds its order from them lazily (see build_order). */
    struct sclass { int queue, prio, count, first; } *classes;
    int n_cls, cap_classes;
    int *small;                    /* queued jobs per (pool, GPUs < a node's): fragmentation */
    int depth;                     /* jobs a pass considers: the head and the backfill scan */
    int *cs;                       /* scratch for build_order, per class */
    double *cs_share;
    unsigned char *cs_mark;
    int cap_cs;
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
    q->depth = s->sched_backfill_depth > 0 ? s->sched_backfill_depth : SCHED_DEFAULT_DEPTH;
    q->small = calloc((size_t)cluster_pool_count(c) * SMALL_MAX + 1, sizeof *q->small);
    if (!q->small) {
        sched_free(q);
        return NULL;
    }
    return q;
}

void sched_free(sched *q) {
    if (!q) return;
    free(q->queues);
    free(q->queued);
    free(q->running);
    free(q->order);
    free(q->cls);
    free(q->classes);
    free(q->small);
    free(q->cs);
    free(q->cs_share);
    free(q->cs_mark);
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

/* The class of (queue, priority), created when first seen; -1 when out of memory. */
static int class_of(sched *q, int qi, int priority) {
    for (int c = 0; c < q->n_cls; c++)
        if (q->classes[c].queue == qi && q->classes[c].prio == priority) return c;
    if (grow((void **)&q->classes, &q->cap_classes, q->n_cls + 1, sizeof *q->classes) < 0) return -1;
    q->classes[q->n_cls] = (struct sclass){ qi, priority, 0, 1 << 30 };
    return q->n_cls++;
}

static int *small_slot(sched *q, const sched_job *j) {
    int per = cluster_pool_spec(q->c, j->pool)->gpus;
    return j->gpus >= 1 && j->gpus < per && j->gpus < SMALL_MAX ? &q->small[j->pool * SMALL_MAX + j->gpus] : NULL;
}

/* queued[i] leaves the queue: the arrays close up, the hints follow. */
static void remove_queued(sched *q, int i) {
    int c = q->cls[i];
    int *sl = small_slot(q, &q->queued[i]);
    if (sl) (*sl)--;
    q->classes[c].count--;
    memmove(&q->queued[i], &q->queued[i + 1], (size_t)(q->n_queued - i - 1) * sizeof *q->queued);
    memmove(&q->cls[i], &q->cls[i + 1], (size_t)(q->n_queued - i - 1) * sizeof *q->cls);
    q->n_queued--;
    for (int k = 0; k < q->n_cls; k++)
        if (q->classes[k].first > i && q->classes[k].first < (1 << 30)) q->classes[k].first--;
}

void sched_submit(sched *q, const sched_job *j) {
    if (grow((void **)&q->queued, &q->cap_queued, q->n_queued + 1, sizeof *q->queued) < 0) return;
    if (grow((void **)&q->cls, &q->cap_cls, q->n_queued + 1, sizeof *q->cls) < 0) return;
    int c = class_of(q, j->queue, q->policy == SCHED_FIFO ? 0 : j->priority);
    if (c < 0) return;
    /* Insert in (submit, id) order; new jobs arrive in time order, so this
     * is an append except for requeued jobs. */
    int lo = 0, hi = q->n_queued;                /* first index ordered after j */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const sched_job *m = &q->queued[mid];
        if (m->submit_s > j->submit_s || (m->submit_s == j->submit_s && m->id > j->id)) hi = mid;
        else lo = mid + 1;
    }
    int i = lo;
    memmove(&q->queued[i + 1], &q->queued[i], (size_t)(q->n_queued - i) * sizeof *q->queued);
    memmove(&q->cls[i + 1], &q->cls[i], (size_t)(q->n_queued - i) * sizeof *q->cls);
    q->queued[i] = *j;
    q->queued[i].running = 0;
    q->cls[i] = c;
    q->n_queued++;
    for (int k = 0; k < q->n_cls; k++)
        if (q->classes[k].first >= i && q->classes[k].first < (1 << 30)) q->classes[k].first++;
    if (i < q->classes[c].first) q->classes[c].first = i;
    q->classes[c].count++;
    int *sl = small_slot(q, j);
    if (sl) (*sl)++;
}

int sched_withdraw(sched *q, int job) {
    for (int i = 0; i < q->n_queued; i++)
        if (q->queued[i].id == job) {
            remove_queued(q, i);
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


/* The first `want` queued jobs that are not held, in the policy's order,
 * into q->order; returns how many. The order is: by queue share (fair),
 * then priority (not fifo), then submit order. A class, (queue, priority),
 * shares its queue's share and its priority, so the order is the classes
 * by key, each class's jobs in submit order, classes of equal key merged by
 * submit order. q->queued is in submit order, so a level of classes is one
 * scan from the first index its classes may have, stopping when the level
 * is exhausted or `want` is reached: a pass costs O(depth) on a long
 * backlog, not O(queued). */
static int build_order(sched *q, int want) {
    int n_c = q->n_cls;
    if (n_c > q->cap_cs) {
        int cap = n_c * 2;
        int *a = realloc(q->cs, (size_t)cap * sizeof *a);
        if (a) q->cs = a;
        double *b = realloc(q->cs_share, (size_t)cap * sizeof *b);
        if (b) q->cs_share = b;
        unsigned char *m = realloc(q->cs_mark, (size_t)cap);
        if (m) q->cs_mark = m;
        if (!a || !b || !m) return 0;
        q->cap_cs = cap;
    }
    int *cs = q->cs, nc = 0;
    double *key_share = q->cs_share;
    for (int c = 0; c < n_c; c++) {
        if (q->classes[c].count <= 0) continue;
        key_share[c] = q->policy == SCHED_FAIR ? share(q, q->classes[c].queue) : 0;
        cs[nc++] = c;
    }
    /* Classes by (share, -priority): insertion sort, usually a handful. */
    for (int i = 1; i < nc; i++)
        for (int k = i; k > 0; k--) {
            int a = cs[k - 1], b = cs[k];
            int before = key_share[b] < key_share[a] ||
                         (key_share[b] == key_share[a] && q->classes[b].prio > q->classes[a].prio);
            if (!before) break;
            cs[k - 1] = b;
            cs[k] = a;
        }
    unsigned char *in_level = q->cs_mark;
    if (n_c > 0) memset(in_level, 0, (size_t)n_c);
    int n = 0;
    for (int l = 0; l < nc && n < want;) {
        int e = l + 1;
        while (e < nc && key_share[cs[e]] == key_share[cs[l]] && q->classes[cs[e]].prio == q->classes[cs[l]].prio) e++;
        int total = 0, from = 1 << 30;
        for (int k = l; k < e; k++) {
            in_level[cs[k]] = 1;
            total += q->classes[cs[k]].count;
            if (q->classes[cs[k]].first < from) from = q->classes[cs[k]].first;
        }
        int found = 0;
        for (int i = from < q->n_queued ? from : q->n_queued; i < q->n_queued && found < total && n < want; i++) {
            int c = q->cls[i];
            if (!in_level[c]) continue;
            if (in_level[c] == 1) {            /* the class's first job: the hint becomes exact */
                q->classes[c].first = i;
                in_level[c] = 2;
            }
            found++;
            if (q->n_held && is_held(q, q->queued[i].id)) continue;
            q->order[n++] = i;
        }
        for (int k = l; k < e; k++) in_level[cs[k]] = 0;
        l = e;
    }
    return n;
}

static void start_queued(sched *q, int qi_index) {
    sched_job j = q->queued[qi_index];
    remove_queued(q, qi_index);
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
        /* The head and up to `depth` jobs behind it, in the policy's order;
         * none when only just-evicted jobs are left. */
        int n_order = build_order(q, q->depth + 1);
        if (n_order == 0) return;
        const sched_job *head = &q->queued[q->order[0]];
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
        int started = 0;
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
        const node_spec *ns = cluster_pool_spec(q->c, p);
        /* The smallest waiting job of the pool, when it is smaller than a
         * node (only then can free GPUs on a partly used node be stranded). */
        int smallest = ns->gpus;
        for (int g = 1; g < ns->gpus && g < SMALL_MAX; g++)
            if (q->small[p * SMALL_MAX + g] > 0) {
                smallest = g;
                break;
            }
        int any = smallest < ns->gpus;
        for (int i = 0; i < q->n_queued && !any; i++) any = q->queued[i].pool == p;
        if (!any) continue;
        /* Free GPUs on partly used nodes, too few for the smallest waiting
         * job: from the cluster's count of nodes by free GPUs. */
        for (int f = 1; f < ns->gpus && f < smallest; f++) frag += f * cluster_nodes_with_free(q->c, p, f);
    }
    return frag;
}
