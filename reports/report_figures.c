/*
 * report_figures: what a run's report says, before any of it is written:
 * the headline figures with a note each, the answer sentence, the
 * per-queue and per-service figures, and how each number reads (through
 * base/numfmt.h: 18.9 d, $1.39M, 441 MWh). A figure that is not known (no
 * energy model, a job that did not finish) reads "n/a" with the reason in
 * its note. The CSV files print these figures in full precision instead.
 */
#include "reports/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"

/* ---- formatting ---------------------------------------------------------- */

const char *fmt_value(fmt f, double v, char *b, size_t n) {
    char x[64];
    if (isnan(v)) return snprintf(b, n, "n/a"), b;
    switch (f) {
    case F_DUR:
    case F_SECONDS: return nf_duration(v, b, n);
    case F_USD: return nf_usd(v, b, n);
    case F_GPUH: snprintf(b, n, "%s GPU-h", nf_count(v, x, sizeof x)); return b;
    case F_KWH: return nf_energy_kwh(v, b, n);
    case F_KG: return nf_mass_kg(v, b, n);
    case F_PCT: return nf_pct(v, b, n);
    case F_COUNT: return nf_count(v, b, n);
    case F_RPS: snprintf(b, n, "%s req/s", nf_count(v, x, sizeof x)); return b;
    }
    b[0] = 0;
    return b;
}

/* ---- the headline figures ------------------------------------------------ */

const mdef_t mdef[NM] = {
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

void figures_of(const rundata *r, figures *m) {
    char x[64], y[64];
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
    snprintf(m->note[M_COST], sizeof m->note[0], "the cluster over the %s simulated",
             nf_duration(r->simulated_s, x, sizeof x));
    m->v[M_GPU_HOURS] = r->gpu_hours;
    snprintf(m->note[M_GPU_HOURS], sizeof m->note[0], "provisioned; %s of them busy",
             nf_pct(r->gpu_hours > 0 ? r->gpu_busy_hours / r->gpu_hours : 0, x, sizeof x));
    m->v[M_ENERGY] = r->energy_kwh;
    m->v[M_CO2] = r->co2_kg;
    if (isnan(r->energy_kwh)) snprintf(m->note[M_ENERGY], sizeof m->note[0], "no energy model in clustertwin %s", r->version);
    else snprintf(m->note[M_ENERGY], sizeof m->note[0], "facility energy (IT x PUE)");
    if (isnan(r->co2_kg)) snprintf(m->note[M_CO2], sizeof m->note[0], "no energy model in clustertwin %s", r->version);
    else snprintf(m->note[M_CO2], sizeof m->note[0], "from the grid's carbon intensity");
    m->v[M_UTIL] = r->gpu_utilization;
    snprintf(m->note[M_UTIL], sizeof m->note[0], "busy GPU-time over provisioned GPU-time");
    m->v[M_FAILURES] = r->failures_total;
    snprintf(m->note[M_FAILURES], sizeof m->note[0], "component failures on %s",
             nf_qty(r->nodes, "node", "nodes", x, sizeof x));
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
        snprintf(m->note[M_GOODPUT], sizeof m->note[0], "%s: requests/s within its SLO (%s of %s/s)", v->name,
                 nf_pct(v->slo_attainment, x, sizeof x), nf_count(v->requests_per_s, y, sizeof y));
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
    char x[64], y[64], z[64], g[64], w[64];
    b[0] = 0;
    if (r->n_services == 1) {
        const rd_service *v = &r->services[0];
        int k = snprintf(b, n, "%s serves %s requests in the %s simulated (%s/s); %s of them met its SLO, %s of "
                               "SLO goodput", v->name, fmt_value(F_COUNT, v->requests, x, sizeof x),
                         fmt_value(F_DUR, r->simulated_s, y, sizeof y), nf_count(v->requests_per_s, w, sizeof w),
                         fmt_value(F_PCT, v->slo_attainment, z, sizeof z),
                         fmt_value(F_RPS, v->goodput_requests_per_s, g, sizeof g));
        if (k > 0 && (size_t)k < n && !isnan(v->cost_per_million_tokens_usd))
            k += snprintf(b + k, n - (size_t)k, ", at %s per million output tokens",
                          nf_usd(v->cost_per_million_tokens_usd, x, sizeof x));
        if (k > 0 && (size_t)k < n) snprintf(b + k, n - (size_t)k, ".");
        return;
    }
    double req = 0;
    for (int i = 0; i < r->n_services; i++) req += r->services[i].requests;
    int k = snprintf(b, n, "%d services serve %s requests in the %s simulated:", r->n_services,
                     fmt_value(F_COUNT, req, x, sizeof x), fmt_value(F_DUR, r->simulated_s, y, sizeof y));
    for (int i = 0; i < r->n_services && i < 4 && k > 0 && (size_t)k < n; i++) {
        const rd_service *v = &r->services[i];
        k += snprintf(b + k, n - (size_t)k, "%s %s %s within its SLO", i ? ";" : "", v->name,
                      fmt_value(F_PCT, v->slo_attainment, z, sizeof z));
        if (k > 0 && (size_t)k < n && !isnan(v->cost_per_million_tokens_usd))
            k += snprintf(b + k, n - (size_t)k, " at %s per million output tokens",
                          nf_usd(v->cost_per_million_tokens_usd, g, sizeof g));
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
void answer(rundata_db *rd, const rundata *r, const figures *m, char *b, size_t n) {
    char x[64], y[64], z[64], c[64], w[64], d2[64];
    const rd_job *j = rundata_main_job(r);
    int k = 0;
    if (strcmp(r->status, "complete")) {
        snprintf(b, n, "Run %lld of %s has no results: it was interrupted (or is still running); %s events were "
                       "stored, up to %s of simulated time.", (long long)r->id, r->scenario,
                 fmt_value(F_COUNT, r->events_stored, x, sizeof x), fmt_value(F_DUR, r->last_event_s, y, sizeof y));
        return;
    } else if (j && !isnan(j->end_s)) {
        double cluster = rundata_cost_at(rd, r, j->end_s);
        job_cost(j, c, sizeof c);
        k = snprintf(b, n, "%s finishes in %s%s%s on %d GPUs; %s of its time was kept training. The cluster's "
                           "%s GPUs cost %s from the start of the run to then.", j->name,
                     fmt_value(F_DUR, j->end_s - j->submit_s, x, sizeof x), c[0] ? " at " : "", c, j->gpus,
                     fmt_value(F_PCT, j->ettr, z, sizeof z), fmt_value(F_COUNT, r->gpus, w, sizeof w),
                     fmt_value(F_USD, cluster, y, sizeof y));
    } else if (j && !isnan(j->start_s) && j->steps_total > 0) {
        double share = j->steps_done / j->steps_total, el = r->simulated_s - j->start_s;
        job_cost(j, c, sizeof c);
        char d[64];
        k = snprintf(b, n, "%s does %s of its %s steps in the %s simulated%s%s%s; %s of its time "
                           "was kept training", j->name, nf_pct(share, d, sizeof d),
                     fmt_value(F_COUNT, j->steps_total, w, sizeof w),
                     fmt_value(F_DUR, r->simulated_s, x, sizeof x), c[0] ? ", at " : "", c, c[0] ? " so far" : "",
                     fmt_value(F_PCT, j->ettr, z, sizeof z));
        if (share > 0 && k > 0 && (size_t)k < n)
            k += snprintf(b + k, n - (size_t)k, ", and at this pace it would finish after %s.",
                          fmt_value(F_DUR, j->submit_s + (j->start_s - j->submit_s) + el / share, z, sizeof z));
        else if (k > 0 && (size_t)k < n)
            k += snprintf(b + k, n - (size_t)k, ".");
        if (k > 0 && (size_t)k < n)
            k += snprintf(b + k, n - (size_t)k, " The cluster's %s GPUs cost %s.", nf_count(r->gpus, w, sizeof w),
                          fmt_value(F_USD, r->cost_usd, y, sizeof y));
    } else if (j) {
        k = snprintf(b, n, "%s never starts in the %s simulated (it waits for %d GPUs); the cluster costs %s.", j->name,
                     fmt_value(F_DUR, r->simulated_s, x, sizeof x), j->gpus, fmt_value(F_USD, r->cost_usd, y, sizeof y));
    } else if (r->n_jobs > 0) {
        k = snprintf(b, n, "%s of %s jobs finish in the %s simulated; they wait %s on average to start, the GPUs "
                           "are %s busy, and the cluster costs %s.", nf_count(m->v[M_JOBS_DONE], w, sizeof w),
                     nf_count(r->n_jobs, c, sizeof c), fmt_value(F_DUR, r->simulated_s, x, sizeof x),
                     fmt_value(F_DUR, m->v[M_WAIT], z, sizeof z), fmt_value(F_PCT, r->gpu_utilization, d2, sizeof d2),
                     fmt_value(F_USD, r->cost_usd, y, sizeof y));
    } else if (r->n_services > 0) {
        k = 0;                              /* the services are the answer */
    } else if (r->microbenchmarks > 0) {
        snprintf(b, n, "%s predicts %s microbenchmark cases (they are in the run's JSON results); nothing is "
                       "simulated over time.", r->scenario, nf_count(r->microbenchmarks, w, sizeof w));
        return;
    } else {
        snprintf(b, n, "The cluster runs no workload; %s of it costs %s.", fmt_value(F_DUR, r->simulated_s, x, sizeof x),
                 fmt_value(F_USD, r->cost_usd, y, sizeof y));
        return;
    }
    if (!r->n_services || k < 0 || (size_t)k >= n) return;
    char sv[768];
    services_sentence(r, sv, sizeof sv);
    if (k == 0)
        snprintf(b, n, "%s The cluster's %s GPUs cost %s.", sv, nf_count(r->gpus, w, sizeof w),
                 fmt_value(F_USD, r->cost_usd, y, sizeof y));
    else
        snprintf(b + k, n - (size_t)k, " %s", sv);
}

/* ---- per-queue figures ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Queues: the scheduler's (queues[] of the JSON) in their order, then any
 * other queue a job names. Counts, median and longest wait come from the
 * jobs; quota, slowdown, GPU-hours, mean and 95th percentile wait from the
 * world's figures when it gave them. *out malloc'd. Returns the count or -1. */
int queue_stats(const rundata *r, qstat **out) {
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

const char *const sv_cols[SV_N + 1] = { "service", "requests", "replicas", "output tokens/s", "TTFT p50",
                                               "TTFT p99", "TPOT p50", "TPOT p99", "end-to-end p99",
                                               "SLO attainment", "SLO goodput", "cost per million tokens", NULL };
const char sv_numeric[] = "tnnnnnnnnnnn";

/* The number of columns of the services table: the cost column only when
 * some service has a cost per token. */
int sv_ncols(const rundata *r) {
    for (int i = 0; i < r->n_services; i++)
        if (!isnan(r->services[i].cost_per_million_tokens_usd)) return SV_N;
    return SV_COST;
}

const char *sv_cell(const rd_service *v, int col, char *b, size_t n) {
    if (v->parent >= 0 && (col == SV_REPLICAS || col == SV_COST)) {   /* a class or model holds no replicas of its own */
        b[0] = 0;
        return b;
    }
    switch (col) {
    case SV_NAME:
        if (v->parent < 0) snprintf(b, n, "%s", v->name);
        else snprintf(b, n, "%s %s", v->is_model ? "model" : "class", v->name);
        return b;
    case SV_REQUESTS: return fmt_value(F_COUNT, v->requests, b, n);
    case SV_REPLICAS: return fmt_value(F_COUNT, v->replicas, b, n);
    case SV_TOKENS: return fmt_value(F_COUNT, v->output_tokens_per_s, b, n);
    case SV_TTFT50: return fmt_value(F_DUR, v->ttft_p50_s, b, n);
    case SV_TTFT99: return fmt_value(F_DUR, v->ttft_p99_s, b, n);
    case SV_TPOT50: return fmt_value(F_DUR, v->tpot_p50_s, b, n);
    case SV_TPOT99: return fmt_value(F_DUR, v->tpot_p99_s, b, n);
    case SV_E2E99: return fmt_value(F_DUR, v->e2e_p99_s, b, n);
    case SV_SLO: return fmt_value(F_PCT, v->slo_attainment, b, n);
    case SV_GOODPUT: return fmt_value(F_RPS, v->goodput_requests_per_s, b, n);
    case SV_COST:
        if (isnan(v->cost_per_million_tokens_usd)) snprintf(b, n, "n/a");
        else nf_usd(v->cost_per_million_tokens_usd, b, n);
        return b;
    }
    b[0] = 0;
    return b;
}


/* "+1.2 d (+3.4%)" */
void diff_text(fmt f_, double a, double b, char *out, size_t n, int *sign) {
    char x[64];
    *sign = 0;
    if (isnan(a) || isnan(b)) {
        snprintf(out, n, "n/a");
        return;
    }
    double d = b - a;
    *sign = d > 0 ? 1 : d < 0 ? -1 : 0;
    if (f_ == F_PCT) snprintf(x, sizeof x, "%+.1f pp", 100 * d);   /* percentage points */
    else {
        fmt_value(f_, fabs(d), x + 1, sizeof x - 1);
        x[0] = d < 0 ? '-' : '+';
    }
    if (a != 0) snprintf(out, n, "%s (%+.1f%%)", x, 100 * d / fabs(a));
    else snprintf(out, n, "%s", x);
}

