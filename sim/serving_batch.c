/*
 * serving_batch: one batch iteration of a replica (vLLM/Orca continuous
 * batching, or static batches): swap preempted sequences back in, preempt
 * when the KV cache cannot take the iteration's growth, schedule prompt
 * chunks and admissions within the batch and token budget, price the
 * iteration with models/serving, and at its end complete the sequences
 * that produced their last token.
 *
 * Decoding sequences are never visited per iteration (serving_int.h):
 * an iteration costs O(admitted + finished · log batch + models).
 */
#include "sim/serving_int.h"

#include <string.h>

#include "models/transformer.h"
#include "sim/serving_disagg.h"

#include "base/grow.h"

/* Give back the KV blocks request i holds (done: it completed); those the
 * prefix cache holds stay cached (serving_prefix.c). */
static void free_kv(replica *r, int32_t i, int64_t blocks, int done) {
    serving *sv = r->sv;
    double shared = sv_prefix_release(r, i, done);
    r->kv_used -= (double)blocks * sv->block_bytes[sv->rq[i].model] - shared;
}

static void complete(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    list_remove(sv->rq, &r->running, i);
    ms->running--;
    ms->last_used = now_of(sv);
    sv_slo_request_done(sv, q);
    sv->in_system--;
    sv_req_free(sv, i);
    sv_closed_next(sv->stats ? sv->stats : sv);   /* a decode pool's users are its service's */
}

/* A decoding sequence, out of the heap, generated its last token in iteration `it`. */
static void finish_decode(replica *r, int32_t i, int64_t it) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    ms->n_dec--;
    ms->S -= q->base;
    if (!sv->reserve) ms->bucket[imod(q->base, sv->block)]--;
    int32_t blocks = sv->reserve ? q->blocks : blocks_for(sv, q->base + it);
    free_kv(r, i, blocks, 1);
    if (sv->static_b) {                  /* a ghost: still computed, its chunk too */
        ms->ghost_n++;
        ms->ghost_S += q->base;
    } else {
        sv_chunk_put(ms, q->base, -1);
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
    ms->n_dec++;
    ms->S += q->base;
    if (!sv->reserve) ms->bucket[imod(q->base, sv->block)]++;
    sv_chunk_put(ms, q->base, 1);
    return sv_heap_push(r, i, j + (q->output - q->gen) - 1);   /* its last decode iteration */
}

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
        free_kv(r, i, q->blocks, 0);
        r->outstanding += q->prefilled;
        q->prefilled = 0;
        q->blocks = 0;
        q->state = RQ_QUEUED;
        list_push_front(sv->rq, &ms->queue, i);
        return;
    }
    /* decoding */
    sv_heap_remove(r, i);
    ms->n_dec--;
    ms->S -= q->base;
    ms->bucket[imod(q->base, sv->block)]--;
    sv_chunk_put(ms, q->base, -1);
    int64_t len = q->base + it - 1;            /* cache after iteration it-1 */
    int32_t blocks = blocks_for(sv, len);
    q->gen += (int32_t)(it - q->dec_start);
    free_kv(r, i, blocks, 0);
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

static int add_chunk(replica *r, int32_t i, int32_t c) {
    if ((size_t)r->n_ch + 1 > r->cap_ch && GROW(r->ch, r->cap_ch, (size_t)r->n_ch + 1)) return -1;
    r->ch[r->n_ch++] = (chunk){ i, c };
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    serve_batch *b = &r->ms[q->model].b;
    b->prefill_tokens += c;
    b->prefill_pairs += tf_mean_pairs(&sv->models[q->model].m, q->prefilled, c);   /* windows and chunks applied */
    b->prefill_tiles += serve_chunk_tiles(c);
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
        if (best < 0 || sv_queue_before(sv, ms->queue.head, r->ms[best].queue.head)) best = m;
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
            i = sv_generate(sv);
        }
        if (sv->backlog == 0) sv_check_finished(sv);
        if (i == NIL) return NIL;
        req *q = &sv->rq[i];
        sv_queue_push(sv, &r->ms[q->model].queue, i);
        r->outstanding += q->input + q->output;
        if (r->ms[q->model].resident != M_LOADED) {
            sv_maybe_load(r);
            return NIL;
        }
        return i;
    }
    return NIL;
}

/* KV blocks a request needs at admission (a prefill pool's requests
 * decode elsewhere: their prompt only). */
static int32_t admit_blocks(const serving *sv, const req *q) {
    int whole = sv->reserve && sv->role != SV_PREFILL;
    return whole ? blocks_for(sv, (int64_t)q->input + q->output) : blocks_for(sv, q->prompt);
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
    q->state = RQ_PREFILL;
    q->prefilled = 0;
    double shared = sv_prefix_admit(r, i);         /* a cached prefix: prefilled, not allocated */
    r->kv_used += q->blocks * sv->block_bytes[q->model] - shared;
    if (!q->admitted) {
        q->admitted = 1;
        q->t_admit = now_of(sv);
        sv_sample_add(sv, &sv->s_queue, sim_to_s(q->t_admit - q->t_arrive));
    }
    list_push_back(sv->rq, &r->running, i);
    plist_push(sv->rq, &r->prefill, i);
    ms->running++;
    ms->last_used = now_of(sv);
}

/* Disaggregated decode pool: admit waiting request i, whose KV cache came
 * from a prefill replica; it decodes from this iteration. 0, or -1 when out
 * of memory. */
static int admit_arrived(replica *r, int32_t i) {
    serving *sv = r->sv;
    req *q = &sv->rq[i];
    mstate *ms = &r->ms[q->model];
    list_remove(sv->rq, &ms->queue, i);
    q->blocks = admit_blocks(sv, q);
    double bytes = q->blocks * sv->block_bytes[q->model];
    r->kv_used += bytes;
    list_push_back(sv->rq, &r->running, i);
    ms->running++;
    ms->last_used = now_of(sv);
    sv_disagg_admitted(r, q, bytes);
    return enter_decode(r, i, r->iter, q->prompt);
}

/* Static batching: when the last batch has finished, a new one of the
 * oldest model's requests, up to max-batch, all prefilled at once. 0, or -1
 * when out of memory. */
static int compose_static(replica *r) {
    serving *sv = r->sv;
    if (r->running.n != 0) return 0;
    for (int m = 0; m < sv->n_models; m++) {          /* no sequence runs: the ghosts go */
        r->ms[m].ghost_n = r->ms[m].ghost_S = 0;
        sv_chunk_clear(&r->ms[m]);
    }
    int32_t i = peek_next(r);
    int model = i != NIL ? sv->rq[i].model : -1;
    while (i != NIL && r->running.n < sv->max_batch && sv->rq[i].model == model &&
           fits(r, admit_blocks(sv, &sv->rq[i]) * sv->block_bytes[model], 0)) {
        admit(r, i);
        i = peek_next(r);
    }
    for (int32_t k = r->prefill.head; k != NIL; k = sv->rq[k].pnext)
        if (add_chunk(r, k, sv->rq[k].prompt - sv->rq[k].prefilled) < 0) return -1;
    return 0;
}

/* On-demand KV: swapped sequences come back first (vLLM: no new prefills
 * while any are out), when the cache holds them and this iteration's
 * growth; their copy over PCIe is added to *extra_s. 0, or -1 when out of
 * memory. */
static int swap_in(replica *r, int64_t it, double *extra_s) {
    serving *sv = r->sv;
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
            *extra_s += serve_pcie_s(sv->node, q->blocks * sv->block_bytes[m]);
            list_push_back(sv->rq, &r->running, i);
            ms->running++;
            if (enter_decode(r, i, it, q->prefilled) < 0) return -1;
        }
    }
    return 0;
}

/* On-demand KV: every decoding sequence whose cache crosses a block
 * boundary in iteration it needs a block now; preempt the youngest until
 * they fit, then take the blocks. */
static void grow_decoders(replica *r, int64_t it) {
    serving *sv = r->sv;
    for (;;) {
        double need = 0;
        int64_t idx = imod(1 - it, sv->block);
        for (int m = 0; m < sv->n_models; m++) need += r->ms[m].bucket[idx] * sv->block_bytes[m];
        if (r->kv_used + need <= r->kv_cap || r->running.n == 0) {
            r->kv_used += need;
            return;
        }
        preempt_youngest(r, it);
    }
}

/* What an iteration of continuous batching may take: everything (prompts
 * beside the decoders), or, with prefill-alone, prompts only or decoders
 * only (vLLM V0's default scheduler). */
enum { COMPOSE_MIXED, COMPOSE_PROMPTS, COMPOSE_DECODES };

/* Continuous batching: prompt chunks of the admitted sequences, oldest
 * first, then new admissions while there is room in the batch, the token
 * budget and the cache. Decode tokens count against the budget (not in a
 * prompts-only iteration: its decoders wait). Without chunking a prompt
 * longer than what is left still runs when it is the iteration's only
 * prompt (the budget is then at least the longest prompt, as vLLM requires
 * without chunked prefill). A decoders-only iteration admits only caches
 * that arrived from a prefill pool. 0, or -1 when out of memory. */
static int compose_continuous(replica *r, int mode) {
    serving *sv = r->sv;
    int64_t n_dec = 0;
    for (int m = 0; m < sv->n_models; m++) n_dec += r->ms[m].n_dec;
    int64_t left = sv->budget - (mode == COMPOSE_PROMPTS ? 0 : n_dec);
    int any = 0;
    for (int32_t i = mode == COMPOSE_DECODES ? NIL : r->prefill.head; i != NIL; i = sv->rq[i].pnext) {
        req *q = &sv->rq[i];
        int64_t rem = q->prompt - q->prefilled, c;
        if (sv->chunked) c = rem < left ? rem : left;
        else c = (rem <= left || !any) ? rem : 0;
        if (c <= 0) break;
        if (add_chunk(r, i, (int32_t)c) < 0) return -1;
        left -= c;
        any = 1;
    }
    int swapped_out = 0;
    for (int m = 0; m < sv->n_models; m++) swapped_out += r->ms[m].swapped.n > 0;
    while (!swapped_out && r->state == R_READY && r->running.n < sv->max_batch &&
           (left > 0 || (!any && !sv->chunked))) {
        int32_t i = peek_next(r);
        if (i == NIL) break;
        req *q = &sv->rq[i];
        if (kv_arrived(q)) {                  /* decodes at once: one token of the budget */
            if (mode == COMPOSE_PROMPTS) break;
            if (!fits(r, admit_blocks(sv, q) * sv->block_bytes[q->model], !sv->reserve)) break;
            if (admit_arrived(r, i) < 0) return -1;
            left--;
            continue;
        }
        if (mode == COMPOSE_DECODES || (!sv->chunked && any && q->prompt > left)) break;
        if (!fits(r, admit_blocks(sv, q) * sv->block_bytes[q->model], !sv->reserve)) break;
        admit(r, i);
        int64_t c = q->prompt - q->prefilled;
        if (sv->chunked && c > left) c = left > 0 ? left : 0;
        if (c <= 0) break;
        if (add_chunk(r, i, (int32_t)c) < 0) return -1;
        left -= c;
        any = 1;
    }
    return 0;
}

/* prefill-alone (vLLM V0's _schedule_default): while no sequence is
 * swapped out, waiting prompts that fit run in an iteration of their own;
 * only when none does do the decoders run, after swap-in and their block
 * growth, with no prompt beside them. 0, or -1 when out of memory. */
static int compose_alone(replica *r, int64_t it, double *extra_s) {
    serving *sv = r->sv;
    int swapped_out = 0;
    for (int m = 0; m < sv->n_models; m++) swapped_out += r->ms[m].swapped.n > 0;
    if (!swapped_out) {
        if (compose_continuous(r, COMPOSE_PROMPTS) < 0) return -1;
        r->prompt_only = r->n_ch > 0;
        if (r->prompt_only) return 0;
    }
    if (!sv->reserve) {
        if (swap_in(r, it, extra_s) < 0) return -1;
        grow_decoders(r, it);
    }
    return compose_continuous(r, COMPOSE_DECODES);
}

/* Price the composed iteration it: one model after another on the same
 * GPUs, plus extra_s of swaps. For power, a model's part is split into what
 * its decode tokens alone would take (memory-bound reads of weights and KV
 * cache, *dec_s) and the rest (the prompt tokens' compute, *pre_s).
 * Returns the duration in seconds; *seqs is the sequences in the batch. */
static double price_iteration(replica *r, int64_t it, double extra_s, double *pre_s, double *dec_s, int64_t *seqs) {
    serving *sv = r->sv;
    double t = extra_s, pre = 0, dec = 0;
    *seqs = 0;
    int dec_on = !r->prompt_only;               /* a prompts-only iteration's decoders wait */
    for (int m = 0; m < sv->n_models; m++) {
        mstate *ms = &r->ms[m];
        int64_t d_tok = dec_on * (ms->n_dec + ms->ghost_n);
        ms->b.decode_seqs = (double)d_tok;
        ms->b.decode_ctx = dec_on * ((double)(ms->S + ms->ghost_S) + (double)d_tok * (double)it);
        ms->b.decode_local = dec_on * sv_chunk_keys(ms, ms->S + ms->ghost_S, it);
        ms->b.local_known = ms->chunk > 0;
        r->produced += dec_on * ms->n_dec + (int64_t)ms->b.prefill_done;
        *seqs += dec_on ? ms->running : 0;
        int64_t tokens = (int64_t)ms->b.prefill_tokens + d_tok;
        if (tokens == 0) continue;
        if (sv->spec.method != SPEC_NONE) {      /* serving_spec.c: 1/E of a speculative step */
            double d, part = sv_spec_part_s(sv, m, &ms->b, &d);
            t += part;
            dec += d;
            pre += part - d;
            continue;
        }
        int64_t rows = d_tok + (int64_t)ms->b.prefill_done;
        if (ms->b.prefill_tokens <= 0)          /* decode only: the engine replays a captured graph */
            tokens = rows = sv_graph_batch(sv, m, d_tok);
        serve_breakdown ctx;                    /* its decode reads: what the decode tokens alone read */
        double part = sv_tokens_s(sv, m, tokens, rows) +
                      serve_context_local_s(&sv->models[m], ms->b.prefill_pairs, ms->b.prefill_tiles,
                                            ms->b.decode_ctx, ms->b.decode_seqs,
                                            ms->b.local_known ? ms->b.decode_local : -1, &ctx);
        t += part;
        double d = part;
        if (ms->b.prefill_tokens > 0) d = d_tok > 0 ? sv_tokens_s(sv, m, d_tok, d_tok) + ctx.kv_read_s : 0;
        if (d > part) d = part;
        dec += d;
        pre += part - d;
    }
    if (!dec_on) *seqs = r->n_ch;               /* the prompts it runs */
    *pre_s = pre;
    *dec_s = dec;
    /* the host prepares each iteration while the GPUs run the one before
     * (the longer sets the pace), or takes turns with them (a synchronous
     * engine: they add up): models/serving.h serve_host_s; a speculative
     * step's host work is shared by the tokens it gives */
    double host = serve_host_s(&sv->models[0], (double)*seqs);
    if (sv->spec.method != SPEC_NONE) host /= sv_spec_tokens(sv);   /* else 1: x / 1 is x */
    return serve_pace_s(&sv->models[0].p, t, host);
}

static void on_iter_end(engine *e, void *arg);

/* Compose and start the next iteration, or go idle (the hook sv->start_iteration). */
void sv_start_iteration(replica *r) {
    serving *sv = r->sv;
    if (r->busy || !(r->state == R_READY || r->state == R_DRAINING)) return;
    int64_t it = r->iter;
    r->n_ch = 0;
    r->produced = 0;
    double extra = r->swap_s;
    r->swap_s = 0;
    r->prompt_only = 0;
    if (sv->static_b) {
        if (compose_static(r) < 0) return;
    } else if (sv->prefill_alone) {
        if (compose_alone(r, it, &extra) < 0) return;
    } else {
        if (!sv->reserve) {
            if (swap_in(r, it, &extra) < 0) return;
            grow_decoders(r, it);
        }
        if (compose_continuous(r, COMPOSE_MIXED) < 0) return;
    }
    /* Loaded models have taken what they could; now a model with waiting
     * requests may be loaded in their place. Idle cached prefixes give
     * way to what runs. */
    sv_maybe_load(r);
    sv_prefix_trim(r);
    double pre, dec;
    int64_t seqs;
    double t = price_iteration(r, it, extra, &pre, &dec, &seqs);
    if (!(t > 0) || (seqs == 0 && extra == 0)) {
        for (int m = 0; m < sv->n_models; m++) memset(&r->ms[m].b, 0, sizeof r->ms[m].b);
        if (r->state == R_DRAINING) sv_release_replica(r);
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
    int dec_on = !r->prompt_only;   /* else its decoders waited: they resume at the same decode index */
    r->ev_iter = 0;
    r->prompt_only = 0;
    sv_account_iteration(r, 1);
    /* Decoders that produced their last token. */
    while (dec_on && r->heap_n > 0 && r->heap[0].iter <= it) finish_decode(r, sv_heap_pop(r), it);
    /* Prompt chunks: a prompt that completes samples a token. */
    for (int k = 0; k < r->n_ch; k++) {
        int32_t i = r->ch[k].r;
        req *q = &sv->rq[i];
        q->prefilled += r->ch[k].c;
        r->outstanding -= r->ch[k].c;
        if (q->prefilled < q->prompt) continue;
        plist_remove(sv->rq, &r->prefill, i);
        sv_prefix_insert(r, i);
        q->gen++;
        if (q->t_first < 0) {
            q->t_first = now_of(sv);
            sv->ttft_sum_window += sim_to_s(q->t_first - q->t_arrive);
            sv->ttft_n_window++;
        }
        if (q->gen >= q->output) {
            free_kv(r, i, q->blocks, 1);
            complete(r, i);
        } else if (sv->role == SV_PREFILL) {
            sv_disagg_send(r, i, sim_to_s(now_of(sv) - r->it_t0));   /* decodes in the other pool */
        } else if (enter_decode(r, i, it + dec_on, q->prompt) < 0) {
            continue;
        }
    }
    r->outstanding -= (double)r->produced;
    for (int m = 0; m < sv->n_models; m++) memset(&r->ms[m].b, 0, sizeof r->ms[m].b);
    r->iter += dec_on;
    r->busy = 0;
    sv_start_iteration(r);
    sv_check_finished(sv);
}
