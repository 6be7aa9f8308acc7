/*
 * train_auto: the plan of a training job that names none (a job of a job
 * trace gives only its model and GPU count). FSDP over data parallel first;
 * tensor parallel inside the node, then pipeline stages, when the model
 * does not fit; the first shape whose step fits in memory wins. A pure
 * function of the model, the fabric and the GPU count, like the rest of
 * models/.
 */
#include "models/train_auto.h"

#include <math.h>
#include <stdio.h>

int train_auto_plan(const llm_spec *m, const fabric *f, int node_gpus, int gpus, train_plan *out, char *why,
                    size_t len) {
    static const int shapes[][2] = { { 1, 1 }, { 2, 1 }, { 4, 1 }, { 8, 1 }, { 8, 2 }, { 8, 4 }, { 8, 8 }, { 8, 16 } };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int tp = shapes[i][0], pp = shapes[i][1];
        if (tp > node_gpus || gpus % (tp * pp) != 0 || m->heads % tp != 0 || m->layers < pp) continue;
        train_plan p = { 0 };
        p.tp = tp;
        p.pp = pp;
        p.cp = 1;
        p.dp = gpus / (tp * pp);
        p.sharding = SHARD_FSDP;
        p.seq_len = m->max_context < 4096 ? m->max_context : 4096;
        p.precision = PREC_BF16;
        p.recompute = RECOMPUTE_SELECTIVE;
        p.sequence_parallel = -1;
        p.attn_unfused = -1;
        /* About 4M tokens per step, at least one sequence per replica and
         * enough micro-batches to fill a pipeline. */
        int per = (int)ceil((4 << 20) / (double)p.seq_len / p.dp);
        if (pp > 1 && per < 4 * pp) per = 4 * pp;
        p.global_batch = p.dp * (per > 0 ? per : 1);
        train_plan_defaults(&p);
        if (train_plan_check(m, &p, why, len) < 0) continue;
        train_result r;
        if (train_step(m, &p, f, &r) < 0 || !r.fits) continue;
        *out = p;
        return 0;
    }
    snprintf(why, len, "no plan of %s on %d GPUs fits in memory (tried FSDP with tp up to 8 and pp up to 16)",
             m->name, gpus);
    return -1;
}
