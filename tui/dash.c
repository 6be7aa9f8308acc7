/*
 * dash: the live dashboard (see dash.h). The only file that talks to
 * ncurses. A frame costs O(nodes + jobs + series x points): the 16K-GPU
 * scenario (2,096 nodes, one job) draws in well under a millisecond, a
 * 10K-job trace sorts its table each frame (qsort of indices).
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include "tui/dash.h"

#include <curses.h>
#include <term.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/numfmt.h"
#include "tui/feed.h"
#include "tui/fmt.h"
#include "tui/layout.h"
#include "tui/ui.h"

#define FRAME_MS 66                /* ~15 frames a second */
#define ADVANCE_BUDGET_S 0.045     /* wall time the simulation may take per frame */
#define SPARK_WINDOW_WALL_S 120    /* sparklines show the last 2 wall minutes at the current speed */
#define FEED_POINTS 4096
#define FEED_LOG 512

enum { P_TRAIN = 1, P_BATCH, P_SERVE, P_CKPT, P_RESTART, P_FAIL, P_REPAIR, P_SPARE, P_DRAIN, P_HEAD, P_GOOD };

static const char cell_letter[WA_COUNT] = { '.', 'T', 'B', 'S', 'C', 'R', 'X', 'r', 's', 'D', 'o' };
static const short cell_pair[WA_COUNT] = { 0, P_TRAIN, P_BATCH, P_SERVE, P_CKPT, P_RESTART,
                                           P_FAIL, P_REPAIR, P_SPARE, P_DRAIN, 0 };

struct dash {
    world *w;
    const scenario *s;
    feed *fd;
    ui_state u;
    ui_view v;
    layout L;
    map_grid g;
    int rows, cols;
    int colour, utf8;
    int n_nodes, npl;
    world_node_view *nv;
    int n_jobs, n_shown;
    world_job_live *jl;
    int *order;
    int gpus;
    int s_cost;
    int done;
    double wall0, ev_wall;         /* events/s and actual speed over ~1 s */
    uint64_t ev_mark;
    double sim_mark, evps, actual, fps;
    int frames, jobs_dirty;
};

static volatile sig_atomic_t quit_signal;
static void on_signal(int sig) { quit_signal = sig; }

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double sim_now_s(dash *d) { return sim_to_s(engine_now(world_engine(d->w))); }

double dash_default_speed(const scenario *s) {
    double want = s->duration_s > 0 ? s->duration_s / 300 : 3600;
    double v = 60;
    while (v * 2 <= want) v *= 2;
    while (v / 2 >= want && v > 1) v /= 2;
    return v;
}

/* ---- drawing helpers ----------------------------------------------------- */

/* printf into the screen at (y, x), cut to w columns (ASCII text). */
static void put(int y, int x, int w, attr_t a, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void put(int y, int x, int w, attr_t a, const char *fmt, ...) {
    char buf[1024];
    if (w <= 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if ((size_t)w < sizeof buf) buf[w] = 0;
    attron(a);
    mvaddstr(y, x, buf);
    attroff(a);
}

static attr_t pair(const dash *d, short p) { return d->colour && p ? COLOR_PAIR(p) : 0; }

/* A panel's title line: reversed when it has the focus. */
static void title(const dash *d, rect r, int focused, const char *z) {
    put(r.y, r.x, r.w, focused ? A_REVERSE | A_BOLD : A_BOLD, "%-*s", r.w, z);
}

/* ---- the header ------------------------------------------------------------ */

static void draw_header(dash *d) {
    rect r = d->L.header;
    char clock[32], speed[24], wall[16], evs[32], fps[32], dur[16];
    double now = sim_now_s(d);
    fmt_clock(now, clock, sizeof clock);
    fmt_speed(d->u.speed, speed, sizeof speed);
    fmt_duration(wall_s() - d->wall0, wall, sizeof wall);
    nf_count(d->evps, evs, sizeof evs);
    nf_count(d->fps, fps, sizeof fps);
    const char *state = d->done ? "done" : d->u.paused ? "paused" : "running";
    char of[32] = "";
    if (d->s->duration_s > 0) snprintf(of, sizeof of, " of %s", fmt_duration(d->s->duration_s, dur, sizeof dur));
    char lag[48] = "";
    if (!d->u.paused && !d->done && d->actual > 0 && d->actual < 0.8 * d->u.speed) {
        char a[24];
        snprintf(lag, sizeof lag, " (max %s)", fmt_speed(d->actual, a, sizeof a));
    }
    attr_t st = d->done ? pair(d, P_GOOD) | A_BOLD : d->u.paused ? pair(d, P_CKPT) | A_BOLD | A_REVERSE : A_BOLD;
    char z[256];
    int x = snprintf(z, sizeof z, " %s ", d->s->name);
    put(r.y, 0, r.w, A_BOLD, "%s", z);
    int k = snprintf(z, sizeof z, "| %s%s | speed %s%s | ", clock, of, speed, lag);
    put(r.y, x, r.w - x, 0, "%s", z);
    x += k;
    put(r.y, x, r.w - x, st, "%s", state);
    x += (int)strlen(state);
    put(r.y, x, r.w - x, 0, " | wall %s | %s ev/s | %s fps", wall, evs, fps);

    world_totals t = world_get_totals(d->w);
    double busy = 0;
    static const char *names[] = { "gpus_training", "gpus_checkpoint", "gpus_restarting", "gpus_batch", "gpus_serving" };
    for (int i = 0; i < 5; i++) {
        double v = feed_last(d->fd, feed_find(d->fd, "cluster", names[i]));
        if (!isnan(v)) busy += v;
    }
    double q = feed_last(d->fd, feed_find(d->fd, "cluster", "queue_length"));
    double failed = feed_last(d->fd, feed_find(d->fd, "cluster", "gpus_failed"));
    char gpus[48], pct[32], queue[32], down[48], fails[32], cost[32], events[32], gpu_h[32];
    nf_qty(d->gpus, "GPU", "GPUs", gpus, sizeof gpus);
    nf_pct(d->gpus > 0 ? busy / d->gpus : 0, pct, sizeof pct);
    nf_count(isnan(q) ? 0 : q, queue, sizeof queue);
    nf_qty(isnan(failed) ? 0 : failed, "GPU", "GPUs", down, sizeof down);
    nf_count(t.failures, fails, sizeof fails);
    nf_usd(t.cost_usd, cost, sizeof cost);
    nf_count((double)t.events, events, sizeof events);
    nf_count(t.gpu_hours, gpu_h, sizeof gpu_h);
    put(r.y + 1, 0, r.w, 0, " %s | busy %s | queue %s | down %s | failures %s | %s | %s GPU-h | %s events", gpus, pct,
        queue, down, fails, cost, gpu_h, events);
}

/* ---- the map ------------------------------------------------------------- */

/* What a cell of the map shows for nodes [a, b): trouble first (failed,
 * repairing, restarting, drained, checkpointing), else the most common. */
static world_activity cell_activity(const dash *d, int a, int b, int counts[WA_COUNT]) {
    for (int k = 0; k < WA_COUNT; k++) counts[k] = 0;
    for (int i = a; i < b; i++) counts[d->nv[i].activity]++;
    static const world_activity urgent[] = { WA_FAILED, WA_REPAIRING, WA_RESTARTING, WA_DRAINED, WA_CHECKPOINT };
    for (size_t k = 0; k < sizeof urgent / sizeof urgent[0]; k++)
        if (counts[urgent[k]]) return urgent[k];
    world_activity best = WA_IDLE;
    for (int k = 0; k < WA_COUNT; k++)
        if (counts[k] > counts[best]) best = (world_activity)k;
    return best;
}

static void draw_map(dash *d) {
    rect r = d->L.map;
    const map_grid *g = &d->g;
    char t[128], n[32];
    nf_count(d->n_nodes, n, sizeof n);
    char rk[32] = "";
    if (d->n_nodes > 0) snprintf(rk, sizeof rk, " in racks of %d", d->nv[0].rack_nodes);
    if (g->per_cell > 1)
        snprintf(t, sizeof t, " nodes: %s, %d per cell%s%s", n, g->per_cell,
                 d->npl > 0 && (g->per_cell % d->npl == 0 || d->npl % g->per_cell == 0) ? " (leaf groups)" : "", rk);
    else
        snprintf(t, sizeof t, " nodes: %s%s", n, rk);
    title(d, r, d->u.focus == UI_MAP, t);
    int sel = d->u.node / g->per_cell;
    for (int c = 0; c < g->cells; c++) {
        int y = r.y + 1 + c / g->cols, x = r.x + (c % g->cols) * g->cell_w;
        if (y >= r.y + r.h) break;
        int a = c * g->per_cell, b = a + g->per_cell > d->n_nodes ? d->n_nodes : a + g->per_cell;
        int counts[WA_COUNT];
        world_activity k = cell_activity(d, a, b, counts);
        attr_t at = 0;
        if (d->colour && cell_pair[k]) at = COLOR_PAIR(cell_pair[k]) | A_REVERSE;
        else if (k == WA_IDLE || k == WA_OFF) at = A_DIM;
        else if (!d->colour && (k == WA_FAILED || k == WA_REPAIRING)) at = A_BOLD;
        if (c == sel) at |= A_UNDERLINE | A_BOLD | (d->u.focus == UI_MAP && !d->colour ? A_REVERSE : 0);
        char z[3] = { cell_letter[k], 0, 0 };
        if (g->cell_w == 2) z[1] = c == sel ? '<' : ' ';
        attron(at);
        mvaddstr(y, x, z);
        attroff(at);
    }
}

static void draw_detail(dash *d) {
    rect r = d->L.detail;
    if (r.h <= 0 || d->n_nodes == 0) return;
    int n = d->u.node < d->n_nodes ? d->u.node : d->n_nodes - 1;
    const world_node_view *v = &d->nv[n];
    int y = r.y, end = r.y + r.h;
    int per = d->g.per_cell, a = n / per * per, b = a + per > d->n_nodes ? d->n_nodes : a + per;
    char leaf[32] = "";
    if (d->npl > 0) snprintf(leaf, sizeof leaf, ", leaf %d", n / d->npl);
    put(y++, r.x, r.w, A_BOLD, "node %d, rack %d%s: %s", n, v->rack, leaf, world_activity_name(v->activity));
    job_result jr;
    const job_result *j = v->job >= 0 ? world_job(d->w, v->job, &jr) : NULL;
    if (y < end)
        put(y++, r.x, r.w, 0, "%d GPUs, %d free, %d failures%s%s", v->gpus, v->free_gpus, v->failures,
            j ? ", job " : "", j ? j->name : "");
    if (per > 1 && y < end) {
        int counts[WA_COUNT];
        cell_activity(d, a, b, counts);
        char z[256];
        int at = snprintf(z, sizeof z, "cell %d-%d:", a, b - 1);
        for (int k = 0; k < WA_COUNT && at < (int)sizeof z; k++)
            if (counts[k]) at += snprintf(z + at, sizeof z - (size_t)at, " %d %s", counts[k], world_activity_name((world_activity)k));
        put(y++, r.x, r.w, 0, "%s", z);
    }
    /* The legend, wrapped to the panel. */
    int x = r.x;
    for (int k = 0; k < WA_COUNT && y < end; k++) {
        const char *name = world_activity_name((world_activity)k);
        int len = 2 + (int)strlen(name) + 1;
        if (x + len > r.x + r.w) {
            if (++y >= end) break;
            x = r.x;
        }
        char z[2] = { cell_letter[k], 0 };
        attr_t at = d->colour && cell_pair[k] ? COLOR_PAIR(cell_pair[k]) | A_REVERSE : 0;
        attron(at);
        mvaddstr(y, x, z);
        attroff(at);
        put(y, x + 1, r.x + r.w - x - 1, A_DIM, " %s ", name);
        x += len;
    }
}

/* ---- the jobs table ------------------------------------------------------ */

static dash *sort_ctx;             /* qsort has no context argument */

static int phase_rank(const char *p) {
    static const char *z[] = { "down", "waiting", "restart", "checkpoint", "running", "queued", "done" };
    for (int i = 0; i < 7; i++)
        if (!strcmp(p, z[i])) return i;
    return 7;
}

static int cmp_d(double a, double b) { return (a > b) - (a < b); }

static int cmp_jobs(const void *pa, const void *pb) {
    const dash *d = sort_ctx;
    int a = *(const int *)pa, b = *(const int *)pb;
    job_result ra, rb;
    const job_result *x = world_job(d->w, a, &ra), *y = world_job(d->w, b, &rb);
    const world_job_live *p = &d->jl[a], *q = &d->jl[b];
    int c = 0;
    switch (d->u.sort) {
    case SORT_NAME: c = strcmp(x->name, y->name); break;
    case SORT_STATE: c = phase_rank(p->phase) - phase_rank(q->phase); break;
    case SORT_GPUS: c = y->gpus - x->gpus; break;
    case SORT_PROGRESS: c = cmp_d(q->progress, p->progress); break;
    case SORT_ETA: c = cmp_d(p->eta_s < 0 ? INFINITY : p->eta_s, q->eta_s < 0 ? INFINITY : q->eta_s); break;
    case SORT_INTERRUPTIONS: c = y->interruptions - x->interruptions; break;
    case SORT_ETTR: c = cmp_d(p->ettr, q->ettr); break;
    default: break;
    }
    return c ? c : a - b;
}

/* Jobs submitted so far, sorted. */
static void collect_jobs(dash *d) {
    double now = sim_now_s(d);
    d->n_shown = 0;
    for (int i = 0; i < d->n_jobs; i++) {
        job_result jr;
        const job_result *j = world_job(d->w, i, &jr);
        if (j->submit_s > now) continue;
        world_job_view(d->w, i, &d->jl[i]);
        d->order[d->n_shown++] = i;
    }
    sort_ctx = d;
    qsort(d->order, (size_t)d->n_shown, sizeof *d->order, cmp_jobs);
}

static void draw_jobs(dash *d) {
    rect r = d->L.jobs;
    int namew = r.w - 58;
    if (namew < 8) namew = 8;
    static const char *cols[SORT_COUNT] = { "", "NAME", "STATE", "GPUS", "PROG", "ETA", "INT", "ETTR" };
    char hdr[256];
    snprintf(hdr, sizeof hdr, " %-*s %-8s %6s %-10s %5s %6s %6s %4s %5s", namew - 1, "NAME", "QUEUE", "GPUS", "STATE",
             "PROG", "ETA", "STEP", "INT", "ETTR");
    if (d->u.sort != SORT_ORDER) {     /* mark the sort column */
        char *p = strstr(hdr, cols[d->u.sort]);
        if (p) p[strlen(cols[d->u.sort]) - 1] = '*';
    }
    title(d, r, d->u.focus == UI_JOBS, hdr);
    int rows = r.h - 1;
    for (int k = 0; k < rows; k++) {
        int row = d->u.job_top + k;
        if (row >= d->n_shown) break;
        int i = d->order[row];
        job_result jr;
        const job_result *j = world_job(d->w, i, &jr);
        const world_job_live *v = &d->jl[i];
        char gpus[32], eta[16], step[32], ettr[16], prog[32];
        nf_count(j->gpus, gpus, sizeof gpus);
        fmt_duration(v->eta_s, eta, sizeof eta);
        if (v->step_s > 0) nf_duration(v->step_s, step, sizeof step);
        else snprintf(step, sizeof step, "-");
        if (v->ettr >= 0) snprintf(ettr, sizeof ettr, "%.3f", v->ettr);
        else snprintf(ettr, sizeof ettr, "-");
        nf_pct(v->progress, prog, sizeof prog);
        const char *st = !strcmp(v->phase, "done") ? job_state_name(j->state) : v->phase;
        attr_t at = 0;
        if (!strcmp(st, "down") || !strcmp(st, "waiting") || !strcmp(st, "failed") || !strcmp(st, "timeout"))
            at = pair(d, P_FAIL) | A_BOLD;
        else if (!strcmp(st, "restart")) at = pair(d, P_RESTART);
        else if (!strcmp(st, "checkpoint")) at = pair(d, P_CKPT);
        else if (!strcmp(st, "done")) at = A_DIM;
        if (row == d->u.job_row && d->u.focus == UI_JOBS) at = A_REVERSE;
        put(r.y + 1 + k, r.x, r.w, at, " %-*.*s %-8.8s %6s %-10s %5s %6s %6s %4d %5s", namew - 1, namew - 1, j->name,
            j->queue[0] ? j->queue : "default", gpus, st, prog, eta, step, j->interruptions, ettr);
    }
    if (d->n_shown == 0) put(r.y + 1, r.x, r.w, A_DIM, " no job submitted yet");
}

/* ---- sparklines ---------------------------------------------------------- */

static void spark_line(dash *d, int y, rect r, const char *label, const double *v, int n, double lo, double hi,
                       const char *value) {
    char buf[FEED_MAX_BUCKETS * 3 + 1];
    put(y, r.x, 15, 0, " %-13.13s ", label);
    fmt_sparkline(v, n, lo, hi, d->utf8, buf, sizeof buf);
    attron(pair(d, P_TRAIN));
    mvaddstr(y, r.x + 15, buf);
    attroff(pair(d, P_TRAIN));
    put(y, r.x + 16 + n, r.w - 16 - n, A_BOLD, "%s", value);
}

static void minmax(const double *v, int n, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) {
            if (v[i] < *lo) *lo = v[i];
            if (v[i] > *hi) *hi = v[i];
        }
    if (*lo > *hi) *lo = *hi = 0;
}

static void draw_sparks(dash *d) {
    rect r = d->L.sparks;
    int n = r.w - 15 - 11;
    if (n > FEED_MAX_BUCKETS) n = FEED_MAX_BUCKETS;
    if (n < 4 || r.h <= 0) return;
    double now = sim_now_s(d);
    double win = d->u.speed * SPARK_WINDOW_WALL_S;
    sim_time t1 = sim_from_s(now), t0 = sim_from_s(now > win ? now - win : 0);
    if (t1 <= t0) {
        put(r.y, r.x, r.w, A_DIM, " (sparklines start once the run does)");
        return;
    }
    double v[FEED_MAX_BUCKETS], acc[FEED_MAX_BUCKETS], lo, hi;
    char val[48];
    int y = r.y, end = r.y + r.h;

    /* GPU utilisation: GPUs held in every state over all GPUs. */
    static const char *names[] = { "gpus_training", "gpus_checkpoint", "gpus_restarting", "gpus_batch", "gpus_serving" };
    /* A series without a sample in a bucket is 0 there (the bus publishes
     * changes only), except before the rings hold the whole history. */
    int any = 0;
    sim_time known = 0;
    for (int b = 0; b < n; b++) acc[b] = 0;
    for (int i = 0; i < 5; i++) {
        int k = feed_find(d->fd, "cluster", names[i]);
        if (k < 0 || feed_samples(d->fd, k) == 0) continue;
        if (feed_known_since(d->fd, k) > known) known = feed_known_since(d->fd, k);
        feed_mean(d->fd, k, t0, t1, v, n);
        for (int b = 0; b < n; b++)
            if (!isnan(v[b])) acc[b] += v[b], any = 1;
    }
    for (int b = 0; b < n; b++) {
        sim_time b_end = t0 + (sim_time)((double)(t1 - t0) * (b + 1) / n);
        acc[b] = any && d->gpus > 0 && b_end > known ? acc[b] / d->gpus : NAN;
    }
    nf_pct(any ? acc[n - 1] : 0.0, val, sizeof val);
    spark_line(d, y++, r, "GPU util", acc, n, 0, 1, val);

    if (y < end && d->n_jobs > 0) {    /* a serving-only scenario has no job queue */
        feed_mean(d->fd, feed_find(d->fd, "cluster", "queue_length"), t0, t1, v, n);
        minmax(v, n, &lo, &hi);
        double q = feed_last(d->fd, feed_find(d->fd, "cluster", "queue_length"));
        nf_qty(isnan(q) ? 0 : q, "job", "jobs", val, sizeof val);
        spark_line(d, y++, r, "queue", v, n, 0, hi > 0 ? hi : 1, val);
    }
    if (y < end) {
        /* Cost rate: differences of the cumulative cost the dashboard records. */
        double c[FEED_MAX_BUCKETS];
        sim_time at[FEED_MAX_BUCKETS];
        feed_at(d->fd, d->s_cost, t0, t1, c, at, n);
        /* Between the samples seen at the ends of each bucket (frames may
         * be further apart than buckets: then the last rate holds). */
        for (int b = 0; b < n; b++) {
            v[b] = b > 0 ? v[b - 1] : NAN;
            if (b > 0 && at[b] > at[b - 1] && at[b - 1] >= 0)
                v[b] = (c[b] - c[b - 1]) / (sim_to_s(at[b] - at[b - 1]) / 3600);
        }
        minmax(v, n, &lo, &hi);
        double last = NAN;
        for (int b = n - 1; b >= 0 && isnan(last); b--) last = v[b];
        char usd[32];
        snprintf(val, sizeof val, "%s/h", nf_usd(last, usd, sizeof usd));
        spark_line(d, y++, r, "cost rate", v, n, 0, hi > 0 ? hi : 1, val);
    }
    /* Services: throughput, queue, and p99 latencies when published. */
    static const struct { const char *name, *label; char *(*number)(double, char *, size_t); } svc[] = {
        { "ttft_p99_s", "TTFT p99", nf_duration }, { "tpot_p99_s", "TPOT p99", nf_duration },
        { "output_tokens_per_s", "tok/s", nf_count }, { "queue_length", "queue", nf_count } };
    for (int i = 0; i < world_service_count(d->w) && y < end; i++) {
        const char *name = world_service(d->w, i)->name;
        for (size_t m = 0; m < sizeof svc / sizeof svc[0] && y < end; m++) {
            int k = feed_find(d->fd, name, svc[m].name);
            if (k < 0) continue;
            feed_mean(d->fd, k, t0, t1, v, n);
            minmax(v, n, &lo, &hi);
            svc[m].number(feed_last(d->fd, k), val, sizeof val);
            char label[64];
            snprintf(label, sizeof label, "%.*s %s", 13 - (int)strlen(svc[m].label) - 1, name, svc[m].label);
            spark_line(d, y++, r, label, v, n, 0, hi > 0 ? hi : 1, val);
        }
    }
}

/* ---- the event log ------------------------------------------------------- */

static void draw_log(dash *d) {
    rect r = d->L.log;
    char t[96], n[32];
    nf_count((double)feed_events_total(d->fd), n, sizeof n);
    snprintf(t, sizeof t, " events (%s, newest first)%s", n, d->u.log_top ? " [scrolled]" : "");
    title(d, r, d->u.focus == UI_LOG, t);
    for (int k = 0; k < r.h - 1; k++) {
        const feed_event *e = feed_log(d->fd, d->u.log_top + k);
        if (!e) break;
        char clock[32];
        fmt_clock(sim_to_s(e->t), clock, sizeof clock);
        attr_t at = 0;
        if (!strcmp(e->kind, "failure") || !strcmp(e->kind, "job_down") || !strcmp(e->kind, "node_drained") ||
            !strcmp(e->kind, "job_timeout"))
            at = pair(d, P_FAIL) | A_BOLD;
        else if (!strcmp(e->kind, "node_repaired") || !strcmp(e->kind, "job_restart") ||
                 !strcmp(e->kind, "node_undrained"))
            at = pair(d, P_GOOD);
        int cl = !strcmp(e->entity, "cluster");
        char rep[24] = "";
        if (e->repeat > 1) snprintf(rep, sizeof rep, " (x%d)", e->repeat);
        put(r.y + 1 + k, r.x, r.w, at, " %s %s %s%s%s%s", clock, e->kind, cl ? "" : e->entity, cl ? "" : ": ", e->detail,
            rep);
    }
}

static void draw_status(dash *d) {
    rect r = d->L.status;
    if (d->u.msg[0]) put(r.y, 0, r.w, A_BOLD, " %s", d->u.msg);
    else
        put(r.y, 0, r.w, A_DIM, " space pause  +/- speed  . step  tab panel  jk move  s sort  f fail  d drain  ? help  q quit");
}

static void draw_help(dash *d) {
    static const char *help_text[] = {
        "clustertwin dash: keys",
        "",
        "space     pause / resume",
        "+ -       double / halve the speed (simulated per wall second)",
        ".         one event (when paused)",
        "tab       next panel (map, jobs, log); shift-tab back",
        "arrows jk move in the panel (hl: left/right on the map)",
        "pgup pgdn g G   page, first, last",
        "s         sort the jobs (order, name, state, GPUs, progress, ...)",
        "f         inject a failure on the selected node",
        "d         drain / undrain the selected node",
        "q         quit: finish the run here, write results as 'run' does",
        "",
        "map: T training  B batch  S serving  C checkpointing  R restarting",
        "     X failed  r repairing  s spare  D drained  . idle  o off",
        "",
        "any key closes this help",
    };
    int n = (int)(sizeof help_text / sizeof help_text[0]), w = 72;
    if (w > d->cols - 2) w = d->cols - 2;
    int y0 = (d->rows - n - 2) / 2, x0 = (d->cols - w) / 2;
    if (y0 < 0) y0 = 0;
    for (int i = -1; i <= n; i++) put(y0 + 1 + i, x0, w, A_REVERSE, "%*s", w, "");   /* the box */
    for (int i = 0; i < n; i++) put(y0 + 1 + i, x0 + 2, w - 4, A_REVERSE | (i == 0 ? A_BOLD : 0), "%s", help_text[i]);
}

static void draw(dash *d) {
    erase();
    if (!d->L.ok) {
        put(0, 0, d->cols, A_BOLD, "terminal too small: %dx%d, the dashboard needs %dx%d (q quits)", d->cols, d->rows,
            LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
        refresh();
        return;
    }
    draw_header(d);
    draw_map(d);
    draw_detail(d);
    draw_jobs(d);
    draw_sparks(d);
    draw_log(d);
    draw_status(d);
    if (d->u.help) draw_help(d);
    refresh();
}

/* ---- the loop -------------------------------------------------------------- */

/* Sparkline rows the run can fill: GPU utilisation, the job queue (when
 * there are jobs), the cost rate, and four per service. */
static int spark_rows(const dash *d) { return 2 + (d->n_jobs > 0) + 4 * world_service_count(d->w); }

static void relayout(dash *d) {
    getmaxyx(stdscr, d->rows, d->cols);
    layout_content c = { d->n_nodes, d->npl, d->n_jobs, spark_rows(d) };
    d->L = layout_fit(d->rows, d->cols, c);
    if (d->L.ok) d->g = layout_map_grid(d->n_nodes, d->npl, d->L.map.h, d->L.map.w);
}

/* Sizes for the key handlers, from what the last frame showed. */
static void view_sizes(dash *d) {
    d->v.nodes = d->n_nodes;
    d->v.per_cell = d->g.per_cell > 0 ? d->g.per_cell : 1;
    d->v.map_cols = d->g.cols > 0 ? d->g.cols : 1;
    d->v.jobs = d->n_shown;
    d->v.job_rows = d->L.ok ? d->L.jobs.h - 1 : 1;
    d->v.log_lines = feed_log_count(d->fd);
    d->v.log_rows = d->L.ok ? d->L.log.h - 1 : 1;
}

static int map_key(int ch) {
    switch (ch) {
    case KEY_UP: return UI_KEY_UP;
    case KEY_DOWN: return UI_KEY_DOWN;
    case KEY_LEFT: return UI_KEY_LEFT;
    case KEY_RIGHT: return UI_KEY_RIGHT;
    case KEY_BTAB: return UI_KEY_BTAB;
    case KEY_NPAGE: return UI_KEY_PGDN;
    case KEY_PPAGE: return UI_KEY_PGUP;
    case KEY_HOME: return UI_KEY_HOME;
    case KEY_END: return UI_KEY_END;
    case KEY_RESIZE: return UI_KEY_RESIZE;
    default: return ch;
    }
}

/* The node of the selected cell a command applies to: the selected node,
 * or in a grouped cell the first node the command can act on. */
static int target_node(dash *d, int (*fits)(const world_node_view *)) {
    int per = d->g.per_cell > 0 ? d->g.per_cell : 1, a = d->u.node / per * per;
    for (int i = a; i < a + per && i < d->n_nodes; i++)
        if (fits(&d->nv[i])) return i;
    return d->u.node < d->n_nodes ? d->u.node : -1;
}
static int can_fail(const world_node_view *v) {
    return v->activity != WA_FAILED && v->activity != WA_REPAIRING && v->activity != WA_DRAINED &&
           v->activity != WA_OFF;
}
static int is_drained(const world_node_view *v) { return v->activity == WA_DRAINED; }

static void command(dash *d, int flags) {
    ui_state *u = &d->u;
    if (flags & UI_STEP) {
        if (world_step_event(d->w)) {
            char c[32];
            snprintf(u->msg, sizeof u->msg, "one event: now %s", fmt_clock(sim_now_s(d), c, sizeof c));
        } else {
            snprintf(u->msg, sizeof u->msg, "nothing left to run");
        }
    }
    if (flags & UI_INJECT) {
        world_node_views(d->w, d->nv);
        int n = target_node(d, can_fail);
        if (n >= 0 && world_inject_failure(d->w, n) == 0)
            snprintf(u->msg, sizeof u->msg, "failure injected on node %d", n);
        else if (n >= 0)
            snprintf(u->msg, sizeof u->msg, "node %d is %s: no failure injected", n, world_activity_name(d->nv[n].activity));
    }
    if (flags & UI_DRAIN) {
        world_node_views(d->w, d->nv);
        int n = target_node(d, is_drained);
        int on = n >= 0 && d->nv[n].activity != WA_DRAINED;
        if (n >= 0 && world_drain(d->w, n, on) == 0)
            snprintf(u->msg, sizeof u->msg, "node %d %s", n, on ? "drained" : "back in service");
        else if (n >= 0)
            snprintf(u->msg, sizeof u->msg, "node %d is %s: cannot %s it", n, world_activity_name(d->nv[n].activity),
                     on ? "drain" : "undrain");
    }
    d->done = world_done(d->w);
}

/* Run the simulation for this frame: speed x wall time since the last
 * frame, in a few slices, stopping early when the wall budget is spent
 * (then the run falls behind the speed asked and the header says so). */
static void advance(dash *d, double dt) {
    if (d->u.paused || d->done) return;
    engine *e = world_engine(d->w);
    /* sim_from_s saturates at SIM_FOREVER: add without overflow, and never
     * past the horizon the engine stops at */
    sim_time from = engine_now(e), step = sim_from_s(d->u.speed * dt);
    sim_time target = step >= SIM_HORIZON - from ? SIM_HORIZON : from + step;
    double t0 = wall_s();
    /* compared in integer ns: seconds round, and a clock a rounding short
     * of the target would spin here until the budget ran out */
    while (!d->done && engine_now(e) < target) {
        sim_time was = engine_now(e), next = was + (target - from) / 4 + 1;
        d->done = world_advance(d->w, sim_to_s(next < target ? next : target));
        if (engine_now(e) == was || wall_s() - t0 > ADVANCE_BUDGET_S) break;   /* no progress (rounding) or out of time */
    }
}

static int keep_event(void *ctx, const char *entity, const char *kind) {
    const dash *d = ctx;
    (void)entity;
    static const char *noise[] = { "job_submit", "checkpoint_start", "model_load", "model_unload",
                                   "replica_ready", "replica_stop" };
    for (size_t i = 0; i < sizeof noise / sizeof noise[0]; i++)
        if (!strcmp(kind, noise[i])) return 0;
    /* Starts and ends of many small jobs would bury the rest. */
    if (d->n_jobs > 20 && (!strcmp(kind, "job_start") || !strcmp(kind, "job_end"))) return 0;
    /* A run of checkpoints is one line with a count. */
    if (!strcmp(kind, "checkpoint_end")) return FEED_COLLAPSE;
    return FEED_KEEP;
}

static void colours(dash *d) {
    d->colour = has_colors();
    if (!d->colour) return;
    start_color();
    short bg = COLOR_BLACK;
    if (use_default_colors() == OK) bg = -1;
    init_pair(P_TRAIN, COLOR_GREEN, bg);
    init_pair(P_BATCH, COLOR_CYAN, bg);
    init_pair(P_SERVE, COLOR_BLUE, bg);
    init_pair(P_CKPT, COLOR_YELLOW, bg);
    init_pair(P_RESTART, COLOR_MAGENTA, bg);
    init_pair(P_FAIL, COLOR_RED, bg);
    init_pair(P_REPAIR, COLOR_RED, bg);
    init_pair(P_SPARE, COLOR_WHITE, bg);
    init_pair(P_DRAIN, COLOR_WHITE, bg);
    init_pair(P_HEAD, COLOR_CYAN, bg);
    init_pair(P_GOOD, COLOR_GREEN, bg);
}

int dash_check_terminal(char *err, size_t errlen) {
    int e = 0;
    if (setupterm(NULL, STDOUT_FILENO, &e) != OK) {
        snprintf(err, errlen, "cannot use the terminal (TERM=%s%s)", getenv("TERM") ? getenv("TERM") : "",
                 e == 0 ? ": not in the terminfo database" : "");
        return -1;
    }
    int ok = tigetstr("cup") != NULL && tigetstr("cup") != (char *)-1;
    del_curterm(cur_term);
    if (!ok) {
        snprintf(err, errlen, "the terminal (TERM=%s) cannot move its cursor", getenv("TERM") ? getenv("TERM") : "");
        return -1;
    }
    return 0;
}

dash *dash_new(world *w, const scenario *s, metric_bus *bus) {
    dash *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->w = w;
    d->s = s;
    d->n_nodes = world_node_count(w);
    d->npl = world_nodes_per_leaf(w);
    d->n_jobs = world_job_count(w);
    d->gpus = world_get_totals(w).gpus;
    d->nv = calloc((size_t)d->n_nodes + 1, sizeof *d->nv);
    d->jl = calloc((size_t)d->n_jobs + 1, sizeof *d->jl);
    d->order = calloc((size_t)d->n_jobs + 1, sizeof *d->order);
    d->fd = feed_new(FEED_POINTS, FEED_LOG);
    if (!d->nv || !d->jl || !d->order || !d->fd || (d->s_cost = feed_add_series(d->fd, "dash", "cost_usd")) < 0)
        goto oom;
    feed_set_filter(d->fd, keep_event, d);
    metric_sink sink = feed_sink(d->fd);
    if (metrics_subscribe(bus, &sink) < 0) goto oom;
    return d;
oom:
    dash_free(d);
    return NULL;
}

void dash_free(dash *d) {
    if (!d) return;
    free(d->nv);
    free(d->jl);
    free(d->order);
    feed_free(d->fd);
    free(d);
}

int dash_run(dash *d, const dash_opts *o, char *err, size_t errlen) {
    world *w = d->w;
    setlocale(LC_ALL, "");
    const char *cs = nl_langinfo(CODESET);
    d->utf8 = cs && !strcmp(cs, "UTF-8");
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        snprintf(err, errlen, "cannot use the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
        return -1;
    }
    set_term(scr);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    timeout(FRAME_MS);
    colours(d);

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    quit_signal = 0;

    ui_init(&d->u, o->speed, o->paused);
    d->wall0 = d->ev_wall = wall_s();
    d->ev_mark = engine_dispatched(world_engine(w));
    d->sim_mark = sim_now_s(d);
    d->done = world_done(w);
    double last = d->wall0;
    relayout(d);
    for (;;) {
        double t = wall_s(), dt = t - last;
        last = t;
        advance(d, dt > 0.25 ? 0.25 : dt);
        if (t - d->ev_wall >= 1.0) {
            uint64_t ev = engine_dispatched(world_engine(w));
            double span = wall_s() - d->ev_wall;
            d->evps = (double)(ev - d->ev_mark) / span;
            d->actual = (sim_now_s(d) - d->sim_mark) / span;
            d->fps = d->frames / span;
            d->frames = 0;
            d->ev_mark = ev;
            d->sim_mark = sim_now_s(d);
            d->ev_wall = wall_s();
        }
        feed_push(d->fd, d->s_cost, engine_now(world_engine(w)), world_get_totals(w).cost_usd);
        world_node_views(w, d->nv);
        if (d->frames % 4 == 0 || d->jobs_dirty) collect_jobs(d);   /* 100K-job traces: a sort costs */
        d->jobs_dirty = 0;
        view_sizes(d);
        draw(d);
        d->frames++;
        if (quit_signal) break;
        int ch = getch();
        if (ch == ERR) continue;
        int flags = ui_key(&d->u, map_key(ch), &d->v);
        d->jobs_dirty = 1;
        if (flags & UI_RESIZE) relayout(d);
        if (flags & (UI_STEP | UI_INJECT | UI_DRAIN)) command(d, flags);
        if (flags & UI_QUIT) break;
        /* a message lasts until the next key that does not set one */
        if (!(flags & (UI_STEP | UI_INJECT | UI_DRAIN)) && ch != ' ' && ch != 's' && ch != '.') d->u.msg[0] = 0;
        if (d->u.paused && ch == ' ') snprintf(d->u.msg, sizeof d->u.msg, "paused: space resumes, '.' steps one event");
    }
    endwin();
    delscreen(scr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return 0;
}
