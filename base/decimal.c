/*
 * decimal: exact fast paths of "%lld", "%.0f", strtoll and strtod
 * (decimal.h).
 *
 * Printing: a whole number below 2^63 is printed digit by digit from its
 * 64-bit integer value; "%.0f" first rounds to the nearest whole number
 * with nearbyint, which in the default rounding mode breaks ties to even
 * as glibc's printf does (it rounds the exact binary value, and honours
 * the rounding mode: glibc manual, "Floating-Point Conversions"; C11
 * 7.21.6.1 leaves ties to the implementation), and keeps the sign of a
 * negative value that rounds to zero ("-0", as printf writes it).
 *
 * Reading: W. D. Clinger, "How to Read Floating Point Numbers Accurately",
 * PLDI 1990, the fast path: when the digits make an integer m <= 2^53 and
 * the power of ten e is within +-22, m and 10^|e| are both exact doubles
 * (5^22 < 2^53), so m * 10^e or m / 10^-e is one correctly rounded IEEE
 * operation, the value strtod returns (glibc's strtod rounds correctly).
 * It needs double arithmetic evaluated in double (FLT_EVAL_METHOD 0, as
 * on x86-64 with SSE2); otherwise the fast path is off.
 */
#include "base/decimal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The digits of u into out, most significant first; their count (<= 20). */
static int digits(char *out, uint64_t u) {
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (int k = 0; k < n; k++) out[k] = tmp[n - 1 - k];
    return n;
}

int decimal_int(char *buf, int64_t v) {
    int neg = v < 0;
    uint64_t u = neg ? 0 - (uint64_t)v : (uint64_t)v;
    if (neg) buf[0] = '-';
    int n = neg + digits(buf + neg, u);
    buf[n] = 0;
    return n;
}

int decimal_whole(char *buf, double d) {
    if (!(fabs(d) < 0x1p63)) return -1;  /* also NaN */
    double r = nearbyint(d);
    int neg = signbit(d) != 0;
    if (neg) buf[0] = '-';
    int n = neg + digits(buf + neg, (uint64_t)fabs(r));
    buf[n] = 0;
    return n;
}

/* Digits at z[*i, n) into *m (while it stays below 2^63 / 10), counted in
 * *nd (all) and *nz (significant: from the first nonzero one). */
static void read_digits(const char *z, size_t n, size_t *i, uint64_t *m, int *nd, int *nz) {
    for (; *i < n && z[*i] >= '0' && z[*i] <= '9'; (*i)++, (*nd)++) {
        if (*m == 0 && z[*i] == '0' && *nz == 0) continue;
        (*nz)++;
        if (*nz <= 18) *m = *m * 10 + (uint64_t)(z[*i] - '0');
    }
}

int decimal_read(const char *z, size_t n, int64_t *iv, double *dv) {
    static const double pow10[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    int neg = n > 0 && z[0] == '-', nd = 0, nz = 0, nf = 0, e = 0;
    size_t i = (size_t)neg;
    uint64_t m = 0;
    read_digits(z, n, &i, &m, &nd, &nz);
    if (nd == 0) return 0;
    if (i == n) {                      /* an integer literal */
        if (nz > 18) return 0;
        *iv = neg ? -(int64_t)m : (int64_t)m;
        return 'i';
    }
    if (z[i] == '.') {
        size_t f0 = ++i;
        read_digits(z, n, &i, &m, &nd, &nz);
        nf = (int)(i - f0);
        if (nf == 0) return 0;
    }
    if (i < n && (z[i] == 'e' || z[i] == 'E')) {
        int eneg = ++i < n && z[i] == '-', ed = 0;
        if (i < n && (z[i] == '-' || z[i] == '+')) i++;
        for (; i < n && z[i] >= '0' && z[i] <= '9' && ed < 4; i++, ed++) e = e * 10 + (z[i] - '0');
        if (ed == 0 || ed == 4) return 0;
        if (eneg) e = -e;
    }
    e -= nf;
    if (i != n || nz > 18 || m > (UINT64_C(1) << 53) || e < -22 || e > 22 || FLT_EVAL_METHOD != 0) return 0;
    double d = e < 0 ? (double)m / pow10[-e] : (double)m * pow10[e];
    *dv = neg ? -d : d;
    return 'd';
}
