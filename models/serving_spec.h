/*
 * serving_spec: speculative decoding in a serving iteration
 * (docs/speculative-decoding.md).
 *
 * Each decode step a proposer guesses k tokens per sequence and the
 * target model checks them in one forward pass of k+1 tokens per
 * sequence (the last accepted token and the k guesses); the step keeps
 * the guesses up to the first rejected one plus the target's own token.
 * The proposer is
 *
 *   draft   a smaller model of the catalog, run k times (one token per
 *           sequence each), with its own weights and KV cache (vLLM
 *           method "draft_model", SGLang "STANDALONE")
 *   mtp     the target's own multi-token-prediction module (llm_spec
 *           mtp_depth, DeepSeek-V3), run k times as TensorRT-LLM's "MTP
 *           Eagle" path and vLLM's "mtp" reuse it: one layer of the target
 *           plus the shared lm head per token
 *   eagle   an EAGLE head (EAGLE-1/3: one decoder layer of the target's
 *           width on the target's features, the target's lm head), priced
 *           as mtp; chain drafts only (no token tree)
 *
 * Expected tokens a step gives a sequence, with a_i the probability that
 * the i-th guess is accepted given the ones before it were (Leviathan,
 * Kalman and Matias 2023, "Fast Inference from Transformers via
 * Speculative Decoding", ICML, eq. 1 for a fixed a; the per-position form
 * is its product over positions):
 *
 *   E = 1 + sum_{i=1..k} prod_{j<=i} a_j     (fixed a: (1 - a^(k+1)) / (1 - a))
 *
 * The step costs the proposals plus the verification. The verification
 * is a forward pass of (k+1)·batch tokens: at batch 1 decode is bound by
 * reading the weights, so k more tokens cost little; at large batch it is
 * compute-bound and costs about k+1 decode steps, so the speed-up shrinks
 * below 1 (docs/speculative-decoding.md shows both).
 *
 * Deterministic: progress is the expectation. A simulated iteration gives
 * every decoding sequence one token, so a speculative service prices an
 * iteration as 1/E of a step (serve_spec_iter_s); the simulator's token
 * accounting is unchanged and no draw is made.
 *
 * Pure functions of plain structs, no I/O.
 */
#ifndef CT_SERVING_SPEC_H
#define CT_SERVING_SPEC_H

#include "models/serving.h"

#define SPEC_MAX_TOKENS 16         /* guesses per step at most (vLLM and SGLang use 1-8) */

typedef enum spec_method { SPEC_NONE = 0, SPEC_DRAFT, SPEC_MTP, SPEC_EAGLE } spec_method;

/* "draft", "mtp", "eagle"; -1 for anything else. */
int spec_method_parse(const char *s);
const char *spec_method_name(spec_method m);

typedef struct serve_spec {
    spec_method method;
    int k;                             /* guesses per step, 1..SPEC_MAX_TOKENS */
    double accept[SPEC_MAX_TOKENS];    /* a_i, each in [0, 1] */
    const serve_model *draft;          /* SPEC_DRAFT: the draft on the target's GPUs; else NULL */
} serve_spec;

/* E above: tokens per sequence per step, in [1, k+1]. */
double serve_spec_expected_tokens(const serve_spec *sp);

/* The fixed per-position acceptance a with E(a, k) = tokens (bisection;
 * tokens in [1, k+1]), for sources that report a mean accepted length. */
double serve_spec_fixed_acceptance(double tokens, int k);

/* Bytes per GPU the proposer adds: weights, and KV cache per token of
 * context (draft: its own model; mtp and eagle: one layer of the target). */
double serve_spec_weight_bytes(const serve_spec *sp, const serve_model *target);
double serve_spec_kv_bytes_per_token(const serve_spec *sp, const serve_model *target);

/* Seconds of one speculative step of a decode-only batch of `seqs`
 * sequences holding `ctx` cached tokens in all: k proposals and the
 * verification of (k+1)·seqs tokens. */
double serve_spec_step_s(const serve_spec *sp, const serve_model *target, double seqs, double ctx);

/* One simulated iteration of batch b on a speculative service: the prompt
 * chunks (with the proposer's own prefill of them) and 1/E of a step of
 * b's decoding sequences. *dec_s (may be NULL) is the decode part. */
double serve_spec_iter_s(const serve_spec *sp, const serve_model *target, const serve_batch *b, double *dec_s);

#endif
