/*
 * halfconv.h: bf16 and IEEE binary16 to and from float for the stand-in
 * cuBLAS and cuBLASLt (tests/standin/cublas.c, cublaslt.c), without libm
 * (the stand-ins link nothing). Rounding is to nearest, ties to even.
 */
#ifndef CT_STANDIN_HALFCONV_H
#define CT_STANDIN_HALFCONV_H

#include <stdint.h>
#include <string.h>

/* Powers of two without libm. */
static inline float pow2(int e) {
    float r = 1;
    for (; e > 0; e--) r *= 2;
    for (; e < 0; e++) r /= 2;
    return r;
}

static inline float bf16_to_float(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline float fp16_to_float(uint16_t h) {
    int e = (h >> 10) & 31, f = h & 1023;
    float v = e ? (1 + (float)f / 1024) * pow2(e - 15) : (float)f / 1024 * pow2(-14);
    return h & 0x8000 ? -v : v;
}

static inline uint16_t to_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* Round to nearest even, from the float's bits. */
static inline uint16_t to_fp16(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint16_t s = (uint16_t)((u >> 16) & 0x8000);
    uint32_t e = (u >> 23) & 255, f = u & 0x7fffff, h, rem, half;
    if (e == 255) return s | 0x7c00 | (f ? 0x200 : 0);
    int ex = (int)e - 127 + 15;
    if (ex >= 31) return s | 0x7c00;
    if (ex <= 0) {                               /* subnormal: units of 2^-24 */
        if (ex < -10) return s;
        uint32_t f24 = f | 0x800000, shift = 126 - e;
        h = f24 >> shift, rem = f24 & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        h = ((uint32_t)ex << 10) | (f >> 13), rem = f & 0x1fff, half = 0x1000;
    }
    if (rem > half || (rem == half && (h & 1))) h++;   /* a carry moves up the exponent (to inf at most) */
    return s | (uint16_t)h;
}

#endif
