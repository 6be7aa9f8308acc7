/*
 * report_run: the HTML report of one run. It opens with the answer in one
 * sentence and the headline cards, then the charts and tables that explain
 * them (GPUs over time, cost, failures, training, queues, services,
 * microbenchmarks, jobs, the cluster), then the scenario itself.
 */
#include "reports/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "base/units.h"
#include "reports/report_html.h"
#include "reports/topo.h"
#include "scenarios/scenario.h"

static void html_cards(FILE *f, const figures *m, const rundata *r) {
    fputs("<div class=\"cards\">\n", f);
    for (int i = 0; i < NM; i++) {
        if (!mdef[i].card || (mdef[i].card == 2 && !r->n_services)) continue;
        char v[64];
        fputs("<div class=\"card\"><div class=\"label\">", f);
        html_text(f, mdef[i].label);
        fputs("</div><div class=\"value\">", f);
        html_text(f, fmt_value(mdef[i].f, m->v[i], v, sizeof v));
        fputs("</div><div class=\"note\">", f);
        html_text(f, m->note[i]);
        fputs("</div></div>\n", f);
    }
    fputs("</div>\n", f);
}

void report_html_meta(FILE *f, const rundata *r, const char *db_path) {
    char a[64];
    fputs("<p class=\"meta\">", f);
    char w[64], e[64];
    html_textf(f, "Run %lld of %s: scenario %s (%s), seed %lld, clustertwin %s; %s simulated in %s of wall time "
          "(%s events); recorded %s.", (long long)r->id, db_path, r->scenario, r->scenario_file, r->seed,
       r->version, fmt_value(F_DUR, r->simulated_s, a, sizeof a), fmt_value(F_DUR, r->wall_s, w, sizeof w),
       fmt_value(F_COUNT, r->events, e, sizeof e), r->wall_started_at);
    fputs("</p>\n", f);
    if (strcmp(r->status, "complete")) {
        fputs("<p class=\"warn\">", f);
        html_textf(f, "Run %lld is incomplete: it was interrupted (or is still running) before its results were written. "
              "Only its scenario and the events written so far are stored; the figures below are missing.",
           (long long)r->id);
        fputs("</p>\n", f);
    }
}

static void html_failures_table(FILE *f, const rundata *r) {
    int any = 0;
    for (int i = 0; i < r->n_kinds; i++) any += r->kinds[i].count;
    if (!any) {
        fputs("<p class=\"note\">No component failed in this run.</p>\n", f);
        return;
    }
    static const char *const cols[] = { "cause", "component", "failures", "share", "one every", NULL };
    html_th(f, cols, "ttnnn");
    int zero = 0;
    for (int i = 0; i < r->n_kinds; i++) {
        const rd_kind *k = &r->kinds[i];
        if (!k->count) {
            zero++;
            continue;
        }
        char b[64];
        fputs("<tr>", f);
        html_td(f, k->cause, 0);
        html_td(f, k->component, 0);
        snprintf(b, sizeof b, "%d", k->count);
        html_td(f, b, 1);
        nf_pct((double)k->count / any, b, sizeof b);
        html_td(f, b, 1);
        html_td(f, fmt_value(F_DUR, r->simulated_s / k->count, b, sizeof b), 1);
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
    html_th(f, cols, "tntnnnnnnnnnn");
    for (int i = 0; i < r->n_jobs; i++) {
        const rd_job *j = &r->jobs[i];
        if (strcmp(j->kind, "training")) continue;
        char b[96], c[64];
        fputs("<tr>", f);
        html_td(f, j->name, 0);
        snprintf(b, sizeof b, "%d", j->gpus);
        html_td(f, b, 1);
        html_td(f, j->state, 0);
        char s1[40], s2[40];
        snprintf(b, sizeof b, "%s of %s", fmt_value(F_COUNT, j->steps_done, s1, sizeof s1), fmt_value(F_COUNT, j->steps_total, s2, sizeof s2));
        html_td(f, b, 1);
        html_td(f, fmt_value(F_SECONDS, j->step_time_s, b, sizeof b), 1);
        html_td(f, fmt_value(F_PCT, j->mfu, b, sizeof b), 1);
        nf_count(j->model_tflops_per_gpu, b, sizeof b);
        html_td(f, b, 1);
        nf_count(j->tokens_per_s_per_gpu, b, sizeof b);
        html_td(f, b, 1);
        html_td(f, fmt_value(F_PCT, j->ettr, b, sizeof b), 1);
        nf_count(j->interruptions, b, sizeof b);
        html_td(f, b, 1);
        html_td(f, fmt_value(F_DUR, j->lost_work_s, b, sizeof b), 1);
        if (j->checkpoints > 0)
        {
            char k[32];
            snprintf(b, sizeof b, "%s, every %s", nf_count(j->checkpoints, k, sizeof k),
                     fmt_value(F_DUR, j->checkpoint_interval_s, c, sizeof c));
        }
        else
            snprintf(b, sizeof b, "none");
        html_td(f, b, 1);
        nf_si(j->memory_bytes, "B", b, sizeof b);
        html_td(f, b, 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"caption\">Where each training job's time went, from its first start to its end "
          "(or the end of the run):</p>\n", f);
    html_th(f, cols2, "tnnnnnn");
    for (int i = 0; i < r->n_jobs; i++) {
        const rd_job *j = &r->jobs[i];
        if (strcmp(j->kind, "training")) continue;
        char b[64];
        double el = j->elapsed_s > 0 ? j->elapsed_s : NAN;
        fputs("<tr>", f);
        html_td(f, j->name, 0);
        html_td(f, fmt_value(F_DUR, j->elapsed_s, b, sizeof b), 1);
        double parts[] = { j->kept_s, j->redone_s, j->checkpoint_stall_s, j->restart_s, j->waiting_s };
        for (int k = 0; k < 5; k++) html_td(f, fmt_value(F_PCT, parts[k] / el, b, sizeof b), 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

static void html_queue_table(FILE *f, const qstat *q, int nq) {
    static const char *const cols[] = { "queue", "quota", "jobs", "done", "GPU-hours used", "mean wait",
                                        "median wait", "95th percentile wait", "longest wait", "slowdown", NULL };
    html_th(f, cols, "tnnnnnnnnn");
    for (int i = 0; i < nq; i++) {
        char b[64];
        fputs("<tr>", f);
        html_td(f, q[i].name, 0);
        if (isnan(q[i].quota_gpus) || q[i].quota_gpus <= 0) snprintf(b, sizeof b, "none");
        else nf_qty(q[i].quota_gpus, "GPU", "GPUs", b, sizeof b);
        html_td(f, b, 1);
        snprintf(b, sizeof b, "%d", q[i].jobs);
        html_td(f, b, 1);
        snprintf(b, sizeof b, "%d", q[i].done);
        html_td(f, b, 1);
        html_td(f, fmt_value(F_GPUH, q[i].gpu_hours, b, sizeof b), 1);
        html_td(f, fmt_value(F_DUR, q[i].mean_wait_s, b, sizeof b), 1);
        html_td(f, fmt_value(F_DUR, q[i].p50_wait_s, b, sizeof b), 1);
        html_td(f, fmt_value(F_DUR, q[i].p95_wait_s, b, sizeof b), 1);
        html_td(f, fmt_value(F_DUR, q[i].max_wait_s, b, sizeof b), 1);
        if (isnan(q[i].slowdown)) snprintf(b, sizeof b, "n/a");
        else snprintf(b, sizeof b, "%.2f", q[i].slowdown);
        html_td(f, b, 1);
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
        html_text(f, cols[k]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int i = 0; i < r->n_services; i++) {
        char b[128];
        fputs("<tr>", f);
        for (int k = 0; k < nc; k++) html_td(f, sv_cell(&r->services[i], k, b, sizeof b), sv_numeric[k] == 'n');
        fputs("</tr>\n", f);
        for (int p = 0; p < r->n_parts; p++) {      /* its classes and models (docs/serving-slo.md) */
            if (r->parts[p].parent != i) continue;
            fputs("<tr class=\"part\">", f);
            for (int k = 0; k < nc; k++) html_td(f, sv_cell(&r->parts[p], k, b, sizeof b), sv_numeric[k] == 'n');
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n<p class=\"caption\">TTFT: time to the first output token; TPOT: time per output "
          "token after it; end-to-end: from a request's arrival to its last token. SLO attainment: the share of "
          "requests that met the service's latency objectives (TTFT and TPOT); SLO goodput: those requests per second "
          "(the throughput that counts). A service's classes (each with its own SLO) and the models of a "
          "multiplexed service follow it on rows of their own.</p>\n", f);
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
    html_th(f, cols, "tttnttnnn");
    for (int i = 0; i < r->n_jobs && i < JOBS_LISTED; i++) {
        const rd_job *j = &r->jobs[i];
        char b[64];
        fputs("<tr>", f);
        html_td(f, j->name, 0);
        html_td(f, j->kind, 0);
        html_td(f, j->queue, 0);
        snprintf(b, sizeof b, "%d", j->gpus);
        html_td(f, b, 1);
        html_td(f, j->state, 0);
        html_td(f, fmt_value(F_DUR, j->submit_s, b, sizeof b), 1);
        html_td(f, fmt_value(F_DUR, j->start_s, b, sizeof b), 1);
        html_td(f, fmt_value(F_DUR, j->end_s, b, sizeof b), 1);
        html_td(f, fmt_value(F_DUR, j->queue_wait_s, b, sizeof b), 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n</details>\n", f);
}

/* Draw the run's cluster to DIR/PREFIXtopology.svg from its stored
 * scenario. Returns 1 when drawn; else 0 with why set. */
int report_topology(const rundata *r, const char *dir, const char *prefix, char *file, size_t flen, char *why,
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

void report_html_scenario(FILE *f, const rundata *r) {
    fputs("<details><summary>", f);
    html_textf(f, "The scenario (%s, as it was when run %lld was recorded)", r->scenario_file, (long long)r->id);
    fputs("</summary>\n<pre>", f);
    html_text(f, r->scenario_xml);
    fputs("</pre>\n</details>\n", f);
}
static int cmp_abs(const void *a, const void *b) {
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

/* Where the microbenchmarks ran and what predicted them, one paragraph. */
static void micro_where(FILE *f, rundata_db *rd, const rundata *r) {
    rd_hardware hw;
    rundata_hardware(rd, r, &hw);
    if (!hw.found) return;
    fputs("<p>", f);
    if (hw.backend[0])
        html_textf(f, "Measured with the %s backend on %s (%s; %s; %s; %d process%s). ", hw.backend,
                   hw.host[0] ? hw.host : "?", hw.cpu, hw.devices, hw.libraries, hw.ranks, hw.ranks == 1 ? "" : "es");
    if (hw.profile[0]) html_textf(f, "Predicted by the host profile %s (%s).", hw.profile, hw.profile_source);
    fputs("</p>\n", f);
}

/* "gemm bf16 4096x4096x4096", "all_reduce 8 ranks 1 GiB", ... */
static void micro_label(const rd_micro *c, char *label, size_t n) {
    char b[64];
    if (!strcmp(c->op, "gemm"))
        snprintf(label, n, "gemm %s %dx%dx%d", c->precision, c->m, c->n, c->k);
    else if (!strcmp(c->op, "copy"))
        snprintf(label, n, "copy %s %s", c->kind, units_format(c->size_bytes, UNIT_SIZE, b, sizeof b));
    else if (!strcmp(c->op, "storage-write"))
        snprintf(label, n, "storage-write %s in %d file(s)", units_format(c->size_bytes, UNIT_SIZE, b, sizeof b),
                 c->files);
    else
        snprintf(label, n, "%s %d ranks %s", c->op, c->ranks, units_format(c->size_bytes, UNIT_SIZE, b, sizeof b));
}

static void micro_row(FILE *f, const rd_micro *c) {
    char label[128], b[4][64], e[32] = "-";
    int has_p = !isnan(c->predicted_s), has_m = !isnan(c->measured_s);
    micro_label(c, label, sizeof label);
    fputs("<tr>", f);
    html_td(f, label, 0);
    html_td(f, has_p ? nf_duration(c->predicted_s, b[0], sizeof b[0]) : "-", 1);
    html_td(f, has_m ? nf_duration(c->measured_s, b[1], sizeof b[1]) : "-", 1);
    char lo[32], hi[32];
    snprintf(b[2], sizeof b[2], "%s .. %s", nf_duration(c->measured_min_s, lo, sizeof lo),
             nf_duration(c->measured_max_s, hi, sizeof hi));
    html_td(f, has_m ? b[2] : "-", 1);
    snprintf(b[3], sizeof b[3], "%d", c->reps);
    html_td(f, has_m ? b[3] : "-", 1);
    if (!isnan(c->error_pct)) snprintf(e, sizeof e, "%+.1f%%", c->error_pct);
    html_td(f, e, 1);
    html_td(f, c->note, 0);
    fputs("</tr>\n", f);
}

/* Microbenchmarks measured on hardware: where, the chart, and a table of
 * predicted vs measured with the error per case (nothing when the run
 * measured none). */
static void html_microbench(FILE *f, rundata_db *rd, const rundata *r, const charts *ch) {
    rd_micro *c = NULL;
    int rows = rundata_micro(rd, r, &c);
    if (rows <= 0) {
        free(c);
        return;
    }
    html_h2(f, "microbenchmarks", "Predicted vs measured");
    micro_where(f, rd, r);
    const chart *chart_ = charts_find(ch, "micro");
    if (chart_) html_figure(f, chart_);
    fputs("<table>\n", f);
    static const char *const cols[] = { "case", "predicted", "measured (median)", "fastest .. slowest",
                                        "reps", "error", "note", NULL };
    html_th(f, cols, "tnnnnnt");
    double *err = malloc((size_t)rows * sizeof *err);
    int measured = 0, ne = 0;
    for (int i = 0; i < rows; i++) {
        micro_row(f, &c[i]);
        measured += !isnan(c[i].measured_s);
        if (err && !isnan(c[i].error_pct)) err[ne++] = c[i].error_pct;
    }
    fputs("</table>\n<p>", f);
    if (ne > 0) {
        qsort(err, (size_t)ne, sizeof *err, cmp_abs);
        double med = ne % 2 ? fabs(err[ne / 2]) : (fabs(err[ne / 2 - 1]) + fabs(err[ne / 2])) / 2;
        html_textf(f, "%d of %d cases predicted and measured: median |error| %.1f%%, max |error| %.1f%% (error = "
                      "(predicted - measured) / measured).", ne, rows, med, fabs(err[ne - 1]));
    } else {
        html_textf(f, "%d cases, %d measured; none both predicted and measured.", rows, measured);
    }
    fputs("</p>\n", f);
    free(err);
    free(c);
}

void report_html_run(FILE *f, rundata_db *rd, const rundata *r, const charts *ch, const char *topo, const char *topo_why,
                     const char *db_path) {
    figures m;
    char sentence[1024];
    figures_of(r, &m);
    answer(rd, r, &m, sentence, sizeof sentence);
    char title[256];
    snprintf(title, sizeof title, "%s: clustertwin report, run %lld", r->scenario, (long long)r->id);
    html_head(f, title);
    fputs("<h1>", f);
    html_text(f, r->scenario);
    fprintf(f, " <small>run %lld, seed %lld</small></h1>\n<p class=\"answer\">", (long long)r->id, r->seed);
    html_text(f, sentence);
    fputs("</p>\n", f);
    html_cards(f, &m, r);
    report_html_meta(f, r, db_path);
    if (ch->note[0]) {
        fputs("<p class=\"warn\">", f);
        html_text(f, ch->note);
        fputs("</p>\n", f);
    }

    const chart *c;
    html_h2(f, "gpus", "GPUs over time");
    if ((c = charts_find(ch, "util"))) html_figure(f, c);
    char b[6][64];
    fputs("<p>", f);
    html_textf(f, "GPU-hours by state: training %s, stalled for checkpoints %s, restarting %s, batch jobs %s, serving %s, "
          "idle %s.",
       fmt_value(F_GPUH, r->hours_training, b[0], sizeof b[0]), fmt_value(F_GPUH, r->hours_checkpoint, b[1], sizeof b[1]),
       fmt_value(F_GPUH, r->hours_restarting, b[2], sizeof b[2]), fmt_value(F_GPUH, r->hours_batch, b[3], sizeof b[3]),
       fmt_value(F_GPUH, r->hours_serving, b[5], sizeof b[5]), fmt_value(F_GPUH, r->hours_idle, b[4], sizeof b[4]));
    fputs("</p>\n", f);
    if ((c = charts_find(ch, "cost"))) {
        html_h2(f, "cost", "Cost");
        html_figure(f, c);
    }
    html_h2(f, "failures", "Failures and recovery");
    if ((c = charts_find(ch, "failures"))) html_figure(f, c);
    html_failures_table(f, r);
    if (rundata_main_job(r)) {
        html_h2(f, "training", "Training");
        if ((c = charts_find(ch, "progress"))) html_figure(f, c);
        if ((c = charts_find(ch, "steps"))) html_figure(f, c);
        html_training_table(f, r);
    }
    qstat *q = NULL;
    int nq = queue_stats(r, &q);
    if (nq > 0) {
        html_h2(f, "queues", "Queues");
        if ((c = charts_find(ch, "waits"))) html_figure(f, c);
        html_queue_table(f, q, nq);
    }
    free(q);
    if (r->n_services) {
        html_h2(f, "services", "Inference services");
        if ((c = charts_find(ch, "latency"))) html_figure(f, c);
        html_services_table(f, r);
    }
    html_microbench(f, rd, r, ch);
    if (r->n_jobs) {
        html_h2(f, "jobs", "Jobs");
        html_jobs_table(f, r);
    }
    html_h2(f, "cluster", "Cluster");
    fputs("<p>", f);
    char nn[64], ng[64], nd[64];
    html_textf(f, "%s, %s; %s drained as lemons.", nf_qty(r->nodes, "node", "nodes", nn, sizeof nn),
               nf_qty(r->gpus, "GPU", "GPUs", ng, sizeof ng), nf_qty(r->nodes_drained, "node", "nodes", nd, sizeof nd));
    fputs("</p>\n", f);
    if (topo) {
        chart t = { "topology", "", "Cluster topology", "Switches, node groups, NICs and link speeds, storage and "
                                                        "spares, drawn from the scenario with Graphviz." };
        snprintf(t.file, sizeof t.file, "%s", topo);
        html_figure(f, &t);
    } else {
        fputs("<p class=\"note\">", f);
        html_text(f, topo_why);
        fputs("</p>\n", f);
    }
    report_html_scenario(f, r);
    fputs("<p class=\"meta\">Written by <code>clustertwin report</code>. The charts' data and gnuplot script are "
          "in this directory; the database holds every event and series point (see the README's "
          "\"Results database\").</p>\n</body>\n</html>\n", f);
}
