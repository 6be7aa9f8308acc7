/*
 * test_override: scenario overrides by path (scenarios/override.c).
 *
 * What a sweep relies on: a path sets exactly the attributes it names and
 * no others (the edited text differs from the original only there, and
 * line numbers stay put); predicates pick among siblings; an absent
 * attribute is added; a value of the wrong kind fails in the loader with the
 * path named; a path matching nothing fails with the closest existing paths;
 * expressions read other attributes; value lists and ranges expand to the
 * values a person would write by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/override.h"
#include "scenarios/scenario.h"

static const char xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<!-- a comment with <fake attr=\"1\"> inside -->\n"
    "<scenario name=\"t\" seed=\"7\">\n"
    "  <cluster>\n"
    "    <nodes type=\"dgx-h100\" count=\"16\"/>\n"
    "    <storage name=\"ckpt\" kind=\"parallel-fs\"\n"
    "             bandwidth=\"100GB/s\"/>\n"
    "    <spares/>\n"
    "  </cluster>\n"
    "  <workload>\n"
    "    <training name=\"a\" tp=\"8\" dp=\"2\" steps=\"100\" storage=\"ckpt\">\n"
    "      <model preset=\"llama3-8b\"/>\n"
    "      <checkpoint interval=\"1h\" mode=\"async\"/>\n"
    "    </training>\n"
    "    <training name=\"b\" tp=\"8\" dp=\"1\" steps='50' storage=\"ckpt\">\n"
    "      <model preset=\"llama3-8b\"/>\n"
    "      <checkpoint interval=\"2h\"/>\n"
    "    </training>\n"
    "  </workload>\n"
    "</scenario>\n";

static scenario *load_with(const char *path, const char *value, char *err, size_t errlen) {
    override ov = { path, value };
    scenario *s = NULL;
    if (override_load(xml, strlen(xml), "t.xml", &ov, 1, &s, NULL, err, errlen) < 0) return NULL;
    return s;
}

static void test_sets_the_named_attribute(void **state) {
    (void)state;
    char err[2048];
    scenario *s = load_with("cluster/nodes/@count", "32", err, sizeof err);
    assert_non_null(s);
    assert_int_equal(s->nodes[0].count, 32);
    scenario_free(s);
    /* a leading /scenario/ is accepted */
    s = load_with("/scenario/cluster/nodes/@count", "8", err, sizeof err);
    assert_non_null(s);
    assert_int_equal(s->nodes[0].count, 8);
    scenario_free(s);
    /* the root's own attribute */
    s = load_with("@seed", "99", err, sizeof err);
    assert_non_null(s);
    assert_int_equal((int)s->seed, 99);
    scenario_free(s);
}

static void test_predicates_pick_one(void **state) {
    (void)state;
    char err[2048];
    scenario *s = load_with("workload/training[@name=\"b\"]/checkpoint/@interval", "30min", err, sizeof err);
    assert_non_null(s);
    assert_true(s->training[0].checkpoint.interval_s == 3600);
    assert_true(s->training[1].checkpoint.interval_s == 1800);
    scenario_free(s);
    s = load_with("workload/training[1]/checkpoint/@interval", "4h", err, sizeof err);
    assert_non_null(s);
    assert_true(s->training[0].checkpoint.interval_s == 4 * 3600);
    assert_true(s->training[1].checkpoint.interval_s == 7200);
    scenario_free(s);
    /* no predicate: both */
    s = load_with("workload/training/checkpoint/@interval", "3h", err, sizeof err);
    assert_non_null(s);
    assert_true(s->training[0].checkpoint.interval_s == 3 * 3600);
    assert_true(s->training[1].checkpoint.interval_s == 3 * 3600);
    scenario_free(s);
    /* single quotes in the file are kept: steps='50' */
    s = load_with("workload/training[@name='b']/@steps", "60", err, sizeof err);
    assert_non_null(s);
    assert_int_equal((int)s->training[1].steps, 60);
    scenario_free(s);
}

static void test_text_edit_is_minimal(void **state) {
    (void)state;
    char err[1024], *out = NULL;
    size_t n = 0;
    override ov[2] = { { "cluster/storage/@bandwidth", "2TB/s" }, { "cluster/spares/@warm", "4" } };
    assert_int_equal(override_apply(xml, strlen(xml), "t.xml", ov, 2, &out, &n, err, sizeof err), 0);
    assert_int_equal(strlen(out), n);
    assert_non_null(strstr(out, "             bandwidth=\"2TB/s\"/>\n"));
    assert_non_null(strstr(out, "<spares warm=\"4\"/>"));
    assert_non_null(strstr(out, "<fake attr=\"1\">"));       /* the comment is untouched */
    int lines_a = 0, lines_b = 0;
    for (const char *p = xml; *p; p++) lines_a += *p == '\n';
    for (const char *p = out; *p; p++) lines_b += *p == '\n';
    assert_int_equal(lines_a, lines_b);
    /* undo the two edits by hand: the rest is byte for byte the original */
    out = realloc(out, n + 16);
    assert_non_null(out);
    char *b = strstr(out, "2TB/s");
    memmove(b + 7, b + 5, strlen(b + 5) + 1);
    memcpy(b, "100GB/s", 7);
    char *w = strstr(out, " warm=\"4\"");
    memmove(w, w + 9, strlen(w + 9) + 1);
    assert_string_equal(out, xml);
    free(out);
}

static void test_wrong_kind_names_the_path(void **state) {
    (void)state;
    char err[2048];
    assert_null(load_with("cluster/nodes/@count", "4h", err, sizeof err));
    assert_non_null(strstr(err, "cluster/nodes/@count=4h: t.xml:5: <nodes count=\"4h\">"));
    assert_null(load_with("workload/training[@name=\"a\"]/checkpoint/@interval", "64GB", err, sizeof err));
    assert_non_null(strstr(err, "t.xml:13: <checkpoint interval=\"64GB\">"));
    assert_non_null(strstr(err, "a size unit"));
}

static void test_no_match_suggests(void **state) {
    (void)state;
    char err[2048];
    assert_null(load_with("cluster/node/@count", "4", err, sizeof err));
    assert_non_null(strstr(err, "cluster/node/@count: matches nothing in t.xml; closest paths: cluster/nodes/@count"));
    assert_null(load_with("workload/training[@name=\"c\"]/checkpoint/@interval", "1h", err, sizeof err));
    assert_non_null(strstr(err, "matches nothing"));
    assert_non_null(strstr(err, "workload/training[@name=\"a\"]/checkpoint/@interval"));
    assert_null(load_with("cluster/nodes[3]/@count", "4", err, sizeof err));
    assert_non_null(strstr(err, "matches nothing"));
    assert_null(load_with("cluster/nodes/count", "4", err, sizeof err));
    assert_non_null(strstr(err, "expected"));
    char buf[512];
    assert_int_equal(override_closest(xml, strlen(xml), "clustr/spares/@warm", 2, buf, sizeof buf), 2);
    /* an unknown attribute on an existing element is refused by the loader */
    assert_null(load_with("cluster/nodes/@cout", "4", err, sizeof err));
    assert_non_null(strstr(err, "unknown attribute 'cout'"));
    assert_non_null(strstr(err, "cluster/nodes/@cout is not in t.xml; closest paths: cluster/nodes/@count"));
}

static void test_expressions(void **state) {
    (void)state;
    char err[2048];
    override ov[2] = { { "cluster/nodes/@count", "32" },
                       { "workload/training[@name=\"a\"]/@dp", "{cluster/nodes/@count} * 8 / 8 / 2 - 2*(1+1)" } };
    scenario *s = NULL;
    assert_int_equal(override_load(xml, strlen(xml), "t.xml", ov, 2, &s, NULL, err, sizeof err), 0);
    assert_int_equal(s->training[0].plan.dp, 12);
    scenario_free(s);
    /* an expression reads an earlier expression's value */
    override chain[3] = { { "cluster/spares/@warm", "2" },
                          { "workload/training[@name=\"a\"]/@dp", "{cluster/spares/@warm}*3" },
                          { "cluster/nodes/@count", "{workload/training[@name=\"a\"]/@dp}+{cluster/spares/@warm}" } };
    assert_int_equal(override_load(xml, strlen(xml), "t.xml", chain, 3, &s, NULL, err, sizeof err), 0);
    assert_int_equal(s->training[0].plan.dp, 6);
    assert_int_equal(s->nodes[0].count, 8);
    assert_int_equal(s->spares_warm, 2);
    scenario_free(s);
    override bad = { "cluster/nodes/@count", "{cluster/nope/@x}*2" };
    assert_int_equal(override_load(xml, strlen(xml), "t.xml", &bad, 1, &s, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "{cluster/nope/@x}"));
    override units = { "workload/training[@name=\"a\"]/checkpoint/@interval", "{workload/training[@name=\"b\"]/checkpoint/@interval} + 30min" };
    assert_int_equal(override_load(xml, strlen(xml), "t.xml", &units, 1, &s, NULL, err, sizeof err), 0);
    assert_true(s->training[0].checkpoint.interval_s == 9000);
    scenario_free(s);
}

/* Nesting is bounded: 30,000 '(' overflowed the stack (exit 139), as
 * did as many unary minus signs; 64 levels still work. */
static void test_deep_nesting_is_an_error(void **state) {
    (void)state;
    char err[2048];
    scenario *s = NULL;
    for (int sign = 0; sign < 2; sign++) {
        size_t n = 30000;
        char *v = malloc(2 * n + 64);
        assert_non_null(v);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) v[k++] = sign ? '-' : '(';
        k += (size_t)sprintf(v + k, "{cluster/nodes/@count}");
        for (size_t i = 0; !sign && i < n; i++) v[k++] = ')';
        v[k] = 0;
        override deep = { "cluster/nodes/@count", v };
        assert_int_equal(override_load(xml, strlen(xml), "t.xml", &deep, 1, &s, NULL, err, sizeof err), -1);
        assert_null(s);
        assert_non_null(strstr(err, "nested more than 64 deep"));
        assert_non_null(strstr(err, "cluster/nodes/@count="));
        free(v);
    }
    char ok[256] = "";
    for (int i = 0; i < 63; i++) strcat(ok, "(");
    strcat(ok, "{cluster/nodes/@count}");
    for (int i = 0; i < 63; i++) strcat(ok, ")");
    override fine = { "cluster/nodes/@count", ok };
    assert_int_equal(override_load(xml, strlen(xml), "t.xml", &fine, 1, &s, NULL, err, sizeof err), 0);
    assert_int_equal(s->nodes[0].count, 16);
    scenario_free(s);
}

static void expect_values(const char *spec, int int_range, const char *joined) {
    char **v = NULL, err[256], buf[1024] = "";
    int n = override_values(spec, int_range, &v, err, sizeof err);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        strcat(buf, i ? "|" : "");
        strcat(buf, v[i]);
    }
    assert_string_equal(buf, joined);
    override_values_free(v, n);
}

static void test_values(void **state) {
    (void)state;
    expect_values("64,128,256", 0, "64|128|256");
    expect_values("nfs, parallel-fs ,object", 0, "nfs|parallel-fs|object");
    expect_values("30min..4h*2", 0, "30min|60min|120min|240min");
    expect_values("256..1024+256", 0, "256|512|768|1024");
    expect_values("1.5TB/s..3TB/s+0.5TB/s", 0, "1.5TB/s|2TB/s|2.5TB/s|3TB/s");
    expect_values("4..7", 1, "4|5|6|7");
    expect_values("1k..4k*2", 0, "1k|2k|4k");
    char **v = NULL, err[256];
    assert_int_equal(override_values("4..7", 0, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "give the range a step"));
    assert_int_equal(override_values("8..4*2", 0, &v, err, sizeof err), -1);
    assert_int_equal(override_values("1,,2", 0, &v, err, sizeof err), -1);
    assert_int_equal(override_values("1h..2h*1", 0, &v, err, sizeof err), -1);
    assert_int_equal(override_values("a..b+1", 0, &v, err, sizeof err), -1);
}

static void test_split(void **state) {
    (void)state;
    char buf[256];
    const char *p, *v;
    assert_int_equal(override_split("workload/training[@name=\"x=y\"]/@dp={a/@b}=3", buf, sizeof buf, &p, &v), 0);
    assert_string_equal(p, "workload/training[@name=\"x=y\"]/@dp");
    assert_string_equal(v, "{a/@b}=3");
    assert_int_equal(override_split("no-equals", buf, sizeof buf, &p, &v), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sets_the_named_attribute),
        cmocka_unit_test(test_predicates_pick_one),
        cmocka_unit_test(test_text_edit_is_minimal),
        cmocka_unit_test(test_wrong_kind_names_the_path),
        cmocka_unit_test(test_no_match_suggests),
        cmocka_unit_test(test_expressions),
        cmocka_unit_test(test_deep_nesting_is_an_error),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
