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
 *                                     lifetime even when metrics[] grows;
 *                  last (t, value)    the metric's latest sample, if any
 *   index[]     -> id or -1            open addressing, linear probing, the
 *                                     hash of (entity, name); at most half full
 *   sinks[]     -> copies of the subscribed metric_sink structs
 *   kept[]      -> the events of time 0, while the clock has not moved:
 *                  offsets into one text arena (entity\0kind\0detail\0)
 *
 * The last sample is what makes a late subscriber right: the world takes
 * its initial state (the replicas of a service that exist at time 0) while
 * it is built, before the CLI subscribes the results store, and a value
 * holds until its next sample, so a sink that missed the sample would hold
 * the wrong value until the metric next changes, for a fixed fleet the
 * whole run. metrics_subscribe replays it. Keeping it costs the hot path
 * three stores per sample.
 *
 * Events are history, not state, but those of time 0 are the run's
 * opening (a service starts, its replicas are ready) and are published
 * while the world is built, before any sink is there. So the bus keeps
 * every event published until a sample or event later than time 0 arrives
 * (then it frees them and keeps no more) and replays them to a sink that
 * subscribes meanwhile, after the metrics. A run's time 0 publishes a
 * handful (one or two per service and replica); a sink that subscribes
 * later in the run gets no history. Out of memory, the bus stops keeping
 * (a late sink then misses them); publishing never fails.
 *
 * Callbacks may publish, register or subscribe again (the loops re-read the
 * arrays on each step); a sink subscribed during a broadcast may or may not
 * see that broadcast's item.
 */
#include "sim/metrics.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

typedef struct metric {
    const char *entity;             /* both point into one allocation */
    const char *name;
    sim_time last_t;                /* the latest sample, when has_last */
    double last_value;
    int has_last;
} metric;

typedef struct kept_event {
    sim_time t;
    size_t entity, kind, detail;    /* offsets into kept_text */
    int has_detail;                 /* detail was not NULL */
} kept_event;

struct metric_bus {
    metric *metrics;
    int nmetrics;
    size_t cap_metrics;
    int *index;                     /* index_cap slots, -1 = empty */
    size_t index_cap;               /* a power of two, or 0 */
    metric_sink *sinks;
    int nsinks;
    size_t cap_sinks;
    kept_event *kept;               /* the events of time 0 (see above) */
    int nkept;
    size_t cap_kept;
    char *kept_text;
    size_t kept_n, kept_cap;
    int kept_off;                   /* the clock moved (or OOM): keep no more */
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
    free(b->kept);
    free(b->kept_text);
    free(b);
}

/* Stop keeping events: the clock moved past 0 (or memory ran out). */
static void drop_kept(metric_bus *b) {
    free(b->kept);
    free(b->kept_text);
    b->kept = NULL;
    b->kept_text = NULL;
    b->nkept = 0;
    b->cap_kept = 0;
    b->kept_n = b->kept_cap = 0;
    b->kept_off = 1;
}

/* Append z and its NUL to kept_text; its offset, or -1 when out of memory. */
static long keep_text(metric_bus *b, const char *z) {
    size_t n = strlen(z) + 1;
    if (GROW(b->kept_text, b->kept_cap, b->kept_n + n)) return -1;
    memcpy(b->kept_text + b->kept_n, z, n);
    b->kept_n += n;
    return (long)(b->kept_n - n);
}

static void keep_event(metric_bus *b, sim_time t, const char *entity, const char *kind, const char *detail) {
    if (GROW(b->kept, b->cap_kept, (size_t)b->nkept + 1)) {
        drop_kept(b);
        return;
    }
    long e = keep_text(b, entity ? entity : ""), k = e < 0 ? -1 : keep_text(b, kind ? kind : "");
    long d = k < 0 ? -1 : keep_text(b, detail ? detail : "");
    if (d < 0) {
        drop_kept(b);
        return;
    }
    b->kept[b->nkept++] = (kept_event){ t, (size_t)e, (size_t)k, (size_t)d, detail != NULL };
}

int metrics_subscribe(metric_bus *b, const metric_sink *s) {
    if (GROW(b->sinks, b->cap_sinks, (size_t)b->nsinks + 1))
        return -1;
    b->sinks[b->nsinks++] = *s;
    /* Metrics that on_register itself registers reach the new sink through
     * metrics_register's broadcast, hence n fixed before the loop. Each
     * metric's last sample follows its on_register (metrics[] may move
     * while a callback registers, hence re-read). */
    int n = b->nmetrics;
    for (int i = 0; i < n; i++) {
        if (s->on_register)
            s->on_register(s->ctx, i, b->metrics[i].entity, b->metrics[i].name);
        if (s->on_sample && b->metrics[i].has_last)
            s->on_sample(s->ctx, i, b->metrics[i].last_t, b->metrics[i].last_value);
    }
    /* Then the events of time 0. One that on_event publishes reaches the
     * new sink live (and may move or drop the arrays), hence n fixed and
     * everything re-read. */
    n = b->nkept;
    for (int i = 0; s->on_event && i < n && !b->kept_off; i++) {
        const kept_event *e = &b->kept[i];
        s->on_event(s->ctx, e->t, b->kept_text + e->entity, b->kept_text + e->kind,
                    e->has_detail ? b->kept_text + e->detail : NULL);
    }
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
    if (b->nmetrics == INT32_MAX || GROW(b->metrics, b->cap_metrics, (size_t)b->nmetrics + 1))
        return -1;
    size_t ne = strlen(entity) + 1, nn = strlen(name) + 1;
    char *z = malloc(ne + nn);
    if (!z)
        return -1;
    memcpy(z, entity, ne);
    memcpy(z + ne, name, nn);
    metric_id id = b->nmetrics++;
    b->metrics[id].entity = z;
    b->metrics[id].name = z + ne;
    b->metrics[id].has_last = 0;
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
    metric *m = &b->metrics[id];
    m->last_t = t;
    m->last_value = value;
    m->has_last = 1;
    if (t > 0 && !b->kept_off) drop_kept(b);
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_sample)
            s->on_sample(s->ctx, id, t, value);
    }
}

int metrics_wants_events(const metric_bus *b) {
    if (!b->kept_off) return 1;
    for (int i = 0; i < b->nsinks; i++)
        if (b->sinks[i].on_event || b->sinks[i].on_eventv) return 1;
    return 0;
}

void metrics_event(metric_bus *b, sim_time t, const char *entity, const char *kind,
                   const char *detail) {
    if (!b->kept_off) {
        if (t > 0) drop_kept(b);
        else keep_event(b, t, entity, kind, detail);
    }
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_event)
            s->on_event(s->ctx, t, entity, kind, detail);
    }
}

/* fmt and ap formatted into detail (METRICS_DETAIL_MAX bytes); ap untouched. */
static void format_detail(char *detail, const char *fmt, va_list ap) {
    va_list c;
    va_copy(c, ap);
    vsnprintf(detail, METRICS_DETAIL_MAX, fmt, c);
    va_end(c);
}

/* As metrics_event, but the text is made only for those that want it: the
 * run's opening kept, and sinks without on_eventv. A simulation publishes
 * some 300,000 job events a year of a 10,000-GPU cluster; formatting their
 * numbers (%.0f) was most of what the results store cost the simulating
 * thread during the run (docs/performance.md, "The results store, fourth
 * round"). */
void metrics_eventv(metric_bus *b, sim_time t, const char *entity, const char *kind, const char *fmt,
                    va_list ap) {
    char detail[METRICS_DETAIL_MAX];
    int made = 0;
    if (!b->kept_off) {
        if (t > 0) drop_kept(b);
        else {
            format_detail(detail, fmt, ap);
            made = 1;
            keep_event(b, t, entity, kind, detail);
        }
    }
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_eventv) {
            va_list c;
            va_copy(c, ap);
            s->on_eventv(s->ctx, t, entity, kind, fmt, c);
            va_end(c);
        } else if (s->on_event) {
            if (!made) format_detail(detail, fmt, ap);
            made = 1;
            s->on_event(s->ctx, t, entity, kind, detail);
        }
    }
}

void metrics_close(metric_bus *b, sim_time t) {
    for (int i = 0; i < b->nsinks; i++) {
        const metric_sink *s = &b->sinks[i];
        if (s->on_close)
            s->on_close(s->ctx, t);
    }
}
