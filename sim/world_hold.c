/*
 * world_hold: GPUs held for inference services, the world's side of the
 * serving_host contract (sim/serving.h).
 *
 * A service's replica asks for GPUs the way a job does: its request (a
 * "holding") enters the scheduler's queue with the service's queue and
 * priority, under the id n_jobs + holding index. When the scheduler starts
 * it, the world takes a tp-GPU group of one pool (best fit inside a node,
 * whole nodes beyond one) and tells the service. A node failure under a
 * replica, or a preemption by a more important job, takes the GPUs back and
 * queues the request again; the service recomputes what the replica ran.
 * Holdings are reused once freed: a few per replica, never scanned on the
 * hot path except by a failure on a node with replicas.
 */
#include "sim/world_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/grow.h"

sched_job hold_view(const world *w, int k) {
    const holding *g = &w->hold[k];
    const svc_host *h = &w->svc[g->svc];
    const sc_inference *f = &w->s->inference[g->svc];
    /* A replica holds its GPUs until the service ends: no end for backfill. */
    sched_job v = { w->n_jobs + k, h->queue, f->priority, h->pool, g->gpus, g->since_s, 1e18, 0 };
    return v;
}

static int svc_acquire(void *ctx, int gpus, int tag, int *granted) {
    svc_host *h = ctx;
    world *w = h->w;
    int k = 0;
    while (k < w->n_hold && w->hold[k].state != H_FREE) k++;
    if (k == w->n_hold) {
        if (GROW(w->hold, w->cap_hold, (size_t)w->n_hold + 1)) return -1;
        w->hold[w->n_hold++] = (holding){ 0 };
    }
    holding *g = &w->hold[k];
    int per = cluster_pool_spec(w->c, h->pool)->gpus;
    int n = gpus <= per ? 1 : (gpus + per - 1) / per;
    if (g->n < n || !g->nodes) {
        int *p = realloc(g->nodes, (size_t)n * sizeof *p);
        if (!p) return -1;
        g->nodes = p;
    }
    g->n = n;
    g->gpus_each = gpus <= per ? gpus : per;
    g->gpus = gpus;
    g->svc = h->index;
    g->tag = tag;
    g->since_s = now_s(w);
    g->state = H_QUEUED;
    sched_job v = hold_view(w, k);
    sched_submit(w->q, &v);
    w->acquiring = k;                 /* granted during this dispatch: the caller is told by *granted */
    w->dispatch(w);
    w->acquiring = -1;
    *granted = g->state == H_HELD;
    return k;
}

/* The scheduler starts a replica's request: take the GPUs, start it. */
void hold_start(world *w, int k) {
    holding *g = &w->hold[k];
    svc_host *h = &w->svc[g->svc];
    if (g->state != H_QUEUED) return;
    if (sched_alloc(w->q, h->queue, h->pool, g->gpus, g->nodes, g->n) < 0) return;   /* dispatch checked */
    for (int i = 0; i < g->n; i++) {
        w->use[g->nodes[i]].replicas++;
        sched_placed(w->q, w->n_jobs + k, g->nodes[i], g->gpus_each);
    }
    g->state = H_HELD;
    world_add_state(w, GS_SERVING, g->gpus);
    if (k != w->acquiring && h->sv) serving_granted(h->sv, g->tag);
}

/* GPUs a replica holds go back to the pool. */
static void drop(world *w, int k) {
    holding *g = &w->hold[k];
    cluster_release(w->c, g->nodes, g->n, g->gpus_each);
    for (int i = 0; i < g->n; i++) {
        w->use[g->nodes[i]].replicas--;
        sched_unplaced(w->q, w->n_jobs + k, g->nodes[i]);
        repair_node_left(w, g->nodes[i]);
    }
    sched_finished(w->q, w->n_jobs + k);
    world_add_state(w, GS_SERVING, -g->gpus);
}

static void svc_release(void *ctx, int k) {
    svc_host *h = ctx;
    world *w = h->w;
    holding *g = &w->hold[k];
    if (g->state == H_QUEUED) {
        sched_withdraw(w->q, w->n_jobs + k);
    } else if (g->state == H_HELD) {
        drop(w, k);
    }
    g->state = H_FREE;
    w->dispatch(w);
}

/* A replica loses its GPUs (why: a failure, a preemption) and asks again. */
void hold_lost(world *w, int k, const char *why) {
    holding *g = &w->hold[k];
    if (g->state != H_HELD) return;
    drop(w, k);
    g->state = H_QUEUED;
    g->since_s = now_s(w);
    sched_job v = hold_view(w, k);
    sched_submit(w->q, &v);
    serving_replica_lost(w->svc[g->svc].sv, g->tag, why);   /* may withdraw it (svc_release) */
}

/* A failure on a node hits the replicas placed on it. */
void hold_hit_node(world *w, int node, const failure_proc *p) {
    if (w->use[node].replicas <= 0) return;
    char why[160];
    snprintf(why, sizeof why, "node %d failed: %s (%s)", node, p->cause, p->component);
    for (int k = 0; k < w->n_hold && w->use[node].replicas > 0; k++) {
        holding *g = &w->hold[k];
        if (g->state != H_HELD) continue;
        for (int i = 0; i < g->n; i++)
            if (g->nodes[i] == node) {
                hold_lost(w, k, why);
                break;
            }
    }
}

static void svc_finished(void *ctx) {
    svc_host *h = ctx;
    world *w = h->w;
    if (--w->unfinished == 0) engine_stop(w->e);
}

/* Whether two held replicas' GPUs share one NVLink domain: every node of
 * both in one node, or, on a node type whose domain spans nodes (GB200
 * NVL72), in one rack (sim/cluster.h). */
static int svc_same_domain(void *ctx, int a, int b) {
    svc_host *h = ctx;
    world *w = h->w;
    if (a < 0 || b < 0 || a >= w->n_hold || b >= w->n_hold) return 0;
    const holding *x = &w->hold[a], *y = &w->hold[b];
    if (x->state != H_HELD || y->state != H_HELD) return 0;
    const node_spec *ns = cluster_pool_spec(w->c, h->pool);
    int racks = ns->nvlink_domain > ns->gpus;
    int d0 = racks ? cluster_node_rack(w->c, x->nodes[0]) : x->nodes[0];
    for (int i = 0; i < x->n + y->n; i++) {
        int n = i < x->n ? x->nodes[i] : y->nodes[i - x->n];
        if ((racks ? cluster_node_rack(w->c, n) : n) != d0) return 0;
    }
    return 1;
}

/* Services run on the pool named by node-type, else the first pool whose
 * GPU is the service's gpu (or the first pool). */
int hold_build_services(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    if (s->n_inference == 0) return 0;
    w->svc = calloc((size_t)s->n_inference, sizeof *w->svc);
    if (!w->svc) {
        snprintf(err, errlen, "%s:0: out of memory building the services", s->file);
        return -1;
    }
    for (int i = 0; i < s->n_inference; i++) {
        const sc_inference *f = &s->inference[i];
        int pool = -1;
        if (f->node_type[0]) pool = cluster_pool_of_type(w->c, f->node_type);
        for (int p = 0; p < cluster_pool_count(w->c) && pool < 0 && !f->node_type[0]; p++)
            if (!f->gpu[0] || !strcmp(cluster_pool_spec(w->c, p)->gpu, f->gpu)) pool = p;
        if (pool < 0) {
            snprintf(err, errlen, "%s:%d: <inference name=\"%s\">: the cluster has no <nodes> %s %s", s->file, f->line,
                     f->name, f->node_type[0] ? "of type" : "with GPU", f->node_type[0] ? f->node_type : f->gpu);
            return -1;
        }
        svc_host *h = &w->svc[i];
        h->w = w;
        h->index = i;
        h->pool = pool;
        h->queue = sched_queue_of(w->q, f->queue);
        serving_host host = { h, svc_acquire, svc_release, svc_finished, svc_same_domain };
        w->unfinished++;
        h->sv = serving_new(w->e, w->bus, s, f, cluster_pool_spec(w->c, pool), &host, err, errlen);
        if (!h->sv) return -1;
        w->n_svc++;
    }
    return 0;
}

void hold_free(world *w) {
    for (int i = 0; i < w->n_svc; i++) serving_free(w->svc[i].sv);
    free(w->svc);
    for (int i = 0; i < w->n_hold; i++) free(w->hold[i].nodes);
    free(w->hold);
}
