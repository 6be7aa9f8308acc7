/*
 * test_jobtrace: the public job-trace readers (scenarios/jobtrace*.c) and
 * the date-and-time reader they share (base/datetime.c).
 *
 * Each made-up sample in tests/jobtraces/ (written from its publisher's
 * documented columns) is read through the scenario loader, as the program
 * reads it, into a 4-node DGX H100 cluster (32 GPUs) with queues ee9e8c,
 * LS and vcJkd; the jobs, their submit times, run times, GPUs and queues
 * and the rows skipped (by why) must be what the sample's rows say. Then
 * each job's user, account, time limit, real start and dependency must be
 * what the sample's rows say (test_facts); format="auto" must tell each sample's format; skip, count, time-scale and
 * procs-per-gpu must cut and scale as documented; and each malformed file
 * of tests/bad-jobtraces/ (its format is its name up to the first '-')
 * must be refused with the line and words of its expected.txt, leaving
 * nothing allocated (the ASan build checks leaks).
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

#include "base/datetime.h"
#include "scenarios/scenario.h"

/* Load tests/jobtraces/HREF with the <trace> attributes attrs into *s. */
static int load(const char *href, const char *attrs, scenario **s, char *err, size_t errlen) {
    char text[2048];
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n"
             "<scenario name=\"jt\" seed=\"1\">\n"
             "  <cluster><nodes type=\"dgx-h100\" count=\"4\"/></cluster>\n"
             "  <scheduler><queue name=\"ee9e8c\"/><queue name=\"LS\"/><queue name=\"vcJkd\"/></scheduler>\n"
             "  <workload><trace href=\"%s\" %s/></workload>\n"
             "</scenario>\n", href, attrs);
    return scenario_load_memory(text, strlen(text), "tests/jobtraces/wrap.xml", s, err, errlen);
}

static scenario *load_ok(const char *href, const char *attrs) {
    char err[1024];
    scenario *s = NULL;
    int rc = load(href, attrs, &s, err, sizeof err);
    if (rc) print_error("%s %s: %s\n", href, attrs, err);
    assert_int_equal(rc, 0);
    return s;
}

/* Job i is NAME, submitted at submit_s, running run_s on gpus GPUs of queue q. */
static void check_job(const scenario *s, int i, const char *name, double submit_s, double run_s, int gpus, int q) {
    assert_true(i < s->n_trace_jobs);
    const sc_trace_job *t = &s->trace_jobs[i];
    if (strcmp(s->trace_names + t->name, name) || fabs(t->submit_s - submit_s) > 1e-6 ||
        fabs(t->duration_s - run_s) > 1e-6 || t->gpus != gpus || t->queue != q)
        print_error("job %d: got %s at %.9g s, %.9g s on %d GPUs, queue %d; want %s at %.9g, %.9g s, %d, %d\n", i,
                    s->trace_names + t->name, t->submit_s, t->duration_s, t->gpus, t->queue, name, submit_s, run_s,
                    gpus, q);
    assert_string_equal(s->trace_names + t->name, name);
    assert_true(fabs(t->submit_s - submit_s) <= 1e-6 && fabs(t->duration_s - run_s) <= 1e-6);
    assert_int_equal(t->gpus, gpus);
    assert_int_equal(t->queue, q);
}

/* The rows read and skipped: not run, no GPU, too big, other status. */
static void check_counts(const scenario *s, long rows, int jobs, long not_run, long no_gpus, long too_big,
                         long status) {
    const sc_trace_read *tr = &s->trace_read;
    assert_int_equal(tr->rows, rows);
    assert_int_equal(s->n_trace_jobs, jobs);
    assert_int_equal(tr->skipped_not_run, not_run);
    assert_int_equal(tr->skipped_no_gpus, no_gpus);
    assert_int_equal(tr->skipped_too_big, too_big);
    assert_int_equal(tr->skipped_status, status);
}

static void test_datetime(void **state) {
    (void)state;
    int64_t sec;
    double frac;
    int zone;
    assert_int_equal(datetime_parse("1970-01-01 00:00:00", &sec, &frac, &zone), 0);
    assert_true(sec == 0 && frac == 0 && !zone);
    assert_int_equal(datetime_parse("2020-06-09 18:41:01", &sec, &frac, &zone), 0);
    assert_true(sec == 1591728061);             /* date -u -d '2020-06-09 18:41:01' +%s */
    assert_int_equal(datetime_parse("2023-03-01 00:18:22+08:00", &sec, &frac, &zone), 0);
    assert_true(sec == 1677601102 && zone);     /* 2023-02-28 16:18:22 UTC */
    assert_int_equal(datetime_parse("2024-02-29T23:59:59.25Z", &sec, &frac, &zone), 0);
    assert_true(frac == 0.25 && zone);
    const char *bad[] = { "2020-13-09 18:41:01", "2023-02-29 00:00:00", "2020-06-09 24:00:00", "2020-06-09",
                          "2020-06-09 18:41:01 ", "2020-06-09 18:41:01+8", "10/07/2017 01:11", "" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (datetime_parse(bad[i], &sec, &frac, &zone) == 0) print_error("accepted '%s'\n", bad[i]);
        assert_int_equal(datetime_parse(bad[i], &sec, &frac, &zone), -1);
    }
}

/* A sample read with some <trace> attributes: the rows read and skipped
 * (never ran, no GPU, too big, other status), and some of its jobs. */
typedef struct want_job {
    int at;
    const char *name;
    double submit_s, run_s;
    int gpus, queue;
} want_job;

typedef struct sample {
    const char *file, *attrs;
    long rows;
    int jobs;
    long not_run, no_gpus, too_big, status;
    want_job want[5];
} sample;

static const sample samples[] = {
    /* sample.swf: job 3 never ran (-1), job 5 needs 64 GPUs, job 6 is a
     * partial execution (status 2), job 7 has no processors; job 4 gives
     * only its requested processors (16). Queue numbers name no queue. */
    { "sample.swf", "format=\"swf\"", 8, 4, 1, 1, 1, 1,
      { { 0, "1", 0, 3600, 8, 0 }, { 1, "2", 60, 1800, 4, 0 }, { 2, "4", 180, 900, 16, 0 },
        { 3, "8", 420, 2400, 1, 0 } } },
    /* 8 processors make a GPU: job 5's 64 fit (8 GPUs), job 8's one is a GPU. */
    { "sample.swf", "format=\"swf\" procs-per-gpu=\"8\"", 8, 5, 1, 1, 0, 1,
      { { 2, "4", 180, 900, 2, 0 }, { 3, "5", 240, 7200, 8, 0 }, { 4, "8", 420, 2400, 1, 0 } } },
    /* skip drops the jobs before it on the trace's clock and counts from
     * it; count keeps the first jobs; time-scale divides the times only. */
    { "sample.swf", "format=\"swf\" skip=\"100s\" count=\"2\" time-scale=\"2\"", 8, 2, 1, 1, 1, 1,
      { { 0, "4", 40, 900, 16, 0 }, { 1, "8", 160, 2400, 1, 0 } } },
    /* 1425513 asks for no GPU, 1425515 never started, 1425517 needs 64
     * GPUs; 1425514 has no duration (end - start: 2 h); vcJkd is queue 2. */
    { "helios_cluster_log.csv", "format=\"helios\"", 7, 4, 1, 1, 1, 0,
      { { 0, "1425511", 0, 36848, 1, 2 }, { 1, "1425512", 26, 249, 4, 0 }, { 2, "1425514", 59, 7200, 8, 2 },
        { 3, "1425516", 179, 3600, 2, 0 } } },
    /* Times at +08:00; a CPU job and one never started. */
    { "acme_trace_seren.csv", "format=\"acme\"", 5, 3, 1, 1, 0, 0,
      { { 0, "5778432", 0, 117, 8, 0 }, { 1, "5778469", 336, 2693, 8, 0 }, { 2, "5778470", 398, 14400, 16, 0 } } },
    /* No header, not in time order: a ps task with no plan_gpu, a Waiting
     * task with no times, a Running one with no end. A 50% instance holds
     * a GPU, 200% two, 4 instances of 25% four. */
    { "pai_task_table.csv", "format=\"pai\"", 7, 4, 2, 1, 0, 0,
      { { 0, "4f057009a5d481acec67b088/tensorflow", 0, 38, 1, 0 },
        { 1, "7b9c1e2f3a4b5c6d7e8f9012/worker", 88, 150, 2, 0 },
        { 2, "6a8b0d1e2f3a4b5c6d7e8f90/worker", 138, 3700, 2, 0 },
        { 3, "9d1e3a4b5c6d7e8f90123456/evaluator", 338, 300, 4, 0 } } },
    /* A CPU pod and a Pending pod; qos LS is queue 1. */
    { "openb_pod_list.csv", "format=\"openb\"", 7, 5, 1, 1, 0, 0,
      { { 0, "openb-pod-0017", 0, 10769854 - 9437497, 8, 0 },
        { 1, "openb-pod-0018", 9476974 - 9437497, 12902960 - 9476974, 1, 1 },
        { 3, "openb-pod-0035", 9967058 - 9437497, 9968575 - 9967063, 1, 1 } } },
    /* GPUs of the first attempt summed over its servers, run time from the
     * first start to the last end; no attempts, or still running: skipped. */
    { "philly_cluster_job_log.json", "format=\"philly\"", 5, 3, 2, 0, 0, 0,
      { { 0, "application_1506638472019_14199", 0, 9663, 8, 0 },
        { 1, "application_1506638472019_14200", 201, 1800, 4, 0 },
        { 2, "application_1506638472019_14203", 1401, 3600, 1, 0 } } },
};

static void test_sample(void **state) {
    const sample *c = *state;
    scenario *s = load_ok(c->file, c->attrs);
    check_counts(s, c->rows, c->jobs, c->not_run, c->no_gpus, c->too_big, c->status);
    for (int i = 0; i < 5 && c->want[i].name; i++) {
        const want_job *w = &c->want[i];
        check_job(s, w->at, w->name, w->submit_s, w->run_s, w->gpus, w->queue);
    }
    scenario_free(s);
}

/* What a sample says of its jobs beyond the run: user, account, time
 * limit, real start (NAN: none) and the job each waits for (-1: none). */
typedef struct want_facts {
    int at;
    const char *user, *account;
    double limit_s, actual_start_s;
    int after;
} want_facts;

typedef struct facts_case {
    const char *file, *attrs;
    unsigned columns;                 /* SC_TCOL_* the JSON reports */
    want_facts want[5];
} facts_case;

static const facts_case facts_cases[] = {
    /* Fields 12 and 13 (-1: none), 9 (job 1 asked for 3000 s and ran 3600:
     * the request did not stop it, no limit), 3 (start = submit + wait), 17 (job 4 waited
     * for job 3, which never ran: no dependency; job 8 for job 2). */
    { "sample.swf", "format=\"swf\"", SC_TCOL_USER | SC_TCOL_ACCOUNT | SC_TCOL_ACTUAL_START,
      { { 0, "1", "1", 0, 10, -1 }, { 1, "2", NULL, 0, 60, -1 }, { 2, "1", "1", 3600, 185, -1 },
        { 3, "5", "2", 3600, 450, 1 } } },
    { "sample.swf", "format=\"swf\" procs-per-gpu=\"8\"", SC_TCOL_USER | SC_TCOL_ACCOUNT | SC_TCOL_ACTUAL_START,
      { { 3, "4", "1", 9000, 240, -1 }, { 4, "5", "2", 3600, 450, 1 } } },
    /* Job 2 is before the window: job 8 waits for nothing; the waits are
     * the trace's, from the scaled submits. */
    { "sample.swf", "format=\"swf\" skip=\"100s\" count=\"2\" time-scale=\"2\"",
      SC_TCOL_USER | SC_TCOL_ACCOUNT | SC_TCOL_ACTUAL_START,
      { { 0, "1", "1", 3600, 45, -1 }, { 1, "5", "2", 3600, 190, -1 } } },
    /* user and vc; start_time (1425514 waited 480 s). */
    { "helios_cluster_log.csv", "format=\"helios\"", SC_TCOL_USER | SC_TCOL_ACCOUNT | SC_TCOL_ACTUAL_START,
      { { 0, "uXBbc", "vcJkd", 0, 0, -1 }, { 2, "uXBbc", "vcJkd", 0, 539, -1 },
        { 3, "uzqls", "vcpDC", 0, 209, -1 } } },
    /* No vc: no account. */
    { "acme_trace_seren.csv", "format=\"acme\"", SC_TCOL_USER | SC_TCOL_ACTUAL_START,
      { { 0, "u5907", NULL, 0, 32, -1 }, { 2, "u1234", NULL, 0, 698, -1 } } },
    /* The task table has no user and no submit before the launch. */
    { "pai_task_table.csv", "format=\"pai\"", 0, { { 0, NULL, NULL, 0, NAN, -1 } } },
    { "openb_pod_list.csv", "format=\"openb\"", SC_TCOL_ACTUAL_START,
      { { 0, NULL, NULL, 0, 0, -1 }, { 3, NULL, NULL, 0, 9967063 - 9437497, -1 } } },
    /* The first attempt's start; user, and vc as the account. */
    { "philly_cluster_job_log.json", "format=\"philly\"", SC_TCOL_USER | SC_TCOL_ACCOUNT | SC_TCOL_ACTUAL_START,
      { { 0, "ce2f4c", "ee9e8c", 0, 30, -1 }, { 1, "a1b2c3", "b436b2", 0, 501, -1 } } },
};

static void check_text(const scenario *s, uint32_t off, const char *want, int at, const char *what) {
    const char *got = off == SC_NO_TEXT ? NULL : s->trace_names + off;
    if (!want != !got || (want && strcmp(got, want)))
        print_error("job %d: %s %s, want %s\n", at, what, got ? got : "(none)", want ? want : "(none)");
    assert_true(!want == !got && (!want || !strcmp(got, want)));
}

static void test_facts(void **state) {
    const facts_case *c = *state;
    scenario *s = load_ok(c->file, c->attrs);
    assert_int_equal(s->trace_columns, c->columns);
    for (int i = 0; i < 5 && (i == 0 || c->want[i].at); i++) {
        const want_facts *w = &c->want[i];
        assert_true(w->at < s->n_trace_jobs);
        const sc_trace_job *t = &s->trace_jobs[w->at];
        check_text(s, t->user, w->user, w->at, "user");
        check_text(s, t->account, w->account, w->at, "account");
        if (fabs(t->limit_s - w->limit_s) > 1e-6 || t->after != w->after ||
            isnan(t->actual_start_s) != isnan(w->actual_start_s) ||
            (!isnan(w->actual_start_s) && fabs(t->actual_start_s - w->actual_start_s) > 1e-6))
            print_error("job %d: limit %.9g, actual start %.9g, after %d; want %.9g, %.9g, %d\n", w->at, t->limit_s,
                        t->actual_start_s, t->after, w->limit_s, w->actual_start_s, w->after);
        assert_true(fabs(t->limit_s - w->limit_s) <= 1e-6);
        assert_int_equal(t->after, w->after);
        assert_int_equal(isnan(t->actual_start_s), isnan(w->actual_start_s));
        if (!isnan(w->actual_start_s)) assert_true(fabs(t->actual_start_s - w->actual_start_s) <= 1e-6);
    }
    scenario_free(s);
}

/* format="auto" tells every sample's format; a project CSV stays csv. */
static void test_auto(void **state) {
    (void)state;
    const char *files[][2] = { { "sample.swf", "swf" }, { "helios_cluster_log.csv", "helios" },
                               { "acme_trace_seren.csv", "acme" }, { "pai_task_table.csv", "pai" },
                               { "openb_pod_list.csv", "openb" }, { "philly_cluster_job_log.json", "philly" },
                               { "/tmp/ct-test-jobtrace.csv", "csv" } };
    FILE *f = fopen(files[6][0], "w");
    assert_non_null(f);
    fputs("submit,gpus,duration\n0,8,1h\n", f);
    fclose(f);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        scenario *s = load_ok(files[i][0], "format=\"auto\"");
        if (strcmp(s->trace_read.format_read, files[i][1]))
            print_error("%s read as %s, want %s\n", files[i][0], s->trace_read.format_read, files[i][1]);
        assert_string_equal(s->trace_read.format_read, files[i][1]);
        assert_true(s->n_trace_jobs > 0);
        scenario_free(s);
    }
    remove(files[6][0]);
}

/* A trace whose every row is skipped replays nothing (no sort of no jobs:
 * qsort of NULL was undefined behaviour, found by tests/fuzz/fuzz_trace). */
static void test_nothing_kept(void **state) {
    (void)state;
    const char *path = "/tmp/ct-test-jobtrace-empty.csv";
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("name,num_gpu,creation_time,deletion_time,scheduled_time\nopenb-pod-0005,0,0,60,0\n", f);
    fclose(f);
    scenario *s = load_ok(path, "format=\"openb\"");
    remove(path);
    check_counts(s, 1, 0, 0, 1, 0, 0);
    scenario_free(s);
}

/* A file that is not there is refused by its <trace> in every format,
 * auto (which opens it to tell the format) included. */
static void test_missing(void **state) {
    (void)state;
    const char *formats[] = { "auto", "swf", "philly", "helios", "pai" };
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char attrs[64], err[1024];
        scenario *s = NULL;
        snprintf(attrs, sizeof attrs, "format=\"%s\"", formats[i]);
        assert_int_equal(load("nope.csv", attrs, &s, err, sizeof err), -1);
        assert_null(s);
        if (!strstr(err, "<trace href=\"nope.csv\">: tests/jobtraces/nope.csv: cannot open")) print_error("%s\n", err);
        assert_non_null(strstr(err, "<trace href=\"nope.csv\">: tests/jobtraces/nope.csv: cannot open"));
    }
}

/* ---- the malformed corpus ------------------------------------------------ */

#define MAX_CASES 128

typedef struct bad_case {
    char file[96];
    int line;
    char want[256];
} bad_case;

static bad_case cases[MAX_CASES];
static int n_cases;

/* tests/bad-jobtraces/expected.txt into cases[]: the count, or -1. */
static int read_expected(void) {
    const char *path = "tests/bad-jobtraces/expected.txt";
    char buf[1024];
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s (run from the project root)\n", path);
        return -1;
    }
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = 0;
        if (!buf[0] || buf[0] == '#') continue;
        char *p1 = strchr(buf, '|'), *p2 = p1 ? strchr(p1 + 1, '|') : NULL;
        if (!p1 || !p2 || n_cases == MAX_CASES || (size_t)(p1 - buf) >= sizeof cases[0].file ||
            strlen(p2 + 1) >= sizeof cases[0].want) {
            fprintf(stderr, "%s: expected FILE|LINE|SUBSTRING, got '%s'\n", path, buf);
            fclose(f);
            return -1;
        }
        *p1 = *p2 = 0;
        bad_case *c = &cases[n_cases++];
        memcpy(c->file, buf, strlen(buf) + 1);
        c->line = atoi(p1 + 1);
        memcpy(c->want, p2 + 1, strlen(p2 + 1) + 1);
    }
    fclose(f);
    return n_cases;
}

static void test_bad_case(void **state) {
    const bad_case *c = *state;
    char href[160], attrs[64], prefix[256], err[2048];
    snprintf(href, sizeof href, "../bad-jobtraces/%s", c->file);
    snprintf(attrs, sizeof attrs, "format=\"%.*s\"", (int)strcspn(c->file, "-"), c->file);
    snprintf(prefix, sizeof prefix, "tests/jobtraces/../bad-jobtraces/%s:%d: ", c->file, c->line);
    scenario *s = NULL;
    int rc = load(href, attrs, &s, err, sizeof err);
    if (rc == 0) print_error("%s: accepted\n", c->file);
    scenario_free(s);
    assert_int_equal(rc, -1);
    assert_null(s);
    if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, c->want) || strchr(err, '\n'))
        print_error("got:  %s\nwant: %s... containing \"%s\"\n", err, prefix, c->want);
    assert_true(!strncmp(err, prefix, strlen(prefix)) && strstr(err, c->want) && !strchr(err, '\n'));
}

/* Every file of the corpus has its line in expected.txt. */
static void test_corpus_complete(void **state) {
    (void)state;
    glob_t g;
    assert_int_equal(glob("tests/bad-jobtraces/*-*", 0, NULL, &g), 0);
    int missing = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *name = strrchr(g.gl_pathv[i], '/') + 1;
        int found = 0;
        for (int j = 0; j < n_cases && !found; j++) found = !strcmp(cases[j].file, name);
        if (!found) print_error("%s has no line in tests/bad-jobtraces/expected.txt\n", g.gl_pathv[i]);
        missing += !found;
    }
    globfree(&g);
    assert_int_equal(missing, 0);
    assert_true(n_cases >= 18);
}

int main(void) {
    if (read_expected() < 0) return 1;
    struct CMUnitTest tests[MAX_CASES + 32];
    size_t n = 0;
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_datetime);
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++)
        tests[n++] = (struct CMUnitTest){ .name = samples[i].attrs, .test_func = test_sample,
                                          .initial_state = (void *)&samples[i] };
    for (size_t i = 0; i < sizeof facts_cases / sizeof *facts_cases; i++)
        tests[n++] = (struct CMUnitTest){ .name = facts_cases[i].file, .test_func = test_facts,
                                          .initial_state = (void *)&facts_cases[i] };
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_auto);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_missing);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_nothing_kept);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_corpus_complete);
    for (int i = 0; i < n_cases; i++)
        tests[n++] = (struct CMUnitTest){ .name = cases[i].file, .test_func = test_bad_case, .initial_state = &cases[i] };
    return _cmocka_run_group_tests("jobtrace", tests, n, NULL, NULL);
}
