/*
 * microbench: predictions for the microbenchmark cases a scenario lists
 * (CONTRACT.md "Microbenchmarks"), the same cases hw/ measures for real.
 *
 *   collective  coll_time() on the scenario's fabric; nccl-tests sizes and
 *               bus bandwidth
 *   gemm        the GPU roofline (models/gpu) for one m x n x k GEMM, as a
 *               short cuBLAS benchmark runs it (no sustained-clock derating);
 *               with groups = G > 1, G such GEMMs with their own operands
 *               in one batched call (a mixture-of-experts layer's grouped
 *               GEMM under balanced routing: m tokens per expert, G local
 *               experts), priced as the MoE models price it: each GEMM at
 *               the efficiency its own shape gets, G of them, one launch
 *   copy        d2d: read + write through HBM; h2d/d2h: PCIe per GPU;
 *               host: host DRAM memcpy (read + write)
 *   storage     `files` files of size/files bytes written in parallel from
 *               one node to the scenario's first storage (else local NVMe)
 * Bandwidths are bytes moved / time (for d2d, the bytes copied once).
 */
#ifndef CT_MICROBENCH_H
#define CT_MICROBENCH_H

#include "models/catalog.h"
#include "models/collective.h"

typedef enum mb_case_kind { MBC_COLLECTIVE, MBC_GEMM, MBC_COPY, MBC_STORAGE } mb_case_kind;
typedef enum copy_kind { COPY_D2D, COPY_H2D, COPY_D2H, COPY_HOST } copy_kind;

int copy_kind_parse(const char *z);               /* -1 when unknown */
const char *copy_kind_name(copy_kind k);

typedef struct mb_case {
    mb_case_kind kind;
    coll_op op;                  /* collective */
    int ranks;
    unsigned algo_mask, proto_mask;  /* collective: forced (0 = the fabric's) */
    double size_bytes;           /* collective, copy, storage (total) */
    int m, n, k;                 /* gemm */
    int groups;                  /* gemm: GEMMs of m x n x k in one batched call (0 or 1: one) */
    precision precision;
    copy_kind copy;
    int files;                   /* storage */
    const char *path;            /* storage: directory written (NULL = a default) */
} mb_case;

/* Where a case runs. storage may be NULL (then the node's NVMe). */
typedef struct mb_env {
    const fabric *fabric;
    const storage_spec *storage;
    double storage_bw_bytes_per_s;   /* the scenario's aggregate (0 = the kind's default) */
} mb_env;

typedef struct mb_prediction {
    double time_s;
    double algbw_bytes_per_s;    /* size / time (collectives, copies, storage) */
    double busbw_bytes_per_s;    /* collectives: nccl-tests bus bandwidth */
    double tflops;               /* gemm */
    const char *detail;          /* e.g. "nvls/Simple" (static string) */
    coll_algo algo;              /* collectives: the algorithm and protocol chosen */
    coll_proto proto;
    int fallback;                /* collectives: the forced algorithm was not offered
                                    (coll_result.fallback) */
} mb_prediction;

/* One case measured on real hardware (hw/): per-operation times over
 * `reps` timed repetitions (each `iters` operations, after `warmup`
 * untimed ones): the median, the quartiles and the extremes. time_s is
 * the session's statistic (mb_hardware.statistic): the fastest repetition
 * ("min", the default) or the median; the rates and the error are those
 * of time_s, by the same conventions as the prediction. */
typedef struct mb_measurement {
    double time_s;               /* the statistic: min_s or median_s */
    double median_s;
    double min_s, q1_s, q3_s, max_s;
    int warmup, reps, iters;
    double algbw_bytes_per_s, busbw_bytes_per_s, tflops;
    double read_s;               /* storage: time to read the files back, same statistic (0 = none) */
} mb_measurement;

/* Where measurements were taken (hw/ fills it; plain strings). */
typedef struct mb_hardware {
    char backend[16];
    char host[128];
    char cpu[160];               /* CPU model and cores */
    char devices[256];           /* GPUs, or what the backend measures on */
    char libraries[256];         /* library versions */
    int ranks;                   /* processes taking part (MPI ranks, GPUs for nccl) */
    char statistic[8];           /* what measured_s is: "min" or "median" */
    double peak_fp64_flops;      /* cpu: one core's FMA peak, measured (0 = not measured) */
    double peak_fp32_flops;
    char gemm_operands[16];      /* what GEMMs ran on: "random" (cuda: seeded random values
                                    of each type, hw/gemmdata.h); "" = not recorded */
} mb_hardware;

/* A GEMM case's group count: 1 unless groups > 1. */
static inline int mb_groups(const mb_case *c) { return c->groups > 1 ? c->groups : 1; }

/* A GEMM case's FLOPs: 2 m n k per group. */
static inline double mb_gemm_flops(const mb_case *c) { return 2.0 * c->m * c->n * c->k * mb_groups(c); }

/* A case in a few words: "allreduce 2r 1 MiB", "gemm fp32 512x512x512",
 * "copy host 4 MiB", "storage-write 64 MiB/2". */
void mb_case_label(const mb_case *c, char *buf, size_t len);

/* Fill the rates of m (algbw, busbw, tflops) from m->time_s. */
void mb_measurement_rates(const mb_case *c, mb_measurement *m);

/* Signed error of a prediction in percent of the measurement:
 * 100 (predicted - measured) / measured. */
double mb_error_pct(double predicted_s, double measured_s);

/* Predict one case. Returns 0, or -1 on a case the model cannot price
 * (e.g. ranks > 1 with no fabric); p unchanged on error. */
int mb_predict(const mb_case *c, const mb_env *env, mb_prediction *p);

/* The nccl-tests size sweep: min, min*factor, ... <= max (at most `cap`
 * sizes, rounded down to whole bytes). Returns how many were written. */
int mb_sizes(double min_bytes, double max_bytes, double factor, double *out, int cap);

#endif
