/*
 * test_metrics: the metric bus. Names are interned (same pair, same id;
 * names stay valid as the bus grows), every sink gets every sample, event and
 * close in publishing order, a sink subscribed late is told of the metrics
 * registered before it and of each one's last sample (the value it holds
 * now), and NULL callbacks are skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sim/metrics.h"

/* A sink that writes one text line per callback into a buffer. */
typedef struct rec {
    char buf[8192];
    size_t n;
} rec;

static void rec_line(rec *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(r->buf + r->n, sizeof r->buf - r->n, fmt, ap);
    va_end(ap);
    assert_true(k >= 0 && (size_t)k < sizeof r->buf - r->n);
    r->n += (size_t)k;
}

static void on_register(void *ctx, metric_id id, const char *entity, const char *name) {
    rec_line(ctx, "reg %d %s %s\n", id, entity, name);
}
static void on_sample(void *ctx, metric_id id, sim_time t, double value) {
    rec_line(ctx, "sample %d %lld %g\n", id, (long long)t, value);
}
static void on_event(void *ctx, sim_time t, const char *entity, const char *kind,
                     const char *detail) {
    rec_line(ctx, "event %lld %s %s %s\n", (long long)t, entity, kind, detail ? detail : "-");
}
static void on_close(void *ctx, sim_time t) {
    rec_line(ctx, "close %lld\n", (long long)t);
}

static metric_sink rec_sink(rec *r) {
    return (metric_sink){ r, on_register, on_sample, on_event, on_close, NULL };
}

static void on_eventv(void *ctx, sim_time t, const char *entity, const char *kind, const char *fmt, va_list ap) {
    char d[METRICS_DETAIL_MAX];
    vsnprintf(d, sizeof d, fmt, ap);
    rec_line(ctx, "eventv %lld %s %s [%s] %s\n", (long long)t, entity, kind, fmt, d);
}

static void publish(metric_bus *b, sim_time t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    metrics_eventv(b, t, "job1", "job_end", fmt, ap);
    va_end(ap);
}

static void test_register_intern(void **state) {
    (void)state;
    metric_bus *b = metrics_new();
    assert_non_null(b);
    assert_int_equal(metrics_count(b), 0);
    metric_id a = metrics_register(b, "gpu0", "util");
    metric_id c = metrics_register(b, "gpu0", "power_w");
    metric_id d = metrics_register(b, "gpu1", "util");
    assert_int_equal(a, 0);
    assert_int_equal(c, 1);
    assert_int_equal(d, 2);
    assert_int_equal(metrics_register(b, "gpu0", "util"), a);
    assert_int_equal(metrics_register(b, "gpu1", "util"), d);
    /* The split between entity and name matters. */
    metric_id e1 = metrics_register(b, "ab", "c");
    metric_id e2 = metrics_register(b, "a", "bc");
    assert_true(e1 != e2);
    assert_int_equal(metrics_count(b), 5);

    /* Names stay valid (same pointers) while the bus grows. */
    const char *ent = metrics_entity(b, a), *nam = metrics_name(b, a);
    assert_string_equal(ent, "gpu0");
    assert_string_equal(nam, "util");
    char zent[32], znam[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(zent, sizeof zent, "node%d", i / 10);
        snprintf(znam, sizeof znam, "m%d", i % 10);
        assert_int_equal(metrics_register(b, zent, znam), 5 + i);
    }
    assert_int_equal(metrics_count(b), 5005);
    assert_ptr_equal(metrics_entity(b, a), ent);
    assert_ptr_equal(metrics_name(b, a), nam);
    for (int i = 0; i < 5000; i += 7) {
        snprintf(zent, sizeof zent, "node%d", i / 10);
        snprintf(znam, sizeof znam, "m%d", i % 10);
        assert_int_equal(metrics_register(b, zent, znam), 5 + i);
        assert_string_equal(metrics_entity(b, 5 + i), zent);
        assert_string_equal(metrics_name(b, 5 + i), znam);
    }
    assert_null(metrics_entity(b, -1));
    assert_null(metrics_name(b, 5005));
    metrics_free(b);
    metrics_free(NULL);
}

static void test_sinks(void **state) {
    (void)state;
    metric_bus *b = metrics_new();
    rec r1 = { .n = 0 }, r2 = { .n = 0 };
    metric_sink s1 = rec_sink(&r1);
    assert_int_equal(metrics_subscribe(b, &s1), 0);
    metric_id u = metrics_register(b, "gpu0", "util");
    metric_id p = metrics_register(b, "gpu0", "power_w");
    metrics_sample(b, u, 10, 0.5);
    metrics_event(b, 15, "job7", "failure", "xid 79");
    /* Late sink: told of u (with its last sample) and p first, then sees
     * what follows. */
    metric_sink s2 = rec_sink(&r2);
    assert_int_equal(metrics_subscribe(b, &s2), 0);
    metrics_sample(b, p, 20, 350);
    metrics_sample(b, -1, 20, 1);           /* failed registration: dropped */
    metrics_event(b, 25, "job7", "restart", NULL);
    metrics_close(b, 30);
    r1.buf[r1.n] = r2.buf[r2.n] = '\0';
    assert_string_equal(r1.buf,
                        "reg 0 gpu0 util\n"
                        "reg 1 gpu0 power_w\n"
                        "sample 0 10 0.5\n"
                        "event 15 job7 failure xid 79\n"
                        "sample 1 20 350\n"
                        "event 25 job7 restart -\n"
                        "close 30\n");
    assert_string_equal(r2.buf,
                        "reg 0 gpu0 util\n"
                        "sample 0 10 0.5\n"
                        "reg 1 gpu0 power_w\n"
                        "sample 1 20 350\n"
                        "event 25 job7 restart -\n"
                        "close 30\n");
    metrics_free(b);
}

static void test_null_callbacks(void **state) {
    (void)state;
    metric_bus *b = metrics_new();
    rec r = { .n = 0 };
    metric_sink none = { 0 };
    metric_sink only_close = { .ctx = &r, .on_close = on_close };
    assert_int_equal(metrics_subscribe(b, &none), 0);
    assert_int_equal(metrics_subscribe(b, &only_close), 0);
    metric_id id = metrics_register(b, "x", "y");
    metrics_sample(b, id, 1, 2);
    metrics_event(b, 1, "x", "k", "d");
    metric_sink late = { .ctx = &r, .on_sample = on_sample };
    assert_int_equal(metrics_subscribe(b, &late), 0);  /* no on_register: the last sample */
    metrics_sample(b, id, 2, 3);
    metrics_close(b, 5);
    r.buf[r.n] = '\0';
    assert_string_equal(r.buf, "sample 0 1 2\nsample 0 2 3\nclose 5\n");
    metrics_free(b);
}

/* metrics_eventv: a sink with on_eventv gets the format and its arguments,
 * one without gets the text, made once and cut to METRICS_DETAIL_MAX - 1
 * bytes; the opening is kept as text and replayed through on_event. */
static void test_eventv(void **state) {
    (void)state;
    metric_bus *b = metrics_new();
    publish(b, 0, "%d GPUs", 8);
    rec t = { .n = 0 }, v = { .n = 0 };
    metric_sink text = rec_sink(&t), args = { .ctx = &v, .on_eventv = on_eventv };
    assert_int_equal(metrics_subscribe(b, &text), 0);
    assert_int_equal(metrics_subscribe(b, &args), 0);
    publish(b, 5, "%s after %.0f s", "done", 3599.6);
    char big[400], cut[METRICS_DETAIL_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    memcpy(cut, big, sizeof cut - 1);          /* what vsnprintf keeps */
    cut[sizeof cut - 1] = 0;
    publish(b, 6, "%s", big);
    assert_true(metrics_wants_events(b));
    char want_t[1024], want_v[1024];
    snprintf(want_t, sizeof want_t, "event 0 job1 job_end 8 GPUs\nevent 5 job1 job_end done after 3600 s\n"
                                    "event 6 job1 job_end %s\n", cut);
    snprintf(want_v, sizeof want_v, "eventv 5 job1 job_end [%%s after %%.0f s] done after 3600 s\n"
                                    "eventv 6 job1 job_end [%%s] %s\n", cut);
    t.buf[t.n] = v.buf[v.n] = '\0';
    assert_string_equal(t.buf, want_t);
    assert_string_equal(v.buf, want_v);
    metric_bus *only = metrics_new();
    publish(only, 1, "%s", "drops the opening");
    assert_false(metrics_wants_events(only));
    assert_int_equal(metrics_subscribe(only, &args), 0);
    assert_true(metrics_wants_events(only));
    metrics_free(only);
    metrics_free(b);
}

/* The world takes its initial state while it is built, before the results
 * store subscribes (cli/outputs.c): 8 GPUs serving from time 0, published
 * once. A sink subscribed afterwards is told the value each metric holds
 * now, its last sample only (not the history), right after its
 * on_register; a metric never sampled gets none. */
static void test_late_subscriber_last_value(void **state) {
    (void)state;
    metric_bus *b = metrics_new();
    metric_id serving = metrics_register(b, "cluster", "gpus_serving");
    metric_id training = metrics_register(b, "cluster", "gpus_training");
    metrics_sample(b, serving, 0, 4);
    metrics_sample(b, serving, 0, 8);
    rec r = { .n = 0 };
    metric_sink s = rec_sink(&r);
    assert_int_equal(metrics_subscribe(b, &s), 0);
    metric_id later = metrics_register(b, "cluster", "queue_length");
    metrics_sample(b, training, 5, 16);
    metrics_sample(b, -1, 6, 1);                 /* dropped, remembers nothing */
    /* A second late sink sees the latest values, a later one each. */
    rec r2 = { .n = 0 };
    metric_sink s2 = rec_sink(&r2);
    assert_int_equal(metrics_subscribe(b, &s2), 0);
    /* Without on_register, the samples alone. */
    rec r3 = { .n = 0 };
    metric_sink s3 = { .ctx = &r3, .on_sample = on_sample };
    assert_int_equal(metrics_subscribe(b, &s3), 0);
    r.buf[r.n] = r2.buf[r2.n] = r3.buf[r3.n] = '\0';
    assert_string_equal(r.buf,
                        "reg 0 cluster gpus_serving\n"
                        "sample 0 0 8\n"
                        "reg 1 cluster gpus_training\n"
                        "reg 2 cluster queue_length\n"
                        "sample 1 5 16\n");
    assert_string_equal(r2.buf,
                        "reg 0 cluster gpus_serving\n"
                        "sample 0 0 8\n"
                        "reg 1 cluster gpus_training\n"
                        "sample 1 5 16\n"
                        "reg 2 cluster queue_length\n");
    assert_string_equal(r3.buf, "sample 0 0 8\nsample 1 5 16\n");
    (void)later;
    metrics_free(b);
}

/* Counts events "job N" and how many came out of order. */
typedef struct counter {
    int n, bad;
} counter;

static void count_event(void *ctx, sim_time t, const char *entity, const char *kind, const char *detail) {
    counter *c = ctx;
    char want[32];
    snprintf(want, sizeof want, "job %d", c->n++);
    if (t != 0 || strcmp(entity, "cluster") || strcmp(kind, "job_start") || strcmp(detail, want)) c->bad++;
}

/* The events of time 0 (a service starts while the world is built) reach a
 * sink that subscribes before the clock moves, after the metrics; once
 * anything later than time 0 is published the bus keeps none, and a sink
 * subscribed then gets no history. Each sink sees each event once. */
static void test_late_subscriber_opening_events(void **state) {
    (void)state;
    metric_bus *b = metrics_new();
    metric_id reps = metrics_register(b, "chat", "replicas");
    metrics_event(b, 0, "chat", "service_start", "4 replicas of 2 GPUs: llama3-70b");
    metrics_sample(b, reps, 0, 4);
    metrics_event(b, 0, "chat", "replica_ready", NULL);
    rec r1 = { .n = 0 };
    metric_sink s1 = rec_sink(&r1);
    assert_int_equal(metrics_subscribe(b, &s1), 0);
    metrics_event(b, 0, "chat", "note", "at 0, after s1");
    rec r2 = { .n = 0 };
    metric_sink s2 = rec_sink(&r2);
    assert_int_equal(metrics_subscribe(b, &s2), 0);
    metrics_event(b, 7, "chat", "scale_down", "4 -> 3 replicas");
    rec r3 = { .n = 0 };
    metric_sink s3 = rec_sink(&r3);
    assert_int_equal(metrics_subscribe(b, &s3), 0);
    r1.buf[r1.n] = r2.buf[r2.n] = r3.buf[r3.n] = '\0';
    assert_string_equal(r1.buf,
                        "reg 0 chat replicas\n"
                        "sample 0 0 4\n"
                        "event 0 chat service_start 4 replicas of 2 GPUs: llama3-70b\n"
                        "event 0 chat replica_ready -\n"
                        "event 0 chat note at 0, after s1\n"
                        "event 7 chat scale_down 4 -> 3 replicas\n");
    assert_string_equal(r2.buf,
                        "reg 0 chat replicas\n"
                        "sample 0 0 4\n"
                        "event 0 chat service_start 4 replicas of 2 GPUs: llama3-70b\n"
                        "event 0 chat replica_ready -\n"
                        "event 0 chat note at 0, after s1\n"
                        "event 7 chat scale_down 4 -> 3 replicas\n");
    assert_string_equal(r3.buf, "reg 0 chat replicas\nsample 0 0 4\n");
    metrics_free(b);

    /* A sample later than 0 also ends the opening. */
    b = metrics_new();
    reps = metrics_register(b, "chat", "replicas");
    metrics_event(b, 0, "chat", "service_start", "x");
    metrics_sample(b, reps, 3, 1);
    rec r4 = { .n = 0 };
    metric_sink s4 = rec_sink(&r4);
    assert_int_equal(metrics_subscribe(b, &s4), 0);
    r4.buf[r4.n] = '\0';
    assert_string_equal(r4.buf, "reg 0 chat replicas\nsample 0 3 1\n");
    metrics_free(b);

    /* Thousands at time 0 (the arrays grow): all kept, in order. */
    b = metrics_new();
    char detail[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(detail, sizeof detail, "job %d", i);
        metrics_event(b, 0, "cluster", "job_start", detail);
    }
    counter c = { 0 };
    metric_sink s5 = { .ctx = &c, .on_event = count_event };
    assert_int_equal(metrics_subscribe(b, &s5), 0);
    assert_int_equal(c.n, 3000);
    assert_int_equal(c.bad, 0);
    metrics_free(b);
}

/* A sink whose on_register registers another metric: each sink is told of
 * each metric exactly once. */
typedef struct chain {
    metric_bus *b;
    rec r;
} chain;

static void chain_register(void *ctx, metric_id id, const char *entity, const char *name) {
    chain *c = ctx;
    rec_line(&c->r, "reg %d %s %s\n", id, entity, name);
    if (strcmp(name, "a") == 0)
        metrics_register(c->b, entity, "derived");
}

static void test_reentrant(void **state) {
    (void)state;
    metric_bus *b = metrics_new();
    metrics_register(b, "e", "a");
    chain c = { .b = b };
    metric_sink s = { .ctx = &c, .on_register = chain_register };
    assert_int_equal(metrics_subscribe(b, &s), 0);
    c.r.buf[c.r.n] = '\0';
    assert_string_equal(c.r.buf, "reg 0 e a\nreg 1 e derived\n");
    assert_int_equal(metrics_count(b), 2);
    metrics_free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_intern),
        cmocka_unit_test(test_sinks),
        cmocka_unit_test(test_null_callbacks),
        cmocka_unit_test(test_reentrant),
        cmocka_unit_test(test_late_subscriber_last_value),
        cmocka_unit_test(test_late_subscriber_opening_events),
        cmocka_unit_test(test_eventv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
