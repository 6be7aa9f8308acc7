/*
 * sweepreport: tables and charts of a sweep (see sweepreport.h).
 *
 * Everything comes from the database through the reader
 * (reports/rundata_sweep.h): the sweep's paths, its points and, per point
 * and metric, the replicas' values, summarised by goal_stats_of. A sweep
 * of P points, M metrics and R replicas reads P*M small queries over P*R
 * runs' JSON: a 100-point, 10-replica sweep reports in well under a
 * second. This file loads the sweep and writes the terminal table, the
 * stored statistics, Markdown and CSV; the HTML page and its pictures are
 * in sweepreport_html.c and sweepreport_charts.c.
 */
#include "reports/sweepreport.h"
#include "reports/sweepreport_int.h"
#include "base/errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/confidence.h"
#include "reports/fileout.h"
#include "reports/sweepdb.h"

static void sdata_free(sdata *d) {
    rundata_sweep_free(&d->s);
    free(d->stat);
    d->stat = NULL;
}

static void add_metric(sdata *d, const char *z) {
    char e[256];
    if (d->n_metrics < MAX_METRICS && goal_metric_parse(z, &d->m[d->n_metrics], e, sizeof e) == 0) d->n_metrics++;
}

/* The metrics: the cluster's, then each training job's, service's and
 * queue's headline figures (of the names one of the sweep's runs has). */
static void find_metrics(sdata *d) {
    static const char *const base[] = { "simulated_s", "cluster.cost_usd", "cluster.gpu_utilization",
                                        "cluster.energy_kwh", "failures.total", NULL };
    static const char *const train[] = { "end_s", "ettr", "lost_work_s", "interruptions", "checkpoint_interval_s",
                                         "time.checkpoint_stall_s", "time.waiting_for_nodes_s", NULL };
    static const char *const serve[] = { "ttft_p99_s", "tpot_p99_s", "e2e_p99_s", "slo_attainment",
                                         "output_tokens_per_s", NULL };
    static const char *const queue[] = { "mean_wait_s", "p95_wait_s", NULL };
    static const char *const *const fields[RD_SWEEP_KINDS] = { train, serve, queue };
    static const char *const array[RD_SWEEP_KINDS] = { "jobs", "services", "queues" };
    for (int i = 0; base[i]; i++) add_metric(d, base[i]);
    for (int k = 0; k < RD_SWEEP_KINDS; k++)
        for (int n = 0; n < d->s.n_names[k]; n++)
            for (int i = 0; fields[k][i]; i++) {
                char z[256];
                snprintf(z, sizeof z, "%s[%s].%s", array[k], d->s.names[k][n], fields[k][i]);
                add_metric(d, z);
            }
}

/* Every point's statistics of every metric, and which metrics vary. */
static int sdata_stats(rundata_db *rd, sdata *d, char *err, size_t errlen) {
    int np = d->s.n_points, nm = d->n_metrics;
    d->stat = calloc((size_t)(np ? np : 1) * (size_t)(nm ? nm : 1), sizeof *d->stat);
    if (!d->stat) {
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    for (int p = 0; p < np; p++)
        for (int m = 0; m < nm; m++) {
            double *v = NULL;
            int nv = 0;
            if (rundata_sweep_values(rd, &d->s, p, &d->m[m], &v, &nv, err, errlen) != STORE_OK) return 1;
            goal_stats_of(v, nv, &d->stat[p * nm + m]);
            free(v);
        }
    for (int m = 0; m < nm; m++) {
        const goal_stats *a = &d->stat[m];
        for (int p = 0; p < np; p++) {
            const goal_stats *b = sd_stat(d, p, m);
            if (b->n == 0) continue;
            if (b->p10 != b->p90 || (a->n && b->mean != a->mean) || b->missing) d->varies[m] = 1;
        }
    }
    return 0;
}

static int sdata_load(rundata_db *rd, int64_t sweep, sdata *d, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    int rc = rundata_sweep_load(rd, sweep, &d->s, err, errlen);
    if (rc) return rc;
    find_metrics(d);
    return sdata_stats(rd, d, err, errlen);
}

/* Open a reader on the store's file and load the sweep from it. */
static int sdata_load_store(store *st, int64_t sweep, rundata_db **rd, sdata *d, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    int rc = rundata_open(store_path(st), rd, err, errlen);
    return rc ? rc : sdata_load(*rd, sweep, d, err, errlen);
}

int sweepreport_store_stats(store *st, int64_t sweep, char *err, size_t errlen) {
    sdata d;
    rundata_db *rd = NULL;
    if (sdata_load_store(st, sweep, &rd, &d, err, errlen) != 0) {
        sdata_free(&d);
        rundata_close(rd);
        return 1;
    }
    int rc = sweepdb_batch(st, 1, err, errlen) == STORE_OK ? 0 : 1;
    for (int p = 0; p < d.s.n_points && rc == 0; p++)
        for (int m = 0; m < d.n_metrics && rc == 0 && !d.s.unfit[p]; m++) {
            const goal_stats *s = &d.stat[p * d.n_metrics + m];
            if (sweepdb_stat(st, d.s.id, d.s.key[p], d.m[m].text, "mean", s->n, s->missing, s->mean, s->mean_lo, s->mean_hi,
                             CONFIDENCE_LEVEL, err, errlen) != STORE_OK)
                rc = 1;
        }
    char e2[256];
    if (sweepdb_batch(st, 0, rc ? e2 : err, rc ? sizeof e2 : errlen) != STORE_OK) rc = 1;
    sdata_free(&d);
    rundata_close(rd);
    return rc;
}

int sweepreport_table(store *st, int64_t sweep, FILE *f) {
    sdata d;
    char err[1024];
    rundata_db *rd = NULL;
    if (sdata_load_store(st, sweep, &rd, &d, err, sizeof err) != 0) {
        fprintf(f, "(no table: %s)\n", err);
        sdata_free(&d);
        rundata_close(rd);
        return 1;
    }
    char same[4096] = "";
    size_t sn = 0;
    if (d.s.n_unfit) {
        fprintf(f, "\ndoes not fit (recorded, not run):\n");
        for (int p = 0; p < d.s.n_points; p++) {
            if (!d.s.unfit[p]) continue;
            fprintf(f, "  ");
            for (int a = 0; a < d.s.n_axes; a++) fprintf(f, "%s%s=%s", a ? " " : "", sweep_short_path(d.s.axes[a]), d.s.val[p][a]);
            fprintf(f, ": %s\n", d.s.unfit[p]);
        }
    }
    for (int m = 0; m < d.n_metrics; m++) {
        if (!d.varies[m]) {
            char v[64];
            if (d.s.n_points && d.stat[m].n) {
                int w = snprintf(same + sn, sizeof same - sn, "%s%s = %s", sn ? ", " : "", d.m[m].text, sweep_fmt(&d.m[m], d.stat[m].mean, v, sizeof v));
                if (w > 0 && (size_t)w < sizeof same - sn) sn += (size_t)w;
            }
            continue;
        }
        char name[256];
        if (sweep_metric_name(&d.m[m], name, sizeof name)) fprintf(f, "\n%s, %s (across replicas):\n", name, d.m[m].text);
        else fprintf(f, "\n%s (across replicas):\n", d.m[m].text);
        fprintf(f, "  ");
        for (int a = 0; a < d.s.n_axes; a++) fprintf(f, "%-22s ", sweep_short_path(d.s.axes[a]));
        fprintf(f, "%5s %12s %25s %12s %12s\n", "runs", "mean", "(95% CI of the mean)", "p10", "p90");
        for (int p = 0; p < d.s.n_points; p++) {
            const goal_stats *s = &d.stat[p * d.n_metrics + m];
            char a1[64], a2[64], a3[64], ci[160];
            fprintf(f, "  ");
            for (int a = 0; a < d.s.n_axes; a++) fprintf(f, "%-22s ", d.s.val[p][a]);
            if (d.s.unfit[p]) {
                fprintf(f, "%5d %12s\n", 0, "does not fit");
                continue;
            }
            sweep_ci_text(&d.m[m], s, ci, sizeof ci);
            fprintf(f, "%5d %12s %25s %12s %12s%s\n", s->n, sweep_fmt(&d.m[m], s->mean, a1, sizeof a1), ci,
                    sweep_fmt(&d.m[m], s->p10, a2, sizeof a2), sweep_fmt(&d.m[m], s->p90, a3, sizeof a3),
                    s->missing ? "  (some runs without a value)" : "");
        }
        char best[2048];
        if (sweep_best_sentence(&d, m, best, sizeof best) >= 0) fprintf(f, "  %s\n", best);
    }
    if (sn) fprintf(f, "\nthe same at every point: %s\n", same);
    sdata_free(&d);
    rundata_close(rd);
    return 0;
}

/* ---- files ----------------------------------------------------------------------- */

/* The best point of every metric with a direction, as a list. */
static void md_best(FILE *f, const sdata *d) {
    int any = 0;
    for (int m = 0; m < d->n_metrics; m++) {
        char b[2048];
        if (sweep_best_sentence(d, m, b, sizeof b) < 0) continue;
        fputs(any++ ? "- " : "\n- ", f);
        fileout_md(f, b);
        fputs("\n", f);
    }
}

static int write_md(const sdata *d, const char *dir, char *path, size_t pathlen, char *err, size_t errlen) {
    snprintf(path, pathlen, "%s/report.md", dir);
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return -1;
    FILE *f = o.f;
    fputs("# Sweep of ", f);
    fileout_md(f, d->s.scenario);
    fprintf(f, "\n\n%d points x %d replicas of ", d->s.n_points, d->s.replicas);
    fileout_md(f, d->s.file);
    fputs(". Varied:", f);
    for (int a = 0; a < d->s.n_axes; a++) {
        fputs(a ? ", " : " ", f);
        fileout_md(f, d->s.axes[a]);
    }
    fprintf(f, ".\n");
    md_best(f, d);
    for (int m = 0; m < d->n_metrics; m++) {
        if (!d->varies[m]) continue;
        char name[256], best[2048];
        fputs("\n## ", f);
        if (sweep_metric_name(&d->m[m], name, sizeof name)) {
            fileout_md(f, name);
            fputs(" (", f);
            fileout_md(f, d->m[m].text);
            fputs(")", f);
        } else {
            fileout_md(f, name);
        }
        if (sweep_best_sentence(d, m, best, sizeof best) >= 0) {
            fputs("\n\n", f);
            fileout_md(f, best);
        }
        fputs("\n\n|", f);
        for (int a = 0; a < d->s.n_axes; a++) {
            fputc(' ', f);
            fileout_md(f, sweep_short_path(d->s.axes[a]));
            fputs(" |", f);
        }
        fprintf(f, " runs | mean | 95%% CI of the mean | p10 | p90 |\n|");
        for (int a = 0; a < d->s.n_axes; a++) fprintf(f, "---|");
        fprintf(f, "--:|--:|--:|--:|--:|\n");
        for (int p = 0; p < d->s.n_points; p++) {
            const goal_stats *s = &d->stat[p * d->n_metrics + m];
            char b[3][64], ci[160];
            fprintf(f, "|");
            for (int a = 0; a < d->s.n_axes; a++) {
                fputc(' ', f);
                fileout_md(f, d->s.val[p][a]);
                fputs(" |", f);
            }
            if (d->s.unfit[p]) {
                fputs(" 0 | does not fit: ", f);
                fileout_md(f, d->s.unfit[p]);
                fputs(" | | | |\n", f);
                continue;
            }
            fprintf(f, " %d | %s | %s | %s | %s |\n", s->n, sweep_fmt(&d->m[m], s->mean, b[0], 64),
                    sweep_ci_text(&d->m[m], s, ci, sizeof ci), sweep_fmt(&d->m[m], s->p10, b[1], 64), sweep_fmt(&d->m[m], s->p90, b[2], 64));
        }
    }
    return fileout_close(&o, err, errlen) ? -1 : 0;
}

static int write_csv(const sdata *d, const char *dir, char *path, size_t pathlen, char *err, size_t errlen) {
    char file[4200];
    snprintf(path, pathlen, "%s", dir);
    snprintf(file, sizeof file, "%s/sweep.csv", dir);
    fileout o;
    if (fileout_open(&o, file, 0, 0666, err, errlen) != 0) return -1;
    FILE *f = o.f;
    for (int a = 0; a < d->s.n_axes; a++) {
        fileout_csv(f, d->s.axes[a]);
        fputc(',', f);
    }
    fprintf(f, "metric,runs,missing,mean,p10,p50,p90,min,max,mean_ci_low,mean_ci_high,ci_level,does_not_fit\n");
    for (int p = 0; p < d->s.n_points; p++)
        for (int m = 0; m < d->n_metrics; m++) {
            const goal_stats *s = &d->stat[p * d->n_metrics + m];
            for (int a = 0; a < d->s.n_axes; a++) {
                fileout_csv(f, d->s.val[p][a]);
                fputc(',', f);
            }
            fileout_csv(f, d->m[m].text);
            fprintf(f, ",%d,%d", s->n, s->missing);
            double v[] = { s->mean, s->p10, s->p50, s->p90, s->min, s->max, s->mean_lo, s->mean_hi };
            for (int i = 0; i < 8; i++) {
                if (isnan(v[i])) fprintf(f, ",");
                else fprintf(f, ",%.10g", v[i]);
            }
            fprintf(f, ",%g,", CONFIDENCE_LEVEL);
            if (d->s.unfit[p]) fileout_csv(f, d->s.unfit[p]);
            fprintf(f, "\n");
        }
    return fileout_close(&o, err, errlen) ? -1 : 0;
}

int sweepreport_write_from(rundata_db *rd, int64_t sweep, const report_opts *o, char *main_file, size_t mainlen,
                           char *notes, size_t noteslen, char *err, size_t errlen) {
    if (notes && noteslen) notes[0] = 0;
    sdata d;
    int rc = sdata_load(rd, sweep, &d, err, errlen);
    if (rc) {
        sdata_free(&d);
        return rc;
    }
    if (fileout_mkdirs(o->out_dir) != 0) {
        errmsg_set(err, errlen, "cannot create %s: %s", o->out_dir, strerror(errno));
        sdata_free(&d);
        return 1;
    }
    char note[1024] = "";
    int w = o->format == REPORT_CSV ? write_csv(&d, o->out_dir, main_file, mainlen, err, errlen)
            : o->format == REPORT_MD ? write_md(&d, o->out_dir, main_file, mainlen, err, errlen)
                                     : sweep_write_html(&d, o->out_dir, o->db_path, note, sizeof note, main_file,
                                                        mainlen, err, errlen);
    if (w < 0) rc = 1;
    if (note[0] && notes) snprintf(notes, noteslen, "%s\n", note);
    sdata_free(&d);
    return rc;
}

int sweepreport_write(store *st, int64_t sweep, const report_opts *o, char *main_file, size_t mainlen, char *notes,
                      size_t noteslen, char *err, size_t errlen) {
    rundata_db *rd = NULL;
    int rc = rundata_open(store_path(st), &rd, err, errlen);
    if (rc == 0) rc = sweepreport_write_from(rd, sweep, o, main_file, mainlen, notes, noteslen, err, errlen);
    rundata_close(rd);
    return rc;
}
