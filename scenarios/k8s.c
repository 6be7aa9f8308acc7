/*
 * k8s: Kubernetes pods, nodes, Kueue Workloads and AppWrappers into a live
 * cluster record (k8s.h).
 */
#include "scenarios/k8s.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/grow.h"
#include "scenarios/jsonin.h"
#include "scenarios/nameset.h"

#define GPU_RESOURCE "nvidia.com/gpu"     /* the NVIDIA device plugin's extended resource */
#define NODE_LIST_MAX 2048

typedef enum kstate { K_PENDING, K_RUNNING, K_HELD, K_DONE } kstate;

/* One job as the lists describe it, before it becomes a live_job. */
typedef struct kjob {
    char key[256];                       /* "Kind/namespace/name" of its owner */
    char id[192], name[128], ns[64], queue[64];
    int gpus_declared;                   /* a Workload's or AppWrapper's pod sets; -1 none */
    int gpus_pods;                       /* its pods that have not ended */
    int pods, pods_ended;
    kstate state;                        /* from the Workload or AppWrapper */
    int declared, pod_running;
    double submit_s, start_s, limit_s, priority;
    char nodes[NODE_LIST_MAX];           /* the nodes its running pods are on, comma-separated */
} kjob;

typedef struct kctx {
    live_cluster *c;
    kjob *j;
    int n;
    size_t cap;
    name_set set;
    double now;
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} kctx;

/* "path:line: where: message" into the context's err (the first only). */
__attribute__((format(printf, 4, 5))) static int kfail(kctx *k, const jv *v, const char *where, const char *fmt, ...) {
    if (k->failed++) return -1;
    int n = snprintf(k->err, k->errlen, "%s:%d: %s: ", k->path, jv_line(v), where);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < k->errlen) vsnprintf(k->err + n, k->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* An RFC 3339 time (metav1.Time: "2026-11-26T09:30:00Z") relative to now;
 * 0 when absent; NAN when it is not one. */
static double ktime(const kctx *k, const jv *v) {
    if (!v || jv_kind(v) == JV_NULL) return 0;
    int64_t sec;
    double frac;
    int zone;
    const char *z = jv_str(v, NULL);
    if (!z || datetime_parse(z, &sec, &frac, &zone) < 0) return NAN;
    return (double)sec + frac - k->now;
}

/* The job of key (made when new, with name and namespace), or NULL when
 * memory runs out. */
static kjob *job_of(kctx *k, const char *key, const char *ns, const char *name) {
    int i = k->n ? nameset_find(&k->set, NAMES(k->j, key), key) : -1;
    if (i >= 0) return &k->j[i];
    if (GROW(k->j, k->cap, (size_t)k->n + 1)) return NULL;
    kjob *j = &k->j[k->n];
    memset(j, 0, sizeof *j);
    snprintf(j->key, sizeof j->key, "%s", key);
    snprintf(j->ns, sizeof j->ns, "%s", ns);
    snprintf(j->name, sizeof j->name, "%s", name);
    snprintf(j->id, sizeof j->id, "%s/%s", ns, name);
    j->gpus_declared = -1;
    if (nameset_add(&k->set, NAMES(k->j, key), k->n) < 0) return NULL;
    k->n++;
    return j;
}

/* A whole number of GPUs in a resource list (a quantity string "8" or a
 * number); 0 when the list does not name the GPU resource; -1 (failed)
 * when it is not a whole number. */
static int gpu_quantity(kctx *k, const jv *list, const char *where) {
    const jv *q = jv_get(list, GPU_RESOURCE);
    if (!q) return 0;
    const char *z = jv_str(q, NULL);
    char *end = NULL;
    double v = z ? strtod(z, &end) : jv_num(q, -1);
    if ((z && (end == z || *end)) || !(v >= 0) || v != floor(v) || v > 1e6)
        return kfail(k, q, where, "expected a whole number of GPUs (\"%s\")", GPU_RESOURCE);
    return (int)v;
}

/* The GPUs of one container list: the sum (containers) or the largest
 * (initContainers, which run one at a time) of each one's request, or its
 * limit when it gives no request (an extended resource's request defaults
 * to its limit). -1 when one is not a whole number. */
static int containers_gpus(kctx *k, const jv *list, const char *where, const char *field, int largest) {
    int total = 0;
    for (int i = 0; i < jv_len(list); i++) {
        char w[256];
        const jv *res = jv_get(jv_at(list, i), "resources");
        snprintf(w, sizeof w, "%s.%s[%d].resources.requests", where, field, i);
        int g = gpu_quantity(k, jv_get(res, "requests"), w);
        if (g == 0 && jv_get(jv_get(res, "requests"), GPU_RESOURCE) == NULL) {
            snprintf(w, sizeof w, "%s.%s[%d].resources.limits", where, field, i);
            g = gpu_quantity(k, jv_get(res, "limits"), w);
        }
        if (g < 0) return -1;
        total = largest ? (g > total ? g : total) : total + g;
    }
    return total;
}

/* GPUs one pod of spec (a PodSpec) asks for. -1 failed. */
static int pod_spec_gpus(kctx *k, const jv *spec, const char *where) {
    int run = containers_gpus(k, jv_get(spec, "containers"), where, "containers", 0);
    int init = run < 0 ? -1 : containers_gpus(k, jv_get(spec, "initContainers"), where, "initContainers", 1);
    return init < 0 ? -1 : init > run ? init : run;
}

/* The label of an object's metadata ("" none). */
static const char *label(const jv *obj, const char *name) {
    return jv_str(jv_get(jv_path(obj, "metadata", "labels", NULL), name), "");
}

/* The condition of type in status.conditions, or NULL. */
static const jv *condition(const jv *obj, const char *type) {
    const jv *cs = jv_path(obj, "status", "conditions", NULL);
    for (int i = 0; i < jv_len(cs); i++)
        if (!strcmp(jv_str(jv_get(jv_at(cs, i), "type"), ""), type)) return jv_at(cs, i);
    return NULL;
}

static int condition_true(const jv *obj, const char *type) {
    return !strcmp(jv_str(jv_get(condition(obj, type), "status"), ""), "True");
}

/* ---- Nodes --------------------------------------------------------------- */

static int read_node(kctx *k, const jv *it, int i) {
    char w[96];
    live_node *n = live_add_node(k->c);
    const char *name = jv_str(jv_path(it, "metadata", "name", NULL), NULL);
    snprintf(w, sizeof w, "items[%d].metadata.name", i);
    if (!n) return kfail(k, it, w, "out of memory");
    if (!name) return kfail(k, it, w, "expected the node's name");
    snprintf(w, sizeof w, "items[%d].status.allocatable", i);
    n->gpus = gpu_quantity(k, jv_path(it, "status", "allocatable", NULL), w);
    if (n->gpus < 0) return -1;
    const jv *ready = condition(it, "Ready");
    const char *st = jv_str(jv_get(ready, "status"), "True");
    char reason[512] = "";
    n->state = strcmp(st, "True") ? LIVE_DOWN : jv_is_true(jv_path(it, "spec", "unschedulable", NULL)) ? LIVE_DRAINED
                                                                                                        : LIVE_UP;
    if (n->state == LIVE_DOWN) {
        snprintf(reason, sizeof reason, "%s: %s", jv_str(jv_get(ready, "reason"), "NotReady"),
                 jv_str(jv_get(ready, "message"), ""));
        double t = ktime(k, jv_get(ready, "lastTransitionTime"));
        snprintf(w, sizeof w, "items[%d].status.conditions.Ready.lastTransitionTime", i);
        if (isnan(t)) return kfail(k, jv_get(ready, "lastTransitionTime"), w, "expected an RFC 3339 time");
        n->since_s = t < 0 ? t : 0;
    } else if (n->state == LIVE_DRAINED) {
        snprintf(reason, sizeof reason, "cordoned (spec.unschedulable)");
    }
    if (live_set(&n->name, name) || live_set(&n->gpu_model, label(it, "nvidia.com/gpu.product")) ||
        live_set(&n->reason, reason) || live_set(&n->partitions, ""))
        return kfail(k, it, w, "out of memory");
    return 0;
}

/* ---- Owners ---------------------------------------------------------------- */

/* The job key and name of an object's owner: "Kind/ns/name" of its first
 * ownerReference, else of the object itself (kind given). */
static void owner_key(const jv *it, const char *kind, char *key, size_t klen, const char **name) {
    const jv *own = jv_at(jv_path(it, "metadata", "ownerReferences", NULL), 0);
    const char *ns = jv_str(jv_path(it, "metadata", "namespace", NULL), "default");
    *name = jv_str(jv_path(it, "metadata", "name", NULL), "");
    if (own) kind = jv_str(jv_get(own, "kind"), kind), *name = jv_str(jv_get(own, "name"), *name);
    snprintf(key, klen, "%s/%s/%s", kind, ns, *name);
}

/* Submit time, queue and priority common to Workloads and AppWrappers. */
static int declare(kctx *k, kjob *j, const jv *it, const char *queue, const char *where) {
    j->declared = 1;
    j->submit_s = ktime(k, jv_path(it, "metadata", "creationTimestamp", NULL));
    if (isnan(j->submit_s))
        return kfail(k, jv_path(it, "metadata", "creationTimestamp", NULL), where, "expected an RFC 3339 time");
    snprintf(j->queue, sizeof j->queue, "%s", queue[0] ? queue : label(it, "kueue.x-k8s.io/queue-name"));
    return 0;
}

/* The time a condition became true, relative to now (0 absent); NAN bad. */
static double since(kctx *k, const jv *it, const char *type) {
    return condition_true(it, type) ? ktime(k, jv_get(condition(it, type), "lastTransitionTime")) : 0;
}

/* ---- Kueue Workloads ------------------------------------------------------ */

/* GPUs of the Workload's pod sets: count (or the admitted count) times one
 * pod's. -1 failed. */
static int workload_gpus(kctx *k, const jv *it, int i) {
    const jv *sets = jv_path(it, "spec", "podSets", NULL);
    const jv *adm = jv_path(it, "status", "admission", "podSetAssignments", NULL);
    int total = 0;
    for (int p = 0; p < jv_len(sets); p++) {
        char w[128];
        const jv *ps = jv_at(sets, p), *cnt = jv_get(jv_at(adm, p), "count");
        snprintf(w, sizeof w, "items[%d].spec.podSets[%d].template.spec", i, p);
        int per = pod_spec_gpus(k, jv_path(ps, "template", "spec", NULL), w);
        double n = jv_num(cnt ? cnt : jv_get(ps, "count"), -1);
        snprintf(w, sizeof w, "items[%d].spec.podSets[%d].count", i, p);
        if (per < 0) return -1;
        if (!(n >= 0) || n != floor(n)) return kfail(k, ps, w, "expected a whole number of pods");
        total += per * (int)n;
    }
    return total;
}

static int read_workload(kctx *k, const jv *it, int i) {
    char key[256], w[64];
    const char *name;
    owner_key(it, "Workload", key, sizeof key, &name);
    const jv *owners = jv_path(it, "metadata", "ownerReferences", NULL);
    if (jv_len(owners) > 1 && !strncmp(key, "Pod/", 4)) {      /* a Kueue pod group: named after the group */
        name = jv_str(jv_path(it, "metadata", "name", NULL), "");
        snprintf(key, sizeof key, "PodGroup/%s/%s", jv_str(jv_path(it, "metadata", "namespace", NULL), "default"), name);
    }
    kjob *j = job_of(k, key, jv_str(jv_path(it, "metadata", "namespace", NULL), "default"), name);
    snprintf(w, sizeof w, "items[%d]", i);
    if (!j) return kfail(k, it, w, "out of memory");
    if (declare(k, j, it, jv_str(jv_path(it, "spec", "queueName", NULL), ""), w) < 0) return -1;
    if ((j->gpus_declared = workload_gpus(k, it, i)) < 0) return -1;
    j->priority = jv_num(jv_path(it, "spec", "priority", NULL), 0);
    j->limit_s = jv_num(jv_path(it, "spec", "maximumExecutionTimeSeconds", NULL), 0);
    const jv *active = jv_path(it, "spec", "active", NULL);
    j->state = condition_true(it, "Finished")                      ? K_DONE
               : active && jv_kind(active) == JV_FALSE              ? K_HELD
               : condition_true(it, "Admitted")                     ? K_RUNNING
                                                                    : K_PENDING;
    j->start_s = j->state == K_RUNNING ? since(k, it, "Admitted") : 0;
    if (isnan(j->start_s)) return kfail(k, condition(it, "Admitted"), w, "Admitted.lastTransitionTime: expected an RFC 3339 time");
    return 0;
}

/* ---- AppWrappers ------------------------------------------------------------ */

/* GPUs of the pod specs inside a wrapped resource v: an object holding
 * "containers" is a PodSpec; on the way down, each "replicas" (PyTorchJob
 * replica specs, JobSet replicated jobs, Deployments) or "parallelism"
 * (batch Jobs) multiplies. -1 failed. */
static int template_gpus(kctx *k, const jv *v, long mult, int depth, const char *where) {
    if (depth > 32 || (jv_kind(v) != JV_OBJ && jv_kind(v) != JV_ARR)) return 0;
    if (jv_kind(v) == JV_OBJ && jv_get(v, "containers")) {
        int g = pod_spec_gpus(k, v, where);
        return g < 0 ? -1 : (int)(g * mult);
    }
    const jv *r = jv_get(v, "replicas") ? jv_get(v, "replicas") : jv_get(v, "parallelism");
    if (jv_kind(r) == JV_NUM) mult *= (long)jv_num(r, 1);
    if (mult > 10000000) return kfail(k, r, where, "expected at most 10,000,000 pods");
    long total = 0;
    for (int i = 0; i < jv_len(v); i++) {
        int g = template_gpus(k, jv_at(v, i), mult, depth + 1, where);
        if (g < 0) return -1;
        total += g;
    }
    return total > 100000000 ? kfail(k, v, where, "expected at most 100,000,000 GPUs") : (int)total;
}

static int read_appwrapper(kctx *k, const jv *it, int i) {
    char key[256], w[96];
    const char *ns = jv_str(jv_path(it, "metadata", "namespace", NULL), "default");
    const char *name = jv_str(jv_path(it, "metadata", "name", NULL), "");
    snprintf(key, sizeof key, "AppWrapper/%s/%s", ns, name);
    kjob *j = job_of(k, key, ns, name);
    snprintf(w, sizeof w, "items[%d]", i);
    if (!j) return kfail(k, it, w, "out of memory");
    int declared = j->declared;                    /* a Workload of this AppWrapper came first */
    if (!declared && declare(k, j, it, "", w) < 0) return -1;
    const jv *comps = jv_path(it, "spec", "components", NULL);
    int g = 0;
    for (int c = 0; c < jv_len(comps); c++) {
        snprintf(w, sizeof w, "items[%d].spec.components[%d].template", i, c);
        int t = template_gpus(k, jv_get(jv_at(comps, c), "template"), 1, 0, w);
        if (t < 0) return -1;
        g += t;
    }
    if (!declared) j->gpus_declared = g;
    const char *ph = jv_str(jv_path(it, "status", "phase", NULL), "");
    kstate s = !strcmp(ph, "Running") || !strcmp(ph, "Resuming") || !strcmp(ph, "Resetting") ? K_RUNNING
               : !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed") || !strcmp(ph, "Terminating") ? K_DONE
                                                                                                    : K_PENDING;
    if (declared && s != K_DONE && j->state != K_PENDING) return 0;      /* the Workload said more */
    j->state = s;
    j->start_s = s != K_RUNNING ? 0 : condition_true(it, "ResourcesDeployed") ? since(k, it, "ResourcesDeployed")
                                                                              : since(k, it, "QuotaReserved");
    if (isnan(j->start_s)) return kfail(k, it, w, "status.conditions: expected RFC 3339 lastTransitionTime");
    return 0;
}

/* ---- Pods ---------------------------------------------------------------- */

/* The job a pod belongs to: its AppWrapper, JobSet or Kueue pod group by
 * label, else its owner, else itself. */
static void pod_key(const jv *it, char *key, size_t len, const char **name) {
    static const char *const by_label[][2] = { { "workload.codeflare.dev/appwrapper", "AppWrapper" },
                                               { "jobset.sigs.k8s.io/jobset-name", "JobSet" },
                                               { "kueue.x-k8s.io/pod-group-name", "PodGroup" } };
    const char *ns = jv_str(jv_path(it, "metadata", "namespace", NULL), "default");
    for (size_t l = 0; l < sizeof by_label / sizeof by_label[0]; l++)
        if (label(it, by_label[l][0])[0]) {
            *name = label(it, by_label[l][0]);
            snprintf(key, len, "%s/%s/%s", by_label[l][1], ns, *name);
            return;
        }
    owner_key(it, "Pod", key, len, name);
}

/* node into j's list of nodes, once. */
static void add_node_name(kjob *j, const char *node) {
    size_t n = strlen(node), len = strlen(j->nodes);
    for (const char *p = j->nodes; (p = strstr(p, node)); p += n)
        if ((p == j->nodes || p[-1] == ',') && (p[n] == ',' || !p[n])) return;
    if (len + n + 2 < sizeof j->nodes) snprintf(j->nodes + len, sizeof j->nodes - len, "%s%s", len ? "," : "", node);
}

/* A pod that has not ended: its GPUs, node and start into j. */
static int pod_live(kctx *k, kjob *j, const jv *it, int i) {
    char w[96];
    snprintf(w, sizeof w, "items[%d].spec", i);
    int g = pod_spec_gpus(k, jv_get(it, "spec"), w);
    if (g < 0) return -1;
    j->gpus_pods += g;
    const char *node = jv_str(jv_path(it, "spec", "nodeName", NULL), "");
    if (!node[0]) return 0;                                   /* not scheduled yet */
    double t = ktime(k, jv_path(it, "status", "startTime", NULL));
    snprintf(w, sizeof w, "items[%d].status.startTime", i);
    if (isnan(t)) return kfail(k, jv_path(it, "status", "startTime", NULL), w, "expected an RFC 3339 time");
    if (!j->pod_running || t < j->start_s) j->start_s = t;
    j->pod_running = 1;
    add_node_name(j, node);
    return 0;
}

static int read_pod(kctx *k, const jv *it, int i) {
    char key[256], w[96];
    const char *name;
    pod_key(it, key, sizeof key, &name);
    kjob *j = job_of(k, key, jv_str(jv_path(it, "metadata", "namespace", NULL), "default"), name);
    snprintf(w, sizeof w, "items[%d]", i);
    if (!j) return kfail(k, it, w, "out of memory");
    const char *phase = jv_str(jv_path(it, "status", "phase", NULL), "Pending");
    int ended = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
    j->pods++, j->pods_ended += ended;
    if (!j->declared) {
        double t = ktime(k, jv_path(it, "metadata", "creationTimestamp", NULL));
        if (isnan(t)) return kfail(k, it, w, "metadata.creationTimestamp: expected an RFC 3339 time");
        if (j->pods == 1 || t < j->submit_s) j->submit_s = t;
        j->priority = jv_num(jv_path(it, "spec", "priority", NULL), 0);
        j->limit_s = jv_num(jv_path(it, "spec", "activeDeadlineSeconds", NULL), 0);
        snprintf(j->queue, sizeof j->queue, "%s", label(it, "kueue.x-k8s.io/queue-name"));
    }
    return ended ? 0 : pod_live(k, j, it, i);
}

/* ---- Jobs into the record ------------------------------------------------ */

/* j's state, or K_DONE when it has ended (or never asked for anything). */
static kstate final_state(const kjob *j) {
    if (j->declared) return j->state == K_PENDING && j->pod_running ? K_RUNNING : j->state;
    if (j->pods == j->pods_ended) return K_DONE;
    return j->pod_running ? K_RUNNING : K_PENDING;
}

static int add_partition(live_cluster *c, const char *queue) {
    if (!queue[0]) return 0;
    for (int i = 0; i < c->n_parts; i++)
        if (!strcmp(c->parts[i].name, queue)) return 0;
    live_partition *p = live_add_partition(c);
    return p ? live_set(&p->name, queue) : -1;
}

static int emit_job(live_cluster *c, const kjob *j, kstate s) {
    int gpus = j->gpus_declared >= 0 ? j->gpus_declared : j->gpus_pods;
    if (gpus == 0) return c->jobs_without_gpus++, 0;
    live_job *o = live_add_job(c);
    if (!o) return -1;
    o->state = s == K_RUNNING ? LIVE_RUNNING : s == K_HELD ? LIVE_HELD : LIVE_PENDING;
    o->gpus = gpus;
    o->submit_s = j->submit_s < 0 ? j->submit_s : 0;
    o->start_s = s == K_RUNNING && j->start_s < 0 ? j->start_s : 0;
    o->limit_s = j->limit_s > 0 ? j->limit_s : 0;
    o->priority = j->priority;
    for (const char *p = j->nodes; *p; p++) o->nodes += p == j->nodes || p[-1] == ',';
    const char *reason = s == K_HELD ? "inactive (spec.active false)" : s == K_PENDING ? "waiting for quota" : "";
    if (live_set(&o->id, j->id) || live_set(&o->name, j->name) || live_set(&o->user, "") ||
        live_set(&o->account, j->ns) || live_set(&o->partition, j->queue) || live_set(&o->reason, reason) ||
        live_set(&o->node_list, s == K_RUNNING ? j->nodes : "") || live_set(&o->after, ""))
        return -1;
    return add_partition(c, j->queue);
}

typedef int (*item_fn)(kctx *k, const jv *it, int i);

/* Each item of the list d (NULL: not given) through fn. 0, or -1 with err. */
static int read_list(kctx *k, const jsonin *d, item_fn fn) {
    if (!d) return 0;
    k->path = jsonin_path(d);
    const jv *items = jv_get(jsonin_root(d), "items");
    int rc = 0;
    if (jv_kind(items) != JV_ARR)
        rc = kfail(k, jsonin_root(d), "items", "expected the array of a list (kubectl get ... -o json)");
    for (int i = 0; rc == 0 && i < jv_len(items); i++) {
        if (jv_kind(jv_at(items, i)) != JV_OBJ) rc = kfail(k, jv_at(items, i), "items", "expected objects");
        else rc = fn(k, jv_at(items, i), i);
    }
    return rc;
}

/* The lists, from their files (path) or their text: nodes first (a pod
 * names its node), then Workloads and AppWrappers (they declare jobs),
 * then pods; then the jobs into c. */
static int read_lists(live_cluster *c, const char *const path[K8S_LISTS], const k8s_text *text, double now_unix_s,
                      char *err, size_t errlen) {
    static const int order[K8S_LISTS] = { K8S_NODES, K8S_WORKLOADS, K8S_APPWRAPPERS, K8S_PODS };
    static const item_fn fns[K8S_LISTS] = { [K8S_PODS] = read_pod, [K8S_NODES] = read_node,
                                            [K8S_WORKLOADS] = read_workload, [K8S_APPWRAPPERS] = read_appwrapper };
    kctx k = { .c = c, .now = now_unix_s, .path = "k8s", .err = err, .errlen = errlen };
    if (!(now_unix_s > 0)) {
        snprintf(err, errlen, "k8s: the time the lists were read is needed (Unix seconds)");
        return -1;
    }
    int rc = 0;
    for (int o = 0; rc == 0 && o < K8S_LISTS; o++) {
        int l = order[o];
        jsonin *d = NULL;
        if (path && path[l]) d = jsonin_read_file(path[l], err, errlen);
        else if (text && text[l].text) d = jsonin_parse(text[l].text, text[l].len, text[l].name, err, errlen);
        else continue;
        rc = d ? read_list(&k, d, fns[l]) : -1;
        jsonin_free(d);
    }
    for (int i = 0; rc == 0 && i < k.n; i++) {
        kstate st = final_state(&k.j[i]);
        if (st != K_DONE && emit_job(c, &k.j[i], st) < 0) rc = -1, snprintf(err, errlen, "k8s: out of memory");
    }
    if (rc == 0 && (live_set(&c->source, "Kubernetes (kubectl get -o json)") < 0)) rc = -1;
    if (rc == 0) c->snapshot_unix_s = now_unix_s;
    free(k.j);
    nameset_free(&k.set);
    return rc;
}

int k8s_read(live_cluster *c, const char *pods_json, const char *nodes_json, const char *workloads_json,
             const char *appwrappers_json, double now_unix_s, char *err, size_t errlen) {
    const char *path[K8S_LISTS] = { [K8S_PODS] = pods_json, [K8S_NODES] = nodes_json,
                                    [K8S_WORKLOADS] = workloads_json, [K8S_APPWRAPPERS] = appwrappers_json };
    return read_lists(c, path, NULL, now_unix_s, err, errlen);
}

int k8s_read_text(live_cluster *c, const k8s_text lists[K8S_LISTS], double now_unix_s, char *err, size_t errlen) {
    return read_lists(c, NULL, lists, now_unix_s, err, errlen);
}
