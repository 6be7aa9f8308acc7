/*
 * test_training_stack: the software stacks of the training step model
 * (models/stack.c, models/catalog/stacks.xml; docs/software-stacks.md):
 * the default stack rule, each named profile and what it changes in a step
 * (TP overlap, kernels, FP8 recipes, FSDP resharding and prefetch, pipeline
 * schedules, host-bound layer time, eager elementwise ops, async TP,
 * torchtitan's per-op selective checkpointing and micro-batch count).
 *
 * Each test compares plans that differ in one figure of the stack and
 * checks the direction it must move the step or the memory, or an exact
 * identity (FLOPs counted, a profile equal to `auto`'s choice); none
 * asserts a timing. Sources are named at each test.
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

#include "models/transformer.h"

/* The software-stack rule of train_plan_defaults (models/training.h):
 * full recomputation without sharding is the 2021 Megatron-LM stack;
 * anything else the fused-attention, sequence-parallel one; given values
 * win; the rule ignores the precision; applying it twice changes nothing. */
static void test_stack_rule(void **state) {
    (void)state;
    static const struct {
        recompute rc;
        sharding sh;
        int unfused, sp;
    } want[] = {
        { RECOMPUTE_FULL, SHARD_NONE, 1, 0 },
        { RECOMPUTE_FULL, SHARD_ZERO1, 0, 1 },
        { RECOMPUTE_FULL, SHARD_FSDP, 0, 1 },
        { RECOMPUTE_SELECTIVE, SHARD_NONE, 0, 1 },
        { RECOMPUTE_SELECTIVE, SHARD_FSDP, 0, 1 },
        { RECOMPUTE_NONE, SHARD_NONE, 0, 1 },
        { RECOMPUTE_NONE, SHARD_ZERO2, 0, 1 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        for (int prec = 0; prec < 2; prec++) {
            train_plan p;
            memset(&p, 0, sizeof p);
            p.tp = 8;
            p.recompute = want[i].rc;
            p.sharding = want[i].sh;
            p.precision = prec ? PREC_FP16 : PREC_BF16;
            p.sequence_parallel = -1;
            p.attn_unfused = -1;
            train_plan_defaults(&p);
            assert_int_equal(p.attn_unfused, want[i].unfused);
            assert_int_equal(p.sequence_parallel, want[i].sp);
            train_plan again = p;
            train_plan_defaults(&again);
            assert_memory_equal(&again, &p, sizeof p);
            /* Given values win. */
            p.attn_unfused = !want[i].unfused;
            p.sequence_parallel = !want[i].sp;
            train_plan_defaults(&p);
            assert_int_equal(p.attn_unfused, !want[i].unfused);
            assert_int_equal(p.sequence_parallel, !want[i].sp);
        }
    }
    /* No sequence parallelism without tensor parallelism. */
    train_plan p;
    memset(&p, 0, sizeof p);
    p.sequence_parallel = 1;
    p.attn_unfused = -1;
    train_plan_defaults(&p);
    assert_int_equal(p.sequence_parallel, 0);
    assert_int_equal(p.attn_unfused, 0);
}

/* The stacks of models/catalog/stacks.xml: each loads, passes its check
 * and is the stack a job named it runs with. */
static const char *const stack_names[] = {
    "megatron-lm-2021", "megatron-deepspeed-2022", "nemo-2022", "megatron-core-2023",
    "megatron-core-2024", "megatron-core-2025", "deepspeed-zero3", "pytorch-fsdp1",
    "fsdp2-eager", "fsdp2-compile", "torchtitan", "hai-llm-2024",
};

static double step_of(const char *model, const train_plan *p, precision prec, train_result *r) {
    fabric f;
    fabric_for(&f, "dgx-h100", p->tp * p->pp * p->dp);
    train_plan q = *p;
    q.precision = prec;
    assert_int_equal(train_step(catalog_llm(cat, model), &q, &f, r), 0);
    return r->step_s;
}

static void test_stack_profiles(void **state) {
    (void)state;
    char why[256];
    assert_int_equal(catalog_count(cat, "stack"), (int)(sizeof stack_names / sizeof stack_names[0]));
    for (size_t i = 0; i < sizeof stack_names / sizeof stack_names[0]; i++) {
        const stack_spec *k = stack_find(cat, stack_names[i]);
        assert_non_null(k);
        assert_int_equal(stack_check(k, why, sizeof why), 0);
        train_plan p = stack_plan(stack_names[i], 8, 2, SHARD_ZERO1, RECOMPUTE_SELECTIVE);
        train_result r;
        step_of("llama3-8b", &p, PREC_BF16, &r);
        assert_string_equal(r.stack, stack_names[i]);
    }
    assert_null(stack_find(cat, "auto"));
}

/* `auto` (train_plan_auto_stack) names a catalog profile and gives the
 * same step as naming that profile: the inference hides no figure. */
static void test_stack_auto_is_a_profile(void **state) {
    (void)state;
    static const struct { sharding sh; recompute rc; const char *want; } c[] = {
        { SHARD_NONE, RECOMPUTE_FULL, "megatron-lm-2021" },
        { SHARD_NONE, RECOMPUTE_SELECTIVE, "megatron-core-2023" },
        { SHARD_ZERO1, RECOMPUTE_FULL, "megatron-core-2023" },
        { SHARD_FSDP, RECOMPUTE_NONE, "torchtitan" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        for (int prec = 0; prec < 2; prec++) {
            precision pr = prec ? PREC_FP8 : PREC_BF16;
            train_plan a = stack_plan(NULL, 4, 4, c[i].sh, c[i].rc);
            train_plan n = stack_plan(c[i].want, 4, 4, c[i].sh, c[i].rc);
            train_result ra, rn;
            step_of("llama3-8b", &a, pr, &ra);
            step_of("llama3-8b", &n, pr, &rn);
            assert_string_equal(ra.stack, c[i].want);
            assert_true(ra.step_s == rn.step_s);
            assert_true(ra.mem.total_bytes == rn.mem.total_bytes);
        }
    }
}

/* What the profiles change: TP overlap (2024) is faster than none (2023)
 * on a TP plan; the 2021 kernels (unfused attention, no SP) are slower;
 * FP8 is faster than bf16 on H100; FlashAttention-3 (2025) is faster on
 * H100 than FlashAttention-2 and equal off Hopper. */
static void test_stack_effects(void **state) {
    (void)state;
    train_result r;
    train_plan c23 = stack_plan("megatron-core-2023", 8, 2, SHARD_ZERO1, RECOMPUTE_SELECTIVE);
    train_plan c24 = stack_plan("megatron-core-2024", 8, 2, SHARD_ZERO1, RECOMPUTE_SELECTIVE);
    train_plan c25 = stack_plan("megatron-core-2025", 8, 2, SHARD_ZERO1, RECOMPUTE_SELECTIVE);
    train_plan l21 = stack_plan("megatron-lm-2021", 8, 2, SHARD_ZERO1, RECOMPUTE_SELECTIVE);
    double t23 = step_of("llama3-70b", &c23, PREC_BF16, &r);
    double tp23 = r.t.tp_comm_s;
    double t24 = step_of("llama3-70b", &c24, PREC_BF16, &r);
    assert_true(t24 < t23);
    assert_true(r.t.tp_comm_s < tp23 && r.t.tp_comm_s > 0);   /* one chunk in tp stays exposed */
    assert_true(step_of("llama3-70b", &c25, PREC_BF16, &r) < t24);
    assert_true(step_of("llama3-70b", &l21, PREC_BF16, &r) > t23);
    double t8 = step_of("llama3-70b", &c24, PREC_FP8, &r);
    assert_true(t8 < t24);
    assert_true(r.t.compute_s > 0);
    /* Off Hopper flash3 is flash2. */
    fabric f;
    fabric_for(&f, "dgx-a100-80gb", 16);
    train_result ra, rb;
    assert_int_equal(train_step(catalog_llm(cat, "llama3-8b"), &c24, &f, &ra), 0);
    assert_int_equal(train_step(catalog_llm(cat, "llama3-8b"), &c25, &f, &rb), 0);
    assert_true(ra.step_s == rb.step_s);
}

/* FP8 memory by recipe and stack: Transformer Engine stacks keep FP8
 * weight copies and transposes (2 bytes per parameter more; MXFP8 adds its
 * block scales), torchao stacks do not; every recipe saves the linear
 * layers' inputs in FP8, so activations shrink. Casting costs by recipe:
 * delayed < tensorwise < rowwise. */
static void test_fp8_recipes(void **state) {
    (void)state;
    train_result rb, rd, rm, rt, rr;
    train_plan te = stack_plan("megatron-core-2024", 8, 2, SHARD_NONE, RECOMPUTE_SELECTIVE);
    step_of("llama3-8b", &te, PREC_BF16, &rb);
    step_of("llama3-8b", &te, PREC_FP8, &rd);
    double par = rb.mem.weights_bytes / 2;
    assert_true(fabs(rd.mem.weights_bytes - rb.mem.weights_bytes - 2 * par) < 1e-6 * par);
    assert_true(rd.mem.activations_bytes < rb.mem.activations_bytes);
    te.fp8_recipe = FP8_MXFP8;
    step_of("llama3-8b", &te, PREC_FP8, &rm);
    assert_true(rm.mem.weights_bytes > rd.mem.weights_bytes);
    te.fp8_recipe = FP8_TENSORWISE;
    step_of("llama3-8b", &te, PREC_FP8, &rt);
    te.fp8_recipe = FP8_ROWWISE;
    step_of("llama3-8b", &te, PREC_FP8, &rr);
    assert_true(rd.step_s < rt.step_s && rt.step_s < rr.step_s);
    train_plan ao = stack_plan("torchtitan", 8, 2, SHARD_NONE, RECOMPUTE_SELECTIVE);
    step_of("llama3-8b", &ao, PREC_FP8, &rt);
    assert_true(rt.mem.weights_bytes == rb.mem.weights_bytes);
    assert_true(fp8_cast_bytes(FP8_DELAYED) < fp8_cast_bytes(FP8_TENSORWISE));
}

/* FSDP without resharding after the forward keeps every gathered layer
 * (more memory) and skips the backward's gathers; without prefetch each
 * gather waits in full. */
static void test_fsdp_stack(void **state) {
    (void)state;
    train_result r1, r2, r3;
    train_plan p = stack_plan("fsdp2-eager", 1, 16, SHARD_FSDP, RECOMPUTE_NONE);
    step_of("llama3-8b", &p, PREC_BF16, &r1);
    p.stack.fsdp_reshard = 0;
    step_of("llama3-8b", &p, PREC_BF16, &r2);
    assert_true(r2.mem.weights_bytes > r1.mem.weights_bytes);
    assert_true(r2.t.dp_comm_s <= r1.t.dp_comm_s);
    p.stack.fsdp_reshard = 1;
    p.stack.fsdp_prefetch = 0;
    step_of("llama3-8b", &p, PREC_BF16, &r3);
    assert_true(r3.t.dp_comm_s > r1.t.dp_comm_s);
}

/* A stack that runs 1F1B only (DeepSpeed's pipeline engine) never gets an
 * interleaved schedule from auto, pays the larger bubble, and leaves its
 * gradient reduction exposed; an explicit schedule still wins. A list
 * without 1f1b, or with an unknown name, fails the stack's check. */
static void test_stack_pipeline_schedules(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama2-70b");
    fabric f;
    fabric_for(&f, "dgx-a100-80gb", 8 * 8 * 4);
    train_plan p = base_plan(8, 8, 4, 4 * 64);
    p.virtual_stages = 0;
    p.recompute = RECOMPUTE_FULL;
    train_plan ds = p, mt = p;
    ds.stack = *stack_find(cat, "megatron-deepspeed-2022");
    mt.stack = *stack_find(cat, "megatron-lm-2021");
    ds.stack_given = mt.stack_given = 1;
    train_result rd, rm, rx;
    assert_int_equal(train_step(m, &ds, &f, &rd), 0);
    assert_int_equal(train_step(m, &mt, &f, &rm), 0);
    assert_int_equal(rd.virtual_stages, 1);
    assert_true(rm.virtual_stages >= 2);
    assert_true(rd.t.pp_bubble_s > rm.t.pp_bubble_s && rd.t.dp_comm_s > rm.t.dp_comm_s);
    ds.schedule = PP_INTERLEAVED;
    ds.virtual_stages = 2;
    assert_int_equal(train_step(m, &ds, &f, &rx), 0);
    assert_int_equal(rx.virtual_stages, 2);
    char why[256];
    stack_spec k = ds.stack;
    snprintf(k.pipeline_schedules, sizeof k.pipeline_schedules, "interleaved");
    assert_int_equal(stack_check(&k, why, sizeof why), -1);
    assert_non_null(strstr(why, "pipeline-schedules"));
    snprintf(k.pipeline_schedules, sizeof k.pipeline_schedules, "1f1b,zb");
    assert_int_equal(stack_check(&k, why, sizeof why), -1);
    snprintf(k.pipeline_schedules, sizeof k.pipeline_schedules, "interleaved, 1f1b");
    assert_int_equal(stack_check(&k, why, sizeof why), 0);
    assert_true(stack_runs_interleaved(&k));
}

/* One step of plan p with its stack's layer-overhead (*r) and without (*r0). */
static void step_with_without_overhead(const llm_spec *m, const train_plan *p, const fabric *f,
                                       train_result *r, train_result *r0) {
    train_plan z = *p;
    z.stack.layer_overhead_s = 0;
    assert_int_equal(train_step(m, p, f, r), 0);
    assert_int_equal(train_step(m, &z, f, r0), 0);
}

/* layer-overhead (megatron-deepspeed-2022 only; every other profile 0):
 * a fixed time per layer per micro-batch on the critical path of every
 * pipeline slot. Compute and communication do not move; "other" grows by
 * it once per micro-batch and the 1F1B bubble once per bubble slot, for
 * the same layers of the busiest stage; a larger micro-batch pays it
 * fewer times for the same global batch. */
static void test_stack_layer_overhead(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof stack_names / sizeof stack_names[0]; i++) {
        double x = stack_find(cat, stack_names[i])->layer_overhead_s;
        if (strcmp(stack_names[i], "megatron-deepspeed-2022") == 0) assert_true(x > 0);
        else assert_true(x == 0);
    }
    const llm_spec *m = catalog_llm(cat, "llama2-70b");
    fabric f;
    fabric_for(&f, "dgx-a100-80gb", 8 * 8 * 4);
    train_plan p = base_plan(8, 8, 4, 4 * 64);
    p.recompute = RECOMPUTE_FULL;
    p.micro_batch = 1;
    p.stack = *stack_find(cat, "megatron-deepspeed-2022");
    p.stack_given = 1;
    train_result r, r0, s, s0;
    step_with_without_overhead(m, &p, &f, &r, &r0);
    check_consistent(&r);
    double x = p.stack.layer_overhead_s;
    assert_true(fabs(r.t.compute_s - r0.t.compute_s) <= 1e-9 * r0.t.compute_s);
    assert_true(r.t.tp_comm_s == r0.t.tp_comm_s && r.t.dp_comm_s == r0.t.dp_comm_s);
    double per_mb = (r.t.other_s - r0.t.other_s) / (r.micro_batches * x);
    double per_slot = (r.t.pp_bubble_s - r0.t.pp_bubble_s) / ((p.pp - 1) * x);
    assert_true(fabs(per_mb - per_slot) <= 1e-6 * per_mb);
    assert_true(per_mb >= r.stage_layers && per_mb < r.stage_layers + 2);
    p.micro_batch = 2;
    step_with_without_overhead(m, &p, &f, &s, &s0);
    assert_true(s.t.other_s - s0.t.other_s < 0.51 * (r.t.other_s - r0.t.other_s));
}

/* Eager elementwise ops move more bytes and launch more kernels than the
 * fused chains; the count does not depend on the GPU, and a GeLU FFN's
 * activation is one op either way. fsdp2-eager is slower than
 * fsdp2-compile by elementwise time alone. */
static void test_elementwise_eager(void **state) {
    (void)state;
    tf_elementwise e, g;
    tf_layer_elementwise(catalog_llm(cat, "llama3-8b"), 2, &e);
    assert_true(e.hidden_bytes_eager > 3 * e.hidden_bytes && e.split_bytes_eager > e.split_bytes);
    assert_true(e.kernels_eager > e.kernels && e.kernels > 0);
    llm_spec gelu = *catalog_llm(cat, "llama3-8b");
    gelu.ffn_hidden = 4 * gelu.hidden;
    gelu.gated_ffn = 0;
    tf_layer_elementwise(&gelu, 2, &g);
    tf_dims d;
    tf_dims_of(&gelu, &d);
    double rope_extra = (g.split_bytes_eager - g.split_bytes) / (d.q_dim + d.kv_dim);
    assert_true(fabs(rope_extra - (2 * 2 + 4 * 4 - 2 * 2)) < 1e-9);   /* only the rotary differs */
    train_plan pe = stack_plan("fsdp2-eager", 1, 8, SHARD_FSDP, RECOMPUTE_NONE);
    train_plan pc = stack_plan("fsdp2-compile", 1, 8, SHARD_FSDP, RECOMPUTE_NONE);
    train_result re, rc;
    step_of("llama3-8b", &pe, PREC_BF16, &re);
    step_of("llama3-8b", &pc, PREC_BF16, &rc);
    assert_true(re.t.compute_s > 1.05 * rc.t.compute_s);
    assert_true(re.t.other_s > rc.t.other_s);
    assert_true(re.t.tp_comm_s == rc.t.tp_comm_s);
}

/* async-tp: on hides all but one chunk in tp of the TP collectives (the
 * rule of a stack without async-tp-pipeline), off exposes them all
 * whatever the stack overlaps; not given, the stack's. */
static void test_async_tp(void **state) {
    (void)state;
    train_plan p = stack_plan("torchtitan", 8, 2, SHARD_FSDP, RECOMPUTE_FULL);
    p.stack.async_tp_pipeline = 0;
    train_result r0, r1, r2, r3;
    step_of("llama3-70b", &p, PREC_BF16, &r0);
    p.async_tp = 1;
    step_of("llama3-70b", &p, PREC_BF16, &r1);
    assert_true(r1.t.tp_comm_s > 0 && r1.t.tp_comm_s <= r0.t.tp_comm_s / 8 * (1 + 1e-9));
    assert_true(r1.step_s < r0.step_s);
    train_plan q = stack_plan("megatron-core-2024", 8, 2, SHARD_ZERO1, RECOMPUTE_SELECTIVE);
    step_of("llama3-70b", &q, PREC_BF16, &r2);
    q.async_tp = -1;
    step_of("llama3-70b", &q, PREC_BF16, &r3);
    assert_true(r3.t.tp_comm_s > 4 * r2.t.tp_comm_s);
}

/* PyTorch's symmetric-memory async TP (the torchtitan profiles'
 * async-tp-pipeline): a chunk's copy hides behind one chunk's GEMM at
 * most, so with an 8B model's short GEMMs more of the traffic shows than
 * the one-chunk rule says; the GEMMs run in tp chunks and the pipeline
 * adds its staging copies and partial sums, so compute grows; vanilla TP
 * still shows more. Megatron-Core's userbuffers keep the one-chunk rule. */
static void test_async_tp_pipeline(void **state) {
    (void)state;
    train_plan p = stack_plan("torchtitan", 8, 2, SHARD_FSDP, RECOMPUTE_SELECTIVE);
    assert_int_equal(p.stack.async_tp_pipeline, 1);
    assert_int_equal(stack_find(cat, "megatron-core-2024")->async_tp_pipeline, 0);
    train_result vanilla, pipe, rule;
    p.async_tp = -1;
    step_of("llama3-8b", &p, PREC_BF16, &vanilla);
    p.async_tp = 1;
    step_of("llama3-8b", &p, PREC_BF16, &pipe);
    p.stack.async_tp_pipeline = 0;
    step_of("llama3-8b", &p, PREC_BF16, &rule);
    assert_true(pipe.t.tp_comm_s > 1.5 * rule.t.tp_comm_s);
    assert_true(pipe.t.tp_comm_s < vanilla.t.tp_comm_s);
    assert_true(pipe.t.compute_s > rule.t.compute_s);
    assert_true(pipe.step_s > rule.step_s);
}

/* ---- Per-op selective checkpointing (torchtitan selective_ac_option="op") */

/* The torchtitan profiles recompute selectively by torchtitan's per-op
 * policy: the HFU basis gains exactly the recomputed matmuls (wk and w3
 * under torch.compile with sequence parallelism; wo too in eager mode),
 * the backward gathers the sequence-parallel inputs again (more exposed TP
 * time than attention-only recompute), and a layer keeps less than the
 * attention kind keeps (K and the FFN's up projection are recomputed). */
static void test_selective_ops(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "llama3-8b");
    tf_dims d;
    tf_dims_of(m, &d);
    train_plan ops = stack_plan("torchtitan", 8, 2, SHARD_FSDP, RECOMPUTE_SELECTIVE);
    ops.selective = SELECTIVE_AUTO;                  /* base_plan resolved it by tp */
    train_plan att = ops;
    att.selective = SELECTIVE_ATTENTION;
    train_result ro, ra, re;
    step_of("llama3-8b", &ops, PREC_BF16, &ro);
    step_of("llama3-8b", &att, PREC_BF16, &ra);
    double tokens = ro.tokens_per_step;
    double none_flops = tokens * tf_hw_flops_per_token(m, ops.seq_len, RECOMPUTE_NONE, 0);
    double want = none_flops + tokens * m->layers * 2 * d.h * (d.kv_dim + d.f);
    assert_true(fabs(ro.hw_flops_per_step / want - 1) < 1e-9);
    assert_true(ro.step_s > ra.step_s);
    assert_true(ro.t.tp_comm_s > ra.t.tp_comm_s);
    assert_true(ro.mem.activations_bytes < ra.mem.activations_bytes);
    train_plan eager = stack_plan("fsdp2-eager", 8, 2, SHARD_FSDP, RECOMPUTE_SELECTIVE);
    eager.selective = SELECTIVE_AUTO;
    step_of("llama3-8b", &eager, PREC_BF16, &re);
    double wo = tokens * m->layers * 2 * d.h * d.q_dim;
    assert_true(fabs((re.hw_flops_per_step - ro.hw_flops_per_step) / wo - 1) < 1e-9);
    assert_int_equal(selective_kind_parse("ops"), SELECTIVE_OPS);
    assert_int_equal(selective_kind_parse("rows"), -1);
}

/* torchtitan runs as many micro-batches as pipeline stages unless told
 * (pipeline_parallel_microbatches defaults to the pp degree); a stack
 * without that rule picks the fastest micro-batch that fits. */
static void test_microbatches_per_stage(void **state) {
    (void)state;
    train_plan p = stack_plan("torchtitan", 8, 2, SHARD_FSDP, RECOMPUTE_FULL);
    p.pp = 4;
    p.micro_batch = 0;
    p.global_batch = 2 * 32;
    fabric f;
    fabric_for(&f, "dgx-h100", 8 * 4 * 2);
    train_result r;
    assert_int_equal(train_step(catalog_llm(cat, "llama3-70b"), &p, &f, &r), 0);
    assert_int_equal(r.micro_batches, 4);
    assert_int_equal(r.micro_batch, 8);
    p.stack.microbatches_per_stage = 2;
    assert_int_equal(train_step(catalog_llm(cat, "llama3-70b"), &p, &f, &r), 0);
    assert_int_equal(r.micro_batches, 8);
    p.stack.microbatches_per_stage = 0;
    assert_int_equal(train_step(catalog_llm(cat, "llama3-70b"), &p, &f, &r), 0);
    assert_true(r.micro_batches > 8);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_rule),
        cmocka_unit_test(test_stack_profiles),
        cmocka_unit_test(test_stack_auto_is_a_profile),
        cmocka_unit_test(test_stack_effects),
        cmocka_unit_test(test_fp8_recipes),
        cmocka_unit_test(test_fsdp_stack),
        cmocka_unit_test(test_stack_pipeline_schedules),
        cmocka_unit_test(test_stack_layer_overhead),
        cmocka_unit_test(test_elementwise_eager),
        cmocka_unit_test(test_async_tp),
        cmocka_unit_test(test_async_tp_pipeline),
        cmocka_unit_test(test_microbatches_per_stage),
        cmocka_unit_test(test_selective_ops),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
