/*
 * rndfix: the small deterministic generator the tests that draw random
 * inputs share (test_select, test_decimal): xorshift64* (S. Vigna, "An
 * experimental exploration of Marsaglia's xorshift generators, scrambled",
 * ACM TOMS 2016), the same sequence on every machine.
 */
#ifndef CT_TEST_RNDFIX_H
#define CT_TEST_RNDFIX_H

#include <stdint.h>

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void) {
    rnd_state ^= rnd_state >> 12;
    rnd_state ^= rnd_state << 25;
    rnd_state ^= rnd_state >> 27;
    return rnd_state * 2685821657736338717ull;
}

#endif
