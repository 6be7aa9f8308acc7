/*
 * training: time, FLOPs and memory of one training step of a decoder
 * transformer, dense or mixture-of-experts, under tensor, pipeline,
 * data/FSDP, context and expert parallelism (MoE layers: models/train_moe).
 *
 * Pure function of plain structs (the model architecture, the parallel plan
 * and the fabric); the simulator calls it once per job and then schedules
 * one event per step. Built from models/gpu (roofline per operation class),
 * models/transformer (FLOPs and bytes per layer), models/memory and
 * models/collective. The plan itself (types, names, defaults, checks) is
 * models/train_plan; this header includes it so a caller of train_step
 * needs only this one. Dependencies run one way:
 * training -> memory -> train_plan.
 */
#ifndef CT_TRAINING_H
#define CT_TRAINING_H

#include "models/catalog.h"
#include "models/collective.h"
#include "models/memory.h"
#include "models/train_plan.h"

/* Where the time of one step goes (seconds, sums to step_s). */
typedef struct step_breakdown {
    double compute_s;                /* forward + backward (+ recompute) kernels */
    double tp_comm_s;                /* exposed tensor- and context-parallel communication */
    double pp_bubble_s;              /* pipeline fill/drain + exposed p2p */
    double dp_comm_s;                /* exposed data-parallel / FSDP communication */
    double optimizer_s;              /* optimizer step */
    double other_s;                  /* launch overheads, embedding/loss, etc. */
    double ep_comm_s;                /* exposed expert-parallel all-to-all (MoE) */
} step_breakdown;

typedef struct train_result {
    double step_s;
    step_breakdown t;
    memory_breakdown mem;
    double params;                   /* model parameters (a MoE model: every expert) */
    double active_params;            /* parameters one token passes through (= params
                                        for a dense model); model FLOPs count these */
    int ep, etp;                     /* expert parallel and expert tensor parallel sizes */
    pp_schedule schedule;            /* the pipeline schedule run: 1f1b, interleaved, dualpipe */
    double tokens_per_step;
    double model_flops_per_step;     /* whole job, model FLOPs only (MFU basis) */
    double hw_flops_per_step;        /* whole job, including recomputed forward */
    double model_tflops_per_gpu;
    double hardware_tflops_per_gpu;
    double mfu;                      /* model TFLOP/s per GPU / peak of the precision */
    double tokens_per_s_per_gpu;
    int micro_batch;                 /* sequences per micro-batch used (resolves 0) */
    int micro_batches;               /* per pipeline per step */
    int fits;                        /* 1 when the memory fits the GPU */
    char why[256];                   /* when !fits: "needs 93.1 GB per GPU, ..." */
    int virtual_stages;              /* interleaving factor used (resolves v = 0) */
    int stage_layers;                /* layers on the busiest pipeline stage */
    double bubble_fraction;          /* pp_bubble_s / step_s */
    char stack[CATALOG_NAME_MAX];    /* the software stack's name (auto: the one it chose) */
} train_result;

/* Evaluate one step. Returns 0 (r filled; r->fits says whether memory
 * fits), or -1 on invalid input with r->why set. */
int train_step(const llm_spec *m, const train_plan *p, const fabric *f, train_result *r);

/* As train_step with explicit model parameters (q NULL: the defaults). */
int train_step_with(const llm_spec *m, const train_plan *p, const fabric *f,
                    const train_params *q, train_result *r);

#endif
