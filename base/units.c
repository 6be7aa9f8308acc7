/*
 * units: parse and format attribute values with units (see units.h).
 *
 * A value is read in two steps. A hand-written scanner checks the number's
 * syntax (sign, digits, one optional '.', optional exponent: no hex, no
 * "inf", no "nan") and the unit after it. The digits are then rewritten as
 * an integer with a decimal exponent, with the unit's power of ten folded in,
 * and only that string goes to strtod:
 *
 *     " 3.35 TB/s "  ->  digits "335", exponent -2, unit TB/s = 1e12 B/s
 *                    ->  strtod("335e10") = 3.35e12, exactly as if written
 *
 * The string strtod sees never holds a decimal point, so the result does not
 * depend on LC_NUMERIC, and a decimal unit costs no extra rounding ("1.5TB"
 * is the double nearest 1.5e12). Units that are not powers of ten (KiB,
 * bits, minutes, hours...) multiply afterwards: one more rounding.
 *
 * The scanner also decides exactly whether a count is whole ("15.6T" is,
 * "1.5" is not) from the digits, before any rounding.
 */
#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More significant digits than any double needs to round correctly in
 * practice (17); more than this is an error, not a silent truncation. */
#define MAX_DIGITS 40
/* |exponent| beyond this is out of range whatever the digits. */
#define EXP_CLAMP 100000L
/* Counts are whole numbers a double holds exactly: below 2^53. */
#define COUNT_MAX 9007199254740992.0

/* A unit suffix: value = number * 10^p10 * factor / divisor. */
typedef struct unit {
    int p10;
    double factor, divisor;
} unit;

/* The number part, normalised: value = digits * 10^exp, digits without
 * leading or trailing zeros ("" for zero). */
typedef struct number {
    int neg;
    char digits[MAX_DIGITS + 1];
    int ndigits;
    long exp;
} number;

static const char *kind_names[] = {
    "number", "size", "bandwidth", "duration", "rate", "count"
};

const char *units_expected(unit_kind kind) {
    switch (kind) {
    case UNIT_NUMBER: return "a number like 0.75";
    case UNIT_SIZE: return "a size like 80GB";
    case UNIT_BANDWIDTH: return "a bandwidth like 400Gb/s";
    case UNIT_DURATION: return "a duration like 90min";
    case UNIT_RATE: return "a rate like 10/s";
    case UNIT_COUNT: return "a count like 4k";
    }
    return "a value";
}

static void fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    if (!err || errlen == 0) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    for (char *p = err; *p; p++)             /* one line: the text may hold control characters */
        if ((unsigned char)*p < ' ' || *p == 0x7f) *p = '?';
}

static int is_blank(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int is_digit(char ch) {
    return ch >= '0' && ch <= '9';
}

/* ---- Units ---------------------------------------------------------------
 * Each matcher takes the whole suffix (blanks already trimmed) and says
 * whether it is a unit of its kind. The empty suffix is every kind's plain
 * unit, handled by the caller. */

/* Size: [prefix][i](B|b). Prefixes k/K M G T P E; "i" makes them binary;
 * B is a byte, b a bit. */
static int match_size_n(const char *z, size_t n, unit *u) {
    static const char prefixes[] = "kKMGTPE";
    static const int powers[] = { 1, 1, 2, 3, 4, 5, 6 };
    int k = 0;
    size_t i = 0;
    unit r = { 0, 1.0, 1.0 };
    if (n == 0) return 0;
    const char *p = memchr(prefixes, z[0], sizeof prefixes - 1);
    if (p && n >= 2) {
        k = powers[p - prefixes];
        i = 1;
        if (i < n && z[i] == 'i') {
            r.factor = ldexp(1.0, 10 * k);
            i++;
        } else {
            r.p10 = 3 * k;
        }
    }
    if (i + 1 != n) return 0;
    if (z[i] == 'B') { /* bytes */ }
    else if (z[i] == 'b') r.factor /= 8;
    else return 0;
    if (u) *u = r;
    return 1;
}

/* Duration: y w d h min s ms us µs ns. */
static int match_duration_n(const char *z, size_t n, unit *u) {
    static const struct { const char *z; int p10; double factor; } t[] = {
        { "y", 0, 365 * 86400.0 }, { "w", 0, 7 * 86400.0 }, { "d", 0, 86400 },
        { "h", 0, 3600 }, { "min", 0, 60 }, { "s", 0, 1 }, { "ms", -3, 1 },
        { "us", -6, 1 }, { "\xc2\xb5s", -6, 1 }, { "ns", -9, 1 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strlen(t[i].z) == n && memcmp(t[i].z, z, n) == 0) {
            if (u) { u->p10 = t[i].p10; u->factor = t[i].factor; u->divisor = 1; }
            return 1;
        }
    }
    return 0;
}

/* Bandwidth: a size unit, then "/s". */
static int match_bandwidth_n(const char *z, size_t n, unit *u) {
    return n > 2 && memcmp(z + n - 2, "/s", 2) == 0 && match_size_n(z, n - 2, u);
}

/* Rate: "/" and a duration unit: 6/h is 6 per 3600 s. */
static int match_rate_n(const char *z, size_t n, unit *u) {
    unit d;
    if (n < 2 || z[0] != '/' || !match_duration_n(z + 1, n - 1, &d)) return 0;
    if (u) { u->p10 = -d.p10; u->factor = 1; u->divisor = d.factor; }
    return 1;
}

/* Count: k/K thousand, M million, G or B billion, T trillion. */
static int match_count_n(const char *z, size_t n, unit *u) {
    static const char suffixes[] = "kKMGBT";
    static const int powers[] = { 3, 3, 6, 9, 9, 12 };
    const char *p;
    if (n != 1 || !(p = memchr(suffixes, z[0], sizeof suffixes - 1))) return 0;
    if (u) { u->p10 = powers[p - suffixes]; u->factor = 1; u->divisor = 1; }
    return 1;
}

static int match(unit_kind kind, const char *z, size_t n, unit *u) {
    switch (kind) {
    case UNIT_NUMBER: return 0;
    case UNIT_SIZE: return match_size_n(z, n, u);
    case UNIT_BANDWIDTH: return match_bandwidth_n(z, n, u);
    case UNIT_DURATION: return match_duration_n(z, n, u);
    case UNIT_RATE: return match_rate_n(z, n, u);
    case UNIT_COUNT: return match_count_n(z, n, u);
    }
    return 0;
}

/* ---- Numbers ------------------------------------------------------------- */

/* Scan [+-]digits[.digits][(e|E)[+-]digits] at z. Returns the end, or NULL
 * when there is no number. An 'e' not followed by digits is left for the
 * unit ("1EB" is an exabyte). Sets *toolong when the digits do not fit. */
static const char *scan_number(const char *z, number *x, int *toolong) {
    int seen = 0, point = 0;
    long shift = 0;            /* digits read after the point */
    long zeros = 0;            /* zeros read after a nonzero digit, not yet stored */
    memset(x, 0, sizeof *x);
    *toolong = 0;
    if (*z == '+' || *z == '-') x->neg = *z++ == '-';
    for (;; z++) {
        if (*z == '.' && !point) { point = 1; continue; }
        if (!is_digit(*z)) break;
        seen = 1;
        if (point) shift++;
        if (*z == '0') {
            if (x->ndigits > 0) zeros++;   /* leading zeros are dropped */
            continue;
        }
        if (x->ndigits + zeros + 1 > MAX_DIGITS) { *toolong = 1; continue; }
        for (; zeros > 0; zeros--) x->digits[x->ndigits++] = '0';
        x->digits[x->ndigits++] = *z;
    }
    if (!seen) return NULL;
    if ((*z == 'e' || *z == 'E') &&
        (is_digit(z[1]) || ((z[1] == '+' || z[1] == '-') && is_digit(z[2])))) {
        int eneg = 0;
        long e = 0;
        z++;
        if (*z == '+' || *z == '-') eneg = *z++ == '-';
        for (; is_digit(*z); z++)
            if (e < EXP_CLAMP) e = e * 10 + (*z - '0');
        x->exp = eneg ? -e : e;
    }
    x->exp += zeros - shift;        /* trailing zeros go to the exponent */
    x->digits[x->ndigits] = 0;
    if (x->exp > EXP_CLAMP) x->exp = EXP_CLAMP;
    if (x->exp < -EXP_CLAMP) x->exp = -EXP_CLAMP;
    return z;
}

int units_parse(const char *text, unit_kind kind, double *out, char *err, size_t errlen) {
    const char *what = kind <= UNIT_COUNT ? kind_names[kind] : "value";
    const char *z = text, *end, *u0;
    size_t n;
    number x;
    unit u = { 0, 1.0, 1.0 };
    int toolong;
    char buf[MAX_DIGITS + 32];
    double v;

    if (!text) { fail(err, errlen, "empty value; expected %s", units_expected(kind)); return -1; }
    while (is_blank(*z)) z++;
    if (*z == 0) { fail(err, errlen, "empty value; expected %s", units_expected(kind)); return -1; }
    if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X')) {
        fail(err, errlen, "hexadecimal numbers are not accepted; expected %s", units_expected(kind));
        return -1;
    }
    end = scan_number(z, &x, &toolong);
    if (!end) {
        fail(err, errlen, "'%s' is not a number; expected %s", z, units_expected(kind));
        return -1;
    }
    if (toolong) {
        fail(err, errlen, "too many digits (at most %d); expected %s", MAX_DIGITS, units_expected(kind));
        return -1;
    }

    /* The unit: everything after the number, blanks trimmed on both sides. */
    u0 = end;
    while (is_blank(*u0)) u0++;
    n = strlen(u0);
    while (n > 0 && is_blank(u0[n - 1])) n--;
    if (n > 0 && !match(kind, u0, n, &u)) {
        for (int k = UNIT_SIZE; k <= UNIT_COUNT; k++) {
            if (k != (int)kind && match((unit_kind)k, u0, n, NULL)) {
                fail(err, errlen, "'%.*s' is a %s unit; expected %s", (int)n, u0,
                     kind_names[k], units_expected(kind));
                return -1;
            }
        }
        fail(err, errlen, "unknown unit '%.*s'; expected %s", (int)n, u0, units_expected(kind));
        return -1;
    }
    if (x.neg && kind != UNIT_NUMBER) {
        fail(err, errlen, "negative %s", what);
        return -1;
    }
    if (kind == UNIT_COUNT && x.ndigits > 0 && x.exp + u.p10 < 0) {
        fail(err, errlen, "not a whole number; expected %s", units_expected(kind));
        return -1;
    }

    if (x.ndigits == 0) {
        v = 0;
    } else {
        snprintf(buf, sizeof buf, "%s%se%ld", x.neg ? "-" : "", x.digits, x.exp + u.p10);
        errno = 0;
        v = strtod(buf, NULL);
        if (errno == ERANGE) {
            fail(err, errlen, "%s out of range", what);
            return -1;
        }
        v = v * u.factor / u.divisor;
    }
    if (!isfinite(v) || (v == 0 && x.ndigits > 0)) {
        fail(err, errlen, "%s out of range", what);
        return -1;
    }
    if (kind == UNIT_COUNT && v >= COUNT_MAX) {
        fail(err, errlen, "count too large (at most 2^53 - 1)");
        return -1;
    }
    if (x.neg && v == 0) v = -0.0;
    *out = v;
    return 0;
}

/* ---- Formatting ----------------------------------------------------------
 * Four significant digits and the largest unit that keeps the mantissa at or
 * above 1, so parsing the text gives the value back within 0.05%. */

typedef struct scale {
    const char *z;
    double mult;
} scale;

static const scale size_scales[] = {
    { "B", 1 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 }, { "PB", 1e15 }, { NULL, 0 }
};
static const scale bw_scales[] = {
    { "B/s", 1 }, { "KB/s", 1e3 }, { "MB/s", 1e6 }, { "GB/s", 1e9 }, { "TB/s", 1e12 },
    { "PB/s", 1e15 }, { NULL, 0 }
};
static const scale duration_scales[] = {
    { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 }, { "min", 60 },
    { "h", 3600 }, { "d", 86400 }, { "y", 365 * 86400.0 }, { NULL, 0 }
};
static const scale rate_scales[] = {
    { "/d", 1 / 86400.0 }, { "/h", 1 / 3600.0 }, { "/min", 1 / 60.0 }, { "/s", 1 }, { NULL, 0 }
};
static const scale count_scales[] = {
    { "", 1 }, { "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 }, { NULL, 0 }
};

char *units_format(double v, unit_kind kind, char *buf, size_t len) {
    const scale *s = NULL, *pick;
    double a = fabs(v);
    if (!buf || len == 0) return buf;
    switch (kind) {
    case UNIT_SIZE: s = size_scales; break;
    case UNIT_BANDWIDTH: s = bw_scales; break;
    case UNIT_DURATION: s = duration_scales; break;
    case UNIT_RATE: s = rate_scales; break;
    case UNIT_COUNT: s = count_scales; break;
    case UNIT_NUMBER: break;
    }
    if (!s) {
        snprintf(buf, len, "%.4g", v);
        return buf;
    }
    /* Largest unit not above |v|; the smallest for zero and tiny values.
     * A mantissa that rounds to 1000 at four digits moves up a unit. */
    pick = s;
    for (const scale *p = s; p->z; p++)
        if (isfinite(a) && a >= p->mult * (1 - 5e-5)) pick = p;
    snprintf(buf, len, "%.4g%s%s", v / pick->mult,
             (*pick->z && *pick->z != '/') ? " " : "", pick->z);
    return buf;
}
