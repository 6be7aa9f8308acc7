/*
 * failures: Poisson streams for exponential kinds, per-instance clocks for
 * Weibull kinds (see failures.h for why).
 *
 * Memory: a Weibull kind holds one event id per instance (8 bytes); an
 * exponential kind holds one event. Cost per failure: O(log pending).
 */
#include "sim/failures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sf_gamma.h>

#include "models/reliability.h"
#include "sim/rng.h"

typedef struct instance {
    struct kind *k;
    int index;                  /* node * per_node + slot */
} instance;

typedef struct kind {
    failure_proc p;
    int id;
    rng *r;
    long long n_inst;           /* instances in the cluster */
    double scale_s;             /* weibull: scale for the mean mtbf_s; 0: never fails */
    event_id next;              /* exponential: the stream's next event */
    instance *inst;             /* weibull: one per instance */
    event_id *ev;               /* weibull: each instance's pending event */
    struct failures *f;
} kind;

struct failures {
    engine *e;
    cluster *c;
    kind *k;
    int n;
    failure_fn fn;
    void *ctx;
};

static int node_alive(const failures *f, int node) {
    node_state s = cluster_node_state(f->c, node);
    return s == NODE_UP || s == NODE_SPARE;
}

static void on_poisson(engine *e, void *arg);
static void on_instance(engine *e, void *arg);

static void schedule_poisson(kind *k) {
    double rate = (double)k->n_inst / k->p.mtbf_s;
    /* At least 1 ns: a stream must move the clock or it runs at one instant. */
    k->next = engine_after(k->f->e, sim_period_from_s(rng_exponential(k->r, 1.0 / rate)), on_poisson, k);
}

static void on_poisson(engine *e, void *arg) {
    (void)e;
    kind *k = arg;
    failures *f = k->f;
    long long i = (long long)rng_uniform_int(k->r, (uint64_t)k->n_inst);
    int node = (int)((double)i / k->p.per_node);
    if (node >= cluster_node_count(f->c)) node = cluster_node_count(f->c) - 1;
    schedule_poisson(k);
    if (node_alive(f, node)) f->fn(f->ctx, node, k->id);
}

/* An instance's next failure. A time beyond the clock's horizon becomes an
 * event that never runs (sim_from_s saturates), which is what it means. */
static void schedule_instance(kind *k, int i) {
    if (!(k->scale_s > 0)) return;
    double t = rng_weibull(k->r, k->scale_s, k->p.shape);
    k->ev[i] = engine_after(k->f->e, sim_period_from_s(t), on_instance, &k->inst[i]);
}

/* The Weibull scale for a mean: as rng_weibull_mean() computed it (so runs
 * repeat bit for bit) where Γ(1 + 1/shape) is a double, in log space where
 * it would overflow (GSL's gamma aborted the program there). 0 when the
 * scale underflows; world_new refuses such a process (rel_weibull_check). */
static double weibull_scale_s(double mean_s, double shape) {
    double x = 1.0 + 1.0 / shape;
    double s = x < GSL_SF_GAMMA_XMAX ? mean_s / gsl_sf_gamma(x) : rel_weibull_scale_s(mean_s, shape);
    return s > 0 && isfinite(s) ? s : 0;
}

static void on_instance(engine *e, void *arg) {
    (void)e;
    instance *in = arg;
    kind *k = in->k;
    failures *f = k->f;
    int node = (int)((double)in->index / k->p.per_node);
    k->ev[in->index] = 0;
    if (!node_alive(f, node)) return;          /* renewed when the node is repaired */
    if (!k->p.needs_repair) schedule_instance(k, in->index);
    f->fn(f->ctx, node, k->id);
}

failures *failures_new(engine *e, cluster *c, const failure_proc *procs, int n, uint64_t seed,
                       failure_fn fn, void *ctx) {
    failures *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->e = e;
    f->c = c;
    f->fn = fn;
    f->ctx = ctx;
    f->k = calloc((size_t)n + 1, sizeof *f->k);
    if (!f->k) goto oom;
    int nodes = cluster_node_count(c);
    for (int i = 0; i < n; i++) {
        kind *k = &f->k[f->n++];
        char name[128];
        k->p = procs[i];
        k->id = i;
        k->f = f;
        snprintf(name, sizeof name, "failures/%s/%s", k->p.component, k->p.cause);
        k->r = rng_new(seed, name, (uint64_t)i);
        if (!k->r) goto oom;
        k->n_inst = (long long)ceil(k->p.per_node * nodes);
        if (k->n_inst < 1 || !(k->p.mtbf_s > 0)) continue;
        if (!k->p.weibull || k->p.shape == 1) {
            schedule_poisson(k);
            continue;
        }
        k->scale_s = weibull_scale_s(k->p.mtbf_s, k->p.shape);
        k->inst = calloc((size_t)k->n_inst, sizeof *k->inst);
        k->ev = calloc((size_t)k->n_inst, sizeof *k->ev);
        if (!k->inst || !k->ev) goto oom;
        for (long long j = 0; j < k->n_inst; j++) {
            k->inst[j].k = k;
            k->inst[j].index = (int)j;
            schedule_instance(k, (int)j);
        }
    }
    return f;
oom:
    failures_free(f);
    return NULL;
}

void failures_free(failures *f) {
    if (!f) return;
    for (int i = 0; i < f->n; i++) {
        rng_free(f->k[i].r);
        free(f->k[i].inst);
        free(f->k[i].ev);
    }
    free(f->k);
    free(f);
}

int failures_proc_count(const failures *f) { return f->n; }
const failure_proc *failures_proc(const failures *f, int i) { return &f->k[i].p; }

void failures_node_renewed(failures *f, int node) {
    if (!f) return;                     /* no failure processes: a failure injected by hand */
    for (int i = 0; i < f->n; i++) {
        kind *k = &f->k[i];
        if (!k->ev) continue;
        long long lo = (long long)ceil(node * k->p.per_node), hi = (long long)ceil((node + 1) * k->p.per_node);
        for (long long j = lo; j < hi && j < k->n_inst; j++) {
            if (k->ev[j]) engine_cancel(f->e, k->ev[j]);
            schedule_instance(k, (int)j);
        }
    }
}

double failures_rate_per_s(const failures *f, int nodes) {
    double r = 0;
    for (int i = 0; i < f->n; i++)
        if (f->k[i].p.mtbf_s > 0) r += f->k[i].p.per_node * nodes / f->k[i].p.mtbf_s;
    return r;
}
