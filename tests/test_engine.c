/*
 * test_engine: the event queue against a naive reference.
 *
 * The reference is a sorted array of (time, sequence) kept by insertion,
 * obviously correct and O(n) per operation. A random script (fixed seed,
 * 200,000 operations in phases that grow, cancel-heavy and drain the queue)
 * drives both; handlers themselves schedule and cancel. Every dispatch must be
 * the reference's minimum, every cancel must return what the reference says,
 * and the pending count and next time must agree after every operation. The
 * cancel-heavy phases push dead entries past the live ones, so the heap
 * compaction runs; the sequence counter is moved next to its limit midway so
 * the renumbering runs too. A second script schedules half its events in
 * time order (a trace's submissions), so that the engine's lane (the queue
 * of in-order events beside the heap) is long, cancelled into, compacted
 * and renumbered while the heap holds the rest.
 *
 * Then the corner cases one by one: FIFO ties, cancel of unknown / run /
 * cancelled / running ids, cancel from a handler, engine_run(until) and
 * engine_stop(), engine_after() saturation, and determinism (two runs of one
 * script give the same dispatch bytes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

/* ---- a small deterministic PRNG for scripts (xorshift64*) ------------- */

static uint64_t prng_state;

static uint64_t prng(void) {
    prng_state ^= prng_state >> 12;
    prng_state ^= prng_state << 25;
    prng_state ^= prng_state >> 27;
    return prng_state * 0x2545f4914f6cdd1dULL;
}

static uint64_t prng_below(uint64_t n) {
    return prng() % n;
}

/* ---- the reference queue ---------------------------------------------- */

typedef struct ref_ev {
    sim_time t;
    uint64_t seq;
    event_id id;
    uint32_t tag;
} ref_ev;

typedef struct ref_queue {
    ref_ev *v;                      /* sorted by (t, seq) ascending */
    size_t n, cap;
    uint64_t seq;
    sim_time now;
} ref_queue;

static void ref_push(ref_queue *q, sim_time t, event_id id, uint32_t tag) {
    if (t < q->now)
        t = q->now;
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 1024;
        q->v = realloc(q->v, q->cap * sizeof *q->v);
        assert_non_null(q->v);
    }
    ref_ev x = { t, q->seq++, id, tag };
    size_t i = q->n;
    while (i > 0 && (q->v[i - 1].t > t || (q->v[i - 1].t == t && q->v[i - 1].seq > x.seq)))
        i--;
    memmove(q->v + i + 1, q->v + i, (q->n - i) * sizeof *q->v);
    q->v[i] = x;
    q->n++;
}

static int ref_cancel(ref_queue *q, event_id id) {
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].id == id) {
            memmove(q->v + i, q->v + i + 1, (q->n - i - 1) * sizeof *q->v);
            q->n--;
            return 1;
        }
    return 0;
}

static ref_ev ref_pop(ref_queue *q) {
    assert_true(q->n > 0);
    ref_ev x = q->v[0];
    memmove(q->v, q->v + 1, (q->n - 1) * sizeof *q->v);
    q->n--;
    q->now = x.t;
    return x;
}

/* ---- the script ------------------------------------------------------- */

/* Ids that went away (ran or cancelled), to try cancelling them again. */
#define GONE_MAX 4096

typedef struct script {
    engine *e;
    ref_queue ref;
    event_id gone[GONE_MAX];
    size_t ngone;
    uint32_t next_tag;
    uint32_t expect_tag;            /* set before engine_step */
    int dispatched_in_step;
    unsigned char *log;             /* (time, tag) of every dispatch */
    size_t nlog, caplog;
    int in_order;                   /* half the schedules at a rising time */
    sim_time last_in_order;
} script;

static script S;

static void note_gone(event_id id) {
    S.gone[S.ngone++ % GONE_MAX] = id;
}

static void log_dispatch(sim_time t, uint32_t tag) {
    if (S.nlog + 12 > S.caplog) {
        S.caplog = S.caplog ? S.caplog * 2 : 1 << 16;
        S.log = realloc(S.log, S.caplog);
        assert_non_null(S.log);
    }
    memcpy(S.log + S.nlog, &t, 8);
    memcpy(S.log + S.nlog + 8, &tag, 4);
    S.nlog += 12;
}

static void script_handler(engine *e, void *arg);

/* Delays: often 0 or tiny so that many events share a time. */
static sim_time random_delay(void) {
    uint64_t r = prng_below(100);
    if (r < 20)
        return 0;
    if (r < 60)
        return (sim_time)prng_below(4);
    if (r < 90)
        return (sim_time)prng_below(1000);
    return (sim_time)prng_below(1000000);
}

static void op_schedule(void) {
    sim_time t;
    uint32_t tag = S.next_tag++;
    uint64_t how = prng_below(10);
    event_id id;
    if (S.in_order && prng_below(2)) {
        if (S.last_in_order < engine_now(S.e))          /* ahead of the clock */
            S.last_in_order = engine_now(S.e) + (sim_time)prng_below(1000000);
        S.last_in_order += (sim_time)prng_below(3);     /* ties too */
        t = S.last_in_order;
        id = engine_schedule(S.e, t, script_handler, (void *)(uintptr_t)tag);
    } else if (how < 7) {
        t = engine_now(S.e) + random_delay();
        id = engine_schedule(S.e, t, script_handler, (void *)(uintptr_t)tag);
    } else if (how < 9) {
        sim_time d = random_delay();
        t = engine_now(S.e) + d;
        id = engine_after(S.e, d, script_handler, (void *)(uintptr_t)tag);
    } else {
        /* In the past: clamped to now. */
        t = engine_now(S.e) - (sim_time)prng_below(50);
        id = engine_schedule(S.e, t, script_handler, (void *)(uintptr_t)tag);
    }
    assert_true(id != 0);
    ref_push(&S.ref, t, id, tag);
}

static void op_cancel(void) {
    uint64_t how = prng_below(10);
    event_id id;
    if (how < 6 && S.ref.n > 0)
        id = S.ref.v[prng_below(S.ref.n)].id;            /* pending */
    else if (how < 8 && S.ngone > 0)
        id = S.gone[prng_below(S.ngone < GONE_MAX ? S.ngone : GONE_MAX)];
    else if (how < 9)
        id = prng();                                     /* unknown */
    else
        id = 0;
    int want = ref_cancel(&S.ref, id);
    assert_int_equal(engine_cancel(S.e, id), want);
    if (want)
        note_gone(id);
}

static void check_agree(void) {
    assert_int_equal(engine_pending(S.e), S.ref.n);
    sim_time want = S.ref.n ? S.ref.v[0].t : SIM_FOREVER;
    assert_int_equal(engine_next_time(S.e), want);
}

static void script_handler(engine *e, void *arg) {
    uint32_t tag = (uint32_t)(uintptr_t)arg;
    assert_ptr_equal(e, S.e);
    assert_int_equal(tag, S.expect_tag);
    S.dispatched_in_step++;
    log_dispatch(engine_now(e), tag);
    /* Handlers schedule (also at the current time) and cancel too. */
    uint64_t r = prng_below(10);
    if (r < 2)
        op_schedule();
    else if (r < 3)
        op_cancel();
}

static void op_step(void) {
    if (S.ref.n == 0) {
        assert_int_equal(engine_step(S.e), 0);
        return;
    }
    ref_ev x = ref_pop(&S.ref);
    S.expect_tag = x.tag;
    S.dispatched_in_step = 0;
    uint64_t before = engine_dispatched(S.e);
    assert_int_equal(engine_step(S.e), 1);
    assert_int_equal(S.dispatched_in_step, 1);
    assert_int_equal(engine_dispatched(S.e), before + 1);
    assert_int_equal(engine_now(S.e), x.t);
    assert_int_equal(*engine_clock(S.e), x.t);      /* the clock a caller may read in place */
    note_gone(x.id);
    /* The event that ran cannot be cancelled any more. */
    assert_int_equal(engine_cancel(S.e, x.id), 0);
}

/* Run nops operations from seed; leaves the dispatch log in S.log. */
static void run_script(uint64_t seed, int nops, int in_order) {
    memset(&S, 0, sizeof S);
    S.in_order = in_order;
    prng_state = seed;
    S.e = engine_new();
    assert_non_null(S.e);
    /* Phases of 20,000 operations: grow, cancel-heavy, drain, mixed. */
    static const int mix[4][3] = {
        /* schedule, cancel, step (percent) */
        { 60, 10, 30 },
        { 15, 70, 15 },
        { 10, 10, 80 },
        { 40, 20, 40 },
    };
    for (int i = 0; i < nops; i++) {
        if (i == nops / 2)
            engine_debug_set_seq(S.e, engine_debug_seq_limit() - 100);
        const int *m = mix[(i / 20000) % 4];
        int r = (int)prng_below(100);
        if (r < m[0])
            op_schedule();
        else if (r < m[0] + m[1])
            op_cancel();
        else
            op_step();
        check_agree();
    }
    /* Drain. */
    while (S.ref.n > 0)
        op_step();
    assert_int_equal(engine_step(S.e), 0);
    check_agree();
    engine_free(S.e);
    free(S.ref.v);
    S.e = NULL;
}

static void test_script_against_reference(void **state) {
    (void)state;
    run_script(0x5eed1234abcdULL, 200000, 0);
    free(S.log);
}

/* Events scheduled in time order (the lane) mixed with the others. */
static void test_lane_against_reference(void **state) {
    (void)state;
    run_script(0x1a4e5eedULL, 200000, 1);
    free(S.log);
}

static void test_determinism(void **state) {
    (void)state;
    run_script(42, 50000, 1);
    unsigned char *log1 = S.log;
    size_t n1 = S.nlog;
    run_script(42, 50000, 1);
    assert_true(n1 > 0);
    assert_int_equal(S.nlog, n1);
    assert_memory_equal(S.log, log1, n1);
    free(log1);
    free(S.log);
}

/* ---- corner cases ----------------------------------------------------- */

typedef struct trace {
    int tags[64];
    sim_time times[64];
    int n;
} trace;

typedef struct tev {
    trace *tr;
    int tag;
    /* What the handler does besides recording itself. */
    event_id cancel_id;             /* cancel this one (0: none) */
    int cancel_rc;                  /* what the cancel returned */
    int cancel_self;
    event_id self_id;
    int stop;
    int schedule_now_tag;           /* >= 0: schedule another tev at now */
    struct tev *child;
} tev;

static void tev_handler(engine *e, void *arg) {
    tev *p = arg;
    p->tr->tags[p->tr->n] = p->tag;
    p->tr->times[p->tr->n] = engine_now(e);
    p->tr->n++;
    if (p->cancel_id)
        p->cancel_rc = engine_cancel(e, p->cancel_id);
    if (p->cancel_self)
        p->cancel_rc = engine_cancel(e, p->self_id);
    if (p->stop)
        engine_stop(e);
    if (p->child)
        assert_true(engine_schedule(e, engine_now(e), tev_handler, p->child) != 0);
}

static void test_empty(void **state) {
    (void)state;
    engine *e = engine_new();
    assert_non_null(e);
    assert_int_equal(engine_now(e), 0);
    assert_int_equal(engine_pending(e), 0);
    assert_int_equal(engine_next_time(e), SIM_FOREVER);
    assert_int_equal(engine_step(e), 0);
    assert_int_equal(engine_run(e, SIM_FOREVER), 0);
    assert_int_equal(engine_now(e), 0);
    assert_int_equal(engine_dispatched(e), 0);
    engine_free(e);
    engine_free(NULL);
}

static void test_fifo_ties(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev ev[40];
    for (int i = 0; i < 40; i++) {
        ev[i] = (tev){ .tr = &tr, .tag = i };
        /* 0..19 at t=5, 20..39 at t=3, interleaved */
        sim_time t = (i % 2 == 0) ? 5 : 3;
        ev[i].tag = i;
        assert_true(engine_schedule(e, t, tev_handler, &ev[i]) != 0);
    }
    assert_int_equal(engine_run(e, SIM_FOREVER), 40);
    int k = 0;
    for (int i = 1; i < 40; i += 2, k++) {
        assert_int_equal(tr.tags[k], i);
        assert_int_equal(tr.times[k], 3);
    }
    for (int i = 0; i < 40; i += 2, k++) {
        assert_int_equal(tr.tags[k], i);
        assert_int_equal(tr.times[k], 5);
    }
    engine_free(e);
}

static void test_cancel_ids(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev a = { .tr = &tr, .tag = 1 }, b = { .tr = &tr, .tag = 2 };
    event_id ia = engine_schedule(e, 10, tev_handler, &a);
    event_id ib = engine_schedule(e, 20, tev_handler, &b);
    assert_true(ia != 0 && ib != 0 && ia != ib);
    assert_int_equal(engine_cancel(e, 0), 0);
    assert_int_equal(engine_cancel(e, 0xdeadbeefcafeULL), 0);
    assert_int_equal(engine_cancel(e, ia ^ (1ULL << 40)), 0);   /* wrong gen */
    assert_int_equal(engine_cancel(e, ib), 1);
    assert_int_equal(engine_cancel(e, ib), 0);                  /* already */
    assert_int_equal(engine_pending(e), 1);
    assert_int_equal(engine_run(e, SIM_FOREVER), 1);
    assert_int_equal(engine_cancel(e, ia), 0);                  /* already ran */
    assert_int_equal(tr.n, 1);
    assert_int_equal(tr.tags[0], 1);
    /* The slots get reused; the old ids must stay dead. */
    event_id ic = engine_schedule(e, 30, tev_handler, &a);
    event_id id2 = engine_schedule(e, 30, tev_handler, &b);
    assert_true(ic != ia && ic != ib && id2 != ia && id2 != ib);
    assert_int_equal(engine_cancel(e, ia), 0);
    assert_int_equal(engine_cancel(e, ib), 0);
    assert_int_equal(engine_pending(e), 2);
    engine_free(e);                 /* frees pending events */
}

static void test_cancel_in_handler(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev a = { .tr = &tr, .tag = 1 };
    tev b = { .tr = &tr, .tag = 2 };      /* same time as a, after it */
    tev c = { .tr = &tr, .tag = 3 };      /* later */
    tev d = { .tr = &tr, .tag = 4, .cancel_self = 1 };
    engine_schedule(e, 10, tev_handler, &a);
    event_id ib = engine_schedule(e, 10, tev_handler, &b);
    event_id ic = engine_schedule(e, 20, tev_handler, &c);
    d.self_id = engine_schedule(e, 15, tev_handler, &d);
    a.cancel_id = ib;
    b.cancel_id = ic;               /* never happens: b is cancelled */
    assert_int_equal(engine_pending(e), 4);
    assert_int_equal(engine_run(e, SIM_FOREVER), 3);
    assert_int_equal(a.cancel_rc, 1);
    assert_int_equal(d.cancel_rc, 0);     /* cancelling itself while running */
    assert_int_equal(tr.n, 3);
    assert_int_equal(tr.tags[0], 1);
    assert_int_equal(tr.tags[1], 4);
    assert_int_equal(tr.tags[2], 3);
    assert_int_equal(engine_now(e), 20);
    assert_int_equal(engine_pending(e), 0);

    /* A handler cancels a later event; a third one cancels an already-run id. */
    tr.n = 0;
    tev f = { .tr = &tr, .tag = 6 };
    tev g = { .tr = &tr, .tag = 7 };
    event_id ig = engine_schedule(e, 40, tev_handler, &g);
    f.cancel_id = ig;
    event_id i_f = engine_schedule(e, 30, tev_handler, &f);
    tev h = { .tr = &tr, .tag = 8, .cancel_id = i_f };
    engine_schedule(e, 35, tev_handler, &h);
    assert_int_equal(engine_run(e, SIM_FOREVER), 2);
    assert_int_equal(f.cancel_rc, 1);
    assert_int_equal(h.cancel_rc, 0);
    assert_int_equal(tr.tags[0], 6);
    assert_int_equal(tr.tags[1], 8);
    engine_free(e);
}

static void test_schedule_now_from_handler(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev child = { .tr = &tr, .tag = 9 };
    tev a = { .tr = &tr, .tag = 1, .child = &child };
    tev b = { .tr = &tr, .tag = 2 };
    engine_schedule(e, 7, tev_handler, &a);
    engine_schedule(e, 7, tev_handler, &b);
    assert_int_equal(engine_run(e, SIM_FOREVER), 3);
    /* The child runs at 7, after b, which was already scheduled at 7. */
    assert_int_equal(tr.tags[0], 1);
    assert_int_equal(tr.tags[1], 2);
    assert_int_equal(tr.tags[2], 9);
    assert_int_equal(tr.times[2], 7);
    engine_free(e);
}

static void test_run_until(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev ev[3];
    for (int i = 0; i < 3; i++) {
        ev[i] = (tev){ .tr = &tr, .tag = i };
        engine_schedule(e, 10 * (i + 1), tev_handler, &ev[i]);
    }
    /* Events at 10 and 20 run; 30 is after until: the clock moves to 25. */
    assert_int_equal(engine_run(e, 25), 2);
    assert_int_equal(engine_now(e), 25);
    assert_int_equal(engine_pending(e), 1);
    /* Nothing new up to 25 again. */
    assert_int_equal(engine_run(e, 25), 0);
    assert_int_equal(engine_now(e), 25);
    /* until in the past: the clock never goes back. */
    assert_int_equal(engine_run(e, 5), 0);
    assert_int_equal(engine_now(e), 25);
    /* An event exactly at until runs. */
    assert_int_equal(engine_run(e, 30), 1);
    assert_int_equal(engine_now(e), 30);
    /* Queue dry before until: the clock ends at until. */
    assert_int_equal(engine_run(e, 100), 0);
    assert_int_equal(engine_now(e), 100);
    /* ...but not at SIM_FOREVER. */
    assert_int_equal(engine_run(e, SIM_FOREVER), 0);
    assert_int_equal(engine_now(e), 100);
    engine_schedule(e, 150, tev_handler, &ev[0]);
    assert_int_equal(engine_run(e, SIM_FOREVER), 1);
    assert_int_equal(engine_now(e), 150);
    /* A cancelled event does not count, and does not stop the clock. */
    event_id id = engine_schedule(e, 160, tev_handler, &ev[1]);
    assert_int_equal(engine_cancel(e, id), 1);
    assert_int_equal(engine_run(e, 200), 0);
    assert_int_equal(engine_now(e), 200);
    engine_free(e);
}

static void test_stop(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev ev[10];
    for (int i = 0; i < 10; i++) {
        ev[i] = (tev){ .tr = &tr, .tag = i, .stop = (i == 4) };
        engine_schedule(e, i + 1, tev_handler, &ev[i]);
    }
    assert_int_equal(engine_run(e, 100), 5);
    assert_int_equal(engine_now(e), 5);   /* not moved to until */
    assert_int_equal(engine_pending(e), 5);
    /* The stop was cleared: the next run goes on. */
    assert_int_equal(engine_run(e, 100), 5);
    assert_int_equal(engine_now(e), 100);
    assert_int_equal(tr.n, 10);
    /* A stop requested outside a run ends the next run at once. */
    engine_schedule(e, 200, tev_handler, &ev[0]);
    engine_stop(e);
    assert_int_equal(engine_run(e, SIM_FOREVER), 0);
    assert_int_equal(engine_run(e, SIM_FOREVER), 1);
    engine_free(e);
}

static void test_after_saturation(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev a = { .tr = &tr, .tag = 1 }, b = { .tr = &tr, .tag = 2 };
    tev c = { .tr = &tr, .tag = 3 }, d = { .tr = &tr, .tag = 4 };
    engine_schedule(e, 1000, tev_handler, &a);
    assert_int_equal(engine_run(e, SIM_FOREVER), 1);
    assert_int_equal(engine_now(e), 1000);
    event_id ib = engine_after(e, SIM_FOREVER, tev_handler, &b);
    event_id ic = engine_after(e, SIM_FOREVER - 500, tev_handler, &c);
    assert_true(ib != 0 && ic != 0);
    assert_int_equal(engine_next_time(e), SIM_FOREVER);
    engine_cancel(e, ib);
    engine_cancel(e, ic);
    /* Negative delay: now. A time in the past: now. */
    engine_after(e, -77, tev_handler, &d);
    assert_int_equal(engine_next_time(e), 1000);
    engine_step(e);
    engine_schedule(e, -5, tev_handler, &d);
    assert_int_equal(engine_next_time(e), 1000);
    engine_step(e);
    assert_int_equal(engine_now(e), 1000);
    /* A saturated event is beyond the horizon: it never runs and the clock
     * never reaches SIM_FOREVER (it used to run there, and a periodic event
     * then ran forever at that one instant). */
    engine_after(e, INT64_MAX - 1, tev_handler, &b);
    assert_int_equal(engine_run(e, SIM_FOREVER), 0);
    assert_int_equal(engine_now(e), 1000);
    assert_int_equal(engine_pending(e), 1);
    assert_int_equal(engine_step(e), 0);
    engine_free(e);
}

/* A handler that reschedules itself after a fixed delay: a periodic tick. */
static uint64_t ticks;
static sim_time tick_delay;
static void tick_handler(engine *e, void *arg) {
    ticks++;
    engine_after(e, tick_delay, tick_handler, arg);
}

/* Near INT64_MAX: scheduling is refused to run (the event stays pending past
 * the horizon), the clock stops at the horizon at most and never wraps, and
 * a periodic event whose next time saturates cannot run forever at one
 * instant. */
static void test_horizon(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev a = { .tr = &tr, .tag = 1 }, b = { .tr = &tr, .tag = 2 };
    assert_true(engine_schedule(e, INT64_MAX, tev_handler, &a) != 0);
    assert_true(engine_schedule(e, SIM_HORIZON + 1, tev_handler, &b) != 0);
    assert_int_equal(engine_run(e, SIM_FOREVER), 0);
    assert_int_equal(engine_now(e), 0);
    assert_int_equal(engine_step(e), 0);
    assert_int_equal(engine_pending(e), 2);
    engine_free(e);

    /* An event exactly at the horizon runs; the clock stops there. */
    e = engine_new();
    tr.n = 0;
    engine_schedule(e, SIM_HORIZON, tev_handler, &a);
    assert_int_equal(engine_run(e, INT64_MAX), 1);
    assert_int_equal(engine_now(e), SIM_HORIZON);
    assert_true(engine_now(e) >= 0);
    /* A run "until" past the horizon ends at the last event, not beyond. */
    engine_schedule(e, INT64_MAX - 1, tev_handler, &b);
    assert_int_equal(engine_run(e, INT64_MAX - 1), 0);
    assert_int_equal(engine_now(e), SIM_HORIZON);
    engine_free(e);

    /* A tick of a huge period: runs once, then its next time saturates
     * and the run ends instead of spinning at SIM_FOREVER. */
    e = engine_new();
    ticks = 0;
    tick_delay = INT64_MAX / 2;
    engine_schedule(e, SIM_HORIZON - 10, tick_handler, NULL);
    assert_int_equal(engine_run(e, SIM_FOREVER), 1);
    assert_int_equal(ticks, 1);
    assert_int_equal(engine_now(e), SIM_HORIZON - 10);
    engine_free(e);
}

/* The checked conversion refuses what no clock value can hold. */
static void test_ns_from_s(void **state) {
    (void)state;
    sim_time t = 42;
    assert_int_equal(sim_ns_from_s(1.5, &t), 0);
    assert_int_equal(t, 1500000000);
    assert_int_equal(sim_ns_from_s(0, &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(sim_ns_from_s(SIM_HORIZON_S, &t), 0);
    assert_int_equal(t, SIM_HORIZON);
    t = 42;
    assert_int_equal(sim_ns_from_s(1e30, &t), -1);
    assert_int_equal(sim_ns_from_s(SIM_HORIZON_S * 1.000001, &t), -1);
    assert_int_equal(sim_ns_from_s(-1e-9, &t), -1);
    assert_int_equal(sim_ns_from_s(NAN, &t), -1);
    assert_int_equal(sim_ns_from_s(INFINITY, &t), -1);
    assert_int_equal(t, 42);
    /* The total conversion: never undefined, never a time beyond the horizon
     * that could run. */
    assert_int_equal(sim_from_s(NAN), SIM_FOREVER);
    assert_int_equal(sim_from_s(1e300), SIM_FOREVER);
    assert_int_equal(sim_from_s(-1e300), 0);
    assert_int_equal(sim_period_from_s(1e-20), 1);
    /* Two times within the horizon add without overflow. */
    assert_true(SIM_HORIZON <= INT64_MAX / 2);
}

/* Ties across the renumbering of the sequence counter stay FIFO. */
static void test_seq_renumber(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev ev[60];
    engine_debug_set_seq(e, engine_debug_seq_limit() - 20);
    for (int i = 0; i < 60; i++) {
        ev[i] = (tev){ .tr = &tr, .tag = i };
        event_id id = engine_schedule(e, 100 - (i % 3), tev_handler, &ev[i]);
        assert_true(id != 0);
        if (i % 7 == 3)
            assert_int_equal(engine_cancel(e, id), 1);
    }
    engine_run(e, SIM_FOREVER);
    int k = 0;
    for (int r = 2; r >= 0; r--)
        for (int i = 0; i < 60; i++)
            if (i % 3 == r && i % 7 != 3) {
                assert_int_equal(tr.tags[k], i);
                assert_int_equal(tr.times[k], 100 - r);
                k++;
            }
    assert_int_equal(k, tr.n);
    engine_free(e);
}

/* The renumbering merges the lane (events scheduled in time order) with
 * the heap: a tie between them keeps its order across it. */
static void test_seq_renumber_lane(void **state) {
    (void)state;
    engine *e = engine_new();
    trace tr = { 0 };
    tev ev[4];
    static const sim_time at[4] = { 100, 200, 100, 100 };  /* lane, lane, heap, after renumbering */
    engine_debug_set_seq(e, engine_debug_seq_limit() - 3);
    for (int i = 0; i < 4; i++) {
        ev[i] = (tev){ .tr = &tr, .tag = i };
        assert_true(engine_schedule(e, at[i], tev_handler, &ev[i]) != 0);
    }
    engine_run(e, SIM_FOREVER);
    static const int want[4] = { 0, 2, 3, 1 };
    assert_int_equal(tr.n, 4);
    for (int k = 0; k < 4; k++) assert_int_equal(tr.tags[k], want[k]);
    engine_free(e);
}

/* engine_reserve changes nothing but the room: the same events in the
 * same order from an engine that reserved and one that did not. */
static void test_reserve(void **state) {
    (void)state;
    trace tr[2];
    memset(tr, 0, sizeof tr);
    tev ev[2][48];
    for (int k = 0; k < 2; k++) {
        engine *e = engine_new();
        if (k == 1) assert_int_equal(engine_reserve(e, 40), 0);
        for (int i = 0; i < 48; i++) {
            ev[k][i] = (tev){ .tr = &tr[k], .tag = i };
            sim_time t = i % 4 == 3 ? 5 * (sim_time)i - 7 : 5 * (sim_time)i;   /* mostly in order */
            assert_true(engine_schedule(e, t, tev_handler, &ev[k][i]) != 0);
        }
        engine_run(e, SIM_FOREVER);
        engine_free(e);
    }
    assert_int_equal(tr[0].n, 48);
    assert_int_equal(tr[1].n, 48);
    assert_memory_equal(tr[0].tags, tr[1].tags, sizeof tr[0].tags);
    assert_memory_equal(tr[0].times, tr[1].times, sizeof tr[0].times);
}

/* Many cancels: the compaction keeps everything straight. */
static void count_handler(engine *e, void *arg) {
    (void)e;
    (*(int *)arg)++;
}

static void test_mass_cancel(void **state) {
    (void)state;
    engine *e = engine_new();
    enum { N = 100000 };
    event_id *ids = malloc(N * sizeof *ids);
    int count = 0;
    for (int i = 0; i < N; i++)
        ids[i] = engine_schedule(e, (sim_time)(i * 7919 % 1000), count_handler, &count);
    for (int i = 0; i < N; i++)
        if (i % 10 != 0)
            assert_int_equal(engine_cancel(e, ids[i]), 1);
    assert_int_equal(engine_pending(e), N / 10);
    assert_int_equal(engine_run(e, SIM_FOREVER), N / 10);
    assert_int_equal(count, N / 10);
    for (int i = 0; i < N; i++)
        assert_int_equal(engine_cancel(e, ids[i]), 0);
    free(ids);
    engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_fifo_ties),
        cmocka_unit_test(test_cancel_ids),
        cmocka_unit_test(test_cancel_in_handler),
        cmocka_unit_test(test_schedule_now_from_handler),
        cmocka_unit_test(test_run_until),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_after_saturation),
        cmocka_unit_test(test_horizon),
        cmocka_unit_test(test_ns_from_s),
        cmocka_unit_test(test_seq_renumber),
        cmocka_unit_test(test_seq_renumber_lane),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_mass_cancel),
        cmocka_unit_test(test_script_against_reference),
        cmocka_unit_test(test_lane_against_reference),
        cmocka_unit_test(test_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
