/*
 * bench_sched: the twin's half of the scheduler comparison with a SimPy
 * peer (issue 23; tools/peers/simpy_easy.py, run by tools/bench-peers.sh).
 *
 * The workload: the 10K-GPU year's trace (scenarios/traces/year-10k.csv)
 * without its 1% training rows (the peer has no training model), on 1,250
 * DGX H100 nodes, policy fifo, EASY backfill, pack placement, no
 * failures, no preemption. This program writes that trace and scenario
 * to build/peers/ (year-10k-batch.csv, fifo-10k-year.xml), reads the
 * scenario, then times world_new() + world_run() (best of 3: the peer
 * likewise reads its trace before its clock starts) and prints
 *   twin: jobs 99038 started 98670 mean_wait_s 16.1 wall_s 0.150
 * The peer prints the same line; tools/bench-peers.sh checks that the
 * mean waits agree and prints the ratio of the wall times beside the
 * target (>= 30x).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/benchrun.h"

#define DIR "build/peers"

static const char xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<!-- written by tests/bench_sched.c: the 10K-GPU year's batch jobs, fifo + EASY backfill -->\n"
    "<scenario name=\"fifo-10k-year\" seed=\"1\" duration=\"1y\">\n"
    "  <cluster><nodes type=\"dgx-h100\" count=\"1250\"/></cluster>\n"
    "  <scheduler policy=\"fifo\" preemption=\"false\" backfill=\"easy\" placement=\"pack\">\n"
    "    <queue name=\"research\"/><queue name=\"product\"/><queue name=\"infra\"/><queue name=\"eval\"/>\n"
    "  </scheduler>\n"
    "  <workload><trace href=\"year-10k-batch.csv\"/></workload>\n"
    "</scenario>\n";

/* Jobs, those started and their summed waits, of a finished world. */
typedef struct waits { int jobs, started; double sum_s; } waits;

static void take_waits(const world *w, void *ctx) {
    waits *v = ctx;
    *v = (waits){ world_job_count(w), 0, 0 };
    for (int i = 0; i < v->jobs; i++) {
        job_result jr;
        const job_result *r = world_job(w, i, &jr);
        if (r->start_s < 0) continue;
        v->started++;
        v->sum_s += r->start_s - r->submit_s;
    }
}

/* The trace without its training rows, and the scenario, into DIR. 0, or -1. */
static int write_inputs(void) {
    mkdir("build", 0777);
    mkdir(DIR, 0777);
    FILE *in = fopen("scenarios/traces/year-10k.csv", "r");
    FILE *out = fopen(DIR "/year-10k-batch.csv", "w");
    FILE *x = fopen(DIR "/fifo-10k-year.xml", "w");
    int rc = in && out && x ? 0 : -1;
    char line[1024];
    while (rc == 0 && fgets(line, sizeof line, in))
        if (!strstr(line, ",train-")) fputs(line, out);
    if (x) fputs(xml, x);
    if (in) fclose(in);
    if (out && fclose(out) != 0) rc = -1;
    if (x && fclose(x) != 0) rc = -1;
    if (rc < 0) fprintf(stderr, "bench_sched: cannot write " DIR "/ (run from the repository root)\n");
    return rc;
}

int main(void) {
    if (write_inputs() < 0) return 1;
    char err[2048];
    scenario *s = NULL;
    if (scenario_load(DIR "/fifo-10k-year.xml", &s, err, sizeof err) < 0) {
        fprintf(stderr, "bench_sched: %s\n", err);
        return 1;
    }
    double best = 1e30;
    waits v = { 0 };
    for (int rep = 0; rep < 3; rep++) {
        double t = benchrun_world(s, "bench_sched", take_waits, &v);
        if (t < 0) {
            scenario_free(s);
            return 1;
        }
        if (t < best) best = t;
    }
    scenario_free(s);
    printf("twin: jobs %d started %d mean_wait_s %.1f wall_s %.3f\n", v.jobs, v.started,
           v.started ? v.sum_s / v.started : 0, best);
    return 0;
}
