/*
 * calibrate_gpu: the GPU groups of calibrate (models/calibrate.h), fitted to
 * measurements of the cuda backend against the catalog GPU the device is:
 *
 *   gpu.copy     d2d copies: gpu.hbm.eff, gpu.copy.latency_s
 *                t = latency + 2 S / (hbm_bw · hbm.eff)   (read and write)
 *   gpu.pcie     h2d and d2h copies: gpu.pcie.bw, gpu.pcie.latency_s
 *                t = latency + S / pcie.bw
 *   gpu.gemm.P   GEMMs of precision P: gpu.gemm.P.eff, gpu.gemm.P.half_dim
 *                t = launch + max(F / (peak_P · eff · d / (d + half_dim)),
 *                                 bytes / (hbm_bw · hbm.eff)),  d = (mnk)^(1/3)
 *                (the memory roofline kept: gpu.hbm.eff is gpu.copy's, fitted
 *                first, so a GEMM of a few rows stays memory-bound); nested:
 *                eff alone (the catalog's half_dim), then both, by AIC
 *
 * The formulas are models/microbench.c's (the same predictions validate
 * prints); docs/gpu-calibration.md has the figures of one H200.
 */
#ifndef CT_CALIBRATE_GPU_H
#define CT_CALIBRATE_GPU_H

#include <stddef.h>

#include "models/calibrate.h"

/* The GPU group of a case the cuda backend measured, or NULL. */
const char *calibrate_gpu_group(const mb_case *c);

/* The groups in fitting order (gpu.copy first: the GEMMs' memory roofline
 * uses its gpu.hbm.eff), NULL-terminated. */
const char *const *calibrate_gpu_groups(void);

/* Group g's parameters (names), their starting values from the data (pts
 * sorted by size, n >= 1) and t's catalog GPU, and the nested models as bit
 * masks over names. Returns how many names; 0 when g is not a GPU group. */
int calibrate_gpu_params(const char *g, const cal_point **pts, int n, const cal_target *t, const char **names,
                         double *x0, int *levels, int *nlevels);

/* The model's time of c on t's GPU and node, or -1 when it cannot price it. */
double calibrate_gpu_predict_s(const cal_target *t, const mb_case *c);

/* The catalog GPU a device string names ("NVIDIA H200 x1 (measuring on GPU
 * 0)", as the cuda backend records hardware.devices): the entries whose
 * family (the name up to its first '-') is a word of the device's name, then
 * by form factor (NVL and PCIe boards say so; a name without one is the SXM
 * module) and by memory ("80GB"). Returns 0 with name set, or -1 with err
 * (no candidate, or several: name it with --gpu). */
int calibrate_gpu_of_device(const catalog *cat, const char *devices, char *name, size_t len, char *err,
                            size_t errlen);

/* Whether v is a physical value of GPU parameter name (the bounds a fit
 * must meet, calibrate.h: an efficiency above 0 and at most CAL_MAX_EFF, a
 * half dimension from CAL_MIN_HALF_DIM to CAL_MAX_HALF_DIM, a latency from
 * CAL_MIN_LATENCY_S to CAL_MAX_LATENCY_S, a bandwidth from CAL_MIN_BW to
 * CAL_MAX_BW). Returns 1, or 0 with why ("from 1e-09 to 10 s"). */
int calibrate_gpu_check(const char *name, double v, char *why, size_t whylen);

#endif
