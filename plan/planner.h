/*
 * planner: the cheapest (or smallest) configuration that meets goals at a
 * stated confidence, found with few runs (`clustertwin plan`).
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
 * statistic comes with its confidence interval (plan/goal.h);
 * --replicas auto adds replicas until the intervals decide. See
 * docs/planning.md.
 *
 * --replicas auto: the verdict of a point is looked at after
 * PLAN_AUTO_FIRST replicas, then after twice as many each time, up to the
 * maximum; it stops at the first look where every goal's interval lies on
 * one side of its threshold. The looks are few and fixed (10, 20, 40, 80,
 * 160 by default) so the same command gives the same answer, and each
 * look's intervals are at level 1 - (1 - 95%) / looks, so the chance that
 * any of them misses is at most 5% (Bonferroni).
 */
#ifndef CT_PLAN_PLANNER_H
#define CT_PLAN_PLANNER_H

#include "plan/goal.h"
#include "plan/sweep.h"

#define PLAN_MAX_GOALS 8
#define PLAN_AUTO_FIRST 10           /* the first look: the fixed default's count */
#define PLAN_AUTO_MAX 160            /* the default maximum: five looks */
#define PLAN_MAX_USES 16

typedef struct plan_eval {
    int done;                        /* 1 evaluated; 2 also listed as a next best */
    int fits;                        /* 0: does not fit (sw->unfit[p] says why), not run */
    int meets;
    int decided;                     /* the intervals decide the verdict */
    goal_check_result gc[PLAN_MAX_GOALS];
    goal_stats gs[PLAN_MAX_GOALS];
    goal_stats obj;
    int runs;                        /* replicas the verdict uses */
    double gpus;                     /* GPUs the configuration uses (NaN: unknown) */
    double cluster_gpus, cluster_nodes;
} plan_eval;

typedef struct planner {
    sweep *sw;
    sweep_exec *ex;
    goal goals[PLAN_MAX_GOALS];
    int n_goals;
    metric_path objective;
    int has_objective, maximize;
    plan_eval *ev;                   /* per point */
    int points_run, unfit, runs_used;
    int replicas;                    /* fixed count, or the first look's under auto */
    int auto_replicas, max_replicas, looks;
    double level;                    /* two-sided level of the intervals that decide */
    int cluster_varies;              /* a varied value sizes cluster/nodes */
    /* whose GPUs the configuration uses: jobs / services named by the
     * goals and objective (or every training job and service) */
    char use_arr[PLAN_MAX_USES][16], use_elem[PLAN_MAX_USES][64];
    int n_uses;
    char uses_text[256];
    /* the search, from planner_order and planner_search */
    int *order;                      /* the points in order of value */
    int n;                           /* points */
    int bisect;                      /* bisection (else every point) */
    const char *how;                 /* the search as done, for people */
    int boundary;                    /* index in order of the boundary, or -1 */
    int dir;                         /* +1/-1: the goals get easier as the value grows/shrinks */
} planner;

/* Set the replica counts: fixed replicas, or auto up to max_replicas
 * (looks and the level of each look's intervals). */
void planner_replicas(planner *pl, int replicas, int auto_replicas, int max_replicas);

/* A goal or objective naming a job, service or queue the scenario does
 * not have is bad input, said before anything runs ("clustertwin plan:
 * OPT \"GIVEN\": FILE has no job named 'x'; its jobs: ..."). */
int planner_check_element(const planner *pl, const metric_path *m, const char *opt, const char *given);

/* After the grid's points are listed: whose GPUs count, whether the plan
 * sizes the cluster, the order of the points (by value on one numeric
 * path) and whether to bisect (search: auto, bisect or grid); then the
 * ends (or the whole grid) are checked. A status (printed). */
int planner_order(planner *pl, const char *search);

/* Run the search (pl->ex set, its database open). A status (printed). */
int planner_search(planner *pl);

/* The answer: the point meeting every goal with the best objective (ties
 * to the earlier in order), or -1. */
int planner_best(const planner *pl);
/* The best point run that meets the goals among those whose varied path
 * number axis has value (sweep_value); -1 when none. */
int planner_best_where(const planner *pl, int axis, const char *value);

/* The next best after best: up to max other points meeting the goals, by
 * objective, into next[]; marks them listed. Returns how many. */
int planner_next_best(planner *pl, int best, int *next, int max);

/* Points run (and fitting) that the intervals did not decide. */
int planner_undecided(const planner *pl);

/* How often the verdict changes along the order among the points run:
 * at most 1 when the goals are monotone, as bisection assumes. */
int planner_changes(const planner *pl);

/* The objective of point p for comparing: smaller is better. */
double planner_score(const planner *pl, int p);

void planner_free(planner *pl);

#endif
