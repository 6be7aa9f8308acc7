/*
 * test_serving: the iteration-level serving simulation (sim/serving) of
 * issue 7, on the serving cost model (models/serving, whose own tests are
 * test_serving_model's).
 *
 * What is modelled and where the expected figures come from:
 * - M/D/1 (batch 1, fixed lengths, Poisson arrivals): the mean wait is
 *   the Pollaczek-Khinchine value rho D / (2 (1 - rho)).
 * - Published offline throughput (TensorRT-LLM perf-overview, in
 *   tests/validation/inference.csv) is replayed through the CLI by
 *   tests/cli_serving.sh; here one row is run through the world as a smoke
 *   check of the same path.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/catalogfix.h"
#include "tests/servefix.h"

#include "tests/simrun.h"

#include "models/catalog.h"
#include "models/gpu.h"
#include "models/serving.h"
#include "models/transformer.h"
#include "scenarios/catalog_xml.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/serving.h"
#include "sim/world.h"

static const service_result *svc(const run *r) { return world_service(r->w, 0); }

/* A scenario with one service. attrs: extra <inference> attributes;
 * body: its children. */
static char *one_service(char *buf, size_t len, int nodes, const char *model, const char *attrs,
                         const char *body) {
    snprintf(buf, len,
             "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"%d\"/></cluster>"
             "<workload><inference name=\"svc\" model=\"%s\" %s>%s</inference></workload></scenario>",
             nodes, model, attrs, body);
    return buf;
}

/* ---- the simulation ----------------------------------------------------------- */

/* M/D/1: one sequence at a time, fixed lengths, Poisson arrivals. The
 * service time D is the prefill iteration plus output-1 decode iterations
 * of the cost model; the mean wait is Pollaczek-Khinchine's
 * rho D / (2 (1 - rho)). At rho 0.7 the waits are strongly correlated (one
 * run of 100,000 requests has a standard error near 1.5%): the mean over 5
 * seeds is held within 3%, each seed within 6%. */
static void test_md1_wait(void **state) {
    (void)state;
    serve_model sm = preset_on("llama3-8b", "dgx-h100", 1, PREC_BF16);
    double D = prefill_s(&sm, 100);
    for (int k = 1; k < 20; k++) D += decode_s(&sm, 1, 100 + k);
    double rho = 0.7, lambda = rho / D;
    char xml[2048], body[512];
    snprintf(body, sizeof body,
             "<arrivals process=\"poisson\" rate=\"%.9g/s\" count=\"100000\"/>"
             "<requests input-tokens=\"100\" output-tokens=\"20\"/>", lambda);
    one_service(xml, sizeof xml, 1, "llama3-8b", "tp=\"1\" max-batch=\"1\"", body);
    double wq = rho * D / (2 * (1 - rho)), sum = 0;
    for (int seed = 1; seed <= 5; seed++) {
        run r = simulate(xml, (unsigned long long)seed);
        const service_result *s = svc(&r);
        assert_int_equal(s->requests, 100000);
        assert_true(fabs((s->e2e_mean_s - s->queue_mean_s) / D - 1) < 1e-6);   /* every service takes D */
        assert_true(fabs(s->queue_mean_s / wq - 1) < 0.06);
        sum += s->queue_mean_s;
        done(&r);
    }
    printf("  M/D/1: D %.4f s, rho %.2f: mean wait %.4f s over 5 seeds, P-K %.4f s (%+.1f%%)\n", D, rho, sum / 5, wq,
           100 * (sum / 5 / wq - 1));
    assert_true(fabs(sum / 5 / wq - 1) < 0.03);
}

/* One published row through the world (the CLI test replays them all). */
static void test_offline_row(void **state) {
    (void)state;
    char xml[2048];
    one_service(xml, sizeof xml, 1, "llama3.3-70b", "precision=\"fp8\" tp=\"2\" gpu=\"H100-SXM5-80GB\"",
                "<arrivals process=\"offline\" count=\"1000\"/><requests input-tokens=\"1000\" output-tokens=\"1000\"/>");
    run r = simulate(xml, 1);
    const service_result *s = svc(&r);
    printf("  llama3.3-70b fp8 tp2 1000/1000 offline: %.0f output tokens/s (TensorRT-LLM: 4205)\n",
           s->output_tokens_per_s);
    assert_int_equal(s->requests, 1000);
    assert_true(s->output_tokens == 1000.0 * 1000);
    assert_true(fabs(s->output_tokens_per_s / 4205 - 1) < 0.20);
    done(&r);
}

/* Continuous batching beats static batching when outputs vary: a static
 * batch waits for its longest sequence. */
static void test_static_vs_continuous(void **state) {
    (void)state;
    char xml[2048];
    const char *body = "<arrivals process=\"offline\" count=\"2000\"/>"
                       "<requests input-tokens=\"200\" output-tokens=\"200\" output-distribution=\"exponential\"/>";
    one_service(xml, sizeof xml, 1, "llama3-8b", "max-batch=\"64\"", body);
    run c = simulate(xml, 1);
    one_service(xml, sizeof xml, 1, "llama3-8b", "max-batch=\"64\" batching=\"static\"", body);
    run st = simulate(xml, 1);
    printf("  exponential outputs, batch 64: continuous %.0f tokens/s, static %.0f\n", svc(&c)->output_tokens_per_s,
           svc(&st)->output_tokens_per_s);
    assert_int_equal(svc(&st)->requests, 2000);
    assert_true(svc(&c)->output_tokens == svc(&st)->output_tokens);
    assert_true(svc(&c)->output_tokens_per_s > 1.5 * svc(&st)->output_tokens_per_s);
    done(&c);
    done(&st);
}

/* Chunked prefill keeps decode steps short when long prompts arrive. */
static void test_chunked_prefill(void **state) {
    (void)state;
    char xml[2048];
    const char *body = "<arrivals process=\"poisson\" rate=\"4/s\" count=\"2000\"/>"
                       "<requests input-tokens=\"6000\" output-tokens=\"300\"/>";
    one_service(xml, sizeof xml, 1, "llama3-8b", "max-batch=\"64\"", body);
    run a = simulate(xml, 1);
    one_service(xml, sizeof xml, 1, "llama3-8b", "max-batch=\"64\" chunked-prefill=\"true\" token-budget=\"512\"", body);
    run b = simulate(xml, 1);
    printf("  6000-token prompts: TPOT p99 %.1f ms whole, %.1f ms chunked by 512\n", 1e3 * svc(&a)->tpot_p99_s,
           1e3 * svc(&b)->tpot_p99_s);
    assert_int_equal(svc(&b)->requests, 2000);
    assert_true(svc(&b)->tpot_p99_s < svc(&a)->tpot_p99_s);
    done(&a);
    done(&b);
}

/* prefill-alone (vLLM V0's scheduler): an iteration that runs prompts runs
 * no decode step, so under load every prompt stalls the decoders for one
 * iteration: more iterations for the same tokens and a longer TPOT. One
 * user never overlaps a prompt with decoders: the same numbers either way.
 * With chunked prefill the attribute has no effect (vLLM mixes then). */
static void test_prefill_alone(void **state) {
    (void)state;
    char xml[2048];
    const char *load = "<arrivals process=\"poisson\" rate=\"20/s\" count=\"2000\"/>"
                       "<requests input-tokens=\"512\" output-tokens=\"64\"/>";
    const char *one = "<arrivals process=\"closed\" users=\"1\" count=\"20\"/>"
                      "<requests input-tokens=\"512\" output-tokens=\"64\"/>";
    const char *body[2] = { load, one };
    for (int k = 0; k < 2; k++) {
        one_service(xml, sizeof xml, 1, "llama3-8b", "kv-allocation=\"on-demand\"", body[k]);
        run mixed = simulate(xml, 1);
        one_service(xml, sizeof xml, 1, "llama3-8b", "kv-allocation=\"on-demand\" prefill-alone=\"true\"", body[k]);
        run alone = simulate(xml, 1);
        const service_result *a = svc(&mixed), *b = svc(&alone);
        printf("  512/64 %s: TPOT mean %.2f ms mixed, %.2f ms prompts alone; %lld and %lld iterations\n",
               k ? "one user" : "at 20/s", 1e3 * a->tpot_mean_s, 1e3 * b->tpot_mean_s, (long long)a->iterations,
               (long long)b->iterations);
        assert_int_equal(a->requests, b->requests);
        assert_true(a->output_tokens == b->output_tokens);
        if (k == 0) {
            assert_true(b->tpot_mean_s > 1.05 * a->tpot_mean_s);
            assert_true(b->iterations > a->iterations);
        } else {
            assert_true(b->tpot_mean_s == a->tpot_mean_s && b->ttft_mean_s == a->ttft_mean_s);
            assert_int_equal(b->iterations, a->iterations);
        }
        done(&mixed);
        done(&alone);
    }
    const char *chunk = "kv-allocation=\"on-demand\" chunked-prefill=\"true\" token-budget=\"512\"";
    one_service(xml, sizeof xml, 1, "llama3-8b", chunk, load);
    run c0 = simulate(xml, 1);
    char attrs[256];
    snprintf(attrs, sizeof attrs, "%s prefill-alone=\"true\"", chunk);
    one_service(xml, sizeof xml, 1, "llama3-8b", attrs, load);
    run c1 = simulate(xml, 1);
    assert_true(svc(&c0)->tpot_mean_s == svc(&c1)->tpot_mean_s && svc(&c0)->iterations == svc(&c1)->iterations);
    done(&c0);
    done(&c1);
}

/* On-demand KV allocation admits more and preempts when the cache runs
 * out; recompute and swap both finish every request. */
static void test_preemption(void **state) {
    (void)state;
    char xml[2048];
    const char *body = "<arrivals process=\"offline\" count=\"600\"/>"
                       "<requests input-tokens=\"1000\" output-tokens=\"3000\"/>";
    one_service(xml, sizeof xml, 1, "llama3-70b", "tp=\"4\" max-batch=\"512\"", body);
    run res = simulate(xml, 1);
    one_service(xml, sizeof xml, 1, "llama3-70b", "tp=\"4\" max-batch=\"512\" kv-allocation=\"on-demand\"", body);
    run rec = simulate(xml, 1);
    one_service(xml, sizeof xml, 1, "llama3-70b",
                "tp=\"4\" max-batch=\"512\" kv-allocation=\"on-demand\" kv-preemption=\"swap\"", body);
    run sw = simulate(xml, 1);
    const service_result *a = svc(&res), *b = svc(&rec), *c = svc(&sw);
    printf("  reserve: %.0f tok/s, 0 preemptions; on-demand recompute: %.0f tok/s, %lld preemptions; "
           "swap: %.0f tok/s, %lld swaps\n", a->output_tokens_per_s, b->output_tokens_per_s,
           (long long)b->preemptions, c->output_tokens_per_s, (long long)c->swaps);
    assert_int_equal(a->preemptions, 0);
    assert_true(b->preemptions > 0 && b->swaps == 0);
    assert_true(c->swaps > 0 && c->swaps == c->preemptions);
    for (int k = 0; k < 3; k++) {
        const service_result *x = k == 0 ? a : k == 1 ? b : c;
        assert_int_equal(x->requests, 600);
        assert_true(x->output_tokens == 600.0 * 3000);
        assert_true(x->kv_utilization_peak <= 1 + 1e-9);
    }
    assert_true(b->batch_mean > a->batch_mean);        /* admits on the prompt, not the whole length */
    done(&res);
    done(&rec);
    done(&sw);
}

/* Three models on one 8-GPU node that cannot hold all three at once:
 * loads on demand, unloads the least recently used. */
static void test_multiplexing(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-a100-40gb\" count=\"1\"/></cluster>"
        "<workload><inference name=\"mux\" tp=\"8\" replicas=\"1\">"
        "<model preset=\"llama3-70b\" share=\"1\"/><model preset=\"llama2-70b\" share=\"1\"/>"
        "<model preset=\"llama3-8b\" share=\"2\"/>"
        "<arrivals process=\"poisson\" rate=\"2/s\" count=\"2000\"/>"
        "<requests input-tokens=\"500\" output-tokens=\"100\"/></inference></workload></scenario>";
    run r = simulate(xml, 1);
    const service_result *s = svc(&r);
    printf("  3 models on 8 A100-40GB: %lld loads, %lld unloads, TTFT p50 %.2f s p99 %.1f s\n",
           (long long)s->model_loads, (long long)s->model_unloads, s->ttft_p50_s, s->ttft_p99_s);
    assert_int_equal(s->requests, 2000);
    assert_true(s->model_loads > 0 && s->model_unloads > 0);
    assert_non_null(strstr(s->models, "llama2-70b"));
    done(&r);
}

/* Least outstanding tokens balances unequal requests better than round
 * robin when replicas queue (batches of 2, heavy-tailed lengths). */
static void test_router(void **state) {
    (void)state;
    char xml[2048];
    const char *body = "<arrivals process=\"poisson\" rate=\"3/s\" count=\"20000\"/>"
                       "<requests input-tokens=\"500\" output-tokens=\"300\" input-distribution=\"lognormal\""
                       " input-cv=\"2\" output-distribution=\"lognormal\" output-cv=\"2\"/>";
    one_service(xml, sizeof xml, 1, "llama3-8b", "replicas=\"4\" router=\"round-robin\" max-batch=\"2\"", body);
    run rr = simulate(xml, 1);
    one_service(xml, sizeof xml, 1, "llama3-8b", "replicas=\"4\" router=\"least-tokens\" max-batch=\"2\"", body);
    run lt = simulate(xml, 1);
    printf("  4 replicas: mean queue %.2f s, TTFT p99 %.1f s round-robin; %.2f s, %.1f s least-tokens\n",
           svc(&rr)->queue_mean_s, svc(&rr)->ttft_p99_s, svc(&lt)->queue_mean_s, svc(&lt)->ttft_p99_s);
    assert_true(svc(&lt)->queue_mean_s < 0.5 * svc(&rr)->queue_mean_s);
    assert_true(svc(&lt)->ttft_p99_s < svc(&rr)->ttft_p99_s);
    assert_true(svc(&rr)->output_tokens == svc(&lt)->output_tokens);   /* the same requests */
    done(&rr);
    done(&lt);
}

/* A diurnal day compressed to 4 hours: the autoscaler follows the load
 * and gives GPUs back at night. */
static void test_autoscale(void **state) {
    (void)state;
    char xml[2048];
    const char *body = "<arrivals process=\"diurnal\" rate=\"12/s\" amplitude=\"0.9\" period=\"4h\" peak=\"2h\" duration=\"4h\"/>"
                       "<requests input-tokens=\"500\" output-tokens=\"200\"/>"
                       "<autoscale metric=\"queue\" target=\"4\" min-replicas=\"1\" max-replicas=\"8\" startup=\"60s\"/>";
    one_service(xml, sizeof xml, 1, "llama3-8b", "replicas=\"1\" max-batch=\"16\"", body);
    run r = simulate(xml, 1);
    const service_result *s = svc(&r);
    printf("  diurnal: %lld requests, replicas mean %.2f peak %d, %d ups %d downs, %.2f GPU-hours\n",
           (long long)s->requests, s->replicas_mean, s->replicas_peak, s->scale_ups, s->scale_downs, s->gpu_hours);
    assert_int_equal(s->requests, s->submitted);
    assert_true(s->replicas_peak >= 3 && s->scale_ups > 0 && s->scale_downs > 0);
    assert_true(s->replicas_mean < 0.75 * s->replicas_peak);
    double life_h = (s->last_completion_s) / 3600;
    assert_true(s->gpu_hours < s->replicas_peak * life_h);
    /* The expected count: the integral of the rate over 4 hours is rate x 4 h. */
    assert_true(fabs(s->submitted / (12.0 * 4 * 3600) - 1) < 0.03);
    done(&r);
}

/* Bursty arrivals (gamma, cv 4) queue longer than Poisson at the same
 * mean rate. */
static void test_bursty(void **state) {
    (void)state;
    char xml[2048];
    one_service(xml, sizeof xml, 1, "llama3-8b", "max-batch=\"8\"",
                "<arrivals process=\"poisson\" rate=\"3/s\" count=\"20000\"/><requests input-tokens=\"300\" output-tokens=\"100\"/>");
    run p = simulate(xml, 1);
    one_service(xml, sizeof xml, 1, "llama3-8b", "max-batch=\"8\"",
                "<arrivals process=\"bursty\" rate=\"3/s\" cv=\"4\" count=\"20000\"/><requests input-tokens=\"300\" output-tokens=\"100\"/>");
    run b = simulate(xml, 1);
    double span_p = svc(&p)->last_completion_s - svc(&p)->first_arrival_s;
    double span_b = svc(&b)->last_completion_s - svc(&b)->first_arrival_s;
    printf("  rate 3/s: queue p99 %.2f s Poisson, %.2f s bursty cv 4 (spans %.0f s, %.0f s)\n", svc(&p)->queue_p99_s,
           svc(&b)->queue_p99_s, span_p, span_b);
    assert_true(svc(&b)->queue_p99_s > 2 * svc(&p)->queue_p99_s);
    assert_true(fabs(span_p / (20000 / 3.0) - 1) < 0.05 && fabs(span_b / (20000 / 3.0) - 1) < 0.25);
    done(&p);
    done(&b);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A trace CSV drives the arrivals; a bad row is named by file and line. */
static void test_trace(void **state) {
    (void)state;
    char dir[] = "/tmp/test_serving.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char csv[256], xml[2048], err[1024];
    snprintf(csv, sizeof csv, "%s/t.csv", dir);
    write_file(csv, "time,input_tokens,output_tokens,model\n0,100,10,llama3-8b\n0.5,200,20\n# a comment\n"
                    "1.5s,300,30,llama3-8b\n");
    char body[512];
    snprintf(body, sizeof body, "<arrivals process=\"trace\" href=\"%s\"/>", csv);
    one_service(xml, sizeof xml, 1, "llama3-8b", "", body);
    run r = simulate(xml, 1);
    assert_int_equal(svc(&r)->requests, 3);
    assert_true(svc(&r)->output_tokens == 60 && svc(&r)->input_tokens == 600);
    assert_true(fabs(svc(&r)->first_arrival_s) < 1e-12);
    done(&r);
    struct { const char *text, *want; } bad[] = {
        { "0,100,10\n2,100,10\n1,100,10\n", ":3: times must be sorted" },
        { "0,100,10\n1,-5,10\n", ":2: input_tokens must be at least 1" },
        { "0,100,10,gpt-5\n", ":1: unknown model 'gpt-5'" },
        { "time,in,out\n0,8000,500\n", ":2: input + output tokens (8500) exceed llama3-8b's context of 8192" },
        { "0,100\n", ":1: expected 3 or 4 columns" },
        { "0,abc,10\n", ":1: input_tokens 'abc' must be a whole number" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        write_file(csv, bad[k].text);
        build_error(xml, err, sizeof err);
        if (!strstr(err, bad[k].want) || strncmp(err, csv, strlen(csv)) != 0)
            fail_msg("trace case %zu: got '%s', want '%s%s'", k, err, csv, bad[k].want);
    }
    unlink(csv);
    rmdir(dir);
}

/* Request lengths drawn from distributions keep their means. */
static void test_length_distributions(void **state) {
    (void)state;
    const char *dists[] = { "exponential", "lognormal", "gamma", "uniform" };
    for (size_t k = 0; k < 4; k++) {
        char xml[2048], body[512];
        snprintf(body, sizeof body,
                 "<arrivals process=\"offline\" count=\"20000\"/>"
                 "<requests input-tokens=\"400\" output-tokens=\"100\" input-distribution=\"%s\" output-distribution=\"%s\"/>",
                 dists[k], dists[k]);
        one_service(xml, sizeof xml, 1, "llama3-8b", "", body);
        run r = simulate(xml, 1);
        double in = svc(&r)->input_tokens / 20000, out = svc(&r)->output_tokens / 20000;
        printf("  %-11s mean input %.1f (400), output %.1f (100)\n", dists[k], in, out);
        assert_true(fabs(in / 400 - 1) < 0.05 && fabs(out / 100 - 1) < 0.05);
        done(&r);
    }
}

/* Same scenario and seed: the same results; another seed: others. */
static void test_determinism(void **state) {
    (void)state;
    char xml[2048];
    one_service(xml, sizeof xml, 1, "llama3-8b", "replicas=\"2\" kv-allocation=\"on-demand\"",
                "<arrivals process=\"bursty\" rate=\"20/s\" cv=\"2\" count=\"5000\"/>"
                "<requests input-tokens=\"500\" output-tokens=\"300\" output-distribution=\"exponential\"/>");
    run a = simulate(xml, 7), b = simulate(xml, 7), c = simulate(xml, 8);
    assert_memory_equal(svc(&a), svc(&b), sizeof(service_result));
    assert_true(svc(&a)->ttft_p99_s != svc(&c)->ttft_p99_s);
    done(&a);
    done(&b);
    done(&c);
}

/* Serving takes its GPUs first; a training job that needs them waits for
 * the service to finish and give them back. */
static void test_shares_cluster_with_training(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
        "<workload><training name=\"ft\" gpus=\"8\" tp=\"1\" dp=\"8\" sharding=\"fsdp\" seq-len=\"2048\" steps=\"10\">"
        "<model preset=\"llama3-8b\"/></training>"
        "<inference name=\"svc\" model=\"llama3-8b\" tp=\"2\" replicas=\"2\">"
        "<arrivals process=\"poisson\" rate=\"5/s\" count=\"500\"/></inference></workload></scenario>";
    run r = simulate(xml, 1);
    const job_result *j = run_job(&r, 0);
    const service_result *s = svc(&r);
    printf("  service done at %.0f s, training started at %.0f s\n", s->last_completion_s, j->start_s);
    assert_int_equal(s->requests, 500);
    assert_true(j->start_s >= s->last_completion_s - 1e-6);
    assert_int_equal(j->state, JOB_DONE);
    done(&r);
}

/* Replicas ask the scheduler for GPUs. A service of higher priority with
 * preemption on takes GPUs back from a training job that borrowed them
 * (the job checkpoints and waits); without preemption its scale-up waits
 * in the queue while the job runs. */
static const char *borrow_xml =
    "<scenario name=\"t\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/>"
    "<storage name=\"fs\" kind=\"parallel-fs\" bandwidth=\"20GB/s\"/></cluster>"
    "<scheduler policy=\"priority\" preemption=\"%s\"/>"
    "<workload><inference name=\"svc\" model=\"llama3-8b\" tp=\"4\" replicas=\"1\" max-batch=\"16\" priority=\"10\">"
    "<arrivals process=\"diurnal\" rate=\"10/s\" amplitude=\"0.9\" period=\"4h\" peak=\"2h\" duration=\"6h\"/>"
    "<requests input-tokens=\"500\" output-tokens=\"200\"/>"
    "<autoscale metric=\"queue\" target=\"4\" min-replicas=\"1\" max-replicas=\"2\" startup=\"60s\" cooldown=\"5min\"/>"
    "</inference>"
    "<training name=\"ft\" gpus=\"4\" tp=\"1\" dp=\"4\" sharding=\"fsdp\" seq-len=\"2048\" steps=\"200000\" storage=\"fs\">"
    "<model preset=\"llama3-8b\"/><checkpoint interval=\"10min\" layout=\"sharded\"/></training>"
    "</workload></scenario>";

static void test_replicas_through_scheduler(void **state) {
    (void)state;
    char xml[4096];
    snprintf(xml, sizeof xml, borrow_xml, "true");
    run r = simulate(xml, 1);
    const service_result *s = svc(&r);
    const job_result *j = run_job(&r, 0);
    printf("  preemption on: job preempted %d times, ends %.0f s; service %d ups, %d waited, losses %lld\n",
           j->preemptions, j->end_s, s->scale_ups, s->scale_blocked, (long long)s->replica_losses);
    assert_int_equal(s->requests, s->submitted);
    assert_true(j->preemptions > 0);             /* the service took its GPUs back */
    assert_int_equal(j->state, JOB_DONE);
    assert_true(s->replicas_peak == 2);
    int preempted_on = j->preemptions;
    double end_on = j->end_s;
    done(&r);

    snprintf(xml, sizeof xml, borrow_xml, "false");
    r = simulate(xml, 1);
    s = svc(&r);
    j = run_job(&r, 0);
    printf("  preemption off: job preempted %d times, ends %.0f s; service %d ups, %d waited, peak %d\n",
           j->preemptions, j->end_s, s->scale_ups, s->scale_blocked, s->replicas_peak);
    assert_int_equal(j->preemptions, 0);
    assert_true(s->scale_blocked > 0);           /* scale-ups waited in the queue */
    assert_true(j->end_s < end_on);              /* the job was not evicted */
    assert_true(preempted_on > 0);
    assert_int_equal(s->requests, s->submitted);
    done(&r);
}

/* Node failures under replicas: the replica loses its GPUs and its
 * sequences, which are recomputed on the other replica; the request for
 * GPUs goes back to the scheduler and the replica returns after repair.
 * Every request still completes. */
static void test_failures_hit_replicas(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"t\" seed=\"3\"><cluster><nodes type=\"dgx-h100\" count=\"3\"/></cluster>"
        "<failures><failure component=\"node\" mtbf=\"4h\" mttr=\"20min\"/></failures>"
        "<workload><inference name=\"svc\" model=\"llama3-8b\" tp=\"8\" replicas=\"2\" max-batch=\"64\">"
        "<arrivals process=\"poisson\" rate=\"20/s\" duration=\"8h\"/>"
        "<requests input-tokens=\"1000\" output-tokens=\"300\"/></inference></workload></scenario>";
    run r = simulate(xml, 3);
    const service_result *s = svc(&r);
    world_totals t = world_get_totals(r.w);
    printf("  %d node failures, %lld replica losses, %lld sequences recomputed, %lld/%lld requests\n", t.failures,
           (long long)s->replica_losses, (long long)s->requests_restarted, (long long)s->requests,
           (long long)s->submitted);
    assert_true(t.failures > 0);
    assert_true(s->replica_losses > 0);
    assert_true(s->requests_restarted > 0);
    assert_int_equal(s->requests, s->submitted);
    /* A replica back on the spare node keeps GPU-hours near 2 replicas' worth. */
    assert_true(s->replicas_mean > 1.5 && s->replicas_mean <= 2.0 + 1e-9);
    done(&r);
}

static void test_build_errors(void **state) {
    (void)state;
    char xml[2048], err[1024];
    one_service(xml, sizeof xml, 1, "llama3-70b", "tp=\"1\"", "");
    build_error(xml, err, sizeof err);
    assert_non_null(strstr(err, "test.xml:1: <inference name=\"svc\">: llama3-70b (bf16"));
    assert_non_null(strstr(err, "does not fit on 1 H100-SXM5-80GB"));
    one_service(xml, sizeof xml, 1, "llama3-8b", "tp=\"4\" replicas=\"3\"", "");
    build_error(xml, err, sizeof err);
    assert_non_null(strstr(err, "replica 3 of 3 needs 4 free GPUs"));
    one_service(xml, sizeof xml, 1, "llama3-8b", "gpu=\"A100-SXM4-80GB\"", "");
    build_error(xml, err, sizeof err);
    assert_non_null(strstr(err, "no <nodes> with GPU A100-SXM4-80GB"));
    one_service(xml, sizeof xml, 1, "llama3-8b", "", "<arrivals process=\"bursty\" rate=\"2/s\"/>");
    build_error(xml, err, sizeof err);
    assert_non_null(strstr(err, "needs the coefficient of variation"));
    one_service(xml, sizeof xml, 1, "llama3-8b", "", "<autoscale max-replicas=\"2\" min-replicas=\"3\" target=\"4\"/>");
    build_error(xml, err, sizeof err);
    assert_non_null(strstr(err, "min-replicas (3) must not exceed max-replicas (2)"));
    one_service(xml, sizeof xml, 1, "llama3-8b", "", "<model preset=\"llama3-8b\"/>");
    build_error(xml, err, sizeof err);
    assert_non_null(strstr(err, "not both"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md1_wait),
        cmocka_unit_test(test_offline_row),
        cmocka_unit_test(test_static_vs_continuous),
        cmocka_unit_test(test_chunked_prefill),
        cmocka_unit_test(test_prefill_alone),
        cmocka_unit_test(test_preemption),
        cmocka_unit_test(test_multiplexing),
        cmocka_unit_test(test_router),
        cmocka_unit_test(test_autoscale),
        cmocka_unit_test(test_bursty),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_length_distributions),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_shares_cluster_with_training),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_replicas_through_scheduler),
        cmocka_unit_test(test_failures_hit_replicas),
    };
    return cmocka_run_group_tests(tests, catalog_setup, catalog_teardown);
}
