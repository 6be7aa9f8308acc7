/*
 * bench_training: cost of one evaluation of the training step model for a
 * 16K-GPU job, which the simulator and `sweep` call once per plan.
 *
 * The plan is Llama 3 405B on 16,384 H100s (The Llama 3 Herd of Models,
 * Table 4: TP 8, PP 16, DP 128, FSDP, 8K sequences, 2048 per batch) with the
 * interleaving factor left to the model (virtual_stages 0), the most
 * expensive setting: the model tries every v and the memory of each.
 * Target: at most 1000 us per evaluation. The figure is the best of 5
 * repetitions of a timed loop (the first warms caches).
 *
 * Output, and exit status 1 when over target:
 *   training step model 16384 GPUs: 3.2 us per evaluation (target <= 1000 us) ok
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "models/catalog.h"
#include "models/collective.h"
#include "models/training.h"
#include "scenarios/catalog_xml.h"

#define TARGET_US 1000.0
#define REPS 5
#define ITERS 2000

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
    char err[512];
    catalog *cat = catalog_new();
    if (!cat || catalog_load_builtin(cat, err, sizeof err) < 0) {
        fprintf(stderr, "bench_training: catalog: %s\n", cat ? err : "out of memory");
        catalog_free(cat);
        return 1;
    }
    const node_spec *node = catalog_node(cat, "dgx-h100");
    const llm_spec *m = catalog_llm(cat, "llama3-405b");
    fabric f;
    if (!node || !m || fabric_init(&f, cat, node, 16384 / node->gpus) < 0) {
        fprintf(stderr, "bench_training: dgx-h100 or llama3-405b missing from the catalog\n");
        catalog_free(cat);
        return 1;
    }
    train_plan p = { 0 };
    p.tp = 8;
    p.pp = 16;
    p.dp = 128;
    p.cp = 1;
    p.sharding = SHARD_FSDP;
    p.global_batch = 2048;
    p.micro_batch = 1;
    p.seq_len = 8192;
    p.precision = PREC_BF16;
    p.recompute = RECOMPUTE_SELECTIVE;
    p.sequence_parallel = 1;
    p.virtual_stages = 0;
    train_plan_defaults(&p);

    train_result r;
    double best = 1e30, sink = 0;
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = now_s();
        for (int i = 0; i < ITERS; i++) {
            p.global_batch = 2048 + (i & 1) * 1024;   /* defeat any caching of the answer */
            if (train_step(m, &p, &f, &r) < 0) {
                fprintf(stderr, "bench_training: train_step: %s\n", r.why);
                catalog_free(cat);
                return 1;
            }
            sink += r.step_s;
        }
        double us = (now_s() - t0) / ITERS * 1e6;
        if (us < best) best = us;
    }
    int ok = best <= TARGET_US;
    printf("training step model 16384 GPUs: %.1f us per evaluation (target <= %.0f us) %s\n", best,
           TARGET_US, ok ? "ok" : "SLOW");
    if (sink < 0) printf("%g\n", sink);    /* keep the loop */
    catalog_free(cat);
    return ok ? 0 : 1;
}
