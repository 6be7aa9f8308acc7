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

/* May r go, given the GPUs of its queue's victims chosen so far? */
static int may_take_job(const sched *q, const int *taken, const sched_job *r) {
    const queue *rq = &q->queues[r->queue];
    return rq->quota == 0 || rq->used - taken[r->queue] - r->gpus >= rq->quota;
}

static int may_take(const pick *p, int k) { return may_take_job(p->q, p->taken, &p->q->running[p->cand[k]]); }

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

/* May the head evict running job r? A queue's guaranteed GPUs are never
 * taken: only jobs of queues without a quota, or above theirs, are
 * evicted (otherwise priority preemption and quota reclaim would evict
 * each other forever); not a job it evicted already while it waits. */
static int is_candidate(const sched *q, const sched_job *head, const sched_job *r, const hold *mine, int reclaim) {
    if (r->pool != head->pool) return 0;
    const queue *rq = &q->queues[r->queue];
    int unguarded = rq->quota == 0 || rq->used > rq->quota;
    int lower = q->preemption && r->priority < head->priority && unguarded;
    int borrowing = reclaim && r->queue != head->queue && rq->quota > 0 && rq->used > rq->quota;
    return (lower || borrowing) && !victim_of(mine, r->id);
}

/* The running jobs the head may evict (not one it evicted already while
 * it waits), lowest priority first (a reclaim takes from the least
 * important borrower), then fewest GPUs, then lowest index. */
static void pick_candidates(pick *p, const hold *mine, int reclaim) {
    sched *q = p->q;
    const sched_job *head = p->head;
    for (int i = 0; i < q->n_running; i++)
        if (is_candidate(q, head, &q->running[i], mine, reclaim)) p->cand[p->nc++] = i;
    victim_ctx = q;
    qsort(p->cand, (size_t)p->nc, sizeof *p->cand, cmp_victim);
}

/* Could the head's victims free a node for it: an UP node of its pool
 * that its queue may use? */
static int in_reach(const sched *q, const sched_job *head, int n) {
    return cluster_node_pool(q->c, n) == head->pool && cluster_node_state(q->c, n) == NODE_UP &&
           sched_may_use(q, head->queue, n);
}

/* A node a candidate runs on: the first time it is seen, kept when it is
 * in the head's reach. */
static void pick_see(pick *p, int n) {
    if (p->loc[n] != -1) return;
    p->loc[n] = -2;
    p->seen[p->n_seen++] = n;
    if (in_reach(p->q, p->head, n)) p->node[p->nn++] = n;
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

/* A preemption's choice: the victims' ids in candidate order (priority,
 * GPUs, running index), whether the head fits once they leave (fits: 1
 * with at least one victim), and the pool's what-if counts of UP nodes by
 * free GPUs (for the holds' check). */
typedef struct choice {
    int fits;
    int *ids;
    int n;
    int cnt[SMALL_MAX + 1];
} choice;

/* The choice made on the gathered nodes of every candidate (pick_nodes
 * or pick_one). 0, or -1 when out of memory. */
static int gather_choose(sched *q, const sched_job *head, const hold *mine, int reclaim, choice *ch) {
    pick p = { .q = q, .head = head, .per = cluster_pool_spec(q->c, head->pool)->gpus, .loc = q->node_loc };
    int rc = -1;
    if (!p.loc || pick_alloc(&p) < 0) goto out;
    pick_candidates(&p, mine, reclaim);
    if (p.nc > 0 && (pick_where(&p) < 0 || pick_map(&p) < 0)) goto out;
    rc = 0;
    int fits = p.nc > 0 && (head->gpus >= p.per ? pick_nodes(&p, p.order, p.cost, p.prio, p.saved) : pick_one(&p));
    if (!fits || p.n_chosen == 0) goto out;
    if (!(ch->ids = malloc((size_t)(p.n_chosen + 1) * sizeof *ch->ids))) {
        rc = -1;
        goto out;
    }
    for (int k = 0; k < p.nc; k++)
        if (p.chosen[k]) ch->ids[ch->n++] = q->running[p.cand[k]].id;
    if (p.per <= SMALL_MAX) pick_counts(&p, ch->cnt);
    ch->fits = 1;
out:
    pick_free(&p);
    return rc;
}

/* ---- the walk of the index (sched_where.c) ---------------------------------
 * For a head of a node or more, pick_nodes's choice without gathering:
 * the only nodes pick_nodes takes are those whose every used GPU belongs
 * to a candidate, and on such a node the highest candidate priority is
 * the highest priority of any job on it and the GPUs to free are the GPUs
 * its jobs use: its bucket's key. So the pool's buckets, by (priority,
 * GPUs used), and each group of equal key merged by node number, give the
 * nodes in pick_nodes's heap order; buckets whose queues cannot all be
 * candidates are passed over, and each node is tested exactly (every job
 * on it a candidate, the queue guard) before it is taken. The what-if
 * free GPUs of the nodes the chosen run on are kept in q->node_loc. */
typedef struct walk {
    sched *q;
    const sched_job *head;
    const hold *mine;
    int reclaim, per, idle;
    int *taken, *saved;            /* per queue: GPUs of victims chosen */
    int *chosen, n_chosen;         /* running indices (q->mark set) */
} walk;

/* Could bucket b hold a node of candidates only (a quick test on its key;
 * the exact one is per node)? */
static int walk_bucket_may(const walk *w, const wbucket *b) {
    const sched *q = w->q;
    int any_borrowing = (b->qmask >> WHERE_OTHER) & 1;
    for (int qi = 0; qi < q->n_queues && qi < WHERE_OTHER; qi++) {
        if (!((b->qmask >> qi) & 1)) continue;
        const queue *rq = &q->queues[qi];
        int unguarded = rq->quota == 0 || rq->used > rq->quota;
        int borrowing = w->reclaim && qi != w->head->queue && rq->quota > 0 && rq->used > rq->quota;
        if (borrowing) any_borrowing = 1;
        else if (!(q->preemption && unguarded)) return 0;
    }
    /* Without a borrowing queue every job needs a lower priority than the head's. */
    return any_borrowing || b->prio < w->head->priority;
}

/* Running job r is chosen: its GPUs count against its queue, and its
 * nodes in the head's reach get them back (what-if). 0, or -1. */
static int walk_take(walk *w, int r) {
    sched *q = w->q;
    const sched_job *j = &q->running[r];
    q->mark[r] = 1;
    w->chosen[w->n_chosen++] = r;
    w->taken[j->queue] += j->gpus;
    if (GROW(q->wscratch, q->cap_wscratch, (size_t)j->gpus + 1)) return -1;
    int each = 0, m = q->ops.nodes(q->ops.ctx, j->id, q->wscratch, j->gpus + 1, &each);
    for (int x = 0; x < m; x++) {
        int n = q->wscratch[x];
        if (!in_reach(q, w->head, n)) continue;
        if (q->node_loc[n] < 0) {
            if (GROW(q->touched, q->cap_touched, (size_t)q->n_touched + 1)) return -1;
            q->touched[q->n_touched++] = n;
            q->node_loc[n] = cluster_node_free_gpus(q->c, n);
        }
        int was_idle = q->node_loc[n] == w->per;
        q->node_loc[n] += each;
        w->idle += (q->node_loc[n] == w->per) - was_idle;
    }
    return 0;
}

/* The running index of the job of entry e when the head may evict it; -1 when not. */
static int walk_candidate(const walk *w, const struct went *e) {
    int r = sched_run_index(w->q, e->id);
    return r >= 0 && is_candidate(w->q, w->head, &w->q->running[r], w->mine, w->reclaim) ? r : -1;
}

/* Node n as pick_nodes pops it: skipped when idle (what-if), when its
 * free GPUs and its candidates' do not make a whole node (on a node that
 * is not over-listed: when a job on it is not a candidate), or when a
 * queue would go below its quota; else its candidates not chosen yet
 * are. 0, or -1 when out of memory. */
static int walk_visit(walk *w, int n) {
    sched *q = w->q;
    if (!in_reach(q, w->head, n) || (q->node_loc[n] >= 0 ? q->node_loc[n] : cluster_node_free_gpus(q->c, n)) == w->per)
        return 0;
    const wnode *x = &q->where[n];
    int room = cluster_node_free_gpus(q->c, n);
    for (int i = 0; i < x->n; i++) {
        int r = walk_candidate(w, sched_went(x, i));
        if (r < 0 && x->bucket >= 0) return 0;
        if (r >= 0) room += sched_went(x, i)->gpus;
    }
    if (room < w->per) return 0;
    memcpy(w->saved, w->taken, (size_t)q->n_queues * sizeof *w->saved);
    int ok = 1;
    for (int i = 0; i < x->n && ok; i++) {
        int r = walk_candidate(w, sched_went(x, i));
        if (r < 0 || q->mark[r]) continue;
        ok = may_take_job(q, w->taken, &q->running[r]);
        w->taken[q->running[r].queue] += q->running[r].gpus;
    }
    memcpy(w->taken, w->saved, (size_t)q->n_queues * sizeof *w->saved);
    for (int i = 0; i < x->n && ok; i++) {
        int r = walk_candidate(w, sched_went(x, i));
        if (r >= 0 && !q->mark[r] && walk_take(w, r) < 0) return -1;
    }
    return 0;
}

/* An over-listed node as pick_nodes keys it: the highest priority of the
 * candidates on it, the GPUs to free (the cluster's count). */
typedef struct okey { int prio, cost, node; } okey;

static int okey_cmp(const void *a, const void *b) {
    const okey *x = a, *y = b;
    if (x->prio != y->prio) return x->prio < y->prio ? -1 : 1;
    if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* The over-listed nodes of the head's pool that pick_nodes would see (in
 * reach, a candidate on them), keyed and sorted into *out. Returns how
 * many, -1 when out of memory. */
static int walk_odd(const walk *w, okey **out) {
    const sched *q = w->q;
    *out = NULL;
    if (q->n_odd == 0) return 0;
    okey *o = malloc((size_t)q->n_odd * sizeof *o);
    if (!o) return -1;
    int no = 0;
    for (int i = 0; i < q->n_odd; i++) {
        int n = q->odd[i], prio = -(1 << 30), any = 0;
        if (!in_reach(q, w->head, n)) continue;
        for (int k = 0; k < q->where[n].n; k++) {
            int r = walk_candidate(w, sched_went(&q->where[n], k));
            if (r < 0) continue;
            any = 1;
            if (q->running[r].priority > prio) prio = q->running[r].priority;
        }
        if (any) o[no++] = (okey){ prio, w->per - cluster_node_free_gpus(q->c, n), n };
    }
    qsort(o, (size_t)no, sizeof *o, okey_cmp);
    *out = o;
    return no;
}

/* Does over-listed node o come before the nodes of key (prio, used)? */
static int okey_before(const okey *o, int prio, int used) {
    return o->prio < prio || (o->prio == prio && o->cost < used);
}

/* One group of buckets of equal key, bk[g..e), merged by node number with
 * the over-listed nodes of that key (od[*o..]), until k nodes are idle. 0, or -1. */
static int walk_group(walk *w, const int *bk, int *cur, int g, int e, const okey *od, int no, int *o, int k) {
    sched *q = w->q;
    int prio = q->wb[bk[g]].prio, used = q->wb[bk[g]].used;
    for (int t = g; t < e; t++) cur[t] = sched_where_next(q, bk[t], 0);
    while (w->idle < k) {
        int best = -1;
        for (int t = g; t < e; t++)
            if (cur[t] >= 0 && (best < 0 || cur[t] < cur[best])) best = t;
        int n = best >= 0 ? cur[best] : -1;
        if (*o < no && od[*o].prio == prio && od[*o].cost == used && (n < 0 || od[*o].node < n)) {
            n = od[(*o)++].node;
        } else if (best >= 0) {
            cur[best] = sched_where_next(q, bk[best], n + 1);
        } else {
            break;
        }
        if (walk_visit(w, n) < 0) return -1;
    }
    return 0;
}

/* The buckets in (priority, GPUs used) order, each group of equal key
 * merged by node number, and the over-listed nodes in their places, until
 * k nodes are idle (what-if). bk: room for q->n_wb. Returns 1 when they
 * are, 0 when not, -1 when out of memory. */
static int walk_nodes(walk *w, int *bk, int *cur) {
    sched *q = w->q;
    int k = (w->head->gpus + w->per - 1) / w->per, nb = 0, o = 0;
    int all = sched_where_buckets(q, w->head->pool, bk);
    for (int i = 0; i < all; i++)
        if (walk_bucket_may(w, &q->wb[bk[i]])) bk[nb++] = bk[i];
    okey *od;
    int no = walk_odd(w, &od), rc = 0;
    if (no < 0) return -1;
    for (int g = 0; (g < nb || o < no) && w->idle < k && rc == 0;) {
        if (o < no && (g >= nb || okey_before(&od[o], q->wb[bk[g]].prio, q->wb[bk[g]].used))) {
            rc = walk_visit(w, od[o++].node);
            continue;
        }
        int e = g + 1;
        while (e < nb && q->wb[bk[e]].prio == q->wb[bk[g]].prio && q->wb[bk[e]].used == q->wb[bk[g]].used) e++;
        rc = walk_group(w, bk, cur, g, e, od, no, &o, k);
        g = e;
    }
    free(od);
    return rc < 0 ? -1 : w->idle >= k;
}

/* Scratch of a walk: per queue, per running index, per bucket. 0, or -1. */
static int walk_alloc(walk *w, int **bk, int **cur) {
    sched *q = w->q;
    size_t old = q->cap_mark;
    if (GROW(q->mark, q->cap_mark, (size_t)q->n_running + 1)) return -1;
    memset(q->mark + old, 0, q->cap_mark - old);
    w->taken = calloc((size_t)q->n_queues, sizeof *w->taken);
    w->saved = calloc((size_t)q->n_queues, sizeof *w->saved);
    w->chosen = malloc((size_t)(q->n_running + 1) * sizeof *w->chosen);
    *bk = malloc((size_t)(q->n_wb + 1) * sizeof **bk);
    *cur = malloc((size_t)(q->n_wb + 1) * sizeof **cur);
    return w->taken && w->saved && w->chosen && *bk && *cur ? 0 : -1;
}

/* The choice of pick_nodes, made on the index. 0, or -1 when out of memory. */
static int walk_choose(sched *q, const sched_job *head, const hold *mine, int reclaim, choice *ch) {
    walk w = { .q = q, .head = head, .mine = mine, .reclaim = reclaim,
               .per = cluster_pool_spec(q->c, head->pool)->gpus };
    w.idle = cluster_nodes_with_free(q->c, head->pool, w.per);
    int *bk = NULL, *cur = NULL, rc = -1;
    q->n_touched = 0;
    if (walk_alloc(&w, &bk, &cur) < 0) goto out;
    int fits = walk_nodes(&w, bk, &cur[0]);
    if (fits < 0) goto out;
    rc = 0;
    if (!fits || w.n_chosen == 0) goto out;
    if (!(ch->ids = malloc((size_t)w.n_chosen * sizeof *ch->ids))) {
        rc = -1;
        goto out;
    }
    victim_ctx = q;
    qsort(w.chosen, (size_t)w.n_chosen, sizeof *w.chosen, cmp_victim);
    for (int i = 0; i < w.n_chosen; i++) ch->ids[ch->n++] = q->running[w.chosen[i]].id;
    if (w.per <= SMALL_MAX) {
        for (int f = 1; f <= w.per; f++) ch->cnt[f] = cluster_nodes_with_free(q->c, head->pool, f);
        for (int i = 0; i < q->n_touched; i++) {
            int n = q->touched[i], f0 = cluster_node_free_gpus(q->c, n);
            if (f0 > 0) ch->cnt[f0]--;
            if (q->node_loc[n] > 0) ch->cnt[q->node_loc[n]]++;
        }
    }
    ch->fits = 1;
out:
    for (int i = 0; i < q->n_touched; i++) q->node_loc[q->touched[i]] = -1;
    for (int i = 0; w.chosen && i < w.n_chosen; i++) q->mark[w.chosen[i]] = 0;
    q->n_touched = 0;
    void *v[] = { w.taken, w.saved, w.chosen, bk, cur };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) free(v[i]);
    return rc;
}

/* Hold the freed GPUs for the head (hold hi, -1: a new one), then evict
 * the chosen by id (indices shift as jobs leave). 0, or -1 when out of
 * memory (nothing evicted). */
static int evict_chosen(sched *q, const sched_job *head, const int *ids, int n_ids, int hi) {
    if (hi < 0) {
        if (GROW(q->holds, q->cap_holds, (size_t)q->n_holds + 1)) return -1;
        q->holds[q->n_holds] = (hold){ head->id, head->pool, head->gpus, NULL, 0, 0 };
        hi = q->n_holds++;
    }
    for (int i = 0; i < n_ids; i++) {
        hold *h = &q->holds[hi];
        if (GROW(h->victims, h->cap_victims, (size_t)h->n_victims + 1) == 0) h->victims[h->n_victims++] = ids[i];
        if (GROW(q->held, q->cap_held, (size_t)q->n_held + 1) == 0) q->held[q->n_held++] = ids[i];
        q->ops.preempt(q->ops.ctx, ids[i], head->id);
    }
    return 0;
}

#ifdef CT_SCHED_CROSSCHECK
#include <stdio.h>
/* Built with -DCT_SCHED_CROSSCHECK (the sanitized build, so every test
 * that preempts checks it): each walk of the index is checked against the
 * choice made on the gathered nodes, and the index against where the
 * world says the pool's running jobs are; a difference aborts. */
static void crosscheck_index(sched *q, int pool) {
    int total = 0, listed = 0;
    for (int r = 0; r < q->n_running; r++) {
        int id = q->running[r].id, each = 0;
        if (q->running[r].pool != pool || GROW(q->wscratch, q->cap_wscratch, (size_t)q->running[r].gpus + 1)) continue;
        int m = q->ops.nodes(q->ops.ctx, id, q->wscratch, q->running[r].gpus + 1, &each);
        for (int x = 0; x < m; x++) {
            const wnode *w = &q->where[q->wscratch[x]];
            int found = 0;
            for (int i = 0; i < w->n; i++) found |= sched_went(w, i)->id == id && sched_went(w, i)->gpus == each;
            if (!found) {
                fprintf(stderr, "sched_where: job %d on node %d is not in the index\n", id, q->wscratch[x]);
                abort();
            }
        }
        listed += m;
    }
    for (int n = 0; n < q->n_where; n++)
        for (int i = 0; i < q->where[n].n; i++) {
            int r = sched_run_index(q, sched_went(&q->where[n], i)->id);
            total += r >= 0 && q->running[r].pool == pool;
        }
    if (total != listed) {
        fprintf(stderr, "sched_where: %d placements of running jobs in the index, %d where they run\n", total, listed);
        abort();
    }
}

static void crosscheck(sched *q, const sched_job *head, const hold *mine, int reclaim, const choice *got) {
    crosscheck_index(q, head->pool);
    choice want = { 0 };
    if (gather_choose(q, head, mine, reclaim, &want) == 0) {
        int same = want.fits == got->fits && want.n == got->n;
        for (int i = 0; same && i < want.n; i++) same = want.ids[i] == got->ids[i];
        for (int f = 0; same && want.fits && f <= SMALL_MAX; f++) same = want.cnt[f] == got->cnt[f];
        if (!same) {
            fprintf(stderr, "sched_preempt: the index chose %d victims (fits %d), the gathered nodes %d (fits %d) for job %d\n",
                    got->n, got->fits, want.n, want.fits, head->id);
            abort();
        }
    }
    free(want.ids);
}
#endif

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
 * what its victims freed). A head of a node or more walks the index of
 * where jobs run (O(the nodes looked at)); a smaller head gathers the
 * candidates' nodes (O(running + their nodes)). */
int sched_try_preempt(sched *q, const sched_job *head) {
    const queue *hq = &q->queues[head->queue];
    int reclaim = hq->quota > 0 && hq->used + head->gpus <= hq->quota;
    if ((!q->preemption && !reclaim) || !q->ops.nodes || !any_candidate(q, head, reclaim)) return 0;
    int hi = sched_hold_index(q, head->id);
    const hold *mine = hi >= 0 ? &q->holds[hi] : NULL;
    int per = cluster_pool_spec(q->c, head->pool)->gpus;
    choice ch = { 0 };
    int walked = head->gpus >= per && q->where_ok && q->node_loc;
    int rc = walked ? walk_choose(q, head, mine, reclaim, &ch) : gather_choose(q, head, mine, reclaim, &ch);
#ifdef CT_SCHED_CROSSCHECK
    if (walked && rc == 0) crosscheck(q, head, mine, reclaim, &ch);
#endif
    int ok = 0;
    if (rc == 0 && ch.fits && (per > SMALL_MAX || sched_fits_after_holds(q, head, ch.cnt, hi >= 0 ? hi : q->n_holds)) &&
        evict_chosen(q, head, ch.ids, ch.n, hi) == 0)
        ok = sched_can_start(q, head);
    free(ch.ids);
    return ok;
}
