/*
 * world_core: the helpers every file of the world uses, at the bottom of
 * the world's files: names of job kinds and states, an event on the metric
 * bus, the accounting of GPUs by state, a node pool's fabric, the name
 * behind a scheduler id, and the check that an input time is a clock
 * value. It reads and writes the world's state and calls none of the
 * world's other files.
 */
#include "sim/world_int.h"

#include <stdio.h>

const char *job_kind_name(job_kind k) { return k == JOB_TRAINING ? "training" : "batch"; }

const char *job_state_name(job_state s) {
    static const char *z[] = { "pending", "running", "done", "failed", "timeout" };
    return z[s];
}

void world_event(world *w, const char *entity, const char *kind, const char *fmt, ...) {
    if (!metrics_wants_events(w->bus)) return;
    va_list ap;
    va_start(ap, fmt);
    metrics_eventv(w->bus, now_of(w), entity, kind, fmt, ap);   /* formatted by the sinks that want text */
    va_end(ap);
}

/* ---- GPU state accounting ------------------------------------------------ */

void world_integrate_states(world *w) {
    sim_time t = now_of(w);
    double dt = sim_to_s(t - w->state_since);
    for (int i = 0; i < GS_COUNT; i++) w->gpu_state_s[i] += w->gpus_state[i] * dt;
    w->state_since = t;
}

void world_add_state(world *w, int gs, int gpus) {
    if (gpus == 0) return;
    world_integrate_states(w);
    w->gpus_state[gs] += gpus;
    metrics_sample(w->bus, w->m_state[gs], now_of(w), w->gpus_state[gs]);
}

int world_fabric(const world *w, int pool, fabric *f) {
    const scenario *s = w->s;
    const node_spec *ns = cluster_pool_spec(w->c, pool);
    if (fabric_init(f, s->cat, ns, cluster_node_count(w->c)) < 0) return -1;
    f->topology = s->network.topology;
    f->oversubscription = s->network.oversubscription;
    f->mode = s->network.nic_mode;
    if (s->network.nodes_per_leaf > 0) f->nodes_per_leaf = s->network.nodes_per_leaf;
    f->sharp = s->network.sharp;
    f->algo_mask = s->network.nccl_algo_mask;
    f->proto_mask = s->network.nccl_proto_mask;
    f->flow_model = s->network.flow;
    return 0;
}

/* Scheduler ids 0 .. n_jobs-1 are jobs; n_jobs + k is service holding k. */
const char *world_entry_name(const world *w, int id) {
    if (!is_hold(w, id)) return w->jobs[id].name;
    return w->s->inference[w->hold[id - w->n_jobs].svc].name;
}

/* An input time of element ELEM (attribute ATTR) on line LINE must be a
 * clock value (engine_check_s). 0, or -1 with err set. */
int world_input_time(const scenario *s, int line, const char *elem, const char *attr, double t_s, char *err,
                     size_t errlen) {
    char why[160];
    if (engine_check_s(t_s, why, sizeof why) == 0) return 0;
    snprintf(err, errlen, "%s:%d: <%s %s=\"%g s\">: %s %s", s->file, line, elem, attr, t_s, attr, why);
    return -1;
}
