/*
 * report: HTML, Markdown and CSV views of stored runs (see report.h).
 *
 * The reader is a capacity-planning engineer who asked the scenario a
 * question; the report opens with the answer in one sentence, then the
 * headline figures as cards, then the charts and tables that explain
 * them, then the scenario itself. Everything is read from the database
 * through the one reader (reports/rundata.h); nothing is simulated again.
 * This file opens the reader, loads the runs and hands them to the writer
 * of the format asked for (reports/report_int.h lists them); the JSON
 * format is the run's own document, written here as it was stored.
 */
#include "reports/report.h"
#include "base/errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fileout.h"
#include "reports/report_int.h"
#include "reports/rundata_sweep.h"
#include "reports/sweepreport.h"

static void addnote(char *notes, size_t len, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void addnote(char *notes, size_t len, const char *format, ...) {
    if (!notes || !len) return;
    size_t n = strlen(notes);
    if (n + 2 >= len) return;
    va_list ap;
    va_start(ap, format);
    vsnprintf(notes + n, len - n - 1, format, ap);
    va_end(ap);
    n = strlen(notes);
    notes[n] = '\n';
    notes[n + 1] = 0;
}

/* The HTML report: the charts and topology drawn beside DIR/index.html.
 * One run: its own charts. Two: the charts overlaid on shared axes
 * (charts_compare) and each run's topology. */
static int write_html(rundata_db *rd, const report_opts *o, const rundata *a, const rundata *b, char *path,
                      size_t pathlen, char *notes, size_t noteslen, char *err, size_t errlen) {
    charts ch;
    char ta[80], tb[80], whya[1200] = "", whyb[1200] = "";
    if (b) charts_compare(rd, a, b, o->out_dir, &ch);
    else charts_draw(rd, a, o->out_dir, "", &ch);
    int has_ta = report_topology(a, o->out_dir, b ? "a-" : "", ta, sizeof ta, whya, sizeof whya), has_tb = 0;
    if (ch.note[0]) addnote(notes, noteslen, "%s", ch.note);
    if (b) has_tb = report_topology(b, o->out_dir, "b-", tb, sizeof tb, whyb, sizeof whyb);
    if (!has_ta) addnote(notes, noteslen, "%s", whya);
    snprintf(path, pathlen, "%s/index.html", o->out_dir);
    fileout fo;
    if (fileout_open(&fo, path, 0, 0666, err, errlen) != 0) return 1;
    if (b) report_html_compare(fo.f, rd, a, b, &ch, has_ta ? ta : NULL, has_tb ? tb : NULL, o->db_path);
    else report_html_run(fo.f, rd, a, &ch, has_ta ? ta : NULL, whya, o->db_path);
    return fileout_close(&fo, err, errlen);
}

static int write_md(rundata_db *rd, const report_opts *o, const rundata *a, const rundata *b, char *path,
                    size_t pathlen, char *err, size_t errlen) {
    snprintf(path, pathlen, "%s/report.md", o->out_dir);
    fileout fo;
    if (fileout_open(&fo, path, 0, 0666, err, errlen) != 0) return 1;
    if (b) report_md_compare(fo.f, rd, a, b);
    else report_md_run(fo.f, rd, a);
    return fileout_close(&fo, err, errlen);
}

/* DIR made (mkdir -p); 0, or 1 with err set. */
static int make_dir(const char *dir, char *err, size_t errlen) {
    if (fileout_mkdirs(dir) == 0) return 0;
    errmsg_set(err, errlen, "cannot create %s: %s", dir, strerror(errno));
    return 1;
}

/* The JSON results (DIR/results.json): the run's document as `run --json`
 * wrote it, byte for byte (its text, then the newline json_write_file
 * ends it with). One run: a comparison, or a database holding a sweep
 * without --run, is bad input (2). */
static int write_json(rundata_db *rd, const report_opts *o, char *path, size_t pathlen, char *notes,
                      size_t noteslen, char *err, size_t errlen) {
    int64_t sweep = 0;
    if (o->compare_id) {
        errmsg_set(err, errlen, "--format json writes one run's document: no --compare");
        return 2;
    }
    if (!o->run_id && rundata_sweep_latest(rd, &sweep)) {
        errmsg_set(err, errlen, "%s holds sweep %lld, which has no one JSON document: name a run with --run ID "
                                "(--list shows them)", o->db_path, (long long)sweep);
        return 2;
    }
    rd_document d;
    int rc = rundata_document(rd, o->run_id, &d, err, errlen);
    if (rc) return rc;
    if (strcmp(d.status, "complete"))
        addnote(notes, noteslen, "run %lld is incomplete (interrupted): its document holds the results so far",
                (long long)d.id);
    snprintf(path, pathlen, "%s/results.json", o->out_dir);
    fileout fo;
    if ((rc = make_dir(o->out_dir, err, errlen)) == 0 && (rc = fileout_open(&fo, path, 0, 0666, err, errlen)) == 0) {
        fputs(d.text, fo.f);
        fputc('\n', fo.f);
        rc = fileout_close(&fo, err, errlen);
    }
    rundata_document_free(&d);
    return rc ? 1 : 0;
}

/* Load run id into *r; on failure err names the database. */
static int load(rundata_db *rd, const char *db_path, int64_t id, rundata **r, char *err, size_t errlen) {
    char why[512];
    int rc = rundata_load(rd, id, r, why, sizeof why);
    if (rc) errmsg_set(err, errlen, "%s: %s", db_path, why);
    return rc;
}

int report_write(const report_opts *o, char *main_file, size_t mainlen, char *notes, size_t noteslen, char *err,
                 size_t errlen) {
    if (notes && noteslen) notes[0] = 0;
    rundata_db *rd = NULL;
    int rc = rundata_open(o->db_path, &rd, err, errlen);
    if (rc != 0) return rc;
    if (o->format == REPORT_JSON) {
        rc = write_json(rd, o, main_file, mainlen, notes, noteslen, err, errlen);
        rundata_close(rd);
        return rc;
    }
    int64_t sweep = 0;
    if (!o->run_id && !o->compare_id && rundata_sweep_latest(rd, &sweep)) {
        rc = sweepreport_write_from(rd, sweep, o, main_file, mainlen, notes, noteslen, err, errlen);
        rundata_close(rd);
        return rc;
    }
    rundata *a = NULL, *b = NULL;
    if ((rc = load(rd, o->db_path, o->run_id, &a, err, errlen)) != 0) goto out;
    if (o->compare_id > 0 && (rc = load(rd, o->db_path, o->compare_id, &b, err, errlen)) != 0) goto out;
    for (int k = 0; k < 2; k++) {
        const rundata *r = k ? b : a;
        if (r && strcmp(r->status, "complete"))
            addnote(notes, noteslen, "run %lld is incomplete (interrupted or still running): its figures are missing",
                    (long long)r->id);
    }
    if ((rc = make_dir(o->out_dir, err, errlen)) != 0) goto out;
    if (o->format == REPORT_CSV) {
        rc = report_csv(rd, o->out_dir, a, b, err, errlen);
        snprintf(main_file, mainlen, "%s", o->out_dir);
    } else if (o->format == REPORT_MD) {
        rc = write_md(rd, o, a, b, main_file, mainlen, err, errlen);
    } else {
        rc = write_html(rd, o, a, b, main_file, mainlen, notes, noteslen, err, errlen);
    }
out:
    rundata_free(a);
    rundata_free(b);
    rundata_close(rd);
    return rc;
}

int report_list(const char *path, FILE *f, char *err, size_t errlen) {
    rundata_db *rd = NULL;
    int rc = rundata_open(path, &rd, err, errlen);
    if (rc != 0) return rc;
    rd_run_row *runs = NULL;
    int n = 0;
    char why[512];
    rc = rundata_list(rd, &runs, &n, why, sizeof why);
    if (rc == 0) {
        fprintf(f, "%6s  %-10s  %-24s  %6s  %-20s  %12s  %10s\n", "run", "status", "scenario", "seed", "recorded",
                "simulated", "cost");
        for (int i = 0; i < n; i++) {
            char a[64], b[64];
            fprintf(f, "%6lld  %-10s  %-24s  %6lld  %-20s  %12s  %10s\n", (long long)runs[i].id, runs[i].status,
                    runs[i].scenario, runs[i].seed, runs[i].wall_started_at,
                    fmt_value(F_DUR, runs[i].simulated_s, a, sizeof a), fmt_value(F_USD, runs[i].cost_usd, b, sizeof b));
        }
    } else {
        errmsg_set(err, errlen, "%s: %s", path, why);
    }
    free(runs);
    rundata_close(rd);
    return rc;
}
