/*
 * snapshot: read a live cluster (Slurm: squeue, sinfo, sacct; from files or
 * by running them) and write it as a scenario (plan/snapshot.h).
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "plan/snapshot.h"
#include "scenarios/slurm.h"

extern char **environ;

static const char help[] =
    "usage: clustertwin snapshot --from slurm --out S.xml [--squeue F] [--sinfo F]\n"
    "                            [--sacct F | --sacct-text F] [--node-type NAME] [--at UNIX_TIME] [--replay]\n"
    "\n"
    "Write the cluster as it is now as a scenario S.xml and its job trace S.jobs.csv\n"
    "beside it (docs/live-cluster.md): GPU nodes by catalog type with their names,\n"
    "nodes down or drained, partitions as queues, jobs running (with the time they\n"
    "have run), pending and held, and run times from the history of finished jobs.\n"
    "With no file it runs `squeue --json`, `sinfo --json` and\n"
    "`sacct --json -S now-30days -a` itself. `clustertwin run S.xml` plays it forward.\n"
    "  --from slurm       the source (Slurm's JSON of 22.05 to 25.05, data parser v0.0.38-43)\n"
    "  --squeue F         squeue --json output: the jobs\n"
    "  --sinfo F          sinfo --json output: the nodes and partitions\n"
    "  --sacct F          sacct --json output: the finished jobs (run-time history)\n"
    "  --sacct-text F     the same as sacct -P --format=JobID,JobName,User,Account,Partition,\n"
    "                     State,Submit,Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,NodeList\n"
    "  --node-type NAME   catalog node type of GPUs whose model the map does not know\n"
    "  --at UNIX_TIME     when the files were read (default: now)\n"
    "  --replay           write the history (--sacct or --sacct-text) as a trace that\n"
    "                     replays what Slurm did: `run` compares its starts with Slurm's\n"
    "  --out S.xml        the scenario (S.jobs.csv is written beside it)\n"
    "Exit status: 0 ok, 1 a file could not be written, 2 bad input (file:line: why).\n";

#define SNAP_CMD_MAX_BYTES JSONIN_MAX_BYTES

/* Run argv (found on PATH) and keep its standard output (its errors go to
 * ours). 0, or an exit status with the message printed. */
static int run_capture(char *const argv[], char **out, size_t *len) {
    int fd[2];
    if (pipe(fd) < 0) return fprintf(stderr, "clustertwin snapshot: pipe: %s\n", strerror(errno)), EXIT_RUN_FAILED;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (e) {
        close(fd[0]);
        fprintf(stderr, "clustertwin snapshot: %s: %s (is Slurm's client installed? else give --%s FILE)\n", argv[0],
                e == ENOENT ? "not found" : strerror(e), argv[0]);
        return EXIT_BAD_INPUT;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    ssize_t r = 0;
    while (b && (r = read(fd[0], b + n, cap - n)) > 0)
        if ((n += (size_t)r) == cap) b = cap >= SNAP_CMD_MAX_BYTES ? (free(b), NULL) : realloc(b, cap *= 2);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!b) return fprintf(stderr, "clustertwin snapshot: %s: output too large or out of memory\n", argv[0]), EXIT_RUN_FAILED;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(b);
        return fprintf(stderr, "clustertwin snapshot: %s failed (exit %d)\n", argv[0], WIFEXITED(status) ? WEXITSTATUS(status) : -1),
               EXIT_BAD_INPUT;
    }
    *out = b, *len = n;
    return 0;
}

/* A report from its file, or from its command when file is NULL. */
static int read_report(const char *file, char *const cmd[], slurm_kind kind, double at, live_cluster *c) {
    char err[2048];
    if (file) {
        if (slurm_read_file(file, kind, at, c, err, sizeof err) < 0) return fprintf(stderr, "%s\n", err), EXIT_BAD_INPUT;
        return 0;
    }
    char *text = NULL, name[64];
    size_t len = 0;
    int rc = run_capture(cmd, &text, &len);
    if (rc) return rc;
    snprintf(name, sizeof name, "%s --json", cmd[0]);
    if (slurm_read_text(text, len, name, kind, at, c, err, sizeof err) < 0) fprintf(stderr, "%s\n", err), rc = EXIT_BAD_INPUT;
    free(text);
    return rc;
}

typedef struct snap_args {
    const char *from, *squeue, *sinfo, *sacct, *sacct_text, *node_type, *at, *out;
    int replay;
} snap_args;

static int read_slurm(const snap_args *a, double at, live_cluster *c) {
    static char *const squeue[] = { "squeue", "--json", NULL }, *const sinfo[] = { "sinfo", "--json", NULL };
    static char *const sacct[] = { "sacct", "--json", "-S", "now-30days", "-a", NULL };
    int files = a->squeue || a->sinfo || a->sacct || a->sacct_text, rc = 0;
    if (!files || a->sinfo) rc = read_report(a->sinfo, sinfo, SLURM_SINFO, at, c);
    if (!rc && !a->replay && (!files || a->squeue)) rc = read_report(a->squeue, squeue, SLURM_SQUEUE, at, c);
    if (!rc && a->sacct_text) rc = read_report(a->sacct_text, NULL, SLURM_SACCT_TEXT, at, c);
    else if (!rc && (!files || a->sacct)) rc = read_report(a->sacct, sacct, SLURM_SACCT, at, c);
    return rc;
}

static int check_args(const snap_args *a, double *at) {
    if (!a->from) return cli_usage_error("snapshot", "missing --from slurm");
    if (strcmp(a->from, "slurm")) return cli_usage_error("snapshot", "--from %s: expected slurm", a->from);
    if (!a->out) return cli_usage_error("snapshot", "missing --out S.xml");
    if (a->sacct && a->sacct_text) return cli_usage_error("snapshot", "give --sacct or --sacct-text, not both");
    if (a->replay && (a->squeue || (!a->sacct && !a->sacct_text && (a->sinfo))))
        return cli_usage_error("snapshot", "--replay reads the history: give --sacct F or --sacct-text F (and --sinfo F), not --squeue");
    *at = (double)time(NULL);
    if (a->at) {
        char *end;
        *at = strtod(a->at, &end);
        if (end == a->at || *end || !(*at > 0 && *at < 1e11))
            return cli_usage_error("snapshot", "--at %s: expected Unix seconds (date +%%s)", a->at);
    }
    return CLI_GO;
}

static void print_summary(const snapshot_opts *o, const snapshot_summary *s, const live_cluster *c) {
    printf("wrote %s and %s: %d GPU nodes (%d out of service), ", o->out, s->csv, s->nodes, s->nodes_unavailable);
    if (o->replay) printf("%d finished jobs to replay\n", s->pending);
    else printf("%d running, %d pending, %d held jobs; run times from %d finished jobs\n", s->running, s->pending, s->held,
                s->history_jobs);
    if (c->jobs_without_gpus || s->left_out_no_limit || s->left_out_too_big || s->nodes_without_gpus)
        printf("left out: %d jobs without GPUs, %d without a time limit, %d larger than the cluster, %d nodes without GPUs\n",
               c->jobs_without_gpus, s->left_out_no_limit, s->left_out_too_big, s->nodes_without_gpus);
}

int cmd_snapshot(int argc, char **argv) {
    snap_args a = { 0 };
    const cli_option opts[] = {
        { "--from", NULL, CLI_VALUE, &a.from, "the source: slurm" },
        { "--squeue", NULL, CLI_VALUE, &a.squeue, "squeue --json output" },
        { "--sinfo", NULL, CLI_VALUE, &a.sinfo, "sinfo --json output" },
        { "--sacct", NULL, CLI_VALUE, &a.sacct, "sacct --json output" },
        { "--sacct-text", NULL, CLI_VALUE, &a.sacct_text, "sacct -P output" },
        { "--node-type", NULL, CLI_VALUE, &a.node_type, "catalog node type for unknown GPU models" },
        { "--at", NULL, CLI_VALUE, &a.at, "when the files were read (Unix seconds)" },
        { "--replay", NULL, CLI_FLAG, &a.replay, "write the history as a replay trace" },
        { "--out", NULL, CLI_VALUE, &a.out, "the scenario S.xml" },
        { NULL },
    };
    cli_spec spec = { "snapshot", help, opts, CLI_NONE, NULL, NULL };
    int rc = cli_parse(&spec, argc, argv);
    double at = 0;
    if (rc != CLI_GO || (rc = check_args(&a, &at)) != CLI_GO) return rc;
    live_cluster c = { 0 };
    char err[2048];
    snapshot_opts o = { a.out, a.node_type, at, a.replay };
    snapshot_summary sum;
    rc = read_slurm(&a, at, &c);
    if (!rc && a.replay && c.n_nodes == 0 && (rc = snapshot_infer_nodes(&c, err, sizeof err)) != 0)
        fprintf(stderr, "clustertwin snapshot: %s\n", err);
    if (!rc && (rc = snapshot_write(&c, &o, &sum, err, sizeof err)) != 0) fprintf(stderr, "clustertwin snapshot: %s\n", err);
    if (!rc) print_summary(&o, &sum, &c);
    live_free(&c);
    return rc;
}
