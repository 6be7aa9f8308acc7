/*
 * gemmdata: seeded random GEMM operands and the check of a result entry
 * (see the header).
 */
#include "hw/gemmdata.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The stream: splitmix64 (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014; the constants of Vigna's
 * splitmix64.c), whose output n (from 0) is mix64(seed + (n + 1) * golden
 * gamma), so any element is had without the ones before it. Element i of
 * A is output 2i, of B output 2i + 1. The seed is fixed: the same operands
 * every run. */
#define GEMMDATA_SEED 0x63742d67656d6d31ull      /* "ct-gemm1" */
#define GOLDEN_GAMMA 0x9e3779b97f4a7c15ull

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t draw(int which, uint64_t index) {
    return mix64(GEMMDATA_SEED + (2 * index + (uint64_t)which + 1) * GOLDEN_GAMMA);
}

/* A stored word's fields: the mantissa bits of the format the GEMM
 * computes in (IEEE 754 binary64, binary32 and binary16; tf32 10, bf16 7
 * and OCP FP8 E4M3 3), where they start (tf32 words are binary32 with the
 * low 13 bits clear), where the exponent starts, its bias, and the sign bit. */
typedef struct word_fmt {
    int mb, mant_at, exp_at, bias, sign_at;
} word_fmt;

static word_fmt fmt_of(precision p) {
    switch (p) {
    case PREC_FP64: return (word_fmt){ 52, 0, 52, 1023, 63 };
    case PREC_FP32: return (word_fmt){ 23, 0, 23, 127, 31 };
    case PREC_TF32: return (word_fmt){ 10, 13, 23, 127, 31 };
    case PREC_FP16: return (word_fmt){ 10, 0, 10, 15, 15 };
    case PREC_BF16: return (word_fmt){ 7, 0, 7, 127, 15 };
    case PREC_FP8: return (word_fmt){ 3, 0, 3, 7, 7 };
    default: return (word_fmt){ 0, 0, 0, 0, 0 };
    }
}

size_t gemmdata_in_bytes(precision p) {
    switch (p) {
    case PREC_FP64: return 8;
    case PREC_FP32: case PREC_TF32: return 4;
    case PREC_FP16: case PREC_BF16: return 2;
    case PREC_FP8: return 1;
    default: return 0;
    }
}

size_t gemmdata_out_bytes(precision p) {
    size_t w = gemmdata_in_bytes(p);
    return w == 1 ? 2 : w;
}

/* A draw's fields: the sign (bit 63), the exponent -1..-4 (bits 61-62) and
 * the low mb bits as the mantissa. */
#define SIGN(r) ((r) >> 63)
#define EXP(r) (-1 - (int)(((r) >> 61) & 3))
#define MANT(r, mb) ((r) & ((UINT64_C(1) << (mb)) - 1))

/* The stored word of a draw. */
static uint64_t elem_bits(const word_fmt *f, uint64_t r) {
    return SIGN(r) << f->sign_at | (uint64_t)(f->bias + EXP(r)) << f->exp_at | MANT(r, f->mb) << f->mant_at;
}

double gemmdata_value(precision p, int which, uint64_t index, uint64_t *bits) {
    uint64_t r = draw(which, index);
    word_fmt f = fmt_of(p);
    if (bits) *bits = elem_bits(&f, r);
    double v = ldexp(1.0 + ldexp((double)MANT(r, f.mb), -f.mb), EXP(r));
    return SIGN(r) ? -v : v;
}

void gemmdata_fill(precision p, int which, uint64_t first, size_t count, void *dst) {
#define FILL(type)                                                                     \
    for (size_t t = 0; t < count; t++) ((type *)dst)[t] = (type)elem_bits(&f, draw(which, first + t))
    word_fmt f = fmt_of(p);
    switch (gemmdata_in_bytes(p)) {
    case 8: FILL(uint64_t); break;
    case 4: FILL(uint32_t); break;
    case 2: FILL(uint16_t); break;
    case 1: FILL(uint8_t); break;
    default: break;
    }
#undef FILL
}

/* IEEE binary16 (normal, subnormal, infinity, NaN). */
static double fp16_value(uint16_t h) {
    int e = (h >> 10) & 31, f = h & 1023;
    double v = e == 31 ? (f ? NAN : INFINITY) : e ? ldexp(1024 + f, e - 25) : ldexp(f, -24);
    return h & 0x8000 ? -v : v;
}

double gemmdata_decode(precision p, const void *elem) {
    uint16_t h;
    uint32_t u;
    float x;
    double d;
    switch (p) {
    case PREC_FP64: memcpy(&d, elem, sizeof d); return d;
    case PREC_FP32: case PREC_TF32: memcpy(&x, elem, sizeof x); return x;
    case PREC_FP16: memcpy(&h, elem, sizeof h); return fp16_value(h);
    default:                           /* bf16: the top half of a binary32 */
        memcpy(&h, elem, sizeof h);
        u = (uint32_t)h << 16;
        memcpy(&x, &u, sizeof x);
        return x;
    }
}

/* gamma_n = n u / (1 - n u): a dot product of length n, each product and
 * each addition off by at most u relative, is within gamma_n of the sum of
 * the products' magnitudes, in any order of summation (Higham, "Accuracy
 * and Stability of Numerical Algorithms", 2nd ed., 2002, section 3.1). */
static double gamma_n(double n, double u) {
    return n * u < 0.5 ? n * u / (1 - n * u) : 1;
}

/* The bound, for C(i,j) = the sum `want` of k products whose magnitudes
 * sum to `mag` (products of fp32 or fp64 values may round: gamma_k covers
 * that, and an FMA does not round them):
 *
 *   acc  = gamma_k(u_acc) mag, u_acc = 2^-23 for an fp32 accumulator (24
 *          significant bits; tensor cores truncate rather than round,
 *          Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA
 *          tensor cores", PeerJ Comput. Sci. 7:e330, 2021, so 2^-23, not
 *          the 2^-24 of round-to-nearest), 2^-52 for fp64;
 *   fp8  adds gamma_128(2^-13) mag: Hopper's fp8 tensor cores keep about 14
 *          bits of a running sum (DeepSeek-V3 technical report, arXiv
 *          2412.19437, section 3.3.2); cuBLASLt without fast accumulation
 *          (CUBLASLT_MATMUL_DESC_FAST_ACCUM, left off here) moves partial
 *          sums to fp32 at an interval it does not document, taken as the
 *          128 products DeepSeek-V3's kernels use;
 *   out  = 2 u_out (|want| + acc): rounding to the output type, u_out =
 *          2^-8 (bf16), 2^-11 (fp16), 0 when the output is the accumulator
 *          format; doubled in case it truncates;
 *   host = gamma_(k+1)(2^-53) mag: this file's own double sum.
 *
 * A misread operand moves C(i,j) by about sqrt(2k) times a product's rms
 * magnitude: with these operands (E x^2 / (E|x|)^2 = 1.57) a standard
 * deviation of 1.7% of mag at k = 16384, 2.6% at k = 7168, against a
 * tolerance of 0.2% (fp32 accumulation) or 1.8% (fp8): a case passes a
 * misread only if all 16 entries checked land inside, for fp8 at k = 16384
 * a chance of about 0.71^16 = 0.4%, far less elsewhere. */
double gemmdata_tolerance(precision p, int k, double want, double mag) {
    double acc = gamma_n(k, p == PREC_FP64 ? 0x1p-52 : 0x1p-23) * mag;
    if (p == PREC_FP8) {
        double chunk = gamma_n(128, 0x1p-13);
        acc = acc + chunk * mag + chunk * acc;
    }
    double u_out = p == PREC_BF16 || p == PREC_FP8 ? 0x1p-8 : p == PREC_FP16 ? 0x1p-11 : 0;
    return 2 * u_out * (fabs(want) + acc) + acc + gamma_n((double)k + 1, 0x1p-53) * mag;
}

uint64_t gemmdata_count(const gemmdata_shape *g, int which) {
    uint64_t one = which == GEMMDATA_A ? (uint64_t)g->m * g->k : (uint64_t)g->k * g->n;
    return one * (uint64_t)(g->groups > 1 ? g->groups : 1);
}

void gemmdata_expect(const gemmdata_shape *g, int i, int j, double *want, double *mag) {
    double s = 0, a = 0;
    uint64_t a0 = (uint64_t)g->group * g->m * g->k, b0 = (uint64_t)g->group * g->k * g->n;
    for (int p = 0; p < g->k; p++) {
        uint64_t ia = g->a_transposed ? (uint64_t)p + (uint64_t)i * g->k : (uint64_t)i + (uint64_t)p * g->m;
        double x = gemmdata_value(g->prec, GEMMDATA_A, a0 + ia, NULL) *
                   gemmdata_value(g->prec, GEMMDATA_B, b0 + (uint64_t)p + (uint64_t)j * g->k, NULL);
        s += x;
        a += fabs(x);
    }
    *want = s;
    *mag = a;
}

void gemmdata_grid(const gemmdata_shape *g, int s, int *i, int *j) {
    *i = (int)((long)(g->m - 1) * (s / 4) / 3);
    *j = (int)((long)(g->n - 1) * (s % 4) / 3);
}

int gemmdata_check(const gemmdata_shape *g, int i, int j, double got, char *why, size_t whylen) {
    double want, mag;
    gemmdata_expect(g, i, j, &want, &mag);
    double tol = gemmdata_tolerance(g->prec, g->k, want, mag);
    if (fabs(got - want) <= tol) return 0;      /* false for NaN */
    char grp[48] = "";
    if (g->groups > 1) snprintf(grp, sizeof grp, " (group %d of %d)", g->group, g->groups);
    snprintf(why, whylen, "%s GEMM %dx%dx%d%s gave C(%d,%d) = %.9g, expected %.9g +- %.2g (layout or transpose wrong?)",
             precision_name(g->prec), g->m, g->n, g->k, grp, i, j, got, want, tol);
    return -1;
}
