/*
 * test_report: `clustertwin report` (reports/report.h) on runs stored in a
 * results database.
 *
 * What it models: a reader opening DIR/index.html offline. Expected:
 * - the HTML is well-formed: libxml2's XML parser reads it (no network);
 * - every image it references exists and is itself well-formed SVG;
 * - it opens with the scenario's question answered in one sentence and
 *   the headline cards; with gnuplot, the charts are there; without it
 *   (CLUSTERTWIN_GNUPLOT pointing nowhere) the page still renders, says
 *   why, and references no chart;
 * - --compare puts both runs' figures side by side with differences and
 *   their charts overlaid: one chart per quantity (cmp-KEY.svg), one line
 *   per run ("A: run 1", "B: run 2"), never a chart per run;
 * - the numbers a person reads come from base/numfmt.h (the cost card is
 *   nf_usd of the stored cost: "$89.7k", no "e+05");
 * - md and csv write report.md and the CSV files (one jobs.csv row per job);
 * - the same database gives byte-identical reports (determinism);
 * - an incomplete run is reported as such; bad input is status 2;
 * - json writes DIR/results.json, the run's document byte for byte with
 *   the newline `run --json` ends it with (its 300 batch jobs stored only
 *   as rows and rebuilt); one run: a comparison, or an incomplete run
 *   killed before its document, is status 2 and writes nothing;
 * - the headline charges a job its own GPU-hours at its price, and states
 *   the cluster's cost as the cluster's (the 64-GPU job of the 128-GPU
 *   test cluster used to be charged the whole cluster's cost);
 * - an inference service (serving-chat-70b's fleet: 4 replicas of tp 2 on
 *   one 8-GPU node from time 0) gets a headline about its requests, SLO
 *   attainment and price per million output tokens, an SLO-goodput card,
 *   a serving layer of 8 GPUs in the GPUs-over-time chart, a TPOT CDF
 *   beside TTFT and end-to-end; a results database of schema version 3
 *   (before the serving columns) is still reported.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "base/numfmt.h"
#include "reports/fileout.h"
#include "scenarios/infile.h"
#include "reports/json.h"
#include "reports/report.h"
#include "reports/results.h"
#include "reports/store.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

static const char xml_text[] =
    "<scenario name=\"report-test\" seed=\"1\" duration=\"20d\">"
    "<cluster><nodes type=\"dgx-h100\" count=\"16\"/>"
    "<storage name=\"ckpt\" kind=\"parallel-fs\" bandwidth=\"200GB/s\"/><spares warm=\"1\"/></cluster>"
    "<failures><failure component=\"gpu\" mtbf=\"3000h\" cause=\"faulty GPU\"/>"
    "<failure component=\"node\" mtbf=\"2000h\" mttr=\"1d\"/></failures>"
    "<workload><training name=\"job &amp; co\" gpus=\"64\" tp=\"8\" pp=\"1\" dp=\"8\" sharding=\"fsdp\""
    " global-batch=\"64\" seq-len=\"4096\" tokens=\"300G\" storage=\"ckpt\"><model preset=\"llama3-8b\"/>"
    "<checkpoint interval=\"2h\" mode=\"async\" layout=\"sharded\"/></training>"
    "<jobs name=\"batch\" count=\"300\" arrivals=\"poisson\" rate=\"2/h\" gpus=\"8\" duration=\"3h\""
    " duration-distribution=\"exponential\"/></workload></scenario>";

static const char serving_xml[] =
    "<scenario name=\"serving-test\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
    "<workload><inference name=\"chat\" model=\"llama3-70b\" precision=\"fp8\" tp=\"2\" replicas=\"4\">"
    "<arrivals process=\"poisson\" rate=\"10/s\" count=\"2000\"/>"
    "<requests input-tokens=\"1000\" output-tokens=\"200\"/><slo ttft=\"1s\" tpot=\"50ms\" percentile=\"99\"/>"
    "</inference></workload></scenario>";

static char tmpdir[256], db_path[300], serving_db[300];
static int n_jobs;
static char *doc_run1;                 /* run 1's JSON results as results_json wrote them */

static const char *tpath(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* Record a run of xml into path; finish = 0 leaves it 'incomplete' (as a
 * killed run). The store subscribes after the world is built, as in
 * `clustertwin run`. */
static void record_into(const char *path, const char *xml, unsigned long long seed, int finish) {
    char err[1024];
    scenario *s = NULL;
    if (scenario_load_memory(xml, strlen(xml), "report-test.xml", &s, err, sizeof err)) fail_msg("%s", err);
    s->seed = seed;
    metric_bus *bus = metrics_new();
    world *w = world_new(s, bus, err, sizeof err);
    store *st = NULL;
    if (!w || store_open(path, STORE_WRITE, &st, err, sizeof err) || store_run_begin(st, s, bus, err, sizeof err))
        fail_msg("%s", err);
    world_run(w, 0);
    if (path == db_path) n_jobs = world_job_count(w);
    if (finish) {
        json *j = json_new();
        results_json(j, s, w, 0.5);
        if (path == db_path && seed == 1) doc_run1 = strdup(json_text(j, NULL));
        if (store_run_finish(st, w, json_text(j, NULL), err, sizeof err)) fail_msg("%s", err);
        json_free(j);
    }
    store_close(st);
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
}

static void record(unsigned long long seed, int finish) { record_into(db_path, xml_text, seed, finish); }

static int setup(void **state) {
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_report.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(db_path, sizeof db_path, "%s/r.db", tmpdir);
    record(1, 1);      /* run 1 */
    record(2, 1);      /* run 2 */
    record(3, 0);      /* run 3: incomplete */
    snprintf(serving_db, sizeof serving_db, "%s/serving.db", tmpdir);
    record_into(serving_db, serving_xml, 1, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    xmlCleanupParser();
    free(doc_run1);
    return system(cmd) == 0 ? 0 : -1;
}

static int have_gnuplot(void) {
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *z = malloc((size_t)n + 1);
    assert_non_null(z);
    assert_int_equal(fread(z, 1, (size_t)n, f), (size_t)n);
    z[n] = 0;
    fclose(f);
    return z;
}

static int write_report(int64_t run, int64_t cmp, const char *dir, report_format fmt, char *err, size_t errlen) {
    report_opts o = { db_path, run, cmp, dir, fmt };
    char main_file[1024], notes[2048];
    return report_write(&o, main_file, sizeof main_file, notes, sizeof notes, err, errlen);
}

typedef struct page {
    int imgs, charts, answer, cards;
    char text[16384];                   /* the answer paragraph(s) */
} page;

static void walk(xmlNode *n, const char *dir, page *p) {
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        const char *name = (const char *)n->name;
        if (!strcmp(name, "img")) {
            xmlChar *src = xmlGetProp(n, (const xmlChar *)"src");
            assert_non_null(src);
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, (const char *)src);
            struct stat sb;
            if (stat(path, &sb) != 0 || sb.st_size == 0) fail_msg("the page shows %s, which does not exist", path);
            xmlDoc *svg = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
            if (!svg) fail_msg("%s is not well-formed", path);
            xmlFreeDoc(svg);
            p->imgs++;
            if (!strstr((const char *)src, "topology")) p->charts++;
            xmlFree(src);
        }
        xmlChar *cls = xmlGetProp(n, (const xmlChar *)"class");
        if (cls && !strcmp((const char *)cls, "answer")) {
            xmlChar *t = xmlNodeGetContent(n);
            snprintf(p->text + strlen(p->text), sizeof p->text - strlen(p->text), "%s\n", (const char *)t);
            xmlFree(t);
            p->answer++;
        }
        if (cls && !strcmp((const char *)cls, "card")) p->cards++;
        xmlFree(cls);
        walk(n->children, dir, p);
    }
}

/* Parse DIR/index.html as XML and check its images. */
static page check_page(const char *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/index.html", dir);
    xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    if (!doc) fail_msg("%s is not well-formed XHTML", path);
    xmlNode *root = xmlDocGetRootElement(doc);
    assert_string_equal((const char *)root->name, "html");
    page p = { 0 };
    walk(root, dir, &p);
    xmlFreeDoc(doc);
    return p;
}

static void test_html(void **state) {
    (void)state;
    char err[1024];
    const char *dir = tpath("html");
    assert_int_equal(write_report(1, 0, dir, REPORT_HTML, err, sizeof err), 0);
    page p = check_page(dir);
    assert_int_equal(p.answer, 1);
    /* The answer: the training job, its time, its cost, its goodput. */
    if (!strstr(p.text, "job & co finishes in") ||
        !strstr(p.text, "of its time was kept training") || !strstr(p.text, " d at $"))
        fail_msg("answer: %s", p.text);
    assert_int_equal(p.cards, 8);
    if (have_gnuplot()) assert_true(p.charts >= 5);   /* util, cost, failures, progress, steps, waits */
    char *html = slurp(tpath("html/index.html"));
    static const char *const wants[] = { "Goodput (ETTR)", "Failures and recovery", "faulty GPU", "Queues",
                                         "&lt;scenario name=&quot;report-test&quot;", "job &amp; co" };
    for (size_t i = 0; i < sizeof wants / sizeof *wants; i++)
        if (!strstr(html, wants[i])) fail_msg("the page lacks '%s'", wants[i]);
    assert_null(strstr(html, "<script"));
    /* Nothing from the network: the only URL is the XHTML namespace. */
    for (const char *u = strstr(html, "http"); u; u = strstr(u + 1, "http"))
        if (strncmp(u, "http://www.w3.org/1999/xhtml", 28)) fail_msg("the page links %.60s", u);
    free(html);
}

static void test_html_without_gnuplot(void **state) {
    (void)state;
    char err[1024];
    const char *dir = tpath("nognuplot");
    setenv("CLUSTERTWIN_GNUPLOT", "/nonexistent/gnuplot", 1);
    int rc = write_report(1, 0, dir, REPORT_HTML, err, sizeof err);
    unsetenv("CLUSTERTWIN_GNUPLOT");
    assert_int_equal(rc, 0);
    page p = check_page(dir);
    assert_int_equal(p.charts, 0);
    assert_int_equal(p.answer, 1);
    char *html = slurp(tpath("nognuplot/index.html"));
    assert_non_null(strstr(html, "Charts are not drawn"));
    assert_non_null(strstr(html, "gnuplot-nox"));
    free(html);
}

static void test_compare(void **state) {
    (void)state;
    char err[1024];
    const char *dir = tpath("compare");
    assert_int_equal(write_report(1, 2, dir, REPORT_HTML, err, sizeof err), 0);
    page p = check_page(dir);
    assert_int_equal(p.answer, 1);
    assert_non_null(strstr(p.text, "A (run 1)"));
    assert_non_null(strstr(p.text, "B (run 2)"));
    char *html = slurp(tpath("compare/index.html"));
    assert_non_null(strstr(html, "B - A"));
    assert_non_null(strstr(html, "Training jobs in both runs"));
    assert_non_null(strstr(html, "%)</td>"));                  /* a relative difference */
    /* Overlaid, not side by side: no chart of one run alone. */
    assert_null(strstr(html, "a-util.svg"));
    assert_null(strstr(html, "b-util.svg"));
    assert_null(strstr(html, "class=\"pair\"><div><figure><img src=\"a-"));
    static const char *const keys[] = { "util", "cost", "failures", "progress", "waits" };
    char *gp = slurp(tpath("compare/cmp-charts.gp"));
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char want[128];
        /* one chart, both runs' lines in it, each with its legend entry */
        snprintf(want, sizeof want, "set output 'cmp-%s.svg'", keys[i]);
        const char *at = strstr(gp, want);
        if (!at) fail_msg("no overlaid %s chart in cmp-charts.gp", keys[i]);
        assert_null(strstr(at + 1, want));
        const char *next = strstr(at + 1, "set output");
        snprintf(want, sizeof want, "'cmp-%s.dat' index 1", keys[i]);
        const char *b = strstr(at, want);
        if (!b || (next && b > next)) fail_msg("the %s chart lacks run B's line", keys[i]);
        const char *la = strstr(at, "t 'A: run 1'"), *lb = strstr(at, "t 'B: run 2'");
        if (!la || !lb || (next && (la > next || lb > next))) fail_msg("the %s chart lacks its legend", keys[i]);
        char dat[64];
        snprintf(dat, sizeof dat, "compare/cmp-%s.dat", keys[i]);
        char *d = slurp(tpath(dat));
        if (!strstr(d, "# A: run 1") || !strstr(d, "# B: run 2")) fail_msg("%s has not both runs' series", dat);
        free(d);
        if (have_gnuplot()) {
            snprintf(want, sizeof want, "<img src=\"cmp-%s.svg\"", keys[i]);
            const char *img = strstr(html, want);
            if (!img) fail_msg("the page does not show cmp-%s.svg", keys[i]);
            assert_null(strstr(img + 1, want));
        }
    }
    free(gp);
    if (have_gnuplot()) assert_int_equal(p.charts, 6);         /* the five above and the step breakdown */
    free(html);
}

static void test_md_and_csv(void **state) {
    (void)state;
    char err[1024];
    assert_int_equal(write_report(1, 0, tpath("md"), REPORT_MD, err, sizeof err), 0);
    char *md = slurp(tpath("md/report.md"));
    assert_non_null(strstr(md, "# report-test, run 1"));
    assert_non_null(strstr(md, "| Goodput (ETTR) |"));
    assert_non_null(strstr(md, "## Failures by cause"));
    free(md);
    struct stat sb;
    assert_int_not_equal(stat(tpath("md/index.html"), &sb), 0);

    assert_int_equal(write_report(1, 2, tpath("csv"), REPORT_CSV, err, sizeof err), 0);
    static const char *const files[] = { "summary.csv", "runs.csv", "jobs.csv", "queues.csv", "failures.csv",
                                         "events.csv", "series.csv", "compare.csv" };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char name[64];
        snprintf(name, sizeof name, "csv/%s", files[i]);
        if (stat(tpath(name), &sb) != 0 || sb.st_size == 0) fail_msg("no %s", name);
    }
    char *jobs = slurp(tpath("csv/jobs.csv"));
    int lines = 0;
    for (char *p = jobs; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 1 + 2 * n_jobs);                   /* header, the jobs of both runs */
    assert_true(!strncmp(jobs, "run_id,idx,name,kind,", 21));
    free(jobs);
    char *summary = slurp(tpath("csv/summary.csv"));
    const char *ans = strstr(summary, "1,answer,,Answer,");
    assert_non_null(ans);
    assert_non_null(strstr(ans, "job & co finishes in"));
    free(summary);
}

static void test_deterministic(void **state) {
    (void)state;
    char err[1024];
    assert_int_equal(write_report(1, 0, tpath("det1"), REPORT_HTML, err, sizeof err), 0);
    assert_int_equal(write_report(1, 0, tpath("det2"), REPORT_HTML, err, sizeof err), 0);
    static const char *const files[] = { "index.html", "util.svg", "failures.svg", "topology.svg" };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "det1/%s", files[i]);
        snprintf(b, sizeof b, "det2/%s", files[i]);
        struct stat sb;
        if (stat(tpath(a), &sb) != 0) continue;              /* no gnuplot: no charts */
        char *x = slurp(tpath(a)), *y = slurp(tpath(b));
        if (strcmp(x, y)) fail_msg("%s differs between two reports of the same run", files[i]);
        free(x);
        free(y);
    }
}

static void test_incomplete_and_errors(void **state) {
    (void)state;
    char err[1024] = "";
    /* The default run is the latest complete one (2), not the incomplete 3. */
    assert_int_equal(write_report(0, 0, tpath("latest"), REPORT_MD, err, sizeof err), 0);
    char *md = slurp(tpath("latest/report.md"));
    assert_non_null(strstr(md, "# report-test, run 2"));
    free(md);
    /* The incomplete run, asked for by id, is reported as such. */
    assert_int_equal(write_report(3, 0, tpath("incomplete"), REPORT_HTML, err, sizeof err), 0);
    page p = check_page(tpath("incomplete"));
    assert_int_equal(p.answer, 1);
    char *html = slurp(tpath("incomplete/index.html"));
    assert_non_null(strstr(html, "Run 3 is incomplete"));
    free(html);
    /* Bad input. */
    assert_int_equal(write_report(99, 0, tpath("x"), REPORT_HTML, err, sizeof err), 2);
    assert_non_null(strstr(err, "no run 99"));
    assert_int_equal(write_report(1, 42, tpath("x"), REPORT_HTML, err, sizeof err), 2);
    report_opts o = { tpath("missing.db"), 0, 0, tpath("x"), REPORT_HTML };
    char main_file[512];
    assert_int_equal(report_write(&o, main_file, sizeof main_file, NULL, 0, err, sizeof err), 2);
    assert_non_null(strstr(err, "missing.db"));
    o.db_path = tpath("html/index.html");                      /* not a database */
    assert_int_equal(report_write(&o, main_file, sizeof main_file, NULL, 0, err, sizeof err), 2);
    assert_non_null(strstr(err, "not an SQLite database"));
    /* An output directory that cannot be made: the write fails (1). */
    o.db_path = db_path;
    o.out_dir = tpath("html/index.html/sub");
    assert_int_equal(report_write(&o, main_file, sizeof main_file, NULL, 0, err, sizeof err), 1);
    assert_non_null(strstr(err, "cannot create"));
    /* The list. */
    FILE *f = tmpfile();
    assert_int_equal(report_list(db_path, f, err, sizeof err), 0);
    rewind(f);
    char line[512];
    int rows = 0, incomplete = 0;
    while (fgets(line, sizeof line, f)) {
        rows++;
        if (strstr(line, "incomplete")) incomplete++;
    }
    fclose(f);
    assert_int_equal(rows, 4);
    assert_int_equal(incomplete, 1);
}

/* "$48.2k" at z -> 48200 (the report's money format: $, 3-4 digits, k/M/B). */
static double money_at(const char *z) {
    if (!z || *z != '$') fail_msg("no money figure at '%.40s'", z ? z : "(null)");
    char *end;
    double v = strtod(z + 1, &end);
    if (*end == 'k') v *= 1e3;
    else if (*end == 'M') v *= 1e6;
    else if (*end == 'B') v *= 1e9;
    return v;
}

static double db_num(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    double v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_double(q, 0) : NAN;
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

/* The 64-GPU training job of the 128-GPU cluster: the headline's price
 * for it is its own GPU-hours at the H100's price (the jobs table's
 * cost_usd, to the 3 digits shown), well under the cluster's cost up to
 * its end, which is stated as the cluster's. It used to say "finishes in
 * N days at <the cluster's cost so far>". */
static void test_json(void **state) {
    (void)state;
    char err[1024] = "";
    /* Stored with "jobs": [] (its jobs only as rows): the document is rebuilt. */
    assert_true(db_num(db_path, "SELECT instr(results_json, '\"jobs\": []') > 0 FROM runs WHERE id = 1") == 1);
    assert_int_equal(write_report(1, 0, tpath("json"), REPORT_JSON, err, sizeof err), 0);
    char *z = slurp(tpath("json/results.json"));
    size_t n = strlen(doc_run1);
    assert_int_equal(strlen(z), n + 1);
    assert_memory_equal(z, doc_run1, n);
    assert_int_equal(z[n], '\n');
    free(z);
    /* The default is the latest complete run (2), not the incomplete 3. */
    assert_int_equal(write_report(0, 0, tpath("json-latest"), REPORT_JSON, err, sizeof err), 0);
    z = slurp(tpath("json-latest/results.json"));
    assert_non_null(strstr(z, "\"seed\": 2,"));
    free(z);
    /* Run 3 was killed before its document; a comparison is not one run. */
    assert_int_equal(write_report(3, 0, tpath("json-x"), REPORT_JSON, err, sizeof err), 2);
    assert_non_null(strstr(err, "run 3 has no JSON results (status incomplete"));
    assert_int_equal(write_report(1, 2, tpath("json-x"), REPORT_JSON, err, sizeof err), 2);
    assert_non_null(strstr(err, "no --compare"));
    assert_int_equal(write_report(99, 0, tpath("json-x"), REPORT_JSON, err, sizeof err), 2);
    assert_non_null(strstr(err, "no run 99 in the database"));
    struct stat sb;
    assert_int_not_equal(stat(tpath("json-x"), &sb), 0);
}

static void test_job_cost_not_cluster(void **state) {
    (void)state;
    char err[1024];
    assert_int_equal(write_report(1, 0, tpath("jobcost"), REPORT_HTML, err, sizeof err), 0);
    page p = check_page(tpath("jobcost"));
    const char *at = strstr(p.text, " d at $");
    if (!at) fail_msg("answer: %s", p.text);
    double shown = money_at(at + 6);
    double own = db_num(db_path, "SELECT cost_usd FROM jobs WHERE run_id = 1 AND name = 'job & co'");
    double hours = db_num(db_path, "SELECT gpu_hours FROM jobs WHERE run_id = 1 AND name = 'job & co'");
    assert_true(own > 0 && hours > 0);
    if (!(fabs(shown - own) <= 0.005 * own)) fail_msg("the job is charged %.6g, its own cost is %.6g: %s", shown, own, p.text);
    const char *cl = strstr(p.text, "The cluster's 128 GPUs cost $");
    if (!cl) fail_msg("answer: %s", p.text);
    double cluster = money_at(strchr(cl, '$'));
    if (!(cluster > 1.5 * own)) fail_msg("cluster %.6g vs job %.6g: %s", cluster, own, p.text);
}

/* Numbers a person reads go through base/numfmt.h: the cost card is the
 * stored cost as nf_usd writes it, the GPU-hours card as nf_count, and no
 * number in printf's exponent form is left. */
static void test_numbers_formatted(void **state) {
    (void)state;
    char err[1024], want[128], v[64];
    assert_int_equal(write_report(1, 0, tpath("numbers"), REPORT_HTML, err, sizeof err), 0);
    char *html = slurp(tpath("numbers/index.html"));
    double cost = db_num(db_path, "SELECT cost_usd FROM runs WHERE id = 1");
    snprintf(want, sizeof want, "<div class=\"value\">%s</div>", nf_usd(cost, v, sizeof v));
    if (!strstr(html, want)) fail_msg("the page lacks the cost card %s", want);
    assert_true(v[0] == '$' && strchr("kMB", v[strlen(v) - 1]));  /* "$89.7k" style */
    double hours = db_num(db_path, "SELECT gpu_hours FROM runs WHERE id = 1");
    snprintf(want, sizeof want, "<div class=\"value\">%s GPU-h</div>", nf_count(hours, v, sizeof v));
    if (!strstr(html, want)) fail_msg("the page lacks the GPU-hours card %s", want);
    assert_non_null(strchr(v, ','));                           /* thousands separated */
    static const char *const raw[] = { "e+0", "e+1", "e-0" };
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++)
        if (strstr(html, raw[i])) fail_msg("the page prints a raw %s number: %.60s", raw[i], strstr(html, raw[i]) - 30);
    free(html);
    char *md = slurp(tpath("md/report.md"));
    snprintf(want, sizeof want, "| Cost | %s |", nf_usd(cost, v, sizeof v));
    if (!strstr(md, want)) fail_msg("report.md lacks %s", want);
    free(md);
}

/* serving-chat-70b's fleet. The headline used to say "The cluster runs no
 * workload" and the chart drew all 8 GPUs idle while the utilisation card
 * said 100%. */
static void test_serving_report(void **state) {
    (void)state;
    char err[1024], main_file[1024], notes[2048];
    const char *dir = tpath("serving");
    report_opts o = { serving_db, 0, 0, dir, REPORT_HTML };
    assert_int_equal(report_write(&o, main_file, sizeof main_file, notes, sizeof notes, err, sizeof err), 0);
    page p = check_page(dir);
    assert_int_equal(p.answer, 1);
    if (strstr(p.text, "runs no workload") || !strstr(p.text, "chat serves 2,000 requests") ||
        !strstr(p.text, "met its SLO") || !strstr(p.text, "req/s of SLO goodput") ||
        !strstr(p.text, "per million output tokens") || !strstr(p.text, "The cluster's 8 GPUs cost $"))
        fail_msg("answer: %s", p.text);
    assert_int_equal(p.cards, 9);                             /* the eight, and SLO goodput */
    char *html = slurp(tpath("serving/index.html"));
    static const char *const wants[] = { "<div class=\"label\">SLO goodput</div>", "req/s</div>",
                                         "<th class=\"n\">SLO goodput</th>", ", serving 0.", " GPU-h, idle 0 GPU-h." };
    for (size_t i = 0; i < sizeof wants / sizeof *wants; i++)
        if (!strstr(html, wants[i])) fail_msg("the page lacks '%s'", wants[i]);
    free(html);
    /* The chart's data: a serving layer holding the 8 GPUs from t = 0, none idle. */
    char *util = slurp(tpath("serving/util.dat"));
    assert_non_null(strstr(util, "+batch, +serving, +idle"));
    int rows = 0;
    for (char *line = strchr(util, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double c[8];
        if (sscanf(line + 1, "%lf %lf %lf %lf %lf %lf %lf %lf", &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6],
                   &c[7]) != 8)
            fail_msg("util.dat: '%.80s'", line + 1);
        if (c[5] - c[4] != 8 || c[6] != 8 || c[4] != 0) fail_msg("util.dat: serving %g, total %g at %g min", c[5] - c[4], c[6], c[0]);
        rows++;
    }
    assert_true(rows > 10);
    free(util);
    /* TPOT beside TTFT and end-to-end: a column of the data, a panel of the chart. */
    char *lat = slurp(tpath("serving/latency.dat"));
    assert_non_null(strstr(lat, "end-to-end latency (s), TPOT (s)"));
    char *first = strchr(lat, '\n') + 1;
    double pct, ttft, e2e, tpot;
    assert_int_equal(sscanf(first, "%lf %lf %lf %lf", &pct, &ttft, &e2e, &tpot), 4);
    assert_true(tpot > 0.005 && tpot < 0.05 && ttft > 0 && e2e > ttft);
    free(lat);
    char *gp = slurp(tpath("serving/charts.gp"));
    assert_non_null(strstr(gp, "set multiplot layout 1,3"));
    assert_non_null(strstr(gp, "time per output token (s)"));
    assert_non_null(strstr(gp, "t 'serving'"));
    free(gp);
    if (have_gnuplot()) {
        char *svg = slurp(tpath("serving/latency.svg"));
        assert_non_null(strstr(svg, "time per output token"));
        free(svg);
    }
    /* Markdown: the headline and the goodput figure. */
    o.out_dir = tpath("serving-md");
    o.format = REPORT_MD;
    assert_int_equal(report_write(&o, main_file, sizeof main_file, notes, sizeof notes, err, sizeof err), 0);
    char *md = slurp(tpath("serving-md/report.md"));
    assert_non_null(strstr(md, "chat serves 2,000 requests"));
    assert_non_null(strstr(md, "| SLO goodput |"));
    free(md);

    /* The same database at schema version 3 (before the serving columns):
     * read as it is, the serving GPU-hours derived from busy ones. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", serving_db, tpath("v3.db"));
    assert_int_equal(system(cmd), 0);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(tpath("v3.db"), &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "ALTER TABLE runs DROP COLUMN gpu_hours_by_state_serving; ALTER TABLE services "
                                      "DROP COLUMN goodput_requests_per_s; ALTER TABLE jobs DROP COLUMN gpu_hours; "
                                      "ALTER TABLE jobs DROP COLUMN cost_usd; ALTER TABLE microbenchmarks DROP COLUMN groups; PRAGMA user_version = 3", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    o.db_path = tpath("v3.db");
    o.out_dir = tpath("serving-v3");
    o.format = REPORT_HTML;
    if (report_write(&o, main_file, sizeof main_file, notes, sizeof notes, err, sizeof err)) fail_msg("%s", err);
    p = check_page(tpath("serving-v3"));
    if (!strstr(p.text, "chat serves 2,000 requests")) fail_msg("answer: %s", p.text);
    html = slurp(tpath("serving-v3/index.html"));
    assert_non_null(strstr(html, ", serving 0."));
    free(html);
}

/* ---- reports/fileout: the output rule and the escapers (issue 16) ---------- */

/* What f wrote, as a string (caller frees). */
static char *mem_text(void (*put)(FILE *, const char *), const char *z) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    put(f, z);
    fclose(f);
    return buf;
}

/* Valid UTF-8 whatever the bytes: one U+FFFD per bad byte. */
static int valid_utf8(const char *z) { return infile_utf8_valid(z, strlen(z)) == strlen(z); }

static void test_escapers(void **state) {
    (void)state;
    const char *bad = "a\xff\xfe" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x82";     /* stray, overlong, surrogate, cut */
    char *h = mem_text(fileout_html, bad), *c = mem_text(fileout_csv, bad), *m = mem_text(fileout_md, bad);
    assert_true(valid_utf8(h) && valid_utf8(c) && valid_utf8(m));
    assert_non_null(strstr(h, "a\xef\xbf\xbd\xef\xbf\xbd" "b"));
    free(h), free(c), free(m);
    h = mem_text(fileout_html, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");        /* valid text stays */
    assert_string_equal(h, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    free(h);
    /* CSV: formulas neutralised (a negative number is not a formula),
     * quoting as before; Markdown: no raw HTML, no markup, no cell break */
    static const struct { void (*escape)(FILE *, const char *); const char *in, *want; } cases[] = {
        { fileout_csv, "=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0" },
        { fileout_csv, "-2+3,x", "\"'-2+3,x\"" },
        { fileout_csv, "@SUM(A1)", "'@SUM(A1)" },
        { fileout_csv, "-0.5", "-0.5" },
        { fileout_csv, "-1e-3", "-1e-3" },
        { fileout_csv, "-", "'-" },
        { fileout_csv, "plain name", "plain name" },
        { fileout_md, "<script>alert(1)</script> | `x` *y*\nz",
          "&lt;script&gt;alert(1)&lt;/script&gt; \\| \\`x\\` \\*y\\* z" },
        { fileout_md, "jobs[a].end_s _x_ [t](javascript:x) ![i](u)",
          "jobs[a].end_s \\_x\\_ [t\\](javascript:x) ![i\\](u)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *z = mem_text(cases[i].escape, cases[i].in);
        assert_string_equal(z, cases[i].want);
        free(z);
    }
    /* JSON */
    json *j = json_new();
    json_object(j, NULL);
    json_str(j, "name", bad);
    json_end(j);
    const char *t = json_text(j, NULL);
    assert_non_null(t);
    assert_true(valid_utf8(t));
    assert_non_null(strstr(t, "\"a\xef\xbf\xbd\xef\xbf\xbd" "b"));
    json_free(j);
}

/* json_nums, json_ints and json_strs write the members a table names, in
 * the table's order and under its keys, whatever their order in the struct. */
typedef struct member_mix {
    int count;
    double share;
    char label[8];
    double total;
} member_mix;

static void test_json_member_tables(void **state) {
    (void)state;
    static const json_field nums[] = { { "all", offsetof(member_mix, total) }, JSON_MEMBER(member_mix, share) };
    static const json_field ints[] = { JSON_MEMBER(member_mix, count) };
    static const json_field strs[] = { { "name", offsetof(member_mix, label) } };
    member_mix m = { 7, 0.25, "gpu", 12.5 };
    json *j = json_new();
    json_object(j, NULL);
    json_nums(j, &m, JSON_FIELDS(nums));
    json_ints(j, &m, JSON_FIELDS(ints));
    json_strs(j, &m, JSON_FIELDS(strs));
    json_end(j);
    const char *t = json_text(j, NULL);
    assert_non_null(t);
    char flat[128];
    size_t n = 0;
    for (; *t && n + 1 < sizeof flat; t++)
        if (*t != ' ' && *t != '\n') flat[n++] = *t;
    flat[n] = 0;
    assert_string_equal(flat, "{\"all\":12.5,\"share\":0.25,\"count\":7,\"name\":\"gpu\"}");
    assert_true(json_field_num(&m, &nums[1]) == 0.25);
    json_free(j);
}

/* A fresh directory under /tmp (not the real /dev: nothing here touches it). */
static void fresh_dir(char *dir, size_t len) {
    snprintf(dir, len, "/tmp/test_report_fileout.XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static int file_kind(const char *path) {
    struct stat sb;
    if (lstat(path, &sb) != 0) return 0;
    return S_ISLNK(sb.st_mode) ? 'l' : S_ISFIFO(sb.st_mode) ? 'p' : S_ISREG(sb.st_mode) ? 'f' : S_ISCHR(sb.st_mode) ? 'c' : '?';
}

static int entries(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = -1;
        pclose(p);
    }
    return n;
}

static void test_fileout_rule(void **state) {
    (void)state;
    char dir[256], a[512], b[512], err[1024];
    fresh_dir(dir, sizeof dir);
    /* a new file, then replaced: atomically, no temporary left */
    snprintf(a, sizeof a, "%s/new.txt", dir);
    assert_int_equal(fileout_write(a, 0, 0666, "one\n", 4, err, sizeof err), 0);
    assert_int_equal(fileout_write(a, 0, 0666, "two\n", 4, err, sizeof err), 0);
    assert_int_equal(file_kind(a), 'f');
    assert_int_equal(entries(dir), 1);
    /* a symlink (relative) is followed; the link stays */
    snprintf(b, sizeof b, "%s/link.txt", dir);
    assert_int_equal(symlink("new.txt", b), 0);
    assert_int_equal(fileout_write(b, 0, 0666, "three\n", 6, err, sizeof err), 0);
    assert_int_equal(file_kind(b), 'l');
    FILE *f = fopen(a, "r");
    char line[32] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "three\n");
    /* a dangling symlink creates its target */
    snprintf(b, sizeof b, "%s/dangling", dir);
    assert_int_equal(symlink("made.txt", b), 0);
    assert_int_equal(fileout_write(b, 0, 0666, "x", 1, err, sizeof err), 0);
    snprintf(a, sizeof a, "%s/made.txt", dir);
    assert_int_equal(file_kind(a), 'f');
    assert_int_equal(file_kind(b), 'l');
    /* a FIFO without a reader: status 1 at once, still a FIFO */
    snprintf(a, sizeof a, "%s/fifo", dir);
    assert_int_equal(mkfifo(a, 0666), 0);
    assert_int_equal(fileout_write(a, 0, 0666, "x", 1, err, sizeof err), 1);
    assert_non_null(strstr(err, "no reader"));
    assert_int_equal(file_kind(a), 'p');
    /* ... refused outright where a regular file is needed (a database) */
    assert_int_equal(fileout_write(a, FILEOUT_REGULAR, 0666, "x", 1, err, sizeof err), 2);
    assert_non_null(strstr(err, "not a regular file"));
    /* with a reader (held here), written in place */
    int rd = open(a, O_RDWR);
    assert_true(rd >= 0);
    assert_int_equal(fileout_write(a, 0, 0666, "through", 7, err, sizeof err), 0);
    char got[16] = "";
    assert_int_equal(read(rd, got, sizeof got - 1), 7);
    assert_string_equal(got, "through");
    close(rd);
    assert_int_equal(file_kind(a), 'p');
    /* a directory: bad input */
    assert_int_equal(fileout_write(dir, 0, 0666, "x", 1, err, sizeof err), 2);
    /* a symlink loop */
    snprintf(a, sizeof a, "%s/loop", dir);
    assert_int_equal(symlink("loop", a), 0);
    assert_int_equal(fileout_write(a, 0, 0666, "x", 1, err, sizeof err), 1);
    /* as root: a full device made here (1,7) gives status 1 naming it, no temporary */
    if (geteuid() == 0) {
        snprintf(a, sizeof a, "%s/full", dir);
        assert_int_equal(mknod(a, S_IFCHR | 0666, makedev(1, 7)), 0);
        int before = entries(dir);
        assert_int_equal(fileout_write(a, 0, 0666, "x", 1, err, sizeof err), 1);
        assert_non_null(strstr(err, "/full: cannot write"));
        assert_int_equal(file_kind(a), 'c');
        assert_int_equal(entries(dir), before);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_html_without_gnuplot),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_md_and_csv),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_incomplete_and_errors),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_job_cost_not_cluster),
        cmocka_unit_test(test_numbers_formatted),
        cmocka_unit_test(test_serving_report),
        cmocka_unit_test(test_escapers),
        cmocka_unit_test(test_json_member_tables),
        cmocka_unit_test(test_fileout_rule),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
