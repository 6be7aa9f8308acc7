/*
 * train_auto: the plan the twin chooses for a training job that names none
 * (see train_auto.c for the search).
 */
#ifndef CT_TRAIN_AUTO_H
#define CT_TRAIN_AUTO_H

#include <stddef.h>

#include "models/collective.h"
#include "models/training.h"

/* The first plan, in the order (tp, pp) = (1,1) (2,1) (4,1) (8,1) (8,2) ...
 * (8,16) with tp at most node_gpus, that divides gpus, fits the model's
 * heads and layers, passes train_plan_check and fits in memory on fabric f:
 * FSDP, BF16, selective recompute, sequences of min(max context, 4096)
 * tokens, about 4M tokens per step. Returns 0 with *out set, or -1 with why
 * saying what was tried. */
int train_auto_plan(const llm_spec *m, const fabric *f, int node_gpus, int gpus, train_plan *out, char *why,
                    size_t len);

#endif
