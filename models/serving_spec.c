/*
 * serving_spec: the cost and the expected tokens of a speculative decoding
 * step (serving_spec.h; docs/speculative-decoding.md).
 */
#include "models/serving_spec.h"

#include <string.h>

int spec_method_parse(const char *s) {
    if (!s) return -1;
    return !strcmp(s, "draft") ? SPEC_DRAFT : !strcmp(s, "mtp") ? SPEC_MTP : !strcmp(s, "eagle") ? SPEC_EAGLE : -1;
}

const char *spec_method_name(spec_method m) {
    return m == SPEC_DRAFT ? "draft" : m == SPEC_MTP ? "mtp" : m == SPEC_EAGLE ? "eagle" : "none";
}

double serve_spec_expected_tokens(const serve_spec *sp) {
    double e = 1, run = 1;
    for (int i = 0; sp && i < sp->k && i < SPEC_MAX_TOKENS; i++) {
        run *= sp->accept[i];
        e += run;
    }
    return e;
}

double serve_spec_fixed_acceptance(double tokens, int k) {
    serve_spec sp = { SPEC_EAGLE, k < 1 ? 1 : k > SPEC_MAX_TOKENS ? SPEC_MAX_TOKENS : k, { 0 }, NULL };
    double lo = 0, hi = 1;
    for (int it = 0; it < 60; it++) {          /* E grows with a: halve [lo, hi] to 1e-18 */
        double a = (lo + hi) / 2;
        for (int i = 0; i < sp.k; i++) sp.accept[i] = a;
        if (serve_spec_expected_tokens(&sp) < tokens) lo = a;
        else hi = a;
    }
    return (lo + hi) / 2;
}

double serve_spec_weight_bytes(const serve_spec *sp, const serve_model *t) {
    if (!sp || sp->method == SPEC_NONE) return 0;
    return sp->method == SPEC_DRAFT ? sp->draft->weight_bytes : t->layer_weight_bytes;
}

double serve_spec_kv_bytes_per_token(const serve_spec *sp, const serve_model *t) {
    if (!sp || sp->method == SPEC_NONE) return 0;
    return sp->method == SPEC_DRAFT ? sp->draft->kv_bytes_per_token : t->kv_bytes_per_token / t->layers;
}

/* One forward pass of the proposer over `tokens` tokens sampling `rows`
 * rows, with prefill_pairs (query, key) pairs of prompt attention and the
 * decode reads of ctx cached tokens over seqs sequences. A head (mtp,
 * eagle) is one layer of the target: a layer's share of the target's
 * layer work and the whole lm head. */
static double propose_pass_s(const serve_spec *sp, const serve_model *t, double tokens, double rows,
                             double prefill_pairs, double prefill_tiles, double ctx, double seqs) {
    if (tokens <= 0) return 0;
    if (sp->method == SPEC_DRAFT)
        return serve_tokens_s(sp->draft, tokens, rows, NULL) +
               serve_context_s(sp->draft, prefill_pairs, prefill_tiles, ctx, seqs, NULL);
    serve_breakdown bd;
    memset(&bd, 0, sizeof bd);
    double all = serve_tokens_s(t, tokens, rows, &bd) +
                 serve_context_s(t, prefill_pairs, prefill_tiles, ctx, seqs, NULL);
    return (all - bd.lm_head_s) / t->layers + bd.lm_head_s;
}

/* (query, key) pairs of the k guesses beyond the first query of each
 * sequence: guess i attends to the sequence's context and i more keys. */
static double guess_pairs(double k, double seqs, double ctx) { return k * ctx + seqs * k * (k + 1) / 2; }

/* The verification of a decode batch together with `pre` prompt tokens
 * (pre_pairs, pre_rows): one target pass of (k+1)·seqs + pre tokens. The
 * first query of each sequence reads its cache as decode does; the k
 * guesses add their attention FLOPs. */
static double verify_s(const serve_spec *sp, const serve_model *t, double seqs, double ctx, double pre,
                       double pre_pairs, double pre_tiles, double pre_rows) {
    double k = sp->k, v = seqs * (k + 1);
    return serve_tokens_s(t, v + pre, v + pre_rows, NULL) +
           serve_context_s(t, pre_pairs + (seqs > 0 ? guess_pairs(k, seqs, ctx) : 0), pre_tiles, ctx, seqs, NULL);
}

double serve_spec_step_s(const serve_spec *sp, const serve_model *t, double seqs, double ctx) {
    if (seqs <= 0) return 0;
    return sp->k * propose_pass_s(sp, t, seqs, seqs, 0, 0, ctx, seqs) + verify_s(sp, t, seqs, ctx, 0, 0, 0, 0);
}

double serve_spec_iter_s(const serve_spec *sp, const serve_model *t, const serve_batch *b, double *dec_s) {
    double n = b->decode_seqs, c = b->decode_ctx;
    double step = serve_spec_step_s(sp, t, n, c), pre = 0;
    if (b->prefill_tokens > 0) {
        /* the proposer prefills the prompts too; the prompt tokens share
         * the verification's pass, and their cost is what they add to it */
        double own = propose_pass_s(sp, t, b->prefill_tokens, b->prefill_done, b->prefill_pairs,
                                    b->prefill_tiles, 0, 0);
        double full = verify_s(sp, t, n, c, b->prefill_tokens, b->prefill_pairs, b->prefill_tiles, b->prefill_done);
        double alone = n > 0 ? verify_s(sp, t, n, c, 0, 0, 0, 0) : 0;
        pre = own + (full > alone ? full - alone : 0);
    }
    double dec = step / serve_spec_expected_tokens(sp);
    if (dec_s) *dec_s = dec;
    return pre + dec;
}
