/*
 * feed: rings of samples and events for the dashboard (see feed.h).
 */
#include "tui/feed.h"
#include "base/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct series {
    char entity[48], name[32];
    sim_time *t;
    double *v;
    int head, n;                       /* oldest at head; n held */
    int dropped;                       /* the ring has overwritten samples */
} series;

struct feed {
    int points;
    series *s;
    int n_s;
    size_t cap_s;
    int *by_id;                        /* metric id -> series, -1 */
    int n_id, cap_id;
    feed_event *log;
    int log_cap, log_head, log_n;      /* newest at (head + n - 1) % cap */
    uint64_t events;
    int (*keep)(void *ctx, const char *entity, const char *kind);
    void *keep_ctx;
};

feed *feed_new(int points, int log_cap) {
    feed *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->points = points > 1 ? points : 2;
    f->log_cap = log_cap > 0 ? log_cap : 1;
    f->log = calloc((size_t)f->log_cap, sizeof *f->log);
    if (!f->log) {
        free(f);
        return NULL;
    }
    return f;
}

void feed_free(feed *f) {
    if (!f) return;
    for (int i = 0; i < f->n_s; i++) {
        free(f->s[i].t);
        free(f->s[i].v);
    }
    free(f->s);
    free(f->by_id);
    free(f->log);
    free(f);
}

void feed_set_filter(feed *f, int (*keep)(void *ctx, const char *entity, const char *kind), void *ctx) {
    f->keep = keep;
    f->keep_ctx = ctx;
}

int feed_find(const feed *f, const char *entity, const char *name) {
    for (int i = 0; i < f->n_s; i++)
        if (!strcmp(f->s[i].entity, entity) && !strcmp(f->s[i].name, name)) return i;
    return -1;
}

int feed_add_series(feed *f, const char *entity, const char *name) {
    int k = feed_find(f, entity, name);
    if (k >= 0) return k;
    if (GROW(f->s, f->cap_s, (size_t)f->n_s + 1)) return -1;
    series *s = &f->s[f->n_s];
    memset(s, 0, sizeof *s);
    snprintf(s->entity, sizeof s->entity, "%s", entity);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->t = malloc((size_t)f->points * sizeof *s->t);
    s->v = malloc((size_t)f->points * sizeof *s->v);
    if (!s->t || !s->v) {
        free(s->t);
        free(s->v);
        return -1;
    }
    return f->n_s++;
}

void feed_push(feed *f, int k, sim_time t, double v) {
    if (k < 0 || k >= f->n_s) return;
    series *s = &f->s[k];
    if (s->n > 0) {
        int last = (s->head + s->n - 1) % f->points;
        if (t < s->t[last]) t = s->t[last];
        if (t == s->t[last]) {
            s->v[last] = v;
            return;
        }
    }
    if (s->n < f->points) {
        int at = (s->head + s->n) % f->points;
        s->t[at] = t;
        s->v[at] = v;
        s->n++;
    } else {
        s->t[s->head] = t;
        s->v[s->head] = v;
        s->head = (s->head + 1) % f->points;
        s->dropped = 1;
    }
}

static void on_register(void *ctx, metric_id id, const char *entity, const char *name) {
    feed *f = ctx;
    if (id < 0) return;
    if (id >= f->cap_id) {
        int cap = f->cap_id ? f->cap_id : 64;
        while (cap <= id) cap *= 2;
        int *p = realloc(f->by_id, (size_t)cap * sizeof *p);
        if (!p) return;
        for (int i = f->cap_id; i < cap; i++) p[i] = -1;
        f->by_id = p;
        f->cap_id = cap;
    }
    f->by_id[id] = feed_add_series(f, entity, name);
}

static void on_sample(void *ctx, metric_id id, sim_time t, double v) {
    feed *f = ctx;
    if (id >= 0 && id < f->cap_id) feed_push(f, f->by_id[id], t, v);
}

static void on_event(void *ctx, sim_time t, const char *entity, const char *kind, const char *detail) {
    feed *f = ctx;
    f->events++;
    int how = f->keep ? f->keep(f->keep_ctx, entity, kind) : FEED_KEEP;
    if (how == FEED_DROP) return;
    feed_event *e = f->log_n ? &f->log[(f->log_head + f->log_n - 1) % f->log_cap] : NULL;
    if (how == FEED_COLLAPSE && e && !strcmp(e->entity, entity) && !strcmp(e->kind, kind)) {
        e->t = t;
        e->repeat++;
        snprintf(e->detail, sizeof e->detail, "%s", detail ? detail : "");
        return;
    }
    if (f->log_n < f->log_cap) {
        e = &f->log[(f->log_head + f->log_n) % f->log_cap];
        f->log_n++;
    } else {
        e = &f->log[f->log_head];
        f->log_head = (f->log_head + 1) % f->log_cap;
    }
    e->t = t;
    e->repeat = 1;
    snprintf(e->entity, sizeof e->entity, "%s", entity);
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    snprintf(e->detail, sizeof e->detail, "%s", detail ? detail : "");
}

metric_sink feed_sink(feed *f) {
    metric_sink s = { f, on_register, on_sample, on_event, NULL, NULL };
    return s;
}

int feed_series_count(const feed *f) { return f->n_s; }
const char *feed_series_entity(const feed *f, int k) { return (k >= 0 && k < f->n_s) ? f->s[k].entity : NULL; }
const char *feed_series_name(const feed *f, int k) { return (k >= 0 && k < f->n_s) ? f->s[k].name : NULL; }
int feed_samples(const feed *f, int k) { return (k >= 0 && k < f->n_s) ? f->s[k].n : 0; }

double feed_last(const feed *f, int k) {
    if (k < 0 || k >= f->n_s || f->s[k].n == 0) return NAN;
    const series *s = &f->s[k];
    return s->v[(s->head + s->n - 1) % f->points];
}

sim_time feed_known_since(const feed *f, int k) {
    if (k < 0 || k >= f->n_s || !f->s[k].dropped) return 0;
    return f->s[k].t[f->s[k].head];
}

void feed_mean(const feed *f, int k, sim_time t0, sim_time t1, double *out, int n) {
    for (int b = 0; b < n; b++) out[b] = NAN;
    if (k < 0 || k >= f->n_s || n <= 0 || t1 <= t0) return;
    const series *s = &f->s[k];
    double width = (double)(t1 - t0) / n;
    /* Walk the samples once; sample i holds over [t_i, t_{i+1}) (the last
     * one up to t1), adding value x overlap to each bucket it covers. */
    double covered[FEED_MAX_BUCKETS] = { 0 };
    if (n > FEED_MAX_BUCKETS) n = FEED_MAX_BUCKETS;
    for (int b = 0; b < n; b++) out[b] = 0;
    for (int i = 0; i < s->n; i++) {
        int at = (s->head + i) % f->points;
        double a = (double)(s->t[at] - t0);
        double z = i + 1 < s->n ? (double)(s->t[(at + 1) % f->points] - t0) : (double)(t1 - t0);
        if (z <= 0) continue;
        if (a >= (double)(t1 - t0)) break;
        if (a < 0) a = 0;
        if (z > (double)(t1 - t0)) z = (double)(t1 - t0);
        int b0 = (int)(a / width), b1 = (int)(z / width);
        if (b1 >= n) b1 = n - 1;
        for (int b = b0; b <= b1; b++) {
            double lo = b * width, hi = (b + 1) * width;
            double o = (z < hi ? z : hi) - (a > lo ? a : lo);
            if (o > 0) {
                out[b] += s->v[at] * o;
                covered[b] += o;
            }
        }
    }
    for (int b = 0; b < n; b++) out[b] = covered[b] > 0 ? out[b] / covered[b] : NAN;
}

void feed_at(const feed *f, int k, sim_time t0, sim_time t1, double *out, sim_time *when, int n) {
    for (int b = 0; b < n; b++) {
        out[b] = NAN;
        if (when) when[b] = -1;
    }
    if (k < 0 || k >= f->n_s || n <= 0 || t1 <= t0) return;
    const series *s = &f->s[k];
    int i = 0;
    for (int b = 0; b < n; b++) {
        sim_time t = t0 + (sim_time)((double)(t1 - t0) * (b + 1) / n);
        while (i < s->n && s->t[(s->head + i) % f->points] <= t) i++;
        if (i > 0) {
            out[b] = s->v[(s->head + i - 1) % f->points];
            if (when) when[b] = s->t[(s->head + i - 1) % f->points];
        }
    }
}

int feed_log_count(const feed *f) { return f->log_n; }

const feed_event *feed_log(const feed *f, int i) {
    if (i < 0 || i >= f->log_n) return NULL;
    return &f->log[(f->log_head + f->log_n - 1 - i) % f->log_cap];
}

uint64_t feed_events_total(const feed *f) { return f->events; }
