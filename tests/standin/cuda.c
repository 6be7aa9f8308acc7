/*
 * Stand-in for the NVIDIA driver (libcuda.so.1), built only for tests as
 * build/tests/libstandin-cuda.so: the four entry points hw/cudalib.c uses.
 * CT_STANDIN_GPUS sets the GPU count (default 2; 0 = CUDA_ERROR_NO_DEVICE).
 * No GPU is involved: the tests check the backends' logic, not speed.
 */
#include <stdio.h>
#include <stdlib.h>

static int gpus(void) {
    const char *z = getenv("CT_STANDIN_GPUS");
    return z ? atoi(z) : 2;
}

int cuInit(unsigned flags) {
    (void)flags;
    return gpus() > 0 ? 0 : 100;
}

int cuDeviceGetCount(int *n) {
    *n = gpus();
    return 0;
}

int cuDeviceGetName(char *name, int len, int dev) {
    snprintf(name, (size_t)len, "Stand-in GPU %d (not a GPU)", dev);
    return 0;
}

int cuDriverGetVersion(int *v) {
    *v = 13000;
    return 0;
}
