/*
 * test_failures: the failure model of sim/failures.c (docs/failures.md).
 *
 * Each component instance (GPU 3 of node 17, NIC 1 of node 17) fails on its
 * own clock, from its own random stream, and only the part replaced is
 * renewed. Expected: (1) changing the NIC's MTBF leaves every GPU failure
 * (time, node, cause) of a whole run the same; (2) a failure moves the
 * clock of the instance that failed and of no other, its replacement's
 * clock starting mttr later, and a node replacement renews every instance
 * of that node and of no other; (3) a fleet that has run a year (fleet-age)
 * sees far fewer infant-mortality failures (Weibull shape 0.5) in its first
 * week than a new one: 2,048 GPUs with a per-GPU MTBF of 50,000 h have a
 * scale of 50,000 h / Γ(3) = 25,000 h, so a new fleet expects
 * 2048·(1 − exp(−(168/25000)^0.5)) = 161 failures in 168 h, a fleet aged
 * 8,760 h 2048·(1 − exp(−((8928/25000)^0.5 − (8760/25000)^0.5))) = 11.6.
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
#include "sim/cluster.h"
#include "sim/engine.h"
#include "sim/failures.h"
#include "sim/metrics.h"
#include "sim/world.h"

/* ---- whole runs --------------------------------------------------------- */

typedef struct seen {
    char (*ev)[160];            /* "t_ns node N: cause (component)" of each GPU failure */
    int n, cap, nic;
} seen;

/* The failure's time, node and cause; the end of the detail says what the
 * node was doing ("on an unused node", "while the node is down for
 * repair"), which is the world's consequence, not the failure. */
static void on_event(void *ctx, sim_time t, const char *entity, const char *kind, const char *detail) {
    seen *s = ctx;
    (void)entity;
    if (strcmp(kind, "failure")) return;
    if (strstr(detail, "(nic)")) s->nic++;
    const char *end = strstr(detail, "(gpu)");
    if (!end) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->ev = realloc(s->ev, (size_t)s->cap * sizeof *s->ev);
        assert_non_null(s->ev);
    }
    snprintf(s->ev[s->n++], sizeof s->ev[0], "%lld %.*s", (long long)t, (int)(end - detail + 5), detail);
}

static world_totals run(const char *xml, seen *s) {
    scenario *sc = NULL;
    char err[2048] = "";
    if (scenario_load_memory(xml, strlen(xml), "failures.xml", &sc, err, sizeof err) != 0) fail_msg("load: %s", err);
    metric_bus *bus = metrics_new();
    metric_sink sink = { s, NULL, NULL, on_event, NULL, NULL };
    metrics_subscribe(bus, &sink);
    world *w = world_new(sc, bus, err, sizeof err);
    if (!w) fail_msg("world: %s", err);
    world_run(w, 0);
    world_totals t = world_get_totals(w);
    world_free(w);
    metrics_free(bus);
    scenario_free(sc);
    return t;
}

/* 64 DGX H100 nodes, a 384-GPU training job with two warm spares, 120
 * days; GPU and NIC failures, both Weibull with infant mortality. */
static void scenario_xml(char *z, size_t len, const char *nic_mtbf) {
    snprintf(z, len,
             "<scenario name=\"clocks\" seed=\"5\" duration=\"120d\">"
             "<cluster><nodes type=\"dgx-h100\" count=\"64\"/><spares warm=\"2\"/>"
             "<storage name=\"ckpt\" kind=\"parallel-fs\" bandwidth=\"200GB/s\"/></cluster>"
             "<failures>"
             "<failure component=\"gpu\" mtbf=\"20000h\" distribution=\"weibull\" shape=\"0.7\" cause=\"faulty GPU\"/>"
             "<failure component=\"nic\" mtbf=\"%s\" distribution=\"weibull\" shape=\"0.7\"/>"
             "</failures>"
             "<workload><training name=\"job\" gpus=\"384\" tp=\"8\" pp=\"1\" dp=\"48\" sharding=\"fsdp\""
             " global-batch=\"384\" seq-len=\"4096\" recompute=\"selective\" tokens=\"100T\" storage=\"ckpt\">"
             "<model preset=\"llama3-8b\"/><checkpoint interval=\"1h\" mode=\"async\" layout=\"sharded\"/>"
             "</training></workload></scenario>",
             nic_mtbf);
}

/* Issue 17: a NIC repair redrew every clock of its node from the kind's
 * one stream, so the NIC's MTBF moved every GPU failure. */
static void test_nic_mtbf_leaves_gpu_failures(void **state) {
    (void)state;
    char xml[4096];
    seen a = { 0 }, b = { 0 };
    scenario_xml(xml, sizeof xml, "20000h");
    run(xml, &a);
    scenario_xml(xml, sizeof xml, "2000h");
    run(xml, &b);
    assert_true(a.n >= 30);                   /* enough GPU failures to mean something */
    assert_true(b.nic > 3 * a.nic);           /* and the NICs did fail more */
    for (int i = 0; i < a.n && i < b.n; i++) assert_string_equal(a.ev[i], b.ev[i]);
    assert_int_equal(a.n, b.n);
    free(a.ev);
    free(b.ev);
}

/* ---- clocks, one event at a time ----------------------------------------- */

typedef struct fired {
    int node, proc, n;
} fired;

static void on_failure(void *ctx, int node, int proc) {
    fired *f = ctx;
    f->node = node;
    f->proc = proc;
    f->n++;
}

enum { NODES = 4, PER = 8, INST = NODES * PER };

static void snapshot(const failures *f, sim_time t[2][INST]) {
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < INST; i++) t[p][i] = failures_instance_next(f, p, i);
}

/* GPUs and NICs (8 each per node) on 4 nodes. After each failure exactly
 * one clock has moved: the failed instance's, to at least its mttr later.
 * A node replacement moves the clocks of that node's 16 instances only. */
static void test_repair_renews_only_the_part(void **state) {
    (void)state;
    const char *xml = "<scenario name=\"u\" seed=\"9\"><cluster><nodes type=\"dgx-h100\" count=\"4\"/></cluster>"
                      "<workload/></scenario>";
    scenario *sc = NULL;
    char err[1024] = "";
    if (scenario_load_memory(xml, strlen(xml), "u.xml", &sc, err, sizeof err) != 0) fail_msg("load: %s", err);
    cluster *c = cluster_new(sc);
    engine *e = engine_new();
    assert_non_null(c);
    assert_non_null(e);
    failure_proc p[2] = {
        { "gpu", "faulty GPU", PER, 2000 * 3600.0, 1, 0.7, 3 * 86400.0, DETECT_CRASH, 1, 0 },
        { "nic", "NIC", PER, 500 * 3600.0, 1, 0.7, 4 * 3600.0, DETECT_CRASH, 1, 0 },
    };
    fired got = { -1, -1, 0 };
    failures *f = failures_new(e, c, p, 2, 11, on_failure, &got);
    assert_non_null(f);
    static sim_time before[2][INST], after[2][INST];
    snapshot(f, before);
    for (int step = 0; step < 300; step++) {
        int n = got.n;
        assert_int_equal(engine_step(e), 1);
        assert_int_equal(got.n, n + 1);                   /* every event is one failure */
        sim_time now = engine_now(e);
        snapshot(f, after);
        int moved = 0;
        for (int q = 0; q < 2; q++)
            for (int i = 0; i < INST; i++) {
                if (after[q][i] == before[q][i]) continue;
                moved++;
                assert_int_equal(q, got.proc);
                assert_int_equal(i / PER, got.node);
                assert_true(before[q][i] == now);          /* the one that failed */
                assert_true(after[q][i] >= now + sim_from_s(p[q].mttr_s));
            }
        assert_int_equal(moved, 1);
        assert_true(failures_node_ready(f, got.node) >= now + sim_from_s(p[got.proc].mttr_s));
        memcpy(before, after, sizeof before);
    }
    failures_node_replaced(f, 1);
    assert_int_equal(failures_node_ready(f, 1), 0);
    snapshot(f, after);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < INST; i++) {
            if (i / PER == 1) assert_true(after[q][i] != before[q][i] && after[q][i] >= engine_now(e));
            else assert_true(after[q][i] == before[q][i]);
        }
    failures_free(f);
    engine_free(e);
    cluster_free(c);
    scenario_free(sc);
}

/* ---- fleet age ----------------------------------------------------------- */

/* One long batch job keeps the run going for its whole duration (a run
 * without work ends at once). */

static int week_failures(const char *age) {
    char xml[2048];
    snprintf(xml, sizeof xml,
             "<scenario name=\"aged\" seed=\"3\" duration=\"7d\">"
             "<cluster><nodes type=\"dgx-h100\" count=\"256\"/></cluster>"
             "<failures fleet-age=\"%s\"><failure component=\"gpu\" mtbf=\"50000h\" distribution=\"weibull\" shape=\"0.5\"/>"
             "</failures><workload><jobs name=\"keep\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"30d\"/>"
             "</workload></scenario>",
             age);
    seen s = { 0 };
    world_totals t = run(xml, &s);
    free(s.ev);
    return t.failures;
}

/* The cluster keeps its counts of nodes by state and by free GPUs as
 * nodes fail, are repaired, drained, undrained, allocated and released
 * (issue 23: no scan of all nodes per failure). After each of 3,000 random
 * operations on 64 nodes (4 warm spares) they equal a scan of the nodes. */
static void test_node_counts_follow_states(void **state) {
    (void)state;
    const char *xml = "<scenario name=\"u\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"64\"/>"
                      "<spares warm=\"4\"/></cluster><workload/></scenario>";
    scenario *sc = NULL;
    char err[1024] = "";
    if (scenario_load_memory(xml, strlen(xml), "u.xml", &sc, err, sizeof err) != 0) fail_msg("load: %s", err);
    cluster *c = cluster_new(sc);
    assert_non_null(c);
    unsigned x = 12345;
    for (int step = 0; step < 3000; step++) {
        x = x * 1103515245u + 12345u;
        int n = (int)((x >> 8) % 64), op = (int)((x >> 20) % 6), out[16];
        if (op == 0) cluster_fail(c, n);
        else if (op == 1) cluster_repair(c, n);
        else if (op == 2 && step % 7 == 0) cluster_drain(c, n);
        else if (op == 3) cluster_undrain(c, n);
        else if (op == 4) cluster_alloc(c, 0, (int)((x >> 4) % 24) + 1, out, 16);
        else if (op == 5 && cluster_node_state(c, n) == NODE_UP) cluster_release(c, &n, 1, 1);
        int counts[5], scan[5] = { 0 }, by_free[9] = { 0 };
        cluster_counts(c, counts);
        for (int i = 0; i < cluster_node_count(c); i++) {
            scan[cluster_node_state(c, i)]++;
            if (cluster_node_state(c, i) == NODE_UP) by_free[cluster_node_free_gpus(c, i)]++;
        }
        for (int k = 0; k < 5; k++) assert_int_equal(counts[k], scan[k]);
        for (int f = 1; f <= 8; f++) assert_int_equal(cluster_nodes_with_free(c, 0, f), by_free[f]);
    }
    cluster_free(c);
    scenario_free(sc);
}

static void test_fleet_age(void **state) {
    (void)state;
    int fresh = week_failures("0s"), aged = week_failures("1y");
    /* Expected 161 and 11.6 (see the top); five Poisson sigmas either way. */
    assert_in_range(fresh, 161 - 64, 161 + 64);
    assert_in_range(aged, 1, 12 + 17);
    assert_true(aged * 4 < fresh);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nic_mtbf_leaves_gpu_failures),
        cmocka_unit_test(test_repair_renews_only_the_part),
        cmocka_unit_test(test_fleet_age),
        cmocka_unit_test(test_node_counts_follow_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
