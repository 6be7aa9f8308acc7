/*
 * units: the value syntax of scenario and catalog attributes (CONTRACT.md).
 *
 *   size       80GB 1.5TB 512MiB 130e9B, plain number = bytes
 *              (KB MB GB TB PB decimal, KiB MiB GiB TiB PiB binary; B = byte, b = bit)
 *   bandwidth  400Gb/s 3.35TB/s 25GB/s 100MiB/s, plain number = bytes/s
 *   duration   1.2y 2w 54d 3h 90min 90s 250ms 10us 5ns, plain number = s (y = 365 d)
 *   rate       10/s 600/min 6/h 2/d, plain number = per second
 *   count      15.6T 2M 4k 1e6 (k M G T = 1e3 1e6 1e9 1e12, also K B), plain number
 *   number     a plain real number
 *
 * Pure functions, no allocation. A parse succeeds only when the whole string
 * (surrounding blanks allowed) is one number with a unit of the right kind.
 * On failure the result is left unchanged and, when err is not NULL, a short
 * reason is written there ("expected a size like 80GB", "negative size").
 */
#ifndef CT_UNITS_H
#define CT_UNITS_H

#include <stddef.h>

typedef enum unit_kind {
    UNIT_NUMBER,     /* plain real */
    UNIT_SIZE,       /* bytes */
    UNIT_BANDWIDTH,  /* bytes per second */
    UNIT_DURATION,   /* seconds */
    UNIT_RATE,       /* events per second */
    UNIT_COUNT       /* plain count with k/M/G/T suffixes */
} unit_kind;

/* Parse text as a value of kind; returns 0 on success with *out set (in
 * bytes, bytes/s, seconds, 1/s or a count), -1 on error. Negative values are
 * errors for every kind except UNIT_NUMBER; NaN and infinities always are. */
int units_parse(const char *text, unit_kind kind, double *out, char *err, size_t errlen);

/* What a value of this kind looks like, for messages: "a size like 80GB". */
const char *units_expected(unit_kind kind);

/* Format a value for people: "80 GB", "3.35 TB/s", "54 d", "1.2 k". buf
 * always ends NUL-terminated. Returns buf. */
char *units_format(double v, unit_kind kind, char *buf, size_t len);

#endif
