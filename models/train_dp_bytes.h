/*
 * train_dp_bytes: the width of what the data-parallel collectives move.
 *
 * A stack's gradient and weight formats (models/stack.h: grad-reduce-bf16,
 * fp8-param) set the bytes a GPU holds (models/memory.c) and also the bytes
 * the gradient reduce-scatter (or all-reduce) and the ZeRO/FSDP parameter
 * all-gather carry: Megatron-Core's data-parallel buffers are the
 * communication buffers (see train_dp_bytes.c for the sources).
 */
#ifndef CT_TRAIN_DP_BYTES_H
#define CT_TRAIN_DP_BYTES_H

#include "models/train_plan.h"

/* Bytes per gradient element the data-parallel reduction moves: 2 when the
 * stack reduces gradients in bf16 (or the job trains in fp16), else
 * train_grad_bytes (fp32). */
double train_dp_grad_bytes(const train_plan *p, const train_params *q);

/* Bytes per parameter the parameter all-gather moves: 1 for FP8 primary
 * weights under a per-tensor FP8 recipe (delayed or tensorwise), else 2
 * (bf16). */
double train_dp_param_bytes(const train_plan *p);

#endif
