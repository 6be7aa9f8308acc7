/*
 * gpu: roofline time per operation class (see gpu.h).
 *
 * Called a few dozen times per training-plan evaluation; plain arithmetic.
 * A gpu_spec built by hand may leave efficiencies at 0: each then takes
 * the default of its catalog field table (models/catalog.c).
 */
#include "models/gpu.h"
#include "models/power.h"

#include <math.h>

static double or_default(double v, double def) { return v > 0 ? v : def; }

/* eff_sustained, scaled by the DVFS law when the board runs at a limit other
 * than the one it was measured at (models/power.h). */
static double sustained(const gpu_spec *g) { return power_sustained_fraction(g); }

double gpu_peak_flops(const gpu_spec *g, precision p) {
    /* Fall back to a wider type with a tensor path: fp8/int8/int4 -> bf16,
     * fp32 -> tf32 (what frameworks do by default on tensor-core GPUs). */
    static const precision wider[PREC_COUNT] = {
        [PREC_FP64] = PREC_FP64, [PREC_FP32] = PREC_TF32, [PREC_TF32] = PREC_BF16,
        [PREC_BF16] = PREC_FP16, [PREC_FP16] = PREC_BF16, [PREC_FP8] = PREC_BF16,
        [PREC_INT8] = PREC_BF16, [PREC_INT4] = PREC_INT8, [PREC_FP6] = PREC_FP8, [PREC_FP4] = PREC_FP6,
    };
    if (p < 0 || p >= PREC_COUNT) p = PREC_BF16;
    for (int i = 0; i < 4; i++) {
        if (g->tflops[p] > 0) return g->tflops[p] * 1e12;
        p = wider[p];
    }
    return g->tflops[PREC_BF16] * 1e12;
}

/* A precision's calibrated figure (a hardware profile's gpu.gemm.P.*), else
 * the GPU's shared one, else the catalog field's default. */
static double by_prec(const double *v, precision p, double shared, double def) {
    return p >= 0 && p < PREC_COUNT && v[p] > 0 ? v[p] : or_default(shared, def);
}

double gpu_gemm_eff(const gpu_spec *g, precision p, double m, double n, double k) {
    double d = cbrt(m * n * k);
    double half = by_prec(g->gemm_half_dim_by_prec, p, g->gemm_half_dim, 256);
    if (!(d > 0)) return 0;
    return by_prec(g->eff_gemm_by_prec, p, g->eff_gemm, 0.75) * d / (d + half);
}

double gpu_hbm_bytes_per_s(const gpu_spec *g) {
    /* HBM has its own clock: power throttling of the SMs leaves it be. */
    return g->hbm_bw_bytes_per_s * or_default(g->eff_hbm, 0.85);
}

double gpu_gemm_flops_per_s(const gpu_spec *g, precision p, double m, double n, double k) {
    return gpu_peak_flops(g, p) * gpu_gemm_eff(g, p, m, n, k) * sustained(g);
}

double gpu_gemm_s(const gpu_spec *g, precision p, double m, double n, double k, double batch) {
    if (!(m > 0 && n > 0 && k > 0 && batch > 0)) return 0;
    double w = precision_bytes(p), wout = w < 2 ? 2 : w;
    double flops = 2 * m * n * k * batch;
    double bytes = ((m * k + k * n) * w + m * n * wout) * batch;
    double rate = gpu_gemm_flops_per_s(g, p, m, n, k);
    double t_compute = rate > 0 ? flops / rate : 0;
    double bw = gpu_hbm_bytes_per_s(g);
    double t_memory = bw > 0 ? bytes / bw : 0;
    return t_compute > t_memory ? t_compute : t_memory;
}

static double attention_at(const gpu_spec *g, precision p, double flops, double eff) {
    if (p == PREC_FP8 || p == PREC_INT8 || p == PREC_INT4) p = PREC_BF16;
    double rate = gpu_peak_flops(g, p) * eff * sustained(g);
    return rate > 0 && flops > 0 ? flops / rate : 0;
}

double gpu_attention_s(const gpu_spec *g, precision p, double flops) {
    return attention_at(g, p, flops, or_default(g->eff_attention, 0.55));
}

/* Mechanism "exp". Per score element a fused attention pass does
 * flops_per_exp tensor FLOPs and one exponential on the special-function
 * units (MUFU.EX2): the forward's softmax, the backward's recomputed P. On
 * H100 the exponentials take about half the time of the forward's GEMMs at
 * head dim 128 (Shah et al., "FlashAttention-3", 2024, section 3.2: 989
 * TFLOP/s of matmul against 3.9 TFLOP/s of exponentials, 256x), and
 * FlashAttention-2 does not hide them behind the GEMMs (the ping-pong
 * FlashAttention-3 adds there). Its efficiencies measured on one GPU
 * therefore hold that GPU's exponential time; on a GPU whose tensor cores
 * outrun its exponential units by more (Blackwell: 512x) the kernel takes
 * the difference in addition, and by less, that much less. */
double gpu_attention_exp_eff(const gpu_spec *g, double eff, double flops_per_exp) {
    double own = g->bf16_flops_per_exp, ref = g->eff_attention_flops_per_exp;
    if (!(own > 0 && ref > 0 && flops_per_exp > 0 && eff > 0) || own == ref) return eff;
    double inv = 1 / eff + (own - ref) / flops_per_exp;
    return inv > 1 ? 1 / inv : 1;
}

double gpu_attention_pass_s(const gpu_spec *g, precision p, double flops, gpu_attn_pass pass,
                            double flops_per_exp) {
    double by_pass = pass == GPU_ATTN_FWD_CAUSAL ? g->eff_attention_fwd_causal
                   : pass == GPU_ATTN_FWD_FULL   ? g->eff_attention_fwd_full
                                                 : g->eff_attention_bwd;
    double eff = or_default(by_pass, or_default(g->eff_attention, 0.55));
    return attention_at(g, p, flops, gpu_attention_exp_eff(g, eff, flops_per_exp));
}

double gpu_memory_s(const gpu_spec *g, double bytes) {
    double bw = gpu_hbm_bytes_per_s(g);
    return bw > 0 && bytes > 0 ? bytes / bw : 0;
}
