/*
 * backend: real microbenchmarks behind one interface. A backend measures
 * the same cases (models/microbench.h mb_case) the cost models predict.
 *
 *   cpu    host memcpy ("host" copies), GEMM through CBLAS (fp32, fp64),
 *          storage write + fsync and read back in a directory
 *   mpi    the collectives between MPI ranks (run under mpirun; nccl-tests
 *          sizes and bus bandwidth), through hw/comm.h
 *   cuda   cuBLAS GEMM and d2d/h2d/d2h copies timed with CUDA events
 *   nccl   the collectives on this node's GPUs (one process), or on every
 *          GPU of every process under mpirun (MPI bootstraps NCCL)
 *
 * cuda and nccl load libcudart, libcublas and libnccl with dlopen() when
 * opened, so the program runs without them; hw_open() then fails with a
 * message naming what is missing (no driver, no device, no libnccl). The
 * environment variables CT_CUDA_DRIVER_LIB, CT_CUDART_LIB, CT_CUBLAS_LIB,
 * CT_CUBLASLT_LIB and CT_NCCL_LIB name other libraries to load (the tests'
 * stand-ins). cuBLASLt (fp8 GEMM on cuda) is optional: without it only fp8
 * GEMM is not measured, with a note.
 *
 * Every measurement: `warmup` untimed operations, then `reps` timed
 * repetitions of `iters` operations each (iters chosen so a repetition lasts
 * at least min_rep_s); the per-operation median, quartiles and extremes.
 * Under MPI every rank times the same loop after a barrier and a
 * repetition counts as long as its slowest rank (as nccl-tests does).
 */
#ifndef CT_BACKEND_H
#define CT_BACKEND_H

#include <stddef.h>

#include "models/microbench.h"

/* Where the numbers were taken. */
typedef mb_hardware hw_env;

/* What a case's measured time is. The fastest repetition (STREAM's "best
 * rate") is the default: other programs' load only ever adds time, so on a
 * shared machine the minimum is the figure that repeats from one session to
 * the next (on this project's 2-core VM, session-to-session differences of
 * 2-10% against 6-20% for the median). The median is the typical time
 * under whatever else the machine runs. Both are recorded either way. */
typedef enum hw_statistic { HW_STAT_MIN, HW_STAT_MEDIAN } hw_statistic;

/* "min" / "median"; hw_statistic_parse returns -1 for anything else. */
const char *hw_statistic_name(hw_statistic s);
int hw_statistic_parse(const char *z);

typedef struct hw_opts {
    int warmup;                  /* untimed operations first (default 2) */
    int reps;                    /* timed repetitions (default 9, at least 3) */
    double min_rep_s;            /* a repetition lasts at least this long (default 5 ms) */
    double budget_s;             /* soft cap on one case's timed loop (default 2 s): fewer
                                    repetitions, never fewer than 3 */
    const char *storage_dir;     /* storage cases: directory, overriding the case's path */
    hw_statistic statistic;      /* what measured_s is (default HW_STAT_MIN) */
} hw_opts;

/* Defaults above. */
void hw_opts_default(hw_opts *o);

typedef struct hw_backend hw_backend;

#define HW_OK 0
#define HW_UNSUPPORTED 1             /* this backend cannot measure this case (why says so) */
#define HW_FAILED (-1)               /* it should have, and failed (why says so) */

/* The largest size one copy, collective or storage case may move: 1 PB, the
 * scenario loader's cap on a microbenchmark size (scenarios/scenario.c). */
#define HW_MAX_CASE_BYTES 1e15

/* The backend names: "cpu", "mpi", "cuda", "nccl", NULL. */
const char *const *hw_backend_names(void);

/* Open backend `name`. Returns 0 and *out, or -1 with err saying what is
 * missing (an unknown name, MPI not built in or not launched, no driver, no
 * device, no libnccl); *out is then NULL. o may be NULL (defaults). */
int hw_open(const char *name, const hw_opts *o, hw_backend **out, char *err, size_t errlen);

/* Measure one case. Returns HW_OK with m filled, HW_UNSUPPORTED or
 * HW_FAILED with why set (m unchanged); a size beyond HW_MAX_CASE_BYTES or
 * not a number is HW_FAILED before the backend sees it. Under MPI every rank must call it
 * with the same cases in the same order. */
int hw_measure(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen);

const hw_env *hw_environment(const hw_backend *b);
const char *hw_name(const hw_backend *b);

/* This process's rank among the backend's processes (0 but under MPI):
 * only rank 0 writes results. */
int hw_rank(const hw_backend *b);

/* How busy the machine is: the 1-minute load average per online core
 * (/proc/loadavg), or -1 when unknown. Measurements taken above ~0.5 run
 * beside other work and vary with it. */
double hw_load_per_core(void);

/* Close; NULL is a no-op. Under MPI, finalises MPI. */
void hw_close(hw_backend *b);

/* The GPUs this process's CUDA runtime sees, without opening a backend
 * (0 when there is no driver, runtime or device): for defaults, such as
 * measure's nccl sweep using every GPU of every process. */
int hw_local_gpus(void);

/* Combine measurements of one case taken in n rounds spread over a
 * session (so that a passing burst of load on a shared machine weighs one
 * round, not the whole case): the median of the rounds' medians and of
 * their quartiles, the extremes of their extremes, repetitions summed;
 * time_s (and the rates) by `stat`: the fastest repetition of any round,
 * or the median of the rounds' medians. n >= 1. */
void hw_combine(const mb_measurement *rounds, int n, const mb_case *c, hw_statistic stat, mb_measurement *out);

/* Statistics of n samples (sorted in place): median, quartiles (linear
 * interpolation), extremes, written into m's time fields, time_s by
 * `stat`. n >= 1. */
void hw_stats(double *x, int n, hw_statistic stat, mb_measurement *m);

#endif
