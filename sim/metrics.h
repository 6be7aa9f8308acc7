/*
 * metrics: the metric bus. Entities publish samples (a number at a time)
 * and events (something happened, with a text); sinks subscribe without the
 * publishers knowing them (JSON summary, SQLite store, dashboard ring).
 *
 * Names are interned once (metrics_register) so publishing on the hot path
 * is an integer id, a time and a value: O(sinks) per call, no allocation.
 */
#ifndef CT_METRICS_H
#define CT_METRICS_H

#include <stdarg.h>

#include "sim/engine.h"

/* The longest text of an event published by metrics_eventv, NUL included. */
#define METRICS_DETAIL_MAX 256

typedef struct metric_bus metric_bus;
typedef int metric_id;               /* >= 0; -1 means "not registered" */

typedef struct metric_sink {
    void *ctx;
    /* Any callback may be NULL. Names stay valid for the bus's lifetime. */
    void (*on_register)(void *ctx, metric_id id, const char *entity, const char *name);
    void (*on_sample)(void *ctx, metric_id id, sim_time t, double value);
    void (*on_event)(void *ctx, sim_time t, const char *entity, const char *kind,
                     const char *detail);
    void (*on_close)(void *ctx, sim_time t);
    /* An event published by metrics_eventv, its text not yet made: fmt
     * (a string literal: the sink may keep the pointer) and its arguments
     * (read during the call). A sink that has it gets those events here
     * instead of through on_event, and may format them later, on another
     * thread (the results store does: reports/store_events.c); the text
     * is vsnprintf's, cut to METRICS_DETAIL_MAX - 1 bytes. */
    void (*on_eventv)(void *ctx, sim_time t, const char *entity, const char *kind, const char *fmt,
                      va_list ap);
} metric_sink;

metric_bus *metrics_new(void);                  /* NULL when out of memory */
void metrics_free(metric_bus *b);               /* NULL is a no-op; does not close */

/* Add a sink (copied). It is told of every metric registered so far and,
 * right after each, of that metric's last sample (a value holds until the
 * next sample, so a sink subscribed after the world took its initial state
 * still sees it); then, while nothing later than time 0 has been
 * published, of the events published so far (the run's opening). Returns
 * 0, or -1 when out of memory (bus unchanged). */
int metrics_subscribe(metric_bus *b, const metric_sink *s);

/* Intern (entity, name); the same pair returns the same id. -1 on OOM. */
metric_id metrics_register(metric_bus *b, const char *entity, const char *name);
const char *metrics_entity(const metric_bus *b, metric_id id);
const char *metrics_name(const metric_bus *b, metric_id id);
int metrics_count(const metric_bus *b);

void metrics_sample(metric_bus *b, metric_id id, sim_time t, double value);
void metrics_event(metric_bus *b, sim_time t, const char *entity, const char *kind,
                   const char *detail);
/* The same, the text given as a printf format (a string literal) and its
 * arguments: a sink with on_eventv gets them unformatted, the others the
 * text, formatted once (cut to METRICS_DETAIL_MAX - 1 bytes). */
void metrics_eventv(metric_bus *b, sim_time t, const char *entity, const char *kind, const char *fmt,
                    va_list ap);
/* Would an event published now reach anyone: a sink that takes events,
 * or the run's opening kept for a later subscriber? A publisher may skip
 * formatting an event's text when not (a run without a database or a
 * dashboard formats none of its 300,000 job events). O(sinks). */
int metrics_wants_events(const metric_bus *b);
/* Tell every sink the run ended at time t. */
void metrics_close(metric_bus *b, sim_time t);

#endif
