/*
 * serving_kv: the KV cache hand-off of disaggregated serving (serving_kv.h
 * says what is modelled and from which sources).
 */
#include "models/serving_kv.h"

#include <math.h>

#include "models/transformer.h"

double serve_kv_transfer_bytes(const serve_model *s, double tokens) {
    if (!s || !(tokens >= 0)) return -1;
    return tf_kv_cache_elems(&s->m, tokens) * serve_elem_bytes(s->kv, s->fp4);
}

double serve_kv_transfer_s(const fabric *f, double bytes, const serve_kv_link *l) {
    if (!l || l->src_gpus < 1 || l->dst_gpus < 1 || (l->layerwise && l->layers < 1) || !(bytes >= 0)) return -1;
    int links = l->src_gpus < l->dst_gpus ? l->src_gpus : l->dst_gpus;
    /* an NVLink domain of one GPU has no NVLink: the NICs carry it */
    int nvlink = l->same_domain && fabric_domain_gpus(f) >= 2;
    double t = p2p_time_s(f, bytes / links, nvlink, links);
    if (t < 0 || !l->layerwise) return t;
    double last = t / l->layers, rest = t - (l->overlap_s > 0 ? l->overlap_s : 0);
    return rest > last ? rest : last;
}
