/*
 * bench_store: what writing the results database costs, as a ratio to the
 * run without it, next to its target.
 *
 *   the 10,000-GPU year of scenarios/trace-10k-year.xml (100,000 jobs, 962
 *   of them training jobs with a progress series each, ~300,000 events):
 *   simulated and its JSON results built, then the same with the store
 *   recording it into a new file (events, series, jobs, the run row), as
 *   `clustertwin run FILE --db F` does. Best of 2 each.
 *   Target (issue 23): with the database at most 1.5x without it (the
 *   issue's 1 s and 1.5 s for the 100,000-GPU year); 7.4x when the issue
 *   was opened.
 *
 *   the 100,000-GPU year of tests/scale/trace-100k-year.xml, the issue's
 *   own target: at most 1 s without the database and 1.5 s with it
 *   (wall time). One run each.
 *
 * Output (a missed target prints MISSED; make bench reports, it does not gate):
 *   results database, 10000 GPUs one year: 0.28 s without, 0.39 s with: 1.38x (target <= 1.5x) ok; CPU time 0.28 s and 0.64 s (0.36 s on the simulating thread): 2.27x (1.27x)
 *   results database, 100000 GPUs one year: 0.78 s without (target <= 1.0 s), 0.97 s with (target <= 1.5 s) ok; CPU time 0.78 s and 1.23 s (0.94 s on the simulating thread)
 * (at load 1.8, docs/performance.md "Issue 23: the results store, sixth
 * round"). The run without the database is the better of two, the second
 * after a run with it, whose heap it inherits: its figure moves with how
 * much memory that run left freed (0.27 s before the sixth round, 0.29 s
 * after, as in a fresh process).
 *
 * CPU times are given beside because a loaded machine moves them less:
 * of the process (every thread: the store writes on a second one) and of
 * the simulating thread alone, a lower bound of the wall time with a core
 * free for the store's writer (the simulating thread waits for the writer
 * at the end: docs/performance.md, "The results store, fourth round").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reports/json.h"
#include "reports/results.h"
#include "reports/store.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

static double clock_s(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

/* One run of s, recorded into db_path when it is not NULL; its wall time
 * or -1, and in *cpu_s the process's CPU time (all its threads). */
static double one_run(scenario *s, const char *db_path, double *cpu_s, double *own_s) {
    char err[2048];
    double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), o0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    store *st = NULL;
    int ok = w != NULL;
    if (ok && db_path)
        ok = store_open(db_path, STORE_WRITE, &st, err, sizeof err) == STORE_OK &&
             store_run_begin(st, s, bus, err, sizeof err) == STORE_OK;
    if (ok) world_run(w, 0);
    json *j = ok ? json_new() : NULL;
    if (j && st) store_run_watch(st, j);   /* as clustertwin run does (cli/outputs.c) */
    if (j) results_json(j, s, w, now_s() - t0);
    if (j && st) ok = store_run_finish(st, w, json_text(j, NULL), err, sizeof err) == STORE_OK;
    store_close(st);
    double t = now_s() - t0;
    *cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *own_s = clock_s(CLOCK_THREAD_CPUTIME_ID) - o0;
    if (!ok) fprintf(stderr, "bench_store: %s\n", w ? err : "cannot build the world");
    json_free(j);
    world_free(w);
    metrics_free(bus);
    return ok ? t : -1;
}

/* Best of reps runs of file without and with the database: wall, CPU of
 * the process and of the simulating thread (with). 0, or 1 on failure. */
typedef struct best {
    double without, with, cpu_without, cpu_with, own_with;
} best;

static int measure(const char *file, int reps, best *b) {
    char err[2048], path[] = "/tmp/bench_store_XXXXXX";
    scenario *s = NULL;
    if (scenario_load(file, &s, err, sizeof err) < 0) {
        fprintf(stderr, "bench_store: %s\n", err);
        return 1;
    }
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    *b = (best){ 1e30, 1e30, 1e30, 1e30, 1e30 };
    double ca, cb, oa, ob;
    for (int rep = 0; rep < reps; rep++) {
        double x = one_run(s, NULL, &ca, &oa);
        unlink(path);
        double y = one_run(s, path, &cb, &ob);
        if (x < 0 || y < 0) {
            unlink(path);
            scenario_free(s);
            return 1;
        }
        if (x < b->without) b->without = x;
        if (y < b->with) b->with = y;
        if (ca < b->cpu_without) b->cpu_without = ca;
        if (cb < b->cpu_with) b->cpu_with = cb;
        if (ob < b->own_with) b->own_with = ob;
    }
    unlink(path);
    scenario_free(s);
    return 0;
}

int main(void) {
    const double target = 1.5;
    best b;
    if (measure("scenarios/trace-10k-year.xml", 2, &b)) return 1;
    double ratio = b.with / b.without;
    printf("results database, 10000 GPUs one year: %.2f s without, %.2f s with: %.2fx (target <= %.1fx) %s; "
           "CPU time %.2f s and %.2f s (%.2f s on the simulating thread): %.2fx (%.2fx)\n",
           b.without, b.with, ratio, target, ratio <= target ? "ok" : "MISSED", b.cpu_without, b.cpu_with,
           b.own_with, b.cpu_with / b.cpu_without, b.own_with / b.cpu_without);
    fflush(stdout);
    if (measure("tests/scale/trace-100k-year.xml", 1, &b)) return 1;
    int ok = b.without <= 1.0 && b.with <= 1.5;
    printf("results database, 100000 GPUs one year: %.2f s without (target <= 1.0 s), %.2f s with (target <= 1.5 s) "
           "%s; CPU time %.2f s and %.2f s (%.2f s on the simulating thread)\n",
           b.without, b.with, ok ? "ok" : "MISSED", b.cpu_without, b.cpu_with, b.own_with);
    return 0;
}
