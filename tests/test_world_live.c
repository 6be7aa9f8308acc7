/*
 * test_world_live: the world's live control for the dashboard (the block
 * at the end of sim/world.h). A run driven in slices or event by event
 * gives exactly the results of world_run() (the slices only choose where
 * the clock pauses); an injected failure takes the path of a modelled one
 * (the job is interrupted and rolls back, the node is repaired, the
 * failure is counted under node/injected); a drain moves the job off
 * without losing work; node and job views say what is going on.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

typedef struct live {
    scenario *s;
    metric_bus *bus;
    world *w;
    char last_failure[256];
    int failures_seen, drained_seen, undrained_seen, repaired_seen;
} live;

static void on_event(void *ctx, sim_time t, const char *entity, const char *kind, const char *detail) {
    live *l = ctx;
    (void)t;
    (void)entity;
    if (!strcmp(kind, "failure")) {
        l->failures_seen++;
        snprintf(l->last_failure, sizeof l->last_failure, "%s", detail);
    }
    l->drained_seen += !strcmp(kind, "node_drained");
    l->undrained_seen += !strcmp(kind, "node_undrained");
    l->repaired_seen += !strcmp(kind, "node_repaired");
}

/* 20 H100 nodes: a 128-GPU training job (16 nodes) with checkpoints, a
 * few batch jobs, GPU failures. */
static const char *xml =
    "<scenario name=\"live\" seed=\"3\" duration=\"20d\">"
    "<cluster><nodes type=\"dgx-h100\" count=\"20\"/>"
    "<storage name=\"ckpt\" kind=\"parallel-fs\" bandwidth=\"200GB/s\"/></cluster>"
    "<failures><failure component=\"gpu\" mtbf=\"2000h\"/></failures>"
    "<workload><training name=\"job\" gpus=\"128\" tp=\"1\" pp=\"1\" dp=\"128\" sharding=\"fsdp\""
    " global-batch=\"256\" seq-len=\"4096\" recompute=\"selective\" tokens=\"1T\" storage=\"ckpt\">"
    "<model preset=\"llama3-8b\"/><checkpoint interval=\"1h\" mode=\"async\" layout=\"sharded\"/></training>"
    "<jobs name=\"b\" count=\"30\" arrivals=\"poisson\" rate=\"2/h\" gpus=\"8\" duration=\"3h\""
    " duration-distribution=\"exponential\"/>"
    "</workload></scenario>";

static live *build(const char *x) {
    live *l = calloc(1, sizeof *l);
    char err[2048] = "";
    if (scenario_load_memory(x, strlen(x), "live.xml", &l->s, err, sizeof err) != 0) fail_msg("load: %s", err);
    l->bus = metrics_new();
    metric_sink sink = { l, NULL, NULL, on_event, NULL, NULL };
    metrics_subscribe(l->bus, &sink);
    l->w = world_new(l->s, l->bus, err, sizeof err);
    if (!l->w) fail_msg("world: %s", err);
    return l;
}

static void drop(live *l) {
    world_free(l->w);
    metrics_free(l->bus);
    scenario_free(l->s);
    free(l);
}

/* Every figure of the results, compared exactly. */
static void same_results(const world *a, const world *b) {
    world_totals x = world_get_totals(a), y = world_get_totals(b);
    assert_int_equal(x.events, y.events);
    assert_true(x.simulated_s == y.simulated_s);
    assert_true(x.gpu_busy_s == y.gpu_busy_s);
    assert_true(x.cost_usd == y.cost_usd);
    assert_int_equal(x.failures, y.failures);
    assert_int_equal(world_job_count(a), world_job_count(b));
    for (int i = 0; i < world_job_count(a); i++) {
        job_result pr, qr;
        const job_result *p = world_job(a, i, &pr), *q = world_job(b, i, &qr);
        assert_int_equal(p->state, q->state);
        assert_int_equal(p->steps_done, q->steps_done);
        assert_int_equal(p->interruptions, q->interruptions);
        assert_int_equal(p->checkpoints, q->checkpoints);
        assert_true(p->start_s == q->start_s && p->end_s == q->end_s);
        assert_true(p->time.kept_s == q->time.kept_s && p->time.redone_s == q->time.redone_s);
        assert_true(p->time.restart_s == q->time.restart_s && p->time.waiting_s == q->time.waiting_s);
    }
}

static void test_slices_equal_world_run(void **state) {
    (void)state;
    live *a = build(xml);
    world_run(a->w, 0);
    assert_true(world_done(a->w));
    /* slices of odd sizes */
    live *b = build(xml);
    double t = 0;
    int n = 0;
    while (!world_advance(b->w, t)) {
        t += 137.0 + 3600.0 * (n++ % 7);
        assert_true(n < 100000);
    }
    world_finish(b->w);
    same_results(a->w, b->w);
    assert_true(world_get_totals(b->w).simulated_s == 20 * 86400.0);   /* stops at the duration */
    /* event by event, then the rest in one slice */
    live *c = build(xml);
    for (int i = 0; i < 200; i++)
        if (world_step_event(c->w) != 1)
            fail_msg("step %d: done %d, events %llu, now %g", i, world_done(c->w),
                     (unsigned long long)world_get_totals(c->w).events, world_get_totals(c->w).simulated_s);
    assert_int_equal(world_get_totals(c->w).events, 200);
    world_advance(c->w, 1e12);
    world_finish(c->w);
    world_finish(c->w);                /* once only */
    same_results(a->w, c->w);
    assert_int_equal(world_step_event(c->w), 0);
    assert_int_equal(world_inject_failure(c->w, 0), -1);   /* closed: no more commands */
    drop(a);
    drop(b);
    drop(c);
}

static int count(const world_node_view *v, int n, world_activity a) {
    int k = 0;
    for (int i = 0; i < n; i++) k += v[i].activity == a;
    return k;
}

static const char *quiet =     /* no modelled failures: only what the test does */
    "<scenario name=\"quiet\" seed=\"1\" duration=\"10d\">"
    "<cluster><nodes type=\"dgx-h100\" count=\"20\"/><spares warm=\"1\"/>"
    "<storage name=\"ckpt\" kind=\"parallel-fs\" bandwidth=\"200GB/s\"/></cluster>"
    "<workload><training name=\"job\" gpus=\"128\" tp=\"1\" pp=\"1\" dp=\"128\" sharding=\"fsdp\""
    " global-batch=\"256\" seq-len=\"4096\" recompute=\"selective\" tokens=\"1T\" storage=\"ckpt\">"
    "<model preset=\"llama3-8b\"/><checkpoint interval=\"1h\" mode=\"async\" layout=\"sharded\"/></training>"
    "</workload></scenario>";

static void test_views(void **state) {
    (void)state;
    live *l = build(quiet);
    int n = world_node_count(l->w);
    assert_int_equal(n, 20);
    world_node_view v[20];
    world_advance(l->w, 600);
    world_node_views(l->w, v);
    assert_int_equal(count(v, n, WA_TRAINING), 16);
    assert_int_equal(count(v, n, WA_SPARE), 1);
    assert_int_equal(count(v, n, WA_IDLE), 3);
    assert_int_equal(v[0].job, 0);
    assert_int_equal(v[0].gpus, 8);
    assert_int_equal(v[0].free_gpus, 0);
    assert_string_equal(world_activity_name(WA_REPAIRING), "repairing");
    world_job_live j1, j2;
    assert_int_equal(world_job_view(l->w, 0, &j1), 0);
    assert_string_equal(j1.phase, "running");
    assert_true(j1.progress > 0 && j1.eta_s > 0 && j1.step_s > 0);
    assert_true(fabs(j1.ettr - 1) < 1e-9);
    world_advance(l->w, 7200);
    world_job_view(l->w, 0, &j2);
    assert_true(j2.progress > j1.progress && j2.eta_s < j1.eta_s);
    assert_true(j2.ettr < 1 && j2.ettr > 0.9);    /* a checkpoint stall or two */
    /* remaining time at the step time, consistent with progress */
    job_result jr;
    const job_result *r = world_job(l->w, 0, &jr);
    assert_true(fabs(j2.eta_s - (1 - j2.progress) * r->steps_total * j2.step_s) < 1e-3 * j2.eta_s);
    assert_int_equal(world_job_view(l->w, 5, &j2), -1);
    assert_true(world_nodes_per_leaf(l->w) > 0);
    drop(l);
}

static void test_inject_failure(void **state) {
    (void)state;
    live *l = build(quiet);
    world_node_view v[20];
    world_advance(l->w, 3 * 3600);
    assert_int_equal(world_inject_failure(l->w, 3), 0);
    assert_int_equal(l->failures_seen, 1);
    assert_string_equal(l->last_failure, "node 3: injected (node)");
    job_result jr;
    const job_result *r = world_job(l->w, 0, &jr);
    assert_int_equal(r->interruptions, 1);
    world_node_views(l->w, v);
    assert_int_equal(v[3].activity, WA_REPAIRING);
    assert_int_equal(v[3].failures, 1);
    assert_int_equal(count(v, 20, WA_RESTARTING), 15);    /* the job is down */
    assert_int_equal(world_inject_failure(l->w, 3), -1);  /* already down */
    assert_int_equal(world_inject_failure(l->w, 20), -1);
    assert_int_equal(world_inject_failure(l->w, -1), -1);
    /* an idle node fails too, visibly */
    assert_int_equal(world_inject_failure(l->w, 17), 0);
    assert_string_equal(l->last_failure, "node 17: injected (node) on an unused node");
    /* the job comes back on the spare, the nodes are repaired */
    world_advance(l->w, 9 * 86400);
    world_finish(l->w);
    r = world_job(l->w, 0, &jr);                          /* the record as of now */
    assert_true(r->time.redone_s > 0);
    assert_int_equal(l->repaired_seen, 2);
    assert_int_equal(world_get_totals(l->w).failures, 2);
    int kinds = world_failure_kinds(l->w);
    assert_int_equal(kinds, 1);
    const char *comp, *cause;
    int k;
    world_failure_kind(l->w, 0, &comp, &cause, &k);
    assert_string_equal(comp, "node");
    assert_string_equal(cause, "injected");
    assert_int_equal(k, 2);
    drop(l);
}

static void test_drain(void **state) {
    (void)state;
    live *l = build(quiet);
    world_node_view v[20];
    world_advance(l->w, 3 * 3600);
    job_result jr;
    const job_result *r = &jr;
    assert_int_equal(world_drain(l->w, 5, 0), -1);        /* not drained */
    assert_int_equal(world_drain(l->w, 5, 1), 0);
    assert_int_equal(l->drained_seen, 1);
    assert_int_equal(world_drain(l->w, 5, 1), -1);        /* already */
    world_job(l->w, 0, &jr);
    assert_int_equal(r->interruptions, 0);                /* planned: no work lost */
    assert_int_equal(r->planned_interruptions, 1);
    world_node_views(l->w, v);
    assert_int_equal(v[5].activity, WA_DRAINED);
    world_advance(l->w, 4 * 3600);
    world_node_views(l->w, v);
    assert_int_equal(count(v, 20, WA_TRAINING), 16);      /* back on the spare */
    assert_int_equal(v[5].activity, WA_DRAINED);
    world_job(l->w, 0, &jr);
    assert_true(r->time.redone_s == 0);
    assert_int_equal(world_drain(l->w, 5, 0), 0);
    assert_int_equal(l->undrained_seen, 1);
    world_node_views(l->w, v);
    assert_true(v[5].activity == WA_SPARE || v[5].activity == WA_IDLE);
    assert_int_equal(v[5].activity, WA_SPARE);           /* the spare pool was short of one */
    assert_int_equal(world_get_totals(l->w).failures, 0);
    drop(l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices_equal_world_run),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_inject_failure),
        cmocka_unit_test(test_drain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
