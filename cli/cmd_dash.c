/*
 * dash: run a scenario live in the terminal (tui/dash.h); on quit, write
 * the results and the results database as 'run' does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "reports/json.h"
#include "reports/results.h"
#include "reports/store.h"
#include "scenarios/scenario.h"
#include "base/units.h"
#include "sim/metrics.h"
#include "sim/world.h"
#include "tui/dash.h"

static const char help[] =
    "usage: clustertwin dash FILE [--json PATH|-] [--db PATH | --no-db] [--seed N] [--speed DURATION]\n"
    "                        [--paused]\n"
    "\n"
    "Run the scenario in FILE live in the terminal: cluster map, jobs, sparklines,\n"
    "event log. Keys: space pause, +/- speed, . one event, tab/arrows/j k move,\n"
    "s sort, f inject a failure on the selected node, d drain/undrain it, ? help,\n"
    "q quit. Quitting finishes the run where it stands (as 'run --until' would)\n"
    "and writes the results as 'run' does:\n"
    "  --json PATH     write the results as JSON (CONTRACT.md) to PATH; '-' = stdout\n"
    "  --db PATH       record the run in the SQLite results database PATH\n"
    "                  default: out/<scenario name>.db (a warning when it cannot be written)\n"
    "  --no-db         do not record the run\n"
    "  --seed N        use seed N instead of the scenario's seed\n"
    "  --speed D       simulated time per wall second at the start (e.g. 1h, 30min, 2d);\n"
    "                  default: about five minutes for the scenario's duration\n"
    "  --paused        start paused\n"
    "Needs a terminal (80x24 or larger); without one use 'clustertwin run FILE'.\n"
    "Exit status: 0 ok, 1 the results could not be written, 2 bad input or no terminal.\n";

int cmd_dash(int argc, char **argv) {
    const char *file = NULL, *json_path = NULL, *seed_z = NULL, *speed_z = NULL, *db_path = NULL;
    int no_db = 0, paused = 0;
    const cli_option opts[] = {
        { "--json", NULL, CLI_VALUE, &json_path, "write the results as JSON to PATH ('-': stdout)" },
        { "--seed", NULL, CLI_VALUE, &seed_z, "use seed N instead of the scenario's" },
        { "--speed", NULL, CLI_VALUE, &speed_z, "simulated time per wall second at the start" },
        { "--db", NULL, CLI_VALUE, &db_path, "record the run in the results database PATH" },
        { "--no-db", NULL, CLI_FLAG, &no_db, "do not record the run" },
        { "--paused", NULL, CLI_FLAG, &paused, "start paused" },
        { NULL },
    };
    cli_spec spec = { "dash", help, opts, CLI_ONE_FILE, &file, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (!file) return cli_usage_error("dash", "missing scenario FILE");
    if (db_path && !*db_path) return cli_usage_error("dash", "--db needs a path (--no-db: no database)");
    if (db_path && no_db) return cli_usage_error("dash", "--db and --no-db together");
    double speed = 0, seed = -1;
    char why[128];
    if (speed_z && (units_parse(speed_z, UNIT_DURATION, &speed, why, sizeof why) < 0 || !(speed > 0)))
        return cli_usage_error("dash", "--speed %s: expected a positive duration (simulated per wall second)", speed_z);
    if (cli_parse_seed("dash", seed_z, &seed) != EXIT_OK) return EXIT_BAD_INPUT;
    if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
        fprintf(stderr, "clustertwin dash: %s is not a terminal; the dashboard needs one.\n"
                        "For a run without a terminal use 'clustertwin run %s'.\n",
                isatty(STDOUT_FILENO) ? "standard input" : "standard output", file);
        return EXIT_BAD_INPUT;
    }
    char err[2048];
    if (dash_check_terminal(err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin dash: %s; without one use 'clustertwin run %s'\n", err, file);
        return EXIT_BAD_INPUT;
    }

    scenario *s = NULL;
    metric_bus *bus = NULL;
    world *w = NULL;
    store *st = NULL;
    dash *d = NULL;
    double t0 = cli_wall_s();
    int rc = cli_world_build(file, seed, NULL, &s, &bus, &w);
    if (rc != EXIT_OK) goto out;
    if (!no_db && (rc = cli_store_begin("dash", db_path, s, bus, &st)) != EXIT_OK) goto out;
    d = dash_new(w, s, bus);
    if (!d) {
        fprintf(stderr, "clustertwin dash: out of memory\n");
        rc = EXIT_RUN_FAILED;
        goto out;
    }
    dash_opts o = { speed > 0 ? speed : dash_default_speed(s), paused };
    if (dash_run(d, &o, err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin dash: %s; without a terminal use 'clustertwin run %s'\n", err, file);
        rc = EXIT_BAD_INPUT;
        goto out;
    }
    world_finish(w);
    double wall = cli_wall_s() - t0;
    int wrc = cli_write_results("dash", s, w, wall, json_path, st);
    if (wrc != EXIT_OK) rc = wrc;
    if (st && rc == EXIT_OK && !(json_path && !strcmp(json_path, "-")))
        printf("stored as run %lld in %s ('clustertwin report %s')\n", (long long)store_run_id(st), store_path(st),
               store_path(st));
out:
    store_close(st);
    world_free(w);
    dash_free(d);
    metrics_free(bus);
    scenario_free(s);
    return rc;
}
