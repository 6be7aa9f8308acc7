/*
 * sweep: run a scenario over a grid of attribute values, R replicas per
 * point, into one results database; or write a Slurm job array that does.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "reports/fileout.h"
#include "cli/sweep.h"
#include "hw/comm.h"
#include "reports/sweepreport.h"
#include "reports/store.h"

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

/* Write text to path by reports/fileout's rule; 0, or -1 with the message
 * printed. */
static int write_file(const char *path, const char *text, unsigned perm) {
    char err[4400];
    if (fileout_write(path, 0, perm, text, strlen(text), err, sizeof err) == 0) return 0;
    fprintf(stderr, "clustertwin sweep: %s\n", err);
    return -1;
}

/* z for a comment or an #SBATCH line of a generated script: a line break
 * there would end the comment and run the rest, so control characters
 * become '?'. */
static void comment_safe(char *b, size_t cap, const char *z) {
    size_t n = 0;
    for (; *z && n + 1 < cap; z++, n++) b[n] = (unsigned char)*z < 0x20 || *z == 0x7F ? '?' : *z;
    b[n] = 0;
}

/* Append z to b (cap bytes) when it fits; a line that would not fit is
 * caught by the length check after it is built. */
static void add(char *b, size_t cap, const char *z) {
    size_t n = strlen(b), k = strlen(z);
    if (n + k < cap) memcpy(b + n, z, k + 1);
}

static int emit_slurm(sweep *sw, const char *dir, int tasks, const char *db, char **argv_vary, int n_vary,
                      char **argv_set, int n_set) {
    const char *given[] = { dir, db, sw->file };
    for (int i = 0; i < 3; i++)                        /* refused before anything is made */
        for (const char *c = given[i]; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7F) {
                fprintf(stderr, "clustertwin sweep: --emit-slurm: %s holds a line break or other control character, "
                                "which a Slurm script cannot carry\n",
                        i == 0 ? "the directory" : i == 1 ? "the --db path" : "the scenario path");
                return EXIT_BAD_INPUT;
            }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "clustertwin sweep: cannot create %s: %s\n", dir, strerror(errno));
        return EXIT_RUN_FAILED;
    }
    char bin[PATH_MAX], file[PATH_MAX], adir[PATH_MAX], adb[PATH_MAX + 64];
    ssize_t k = readlink("/proc/self/exe", bin, sizeof bin - 1);
    if (k <= 0) snprintf(bin, sizeof bin, "clustertwin");
    else bin[k] = 0;
    if (!realpath(sw->file, file) || !realpath(dir, adir)) {
        fprintf(stderr, "clustertwin sweep: %s: %s\n", sw->file, strerror(errno));
        return EXIT_RUN_FAILED;
    }
    if (db[0] == '/') snprintf(adb, sizeof adb, "%s", db);
    else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
        snprintf(adb, sizeof adb, "%s/%s", cwd, db);
    }
    /* Everything generated into shell is one single-quoted word; what
     * cannot be (a line break in a path or value) is refused. */
    char qtasks[2 * PATH_MAX] = "", qbin[2 * PATH_MAX] = "", qdb[2 * PATH_MAX + 72] = "", qdir[2 * PATH_MAX] = "",
         qsbatch[2 * PATH_MAX] = "", qmerge[2 * PATH_MAX] = "", path[PATH_MAX + 32];
    int bad = 0;
    snprintf(path, sizeof path, "%s/tasks.txt", adir);
    bad |= sweep_shell_quote(qtasks, sizeof qtasks, path);
    snprintf(path, sizeof path, "%s/sweep.sbatch", adir);
    bad |= sweep_shell_quote(qsbatch, sizeof qsbatch, path);
    snprintf(path, sizeof path, "%s/merge.sh", adir);
    bad |= sweep_shell_quote(qmerge, sizeof qmerge, path);
    bad |= sweep_shell_quote(qbin, sizeof qbin, bin);
    bad |= sweep_shell_quote(qdb, sizeof qdb, adb);
    bad |= sweep_shell_quote(qdir, sizeof qdir, adir);
    if (bad) {
        fprintf(stderr, "clustertwin sweep: --emit-slurm %s: a path (the directory, --db, the program) holds a line "
                        "break or other control character, which a Slurm script cannot carry\n", dir);
        return EXIT_BAD_INPUT;
    }
    size_t cap = (size_t)tasks * 4096 + 4096;
    char *lines = malloc(cap), *one = malloc(16384);
    if (!lines || !one) {
        free(lines);
        free(one);
        return EXIT_RUN_FAILED;
    }
    lines[0] = 0;
    size_t used = 0;
    for (int t = 0; t < tasks; t++) {
        one[0] = 0;
        int qbad = sweep_shell_quote(one, 16384, bin);
        add(one, 16384, " sweep ");
        qbad |= sweep_shell_quote(one, 16384, file);
        for (int i = 0; i < n_vary; i++) {
            add(one, 16384, " --vary ");
            qbad |= sweep_shell_quote(one, 16384, argv_vary[i]);
        }
        for (int i = 0; i < n_set; i++) {
            add(one, 16384, " --set ");
            qbad |= sweep_shell_quote(one, 16384, argv_set[i]);
        }
        char tail[PATH_MAX + 256], dbk[PATH_MAX + 64];
        snprintf(dbk, sizeof dbk, "%s/task-%d.db", adir, t);
        snprintf(tail, sizeof tail, " --replicas %d --part %d/%d --jobs \"${SLURM_CPUS_PER_TASK:-1}\" --quiet --db ",
                 sw->replicas, t, tasks);
        add(one, 16384, tail);
        qbad |= sweep_shell_quote(one, 16384, dbk);
        if (qbad || strlen(one) + 64 >= 16384) {
            fprintf(stderr, "clustertwin sweep: --emit-slurm: %s\n",
                    strlen(one) + 64 >= 16384 ? "a task's command line would be longer than 16 KB"
                                              : "a --vary or --set value or a path holds a line break or other "
                                                "control character, which a Slurm task line cannot carry");
            free(one);
            free(lines);
            return EXIT_BAD_INPUT;
        }
        int w = snprintf(lines + used, cap - used, "%s\n", one);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
    free(one);
    /* Comments and #SBATCH lines are read by sbatch, not the shell: no line
     * break may reach them, and the job name keeps to [A-Za-z0-9._-]. */
    char cfile[PATH_MAX], cdir[PATH_MAX], cqsbatch[2 * PATH_MAX], cqmerge[2 * PATH_MAX], name[SC_NAME_MAX + 1];
    comment_safe(cfile, sizeof cfile, sw->file);
    comment_safe(cdir, sizeof cdir, adir);
    comment_safe(cqsbatch, sizeof cqsbatch, qsbatch);
    comment_safe(cqmerge, sizeof cqmerge, qmerge);
    snprintf(name, sizeof name, "%s", sw->base->name);
    for (char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-'))
            *c = '_';
    size_t tcap = 16384 + 8 * PATH_MAX;
    char *text = malloc(tcap);
    int rc = EXIT_OK;
    snprintf(path, sizeof path, "%s/tasks.txt", adir);
    if (!text || write_file(path, lines, 0666) < 0) rc = EXIT_RUN_FAILED;
    if (rc == EXIT_OK) {
        snprintf(text, tcap,
                 "#!/bin/bash\n"
                 "# clustertwin sweep of %s as a Slurm job array: task K runs line K+1 of\n"
                 "# tasks.txt (its share of the %d points x %d replicas) into its own\n"
                 "# database task-K.db. When every task is done, merge.sh combines them:\n"
                 "#   jid=$(sbatch --parsable %s)\n"
                 "#   sbatch --dependency=afterok:$jid %s\n"
                 "#SBATCH --job-name=ct-sweep-%s\n"
                 "#SBATCH --array=0-%d\n"
                 "#SBATCH --ntasks=1\n"
                 "#SBATCH --cpus-per-task=1\n"
                 "#SBATCH --output=%s/task-%%a.log\n"
                 "set -eu\n"
                 "task=${SLURM_ARRAY_TASK_ID:?run this with sbatch (or set SLURM_ARRAY_TASK_ID)}\n"
                 "line=$(sed -n \"$((task + 1))p\" %s)\n"
                 "[ -n \"$line\" ] || { echo \"no task $task in \"%s >&2; exit 2; }\n"
                 "eval \"$line\"\n",
                 cfile, sw->n_points, sw->replicas, cqsbatch, cqmerge, name, tasks - 1, cdir, qtasks, qtasks);
        snprintf(path, sizeof path, "%s/sweep.sbatch", adir);
        if (write_file(path, text, 0777) < 0) rc = EXIT_RUN_FAILED;
    }
    if (rc == EXIT_OK) {
        snprintf(text, tcap,
                 "#!/bin/sh\n"
                 "# Combine the tasks' databases into one (clustertwin merge OUT IN...).\n"
                 "#SBATCH --job-name=ct-merge-%s\n"
                 "#SBATCH --output=%s/merge.log\n"
                 "set -eu\n"
                 "exec %s merge %s %s/task-*.db\n",
                 name, cdir, qbin, qdb, qdir);
        snprintf(path, sizeof path, "%s/merge.sh", adir);
        if (write_file(path, text, 0777) < 0) rc = EXIT_RUN_FAILED;
    }
    if (!text) fprintf(stderr, "clustertwin sweep: out of memory\n");
    free(text);
    free(lines);
    if (rc != EXIT_OK) return rc;
    printf("wrote %s/sweep.sbatch (%d array tasks), %s/tasks.txt and %s/merge.sh\n"
           "submit: jid=$(sbatch --parsable %s) && sbatch --dependency=afterok:$jid %s\n"
           "results: %s\n",
           adir, tasks, adir, adir, qsbatch, qmerge, adb);
    return EXIT_OK;
}

int cmd_sweep(int argc, char **argv) {
    const char *file = NULL, *db = NULL, *rep_z = NULL, *jobs_z = NULL, *part_z = NULL, *slurm = NULL,
               *tasks_z = NULL;
    char *vary[SWEEP_MAX_AXES + 1], *sets[SWEEP_MAX_SETS + 1];
    int n_vary = 0, n_set = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        int m;
        const char *v = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            return EXIT_OK;
        }
        if ((m = cli_opt(argc, argv, &i, "--vary", &v)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
            if (n_vary == SWEEP_MAX_AXES) return cli_usage_error("sweep", "at most %d --vary", SWEEP_MAX_AXES);
            vary[n_vary++] = (char *)v;
        } else if ((m = cli_opt(argc, argv, &i, "--set", &v)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
            if (n_set == SWEEP_MAX_SETS) return cli_usage_error("sweep", "at most %d --set", SWEEP_MAX_SETS);
            sets[n_set++] = (char *)v;
        } else if ((m = cli_opt(argc, argv, &i, "--replicas", &rep_z)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--jobs", &jobs_z)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--db", &db)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--part", &part_z)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--emit-slurm", &slurm)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--tasks", &tasks_z)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("sweep", "unknown option '%s'", argv[i]);
        } else if (!file) {
            file = argv[i];
        } else {
            return cli_usage_error("sweep", "one scenario file at a time ('%s' and '%s')", file, argv[i]);
        }
    }
    if (!file) return cli_usage_error("sweep", "missing scenario FILE");
    if (n_vary == 0) return cli_usage_error("sweep", "nothing to vary: give --vary PATH=VALUES");
    long replicas = 1, jobs = 0, part_k = 0, part_n = 1, tasks = 0;
    if (cli_parse_count("sweep", "--replicas", rep_z, 1, 100000, &replicas) != EXIT_OK ||
        cli_parse_count("sweep", "--jobs", jobs_z, 1, 4096, &jobs) != EXIT_OK ||
        cli_parse_count("sweep", "--tasks", tasks_z, 1, 100000, &tasks) != EXIT_OK)
        return EXIT_BAD_INPUT;
    if (part_z && (sscanf(part_z, "%ld/%ld", &part_k, &part_n) != 2 || part_n < 1 || part_k < 0 || part_k >= part_n))
        return cli_usage_error("sweep", "--part %s: expected K/N with 0 <= K < N", part_z);
    if (tasks_z && !slurm) return cli_usage_error("sweep", "--tasks goes with --emit-slurm");
    if (slurm && part_z) return cli_usage_error("sweep", "--emit-slurm writes the parts itself (no --part)");
    if (db && !*db) return cli_usage_error("sweep", "--db needs a path");

    char err[1024];
    if (comm_init(0, err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin sweep: %s\n", err);
        return EXIT_RUN_FAILED;
    }
    int rank = comm_rank();
    sweep_silent = rank != 0;
    sweep sw;
    store *st = NULL;
    int rc = sweep_init(&sw, "sweep", file);
    sw.replicas = (int)replicas;
    for (int i = 0; i < n_vary && rc == EXIT_OK; i++) rc = sweep_parse_vary(&sw, "sweep", vary[i], 0);
    for (int i = 0; i < n_set && rc == EXIT_OK; i++) rc = sweep_add_set(&sw, "sweep", sets[i]);
    int n_jobs = jobs ? (int)jobs : (comm_size() > 1 ? 1 : cores());
    if (rc == EXIT_OK) rc = sweep_check(&sw, "sweep", slurm ? 1 : n_jobs);
    char dbbuf[SC_NAME_MAX + 32];
    if (rc == EXIT_OK && !db) {
        cli_default_db(sw.base->name, "-sweep", dbbuf, sizeof dbbuf);
        db = dbbuf;
    }
    if (rc == EXIT_OK && slurm) {
        long runs = (long)sw.n_points * replicas;
        if (!tasks) tasks = runs < 64 ? runs : 64;
        rc = rank == 0 ? emit_slurm(&sw, slurm, (int)tasks, db, vary, n_vary, sets, n_set) : EXIT_OK;
        goto out;
    }
    if (rc == EXIT_OK && rank == 0) {
        if (db == dbbuf) mkdir("out", 0777);
        int src = store_open(db, STORE_WRITE, &st, err, sizeof err);
        if (src != STORE_OK) {
            fprintf(stderr, "clustertwin sweep: %s\n", err);
            rc = src == STORE_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
        }
    }
    if (comm_size() > 1) {                       /* every rank learns whether rank 0 can go on */
        int32_t go = rc;
        comm_bcast(&go, sizeof go, 0);
        if (rank != 0 && rc == EXIT_OK) rc = go;
    }
    if (rc == EXIT_OK) {
        int *pts = malloc((size_t)sw.n_points * sizeof *pts);
        if (!pts) {
            rc = EXIT_RUN_FAILED;
            goto out;
        }
        for (int p = 0; p < sw.n_points; p++) pts[p] = p;
        sweep_exec ex = { .jobs = n_jobs,
                          .part_k = (int)part_k, .part_n = (int)part_n,
                          .progress = !quiet && isatty(2), .cmd = "sweep", .st = st };
        rc = sweep_execute(&sw, pts, sw.n_points, &ex);
        free(pts);
        /* every point's means with their confidence intervals, for SQL */
        if (rank == 0 && rc == EXIT_OK && sweepreport_store_stats(st, sw.id, err, sizeof err) != 0) {
            fprintf(stderr, "clustertwin sweep: %s\n", err);
            rc = EXIT_RUN_FAILED;
        }
        if (rank == 0 && !quiet) {
            char unfit[64] = "";
            if (ex.unfit) snprintf(unfit, sizeof unfit, " (%d do%s not fit: not run)", ex.unfit, ex.unfit == 1 ? "es" : "");
            printf("sweep %s: %d points%s x %d replicas; %d runs done now, %d already in %s; %.2f s wall on %d %s%s\n",
                   sw.base->name, sw.n_points, unfit, sw.replicas, ex.ran, ex.skipped, db, ex.wall_s,
                   comm_size() > 1 ? comm_size() : ex.jobs,
                   comm_size() > 1 ? "MPI ranks" : ex.jobs > 1 ? "processes" : "process",
                   ex.failed ? " (some runs failed)" : "");
            if (rc == EXIT_OK) {
                sweepreport_table(st, sw.id, stdout);
                printf("\n'clustertwin report %s' writes the tables and charts.\n", db);
            }
        }
    }
out:
    store_close(st);
    sweep_free(&sw);
    comm_finalize();
    return rc;
}
