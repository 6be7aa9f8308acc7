/*
 * progress: the progress line of a long run (see progress.h). Costs one
 * counter per metric sample when on, nothing when off (no sink).
 */
#include "cli/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/numfmt.h"
#include "cli/cli.h"
#include "sim/engine.h"

#define CHECK_EVERY 256               /* samples between looks at the clock */

void progress_format(char *b, size_t n, double sim_s, double horizon_s, uint64_t events, double wall_s) {
    char t[32], h[32], ev[32], wall[32], pct[32] = "";
    nf_duration(sim_s, t, sizeof t);
    nf_count((double)events, ev, sizeof ev);
    nf_duration(wall_s, wall, sizeof wall);
    if (horizon_s > 0) {
        char p[16];
        snprintf(pct, sizeof pct, " of %s (%s)", nf_duration(horizon_s, h, sizeof h),
                 nf_pct(sim_s / horizon_s, p, sizeof p));
    }
    snprintf(b, n, "simulated %s%s, %s events, %s", t, pct, ev, wall);
}

static void draw(run_progress *p, double now) {
    engine *e = world_engine(p->w);
    char line[160];
    progress_format(line, sizeof line, sim_to_s(engine_now(e)), p->horizon_s, engine_dispatched(e), now - p->t0);
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = 1;
    p->last = now;
}

static void tick(run_progress *p) {
    if (!p->on || ++p->calls % CHECK_EVERY != 0) return;
    double now = cli_wall_s();
    if (now - p->t0 >= p->after_s && now - p->last >= PROGRESS_EVERY_S) draw(p, now);
}

static void on_sample(void *ctx, metric_id id, sim_time t, double value) {
    (void)id, (void)t, (void)value;
    tick(ctx);
}

int progress_start(run_progress *p, metric_bus *bus, world *w, double horizon_s, int quiet) {
    *p = (run_progress){ 0 };
    if (quiet || !isatty(STDERR_FILENO)) return 0;
    const char *z = getenv("CT_PROGRESS_AFTER_S");
    *p = (run_progress){ .on = 1, .w = w, .horizon_s = horizon_s, .t0 = cli_wall_s(),
                         .after_s = z && *z ? atof(z) : PROGRESS_AFTER_S, .last = -1e9 };
    metric_sink s = { .ctx = p, .on_sample = on_sample };
    if (metrics_subscribe(bus, &s) < 0) {
        p->on = 0;
        return -1;
    }
    return 0;
}

void progress_end(run_progress *p) {
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->on = 0;
    p->drawn = 0;
}
