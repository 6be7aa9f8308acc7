/*
 * validate: measure a scenario's microbenchmarks with a hardware backend
 * and print them next to the models' predictions, with the error per case
 * and the median and max |error|.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "scenarios/scenario.h"

static const char help[] =
    "usage: clustertwin validate FILE --backend cpu|mpi|cuda|nccl [--profile P] [--db PATH | --no-db]\n"
    "                            [--statistic min|median] [--json PATH|-] [--quiet]\n"
    "\n"
    "Measure the <microbenchmarks> of scenario FILE on this machine and print predicted vs\n"
    "measured: time and rate per case, the error 100 (predicted - measured) / measured, and\n"
    "the median and max |error| over the cases both predicted and measured.\n"
    "  --backend B   cpu, mpi (under mpirun; only rank 0 writes), cuda or nccl\n"
    "  --profile P   price the cases with the hardware profile P ('clustertwin calibrate');\n"
    "                else the scenario's <host-profile>, else a generic host (cpu, mpi) or\n"
    "                the GPU models (cuda, nccl)\n"
    "  --db PATH     store the run, predictions and measurements (default out/<scenario>.db);\n"
    "                'clustertwin report' charts predicted vs measured\n"
    "  --statistic S what measured_s is: min, the fastest repetition (default; it repeats from\n"
    "                session to session on a shared machine), or median; both are recorded\n"
    "  --json PATH   write the results JSON with measured_* and error_pct ('-' = stdout)\n"
    "  --quiet       no progress lines\n"
    "Exit status: 0 ok, 1 a measurement failed, 2 bad input or the backend is unavailable.\n";

int cmd_validate(int argc, char **argv) {
    const char *file = NULL, *backend = NULL, *profile = NULL, *db = NULL, *json_path = NULL, *statistic = NULL;
    int no_db = 0, quiet = 0;
    const cli_option opts[] = {
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
    if (!db && !no_db) {
        cli_default_db(s->name, "", default_db, sizeof default_db);
        cli_mkdir_parent(default_db);
        db = default_db;
    }
    int rc = cli_hw_session("validate", s, backend, profile, statistic, json_path, no_db ? NULL : db, 1, !quiet);
    scenario_free(s);
    return rc;
}
