/*
 * test_units: the value syntax of CONTRACT.md ("Units in attribute values").
 *
 * Expected figures are the definitions: SI prefixes are powers of ten, IEC
 * prefixes (KiB...) powers of two, a bit is 1/8 byte, y = 365 d, w = 7 d.
 * Decimal units must come out exactly as the double nearest the written
 * figure ("1.5TB" == 1.5e12), which a reference strtod of the same number
 * with the exponent shifted checks on random inputs. Non-decimal units
 * (min, h, d, bits...) are checked to one rounding (relative 1e-15).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

typedef struct ok_case {
    const char *text;
    double want;
} ok_case;

static double parse_ok(const char *text, unit_kind kind) {
    double v = -12345;
    char err[200] = "";
    int rc = units_parse(text, kind, &v, err, sizeof err);
    if (rc != 0) print_error("units_parse(\"%s\", %d) failed: %s\n", text, (int)kind, err);
    assert_int_equal(rc, 0);
    return v;
}

/* Parse must fail, leave *out alone and write an err containing want
 * (when want is not NULL). */
static void parse_bad(const char *text, unit_kind kind, const char *want) {
    double v = -12345;
    char err[200] = "";
    int rc = units_parse(text, kind, &v, err, sizeof err);
    if (rc == 0) print_error("units_parse(\"%s\", %d) accepted: %.17g\n", text ? text : "(null)", (int)kind, v);
    assert_int_equal(rc, -1);
    assert_true(v == -12345);
    assert_true(err[0] != 0);
    if (want && !strstr(err, want)) {
        print_error("units_parse(\"%s\"): err \"%s\" lacks \"%s\"\n", text, err, want);
        fail();
    }
}

static void check_exact(const ok_case *t, size_t n, unit_kind kind) {
    for (size_t i = 0; i < n; i++) {
        double v = parse_ok(t[i].text, kind);
        if (v != t[i].want) print_error("%s: got %.17g want %.17g\n", t[i].text, v, t[i].want);
        assert_true(v == t[i].want);
    }
}

static void check_close(const ok_case *t, size_t n, unit_kind kind) {
    for (size_t i = 0; i < n; i++) {
        double v = parse_ok(t[i].text, kind);
        if (fabs(v - t[i].want) > 1e-15 * fabs(t[i].want))
            print_error("%s: got %.17g want %.17g\n", t[i].text, v, t[i].want);
        assert_true(fabs(v - t[i].want) <= 1e-15 * fabs(t[i].want));
    }
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_sizes(void **state) {
    (void)state;
    static const ok_case t[] = {
        { "80GB", 80e9 }, { "1.5TB", 1.5e12 }, { "512MiB", 512.0 * 1048576 }, { "130e9B", 130e9 },
        { "4096", 4096 }, { "0", 0 }, { "2.5", 2.5 }, { "1B", 1 }, { "8b", 1 }, { "1b", 0.125 },
        { "1kB", 1e3 }, { "1KB", 1e3 }, { "3MB", 3e6 }, { "7PB", 7e15 }, { "2EB", 2e18 },
        { "1KiB", 1024 }, { "1kiB", 1024 }, { "2GiB", 2147483648.0 }, { "1TiB", 1099511627776.0 },
        { "1PiB", 1125899906842624.0 }, { "1EiB", 1152921504606846976.0 },
        { "400Gb", 50e9 }, { "1Kb", 125 }, { "8Mb", 1e6 }, { "1Tb", 125e9 }, { "8Gib", 1073741824.0 },
        { "3.35TB", 3.35e12 }, { "0.5GB", 0.5e9 }, { ".5GB", 0.5e9 }, { "5.GB", 5e9 }, { "+80GB", 80e9 },
        { "1.5e3GB", 1.5e12 }, { "0.001TB", 1e9 }, { "0000080GB", 80e9 },
    };
    check_exact(t, N(t), UNIT_SIZE);
}

static void test_bandwidths(void **state) {
    (void)state;
    static const ok_case t[] = {
        { "400Gb/s", 50e9 }, { "3.35TB/s", 3.35e12 }, { "25GB/s", 25e9 }, { "100MiB/s", 104857600 },
        { "1B/s", 1 }, { "8b/s", 1 }, { "200", 200 }, { "1.555TB/s", 1.555e12 }, { "2039GB/s", 2039e9 },
        { "800Gb/s", 100e9 }, { "12.5 GB/s", 12.5e9 }, { "1kB/s", 1e3 }, { "1KiB/s", 1024 },
    };
    check_exact(t, N(t), UNIT_BANDWIDTH);
}

static void test_durations(void **state) {
    (void)state;
    static const ok_case exact[] = {
        { "90s", 90 }, { "250ms", 0.25 }, { "10us", 1e-5 }, { "5ns", 5e-9 }, { "2.5", 2.5 },
        { "0", 0 }, { "3h", 10800 }, { "90min", 5400 }, { "54d", 4665600 }, { "2w", 1209600 },
        { "1y", 31536000 },
    };
    check_exact(exact, N(exact), UNIT_DURATION);
    assert_true(parse_ok("3\xc2\xb5s", UNIT_DURATION) == 3e-6);
    static const ok_case close[] = {
        { "1.2y", 1.2 * 365 * 86400 }, { "50700h", 50700.0 * 3600 }, { "0.1h", 360 },
        { "1.5d", 129600 }, { "15min", 900 }, { "0.3w", 0.3 * 7 * 86400 },
    };
    check_close(close, N(close), UNIT_DURATION);
}

static void test_rates(void **state) {
    (void)state;
    static const ok_case exact[] = {
        { "10/s", 10 }, { "600/min", 10 }, { "7200/h", 2 }, { "86400/d", 1 }, { "20", 20 },
        { "0.5/s", 0.5 }, { "1/ms", 1000 }, { "0/s", 0 },
    };
    check_exact(exact, N(exact), UNIT_RATE);
    static const ok_case close[] = {
        { "6/h", 6.0 / 3600 }, { "2/d", 2.0 / 86400 }, { "1/min", 1.0 / 60 }, { "3/w", 3.0 / 604800 },
        { "1/y", 1.0 / 31536000 },
    };
    check_close(close, N(close), UNIT_RATE);
}

static void test_counts(void **state) {
    (void)state;
    static const ok_case t[] = {
        { "15.6T", 15.6e12 }, { "2M", 2e6 }, { "4k", 4e3 }, { "4K", 4e3 }, { "1e6", 1e6 },
        { "5000", 5000 }, { "0", 0 }, { "3G", 3e9 }, { "7B", 7e9 }, { "1.5k", 1500 },
        { "0.001k", 1 }, { "2.5E2k", 250000 }, { "16384", 16384 }, { "9007199254740991", 9007199254740991.0 },
        { "128256", 128256 }, { "1.000k", 1000 },
    };
    check_exact(t, N(t), UNIT_COUNT);
    /* 15.6T must be the exact integer 15,600,000,000,000 (no 15.6 * 1e12
     * rounding): a count is whole. */
    assert_true(parse_ok("15.6T", UNIT_COUNT) == 15600000000000.0);
}

static void test_numbers(void **state) {
    (void)state;
    static const ok_case t[] = {
        { "0.75", 0.75 }, { "-2.5", -2.5 }, { "+3", 3 }, { "1e-3", 1e-3 }, { "1E3", 1e3 },
        { "1e+3", 1e3 }, { "989", 989 }, { "-0.5e-2", -0.005 }, { "1e308", 1e308 }, { "4.9e-300", 4.9e-300 },
        { "0.0000000000000000000000000000000000000000000000001", 1e-49 },
        { "100000000000000000000000000000", 1e29 },
    };
    check_exact(t, N(t), UNIT_NUMBER);
    double z = parse_ok("-0", UNIT_NUMBER);
    assert_true(z == 0 && signbit(z));
}

/* Every unit of another kind names itself and what was expected. */
static void test_wrong_kind(void **state) {
    (void)state;
    parse_bad("80GB", UNIT_DURATION, "expected a duration");
    parse_bad("80GB", UNIT_DURATION, "'GB' is a size unit");
    parse_bad("90min", UNIT_SIZE, "'min' is a duration unit; expected a size");
    parse_bad("400Gb/s", UNIT_SIZE, "bandwidth unit");
    parse_bad("80GB", UNIT_BANDWIDTH, "size unit; expected a bandwidth");
    parse_bad("10/s", UNIT_DURATION, "rate unit");
    parse_bad("3h", UNIT_RATE, "duration unit; expected a rate");
    parse_bad("2M", UNIT_SIZE, "count unit");
    parse_bad("4k", UNIT_DURATION, "count unit");
    parse_bad("80GB", UNIT_COUNT, "size unit; expected a count");
    parse_bad("3s", UNIT_COUNT, "duration unit");
    parse_bad("0.5GB", UNIT_NUMBER, "size unit; expected a number");
    parse_bad("1k", UNIT_NUMBER, "expected a number");
    parse_bad("10/s", UNIT_BANDWIDTH, "rate unit");
    parse_bad("25GB/s", UNIT_RATE, "bandwidth unit");

    /* Each kind's own "expected" text is what units_expected() says. */
    static const unit_kind kinds[] = { UNIT_NUMBER, UNIT_SIZE, UNIT_BANDWIDTH, UNIT_DURATION, UNIT_RATE, UNIT_COUNT };
    static const char *samples[] = { "80GB", "400Gb/s", "90min", "10/s", "4k" };
    for (size_t k = 0; k < N(kinds); k++) {
        const char *exp = units_expected(kinds[k]);
        assert_non_null(exp);
        assert_true(strncmp(exp, "a ", 2) == 0);
        for (size_t s = 0; s < N(samples); s++) {
            if (k > 0 && s == k - 1) continue;   /* its own sample */
            parse_bad(samples[s], kinds[k], exp);
        }
    }
}

static void test_negative(void **state) {
    (void)state;
    parse_bad("-3GB", UNIT_SIZE, "negative size");
    parse_bad("-3", UNIT_SIZE, "negative size");
    parse_bad("-1Gb/s", UNIT_BANDWIDTH, "negative bandwidth");
    parse_bad("-5min", UNIT_DURATION, "negative duration");
    parse_bad("-10/s", UNIT_RATE, "negative rate");
    parse_bad("-4k", UNIT_COUNT, "negative count");
    parse_bad("-0", UNIT_COUNT, "negative");
    parse_bad("-0GB", UNIT_SIZE, "negative");
    assert_true(parse_ok("-4", UNIT_NUMBER) == -4);
}

static void test_junk(void **state) {
    (void)state;
    static const char *junk[] = {
        "", "   ", "\t\n", "abc", "GB", "80GBx", "80 GB x", "8 0GB", "80 G B", "80G B", "1.2.3GB",
        "0x10", "0X1p3", "0x1p3GB", "inf", "-inf", "+inf", "INF", "infinity", "nan", "NaN", "-nan",
        "1e", "1e+", "1e-GB", "1ee3", ".", "-", "+", "+-1", "--1", "1,5GB", "1_000", "80gb", "80Gbps",
        "80GB/", "80GB/x", "10/", "10/m", "5m", "80 GB/ s", "1 0", "80GB\x01", "\xc2\xb5s",
        "1..5", "e3", "1e3.5", "1k2",
    };
    static const unit_kind kinds[] = { UNIT_NUMBER, UNIT_SIZE, UNIT_BANDWIDTH, UNIT_DURATION, UNIT_RATE, UNIT_COUNT };
    for (size_t i = 0; i < N(junk); i++)
        for (size_t k = 0; k < N(kinds); k++)
            parse_bad(junk[i], kinds[k], units_expected(kinds[k]));
    parse_bad(NULL, UNIT_SIZE, "empty");
    parse_bad("", UNIT_SIZE, "empty");
    parse_bad("0x10", UNIT_COUNT, "hexadecimal");
    parse_bad("inf", UNIT_NUMBER, "not a number");
    parse_bad("80GBx", UNIT_SIZE, "unknown unit 'GBx'");
    parse_bad("1.5", UNIT_COUNT, "whole number");
    parse_bad("0.5k1", UNIT_COUNT, NULL);
    parse_bad("1.0005k", UNIT_COUNT, "whole number");
}

static void test_whitespace(void **state) {
    (void)state;
    static const ok_case t[] = {
        { " 80GB", 80e9 }, { "80GB ", 80e9 }, { "  80 GB  ", 80e9 }, { "\t80\tGB\n", 80e9 },
        { "\r\n 1.5TB \r\n", 1.5e12 }, { "80  GB", 80e9 }, { " 4096 ", 4096 },
    };
    check_exact(t, N(t), UNIT_SIZE);
    assert_true(parse_ok(" 3.35 TB/s ", UNIT_BANDWIDTH) == 3.35e12);
    assert_true(parse_ok(" 90 min ", UNIT_DURATION) == 5400);
    assert_true(parse_ok(" 10 /s", UNIT_RATE) == 10);
    assert_true(parse_ok(" 2 M ", UNIT_COUNT) == 2e6);
    assert_true(parse_ok(" -2 ", UNIT_NUMBER) == -2);
    parse_bad("- 2", UNIT_NUMBER, NULL);
    parse_bad("1 e3", UNIT_NUMBER, NULL);
}

static void test_exponents(void **state) {
    (void)state;
    assert_true(parse_ok("130e9B", UNIT_SIZE) == 130e9);
    assert_true(parse_ok("1.3E11", UNIT_SIZE) == 130e9);
    assert_true(parse_ok("1300e+8B", UNIT_SIZE) == 130e9);
    assert_true(parse_ok("1.5e-3s", UNIT_DURATION) == 1.5e-3);
    assert_true(parse_ok("1.5e-3", UNIT_DURATION) == 1.5e-3);
    assert_true(parse_ok("1e3ms", UNIT_DURATION) == 1);
    assert_true(parse_ok("2e1/s", UNIT_RATE) == 20);
    assert_true(parse_ok("1.56e13", UNIT_COUNT) == 15.6e12);
    assert_true(parse_ok("1EB", UNIT_SIZE) == 1e18);       /* E is a prefix, not an exponent */
    assert_true(parse_ok("1e1EB", UNIT_SIZE) == 1e19);
    assert_true(parse_ok("1E1EB", UNIT_SIZE) == 1e19);
    assert_true(parse_ok("0e999999999999999999", UNIT_NUMBER) == 0);
}

static void test_huge(void **state) {
    (void)state;
    parse_bad("1e400", UNIT_NUMBER, "out of range");
    parse_bad("-1e400", UNIT_NUMBER, "out of range");
    parse_bad("1e-400", UNIT_NUMBER, "out of range");
    parse_bad("1e308PB", UNIT_SIZE, "out of range");
    parse_bad("1e300EiB", UNIT_SIZE, "out of range");
    parse_bad("1e400B", UNIT_SIZE, "out of range");
    parse_bad("1e99999999999999999999", UNIT_SIZE, "out of range");
    parse_bad("1e-99999999999999999999", UNIT_NUMBER, "out of range");
    parse_bad("1e305y", UNIT_DURATION, "out of range");
    parse_bad("1e400/s", UNIT_RATE, "out of range");
    parse_bad("9007199254740992", UNIT_COUNT, "too large");
    parse_bad("1e16", UNIT_COUNT, "too large");
    parse_bad("10000T", UNIT_COUNT, "too large");
    parse_bad("1e400", UNIT_COUNT, NULL);
    parse_bad("123456789012345678901234567890123456789012345", UNIT_NUMBER, "digits");
    assert_true(parse_ok("9000T", UNIT_COUNT) == 9e15);
    assert_true(parse_ok("1.7976931348623157e308", UNIT_NUMBER) == 1.7976931348623157e308);
    /* Many zeros around few digits are not "too many digits". */
    assert_true(parse_ok("000000000000000000000000000000000000000000000000001.000000000000000000000000000000000000000000000",
                         UNIT_NUMBER) == 1);
}

/* The result is untouched on error, err may be NULL or short. */
static void test_error_buffers(void **state) {
    (void)state;
    double v = 7;
    char small[8];
    assert_int_equal(units_parse("80GB", UNIT_DURATION, &v, NULL, 0), -1);
    assert_true(v == 7);
    memset(small, 'x', sizeof small);
    assert_int_equal(units_parse("80GB", UNIT_DURATION, &v, small, sizeof small), -1);
    assert_true(memchr(small, 0, sizeof small) != NULL);
    assert_true(v == 7);
    assert_int_equal(units_parse("80GB", UNIT_DURATION, &v, small, 0), -1);
}

/* Decimal units fold into the exponent: "d.ddd e X unit" must equal strtod
 * of "d.ddd e (X + unit's power of ten)", bit for bit, on random input. */
static void test_against_strtod(void **state) {
    (void)state;
    static const struct { const char *unit; unit_kind kind; int p10; } units[] = {
        { "", UNIT_NUMBER, 0 }, { "B", UNIT_SIZE, 0 }, { "kB", UNIT_SIZE, 3 }, { "GB", UNIT_SIZE, 9 },
        { "TB", UNIT_SIZE, 12 }, { "PB/s", UNIT_BANDWIDTH, 15 }, { "ms", UNIT_DURATION, -3 },
        { "ns", UNIT_DURATION, -9 }, { "/us", UNIT_RATE, 6 },
    };
    unsigned seed = 12345;
    for (int i = 0; i < 20000; i++) {
        char digits[24], text[64], ref[64];
        int nd, point, e;
        seed = seed * 1103515245u + 12345u;
        nd = 1 + (int)((seed >> 16) % 20);
        for (int j = 0; j < nd; j++) {
            seed = seed * 1103515245u + 12345u;
            digits[j] = (char)('0' + (seed >> 16) % 10);
        }
        digits[nd] = 0;
        seed = seed * 1103515245u + 12345u;
        point = (int)((seed >> 16) % (unsigned)(nd + 1));
        seed = seed * 1103515245u + 12345u;
        e = (int)((seed >> 16) % 81) - 40;
        size_t k = (size_t)i % N(units);
        snprintf(text, sizeof text, "%.*s.%se%d%s", point, digits, digits + point, e, units[k].unit);
        snprintf(ref, sizeof ref, "%.*s.%se%d", point, digits, digits + point, e + units[k].p10);
        double want = strtod(ref, NULL);
        double got = parse_ok(text, units[k].kind);
        if (got != want) print_error("%s: got %.17g, strtod(%s) = %.17g\n", text, got, ref, want);
        assert_true(got == want);
    }
}

/* The program never sets LC_NUMERIC, but a library or test harness might:
 * with a comma locale strtod would stop at '.'; units_parse must not. */
static void test_locale(void **state) {
    (void)state;
    static const char *locales[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE", NULL };
    const char *set = NULL;
    for (int i = 0; locales[i] && !set; i++) set = setlocale(LC_NUMERIC, locales[i]);
    if (!set) skip();
    double v = parse_ok("1.5TB", UNIT_SIZE);
    double w = parse_ok("3.35", UNIT_NUMBER);
    setlocale(LC_NUMERIC, "C");
    assert_true(v == 1.5e12);
    assert_true(w == 3.35);
}

/* ---- units_format ------------------------------------------------------ */

static void test_format_examples(void **state) {
    (void)state;
    char buf[64];
    assert_string_equal(units_format(80e9, UNIT_SIZE, buf, sizeof buf), "80 GB");
    assert_string_equal(units_format(3.35e12, UNIT_BANDWIDTH, buf, sizeof buf), "3.35 TB/s");
    assert_string_equal(units_format(54 * 86400.0, UNIT_DURATION, buf, sizeof buf), "54 d");
    assert_string_equal(units_format(1200, UNIT_COUNT, buf, sizeof buf), "1.2 k");
    assert_string_equal(units_format(0.25, UNIT_DURATION, buf, sizeof buf), "250 ms");
    assert_string_equal(units_format(10, UNIT_RATE, buf, sizeof buf), "10/s");
    assert_string_equal(units_format(6.0 / 3600, UNIT_RATE, buf, sizeof buf), "6/h");
    assert_string_equal(units_format(0, UNIT_SIZE, buf, sizeof buf), "0 B");
    assert_string_equal(units_format(0.75, UNIT_NUMBER, buf, sizeof buf), "0.75");
    assert_string_equal(units_format(999.99e9, UNIT_SIZE, buf, sizeof buf), "1 TB");
    assert_string_equal(units_format(-5e9, UNIT_SIZE, buf, sizeof buf), "-5 GB");
    /* Truncated but always terminated. */
    char small[4];
    memset(small, 'x', sizeof small);
    assert_ptr_equal(units_format(3.35e12, UNIT_BANDWIDTH, small, sizeof small), small);
    assert_int_equal(strlen(small), 3);
}

/* Parsing what units_format wrote gives the value back within the four
 * significant digits it prints: relative 5e-4. */
static void test_format_round_trip(void **state) {
    (void)state;
    static const unit_kind kinds[] = { UNIT_NUMBER, UNIT_SIZE, UNIT_BANDWIDTH, UNIT_DURATION, UNIT_RATE, UNIT_COUNT };
    static const double values[] = {
        0, 1, 0.5, 2, 10, 999, 1000, 1001, 1234.5, 65536, 536870912, 80e9, 1.5e12, 3.35e12,
        4665600, 37843200, 5400, 1e-9, 3e-6, 2.5e-4, 1.7e-3, 6.0 / 3600, 1.0 / 86400, 1e15,
        7.7e17, 123456789, 9.99949e5, 9.9996e5, 2.9e19, 1e25,
    };
    char buf[64];
    for (size_t k = 0; k < N(kinds); k++) {
        for (size_t i = 0; i < N(values); i++) {
            double v = values[i], back = -1;
            char err[200];
            if (kinds[k] == UNIT_COUNT) {
                if (v >= 9e15) continue;   /* beyond the largest count */
                v = floor(v);
            }
            units_format(v, kinds[k], buf, sizeof buf);
            int rc = units_parse(buf, kinds[k], &back, err, sizeof err);
            if (rc != 0 || fabs(back - v) > 5e-4 * fabs(v)) {
                print_error("kind %d: %.17g -> \"%s\" -> rc %d %.17g (%s)\n", (int)kinds[k], v, buf, rc, back,
                            rc ? err : "");
                fail();
            }
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_bandwidths),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_wrong_kind),
        cmocka_unit_test(test_negative),
        cmocka_unit_test(test_junk),
        cmocka_unit_test(test_whitespace),
        cmocka_unit_test(test_exponents),
        cmocka_unit_test(test_huge),
        cmocka_unit_test(test_error_buffers),
        cmocka_unit_test(test_against_strtod),
        cmocka_unit_test(test_locale),
        cmocka_unit_test(test_format_examples),
        cmocka_unit_test(test_format_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
