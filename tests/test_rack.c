/*
 * test_rack: rack-scale NVLink domains (models/collective: a domain of
 * several trays; sim/cluster: racks and domain-aware placement).
 *
 * What is modelled: a GB200 NVL72 rack, 18 compute trays of 4 GPUs joined
 * by NVLink switch trays into one 72-GPU NVLink domain (NVIDIA GB200 NVL72
 * datasheet: "72 Blackwell GPUs ... in a single NVLink domain", NVLink 5 at
 * 1.8 TB/s per GPU, i.e. 900 GB/s each way), each tray with 4 400G NICs.
 * The tray here is the catalog's dgx-b200 node (NVLink 5, 900 GB/s per GPU
 * per direction, ndr-400 NICs, NVLS) cut to 4 GPUs and 4 NICs with
 * nvlink_domain 72, so the test needs nothing from the catalog helper.
 *
 * Properties checked (each could fail):
 * - a communicator inside one domain is priced exactly as on one node of
 *   72 GPUs with the domain's 72 NICs: the domain is one NVLink island;
 * - ranks per domain is bounded by the domain, not the tray;
 * - across domains only the NICs are shared: a domain's NIC bandwidth is
 *   its trays' NICs together, so cross-rack traffic runs as on the
 *   72-GPU node;
 * - a 72-rank ring pays 2(n-1) NVLink steps (latency grows with ranks);
 * - NVLS is offered inside the domain (NVLink SHARP on NVL72);
 * - the all-to-all of 64 ranks stays on NVLink inside one domain and is
 *   several times faster than the same exchange over 8 HGX nodes' NICs;
 * - nothing changes for 8-GPU nodes (their domain is the node);
 * - the cluster groups NVL72 trays into racks of 18 (one NVLink domain
 *   each) and HGX nodes into racks of 4 for drawing, numbered through the
 *   pools; packing puts a 72-GPU job on one whole idle rack and a small
 *   job in the fullest rack that holds it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/catalogfix.h"

#include <math.h>
#include <string.h>

#include "models/collective.h"
#include "scenarios/scenario.h"
#include "sim/cluster.h"

#define MiB (1024.0 * 1024.0)

/* The GB200 NVL72 compute tray as above, and the same 72 GPUs as one
 * imaginary node (the reference the domain must equal). */
static node_spec tray, big_node;

static int rack_setup(void **state) {
    if (catalog_setup(state) != 0) return -1;
    const node_spec *b = catalog_node(cat, "dgx-b200");
    if (!b) return -1;
    tray = *b;
    snprintf(tray.name, sizeof tray.name, "test-nvl72-tray");
    tray.gpus = 4;
    tray.nics = 4;
    tray.nvlink_domain = 72;
    big_node = tray;
    big_node.gpus = 72;
    big_node.nics = 72;
    big_node.nvlink_domain = 0;
    return 0;
}

static fabric fab_of(const node_spec *n, int nodes) {
    fabric f;
    assert_int_equal(fabric_init(&f, cat, n, nodes), 0);
    return f;
}

static double t_of(const fabric *f, coll_op op, double bytes, int ranks, int rpn, int conc, coll_algo a) {
    coll_group g = { ranks, rpn, conc };
    coll_result r;
    assert_int_equal(coll_time(f, op, bytes, &g, a, &r), 0);
    assert_true(r.time_s > 0);
    return r.time_s;
}

static void test_domain_size(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 18);
    assert_int_equal(fabric_domain_gpus(&f), 72);
    fabric h = fab_of(catalog_node(cat, "dgx-h100"), 1);
    assert_int_equal(fabric_domain_gpus(&h), 8);
}

/* Inside one domain the rack is one 72-GPU NVLink island. */
static void test_domain_is_one_island(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 18), b = fab_of(&big_node, 1);
    static const coll_op ops[] = { COLL_ALLREDUCE, COLL_ALLGATHER, COLL_REDUCESCATTER, COLL_ALLTOALL };
    static const double sizes[] = { 8192, 1 * MiB, 256 * MiB };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            double a = t_of(&f, ops[i], sizes[k], 72, 72, 1, COLL_AUTO);
            double c = t_of(&b, ops[i], sizes[k], 72, 72, 1, COLL_AUTO);
            assert_true(a == c);
        }
    /* Across racks: two domains share 72 NICs each, as two such nodes. */
    double a = t_of(&f, COLL_ALLREDUCE, 256 * MiB, 144, 72, 1, COLL_RING);
    double c = t_of(&b, COLL_ALLREDUCE, 256 * MiB, 144, 72, 1, COLL_RING);
    assert_true(a == c);
}

static void test_ranks_bounded_by_domain(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 18);
    coll_result r;
    coll_group ok = { 72, 72, 1 }, over = { 144, 73, 1 };
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1e6, &ok, COLL_AUTO, &r), 0);
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1e6, &over, COLL_AUTO, &r), -1);
    /* An 8-GPU node still refuses 9 per node. */
    fabric h = fab_of(catalog_node(cat, "dgx-h100"), 2);
    coll_group nine = { 16, 9, 1 };
    assert_int_equal(coll_time(&h, COLL_ALLREDUCE, 1e6, &nine, COLL_AUTO, &r), -1);
}

/* A group of 8 on two trays of one rack stays on NVLink: faster than the
 * same 8 ranks split over two domains (4 per domain, over the NICs). */
static void test_tp8_across_trays(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 18);
    double in_domain = t_of(&f, COLL_ALLREDUCE, 64 * MiB, 8, 8, 1, COLL_AUTO);
    double split = t_of(&f, COLL_ALLREDUCE, 64 * MiB, 8, 4, 1, COLL_AUTO);
    assert_true(in_domain < split);
}

/* The ring's latency grows with its 2(n-1) NVLink steps: a tiny 72-rank
 * ring all-reduce takes longer than an 8-rank one in the same domain. */
static void test_ring_latency_72(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 18);
    double t72 = t_of(&f, COLL_ALLREDUCE, 1024, 72, 72, 1, COLL_RING);
    double t8 = t_of(&f, COLL_ALLREDUCE, 1024, 8, 8, 1, COLL_RING);
    assert_true(t72 > 4 * t8 - 4 * f.node->coll_launch_s);
}

static void test_nvls_in_domain(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 18);
    coll_group g = { 72, 72, 1 };
    char why[128];
    assert_int_equal(coll_offered(&f, COLL_ALLREDUCE, &g, COLL_NVLS, why, sizeof why), 1);
    /* Two domains without IB SHARP: NVLS-tree, not NVLS. */
    coll_group two = { 144, 72, 1 };
    assert_int_equal(coll_offered(&f, COLL_ALLREDUCE, &two, COLL_NVLS, why, sizeof why), 0);
    assert_int_equal(coll_offered(&f, COLL_ALLREDUCE, &two, COLL_NVLS_TREE, why, sizeof why), 1);
}

/* EP=64 dispatch: one NVL72 domain vs 8 HGX B200 nodes. Each GPU sends
 * 63/64 of its buffer; on the rack all of it stays on NVLink (900 GB/s),
 * on HGX 56/64 of it leaves the node through one 400G NIC per GPU. */
static void test_alltoall_domain(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 18), h = fab_of(catalog_node(cat, "dgx-b200"), 8);
    double rack = t_of(&f, COLL_ALLTOALL, 256 * MiB, 64, 64, 1, COLL_AUTO);
    double hgx = t_of(&h, COLL_ALLTOALL, 256 * MiB, 64, 8, 1, COLL_AUTO);
    assert_true(hgx > 4 * rack);
    /* Its busbw inside the domain is near the NVLink rate x efficiency. */
    coll_group g = { 64, 64, 1 };
    coll_result r;
    assert_int_equal(coll_time(&f, COLL_ALLTOALL, 256 * MiB, &g, COLL_AUTO, &r), 0);
    double want = tray.nvlink_bw_bytes_per_s * tray.eff_nvlink;
    assert_true(r.busbw_bytes_per_s > 0.8 * want && r.busbw_bytes_per_s <= want * 1.0001);
}

/* Groups leaving one domain at once share its 72 NICs: 9 groups of 8
 * (DP under TP=8) get 8 NICs each, as one group alone would. */
static void test_domain_nic_sharing(void **state) {
    (void)state;
    fabric f = fab_of(&tray, 36);
    double alone = t_of(&f, COLL_ALLREDUCE, 256 * MiB, 16, 8, 1, COLL_RING);
    double nine = t_of(&f, COLL_ALLREDUCE, 256 * MiB, 16, 8, 9, COLL_RING);
    double eighteen = t_of(&f, COLL_ALLREDUCE, 256 * MiB, 16, 8, 18, COLL_RING);
    assert_true(alone == nine);
    assert_true(eighteen > 1.5 * nine);
}

/* 40 NVL72 trays (two full racks and 4 trays of a third) and 6 DGX H100. */
static const char racks_xml[] =
    "<scenario name=\"racks\"><catalog>"
    "<node base=\"dgx-b200\" name=\"test-tray\" gpus=\"4\" nics=\"4\" nvlink-domain=\"72\"/>"
    "</catalog><cluster><nodes type=\"test-tray\" count=\"40\"/><nodes type=\"dgx-h100\" count=\"6\"/>"
    "</cluster></scenario>";

static cluster *racks_cluster(scenario **s) {
    char err[512];
    assert_int_equal(scenario_load_memory(racks_xml, strlen(racks_xml), "racks.xml", s, err, sizeof err), 0);
    cluster *c = cluster_new(*s);
    assert_non_null(c);
    return c;
}

static void test_racks(void **state) {
    (void)state;
    scenario *s = NULL;
    cluster *c = racks_cluster(&s);
    assert_int_equal(cluster_rack_nodes(cluster_pool_spec(c, 0)), 18);
    assert_int_equal(cluster_rack_nodes(cluster_pool_spec(c, 1)), CLUSTER_RACK_NODES);
    assert_int_equal(cluster_node_rack(c, 17), 0);
    assert_int_equal(cluster_node_rack(c, 18), 1);
    assert_int_equal(cluster_node_rack(c, 39), 2);
    assert_int_equal(cluster_node_rack(c, 40), 3);      /* the H100 pool starts a rack */
    assert_int_equal(cluster_node_rack(c, 45), 4);
    assert_int_equal(cluster_rack_count(c), 5);
    cluster_free(c);
    scenario_free(s);
}

static void test_domain_placement(void **state) {
    (void)state;
    scenario *s = NULL;
    cluster *c = racks_cluster(&s);
    int small[8], rack[18], two[2];
    /* 32 GPUs: 8 trays, in the first rack that holds them (rack 2 has 4). */
    assert_int_equal(cluster_alloc(c, 0, 32, small, 8), 8);
    for (int i = 0; i < 8; i++) assert_int_equal(cluster_node_rack(c, small[i]), 0);
    /* 72 GPUs: one whole idle rack, not the 10 free trays of rack 0 and
     * 8 of rack 1. */
    assert_int_equal(cluster_alloc(c, 0, 72, rack, 18), 18);
    for (int i = 0; i < 18; i++) assert_int_equal(cluster_node_rack(c, rack[i]), 1);
    /* 8 GPUs: the rack with the fewest idle trays that holds them (rack 2,
     * 4 idle), keeping rack 0's 10 together. */
    assert_int_equal(cluster_alloc(c, 0, 8, two, 2), 2);
    assert_int_equal(cluster_node_rack(c, two[0]), 2);
    assert_int_equal(cluster_node_rack(c, two[1]), 2);
    cluster_free(c);
    scenario_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_domain_size),
        cmocka_unit_test(test_domain_is_one_island),
        cmocka_unit_test(test_ranks_bounded_by_domain),
        cmocka_unit_test(test_tp8_across_trays),
        cmocka_unit_test(test_ring_latency_72),
        cmocka_unit_test(test_nvls_in_domain),
        cmocka_unit_test(test_alltoall_domain),
        cmocka_unit_test(test_domain_nic_sharing),
        cmocka_unit_test(test_racks),
        cmocka_unit_test(test_domain_placement),
    };
    return cmocka_run_group_tests(tests, rack_setup, catalog_teardown);
}
