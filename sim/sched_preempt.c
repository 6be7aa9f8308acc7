/*
 * sched_preempt: which running jobs to evict so that a blocked head job
 * starts, chosen node by node on a what-if copy of its pool, and the hold
 * that keeps the freed GPUs for it.
 */
#include "sim/sched_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

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
 * Only the nodes the candidates run on can change, so only those are
 * copied (ties between nodes break by node number); the pool's other
 * nodes enter as the cluster's counts of nodes by free GPUs: an attempt
 * costs O(candidates' nodes), not O(nodes of the cluster).
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
    int *loc;                      /* node -> index in node[] (q->node_loc), -1 none, -2 not UP in the pool */
    int *node;                     /* the candidates' UP nodes of the pool */
    int nn;
    int *seen, n_seen;             /* nodes whose loc[] is set (reset to -1 after) */
    int *wf;                       /* what-if free GPUs per node[] */
    int *wf0;                      /* their free GPUs now */
    int idle;                      /* idle UP nodes of the pool (what-if) */
    int *cand;                     /* running indices of allowed candidates */
    int nc;
    int *c_off, *c_nodes, *c_each; /* candidate k's nodes: c_nodes[c_off[k]..c_off[k+1]) */
    int *n_off, *n_cand, *n_each;  /* node i's candidates: n_cand[n_off[i]..n_off[i+1]), and their GPUs there */
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
        if (i < 0) continue;
        int was_idle = p->wf[i] == p->per;
        p->wf[i] += p->c_each[x];
        p->idle += (p->wf[i] == p->per) - was_idle;
    }
}

/* Nodes by (highest priority among the candidates on it, GPUs to free),
 * then node number: low-priority work goes first. A min-heap in that
 * order: the pass takes nodes until the head fits, usually a few of the
 * thousands a busy pool offers, so building the heap (O(n)) and popping
 * what is taken replaces sorting them all. */
static int node_before(const pick *p, int x, int y) {
    if (p->prio[x] != p->prio[y]) return p->prio[x] < p->prio[y];
    if (p->cost[x] != p->cost[y]) return p->cost[x] < p->cost[y];
    return p->node[x] < p->node[y];
}

static void heap_down(const pick *p, int *h, int n, int i) {
    for (;;) {
        int m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && node_before(p, h[l], h[m])) m = l;
        if (r < n && node_before(p, h[r], h[m])) m = r;
        if (m == i) return;
        int t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The first node of the heap h[0..*n), taken out. */
static int heap_pop(const pick *p, int *h, int *n) {
    int top = h[0];
    h[0] = h[--*n];
    heap_down(p, h, *n, 0);
    return top;
}

/* Candidates by (priority, GPUs, running index). */
static const sched *victim_ctx;
static int cmp_victim(const void *a, const void *b) {
    const sched *q = victim_ctx;
    int x = *(const int *)a, y = *(const int *)b;
    const sched_job *rx = &q->running[x], *ry = &q->running[y];
    if (rx->priority != ry->priority) return rx->priority < ry->priority ? -1 : 1;
    if (rx->gpus != ry->gpus) return rx->gpus < ry->gpus ? -1 : 1;
    return (x > y) - (x < y);
}

/* Whole nodes for a head of a node or more. Returns 1 when k nodes are idle. */
static int pick_nodes(pick *p, int *order, int *cost, int *prio, int *saved) {
    int k = (p->head->gpus + p->per - 1) / p->per;
    for (int i = 0; i < p->nn; i++) {
        order[i] = i;
        cost[i] = p->per - p->wf[i];            /* GPUs to free on it */
        prio[i] = -(1 << 30);
        for (int x = p->n_off[i]; x < p->n_off[i + 1]; x++) {
            int pr = p->q->running[p->cand[p->n_cand[x]]].priority;
            if (pr > prio[i]) prio[i] = pr;
        }
    }
    int left = p->nn;
    for (int i = left / 2 - 1; i >= 0; i--) heap_down(p, order, left, i);
    while (left > 0 && p->idle < k) {
        int i = heap_pop(p, order, &left);
        if (p->wf[i] == p->per) continue;       /* idle already (counted) */
        /* Every used GPU on it must belong to a candidate we may take. */
        int room = p->wf[i], ok = 1;
        for (int x = p->n_off[i]; x < p->n_off[i + 1]; x++) {
            if (!p->chosen[p->n_cand[x]]) room += p->n_each[x];
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
    }
    return p->idle >= k;
}

/* One node for a head smaller than a node: the node where the fewest
 * candidate GPUs make room. Returns 1 when found (victims chosen). */
static int pick_one(pick *p) {
    int best = -1, best_cost = 1 << 30, best_prio = 1 << 30;
    for (int i = 0; i < p->nn; i++) {
        /* lowest priority, fewest GPUs first (the candidates' order) */
        int room = p->wf[i], cost = 0, prio = -(1 << 30);
        for (int x = p->n_off[i]; x < p->n_off[i + 1] && room < p->head->gpus; x++) {
            int c = p->n_cand[x];
            room += p->n_each[x];
            cost += p->q->running[p->cand[c]].gpus;
            if (p->q->running[p->cand[c]].priority > prio) prio = p->q->running[p->cand[c]].priority;
        }
        if (room >= p->head->gpus && cost > 0 &&
            (prio < best_prio || (prio == best_prio && cost < best_cost) ||
             (prio == best_prio && cost == best_cost && p->node[i] < p->node[best]))) {
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
            room += p->n_each[x];
            choose(p, c);
        }
        ok = ok && room >= p->head->gpus;
    }
    return ok;
}

static int victim_of(const hold *h, int id) {
    for (int i = 0; h && i < h->n_victims; i++)
        if (h->victims[i] == id) return 1;
    return 0;
}

/* The per-candidate arrays of a preemption attempt. 0, or -1 when out of
 * memory (pick_free frees what was allocated). */
static int pick_alloc(pick *p) {
    const sched *q = p->q;
    p->cand = malloc((size_t)(q->n_running + 1) * sizeof *p->cand);
    p->c_off = malloc((size_t)(q->n_running + 2) * sizeof *p->c_off);
    p->chosen = calloc((size_t)q->n_running + 1, 1);
    p->taken = calloc((size_t)q->n_queues, sizeof *p->taken);
    p->saved = calloc((size_t)q->n_queues, sizeof *p->saved);
    return p->cand && p->c_off && p->chosen && p->taken && p->saved ? 0 : -1;
}

/* The per-node arrays, once the candidates' nodes are known. 0, or -1. */
static int pick_alloc_nodes(pick *p) {
    size_t n = (size_t)p->nn + 1;
    p->wf = malloc(n * sizeof *p->wf);
    p->wf0 = malloc(n * sizeof *p->wf0);
    p->n_off = calloc(n + 1, sizeof *p->n_off);
    p->order = malloc(n * sizeof *p->order);
    p->cost = malloc(n * sizeof *p->cost);
    p->prio = malloc(n * sizeof *p->prio);
    return p->wf && p->wf0 && p->n_off && p->order && p->cost && p->prio ? 0 : -1;
}

static void pick_free(pick *p) {
    for (int i = 0; i < p->n_seen; i++) p->loc[p->seen[i]] = -1;
    void *v[] = { p->node,  p->seen,   p->wf,    p->wf0,   p->cand,  p->c_off, p->c_nodes, p->c_each,
                  p->n_off, p->n_cand, p->n_each, p->chosen, p->taken, p->order, p->cost, p->prio,    p->saved };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) free(v[i]);
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
    victim_ctx = q;
    qsort(p->cand, (size_t)p->nc, sizeof *p->cand, cmp_victim);
}

/* A node a candidate runs on: the first time it is seen, kept when it is
 * an UP node of the head's pool. */
static void pick_see(pick *p, int n) {
    if (p->loc[n] != -1) return;
    p->loc[n] = -2;
    p->seen[p->n_seen++] = n;
    if (cluster_node_pool(p->q->c, n) == p->head->pool && cluster_node_state(p->q->c, n) == NODE_UP &&
        sched_may_use(p->q, p->head->queue, n))
        p->node[p->nn++] = n;
}

/* Where each candidate runs (ops.nodes): candidate k's nodes and the GPUs
 * on each; then their distinct UP nodes of the pool (in the order seen;
 * ties between nodes break by node number, as when the whole pool was
 * walked in order), with their free GPUs and the pool's idle count. 0, or -1 when out of memory. */
static int pick_where(pick *p) {
    const sched *q = p->q;
    int total = 0;
    for (int k = 0; k < p->nc; k++) total += q->running[p->cand[k]].gpus + 1;   /* at most one node per GPU */
    p->c_nodes = malloc((size_t)(total + 1) * sizeof *p->c_nodes);
    p->c_each = malloc((size_t)(total + 1) * sizeof *p->c_each);
    p->seen = malloc((size_t)(total + 1) * sizeof *p->seen);
    p->node = malloc((size_t)(total + 1) * sizeof *p->node);
    if (!p->c_nodes || !p->c_each || !p->seen || !p->node) return -1;
    p->c_off[0] = 0;
    for (int k = 0; k < p->nc; k++) {
        int each = 0, cap = q->running[p->cand[k]].gpus + 1;
        int m = q->ops.nodes(q->ops.ctx, q->running[p->cand[k]].id, p->c_nodes + p->c_off[k], cap, &each);
        if (m < 0) m = 0;
        for (int x = 0; x < m; x++) {
            p->c_each[p->c_off[k] + x] = each;
            pick_see(p, p->c_nodes[p->c_off[k] + x]);
        }
        p->c_off[k + 1] = p->c_off[k] + m;
    }
    if (pick_alloc_nodes(p) < 0) return -1;
    for (int i = 0; i < p->nn; i++) {
        p->loc[p->node[i]] = i;
        p->wf[i] = p->wf0[i] = cluster_node_free_gpus(q->c, p->node[i]);
    }
    p->idle = cluster_nodes_with_free(q->c, p->head->pool, p->per);
    return 0;
}

/* Node i's candidates (CSR, in candidate order: fewest GPUs first). 0, or -1. */
static int pick_map(pick *p) {
    for (int k = 0; k < p->nc; k++)
        for (int x = p->c_off[k]; x < p->c_off[k + 1]; x++) {
            int i = p->loc[p->c_nodes[x]];
            if (i >= 0) p->n_off[i + 1]++;
        }
    for (int i = 0; i < p->nn; i++) p->n_off[i + 1] += p->n_off[i];
    p->n_cand = malloc((size_t)(p->n_off[p->nn] + 1) * sizeof *p->n_cand);
    p->n_each = malloc((size_t)(p->n_off[p->nn] + 1) * sizeof *p->n_each);
    if (!p->n_cand || !p->n_each) return -1;
    int *fill = p->order;                    /* scratch: next slot per node */
    for (int i = 0; i < p->nn; i++) fill[i] = p->n_off[i];
    for (int k = 0; k < p->nc; k++)
        for (int x = p->c_off[k]; x < p->c_off[k + 1]; x++) {
            int i = p->loc[p->c_nodes[x]];
            if (i < 0) continue;
            p->n_each[fill[i]] = p->c_each[x];
            p->n_cand[fill[i]++] = k;
        }
    return 0;
}

/* cnt[f]: UP nodes of the pool with f GPUs free once the chosen leave:
 * the cluster's counts, with the candidates' nodes moved to their what-if. */
static void pick_counts(const pick *p, int *cnt) {
    for (int f = 1; f <= p->per; f++) cnt[f] = cluster_nodes_with_free(p->q->c, p->head->pool, f);
    for (int i = 0; i < p->nn; i++) {
        if (p->wf0[i] > 0) cnt[p->wf0[i]]--;
        if (p->wf[i] > 0) cnt[p->wf[i]]++;
    }
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

/* Could any running job of the head's pool be a candidate (the rules of
 * pick_candidates, before the head's own victims are left out)? When
 * not, the attempt ends before it scans the running set. */
static int any_candidate(const sched *q, const sched_job *head, int reclaim) {
    for (int qi = 0; qi < q->n_queues; qi++) {
        const queue *rq = &q->queues[qi];
        const cset *s = &q->rprio[head->pool * q->n_queues + qi];
        int unguarded = rq->quota == 0 || rq->used > rq->quota;
        int borrowing = reclaim && qi != head->queue && rq->quota > 0 && rq->used > rq->quota;
        for (int i = 0; i < s->n; i++)
            if (s->v[i].count > 0 && (borrowing || (q->preemption && unguarded && s->v[i].key < head->priority)))
                return 1;
    }
    return 0;
}

/* Evict running jobs of the head's pool to let it start: lower priority
 * (when preemption is on) or borrowing above their queue's quota (when the
 * head's queue is below its own). Returns 1 when the head can start after;
 * 0 when nothing was evicted or the head still cannot start (it then holds
 * what its victims freed). */
int sched_try_preempt(sched *q, const sched_job *head) {
    const queue *hq = &q->queues[head->queue];
    int reclaim = hq->quota > 0 && hq->used + head->gpus <= hq->quota;
    if ((!q->preemption && !reclaim) || !q->ops.nodes || !any_candidate(q, head, reclaim)) return 0;
    int hi = sched_hold_index(q, head->id);
    const hold *mine = hi >= 0 ? &q->holds[hi] : NULL;
    pick p = { .q = q, .head = head, .per = cluster_pool_spec(q->c, head->pool)->gpus, .loc = q->node_loc };
    int ok = 0;
    if (!p.loc || pick_alloc(&p) < 0) goto out;
    pick_candidates(&p, mine, reclaim);
    if (p.nc == 0 || pick_where(&p) < 0 || pick_map(&p) < 0) goto out;
    int fits = head->gpus >= p.per ? pick_nodes(&p, p.order, p.cost, p.prio, p.saved) : pick_one(&p);
    if (!fits || p.n_chosen == 0) goto out;
    /* The head must fit beside the earlier holds once the victims leave. */
    if (p.per <= SMALL_MAX) {
        int cnt[SMALL_MAX + 1] = { 0 };
        pick_counts(&p, cnt);
        if (!sched_fits_after_holds(q, head, cnt, hi >= 0 ? hi : q->n_holds)) goto out;
    }
    if (evict_chosen(q, head, &p, hi) < 0) goto out;
    ok = sched_can_start(q, head);
out:
    pick_free(&p);
    return ok;
}
