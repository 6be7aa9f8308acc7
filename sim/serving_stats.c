/*
 * serving_stats: what a service measures. Latency samples (TTFT, TPOT, end
 * to end, queueing) kept exactly up to 4M per metric and then as a
 * reservoir; nearest-rank percentiles and CDF points; SLO attainment; the
 * replicas' time and their GPUs' time by activity; the 10-second metric
 * ticks; and at the close the energy, cost, prefix-cache figures and the
 * service_result.
 */
#include "sim/serving_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/select.h"
#include "models/cost.h"
#include "models/gpu.h"

/* The CDF points kept in service_result (serving_types.h). */
const double service_cdf_percentiles[SERVICE_CDF_POINTS] = { 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100 };

/* Samples past which an array moves to room for the whole reservoir on
 * huge pages (sv_big_alloc): 2 MB of them. */
#define SAMPLES_BIG (1u << 18)

/* Move p's samples to room for RESERVOIR of them; -1 when out of memory (p unchanged). */
static int samples_to_big(samples *p) {
    double *x = sv_big_alloc((size_t)RESERVOIR * sizeof *x);
    if (!x) return -1;
    memcpy(x, p->x, p->n * sizeof *x);
    free(p->x);
    p->x = x;
    p->cap = RESERVOIR;
    return 0;
}

/* A reservoir's replacement is a store to a random slot of 32 MB: a cache
 * miss, and the stores after it wait behind it (x86 commits stores in
 * order), so a run past 4M requests stalled on each (`sv_sample_add`, 9%
 * of a 1e7-request run). The log lets SAMPLES_LOG of them be fetched at
 * once, then written in the order they came (a later replacement of a
 * slot still wins): the same reservoir. */
void sv_samples_flush(samples *p) {
    for (int j = 0; j < p->log_n; j++) __builtin_prefetch(&p->x[p->log_k[j]], 1);
    for (int j = 0; j < p->log_n; j++) p->x[p->log_k[j]] = p->log_v[j];
    p->log_n = 0;
}

void sv_sample_add(serving *sv, samples *p, double v) {
    p->seen++;
    p->sum += v;
    if (p->n < RESERVOIR) {
        if (p->n == SAMPLES_BIG && p->cap < RESERVOIR) (void)samples_to_big(p);   /* out of memory: small pages */
        if (p->n + 1 > p->cap && GROW(p->x, p->cap, p->n + 1)) return;   /* out of memory: counted, not kept */
        p->x[p->n++] = v;
        return;
    }
    uint64_t k = rng_uniform_int(sv->r_res, (uint64_t)p->seen);
    if (k >= RESERVOIR) return;
    p->log_k[p->log_n] = (uint32_t)k;
    p->log_v[p->log_n] = v;
    if (++p->log_n == SAMPLES_LOG) sv_samples_flush(p);
}

void sv_stats_complete(serving *sv, const req *q, double *ttft_s, double *tpot_s, double *e2e_s) {
    sim_time now = now_of(sv);
    if (sv->stats) sv = sv->stats;           /* a decode pool's requests are its service's */
    double ttft = sim_to_s(q->t_first - q->t_arrive);
    double e2e = sim_to_s(now - q->t_arrive);
    sv_sample_add(sv, &sv->s_ttft, ttft);
    sv_sample_add(sv, &sv->s_e2e, e2e);
    sv_sample_add(sv, &sv->s_ttft_admit, sim_to_s(q->t_first - q->t_admit));
    sv->tick_ttft[sv->tick_n_ttft++ % TICK_LAT_N] = ttft;
    double tpot = -1;                        /* one output token: no time per output token */
    if (q->output > 1) {
        tpot = sim_to_s(now - q->t_first) / (q->output - 1);
        sv_sample_add(sv, &sv->s_tpot, tpot);
        sv->tick_tpot[sv->tick_n_tpot++ % TICK_LAT_N] = tpot;
    }
    *ttft_s = ttft;
    *tpot_s = tpot;
    *e2e_s = e2e;
    sv->res.requests++;
    sv->res.output_tokens += q->output;
    sv->tick_tokens += q->output;
    sv->last_completion = now;
}

void sv_samples_summary(samples *p, double *p50, double *p99, double *mean) {
    static const double q[] = { 50, 99 };
    double v[2];
    sv_samples_flush(p);
    (void)select_percentile_values(p->x, p->n, q, 2, v);   /* 2 percentiles: no memory asked */
    *p50 = v[0];
    *p99 = v[1];
    *mean = p->seen ? p->sum / (double)p->seen : -1;
}

/* Replicas held over time, for GPU-hours and the mean replica count. */
void sv_integrate_reps(serving *sv) {
    sim_time t = now_of(sv);
    double dt = sim_to_s(t - sv->last_change);
    sv->replica_s += sv->active_reps * dt;
    sv->gpu_s += (double)sv->active_reps * sv->rep_gpus * dt;
    sv->last_change = t;
}

/* Activities of the replicas' GPUs (service_result gpu_*_s): an iteration
 * is counted when it ends, or the part of it done when it is cut short (the
 * GPUs lost, the end of the run); a start-up or model load likewise. */
void sv_account_iteration(replica *r, int whole) {
    serving *sv = r->sv;
    double t = r->it_prefill_s + r->it_decode_s + r->it_copy_s, f = 1;
    if (!whole && t > 0) {
        double done = sim_to_s(now_of(sv) - r->it_t0);
        f = done < t ? done / t : 1;
    }
    double tp = sv->rep_gpus;
    sv->res.gpu_prefill_s += f * r->it_prefill_s * tp;
    sv->res.gpu_decode_s += f * r->it_decode_s * tp;
    sv->res.gpu_loading_s += f * r->it_copy_s * tp;
    r->it_prefill_s = r->it_decode_s = r->it_copy_s = 0;
}

void sv_account_load(replica *r) {
    if (r->load_t0 < 0) return;
    serving *sv = r->sv;
    sv->res.gpu_loading_s += sim_to_s(now_of(sv) - r->load_t0) * sv->rep_gpus;
    r->load_t0 = -1;
}

int64_t sv_waiting(const serving *sv) {
    int64_t n = sv->pending.n + (sv->offline ? sv->backlog : 0);
    for (int i = 0; i < sv->n_reps; i++)
        for (int m = 0; m < sv->n_models; m++) n += sv->reps[i].ms[m].queue.n;
    return n;
}

/* The largest values a tick's p99 is read among: 1% of TICK_LAT_N, and one more. */
#define TICK_TOP 12

/* Put v in the min-heap top[0..m) in place of its least. */
static void top_replace(double *top, int m, double v) {
    int pos = 0;
    for (int c = 1; c < m; c = 2 * pos + 1) {
        if (c + 1 < m && top[c + 1] < top[c]) c++;
        if (!(top[c] < v)) break;
        top[pos] = top[c];
        pos = c;
    }
    top[pos] = v;
}

/* The value at ascending rank `at` of x[0..k): the least of the k - at
 * largest, kept in a min-heap over one pass when they are few (a p99:
 * 11 of 1024), which is several times cheaper than a selection that
 * moves the array (18,000 ticks of two such reads in a 1e7-request run:
 * 2.5% of it); else select_nth. */
static double value_at_rank(double *x, size_t k, size_t at) {
    int m = (int)(k - at);
    if (m > TICK_TOP) {
        select_nth(x, k, at);
        return x[at];
    }
    double top[TICK_TOP];
    for (int i = 0; i < m; i++) top[i] = -INFINITY;
    for (size_t i = 0; i < k; i++)
        if (x[i] > top[0]) top_replace(top, m, x[i]);
    return top[0];
}

/* p99 of the latencies completed this tick (the last TICK_LAT_N of them),
 * published when there were any (the buffer restarts). */
static void tick_p99(serving *sv, double *x, int64_t *n, metric_id id, sim_time t) {
    if (*n == 0) return;
    size_t k = (size_t)(*n < TICK_LAT_N ? *n : TICK_LAT_N);
    metrics_sample(sv->bus, id, t, value_at_rank(x, k, select_pct_index(99, k)));
    *n = 0;
}

void sv_on_tick(engine *e, void *arg) {
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
    metrics_sample(sv->bus, sv->m_queue, t, (double)sv_waiting(sv));
    metrics_sample(sv->bus, sv->m_running, t, (double)run);
    metrics_sample(sv->bus, sv->m_kv, t, cap > 0 ? used / cap : 0);
    metrics_sample(sv->bus, sv->m_tps, t, sv->tick_tokens / TICK_S);
    sv->tick_tokens = 0;
    tick_p99(sv, sv->tick_ttft, &sv->tick_n_ttft, sv->m_ttft99, t);
    tick_p99(sv, sv->tick_tpot, &sv->tick_n_tpot, sv->m_tpot99, t);
    sv->ev_tick = engine_after(sv->e, sim_from_s(TICK_S), sv_on_tick, sv);
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

/* Prefix caching: the share of admitted prompt tokens served from a
 * cache, the tokens saved, the cached blocks evicted. */
static void close_prefix(serving *sv) {
    service_result *R = &sv->res;
    R->prefix_caching = sv->prefix_on;
    if (!sv->prefix_on) return;
    R->prefill_tokens_saved = sv->prefill_tokens_saved;
    R->prefix_hit_rate = sv->prompt_tokens_admitted > 0 ? sv->prefill_tokens_saved / sv->prompt_tokens_admitted : 0;
    R->prefix_evictions = 0;
    for (int i = 0; i < sv->n_reps; i++) R->prefix_evictions += sv->reps[i].pc.evicted;
}

void sv_stats_close(serving *sv) {
    if (sv->closed) return;
    sv->closed = 1;
    for (int i = 0; i < sv->n_reps; i++) {   /* what is under way counts up to now */
        replica *r = &sv->reps[i];
        if (r->busy) sv_account_iteration(r, 0);
        sv_account_load(r);
    }
    sv_integrate_reps(sv);
    close_energy(sv);
    service_result *R = &sv->res;
    double life = sim_to_s((sv->finished ? sv->t_finished : now_of(sv)) - sv->t_start);
    R->replicas_mean = life > 0 ? sv->replica_s / life : R->replicas;
    R->gpu_hours = sv->gpu_s / 3600;
    R->gpus_peak = R->replicas_peak * sv->rep_gpus;
    const gpu_spec *g = &sv->models[0].g;
    R->cost_usd = R->gpu_hours * cost_price_per_gpu_hour(sv->node, g);
    R->cost_per_million_tokens_usd = R->output_tokens > 0 ? R->cost_usd / (R->output_tokens / 1e6) : -1;
    double span = sim_to_s(sv->last_completion - sv->first_arrival);
    R->first_arrival_s = R->submitted ? sim_to_s(sv->first_arrival) : -1;
    R->last_completion_s = R->requests ? sim_to_s(sv->last_completion) : -1;
    R->output_tokens_per_s = span > 0 ? R->output_tokens / span : 0;
    R->requests_per_s = span > 0 ? (double)R->requests / span : 0;
    /* every percentile read below, each array in one pass: the CDF points
     * (which hold p50 and p99) of the three latencies with a CDF, p50 and
     * p99 of the other two (select_percentile_values: -1 when empty) */
    static const int at50 = 4, at99 = 8;           /* service_cdf_percentiles[4] = 50, [8] = 99 */
    sv_samples_flush(&sv->s_ttft);
    sv_samples_flush(&sv->s_tpot);
    sv_samples_flush(&sv->s_e2e);
    (void)select_percentile_values(sv->s_ttft.x, sv->s_ttft.n, service_cdf_percentiles, SERVICE_CDF_POINTS, R->ttft_cdf);
    (void)select_percentile_values(sv->s_tpot.x, sv->s_tpot.n, service_cdf_percentiles, SERVICE_CDF_POINTS, R->tpot_cdf);
    (void)select_percentile_values(sv->s_e2e.x, sv->s_e2e.n, service_cdf_percentiles, SERVICE_CDF_POINTS, R->e2e_cdf);
    double mean;
    sv_samples_summary(&sv->s_queue, &R->queue_p50_s, &R->queue_p99_s, &mean);
    sv_samples_summary(&sv->s_ttft_admit, &R->ttft_admit_p50_s, &R->ttft_admit_p99_s, &mean);
    R->ttft_p50_s = R->ttft_cdf[at50];
    R->ttft_p99_s = R->ttft_cdf[at99];
    R->tpot_p50_s = R->tpot_cdf[at50];
    R->tpot_p99_s = R->tpot_cdf[at99];
    R->e2e_p50_s = R->e2e_cdf[at50];
    R->e2e_p99_s = R->e2e_cdf[at99];
    R->ttft_mean_s = sv->s_ttft.seen ? sv->s_ttft.sum / (double)sv->s_ttft.seen : -1;
    R->tpot_mean_s = sv->s_tpot.seen ? sv->s_tpot.sum / (double)sv->s_tpot.seen : -1;
    R->e2e_mean_s = sv->s_e2e.seen ? sv->s_e2e.sum / (double)sv->s_e2e.seen : -1;
    R->queue_mean_s = sv->s_queue.seen ? sv->s_queue.sum / (double)sv->s_queue.seen : -1;
    R->slo_attainment = R->requests ? (double)sv->slo_ok / (double)R->requests : 1;
    R->slo_met = R->slo_attainment >= sv->cfg->slo_percentile / 100.0 - 1e-12;
    R->kv_utilization_mean = sv->busy_s > 0 ? sv->kv_integral / sv->busy_s : 0;
    R->kv_utilization_peak = sv->kv_peak;
    R->batch_mean = R->iterations ? sv->batch_sum / (double)R->iterations : 0;
    R->busy_fraction = sv->replica_s > 0 ? sv->busy_s / sv->replica_s : 0;
    close_prefix(sv);
}
