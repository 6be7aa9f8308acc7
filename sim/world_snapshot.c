/*
 * world_snapshot: the cluster as a live one stood at t = 0 (issue 22,
 * docs/cluster-state.md). A scenario written by `clustertwin snapshot`
 * has nodes out of service (<unavailable>) and trace jobs already running
 * (state "running", with the time they have run and maybe the nodes they
 * hold). One event at t = 0, queued before any submission, takes those
 * nodes out and starts those jobs, so that they hold their GPUs before
 * the scheduler places anything else. Draining nodes keep the jobs named
 * on them and close to all others (world_repair.c). Held jobs never start (nor jobs
 * waiting for one). Everything here is inert when the scenario has none
 * of it.
 */
#include "sim/world_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"

int snapshot_never_eligible(const world *w, const job *j) {
    const scenario *s = w->s;
    /* After chains have no cycles (the trace reader refuses them). */
    for (int steps = 0; j && steps <= w->n_jobs; steps++) {
        if (j->trace_row < 0) return 0;
        int state = s->trace_jobs[j->trace_row].state;
        if (state == SC_JOB_HELD) return 1;
        if (state == SC_JOB_RUNNING || j->after < 0) return 0;
        j = &w->jobs[j->after];
    }
    return 0;
}

/* The running jobs' named nodes: up at t = 0 and not over-full. 0, or -2
 * with err set naming the trace row's job; -1 when out of memory. */
static int check_named_nodes(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    int nodes = cluster_node_count(w->c);
    int *used = calloc((size_t)nodes + 1, sizeof *used);
    if (!used) return -1;
    for (int u = 0; u < s->n_unavailable; u++)          /* a draining node keeps its running jobs */
        for (int k = 0; k < s->unavailable[u].n && !s->unavailable[u].draining; k++) used[s->unavailable[u].nodes[k]] = -1;
    int rc = 0;
    for (int i = 0; i < s->n_trace_jobs && rc == 0; i++) {
        const sc_trace_job *t = &s->trace_jobs[i];
        if (t->state != SC_JOB_RUNNING || t->nodes == SC_NO_TEXT) continue;
        const job *j = &w->jobs[w->trace_first + i];
        for (int k = 0; k < t->n_nodes && rc == 0; k++) {
            int n = s->trace_nodes[t->nodes + (uint32_t)k];
            const char *name = s->node_text + s->node_name[n];
            if (used[n] < 0) {
                errmsg_set(err, errlen, "%s:%d: job %s runs on node %s, which <unavailable> takes out of service",
                           s->file, t->line, j->name, name);
                rc = -2;
            } else if ((used[n] += j->gpus_per_node) > cluster_gpus_per_node(w->c, n)) {
                errmsg_set(err, errlen, "%s:%d: job %s runs on node %s, whose %d GPUs running jobs already hold",
                           s->file, t->line, j->name, name, cluster_gpus_per_node(w->c, n));
                rc = -2;
            }
        }
    }
    free(used);
    return rc;
}

/* t = 0: the unavailable nodes leave service, then the running jobs take
 * their GPUs (on their named nodes first, then the others as the
 * scheduler places them; one that does not fit waits in the queue). */
static void on_snapshot(engine *e, void *arg) {
    (void)e;
    world *w = arg;
    const scenario *s = w->s;
    repair_unavailable(w);
    for (int pass = 0; pass < 2; pass++) {
        /* Draining nodes close once the jobs named on them hold them. */
        if (pass == 1) repair_begin_draining(w);
        for (int i = 0; i < s->n_trace_jobs; i++) {
            const sc_trace_job *t = &s->trace_jobs[i];
            if (t->state != SC_JOB_RUNNING || (t->nodes != SC_NO_TEXT) != (pass == 0)) continue;
            job *j = &w->jobs[w->trace_first + i];
            const int *nodes = pass == 0 ? s->trace_nodes + t->nodes : NULL;
            if (job_start_running(j, nodes, t->elapsed_s) == 0) continue;
            world_event(w, j->name, "job_requeued", "running when the cluster was read, but its %d GPUs are not "
                        "free at t = 0: it waits in the queue", j->gpus);
            job_on_submit(w->e, j);
        }
    }
    w->dispatch(w);
}

int snapshot_build(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    if (w->trace_running == 0 && s->n_unavailable == 0) return 0;   /* counted as the jobs were made */
    int rc = check_named_nodes(w, err, errlen);
    if (rc < 0) return rc;
    return engine_schedule(w->e, 0, on_snapshot, w) ? 0 : -1;
}
