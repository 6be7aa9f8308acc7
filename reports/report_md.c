/*
 * report_md: the Markdown report (DIR/report.md): the same answer,
 * headline figures and tables as the HTML, no images. Every text goes
 * through fileout_md (no raw HTML, no markup, no | that ends a cell).
 */
#include "reports/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "reports/fileout.h"

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

void report_md_run(FILE *f, rundata_db *rd, const rundata *r) {
    figures m;
    char sentence[1024], b[96];
    figures_of(r, &m);
    answer(rd, r, &m, sentence, sizeof sentence);
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
            char s1[40], s2[40];
            snprintf(b, sizeof b, "%s / %s", nf_count(j->steps_done, s1, sizeof s1), nf_count(j->steps_total, s2, sizeof s2));
            md_cell(f, b);
            md_cell(f, fmt_value(F_SECONDS, j->step_time_s, b, sizeof b));
            md_cell(f, fmt_value(F_PCT, j->mfu, b, sizeof b));
            md_cell(f, fmt_value(F_PCT, j->ettr, b, sizeof b));
            nf_count(j->interruptions, b, sizeof b);
            md_cell(f, b);
            md_cell(f, fmt_value(F_DUR, j->lost_work_s, b, sizeof b));
            md_cell(f, fmt_value(F_DUR, j->end_s, b, sizeof b));
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
            md_cell(f, fmt_value(F_DUR, q[i].mean_wait_s, b, sizeof b));
            md_cell(f, fmt_value(F_DUR, q[i].p50_wait_s, b, sizeof b));
            md_cell(f, fmt_value(F_DUR, q[i].p95_wait_s, b, sizeof b));
            md_cell(f, fmt_value(F_DUR, q[i].max_wait_s, b, sizeof b));
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
            for (int p = 0; p < r->n_parts; p++) {  /* its classes and models */
                if (r->parts[p].parent != i) continue;
                fputs("|", f);
                for (int k = 0; k < nc; k++) md_cell(f, sv_cell(&r->parts[p], k, b, sizeof b));
                fputs("\n", f);
            }
        }
    }
    fputs("\n", f);
}

void report_md_compare(FILE *f, rundata_db *rd, const rundata *a, const rundata *b) {
    figures ma, mb;
    figures_of(a, &ma);
    figures_of(b, &mb);
    fprintf(f, "# Run %lld vs run %lld\n\n", (long long)a->id, (long long)b->id);
    /* Which scenario each column is (two hardware choices of one job
     * compared side by side: docs/rack-scale.md). */
    fprintf(f, "A: %s (seed %lld); B: %s (seed %lld).\n\n", a->scenario, a->seed, b->scenario, b->seed);
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
    report_md_run(f, rd, a);
    fputs("---\n\n", f);
    report_md_run(f, rd, b);
}

