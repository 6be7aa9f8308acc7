/*
 * sweep: what `sweep` and `plan` share: a grid of scenario variants, each
 * run as R Monte Carlo replicas over local worker processes or MPI ranks,
 * every result recorded by one process in one results database.
 *
 *   sweep_parse_vary / sweep_add_set   the axes and fixed overrides
 *   sweep_check                        every point's scenario text, each
 *                                      loaded and its world built once: all
 *                                      bad input is found before anything runs
 *   sweep_execute                      run the replicas not yet in the
 *                                      database, record them as they come
 *
 * Tasks are (point, replica) in point-major order. Replica r of a point
 * runs with seed sweep_seed(scenario seed, r): replica 0 is the scenario's
 * own seed (the same run as `clustertwin run`), the others are derived, so
 * a point rerun alone, or in another grid, gives the same results.
 *
 * Local workers (fork): started by sweep_check, which has them load and
 * check the points in parallel (loading a scenario is most of a short
 * run's cost: the RELAX NG validation); each keeps what it loaded. The
 * parent hands each idle worker the next (point, replica), preferring a
 * point that worker has loaded, over a pipe and reads the JSON results
 * back over another, writing the database between; workers never touch
 * it. Under mpirun (hw/comm.h) rank 0 decides which runs remain and
 * broadcasts them; each rank runs a contiguous share of that point-major
 * list (with its own --jobs workers), so it loads only its own points, and
 * sends its results to rank 0 when done; only rank 0 opens the database.
 */
#ifndef CT_CLI_SWEEP_H
#define CT_CLI_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "reports/store.h"
#include "scenarios/override.h"
#include "scenarios/scenario.h"

#define SWEEP_MAX_AXES 8
#define SWEEP_MAX_SETS 32
#define SWEEP_MAX_POINTS 100000

typedef struct sweep_axis {
    char *path;
    char **values;
    int n;
} sweep_axis;

typedef struct sweep_pool sweep_pool;

typedef struct sweep {
    const char *file;
    char *xml;                       /* the file's text */
    size_t len;
    scenario *base;                  /* the file loaded as it is */
    sweep_axis axes[SWEEP_MAX_AXES];
    int n_axes;
    override sets[SWEEP_MAX_SETS];   /* --set PATH=VALUE, applied after the axes */
    char *set_text[SWEEP_MAX_SETS];
    int n_sets;
    int replicas;
    /* points, from sweep_prepare */
    int n_points;
    char **text;                     /* edited scenario text per point */
    size_t *text_len;
    char **key;                      /* JSON array of the values as written */
    char **x;                        /* JSON array of the values in SI units */
    scenario **loaded;               /* the point's scenario kept from its check (small
                                        grids), so workers forked later need not load it */
    char **unfit;                    /* why the point does not fit (its world cannot be
                                        built: a model too large for GPU memory, a job
                                        larger than the cluster), NULL when it fits or
                                        was not checked here; such a point is recorded
                                        and not run */
    int64_t id;                      /* sweeps.id once recorded */
    struct sweep_pool *pool;         /* worker processes, from sweep_check to sweep_free */
} sweep;

/* Load FILE into sw (zeroed first). EXIT_OK or EXIT_BAD_INPUT (printed). */
int sweep_init(sweep *sw, const char *cmd, const char *file);
void sweep_free(sweep *sw);

/* "--vary PATH=VALUES": one more axis. int_range: plain "a..b" allowed.
 * EXIT_OK, or EXIT_BAD_INPUT with the message printed. */
int sweep_parse_vary(sweep *sw, const char *cmd, const char *arg, int int_range);
/* "--set PATH=VALUE": a fixed override (VALUE may be an expression). */
int sweep_add_set(sweep *sw, const char *cmd, const char *arg);

/* Build and check every point (the grid of the axes): load it and build
 * its world, so all bad input is found before anything runs. A point
 * whose scenario loads but whose world is refused does not fit
 * (sw->unfit[p] says why): it is not bad input, unless no point fits (then
 * the first one's reason is the error). Under MPI rank 0 learns every
 * rank's misfits. With jobs > 1
 * the checks run on worker processes, which stay up for sweep_execute
 * keeping the points they loaded (loading is most of a short run's cost).
 * Under MPI each rank checks the points of its share and rank 0 reports
 * the first bad one for all. EXIT_OK or EXIT_BAD_INPUT (printed, naming
 * the path and value). */
int sweep_check(sweep *sw, const char *cmd, int jobs);
int sweep_prepare(sweep *sw, const char *cmd);   /* sweep_check in this process */

/* The same in two steps, for a search that runs few of many points:
 * sweep_points lists the grid (keys, values), sweep_prepare_point builds
 * and checks one point's scenario (a no-op when done already). */
int sweep_points(sweep *sw, const char *cmd);
int sweep_prepare_point(sweep *sw, const char *cmd, int p);

/* Whether point p (prepared or checked here) fits: 1, or 0 with
 * sw->unfit[p] the reason. */
int sweep_fits(const sweep *sw, int p);

/* The point of the grid with these axis indices. */
int sweep_point_of(const sweep *sw, const int *idx);
/* The axis value of point p on axis a. */
const char *sweep_value(const sweep *sw, int p, int a);

/* 1: print no messages (MPI ranks other than 0, which would repeat them). */
extern int sweep_silent;

uint64_t sweep_seed(uint64_t base, int replica);

typedef struct sweep_exec {
    int jobs;                        /* local worker processes (>= 1) */
    int part_k, part_n;              /* run only tasks t with t % part_n == part_k (Slurm) */
    int progress;                    /* draw a progress bar on stderr */
    const char *cmd;                 /* for messages */
    store *st;                       /* rank 0: the database */
    /* filled in */
    int ran, skipped, failed;
    int unfit;                       /* points recorded as not fitting, not run */
    double wall_s;
} sweep_exec;

/* Record the sweep in the database (rank 0) and run the replicas of points
 * pts[0..np) that it does not hold yet; a point that does not fit is
 * recorded as such (sweepdb_unfit) and not run. Returns EXIT_OK, EXIT_RUN_FAILED
 * (a run or a write failed, or interrupted: what finished is kept) with the
 * message printed. Every MPI rank calls it. */
int sweep_execute(sweep *sw, const int *pts, int np, sweep_exec *ex);

/* The JSON arrays of the paths and of the fixed overrides (malloc'd). */
char *sweep_params_json(const sweep *sw);
char *sweep_sets_json(const sweep *sw);

/* Append z to b (cap bytes) as one shell word in single quotes (' as
 * '\''), safe in any shell context. Returns 0, or -1 when z holds a control
 * character (a line break cannot be kept on one script line) or the word
 * does not fit; b is then not a usable command line. */
int sweep_shell_quote(char *b, size_t cap, const char *z);

#endif
