/*
 * test_serving_disagg: disaggregated prefill and decode (issue 21;
 * docs/disaggregated-serving.md): the KV hand-off model
 * (models/serving_kv) and the two pools in the world (sim/serving_disagg).
 *
 * Expected figures and where they come from:
 * - KV bytes of a prompt: 2 (K and V) x layers x kv_heads x head_dim x
 *   element bytes per token. Llama 3 70B in fp8: 2 x 80 x 8 x 128 x 1 =
 *   163,840 bytes a token, so 1,000 tokens are 163.84 MB exactly.
 * - A copy inside one NVLink domain beats one over the NICs (NVLink 450
 *   GB/s a GPU on an H100 against one 400 Gb/s NIC a GPU); more GPUs on both
 *   sides carry it over more links; layer by layer it hides behind the
 *   prompt's compute down to one layer's share.
 * - Decode steps no longer carry prompt chunks, so with long prompts the
 *   decode pool's time per output token is below the co-located one's on
 *   the same GPUs (DistServe, Zhong et al. OSDI'24, section 2.2).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/catalogfix.h"

#include "tests/simrun.h"

#include "models/catalog.h"
#include "models/serving.h"
#include "models/serving_kv.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/serving.h"
#include "sim/world.h"

static const service_result *svc(const run *r) { return world_service(r->w, 0); }

/* A scenario of `nodes` DGX H100s and one service: attrs on <inference>,
 * body its children. */
static char *one_service(char *buf, size_t len, int nodes, const char *attrs, const char *body) {
    snprintf(buf, len,
             "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"%d\"/></cluster>"
             "<workload><inference name=\"svc\" %s>%s</inference></workload></scenario>",
             nodes, attrs, body);
    return buf;
}


static serve_model model_on(const char *llm, int tp, precision w, fabric *f) {
    const node_spec *nd = catalog_node(cat, "dgx-h100");
    assert_int_equal(fabric_init(f, cat, nd, 2), 0);
    serve_model sm;
    char why[256];
    if (serve_model_init(&sm, catalog_llm(cat, llm), catalog_gpu(cat, nd->gpu), f, tp, w, serve_default_kv(w), 8192,
                         NULL, why, sizeof why) != 0)
        fail_msg("%s tp %d: %s", llm, tp, why);
    return sm;
}

/* ---- the hand-off model ----------------------------------------------------- */

static void test_kv_bytes(void **state) {
    (void)state;
    fabric f;
    serve_model sm = model_on("llama3-70b", 2, PREC_FP8, &f);
    assert_true(fabs(serve_kv_transfer_bytes(&sm, 1000) - 163.84e6) < 1);
    assert_true(serve_kv_transfer_bytes(&sm, 0) == 0);
    assert_true(serve_kv_transfer_bytes(&sm, -1) < 0);
    serve_model b = model_on("llama3-70b", 2, PREC_BF16, &f);
    assert_true(fabs(serve_kv_transfer_bytes(&b, 1000) - 2 * 163.84e6) < 1);
}

static void test_kv_time(void **state) {
    (void)state;
    fabric f;
    serve_model sm = model_on("llama3-70b", 2, PREC_FP8, &f);
    double bytes = serve_kv_transfer_bytes(&sm, 4000);
    serve_kv_link nv = { 2, 2, 1, 0, 80, 0 }, net = { 2, 2, 0, 0, 80, 0 }, wide = { 8, 8, 0, 0, 80, 0 };
    double t_nv = serve_kv_transfer_s(&f, bytes, &nv), t_net = serve_kv_transfer_s(&f, bytes, &net);
    double t_wide = serve_kv_transfer_s(&f, bytes, &wide);
    printf("  Llama 3 70B fp8, 4000 tokens (%.0f MB): NVLink %.2f ms, NICs %.2f ms, 8 to 8 GPUs %.2f ms\n",
           bytes / 1e6, t_nv * 1e3, t_net * 1e3, t_wide * 1e3);
    assert_true(t_nv > 0 && t_nv < t_net);
    assert_true(t_wide < t_net);
    /* over one 400 Gb/s NIC a GPU, never faster than its line rate */
    assert_true(t_net >= bytes / 2 / 50e9);
    /* layer by layer: hidden behind the prompt's compute down to one layer's share */
    serve_kv_link lw = net;
    lw.layerwise = 1;
    lw.overlap_s = 10;
    assert_true(fabs(serve_kv_transfer_s(&f, bytes, &lw) - t_net / 80) < 1e-12);
    lw.overlap_s = t_net / 2;
    assert_true(fabs(serve_kv_transfer_s(&f, bytes, &lw) - t_net / 2) < 1e-9);
    serve_kv_link bad = { 0, 2, 0, 0, 80, 0 };
    assert_true(serve_kv_transfer_s(&f, bytes, &bad) < 0);
    assert_true(serve_kv_transfer_s(&f, -1, &net) < 0);
}

/* ---- the two pools in the world --------------------------------------------- */

static const char *chat_body = "<arrivals process=\"poisson\" rate=\"6/s\" count=\"3000\"/>"
                               "<requests input-tokens=\"3000\" output-tokens=\"200\"/>"
                               "<slo ttft=\"2s\" tpot=\"40ms\" percentile=\"90\"/>";

/* Same 8 GPUs: 4 co-located replicas of tp 2, or 2 prefill + 2 decode. */
static void test_disaggregated_vs_colocated(void **state) {
    (void)state;
    char xml[2048];
    one_service(xml, sizeof xml, 1, "model=\"llama3-70b\" precision=\"fp8\" tp=\"2\" replicas=\"4\" max-batch=\"256\"",
                chat_body);
    run co = simulate(xml, 1);
    char body[1024];
    snprintf(body, sizeof body, "<prefill replicas=\"2\"/><decode replicas=\"2\"/>%s", chat_body);
    one_service(xml, sizeof xml, 1,
                "model=\"llama3-70b\" precision=\"fp8\" tp=\"2\" max-batch=\"256\" disaggregated=\"true\"", body);
    run dg = simulate(xml, 1);
    const service_result *c = svc(&co), *d = svc(&dg);
    printf("  3000/200 tokens at 6/s on 8 H100s: co-located TTFT p99 %.0f ms TPOT p99 %.1f ms; "
           "2P+2D TTFT p99 %.0f ms TPOT p99 %.1f ms, KV copy p50 %.2f ms\n",
           c->ttft_p99_s * 1e3, c->tpot_p99_s * 1e3, d->ttft_p99_s * 1e3, d->tpot_p99_s * 1e3,
           d->kv_transfer_p50_s * 1e3);
    assert_int_equal(c->disaggregated, 0);
    assert_int_equal(d->disaggregated, 1);
    assert_int_equal(d->requests, 3000);
    assert_int_equal(d->submitted, 3000);
    assert_true(d->output_tokens == c->output_tokens);
    /* no prompt in a decode step */
    assert_true(d->tpot_p99_s < c->tpot_p99_s);
    /* one node: every cache over NVLink, each 3000 tokens of 163,840 bytes */
    assert_int_equal(d->kv_transfers_nvlink, 3000);
    assert_int_equal(d->kv_transfers_network, 0);
    assert_true(fabs(d->kv_transfer_bytes_mean - 3000 * 163840.0) < 1);
    assert_true(d->kv_transfer_p50_s > 0 && d->kv_transfer_p99_s >= d->kv_transfer_p50_s);
    /* the pools: their GPUs add up to the service's, and each worked */
    assert_int_equal(d->pool[0].gpus_peak, 4);
    assert_int_equal(d->pool[1].gpus_peak, 4);
    assert_int_equal(d->gpus_peak, 8);
    assert_int_equal(d->replicas, 4);
    assert_true(d->pool[0].iterations > 0 && d->pool[1].iterations > 0);
    assert_true(fabs(d->gpu_hours - d->pool[0].gpu_hours - d->pool[1].gpu_hours) < 1e-9);
    assert_true(d->pool[1].batch_mean > d->pool[0].batch_mean);
    assert_true(d->energy_kwh > 0 && d->cost_usd > 0);
    done(&co);
    done(&dg);
}

/* One replica a node: the cache crosses the NICs, and takes longer than
 * inside a node. */
static void test_transfer_between_nodes(void **state) {
    (void)state;
    char xml[2048], body[1024];
    snprintf(body, sizeof body, "<prefill replicas=\"1\" tp=\"8\"/><decode replicas=\"1\" tp=\"8\"/>%s", chat_body);
    one_service(xml, sizeof xml, 2, "model=\"llama3-70b\" precision=\"fp8\" disaggregated=\"true\"", body);
    run net = simulate(xml, 1);
    snprintf(body, sizeof body, "<prefill replicas=\"1\" tp=\"4\"/><decode replicas=\"1\" tp=\"4\"/>%s", chat_body);
    one_service(xml, sizeof xml, 1, "model=\"llama3-70b\" precision=\"fp8\" disaggregated=\"true\"", body);
    run nv = simulate(xml, 1);
    printf("  KV copy p50: %.2f ms over the NICs (tp 8 to tp 8), %.2f ms over NVLink (tp 4 to tp 4)\n",
           svc(&net)->kv_transfer_p50_s * 1e3, svc(&nv)->kv_transfer_p50_s * 1e3);
    assert_int_equal(svc(&net)->kv_transfers_network, 3000);
    assert_int_equal(svc(&net)->kv_transfers_nvlink, 0);
    assert_int_equal(svc(&nv)->kv_transfers_nvlink, 3000);
    assert_true(svc(&net)->kv_transfer_p50_s > svc(&nv)->kv_transfer_p50_s);
    assert_int_equal(svc(&net)->requests, 3000);
    done(&nv);
    /* layer by layer, the copy hides behind the prompt's compute */
    snprintf(body, sizeof body, "<prefill replicas=\"1\" tp=\"8\"/><decode replicas=\"1\" tp=\"8\"/>%s", chat_body);
    one_service(xml, sizeof xml, 2,
                "model=\"llama3-70b\" precision=\"fp8\" disaggregated=\"true\" kv-transfer=\"layerwise\"", body);
    run lw = simulate(xml, 1);
    assert_true(svc(&lw)->kv_transfer_p50_s < svc(&net)->kv_transfer_p50_s);
    done(&lw);
    done(&net);
}

/* A one-token answer is done where its prompt ran: nothing moves. On-demand
 * KV and a small decode pool still finish everything (preempted decodes
 * are recomputed in the decode pool). */
static void test_edges(void **state) {
    (void)state;
    char xml[2048];
    one_service(xml, sizeof xml, 1, "model=\"llama3-8b\" disaggregated=\"true\"",
                "<arrivals process=\"offline\" count=\"500\"/><requests input-tokens=\"500\" output-tokens=\"1\"/>");
    run one = simulate(xml, 1);
    assert_int_equal(svc(&one)->requests, 500);
    assert_int_equal(svc(&one)->kv_transfers_nvlink + svc(&one)->kv_transfers_network, 0);
    assert_true(svc(&one)->kv_transfer_p50_s < 0);
    done(&one);
    one_service(xml, sizeof xml, 1,
                "model=\"llama3-70b\" precision=\"fp8\" disaggregated=\"true\" kv-allocation=\"on-demand\" "
                "kv-memory-fraction=\"0.05\"",
                "<prefill replicas=\"1\" tp=\"4\"/><decode replicas=\"1\" tp=\"2\" max-batch=\"512\"/>"
                "<arrivals process=\"offline\" count=\"600\"/><requests input-tokens=\"2000\" output-tokens=\"800\"/>");
    run tight = simulate(xml, 1);
    printf("  decode cache 5%% of memory: %lld preemptions, %lld/600 requests\n", (long long)svc(&tight)->preemptions,
           (long long)svc(&tight)->requests);
    assert_true(svc(&tight)->preemptions > 0);
    assert_int_equal(svc(&tight)->requests, 600);
    done(&tight);
}

/* Failures take decode and prefill replicas away; every request still
 * completes, and the same seed gives the same figures. */
static void test_failures_and_determinism(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"t\" seed=\"3\"><cluster><nodes type=\"dgx-h100\" count=\"3\"/></cluster>"
        "<failures><failure component=\"node\" mtbf=\"3h\" mttr=\"20min\"/></failures>"
        "<workload><inference name=\"svc\" model=\"llama3-8b\" disaggregated=\"true\" max-batch=\"64\">"
        "<prefill replicas=\"1\" tp=\"8\"/><decode replicas=\"1\" tp=\"8\"/>"
        "<arrivals process=\"poisson\" rate=\"10/s\" duration=\"8h\"/>"
        "<requests input-tokens=\"1000\" output-tokens=\"300\"/></inference></workload></scenario>";
    run a = simulate(xml, 3), b = simulate(xml, 3);
    const service_result *s = svc(&a);
    printf("  %lld replica losses, %lld restarted, %lld/%lld requests\n", (long long)s->replica_losses,
           (long long)s->requests_restarted, (long long)s->requests, (long long)s->submitted);
    assert_true(s->replica_losses > 0);
    assert_int_equal(s->requests, s->submitted);
    assert_true(s->ttft_p99_s == svc(&b)->ttft_p99_s && s->tpot_p99_s == svc(&b)->tpot_p99_s);
    assert_true(s->kv_transfer_p99_s == svc(&b)->kv_transfer_p99_s && s->energy_kwh == svc(&b)->energy_kwh);
    done(&a);
    done(&b);
}

static void test_build_errors(void **state) {
    (void)state;
    char xml[2048], err[1024];
    one_service(xml, sizeof xml, 1, "model=\"llama3-8b\"", "<prefill replicas=\"2\"/>");
    assert_non_null(strstr(build_error(xml, err, sizeof err), "<prefill> needs disaggregated=\"true\""));
    one_service(xml, sizeof xml, 1, "model=\"llama3-8b\" kv-transfer=\"layerwise\"", "");
    assert_non_null(strstr(build_error(xml, err, sizeof err), "kv-transfer applies to a disaggregated"));
    one_service(xml, sizeof xml, 1, "model=\"llama3-8b\" disaggregated=\"true\"", "<decode tp=\"3\"/>");
    assert_non_null(strstr(build_error(xml, err, sizeof err), "<decode tp=\"3\">: tp must divide"));
    one_service(xml, sizeof xml, 1, "model=\"llama3-8b\" disaggregated=\"true\"",
                "<autoscale max-replicas=\"2\" target=\"4\"/>");
    assert_non_null(strstr(build_error(xml, err, sizeof err), "does not autoscale"));
    one_service(xml, sizeof xml, 1, "model=\"llama3-8b\" disaggregated=\"true\"",
                "<prefill replicas=\"1\" tp=\"4\"/><decode replicas=\"2\" tp=\"4\"/>");
    build_error(xml, err, sizeof err);
    assert_non_null(strstr(err, "<inference name=\"svc.decode\">: replica 2 of 2 needs 4 free GPUs"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_bytes),
        cmocka_unit_test(test_kv_time),
        cmocka_unit_test(test_disaggregated_vs_colocated),
        cmocka_unit_test(test_transfer_between_nodes),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_failures_and_determinism),
        cmocka_unit_test(test_build_errors),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
