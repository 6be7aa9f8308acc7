/*
 * scenario: load, validate and check a scenario file into plain structs.
 *
 * Three passes, each stopping at the first error:
 *   1. parse with libxml2: no network, no DTD loading, no entity expansion,
 *      documents with a DOCTYPE are refused outright (no entity tricks),
 *      input size and nesting bounded;
 *   2. validate the structure against the embedded RELAX NG schema;
 *   3. read every attribute with its unit (base/units.c) and check
 *      meaning: ranges, catalog references, tp*pp*dp*cp = gpus.
 * Errors read "file:line: <element attr="value">: what was expected".
 */
#include "scenarios/scenario.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "models/serving.h"
#include "scenarios/catalog_xml.h"
#include "scenarios/embedded.h"
#include "scenarios/infile.h"
#include "scenarios/profile.h"
#include "scenarios/schema.h"
#include "scenarios/trace.h"
#include "base/units.h"

#define MAX_FILE_BYTES INFILE_SCENARIO_MAX_BYTES  /* a scenario is hand-written: 16 MiB is plenty */
#define MAX_DEPTH 32                   /* the schema needs 4 levels */
#define MAX_ITEMS 100000               /* elements of one kind */

/* A set of names kept in an array of structs (the name a char[] field at
 * the same offset in each element): open addressing over element indices,
 * so a duplicate-name check or a lookup is O(1). A linear search per
 * element was quadratic: 100,000 queues took 92 s to load. */
typedef struct name_set {
    int *slot;                     /* element index + 1; 0 = empty */
    size_t cap, n;
} name_set;

static size_t name_hash(const char *z) {
    uint64_t h = 1469598103934665603ull;            /* FNV-1a */
    for (; *z; z++) h = (h ^ (unsigned char)*z) * 1099511628211ull;
    return (size_t)h;
}

/* The index of the element whose name (at base + i * stride) is z, or -1. */
static int nameset_find(const name_set *h, const char *base, size_t stride, const char *z) {
    if (!h->cap) return -1;
    for (size_t k = name_hash(z) & (h->cap - 1);; k = (k + 1) & (h->cap - 1)) {
        int i = h->slot[k] - 1;
        if (i < 0) return -1;
        if (!strcmp(base + (size_t)i * stride, z)) return i;
    }
}

/* Add element i (its name at base + i * stride; base is the array's current
 * address: the array may have moved since the last call). Returns 0, or -1
 * when out of memory (the set is unchanged). */
static int nameset_add(name_set *h, const char *base, size_t stride, int i) {
    if (2 * (h->n + 1) > h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        int *slot = calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t k = 0; k < h->cap; k++) {
            if (!h->slot[k]) continue;
            size_t j = name_hash(base + (size_t)(h->slot[k] - 1) * stride) & (cap - 1);
            while (slot[j]) j = (j + 1) & (cap - 1);
            slot[j] = h->slot[k];
        }
        free(h->slot);
        h->slot = slot;
        h->cap = cap;
    }
    size_t j = name_hash(base + (size_t)i * stride) & (h->cap - 1);
    while (h->slot[j]) j = (j + 1) & (h->cap - 1);
    h->slot[j] = i + 1;
    h->n++;
    return 0;
}

static void nameset_free(name_set *h) {
    free(h->slot);
    memset(h, 0, sizeof *h);
}

/* NAMES(arr, field): the base and stride of a name field of an array. */
#define NAMES(arr, field) (const char *)(arr)[0].field, sizeof *(arr)

typedef struct loader {
    const char *file;
    char *err;
    size_t errlen;
    int failed;
    scenario *s;
    const char *text;              /* the document as parsed (line endings made LF) */
    size_t text_len;
    int lines;                     /* lines in the document */
    int *tag_line;                 /* line of the k-th start tag, in document order */
    int n_tags;
    long long cluster_gpus;        /* GPUs of all <nodes>, once <cluster> is read */
    name_set queue_names, storage_names, training_names, jobs_names, inference_names;
    name_set node_types;           /* s->nodes by type: the first <nodes> of each type */
    name_set served;               /* the models of the <inference> being read */
    long long *type_gpus;          /* GPUs of each type, at its first <nodes>' index */
} loader;

/* The line where an element's start tag begins (libxml2 records where the
 * start tag ends, which for a tag spread over several lines is not where a
 * reader looks). The start tags were found in one pass over the text
 * (index_tags) and the elements numbered in document order (number_elements):
 * O(1) per element, where scanning the text per element was quadratic in a
 * file of many elements (60,000 <nodes> took 21 s). */
static int line_of(const loader *L, const xmlNode *e) {
    long n = xmlGetLineNo(e);
    if (e && e->type == XML_ELEMENT_NODE && e->_private && L->tag_line) {
        intptr_t k = (intptr_t)e->_private - 1;
        if (k >= 0 && k < L->n_tags) return L->tag_line[k];
    }
    return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

/* ---- errors ----------------------------------------------------------- */

static void fail_at(loader *L, int line, const char *fmt, ...) {
    if (L->failed) return;
    L->failed = 1;
    if (L->lines > 0 && line > L->lines) line = L->lines;   /* "end of data" errors */
    if (line < 1) line = 1;             /* libxml2 gives -1 for nodes it has no line for */
    int n = snprintf(L->err, L->errlen, "%s:%d: ", L->file, line);
    if (n < 0 || (size_t)n >= L->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* One line: libxml2 messages and attribute values may hold newlines. */
    for (char *p = L->err; *p; p++)
        if ((unsigned char)*p < ' ') *p = ' ';
}

/* "<training tp="3">" or "<training>" for messages. */
static const char *show(const xmlNode *e, const char *attr, char *buf, size_t len) {
    xmlChar *v = attr ? xmlGetProp(e, (const xmlChar *)attr) : NULL;
    if (v) {
        char val[96];
        snprintf(val, sizeof val, "%s", (const char *)v);
        if (strlen((const char *)v) >= sizeof val) strcpy(val + sizeof val - 4, "...");
        snprintf(buf, len, "<%s %s=\"%s\">", (const char *)e->name, attr, val);
        xmlFree(v);
    } else if ((v = xmlGetProp(e, (const xmlChar *)"name")) != NULL) {
        snprintf(buf, len, "<%s name=\"%.60s\">", (const char *)e->name, (const char *)v);
        xmlFree(v);
    } else {
        snprintf(buf, len, "<%s>", (const char *)e->name);
    }
    return buf;
}

static void fail(loader *L, const xmlNode *e, const char *attr, const char *fmt, ...) {
    if (L->failed) return;
    char what[512], tag[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fail_at(L, line_of(L, e), "%s: %s", show(e, attr, tag, sizeof tag), what);
}

#define FAIL_RETURN(...) do { fail(__VA_ARGS__); return; } while (0)
#define FAIL_AT_RETURN(...) do { fail_at(__VA_ARGS__); return; } while (0)

/* ---- attribute readers -------------------------------------------------
 * Each returns 1 when the attribute was present and valid, 0 when absent
 * (and not required), -1 on error (L->failed set). */

static int attr_str(loader *L, const xmlNode *e, const char *attr, char *out, size_t len,
                    int required) {
    xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
    if (!v) {
        if (required) fail(L, e, NULL, "missing attribute %s", attr);
        return required ? -1 : 0;
    }
    size_t n = strlen((const char *)v);
    if (n == 0 || n >= len) {
        fail(L, e, attr, "%s must be 1 to %zu characters", attr, len - 1);
        xmlFree(v);
        return -1;
    }
    memcpy(out, v, n + 1);
    xmlFree(v);
    return 1;
}

/* A value with a unit; min_exclusive: value must be > 0. */
static int attr_unit(loader *L, const xmlNode *e, const char *attr, unit_kind kind,
                     double *out, int required, int positive) {
    xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
    if (!v) {
        if (required) fail(L, e, NULL, "missing attribute %s (%s)", attr, units_expected(kind));
        return required ? -1 : 0;
    }
    char why[128] = "";
    double x = 0;
    int rc = units_parse((const char *)v, kind, &x, why, sizeof why);
    xmlFree(v);
    if (rc < 0) {
        char *cut = strstr(why, "; expected");      /* we say what is expected ourselves */
        if (cut) *cut = 0;
        fail(L, e, attr, "%s must be %s (%s)", attr, units_expected(kind), why);
        return -1;
    }
    if (positive && !(x > 0)) {
        fail(L, e, attr, "%s must be greater than zero", attr);
        return -1;
    }
    *out = x;
    return 1;
}

/* A whole count in [lo, hi] (counts accept 4k, 2M). */
static int attr_int(loader *L, const xmlNode *e, const char *attr, int *out, int required,
                    long long lo, long long hi) {
    double x;
    int rc = attr_unit(L, e, attr, UNIT_COUNT, &x, required, 0);
    if (rc <= 0) return rc;
    if (x != floor(x) || x < (double)lo || x > (double)hi) {
        fail(L, e, attr, "%s must be a whole number from %lld to %lld", attr, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 1;
}

static int attr_i64(loader *L, const xmlNode *e, const char *attr, int64_t *out, int required,
                    long long lo, double hi) {
    double x;
    int rc = attr_unit(L, e, attr, UNIT_COUNT, &x, required, 0);
    if (rc <= 0) return rc;
    if (x != floor(x) || x < (double)lo || x > hi) {
        fail(L, e, attr, "%s must be a whole number from %lld to %.0f", attr, lo, hi);
        return -1;
    }
    *out = (int64_t)x;
    return 1;
}

static int attr_bool(loader *L, const xmlNode *e, const char *attr, int *out) {
    char z[16];
    int rc = attr_str(L, e, attr, z, sizeof z, 0);
    if (rc <= 0) return rc;
    if (!strcmp(z, "true") || !strcmp(z, "1") || !strcmp(z, "yes")) *out = 1;
    else if (!strcmp(z, "false") || !strcmp(z, "0") || !strcmp(z, "no")) *out = 0;
    else {
        fail(L, e, attr, "%s must be true or false", attr);
        return -1;
    }
    return 1;
}

/* One of a fixed set of words. */
static int attr_enum(loader *L, const xmlNode *e, const char *attr, int (*parse)(const char *),
                     const char *choices, int *out) {
    char z[32];
    int rc = attr_str(L, e, attr, z, sizeof z, 0);
    if (rc <= 0) return rc;
    int v = parse(z);
    if (v < 0) {
        fail(L, e, attr, "%s must be one of %s", attr, choices);
        return -1;
    }
    *out = v;
    return 1;
}

static int is(const xmlNode *e, const char *name) {
    return e->type == XML_ELEMENT_NODE && strcmp((const char *)e->name, name) == 0;
}

static int count_children(const xmlNode *e, const char *name) {
    int n = 0;
    for (const xmlNode *c = e->children; c; c = c->next) n += is(c, name);
    return n;
}

/* Grow-by-one array append; the arrays are small and built once. */
static void *push(loader *L, void **arr, int *n, size_t size, const xmlNode *e) {
    if (*n >= MAX_ITEMS) {
        fail(L, e, NULL, "too many <%s> elements (at most %d)", (const char *)e->name, MAX_ITEMS);
        return NULL;
    }
    /* Grow to the next power of two when full (a count of 0 or a power of
     * two), as trace.c does for the same arrays. */
    if (*n == 0 || (*n & (*n - 1)) == 0) {
        void *q = realloc(*arr, (*n == 0 ? 1 : (size_t)*n * 2) * size);
        if (!q) {
            fail(L, e, NULL, "out of memory");
            return NULL;
        }
        *arr = q;
    }
    void *p = *arr;
    memset((char *)p + (size_t)*n * size, 0, size);
    return (char *)p + (size_t)(*n)++ * size;
}
#define PUSH(L, arr, n, e) push((L), (void **)&(arr), &(n), sizeof *(arr), (e))

/* ---- sections ----------------------------------------------------------- */

static int parse_topology(const char *z) {
    if (!strcmp(z, "fat-tree")) return TOPO_FAT_TREE;
    if (!strcmp(z, "rail-optimized")) return TOPO_RAIL_OPTIMIZED;
    if (!strcmp(z, "single-switch")) return TOPO_SINGLE_SWITCH;
    return -1;
}

static int parse_nic_mode(const char *z) {
    if (!strcmp(z, "direct")) return NIC_DIRECT;
    if (!strcmp(z, "overlay")) return NIC_OVERLAY;
    return -1;
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
        fail(L, sec, NULL, "the cluster has %lld GPUs; at most %d are supported", gpus, MAX_CLUSTER_GPUS);
}

static void load_cluster(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    s->network.topology = TOPO_FAT_TREE;
    s->network.oversubscription = 1;
    s->network.nic_mode = NIC_DIRECT;
    for (const xmlNode *e = sec->children; e && !L->failed; e = e->next) {
        if (is(e, "nodes")) {
            sc_nodes *n = PUSH(L, s->nodes, s->n_nodes, e);
            if (!n) return;
            n->line = line_of(L, e);
            if (attr_str(L, e, "type", n->type, sizeof n->type, 1) < 0) return;
            if (attr_int(L, e, "count", &n->count, 1, 1, 1000000) < 0) return;
            if (!catalog_node(s->cat, n->type)) {
                char names[1024];
                catalog_names(s->cat, "node", names, sizeof names);
                fail(L, e, "type", "unknown node type; expected one of: %s", names);
                return;
            }
        } else if (is(e, "network")) {
            int v;
            s->network.line = line_of(L, e);
            if (attr_enum(L, e, "topology", parse_topology, "fat-tree, rail-optimized, single-switch", &v) > 0)
                s->network.topology = (topology_kind)v;
            if (attr_enum(L, e, "nic-mode", parse_nic_mode, "direct, overlay", &v) > 0)
                s->network.nic_mode = (nic_mode)v;
            if (attr_unit(L, e, "oversubscription", UNIT_NUMBER, &s->network.oversubscription, 0, 1) > 0 &&
                (s->network.oversubscription < 1 || s->network.oversubscription > 64))
                fail(L, e, "oversubscription", "oversubscription must be from 1 (non-blocking) to 64");
            attr_int(L, e, "nodes-per-leaf", &s->network.nodes_per_leaf, 0, 1, 100000);
        } else if (is(e, "storage")) {
            sc_storage *st = PUSH(L, s->storage, s->n_storage, e);
            if (!st) return;
            st->line = line_of(L, e);
            if (attr_str(L, e, "name", st->name, sizeof st->name, 1) < 0) return;
            if (attr_str(L, e, "kind", st->kind, sizeof st->kind, 1) < 0) return;
            if (!catalog_storage(s->cat, st->kind)) {
                char names[512];
                catalog_names(s->cat, "storage", names, sizeof names);
                fail(L, e, "kind", "unknown storage kind; expected one of: %s", names);
                return;
            }
            int dup = nameset_find(&L->storage_names, NAMES(s->storage, name), st->name);
            if (dup >= 0) FAIL_RETURN(L, e, "name", "storage name already used on line %d", s->storage[dup].line);
            if (nameset_add(&L->storage_names, NAMES(s->storage, name), s->n_storage - 1) < 0)
                FAIL_RETURN(L, e, NULL, "out of memory");
            attr_unit(L, e, "bandwidth", UNIT_BANDWIDTH, &st->bw_bytes_per_s, 0, 1);
            attr_unit(L, e, "capacity", UNIT_SIZE, &st->capacity_bytes, 0, 1);
        } else if (is(e, "spares")) {
            attr_int(L, e, "warm", &s->spares_warm, 0, 0, 1000000);
            attr_unit(L, e, "cold-provision", UNIT_DURATION, &s->cold_provision_s, 0, 1);
        } else if (is(e, "cloud")) {
            s->has_cloud = 1;
            if (attr_str(L, e, "node-type", s->cloud_node_type, sizeof s->cloud_node_type, 1) < 0) return;
            if (!catalog_node(s->cat, s->cloud_node_type)) {
                char names[1024];
                catalog_names(s->cat, "node", names, sizeof names);
                fail(L, e, "node-type", "unknown node type; expected one of: %s", names);
                return;
            }
            s->cloud_max_nodes = 0;
            attr_int(L, e, "max-nodes", &s->cloud_max_nodes, 0, 0, 1000000);
            s->cloud_provision_s = 900;
            attr_unit(L, e, "provision-time", UNIT_DURATION, &s->cloud_provision_s, 0, 0);
            s->cloud_scale_up_after_s = 300;
            attr_unit(L, e, "scale-up-after", UNIT_DURATION, &s->cloud_scale_up_after_s, 0, 0);
            s->cloud_idle_release_s = 1800;
            attr_unit(L, e, "idle-release", UNIT_DURATION, &s->cloud_idle_release_s, 0, 0);
        }
    }
    if (!L->failed) check_cluster_size(L, sec);
}

static int known_profile(const char *z) { return strcmp(z, "llama3") == 0 ? 0 : -1; }

static void load_failures(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    sc_failures_cfg *fc = &s->failure_cfg;
    attr_unit(L, sec, "watchdog", UNIT_DURATION, &fc->watchdog_s, 0, 1);
    attr_unit(L, sec, "crash-detect", UNIT_DURATION, &fc->crash_detect_s, 0, 0);
    attr_unit(L, sec, "restart", UNIT_DURATION, &fc->restart_s, 0, 0);
    attr_bool(L, sec, "health-check-at-start", &fc->health_at_start);
    if (attr_unit(L, sec, "health-check-coverage", UNIT_NUMBER, &fc->health_coverage, 0, 0) > 0 &&
        fc->health_coverage > 1)
        fail(L, sec, "health-check-coverage", "health-check-coverage must be a fraction from 0 to 1");
    attr_int(L, sec, "lemon-threshold", &fc->lemon_threshold, 0, 0, 1000);
    attr_unit(L, sec, "lemon-window", UNIT_DURATION, &fc->lemon_window_s, 0, 1);
    attr_unit(L, sec, "fleet-age", UNIT_DURATION, &fc->fleet_age_s, 0, 0);
    for (const xmlNode *e = sec->children; e && !L->failed; e = e->next) {
        if (!is(e, "failure")) continue;
        sc_failure *f = PUSH(L, s->failures, s->n_failures, e);
        if (!f) return;
        f->line = line_of(L, e);
        strcpy(f->distribution, "exponential");
        f->shape = 1;
        int has_profile = attr_str(L, e, "profile", f->profile, sizeof f->profile, 0);
        if (has_profile > 0 && known_profile(f->profile) < 0) {
            fail(L, e, "profile", "unknown failure profile; expected llama3");
            return;
        }
        if (attr_str(L, e, "component", f->component, sizeof f->component, has_profile <= 0) < 0) return;
        if (attr_unit(L, e, "mtbf", UNIT_DURATION, &f->mtbf_s, has_profile <= 0, 1) < 0) return;
        attr_str(L, e, "distribution", f->distribution, sizeof f->distribution, 0);
        int has_shape = attr_unit(L, e, "shape", UNIT_NUMBER, &f->shape, 0, 1);
        if (has_shape > 0 && strcmp(f->distribution, "weibull") != 0)
            fail(L, e, "shape", "shape applies to distribution=\"weibull\" only");
        if (!strcmp(f->distribution, "weibull") && has_shape == 0)
            fail(L, e, NULL, "distribution=\"weibull\" needs a shape (e.g. shape=\"0.8\")");
        if (f->shape > 20) fail(L, e, "shape", "shape must be from 0 to 20");
        attr_unit(L, e, "mttr", UNIT_DURATION, &f->mttr_s, 0, 1);
        attr_str(L, e, "cause", f->cause, sizeof f->cause, 0);
    }
}

static void load_scheduler(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    attr_str(L, sec, "policy", s->sched_policy, sizeof s->sched_policy, 0);
    attr_bool(L, sec, "preemption", &s->sched_preemption);
    attr_str(L, sec, "backfill", s->sched_backfill, sizeof s->sched_backfill, 0);
    attr_int(L, sec, "backfill-depth", &s->sched_backfill_depth, 0, 1, 100000000);
    attr_str(L, sec, "placement", s->sched_placement, sizeof s->sched_placement, 0);
    for (const xmlNode *e = sec->children; e && !L->failed; e = e->next) {
        if (!is(e, "queue")) continue;
        sc_queue *q = PUSH(L, s->queues, s->n_queues, e);
        if (!q) return;
        q->line = line_of(L, e);
        if (attr_str(L, e, "name", q->name, sizeof q->name, 1) < 0) return;
        int dup = nameset_find(&L->queue_names, NAMES(s->queues, name), q->name);
        if (dup >= 0) FAIL_RETURN(L, e, "name", "queue name already used on line %d", s->queues[dup].line);
        if (nameset_add(&L->queue_names, NAMES(s->queues, name), s->n_queues - 1) < 0)
            FAIL_RETURN(L, e, NULL, "out of memory");
        attr_int(L, e, "quota-gpus", &q->quota_gpus, 0, 0, 100000000);
    }
}

static int has_queue(const loader *L, const char *z) {
    const scenario *s = L->s;
    if (s->n_queues == 0) return 1;          /* no queues declared: one implicit queue */
    return nameset_find(&L->queue_names, NAMES(s->queues, name), z) >= 0;
}

static void load_queue_ref(loader *L, const xmlNode *e, char *queue, size_t len, int *priority) {
    if (attr_str(L, e, "queue", queue, len, 0) > 0 && !has_queue(L, queue)) {
        fail(L, e, "queue", "no <queue name=\"%s\"> in <scheduler>", queue);
        return;
    }
    if (!queue[0]) snprintf(queue, len, "%s", L->s->n_queues ? L->s->queues[0].name : "default");
    attr_int(L, e, "priority", priority, 0, -1000000, 1000000);
}

static void load_model(loader *L, const xmlNode *e, sc_training *t) {
    scenario *s = L->s;
    llm_spec *m = &t->model;
    catalog_defaults(catalog_fields_llm, m);
    if (attr_str(L, e, "preset", t->preset, sizeof t->preset, 0) > 0) {
        const llm_spec *p = catalog_llm(s->cat, t->preset);
        if (!p) {
            char names[1024];
            catalog_names(s->cat, "llm", names, sizeof names);
            fail(L, e, "preset", "unknown model preset; expected one of: %s", names);
            return;
        }
        *m = *p;
    } else {
        snprintf(m->name, sizeof m->name, "%.*s", (int)sizeof m->name - 1, t->name);
    }
    int req = t->preset[0] == 0;
    attr_int(L, e, "layers", &m->layers, req, 1, 100000);
    attr_int(L, e, "hidden", &m->hidden, req, 1, 10000000);
    attr_int(L, e, "ffn-hidden", &m->ffn_hidden, req, 1, 100000000);
    attr_int(L, e, "heads", &m->heads, req, 1, 100000);
    if (attr_int(L, e, "kv-heads", &m->kv_heads, 0, 1, 100000) == 0 && req) m->kv_heads = m->heads;
    attr_int(L, e, "vocab", &m->vocab, req, 1, 100000000);
    /* Not given on a model without a preset: -1, and models/transformer.c
     * infers it (gated unless ffn-hidden = 4 x hidden). */
    if (attr_bool(L, e, "gated-ffn", &m->gated_ffn) == 0 && req) m->gated_ffn = -1;
    if (L->failed) return;
    if (m->kv_heads == 0) m->kv_heads = m->heads;
    if (m->hidden % m->heads != 0)
        fail(L, e, "heads", "hidden (%d) must be a multiple of heads", m->hidden);
    else if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
        fail(L, e, "kv-heads", "heads (%d) must be a multiple of kv-heads", m->heads);
}

static void load_checkpoint(loader *L, const xmlNode *e, sc_checkpoint *c) {
    char z[32];
    c->present = 1;
    c->line = line_of(L, e);
    strcpy(c->mode, "sync");
    strcpy(c->layout, "sharded");
    c->interval_auto = 1;
    if (attr_str(L, e, "interval", z, sizeof z, 0) > 0 && strcmp(z, "auto") != 0) {
        c->interval_auto = 0;
        attr_unit(L, e, "interval", UNIT_DURATION, &c->interval_s, 0, 1);
    }
    attr_str(L, e, "mode", c->mode, sizeof c->mode, 0);
    attr_str(L, e, "layout", c->layout, sizeof c->layout, 0);
    if (attr_str(L, e, "gather", z, sizeof z, 0) > 0) c->streaming_gather = !strcmp(z, "streaming");
}

/* The node type a job runs on, and how many GPUs of it the cluster has. */
static long long gpus_of_type(const loader *L, const char *type) {
    const scenario *s = L->s;
    int i = s->n_nodes && L->type_gpus ? nameset_find(&L->node_types, NAMES(s->nodes, type), type) : -1;
    return i < 0 ? 0 : L->type_gpus[i];
}

static int parse_attention(const char *z) {
    if (!strcmp(z, "fused")) return 0;
    if (!strcmp(z, "unfused")) return 1;
    return -1;
}

static void load_training(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_training *t = PUSH(L, s->training, s->n_training, e);
    if (!t) return;
    train_plan *p = &t->plan;
    t->line = line_of(L, e);
    if (attr_str(L, e, "name", t->name, sizeof t->name, 1) < 0) return;
    int dup = nameset_find(&L->training_names, NAMES(s->training, name), t->name);
    if (dup >= 0) FAIL_RETURN(L, e, "name", "a training job of this name is on line %d", s->training[dup].line);
    if (nameset_add(&L->training_names, NAMES(s->training, name), s->n_training - 1) < 0)
        FAIL_RETURN(L, e, NULL, "out of memory");

    p->tp = p->pp = p->cp = 1;
    p->dp = 0;
    p->micro_batch = 0;                     /* not given: the model picks (train_step) */
    p->precision = PREC_BF16;
    p->sharding = SHARD_NONE;
    p->recompute = RECOMPUTE_NONE;
    p->schedule = PP_1F1B;
    p->virtual_stages = 0;                  /* the model picks the interleaving */
    p->sequence_parallel = -1;              /* decided by train_plan_defaults */
    p->attn_unfused = -1;                   /* decided by train_plan_defaults */
    int v;
    attr_int(L, e, "tp", &p->tp, 0, 1, 1024);
    attr_int(L, e, "pp", &p->pp, 0, 1, 4096);
    attr_int(L, e, "cp", &p->cp, 0, 1, 4096);
    int has_dp = attr_int(L, e, "dp", &p->dp, 0, 1, 10000000);
    int has_gpus = attr_int(L, e, "gpus", &t->gpus, 0, 1, 100000000);
    if (attr_enum(L, e, "sharding", sharding_parse, "none, zero1, zero2, fsdp", &v) > 0) p->sharding = (sharding)v;
    if (attr_enum(L, e, "recompute", recompute_parse, "none, selective, full", &v) > 0) p->recompute = (recompute)v;
    if (attr_enum(L, e, "precision", precision_parse, "bf16, fp16, fp8, fp32, tf32", &v) > 0) p->precision = (precision)v;
    if (attr_enum(L, e, "pipeline-schedule", pp_schedule_parse, "1f1b, interleaved", &v) > 0) {
        p->schedule = (pp_schedule)v;
        if (p->schedule == PP_1F1B) p->virtual_stages = 1;
    }
    attr_int(L, e, "virtual-stages", &p->virtual_stages, 0, 1, 1024);
    attr_bool(L, e, "sequence-parallel", &p->sequence_parallel);
    if (attr_enum(L, e, "attention", parse_attention, "fused, unfused", &v) > 0) p->attn_unfused = v;
    attr_int(L, e, "micro-batch", &p->micro_batch, 0, 1, 1000000);
    attr_int(L, e, "seq-len", &p->seq_len, 0, 1, 100000000);
    int has_tokens = attr_unit(L, e, "tokens", UNIT_COUNT, &t->tokens, 0, 1);
    int has_steps = attr_i64(L, e, "steps", &t->steps, 0, 1, 1e15);
    attr_str(L, e, "storage", t->storage, sizeof t->storage, 0);
    attr_str(L, e, "node-type", t->node_type, sizeof t->node_type, 0);
    load_queue_ref(L, e, t->queue, sizeof t->queue, &t->priority);
    attr_unit(L, e, "submit", UNIT_DURATION, &t->submit_s, 0, 0);
    attr_bool(L, e, "elastic", &t->elastic);
    attr_unit(L, e, "timeout", UNIT_DURATION, &t->timeout_s, 0, 1);
    if (L->failed) return;

    for (const xmlNode *c = e->children; c && !L->failed; c = c->next) {
        if (is(c, "model")) load_model(L, c, t);
        else if (is(c, "checkpoint")) load_checkpoint(L, c, &t->checkpoint);
    }
    if (L->failed) return;

    /* Sizes of the parallel plan. */
    int tpc = p->tp * p->pp * p->cp;
    if (!has_dp && !has_gpus)
        FAIL_RETURN(L, e, NULL, "give gpus or dp (gpus = tp*pp*dp*cp)");
    if (!has_dp) {
        if (t->gpus % tpc != 0)
            FAIL_RETURN(L, e, "gpus", "gpus must be a multiple of tp*pp*cp = %d", tpc);
        p->dp = t->gpus / tpc;
    }
    long long prod = (long long)tpc * p->dp;
    if (prod > 100000000) FAIL_RETURN(L, e, "dp", "tp*pp*dp*cp = %lld GPUs is too many", prod);
    if (has_gpus && prod != t->gpus)
        FAIL_RETURN(L, e, "gpus", "gpus must equal tp*pp*dp*cp = %d*%d*%d*%d = %lld",
                    p->tp, p->pp, p->dp, p->cp, prod);
    t->gpus = (int)prod;

    if (has_tokens > 0 && has_steps > 0) FAIL_RETURN(L, e, "steps", "give steps or tokens, not both");
    if (has_tokens <= 0 && has_steps <= 0) FAIL_RETURN(L, e, NULL, "give the job's length as steps=\"N\" or tokens=\"15.6T\"");

    if (!p->seq_len) p->seq_len = t->model.max_context < 4096 ? t->model.max_context : 4096;
    if (t->model.max_context > 0 && p->seq_len > t->model.max_context) {
        /* A warning, not an error: training past the pretrained context is
         * what context extension does (Llama 3.1 went from 8K to 128K in
         * continued pretraining), and the step model still holds; but a
         * planner who meant the published model should know. */
        size_t n = strlen(s->warnings);
        snprintf(s->warnings + n, sizeof s->warnings - n,
                 "%s:%d: warning: <training name=\"%s\" seq-len=\"%d\">: longer than the context of %s (%d "
                 "tokens); that is context extension, not the published model\n",
                 L->file, line_of(L, e), t->name, p->seq_len, t->model.name, t->model.max_context);
    }
    if (!p->global_batch) p->global_batch = 0;
    int has_gb = attr_int(L, e, "global-batch", &p->global_batch, 0, 1, 100000000);
    if (has_gb < 0) return;
    int mb = p->micro_batch > 0 ? p->micro_batch : 1;
    if (!has_gb) p->global_batch = p->dp * mb * (p->pp > 1 ? 4 * p->pp : 1);
    if (p->global_batch % (p->dp * mb) != 0)
        FAIL_RETURN(L, e, "global-batch", "global-batch must be a multiple of dp*micro-batch = %d",
                    p->dp * mb);
    if (p->schedule == PP_1F1B && p->virtual_stages > 1)
        FAIL_RETURN(L, e, "virtual-stages", "virtual-stages > 1 needs pipeline-schedule=\"interleaved\"");

    /* Where it runs. */
    if (!t->node_type[0] && s->n_nodes > 0) snprintf(t->node_type, sizeof t->node_type, "%s", s->nodes[0].type);
    if (s->n_nodes == 0) FAIL_RETURN(L, e, NULL, "the cluster has no <nodes> to run on");
    if (!catalog_node(s->cat, t->node_type)) {
        char names[1024];
        catalog_names(s->cat, "node", names, sizeof names);
        FAIL_RETURN(L, e, "node-type", "unknown node type; expected one of: %s", names);
    }
    long long avail = gpus_of_type(L, t->node_type);
    if (t->gpus > avail && !(s->has_cloud && !strcmp(s->cloud_node_type, t->node_type)))
        FAIL_RETURN(L, e, "gpus", "needs %d GPUs of node type %s, the cluster has %lld",
                    t->gpus, t->node_type, avail);
    if (t->checkpoint.present && !t->storage[0] && s->n_storage == 0)
        FAIL_RETURN(L, e, NULL, "<checkpoint> needs somewhere to write: a <storage> in <cluster> (and storage=\"name\" here)");
    if (t->storage[0]) {
        if (!s->n_storage || nameset_find(&L->storage_names, NAMES(s->storage, name), t->storage) < 0) FAIL_RETURN(L, e, "storage", "no <storage name=\"%s\"> in <cluster>", t->storage);
    }

    if (has_tokens > 0) {
        double per_step = (double)p->global_batch * p->seq_len;
        double steps = ceil(t->tokens / per_step);
        if (steps > 1e15) FAIL_RETURN(L, e, "tokens", "tokens give more than 1e15 steps");
        t->steps = (int64_t)steps;
    } else {
        t->tokens = (double)t->steps * p->global_batch * p->seq_len;
    }

    train_plan_defaults(p);
    char why[256];
    if (train_plan_check(&t->model, p, why, sizeof why) < 0) fail(L, e, NULL, "%s", why);
}

/* gpus="1:0.6,8:0.3,64:0.1": a size distribution (the weights need not
 * sum to 1). Returns 1 when the attribute is such a list (parsed or
 * failed), 0 when it is a plain count. j->gpus becomes the largest size. */
static int load_gpu_sizes(loader *L, const xmlNode *e, sc_jobs *j) {
    xmlChar *v = xmlGetProp(e, (const xmlChar *)"gpus");
    if (!v || !strchr((const char *)v, ':')) {
        xmlFree(v);
        return 0;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", (const char *)v);
    xmlFree(v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *colon = strchr(tok, ':');
        double size = 0, w = 0;
        char why[64];
        if (!colon || j->n_sizes == 16) goto bad;
        *colon = 0;
        if (units_parse(tok, UNIT_COUNT, &size, why, sizeof why) < 0 || size < 1 || size != floor(size) || size > 1e7 ||
            units_parse(colon + 1, UNIT_NUMBER, &w, why, sizeof why) < 0 || !(w > 0))
            goto bad;
        j->sizes[j->n_sizes] = (int)size;
        j->size_weights[j->n_sizes++] = w;
        if (size > j->gpus) j->gpus = (int)size;
    }
    if (j->n_sizes > 0) return 1;
bad:
    fail(L, e, "gpus", "gpus must be a count, or sizes with weights like \"1:0.6,8:0.3,64:0.1\" (at most 16)");
    return 1;
}

static void load_jobs(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_jobs *j = PUSH(L, s->jobs, s->n_jobs, e);
    if (!j) return;
    j->line = line_of(L, e);
    strcpy(j->arrivals, "poisson");
    strcpy(j->duration_distribution, "fixed");
    if (attr_str(L, e, "name", j->name, sizeof j->name, 1) < 0) return;
    int dup = nameset_find(&L->jobs_names, NAMES(s->jobs, name), j->name);
    if (dup >= 0) FAIL_RETURN(L, e, "name", "a <jobs> of this name is on line %d", s->jobs[dup].line);
    if (nameset_add(&L->jobs_names, NAMES(s->jobs, name), s->n_jobs - 1) < 0) FAIL_RETURN(L, e, NULL, "out of memory");
    attr_int(L, e, "count", &j->count, 1, 1, 10000000);
    attr_str(L, e, "arrivals", j->arrivals, sizeof j->arrivals, 0);
    int has_rate = attr_unit(L, e, "rate", UNIT_RATE, &j->rate_per_s, 0, 1);
    if (!load_gpu_sizes(L, e, j)) attr_int(L, e, "gpus", &j->gpus, 1, 1, 100000000);
    attr_unit(L, e, "duration", UNIT_DURATION, &j->duration_s, 1, 1);
    attr_str(L, e, "duration-distribution", j->duration_distribution, sizeof j->duration_distribution, 0);
    load_queue_ref(L, e, j->queue, sizeof j->queue, &j->priority);
    attr_unit(L, e, "timeout", UNIT_DURATION, &j->timeout_s, 0, 1);
    if (!L->failed && has_rate == 0 && strcmp(j->arrivals, "poisson") == 0)
        fail(L, e, NULL, "arrivals=\"poisson\" needs a rate (e.g. rate=\"6/h\")");
    if (!L->failed && j->gpus > L->cluster_gpus && !s->has_cloud)
        fail(L, e, "gpus", "a job needs %d GPUs, the cluster has %lld", j->gpus, L->cluster_gpus);
}

static int parse_batching(const char *z) { return !strcmp(z, "continuous") ? 0 : !strcmp(z, "static") ? 1 : -1; }
static int parse_kv_allocation(const char *z) { return !strcmp(z, "reserve") ? 0 : !strcmp(z, "on-demand") ? 1 : -1; }
static int parse_kv_preemption(const char *z) { return !strcmp(z, "recompute") ? 0 : !strcmp(z, "swap") ? 1 : -1; }
static int parse_router(const char *z) { return !strcmp(z, "round-robin") ? 0 : !strcmp(z, "least-tokens") ? 1 : -1; }
static int parse_scale_metric(const char *z) {
    return !strcmp(z, "queue") ? 0 : !strcmp(z, "concurrency") ? 1 : !strcmp(z, "latency") ? 2 : -1;
}
static int parse_length_dist(const char *z) {
    static const char *k[] = { "fixed", "exponential", "lognormal", "gamma", "uniform" };
    for (int i = 0; i < 5; i++)
        if (!strcmp(z, k[i])) return i;
    return -1;
}
static int parse_arrival_process(const char *z) {
    static const char *k[] = { "offline", "poisson", "bursty", "diurnal", "trace" };
    for (int i = 0; i < 5; i++)
        if (!strcmp(z, k[i])) return i;
    return -1;
}

/* A serving precision (weights or KV cache). */
static int attr_serve_precision(loader *L, const xmlNode *e, const char *attr, precision *out) {
    int v;
    int rc = attr_enum(L, e, attr, precision_parse, "bf16, fp16, fp8, int8, int4", &v);
    if (rc > 0) {
        if (!(v == PREC_BF16 || v == PREC_FP16 || v == PREC_FP8 || v == PREC_INT8 || v == PREC_INT4)) {
            fail(L, e, attr, "%s must be one of bf16, fp16, fp8, int8, int4", attr);
            return -1;
        }
        *out = (precision)v;
    }
    return rc;
}

static int known_llm(loader *L, const xmlNode *e, const char *attr, const char *name) {
    if (catalog_llm(L->s->cat, name)) return 1;
    char names[1024];
    catalog_names(L->s->cat, "llm", names, sizeof names);
    fail(L, e, attr, "unknown model; expected one of: %s", names);
    return 0;
}

/* <model preset= precision= kv-precision= share=>: one model of a multiplexed service. */
static void load_serve_model(loader *L, const xmlNode *c, sc_inference *f, name_set *served) {
    sc_serve_model *m = PUSH(L, f->models, f->n_models, c);
    if (!m) return;
    m->line = line_of(L, c);
    m->precision = f->precision;
    m->share = 1;
    if (attr_str(L, c, "preset", m->model, sizeof m->model, 1) < 0 || !known_llm(L, c, "preset", m->model)) return;
    int dup = nameset_find(served, NAMES(f->models, model), m->model);
    if (dup >= 0)
        FAIL_RETURN(L, c, "preset", "model %s is already served by this <inference> (line %d)", m->model, f->models[dup].line);
    if (nameset_add(served, NAMES(f->models, model), f->n_models - 1) < 0) FAIL_RETURN(L, c, NULL, "out of memory");
    attr_serve_precision(L, c, "precision", &m->precision);
    m->kv_precision = serve_default_kv(m->precision);
    attr_serve_precision(L, c, "kv-precision", &m->kv_precision);
    attr_unit(L, c, "share", UNIT_NUMBER, &m->share, 0, 1);
}

/* A file named by href (relative to the scenario's directory) must be a
 * readable regular file (scenarios/infile.c: never a FIFO or device), so a
 * missing or wrong trace is reported at the element that names it. The file
 * is only opened here, not read. Returns 0, or -1 with L->failed set. */
static int check_href(loader *L, const xmlNode *e, const char *href) {
    char path[1024];
    if (scenario_path(L->s->file, href, path, sizeof path) < 0) {
        fail(L, e, "href", "the path is longer than %zu bytes", sizeof path - 1);
        return -1;
    }
    infile_err ie;
    FILE *f = infile_open(path, INFILE_TRACE_MAX_BYTES, "a CSV file", &ie);
    if (!f) {
        fail(L, e, "href", "%s: %s", path, ie.why);
        return -1;
    }
    fclose(f);
    return 0;
}

static void load_inference(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_inference *f = PUSH(L, s->inference, s->n_inference, e);
    if (!f) return;
    int v;
    f->line = line_of(L, e);
    f->precision = PREC_BF16;
    f->tp = 1;
    f->replicas = 1;
    f->max_batch = 2048;                    /* TensorRT-LLM's default max_batch_size */
    f->input_tokens = 1000;
    f->output_tokens = 200;
    f->slo_percentile = 99;
    strcpy(f->arrival_process, "offline");
    strcpy(f->batching, "continuous");
    f->token_budget = 8192;
    strcpy(f->kv_allocation, "reserve");
    strcpy(f->kv_preemption, "recompute");
    f->block_tokens = 16;
    strcpy(f->router, "least-tokens");
    strcpy(f->input_dist, "fixed");
    strcpy(f->output_dist, "fixed");
    f->input_cv = f->output_cv = 1;
    f->diurnal_amplitude = 0.5;
    f->diurnal_period_s = 86400;
    f->diurnal_peak_s = 14 * 3600.0;
    if (attr_str(L, e, "name", f->name, sizeof f->name, 1) < 0) return;
    int dup = nameset_find(&L->inference_names, NAMES(s->inference, name), f->name);
    if (dup >= 0) FAIL_RETURN(L, e, "name", "an <inference> service of this name is on line %d", s->inference[dup].line);
    if (nameset_add(&L->inference_names, NAMES(s->inference, name), s->n_inference - 1) < 0)
        FAIL_RETURN(L, e, NULL, "out of memory");
    int has_model = attr_str(L, e, "model", f->model, sizeof f->model, 0);
    if (has_model < 0 || (has_model > 0 && !known_llm(L, e, "model", f->model))) return;
    if (attr_serve_precision(L, e, "precision", &f->precision) < 0) return;
    f->kv_precision = serve_default_kv(f->precision);
    attr_serve_precision(L, e, "kv-precision", &f->kv_precision);
    if (attr_str(L, e, "gpu", f->gpu, sizeof f->gpu, 0) > 0 && !catalog_gpu(s->cat, f->gpu)) {
        char names[1024];
        catalog_names(s->cat, "gpu", names, sizeof names);
        FAIL_RETURN(L, e, "gpu", "unknown GPU; expected one of: %s", names);
    }
    if (attr_str(L, e, "node-type", f->node_type, sizeof f->node_type, 0) > 0) {
        const node_spec *ns = catalog_node(s->cat, f->node_type);
        if (!ns || !gpus_of_type(L, f->node_type)) FAIL_RETURN(L, e, "node-type", "no <nodes type=\"%s\"> in <cluster>", f->node_type);
        if (f->gpu[0] && strcmp(ns->gpu, f->gpu))
            FAIL_RETURN(L, e, "node-type", "node type %s has %s GPUs, not gpu=\"%s\"", f->node_type, ns->gpu, f->gpu);
    }
    attr_int(L, e, "tp", &f->tp, 0, 1, 64);
    attr_int(L, e, "replicas", &f->replicas, 0, 1, 1000000);
    attr_int(L, e, "max-batch", &f->max_batch, 0, 1, 1000000);
    attr_int(L, e, "token-budget", &f->token_budget, 0, 1, 100000000);
    attr_enum(L, e, "batching", parse_batching, "continuous, static", &v);
    attr_str(L, e, "batching", f->batching, sizeof f->batching, 0);
    attr_bool(L, e, "chunked-prefill", &f->chunked_prefill);
    attr_enum(L, e, "kv-allocation", parse_kv_allocation, "reserve, on-demand", &v);
    attr_str(L, e, "kv-allocation", f->kv_allocation, sizeof f->kv_allocation, 0);
    attr_enum(L, e, "kv-preemption", parse_kv_preemption, "recompute, swap", &v);
    attr_str(L, e, "kv-preemption", f->kv_preemption, sizeof f->kv_preemption, 0);
    attr_int(L, e, "block-size", &f->block_tokens, 0, 1, 1024);
    if (attr_unit(L, e, "kv-memory-fraction", UNIT_NUMBER, &f->kv_memory_fraction, 0, 1) > 0 &&
        f->kv_memory_fraction > 1)
        fail(L, e, "kv-memory-fraction", "kv-memory-fraction must be a fraction in (0, 1]");
    attr_enum(L, e, "router", parse_router, "round-robin, least-tokens", &v);
    attr_str(L, e, "router", f->router, sizeof f->router, 0);
    attr_unit(L, e, "model-load-time", UNIT_DURATION, &f->model_load_s, 0, 1);
    load_queue_ref(L, e, f->queue, sizeof f->queue, &f->priority);
    if (L->failed) return;
    int has_count = 0;
    nameset_free(&L->served);                /* f->models by preset: this service's */
    for (const xmlNode *c = e->children; c && !L->failed; c = c->next) {
        if (is(c, "arrivals")) {
            f->arrivals_line = line_of(L, c);
            if (attr_enum(L, c, "process", parse_arrival_process, "offline, poisson, bursty, diurnal, trace", &v) < 0) return;
            attr_str(L, c, "process", f->arrival_process, sizeof f->arrival_process, 1);
            int has_rate = attr_unit(L, c, "rate", UNIT_RATE, &f->rate_per_s, 0, 1);
            has_count = attr_i64(L, c, "count", &f->count, 0, 1, 1e9);
            attr_unit(L, c, "start", UNIT_DURATION, &f->arrival_start_s, 0, 0);
            int has_dur = attr_unit(L, c, "duration", UNIT_DURATION, &f->arrival_duration_s, 0, 1);
            int has_cv = attr_unit(L, c, "cv", UNIT_NUMBER, &f->arrival_cv, 0, 1);
            int has_amp = attr_unit(L, c, "amplitude", UNIT_NUMBER, &f->diurnal_amplitude, 0, 0);
            int has_period = attr_unit(L, c, "period", UNIT_DURATION, &f->diurnal_period_s, 0, 1);
            int has_peak = attr_unit(L, c, "peak", UNIT_DURATION, &f->diurnal_peak_s, 0, 0);
            int has_href = attr_str(L, c, "href", f->trace_href, sizeof f->trace_href, 0);
            if (L->failed) return;
            const char *z = f->arrival_process;
            int timed = !strcmp(z, "poisson") || !strcmp(z, "bursty") || !strcmp(z, "diurnal");
            if (timed && has_rate == 0)
                FAIL_RETURN(L, c, NULL, "process=\"%s\" needs a rate (e.g. rate=\"20/s\")", z);
            if (!timed && has_rate > 0) FAIL_RETURN(L, c, "rate", "rate applies to poisson, bursty and diurnal arrivals");
            if (!timed && has_dur > 0) FAIL_RETURN(L, c, "duration", "duration applies to poisson, bursty and diurnal arrivals");
            if (!strcmp(z, "bursty") && has_cv == 0)
                FAIL_RETURN(L, c, NULL, "process=\"bursty\" needs the coefficient of variation of inter-arrival times (e.g. cv=\"3\")");
            if (strcmp(z, "bursty") && has_cv > 0) FAIL_RETURN(L, c, "cv", "cv applies to process=\"bursty\" only");
            if (strcmp(z, "diurnal") && (has_amp > 0 || has_period > 0 || has_peak > 0))
                FAIL_RETURN(L, c, has_amp > 0 ? "amplitude" : has_period > 0 ? "period" : "peak",
                            "amplitude, period and peak apply to process=\"diurnal\" only");
            if (f->diurnal_amplitude > 1) FAIL_RETURN(L, c, "amplitude", "amplitude must be a fraction from 0 to 1");
            if (!strcmp(z, "trace") && has_href == 0)
                FAIL_RETURN(L, c, NULL, "process=\"trace\" needs href=\"requests.csv\" (time,input_tokens,output_tokens[,model])");
            if (strcmp(z, "trace") && has_href > 0) FAIL_RETURN(L, c, "href", "href applies to process=\"trace\" only");
            if (has_href > 0 && check_href(L, c, f->trace_href) < 0) return;
            if (!has_count && !strcmp(z, "trace")) f->count = 0;        /* every row */
            else if (!has_count && !has_dur) f->count = 1000;
            else if (!has_count) f->count = 0;                         /* until the duration ends */
            has_count = 1;
        } else if (is(c, "requests")) {
            attr_int(L, c, "input-tokens", &f->input_tokens, 0, 1, 100000000);
            attr_int(L, c, "output-tokens", &f->output_tokens, 0, 1, 100000000);
            attr_enum(L, c, "input-distribution", parse_length_dist, "fixed, exponential, lognormal, gamma, uniform", &v);
            attr_str(L, c, "input-distribution", f->input_dist, sizeof f->input_dist, 0);
            attr_enum(L, c, "output-distribution", parse_length_dist, "fixed, exponential, lognormal, gamma, uniform", &v);
            attr_str(L, c, "output-distribution", f->output_dist, sizeof f->output_dist, 0);
            attr_unit(L, c, "input-cv", UNIT_NUMBER, &f->input_cv, 0, 1);
            attr_unit(L, c, "output-cv", UNIT_NUMBER, &f->output_cv, 0, 1);
            if (!L->failed && f->model[0]) {
                const llm_spec *m = catalog_llm(s->cat, f->model);
                if (f->input_tokens + f->output_tokens > m->max_context)
                    fail(L, c, NULL, "input + output tokens (%d) exceed %s's context of %d",
                         f->input_tokens + f->output_tokens, f->model, m->max_context);
            }
        } else if (is(c, "slo")) {
            attr_unit(L, c, "ttft", UNIT_DURATION, &f->slo_ttft_s, 0, 1);
            attr_unit(L, c, "tpot", UNIT_DURATION, &f->slo_tpot_s, 0, 1);
            if (attr_unit(L, c, "percentile", UNIT_NUMBER, &f->slo_percentile, 0, 1) > 0 &&
                f->slo_percentile > 100)
                fail(L, c, "percentile", "percentile must be in (0, 100]");
        } else if (is(c, "autoscale")) {
            f->autoscale = 1;
            f->autoscale_line = line_of(L, c);
            strcpy(f->autoscale_metric, "queue");
            f->min_replicas = 1;
            f->max_replicas = f->replicas;
            f->autoscale_interval_s = 30;
            f->autoscale_startup_s = 120;
            f->autoscale_cooldown_s = 300;
            attr_enum(L, c, "metric", parse_scale_metric, "queue, concurrency, latency", &v);
            attr_str(L, c, "metric", f->autoscale_metric, sizeof f->autoscale_metric, 0);
            attr_int(L, c, "min-replicas", &f->min_replicas, 0, 1, 1000000);
            attr_int(L, c, "max-replicas", &f->max_replicas, 1, 1, 1000000);
            if (attr_unit(L, c, "target", !strcmp(f->autoscale_metric, "latency") ? UNIT_DURATION : UNIT_NUMBER,
                          &f->autoscale_target, 1, 1) < 0)
                return;
            attr_unit(L, c, "interval", UNIT_DURATION, &f->autoscale_interval_s, 0, 1);
            attr_unit(L, c, "startup", UNIT_DURATION, &f->autoscale_startup_s, 0, 0);
            attr_unit(L, c, "cooldown", UNIT_DURATION, &f->autoscale_cooldown_s, 0, 0);
            if (!L->failed && f->min_replicas > f->max_replicas)
                fail(L, c, "min-replicas", "min-replicas (%d) must not exceed max-replicas (%d)", f->min_replicas, f->max_replicas);
        } else if (is(c, "model")) {
            load_serve_model(L, c, f, &L->served);
        }
    }
    if (L->failed) return;
    if (!has_count) f->count = 1000;
    if (!has_model && f->n_models == 0)
        FAIL_RETURN(L, e, NULL, "give the model to serve: model=\"llama3-70b\" or <model preset=\"...\"/> children");
    if (has_model > 0 && f->n_models > 0)
        FAIL_RETURN(L, e, "model", "give model= or <model> children, not both");
    if (f->n_models == 1) {
        /* One <model> child is the plain case. */
        snprintf(f->model, sizeof f->model, "%s", f->models[0].model);
        f->precision = f->models[0].precision;
        f->kv_precision = f->models[0].kv_precision;
        f->n_models = 0;
    } else if (!f->model[0]) {
        snprintf(f->model, sizeof f->model, "%s", f->models[0].model);
    }
    for (int i = 0; i < (f->n_models ? f->n_models : 1) && !L->failed; i++) {
        const char *name = f->n_models ? f->models[i].model : f->model;
        const xmlNode *at = e;
        const llm_spec *m = catalog_llm(s->cat, name);
        if (m->heads % f->tp != 0)
            fail(L, at, "tp", "tp must divide the model's %d attention heads", m->heads);
        else if (f->n_models && f->input_tokens + f->output_tokens > m->max_context)
            fail(L, at, NULL, "input + output tokens (%d) exceed %s's context of %d",
                 f->input_tokens + f->output_tokens, name, m->max_context);
    }
}

static void load_workload(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    for (const xmlNode *e = sec->children; e && !L->failed; e = e->next) {
        if (is(e, "training")) load_training(L, e);
        else if (is(e, "jobs")) load_jobs(L, e);
        else if (is(e, "inference")) load_inference(L, e);
        else if (is(e, "trace")) {
            if (s->trace_href[0]) FAIL_RETURN(L, e, NULL, "only one <trace> per workload");
            if (attr_str(L, e, "href", s->trace_href, sizeof s->trace_href, 1) < 0) return;
            if (s->n_nodes == 0) FAIL_RETURN(L, e, NULL, "the cluster has no <nodes> to run the trace on");
            if (trace_load(s, s->trace_href, line_of(L, e), L->err, L->errlen) < 0) {
                L->failed = 1;
                return;
            }
        }
    }
}

/* Microbenchmark sizes follow nccl-tests and CUDA samples, where 1K, 1M, 1G
 * mean 1024, 1024^2, 1024^3: "1KB" .. "8GB" give 1024 .. 8589934592 bytes
 * (CONTRACT.md's example prints 1073741824 for 1GB). Elsewhere KB is 1000. */
static int attr_bench_size(loader *L, const xmlNode *e, const char *attr, double *out, int required) {
    int rc = attr_unit(L, e, attr, UNIT_SIZE, out, required, 1);
    if (rc <= 0) return rc;
    xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
    size_t n = v ? strlen((const char *)v) : 0;
    while (n && strchr(" \t", v[n - 1])) n--;
    static const char pre[] = "KMGTP";
    if (n >= 2 && v[n - 1] == 'B' && strchr(pre, v[n - 2]) && v[n - 2]) {
        int k = (int)(strchr(pre, v[n - 2]) - pre) + 1;
        *out = floor(*out * pow(1.024, k) + 0.5);
    }
    xmlFree(v);
    return rc;
}

/* The largest size a microbenchmark may move: 1 PB (1e15 bytes), far more
 * than any machine holds, and exact as a double and as a size_t. */
#define MAX_BENCH_BYTES 1e15

static void load_sizes(loader *L, const xmlNode *e, sc_microbench *b, double def_min, double def_max) {
    b->min_bytes = def_min;
    b->factor = 2;
    int has_min = attr_bench_size(L, e, "min-size", &b->min_bytes, 0);
    b->max_bytes = has_min > 0 ? b->min_bytes : def_max;
    attr_bench_size(L, e, "max-size", &b->max_bytes, 0);
    attr_unit(L, e, "factor", UNIT_NUMBER, &b->factor, 0, 1);
    if (L->failed) return;
    if (b->max_bytes < b->min_bytes) fail(L, e, "max-size", "max-size must be >= min-size");
    else if (b->max_bytes > MAX_BENCH_BYTES) fail(L, e, "max-size", "max-size must be at most 1PB");
    else if (b->max_bytes > b->min_bytes && b->factor <= 1.0001)
        fail(L, e, "factor", "factor must be greater than 1");
    else if (b->max_bytes > b->min_bytes && log(b->max_bytes / b->min_bytes) / log(b->factor) > 200)
        fail(L, e, "factor", "more than 200 sizes from min-size to max-size; use a larger factor");
}

static int parse_coll_op(const char *z) { return coll_op_parse(z); }

static void load_cost(loader *L, const xmlNode *e) {
    sc_cost *c = &L->s->cost;
    c->line = line_of(L, e);
    if (attr_unit(L, e, "pue", UNIT_NUMBER, &c->pue, 0, 1) > 0 && (c->pue < 1 || c->pue > 3))
        fail(L, e, "pue", "pue must be from 1 (no overhead) to 3");
    attr_unit(L, e, "carbon-per-kwh", UNIT_NUMBER, &c->carbon_kg_per_kwh, 0, 0);
    if (!L->failed && c->carbon_kg_per_kwh > 2)
        fail(L, e, "carbon-per-kwh", "carbon-per-kwh is kg CO2 per kWh, from 0 to 2 (coal is about 1)");
    attr_unit(L, e, "electricity-price", UNIT_NUMBER, &c->electricity_usd_per_kwh, 0, 0);
    if (!L->failed && c->electricity_usd_per_kwh > 5)
        fail(L, e, "electricity-price", "electricity-price is USD per kWh, from 0 to 5");
    attr_bool(L, e, "owned", &c->owned);
}

/* <host-profile>: the cases run on a host (models/host.h), not on GPUs. */
static void load_host_profile(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    if (s->host_profile) FAIL_RETURN(L, e, NULL, "one <host-profile> per scenario");
    if (!(s->host_profile = malloc(sizeof *s->host_profile))) FAIL_RETURN(L, e, NULL, "out of memory");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", L->file);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    if (profile_from_element(e, L->file, dir, s->host_profile, L->err, L->errlen) < 0) L->failed = 1;
}

static void load_microbenchmarks(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    for (const xmlNode *e = sec->children; e && !L->failed; e = e->next)
        if (is(e, "host-profile")) load_host_profile(L, e);
    for (const xmlNode *e = sec->children; e && !L->failed; e = e->next) {
        if (e->type != XML_ELEMENT_NODE || is(e, "host-profile")) continue;
        sc_microbench *b = PUSH(L, s->microbench, s->n_microbench, e);
        if (!b) return;
        int v;
        b->line = line_of(L, e);
        b->precision = PREC_BF16;
        if (is(e, "collective")) {
            b->kind = MB_COLLECTIVE;
            if (attr_enum(L, e, "op", parse_coll_op, "allreduce, allgather, reducescatter, alltoall, broadcast, sendrecv", &v) > 0)
                b->op = (coll_op)v;
            int node_gpus = s->n_nodes ? catalog_node(s->cat, s->nodes[0].type)->gpus : 8;
            b->ranks = node_gpus;
            attr_int(L, e, "ranks", &b->ranks, 0, 2, 100000000);
            if (!L->failed && !s->host_profile && b->ranks > L->cluster_gpus)
                fail(L, e, "ranks", "ranks must be at most the cluster's %lld GPUs", L->cluster_gpus);
            load_sizes(L, e, b, 8, 128 << 20);
        } else if (is(e, "gemm")) {
            b->kind = MB_GEMM;
            attr_int(L, e, "m", &b->m, 1, 1, 1 << 20);
            attr_int(L, e, "n", &b->n, 1, 1, 1 << 20);
            attr_int(L, e, "k", &b->k, 1, 1, 1 << 20);
            if (attr_enum(L, e, "precision", precision_parse, "fp64, fp32, tf32, bf16, fp16, fp8", &v) > 0)
                b->precision = (precision)v;
        } else if (is(e, "copy")) {
            b->kind = MB_COPY;
            attr_str(L, e, "kind", b->copy_kind, sizeof b->copy_kind, 1);
            load_sizes(L, e, b, 1 << 20, 1 << 20);
        } else if (is(e, "storage-write")) {
            b->kind = MB_STORAGE_WRITE;
            attr_bench_size(L, e, "size", &b->size_bytes, 1);
            b->files = 1;
            attr_int(L, e, "files", &b->files, 0, 1, 4096);
            /* The size becomes a byte count of memory and disk (hw/): 1e30B
             * wrapped to 1 byte and reported 1.4e26 GB/s. */
            if (!L->failed && b->size_bytes > MAX_BENCH_BYTES)
                fail(L, e, "size", "size must be at most 1PB (a machine holds no more)");
            else if (!L->failed && b->size_bytes < b->files)
                fail(L, e, "size", "size must be at least one byte per file (%d files)", b->files);
            strcpy(b->path, "out/ckpt-bench");
            attr_str(L, e, "path", b->path, sizeof b->path, 0);
        }
    }
}

/* ---- parse and validate ------------------------------------------------- */

static void silent(void *ctx, const char *fmt, ...) {
    (void)ctx;
    (void)fmt;
}

/* Errors while compiling the built-in grammar: it is valid (tests load
 * it), so a failure there is a failed allocation. */
static void on_grammar_error(void *ctx, xmlErrorPtr x) {
    (void)x;
    *(int *)ctx = 1;
}

static void on_xml_error(void *ctx, xmlErrorPtr x) {
    loader *L = ctx;
    if (L->failed || !x) return;
    char msg[400];
    snprintf(msg, sizeof msg, "%s", x->message ? x->message : "malformed XML");
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
    const char *elem = x->node && ((xmlNode *)x->node)->type == XML_ELEMENT_NODE
                           ? (const char *)((xmlNode *)x->node)->name : NULL;
    int line = x->line > 0 ? x->line : (x->node ? (int)xmlGetLineNo((xmlNode *)x->node) : 1);
    if (x->code == XML_ERR_NO_MEMORY) {
        fail_at(L, line, "out of memory (reading the XML)");
        return;
    }
    if (x->domain == XML_FROM_RELAXNGV) {
        if (elem) line = line_of(L, (xmlNode *)x->node);
        fail_at(L, line, "<%s>: %s (see the schema in README.md)", elem ? elem : "scenario", msg);
    } else {
        fail_at(L, line, "malformed XML: %s", msg);
    }
}


static const char *embedded(const char *path) {
    for (const embedded_file *f = embedded_files; f->path; f++)
        if (!strcmp(f->path, path)) return f->data;
    return NULL;
}

/* The first element nested deeper than MAX_DEPTH, or NULL. */
static const xmlNode *too_deep(const xmlNode *e, int depth) {
    if (depth > MAX_DEPTH) return e;
    for (const xmlNode *c = e->children; c; c = c->next) {
        const xmlNode *d = c->type == XML_ELEMENT_NODE ? too_deep(c, depth + 1) : NULL;
        if (d) return d;
    }
    return NULL;
}

/* Refuse a DOCTYPE before libxml2 sees it: no entity of any kind is
 * declared, expanded or fetched. Scans the prolog (comments, processing
 * instructions, blanks) up to the first element. Returns its line or 0. */
static int doctype_line(const char *z, size_t len) {
    const char *p = z, *end = z + len;
    int line = 1;
    while (p < end) {
        if (*p == '\n') line++;
        if (*p != '<') {
            p++;
            continue;
        }
        if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
            for (p += 4; p < end && !(end - p >= 3 && !memcmp(p, "-->", 3)); p++) line += *p == '\n';
            p += 3;
        } else if (end - p >= 2 && p[1] == '?') {
            for (p += 2; p < end && !(end - p >= 2 && !memcmp(p, "?>", 2)); p++) line += *p == '\n';
            p += 2;
        } else if (end - p >= 9 && !memcmp(p, "<!DOCTYPE", 9)) {
            return line;
        } else {
            return 0;                        /* the root element: the prolog is over */
        }
    }
    return 0;
}

/* The text with every line ending (CR LF, a lone CR, LF) made one LF, as
 * XML's end-of-line handling reads it: libxml2 then counts lines the way a
 * reader does (a file with CR-only line endings was all "line 1"). Returns
 * a new NUL-terminated buffer and its length, or NULL when out of memory. */
static char *normalize_newlines(const char *z, size_t len, size_t *out_len) {
    char *t = malloc(len + 1);
    if (!t) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (z[i] == '\r') {
            t[n++] = '\n';
            if (i + 1 < len && z[i + 1] == '\n') i++;
        } else {
            t[n++] = z[i];
        }
    }
    t[n] = 0;
    *out_len = n;
    return t;
}

/* Lines in the (normalized) text: a final line ending does not start a line. */
static int count_lines(const char *z, size_t len) {
    long long n = 1;
    for (size_t i = 0; i < len; i++) n += z[i] == '\n' && i + 1 < len;
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* The line of every start tag, in document order, in one pass over the
 * well-formed text: a '<' outside comments, processing instructions and
 * CDATA that is followed by a name character starts an element ('<' cannot
 * appear in attribute values or text). Returns 0, -1 when out of memory. */
static int index_tags(loader *L) {
    const char *p = L->text, *end = L->text + L->text_len;
    int line = 1, cap = 0;
    for (; p < end; p++) {
        if (*p == '\n') {
            line++;
            continue;
        }
        if (*p != '<' || end - p < 2) continue;
        const char *close = NULL;
        if (end - p >= 4 && !memcmp(p, "<!--", 4)) close = "-->";
        else if (end - p >= 9 && !memcmp(p, "<![CDATA[", 9)) close = "]]>";
        else if (p[1] == '?') close = "?>";
        if (close) {
            size_t k = strlen(close);
            for (p += 2; p < end && !((size_t)(end - p) >= k && !memcmp(p, close, k)); p++) line += *p == '\n';
            p += k - 1;
            continue;
        }
        if (p[1] == '/' || p[1] == '!') continue;
        if (L->n_tags == cap) {
            int c2 = cap ? 2 * cap : 256;
            int *q = realloc(L->tag_line, (size_t)c2 * sizeof *q);
            if (!q) return -1;
            L->tag_line = q;
            cap = c2;
        }
        L->tag_line[L->n_tags++] = line;
    }
    return 0;
}

/* Number the elements in document order (e->_private = k + 1, the index of
 * its start tag in L->tag_line); depth is bounded by too_deep() first.
 * Returns the count so far. */
static int number_elements(xmlNode *e, int k) {
    for (; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE) continue;
        e->_private = (void *)(intptr_t)(++k);
        k = number_elements(e->children, k);
    }
    return k;
}

/* Only encodings whose bytes are ASCII where the markup is: the prolog
 * check (doctype_line) reads bytes, and a DOCTYPE spelled in EBCDIC or
 * UTF-7 passed it (refused later by libxml2, at "line -1"). A declaration
 * naming another encoding, or EBCDIC's signature, is refused at line 1.
 * Returns 0 or -1 with L->failed set. */
static int check_encoding(loader *L, const char *z, size_t len) {
    if (len >= 4 && !memcmp(z, "\x4c\x6f\xa7\x94", 4)) {
        fail_at(L, 1, "<?xml?>: the file is EBCDIC; a scenario must be UTF-8 (or ASCII, ISO-8859-n)");
        return -1;
    }
    if (len >= 3 && !memcmp(z, "\xef\xbb\xbf", 3)) z += 3, len -= 3;      /* UTF-8 byte order mark */
    if (len < 6 || memcmp(z, "<?xml", 5) || !strchr(" \t\n\r", z[5])) return 0;
    const char *end = memchr(z, '>', len);
    if (!end) return 0;                                                /* libxml2 says what is wrong */
    size_t n = (size_t)(end - z);
    const char *p = NULL;
    for (size_t i = 5; i + 8 <= n; i++)
        if (!memcmp(z + i, "encoding", 8) && strchr(" \t\n\r", z[i - 1])) {
            p = z + i + 8;
            break;
        }
    if (!p) return 0;
    while (p < end && strchr(" \t\n\r=", *p)) p++;
    if (p >= end || (*p != '"' && *p != '\'')) return 0;
    char q = *p++, enc[64];
    size_t k = 0;
    while (p < end && *p != q && k + 1 < sizeof enc) enc[k++] = *p++;
    enc[k] = 0;
    static const char *const ok[] = { "utf-8", "utf8", "us-ascii", "ascii", "latin1", "iso-8859-" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t m = strlen(ok[i]);
        if (!strncasecmp(enc, ok[i], m) && (ok[i][m - 1] == '-' ? enc[m] != 0 : enc[m] == 0)) return 0;
    }
    for (char *c = enc; *c; c++)
        if ((unsigned char)*c < ' ' || (unsigned char)*c > '~') *c = '?';
    fail_at(L, 1, "<?xml encoding=\"%s\">: a scenario must be UTF-8 (or ASCII, ISO-8859-n)", enc);
    return -1;
}

static void check_structure(loader *L, xmlNode *root) {
    const char *rng = embedded("scenarios/scenario.rng");
    char msg[1024];
    schema *sc = rng ? schema_new(rng, strlen(rng), msg, sizeof msg) : NULL;
    if (!sc) {
        fail_at(L, 1, rng && !strcmp(msg, "out of memory") ? "out of memory (loading the schema)"
                                                             : "internal error: the schema does not load");
        return;
    }
    const void *bad = NULL;
    const char *bad_attr = NULL;
    if (schema_check(sc, root, msg, sizeof msg, &bad, &bad_attr) < 0)
        fail(L, (const xmlNode *)bad, bad_attr, "%s", msg);
    schema_free(sc);
}

/* libxml2 validates a repeated element (<zeroOrMore> in a content model
 * with attributes) by keeping one state per position and comparing each new
 * state with all kept ones: quadratic in the run's length (100,000 <queue>
 * took 6 s of the load after everything else was linear). Long runs of
 * same-named siblings are therefore validated in batches: the run's first
 * element stays in place and the others are linked after it BATCH at a time,
 * one validation per batch; then the run is put back in order. check_structure
 * (schema.c) has already refused a repeat the grammar does not allow, and a
 * run of one repeatable element is valid exactly when each batch is. */
#define RNG_BATCH 256

typedef struct run {
    xmlNode *first, *after;        /* the run's first element; what follows the run */
    xmlNode **all;                 /* every node after first up to the run's last element */
    int n_all;
    xmlNode **elem;                /* the elements among them */
    int n_elem;
} run;

typedef struct runs {
    run *r;
    int n, cap;
    int oom;
} runs;

/* Between the elements of a run: blanks, comments, processing instructions. */
static int filler(const xmlNode *x) {
    return x->type == XML_COMMENT_NODE || x->type == XML_PI_NODE || (x->type == XML_TEXT_NODE && xmlIsBlankNode((xmlNode *)x));
}

/* Collect runs of more than RNG_BATCH + 1 same-named sibling elements under
 * e (depth bounded by too_deep). On failure sets R->oom. */
static void find_runs(runs *R, xmlNode *e) {
    for (xmlNode *c = e->children; c && !R->oom;) {
        if (c->type != XML_ELEMENT_NODE) {
            c = c->next;
            continue;
        }
        int n = 0, all = 0, k = 0;
        xmlNode *d = c;
        for (xmlNode *x = c; x; x = x->next, k++) {
            if (x->type != XML_ELEMENT_NODE) {
                if (!filler(x)) break;
                continue;
            }
            if (strcmp((const char *)x->name, (const char *)c->name) || x->ns != c->ns) break;
            n++;
            d = x;
            all = k;
        }
        if (n > RNG_BATCH + 1) {
            if (R->n == R->cap) {
                int cap = R->cap ? 2 * R->cap : 8;
                run *q = realloc(R->r, (size_t)cap * sizeof *q);
                if (!q) {
                    R->oom = 1;
                    return;
                }
                R->r = q;
                R->cap = cap;
            }
            run *r = &R->r[R->n];
            r->all = malloc((size_t)all * sizeof *r->all);
            r->elem = malloc((size_t)n * sizeof *r->elem);
            if (!r->all || !r->elem) {
                free(r->all);
                free(r->elem);
                R->oom = 1;
                return;
            }
            R->n++;
            r->first = c;
            r->after = d->next;
            r->n_all = r->n_elem = 0;
            for (xmlNode *x = c->next; x != d->next; x = x->next) {
                r->all[r->n_all++] = x;
                if (x->type == XML_ELEMENT_NODE) r->elem[r->n_elem++] = x;
            }
        }
        /* Inside a batched run, nested runs are not batched: an element
         * is linked in one round only, its children must be whole then. */
        for (xmlNode *x = c; n <= RNG_BATCH + 1 && x != d->next; x = x->next)
            if (x->type == XML_ELEMENT_NODE) find_runs(R, x);
        c = d->next;
    }
}

/* Link mid[0..n) between first and after, by hand (xmlAddNextSibling would
 * merge adjacent text nodes). */
static void relink(xmlNode *first, xmlNode **mid, int n, xmlNode *after) {
    xmlNode *prev = first;
    for (int i = 0; i < n; i++) {
        mid[i]->prev = prev;
        mid[i]->parent = first->parent;
        prev->next = mid[i];
        prev = mid[i];
    }
    prev->next = after;
    if (after) after->prev = prev;
    else first->parent->last = prev;
}

static void validate(loader *L, xmlDoc *doc) {
    const char *rng = embedded("scenarios/scenario.rng");
    if (!rng) FAIL_AT_RETURN(L, 1, "internal error: the grammar is not compiled in");
    int grammar_failed = 0;
    xmlSetStructuredErrorFunc(&grammar_failed, on_grammar_error);
    xmlRelaxNGParserCtxtPtr pc = xmlRelaxNGNewMemParserCtxt(rng, (int)strlen(rng));
    if (pc) xmlRelaxNGSetParserStructuredErrors(pc, on_grammar_error, &grammar_failed);
    xmlRelaxNGPtr grammar = pc ? xmlRelaxNGParse(pc) : NULL;
    xmlRelaxNGValidCtxtPtr vc = grammar && !grammar_failed ? xmlRelaxNGNewValidCtxt(grammar) : NULL;
    xmlSetStructuredErrorFunc(L, on_xml_error);
    runs R = { 0 };
    if (vc) find_runs(&R, xmlDocGetRootElement(doc));
    if (!vc || R.oom) {
        fail_at(L, 1, R.oom ? "out of memory (validating the scenario)" : "out of memory (compiling the scenario grammar)");
    } else {
        xmlRelaxNGSetValidStructuredErrors(vc, on_xml_error, L);
        int batches = 1;
        for (int i = 0; i < R.n; i++)
            if ((R.r[i].n_elem + RNG_BATCH - 1) / RNG_BATCH > batches) batches = (R.r[i].n_elem + RNG_BATCH - 1) / RNG_BATCH;
        for (int b = 0; b < batches && !L->failed; b++) {
            for (int i = 0; i < R.n; i++) {
                run *r = &R.r[i];
                int k = b * RNG_BATCH < r->n_elem ? b * RNG_BATCH : r->n_elem;
                int m = r->n_elem - k < RNG_BATCH ? r->n_elem - k : RNG_BATCH;
                relink(r->first, r->elem + k, m, r->after);
            }
            if (xmlRelaxNGValidateDoc(vc, doc) != 0)
                fail_at(L, 1, "the document does not match the scenario grammar");
        }
        for (int i = 0; i < R.n; i++)              /* the runs back as written */
            relink(R.r[i].first, R.r[i].all, R.r[i].n_all, R.r[i].after);
    }
    for (int i = 0; i < R.n; i++) {
        free(R.r[i].all);
        free(R.r[i].elem);
    }
    free(R.r);
    xmlRelaxNGFreeValidCtxt(vc);
    xmlRelaxNGFree(grammar);
    xmlRelaxNGFreeParserCtxt(pc);
}

static int load(loader *L, const char *data, size_t len) {
    scenario *s = L->s;
    char cerr[1024];
    xmlDoc *doc = NULL;

    if (len == 0) {
        fail_at(L, 1, "empty file; expected a <scenario> document");
        return -1;
    }
    if (len > MAX_FILE_BYTES) {
        fail_at(L, 1, "file is %zu bytes; a scenario XML file may be at most %llu bytes", len, MAX_FILE_BYTES);
        return -1;
    }
    s->xml_text = malloc(len + 1);
    size_t text_len = 0;
    char *text = normalize_newlines(data, len, &text_len);
    L->text = text;
    if (!s->xml_text || !text) {
        fail_at(L, 1, "out of memory");
        return -1;
    }
    memcpy(s->xml_text, data, len);          /* the file's bytes, as written */
    s->xml_text[len] = 0;
    s->xml_len = len;
    L->text_len = text_len;
    L->lines = count_lines(text, text_len);
    if (memchr(text, 0, text_len)) {
        const char *z = memchr(text, 0, text_len);
        int line = 1;
        for (const char *p = text; p < z; p++) line += *p == '\n';
        fail_at(L, line, "binary data (a NUL byte); expected an XML text file");
        return -1;
    }
    if (check_encoding(L, text, text_len) < 0) return -1;
    int dt = doctype_line(text, text_len);
    if (dt) {
        fail_at(L, dt, "<!DOCTYPE>: document type declarations and entities are not allowed in scenarios");
        return -1;
    }
    xmlSetStructuredErrorFunc(L, on_xml_error);
    xmlSetGenericErrorFunc(NULL, silent);     /* (NULL, NULL) would restore the printer to stderr */
    doc = xmlReadMemory(text, (int)text_len, L->file, NULL,
                        XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
    if (!doc) {
        if (!L->failed) fail_at(L, 1, "malformed XML");
        goto out;
    }
    if (doc->intSubset || doc->extSubset) {
        fail_at(L, doc->intSubset ? (int)xmlGetLineNo((xmlNode *)doc->intSubset) : 1,
                "<!DOCTYPE>: document type declarations and entities are not allowed in scenarios");
        goto out;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || strcmp((const char *)root->name, "scenario") != 0) {
        fail_at(L, root ? (int)xmlGetLineNo(root) : 1, "<%s>: expected <scenario> as the root element",
                root ? (const char *)root->name : "");
        goto out;
    }
    const xmlNode *deep = too_deep(root, 1);
    if (deep) {
        fail(L, deep, NULL, "elements nested more than %d deep", MAX_DEPTH);
        goto out;
    }
    if (index_tags(L) < 0) {
        fail_at(L, 1, "out of memory");
        goto out;
    }
    if (number_elements(root, 0) != L->n_tags) {      /* not as expected: libxml2's lines instead */
        free(L->tag_line);
        L->tag_line = NULL;
        L->n_tags = 0;
    }
    check_structure(L, root);
    if (!L->failed) validate(L, doc);
    if (L->failed) goto out;

    /* Catalog: builtin, then the scenario's own additions. */
    s->cat = catalog_new();
    if (!s->cat || catalog_load_builtin(s->cat, cerr, sizeof cerr) < 0) {
        fail_at(L, 1, "internal error: the built-in catalog does not load: %s", s->cat ? cerr : "out of memory");
        goto out;
    }
    for (xmlNode *e = root->children; e; e = e->next)
        if (is(e, "catalog") && catalog_load_element(s->cat, e, L->file, L->err, L->errlen) < 0) {
            L->failed = 1;
            goto out;
        }

    attr_str(L, root, "name", s->name, sizeof s->name, 1);
    double seed = 1;
    if (attr_unit(L, root, "seed", UNIT_NUMBER, &seed, 0, 0) > 0 &&
        (seed < 0 || seed != floor(seed) || seed > 9007199254740992.0))
        fail(L, root, "seed", "seed must be a whole number from 0 to 2^53");
    if (!L->failed) s->seed = (uint64_t)seed;     /* only a checked value: -1 would be UB */
    attr_unit(L, root, "duration", UNIT_DURATION, &s->duration_s, 0, 1);
    if (!L->failed && s->duration_s > 1000.0 * 365 * 86400)
        fail(L, root, "duration", "duration must be at most 1000 years");

    /* Defaults of <failures> attributes (see sc_failures_cfg). */
    s->failure_cfg.watchdog_s = 600;           /* PyTorch NCCL watchdog default: 10 min */
    s->failure_cfg.crash_detect_s = 30;        /* process exit seen by the launcher, ~seconds */
    s->failure_cfg.restart_s = 300;            /* reschedule + container and process start */
    s->failure_cfg.health_at_start = 1;
    s->failure_cfg.lemon_window_s = 30 * 86400.0;

    /* Sections in dependency order: the cluster before what runs on it. */
    static const struct { const char *name; void (*fn)(loader *, const xmlNode *); } order[] = {
        { "cluster", load_cluster }, { "scheduler", load_scheduler }, { "failures", load_failures },
        { "workload", load_workload }, { "microbenchmarks", load_microbenchmarks }, { "cost", load_cost },
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0] && !L->failed; i++)
        for (xmlNode *e = root->children; e && !L->failed; e = e->next)
            if (is(e, order[i].name)) order[i].fn(L, e);
    if (!L->failed && count_children(root, "cluster") == 0 &&
        (count_children(root, "workload") || count_children(root, "microbenchmarks")))
        fail(L, root, NULL, "a scenario with a workload or microbenchmarks needs a <cluster>");
out:
    xmlSetStructuredErrorFunc(NULL, NULL);
    xmlFreeDoc(doc);
    return L->failed ? -1 : 0;
}

/* Everything the loader holds besides the scenario. */
static void loader_free(loader *L) {
    free((char *)L->text);
    free(L->tag_line);
    free(L->type_gpus);
    name_set *sets[] = { &L->queue_names, &L->storage_names, &L->training_names, &L->jobs_names,
                         &L->inference_names, &L->node_types, &L->served };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) nameset_free(sets[i]);
}

int scenario_load_memory(const char *data, size_t len, const char *name, scenario **out,
                         char *err, size_t errlen) {
    *out = NULL;
    scenario *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s:1: out of memory", name);
        return -1;
    }
    snprintf(s->file, sizeof s->file, "%s", name);
    loader L = { .file = name, .err = err, .errlen = errlen, .s = s };
    int rc = load(&L, data, len);
    loader_free(&L);
    if (rc < 0) {
        for (char *p = err; errlen && *p; p++)      /* one line, whoever wrote it */
            if ((unsigned char)*p < ' ') *p = ' ';
        scenario_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int scenario_load(const char *path, scenario **out, char *err, size_t errlen) {
    *out = NULL;
    char *buf;
    size_t n;
    infile_err e;
    if (infile_read(path, MAX_FILE_BYTES, "a scenario XML file", &buf, &n, &e) < 0) {
        snprintf(err, errlen, "%s:%d: %s", path, e.line, e.why);
        return -1;
    }
    int rc = scenario_load_memory(buf, n, path, out, err, errlen);
    free(buf);
    return rc;
}

void scenario_free(scenario *s) {
    if (!s) return;
    free(s->xml_text);
    catalog_free(s->cat);
    free(s->nodes);
    free(s->storage);
    free(s->failures);
    free(s->queues);
    free(s->training);
    free(s->jobs);
    free(s->trace_jobs);
    free(s->trace_names);
    for (int i = 0; i < s->n_inference; i++) free(s->inference[i].models);
    free(s->inference);
    free(s->microbench);
    free(s->host_profile);
    free(s);
}

int scenario_path(const char *scenario_file, const char *href, char *buf, size_t len) {
    const char *slash = strrchr(scenario_file, '/');
    int n = href[0] == '/' || !slash ? snprintf(buf, len, "%s", href)
                                     : snprintf(buf, len, "%.*s/%s", (int)(slash - scenario_file), scenario_file, href);
    if (n < 0 || (size_t)n >= len) {
        if (len) buf[0] = 0;
        return -1;
    }
    return 0;
}

int scenario_gpus(const scenario *s) {
    long long n = 0;
    for (int i = 0; i < s->n_nodes; i++) {
        const node_spec *ns = catalog_node(s->cat, s->nodes[i].type);
        n += (long long)s->nodes[i].count * (ns ? ns->gpus : 0);
    }
    return n > INT_MAX ? INT_MAX : (int)n;
}

int scenario_node_count(const scenario *s) {
    long long n = 0;
    for (int i = 0; i < s->n_nodes; i++) n += s->nodes[i].count;
    return n > INT_MAX ? INT_MAX : (int)n;
}

const node_spec *scenario_node_spec(const scenario *s, int i) {
    return (i >= 0 && i < s->n_nodes) ? catalog_node(s->cat, s->nodes[i].type) : NULL;
}
