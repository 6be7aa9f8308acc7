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
 * A mixture-of-experts job whose expert-parallel groups span NVLink
 * domains also puts its all-to-all on the fabric (models/flow_coll's: every
 * rank of an EP group to every other, all at once; members etp GPUs apart
 * as Megatron-Core orders expert ranks, etp fastest, then ep, then expert
 * data parallel, per pipeline stage). A second solve has every such job in
 * its all-to-all and every other job in its DP exchange. A rank sends equal
 * chunks to its peers, so its all-to-all ends with its slowest flow: its
 * share is that flow's rate times its inter-domain flows over its NIC
 * bandwidth, the job's the lowest of its ranks' (as for DP, the rates of
 * the moment all flows run: the faster flows' end may leave the slowest
 * more, so this is the upper bound of the time). The step model prices the
 * expert all-to-all at that share (fabric.a2a_net_share), the rest of the
 * step at the DP share.
 *
 * The approximation: every running job is taken to be in the same kind of
 * exchange at once (the upper bound of contention: jobs whose exchanges do
 * not overlap in time slow each other less); the DP pattern stands for all
 * of a job's inter-node traffic but the expert all-to-all, and its share
 * applies to every other inter-node collective of its step. Jobs of other
 * pools, shrunk jobs and jobs without inter-node DP or EP traffic keep the
 * closed form.
 *
 * Cost per change: O(F P log L) for the F flows of all running jobs (one
 * per GPU of a DP group crossing nodes, ep - 1 per GPU of an EP group
 * crossing domains at most), twice with MoE jobs, plus one solve per job
 * and kind alone.
 */
#include "sim/world_int.h"

#include <math.h>
#include <stdlib.h>

#include "models/flow.h"
#include "models/flow_topo.h"

enum { K_DP, K_EP, KINDS };        /* a job's traffic: its DP ring step, its expert all-to-all */

struct world_flow {
    flow_net *net;
    flow_topo topo;
    int *first[KINDS];              /* per job: its first flow of the kind in the last solve */
    int *count[KINDS];              /* per job: its flows of the kind (0: none on the fabric) */
};

void world_flow_free(world *w) {
    if (!w->flow) return;
    flow_net_free(w->flow->net);
    for (int k = 0; k < KINDS; k++) {
        free(w->flow->first[k]);
        free(w->flow->count[k]);
    }
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
    size_t n = (size_t)(w->n_jobs ? w->n_jobs : 1);
    for (int k = 0; k < KINDS; k++) {
        fl->first[k] = calloc(n, sizeof *fl->first[k]);
        fl->count[k] = calloc(n, sizeof *fl->count[k]);
        if (!fl->first[k] || !fl->count[k]) return -1;
    }
    if (!fl->net || world_fabric(w, 0, &f) < 0) return -1;
    return flow_topo_build(&fl->topo, fl->net, &f, cluster_node_count(w->c));
}

/* Can the job's traffic be put on the fabric? */
static int on_fabric(const job *j) {
    if (j->kind != JOB_TRAINING || j->ph != PH_RUNNING || j->pool != 0 || j->tr->shrinks || j->n_nodes < 2)
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
    for (int s = 0; s < p->pp && p->dp > 1; s++)
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

/* The NVLink domain of the job's GPU x; -1 past its nodes. */
static int domain_of(const world *w, const job *j, long x) {
    long node = x / j->gpus_per_node;
    return node < j->n_nodes ? j->nodes[node] / w->flow->topo.domain_nodes : -1;
}

/* The job's expert all-to-all flows between NVLink domains, walked in one
 * fixed order: counted (how many); added (add: how many, or -1); or, with
 * share, flows first.. of the last solve read back into *share, the lowest
 * over the ranks of (its slowest flow's rate x its flows) / its NIC
 * bandwidth: its equal chunks end with the slowest. EP group (stage s, expert-DP
 * m, etp e): GPUs s*stage + e + etp*(k + ep*m), k < ep. */
static int ep_walk(world *w, const job *j, int add, int first, double *share) {
    const train_plan *p = &j->tr->t->plan;
    const flow_topo *t = &w->flow->topo;
    int ep = train_plan_ep(p), etp = train_plan_etp(p), edp = train_plan_edp(p), gpn = j->gpus_per_node, n = 0;
    long stage = (long)p->tp * p->dp * p->cp;
    double rank_bw = t->nic_bw * fmin(1, (double)t->nics / t->gpus);
    for (long s = 0; s < p->pp && ep > 1 && j->tr->t->model.experts > 1; s++)
        for (long g = 0; g < (long)edp * etp; g++)
            for (int k = 0; k < ep; k++) {
                long a = s * stage + g % etp + etp * (k + (long)ep * (g / etp));
                double slowest = INFINITY;
                int flows = 0;
                for (int q = 0; q < ep; q++) {
                    long b = s * stage + g % etp + etp * (q + (long)ep * (g / etp));
                    int da = domain_of(w, j, a), db = domain_of(w, j, b), path[FLOW_PATH_MAX];
                    if (da < 0 || db < 0 || da == db) continue;
                    if (share) slowest = fmin(slowest, flow_rate(w->flow->net, first + n));
                    else if (add && flow_add(w->flow->net, path,
                                      flow_topo_path(t, j->nodes[a / gpn], (int)(a % gpn), j->nodes[b / gpn],
                                                     (int)(b % gpn), path), 1) < 0)
                        return -1;
                    n++, flows++;
                }
                if (share && flows) *share = fmin(*share, slowest * flows / rank_bw);
            }
    return n;
}

/* The job's flows of kind k added: how many, or -1. */
static int flows_of(world *w, const job *j, int k) {
    return k == K_DP ? dp_flows(w, j) : ep_walk(w, j, 1, 0, NULL);
}

/* A job's share of kind k from the last solve (at most 1): DP, its slowest
 * inter-node flow over a NIC's rate; EP, ep_walk's. */
static double share_of(world *w, int ji, int k) {
    struct world_flow *fl = w->flow;
    double m = INFINITY;
    if (k == K_EP) ep_walk(w, &w->jobs[ji], 0, fl->first[k][ji], &m);
    for (int f = fl->first[k][ji]; k == K_DP && f < fl->first[k][ji] + fl->count[k][ji]; f++)
        m = fmin(m, flow_rate(fl->net, f) / fl->topo.nic_bw);
    return isfinite(m) ? fmin(1, m) : 1;
}

/* The job's step with share[K_DP] of its NICs, share[K_EP] for its expert
 * all-to-all (0: the same), into r: 0, or -1 when the model says no. */
static int step_at(world *w, const job *j, const double share[KINDS], train_result *r) {
    fabric f;
    if (world_fabric(w, j->pool, &f) < 0) return -1;
    f.oversubscription = 1;
    f.net_share = share[K_DP];
    f.a2a_net_share = share[K_EP];
    return train_step(&j->tr->t->model, &j->tr->t->plan, &f, r) < 0 || !r->fits ? -1 : 0;
}

/* Every job's flows on the fabric, solved together: each job's kind-k
 * flows, or its DP flows when it has none of kind k. 0, or -1. */
static int shared_solve(world *w, int k) {
    struct world_flow *fl = w->flow;
    flow_clear(fl->net);
    for (int i = 0; i < w->n_jobs; i++) {
        const job *j = &w->jobs[i];
        int own = k == K_DP || fl->count[K_EP][i] > 0;
        fl->first[k][i] = flow_count(fl->net);
        int c = on_fabric(j) ? flows_of(w, j, own ? k : K_DP) : 0;
        if (c < 0) return -1;
        fl->count[k][i] = own ? c : 0;
    }
    return flow_solve(fl->net);
}

/* The job's share of kind k alone on the fabric: its own flows only. */
static double alone_share(world *w, const job *j, int k) {
    struct world_flow *fl = w->flow;
    flow_clear(fl->net);
    fl->first[k][j->index] = 0;
    fl->count[k][j->index] = flows_of(w, j, k);
    if (fl->count[k][j->index] < 0 || flow_solve(fl->net) < 0) return 1;
    return share_of(w, j->index, k);
}

/* Every job's shares beside the others, share[k * n_jobs + i] (-1: no
 * traffic of the kind on the fabric); jobs with any into *on. 0, or -1. */
static int shares_together(world *w, double *share, int *on) {
    struct world_flow *fl = w->flow;
    for (int i = 0; i < w->n_jobs; i++)
        fl->count[K_EP][i] = on_fabric(&w->jobs[i]) ? ep_walk(w, &w->jobs[i], 0, 0, NULL) : 0;
    *on = 0;
    for (int k = 0; k < KINDS; k++) {
        if (shared_solve(w, k) < 0) return -1;
        for (int i = 0; i < w->n_jobs; i++) share[k * w->n_jobs + i] = fl->count[k][i] > 0 ? share_of(w, i, k) : -1;
    }
    for (int i = 0; i < w->n_jobs; i++) *on += share[i] >= 0 || share[w->n_jobs + i] >= 0;
    return 0;
}

/* Reprice job j from its shares beside the others (sh[k]; -1: none). */
static void reprice_job(world *w, job *j, const double sh[KINDS], int on, world_flow_apply apply) {
    double both[KINDS], alone[KINDS];
    for (int k = 0; k < KINDS; k++) {
        both[k] = sh[k] >= 0 ? sh[k] : k == K_DP ? 1 : 0;
        alone[k] = sh[k] >= 0 ? alone_share(w, j, k) : both[k];
    }
    train_result rs, ra;
    if (step_at(w, j, both, &rs) < 0 || step_at(w, j, alone, &ra) < 0) return;
    *j->tr->perf = ra;
    if (rs.step_s != j->tr->step_s && sh[K_EP] >= 0)
        world_event(w, j->name, "fabric_share",
                    "step %.4g s at %.3g of its NIC bandwidth (%.3g alone), its all-to-all at %.3g (%.3g alone), "
                    "with %d job(s) on the fabric",
                    rs.step_s, both[K_DP], alone[K_DP], both[K_EP], alone[K_EP], on);
    else if (rs.step_s != j->tr->step_s)
        world_event(w, j->name, "fabric_share",
                    "step %.4g s at %.3g of its NIC bandwidth (%.3g alone) with %d job(s) on the fabric", rs.step_s,
                    both[K_DP], alone[K_DP], on);
    apply(j, rs.step_s);
}

void world_flow_reprice(world *w, world_flow_apply apply) {
    if (!w->s->network.flow || cluster_pool_count(w->c) == 0) return;
    if (!w->flow && build(w) < 0) {
        world_flow_free(w);
        return;
    }
    int n = w->n_jobs, on = 0;
    double *share = malloc((size_t)(n ? n : 1) * KINDS * sizeof *share);
    if (!share || shares_together(w, share, &on) < 0) {
        free(share);
        return;
    }
    for (int i = 0; i < n; i++)
        if (share[i] >= 0 || share[n + i] >= 0)
            reprice_job(w, &w->jobs[i], (double[KINDS]){ share[i], share[n + i] }, on, apply);
    free(share);
}
