/*
 * published: replay every published case of a validation folder through
 * the models (`clustertwin validate --published DIR`, docs/validation.md).
 *
 * Each CSV in DIR is recognised by its header columns, not its name:
 *
 *   training      the columns of tests/validation/training.csv (extras
 *                 set, mechanism, precision, stack, power_cap_w optional):
 *                 each row becomes the scenario tests/replay-training
 *                 writes, loaded and run as `clustertwin run` runs it; the
 *                 job's metric is the prediction
 *   collectives   id,source,node_type,gpu,nodes,gpus_per_node,op,size_bytes,
 *                 metric,expected,tolerance_pct[,set,mechanism]: one
 *                 <microbenchmarks><collective> of that size, priced as
 *                 `run` prices microbenchmarks
 *   curve         size_bytes,busbw_GBps (nccl_allreduce_8xH100.csv): each
 *                 row an all-reduce over one dgx-h100 node's 8 GPUs
 *   failures      id,source,profile,gpus,node_type,metric,expected,
 *                 tolerance_pct[,set,mechanism]: the built-in failure
 *                 profile's rate for a job of `gpus` GPUs (models/reliability)
 *   inference     the columns of tests/validation/inference.csv: one
 *                 offline replica, as tests/cli_serving.sh replays it;
 *                 with engine and users columns (inference_latency.csv)
 *                 a closed loop of that many users on the engine, as
 *                 tests/cli_engines.sh replays it
 *
 * A file of any other header is skipped with a note. A row without a `set`
 * column is calibration. A case the models cannot give a figure for (the
 * scenario does not load, the plan does not fit, an unknown failure
 * profile) is reported with no result and the reason; a malformed row
 * (a column missing, a number that is not one, an unknown metric) is bad
 * input.
 */
#ifndef CT_PLAN_PUBLISHED_H
#define CT_PLAN_PUBLISHED_H

#include <stddef.h>

#include "reports/published_report.h"

typedef struct published_filter {
    int kind;                        /* a pubrep_kind, or -1: every kind */
    const char *set;                 /* "calibration", "heldout", or NULL: every set */
} published_filter;

/* Replay the CSVs of dir (in name order) into out (cases and notes; the
 * caller summarises and frees). Returns PLAN_OK, PLAN_BAD_INPUT with err
 * "PATH:LINE: ..." (a malformed row, an unreadable folder or file), or
 * PLAN_FAILED (out of memory). */
int published_run(const char *dir, const published_filter *flt, pubrep *out, char *err, size_t errlen);

#endif
