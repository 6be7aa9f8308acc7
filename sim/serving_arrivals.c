/*
 * serving_arrivals: where requests come from.
 * Arrival processes: offline (a backlog drawn when a replica has room, so a
 * million requests submitted at once cost no memory until admitted),
 * Poisson, bursty (gamma inter-arrivals), diurnal (thinning against the peak
 * rate), a replayed trace (scenarios/reqtrace.c) and a closed loop (users
 * who each send the next request a think time after the last one ends). Lengths and models are
 * drawn from their own random streams; a request that arrives goes to the
 * router (serving_router.c).
 */
#include "sim/serving_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The laws of request lengths and arrival gaps, resolved from their
 * names once (sv_arrivals_init) so that a draw compares no string; a
 * lognormal's or gamma's parameters are worked out once from its mean and
 * cv, by the same arithmetic rng_lognormal_mean_cv and rng_gamma_mean_cv
 * do per draw, so the draws are the same numbers. */
enum { LEN_FIXED, LEN_EXPONENTIAL, LEN_LOGNORMAL, LEN_GAMMA, LEN_UNIFORM };
enum { ARR_POISSON, ARR_BURSTY, ARR_DIURNAL, ARR_OTHER };

static sv_len_law len_law(const char *dist, double mean, double cv) {
    sv_len_law L = { LEN_FIXED, mean, cv > 0 ? cv : 1, 0, 0 };
    if (!strcmp(dist, "exponential")) L.kind = LEN_EXPONENTIAL;
    else if (!strcmp(dist, "lognormal")) L.kind = LEN_LOGNORMAL;
    else if (!strcmp(dist, "gamma")) L.kind = LEN_GAMMA;
    else if (!strcmp(dist, "uniform")) L.kind = LEN_UNIFORM;
    if (L.kind == LEN_LOGNORMAL) {                 /* rng.c rng_lognormal_mean_cv */
        double s2 = log1p(L.cv * L.cv);
        L.a = log(mean) - 0.5 * s2;
        L.b = sqrt(s2);
    } else if (L.kind == LEN_GAMMA) {              /* rng.c rng_gamma_mean_cv */
        L.a = 1.0 / (L.cv * L.cv);
        L.b = mean / L.a;
    }
    return L;
}

static int draw_len(rng *r, const sv_len_law *L) {
    double x = L->mean;
    if (L->kind == LEN_EXPONENTIAL) x = rng_exponential(r, L->mean);
    else if (L->kind == LEN_LOGNORMAL) x = L->b > 0 ? rng_lognormal(r, L->a, L->b) : rng_lognormal_mean_cv(r, L->mean, L->cv);
    else if (L->kind == LEN_GAMMA) x = L->b > 0 ? rng_gamma(r, L->a, L->b) : rng_gamma_mean_cv(r, L->mean, L->cv);
    else if (L->kind == LEN_UNIFORM) x = 1 + rng_uniform(r) * (2 * L->mean - 2);
    x = floor(x + 0.5);
    if (!(x >= 1)) x = 1;                          /* also NaN: never an undefined cast */
    if (x > 1e8) x = 1e8;
    return (int)x;
}

/* The length laws of the classes (input, output of each), or of the
 * service's <requests> without classes. 0, or -1 when out of memory. */
static int len_laws_init(serving *sv) {
    const sc_inference *c = sv->cfg;
    int n = c->n_classes > 0 ? c->n_classes : 1;
    sv->len_law = malloc((size_t)n * 2 * sizeof *sv->len_law);
    if (!sv->len_law) return -1;
    if (c->n_classes == 0) {
        sv->len_law[0] = len_law(c->input_dist, c->input_tokens, c->input_cv);
        sv->len_law[1] = len_law(c->output_dist, c->output_tokens, c->output_cv);
    }
    for (int k = 0; k < c->n_classes; k++) {
        const sc_serve_class *K = &c->classes[k];
        sv->len_law[2 * k] = len_law(K->input_dist, K->input_tokens, K->input_cv);
        sv->len_law[2 * k + 1] = len_law(K->output_dist, K->output_tokens, K->output_cv);
    }
    return 0;
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
static int32_t make_request(serving *sv, int input, int output, int model, int cls) {
    const serve_model *sm = &sv->models[model];
    int ctx = sm->m.max_context > 1 ? sm->m.max_context : 1 << 30;
    if (input >= ctx) input = ctx - 1;
    if (input + output > ctx) output = ctx - input;
    if ((double)input + output > sm->kv_capacity_tokens) {
        sv->rejected++;
        return NIL;
    }
    int32_t i = sv_req_alloc(sv);
    if (i == NIL) return NIL;
    req *q = &sv->rq[i];
    q->t_arrive = sv->offline ? sv->t_start : now_of(sv);   /* offline: all submitted at the start */
    q->input = q->prompt = input;
    q->output = output;
    q->model = (int16_t)model;
    q->cls = (int16_t)cls;
    q->state = RQ_QUEUED;
    if (sv->res.submitted == 0) sv->first_arrival = q->t_arrive;
    sv->res.submitted++;
    sv_slo_arrived(sv, q);
    sv->in_system++;
    sv->res.input_tokens += input;
    return i;
}

/* Lengths of a request of class cls (class 0 without classes). */
static void draw_lengths(serving *sv, int cls, int *in, int *out) {
    *in = draw_len(sv->r_len, &sv->len_law[2 * cls]);
    *out = draw_len(sv->r_len, &sv->len_law[2 * cls + 1]);
}

int32_t sv_generate(serving *sv) {
    int model = pick_model(sv);
    int cls = sv_class_draw(sv), in, out;
    draw_lengths(sv, cls, &in, &out);
    pfx_chain ch;
    in = sv_prefix_draw(sv, in, out, model, &ch);
    int32_t i = make_request(sv, in, out, model, cls);
    if (i != NIL) sv->rq[i].chain = ch;
    return i;
}

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
    } else if (sv->arrival_kind == ARR_BURSTY) {
        next = t + rng_gamma_mean_cv(sv->r_arr, 1.0 / c->rate_per_s, c->arrival_cv);
    } else if (sv->arrival_kind == ARR_DIURNAL) {
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
    sv_check_finished(sv);
}

static void on_arrival(engine *e, void *arg) {
    (void)e;
    serving *sv = arg;
    sv->ev_arrival = 0;
    if (sv->offline) {
        sv->backlog = sv->target;
        for (int k = 0; k < sv->n_reps; k++) sv_kick(&sv->reps[k]);
        arrivals_end(sv);
        return;
    }
    int32_t i;
    if (sv->trace) {
        const reqtrace_row *row = &sv->trace[sv->generated];
        i = make_request(sv, row->input, row->output, row->model, row->cls >= 0 ? row->cls : sv_class_draw(sv));
        if (i != NIL) sv_prefix_from_trace(sv, row, &sv->rq[i].chain);
    } else {
        i = sv_generate(sv);
    }
    sv->generated++;
    if (i != NIL) sv_route(sv, i);
    double next = next_arrival_s(sv, sim_to_s(now_of(sv)));
    if (next < 0) arrivals_end(sv);
    else sv->ev_arrival = engine_schedule(sv->e, sim_from_s(next), on_arrival, sv);
}

/* The service's request trace (<arrivals process="trace">), read in its
 * format (scenarios/reqtrace.h): rows, prefix block pool and block size
 * into sv. 0, or -1 with err. */
static int load_trace(serving *sv, char *err, size_t errlen) {
    const sc_inference *c = sv->cfg;
    char path[1024];
    scenario_path(sv->s->file, c->trace_href, path, sizeof path);   /* checked by the loader */
    const char *names[64], *classes[64];
    int ctx[64];
    int nm = sv->n_models < 64 ? sv->n_models : 64;
    for (int m = 0; m < nm; m++) {
        names[m] = sv->models[m].m.name;
        ctx[m] = sv->models[m].m.max_context > 0 ? sv->models[m].m.max_context : 1 << 30;
    }
    int format = reqtrace_format_parse(c->trace_format[0] ? c->trace_format : "auto");
    const reqtrace_opts o = { format < 0 ? REQTRACE_AUTO : (reqtrace_format)format, c->trace_time_scale, c->trace_skip_s };
    int nc = c->n_classes < 64 ? c->n_classes : 64;     /* the loader allows at most 64 */
    for (int k = 0; k < nc; k++) classes[k] = c->classes[k].name;
    const reqtrace_models sm = { names, ctx, nm, classes, nc };
    reqtrace t;
    if (reqtrace_read(path, &o, &sm, &t, err, errlen) < 0) return -1;
    sv->trace = t.rows;
    sv->n_trace = t.n;
    sv->trace_blocks = t.blocks;
    sv->n_trace_blocks = t.n_blocks;
    sv->trace_block_tokens = t.block_tokens;
    if (sv->target < 0 || sv->target > sv->n_trace) sv->target = sv->n_trace;
    return 0;
}

int sv_arrivals_init(serving *sv, char *err, size_t errlen) {
    const sc_inference *c = sv->cfg;
    sv->t_start = sim_from_s(c->arrival_start_s);
    sv->t_stop = c->arrival_duration_s > 0 ? sim_from_s(c->arrival_start_s + c->arrival_duration_s) : SIM_FOREVER;
    sv->offline = !strcmp(c->arrival_process, "offline");
    sv->closed_loop = !strcmp(c->arrival_process, "closed");
    sv->target = c->count > 0 ? c->count : -1;
    sv->arrival_kind = !strcmp(c->arrival_process, "bursty") ? ARR_BURSTY
                       : !strcmp(c->arrival_process, "diurnal") ? ARR_DIURNAL
                       : !strcmp(c->arrival_process, "poisson") ? ARR_POISSON : ARR_OTHER;
    sv->think_exponential = !strcmp(c->think_dist, "exponential");
    if (len_laws_init(sv) < 0) {
        snprintf(err, errlen, "%s:%d: out of memory building <inference name=\"%s\">", sv->s->file, c->line, c->name);
        return -1;
    }
    if (strcmp(c->arrival_process, "trace") != 0) return 0;
    return load_trace(sv, err, errlen);
}

/* ---- Closed loop ----------------------------------------------------------
 * cfg->closed_users users; each sends a request, waits for it to end (or to
 * be rejected), thinks (think_time_s: fixed, or exponential with that mean,
 * from the arrivals stream) and sends the next, until count requests have
 * been sent or the duration is over. All users send their first request at
 * the start (genai-perf's --concurrency, vLLM bench's --max-concurrency). */

static void on_closed_arrival(engine *e, void *arg);

/* Whether one more request may still be sent now. */
static int closed_open(const serving *sv) {
    if (sv->target >= 0 && sv->generated + sv->closed_pending >= sv->target) return 0;
    return now_of(sv) <= sv->t_stop;
}

/* A user's request ended (or was rejected): it thinks, then sends the next. */
void sv_closed_next(serving *sv) {
    if (!sv->closed_loop || sv->arrivals_done) return;
    if (!closed_open(sv)) {
        if (sv->closed_pending == 0) arrivals_end(sv);
        return;
    }
    const sc_inference *c = sv->cfg;
    double think = c->think_time_s;
    if (think > 0 && sv->think_exponential) think = rng_exponential(sv->r_arr, think);
    sv->closed_pending++;
    engine_after(sv->e, sim_from_s(think), on_closed_arrival, sv);
}

static void on_closed_arrival(engine *e, void *arg) {
    (void)e;
    serving *sv = arg;
    sv->closed_pending--;
    if (now_of(sv) > sv->t_stop) {              /* the duration ended while the user thought */
        if (sv->closed_pending == 0 && !sv->arrivals_done) arrivals_end(sv);
        return;
    }
    int32_t i = sv_generate(sv);
    sv->generated++;
    if (i != NIL) sv_route(sv, i);
    else sv_closed_next(sv);                    /* rejected: the user tries again */
    if (sv->target >= 0 && sv->generated >= sv->target && !sv->arrivals_done) arrivals_end(sv);
}

static void closed_start(serving *sv) {
    int64_t users = sv->cfg->closed_users;
    if (sv->target >= 0 && users > sv->target) users = sv->target;
    sv->closed_pending = users;
    for (int64_t u = 0; u < users; u++) engine_schedule(sv->e, sv->t_start, on_closed_arrival, sv);
    if (users == 0) sv->arrivals_done = 1;
}

void sv_arrivals_start(serving *sv) {
    double first = sim_to_s(sv->t_start);
    if (sv->closed_loop) {
        closed_start(sv);
        return;
    }
    if (!sv->offline) {
        double t0 = sv->trace ? -1 : next_arrival_s(sv, first);
        if (sv->trace) t0 = first + sv->trace[0].t_s;
        if (sv->trace && sim_from_s(t0) > sv->t_stop) t0 = -1;          /* the trace starts after duration */
        if (t0 < 0) sv->arrivals_done = 1;
        else sv->ev_arrival = engine_schedule(sv->e, sim_from_s(t0), on_arrival, sv);
    } else {
        sv->ev_arrival = engine_schedule(sv->e, sv->t_start, on_arrival, sv);
    }
}
