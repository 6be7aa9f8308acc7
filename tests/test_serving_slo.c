/*
 * test_serving_slo: request classes, their SLOs and admission priority,
 * and the figures of each class and each multiplexed model
 * (docs/serving-slo.md), through the simulator.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/simrun.h"

#include "sim/serving.h"

/* One Llama 3.1 8B replica on an H100; %s: arrivals, %s: requests, slo and classes. */
static const char *SVC =
    "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster><workload>"
    "<inference name=\"s\" model=\"llama3.1-8b\" tp=\"1\" replicas=\"1\" max-batch=\"64\">"
    "%s%s</inference></workload></scenario>";

static run run_svc(const char *arrivals, const char *body) {
    char xml[4096];
    snprintf(xml, sizeof xml, SVC, arrivals, body);
    return simulate(xml, 7);
}

static const service_part_result *class_named(const service_result *r, const char *name) {
    for (int k = 0; k < r->n_classes; k++)
        if (!strcmp(r->classes[k].name, name)) return &r->classes[k];
    fail_msg("no class %s", name);
    return NULL;
}

/* The classes partition the requests: their counts, tokens and SLO
 * goodputs add up to the service's; each class's lengths are its own
 * (fixed distributions: exact); shares hold within a binomial margin. */
static void test_partition(void **state) {
    (void)state;
    run r = run_svc("<arrivals process=\"poisson\" rate=\"8/s\" count=\"4000\"/>",
                    "<slo ttft=\"300ms\" tpot=\"30ms\"/>"
                    "<class name=\"short\" share=\"3\" input-tokens=\"200\" output-tokens=\"50\"/>"
                    "<class name=\"long\" share=\"1\" input-tokens=\"3000\" output-tokens=\"400\">"
                    "<slo ttft=\"2s\" e2e=\"60s\" percentile=\"90\"/></class>");
    const service_result *s = world_service(r.w, 0);
    assert_int_equal(s->n_classes, 2);
    assert_int_equal(s->n_by_model, 0);
    const service_part_result *a = class_named(s, "short"), *b = class_named(s, "long");
    assert_int_equal(a->requests + b->requests, s->requests);
    assert_int_equal(a->submitted + b->submitted, s->submitted);
    assert_float_equal(a->output_tokens + b->output_tokens, s->output_tokens, 1e-6);
    assert_float_equal(a->input_tokens, 200.0 * a->submitted, 1e-6);
    assert_float_equal(b->output_tokens, 400.0 * b->requests, 1e-6);
    double share = (double)a->submitted / (double)s->submitted;
    assert_true(fabs(share - 0.75) < 0.03);              /* 4.4 standard deviations of 4000 draws */
    double goodput = s->requests_per_s * s->slo_attainment;
    assert_float_equal(a->goodput_requests_per_s + b->goodput_requests_per_s, goodput, 1e-9 * goodput);
    assert_float_equal(b->slo.ttft_s, 2, 0);
    assert_float_equal(b->slo.tpot_s, 0, 0);              /* its own <slo> replaces the service's */
    assert_float_equal(b->slo.e2e_s, 60, 0);
    assert_float_equal(a->slo.tpot_s, 0.03, 0);           /* no <slo>: the service's */
    assert_int_equal(s->slo_met, a->slo_met && b->slo_met);
    assert_true(b->ttft_p99_s > a->ttft_p99_s);           /* 15x the prompt */
    done(&r);
}

/* A bound that no request can meet, and one every request meets. */
static void test_e2e_bound(void **state) {
    (void)state;
    const char *arr = "<arrivals process=\"poisson\" rate=\"2/s\" count=\"300\"/>";
    run tight = run_svc(arr, "<slo e2e=\"1ms\"/>");
    run loose = run_svc(arr, "<slo e2e=\"1h\"/>");
    run none = run_svc(arr, "");
    assert_float_equal(world_service(tight.w, 0)->slo_attainment, 0, 0);
    assert_float_equal(world_service(loose.w, 0)->slo_attainment, 1, 0);
    assert_float_equal(world_service(none.w, 0)->ttft_p99_s, world_service(loose.w, 0)->ttft_p99_s, 0);
    done(&tight);
    done(&loose);
    done(&none);
}

/* One class that repeats the service's <requests> and <slo> draws nothing
 * more: the service's figures are those of the run without classes. */
static void test_one_class_is_no_class(void **state) {
    (void)state;
    const char *arr = "<arrivals process=\"bursty\" rate=\"6/s\" cv=\"2\" count=\"1500\"/>";
    const char *req = "<requests input-tokens=\"800\" output-tokens=\"150\" input-distribution=\"lognormal\"/>"
                      "<slo ttft=\"500ms\" tpot=\"25ms\"/>";
    char with[1024];
    snprintf(with, sizeof with, "%s<class name=\"all\"/>", req);
    run a = run_svc(arr, req), b = run_svc(arr, with);
    const service_result *x = world_service(a.w, 0), *y = world_service(b.w, 0);
    assert_int_equal(y->n_classes, 1);
    assert_float_equal(x->ttft_p99_s, y->ttft_p99_s, 0);
    assert_float_equal(x->tpot_p99_s, y->tpot_p99_s, 0);
    assert_float_equal(x->slo_attainment, y->slo_attainment, 0);
    assert_float_equal(y->classes[0].slo_attainment, y->slo_attainment, 0);
    assert_float_equal(y->classes[0].ttft_p99_s, y->ttft_p99_s, 0);
    done(&a);
    done(&b);
}

/* Under a burst that queues, the class of higher priority is admitted
 * first: its queueing time falls and the other's rises; with equal
 * priorities (arrival order) the two classes wait alike. */
static void test_priority(void **state) {
    (void)state;
    const char *arr = "<arrivals process=\"poisson\" rate=\"200/s\" count=\"600\"/>";
    run p = run_svc(arr, "<requests input-tokens=\"1000\" output-tokens=\"100\"/>"
                         "<class name=\"hi\" priority=\"1\"/><class name=\"lo\"/>");
    run f = run_svc(arr, "<requests input-tokens=\"1000\" output-tokens=\"100\"/>"
                         "<class name=\"hi\"/><class name=\"lo\"/>");
    const service_result *sp = world_service(p.w, 0), *sf = world_service(f.w, 0);
    const service_part_result *phi = class_named(sp, "hi"), *plo = class_named(sp, "lo");
    const service_part_result *fhi = class_named(sf, "hi"), *flo = class_named(sf, "lo");
    printf("  queue mean: priority hi %.2f s lo %.2f s; arrival order hi %.2f s lo %.2f s\n", phi->queue_mean_s,
           plo->queue_mean_s, fhi->queue_mean_s, flo->queue_mean_s);
    assert_int_equal(phi->requests + plo->requests, 600);
    assert_true(phi->queue_mean_s < 0.5 * plo->queue_mean_s);
    assert_true(phi->queue_mean_s < fhi->queue_mean_s);
    assert_true(plo->queue_mean_s > flo->queue_mean_s);
    assert_true(fabs(fhi->queue_mean_s - flo->queue_mean_s) < 0.25 * (fhi->queue_mean_s + flo->queue_mean_s));
    assert_int_equal(phi->priority, 1);
    done(&p);
    done(&f);
}

/* A multiplexed service reports each model's requests; without <model>
 * children there is no by_model. */
static void test_by_model(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster><workload>"
        "<inference name=\"m\" tp=\"1\" replicas=\"1\" max-batch=\"64\">"
        "<model preset=\"llama3.1-8b\" share=\"3\"/><model preset=\"llama3.2-1b\" share=\"1\"/>"
        "<arrivals process=\"poisson\" rate=\"4/s\" count=\"800\"/><slo ttft=\"1s\" tpot=\"40ms\" percentile=\"95\"/>"
        "</inference></workload></scenario>";
    run r = simulate(xml, 5);
    const service_result *s = world_service(r.w, 0);
    assert_int_equal(s->n_by_model, 2);
    assert_int_equal(s->n_classes, 0);
    assert_string_equal(s->by_model[0].name, "llama3.1-8b");
    assert_int_equal(s->by_model[0].requests + s->by_model[1].requests, s->requests);
    assert_true(s->by_model[0].requests > s->by_model[1].requests);
    double goodput = s->requests_per_s * s->slo_attainment;
    assert_float_equal(s->by_model[0].goodput_requests_per_s + s->by_model[1].goodput_requests_per_s, goodput,
                       1e-9 * goodput);
    assert_float_equal(s->by_model[1].slo.percentile, 95, 0);
    run one = run_svc("<arrivals process=\"poisson\" rate=\"4/s\" count=\"50\"/>", "");
    assert_int_equal(world_service(one.w, 0)->n_by_model, 0);
    assert_null(world_service(one.w, 0)->by_model);
    done(&r);
    done(&one);
}

/* A trace's class column names each row's class (rows without one are
 * drawn by share); an unknown class is an error naming the row. */
static void test_trace_class(void **state) {
    (void)state;
    const char *path = "/tmp/ct-test-slo-classes.csv";
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("time,input_tokens,output_tokens,model,session,class\n", f);
    for (int i = 0; i < 90; i++) fprintf(f, "%d,%d,20,,,%s\n", i, 100 + i, i % 3 ? "chat" : "batch");
    for (int i = 90; i < 100; i++) fprintf(f, "%d,100,20\n", i);
    fclose(f);
    char xml[2048];
    snprintf(xml, sizeof xml, SVC, "<arrivals process=\"trace\" href=\"/tmp/ct-test-slo-classes.csv\"/>",
             "<class name=\"batch\" share=\"1000\"/><class name=\"chat\" share=\"1e-9\"/>");
    run r = simulate(xml, 1);
    const service_result *s = world_service(r.w, 0);
    assert_int_equal(class_named(s, "chat")->submitted, 60);
    assert_int_equal(class_named(s, "batch")->submitted, 40);   /* 30 named, 10 drawn (share ~1) */
    done(&r);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("0,100,20,,,chat\n1,100,20,,,agent\n", f);
    fclose(f);
    char err[1024];
    build_error(xml, err, sizeof err);
    remove(path);
    assert_non_null(strstr(err, "ct-test-slo-classes.csv:2: unknown class 'agent'; this service's classes: batch, chat"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_e2e_bound),
        cmocka_unit_test(test_one_class_is_no_class),
        cmocka_unit_test(test_priority),
        cmocka_unit_test(test_by_model),
        cmocka_unit_test(test_trace_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
