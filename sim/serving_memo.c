/*
 * serving_memo: serve_tokens_s of each model, remembered in two halves.
 *
 * The part of an iteration's price that depends on two whole numbers only
 * (models/serving.h: linear layers, lm head, elementwise work, collectives,
 * launch gaps) splits into a half that depends on the tokens alone and a
 * half that depends on the rows of logits alone (serve_tokens_part,
 * serve_rows_part), added up by serve_tokens_sum exactly as serve_tokens_s
 * adds them: a remembered price is the same number as a new evaluation and
 * the results do not move.
 *
 * Each half is kept in a dense array indexed by its number, grown as
 * larger numbers come. The memo before this one kept every (tokens, rows)
 * pair in a hash table: the 1e7-request chat service of
 * tests/bench_serving.c met 300,907 distinct pairs, 8 MB of table, and one
 * lookup per iteration with a prompt was a random read of memory, 18% of
 * the run. The same service meets a few thousand token counts and at most
 * a few hundred row counts (the token budget and the batch bound them), so
 * the two arrays hold a few hundred KB that stay in the CPU's caches, and
 * each count is priced once instead of each pair. Counts past MEMO_DENSE_MAX
 * (a prompt longer than that, run alone without chunking) are priced
 * afresh each time: the same numbers, more work.
 */
#include "sim/serving_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* Room for entry k of a half-array of elem-byte entries, *cap of them
 * now; new entries are empty: all bytes 0xFF, a NaN in their first time
 * (a price that is itself NaN is priced again each time: the same number).
 * 0, or -1 when out of memory or past MEMO_DENSE_MAX (nothing changed). */
static int memo_room(void **v, size_t *cap, size_t elem, int64_t k) {
    if (k < 0 || k >= MEMO_DENSE_MAX) return -1;
    size_t old = *cap;
    if ((size_t)k < old) return 0;
    if (grow_array(v, cap, (size_t)k + 1, elem)) return -1;
    memset((char *)*v + old * elem, 0xFF, (*cap - old) * elem);
    return 0;
}

/* The two halves' sum for (tokens, rows), from the halves' arrays. */
static double tokens_sum(serving *sv, int m, int64_t tokens, int64_t rows) {
    const serve_model *sm = &sv->models[m];
    memo *c = &sv->memo[m];
    serve_tok_part tp_new, *tp = &tp_new;
    serve_row_part rp_new, *rp = &rp_new;
    if ((uint64_t)tokens < c->cap_tok || memo_room((void **)&c->tok, &c->cap_tok, sizeof *c->tok, tokens) == 0)
        tp = &c->tok[tokens];
    if (tp == &tp_new || isnan(tp->linear_s)) serve_tokens_part(sm, (double)tokens, tp);
    if ((uint64_t)rows < c->cap_row || memo_room((void **)&c->row, &c->cap_row, sizeof *c->row, rows) == 0)
        rp = &c->row[rows];
    if (rp == &rp_new || isnan(rp->lm_head_s)) serve_rows_part(sm, (double)rows, rp);
    return serve_tokens_sum(sm, tp, rp, NULL);
}

/* As many rows as tokens (a decode-only iteration, or the decode part of
 * one with prompts: two of every three calls in the 1e7-request run) is
 * looked up in one more array, the sum itself: the lookup of two halves
 * and their sum cost ~10 ns a call, ~6% of that run. */
double sv_tokens_s(serving *sv, int m, int64_t tokens, int64_t rows) {
    memo *c = &sv->memo[m];
    if (tokens != rows) return tokens_sum(sv, m, tokens, rows);
    if ((uint64_t)tokens < c->cap_same && !isnan(c->same[tokens])) return c->same[tokens];
    double t = tokens_sum(sv, m, tokens, rows);
    if (memo_room((void **)&c->same, &c->cap_same, sizeof *c->same, tokens) == 0) c->same[tokens] = t;
    return t;
}

int64_t sv_graph_batch(serving *sv, int m, int64_t n) {
    memo *c = &sv->memo[m];
    if ((uint64_t)n < c->cap_graph && c->graph[n] > 0) return c->graph[n];
    int64_t g = (int64_t)serve_graph_rows(&sv->models[m], (double)n);
    if (g > 0 && g <= INT32_MAX && memo_room((void **)&c->graph, &c->cap_graph, sizeof *c->graph, n) == 0)
        c->graph[n] = (int32_t)g;                  /* new entries are -1 (memo_room's 0xFF bytes): empty */
    return g;
}

void sv_memo_free(serving *sv) {
    for (int m = 0; sv->memo && m < sv->n_models; m++) {
        free(sv->memo[m].tok);
        free(sv->memo[m].row);
        free(sv->memo[m].same);
        free(sv->memo[m].graph);
    }
    free(sv->memo);
    sv->memo = NULL;
}
