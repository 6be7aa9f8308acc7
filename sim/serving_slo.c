/*
 * serving_slo: request classes and the figures of each class and each
 * multiplexed model (docs/serving-slo.md).
 *
 * A request's class is drawn by share from its own random stream (so a
 * service without classes draws nothing more and runs as before), or named
 * by its trace row. Its class sets its lengths, its SLO and its admission
 * priority: with priorities, a replica's waiting requests are kept in
 * priority order, arrival order within a priority (vLLM's
 * scheduling-policy "priority", SGLang's priority scheduling, TensorRT-LLM's
 * request priority; the running sequences are not preempted for a waiting
 * one of higher priority).
 *
 * Each class, and each model of a multiplexed service, keeps its own TTFT,
 * TPOT, end-to-end and queue samples and counts the requests that met
 * their class's SLO; at the close they become service_part_results with
 * the service's percentile helper (sv_samples_summary).
 */
#include "sim/serving_int.h"

#include <stdio.h>
#include <stdlib.h>

static const sc_serve_class *class_of(const serving *sv, const req *q) {
    return sv->cfg->n_classes > 0 ? &sv->cfg->classes[q->cls] : NULL;
}

static int prio_of(const serving *sv, int32_t i) {
    const sc_serve_class *k = class_of(sv, &sv->rq[i]);
    return k ? k->priority : 0;
}

/* The classes' cumulative shares and stream; whether priorities differ. */
static int init_classes(serving *sv) {
    const sc_inference *c = sv->cfg;
    sv->class_cum = calloc((size_t)c->n_classes, sizeof *sv->class_cum);
    if (!sv->class_cum) return -1;
    double sum = 0;
    for (int k = 0; k < c->n_classes; k++) {
        sum += c->classes[k].share;
        sv->class_cum[k] = sum;
        if (c->classes[k].priority != c->classes[0].priority) sv->prio_on = 1;
    }
    char comp[SC_NAME_MAX + 32];
    snprintf(comp, sizeof comp, "serving/%s/classes", c->name);
    sv->r_cls = rng_new(sv->s->seed, comp, 0);
    return sv->r_cls ? 0 : -1;
}

int sv_slo_init(serving *sv) {
    const sc_inference *c = sv->cfg;
    if (c->n_classes > 0 && init_classes(sv) < 0) return -1;
    if (sv->role == SV_DECODE) return 0;              /* its requests are measured by the prefill pool */
    int models = sv->n_models > 1 ? sv->n_models : 0;
    sv->n_parts = c->n_classes + models;
    if (sv->n_parts == 0) return 0;
    sv->parts = calloc((size_t)sv->n_parts, sizeof *sv->parts);
    sv->part_res = calloc((size_t)sv->n_parts, sizeof *sv->part_res);
    if (!sv->parts || !sv->part_res) return -1;
    for (int k = 0; k < c->n_classes; k++) {
        const sc_serve_class *cl = &c->classes[k];
        service_part_result *p = &sv->part_res[k];
        snprintf(p->name, sizeof p->name, "%s", cl->name);
        p->priority = cl->priority;
        p->share = cl->share;
        p->slo = cl->slo;
    }
    for (int m = 0; m < models; m++) {
        service_part_result *p = &sv->part_res[c->n_classes + m];
        snprintf(p->name, sizeof p->name, "%s", sv->models[m].m.name);
        p->share = c->models[m].share;
        p->slo.percentile = c->slo_percentile;
    }
    sv->res.classes = c->n_classes ? sv->part_res : NULL;
    sv->res.n_classes = c->n_classes;
    sv->res.by_model = models ? sv->part_res + c->n_classes : NULL;
    sv->res.n_by_model = models;
    return 0;
}

void sv_slo_free(serving *sv) {
    for (int k = 0; k < sv->n_parts; k++) {
        sv_part *p = &sv->parts[k];
        free(p->s_ttft.x);
        free(p->s_tpot.x);
        free(p->s_e2e.x);
        free(p->s_queue.x);
    }
    free(sv->parts);
    free(sv->part_res);
    free(sv->class_cum);
    rng_free(sv->r_cls);
}

int sv_class_draw(serving *sv) {
    int n = sv->cfg->n_classes;
    if (n <= 1) return 0;
    double u = rng_uniform(sv->r_cls) * sv->class_cum[n - 1];
    for (int k = 0; k < n; k++)
        if (u < sv->class_cum[k]) return k;
    return n - 1;
}

/* The parts request q counts in: its class's and its model's (-1: none). */
static void parts_of(const serving *sv, const req *q, int *cls, int *model) {
    int nc = sv->cfg->n_classes;
    *cls = nc > 0 && sv->parts ? q->cls : -1;
    *model = sv->parts && sv->n_parts > nc ? nc + q->model : -1;
}

void sv_slo_arrived(serving *sv, const req *q) {
    int at[2];
    parts_of(sv, q, &at[0], &at[1]);
    for (int k = 0; k < 2; k++) {
        if (at[k] < 0) continue;
        sv->part_res[at[k]].submitted++;
        sv->part_res[at[k]].input_tokens += q->input;
    }
}

/* Whether the latencies meet the bounds of b (0: none). */
static int within(double ttft_s, double tpot_s, double e2e_s, const sc_slo *b) {
    if (b->ttft_s > 0 && ttft_s > b->ttft_s) return 0;
    if (b->tpot_s > 0 && tpot_s >= 0 && tpot_s > b->tpot_s) return 0;
    return !(b->e2e_s > 0 && e2e_s > b->e2e_s);
}

void sv_slo_request_done(serving *sv, const req *q) {
    double ttft_s, tpot_s, e2e_s;
    sv_stats_complete(sv, q, &ttft_s, &tpot_s, &e2e_s);
    if (sv->stats) sv = sv->stats;           /* a decode pool's requests are its service's */
    const sc_serve_class *k = class_of(sv, q);
    const sc_inference *c = sv->cfg;
    sc_slo b = k ? k->slo : (sc_slo){ c->slo_ttft_s, c->slo_tpot_s, c->slo_e2e_s, c->slo_percentile };
    int ok = within(ttft_s, tpot_s, e2e_s, &b);
    sv->slo_ok += ok;
    int at[2];
    parts_of(sv, q, &at[0], &at[1]);
    for (int j = 0; j < 2; j++) {
        if (at[j] < 0) continue;
        sv_part *p = &sv->parts[at[j]];
        sv_sample_add(sv, &p->s_ttft, ttft_s);
        if (tpot_s >= 0) sv_sample_add(sv, &p->s_tpot, tpot_s);
        sv_sample_add(sv, &p->s_e2e, e2e_s);
        sv_sample_add(sv, &p->s_queue, sim_to_s(q->t_admit - q->t_arrive));
        p->slo_ok += ok;
        sv->part_res[at[j]].requests++;
        sv->part_res[at[j]].output_tokens += q->output;
    }
}

static void close_part(serving *sv, int k, double span_s) {
    sv_part *p = &sv->parts[k];
    service_part_result *R = &sv->part_res[k];
    sv_samples_summary(&p->s_ttft, &R->ttft_p50_s, &R->ttft_p99_s, &R->ttft_mean_s);
    sv_samples_summary(&p->s_tpot, &R->tpot_p50_s, &R->tpot_p99_s, &R->tpot_mean_s);
    sv_samples_summary(&p->s_e2e, &R->e2e_p50_s, &R->e2e_p99_s, &R->e2e_mean_s);
    sv_samples_summary(&p->s_queue, &R->queue_p50_s, &R->queue_p99_s, &R->queue_mean_s);
    R->requests_per_s = span_s > 0 ? (double)R->requests / span_s : 0;
    R->output_tokens_per_s = span_s > 0 ? R->output_tokens / span_s : 0;
    R->slo_attainment = R->requests ? (double)p->slo_ok / (double)R->requests : 1;
    R->slo_met = R->slo_attainment >= R->slo.percentile / 100.0 - 1e-12;
    R->goodput_requests_per_s = span_s > 0 ? (double)p->slo_ok / span_s : 0;
}

void sv_slo_close(serving *sv) {
    double span_s = sim_to_s(sv->last_completion - sv->first_arrival);   /* as sv_stats_close's rates */
    for (int k = 0; k < sv->n_parts; k++) close_part(sv, k, span_s);
    if (sv->res.n_classes == 0) return;
    sv->res.slo_met = 1;                      /* every class met its own percentile */
    for (int k = 0; k < sv->res.n_classes; k++) sv->res.slo_met &= sv->part_res[k].slo_met;
}

int sv_queue_before(const serving *sv, int32_t a, int32_t b) {
    if (sv->prio_on) {
        int pa = prio_of(sv, a), pb = prio_of(sv, b);
        if (pa != pb) return pa > pb;
    }
    return sv->rq[a].t_arrive < sv->rq[b].t_arrive;
}

/* Walks back from the tail over the waiting requests of lower priority:
 * O(1) for an arrival of the lowest priority, O(those it overtakes) for
 * one of higher priority. */
void sv_queue_push(serving *sv, list *l, int32_t i) {
    int32_t at = l->tail;
    if (sv->prio_on) {
        int p = prio_of(sv, i);
        while (at != NIL && prio_of(sv, at) < p) at = sv->rq[at].prev;
    }
    if (at == l->tail) {
        list_push_back(sv->rq, l, i);
        return;
    }
    if (at == NIL) {
        list_push_front(sv->rq, l, i);
        return;
    }
    req *rq = sv->rq;                          /* after at, before its successor */
    rq[i].prev = at;
    rq[i].next = rq[at].next;
    rq[rq[at].next].prev = i;
    rq[at].next = i;
    l->n++;
}
