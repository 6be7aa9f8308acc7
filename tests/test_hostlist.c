/*
 * test_hostlist: Slurm node-name lists (base/hostlist): expansion in the
 * order written, zero padding from the lower bound, refusals, and
 * compression that expands back to the same names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hostlist.h"

typedef struct names {
    char text[64][HOSTLIST_NAME_MAX];
    int n;
} names;

static int collect(void *ctx, const char *name) {
    names *v = ctx;
    if (v->n == 64) return 1;
    snprintf(v->text[v->n++], HOSTLIST_NAME_MAX, "%s", name);
    return 0;
}

/* list expands to the space-separated words of want. */
static void expands_to(const char *list, const char *want) {
    names v = { .n = 0 };
    char why[256] = "", got[4096] = "";
    long n = hostlist_expand(list, collect, &v, why, sizeof why);
    if (n < 0) fail_msg("%s: %s", list, why);
    assert_int_equal(n, v.n);
    for (int i = 0; i < v.n; i++) {
        if (i) strcat(got, " ");
        strcat(got, v.text[i]);
    }
    assert_string_equal(got, want);
}

static void test_expand(void **state) {
    (void)state;
    expands_to("gpu01", "gpu01");
    expands_to("gpu[01-04]", "gpu01 gpu02 gpu03 gpu04");
    expands_to("a[1-3,7],b05", "a1 a2 a3 a7 b05");
    expands_to("n[8-10]", "n8 n9 n10");
    expands_to("n[08-10]", "n08 n09 n10");
    expands_to("rack[1-2]-x", "rack1-x rack2-x");
    expands_to("z[3,1]", "z3 z1");                  /* the order written */
    expands_to("[1-2]", "1 2");
}

static void refused(const char *list, const char *want) {
    char why[256] = "";
    assert_true(hostlist_expand(list, NULL, NULL, why, sizeof why) < 0);
    if (!strstr(why, want)) fail_msg("%s: \"%s\" lacks \"%s\"", list, why, want);
}

static void test_refusals(void **state) {
    (void)state;
    refused("", "empty list");
    refused("a,,b", "empty name");
    refused("a[1-3", "expected ',' or ']'");
    refused("a[3-1]", "goes down");
    refused("a[x]", "expected a number or a range");
    refused("a[1]b[2]", "one [...] group per name");
    refused("a b", "unexpected character");
    refused("a]", "unexpected character");
    refused("n[0-99999999]", "more than");
    refused("n[1234567890123456789]", "expected a number");
}

static void round_trip(const char *const *in, size_t n, const char *want) {
    char buf[256];
    assert_true(hostlist_compress(in, n, buf, sizeof buf) >= 0);
    assert_string_equal(buf, want);
    names v = { .n = 0 };
    char why[256];
    assert_int_equal(hostlist_expand(buf, collect, &v, why, sizeof why), (long)n);
    for (size_t i = 0; i < n; i++) assert_string_equal(v.text[i], in[i]);
}

static void test_compress(void **state) {
    (void)state;
    const char *a[] = { "gpu01", "gpu02", "gpu03", "gpu05", "login", "b05" };
    round_trip(a, 6, "gpu[01-03,05],login,b05");
    const char *b[] = { "n8", "n9", "n10", "n11" };
    round_trip(b, 4, "n[8-11]");
    const char *c[] = { "n09", "n10", "n3" };
    round_trip(c, 3, "n[09-10,3]");
    const char *d[] = { "x2", "x1" };
    round_trip(d, 2, "x[2,1]");
    char small[8];
    assert_int_equal(hostlist_compress(a, 6, small, sizeof small), -1);
    assert_string_equal(small, "");
    const char *bad[] = { "a,b" };
    assert_int_equal(hostlist_compress(bad, 1, small, sizeof small), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_compress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
