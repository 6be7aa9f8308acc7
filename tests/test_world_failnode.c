/*
 * test_world_failnode: a failure takes its node out of service before the
 * jobs on it hear of it (docs/failures.md, "What a failure does to the
 * jobs on the node"). A batch job the failure sends back to the queue, and
 * the dispatch pass that follows, cannot land on the failing node; after
 * the repair no job still lists the node while another takes its GPUs.
 *
 * The invariant, checked after every event: no node is listed by running
 * jobs and held replicas for more GPUs than the cluster counts as used
 * there, and a node out of service is listed by none
 * (world_overlisted_nodes). Before the fix the first test's job started
 * again on the node it had just failed on, and the random runs found such
 * nodes within two simulated days of the first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/simrun.h"

/* Fails the test at the first over-listed node, saying when and where. */
static void no_overlisted(const world *w, const char *when) {
    int first = -1, n = world_overlisted_nodes(w, &first);
    if (n != 0)
        fail_msg("%s (t = %.0f s): %d over-listed node(s), the first node %d", when,
                 world_get_totals(w).simulated_s, n, first);
}

/* Every event of the rest of the run, the invariant after each. */
static void step_checked(world *w) {
    while (world_step_event(w) == 1) no_overlisted(w, "after an event");
    world_finish(w);
}

/* Which node job `job` runs on (a one-node job), -1 when none. */
static int node_of(const world *w, int job) {
    world_node_view v[8];
    if (world_node_count(w) > 8) fail_msg("node_of: more nodes than it looks at");
    world_node_views(w, v);
    for (int i = 0; i < world_node_count(w); i++)
        if (v[i].job == job) return i;
    return -1;
}

static run build(const char *xml, unsigned long long seed) {
    run r = { 0 };
    char err[2048] = "";
    if (scenario_load_memory(xml, strlen(xml), "test.xml", &r.s, err, sizeof err) != 0)
        fail_msg("scenario does not load: %s", err);
    r.s->seed = seed;
    r.bus = metrics_new();
    r.w = world_new(r.s, r.bus, err, sizeof err);
    if (!r.w) fail_msg("world does not build: %s", err);
    return r;
}

/* Two nodes, the queue empty. Job a (4 GPUs, 10 days) runs on node 0
 * and fails there at 1 h: its GPUs on the node are not given back, but
 * the node's other 4 are free, and best fit puts a 4-GPU job on the
 * fullest node that holds it, the failing one, unless it has left
 * service. Job b (a whole node, 5 days) arrives after the node's repair
 * (a node part: 1 day) and takes the repaired node, until a drain sends
 * it back to the queue. */
static const char *two_nodes =
    "<scenario name=\"t\" duration=\"20d\"><cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
    "<workload><trace href=\"/tmp/ct-failnode-trace.csv\"/></workload></scenario>";

static void test_failed_node_is_not_reused(void **state) {
    (void)state;
    FILE *f = fopen("/tmp/ct-failnode-trace.csv", "w");
    assert_non_null(f);
    fputs("submit,gpus,duration,name\n0,4,10d,a\n2d,8,5d,b\n", f);
    fclose(f);
    run r = build(two_nodes, 1);
    world_advance(r.w, 3600);
    int hit = node_of(r.w, 0);
    assert_int_equal(hit, 0);                        /* best fit: the first of two empty nodes */
    assert_int_equal(world_inject_failure(r.w, hit), 0);
    no_overlisted(r.w, "after the failure");
    world_node_view v[2];
    world_node_views(r.w, v);
    assert_int_equal(v[hit].activity, WA_REPAIRING);
    assert_int_equal(v[hit].job, -1);
    assert_int_equal(node_of(r.w, 0), 1);            /* started again, elsewhere */
    /* A drain moves a job off the same way (out of service first). */
    world_advance(r.w, 2.5 * 86400);
    assert_int_equal(node_of(r.w, 1), 0);            /* b on the repaired node */
    assert_int_equal(world_drain(r.w, 0, 1), 0);
    no_overlisted(r.w, "after the drain");
    assert_int_equal(node_of(r.w, 1), -1);           /* 4 GPUs free on node 1: b waits for a */
    step_checked(r.w);
    const job_result *a = run_job(&r, 0), *b = run_job(&r, 1);
    assert_int_equal(a->interruptions, 1);
    assert_string_equal(job_state_name(a->state), "done");
    assert_true(a->end_s == 3600 + 10 * 86400.0);    /* ran whole from its restart */
    assert_string_equal(job_state_name(b->state), "done");
    assert_true(b->end_s == a->end_s + 5 * 86400.0); /* on node 1 once a ended */
    done(&r);
    remove("/tmp/ct-failnode-trace.csv");
}

/* Random mixes on a few nodes: sub-node jobs sharing nodes and multi-node
 * ones, a training job that takes the warm spare when it loses a node, two
 * priorities with preemption (a requeued job's dispatch may evict others),
 * GPU and node failures; by turns health checks catching
 * faults first (planned moves), lemon drains, and no start health check
 * (a hidden fault found when a job starts on the node). */
static void test_random_runs_never_overlist(void **state) {
    (void)state;
    static const char *failures[] = {
        "<failures>",
        "<failures health-check-coverage=\"0.5\">",
        "<failures lemon-threshold=\"2\" lemon-window=\"30d\">",
        "<failures health-check-at-start=\"false\">",
    };
    int interrupted = 0, trained = 0;
    for (int round = 0; round < 8; round++) {
        char xml[4096];
        snprintf(xml, sizeof xml,
                 "<scenario name=\"t\" duration=\"30d\"><cluster><nodes type=\"dgx-h100\" count=\"8\"/>"
                 "<spares warm=\"1\"/><storage name=\"ckpt\" kind=\"parallel-fs\" bandwidth=\"200GB/s\"/></cluster>"
                 "%s<failure component=\"gpu\" mtbf=\"300h\" mttr=\"6h\"/>"
                 "<failure component=\"node\" mtbf=\"400h\" mttr=\"12h\"/></failures>"
                 "<scheduler preemption=\"true\" backfill=\"easy\"/><workload>"
                 "<training name=\"train\" gpus=\"16\" tp=\"1\" pp=\"1\" dp=\"16\" sharding=\"fsdp\" global-batch=\"32\""
                 " seq-len=\"4096\" tokens=\"10B\" storage=\"ckpt\" priority=\"5\"><model preset=\"llama3-8b\"/>"
                 "<checkpoint interval=\"1h\"/></training>"
                 "<jobs name=\"s\" count=\"60\" rate=\"6/h\" gpus=\"2\" duration=\"3h\" duration-distribution=\"exponential\"/>"
                 "<jobs name=\"w\" count=\"30\" rate=\"2/h\" gpus=\"8\" duration=\"5h\" duration-distribution=\"exponential\"/>"
                 "<jobs name=\"m\" count=\"10\" rate=\"1/h\" gpus=\"16\" duration=\"4h\" priority=\"5\""
                 " duration-distribution=\"exponential\"/></workload></scenario>",
                 failures[round % 4]);
        run r = build(xml, (unsigned long long)round + 1);
        step_checked(r.w);
        for (int i = 0; i < world_job_count(r.w); i++) {
            const job_result *j = run_job(&r, i);
            interrupted += j->interruptions;
            if (j->kind == JOB_TRAINING) trained += j->interruptions + j->planned_interruptions;
        }
        done(&r);
    }
    printf("  %d job interruptions by failures in 8 runs, %d of the training job\n", interrupted, trained);
    assert_true(interrupted > 0 && trained > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_node_is_not_reused),
        cmocka_unit_test(test_random_runs_never_overlist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
