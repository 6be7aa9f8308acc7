/*
 * failures: failure processes of the cluster's component instances.
 *
 * Each process kind (a <failure> element, or one cause of a built-in
 * profile) has `per_node` instances on every node (8 GPUs, 1 host, 8 NICs,
 * ...), instance i = node * per_node + slot. Each instance fails on its own
 * clock, independently of every other instance and kind:
 *
 *  - Weibull kinds have age, so each instance keeps its own clock (one
 *    pending event per instance) and draws from its own random stream
 *    ("failures/<component>/<cause>", index i): changing one kind's MTBF
 *    leaves every other instance's failure times bit for bit the same.
 *  - Exponential kinds are memoryless, so all instances of a kind are one
 *    Poisson stream of rate instances/MTBF whose events pick an instance
 *    uniformly (the superposition is exact): one pending event per kind,
 *    however large the cluster, from the kind's own stream.
 *
 * Renewal: a part that needs repair is replaced mttr_s after it fails, and
 * only that part is renewed (age 0): the GPUs of a node whose NIC was
 * swapped keep their clocks and ages. Until it is replaced, a failed part
 * does not fail again. A node replaced by new hardware (cold provisioning)
 * renews every part (failures_node_replaced). Restart-only kinds (software)
 * start a new clock at once.
 *
 * Clocks run in calendar time whatever the node is doing, so a part can
 * fail while its node is down for another part's repair: it is reported
 * (the world replaces it in the same repair: failures_node_ready). Parts of
 * drained nodes and of cloud nodes not rented are not reported.
 *
 * Fleet age: a hardware (needs_repair) Weibull instance that has already
 * run age_s at t = 0 draws its first failure from the Weibull conditional
 * on survival to that age (its residual life); replacements start at 0.
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
    double age_s;               /* Weibull, needs_repair: the instances' age at t = 0 (fleet age) */
} failure_proc;

/* Called when an instance on `node` fails (the node is up, spare or down
 * for repair; never drained or off). */
typedef void (*failure_fn)(void *ctx, int node, int proc);

typedef struct failures failures;

/* Start the processes. procs is copied. NULL when out of memory. */
failures *failures_new(engine *e, cluster *c, const failure_proc *procs, int n, uint64_t seed,
                       failure_fn fn, void *ctx);
void failures_free(failures *f);

int failures_proc_count(const failures *f);
const failure_proc *failures_proc(const failures *f, int i);

/* The node was replaced by new hardware: every instance on it is new
 * (age 0, no part awaiting replacement). NULL is a no-op. */
void failures_node_replaced(failures *f, int node);

/* When the last part of the node that failed is replaced (its failure time
 * plus its kind's mttr_s), or 0 when none is awaiting replacement. A node
 * repair ends no earlier. NULL gives 0. */
sim_time failures_node_ready(failures *f, int node);

/* The pending failure time of Weibull instance `i` of process `proc`
 * (SIM_FOREVER when it never fails), -1 for an exponential process or an
 * index out of range. For tests. */
sim_time failures_instance_next(const failures *f, int proc, long long i);

/* Expected failures per second of the given number of nodes, all kinds
 * (for checkpoint-interval choice: the job's MTBF is 1 / this). For a
 * Weibull kind the long-run rate 1/MTBF is used. */
double failures_rate_per_s(const failures *f, int nodes);

#endif
