/*
 * Stand-in for cuBLAS, built only for tests as
 * build/tests/libstandin-cublas.so: cublasGemmEx computed on the host
 * (column-major, no transposes) for fp32 and fp64 data; other types return
 * CUBLAS_STATUS_NOT_SUPPORTED (15).
 */
#include <stdlib.h>

int cublasCreate_v2(void **h) { *h = malloc(1); return *h ? 0 : 3; }
int cublasDestroy_v2(void *h) { free(h); return 0; }
int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 130000; return 0; }

int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int atype, int lda,
                 const void *B, int btype, int ldb, const void *beta, void *C, int ctype, int ldc, int compute,
                 int algo) {
    (void)h; (void)compute; (void)algo;
    if (ta || tb || atype != btype || atype != ctype) return 15;
    if (atype == 0) {             /* CUDA_R_32F */
        const float *a = A, *b = B;
        float *c = C, al = *(const float *)alpha, be = *(const float *)beta;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float s = 0;
                for (int p = 0; p < k; p++) s += a[i + (size_t)p * lda] * b[p + (size_t)j * ldb];
                c[i + (size_t)j * ldc] = al * s + be * c[i + (size_t)j * ldc];
            }
        return 0;
    }
    if (atype == 1) {             /* CUDA_R_64F */
        const double *a = A, *b = B;
        double *c = C, al = *(const double *)alpha, be = *(const double *)beta;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double s = 0;
                for (int p = 0; p < k; p++) s += a[i + (size_t)p * lda] * b[p + (size_t)j * ldb];
                c[i + (size_t)j * ldc] = al * s + be * c[i + (size_t)j * ldc];
            }
        return 0;
    }
    return 15;
}
