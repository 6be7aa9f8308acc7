/*
 * sweep: what `sweep` and `plan` share: the points of a grid (plan/grid.h)
 * each run as R Monte Carlo replicas over local worker processes
 * (plan/pool.h) or MPI ranks (plan/ranks.h), every result recorded by one
 * process in one results database.
 *
 *   sweep_check     every point's scenario text, each loaded and its world
 *                   built once: all bad input is found before anything runs
 *   sweep_execute   run the replicas not yet in the database, record them
 *                   as they come
 *
 * Tasks are (point, replica) in point-major order. Local workers (fork):
 * started by sweep_check, which has them load and check the points in
 * parallel (loading a scenario is most of a short run's cost: the RELAX NG
 * validation); each keeps what it loaded. The parent hands each idle worker
 * the next (point, replica), preferring a point that worker has loaded,
 * and reads the JSON results back, writing the database between; workers
 * never touch it.
 */
#ifndef CT_PLAN_SWEEP_H
#define CT_PLAN_SWEEP_H

#include "plan/grid.h"
#include "reports/store.h"

/* Build and check every point (the grid of the axes): load it and build
 * its world, so all bad input is found before anything runs. A point
 * whose scenario loads but whose world is refused does not fit
 * (sw->unfit[p] says why): it is not bad input, unless no point fits (then
 * the first one's reason is the error). Under MPI rank 0 learns every
 * rank's misfits. With jobs > 1 the checks run on worker processes, which
 * stay up for sweep_execute keeping the points they loaded (loading is
 * most of a short run's cost). Under MPI the points are dealt to the
 * ranks as they ask (plan/ranks.h) and rank 0 reports the first bad one
 * for all. PLAN_OK or
 * PLAN_BAD_INPUT (printed, naming the path and value). */
int sweep_check(sweep *sw, const char *cmd, int jobs);
int sweep_prepare(sweep *sw, const char *cmd);   /* sweep_check in this process */

typedef struct sweep_exec {
    int jobs;                        /* local worker processes (>= 1) */
    int part_k, part_n;              /* run only tasks t with t % part_n == part_k (Slurm) */
    int progress;                    /* draw a progress bar on stderr */
    const char *cmd;                 /* for messages */
    store *st;                       /* rank 0: the database */
    int commit_each;                 /* commit every stored run at once (tests) */
    void (*on_stored)(void);         /* called after each run stored, or NULL */
    /* filled in */
    int ran, skipped, failed;
    int unfit;                       /* points recorded as not fitting, not run */
    double wall_s;
} sweep_exec;

/* Record the sweep in the database (rank 0) and run the replicas of points
 * pts[0..np) that it does not hold yet; a point that does not fit is
 * recorded as such (sweepdb_unfit) and not run. Returns PLAN_OK, PLAN_FAILED
 * (a run or a write failed, or interrupted: what finished is kept) with the
 * message printed. Every MPI rank calls it. */
int sweep_execute(sweep *sw, const int *pts, int np, sweep_exec *ex);

#endif
