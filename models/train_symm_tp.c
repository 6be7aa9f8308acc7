/*
 * train_symm_tp: TP collectives under PyTorch's symmetric-memory async TP
 * (see train_symm_tp.h).
 */
#include "models/train_symm_tp.h"

#include <math.h>

#include "models/gpu.h"
#include "models/train_moe.h"

/* One collective of t seconds decomposed with its GEMM: the tp-1 remote
 * chunks' copies each hide behind one chunk's GEMM at most, one chunk in
 * tp at least shows; *extra gets what the tp chunk GEMMs cost beyond the
 * whole GEMM. */
static double pipelined_s(const gpu_spec *g, const train_plan *p, const tf_gemm *gm, double t,
                          double *extra) {
    double tp = p->tp;
    double chunk = train_gemm_s(g, p, gm->m / tp, gm->n, gm->k);
    *extra = fmax(0, tp * chunk - train_gemm_s(g, p, gm->m, gm->n, gm->k));
    return fmax(t / tp, t - (tp - 1) * chunk);
}

void train_symm_tp_pass(const gpu_spec *g, const train_plan *p, const tf_gemm gm[4], double t_ag,
                        double t_rs, double act, symm_tp_pass *out) {
    double tp = p->tp;
    for (int kind = 0; kind < 2; kind++) out->exposed[kind] = out->extra[kind] = 0;
    for (int i = 0; i < 4; i++) {
        int rs = i % 2;          /* gm[0], gm[2] follow an all-gather; gm[1], gm[3] feed a reduce-scatter */
        double extra, rows = gm[i].m;
        out->exposed[rs] += pipelined_s(g, p, &gm[i], rs ? t_rs : t_ag, &extra);
        /* All-gather: the local shard (rows/tp of the GEMM's input width
         * k) read and written into the symmetric buffer. Reduce-scatter:
         * the tp partials of the local rows (all rows of the output width
         * n) read, their sum (rows/tp) written. */
        double bytes = rs ? rows * gm[i].n * act * (1 + 1 / tp) : 2 * rows / tp * gm[i].k * act;
        out->extra[rs] += extra + gpu_memory_s(g, bytes);
    }
}
