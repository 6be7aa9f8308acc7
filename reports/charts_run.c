/*
 * charts_run: the charts of one run (see charts.h for the list), each a
 * data file and a stanza of the script. The series and events come from
 * the reader (reports/rundata.h), jobs and services from the run.
 */
#include "reports/charts_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- GPUs by state ------------------------------------------------------- */

/* The busy states, then idle: stacked in this order (their sum is the
 * cluster's GPUs); then the GPUs out of service, drawn as a line. A state
 * with no stored series (a run stored before it existed) counts 0. */
#define N_UTIL 7
static const char *const util_names[N_UTIL] = { "gpus_training", "gpus_checkpoint", "gpus_restarting", "gpus_batch",
                                               "gpus_serving", "gpus_idle", "gpus_failed" };

static void util_chart(plan *p, rundata_db *rd, const rundata *r) {
    double *t[N_UTIL], *dt[N_UTIL], *mean[N_UTIL], *mx[N_UTIL];
    int n[N_UTIL], npts = -1, first = -1;
    for (int i = 0; i < N_UTIL; i++) {
        n[i] = rundata_series(rd, r, "cluster", util_names[i], &t[i], &dt[i], &mean[i], &mx[i]);
        if (i < N_UTIL - 1 && n[i] > 0 && (npts < 0 || n[i] < npts)) npts = n[i];
        if (i < N_UTIL - 1 && n[i] > 0 && first < 0) first = i;
    }
    FILE *f = npts > 0 ? open_in(p, "util", ".dat") : NULL;
    if (f) {
        fprintf(f, "# time (%s), then cumulative GPUs: training, +checkpoint, +restarting, +batch, +serving, +idle; "
                   "GPUs out of service (bucket means, %g s buckets)\n", p->unit, r->bucket_s);
        for (int k = 0; k < npts; k++) {
            double c[N_UTIL - 1], s = 0;
            for (int i = 0; i < N_UTIL - 1; i++) c[i] = s += n[i] > 0 ? mean[i][k] : 0;
            double out = k < n[N_UTIL - 1] ? mean[N_UTIL - 1][k] : 0;
            for (int e = 0; e < 2; e++)
                fprintf(f, "%.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", (t[first][k] + e * dt[first][k]) / p->unit_s,
                        c[0], c[1], c[2], c[3], c[4], c[5], out);
        }
        if (close_in(p) != 0) f = NULL;
    }
    if (f) {
        begin(p, "util", "GPUs by state over time",
              "GPUs held by jobs in each state, by inference replicas (serving) and idle GPUs, stacked (their sum "
              "is the cluster's GPUs); the dashed line counts GPUs on failed or drained nodes. Each step is the "
              "mean over one bucket.");
        fprintf(p->gp,
                "set xlabel 'time (%s)'\nset xrange [0:%.9g]\nset ylabel 'GPUs'\nset yrange [0:*]\n"
                "set style fill solid 0.9 noborder\nd = '%sutil.dat'\n"
                "plot d u 1:(0):2 w filledcurves lc rgb '#2e7d32' t 'training', \\\n"
                "  d u 1:2:3 w filledcurves lc rgb '#f9a825' t 'checkpoint', \\\n"
                "  d u 1:3:4 w filledcurves lc rgb '#c62828' t 'restarting', \\\n"
                "  d u 1:4:5 w filledcurves lc rgb '#1565c0' t 'batch', \\\n"
                "  d u 1:5:6 w filledcurves lc rgb '#00838f' t 'serving', \\\n"
                "  d u 1:6:7 w filledcurves lc rgb '#d9d9d9' t 'idle', \\\n"
                "  d u 1:8 w lines lw 1.5 dt 2 lc rgb '#000000' t 'out of service'\n",
                p->unit, r->simulated_s / p->unit_s, p->prefix);
    }
    for (int i = 0; i < N_UTIL; i++) free(t[i]);
}

/* ---- cost so far --------------------------------------------------------- */

static void cost_chart(plan *p, rundata_db *rd, const rundata *r) {
    double *t, *dt, *mean, *mx;
    int n = rundata_series(rd, r, "cluster", "cost_usd", &t, &dt, &mean, &mx);
    FILE *f = n > 0 ? open_in(p, "cost", ".dat") : NULL;
    if (f) {
        fprintf(f, "# time (%s), cost so far (USD)\n0 0\n", p->unit);
        for (int k = 0; k < n; k++) fprintf(f, "%.9g %.9g\n", (t[k] + dt[k]) / p->unit_s, mx[k]);
        if (close_in(p) != 0) f = NULL;
    }
    if (f) {
        begin(p, "cost", "Cost so far", "What the run has cost up to each time (compute, storage and cloud burst, "
                                        "as priced by the cost model).");
        fprintf(p->gp, "set xlabel 'time (%s)'\nset xrange [0:%.9g]\nset ylabel 'USD'\nset format y '$%%.1s%%c'\n"
                       "set yrange [0:*]\nunset key\nplot '%scost.dat' u 1:2 w lines lw 2 lc rgb '#6a1b9a'\n",
                p->unit, r->simulated_s / p->unit_s, p->prefix);
    }
    free(t);
}

/* ---- failures and restarts ----------------------------------------------- */

static const char *const timeline_kind[][2] = {
    { "failure", "failure" },         { "node_drained", "node drained" }, { "job_down", "job down" },
    { "node_replaced", "node replaced" }, { "job_waiting", "waiting for nodes" }, { "job_shrink", "job shrank" },
    { "job_restart", "job restarted" }, { "node_repaired", "node repaired" },
};
#define N_TIMELINE (int)(sizeof timeline_kind / sizeof *timeline_kind)

static void failures_chart(plan *p, rundata_db *rd, const rundata *r) {
    FILE *f = NULL;
    int present[N_TIMELINE], np = 0;
    for (int i = 0; i < N_TIMELINE; i++) {
        double *t = NULL;
        int rows = rundata_event_times(rd, r, timeline_kind[i][0], &t);
        if (rows > 0 && (f || (f = open_in(p, "failures", ".dat")))) {
            fprintf(f, "%s# %s: time (%s)\n", np ? "\n\n" : "", timeline_kind[i][0], p->unit);
            for (int k = 0; k < rows; k++) fprintf(f, "%.9g\n", t[k] / p->unit_s);
            present[np++] = i;
        }
        free(t);
    }
    if (!f || close_in(p) != 0) return;
    begin(p, "failures", "Failures and recovery",
          "Each mark is one event: a component failure, a job brought down by it, the replacement node it got, "
          "its restart, and the failed node's repair.");
    /* Row np - i for the i-th kind present, top to bottom. */
    fprintf(p->gp, "set xlabel 'time (%s)'\nset xrange [0:%.9g]\nset yrange [0.5:%d.5]\nunset key\nset ytics (",
            p->unit, r->simulated_s / p->unit_s, np);
    for (int i = 0; i < np; i++) {
        fprintf(p->gp, "%s", i ? ", " : "");
        gp_quote(p->gp, timeline_kind[present[i]][1]);
        fprintf(p->gp, " %d", np - i);
    }
    fprintf(p->gp, ")\nset grid noytics\nplot ");
    static const char *colour[] = { "#c62828", "#6d4c41", "#ef6c00", "#1565c0", "#8e24aa", "#5d4037", "#2e7d32",
                                    "#00838f" };
    for (int i = 0; i < np; i++)
        fprintf(p->gp, "%s'%sfailures.dat' index %d u 1:(%d) w p pt 7 ps 0.5 lc rgb '%s'", i ? ", \\\n  " : "",
                p->prefix, i, np - i, colour[present[i] % 8]);
    fprintf(p->gp, "\n");
}

/* ---- step-time breakdown ------------------------------------------------- */

static void steps_chart(plan *p, const rundata *r) {
    FILE *f = NULL;
    int n = 0;
    for (int i = 0; i < r->n_jobs && n < 24; i++) {
        const rd_job *j = &r->jobs[i];
        if (strcmp(j->kind, "training") || isnan(j->step_time_s)) continue;
        if (!f && !(f = open_in(p, "steps", ".dat"))) return;
        if (!n++) {
            fprintf(f, "# job");
            for (int k = 0; k < RD_PARTS; k++) fprintf(f, ", %s (s)", rd_part_label[k]);
            fprintf(f, "\n");
        }
        dat_quote(f, j->name);
        for (int k = 0; k < RD_PARTS; k++) fprintf(f, " %.9g", isnan(j->part_s[k]) ? 0 : j->part_s[k]);
        fprintf(f, "\n");
    }
    if (!f || close_in(p) != 0) return;
    steps_plot(p, "One bar per training job: its step time split into compute, tensor-parallel communication, the "
                  "pipeline bubble, data-parallel (or FSDP) communication, the optimizer and the rest.", 0.6);
}

void steps_plot(plan *p, const char *caption, double boxwidth) {
    begin(p, "steps", "Where a training step's time goes", caption);
    fprintf(p->gp, "set ylabel 'seconds per step'\nset yrange [0:*]\nset style data histograms\n"
                   "set style histogram rowstacked\nset style fill solid 0.9 border -1\nset boxwidth %g\n"
                   "set xtics noenhanced\n", boxwidth);
    static const char *colour[RD_PARTS] = { "#2e7d32", "#1565c0", "#f9a825", "#6a1b9a", "#00838f", "#9e9e9e" };
    fprintf(p->gp, "plot ");
    for (int k = 0; k < RD_PARTS; k++) {
        fprintf(p->gp, "%s'%ssteps.dat' u %d%s lc rgb '%s' t ", k ? ", \\\n  " : "", p->prefix, k + 2,
                k ? "" : ":xtic(1)", colour[k]);
        gp_quote(p->gp, rd_part_label[k]);
    }
    fprintf(p->gp, "\n");
}

/* ---- training progress --------------------------------------------------- */

static void progress_chart(plan *p, rundata_db *rd, const rundata *r) {
    FILE *f = NULL;
    int n = 0;
    const char *names[8];
    for (int i = 0; i < r->n_jobs && n < 8; i++) {
        const rd_job *j = &r->jobs[i];
        if (strcmp(j->kind, "training")) continue;
        double *t, *dt, *mean, *mx;
        int np = rundata_series(rd, r, j->name, "progress", &t, &dt, &mean, &mx);
        if (np > 0 && (f || (f = open_in(p, "progress", ".dat")))) {
            fprintf(f, "%s# %s: time (%s), share of its steps done (bucket end)\n0 0\n", n ? "\n\n" : "", j->name,
                    p->unit);
            for (int k = 0; k < np; k++) fprintf(f, "%.9g %.9g\n", (t[k] + dt[k]) / p->unit_s, mx[k]);
            names[n++] = j->name;
        }
        free(t);
    }
    if (!f || close_in(p) != 0) return;
    begin(p, "progress", "Training progress",
          "Share of each training job's steps done over time; flat stretches are time lost to failures, "
          "restarts and waits for nodes.");
    fprintf(p->gp, "set xlabel 'time (%s)'\nset xrange [0:%.9g]\nset ylabel 'steps done (%%)'\nset yrange [0:105]\nplot ",
            p->unit, r->simulated_s / p->unit_s);
    for (int i = 0; i < n; i++) {
        fprintf(p->gp, "%s'%sprogress.dat' index %d u 1:($2*100) w lines lw 2 t ", i ? ", \\\n  " : "", p->prefix, i);
        gp_quote(p->gp, names[i]);
    }
    fprintf(p->gp, "\n");
}

/* ---- queue waits --------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void waits_chart(plan *p, const rundata *r) {
    double *w = malloc((size_t)(r->n_jobs ? r->n_jobs : 1) * sizeof *w), max = 0;
    if (!w) return;
    for (int i = 0; i < r->n_jobs; i++)
        if (!isnan(r->jobs[i].queue_wait_s)) max = fmax(max, r->jobs[i].queue_wait_s);
    double unit_s;
    const char *unit = charts_time_unit(max, &unit_s);
    FILE *f = NULL;
    int nq = 0;
    const char *queues[8];
    for (int i = 0; i < r->n_jobs && nq < 8; i++) {
        const char *qn = r->jobs[i].queue;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = !strcmp(r->jobs[k].queue, qn);
        if (seen) continue;
        int n = 0;
        for (int k = i; k < r->n_jobs; k++)
            if (!strcmp(r->jobs[k].queue, qn) && !isnan(r->jobs[k].queue_wait_s)) w[n++] = r->jobs[k].queue_wait_s;
        if (n < 5) continue;                     /* a CDF of fewer jobs says little */
        if (!f && !(f = open_in(p, "waits", ".dat"))) break;
        qsort(w, (size_t)n, sizeof *w, cmp_double);
        fprintf(f, "%s# queue %s: wait (%s), share of its jobs waiting at most that long\n", nq ? "\n\n" : "", qn, unit);
        for (int k = 0; k < n; k++) fprintf(f, "%.9g %.9g\n", w[k] / unit_s, (k + 1) / (double)n);
        queues[nq++] = qn;
    }
    free(w);
    if (!f || close_in(p) != 0) return;
    begin(p, "waits", "Queue waits",
          "Cumulative distribution of the time jobs waited in each queue before they started.");
    fprintf(p->gp, "set xlabel 'queue wait (%s)'\nset ylabel 'jobs (%%)'\nset yrange [0:100]\nset xrange [0:*]\nplot ",
            unit);
    for (int i = 0; i < nq; i++) {
        fprintf(p->gp, "%s'%swaits.dat' index %d u 1:($2*100) w steps lw 2 t ", i ? ", \\\n  " : "", p->prefix, i);
        gp_quote(p->gp, queues[i]);
    }
    fprintf(p->gp, "\n");
}

/* ---- inference latency ------------------------------------------------- */

/* TTFT, TPOT and end-to-end latency CDFs of each service (from the
 * results JSON's latency_cdf), side by side in one SVG, log-scaled
 * latency. A TPOT not measured (every request one token long) is NaN in
 * the data, which gnuplot leaves out. */
static void latency_chart(plan *p, const rundata *r) {
    FILE *f = NULL;
    int n = 0, idx[8];
    for (int i = 0; i < r->n_services && n < 8; i++) {
        const rd_service *v = &r->services[i];
        int pts = 0;
        for (int k = 0; k < v->n_cdf; k++)
            pts += !isnan(v->cdf_pct[k]) && v->cdf_ttft[k] > 0 && v->cdf_e2e[k] > 0;
        if (pts < 2) continue;
        if (!f && !(f = open_in(p, "latency", ".dat"))) return;
        fprintf(f, "%s# service %s: percentile, TTFT (s), end-to-end latency (s), TPOT (s)\n", n ? "\n\n" : "",
                v->name);
        for (int k = 0; k < v->n_cdf; k++) {
            if (isnan(v->cdf_pct[k]) || !(v->cdf_ttft[k] > 0) || !(v->cdf_e2e[k] > 0)) continue;
            fprintf(f, "%.9g %.9g %.9g ", v->cdf_pct[k], v->cdf_ttft[k], v->cdf_e2e[k]);
            if (v->cdf_tpot[k] > 0) fprintf(f, "%.9g\n", v->cdf_tpot[k]);
            else fprintf(f, "NaN\n");
        }
        idx[n++] = i;
    }
    if (!f || close_in(p) != 0) return;
    begin(p, "latency", "Inference latency",
          "Cumulative distribution of each service's time to first token (left), time per output token after "
          "it (middle) and end-to-end request latency (right), on a log scale: the share of its requests served "
          "at most that fast.");
    fprintf(p->gp, "set multiplot layout 1,3\nset logscale x 10\nset ylabel 'requests (%%)'\nset yrange [0:100]\n"
                   "set key inside bottom right vertical noenhanced\n");
    static const char *const xlabel[3] = { "time to first token (s)", "time per output token (s)",
                                           "end-to-end latency (s)" };
    static const int column[3] = { 2, 4, 3 };
    for (int panel = 0; panel < 3; panel++) {
        fprintf(p->gp, "set xlabel '%s'\nplot ", xlabel[panel]);
        for (int i = 0; i < n; i++) {
            fprintf(p->gp, "%s'%slatency.dat' index %d u %d:1 w linespoints lw 2 pt 7 ps 0.5 t ", i ? ", \\\n  " : "",
                    p->prefix, i, column[panel]);
            gp_quote(p->gp, r->services[idx[i]].name);
        }
        fprintf(p->gp, "\n");
    }
    fprintf(p->gp, "unset multiplot\n");
}

/* ---- microbenchmarks: predicted vs measured ------------------------------- */

/* One point per case both predicted and measured, a series per kind of
 * case (op, and the copy kind or GEMM precision), on log-log axes with the
 * line predicted = measured and a +-10% band. */
/* A case's series: its op, and its copy kind or GEMM precision. */
static void micro_group(const rd_micro *c, char *g, size_t n) {
    int k = snprintf(g, n, "%s", c->op);
    if (k >= 0 && (size_t)k < n && (c->kind[0] || c->precision[0]))
        snprintf(g + k, n - (size_t)k, " %s", c->kind[0] ? c->kind : c->precision);
}

typedef struct micro_pt {
    char g[48];
    int idx;
    const rd_micro *c;
} micro_pt;

static int cmp_micro(const void *a, const void *b) {
    const micro_pt *x = a, *y = b;
    int c = strcmp(x->g, y->g);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void micro_chart(plan *p, rundata_db *rd, const rundata *r) {
    rd_micro *c = NULL;
    int n = rundata_micro(rd, r, &c), np = 0;
    micro_pt *pt = n > 0 ? malloc((size_t)n * sizeof *pt) : NULL;
    for (int i = 0; pt && i < n; i++)
        if (c[i].predicted_s > 0 && c[i].measured_s > 0) {
            micro_group(&c[i], pt[np].g, sizeof pt[np].g);
            pt[np].idx = i;
            pt[np++].c = &c[i];
        }
    if (np) qsort(pt, (size_t)np, sizeof *pt, cmp_micro);
    FILE *f = NULL;
    char groups[16][48];
    int ng = 0;
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < np; i++) {
        const rd_micro *m = pt[i].c;
        if (!f && !(f = open_in(p, "micro", ".dat"))) break;
        if (!ng || strcmp(groups[ng - 1], pt[i].g)) {
            if (ng == 16) break;
            if (ng) fputs("\n\n", f);
            snprintf(groups[ng++], sizeof groups[0], "%s", pt[i].g);
            fprintf(f, "# %s: measured median s, predicted s, measured min s, measured max s\n", pt[i].g);
        }
        fprintf(f, "%.9g %.9g %.9g %.9g\n", m->measured_s, m->predicted_s, m->measured_min_s, m->measured_max_s);
        lo = fmin(lo, fmin(m->measured_s, m->predicted_s));
        hi = fmax(hi, fmax(m->measured_s, m->predicted_s));
    }
    free(pt);
    free(c);
    if (!f || close_in(p) != 0) return;
    begin(p, "micro", "Microbenchmarks: predicted vs measured",
          "Each case's predicted time against its measured median (bars: fastest to slowest repetition), "
          "log-log. On the solid line the model is exact; the dashed lines are +-10%.");
    fprintf(p->gp, "set size ratio -1\nset terminal svg size 720,640 fixed noenhanced font 'Helvetica,12' "
                   "background rgb 'white'\nset output '%smicro.svg'\nset logscale xy\nset format x '1e%%L'\n"
                   "set format y '1e%%L'\nset xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n"
                   "set xlabel 'measured (s)'\nset ylabel 'predicted (s)'\nset key inside left top vertical box opaque\n"
                   "d = '%smicro.dat'\nplot x w l lc rgb '#555555' t 'predicted = measured', "
                   "1.1*x w l dt 2 lc rgb '#999999' t '+-10%%', 0.9*x w l dt 2 lc rgb '#999999' notitle",
            p->prefix, lo / 2, hi * 2, lo / 2, hi * 2, p->prefix);
    for (int i = 0; i < ng; i++) {
        fprintf(p->gp, ", \\\n  d index %d u 1:2:3:4 w xerrorbars pt 7 ps 0.6 t ", i);
        gp_quote(p->gp, groups[i]);
    }
    fputs("\nset terminal svg size 960,360 fixed noenhanced font 'Helvetica,12' background rgb 'white'\n", p->gp);
}

void charts_draw(rundata_db *rd, const rundata *r, const char *dir, const char *prefix, charts *out) {
    plan p;
    char title[160];
    snprintf(title, sizeof title, "run %lld (%s)", (long long)r->id, r->scenario);
    if (plan_start(&p, out, dir, prefix, title) != 0) return;
    p.unit = charts_time_unit(r->simulated_s, &p.unit_s);
    if (r->simulated_s > 0) {
        util_chart(&p, rd, r);
        cost_chart(&p, rd, r);
        failures_chart(&p, rd, r);
        progress_chart(&p, rd, r);
    }
    steps_chart(&p, r);
    waits_chart(&p, r);
    latency_chart(&p, r);
    micro_chart(&p, rd, r);
    plan_finish(&p);
}
