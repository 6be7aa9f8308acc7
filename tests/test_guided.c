/*
 * test_guided: plan/guided.h, the dealing of a sweep's runs to MPI ranks.
 * For list sizes 0..300 and 1..5 takers asking in a fixed rotation (and
 * in a skewed order where taker 0 asks three times as often), every item
 * is dealt exactly once; a taker's first chunks come from the front of
 * its own region, in order; chunks from guided_size shrink as the list
 * empties; a taker whose region is empty takes the back of the fullest
 * region.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "plan/guided.h"

/* Deal n items to parts takers, taker k asking weight[k] times a round;
 * each item's taker in *owner. */
static void deal_all(long long n, int parts, const int *weight, int *owner) {
    guided g;
    assert_int_equal(guided_init(&g, n, parts), 0);
    for (long long i = 0; i < n; i++) owner[i] = -1;
    long long dealt = 0, last = n + 1;
    while (g.left > 0) {
        for (int k = 0; k < parts; k++)
            for (int w = 0; w < weight[k]; w++) {
                long long want = k == 0 ? 1 : guided_size(&g, 1), lo, hi;
                if (k != 0) {
                    assert_true(want <= last || want == 1);    /* shrinking */
                    last = want;
                }
                if (!guided_take(&g, k, want, &lo, &hi)) continue;
                assert_true(hi - lo >= 1 && hi - lo <= want);
                for (long long i = lo; i < hi; i++) {
                    assert_int_equal(owner[i], -1);          /* once */
                    owner[i] = k;
                }
                dealt += hi - lo;
            }
    }
    long long lo, hi;
    assert_int_equal(guided_take(&g, 0, 5, &lo, &hi), 0);
    assert_true(lo == hi);
    assert_int_equal(dealt, n);
    guided_free(&g);
}

static void every_item_once(void **state) {
    (void)state;
    int even[5] = { 1, 1, 1, 1, 1 }, skew[5] = { 3, 1, 1, 1, 1 };
    int *owner = malloc(301 * sizeof *owner);
    assert_non_null(owner);
    for (int parts = 1; parts <= 5; parts++)
        for (long long n = 0; n <= 300; n++) {
            deal_all(n, parts, even, owner);
            for (long long i = 0; i < n; i++) assert_true(owner[i] >= 0);
            deal_all(n, parts, skew, owner);
            for (long long i = 0; i < n; i++) assert_true(owner[i] >= 0);
        }
    free(owner);
}

static void home_region_first(void **state) {
    (void)state;
    guided g;
    assert_int_equal(guided_init(&g, 800, 2), 0);
    long long lo, hi;
    assert_int_equal(guided_size(&g, 1), 200);                 /* ceil(800 / (2 x 2)) */
    assert_int_equal(guided_take(&g, 1, guided_size(&g, 1), &lo, &hi), 1);
    assert_true(lo == 400 && hi == 600);                       /* the front of [400, 800) */
    assert_int_equal(guided_take(&g, 0, 1, &lo, &hi), 1);
    assert_true(lo == 0 && hi == 1);
    assert_int_equal(guided_size(&g, 1), 150);                 /* ceil(599 / 4) */
    assert_int_equal(guided_size(&g, 500), 500);               /* at least min */
    assert_int_equal(guided_size(&g, 700), 599);               /* at most what is left */
    guided_free(&g);
}

static void steals_from_the_back(void **state) {
    (void)state;
    guided g;
    assert_int_equal(guided_init(&g, 12, 3), 0);               /* regions [0,4) [4,8) [8,12) */
    long long lo, hi;
    assert_int_equal(guided_take(&g, 2, 4, &lo, &hi), 1);
    assert_true(lo == 8 && hi == 12);
    assert_int_equal(guided_take(&g, 0, 1, &lo, &hi), 1);      /* [1,4) and [4,8) left */
    assert_int_equal(guided_take(&g, 2, 2, &lo, &hi), 1);      /* region 1 is fullest: its back */
    assert_true(lo == 6 && hi == 8);
    assert_int_equal(guided_take(&g, 2, 9, &lo, &hi), 1);      /* now region 0 (3 left) over 1 (2) */
    assert_true(lo == 1 && hi == 4);
    assert_int_equal(guided_take(&g, 1, 9, &lo, &hi), 1);
    assert_true(lo == 4 && hi == 6);
    assert_int_equal(g.left, 0);
    assert_int_equal(guided_take(&g, 1, 9, &lo, &hi), 0);
    guided_free(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_item_once),
        cmocka_unit_test(home_region_first),
        cmocka_unit_test(steals_from_the_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
