/*
 * fuzz_trace: libFuzzer harness for the trace readers: the job trace
 * (scenarios/trace.c, <trace href>) and the request trace in each of its
 * formats (scenarios/reqtrace*.c, <arrivals process="trace" format=>).
 *
 * The input is written to a file (both readers take a path) and read by
 * each reader. Properties: each either succeeds (jobs appended to the
 * scenario; rows with sorted times, lengths >= 1 within the context) or
 * fails with one line "PATH:LINE: ..."; no crash, leak or UB.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenarios/scenario.h"
#include "scenarios/trace.h"
#include "scenarios/reqtrace.h"
#include "tests/fuzz/fuzz.h"

static scenario *base;               /* 4 DGX H100 nodes, queues research and prod */
static char path[64];

static void setup(void) {
    static const char text[] =
        "<?xml version=\"1.0\"?>\n<scenario name=\"f\" seed=\"1\">\n"
        "  <cluster><nodes type=\"dgx-h100\" count=\"4\"/></cluster>\n"
        "  <scheduler><queue name=\"research\" quota-gpus=\"32\"/><queue name=\"prod\" quota-gpus=\"32\"/></scheduler>\n"
        "</scenario>\n";
    char err[1024];
    if (scenario_load_memory(text, sizeof text - 1, "/tmp/fuzz.xml", &base, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        fuzz_fail("the base scenario does not load");
    }
    snprintf(path, sizeof path, "/tmp/ct-fuzz-trace-%ld.csv", (long)getpid());
}

/* Read the request trace at path with o; it either fails with one line
 * "PATH:LINE: ..." and nothing kept, or every row is in range: sorted
 * times, lengths >= 1 within the context, blocks inside the pool and no
 * more than the prompt fills. */
static void trace_check_requests(const reqtrace_opts *o, char *err, size_t errlen, const char *prefix) {
    static const char *const models[] = { "llama3-8b", "llama3-70b" };
    static const int ctx[] = { 8192, 128000 };
    const reqtrace_models sm = { models, ctx, 2, NULL, 0 };
    reqtrace t;
    err[0] = 0;
    if (reqtrace_read(path, o, &sm, &t, err, errlen) < 0) {
        if (t.rows || t.blocks || t.n) fuzz_fail("failed but returned rows");
        fuzz_check_error(err, prefix);
        return;
    }
    if ((t.blocks == NULL) != (t.n_blocks == 0)) fuzz_fail("a block pool and its count disagree");
    for (long i = 0; i < t.n; i++) {
        const reqtrace_row *r = &t.rows[i];
        if (r->input < 1 || r->output < 1 || r->model < 0 || r->model > 1 ||
            (long long)r->input + r->output > ctx[r->model] || !(r->t_s >= 0) || (i && r->t_s < t.rows[i - 1].t_s))
            fuzz_fail("a request trace row out of range was accepted");
        if (r->n_blocks < 0 || r->block_off < 0 || r->block_off + r->n_blocks > t.n_blocks ||
            (r->n_blocks && (long long)r->n_blocks * t.block_tokens >= (long long)r->input + t.block_tokens))
            fuzz_fail("a request trace row's prefix blocks are out of range");
    }
    reqtrace_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!base) setup();
    FILE *f = fopen(path, "wb");
    if (!f) fuzz_fail("cannot write the temporary trace");
    if (size && fwrite(data, 1, size, f) != size) fuzz_fail("cannot write the temporary trace");
    fclose(f);

    char err[2048], prefix[80];
    snprintf(prefix, sizeof prefix, "%s:", path);

    /* Job trace: appended to the base scenario, then taken off again. */
    err[0] = 0;
    int rc = trace_load(base, path, 7, err, sizeof err);
    if (rc < 0) fuzz_check_error(err, prefix);
    for (int i = 0; i < base->n_trace_jobs; i++)
        if (base->trace_jobs[i].gpus < 1 || base->trace_jobs[i].gpus > 32 || !(base->trace_jobs[i].duration_s > 0) ||
            base->trace_jobs[i].name >= base->trace_names_len)
            fuzz_fail("a job trace row out of range was accepted");
    free(base->trace_jobs);
    free(base->trace_names);
    free(base->training);
    base->trace_jobs = NULL;
    base->trace_names = NULL;
    base->training = NULL;
    base->n_trace_jobs = base->n_training = 0;
    base->trace_names_len = base->trace_names_cap = 0;

    /* Request trace: two models with contexts 8192 and 128000, in every
     * format (auto and each reader, skip and time-scale once). */
    for (int k = REQTRACE_AUTO; k <= REQTRACE_MOONCAKE + 1; k++) {
        const reqtrace_opts o = { k > REQTRACE_MOONCAKE ? REQTRACE_AUTO : (reqtrace_format)k,
                                  k > REQTRACE_MOONCAKE ? 3 : 1, k > REQTRACE_MOONCAKE ? 0.5 : 0 };
        trace_check_requests(&o, err, sizeof err, prefix);
    }
    return 0;
}
