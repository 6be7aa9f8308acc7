/*
 * world_repair: what happens to a node when it fails. The failure
 * processes (sim/failures, built here from the scenario's <failure>
 * elements and profiles) report a part failing on a node; the world
 * decides whether anyone sees it (a fault on an idle node stays hidden
 * until a job starts there, unless nodes are checked at start), whether a
 * periodic health check found it first (a planned move, no work lost),
 * and sends the node to repair, or to a cold replacement when that is
 * quicker, or out of service for good when it has failed too often (a
 * lemon). The dashboard's failure injection and drains come through here.
 *
 * What runs on a node is reached only through w->on_node (set by world.c):
 * hit when a fault hits it, back when it returns to service.
 */
#include "sim/world_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "models/reliability.h"

static void node_failed(void *ctx, int node, int proc);
static void on_repaired(engine *e, void *arg);
static void drain_finish(world *w, int n, int u);

/* The scenario's failure processes: its own <failure> elements, expanded
 * profiles, with repair-time defaults from models/reliability. */
int repair_build_failures(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    if (s->n_failures == 0) return 0;
    rel_spec *spec = calloc((size_t)s->n_failures, sizeof *spec);
    if (!spec) return -1;
    for (int i = 0; i < s->n_failures; i++) {
        const sc_failure *sf = &s->failures[i];
        if (world_input_time(s, sf->line, "failure", "mttr", sf->mttr_s, err, errlen) < 0) {
            free(spec);
            return -2;
        }
        spec[i] = (rel_spec){ sf->component, sf->profile, sf->mtbf_s, sf->distribution, sf->shape,
                              sf->mttr_s, sf->cause };
    }
    char why[256];
    int n = rel_expand(s->cat, spec, s->n_failures, NULL, 0, why, sizeof why);
    rel_process *rp = n > 0 ? calloc((size_t)n, sizeof *rp) : NULL;
    failure_proc *fp = n > 0 ? calloc((size_t)n, sizeof *fp) : NULL;
    w->fail_by_proc = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof *w->fail_by_proc);
    int rc = -1;
    if (n > 0 && (!rp || !fp || !w->fail_by_proc)) goto out;   /* out of memory, not bad input */
    if (n < 0 || rel_expand(s->cat, spec, s->n_failures, rp, n, why, sizeof why) != n) {
        int bad = 0;            /* the element at fault, not always the first */
        while (bad < s->n_failures - 1 && rel_expand(s->cat, &spec[bad], 1, NULL, 0, NULL, 0) >= 0) bad++;
        snprintf(err, errlen, "%s:%d: <failure>: %s", s->file, s->failures[bad].line, why);
        rc = -2;
        goto out;
    }
    if (!rp || !fp || !w->fail_by_proc) goto out;
    const node_spec *ns = cluster_pool_count(w->c) ? cluster_pool_spec(w->c, 0) : NULL;
    for (int i = 0; i < n; i++) {
        const rel_process *r = &rp[i];
        failure_proc *f = &fp[i];
        snprintf(f->component, sizeof f->component, "%s", rel_component_name(r->component));
        snprintf(f->cause, sizeof f->cause, "%s", r->cause);
        f->per_node = rel_instances_per_node(r->component, ns);
        f->mtbf_s = r->mtbf_s;
        f->weibull = r->distribution == REL_WEIBULL;
        f->shape = r->shape;
        f->mttr_s = r->mttr_s > 0 ? r->mttr_s : rel_mttr_default_s(r->component);
        f->detect = r->detection == REL_DETECT_WATCHDOG ? DETECT_HANG : DETECT_CRASH;
        f->needs_repair = r->needs_repair;
        f->age_s = r->needs_repair ? s->failure_cfg.fleet_age_s : 0;   /* software starts with the job */
    }
    w->f = failures_new(w->e, w->c, fp, n, s->seed, node_failed, w);
    rc = w->f ? 0 : -1;
out:
    free(spec);
    free(rp);
    free(fp);
    return rc;
}

/* GPUs out of service (failed or drained nodes), for the time series. */
static void publish_failed(world *w) {
    int counts[5];
    cluster_counts(w->c, counts);
    int per = cluster_pool_count(w->c) ? cluster_pool_spec(w->c, 0)->gpus : 8;
    metrics_sample(w->bus, w->m_failed, now_of(w), (double)(counts[NODE_FAILED] + counts[NODE_DRAINED]) * per);
}

/* The node leaves service: repair (or cold replacement), or drained when
 * it has failed too often (a lemon). */
void repair_node_down(world *w, int node, const failure_proc *p) {
    const sc_failures_cfg *fc = &w->s->failure_cfg;
    double t = now_s(w);
    cluster_fail(w->c, node);
    node_rec *nr = &w->node[node];
    if (t - nr->lemon_since_s > fc->lemon_window_s) {
        nr->lemon_since_s = t;
        nr->lemon_count = 0;
    }
    nr->lemon_count++;
    publish_failed(w);
    if (fc->lemon_threshold > 0 && nr->lemon_count >= fc->lemon_threshold) {
        cluster_drain(w->c, node);
        w->drained++;
        world_event(w, "cluster", "node_drained", "node %d: %d failures in %.0f days (lemon)", node,
              nr->lemon_count, fc->lemon_window_s / 86400);
        return;
    }
    if (nr->repair_ev) return;          /* already being repaired */
    double mttr = p->mttr_s;
    nr->replaced = w->s->cold_provision_s > 0 && w->s->cold_provision_s < mttr;
    if (nr->replaced) mttr = w->s->cold_provision_s;
    nr->repair_ev = engine_after(w->e, sim_from_s(mttr), on_repaired, nr);
}

static void node_failed(void *ctx, int node, int proc) {
    world *w = ctx;
    const failure_proc *p = failures_proc(w->f, proc);
    const sc_failures_cfg *fc = &w->s->failure_cfg;
    w->n_fail_total++;
    w->fail_by_proc[proc]++;
    int used = w->use[node].jobs > 0 || w->use[node].replicas > 0;
    int down = cluster_node_state(w->c, node) == NODE_FAILED;
    world_event(w, "cluster", "failure", "node %d: %s (%s)%s", node, p->cause, p->component,
          used ? "" : down ? " while the node is down for repair" : " on an unused node");
    /* A part of a node under repair (parts fail on their own clocks): it is
     * replaced in the same repair, which waits for it (on_repaired). */
    if (down) return;
    /* A share of hardware faults is caught by periodic health checks first. */
    int planned = used && p->needs_repair && fc->health_coverage > 0 &&
                  rng_uniform(w->r_health) < fc->health_coverage;
    if (p->needs_repair && !used && !fc->health_at_start && cluster_node_state(w->c, node) == NODE_UP) {
        /* Nobody checks an idle node: the fault stays hidden until a job
         * starts on it and crashes. */
        if (!w->use[node].latent) w->use[node].latent = (short)(proc + 1);
        w->any_latent = 1;
        return;
    }
    /* Out of service before its jobs hear of it: a batch job the hit
     * requeues, and the dispatch pass that follows, cannot land on it. A
     * restart-only fault leaves the node in service. */
    if (p->needs_repair) repair_node_down(w, node, p);
    w->on_node.hit(w, node, p, planned);
}

static void on_repaired(engine *e, void *arg) {
    (void)e;
    node_rec *r = arg;
    world *w = r->w;
    int node = r->index;
    r->repair_ev = 0;
    if (cluster_node_state(w->c, node) != NODE_FAILED) return;
    if (w->use[node].drain) {                      /* failed while draining: the drain stands */
        drain_finish(w, node, w->use[node].drain - 1);
        return;
    }
    if (r->replaced) {
        failures_node_replaced(w->f, node);        /* new hardware: every part is new */
    } else {
        /* Only the failed parts were replaced; one that failed during the
         * repair keeps the node out until its own replacement is in. */
        sim_time ready = failures_node_ready(w->f, node);
        if (ready > now_of(w)) {
            r->repair_ev = engine_after(w->e, ready - now_of(w), on_repaired, r);
            return;
        }
    }
    cluster_repair(w->c, node);
    publish_failed(w);
    world_event(w, "cluster", "node_repaired", "node %d back in service", node);
    w->on_node.back(w, node, 1);
}

/* A drained node of <unavailable repair=> back: an admin resumed it. */
static void on_resumed(engine *e, void *arg) {
    (void)e;
    node_rec *r = arg;
    world *w = r->w;
    r->repair_ev = 0;
    if (cluster_undrain(w->c, r->index) < 0) return;
    publish_failed(w);
    world_event(w, "cluster", "node_undrained", "node %d back in service (resumed)", r->index);
    w->on_node.back(w, r->index, 0);
}

/* How long a down node of <unavailable> without repair= takes: what the
 * failure model gives a node's repair (the node component's mttr); 0
 * when the scenario models no node failures. */
static double node_mttr_s(const world *w) {
    for (int i = 0; w->f && i < failures_proc_count(w->f); i++) {
        const failure_proc *p = failures_proc(w->f, i);
        if (p->needs_repair && !strcmp(p->component, "node")) return p->mttr_s;
    }
    return 0;
}

void repair_unavailable(world *w) {
    const scenario *s = w->s;
    int never_down = 0, never_drained = 0;
    for (int u = 0; u < s->n_unavailable; u++) {
        const sc_unavailable *x = &s->unavailable[u];
        if (x->draining) continue;                 /* repair_begin_draining, after the running jobs */
        double back_s = x->repair_s > 0 ? x->repair_s : x->drained ? 0 : node_mttr_s(w);
        for (int k = 0; k < x->n; k++) {
            int n = x->nodes[k];
            node_rec *nr = &w->node[n];
            node_state st = cluster_node_state(w->c, n);
            if (st == NODE_FAILED || st == NODE_DRAINED) continue;       /* named twice */
            w->unavailable_at_start++;
            if (x->drained) cluster_drain(w->c, n);
            else cluster_fail(w->c, n);
            if (back_s > 0) nr->repair_ev = engine_after(w->e, sim_from_s(back_s), x->drained ? on_resumed : on_repaired, nr);
            else if (x->drained) never_drained++;
            else never_down++;
        }
        world_event(w, "cluster", x->drained ? "node_drained" : "node_down", "%d node(s) out of service at t = 0%s%s%s",
                    x->n, x->reason[0] ? ": " : "", x->reason, back_s > 0 ? "" : " (not back in this run)");
    }
    publish_failed(w);
    if (never_down + never_drained > 0)
        world_event(w, "cluster", "nodes_unavailable", "%d node(s) out of service at t = 0 stay out: %d down with no "
                    "repair= and no node failure model to repair them, %d drained with no repair= (an admin must "
                    "resume them)", never_down + never_drained, never_down, never_drained);
}

/* Draining node n of <unavailable> u is drained: out of service with
 * its reason, back after repair= when given (an admin resumes it). */
static void drain_finish(world *w, int n, int u) {
    const sc_unavailable *x = &w->s->unavailable[u];
    node_rec *nr = &w->node[n];
    w->use[n].drain = 0;
    cluster_drain(w->c, n);
    publish_failed(w);
    if (x->repair_s > 0 && !nr->repair_ev) nr->repair_ev = engine_after(w->e, sim_from_s(x->repair_s), on_resumed, nr);
    world_event(w, "cluster", "node_drained", "node %d: drained, its last job ended%s%s%s", n, x->reason[0] ? ": " : "",
                x->reason, x->repair_s > 0 ? "" : " (not back in this run)");
}

/* Slurm's DRAINING: the node keeps its running jobs and gets no new one
 * (slurm.conf(5) and scontrol(1), State=DRAIN: "no new jobs ... will be
 * started on the node"; sinfo(1) lists it as "draining" while jobs run
 * and "drained" once they are done). */
void repair_begin_draining(world *w) {
    const scenario *s = w->s;
    for (int u = 0; u < s->n_unavailable; u++) {
        const sc_unavailable *x = &s->unavailable[u];
        if (!x->draining) continue;
        int busy = 0;
        for (int k = 0; k < x->n; k++) {
            int n = x->nodes[k];
            node_use *nu = &w->use[n];
            if (cluster_node_state(w->c, n) != NODE_UP || nu->drain) continue;     /* named twice */
            w->draining_at_start++;
            if (nu->jobs == 0 && nu->replicas == 0) {
                drain_finish(w, n, u);
                continue;
            }
            cluster_begin_drain(w->c, n);
            nu->drain = u + 1;
            busy++;
        }
        world_event(w, "cluster", "node_draining", "%d node(s) draining at t = 0%s%s: %d with running jobs take no "
                    "new job and are drained when those end", x->n, x->reason[0] ? ": " : "", x->reason, busy);
    }
}

void repair_node_left(world *w, int n) {
    const node_use *nu = &w->use[n];
    if (nu->drain && nu->jobs == 0 && nu->replicas == 0 && cluster_node_state(w->c, n) == NODE_DRAINING)
        drain_finish(w, n, nu->drain - 1);
}

/* A node failure injected from the dashboard (world_inject_failure). */
int repair_inject(world *w, int node) {
    if (w->closed || node < 0 || node >= cluster_node_count(w->c)) return -1;
    node_state st = cluster_node_state(w->c, node);
    if (st != NODE_UP && st != NODE_SPARE) return -1;
    failure_proc p = { "node", "injected", 1, 0, 0, 0, rel_mttr_default_s(REL_NODE), DETECT_CRASH, 1, 0 };
    w->n_fail_total++;
    w->injected++;
    int used = w->use[node].jobs > 0 || w->use[node].replicas > 0;
    world_event(w, "cluster", "failure", "node %d: %s (%s)%s", node, p.cause, p.component, used ? "" : " on an unused node");
    w->use[node].latent = 0;                 /* whatever was hidden goes to repair too */
    repair_node_down(w, node, &p);           /* out of service first, as node_failed */
    w->on_node.hit(w, node, &p, 0);
    return 0;
}

/* The operator drains or undrains a node (world_drain). */
int repair_drain(world *w, int node, int on) {
    if (w->closed || node < 0 || node >= cluster_node_count(w->c)) return -1;
    node_state st = cluster_node_state(w->c, node);
    if (on) {
        if (st == NODE_DRAINED || st == NODE_OFF) return -1;
        /* Out of service first, so jobs moved off it cannot land on it. */
        cluster_drain(w->c, node);
        w->use[node].drain = 0;
        failure_proc p = { "node", "drained", 1, 0, 0, 0, 0, DETECT_CRASH, 1, 0 };
        w->on_node.hit(w, node, &p, 1);
        publish_failed(w);
        world_event(w, "cluster", "node_drained", "node %d: by the operator", node);
        return 0;
    }
    if (st != NODE_DRAINED || cluster_undrain(w->c, node) < 0) return -1;
    w->use[node].latent = 0;
    publish_failed(w);
    world_event(w, "cluster", "node_undrained", "node %d back in service", node);
    w->on_node.back(w, node, 0);
    return 0;
}
