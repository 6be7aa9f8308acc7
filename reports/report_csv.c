/*
 * report_csv: the CSV files of a run (or two, compared): the database's
 * own rows (runs, jobs, failures, events, series) as they are stored, and
 * the report's figures (summary, queues, compare), all in full precision
 * (%.10g), never in the rounded style of the HTML.
 */
#include "reports/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fileout.h"

/* One table's rows as CSV: the header, then numbers as they are and texts
 * escaped (fileout_csv); a NULL is an empty cell. */
static void csv_row(void *ctx, int ncol, const char *const *z, const unsigned char *number) {
    FILE *f = ctx;
    for (int i = 0; i < ncol; i++) {
        if (i) fputc(',', f);
        if (!z[i]) continue;
        if (number[i]) fputs(z[i], f);           /* a number, not text */
        else fileout_csv(f, z[i]);
    }
    fputs("\n", f);
}

/* The rows of table for runs a and b as DIR/name with a header. */
static int csv_table(rundata_db *rd, const char *dir, const char *name, rd_rows table, int64_t a, int64_t b,
                     char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return 1;
    if (rundata_rows(rd, table, a, b, csv_row, o.f, err, errlen) != 0) {
        fileout_abort(&o);
        return 1;
    }
    return fileout_close(&o, err, errlen);
}

/* summary.csv: the report's own figures and the answer, per run. */
static int csv_summary(rundata_db *rd, const char *dir, const rundata *a, const rundata *b, char *err, size_t errlen) {
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
        answer(rd, r, &m, sentence, sizeof sentence);
        fprintf(f, "%lld,answer,,", (long long)r->id);
        fileout_csv(f, "Answer");
        fputc(',', f);
        fileout_csv(f, sentence);
        fputc('\n', f);
    }
    return fileout_close(&o, err, errlen);
}

/* queues.csv: the per-queue figures of the report, per run. */
static int csv_queues(const char *dir, const rundata *a, const rundata *b, char *err, size_t errlen) {
    char path[4096];
    fileout o;
    FILE *f;
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
    return fileout_close(&o, err, errlen);
}

/* compare.csv: each headline figure of both runs and their difference. */
static int csv_compare(const char *dir, const rundata *a, const rundata *b, char *err, size_t errlen) {
    char path[4096];
    fileout o;
    snprintf(path, sizeof path, "%s/compare.csv", dir);
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return 1;
    FILE *f = o.f;
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
    return fileout_close(&o, err, errlen);
}

int report_csv(rundata_db *rd, const char *dir, const rundata *a, const rundata *b, char *err, size_t errlen) {
    int64_t ia = a->id, ib = b ? b->id : a->id;
    static const struct { const char *name; rd_rows table; } files[] = {
        { "runs.csv", RD_ROWS_RUNS },         { "jobs.csv", RD_ROWS_JOBS },     { "failures.csv", RD_ROWS_FAILURES },
        { "events.csv", RD_ROWS_EVENTS },     { "series.csv", RD_ROWS_SERIES },
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (csv_table(rd, dir, files[i].name, files[i].table, ia, ib, err, errlen)) return 1;
    if (csv_summary(rd, dir, a, b, err, errlen) || csv_queues(dir, a, b, err, errlen)) return 1;
    return b ? csv_compare(dir, a, b, err, errlen) : 0;
}
