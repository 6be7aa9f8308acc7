/*
 * serving: iteration-level simulation of LLM inference services (see
 * serving.h for the behaviour; this comment is about representation).
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
#include "sim/serving.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "models/gpu.h"
#include "scenarios/reqtrace.h"
#include "base/units.h"
#include "sim/rng.h"

const double service_cdf_percentiles[SERVICE_CDF_POINTS] = { 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100 };

#define NIL (-1)
#define TICK_S 10.0                 /* metric samples every 10 simulated seconds */
#define TICK_LAT_N 1024             /* latencies kept per tick for its p99 (the most recent) */
#define RESERVOIR 4000000           /* latency samples kept per metric (exact below this) */
#define WATERMARK 0.01              /* on-demand admission keeps 1% of blocks free (vLLM default) */
#define MIN_KV_SHARE 0.10           /* a model is loaded only if the KV cache keeps this share of memory */
#define SCALE_TOLERANCE 0.10        /* no scaling within 10% of target (Kubernetes HPA default) */

enum { RQ_QUEUED, RQ_PREFILL, RQ_DECODE, RQ_SWAPPED };
/* R_REQUESTED: asked the host (the cluster scheduler) for GPUs, not held yet. */
enum { R_STARTING, R_READY, R_DRAINING, R_STOPPED, R_REQUESTED };
enum { M_UNLOADED, M_LOADING, M_LOADED };

typedef struct req {
    sim_time t_arrive, t_first, t_admit;  /* -1: not yet */
    int64_t base;                  /* decode: context in iteration i is base + i */
    int64_t dec_start;             /* first decode iteration */
    int64_t finish_iter;           /* decode: last iteration */
    int32_t input, output;
    int32_t prompt;                /* tokens to prefill: input, or input + gen after a recompute */
    int32_t prefilled;             /* prompt tokens in the cache; swapped: cache length */
    int32_t gen;                   /* tokens generated (as of decode entry while decoding) */
    int32_t blocks;                /* KV blocks held (reserve; prefill; swapped) */
    int32_t prev, next;            /* queue, swapped or running list */
    int32_t pprev, pnext;          /* prefill list */
    int32_t heap;                  /* position in the finish heap; -1 none */
    int16_t model;
    uint8_t state;
    uint8_t admitted;              /* ever admitted (queue wait recorded) */
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
    serve_batch b;                 /* this iteration */
} mstate;

typedef struct chunk { int32_t r, c; } chunk;

typedef struct replica {
    struct serving *sv;
    int index;
    int state;
    int handle;
    sim_time held_since;
    int64_t iter;                  /* iterations completed */
    int busy, kick_pending;
    list running, prefill;
    int32_t *heap;
    int64_t heap_n, heap_cap;
    chunk *ch;
    int n_ch, cap_ch;
    int64_t produced;              /* tokens the current iteration produces */
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
} replica;

typedef struct samples { double *x; size_t n, cap; int64_t seen; double sum; } samples;

/* serve_tokens_s of a model memoised by (tokens, rows): a decode batch
 * keeps its size for many iterations and budget-filled ones repeat, so a
 * small direct-mapped table saves the GEMM rooflines and collective lookups
 * on most iterations. The function is pure, so a hit is the same number. */
#define MEMO_BITS 12
typedef struct memo { uint64_t key[1 << MEMO_BITS]; double val[1 << MEMO_BITS]; } memo;

struct serving {
    engine *e;
    metric_bus *bus;
    const scenario *s;
    const sc_inference *cfg;
    const node_spec *node;
    serving_host host;
    int n_models;
    serve_model *models;
    double *share_cum;             /* cumulative request shares */
    double *load_s;
    double *block_bytes;           /* per model, per GPU */
    memo *memo;                    /* per model */
    int block;                     /* tokens per block */
    int reserve, chunked, static_b, swap, least;
    int max_batch, budget;
    double usable;                 /* per GPU: HBM - reserve - largest workspace */
    double kv_frac;
    replica *reps;
    int n_reps, cap_reps;
    int rr;
    /* arrivals */
    rng *r_arr, *r_len, *r_mod, *r_res;
    int64_t target;                /* requests to generate; -1 unbounded (duration) */
    int64_t generated;
    sim_time t_start, t_stop;      /* arrivals window; t_stop SIM_FOREVER when none */
    int offline;
    int64_t backlog;               /* offline requests not drawn yet */
    reqtrace_row *trace;
    long n_trace;
    int arrivals_done;
    list pending;                  /* arrived, no ready replica yet */
    /* request pool */
    req *rq;
    int32_t n_rq, cap_rq, free_rq;
    int64_t in_system;
    /* results */
    samples s_ttft, s_tpot, s_e2e, s_queue;
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
};

/* ---- small helpers ------------------------------------------------------ */

static sim_time now_of(const serving *sv) { return engine_now(sv->e); }

static void event(serving *sv, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void event(serving *sv, const char *kind, const char *fmt, ...) {
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    metrics_event(sv->bus, now_of(sv), sv->cfg->name, kind, detail);
}

static int64_t imod(int64_t a, int64_t b) {
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

static int32_t blocks_for(const serving *sv, int64_t tokens) {
    return (int32_t)((tokens + sv->block - 1) / sv->block);
}

static void list_init(list *l) { l->head = l->tail = NIL; l->n = 0; }

static void list_push_back(req *rq, list *l, int32_t i) {
    rq[i].prev = l->tail;
    rq[i].next = NIL;
    if (l->tail != NIL) rq[l->tail].next = i;
    else l->head = i;
    l->tail = i;
    l->n++;
}

static void list_push_front(req *rq, list *l, int32_t i) {
    rq[i].next = l->head;
    rq[i].prev = NIL;
    if (l->head != NIL) rq[l->head].prev = i;
    else l->tail = i;
    l->head = i;
    l->n++;
}

static void list_remove(req *rq, list *l, int32_t i) {
    if (rq[i].prev != NIL) rq[rq[i].prev].next = rq[i].next;
    else l->head = rq[i].next;
    if (rq[i].next != NIL) rq[rq[i].next].prev = rq[i].prev;
    else l->tail = rq[i].prev;
    rq[i].prev = rq[i].next = NIL;
    l->n--;
}

static void plist_push(req *rq, list *l, int32_t i) {
    rq[i].pprev = l->tail;
    rq[i].pnext = NIL;
    if (l->tail != NIL) rq[l->tail].pnext = i;
    else l->head = i;
    l->tail = i;
    l->n++;
}

static void plist_remove(req *rq, list *l, int32_t i) {
    if (rq[i].pprev != NIL) rq[rq[i].pprev].pnext = rq[i].pnext;
    else l->head = rq[i].pnext;
    if (rq[i].pnext != NIL) rq[rq[i].pnext].pprev = rq[i].pprev;
    else l->tail = rq[i].pprev;
    rq[i].pprev = rq[i].pnext = NIL;
    l->n--;
}

/* A new request slot; -1 when out of memory. */
static int32_t req_alloc(serving *sv) {
    if (sv->free_rq == NIL) {
        if (sv->n_rq == sv->cap_rq) {
            if (sv->cap_rq >= INT32_MAX / 2) return NIL;
            int32_t cap = sv->cap_rq ? sv->cap_rq * 2 : 1024;
            req *p = realloc(sv->rq, (size_t)cap * sizeof *p);
            if (!p) return NIL;
            sv->rq = p;
            sv->cap_rq = cap;
        }
        sv->rq[sv->n_rq].next = sv->free_rq;
        sv->free_rq = sv->n_rq++;
    }
    int32_t i = sv->free_rq;
    sv->free_rq = sv->rq[i].next;
    memset(&sv->rq[i], 0, sizeof sv->rq[i]);
    sv->rq[i].prev = sv->rq[i].next = sv->rq[i].pprev = sv->rq[i].pnext = sv->rq[i].heap = NIL;
    sv->rq[i].t_first = sv->rq[i].t_admit = -1;
    return i;
}

static void req_free(serving *sv, int32_t i) {
    sv->rq[i].next = sv->free_rq;
    sv->free_rq = i;
}

/* ---- finish heap (min by finish iteration, then index) ------------------ */

static int heap_less(const req *rq, int32_t a, int32_t b) {
    if (rq[a].finish_iter != rq[b].finish_iter) return rq[a].finish_iter < rq[b].finish_iter;
    return a < b;
}

static void heap_set(replica *r, int64_t pos, int32_t i) {
    r->heap[pos] = i;
    r->sv->rq[i].heap = (int32_t)pos;
}

static void heap_up(replica *r, int64_t pos) {
    req *rq = r->sv->rq;
    int32_t x = r->heap[pos];
    while (pos > 0) {
        int64_t parent = (pos - 1) / 2;
        if (!heap_less(rq, x, r->heap[parent])) break;
        heap_set(r, pos, r->heap[parent]);
        pos = parent;
    }
    heap_set(r, pos, x);
}

static void heap_down(replica *r, int64_t pos) {
    req *rq = r->sv->rq;
    int32_t x = r->heap[pos];
    for (;;) {
        int64_t c = 2 * pos + 1;
        if (c >= r->heap_n) break;
        if (c + 1 < r->heap_n && heap_less(rq, r->heap[c + 1], r->heap[c])) c++;
        if (!heap_less(rq, r->heap[c], x)) break;
        heap_set(r, pos, r->heap[c]);
        pos = c;
    }
    heap_set(r, pos, x);
}

static int heap_push(replica *r, int32_t i) {
    if (r->heap_n == r->heap_cap) {
        int64_t cap = r->heap_cap ? r->heap_cap * 2 : 256;
        int32_t *p = realloc(r->heap, (size_t)cap * sizeof *p);
        if (!p) return -1;
        r->heap = p;
        r->heap_cap = cap;
    }
    heap_set(r, r->heap_n++, i);
    heap_up(r, r->heap_n - 1);
    return 0;
}

static void heap_remove(replica *r, int32_t i) {
    int64_t pos = r->sv->rq[i].heap;
    r->sv->rq[i].heap = NIL;
    int32_t last = r->heap[--r->heap_n];
    if (pos == r->heap_n) return;
    heap_set(r, pos, last);
    heap_up(r, pos);
    heap_down(r, r->sv->rq[last].heap);
}

/* ---- samples (exact up to RESERVOIR, then a reservoir) ------------------ */

static void sample_add(serving *sv, samples *p, double v) {
    p->seen++;
    p->sum += v;
    if (p->n < RESERVOIR) {
        if (p->n == p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 1024;
            double *x = realloc(p->x, cap * sizeof *x);
            if (!x) return;
            p->x = x;
            p->cap = cap;
        }
        p->x[p->n++] = v;
        return;
    }
    uint64_t k = rng_uniform_int(sv->r_res, (uint64_t)p->seen);
    if (k < RESERVOIR) p->x[k] = v;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted x; -1 when empty. */
static double pct(const samples *p, double q) {
    if (p->n == 0) return -1;
    double rank = ceil(q / 100.0 * (double)p->n);
    size_t k = rank < 1 ? 0 : (size_t)rank - 1;
    if (k >= p->n) k = p->n - 1;
    return p->x[k];
}

/* ---- accounting ------------------------------------------------------------ */

/* Replicas held over time, for GPU-hours and the mean replica count. */
static void integrate_reps(serving *sv) {
    sim_time t = now_of(sv);
    double dt = sim_to_s(t - sv->last_change);
    sv->replica_s += sv->active_reps * dt;
    sv->gpu_s += (double)sv->active_reps * sv->cfg->tp * dt;
    sv->last_change = t;
}

/* Activities of the replicas' GPUs (service_result gpu_*_s): an iteration
 * is counted when it ends, or the part of it done when it is cut short (the
 * GPUs lost, the end of the run); a start-up or model load likewise. */
static void account_iteration(replica *r, int whole) {
    serving *sv = r->sv;
    double t = r->it_prefill_s + r->it_decode_s + r->it_copy_s, f = 1;
    if (!whole && t > 0) {
        double done = sim_to_s(now_of(sv) - r->it_t0);
        f = done < t ? done / t : 1;
    }
    double tp = sv->cfg->tp;
    sv->res.gpu_prefill_s += f * r->it_prefill_s * tp;
    sv->res.gpu_decode_s += f * r->it_decode_s * tp;
    sv->res.gpu_loading_s += f * r->it_copy_s * tp;
    r->it_prefill_s = r->it_decode_s = r->it_copy_s = 0;
}

static void account_load(replica *r) {
    if (r->load_t0 < 0) return;
    serving *sv = r->sv;
    sv->res.gpu_loading_s += sim_to_s(now_of(sv) - r->load_t0) * sv->cfg->tp;
    r->load_t0 = -1;
}

static void publish_replicas(serving *sv) {
    int ready = 0;
    for (int i = 0; i < sv->n_reps; i++) ready += sv->reps[i].state == R_READY;
    metrics_sample(sv->bus, sv->m_replicas, now_of(sv), ready);
}

/* KV capacity of a replica with resident weights w (bytes per GPU). */
static double kv_cap_for(const serving *sv, double w) {
    double c = sv->kv_frac * (sv->usable - w);
    return c > 0 ? c : 0;
}

static double tokens_cost(serving *sv, int m, int64_t tokens, int64_t rows) {
    uint64_t key = ((uint64_t)tokens << 32) | (uint64_t)rows;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - MEMO_BITS));
    memo *c = &sv->memo[m];
    if (c->key[h] == key) return c->val[h];
    double t = serve_tokens_s(&sv->models[m], (double)tokens, (double)rows, NULL);
    c->key[h] = key;
    c->val[h] = t;
    return t;
}

/* ---- requests: generation and routing --------------------------------------- */

static int draw_len(rng *r, const char *dist, double mean, double cv) {
    double x = mean;
    if (!strcmp(dist, "exponential")) x = rng_exponential(r, mean);
    else if (!strcmp(dist, "lognormal")) x = rng_lognormal_mean_cv(r, mean, cv > 0 ? cv : 1);
    else if (!strcmp(dist, "gamma")) x = rng_gamma_mean_cv(r, mean, cv > 0 ? cv : 1);
    else if (!strcmp(dist, "uniform")) x = 1 + rng_uniform(r) * (2 * mean - 2);
    x = floor(x + 0.5);
    if (!(x >= 1)) x = 1;                          /* also NaN: never an undefined cast */
    if (x > 1e8) x = 1e8;
    return (int)x;
}

static int pick_model(serving *sv) {
    if (sv->n_models == 1) return 0;
    double u = rng_uniform(sv->r_mod) * sv->share_cum[sv->n_models - 1];
    for (int m = 0; m < sv->n_models; m++)
        if (u < sv->share_cum[m]) return m;
    return sv->n_models - 1;
}

/* A new request arriving now; NIL when out of memory or when it can never
 * fit a replica's KV cache (counted as rejected). */
static int32_t make_request(serving *sv, int input, int output, int model) {
    const serve_model *sm = &sv->models[model];
    int ctx = sm->m.max_context > 1 ? sm->m.max_context : 1 << 30;
    if (input >= ctx) input = ctx - 1;
    if (input + output > ctx) output = ctx - input;
    if ((double)input + output > sm->kv_capacity_tokens) {
        sv->rejected++;
        return NIL;
    }
    int32_t i = req_alloc(sv);
    if (i == NIL) return NIL;
    req *q = &sv->rq[i];
    q->t_arrive = sv->offline ? sv->t_start : now_of(sv);   /* offline: all submitted at the start */
    q->input = q->prompt = input;
    q->output = output;
    q->model = (int16_t)model;
    q->state = RQ_QUEUED;
    if (sv->res.submitted == 0) sv->first_arrival = q->t_arrive;
    sv->res.submitted++;
    sv->in_system++;
    sv->res.input_tokens += input;
    return i;
}

static int32_t generate(serving *sv) {
    int model = pick_model(sv);
    int in = draw_len(sv->r_len, sv->cfg->input_dist, sv->cfg->input_tokens, sv->cfg->input_cv);
    int out = draw_len(sv->r_len, sv->cfg->output_dist, sv->cfg->output_tokens, sv->cfg->output_cv);
    return make_request(sv, in, out, model);
}

static void kick(replica *r);

static int routable(const replica *r) { return r->state == R_READY; }

/* The replica a request goes to; -1 when none is ready. */
static int route_pick(serving *sv, int model) {
    int best = -1;
    if (!sv->least) {
        for (int k = 0; k < sv->n_reps; k++) {
            int i = (sv->rr + k) % sv->n_reps;
            if (routable(&sv->reps[i])) {
                sv->rr = (i + 1) % sv->n_reps;
                return i;
            }
        }
        return -1;
    }
    /* Least outstanding tokens, among replicas holding the model first. */
    for (int pass = 0; pass < 2 && best < 0; pass++)
        for (int i = 0; i < sv->n_reps; i++) {
            const replica *r = &sv->reps[i];
            if (!routable(r)) continue;
            if (pass == 0 && sv->n_models > 1 && r->ms[model].resident == M_UNLOADED) continue;
            if (best < 0 || r->outstanding < sv->reps[best].outstanding) best = i;
        }
    return best;
}

static void enqueue(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    list_push_back(sv->rq, &r->ms[q->model].queue, i);
    r->outstanding += q->input + q->output;
    kick(r);
}

static void route(serving *sv, int32_t i) {
    int k = route_pick(sv, sv->rq[i].model);
    if (k < 0) list_push_back(sv->rq, &sv->pending, i);
    else enqueue(&sv->reps[k], i);
}

static void route_pending(serving *sv) {
    while (sv->pending.n > 0) {
        int32_t i = sv->pending.head;
        int k = route_pick(sv, sv->rq[i].model);
        if (k < 0) return;
        list_remove(sv->rq, &sv->pending, i);
        enqueue(&sv->reps[k], i);
    }
}

/* ---- completion ------------------------------------------------------------- */

static void check_finished(serving *sv);
static void release_replica(replica *r);

static void complete(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    list_remove(sv->rq, &r->running, i);
    ms->running--;
    ms->last_used = now_of(sv);
    sim_time now = now_of(sv);
    double ttft = sim_to_s(q->t_first - q->t_arrive);
    double e2e = sim_to_s(now - q->t_arrive);
    sample_add(sv, &sv->s_ttft, ttft);
    sample_add(sv, &sv->s_e2e, e2e);
    sv->tick_ttft[sv->tick_n_ttft++ % TICK_LAT_N] = ttft;
    int ok = sv->cfg->slo_ttft_s <= 0 || ttft <= sv->cfg->slo_ttft_s;
    if (q->output > 1) {
        double tpot = sim_to_s(now - q->t_first) / (q->output - 1);
        sample_add(sv, &sv->s_tpot, tpot);
        sv->tick_tpot[sv->tick_n_tpot++ % TICK_LAT_N] = tpot;
        if (sv->cfg->slo_tpot_s > 0 && tpot > sv->cfg->slo_tpot_s) ok = 0;
    }
    sv->slo_ok += ok;
    sv->res.requests++;
    sv->res.output_tokens += q->output;
    sv->tick_tokens += q->output;
    sv->last_completion = now;
    sv->in_system--;
    req_free(sv, i);
}

/* A decoding sequence generated its last token in iteration `it`. */
static void finish_decode(replica *r, int32_t i, int64_t it) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    heap_remove(r, i);
    ms->n_dec--;
    ms->S -= q->base;
    if (!sv->reserve) ms->bucket[imod(q->base, sv->block)]--;
    int32_t blocks = sv->reserve ? q->blocks : blocks_for(sv, q->base + it);
    r->kv_used -= blocks * sv->block_bytes[q->model];
    if (sv->static_b) {
        ms->ghost_n++;
        ms->ghost_S += q->base;
    }
    complete(r, i);
}

/* Sequence i starts decoding in iteration j with k tokens in its cache. */
static int enter_decode(replica *r, int32_t i, int64_t j, int64_t k) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    q->state = RQ_DECODE;
    q->base = k + 1 - j;
    q->dec_start = j;
    q->finish_iter = j + (q->output - q->gen) - 1;
    ms->n_dec++;
    ms->S += q->base;
    if (!sv->reserve) ms->bucket[imod(q->base, sv->block)]++;
    return heap_push(r, i);
}

/* ---- preemption (on-demand KV) ---------------------------------------------- */

/* Take the youngest running sequence off the GPU at the start of
 * iteration it: recompute (back to the head of the queue, cache dropped)
 * or swap (cache copied to host memory, resumes where it was). */
static void preempt_youngest(replica *r, int64_t it) {
    serving *sv = r->sv;
    int32_t i = r->running.tail;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    double bb = sv->block_bytes[q->model];
    list_remove(sv->rq, &r->running, i);
    ms->running--;
    sv->res.preemptions++;
    if (q->state == RQ_PREFILL) {
        plist_remove(sv->rq, &r->prefill, i);
        r->kv_used -= q->blocks * bb;
        r->outstanding += q->prefilled;
        q->prefilled = 0;
        q->blocks = 0;
        q->state = RQ_QUEUED;
        list_push_front(sv->rq, &ms->queue, i);
        return;
    }
    /* decoding */
    heap_remove(r, i);
    ms->n_dec--;
    ms->S -= q->base;
    ms->bucket[imod(q->base, sv->block)]--;
    int64_t len = q->base + it - 1;            /* cache after iteration it-1 */
    int32_t blocks = blocks_for(sv, len);
    q->gen += (int32_t)(it - q->dec_start);
    r->kv_used -= blocks * bb;
    if (sv->swap) {
        sv->res.swaps++;
        r->swap_s += serve_pcie_s(sv->node, blocks * bb);
        q->blocks = blocks;
        q->prefilled = (int32_t)len;
        q->state = RQ_SWAPPED;
        list_push_back(sv->rq, &ms->swapped, i);
    } else {
        q->prompt = q->input + q->gen;
        q->prefilled = 0;
        q->blocks = 0;
        q->state = RQ_QUEUED;
        r->outstanding += q->prompt;
        list_push_front(sv->rq, &ms->queue, i);
    }
}

/* ---- model residency (multiplexing) ----------------------------------------- */

static void on_loaded(engine *e, void *arg);

static double min_kv(const serving *sv) { return MIN_KV_SHARE * sv->kv_frac * sv->usable; }

/* Start loading a model that has waiting requests, unloading idle models
 * (least recently used first) to make room. One load at a time. */
static void maybe_load(replica *r) {
    serving *sv = r->sv;
    if (sv->n_models == 1 || r->loading >= 0) return;
    int want = -1;
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        if (ms->resident != M_UNLOADED || ms->queue.n == 0) continue;
        if (want < 0 || sv->rq[ms->queue.head].t_arrive < sv->rq[r->ms[want].queue.head].t_arrive) want = m;
    }
    if (want < 0) return;
    double w = sv->models[want].weight_bytes;
    for (;;) {
        double cap = kv_cap_for(sv, r->weights + w);
        if (cap >= min_kv(sv) && cap >= r->kv_used) break;
        /* Idle models first (nothing waiting), then ones with only a queue. */
        int lru = -1;
        for (int pass = 0; pass < 2 && lru < 0; pass++)
            for (int m = 0; m < sv->n_models; m++) {
                mstate *ms = &r->ms[m];
                if (ms->resident != M_LOADED || ms->running > 0 || ms->swapped.n > 0) continue;
                if (pass == 0 && ms->queue.n > 0) continue;
                if (lru < 0 || ms->last_used < r->ms[lru].last_used) lru = m;
            }
        if (lru < 0) return;                     /* wait for running work to finish */
        r->ms[lru].resident = M_UNLOADED;
        r->weights -= sv->models[lru].weight_bytes;
        r->kv_cap = kv_cap_for(sv, r->weights);
        sv->res.model_unloads++;
        event(sv, "model_unload", "replica %d: %s (least recently used)", r->index, sv->models[lru].m.name);
    }
    r->ms[want].resident = M_LOADING;
    r->loading = want;
    r->load_t0 = now_of(sv);
    r->weights += w;
    r->kv_cap = kv_cap_for(sv, r->weights);
    event(sv, "model_load", "replica %d: %s, %.1f s", r->index, sv->models[want].m.name, sv->load_s[want]);
    r->ev_load = engine_after(sv->e, sim_from_s(sv->load_s[want]), on_loaded, r);
}

static void on_loaded(engine *e, void *arg) {
    (void)e;
    replica *r = arg;
    serving *sv = r->sv;
    r->ev_load = 0;
    if (r->loading < 0) return;
    account_load(r);
    r->ms[r->loading].resident = M_LOADED;
    r->ms[r->loading].last_used = now_of(sv);
    r->loading = -1;
    sv->res.model_loads++;
    kick(r);
}

/* ---- one iteration ------------------------------------------------------------- */

static int add_chunk(replica *r, int32_t i, int32_t c) {
    if (r->n_ch == r->cap_ch) {
        int cap = r->cap_ch ? r->cap_ch * 2 : 64;
        chunk *p = realloc(r->ch, (size_t)cap * sizeof *p);
        if (!p) return -1;
        r->ch = p;
        r->cap_ch = cap;
    }
    r->ch[r->n_ch++] = (chunk){ i, c };
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    serve_batch *b = &r->ms[q->model].b;
    b->prefill_tokens += c;
    b->prefill_pairs += serve_chunk_pairs(c, q->prefilled);
    if (q->prefilled + c == q->prompt) b->prefill_done += 1;
    return 0;
}

/* The model whose waiting request is oldest, among loaded ones; -1 none. */
static int next_model(const replica *r) {
    const serving *sv = r->sv;
    int best = -1;
    for (int m = 0; m < sv->n_models; m++) {
        const mstate *ms = &r->ms[m];
        if (ms->resident != M_LOADED || ms->queue.n == 0) continue;
        if (best < 0 || sv->rq[ms->queue.head].t_arrive < sv->rq[r->ms[best].queue.head].t_arrive) best = m;
    }
    return best;
}

/* The next request this replica may admit, without taking it: a waiting
 * one, or one drawn from the offline backlog (then queued here). NIL when
 * none. */
static int32_t peek_next(replica *r) {
    serving *sv = r->sv;
    int m = next_model(r);
    if (m >= 0) return r->ms[m].queue.head;
    if (sv->offline && sv->backlog > 0 && r->state == R_READY) {
        int32_t i = NIL;
        while (sv->backlog > 0 && i == NIL) {
            sv->backlog--;
            sv->generated++;
            i = generate(sv);
        }
        if (sv->backlog == 0) check_finished(sv);
        if (i == NIL) return NIL;
        req *q = &sv->rq[i];
        list_push_back(sv->rq, &r->ms[q->model].queue, i);
        r->outstanding += q->input + q->output;
        if (r->ms[q->model].resident != M_LOADED) {
            maybe_load(r);
            return NIL;
        }
        return i;
    }
    return NIL;
}

/* KV blocks a request needs at admission. */
static int32_t admit_blocks(const serving *sv, const req *q) {
    return sv->reserve ? blocks_for(sv, (int64_t)q->input + q->output) : blocks_for(sv, q->prompt);
}

static int fits(const replica *r, double bytes, int watermark) {
    double room = r->kv_cap - r->kv_used - bytes;
    return room >= (watermark ? WATERMARK * r->kv_cap : 0);
}

static void admit(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    list_remove(sv->rq, &ms->queue, i);
    q->blocks = admit_blocks(sv, q);
    r->kv_used += q->blocks * sv->block_bytes[q->model];
    q->state = RQ_PREFILL;
    q->prefilled = 0;
    if (!q->admitted) {
        q->admitted = 1;
        q->t_admit = now_of(sv);
        sample_add(sv, &sv->s_queue, sim_to_s(q->t_admit - q->t_arrive));
    }
    list_push_back(sv->rq, &r->running, i);
    plist_push(sv->rq, &r->prefill, i);
    ms->running++;
    ms->last_used = now_of(sv);
}

static void on_iter_end(engine *e, void *arg);

/* Compose and start the next iteration, or go idle. */
static void start_iteration(replica *r) {
    serving *sv = r->sv;
    if (r->busy || !(r->state == R_READY || r->state == R_DRAINING)) return;
    int64_t it = r->iter;
    r->n_ch = 0;
    r->produced = 0;
    double extra = r->swap_s;
    r->swap_s = 0;
    int64_t running = r->running.n;

    if (sv->static_b) {
        if (running == 0) {
            for (int m = 0; m < sv->n_models; m++) r->ms[m].ghost_n = r->ms[m].ghost_S = 0;
            /* A new batch: the oldest model's requests, up to max-batch, all prefilled at once. */
            int32_t i = peek_next(r);
            int model = i != NIL ? sv->rq[i].model : -1;
            while (i != NIL && r->running.n < sv->max_batch && sv->rq[i].model == model &&
                   fits(r, admit_blocks(sv, &sv->rq[i]) * sv->block_bytes[model], 0)) {
                admit(r, i);
                i = peek_next(r);
            }
            for (int32_t k = r->prefill.head; k != NIL; k = sv->rq[k].pnext)
                if (add_chunk(r, k, sv->rq[k].prompt) < 0) return;
        }
    } else {
        if (!sv->reserve) {
            /* Swapped sequences come back first (vLLM: no new prefills while
             * any are out), when the cache holds them and this step's growth. */
            double growth = 0;
            int64_t gidx = imod(1 - it, sv->block);
            for (int m = 0; m < sv->n_models; m++) growth += r->ms[m].bucket[gidx] * sv->block_bytes[m];
            for (int m = 0; m < sv->n_models; m++) {
                mstate *ms = &r->ms[m];
                while (ms->swapped.n > 0 && r->running.n < sv->max_batch) {
                    int32_t i = ms->swapped.head;
                    req *q = &sv->rq[i];
                    double bytes = (q->blocks + 1) * sv->block_bytes[m];
                    if (!fits(r, bytes + growth, 1)) break;
                    growth += sv->block_bytes[m];
                    list_remove(sv->rq, &ms->swapped, i);
                    r->kv_used += q->blocks * sv->block_bytes[m];
                    extra += serve_pcie_s(sv->node, q->blocks * sv->block_bytes[m]);
                    list_push_back(sv->rq, &r->running, i);
                    ms->running++;
                    if (enter_decode(r, i, it, q->prefilled) < 0) return;
                }
            }
            /* Every decoding sequence whose cache crosses a block boundary
             * needs a block now; preempt the youngest until they fit. */
            for (;;) {
                double need = 0;
                int64_t idx = imod(1 - it, sv->block);
                for (int m = 0; m < sv->n_models; m++) need += r->ms[m].bucket[idx] * sv->block_bytes[m];
                if (r->kv_used + need <= r->kv_cap || r->running.n == 0) {
                    r->kv_used += need;
                    break;
                }
                preempt_youngest(r, it);
            }
        }
        int64_t n_dec = 0;
        for (int m = 0; m < sv->n_models; m++) n_dec += r->ms[m].n_dec;
        /* Decode tokens count against the budget. Without chunking a prompt
         * longer than what is left still runs when it is the iteration's
         * only prompt (the budget is then at least the longest prompt, as
         * vLLM requires without chunked prefill). */
        int64_t left = sv->budget - n_dec;
        int any = 0;
        /* Prompts already admitted, oldest first. */
        for (int32_t i = r->prefill.head; i != NIL; i = sv->rq[i].pnext) {
            req *q = &sv->rq[i];
            int64_t rem = q->prompt - q->prefilled, c;
            if (sv->chunked) c = rem < left ? rem : left;
            else c = (rem <= left || !any) ? rem : 0;
            if (c <= 0) break;
            if (add_chunk(r, i, (int32_t)c) < 0) return;
            left -= c;
            any = 1;
        }
        /* New admissions while there is room in the batch, the budget and the cache. */
        int swapped_out = 0;
        for (int m = 0; m < sv->n_models; m++) swapped_out += r->ms[m].swapped.n > 0;
        while (!swapped_out && r->state == R_READY && r->running.n < sv->max_batch &&
               (left > 0 || (!any && !sv->chunked))) {
            int32_t i = peek_next(r);
            if (i == NIL) break;
            req *q = &sv->rq[i];
            if (!sv->chunked && any && q->prompt > left) break;
            if (!fits(r, admit_blocks(sv, q) * sv->block_bytes[q->model], !sv->reserve)) break;
            admit(r, i);
            int64_t c = q->prompt;
            if (sv->chunked && c > left) c = left > 0 ? left : 0;
            if (c > 0) {
                if (add_chunk(r, i, (int32_t)c) < 0) return;
                left -= c;
                any = 1;
            } else {
                break;
            }
        }
    }

    /* Loaded models have taken what they could; now a model with waiting
     * requests may be loaded in their place. */
    maybe_load(r);

    /* Price the iteration: one model after another on the same GPUs. For
     * power, a model's part is split into what its decode tokens alone
     * would take (memory-bound reads of weights and KV cache) and the rest
     * (the prompt tokens' compute); swaps are PCIe copies. */
    double t = extra, pre = 0, dec = 0;
    int64_t seqs = 0;
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        ms->b.decode_seqs = (double)(ms->n_dec + ms->ghost_n);
        ms->b.decode_ctx = (double)(ms->S + ms->ghost_S) + (double)(ms->n_dec + ms->ghost_n) * (double)it;
        r->produced += ms->n_dec + (int64_t)ms->b.prefill_done;
        seqs += ms->running;
        int64_t d_tok = ms->n_dec + ms->ghost_n, tokens = (int64_t)ms->b.prefill_tokens + d_tok;
        if (tokens == 0) continue;
        double part = tokens_cost(sv, m, tokens, d_tok + (int64_t)ms->b.prefill_done) +
                      serve_context_s(&sv->models[m], ms->b.prefill_pairs, ms->b.decode_ctx, NULL);
        t += part;
        double d = part;
        if (ms->b.prefill_tokens > 0)
            d = d_tok > 0 ? tokens_cost(sv, m, d_tok, d_tok) + serve_context_s(&sv->models[m], 0, ms->b.decode_ctx, NULL)
                          : 0;
        if (d > part) d = part;
        dec += d;
        pre += part - d;
    }
    if (!(t > 0) || (seqs == 0 && extra == 0)) {
        for (int m = 0; m < sv->n_models; m++) memset(&r->ms[m].b, 0, sizeof r->ms[m].b);
        if (r->state == R_DRAINING) release_replica(r);
        return;                                   /* idle until something arrives */
    }
    r->busy = 1;
    r->it_prefill_s = pre;
    r->it_decode_s = dec;
    r->it_copy_s = extra;
    r->it_t0 = now_of(sv);
    sv->res.iterations++;
    sv->batch_sum += (double)seqs;
    sv->busy_s += t;
    double util = r->kv_cap > 0 ? r->kv_used / r->kv_cap : 0;
    sv->kv_integral += util * t;
    if (util > sv->kv_peak) sv->kv_peak = util;
    r->ev_iter = engine_after(sv->e, sim_from_s(t), on_iter_end, r);
}

static void on_iter_end(engine *e, void *arg) {
    (void)e;
    replica *r = arg;
    serving *sv = r->sv;
    int64_t it = r->iter;
    r->ev_iter = 0;
    account_iteration(r, 1);
    /* Decoders that produced their last token. */
    while (r->heap_n > 0 && sv->rq[r->heap[0]].finish_iter <= it) finish_decode(r, r->heap[0], it);
    /* Prompt chunks: a prompt that completes samples a token. */
    for (int k = 0; k < r->n_ch; k++) {
        int32_t i = r->ch[k].r;
        req *q = &sv->rq[i];
        q->prefilled += r->ch[k].c;
        r->outstanding -= r->ch[k].c;
        if (q->prefilled < q->prompt) continue;
        plist_remove(sv->rq, &r->prefill, i);
        q->gen++;
        if (q->t_first < 0) {
            q->t_first = now_of(sv);
            sv->ttft_sum_window += sim_to_s(q->t_first - q->t_arrive);
            sv->ttft_n_window++;
        }
        if (q->gen >= q->output) {
            r->kv_used -= q->blocks * sv->block_bytes[q->model];
            complete(r, i);
        } else if (enter_decode(r, i, it + 1, q->prompt) < 0) {
            continue;
        }
    }
    r->outstanding -= (double)r->produced;
    for (int m = 0; m < sv->n_models; m++) memset(&r->ms[m].b, 0, sizeof r->ms[m].b);
    r->iter++;
    r->busy = 0;
    start_iteration(r);
    check_finished(sv);
}

static void on_kick(engine *e, void *arg) {
    (void)e;
    replica *r = arg;
    r->kick_pending = 0;
    start_iteration(r);
}

static void kick(replica *r) {
    if (r->busy || r->kick_pending) return;
    r->kick_pending = 1;
    engine_after(r->sv->e, 0, on_kick, r);
}

/* ---- replicas -------------------------------------------------------------------- */

static replica *new_replica(serving *sv) {
    /* Pending events point at replicas, so they never move: the array is
     * allocated up front to the autoscaler's maximum (serving_new). */
    if (sv->n_reps == sv->cap_reps) return NULL;
    replica *r = &sv->reps[sv->n_reps];
    memset(r, 0, sizeof *r);
    r->sv = sv;
    r->index = sv->n_reps++;                 /* counted now: serving_free frees what is allocated */
    r->state = R_STOPPED;
    r->loading = -1;
    r->handle = -1;
    r->load_t0 = -1;
    list_init(&r->running);
    list_init(&r->prefill);
    r->ms = calloc((size_t)sv->n_models, sizeof *r->ms);
    if (!r->ms) return NULL;
    for (int m = 0; m < sv->n_models; m++) {
        list_init(&r->ms[m].queue);
        list_init(&r->ms[m].swapped);
        r->ms[m].bucket = calloc((size_t)sv->block, sizeof *r->ms[m].bucket);
        if (!r->ms[m].bucket) return NULL;
    }
    return r;
}

/* Models resident at start: in the order given, while they fit. */
static void warm_models(replica *r) {
    serving *sv = r->sv;
    r->weights = 0;
    for (int m = 0; m < sv->n_models; m++) r->ms[m].resident = M_UNLOADED;
    for (int m = 0; m < sv->n_models; m++) {
        double w = sv->models[m].weight_bytes;
        if (m == 0 || kv_cap_for(sv, r->weights + w) >= min_kv(sv)) {
            r->ms[m].resident = M_LOADED;
            r->weights += w;
        }
    }
    r->kv_cap = kv_cap_for(sv, r->weights);
}

static void release_replica(replica *r) {
    serving *sv = r->sv;
    if (r->state == R_STOPPED || r->handle < 0) return;
    if (r->state == R_REQUESTED) {           /* still queued at the scheduler: withdraw */
        sv->host.release(sv->host.ctx, r->handle);
        r->handle = -1;
        r->state = R_STOPPED;
        return;
    }
    if (r->ev_load) engine_cancel(sv->e, r->ev_load);
    if (r->ev_ready) engine_cancel(sv->e, r->ev_ready);
    r->ev_load = r->ev_ready = 0;
    r->loading = -1;
    account_load(r);
    integrate_reps(sv);
    sv->active_reps--;
    sv->host.release(sv->host.ctx, r->handle);
    r->handle = -1;
    r->state = R_STOPPED;
    event(sv, "replica_stop", "replica %d gave back %d GPUs", r->index, sv->cfg->tp);
    publish_replicas(sv);
}

/* Stop routing to a replica: its waiting requests go to the others; it
 * gives its GPUs back when what it runs has finished. */
static void drain(replica *r) {
    serving *sv = r->sv;
    r->state = R_DRAINING;
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        while (ms->queue.n > 0) {
            int32_t i = ms->queue.head;
            req *q = &sv->rq[i];
            list_remove(sv->rq, &ms->queue, i);
            r->outstanding -= (q->prompt - q->prefilled) + (q->output - q->gen);
            q->prompt = q->input + q->gen;   /* nothing of it is cached here */
            route(sv, i);
        }
    }
    kick(r);
}

static void on_ready(engine *e, void *arg) {
    (void)e;
    replica *r = arg;
    serving *sv = r->sv;
    r->ev_ready = 0;
    if (r->state != R_STARTING) return;
    account_load(r);
    r->state = R_READY;
    event(sv, "replica_ready", "replica %d", r->index);
    publish_replicas(sv);
    route_pending(sv);
    kick(r);
}

/* Ask the host for a replica's GPUs; it starts (ready after startup_s; 0 =
 * at once) when they are granted, which may happen before this returns.
 * Returns 0 when the GPUs are held now, 1 when the request waits in the
 * scheduler's queue, -1 when no replica can be added. */
static int start_replica(serving *sv, double startup_s) {
    replica *r = NULL;
    for (int i = 0; i < sv->n_reps && !r; i++)
        if (sv->reps[i].state == R_STOPPED && sv->reps[i].ms && sv->reps[i].ms[sv->n_models - 1].bucket) r = &sv->reps[i];
    if (!r) r = new_replica(sv);
    if (!r) return -1;
    r->state = R_REQUESTED;
    r->startup_s = startup_s;
    r->handle = -1;
    int granted = 0;
    int h = sv->host.acquire(sv->host.ctx, sv->cfg->tp, r->index, &granted);
    if (h < 0) {
        r->state = R_STOPPED;
        return -1;
    }
    r->handle = h;
    if (!granted) return 1;
    serving_granted(sv, r->index);
    return 0;
}

/* Time for a replica to come back after it lost its GPUs: the autoscaler's
 * start-up time when given, else loading the resident weights again. */
static double restart_s(const serving *sv) {
    if (sv->cfg->autoscale_startup_s > 0) return sv->cfg->autoscale_startup_s;
    double t = 0, w = 0;
    for (int m = 0; m < sv->n_models; m++) {
        double add = sv->models[m].weight_bytes;
        if (m > 0 && kv_cap_for(sv, w + add) < min_kv(sv)) break;
        w += add;
        t += sv->load_s[m];
    }
    return t;
}

void serving_granted(serving *sv, int tag) {
    if (tag < 0 || tag >= sv->n_reps) return;
    replica *r = &sv->reps[tag];
    if (r->state != R_REQUESTED) return;
    integrate_reps(sv);
    sv->active_reps++;
    if (sv->active_reps > sv->res.replicas_peak) sv->res.replicas_peak = sv->active_reps;
    r->iter = 0;
    r->outstanding = 0;
    r->kv_used = 0;
    r->held_since = now_of(sv);
    warm_models(r);
    if (r->startup_s > 0) {
        r->state = R_STARTING;
        r->load_t0 = now_of(sv);
        r->ev_ready = engine_after(sv->e, sim_from_s(r->startup_s), on_ready, r);
    } else {
        r->state = R_READY;
        publish_replicas(sv);
        route_pending(sv);
    }
}

/* Every sequence on the replica loses its KV cache (the GPUs are gone):
 * running ones are recomputed from their prompt and what they generated,
 * swapped ones too (their host copy was on the lost node), and waiting
 * ones go to the other replicas. */
static void evict_all(replica *r) {
    serving *sv = r->sv;
    int64_t it = r->iter;                     /* the iteration in flight is lost */
    while (r->running.n > 0) {
        int32_t i = r->running.tail;
        req *q = &sv->rq[i];
        mstate *ms = &r->ms[q->model];
        list_remove(sv->rq, &r->running, i);
        ms->running--;
        if (q->state == RQ_PREFILL) {
            plist_remove(sv->rq, &r->prefill, i);
        } else {
            heap_remove(r, i);
            ms->n_dec--;
            ms->S -= q->base;
            if (!sv->reserve) ms->bucket[imod(q->base, sv->block)]--;
            q->gen += (int32_t)(it - q->dec_start);
        }
        q->prompt = q->input + q->gen;
        q->prefilled = 0;
        q->blocks = 0;
        q->state = RQ_QUEUED;
        sv->res.requests_restarted++;
        list_push_front(sv->rq, &ms->queue, i);
    }
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        while (ms->swapped.n > 0) {
            int32_t i = ms->swapped.head;
            req *q = &sv->rq[i];
            list_remove(sv->rq, &ms->swapped, i);
            q->prompt = q->input + q->gen;
            q->prefilled = 0;
            q->blocks = 0;
            q->state = RQ_QUEUED;
            sv->res.requests_restarted++;
            list_push_back(sv->rq, &ms->queue, i);
        }
        ms->ghost_n = ms->ghost_S = 0;
        memset(&ms->b, 0, sizeof ms->b);
        if (ms->resident == M_LOADING) ms->resident = M_UNLOADED;
    }
    r->kv_used = 0;
    r->swap_s = 0;
    r->n_ch = 0;
    r->produced = 0;
    r->busy = 0;
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        while (ms->queue.n > 0) {
            int32_t i = ms->queue.head;
            list_remove(sv->rq, &ms->queue, i);
            route(sv, i);
        }
    }
    r->outstanding = 0;
}

void serving_replica_lost(serving *sv, int tag, const char *why) {
    if (tag < 0 || tag >= sv->n_reps) return;
    replica *r = &sv->reps[tag];
    if (r->state != R_READY && r->state != R_STARTING && r->state != R_DRAINING) return;
    int was_draining = r->state == R_DRAINING;
    if (r->busy) account_iteration(r, 0);     /* the part done before the GPUs went */
    account_load(r);
    if (r->ev_iter) engine_cancel(sv->e, r->ev_iter);
    if (r->ev_load) engine_cancel(sv->e, r->ev_load);
    if (r->ev_ready) engine_cancel(sv->e, r->ev_ready);
    r->ev_iter = r->ev_load = r->ev_ready = 0;
    r->loading = -1;
    integrate_reps(sv);
    sv->active_reps--;
    sv->res.replica_losses++;
    r->state = R_REQUESTED;                   /* the host queued the request again */
    r->startup_s = restart_s(sv);
    event(sv, "replica_lost", "replica %d: %s", r->index, why ? why : "GPUs taken back");
    publish_replicas(sv);
    evict_all(r);
    /* A replica on its way out is not asked for again. */
    if (was_draining || sv->finished) release_replica(r);
}

/* ---- arrivals ---------------------------------------------------------------------- */

static void on_arrival(engine *e, void *arg);

static double diurnal_rate(const sc_inference *c, double t) {
    double period = c->diurnal_period_s > 0 ? c->diurnal_period_s : 86400;
    return c->rate_per_s * (1 + c->diurnal_amplitude * cos(2 * M_PI * (t - c->diurnal_peak_s) / period));
}

/* Time of the next arrival after t (seconds), or -1 when arrivals end. */
static double next_arrival_s(serving *sv, double t) {
    const sc_inference *c = sv->cfg;
    if (sv->target >= 0 && sv->generated >= sv->target) return -1;
    double next;
    if (sv->trace) {
        if (sv->generated >= sv->n_trace) return -1;
        next = sim_to_s(sv->t_start) + sv->trace[sv->generated].t_s;
    } else if (!strcmp(c->arrival_process, "bursty")) {
        next = t + rng_gamma_mean_cv(sv->r_arr, 1.0 / c->rate_per_s, c->arrival_cv);
    } else if (!strcmp(c->arrival_process, "diurnal")) {
        /* Thinning (Lewis and Shedler 1979) against the peak rate. */
        double peak = c->rate_per_s * (1 + c->diurnal_amplitude);
        next = t;
        for (;;) {
            next += rng_exponential(sv->r_arr, 1.0 / peak);
            if (sim_from_s(next) > sv->t_stop) return -1;
            if (rng_uniform(sv->r_arr) * peak <= diurnal_rate(c, next)) break;
        }
    } else {
        next = t + rng_exponential(sv->r_arr, 1.0 / c->rate_per_s);
    }
    if (sim_from_s(next) > sv->t_stop) return -1;
    return next;
}

static void arrivals_end(serving *sv) {
    sv->arrivals_done = 1;
    sv->ev_arrival = 0;
    check_finished(sv);
}

static void on_arrival(engine *e, void *arg) {
    (void)e;
    serving *sv = arg;
    sv->ev_arrival = 0;
    if (sv->offline) {
        sv->backlog = sv->target;
        for (int k = 0; k < sv->n_reps; k++) kick(&sv->reps[k]);
        arrivals_end(sv);
        return;
    }
    int32_t i;
    if (sv->trace) {
        const reqtrace_row *row = &sv->trace[sv->generated];
        i = make_request(sv, row->input, row->output, row->model);
    } else {
        i = generate(sv);
    }
    sv->generated++;
    if (i != NIL) route(sv, i);
    double next = next_arrival_s(sv, sim_to_s(now_of(sv)));
    if (next < 0) arrivals_end(sv);
    else sv->ev_arrival = engine_schedule(sv->e, sim_from_s(next), on_arrival, sv);
}

/* ---- ticks and autoscaling ---------------------------------------------------------- */

static int64_t waiting(const serving *sv) {
    int64_t n = sv->pending.n + (sv->offline ? sv->backlog : 0);
    for (int i = 0; i < sv->n_reps; i++)
        for (int m = 0; m < sv->n_models; m++) n += sv->reps[i].ms[m].queue.n;
    return n;
}

/* p99 of the latencies completed this tick (the last TICK_LAT_N of them),
 * published when there were any; sorts in place (the buffer restarts). */
static void tick_p99(serving *sv, double *x, int64_t *n, metric_id id, sim_time t) {
    if (*n == 0) return;
    size_t k = (size_t)(*n < TICK_LAT_N ? *n : TICK_LAT_N);
    qsort(x, k, sizeof *x, cmp_double);
    size_t at = (size_t)ceil(0.99 * (double)k);
    metrics_sample(sv->bus, id, t, x[at > 0 ? at - 1 : 0]);
    *n = 0;
}

static void on_tick(engine *e, void *arg) {
    (void)e;
    serving *sv = arg;
    sv->ev_tick = 0;
    if (sv->finished) return;
    sim_time t = now_of(sv);
    int64_t run = 0;
    double used = 0, cap = 0;
    for (int i = 0; i < sv->n_reps; i++) {
        run += sv->reps[i].running.n;
        if (sv->reps[i].state == R_STOPPED) continue;
        used += sv->reps[i].kv_used;
        cap += sv->reps[i].kv_cap;
    }
    metrics_sample(sv->bus, sv->m_queue, t, (double)waiting(sv));
    metrics_sample(sv->bus, sv->m_running, t, (double)run);
    metrics_sample(sv->bus, sv->m_kv, t, cap > 0 ? used / cap : 0);
    metrics_sample(sv->bus, sv->m_tps, t, sv->tick_tokens / TICK_S);
    sv->tick_tokens = 0;
    tick_p99(sv, sv->tick_ttft, &sv->tick_n_ttft, sv->m_ttft99, t);
    tick_p99(sv, sv->tick_tpot, &sv->tick_n_tpot, sv->m_tpot99, t);
    sv->ev_tick = engine_after(sv->e, sim_from_s(TICK_S), on_tick, sv);
}

static void on_scale(engine *e, void *arg) {
    (void)e;
    serving *sv = arg;
    const sc_inference *c = sv->cfg;
    sv->ev_scale = 0;
    if (sv->finished) return;
    int ready = 0, starting = 0, requested = 0;
    for (int i = 0; i < sv->n_reps; i++) {
        ready += sv->reps[i].state == R_READY;
        starting += sv->reps[i].state == R_STARTING || sv->reps[i].state == R_REQUESTED;
        requested += sv->reps[i].state == R_REQUESTED;
    }
    double ratio;
    if (!strcmp(c->autoscale_metric, "latency")) {
        double ttft = sv->ttft_n_window ? sv->ttft_sum_window / (double)sv->ttft_n_window : 0;
        /* Nobody got a first token this interval: the oldest waiting one's age. */
        if (!sv->ttft_n_window && sv->pending.n > 0) ttft = sim_to_s(now_of(sv) - sv->rq[sv->pending.head].t_arrive);
        ratio = ttft / c->autoscale_target;
    } else if (!strcmp(c->autoscale_metric, "concurrency")) {
        int64_t inflight = sv->pending.n;
        for (int i = 0; i < sv->n_reps; i++)
            for (int m = 0; m < sv->n_models; m++) inflight += sv->reps[i].ms[m].queue.n + sv->reps[i].ms[m].running;
        ratio = (double)inflight / (ready > 0 ? ready : 1) / c->autoscale_target;
    } else {
        ratio = (double)waiting(sv) / (ready > 0 ? ready : 1) / c->autoscale_target;
    }
    sv->ttft_sum_window = 0;
    sv->ttft_n_window = 0;
    int desired = ready;
    if (fabs(ratio - 1) > SCALE_TOLERANCE || ready == 0) desired = (int)ceil((ready > 0 ? ready : 1) * ratio);
    if (desired < c->min_replicas) desired = c->min_replicas;
    if (desired > c->max_replicas) desired = c->max_replicas;
    if (desired > ready + starting) {
        sv->low_since = -1;
        int added = 0, want = desired - ready - starting;
        /* Replicas still draining come back first: they hold their GPUs. */
        for (int i = 0; i < sv->n_reps && added < want; i++)
            if (sv->reps[i].state == R_DRAINING) {
                sv->reps[i].state = R_READY;
                added++;
            }
        if (added) route_pending(sv);
        int queued = 0;
        for (int k = added; k < want; k++) {
            int rc = start_replica(sv, c->autoscale_startup_s);
            if (rc < 0) break;
            queued += rc;
            added++;
        }
        if (added) {
            sv->res.scale_ups++;
            event(sv, "scale_up", "%d -> %d replicas (%s %.3g of target)", ready + starting,
                  ready + starting + added, c->autoscale_metric, ratio);
        }
        if (queued) {
            sv->res.scale_blocked++;
            event(sv, "scale_blocked", "%d replicas of %d GPUs wait in the scheduler's queue", queued, c->tp);
        }
    } else if (desired < ready + starting && requested > 0) {
        /* Requests still queued for GPUs are withdrawn first (they hold nothing). */
        int drop = ready + starting - desired;
        for (int i = sv->n_reps - 1; i >= 0 && drop > 0; i--)
            if (sv->reps[i].state == R_REQUESTED) {
                release_replica(&sv->reps[i]);
                drop--;
            }
        sv->low_since = -1;
    } else if (desired < ready) {
        if (sv->low_since < 0) sv->low_since = now_of(sv);
        if (sim_to_s(now_of(sv) - sv->low_since) >= c->autoscale_cooldown_s) {
            int drop = ready - desired;
            for (int i = sv->n_reps - 1; i >= 0 && drop > 0; i--) {
                if (sv->reps[i].state != R_READY) continue;
                drain(&sv->reps[i]);
                drop--;
            }
            sv->res.scale_downs++;
            event(sv, "scale_down", "%d -> %d replicas", ready, desired);
            publish_replicas(sv);
            sv->low_since = -1;
        }
    } else {
        sv->low_since = -1;
    }
    sv->ev_scale = engine_after(sv->e, sim_from_s(c->autoscale_interval_s), on_scale, sv);
}

/* ---- the end ------------------------------------------------------------------------- */

static void check_finished(serving *sv) {
    if (sv->finished || !sv->arrivals_done || sv->in_system > 0 || sv->backlog > 0) return;
    sv->finished = 1;
    sv->t_finished = now_of(sv);
    if (sv->ev_tick) engine_cancel(sv->e, sv->ev_tick);
    if (sv->ev_scale) engine_cancel(sv->e, sv->ev_scale);
    sv->ev_tick = sv->ev_scale = 0;
    for (int i = 0; i < sv->n_reps; i++)
        if (!sv->reps[i].busy) release_replica(&sv->reps[i]);
    event(sv, "service_end", "%lld requests completed", (long long)sv->res.requests);
    if (sv->host.finished) sv->host.finished(sv->host.ctx);
}

int serving_done(const serving *sv) { return sv->finished; }

static void cdf(const samples *p, double out[SERVICE_CDF_POINTS]) {
    for (int k = 0; k < SERVICE_CDF_POINTS; k++) out[k] = pct(p, service_cdf_percentiles[k]);
}

/* Energy of the replicas' GPUs by activity, priced by the cost model as a
 * pool of the service's node type holding gpu_s GPU-seconds (its share of
 * the nodes' overhead included). A model load beside iterations of other
 * resident models overlaps them: the overlap counts as compute. */
static void close_energy(serving *sv) {
    service_result *R = &sv->res;
    double held = sv->gpu_s, busy = R->gpu_prefill_s + R->gpu_decode_s;
    if (busy > held) {                       /* rounding of the last iteration's end */
        R->gpu_prefill_s *= held / busy;
        R->gpu_decode_s *= held / busy;
        busy = held;
    }
    if (R->gpu_loading_s > held - busy) R->gpu_loading_s = held - busy;
    const sc_cost *sc = &sv->s->cost;
    const gpu_spec *g = &sv->models[0].g;
    cost_params cp = { .pue = sc->pue, .carbon_kg_per_kwh = sc->carbon_kg_per_kwh,
                       .electricity_usd_per_kwh = sc->electricity_usd_per_kwh, .owned = sc->owned };
    cost_pool p = { .gpus_per_node = sv->node->gpus, .node_s = sv->node->gpus > 0 ? held / sv->node->gpus : 0,
                    .gpu_idle_w = g->idle_w, .gpu_tdp_w = g->tdp_w, .node_overhead_w = sv->node->overhead_w };
    p.gpu_state_s[COST_SERVING_PREFILL] = R->gpu_prefill_s;
    p.gpu_state_s[COST_SERVING_DECODE] = R->gpu_decode_s;
    p.gpu_state_s[COST_SERVING_LOADING] = R->gpu_loading_s;
    p.gpu_state_s[COST_SERVING_IDLE] = held - busy - R->gpu_loading_s;
    cost_result c;
    if (cost_init(&c, &cp) < 0 || cost_add_pool(&c, &p) < 0) {   /* a catalog the model cannot price */
        R->energy_kwh = R->co2_kg = R->avg_gpu_power_w = NAN;
        R->energy_per_output_token_j = -1;
        return;
    }
    R->energy_kwh = c.energy_kwh;
    R->co2_kg = c.co2_kg;
    R->avg_gpu_power_w = held > 0 ? c.gpu_kwh * 3.6e6 / held : 0;
    R->energy_per_output_token_j = R->output_tokens > 0 ? c.energy_kwh * 3.6e6 / R->output_tokens : -1;
}

void serving_close(serving *sv) {
    if (sv->closed) return;
    sv->closed = 1;
    for (int i = 0; i < sv->n_reps; i++) {   /* what is under way counts up to now */
        replica *r = &sv->reps[i];
        if (r->busy) account_iteration(r, 0);
        account_load(r);
    }
    integrate_reps(sv);
    close_energy(sv);
    service_result *R = &sv->res;
    double life = sim_to_s((sv->finished ? sv->t_finished : now_of(sv)) - sv->t_start);
    R->replicas_mean = life > 0 ? sv->replica_s / life : R->replicas;
    R->gpu_hours = sv->gpu_s / 3600;
    const gpu_spec *g = &sv->models[0].g;
    R->cost_usd = R->gpu_hours * cost_price_per_gpu_hour(sv->node, g);
    R->cost_per_million_tokens_usd = R->output_tokens > 0 ? R->cost_usd / (R->output_tokens / 1e6) : -1;
    double span = sim_to_s(sv->last_completion - sv->first_arrival);
    R->first_arrival_s = R->submitted ? sim_to_s(sv->first_arrival) : -1;
    R->last_completion_s = R->requests ? sim_to_s(sv->last_completion) : -1;
    R->output_tokens_per_s = span > 0 ? R->output_tokens / span : 0;
    R->requests_per_s = span > 0 ? (double)R->requests / span : 0;
    samples *all[4] = { &sv->s_ttft, &sv->s_tpot, &sv->s_e2e, &sv->s_queue };
    for (int k = 0; k < 4; k++)
        if (all[k]->n) qsort(all[k]->x, all[k]->n, sizeof(double), cmp_double);
    R->ttft_p50_s = pct(&sv->s_ttft, 50);
    R->ttft_p99_s = pct(&sv->s_ttft, 99);
    R->tpot_p50_s = pct(&sv->s_tpot, 50);
    R->tpot_p99_s = pct(&sv->s_tpot, 99);
    R->e2e_p50_s = pct(&sv->s_e2e, 50);
    R->e2e_p99_s = pct(&sv->s_e2e, 99);
    R->queue_p50_s = pct(&sv->s_queue, 50);
    R->queue_p99_s = pct(&sv->s_queue, 99);
    R->ttft_mean_s = sv->s_ttft.seen ? sv->s_ttft.sum / (double)sv->s_ttft.seen : -1;
    R->tpot_mean_s = sv->s_tpot.seen ? sv->s_tpot.sum / (double)sv->s_tpot.seen : -1;
    R->e2e_mean_s = sv->s_e2e.seen ? sv->s_e2e.sum / (double)sv->s_e2e.seen : -1;
    R->queue_mean_s = sv->s_queue.seen ? sv->s_queue.sum / (double)sv->s_queue.seen : -1;
    cdf(&sv->s_ttft, R->ttft_cdf);
    cdf(&sv->s_tpot, R->tpot_cdf);
    cdf(&sv->s_e2e, R->e2e_cdf);
    R->slo_attainment = R->requests ? (double)sv->slo_ok / (double)R->requests : 1;
    R->slo_met = R->slo_attainment >= sv->cfg->slo_percentile / 100.0 - 1e-12;
    R->kv_utilization_mean = sv->busy_s > 0 ? sv->kv_integral / sv->busy_s : 0;
    R->kv_utilization_peak = sv->kv_peak;
    R->batch_mean = R->iterations ? sv->batch_sum / (double)R->iterations : 0;
    R->busy_fraction = sv->replica_s > 0 ? sv->busy_s / sv->replica_s : 0;
}

const service_result *serving_result(const serving *sv) { return &sv->res; }

size_t serving_samples(const serving *sv, const char *which, const double **x) {
    const samples *p = !strcmp(which, "ttft") ? &sv->s_ttft : !strcmp(which, "tpot") ? &sv->s_tpot
                     : !strcmp(which, "e2e") ? &sv->s_e2e : !strcmp(which, "queue") ? &sv->s_queue : NULL;
    if (!p) return 0;
    *x = p->x;
    return p->n;
}

void serving_free(serving *sv) {
    if (!sv) return;
    for (int i = 0; i < sv->n_reps; i++) {
        replica *r = &sv->reps[i];
        for (int m = 0; r->ms && m < sv->n_models; m++) free(r->ms[m].bucket);
        free(r->ms);
        free(r->heap);
        free(r->ch);
    }
    free(sv->reps);
    free(sv->rq);
    free(sv->models);
    free(sv->share_cum);
    free(sv->load_s);
    free(sv->block_bytes);
    free(sv->memo);
    free(sv->trace);
    free(sv->s_ttft.x);
    free(sv->s_tpot.x);
    free(sv->s_e2e.x);
    free(sv->s_queue.x);
    rng_free(sv->r_arr);
    rng_free(sv->r_len);
    rng_free(sv->r_mod);
    rng_free(sv->r_res);
    free(sv);
}

/* ---- building ----------------------------------------------------------------------------- */

/* The largest coefficient of variation of a length or inter-arrival
 * distribution: beyond it almost every draw is the minimum and the mean
 * rests on draws too rare to appear in a run (and at about 1e154 cv² is no
 * longer a double: the lognormal's parameters become NaN). */
#define CV_MAX 1000.0

/* Every number of <inference> that becomes a time on the clock or a
 * distribution's parameter, range-checked before anything is scheduled.
 * 0, or -1 with err "FILE:LINE: <element attr="v">: why". */
static int check_inputs(const scenario *s, const sc_inference *c, char *err, size_t errlen) {
    char why[160];
    int al = c->arrivals_line > 0 ? c->arrivals_line : c->line;
    if (engine_check_s(c->arrival_start_s, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <arrivals start=\"%g s\">: start %s", s->file, al, c->arrival_start_s, why);
        return -1;
    }
    if (engine_check_s(c->arrival_start_s + c->arrival_duration_s, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <arrivals duration=\"%g s\">: start + duration %s", s->file, al,
                 c->arrival_duration_s, why);
        return -1;
    }
    int timed = !strcmp(c->arrival_process, "poisson") || !strcmp(c->arrival_process, "bursty") ||
                !strcmp(c->arrival_process, "diurnal");
    if (timed && (!(c->rate_per_s > 0) || engine_check_s(1.0 / c->rate_per_s, why, sizeof why) < 0)) {
        snprintf(err, errlen, "%s:%d: <arrivals rate=\"%g/s\">: the mean time between arrivals (%g s) %s", s->file,
                 al, c->rate_per_s, 1.0 / c->rate_per_s, c->rate_per_s > 0 ? why : "is not finite");
        return -1;
    }
    if (!strcmp(c->arrival_process, "bursty") && !(c->arrival_cv > 0 && c->arrival_cv <= CV_MAX)) {
        snprintf(err, errlen, "%s:%d: <arrivals cv=\"%g\">: cv must be in (0, %g]", s->file, al, c->arrival_cv, CV_MAX);
        return -1;
    }
    if (!strcmp(c->arrival_process, "diurnal") &&
        (!(c->diurnal_period_s > 0) || engine_check_s(c->diurnal_period_s, why, sizeof why) < 0)) {
        snprintf(err, errlen, "%s:%d: <arrivals period=\"%g s\">: period %s", s->file, al, c->diurnal_period_s,
                 c->diurnal_period_s > 0 ? why : "must be positive");
        return -1;
    }
    const char *dist[2] = { c->input_dist, c->output_dist };
    const double cv[2] = { c->input_cv, c->output_cv };
    for (int i = 0; i < 2; i++) {
        int uses_cv = !strcmp(dist[i], "lognormal") || !strcmp(dist[i], "gamma");
        if (uses_cv && !(cv[i] > 0 && cv[i] <= CV_MAX)) {
            snprintf(err, errlen, "%s:%d: <inference name=\"%s\">: <requests %s-cv=\"%g\">: %s-cv must be in (0, %g]",
                     s->file, c->line, c->name, i ? "output" : "input", cv[i], i ? "output" : "input", CV_MAX);
            return -1;
        }
    }
    if (engine_check_s(c->model_load_s, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <inference model-load-time=\"%g s\">: model-load-time %s", s->file, c->line,
                 c->model_load_s, why);
        return -1;
    }
    if (c->autoscale) {
        int l = c->autoscale_line > 0 ? c->autoscale_line : c->line;
        const double v[3] = { c->autoscale_interval_s, c->autoscale_startup_s, c->autoscale_cooldown_s };
        static const char *const name[3] = { "interval", "startup", "cooldown" };
        for (int i = 0; i < 3; i++)
            if (engine_check_s(v[i], why, sizeof why) < 0) {
                snprintf(err, errlen, "%s:%d: <autoscale %s=\"%g s\">: %s %s", s->file, l, name[i], v[i], name[i], why);
                return -1;
            }
        /* A tick must move the clock, and a run of hours must not take
         * billions of them. */
        if (!(c->autoscale_interval_s >= 1e-3)) {
            snprintf(err, errlen, "%s:%d: <autoscale interval=\"%g s\">: interval must be at least 1ms", s->file, l,
                     c->autoscale_interval_s);
            return -1;
        }
    }
    return 0;
}

/* A model's time for one iteration or one load must be a time the clock
 * can hold; a catalog figure such as hbm-bw="1e-300B/s" made it infinite
 * or NaN and the replica never finished an iteration. 0, or -1 with err
 * naming the figures of the GPU it came from. */
static int check_model_time(const scenario *s, const sc_inference *c, const gpu_spec *g, const char *what,
                            double t_s, char *err, size_t errlen) {
    char why[160];
    if (t_s > 0 && engine_check_s(t_s, why, sizeof why) == 0) return 0;
    if (!(t_s > 0)) snprintf(why, sizeof why, "is not a positive finite time");
    t_s = isnan(t_s) ? fabs(t_s) : t_s;         /* "nan", not "-nan" */
    snprintf(err, errlen,
             "%s:%d: <inference name=\"%s\">: the serving model gives %s of %g s, which %s; check the catalog "
             "figures of GPU %s (hbm-bw=%g B/s, bf16-tflops=%g)",
             s->file, c->line, c->name, what, t_s, why, g->name, g->hbm_bw_bytes_per_s, g->tflops[PREC_BF16]);
    return -1;
}

serving *serving_new(engine *e, metric_bus *bus, const scenario *s, const sc_inference *c,
                     const node_spec *node, const serving_host *host, char *err, size_t errlen) {
    if (check_inputs(s, c, err, errlen) < 0) return NULL;
    serving *sv = calloc(1, sizeof *sv);
    if (!sv) goto oom;
    sv->e = e;
    sv->bus = bus;
    sv->s = s;
    sv->cfg = c;
    sv->node = node;
    sv->host = *host;
    sv->pending.head = sv->pending.tail = NIL;
    sv->free_rq = NIL;
    sv->low_since = -1;
    snprintf(sv->res.name, sizeof sv->res.name, "%s", c->name);
    sv->res.tp = c->tp;

    /* Models. */
    sv->n_models = c->n_models > 0 ? c->n_models : 1;
    sv->models = calloc((size_t)sv->n_models, sizeof *sv->models);
    sv->share_cum = calloc((size_t)sv->n_models, sizeof *sv->share_cum);
    sv->load_s = calloc((size_t)sv->n_models, sizeof *sv->load_s);
    sv->block_bytes = calloc((size_t)sv->n_models, sizeof *sv->block_bytes);
    sv->memo = malloc((size_t)sv->n_models * sizeof *sv->memo);
    if (!sv->models || !sv->share_cum || !sv->load_s || !sv->block_bytes || !sv->memo) goto oom;
    memset(sv->memo, 0xff, (size_t)sv->n_models * sizeof *sv->memo);   /* every key empty (all ones) */
    const gpu_spec *g = catalog_gpu(s->cat, node->gpu);
    fabric f;
    int have_fabric = fabric_init(&f, s->cat, node, 1) == 0;
    serve_params p;
    serve_params_default(&p);
    if (c->block_tokens > 0) p.block_tokens = c->block_tokens;
    if (c->kv_memory_fraction > 0) p.kv_memory_fraction = c->kv_memory_fraction;
    sv->block = p.block_tokens;
    sv->kv_frac = p.kv_memory_fraction;
    sv->budget = c->token_budget > 0 ? c->token_budget : 8192;
    sv->max_batch = c->max_batch > 0 ? c->max_batch : 256;
    double max_act = 0, sum = 0;
    size_t o = 0;
    for (int m = 0; m < sv->n_models; m++) {
        const char *name = c->n_models ? c->models[m].model : c->model;
        precision w = c->n_models ? c->models[m].precision : c->precision;
        precision kv = c->n_models ? c->models[m].kv_precision : c->kv_precision;
        const llm_spec *ls = catalog_llm(s->cat, name);
        char why[256];
        if (!ls || !g ||
            serve_model_init(&sv->models[m], ls, g, have_fabric ? &f : NULL, c->tp, w, kv, sv->budget, &p, why,
                             sizeof why) < 0) {
            snprintf(err, errlen, "%s:%d: <inference name=\"%s\">: %s", s->file, c->line, c->name,
                     !ls ? "unknown model" : !g ? "the node's GPU is not in the catalog" : why);
            serving_free(sv);
            return NULL;
        }
        const serve_model *sm = &sv->models[m];
        if (sm->activation_bytes > max_act) max_act = sm->activation_bytes;
        sum += c->n_models ? c->models[m].share : 1;
        sv->share_cum[m] = sum;
        sv->block_bytes[m] = sm->kv_bytes_per_token * sv->block;
        sv->load_s[m] = c->model_load_s > 0 ? c->model_load_s : serve_pcie_s(node, sm->weight_bytes);
        if (check_model_time(s, c, g, "a model load time", sv->load_s[m], err, errlen) < 0 ||
            check_model_time(s, c, g, "a one-token iteration time", serve_tokens_s(sm, 1, 1, NULL), err, errlen) < 0 ||
            check_model_time(s, c, g, "a full-budget iteration time",
                             serve_tokens_s(sm, sv->budget, sv->max_batch, NULL), err, errlen) < 0) {
            serving_free(sv);
            return NULL;
        }
        o += (size_t)snprintf(sv->res.models + o, o < sizeof sv->res.models ? sizeof sv->res.models - o : 0,
                              "%s%s", m ? ", " : "", name);
        if (o >= sizeof sv->res.models) o = sizeof sv->res.models - 1;
    }
    sv->usable = g->hbm_bytes - p.runtime_reserve_bytes - max_act;
    for (int m = 0; m < sv->n_models; m++) {
        serve_model *sm = &sv->models[m];
        /* Capacity when this model is alone on the replica: what one
         * request must fit in. */
        double cap = kv_cap_for(sv, sm->weight_bytes);
        sm->kv_capacity_bytes = cap;
        sm->kv_blocks = (long long)floor(cap / sv->block_bytes[m]);
        sm->kv_capacity_tokens = (double)sm->kv_blocks * sv->block;
        if (sm->kv_blocks < 1 || cap < min_kv(sv) * (sv->n_models > 1)) {
            snprintf(err, errlen,
                     "%s:%d: <inference name=\"%s\">: %s (%s, %.1f GB of weights per GPU) does not fit on %d %s "
                     "with room for its KV cache; use a larger tp or a smaller precision",
                     s->file, c->line, c->name, sm->m.name, precision_name(sm->weights), sm->weight_bytes / 1e9,
                     c->tp, g->name);
            serving_free(sv);
            return NULL;
        }
    }
    const serve_model *m0 = &sv->models[0];
    sv->res.weight_bytes_per_gpu = m0->weight_bytes;
    sv->res.kv_capacity_tokens = m0->kv_capacity_tokens;
    sv->res.kv_bytes_per_token = m0->kv_bytes_per_token * c->tp;
    sv->res.kv_blocks_per_replica = (int)(m0->kv_blocks > INT32_MAX ? INT32_MAX : m0->kv_blocks);

    sv->reserve = strcmp(c->kv_allocation, "on-demand") != 0;
    sv->chunked = c->chunked_prefill;
    sv->static_b = !strcmp(c->batching, "static");
    if (sv->static_b) sv->reserve = 1;
    sv->swap = !strcmp(c->kv_preemption, "swap");
    sv->least = strcmp(c->router, "round-robin") != 0;

    /* Random streams, one per purpose. */
    char comp[SC_NAME_MAX + 32];
    snprintf(comp, sizeof comp, "serving/%s/arrivals", c->name);
    sv->r_arr = rng_new(s->seed, comp, 0);
    snprintf(comp, sizeof comp, "serving/%s/lengths", c->name);
    sv->r_len = rng_new(s->seed, comp, 0);
    snprintf(comp, sizeof comp, "serving/%s/models", c->name);
    sv->r_mod = rng_new(s->seed, comp, 0);
    snprintf(comp, sizeof comp, "serving/%s/reservoir", c->name);
    sv->r_res = rng_new(s->seed, comp, 0);
    if (!sv->r_arr || !sv->r_len || !sv->r_mod || !sv->r_res) goto oom;

    /* Arrivals. */
    sv->t_start = sim_from_s(c->arrival_start_s);
    sv->t_stop = c->arrival_duration_s > 0 ? sim_from_s(c->arrival_start_s + c->arrival_duration_s) : SIM_FOREVER;
    sv->offline = !strcmp(c->arrival_process, "offline");
    sv->target = c->count > 0 ? c->count : -1;
    if (!strcmp(c->arrival_process, "trace")) {
        char path[1024];
        scenario_path(s->file, c->trace_href, path, sizeof path);   /* checked by the loader */
        const char *names[64];
        int ctx[64];
        int nm = sv->n_models < 64 ? sv->n_models : 64;
        for (int m = 0; m < nm; m++) {
            names[m] = sv->models[m].m.name;
            ctx[m] = sv->models[m].m.max_context > 0 ? sv->models[m].m.max_context : 1 << 30;
        }
        sv->n_trace = reqtrace_load(path, names, ctx, nm, &sv->trace, err, errlen);
        if (sv->n_trace < 0) {
            serving_free(sv);
            return NULL;
        }
        if (sv->target < 0 || sv->target > sv->n_trace) sv->target = sv->n_trace;
    }

    /* Replicas: the pool is sized for the autoscaler's maximum up front so
     * replicas never move (events point at them). */
    int initial = c->replicas;
    int most = c->autoscale ? (c->max_replicas > initial ? c->max_replicas : initial) : initial;
    if (c->autoscale) {
        if (initial < c->min_replicas) initial = c->min_replicas;
        if (initial > c->max_replicas) initial = c->max_replicas;
    }
    sv->reps = calloc((size_t)most, sizeof *sv->reps);
    if (!sv->reps) goto oom;
    sv->cap_reps = most;
    sv->res.replicas = initial;
    /* Registered before the first replica starts: a replica that is ready
     * at once publishes the replicas count (an id still 0 would be the
     * world's gpus_training). */
    sv->m_queue = metrics_register(bus, c->name, "queue_length");
    sv->m_running = metrics_register(bus, c->name, "running");
    sv->m_replicas = metrics_register(bus, c->name, "replicas");
    sv->m_kv = metrics_register(bus, c->name, "kv_utilization");
    sv->m_tps = metrics_register(bus, c->name, "output_tokens_per_s");
    sv->m_ttft99 = metrics_register(bus, c->name, "ttft_p99_s");
    sv->m_tpot99 = metrics_register(bus, c->name, "tpot_p99_s");
    for (int k = 0; k < initial; k++) {
        if (start_replica(sv, 0) != 0) {
            snprintf(err, errlen, "%s:%d: <inference name=\"%s\">: replica %d of %d needs %d free GPUs of %s; the cluster has no more",
                     s->file, c->line, c->name, k + 1, initial, c->tp, node->name);
            /* Last first: the queued request goes before GPUs come free. */
            for (int i = sv->n_reps - 1; i >= 0; i--) release_replica(&sv->reps[i]);
            serving_free(sv);
            return NULL;
        }
    }

    double first = sim_to_s(sv->t_start);
    if (!sv->offline) {
        double t0 = sv->trace ? -1 : next_arrival_s(sv, first);
        if (sv->trace) t0 = first + sv->trace[0].t_s;
        if (t0 < 0) sv->arrivals_done = 1;
        else sv->ev_arrival = engine_schedule(e, sim_from_s(t0), on_arrival, sv);
    } else {
        sv->ev_arrival = engine_schedule(e, sv->t_start, on_arrival, sv);
    }
    sv->ev_tick = engine_schedule(e, sv->t_start, on_tick, sv);
    if (c->autoscale) sv->ev_scale = engine_schedule(e, sv->t_start + sim_from_s(c->autoscale_interval_s), on_scale, sv);
    event(sv, "service_start", "%d replicas of %d GPUs: %s", initial, c->tp, sv->res.models);
    publish_replicas(sv);
    if (sv->arrivals_done) check_finished(sv);
    return sv;
oom:
    snprintf(err, errlen, "%s:%d: out of memory building <inference name=\"%s\">", s->file, c->line, c->name);
    serving_free(sv);
    return NULL;
}
