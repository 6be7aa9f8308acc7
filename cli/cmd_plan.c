/*
 * plan: the command line and the printed answer of `clustertwin plan`;
 * the search itself is plan/planner.h (see docs/planning.md).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/testpause.h"
#include "hw/comm.h"
#include "models/confidence.h"
#include "plan/planner.h"
#include "reports/json.h"
#include "reports/store.h"

static const char help[] =
    "usage: clustertwin plan FILE --goal \"METRIC OP VALUE [@ pNN]\" [--goal ...]\n"
    "                        --vary PATH=VALUES [--vary ...] [--set PATH=VALUE ...]\n"
    "                        [--minimize METRIC | --maximize METRIC] [--replicas R|auto]\n"
    "                        [--max-replicas N]\n"
    "                        [--jobs N] [--db DB] [--search auto|bisect|grid] [--json PATH|-]\n"
    "                        [--quiet]\n"
    "\n"
    "Find the configuration that meets every goal at the stated confidence with the best\n"
    "objective, running as few points as it can, and show the evidence.\n"
    "  --goal G        e.g. \"jobs[pretrain].end_s <= 90d @ p90\" (90% of the runs finish\n"
    "                  within 90 days), \"services[chat].ttft_p99_s <= 1s @ p90\",\n"
    "                  \"jobs[pretrain].ettr >= 0.9 @ p50\". METRIC addresses the JSON\n"
    "                  results: jobs[NAME].field, services[NAME].field, queues[NAME].field,\n"
    "                  cluster.field, or a top-level field (simulated_s). OP: <= < >= >.\n"
    "                  @ pNN: holds in NN% of the replicas (default p50); @ mean: the mean\n"
    "  --vary PATH=VALUES  as for sweep; a range a..b without a step means every whole\n"
    "                  number from a to b (bisection runs only a few of them)\n"
    "  --set PATH=VALUE    a fixed change; may follow the varied value:\n"
    "                  --set 'workload/training/@dp={cluster/nodes/@count}/4'\n"
    "  --minimize M    the objective, a metric as in --goal, by its mean (default: the\n"
    "                  smallest value of the first varied path); --maximize M likewise\n"
    "  --replicas R    Monte Carlo runs per point (default 10); the verdict uses the first R\n"
    "                  replicas of each point, whatever else the database holds\n"
    "  --replicas auto look after 10, 20, 40, ... runs and stop when each goal's confidence\n"
    "                  interval lies on one side of its threshold (or at --max-replicas,\n"
    "                  default 160, saying so)\n"
    "  --search S      bisect (one numeric path; assumes the goals are monotone in it),\n"
    "                  grid (every point), auto (bisect when it can; default)\n"
    "  --jobs N, --db DB   as for sweep (default DB: out/<scenario>-plan.db)\n"
    "  --json PATH     also write the answer and the evidence as JSON ('-': stdout, then\n"
    "                  nothing else is printed there)\n"
    "A configuration that does not fit (GPU memory, more GPUs than the cluster) is\n"
    "recorded as such with the reason and the search goes on. A goal naming a job,\n"
    "service or queue the scenario does not have is bad input.\n"
    "Exit status: 0 a configuration meets the goals, 1 none does (or a run failed),\n"
    "2 bad input.\n";

/* The human answer goes to stdout, unless the JSON does (--json -). */
static FILE *plan_out;

static void outf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void outf(const char *fmt, ...) {
    if (!plan_out) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(plan_out, fmt, ap);
    va_end(ap);
}

static const char *fmtv(const metric_path *m, double v, char *b, size_t n) {
    size_t k = strlen(m->field);
    if (isnan(v)) snprintf(b, n, "n/a");
    else if (isinf(v)) snprintf(b, n, "never");
    else if (k > 2 && !strcmp(m->field + k - 2, "_s")) {
        double a = fabs(v);
        if (a < 1) snprintf(b, n, "%.3g ms", v * 1e3);
        else if (a < 120) snprintf(b, n, "%.3g s", v);
        else if (a < 2 * 3600) snprintf(b, n, "%.1f min", v / 60);
        else if (a < 2 * 86400) snprintf(b, n, "%.2f h", v / 3600);
        else snprintf(b, n, "%.2f d", v / 86400);
    } else if (k > 4 && !strcmp(m->field + k - 4, "_usd")) {
        if (fabs(v) >= 1e6) snprintf(b, n, "$%.4gM", v / 1e6);
        else snprintf(b, n, "$%.6g", v);
    } else snprintf(b, n, "%.5g", v);
    return b;
}

/* An end of an interval: an infinite one is an end that needs more runs. */
static const char *fmt_end(const metric_path *m, double v, char *b, size_t n) {
    if (isinf(v)) snprintf(b, n, "%s", v > 0 ? "+inf" : "-inf");
    else fmtv(m, v, b, n);
    return b;
}

static void point_name(const sweep *sw, int p, char *b, size_t n) {
    size_t k = 0;
    b[0] = 0;
    for (int a = 0; a < sw->n_axes && k < n; a++) {
        int w = snprintf(b + k, n - k, "%s%s=%s", a ? " " : "", sw->axes[a].path, sweep_value(sw, p, a));
        if (w > 0) k += (size_t)w;
    }
}

static void describe(const planner *pl, int p, const char *indent) {
    const plan_eval *e = &pl->ev[p];
    if (!e->fits) {
        outf("%sdoes not fit: %s\n", indent, pl->sw->unfit[p] ? pl->sw->unfit[p] : "?");
        return;
    }
    char a[64], b[64], c[64], d[64], lo[64], hi[64];
    for (int g = 0; g < pl->n_goals; g++) {
        const goal *G = &pl->goals[g];
        const metric_path *m = &G->metric;
        const goal_check_result *r = &e->gc[g];
        char stat[16];
        goal_statistic(G, stat, sizeof stat);
        outf("%s%s: %s = %s %s %s %s  (%.4g%% CI %s..%s%s; mean %s, p10..p90 %s..%s, %d runs%s)\n", indent, m->text,
             stat, fmtv(m, r->stat, a, sizeof a), e->meets ? "meets" : "vs", goal_op_text(G->op), G->value_text,
             100 * pl->level, fmt_end(m, r->lo, lo, sizeof lo), fmt_end(m, r->hi, hi, sizeof hi),
             r->decided ? "" : ", undecided", fmtv(m, e->gs[g].mean, b, sizeof b), fmtv(m, e->gs[g].p10, c, sizeof c),
             fmtv(m, e->gs[g].p90, d, sizeof d), e->runs, e->gs[g].missing ? ", some never ended" : "");
    }
    if (pl->has_objective)
        outf("%s%s: mean %s (95%% CI %s..%s; p10..p90 %s..%s)\n", indent, pl->objective.text,
             fmtv(&pl->objective, e->obj.mean, a, sizeof a), fmt_end(&pl->objective, e->obj.mean_lo, lo, sizeof lo),
             fmt_end(&pl->objective, e->obj.mean_hi, hi, sizeof hi), fmtv(&pl->objective, e->obj.p10, b, sizeof b),
             fmtv(&pl->objective, e->obj.p90, c, sizeof c));
    if (pl->auto_replicas) {
        if (e->decided) outf("%sdecided after %d runs\n", indent, e->runs);
        else outf("%sundecided at the maximum of %d runs: the verdict is the point estimate's\n", indent, e->runs);
    }
}

/* A goal's statistic over the replicas, under the plan JSON's keys. */
#define STAT(key, m) { key, offsetof(goal_stats, m) }
static const json_field stat_counts[] = { STAT("runs", n), STAT("missing", missing) };
static const json_field stat_values[] = {
    STAT("mean", mean), STAT("p10", p10), STAT("p50", p50), STAT("p90", p90), STAT("min", min), STAT("max", max),
    STAT("mean_ci_low", mean_lo), STAT("mean_ci_high", mean_hi),
};

static void json_stats(json *j, const char *key, const goal_stats *s) {
    json_object(j, key);
    json_ints(j, s, JSON_FIELDS(stat_counts));
    json_nums(j, s, JSON_FIELDS(stat_values));
    json_end(j);
}

/* One point run: its values, whether it fits and meets the goals, the
 * GPUs it uses, each goal's statistic with its interval, the objective. */
static void json_point(json *j, const char *key, const planner *pl, int p) {
    const plan_eval *e = &pl->ev[p];
    json_object(j, key);
    json_object(j, "values");
    for (int a = 0; a < pl->sw->n_axes; a++) json_str(j, pl->sw->axes[a].path, sweep_value(pl->sw, p, a));
    json_end(j);
    json_bool(j, "fits", e->fits);
    if (!e->fits) json_str(j, "reason", pl->sw->unfit[p] ? pl->sw->unfit[p] : "");
    json_bool(j, "meets", e->meets);
    if (e->fits) {
        json_bool(j, "decided", e->decided);
        json_int(j, "replicas_run", e->runs);
        json_num(j, "gpus", e->gpus);
        json_str(j, "gpus_of", pl->uses_text);
        json_object(j, "cluster");
        json_num(j, "gpus", e->cluster_gpus);
        json_num(j, "nodes", e->cluster_nodes);
        json_end(j);
    }
    json_array(j, "goals");
    for (int g = 0; e->fits && g < pl->n_goals; g++) {
        char stat[16];
        goal_statistic(&pl->goals[g], stat, sizeof stat);
        json_object(j, NULL);
        json_str(j, "metric", pl->goals[g].metric.text);
        json_num(j, "statistic", e->gc[g].stat);
        json_str(j, "statistic_name", stat);
        /* an end that does not exist with this many runs is null */
        json_object(j, "ci");
        json_num(j, "level", pl->level);
        json_num(j, "low", e->gc[g].lo);
        json_num(j, "high", e->gc[g].hi);
        json_end(j);
        json_bool(j, "decided", e->gc[g].decided);
        json_stats(j, "replicas", &e->gs[g]);
        json_end(j);
    }
    json_end(j);
    if (pl->has_objective && e->fits) json_stats(j, "objective", &e->obj);
    json_end(j);
}

static int write_json(const char *path, const planner *pl, const char *const *goals, int best, const int *next,
                      int n_next) {
    json *j = json_new();
    char err[1024];
    if (!j) return EXIT_RUN_FAILED;
    json_object(j, NULL);
    json_str(j, "scenario", pl->sw->base->name);
    json_array(j, "goals");
    for (int g = 0; g < pl->n_goals; g++) json_str(j, NULL, goals[g]);
    json_end(j);
    if (pl->has_objective) {
        json_str(j, pl->maximize ? "maximize" : "minimize", pl->objective.text);
    }
    json_str(j, "search", pl->how);
    json_int(j, "values", pl->n);
    json_int(j, "points_run", pl->points_run);
    json_int(j, "points_unfit", pl->unfit);
    json_int(j, "replicas", pl->auto_replicas ? pl->max_replicas : pl->replicas);
    json_bool(j, "replicas_auto", pl->auto_replicas);
    json_int(j, "runs", pl->runs_used);
    json_num(j, "ci_level", pl->level);
    if (best >= 0) {
        json_point(j, "answer", pl, best);
    } else {
        json_null(j, "answer");
    }
    json_array(j, "next_best");
    for (int i = 0; i < n_next; i++) json_point(j, NULL, pl, next[i]);
    json_end(j);
    json_array(j, "evidence");
    for (int i = 0; i < pl->n; i++)
        if (pl->ev[pl->order[i]].done) json_point(j, NULL, pl, pl->order[i]);
    json_end(j);
    json_end(j);
    int rc = json_write_file(j, path, err, sizeof err) < 0 ? EXIT_RUN_FAILED : EXIT_OK;
    if (rc) fprintf(stderr, "clustertwin plan: %s\n", err);
    json_free(j);
    return rc;
}

/* What the command line gave. */
typedef struct plan_args {
    const char *file, *db, *rep_z, *jobs_z, *min_z, *max_z, *search, *json_path, *maxrep_z;
    const char *goals[PLAN_MAX_GOALS], *vary[SWEEP_MAX_AXES], *sets[SWEEP_MAX_SETS];
    cli_list goal_l, vary_l, set_l;
    int quiet;
    long replicas, jobs, max_replicas;
    int auto_replicas;
} plan_args;

static int parse_args(plan_args *a, int argc, char **argv) {
    a->search = "auto";
    a->goal_l = (cli_list){ a->goals, 0, PLAN_MAX_GOALS };
    a->vary_l = (cli_list){ a->vary, 0, SWEEP_MAX_AXES };
    a->set_l = (cli_list){ a->sets, 0, SWEEP_MAX_SETS };
    const cli_option opts[] = {
        { "--goal", NULL, CLI_LIST, &a->goal_l, "a goal: METRIC OP VALUE [@ pNN | @ mean]" },
        { "--vary", NULL, CLI_LIST, &a->vary_l, "the choice: an attribute's path and its values" },
        { "--set", NULL, CLI_LIST, &a->set_l, "a fixed change (PATH=VALUE)" },
        { "--replicas", NULL, CLI_VALUE, &a->rep_z, "Monte Carlo runs per point, or auto" },
        { "--max-replicas", NULL, CLI_VALUE, &a->maxrep_z, "the most runs per point under --replicas auto" },
        { "--jobs", NULL, CLI_VALUE, &a->jobs_z, "local worker processes" },
        { "--db", NULL, CLI_VALUE, &a->db, "the results database" },
        { "--minimize", NULL, CLI_VALUE, &a->min_z, "the objective to minimize (a metric)" },
        { "--maximize", NULL, CLI_VALUE, &a->max_z, "the objective to maximize (a metric)" },
        { "--search", NULL, CLI_VALUE, &a->search, "auto, bisect or grid" },
        { "--json", NULL, CLI_VALUE, &a->json_path, "also write the answer and the evidence as JSON" },
        { "--quiet", "-q", CLI_FLAG, &a->quiet, "no progress bar" },
        { NULL },
    };
    cli_spec spec = { "plan", help, opts, CLI_ONE_FILE, &a->file, NULL };
    int rc = cli_parse(&spec, argc, argv);
    if (rc != CLI_GO) return rc;
    if (!a->file) return cli_usage_error("plan", "missing scenario FILE");
    if (a->goal_l.n == 0) return cli_usage_error("plan", "give at least one --goal \"METRIC <= VALUE @ p90\"");
    if (a->vary_l.n == 0) return cli_usage_error("plan", "give the choice to make: --vary PATH=VALUES");
    if (a->min_z && a->max_z) return cli_usage_error("plan", "--minimize or --maximize, not both");
    if (strcmp(a->search, "auto") && strcmp(a->search, "bisect") && strcmp(a->search, "grid"))
        return cli_usage_error("plan", "--search %s: expected auto, bisect or grid", a->search);
    a->replicas = 10, a->jobs = 0, a->max_replicas = PLAN_AUTO_MAX;
    a->auto_replicas = a->rep_z && !strcmp(a->rep_z, "auto");
    if ((!a->auto_replicas && cli_parse_count("plan", "--replicas", a->rep_z, 1, 100000, &a->replicas) != EXIT_OK) ||
        cli_parse_count("plan", "--max-replicas", a->maxrep_z, 1, 100000, &a->max_replicas) != EXIT_OK ||
        cli_parse_count("plan", "--jobs", a->jobs_z, 1, 4096, &a->jobs) != EXIT_OK)
        return EXIT_BAD_INPUT;
    if (a->maxrep_z && !a->auto_replicas) return cli_usage_error("plan", "--max-replicas goes with --replicas auto");
    if (a->db && !*a->db) return cli_usage_error("plan", "--db needs a path");
    return CLI_GO;
}

/* The goals and the objective into the planner. */
static int parse_goals(const plan_args *a, planner *pl) {
    char err[1024];
    for (int g = 0; g < a->goal_l.n; g++)
        if (goal_parse(a->goals[g], &pl->goals[pl->n_goals++], err, sizeof err) < 0)
            return cli_usage_error("plan", "--goal %s", err);
    if (a->min_z || a->max_z) {
        if (goal_metric_parse(a->min_z ? a->min_z : a->max_z, &pl->objective, err, sizeof err) < 0)
            return cli_usage_error("plan", "--%s %s", a->min_z ? "minimize" : "maximize", err);
        pl->has_objective = 1;
        pl->maximize = a->max_z != NULL;
    }
    planner_replicas(pl, (int)a->replicas, a->auto_replicas, a->auto_replicas ? (int)a->max_replicas : (int)a->replicas);
    if (comm_launched())
        return cli_usage_error("plan", "runs on one machine (its search is sequential); spread a grid over MPI "
                                       "ranks with 'mpirun ... clustertwin sweep'");
    return EXIT_OK;
}

/* The scenario, the goals' elements, the grid and its order. */
static int set_up(const plan_args *a, planner *pl, sweep *sw) {
    int rc = sweep_init(sw, "plan", a->file);
    sw->replicas = pl->auto_replicas ? PLAN_AUTO_FIRST : (int)a->replicas;
    pl->sw = sw;
    /* the jobs and services the goals name exist, before anything runs */
    for (int g = 0; g < a->goal_l.n && rc == EXIT_OK; g++)
        rc = planner_check_element(pl, &pl->goals[g].metric, "--goal", a->goals[g]);
    if (rc == EXIT_OK && pl->has_objective)
        rc = planner_check_element(pl, &pl->objective, a->min_z ? "--minimize" : "--maximize",
                                   a->min_z ? a->min_z : a->max_z);
    for (int i = 0; i < a->vary_l.n && rc == EXIT_OK; i++) rc = sweep_parse_vary(sw, "plan", a->vary[i], 1);
    for (int i = 0; i < a->set_l.n && rc == EXIT_OK; i++) rc = sweep_add_set(sw, "plan", a->sets[i]);
    if (rc == EXIT_OK) rc = sweep_points(sw, "plan");
    if (rc == EXIT_OK) rc = planner_order(pl, a->search);
    return rc;
}

/* The results database (default out/<scenario>-plan.db). */
static int open_db(const char **db, char *dbbuf, size_t cap, const sweep *sw, store **st) {
    char err[1024];
    if (!*db) {
        cli_default_db(sw->base->name, "-plan", dbbuf, cap);
        mkdir("out", 0777);
        *db = dbbuf;
    }
    int src = store_open(*db, STORE_WRITE, st, err, sizeof err);
    if (src == STORE_OK) return EXIT_OK;
    fprintf(stderr, "clustertwin plan: %s\n", err);
    return src == STORE_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
}

/* The first lines: what was asked and how it was searched. */
static void print_search(const planner *pl, const plan_args *a, const char *db) {
    const sweep *sw = pl->sw;
    outf("plan for %s: ", sw->base->name);
    for (int g = 0; g < pl->n_goals; g++) outf("%s%s", g ? " and " : "", a->goals[g]);
    if (pl->has_objective) outf("; %s %s", pl->maximize ? "maximize" : "minimize", pl->objective.text);
    else outf("; the smallest %s", sw->axes[0].path);
    char unfit[64] = "";
    if (pl->unfit) snprintf(unfit, sizeof unfit, " (%d of them do%s not fit)", pl->unfit, pl->unfit == 1 ? "es" : "");
    if (pl->auto_replicas)
        outf("\nsearch: %s over %d values; %d points run%s, %d to %d replicas each (auto: %d runs; %.4g%% "
             "intervals at each of %d looks; %s)\n", pl->how, pl->n, pl->points_run, unfit, PLAN_AUTO_FIRST <
             pl->max_replicas ? PLAN_AUTO_FIRST : pl->max_replicas, pl->max_replicas, pl->runs_used,
             100 * pl->level, pl->looks, db);
    else
        outf("\nsearch: %s over %d values; %d points run%s, %d replicas each (%d runs; %s)\n", pl->how, pl->n,
             pl->points_run, unfit, sw->replicas, pl->runs_used, db);
}

/* The answer with the GPUs it uses, and the evidence. */
static void print_answer(const planner *pl, int best) {
    char name[1024];
    if (best < 0) {
        outf("\nno configuration meets the goals among the points run.\n");
    } else {
        point_name(pl->sw, best, name, sizeof name);
        outf("\nanswer: %s\n", name);
        /* the GPUs the configuration uses: its jobs' and services', and
         * the cluster when the plan sizes it */
        const plan_eval *e = &pl->ev[best];
        if (pl->n_uses && !isnan(e->gpus))
            outf("  uses: %.0f GPUs (%s)%s\n", e->gpus, pl->uses_text, pl->cluster_varies ? "" : ", on the fixed cluster");
        if (pl->cluster_varies && !isnan(e->cluster_gpus) && !isnan(e->cluster_nodes))
            outf("  the cluster: %.0f GPUs on %.0f node%s\n", e->cluster_gpus, e->cluster_nodes,
                 e->cluster_nodes == 1 ? "" : "s");
        describe(pl, best, "  ");
    }
    outf("\nevidence (every point run, in order of value):\n");
    for (int i = 0; i < pl->n; i++) {
        int p = pl->order[i];
        if (!pl->ev[p].done) continue;
        point_name(pl->sw, p, name, sizeof name);
        outf("  %s%s  %s\n", name, p == best ? "  <- answer" : i == pl->boundary ? "  <- boundary" : "",
             !pl->ev[p].fits ? "does not fit" : pl->ev[p].meets ? "meets the goals" : "misses");
        describe(pl, p, "      ");
    }
}

/* A plan that varies a service's disaggregated= (true and false) answers
 * with the best of either kind; the best of each value is printed beside
 * it, with the GPUs it uses (docs/disaggregated-serving.md). */
static void print_beside(const planner *pl, int best) {
    const sweep *sw = pl->sw;
    static const char key[] = "@disaggregated";
    char name[1024];
    for (int a = 0; a < sw->n_axes; a++) {
        size_t k = strlen(sw->axes[a].path);
        if (k < sizeof key - 1 || strcmp(sw->axes[a].path + k - (sizeof key - 1), key)) continue;
        outf("\nbest of each, by %s:\n", sw->axes[a].path);
        for (int v = 0; v < sw->axes[a].n; v++) {
            const char *val = sw->axes[a].values[v];
            int p = planner_best_where(pl, a, val);
            if (p < 0) {
                outf("  %s: no configuration meets the goals\n", val);
                continue;
            }
            point_name(sw, p, name, sizeof name);
            outf("  %s: %s", val, name);
            if (pl->n_uses && !isnan(pl->ev[p].gpus)) outf(", %.0f GPUs", pl->ev[p].gpus);
            outf("%s\n", p == best ? "  <- answer" : "");
        }
    }
}

/* The next best, the replicas' verdict under auto, the JSON, and whether
 * the goals were monotone as bisection assumes. */
static int print_rest(planner *pl, const plan_args *a, int best) {
    int next[3], n_next = planner_next_best(pl, best, next, 3), rc = EXIT_OK;
    char name[1024], v[64];
    for (int k = 0; k < n_next; k++) {
        point_name(pl->sw, next[k], name, sizeof name);
        outf("%s%s%s%s", k ? ", " : "\nnext best: ", name, pl->has_objective ? " (" : "",
             pl->has_objective ? fmtv(&pl->objective, pl->ev[next[k]].obj.mean, v, sizeof v) : "");
        if (pl->has_objective) outf(")");
    }
    if (n_next) outf("\n");
    if (pl->auto_replicas) {
        int undecided = planner_undecided(pl);
        if (undecided)
            outf("\n%d point%s reached the maximum of %d replicas undecided: the confidence interval still "
                 "straddles a goal's threshold, so the verdict there is the point estimate's (raise "
                 "--max-replicas to decide)\n", undecided, undecided == 1 ? "" : "s", pl->max_replicas);
        else
            outf("\nevery point run was decided by its confidence intervals before the maximum of %d replicas\n",
                 pl->max_replicas);
    }
    if (a->json_path) rc = write_json(a->json_path, pl, a->goals, best, next, n_next);
    if (pl->bisect && pl->dir && pl->boundary >= 0) {
        if (planner_changes(pl) <= 1)
            outf("\nbisection assumes the goals get easier as %s %s; every point run agrees.\n",
                 pl->sw->axes[0].path, pl->dir > 0 ? "grows" : "shrinks");
        else
            outf("\nwarning: the goals are not monotone in %s among the points run; the answer may not "
                 "be the best (try --search grid)\n", pl->sw->axes[0].path);
    }
    return rc;
}

static long cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

int cmd_plan(int argc, char **argv) {
    plan_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    if (rc != CLI_GO) return rc;
    planner pl;
    memset(&pl, 0, sizeof pl);
    if ((rc = parse_goals(&a, &pl)) != EXIT_OK) return rc;
    plan_out = a.json_path && !strcmp(a.json_path, "-") ? NULL : stdout;
    sweep sw;
    store *st = NULL;
    char dbbuf[SC_NAME_MAX + 32];
    rc = set_up(&a, &pl, &sw);
    if (rc == EXIT_OK) rc = open_db(&a.db, dbbuf, sizeof dbbuf, &sw, &st);
    sweep_exec ex = { .jobs = a.jobs ? (int)a.jobs : (int)cores(), .progress = !a.quiet && isatty(2), .cmd = "plan",
                      .st = st, .commit_each = testpause_active(), .on_stored = testpause_tick };
    pl.ex = &ex;
    if (rc == EXIT_OK) rc = planner_search(&pl);
    if (rc == EXIT_OK) {
        int best = planner_best(&pl);
        print_search(&pl, &a, a.db);
        print_answer(&pl, best);
        print_beside(&pl, best);
        if (best < 0) rc = EXIT_RUN_FAILED;
        int jrc = print_rest(&pl, &a, best);
        if (jrc != EXIT_OK) rc = jrc;
    }
    planner_free(&pl);
    store_close(st);
    sweep_free(&sw);
    return rc;
}
