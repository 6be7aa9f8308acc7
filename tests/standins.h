/*
 * standins.h: what the tests of the GPU backends share (test_gpubackends,
 * test_cudafp8): the stand-in libraries of tests/standin/ selected by their
 * CT_*_LIB variables, with every stand-in knob cleared, and backend options
 * that keep a measurement to a few milliseconds.
 */
#ifndef CT_TESTS_STANDINS_H
#define CT_TESTS_STANDINS_H

#include <stdlib.h>

#include "hw/backend.h"

/* The stand-ins, on 2 GPUs of compute capability 9.0 (an H100), no knobs. */
static inline void standins(void) {
    setenv("CT_CUDA_DRIVER_LIB", "build/tests/libstandin-cuda.so", 1);
    setenv("CT_CUDART_LIB", "build/tests/libstandin-cudart.so", 1);
    setenv("CT_CUBLAS_LIB", "build/tests/libstandin-cublas.so", 1);
    setenv("CT_CUBLASLT_LIB", "build/tests/libstandin-cublaslt.so", 1);
    setenv("CT_NCCL_LIB", "build/tests/libstandin-nccl.so", 1);
    setenv("CT_STANDIN_GPUS", "2", 1);
    unsetenv("CT_STANDIN_FAIL_MALLOC");
    unsetenv("CT_STANDIN_CC");
    unsetenv("CT_STANDIN_LT_MISREAD");
    unsetenv("CT_STANDIN_BLAS_MISREAD");
    unsetenv("CT_STANDIN_BLAS_REFUSE");
}

/* Three repetitions of at least 0.1 ms within 20 ms, one warm-up. */
static inline hw_opts quick(void) {
    hw_opts o;
    hw_opts_default(&o);
    o.reps = 3;
    o.warmup = 1;
    o.min_rep_s = 1e-4;
    o.budget_s = 0.02;
    return o;
}

#endif
