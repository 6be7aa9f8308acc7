/*
 * cudalib: load the CUDA driver, runtime and cuBLAS at run time (see
 * cudalib.h). Nothing here runs until a cuda or nccl backend is opened.
 */
#include "hw/cudalib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *cudalib_open_any(const char *env, const char *const *names, char *tried, size_t len) {
    size_t n = 0;
    tried[0] = 0;
    const char *over = env ? getenv(env) : NULL;
    if (over && *over) {
        void *h = dlopen(over, RTLD_NOW | RTLD_LOCAL);
        snprintf(tried, len, "%s (from %s)", over, env);
        return h;
    }
    for (int i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        if (n < len) n += (size_t)snprintf(tried + n, len - n, "%s%s", i ? ", " : "", names[i]);
    }
    return NULL;
}

/* Resolve sym into *fp; 0, or -1 with the name in missing. */
#define SYM(lib, field, name)                                        \
    do {                                                             \
        void *p_ = dlsym((lib), (name));                             \
        if (!p_ && !*missing) snprintf(missing, sizeof missing, "%s", (name)); \
        memcpy(&L->field, &p_, sizeof p_);                           \
    } while (0)

void cudalib_unload(cudalib *L) {
    if (L->lt) dlclose(L->lt);
    if (L->blas) dlclose(L->blas);
    if (L->rt) dlclose(L->rt);
    if (L->driver) dlclose(L->driver);
    memset(L, 0, sizeof *L);
}

int cudalib_load(cudalib *L, char *err, size_t errlen) {
    memset(L, 0, sizeof *L);
    char tried[512], missing[64] = "";
    static const char *const drv[] = { "libcuda.so.1", NULL };
    if (!(L->driver = cudalib_open_any("CT_CUDA_DRIVER_LIB", drv, tried, sizeof tried))) {
        snprintf(err, errlen, "no NVIDIA driver: %s cannot be loaded (%s); install the NVIDIA driver on a machine "
                              "with a GPU", tried, dlerror());
        return -1;
    }
    SYM(L->driver, cuInit, "cuInit");
    SYM(L->driver, cuDeviceGetCount, "cuDeviceGetCount");
    SYM(L->driver, cuDeviceGetName, "cuDeviceGetName");
    SYM(L->driver, cuDriverGetVersion, "cuDriverGetVersion");
    if (*missing) {
        snprintf(err, errlen, "the NVIDIA driver library %s lacks %s", tried, missing);
        goto fail;
    }
    static const char *const rt[] = { "libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                      "/usr/local/cuda/lib64/libcudart.so", NULL };
    if (!(L->rt = cudalib_open_any("CT_CUDART_LIB", rt, tried, sizeof tried))) {
        snprintf(err, errlen, "no CUDA runtime: %s cannot be loaded (install the CUDA toolkit's libcudart)", tried);
        goto fail;
    }
    SYM(L->rt, cudaGetDeviceCount, "cudaGetDeviceCount");
    SYM(L->rt, cudaRuntimeGetVersion, "cudaRuntimeGetVersion");
    SYM(L->rt, cudaGetErrorString, "cudaGetErrorString");
    SYM(L->rt, cudaSetDevice, "cudaSetDevice");
    SYM(L->rt, cudaMalloc, "cudaMalloc");
    SYM(L->rt, cudaFree, "cudaFree");
    SYM(L->rt, cudaMallocHost, "cudaMallocHost");
    SYM(L->rt, cudaFreeHost, "cudaFreeHost");
    SYM(L->rt, cudaMemcpy, "cudaMemcpy");
    SYM(L->rt, cudaMemset, "cudaMemset");
    SYM(L->rt, cudaEventCreate, "cudaEventCreate");
    SYM(L->rt, cudaEventRecord, "cudaEventRecord");
    SYM(L->rt, cudaEventSynchronize, "cudaEventSynchronize");
    SYM(L->rt, cudaEventElapsedTime, "cudaEventElapsedTime");
    SYM(L->rt, cudaEventDestroy, "cudaEventDestroy");
    SYM(L->rt, cudaDeviceSynchronize, "cudaDeviceSynchronize");
    SYM(L->rt, cudaStreamCreate, "cudaStreamCreate");
    SYM(L->rt, cudaStreamSynchronize, "cudaStreamSynchronize");
    SYM(L->rt, cudaStreamDestroy, "cudaStreamDestroy");
    if (*missing) {
        snprintf(err, errlen, "the CUDA runtime %s lacks %s", tried, missing);
        goto fail;
    }
    void *get_attr = dlsym(L->rt, "cudaDeviceGetAttribute");   /* optional */
    memcpy(&L->cudaDeviceGetAttribute, &get_attr, sizeof get_attr);
    int rc = L->cuInit(0), n = 0;
    if (rc == 0) rc = L->cuDeviceGetCount(&n);
    if (rc != 0 || n < 1) {
        snprintf(err, errlen, "no CUDA device: the driver found %d GPU(s)%s", n,
                 rc == 100 ? " (CUDA_ERROR_NO_DEVICE)" : rc ? " (cuInit failed)" : "");
        goto fail;
    }
    rc = L->cudaGetDeviceCount(&L->devices);
    if (rc != 0 || L->devices < 1) {
        snprintf(err, errlen, "no CUDA device: cudaGetDeviceCount: %s",
                 rc ? L->cudaGetErrorString(rc) : "0 devices");
        goto fail;
    }
    char name[128] = "GPU";
    L->cuDeviceGetName(name, (int)sizeof name, 0);
    name[sizeof name - 1] = 0;
    snprintf(L->names, sizeof L->names, "%s x%d", name, L->devices);
    L->cuDriverGetVersion(&L->driver_version);
    L->cudaRuntimeGetVersion(&L->runtime_version);
    return 0;
fail:
    cudalib_unload(L);
    return -1;
}

int cudalib_load_blas(cudalib *L, char *err, size_t errlen) {
    char tried[512], missing[64] = "";
    static const char *const names[] = { "libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                         "/usr/local/cuda/lib64/libcublas.so", NULL };
    if (!(L->blas = cudalib_open_any("CT_CUBLAS_LIB", names, tried, sizeof tried))) {
        snprintf(err, errlen, "no cuBLAS: %s cannot be loaded", tried);
        return -1;
    }
    SYM(L->blas, cublasCreate, "cublasCreate_v2");
    SYM(L->blas, cublasDestroy, "cublasDestroy_v2");
    SYM(L->blas, cublasGetVersion, "cublasGetVersion_v2");
    SYM(L->blas, cublasGemmEx, "cublasGemmEx");
    SYM(L->blas, cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx");
    if (*missing) {
        snprintf(err, errlen, "cuBLAS %s lacks %s", tried, missing);
        dlclose(L->blas);
        L->blas = NULL;
        return -1;
    }
    return 0;
}

int cudalib_load_lt(cudalib *L, char *err, size_t errlen) {
    char tried[512], missing[64] = "";
    static const char *const names[] = { "libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12",
                                         "/usr/local/cuda/lib64/libcublasLt.so", NULL };
    if (!(L->lt = cudalib_open_any("CT_CUBLASLT_LIB", names, tried, sizeof tried))) {
        snprintf(err, errlen, "no cuBLASLt: %s cannot be loaded (install the CUDA toolkit's libcublasLt)", tried);
        return -1;
    }
    SYM(L->lt, cublasLtCreate, "cublasLtCreate");
    SYM(L->lt, cublasLtDestroy, "cublasLtDestroy");
    SYM(L->lt, cublasLtGetVersion, "cublasLtGetVersion");
    SYM(L->lt, cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate");
    SYM(L->lt, cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy");
    SYM(L->lt, cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
    SYM(L->lt, cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
    SYM(L->lt, cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
    SYM(L->lt, cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
    SYM(L->lt, cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
    SYM(L->lt, cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
    SYM(L->lt, cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
    SYM(L->lt, cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
    SYM(L->lt, cublasLtMatmul, "cublasLtMatmul");
    if (*missing) {
        snprintf(err, errlen, "cuBLASLt %s lacks %s", tried, missing);
        dlclose(L->lt);
        L->lt = NULL;
        return -1;
    }
    return 0;
}

/* cudaDeviceAttr (driver_types.h) */
#define DEV_ATTR_CC_MAJOR 75
#define DEV_ATTR_CC_MINOR 76

int cudalib_compute_capability(const cudalib *L, int dev) {
    int major = 0, minor = 0;
    if (!L->cudaDeviceGetAttribute || L->cudaDeviceGetAttribute(&major, DEV_ATTR_CC_MAJOR, dev) != 0 ||
        L->cudaDeviceGetAttribute(&minor, DEV_ATTR_CC_MINOR, dev) != 0 || major < 1 || minor < 0 || minor > 9)
        return -1;
    return major * 10 + minor;
}
