/*
 * sched_hold: a preemptor's hold on the GPUs its victims freed, and the
 * one question every start asks: does the job fit beside the holds made
 * before its own? Placement is what-if, on the pool's counts of nodes by
 * free GPUs (see sched.c's opening comment for why holds exist).
 */
#include "sim/sched_int.h"

#include <stdlib.h>
#include <string.h>

int sched_hold_index(const sched *q, int id) {
    for (int i = 0; i < q->n_holds; i++)
        if (q->holds[i].id == id) return i;
    return -1;
}

/* The job started or left the queue: its hold ends. */
void sched_drop_hold(sched *q, int id) {
    int i = sched_hold_index(q, id);
    if (i < 0) return;
    free(q->holds[i].victims);
    memmove(&q->holds[i], &q->holds[i + 1], (size_t)(q->n_holds - i - 1) * sizeof *q->holds);
    q->n_holds--;
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
int sched_fits_after_holds(const sched *q, const sched_job *j, int *cnt, int upto) {
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
int sched_can_start(const sched *q, const sched_job *j) {
    if (!sched_room(q, j)) return 0;
    int upto = sched_hold_index(q, j->id);
    if (upto < 0) upto = q->n_holds;
    int any = 0;
    for (int i = 0; i < upto && !any; i++) any = q->holds[i].pool == j->pool && q->holds[i].id != j->id;
    if (!any) return 1;
    int per = cluster_pool_spec(q->c, j->pool)->gpus;
    int cnt[SMALL_MAX + 1] = { 0 };
    if (per > SMALL_MAX) return 1;                   /* no such node type; the cluster decides */
    for (int f = 1; f <= per; f++) cnt[f] = cluster_nodes_with_free(q->c, j->pool, f);
    return sched_fits_after_holds(q, j, cnt, upto);
}
