/*
 * test_scenario: the scenario loader (scenarios/load.c and its section
 * loaders) on good input; tests/test_scenario_bad.c holds the bad.
 *
 * Every .xml in scenarios/ loads, and figures read from them and from
 * small inline scenarios are the written values converted to SI units by
 * the definitions in CONTRACT.md (y = 365 d, KB = 1e3 B, KiB = 2^10 B,
 * b = B/8, rates per second, k M T = 1e3 1e6 1e12). Decimal units must
 * come out as the double nearest the written figure (exact compare); units
 * that multiply (h, min, y, KiB, bits) are allowed one rounding (1e-15
 * relative). Training length: steps = ceil(tokens / (global_batch * seq_len)).
 * Loading stays linear in the file (many elements).
 *
 * Paths are relative: run from the project root (make test does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/sysmacros.h>

#include "scenarios/profile.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"


#include "tests/scenariofix.h"

/* What *out holds before a load that must set it to NULL. */
static scenario sentinel;

/* ---- many elements -------------------------------------------------------- */

/* A scenario of n elements made by line(i) ("<nodes .../>"), wrapped in
 * head and tail, each element on its own line starting at line 4. */
static char *many(int n, const char *head, const char *tail, int (*line)(char *, size_t, int), size_t *len) {
    size_t cap = strlen(head) + strlen(tail) + (size_t)n * 96 + 1, k = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    k += (size_t)snprintf(t, cap, "%s", head);
    for (int i = 0; i < n; i++) k += (size_t)line(t + k, cap - k, i);
    k += (size_t)snprintf(t + k, cap - k, "%s", tail);
    *len = k;
    return t;
}
static int node_line(char *b, size_t n, int i) { return snprintf(b, n, "    <nodes type=\"dgx-h100\" count=\"%d\"/>\n", 1 + i % 3); }
static int queue_line(char *b, size_t n, int i) { return snprintf(b, n, "    <queue name=\"q%d\" quota-gpus=\"8\"/>\n", i); }
static int odd_node_line(char *b, size_t n, int i) {
    return snprintf(b, n, "    <nodes type=\"dgx-h100\" count=\"1\"%s/>\n", i == 899 ? " colour=\"red\"" : "");
}
static int dup_queue_line(char *b, size_t n, int i) { return snprintf(b, n, "    <queue name=\"q%d\"/>\n", i == 99999 ? 7 : i); }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Loading is linear in the file: 60,000 <nodes> (21 s before) and 100,000
 * queues (92 s before: line_of scanned the text from its start for every
 * element, and each name was compared with every earlier one). The test
 * checks the result and prints the time; tests/bench_load.c checks how the
 * time grows (no test asserts a time). */
static void test_many_elements(void **state) {
    (void)state;
    char err[1024];
    size_t len;
    scenario *s = NULL;
    char *t = many(60000, "<?xml version=\"1.0\"?>\n<scenario name=\"big\">\n  <cluster>\n", "  </cluster>\n</scenario>\n",
                   node_line, &len);
    double t0 = now_s();
    int rc = scenario_load_memory(t, len, "nodes.xml", &s, err, sizeof err);
    double t1 = now_s();
    free(t);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->n_nodes, 60000);
    assert_int_equal(s->nodes[0].line, 4);
    assert_int_equal(s->nodes[59999].line, 60003);
    assert_int_equal(scenario_gpus(s), 8 * (20000 * (1 + 2 + 3)));
    scenario_free(s);
    print_message("60,000 <nodes>: loaded in %.3f s\n", t1 - t0);

    static const char head[] = "<?xml version=\"1.0\"?>\n<scenario name=\"q\">\n  <scheduler>\n";
    static const char tail[] = "  </scheduler>\n  <cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>\n"
                               "  <workload><jobs name=\"j\" count=\"1\" gpus=\"1\" duration=\"1h\" rate=\"1/h\" queue=\"q99999\"/></workload>\n"
                               "</scenario>\n";
    t = many(100000, head, tail, queue_line, &len);
    t0 = now_s();
    rc = scenario_load_memory(t, len, "queues.xml", &s, err, sizeof err);
    t1 = now_s();
    free(t);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->n_queues, 100000);
    assert_int_equal(s->queues[99999].line, 100003);
    assert_string_equal(s->jobs[0].queue, "q99999");
    scenario_free(s);
    print_message("100,000 <queue>: loaded in %.3f s\n", t1 - t0);

    /* the last of 100,000 repeats the eighth: found, with both lines */
    t = many(100000, head, "  </scheduler>\n</scenario>\n", dup_queue_line, &len);
    s = &sentinel;
    assert_int_equal(scenario_load_memory(t, len, "dup.xml", &s, err, sizeof err), -1);
    free(t);
    assert_null(s);
    check_error(err, "dup.xml:100003: ", "<queue name=\"q7\">: queue name already used on line 11");

    /* the grammar sees long runs in batches: a mistake late in one is found */
    t = many(1000, "<?xml version=\"1.0\"?>\n<scenario name=\"big\">\n  <cluster>\n", "  </cluster>\n</scenario>\n",
             odd_node_line, &len);
    s = &sentinel;
    assert_int_equal(scenario_load_memory(t, len, "odd.xml", &s, err, sizeof err), -1);
    free(t);
    assert_null(s);
    check_error(err, "odd.xml:903: ", "<nodes");
}


static void test_free_null(void **state) {
    (void)state;
    scenario_free(NULL);
}

/* ---- the shipped scenarios ---------------------------------------------- */

static void test_examples_load(void **state) {
    (void)state;
    glob_t g;
    assert_int_equal(glob("scenarios/*.xml", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 1);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        scenario *s = NULL;
        char err[2048] = "";
        int rc = scenario_load(g.gl_pathv[i], &s, err, sizeof err);
        if (rc != 0) print_error("%s: %s\n", g.gl_pathv[i], err);
        assert_int_equal(rc, 0);
        assert_non_null(s);
        assert_string_equal(s->file, g.gl_pathv[i]);
        assert_true(s->name[0] != 0);
        assert_true(s->n_nodes >= 1);
        assert_true(scenario_gpus(s) >= 1);
        assert_non_null(s->xml_text);
        assert_true(s->xml_len > 0);
        for (int k = 0; k < s->n_training; k++) {
            const sc_training *t = &s->training[k];
            const train_plan *p = &t->plan;
            assert_int_equal(t->gpus, p->tp * p->pp * p->dp * p->cp);
            assert_true(t->steps >= 1);
        }
        scenario_free(s);
    }
    globfree(&g);
}

/* scenarios/default.xml: 128 DGX H100 nodes, a 70B job on 768 GPUs
 * (tp 8, pp 4, dp 24), 1T tokens of 1152 x 8192-token batches, checkpoints
 * every 2h, and 200 research jobs arriving at 12/h for 3h each. */
static void test_default_values(void **state) {
    (void)state;
    scenario *s = NULL;
    char err[2048] = "";
    int rc = scenario_load("scenarios/default.xml", &s, err, sizeof err);
    if (rc != 0) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_string_equal(s->name, "default");
    assert_int_equal(s->seed, 1);
    assert_int_equal(s->n_nodes, 1);
    assert_string_equal(s->nodes[0].type, "dgx-h100");
    assert_int_equal(s->nodes[0].count, 128);
    assert_int_equal(s->nodes[0].line, 14);
    assert_int_equal(scenario_node_count(s), 128);
    assert_int_equal(scenario_gpus(s), 1024);
    assert_string_equal(scenario_node_spec(s, 0)->name, "dgx-h100");
    assert_null(scenario_node_spec(s, 1));
    assert_int_equal(s->network.topology, TOPO_FAT_TREE);
    assert_int_equal(s->network.nic_mode, NIC_DIRECT);
    assert_true(s->network.oversubscription == 1);
    assert_int_equal(s->n_storage, 1);
    assert_string_equal(s->storage[0].name, "ckpt");
    assert_string_equal(s->storage[0].kind, "parallel-fs");
    assert_true(s->storage[0].bw_bytes_per_s == 400e9);

    assert_int_equal(s->n_training, 1);
    const sc_training *t = &s->training[0];
    assert_string_equal(t->name, "pretrain-70b");
    assert_int_equal(t->plan.tp, 8);
    assert_int_equal(t->plan.pp, 4);
    assert_int_equal(t->plan.dp, 24);
    assert_int_equal(t->plan.cp, 1);
    assert_int_equal(t->gpus, 768);
    assert_int_equal(t->plan.global_batch, 1152);
    assert_int_equal(t->plan.micro_batch, 1);
    assert_int_equal(t->plan.seq_len, 8192);
    assert_int_equal(t->plan.sharding, SHARD_ZERO1);
    assert_int_equal(t->plan.recompute, RECOMPUTE_SELECTIVE);
    assert_int_equal(t->plan.precision, PREC_BF16);
    assert_string_equal(t->preset, "llama3-70b");
    assert_int_equal(t->model.layers, 80);
    assert_int_equal(t->model.hidden, 8192);
    assert_string_equal(t->storage, "ckpt");
    assert_string_equal(t->node_type, "dgx-h100");
    assert_true(t->tokens == 1e12);
    assert_int_equal(t->steps, (int64_t)ceil(1e12 / (1152.0 * 8192.0)));   /* 105,964 */
    assert_int_equal(t->steps, 105964);
    assert_true(t->checkpoint.present);
    assert_false(t->checkpoint.interval_auto);
    assert_true(t->checkpoint.interval_s == 7200);
    assert_string_equal(t->checkpoint.mode, "async");

    assert_int_equal(s->n_jobs, 1);
    const sc_jobs *j = &s->jobs[0];
    assert_string_equal(j->name, "research");
    assert_int_equal(j->count, 200);
    assert_int_equal(j->gpus, 8);
    assert_close(j->rate_per_s, 12.0 / 3600, 1e-15, "rate 12/h");
    assert_true(j->duration_s == 3 * 3600);
    assert_string_equal(j->duration_distribution, "exponential");
    scenario_free(s);
}

/* The Llama 3 405B plan of the paper: 16,384 GPUs = 8 x 16 x 128 x 1,
 * 15.6T tokens in batches of 2048 x 8192 tokens. */
static void test_llama3_405b_values(void **state) {
    (void)state;
    scenario *s = NULL;
    char err[2048] = "";
    int rc = scenario_load("scenarios/llama3-405b-16k.xml", &s, err, sizeof err);
    if (rc != 0) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    const sc_training *t = &s->training[0];
    assert_int_equal(t->plan.tp, 8);
    assert_int_equal(t->plan.pp, 16);
    assert_int_equal(t->plan.dp, 128);
    assert_int_equal(t->plan.cp, 1);
    assert_int_equal(t->gpus, 16384);
    assert_int_equal(t->plan.sharding, SHARD_FSDP);
    assert_true(t->checkpoint.interval_auto);
    assert_true(t->tokens == 15.6e12);
    assert_int_equal(t->steps, (int64_t)ceil(15.6e12 / (2048.0 * 8192.0)));  /* 929,833 */
    assert_true(s->duration_s == 54 * 86400.0);
    assert_int_equal(s->spares_warm, 48);
    assert_int_equal(s->n_failures, 1);
    assert_string_equal(s->failures[0].profile, "llama3");
    assert_string_equal(s->failures[0].distribution, "exponential");
    scenario_free(s);
}

/* ---- derived plan sizes --------------------------------------------------- */

/* gpus left out: tp*pp*dp*cp. */
static void test_gpus_default(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload><training name=\"x\" tp=\"2\" pp=\"2\" dp=\"3\" cp=\"2\" steps=\"10\">"
        "<model preset=\"llama3-8b\"/></training></workload>");
    assert_int_equal(s->training[0].gpus, 24);
    assert_int_equal(s->training[0].plan.dp, 3);
    assert_int_equal(s->training[0].steps, 10);
    scenario_free(s);
}

/* dp left out: gpus / (tp*pp*cp). */
static void test_dp_from_gpus(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload><training name=\"x\" gpus=\"32\" tp=\"8\" pp=\"2\" steps=\"10\">"
        "<model preset=\"llama3-8b\"/></training></workload>");
    assert_int_equal(s->training[0].gpus, 32);
    assert_int_equal(s->training[0].plan.dp, 2);
    assert_int_equal(s->training[0].plan.cp, 1);
    scenario_free(s);
}

/* stack= copies the catalog profile onto the plan; "auto" and no stack
 * leave it to the step model; fp8-recipe= sets the recipe of an fp8 job. */
static void test_training_stack(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload><training name=\"x\" gpus=\"16\" tp=\"8\" steps=\"10\" stack=\"megatron-core-2024\""
        " precision=\"fp8\" fp8-recipe=\"mxfp8\"><model preset=\"llama3-8b\"/></training>"
        "<training name=\"y\" gpus=\"16\" tp=\"8\" steps=\"10\" stack=\"auto\">"
        "<model preset=\"llama3-8b\"/></training></workload>");
    assert_int_equal(s->training[0].plan.stack_given, 1);
    assert_string_equal(s->training[0].plan.stack.name, "megatron-core-2024");
    assert_true(s->training[0].plan.stack.tp_overlap > 0);
    assert_int_equal(s->training[0].plan.fp8_recipe, FP8_MXFP8);
    assert_int_equal(s->training[1].plan.stack_given, 0);
    scenario_free(s);
}

/* tokens -> steps rounds up: 1M tokens in 8 x 4096 = 32,768-token steps is
 * 30.52 steps, so 31; an exact multiple does not round. */
static void test_tokens_to_steps(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload>"
        "<training name=\"a\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"1M\">"
        "<model preset=\"llama3-8b\"/></training>"
        "<training name=\"b\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"327680\">"
        "<model preset=\"llama3-8b\"/></training>"
        "</workload>");
    assert_int_equal(s->training[0].steps, (int64_t)ceil(1e6 / (8.0 * 4096)));
    assert_int_equal(s->training[0].steps, 31);
    assert_int_equal(s->training[1].steps, 10);
    scenario_free(s);
}

/* ---- every unit in scenario attributes ------------------------------------ */

static double duration_of(const char *value) {
    char attrs[128];
    snprintf(attrs, sizeof attrs, "duration=\"%s\"", value);
    scenario *s = load_parts(attrs, "", "");
    double v = s->duration_s;
    scenario_free(s);
    return v;
}

static void test_duration_units(void **state) {
    (void)state;
    assert_close(duration_of("1.2y"), 1.2 * 365 * 86400, 1e-15, "1.2y");
    assert_close(duration_of("2w"), 2 * 7 * 86400.0, 1e-15, "2w");
    assert_close(duration_of("54d"), 54 * 86400.0, 1e-15, "54d");
    assert_close(duration_of("3h"), 3 * 3600.0, 1e-15, "3h");
    assert_close(duration_of("90min"), 90 * 60.0, 1e-15, "90min");
    assert_true(duration_of("90s") == 90);
    assert_true(duration_of("250ms") == 0.25);
    assert_true(duration_of("10us") == 10e-6);
    assert_true(duration_of("5ns") == 5e-9);
    assert_true(duration_of("3600") == 3600);            /* plain number = seconds */
    assert_true(duration_of(" 2.5e3 s ") == 2500);       /* blanks around, exponent */
}

static const sc_storage *storage_of(scenario **sp, const char *attrs) {
    char extra[256];
    snprintf(extra, sizeof extra, "<storage name=\"st\" kind=\"object\" %s/>", attrs);
    *sp = load_parts("", extra, "");
    assert_int_equal((*sp)->n_storage, 1);
    return &(*sp)->storage[0];
}

static void test_size_units(void **state) {
    (void)state;
    static const struct { const char *z; double want; int exact; } t[] = {
        { "80GB", 80e9, 1 }, { "1.5TB", 1.5e12, 1 }, { "130e9B", 130e9, 1 },
        { "4096", 4096, 1 }, { "2PB", 2e15, 1 }, { "512MiB", 512.0 * 1048576, 0 },
        { "1GiB", 1073741824.0, 0 }, { "8Gb", 1e9, 0 }, { "3KB", 3000, 1 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char attrs[64];
        scenario *s;
        snprintf(attrs, sizeof attrs, "capacity=\"%s\"", t[i].z);
        const sc_storage *st = storage_of(&s, attrs);
        if (t[i].exact && st->capacity_bytes != t[i].want)
            print_error("capacity=\"%s\": got %.17g want %.17g\n", t[i].z, st->capacity_bytes, t[i].want);
        if (t[i].exact) assert_true(st->capacity_bytes == t[i].want);
        else assert_close(st->capacity_bytes, t[i].want, 1e-15, t[i].z);
        scenario_free(s);
    }
}

static void test_bandwidth_units(void **state) {
    (void)state;
    static const struct { const char *z; double want; int exact; } t[] = {
        { "400Gb/s", 50e9, 0 }, { "3.35TB/s", 3.35e12, 1 }, { "25GB/s", 25e9, 1 },
        { "100MiB/s", 100.0 * 1048576, 0 }, { "1e9", 1e9, 1 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char attrs[64];
        scenario *s;
        snprintf(attrs, sizeof attrs, "bandwidth=\"%s\"", t[i].z);
        const sc_storage *st = storage_of(&s, attrs);
        if (t[i].exact) assert_true(st->bw_bytes_per_s == t[i].want);
        else assert_close(st->bw_bytes_per_s, t[i].want, 1e-15, t[i].z);
        scenario_free(s);
    }
}

static void test_rate_units(void **state) {
    (void)state;
    static const struct { const char *z; double want; } t[] = {
        { "10/s", 10 }, { "600/min", 10 }, { "6/h", 6.0 / 3600 }, { "2/d", 2.0 / 86400 },
        { "1/w", 1.0 / (7 * 86400) }, { "5/ms", 5000 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "<workload><jobs name=\"j\" count=\"3\" rate=\"%s\" gpus=\"1\" duration=\"1h\"/></workload>",
                 t[i].z);
        scenario *s = load_parts("", "", body);
        assert_close(s->jobs[0].rate_per_s, t[i].want, 1e-15, t[i].z);
        scenario_free(s);
    }
}

/* Counts: node counts and job counts take k/M suffixes; tokens take T/B. */
static void test_count_units(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload><jobs name=\"j\" count=\"4k\" arrivals=\"fixed\" gpus=\"1\" duration=\"1h\"/>"
        "<jobs name=\"k\" count=\"2M\" arrivals=\"fixed\" gpus=\"8\" duration=\"1h\"/>"
        "<training name=\"a\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"15.6T\">"
        "<model preset=\"llama3-8b\"/></training>"
        "<training name=\"b\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"5B\">"
        "<model preset=\"llama3-8b\"/></training>"
        "<training name=\"c\" gpus=\"8\" dp=\"8\" steps=\"1.5k\">"
        "<model preset=\"llama3-8b\"/></training></workload>");
    assert_int_equal(s->jobs[0].count, 4000);
    assert_int_equal(s->jobs[1].count, 2000000);
    assert_true(s->training[0].tokens == 15.6e12);
    assert_true(s->training[1].tokens == 5e9);
    assert_int_equal(s->training[2].steps, 1500);
    scenario_free(s);

    s = load_text("<scenario name=\"n\"><cluster><nodes type=\"hgx-h200\" count=\"1k\"/></cluster></scenario>");
    assert_int_equal(s->nodes[0].count, 1000);
    assert_int_equal(scenario_gpus(s), 8000);
    scenario_free(s);
}

/* Plain numbers: oversubscription, Weibull shape, percentile; and the
 * durations of failures, checkpoints and SLOs. */
static void test_number_and_other_units(void **state) {
    (void)state;
    scenario *s = load_parts("",
        "<network topology=\"rail-optimized\" oversubscription=\"2.5\" nic-mode=\"overlay\"/>",
        "<failures><failure component=\"node\" mtbf=\"1.2y\" distribution=\"weibull\" shape=\"0.8\" mttr=\"4h\"/></failures>"
        "<workload><inference name=\"chat\" model=\"llama3-70b\" precision=\"fp8\" tp=\"2\" replicas=\"2\">"
        "<arrivals process=\"poisson\" rate=\"20/s\" count=\"20k\"/>"
        "<requests input-tokens=\"1k\" output-tokens=\"200\"/>"
        "<slo ttft=\"1s\" tpot=\"50ms\" percentile=\"99.9\"/></inference></workload>");
    assert_true(s->network.oversubscription == 2.5);
    assert_int_equal(s->network.topology, TOPO_RAIL_OPTIMIZED);
    assert_int_equal(s->network.nic_mode, NIC_OVERLAY);
    assert_true(s->failures[0].shape == 0.8);
    assert_close(s->failures[0].mtbf_s, 1.2 * 365 * 86400, 1e-15, "mtbf 1.2y");
    assert_true(s->failures[0].mttr_s == 4 * 3600.0);
    const sc_inference *f = &s->inference[0];
    assert_true(f->rate_per_s == 20);
    assert_int_equal(f->count, 20000);
    assert_int_equal(f->input_tokens, 1000);
    assert_true(f->slo_ttft_s == 1);
    assert_true(f->slo_tpot_s == 0.05);
    assert_true(f->slo_percentile == 99.9);
    assert_int_equal(f->precision, PREC_FP8);
    scenario_free(s);
}

/* Microbenchmark sizes: min/max-size with units, factor a plain number.
 * As in nccl-tests, 1KB means 1024 bytes here (CONTRACT.md's example prints
 * 1073741824 for a 1 GB all-reduce); binary units stay binary. */
static void test_microbench_sizes(void **state) {
    (void)state;
    scenario *s = load_text(
        "<scenario name=\"nccl\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
        "<microbenchmarks>"
        "<collective op=\"allreduce\" ranks=\"8\" min-size=\"1KB\" max-size=\"8GB\" factor=\"2\"/>"
        "<copy kind=\"h2d\" min-size=\"1MiB\" max-size=\"1GiB\" factor=\"4\"/>"
        "<storage-write size=\"1GB\" files=\"4\"/>"
        "</microbenchmarks></scenario>");
    assert_int_equal(s->n_microbench, 3);
    assert_int_equal(s->microbench[0].kind, MB_COLLECTIVE);
    assert_int_equal(s->microbench[0].op, COLL_ALLREDUCE);
    assert_true(s->microbench[0].min_bytes == 1024);
    assert_true(s->microbench[0].max_bytes == 8589934592.0);
    assert_true(s->microbench[0].factor == 2);
    assert_true(s->microbench[1].min_bytes == 1048576);
    assert_true(s->microbench[1].max_bytes == 1073741824);
    assert_string_equal(s->microbench[1].copy_kind, "h2d");
    assert_true(s->microbench[2].size_bytes == 1073741824.0);
    assert_int_equal(s->microbench[2].files, 4);
    scenario_free(s);
}

/* ---- scenario_load_memory ------------------------------------------------- */

static void test_load_memory(void **state) {
    (void)state;
    static const char text[] =
        "<?xml version=\"1.0\"?>\n"
        "<scenario name=\"mem\" seed=\"42\" duration=\"2w\">\n"
        "  <cluster><nodes type=\"dgx-a100-80gb\" count=\"3\"/></cluster>\n"
        "</scenario>\n";
    scenario *s = load_text(text);
    assert_string_equal(s->file, "inline.xml");
    assert_string_equal(s->name, "mem");
    assert_int_equal(s->seed, 42);
    assert_true(s->duration_s == 14 * 86400.0);
    assert_int_equal(scenario_gpus(s), 24);
    assert_int_equal(s->xml_len, strlen(text));
    assert_memory_equal(s->xml_text, text, strlen(text));
    scenario_free(s);

    /* Errors name the given file name and the line in the text; the text
     * need not be NUL-terminated. */
    static const char bad[] =
        "<scenario name=\"mem\">\n"
        "  <cluster>\n"
        "    <nodes type=\"dgx-h100\" count=\"0\"/>\n"
        "  </cluster>\n"
        "</scenario>\nTRAILING";
    char err[512];
    s = &sentinel;
    assert_int_equal(scenario_load_memory(bad, sizeof bad - 1 - strlen("TRAILING"), "mem.xml", &s,
                                          err, sizeof err), -1);
    assert_null(s);
    check_error(err, "mem.xml:3: ", "<nodes count=\"0\">: count must be a whole number from 1");

    s = &sentinel;
    assert_int_equal(scenario_load_memory("", 0, "empty.xml", &s, err, sizeof err), -1);
    assert_null(s);
    check_error(err, "empty.xml:1: ", "empty file");
}
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_elements),
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_examples_load),
        cmocka_unit_test(test_default_values),
        cmocka_unit_test(test_llama3_405b_values),
        cmocka_unit_test(test_gpus_default),
        cmocka_unit_test(test_dp_from_gpus),
        cmocka_unit_test(test_training_stack),
        cmocka_unit_test(test_tokens_to_steps),
        cmocka_unit_test(test_duration_units),
        cmocka_unit_test(test_size_units),
        cmocka_unit_test(test_bandwidth_units),
        cmocka_unit_test(test_rate_units),
        cmocka_unit_test(test_count_units),
        cmocka_unit_test(test_number_and_other_units),
        cmocka_unit_test(test_microbench_sizes),
        cmocka_unit_test(test_load_memory),
    };
    return cmocka_run_group_tests_name("scenario", tests, NULL, NULL) ? 1 : 0;
}
