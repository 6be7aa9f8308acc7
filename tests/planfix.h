/*
 * planfix: the training plan the model tests start from: tp x pp x dp GPUs,
 * no context parallelism, micro-batches of one sequence, the given global
 * batch, sequence length and precision. Every other field is zero (no
 * sharding, no recomputation, 1F1B; sequence parallelism and attention
 * kernels 0, i.e. off, until a test sets them to -1 for "the stack's").
 */
#ifndef CT_TEST_PLANFIX_H
#define CT_TEST_PLANFIX_H

#include <string.h>

#include "models/train_plan.h"

static inline train_plan planfix(int tp, int pp, int dp, int global_batch, int seq_len, precision prec) {
    train_plan p;
    memset(&p, 0, sizeof p);
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.cp = 1;
    p.global_batch = global_batch;
    p.micro_batch = 1;
    p.seq_len = seq_len;
    p.precision = prec;
    return p;
}

#endif
