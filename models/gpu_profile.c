/*
 * gpu_profile: named GPU parameters (see gpu_profile.h).
 */
#include "models/gpu_profile.h"
#include "models/paramtab.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* A name -> a double inside gpu_spec (part 0) or node_spec (part 1). */
typedef paramtab_def pdef;

#define G(n, field) { n, 0, offsetof(gpu_spec, field) }
#define GEMM(prec, idx) \
    G("gpu.gemm." prec ".eff", eff_gemm_by_prec[idx]), \
    G("gpu.gemm." prec ".half_dim", gemm_half_dim_by_prec[idx])

static const pdef params[] = {
    GEMM("fp64", PREC_FP64), GEMM("fp32", PREC_FP32), GEMM("tf32", PREC_TF32), GEMM("bf16", PREC_BF16),
    GEMM("fp16", PREC_FP16), GEMM("fp8", PREC_FP8),   GEMM("int8", PREC_INT8), GEMM("int4", PREC_INT4),
    GEMM("fp6", PREC_FP6),   GEMM("fp4", PREC_FP4),
    G("gpu.hbm.eff", eff_hbm),
    G("gpu.copy.latency_s", copy_latency_s),
    { "gpu.pcie.bw", 1, offsetof(node_spec, pcie_bw_bytes_per_s) },
    { "gpu.pcie.latency_s", 1, offsetof(node_spec, pcie_latency_s) },
};
#define N_PARAMS (sizeof params / sizeof *params)

const char *const *gpu_param_names(void) {
    static const char *names[N_PARAMS + 1];
    return paramtab_names(params, N_PARAMS, names);
}

static const pdef *find(const char *z) { return paramtab_find(params, N_PARAMS, z); }

double *gpu_param(gpu_spec *g, node_spec *nd, const char *z) {
    const pdef *d = find(z);
    char *base = !d ? NULL : d->part ? (char *)nd : (char *)g;
    return base ? (double *)(base + d->off) : NULL;
}

int gpu_param_known(const char *z) { return find(z) != NULL; }

const char *gpu_param_unit(const char *z) { return find(z) ? paramtab_unit(z) : ""; }

int gpu_profile_set(gpu_profile *p, const char *name, double value, double stderr_) {
    if (!find(name)) return -1;
    int i = 0;
    while (i < p->n && strcmp(p->name[i], name)) i++;
    if (i == GPU_PROFILE_MAX_PARAMS) return -1;
    if (i == p->n) snprintf(p->name[p->n++], sizeof p->name[0], "%s", name);
    p->value[i] = value;
    p->stderr_[i] = stderr_;
    return 0;
}

void gpu_profile_apply(const gpu_profile *p, gpu_spec *g, node_spec *nd) {
    for (int i = 0; i < p->n; i++) {
        double *slot = gpu_param(g, nd, p->name[i]);
        if (slot) *slot = p->value[i];
    }
}
