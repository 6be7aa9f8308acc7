/*
 * report: a stored run (or two, compared) as HTML, Markdown or CSV; one
 * run's JSON results document as `run --json` wrote it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "reports/report.h"
#include "reports/store.h"
#include "reports/sweepreport.h"

static const char help[] =
    "usage: clustertwin report DB [--run ID] [--compare ID2] [--out DIR] [--format html|md|csv|json]\n"
    "       clustertwin report DB [--sweep ID] [--out DIR] [--format html|md|csv]\n"
    "       clustertwin report DB --list\n"
    "\n"
    "Write a report of a run stored in the results database DB (by 'clustertwin run\n"
    "FILE --db DB'; out/<scenario>.db by default).\n"
    "  --run ID        the run to report (default: the latest complete run)\n"
    "  --compare ID2   put run ID2 beside it, with the differences (absolute and %)\n"
    "  --out DIR       where to write (created when missing; default: DB without .db)\n"
    "  --format F      html (DIR/index.html with SVG charts and the topology, readable\n"
    "                  offline), md (DIR/report.md), csv (DIR/*.csv) or json\n"
    "                  (DIR/results.json: the run's JSON results, byte for byte what\n"
    "                  'run FILE --json' wrote; one run, no --compare or --sweep);\n"
    "                  default html\n"
    "  --sweep ID      report sweep ID ('clustertwin sweep'): each metric against the\n"
    "                  varied values, mean, p10 and p90 across replicas, as tables and\n"
    "                  charts; without --run this is the default for a database holding\n"
    "                  a sweep (the latest one)\n"
    "  --list          list the runs in DB\n"
    "Charts need gnuplot (Debian: gnuplot-nox; or CLUSTERTWIN_GNUPLOT=PATH); without it\n"
    "the report is written with a note instead of charts.\n"
    "Exit status: 0 ok, 1 the report could not be written, 2 bad input.\n";

/* A run id: a whole number >= 1. */
static int parse_id(const char *z, long long *out) {
    char *end;
    if (!z || !*z) return -1;
    long long v = strtoll(z, &end, 10);
    if (*end || v < 1) return -1;
    *out = v;
    return 0;
}

/* --format's word as a report_format. */
static int format_of(const char *z, report_format *out) {
    static const char *const words[] = { [REPORT_HTML] = "html", [REPORT_MD] = "md", [REPORT_CSV] = "csv",
                                         [REPORT_JSON] = "json" };
    for (size_t k = 0; k < sizeof words / sizeof *words; k++)
        if (!strcmp(z, words[k])) {
            *out = (report_format)k;
            return 0;
        }
    return -1;
}

int cmd_report(int argc, char **argv) {
    const char *sweep_z = NULL;
    const char *db = NULL, *run_z = NULL, *cmp_z = NULL, *out = NULL, *format = "html";
    int list = 0;
    const cli_option opts[] = {
        { "--run", NULL, CLI_VALUE, &run_z, "the run to report" },
        { "--compare", NULL, CLI_VALUE, &cmp_z, "put run ID2 beside it" },
        { "--out", NULL, CLI_VALUE, &out, "where to write" },
        { "--format", NULL, CLI_VALUE, &format, "html, md, csv or json" },
        { "--sweep", NULL, CLI_VALUE, &sweep_z, "report sweep ID" },
        { "--list", NULL, CLI_FLAG, &list, "list the runs in DB" },
        { NULL },
    };
    cli_spec spec = { "report", help, opts, CLI_ONE_DB, &db, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (!db) return cli_usage_error("report", "missing the results database DB");
    report_opts o = { .db_path = db };
    long long id;
    if (run_z) {
        if (parse_id(run_z, &id) < 0) return cli_usage_error("report", "--run %s: expected a run id (1, 2, ...)", run_z);
        o.run_id = id;
    }
    long long sweep_id = 0;
    if (sweep_z) {
        if (parse_id(sweep_z, &sweep_id) < 0)
            return cli_usage_error("report", "--sweep %s: expected a sweep id (1, 2, ...)", sweep_z);
        if (run_z || cmp_z) return cli_usage_error("report", "--sweep or --run/--compare, not both");
    }
    if (cmp_z) {
        if (parse_id(cmp_z, &id) < 0)
            return cli_usage_error("report", "--compare %s: expected a run id (1, 2, ...)", cmp_z);
        o.compare_id = id;
    }
    if (format_of(format, &o.format) < 0) return cli_usage_error("report", "--format %s: expected html, md, csv or json", format);
    if (o.format == REPORT_JSON && (cmp_z || sweep_z))
        return cli_usage_error("report", "--format json writes one run's JSON document: not with %s",
                               cmp_z ? "--compare" : "--sweep");
    if (out && !*out) return cli_usage_error("report", "--out needs a directory");

    char err[1024] = "";
    if (list) {
        int rc = report_list(db, stdout, err, sizeof err);
        if (rc) fprintf(stderr, "clustertwin report: %s\n", err);
        return rc;
    }
    char dir[4096];
    if (!out) {                                   /* DB without its .db */
        size_t n = strlen(db);
        snprintf(dir, sizeof dir, "%.*s", (int)(n > 3 && !strcmp(db + n - 3, ".db") ? n - 3 : n), db);
        if (!strcmp(dir, db)) snprintf(dir, sizeof dir, "%s-report", db);
        out = dir;
    }
    o.out_dir = out;
    char main_file[4200], notes[2048];
    int rc;
    if (sweep_id) {
        store *st = NULL;
        rc = store_open(db, STORE_READ, &st, err, sizeof err);
        if (rc == STORE_OK) rc = sweepreport_write(st, sweep_id, &o, main_file, sizeof main_file, notes, sizeof notes, err, sizeof err);
        store_close(st);
    } else {
        rc = report_write(&o, main_file, sizeof main_file, notes, sizeof notes, err, sizeof err);
    }
    if (rc) {
        fprintf(stderr, "clustertwin report: %s\n", err);
        return rc;
    }
    for (char *line = notes, *nl; *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n'))) break;
        fprintf(stderr, "clustertwin report: note: %.*s\n", (int)(nl - line), line);
    }
    printf("%s\n", main_file);
    return EXIT_OK;
}
