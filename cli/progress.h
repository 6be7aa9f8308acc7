/*
 * progress: one line on a terminal while a long `run` goes on,
 *
 *   simulated 41.2 d of 90 d (46%), 1,230,000 events, 6.2 s
 *
 * rewritten in place with '\r' and cleared when the run ends. Drawn only
 * when stderr is a terminal and the run has taken more than
 * PROGRESS_AFTER_S of wall time, at most every PROGRESS_EVERY_S; never on
 * a pipe or a file, so what tests and scripts see does not depend on the
 * machine's speed. The line is fed by a metric-bus sink (sim/metrics.h):
 * the world publishes samples as it changes, and every 256th looks at
 * the clock. CT_PROGRESS_AFTER_S=S (tests) replaces the 2 s threshold.
 */
#ifndef CT_CLI_PROGRESS_H
#define CT_CLI_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/metrics.h"
#include "sim/world.h"

#define PROGRESS_AFTER_S 2.0
#define PROGRESS_EVERY_S 0.25

typedef struct run_progress {
    int on;                          /* subscribed (a terminal, not quiet) */
    int drawn;                       /* a line is on the screen */
    world *w;
    double horizon_s;                /* the run's end in simulated time; 0: unknown */
    double t0, after_s, last;
    unsigned long calls;
} run_progress;

/* Start watching w's run on bus when stderr is a terminal and !quiet
 * (horizon_s: the scenario's duration or --until, 0 when open-ended). p
 * must outlive the bus's publishing. Returns 0, or -1 out of memory (the
 * run goes on without it). */
int progress_start(run_progress *p, metric_bus *bus, world *w, double horizon_s, int quiet);

/* The run is over: clear the line (if one was drawn) and stop drawing. */
void progress_end(run_progress *p);

/* The line's text (no '\r'): simulated time reached of the horizon, the
 * events dispatched, the wall time. */
void progress_format(char *b, size_t n, double sim_s, double horizon_s, uint64_t events, double wall_s);

#endif
