/*
 * grid: the points of a sweep: a scenario and the axes of values its
 * attributes take (--vary), the fixed overrides (--set), and each point of
 * their grid as edited scenario text, key and values.
 *
 *   sweep_parse_vary / sweep_add_set   the axes and fixed overrides
 *   sweep_points                       the grid: keys and values per point
 *   sweep_prepare_point                one point's scenario loaded and its
 *                                      world built once (the check)
 *
 * Points are numbered in row-major order of the axes (the last axis varies
 * fastest). Replica r of a point runs with seed sweep_seed(scenario seed, r):
 * replica 0 is the scenario's own seed (the same run as `clustertwin run`),
 * the others are derived, so a point rerun alone, or in another grid, gives
 * the same results. Running the points is plan/sweep.h.
 *
 * Functions that take `cmd` print their messages as "clustertwin CMD: ..."
 * (nothing when sweep_silent) and return a plan/status.h status.
 */
#ifndef CT_PLAN_GRID_H
#define CT_PLAN_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "plan/status.h"
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

struct pool;

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
    /* points, from sweep_points */
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
    struct pool *pool;               /* worker processes, from sweep_check to sweep_free */
} sweep;

/* Load FILE into sw (zeroed first). PLAN_OK or PLAN_BAD_INPUT (printed). */
int sweep_init(sweep *sw, const char *cmd, const char *file);
void sweep_free(sweep *sw);

/* "--vary PATH=VALUES": one more axis. int_range: plain "a..b" allowed.
 * PLAN_OK, or PLAN_BAD_INPUT with the message printed. */
int sweep_parse_vary(sweep *sw, const char *cmd, const char *arg, int int_range);
/* "--set PATH=VALUE": a fixed override (VALUE may be an expression). */
int sweep_add_set(sweep *sw, const char *cmd, const char *arg);

/* List the grid (keys, values); sweep_prepare_point then builds and checks
 * one point's scenario (a no-op when done already): a point whose world
 * is refused does not fit (sw->unfit[p] says why), which is not an error. */
int sweep_points(sweep *sw, const char *cmd);
int sweep_prepare_point(sweep *sw, const char *cmd, int p);

/* The edited text of every point (cheap: no validation). Path and
 * expression errors show here, before any point is loaded. */
int sweep_point_texts(sweep *sw, const char *cmd);

/* Load point p and build its world once: the check of everything that can
 * be wrong with it. On success returns 0 with *out the loaded scenario (the
 * caller owns it) and, when text is not NULL and *text is NULL, *text its
 * edited text. On error returns 1 (bad input: the scenario does not load,
 * or no memory) or 2 (it does not fit: the scenario loads but its world is
 * refused), with *msg the message (malloc'd). */
int sweep_check_point(const sweep *sw, int p, scenario **out, char **text, char **msg);

/* Whether point p (prepared or checked here) fits: 1, or 0 with
 * sw->unfit[p] the reason. */
int sweep_fits(const sweep *sw, int p);

/* The point of the grid with these axis indices. */
int sweep_point_of(const sweep *sw, const int *idx);
/* The axis value of point p on axis a. */
const char *sweep_value(const sweep *sw, int p, int a);

uint64_t sweep_seed(uint64_t base, int replica);

/* The JSON arrays of the paths and of the fixed overrides (malloc'd). */
char *sweep_params_json(const sweep *sw);
char *sweep_sets_json(const sweep *sw);

/* 1: print no messages (MPI ranks other than 0, which would repeat them). */
extern int sweep_silent;
/* A message for the user on stderr, unless sweep_silent. */
void sweep_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
