/*
 * flow: a flow-level network. Links with capacities, flows with paths
 * (lists of links) and bytes to move; bandwidth shared max-min fairly
 * among the flows on each link (progressive filling), recomputed only when
 * flows start or end.
 *
 * Max-min fairness (D. Bertsekas and R. Gallager, Data Networks, 2nd ed.,
 * section 6.5.2, "progressive filling"): raise every flow's rate together;
 * when a link fills, the flows through it are frozen at its fair share; go
 * on with the others. The flow-level models of SimGrid (CM02, LV08: P.
 * Velho et al., "On the validity of flow-level TCP network models for grid
 * and cloud simulations", ACM TOMACS 23(4), 2013) share bandwidth this way.
 *
 * Cost of one solve: building the per-link flow sets is O(F P + L) for F
 * flows of at most P links each and L links; filling takes each link off a
 * heap once, and every freeze updates the other links of the flow, so
 * O((F P + L) log L) in all. A run (flow_run) solves once per event, an
 * event being one or more flows ending at the same instant; flows that
 * start together with the same path lengths and sizes and equal shares end
 * together, in one event.
 *
 * Pure: no I/O; memory grows with the links and flows added and is kept
 * between runs (flow_clear keeps the links). Deterministic: ties go to the
 * lower link id.
 */
#ifndef CT_FLOW_H
#define CT_FLOW_H

/* Longest path a flow may have (NVLink out, NIC up, leaf up, spine down,
 * NIC down, NVLink in, and room to spare). */
#define FLOW_PATH_MAX 8

typedef struct flow_net flow_net;

flow_net *flow_net_new(void);                 /* NULL when out of memory */
void flow_net_free(flow_net *n);

/* A link of capacity cap_bytes_per_s (> 0): its id (0, 1, ...), or -1
 * (out of memory, or a capacity not above 0). */
int flow_link_add(flow_net *n, double cap_bytes_per_s);
int flow_link_count(const flow_net *n);
double flow_link_cap(const flow_net *n, int link);

/* A flow of bytes (>= 0) over path[0..len-1] (1 <= len <= FLOW_PATH_MAX,
 * ids of links added): its id, or -1 on invalid input or out of memory. */
int flow_add(flow_net *n, const int *path, int len, double bytes);
int flow_count(const flow_net *n);
void flow_clear(flow_net *n);                 /* drop every flow, keep the links */

/* Max-min fair rates of the flows not yet done: 0, or -1 (out of memory). */
int flow_solve(flow_net *n);
double flow_rate(const flow_net *n, int flow);   /* bytes/s from the last solve */

/* Run every flow from time 0 to its end, all starting together, rates
 * re-solved each time flows end. Returns the time the last one ends
 * (seconds; 0 with no flow), or -1 (out of memory). *events (may be NULL)
 * counts the solves. */
double flow_run(flow_net *n, int *events);
double flow_end_s(const flow_net *n, int flow);  /* from the last flow_run */

#endif
