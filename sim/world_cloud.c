/*
 * world_cloud: cloud autoscaling (<cloud>). Scale up when the oldest queued
 * job (or service replica) that could run on the cloud node type has
 * waited scale-up-after: rent enough nodes for it (up to max-nodes), ready
 * after provision-time. A cloud node idle for idle-release goes back.
 * Rented node-seconds are billed at the node type's price (world_view.c).
 */
#include "sim/world_int.h"

static void on_release_check(engine *e, void *arg);

static void cloud_account(world *w) {
    sim_time t = now_of(w);
    w->cloud_node_s += cluster_cloud_up(w->c) * sim_to_s(t - w->cloud_since);
    w->cloud_since = t;
}

static void on_provisioned(engine *e, void *arg) {
    (void)e;
    world *w = arg;
    cloud_account(w);
    int n = cluster_cloud_rent(w->c, w->cloud_pool);
    w->cloud_pending--;
    if (n >= 0) {
        w->node[n].idle_since_s = now_s(w);
        world_event(w, "cluster", "cloud_node_up", "node %d rented", n);
    }
    w->dispatch(w);
}

static void on_scale_check(engine *e, void *arg) {
    (void)e;
    world *w = arg;
    w->ev_scale = 0;
    cloud_autoscale(w);
}

void cloud_autoscale(world *w) {
    const scenario *s = w->s;
    int hid = sched_oldest(w->q, w->cloud_pool);
    if (hid < 0 || w->cloud_pending > 0) return;
    sched_job head_v = is_hold(w, hid) ? hold_view(w, hid - w->n_jobs) : job_sched_view(&w->jobs[hid]);
    const sched_job *head = &head_v;
    double waited = now_s(w) - head->submit_s;
    if (waited + 1e-6 < s->cloud_scale_up_after_s) {
        /* Look again when the head will have waited long enough (at least
         * 1 us on: never a re-check at the same instant). */
        double dt = s->cloud_scale_up_after_s - waited;
        if (!w->ev_scale) w->ev_scale = engine_after(w->e, sim_from_s(dt > 1e-6 ? dt : 1e-6), on_scale_check, w);
        return;
    }
    const node_spec *ns = cluster_pool_spec(w->c, w->cloud_pool);
    int short_gpus = head->gpus - cluster_pool_free_gpus(w->c, w->cloud_pool);
    int want = short_gpus > 0 ? (short_gpus + ns->gpus - 1) / ns->gpus : 0;
    int room = s->cloud_max_nodes - cluster_cloud_up(w->c) - w->cloud_pending;
    if (want > room) want = room;
    for (int i = 0; i < want; i++) {
        w->cloud_pending++;
        engine_after(w->e, sim_from_s(s->cloud_provision_s), on_provisioned, w);
    }
    if (want > 0)
        world_event(w, "cluster", "cloud_scale_up", "renting %d %s nodes for %s", want, ns->name,
                    world_entry_name(w, hid));
}

static void on_release_check(engine *e, void *arg) {
    (void)e;
    node_rec *r = arg;
    world *w = r->w;
    int n = r->index;
    if (cluster_node_state(w->c, n) == NODE_UP && w->use[n].jobs == 0 && w->use[n].replicas == 0 &&
        now_s(w) - r->idle_since_s >= w->s->cloud_idle_release_s - 1e-6) {
        cloud_account(w);
        cluster_cloud_release(w->c, n);
        world_event(w, "cluster", "cloud_node_down", "node %d released after %.0f s idle", n,
                    now_s(w) - r->idle_since_s);
    }
}

void cloud_node_idle(world *w, int n) {
    w->node[n].idle_since_s = now_s(w);
    engine_after(w->e, sim_from_s(w->s->cloud_idle_release_s), on_release_check, &w->node[n]);
}
