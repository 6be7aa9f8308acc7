/*
 * serving_chunk: what chunked attention's layers read in decode, kept
 * exactly without visiting the decoding sequences.
 *
 * A model with chunked local attention (llm attn-chunked: Llama 4's
 * attention_chunk_size C) reads, on a chunked layer, only the keys of the
 * current token's own chunk: ((p - 1) mod C) + 1 for a sequence whose
 * context (cache with the new token) is p. A window's read, min(p, W),
 * can be taken from the batch's mean context; a chunk's cannot, because
 * the remainder is not linear in p: a batch whose contexts all sit just
 * past a chunk boundary reads next to nothing however long they are.
 *
 * With p = base + i in iteration i (sim/serving_int.h), and base - 1 = q·C
 * + r (0 <= r < C):
 *
 *   Σ ((p - 1) mod C) + 1 = (S + n·i) - C·F,
 *   F = Σ floor((base - 1 + i) / C) = Σq + n·floor(i / C) + #{r >= C - (i mod C)}
 *
 * over the n sequences of Σ base S. A Fenwick tree over r answers the
 * count in O(log C); a sequence entering or leaving decode costs the same.
 */
#include "sim/serving_int.h"

#include <stdlib.h>
#include <string.h>

#include "models/transformer.h"

int sv_chunk_init(mstate *ms, const llm_spec *m) {
    ms->chunk = 0;
    if (!m->attn_chunked || m->attn_window <= 0 || tf_windowed_layers(m) == 0) return 0;
    ms->cfw = calloc((size_t)m->attn_window + 1, sizeof *ms->cfw);
    if (!ms->cfw) return -1;
    ms->chunk = m->attn_window;
    return 0;
}

static int64_t floor_div(int64_t a, int64_t b) { return (a - imod(a, b)) / b; }

void sv_chunk_put(mstate *ms, int64_t base, int sign) {
    if (!ms->chunk) return;
    int64_t r = imod(base - 1, ms->chunk);
    ms->cq += sign * floor_div(base - 1, ms->chunk);
    ms->cn += sign;
    for (int64_t k = r + 1; k <= ms->chunk; k += k & -k) ms->cfw[k] += sign;
}

void sv_chunk_clear(mstate *ms) {
    if (!ms->chunk) return;
    memset(ms->cfw, 0, ((size_t)ms->chunk + 1) * sizeof *ms->cfw);
    ms->cq = ms->cn = 0;
}

/* Sequences whose r is below t (0 <= t <= C). */
static int64_t below(const mstate *ms, int64_t t) {
    int64_t c = 0;
    for (int64_t k = t; k > 0; k -= k & -k) c += ms->cfw[k];
    return c;
}

double sv_chunk_keys(const mstate *ms, int64_t S, int64_t it) {
    if (!ms->chunk) return -1;
    int64_t C = ms->chunk, n = ms->cn, i0 = imod(it, C);
    int64_t F = ms->cq + n * floor_div(it, C) + (n - below(ms, C - i0));
    return (double)(S + n * it) - (double)C * (double)F;
}
