/*
 * fuzz_trace: libFuzzer harness for the trace readers: the job trace in
 * each of its formats (scenarios/trace.c and scenarios/jobtrace*.c,
 * <trace href format=>) and the request trace in each of its formats (scenarios/reqtrace*.c, <arrivals process="trace" format=>).
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

#include "scenarios/jobtrace.h"
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

/* Read the job trace at path in format f into the base scenario; it
 * either fails with one line "PATH:LINE: ..." or every job is in range
 * (GPUs the cluster has, a positive duration, submit times from 0 on, a
 * name in the pool). The jobs are taken off again. */
static void trace_check_jobs(jobtrace_format f, char *err, size_t errlen, const char *prefix) {
    snprintf(base->trace_read.format, sizeof base->trace_read.format, "%s", jobtrace_format_name(f));
    err[0] = 0;
    if (trace_load(base, path, 7, err, errlen) < 0) fuzz_check_error(err, prefix);
    for (int i = 0; i < base->n_trace_jobs; i++) {
        const sc_trace_job *j = &base->trace_jobs[i];
        if (j->gpus < 1 || j->gpus > 32 || !(j->duration_s > 0) || !(j->submit_s >= 0) ||
            j->name >= base->trace_names_len)
            fuzz_fail("a job trace row out of range was accepted");
    }
    free(base->trace_jobs);
    free(base->trace_names);
    free(base->training);
    base->trace_jobs = NULL;
    base->trace_names = NULL;
    base->training = NULL;
    base->n_trace_jobs = base->n_training = 0;
    base->trace_names_len = base->trace_names_cap = 0;
    base->trace_read = (sc_trace_read){ 0 };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!base) setup();
    FILE *f = fopen(path, "wb");
    if (!f) fuzz_fail("cannot write the temporary trace");
    if (size && fwrite(data, 1, size, f) != size) fuzz_fail("cannot write the temporary trace");
    fclose(f);

    char err[2048], prefix[80];
    snprintf(prefix, sizeof prefix, "%s:", path);

    /* Job trace, in the project's CSV and every public format
     * (scenarios/jobtrace.h): appended to the base scenario, then taken
     * off again. */
    for (int k = JOBTRACE_CSV; k <= JOBTRACE_OPENB; k++)
        trace_check_jobs((jobtrace_format)k, err, sizeof err, prefix);

    /* Request trace: two models with contexts 8192 and 128000, in every
     * format (auto and each reader, skip and time-scale once). */
    for (int k = REQTRACE_AUTO; k <= REQTRACE_MOONCAKE + 1; k++) {
        const reqtrace_opts o = { k > REQTRACE_MOONCAKE ? REQTRACE_AUTO : (reqtrace_format)k,
                                  k > REQTRACE_MOONCAKE ? 3 : 1, k > REQTRACE_MOONCAKE ? 0.5 : 0 };
        trace_check_requests(&o, err, sizeof err, prefix);
    }
    return 0;
}
