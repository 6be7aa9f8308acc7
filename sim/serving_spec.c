/*
 * serving_spec: speculative decoding on a service's replicas
 * (docs/speculative-decoding.md): the proposer of <speculative> (a draft
 * model on the replica's GPUs, or the target's own MTP or EAGLE head), the
 * memory it takes beside the target (weights; KV cache per token), and an
 * iteration's price, which models/serving_spec prices as 1/E of a step.
 * Calls nothing else of the service (the bottom of serving_int.h's order).
 */
#include "sim/serving_int.h"

#include <stdio.h>

/* The draft model of <speculative method="draft">: the same GPUs and tp
 * as the target (vLLM's draft_tensor_parallel_size defaults to the
 * target's), bf16 weights and KV cache, no expert parallelism. */
static int init_draft(serving *sv, const gpu_spec *g, const fabric *f, const serve_layout *lay,
                      const serve_params *p, char *err, size_t errlen) {
    const sc_inference *c = sv->cfg;
    const llm_spec *d = catalog_llm(sv->s->cat, c->spec_draft);
    serve_layout dl = { lay->tp, 1, lay->fp4 };
    char why[256];
    if (!d || serve_model_init_layout(&sv->spec_draft, d, g, f, &dl, PREC_BF16, PREC_BF16, sv->budget, p, why,
                                      sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <speculative draft-model=\"%s\">: %s", sv->s->file, c->spec_line, c->spec_draft,
                 d ? why : "unknown model");
        return -1;
    }
    sv->spec.draft = &sv->spec_draft;
    return 0;
}

int sv_spec_init(serving *sv, int m, const gpu_spec *g, const fabric *f, const serve_layout *lay,
                 const serve_params *p, char *err, size_t errlen) {
    const sc_inference *c = sv->cfg;
    int method = spec_method_parse(c->spec_method);
    if (method <= SPEC_NONE) return 0;
    serve_spec *sp = &sv->spec;
    sp->method = (spec_method)method;
    sp->k = c->spec_tokens;
    for (int i = 0; i < SPEC_MAX_TOKENS; i++) sp->accept[i] = c->spec_accept[i];
    if (sp->method == SPEC_DRAFT && init_draft(sv, g, f, lay, p, err, errlen) < 0) return -1;
    serve_model *sm = &sv->models[m];
    sm->weight_bytes += serve_spec_weight_bytes(sp, sm);
    sv->block_bytes[m] += serve_spec_kv_bytes_per_token(sp, sm) * sv->block;
    double e = serve_spec_expected_tokens(sp);
    snprintf(sv->res.spec_method, sizeof sv->res.spec_method, "%s", spec_method_name(sp->method));
    sv->res.spec_draft_tokens = sp->k;
    sv->res.spec_tokens_per_step = e;
    sv->res.spec_acceptance = (e - 1) / sp->k;
    return 0;
}

double sv_spec_tokens(const serving *sv) {
    return sv->spec.method == SPEC_NONE ? 1 : serve_spec_expected_tokens(&sv->spec);
}

double sv_spec_part_s(const serving *sv, int m, const serve_batch *b, double *dec_s) {
    return serve_spec_iter_s(&sv->spec, &sv->models[m], b, dec_s);
}
