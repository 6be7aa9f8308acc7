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
 *   its links' rate;
 * - all-to-all alone on a non-blocking fabric agrees with the closed form
 *   (inside a node, on two nodes where NVLink and NICs overlap, on 16);
 *   two jobs' all-to-alls on a 2:1 spine slow by what the leaves' uplinks
 *   carry;
 * - PAT: log2 steps whose chunks add up to the ring's bytes (n-1 chunks of
 *   S/n, also for n not a power of 2) at 0.75 of the NIC; it agrees with
 *   the closed form;
 * - CollNet (SHARP): direct agrees with the closed form alone, chain moves
 *   (r-1)/r of its NVLink bytes; spread over the
 *   leaves of a 4:1 fabric it is not slowed, as the switches reduce before
 *   the spine (one stream per switch, not per node).
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

/* Two 64-GPU jobs of 8 nodes alternating over 4 leaves of 4 nodes (each
 * leaf: 2 nodes of each job), on a fat-tree at over:1: into a and b. */
static const int job_a_nodes[8] = { 0, 4, 8, 12, 1, 5, 9, 13 }, job_b_nodes[8] = { 2, 6, 10, 14, 3, 7, 11, 15 };
static flow_net *two_jobs(flow_topo *t, double over, flow_group *a, flow_group *b) {
    *a = (flow_group){ 64, 8, job_a_nodes, 0 };
    *b = (flow_group){ 64, 8, job_b_nodes, 0 };
    return h100(t, 16, TOPO_FAT_TREE, over, 4);
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
    flow_group a, b;
    flow_net *n = two_jobs(&t, 4, &a, &b);
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

/* All-to-all inside a node, on 2 nodes (NVLink and NICs at once), on 16. */
static void test_alltoall_matches(void **st) {
    (void)st;
    flow_topo t;
    flow_net *n = h100(&t, 16, TOPO_FAT_TREE, 1, 32);
    int sizes[3] = { 8, 16, 128 };
    for (int i = 0; i < 3; i++) {
        flow_group g = { sizes[i], 8, NULL, 0 };
        flow_coll_result r;
        assert_int_equal(flow_coll_time(n, &t, COLL_ALLTOALL, GIB, &g, FLOW_AS_NCCL, &r), 0);
        assert_true(r.unrolled);
        assert_int_equal(r.algo, FLOW_ALLTOALL);
        assert_int_equal(r.flows, sizes[i] * (sizes[i] - 1));
        assert_near(r.time_s, r.closed_s, 0.01);
    }
    flow_group g = { 128, 8, NULL, 0 };
    flow_coll_result r;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_ALLTOALL, &r), -1);
    flow_net_free(n);
}

/* Two 64-rank all-to-alls, nodes alternating over 4 leaves of 4 at 2:1
 * (each leaf: 2 nodes of each job). A rank sends S/64 to 63 peers: 7 over
 * NVLink, 8 to the job's other node under its leaf, 48 across the spine.
 * Alone the NIC bounds it: 56 S/64 per NIC. Together the uplink (4 nodes x
 * 8 NICs / 2 = 16 NICs' worth) carries 2 jobs x 16 ranks x 48 x S/64 =
 * 24 S: 1.5 S per NIC's worth, 1.5 / 0.875 = 1.714x slower. */
static void test_alltoall_two_jobs(void **st) {
    (void)st;
    flow_topo t;
    flow_group a, b;
    flow_net *n = two_jobs(&t, 2, &a, &b);
    double chunk = GIB / 64;
    assert_true(flow_coll_alltoall_step(n, &t, &a, chunk) > 0);
    double alone = flow_run(n, NULL);
    assert_near(alone, 56 * chunk / t.nic_bw, 1e-9);
    flow_clear(n);
    flow_coll_alltoall_step(n, &t, &a, chunk);
    flow_coll_alltoall_step(n, &t, &b, chunk);
    double both = flow_run(n, NULL);
    assert_near(both / alone, (24.0 * 64 / 16) / 56, 1e-9);
    flow_net_free(n);
}

/* PAT at one rank per node: ceil(log2 n) steps, n-1 chunks of S/n in all,
 * at 0.75 of a NIC; it agrees with the closed form. */
static void test_pat(void **st) {
    (void)st;
    flow_topo t;
    flow_net *n = h100(&t, 16, TOPO_FAT_TREE, 1, 32);
    int sizes[2] = { 16, 12 };
    for (int i = 0; i < 2; i++) {
        int m = sizes[i];
        flow_group g = { m, 1, NULL, 0 };
        flow_coll_result r;
        assert_int_equal(flow_coll_time(n, &t, COLL_ALLGATHER, GIB, &g, FLOW_PAT, &r), 0);
        assert_int_equal(r.solves, 4);
        assert_near(r.flows_s, (m - 1.0) / m * GIB / (COLL_PAT_BW_FRACTION * t.nic_bw), 1e-9);
        assert_near(r.time_s, r.closed_s, 0.01);
        assert_int_equal(flow_coll_time(n, &t, COLL_REDUCESCATTER, GIB, &g, FLOW_PAT, &r), 0);
        assert_near(r.flows_s, (m - 1.0) / m * GIB / (COLL_PAT_BW_FRACTION * t.nic_bw), 1e-9);
    }
    flow_group two = { 16, 8, NULL, 0 };
    flow_coll_result r;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLGATHER, GIB, &two, FLOW_PAT, &r), -1);   /* one rank per node */
    flow_net_free(n);
}

/* CollNet needs SHARP: alone it agrees with the closed form; 16 nodes
 * spread 4 per leaf at 4:1 run as on a non-blocking fabric, each leaf
 * sending one reduced stream per channel to the spine (without the
 * switches reducing, its 4 nodes' streams would take 4x the NIC time). */
static void test_collnet(void **st) {
    (void)st;
    flow_topo t, u;
    flow_net *n = h100(&t, 16, TOPO_FAT_TREE, 1, 32), *m = h100(&u, 16, TOPO_FAT_TREE, 4, 4);
    flow_group g = { 128, 8, NULL, 0 };
    flow_coll_result r, s;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_COLLNET_DIRECT, &r), -1);   /* no SHARP */
    t.f.sharp = u.f.sharp = 1;
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_COLLNET_DIRECT, &r), 0);
    assert_near(r.time_s, r.closed_s, 0.01);
    assert_int_equal(flow_coll_time(m, &u, COLL_ALLREDUCE, GIB, &g, FLOW_COLLNET_DIRECT, &s), 0);
    assert_near(s.flows_s, r.flows_s, 1e-9);
    /* The chain inside: rotated over the r channels each GPU is an inner
     * link of r-2 chains, 2(r-1)/r S on its NVLink where the closed form
     * charges 2S: 12.5% less at r = 8 (the NICs carry S/8 per NIC). */
    assert_int_equal(flow_coll_time(n, &t, COLL_ALLREDUCE, GIB, &g, FLOW_COLLNET_CHAIN, &r), 0);
    assert_near(r.flows_s, 7.0 / 8 * r.closed_xfer_s, 0.01);
    flow_net_free(n);
    flow_net_free(m);
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
        cmocka_unit_test(test_alltoall_matches),
        cmocka_unit_test(test_alltoall_two_jobs),
        cmocka_unit_test(test_pat),
        cmocka_unit_test(test_collnet),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
