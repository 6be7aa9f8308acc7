/*
 * failures: failure processes of the cluster's component instances.
 *
 * Each process kind (a <failure> element, or one cause of a built-in
 * profile) has `per_node` instances on every node (8 GPUs, 1 host, 8 NICs,
 * ...). Exponential processes are memoryless, so all instances of a kind
 * are one Poisson stream of rate instances/MTBF whose events pick an
 * instance uniformly: one pending event per kind, however large the
 * cluster. Weibull processes have age, so each instance keeps its own clock
 * (one pending event per instance), renewed when the instance is repaired.
 * Instances of nodes that are down (failed, drained) do not fail; their
 * events are dropped (thinning of the Poisson stream is exact).
 *
 * One random stream per process kind ("failures/<component>/<cause>").
 */
#ifndef CT_FAILURES_H
#define CT_FAILURES_H

#include <stdint.h>

#include "sim/cluster.h"
#include "sim/engine.h"

typedef enum detect_kind { DETECT_CRASH, DETECT_HANG } detect_kind;

typedef struct failure_proc {
    char component[16];         /* gpu | hbm | node | nic | switch | storage | software */
    char cause[64];             /* label in results, e.g. "faulty GPU" */
    double per_node;            /* instances per node (may be fractional: a switch per 32 nodes) */
    double mtbf_s;              /* per instance */
    int weibull;                /* 0: exponential */
    double shape;               /* Weibull shape */
    double mttr_s;              /* time to repair the node (needs_repair) */
    detect_kind detect;         /* crash: seen at once; hang: waits for the watchdog */
    int needs_repair;           /* 1: the node leaves service until repaired */
} failure_proc;

/* Called when an instance on `node` fails (the node was up or spare). */
typedef void (*failure_fn)(void *ctx, int node, int proc);

typedef struct failures failures;

/* Start the processes. procs is copied. NULL when out of memory. */
failures *failures_new(engine *e, cluster *c, const failure_proc *procs, int n, uint64_t seed,
                       failure_fn fn, void *ctx);
void failures_free(failures *f);

int failures_proc_count(const failures *f);
const failure_proc *failures_proc(const failures *f, int i);

/* The node was repaired or replaced by new hardware: renew the clocks of
 * its Weibull instances (age 0). NULL is a no-op. */
void failures_node_renewed(failures *f, int node);

/* Expected failures per second of the given number of nodes, all kinds
 * (for checkpoint-interval choice: the job's MTBF is 1 / this). For a
 * Weibull kind the long-run rate 1/MTBF is used. */
double failures_rate_per_s(const failures *f, int nodes);

#endif
