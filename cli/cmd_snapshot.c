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
#include "base/units.h"
#include "plan/snapshot.h"
#include "scenarios/k8s.h"
#include "scenarios/slurm.h"

extern char **environ;

static const char help[] =
    "usage: clustertwin snapshot --from slurm --out S.xml [--squeue F] [--sinfo F]\n"
    "                            [--sacct F | --sacct-text F] [--node-type NAME] [--at UNIX_TIME] [--replay]\n"
    "       clustertwin snapshot --from k8s --out S.xml [--pods F] [--nodes F] [--workloads F]\n"
    "                            [--appwrappers F] [--node-type NAME] [--at UNIX_TIME]\n"
    "\n"
    "Write the cluster as it is now as a scenario S.xml and its job trace S.jobs.csv\n"
    "beside it (docs/live-cluster.md): GPU nodes by catalog type with their names,\n"
    "nodes down or drained, partitions as queues, jobs running (with the time they\n"
    "have run), pending and held, and run times from the history of finished jobs.\n"
    "With no file it runs `squeue --json`, `sinfo --json` and\n"
    "`sacct --json -S now-30days -a` itself; from Kubernetes, `kubectl get pods -A`,\n"
    "`nodes`, Kueue `workloads -A` and `appwrappers -A` (-o json; docs/live-k8s.md).\n"
    "`clustertwin run S.xml` plays it forward; `clustertwin forecast S.xml` forecasts it.\n"
    "  --from slurm|k8s   the source (Slurm's JSON of 22.05 to 25.05, data parser v0.0.38-43;\n"
    "                     Kubernetes pods and nodes, Kueue Workloads, AppWrappers)\n"
    "  --squeue F         squeue --json output: the jobs\n"
    "  --sinfo F          sinfo --json output: the nodes and partitions\n"
    "  --sacct F          sacct --json output: the finished jobs (run-time history)\n"
    "  --sacct-text F     the same as sacct -P --format=JobID,JobName,User,Account,Partition,\n"
    "                     State,Submit,Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,NodeList\n"
    "  --pods F           kubectl get pods -A -o json output\n"
    "  --nodes F          kubectl get nodes -o json output\n"
    "  --workloads F      kubectl get workloads.kueue.x-k8s.io -A -o json output\n"
    "  --appwrappers F    kubectl get appwrappers.workload.codeflare.dev -A -o json output\n"
    "  --default-limit D  the time limit of a job with none of its own or its partition's\n"
    "                     (Kubernetes has none: a pod runs until it ends); without it such\n"
    "                     jobs are left out and counted\n"
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
        fprintf(stderr, "clustertwin snapshot: %s: %s (is it installed? else give its output as a file: "
                "clustertwin snapshot --help)\n", argv[0], e == ENOENT ? "not found" : strerror(e));
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
    const char *pods, *nodes, *workloads, *appwrappers, *default_limit;
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

/* kubectl's output for one list into *t (its text malloc'd). A list
 * whose kind the cluster does not serve (no Kueue, no AppWrapper CRD) is
 * optional: t->text stays NULL when kubectl refuses it. */
static int capture_k8s(char *const cmd[], const char *name, int optional, k8s_text *t) {
    char *text = NULL;
    size_t len = 0;
    *t = (k8s_text){ NULL, 0, name };
    int rc = run_capture(cmd, &text, &len);
    if (rc) {
        if (optional && rc == EXIT_BAD_INPUT && strcmp(cmd[0], "kubectl") == 0) {
            fprintf(stderr, "clustertwin snapshot: no %s from kubectl: read without them\n", cmd[2]);
            return 0;
        }
        return rc;
    }
    t->text = text, t->len = len;
    return 0;
}

/* The Kubernetes lists: the files given, or kubectl's answers now, read
 * as the text it printed. */
static int read_k8s(const snap_args *a, double at, live_cluster *c) {
    char err[2048];
    if (a->pods || a->nodes || a->workloads || a->appwrappers) {
        if (k8s_read(c, a->pods, a->nodes, a->workloads, a->appwrappers, at, err, sizeof err) < 0)
            return fprintf(stderr, "%s\n", err), EXIT_BAD_INPUT;
        return 0;
    }
    static char *const pods[] = { "kubectl", "get", "pods", "-A", "-o", "json", NULL };
    static char *const nodes[] = { "kubectl", "get", "nodes", "-o", "json", NULL };
    static char *const wl[] = { "kubectl", "get", "workloads.kueue.x-k8s.io", "-A", "-o", "json", NULL };
    static char *const aw[] = { "kubectl", "get", "appwrappers.workload.codeflare.dev", "-A", "-o", "json", NULL };
    k8s_text t[K8S_LISTS] = { { NULL, 0, NULL } };
    int rc = capture_k8s(pods, "kubectl get pods", 0, &t[K8S_PODS]);
    if (!rc) rc = capture_k8s(nodes, "kubectl get nodes", 0, &t[K8S_NODES]);
    if (!rc) rc = capture_k8s(wl, "kubectl get workloads", 1, &t[K8S_WORKLOADS]);
    if (!rc) rc = capture_k8s(aw, "kubectl get appwrappers", 1, &t[K8S_APPWRAPPERS]);
    if (!rc && k8s_read_text(c, t, at, err, sizeof err) < 0) fprintf(stderr, "%s\n", err), rc = EXIT_BAD_INPUT;
    for (int i = 0; i < K8S_LISTS; i++) free((char *)t[i].text);
    return rc;
}

static int check_args(const snap_args *a, double *at) {
    if (!a->from) return cli_usage_error("snapshot", "missing --from slurm|k8s");
    int k8s = !strcmp(a->from, "k8s");
    if (!k8s && strcmp(a->from, "slurm")) return cli_usage_error("snapshot", "--from %s: expected slurm or k8s", a->from);
    if (k8s && (a->squeue || a->sinfo || a->sacct || a->sacct_text || a->replay))
        return cli_usage_error("snapshot", "--from k8s reads --pods, --nodes, --workloads and --appwrappers, not Slurm's reports");
    if (!k8s && (a->pods || a->nodes || a->workloads || a->appwrappers))
        return cli_usage_error("snapshot", "--pods, --nodes, --workloads and --appwrappers go with --from k8s");
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
    printf("wrote %s and %s: %d GPU nodes (%d out of service", o->out, s->csv, s->nodes, s->nodes_unavailable);
    if (s->nodes_draining) printf(", %d draining", s->nodes_draining);
    printf("), ");
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
        { "--from", NULL, CLI_VALUE, &a.from, "the source: slurm | k8s" },
        { "--pods", NULL, CLI_VALUE, &a.pods, "kubectl get pods -A -o json output" },
        { "--nodes", NULL, CLI_VALUE, &a.nodes, "kubectl get nodes -o json output" },
        { "--workloads", NULL, CLI_VALUE, &a.workloads, "Kueue Workloads (kubectl -o json)" },
        { "--appwrappers", NULL, CLI_VALUE, &a.appwrappers, "AppWrappers (kubectl -o json)" },
        { "--squeue", NULL, CLI_VALUE, &a.squeue, "squeue --json output" },
        { "--sinfo", NULL, CLI_VALUE, &a.sinfo, "sinfo --json output" },
        { "--sacct", NULL, CLI_VALUE, &a.sacct, "sacct --json output" },
        { "--sacct-text", NULL, CLI_VALUE, &a.sacct_text, "sacct -P output" },
        { "--default-limit", NULL, CLI_VALUE, &a.default_limit, "time limit of jobs that have none" },
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
    snapshot_opts o = { a.out, a.node_type, at, a.replay, 0 };
    if (a.default_limit) {
        char why[128];
        if (units_parse(a.default_limit, UNIT_DURATION, &o.default_limit_s, why, sizeof why) < 0 || !(o.default_limit_s > 0))
            return cli_usage_error("snapshot", "--default-limit %s: expected a duration like 7d", a.default_limit);
    }
    snapshot_summary sum;
    rc = strcmp(a.from, "k8s") ? read_slurm(&a, at, &c) : read_k8s(&a, at, &c);
    if (!rc && a.replay && c.n_nodes == 0 && (rc = snapshot_infer_nodes(&c, err, sizeof err)) != 0)
        fprintf(stderr, "clustertwin snapshot: %s\n", err);
    if (!rc && (rc = snapshot_write(&c, &o, &sum, err, sizeof err)) != 0) fprintf(stderr, "clustertwin snapshot: %s\n", err);
    if (!rc) print_summary(&o, &sum, &c);
    live_free(&c);
    return rc;
}
