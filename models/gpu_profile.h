/*
 * gpu_profile: a GPU's calibrated parameters, by name, as `clustertwin
 * calibrate` fits them to measurements a GPU backend took (`cuda`) and a
 * hardware profile carries them (<gpu-profile gpu="H200-SXM-141GB"> in
 * scenarios/profile.h). Each name is a field of the catalog's gpu_spec or of
 * the node_spec of a node with that GPU, so applying a profile to the catalog
 * entries prices everything that GPU runs (microbenchmarks, training steps,
 * serving iterations) with the calibrated values:
 *
 *   gpu.gemm.P.eff        gpu_spec.eff_gemm_by_prec[P]      ratio (of the tensor peak)
 *   gpu.gemm.P.half_dim   gpu_spec.gemm_half_dim_by_prec[P] GEMM dimension, elements
 *   gpu.hbm.eff           gpu_spec.eff_hbm                  ratio (of the HBM peak)
 *   gpu.copy.latency_s    gpu_spec.copy_latency_s           s
 *   gpu.pcie.bw           node_spec.pcie_bw_bytes_per_s     B/s
 *   gpu.pcie.latency_s    node_spec.pcie_latency_s          s
 *
 * P is every precision of models/catalog.h (fp64 ... fp4). The formulas they
 * enter are models/gpu.h's roofline and models/microbench.h's copies;
 * docs/gpu-calibration.md has the whole story. Pure data: no I/O.
 */
#ifndef CT_GPU_PROFILE_H
#define CT_GPU_PROFILE_H

#include "models/catalog.h"

#define GPU_PROFILE_MAX_PARAMS 32

/* The parameters a profile gives for one catalog GPU; the rest keep the
 * catalog's values. */
typedef struct gpu_profile {
    char gpu[CATALOG_NAME_MAX];      /* the catalog GPU they were measured on; "" = none */
    int line;                        /* of the <gpu-profile> element read (0: not read) */
    int n;
    char name[GPU_PROFILE_MAX_PARAMS][40];
    double value[GPU_PROFILE_MAX_PARAMS];
    double stderr_[GPU_PROFILE_MAX_PARAMS];   /* NaN: not given */
} gpu_profile;

/* Every parameter name, NULL-terminated. */
const char *const *gpu_param_names(void);

/* The field named z in g (gpu.gemm.*, gpu.hbm.*, gpu.copy.*) or nd
 * (gpu.pcie.*); NULL for an unknown name or when that struct is NULL. */
double *gpu_param(gpu_spec *g, node_spec *nd, const char *z);

/* 1 when z is a GPU parameter's name. */
int gpu_param_known(const char *z);

/* "s", "B/s" or "" (a ratio, or a GEMM dimension); "" for an unknown name. */
const char *gpu_param_unit(const char *z);

/* Set (or replace) a parameter. Returns 0, or -1 for an unknown name or a
 * full profile. */
int gpu_profile_set(gpu_profile *p, const char *name, double value, double stderr_);

/* Write p's values into g (may be NULL) and nd (may be NULL). */
void gpu_profile_apply(const gpu_profile *p, gpu_spec *g, node_spec *nd);

#endif
