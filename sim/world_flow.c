/*
 * world_flow: the fabric shared between training jobs when the scenario
 * asks for the flow model (<network model="flow">; docs/flow-fabric.md).
 *
 * Each time a training job starts or stops communicating (enters or leaves
 * its running phase), the running jobs' traffic is put on one flow network
 * of the cluster (models/flow_topo: every node of the first pool, its NICs,
 * its leaf or rail switches and their oversubscribed uplinks): one step of
 * each job's data-parallel ring all-reduces, every DP group at once (rank
 * d of a group sends to rank d+1 on the node where the job placed it; ranks
 * in Megatron's order, tensor fastest, then context, data, pipeline).
 * Max-min sharing gives each flow a rate; a job's share of its NICs is its
 * slowest inter-node flow over a NIC's rate. Its step is then priced by the
 * step model (models/training) with that share of its NIC bandwidth
 * (fabric.net_share) and no constant oversubscription factor (the flows
 * say what the spine leaves). The job's reported step time is the one it
 * has alone on the fabric (its flows only); its progress runs at the
 * shared one.
 *
 * The approximation: every running job is taken to be in its DP exchange
 * at once (the upper bound of contention: jobs whose exchanges do not
 * overlap in time slow each other less), the DP pattern stands for all of
 * a job's inter-node traffic, and the share applies to every inter-node
 * collective of its step. Jobs of other pools, shrunk jobs and jobs
 * without inter-node DP traffic keep the closed form.
 *
 * Cost per change: O(F P log L) for the F flows of all running jobs (one
 * per GPU of a DP group crossing nodes), plus one solve per job alone.
 */
#include "sim/world_int.h"

#include <math.h>
#include <stdlib.h>

#include "models/flow.h"
#include "models/flow_topo.h"

struct world_flow {
    flow_net *net;
    flow_topo topo;
    int *first;                     /* per job: its first flow, -1 when not on the fabric */
    int *count;                     /* per job: its flows */
};

void world_flow_free(world *w) {
    if (!w->flow) return;
    flow_net_free(w->flow->net);
    free(w->flow->first);
    free(w->flow->count);
    free(w->flow);
    w->flow = NULL;
}

/* The network of every node with pool 0's node type; 0, or -1. */
static int build(world *w) {
    struct world_flow *fl = calloc(1, sizeof *fl);
    fabric f;
    if (!fl) return -1;
    w->flow = fl;
    fl->net = flow_net_new();
    fl->first = malloc((size_t)(w->n_jobs ? w->n_jobs : 1) * sizeof *fl->first);
    fl->count = malloc((size_t)(w->n_jobs ? w->n_jobs : 1) * sizeof *fl->count);
    if (!fl->net || !fl->first || !fl->count || world_fabric(w, 0, &f) < 0) return -1;
    return flow_topo_build(&fl->topo, fl->net, &f, cluster_node_count(w->c));
}

/* Can the job's traffic be put on the fabric? */
static int on_fabric(const job *j) {
    if (j->kind != JOB_TRAINING || j->ph != PH_RUNNING || j->pool != 0 || j->tr->shrinks || j->n_nodes < 2 ||
        j->tr->t->plan.dp < 2)
        return 0;
    for (int i = 0; i < j->n_nodes; i++)
        if (j->nodes[i] < 0) return 0;
    return 1;
}

/* The inter-node flows of one step of the job's DP rings: how many, or -1. */
static int dp_flows(world *w, const job *j) {
    const train_plan *p = &j->tr->t->plan;
    const flow_topo *t = &w->flow->topo;
    int inner = p->tp * p->cp, gpn = j->gpus_per_node, n = 0;
    for (int s = 0; s < p->pp; s++)
        for (int i = 0; i < inner; i++)
            for (int d = 0; d < p->dp; d++) {
                int a = s * p->dp * inner + d * inner + i, b = s * p->dp * inner + ((d + 1) % p->dp) * inner + i;
                int an = a / gpn, bn = b / gpn, path[FLOW_PATH_MAX];
                if (an == bn || an >= j->n_nodes || bn >= j->n_nodes) continue;
                int len = flow_topo_path(t, j->nodes[an], a % gpn, j->nodes[bn], b % gpn, path);
                if (len < 1 || flow_add(w->flow->net, path, len, 1) < 0) return -1;
                n++;
            }
    return n;
}

/* The slowest rate of a job's flows, as a share of a NIC (at most 1). */
static double share_of(const struct world_flow *fl, int ji) {
    double m = INFINITY;
    for (int k = fl->first[ji]; k < fl->first[ji] + fl->count[ji]; k++) m = fmin(m, flow_rate(fl->net, k));
    return isfinite(m) ? fmin(1, m / fl->topo.nic_bw) : 1;
}

/* The job's step at share of its NICs into r: 0, or -1 when the model
 * says no. */
static int step_at(world *w, const job *j, double share, train_result *r) {
    fabric f;
    if (world_fabric(w, j->pool, &f) < 0) return -1;
    f.oversubscription = 1;
    f.net_share = share;
    return train_step(&j->tr->t->model, &j->tr->t->plan, &f, r) < 0 || !r->fits ? -1 : 0;
}

/* Every job's flows on the fabric, solved together: 0, or -1. */
static int shared_solve(world *w) {
    struct world_flow *fl = w->flow;
    flow_clear(fl->net);
    for (int i = 0; i < w->n_jobs; i++) {
        fl->first[i] = flow_count(fl->net);
        fl->count[i] = on_fabric(&w->jobs[i]) ? dp_flows(w, &w->jobs[i]) : 0;
        if (fl->count[i] < 0) return -1;
    }
    return flow_solve(fl->net);
}

/* The job's share alone on the fabric: its own flows only. */
static double alone_share(world *w, const job *j) {
    struct world_flow *fl = w->flow;
    flow_clear(fl->net);
    fl->first[j->index] = 0;
    fl->count[j->index] = dp_flows(w, j);
    if (fl->count[j->index] < 0 || flow_solve(fl->net) < 0) return 1;
    return share_of(fl, j->index);
}

void world_flow_reprice(world *w, world_flow_apply apply) {
    if (!w->s->network.flow || cluster_pool_count(w->c) == 0) return;
    if (!w->flow && build(w) < 0) {
        world_flow_free(w);
        return;
    }
    if (shared_solve(w) < 0) return;
    int n = 0;
    double *share = malloc((size_t)(w->n_jobs ? w->n_jobs : 1) * sizeof *share);
    if (!share) return;
    for (int i = 0; i < w->n_jobs; i++) {
        share[i] = w->flow->count[i] > 0 ? share_of(w->flow, i) : -1;
        n += share[i] >= 0;
    }
    for (int i = 0; i < w->n_jobs; i++) {
        job *j = &w->jobs[i];
        if (share[i] < 0) continue;
        double alone = alone_share(w, j);
        train_result rs, ra;
        if (step_at(w, j, share[i], &rs) < 0 || step_at(w, j, alone, &ra) < 0) continue;
        double shared_s = rs.step_s;
        *j->tr->perf = ra;
        if (shared_s != j->tr->step_s)
            world_event(w, j->name, "fabric_share",
                        "step %.4g s at %.3g of its NIC bandwidth (%.3g alone) with %d job(s) on the fabric", shared_s,
                        share[i], alone, n);
        apply(j, shared_s);
    }
    free(share);
}
