/*
 * train_dp_bytes: bytes per element of the data-parallel collectives
 * (train_dp_bytes.h).
 *
 * Megatron-Core keeps parameters and gradients in contiguous buffers that
 * are also what its data-parallel collectives send. Each buffer is keyed by
 * a parameter storage type and a gradient type (NVIDIA/Megatron-LM
 * megatron/core/distributed/param_and_grad_buffer.py, group_params_for_buffers:
 * "param_dtype: storage dtype (torch.uint8 for FP8/NVFP4 parameters, else
 * param.dtype)", "grad_dtype: gradient reduction dtype (torch.float if
 * grad_reduce_in_fp32, else param.dtype)"). So a bf16 job with
 * grad_reduce_in_fp32 off reduce-scatters bf16 gradients, and with FP8
 * primary weights (fp8_param_gather) its distributed optimizer all-gathers
 * the one-byte FP8 weights. MXFP8 weights are the exception: their buffer
 * is not mapped onto the FP8 parameters, the gather moves bf16 and the cast
 * to MXFP8 follows it (megatron/core/distributed/distributed_data_parallel.py,
 * "For MXFP8 params ... The paramaters are cast from bf16 to MXFP8 during
 * copy"); blockwise FP8 is treated the same way, no source found saying
 * otherwise. The embedding and output weights are not FP8 (Transformer
 * Engine quantizes its linear modules only) but are counted at the same
 * width: a few per cent of a stage's weights.
 */
#include "models/train_dp_bytes.h"

/* A bf16 gradient element (grad-reduce-bf16). */
#define DP_BF16_GRAD_BYTES 2.0
/* A gathered weight: bf16, or the FP8 weight alone (its transpose is made
 * after the gather, Megatron-Core fp8_utils post_all_gather_processing). */
#define DP_BF16_PARAM_BYTES 2.0
#define DP_FP8_PARAM_BYTES 1.0

double train_dp_grad_bytes(const train_plan *p, const train_params *q) {
    if (p->stack.grad_reduce_bf16 && p->precision != PREC_FP16) return DP_BF16_GRAD_BYTES;
    return train_grad_bytes(p, q);
}

double train_dp_param_bytes(const train_plan *p) {
    if (p->precision != PREC_FP8 || !p->stack.fp8_param) return DP_BF16_PARAM_BYTES;
    fp8_recipe r = (fp8_recipe)p->fp8_recipe;
    return (r == FP8_DELAYED || r == FP8_TENSORWISE) ? DP_FP8_PARAM_BYTES : DP_BF16_PARAM_BYTES;
}
