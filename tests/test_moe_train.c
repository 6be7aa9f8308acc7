/*
 * test_moe_train: expert parallelism in the training step model
 * (models/train_moe.c, models/training.c, models/memory.c).
 *
 * Each test compares two plans that differ in one mechanism and checks the
 * direction the mechanism must move the step or the memory; none asserts a
 * timing. Models: deepseek-v3 and mixtral-8x7b from the builtin catalog.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "catalogfix.h"
#include "tests/planfix.h"
#include "tests/trainfix.h"
#include "models/gpu.h"
#include "models/train_layer.h"
#include "models/train_moe.h"
#include "models/training.h"
#include "models/transformer.h"

/* A plan of tp x pp x dp GPUs with ep, micro-batch 1 of 4K tokens, ZeRO-1,
 * selective recompute, no MoE overlap. */
static train_plan moe_plan(int tp, int pp, int dp, int ep, int gb, precision prec) {
    train_plan p = planfix(tp, pp, dp, gb, 4096, prec);
    p.ep = ep;
    p.sharding = SHARD_ZERO1;
    p.recompute = RECOMPUTE_SELECTIVE;
    p.sequence_parallel = -1;
    p.attn_unfused = -1;
    p.moe_overlap = MOE_OVERLAP_NONE;
    return p;
}

/* Mixtral 8x7B on 2 DGX H100 nodes: tp 2, dp 8, ep as given. */
static train_plan mixtral_plan(int ep) { return moe_plan(2, 1, 8, ep, 64, PREC_BF16); }

static train_result step(const char *model, const char *node, const train_plan *p) {
    fabric f;
    fabric_for(&f, node, p->tp * p->pp * p->dp * p->cp);
    train_result r;
    assert_int_equal(train_step(catalog_llm(cat, model), p, &f, &r), 0);
    return r;
}

/* MoE plans run; the checks name what is wrong. */
static void test_checks(void **state) {
    (void)state;
    char why[256];
    const llm_spec *mx = catalog_llm(cat, "mixtral-8x7b");
    train_plan p = mixtral_plan(8);
    train_plan_defaults(&p);
    assert_int_equal(train_plan_check(mx, &p, why, sizeof why), 0);
    p.ep = 3;
    assert_int_equal(train_plan_check(mx, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "experts (8) must be a multiple of ep (3)"));
    p.ep = 16;                                   /* 8 experts over 16 GPUs */
    assert_int_equal(train_plan_check(mx, &p, why, sizeof why), -1);
    p.ep = 4;
    p.etp = 4;                                   /* etp above tp */
    assert_int_equal(train_plan_check(mx, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "etp (4) may not exceed tp (2)"));
    train_plan d = mixtral_plan(2);
    train_plan_defaults(&d);
    assert_int_equal(train_plan_check(catalog_llm(cat, "llama3-8b"), &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "mixture-of-experts"));
    d.ep = 1;
    d.schedule = PP_DUALPIPE;                    /* pp 1 */
    assert_int_equal(train_plan_check(catalog_llm(cat, "llama3-8b"), &d, why, sizeof why), -1);
}

/* Megatron-Core's account-for-embedding/loss-in-pipeline-split: pp x
 * virtual stages may reach layers + 2 (Llama 3.1 405B pp16 vp8 = 128 =
 * 126 + 2), not beyond; below the layers nothing is counted. */
static void test_pipeline_slots(void **state) {
    (void)state;
    char why[256];
    const llm_spec *m = catalog_llm(cat, "llama3.1-405b");
    assert_non_null(m);
    train_plan p = moe_plan(4, 16, 4, 1, 1536, PREC_BF16);
    p.virtual_stages = 8;
    train_plan_defaults(&p);
    assert_int_equal(train_plan_check(m, &p, why, sizeof why), 0);
    assert_int_equal(train_plan_pipeline_extra_slots(m, &p), 2);
    p.virtual_stages = 9;                         /* 144 > 128 */
    assert_int_equal(train_plan_check(m, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "embedding and loss"));
    p.virtual_stages = 4;                         /* 64 <= 126 */
    assert_int_equal(train_plan_check(m, &p, why, sizeof why), 0);
    assert_int_equal(train_plan_pipeline_extra_slots(m, &p), 0);
}

/* On GB200 NVL72 trays (4 GPUs, 72 in the NVLink domain) a TP group of 8
 * spans two trays and still talks over NVLink: the step is faster than on
 * the same trays taken as their own 4-GPU domains, where TP crosses the
 * NICs. An 8-GPU node is its own domain. */
static void test_rack_domain(void **state) {
    (void)state;
    const node_spec *n = catalog_node(cat, "gb200-nvl72");
    assert_non_null(n);
    node_spec tray = *n;
    tray.nvlink_domain = 0;
    fabric rack, trays, hgx;
    assert_int_equal(fabric_init(&rack, cat, n, 16), 0);
    assert_int_equal(fabric_init(&trays, cat, &tray, 16), 0);
    fabric_for(&hgx, "dgx-h100", 64);
    assert_int_equal(train_domain_gpus(&rack), 72);
    assert_int_equal(train_domain_gpus(&trays), 4);
    assert_int_equal(train_domain_gpus(&hgx), 8);
    const llm_spec *m = catalog_llm(cat, "llama3-70b");
    assert_non_null(m);
    train_plan p = moe_plan(8, 1, 8, 1, 64, PREC_BF16);
    train_plan_defaults(&p);
    train_result a, b;
    assert_int_equal(train_step(m, &p, &rack, &a), 0);
    assert_int_equal(train_step(m, &p, &trays, &b), 0);
    assert_true(a.step_s < b.step_s);
}

/* Model FLOPs count active parameters: Mixtral's are 12.9B of 46.7B. */
static void test_active_flops(void **state) {
    (void)state;
    train_plan p = mixtral_plan(8);
    train_result r = step("mixtral-8x7b", "dgx-h100", &p);
    assert_true(r.active_params < 0.3 * r.params);
    assert_int_equal(r.ep, 8);
    const llm_spec *m = catalog_llm(cat, "mixtral-8x7b");
    assert_true(r.model_flops_per_step == r.tokens_per_step * tf_model_flops_per_token(m, p.seq_len));
    assert_true(r.model_flops_per_step < r.tokens_per_step * 6 * 0.5 * r.params);
}

/* Experts shard over ep: weights, gradients and optimizer state per GPU
 * fall as ep grows. */
static void test_expert_memory(void **state) {
    (void)state;
    train_plan p1 = mixtral_plan(1), p8 = mixtral_plan(8);
    train_result a = step("mixtral-8x7b", "dgx-h100", &p1), b = step("mixtral-8x7b", "dgx-h100", &p8);
    assert_true(b.mem.weights_bytes < 0.4 * a.mem.weights_bytes);
    assert_true(b.mem.grads_bytes < a.mem.grads_bytes);
}

/* FSDP without pipelining with EP: a layer's routed experts are gathered
 * and reduced over the expert data-parallel group, each GPU's 1/ep of them,
 * not as dense weights over dp (Mixtral's experts are most of a layer). */
static void test_fsdp_experts(void **state) {
    (void)state;
    train_plan p1 = mixtral_plan(1), p8 = mixtral_plan(8);
    p1.sharding = p8.sharding = SHARD_FSDP;
    train_result a = step("mixtral-8x7b", "dgx-h100", &p1), b = step("mixtral-8x7b", "dgx-h100", &p8);
    assert_true(a.t.dp_comm_s > 0);
    assert_true(b.t.dp_comm_s < 0.5 * a.t.dp_comm_s);
}

/* The all-to-all: none without EP; on the critical path without overlap;
 * inside a node cheaper than across nodes; a2a overlap hides some. */
static void test_alltoall(void **state) {
    (void)state;
    train_plan p1 = mixtral_plan(1), p4 = mixtral_plan(4), p8 = mixtral_plan(8);
    train_result a = step("mixtral-8x7b", "dgx-h100", &p1);
    train_result in = step("mixtral-8x7b", "dgx-h100", &p4);    /* 4 GPUs of one node */
    train_result x = step("mixtral-8x7b", "dgx-h100", &p8);     /* 8 of them, 2 apart: 2 nodes */
    assert_true(a.t.ep_comm_s == 0);
    assert_true(in.t.ep_comm_s > 0);
    assert_true(x.t.ep_comm_s > in.t.ep_comm_s);
    train_plan o = mixtral_plan(8);
    o.moe_overlap = MOE_OVERLAP_A2A;
    train_result y = step("mixtral-8x7b", "dgx-h100", &o);
    assert_true(y.t.ep_comm_s < x.t.ep_comm_s);
}

/* Load imbalance slows the busiest expert GPU; a capacity factor caps it. */
static void test_imbalance(void **state) {
    (void)state;
    train_plan p = mixtral_plan(8);
    train_result even = step("mixtral-8x7b", "dgx-h100", &p);
    p.expert_imbalance = 1.5;
    train_result skew = step("mixtral-8x7b", "dgx-h100", &p);
    assert_true(skew.step_s > even.step_s);
    p.expert_imbalance = 3;
    p.capacity_factor = 1.5;
    train_result capped = step("mixtral-8x7b", "dgx-h100", &p);
    assert_true(capped.step_s == skew.step_s);
}

/* DeepSeek-V3 across nodes: node-limited routing sends fewer copies over
 * the NICs than the alltoall dispatcher's k; DualPipe's bubble is smaller than 1F1B's and its overlap hides
 * the all-to-all. */
static train_plan deepseek_plan(void) { return moe_plan(1, 16, 16, 16, 512, PREC_FP8); }

static void test_deepseek(void **state) {
    (void)state;
    train_plan p = deepseek_plan();
    p.moe_dispatcher = MOE_DISPATCHER_ALLTOALL;   /* every copy through the NICs unless node-limited */
    train_result all = step("deepseek-v3", "hgx-h800", &p);
    p.route_nodes = 1;
    train_result lim = step("deepseek-v3", "hgx-h800", &p);
    assert_true(lim.t.ep_comm_s < all.t.ep_comm_s);
    train_plan d = deepseek_plan();
    d.schedule = PP_DUALPIPE;
    d.moe_overlap = (moe_overlap)-1;            /* dualpipe's own overlap */
    train_result dp = step("deepseek-v3", "hgx-h800", &d);
    assert_int_equal(dp.schedule, PP_DUALPIPE);
    assert_true(dp.t.pp_bubble_s < all.t.pp_bubble_s);
    assert_true(dp.t.ep_comm_s < all.t.ep_comm_s);
    assert_true(dp.mem.weights_bytes > all.mem.weights_bytes);   /* two chunks a GPU */
}

/* A stack whose all-to-all kernels hold SMs (comm-sms, DeepSeek-V3
 * section 3.5.1): under an overlap the compute beside them runs on the
 * rest, so more SMs held means a slower step, and the hidden traffic no
 * longer costs overlap_slowdown; without an overlap, or holding every SM
 * (no partition possible), the stack's figure changes nothing. */
static void test_comm_sms(void **state) {
    (void)state;
    train_plan p = deepseek_plan();
    p.moe_overlap = MOE_OVERLAP_A2A;
    p.stack = *stack_find(cat, "hai-llm-2024");
    p.stack_given = 1;
    p.stack.comm_sms = 0;
    train_result none = step("deepseek-v3", "hgx-h800", &p);
    p.stack.comm_sms = 20;
    train_result c20 = step("deepseek-v3", "hgx-h800", &p);
    p.stack.comm_sms = 40;
    train_result c40 = step("deepseek-v3", "hgx-h800", &p);
    assert_true(c40.t.compute_s > c20.t.compute_s);
    assert_true(c20.t.compute_s != none.t.compute_s);
    p.stack.comm_sms = 132;                     /* every SM of the H800 */
    train_result all = step("deepseek-v3", "hgx-h800", &p);
    assert_true(all.step_s == none.step_s);
    p.moe_overlap = MOE_OVERLAP_NONE;
    train_result serial = step("deepseek-v3", "hgx-h800", &p);
    p.stack.comm_sms = 0;
    train_result serial0 = step("deepseek-v3", "hgx-h800", &p);
    assert_true(serial.step_s == serial0.step_s);
}

/* FP4 GEMMs on a GPU with an FP4 peak: faster than FP8, and the saved
 * linear inputs smaller. */
static void test_fp4(void **state) {
    (void)state;
    train_plan p = mixtral_plan(8);
    p.precision = PREC_FP8;
    train_result a = step("mixtral-8x7b", "dgx-b200", &p);
    p.precision = PREC_FP4;
    p.fp4_recipe = FP4_MXFP4;
    train_result b = step("mixtral-8x7b", "dgx-b200", &p);
    assert_true(b.t.compute_s < a.t.compute_s);
    assert_true(b.mem.activations_bytes < a.mem.activations_bytes);
    assert_true(fp4_element_bytes(FP4_NVFP4) == 0.5 + 1.0 / 16);
    assert_true(fp4_element_bytes(FP4_MXFP4) == 0.5 + 1.0 / 32);
}

/* The routed experts' FP8 casts (Transformer Engine GroupedLinear's
 * split_quantize per expert): BF16 casts nothing; under MXFP8 the weights'
 * casts fall to the forward exactly when the stack keeps no FP8 weight
 * copies, and the backward casts only output gradients, whatever the
 * weight cache. */
static void test_expert_casts(void **state) {
    (void)state;
    train_plan p = moe_plan(1, 1, 8, 8, 64, PREC_BF16);
    assert_true(train_cast_bytes_per_elem(&p) == 0);
    p.precision = PREC_FP8;
    p.fp8_recipe = FP8_MXFP8;
    double per = train_cast_bytes_per_elem(&p);
    assert_true(per == fp8_cast_bytes(FP8_MXFP8));
    const llm_spec *m = catalog_llm(cat, "qwen3-30b-a3b");
    assert_non_null(m);
    fabric f;
    fabric_for(&f, "dgx-b200", 8);
    moe_ffn_cost kept, cast;
    p.stack.fp8_weight_cache = 1;
    moe_ffn_costs(m, &p, &f, 4096, &kept);
    p.stack.fp8_weight_cache = 0;
    moe_ffn_costs(m, &p, &f, 4096, &cast);
    double fe = m->expert_ffn_hidden > 0 ? m->expert_ffn_hidden : m->ffn_hidden;
    double w = kept.local_experts * 3 * m->hidden * fe;   /* gated: up, gate, down */
    assert_true(w > 0 && cast.fwd > kept.fwd);
    assert_true(fabs(cast.fwd - kept.fwd - gpu_memory_s(f.gpu, w * per)) < 1e-12);
    assert_true(cast.bwd == kept.bwd);
}

/* gpt-oss-120b's routed experts (hidden 2880, 128 experts of 2880, top-4)
 * are priced expert by expert on each expert's own GEMM shape, on the GPU's
 * efficiency curve (gemm_half_dim): raising the half-efficiency size slows
 * the layer by exactly the local experts' GEMM pairs and the router, so no
 * merged or curve-free pricing of the grouped GEMM hides there (issue 20's
 * fifth round, docs/moe-training.md). */
static double gemm_pair_s(const gpu_spec *g, const train_plan *p, double rows, double h, double fe) {
    return train_gemm_s(g, p, rows, 2 * fe, h) + train_gemm_s(g, p, rows, h, fe);
}

static void test_expert_gemm_shape(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "gpt-oss-120b");
    assert_non_null(m);
    train_plan p = moe_plan(1, 1, 8, 8, 64, PREC_BF16);
    train_plan_defaults(&p);
    fabric f;
    fabric_for(&f, "dgx-b200", 8);
    gpu_spec wide = *f.gpu;
    wide.gemm_half_dim = 4 * (f.gpu->gemm_half_dim > 0 ? f.gpu->gemm_half_dim : 256);
    memset(wide.gemm_half_dim_by_prec, 0, sizeof wide.gemm_half_dim_by_prec);
    double tokens = 4 * 4096;
    moe_ffn_cost base, slow;
    moe_ffn_costs(m, &p, &f, tokens, &base);
    const gpu_spec *g = f.gpu;
    f.gpu = &wide;
    moe_ffn_costs(m, &p, &f, tokens, &slow);
    assert_true(base.local_experts == 16 && base.expert_rows == tokens * 4 / 16);
    double fe = m->ffn_hidden, h = m->hidden, rows = base.expert_rows;
    double pair = gemm_pair_s(&wide, &p, rows, h, fe) - gemm_pair_s(g, &p, rows, h, fe);
    double router = gpu_gemm_s(&wide, PREC_BF16, tokens, m->experts, h, 1)
                  - gpu_gemm_s(g, PREC_BF16, tokens, m->experts, h, 1);
    assert_true(pair > 0 && slow.fwd > base.fwd);
    assert_true(fabs(slow.fwd - base.fwd - (base.local_experts * pair + router)) < 1e-12);
}

/* The alltoall dispatcher's host sync (train_plan.h, moe_dispatcher): a MoE
 * layer's host time grows by the node's collective launch time once per
 * forward pass, a recomputed forward included; a dense layer and the flex
 * dispatcher pay nothing, and the step grows by that time per MoE layer
 * per micro-batch. */
static void test_dispatch_sync(void **state) {
    (void)state;
    const llm_spec *m = catalog_llm(cat, "qwen3-30b-a3b");
    assert_non_null(m);
    train_plan p = moe_plan(1, 1, 8, 8, 64, PREC_BF16);
    p.recompute = RECOMPUTE_NONE;
    train_plan_defaults(&p);
    fabric f;
    fabric_for(&f, "dgx-b200", 8);
    train_params q;
    train_params_default(&q);
    train_layer_cost flex, a2a, dense, full;
    train_layer_costs(m, &p, &f, &q, TRAIN_LAYER_MOE, &flex);
    train_result rf = step("qwen3-30b-a3b", "dgx-b200", &p);
    p.moe_dispatcher = MOE_DISPATCHER_ALLTOALL;
    train_layer_costs(m, &p, &f, &q, TRAIN_LAYER_MOE, &a2a);
    train_layer_costs(m, &p, &f, &q, TRAIN_LAYER_DENSE, &dense);
    train_result ra = step("qwen3-30b-a3b", "dgx-b200", &p);
    double sync = f.node->coll_launch_s;
    assert_true(sync > 0 && train_moe_dispatch_sync_s(&p, &f) == sync);
    assert_true(fabs(a2a.host - flex.host - sync) < 1e-15 && dense.host == flex.host);
    double mb = ra.micro_batches, grew = ra.step_s - rf.step_s;
    assert_true(fabs(grew - mb * m->layers * sync) < 1e-9 * ra.step_s);
    p.recompute = RECOMPUTE_FULL;
    train_layer_costs(m, &p, &f, &q, TRAIN_LAYER_MOE, &full);
    p.moe_dispatcher = MOE_DISPATCHER_FLEX;
    train_layer_costs(m, &p, &f, &q, TRAIN_LAYER_MOE, &flex);
    assert_true(fabs(full.host - flex.host - 2 * sync) < 1e-15);
    assert_int_equal(moe_dispatcher_parse("alltoall"), MOE_DISPATCHER_ALLTOALL);
    assert_int_equal(moe_dispatcher_parse("all2all"), -1);
}

/* The flex dispatcher across nodes (DeepEP, HybridEP) sends a token once
 * per node its experts fall in and forwards it over NVLink there; the
 * alltoall dispatcher sends every copy through the NICs. Inside a node the
 * two are priced alike. */
static void test_flex_nodes(void **state) {
    (void)state;
    assert_true(fabs(train_moe_groups_hit(128, 8, 2) - 1.9938082714464158) < 1e-12);
    assert_true(fabs(train_moe_groups_hit(256, 8, 8) - 5.294652000382479) < 1e-12);
    assert_true(fabs(train_moe_groups_hit(8, 2, 2) - 1.5714285714285714) < 1e-12);
    assert_true(train_moe_groups_hit(16, 9, 2) == 2 && train_moe_groups_hit(64, 8, 1) == 1);
    llm_spec m = *catalog_llm(cat, "qwen3-30b-a3b");
    m.experts = 16;                     /* one a GPU, 8 a node; top-9 reaches both nodes */
    m.experts_per_token = 9;
    fabric f;
    fabric_for(&f, "dgx-h100", 16);
    train_plan p = moe_plan(1, 1, 16, 16, 64, PREC_BF16);   /* ep 16 over 2 nodes */
    train_plan_defaults(&p);
    moe_ffn_cost flex, nccl, lim, in_flex, in_nccl;
    moe_ffn_costs(&m, &p, &f, 4096, &flex);
    p.moe_dispatcher = MOE_DISPATCHER_ALLTOALL;
    moe_ffn_costs(&m, &p, &f, 4096, &nccl);
    p.route_nodes = 2;                  /* node-limited to both nodes: one copy a node */
    moe_ffn_costs(&m, &p, &f, 4096, &lim);
    assert_true(flex.a2a_fwd < nccl.a2a_fwd && flex.a2a_bwd < nccl.a2a_bwd);
    assert_true(flex.a2a_fwd == lim.a2a_fwd && flex.a2a_bwd == lim.a2a_bwd);
    train_plan q = moe_plan(1, 1, 16, 8, 64, PREC_BF16);    /* ep 8: one node */
    train_plan_defaults(&q);
    moe_ffn_costs(&m, &q, &f, 4096, &in_flex);
    q.moe_dispatcher = MOE_DISPATCHER_ALLTOALL;
    moe_ffn_costs(&m, &q, &f, 4096, &in_nccl);
    assert_true(in_flex.a2a_fwd > 0 && in_flex.a2a_fwd == in_nccl.a2a_fwd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checks),     cmocka_unit_test(test_active_flops),
        cmocka_unit_test(test_expert_memory), cmocka_unit_test(test_alltoall),
        cmocka_unit_test(test_fsdp_experts),
        cmocka_unit_test(test_imbalance),  cmocka_unit_test(test_deepseek),
        cmocka_unit_test(test_fp4),        cmocka_unit_test(test_pipeline_slots),
        cmocka_unit_test(test_rack_domain), cmocka_unit_test(test_comm_sms),
        cmocka_unit_test(test_expert_casts), cmocka_unit_test(test_expert_gemm_shape),
        cmocka_unit_test(test_dispatch_sync), cmocka_unit_test(test_flex_nodes),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
