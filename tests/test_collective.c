/*
 * test_collective: NCCL collective times on GPU clusters (models/collective).
 *
 * What is modelled: nccl-tests runs (all_reduce_perf and friends) on DGX
 * A100 and DGX H100 nodes, one node over NVLink/NVSwitch (with and without
 * NVLink SHARP) and many nodes over 8 InfiniBand NICs each.
 *
 * Where the expected figures come from:
 * - the measured 8x H100 all-reduce curve in shared/validation
 *   (nccl_allreduce_8xH100.csv, Azure ND H100 v5, NCCL 2.18.5), replayed row
 *   by row with the tolerance beside each row;
 * - published nccl-tests peaks (each with its source beside the case);
 * - definitions (nccl-tests PERFORMANCE.md bus bandwidth factors) and the
 *   field report on overlay networks (direct: half the latency, 7x the
 *   bandwidth);
 * - properties any such model must keep: time grows with size, the ring
 *   wins on bandwidth across nodes and trees/NVLS win on latency at scale,
 *   oversubscription slows cross-leaf traffic, groups share NICs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/catalogfix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/collective.h"
#include "models/microbench.h"
#include "scenarios/catalog_xml.h"

#define GB 1e9
#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * 1024.0 * 1024.0)


/* cmocka 1.1 compares floats only: doubles to within eps, with a message. */
#define assert_dbl(a, b, eps) dbl_equal((a), (b), (eps), #a, __LINE__)
static void dbl_equal(double a, double b, double eps, const char *what, int line) {
    if (!(fabs(a - b) <= eps))
        print_error("line %d: %s = %.17g, want %.17g (+- %g)\n", line, what, a, b, eps);
    assert_true(fabs(a - b) <= eps);
}


static fabric fab(const char *node, int nodes) {
    fabric f;
    const node_spec *n = catalog_node(cat, node);
    assert_non_null(n);
    assert_int_equal(fabric_init(&f, cat, n, nodes), 0);
    return f;
}

static coll_result run(const fabric *f, coll_op op, double bytes, int ranks, int rpn, int conc,
                       coll_algo algo) {
    coll_group g = { ranks, rpn, conc };
    coll_result r;
    memset(&r, 0, sizeof r);
    int rc = coll_time(f, op, bytes, &g, algo, &r);
    if (rc != 0)
        print_error("coll_time(%s, %.0f B, %d ranks, %d/node, %s) failed\n", coll_op_name(op), bytes,
                    ranks, rpn, coll_algo_name(algo));
    assert_int_equal(rc, 0);
    assert_true(r.time_s > 0);
    return r;
}

static double busbw_GBps(const fabric *f, coll_op op, double bytes, int ranks, int rpn, int conc,
                         coll_algo algo) {
    return run(f, op, bytes, ranks, rpn, conc, algo).busbw_bytes_per_s / GB;
}

/* |got/want - 1| <= tol, with a message. */
static void near(double got, double want, double tol, const char *what) {
    double e = got / want - 1;
    if (fabs(e) > tol)
        print_error("%s: got %.4g, want %.4g (error %+.1f%%, tolerance %.0f%%)\n", what, got, want,
                    100 * e, 100 * tol);
    assert_true(fabs(e) <= tol);
}

/* ---- The measured 8x H100 curve ----------------------------------------- */

/* shared/validation/nccl_allreduce_8xH100.csv: NCCL all_reduce_perf,
 * in-place, 8x H100 SXM in one node (NVSwitch, NVLS on), NCCL 2.18.5,
 * Azure/AI-benchmarking-guide "Azure Results/ND_H100_v5_results.md".
 * Tolerances: 35% below 1 MB, where one launch and a few microseconds of
 * latency decide the figure, 15% from 1 MB up. */
static const struct {
    double size_bytes, busbw_GBps, tol;
} h100_curve[] = {
    { 1024, 0.07, 0.35 },
    { 8192, 0.53, 0.35 },
    { 65536, 2.72, 0.35 },
    { 262144, 10.86, 0.35 },
    { 1048576, 43.70, 0.15 },
    { 4194304, 128.73, 0.15 },
    { 16777216, 234.45, 0.15 },
    { 67108864, 361.78, 0.15 },
    { 134217728, 400.61, 0.15 },
    { 268435456, 423.38, 0.15 },
    { 536870912, 438.46, 0.15 },
    { 1073741824, 466.35, 0.15 },
    { 2147483648, 472.36, 0.15 },
    { 4294967296, 475.54, 0.15 },
    { 8589934592, 478.87, 0.15 },
};
#define N_CURVE (sizeof h100_curve / sizeof h100_curve[0])

/* The CSV, when it is beside the tree (shared/ next to the clone): every
 * row in it must be one of the rows above, so the replay covers the file. */
static FILE *open_csv(void) {
    const char *env = getenv("CT_VALIDATION_DIR");
    char path[512];
    if (env) {
        snprintf(path, sizeof path, "%s/nccl_allreduce_8xH100.csv", env);
        FILE *fp = fopen(path, "r");
        if (fp) return fp;
    }
    static const char *const tries[] = { "tests/validation/nccl_allreduce_8xH100.csv", "../shared/validation/nccl_allreduce_8xH100.csv",
                                         "shared/validation/nccl_allreduce_8xH100.csv" };
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        FILE *fp = fopen(tries[i], "r");
        if (fp) return fp;
    }
    return NULL;
}

static void test_csv_matches_table(void **state) {
    (void)state;
    FILE *fp = open_csv();
    if (!fp) {
        printf("  (validation CSV not found beside the tree; using the copy in this test)\n");
        return;
    }
    char line[256];
    int rows = 0;
    while (fgets(line, sizeof line, fp)) {
        double size, bw;
        if (line[0] == '#' || sscanf(line, "%lf,%lf", &size, &bw) != 2) continue;
        int found = 0;
        for (size_t i = 0; i < N_CURVE; i++)
            if (h100_curve[i].size_bytes == size && fabs(h100_curve[i].busbw_GBps - bw) < 1e-9) found = 1;
        if (!found) print_error("CSV row %.0f,%.2f is not in the test's table\n", size, bw);
        assert_true(found);
        rows++;
    }
    fclose(fp);
    assert_int_equal(rows, (int)N_CURVE);
}

static void test_h100_curve(void **state) {
    (void)state;
    fabric f = fab("dgx-h100", 1);
    int bad = 0;
    printf("  8x H100 all-reduce (COLL_AUTO, dgx-h100): predicted vs measured busbw\n");
    printf("  %12s %10s %10s %8s %6s  %-5s %-6s %10s\n", "size_bytes", "pred_GBps", "meas_GBps",
           "error", "tol", "algo", "proto", "time_us");
    for (size_t i = 0; i < N_CURVE; i++) {
        coll_result r = run(&f, COLL_ALLREDUCE, h100_curve[i].size_bytes, 8, 8, 1, COLL_AUTO);
        double pred = r.busbw_bytes_per_s / GB, meas = h100_curve[i].busbw_GBps;
        double e = pred / meas - 1;
        int ok = fabs(e) <= h100_curve[i].tol;
        bad += !ok;
        printf("  %12.0f %10.2f %10.2f %+7.1f%% %5.0f%%  %-5s %-6s %10.1f%s\n", h100_curve[i].size_bytes,
               pred, meas, 100 * e, 100 * h100_curve[i].tol, coll_algo_name(r.algo),
               coll_proto_name(r.proto), r.time_s * 1e6, ok ? "" : "  <-- out of tolerance");
    }
    assert_int_equal(bad, 0);
}

/* ---- Published curves: tests/validation/collectives.csv ------------------ */

/* Each row is priced as the CLI prices a <collective> microbenchmark
 * (models/microbench.c mb_predict on the node type's fabric); the row's
 * tolerance holds it, and the median |error| at >= 1 MB of each set is
 * reported, the held-out set's held to <= 10% (issue 19's target). No row
 * was fitted: the model's constants come from NCCL's tuning.cc and the
 * node's vendor peaks (docs/collectives.md). */
#define MAX_ROWS 256

static FILE *open_validation(const char *name) {
    static const char *const dirs[] = { "tests/validation", "../tests/validation", "../../tests/validation" };
    char path[512];
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[i], name);
        FILE *fp = fopen(path, "r");
        if (fp) return fp;
    }
    return NULL;
}

/* Field k (0-based) of a CSV line without quoted commas, into out. */
static void csv_field(const char *line, int k, char *out, size_t len) {
    const char *p = line;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    size_t n = p ? strcspn(p, ",\n") : 0;
    if (n >= len) n = len - 1;
    memcpy(out, p ? p : "", n);
    out[n] = 0;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    if (n == 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One row: the predicted busbw's signed error in percent; -1000 when the
 * row cannot be priced. */
static double row_error_pct(const char *line, char *label, size_t len) {
    char id[64], node[64], nodes[16], gpn[16], op[32], size[32], exp[32];
    csv_field(line, 0, id, sizeof id);
    csv_field(line, 2, node, sizeof node);
    csv_field(line, 4, nodes, sizeof nodes);
    csv_field(line, 5, gpn, sizeof gpn);
    csv_field(line, 6, op, sizeof op);
    csv_field(line, 7, size, sizeof size);
    csv_field(line, 9, exp, sizeof exp);
    const node_spec *nd = catalog_node(cat, node);
    fabric f;
    if (!nd || fabric_init(&f, cat, nd, atoi(nodes)) < 0 || coll_op_parse(op) < 0) return -1000;
    mb_case c = { .kind = MBC_COLLECTIVE, .op = (coll_op)coll_op_parse(op),
                  .ranks = atoi(nodes) * atoi(gpn), .size_bytes = atof(size) };
    mb_env env = { &f, NULL, 0 };
    mb_prediction p;
    memset(&p, 0, sizeof p);
    if (mb_predict(&c, &env, &p) < 0) return -1000;
    snprintf(label, len, "%-22s %12s %8.2f %8.2f %-16s", id, size, p.busbw_bytes_per_s / GB, atof(exp),
             p.detail ? p.detail : "");
    return 100 * (p.busbw_bytes_per_s / GB / atof(exp) - 1);
}

static void test_validation_csv(void **state) {
    (void)state;
    FILE *fp = open_validation("collectives.csv");
    assert_non_null(fp);
    char line[1024], set[32], tol[16], size[32], label[160];
    double err[2][MAX_ROWS];
    int n[2] = { 0, 0 }, rows = 0, bad = 0;
    assert_non_null(fgets(line, sizeof line, fp));     /* header */
    assert_non_null(strstr(line, "id,source,node_type,gpu,nodes,gpus_per_node,op,size_bytes,metric"));
    printf("  %-22s %12s %8s %8s %-16s %7s %4s %s\n", "id", "size_bytes", "pred", "meas", "model", "error",
           "tol", "set");
    while (fgets(line, sizeof line, fp) && rows < MAX_ROWS) {
        if (line[0] == '#' || line[0] == '\n') continue;
        double e = row_error_pct(line, label, sizeof label);
        assert_true(e > -999);
        csv_field(line, 10, tol, sizeof tol);
        csv_field(line, 11, set, sizeof set);
        csv_field(line, 7, size, sizeof size);
        int held = !strcmp(set, "heldout"), ok = fabs(e) <= atof(tol);
        assert_true(held || !strcmp(set, "calibration"));
        bad += !ok && !held;      /* held-out rows are reported, never tuned to: their
                                     target is the median below (issue 19) */
        if (atof(size) >= 1048576) err[held][n[held]++] = fabs(e);
        printf("  %s %+6.1f%% %4s %s%s\n", label, e, tol, set, ok ? "" : "  <-- out of tolerance");
        rows++;
    }
    fclose(fp);
    double med_cal = median(err[0], n[0]), med_held = median(err[1], n[1]);
    printf("  median |error| >= 1 MB: calibration %.1f%% (%d rows), held-out %.1f%% (%d rows)\n", med_cal,
           n[0], med_held, n[1]);
    assert_true(rows >= 20 && n[1] >= 10);
    assert_int_equal(bad, 0);
    assert_true(med_held <= 10);
}

/* ---- Published figures --------------------------------------------------- */

/* DGX A100, 8 GPUs, NVSwitch, no NVLS: nccl-tests all_reduce_perf peaks at
 * ~230 GB/s busbw (NVIDIA DGX A100 user guide nccl-tests section; Azure
 * ND A100 v4 AI-benchmarking-guide results ~228-235 GB/s). */
static void test_a100_single_node(void **state) {
    (void)state;
    fabric f = fab("dgx-a100-80gb", 1);
    coll_result r = run(&f, COLL_ALLREDUCE, 8 * GiB, 8, 8, 1, COLL_AUTO);
    printf("  DGX A100 8 GPU all-reduce 8 GiB: %.1f GB/s busbw (%s/%s), published ~230\n",
           r.busbw_bytes_per_s / GB, coll_algo_name(r.algo), coll_proto_name(r.proto));
    assert_int_equal(r.algo, COLL_RING);     /* no NVLS on A100 */
    near(r.busbw_bytes_per_s / GB, 230, 0.06, "DGX A100 all-reduce busbw at 8 GiB");
    /* The same node's 40 GB variant has the same fabric. */
    fabric g = fab("dgx-a100-40gb", 1);
    near(busbw_GBps(&g, COLL_ALLREDUCE, 8 * GiB, 8, 8, 1, COLL_AUTO), 230, 0.06,
         "DGX A100 40GB all-reduce busbw at 8 GiB");
    /* NVLS cannot be asked for on A100. */
    coll_group grp = { 8, 8, 1 };
    coll_result x;
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1 * GiB, &grp, COLL_NVLS, &x), -1);
}

/* DGX H100 with NCCL_NVLS_ENABLE=0: ring all-reduce peaks at ~360-370 GB/s
 * busbw (NVIDIA's NVLS announcement quotes ~1.5x from NVLS to ~480 GB/s;
 * published DGX H100 nccl-tests ring runs 360-370). */
static void test_h100_ring_single_node(void **state) {
    (void)state;
    fabric f = fab("dgx-h100", 1);
    double ring = busbw_GBps(&f, COLL_ALLREDUCE, 8 * GiB, 8, 8, 1, COLL_RING);
    double nvls = busbw_GBps(&f, COLL_ALLREDUCE, 8 * GiB, 8, 8, 1, COLL_NVLS);
    printf("  DGX H100 all-reduce 8 GiB: ring %.1f, NVLS %.1f GB/s busbw\n", ring, nvls);
    near(ring, 365, 0.05, "DGX H100 ring all-reduce busbw at 8 GiB");
    near(nvls, 479, 0.05, "DGX H100 NVLS all-reduce busbw at 8 GiB");
}

/* Multi-node all-reduce, 8 GPUs per node, 8 NICs per node: the ring's
 * busbw is bound by the NICs. H100 + 8x NDR 400: published nccl-tests runs
 * of 2-16 nodes give ~350-370 GB/s (e.g. NVIDIA DGX SuperPOD H100 reference
 * architecture, cloud providers' H100 cluster reports). A100 + 8x HDR 200:
 * ~180-190 GB/s (DGX SuperPOD A100; NVIDIA/nccl issue #812: "8x200Gbit/s IB
 * cards and we measure 192GB/s AllReduce BusBW"). Checked at 8 GiB, where
 * nccl-tests reports its peak. On two nodes NCCL picks the tree (A100) or
 * NVLS-tree (H100), whose NICs carry S instead of the ring's 2(n-1)/n S, so
 * its busbw goes past the NICs' line rate (NVIDIA/nccl issues #946, #812;
 * nccl-tests issue #196); from four nodes on the ring wins at 8 GiB. */
static void test_multi_node_allreduce(void **state) {
    (void)state;
    static const int nodes[] = { 2, 4, 8, 16 };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        int n = nodes[i];
        fabric h = fab("dgx-h100", n), a = fab("dgx-a100-80gb", n);
        coll_result rh = run(&h, COLL_ALLREDUCE, 8 * GiB, 8 * n, 8, 1, COLL_RING);
        coll_result ra = run(&a, COLL_ALLREDUCE, 8 * GiB, 8 * n, 8, 1, COLL_RING);
        coll_result ah = run(&h, COLL_ALLREDUCE, 8 * GiB, 8 * n, 8, 1, COLL_AUTO);
        coll_result aa = run(&a, COLL_ALLREDUCE, 8 * GiB, 8 * n, 8, 1, COLL_AUTO);
        printf("  %2d nodes all-reduce 8 GiB: H100 ring %.1f, auto %.1f GB/s (%s); A100 ring %.1f, "
               "auto %.1f GB/s (%s)\n", n, rh.busbw_bytes_per_s / GB, ah.busbw_bytes_per_s / GB,
               coll_algo_name(ah.algo), ra.busbw_bytes_per_s / GB, aa.busbw_bytes_per_s / GB,
               coll_algo_name(aa.algo));
        near(rh.busbw_bytes_per_s / GB, 360, 0.05, "H100 multi-node ring all-reduce busbw (published 350-370)");
        near(ra.busbw_bytes_per_s / GB, 185, 0.05, "A100 multi-node ring all-reduce busbw (published 180-190)");
        /* The ring is bound by the NICs: never above their line rate. */
        assert_true(rh.busbw_bytes_per_s <= 8 * 50 * GB);
        assert_true(ra.busbw_bytes_per_s <= 8 * 25 * GB);
        assert_true(ah.time_s <= rh.time_s && aa.time_s <= ra.time_s);
        if (n == 2) {
            assert_int_equal(ah.algo, COLL_NVLS_TREE);
            assert_int_equal(aa.algo, COLL_TREE);
            assert_true(ah.busbw_bytes_per_s > 8 * 50 * GB);
        } else {
            assert_int_equal(ah.algo, COLL_RING);
            assert_int_equal(aa.algo, COLL_RING);
        }
    }
}

/* ---- Definitions ----------------------------------------------------------- */

/* nccl-tests PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather and
 * reduce-scatter (n-1)/n, alltoall (n-1)/n, broadcast and sendrecv 1. */
static void test_busbw_factor(void **state) {
    (void)state;
    assert_dbl(coll_busbw_factor(COLL_ALLREDUCE, 8), 1.75, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_ALLREDUCE, 2), 1.0, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_ALLREDUCE, 1), 0.0, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_ALLGATHER, 8), 0.875, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_REDUCESCATTER, 16), 15.0 / 16, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_ALLTOALL, 4), 0.75, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_BROADCAST, 8), 1.0, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_SENDRECV, 8), 1.0, 1e-12);
    assert_dbl(coll_busbw_factor(COLL_ALLREDUCE, 0), 0.0, 1e-12);

    /* The result's bandwidths follow the definitions. */
    fabric f = fab("dgx-h100", 4);
    for (int op = 0; op < COLL_OP_COUNT; op++) {
        coll_result r = run(&f, (coll_op)op, 256 * MiB, 32, 8, 1, COLL_AUTO);
        assert_dbl(r.algbw_bytes_per_s, 256 * MiB / r.time_s, 1e-6 * r.algbw_bytes_per_s);
        assert_dbl(r.busbw_bytes_per_s, r.algbw_bytes_per_s * coll_busbw_factor((coll_op)op, 32),
                            1e-6 * r.busbw_bytes_per_s);
    }
}

static void test_names(void **state) {
    (void)state;
    static const char *const ops[] = { "allreduce", "allgather", "reducescatter",
                                       "alltoall", "broadcast", "sendrecv" };
    for (int i = 0; i < COLL_OP_COUNT; i++) {
        assert_int_equal(coll_op_parse(ops[i]), i);
        assert_string_equal(coll_op_name((coll_op)i), ops[i]);
    }
    assert_int_equal(coll_op_parse("all-reduce"), -1);
    assert_int_equal(coll_op_parse(NULL), -1);
    assert_string_equal(coll_algo_name(COLL_NVLS), "nvls");
    assert_string_equal(coll_algo_name(COLL_TREE), "tree");
    assert_string_equal(coll_proto_name(COLL_LL128), "LL128");
    assert_string_equal(coll_op_name((coll_op)99), "?");
}

/* ---- Properties -------------------------------------------------------------- */

/* Time never falls as the size grows, for every op, algorithm and shape. */
/* Time never falls as the size grows for one (algorithm, protocol): sizes
 * x1.5 from 1 B to 16 GiB. Plan by plan, as NCCL's own model picks the
 * plan (docs/collectives.md, "NCCL chooses with its own model"): where it
 * keeps one past the size at which another already runs faster, its
 * switch lowers the time, so auto may fall there (test_nccl_model_choice). */
static int monotonic_sweep(const fabric *f, coll_op op, const coll_group *g, coll_algo a,
                           coll_proto proto) {
    double prev = 0;
    int checked = 0;
    for (double s = 1; s <= 16 * GiB; s *= 1.5) {
        coll_result r;
        assert_int_equal(coll_time(f, op, s, g, a, &r), 0);
        if (r.fallback || r.proto != proto) continue;   /* the protocol does not run here */
        if (r.time_s < prev * (1 - 1e-12))
            print_error("%s %s %s/%s ranks %d/%d: t(%.0f) = %g < %g\n", f->node->name,
                        coll_op_name(op), coll_algo_name(a), coll_proto_name(proto), g->ranks,
                        g->ranks_per_node, s, r.time_s, prev);
        assert_true(r.time_s >= prev * (1 - 1e-12));
        prev = r.time_s;
        checked++;
    }
    return checked;
}

static void test_monotonic(void **state) {
    (void)state;
    static const char *const nodes[] = { "dgx-a100-80gb", "dgx-h100", "mi300x-8" };
    static const int shapes[][3] = {   /* ranks, per node, concurrent */
        { 8, 8, 1 }, { 4, 4, 2 }, { 2, 2, 1 }, { 16, 8, 1 }, { 64, 8, 1 }, { 256, 8, 1 },
        { 16, 1, 8 }, { 128, 1, 8 }, { 24, 8, 1 },
    };
    int checked = 0;
    for (size_t ni = 0; ni < sizeof nodes / sizeof nodes[0]; ni++) {
        fabric f = fab(nodes[ni], 256);
        for (int mode = 0; mode < 2; mode++) {
            f.mode = mode ? NIC_OVERLAY : NIC_DIRECT;
            f.oversubscription = mode ? 2 : 1;
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                coll_group g = { shapes[si][0], shapes[si][1], shapes[si][2] };
                for (int op = 0; op < COLL_OP_COUNT; op++)
                    for (int a = 0; a < COLL_ALGO_COUNT; a++) {
                        coll_result r;
                        if (coll_time(&f, (coll_op)op, 1024, &g, (coll_algo)a, &r) != 0) {
                            assert_true(a != COLL_AUTO);  /* AUTO always has an answer */
                            continue;
                        }
                        for (int p = 0; a != COLL_AUTO && p < COLL_PROTO_COUNT; p++) {
                            f.proto_mask = 1u << p;
                            checked += monotonic_sweep(&f, (coll_op)op, &g, (coll_algo)a, (coll_proto)p);
                        }
                        f.proto_mask = 0;
                    }
            }
        }
    }
    assert_true(checked > 10000);
}

/* NCCL's choice: NVLS inside an H100 node for large sizes, LL rings for tiny
 * ones; across many nodes trees (or NVLS trees) for small and medium
 * messages, where the ring's 2(n-1) steps cost the most latency, and the ring
 * for the largest messages, where bandwidth decides. */
/* NCCL picks the protocol with its own model, then the GPU runs what it
 * picked (docs/collectives.md, "Mid sizes on A100").
 * - Choice: NVIDIA/nccl v2.18.5 src/graph/tuning.cc rates ring LL128 at 0.92
 *   of Simple whatever the architecture, so on 8x A100 it keeps LL128 up to
 *   ~24 MB (LL128 14 + 14 x 1.9 us, Simple 8.4 + 14 x 3.4 us) though the
 *   GPU runs Ampere's LL128 at 0.75: 16 MiB runs LL128, 32 MiB Simple.
 * - Chunking: all_reduce.h deals LL128 in whole 19200-byte chunks per
 *   (channel, rank) slot. At 8 MiB on 24 channels and 8 ranks that is
 *   chunks of 57600 B in 145.6 of 192 slots: the first channel carries 7
 *   (403200 B), as it does 8 of them (460800 B) at 192 x 57600 B, all slots
 *   full. The transfer times go as those bytes, not as the sizes. */
/* What NCCL runs for an all-reduce of bytes on one node of 8. */
static void expect_choice(const fabric *f, double bytes, coll_algo algo, coll_proto proto) {
    coll_result r = run(f, COLL_ALLREDUCE, bytes, 8, 8, 1, COLL_AUTO);
    assert_int_equal(r.algo, algo);
    assert_int_equal(r.proto, proto);
}

static void test_nccl_model_choice(void **state) {
    (void)state;
    fabric f = fab("dgx-a100-80gb", 1);
    expect_choice(&f, 16 * MiB, COLL_RING, COLL_LL128);
    expect_choice(&f, 32 * MiB, COLL_RING, COLL_SIMPLE);

    f.proto_mask = 1u << COLL_LL128;
    coll_result a = run(&f, COLL_ALLREDUCE, 8 * MiB, 8, 8, 1, COLL_RING);
    coll_result b = run(&f, COLL_ALLREDUCE, 192 * 57600.0, 8, 8, 1, COLL_RING);
    assert_int_equal(a.proto, COLL_LL128);
    assert_int_equal(b.proto, COLL_LL128);
    assert_dbl((a.time_s - a.lat_s) / (b.time_s - b.lat_s), 403200.0 / 460800.0, 1e-9);
    /* All slots full: the transfer is the balanced one. */
    assert_dbl(b.time_s - b.lat_s, b.xfer_s / f.node->eff_ll128, 1e-15);
}

static void test_algorithm_choice(void **state) {
    (void)state;
    fabric h1 = fab("dgx-h100", 1);
    expect_choice(&h1, 1 * GiB, COLL_NVLS, COLL_SIMPLE);
    coll_result r = run(&h1, COLL_ALLREDUCE, 1024, 8, 8, 1, COLL_AUTO);
    assert_int_equal(r.proto, COLL_LL);

    for (int k = 0; k < 2; k++) {
        fabric f = fab(k ? "dgx-h100" : "dgx-a100-80gb", 32);
        coll_result small = run(&f, COLL_ALLREDUCE, 64 * KiB, 256, 8, 1, COLL_AUTO);
        coll_result large = run(&f, COLL_ALLREDUCE, 8 * GiB, 256, 8, 1, COLL_AUTO);
        coll_result ring = run(&f, COLL_ALLREDUCE, 64 * KiB, 256, 8, 1, COLL_RING);
        coll_result tree = run(&f, COLL_ALLREDUCE, 8 * GiB, 256, 8, 1, COLL_TREE);
        printf("  %s x32: 64 KiB -> %s/%s %.0f us (ring %.0f us); 8 GiB -> %s %.1f GB/s (tree %.1f)\n",
               f.node->name, coll_algo_name(small.algo), coll_proto_name(small.proto),
               small.time_s * 1e6, ring.time_s * 1e6, coll_algo_name(large.algo),
               large.busbw_bytes_per_s / GB, tree.busbw_bytes_per_s / GB);
        assert_true(small.algo == COLL_TREE || small.algo == COLL_NVLS);
        assert_true(ring.time_s > 2 * small.time_s);
        assert_int_equal(large.algo, COLL_RING);
        assert_true(tree.time_s > large.time_s);
    }
    /* Tree is all-reduce only; NVLS all-gather only inside one node. */
    fabric h4 = fab("dgx-h100", 4);
    coll_group g = { 32, 8, 1 }, g1 = { 8, 8, 1 };
    coll_result x;
    assert_int_equal(coll_time(&h4, COLL_ALLGATHER, 1 * MiB, &g, COLL_TREE, &x), -1);
    assert_int_equal(coll_time(&h4, COLL_ALLGATHER, 1 * MiB, &g, COLL_NVLS, &x), -1);
    assert_int_equal(coll_time(&h4, COLL_ALLGATHER, 1 * MiB, &g1, COLL_NVLS, &x), 0);
    assert_int_equal(coll_time(&h4, COLL_ALLTOALL, 1 * MiB, &g, COLL_NVLS, &x), -1);
}

/* Forcing as NCCL_ALGO/NCCL_PROTO do, the offers by op and topology, and
 * the fallback (docs/collectives.md). */
static void test_forcing(void **state) {
    (void)state;
    unsigned m = 99;
    assert_int_equal(coll_algo_mask_parse("auto", &m), 0);
    assert_int_equal(m, 0);
    assert_int_equal(coll_algo_mask_parse("collnet", &m), 0);
    assert_int_equal(m, 1u << COLL_COLLNET_DIRECT | 1u << COLL_COLLNET_CHAIN);
    assert_int_equal(coll_algo_mask_parse("nvls-tree", &m), 0);
    assert_int_equal(m, 1u << COLL_NVLS_TREE);
    assert_int_equal(coll_algo_mask_parse("Ring", &m), -1);
    assert_int_equal(coll_proto_mask_parse("ll128", &m), 0);
    assert_int_equal(m, 1u << COLL_LL128);
    assert_int_equal(coll_proto_mask_parse("LL", &m), -1);

    fabric h = fab("dgx-h100", 4), a = fab("dgx-a100-80gb", 4);
    coll_group g32 = { 32, 8, 1 }, g4 = { 4, 1, 1 }, g8 = { 8, 8, 1 };
    char why[160];
    assert_false(coll_offered(&a, COLL_ALLREDUCE, &g32, COLL_NVLS_TREE, why, sizeof why));
    assert_non_null(strstr(why, "NVLink SHARP"));
    assert_true(coll_offered(&h, COLL_ALLREDUCE, &g32, COLL_NVLS_TREE, why, sizeof why));
    assert_false(coll_offered(&h, COLL_ALLREDUCE, &g8, COLL_NVLS_TREE, why, sizeof why));
    assert_false(coll_offered(&h, COLL_ALLREDUCE, &g32, COLL_NVLS, why, sizeof why));   /* no SHARP */
    assert_false(coll_offered(&h, COLL_ALLREDUCE, &g32, COLL_COLLNET_DIRECT, why, sizeof why));
    assert_non_null(strstr(why, "sharp"));
    assert_true(coll_offered(&h, COLL_ALLGATHER, &g4, COLL_PAT, why, sizeof why));
    assert_false(coll_offered(&h, COLL_ALLGATHER, &g32, COLL_PAT, why, sizeof why));
    assert_false(coll_offered(&h, COLL_ALLREDUCE, &g4, COLL_PAT, why, sizeof why));

    /* SHARP switches: CollNet and NVLS across nodes become offers, and the
     * switches' reduction halves the NICs' bytes against NVLS-tree. */
    fabric hs = h;
    hs.sharp = 1;
    coll_result nv = run(&hs, COLL_ALLREDUCE, 8 * GiB, 32, 8, 1, COLL_NVLS);
    coll_result nt = run(&hs, COLL_ALLREDUCE, 8 * GiB, 32, 8, 1, COLL_NVLS_TREE);
    run(&hs, COLL_ALLREDUCE, 8 * GiB, 32, 8, 1, COLL_COLLNET_CHAIN);
    assert_true(nv.time_s < nt.time_s);

    /* Forcing through the fabric; a forced algorithm that cannot serve
     * the op falls back to NCCL's choice, named. */
    fabric f = h;
    assert_int_equal(coll_algo_mask_parse("ring", &f.algo_mask), 0);
    coll_result r = run(&f, COLL_ALLREDUCE, 1 * GiB, 32, 8, 1, COLL_AUTO);
    assert_int_equal(r.algo, COLL_RING);
    assert_int_equal(r.fallback, 0);
    assert_int_equal(coll_algo_mask_parse("tree", &f.algo_mask), 0);
    r = run(&f, COLL_ALLGATHER, 1 * GiB, 32, 8, 1, COLL_AUTO);
    assert_int_equal(r.algo, COLL_RING);
    assert_int_equal(r.fallback, 1);
    assert_int_equal(coll_proto_mask_parse("ll", &f.proto_mask), 0);
    f.algo_mask = 0;
    r = run(&f, COLL_ALLREDUCE, 1 * GiB, 8, 8, 1, COLL_AUTO);
    assert_int_equal(r.proto, COLL_LL);
    assert_int_equal(r.fallback, 0);
    /* PAT wins small all-gathers at one GPU per node on many nodes. */
    fabric many = fab("dgx-h100", 64);
    r = run(&many, COLL_ALLGATHER, 64 * KiB, 64, 1, 8, COLL_AUTO);
    printf("  64 nodes x 1 GPU all-gather 64 KiB: %s/%s %.0f us\n", coll_algo_name(r.algo),
           coll_proto_name(r.proto), r.time_s * 1e6);

    /* LL128 only over NVLink: a node type without it has none. */
    node_spec pcie = *catalog_node(cat, "dgx-h100");
    pcie.nvlink_bw_bytes_per_s = 0;
    fabric p = h;
    p.node = &pcie;
    for (double sz = 4 * KiB; sz <= 1 * GiB; sz *= 4)
        assert_int_not_equal(run(&p, COLL_ALLREDUCE, sz, 8, 8, 1, COLL_AUTO).proto, COLL_LL128);
}

/* Field report: direct multi-NIC access halves latency and gives 7x the
 * bandwidth of an overlay network. Checked on two-node collectives (16
 * H100s) and on p2p messages between nodes. */
static void test_overlay(void **state) {
    (void)state;
    fabric d = fab("dgx-h100", 2), o = d;
    o.mode = NIC_OVERLAY;
    double lat_ratio = run(&o, COLL_ALLREDUCE, 8, 16, 8, 1, COLL_AUTO).time_s /
                       run(&d, COLL_ALLREDUCE, 8, 16, 8, 1, COLL_AUTO).time_s;
    fabric d4 = fab("dgx-h100", 4), o4 = d4;
    o4.mode = NIC_OVERLAY;
    double lat4_ratio = run(&o4, COLL_ALLREDUCE, 8, 32, 8, 1, COLL_AUTO).time_s /
                        run(&d4, COLL_ALLREDUCE, 8, 32, 8, 1, COLL_AUTO).time_s;
    /* The network's bandwidth: the ring, which the NICs bound (on two
     * nodes the direct fabric's NVLS-tree is bound by NVLink instead). */
    double bw_ratio = run(&o, COLL_ALLREDUCE, 8 * GiB, 16, 8, 1, COLL_RING).busbw_bytes_per_s /
                      run(&d, COLL_ALLREDUCE, 8 * GiB, 16, 8, 1, COLL_RING).busbw_bytes_per_s;
    double dp_bw_ratio = run(&o, COLL_ALLREDUCE, 1 * GiB, 2, 1, 8, COLL_AUTO).busbw_bytes_per_s /
                         run(&d, COLL_ALLREDUCE, 1 * GiB, 2, 1, 8, COLL_AUTO).busbw_bytes_per_s;
    double p2p_lat = p2p_time_s(&o, 8, 0, 1) / p2p_time_s(&d, 8, 0, 1);
    double p2p_bw = p2p_time_s(&d, 1 * GiB, 0, 8) / p2p_time_s(&o, 1 * GiB, 0, 8);
    printf("  overlay / direct, 2 nodes: all-reduce latency x%.2f (4 nodes x%.2f), busbw x%.3f "
           "(1/%.1f), DP busbw x%.3f; p2p latency x%.2f, bandwidth x%.3f\n",
           lat_ratio, lat4_ratio, bw_ratio, 1 / bw_ratio, dp_bw_ratio, p2p_lat, p2p_bw);
    /* "About 2x": 30% either way. */
    near(lat_ratio, 2.0, 0.30, "overlay/direct small all-reduce latency, 2 nodes");
    near(lat4_ratio, 2.0, 0.30, "overlay/direct small all-reduce latency, 4 nodes");
    near(p2p_lat, 2.0, 0.30, "overlay/direct p2p latency");
    near(bw_ratio, 1.0 / 7, 0.15, "overlay/direct all-reduce bandwidth");
    near(dp_bw_ratio, 1.0 / 7, 0.15, "overlay/direct DP all-reduce bandwidth");
    near(p2p_bw, 1.0 / 7, 0.15, "overlay/direct p2p bandwidth");
    /* Inside one node the overlay changes nothing. */
    fabric o1 = fab("dgx-h100", 1), d1 = o1;
    o1.mode = NIC_OVERLAY;
    assert_dbl(run(&o1, COLL_ALLREDUCE, 1 * MiB, 8, 8, 1, COLL_AUTO).time_s,
                        run(&d1, COLL_ALLREDUCE, 1 * MiB, 8, 8, 1, COLL_AUTO).time_s, 0);
    assert_dbl(p2p_time_s(&o1, 1 * MiB, 1, 1), p2p_time_s(&d1, 1 * MiB, 1, 1), 0);
}

/* A 2:1 oversubscribed fat-tree halves the bandwidth of groups that span
 * leaves (busy-cluster view); groups inside one leaf, single-switch
 * fabrics and single-node groups are untouched. */
static void test_oversubscription(void **state) {
    (void)state;
    fabric f1 = fab("dgx-h100", 128), f2 = f1;
    f2.oversubscription = 2;
    assert_int_equal(f1.nodes_per_leaf, 32);
    double across1 = busbw_GBps(&f1, COLL_ALLREDUCE, 4 * GiB, 512, 8, 1, COLL_AUTO);
    double across2 = busbw_GBps(&f2, COLL_ALLREDUCE, 4 * GiB, 512, 8, 1, COLL_AUTO);
    double inside1 = busbw_GBps(&f1, COLL_ALLREDUCE, 4 * GiB, 256, 8, 1, COLL_AUTO);
    double inside2 = busbw_GBps(&f2, COLL_ALLREDUCE, 4 * GiB, 256, 8, 1, COLL_AUTO);
    printf("  64 nodes (2 leaves): %.1f -> %.1f GB/s at 2:1; 32 nodes (1 leaf): %.1f -> %.1f\n",
           across1, across2, inside1, inside2);
    near(across2 / across1, 0.5, 0.08, "2:1 oversubscription across leaves");
    assert_dbl(inside1, inside2, 1e-9);
    /* DP groups (one GPU per node) across leaves too. */
    double dp1 = busbw_GBps(&f1, COLL_REDUCESCATTER, 4 * GiB, 128, 1, 8, COLL_AUTO);
    double dp2 = busbw_GBps(&f2, COLL_REDUCESCATTER, 4 * GiB, 128, 1, 8, COLL_AUTO);
    near(dp2 / dp1, 0.5, 0.08, "2:1 oversubscription, DP reduce-scatter");
    f2.topology = TOPO_SINGLE_SWITCH;
    assert_dbl(busbw_GBps(&f2, COLL_ALLREDUCE, 4 * GiB, 512, 8, 1, COLL_AUTO), across1, 1e-9);
}

/* Several NICs per node, shared by the groups that leave the node at once.
 * DP all-reduce with one GPU per node: each of 8 concurrent groups gets one
 * NDR NIC (~46 GB/s busbw); 16 groups on 8 NICs get half each. On a node with
 * 4 NICs for 8 GPUs, 8 groups get half a NIC each. */
static void test_nic_sharing(void **state) {
    (void)state;
    fabric f = fab("dgx-h100", 16);
    double one = busbw_GBps(&f, COLL_ALLREDUCE, 4 * GiB, 16, 1, 1, COLL_AUTO);
    double eight = busbw_GBps(&f, COLL_ALLREDUCE, 4 * GiB, 16, 1, 8, COLL_AUTO);
    double sixteen = busbw_GBps(&f, COLL_ALLREDUCE, 4 * GiB, 16, 1, 16, COLL_AUTO);
    printf("  DP all-reduce, 1 GPU/node: %.1f GB/s alone, %.1f with 8 groups, %.1f with 16 on 8 NICs\n",
           one, eight, sixteen);
    near(one, 50 * 0.92, 0.05, "one GPU per node over its NDR NIC");
    near(eight / one, 1.0, 0.01, "8 groups on 8 NICs");
    near(sixteen / eight, 0.5, 0.02, "16 groups on 8 NICs");

    node_spec half = *f.node;
    snprintf(half.name, sizeof half.name, "dgx-h100-4nic");
    half.nics = 4;
    fabric h = f;
    h.node = &half;
    double h4 = busbw_GBps(&h, COLL_ALLREDUCE, 4 * GiB, 16, 1, 4, COLL_AUTO);
    double h8 = busbw_GBps(&h, COLL_ALLREDUCE, 4 * GiB, 16, 1, 8, COLL_AUTO);
    near(h8 / h4, 0.5, 0.02, "8 groups on 4 NICs");
    /* A full-node group over 4 NICs: half the NIC bound of 8. */
    double full8 = busbw_GBps(&f, COLL_ALLREDUCE, 8 * GiB, 128, 8, 1, COLL_RING);
    double full4 = busbw_GBps(&h, COLL_ALLREDUCE, 8 * GiB, 128, 8, 1, COLL_RING);
    near(full4, 4 * 50 * 0.92, 0.05, "8 GPUs over 4 NDR NICs");
    assert_true(full4 < 0.6 * full8);
}

/* Pipeline activations: NVLink inside a node, the NICs between nodes. */
static void test_p2p(void **state) {
    (void)state;
    fabric f = fab("dgx-h100", 2);
    for (double s = 1; s <= 4 * GiB; s *= 4) {
        double intra = p2p_time_s(&f, s, 1, 1), inter = p2p_time_s(&f, s, 0, 1);
        assert_true(intra > 0 && inter > intra);
        assert_true(p2p_time_s(&f, s * 4, 1, 1) >= intra);
    }
    double big = 1 * GiB;
    near(big / p2p_time_s(&f, big, 1, 1) / GB, 450 * 0.80, 0.02, "NVLink p2p bandwidth");
    near(big / p2p_time_s(&f, big, 0, 8) / GB, 50 * 0.92, 0.02, "NDR p2p bandwidth, 8 at once");
    near(p2p_time_s(&f, big, 0, 16) / p2p_time_s(&f, big, 0, 8), 2, 0.02, "16 transfers on 8 NICs");
    double small_intra = p2p_time_s(&f, 8, 1, 1), small_inter = p2p_time_s(&f, 8, 0, 1);
    printf("  p2p 8 B: %.1f us NVLink, %.1f us IB; 1 GiB: %.2f ms NVLink, %.2f ms IB\n",
           small_intra * 1e6, small_inter * 1e6, p2p_time_s(&f, big, 1, 1) * 1e3,
           p2p_time_s(&f, big, 0, 1) * 1e3);
    assert_true(small_intra > 5e-6 && small_intra < 30e-6);
    assert_true(small_inter > small_intra && small_inter < 40e-6);
    /* sendrecv through coll_time agrees with the p2p figure at size. */
    coll_result r = run(&f, COLL_SENDRECV, big, 16, 8, 1, COLL_AUTO);
    near(r.time_s, p2p_time_s(&f, big, 0, 1), 0.02, "sendrecv across nodes vs p2p");

    assert_true(p2p_time_s(NULL, 1, 1, 1) < 0);
    assert_true(p2p_time_s(&f, -1, 1, 1) < 0);
    assert_true(p2p_time_s(&f, NAN, 0, 1) < 0);
    assert_true(p2p_time_s(&f, 1, 0, 0) < 0);
}

/* Invalid input: -1 and the result untouched. */
static void test_invalid(void **state) {
    (void)state;
    fabric f = fab("dgx-h100", 4);
    coll_result r, keep;
    memset(&keep, 0x5a, sizeof keep);
    static const int bad_groups[][3] = {
        { 0, 1, 1 }, { 8, 0, 1 }, { 8, 9, 1 }, { 16, 16, 1 }, { 4, 8, 1 }, { 8, 8, 0 },
        { -8, 8, 1 },
    };
    for (size_t i = 0; i < sizeof bad_groups / sizeof bad_groups[0]; i++) {
        coll_group g = { bad_groups[i][0], bad_groups[i][1], bad_groups[i][2] };
        r = keep;
        assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1024, &g, COLL_AUTO, &r), -1);
        assert_memory_equal(&r, &keep, sizeof r);
    }
    coll_group g = { 8, 8, 1 };
    r = keep;
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, -1, &g, COLL_AUTO, &r), -1);
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, NAN, &g, COLL_AUTO, &r), -1);
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, INFINITY, &g, COLL_AUTO, &r), -1);
    assert_int_equal(coll_time(&f, (coll_op)COLL_OP_COUNT, 1, &g, COLL_AUTO, &r), -1);
    assert_int_equal(coll_time(&f, (coll_op)-1, 1, &g, COLL_AUTO, &r), -1);
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1, &g, (coll_algo)COLL_ALGO_COUNT, &r), -1);
    assert_int_equal(coll_time(NULL, COLL_ALLREDUCE, 1, &g, COLL_AUTO, &r), -1);
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1, NULL, COLL_AUTO, &r), -1);
    assert_memory_equal(&r, &keep, sizeof r);
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1, &g, COLL_AUTO, NULL), -1);
    fabric bad = f;
    bad.nic = NULL;
    assert_int_equal(coll_time(&bad, COLL_ALLREDUCE, 1, &g, COLL_AUTO, &r), -1);
    bad = f;
    bad.oversubscription = 0.5;
    assert_int_equal(coll_time(&bad, COLL_ALLREDUCE, 1, &g, COLL_AUTO, &r), -1);
    assert_memory_equal(&r, &keep, sizeof r);

    /* fabric_init: unknown GPU or NIC, or no nodes, leaves f unchanged. */
    node_spec n = *catalog_node(cat, "dgx-h100");
    snprintf(n.nic, sizeof n.nic, "no-such-nic");
    fabric g2;
    memset(&g2, 0x5a, sizeof g2);
    fabric k2 = g2;
    assert_int_equal(fabric_init(&g2, cat, &n, 1), -1);
    assert_int_equal(fabric_init(&g2, cat, catalog_node(cat, "dgx-h100"), 0), -1);
    assert_int_equal(fabric_init(&g2, cat, NULL, 1), -1);
    assert_memory_equal(&g2, &k2, sizeof g2);

    /* One rank: nothing moves. Zero bytes: latency only. */
    coll_group one = { 1, 1, 1 };
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 1 * MiB, &one, COLL_AUTO, &r), 0);
    assert_dbl(r.time_s, 0, 0);
    assert_int_equal(coll_time(&f, COLL_ALLREDUCE, 0, &g, COLL_AUTO, &r), 0);
    assert_true(r.time_s > 0 && r.busbw_bytes_per_s == 0);
}

/* The training model calls coll_time in sweeps: it should stay well under
 * a microsecond per call. Measured and printed, never asserted: a busy
 * machine or valgrind must not fail a unit test (make bench judges speed). */
static void test_speed(void **state) {
    (void)state;
    fabric f = fab("dgx-h100", 1024);
    coll_group g = { 1024, 1, 8 };
    coll_result r;
    volatile double sink = 0;
    int n = 200000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        g.ranks = 2 + (i & 1023);
        coll_time(&f, (coll_op)(i % COLL_OP_COUNT), 1024.0 * (1 + (i & 0xfffff)), &g, COLL_AUTO, &r);
        sink += r.time_s;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double per = ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec)) / n;
    printf("  coll_time: %.3f us per call\n", per * 1e6);
    assert_true(sink > 0);
    assert_true(isfinite(per) && per >= 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_matches_table),
        cmocka_unit_test(test_h100_curve),
        cmocka_unit_test(test_validation_csv),
        cmocka_unit_test(test_a100_single_node),
        cmocka_unit_test(test_h100_ring_single_node),
        cmocka_unit_test(test_multi_node_allreduce),
        cmocka_unit_test(test_busbw_factor),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_monotonic),
        cmocka_unit_test(test_algorithm_choice),
        cmocka_unit_test(test_nccl_model_choice),
        cmocka_unit_test(test_forcing),
        cmocka_unit_test(test_overlay),
        cmocka_unit_test(test_oversubscription),
        cmocka_unit_test(test_nic_sharing),
        cmocka_unit_test(test_p2p),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
