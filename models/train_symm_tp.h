/*
 * train_symm_tp: the tensor-parallel collectives of one dense layer under
 * PyTorch's async TP, the symmetric-memory micro-pipeline torchtitan runs
 * (stack field async-tp-pipeline; docs/torchtitan-mechanisms.md).
 *
 * With sequence parallelism a layer pass has two all-gathers, each feeding
 * a GEMM (QKV, FFN in), and two reduce-scatters, each fed by one (the
 * attention output projection, FFN out). PyTorch decomposes each pair into
 * tp chunks of m/tp rows (torch/distributed/_symmetric_memory/__init__.py,
 * _pipelined_all_gather_and_consume and _pipelined_produce_and_all2all):
 *   - each of the tp-1 remote chunks' copies hides behind one chunk's GEMM
 *     at most, so a collective longer than tp-1 chunk GEMMs shows the rest;
 *     at least one chunk in tp shows, as under the default rule;
 *   - the GEMM runs as tp GEMMs of m/tp rows (forward, and the input
 *     gradient of the backward; the weight gradient uses the gathered
 *     tensor whole);
 *   - an all-gather first copies the local shard into the symmetric buffer
 *     (read and write, before the first chunk);
 *   - a reduce-scatter lands tp partial sums of the local rows and adds
 *     them in a separate pass (_fused_matmul_reduce_scatter_impl: reduce_fn
 *     over the stacked partials), reading all m rows and writing m/tp.
 * Pure function of plain structs.
 */
#ifndef CT_TRAIN_SYMM_TP_H
#define CT_TRAIN_SYMM_TP_H

#include "models/catalog.h"
#include "models/train_plan.h"
#include "models/transformer.h"

/* One layer pass's collectives under the micro-pipeline, split by kind:
 * index 0 the two all-gathers, 1 the two reduce-scatters. */
typedef struct symm_tp_pass {
    double exposed[2];     /* communication left on the critical path (s) */
    double extra[2];       /* compute added: chunked GEMMs, staging, partial sums (s) */
} symm_tp_pass;

/* gm: the layer's four GEMMs (tf_layer_gemms: QKV, output, FFN in, FFN
 * out; m the gathered rows); t_ag, t_rs: one all-gather and one
 * reduce-scatter of the layer's activation (act bytes per element). */
void train_symm_tp_pass(const gpu_spec *g, const train_plan *p, const tf_gemm gm[4], double t_ag,
                        double t_rs, double act, symm_tp_pass *out);

#endif
