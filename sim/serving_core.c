/*
 * serving_core: what every serving file uses and that calls none of them:
 * the service's events on the metric bus, the kick that starts a
 * replica's next iteration, and room for big tables. The kick is an event at the same instant (at
 * most one pending per replica); it runs the batch file's start_iteration
 * through the hook sv->start_iteration (serving_int.h), so the files that
 * kick a replica (the router, the replicas, the arrivals) sit below the
 * batch, which calls them.
 */
#include "sim/serving_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

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

/* Transparent huge pages: 2 MB on x86-64 (Linux's Documentation/admin-guide/mm/transhuge.rst). */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

void *sv_big_alloc(size_t bytes) {
    size_t size = (bytes + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if (size < bytes) return NULL;                  /* overflow: refused like a failed allocation */
    void *p = aligned_alloc(HUGE_PAGE_BYTES, size);
#ifdef MADV_HUGEPAGE
    if (p) (void)madvise(p, size, MADV_HUGEPAGE);   /* advice only: without it, small pages */
#endif
    return p;
}
