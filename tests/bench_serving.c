/*
 * bench_serving: wall time of a million served requests, next to its target.
 *
 *   a chat service of Llama 3 70B in fp8 on 2 DGX H100 (8 replicas of tp 2),
 *   Poisson arrivals at 55/s (about 80% of what the replicas sustain),
 *   lognormal prompts of mean 1000 tokens, exponential outputs of mean 200,
 *   continuous batching up to 256 sequences, least-outstanding-tokens
 *   routing: 1M requests, ~200M generated tokens, ~3.2M batch iterations
 *   over 5 simulated hours. Target (issue 7): at most 5 s. Best of 3 runs.
 *
 *   the same service and rates for 10M requests (50 simulated hours), one
 *   run. Target (issue 23): at most 5 s; 17 s when the issue was opened,
 *   6.6 s before the reservoir log (docs/performance.md).
 *   Each figure also gives the CPU time of the run, which a loaded machine
 *   moves less than the wall clock.
 *
 * Memory, after the 10M run: the process's peak resident set over the
 * requests, and what one request costs. A request in the system holds a
 * pool slot (sizeof(req)); a completed one leaves 8 bytes in each of the 5
 * latency arrays (TTFT, TPOT, end to end, queueing, TTFT from admission),
 * each capped at 4M samples (a reservoir beyond): 160 MB at most. The
 * iteration-price memo holds a few hundred KB (sim/serving_memo.c); each
 * reservoir's log of waiting replacements 392 bytes.
 *
 * Output, and exit status 1 when the 1M run is over target (or not every
 * request done; the 10M figure prints MISSED, not failed: its wall time
 * is over on a machine others load):
 *     (1000000 requests completed, 3249016 batch iterations, 10950 output tokens/s)
 *   serving 1M requests: 0.42 s, 0.41 s CPU (target <= 5 s) ok
 *   serving 10M requests: 4.58 s, 4.50 s CPU (target <= 5 s) ok
 *     memory: 179 MB peak RSS, 18 bytes a request; 136 bytes a request in the system, 40 a sample set
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/serving_int.h"
#include "sim/world.h"

static const char xml[] =
    "<scenario name=\"bench-serving\" seed=\"1\">"
    "<cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
    "<workload><inference name=\"chat\" model=\"llama3-70b\" precision=\"fp8\" tp=\"2\" replicas=\"8\" max-batch=\"256\">"
    "<arrivals process=\"poisson\" rate=\"55/s\" count=\"1M\"/>"
    "<requests input-tokens=\"1000\" output-tokens=\"200\" input-distribution=\"lognormal\""
    " output-distribution=\"exponential\"/>"
    "<slo ttft=\"2s\" tpot=\"100ms\"/>"
    "</inference></workload></scenario>";

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

/* One run of the scenario with count requests; its wall time (and *cpu_s
 * its CPU time), or -1. */
static double one_run(const char *count, long long *requests, long long *iterations, double *tps, double *cpu_s) {
    char err[2048], text[sizeof xml + 16];
    const char *at = strstr(xml, "count=\"1M\"");
    if (!at) return -1;
    snprintf(text, sizeof text, "%.*scount=\"%s\"%s", (int)(at - xml), xml, count, at + strlen("count=\"1M\""));
    scenario *s = NULL;
    if (scenario_load_memory(text, strlen(text), "bench_serving", &s, err, sizeof err) < 0) {
        fprintf(stderr, "bench_serving: %s\n", err);
        return -1;
    }
    double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        fprintf(stderr, "bench_serving: %s\n", bus ? err : "out of memory");
        metrics_free(bus);
        scenario_free(s);
        return -1;
    }
    world_run(w, 0);
    double dt = now_s() - t0;
    *cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    const service_result *r = world_service(w, 0);
    *requests = r->requests;
    *iterations = r->iterations;
    *tps = r->output_tokens_per_s;
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
    return dt;
}

/* The process's peak resident set (bytes), and what a request costs. */
static void print_memory(long long requests) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || requests <= 0) return;
    double peak = (double)ru.ru_maxrss * 1024;          /* Linux: kilobytes */
    printf("  memory: %.0f MB peak RSS, %.0f bytes a request; %zu bytes a request in the system, %zu a sample set\n",
           peak / 1e6, peak / (double)requests, sizeof(req), 5 * sizeof(double));
}

int main(void) {
    const double target_s = 5;
    double best = 1e30, best_cpu = 1e30, tps = 0, cpu;
    long long requests = 0, iterations = 0;
    for (int rep = 0; rep < 3; rep++) {
        double dt = one_run("1M", &requests, &iterations, &tps, &cpu);
        if (dt < 0) return 1;
        if (dt < best) best = dt;
        if (cpu < best_cpu) best_cpu = cpu;
    }
    int ok = best <= target_s && requests == 1000000;
    printf("  (%lld requests completed, %lld batch iterations, %.0f output tokens/s)\n", requests, iterations, tps);
    printf("serving 1M requests: %.2f s, %.2f s CPU (target <= %.0f s) %s\n", best, best_cpu, target_s,
           ok ? "ok" : "FAIL");
    double t10 = one_run("10M", &requests, &iterations, &tps, &cpu);
    if (t10 < 0) return 1;
    printf("serving 10M requests: %.2f s, %.2f s CPU (target <= %.0f s) %s\n", t10, cpu, target_s,
           t10 <= target_s && requests == 10000000 ? "ok" : "MISSED");
    print_memory(requests);
    return ok ? 0 : 1;
}
