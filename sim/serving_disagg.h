/*
 * serving_disagg: a disaggregated service (docs/disaggregated-serving.md),
 * private to sim/serving*.c like serving_int.h.
 *
 * Two pools, each a serving struct of its own (serving_int.h) built by
 * serving.c from a copy of the service's <inference> with the pool's
 * replicas, tp, ep, max-batch and token budget:
 *
 *   prefill (SV_PREFILL)  the front: the world holds it; it draws the
 *                         arrivals, prefills prompts, samples the first
 *                         token (TTFT) and measures every request
 *   decode  (SV_DECODE)   no arrivals; admits requests whose KV cache has
 *                         arrived and decodes them, never interrupted by a
 *                         prompt (a request it must recompute after a
 *                         preemption or a lost replica is prefilled there)
 *
 * A prompt done on a prefill replica leaves its running list (RQ_SENT), its
 * blocks held there until the copy ends; the decode replica chosen is the
 * ready one least loaded by KV cache (in use, on its way and waiting, over
 * capacity); the copy takes models/serving_kv.h's time over NVLink when
 * the host says both replicas share an NVLink domain, else over the NICs;
 * then the request waits in that replica's queue with its cache
 * (kv_arrived) and decodes from its next iteration with room.
 *
 * The world sees one service: the decode pool's GPUs are asked of the same
 * host under tags offset by SV_DECODE_TAG (serving.c's serving_granted and
 * serving_replica_lost hand those to the decode pool), the host is told the
 * service finished when the decode pool has, after the prefill pool, and
 * serving_close merges the pools' figures into the front's result.
 *
 * Calls: serving.c builds the pools and closes them through
 * sv_disagg_new/attach/close/free; serving_batch.c hands a prompt over with
 * sv_disagg_send and tells of an admission with sv_disagg_admitted. This
 * file calls the router, replicas, pool and core below it.
 */
#ifndef CT_SERVING_DISAGG_H
#define CT_SERVING_DISAGG_H

#include "models/collective.h"
#include "sim/serving_int.h"

#define SV_DECODE_TAG (1 << 24)     /* host tags of decode replicas: their index + this */
#define XFER_BLOCK 1024             /* transfer records per block (records never move) */

typedef struct sv_xfer {            /* one KV cache on its way */
    struct sv_disagg *dg;
    int32_t req;                    /* in the prefill pool */
    int32_t src, dst;               /* prefill replica; decode replica (-1: none was ready) */
    int32_t next_free;
    sim_time src_since;             /* the prefill replica's held_since when it sent */
    double dst_bytes;               /* what it will take of the decode replica's cache, per GPU */
} sv_xfer;

typedef struct sv_disagg {
    sc_inference cfg[2];            /* the pools' settings: the service's with each pool's numbers */
    serving *pool[2];               /* [0] prefill (the front), [1] decode */
    serving_host host;              /* the world's */
    serving_host pool_host[2];      /* what each pool is given */
    fabric f;
    int have_fabric;
    int prefill_finished;
    double *inflight, *queued;      /* per decode replica, bytes per GPU on their way / waiting */
    sv_xfer **blk;
    int n_blk;
    int32_t n_xfer, free_xfer;
    samples s_xfer;                 /* transfer times */
    double bytes_sum;
    int64_t n_nvlink, n_network;
} sv_disagg;

/* The link of a disaggregated service cfg (cfg->disaggregated) for the
 * world's host: the pools' settings and hosts; NULL when out of memory. */
sv_disagg *sv_disagg_new(const scenario *s, const sc_inference *cfg, const node_spec *node, const serving_host *host);
/* Both pools are built: set them up to work together; 0, or -1 when out of memory. */
int sv_disagg_attach(sv_disagg *dg, serving *prefill, serving *decode);
/* Prompt i of prefill replica r is done (its first token sampled at the
 * end of an iteration of iter_s seconds): send its KV cache on. */
void sv_disagg_send(replica *r, int32_t i, double iter_s);
/* Decode replica r admitted a request whose cache had arrived. */
void sv_disagg_admitted(replica *r, const req *q, double bytes);
/* After both pools' serving_close: the service's figures into the front's result. */
void sv_disagg_close(sv_disagg *dg);
/* The link and its records (not the pools). NULL is a no-op. */
void sv_disagg_free(sv_disagg *dg);

#endif
