/*
 * trainfix: what the training step tests share (test_training,
 * test_training_stack, test_training_cp, test_moe_train): a fabric of the
 * built-in catalog's nodes, the plan the property tests start from, a
 * plan under a named software stack, and the invariants every step result
 * keeps. Include after <cmocka.h> and tests/catalogfix.h (it reads `cat`).
 */
#ifndef CT_TEST_TRAINFIX_H
#define CT_TEST_TRAINFIX_H

#include <math.h>
#include <string.h>

#include "models/collective.h"
#include "models/stack.h"
#include "models/training.h"
#include "tests/planfix.h"

/* Enough nodes of type `node` for `gpus` GPUs. */

static inline void fabric_for(fabric *f, const char *node, int gpus) {
    const node_spec *n = catalog_node(cat, node);
    assert_non_null(n);
    assert_int_equal(fabric_init(f, cat, n, (gpus + n->gpus - 1) / n->gpus), 0);
}

/* tp x pp x dp GPUs, 4K bf16 sequences, selective recomputation, sequence
 * parallelism and attention kernels by the stack rule, no interleaving. */
static inline train_plan base_plan(int tp, int pp, int dp, int gb) {
    train_plan p = planfix(tp, pp, dp, gb, 4096, PREC_BF16);
    p.recompute = RECOMPUTE_SELECTIVE;
    p.sequence_parallel = -1;
    p.virtual_stages = 1;
    train_plan_defaults(&p);
    return p;
}

/* The breakdown adds up to the step, the hardware FLOPs are at least the
 * model FLOPs, and MFU and memory are in range. */
static inline void check_consistent(const train_result *r) {
    const step_breakdown *t = &r->t;
    double sum = t->compute_s + t->tp_comm_s + t->pp_bubble_s + t->dp_comm_s + t->optimizer_s + t->other_s;
    assert_true(fabs(sum - r->step_s) <= 1e-9 * r->step_s);
    assert_true(t->compute_s > 0 && t->tp_comm_s >= 0 && t->pp_bubble_s >= 0 && t->dp_comm_s >= 0 &&
                t->optimizer_s >= 0 && t->other_s >= 0);
    assert_true(r->hardware_tflops_per_gpu >= r->model_tflops_per_gpu);
    assert_true(r->mfu > 0 && r->mfu < 1);
    assert_true(r->mem.total_bytes > 0);
}

/* A tp x dp plan (micro-batch 1 of 4K) under the stack `name` (NULL: the
 * default rule), with the given sharding and recomputation. */
static inline train_plan stack_plan(const char *name, int tp, int dp, sharding sh, recompute rc) {
    train_plan p = base_plan(tp, 1, dp, 8 * dp);
    p.sharding = sh;
    p.recompute = rc;
    p.micro_batch = 1;
    p.seq_len = 4096;
    p.attn_unfused = p.sequence_parallel = -1;   /* base_plan resolved them under auto */
    p.fp8_recipe = FP8_NONE;
    if (name) {
        const stack_spec *k = stack_find(cat, name);
        assert_non_null(k);
        p.stack = *k;
        p.stack_given = 1;
    }
    return p;
}

#endif
