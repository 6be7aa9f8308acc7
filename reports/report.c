/*
 * report: HTML, Markdown and CSV views of stored runs.
 *
 * The reader is a capacity-planning engineer who asked the scenario a
 * question; the report opens with the answer in one sentence, then the
 * headline figures as cards, then the charts and tables that explain
 * them, then the scenario itself. Everything is read from the database
 * (reports/rundata.h); nothing is simulated again.
 *
 * Figures are formatted for reading (18.9 days, $1.39M, 441 MWh); the CSV
 * files keep full precision. A figure that is not known (no energy model,
 * a job that did not finish) reads "n/a" with the reason beside it.
 */
#include "reports/report.h"
#include "base/errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "reports/charts.h"
#include "reports/fileout.h"
#include "base/units.h"
#include "reports/rundata.h"
#include "reports/store.h"
#include "reports/sweepdb.h"
#include "reports/sweepreport.h"
#include "reports/topo.h"
#include "scenarios/scenario.h"

static void addnote(char *notes, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void addnote(char *notes, size_t len, const char *fmt, ...) {
    if (!notes || !len) return;
    size_t n = strlen(notes);
    if (n + 2 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + n, len - n - 1, fmt, ap);
    va_end(ap);
    n = strlen(notes);
    notes[n] = '\n';
    notes[n + 1] = 0;
}

/* ---- formatting ---------------------------------------------------------- */

typedef enum fmt { F_DUR, F_USD, F_GPUH, F_KWH, F_KG, F_PCT, F_COUNT, F_SECONDS, F_RPS } fmt;

static const char *fmt_dur(double s, char *b, size_t n) {
    double a = fabs(s);
    if (isnan(s)) snprintf(b, n, "n/a");
    else if (a < 5e-7) snprintf(b, n, "0 s");
    else if (a < 1) snprintf(b, n, "%.3g ms", s * 1e3);
    else if (a < 120) snprintf(b, n, "%.3g s", s);
    else if (a < 2 * 3600) snprintf(b, n, "%.1f min", s / 60);
    else if (a < 2 * 86400) snprintf(b, n, "%.1f h", s / 3600);
    else snprintf(b, n, "%.1f days", s / 86400);
    return b;
}

/* 1234567 -> "1.23M" with a unit; thousands k, millions M, billions B. */
static const char *fmt_big(double v, const char *pre, const char *post, char *b, size_t n) {
    double a = fabs(v);
    if (isnan(v)) snprintf(b, n, "n/a");
    else if (a >= 1e9) snprintf(b, n, "%s%.3gB%s", pre, v / 1e9, post);
    else if (a >= 1e6) snprintf(b, n, "%s%.3gM%s", pre, v / 1e6, post);
    else if (a >= 1e4) snprintf(b, n, "%s%.3gk%s", pre, v / 1e3, post);
    else snprintf(b, n, "%s%.4g%s", pre, v, post);
    return b;
}

/* 929833 -> "929,833" */
static const char *fmt_count(double v, char *b, size_t n) {
    char digits[40];
    if (isnan(v)) return snprintf(b, n, "n/a"), b;
    snprintf(digits, sizeof digits, "%.0f", fabs(v));
    size_t len = strlen(digits), k = 0;
    if (v < 0 && k + 1 < n) b[k++] = '-';
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        if (i && (len - i) % 3 == 0) b[k++] = ',';
        b[k++] = digits[i];
    }
    b[k] = 0;
    return b;
}

static const char *fmt_value(fmt f, double v, char *b, size_t n) {
    if (isnan(v)) return snprintf(b, n, "n/a"), b;
    switch (f) {
    case F_DUR: return fmt_dur(v, b, n);
    case F_SECONDS: snprintf(b, n, "%.4g s", v); return b;
    case F_USD:
        if (v < 0) {
            fmt_big(-v, "$", "", b + 1, n - 1);
            b[0] = '-';
            return b;
        }
        return fmt_big(v, "$", "", b, n);
    case F_GPUH: return fmt_big(v, "", " GPU-h", b, n);
    case F_KWH:
        if (fabs(v) >= 1e6) snprintf(b, n, "%.3g GWh", v / 1e6);
        else if (fabs(v) >= 1e3) snprintf(b, n, "%.3g MWh", v / 1e3);
        else snprintf(b, n, "%.3g kWh", v);
        return b;
    case F_KG:
        if (fabs(v) >= 1e3) return fmt_big(v / 1e3, "", " t", b, n);
        snprintf(b, n, "%.3g kg", v);
        return b;
    case F_PCT:                      /* 99.98%, not 100.0%, for a share just short of all */
        snprintf(b, n, v >= 0.999 && v < 1 ? "%.2f%%" : "%.1f%%", 100 * v);
        return b;
    case F_COUNT: return fmt_count(v, b, n);
    case F_RPS: snprintf(b, n, "%.3g req/s", v); return b;
    }
    return b;
}

/* ---- the headline figures ------------------------------------------------ */

enum { M_FINISH, M_COST, M_GPU_HOURS, M_ENERGY, M_CO2, M_UTIL, M_ETTR, M_FAILURES, M_INTERRUPTIONS, M_LOST,
       M_STEP, M_MFU, M_JOBS_DONE, M_WAIT, M_SIMULATED, M_GOODPUT, NM };

static const struct {
    const char *key, *label;
    fmt f;
    int card;                        /* a card in the HTML headline: 1 always, 2 when the run has services */
} mdef[NM] = {
    [M_FINISH] = { "time_to_finish_s", "Time to finish", F_DUR, 1 },
    [M_COST] = { "cost_usd", "Cost", F_USD, 1 },
    [M_GPU_HOURS] = { "gpu_hours", "GPU-hours", F_GPUH, 1 },
    [M_ENERGY] = { "energy_kwh", "Energy", F_KWH, 1 },
    [M_CO2] = { "co2_kg", "CO2", F_KG, 1 },
    [M_UTIL] = { "gpu_utilization", "GPU utilisation", F_PCT, 1 },
    [M_ETTR] = { "ettr", "Goodput (ETTR)", F_PCT, 1 },
    [M_FAILURES] = { "failures", "Failures", F_COUNT, 1 },
    [M_INTERRUPTIONS] = { "interruptions", "Job interruptions", F_COUNT, 0 },
    [M_LOST] = { "lost_work_s", "Training lost and redone", F_DUR, 0 },
    [M_STEP] = { "step_time_s", "Step time", F_SECONDS, 0 },
    [M_MFU] = { "mfu", "MFU", F_PCT, 0 },
    [M_JOBS_DONE] = { "jobs_done", "Jobs done", F_COUNT, 0 },
    [M_WAIT] = { "mean_queue_wait_s", "Mean queue wait", F_DUR, 0 },
    [M_SIMULATED] = { "simulated_s", "Simulated time", F_DUR, 0 },
    [M_GOODPUT] = { "slo_goodput_requests_per_s", "SLO goodput", F_RPS, 2 },
};

typedef struct figures {
    double v[NM];
    char note[NM][192];
} figures;

static void figures_of(const rundata *r, figures *m) {
    for (int i = 0; i < NM; i++) {
        m->v[i] = NAN;
        m->note[i][0] = 0;
    }
    const rd_job *j = rundata_main_job(r);
    if (j) {
        if (!isnan(j->end_s)) {
            m->v[M_FINISH] = j->end_s - j->submit_s;
            snprintf(m->note[M_FINISH], sizeof m->note[0], "%s, from submission to its last step", j->name);
        } else
            snprintf(m->note[M_FINISH], sizeof m->note[0], "%s did not finish in the simulated time", j->name);
        m->v[M_ETTR] = j->ettr;
        snprintf(m->note[M_ETTR], sizeof m->note[0], "share of %s's time kept training", j->name);
        m->v[M_INTERRUPTIONS] = j->interruptions;
        m->v[M_LOST] = j->lost_work_s;
        m->v[M_STEP] = j->step_time_s;
        m->v[M_MFU] = j->mfu;
        snprintf(m->note[M_INTERRUPTIONS], sizeof m->note[0], "%s", j->name);
        snprintf(m->note[M_LOST], sizeof m->note[0], "%s", j->name);
        snprintf(m->note[M_STEP], sizeof m->note[0], "%s", j->name);
        snprintf(m->note[M_MFU], sizeof m->note[0], "%s", j->name);
    } else if (r->n_jobs > 0) {
        double first = INFINITY, last = 0;
        int done = 1;
        for (int i = 0; i < r->n_jobs; i++) {
            first = fmin(first, r->jobs[i].submit_s);
            if (isnan(r->jobs[i].end_s)) done = 0;
            else last = fmax(last, r->jobs[i].end_s);
        }
        if (done) m->v[M_FINISH] = last - first;
        snprintf(m->note[M_FINISH], sizeof m->note[0], done ? "all %d jobs, first submission to last end"
                                                            : "not all %d jobs finished", r->n_jobs);
        snprintf(m->note[M_ETTR], sizeof m->note[0], "no training job");
    } else {
        snprintf(m->note[M_FINISH], sizeof m->note[0], "no jobs in this scenario");
        snprintf(m->note[M_ETTR], sizeof m->note[0], "no training job");
    }
    m->v[M_COST] = r->cost_usd;
    snprintf(m->note[M_COST], sizeof m->note[0], "the cluster over the %.3g days simulated", r->simulated_s / 86400);
    m->v[M_GPU_HOURS] = r->gpu_hours;
    snprintf(m->note[M_GPU_HOURS], sizeof m->note[0], "provisioned; %.3g%% of them busy",
             r->gpu_hours > 0 ? 100 * r->gpu_busy_hours / r->gpu_hours : 0);
    m->v[M_ENERGY] = r->energy_kwh;
    m->v[M_CO2] = r->co2_kg;
    if (isnan(r->energy_kwh)) snprintf(m->note[M_ENERGY], sizeof m->note[0], "no energy model in clustertwin %s", r->version);
    else snprintf(m->note[M_ENERGY], sizeof m->note[0], "facility energy (IT x PUE)");
    if (isnan(r->co2_kg)) snprintf(m->note[M_CO2], sizeof m->note[0], "no energy model in clustertwin %s", r->version);
    else snprintf(m->note[M_CO2], sizeof m->note[0], "from the grid's carbon intensity");
    m->v[M_UTIL] = r->gpu_utilization;
    snprintf(m->note[M_UTIL], sizeof m->note[0], "busy GPU-time over provisioned GPU-time");
    m->v[M_FAILURES] = r->failures_total;
    snprintf(m->note[M_FAILURES], sizeof m->note[0], "component failures on %.0f nodes", r->nodes);
    int done = 0, waited = 0;
    double wait = 0;
    for (int i = 0; i < r->n_jobs; i++) {
        done += !strcmp(r->jobs[i].state, "done");
        if (!isnan(r->jobs[i].queue_wait_s)) waited++, wait += r->jobs[i].queue_wait_s;
    }
    m->v[M_JOBS_DONE] = done;
    snprintf(m->note[M_JOBS_DONE], sizeof m->note[0], "of %d", r->n_jobs);
    if (waited) m->v[M_WAIT] = wait / waited;
    snprintf(m->note[M_WAIT], sizeof m->note[0], "over the %d jobs that started", waited);
    m->v[M_SIMULATED] = r->simulated_s;
    /* SLO goodput: requests per second that met every latency objective,
     * summed over the services (sim/serving.c counts a request as meeting
     * the SLO when its TTFT and TPOT are both within the objectives). */
    if (r->n_services == 1) {
        const rd_service *v = &r->services[0];
        m->v[M_GOODPUT] = v->goodput_requests_per_s;
        snprintf(m->note[M_GOODPUT], sizeof m->note[0], "%s: requests/s within its SLO (%.4g%% of %.3g/s)", v->name,
                 100 * v->slo_attainment, v->requests_per_s);
    } else if (r->n_services > 1) {
        double g = 0;
        for (int i = 0; i < r->n_services; i++) g += r->services[i].goodput_requests_per_s;
        m->v[M_GOODPUT] = g;
        snprintf(m->note[M_GOODPUT], sizeof m->note[0], "requests/s within their SLOs, %d services", r->n_services);
    } else {
        snprintf(m->note[M_GOODPUT], sizeof m->note[0], "no inference service");
    }
}

/* The services in one sentence: requests served, SLO attainment, SLO
 * goodput and the price of a million output tokens. */
static void services_sentence(const rundata *r, char *b, size_t n) {
    char x[64], y[64], z[64], g[64];
    b[0] = 0;
    if (r->n_services == 1) {
        const rd_service *v = &r->services[0];
        int k = snprintf(b, n, "%s serves %s requests in the %s simulated (%.3g/s); %s of them met its SLO, %s of "
                               "SLO goodput", v->name, fmt_count(v->requests, x, sizeof x),
                         fmt_dur(r->simulated_s, y, sizeof y), v->requests_per_s,
                         fmt_value(F_PCT, v->slo_attainment, z, sizeof z),
                         fmt_value(F_RPS, v->goodput_requests_per_s, g, sizeof g));
        if (k > 0 && (size_t)k < n && !isnan(v->cost_per_million_tokens_usd))
            k += snprintf(b + k, n - (size_t)k, ", at $%.2f per million output tokens", v->cost_per_million_tokens_usd);
        if (k > 0 && (size_t)k < n) snprintf(b + k, n - (size_t)k, ".");
        return;
    }
    double req = 0;
    for (int i = 0; i < r->n_services; i++) req += r->services[i].requests;
    int k = snprintf(b, n, "%d services serve %s requests in the %s simulated:", r->n_services,
                     fmt_count(req, x, sizeof x), fmt_dur(r->simulated_s, y, sizeof y));
    for (int i = 0; i < r->n_services && i < 4 && k > 0 && (size_t)k < n; i++) {
        const rd_service *v = &r->services[i];
        k += snprintf(b + k, n - (size_t)k, "%s %s %s within its SLO", i ? ";" : "", v->name,
                      fmt_value(F_PCT, v->slo_attainment, z, sizeof z));
        if (k > 0 && (size_t)k < n && !isnan(v->cost_per_million_tokens_usd))
            k += snprintf(b + k, n - (size_t)k, " at $%.2f per million output tokens", v->cost_per_million_tokens_usd);
    }
    if (k > 0 && (size_t)k < n) snprintf(b + k, n - (size_t)k, "%s.", r->n_services > 4 ? "; ..." : "");
}

/* The job's own cost (its GPU-hours at its node type's price) as "$21.1k",
 * or "" for a run stored before jobs had one. */
static const char *job_cost(const rd_job *j, char *b, size_t n) {
    if (isnan(j->cost_usd)) b[0] = 0;
    else fmt_value(F_USD, j->cost_usd, b, n);
    return b;
}

/* The scenario's question answered in one sentence (two when a run has
 * both jobs and services). A job's cost is its own GPU-hours at its
 * price; the cluster's cost is stated as the cluster's. */
static void answer(sqlite3 *db, const rundata *r, const figures *m, char *b, size_t n) {
    char x[64], y[64], z[64], c[64], w[64];
    const rd_job *j = rundata_main_job(r);
    int k = 0;
    if (strcmp(r->status, "complete")) {
        double events = 0, last = NAN;
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(db, "SELECT count(*), max(t_s) FROM events WHERE run_id = ?", -1, &q, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, r->id);
            if (sqlite3_step(q) == SQLITE_ROW) {
                events = sqlite3_column_double(q, 0);
                if (sqlite3_column_type(q, 1) != SQLITE_NULL) last = sqlite3_column_double(q, 1);
            }
        }
        sqlite3_finalize(q);
        snprintf(b, n, "Run %lld of %s has no results: it was interrupted (or is still running); %s events were "
                       "stored, up to %s of simulated time.", (long long)r->id, r->scenario,
                 fmt_count(events, x, sizeof x), fmt_dur(last, y, sizeof y));
        return;
    } else if (j && !isnan(j->end_s)) {
        double cluster = rundata_cost_at(db, r, j->end_s);
        job_cost(j, c, sizeof c);
        k = snprintf(b, n, "%s finishes in %s%s%s on %d GPUs; %s of its time was kept training. The cluster's "
                           "%.0f GPUs cost %s from the start of the run to then.", j->name,
                     fmt_dur(j->end_s - j->submit_s, x, sizeof x), c[0] ? " at " : "", c, j->gpus,
                     fmt_value(F_PCT, j->ettr, z, sizeof z), r->gpus, fmt_value(F_USD, cluster, y, sizeof y));
    } else if (j && !isnan(j->start_s) && j->steps_total > 0) {
        double share = j->steps_done / j->steps_total, el = r->simulated_s - j->start_s;
        job_cost(j, c, sizeof c);
        k = snprintf(b, n, "%s does %.1f%% of its %s steps in the %s simulated%s%s%s; %s of its time "
                           "was kept training", j->name, 100 * share, fmt_count(j->steps_total, w, sizeof w),
                     fmt_dur(r->simulated_s, x, sizeof x), c[0] ? ", at " : "", c, c[0] ? " so far" : "",
                     fmt_value(F_PCT, j->ettr, z, sizeof z));
        if (share > 0 && k > 0 && (size_t)k < n)
            k += snprintf(b + k, n - (size_t)k, ", and at this pace it would finish after %s.",
                          fmt_dur(j->submit_s + (j->start_s - j->submit_s) + el / share, z, sizeof z));
        else if (k > 0 && (size_t)k < n)
            k += snprintf(b + k, n - (size_t)k, ".");
        if (k > 0 && (size_t)k < n)
            k += snprintf(b + k, n - (size_t)k, " The cluster's %.0f GPUs cost %s.", r->gpus,
                          fmt_value(F_USD, r->cost_usd, y, sizeof y));
    } else if (j) {
        k = snprintf(b, n, "%s never starts in the %s simulated (it waits for %d GPUs); the cluster costs %s.", j->name,
                     fmt_dur(r->simulated_s, x, sizeof x), j->gpus, fmt_value(F_USD, r->cost_usd, y, sizeof y));
    } else if (r->n_jobs > 0) {
        k = snprintf(b, n, "%.0f of %d jobs finish in the %s simulated; they wait %s on average to start, the GPUs "
                           "are %.1f%% busy, and the cluster costs %s.", m->v[M_JOBS_DONE], r->n_jobs,
                     fmt_dur(r->simulated_s, x, sizeof x), fmt_dur(m->v[M_WAIT], z, sizeof z),
                     100 * r->gpu_utilization, fmt_value(F_USD, r->cost_usd, y, sizeof y));
    } else if (r->n_services > 0) {
        k = 0;                              /* the services are the answer */
    } else if (r->microbenchmarks > 0) {
        snprintf(b, n, "%s predicts %.0f microbenchmark cases (they are in the run's JSON results); nothing is "
                       "simulated over time.", r->scenario, r->microbenchmarks);
        return;
    } else {
        snprintf(b, n, "The cluster runs no workload; %s of it costs %s.", fmt_dur(r->simulated_s, x, sizeof x),
                 fmt_value(F_USD, r->cost_usd, y, sizeof y));
        return;
    }
    if (!r->n_services || k < 0 || (size_t)k >= n) return;
    char sv[768];
    services_sentence(r, sv, sizeof sv);
    if (k == 0)
        snprintf(b, n, "%s The cluster's %.0f GPUs cost %s.", sv, r->gpus, fmt_value(F_USD, r->cost_usd, y, sizeof y));
    else
        snprintf(b + k, n - (size_t)k, " %s", sv);
}

/* ---- per-queue figures ---------------------------------------------------- */

typedef struct qstat {
    char name[96];
    int jobs, done, started;
    double gpu_hours, mean_wait_s, p50_wait_s, p95_wait_s, max_wait_s;
    double quota_gpus, slowdown;       /* from the world's queues[]; NAN without */
} qstat;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Queues: the scheduler's (queues[] of the JSON) in their order, then any
 * other queue a job names. Counts, median and longest wait come from the
 * jobs; quota, slowdown, GPU-hours, mean and 95th percentile wait from the
 * world's figures when it gave them. *out malloc'd. Returns the count or -1. */
static int queue_stats(const rundata *r, qstat **out) {
    int nq = 0;
    qstat *q = calloc((size_t)(r->n_jobs + r->n_queues + 1), sizeof *q);
    double *w = malloc((size_t)(r->n_jobs ? r->n_jobs : 1) * sizeof *w);
    if (!q || !w) {
        free(q);
        free(w);
        return -1;
    }
    for (int i = 0; i < r->n_queues + r->n_jobs; i++) {
        const char *name = i < r->n_queues ? r->queues[i].name : r->jobs[i - r->n_queues].queue;
        int k = 0;
        while (k < nq && strcmp(q[k].name, name)) k++;
        if (k < nq) continue;
        qstat *s = &q[nq++];
        snprintf(s->name, sizeof s->name, "%s", name);
        int n = 0;
        for (int t = 0; t < r->n_jobs; t++) {
            const rd_job *u = &r->jobs[t];
            if (strcmp(u->queue, s->name)) continue;
            s->jobs++;
            s->done += !strcmp(u->state, "done");
            if (!isnan(u->start_s))
                s->gpu_hours += u->gpus * ((isnan(u->end_s) ? r->simulated_s : u->end_s) - u->start_s) / 3600;
            if (!isnan(u->queue_wait_s)) w[n++] = u->queue_wait_s;
        }
        s->started = n;
        s->mean_wait_s = s->p50_wait_s = s->p95_wait_s = s->max_wait_s = NAN;
        if (n) {
            qsort(w, (size_t)n, sizeof *w, cmp_double);
            double sum = 0;
            for (int t = 0; t < n; t++) sum += w[t];
            s->mean_wait_s = sum / n;
            s->p50_wait_s = w[(int)ceil(0.50 * n) - 1];
            s->p95_wait_s = w[(int)ceil(0.95 * n) - 1];
            s->max_wait_s = w[n - 1];
        }
        s->quota_gpus = s->slowdown = NAN;
        for (int t = 0; t < r->n_queues; t++) {
            const rd_queue *u = &r->queues[t];
            if (strcmp(u->name, s->name)) continue;
            s->quota_gpus = u->quota_gpus;
            s->slowdown = u->slowdown;
            if (!isnan(u->gpu_hours)) s->gpu_hours = u->gpu_hours;
            if (!isnan(u->mean_wait_s)) s->mean_wait_s = u->mean_wait_s;
            if (!isnan(u->p95_wait_s)) s->p95_wait_s = u->p95_wait_s;
        }
    }
    free(w);
    *out = q;
    return nq;
}

/* ---- inference services -------------------------------------------------- */

enum { SV_NAME, SV_REQUESTS, SV_REPLICAS, SV_TOKENS, SV_TTFT50, SV_TTFT99, SV_TPOT50, SV_TPOT99, SV_E2E99, SV_SLO,
       SV_GOODPUT, SV_COST, SV_N };      /* SV_COST last: left out when nothing is priced */
static const char *const sv_cols[SV_N + 1] = { "service", "requests", "replicas", "output tokens/s", "TTFT p50",
                                               "TTFT p99", "TPOT p50", "TPOT p99", "end-to-end p99",
                                               "SLO attainment", "SLO goodput", "cost per million tokens", NULL };
static const char sv_numeric[] = "tnnnnnnnnnnn";

/* The number of columns of the services table: the cost column only when
 * some service has a cost per token. */
static int sv_ncols(const rundata *r) {
    for (int i = 0; i < r->n_services; i++)
        if (!isnan(r->services[i].cost_per_million_tokens_usd)) return SV_N;
    return SV_COST;
}

static const char *sv_cell(const rd_service *v, int col, char *b, size_t n) {
    switch (col) {
    case SV_NAME: snprintf(b, n, "%s", v->name); return b;
    case SV_REQUESTS: return fmt_count(v->requests, b, n);
    case SV_REPLICAS: return fmt_count(v->replicas, b, n);
    case SV_TOKENS: return fmt_count(v->output_tokens_per_s, b, n);
    case SV_TTFT50: return fmt_dur(v->ttft_p50_s, b, n);
    case SV_TTFT99: return fmt_dur(v->ttft_p99_s, b, n);
    case SV_TPOT50: return fmt_dur(v->tpot_p50_s, b, n);
    case SV_TPOT99: return fmt_dur(v->tpot_p99_s, b, n);
    case SV_E2E99: return fmt_dur(v->e2e_p99_s, b, n);
    case SV_SLO: return fmt_value(F_PCT, v->slo_attainment, b, n);
    case SV_GOODPUT: return fmt_value(F_RPS, v->goodput_requests_per_s, b, n);
    case SV_COST:
        if (isnan(v->cost_per_million_tokens_usd)) snprintf(b, n, "n/a");
        else snprintf(b, n, "$%.2f", v->cost_per_million_tokens_usd);
        return b;
    }
    b[0] = 0;
    return b;
}

/* ---- HTML ---------------------------------------------------------------- */

/* Text escaped for XHTML (also inside attribute values). */
static void h(FILE *f, const char *z) { fileout_html(f, z); }

static void hf(FILE *f, const char *fmt_, ...) __attribute__((format(printf, 2, 3)));
static void hf(FILE *f, const char *fmt_, ...) {
    char b[2048];
    va_list ap;
    va_start(ap, fmt_);
    vsnprintf(b, sizeof b, fmt_, ap);
    va_end(ap);
    h(f, b);
}

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1f2328;"
    "max-width:1120px;margin:0 auto;padding:24px 20px 60px;line-height:1.45}\n"
    "h1{font-size:1.7em;margin:0 0 4px}h1 small{color:#656d76;font-weight:normal;font-size:0.6em}\n"
    "h2{font-size:1.25em;margin:36px 0 8px;border-bottom:1px solid #d8dee4;padding-bottom:4px}\n"
    "p.answer{font-size:1.3em;margin:12px 0 18px;padding:14px 18px;background:#f0f6ff;"
    "border-left:5px solid #0969da;border-radius:4px}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px;margin:8px 0 6px}\n"
    ".card{border:1px solid #d8dee4;border-radius:6px;padding:10px 12px;background:#fff}\n"
    ".card .label{color:#656d76;font-size:0.85em;text-transform:uppercase;letter-spacing:0.04em}\n"
    ".card .value{font-size:1.6em;font-weight:600;margin:2px 0}\n"
    ".card .note{color:#656d76;font-size:0.8em}\n"
    ".meta,.caption,.note{color:#656d76;font-size:0.9em}\n"
    ".warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:4px;padding:8px 12px}\n"
    "figure{margin:10px 0 18px}figure img{max-width:100%;height:auto;border:1px solid #eaeef2}\n"
    "figcaption{color:#656d76;font-size:0.9em}\n"
    ".pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}\n"
    "table{border-collapse:collapse;margin:8px 0 14px;font-size:0.92em}\n"
    "th,td{border-bottom:1px solid #eaeef2;padding:4px 10px;text-align:left;vertical-align:top}\n"
    "th{background:#f6f8fa;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.n{white-space:nowrap}.scroll{overflow-x:auto}\n"
    "tr:nth-child(even) td{background:#fbfcfd}\n"
    ".up{color:#1a7f37}.down{color:#cf222e}\n"
    "pre{background:#f6f8fa;padding:12px;overflow:auto;font-size:0.85em}\n"
    "details{margin:8px 0}summary{cursor:pointer;color:#0969da}\n";

static void html_head(FILE *f, const char *title) {
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
          "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\" xml:lang=\"en\">\n<head>\n"
          "<meta charset=\"UTF-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
          "<title>", f);
    h(f, title);
    fprintf(f, "</title>\n<style type=\"text/css\">\n%s</style>\n</head>\n<body>\n", css);
}

/* A chart (sized: gnuplot's 960x360) or a drawing at its own size. */
static void html_figure(FILE *f, const chart *c) {
    int sized = strcmp(c->key, "topology") != 0;
    fputs("<figure><img src=\"", f);
    h(f, c->file);
    fputs("\" alt=\"", f);
    h(f, c->title);
    fputs(sized ? "\" width=\"960\" height=\"360\"/><figcaption><b>" : "\"/><figcaption><b>", f);
    h(f, c->title);
    fputs(".</b> ", f);
    h(f, c->caption);
    fputs("</figcaption></figure>\n", f);
}

static void html_cards(FILE *f, const figures *m, const rundata *r) {
    fputs("<div class=\"cards\">\n", f);
    for (int i = 0; i < NM; i++) {
        if (!mdef[i].card || (mdef[i].card == 2 && !r->n_services)) continue;
        char v[64];
        fputs("<div class=\"card\"><div class=\"label\">", f);
        h(f, mdef[i].label);
        fputs("</div><div class=\"value\">", f);
        h(f, fmt_value(mdef[i].f, m->v[i], v, sizeof v));
        fputs("</div><div class=\"note\">", f);
        h(f, m->note[i]);
        fputs("</div></div>\n", f);
    }
    fputs("</div>\n", f);
}

static void html_meta(FILE *f, const rundata *r, const char *db_path) {
    char a[64];
    fputs("<p class=\"meta\">", f);
    char w[64], e[64];
    hf(f, "Run %lld of %s: scenario %s (%s), seed %lld, clustertwin %s; %s simulated in %s of wall time "
          "(%s events); recorded %s.", (long long)r->id, db_path, r->scenario, r->scenario_file, r->seed,
       r->version, fmt_dur(r->simulated_s, a, sizeof a), fmt_dur(r->wall_s, w, sizeof w),
       fmt_count(r->events, e, sizeof e), r->wall_started_at);
    fputs("</p>\n", f);
    if (strcmp(r->status, "complete")) {
        fputs("<p class=\"warn\">", f);
        hf(f, "Run %lld is incomplete: it was interrupted (or is still running) before its results were written. "
              "Only its scenario and the events written so far are stored; the figures below are missing.",
           (long long)r->id);
        fputs("</p>\n", f);
    }
}

/* A table opens in a div that scrolls sideways when it is wider than the
 * page; tend() closes both. */
static void th(FILE *f, const char *const *cols, const char *numeric) {
    fputs("<div class=\"scroll\"><table>\n<tr>", f);
    for (int i = 0; cols[i]; i++) {
        fprintf(f, "<th%s>", numeric[i] == 'n' ? " class=\"n\"" : "");
        h(f, cols[i]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
}

static void td(FILE *f, const char *z, int numeric) {
    fprintf(f, "<td%s>", numeric ? " class=\"n\"" : "");
    h(f, z);
    fputs("</td>", f);
}

static void html_failures_table(FILE *f, const rundata *r) {
    int any = 0;
    for (int i = 0; i < r->n_kinds; i++) any += r->kinds[i].count;
    if (!any) {
        fputs("<p class=\"note\">No component failed in this run.</p>\n", f);
        return;
    }
    static const char *const cols[] = { "cause", "component", "failures", "share", "one every", NULL };
    th(f, cols, "ttnnn");
    int zero = 0;
    for (int i = 0; i < r->n_kinds; i++) {
        const rd_kind *k = &r->kinds[i];
        if (!k->count) {
            zero++;
            continue;
        }
        char b[64];
        fputs("<tr>", f);
        td(f, k->cause, 0);
        td(f, k->component, 0);
        snprintf(b, sizeof b, "%d", k->count);
        td(f, b, 1);
        snprintf(b, sizeof b, "%.1f%%", 100.0 * k->count / any);
        td(f, b, 1);
        td(f, fmt_dur(r->simulated_s / k->count, b, sizeof b), 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    if (zero) fprintf(f, "<p class=\"note\">%d more failure kinds of the scenario did not occur.</p>\n", zero);
}

static void html_training_table(FILE *f, const rundata *r) {
    static const char *const cols[] = { "job", "GPUs", "state", "steps done", "step time", "MFU", "model TFLOP/s/GPU",
                                        "tokens/s/GPU", "ETTR", "interruptions", "lost and redone",
                                        "checkpoints", "memory/GPU", NULL };
    static const char *const cols2[] = { "job", "elapsed", "training kept", "redone", "checkpoint stalls",
                                         "restarting", "waiting for nodes", NULL };
    th(f, cols, "tntnnnnnnnnnn");
    for (int i = 0; i < r->n_jobs; i++) {
        const rd_job *j = &r->jobs[i];
        if (strcmp(j->kind, "training")) continue;
        char b[96], c[64];
        fputs("<tr>", f);
        td(f, j->name, 0);
        snprintf(b, sizeof b, "%d", j->gpus);
        td(f, b, 1);
        td(f, j->state, 0);
        char s1[40], s2[40];
        snprintf(b, sizeof b, "%s of %s", fmt_count(j->steps_done, s1, sizeof s1), fmt_count(j->steps_total, s2, sizeof s2));
        td(f, b, 1);
        td(f, fmt_value(F_SECONDS, j->step_time_s, b, sizeof b), 1);
        td(f, fmt_value(F_PCT, j->mfu, b, sizeof b), 1);
        snprintf(b, sizeof b, "%.0f", j->model_tflops_per_gpu);
        td(f, b, 1);
        snprintf(b, sizeof b, "%.0f", j->tokens_per_s_per_gpu);
        td(f, b, 1);
        td(f, fmt_value(F_PCT, j->ettr, b, sizeof b), 1);
        snprintf(b, sizeof b, "%.0f", j->interruptions);
        td(f, b, 1);
        td(f, fmt_dur(j->lost_work_s, b, sizeof b), 1);
        if (j->checkpoints > 0)
            snprintf(b, sizeof b, "%.0f, every %s", j->checkpoints, fmt_dur(j->checkpoint_interval_s, c, sizeof c));
        else
            snprintf(b, sizeof b, "none");
        td(f, b, 1);
        snprintf(b, sizeof b, "%.1f GB", j->memory_bytes / 1e9);
        td(f, b, 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"caption\">Where each training job's time went, from its first start to its end "
          "(or the end of the run):</p>\n", f);
    th(f, cols2, "tnnnnnn");
    for (int i = 0; i < r->n_jobs; i++) {
        const rd_job *j = &r->jobs[i];
        if (strcmp(j->kind, "training")) continue;
        char b[64];
        double el = j->elapsed_s > 0 ? j->elapsed_s : NAN;
        fputs("<tr>", f);
        td(f, j->name, 0);
        td(f, fmt_dur(j->elapsed_s, b, sizeof b), 1);
        double parts[] = { j->kept_s, j->redone_s, j->checkpoint_stall_s, j->restart_s, j->waiting_s };
        for (int k = 0; k < 5; k++) td(f, fmt_value(F_PCT, parts[k] / el, b, sizeof b), 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

static void html_queue_table(FILE *f, const qstat *q, int nq) {
    static const char *const cols[] = { "queue", "quota", "jobs", "done", "GPU-hours used", "mean wait",
                                        "median wait", "95th percentile wait", "longest wait", "slowdown", NULL };
    th(f, cols, "tnnnnnnnnn");
    for (int i = 0; i < nq; i++) {
        char b[64];
        fputs("<tr>", f);
        td(f, q[i].name, 0);
        if (isnan(q[i].quota_gpus) || q[i].quota_gpus <= 0) snprintf(b, sizeof b, "none");
        else snprintf(b, sizeof b, "%.0f GPUs", q[i].quota_gpus);
        td(f, b, 1);
        snprintf(b, sizeof b, "%d", q[i].jobs);
        td(f, b, 1);
        snprintf(b, sizeof b, "%d", q[i].done);
        td(f, b, 1);
        td(f, fmt_value(F_GPUH, q[i].gpu_hours, b, sizeof b), 1);
        td(f, fmt_dur(q[i].mean_wait_s, b, sizeof b), 1);
        td(f, fmt_dur(q[i].p50_wait_s, b, sizeof b), 1);
        td(f, fmt_dur(q[i].p95_wait_s, b, sizeof b), 1);
        td(f, fmt_dur(q[i].max_wait_s, b, sizeof b), 1);
        if (isnan(q[i].slowdown)) snprintf(b, sizeof b, "n/a");
        else snprintf(b, sizeof b, "%.2f", q[i].slowdown);
        td(f, b, 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"caption\">Slowdown: a job's time from submission to its end over its "
          "running time, averaged over the queue's jobs.</p>\n", f);
}

static void html_services_table(FILE *f, const rundata *r) {
    int nc = sv_ncols(r);
    const char *cols[SV_N + 1];
    for (int k = 0; k < nc; k++) cols[k] = sv_cols[k];
    cols[nc] = NULL;
    fputs("<div class=\"scroll\"><table class=\"services\">\n<tr>", f);
    for (int k = 0; k < nc; k++) {
        fprintf(f, "<th%s>", sv_numeric[k] == 'n' ? " class=\"n\"" : "");
        h(f, cols[k]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int i = 0; i < r->n_services; i++) {
        char b[128];
        fputs("<tr>", f);
        for (int k = 0; k < nc; k++) td(f, sv_cell(&r->services[i], k, b, sizeof b), sv_numeric[k] == 'n');
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"caption\">TTFT: time to the first output token; TPOT: time per output "
          "token after it; end-to-end: from a request's arrival to its last token. SLO attainment: the share of "
          "requests that met the service's latency objectives (TTFT and TPOT); SLO goodput: those requests per second "
          "(the throughput that counts).</p>\n", f);
}

#define JOBS_LISTED 200

static void html_jobs_table(FILE *f, const rundata *r) {
    static const char *const cols[] = { "job", "kind", "queue", "GPUs", "state", "submitted", "started", "ended",
                                        "queue wait", NULL };
    if (r->n_jobs > JOBS_LISTED)
        fprintf(f, "<details><summary>The first %d of %d jobs (all of them: --format csv, jobs.csv)</summary>\n",
                JOBS_LISTED, r->n_jobs);
    else
        fprintf(f, "<details%s><summary>%d jobs</summary>\n", r->n_jobs <= 20 ? " open=\"open\"" : "", r->n_jobs);
    th(f, cols, "tttnttnnn");
    for (int i = 0; i < r->n_jobs && i < JOBS_LISTED; i++) {
        const rd_job *j = &r->jobs[i];
        char b[64];
        fputs("<tr>", f);
        td(f, j->name, 0);
        td(f, j->kind, 0);
        td(f, j->queue, 0);
        snprintf(b, sizeof b, "%d", j->gpus);
        td(f, b, 1);
        td(f, j->state, 0);
        td(f, fmt_dur(j->submit_s, b, sizeof b), 1);
        td(f, fmt_dur(j->start_s, b, sizeof b), 1);
        td(f, fmt_dur(j->end_s, b, sizeof b), 1);
        td(f, fmt_dur(j->queue_wait_s, b, sizeof b), 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n</details>\n", f);
}

/* Draw the run's cluster to DIR/PREFIXtopology.svg from its stored
 * scenario. Returns 1 when drawn; else 0 with why set. */
static int draw_topology(const rundata *r, const char *dir, const char *prefix, char *file, size_t flen, char *why,
                         size_t wlen) {
    scenario *s = NULL;
    char err[1024], path[4096];
    snprintf(file, flen, "%stopology.svg", prefix);
    if (scenario_load_memory(r->scenario_xml, strlen(r->scenario_xml), r->scenario_file, &s, err, sizeof err) != 0) {
        snprintf(why, wlen, "The topology is not drawn: the stored scenario does not load here (%s).", err);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int ok = topo_write(s, path, err, sizeof err) == 0;
    if (!ok) snprintf(why, wlen, "The topology is not drawn: %s.", err);
    scenario_free(s);
    return ok;
}

static void html_scenario(FILE *f, const rundata *r) {
    fputs("<details><summary>", f);
    hf(f, "The scenario (%s, as it was when run %lld was recorded)", r->scenario_file, (long long)r->id);
    fputs("</summary>\n<pre>", f);
    h(f, r->scenario_xml);
    fputs("</pre>\n</details>\n", f);
}

/* The report of one run. */
static void h2(FILE *f, const char *id, const char *title) {
    fprintf(f, "<h2 id=\"%s\">", id);
    h(f, title);
    fputs("</h2>\n", f);
}

static int cmp_abs(const void *a, const void *b) {
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

/* Microbenchmarks measured on hardware: where, the chart, and a table of
 * predicted vs measured with the error per case (nothing when the run
 * measured none). */
static void html_microbench(FILE *f, sqlite3 *db, const rundata *r, const charts *ch) {
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT op, kind, precision, ranks, size_bytes, m, n, k, files, predicted_s, "
                               "measured_s, measured_min_s, measured_max_s, error_pct, note, reps FROM microbenchmarks "
                               "WHERE run_id = ? ORDER BY idx", -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return;
    }
    sqlite3_bind_int64(q, 1, r->id);
    int rows = 0, measured = 0, ne = 0;
    double err[4096];
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (!rows++) {
            h2(f, "microbenchmarks", "Predicted vs measured");
            sqlite3_stmt *hq = NULL;
            if (sqlite3_prepare_v2(db, "SELECT backend, host, cpu, devices, libraries, ranks, profile, profile_source "
                                       "FROM hardware WHERE run_id = ?", -1, &hq, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(hq, 1, r->id);
                if (sqlite3_step(hq) == SQLITE_ROW) {
                    const char *z[8];
                    for (int i = 0; i < 8; i++) z[i] = (const char *)sqlite3_column_text(hq, i);
                    fputs("<p>", f);
                    if (z[0])
                        hf(f, "Measured with the %s backend on %s (%s; %s; %s; %d process%s). ", z[0], z[1] ? z[1] : "?",
                           z[2] ? z[2] : "", z[3] ? z[3] : "", z[4] ? z[4] : "", sqlite3_column_int(hq, 5),
                           sqlite3_column_int(hq, 5) == 1 ? "" : "es");
                    if (z[6]) hf(f, "Predicted by the host profile %s (%s).", z[6], z[7] ? z[7] : "");
                    fputs("</p>\n", f);
                }
            }
            sqlite3_finalize(hq);
            const chart *c = charts_find(ch, "micro");
            if (c) html_figure(f, c);
            fputs("<table>\n", f);
            static const char *const cols[] = { "case", "predicted", "measured (median)", "fastest .. slowest",
                                                "reps", "error", "note", NULL };
            th(f, cols, "tnnnnnt");
        }
        const char *op = (const char *)sqlite3_column_text(q, 0), *kind = (const char *)sqlite3_column_text(q, 1);
        const char *prec = (const char *)sqlite3_column_text(q, 2), *note = (const char *)sqlite3_column_text(q, 14);
        char label[128], b[4][64];
        if (!strcmp(op, "gemm"))
            snprintf(label, sizeof label, "gemm %s %dx%dx%d", prec ? prec : "", sqlite3_column_int(q, 5),
                     sqlite3_column_int(q, 6), sqlite3_column_int(q, 7));
        else if (!strcmp(op, "copy"))
            snprintf(label, sizeof label, "copy %s %s", kind ? kind : "",
                     units_format(sqlite3_column_double(q, 4), UNIT_SIZE, b[0], sizeof b[0]));
        else if (!strcmp(op, "storage-write"))
            snprintf(label, sizeof label, "storage-write %s in %d file(s)",
                     units_format(sqlite3_column_double(q, 4), UNIT_SIZE, b[0], sizeof b[0]), sqlite3_column_int(q, 8));
        else
            snprintf(label, sizeof label, "%s %d ranks %s", op, sqlite3_column_int(q, 3),
                     units_format(sqlite3_column_double(q, 4), UNIT_SIZE, b[0], sizeof b[0]));
        fputs("<tr>", f);
        td(f, label, 0);
        int has_p = sqlite3_column_type(q, 9) != SQLITE_NULL, has_m = sqlite3_column_type(q, 10) != SQLITE_NULL;
        snprintf(b[0], sizeof b[0], "%.4g s", sqlite3_column_double(q, 9));
        td(f, has_p ? b[0] : "-", 1);
        snprintf(b[1], sizeof b[1], "%.4g s", sqlite3_column_double(q, 10));
        td(f, has_m ? b[1] : "-", 1);
        snprintf(b[2], sizeof b[2], "%.3g .. %.3g s", sqlite3_column_double(q, 11), sqlite3_column_double(q, 12));
        td(f, has_m ? b[2] : "-", 1);
        snprintf(b[3], sizeof b[3], "%d", sqlite3_column_int(q, 15));
        td(f, has_m ? b[3] : "-", 1);
        char e[32] = "-";
        if (sqlite3_column_type(q, 13) != SQLITE_NULL) {
            double x = sqlite3_column_double(q, 13);
            snprintf(e, sizeof e, "%+.1f%%", x);
            if (ne < (int)(sizeof err / sizeof *err)) err[ne++] = x;
        }
        td(f, e, 1);
        td(f, note ? note : "", 0);
        fputs("</tr>\n", f);
        measured += has_m;
    }
    sqlite3_finalize(q);
    if (!rows) return;
    fputs("</table>\n<p>", f);
    if (ne > 0) {
        qsort(err, (size_t)ne, sizeof *err, cmp_abs);
        double med = ne % 2 ? fabs(err[ne / 2]) : (fabs(err[ne / 2 - 1]) + fabs(err[ne / 2])) / 2;
        hf(f, "%d of %d cases predicted and measured: median |error| %.1f%%, max |error| %.1f%% (error = "
              "(predicted - measured) / measured).", ne, rows, med, fabs(err[ne - 1]));
    } else {
        hf(f, "%d cases, %d measured; none both predicted and measured.", rows, measured);
    }
    fputs("</p>\n", f);
}

static void html_run(FILE *f, sqlite3 *db, const rundata *r, const charts *ch, const char *topo, const char *topo_why,
                     const char *db_path) {
    figures m;
    char sentence[1024];
    figures_of(r, &m);
    answer(db, r, &m, sentence, sizeof sentence);
    char title[256];
    snprintf(title, sizeof title, "%s: clustertwin report, run %lld", r->scenario, (long long)r->id);
    html_head(f, title);
    fputs("<h1>", f);
    h(f, r->scenario);
    fprintf(f, " <small>run %lld, seed %lld</small></h1>\n<p class=\"answer\">", (long long)r->id, r->seed);
    h(f, sentence);
    fputs("</p>\n", f);
    html_cards(f, &m, r);
    html_meta(f, r, db_path);
    if (ch->note[0]) {
        fputs("<p class=\"warn\">", f);
        h(f, ch->note);
        fputs("</p>\n", f);
    }

    const chart *c;
    h2(f, "gpus", "GPUs over time");
    if ((c = charts_find(ch, "util"))) html_figure(f, c);
    char b[6][64];
    fputs("<p>", f);
    hf(f, "GPU-hours by state: training %s, stalled for checkpoints %s, restarting %s, batch jobs %s, serving %s, "
          "idle %s.",
       fmt_value(F_GPUH, r->hours_training, b[0], sizeof b[0]), fmt_value(F_GPUH, r->hours_checkpoint, b[1], sizeof b[1]),
       fmt_value(F_GPUH, r->hours_restarting, b[2], sizeof b[2]), fmt_value(F_GPUH, r->hours_batch, b[3], sizeof b[3]),
       fmt_value(F_GPUH, r->hours_serving, b[5], sizeof b[5]), fmt_value(F_GPUH, r->hours_idle, b[4], sizeof b[4]));
    fputs("</p>\n", f);
    if ((c = charts_find(ch, "cost"))) {
        h2(f, "cost", "Cost");
        html_figure(f, c);
    }
    h2(f, "failures", "Failures and recovery");
    if ((c = charts_find(ch, "failures"))) html_figure(f, c);
    html_failures_table(f, r);
    if (rundata_main_job(r)) {
        h2(f, "training", "Training");
        if ((c = charts_find(ch, "progress"))) html_figure(f, c);
        if ((c = charts_find(ch, "steps"))) html_figure(f, c);
        html_training_table(f, r);
    }
    qstat *q = NULL;
    int nq = queue_stats(r, &q);
    if (nq > 0) {
        h2(f, "queues", "Queues");
        if ((c = charts_find(ch, "waits"))) html_figure(f, c);
        html_queue_table(f, q, nq);
    }
    free(q);
    if (r->n_services) {
        h2(f, "services", "Inference services");
        if ((c = charts_find(ch, "latency"))) html_figure(f, c);
        html_services_table(f, r);
    }
    html_microbench(f, db, r, ch);
    if (r->n_jobs) {
        h2(f, "jobs", "Jobs");
        html_jobs_table(f, r);
    }
    h2(f, "cluster", "Cluster");
    fputs("<p>", f);
    hf(f, "%.0f nodes, %.0f GPUs; %.0f nodes drained as lemons.", r->nodes, r->gpus, r->nodes_drained);
    fputs("</p>\n", f);
    if (topo) {
        chart t = { "topology", "", "Cluster topology", "Switches, node groups, NICs and link speeds, storage and "
                                                        "spares, drawn from the scenario with Graphviz." };
        snprintf(t.file, sizeof t.file, "%s", topo);
        html_figure(f, &t);
    } else {
        fputs("<p class=\"note\">", f);
        h(f, topo_why);
        fputs("</p>\n", f);
    }
    html_scenario(f, r);
    fputs("<p class=\"meta\">Written by <code>clustertwin report</code>. The charts' data and gnuplot script are "
          "in this directory; the database holds every event and series point (see the README's "
          "\"Results database\").</p>\n</body>\n</html>\n", f);
}

/* "+1.2 days (+3.4%)" */
static void diff_text(fmt f_, double a, double b, char *out, size_t n, int *sign) {
    char x[64];
    *sign = 0;
    if (isnan(a) || isnan(b)) {
        snprintf(out, n, "n/a");
        return;
    }
    double d = b - a;
    *sign = d > 0 ? 1 : d < 0 ? -1 : 0;
    if (f_ == F_PCT) snprintf(x, sizeof x, "%+.1f pp", 100 * d);
    else {
        fmt_value(f_, fabs(d), x + 1, sizeof x - 1);
        x[0] = d < 0 ? '-' : '+';
    }
    if (a != 0) snprintf(out, n, "%s (%+.1f%%)", x, 100 * d / fabs(a));
    else snprintf(out, n, "%s", x);
}

static void html_compare(FILE *f, sqlite3 *db, const rundata *a, const rundata *b, const charts *ca,
                         const charts *cb, const char *ta, const char *tb, const char *db_path) {
    figures ma, mb;
    char sa[1024], sb[1024], title[256];
    figures_of(a, &ma);
    figures_of(b, &mb);
    answer(db, a, &ma, sa, sizeof sa);
    answer(db, b, &mb, sb, sizeof sb);
    snprintf(title, sizeof title, "%s run %lld vs %s run %lld: clustertwin report", a->scenario, (long long)a->id,
             b->scenario, (long long)b->id);
    html_head(f, title);
    fputs("<h1>", f);
    hf(f, "Run %lld vs run %lld", (long long)a->id, (long long)b->id);
    fputs(" <small>", f);
    hf(f, "%s (seed %lld) and %s (seed %lld)", a->scenario, a->seed, b->scenario, b->seed);
    fputs("</small></h1>\n", f);
    fprintf(f, "<p class=\"answer\"><b>A (run %lld):</b> ", (long long)a->id);
    h(f, sa);
    fprintf(f, "<br/><b>B (run %lld):</b> ", (long long)b->id);
    h(f, sb);
    fputs("</p>\n", f);
    html_meta(f, a, db_path);
    html_meta(f, b, db_path);
    for (int k = 0; k < 2; k++) {
        const charts *c = k ? cb : ca;
        if (c->note[0]) {
            fputs("<p class=\"warn\">", f);
            h(f, c->note);
            fputs("</p>\n", f);
        }
    }
    h2(f, "headline", "Headline");
    static const char *const cols[] = { "figure", "A", "B", "B - A", NULL };
    th(f, cols, "tnnn");
    for (int i = 0; i < NM; i++) {
        char x[64], y[64], d[96];
        int sign;
        diff_text(mdef[i].f, ma.v[i], mb.v[i], d, sizeof d, &sign);
        fputs("<tr>", f);
        td(f, mdef[i].label, 0);
        td(f, fmt_value(mdef[i].f, ma.v[i], x, sizeof x), 1);
        td(f, fmt_value(mdef[i].f, mb.v[i], y, sizeof y), 1);
        td(f, d, 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);

    /* Training jobs present in both, by name. */
    int header = 0;
    for (int i = 0; i < a->n_jobs; i++) {
        const rd_job *ja = &a->jobs[i], *jb = NULL;
        if (strcmp(ja->kind, "training")) continue;
        for (int k = 0; k < b->n_jobs && !jb; k++)
            if (!strcmp(b->jobs[k].name, ja->name)) jb = &b->jobs[k];
        if (!jb) continue;
        if (!header++) {
            h2(f, "training", "Training jobs in both runs");
            static const char *const c2[] = { "job", "figure", "A", "B", "B - A", NULL };
            th(f, c2, "ttnnn");
        }
        struct { const char *label; fmt f_; double x, y; } rows[] = {
            { "finished at", F_DUR, ja->end_s, jb->end_s },
            { "step time", F_SECONDS, ja->step_time_s, jb->step_time_s },
            { "MFU", F_PCT, ja->mfu, jb->mfu },
            { "ETTR", F_PCT, ja->ettr, jb->ettr },
            { "interruptions", F_COUNT, ja->interruptions, jb->interruptions },
            { "lost and redone", F_DUR, ja->lost_work_s, jb->lost_work_s },
            { "checkpoint stalls", F_DUR, ja->checkpoint_stall_s, jb->checkpoint_stall_s },
            { "restarting", F_DUR, ja->restart_s, jb->restart_s },
            { "waiting for nodes", F_DUR, ja->waiting_s, jb->waiting_s },
        };
        for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
            char x[64], y[64], d[96];
            int sign;
            diff_text(rows[r].f_, rows[r].x, rows[r].y, d, sizeof d, &sign);
            fputs("<tr>", f);
            td(f, r ? "" : ja->name, 0);
            td(f, rows[r].label, 0);
            td(f, fmt_value(rows[r].f_, rows[r].x, x, sizeof x), 1);
            td(f, fmt_value(rows[r].f_, rows[r].y, y, sizeof y), 1);
            td(f, d, 1);
            fputs("</tr>\n", f);
        }
    }
    if (header) fputs("</table></div>\n", f);

    /* Failures by cause. */
    h2(f, "failures", "Failures by cause");
    static const char *const c3[] = { "cause", "component", "A", "B", "B - A", NULL };
    th(f, c3, "ttnnn");
    for (int pass = 0; pass < 2; pass++) {
        const rundata *r = pass ? b : a, *o = pass ? a : b;
        for (int i = 0; i < r->n_kinds; i++) {
            const rd_kind *k = &r->kinds[i];
            const rd_kind *ko = NULL;
            for (int t = 0; t < o->n_kinds && !ko; t++)
                if (!strcmp(o->kinds[t].cause, k->cause) && !strcmp(o->kinds[t].component, k->component)) ko = &o->kinds[t];
            if (pass && ko) continue;                /* listed in the first pass */
            double x = pass ? (ko ? ko->count : 0) : k->count, y = pass ? k->count : (ko ? ko->count : 0);
            if (x == 0 && y == 0) continue;
            char xs[32], ys[32], d[96];
            int sign;
            diff_text(F_COUNT, x, y, d, sizeof d, &sign);
            fputs("<tr>", f);
            td(f, k->cause, 0);
            td(f, k->component, 0);
            td(f, fmt_value(F_COUNT, x, xs, sizeof xs), 1);
            td(f, fmt_value(F_COUNT, y, ys, sizeof ys), 1);
            td(f, d, 1);
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n", f);

    /* Charts side by side. */
    static const char *const keys[] = { "util", "cost", "failures", "progress", "steps", "waits", "latency" };
    h2(f, "charts", "Side by side");
    fputs("<p class=\"caption\">A on the left, B on the right.</p>\n", f);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const chart *x = charts_find(ca, keys[i]), *y = charts_find(cb, keys[i]);
        if (!x && !y) continue;
        fputs("<div class=\"pair\">\n", f);
        for (int k = 0; k < 2; k++) {
            const chart *c = k ? y : x;
            fputs("<div>", f);
            if (c) html_figure(f, c);
            else fputs("<p class=\"note\">(not drawn for this run)</p>", f);
            fputs("</div>\n", f);
        }
        fputs("</div>\n", f);
    }
    if (ta || tb) {
        fputs("<div class=\"pair\">\n", f);
        for (int k = 0; k < 2; k++) {
            const char *t = k ? tb : ta;
            fputs("<div>", f);
            if (t) {
                chart c = { "topology", "", "Cluster topology", "" };
                snprintf(c.caption, sizeof c.caption, "Run %lld.", (long long)(k ? b->id : a->id));
                snprintf(c.file, sizeof c.file, "%s", t);
                html_figure(f, &c);
            }
            fputs("</div>\n", f);
        }
        fputs("</div>\n", f);
    }
    html_scenario(f, a);
    html_scenario(f, b);
    fputs("</body>\n</html>\n", f);
}

/* ---- Markdown ------------------------------------------------------------ */

/* One table cell: every text written to Markdown goes through fileout_md
 * (no raw HTML, no Markdown markup, no | that ends the cell). */
static void md_cell(FILE *f, const char *z) {
    fputs(" ", f);
    fileout_md(f, z);
    fputs(" |", f);
}

static void md_header(FILE *f, const char *const *cols, const char *numeric) {
    fputs("|", f);
    for (int i = 0; cols[i]; i++) md_cell(f, cols[i]);
    fputs("\n|", f);
    for (int i = 0; cols[i]; i++) fputs(numeric[i] == 'n' ? " ---: |" : " --- |", f);
    fputs("\n", f);
}

static void md_run(FILE *f, sqlite3 *db, const rundata *r) {
    figures m;
    char sentence[1024], b[96];
    figures_of(r, &m);
    answer(db, r, &m, sentence, sizeof sentence);
    fputs("# ", f);
    fileout_md(f, r->scenario);
    fprintf(f, ", run %lld\n\n**", (long long)r->id);
    fileout_md(f, sentence);
    fputs("**\n\nScenario ", f);
    fileout_md(f, r->scenario);
    fputs(" (", f);
    fileout_md(f, r->scenario_file);
    fprintf(f, "), seed %lld, clustertwin ", r->seed);
    fileout_md(f, r->version);
    fputs(", status ", f);
    fileout_md(f, r->status);
    fputs("; recorded ", f);
    fileout_md(f, r->wall_started_at);
    fputs(".\n\n", f);
    static const char *const c1[] = { "figure", "value", "note", NULL };
    md_header(f, c1, "tnt");
    for (int i = 0; i < NM; i++) {
        fputs("|", f);
        md_cell(f, mdef[i].label);
        md_cell(f, fmt_value(mdef[i].f, m.v[i], b, sizeof b));
        md_cell(f, m.note[i]);
        fputs("\n", f);
    }
    fputs("\n## Failures by cause\n\n", f);
    static const char *const c2[] = { "cause", "component", "failures", NULL };
    md_header(f, c2, "ttn");
    for (int i = 0; i < r->n_kinds; i++) {
        if (!r->kinds[i].count) continue;
        fputs("|", f);
        md_cell(f, r->kinds[i].cause);
        md_cell(f, r->kinds[i].component);
        snprintf(b, sizeof b, "%d", r->kinds[i].count);
        md_cell(f, b);
        fputs("\n", f);
    }
    if (rundata_main_job(r)) {
        fputs("\n## Training jobs\n\n", f);
        static const char *const c3[] = { "job", "GPUs", "state", "steps done", "step time", "MFU", "ETTR",
                                          "interruptions", "lost and redone", "ended", NULL };
        md_header(f, c3, "tntnnnnnnn");
        for (int i = 0; i < r->n_jobs; i++) {
            const rd_job *j = &r->jobs[i];
            if (strcmp(j->kind, "training")) continue;
            fputs("|", f);
            md_cell(f, j->name);
            snprintf(b, sizeof b, "%d", j->gpus);
            md_cell(f, b);
            md_cell(f, j->state);
            snprintf(b, sizeof b, "%.0f / %.0f", j->steps_done, j->steps_total);
            md_cell(f, b);
            md_cell(f, fmt_value(F_SECONDS, j->step_time_s, b, sizeof b));
            md_cell(f, fmt_value(F_PCT, j->mfu, b, sizeof b));
            md_cell(f, fmt_value(F_PCT, j->ettr, b, sizeof b));
            snprintf(b, sizeof b, "%.0f", j->interruptions);
            md_cell(f, b);
            md_cell(f, fmt_dur(j->lost_work_s, b, sizeof b));
            md_cell(f, fmt_dur(j->end_s, b, sizeof b));
            fputs("\n", f);
        }
    }
    qstat *q = NULL;
    int nq = queue_stats(r, &q);
    if (nq > 0) {
        fputs("\n## Queues\n\n", f);
        static const char *const c4[] = { "queue", "jobs", "done", "mean wait", "median wait", "95th percentile wait",
                                          "longest wait", NULL };
        md_header(f, c4, "tnnnnnn");
        for (int i = 0; i < nq; i++) {
            fputs("|", f);
            md_cell(f, q[i].name);
            snprintf(b, sizeof b, "%d", q[i].jobs);
            md_cell(f, b);
            snprintf(b, sizeof b, "%d", q[i].done);
            md_cell(f, b);
            md_cell(f, fmt_dur(q[i].mean_wait_s, b, sizeof b));
            md_cell(f, fmt_dur(q[i].p50_wait_s, b, sizeof b));
            md_cell(f, fmt_dur(q[i].p95_wait_s, b, sizeof b));
            md_cell(f, fmt_dur(q[i].max_wait_s, b, sizeof b));
            fputs("\n", f);
        }
    }
    free(q);
    if (r->n_services) {
        fputs("\n## Inference services\n\n", f);
        int nc = sv_ncols(r);
        fputs("|", f);
        for (int k = 0; k < nc; k++) md_cell(f, sv_cols[k]);
        fputs("\n|", f);
        for (int k = 0; k < nc; k++) fputs(sv_numeric[k] == 'n' ? " ---: |" : " --- |", f);
        fputs("\n", f);
        for (int i = 0; i < r->n_services; i++) {
            fputs("|", f);
            for (int k = 0; k < nc; k++) md_cell(f, sv_cell(&r->services[i], k, b, sizeof b));
            fputs("\n", f);
        }
    }
    fputs("\n", f);
}

static void md_compare(FILE *f, sqlite3 *db, const rundata *a, const rundata *b) {
    figures ma, mb;
    figures_of(a, &ma);
    figures_of(b, &mb);
    fprintf(f, "# Run %lld vs run %lld\n\n", (long long)a->id, (long long)b->id);
    static const char *const c1[] = { "figure", "A", "B", "B - A", NULL };
    md_header(f, c1, "tnnn");
    for (int i = 0; i < NM; i++) {
        char x[64], y[64], d[96];
        int sign;
        diff_text(mdef[i].f, ma.v[i], mb.v[i], d, sizeof d, &sign);
        fputs("|", f);
        md_cell(f, mdef[i].label);
        md_cell(f, fmt_value(mdef[i].f, ma.v[i], x, sizeof x));
        md_cell(f, fmt_value(mdef[i].f, mb.v[i], y, sizeof y));
        md_cell(f, d);
        fputs("\n", f);
    }
    fputs("\n---\n\n", f);
    md_run(f, db, a);
    fputs("---\n\n", f);
    md_run(f, db, b);
}

/* ---- CSV ----------------------------------------------------------------- */

/* The rows of sql (?1, ?2 = the run ids) as DIR/name with a header. */
static int csv_query(sqlite3 *db, const char *dir, const char *name, const char *sql, int64_t a, int64_t b,
                     char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "cannot read the database: %s", sqlite3_errmsg(db));
        return 1;
    }
    sqlite3_bind_int64(q, 1, a);
    sqlite3_bind_int64(q, 2, b);
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) {
        sqlite3_finalize(q);
        return 1;
    }
    FILE *f = o.f;
    int n = sqlite3_column_count(q), rc;
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        fileout_csv(f, sqlite3_column_name(q, i));
    }
    fputs("\n", f);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++) {
            if (i) fputc(',', f);
            const unsigned char *z = sqlite3_column_text(q, i);
            if (!z) continue;
            int type = sqlite3_column_type(q, i);
            if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) fputs((const char *)z, f);   /* a number, not text */
            else fileout_csv(f, (const char *)z);
        }
        fputs("\n", f);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        fileout_abort(&o);
        errmsg_set(err, errlen, "cannot read the database: %s", sqlite3_errmsg(db));
        return 1;
    }
    return fileout_close(&o, err, errlen);
}

static int write_csv(sqlite3 *db, const char *dir, const rundata *a, const rundata *b, char *err, size_t errlen) {
    int64_t ia = a->id, ib = b ? b->id : a->id;
    /* runs.csv: every column but the two large texts. */
    char cols[8192] = "";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('runs') WHERE name NOT IN "
                               "('scenario_xml', 'results_json')", -1, &q, NULL) == SQLITE_OK)
        while (sqlite3_step(q) == SQLITE_ROW) {
            size_t n = strlen(cols);
            snprintf(cols + n, sizeof cols - n, "%s\"%s\"", n ? ", " : "", (const char *)sqlite3_column_text(q, 0));
        }
    sqlite3_finalize(q);
    char sql[9000];
    snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE id IN (?1, ?2) ORDER BY id = ?2, id", cols);
    struct { const char *name, *sql; } files[] = {
        { "runs.csv", sql },
        { "jobs.csv", "SELECT * FROM jobs WHERE run_id IN (?1, ?2) ORDER BY run_id = ?2, idx" },
        { "failures.csv", "SELECT * FROM failure_kinds WHERE run_id IN (?1, ?2) ORDER BY run_id = ?2, idx" },
        { "events.csv", "SELECT * FROM events WHERE run_id IN (?1, ?2) ORDER BY run_id = ?2, seq" },
        { "series.csv", "SELECT s.run_id, s.entity, s.name, p.k, p.t_s, p.dt_s, p.mean, p.min, p.max FROM series s "
                        "JOIN points p ON p.series_id = s.id WHERE s.run_id IN (?1, ?2) ORDER BY s.run_id = ?2, s.id, p.k" },
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (csv_query(db, dir, files[i].name, files[i].sql, ia, ib, err, errlen)) return 1;

    /* summary.csv and queues.csv from the report's own figures. */
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return 1;
    FILE *f = o.f;
    fputs("run_id,figure,value,label,note\n", f);
    for (int k = 0; k < (b ? 2 : 1); k++) {
        const rundata *r = k ? b : a;
        figures m;
        figures_of(r, &m);
        for (int i = 0; i < NM; i++) {
            fprintf(f, "%lld,%s,", (long long)r->id, mdef[i].key);
            if (!isnan(m.v[i])) fprintf(f, "%.10g", m.v[i]);
            fputc(',', f);
            fileout_csv(f, mdef[i].label);
            fputc(',', f);
            fileout_csv(f, m.note[i]);
            fputc('\n', f);
        }
        char sentence[1024];
        answer(db, r, &m, sentence, sizeof sentence);
        fprintf(f, "%lld,answer,,", (long long)r->id);
        fileout_csv(f, "Answer");
        fputc(',', f);
        fileout_csv(f, sentence);
        fputc('\n', f);
    }
    if (fileout_close(&o, err, errlen) != 0) return 1;

    snprintf(path, sizeof path, "%s/queues.csv", dir);
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return 1;
    f = o.f;
    fputs("run_id,queue,quota_gpus,jobs,done,started,gpu_hours,mean_wait_s,p50_wait_s,p95_wait_s,max_wait_s,slowdown\n", f);
    for (int k = 0; k < (b ? 2 : 1); k++) {
        const rundata *r = k ? b : a;
        qstat *qs = NULL;
        int nq = queue_stats(r, &qs);
        for (int i = 0; i < nq; i++) {
            fprintf(f, "%lld,", (long long)r->id);
            fileout_csv(f, qs[i].name);
            if (isnan(qs[i].quota_gpus)) fputc(',', f);
            else fprintf(f, ",%.0f", qs[i].quota_gpus);
            fprintf(f, ",%d,%d,%d,%.10g", qs[i].jobs, qs[i].done, qs[i].started, qs[i].gpu_hours);
            double w[] = { qs[i].mean_wait_s, qs[i].p50_wait_s, qs[i].p95_wait_s, qs[i].max_wait_s, qs[i].slowdown };
            for (int t = 0; t < 5; t++)
                if (isnan(w[t])) fputc(',', f);
                else fprintf(f, ",%.10g", w[t]);
            fputc('\n', f);
        }
        free(qs);
    }
    if (fileout_close(&o, err, errlen) != 0) return 1;

    if (b) {
        snprintf(path, sizeof path, "%s/compare.csv", dir);
        if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return 1;
        f = o.f;
        figures ma, mb;
        figures_of(a, &ma);
        figures_of(b, &mb);
        fprintf(f, "figure,label,run_%lld,run_%lld,diff,diff_pct\n", (long long)a->id, (long long)b->id);
        for (int i = 0; i < NM; i++) {
            fprintf(f, "%s,", mdef[i].key);
            fileout_csv(f, mdef[i].label);
            double x = ma.v[i], y = mb.v[i];
            double v[] = { x, y, y - x, x != 0 ? 100 * (y - x) / fabs(x) : NAN };
            for (int t = 0; t < 4; t++)
                if (isnan(v[t])) fputc(',', f);
                else fprintf(f, ",%.10g", v[t]);
            fputc('\n', f);
        }
        if (fileout_close(&o, err, errlen) != 0) return 1;
    }
    return 0;
}

/* ---- the command --------------------------------------------------------- */

int report_write(const report_opts *o, char *main_file, size_t mainlen, char *notes, size_t noteslen, char *err,
                 size_t errlen) {
    if (notes && noteslen) notes[0] = 0;
    store *st = NULL;
    int rc = store_open(o->db_path, STORE_READ, &st, err, errlen);
    if (rc != STORE_OK) return rc;
    int64_t sweep = 0;
    if (!o->run_id && !o->compare_id && sweepdb_latest(st, &sweep)) {
        rc = sweepreport_write(st, sweep, o, main_file, mainlen, notes, noteslen, err, errlen);
        store_close(st);
        return rc;
    }
    sqlite3 *db = store_db(st);
    rundata *a = NULL, *b = NULL;
    char why[512];
    if ((rc = rundata_load(db, o->run_id, &a, why, sizeof why)) != 0) {
        errmsg_set(err, errlen, "%s: %s", o->db_path, why);
        goto out;
    }
    if (o->compare_id > 0 && (rc = rundata_load(db, o->compare_id, &b, why, sizeof why)) != 0) {
        errmsg_set(err, errlen, "%s: %s", o->db_path, why);
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        const rundata *r = k ? b : a;
        if (r && strcmp(r->status, "complete"))
            addnote(notes, noteslen, "run %lld is incomplete (interrupted or still running): its figures are missing",
                    (long long)r->id);
    }
    if (fileout_mkdirs(o->out_dir) != 0) {
        errmsg_set(err, errlen, "cannot create %s: %s", o->out_dir, strerror(errno));
        rc = 1;
        goto out;
    }
    char path[4096];
    fileout fo;
    if (o->format == REPORT_CSV) {
        rc = write_csv(db, o->out_dir, a, b, err, errlen);
        snprintf(main_file, mainlen, "%s", o->out_dir);
        goto out;
    }
    if (o->format == REPORT_MD) {
        snprintf(path, sizeof path, "%s/report.md", o->out_dir);
        if ((rc = fileout_open(&fo, path, 0, 0666, err, errlen)) != 0) goto out;
        if (b) md_compare(fo.f, db, a, b);
        else md_run(fo.f, db, a);
        rc = fileout_close(&fo, err, errlen);
        snprintf(main_file, mainlen, "%s", path);
        goto out;
    }
    charts ca, cb;
    char ta[80], tb[80], whya[1200] = "", whyb[1200] = "";
    charts_draw(db, a, o->out_dir, b ? "a-" : "", &ca);
    int has_ta = draw_topology(a, o->out_dir, b ? "a-" : "", ta, sizeof ta, whya, sizeof whya), has_tb = 0;
    if (ca.note[0]) addnote(notes, noteslen, "%s", ca.note);
    if (b) {
        charts_draw(db, b, o->out_dir, "b-", &cb);
        has_tb = draw_topology(b, o->out_dir, "b-", tb, sizeof tb, whyb, sizeof whyb);
        if (cb.note[0] && strcmp(cb.note, ca.note)) addnote(notes, noteslen, "%s", cb.note);
    }
    if (!has_ta) addnote(notes, noteslen, "%s", whya);
    snprintf(path, sizeof path, "%s/index.html", o->out_dir);
    if ((rc = fileout_open(&fo, path, 0, 0666, err, errlen)) != 0) goto out;
    if (b) html_compare(fo.f, db, a, b, &ca, &cb, has_ta ? ta : NULL, has_tb ? tb : NULL, o->db_path);
    else html_run(fo.f, db, a, &ca, has_ta ? ta : NULL, whya, o->db_path);
    rc = fileout_close(&fo, err, errlen);
    snprintf(main_file, mainlen, "%s", path);
out:
    rundata_free(a);
    rundata_free(b);
    store_close(st);
    return rc;
}

int report_list(const char *path, FILE *f, char *err, size_t errlen) {
    store *st = NULL;
    int rc = store_open(path, STORE_READ, &st, err, errlen);
    if (rc != STORE_OK) return rc;
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = NULL;
    rc = sqlite3_prepare_v2(db, "SELECT id, status, scenario, seed, wall_started_at, simulated_s, cost_usd FROM runs "
                                "ORDER BY id", -1, &q, NULL);
    if (rc == SQLITE_OK) {
        fprintf(f, "%6s  %-10s  %-24s  %6s  %-20s  %12s  %10s\n", "run", "status", "scenario", "seed", "recorded",
                "simulated", "cost");
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            char a[64], b[64];
            double sim = sqlite3_column_type(q, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 5);
            double cost = sqlite3_column_type(q, 6) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 6);
            fprintf(f, "%6lld  %-10s  %-24s  %6lld  %-20s  %12s  %10s\n", (long long)sqlite3_column_int64(q, 0),
                    sqlite3_column_text(q, 1), sqlite3_column_text(q, 2), (long long)sqlite3_column_int64(q, 3),
                    sqlite3_column_text(q, 4), fmt_dur(sim, a, sizeof a), fmt_value(F_USD, cost, b, sizeof b));
        }
    }
    sqlite3_finalize(q);
    int status = rc == SQLITE_DONE ? 0 : 1;
    if (status) errmsg_set(err, errlen, "%s: cannot read: %s", path, sqlite3_errmsg(db));
    store_close(st);
    return status;
}
