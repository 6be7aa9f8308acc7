/*
 * sched_part: partitions with node sets (<queue nodes=>, Slurm's partition
 * Nodes=, slurm.conf(5)): a queue's jobs run only on its nodes. The one
 * question the rest of the scheduler asks is "may this queue use this
 * node" (an O(1) mask per queue with a set); placement and the EASY
 * reservation of such a queue's jobs scan the set and the running jobs
 * (O(set) and O(running x their nodes)), so a scenario without node sets
 * pays nothing.
 */
#include "sim/sched.h"
#include "sim/sched_int.h"

#include <stdlib.h>

#include "base/grow.h"

int sched_part_init(sched *q, const scenario *s) {
    int nodes = cluster_node_count(q->c);
    for (int i = 0; i < s->n_queues; i++) {
        const sc_queue *sq = &s->queues[i];
        if (!sq->nodes) continue;
        queue *u = &q->queues[i];
        u->set = sq->nodes;
        u->n_set = sq->n_nodes;
        u->in_set = calloc((size_t)nodes + 1, 1);
        if (!u->in_set) return -1;
        for (int k = 0; k < sq->n_nodes; k++)
            if (sq->nodes[k] < nodes) u->in_set[sq->nodes[k]] = 1;
        if (!q->part_nodes && !(q->part_nodes = malloc(((size_t)nodes + 1) * sizeof *q->part_nodes))) return -1;
    }
    return 0;
}

void sched_part_free(sched *q) {
    for (int i = 0; q->queues && i < q->n_queues; i++) free(q->queues[i].in_set);
    free(q->part_nodes);
    free(q->part_ends);
}

/* Do queues a and b share a node? A queue without a set shares every node. O(set). */
int sched_part_overlap(const sched *q, int a, int b) {
    const queue *u = &q->queues[a], *v = &q->queues[b];
    if (!u->set || !v->set) return 1;
    for (int i = 0; i < u->n_set; i++)
        if (v->in_set[u->set[i]]) return 1;
    return 0;
}

int sched_may_use(const sched *q, int qi, int node) {
    const unsigned char *m = q->queues[qi].in_set;
    return !m || m[node];
}

int sched_room(const sched *q, const sched_job *j) {
    const queue *u = &q->queues[j->queue];
    if (!u->set) return cluster_can_alloc(q->c, j->pool, j->gpus);
    return cluster_can_alloc_in(q->c, j->pool, j->gpus, u->set, u->n_set);
}

int sched_alloc(const sched *q, int qi, int pool, int gpus, int *out, int cap) {
    const queue *u = &q->queues[qi];
    if (!u->set) return cluster_alloc(q->c, pool, gpus, out, cap);
    return cluster_alloc_in(q->c, pool, gpus, u->set, u->n_set, out, cap);
}

static int cmp_end(const void *a, const void *b) {
    const struct part_end *x = a, *y = b;
    if (x->end_s != y->end_s) return x->end_s < y->end_s ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The head's reservation inside its queue's set: the set's free GPUs now,
 * then the running jobs' GPUs on the set's nodes in order of their
 * expected ends (sched_run_reservation's rule on the set). */
double sched_part_reservation(sched *q, const sched_job *h, double now_s, int *extra) {
    const queue *u = &q->queues[h->queue];
    int free_gpus = 0, n = 0, nodes = cluster_node_count(q->c);
    for (int i = 0; i < u->n_set; i++) {
        int x = u->set[i];
        if (cluster_node_pool(q->c, x) == h->pool && cluster_node_state(q->c, x) == NODE_UP)
            free_gpus += cluster_node_free_gpus(q->c, x);
    }
    *extra = 0;
    if (GROW(q->part_ends, q->cap_part_ends, (size_t)q->n_running + 1)) return 1e300;
    for (int r = 0; r < q->n_running && free_gpus < h->gpus; r++) {
        const sched_job *j = &q->running[r];
        if (j->pool != h->pool) continue;
        int each = 0, m = q->ops.nodes(q->ops.ctx, j->id, q->part_nodes, nodes, &each), in = 0;
        for (int k = 0; k < m; k++) in += q->part_nodes[k] >= 0 && u->in_set[q->part_nodes[k]];
        if (in > 0) q->part_ends[n++] = (struct part_end){ j->expected_end_s, j->id, in * each };
    }
    qsort(q->part_ends, (size_t)n, sizeof *q->part_ends, cmp_end);
    double t = now_s;
    for (int k = 0; k < n && free_gpus < h->gpus; k++) {
        free_gpus += q->part_ends[k].gpus;
        t = q->part_ends[k].end_s;
    }
    *extra = free_gpus - h->gpus;
    return free_gpus >= h->gpus ? t : 1e300;
}
