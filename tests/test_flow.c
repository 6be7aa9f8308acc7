/*
 * test_flow: the flow-level network (models/flow, flow_topo, flow_coll).
 *
 * Properties checked (each could fail):
 * - max-min sharing on textbook cases: two flows on one link get half
 *   each; a flow limited by a narrow link elsewhere leaves the rest of a
 *   shared link to the others; Bertsekas and Gallager's example (Data
 *   Networks, section 6.5.2) of three links;
 * - an event-driven run re-solves when a flow ends: the survivor speeds up;
 * - invalid links and flows are refused;
 * - a job alone on a non-blocking fat-tree: the ring all-reduce unrolled
 *   into flows agrees with the closed form (models/collective.c) within
 *   3% across nodes (the closed form charges each GPU's NVLink the whole
 *   chunk where the flows charge (r-1)/r of it) and to 0.1% inside a node;
 *   the tree within 5% across nodes; NVLS inside a node to 0.1%;
 * - oversubscription: a ring packed under leaves is not slowed; two jobs
 *   spread over every leaf of a 4:1 fabric share its uplinks: each runs at
 *   the share the uplink capacity gives;
 * - rail-optimized vs fat-tree: equal for a rail-aligned ring; traffic
 *   crossing rails climbs to the oversubscribed spine only on rails;
 * - the hierarchical all-reduce: its three phases one after another
 *   (NVLink reduce-scatter, a ring per rail, NVLink all-gather), each at
 *   its links' rate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/catalogfix.h"

#include <math.h>
#include <stdlib.h>

#include "models/flow.h"
#include "models/flow_coll.h"
#include "models/flow_topo.h"

#define GIB 1073741824.0

static void assert_near(double got, double want, double rel) {
    if (!(fabs(got - want) <= rel * fabs(want))) {
        fprintf(stderr, "got %.9g, want %.9g (within %.2g)\n", got, want, rel);
        fail();
    }
}

static void test_two_flows_one_link(void **st) {
    (void)st;
    flow_net *n = flow_net_new();
    int l = flow_link_add(n, 10);
    assert_int_equal(flow_add(n, &l, 1, 5), 0);
    assert_int_equal(flow_add(n, &l, 1, 5), 1);
    assert_int_equal(flow_solve(n), 0);
    assert_near(flow_rate(n, 0), 5, 1e-12);
    assert_near(flow_rate(n, 1), 5, 1e-12);
    flow_net_free(n);
}

static void test_limited_elsewhere(void **st) {
    (void)st;
    flow_net *n = flow_net_new();
    int a = flow_link_add(n, 10), b = flow_link_add(n, 2);
    int p1[2] = { a, b };
    flow_add(n, p1, 2, 1);
    flow_add(n, &a, 1, 1);
    flow_solve(n);
    assert_near(flow_rate(n, 0), 2, 1e-12);   /* held by b */
    assert_near(flow_rate(n, 1), 8, 1e-12);   /* takes the rest of a */
    flow_net_free(n);
}

/* Bertsekas-Gallager: links 1 (cap 1) carries flows 0, 1, 2; link 2
 * (cap 2) carries flows 0 and 3: 1/3 each on link 1, flow 3 gets 5/3. */
static void test_textbook(void **st) {
    (void)st;
    flow_net *n = flow_net_new();
    int l1 = flow_link_add(n, 1), l2 = flow_link_add(n, 2);
    int p0[2] = { l1, l2 };
    flow_add(n, p0, 2, 1);
    flow_add(n, &l1, 1, 1);
    flow_add(n, &l1, 1, 1);
    flow_add(n, &l2, 1, 1);
    flow_solve(n);
    for (int f = 0; f < 3; f++) assert_near(flow_rate(n, f), 1.0 / 3, 1e-12);
    assert_near(flow_rate(n, 3), 5.0 / 3, 1e-12);
    flow_net_free(n);
}

static void test_run_events(void **st) {
    (void)st;
    flow_net *n = flow_net_new();
    int l = flow_link_add(n, 1);
    flow_add(n, &l, 1, 1);
    flow_add(n, &l, 1, 3);
    int ev = 0;
    assert_near(flow_run(n, &ev), 4, 1e-12);   /* 1 at 1/2 until t=2, then 2 at full rate */
    assert_near(flow_end_s(n, 0), 2, 1e-12);
    assert_near(flow_end_s(n, 1), 4, 1e-12);
    assert_int_equal(ev, 2);
    flow_net_free(n);
}

static void test_invalid(void **st) {
    (void)st;
    flow_net *n = flow_net_new();
    assert_int_equal(flow_link_add(n, 0), -1);
    assert_int_equal(flow_link_add(n, NAN), -1);
    int l = flow_link_add(n, 1), bad = 7;
    assert_int_equal(flow_add(n, &bad, 1, 1), -1);
    assert_int_equal(flow_add(n, &l, 0, 1), -1);
    assert_int_equal(flow_add(n, &l, 1, -1), -1);
    assert_near(flow_run(n, NULL), 0, 0);     /* no flows */
    flow_net_free(n);
}

/* A topology of `nodes` dgx-h100 nodes. */
static flow_net *h100(flow_topo *t, int nodes, topology_kind k, double over, int per_leaf) {
    fabric f;
    assert_int_equal(fabric_init(&f, cat, catalog_node(cat, "dgx-h100"), nodes), 0);
    f.topology = k;
    f.oversubscription = over;
    f.nodes_per_leaf = per_leaf;
    flow_net *n = flow_net_new();
    assert_int_equal(flow_topo_build(t, n, &f, nodes), 0);
    return n;
}

static void test_ring_matches_closed_form(void **st) {
    (void)st;
    flow_topo t;
    flow_net *n = h100(&t, 16, TOPO_FAT_TREE, 1, 32);
    flow_group g = { 128, 8, NULL, 0 };
    flow_coll_result r;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_RING, &r), 0);
    assert_int_equal(r.steps, 2 * 127);
    assert_int_equal(r.solves, 1);
    assert_near(r.time_s, r.closed_s, 0.03);
    flow_group one = { 8, 8, NULL, 0 };
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &one, FLOW_RING, &r), 0);
    assert_near(r.time_s, r.closed_s, 1e-3);
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLGATHER, GIB, &g, FLOW_RING, &r), 0);
    assert_int_equal(r.steps, 127);
    assert_near(r.time_s, r.closed_s, 0.03);
    flow_net_free(n);
}

static void test_tree_nvls_match(void **st) {
    (void)st;
    flow_topo t;
    flow_net *n = h100(&t, 16, TOPO_FAT_TREE, 1, 32);
    flow_group g = { 128, 8, NULL, 0 }, one = { 8, 8, NULL, 0 };
    flow_coll_result r;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_TREE, &r), 0);
    assert_near(r.time_s, r.closed_s, 0.05);
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &one, FLOW_NVLS, &r), 0);
    assert_near(r.time_s, r.closed_s, 1e-3);
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_NVLS, &r), -1);   /* one domain only */
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_AS_NCCL, &r), 0);
    assert_true(r.unrolled);
    flow_net_free(n);
}

/* Packed under one leaf of a 4:1 fabric the ring never reaches the spine;
 * spread one node per leaf, its NIC flows cross it but one flow per
 * uplink is far below its capacity: neither is slowed. */
static void test_oversubscription_alone(void **st) {
    (void)st;
    flow_topo t;
    flow_net *n = h100(&t, 64, TOPO_FAT_TREE, 4, 8);
    int spread[8] = { 0, 8, 16, 24, 32, 40, 48, 56 };
    flow_group packed = { 64, 8, NULL, 0 }, wide = { 64, 8, spread, 0 };
    flow_coll_result a, b;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &packed, FLOW_RING, &a), 0);
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &wide, FLOW_RING, &b), 0);
    assert_near(b.flows_s, a.flows_s, 1e-9);
    flow_net_free(n);
}

/* The minimum rate of flows [from, to) of the last solve. */
static double min_rate(const flow_net *n, int from, int to) {
    double m = INFINITY;
    for (int i = from; i < to; i++) m = fmin(m, flow_rate(n, i));
    return m;
}

/* Two 8-node jobs, one GPU per node each (a DP group), alternating nodes
 * over 4 leaves of 4 nodes at 4:1: each leaf holds 2 nodes of each job,
 * all 4 sending across the spine. Uplink = 4 nodes x 8 NICs x bw / 4 = 8
 * NICs' worth for 4 flows: nobody is slowed. With 8 GPUs per node per job
 * (8 rails): 32 flows on 8 NICs' worth: each at 1/4 of a NIC alone would
 * be 16 on 8: 1/2. Together each job gets half what it gets alone. */
static void test_two_jobs_share(void **st) {
    (void)st;
    flow_topo t;
    flow_net *n = h100(&t, 16, TOPO_FAT_TREE, 4, 4);
    int ja[8] = { 0, 4, 8, 12, 1, 5, 9, 13 }, jb[8] = { 2, 6, 10, 14, 3, 7, 11, 15 };
    flow_group a = { 64, 8, ja, 0 }, b = { 64, 8, jb, 0 };
    int na = flow_coll_ring_step(n, &t, &a, 1e6);
    assert_true(na > 0);
    flow_solve(n);
    double alone = min_rate(n, 0, na);
    int nb = flow_coll_ring_step(n, &t, &b, 1e6);
    flow_solve(n);
    double shared_a = min_rate(n, 0, na), shared_b = min_rate(n, na, na + nb);
    assert_near(alone, t.nic_bw / 2, 1e-9);
    assert_near(shared_a, alone / 2, 1e-9);
    assert_near(shared_b, alone / 2, 1e-9);
    flow_net_free(n);
}

/* One GPU per node, GPU i of node k sending to GPU i+1 of node k+1 (8
 * nodes under one leaf group, 2:1): on a fat-tree the leaf switch holds
 * every NIC, nothing climbs; on rails every flow changes rail and climbs. */
static void test_rail_vs_fat_tree(void **st) {
    (void)st;
    double t_s[2], ring_s[2];
    topology_kind k[2] = { TOPO_FAT_TREE, TOPO_RAIL_OPTIMIZED };
    for (int v = 0; v < 2; v++) {
        flow_topo t;
        flow_net *n = h100(&t, 8, k[v], 2, 8);
        for (int s = 0; s < 8; s++)
            for (int gi = 0; gi < 8; gi++) {
                int path[FLOW_PATH_MAX], len = flow_topo_path(&t, s, gi, (s + 1) % 8, (gi + 1) % 8, path);
                flow_add(n, path, len, 1e9);
            }
        t_s[v] = flow_run(n, NULL);
        flow_group g = { 64, 8, NULL, 0 };
        flow_coll_result r;
        assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_RING, &r), 0);
        ring_s[v] = r.time_s;
        flow_net_free(n);
    }
    assert_near(ring_s[1], ring_s[0], 1e-12);   /* rail-aligned: no difference */
    assert_true(t_s[1] > 1.9 * t_s[0]);         /* 64 flows on 8 x 8 NICs / 2 of rail uplinks */
}

static void test_hierarchical(void **st) {
    (void)st;
    flow_topo t;
    flow_net *n = h100(&t, 16, TOPO_FAT_TREE, 1, 32);
    flow_group g = { 128, 8, NULL, 0 };
    flow_coll_result ring, hier;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_RING, &ring), 0);
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_HIER, &hier), 0);
    assert_int_equal(hier.solves, 3);
    assert_int_equal(hier.steps, 7 + 30 + 7);
    /* Not pipelined: two NVLink phases of 7 steps of S/8 per GPU, and a
     * ring of 2 x 15 steps of S/128 on each NIC; slower than the ring,
     * whose NVLink and NIC stages overlap. */
    double want = 2 * 7 * (GIB / 8) / t.nvl_bw + 30 * (GIB / 128) / t.nic_bw;
    assert_near(hier.flows_s, want, 1e-9);
    assert_true(hier.flows_s > ring.flows_s);
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLGATHER, GIB, &g, FLOW_HIER, &hier), -1);
    flow_net_free(n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_flows_one_link),
        cmocka_unit_test(test_limited_elsewhere),
        cmocka_unit_test(test_textbook),
        cmocka_unit_test(test_run_events),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_ring_matches_closed_form),
        cmocka_unit_test(test_tree_nvls_match),
        cmocka_unit_test(test_oversubscription_alone),
        cmocka_unit_test(test_two_jobs_share),
        cmocka_unit_test(test_rail_vs_fat_tree),
        cmocka_unit_test(test_hierarchical),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
