/*
 * scenariofix: helpers of the scenario loader's tests (test_scenario,
 * test_scenario_bad). Include after <cmocka.h>.
 */
#ifndef CT_TEST_SCENARIOFIX_H
#define CT_TEST_SCENARIOFIX_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scenarios/scenario.h"

/* stderr goes to a temporary file between capture_begin and capture_end,
 * which returns how many bytes were written there: the loader must print
 * nothing, libxml2 included. */
typedef struct capture {
    int saved_fd;
    FILE *tmp;
} capture;

static inline void capture_begin(capture *c) {
    fflush(stderr);
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved_fd = dup(2);
    assert_true(c->saved_fd >= 0);
    assert_true(dup2(fileno(c->tmp), 2) >= 0);
}

static inline long capture_end(capture *c, char *text, size_t len) {
    fflush(stderr);
    assert_true(dup2(c->saved_fd, 2) >= 0);
    close(c->saved_fd);
    struct stat st;
    assert_int_equal(fstat(fileno(c->tmp), &st), 0);
    long n = (long)st.st_size;
    rewind(c->tmp);
    size_t got = fread(text, 1, len - 1, c->tmp);
    text[got] = 0;
    fclose(c->tmp);
    return n;
}

/* The error must be one line "PREFIX..." containing want. */
static inline void check_error(const char *err, const char *prefix, const char *want) {
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, want) || strchr(err, '\n')) {
        print_error("got:  %s\nwant: %s... containing \"%s\"\n", err, prefix, want);
        fail();
    }
}

/* Load text from memory; must succeed. */
static inline scenario *load_text(const char *text) {
    scenario *s = NULL;
    char err[2048] = "";
    int rc = scenario_load_memory(text, strlen(text), "inline.xml", &s, err, sizeof err);
    if (rc != 0) print_error("inline scenario refused: %s\n%s\n", err, text);
    assert_int_equal(rc, 0);
    assert_non_null(s);
    return s;
}

/* A one-node cluster with `extra` inside <cluster> and `body` after it. */
static inline scenario *load_parts(const char *root_attrs, const char *extra, const char *body) {
    char text[4096];
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n"
             "<scenario name=\"t\" seed=\"1\" %s>\n"
             "  <cluster>\n"
             "    <nodes type=\"dgx-h100\" count=\"4\"/>\n"
             "    %s\n"
             "  </cluster>\n"
             "  %s\n"
             "</scenario>\n", root_attrs, extra, body);
    return load_text(text);
}

static inline void assert_close(double got, double want, double rel, const char *what) {
    if (!(fabs(got - want) <= rel * fabs(want))) {
        print_error("%s: got %.17g want %.17g\n", what, got, want);
        fail();
    }
}

#endif
