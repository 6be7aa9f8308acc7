/*
 * dash: the live dashboard on a terminal (ncurses). It runs the world in
 * slices of simulated time (speed x wall time per frame, at most ~15
 * frames a second), draws snapshots of it, and changes it only through the
 * world's live-control commands (sim/world.h: inject a failure, drain).
 *
 * The loop (nvtop's): advance the world, refresh the feed's rings (a
 * metric-bus sink), draw, getch() under timeout(); key handlers (tui/ui.c)
 * return what to do and never draw; drawing reads state and changes none.
 */
#ifndef CT_DASH_H
#define CT_DASH_H

#include <stddef.h>

#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

typedef struct dash_opts {
    double speed;                      /* simulated seconds per wall second */
    int paused;                        /* start paused */
} dash_opts;

/* A starting speed for s: about five wall minutes for the scenario's
 * duration (or one simulated hour per second without one), a power of
 * two times a minute. */
double dash_default_speed(const scenario *s);

typedef struct dash dash;

/* Can the dashboard draw on stdout's terminal (TERM known, cursor
 * addressing)? 0, or -1 with err set. Call before writing anything. */
int dash_check_terminal(char *err, size_t errlen);

/* A dashboard for w, subscribed to bus (call after world_new, before
 * anything runs). NULL when out of memory. */
dash *dash_new(world *w, const scenario *s, metric_bus *bus);
/* After the bus's last use (world_finish publishes). NULL is a no-op. */
void dash_free(dash *d);

/* Run the dashboard on the terminal (stdin/stdout) until the user quits
 * (q, Ctrl-C, SIGTERM). Leaves the world where the user left it, not
 * finished (the caller calls world_finish and writes the results).
 * Returns 0, or -1 with err set when the terminal cannot be used. */
int dash_run(dash *d, const dash_opts *o, char *err, size_t errlen);

#endif
