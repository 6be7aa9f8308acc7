/*
 * test_csv: the trace files' CSV reader (scenarios/csv.h) on its dialect:
 * RFC 4180 quoting ("" for a quote, commas inside quotes), LF and CRLF,
 * blanks around fields, comments and blank lines skipped, fields past
 * CSV_MAX_FIELDS counted but not kept, and each refusal naming the file and
 * line. The expected fields are written out by hand from RFC 4180 section 2.
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

#include "scenarios/csv.h"

static char path[64];

static csv *open_text(const char *text) {
    snprintf(path, sizeof path, "/tmp/ct-test-csv-%ld.csv", (long)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    infile_err ie;
    csv *r = csv_open(path, "a CSV file", &ie);
    assert_non_null(r);
    return r;
}

static void done(csv *r) {
    csv_close(r);
    remove(path);
}

/* Reads one record and checks its line, field count and fields. */
static void expect(csv *r, long line, const char *const *want, int n) {
    csv_record rec;
    char err[512] = "";
    int got = csv_next(r, &rec, err, sizeof err);
    if (got != 1) print_error("%s\n", err);
    assert_int_equal(got, 1);
    assert_int_equal(rec.line, line);
    assert_int_equal(rec.n, n);
    for (int i = 0; i < n && i < CSV_MAX_FIELDS; i++) assert_string_equal(rec.f[i], want[i]);
}

static void test_dialect(void **state) {
    (void)state;
    csv *r = open_text("a,b,c\r\n"
                       "# a comment, \"not read\n"
                       "\n"
                       "   \r\n"
                       "  x , \"y, z\" ,\"say \"\"hi\"\"\"\n"
                       "\"\",,\" kept \"\r\n"
                       "q\"uote,\"#\"\n"
                       "last,no newline");
    expect(r, 1, (const char *[]){ "a", "b", "c" }, 3);
    expect(r, 5, (const char *[]){ "x", "y, z", "say \"hi\"" }, 3);
    expect(r, 6, (const char *[]){ "", "", " kept " }, 3);
    expect(r, 7, (const char *[]){ "q\"uote", "#" }, 2);
    expect(r, 8, (const char *[]){ "last", "no newline" }, 2);
    csv_record rec;
    char err[256];
    assert_int_equal(csv_next(r, &rec, err, sizeof err), 0);
    assert_int_equal(csv_errno(r), 0);
    assert_int_equal(csv_line(r), 8);
    done(r);
}

/* 36 fields: all counted, the first CSV_MAX_FIELDS (32) kept; csv_columns
 * judges the count against what the caller takes (a job trace: 16). */
static void test_many_fields(void **state) {
    (void)state;
    csv *r = open_text("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,\"15\",16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,"
                       "\"31\",32,33,34,35\n");
    csv_record rec;
    char err[256];
    assert_int_equal(csv_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.n, 36);
    assert_string_equal(rec.f[15], "15");
    assert_string_equal(rec.f[CSV_MAX_FIELDS - 1], "31");
    assert_int_equal(csv_columns(r, &rec, 0, CSV_MAX_FIELDS, NULL, err, sizeof err), -1);
    char want32[128];
    snprintf(want32, sizeof want32, "%s:1: too many columns (at most 32)", path);
    assert_string_equal(err, want32);
    assert_int_equal(csv_columns(r, &rec, 0, 16, NULL, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, "%s:1: too many columns (at most 16)", path);
    assert_string_equal(err, want);
    assert_int_equal(csv_columns(r, &rec, 3, 4, "3 or 4 columns", err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:1: expected 3 or 4 columns, got 36", path);
    assert_string_equal(err, want);
    assert_int_equal(csv_columns(r, &rec, 1, 36, NULL, err, sizeof err), 0);
    done(r);
}

/* Each refusal: the text that reaches csv_next and the error it gives. */
static void test_refusals(void **state) {
    (void)state;
    static const struct { const char *text; const char *want; } cases[] = {
        { "a,b\n1,\"2\n", ":2: column 2: a quoted field is not closed on its line; expected a closing \" (a field may "
                          "not span lines)" },
        { "\"a\"\"\n", ":1: column 1: a quoted field is not closed on its line" },
        { "a,\"b\"c\n", ":1: column 2: text after the closing quote; expected a comma or the end of the line" },
        { "a\n\x01\n", ":2: binary data (control character 0x01); expected a CSV text file" },
        { "# \x7f\n", ":1: binary data (control character 0x7f); expected a CSV text file" },
        { "a,\"b,\xe9\",c\n", ":1: the line is not valid UTF-8 (byte 0xe9, character 6 of the line)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        csv *r = open_text(cases[i].text);
        csv_record rec;
        char err[512];
        int got;
        while ((got = csv_next(r, &rec, err, sizeof err)) == 1) {}
        assert_int_equal(got, -1);
        char want[512];
        snprintf(want, sizeof want, "%s%s", path, cases[i].want);
        if (strncmp(err, want, strlen(want)) != 0) print_error("got:  %s\nwant: %s\n", err, want);
        assert_true(strncmp(err, want, strlen(want)) == 0);
        done(r);
    }
}

/* A UTF-8 error names the field it is in, counted past quoted commas. */
static void test_utf8_field_names(void **state) {
    (void)state;
    static const char *const names[] = { "submit", "name", "queue" };
    csv *r = open_text("\"0,0\",\"a,b\",q\xe9\n");
    csv_name_fields(r, names, 3, "a field");
    csv_record rec;
    char err[512], want[512];
    assert_int_equal(csv_next(r, &rec, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:1: queue is not valid UTF-8 (byte 0xe9, character 14 of the line)", path);
    assert_string_equal(err, want);
    done(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dialect),
        cmocka_unit_test(test_many_fields),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_utf8_field_names),
    };
    return cmocka_run_group_tests_name("csv", tests, NULL, NULL);
}
