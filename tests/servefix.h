/*
 * servefix: a serving model of the built-in catalog for the serving tests
 * (test_serving, test_serving_model, test_serving_spec): an LLM preset on a
 * node type's GPU and fabric with tp and ep, the weight precision's default
 * KV precision, a token budget of 8192. A model that does not build fails the calling
 * cmocka test. Also the time of a decode-only and of a prefill-only
 * iteration. Include after <cmocka.h> and tests/catalogfix.h.
 */
#ifndef CT_TEST_SERVEFIX_H
#define CT_TEST_SERVEFIX_H

#include "models/serving.h"

/* As layout_on_params, with what fp4 weights mean (fmt) and the KV
 * cache's precision (kv) given. */
static inline serve_model layout_fmt_on(const llm_spec *m, const char *node_type, int tp, int ep, precision w,
                                        fp4_recipe fmt, precision kv, const serve_params *p) {
    const node_spec *nd = catalog_node(cat, node_type);
    fabric f;
    assert_int_equal(fabric_init(&f, cat, nd, 1), 0);
    serve_layout lay = { tp, ep, fmt };
    serve_model sm;
    char why[256];
    if (serve_model_init_layout(&sm, m, catalog_gpu(cat, nd->gpu), &f, &lay, w, kv, 8192, p, why, sizeof why) != 0)
        fail_msg("%s on %s tp %d ep %d: %s", m->name, node_type, tp, ep, why);
    return sm;
}

/* As layout_on, with the serving parameters p (NULL: the defaults), as the
 * simulator builds a replica's model with its engine's figures. */
static inline serve_model layout_on_params(const llm_spec *m, const char *node_type, int tp, int ep, precision w,
                                           const serve_params *p) {
    return layout_fmt_on(m, node_type, tp, ep, w, FP4_NVFP4, serve_default_kv(w), p);
}

static inline serve_model layout_on(const llm_spec *m, const char *node_type, int tp, int ep, precision w) {
    return layout_on_params(m, node_type, tp, ep, w, NULL);
}

/* The preset `llm` on one node of node_type, tensor parallel over tp GPUs. */
static inline serve_model preset_on(const char *llm, const char *node_type, int tp, precision w) {
    return layout_on(catalog_llm(cat, llm), node_type, tp, 1, w);
}

/* One decode iteration of seqs sequences of ctx tokens each. */
static inline double decode_s(const serve_model *sm, double seqs, double ctx) {
    serve_batch b = { 0 };
    b.decode_seqs = seqs;
    b.decode_ctx = seqs * ctx;
    return serve_iter_s(sm, &b, NULL);
}

/* One iteration prefilling a whole prompt of `tokens`. */
static inline double prefill_s(const serve_model *sm, double tokens) {
    serve_batch b = { 0 };
    b.prefill_tokens = tokens;
    b.prefill_pairs = serve_chunk_pairs(tokens, 0);
    b.prefill_done = 1;
    return serve_iter_s(sm, &b, NULL);
}

#endif
