/*
 * report: a stored run (or two, compared) as a report a person reads:
 * `clustertwin report results.db [--run ID] [--compare ID2] --out DIR
 * [--format html|md|csv|json]`.
 *
 *   html  DIR/index.html, self-contained and readable offline (inline CSS,
 *         no script), with its charts (reports/charts.h: SVG by gnuplot)
 *         and the cluster's topology (reports/topo.h) as files beside it.
 *         Well-formed XHTML: an XML parser reads it.
 *   md    DIR/report.md: the same headline and tables, no images.
 *   csv   DIR/summary.csv (the headline figures), runs.csv, jobs.csv,
 *         queues.csv, failures.csv, events.csv, series.csv, and
 *         compare.csv with --compare.
 *   json  DIR/results.json: the run's JSON results, byte for byte what
 *         `clustertwin run FILE --json` wrote for it (jobs[] rebuilt from
 *         the jobs table when the run was stored without them:
 *         rundata_document). One run: no --compare, no sweep.
 *
 * The report reads the database only (the run's scenario is its stored
 * XML), so it can be written anywhere, any time after the run.
 */
#ifndef CT_REPORT_H
#define CT_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum report_format { REPORT_HTML, REPORT_MD, REPORT_CSV, REPORT_JSON } report_format;

typedef struct report_opts {
    const char *db_path;
    int64_t run_id;                  /* 0: the latest complete run (else the latest) */
    int64_t compare_id;              /* 0: no comparison */
    const char *out_dir;             /* created when missing */
    report_format format;
} report_opts;

/* Write the report. A database holding a sweep, with run_id and
 * compare_id 0, gets the report of its latest sweep (reports/sweepreport.h;
 * REPORT_JSON: status 2, a sweep has no one document, name a run).
 * Returns 0 and names the main file written in `main`
 * (DIR/index.html, DIR/report.md, DIR or DIR/results.json); 2 for bad
 * input (not a results database, no such run, a run without a document
 * or a comparison asked for as JSON) or 1 when something could not be written or
 * read, with err set to one line. Notes for the reader (a run that is
 * incomplete, charts not drawn) go into the report itself and, one line
 * each, into `notes` (may be NULL). */
int report_write(const report_opts *o, char *main, size_t mainlen, char *notes, size_t noteslen, char *err,
                 size_t errlen);

/* One line per run of the database at path: id, status, scenario, seed,
 * when, simulated time, cost. Same statuses as report_write. */
int report_list(const char *path, FILE *f, char *err, size_t errlen);

#endif
