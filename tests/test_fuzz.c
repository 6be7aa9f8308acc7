/*
 * test_fuzz: replays the fuzzing corpora in `make test`, without clang.
 *
 * Each libFuzzer harness tests/fuzz/fuzz_<name>.c is compiled in here under
 * its own name and fed every file of tests/fuzz/<name>/: the seeds and the
 * inputs that once broke a property (files named regress-*), kept as
 * regression tests. A harness aborts when a property fails (one-line
 * "file:line:" errors, values in range, nothing left allocated), which
 * fails this test; the ASan+UBSan copy of this binary also catches memory
 * errors and leaks on those inputs.
 *
 * Run from the project root (make test does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLVMFuzzerTestOneInput fuzz_scenario_one
#include "tests/fuzz/fuzz_scenario.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_units_one
#include "tests/fuzz/fuzz_units.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_trace_one
#include "tests/fuzz/fuzz_trace.c"
#undef LLVMFuzzerTestOneInput

typedef int (*harness)(const uint8_t *, size_t);

/* Feed every file of tests/fuzz/<name>/ to h; at least min_files must exist. */
static void replay(const char *name, harness h, size_t min_files) {
    char pat[128];
    snprintf(pat, sizeof pat, "tests/fuzz/%s/*", name);
    glob_t g;
    assert_int_equal(glob(pat, 0, NULL, &g), 0);
    size_t n = 0, regress = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        rewind(f);
        uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        h(buf, (size_t)len);
        free(buf);
        n++;
        regress += strstr(g.gl_pathv[i], "/regress-") != NULL;
    }
    globfree(&g);
    print_message("%s: %zu inputs (%zu regressions)\n", name, n, regress);
    assert_true(n >= min_files);
}

static void test_scenario_corpus(void **state) { (void)state; replay("scenario", fuzz_scenario_one, 20); }
static void test_units_corpus(void **state) { (void)state; replay("units", fuzz_units_one, 20); }
static void test_trace_corpus(void **state) { (void)state; replay("trace", fuzz_trace_one, 10); }

static int teardown(void **state) {
    (void)state;
    scenario_free(base);                 /* fuzz_trace's base scenario */
    base = NULL;
    remove(path);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_corpus),
        cmocka_unit_test(test_units_corpus),
        cmocka_unit_test(test_trace_corpus),
    };
    return cmocka_run_group_tests_name("fuzz corpora", tests, NULL, teardown);
}
