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
 *
 * A point that does not fit (sweep_fits: its world is refused) is evidence
 * with its reason, never run; a bisection whose end does not fit first
 * bisects on fit (checks only) for the values that do. Each goal's
 * statistic comes with its confidence interval (reports/goal.h);
 * --replicas auto adds replicas until the intervals decide. See
 * docs/planning.md.
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
#include "models/confidence.h"
#include "reports/goal.h"
#include "reports/json.h"
#include "reports/store.h"
#include "reports/sweepdb.h"

#define MAX_GOALS 8

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

/* --replicas auto (see docs/planning.md): the verdict of a point is looked
 * at after PLAN_AUTO_FIRST replicas, then after twice as many each time,
 * up to the maximum; it stops at the first look where every goal's
 * interval lies on one side of its threshold. The looks are few and fixed
 * (10, 20, 40, 80, 160 by default) so the same command gives the same
 * answer, and each look's intervals are at level 1 - (1 - 95%) / looks,
 * so the chance that any of them misses is at most 5% (Bonferroni). */
#define PLAN_AUTO_FIRST 10           /* the first look: the fixed default's count */
#define PLAN_AUTO_MAX 160            /* the default maximum: five looks */
#define MAX_USES 16

typedef struct eval {
    int done;                        /* 1 evaluated; 2 also listed as a next best */
    int fits;                        /* 0: does not fit (sw->unfit[p] says why), not run */
    int meets;
    int decided;                     /* the intervals decide the verdict */
    goal_check_result gc[MAX_GOALS];
    goal_stats gs[MAX_GOALS];
    goal_stats obj;
    int runs;                        /* replicas the verdict uses */
    double gpus;                     /* GPUs the configuration uses (NaN: unknown) */
    double cluster_gpus, cluster_nodes;
} eval;

typedef struct planner {
    sweep *sw;
    sweep_exec *ex;
    goal goals[MAX_GOALS];
    int n_goals;
    metric_path objective;
    int has_objective, maximize;
    eval *ev;
    int points_run, unfit, runs_used;
    int replicas;                    /* fixed count, or the first look's under auto */
    int auto_replicas, max_replicas, looks;
    double level;                    /* two-sided level of the intervals that decide */
    int cluster_varies;              /* a varied value sizes cluster/nodes */
    /* whose GPUs the configuration uses: jobs / services named by the
     * goals and objective (or every training job and service) */
    char use_arr[MAX_USES][16], use_elem[MAX_USES][64];
    int n_uses;
    char uses_text[256];
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

/* The values of metric z (a path) in the first `want` stored replicas of
 * point p: *v malloc'd, *n their count. STORE_OK or the store's status
 * with err set. */
static int values_of(const planner *pl, int p, const metric_path *m, int want, double **v, int *n, char *err,
                     size_t errlen) {
    int rc = sweepdb_values(pl->ex->st, pl->sw->id, pl->sw->key[p], m, v, n, err, errlen);
    if (rc == STORE_OK && *n > want) *n = want;     /* the same replicas whatever else the database holds */
    return rc;
}

/* The metric's value in replica 0 of point p (NaN when none). */
static double first_value(const planner *pl, int p, const char *z) {
    metric_path m;
    char err[512];
    double *v = NULL, x = NAN;
    int nv = 0;
    if (goal_metric_parse(z, &m, err, sizeof err) == 0 && values_of(pl, p, &m, 1, &v, &nv, err, sizeof err) == STORE_OK &&
        nv > 0)
        x = v[0];
    free(v);
    return x;
}

/* The GPUs the configuration of point p uses: the cluster's when the
 * plan sizes the cluster and no job or service is named, else the named
 * jobs' GPUs and services' replicas (at their peak) x tp. */
static void gpus_of(const planner *pl, int p, eval *e) {
    e->cluster_gpus = first_value(pl, p, "cluster.gpus");
    e->cluster_nodes = first_value(pl, p, "cluster.nodes");
    e->gpus = NAN;
    if (pl->n_uses == 0) {
        e->gpus = e->cluster_gpus;
        return;
    }
    double sum = 0;
    char z[128];
    for (int i = 0; i < pl->n_uses; i++) {
        if (!strcmp(pl->use_arr[i], "jobs")) {
            snprintf(z, sizeof z, "jobs[%s].gpus", pl->use_elem[i]);
            sum += first_value(pl, p, z);
        } else {
            snprintf(z, sizeof z, "services[%s].tp", pl->use_elem[i]);
            double tp = first_value(pl, p, z);
            snprintf(z, sizeof z, "services[%s].replicas_peak", pl->use_elem[i]);
            sum += tp * first_value(pl, p, z);
        }
    }
    e->gpus = sum;
}

/* The verdict of point p from its first `want` replicas. */
static int measure(planner *pl, int p, int want) {
    eval *e = &pl->ev[p];
    char err[1024];
    e->meets = 1;
    int decided_all = 1, decided_miss = 0;
    if (sweepdb_batch(pl->ex->st, 1, err, sizeof err) != STORE_OK) {       /* the statistics in one transaction */
        fprintf(stderr, "clustertwin plan: %s\n", err);
        return EXIT_RUN_FAILED;
    }
    for (int g = 0; g <= pl->n_goals; g++) {
        if (g == pl->n_goals && !pl->has_objective) break;
        const metric_path *m = g < pl->n_goals ? &pl->goals[g].metric : &pl->objective;
        double *v = NULL;
        int nv = 0;
        if (values_of(pl, p, m, want, &v, &nv, err, sizeof err) != STORE_OK) {
            fprintf(stderr, "clustertwin plan: %s\n", err);
            sweepdb_batch(pl->ex->st, 0, err, sizeof err);
            return EXIT_RUN_FAILED;
        }
        double *c = malloc(((size_t)nv + 1) * sizeof *c);
        if (!c) {
            free(v);
            return EXIT_RUN_FAILED;
        }
        memcpy(c, v, (size_t)nv * sizeof *c);
        char stat[16];
        if (g < pl->n_goals) {
            e->runs = nv;
            goal_stats_of(v, nv, &e->gs[g]);
            goal_check(&pl->goals[g], c, nv, pl->level, &e->gc[g]);
            e->meets &= e->gc[g].meets;
            decided_all &= e->gc[g].decided;
            decided_miss |= e->gc[g].decided && !e->gc[g].meets;
            goal_statistic(&pl->goals[g], stat, sizeof stat);
            /* the database keeps the statistic the goal compares and the mean */
            if (sweepdb_stat(pl->ex->st, pl->sw->id, pl->sw->key[p], m->text, stat, nv, e->gs[g].missing, e->gc[g].stat,
                             e->gc[g].lo, e->gc[g].hi, pl->level, err, sizeof err) != STORE_OK ||
                (strcmp(stat, "mean") &&
                 sweepdb_stat(pl->ex->st, pl->sw->id, pl->sw->key[p], m->text, "mean", nv, e->gs[g].missing,
                              e->gs[g].mean, e->gs[g].mean_lo, e->gs[g].mean_hi, CONFIDENCE_LEVEL, err,
                              sizeof err) != STORE_OK)) {
                fprintf(stderr, "clustertwin plan: %s\n", err);
                free(v);
                free(c);
                return EXIT_RUN_FAILED;
            }
        } else {
            goal_stats_of(v, nv, &e->obj);
            if (sweepdb_stat(pl->ex->st, pl->sw->id, pl->sw->key[p], m->text, "mean", nv, e->obj.missing, e->obj.mean,
                             e->obj.mean_lo, e->obj.mean_hi, CONFIDENCE_LEVEL, err, sizeof err) != STORE_OK) {
                fprintf(stderr, "clustertwin plan: %s\n", err);
                free(v);
                free(c);
                return EXIT_RUN_FAILED;
            }
        }
        free(v);
        free(c);
    }
    if (sweepdb_batch(pl->ex->st, 0, err, sizeof err) != STORE_OK) {
        fprintf(stderr, "clustertwin plan: %s\n", err);
        return EXIT_RUN_FAILED;
    }
    e->decided = decided_all || decided_miss;
    gpus_of(pl, p, e);
    return EXIT_OK;
}

/* Evaluate the points pts[0..np) not evaluated yet: run their replicas (a
 * fixed count, or under --replicas auto look after 10, 20, 40, ... until
 * the intervals decide or the maximum is reached) and judge the goals. A
 * point that does not fit is recorded and not run. */
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
    int want = pl->auto_replicas ? (PLAN_AUTO_FIRST < pl->max_replicas ? PLAN_AUTO_FIRST : pl->max_replicas)
                                 : pl->replicas;
    while (n > 0) {
        pl->sw->replicas = want;
        int rc = sweep_execute(pl->sw, todo, n, pl->ex);
        if (rc != EXIT_OK) return rc;
        int k = 0;
        for (int i = 0; i < n; i++) {
            int p = todo[i];
            eval *e = &pl->ev[p];
            if (!sweep_fits(pl->sw, p)) {
                e->done = 1;
                e->fits = 0;
                e->meets = 0;
                pl->unfit++;
                pl->points_run++;
                continue;
            }
            e->fits = 1;
            rc = measure(pl, p, want);
            if (rc != EXIT_OK) return rc;
            if (pl->auto_replicas && !e->decided && want < pl->max_replicas) {
                todo[k++] = p;                /* look again with more replicas */
                continue;
            }
            e->done = 1;
            pl->points_run++;
            pl->runs_used += e->runs;
        }
        n = k;
        want = 2 * want < pl->max_replicas ? 2 * want : pl->max_replicas;
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
    const eval *e = &pl->ev[p];
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
    json_num(j, "mean_ci_low", s->mean_lo);
    json_num(j, "mean_ci_high", s->mean_hi);
    json_end(j);
}

/* One point run: its values, whether it fits and meets the goals, the
 * GPUs it uses, each goal's statistic with its interval, the objective. */
static void json_point(json *j, const char *key, const planner *pl, int p) {
    const eval *e = &pl->ev[p];
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
    for (int i = 0; i < n; i++)
        if (pl->ev[order[i]].done) json_point(j, NULL, pl, order[i]);
    json_end(j);
    json_end(j);
    int rc = json_write_file(j, path, err, sizeof err) < 0 ? EXIT_RUN_FAILED : EXIT_OK;
    if (rc) fprintf(stderr, "clustertwin plan: %s\n", err);
    json_free(j);
    return rc;
}

/* Whether element NAME of jobs[], services[] or queues[] exists in the
 * results of scenario s: training jobs by name, a <jobs> group's jobs as
 * NAME-0 .. NAME-(count-1), a trace's jobs, services, queues ("default"
 * when none is declared). */
static int element_exists(const scenario *s, const char *arr, const char *name) {
    if (!strcmp(arr, "jobs")) {
        for (int i = 0; i < s->n_training; i++)
            if (!strcmp(s->training[i].name, name)) return 1;
        for (int i = 0; i < s->n_jobs; i++) {
            size_t k = strlen(s->jobs[i].name);
            char *end = NULL;
            if (strncmp(name, s->jobs[i].name, k) || name[k] != '-' || !name[k + 1]) continue;
            long x = strtol(name + k + 1, &end, 10);
            if (!*end && x >= 0 && x < s->jobs[i].count && name[k + 1] != '+' && name[k + 1] != ' ') return 1;
        }
        for (int i = 0; i < s->n_trace_jobs; i++)
            if (!strcmp(s->trace_names + s->trace_jobs[i].name, name)) return 1;
        return 0;
    }
    if (!strcmp(arr, "services")) {
        for (int i = 0; i < s->n_inference; i++)
            if (!strcmp(s->inference[i].name, name)) return 1;
        return 0;
    }
    if (s->n_queues == 0) return !strcmp(name, "default");
    for (int i = 0; i < s->n_queues; i++)
        if (!strcmp(s->queues[i].name, name)) return 1;
    return 0;
}

/* The names that exist in arr, for a message: at most a few of a trace. */
static void element_names(const scenario *s, const char *arr, char *b, size_t cap) {
    size_t k = 0;
    b[0] = 0;
#define ADD(...) do { int w_ = snprintf(b + k, cap - k, __VA_ARGS__); if (w_ > 0 && (size_t)w_ < cap - k) k += (size_t)w_; } while (0)
    if (!strcmp(arr, "jobs")) {
        for (int i = 0; i < s->n_training; i++) ADD("%s%s", k ? ", " : "", s->training[i].name);
        for (int i = 0; i < s->n_jobs; i++)
            ADD("%s%s-0..%s-%d", k ? ", " : "", s->jobs[i].name, s->jobs[i].name, s->jobs[i].count - 1);
        for (int i = 0; i < s->n_trace_jobs && i < 5; i++) ADD("%s%s", k ? ", " : "", s->trace_names + s->trace_jobs[i].name);
        if (s->n_trace_jobs > 5) ADD(" ... (%d trace jobs)", s->n_trace_jobs);
    } else if (!strcmp(arr, "services")) {
        for (int i = 0; i < s->n_inference; i++) ADD("%s%s", k ? ", " : "", s->inference[i].name);
    } else {
        if (s->n_queues == 0) ADD("default");
        for (int i = 0; i < s->n_queues; i++) ADD("%s%s", k ? ", " : "", s->queues[i].name);
    }
#undef ADD
    if (!b[0]) snprintf(b, cap, "none");
}

/* A goal or objective naming an element the scenario does not have is bad
 * input, said before anything runs (it would count as missing in every
 * run, and no configuration would ever meet it). */
static int check_element(const sweep *sw, const metric_path *m, const char *opt, const char *given) {
    if (!m->array[0] || element_exists(sw->base, m->array, m->elem)) return EXIT_OK;
    char names[1024];
    element_names(sw->base, m->array, names, sizeof names);
    const char *what = !strcmp(m->array, "jobs") ? "job" : !strcmp(m->array, "services") ? "service" : "queue";
    fprintf(stderr, "clustertwin plan: %s \"%s\": %s has no %s named '%s'; its %s: %s\n", opt, given, sw->file, what,
            m->elem, m->array, names);
    return EXIT_BAD_INPUT;
}

/* The jobs and services whose GPUs the configuration counts: those the
 * goals and objective name, else every training job and service. */
static void find_uses(planner *pl) {
    const scenario *s = pl->sw->base;
    for (int g = 0; g <= pl->n_goals; g++) {
        const metric_path *m = g < pl->n_goals ? &pl->goals[g].metric : pl->has_objective ? &pl->objective : NULL;
        if (!m || (strcmp(m->array, "jobs") && strcmp(m->array, "services"))) continue;
        int dup = 0;
        for (int i = 0; i < pl->n_uses; i++) dup |= !strcmp(pl->use_arr[i], m->array) && !strcmp(pl->use_elem[i], m->elem);
        if (dup || pl->n_uses == MAX_USES) continue;
        snprintf(pl->use_arr[pl->n_uses], sizeof pl->use_arr[0], "%s", m->array);
        snprintf(pl->use_elem[pl->n_uses++], sizeof pl->use_elem[0], "%s", m->elem);
    }
    if (pl->n_uses == 0 && !pl->cluster_varies) {
        for (int i = 0; i < s->n_training && pl->n_uses < MAX_USES; i++) {
            snprintf(pl->use_arr[pl->n_uses], sizeof pl->use_arr[0], "jobs");
            snprintf(pl->use_elem[pl->n_uses++], sizeof pl->use_elem[0], "%s", s->training[i].name);
        }
        for (int i = 0; i < s->n_inference && pl->n_uses < MAX_USES; i++) {
            snprintf(pl->use_arr[pl->n_uses], sizeof pl->use_arr[0], "services");
            snprintf(pl->use_elem[pl->n_uses++], sizeof pl->use_elem[0], "%s", s->inference[i].name);
        }
    }
    size_t k = 0;
    pl->uses_text[0] = 0;
    for (int i = 0; i < pl->n_uses; i++) {
        int w = snprintf(pl->uses_text + k, sizeof pl->uses_text - k, "%s%s[%s]", i ? " + " : "", pl->use_arr[i],
                         pl->use_elem[i]);
        if (w > 0 && (size_t)w < sizeof pl->uses_text - k) k += (size_t)w;
    }
    if (pl->n_uses == 0) snprintf(pl->uses_text, sizeof pl->uses_text, "cluster");
}

/* Whether the plan sizes the cluster: a varied path, or a --set computed
 * from one, under cluster/nodes. */
static int sizes_cluster(const sweep *sw) {
    for (int i = 0; i < sw->n_axes + sw->n_sets; i++) {
        const char *z = i < sw->n_axes ? sw->axes[i].path : sw->sets[i - sw->n_axes].path;
        if (i >= sw->n_axes && !strchr(sw->sets[i - sw->n_axes].value, '{')) continue;
        while (*z == '/') z++;
        if (!strncmp(z, "scenario/", 9)) z += 9;
        if (!strncmp(z, "cluster/nodes", 13)) return 1;
    }
    return 0;
}

/* The fitting values of the order: after the ends are checked, the first
 * and last index that fit, found by bisecting on fit (a check, no runs:
 * assumes what fits is one contiguous range, as memory and GPU counts
 * make it). The points found not to fit are recorded as evidence. *a > *b
 * when none was found. */
static int fit_range(planner *pl, const int *order, int n, int *a, int *b) {
    sweep *sw = pl->sw;
    int lo_fit = sweep_fits(sw, order[0]), hi_fit = sweep_fits(sw, order[n - 1]), rc = EXIT_OK;
    int unfit[128], nu = 0;
    *a = 0;
    *b = n - 1;
    if (!lo_fit) unfit[nu++] = order[0];
    if (!hi_fit) unfit[nu++] = order[n - 1];
    int any = lo_fit ? 0 : hi_fit ? n - 1 : -1;
    if (any < 0) {                                   /* neither end: try the middle */
        int mid = (n - 1) / 2;
        rc = sweep_prepare_point(sw, "plan", order[mid]);
        if (rc == EXIT_OK && sweep_fits(sw, order[mid])) any = mid;
        else if (rc == EXIT_OK) unfit[nu++] = order[mid];
    }
    if (rc == EXIT_OK && any < 0) *a = 1, *b = 0;
    /* bisect each side that does not fit toward the fitting index */
    for (int side = 0; side < 2 && rc == EXIT_OK && any >= 0; side++) {
        int good = any, bad = side == 0 ? 0 : n - 1;
        if (sweep_fits(sw, order[bad])) continue;
        while (abs(good - bad) > 1 && rc == EXIT_OK && nu < 128) {
            int mid = (good + bad) / 2;
            rc = sweep_prepare_point(sw, "plan", order[mid]);
            if (rc != EXIT_OK) break;
            if (sweep_fits(sw, order[mid])) good = mid;
            else bad = mid, unfit[nu++] = order[mid];
        }
        if (side == 0) *a = good;
        else *b = good;
    }
    if (rc == EXIT_OK && nu) rc = evaluate(pl, unfit, nu);     /* recorded, not run */
    return rc;
}

int cmd_plan(int argc, char **argv) {
    const char *file = NULL, *db = NULL, *rep_z = NULL, *jobs_z = NULL, *min_z = NULL, *max_z = NULL,
               *search = "auto", *json_path = NULL, *maxrep_z = NULL;
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
                   (m = cli_opt(argc, argv, &i, "--max-replicas", &maxrep_z)) != 0 ||
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
    long replicas = 10, jobs = 0, max_replicas = PLAN_AUTO_MAX;
    int auto_replicas = rep_z && !strcmp(rep_z, "auto");
    if ((!auto_replicas && cli_parse_count("plan", "--replicas", rep_z, 1, 100000, &replicas) != EXIT_OK) ||
        cli_parse_count("plan", "--max-replicas", maxrep_z, 1, 100000, &max_replicas) != EXIT_OK ||
        cli_parse_count("plan", "--jobs", jobs_z, 1, 4096, &jobs) != EXIT_OK)
        return EXIT_BAD_INPUT;
    if (maxrep_z && !auto_replicas) return cli_usage_error("plan", "--max-replicas goes with --replicas auto");
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
    pl.replicas = (int)replicas;
    pl.auto_replicas = auto_replicas;
    pl.max_replicas = auto_replicas ? (int)max_replicas : (int)replicas;
    pl.looks = 1;
    for (int k = PLAN_AUTO_FIRST; auto_replicas && k < pl.max_replicas; k *= 2) pl.looks++;
    pl.level = 1 - (1 - CONFIDENCE_LEVEL) / pl.looks;
    if (comm_launched())
        return cli_usage_error("plan", "runs on one machine (its search is sequential); spread a grid over MPI "
                                       "ranks with 'mpirun ... clustertwin sweep'");

    plan_out = json_path && !strcmp(json_path, "-") ? NULL : stdout;
    sweep sw;
    store *st = NULL;
    int rc = sweep_init(&sw, "plan", file);
    sw.replicas = pl.auto_replicas ? PLAN_AUTO_FIRST : (int)replicas;
    /* the jobs and services the goals name exist, before anything runs */
    for (int g = 0; g < n_goals && rc == EXIT_OK; g++) rc = check_element(&sw, &pl.goals[g].metric, "--goal", goals[g]);
    if (rc == EXIT_OK && pl.has_objective)
        rc = check_element(&sw, &pl.objective, min_z ? "--minimize" : "--maximize", min_z ? min_z : max_z);
    for (int i = 0; i < n_vary && rc == EXIT_OK; i++) rc = sweep_parse_vary(&sw, "plan", vary[i], 1);
    for (int i = 0; i < n_set && rc == EXIT_OK; i++) rc = sweep_add_set(&sw, "plan", sets[i]);
    if (rc == EXIT_OK) rc = sweep_points(&sw, "plan");
    pl.sw = &sw;
    if (rc == EXIT_OK) {
        pl.cluster_varies = sizes_cluster(&sw);
        find_uses(&pl);
    }
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
    /* the ends (or the whole grid) are checked before anything runs; a
     * point that does not fit is recorded as such, not an error */
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
    pl.ex = &ex;
    const char *how = "grid";
    int boundary = -1, dir = 0, fa = 0, fb = n - 1;
    if (rc == EXIT_OK && bisect) {
        rc = fit_range(&pl, order, n, &fa, &fb);
        how = "bisection (no value fits at either end or in the middle; try --search grid)";
    }
    if (rc == EXIT_OK && bisect && fa <= fb) {
        int ends[2] = { order[fa], order[fb] };
        rc = evaluate(&pl, ends, fa == fb ? 1 : 2);
        int lo_ok = rc == EXIT_OK && pl.ev[order[fa]].meets, hi_ok = rc == EXIT_OK && pl.ev[order[fb]].meets;
        if (rc == EXIT_OK && lo_ok != hi_ok) {
            how = "bisection";
            /* i_bad fails, i_good meets; narrow until adjacent */
            int i_bad = lo_ok ? fb : fa, i_good = lo_ok ? fa : fb;
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
                if (j >= fa && j <= fb) more[nm++] = order[j];
            }
            if (rc == EXIT_OK && nm) rc = evaluate(&pl, more, nm);
        } else if (rc == EXIT_OK && lo_ok && hi_ok) {
            how = "grid (the goals hold at both ends: the objective decides)";
            int pick[17], np = 0, m = fb - fa + 1;
            int step = m > 17 ? m / 16 : 1;
            for (int i = fa; i <= fb && np < 16; i += step) pick[np++] = order[i];
            if (pick[np - 1] != order[fb]) pick[np++] = order[fb];
            for (int i = 0; i < np && rc == EXIT_OK; i++) rc = sweep_prepare_point(&sw, "plan", pick[i]);
            if (rc == EXIT_OK) rc = evaluate(&pl, pick, np);
        } else if (rc == EXIT_OK) {
            how = "bisection (no value meets the goals at either end)";
        }
    } else if (rc == EXIT_OK && !bisect) {
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
        char unfit[64] = "";
        if (pl.unfit) snprintf(unfit, sizeof unfit, " (%d of them do%s not fit)", pl.unfit, pl.unfit == 1 ? "es" : "");
        if (pl.auto_replicas)
            outf("\nsearch: %s over %d values; %d points run%s, %d to %d replicas each (auto: %d runs; %.4g%% "
                 "intervals at each of %d looks; %s)\n", how, n, pl.points_run, unfit, PLAN_AUTO_FIRST < pl.max_replicas
                 ? PLAN_AUTO_FIRST : pl.max_replicas, pl.max_replicas, pl.runs_used, 100 * pl.level, pl.looks, db);
        else
            outf("\nsearch: %s over %d values; %d points run%s, %d replicas each (%d runs; %s)\n", how, n,
                 pl.points_run, unfit, sw.replicas, pl.runs_used, db);
        if (best < 0) {
            outf("\nno configuration meets the goals among the points run.\n");
            rc = EXIT_RUN_FAILED;
        } else {
            point_name(&sw, best, name, sizeof name);
            outf("\nanswer: %s\n", name);
            /* the GPUs the configuration uses: its jobs' and services', and
             * the cluster when the plan sizes it */
            const eval *e = &pl.ev[best];
            if (pl.n_uses && !isnan(e->gpus))
                outf("  uses: %.0f GPUs (%s)%s\n", e->gpus, pl.uses_text, pl.cluster_varies ? "" : ", on the fixed cluster");
            if (pl.cluster_varies && !isnan(e->cluster_gpus) && !isnan(e->cluster_nodes))
                outf("  the cluster: %.0f GPUs on %.0f node%s\n", e->cluster_gpus, e->cluster_nodes,
                     e->cluster_nodes == 1 ? "" : "s");
            describe(&pl, best, "  ");
        }
        outf("\nevidence (every point run, in order of value):\n");
        for (int i = 0; i < n; i++) {
            int p = order[i];
            if (!pl.ev[p].done) continue;
            point_name(&sw, p, name, sizeof name);
            outf("  %s%s  %s\n", name, p == best ? "  <- answer" : i == boundary ? "  <- boundary" : "",
                 !pl.ev[p].fits ? "does not fit" : pl.ev[p].meets ? "meets the goals" : "misses");
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
        if (pl.auto_replicas) {
            int undecided = 0;
            for (int i = 0; i < n; i++) undecided += pl.ev[order[i]].done && pl.ev[order[i]].fits && !pl.ev[order[i]].decided;
            if (undecided)
                outf("\n%d point%s reached the maximum of %d replicas undecided: the confidence interval still "
                     "straddles a goal's threshold, so the verdict there is the point estimate's (raise "
                     "--max-replicas to decide)\n", undecided, undecided == 1 ? "" : "s", pl.max_replicas);
            else
                outf("\nevery point run was decided by its confidence intervals before the maximum of %d replicas\n",
                     pl.max_replicas);
        }
        if (json_path) {
            int jrc = write_json(json_path, &pl, goals, how, best, order, n, next, n_next);
            if (jrc != EXIT_OK) rc = jrc;
        }
        if (bisect && dir && boundary >= 0) {
            int changes = 0, last = -1;
            for (int i = 0; i < n; i++) {
                int p = order[i];
                if (!pl.ev[p].done || !pl.ev[p].fits) continue;
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
