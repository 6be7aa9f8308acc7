/*
 * test_metrics: the metric bus. Names are interned (same pair, same id;
 * names stay valid as the bus grows), every sink gets every sample, event and
 * close in publishing order, a sink subscribed late is told of the metrics
 * registered before it, and NULL callbacks are skipped.
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
    return (metric_sink){ r, on_register, on_sample, on_event, on_close };
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
    /* Late sink: told of u and p first, then sees what follows. */
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
    assert_int_equal(metrics_subscribe(b, &late), 0);  /* no on_register */
    metrics_sample(b, id, 2, 3);
    metrics_close(b, 5);
    r.buf[r.n] = '\0';
    assert_string_equal(r.buf, "sample 0 2 3\nclose 5\n");
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
