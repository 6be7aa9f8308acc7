/*
 * clustertwin: a digital twin of GPU AI infrastructure.
 *
 * main() maps the first argument to a command (one file each in cli/) and
 * exits with what the command returns.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "models/numerics.h"

static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "run", cmd_run, "simulate a scenario and write its results (summary, JSON)" },
    { "check", cmd_check, "validate a scenario and print what it describes" },
    { "topo", cmd_topo, "draw the scenario's cluster topology (SVG or Graphviz dot)" },
    { "dash", cmd_dash, "run a scenario live in the terminal (ncurses dashboard)" },
    { "report", cmd_report, "write a report (HTML, Markdown, CSV) of runs in a results database" },
    { "sweep", cmd_sweep, "run a scenario over a grid of values, Monte Carlo replicas per point" },
    { "plan", cmd_plan, "find the cheapest configuration that meets a goal at a confidence" },
    { "forecast", cmd_forecast, "run a snapshot of a live cluster forward: when waiting jobs start" },
    { "merge", cmd_merge, "combine results databases (a sweep's Slurm tasks) into one" },
    { "measure", cmd_measure, "measure this machine with a hardware backend (standard sweep)" },
    { "calibrate", cmd_calibrate, "fit a hardware profile to measurements in a results database" },
    { "validate", cmd_validate, "predicted vs measured microbenchmarks, with error per case" },
    { "fit-failures", cmd_fit_failures, "fit a failure profile (MTBF by component, with CIs) to a cluster's history" },
    { "snapshot", cmd_snapshot, "write a live cluster (Slurm) as it is now as a scenario and job trace" },
};

static void usage(FILE *f) {
    fprintf(f, "usage: clustertwin <command> [options]\n"
               "       clustertwin --version | --help\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s  %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'clustertwin <command> --help' describes a command's options.\n"
               "Exit status: 0 ok, 1 the run failed, 2 bad input.\n");
}

double cli_wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Everything a command printed reached stdout: flush and close it, and
 * turn a failed write (a full disk, a closed FIFO) into exit status 1 with
 * a message, so that output that was lost is never reported as success.
 * The one place that checks; commands only print. */
static int finish_stdout(int rc) {
    errno = 0;
    int bad = fflush(stdout) != 0, e = errno;
    bad |= ferror(stdout) != 0;
    if (fclose(stdout) != 0 && !bad) bad = 1, e = errno;
    if (!bad) return rc;
    fprintf(stderr, "clustertwin: stdout: write error%s%s\n", e ? ": " : "", e ? strerror(e) : "");
    return rc == EXIT_OK ? EXIT_RUN_FAILED : rc;
}

static int run_main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_BAD_INPUT;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("clustertwin %s\n", CT_VERSION);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[i] = commands[i].name;
    const char *near = argv[1][0] != '-' ? cli_closest(argv[1], names, (int)(sizeof names / sizeof *names)) : NULL;
    if (near) {
        fprintf(stderr, "clustertwin: unknown command '%s'; did you mean '%s'?\n", argv[1], near);
        return EXIT_BAD_INPUT;
    }
    fprintf(stderr, "clustertwin: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return EXIT_BAD_INPUT;
}

int main(int argc, char **argv) {
    /* A closed pipe or FIFO is a write error (EPIPE) that finish_stdout
     * and the file writers report, exit 1, not a silent death by signal. */
    signal(SIGPIPE, SIG_IGN);
    /* GSL reports an error by calling abort() unless told otherwise: every
     * command gets the recording handler (models/numerics.h) before any. */
    numerics_gsl_install();
    return finish_stdout(run_main(argc, argv));
}
