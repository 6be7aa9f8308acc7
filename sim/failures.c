/*
 * failures: Poisson streams for exponential kinds, a clock per instance for
 * Weibull kinds (see failures.h for the model and why).
 *
 *   kind (one per <failure> or profile cause)
 *    ├─ exponential: next ── one pending event; r = the kind's gsl stream
 *    ├─ weibull:     clk[n_inst] ── {index, draws, ev, at}, 32 bytes each;
 *    │               draws from the counter-based stream of (kind, index)
 *    └─ failed[]:    parts awaiting replacement {instance, until}, pruned
 *                    lazily: about rate × mttr of them (a handful)
 *
 * Memory: 32 bytes per Weibull instance (a million instances at 100,000
 * GPUs under the 18-cause profile: 32 MB plus the engine's events); an
 * exponential kind holds one event. Cost per failure: O(log pending) for
 * the engine plus O(failed parts of the kind) for the awaiting list; a node
 * replacement redraws the node's instances only. Nothing scans all
 * instances after the start.
 */
#include "sim/failures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

#include "models/reliability.h"
#include "sim/rng.h"

typedef struct clk {
    struct kind *k;
    int index;                  /* node * per_node + slot */
    uint32_t draws;             /* numbers drawn so far from the instance's stream */
    event_id ev;                /* the pending failure; 0 when none */
    sim_time at;                /* its time (SIM_FOREVER: never) */
} clk;

typedef struct part {
    long long i;                /* instance */
    sim_time until;             /* replaced then */
} part;

typedef struct kind {
    failure_proc p;
    int id;
    char stream[128];           /* "failures/<component>/<cause>[/<n>]": the streams' name */
    rng *r;                     /* exponential: the kind's Poisson stream */
    long long n_inst;           /* instances in the cluster */
    double scale_s;             /* weibull: scale for the mean mtbf_s; 0: never fails */
    event_id next;              /* exponential: the stream's next event */
    clk *clk;                   /* weibull: one per instance */
    part *failed;               /* needs_repair: parts awaiting replacement */
    int n_failed;
    size_t cap_failed;
    struct failures *f;
} kind;

struct failures {
    engine *e;
    cluster *c;
    uint64_t seed;
    kind *k;
    int n;
    failure_fn fn;
    void *ctx;
};

static int node_of(const kind *k, long long i) {
    int node = (int)((double)i / k->p.per_node);
    int nodes = cluster_node_count(k->f->c);
    return node < nodes ? node : nodes - 1;
}

static void node_span(const kind *k, int node, long long *lo, long long *hi) {
    *lo = (long long)ceil(node * k->p.per_node);
    *hi = (long long)ceil((node + 1) * k->p.per_node);
    if (*hi > k->n_inst) *hi = k->n_inst;
}

/* now + d without passing SIM_FOREVER. */
static sim_time at_after(const engine *e, sim_time d) {
    sim_time now = engine_now(e);
    return d >= SIM_FOREVER - now ? SIM_FOREVER : now + d;
}

/* ---- parts awaiting replacement --------------------------------------- */

static void failed_prune(kind *k, sim_time now) {
    for (int j = 0; j < k->n_failed;)
        if (k->failed[j].until <= now) k->failed[j] = k->failed[--k->n_failed];
        else j++;
}

static int failed_has(kind *k, long long i) {
    failed_prune(k, engine_now(k->f->e));
    for (int j = 0; j < k->n_failed; j++)
        if (k->failed[j].i == i) return 1;
    return 0;
}

/* Out of memory only forgets that the part is awaiting replacement (it may
 * then fail again, and the node's repair does not wait for it). */
static void failed_add(kind *k, long long i, sim_time until) {
    if (GROW(k->failed, k->cap_failed, (size_t)k->n_failed + 1)) return;
    k->failed[k->n_failed++] = (part){ i, until };
}

/* The part failed now: it is replaced mttr_s later (its own repair time,
 * whatever else happens to the node, so its history is its own). */
static sim_time replaced_at(kind *k) {
    return at_after(k->f->e, sim_period_from_s(k->p.mttr_s));
}

/* ---- reporting -------------------------------------------------------- */

/* A drained node and a cloud node not rented have left the fleet: their
 * parts' clocks run on but nobody sees them fail. */
static void report(kind *k, int node) {
    node_state s = cluster_node_state(k->f->c, node);
    if (s == NODE_DRAINED || s == NODE_OFF) return;
    k->f->fn(k->f->ctx, node, k->id);
}

/* ---- exponential kinds ------------------------------------------------ */

static void on_poisson(engine *e, void *arg);

static void schedule_poisson(kind *k) {
    double rate = (double)k->n_inst / k->p.mtbf_s;
    /* At least 1 ns: a stream must move the clock or it runs at one instant. */
    k->next = engine_after(k->f->e, sim_period_from_s(rng_exponential(k->r, 1.0 / rate)), on_poisson, k);
}

/* Thinning: an event that picks a part awaiting replacement is dropped (a
 * failed part cannot fail); the rest is exactly each working instance's
 * own Poisson process. */
static void on_poisson(engine *e, void *arg) {
    (void)e;
    kind *k = arg;
    long long i = (long long)rng_uniform_int(k->r, (uint64_t)k->n_inst);
    schedule_poisson(k);
    if (k->p.needs_repair) {
        if (failed_has(k, i)) return;
        failed_add(k, i, replaced_at(k));
    }
    report(k, node_of(k, i));
}

/* ---- Weibull kinds ---------------------------------------------------- */

static void on_clock(engine *e, void *arg);

/* The instance's next failure: `delay_s` from now (the replacement's
 * installation) plus a residual life at `age_s`, from the instance's own
 * stream. A time beyond the clock's horizon is an event that never runs
 * (sim_from_s saturates), which is what it means. */
static void schedule_clock(kind *k, clk *c, double delay_s, double age_s) {
    c->ev = 0;
    c->at = SIM_FOREVER;
    if (!(k->scale_s > 0)) return;
    uint64_t key = rng_derive_seed(k->f->seed, k->stream, (uint64_t)c->index);
    double u = rng_counter_uniform_pos(key, c->draws++);
    double t = delay_s + rel_weibull_residual_s(k->scale_s, k->p.shape, age_s, u);
    sim_time d = sim_period_from_s(t);
    c->ev = engine_after(k->f->e, d, on_clock, c);
    c->at = at_after(k->f->e, d);
}

static void on_clock(engine *e, void *arg) {
    (void)e;
    clk *c = arg;
    kind *k = c->k;
    c->ev = 0;
    if (k->p.needs_repair) {
        /* The replacement is new (age 0) and starts when it is installed. */
        failed_add(k, c->index, replaced_at(k));
        schedule_clock(k, c, k->p.mttr_s, 0);
    } else {
        schedule_clock(k, c, 0, 0);           /* restart only: a new process */
    }
    report(k, node_of(k, c->index));
}

/* ---- life cycle ------------------------------------------------------- */

/* Kind i of procs, the next in f: its random stream, named by what it is
 * and not by its place in the list (adding a <failure> never moves another
 * kind's numbers; a repeated (component, cause) gets its occurrence
 * number), its instances over the nodes, and each one's first failure.
 * -1 when memory runs out. */
static int kind_start(failures *f, const failure_proc *procs, int i, int nodes) {
    kind *k = &f->k[f->n++];
    k->p = procs[i];
    k->id = i;
    k->f = f;
    int same = 0;
    for (int j = 0; j < i; j++)
        same += !strcmp(procs[j].component, k->p.component) && !strcmp(procs[j].cause, k->p.cause);
    if (same) snprintf(k->stream, sizeof k->stream, "failures/%s/%s/%d", k->p.component, k->p.cause, same + 1);
    else snprintf(k->stream, sizeof k->stream, "failures/%s/%s", k->p.component, k->p.cause);
    k->n_inst = (long long)ceil(k->p.per_node * nodes);
    if (k->n_inst < 1 || !(k->p.mtbf_s > 0)) return 0;
    if (!k->p.weibull || k->p.shape == 1) {
        k->r = rng_new(f->seed, k->stream, 0);
        if (!k->r) return -1;
        schedule_poisson(k);
        return 0;
    }
    double s = rel_weibull_scale_s(k->p.mtbf_s, k->p.shape);
    k->scale_s = s > 0 && isfinite(s) ? s : 0;       /* world_new refuses 0 (rel_weibull_check) */
    k->clk = calloc((size_t)k->n_inst, sizeof *k->clk);
    if (!k->clk) return -1;
    double age = k->p.age_s > 0 ? k->p.age_s : 0;
    for (long long j = 0; j < k->n_inst; j++) {
        k->clk[j].k = k;
        k->clk[j].index = (int)j;
        schedule_clock(k, &k->clk[j], 0, age);
    }
    return 0;
}

failures *failures_new(engine *e, cluster *c, const failure_proc *procs, int n, uint64_t seed,
                       failure_fn fn, void *ctx) {
    failures *f = malloc(sizeof *f);
    if (!f) return NULL;
    *f = (failures){ .e = e, .c = c, .seed = seed, .fn = fn, .ctx = ctx };
    f->k = calloc((size_t)n + 1, sizeof *f->k);
    if (!f->k) goto oom;
    int nodes = cluster_node_count(c);
    for (int i = 0; i < n; i++)
        if (kind_start(f, procs, i, nodes) < 0) goto oom;
    return f;
oom:
    failures_free(f);
    return NULL;
}

void failures_free(failures *f) {
    if (!f) return;
    for (int i = 0; i < f->n; i++) {
        rng_free(f->k[i].r);
        free(f->k[i].clk);
        free(f->k[i].failed);
    }
    free(f->k);
    free(f);
}

int failures_proc_count(const failures *f) { return f->n; }
const failure_proc *failures_proc(const failures *f, int i) { return &f->k[i].p; }

void failures_node_replaced(failures *f, int node) {
    if (!f) return;                     /* no failure processes: a failure injected by hand */
    for (int i = 0; i < f->n; i++) {
        kind *k = &f->k[i];
        long long lo, hi;
        node_span(k, node, &lo, &hi);
        for (int j = 0; j < k->n_failed;)
            if (k->failed[j].i >= lo && k->failed[j].i < hi) k->failed[j] = k->failed[--k->n_failed];
            else j++;
        if (!k->clk) continue;
        for (long long j = lo; j < hi; j++) {
            if (k->clk[j].ev) engine_cancel(f->e, k->clk[j].ev);
            schedule_clock(k, &k->clk[j], 0, 0);
        }
    }
}

sim_time failures_node_ready(failures *f, int node) {
    sim_time t = 0;
    if (!f) return 0;
    for (int i = 0; i < f->n; i++) {
        kind *k = &f->k[i];
        if (!k->n_failed) continue;
        failed_prune(k, engine_now(f->e));
        long long lo, hi;
        node_span(k, node, &lo, &hi);
        for (int j = 0; j < k->n_failed; j++)
            if (k->failed[j].i >= lo && k->failed[j].i < hi && k->failed[j].until > t) t = k->failed[j].until;
    }
    return t;
}

sim_time failures_instance_next(const failures *f, int proc, long long i) {
    if (!f || proc < 0 || proc >= f->n) return -1;
    const kind *k = &f->k[proc];
    if (!k->clk || i < 0 || i >= k->n_inst) return -1;
    return k->clk[i].at;
}

double failures_rate_per_s(const failures *f, int nodes) {
    double r = 0;
    for (int i = 0; i < f->n; i++)
        if (f->k[i].p.mtbf_s > 0) r += f->k[i].p.per_node * nodes / f->k[i].p.mtbf_s;
    return r;
}
