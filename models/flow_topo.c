/*
 * flow_topo: the links of a fat-tree or rail-optimized network and the
 * paths between GPUs (see flow_topo.h). Every capacity is a catalog figure
 * times a catalog efficiency (node eff-nvlink, NIC eff-coll) or the
 * scenario's oversubscription; none is set here.
 */
#include "models/flow_topo.h"

#include <string.h>

static int add_links(flow_net *net, int count, double cap, int *first) {
    *first = flow_link_count(net);
    for (int i = 0; i < count; i++)
        if (flow_link_add(net, cap) < 0) return -1;
    return 0;
}

/* Capacities of the three kinds of link. */
static void capacities(flow_topo *t) {
    const fabric *f = &t->f;
    const node_spec *nd = f->node;
    double link = nd->nvlink_bw_bytes_per_s > 0 ? nd->nvlink_bw_bytes_per_s : nd->pcie_bw_bytes_per_s;
    t->nvl_bw = link * nd->eff_nvlink;
    t->nic_bw = f->nic->bw_bytes_per_s * f->nic->eff_coll;
    if (f->mode == NIC_OVERLAY) t->nic_bw *= f->overlay_bw_fraction;
    /* A switch's downlinks: every NIC of its group (fat-tree) or one per
     * node (a rail). */
    int down = t->switches_per_leaf == 1 ? t->per_leaf * t->nics : t->per_leaf;
    t->sw_bw = down * t->nic_bw / f->oversubscription;
}

int flow_topo_build(flow_topo *t, flow_net *net, const fabric *f, int nodes) {
    if (!t || !net || !f || !f->node || !f->nic || nodes < 1 || f->node->gpus < 1) return -1;
    if (!(f->oversubscription >= 1)) return -1;
    memset(t, 0, sizeof *t);
    t->f = *f;
    t->nodes = nodes;
    t->gpus = f->node->gpus;
    t->nics = f->node->nics;
    t->domain_nodes = fabric_domain_gpus(f) / t->gpus;
    if (t->domain_nodes < 1) t->domain_nodes = 1;
    t->per_leaf = f->nodes_per_leaf > 0 ? f->nodes_per_leaf : nodes;
    t->leaves = (nodes + t->per_leaf - 1) / t->per_leaf;
    t->switches_per_leaf = f->topology == TOPO_SINGLE_SWITCH ? 0 : f->topology == TOPO_RAIL_OPTIMIZED ? t->nics : 1;
    capacities(t);
    int G = nodes * t->gpus, N = nodes * t->nics, S = t->leaves * t->switches_per_leaf;
    if (!(t->nvl_bw > 0)) return -1;
    if (add_links(net, G, t->nvl_bw, &t->gpu_out) < 0 || add_links(net, G, t->nvl_bw, &t->gpu_in) < 0) return -1;
    if (N > 0 && (!(t->nic_bw > 0) || add_links(net, N, t->nic_bw, &t->nic_up) < 0 ||
                  add_links(net, N, t->nic_bw, &t->nic_down) < 0))
        return -1;
    if (S > 0 && (add_links(net, S, t->sw_bw, &t->sw_up) < 0 || add_links(net, S, t->sw_bw, &t->sw_down) < 0))
        return -1;
    return 0;
}

int flow_topo_nic_of(const flow_topo *t, int gpu) {
    return t->nics >= t->gpus ? gpu : gpu * t->nics / t->gpus;
}

int flow_topo_switch(const flow_topo *t, int node, int nic) {
    if (t->switches_per_leaf == 0 || node < 0 || node >= t->nodes || nic < 0 || nic >= t->nics) return -1;
    int leaf = node / t->per_leaf;
    return t->switches_per_leaf == 1 ? leaf : leaf * t->nics + nic;
}

int flow_topo_path(const flow_topo *t, int sn, int sg, int dn, int dg, int *path) {
    if (sn < 0 || dn < 0 || sn >= t->nodes || dn >= t->nodes || sg < 0 || dg < 0 || sg >= t->gpus ||
        dg >= t->gpus)
        return -1;
    if (sn == dn && sg == dg) return 0;
    if (sn / t->domain_nodes == dn / t->domain_nodes) {
        path[0] = t->gpu_out + sn * t->gpus + sg;
        path[1] = t->gpu_in + dn * t->gpus + dg;
        return 2;
    }
    if (t->nics < 1) return -1;
    int sk = flow_topo_nic_of(t, sg), dk = flow_topo_nic_of(t, dg), n = 0;
    path[n++] = t->nic_up + sn * t->nics + sk;
    int ss = flow_topo_switch(t, sn, sk), ds = flow_topo_switch(t, dn, dk);
    if (ss != ds) {
        path[n++] = t->sw_up + ss;
        path[n++] = t->sw_down + ds;
    }
    path[n++] = t->nic_down + dn * t->nics + dk;
    return n;
}

int flow_topo_switch_path(const flow_topo *t, int n, int g, int *path) {
    if (n < 0 || n >= t->nodes || g < 0 || g >= t->gpus) return -1;
    path[0] = t->gpu_out + n * t->gpus + g;
    path[1] = t->gpu_in + n * t->gpus + g;
    return 2;
}
