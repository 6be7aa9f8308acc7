/*
 * serving_int: the state the serving files share (private to sim/serving*.c;
 * serving.h says what a service does, this header how it is held).
 *
 * The files call each other in this order only: a file may call those
 * below it, never one above.
 *
 *   serving.c            the public entry points: building a service, the
 *                        host's calls, closing and freeing it
 *   serving_autoscale.c  the autoscaler
 *   serving_batch.c      one batch iteration: admit, price, preempt, complete
 *   serving_disagg.c     a disaggregated service's KV hand-off to its decode
 *                        pool (serving_disagg.h)
 *   serving_arrivals.c   request generation and trace replay
 *   serving_replica.c    replicas (GPUs from the host, start-up, loss), model
 *                        loads, and the end of the service
 *   serving_router.c     which ready replica a request goes to
 *   serving_prefix.c     the prefix cache: requests' prefixes, cached blocks
 *   serving_slo.c        request classes (draw, admission priority), each
 *                        request's SLO, the figures of each class and model
 *   serving_stats.c      latency samples, percentiles, ticks, energy and the results
 *   serving_pool.c       the request pool and each replica's finish heap
 *   serving_memo.c       the memo of serve_tokens_s
 *   serving_core.c       the service's events, the kick that starts an iteration,
 *                        room for big tables
 *   serving_spec.c       speculative decoding: the proposer, its memory, the step's price
 *
 * One call runs the other way: a replica that has work (a request routed
 * to it, a model loaded, its start-up done) starts its next iteration
 * through sv_kick, which calls the batch file's start_iteration through
 * the hook sv->start_iteration, set by serving_new.
 *
 * Functions one file offers the others carry the prefix sv_ and are
 * declared at the end of this header, by file.
 *
 *
 * Requests live in one pool (indices, never pointers, so the pool can
 * grow; a free list recycles slots: live requests are those waiting or
 * running, not all that ever arrived). A request is on exactly one list:
 *
 *   queue[model]    FIFO of waiting requests of a replica (next/prev links)
 *   swapped[model]  FIFO of sequences swapped to host memory
 *   running         all admitted sequences in admission order (youngest at
 *                   the tail: the first to preempt); prefilling ones are
 *                   also on the prefill FIFO (pnext/pprev)
 *
 * Decoding sequences are never visited per iteration. With i the
 * replica's iteration number, a sequence that first decodes in iteration j
 * with k tokens in its cache has context base + i in iteration i, where
 * base = k + 1 - j. Per (replica, model):
 *
 *   n_dec, S = Σ base       decode context of the batch = S + n_dec·i
 *   bucket[r], r = base mod B   sequences whose cache crosses into a new
 *                           block of B tokens in iteration i: bucket[(1-i) mod B]
 *   heap of finish iterations   j + (tokens still to generate) - 1
 *
 * so an iteration costs O(admitted + finished·log n + models), and 1M
 * requests of a few hundred tokens each take about a second of wall time.
 *
 * Offline arrivals are a backlog counter: a replica draws the next request
 * when it has room, so a million requests submitted at once cost no
 * memory until admitted.
 */
#ifndef CT_SERVING_INT_H
#define CT_SERVING_INT_H

#include <stdint.h>

#include "models/serving.h"
#include "models/serving_spec.h"
#include "scenarios/reqtrace.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/rng.h"
#include "sim/serving_prefix.h"
#include "sim/serving_types.h"

#define NIL (-1)
#define TICK_S 10.0                 /* metric samples every 10 simulated seconds */
#define TICK_LAT_N 1024             /* latencies kept per tick for its p99 (the most recent) */
#define RESERVOIR 4000000           /* latency samples kept per metric (exact below this) */
#define WATERMARK 0.01              /* on-demand admission keeps 1% of blocks free (vLLM default) */
#define MIN_KV_SHARE 0.10           /* a model is loaded only if the KV cache keeps this share of memory */
#define SCALE_TOLERANCE 0.10        /* no scaling within 10% of target (Kubernetes HPA default) */

/* RQ_SENT: a disaggregated service's prompt done, its KV cache on its way
 * to a decode replica (serving_disagg.c); on no list. */
enum { RQ_QUEUED, RQ_PREFILL, RQ_DECODE, RQ_SWAPPED, RQ_SENT };
/* What a serving struct is: a service, or one pool of a disaggregated one. */
enum { SV_COLOCATED, SV_PREFILL, SV_DECODE };
/* R_REQUESTED: asked the host (the cluster scheduler) for GPUs, not held yet. */
enum { R_STARTING, R_READY, R_DRAINING, R_STOPPED, R_REQUESTED };
enum { M_UNLOADED, M_LOADING, M_LOADED };

typedef struct req {
    sim_time t_arrive, t_first, t_admit;  /* -1: not yet */
    int64_t base;                  /* decode: context in iteration i is base + i */
    int64_t dec_start;             /* first decode iteration */
    int32_t input, output;
    int32_t prompt;                /* tokens to prefill: input, or input + gen after a recompute */
    int32_t prefilled;             /* prompt tokens in the cache; swapped: cache length */
    int32_t gen;                   /* tokens generated (as of decode entry while decoding) */
    int32_t blocks;                /* KV blocks held (reserve; prefill; swapped) */
    int32_t prev, next;            /* queue, swapped or running list */
    int32_t pprev, pnext;          /* prefill list */
    int16_t model;
    int16_t cls;                   /* request class (sc_inference.classes; 0 without) */
    uint8_t state;
    uint8_t admitted;              /* ever admitted (queue wait recorded) */
    int32_t pfx_ref;               /* leading cached blocks it uses (serving_prefix.c) */
    pfx_chain chain;               /* its prompt's prefix identity */
} req;

typedef struct list { int32_t head, tail; int64_t n; } list;

typedef struct mstate {            /* one model on one replica */
    int resident;
    sim_time last_used;
    list queue, swapped;
    int64_t running;               /* prefill + decode sequences */
    int64_t n_dec, S;
    int64_t ghost_n, ghost_S;      /* static batching: finished slots still computed */
    int64_t *bucket;               /* block_tokens entries */
    int64_t *cfw, cq, cn;          /* chunked attention (serving_chunk.c): Fenwick tree over
                                      (base - 1) mod chunk, Σ quotients, sequences */
    int32_t chunk;                 /* its chunk in tokens; 0: the model has none */
    serve_batch b;                 /* this iteration */
} mstate;

typedef struct chunk { int32_t r, c; } chunk;

/* An entry of a replica's finish heap: the request's finish iteration kept
 * beside its index, so the heap's comparisons read no request. */
typedef struct fin { int64_t iter; int32_t r; } fin;

typedef struct replica {
    struct serving *sv;
    int index;
    int state;
    int handle;
    sim_time held_since;
    int64_t iter;                  /* iterations completed */
    int busy, kick_pending;
    list running, prefill;
    fin *heap;
    int64_t heap_n;
    size_t heap_cap;
    chunk *ch;
    int n_ch;
    size_t cap_ch;
    int64_t produced;              /* tokens the current iteration produces */
    int prompt_only;               /* prefill-alone: the iteration in flight runs prompts only; its
                                      decoders wait and iter (the decode clock) stays */
    double kv_cap, kv_used;        /* bytes per GPU */
    double weights;                /* resident weights, bytes per GPU */
    double outstanding;            /* tokens still to process (router) */
    int loading;                   /* model being loaded, -1 none */
    event_id ev_load, ev_ready;    /* pending load / start-up; cancelled when the replica stops */
    event_id ev_iter;              /* the iteration in flight */
    double startup_s;              /* start-up once the GPUs are granted */
    double swap_s;                 /* swap time the next iteration carries */
    /* the iteration in flight by activity (the parts sum to its duration),
     * and when it started; the start-up or model load under way (-1 none) */
    double it_prefill_s, it_decode_s, it_copy_s;
    sim_time it_t0, load_t0;
    mstate *ms;
    pcache pc;                     /* its prefix cache (serving_prefix.c) */
    pcache tree;                   /* router="cache-aware": what the router has sent it (serving_router.c) */
} replica;

/* A conversation of <requests sessions=>: its prefix, what it has said so far. */
typedef struct pfx_session {
    uint64_t id;
    int64_t history;               /* tokens of its earlier turns (inputs and replies) */
    int turn;                      /* turns so far */
    int head;                      /* its shared prompt, -1 none */
} pfx_session;

/* Routing policies (<inference router=>, serving_router.c). */
enum { ROUTE_ROUND_ROBIN, ROUTE_LEAST_TOKENS, ROUTE_RANDOM, ROUTE_POWER_OF_TWO, ROUTE_PREFIX, ROUTE_KV, ROUTE_CACHE };

/* Latency samples: the first RESERVOIR exactly, then a reservoir (Vitter's
 * algorithm R). A reservoir's replacements wait in a short log of (slot,
 * value), written in their order when it is full (serving_stats.c says
 * why): read x only after sv_samples_flush. */
#define SAMPLES_LOG 32
typedef struct samples {
    double *x;
    size_t n, cap;
    int64_t seen;
    double sum;
    int log_n;
    uint32_t log_k[SAMPLES_LOG];
    double log_v[SAMPLES_LOG];
} samples;

/* The requests of one class or one multiplexed model (serving_slo.c). */
typedef struct sv_part {
    samples s_ttft, s_tpot, s_e2e, s_queue;
    int64_t slo_ok;
} sv_part;

/* serve_tokens_s of a model remembered in two halves (serving_memo.c):
 * by token count and by row count, dense arrays grown as larger counts
 * come, at most MEMO_DENSE_MAX entries each (beyond, priced afresh). */
#define MEMO_DENSE_MAX (1 << 19)    /* 524,288 tokens: at most 16 MB of token halves */
typedef struct memo {
    serve_tok_part *tok;           /* [tokens]; linear_s NaN: not priced yet */
    serve_row_part *row;           /* [rows]; lm_head_s NaN: not priced yet */
    size_t cap_tok, cap_row;
    double *same;                  /* [n]: the sum for n tokens and n rows; NaN: not yet */
    size_t cap_same;
    int32_t *graph;                /* [n]: serve_graph_batch of n decode sequences; 0: not yet */
    size_t cap_graph;
} memo;

/* A request length's law (serving_arrivals.c): kind, mean and cv as given,
 * and the parameters worked out from them (lognormal mu and sigma, gamma
 * shape and scale). */
typedef struct sv_len_law { int kind; double mean, cv, a, b; } sv_len_law;

struct serving {
    engine *e;
    metric_bus *bus;
    const scenario *s;
    const sc_inference *cfg;
    const node_spec *node;
    serving_host host;
    /* serving_batch.c's: compose and start replica r's next iteration, or
     * leave it idle (the hook sv_kick calls; set by serving_new) */
    void (*start_iteration)(replica *r);
    int n_models;
    serve_model *models;
    double *share_cum;             /* cumulative request shares */
    double *load_s;
    double *block_bytes;           /* per model, per GPU */
    memo *memo;                    /* per model */
    int block;                     /* tokens per block */
    int reserve, chunked, static_b, swap, router;
    int prefill_alone;             /* prompts in iterations of their own (vLLM V0; not with chunking) */
    int max_batch, budget;
    int rep_gpus;                  /* GPUs per replica: max(tp, ep) */
    double usable;                 /* per GPU: HBM - reserve - largest workspace */
    double kv_frac;
    replica *reps;
    int n_reps, cap_reps;
    int rr;
    sim_time tree_evict_at;        /* router="cache-aware": its next eviction pass (serving_router.c) */
    /* arrivals */
    rng *r_arr, *r_len, *r_mod, *r_res;
    int64_t target;                /* requests to generate; -1 unbounded (duration) */
    int64_t generated;
    sim_time t_start, t_stop;      /* arrivals window; t_stop SIM_FOREVER when none */
    int offline;
    int64_t backlog;               /* offline requests not drawn yet */
    reqtrace_row *trace;
    long n_trace;
    uint32_t *trace_blocks;        /* the trace's prefix block hashes (reqtrace_row.block_off); NULL: none */
    int64_t n_trace_blocks;
    int trace_block_tokens;        /* tokens per hashed block (Mooncake: 512); 0: none */
    int arrivals_done;
    int arrival_kind;              /* the process's ARR_ (serving_arrivals.c) */
    sv_len_law *len_law;           /* input and output of each class (or of <requests>) */
    int closed_loop;               /* process="closed": users send on completion */
    int think_exponential;         /* closed: think times drawn (think-distribution="exponential") */
    int64_t closed_pending;        /* closed: users thinking (a request scheduled, not sent) */
    /* prefix caching (serving_prefix.c) */
    int prefix_on;                 /* <inference prefix-caching="true"> */
    int pfx_block;                 /* tokens per hashed block: the trace's, else the KV block */
    rng *r_pfx, *r_route;          /* prefixes and conversations drawn; random routers */
    double *pfx_cum;               /* Zipf popularity of the shared prompts, cumulative; NULL uniform */
    int32_t *pfx_deck;             /* prefix-order shuffled|grouped: the k-th request's prompt; NULL drawn */
    int64_t pfx_deck_n, pfx_dealt; /* the deck's length (the service's count); requests dealt */
    pfx_session *sess;             /* <requests sessions=> conversations */
    uint64_t next_tail;            /* ids of conversations and lone requests */
    double prompt_tokens_admitted, prefill_tokens_saved;
    list pending;                  /* arrived, no ready replica yet */
    /* request pool */
    req *rq;
    int32_t n_rq, cap_rq, free_rq;
    int64_t in_system;
    /* results */
    samples s_ttft, s_tpot, s_e2e, s_queue;
    samples s_ttft_admit;          /* first token from admission */
    int64_t slo_ok;
    double batch_sum, kv_integral, busy_s, gpu_s, replica_s;
    double kv_peak;
    sim_time last_change;
    int active_reps;               /* replicas holding GPUs */
    sim_time first_arrival, last_completion;
    int64_t rejected;
    double tick_tokens;
    /* autoscaler */
    double ttft_sum_window;
    int64_t ttft_n_window;
    sim_time low_since;
    event_id ev_arrival, ev_tick, ev_scale;
    metric_id m_queue, m_running, m_replicas, m_kv, m_tps;
    /* the tick's TTFT and TPOT p99 (the dashboard's sparklines) */
    double tick_ttft[TICK_LAT_N], tick_tpot[TICK_LAT_N];
    int64_t tick_n_ttft, tick_n_tpot;
    metric_id m_ttft99, m_tpot99;
    int closed, finished;
    sim_time t_finished;
    service_result res;
    /* speculative decoding (serving_spec.c); spec.method SPEC_NONE: none */
    serve_spec spec;
    serve_model spec_draft;        /* method draft: the draft model on a replica's GPUs */
    /* disaggregated serving (serving_disagg.c): the pool this is, its
     * partner pool's link, and where completed requests are measured (the
     * service itself, or the prefill pool that stands for the service) */
    int role;
    struct sv_disagg *dg;
    struct serving *stats;
    /* request classes and each model's figures (serving_slo.c): parts are
     * the classes, then the models when there are several */
    rng *r_cls;                    /* class draws; NULL without classes */
    double *class_cum;             /* cumulative class shares */
    int prio_on;                   /* the classes' priorities differ: queues are ordered by them */
    sv_part *parts;
    service_part_result *part_res;
    int n_parts;
};

/* ---- small helpers ------------------------------------------------------ */

static inline sim_time now_of(const serving *sv) { return engine_now(sv->e); }

static inline int64_t imod(int64_t a, int64_t b) {
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

static inline int32_t blocks_for(const serving *sv, int64_t tokens) {
    return (int32_t)((tokens + sv->block - 1) / sv->block);
}

static inline void list_init(list *l) { l->head = l->tail = NIL; l->n = 0; }

static inline void list_push_back(req *rq, list *l, int32_t i) {
    rq[i].prev = l->tail;
    rq[i].next = NIL;
    if (l->tail != NIL) rq[l->tail].next = i;
    else l->head = i;
    l->tail = i;
    l->n++;
}

static inline void list_push_front(req *rq, list *l, int32_t i) {
    rq[i].next = l->head;
    rq[i].prev = NIL;
    if (l->head != NIL) rq[l->head].prev = i;
    else l->tail = i;
    l->head = i;
    l->n++;
}

static inline void list_remove(req *rq, list *l, int32_t i) {
    if (rq[i].prev != NIL) rq[rq[i].prev].next = rq[i].next;
    else l->head = rq[i].next;
    if (rq[i].next != NIL) rq[rq[i].next].prev = rq[i].prev;
    else l->tail = rq[i].prev;
    rq[i].prev = rq[i].next = NIL;
    l->n--;
}

static inline void plist_push(req *rq, list *l, int32_t i) {
    rq[i].pprev = l->tail;
    rq[i].pnext = NIL;
    if (l->tail != NIL) rq[l->tail].pnext = i;
    else l->head = i;
    l->tail = i;
    l->n++;
}

static inline void plist_remove(req *rq, list *l, int32_t i) {
    if (rq[i].pprev != NIL) rq[rq[i].pprev].pnext = rq[i].pnext;
    else l->head = rq[i].pnext;
    if (rq[i].pnext != NIL) rq[rq[i].pnext].pprev = rq[i].pprev;
    else l->tail = rq[i].pprev;
    rq[i].pprev = rq[i].pnext = NIL;
    l->n--;
}

/* KV capacity of a replica with resident weights w (bytes per GPU). */
static inline double kv_cap_for(const serving *sv, double w) {
    double c = sv->kv_frac * (sv->usable - w);
    return c > 0 ? c : 0;
}

static inline double min_kv(const serving *sv) { return MIN_KV_SHARE * sv->kv_frac * sv->usable; }

/* ---- serving_memo.c -------------------------------------------------------- */

/* serve_tokens_s of model m for (tokens >= 1, rows), remembered. */
double sv_tokens_s(serving *sv, int m, int64_t tokens, int64_t rows);
/* The tokens (and rows) a decode-only iteration of n >= 1 sequences of
 * model m runs: serve_graph_rows (per attention-DP rank), remembered. */
int64_t sv_graph_batch(serving *sv, int m, int64_t n);
void sv_memo_free(serving *sv);

/* ---- serving_spec.c -------------------------------------------------------- */

/* Speculative decoding of model m (the service's <speculative>): the
 * proposer built on the replica's GPUs, its weights and KV cache added to
 * the model's (after sv->block_bytes[m] is set, before the KV cache is
 * sized). 0 (also without <speculative>), or -1 with err. */
int sv_spec_init(serving *sv, int m, const gpu_spec *g, const fabric *f, const serve_layout *lay,
                 const serve_params *p, char *err, size_t errlen);
/* Tokens per sequence per speculative step (1 without speculation): a
 * simulated iteration is 1/this of a step. */
double sv_spec_tokens(const serving *sv);
/* Model m's part of an iteration under speculation (serve_spec_iter_s);
 * *dec_s its decode part. */
double sv_spec_part_s(const serving *sv, int m, const serve_batch *b, double *dec_s);
/* A waiting request whose KV cache came from a prefill pool: it decodes
 * at admission (a request that must be prefilled here has prefilled 0). */
static inline int kv_arrived(const req *q) { return q->prefilled > 0 && q->prefilled == q->prompt; }

/* ---- serving_core.c -------------------------------------------------------- */

/* A metric-bus event of the service (entity = its name). */
void sv_event(serving *sv, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Start the replica's next iteration at this instant, unless one is under way. */
void sv_kick(replica *r);
/* Room for a table of `bytes` read at random (free() gives it back), on
 * huge pages where the kernel offers them: a random read or write into
 * tens of MB of small pages misses the TLB as well as the caches (a 1e7-
 * request run: 9.0 -> 8.0 s, tests/bench_serving.c). Not cleared; NULL
 * when out of memory. */
void *sv_big_alloc(size_t bytes);

/* ---- serving_pool.c --------------------------------------------------------- */

int32_t sv_req_alloc(serving *sv);
void sv_req_free(serving *sv, int32_t i);
/* Decoding request i generates its last token in iteration finish_iter
 * (0, or -1 when out of memory). */
int sv_heap_push(replica *r, int32_t i, int64_t finish_iter);

/* Chunked attention's decode keys (serving_chunk.c). sv_chunk_init: 0, or
 * -1 out of memory (nothing to do for a model without chunked layers);
 * sv_chunk_put: a decoding sequence of that base enters (+1) or leaves
 * (-1) the sums; sv_chunk_clear: all leave; sv_chunk_keys: Σ over them of
 * the keys a chunked layer reads in iteration it, S their Σ base (-1: the
 * model has no chunks). */
int sv_chunk_init(mstate *ms, const llm_spec *m);
void sv_chunk_put(mstate *ms, int64_t base, int sign);
void sv_chunk_clear(mstate *ms);
double sv_chunk_keys(const mstate *ms, int64_t S, int64_t it);
/* The first to finish leaves the heap: its request. The heap is not empty. */
int32_t sv_heap_pop(replica *r);
/* Request i, which is in the heap, leaves it. */
void sv_heap_remove(replica *r, int32_t i);

/* ---- serving_prefix.c ------------------------------------------------------- */

/* Prefix caching of the service: its streams and conversations. 0, or -1
 * when out of memory. After sv_arrivals_init (a trace's block size). */
int sv_prefix_init(serving *sv);
void sv_prefix_free(serving *sv);
/* A generated request's prefix (<requests prefix-tokens= sessions=>) for
 * an input of `input` tokens; returns its prompt length (input plus the
 * shared prompt or the conversation so far). */
int sv_prefix_draw(serving *sv, int input, int output, int model, pfx_chain *ch);
/* A trace row's prefix: its block hashes, or its session. */
void sv_prefix_from_trace(const serving *sv, const reqtrace_row *row, pfx_chain *ch);
/* Leading blocks of q's prompt that r's cache holds (the router's score). */
int32_t sv_prefix_match(const replica *r, const req *q);
/* Whole blocks of q's prompt that may be cached, and the key of block k
 * (the cache-aware router's record of what it sent where). */
int32_t sv_prefix_blocks(const serving *sv, const req *q);
uint64_t sv_prefix_key(const serving *sv, const req *q, int32_t k);
/* Request i is admitted on r: it uses the cached blocks of its prompt's
 * longest cached prefix and prefills only the rest (prefilled, outstanding,
 * r->kv_used updated). Returns the bytes of its KV cache those blocks hold
 * (not to be allocated again). */
double sv_prefix_admit(replica *r, int32_t i);
/* Request i's prompt is computed: its blocks join the cache. */
void sv_prefix_insert(replica *r, int32_t i);
/* Request i leaves r's GPU (done: it completed): its cached blocks become
 * idle when no one else uses them. Returns the bytes they hold of its KV
 * cache (not to be freed again). */
double sv_prefix_release(replica *r, int32_t i, int done);
/* Evict idle cached blocks while they and the running requests exceed r's KV capacity. */
void sv_prefix_trim(replica *r);
/* r lost its GPUs: its cache is gone. */
void sv_prefix_lost(replica *r);

/* ---- serving_slo.c ---------------------------------------------------------- */

/* The classes' shares and stream, and the parts of the results (for a
 * service that measures: not a decode pool). 0, or -1 when out of memory. */
int sv_slo_init(serving *sv);
void sv_slo_free(serving *sv);
/* A new request's class, drawn by share (0 without classes: no draw). */
int sv_class_draw(serving *sv);
/* Request q arrived (submitted, input tokens of its class and model). */
void sv_slo_arrived(serving *sv, const req *q);
/* Request q completed now: its latencies (sv_stats_complete), whether it
 * met every bound of its class's SLO (the service's without classes), its
 * class's and model's samples. */
void sv_slo_request_done(serving *sv, const req *q);
/* After sv_stats_close: the parts' results over the service's span (first
 * arrival to last completion) into sv->res; with classes, sv->res.slo_met
 * is every class meeting its own percentile. */
void sv_slo_close(serving *sv);
/* Queue request i on l: at the tail, or with class priorities behind the
 * last request of its priority or a higher one. */
void sv_queue_push(serving *sv, list *l, int32_t i);
/* Whether waiting request a goes before b: higher class priority, then
 * earlier arrival. */
int sv_queue_before(const serving *sv, int32_t a, int32_t b);

/* ---- serving_stats.c -------------------------------------------------------- */

void sv_sample_add(serving *sv, samples *p, double v);
/* The replacements waiting in p's log written to p->x (before reading it). */
void sv_samples_flush(samples *p);
/* A request's latencies as it completes now: recorded in the service that
 * measures it, and given back (tpot_s -1 with one output token); its SLO
 * is judged by serving_slo.c's sv_slo_request_done, which calls this. */
void sv_stats_complete(serving *sv, const req *q, double *ttft_s, double *tpot_s, double *e2e_s);
void sv_integrate_reps(serving *sv);
/* p's median, p99 (selected in place, flushed first: base/select.h) and mean (-1 when none). */
void sv_samples_summary(samples *p, double *p50, double *p99, double *mean);
void sv_account_iteration(replica *r, int whole);
void sv_account_load(replica *r);
int64_t sv_waiting(const serving *sv);
void sv_on_tick(engine *e, void *arg);
/* Close the books (serving_close): time-weighted figures, percentiles,
 * energy and cost. Once; later calls do nothing. */
void sv_stats_close(serving *sv);

/* ---- serving_router.c ------------------------------------------------------- */

/* The ROUTE_ value of a router= name (the loader has checked it). */
int sv_router_kind(const char *name);
/* Send request i to a ready replica, or to the pending list when none is. */
void sv_route(serving *sv, int32_t i);
/* Send the pending requests to ready replicas while there are any. */
void sv_route_pending(serving *sv);
/* Replica r starts on new GPUs: the router forgets what it sent it. */
void sv_router_forget(replica *r);
void sv_router_free(serving *sv);

/* ---- serving_replica.c ------------------------------------------------------ */

void sv_maybe_load(replica *r);
void sv_publish_replicas(serving *sv);
void sv_release_replica(replica *r);
void sv_drain(replica *r);
int sv_start_replica(serving *sv, double startup_s);
/* serving_granted and serving_replica_lost (serving.h). */
void sv_replica_granted(serving *sv, int tag);
void sv_replica_lost(serving *sv, int tag, const char *why);
/* When arrivals are over and no request is left: the service ends now. */
void sv_check_finished(serving *sv);

/* ---- serving_arrivals.c ----------------------------------------------------- */

/* Set up the arrival process of sv->cfg (and read its trace); 0, or -1 with err. */
int sv_arrivals_init(serving *sv, char *err, size_t errlen);
/* Schedule the first arrival (or mark arrivals done when there is none). */
void sv_arrivals_start(serving *sv);
/* Closed loop: a request ended or was rejected; its user sends the next
 * one after a think time (no-op for the other processes). */
void sv_closed_next(serving *sv);
int32_t sv_generate(serving *sv);

/* ---- serving_batch.c -------------------------------------------------------- */

/* The hook sv->start_iteration: compose and start r's next iteration, or go idle. */
void sv_start_iteration(replica *r);

/* ---- serving_autoscale.c ---------------------------------------------------- */

void sv_on_scale(engine *e, void *arg);

#endif
