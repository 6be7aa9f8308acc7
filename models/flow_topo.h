/*
 * flow_topo: the links of a cluster's network for the flow model
 * (models/flow.h), and the path between two GPUs.
 *
 * Links, each one direction, capacities from the catalog:
 * - NVLink: one out and one in per GPU, at the GPU's NVLink (or PCIe)
 *   bandwidth per direction x eff-nvlink. Every GPU of an NVLink domain (a
 *   node, or a GB200 NVL72 rack of trays) reaches every other through the
 *   NVSwitches, which are non-blocking: only the GPUs' ports limit.
 * - NIC: one up (to the switch) and one down per NIC, at line rate x
 *   eff-coll (x the overlay fraction through an overlay network).
 * - Leaf to spine: nodes are grouped by their index into leaf groups of
 *   nodes_per_leaf. Fat-tree: one leaf switch takes every NIC of its
 *   group's nodes; its uplink (and downlink) to the spine carries the
 *   leaf's downlink capacity / oversubscription. Rail-optimized: NIC i of
 *   every node of the group is on rail switch i of the group (the DGX
 *   SuperPOD reference design); each rail switch's uplink carries its
 *   downlink capacity / oversubscription. The spine itself is taken as
 *   non-blocking (ECMP spreading flows evenly). Single-switch: NICs only.
 *
 * Paths: inside a domain, GPU out then GPU in. Between domains, the
 * source GPU's NIC (GPU i uses NIC i x nics/gpus) up, the leaf's uplink and
 * the destination leaf's downlink when the two ends are on different
 * switches, the destination NIC down. On a rail-optimized network two NICs
 * of different rails are on different switches even in one group, so
 * cross-rail traffic climbs to the spine (NCCL's PXN, which moves it to the
 * right rail over NVLink first, is not modelled). The GPU-to-NIC PCIe hop
 * is not a link: its bandwidth is above the NIC's in every catalog node.
 */
#ifndef CT_FLOW_TOPO_H
#define CT_FLOW_TOPO_H

#include "models/collective.h"
#include "models/flow.h"

typedef struct flow_topo {
    fabric f;                   /* the fabric (a copy) */
    int nodes;                  /* nodes (trays) on the network: ids 0..nodes-1 */
    int gpus, nics;             /* per node */
    int domain_nodes;           /* nodes per NVLink domain */
    int per_leaf;               /* nodes per leaf group */
    int leaves;                 /* leaf groups */
    int switches_per_leaf;      /* 1 (fat-tree), nics (rail-optimized), 0 (single switch) */
    int gpu_out, gpu_in;        /* first link id of each kind */
    int nic_up, nic_down;
    int sw_up, sw_down;
    double nvl_bw, nic_bw, sw_bw;   /* link capacities, bytes/s */
} flow_topo;

/* Add the links of `nodes` nodes of fabric f (node type, NIC, topology,
 * oversubscription, nodes_per_leaf, mode) to net. 0, or -1 on invalid
 * input (no node or NIC, nodes < 1) or out of memory. */
int flow_topo_build(flow_topo *t, flow_net *net, const fabric *f, int nodes);

/* The NIC GPU g of a node sends through. */
int flow_topo_nic_of(const flow_topo *t, int gpu);

/* The links from GPU sg of node sn to GPU dg of node dn into path (at
 * least FLOW_PATH_MAX): how many (0 when the two are the same GPU), or -1
 * on invalid ids. */
int flow_topo_path(const flow_topo *t, int sn, int sg, int dn, int dg, int *path);

/* The switch NIC `nic` of node n is on: 0 .. leaves x switches_per_leaf - 1,
 * or -1 on a single switch (no uplink) or invalid ids. Its uplink is link
 * sw_up + the id, its downlink sw_down + the id. */
int flow_topo_switch(const flow_topo *t, int n, int nic);

/* GPU g of node n into its NVLink switch and back out (NVLink SHARP: the
 * switch reduces or multicasts): 2 links into path. */
int flow_topo_switch_path(const flow_topo *t, int n, int g, int *path);

#endif
