/*
 * serving_autoscale: the autoscaler. Every interval it compares a metric
 * (queue length or concurrency per ready replica, or the mean time to first
 * token) with its target and, beyond a 10% tolerance, asks for replicas
 * (draining ones come back first) or, after the metric has stayed low for
 * the cooldown, withdraws queued requests for GPUs and drains replicas.
 */
#include "sim/serving_int.h"

#include <math.h>
#include <string.h>

void sv_on_scale(engine *e, void *arg) {
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
        ratio = (double)sv_waiting(sv) / (ready > 0 ? ready : 1) / c->autoscale_target;
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
        if (added) sv_route_pending(sv);
        int queued = 0;
        for (int k = added; k < want; k++) {
            int rc = sv_start_replica(sv, c->autoscale_startup_s);
            if (rc < 0) break;
            queued += rc;
            added++;
        }
        if (added) {
            sv->res.scale_ups++;
            sv_event(sv, "scale_up", "%d -> %d replicas (%s %.3g of target)", ready + starting,
                  ready + starting + added, c->autoscale_metric, ratio);
        }
        if (queued) {
            sv->res.scale_blocked++;
            sv_event(sv, "scale_blocked", "%d replicas of %d GPUs wait in the scheduler's queue", queued, sv->rep_gpus);
        }
    } else if (desired < ready + starting && requested > 0) {
        /* Requests still queued for GPUs are withdrawn first (they hold nothing). */
        int drop = ready + starting - desired;
        for (int i = sv->n_reps - 1; i >= 0 && drop > 0; i--)
            if (sv->reps[i].state == R_REQUESTED) {
                sv_release_replica(&sv->reps[i]);
                drop--;
            }
        sv->low_since = -1;
    } else if (desired < ready) {
        if (sv->low_since < 0) sv->low_since = now_of(sv);
        if (sim_to_s(now_of(sv) - sv->low_since) >= c->autoscale_cooldown_s) {
            int drop = ready - desired;
            for (int i = sv->n_reps - 1; i >= 0 && drop > 0; i--) {
                if (sv->reps[i].state != R_READY) continue;
                sv_drain(&sv->reps[i]);
                drop--;
            }
            sv->res.scale_downs++;
            sv_event(sv, "scale_down", "%d -> %d replicas", ready, desired);
            sv_publish_replicas(sv);
            sv->low_since = -1;
        }
    } else {
        sv->low_since = -1;
    }
    sv->ev_scale = engine_after(sv->e, sim_from_s(c->autoscale_interval_s), sv_on_scale, sv);
}
