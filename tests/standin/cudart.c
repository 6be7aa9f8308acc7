/*
 * Stand-in for the CUDA runtime (libcudart), built only for tests as
 * build/tests/libstandin-cudart.so: the entry points hw/cudalib.c uses,
 * over host memory. "Device" buffers are malloc'd, copies are memcpy,
 * events read CLOCK_MONOTONIC, streams are synchronous. CT_STANDIN_GPUS as
 * in cuda.c; CT_STANDIN_FAIL_MALLOC=1 makes cudaMalloc fail (error 2).
 * CT_STANDIN_CC sets the devices' compute capability (default "9.0", an
 * H100), read through cudaDeviceGetAttribute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int gpus(void) {
    const char *z = getenv("CT_STANDIN_GPUS");
    return z ? atoi(z) : 2;
}

static int current;

int cudaGetDeviceCount(int *n) {
    *n = gpus();
    return *n > 0 ? 0 : 100;
}
int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }
const char *cudaGetErrorString(int e) { return e == 2 ? "out of memory (stand-in)" : e == 100 ? "no CUDA-capable device" : "error (stand-in)"; }
int cudaSetDevice(int d) {
    if (d < 0 || d >= gpus()) return 101;
    current = d;
    return 0;
}
int cudaMalloc(void **p, size_t n) {
    const char *z = getenv("CT_STANDIN_FAIL_MALLOC");
    if (z && *z == '1') return 2;
    *p = malloc(n ? n : 1);
    return *p ? 0 : 2;
}
int cudaFree(void *p) { free(p); return 0; }
int cudaMallocHost(void **p, size_t n) { *p = malloc(n ? n : 1); return *p ? 0 : 2; }
int cudaFreeHost(void *p) { free(p); return 0; }
int cudaMemcpy(void *d, const void *s, size_t n, int kind) {
    if (kind < 1 || kind > 3) return 21;
    memcpy(d, s, n);
    return 0;
}
int cudaMemset(void *p, int v, size_t n) { memset(p, v, n); return 0; }

typedef struct ev { double t; } ev;
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
int cudaEventCreate(void **e) { *e = calloc(1, sizeof(ev)); return *e ? 0 : 2; }
int cudaEventRecord(void *e, void *stream) { (void)stream; ((ev *)e)->t = now(); return 0; }
int cudaEventSynchronize(void *e) { (void)e; return 0; }
int cudaEventElapsedTime(float *ms, void *a, void *b) {
    *ms = (float)((((ev *)b)->t - ((ev *)a)->t) * 1e3);
    return 0;
}
int cudaEventDestroy(void *e) { free(e); return 0; }
int cudaDeviceSynchronize(void) { return 0; }
int cudaStreamCreate(void **s) { *s = malloc(1); return *s ? 0 : 2; }
int cudaStreamSynchronize(void *s) { (void)s; return 0; }
int cudaStreamDestroy(void *s) { free(s); return 0; }

/* cudaDevAttrComputeCapabilityMajor / Minor (driver_types.h) */
int cudaDeviceGetAttribute(int *v, int attr, int dev) {
    const char *z = getenv("CT_STANDIN_CC");
    int major = 9, minor = 0;
    if (z && sscanf(z, "%d.%d", &major, &minor) != 2) return 1;
    if (dev < 0 || dev >= gpus()) return 101;
    if (attr == 75) *v = major;
    else if (attr == 76) *v = minor;
    else return 1;                /* cudaErrorInvalidValue: not in the stand-in */
    return 0;
}
