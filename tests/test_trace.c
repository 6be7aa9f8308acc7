/*
 * test_trace: the trace readers on malformed input, and the request-trace
 * readers on a made-up sample of each public format (tests/traces/).
 *
 *   job traces      <trace href="jobs.csv"/>       scenarios/trace.c
 *   request traces  <arrivals process="trace"/>    scenarios/reqtrace.c
 *
 * Each corpus is a folder of CSV files with an expected.txt of
 * "FILE|LINE|SUBSTRING" lines: reading tests/<corpus>/FILE must fail with a
 * one-line error that starts "tests/<corpus>/FILE:LINE: " and contains
 * SUBSTRING, print nothing, and leave nothing allocated (the ASan build
 * checks leaks). Job traces are read through the scenario loader, as the
 * program does (a scenario in memory named tests/bad-jobs/wrap.xml whose
 * <trace href> names the file, so relative paths resolve into the corpus);
 * request traces through reqtrace_load with the llama3-8b context
 * (8192 tokens). A good trace of each kind must load, so a reader that
 * refuses everything fails here too.
 *
 * Run from the project root (make test does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/infile.h"
#include "scenarios/scenario.h"
#include "scenarios/reqtrace.h"

#define MAX_CASES 256

typedef struct trace_case {
    char dir[32];                   /* bad-jobs | bad-requests */
    char file[128];
    int line;
    char want[256];
} trace_case;

static trace_case cases[2][MAX_CASES];
static int n_cases[2];
static const char *const dirs[2] = { "bad-jobs", "bad-requests" };

/* Read tests/<dir>/expected.txt into cases[k]. Returns the count or -1. */
static int read_expected(int k) {
    char path[128], buf[1024];
    snprintf(path, sizeof path, "tests/%s/expected.txt", dirs[k]);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s (run from the project root)\n", path);
        return -1;
    }
    int lineno = 0;
    while (fgets(buf, sizeof buf, f)) {
        lineno++;
        buf[strcspn(buf, "\r\n")] = 0;
        if (!buf[0] || buf[0] == '#') continue;
        char *p1 = strchr(buf, '|'), *p2 = p1 ? strchr(p1 + 1, '|') : NULL;
        if (!p1 || !p2 || n_cases[k] == MAX_CASES || (size_t)(p1 - buf) >= sizeof cases[0][0].file ||
            strlen(p2 + 1) >= sizeof cases[0][0].want || !p2[1]) {
            fprintf(stderr, "%s:%d: expected FILE|LINE|SUBSTRING\n", path, lineno);
            fclose(f);
            return -1;
        }
        *p1 = *p2 = 0;
        trace_case *c = &cases[k][n_cases[k]++];
        snprintf(c->dir, sizeof c->dir, "%s", dirs[k]);
        memcpy(c->file, buf, strlen(buf) + 1);
        c->line = atoi(p1 + 1);
        memcpy(c->want, p2 + 1, strlen(p2 + 1) + 1);
    }
    fclose(f);
    return n_cases[k];
}

static void check_error(const char *err, const char *prefix, const char *want) {
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, want) || strchr(err, '\n')) {
        print_error("got:  %s\nwant: %s... containing \"%s\"\n", err, prefix, want);
        fail();
    }
}

/* A scenario around a job trace: 4 DGX H100 nodes n1..n4 (32 GPUs), queue research. */
static int load_job_trace(const char *href, scenario **s, char *err, size_t errlen) {
    char text[1024];
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n"
             "<scenario name=\"trace\" seed=\"1\" duration=\"1d\">\n"
             "  <cluster><nodes type=\"dgx-h100\" count=\"4\" names=\"n[1-4]\"/></cluster>\n"
             "  <scheduler><queue name=\"research\" quota-gpus=\"32\"/></scheduler>\n"
             "  <workload><trace href=\"%s\"/></workload>\n"
             "</scenario>\n", href);
    return scenario_load_memory(text, strlen(text), "tests/bad-jobs/wrap.xml", s, err, errlen);
}

/* Write text to the file at path (a test's own temporary trace). */
static void write_temp(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *const req_models[] = { "llama3-8b" };
static const int req_context[] = { 8192 };

static void test_case(void **state) {
    const trace_case *c = *state;
    char prefix[400], path[300], err[2048];
    snprintf(path, sizeof path, "tests/%s/%s", c->dir, c->file);
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, c->line);
    memset(err, 'x', sizeof err);
    err[sizeof err - 1] = 0;
    if (!strcmp(c->dir, "bad-jobs")) {
        scenario *s = NULL;
        int rc = load_job_trace(c->file, &s, err, sizeof err);
        if (rc == 0) print_error("%s: accepted\n", path);
        scenario_free(s);
        assert_int_equal(rc, -1);
        assert_null(s);
    } else {
        reqtrace_row *rows = (reqtrace_row *)1;
        long n = reqtrace_load(path, req_models, req_context, 1, &rows, err, sizeof err);
        if (n >= 0) {
            print_error("%s: accepted (%ld rows)\n", path, n);
            free(rows);
        }
        assert_int_equal(n, -1);
        assert_null(rows);
    }
    check_error(err, prefix, c->want);
}

/* Every CSV in each corpus has a line in its expected.txt, and each corpus
 * has at least 20 cases. */
static void test_corpus_complete(void **state) {
    (void)state;
    int missing = 0;
    for (int k = 0; k < 2; k++) {
        char pat[64];
        snprintf(pat, sizeof pat, "tests/%s/*.csv", dirs[k]);
        glob_t g;
        assert_int_equal(glob(pat, 0, NULL, &g), 0);
        snprintf(pat, sizeof pat, "tests/%s/*.jsonl", dirs[k]);      /* Mooncake's JSON lines */
        int rc = glob(pat, GLOB_APPEND, NULL, &g);
        assert_true(rc == 0 || rc == GLOB_NOMATCH);
        for (size_t i = 0; i < g.gl_pathc; i++) {
            const char *name = strrchr(g.gl_pathv[i], '/') + 1;
            int found = 0;
            for (int j = 0; j < n_cases[k] && !found; j++) found = !strcmp(cases[k][j].file, name);
            if (!found) {
                print_error("%s has no line in tests/%s/expected.txt\n", g.gl_pathv[i], dirs[k]);
                missing++;
            }
        }
        globfree(&g);
        assert_true(n_cases[k] >= 20);
    }
    assert_int_equal(missing, 0);
}

/* The readers accept good traces: the shipped year-long job trace and a
 * small request trace with a header, a comment, units and CRLF endings. */
static void test_good_traces(void **state) {
    (void)state;
    char err[1024];
    scenario *s = NULL;
    char text[1024];
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n<scenario name=\"t\" seed=\"1\">\n"
             "  <cluster><nodes type=\"dgx-h100\" count=\"1250\"/></cluster>\n"
             "  <workload><trace href=\"traces/year-10k.csv\"/></workload>\n</scenario>\n");
    int rc = scenario_load_memory(text, strlen(text), "scenarios/inline.xml", &s, err, sizeof err);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_true(s->n_trace_jobs + s->n_training >= 1000);
    scenario_free(s);

    const char *path = "/tmp/ct-test-trace-good.csv";
    write_temp(path, "time,input_tokens,output_tokens\r\n# a comment\r\n0,100,10\r\n1.5s,200,20\r\n2min,300,30,llama3-8b\r\n");
    reqtrace_row *rows = NULL;
    long n = reqtrace_load(path, req_models, req_context, 1, &rows, err, sizeof err);
    remove(path);
    if (n < 0) print_error("%s\n", err);
    assert_int_equal(n, 3);
    assert_true(rows[1].t_s == 1.5 && rows[2].t_s == 120 && rows[2].input == 300 && rows[2].output == 30);
    free(rows);
}

/* Both readers take RFC 4180 quoting (scenarios/csv.h): a quoted field
 * may hold a comma and "" for a quote, and a quoted number reads as the
 * number. Without the shared CSV reader the job name "a,b" split into two
 * columns and "3600" was not a time. */
static void test_quoted_traces(void **state) {
    (void)state;
    const char *jobs = "/tmp/ct-test-trace-quoted-jobs.csv";
    FILE *f = fopen(jobs, "w");
    assert_non_null(f);
    fputs("submit,queue,gpus,duration,name\r\n"
          "\"3600\",research,8,2h,\"a,b\"\r\n"
          "\"3700\" , \"research\" ,\"8\",\"1h\",\"say \"\"hi\"\"\"\r\n", f);
    fclose(f);
    char err[1024], text[1024];
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n<scenario name=\"t\" seed=\"1\">\n"
             "  <cluster><nodes type=\"dgx-h100\" count=\"4\"/></cluster>\n"
             "  <scheduler><queue name=\"research\" quota-gpus=\"32\"/></scheduler>\n"
             "  <workload><trace href=\"%s\"/></workload>\n</scenario>\n", jobs);
    scenario *s = NULL;
    int rc = scenario_load_memory(text, strlen(text), "tests/inline.xml", &s, err, sizeof err);
    remove(jobs);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->n_trace_jobs, 2);
    assert_string_equal(s->trace_names + s->trace_jobs[0].name, "a,b");
    assert_true(s->trace_jobs[0].submit_s == 3600 && s->trace_jobs[0].gpus == 8 && s->trace_jobs[0].duration_s == 7200);
    assert_string_equal(s->trace_names + s->trace_jobs[1].name, "say \"hi\"");
    assert_true(s->trace_jobs[1].submit_s == 3700 && s->trace_jobs[1].queue == 0);
    scenario_free(s);

    const char *reqs = "/tmp/ct-test-trace-quoted-requests.csv";
    f = fopen(reqs, "w");
    assert_non_null(f);
    fputs("\"time\",\"input_tokens\",\"output_tokens\",\"model\"\n\"3600\",\"100\",10,\"llama3-8b\"\n"
          "3601,200,\"20\",\"\"\n", f);
    fclose(f);
    reqtrace_row *rows = NULL;
    long n = reqtrace_load(reqs, req_models, req_context, 1, &rows, err, sizeof err);
    remove(reqs);
    if (n < 0) print_error("%s\n", err);
    assert_int_equal(n, 2);
    assert_true(rows[0].t_s == 3600 && rows[0].input == 100 && rows[0].output == 10 && rows[0].model == 0);
    assert_true(rows[1].t_s == 3601 && rows[1].output == 20);
    free(rows);
}

/* Read tests/traces/NAME (made-up rows in each public format) for models
 * (contexts 128000) with format f, time-scale and skip; asserts success. */
static reqtrace read_sample(const char *name, reqtrace_format f, double scale, double skip, const char *const *models,
                            int n_models) {
    static const int ctx[] = { 128000, 128000 };
    char path[256], err[1024] = "";
    snprintf(path, sizeof path, "tests/traces/%s", name);
    const reqtrace_opts o = { f, scale, skip };
    const reqtrace_models sm = { models, ctx, n_models, NULL, 0 };
    reqtrace t;
    int rc = reqtrace_read(path, &o, &sm, &t, err, sizeof err);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    return t;
}

/* Reading path in format f fails at line with want in the message. */
static void read_fails(const char *path, reqtrace_format f, int line, const char *want) {
    char err[1024], prefix[300];
    const reqtrace_opts o = { f, 1, 0 };
    const reqtrace_models sm = { req_models, req_context, 1, NULL, 0 };
    reqtrace t;
    assert_int_equal(reqtrace_read(path, &o, &sm, &t, err, sizeof err), -1);
    assert_null(t.rows);
    assert_null(t.blocks);
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
    check_error(err, prefix, want);
}

static const char *const one_model[] = { "llama3-70b" };

/* Azure 2023 and 2024: dates and times become seconds from the first row
 * (2024's crosses midnight and has a whole second without a fraction);
 * auto tells the release by the time zone; either name reads either. */
static void test_azure(void **state) {
    (void)state;
    reqtrace t = read_sample("azure-2023.csv", REQTRACE_AUTO, 1, 0, one_model, 1);
    assert_int_equal(t.format, REQTRACE_AZURE_2023);
    assert_int_equal(t.n, 30);
    assert_true(t.rows[0].t_s == 0 && t.rows[0].input == 2394 && t.rows[0].output == 43);
    assert_true(fabs(t.rows[29].t_s - 12.694077) < 1e-6 && t.rows[29].input == 1390 && t.rows[29].output == 231);
    assert_true(t.rows[29].session == -1 && t.rows[29].n_blocks == 0 && t.blocks == NULL && t.block_tokens == 0);
    reqtrace_free(&t);
    t = read_sample("azure-2024.csv", REQTRACE_AUTO, 1, 0, one_model, 1);
    assert_int_equal(t.format, REQTRACE_AZURE_2024);
    assert_int_equal(t.n, 30);
    assert_true(t.rows[0].input == 2394 && fabs(t.rows[29].t_s - 14.593313) < 1e-6 && t.rows[29].input == 1390);
    for (long i = 1; i < t.n; i++) assert_true(t.rows[i].t_s >= t.rows[i - 1].t_s);
    reqtrace_free(&t);
    t = read_sample("azure-2024.csv", REQTRACE_AZURE_2023, 1, 0, one_model, 1);
    assert_true(t.n == 30 && t.format == REQTRACE_AZURE_2023);
    reqtrace_free(&t);
    read_fails("tests/traces/azure-2023.csv", REQTRACE_CSV, 1, "expected a header 'time,input_tokens");
    read_fails("tests/traces/azure-2023.csv", REQTRACE_BURSTGPT, 1, "BurstGPT header: no column 'Timestamp'");
}

/* BurstGPT: columns by name (Session ID and Elapsed time included), the two
 * failed rows (0 response tokens) dropped and counted, GPT-4 rows to the
 * service's model of that name, ChatGPT (not served) to the first. */
static void test_burstgpt(void **state) {
    (void)state;
    static const char *const models[] = { "llama3-70b", "GPT-4" };
    reqtrace t = read_sample("burstgpt.csv", REQTRACE_AUTO, 1, 0, models, 2);
    assert_int_equal(t.format, REQTRACE_BURSTGPT);
    assert_int_equal(t.n, 34);
    assert_int_equal(t.n_failed, 2);
    assert_true(t.rows[0].t_s == 9 && t.rows[0].input == 601 && t.rows[0].output == 89);
    assert_true(t.rows[0].model == 1 && t.rows[0].session == 5);
    assert_true(t.rows[33].t_s == 67 && t.rows[33].input == 1100 && t.rows[33].output == 526 && t.rows[33].session == 4);
    int gpt4 = 0, none = 0;
    for (long i = 0; i < t.n; i++) {
        gpt4 += t.rows[i].model == 1;
        none += t.rows[i].session == -1;
    }
    assert_int_equal(gpt4, 7);
    assert_int_equal(none, 12);
    reqtrace_free(&t);
    t = read_sample("burstgpt.csv", REQTRACE_BURSTGPT, 1, 0, one_model, 1);
    for (long i = 0; i < t.n; i++) assert_int_equal(t.rows[i].model, 0);
    reqtrace_free(&t);
}

/* Mooncake: milliseconds to seconds, hash_ids into the block pool (512
 * tokens a block), every conversation's prompt opening with the shared
 * block 0; skip drops earlier rows and their blocks; time-scale halves. */
static void test_mooncake(void **state) {
    (void)state;
    reqtrace t = read_sample("mooncake.jsonl", REQTRACE_AUTO, 1, 0, one_model, 1);
    assert_int_equal(t.format, REQTRACE_MOONCAKE);
    assert_true(t.n == 40 && t.block_tokens == 512 && t.n_blocks == 401);
    assert_true(t.rows[0].t_s == 0 && t.rows[0].input == 1568 && t.rows[0].output == 373);
    assert_true(t.rows[0].block_off == 0 && t.rows[0].n_blocks == 4);
    for (int k = 0; k < 4; k++) assert_int_equal(t.blocks[k], k);
    assert_true(fabs(t.rows[1].t_s - 0.428) < 1e-12);
    const reqtrace_row *last = &t.rows[39];
    assert_true(last->n_blocks == 12 && last->block_off + last->n_blocks == t.n_blocks);
    assert_true(fabs(last->t_s - 15.421) < 1e-9 && last->input == 5683 && last->output == 355);
    for (long i = 0; i < t.n; i++) {
        assert_int_equal(t.blocks[t.rows[i].block_off], 0);
        assert_true(t.rows[i].n_blocks == (t.rows[i].input + 511) / 512 && t.rows[i].session == -1);
    }
    reqtrace_free(&t);
    t = read_sample("mooncake.jsonl", REQTRACE_MOONCAKE, 1, 10, one_model, 1);
    assert_true(t.n == 15 && t.n_skipped == 25 && t.n_blocks == 111);
    assert_true(fabs(t.rows[0].t_s - 0.191) < 1e-9 && t.rows[0].block_off == 0 && t.blocks[0] == 0);
    reqtrace_free(&t);
    t = read_sample("mooncake.jsonl", REQTRACE_AUTO, 2, 0, one_model, 1);
    assert_true(t.n == 40 && fabs(t.rows[39].t_s - 15.421 / 2) < 1e-9);
    reqtrace_free(&t);
    read_fails("tests/traces/requests-sessions.csv", REQTRACE_MOONCAKE, 1, "expected a JSON object");
    char err[512];
    const reqtrace_opts late = { REQTRACE_AUTO, 1, 100 };
    const reqtrace_models sm = { one_model, (const int[]){ 128000 }, 1, NULL, 0 };
    assert_int_equal(reqtrace_read("tests/traces/mooncake.jsonl", &late, &sm, &t, err, sizeof err), -1);
    check_error(err, "tests/traces/mooncake.jsonl:40: ", "no requests at or after skip=100 s (the last is at 15.421 s)");
}

/* The plain CSV's fifth column: a session (a number, or text hashed to
 * one), empty for none. */
static void test_sessions(void **state) {
    (void)state;
    static const char *const models[] = { "llama3.1-8b" };
    reqtrace t = read_sample("requests-sessions.csv", REQTRACE_AUTO, 1, 0, models, 1);
    assert_int_equal(t.format, REQTRACE_CSV);
    assert_int_equal(t.n, 24);
    assert_true(t.rows[0].t_s == 0.02 && t.rows[0].input == 618 && t.rows[0].session == 1 && t.rows[1].session == -1);
    assert_true(t.rows[23].t_s == 14.9 && t.rows[23].input == 2196 && t.rows[23].session == 2);
    reqtrace_free(&t);
    const char *path = "/tmp/ct-test-trace-session.csv";
    write_temp(path, "0,100,10,,alice\n1,100,10,,bob\n2,100,10,,alice\n");
    reqtrace_row *rows = NULL;
    char err[512];
    long n = reqtrace_load(path, req_models, req_context, 1, &rows, err, sizeof err);
    remove(path);
    assert_int_equal(n, 3);
    assert_true(rows[0].session >= 0 && rows[0].session == rows[2].session && rows[0].session != rows[1].session);
    free(rows);
}

/* The same file read twice gives the same rows and blocks, byte for byte. */
static void test_deterministic(void **state) {
    (void)state;
    reqtrace a = read_sample("mooncake.jsonl", REQTRACE_AUTO, 1, 0, one_model, 1);
    reqtrace b = read_sample("mooncake.jsonl", REQTRACE_AUTO, 1, 0, one_model, 1);
    assert_true(a.n == b.n && a.n_blocks == b.n_blocks);
    assert_memory_equal(a.blocks, b.blocks, (size_t)a.n_blocks * sizeof *a.blocks);
    for (long i = 0; i < a.n; i++)
        assert_true(a.rows[i].t_s == b.rows[i].t_s && a.rows[i].input == b.rows[i].input &&
                    a.rows[i].block_off == b.rows[i].block_off && a.rows[i].n_blocks == b.rows[i].n_blocks);
    reqtrace_free(&a);
    reqtrace_free(&b);
    for (int k = 0; k <= REQTRACE_MOONCAKE; k++)
        assert_int_equal(reqtrace_format_parse(reqtrace_format_name((reqtrace_format)k)), k);
    assert_int_equal(reqtrace_format_parse("sharegpt"), -1);
}

/* The UTF-8 check the trace readers use: the valid prefix's length. */
static void test_utf8(void **state) {
    (void)state;
    static const struct { const char *z; size_t ok; } utf8[] = {
        { "plain ascii", 11 },
        { "caf\xc3\xa9", 5 },                       /* U+00E9 */
        { "\xe2\x82\xac", 3 },                      /* U+20AC */
        { "\xf0\x9f\x98\x80", 4 },                  /* U+1F600 */
        { "\xf4\x8f\xbf\xbf", 4 },                  /* U+10FFFF, the last */
        { "caf\xe9", 3 },                            /* Latin-1 */
        { "a\xc0\xaf", 1 },                          /* overlong '/' */
        { "\xe0\x80\xaf", 0 },                      /* overlong, 3 bytes */
        { "\xed\xa0\x80", 0 },                      /* a surrogate */
        { "\xf4\x90\x80\x80", 0 },                  /* past U+10FFFF */
        { "\xf5\x80\x80\x80", 0 },
        { "ab\xe2\x82", 2 },                         /* cut short */
        { "\x80", 0 },                               /* a lone continuation */
    };
    for (size_t i = 0; i < sizeof utf8 / sizeof utf8[0]; i++)
        assert_int_equal(infile_utf8_valid(utf8[i].z, strlen(utf8[i].z)), utf8[i].ok);
}

int main(void) {
    for (int k = 0; k < 2; k++)
        if (read_expected(k) < 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_complete),
        cmocka_unit_test(test_good_traces),
        cmocka_unit_test(test_quoted_traces),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_azure),
        cmocka_unit_test(test_burstgpt),
        cmocka_unit_test(test_mooncake),
        cmocka_unit_test(test_sessions),
        cmocka_unit_test(test_deterministic),
    };
    int failed = cmocka_run_group_tests_name("trace", tests, NULL, NULL);
    static struct CMUnitTest t[2][MAX_CASES];
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < n_cases[k]; i++)
            t[k][i] = (struct CMUnitTest){ .name = cases[k][i].file, .test_func = test_case,
                                           .initial_state = &cases[k][i] };
        failed += _cmocka_run_group_tests(dirs[k], t[k], (size_t)n_cases[k], NULL, NULL);
    }
    return failed ? 1 : 0;
}
