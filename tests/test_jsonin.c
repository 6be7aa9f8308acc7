/*
 * test_jsonin: the JSON reader (scenarios/jsonin.h) on RFC 8259's grammar:
 * every value type, nesting, escapes decoded to UTF-8 (surrogate pairs
 * included), the line each value starts on, and each refusal naming the
 * text and the line where it went wrong. Expected values are written out
 * by hand from RFC 8259 sections 2 to 8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenarios/jsonin.h"

static jsonin *parse(const char *text) {
    char err[256] = "";
    jsonin *d = jsonin_parse(text, strlen(text), "t.json", err, sizeof err);
    if (!d) fail_msg("%s", err);
    return d;
}

/* Parsing text fails with exactly this message. */
static void refused(const char *text, const char *want) {
    char err[256] = "";
    jsonin *d = jsonin_parse(text, strlen(text), "t.json", err, sizeof err);
    assert_null(d);
    assert_string_equal(err, want);
}

static void test_values(void **state) {
    (void)state;
    jsonin *d = parse("{\"a\": 1, \"b\": [true, false, null, -2.5e3, \"x\"], \"c\": {}, \"d\": []}");
    const jv *r = jsonin_root(d);
    assert_int_equal(jv_kind(r), JV_OBJ);
    assert_int_equal(jv_len(r), 4);
    assert_string_equal(jv_key(r, 2), "c");
    assert_true(jv_num(jv_get(r, "a"), 0) == 1);
    const jv *b = jv_get(r, "b");
    assert_int_equal(jv_len(b), 5);
    assert_true(jv_is_true(jv_at(b, 0)));
    assert_int_equal(jv_kind(jv_at(b, 1)), JV_FALSE);
    assert_int_equal(jv_kind(jv_at(b, 2)), JV_NULL);
    assert_true(jv_num(jv_at(b, 3), 0) == -2500);
    assert_string_equal(jv_str(jv_at(b, 4), "?"), "x");
    assert_null(jv_at(b, 5));
    assert_int_equal(jv_len(jv_get(r, "c")), 0);
    assert_int_equal(jv_kind(jv_get(r, "d")), JV_ARR);
    /* absent values answer as absent, of any query */
    assert_null(jv_get(r, "zz"));
    assert_null(jv_get(b, "a"));
    assert_true(jv_num(jv_get(r, "zz"), 7) == 7);
    assert_string_equal(jv_str(jv_get(r, "a"), "no"), "no");
    assert_int_equal(jv_len(NULL), 0);
    jsonin_free(d);
}

static void test_scalars_at_top(void **state) {
    (void)state;
    jsonin *d = parse("  \"only\"\n");
    assert_string_equal(jv_str(jsonin_root(d), NULL), "only");
    jsonin_free(d);
    d = parse("0");
    assert_true(jv_num(jsonin_root(d), 1) == 0);
    jsonin_free(d);
}

static void test_escapes(void **state) {
    (void)state;
    /* \u00e9 is é (C3 A9), \u20ac is € (E2 82 AC), the pair \ud83d\ude00 is
     * U+1F600 (F0 9F 98 80); raw UTF-8 passes through. */
    jsonin *d = parse("[\"q\\\"b\\\\s\\/n\\nt\\t\", \"\\u00e9\\u20ac\\ud83d\\ude00\", \"caf\xc3\xa9\"]");
    const jv *r = jsonin_root(d);
    assert_string_equal(jv_str(jv_at(r, 0), NULL), "q\"b\\s/n\nt\t");
    assert_string_equal(jv_str(jv_at(r, 1), NULL), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    assert_string_equal(jv_str(jv_at(r, 2), NULL), "caf\xc3\xa9");
    jsonin_free(d);
}

static void test_lines_and_paths(void **state) {
    (void)state;
    jsonin *d = parse("{\n  \"meta\": {\"plugin\":\n    {\"name\": \"v0.0.38\"}},\n  \"jobs\": [\n    1,\n    2]\n}");
    const jv *r = jsonin_root(d);
    assert_int_equal(jv_line(r), 1);
    assert_string_equal(jv_str(jv_path(r, "meta", "plugin", "name", (const char *)NULL), NULL), "v0.0.38");
    assert_null(jv_path(r, "meta", "nope", "name", (const char *)NULL));
    assert_int_equal(jv_line(jv_path(r, "meta", "plugin", (const char *)NULL)), 3);
    assert_int_equal(jv_line(jv_at(jv_get(r, "jobs"), 1)), 6);
    assert_string_equal(jsonin_path(d), "t.json");
    jsonin_free(d);
}

static void test_duplicates_first(void **state) {
    (void)state;
    jsonin *d = parse("{\"a\": 1, \"a\": 2}");
    assert_true(jv_num(jv_get(jsonin_root(d), "a"), 0) == 1);
    assert_int_equal(jv_len(jsonin_root(d)), 2);
    jsonin_free(d);
}

static void test_refusals(void **state) {
    (void)state;
    refused("", "t.json:1: expected a JSON value; the text ends");
    refused("{\"a\": 1,}", "t.json:1: expected a member name in double quotes");
    refused("[1,\n2,\n]", "t.json:3: expected a JSON value");
    refused("{\"a\" 1}", "t.json:1: expected ':' after the member name \"a\"");
    refused("[1 2]", "t.json:1: expected ',' or ']'");
    refused("{\"a\": 1} x", "t.json:1: expected the end of the text after the JSON value");
    refused("[01]", "t.json:1: expected ',' or ']'");
    refused("[1.]", "t.json:1: expected a digit after '.'");
    refused("[1e]", "t.json:1: expected a digit in the exponent");
    refused("[NaN]", "t.json:1: expected a JSON value");
    refused("[\"a\n\"]", "t.json:1: a control character (0x0a) in a string; expected it escaped");
    refused("\n\n[\"abc", "t.json:3: a string is not closed; expected '\"'");
    refused("[\"\\x\"]", "t.json:1: an unknown escape \\x in a string");
    refused("[\"\\u12\"]", "t.json:1: expected 4 hex digits after \\u");
    refused("[\"\\ud800x\"]", "t.json:1: expected a low surrogate after \\uD800");
    refused("[\"\\udc00\"]", "t.json:1: a lone low surrogate \\uDC00 in a string");
    refused("[\"\\u0000\"]", "t.json:1: \\u0000 in a string (names are C strings)");
    refused("[\"\xc3\x28\"]", "t.json:1: a string is not valid UTF-8 (byte 0xc3)");
    refused("tru", "t.json:1: expected a JSON value");
}

static void test_depth_bound(void **state) {
    (void)state;
    char deep[2 * JSONIN_MAX_DEPTH + 8], *p = deep;
    for (int i = 0; i <= JSONIN_MAX_DEPTH; i++) *p++ = '[';
    for (int i = 0; i <= JSONIN_MAX_DEPTH; i++) *p++ = ']';
    *p = 0;
    char want[64];
    snprintf(want, sizeof want, "t.json:1: nesting deeper than %d", JSONIN_MAX_DEPTH);
    refused(deep, want);
    deep[JSONIN_MAX_DEPTH] = 0;                      /* exactly the bound deep: accepted */
    memset(deep + JSONIN_MAX_DEPTH, ']', JSONIN_MAX_DEPTH);
    deep[2 * JSONIN_MAX_DEPTH] = 0;
    jsonin_free(parse(deep));
}

static void test_large_array(void **state) {
    (void)state;
    /* more members than one arena chunk holds pointers for */
    size_t n = 100000;
    char *text = malloc(n * 8 + 4), *p = text;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) p += sprintf(p, "%s%zu", i ? "," : "", i);
    *p++ = ']';
    *p = 0;
    jsonin *d = parse(text);
    assert_int_equal(jv_len(jsonin_root(d)), (int)n);
    assert_true(jv_num(jv_at(jsonin_root(d), 99999), 0) == 99999);
    jsonin_free(d);
    free(text);
}

static void test_read_file(void **state) {
    (void)state;
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/ct-test-jsonin-%ld.json", (long)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("\xEF\xBB\xBF{\"k\": \"v\"}\n", f);
    fclose(f);
    jsonin *d = jsonin_read_file(path, err, sizeof err);
    assert_non_null(d);
    assert_string_equal(jv_str(jv_get(jsonin_root(d), "k"), NULL), "v");
    jsonin_free(d);
    remove(path);
    assert_null(jsonin_read_file("/dev/null", err, sizeof err));   /* a device, not a file */
    assert_non_null(strstr(err, "/dev/null:"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),         cmocka_unit_test(test_scalars_at_top),
        cmocka_unit_test(test_escapes),        cmocka_unit_test(test_lines_and_paths),
        cmocka_unit_test(test_duplicates_first), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_depth_bound),    cmocka_unit_test(test_large_array),
        cmocka_unit_test(test_read_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
