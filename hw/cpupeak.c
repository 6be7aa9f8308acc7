/*
 * cpupeak: one core's peak floating-point rate, measured. A loop of
 * independent fused multiply-adds on the widest vectors the CPU runs
 * (AVX-512, AVX2 with FMA, else SSE2 multiply and add) has no memory
 * traffic and no dependency stalls, so it runs at the core's issue rate:
 * lanes x 2 FLOPs x FMA pipes x the clock it actually holds, turbo
 * included. Nominal figures cannot give that on a VM, where /proc/cpuinfo
 * shows the base clock (2.6 GHz on this project's machine, whose core
 * sustains well above it) and not how many FMA pipes there are or how wide
 * (Zen 4 runs AVX-512 on 256-bit pipes).
 *
 * Each kernel keeps ACC accumulators in flight (latency 4 x 2 pipes needs
 * 8; 12 leave room), is timed for about 10 ms, five times, and the fastest
 * is kept; every kernel the CPU supports is tried and the best taken.
 * About 0.2 s in all.
 */
#include "hw/cpupeak.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define ACC 12

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A kernel: `iters` rounds of ACC vector operations; returns a sum of the
 * accumulators so the work is not optimised away. */
typedef double (*kernel_fn)(long iters);

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* acc = acc * m + a keeps every accumulator finite and near 1. Twelve
 * named accumulators, not an array: an array is kept in memory and the
 * loop then runs at the store-to-load latency, half the peak or less. */
#define M_D 0.999999
#define A_D 1e-6
#define REP12(X, ...)                                                                        \
    X(0, __VA_ARGS__) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) \
    X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__) X(9, __VA_ARGS__) \
    X(10, __VA_ARGS__) X(11, __VA_ARGS__)
#define KDECL(i, VT, T, SET1) VT acc##i = SET1((T)(1.0 + (i) * 1e-3));
#define KSTEP(i, OP) acc##i = OP(acc##i, m, a);
#define KSUM(i, STORE, LANES)                                                \
    STORE(out, acc##i);                                                      \
    for (int l = 0; l < LANES; l++) s += out[l];

/* One kernel: vector type VT of LANES elements of type T, SET1, the
 * multiply-add OP(acc, m, a) and STORE. */
#define KERNEL(name, target, VT, T, LANES, SET1, OP, STORE)                  \
    target static double name(long iters) {                                  \
        VT m = SET1((T)M_D), a = SET1((T)A_D);                                \
        REP12(KDECL, VT, T, SET1)                                            \
        for (long i = 0; i < iters; i++) {                                   \
            REP12(KSTEP, OP)                                                 \
        }                                                                    \
        T out[LANES];                                                        \
        double s = 0;                                                        \
        REP12(KSUM, STORE, LANES)                                            \
        return s;                                                            \
    }

#define T512 __attribute__((target("avx512f")))
#define T256 __attribute__((target("avx2,fma")))
/* SSE2, every x86-64: a multiply and an add (2 FLOPs a lane, no FMA). */
#define MULADD_PD(x, m, a) _mm_add_pd(_mm_mul_pd(x, m), a)
#define MULADD_PS(x, m, a) _mm_add_ps(_mm_mul_ps(x, m), a)

KERNEL(k512d, T512, __m512d, double, 8, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_storeu_pd)
KERNEL(k512s, T512, __m512, float, 16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps)
KERNEL(k256d, T256, __m256d, double, 4, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd)
KERNEL(k256s, T256, __m256, float, 8, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps)
KERNEL(k128d, , __m128d, double, 2, _mm_set1_pd, MULADD_PD, _mm_storeu_pd)
KERNEL(k128s, , __m128, float, 4, _mm_set1_ps, MULADD_PS, _mm_storeu_ps)

typedef struct kernel {
    const char *isa;
    int supported;
    kernel_fn f64, f32;
    int lanes64, lanes32;            /* FLOPs a round = ACC x lanes x 2 */
} kernel;

static int kernels(kernel *k) {
    __builtin_cpu_init();
    int n = 0;
    k[n++] = (kernel){ "AVX-512", __builtin_cpu_supports("avx512f"), k512d, k512s, 8, 16 };
    k[n++] = (kernel){ "AVX2+FMA", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), k256d, k256s, 4, 8 };
    k[n++] = (kernel){ "SSE2", 1, k128d, k128s, 2, 4 };
    return n;
}
#else
/* Elsewhere: scalar multiply-add, which the compiler may vectorise. */
static double kscalar(long iters) {
    double acc[ACC];
    for (int k = 0; k < ACC; k++) acc[k] = 1.0 + k * 1e-3;
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < ACC; k++) acc[k] = acc[k] * 0.999999 + 1e-6;
    double s = 0;
    for (int k = 0; k < ACC; k++) s += acc[k];
    return s;
}

typedef struct kernel {
    const char *isa;
    int supported;
    kernel_fn f64, f32;
    int lanes64, lanes32;
} kernel;

static int kernels(kernel *k) {
    k[0] = (kernel){ "scalar", 1, kscalar, kscalar, 1, 1 };
    return 1;
}
#endif

/* FLOP/s of f: FLOPs per round = ACC x lanes x 2. */
static double rate(kernel_fn f, int lanes) {
    volatile double sink = 0;
    double per_round = (double)ACC * lanes * 2;
    long iters = 1000;
    double dt = 0;
    while (iters < (1L << 40)) {                    /* grow to ~10 ms */
        double t0 = now_s();
        sink += f(iters);
        dt = now_s() - t0;
        if (dt > 0.005) break;
        iters = dt > 1e-4 ? (long)((double)iters * 0.01 / dt) + 1 : iters * 8;
    }
    double best = dt;
    for (int r = 0; r < 4; r++) {
        double t0 = now_s();
        sink += f(iters);
        dt = now_s() - t0;
        if (dt < best) best = dt;
    }
    (void)sink;
    return best > 0 ? per_round * (double)iters / best : 0;
}

int cpupeak_measure(double *fp64, double *fp32, char *isa, size_t isalen) {
    kernel k[4];
    int n = kernels(k);
    *fp64 = *fp32 = 0;
    if (isa && isalen) isa[0] = 0;
    for (int i = 0; i < n; i++) {
        if (!k[i].supported) continue;
        double d = rate(k[i].f64, k[i].lanes64), s = rate(k[i].f32, 2 * k[i].lanes64);
        if (d > *fp64 * 1.02) {                 /* a wider ISA no faster keeps the narrower name */
            *fp64 = d;
            if (isa && isalen) snprintf(isa, isalen, "%s", k[i].isa);
        }
        if (s > *fp32) *fp32 = s;
        if (d > *fp64) *fp64 = d;
    }
    return *fp64 > 0 && *fp32 > 0 ? 0 : -1;
}
