/*
 * cluster: the nodes of the simulated cluster, their state and who uses
 * their GPUs.
 *
 * One record per node (a few tens of bytes: a 100K-GPU cluster is 12,500
 * nodes). Nodes are grouped by node type into pools; a job takes GPUs of one
 * pool. Multi-node jobs take whole nodes; a job smaller than a node takes
 * GPUs from the fullest node that fits it (best fit, so big jobs still find
 * whole nodes). Warm spares are nodes held out of the pool, handed to a job
 * that lost a node. Per-pool lists are scanned linearly on allocation: jobs
 * start far less often than events happen.
 */
#ifndef CT_CLUSTER_H
#define CT_CLUSTER_H

#include "models/catalog.h"
#include "scenarios/scenario.h"

typedef enum node_state {
    NODE_UP,          /* in service: its GPUs are free or used by jobs */
    NODE_FAILED,      /* down, waiting for repair or replacement */
    NODE_SPARE,       /* warm spare, held out of the pool */
    NODE_DRAINED,     /* taken out of service (lemon) */
    NODE_OFF,         /* a cloud node not rented now (<cloud max-nodes>) */
    NODE_DRAINING     /* in service for the jobs on it, closed to new ones (Slurm's DRAINING) */
} node_state;

const char *node_state_name(node_state s);

typedef struct cluster cluster;

/* Build from the scenario's <nodes>; the last `warm` nodes of the first
 * pool become spares (<spares warm=N>); <cloud max-nodes=N> adds N nodes of
 * its type, OFF until rented. NULL when out of memory. */
cluster *cluster_new(const scenario *s);
void cluster_free(cluster *c);

int cluster_node_count(const cluster *c);
int cluster_pool_count(const cluster *c);
int cluster_pool_of_type(const cluster *c, const char *node_type);   /* -1: none */
const node_spec *cluster_pool_spec(const cluster *c, int pool);
int cluster_pool_gpus(const cluster *c, int pool);       /* GPUs in service (UP nodes) */
int cluster_pool_free_gpus(const cluster *c, int pool);

int cluster_node_pool(const cluster *c, int node);
node_state cluster_node_state(const cluster *c, int node);
int cluster_node_free_gpus(const cluster *c, int node);
int cluster_node_failures(const cluster *c, int node);
int cluster_gpus_per_node(const cluster *c, int node);

/* Racks. A node type whose NVLink domain is wider than a node (GB200
 * NVL72: nvlink_domain 72, 4-GPU trays) has racks of nvlink_domain/gpus
 * nodes, one NVLink domain each. Other node types are drawn in racks of
 * CLUSTER_RACK_NODES (the DGX H100 SuperPOD reference architecture's
 * compute racks hold four DGX systems): racks for drawing only, no
 * bandwidth. Racks are numbered through the pools in order; a pool's
 * first node starts a rack. */
#define CLUSTER_RACK_NODES 4
int cluster_rack_nodes(const node_spec *ns);   /* nodes per rack of that type */
int cluster_node_rack(const cluster *c, int node);
int cluster_rack_count(const cluster *c);

/* Placement: pack (default) fills nodes and keeps a multi-node job on
 * consecutive nodes (few leaf switches); spread takes the emptiest node
 * for a sub-node job and strides whole nodes across leaf groups of
 * nodes_per_leaf. Packing on a node type with a multi-node NVLink domain
 * takes whole idle domains first and puts the rest in the fullest domain
 * it fits (a job's TP/EP groups stay on NVLink), then any idle nodes. */
void cluster_set_spread(cluster *c, int spread, int nodes_per_leaf);

/* Can `gpus` GPUs of pool be allocated right now? */
int cluster_can_alloc(const cluster *c, int pool, int gpus);
/* A bound: cluster_can_alloc(c, pool, g) is false for every g above it
 * (the GPUs of the pool's idle nodes, else the most free on one node).
 * O(GPUs per node). */
int cluster_fit_limit(const cluster *c, int pool);
/* UP nodes of the pool with exactly free_gpus (> 0) GPUs free. O(1). */
int cluster_nodes_with_free(const cluster *c, int pool, int free_gpus);

/* Allocate gpus GPUs of pool: whole idle nodes when gpus >= a node, else
 * best fit inside one node. Writes the nodes used to nodes_out (at most
 * cap) and returns how many, or -1 when it does not fit now (nothing
 * allocated). */
int cluster_alloc(cluster *c, int pool, int gpus, int *nodes_out, int cap);

/* The same inside a node set (a partition's nodes: cluster indices,
 * increasing): only UP nodes of the pool in the set. A job of a node or
 * more takes the set's first idle nodes; a smaller one the best-fit node
 * (the emptiest when spreading). O(set): partitions are scanned, not
 * counted. */
int cluster_can_alloc_in(const cluster *c, int pool, int gpus, const int *set, int n_set);
int cluster_alloc_in(cluster *c, int pool, int gpus, const int *set, int n_set, int *nodes_out, int cap);

/* Take gpus GPUs of one given node (a job running there when a live
 * cluster was read). 0, or -1 when the node is not up or has fewer free. */
int cluster_take_gpus(cluster *c, int node, int gpus);

/* Give back `gpus_each` GPUs on each of n nodes (those still UP; a
 * negative entry, an empty slot of a job, is passed over). */
void cluster_release(cluster *c, const int *nodes, int n, int gpus_each);
/* A hint that node's record will be read soon; no effect on results. */
void cluster_prefetch(const cluster *c, int node);

/* Mark a node failed: its GPUs leave service (the caller handles the jobs
 * on it). The node's failure count goes up. */
void cluster_fail(cluster *c, int node);
/* A failed node is repaired: back in service (all GPUs free), or back to
 * the spare pool when spares are below their target. */
void cluster_repair(cluster *c, int node);
/* Take a node out of service for good (lemon). */
void cluster_drain(cluster *c, int node);
/* An UP node starts draining: the GPUs its jobs hold stay in service, its
 * free GPUs leave the pool (no job is placed on it, nor on the GPUs its
 * jobs give back); cluster_drain ends it. -1 when the node is not UP. */
int cluster_begin_drain(cluster *c, int node);
/* Nodes draining now. O(1). */
int cluster_draining(const cluster *c);
/* A drained node back in service (as if repaired). -1 when not drained. */
int cluster_undrain(cluster *c, int node);

/* A warm spare of the pool, now UP with all GPUs taken by the caller
 * (gpus_each GPUs); -1 when none. */
int cluster_take_spare(cluster *c, int pool, int gpus_each);
/* An idle UP node of the pool, taken whole (gpus_each GPUs); -1 when none. */
int cluster_take_idle(cluster *c, int pool, int gpus_each);

/* Counts of nodes by state up to NODE_OFF, for the metric bus. */
void cluster_counts(const cluster *c, int counts[5]);

/* Cloud nodes: is the node rentable, rent one (OFF -> UP, all GPUs free;
 * returns the node or -1 when none is left), give one back (UP and idle ->
 * OFF). */
int cluster_is_cloud(const cluster *c, int node);
int cluster_cloud_rent(cluster *c, int pool);
void cluster_cloud_release(cluster *c, int node);
int cluster_cloud_up(const cluster *c);          /* cloud nodes rented now */
/* GPUs a pool can ever have (on-premises + every cloud node). */
int cluster_pool_capacity(const cluster *c, int pool);

#endif
