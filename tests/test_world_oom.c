/*
 * test_world_oom: building the world survives running out of memory at
 * every allocation it makes.
 *
 * world_new builds in steps (cluster and nodes, failure processes, jobs,
 * their submission, microbenchmarks, services); each step that fails must
 * leave what the earlier ones built for world_free to free once, and
 * world_new must return NULL with "out of memory" in err. The scenario
 * touches every step: a training job with checkpoints at the automatic
 * interval, a failure profile, <jobs> groups whose arrivals and durations
 * come from their own random streams, a cloud pool, queues, an inference
 * service and microbenchmarks.
 *
 * Method: the test runs itself again as a child (CT_WORLD_OOM_CHILD=1)
 * with build/tests/libfailmalloc.so preloaded, which makes the Nth
 * allocation of the process fail (tests/failmalloc.c). Counting runs give
 * the allocations before world_new and after world_free; every N in
 * between is tried once. glibc's allocator aborts on a double free and a
 * wild pointer crashes: the child must exit 0 each time. Skipped under
 * ASan (which owns malloc) and without the shim.
 *
 * Known and let through (exit 3, counted and said): a failed allocation
 * while a service starts its first replicas is reported by sim/serving as
 * "replica 1 of 1 needs 1 free GPUs ...; the cluster has no more": the
 * serving_host acquire() contract has one failure value (-1, "cannot be
 * made") for both a full cluster and no memory.
 *
 * Not covered: <jobs gpus="8:0.5,16:0.5"> (a size distribution). GSL's
 * gsl_ran_discrete_preproc dereferences NULL when its own allocation
 * fails (libgsl 2.7), inside rng_discrete_new: a library bug, not the
 * world's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

#define SHIM "build/tests/libfailmalloc.so"

static const char xml[] =
    "<scenario name=\"oom\" seed=\"1\" duration=\"2d\">"
    "<cluster><nodes type=\"dgx-h100\" count=\"4\"/>"
    "<storage name=\"ckpt\" kind=\"parallel-fs\" bandwidth=\"200GB/s\"/>"
    "<cloud node-type=\"dgx-h100\" max-nodes=\"2\" provision-time=\"20min\" scale-up-after=\"30min\""
    " idle-release=\"1h\"/></cluster>"
    "<failures><failure profile=\"llama3\"/></failures>"
    "<scheduler policy=\"priority\" preemption=\"true\"><queue name=\"a\"/><queue name=\"b\"/></scheduler>"
    "<workload>"
    "<training name=\"t\" gpus=\"16\" tp=\"1\" pp=\"1\" dp=\"16\" sharding=\"fsdp\" global-batch=\"32\""
    " seq-len=\"4096\" recompute=\"selective\" steps=\"100\" storage=\"ckpt\" queue=\"a\">"
    "<model preset=\"llama3-8b\"/><checkpoint interval=\"auto\" mode=\"async\" layout=\"sharded\"/></training>"
    "<jobs name=\"p\" count=\"5\" arrivals=\"poisson\" rate=\"12/h\" gpus=\"8\" duration=\"1h\""
    " duration-distribution=\"lognormal\" queue=\"b\"/>"
    "<jobs name=\"q\" count=\"3\" arrivals=\"poisson\" rate=\"6/h\" gpus=\"2\" duration=\"1h\""
    " duration-distribution=\"exponential\" queue=\"a\"/>"
    "<inference name=\"chat\" model=\"llama3-8b\" precision=\"bf16\" tp=\"1\" replicas=\"1\" max-batch=\"64\">"
    "<arrivals process=\"poisson\" rate=\"1/s\" duration=\"1h\"/>"
    "<requests input-tokens=\"100\" output-tokens=\"20\"/></inference>"
    "</workload>"
    "<microbenchmarks><collective op=\"allreduce\" ranks=\"8\" min-size=\"1KB\" max-size=\"1MB\" factor=\"4\"/>"
    "<gemm m=\"1024\" n=\"1024\" k=\"1024\" precision=\"bf16\"/></microbenchmarks>"
    "</scenario>";

/* The child: load, then (unless only_load) build and free the world.
 * Exit 0 when the world was built, or refused with an out-of-memory
 * message; 3 for the known serving message (above); 1 (saying why) for
 * any other refusal. */
static int child(int only_load) {
    scenario *s = NULL;
    char err[2048] = "";
    if (scenario_load_memory(xml, strlen(xml), "oom.xml", &s, err, sizeof err) != 0) {
        fprintf(stderr, "child: scenario does not load: %s\n", err);
        return 2;            /* not under test: the parent skips this N */
    }
    metric_bus *bus = metrics_new();
    if (!bus) return 2;
    int rc = 0;
    if (!only_load) {
        world *w = world_new(s, bus, err, sizeof err);
        if (!w && strstr(err, "; the cluster has no more")) {
            rc = 3;
        } else if (!w && !strstr(err, "out of memory")) {
            fprintf(stderr, "child: refused without running out of memory: %s\n", err);
            rc = 1;
        }
        world_free(w);
    }
    metrics_free(bus);
    scenario_free(s);
    return rc;
}

/* Run the child with allocation n failing (0: count only). Returns its
 * wait status; *calls gets the shim's count in count-only mode. */
static int spawn(long n, int only_load, long *calls) {
    char out[] = "/tmp/test_world_oom.XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char nbuf[32];
        snprintf(nbuf, sizeof nbuf, "%ld", n);
        dup2(fd, 2);
        setenv("CT_WORLD_OOM_CHILD", only_load ? "load" : "build", 1);
        setenv("CT_FAIL_MALLOC", nbuf, 1);
        setenv("LD_PRELOAD", SHIM, 1);
        execl("/proc/self/exe", "test_world_oom", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char text[4096] = "";
    ssize_t k = pread(fd, text, sizeof text - 1, 0);
    text[k > 0 ? k : 0] = 0;
    close(fd);
    unlink(out);
    if (calls) {
        const char *z = strstr(text, "failmalloc: ");
        *calls = z ? strtol(z + 12, NULL, 10) : -1;
    }
    if (!(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3)) && n > 0)
        print_message("  allocation %ld: %s\n", n, text[0] ? text : "(no message)");
    return st;
}

static int asan_build(void) {
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1;
#endif
#endif
    return 0;
}

static void test_every_allocation_of_world_new_may_fail(void **state) {
    (void)state;
    if (asan_build()) skip();            /* ASan owns malloc: the shim cannot interpose */
    if (access(SHIM, R_OK) != 0) {
        print_message("  skip: %s not built (make %s)\n", SHIM, SHIM);
        skip();
    }
    long before = 0, after = 0;
    int st = spawn(0, 1, &before);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    st = spawn(0, 0, &after);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_true(before > 0 && after > before);
    int bad = 0, tried = 0, known = 0;
    for (long n = before + 1; n <= after; n++) {
        st = spawn(n, 0, NULL);
        tried++;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 2) continue;    /* failed before world_new: not ours */
        if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {            /* serving's message: see the top */
            known++;
            continue;
        }
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            print_message("  allocation %ld of %ld..%ld: %s %d\n", n, before + 1, after,
                          WIFSIGNALED(st) ? "killed by signal" : "exit",
                          WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            bad++;
        }
    }
    print_message("  %d allocations of world_new and world_free failed one at a time, %d failed badly; %d reported "
                  "by serving as a full cluster (known: see the top of this file)\n", tried, bad, known);
    assert_int_equal(bad, 0);
}

int main(void) {
    const char *mode = getenv("CT_WORLD_OOM_CHILD");
    if (mode) return child(!strcmp(mode, "load"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_of_world_new_may_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
