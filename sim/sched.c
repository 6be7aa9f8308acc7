/*
 * sched: queues, quotas, policies, gang starts, EASY backfill, preemption.
 *
 * Representation: queued jobs per class (queue, priority), each class in
 * (submit time, id) order (sched_queue.c); running jobs in sched_run.c's
 * set (by id, and per pool by expected end). A dispatch pass builds the
 * policy's order lazily from the classes, only as far as the head
 * (sort_classes, take_order), starts the head while it fits, tries
 * preemption (priority or quota reclaim) for a blocked head, then, when
 * some queued job could be allocated at all, backfills behind its
 * reservation in one scan of `depth` jobs behind it. A pass costs
 * O(depth + classes + k log k) for the k running jobs that end before the
 * reservation, whatever the backlog; a submit O(log q) plus the moves of
 * the shorter side of its class (none for a new job), a start the same
 * (O(depth) at most in practice). A preemption attempt costs
 * O(queues x priorities) when no running job may be evicted; else, for a
 * head of a node or more, O(the nodes it looks at) on the index of where
 * jobs run (sched_where.c), and for a smaller head O(running + the
 * candidates' nodes).
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
#include "sim/sched_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

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
    q->evicts = q->preemption;
    for (int i = 0; i < q->n_queues; i++) q->evicts |= q->queues[i].quota > 0;
    for (int p = 0; p < cluster_pool_count(c); p++) q->total_gpus += cluster_pool_gpus(c, p);
    q->depth = s->sched_backfill_depth > 0 ? s->sched_backfill_depth : SCHED_DEFAULT_DEPTH;
    q->small = calloc((size_t)cluster_pool_count(c) * SMALL_MAX + 1, sizeof *q->small);
    q->node_loc = malloc(((size_t)cluster_node_count(c) + 1) * sizeof *q->node_loc);
    q->n_pools = cluster_pool_count(c);
    q->psz = calloc((size_t)cluster_pool_count(c) + 1, sizeof *q->psz);
    q->rheap = calloc((size_t)cluster_pool_count(c) + 1, sizeof *q->rheap);
    q->rprio = calloc((size_t)cluster_pool_count(c) * (size_t)q->n_queues + 1, sizeof *q->rprio);
    q->lim = calloc((size_t)cluster_pool_count(c) + 1, sizeof *q->lim);
    if (!q->small || !q->node_loc || !q->psz || !q->rheap || !q->rprio || !q->lim || sched_part_init(q, s) < 0 ||
        sched_where_init(q) < 0) {
        sched_free(q);
        return NULL;
    }
    for (int n = 0; n <= cluster_node_count(c); n++) q->node_loc[n] = -1;
    return q;
}

void sched_free(sched *q) {
    if (!q) return;
    sched_part_free(q);
    sched_where_free(q);
    for (int c = 0; c < q->n_cls; c++) {
        free(q->classes[c].v);
        free(q->classes[c].bmin);
    }
    void *v[] = { q->queues, q->running, q->order, q->classes,
                  q->small,  q->cs,     q->cs_share, q->cs_pos, q->held, q->node_loc, q->lim };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) free(v[i]);
    for (int i = 0; i < q->n_holds; i++) free(q->holds[i].victims);
    for (int p = 0; q->psz && p < q->n_pools; p++) free(q->psz[p].sizes.v);
    for (int k = 0; q->rprio && k < q->n_pools * q->n_queues; k++) free(q->rprio[k].v);
    for (int p = 0; q->rheap && p < q->n_pools; p++) free(q->rheap[p].v);
    void *w[] = { q->psz, q->rprio, q->rheap, q->run_of, q->run_hpos, q->front, q->group };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) free(w[i]);
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

void sched_submit(sched *q, const sched_job *j) { sched_queue_add(q, j); }

int sched_withdraw(sched *q, int job) {
    qref r = sched_queue_find(q, job);
    if (r.c < 0) return 0;
    sched_queue_remove(q, r);
    sched_drop_hold(q, job);
    return 1;
}

void sched_adopt(sched *q, const sched_job *j) {
    if (sched_run_add(q, j) < 0) return;
    q->queues[j->queue].used += j->gpus;
}

void sched_finished(sched *q, int job) {
    int i = sched_run_index(q, job);
    if (i < 0) return;
    q->queues[q->running[i].queue].used -= q->running[i].gpus;
    sched_run_remove(q, i);
}

void sched_update_end(sched *q, int job, double end_s) {
    int i = sched_run_index(q, job);
    if (i >= 0) sched_run_set_end(q, i, end_s);
}

/* Dominant share of a queue: GPUs used over its quota (or over the
 * cluster when it has none). */
static double share(const sched *q, int qi) {
    const queue *u = &q->queues[qi];
    double base = u->quota > 0 ? u->quota : (q->total_gpus > 0 ? q->total_gpus : 1);
    return u->used / base;
}

static int is_held(const sched *q, int id) {
    for (int i = 0; i < q->n_held; i++)
        if (q->held[i] == id) return 1;
    return 0;
}


/* The classes cs[0..nc) of one level (equal share and priority) merged
 * by (submit, id), each from its head: the first jobs that are not held,
 * at most `want`, appended to q->order from n. Returns the new n. O(jobs
 * taken x classes in the level), usually one class. */
static int take_level(sched *q, const int *cs, int nc, int n, int want) {
    if (nc == 1 && !q->n_held) {        /* one class, nothing held: its first jobs as they stand */
        const sclass *x = &q->classes[cs[0]];
        int i = x->head, end = x->n - x->head < want - n ? x->n : x->head + (want - n);
        for (; i < end; i++) q->order[n++] = (qref){ cs[0], i };
        return n;
    }
    int *pos = q->cs_pos;
    for (int k = 0; k < nc; k++) pos[cs[k]] = q->classes[cs[k]].head;
    while (n < want) {
        const sched_job *best = NULL;
        int bc = -1;
        for (int k = 0; k < nc; k++) {
            sclass *x = &q->classes[cs[k]];
            if (pos[cs[k]] >= x->n) continue;
            const sched_job *j = &x->v[pos[cs[k]]];
            if (!best || j->submit_s < best->submit_s || (j->submit_s == best->submit_s && j->id < best->id)) {
                best = j;
                bc = cs[k];
            }
        }
        if (!best) break;
        if (!q->n_held || !is_held(q, best->id)) q->order[n++] = (qref){ bc, pos[bc] };
        pos[bc]++;
    }
    return n;
}

/* The policy's order is: by queue share (fair), then priority (not fifo),
 * then submit order. A class, (queue, priority), shares its queue's share
 * and its priority, so the order is the classes by key, each class's jobs
 * in submit order, classes of equal key merged by submit order: a pass
 * costs O(depth) on a long backlog, not O(queued). sort_classes() orders
 * the classes that have jobs into q->cs[0..q->n_cs), as the shares stand
 * now; take_order() reads the first jobs from them. 0, or -1 when out of
 * memory. */
static int sort_classes(sched *q) {
    int n_c = q->n_cls;
    if (GROW(q->cs, q->cap_cs, (size_t)n_c) || GROW(q->cs_share, q->cap_cs_share, (size_t)n_c) ||
        GROW(q->cs_pos, q->cap_cs_pos, (size_t)n_c))
        return -1;
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
    q->n_cs = nc;
    return 0;
}

/* The first `want` queued jobs that are not held, in the order of the
 * classes sorted last, into q->order; returns how many. */
static int take_order(sched *q, int want) {
    const int *cs = q->cs;
    const double *key_share = q->cs_share;
    int n = 0, nc = q->n_cs;
    for (int l = 0; l < nc && n < want;) {
        int e = l + 1;
        while (e < nc && key_share[cs[e]] == key_share[cs[l]] && q->classes[cs[e]].prio == q->classes[cs[l]].prio) e++;
        n = take_level(q, cs + l, e - l, n, want);
        l = e;
    }
    return n;
}

/* j, out of the queue, starts now. */
static void start_job(sched *q, sched_job j) {
    j.expected_end_s = q->now + j.expected_end_s;       /* queued: runtime; running: end time */
    if (sched_run_add(q, &j) < 0) return;
    q->queues[j.queue].used += j.gpus;
    sched_drop_hold(q, j.id);
    q->ops.start(q->ops.ctx, j.id);
}

static void start_queued(sched *q, qref r) {
    sched_job j = *sched_queue_at(q, r);
    sched_queue_remove(q, r);
    start_job(q, j);
}

/* Could anything start now? Without preemption or quotas a job can start
 * only if its pool has at least its GPUs free: when no queued job passes
 * that test, the pass is skipped. O(pools x distinct job sizes). */
static int anything_can_start(const sched *q) {
    if (q->preemption) return 1;
    for (int i = 0; i < q->n_queues; i++)
        if (q->queues[i].quota > 0) return 1;
    for (int p = 0; p < cluster_pool_count(q->c); p++) {
        const cset *ps = &q->psz[p].sizes;
        for (int i = 0; i < ps->n && ps->v[i].key <= cluster_pool_free_gpus(q->c, p); i++)
            if (ps->v[i].count > 0) return 1;
    }
    return 0;
}

/* Each pool's fit limit into q->lim (no job above it can be allocated
 * now); whether any queued job is within its pool's. O(pools x (GPUs per
 * node + distinct queued sizes)). When none is, the backfill scan cannot
 * start anything and is skipped. */
static int any_fits(sched *q) {
    int any = 0;
    for (int p = 0; p < q->n_pools; p++) {
        q->lim[p] = cluster_fit_limit(q->c, p);
        const cset *s = &q->psz[p].sizes;
        for (int i = 0; i < s->n && s->v[i].key <= q->lim[p] && !any; i++) any = s->v[i].count > 0;
    }
    return any;
}

/* The largest of the pools' fit limits (q->lim, as any_fits left them). */
static int max_lim(const sched *q) {
    int m = 0;
    for (int p = 0; p < q->n_pools; p++)
        if (q->lim[p] > m) m = q->lim[p];
    return m;
}

/* How many of the pass's order from oi on the backfill scan may pass over
 * at once: the rest of a block of one class's slots (QBLOCK) when every
 * job in the block is above maxlim, so above its pool's fit limit (the
 * scan's first test), and the order lists those slots one after the other
 * (nothing held among them). 0: look at oi. */
static int skippable(const sched *q, int oi, int n_order, int maxlim) {
    qref r = q->order[oi];
    const sclass *k = &q->classes[r.c];
    if (k->bmin[r.i >> QBLOCK_SHIFT] <= maxlim) return 0;
    int n = ((r.i | (QBLOCK - 1)) + 1) - r.i;
    if (n > n_order - oi) n = n_order - oi;
    qref e = q->order[oi + n - 1];
    if (e.c != r.c || e.i != r.i + n - 1) return 0;
#ifdef CT_SCHED_CROSSCHECK
    for (int i = r.i; i < r.i + n; i++)
        if (k->v[i].gpus <= q->lim[k->v[i].pool]) abort();
#endif
    return n;
}

static void dispatch_steps(sched *q, double now_s) {
    for (int guard = 0; guard < 1000000 && q->n_queued > 0; guard++) {
        q->n_order = 0;
        if (!anything_can_start(q)) return;
        if (GROW(q->order, q->cap_order, (size_t)q->n_queued)) return;
        /* A job holding GPUs its victims freed starts first, as soon as it fits. */
        int held_start = 0;
        for (int i = 0; i < q->n_holds && !held_start; i++) {
            qref k = sched_queue_find(q, q->holds[i].id);
            if (k.c >= 0 && sched_can_start(q, sched_queue_at(q, k))) {
                start_queued(q, k);
                held_start = 1;
            }
        }
        if (held_start) continue;
        /* The head, in the policy's order; none when only just-evicted jobs
         * are left. The jobs behind it only when backfill may start one. */
        if (sort_classes(q) < 0) return;
        int n_order = q->n_order = take_order(q, 1);
        if (n_order == 0) return;
        const sched_job *head = sched_queue_at(q, q->order[0]);
        /* Above its quota a job still starts on idle GPUs: it borrows them,
         * and sched_try_preempt() lets their owner reclaim them. */
        if (sched_can_start(q, head)) {
            start_queued(q, q->order[0]);
            continue;
        }
        int head_id = head->id, before = q->n_queued;
        sched_job h = *head;
        int freed = sched_try_preempt(q, &h);
        if (freed) {
            qref k = sched_queue_find(q, head_id);
            if (k.c >= 0 && (!q->queues[h.queue].set || sched_room(q, sched_queue_at(q, k)))) {
                start_queued(q, k);
                continue;
            }
        }
        if (q->n_queued != before) continue;    /* evicted jobs joined the queue: new order */
        if (!q->backfill || !any_fits(q)) return;
        /* The head and up to `depth` jobs behind it, from the classes as
         * they were sorted before the preemption attempt (the queue is
         * the same; the shares may not be). */
        n_order = q->n_order = take_order(q, q->depth + 1);
        /* EASY backfill behind the head's reservation. */
        int extra;
        double shadow = q->queues[h.queue].set ? sched_part_reservation(q, &h, now_s, &extra)
                                               : sched_run_reservation(q, h.pool, h.gpus, now_s, &extra);
        /* One scan behind the same reservation (EASY): a start moves
         * jobs of its class, and sched_queue.c keeps the order's slots
         * true. When a start changed the queue otherwise (a job requeued
         * from a callback), the pass starts over. */
        int started = 0, maxlim = max_lim(q);
        for (int oi = 1; oi < n_order; oi++) {
            int pass = skippable(q, oi, n_order, maxlim);
            if (pass > 0) {
                oi += pass - 1;
                continue;
            }
            const sched_job *j = sched_queue_at(q, q->order[oi]);
            if (j->gpus > q->lim[j->pool]) continue;       /* cannot be allocated now */
            if (q->n_held && is_held(q, j->id)) continue;
            if (!sched_can_start(q, j)) continue;
            int fits_before = now_s + j->expected_end_s <= shadow;
            int fits_beside = j->pool != h.pool || j->gpus <= extra ||
                              (q->queues[h.queue].set && !sched_part_overlap(q, j->queue, h.queue));
            if (!fits_before && !fits_beside) continue;
            if (!fits_before && j->pool == h.pool && j->gpus <= extra) extra -= j->gpus;
            int n_before = q->n_queued;
            start_queued(q, q->order[oi]);
            any_fits(q);
            maxlim = max_lim(q);
            started = 1;
            if (q->n_queued != n_before - 1) {         /* the queue changed under us: a new pass */
                started = 2;
                break;
            }
        }
        /* One EASY scan per pass: the head still waits for its reservation,
         * and what could start beside or before it has. */
        if (started != 2) return;
    }
}

void sched_dispatch(sched *q, double now_s) {
    q->now = now_s;
    q->n_held = 0;
    dispatch_steps(q, now_s);
    q->n_order = 0;                  /* no order outside a pass: moves need not fix it */
}

/* A job submitted to an empty queue with nothing held is the head of the
 * pass that follows; the pass starts it at once if it can (its first test
 * and the head's, sched_can_start). Then it starts here, without joining
 * its class and leaving it again: the class is still made (classes are
 * kept in the order they were first seen), and what the join and the
 * leave would change nets out (the class's slots, the per-pool size
 * counts; a size count at 0 reads as none). The pass's first test,
 * anything_can_start, reads for the job alone: q->evicts (preemption or
 * a quota), or its GPUs free in its pool. Most of a trace's jobs start
 * this way (docs/performance.md, "Issue 23: the SimPy peer, third
 * round"). 1 when it started (or was lost out of memory, as a start of
 * the pass's would be); 0 with nothing changed: the caller queues it. */
int sched_start_alone(sched *q, const sched_job *j, double now_s) {
    if (q->n_queued || q->n_holds) return 0;
    q->now = now_s;
    q->n_held = 0;
    sched_job v = *j;
    v.running = 0;
    int may = q->evicts || v.gpus <= cluster_pool_free_gpus(q->c, v.pool);
    int go = may && sched_can_start(q, &v);
#ifdef CT_SCHED_CROSSCHECK
    /* The pass's own way: the job joins, is the head, and its pass's
     * tests agree; it starts from the queue, or leaves it again. */
    if (sched_queue_add(q, &v) < 0 || GROW(q->order, q->cap_order, 1) || sort_classes(q) < 0) abort();
    q->n_order = take_order(q, 1);
    if (q->n_order != 1 || sched_queue_at(q, q->order[0])->id != v.id || anything_can_start(q) != may ||
        (may && sched_can_start(q, sched_queue_at(q, q->order[0])) != go))
        abort();
    if (go) start_queued(q, q->order[0]);
    else sched_queue_remove(q, q->order[0]);
    q->n_order = 0;
    return go;
#endif
    if (!go || sched_queue_class(q, &v) < 0) return 0;
    start_job(q, v);
    return 1;
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
        if (q->psz[p].n_queued == 0) continue;
        /* Free GPUs on partly used nodes, too few for the smallest waiting
         * job: from the cluster's count of nodes by free GPUs. */
        for (int f = 1; f < ns->gpus && f < smallest; f++) frag += f * cluster_nodes_with_free(q->c, p, f);
    }
    return frag;
}
