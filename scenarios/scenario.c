/*
 * scenario: the loaded scenario's own accessors: its totals, the node type
 * of a pool, the path of a file it names, and freeing it. Loading lives in
 * load.c (and the section loaders load_*.c), so that trace.c, which the
 * loader calls, can use these without a circle.
 */
#include "scenarios/scenario.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void *scenario_push(void **arr, int *n, size_t size) {
    /* Grow to the next power of two when full (a count of 0 or a power of
     * two): the arrays have no capacity field, so the count says it. */
    if (*n == 0 || (*n & (*n - 1)) == 0) {
        void *q = realloc(*arr, (*n == 0 ? 1 : (size_t)*n * 2) * size);
        if (!q) return NULL;
        *arr = q;
    }
    void *p = (char *)*arr + (size_t)(*n)++ * size;
    memset(p, 0, size);
    return p;
}

void scenario_free(scenario *s) {
    if (!s) return;
    free(s->xml_text);
    catalog_free(s->cat);
    free(s->nodes);
    free(s->storage);
    free(s->failures);
    for (int i = 0; i < s->n_queues; i++) free(s->queues[i].nodes);
    free(s->queues);
    free(s->training);
    free(s->jobs);
    free(s->trace_jobs);
    free(s->trace_names);
    free(s->trace_nodes);
    for (int i = 0; i < s->n_unavailable; i++) free(s->unavailable[i].nodes);
    free(s->unavailable);
    for (int i = 0; i < s->n_ratios; i++) free(s->ratios[i].values);
    free(s->ratios);
    free(s->node_text);
    free(s->node_name);
    free(s->node_by_name);
    for (int i = 0; i < s->n_inference; i++) {
        free(s->inference[i].models);
        free(s->inference[i].classes);
    }
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

/* The first <nodes> entry of entry g's type. */
static int type_first(const scenario *s, int g) {
    for (int i = 0; i < g; i++)
        if (!strcmp(s->nodes[i].type, s->nodes[g].type)) return i;
    return g;
}

/* Nodes of the type of entry g in the cluster: its entries' nodes, and the
 * cloud's when it rents this type. */
static long long type_nodes(const scenario *s, int g) {
    long long n = 0;
    for (int i = 0; i < s->n_nodes; i++)
        if (!strcmp(s->nodes[i].type, s->nodes[g].type)) n += s->nodes[i].count;
    if (s->has_cloud && !strcmp(s->cloud_node_type, s->nodes[g].type)) n += s->cloud_max_nodes;
    return n;
}

int scenario_node_index(const scenario *s, int g, int k) {
    int tf = type_first(s, g);
    long long at = k;
    for (int i = 0; i < s->n_nodes; i++) {
        if (i < g && !strcmp(s->nodes[i].type, s->nodes[g].type)) at += s->nodes[i].count;   /* its type's earlier entries */
        else if (i < tf && type_first(s, i) == i) at += type_nodes(s, i);   /* whole pools of types seen before */
    }
    return at > INT_MAX ? INT_MAX : (int)at;
}

int scenario_node_by_name(const scenario *s, const char *name) {
    int lo = 0, hi = s->n_named;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, n = s->node_by_name[mid];
        int c = strcmp(s->node_text + s->node_name[n], name);
        if (c == 0) return n;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

const char *scenario_trace_text(const scenario *s, uint32_t off) {
    return off == SC_NO_TEXT ? NULL : s->trace_names + off;
}

const node_spec *scenario_node_spec(const scenario *s, int i) {
    return (i >= 0 && i < s->n_nodes) ? catalog_node(s->cat, s->nodes[i].type) : NULL;
}
