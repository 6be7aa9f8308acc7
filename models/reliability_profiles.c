/*
 * reliability_profiles: the fleet failure profiles of a catalog, found by
 * name, and the one conversion from a profile's counts to per-instance
 * MTBFs.
 *
 * A profile is what a published study saw: failures by cause, each
 * charged to a component class (GPU, HBM, node, NIC, switch, storage,
 * software), over an exposure (a window times the GPUs, nodes and NICs
 * observed). A cause seen n times in a window T by a fleet with I
 * instances of its class has, under a Poisson process per instance,
 *
 *     λ = n / (T · I),   MTBF = T · I / n,
 *
 * so the observed fleet expects exactly n such failures in T, and any
 * other job sees the cause at a rate proportional to its own instance
 * count. I is the GPU count for GPU, HBM and software causes (software per
 * rank: a bug's chance to fire grows with the ranks running it), the
 * compute-NIC count for NICs, and the node count for host, SSD and network
 * switch/cable causes (a node's links and its share of switch ports).
 *
 * The profiles are data: catalog entries of kind "failure-profile", the
 * built-in ones in models/catalog/reliability.xml with each study's counts,
 * exposure and citation (scenarios/ reads them; this file does no I/O).
 * docs/failure-profiles.md lists each profile with its numbers and source;
 * tests/validation/failures.csv checks each against its own source
 * (calibration) and against the other studies (held out).
 */
#include "models/reliability.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DAY_S 86400.0

#define PROFILE_KIND "failure-profile"

int rel_profile_count(const catalog *c) { return c ? catalog_count(c, PROFILE_KIND) : 0; }

const rel_profile *rel_profile_at(const catalog *c, int i) {
    return c ? catalog_at(c, PROFILE_KIND, i) : NULL;
}

const rel_profile *rel_profile_find(const catalog *c, const char *name) {
    for (int i = 0; name && i < rel_profile_count(c); i++) {
        const rel_profile *p = rel_profile_at(c, i);
        if (strcmp(name, p->name) == 0) return p;
    }
    return NULL;
}

char *rel_profile_names(const catalog *c, char *out, size_t len) {
    if (!out || !len) return out;
    out[0] = 0;
    if (c) catalog_names(c, PROFILE_KIND, out, len);
    return out;
}

double rel_profile_total(const rel_profile *p) {
    double n = 0;
    for (int i = 0; p && i < p->n_causes; i++) n += p->causes[i].count;
    return n;
}

/* The profile's observed fleet as instance counts. */
static rel_fleet observed(const rel_profile *p) {
    return (rel_fleet){ p->gpus, p->nodes, p->nics };
}

double rel_profile_cause_mtbf_s(const rel_profile *p, int i) {
    if (!p || i < 0 || i >= p->n_causes || !(p->causes[i].count > 0)) return INFINITY;
    const rel_cause *c = &p->causes[i];
    rel_fleet f = observed(p);
    return p->window_s * rel_fleet_instances(&f, rel_component_scope(c->component)) / c->count;
}

double rel_profile_gpu_mtbf_s(const rel_profile *p) {
    double n = rel_profile_total(p);
    return n > 0 ? p->window_s * p->gpus / n : INFINITY;
}

/* ---- Predictions -------------------------------------------------------- */

static const char *const metric_names[] = { "mtti_h", "failures_per_1000_node_days" };

int rel_metric_parse(const char *z) {
    for (int i = 0; z && i < (int)(sizeof metric_names / sizeof metric_names[0]); i++)
        if (strcmp(z, metric_names[i]) == 0) return i;
    return -1;
}

int rel_profile_predict(const rel_profile *p, const node_spec *n, int gpus, rel_metric m, double *out) {
    if (!p || !n || !out || gpus < 1 || n->gpus < 1) return -1;
    /* The same expansion a scenario's <failure profile=...> gets, so a
     * validation row checks what the simulator runs. */
    rel_process proc[REL_PROFILE_MAX_CAUSES];
    char why[160];
    int k = rel_profile_processes(p, proc, REL_PROFILE_MAX_CAUSES, why, sizeof why);
    if (k < 0 || k > REL_PROFILE_MAX_CAUSES) return -1;
    double nodes = (double)gpus / n->gpus;
    rel_fleet f = { gpus, nodes, nodes * n->nics };
    double rate = rel_job_rate_per_s(proc, k, &f);
    switch (m) {
    case REL_METRIC_MTTI_H: *out = rel_mtti_s(rate) / 3600.0; return 0;
    case REL_METRIC_PER_1000_NODE_DAYS: *out = rate / nodes * 1000 * DAY_S; return 0;
    default: return -1;
    }
}
