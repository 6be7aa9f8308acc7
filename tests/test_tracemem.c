/*
 * test_tracemem: what one job of a job trace costs in memory.
 *
 * A trace may hold ten million rows (scenarios/trace.c's limit), and the
 * whole trace is loaded and every job built before the run starts, so the
 * bytes per row decide whether that limit runs on a 24 GiB machine. The
 * budget is 1 KiB a job, loaded, built and simulated (the JSON results
 * are the writer's, not counted here): 10 million rows then take at most
 * 10 GiB. Before the compact rows (a 424-byte <jobs> group per row, two
 * fixed name buffers and a whole train_result per job) a row cost about
 * 1.5 KiB.
 *
 * Measured with glibc's mallinfo2 (bytes handed out by malloc, mmap'd
 * blocks included), the difference between a trace of N rows and one of
 * 2N, so the fixed cost of the cluster and the catalog drops out. Under
 * AddressSanitizer or valgrind malloc is not glibc's and the test only
 * checks that two small traces run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/simrun.h"

#if defined(__SANITIZE_ADDRESS__)
#define MALLOC_IS_GLIBC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MALLOC_IS_GLIBC 0
#endif
#endif
#ifndef MALLOC_IS_GLIBC
#define MALLOC_IS_GLIBC 1
#endif

#define BUDGET_BYTES_PER_JOB 1024.0

static size_t in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* Bytes in use with a trace of `rows` batch jobs (sizes 1-8 GPUs, one
 * every 3 s, each a few minutes) loaded, built and run to the end on 64
 * GPUs; every job must finish. */
static size_t bytes_with_trace(int rows) {
    char csv[] = "/tmp/ct-tracemem-XXXXXX";
    int fd = mkstemp(csv);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "submit,queue,priority,gpus,duration,name\n");
    for (int i = 0; i < rows; i++) fprintf(f, "%d,,0,%d,%ds,row-%d\n", i * 3, i % 8 + 1, 60 + i % 7 * 20, i);
    assert_int_equal(fclose(f), 0);
    char xml[512];
    snprintf(xml, sizeof xml,
             "<scenario name=\"m\" duration=\"1y\"><cluster><nodes type=\"dgx-h100\" count=\"8\"/></cluster>"
             "<workload><trace href=\"%s\"/></workload></scenario>", csv);
    run r = simulate(xml, 1);
    unlink(csv);
    size_t used = in_use();
    assert_int_equal(world_job_count(r.w), rows);
    job_result jr;
    for (int i = 0; i < rows; i += rows / 16) assert_int_equal(world_job(r.w, i, &jr)->state, JOB_DONE);
    done(&r);
    return used;
}

static void test_bytes_per_trace_job(void **state) {
    (void)state;
    /* Under valgrind (CT_VALGRIND) malloc is not glibc's either, and
     * mallinfo2 reads zero. */
    int measurable = MALLOC_IS_GLIBC && !getenv("CT_VALGRIND");
    const int n = measurable ? 50000 : 2000;
    size_t a = bytes_with_trace(n);
    size_t b = bytes_with_trace(2 * n);
    double per_job = ((double)b - (double)a) / n;
    printf("# %.0f bytes per trace job (budget %.0f)%s\n", per_job, BUDGET_BYTES_PER_JOB,
           measurable ? "" : " [not checked: not glibc's malloc]");
    if (measurable) {
        assert_true(per_job > 0);
        assert_true(per_job <= BUDGET_BYTES_PER_JOB);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_per_trace_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
