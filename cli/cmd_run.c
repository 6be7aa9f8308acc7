/*
 * run: simulate a scenario; print the summary and/or write the JSON results.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/progress.h"
#include "cli/testpause.h"
#include "reports/json.h"
#include "reports/results.h"
#include "reports/store.h"
#include "scenarios/scenario.h"
#include "base/units.h"
#include "sim/metrics.h"
#include "sim/engine.h"
#include "sim/world.h"

static const char help[] =
    "usage: clustertwin run FILE [--json PATH|-] [--db PATH | --no-db] [--seed N] [--until DURATION]\n"
    "                       [--quiet] [--profile P] [--backend cpu|mpi|cuda|nccl [--statistic S]]\n"
    "\n"
    "Simulate the scenario in FILE and print a summary of the results.\n"
    "  --json PATH     write the results as JSON (CONTRACT.md) to PATH; '-' = stdout\n"
    "                  (then the summary is not printed)\n"
    "  --db PATH       also record the run in the SQLite results database PATH (created\n"
    "                  when missing; one database holds many runs; see 'clustertwin report')\n"
    "                  default: out/<scenario name>.db, skipped with a warning when it\n"
    "                  cannot be written\n"
    "  --no-db         do not record the run in a results database\n"
    "  --seed N        use seed N instead of the scenario's seed\n"
    "  --until D       stop at simulated time D (e.g. 30d) if the scenario runs longer\n"
    "  --quiet         no summary\n"
    "  --backend B     also measure the scenario's <microbenchmarks> on this machine with\n"
    "                  backend B (cpu, mpi under mpirun, cuda, nccl) and print predicted vs\n"
    "                  measured; the JSON and the database get measured_* and error_pct.\n"
    "                  cpu and mpi cases are priced by the host model (--profile P, the\n"
    "                  scenario's <host-profile>, else a generic host). Under mpirun only\n"
    "                  rank 0 writes. Exit 2 when the backend is unavailable.\n"
    "  --profile P     the hardware profile P (clustertwin calibrate): its <gpu-profile> prices\n"
    "                  the scenario's GPU (training, serving, GPU cases) with calibrated values;\n"
    "                  with --backend cpu|mpi its host parameters price the cases\n"
    "  --statistic S   what measured_s is: min (the fastest repetition, the default: it repeats\n"
    "                  on a shared machine) or median (every statistic is recorded either way)\n"
    "Ctrl-C (SIGINT) stops the run: the results so far are written (the database\n"
    "keeps the run as incomplete) and the exit status is 130.\n"
    "Exit status: 0 ok, 1 the run failed, 2 bad input, 130 interrupted.\n";

/* SIGINT during the run: the engine stops after the current event, the
 * results so far are written (JSON; the store's run stays 'incomplete')
 * and the command exits 130. A second SIGINT kills as usual. */
#define EXIT_INTERRUPTED 130            /* 128 + SIGINT, as shells report it */
static engine *volatile run_engine;
static volatile sig_atomic_t run_interrupted;

static void on_sigint(int sig) {
    (void)sig;
    run_interrupted = 1;
    if (run_engine) engine_stop(run_engine);
}

int cmd_run(int argc, char **argv) {
    const char *file = NULL, *json_path = NULL, *seed_z = NULL, *until_z = NULL, *db_path = NULL;
    int quiet = 0, no_db = 0;
    const char *backend = NULL, *profile = NULL, *statistic = NULL;          /* hardware mode */
    const cli_option opts[] = {
        { "--json", NULL, CLI_VALUE, &json_path, "write the results as JSON to PATH ('-': stdout)" },
        { "--seed", NULL, CLI_VALUE, &seed_z, "use seed N instead of the scenario's" },
        { "--until", NULL, CLI_VALUE, &until_z, "stop at simulated time D" },
        { "--db", NULL, CLI_VALUE, &db_path, "record the run in the results database PATH" },
        { "--backend", NULL, CLI_VALUE, &backend, "also measure the microbenchmarks with backend B" },
        { "--profile", NULL, CLI_VALUE, &profile, "price the cases with hardware profile P" },
        { "--statistic", NULL, CLI_VALUE, &statistic, "what measured_s is: min or median" },
        { "--no-db", NULL, CLI_FLAG, &no_db, "do not record the run in a results database" },
        { "--quiet", "-q", CLI_FLAG, &quiet, "no summary, no progress line" },
        { NULL },
    };
    cli_spec spec = { "run", help, opts, CLI_ONE_FILE, &file, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (!file) return cli_usage_error("run", "missing scenario FILE");
    if (db_path && !*db_path) return cli_usage_error("run", "--db needs a path (--no-db: no database)");
    if (db_path && no_db) return cli_usage_error("run", "--db and --no-db together");
    if (statistic && !backend) return cli_usage_error("run", "--statistic needs --backend");
    if (cli_check_statistic("run", statistic) != EXIT_OK) return EXIT_BAD_INPUT;

    double until_s = 0, seed = -1;
    char why[128];
    if (until_z && units_parse(until_z, UNIT_DURATION, &until_s, why, sizeof why) < 0)
        return cli_usage_error("run", "--until %s: %s", until_z, why);
    if (until_z && engine_check_s(until_s, why, sizeof why) < 0)
        return cli_usage_error("run", "--until %s: %s", until_z, why);
    if (cli_parse_seed("run", seed_z, &seed) != EXIT_OK) return EXIT_BAD_INPUT;

    scenario *s = NULL;
    metric_bus *bus = NULL;
    world *w = NULL;
    store *st = NULL;
    run_progress progress;                       /* lives as long as the bus */
    double t0 = cli_wall_s();
    int rc = cli_world_build(file, seed, profile, &s, &bus, &w);
    if (rc != EXIT_OK) goto out;
    /* Hardware mode: measure the microbenchmarks first; under mpirun only
     * rank 0 goes on to write results. */
    if (backend) {
        int rank = 0;
        rc = cli_hw_measure("run", backend, profile, statistic, w, !quiet, &rank);
        if (rc == EXIT_BAD_INPUT) goto out;
        if (rank != 0) goto out;
    }
    /* The results database: the sink subscribes before the run; an explicit
     * --db that cannot be written is an error, the default path a warning. */
    if (!no_db && (rc = cli_store_begin("run", db_path, s, bus, &st)) != EXIT_OK) goto out;
    /* Test-only (CT_TEST_PAUSE_FIFO, cli/testpause.h): after the store, so
     * that at the pause the database holds the run begun. */
    if (testpause_subscribe(bus) < 0) {
        fprintf(stderr, "clustertwin run: out of memory\n");
        rc = EXIT_RUN_FAILED;
        goto out;
    }
    struct sigaction sa = { .sa_handler = on_sigint, .sa_flags = SA_RESETHAND | SA_RESTART }, old_sa;
    sigemptyset(&sa.sa_mask);
    run_engine = world_engine(w);
    sigaction(SIGINT, &sa, &old_sa);
    /* a progress line on a terminal when the run is long (cli/progress.h) */
    double horizon_s = s->duration_s > 0 && (until_s <= 0 || s->duration_s < until_s) ? s->duration_s : until_s;
    progress_start(&progress, bus, w, horizon_s, quiet);
    world_run(w, until_s);
    progress_end(&progress);
    run_engine = NULL;
    double wall = cli_wall_s() - t0;
    if (run_interrupted) store_run_interrupted(st);

    int wrc = cli_write_results("run", s, w, wall, json_path, st);
    if (wrc != EXIT_OK) rc = wrc;
    if (!quiet && !(json_path && !strcmp(json_path, "-"))) {
        results_summary(stdout, s, w, wall);
        if (st && rc == EXIT_OK)
            printf("\nstored as run %lld in %s ('clustertwin report %s')\n", (long long)store_run_id(st),
                   store_path(st), store_path(st));
    }
    if (run_interrupted) {
        fprintf(stderr, "clustertwin run: interrupted at simulated time %.0f s; results so far written%s\n",
                world_get_totals(w).simulated_s, st ? ", run left incomplete in the database" : "");
        rc = EXIT_INTERRUPTED;
    }
    sigaction(SIGINT, &old_sa, NULL);
out:
    store_close(st);
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
    return rc;
}
