/*
 * plan: the cheapest (or smallest) configuration that meets goals at a
 * stated confidence, found with few runs.
 *
 * Search. One varied path with numeric values: bisection, assuming the
 * goals get easier (or harder) steadily along the values; both ends are run
 * first, which tells the direction and whether any value can work, then
 * each step halves the interval between a failing and a passing value:
 * log2(N) points of R replicas each instead of N. Two values past the
 * boundary are run too (the next best options; and the objective need not
 * grow with the value). Several paths, words, or --search grid: every
 * point. The answer is the point meeting every goal with the best mean
 * objective among the points run. Every run goes to the database, so a
 * plan repeated with the same DB reuses its earlier runs.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sweep.h"
#include "hw/comm.h"
#include "reports/goal.h"
#include "reports/json.h"
#include "reports/store.h"
#include "reports/sweepdb.h"

#define MAX_GOALS 8

static const char help[] =
    "usage: clustertwin plan FILE --goal \"METRIC OP VALUE [@ pNN]\" [--goal ...]\n"
    "                        --vary PATH=VALUES [--vary ...] [--set PATH=VALUE ...]\n"
    "                        [--minimize METRIC | --maximize METRIC] [--replicas R]\n"
    "                        [--jobs N] [--db DB] [--search auto|bisect|grid] [--json PATH|-]\n"
    "                        [--quiet]\n"
    "\n"
    "Find the configuration that meets every goal at the stated confidence with the best\n"
    "objective, running as few points as it can, and show the evidence.\n"
    "  --goal G        e.g. \"jobs[pretrain].end_s <= 90d @ p90\" (90%% of the runs finish\n"
    "                  within 90 days), \"services[chat].ttft_p99_s <= 1s @ p90\",\n"
    "                  \"jobs[pretrain].ettr >= 0.9 @ p50\". METRIC addresses the JSON\n"
    "                  results: jobs[NAME].field, services[NAME].field, queues[NAME].field,\n"
    "                  cluster.field, or a top-level field (simulated_s). OP: <= < >= >.\n"
    "                  @ pNN: holds in NN%% of the replicas (default p50); @ mean: the mean\n"
    "  --vary PATH=VALUES  as for sweep; a range a..b without a step means every whole\n"
    "                  number from a to b (bisection runs only a few of them)\n"
    "  --set PATH=VALUE    a fixed change; may follow the varied value:\n"
    "                  --set 'workload/training/@dp={cluster/nodes/@count}/4'\n"
    "  --minimize M    the objective, a metric as in --goal, by its mean (default: the\n"
    "                  smallest value of the first varied path); --maximize M likewise\n"
    "  --replicas R    Monte Carlo runs per point (default 10)\n"
    "  --search S      bisect (one numeric path; assumes the goals are monotone in it),\n"
    "                  grid (every point), auto (bisect when it can; default)\n"
    "  --jobs N, --db DB   as for sweep (default DB: out/<scenario>-plan.db)\n"
    "  --json PATH     also write the answer and the evidence as JSON ('-': stdout, then\n"
    "                  nothing else is printed there)\n"
    "Exit status: 0 a configuration meets the goals, 1 none does (or a run failed),\n"
    "2 bad input.\n";

typedef struct eval {
    int done;
    int meets;
    double goal_stat[MAX_GOALS];
    goal_stats gs[MAX_GOALS];
    goal_stats obj;
    int runs;
} eval;

typedef struct planner {
    sweep *sw;
    sweep_exec *ex;
    goal goals[MAX_GOALS];
    int n_goals;
    metric_path objective;
    int has_objective, maximize;
    eval *ev;
    int points_run;
} planner;

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

static int evaluate(planner *pl, const int *pts, int np) {
    int todo[64], n = 0;
    for (int i = 0; i < np; i++) {
        if (pl->ev[pts[i]].done) continue;
        int rc = sweep_prepare_point(pl->sw, "plan", pts[i]);
        if (rc != EXIT_OK) return rc;
        int dup = 0;
        for (int k = 0; k < n; k++) dup |= todo[k] == pts[i];
        if (!dup && n < 64) todo[n++] = pts[i];
    }
    if (n == 0) return EXIT_OK;
    int rc = sweep_execute(pl->sw, todo, n, pl->ex);
    if (rc != EXIT_OK) return rc;
    char err[1024];
    for (int i = 0; i < n; i++) {
        int p = todo[i];
        eval *e = &pl->ev[p];
        e->done = 1;
        e->meets = 1;
        pl->points_run++;
        for (int g = 0; g <= pl->n_goals; g++) {
            const metric_path *m = g < pl->n_goals ? &pl->goals[g].metric : &pl->objective;
            if (g == pl->n_goals && !pl->has_objective) break;
            double *v = NULL, *c = NULL;
            int nv = 0;
            if (sweepdb_values(pl->ex->st, pl->sw->id, pl->sw->key[p], m, &v, &nv, err, sizeof err) != STORE_OK) {
                fprintf(stderr, "clustertwin plan: %s\n", err);
                return EXIT_RUN_FAILED;
            }
            c = malloc(((size_t)nv + 1) * sizeof *c);
            if (!c) {
                free(v);
                return EXIT_RUN_FAILED;
            }
            memcpy(c, v, (size_t)nv * sizeof *c);
            if (g < pl->n_goals) {
                e->runs = nv;
                goal_stats_of(v, nv, &e->gs[g]);
                e->meets &= goal_met(&pl->goals[g], c, nv, &e->goal_stat[g]);
            } else {
                goal_stats_of(v, nv, &e->obj);
            }
            free(v);
            free(c);
        }
    }
    return EXIT_OK;
}

/* The objective of point p for comparing: smaller is better. */
static double score(const planner *pl, int p) {
    if (pl->has_objective) {
        double m = pl->ev[p].obj.mean;
        if (isnan(m)) return INFINITY;
        return pl->maximize ? -m : m;
    }
    double x = 0;
    if (override_number(sweep_value(pl->sw, p, 0), &x) < 0) x = p;
    return pl->maximize ? -x : x;
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

static void point_name(const sweep *sw, int p, char *b, size_t n) {
    size_t k = 0;
    b[0] = 0;
    for (int a = 0; a < sw->n_axes && k < n; a++) {
        int w = snprintf(b + k, n - k, "%s%s=%s", a ? " " : "", sw->axes[a].path, sweep_value(sw, p, a));
        if (w > 0) k += (size_t)w;
    }
}

static void describe(const planner *pl, int p, const char *indent) {
    const eval *e = &pl->ev[p];
    char a[64], b[64], c[64], d[64];
    for (int g = 0; g < pl->n_goals; g++) {
        const goal *G = &pl->goals[g];
        const metric_path *m = &G->metric;
        int upper = G->op == GOAL_LE || G->op == GOAL_LT;
        char stat[16];
        if (G->use_mean) snprintf(stat, sizeof stat, "mean");
        else snprintf(stat, sizeof stat, "p%.0f", 100 * (upper ? G->confidence : 1 - G->confidence));
        outf("%s%s: %s = %s %s %s %s  (mean %s, p10..p90 %s..%s, %d runs%s)\n", indent, m->text, stat,
               fmtv(m, e->goal_stat[g], a, sizeof a), e->meets ? "meets" : "vs", goal_op_text(G->op), G->value_text,
               fmtv(m, e->gs[g].mean, b, sizeof b), fmtv(m, e->gs[g].p10, c, sizeof c), fmtv(m, e->gs[g].p90, d, sizeof d),
               e->runs, e->gs[g].missing ? ", some never ended" : "");
    }
    if (pl->has_objective)
        outf("%s%s: mean %s (p10..p90 %s..%s)\n", indent, pl->objective.text, fmtv(&pl->objective, e->obj.mean, a, sizeof a),
               fmtv(&pl->objective, e->obj.p10, b, sizeof b), fmtv(&pl->objective, e->obj.p90, c, sizeof c));
}

static void json_stats(json *j, const char *key, const goal_stats *s) {
    json_object(j, key);
    json_int(j, "runs", s->n);
    json_int(j, "missing", s->missing);
    json_num(j, "mean", s->mean);
    json_num(j, "p10", s->p10);
    json_num(j, "p50", s->p50);
    json_num(j, "p90", s->p90);
    json_num(j, "min", s->min);
    json_num(j, "max", s->max);
    json_end(j);
}

/* One point run: its values, whether it meets the goals, each goal's
 * statistic and the objective. */
static void json_point(json *j, const char *key, const planner *pl, int p) {
    const eval *e = &pl->ev[p];
    json_object(j, key);
    json_object(j, "values");
    for (int a = 0; a < pl->sw->n_axes; a++) json_str(j, pl->sw->axes[a].path, sweep_value(pl->sw, p, a));
    json_end(j);
    json_bool(j, "meets", e->meets);
    json_array(j, "goals");
    for (int g = 0; g < pl->n_goals; g++) {
        json_object(j, NULL);
        json_str(j, "metric", pl->goals[g].metric.text);
        json_num(j, "statistic", e->goal_stat[g]);
        json_stats(j, "replicas", &e->gs[g]);
        json_end(j);
    }
    json_end(j);
    if (pl->has_objective) json_stats(j, "objective", &e->obj);
    json_end(j);
}

static int write_json(const char *path, const planner *pl, const char *const *goals, const char *how, int best,
                      const int *order, int n, const int *next, int n_next) {
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
    json_str(j, "search", how);
    json_int(j, "values", n);
    json_int(j, "points_run", pl->points_run);
    json_int(j, "replicas", pl->sw->replicas);
    if (best >= 0) {
        json_point(j, "answer", pl, best);
    } else {
        json_null(j, "answer");
    }
    json_array(j, "next_best");
    for (int i = 0; i < n_next; i++) json_point(j, NULL, pl, next[i]);
    json_end(j);
    json_array(j, "evidence");
    for (int i = 0; i < n; i++)
        if (pl->ev[order[i]].done) json_point(j, NULL, pl, order[i]);
    json_end(j);
    json_end(j);
    int rc = json_write_file(j, path, err, sizeof err) < 0 ? EXIT_RUN_FAILED : EXIT_OK;
    if (rc) fprintf(stderr, "clustertwin plan: %s\n", err);
    json_free(j);
    return rc;
}

int cmd_plan(int argc, char **argv) {
    const char *file = NULL, *db = NULL, *rep_z = NULL, *jobs_z = NULL, *min_z = NULL, *max_z = NULL,
               *search = "auto", *json_path = NULL;
    const char *goals[MAX_GOALS], *vary[SWEEP_MAX_AXES], *sets[SWEEP_MAX_SETS];
    int n_goals = 0, n_vary = 0, n_set = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        int m;
        const char *v = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            return EXIT_OK;
        }
        if ((m = cli_opt(argc, argv, &i, "--goal", &v)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
            if (n_goals == MAX_GOALS) return cli_usage_error("plan", "at most %d --goal", MAX_GOALS);
            goals[n_goals++] = v;
        } else if ((m = cli_opt(argc, argv, &i, "--vary", &v)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
            if (n_vary == SWEEP_MAX_AXES) return cli_usage_error("plan", "at most %d --vary", SWEEP_MAX_AXES);
            vary[n_vary++] = v;
        } else if ((m = cli_opt(argc, argv, &i, "--set", &v)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
            if (n_set == SWEEP_MAX_SETS) return cli_usage_error("plan", "at most %d --set", SWEEP_MAX_SETS);
            sets[n_set++] = v;
        } else if ((m = cli_opt(argc, argv, &i, "--replicas", &rep_z)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--jobs", &jobs_z)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--db", &db)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--minimize", &min_z)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--maximize", &max_z)) != 0 ||
                   (m = cli_opt(argc, argv, &i, "--search", &search)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
        } else if ((m = cli_opt(argc, argv, &i, "--json", &json_path)) != 0) {
            if (m < 0) return EXIT_BAD_INPUT;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("plan", "unknown option '%s'", argv[i]);
        } else if (!file) {
            file = argv[i];
        } else {
            return cli_usage_error("plan", "one scenario file at a time ('%s' and '%s')", file, argv[i]);
        }
    }
    if (!file) return cli_usage_error("plan", "missing scenario FILE");
    if (n_goals == 0) return cli_usage_error("plan", "give at least one --goal \"METRIC <= VALUE @ p90\"");
    if (n_vary == 0) return cli_usage_error("plan", "give the choice to make: --vary PATH=VALUES");
    if (min_z && max_z) return cli_usage_error("plan", "--minimize or --maximize, not both");
    if (strcmp(search, "auto") && strcmp(search, "bisect") && strcmp(search, "grid"))
        return cli_usage_error("plan", "--search %s: expected auto, bisect or grid", search);
    char err[1024];
    long replicas = 10, jobs = 0;
    if (cli_parse_count("plan", "--replicas", rep_z, 1, 100000, &replicas) != EXIT_OK ||
        cli_parse_count("plan", "--jobs", jobs_z, 1, 4096, &jobs) != EXIT_OK)
        return EXIT_BAD_INPUT;
    if (db && !*db) return cli_usage_error("plan", "--db needs a path");
    planner pl;
    memset(&pl, 0, sizeof pl);
    for (int g = 0; g < n_goals; g++)
        if (goal_parse(goals[g], &pl.goals[pl.n_goals++], err, sizeof err) < 0)
            return cli_usage_error("plan", "--goal %s", err);
    if (min_z || max_z) {
        if (goal_metric_parse(min_z ? min_z : max_z, &pl.objective, err, sizeof err) < 0)
            return cli_usage_error("plan", "--%s %s", min_z ? "minimize" : "maximize", err);
        pl.has_objective = 1;
        pl.maximize = max_z != NULL;
    }
    if (comm_launched())
        return cli_usage_error("plan", "runs on one machine (its search is sequential); spread a grid over MPI "
                                       "ranks with 'mpirun ... clustertwin sweep'");

    plan_out = json_path && !strcmp(json_path, "-") ? NULL : stdout;
    sweep sw;
    store *st = NULL;
    int rc = sweep_init(&sw, "plan", file);
    sw.replicas = (int)replicas;
    for (int i = 0; i < n_vary && rc == EXIT_OK; i++) rc = sweep_parse_vary(&sw, "plan", vary[i], 1);
    for (int i = 0; i < n_set && rc == EXIT_OK; i++) rc = sweep_add_set(&sw, "plan", sets[i]);
    if (rc == EXIT_OK) rc = sweep_points(&sw, "plan");
    /* a bisection needs one path of numbers, in increasing order */
    int *order = NULL, n = sw.n_points, bisect = 0;
    if (rc == EXIT_OK) {
        order = malloc((size_t)n * sizeof *order);
        pl.ev = calloc((size_t)n, sizeof *pl.ev);
        if (!order || !pl.ev) rc = EXIT_RUN_FAILED;
    }
    if (rc == EXIT_OK) {
        int numeric = sw.n_axes == 1;
        double *x = malloc((size_t)n * sizeof *x);
        for (int p = 0; p < n && x; p++) {
            order[p] = p;
            if (override_number(sweep_value(&sw, p, 0), &x[p]) < 0) numeric = 0;
        }
        if (x && numeric) {                       /* insertion sort: lists are short, ranges sorted */
            for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && x[order[j - 1]] > x[order[j]]; j--) {
                    int t = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = t;
                }
        }
        free(x);
        bisect = numeric && strcmp(search, "grid") && n > 2;
        if (!strcmp(search, "bisect") && !bisect && n > 2) {
            fprintf(stderr, "clustertwin plan: --search bisect needs one --vary of numbers\n");
            rc = EXIT_BAD_INPUT;
        }
        if (!bisect && n > 64) {
            fprintf(stderr, "clustertwin plan: a grid search of %d points; narrow it (at most 64) or give one "
                            "numeric path to bisect\n", n);
            rc = EXIT_BAD_INPUT;
        }
    }
    /* the ends (or the whole grid) are checked before anything runs */
    if (rc == EXIT_OK) rc = sweep_prepare_point(&sw, "plan", order[0]);
    if (rc == EXIT_OK) rc = sweep_prepare_point(&sw, "plan", order[n - 1]);
    for (int i = 0; !bisect && i < n && rc == EXIT_OK; i++) rc = sweep_prepare_point(&sw, "plan", i);
    char dbbuf[SC_NAME_MAX + 32];
    if (rc == EXIT_OK && !db) {
        snprintf(dbbuf, sizeof dbbuf, "out/%s-plan.db", sw.base->name);
        for (char *p = dbbuf + 4; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                  *p == '_' || *p == '.'))
                *p = '_';
        mkdir("out", 0777);
        db = dbbuf;
    }
    if (rc == EXIT_OK) {
        int src = store_open(db, STORE_WRITE, &st, err, sizeof err);
        if (src != STORE_OK) {
            fprintf(stderr, "clustertwin plan: %s\n", err);
            rc = src == STORE_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
        }
    }
    sweep_exec ex = { .jobs = jobs ? (int)jobs : (int)(sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1),
                      .progress = !quiet && isatty(2), .cmd = "plan", .st = st };
    pl.sw = &sw;
    pl.ex = &ex;
    const char *how = "grid";
    int boundary = -1, dir = 0;
    if (rc == EXIT_OK && bisect) {
        int ends[2] = { order[0], order[n - 1] };
        rc = evaluate(&pl, ends, 2);
        int lo_ok = rc == EXIT_OK && pl.ev[order[0]].meets, hi_ok = rc == EXIT_OK && pl.ev[order[n - 1]].meets;
        if (rc == EXIT_OK && lo_ok != hi_ok) {
            how = "bisection";
            /* i_bad fails, i_good meets; narrow until adjacent */
            int i_bad = lo_ok ? n - 1 : 0, i_good = lo_ok ? 0 : n - 1;
            dir = lo_ok ? -1 : 1;                /* the direction in which the goal gets easier */
            while (rc == EXIT_OK && abs(i_good - i_bad) > 1) {
                int mid = (i_bad + i_good) / 2;
                rc = evaluate(&pl, &order[mid], 1);
                if (rc != EXIT_OK) break;
                if (pl.ev[order[mid]].meets) i_good = mid;
                else i_bad = mid;
            }
            boundary = i_good;
            /* the next options past the boundary, and a check of monotony */
            int more[2], nm = 0;
            for (int k = 1; k <= 2; k++) {
                int j = i_good + k * dir;
                if (j >= 0 && j < n) more[nm++] = order[j];
            }
            if (rc == EXIT_OK && nm) rc = evaluate(&pl, more, nm);
        } else if (rc == EXIT_OK && lo_ok && hi_ok) {
            how = "grid (the goals hold at both ends: the objective decides)";
            int pick[17], np = 0;
            int step = n > 17 ? n / 16 : 1;
            for (int i = 0; i < n && np < 16; i += step) pick[np++] = order[i];
            pick[np++] = order[n - 1];
            for (int i = 0; i < np && rc == EXIT_OK; i++) rc = sweep_prepare_point(&sw, "plan", pick[i]);
            if (rc == EXIT_OK) rc = evaluate(&pl, pick, np);
        } else if (rc == EXIT_OK) {
            how = "bisection (no value meets the goals at either end)";
        }
    } else if (rc == EXIT_OK) {
        int *all = malloc((size_t)n * sizeof *all);
        if (!all) rc = EXIT_RUN_FAILED;
        for (int i = 0; all && i < n && rc == EXIT_OK; i += 64) {
            int k = n - i < 64 ? n - i : 64;
            for (int j = 0; j < k; j++) all[j] = i + j;
            rc = evaluate(&pl, all, k);
        }
        free(all);
    }
    if (rc == EXIT_OK) {
        /* the answer: meets every goal, best objective; ties to the earlier in order */
        int best = -1;
        for (int i = 0; i < n; i++) {
            int p = order[i];
            if (!pl.ev[p].done || !pl.ev[p].meets) continue;
            if (best < 0 || score(&pl, p) < score(&pl, best)) best = p;
        }
        char name[1024];
        outf("plan for %s: ", sw.base->name);
        for (int g = 0; g < pl.n_goals; g++) outf("%s%s", g ? " and " : "", goals[g]);
        if (pl.has_objective) outf("; %s %s", pl.maximize ? "maximize" : "minimize", pl.objective.text);
        else outf("; the smallest %s", sw.axes[0].path);
        outf("\nsearch: %s over %d values; %d points run, %d replicas each (%d runs; %s)\n", how, n, pl.points_run,
               sw.replicas, pl.points_run * sw.replicas, db);
        if (best < 0) {
            outf("\nno configuration meets the goals among the points run.\n");
            rc = EXIT_RUN_FAILED;
        } else {
            point_name(&sw, best, name, sizeof name);
            outf("\nanswer: %s\n", name);
            /* the cluster it amounts to, from the runs (overrides may size it) */
            static const char *const size_of[] = { "cluster.gpus", "cluster.nodes" };
            double sz[2] = { NAN, NAN };
            for (int k = 0; k < 2; k++) {
                metric_path mp;
                double *v = NULL;
                int nv = 0;
                if (goal_metric_parse(size_of[k], &mp, err, sizeof err) == 0 &&
                    sweepdb_values(st, sw.id, sw.key[best], &mp, &v, &nv, err, sizeof err) == STORE_OK && nv > 0)
                    sz[k] = v[0];
                free(v);
            }
            if (!isnan(sz[0]) && !isnan(sz[1])) outf("  the cluster: %.0f GPUs on %.0f nodes\n", sz[0], sz[1]);
            describe(&pl, best, "  ");
        }
        outf("\nevidence (every point run, in order of value):\n");
        for (int i = 0; i < n; i++) {
            int p = order[i];
            if (!pl.ev[p].done) continue;
            point_name(&sw, p, name, sizeof name);
            outf("  %s%s  %s\n", name, p == best ? "  <- answer" : i == boundary ? "  <- boundary" : "",
                   pl.ev[p].meets ? "meets the goals" : "misses");
            describe(&pl, p, "      ");
        }
        /* next best: the other points meeting the goals, by objective */
        int shown = 0, next[3], n_next = 0;
        for (int k = 0; k < 3; k++) {
            int nb = -1;
            for (int i = 0; i < n; i++) {
                int p = order[i];
                if (!pl.ev[p].done || !pl.ev[p].meets || p == best || pl.ev[p].done == 2) continue;
                if (nb < 0 || score(&pl, p) < score(&pl, nb)) nb = p;
            }
            if (nb < 0) break;
            pl.ev[nb].done = 2;                  /* listed */
            next[n_next++] = nb;
            point_name(&sw, nb, name, sizeof name);
            char v[64];
            outf("%s%s%s%s", shown++ ? ", " : "\nnext best: ", name, pl.has_objective ? " (" : "",
                   pl.has_objective ? fmtv(&pl.objective, pl.ev[nb].obj.mean, v, sizeof v) : "");
            if (pl.has_objective) outf(")");
        }
        if (shown) outf("\n");
        if (json_path) {
            int jrc = write_json(json_path, &pl, goals, how, best, order, n, next, n_next);
            if (jrc != EXIT_OK) rc = jrc;
        }
        if (bisect && dir && boundary >= 0) {
            int changes = 0, last = -1;
            for (int i = 0; i < n; i++) {
                int p = order[i];
                if (!pl.ev[p].done) continue;
                if (last >= 0 && pl.ev[p].meets != last) changes++;
                last = pl.ev[p].meets;
            }
            if (changes <= 1)
                outf("\nbisection assumes the goals get easier as %s %s; every point run agrees.\n",
                       sw.axes[0].path, dir > 0 ? "grows" : "shrinks");
            else
                outf("\nwarning: the goals are not monotone in %s among the points run; the answer may not "
                       "be the best (try --search grid)\n", sw.axes[0].path);
        }
    }
    free(order);
    free(pl.ev);
    store_close(st);
    sweep_free(&sw);
    return rc;
}
