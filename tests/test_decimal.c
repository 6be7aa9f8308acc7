/*
 * test_decimal: base/decimal.h against the C library it stands in for.
 * decimal_int against "%lld" and decimal_whole against "%.0f" (glibc's
 * snprintf) on edge values (the ends of int64, -0, halves that round to
 * even both ways, the largest doubles below 2^53 and 2^63) and on random
 * ones of every magnitude; decimal_read against strtoll and strtod, bit
 * for bit, on edge texts and on random numbers written as the JSON writer
 * writes them ("%.10g", "%.0f", "%lld") and at full precision ("%.17g"),
 * and the texts it must leave to them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "tests/rndfix.h"

/* A double of random bits, finite. */
static double rnd_bits(void) {
    for (;;) {
        uint64_t u = rnd();
        double d;
        memcpy(&d, &u, sizeof d);
        if (isfinite(d)) return d;
    }
}

/* A random value of magnitude around 10^-3 .. 10^19, with a fraction or
 * without, of either sign. */
static double rnd_mag(void) {
    double d = (double)(rnd() >> 11) / 9007199254740992.0 * pow(10, (double)(rnd() % 23) - 3);
    if (rnd() % 3 == 0) d = floor(d) + (double)(rnd() % 2) * 0.5;   /* halves */
    return rnd() % 2 ? -d : d;
}

static void same_int(int64_t v) {
    char a[DECIMAL_MAX], b[64];
    int n = decimal_int(a, v);
    snprintf(b, sizeof b, "%lld", (long long)v);
    assert_string_equal(a, b);
    assert_int_equal(n, (int)strlen(b));
}

static void test_int(void **state) {
    (void)state;
    const int64_t edge[] = { 0, 1, -1, 9, 10, -10, 99, 100, 999999999, 1000000000, INT32_MAX, INT32_MIN,
                             INT64_MAX, INT64_MIN, INT64_MIN + 1, 1000000000000000000ll, -999999999999999999ll };
    for (size_t k = 0; k < sizeof edge / sizeof *edge; k++) same_int(edge[k]);
    for (int k = 0; k < 200000; k++) same_int((int64_t)rnd() >> (rnd() % 64));
}

/* decimal_whole(d) is snprintf's "%.0f" when it answers, and answers for
 * every finite |d| < 2^63. */
static void same_whole(double d) {
    char a[DECIMAL_MAX] = "untouched", b[400];
    int n = decimal_whole(a, d);
    if (!(fabs(d) < 0x1p63)) {
        assert_int_equal(n, -1);
        assert_string_equal(a, "untouched");
        return;
    }
    snprintf(b, sizeof b, "%.0f", d);
    if (strcmp(a, b)) fail_msg("%%.0f of %.17g: %s, snprintf %s", d, a, b);
    assert_int_equal(n, (int)strlen(b));
}

static void test_whole(void **state) {
    (void)state;
    const double edge[] = { 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.4, 0.6, 99960,
                            99960.5, 99961.5, 1e15, 1e15 + 0.5, 0x1p52, 0x1p52 - 0.5, 0x1p52 + 1, 0x1p53, 0x1p53 + 2,
                            0x1p53 - 1, 0x1p63 - 1024, -(0x1p63 - 1024), 0x1p63, -0x1p63, 1e300, -1e300, 5e-324,
                            -5e-324, INFINITY, -INFINITY, NAN };
    for (size_t k = 0; k < sizeof edge / sizeof *edge; k++) same_whole(edge[k]);
    for (int k = 0; k < 200000; k++) same_whole(rnd_mag());
    for (int k = 0; k < 50000; k++) same_whole(rnd_bits());
}

/* decimal_read(z) is strtoll's or strtod's value when it answers;
 * returns the answer (0, 'i', 'd'). */
static int same_read(const char *z) {
    int64_t i = 0;
    double d = 0;
    int r = decimal_read(z, strlen(z), &i, &d);
    if (r == 'i') {
        char *end;
        long long v = strtoll(z, &end, 10);
        assert_true(*end == 0 && !strpbrk(z, ".eE"));
        if (v != i) fail_msg("%s: %lld, strtoll %lld", z, (long long)i, v);
    } else if (r == 'd') {
        char *end;
        double v = strtod(z, &end);
        assert_true(*end == 0);
        if (memcmp(&v, &d, sizeof d)) fail_msg("%s: %.17g, strtod %.17g", z, d, v);
    } else {
        assert_int_equal(r, 0);
    }
    return r;
}

static void test_read_edges(void **state) {
    (void)state;
    const struct { const char *z; int r; } t[] = {
        { "0", 'i' }, { "-0", 'i' }, { "-0.0", 'd' }, { "0.0", 'd' }, { "541.0223388", 'd' },
        { "2.874410056e+10", 'd' }, { "1.5e-7", 'd' }, { "1E22", 'd' }, { "1e-22", 'd' }, { "123456789012345678", 'i' },
        { "-123456789012345678", 'i' }, { "0.000000000000000000001", 'd' }, { "900719925474099.2", 'd' }, { "9007199254740992.0", 0 },
        { "9007199254740993.0", 0 }, { "1234567890123456789", 0 }, { "1e23", 0 }, { "1e-23", 0 }, { "5e-324", 0 },
        { "1e1000", 0 }, { "1.", 0 }, { ".5", 0 }, { "-", 0 }, { "", 0 }, { "1e", 0 }, { "1e+", 0 }, { "0x10", 0 },
        { "inf", 0 }, { "nan", 0 }, { "1.5x", 0 }, { "+1", 0 }, { "--1", 0 }, { "1e5.5", 0 },
    };
    for (size_t k = 0; k < sizeof t / sizeof *t; k++) {
        int r = same_read(t[k].z);
        if (r != t[k].r) fail_msg("%s: answered %d, expected %d", t[k].z, r, t[k].r);
    }
}

/* Random numbers as the JSON writer writes them: nearly all answered
 * here, every answer the library's. */
static void test_read_random(void **state) {
    (void)state;
    const char *fmt[] = { "%.10g", "%.0f", "%.17g", "%.3f", "%.15g" };
    int answered[5] = { 0 }, n = 40000;
    for (int f = 0; f < 5; f++)
        for (int k = 0; k < n; k++) {
            char z[400];
            snprintf(z, sizeof z, fmt[f], k % 4 ? rnd_mag() : rnd_bits());
            answered[f] += same_read(z) != 0;
        }
    for (int k = 0; k < 100000; k++) {
        char z[32];
        snprintf(z, sizeof z, "%lld", (long long)((int64_t)rnd() >> (rnd() % 64)));
        same_read(z);
    }
    assert_true(answered[0] > n / 2);  /* "%.10g" of values that a job holds: the fast path */
    assert_true(answered[1] > n / 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int),
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_read_edges),
        cmocka_unit_test(test_read_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
