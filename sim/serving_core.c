/*
 * serving_core: what every serving file uses and that calls none of them:
 * the service's events on the metric bus, and the kick that starts a
 * replica's next iteration. The kick is an event at the same instant (at
 * most one pending per replica); it runs the batch file's start_iteration
 * through the hook sv->start_iteration (serving_int.h), so the files that
 * kick a replica (the router, the replicas, the arrivals) sit below the
 * batch, which calls them.
 */
#include "sim/serving_int.h"

#include <stdarg.h>
#include <stdio.h>

void sv_event(serving *sv, const char *kind, const char *fmt, ...) {
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    metrics_event(sv->bus, now_of(sv), sv->cfg->name, kind, detail);
}

static void on_kick(engine *e, void *arg) {
    (void)e;
    replica *r = arg;
    r->kick_pending = 0;
    r->sv->start_iteration(r);
}

void sv_kick(replica *r) {
    if (r->busy || r->kick_pending) return;
    r->kick_pending = 1;
    engine_after(r->sv->e, 0, on_kick, r);
}
