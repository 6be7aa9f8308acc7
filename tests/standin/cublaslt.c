/*
 * Stand-in for cuBLASLt, built only for tests as
 * build/tests/libstandin-cublaslt.so: the entry points hw/cuda.c's fp8 GEMM
 * uses, computing cublasLtMatmul on the host (the stand-in cudart's
 * "device" memory is host memory). No GPU is involved.
 *
 * Like the real library's fp8 kernels it takes E4M3 A and B (decoded
 * exactly: sign, 4 exponent bits biased by 7, 3 mantissa bits, 0x7f/0xff
 * NaN) with fp32 compute and scale type and a bf16 or fp16 C = D, requires
 * the "TN" layout (A transposed, B not) and rows, columns and leading
 * dimensions that are multiples of 16: anything else has no algorithm
 * (CUBLAS_STATUS_NOT_SUPPORTED, 15). Shapes that do not agree with each
 * other are CUBLAS_STATUS_INVALID_VALUE (7). D = alpha * scaleA * scaleB *
 * op(A) B + beta * C, column-major, accumulated in float, rounded to the
 * output type to nearest even.
 *
 * A layout may be batched (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 5, and
 * STRIDED_BATCH_OFFSET, 6, in elements, as cuBLASLt takes them): every
 * layout of a product must have the same batch count, and the product runs
 * once per batch at each operand's offset.
 *
 * CT_STANDIN_LT_MISREAD=1 makes cublasLtMatmul read a transposed A as if
 * it were stored m x k untransposed (a wrong-layout bug), so a test can
 * check that hw/cuda.c's result check catches a misread operand.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "halfconv.h"

#define OK 0
#define ALLOC_FAILED 3
#define INVALID_VALUE 7
#define NOT_SUPPORTED 15

#define R_32F 0
#define R_16F 2
#define R_16BF 14
#define R_8F_E4M3 28
#define COMPUTE_32F 68
#define ALGO_MAGIC 0x5354414e44494eull   /* "STANDIN" */

typedef struct desc {
    int compute, scale_type, transa, transb;
    const float *ascale, *bscale;
} desc;

typedef struct layout {
    int type;
    uint64_t rows, cols;
    int64_t ld;
    int batch;                   /* 1 unless batched */
    int64_t stride;              /* elements between batches */
} layout;

typedef struct pref { uint64_t workspace; } pref;

/* cublasLtMatmulHeuristicResult_t (cublasLt.h) */
typedef struct heuristic {
    uint64_t algo[8];
    size_t workspace_size;
    int state;
    float waves;
    int reserved[4];
} heuristic;

int cublasLtCreate(void **h) { *h = malloc(1); return *h ? OK : ALLOC_FAILED; }
int cublasLtDestroy(void *h) { free(h); return OK; }
size_t cublasLtGetVersion(void) { return 130000; }

int cublasLtMatmulDescCreate(void **d, int compute, int scale_type) {
    desc *x = calloc(1, sizeof *x);
    if (!x) return ALLOC_FAILED;
    x->compute = compute, x->scale_type = scale_type;
    *d = x;
    return OK;
}
int cublasLtMatmulDescDestroy(void *d) { free(d); return OK; }

int cublasLtMatmulDescSetAttribute(void *d, int attr, const void *buf, size_t size) {
    desc *x = d;
    if (!x || !buf) return INVALID_VALUE;
    switch (attr) {
    case 3:                      /* CUBLASLT_MATMUL_DESC_TRANSA */
    case 4:                      /* CUBLASLT_MATMUL_DESC_TRANSB */
        if (size != sizeof(int)) return INVALID_VALUE;
        memcpy(attr == 3 ? &x->transa : &x->transb, buf, sizeof(int));
        return OK;
    case 17:                     /* CUBLASLT_MATMUL_DESC_A_SCALE_POINTER */
    case 18:                     /* CUBLASLT_MATMUL_DESC_B_SCALE_POINTER */
        if (size != sizeof(void *)) return INVALID_VALUE;
        memcpy(attr == 17 ? &x->ascale : &x->bscale, buf, sizeof(void *));
        return OK;
    }
    return INVALID_VALUE;        /* an attribute the stand-in does not know */
}

int cublasLtMatrixLayoutCreate(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
    if (ld < 1 || (uint64_t)ld < rows) return INVALID_VALUE;
    layout *x = malloc(sizeof *x);
    if (!x) return ALLOC_FAILED;
    *x = (layout){ type, rows, cols, ld, 1, 0 };
    *l = x;
    return OK;
}
int cublasLtMatrixLayoutDestroy(void *l) { free(l); return OK; }

int cublasLtMatrixLayoutSetAttribute(void *l, int attr, const void *buf, size_t size) {
    layout *x = l;
    if (!x || !buf) return INVALID_VALUE;
    if (attr == 5 && size == sizeof(int)) {               /* CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT */
        memcpy(&x->batch, buf, sizeof(int));
        return x->batch >= 1 ? OK : INVALID_VALUE;
    }
    if (attr == 6 && size == sizeof(int64_t)) {           /* CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET */
        memcpy(&x->stride, buf, sizeof(int64_t));
        return OK;
    }
    return INVALID_VALUE;        /* an attribute the stand-in does not know */
}

int cublasLtMatmulPreferenceCreate(void **p) { *p = calloc(1, sizeof(pref)); return *p ? OK : ALLOC_FAILED; }
int cublasLtMatmulPreferenceDestroy(void *p) { free(p); return OK; }
int cublasLtMatmulPreferenceSetAttribute(void *p, int attr, const void *buf, size_t size) {
    if (!p || !buf || attr != 1 || size != sizeof(uint64_t)) return INVALID_VALUE;   /* MAX_WORKSPACE_BYTES */
    memcpy(&((pref *)p)->workspace, buf, sizeof(uint64_t));
    return OK;
}

/* What the fp8 kernels accept; m, n, k from the layouts. */
static int check(const desc *d, const layout *a, const layout *b, const layout *c, const layout *dd, uint64_t *m,
                 uint64_t *n, uint64_t *k) {
    if (!d || !a || !b || !c || !dd) return INVALID_VALUE;
    *m = d->transa ? a->cols : a->rows;
    *k = d->transa ? a->rows : a->cols;
    uint64_t kb = d->transb ? b->cols : b->rows;
    *n = d->transb ? b->rows : b->cols;
    if (kb != *k || c->rows != *m || c->cols != *n || dd->rows != *m || dd->cols != *n) return INVALID_VALUE;
    if (b->batch != a->batch || c->batch != a->batch || dd->batch != a->batch) return INVALID_VALUE;
    if (d->compute != COMPUTE_32F || d->scale_type != R_32F) return NOT_SUPPORTED;
    if (a->type != R_8F_E4M3 || b->type != R_8F_E4M3) return NOT_SUPPORTED;
    if ((c->type != R_16BF && c->type != R_16F) || dd->type != c->type || c->ld != dd->ld) return NOT_SUPPORTED;
    if (d->transa != 1 || d->transb != 0) return NOT_SUPPORTED;      /* "TN" only */
    const layout *all[] = { a, b, c };
    for (int i = 0; i < 3; i++)
        if (all[i]->rows % 16 || all[i]->cols % 16 || all[i]->ld % 16) return NOT_SUPPORTED;
    return OK;
}

int cublasLtMatmulAlgoGetHeuristic(void *h, void *d, void *a, void *b, void *c, void *dd, void *p, int want,
                                   void *results, int *got) {
    uint64_t m, n, k;
    if (!h || !p || want < 1 || !results || !got) return INVALID_VALUE;
    *got = 0;
    int st = check(d, a, b, c, dd, &m, &n, &k);
    if (st != OK) return st;
    heuristic *r = results;
    memset(r, 0, sizeof *r);
    r->algo[0] = ALGO_MAGIC;
    r->waves = 1;
    *got = 1;
    return OK;
}

static float e4m3_to_float(unsigned char v) {
    int e = (v >> 3) & 15, f = v & 7;
    float s = (v & 0x80) ? -1.0f : 1.0f;
    if (e == 15 && f == 7) return NAN;
    if (e == 0) return s * (float)f / 8.0f * pow2(-6);
    return s * (1.0f + (float)f / 8.0f) * pow2(e - 7);
}

int cublasLtMatmul(void *h, void *dp, const void *alpha, const void *A, void *ad, const void *B, void *bd,
                   const void *beta, const void *C, void *cd, void *D, void *ddp, const void *algo, void *ws,
                   size_t ws_bytes, void *stream) {
    (void)ws; (void)ws_bytes; (void)stream;
    uint64_t m, n, k;
    if (!h || !alpha || !beta || !A || !B || !D || !algo) return INVALID_VALUE;
    int st = check(dp, ad, bd, cd, ddp, &m, &n, &k);
    if (st != OK) return st;
    uint64_t magic;
    memcpy(&magic, algo, sizeof magic);
    if (magic != ALGO_MAGIC) return INVALID_VALUE;   /* not from the heuristic */
    const desc *d = dp;
    const layout *la = ad, *lb = bd, *lc = cd;
    const unsigned char *a = A, *b = B;
    float al = *(const float *)alpha, be = *(const float *)beta;
    float sc = (d->ascale ? *d->ascale : 1.0f) * (d->bscale ? *d->bscale : 1.0f);
    const char *bug = getenv("CT_STANDIN_LT_MISREAD");
    int misread = bug && *bug == '1';
    float lut[256];
    for (int v = 0; v < 256; v++) lut[v] = e4m3_to_float((unsigned char)v);
    /* Column jj of the batches' D, side by side: batch jj / n, column jj % n. */
    for (uint64_t jj = 0; jj < n * (uint64_t)la->batch; jj++) {
        uint64_t g = jj / n, j = jj % n;
        const unsigned char *ag = a + g * (uint64_t)la->stride, *bg = b + g * (uint64_t)lb->stride;
        for (uint64_t i = 0; i < m; i++) {
            float s = 0;
            for (uint64_t p = 0; p < k; p++) {
                /* op(A)(i,p) is A(p,i) when transposed; B(p,j) (TN: B not transposed) */
                float x = lut[ag[misread ? i + p * m : d->transa ? p + i * (uint64_t)la->ld : i + p * (uint64_t)la->ld]];
                float y = lut[bg[d->transb ? j + p * (uint64_t)lb->ld : p + j * (uint64_t)lb->ld]];
                s += x * y;
            }
            size_t at = (size_t)(i + j * (uint64_t)lc->ld + g * (uint64_t)lc->stride);
            float v = al * sc * s;
            if (be != 0) {
                uint16_t c16 = ((const uint16_t *)C)[at];
                v += be * (lc->type == R_16BF ? bf16_to_float(c16) : fp16_to_float(c16));
            }
            ((uint16_t *)D)[at] = lc->type == R_16BF ? to_bf16(v) : to_fp16(v);
        }
    }
    return OK;
}
