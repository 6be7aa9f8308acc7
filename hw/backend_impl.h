/*
 * backend_impl: what the backends (hw/cpu.c, mpi.c, cuda.c, nccl.c) share;
 * not for use outside hw/.
 */
#ifndef CT_BACKEND_IMPL_H
#define CT_BACKEND_IMPL_H

#include "hw/backend.h"

typedef struct hw_ops {
    const char *name;
    int (*open)(hw_backend *b, char *err, size_t errlen);            /* 0 or -1 */
    int (*measure)(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen);
    void (*close)(hw_backend *b);
} hw_ops;

struct hw_backend {
    const hw_ops *ops;
    hw_opts opts;
    hw_env env;
    int rank;
    int sync;                        /* time across MPI ranks (barrier, slowest rank) */
    void *impl;
};

extern const hw_ops hw_cpu_ops, hw_mpi_ops, hw_cuda_ops, hw_nccl_ops;

/* A timer for hw_time(): start() then stop() returns the seconds between;
 * NULL = the wall clock (with a barrier and the slowest rank when b->sync). */
typedef struct hw_timer {
    void (*start)(void *ctx);
    double (*stop)(void *ctx);
    void *ctx;
} hw_timer;

/* Time fn(ctx) (one operation, 0 or -1) as backend.h describes: warm-up,
 * iterations per repetition, repetitions within the budget, statistics.
 * Returns 0 or -1 (fn failed). */
int hw_time(hw_backend *b, int (*fn)(void *ctx), void *ctx, const hw_timer *timer, mb_measurement *m);

/* The host name, the CPU model with its cores ("AMD EPYC, 2 cores"). */
void hw_host_info(hw_env *e);

#endif
