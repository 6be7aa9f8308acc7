/*
 * benchrun: one timed run of a whole world, shared by the benchmarks that
 * time world_new() + world_run() (bench_world, bench_sched).
 */
#ifndef CT_TESTS_BENCHRUN_H
#define CT_TESTS_BENCHRUN_H

#include <stdio.h>
#include <time.h>

#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

static double benchrun_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Build s's world, run it to its end and time both; seen(w, ctx) reads
 * the finished world before it is freed. The wall seconds, or -1 with a
 * message on stderr naming `who`. */
static double benchrun_world(const scenario *s, const char *who, void (*seen)(const world *, void *), void *ctx) {
    char err[2048];
    double t0 = benchrun_now_s();
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        fprintf(stderr, "%s: %s\n", who, bus ? err : "out of memory");
        metrics_free(bus);
        return -1;
    }
    world_run(w, 0);
    double t = benchrun_now_s() - t0;
    seen(w, ctx);
    world_free(w);
    metrics_free(bus);
    return t;
}

#endif
