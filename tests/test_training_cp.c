/*
 * test_training_cp: context parallelism in the training step model
 * (cp_costs in models/train_layer.c; docs/context-parallel.md): ring
 * attention's K/V exchange hidden behind blocks of attention, PyTorch's
 * all-gather rotation, K/V repeated to every head, and the merges of the
 * running output. Each test checks the direction a mechanism moves the
 * step (and that the breakdown adds up); none asserts a timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/catalogfix.h"
#include "tests/trainfix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context parallelism: twice the GPUs on a 128K sequence nearly halve it. */
static void test_context_parallel(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama3.1-8b");
    fabric f;
    fabric_for(&f, "dgx-h100", 64);
    train_plan p = base_plan(8, 1, 2, 16);
    p.seq_len = 131072;
    p.recompute = RECOMPUTE_FULL;
    train_result r1, r2;
    assert_int_equal(train_step(m, &p, &f, &r1), 0);
    p.cp = 4;
    assert_int_equal(train_step(m, &p, &f, &r2), 0);
    check_consistent(&r2);
    assert_true(r2.step_s < 0.35 * r1.step_s);
    assert_true(fabs(r2.tokens_per_s_per_gpu / r1.tokens_per_s_per_gpu - 1) < 0.4);
}

/* ---- Context parallelism (docs/context-parallel.md) -------------------- */

/* A plan of `name`'s stack with context parallelism: cp ranks, sequence
 * length s, full recomputation, one sequence per micro-batch, timed on
 * enough DGX H100s for tp x pp x dp x cp GPUs. */
static train_plan cp_plan(const char *name, int tp, int dp, int cp, int s) {
    train_plan p = stack_plan(name, tp, dp, SHARD_FSDP, RECOMPUTE_FULL);
    p.cp = cp;
    p.seq_len = s;
    p.global_batch = dp;
    return p;
}

static double cp_step(const char *model, const train_plan *p, train_result *r) {
    fabric f;
    fabric_for(&f, "dgx-h100", p->tp * p->pp * p->dp * p->cp);
    assert_int_equal(train_step(catalog_llm(cat, model), p, &f, r), 0);
    check_consistent(r);
    return r->step_s;
}

/* At a fixed cp every GPU holds s/cp tokens, and each attends to all s
 * keys: attention per token grows with s, so the time per token does too,
 * nearly in proportion once attention dominates (8B at 64K-256K on cp 4). */
static void test_cp_time_per_token_grows(void **state) {
    (void)state;
    double per_token[3];
    for (int i = 0; i < 3; i++) {
        train_plan p = cp_plan("torchtitan", 1, 2, 4, 65536 << i);
        train_result r;
        per_token[i] = cp_step("llama3.1-8b", &p, &r) / (p.seq_len / 4.0);
    }
    assert_true(per_token[1] > 1.4 * per_token[0]);
    assert_true(per_token[2] > 1.6 * per_token[1] && per_token[2] < 2 * per_token[1]);
}

/* The K/V ring hides each hop behind one block of attention, (s/cp)^2 of
 * work against s/cp of traffic: at long blocks the exchange is hidden
 * (only the last dK,dV hop shows), at short blocks across nodes it shows.
 * tp 1 and cp 16 puts the ring across two nodes; the exposed share of the
 * step (tp_comm_s holds only CP here) must grow as blocks shrink. */
static void test_cp_exchange_exposed_when_blocks_small(void **state) {
    (void)state;
    train_result rs, rl;
    train_plan small = cp_plan("megatron-core-2024", 1, 1, 16, 16 * 1024);
    train_plan large = cp_plan("megatron-core-2024", 1, 1, 16, 16 * 16384);
    cp_step("llama3.1-8b", &small, &rs);
    cp_step("llama3.1-8b", &large, &rl);
    assert_true(rl.t.tp_comm_s > 0);                       /* the last dK,dV hop */
    assert_true(rl.t.tp_comm_s < 0.01 * rl.step_s);
    assert_true(rs.t.tp_comm_s / rs.step_s > 5 * rl.t.tp_comm_s / rl.step_s);
}

/* PyTorch's all-gather rotation hides the whole gather behind the first
 * block only; the ring hides one hop per block. Across nodes with short
 * blocks the gather shows more; K and V repeated to every query head
 * (torchtitan's repeat_kv) carry heads/kv_heads times the bytes of a GQA
 * model, and nothing more when every head has its own K and V. */
static void test_cp_allgather_and_kv_repeat(void **state) {
    (void)state;
    train_result ring, ag, rep, mha_a, mha_b;
    train_plan p = cp_plan("torchtitan", 8, 1, 4, 4 * 4096);
    p.stack.kv_repeat = 0;
    p.stack.cp_allgather = 0;
    cp_step("llama3-70b", &p, &ring);
    p.stack.cp_allgather = 1;
    cp_step("llama3-70b", &p, &ag);
    assert_true(ag.t.tp_comm_s > ring.t.tp_comm_s);
    p.stack.kv_repeat = 1;
    cp_step("llama3-70b", &p, &rep);
    assert_true(rep.t.tp_comm_s > ag.t.tp_comm_s);
    assert_true(rep.step_s > ag.step_s);
    /* Without GQA (kv_heads = heads) repeating changes nothing. */
    llm_spec mha = *catalog_llm(cat, "llama3-70b");
    mha.kv_heads = mha.heads;
    fabric f;
    fabric_for(&f, "dgx-h100", 32);
    assert_int_equal(train_step(&mha, &p, &f, &mha_a), 0);
    p.stack.kv_repeat = 0;
    assert_int_equal(train_step(&mha, &p, &f, &mha_b), 0);
    assert_true(mha_a.step_s == mha_b.step_s);
}

/* A stack without cp-overlap waits for each exchange where it is issued
 * (torch.compile traces torchtitan's ring, and a traced functional
 * collective is waited for at once): the all-gathers and every dK,dV hop
 * show, where with overlap only the last hop did; the kernels are the
 * same. The torchtitan profile says so, Megatron-Core's does not. */
static void test_cp_exchange_waited_when_traced(void **state) {
    (void)state;
    train_plan p = cp_plan("torchtitan", 1, 1, 8, 8 * 32768);
    assert_int_equal(p.stack.cp_overlap, 0);
    assert_int_equal(stack_find(cat, "megatron-core-2024")->cp_overlap, 1);
    train_result waited, hidden;
    cp_step("llama3.1-8b", &p, &waited);
    p.stack.cp_overlap = 1;
    cp_step("llama3.1-8b", &p, &hidden);
    assert_true(waited.t.tp_comm_s > 5 * hidden.t.tp_comm_s);
    assert_true(waited.step_s > hidden.step_s);
    assert_true(fabs(waited.t.compute_s - hidden.t.compute_s) <= 1e-12 * hidden.t.compute_s);
}

/* Each ring step after the first merges its block into the fp32 running
 * output (and, backward, adds dQ, dK, dV into fp32 sums): memory-bound work
 * that grows with the ring's steps. cp 1 and cp 8 hold the same tokens per
 * GPU, so their GEMMs and elementwise work match; halving the HBM
 * bandwidth must slow cp 8's compute by more than cp 1's. */
static double compute_on(const train_plan *p, double hbm_scale) {
    fabric f;
    fabric_for(&f, "dgx-h100", p->tp * p->dp * p->cp);
    gpu_spec g = *f.gpu;
    g.hbm_bw_bytes_per_s *= hbm_scale;
    f.gpu = &g;
    train_result r;
    assert_int_equal(train_step(catalog_llm(cat, "llama3.1-8b"), p, &f, &r), 0);
    return r.t.compute_s;
}

static void test_cp_merges_cost_compute(void **state) {
    (void)state;
    train_plan p1 = cp_plan("megatron-core-2024", 1, 8, 1, 32768);
    train_plan p8 = cp_plan("megatron-core-2024", 1, 1, 8, 8 * 32768);
    double d1 = compute_on(&p1, 0.5) - compute_on(&p1, 1);
    double d8 = compute_on(&p8, 0.5) - compute_on(&p8, 1);
    assert_true(d1 > 0);
    assert_true(d8 > 1.2 * d1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_parallel),
        cmocka_unit_test(test_cp_time_per_token_grows),
        cmocka_unit_test(test_cp_exchange_exposed_when_blocks_small),
        cmocka_unit_test(test_cp_allgather_and_kv_repeat),
        cmocka_unit_test(test_cp_exchange_waited_when_traced),
        cmocka_unit_test(test_cp_merges_cost_compute),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
