/*
 * serving_kv: moving a prompt's KV cache from the replica that prefilled it
 * to the replica that decodes it (disaggregated serving,
 * docs/disaggregated-serving.md). Pure functions of plain structs.
 *
 * Bytes: the cache of the prompt's tokens as the model keeps it
 * (tf_kv_cache_elems: K and V of every layer, sliding windows applied, MLA's
 * latent) at the KV element precision; once, not per tensor-parallel rank
 * (a tp wider than the KV heads replicates them on the prefill side; the
 * decode side rebuilds its replicas from one copy).
 *
 * Time: the prefill replica's GPUs each send their shard at once, so the
 * cache crosses min(prefill GPUs, decode GPUs) links in parallel, each a
 * point-to-point transfer of models/collective.h (p2p_time_s: NVLink inside
 * one NVLink domain, else the NICs, sharing the node's NICs among the
 * concurrent links). "after": the whole cache moves once the prompt has run
 * (DistServe's decode instances pull it after prefill; Dynamo's NIXL and
 * vLLM's KV connectors send it at the end of the request's prefill).
 * "layerwise": each layer's cache is sent as soon as the layer is computed
 * (Splitwise), so all but the last layer's share hides behind the prompt's
 * own compute: exposed = max(t / layers, t - overlap_s).
 */
#ifndef CT_SERVING_KV_H
#define CT_SERVING_KV_H

#include "models/collective.h"
#include "models/serving.h"

/* Bytes of the KV cache of `tokens` tokens of model s. */
double serve_kv_transfer_bytes(const serve_model *s, double tokens);

typedef struct serve_kv_link {
    int src_gpus, dst_gpus;         /* GPUs of the sending and receiving replicas */
    int same_domain;                /* 1: both in one NVLink domain */
    int layerwise;                  /* 1: layer by layer behind the prompt's compute */
    int layers;                     /* the model's layers (layerwise) */
    double overlap_s;               /* layerwise: compute the transfer can hide behind */
} serve_kv_link;

/* Seconds the decode replica waits for `bytes` of KV cache after the prompt
 * ends; -1 on invalid input (p2p_time_s's, or GPUs or layers below 1). */
double serve_kv_transfer_s(const fabric *f, double bytes, const serve_kv_link *l);

#endif
