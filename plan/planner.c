/*
 * planner: the search for the configuration that meets the goals (see
 * planner.h). Cost: the runs; a bisection over N values runs about
 * log2(N) + 4 points of R replicas, a grid every point (at most 64).
 */
#include "plan/planner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/confidence.h"
#include "reports/sweepdb.h"

#define EVAL_BATCH 64                 /* points evaluated together */

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
static void gpus_of(const planner *pl, int p, plan_eval *e) {
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
            /* a disaggregated service gives its pools' GPUs (gpus_peak) */
            snprintf(z, sizeof z, "services[%s].gpus_peak", pl->use_elem[i]);
            double g = first_value(pl, p, z);
            if (isnan(g)) {
                snprintf(z, sizeof z, "services[%s].tp", pl->use_elem[i]);
                double tp = first_value(pl, p, z);
                snprintf(z, sizeof z, "services[%s].replicas_peak", pl->use_elem[i]);
                g = tp * first_value(pl, p, z);
            }
            sum += g;
        }
    }
    e->gpus = sum;
}

/* The verdict of point p from its first `want` replicas. */
static int measure(planner *pl, int p, int want) {
    plan_eval *e = &pl->ev[p];
    char err[1024];
    e->meets = 1;
    int decided_all = 1, decided_miss = 0;
    if (sweepdb_batch(pl->ex->st, 1, err, sizeof err) != STORE_OK) {       /* the statistics in one transaction */
        fprintf(stderr, "clustertwin plan: %s\n", err);
        return PLAN_FAILED;
    }
    for (int g = 0; g <= pl->n_goals; g++) {
        if (g == pl->n_goals && !pl->has_objective) break;
        const metric_path *m = g < pl->n_goals ? &pl->goals[g].metric : &pl->objective;
        double *v = NULL;
        int nv = 0;
        if (values_of(pl, p, m, want, &v, &nv, err, sizeof err) != STORE_OK) {
            fprintf(stderr, "clustertwin plan: %s\n", err);
            sweepdb_batch(pl->ex->st, 0, err, sizeof err);
            return PLAN_FAILED;
        }
        double *c = malloc(((size_t)nv + 1) * sizeof *c);
        if (!c) {
            free(v);
            return PLAN_FAILED;
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
                return PLAN_FAILED;
            }
        } else {
            goal_stats_of(v, nv, &e->obj);
            if (sweepdb_stat(pl->ex->st, pl->sw->id, pl->sw->key[p], m->text, "mean", nv, e->obj.missing, e->obj.mean,
                             e->obj.mean_lo, e->obj.mean_hi, CONFIDENCE_LEVEL, err, sizeof err) != STORE_OK) {
                fprintf(stderr, "clustertwin plan: %s\n", err);
                free(v);
                free(c);
                return PLAN_FAILED;
            }
        }
        free(v);
        free(c);
    }
    if (sweepdb_batch(pl->ex->st, 0, err, sizeof err) != STORE_OK) {
        fprintf(stderr, "clustertwin plan: %s\n", err);
        return PLAN_FAILED;
    }
    e->decided = decided_all || decided_miss;
    gpus_of(pl, p, e);
    return PLAN_OK;
}

/* Evaluate the points pts[0..np) not evaluated yet: run their replicas (a
 * fixed count, or under --replicas auto look after 10, 20, 40, ... until
 * the intervals decide or the maximum is reached) and judge the goals. A
 * point that does not fit is recorded and not run. */
static int evaluate(planner *pl, const int *pts, int np) {
    int todo[EVAL_BATCH], n = 0;
    for (int i = 0; i < np; i++) {
        if (pl->ev[pts[i]].done) continue;
        int rc = sweep_prepare_point(pl->sw, "plan", pts[i]);
        if (rc != PLAN_OK) return rc;
        int dup = 0;
        for (int k = 0; k < n; k++) dup |= todo[k] == pts[i];
        if (!dup && n < EVAL_BATCH) todo[n++] = pts[i];
    }
    int want = pl->auto_replicas ? (PLAN_AUTO_FIRST < pl->max_replicas ? PLAN_AUTO_FIRST : pl->max_replicas)
                                 : pl->replicas;
    while (n > 0) {
        pl->sw->replicas = want;
        int rc = sweep_execute(pl->sw, todo, n, pl->ex);
        if (rc != PLAN_OK) return rc;
        int k = 0;
        for (int i = 0; i < n; i++) {
            int p = todo[i];
            plan_eval *e = &pl->ev[p];
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
            if (rc != PLAN_OK) return rc;
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
    return PLAN_OK;
}

/* The objective of point p for comparing: smaller is better. */
double planner_score(const planner *pl, int p) {
    if (pl->has_objective) {
        double m = pl->ev[p].obj.mean;
        if (isnan(m)) return INFINITY;
        return pl->maximize ? -m : m;
    }
    double x = 0;
    if (override_number(sweep_value(pl->sw, p, 0), &x) < 0) x = p;
    return pl->maximize ? -x : x;
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
int planner_check_element(const planner *pl, const metric_path *m, const char *opt, const char *given) {
    const sweep *sw = pl->sw;
    if (!m->array[0] || element_exists(sw->base, m->array, m->elem)) return PLAN_OK;
    char names[1024];
    element_names(sw->base, m->array, names, sizeof names);
    const char *what = !strcmp(m->array, "jobs") ? "job" : !strcmp(m->array, "services") ? "service" : "queue";
    fprintf(stderr, "clustertwin plan: %s \"%s\": %s has no %s named '%s'; its %s: %s\n", opt, given, sw->file, what,
            m->elem, m->array, names);
    return PLAN_BAD_INPUT;
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
        if (dup || pl->n_uses == PLAN_MAX_USES) continue;
        snprintf(pl->use_arr[pl->n_uses], sizeof pl->use_arr[0], "%s", m->array);
        snprintf(pl->use_elem[pl->n_uses++], sizeof pl->use_elem[0], "%s", m->elem);
    }
    if (pl->n_uses == 0 && !pl->cluster_varies) {
        for (int i = 0; i < s->n_training && pl->n_uses < PLAN_MAX_USES; i++) {
            snprintf(pl->use_arr[pl->n_uses], sizeof pl->use_arr[0], "jobs");
            snprintf(pl->use_elem[pl->n_uses++], sizeof pl->use_elem[0], "%s", s->training[i].name);
        }
        for (int i = 0; i < s->n_inference && pl->n_uses < PLAN_MAX_USES; i++) {
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
    int lo_fit = sweep_fits(sw, order[0]), hi_fit = sweep_fits(sw, order[n - 1]), rc = PLAN_OK;
    int unfit[128], nu = 0;
    *a = 0;
    *b = n - 1;
    if (!lo_fit) unfit[nu++] = order[0];
    if (!hi_fit) unfit[nu++] = order[n - 1];
    int any = lo_fit ? 0 : hi_fit ? n - 1 : -1;
    if (any < 0) {                                   /* neither end: try the middle */
        int mid = (n - 1) / 2;
        rc = sweep_prepare_point(sw, "plan", order[mid]);
        if (rc == PLAN_OK && sweep_fits(sw, order[mid])) any = mid;
        else if (rc == PLAN_OK) unfit[nu++] = order[mid];
    }
    if (rc == PLAN_OK && any < 0) *a = 1, *b = 0;
    /* bisect each side that does not fit toward the fitting index */
    for (int side = 0; side < 2 && rc == PLAN_OK && any >= 0; side++) {
        int good = any, bad = side == 0 ? 0 : n - 1;
        if (sweep_fits(sw, order[bad])) continue;
        while (abs(good - bad) > 1 && rc == PLAN_OK && nu < 128) {
            int mid = (good + bad) / 2;
            rc = sweep_prepare_point(sw, "plan", order[mid]);
            if (rc != PLAN_OK) break;
            if (sweep_fits(sw, order[mid])) good = mid;
            else bad = mid, unfit[nu++] = order[mid];
        }
        if (side == 0) *a = good;
        else *b = good;
    }
    if (rc == PLAN_OK && nu) rc = evaluate(pl, unfit, nu);     /* recorded, not run */
    return rc;
}

void planner_replicas(planner *pl, int replicas, int auto_replicas, int max_replicas) {
    pl->replicas = replicas;
    pl->auto_replicas = auto_replicas;
    pl->max_replicas = auto_replicas ? max_replicas : replicas;
    pl->looks = 1;
    for (int k = PLAN_AUTO_FIRST; auto_replicas && k < pl->max_replicas; k *= 2) pl->looks++;
    pl->level = 1 - (1 - CONFIDENCE_LEVEL) / pl->looks;
}

/* The points in order of value when there is one numeric path (insertion
 * sort: lists are short, ranges sorted); 1 when they are numbers. */
static int sort_by_value(planner *pl) {
    const sweep *sw = pl->sw;
    int n = pl->n, numeric = sw->n_axes == 1;
    double *x = malloc((size_t)n * sizeof *x);
    for (int p = 0; p < n && x; p++) {
        pl->order[p] = p;
        if (override_number(sweep_value(sw, p, 0), &x[p]) < 0) numeric = 0;
    }
    if (x && numeric) {
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && x[pl->order[j - 1]] > x[pl->order[j]]; j--) {
                int t = pl->order[j];
                pl->order[j] = pl->order[j - 1];
                pl->order[j - 1] = t;
            }
    }
    free(x);
    return numeric;
}

int planner_order(planner *pl, const char *search) {
    sweep *sw = pl->sw;
    pl->cluster_varies = sizes_cluster(sw);
    find_uses(pl);
    pl->n = sw->n_points;
    pl->boundary = -1;
    pl->order = malloc((size_t)pl->n * sizeof *pl->order);
    pl->ev = calloc((size_t)pl->n, sizeof *pl->ev);
    if (!pl->order || !pl->ev) return PLAN_FAILED;
    int numeric = sort_by_value(pl), n = pl->n;
    /* a bisection needs one path of numbers, in increasing order */
    pl->bisect = numeric && strcmp(search, "grid") && n > 2;
    int bad = 0;
    if (!strcmp(search, "bisect") && !pl->bisect && n > 2) {
        fprintf(stderr, "clustertwin plan: --search bisect needs one --vary of numbers\n");
        bad = 1;
    }
    if (!pl->bisect && n > EVAL_BATCH) {
        fprintf(stderr, "clustertwin plan: a grid search of %d points; narrow it (at most 64) or give one "
                        "numeric path to bisect\n", n);
        bad = 1;
    }
    if (bad) return PLAN_BAD_INPUT;
    /* the ends (or the whole grid) are checked before anything runs; a
     * point that does not fit is recorded as such, not an error */
    int rc = sweep_prepare_point(sw, "plan", pl->order[0]);
    if (rc == PLAN_OK) rc = sweep_prepare_point(sw, "plan", pl->order[n - 1]);
    for (int i = 0; !pl->bisect && i < n && rc == PLAN_OK; i++) rc = sweep_prepare_point(sw, "plan", i);
    return rc;
}

/* The goals hold at one end only: narrow until a failing and a meeting
 * value are adjacent, then run the next two options past the boundary
 * (and so check monotony). */
static int bisect_boundary(planner *pl, int fa, int fb, int lo_ok) {
    const int *order = pl->order;
    int i_bad = lo_ok ? fb : fa, i_good = lo_ok ? fa : fb, rc = PLAN_OK;
    pl->how = "bisection";
    pl->dir = lo_ok ? -1 : 1;                /* the direction in which the goal gets easier */
    while (rc == PLAN_OK && abs(i_good - i_bad) > 1) {
        int mid = (i_bad + i_good) / 2;
        rc = evaluate(pl, &order[mid], 1);
        if (rc != PLAN_OK) break;
        if (pl->ev[order[mid]].meets) i_good = mid;
        else i_bad = mid;
    }
    pl->boundary = i_good;
    int more[2], nm = 0;
    for (int k = 1; k <= 2; k++) {
        int j = i_good + k * pl->dir;
        if (j >= fa && j <= fb) more[nm++] = order[j];
    }
    if (rc == PLAN_OK && nm) rc = evaluate(pl, more, nm);
    return rc;
}

/* The goals hold at both ends: up to 17 values spread over [fa, fb] run,
 * and the objective decides. */
static int spread(planner *pl, int fa, int fb) {
    int pick[17], np = 0, m = fb - fa + 1, rc = PLAN_OK;
    int step = m > 17 ? m / 16 : 1;
    pl->how = "grid (the goals hold at both ends: the objective decides)";
    for (int i = fa; i <= fb && np < 16; i += step) pick[np++] = pl->order[i];
    if (pick[np - 1] != pl->order[fb]) pick[np++] = pl->order[fb];
    for (int i = 0; i < np && rc == PLAN_OK; i++) rc = sweep_prepare_point(pl->sw, "plan", pick[i]);
    if (rc == PLAN_OK) rc = evaluate(pl, pick, np);
    return rc;
}

/* Bisection: the values that fit, their ends, then the boundary. */
static int bisection(planner *pl) {
    int fa = 0, fb = pl->n - 1;
    int rc = fit_range(pl, pl->order, pl->n, &fa, &fb);
    pl->how = "bisection (no value fits at either end or in the middle; try --search grid)";
    if (rc != PLAN_OK || fa > fb) return rc;
    int ends[2] = { pl->order[fa], pl->order[fb] };
    rc = evaluate(pl, ends, fa == fb ? 1 : 2);
    if (rc != PLAN_OK) return rc;
    int lo_ok = pl->ev[pl->order[fa]].meets, hi_ok = pl->ev[pl->order[fb]].meets;
    if (lo_ok != hi_ok) return bisect_boundary(pl, fa, fb, lo_ok);
    if (lo_ok && hi_ok) return spread(pl, fa, fb);
    pl->how = "bisection (no value meets the goals at either end)";
    return PLAN_OK;
}

/* Every point, EVAL_BATCH at a time. */
static int every_point(planner *pl) {
    int *all = malloc((size_t)pl->n * sizeof *all), rc = all ? PLAN_OK : PLAN_FAILED;
    for (int i = 0; all && i < pl->n && rc == PLAN_OK; i += EVAL_BATCH) {
        int k = pl->n - i < EVAL_BATCH ? pl->n - i : EVAL_BATCH;
        for (int j = 0; j < k; j++) all[j] = i + j;
        rc = evaluate(pl, all, k);
    }
    free(all);
    return rc;
}

int planner_search(planner *pl) {
    pl->how = "grid";
    pl->boundary = -1;
    pl->dir = 0;
    return pl->bisect ? bisection(pl) : every_point(pl);
}

int planner_best(const planner *pl) {
    int best = -1;
    for (int i = 0; i < pl->n; i++) {
        int p = pl->order[i];
        if (!pl->ev[p].done || !pl->ev[p].meets) continue;
        if (best < 0 || planner_score(pl, p) < planner_score(pl, best)) best = p;
    }
    return best;
}

int planner_best_where(const planner *pl, int axis, const char *value) {
    int best = -1;
    for (int i = 0; i < pl->n; i++) {
        int p = pl->order[i];
        if (!pl->ev[p].done || !pl->ev[p].meets || strcmp(sweep_value(pl->sw, p, axis), value)) continue;
        if (best < 0 || planner_score(pl, p) < planner_score(pl, best)) best = p;
    }
    return best;
}

int planner_next_best(planner *pl, int best, int *next, int max) {
    int n_next = 0;
    for (int k = 0; k < max; k++) {
        int nb = -1;
        for (int i = 0; i < pl->n; i++) {
            int p = pl->order[i];
            if (!pl->ev[p].done || !pl->ev[p].meets || p == best || pl->ev[p].done == 2) continue;
            if (nb < 0 || planner_score(pl, p) < planner_score(pl, nb)) nb = p;
        }
        if (nb < 0) break;
        pl->ev[nb].done = 2;                  /* listed */
        next[n_next++] = nb;
    }
    return n_next;
}

int planner_undecided(const planner *pl) {
    int undecided = 0;
    for (int i = 0; i < pl->n; i++) {
        const plan_eval *e = &pl->ev[pl->order[i]];
        undecided += e->done && e->fits && !e->decided;
    }
    return undecided;
}

int planner_changes(const planner *pl) {
    int changes = 0, last = -1;
    for (int i = 0; i < pl->n; i++) {
        const plan_eval *e = &pl->ev[pl->order[i]];
        if (!e->done || !e->fits) continue;
        if (last >= 0 && e->meets != last) changes++;
        last = e->meets;
    }
    return changes;
}

void planner_free(planner *pl) {
    free(pl->order);
    free(pl->ev);
    pl->order = NULL;
    pl->ev = NULL;
}
