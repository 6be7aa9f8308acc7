/*
 * cuda: GEMM through cuBLAS (cublasGemmEx by precision and shape) and
 * device-to-device, host-to-device and device-to-host copies (pinned host
 * memory) on GPU 0, timed with CUDA events around each repetition. The
 * libraries are loaded at run time (hw/cudalib.h).
 *
 * Load: a copy holds its size twice; a GEMM its three matrices, on GPU 0.
 */
#include "hw/backend_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/cudalib.h"

/* cudaDataType and cublasComputeType_t values (library_types.h, cublas_api.h). */
#define R_32F 0
#define R_64F 1
#define R_16F 2
#define R_16BF 14
#define COMPUTE_32F 68
#define COMPUTE_32F_FAST_TF32 77
#define COMPUTE_64F 70
#define GEMM_DEFAULT (-1)

typedef struct cuda_impl {
    cudalib L;
    void *blas;                  /* cublasHandle_t, NULL without cuBLAS */
    char blas_err[200];
    void *ev0, *ev1;
} cuda_impl;

static int cuda_open(hw_backend *b, char *err, size_t errlen) {
    cuda_impl *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (cudalib_load(&x->L, err, errlen) < 0) {
        free(x);
        return -1;
    }
    cudalib *L = &x->L;
    if (L->cudaSetDevice(0) != 0 || L->cudaEventCreate(&x->ev0) != 0 || L->cudaEventCreate(&x->ev1) != 0) {
        snprintf(err, errlen, "cannot use CUDA device 0");
        cudalib_unload(L);
        free(x);
        return -1;
    }
    int blas_version = 0;
    if (cudalib_load_blas(L, x->blas_err, sizeof x->blas_err) == 0) {
        if (L->cublasCreate(&x->blas) != 0) {
            snprintf(x->blas_err, sizeof x->blas_err, "cublasCreate failed");
            x->blas = NULL;
        } else {
            L->cublasGetVersion(x->blas, &blas_version);
        }
    }
    b->impl = x;
    b->env.ranks = 1;
    snprintf(b->env.devices, sizeof b->env.devices, "%.200s (measuring on GPU 0)", L->names);
    snprintf(b->env.libraries, sizeof b->env.libraries, "CUDA runtime %d.%d, driver %d.%d, cuBLAS %d",
             L->runtime_version / 1000, L->runtime_version % 1000 / 10, L->driver_version / 1000,
             L->driver_version % 1000 / 10, blas_version);
    return 0;
}

static void cuda_close(hw_backend *b) {
    cuda_impl *x = b->impl;
    if (!x) return;
    if (x->blas) x->L.cublasDestroy(x->blas);
    if (x->ev0) x->L.cudaEventDestroy(x->ev0);
    if (x->ev1) x->L.cudaEventDestroy(x->ev1);
    cudalib_unload(&x->L);
    free(x);
    b->impl = NULL;
}

/* CUDA events around a repetition. */
static void ev_start(void *p) {
    cuda_impl *x = p;
    x->L.cudaEventRecord(x->ev0, NULL);
}

static double ev_stop(void *p) {
    cuda_impl *x = p;
    float ms = 0;
    x->L.cudaEventRecord(x->ev1, NULL);
    x->L.cudaEventSynchronize(x->ev1);
    x->L.cudaEventElapsedTime(&ms, x->ev0, x->ev1);
    return ms / 1e3;
}

typedef struct copy_op {
    cudalib *L;
    void *dst, *src;
    size_t n;
    int kind;
} copy_op;

static int copy_once(void *p) {
    copy_op *c = p;
    return c->L->cudaMemcpy(c->dst, c->src, c->n, c->kind) == 0 ? 0 : -1;
}

static int measure_copy(hw_backend *b, cuda_impl *x, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    cudalib *L = &x->L;
    if (c->copy == COPY_HOST) {
        snprintf(why, whylen, "a host copy is measured by --backend cpu");
        return HW_UNSUPPORTED;
    }
    size_t n = c->size_bytes >= 1 ? (size_t)c->size_bytes : 1;
    void *dev_a = NULL, *dev_b = NULL, *host = NULL;
    int rc = HW_OK;
    if (L->cudaMalloc(&dev_a, n) != 0 || (c->copy == COPY_D2D ? L->cudaMalloc(&dev_b, n) : L->cudaMallocHost(&host, n)) != 0) {
        snprintf(why, whylen, "cannot allocate 2 x %zu bytes on GPU 0 / pinned host memory", n);
        rc = HW_FAILED;
        goto out;
    }
    L->cudaMemset(dev_a, 1, n);
    copy_op op = { L, NULL, NULL, n, 0 };
    switch (c->copy) {
    case COPY_D2D: op.dst = dev_b, op.src = dev_a, op.kind = CT_D2D; L->cudaMemset(dev_b, 0, n); break;
    case COPY_H2D: op.dst = dev_a, op.src = host, op.kind = CT_H2D; memset(host, 2, n); break;
    default: op.dst = host, op.src = dev_a, op.kind = CT_D2H; break;
    }
    hw_timer tm = { ev_start, ev_stop, x };
    if (hw_time(b, copy_once, &op, &tm, m) < 0) {
        snprintf(why, whylen, "cudaMemcpy (%s) failed", copy_kind_name(c->copy));
        rc = HW_FAILED;
    }
out:
    if (dev_a) L->cudaFree(dev_a);
    if (dev_b) L->cudaFree(dev_b);
    if (host) L->cudaFreeHost(host);
    return rc;
}

typedef struct gemm_op {
    cuda_impl *x;
    int m, n, k, atype, ctype, compute;
    const void *alpha, *beta;
    void *a, *b, *c;
} gemm_op;

static int gemm_once(void *p) {
    gemm_op *g = p;
    /* Column-major C(m x n) = A(m x k) B(k x n), no transposes. */
    return g->x->L.cublasGemmEx(g->x->blas, 0, 0, g->m, g->n, g->k, g->alpha, g->a, g->atype, g->m, g->b, g->atype,
                                g->k, g->beta, g->c, g->ctype, g->m, g->compute, GEMM_DEFAULT) == 0 ? 0 : -1;
}

static int measure_gemm(hw_backend *b, cuda_impl *x, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    cudalib *L = &x->L;
    if (!x->blas) {
        snprintf(why, whylen, "%s", x->blas_err);
        return HW_UNSUPPORTED;
    }
    static const float f1 = 1, f0 = 0;
    static const double d1 = 1, d0 = 0;
    gemm_op g = { x, c->m, c->n, c->k, R_32F, R_32F, COMPUTE_32F, &f1, &f0, NULL, NULL, NULL };
    size_t w = 4;
    switch (c->precision) {
    case PREC_FP64: g.atype = g.ctype = R_64F, g.compute = COMPUTE_64F, g.alpha = &d1, g.beta = &d0, w = 8; break;
    case PREC_FP32: break;
    case PREC_TF32: g.compute = COMPUTE_32F_FAST_TF32; break;
    case PREC_BF16: g.atype = g.ctype = R_16BF, w = 2; break;
    case PREC_FP16: g.atype = g.ctype = R_16F, w = 2; break;
    default:
        snprintf(why, whylen, "a %s GEMM needs cuBLASLt; the cuda backend runs fp64, fp32, tf32, bf16 and fp16",
                 precision_name(c->precision));
        return HW_UNSUPPORTED;
    }
    size_t na = (size_t)c->m * c->k * w, nb = (size_t)c->k * c->n * w, nc = (size_t)c->m * c->n * w;
    int rc = HW_OK;
    if (L->cudaMalloc(&g.a, na) != 0 || L->cudaMalloc(&g.b, nb) != 0 || L->cudaMalloc(&g.c, nc) != 0) {
        snprintf(why, whylen, "cannot allocate the GEMM's %zu bytes on GPU 0", na + nb + nc);
        rc = HW_FAILED;
        goto out;
    }
    L->cudaMemset(g.a, 0, na);
    L->cudaMemset(g.b, 0, nb);
    hw_timer tm = { ev_start, ev_stop, x };
    if (hw_time(b, gemm_once, &g, &tm, m) < 0) {
        snprintf(why, whylen, "cublasGemmEx (%s %dx%dx%d) failed", precision_name(c->precision), c->m, c->n, c->k);
        rc = HW_FAILED;
    }
out:
    if (g.a) L->cudaFree(g.a);
    if (g.b) L->cudaFree(g.b);
    if (g.c) L->cudaFree(g.c);
    return rc;
}

static int cuda_measure(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    cuda_impl *x = b->impl;
    switch (c->kind) {
    case MBC_COPY: return measure_copy(b, x, c, m, why, whylen);
    case MBC_GEMM: return measure_gemm(b, x, c, m, why, whylen);
    case MBC_STORAGE: snprintf(why, whylen, "storage is measured by --backend cpu"); return HW_UNSUPPORTED;
    case MBC_COLLECTIVE: snprintf(why, whylen, "collectives are measured by --backend nccl (or mpi)"); return HW_UNSUPPORTED;
    }
    return HW_UNSUPPORTED;
}

const hw_ops hw_cuda_ops = { "cuda", cuda_open, cuda_measure, cuda_close };
