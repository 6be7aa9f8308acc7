/*
 * cudalib: the CUDA driver, runtime and cuBLAS entry points the cuda and
 * nccl backends use, loaded with dlopen() at run time (not for use outside
 * hw/). CUDA's handle types are opaque pointers and its enums ints here, so
 * no CUDA header is needed to build.
 *
 * Libraries, each overridable by an environment variable (the tests point
 * them at their stand-ins, build/tests/libstandin-*.so):
 *   CT_CUDA_DRIVER_LIB  libcuda.so.1            the driver (no driver: not found)
 *   CT_CUDART_LIB       libcudart.so[.13|.12]   the runtime
 *   CT_CUBLAS_LIB       libcublas.so[.13|.12]   cuBLAS (GEMM only)
 *   CT_CUBLASLT_LIB     libcublasLt.so[.13|.12] cuBLASLt (fp8 GEMM only)
 */
#ifndef CT_CUDALIB_H
#define CT_CUDALIB_H

#include <stddef.h>
#include <stdint.h>

/* cudaMemcpyKind */
#define CT_H2D 1
#define CT_D2H 2
#define CT_D2D 3

typedef struct cudalib {
    void *driver, *rt, *blas;
    /* driver */
    int (*cuInit)(unsigned);
    int (*cuDeviceGetCount)(int *);
    int (*cuDeviceGetName)(char *, int, int);
    int (*cuDriverGetVersion)(int *);
    /* runtime */
    int (*cudaGetDeviceCount)(int *);
    int (*cudaRuntimeGetVersion)(int *);
    const char *(*cudaGetErrorString)(int);
    int (*cudaSetDevice)(int);
    int (*cudaMalloc)(void **, size_t);
    int (*cudaFree)(void *);
    int (*cudaMallocHost)(void **, size_t);
    int (*cudaFreeHost)(void *);
    int (*cudaMemcpy)(void *, const void *, size_t, int);
    int (*cudaMemset)(void *, int, size_t);
    int (*cudaEventCreate)(void **);
    int (*cudaEventRecord)(void *, void *);
    int (*cudaEventSynchronize)(void *);
    int (*cudaEventElapsedTime)(float *, void *, void *);
    int (*cudaEventDestroy)(void *);
    int (*cudaDeviceSynchronize)(void);
    int (*cudaStreamCreate)(void **);
    int (*cudaStreamSynchronize)(void *);
    int (*cudaStreamDestroy)(void *);
    /* cuBLAS (NULL until cudalib_load_blas) */
    int (*cublasCreate)(void **);
    int (*cublasDestroy)(void *);
    int (*cublasGetVersion)(void *, int *);
    int (*cublasGemmEx)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *, int,
                        int, const void *, void *, int, int, int, int);
    int (*cublasGemmStridedBatchedEx)(void *, int, int, int, int, int, const void *, const void *, int, int,
                                      long long, const void *, int, int, long long, const void *, void *, int, int,
                                      long long, int, int, int);
    /* cuBLASLt (NULL until cudalib_load_lt); handles and descriptors are
     * opaque pointers, the heuristic result a caller-sized buffer. */
    void *lt;
    int (*cublasLtCreate)(void **);
    int (*cublasLtDestroy)(void *);
    size_t (*cublasLtGetVersion)(void);
    int (*cublasLtMatmulDescCreate)(void **, int, int);
    int (*cublasLtMatmulDescDestroy)(void *);
    int (*cublasLtMatmulDescSetAttribute)(void *, int, const void *, size_t);
    int (*cublasLtMatrixLayoutCreate)(void **, int, uint64_t, uint64_t, int64_t);
    int (*cublasLtMatrixLayoutDestroy)(void *);
    int (*cublasLtMatrixLayoutSetAttribute)(void *, int, const void *, size_t);
    int (*cublasLtMatmulPreferenceCreate)(void **);
    int (*cublasLtMatmulPreferenceDestroy)(void *);
    int (*cublasLtMatmulPreferenceSetAttribute)(void *, int, const void *, size_t);
    int (*cublasLtMatmulAlgoGetHeuristic)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *);
    int (*cublasLtMatmul)(void *, void *, const void *, const void *, void *, const void *, void *, const void *,
                          const void *, void *, void *, void *, const void *, void *, size_t, void *);
    /* runtime, optional (NULL when the runtime lacks it) */
    int (*cudaDeviceGetAttribute)(int *, int, int);
    int devices;
    char names[256];             /* "NVIDIA H100 80GB HBM3 x8" */
    int driver_version, runtime_version;
} cudalib;

/* Load the driver and the runtime and count the devices. Returns 0, or -1
 * with err naming what is missing: no driver (libcuda.so.1), no runtime
 * (libcudart), no device. On error nothing stays loaded. */
int cudalib_load(cudalib *L, char *err, size_t errlen);

/* Load cuBLAS too. Returns 0, or -1 with err. */
int cudalib_load_blas(cudalib *L, char *err, size_t errlen);

/* Load cuBLASLt too. Returns 0, or -1 with err naming the library tried. */
int cudalib_load_lt(cudalib *L, char *err, size_t errlen);

/* Compute capability of device dev as major*10 + minor (90 = 9.0), or -1
 * when the runtime cannot tell. */
int cudalib_compute_capability(const cudalib *L, int dev);

void cudalib_unload(cudalib *L);

/* dlopen the first of the names that loads (env var first when set);
 * *tried receives the names tried. NULL when none loads. */
void *cudalib_open_any(const char *env, const char *const *names, char *tried, size_t len);

#endif
