/*
 * test_serving_reservoir: the latency samples of sim/serving_stats.c past
 * RESERVOIR (4M), where each new sample replaces a random slot with
 * probability RESERVOIR/seen (Vitter's algorithm R, ACM TOMS 11(1), 1985).
 * The replacements wait in a log and are written in bursts (a reservoir
 * slot is a cache miss); the reservoir must be the one that writing each
 * at once gives: same draws from the same stream, same slots, later
 * replacements of a slot winning, the log's tail written by
 * sv_samples_flush. Also the sum and count of every sample seen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/rng.h"
#include "sim/serving_int.h"

/* Samples past the reservoir: not a multiple of the log, so a tail waits. */
#define EXTRA 1000003

static double value_of(int64_t i) { return (double)((i * 2654435761u) % 1000003) * 1e-3; }

static void test_reservoir_as_written_at_once(void **state) {
    (void)state;
    serving sv;
    memset(&sv, 0, sizeof sv);
    sv.r_res = rng_new(7, "reservoir", 0);
    rng *ref_rng = rng_new(7, "reservoir", 0);
    double *ref = malloc((size_t)RESERVOIR * sizeof *ref);
    samples p;
    memset(&p, 0, sizeof p);
    assert_non_null(sv.r_res);
    assert_non_null(ref_rng);
    assert_non_null(ref);
    double sum = 0;
    int64_t replaced = 0;
    for (int64_t i = 0; i < RESERVOIR + EXTRA; i++) {
        double v = value_of(i);
        sv_sample_add(&sv, &p, v);
        sum += v;
        if (i < RESERVOIR) {
            ref[i] = v;
            continue;
        }
        uint64_t k = rng_uniform_int(ref_rng, (uint64_t)i + 1);   /* seen, this one counted */
        if (k < RESERVOIR) ref[k] = v, replaced++;
    }
    assert_true(replaced > EXTRA / 2 && replaced % SAMPLES_LOG != 0);   /* replacements, a tail left */
    assert_int_equal(p.n, RESERVOIR);
    assert_int_equal(p.seen, RESERVOIR + EXTRA);
    assert_true(p.sum == sum);
    assert_true(p.log_n > 0);                           /* the tail is still waiting... */
    sv_samples_flush(&p);
    assert_int_equal(p.log_n, 0);
    assert_memory_equal(p.x, ref, (size_t)RESERVOIR * sizeof *ref);   /* ...and now written */
    free(p.x);
    free(ref);
    rng_free(ref_rng);
    rng_free(sv.r_res);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reservoir_as_written_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
