/*
 * forecast_run: the replicas of a forecast (see forecast.h). Each replica
 * is one world run to its end or the horizon; what it sends back is a line
 * of numbers (each job's start, then each day's utilisation, as C99 hex
 * floats so nothing is rounded on the way), kept by (variant, replica).
 * Workers are forked after every variant was loaded (forecast_prepare), so
 * each inherits them all; items go out in (variant, replica) order.
 */
#include "plan/forecast.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/grow.h"
#include "hw/comm.h"
#include "plan/forecast_stats.h"
#include "plan/pool.h"
#include "sim/metrics.h"
#include "sim/world.h"

#define CMD "forecast"
#define DAY_S 86400.0
#define OP_RUN 1

/* The bus series whose sum is the GPUs held by jobs and services
 * (sim/world.h: idle GPUs are the cluster's minus these). */
static const char *const held_series[] = { "gpus_training", "gpus_checkpoint", "gpus_restarting", "gpus_batch",
                                           "gpus_serving" };
enum { N_HELD = sizeof held_series / sizeof held_series[0] };

/* A metric sink that integrates the GPUs held into days. */
typedef struct held_sink {
    forecast_days days;
    metric_id id[N_HELD];
    double level[N_HELD];
} held_sink;

static void held_register(void *ctx, metric_id id, const char *entity, const char *name) {
    held_sink *h = ctx;
    if (strcmp(entity, "cluster")) return;
    for (int i = 0; i < N_HELD; i++)
        if (!strcmp(name, held_series[i])) h->id[i] = id;
}

static void held_sample(void *ctx, metric_id id, sim_time t, double value) {
    held_sink *h = ctx;
    double sum = 0;
    int hit = 0;
    for (int i = 0; i < N_HELD; i++) {
        if (h->id[i] == id) h->level[i] = value, hit = 1;
        sum += h->level[i];
    }
    if (hit) forecast_days_level(&h->days, sim_to_s(t), sum);
}

/* Where what a run says stops: the horizon, or the scenario's duration. */
static double known_until(const forecast *f, const scenario *s) {
    return s->duration_s > 0 && s->duration_s < f->horizon_s ? s->duration_s : f->horizon_s;
}

/* When a job started: INFINITY when it never did. A job running at the
 * snapshot started before t = 0 (start_s = -elapsed, sim/world_snapshot.c):
 * its state tells, not the sign. */
static double job_start(const job_result *r) {
    return r->start_s >= 0 || r->state != JOB_PENDING ? r->start_s : INFINITY;
}

/* The replica's line: each job's start, then each day's utilisation. */
static char *replica_line(const forecast *f, const world *w, const held_sink *h, int gpus) {
    char *b = NULL, num[64];
    size_t n = 0, cap = 0;
    int nj = world_job_count(w);
    for (int i = 0; i < nj + f->days; i++) {
        double x;
        job_result jr;
        if (i < nj) x = job_start(world_job(w, i, &jr));
        else x = forecast_days_util(&h->days, i - nj, gpus);
        int k = snprintf(num, sizeof num, "%a ", x);
        if (GROW(b, cap, n + (size_t)k + 1) < 0) {
            free(b);
            return NULL;
        }
        memcpy(b + n, num, (size_t)k + 1);
        n += (size_t)k;
    }
    return b ? b : strdup("");
}

/* Run replica r of variant p. 0 with *out the line, or 1 with *out the
 * error (both malloc'd). */
static int run_one(forecast *f, int p, int r, char **out) {
    forecast_variant *x = &f->v[p];
    char err[2048];
    x->s->seed = x->seed0 + (uint64_t)r;
    held_sink h = { 0 };
    for (int i = 0; i < N_HELD; i++) h.id[i] = -1;
    metric_sink sink = { &h, held_register, held_sample, NULL, NULL, NULL };
    metric_bus *bus = metrics_new();
    int ok = bus && forecast_days_init(&h.days, f->days, DAY_S) == 0 && metrics_subscribe(bus, &sink) == 0;
    world *w = ok ? world_new(x->s, bus, err, sizeof err) : NULL;
    if (w) {
        world_run(w, f->horizon_s);
        forecast_days_close(&h.days, known_until(f, x->s));
        *out = replica_line(f, w, &h, x->gpus);
    } else {
        *out = strdup(ok ? err : "out of memory");
    }
    world_free(w);
    metrics_free(bus);
    forecast_days_free(&h.days);
    return w && *out ? 0 : 1;
}

static int work(void *ctx, const pool_item *it, char **payload) { return run_one(ctx, it->p, it->r, payload); }

/* ---- answers ---------------------------------------------------------------- */

typedef struct sink_ctx {
    forecast *f;
    int failed;
} sink_ctx;

/* Keep replica r of variant p's numbers; 0, or -1 when the line is short. */
static int keep(forecast *f, int p, int r, const char *line) {
    forecast_variant *x = &f->v[p];
    const char *z = line;
    for (int i = 0; i < x->n_jobs + f->days; i++) {
        char *end = NULL;
        double v = strtod(z, &end);
        if (end == z) return -1;
        z = end;
        if (i < x->n_jobs) x->start_s[(size_t)i * f->replicas + r] = v;
        else x->util[(size_t)(i - x->n_jobs) * f->replicas + r] = v;
    }
    unsigned char *waiting = malloc((size_t)x->n_jobs + 1);
    double *s = malloc(((size_t)x->n_jobs + 1) * sizeof *s);
    int rc = waiting && s ? 0 : -1;
    for (int i = 0; i < x->n_jobs && rc == 0; i++) {
        waiting[i] = (unsigned char)x->jobs[i].waiting;
        s[i] = x->start_s[(size_t)i * f->replicas + r];
    }
    if (rc == 0) x->drain_s[r] = forecast_stats_drain(s, waiting, x->n_jobs);
    free(waiting);
    free(s);
    return rc;
}

static void on_answer(void *ctx, const pool_msg *h, const char *payload) {
    sink_ctx *c = ctx;
    char *z = malloc(h->n + 1);
    int bad = h->status != 0 || !z;
    if (z) {
        memcpy(z, payload, h->n);
        z[h->n] = 0;
    }
    if (!bad && keep(c->f, h->p, h->r, z) < 0) bad = 1;
    if (bad && !c->failed)
        sweep_say("clustertwin %s: %s, replica %d failed: %s\n", CMD, c->f->v[h->p].label, h->r,
                  h->status && z ? z : "its results could not be read");
    c->failed |= bad;
    free(z);
}

static void died(void *ctx, const pool_item *t, int ws) {
    const forecast *f = ctx;
    sweep_say("clustertwin %s: a worker died running %s, replica %d (%s %d)\n", CMD, f->v[t->p].label, t->r,
              WIFSIGNALED(ws) ? "signal" : "exit status", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
}

/* ---- the runs ------------------------------------------------------------------ */

int forecast_run(forecast *f, int jobs) {
    double t0 = comm_wtime();
    int n = f->n_variants * f->replicas;
    pool_item *items = malloc(((size_t)n + 1) * sizeof *items);
    unsigned char *had = malloc((size_t)f->n_variants + 1);
    if (!items || !had) {
        free(items);
        free(had);
        return PLAN_FAILED;
    }
    for (int i = 0; i < n; i++) items[i] = (pool_item){ OP_RUN, i / f->replicas, i % f->replicas, 0 };
    memset(had, 1, (size_t)f->n_variants + 1);
    sink_ctx c = { f, 0 };
    pool_job job = { work, f, on_answer, &c, died };
    pool_signals *sig = pool_signals_catch();
    char err[256] = "";
    pool *pl = jobs > 1 && n > 1 ? pool_start(jobs < n ? jobs : n, f->n_variants, had, &job, err, sizeof err) : NULL;
    int rc = jobs > 1 && n > 1 && !pl ? -1 : pool_do(pl, items, n, &job, &c.failed);
    if (jobs > 1 && n > 1 && !pl) sweep_say("clustertwin %s: %s\n", CMD, err[0] ? err : "out of memory");
    pool_stop(pl, pool_interrupted() || rc < 0);
    if (pool_interrupted()) sweep_say("clustertwin %s: interrupted\n", CMD);
    int bad = rc < 0 || c.failed || pool_interrupted();
    pool_signals_restore(sig);
    free(items);
    free(had);
    f->wall_s = comm_wtime() - t0;
    return bad ? PLAN_FAILED : PLAN_OK;
}
