/*
 * feed: what the dashboard knows of the run, filled by a metric-bus sink.
 * Each series (entity, name) keeps its last `points` samples in a ring;
 * the event log keeps the last `log_cap` events that pass a filter. The
 * dashboard draws from here and never reads the publishers' state for
 * time series.
 *
 * Load: a sample or an event per publish (the sink is on the hot path of
 * the run: O(1), no allocation once a series exists); reading is per frame
 * (O(points) per sparkline).
 *
 *   ring of one series (cap = points):   [ ... oldest | newest ... ]
 *                                           head ^ = oldest once full
 */
#ifndef CT_FEED_H
#define CT_FEED_H

#include <stdint.h>

#include "sim/engine.h"
#include "sim/metrics.h"

typedef struct feed feed;

typedef struct feed_event {
    sim_time t;
    char entity[48];
    char kind[24];
    char detail[200];
    int repeat;                        /* events folded into this line (>= 1) */
} feed_event;

#define FEED_DROP 0
#define FEED_KEEP 1
#define FEED_COLLAPSE 2                /* fold into the newest line when it has the same entity and kind */

/* NULL when out of memory. */
feed *feed_new(int points, int log_cap);
void feed_free(feed *f);                         /* NULL is a no-op */

/* The sink to subscribe to a bus (metrics_subscribe copies it). */
metric_sink feed_sink(feed *f);

/* What the log does with an event: keep(ctx, entity, kind) returns
 * FEED_DROP, FEED_KEEP or FEED_COLLAPSE (the newest line, when of the same
 * entity and kind, takes this event's time and detail and counts it in
 * repeat). Default: keep every event. Events are counted either way. */
void feed_set_filter(feed *f, int (*keep)(void *ctx, const char *entity, const char *kind), void *ctx);

/* A series not on the bus (the dashboard's own, e.g. cumulative cost):
 * returns its index, or -1 when out of memory. An existing (entity, name)
 * returns its index. */
int feed_add_series(feed *f, const char *entity, const char *name);
/* Append a sample (times must not go backwards; a sample at the same time
 * as the last replaces it). */
void feed_push(feed *f, int series, sim_time t, double v);

int feed_find(const feed *f, const char *entity, const char *name);   /* -1: none */
int feed_series_count(const feed *f);
const char *feed_series_entity(const feed *f, int series);
const char *feed_series_name(const feed *f, int series);
int feed_samples(const feed *f, int series);     /* held now, <= points */
double feed_last(const feed *f, int series);     /* NaN when none */
/* From when the ring holds the series' whole history: 0 while nothing has
 * been dropped (a bus series is 0 before its first sample), else the time
 * of the oldest sample held. */
sim_time feed_known_since(const feed *f, int series);

#define FEED_MAX_BUCKETS 1024

/* n buckets (at most FEED_MAX_BUCKETS; later ones stay NaN) splitting [t0, t1]: out[k] = the time-weighted mean of the
 * series (a step function: each sample holds until the next) over bucket
 * k, or NaN where no sample covers it (before the first one held). */
void feed_mean(const feed *f, int series, sim_time t0, sim_time t1, double *out, int n);
/* n instants t0 + (k+1)(t1-t0)/n: the value holding then, or NaN; when
 * (may be NULL) gets the time of that sample (-1 with NaN). */
void feed_at(const feed *f, int series, sim_time t0, sim_time t1, double *out, sim_time *when, int n);

/* The event log: i = 0 is the newest; NULL when i >= feed_log_count(). */
int feed_log_count(const feed *f);
const feed_event *feed_log(const feed *f, int i);
uint64_t feed_events_total(const feed *f);       /* every event seen, kept or not */

#endif
