/*
 * load_cluster: the sections the workload runs on. <cluster> (node pools,
 * network, storage, spares, a cloud to rent from), <scheduler> (policy and
 * queues; load_queue_ref checks a job's queue= against them) and
 * <failures> (detection and recovery times, the failure processes).
 *
 * After <cluster>, the loader knows the cluster's GPUs in all and per node
 * type (loader_gpus_of_type), which every job and service is checked
 * against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "models/power.h"
#include "models/reliability.h"
#include "scenarios/load.h"

static int parse_topology(const char *z) {
    if (!strcmp(z, "fat-tree")) return TOPO_FAT_TREE;
    if (!strcmp(z, "rail-optimized")) return TOPO_RAIL_OPTIMIZED;
    if (!strcmp(z, "single-switch")) return TOPO_SINGLE_SWITCH;
    return -1;
}

static int parse_net_model(const char *z) {
    if (!strcmp(z, "closed-form")) return 0;
    if (!strcmp(z, "flow")) return 1;
    return -1;
}

static int parse_nic_mode(const char *z) {
    if (!strcmp(z, "direct")) return NIC_DIRECT;
    if (!strcmp(z, "overlay")) return NIC_OVERLAY;
    return -1;
}

int loader_parse_nccl_algo(const char *z) {
    unsigned m;
    return coll_algo_mask_parse(z, &m) < 0 ? -1 : (int)m;
}

int loader_parse_nccl_proto(const char *z) {
    unsigned m;
    return coll_proto_mask_parse(z, &m) < 0 ? -1 : (int)m;
}

#define MAX_CLUSTER_GPUS 10000000    /* 100x the largest clusters planned today */

/* Totals of the cluster, once: GPUs in all, and per node type (read per
 * job and service, which scanned every <nodes> each time). */
static void check_cluster_size(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    long long gpus = 0;
    if (s->n_nodes && !(L->type_gpus = calloc((size_t)s->n_nodes, sizeof *L->type_gpus)))
        FAIL_RETURN(L, sec, NULL, "out of memory");
    for (int i = 0; i < s->n_nodes; i++) {
        long long g = (long long)s->nodes[i].count * catalog_node(s->cat, s->nodes[i].type)->gpus;
        gpus += g;
        int first = nameset_find(&L->node_types, NAMES(s->nodes, type), s->nodes[i].type);
        if (first < 0 && nameset_add(&L->node_types, NAMES(s->nodes, type), first = i) < 0)
            FAIL_RETURN(L, sec, NULL, "out of memory");
        L->type_gpus[first] += g;
    }
    L->cluster_gpus = gpus;
    if (gpus > MAX_CLUSTER_GPUS)
        xml_fail(&L->x, sec, NULL, "the cluster has %lld GPUs; at most %d are supported", gpus, MAX_CLUSTER_GPUS);
}

int loader_known_node(loader *L, const xmlNode *e, const char *attr, const char *type) {
    const scenario *s = L->s;
    if (catalog_node(s->cat, type)) return 1;
    char names[1024];
    catalog_names(s->cat, "node", names, sizeof names);
    xml_fail(&L->x, e, attr, "unknown node type; expected one of: %s", names);
    return 0;
}

/* power-cap="500W" or "500": watts (base/units has no power kind). */
static int attr_watts(loader *L, const xmlNode *e, const char *attr, double *out) {
    char v[32];
    int rc = attr_str(&L->x, e, attr, v, sizeof v, 0);
    if (rc <= 0) return rc;
    size_t n = strlen(v);
    while (n > 0 && v[n - 1] == ' ') v[--n] = 0;
    if (n > 0 && v[n - 1] == 'W') v[--n] = 0;
    if (units_parse(v, UNIT_NUMBER, out, NULL, 0) < 0 || !(*out > 0)) {
        xml_fail(&L->x, e, attr, "%s must be a power in watts like 500W", attr);
        return -1;
    }
    return 1;
}

/* <nodes gpu= power-cap=>: a variant of the node type put in the scenario's
 * own catalog and named type+GPU@CAPW (docs/power-and-variants.md), so that
 * training, serving, microbenchmarks and energy all read the GPU and its cap
 * through the node type. The capped GPU is GPU@CAPW (models/power.h). */
static void load_variant(loader *L, const xmlNode *e, sc_nodes *n) {
    scenario *s = L->s;
    char gname[CATALOG_NAME_MAX] = "", why[256], names[1024];
    double cap_w = 0;
    int has_gpu = attr_str(&L->x, e, "gpu", gname, sizeof gname, 0);
    int has_cap = attr_watts(L, e, "power-cap", &cap_w);
    if (has_gpu < 0 || has_cap < 0 || (has_gpu == 0 && has_cap == 0)) return;
    node_spec node = *catalog_node(s->cat, n->type);
    const gpu_spec *base = catalog_gpu(s->cat, has_gpu ? gname : node.gpu);
    if (!base) {
        catalog_names(s->cat, "gpu", names, sizeof names);
        FAIL_RETURN(L, e, "gpu", "unknown GPU; expected one of: %s", names);
    }
    gpu_spec g = *base;
    if (has_cap && power_cap_gpu(&g, cap_w, &g, why, sizeof why) < 0) FAIL_RETURN(L, e, "power-cap", "%s", why);
    char full[2 * CATALOG_NAME_MAX + 8];
    snprintf(full, sizeof full, "%s%s%s%s", n->type, has_gpu ? "+" : "", gname, has_cap ? strchr(g.name, '@') : "");
    size_t len = strlen(full);
    if (len >= sizeof node.name)
        FAIL_RETURN(L, e, NULL, "the node type this makes, %s, is longer than %zu characters", full,
                    sizeof node.name - 1);
    memcpy(node.name, full, len + 1);
    snprintf(node.gpu, sizeof node.gpu, "%s", g.name);
    if ((has_cap && catalog_put_gpu(s->cat, &g) < 0) || catalog_put_node(s->cat, &node) < 0)
        FAIL_RETURN(L, e, NULL, "out of memory");
    snprintf(n->type, sizeof n->type, "%s", node.name);
}

static void load_nodes(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_nodes *n = PUSH(L, s->nodes, s->n_nodes, e);
    if (!n) return;
    n->line = xml_line(&L->x, e);
    if (attr_str(&L->x, e, "type", n->type, sizeof n->type, 1) < 0) return;
    if (attr_int(&L->x, e, "count", &n->count, 1, 1, 1000000) < 0) return;
    if (loader_known_node(L, e, "type", n->type)) load_variant(L, e, n);
}

static void load_network(loader *L, const xmlNode *e) {
    sc_network *nw = &L->s->network;
    int v;
    nw->line = xml_line(&L->x, e);
    if (attr_enum(&L->x, e, "topology", parse_topology, "fat-tree, rail-optimized, single-switch", &v) > 0)
        nw->topology = (topology_kind)v;
    if (attr_enum(&L->x, e, "nic-mode", parse_nic_mode, "direct, overlay", &v) > 0)
        nw->nic_mode = (nic_mode)v;
    if (attr_unit(&L->x, e, "oversubscription", UNIT_NUMBER, &nw->oversubscription, 0, 1) > 0 &&
        (nw->oversubscription < 1 || nw->oversubscription > 64))
        xml_fail(&L->x, e, "oversubscription", "oversubscription must be from 1 (non-blocking) to 64");
    attr_int(&L->x, e, "nodes-per-leaf", &nw->nodes_per_leaf, 0, 1, 100000);
    attr_bool(&L->x, e, "sharp", &nw->sharp);
    if (attr_enum(&L->x, e, "model", parse_net_model, "closed-form, flow", &v) > 0) nw->flow = v;
    if (attr_enum(&L->x, e, "nccl-algo", loader_parse_nccl_algo, NCCL_ALGO_CHOICES, &v) > 0)
        nw->nccl_algo_mask = (unsigned)v;
    if (attr_enum(&L->x, e, "nccl-proto", loader_parse_nccl_proto, "auto, ll, ll128, simple", &v) > 0)
        nw->nccl_proto_mask = (unsigned)v;
}

/* nccl-algo forcing only algorithms the cluster's hardware cannot run
 * (NVLS without NVLink SHARP nodes, CollNet without sharp="true") is an
 * error at load; an op or group shape an algorithm does not serve falls
 * back at run time (models/collective.h coll_time). */
static void check_nccl_algo(loader *L, const xmlNode *net) {
    const scenario *s = L->s;
    unsigned m = s->network.nccl_algo_mask;
    unsigned nvls = 1u << COLL_NVLS | 1u << COLL_NVLS_TREE;
    unsigned collnet = 1u << COLL_COLLNET_DIRECT | 1u << COLL_COLLNET_CHAIN;
    if (m && !(m & ~collnet) && !s->network.sharp)
        xml_fail(&L->x, net, "nccl-algo", "CollNet needs SHARP switches; add sharp=\"true\" to <network>");
    for (int i = 0; i < s->n_nodes && !L->x.failed && m && !(m & ~nvls); i++) {
        const node_spec *nd = catalog_node(s->cat, s->nodes[i].type);
        if (!nd->nvls || !nd->nvswitch)
            xml_fail(&L->x, net, "nccl-algo", "NVLS needs NVSwitch nodes with NVLink SHARP; node type %s has none",
                     nd->name);
    }
}

static void load_storage(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_storage *st = PUSH(L, s->storage, s->n_storage, e);
    if (!st) return;
    st->line = xml_line(&L->x, e);
    if (attr_str(&L->x, e, "name", st->name, sizeof st->name, 1) < 0) return;
    if (attr_str(&L->x, e, "kind", st->kind, sizeof st->kind, 1) < 0) return;
    if (!catalog_storage(s->cat, st->kind)) {
        char names[512];
        catalog_names(s->cat, "storage", names, sizeof names);
        FAIL_RETURN(L, e, "kind", "unknown storage kind; expected one of: %s", names);
    }
    int dup = nameset_find(&L->storage_names, NAMES(s->storage, name), st->name);
    if (dup >= 0) FAIL_RETURN(L, e, "name", "storage name already used on line %d", s->storage[dup].line);
    if (nameset_add(&L->storage_names, NAMES(s->storage, name), s->n_storage - 1) < 0)
        FAIL_RETURN(L, e, NULL, "out of memory");
    attr_unit(&L->x, e, "bandwidth", UNIT_BANDWIDTH, &st->bw_bytes_per_s, 0, 1);
    attr_unit(&L->x, e, "capacity", UNIT_SIZE, &st->capacity_bytes, 0, 1);
}

/* <cloud>: nodes rented when a job waits (sim/ autoscale). */
static void load_cloud(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    s->has_cloud = 1;
    if (attr_str(&L->x, e, "node-type", s->cloud_node_type, sizeof s->cloud_node_type, 1) < 0) return;
    if (!loader_known_node(L, e, "node-type", s->cloud_node_type)) return;
    s->cloud_max_nodes = 0;
    attr_int(&L->x, e, "max-nodes", &s->cloud_max_nodes, 0, 0, 1000000);
    s->cloud_provision_s = 900;
    attr_unit(&L->x, e, "provision-time", UNIT_DURATION, &s->cloud_provision_s, 0, 0);
    s->cloud_scale_up_after_s = 300;
    attr_unit(&L->x, e, "scale-up-after", UNIT_DURATION, &s->cloud_scale_up_after_s, 0, 0);
    s->cloud_idle_release_s = 1800;
    attr_unit(&L->x, e, "idle-release", UNIT_DURATION, &s->cloud_idle_release_s, 0, 0);
}

void load_cluster(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    s->network.topology = TOPO_FAT_TREE;
    s->network.oversubscription = 1;
    s->network.nic_mode = NIC_DIRECT;
    const xmlNode *net = NULL;
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next) {
        if (xml_is(e, "nodes")) load_nodes(L, e);
        else if (xml_is(e, "network")) load_network(L, net = e);
        else if (xml_is(e, "storage")) load_storage(L, e);
        else if (xml_is(e, "spares")) {
            attr_int(&L->x, e, "warm", &s->spares_warm, 0, 0, 1000000);
            attr_unit(&L->x, e, "cold-provision", UNIT_DURATION, &s->cold_provision_s, 0, 1);
        } else if (xml_is(e, "cloud")) load_cloud(L, e);
    }
    if (!L->x.failed) check_cluster_size(L, sec);
    if (!L->x.failed && net) check_nccl_algo(L, net);
    if (!L->x.failed) load_node_names(L, sec);
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next)
        if (xml_is(e, "unavailable")) load_unavailable(L, e);
}

void load_failure(loader *L, const xmlNode *e, int line) {
    scenario *s = L->s;
    sc_failure *f = PUSH(L, s->failures, s->n_failures, e);
    if (!f) return;
    f->line = line ? line : xml_line(&L->x, e);
    strcpy(f->distribution, "exponential");
    f->shape = 1;
    int has_profile = attr_str(&L->x, e, "profile", f->profile, sizeof f->profile, 0);
    if (has_profile > 0 && !rel_profile_find(s->cat, f->profile)) {
        char names[256];
        xml_fail(&L->x, e, "profile", "unknown failure profile; expected one of: %s",
                 rel_profile_names(s->cat, names, sizeof names));
        return;
    }
    if (attr_str(&L->x, e, "component", f->component, sizeof f->component, has_profile <= 0) < 0) return;
    if (attr_unit(&L->x, e, "mtbf", UNIT_DURATION, &f->mtbf_s, has_profile <= 0, 1) < 0) return;
    attr_str(&L->x, e, "distribution", f->distribution, sizeof f->distribution, 0);
    int has_shape = attr_unit(&L->x, e, "shape", UNIT_NUMBER, &f->shape, 0, 1);
    if (has_shape > 0 && strcmp(f->distribution, "weibull") != 0)
        xml_fail(&L->x, e, "shape", "shape applies to distribution=\"weibull\" only");
    if (!strcmp(f->distribution, "weibull") && has_shape == 0)
        xml_fail(&L->x, e, NULL, "distribution=\"weibull\" needs a shape (e.g. shape=\"0.8\")");
    if (f->shape > 20) xml_fail(&L->x, e, "shape", "shape must be from 0 to 20");
    attr_unit(&L->x, e, "mttr", UNIT_DURATION, &f->mttr_s, 0, 1);
    attr_str(&L->x, e, "cause", f->cause, sizeof f->cause, 0);
}

void load_failures(loader *L, const xmlNode *sec) {
    sc_failures_cfg *fc = &L->s->failure_cfg;
    attr_unit(&L->x, sec, "watchdog", UNIT_DURATION, &fc->watchdog_s, 0, 1);
    attr_unit(&L->x, sec, "crash-detect", UNIT_DURATION, &fc->crash_detect_s, 0, 0);
    attr_unit(&L->x, sec, "restart", UNIT_DURATION, &fc->restart_s, 0, 0);
    attr_bool(&L->x, sec, "health-check-at-start", &fc->health_at_start);
    if (attr_unit(&L->x, sec, "health-check-coverage", UNIT_NUMBER, &fc->health_coverage, 0, 0) > 0 &&
        fc->health_coverage > 1)
        xml_fail(&L->x, sec, "health-check-coverage", "health-check-coverage must be a fraction from 0 to 1");
    attr_int(&L->x, sec, "lemon-threshold", &fc->lemon_threshold, 0, 0, 1000);
    attr_unit(&L->x, sec, "lemon-window", UNIT_DURATION, &fc->lemon_window_s, 0, 1);
    attr_unit(&L->x, sec, "fleet-age", UNIT_DURATION, &fc->fleet_age_s, 0, 0);
    if (!L->x.failed && xmlHasProp(sec, BAD_CAST "href")) load_failures_href(L, sec);
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next)
        if (xml_is(e, "failure")) load_failure(L, e, 0);
}

void load_scheduler(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    attr_str(&L->x, sec, "policy", s->sched_policy, sizeof s->sched_policy, 0);
    attr_bool(&L->x, sec, "preemption", &s->sched_preemption);
    attr_str(&L->x, sec, "backfill", s->sched_backfill, sizeof s->sched_backfill, 0);
    attr_int(&L->x, sec, "backfill-depth", &s->sched_backfill_depth, 0, 1, 100000000);
    attr_str(&L->x, sec, "placement", s->sched_placement, sizeof s->sched_placement, 0);
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next) {
        if (!xml_is(e, "queue")) continue;
        sc_queue *q = PUSH(L, s->queues, s->n_queues, e);
        if (!q) return;
        q->line = xml_line(&L->x, e);
        if (attr_str(&L->x, e, "name", q->name, sizeof q->name, 1) < 0) return;
        int dup = nameset_find(&L->queue_names, NAMES(s->queues, name), q->name);
        if (dup >= 0) FAIL_RETURN(L, e, "name", "queue name already used on line %d", s->queues[dup].line);
        if (nameset_add(&L->queue_names, NAMES(s->queues, name), s->n_queues - 1) < 0)
            FAIL_RETURN(L, e, NULL, "out of memory");
        attr_int(&L->x, e, "quota-gpus", &q->quota_gpus, 0, 0, 100000000);
        attr_unit(&L->x, e, "max-time", UNIT_DURATION, &q->max_time_s, 0, 1);
        load_queue_nodes(L, e, q);
    }
}

static int has_queue(const loader *L, const char *z) {
    const scenario *s = L->s;
    if (s->n_queues == 0) return 1;          /* no queues declared: one implicit queue */
    return nameset_find(&L->queue_names, NAMES(s->queues, name), z) >= 0;
}

void load_queue_ref(loader *L, const xmlNode *e, char *queue, size_t len, int *priority) {
    if (attr_str(&L->x, e, "queue", queue, len, 0) > 0 && !has_queue(L, queue)) {
        xml_fail(&L->x, e, "queue", "no <queue name=\"%s\"> in <scheduler>", queue);
        return;
    }
    if (!queue[0]) snprintf(queue, len, "%s", L->s->n_queues ? L->s->queues[0].name : "default");
    attr_int(&L->x, e, "priority", priority, 0, -1000000, 1000000);
}


/* The node type a job runs on, and how many GPUs of it the cluster has. */
long long loader_gpus_of_type(const loader *L, const char *type) {
    const scenario *s = L->s;
    int i = s->n_nodes && L->type_gpus ? nameset_find(&L->node_types, NAMES(s->nodes, type), type) : -1;
    return i < 0 ? 0 : L->type_gpus[i];
}
