/*
 * sweep: run a scenario over a grid of attribute values, R replicas per
 * point, into one results database; or write a Slurm job array that does
 * (the engines: plan/sweep.h, plan/slurm.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/testpause.h"
#include "hw/comm.h"
#include "plan/ranks.h"
#include "plan/slurm.h"
#include "plan/sweep.h"
#include "reports/store.h"
#include "reports/sweepreport.h"

static const char help[] =
    "usage: clustertwin sweep FILE --vary PATH=VALUES [--vary ...] [--set PATH=VALUE ...]\n"
    "                         [--replicas R] [--jobs N] [--db DB] [--part K/N] [--quiet]\n"
    "       clustertwin sweep FILE --vary ... --emit-slurm DIR [--tasks T] [--db DB]\n"
    "\n"
    "Run the scenario in FILE at every point of a grid of attribute values, R Monte\n"
    "Carlo replicas per point, and record every run in one results database.\n"
    "  --vary PATH=VALUES  an attribute by path and the values it takes; several --vary\n"
    "                  make a grid. PATH: cluster/nodes/@count,\n"
    "                  workload/training[@name=\"pretrain\"]/checkpoint/@interval, ...\n"
    "                  VALUES: 64,128,256 | 30min..4h*2 (geometric) | 256..1024+256 (linear)\n"
    "  --set PATH=VALUE    a fixed change, applied after the varied ones; VALUE may be an\n"
    "                  expression over other attributes: '{cluster/nodes/@count}/4'\n"
    "  --replicas R    runs per point (default 1); replica r uses a seed derived from the\n"
    "                  scenario's seed and r (replica 0: the scenario's seed)\n"
    "  --jobs N        local worker processes (default: the cores; 1 under mpirun)\n"
    "  --db DB         the results database (default out/<scenario>-sweep.db); a sweep\n"
    "                  run again with the same DB skips the replicas it already holds\n"
    "  --part K/N      run only the K-th of N interleaved shares of the runs (0 <= K < N)\n"
    "  --emit-slurm DIR  write DIR/sweep.sbatch (a job array, one task per share),\n"
    "                  DIR/tasks.txt (each task's command line) and DIR/merge.sh; run nothing\n"
    "  --tasks T       shares for --emit-slurm (default: the runs, at most 64)\n"
    "  --quiet         no progress bar, no table\n"
    "Under mpirun the runs spread over the ranks; rank 0 writes the database.\n"
    "Then: 'clustertwin report DB' (each metric against the varied values: mean, p10, p90).\n"
    "Exit status: 0 ok, 1 a run or a write failed (or interrupted; rerun to resume), 2 bad input.\n";

static int cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* What the command line gave. */
typedef struct sweep_args {
    const char *file, *db, *rep_z, *jobs_z, *part_z, *slurm, *tasks_z;
    const char *vary[SWEEP_MAX_AXES], *sets[SWEEP_MAX_SETS];
    cli_list vary_l, set_l;
    int quiet;
    long replicas, jobs, part_k, part_n, tasks;
} sweep_args;

static int parse_args(sweep_args *a, int argc, char **argv) {
    a->vary_l = (cli_list){ a->vary, 0, SWEEP_MAX_AXES };
    a->set_l = (cli_list){ a->sets, 0, SWEEP_MAX_SETS };
    const cli_option opts[] = {
        { "--vary", NULL, CLI_LIST, &a->vary_l, "an attribute's path and the values it takes" },
        { "--set", NULL, CLI_LIST, &a->set_l, "a fixed change (PATH=VALUE)" },
        { "--replicas", NULL, CLI_VALUE, &a->rep_z, "runs per point" },
        { "--jobs", NULL, CLI_VALUE, &a->jobs_z, "local worker processes" },
        { "--db", NULL, CLI_VALUE, &a->db, "the results database" },
        { "--part", NULL, CLI_VALUE, &a->part_z, "run only the K-th of N shares of the runs (K/N)" },
        { "--emit-slurm", NULL, CLI_VALUE, &a->slurm, "write a Slurm job array into DIR; run nothing" },
        { "--tasks", NULL, CLI_VALUE, &a->tasks_z, "array tasks for --emit-slurm" },
        { "--quiet", "-q", CLI_FLAG, &a->quiet, "no progress bar, no table" },
        { NULL },
    };
    cli_spec spec = { "sweep", help, opts, CLI_ONE_FILE, &a->file, NULL };
    int rc = cli_parse(&spec, argc, argv);
    if (rc != CLI_GO) return rc;
    if (!a->file) return cli_usage_error("sweep", "missing scenario FILE");
    if (a->vary_l.n == 0) return cli_usage_error("sweep", "nothing to vary: give --vary PATH=VALUES");
    a->replicas = 1, a->jobs = 0, a->part_k = 0, a->part_n = 1, a->tasks = 0;
    if (cli_parse_count("sweep", "--replicas", a->rep_z, 1, 100000, &a->replicas) != EXIT_OK ||
        cli_parse_count("sweep", "--jobs", a->jobs_z, 1, 4096, &a->jobs) != EXIT_OK ||
        cli_parse_count("sweep", "--tasks", a->tasks_z, 1, 100000, &a->tasks) != EXIT_OK)
        return EXIT_BAD_INPUT;
    if (a->part_z && (sscanf(a->part_z, "%ld/%ld", &a->part_k, &a->part_n) != 2 || a->part_n < 1 || a->part_k < 0 ||
                      a->part_k >= a->part_n))
        return cli_usage_error("sweep", "--part %s: expected K/N with 0 <= K < N", a->part_z);
    if (a->tasks_z && !a->slurm) return cli_usage_error("sweep", "--tasks goes with --emit-slurm");
    if (a->slurm && a->part_z) return cli_usage_error("sweep", "--emit-slurm writes the parts itself (no --part)");
    if (a->db && !*a->db) return cli_usage_error("sweep", "--db needs a path");
    return CLI_GO;
}

/* Rank 0 opens the database (when rc is EXIT_OK); every rank learns
 * whether it can go on. */
static int open_db(const char *db, int made_default, store **st, int rc) {
    char err[1024];
    if (rc == EXIT_OK && comm_rank() == 0) {
        if (made_default) mkdir("out", 0777);
        int src = store_open(db, STORE_WRITE, st, err, sizeof err);
        if (src != STORE_OK) {
            fprintf(stderr, "clustertwin sweep: %s\n", err);
            rc = src == STORE_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
        }
    }
    if (comm_size() > 1) {
        int32_t go = rc;
        comm_bcast_idle(&go, sizeof go, 0);   /* rank 0 may be checking a large grid */
        if (comm_rank() != 0 && rc == EXIT_OK) rc = go;
    }
    return rc;
}

/* The one-line summary and the table of means (rank 0, unless --quiet). */
static void print_summary(const sweep *sw, const sweep_exec *ex, const char *db, store *st, int rc) {
    char unfit[64] = "";
    if (ex->unfit) snprintf(unfit, sizeof unfit, " (%d do%s not fit: not run)", ex->unfit, ex->unfit == 1 ? "es" : "");
    printf("sweep %s: %d points%s x %d replicas; %d runs done now, %d already in %s; %.2f s wall on %d %s%s\n",
           sw->base->name, sw->n_points, unfit, sw->replicas, ex->ran, ex->skipped, db, ex->wall_s,
           comm_size() > 1 ? comm_size() : ex->jobs,
           comm_size() > 1 ? "MPI ranks" : ex->jobs > 1 ? "processes" : "process",
           ex->failed ? " (some runs failed)" : "");
    if (rc == EXIT_OK) {
        sweepreport_table(st, sw->id, stdout);
        printf("\n'clustertwin report %s' writes the tables and charts.\n", db);
    }
}

/* Run every point's replicas into st, then the statistics and summary. */
static int run_all(sweep *sw, const sweep_args *a, int n_jobs, const char *db, store *st) {
    char err[1024];
    int *pts = malloc((size_t)sw->n_points * sizeof *pts);
    if (!pts) return EXIT_RUN_FAILED;
    for (int p = 0; p < sw->n_points; p++) pts[p] = p;
    sweep_exec ex = { .jobs = n_jobs, .part_k = (int)a->part_k, .part_n = (int)a->part_n,
                      .progress = !a->quiet && isatty(2), .cmd = "sweep", .st = st,
                      .commit_each = testpause_active(), .on_stored = testpause_tick };
    int rc = sweep_execute(sw, pts, sw->n_points, &ex);
    free(pts);
    int rank = comm_rank();
    /* every point's means with their confidence intervals, for SQL */
    if (rank == 0 && rc == EXIT_OK && sweepreport_store_stats(st, sw->id, err, sizeof err) != 0) {
        fprintf(stderr, "clustertwin sweep: %s\n", err);
        rc = EXIT_RUN_FAILED;
    }
    if (rank == 0 && !a->quiet) print_summary(sw, &ex, db, st, rc);
    return rc;
}

int cmd_sweep(int argc, char **argv) {
    sweep_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    if (rc != CLI_GO) return rc;
    char err[1024];
    if (ranks_init(err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin sweep: %s\n", err);
        return EXIT_RUN_FAILED;
    }
    int rank = comm_rank();
    sweep_silent = rank != 0;
    sweep sw;
    store *st = NULL;
    rc = sweep_init(&sw, "sweep", a.file);
    sw.replicas = (int)a.replicas;
    for (int i = 0; i < a.vary_l.n && rc == EXIT_OK; i++) rc = sweep_parse_vary(&sw, "sweep", a.vary[i], 0);
    for (int i = 0; i < a.set_l.n && rc == EXIT_OK; i++) rc = sweep_add_set(&sw, "sweep", a.sets[i]);
    int n_jobs = a.jobs ? (int)a.jobs : (comm_size() > 1 ? 1 : cores());
    if (rc == EXIT_OK) rc = sweep_check(&sw, "sweep", a.slurm ? 1 : n_jobs);
    char dbbuf[SC_NAME_MAX + 32];
    const char *db = a.db;
    if (rc == EXIT_OK && !db) {
        cli_default_db(sw.base->name, "-sweep", dbbuf, sizeof dbbuf);
        db = dbbuf;
    }
    if (rc == EXIT_OK && a.slurm) {
        long runs = (long)sw.n_points * a.replicas, tasks = a.tasks ? a.tasks : runs < 64 ? runs : 64;
        if (rank == 0) rc = slurm_emit(&sw, a.slurm, (int)tasks, db, a.vary, a.vary_l.n, a.sets, a.set_l.n);
    } else {
        rc = open_db(db, db == dbbuf, &st, rc);
        if (rc == EXIT_OK) rc = run_all(&sw, &a, n_jobs, db, st);
    }
    store_close(st);
    sweep_free(&sw);
    if (comm_size() > 1) comm_barrier_idle();   /* the others sleep while rank 0 writes */
    comm_finalize();
    return rc;
}
