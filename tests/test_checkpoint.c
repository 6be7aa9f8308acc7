/*
 * test_checkpoint: checkpoint size, write/load time and interval
 * (models/checkpoint.c).
 *
 * What it models: the bytes a training job saves (weights, fp32 master,
 * optimizer moments, loader state), the time to write them from every rank
 * or through rank 0 to NFS, a parallel file system or an object store, in
 * sync or async mode, the time to read them back, and Young's and Daly's
 * optimal intervals.
 *
 * Expected figures and where they come from:
 *   - Mixed-precision Adam keeps 12 B/param of optimizer state (fp32 master,
 *     m, v): 11B params -> 132 GB, "about 130 GB" (validation README), and
 *     154 GB with the bf16 weights saved as well (the default, 14 B/param).
 *   - BLOOM-176B (bigscience/bloom model card): "Bf16 weights: 329GB, Full
 *     checkpoint with optimizer states: 2.3TB". 176.2e9 params x 2 B =
 *     352.5e9 B = 328.3 GiB: the card's "GB" are GiB. x 14 B = 2.467e12 B =
 *     2.24 TiB against 2.3 TiB (2.53e12 B): -2.4%, held to 5%. (Against a
 *     decimal 2.3e12 it would be +7%; the card's own weights figure says the
 *     units are binary. BLOOM's params include biases and an embedding
 *     norm that tf_param_counts' total leaves out: ~0.01%.)
 *   - Young (1974) and Daly (2006) for δ = 60 s, M = 3 h: 1138 s and 1099 s
 *     (validation README), to 1 s.
 *   - BLOOM checkpointed every 3 h and lost 1.5 h per crash on average
 *     (README): half the interval.
 *   - Write times are the model's own arithmetic, checked against hand
 *     calculations in each test's comment (bandwidths from the builtin
 *     catalog: DGX H100 800 Gb/s storage network at 0.92, PCIe 55 GB/s per
 *     GPU, 2 TB DRAM; NFS 1.5 GB/s per client; parallel FS 20 GB/s per
 *     client; object 12.5 GB/s per client node, 20 ms, 8 MiB parts, and
 *     87.5 MB/s per connection with 10 connections per writing process:
 *     875 MB/s for one process, 7 GB/s for a node's 8 ranks; AWS "make one
 *     concurrent request for each 85-90 MB/s", models/catalog/storage.xml).
 *   - Rank 0's gather holds the whole checkpoint in host memory unless it
 *     streams: 405B's 5.68 TB against a DGX H100's 2 TB (1 TB budget) is
 *     refused; streamed in 12 chunks of 0.5 TB it takes max(gather,
 *     write) + min(gather, write)/12 instead of gather + write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/catalogfix.h"
#include "tests/planfix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/catalog.h"
#include "models/checkpoint.h"
#include "models/collective.h"
#include "models/training.h"
#include "models/transformer.h"
#include "scenarios/catalog_xml.h"

/* The parameter counts of m (models/transformer.h), by value. */
static tf_param_counts pc_of(const llm_spec *m) {
    tf_param_counts c;
    tf_param_counts_of(m, &c);
    return c;
}


#define HOUR 3600.0
#define GB 1e9
#define TIB 1099511627776.0
#define GIB 1073741824.0


static void assert_near(double got, double want, double tol, const char *what) {
    if (!(fabs(got - want) <= tol)) {
        fprintf(stderr, "%s: got %.6g, want %.6g +- %.3g\n", what, got, want, tol);
        fail();
    }
}

static void assert_rel(double got, double want, double frac, const char *what) {
    assert_near(got, want, fabs(want) * frac, what);
}

static train_plan plan_of(int tp, int pp, int dp, sharding sh, precision pr) {
    train_plan p = planfix(tp, pp, dp, dp, 8192, pr);
    p.sharding = sh;
    return p;
}

static fabric fabric_of(const char *node, int nodes) {
    fabric f;
    assert_int_equal(fabric_init(&f, cat, catalog_node(cat, node), nodes), 0);
    return f;
}

static ckpt_io io_of(const llm_spec *m, const train_plan *p, const char *node, const char *kind,
                     double agg_bw, ckpt_layout layout, ckpt_mode mode, ckpt_size *z) {
    int gpus = p->tp * p->pp * p->dp * p->cp;
    fabric f = fabric_of(node, (gpus + 7) / 8);
    ckpt_size zz;
    assert_int_equal(ckpt_job_size(m, p, &zz), 0);
    ckpt_job j = { p, &f, catalog_storage(cat, kind), agg_bw, layout, mode, 0, 0 };
    assert_non_null(j.storage);
    ckpt_io io;
    assert_int_equal(ckpt_io_time(&j, &zz, NULL, &io), 0);
    if (z) *z = zz;
    return io;
}

/* ---- Size ------------------------------------------------------------- */

/* 11B params: 12 B/param of Adam state = 132 GB ("about 130 GB"); 14 with
 * the bf16 weights = 154 GB. */
static void test_size_11b(void **state) {
    (void)state;
    ckpt_contents c;
    ckpt_contents_default(&c, PREC_BF16);
    ckpt_size z;
    assert_int_equal(ckpt_size_params(11e9, &c, 1, &z), 0);
    assert_near(z.bytes_per_param, 14, 1e-12, "bf16 weights + Adam");
    assert_rel(z.model_bytes, 154 * GB, 1e-9, "11B with weights");
    assert_near(z.master_bytes, 44 * GB, 1, "fp32 master");
    assert_near(z.optimizer_bytes, 88 * GB, 1, "m and v");
    c.save_weights = 0;
    assert_int_equal(ckpt_size_params(11e9, &c, 1, &z), 0);
    assert_rel(z.model_bytes, 130 * GB, 0.02, "11B optimizer state: about 130 GB");
    assert_near(z.bytes_per_param, 12, 1e-12, "Adam state");
    assert_near(z.loader_bytes, CKPT_LOADER_BYTES_PER_RANK, 0, "loader, one rank");
}

/* BLOOM-176B: 70 layers, hidden 14336, 112 heads, vocab 250880, 4h GELU FFN,
 * tied embeddings. Model card: 329 "GB" of bf16 weights, 2.3 "TB" in all. */
static void test_size_bloom(void **state) {
    (void)state;
    llm_spec m = { .name = "bloom-176b", .layers = 70, .hidden = 14336, .ffn_hidden = 4 * 14336,
                   .heads = 112, .kv_heads = 112, .vocab = 250880, .gated_ffn = 0,
                   .tied_embeddings = 1 };
    ckpt_size z;
    assert_int_equal(ckpt_size_of(&m, NULL, 384, &z), 0);
    printf("BLOOM-176B: %.4g params, weights %.1f GiB, checkpoint %.4g B = %.3f TiB\n",
           z.params, z.weights_bytes / GIB, z.model_bytes, z.model_bytes / TIB);
    assert_rel(z.params, 176.247e9, 0.005, "BLOOM params");
    assert_rel(z.weights_bytes / GIB, 329, 0.01, "bf16 weights (GiB)");
    assert_rel(z.model_bytes / TIB, 2.3, 0.05, "full checkpoint (TiB)");
}

/* fp8 training keeps bf16 weights and fp32 master state: the same 14 B;
 * fp32 training 12 (no separate master); SGD 4 + 2 + 4 = 10 B; Adafactor
 * 6 B plus a factored state of rows + columns. */
static void test_size_precision_optimizer(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama3-70b");
    assert_non_null(m);
    double n = pc_of(m).total;
    ckpt_size z;
    train_plan p = plan_of(8, 4, 32, SHARD_ZERO1, PREC_FP8);
    assert_int_equal(ckpt_job_size(m, &p, &z), 0);
    assert_near(z.bytes_per_param, 14, 1e-12, "fp8 run");
    assert_int_equal(z.ranks, 1024);
    assert_near(z.loader_bytes, 1024 * CKPT_LOADER_BYTES_PER_RANK, 0, "loader");
    p.precision = PREC_FP32;
    assert_int_equal(ckpt_job_size(m, &p, &z), 0);
    assert_near(z.bytes_per_param, 12, 1e-12, "fp32 run");
    assert_near(z.master_bytes, 0, 0, "no separate master");

    ckpt_contents c;
    ckpt_contents_default(&c, PREC_BF16);
    c.optimizer = CKPT_OPT_SGD;
    assert_int_equal(ckpt_size_of(m, &c, 1, &z), 0);
    assert_near(z.bytes_per_param, 10, 1e-12, "SGD momentum");
    c.optimizer = CKPT_OPT_ADAFACTOR;
    assert_int_equal(ckpt_size_of(m, &c, 1, &z), 0);
    assert_true(z.optimizer_bytes > 0 && z.optimizer_bytes < 0.01 * n);
    assert_rel(z.bytes_per_param, 6, 0.01, "Adafactor");
    c.optimizer = CKPT_OPT_ADAM;
    c.state_bytes_per_param = 2;          /* 8-bit Adam: m and v in one byte each */
    assert_int_equal(ckpt_size_of(m, &c, 1, &z), 0);
    assert_near(z.bytes_per_param, 8, 1e-12, "explicit state bytes");
    assert_int_equal(ckpt_size_params(0, &c, 1, &z), -1);
    assert_int_equal(ckpt_size_params(1e9, &c, 0, &z), -1);
}

/* ---- Interval --------------------------------------------------------- */

static void test_young_daly(void **state) {
    (void)state;
    double young = ckpt_young_s(60, 3 * HOUR), daly = ckpt_daly_s(60, 3 * HOUR);
    printf("delta 60 s, M 3 h: Young %.1f s, Daly %.1f s\n", young, daly);
    assert_near(young, 1138, 1, "Young");
    assert_near(daly, 1099, 1, "Daly");
    /* δ >= 2M: checkpoint every M. */
    assert_near(ckpt_daly_s(7 * HOUR, 3 * HOUR), 3 * HOUR, 0, "Daly, delta >= 2M");
    assert_near(ckpt_daly_s(0, 3 * HOUR), 0, 0, "free checkpoints");
    assert_true(isnan(ckpt_daly_s(60, 0)));

    /* auto: δ is the stall; never shorter than the background write. */
    ckpt_io io;
    memset(&io, 0, sizeof io);
    io.stall_s = 60;
    assert_near(ckpt_auto_interval_s(&io, 3 * HOUR), daly, 1e-9, "auto = Daly(stall)");
    io.stall_s = 2;
    io.background_s = 900;
    assert_near(ckpt_auto_interval_s(&io, 3 * HOUR), 900, 1e-9, "auto >= background write");
}

/* Lost work per failure: half the interval (BLOOM: 3 h -> 1.5 h); a sync
 * stall or an async commit delay adds the chance of losing a whole interval. */
static void test_expected_lost(void **state) {
    (void)state;
    assert_near(ckpt_expected_lost_s(3 * HOUR, 0, 0), 1.5 * HOUR, 1e-9, "BLOOM: half of 3 h");
    /* τ = 1000, δ = 100: (500000 + 100000) / 1100 = 545.45 */
    assert_near(ckpt_expected_lost_s(1000, 100, 0), 600000.0 / 1100, 1e-9, "sync stall");
    /* async, δ = 10, w = 200: (500000 + 1000·210) / 1010 = 702.97 */
    assert_near(ckpt_expected_lost_s(1000, 10, 200), 710000.0 / 1010, 1e-9, "async commit delay");

    /* ETTR, first order, Llama 3-like: M = 3.09 h, stall 5 s, Daly interval
     * (330 s). Checkpoints cost 5/335 = 1.5%; each failure loses ~170 s of
     * work plus the recovery. 10 min to detect, restart and reload: 0.917;
     * 15 min: 0.890. Meta's "above 90%" needs recovery under ~13 min. */
    double m = 3.09 * HOUR, t = ckpt_daly_s(5, m);
    double e10 = ckpt_ettr(t, 5, 0, m, 600), e15 = ckpt_ettr(t, 5, 0, m, 900);
    printf("ETTR at M 3.09 h, stall 5 s, interval %.0f s: recovery 10 min %.3f, 15 min %.3f\n",
           t, e10, e15);
    assert_near(e10, 0.917, 0.002, "ETTR, 10 min recovery");
    assert_near(e15, 0.890, 0.002, "ETTR, 15 min recovery");
    assert_near(ckpt_ettr(1000, 0, 0, INFINITY, 0), 1, 0, "no failures, free checkpoints");
}

/* ---- Write and load --------------------------------------------------- */

/*
 * Worked example: Llama 3 405B (405.9e9 params) on 16,384 H100 GPUs
 * (tp 8, pp 16, dp 128, fsdp): 14 B/param = 5.68 TB + 1 GB of loader state.
 *   sharded to a 2 TB/s parallel FS: 2,048 nodes write 2.77 GB each at
 *     min(100 GB/s x 0.92, 20 GB/s per client) = 20 GB/s: 0.14 s; the
 *     system takes 5.68 TB / 2 TB/s = 2.84 s: aggregate-bound, 2.84 s + 1 s
 *     setup + 1 ms commit = 3.8 s stalled (sync).
 *   rank0 to NFS: gather 5.68 TB into one GPU through one 400 Gb/s NIC
 *     (46 GB/s): 123 s; one client writes it at 1.5 GB/s: 3,788 s. Over an
 *     hour, and 5.68 TB does not fit in 2 TB of host memory.
 */
static void test_405b_worked_example(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama3-405b");
    assert_non_null(m);
    train_plan p = plan_of(8, 16, 128, SHARD_FSDP, PREC_BF16);
    ckpt_size z;
    ckpt_io a = io_of(m, &p, "dgx-h100", "parallel-fs", 2e12, CKPT_SHARDED, CKPT_SYNC, &z);
    ckpt_io b = io_of(m, &p, "dgx-h100", "nfs", 0, CKPT_RANK0, CKPT_SYNC, NULL);
    printf("405B: %.4g params, checkpoint %.4g B (%.2f TB)\n", z.params, z.total_bytes, z.total_bytes / 1e12);
    printf("  sharded, parallel FS 2 TB/s, sync: write %.2f s (%s-bound), node %.3g B at %.3g B/s, "
           "load %.2f s\n", a.write_s, a.bound, a.node_bytes, a.node_bw_bytes_per_s, a.load_s);
    printf("  rank0, NFS, sync: gather %.0f s + write = %.0f s (%.2f h), host fits %d, load %.0f s\n",
           b.gather_s, b.write_s, b.write_s / HOUR, b.host_fits, b.load_s);
    assert_rel(z.params, 405.9e9, 0.005, "405B params");
    assert_rel(z.total_bytes, 5.68e12, 0.01, "405B checkpoint");

    assert_int_equal(a.writer_ranks, 16384);
    assert_int_equal(a.writer_nodes, 2048);
    assert_string_equal(a.bound, "aggregate");
    assert_rel(a.node_bytes, z.total_bytes / 2048, 1e-9, "per-node share");
    assert_near(a.node_bw_bytes_per_s, 20e9, 1, "per-client ceiling");
    assert_rel(a.write_s, z.total_bytes / 2e12 + 1 + 2 * 0.5e-3, 1e-6, "sharded write");
    assert_near(a.stall_s, a.write_s, 0, "sync stalls for the write");
    /* Load: each rank reads 1/16384 at 1.4x (DDN read/write): 2.03 s + 1 s. */
    assert_rel(a.load_s, z.total_bytes / 2.8e12 + 1, 0.01, "sharded load");

    assert_int_equal(b.writer_ranks, 1);
    assert_string_equal(b.bound, "client");
    assert_rel(b.gather_s, z.total_bytes / (50e9 * 0.92), 0.01, "gather through one NIC");
    assert_rel(b.write_s, 1 + b.gather_s + z.total_bytes / 1.5e9, 0.001, "rank0 write");
    assert_true(b.write_s > HOUR);
    assert_int_equal(b.host_fits, 0);
    assert_true(b.write_s > 1000 * a.write_s);
}

/* Who writes. Llama 3 70B on 1,024 H100s, tp 8, pp 4, dp 32 (980 GB):
 *   sharding none, sharded: only replica 0 writes, 32 ranks on 4 nodes,
 *     245 GB each at 20 GB/s = 12.3 s (client-bound; the 100 GB/s system
 *     alone would take 9.8 s).
 *   zero1: the optimizer (12 B/param) is split over all 128 nodes; the bf16
 *     weights (2 B) still come from replica 0's 4 nodes: 35 GB + 6.6 GB.
 *   fully-parallel: everyone writes 1/1024: aggregate-bound, 9.8 s.
 *   Loading without sharding reads the whole state once per replica
 *     (32 x 980 GB at 140 GB/s: 224 s); fully parallel reads it once and
 *     all-gathers over DP. */
static void test_writers_by_sharding(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama3-70b");
    train_plan p = plan_of(8, 4, 32, SHARD_NONE, PREC_BF16);
    ckpt_size z;
    ckpt_io none = io_of(m, &p, "dgx-h100", "parallel-fs", 0, CKPT_SHARDED, CKPT_SYNC, &z);
    ckpt_io fp = io_of(m, &p, "dgx-h100", "parallel-fs", 0, CKPT_FULLY_PARALLEL, CKPT_SYNC, NULL);
    p.sharding = SHARD_ZERO1;
    ckpt_io z1 = io_of(m, &p, "dgx-h100", "parallel-fs", 0, CKPT_SHARDED, CKPT_SYNC, NULL);
    printf("70B on 1024 GPUs (%.3g B): none %.1f s (%s), zero1 %.1f s (%s), fully-parallel %.1f s (%s); "
           "load none %.0f s, fully-parallel %.1f s\n", z.total_bytes, none.write_s, none.bound,
           z1.write_s, z1.bound, fp.write_s, fp.bound, none.load_s, fp.load_s);

    assert_int_equal(none.writer_ranks, 32);
    assert_int_equal(none.writer_nodes, 4);
    assert_string_equal(none.bound, "client");
    assert_rel(none.node_bytes, z.model_bytes / 4, 0.001, "replica 0 per node");
    assert_rel(none.write_s, 1 + z.model_bytes / 4 / 20e9, 0.01, "none: 4 writer nodes");

    assert_int_equal(z1.writer_ranks, 1024);
    assert_rel(z1.node_bytes, z.optimizer_bytes / 128 + z.master_bytes / 128 + z.weights_bytes / 4,
               0.001, "zero1 busiest node");

    assert_int_equal(fp.writer_nodes, 128);
    assert_string_equal(fp.bound, "aggregate");
    assert_rel(fp.write_s, 1 + z.total_bytes / 100e9, 0.001, "fully parallel");

    assert_rel(none.loaded_bytes, 32 * z.model_bytes, 0.001, "every replica reads");
    assert_rel(none.load_s, 1 + 32 * z.model_bytes / 140e9, 0.01, "load, no sharding");
    assert_rel(fp.loaded_bytes, z.total_bytes, 1e-9, "read once");
    assert_true(fp.load_s < none.load_s / 10);
}

/* async: the stall is the snapshot (each GPU's shard over its PCIe link,
 * the node's over host memory), the write runs behind. 70B fully parallel
 * on 128 nodes: 1/1024 of 988 GB per GPU = 0.96 GB at 55 GB/s = 17 ms, but
 * the node's 7.7 GB into 300 GB/s of DRAM takes 26 ms: + 1 s setup. The
 * write is as sync. With a
 * separate storage network, no slowdown; without one (a node type with
 * storage-nic-bw 0), the write shares the compute NICs. */
static void test_async(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama3-70b");
    train_plan p = plan_of(8, 4, 32, SHARD_ZERO1, PREC_BF16);
    ckpt_size z;
    ckpt_io s = io_of(m, &p, "dgx-h100", "parallel-fs", 0, CKPT_FULLY_PARALLEL, CKPT_SYNC, &z);
    ckpt_io a = io_of(m, &p, "dgx-h100", "parallel-fs", 0, CKPT_FULLY_PARALLEL, CKPT_ASYNC, NULL);
    printf("70B async: stall %.3f s (d2h %.3f s), background %.2f s; sync %.2f s\n",
           a.stall_s, a.d2h_s, a.background_s, s.write_s);
    assert_rel(a.d2h_s, z.total_bytes / 1024 / 55e9, 0.001, "snapshot over PCIe");
    assert_rel(a.stall_s, 1 + 8 * z.total_bytes / 1024 / 300e9, 1e-9, "async stall: host memory");
    assert_rel(a.background_s, s.write_s - 1, 1e-6, "background = the write");
    assert_near(a.slowdown, 0, 0, "separate storage network");
    assert_int_equal(a.host_fits, 1);
    assert_true(a.stall_s < s.stall_s / 5);

    /* No storage network: the compute NICs carry it. */
    node_spec n = *catalog_node(cat, "dgx-h100");
    n.storage_nic_bw_bytes_per_s = 0;
    fabric f = fabric_of("dgx-h100", 128);
    f.node = &n;
    ckpt_job j = { &p, &f, catalog_storage(cat, "object"), 0, CKPT_SHARDED, CKPT_ASYNC, 0.3, 0 };
    ckpt_io o;
    assert_int_equal(ckpt_io_time(&j, &z, NULL, &o), 0);
    printf("70B async to object over compute NICs: background %.1f s, slowdown %.4f\n",
           o.background_s, o.slowdown);
    assert_true(o.slowdown > 0 && o.slowdown <= 0.3);
    /* rank0 async: the gather stalls; the write is background. */
    ckpt_io r = io_of(m, &p, "dgx-h100", "nfs", 0, CKPT_RANK0, CKPT_ASYNC, NULL);
    assert_rel(r.stall_s, 1 + r.gather_s, 1e-9, "rank0 async stall");
    assert_rel(r.background_s, z.total_bytes / 1.5e9, 0.001, "rank0 async write");
}

/* Object store: per-request latency dominates small shards. Llama 2 7B on
 * 8 GPUs (fsdp, 94 GB): each rank's 11.8 GB in 8 MiB parts = 1,400
 * requests, 10 in flight at 20 ms = 2.8 s; the client moves 94 GB at
 * 10 GB/s = 9.4 s: bandwidth-bound. On 4,096 GPUs each rank has 23 MB:
 * 3 parts, ~0.1 s of latency vs 0.5 s aggregate. */
static void test_object_store(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama2-7b");
    assert_non_null(m);
    train_plan p = plan_of(1, 1, 8, SHARD_FSDP, PREC_BF16);
    ckpt_size z;
    ckpt_io o = io_of(m, &p, "dgx-h100", "object", 0, CKPT_SHARDED, CKPT_SYNC, &z);
    ckpt_io l = io_of(m, &p, "dgx-h100", "parallel-fs", 0, CKPT_SHARDED, CKPT_SYNC, NULL);
    printf("7B on 8 GPUs: object %.2f s (%s), parallel FS %.2f s (%s)\n", o.write_s, o.bound,
           l.write_s, l.bound);
    assert_string_equal(o.bound, "client");
    /* 8 writing ranks x 10 connections x 87.5 MB/s = 7 GB/s (was the 10 GB/s ceiling). */
    assert_rel(o.write_s, 1 + z.total_bytes / 7e9 + 2 * 0.02, 0.001, "object, one node");
    assert_true(o.write_s > l.write_s);

    /* A tiny shard per rank: latency-bound. */
    ckpt_contents c;
    ckpt_contents_default(&c, PREC_BF16);
    ckpt_size tiny;
    assert_int_equal(ckpt_size_params(1e6, &c, 8, &tiny), 0);
    fabric f = fabric_of("dgx-h100", 1);
    ckpt_job j = { &p, &f, catalog_storage(cat, "object"), 0, CKPT_SHARDED, CKPT_SYNC, 0, 0 };
    ckpt_io t;
    assert_int_equal(ckpt_io_time(&j, &tiny, NULL, &t), 0);
    assert_string_equal(t.bound, "latency");
}

/* One writer to object storage: rank 0 writes through one process, whose
 * 10 connections (boto3's max_concurrency) carry 87.5 MB/s each (AWS: one
 * request per 85-90 MB/s): 875 MB/s, not the node's 12.5 GB/s ceiling (it
 * got 10 GB/s before). Llama 2 7B on 8 GPUs, 98 GB: 112 s to write. */
static void test_object_single_writer(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama2-7b");
    assert_non_null(m);
    const storage_spec *st = catalog_storage(cat, "object");
    assert_non_null(st);
    assert_near(ckpt_client_bw(st, 1), 875e6, 1, "one process");
    assert_near(ckpt_client_bw(st, 8), 7e9, 1, "8 processes");
    assert_near(ckpt_client_bw(st, 64), 12.5e9, 1, "the node's ceiling");
    assert_true(isinf(ckpt_client_bw(catalog_storage(cat, "nfs"), 1)) == 0);
    assert_near(ckpt_client_bw(catalog_storage(cat, "nfs"), 8), 1.5e9, 1, "nfs: per client only");
    train_plan p = plan_of(1, 1, 8, SHARD_FSDP, PREC_BF16);
    ckpt_size z;
    ckpt_io r = io_of(m, &p, "dgx-h100", "object", 0, CKPT_RANK0, CKPT_SYNC, &z);
    printf("7B rank0 to object: %.1f s at %.3g B/s (%s)\n", r.write_s, r.node_bw_bytes_per_s, r.bound);
    assert_string_equal(r.bound, "client");
    assert_near(r.node_bw_bytes_per_s, 875e6, 1, "single writer");
    assert_true(r.write_s > z.total_bytes / 875e6);
}

/* Rank 0's gather and its host memory. Llama 3 405B, 5.68 TB, on DGX
 * H100 nodes with 2 TB of DRAM (half of it for the checkpoint,
 * ckpt_io_params host_mem_fraction): an in-memory gather is refused, naming
 * the sizes; a streaming gather goes through in 12 chunks of 0.5 TB, the
 * gather (123 s through one NIC) hidden under the NFS write (3787 s):
 * max + min/12 instead of the sum. A 7B checkpoint (98 GB) fits. */
static void test_rank0_host_memory(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama3-405b");
    train_plan p = plan_of(8, 16, 128, SHARD_FSDP, PREC_BF16);
    ckpt_size z;
    assert_int_equal(ckpt_job_size(m, &p, &z), 0);
    fabric f = fabric_of("dgx-h100", 2048);
    ckpt_job j = { &p, &f, catalog_storage(cat, "nfs"), 0, CKPT_RANK0, CKPT_SYNC, 0, 0 };
    ckpt_io mem, str;
    assert_int_equal(ckpt_io_time(&j, &z, NULL, &mem), 0);
    char why[512] = "";
    assert_int_equal(ckpt_host_check(&j, &mem, why, sizeof why), -1);
    printf("in memory: %s\n", why);
    assert_non_null(strstr(why, "5.68 TB"));
    assert_non_null(strstr(why, "2 TB of DRAM"));
    assert_non_null(strstr(why, "streaming"));
    assert_near(mem.host_budget_bytes, 1e12, 1, "half of 2 TB");
    assert_int_equal(mem.stream_chunks, 0);

    j.streaming_gather = 1;
    assert_int_equal(ckpt_io_time(&j, &z, NULL, &str), 0);
    assert_int_equal(ckpt_host_check(&j, &str, why, sizeof why), 0);
    assert_int_equal(str.stream_chunks, 12);
    double write = z.total_bytes / 1.5e9;
    printf("streamed: gather %.0f s, write %.0f s, save %.0f s (in memory %.0f s)\n", str.gather_s, write,
           str.write_s, mem.write_s);
    assert_rel(str.write_s, 1 + write + str.gather_s / 12 + 2 * 1e-3, 1e-3, "pipelined");
    assert_rel(mem.write_s, 1 + write + mem.gather_s + 2 * 1e-3, 1e-3, "gather, then write");
    assert_true(str.write_s < mem.write_s && str.write_s > HOUR);
    /* Async and streaming: training waits until the last chunk is in, which
     * is when the writer has drained all but the 1 TB budget. */
    j.mode = CKPT_ASYNC;
    assert_int_equal(ckpt_io_time(&j, &z, NULL, &str), 0);
    assert_rel(str.stall_s, 1 + write * (z.total_bytes - 1e12) / z.total_bytes, 1e-3, "async stall");
    assert_rel(str.write_s, 1 + write + str.gather_s / 12 + 2 * 1e-3, 1e-3, "async write");

    /* Fits: no complaint either way. */
    const llm_spec *s7 = catalog_llm(cat, "llama2-7b");
    train_plan q = plan_of(1, 1, 8, SHARD_FSDP, PREC_BF16);
    ckpt_size z7;
    assert_int_equal(ckpt_job_size(s7, &q, &z7), 0);
    fabric f1 = fabric_of("dgx-h100", 1);
    ckpt_job k = { &q, &f1, catalog_storage(cat, "nfs"), 0, CKPT_RANK0, CKPT_SYNC, 0, 0 };
    ckpt_io small;
    assert_int_equal(ckpt_io_time(&k, &z7, NULL, &small), 0);
    assert_int_equal(small.host_fits, 1);
    assert_int_equal(ckpt_host_check(&k, &small, why, sizeof why), 0);
}

static void test_invalid(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama2-7b");
    train_plan p = plan_of(1, 1, 8, SHARD_FSDP, PREC_BF16);
    ckpt_size z;
    assert_int_equal(ckpt_job_size(m, &p, &z), 0);
    fabric f = fabric_of("dgx-h100", 1);
    ckpt_io io;
    memset(&io, 0x5a, sizeof io);
    ckpt_io before = io;
    ckpt_job j = { &p, &f, NULL, 0, CKPT_SHARDED, CKPT_SYNC, 0, 0 };
    assert_int_equal(ckpt_io_time(&j, &z, NULL, &io), -1);
    assert_memory_equal(&io, &before, sizeof io);
    j.storage = catalog_storage(cat, "nfs");
    j.layout = (ckpt_layout)7;
    assert_int_equal(ckpt_io_time(&j, &z, NULL, &io), -1);
    j.layout = CKPT_SHARDED;
    train_plan bad = p;
    bad.tp = 0;
    j.plan = &bad;
    assert_int_equal(ckpt_io_time(&j, &z, NULL, &io), -1);
    assert_int_equal(ckpt_layout_parse("rank0"), CKPT_RANK0);
    assert_int_equal(ckpt_layout_parse("fully-parallel"), CKPT_FULLY_PARALLEL);
    assert_int_equal(ckpt_mode_parse("async"), CKPT_ASYNC);
    assert_int_equal(ckpt_optimizer_parse("adafactor"), CKPT_OPT_ADAFACTOR);
    assert_int_equal(ckpt_layout_parse("gathered"), -1);
    assert_string_equal(ckpt_layout_name(CKPT_SHARDED), "sharded");
}

/* A scenario's choices over the defaults (ckpt_contents_choose): each
 * field alone, the defaults kept where nothing is chosen, and the one
 * combination that leaves no weights refused. 1e9 params, so bytes per
 * parameter read straight off the size. */
static void test_contents_choose(void **state) {
    (void)state;
    ckpt_choice ch;
    ckpt_contents c;
    ckpt_size z;
    char why[200];
    ckpt_choice_default(&ch);
    assert_int_equal(ckpt_contents_choose(&c, PREC_BF16, &ch, why, sizeof why), 0);
    assert_int_equal(ckpt_size_params(1e9, &c, 1, &z), 0);
    assert_true(fabs(z.bytes_per_param - 14) < 1e-12);          /* the bf16 default */
    ch.weights = CKPT_WEIGHTS_NONE;                              /* fp32 Adam state alone: 12 */
    assert_int_equal(ckpt_contents_choose(&c, PREC_BF16, &ch, why, sizeof why), 0);
    assert_int_equal(ckpt_size_params(1e9, &c, 1, &z), 0);
    assert_true(fabs(z.bytes_per_param - 12) < 1e-12);
    ch.optimizer = CKPT_OPT_SGD;                                 /* master 4 + momentum 4 */
    assert_int_equal(ckpt_contents_choose(&c, PREC_BF16, &ch, why, sizeof why), 0);
    assert_int_equal(ckpt_size_params(1e9, &c, 1, &z), 0);
    assert_true(fabs(z.bytes_per_param - 8) < 1e-12);
    ckpt_choice_default(&ch);                                    /* fp16 weights, no master, no state */
    ch.weights = PREC_FP16;
    ch.master_weights = 0;
    ch.optimizer = CKPT_OPT_NONE;
    assert_int_equal(ckpt_contents_choose(&c, PREC_BF16, &ch, why, sizeof why), 0);
    assert_int_equal(ckpt_size_params(1e9, &c, 1, &z), 0);
    assert_true(fabs(z.bytes_per_param - 2) < 1e-12);
    /* fp32 training has no master by default: weights="none" leaves nothing. */
    ckpt_choice_default(&ch);
    ch.weights = CKPT_WEIGHTS_NONE;
    memset(&c, 0x5a, sizeof c);
    ckpt_contents before = c;
    assert_int_equal(ckpt_contents_choose(&c, PREC_FP32, &ch, why, sizeof why), -1);
    assert_non_null(strstr(why, "no weights"));
    assert_memory_equal(&c, &before, sizeof c);
    ch.weights = PREC_FP8;                                       /* not a checkpoint precision */
    assert_int_equal(ckpt_contents_choose(&c, PREC_BF16, &ch, why, sizeof why), -1);
    assert_int_equal(ckpt_weights_parse("none"), CKPT_WEIGHTS_NONE);
    assert_int_equal(ckpt_weights_parse("fp32"), PREC_FP32);
    assert_int_equal(ckpt_weights_parse("fp8"), -1);
    assert_int_equal(ckpt_weights_parse(NULL), -1);
    /* NULL choice: the defaults, as ckpt_job_size. */
    assert_int_equal(ckpt_contents_choose(&c, PREC_FP16, NULL, why, sizeof why), 0);
    assert_int_equal(c.weights_precision, PREC_FP16);
    assert_int_equal(c.master_weights, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_11b),
        cmocka_unit_test(test_size_bloom),
        cmocka_unit_test(test_size_precision_optimizer),
        cmocka_unit_test(test_young_daly),
        cmocka_unit_test(test_expected_lost),
        cmocka_unit_test(test_405b_worked_example),
        cmocka_unit_test(test_writers_by_sharding),
        cmocka_unit_test(test_async),
        cmocka_unit_test(test_object_store),
        cmocka_unit_test(test_object_single_writer),
        cmocka_unit_test(test_rank0_host_memory),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_contents_choose),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
