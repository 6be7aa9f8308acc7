/*
 * run: simulate a scenario; print the summary and/or write the JSON results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "reports/json.h"
#include "reports/results.h"
#include "scenarios/scenario.h"
#include "scenarios/units.h"
#include "sim/metrics.h"
#include "sim/world.h"

static const char help[] =
    "usage: clustertwin run FILE [--json PATH|-] [--seed N] [--until DURATION] [--quiet]\n"
    "\n"
    "Simulate the scenario in FILE and print a summary of the results.\n"
    "  --json PATH     write the results as JSON (CONTRACT.md) to PATH; '-' = stdout\n"
    "                  (then the summary is not printed)\n"
    "  --seed N        use seed N instead of the scenario's seed\n"
    "  --until D       stop at simulated time D (e.g. 30d) if the scenario runs longer\n"
    "  --quiet         no summary\n"
    "Exit status: 0 ok, 1 the run failed, 2 bad input.\n";

int cmd_run(int argc, char **argv) {
    const char *file = NULL, *json_path = NULL, *seed_z = NULL, *until_z = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            return EXIT_OK;
        }
        if ((m = cli_opt(argc, argv, &i, "--json", &json_path)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
        } else if ((m = cli_opt(argc, argv, &i, "--seed", &seed_z)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
        } else if ((m = cli_opt(argc, argv, &i, "--until", &until_z)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("run", "unknown option '%s'", argv[i]);
        } else if (!file) {
            file = argv[i];
        } else {
            (void)v;
            return cli_usage_error("run", "one scenario file at a time ('%s' and '%s')", file, argv[i]);
        }
    }
    if (!file) return cli_usage_error("run", "missing scenario FILE");

    double until_s = 0, seed = -1;
    char why[128];
    if (until_z && units_parse(until_z, UNIT_DURATION, &until_s, why, sizeof why) < 0)
        return cli_usage_error("run", "--until %s: %s", until_z, why);
    if (seed_z && (units_parse(seed_z, UNIT_NUMBER, &seed, why, sizeof why) < 0 || seed < 0 ||
                   seed != (double)(unsigned long long)seed))
        return cli_usage_error("run", "--seed %s: expected a whole number >= 0", seed_z);

    char err[2048];
    scenario *s = NULL;
    if (scenario_load(file, &s, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    if (seed >= 0) s->seed = (unsigned long long)seed;

    int rc = EXIT_OK;
    double t0 = cli_wall_s();
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        fprintf(stderr, "%s\n", bus ? err : "out of memory");
        rc = bus ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
        goto out;
    }
    world_run(w, until_s);
    double wall = cli_wall_s() - t0;

    if (json_path) {
        json *j = json_new();
        if (j) results_json(j, s, w, wall);
        if (!j || json_write_file(j, json_path, err, sizeof err) < 0) {
            fprintf(stderr, "clustertwin run: %s\n", j ? err : "out of memory");
            rc = EXIT_RUN_FAILED;
        }
        json_free(j);
    }
    if (!quiet && !(json_path && !strcmp(json_path, "-"))) results_summary(stdout, s, w, wall);
out:
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
    return rc;
}
