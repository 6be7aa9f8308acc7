/*
 * test_train_dp_bytes: the width of the data-parallel collectives
 * (models/train_dp_bytes.c) and its effect on the training step.
 *
 * A stack that reduces gradients in bf16 (grad-reduce-bf16) moves half the
 * bytes of an fp32 reduction; FP8 primary weights (fp8-param) under a
 * per-tensor FP8 recipe are all-gathered at one byte, MXFP8 ones in bf16.
 * The step checks compare one plan with and without a stack field and check
 * the direction the exposed data-parallel time must move; none asserts a
 * timing. Model: llama3-70b on DGX H100 nodes, tp 8, pp 4, dp 4 (the
 * reduction crosses nodes and outlasts the last backward it hides under).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "catalogfix.h"
#include "tests/planfix.h"
#include "models/stack.h"
#include "models/train_dp_bytes.h"
#include "models/training.h"

/* llama3-70b, tp 8 x pp 4 x dp 4, 32 sequences of 4K, ZeRO-1, no
 * recomputation, under the named stack; precision and recipe as given. */
static train_plan dp_plan(const char *stack, precision prec, fp8_recipe r) {
    train_plan p = planfix(8, 4, 4, 32, 4096, prec);
    p.sharding = SHARD_ZERO1;
    p.sequence_parallel = -1;
    p.attn_unfused = -1;
    const stack_spec *k = stack_find(cat, stack);
    assert_non_null(k);
    p.stack = *k;
    p.stack_given = 1;
    p.fp8_recipe = r;
    train_plan_defaults(&p);
    return p;
}

static double dp_exposed_s(const train_plan *p) {
    const node_spec *n = catalog_node(cat, "dgx-h100");
    assert_non_null(n);
    fabric f;
    assert_int_equal(fabric_init(&f, cat, n, p->tp * p->pp * p->dp / n->gpus), 0);
    train_result r;
    assert_int_equal(train_step(catalog_llm(cat, "llama3-70b"), p, &f, &r), 0);
    assert_true(r.t.dp_comm_s > 0);
    return r.t.dp_comm_s;
}

/* The byte widths: fp32 gradients unless the stack reduces in bf16 (or the
 * job is fp16); FP8 weights gathered at one byte only for per-tensor
 * recipes with fp8-param. */
static void test_widths(void **state) {
    (void)state;
    train_params q;
    train_plan p = dp_plan("megatron-core-2023", PREC_BF16, FP8_NONE);
    train_params_default(&q);
    assert_true(train_dp_grad_bytes(&p, &q) == 4);
    assert_true(train_dp_param_bytes(&p) == 2);
    p.stack.grad_reduce_bf16 = 1;
    assert_true(train_dp_grad_bytes(&p, &q) == 2);
    p = dp_plan("megatron-core-2025", PREC_FP8, FP8_DELAYED);
    assert_true(train_dp_param_bytes(&p) == 1);
    p = dp_plan("megatron-core-2025", PREC_FP8, FP8_TENSORWISE);
    assert_true(train_dp_param_bytes(&p) == 1);
    p = dp_plan("megatron-core-2025", PREC_FP8, FP8_MXFP8);
    assert_true(train_dp_param_bytes(&p) == 2);
    p = dp_plan("megatron-core-2025", PREC_BF16, FP8_NONE);
    assert_true(train_dp_param_bytes(&p) == 2);
    p = dp_plan("megatron-core-2024", PREC_FP8, FP8_DELAYED);   /* bf16 weights */
    assert_true(train_dp_param_bytes(&p) == 2);
}

/* Exposed data-parallel time of the plan without one stack field minus
 * with it: 0 gradient width, 1 FP8 weights. */
static double saving_s(train_plan on, int field) {
    train_plan off = on;
    if (field == 0) off.stack.grad_reduce_bf16 = 0;
    else off.stack.fp8_param = 0;
    return dp_exposed_s(&off) - dp_exposed_s(&on);
}

/* bf16 gradient reduction exposes less data-parallel time than fp32. */
static void test_bf16_reduction_step(void **state) {
    (void)state;
    assert_true(saving_s(dp_plan("megatron-core-2024", PREC_BF16, FP8_NONE), 0) > 0);
}

/* FP8 primary weights gather at one byte (delayed scaling); MXFP8 weights
 * gather in bf16, so fp8-param does not move an MXFP8 step's gather. */
static void test_fp8_gather_step(void **state) {
    (void)state;
    assert_true(saving_s(dp_plan("megatron-core-2025", PREC_FP8, FP8_DELAYED), 1) > 0);
    assert_true(saving_s(dp_plan("megatron-core-2025", PREC_FP8, FP8_MXFP8), 1) == 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widths),
        cmocka_unit_test(test_bf16_reduction_step),
        cmocka_unit_test(test_fp8_gather_step),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
