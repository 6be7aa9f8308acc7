/*
 * test_base: the base facilities below every layer: the growable array and
 * the number formatter that every output people read goes through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/numfmt.h"

static void test_grow_appends(void **state) {
    (void)state;
    long *v = NULL;
    size_t n = 0, cap = 0;
    for (long i = 0; i < 10000; i++) {
        assert_int_equal(GROW(v, cap, n + 1), 0);
        v[n++] = i * 3;
    }
    assert_true(cap >= n);
    assert_true(cap < 2 * n);            /* doubling, not one item at a time */
    for (size_t i = 0; i < n; i++) assert_int_equal(v[i], (long)i * 3);
    free(v);
}

static void test_grow_refuses_overflow(void **state) {
    (void)state;
    double *v = NULL;
    size_t cap = 0;
    assert_int_equal(GROW(v, cap, 4), 0);
    double *keep = v;
    assert_int_equal(GROW(v, cap, SIZE_MAX / 2), -1);   /* too large for size_t bytes */
    assert_ptr_equal(v, keep);                          /* untouched on failure */
    assert_int_equal(cap, 8);
    assert_int_equal(GROW(v, cap, 3), 0);               /* already room: no change */
    assert_int_equal(cap, 8);
    free(v);
}


static void test_numfmt_examples(void **state) {
    (void)state;
    char b[64];
    assert_string_equal(nf_count(368640, b, sizeof b), "368,640");
    assert_string_equal(nf_count(21897216, b, sizeof b), "21,897,216");
    assert_string_equal(nf_count(-1234, b, sizeof b), "-1,234");
    assert_string_equal(nf_count(0.0007291, b, sizeof b), "0.000729");
    assert_string_equal(nf_count(12.54, b, sizeof b), "12.5");
    assert_string_equal(nf_count(7, b, sizeof b), "7");
    assert_string_equal(nf_count(0, b, sizeof b), "0");
    assert_string_equal(nf_qty(1, "node", "nodes", b, sizeof b), "1 node");
    assert_string_equal(nf_qty(2112, "node", "nodes", b, sizeof b), "2,112 nodes");
    assert_string_equal(nf_si(2.43e10, "Wh", b, sizeof b), "24.3 GWh");
    assert_string_equal(nf_si(999, "B", b, sizeof b), "999 B");
    assert_string_equal(nf_si(1000, "B", b, sizeof b), "1 kB");
    assert_string_equal(nf_si(0.0025, "s", b, sizeof b), "2.5 ms");
    assert_string_equal(nf_si(5, NULL, b, sizeof b), "5");
    assert_string_equal(nf_usd(1.102e6, b, sizeof b), "$1.1M");
    assert_string_equal(nf_usd(21100, b, sizeof b), "$21.1k");
    assert_string_equal(nf_usd(536000, b, sizeof b), "$536k");
    assert_string_equal(nf_usd(512, b, sizeof b), "$512");
    assert_string_equal(nf_usd(0.42, b, sizeof b), "$0.42");
    assert_string_equal(nf_usd(-2500, b, sizeof b), "-$2.5k");
    assert_string_equal(nf_mass_kg(0.7291, b, sizeof b), "729 g");
    assert_string_equal(nf_mass_kg(9464789.662, b, sizeof b), "9,465 t");
    assert_string_equal(nf_mass_kg(12.3, b, sizeof b), "12.3 kg");
    assert_string_equal(nf_energy_kwh(24268691.44, b, sizeof b), "24.3 GWh");
    assert_string_equal(nf_pct(0.9697, b, sizeof b), "97.0%");
    assert_string_equal(nf_pct(0.0123, b, sizeof b), "1.23%");
    assert_string_equal(nf_duration(396000, b, sizeof b), "4.58 d");
    assert_string_equal(nf_duration(90, b, sizeof b), "1.5 min");
    assert_string_equal(nf_duration(0.00025, b, sizeof b), "250 \xc2\xb5s");
    assert_string_equal(nf_duration(0, b, sizeof b), "0 s");
}

static void test_numfmt_edges(void **state) {
    (void)state;
    char b[64], tiny[4];
    assert_string_equal(nf_count(NAN, b, sizeof b), "-");
    assert_string_equal(nf_usd(INFINITY, b, sizeof b), "inf");
    assert_string_equal(nf_si(-INFINITY, "W", b, sizeof b), "-inf");
    assert_string_equal(nf_count(1234567, tiny, sizeof tiny), "1,2");   /* truncated, terminated */
    assert_string_equal(nf_count(999.7, b, sizeof b), "1,000");          /* rounds into the next form */
    assert_string_equal(nf_si(999.7, "W", b, sizeof b), "1 kW");
    assert_ptr_equal(nf_pct(0.5, b, 0), b);                              /* len 0 writes nothing */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_appends),
        cmocka_unit_test(test_grow_refuses_overflow),
        cmocka_unit_test(test_numfmt_examples),
        cmocka_unit_test(test_numfmt_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
