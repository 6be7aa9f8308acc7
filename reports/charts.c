/*
 * charts: data files and one gnuplot script per report, run once.
 *
 * A chart costs O(points) to write (at most 2,000 buckets per series, so
 * a few hundred KB at most); gnuplot draws them all in one process in
 * about 0.2 s. Every chart is a fixed-size SVG (960x360) that the HTML
 * scales down with CSS.
 */
#include "reports/charts.h"
#include "reports/fileout.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *charts_time_unit(double simulated_s, double *unit_s) {
    if (!(simulated_s >= 2 * 3600)) {
        *unit_s = 60;
        return "minutes";
    }
    if (simulated_s < 3 * 86400) {
        *unit_s = 3600;
        return "hours";
    }
    *unit_s = 86400;
    return "days";
}

const chart *charts_find(const charts *c, const char *key) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->c[i].key, key)) return &c->c[i];
    return NULL;
}

typedef struct plan {
    charts *out;
    chart planned[CHARTS_MAX];
    int n;
    const char *dir, *prefix;
    FILE *gp;                        /* the script */
    fileout gpo;                     /* ... as written through fileout */
    fileout dat;                     /* the one data file open at a time */
    double unit_s;
    const char *unit;
} plan;

/* Open DIR/PREFIX NAME EXT through fileout (the chart functions hold one
 * data file at a time, in p->dat); NULL when it cannot be written. */
static FILE *open_in(plan *p, const char *name, const char *ext) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s%s", p->dir, p->prefix, name, ext);
    return fileout_open(&p->dat, path, 0, 0666, NULL, 0) == 0 ? p->dat.f : NULL;
}

/* Finish the data file open_in gave; 0, or -1 when it could not be
 * written (the chart is then left out). */
static int close_in(plan *p) { return fileout_close(&p->dat, NULL, 0) == 0 ? 0 : -1; }

/* One character of z at *p for a chart's script or data: valid UTF-8 as
 * it is, an invalid byte as U+FFFD (gnuplot copies it into the SVG, which
 * must stay well-formed), control characters dropped; *p advanced past it. */
static void put_char(FILE *f, const char **p) {
    const unsigned char *u = (const unsigned char *)*p;
    if (*u < 0x80) {
        if (*u >= 0x20 && *u != 0x7F) fputc(*u, f);
        return;
    }
    int n = fileout_utf8_len(u);
    if (n > 1) {
        fwrite(u, 1, (size_t)n, f);
        *p += n - 1;
    } else {
        fputs("\xEF\xBF\xBD", f);
    }
}

/* gnuplot single-quoted string: ' doubled; the rest is literal. */
static void gp_quote(FILE *f, const char *z) {
    fputc('\'', f);
    for (; *z; z++) {
        if (*z == '\'') fputc('\'', f);
        put_char(f, &z);
    }
    fputc('\'', f);
}

/* Data file string: double-quoted, with " and \\ dropped. */
static void dat_quote(FILE *f, const char *z) {
    fputc('"', f);
    for (; *z; z++)
        if (*z != '"' && *z != '\\') put_char(f, &z);
    fputc('"', f);
}

/* Start a chart: its output file in the script and its entry. */
static void begin(plan *p, const char *key, const char *title, const char *caption) {
    chart *c = &p->planned[p->n++];
    snprintf(c->key, sizeof c->key, "%s", key);
    snprintf(c->file, sizeof c->file, "%s%s.svg", p->prefix, key);
    snprintf(c->title, sizeof c->title, "%s", title);
    snprintf(c->caption, sizeof c->caption, "%s", caption);
    fprintf(p->gp, "\nreset\nset output '%s'\n", c->file);
    fprintf(p->gp, "set border 3\nset tics nomirror\nset grid ytics lc rgb '#dddddd'\n"
                   "set key outside top center horizontal\n");
}

/* ---- GPUs by state ------------------------------------------------------- */

/* The busy states, then idle: stacked in this order (their sum is the
 * cluster's GPUs); then the GPUs out of service, drawn as a line. A state
 * with no stored series (a run stored before it existed) counts 0. */
#define N_UTIL 7
static const char *const util_names[N_UTIL] = { "gpus_training", "gpus_checkpoint", "gpus_restarting", "gpus_batch",
                                               "gpus_serving", "gpus_idle", "gpus_failed" };

static void util_chart(plan *p, sqlite3 *db, const rundata *r) {
    double *t[N_UTIL], *dt[N_UTIL], *mean[N_UTIL], *mx[N_UTIL];
    int n[N_UTIL], npts = -1, first = -1;
    for (int i = 0; i < N_UTIL; i++) {
        n[i] = rundata_series(db, r, "cluster", util_names[i], &t[i], &dt[i], &mean[i], &mx[i]);
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

static void cost_chart(plan *p, sqlite3 *db, const rundata *r) {
    double *t, *dt, *mean, *mx;
    int n = rundata_series(db, r, "cluster", "cost_usd", &t, &dt, &mean, &mx);
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

static void failures_chart(plan *p, sqlite3 *db, const rundata *r) {
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT t_s FROM events WHERE run_id = ? AND kind = ? ORDER BY seq", -1, &q, NULL))
        return;
    FILE *f = NULL;
    int present[N_TIMELINE], np = 0;
    for (int i = 0; i < N_TIMELINE; i++) {
        sqlite3_bind_int64(q, 1, r->id);
        sqlite3_bind_text(q, 2, timeline_kind[i][0], -1, SQLITE_STATIC);
        int rows = 0;
        while (sqlite3_step(q) == SQLITE_ROW) {
            if (!f && !(f = open_in(p, "failures", ".dat"))) break;
            if (!rows++) fprintf(f, "%s# %s: time (%s)\n", np ? "\n\n" : "", timeline_kind[i][0], p->unit);
            fprintf(f, "%.9g\n", sqlite3_column_double(q, 0) / p->unit_s);
        }
        sqlite3_reset(q);
        if (rows) present[np++] = i;
    }
    sqlite3_finalize(q);
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
    begin(p, "steps", "Where a training step's time goes",
          "One bar per training job: its step time split into compute, tensor-parallel communication, the "
          "pipeline bubble, data-parallel (or FSDP) communication, the optimizer and the rest.");
    fprintf(p->gp, "set ylabel 'seconds per step'\nset yrange [0:*]\nset style data histograms\n"
                   "set style histogram rowstacked\nset style fill solid 0.9 border -1\nset boxwidth 0.6\n"
                   "set xtics noenhanced\n");
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

static void progress_chart(plan *p, sqlite3 *db, const rundata *r) {
    FILE *f = NULL;
    int n = 0;
    const char *names[8];
    for (int i = 0; i < r->n_jobs && n < 8; i++) {
        const rd_job *j = &r->jobs[i];
        if (strcmp(j->kind, "training")) continue;
        double *t, *dt, *mean, *mx;
        int np = rundata_series(db, r, j->name, "progress", &t, &dt, &mean, &mx);
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
static void micro_chart(plan *p, sqlite3 *db, const rundata *r) {
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT op || CASE WHEN kind IS NOT NULL THEN ' ' || kind WHEN precision IS NOT NULL "
                               "THEN ' ' || precision ELSE '' END AS g, measured_s, predicted_s, measured_min_s, "
                               "measured_max_s FROM microbenchmarks WHERE run_id = ? AND predicted_s > 0 AND "
                               "measured_s > 0 ORDER BY g, idx", -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return;
    }
    sqlite3_bind_int64(q, 1, r->id);
    FILE *f = NULL;
    char groups[16][48];
    int ng = 0;
    double lo = INFINITY, hi = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *g = (const char *)sqlite3_column_text(q, 0);
        if (!f && !(f = open_in(p, "micro", ".dat"))) break;
        if (!ng || strcmp(groups[ng - 1], g ? g : "")) {
            if (ng == 16) break;
            if (ng) fputs("\n\n", f);
            snprintf(groups[ng++], sizeof groups[0], "%s", g ? g : "");
            fprintf(f, "# %s: measured median s, predicted s, measured min s, measured max s\n", g ? g : "");
        }
        double m = sqlite3_column_double(q, 1), pr = sqlite3_column_double(q, 2);
        fprintf(f, "%.9g %.9g %.9g %.9g\n", m, pr, sqlite3_column_double(q, 3), sqlite3_column_double(q, 4));
        lo = fmin(lo, fmin(m, pr));
        hi = fmax(hi, fmax(m, pr));
    }
    sqlite3_finalize(q);
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

/* ---- running gnuplot ----------------------------------------------------- */

/* Run PROGRAM script in dir with its output in log. Returns the exit
 * status (127: could not be started). */
static int run_gnuplot(const char *prog, const char *dir, const char *script, const char *log) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);                      /* the CLI ignores it; gnuplot gets the default */
        if (chdir(dir) != 0) _exit(126);
        /* O_NONBLOCK: a FIFO without a reader in place of the log is no log, not a wait */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644), nul = open("/dev/null", O_RDONLY);
        if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        if (nul >= 0) {
            dup2(nul, 0);
            close(nul);
        }
        execlp(prog, prog, script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The SVG exists and ends with </svg> (gnuplot finished it). */
static int svg_complete(const char *dir, const char *file) {
    char path[4096], tail[65] = "";
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int ok = 0;
    if (fseek(f, -64, SEEK_END) == 0 || fseek(f, 0, SEEK_SET) == 0) {
        size_t n = fread(tail, 1, 64, f);
        tail[n] = 0;
        ok = strstr(tail, "</svg>") != NULL;
    }
    fclose(f);
    return ok;
}

void charts_draw(sqlite3 *db, const rundata *r, const char *dir, const char *prefix, charts *out) {
    memset(out, 0, sizeof *out);
    plan p = { .out = out, .dir = dir, .prefix = prefix };
    p.unit = charts_time_unit(r->simulated_s, &p.unit_s);
    char script[128], log[128];
    snprintf(script, sizeof script, "%scharts.gp", prefix);
    snprintf(log, sizeof log, "%scharts.log", prefix);
    char gpath[4096], why[1024];
    snprintf(gpath, sizeof gpath, "%s/%s", dir, script);
    if (fileout_open(&p.gpo, gpath, 0, 0666, why, sizeof why) != 0) {
        snprintf(out->note, sizeof out->note, "charts not drawn: %.400s", why);
        return;
    }
    p.gp = p.gpo.f;
    fprintf(p.gp, "# Charts of run %lld (", (long long)r->id);
    for (const char *z = r->scenario; *z; z++)          /* a line break would end the comment */
        fputc((unsigned char)*z < 0x20 ? ' ' : *z, p.gp);
    fprintf(p.gp, "), drawn by `clustertwin report`: gnuplot %s\n"
                  "set terminal svg size 960,360 fixed noenhanced font 'Helvetica,12' background rgb 'white'\n"
                  "set encoding utf8\n",
            script);
    if (r->simulated_s > 0) {
        util_chart(&p, db, r);
        cost_chart(&p, db, r);
        failures_chart(&p, db, r);
        progress_chart(&p, db, r);
    }
    steps_chart(&p, r);
    waits_chart(&p, r);
    latency_chart(&p, r);
    micro_chart(&p, db, r);
    fprintf(p.gp, "\nunset output\n");
    if (fileout_close(&p.gpo, why, sizeof why) != 0) {
        snprintf(out->note, sizeof out->note, "charts not drawn: %.400s", why);
        return;
    }
    if (p.n == 0) {                          /* nothing to draw (no time simulated, no jobs) */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, script);
        unlink(path);
        return;
    }

    for (int i = 0; i < p.n; i++)
        if (!charts_svg_target_ok(dir, p.planned[i].file)) {
            snprintf(out->note, sizeof out->note, "charts not drawn: %.300s/%s is not a regular file (gnuplot would "
                     "wait on it or replace it)", dir, p.planned[i].file);
            return;
        }
    const char *prog = getenv("CLUSTERTWIN_GNUPLOT");
    if (!prog || !*prog) prog = "gnuplot";
    int st = run_gnuplot(prog, dir, script, log);
    for (int i = 0; i < p.n; i++)
        if (svg_complete(dir, p.planned[i].file)) out->c[out->n++] = p.planned[i];
    if (st == 127 && out->n == 0)
        snprintf(out->note, sizeof out->note, "Charts are not drawn: %s could not be run (install Debian's "
                 "gnuplot-nox, or point CLUSTERTWIN_GNUPLOT at gnuplot); their data and script are in %s "
                 "(%s).", prog, dir, script);
    else if (st != 0 || out->n < p.n)
        snprintf(out->note, sizeof out->note, "gnuplot drew %d of %d charts (exit status %d; its messages are in "
                 "%s/%s).", out->n, p.n, st, dir, log);
    char logpath[4096];
    struct stat sb;
    snprintf(logpath, sizeof logpath, "%s/%s", dir, log);
    if (st == 0 && stat(logpath, &sb) == 0 && sb.st_size == 0) unlink(logpath);
}

int charts_gnuplot(const char *dir, const char *script, const char *log) {
    const char *prog = getenv("CLUSTERTWIN_GNUPLOT");
    if (!prog || !*prog) prog = "gnuplot";
    return run_gnuplot(prog, dir, script, log);
}

int charts_svg_complete(const char *dir, const char *file) { return svg_complete(dir, file); }

int charts_svg_target_ok(const char *dir, const char *file) {
    char path[4096], target[FILEOUT_PATH_MAX];
    int exists;
    unsigned mode;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (fileout_resolve(path, target, sizeof target, &exists, &mode) != 0) return 0;
    return !exists || S_ISREG(mode);
}
