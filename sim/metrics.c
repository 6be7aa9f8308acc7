/*
 * metrics: the metric bus. Publishing (metrics_sample, metrics_event) is the
 * hot path: a loop over the sinks, no allocation, no lookup. Registering a
 * name is rare (once per metric per run) and costs a hash lookup plus, for a
 * new metric, one allocation and an on_register call per sink.
 *
 * Representation:
 *
 *   metrics[id] -> "entity\0name\0"   one allocation per metric, never moved,
 *                                     so the names stay valid for the bus's
 *                                     lifetime even when metrics[] grows
 *   index[]     -> id or -1            open addressing, linear probing, the
 *                                     hash of (entity, name); at most half full
 *   sinks[]     -> copies of the subscribed metric_sink structs
 *
 * Callbacks may publish, register or subscribe again (the loops re-read the
 * arrays on each step); a sink subscribed during a broadcast may or may not
 * see that broadcast's item.
 */
#include "sim/metrics.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct metric {
    const char *entity;             /* both point into one allocation */
    const char *name;
} metric;

struct metric_bus {
    metric *metrics;
    int nmetrics;
    int cap_metrics;
    int *index;                     /* index_cap slots, -1 = empty */
    size_t index_cap;               /* a power of two, or 0 */
    metric_sink *sinks;
    int nsinks;
    int cap_sinks;
};

static uint64_t hash_pair(const char *entity, const char *name) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *z = entity; *z; z++)
        h = (h ^ (unsigned char)*z) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;  /* separator: ("ab","c") != ("a","bc") */
    for (const char *z = name; *z; z++)
        h = (h ^ (unsigned char)*z) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

metric_bus *metrics_new(void) {
    return calloc(1, sizeof(metric_bus));
}

void metrics_free(metric_bus *b) {
    if (!b)
        return;
    for (int i = 0; i < b->nmetrics; i++)
        free((char *)b->metrics[i].entity);
    free(b->metrics);
    free(b->index);
    free(b->sinks);
    free(b);
}

int metrics_subscribe(metric_bus *b, const metric_sink *s) {
    if (b->nsinks == b->cap_sinks) {
        int n = b->cap_sinks ? b->cap_sinks * 2 : 4;
        metric_sink *p = realloc(b->sinks, (size_t)n * sizeof *p);
        if (!p)
            return -1;
        b->sinks = p;
        b->cap_sinks = n;
    }
    b->sinks[b->nsinks++] = *s;
    /* Metrics that on_register itself registers reach the new sink through
     * metrics_register's broadcast, hence n fixed before the loop. */
    int n = b->nmetrics;
    if (s->on_register)
        for (int i = 0; i < n; i++)
            s->on_register(s->ctx, i, b->metrics[i].entity, b->metrics[i].name);
    return 0;
}

/* The index slot holding (entity, name), or the empty slot where it goes.
 * index_cap must be > 0. */
static size_t find_slot(const metric_bus *b, const char *entity, const char *name) {
    size_t mask = b->index_cap - 1;
    size_t i = (size_t)hash_pair(entity, name) & mask;
    for (;; i = (i + 1) & mask) {
        int id = b->index[i];
        if (id < 0)
            return i;
        if (strcmp(b->metrics[id].entity, entity) == 0 &&
            strcmp(b->metrics[id].name, name) == 0)
            return i;
    }
}

/* Double the index (or create it). 0, or -1 when out of memory (unchanged). */
static int grow_index(metric_bus *b) {
    size_t n = b->index_cap ? b->index_cap * 2 : 64;
    int *p = malloc(n * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = 0; i < n; i++)
        p[i] = -1;
    free(b->index);
    b->index = p;
    b->index_cap = n;
    for (int id = 0; id < b->nmetrics; id++)
        b->index[find_slot(b, b->metrics[id].entity, b->metrics[id].name)] = id;
    return 0;
}

metric_id metrics_register(metric_bus *b, const char *entity, const char *name) {
    assert(entity && name);
    if (b->index_cap) {
        size_t i = find_slot(b, entity, name);
        if (b->index[i] >= 0)
            return b->index[i];
    }
    if ((size_t)b->nmetrics + 1 > b->index_cap / 2 && grow_index(b) != 0)
        return -1;
    if (b->nmetrics == b->cap_metrics) {
        if (b->cap_metrics > INT32_MAX / 2)
            return -1;
        int n = b->cap_metrics ? b->cap_metrics * 2 : 16;
        metric *p = realloc(b->metrics, (size_t)n * sizeof *p);
        if (!p)
            return -1;
        b->metrics = p;
        b->cap_metrics = n;
    }
    size_t ne = strlen(entity) + 1, nn = strlen(name) + 1;
    char *z = malloc(ne + nn);
    if (!z)
        return -1;
    memcpy(z, entity, ne);
    memcpy(z + ne, name, nn);
    metric_id id = b->nmetrics++;
    b->metrics[id].entity = z;
    b->metrics[id].name = z + ne;
    b->index[find_slot(b, entity, name)] = id;
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_register)
            s->on_register(s->ctx, id, b->metrics[id].entity, b->metrics[id].name);
    }
    return id;
}

const char *metrics_entity(const metric_bus *b, metric_id id) {
    return id >= 0 && id < b->nmetrics ? b->metrics[id].entity : NULL;
}

const char *metrics_name(const metric_bus *b, metric_id id) {
    return id >= 0 && id < b->nmetrics ? b->metrics[id].name : NULL;
}

int metrics_count(const metric_bus *b) {
    return b->nmetrics;
}

/* id -1 (a registration that failed) is dropped quietly, so publishers need
 * not check; any other unknown id is a bug. */
void metrics_sample(metric_bus *b, metric_id id, sim_time t, double value) {
    if (id < 0)
        return;
    assert(id < b->nmetrics);
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_sample)
            s->on_sample(s->ctx, id, t, value);
    }
}

void metrics_event(metric_bus *b, sim_time t, const char *entity, const char *kind,
                   const char *detail) {
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_event)
            s->on_event(s->ctx, t, entity, kind, detail);
    }
}

void metrics_close(metric_bus *b, sim_time t) {
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_close)
            s->on_close(s->ctx, t);
    }
}
