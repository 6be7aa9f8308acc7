/*
 * simrun: a scenario from a string, built and run to the end, for the
 * world-level tests (test_world, test_sched, test_serving). A scenario
 * that does not load or build fails the calling cmocka test with the
 * loader's message. Include after <cmocka.h>.
 */
#ifndef CT_TEST_SIMRUN_H
#define CT_TEST_SIMRUN_H

#include <stdlib.h>
#include <string.h>

#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

typedef struct run {
    scenario *s;
    metric_bus *bus;
    world *w;
    job_result *jobs;              /* run_job's copies of the jobs' outcomes; NULL until asked */
} run;

/* Load xml, set the seed, build the world and run it. */
static inline run simulate(const char *xml, unsigned long long seed) {
    run r = { 0 };
    char err[2048] = "";
    if (scenario_load_memory(xml, strlen(xml), "test.xml", &r.s, err, sizeof err) != 0)
        fail_msg("scenario does not load: %s\n%s", err, xml);
    r.s->seed = seed;
    r.bus = metrics_new();
    r.w = world_new(r.s, r.bus, err, sizeof err);
    if (!r.w) fail_msg("world does not build: %s", err);
    world_run(r.w, 0);
    return r;
}

/* The error the loader or world_new gives for xml ("" when it builds). */
static inline const char *build_error(const char *xml, char *err, size_t len) {
    scenario *s = NULL;
    err[0] = 0;
    if (scenario_load_memory(xml, strlen(xml), "test.xml", &s, err, len) != 0) return err;
    metric_bus *bus = metrics_new();
    world *w = world_new(s, bus, err, len);
    if (w) err[0] = 0;
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
    return err;
}

/* Job i's outcome, as the run left it (the world gives each job's record
 * into a caller's buffer; these are copied once, on the first call, and
 * kept until done). NULL for an index out of range. */
static inline const job_result *run_job(run *r, int i) {
    int n = world_job_count(r->w);
    if (!r->jobs && !(r->jobs = calloc((size_t)n + 1, sizeof *r->jobs))) fail_msg("out of memory");
    if (i < 0 || i >= n) return NULL;
    if (!r->jobs[i].name) world_job(r->w, i, &r->jobs[i]);
    return &r->jobs[i];
}

static inline void done(run *r) {
    free(r->jobs);
    world_free(r->w);
    metrics_free(r->bus);
    scenario_free(r->s);
}

#endif
