/*
 * calibrate: fit the host model's named parameters (models/host.h) to
 * measured microbenchmarks with GSL's nonlinear least squares
 * (gsl_multifit_nlinear, trust region Levenberg-Marquardt).
 *
 * The cases fall into groups fitted independently, each with its own
 * parameters:
 *
 *   copy            copy.dram_bw, copy.latency_s, copy.cache_bw, copy.cache_bytes,
 *                   copy.l1_bw, copy.l1_bytes, copy.cache_k
 *   gemm.fp32/fp64  gemm.P.latency_s, gemm.P.eff (gemm.P.peak_flops is kept: the
 *                   efficiency is measured against it)
 *   storage.write   storage.latency_s, storage.write_bw
 *   storage.read    storage.read_bw, storage.read_latency_s
 *   coll.OP         coll.OP.bw, coll.OP.alpha_s, coll.OP.rndv_alpha_s, coll.OP.cache_bw,
 *                   coll.OP.cache_bytes, coll.OP.cache_k; coll.OP.eager_bytes by a
 *                   discrete search (a step has no gradient): between each two
 *                   neighbouring sizes in turn, the best fit kept
 *
 * Residuals are log(predicted / measured): relative errors, so a case of
 * 1 us counts as much as one of 1 s. Parameters are fitted as logarithms,
 * so they stay positive; uncertainties are the covariance's standard
 * errors scaled by the residual variance (as gsl_multifit_nlinear's
 * examples do), mapped back to the parameter (value x stderr of its log).
 * Each group's model is nested (bandwidth and latency; then the
 * rendezvous latency or a cache level; then another level) and the level
 * with the least Akaike criterion (AIC) is kept, so a knee the
 * data do not show is not invented; a group with too few points fits the
 * leading parameters only. The note says which.
 *
 * A group with as many points as parameters (one GEMM of a precision) is
 * exactly determined: it has no standard error (reported as inf) and
 * nothing held out; the note says so.
 *
 * Acceptance: a fitted model is kept only when every value lies within
 * the physical bounds of its unit (CAL_MIN_LATENCY_S .. CAL_MAX_LATENCY_S,
 * CAL_MIN_BW .. CAL_MAX_BW, CAL_MIN_BYTES .. CAL_MAX_BYTES, efficiencies
 * up to CAL_MAX_EFF, cache sharpness CAL_MIN_K .. CAL_MAX_K), every value
 * is larger than its standard error, and the model's rate at
 * CAL_ENVELOPE_X times the largest measured size stays near the rate
 * measured at the largest size (no faster than CAL_ENVELOPE_UP x, no
 * slower than 1 / CAL_ENVELOPE x). A model
 * that fails is rejected and the note says why; when one parameter is at
 * fault the same model without it (a latency switched off, a cache level
 * dropped, a bandwidth the data cannot see kept at the starting profile's
 * value) is tried instead; when no model passes, the group keeps the
 * starting profile's values.
 *
 * Hold-out: in each group, points are sorted by size and every other size
 * (the 2nd, 4th, ...) is held out of the fit and used to validate it.
 *
 * Routing: a point is fitted by the model of the backend that measured it.
 * Host groups (above) take cpu and mpi measurements only; measurements of
 * the cuda backend go to the GPU groups of models/calibrate_gpu.h, fitted
 * against the catalog GPU the device is (gpu.copy, gpu.pcie, gpu.gemm.P;
 * docs/gpu-calibration.md); nccl measurements are left out (the collective
 * model's NCCL figures are not calibrated yet) and counted in the report.
 */
#ifndef CT_CALIBRATE_H
#define CT_CALIBRATE_H

#include <stddef.h>

#include "models/gpu_profile.h"
#include "models/host.h"
#include "models/microbench.h"

typedef struct cal_point {
    mb_case c;
    char backend[16];            /* what measured it: cpu, mpi, cuda, nccl ("" = cpu) */
    double time_s;               /* measured (the session's statistic: fastest or median) */
    double read_s;               /* storage: measured read back (0 = none) */
} cal_point;

/* Physical bounds of a fitted host parameter, by unit. A latency below a
 * nanosecond is below a few clock cycles, the least any call costs (a fit
 * gave copy.latency_s = 6.5e-47 s: the data show no latency); ten seconds
 * is beyond any one request's latency. A bandwidth below 1 MB/s is slower
 * than any disk, memory or link a host model prices (a fit gave
 * coll.sendrecv.bw = 300 kB/s behind a cache that covered every measured
 * size); above 10 TB/s is faster than one core's L1 cache (about 0.5 TB/s
 * on a 4 GHz core moving 128 B a cycle) by 20x. Sizes from a cache line
 * (64 B) to 10 TB. A GEMM efficiency above 1.5 of the peak is impossible
 * against a measured peak (a nominal one may be 1.5x low on turbo). A cache
 * share's sharpness k from 0.5 (a gentle slope) to 64 (a step). */
#define CAL_MIN_LATENCY_S 1e-9
#define CAL_MAX_LATENCY_S 10.0
#define CAL_MIN_BW 1e6
#define CAL_MAX_BW 1e13
#define CAL_MIN_BYTES 64.0
#define CAL_MAX_BYTES 1e13
#define CAL_MAX_EFF 1.5
#define CAL_MIN_K 0.5
#define CAL_MAX_K 64.0
/* A GPU GEMM's half dimension (gpu.gemm.P.half_dim): from one element to
 * 64K, four times the largest GEMM dimension the twin scenarios measure
 * (16384): a curve that reaches half its efficiency only beyond that has
 * not been seen to saturate. */
#define CAL_MIN_HALF_DIM 1.0
#define CAL_MAX_HALF_DIM 65536.0
/* The envelope: a model's rate at CAL_ENVELOPE_X times the largest
 * measured size (GEMM: twice each dimension, 8x the FLOPs) must lie
 * between the largest size's measured rate / CAL_ENVELOPE and that rate
 * x CAL_ENVELOPE_UP. A larger transfer only amortises what latency the
 * largest one still paid, and a cache only makes larger transfers slower,
 * so a sound model's rate there stays near the largest size's: up to 2x
 * faster (half the largest transfer's time latency), down to 4x slower (a
 * cache level still draining at the top of the sweep). Engineering choices,
 * not measurements. */
#define CAL_ENVELOPE_X 16.0
#define CAL_ENVELOPE 4.0
#define CAL_ENVELOPE_UP 2.0

#define CAL_MAX_PARAMS 8
#define CAL_MAX_GROUPS 32

/* What calibrate fits: the host model, and the catalog GPU (and a node
 * holding it: the PCIe link) that measurements of a GPU backend were taken
 * on, starting from the catalog's values. */
typedef struct cal_target {
    host_profile host;
    gpu_spec gpu;
    node_spec node;
    int has_gpu;                 /* 0: no catalog GPU named; GPU measurements are left out */
} cal_target;

typedef struct cal_group {
    char name[32];               /* "copy", "gemm.fp32", "coll.allreduce", ... */
    int n_fit, n_held;           /* points used to fit / held out */
    int n_params;                /* fitted */
    char param[CAL_MAX_PARAMS][40];
    double value[CAL_MAX_PARAMS], stderr_[CAL_MAX_PARAMS];
    double fit_rms_pct;          /* RMS of the fit's relative residuals, % */
    double fit_max_pct;
    double held_median_pct;      /* |error| on the held-out points, % (NaN: none) */
    double held_max_pct;
    int iterations;
    int ok;                      /* the fit ran (converged, or stopped at the iteration limit: see note) */
    char note[400];
} cal_group;

typedef struct cal_report {
    cal_group group[CAL_MAX_GROUPS];
    int n_groups;
    int left_nccl;               /* points left out: NCCL collectives (not calibrated yet) */
    int left_no_gpu;             /* GPU measurements with no catalog GPU to fit (has_gpu 0) */
    int left_other;              /* measurements no model of their backend prices */
} cal_report;

/* One point after the fit: its group (index into cal_report.group, -1 =
 * none), whether it was held out, and the fitted model's time next to the
 * measured one; storage points also have their read back (read_group). */
typedef struct cal_residual {
    int group, held;
    double predicted_s, measured_s;
    int read_group;
    double read_predicted_s, read_measured_s;
} cal_residual;

/* Fit t's parameters to the n points. t holds the starting values (the
 * host's gemm peaks and the GPU's catalog peaks are kept) and receives the
 * fitted values; hold_out as above (0: fit every point). stderr_of, when
 * not NULL, receives one entry per calibrate_param_names() (NaN for those
 * not fitted). Returns the number of groups fitted (>= 0), or -1 when there
 * is nothing to fit (err says why); t is then unchanged. res, when not
 * NULL, receives one entry per point. */
int calibrate_fit(const cal_point *pts, int n, int hold_out, cal_target *t, double *stderr_of, cal_report *rep,
                  cal_residual *res, char *err, size_t errlen);

/* host_param_names() then gpu_param_names(), NULL-terminated. */
const char *const *calibrate_param_names(void);

/* Several sessions measuring the same case, each by its fastest
 * repetition: keep the fastest of them (and of their read backs), so a
 * session in which the machine ran slower throughout (on this project's VM,
 * a whole MPI launch can run its reductions 2-4x slower than the next) does
 * not pull the fit. Reorders nothing else; returns the new count. */
int calibrate_best_of(cal_point *pts, int n);

/* The group a case measured by backend belongs to: copy (host), gemm by
 * precision, storage, collective by op for cpu and mpi; gpu.copy, gpu.pcie,
 * gpu.gemm.P for cuda; NULL when no model of that backend is calibrated
 * from it (nccl: not yet). Exposed for tests. */
const char *calibrate_group_of(const mb_case *c, const char *backend);

#endif
