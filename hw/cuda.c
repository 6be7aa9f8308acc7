/*
 * cuda: GEMM through cuBLAS (cublasGemmEx by precision and shape) and
 * device-to-device, host-to-device and device-to-host copies (pinned host
 * memory) on GPU 0, timed with CUDA events around each repetition. The
 * libraries are loaded at run time (hw/cudalib.h).
 *
 * fp8 GEMM goes through cuBLASLt (cublasLtMatmul) as H100 training recipes
 * run it: E4M3 inputs A and B with per-tensor scales (1.0 here), bf16
 * output, fp32 compute and scale, in the "TN" layout cuBLASLt's fp8 kernels
 * require (A transposed, B not: A is stored k x m, B k x n, C m x n, all
 * column-major), with a 32 MiB workspace and the heuristic's first
 * algorithm. It needs compute capability 8.9+ (Ada, Hopper and later) and
 * m, n, k multiples of 16; otherwise the case is not measured, with the
 * reason.
 *
 * Every GEMM runs on seeded random operands of its type (hw/gemmdata.h:
 * random signs and mantissa bits, like real weights and activations, not
 * zeros, on which tensor cores run cooler and faster), generated on the
 * host in slices and copied to GPU 0 once, before timing; after timing 16
 * entries of C are read back and checked against sums computed on the
 * host: a wrong layout or transpose is a failure, not a figure.
 *
 * A grouped GEMM (groups = G > 1: a mixture-of-experts layer's G experts,
 * each m tokens x n outputs x k inputs with its own weights) is one batched
 * call: cublasGemmStridedBatchedEx, or for fp8 cublasLtMatmul with
 * CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and STRIDED_BATCH_OFFSET on each
 * layout. The groups lie one after another in each operand (hw/gemmdata.h),
 * and the 16-entry check runs in the first, the middle and the last group.
 *
 * Load: a copy holds its size twice; a GEMM its three matrices (times its
 * groups), on GPU 0.
 */
#include "hw/backend_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/cudalib.h"
#include "hw/gemmdata.h"

/* cudaDataType and cublasComputeType_t values (library_types.h, cublas_api.h). */
#define R_32F 0
#define R_64F 1
#define R_16F 2
#define R_16BF 14
#define COMPUTE_32F 68
#define COMPUTE_32F_FAST_TF32 77
#define COMPUTE_64F 70
#define GEMM_DEFAULT (-1)

/* fp8 through cuBLASLt: cudaDataType (library_types.h), cublasOperation_t
 * (cublas_api.h), cublasLtMatmulDescAttributes_t and
 * cublasLtMatmulPreferenceAttributes_t (cublasLt.h), CUDA 13.0. */
#define R_8F_E4M3 28
#define OP_N 0
#define OP_T 1
#define LT_DESC_TRANSA 3
#define LT_DESC_TRANSB 4
#define LT_DESC_A_SCALE_POINTER 17
#define LT_DESC_B_SCALE_POINTER 18
#define LT_LAYOUT_BATCH_COUNT 5
#define LT_LAYOUT_STRIDED_BATCH_OFFSET 6
#define LT_PREF_MAX_WORKSPACE_BYTES 1
#define LT_WORKSPACE_BYTES ((uint64_t)32 << 20)

/* cublasLtMatmulHeuristicResult_t (cublasLt.h), field for field. */
typedef struct lt_heuristic {
    uint64_t algo[8];            /* cublasLtMatmulAlgo_t */
    size_t workspace_size;
    int state;                   /* cublasStatus_t */
    float waves;
    int reserved[4];
} lt_heuristic;

typedef struct cuda_impl {
    cudalib L;
    void *blas;                  /* cublasHandle_t, NULL without cuBLAS */
    char blas_err[200];
    void *ev0, *ev1;
    void *lt;                    /* cublasLtHandle_t, NULL without cuBLASLt */
    char lt_err[300];
    int cc;                      /* GPU 0's compute capability x10, -1 unknown */
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
    size_t lt_version = 0;
    x->cc = cudalib_compute_capability(L, 0);
    if (cudalib_load_lt(L, x->lt_err, sizeof x->lt_err) == 0) {
        int st = L->cublasLtCreate(&x->lt);
        if (st != 0) {
            snprintf(x->lt_err, sizeof x->lt_err, "cuBLASLt loaded but cublasLtCreate failed (status %d)", st);
            x->lt = NULL;
        } else {
            lt_version = L->cublasLtGetVersion();
        }
    }
    b->impl = x;
    b->env.ranks = 1;
    snprintf(b->env.gemm_operands, sizeof b->env.gemm_operands, "random");
    snprintf(b->env.devices, sizeof b->env.devices, "%.200s (measuring on GPU 0)", L->names);
    snprintf(b->env.libraries, sizeof b->env.libraries, "CUDA runtime %d.%d, driver %d.%d, cuBLAS %d%s",
             L->runtime_version / 1000, L->runtime_version % 1000 / 10, L->driver_version / 1000,
             L->driver_version % 1000 / 10, blas_version, x->lt ? ", cuBLASLt " : "");
    if (x->lt) {
        size_t len = strlen(b->env.libraries);
        snprintf(b->env.libraries + len, sizeof b->env.libraries - len, "%zu", lt_version);
    }
    return 0;
}

static void cuda_close(hw_backend *b) {
    cuda_impl *x = b->impl;
    if (!x) return;
    if (x->blas) x->L.cublasDestroy(x->blas);
    if (x->lt) x->L.cublasLtDestroy(x->lt);
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
    int m, n, k, atype, ctype, compute, groups;
    const void *alpha, *beta;
    void *a, *b, *c;
} gemm_op;

static int gemm_once(void *p) {
    gemm_op *g = p;
    /* Column-major C(m x n) = A(m x k) B(k x n), no transposes; groups one after another. */
    if (g->groups > 1)
        return g->x->L.cublasGemmStridedBatchedEx(g->x->blas, 0, 0, g->m, g->n, g->k, g->alpha, g->a, g->atype, g->m,
                                                  (long long)g->m * g->k, g->b, g->atype, g->k, (long long)g->k * g->n,
                                                  g->beta, g->c, g->ctype, g->m, (long long)g->m * g->n, g->groups,
                                                  g->compute, GEMM_DEFAULT) == 0 ? 0 : -1;
    return g->x->L.cublasGemmEx(g->x->blas, 0, 0, g->m, g->n, g->k, g->alpha, g->a, g->atype, g->m, g->b, g->atype,
                                g->k, g->beta, g->c, g->ctype, g->m, g->compute, GEMM_DEFAULT) == 0 ? 0 : -1;
}

typedef struct fp8_op {
    cudalib *L;
    void *lt, *desc, *la, *lb, *lc;
    const lt_heuristic *h;
    void *a, *b, *d, *ws;
    size_t ws_bytes;
} fp8_op;

static int fp8_once(void *p) {
    fp8_op *g = p;
    static const float one = 1, zero = 0;
    return g->L->cublasLtMatmul(g->lt, g->desc, &one, g->a, g->la, g->b, g->lb, &zero, g->d, g->lc, g->d, g->lc,
                                g->h->algo, g->ws, g->ws_bytes, NULL) == 0 ? 0 : -1;
}

/* Slices of host memory an operand is generated in (32 MiB). */
#define FILL_SLICE_BYTES ((size_t)32 << 20)

/* Operand `which` of g (count elements) generated on the host and copied
 * to dev, slice by slice. 0 or -1. */
static int gemm_upload(cudalib *L, void *dev, const gemmdata_shape *g, int which) {
    size_t w = gemmdata_in_bytes(g->prec), per = FILL_SLICE_BYTES / w;
    uint64_t count = gemmdata_count(g, which);
    unsigned char *h = malloc(FILL_SLICE_BYTES);
    if (!h) return -1;
    int rc = 0;
    for (uint64_t at = 0; at < count && rc == 0; at += per) {
        size_t n = count - at < per ? (size_t)(count - at) : per;
        gemmdata_fill(g->prec, which, at, n, h);
        rc = L->cudaMemcpy((char *)dev + at * w, h, n * w, CT_H2D) == 0 ? 0 : -1;
    }
    free(h);
    return rc;
}

/* Both operands of g to GPU 0; 0, or -1 with why. */
static int gemm_operands(cudalib *L, const gemmdata_shape *g, void *a, void *b, char *why, size_t whylen) {
    if (gemm_upload(L, a, g, GEMMDATA_A) == 0 && gemm_upload(L, b, g, GEMMDATA_B) == 0) return 0;
    snprintf(why, whylen, "cannot copy the %s GEMM's operands to GPU 0", precision_name(g->prec));
    return -1;
}

/* C (on GPU 0) checked at a 4 x 4 grid of entries against the host's sums
 * (hw/gemmdata.c gives the tolerance), in the first, middle and last group
 * of a grouped GEMM. 0, or -1 with why. */
static int gemm_check(cudalib *L, const gemmdata_shape *shape, const void *c, char *why, size_t whylen) {
    size_t w = gemmdata_out_bytes(shape->prec);
    int groups = shape->groups > 1 ? shape->groups : 1;
    const int pick[3] = { 0, groups / 2, groups - 1 };
    for (int t = 0; t < 3; t++) {
        if (t > 0 && pick[t] == pick[t - 1]) continue;
        gemmdata_shape g = *shape;
        g.group = pick[t];
        const char *cg = (const char *)c + w * (size_t)g.group * g.m * g.n;
        for (int s = 0; s < 16; s++) {
            int i, j;
            gemmdata_grid(&g, s, &i, &j);
            unsigned char raw[8];
            if (L->cudaMemcpy(raw, cg + w * ((size_t)i + (size_t)j * g.m), w, CT_D2H) != 0) {
                snprintf(why, whylen, "cannot read the %s GEMM's result back", precision_name(g.prec));
                return -1;
            }
            if (gemmdata_check(&g, i, j, gemmdata_decode(g.prec, raw), why, whylen) < 0) return -1;
        }
    }
    return 0;
}

/* An fp8 layout batched over a grouped GEMM's groups: 0, or a cuBLASLt status. */
static int lt_batch(cudalib *L, void *layout, int groups, int64_t stride) {
    if (groups <= 1) return 0;
    int st = L->cublasLtMatrixLayoutSetAttribute(layout, LT_LAYOUT_BATCH_COUNT, &groups, sizeof groups);
    return st ? st : L->cublasLtMatrixLayoutSetAttribute(layout, LT_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
}

static int measure_fp8(hw_backend *b, cuda_impl *x, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    cudalib *L = &x->L;
    if (x->cc < 89) {
        if (x->cc < 0)
            snprintf(why, whylen, "fp8 GEMM needs compute capability 8.9+ (Ada/Hopper); the CUDA runtime does not "
                                  "tell this GPU's");
        else
            snprintf(why, whylen, "fp8 GEMM needs compute capability 8.9+ (Ada/Hopper); this GPU is %d.%d",
                     x->cc / 10, x->cc % 10);
        return HW_UNSUPPORTED;
    }
    if (!x->lt) {
        snprintf(why, whylen, "fp8 GEMM needs cuBLASLt: %s", x->lt_err);
        return HW_UNSUPPORTED;
    }
    if (c->m % 16 || c->n % 16 || c->k % 16) {
        snprintf(why, whylen, "fp8 GEMM (cuBLASLt, TN layout) needs m, n and k multiples of 16; this case is %dx%dx%d",
                 c->m, c->n, c->k);
        return HW_UNSUPPORTED;
    }
    fp8_op g = { L, x->lt, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, LT_WORKSPACE_BYTES };
    int groups = mb_groups(c);
    gemmdata_shape gs = { PREC_FP8, c->m, c->n, c->k, 1, groups, 0 };   /* A stored k x m: "TN" */
    void *pref = NULL;
    float *scale = NULL;
    lt_heuristic h;
    memset(&h, 0, sizeof h);
    g.h = &h;
    size_t na = (size_t)c->m * c->k * groups, nb = (size_t)c->k * c->n * groups, nd = (size_t)c->m * c->n * 2 * groups;
    int rc = HW_FAILED, got = 0, st;
    static const float one = 1;
    if (L->cudaMalloc(&g.a, na) != 0 || L->cudaMalloc(&g.b, nb) != 0 || L->cudaMalloc(&g.d, nd) != 0 ||
        L->cudaMalloc(&g.ws, g.ws_bytes) != 0 || L->cudaMalloc((void **)&scale, sizeof one) != 0) {
        snprintf(why, whylen, "cannot allocate the fp8 GEMM's %zu bytes on GPU 0", na + nb + nd + g.ws_bytes);
        goto out;
    }
    if (gemm_operands(L, &gs, g.a, g.b, why, whylen) < 0) goto out;
    if (L->cudaMemcpy(scale, &one, sizeof one, CT_H2D) != 0) {
        snprintf(why, whylen, "cannot copy the fp8 GEMM's scale to GPU 0");
        goto out;
    }
    int ta = OP_T, tb = OP_N;
    const void *sp = scale;
    uint64_t wsb = g.ws_bytes;
    if ((st = L->cublasLtMatmulDescCreate(&g.desc, COMPUTE_32F, R_32F)) != 0 ||
        (st = L->cublasLtMatmulDescSetAttribute(g.desc, LT_DESC_TRANSA, &ta, sizeof ta)) != 0 ||
        (st = L->cublasLtMatmulDescSetAttribute(g.desc, LT_DESC_TRANSB, &tb, sizeof tb)) != 0 ||
        (st = L->cublasLtMatmulDescSetAttribute(g.desc, LT_DESC_A_SCALE_POINTER, &sp, sizeof sp)) != 0 ||
        (st = L->cublasLtMatmulDescSetAttribute(g.desc, LT_DESC_B_SCALE_POINTER, &sp, sizeof sp)) != 0 ||
        (st = L->cublasLtMatrixLayoutCreate(&g.la, R_8F_E4M3, (uint64_t)c->k, (uint64_t)c->m, c->k)) != 0 ||
        (st = L->cublasLtMatrixLayoutCreate(&g.lb, R_8F_E4M3, (uint64_t)c->k, (uint64_t)c->n, c->k)) != 0 ||
        (st = L->cublasLtMatrixLayoutCreate(&g.lc, R_16BF, (uint64_t)c->m, (uint64_t)c->n, c->m)) != 0 ||
        (st = lt_batch(L, g.la, groups, (int64_t)c->m * c->k)) != 0 ||
        (st = lt_batch(L, g.lb, groups, (int64_t)c->k * c->n)) != 0 ||
        (st = lt_batch(L, g.lc, groups, (int64_t)c->m * c->n)) != 0 ||
        (st = L->cublasLtMatmulPreferenceCreate(&pref)) != 0 ||
        (st = L->cublasLtMatmulPreferenceSetAttribute(pref, LT_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb)) != 0) {
        snprintf(why, whylen, "cuBLASLt refused the fp8 GEMM's descriptors (status %d)", st);
        goto out;
    }
    st = L->cublasLtMatmulAlgoGetHeuristic(x->lt, g.desc, g.la, g.lb, g.lc, g.lc, pref, 1, &h, &got);
    if (st != 0 || got < 1 || h.state != 0) {
        snprintf(why, whylen, "cuBLASLt has no fp8 algorithm for %dx%dx%d (status %d, %d found)", c->m, c->n, c->k,
                 st, got);
        goto out;
    }
    hw_timer tm = { ev_start, ev_stop, x };
    if (hw_time(b, fp8_once, &g, &tm, m) < 0) {
        char grp[32] = "";
        if (groups > 1) snprintf(grp, sizeof grp, ", %d groups", groups);
        snprintf(why, whylen, "cublasLtMatmul (fp8 %dx%dx%d%s) failed", c->m, c->n, c->k, grp);
        goto out;
    }
    if (gemm_check(L, &gs, g.d, why, whylen) < 0) goto out;
    rc = HW_OK;
out:
    if (pref) L->cublasLtMatmulPreferenceDestroy(pref);
    if (g.la) L->cublasLtMatrixLayoutDestroy(g.la);
    if (g.lb) L->cublasLtMatrixLayoutDestroy(g.lb);
    if (g.lc) L->cublasLtMatrixLayoutDestroy(g.lc);
    if (g.desc) L->cublasLtMatmulDescDestroy(g.desc);
    if (g.a) L->cudaFree(g.a);
    if (g.b) L->cudaFree(g.b);
    if (g.d) L->cudaFree(g.d);
    if (g.ws) L->cudaFree(g.ws);
    if (scale) L->cudaFree(scale);
    return rc;
}

static int measure_gemm(hw_backend *b, cuda_impl *x, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    cudalib *L = &x->L;
    if (c->precision == PREC_FP8) return measure_fp8(b, x, c, m, why, whylen);
    if (!x->blas) {
        snprintf(why, whylen, "%s", x->blas_err);
        return HW_UNSUPPORTED;
    }
    static const float f1 = 1, f0 = 0;
    static const double d1 = 1, d0 = 0;
    gemm_op g = { x, c->m, c->n, c->k, R_32F, R_32F, COMPUTE_32F, mb_groups(c), &f1, &f0, NULL, NULL, NULL };
    size_t w = 4;
    switch (c->precision) {
    case PREC_FP64: g.atype = g.ctype = R_64F, g.compute = COMPUTE_64F, g.alpha = &d1, g.beta = &d0, w = 8; break;
    case PREC_FP32: break;
    case PREC_TF32: g.compute = COMPUTE_32F_FAST_TF32; break;
    case PREC_BF16: g.atype = g.ctype = R_16BF, w = 2; break;
    case PREC_FP16: g.atype = g.ctype = R_16F, w = 2; break;
    default:
        snprintf(why, whylen, "the cuda backend runs fp64, fp32, tf32, bf16, fp16 (cuBLAS) and fp8 (cuBLASLt) GEMMs, "
                              "not %s", precision_name(c->precision));
        return HW_UNSUPPORTED;
    }
    size_t na = (size_t)c->m * c->k * w * g.groups, nb = (size_t)c->k * c->n * w * g.groups,
           nc = (size_t)c->m * c->n * w * g.groups;
    int rc = HW_OK;
    if (L->cudaMalloc(&g.a, na) != 0 || L->cudaMalloc(&g.b, nb) != 0 || L->cudaMalloc(&g.c, nc) != 0) {
        snprintf(why, whylen, "cannot allocate the GEMM's %zu bytes on GPU 0", na + nb + nc);
        rc = HW_FAILED;
        goto out;
    }
    gemmdata_shape gs = { c->precision, c->m, c->n, c->k, 0, g.groups, 0 };
    if (gemm_operands(L, &gs, g.a, g.b, why, whylen) < 0) {
        rc = HW_FAILED;
        goto out;
    }
    hw_timer tm = { ev_start, ev_stop, x };
    if (hw_time(b, gemm_once, &g, &tm, m) < 0) {
        char grp[32] = "";
        if (g.groups > 1) snprintf(grp, sizeof grp, ", %d groups", g.groups);
        snprintf(why, whylen, "%s (%s %dx%dx%d%s) failed", g.groups > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx",
                 precision_name(c->precision), c->m, c->n, c->k, grp);
        rc = HW_FAILED;
    } else if (gemm_check(L, &gs, g.c, why, whylen) < 0) {
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
