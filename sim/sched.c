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
 * submit O(log q) plus the array move. A preemption attempt adds
 * O(nodes of the pool + nodes held by the candidates).
 *
 * Holds. A job that evicts others (the preemptor) owns a hold until it
 * starts: the GPUs its victims freed are kept for it. The hold is kept as
 * a claim, not as node ids: whenever another job of the pool wants to
 * start, the scheduler places the holders first on a copy of the pool's
 * "nodes by free GPUs" counts (the way the cluster would place them: whole
 * idle nodes, or the best-fit node), claiming what they would take (all
 * the idle nodes up to their need, or the largest partly free node, when
 * they do not fit yet), and lets the other job start only if it still
 * fits in what is left. Holders start first in every pass. Without this,
 * shared-512 livelocked: a 64-GPU job evicted ten jobs per pass, they
 * restarted on the freed GPUs in the same second, and it evicted again
 * (4,085 evictions in 30 days, one job preempted 193 times).
 */
#include "sim/sched.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* Jobs a scheduling pass considers (the head, and behind it the EASY
 * backfill scan), as Slurm's bf_max_job_test (default 500). */
#define SCHED_DEFAULT_DEPTH 500
#define SMALL_MAX 64                     /* per-pool job-size counts below a node's GPUs */

/* A queued preemptor's claim on the GPUs its victims freed; victims[]
 * are the jobs it evicted (it never evicts one twice while it waits). */
typedef struct hold {
    int id, pool, gpus;
    int *victims;
    int n_victims;
    size_t cap_victims;
} hold;

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
    int spread;                    /* placement: sub-node jobs go to the emptiest node */
    queue *queues;
    int n_queues;
    int total_gpus;
    sched_job *queued;
    int n_queued;
    size_t cap_queued;
    sched_job *running;
    int n_running;
    size_t cap_running;
    int *order;                    /* scratch: candidate order */
    size_t cap_order;
    int *cls;                      /* class of each queued job (parallel to queued) */
    size_t cap_cls;
    /* Classes: (queue, priority) pairs seen. Per class the queued count and
     * a hint: no queued job of the class sits below index first[c]. The
     * pass builds its order from them lazily (see build_order). */
    struct sclass { int queue, prio, count, first; } *classes;
    int n_cls;
    size_t cap_classes;
    int *small;                    /* queued jobs per (pool, GPUs < a node's): fragmentation */
    int depth;                     /* jobs a pass considers: the head and the backfill scan */
    int *cs;                       /* scratch for build_order, per class */
    double *cs_share;
    unsigned char *cs_mark;
    size_t cap_cs, cap_cs_share, cap_cs_mark;
    double now;
    int *held;                     /* jobs evicted during this dispatch pass: they */
    int n_held;                    /* wait for the next pass (no evict-restart ping-pong) */
    size_t cap_held;
    hold *holds;                   /* in creation order: earlier holds are placed first */
    int n_holds;
    size_t cap_holds;
};

sched *sched_new(const scenario *s, cluster *c, const sched_ops *ops) {
    sched *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->c = c;
    q->ops = *ops;
    q->policy = !strcmp(s->sched_policy, "priority") ? SCHED_PRIORITY
              : !strcmp(s->sched_policy, "fair") ? SCHED_FAIR : SCHED_FIFO;
    q->backfill = !strcmp(s->sched_backfill, "easy");
    q->preemption = s->sched_preemption;
    q->spread = !strcmp(s->sched_placement, "spread");
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
    void *v[] = { q->queues, q->queued, q->running, q->order,   q->cls, q->classes,
                  q->small,  q->cs,     q->cs_share, q->cs_mark, q->held };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) free(v[i]);
    for (int i = 0; i < q->n_holds; i++) free(q->holds[i].victims);
    free(q->holds);
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
int sched_holds(const sched *q) { return q->n_holds; }

static int hold_index(const sched *q, int id) {
    for (int i = 0; i < q->n_holds; i++)
        if (q->holds[i].id == id) return i;
    return -1;
}

/* The job started or left the queue: its hold ends. */
static void drop_hold(sched *q, int id) {
    int i = hold_index(q, id);
    if (i < 0) return;
    free(q->holds[i].victims);
    memmove(&q->holds[i], &q->holds[i + 1], (size_t)(q->n_holds - i - 1) * sizeof *q->holds);
    q->n_holds--;
}

int sched_oldest(const sched *q, int pool) {
    for (int i = 0; i < q->n_queued; i++)       /* kept in submit order */
        if (q->queued[i].pool == pool) return q->queued[i].id;
    return -1;
}

/* The class of (queue, priority), created when first seen; -1 when out of memory. */
static int class_of(sched *q, int qi, int priority) {
    for (int c = 0; c < q->n_cls; c++)
        if (q->classes[c].queue == qi && q->classes[c].prio == priority) return c;
    if (GROW(q->classes, q->cap_classes, (size_t)q->n_cls + 1)) return -1;
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
    if (GROW(q->queued, q->cap_queued, (size_t)q->n_queued + 1)) return;
    if (GROW(q->cls, q->cap_cls, (size_t)q->n_queued + 1)) return;
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
            drop_hold(q, job);
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
    if (GROW(q->cs, q->cap_cs, (size_t)n_c) || GROW(q->cs_share, q->cap_cs_share, (size_t)n_c) ||
        GROW(q->cs_mark, q->cap_cs_mark, (size_t)n_c))
        return 0;
    int *cs = q->cs, nc = 0;
    double *key_share = q->cs_share;
    for (int c = 0; c < n_c; c++) {
        if (q->classes[c].count <= 0) continue;
        key_share[c] = q->policy == SCHED_FAIR ? share(q, q->classes[c].queue) : 0;
        cs[nc++] = c;
    }
    /* Classes by (share, -priority): insertion sort, usually a handful.
     * With preemption on, priority is a tier above the share (Slurm's
     * partition PriorityTier): a job that may evict another is considered
     * before it, or the pass would start the other job and evict it at once
     * (fair share ordering and priority preemption undoing each other). */
    int tier = q->preemption && q->policy == SCHED_FAIR;
    for (int i = 1; i < nc; i++)
        for (int k = i; k > 0; k--) {
            int a = cs[k - 1], b = cs[k];
            int pa = q->classes[a].prio, pb = q->classes[b].prio;
            int before = tier && pb != pa ? pb > pa
                       : key_share[b] < key_share[a] || (key_share[b] == key_share[a] && pb > pa);
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
    if (GROW(q->running, q->cap_running, (size_t)q->n_running + 1)) return;
    j.running = 1;
    j.expected_end_s = q->now + j.expected_end_s;       /* queued: runtime; running: end time */
    q->running[q->n_running++] = j;
    q->queues[j.queue].used += j.gpus;
    drop_hold(q, j.id);
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

/* ---- holds: what-if placement on counts --------------------------------
 * cnt[f], f = 1..per: UP nodes of the pool with exactly f GPUs free (the
 * cluster's own counts). place() takes a job's GPUs from cnt the way the
 * cluster allocates: whole idle nodes for a job of a node or more; for a
 * smaller job the node with the fewest free GPUs that fit (pack) or the
 * most (spread). When the job does not fit and `claim` is set, it takes
 * what it would wait for instead: every idle node up to its need, or the
 * node with the most free GPUs. Returns 1 when the job fits. */
static int place(int *cnt, int per, int gpus, int spread, int claim) {
    if (gpus >= per) {
        int k = (gpus + per - 1) / per;
        if (cnt[per] >= k) {
            cnt[per] -= k;
            return 1;
        }
        if (claim) cnt[per] = 0;
        return 0;
    }
    int f = -1;
    for (int g = gpus > 0 ? gpus : 1; g <= per; g++)
        if (cnt[g] > 0) {
            f = g;
            if (!spread) break;
        }
    if (f > 0) {
        cnt[f]--;
        if (f - gpus > 0) cnt[f - gpus]++;
        return 1;
    }
    for (int g = per; claim && g >= 1; g--)
        if (cnt[g] > 0) {
            cnt[g]--;
            break;
        }
    return 0;
}

/* Does j fit in cnt once the holds before `upto` (of its pool, not its
 * own) have been placed? cnt is changed. */
static int fits_after_holds(const sched *q, const sched_job *j, int *cnt, int upto) {
    int per = cluster_pool_spec(q->c, j->pool)->gpus;
    for (int i = 0; i < upto; i++) {
        const hold *h = &q->holds[i];
        if (h->pool != j->pool || h->id == j->id) continue;
        place(cnt, per, h->gpus, q->spread, 1);
    }
    return place(cnt, per, j->gpus, q->spread, 0);
}

/* Can j start now? The cluster must have room, and the holds made before
 * j's own (all of them when j holds nothing) must still fit beside it. */
static int can_start(const sched *q, const sched_job *j) {
    if (!cluster_can_alloc(q->c, j->pool, j->gpus)) return 0;
    int upto = hold_index(q, j->id);
    if (upto < 0) upto = q->n_holds;
    int any = 0;
    for (int i = 0; i < upto && !any; i++) any = q->holds[i].pool == j->pool && q->holds[i].id != j->id;
    if (!any) return 1;
    int per = cluster_pool_spec(q->c, j->pool)->gpus;
    int cnt[SMALL_MAX + 1] = { 0 };
    if (per > SMALL_MAX) return 1;                   /* no such node type; the cluster decides */
    for (int f = 1; f <= per; f++) cnt[f] = cluster_nodes_with_free(q->c, j->pool, f);
    return fits_after_holds(q, j, cnt, upto);
}

/* ---- preemption -----------------------------------------------------------
 * Which running jobs to evict so that the head starts: only jobs the rules
 * allow (lower priority with preemption on, or borrowing when the head's
 * queue reclaims its quota; see try_preempt), and only as many as the
 * nodes need. The scheduler knows GPUs per job, not where they are: the
 * world tells it each candidate's nodes (ops.nodes), and the choice is made
 * on a copy of the pool's free GPUs per node:
 *   - a job of a node or more needs k whole idle nodes: nodes are taken in
 *     order of the candidate GPUs on them (idle ones first), a node only
 *     when every GPU used on it belongs to an allowed candidate;
 *   - a smaller job needs one node: the node where the fewest candidate
 *     GPUs (fewest GPUs first) make room.
 * Nothing is evicted unless the head then fits beside the earlier holds.
 * A queue with a quota gives up a job only when it keeps at least its
 * quota without it, counting the victims already chosen: guaranteed GPUs
 * are never taken. (Letting a victim take its queue below the quota made
 * priority preemption and quota reclaim undo each other: in shared-512
 * urgent-finetune evicted a research job, which reclaimed its quota by
 * evicting urgent-finetune, four times over.) */
typedef struct pick {
    sched *q;
    const sched_job *head;
    int per;
    int *loc;                      /* node -> index in the pool's node list, -1 other pools */
    int *node;                     /* the pool's UP nodes */
    int nn;
    int *wf;                       /* what-if free GPUs per pool node */
    int *cand;                     /* running indices of allowed candidates */
    int nc;
    int *c_off, *c_nodes, *c_each; /* candidate k's nodes: c_nodes[c_off[k]..c_off[k+1]) */
    int *n_off, *n_cand;           /* node i's candidates: n_cand[n_off[i]..n_off[i+1]) */
    unsigned char *chosen;         /* per candidate */
    int *taken;                    /* per queue: GPUs of victims chosen */
    int n_chosen;
    int *order, *cost, *prio, *saved;   /* scratch for pick_nodes */
} pick;

static int may_take(const pick *p, int k) {
    const sched_job *r = &p->q->running[p->cand[k]];
    const queue *rq = &p->q->queues[r->queue];
    return rq->quota == 0 || rq->used - p->taken[r->queue] - r->gpus >= rq->quota;
}

static void choose(pick *p, int k) {
    const sched_job *r = &p->q->running[p->cand[k]];
    p->chosen[k] = 1;
    p->n_chosen++;
    p->taken[r->queue] += r->gpus;
    for (int x = p->c_off[k]; x < p->c_off[k + 1]; x++) {
        int i = p->loc[p->c_nodes[x]];
        if (i >= 0) p->wf[i] += p->c_each[x];
    }
}

/* Nodes by (highest priority among the candidates on it, GPUs to free),
 * then index: low-priority work goes first. */
static const int *cost_ctx, *prio_ctx;
static int cmp_cost(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    if (prio_ctx[x] != prio_ctx[y]) return prio_ctx[x] < prio_ctx[y] ? -1 : 1;
    if (cost_ctx[x] != cost_ctx[y]) return cost_ctx[x] < cost_ctx[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* Candidates by (priority, GPUs, running index). */
static int cmp_victim(const void *a, const void *b) {
    const sched *q = sort_ctx;
    int x = *(const int *)a, y = *(const int *)b;
    int px = q->running[x].priority, py = q->running[y].priority;
    if (px != py) return px < py ? -1 : 1;
    return cmp_gpus(a, b);
}

/* Whole nodes for a head of a node or more. Returns 1 when k nodes are idle. */
static int pick_nodes(pick *p, int *order, int *cost, int *prio, int *saved) {
    int k = (p->head->gpus + p->per - 1) / p->per, idle = 0;
    for (int i = 0; i < p->nn; i++) {
        order[i] = i;
        cost[i] = p->per - p->wf[i];            /* GPUs to free on it */
        prio[i] = -(1 << 30);
        for (int x = p->n_off[i]; x < p->n_off[i + 1]; x++) {
            int pr = p->q->running[p->cand[p->n_cand[x]]].priority;
            if (pr > prio[i]) prio[i] = pr;
        }
        idle += p->wf[i] == p->per;
    }
    cost_ctx = cost;
    prio_ctx = prio;
    qsort(order, (size_t)p->nn, sizeof *order, cmp_cost);
    for (int o = 0; o < p->nn && idle < k; o++) {
        int i = order[o];
        if (p->wf[i] == p->per) continue;       /* idle already (counted) */
        /* Every used GPU on it must belong to a candidate we may take. */
        int room = p->wf[i], ok = 1;
        for (int x = p->n_off[i]; x < p->n_off[i + 1]; x++) {
            int c = p->n_cand[x];
            if (p->chosen[c]) continue;
            for (int y = p->c_off[c]; y < p->c_off[c + 1]; y++)
                if (p->c_nodes[y] == p->node[i]) room += p->c_each[y];
        }
        if (room < p->per) continue;
        /* The queue guard is cumulative: try the node's victims on a copy
         * of the per-queue counts, and skip the node when one is refused. */
        memcpy(saved, p->taken, (size_t)p->q->n_queues * sizeof *saved);
        for (int x = p->n_off[i]; x < p->n_off[i + 1] && ok; x++) {
            int c = p->n_cand[x];
            if (p->chosen[c]) continue;
            if (!may_take(p, c)) ok = 0;
            p->taken[p->q->running[p->cand[c]].queue] += p->q->running[p->cand[c]].gpus;
        }
        memcpy(p->taken, saved, (size_t)p->q->n_queues * sizeof *saved);
        if (!ok) {
            ok = 1;
            continue;
        }
        for (int x = p->n_off[i]; x < p->n_off[i + 1]; x++)
            if (!p->chosen[p->n_cand[x]]) choose(p, p->n_cand[x]);
        idle = 0;
        for (int j = 0; j < p->nn; j++) idle += p->wf[j] == p->per;
    }
    return idle >= k;
}

/* One node for a head smaller than a node: the node where the fewest
 * candidate GPUs make room. Returns 1 when found (victims chosen). */
static int pick_one(pick *p) {
    int best = -1, best_cost = 1 << 30, best_prio = 1 << 30;
    int *tmp = malloc((size_t)(p->nc + 1) * sizeof *tmp);
    if (!tmp) return 0;
    for (int i = 0; i < p->nn; i++) {
        int n = 0;
        for (int x = p->n_off[i]; x < p->n_off[i + 1]; x++) tmp[n++] = p->n_cand[x];
        /* lowest priority, fewest GPUs first (the candidates' order) */
        int room = p->wf[i], cost = 0, prio = -(1 << 30);
        for (int t = 0; t < n && room < p->head->gpus; t++) {
            int c = tmp[t];
            for (int y = p->c_off[c]; y < p->c_off[c + 1]; y++)
                if (p->c_nodes[y] == p->node[i]) room += p->c_each[y];
            cost += p->q->running[p->cand[c]].gpus;
            if (p->q->running[p->cand[c]].priority > prio) prio = p->q->running[p->cand[c]].priority;
        }
        if (room >= p->head->gpus && cost > 0 &&
            (prio < best_prio || (prio == best_prio && cost < best_cost))) {
            best = i;
            best_cost = cost;
            best_prio = prio;
        }
    }
    int ok = 0;
    if (best >= 0) {
        int room = p->wf[best];
        ok = 1;
        for (int x = p->n_off[best]; x < p->n_off[best + 1] && room < p->head->gpus; x++) {
            int c = p->n_cand[x];
            if (!may_take(p, c)) {
                ok = 0;
                break;
            }
            for (int y = p->c_off[c]; y < p->c_off[c + 1]; y++)
                if (p->c_nodes[y] == p->node[best]) room += p->c_each[y];
            choose(p, c);
        }
        ok = ok && room >= p->head->gpus;
    }
    free(tmp);
    return ok;
}

static int victim_of(const hold *h, int id) {
    for (int i = 0; h && i < h->n_victims; i++)
        if (h->victims[i] == id) return 1;
    return 0;
}

/* The what-if arrays of a preemption pass for the head's pool, and the
 * scratch of pick_nodes. 0, or -1 when out of memory (pick_free frees
 * what was allocated). */
static int pick_alloc(pick *p, int n_nodes) {
    const sched *q = p->q;
    p->loc = malloc((size_t)(n_nodes + 1) * sizeof *p->loc);
    p->node = malloc((size_t)(n_nodes + 1) * sizeof *p->node);
    p->wf = malloc((size_t)(n_nodes + 1) * sizeof *p->wf);
    p->cand = malloc((size_t)(q->n_running + 1) * sizeof *p->cand);
    p->c_off = malloc((size_t)(q->n_running + 2) * sizeof *p->c_off);
    p->chosen = calloc((size_t)q->n_running + 1, 1);
    p->taken = calloc((size_t)q->n_queues, sizeof *p->taken);
    p->n_off = calloc((size_t)n_nodes + 2, sizeof *p->n_off);
    p->saved = calloc((size_t)q->n_queues, sizeof *p->saved);
    p->order = malloc((size_t)(n_nodes + 1) * sizeof *p->order);
    p->cost = malloc((size_t)(n_nodes + 1) * sizeof *p->cost);
    p->prio = malloc((size_t)(n_nodes + 1) * sizeof *p->prio);
    int ok = p->loc && p->node && p->wf && p->cand && p->c_off && p->chosen && p->taken && p->n_off;
    return ok && p->order && p->cost && p->prio && p->saved ? 0 : -1;
}

static void pick_free(pick *p) {
    void *v[] = { p->loc,  p->node,   p->wf,    p->cand,  p->c_off, p->c_nodes, p->c_each, p->n_off,
                  p->n_cand, p->chosen, p->taken, p->order, p->cost, p->prio,    p->saved };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) free(v[i]);
}

/* The pool's UP nodes and their free GPUs now. */
static void pick_pool_nodes(pick *p, int n_nodes) {
    const sched *q = p->q;
    for (int n = 0; n < n_nodes; n++) {
        p->loc[n] = -1;
        if (cluster_node_pool(q->c, n) != p->head->pool || cluster_node_state(q->c, n) != NODE_UP) continue;
        p->loc[n] = p->nn;
        p->node[p->nn] = n;
        p->wf[p->nn++] = cluster_node_free_gpus(q->c, n);
    }
}

/* The running jobs the head may evict (not one it evicted already while
 * it waits), lowest priority first (a reclaim takes from the least
 * important borrower), then fewest GPUs, then lowest index. */
static void pick_candidates(pick *p, const hold *mine, int reclaim) {
    sched *q = p->q;
    const sched_job *head = p->head;
    for (int i = 0; i < q->n_running; i++) {
        const sched_job *r = &q->running[i];
        if (r->pool != head->pool || victim_of(mine, r->id)) continue;
        const queue *rq = &q->queues[r->queue];
        /* A queue's guaranteed GPUs are never taken: only jobs of queues
         * without a quota, or above theirs, are evicted (otherwise priority
         * preemption and quota reclaim would evict each other forever). */
        int unguarded = rq->quota == 0 || rq->used > rq->quota;
        int lower = q->preemption && r->priority < head->priority && unguarded;
        int borrowing = reclaim && r->queue != head->queue && rq->quota > 0 && rq->used > rq->quota;
        if (lower || borrowing) p->cand[p->nc++] = i;
    }
    sort_ctx = q;
    qsort(p->cand, (size_t)p->nc, sizeof *p->cand, cmp_victim);
}

/* Where each candidate runs, both ways (CSR): candidate k's nodes and
 * GPUs on each, and node i's candidates in candidate order (fewest GPUs
 * first). 0, or -1 when out of memory. */
static int pick_map(pick *p) {
    const sched *q = p->q;
    int total = 0;
    for (int k = 0; k < p->nc; k++) total += q->running[p->cand[k]].gpus + 1;   /* at most one node per GPU */
    p->c_nodes = malloc((size_t)(total + 1) * sizeof *p->c_nodes);
    p->c_each = malloc((size_t)(total + 1) * sizeof *p->c_each);
    if (!p->c_nodes || !p->c_each) return -1;
    p->c_off[0] = 0;
    for (int k = 0; k < p->nc; k++) {
        int each = 0, cap = q->running[p->cand[k]].gpus + 1;
        int m = q->ops.nodes(q->ops.ctx, q->running[p->cand[k]].id, p->c_nodes + p->c_off[k], cap, &each);
        if (m < 0) m = 0;
        for (int x = 0; x < m; x++) {
            p->c_each[p->c_off[k] + x] = each;
            int i = p->loc[p->c_nodes[p->c_off[k] + x]];
            if (i >= 0) p->n_off[i + 1]++;
        }
        p->c_off[k + 1] = p->c_off[k] + m;
    }
    for (int i = 0; i < p->nn; i++) p->n_off[i + 1] += p->n_off[i];
    p->n_cand = malloc((size_t)(p->n_off[p->nn] + 1) * sizeof *p->n_cand);
    if (!p->n_cand) return -1;
    int *fill = p->order;                    /* scratch: next slot per node */
    for (int i = 0; i < p->nn; i++) fill[i] = p->n_off[i];
    for (int k = 0; k < p->nc; k++)
        for (int x = p->c_off[k]; x < p->c_off[k + 1]; x++) {
            int i = p->loc[p->c_nodes[x]];
            if (i >= 0) p->n_cand[fill[i]++] = k;
        }
    return 0;
}

/* Hold the freed GPUs for the head (hold hi, -1: a new one), then evict
 * the chosen by id (indices shift as jobs leave). 0, or -1 when out of
 * memory (nothing evicted). */
static int evict_chosen(sched *q, const sched_job *head, const pick *p, int hi) {
    if (hi < 0) {
        if (GROW(q->holds, q->cap_holds, (size_t)q->n_holds + 1)) return -1;
        q->holds[q->n_holds] = (hold){ head->id, head->pool, head->gpus, NULL, 0, 0 };
        hi = q->n_holds++;
    }
    int *ids = malloc((size_t)(p->n_chosen + 1) * sizeof *ids);
    if (!ids) return -1;
    int n_ids = 0;
    for (int k = 0; k < p->nc; k++)
        if (p->chosen[k]) ids[n_ids++] = q->running[p->cand[k]].id;
    for (int i = 0; i < n_ids; i++) {
        hold *h = &q->holds[hi];
        if (GROW(h->victims, h->cap_victims, (size_t)h->n_victims + 1) == 0) h->victims[h->n_victims++] = ids[i];
        if (GROW(q->held, q->cap_held, (size_t)q->n_held + 1) == 0) q->held[q->n_held++] = ids[i];
        q->ops.preempt(q->ops.ctx, ids[i], head->id);
    }
    free(ids);
    return 0;
}

/* Evict running jobs of the head's pool to let it start: lower priority
 * (when preemption is on) or borrowing above their queue's quota (when the
 * head's queue is below its own). Returns 1 when the head can start after;
 * 0 when nothing was evicted or the head still cannot start (it then holds
 * what its victims freed). */
static int try_preempt(sched *q, const sched_job *head) {
    const queue *hq = &q->queues[head->queue];
    int reclaim = hq->quota > 0 && hq->used + head->gpus <= hq->quota;
    if ((!q->preemption && !reclaim) || !q->ops.nodes) return 0;
    int hi = hold_index(q, head->id);
    const hold *mine = hi >= 0 ? &q->holds[hi] : NULL;
    pick p = { .q = q, .head = head, .per = cluster_pool_spec(q->c, head->pool)->gpus };
    int n_nodes = cluster_node_count(q->c), ok = 0;
    if (pick_alloc(&p, n_nodes) < 0) goto out;
    pick_pool_nodes(&p, n_nodes);
    pick_candidates(&p, mine, reclaim);
    if (p.nc == 0 || pick_map(&p) < 0) goto out;
    int fits = head->gpus >= p.per ? pick_nodes(&p, p.order, p.cost, p.prio, p.saved) : pick_one(&p);
    if (!fits || p.n_chosen == 0) goto out;
    /* The head must fit beside the earlier holds once the victims leave. */
    if (p.per <= SMALL_MAX) {
        int cnt[SMALL_MAX + 1] = { 0 };
        for (int i = 0; i < p.nn; i++)
            if (p.wf[i] > 0) cnt[p.wf[i]]++;
        if (!fits_after_holds(q, head, cnt, hi >= 0 ? hi : q->n_holds)) goto out;
    }
    if (evict_chosen(q, head, &p, hi) < 0) goto out;
    ok = can_start(q, head);
out:
    pick_free(&p);
    return ok;
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
        if (GROW(q->order, q->cap_order, (size_t)q->n_queued)) return;
        /* A job holding GPUs its victims freed starts first, as soon as it fits. */
        int held_start = 0;
        for (int i = 0; i < q->n_holds && !held_start; i++) {
            int k = queued_index(q, q->holds[i].id);
            if (k >= 0 && can_start(q, &q->queued[k])) {
                start_queued(q, k);
                held_start = 1;
            }
        }
        if (held_start) continue;
        /* The head and up to `depth` jobs behind it, in the policy's order;
         * none when only just-evicted jobs are left. */
        int n_order = build_order(q, q->depth + 1);
        if (n_order == 0) return;
        const sched_job *head = &q->queued[q->order[0]];
        /* Above its quota a job still starts on idle GPUs: it borrows them,
         * and try_preempt() lets their owner reclaim them. */
        if (can_start(q, head)) {
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
            if (!can_start(q, j)) continue;
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
