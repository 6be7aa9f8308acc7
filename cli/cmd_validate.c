/*
 * validate: measure a scenario's microbenchmarks with a hardware backend
 * and print them next to the models' predictions, with the error per case
 * and the median and max |error|; or (--published DIR) replay the
 * published cases of a validation folder through the models
 * (plan/published.h) and report them (reports/published_report.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "plan/published.h"
#include "scenarios/scenario.h"

static const char help[] =
    "usage: clustertwin validate FILE --backend cpu|mpi|cuda|nccl [--profile P] [--db PATH | --no-db]\n"
    "                            [--statistic min|median] [--json PATH|-] [--quiet]\n"
    "       clustertwin validate --published DIR [--json PATH|-] [--html PATH] [--quiet]\n"
    "                            [--only training|collectives|failures|inference]\n"
    "                            [--set calibration|heldout] [--fail-over PCT]\n"
    "\n"
    "Measure the <microbenchmarks> of scenario FILE on this machine and print predicted vs\n"
    "measured: time and rate per case, the error 100 (predicted - measured) / measured, and\n"
    "the median and max |error| over the cases both predicted and measured.\n"
    "  --backend B   cpu, mpi (under mpirun; only rank 0 writes), cuda or nccl\n"
    "  --profile P   price the cases with the hardware profile P ('clustertwin calibrate'):\n"
    "                cpu and mpi cases by its host parameters (else the scenario's\n"
    "                <host-profile>, else a generic host), cuda and nccl cases by the GPU\n"
    "                models with its <gpu-profile>'s calibrated values (docs/gpu-calibration.md)\n"
    "  --db PATH     store the run, predictions and measurements (default out/<scenario>.db);\n"
    "                'clustertwin report' charts predicted vs measured\n"
    "  --statistic S what measured_s is: min, the fastest repetition (default; it repeats from\n"
    "                session to session on a shared machine), or median; both are recorded\n"
    "  --json PATH   write the results JSON with measured_* and error_pct ('-' = stdout)\n"
    "  --quiet       no progress lines (--published: no table)\n"
    "\n"
    "--published DIR: replay every published case in the CSVs of DIR (e.g. tests/validation)\n"
    "through the models and print, per case, the published figure, the prediction, the\n"
    "signed error, the case's set and mechanism tags and its source; then the median |error|,\n"
    "max |error| and median signed error per file, per set and per mechanism tag\n"
    "(docs/validation.md).\n"
    "  --html PATH   also write the report as one self-contained HTML page\n"
    "  --only KIND   only the cases of one kind: training, collectives, failures, inference\n"
    "  --set S       only the cases of one set: calibration or heldout\n"
    "  --fail-over P exit 1 when any case's |error| exceeds P percent\n"
    "Exit status: 0 ok, 1 a measurement failed (--published: a case over --fail-over, or a\n"
    "write failed), 2 bad input (a malformed row: file:line) or the backend is unavailable.\n";

/* --published DIR: the cases, the report; the exit status. */
static int published(const char *dir, const char *json_path, const char *html_path, const char *only,
                     const char *set, const char *fail_over, int quiet) {
    published_filter flt = { .kind = only ? pubrep_kind_parse(only) : -1, .set = set };
    char *end = NULL, err[4096];
    double over = fail_over ? strtod(fail_over, &end) : 0;
    if (only && flt.kind < 0)
        return cli_usage_error("validate", "--only %s: expected training, collectives, failures or inference", only);
    if (set && strcmp(set, "calibration") && strcmp(set, "heldout"))
        return cli_usage_error("validate", "--set %s: expected calibration or heldout", set);
    if (fail_over && (end == fail_over || *end || !(over >= 0) || !isfinite(over)))
        return cli_usage_error("validate", "--fail-over %s: expected a percentage >= 0", fail_over);
    pubrep r = { 0 };
    int rc = published_run(dir, &flt, &r, err, sizeof err);
    if (rc == EXIT_OK && pubrep_summarize(&r) < 0) {
        snprintf(err, sizeof err, "out of memory");
        rc = EXIT_RUN_FAILED;
    }
    if (rc != EXIT_OK) fprintf(stderr, "clustertwin validate: %s\n", err);
    if (rc == EXIT_OK && !quiet && !(json_path && !strcmp(json_path, "-"))) pubrep_table(stdout, &r);
    if (rc == EXIT_OK && json_path && pubrep_json(&r, json_path, err, sizeof err) < 0) rc = EXIT_RUN_FAILED;
    if (rc == EXIT_OK && html_path && pubrep_html(&r, html_path, err, sizeof err) < 0) rc = EXIT_RUN_FAILED;
    if (rc == EXIT_RUN_FAILED && r.cases) fprintf(stderr, "clustertwin validate: %s\n", err);
    for (size_t i = 0; rc == EXIT_OK && fail_over && i < r.n; i++)
        if (fabs(pubrep_error_pct(&r.cases[i])) > over) rc = EXIT_RUN_FAILED;
    if (rc == EXIT_RUN_FAILED && fail_over && !quiet)
        fprintf(stderr, "clustertwin validate: a case's |error| exceeds --fail-over %s%%\n", fail_over);
    pubrep_free(&r);
    return rc;
}

int cmd_validate(int argc, char **argv) {
    const char *file = NULL, *backend = NULL, *profile = NULL, *db = NULL, *json_path = NULL, *statistic = NULL;
    const char *dir = NULL, *html_path = NULL, *only = NULL, *set = NULL, *fail_over = NULL;   /* --published */
    int no_db = 0, quiet = 0;
    const cli_option opts[] = {
        { "--published", NULL, CLI_VALUE, &dir, "replay the published cases in the CSVs of DIR" },
        { "--html", NULL, CLI_VALUE, &html_path, "--published: also write the report as an HTML page" },
        { "--only", NULL, CLI_VALUE, &only, "--published: only one kind of case" },
        { "--set", NULL, CLI_VALUE, &set, "--published: only the cases of one set" },
        { "--fail-over", NULL, CLI_VALUE, &fail_over, "--published: exit 1 when a case's |error| exceeds PCT" },
        { "--backend", NULL, CLI_VALUE, &backend, "cpu, mpi, cuda or nccl" },
        { "--profile", NULL, CLI_VALUE, &profile, "price the cases with hardware profile P" },
        { "--statistic", NULL, CLI_VALUE, &statistic, "what measured_s is: min or median" },
        { "--db", NULL, CLI_VALUE, &db, "store the run, predictions and measurements" },
        { "--json", NULL, CLI_VALUE, &json_path, "write the results JSON ('-': stdout)" },
        { "--no-db", NULL, CLI_FLAG, &no_db, "do not store the run" },
        { "--quiet", "-q", CLI_FLAG, &quiet, "no progress lines" },
        { NULL },
    };
    cli_spec spec = { "validate", help, opts, CLI_ONE_FILE_SHORT, &file, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (dir && (file || backend || profile || db || no_db || statistic))
        return cli_usage_error("validate", "--published takes no scenario FILE, --backend, --profile, --db, "
                                           "--no-db or --statistic");
    if (dir) return published(dir, json_path, html_path, only, set, fail_over, quiet);
    if (html_path || only || set || fail_over)
        return cli_usage_error("validate", "--html, --only, --set and --fail-over need --published DIR");
    if (!file) return cli_usage_error("validate", "missing scenario FILE");
    if (!backend) return cli_usage_error("validate", "missing --backend cpu|mpi|cuda|nccl");
    if (db && no_db) return cli_usage_error("validate", "--db and --no-db together");
    if (cli_check_statistic("validate", statistic) != EXIT_OK) return EXIT_BAD_INPUT;
    char err[2048], default_db[SC_NAME_MAX + 16];
    scenario *s = NULL;
    if (scenario_load(file, &s, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    if (cli_apply_profile("validate", s, profile) != EXIT_OK) {
        scenario_free(s);
        return EXIT_BAD_INPUT;
    }
    if (!db && !no_db) {
        cli_default_db(s->name, "", default_db, sizeof default_db);
        cli_mkdir_parent(default_db);
        db = default_db;
    }
    int rc = cli_hw_session("validate", s, backend, profile, statistic, json_path, no_db ? NULL : db, 1, !quiet);
    scenario_free(s);
    return rc;
}
