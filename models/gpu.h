/*
 * gpu: how long one kernel takes on one GPU, by operation class.
 *
 * A roofline per class, each bound scaled by a named efficiency from the
 * GPU's catalog entry (models/catalog/gpus.xml says where each comes from):
 *
 *   GEMM          max(flops / (peak·eff_gemm·shape), bytes / (hbm·eff_hbm))
 *                 shape = d / (d + gemm_half_dim), d = cube root of m·n·k
 *                 (eff_gemm and gemm_half_dim per precision when a hardware
 *                 profile calibrated them: docs/gpu-calibration.md):
 *                 small or skinny GEMMs leave tensor cores idle (tile
 *                 quantisation, launch and tail effects).
 *   attention     fused (FlashAttention-style) kernels: flops / (peak·eff_attention)
 *   memory-bound  elementwise, norms, softmax, optimizer: bytes / (hbm·eff_hbm)
 *
 * Tensor-core rates are scaled by eff_sustained: the fraction of the
 * short-benchmark rate a GPU holds when it runs dense work back to back for
 * minutes at its power limit (SM clocks throttle; microbenchmarks measure
 * cool, boosted chips). Under a power limit other than the one eff_sustained
 * was measured at (a power cap, or a board whose default limit is lower) the
 * DVFS law of models/power.h scales it further. HBM bandwidth has its own
 * clock and is not scaled.
 * Pure functions; peaks in FLOP/s and bytes/s.
 */
#ifndef CT_GPU_H
#define CT_GPU_H

#include "models/catalog.h"

/* Dense tensor peak in FLOP/s for a precision. A precision the GPU has no
 * tensor path for runs at the next wider one it has (fp8 on an A100 runs
 * as bf16). 0 only for a GPU without any tensor peak. */
double gpu_peak_flops(const gpu_spec *g, precision p);

/* Fraction of the tensor peak a GEMM of this shape reaches at precision p
 * (compute bound, before eff_sustained): the precision's calibrated
 * efficiency and half dimension when the GPU has them, else the shared ones. */
double gpu_gemm_eff(const gpu_spec *g, precision p, double m, double n, double k);

/* Time of `batch` GEMMs of m×k by k×n at precision p (inputs and output at
 * that precision's width, at least 2 bytes for the output). */
double gpu_gemm_s(const gpu_spec *g, precision p, double m, double n, double k, double batch);

/* Time of fused attention kernels doing `flops` tensor FLOPs (as
 * FlashAttention benchmarks count them). Attention runs in bf16/fp16 even
 * when GEMMs use fp8. */
double gpu_attention_s(const gpu_spec *g, precision p, double flops);

/* The passes of fused attention a GPU may run at different fractions of its
 * peak (FlashAttention-2 on H100: forward 335 TFLOP/s causal, 370 unmasked,
 * backward 322; docs/attention-passes.md). */
typedef enum gpu_attn_pass { GPU_ATTN_FWD_CAUSAL, GPU_ATTN_FWD_FULL, GPU_ATTN_BWD } gpu_attn_pass;

/* As gpu_attention_s, at the pass's own efficiency where the catalog gives
 * one (eff-attention-fwd-causal, -fwd-full, -bwd), else eff_attention.
 * flops_per_exp: the pass's tensor FLOPs per softmax exponential (forward
 * 2·(qk_dim + v_dim), backward attn_bwd_factor times that); where g's
 * exponential rate differs from that of the GPU its efficiencies were
 * measured on, the difference in exponential time is added
 * (gpu_attention_exp_eff; docs/blackwell-ultra.md). 0: not priced. */
double gpu_attention_pass_s(const gpu_spec *g, precision p, double flops, gpu_attn_pass pass,
                            double flops_per_exp);

/* The attention efficiency `eff`, measured on a GPU doing
 * g->eff_attention_flops_per_exp bf16 tensor FLOPs per exponential, carried
 * to g, which does g->bf16_flops_per_exp: a FlashAttention-2-class kernel
 * runs a tile's softmax after its QK^T GEMM, so its exponentials add to its
 * time, 1/eff' = 1/eff + (own - ref) / flops_per_exp in units of the tensor
 * peak's time. eff itself when either figure is 0 or they are equal. */
double gpu_attention_exp_eff(const gpu_spec *g, double eff, double flops_per_exp);

/* Time of memory-bound kernels moving `bytes` to and from HBM. */
double gpu_memory_s(const gpu_spec *g, double bytes);

/* Achievable rates, for reports and microbenchmark predictions. */
double gpu_gemm_flops_per_s(const gpu_spec *g, precision p, double m, double n, double k);
double gpu_hbm_bytes_per_s(const gpu_spec *g);

#endif
