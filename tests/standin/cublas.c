/*
 * Stand-in for cuBLAS, built only for tests as
 * build/tests/libstandin-cublas.so: cublasGemmEx computed on the host
 * (column-major, no transposes; the stand-in cudart's "device" memory is
 * host memory) for fp64 (in double), fp32 (in float, whatever the compute
 * type: tf32 operands hw/cuda.c makes are exact in tf32), and bf16 and fp16
 * (converted to float, accumulated in float, the result rounded to the
 * type to nearest even, as cuBLAS's CUBLAS_COMPUTE_32F does). A and B of
 * different types, or C of another, are CUBLAS_STATUS_NOT_SUPPORTED (15).
 *
 * cublasGemmStridedBatchedEx is cublasGemmEx once per batch, each operand
 * advanced by its stride (in elements); CT_STANDIN_BLAS_SAME_B=1 makes every
 * batch read the first batch's B (a stride bug: every expert computing with
 * expert 0's weights), which the first group's check cannot see.
 *
 * CT_STANDIN_BLAS_MISREAD=1 reads B as if it were stored row-major (B(p,j)
 * at j + p*n, a transposed-operand bug) so a test can check that hw/cuda.c's
 * result check catches it; CT_STANDIN_BLAS_REFUSE=T refuses data type T
 * (cudaDataType: 0 fp32, 1 fp64, 2 fp16, 14 bf16) with status 15.
 */
#include <stdint.h>
#include <stdlib.h>

#include "halfconv.h"

#define R_32F 0
#define R_64F 1
#define R_16F 2
#define R_16BF 14
#define NOT_SUPPORTED 15

int cublasCreate_v2(void **h) { *h = malloc(1); return *h ? 0 : 3; }
int cublasDestroy_v2(void *h) { free(h); return 0; }
int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 130000; return 0; }

/* Element (r, c) of a column-major matrix of type t as a double. */
static double load(int t, const void *x, size_t at) {
    switch (t) {
    case R_64F: return ((const double *)x)[at];
    case R_32F: return ((const float *)x)[at];
    case R_16F: return fp16_to_float(((const uint16_t *)x)[at]);
    default: return bf16_to_float(((const uint16_t *)x)[at]);
    }
}

static void store(int t, void *x, size_t at, double v) {
    switch (t) {
    case R_64F: ((double *)x)[at] = v; break;
    case R_32F: ((float *)x)[at] = (float)v; break;
    case R_16F: ((uint16_t *)x)[at] = to_fp16((float)v); break;
    default: ((uint16_t *)x)[at] = to_bf16((float)v); break;
    }
}

static int env_is(const char *name, int v) {
    const char *z = getenv(name);
    return z && *z && atoi(z) == v;
}

int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int atype, int lda,
                 const void *B, int btype, int ldb, const void *beta, void *C, int ctype, int ldc, int compute,
                 int algo) {
    (void)h; (void)compute; (void)algo;
    if (ta || tb || atype != btype || atype != ctype) return NOT_SUPPORTED;
    if (atype != R_32F && atype != R_64F && atype != R_16F && atype != R_16BF) return NOT_SUPPORTED;
    if (env_is("CT_STANDIN_BLAS_REFUSE", atype)) return NOT_SUPPORTED;
    int misread = env_is("CT_STANDIN_BLAS_MISREAD", 1), wide = atype == R_64F;
    double al = wide ? *(const double *)alpha : *(const float *)alpha;
    double be = wide ? *(const double *)beta : *(const float *)beta;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double sd = 0;
            float sf = 0;
            for (int p = 0; p < k; p++) {
                size_t bat = misread ? (size_t)j + (size_t)p * n : (size_t)p + (size_t)j * ldb;
                double x = load(atype, A, (size_t)i + (size_t)p * lda), y = load(atype, B, bat);
                if (wide) sd += x * y;
                else sf += (float)x * (float)y;
            }
            size_t at = (size_t)i + (size_t)j * ldc;
            double s = wide ? sd : (double)sf;
            store(ctype, C, at, be != 0 ? al * s + be * load(ctype, C, at) : al * s);
        }
    return 0;
}

static size_t elem_bytes(int t) { return t == R_64F ? 8 : t == R_32F ? 4 : 2; }

int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
                               int atype, int lda, long long sa, const void *B, int btype, int ldb, long long sb,
                               const void *beta, void *C, int ctype, int ldc, long long sc, int batch, int compute,
                               int algo) {
    if (batch < 1) return 7;     /* CUBLAS_STATUS_INVALID_VALUE */
    int same_b = env_is("CT_STANDIN_BLAS_SAME_B", 1);
    for (int g = 0; g < batch; g++) {
        int st = cublasGemmEx(h, ta, tb, m, n, k, alpha, (const char *)A + (size_t)(g * sa) * elem_bytes(atype), atype,
                              lda, (const char *)B + (size_t)(same_b ? 0 : g * sb) * elem_bytes(btype), btype, ldb, beta,
                              (char *)C + (size_t)(g * sc) * elem_bytes(ctype), ctype, ldc, compute, algo);
        if (st) return st;
    }
    return 0;
}
