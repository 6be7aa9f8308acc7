/*
 * decimal: the exact fast paths of the two conversions the results store
 * makes most often, each giving the very text or value of the C library's
 * general routine, and saying when it cannot so that the caller falls back
 * to that routine:
 *
 *   decimal_int(buf, v)      "%lld" of v
 *   decimal_whole(buf, d)    "%.0f" of d, for |d| < 2^63 (rounded to the
 *                            nearest whole number, ties to even, as glibc's
 *                            printf rounds in the default rounding mode)
 *   decimal_read(z, n, ...)  a JSON number as strtoll (an integer literal
 *                            of at most 18 digits) or strtod (at most 2^53
 *                            as digits and a power of ten up to 22) reads it
 *
 * The 10K-GPU year's store formats ~310,000 event details (their "%d",
 * "%s" and "%.0f") and reads ~840,000 numbers of its jobs' JSON on the
 * writer thread, which sets the run's wall time ("The results store, sixth
 * round", docs/performance.md); snprintf and strtod were a sixth of that
 * thread's samples.
 */
#ifndef CT_DECIMAL_H
#define CT_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* Room for any text these functions write, with its NUL. */
#define DECIMAL_MAX 24

/* "%lld" of v into buf (DECIMAL_MAX bytes); its length. */
int decimal_int(char *buf, int64_t v);

/* "%.0f" of d into buf (DECIMAL_MAX bytes); its length, or -1 (buf
 * untouched) when d is not finite or |d| >= 2^63. */
int decimal_whole(char *buf, double d);

/* The number z[0, n), when it is -?D+(.D+)?([eE][+-]?D+)? (D a digit): an
 * integer literal of at most 18 digits into *i (returns 'i'); a decimal
 * whose digits, dot left out, make at most 2^53 and whose power of ten,
 * counted from that whole number, is within +-22 into *d, correctly
 * rounded (Clinger 1990: both are exact doubles and one IEEE multiply or
 * divide rounds once; returns 'd'). Returns 0 for anything else, which
 * the caller reads with strtoll or strtod. */
int decimal_read(const char *z, size_t n, int64_t *i, double *d);

#endif
