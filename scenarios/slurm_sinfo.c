/*
 * slurm_sinfo: `sinfo --json` into the live record's nodes and partitions
 * (slurm.h).
 *
 * 22.05 (openapi/v0.0.38 nodes.c _add_node): "nodes", one object per node:
 * name, state (lower case: "idle", "down", "mixed" ...), state_flags
 * (["DRAIN", "NOT_RESPONDING"]), gres ("gpu:h100:8(S:0-1)"), tres
 * ("cpu=..,gres/gpu=8"), partitions, reason, reason_changed_at.
 * 23.02+ (PARSER_ARRAY(SINFO_DATA), PARSER_ARRAY(PARTITION_INFO)):
 * "sinfo", one object per group of like nodes in one partition:
 * node.state (array), nodes.nodes (names), gres.total, reason.description,
 * reason.time, partition.name, partition.maximums.time (minutes),
 * partition.priority.tier. A node in several partitions is in several
 * groups; it is kept once with its partitions joined.
 *
 * scontrol show nodes --json (the same "nodes" list; from 23.02 on its
 * PARSER_ARRAY(NODE): name, state an array of words, gres, partitions,
 * reason, reason_changed_at) is read when a document of v0.0.39 or later
 * has "nodes" and no "sinfo" (fit-failures reads either: failhist.c).
 *
 * State: DOWN, NOT_RESPONDING, FAIL, ERROR or INVALID_REG is down; else
 * DRAIN (drained or draining: Slurm sends it no new job) or MAINTENANCE (in
 * a maintenance reservation) is drained; FUTURE and DYNAMIC_FUTURE nodes
 * (configured, not present) are left out; everything else (IDLE, MIXED,
 * ALLOCATED, COMPLETING, POWERED_DOWN, RESERVED ...) is up. Flag names: PARSER_FLAG_ARRAY(NODE_STATES).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "scenarios/slurm.h"
#include "scenarios/slurm_int.h"

static const char *node_name(const void *ctx, int i) { return ((const live_cluster *)ctx)->nodes[i].name; }

/* The node named z: its index, or a new node's (-1 out of memory). */
static int node_of(slurm_index *x, live_cluster *c, const char *z, int *is_new) {
    int i = slurm_index_find(x, z, node_name, c);
    if (i >= 0) return *is_new = 0, i;
    live_node *n = live_add_node(c);
    if (!n || live_set(&n->name, z) || live_set(&n->gpu_model, "") || live_set(&n->reason, "") ||
        live_set(&n->partitions, "") || slurm_index_add(x, c->n_nodes - 1, node_name, c) < 0)
        return -1;
    *is_new = 1;
    return c->n_nodes - 1;
}

/* -1: left out (FUTURE); else a live_node_state. */
static int node_state(const char *words) {
    if (slurm_has_word(words, "FUTURE") || slurm_has_word(words, "DYNAMIC_FUTURE")) return -1;
    static const char *const down[] = { "DOWN", "NOT_RESPONDING", "FAIL", "ERROR", "INVALID_REG" };
    for (size_t i = 0; i < sizeof down / sizeof down[0]; i++)
        if (slurm_has_word(words, down[i])) return LIVE_DOWN;
    return slurm_has_word(words, "DRAIN") || slurm_has_word(words, "MAINTENANCE") ? LIVE_DRAINED : LIVE_UP;
}

static int join_partition(live_node *n, const char *part) {
    if (!*part) return 0;
    size_t a = strlen(n->partitions), b = strlen(part);
    for (const char *p = n->partitions; *p; p += strcspn(p, ","), p += (*p == ','))
        if (strcspn(p, ",") == b && !strncmp(p, part, b)) return 0;
    char *s = realloc(n->partitions, a + b + 2);
    if (!s) return -1;
    if (a) s[a++] = ',';
    memcpy(s + a, part, b + 1);
    n->partitions = s;
    return 0;
}

/* What one record says of its node(s). */
typedef struct node_facts {
    int state, gpus;
    char model[64];
    const char *reason;
    double since_s, since_unix_s;
} node_facts;

/* The node's index, its facts set when it is new; -1 out of memory. */
static int apply(live_cluster *c, slurm_index *x, const char *name, const node_facts *f, const char *part) {
    int is_new, i = node_of(x, c, name, &is_new);
    if (i < 0) return -1;
    live_node *n = &c->nodes[i];
    if (is_new) {
        n->state = (live_node_state)f->state, n->gpus = f->gpus, n->since_s = f->since_s;
        n->since_unix_s = f->since_unix_s;
        if (live_set(&n->gpu_model, f->model) || live_set(&n->reason, f->reason)) return -1;
    }
    return join_partition(n, part) < 0 ? -1 : i;
}

static int facts_gpus(const slurm_rec *r, const char *gres_key, node_facts *f) {
    if (slurm_tres_gpus(r, gres_key, &f->gpus, f->model, sizeof f->model) < 0) return -1;
    if (!f->gpus && r->sd->parser == 38) {
        char model[64];
        if (slurm_tres_gpus(r, "tres", &f->gpus, model, sizeof model) < 0) return -1;
        if (!f->model[0]) snprintf(f->model, sizeof f->model, "%s", model);
    }
    return 0;
}

/* Where a version keeps a record's GPUs, reason and the reason's time. */
typedef struct facts_keys {
    const char *gres, *reason, *reason_time;
} facts_keys;
static const facts_keys node_keys = { "gres", "reason", "reason_changed_at" };
static const facts_keys group_keys = { "gres.total", "reason.description", "reason.time" };

/* A record's facts from its state words: 1 read, 0 when the twin leaves
 * its nodes out (FUTURE), -1 failed. */
static int read_facts(const slurm_rec *r, const char *words, const facts_keys *k, double at, node_facts *f) {
    double t;
    memset(f, 0, sizeof *f);
    if ((f->state = node_state(words)) < 0) return 0;
    if (facts_gpus(r, k->gres, f) < 0 || slurm_str(r, k->reason, &f->reason) < 0 || slurm_num(r, k->reason_time, &t) < 0)
        return -1;
    f->since_s = t > 0 && t < at ? t - at : 0;
    f->since_unix_s = t > 0 ? t : 0;
    return 1;
}

/* One node per record: 22.05's sinfo, and scontrol show nodes (state a
 * string plus state_flags in 22.05, an array of words from 23.02). */
static int read_node(const slurm_rec *r, live_cluster *c, slurm_index *x, double at) {
    char words[512];
    node_facts f;
    const char *name;
    if (slurm_state_words(r, "state", 39, words, sizeof words) < 0 || slurm_str(r, "name", &name) < 0) return -1;
    const jv *flags = slurm_field(r, "state_flags");
    for (int k = 0; k < jv_len(flags); k++) {
        size_t n = strlen(words);
        if (jv_kind(jv_at(flags, k)) != JV_STR) return slurm_fail(r, jv_at(flags, k), "state_flags", "expected strings");
        snprintf(words + n, sizeof words - n, "%s ", jv_str(jv_at(flags, k), ""));
    }
    for (char *p = words; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    if (!*name) return slurm_fail(r, slurm_field(r, "name"), "name", "expected a node name");
    int rc = read_facts(r, words, &node_keys, at, &f);
    if (rc <= 0) return rc;
    const jv *parts = slurm_field(r, "partitions");
    int i = apply(c, x, name, &f, "");
    if (i < 0) return slurm_fail(r, NULL, NULL, "out of memory");
    for (int k = 0; k < jv_len(parts); k++) {
        if (jv_kind(jv_at(parts, k)) != JV_STR) return slurm_fail(r, jv_at(parts, k), "partitions", "expected partition names");
        if (join_partition(&c->nodes[i], jv_str(jv_at(parts, k), "")) < 0) return slurm_fail(r, NULL, NULL, "out of memory");
    }
    return 0;
}

/* The partition named in a group (23.02+), once, with its limits. */
static int read_partition(const slurm_rec *r, live_cluster *c, const char **name) {
    double minutes, tier;
    int k;
    if (slurm_str(r, "partition.name", name) < 0) return -1;
    if (!**name) return 0;
    for (int i = 0; i < c->n_parts; i++)
        if (!strcmp(c->parts[i].name, *name)) return 0;
    if ((k = slurm_num(r, "partition.maximums.time", &minutes)) < 0 || slurm_num(r, "partition.priority.tier", &tier) < 0)
        return -1;
    live_partition *p = live_add_partition(c);
    if (!p || live_set(&p->name, *name)) return slurm_fail(r, NULL, NULL, "out of memory");
    p->max_time_s = slurm_minutes_s(k, minutes);
    p->priority_tier = tier;
    return 0;
}

/* 23.02+: a group of nodes in one partition. */
static int read_group(const slurm_rec *r, live_cluster *c, slurm_index *x, double at) {
    char words[512];
    node_facts f;
    const char *part;
    if (slurm_state_words(r, "node.state", 39, words, sizeof words) < 0 || read_partition(r, c, &part) < 0) return -1;
    int rc = read_facts(r, words, &group_keys, at, &f);
    if (rc <= 0) return rc;
    const jv *names = slurm_field(r, "nodes.nodes");
    if (jv_kind(names) != JV_ARR) return slurm_fail(r, names, "nodes.nodes", "expected an array of node names");
    for (int k = 0; k < jv_len(names); k++) {
        const jv *n = jv_at(names, k);
        if (jv_kind(n) != JV_STR || !*jv_str(n, "")) return slurm_fail(r, n, "nodes.nodes", "expected node names");
        if (apply(c, x, jv_str(n, ""), &f, part) < 0) return slurm_fail(r, NULL, NULL, "out of memory");
    }
    return 0;
}

int slurm_sinfo(const jsonin *d, double at_unix_s, live_cluster *c, char *err, size_t errlen) {
    slurm_doc sd;
    const jv *arr;
    if (slurm_doc_open(&sd, d, NULL, NULL, err, errlen) < 0) return -1;
    int by_node = sd.parser == 38 || (!jv_get(jsonin_root(d), "sinfo") && jv_get(jsonin_root(d), "nodes"));
    if (slurm_doc_array(&sd, by_node ? "nodes" : "sinfo", &arr) < 0) return -1;
    slurm_index x = { NULL, 0, 0 };
    int rc = 0;
    for (int i = 0; i < jv_len(arr) && rc == 0; i++) {
        slurm_rec r = { &sd, by_node ? "nodes" : "sinfo", i, jv_at(arr, i) };
        if (jv_kind(r.obj) != JV_OBJ) rc = slurm_fail(&r, r.obj, NULL, "expected an object");
        else rc = by_node ? read_node(&r, c, &x, at_unix_s) : read_group(&r, c, &x, at_unix_s);
    }
    slurm_index_free(&x);
    if (rc == 0 && slurm_doc_source(&sd, c) < 0) rc = -1, errmsg_set(err, errlen, "%s:0: out of memory", jsonin_path(d));
    return rc;
}
