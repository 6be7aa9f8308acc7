/*
 * test_scenario: the scenario loader (scenarios/scenario.c) on good and bad
 * input.
 *
 * Bad input is the corpus in tests/bad/, one file per mistake, with the line
 * and a piece of the message each must give in tests/bad/expected.txt
 * ("FILE|LINE|SUBSTRING[|world]"). Every case is its own cmocka test: the
 * load fails, leaves *out NULL, prints nothing, and the one-line error starts
 * with "tests/bad/FILE:LINE: " and contains SUBSTRING. Cases marked "world"
 * are plans the loader accepts and world_new() refuses (memory fit, which
 * needs the training model); for those the same is checked of world_new().
 *
 * Good input: every .xml in scenarios/ loads, and figures read from them and
 * from small inline scenarios are the written values converted to SI units
 * by the definitions in CONTRACT.md (y = 365 d, KB = 1e3 B, KiB = 2^10 B,
 * b = B/8, rates per second, k M T = 1e3 1e6 1e12). Decimal units must
 * come out as the double nearest the written figure (exact compare); units
 * that multiply (h, min, y, KiB, bits) are allowed one rounding (1e-15
 * relative). Training length: steps = ceil(tokens / (global_batch * seq_len)).
 *
 * Paths are relative: run from the project root (make test does).
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
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/sysmacros.h>

#include "scenarios/profile.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

#define BAD_DIR "tests/bad/"
#define EXPECTED BAD_DIR "expected.txt"
#define MAX_CASES 512

typedef struct bad_case {
    char file[128];                 /* name inside tests/bad/ */
    int line;
    char want[512];                 /* substring of the message */
    int world;                      /* refused by world_new(), not the loader */
} bad_case;

static bad_case cases[MAX_CASES];
static int n_cases;

/* What *out holds before a load that must set it to NULL. */
static scenario sentinel;

/* ---- helpers ------------------------------------------------------------ */

/* Read tests/bad/expected.txt into cases[]. Returns the count, -1 on a
 * malformed line (printed). */
static int read_expected(void) {
    FILE *f = fopen(EXPECTED, "r");
    char buf[1024];
    int lineno = 0;
    if (!f) {
        fprintf(stderr, "cannot open %s (run from the project root)\n", EXPECTED);
        return -1;
    }
    n_cases = 0;
    while (fgets(buf, sizeof buf, f)) {
        lineno++;
        buf[strcspn(buf, "\r\n")] = 0;
        if (buf[0] == 0 || buf[0] == '#') continue;
        char *p1 = strchr(buf, '|');
        char *p2 = p1 ? strchr(p1 + 1, '|') : NULL;
        char *p3 = p2 ? strchr(p2 + 1, '|') : NULL;
        char *end = NULL;
        if (!p1 || !p2 || n_cases == MAX_CASES) goto bad;
        *p1 = *p2 = 0;
        if (p3) *p3 = 0;
        bad_case *c = &cases[n_cases];
        long ln = strtol(p1 + 1, &end, 10);
        if (*end || ln < 0 || ln > 1000000 || strlen(buf) >= sizeof c->file || !p2[1] ||
            strlen(p2 + 1) >= sizeof c->want || (p3 && strcmp(p3 + 1, "world") != 0))
            goto bad;
        memcpy(c->file, buf, strlen(buf) + 1);          /* length checked above */
        c->line = (int)ln;
        memcpy(c->want, p2 + 1, strlen(p2 + 1) + 1);
        c->world = p3 != NULL;
        n_cases++;
        continue;
    bad:
        fprintf(stderr, "%s:%d: expected FILE|LINE|SUBSTRING[|world]\n", EXPECTED, lineno);
        fclose(f);
        return -1;
    }
    fclose(f);
    return n_cases;
}

/* stderr goes to a temporary file between capture_begin and capture_end,
 * which returns how many bytes were written there: the loader must print
 * nothing, libxml2 included. */
typedef struct capture {
    int saved_fd;
    FILE *tmp;
} capture;

static void capture_begin(capture *c) {
    fflush(stderr);
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved_fd = dup(2);
    assert_true(c->saved_fd >= 0);
    assert_true(dup2(fileno(c->tmp), 2) >= 0);
}

static long capture_end(capture *c, char *text, size_t len) {
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
static void check_error(const char *err, const char *prefix, const char *want) {
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, want) || strchr(err, '\n')) {
        print_error("got:  %s\nwant: %s... containing \"%s\"\n", err, prefix, want);
        fail();
    }
}

/* Load text from memory; must succeed. */
static scenario *load_text(const char *text) {
    scenario *s = NULL;
    char err[2048] = "";
    int rc = scenario_load_memory(text, strlen(text), "inline.xml", &s, err, sizeof err);
    if (rc != 0) print_error("inline scenario refused: %s\n%s\n", err, text);
    assert_int_equal(rc, 0);
    assert_non_null(s);
    return s;
}

/* A one-node cluster with `extra` inside <cluster> and `body` after it. */
static scenario *load_parts(const char *root_attrs, const char *extra, const char *body) {
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

static void assert_close(double got, double want, double rel, const char *what) {
    if (!(fabs(got - want) <= rel * fabs(want))) {
        print_error("%s: got %.17g want %.17g\n", what, got, want);
        fail();
    }
}

/* ---- the bad corpus ----------------------------------------------------- */

static void test_bad_case(void **state) {
    const bad_case *c = *state;
    char path[256], prefix[300], err[2048], printed[512];
    scenario *s = &sentinel;        /* not NULL: the loader must clear it */
    capture cap;

    snprintf(path, sizeof path, BAD_DIR "%.*s", (int)sizeof c->file, c->file);
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, c->line);
    memset(err, 'x', sizeof err);
    err[sizeof err - 1] = 0;

    capture_begin(&cap);
    int rc = scenario_load(path, &s, err, sizeof err);
    long noise = capture_end(&cap, printed, sizeof printed);
    if (noise) print_error("the loader printed to stderr: %s\n", printed);
    assert_int_equal(noise, 0);

    if (!c->world) {
        if (rc == 0) print_error("%s: accepted; want an error %s... \"%s\"\n", path, prefix, c->want);
        assert_int_equal(rc, -1);
        assert_null(s);
        check_error(err, prefix, c->want);
        return;
    }

    /* Refused by world_new(), as `check` and `run` do after loading. */
    if (rc != 0) print_error("%s: the loader refused it: %s\n", path, err);
    assert_int_equal(rc, 0);
    assert_non_null(s);
    metric_bus *bus = metrics_new();
    assert_non_null(bus);
    world *w = world_new(s, bus, err, sizeof err);
    if (w) print_error("%s: world_new accepted it; want %s... \"%s\"\n", path, prefix, c->want);
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
    assert_null(w);
    check_error(err, prefix, c->want);
}

/* Every file in tests/bad/ has a line in expected.txt and the other way
 * round, so a new case cannot be forgotten. */
static void test_corpus_complete(void **state) {
    (void)state;
    glob_t g;
    int missing = 0;
    assert_int_equal(glob(BAD_DIR "*", 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *name = g.gl_pathv[i] + strlen(BAD_DIR);
        if (!strcmp(name, "expected.txt")) continue;
        int found = 0;
        for (int k = 0; k < n_cases && !found; k++) found = !strcmp(cases[k].file, name);
        if (!found) {
            print_error("%s%s has no line in %s\n", BAD_DIR, name, EXPECTED);
            missing++;
        }
    }
    for (int k = 0; k < n_cases; k++) {
        char path[256];
        snprintf(path, sizeof path, BAD_DIR "%.*s", (int)sizeof cases[k].file, cases[k].file);
        struct stat lst;
        if (lstat(path, &lst) != 0) {           /* symlink loops and dangling links are cases */
            print_error("%s names %s, which does not exist\n", EXPECTED, path);
            missing++;
        }
        for (int j = 0; j < k; j++)
            if (!strcmp(cases[j].file, cases[k].file)) {
                print_error("%s lists %s twice\n", EXPECTED, cases[k].file);
                missing++;
            }
    }
    globfree(&g);
    assert_int_equal(missing, 0);
    assert_true(n_cases >= 200);
}

/* ---- files that are not scenarios --------------------------------------- */

static void test_directory_and_missing_file(void **state) {
    (void)state;
    scenario *s = &sentinel;
    char err[512];
    assert_int_equal(scenario_load("tests/bad", &s, err, sizeof err), -1);
    assert_null(s);
    check_error(err, "tests/bad:", "is a directory");

    s = &sentinel;
    assert_int_equal(scenario_load("tests/bad/no-such-file.xml", &s, err, sizeof err), -1);
    assert_null(s);
    check_error(err, "tests/bad/no-such-file.xml:", "cannot open");

    /* A FIFO: never opened (reading it would block), refused by type. */
    char fifo[64];
    snprintf(fifo, sizeof fifo, "/tmp/ct-test-fifo-%ld", (long)getpid());
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    s = &sentinel;
    assert_int_equal(scenario_load(fifo, &s, err, sizeof err), -1);
    assert_null(s);
    check_error(err, fifo, "not a regular file");
    unlink(fifo);
}

/* Write text to dir/name; returns 0. */
static int write_file(const char *dir, const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* Every input named by a path goes through scenarios/infile.c: a FIFO (and,
 * as root, a character device made here with mknod) is refused by its type
 * and never blocks in open. Before, a FIFO as <arrivals href>, <host-profile
 * href> or a host profile file blocked forever; alarm() turns such a hang
 * into a failure (SIGALRM kills the test) instead of a stall. Nothing here
 * touches the real /dev. */
static void test_special_files_refused(void **state) {
    (void)state;
    char dir[] = "/tmp/ct-test-infile-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[128], dev[128], sock_dir[160];
    snprintf(fifo, sizeof fifo, "%s/in.fifo", dir);
    snprintf(dev, sizeof dev, "%s/null.dev", dir);
    snprintf(sock_dir, sizeof sock_dir, "%s/subdir", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(sock_dir, 0700), 0);
    int have_dev = geteuid() == 0 && mknod(dev, S_IFCHR | 0600, makedev(1, 3)) == 0;
    alarm(60);

    static const char *const wrap[] = {
        /* a request trace */
        "<?xml version=\"1.0\"?>\n<scenario name=\"r\">\n<cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>\n"
        "<workload><inference name=\"c\" model=\"llama3-8b\">\n<arrivals process=\"trace\" href=\"%s\"/>\n"
        "</inference></workload>\n</scenario>\n",
        /* a job trace */
        "<?xml version=\"1.0\"?>\n<scenario name=\"t\">\n<cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>\n"
        "<workload><trace href=\"%s\"/></workload>\n</scenario>\n",
        /* a host profile */
        "<?xml version=\"1.0\"?>\n<scenario name=\"h\">\n<microbenchmarks>\n<host-profile href=\"%s\"/>\n"
        "<gemm m=\"64\" n=\"64\" k=\"64\"/>\n</microbenchmarks>\n</scenario>\n",
    };
    static const int line[] = { 5, 4, 4 };
    const char *targets[3] = { fifo, sock_dir, have_dev ? dev : NULL };
    const char *kinds[3] = { "not a regular file (a FIFO)", "is a directory", "not a regular file (a character device)" };
    for (int t = 0; t < 3; t++) {
        if (!targets[t]) continue;
        char err[1024], prefix[256], text[1024], want[512];
        for (size_t w = 0; w < sizeof wrap / sizeof wrap[0]; w++) {
            snprintf(text, sizeof text, wrap[w], targets[t]);
            assert_int_equal(write_file(dir, "s.xml", text), 0);
            snprintf(prefix, sizeof prefix, "%s/s.xml:%d: ", dir, line[w]);
            snprintf(want, sizeof want, "%s", kinds[t]);
            char path[256];
            snprintf(path, sizeof path, "%s/s.xml", dir);
            scenario *s = &sentinel;
            assert_int_equal(scenario_load(path, &s, err, sizeof err), -1);
            assert_null(s);
            check_error(err, prefix, want);
            assert_non_null(strstr(err + strlen(prefix), targets[t]));
        }
        /* the file itself as a scenario and as a profile */
        scenario *s = &sentinel;
        assert_int_equal(scenario_load(targets[t], &s, err, sizeof err), -1);
        assert_null(s);
        snprintf(prefix, sizeof prefix, "%s:0: ", targets[t]);
        check_error(err, prefix, kinds[t]);
        host_profile h;
        assert_int_equal(profile_load(targets[t], &h, err, sizeof err), -1);
        check_error(err, prefix, kinds[t]);
    }
    alarm(0);
    char path[256];
    snprintf(path, sizeof path, "%s/s.xml", dir);
    unlink(path);
    unlink(fifo);
    if (have_dev) unlink(dev);
    rmdir(sock_dir);
    assert_int_equal(rmdir(dir), 0);
}

/* A scenario of n elements made by line(i) ("<nodes .../>"), wrapped in
 * head and tail, each element on its own line starting at line 4. */
static char *many(int n, const char *head, const char *tail, int (*line)(char *, size_t, int), size_t *len) {
    size_t cap = strlen(head) + strlen(tail) + (size_t)n * 96 + 1, k = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    k += (size_t)snprintf(t, cap, "%s", head);
    for (int i = 0; i < n; i++) k += (size_t)line(t + k, cap - k, i);
    k += (size_t)snprintf(t + k, cap - k, "%s", tail);
    *len = k;
    return t;
}
static int node_line(char *b, size_t n, int i) { return snprintf(b, n, "    <nodes type=\"dgx-h100\" count=\"%d\"/>\n", 1 + i % 3); }
static int queue_line(char *b, size_t n, int i) { return snprintf(b, n, "    <queue name=\"q%d\" quota-gpus=\"8\"/>\n", i); }
static int odd_node_line(char *b, size_t n, int i) {
    return snprintf(b, n, "    <nodes type=\"dgx-h100\" count=\"1\"%s/>\n", i == 899 ? " colour=\"red\"" : "");
}
static int dup_queue_line(char *b, size_t n, int i) { return snprintf(b, n, "    <queue name=\"q%d\"/>\n", i == 99999 ? 7 : i); }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Loading is linear in the file: 60,000 <nodes> (21 s before) and 100,000
 * queues (92 s before: line_of scanned the text from its start for every
 * element, and each name was compared with every earlier one). The test
 * checks the result and prints the time; tests/bench_load.c checks how the
 * time grows (no test asserts a time). */
static void test_many_elements(void **state) {
    (void)state;
    char err[1024];
    size_t len;
    scenario *s = NULL;
    char *t = many(60000, "<?xml version=\"1.0\"?>\n<scenario name=\"big\">\n  <cluster>\n", "  </cluster>\n</scenario>\n",
                   node_line, &len);
    double t0 = now_s();
    int rc = scenario_load_memory(t, len, "nodes.xml", &s, err, sizeof err);
    double t1 = now_s();
    free(t);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->n_nodes, 60000);
    assert_int_equal(s->nodes[0].line, 4);
    assert_int_equal(s->nodes[59999].line, 60003);
    assert_int_equal(scenario_gpus(s), 8 * (20000 * (1 + 2 + 3)));
    scenario_free(s);
    print_message("60,000 <nodes>: loaded in %.3f s\n", t1 - t0);

    static const char head[] = "<?xml version=\"1.0\"?>\n<scenario name=\"q\">\n  <scheduler>\n";
    static const char tail[] = "  </scheduler>\n  <cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>\n"
                               "  <workload><jobs name=\"j\" count=\"1\" gpus=\"1\" duration=\"1h\" rate=\"1/h\" queue=\"q99999\"/></workload>\n"
                               "</scenario>\n";
    t = many(100000, head, tail, queue_line, &len);
    t0 = now_s();
    rc = scenario_load_memory(t, len, "queues.xml", &s, err, sizeof err);
    t1 = now_s();
    free(t);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->n_queues, 100000);
    assert_int_equal(s->queues[99999].line, 100003);
    assert_string_equal(s->jobs[0].queue, "q99999");
    scenario_free(s);
    print_message("100,000 <queue>: loaded in %.3f s\n", t1 - t0);

    /* the last of 100,000 repeats the eighth: found, with both lines */
    t = many(100000, head, "  </scheduler>\n</scenario>\n", dup_queue_line, &len);
    s = &sentinel;
    assert_int_equal(scenario_load_memory(t, len, "dup.xml", &s, err, sizeof err), -1);
    free(t);
    assert_null(s);
    check_error(err, "dup.xml:100003: ", "<queue name=\"q7\">: queue name already used on line 11");

    /* the grammar sees long runs in batches: a mistake late in one is found */
    t = many(1000, "<?xml version=\"1.0\"?>\n<scenario name=\"big\">\n  <cluster>\n", "  </cluster>\n</scenario>\n",
             odd_node_line, &len);
    s = &sentinel;
    assert_int_equal(scenario_load_memory(t, len, "odd.xml", &s, err, sizeof err), -1);
    free(t);
    assert_null(s);
    check_error(err, "odd.xml:903: ", "<nodes");
}

/* A file the user may not read: "cannot open: Permission denied" at line 0.
 * Root reads anything, so as root a child process drops to uid/gid 65534
 * (nobody) first; the file lives in /tmp, which nobody can search. */
static void test_unreadable_file(void **state) {
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/ct-test-unreadable-%ld.xml", (long)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("<?xml version=\"1.0\"?>\n<scenario name=\"x\"/>\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0), 0);
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
        scenario *s = NULL;
        char err[512] = "";
        int rc = scenario_load(path, &s, err, sizeof err);
        ssize_t w = write(fd[1], err, strlen(err) + 1);
        _exit(rc == -1 && s == NULL && w > 0 ? 0 : 4);
    }
    close(fd[1]);
    char err[512] = "";
    ssize_t got = read(fd[0], err, sizeof err - 1);
    close(fd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    unlink(path);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 3) skip();                   /* cannot drop privileges here */
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(got > 0);
    err[got] = 0;
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%s:0: ", path);
    check_error(err, prefix, "cannot open: Permission denied");
}

/* A file over the 16 MiB limit is refused by its size, before it is read
 * (sparse, so the test writes nothing). */
static void test_huge_file(void **state) {
    (void)state;
    char path[64], err[512];
    snprintf(path, sizeof path, "/tmp/ct-test-huge-%ld.xml", (long)getpid());
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)1 << 40), 0);     /* 1 TiB, sparse */
    close(fd);
    scenario *s = &sentinel;
    int rc = scenario_load(path, &s, err, sizeof err);
    unlink(path);
    assert_int_equal(rc, -1);
    assert_null(s);
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%s:1: ", path);
    check_error(err, prefix, "a scenario XML file may be at most 16777216 bytes");
}

/* A short err buffer gets a truncated, terminated message. */
static void test_short_error_buffer(void **state) {
    (void)state;
    scenario *s = NULL;
    char err[16];
    memset(err, 'x', sizeof err);
    assert_int_equal(scenario_load(BAD_DIR "27-unknown-node-type.xml", &s, err, 12), -1);
    assert_null(s);
    assert_true(strlen(err) < 12);
    assert_int_equal(err[12], 'x');
    assert_int_equal(strncmp(err, "tests/bad/2", strlen(err)), 0);
}

static void test_free_null(void **state) {
    (void)state;
    scenario_free(NULL);
}

/* ---- the shipped scenarios ---------------------------------------------- */

static void test_examples_load(void **state) {
    (void)state;
    glob_t g;
    assert_int_equal(glob("scenarios/*.xml", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 1);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        scenario *s = NULL;
        char err[2048] = "";
        int rc = scenario_load(g.gl_pathv[i], &s, err, sizeof err);
        if (rc != 0) print_error("%s: %s\n", g.gl_pathv[i], err);
        assert_int_equal(rc, 0);
        assert_non_null(s);
        assert_string_equal(s->file, g.gl_pathv[i]);
        assert_true(s->name[0] != 0);
        assert_true(s->n_nodes >= 1);
        assert_true(scenario_gpus(s) >= 1);
        assert_non_null(s->xml_text);
        assert_true(s->xml_len > 0);
        for (int k = 0; k < s->n_training; k++) {
            const sc_training *t = &s->training[k];
            const train_plan *p = &t->plan;
            assert_int_equal(t->gpus, p->tp * p->pp * p->dp * p->cp);
            assert_true(t->steps >= 1);
        }
        scenario_free(s);
    }
    globfree(&g);
}

/* scenarios/default.xml: 128 DGX H100 nodes, a 70B job on 768 GPUs
 * (tp 8, pp 4, dp 24), 1T tokens of 1152 x 8192-token batches, checkpoints
 * every 2h, and 200 research jobs arriving at 12/h for 3h each. */
static void test_default_values(void **state) {
    (void)state;
    scenario *s = NULL;
    char err[2048] = "";
    int rc = scenario_load("scenarios/default.xml", &s, err, sizeof err);
    if (rc != 0) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_string_equal(s->name, "default");
    assert_int_equal(s->seed, 1);
    assert_int_equal(s->n_nodes, 1);
    assert_string_equal(s->nodes[0].type, "dgx-h100");
    assert_int_equal(s->nodes[0].count, 128);
    assert_int_equal(s->nodes[0].line, 14);
    assert_int_equal(scenario_node_count(s), 128);
    assert_int_equal(scenario_gpus(s), 1024);
    assert_string_equal(scenario_node_spec(s, 0)->name, "dgx-h100");
    assert_null(scenario_node_spec(s, 1));
    assert_int_equal(s->network.topology, TOPO_FAT_TREE);
    assert_int_equal(s->network.nic_mode, NIC_DIRECT);
    assert_true(s->network.oversubscription == 1);
    assert_int_equal(s->n_storage, 1);
    assert_string_equal(s->storage[0].name, "ckpt");
    assert_string_equal(s->storage[0].kind, "parallel-fs");
    assert_true(s->storage[0].bw_bytes_per_s == 400e9);

    assert_int_equal(s->n_training, 1);
    const sc_training *t = &s->training[0];
    assert_string_equal(t->name, "pretrain-70b");
    assert_int_equal(t->plan.tp, 8);
    assert_int_equal(t->plan.pp, 4);
    assert_int_equal(t->plan.dp, 24);
    assert_int_equal(t->plan.cp, 1);
    assert_int_equal(t->gpus, 768);
    assert_int_equal(t->plan.global_batch, 1152);
    assert_int_equal(t->plan.micro_batch, 1);
    assert_int_equal(t->plan.seq_len, 8192);
    assert_int_equal(t->plan.sharding, SHARD_ZERO1);
    assert_int_equal(t->plan.recompute, RECOMPUTE_SELECTIVE);
    assert_int_equal(t->plan.precision, PREC_BF16);
    assert_string_equal(t->preset, "llama3-70b");
    assert_int_equal(t->model.layers, 80);
    assert_int_equal(t->model.hidden, 8192);
    assert_string_equal(t->storage, "ckpt");
    assert_string_equal(t->node_type, "dgx-h100");
    assert_true(t->tokens == 1e12);
    assert_int_equal(t->steps, (int64_t)ceil(1e12 / (1152.0 * 8192.0)));   /* 105,964 */
    assert_int_equal(t->steps, 105964);
    assert_true(t->checkpoint.present);
    assert_false(t->checkpoint.interval_auto);
    assert_true(t->checkpoint.interval_s == 7200);
    assert_string_equal(t->checkpoint.mode, "async");

    assert_int_equal(s->n_jobs, 1);
    const sc_jobs *j = &s->jobs[0];
    assert_string_equal(j->name, "research");
    assert_int_equal(j->count, 200);
    assert_int_equal(j->gpus, 8);
    assert_close(j->rate_per_s, 12.0 / 3600, 1e-15, "rate 12/h");
    assert_true(j->duration_s == 3 * 3600);
    assert_string_equal(j->duration_distribution, "exponential");
    scenario_free(s);
}

/* The Llama 3 405B plan of the paper: 16,384 GPUs = 8 x 16 x 128 x 1,
 * 15.6T tokens in batches of 2048 x 8192 tokens. */
static void test_llama3_405b_values(void **state) {
    (void)state;
    scenario *s = NULL;
    char err[2048] = "";
    int rc = scenario_load("scenarios/llama3-405b-16k.xml", &s, err, sizeof err);
    if (rc != 0) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    const sc_training *t = &s->training[0];
    assert_int_equal(t->plan.tp, 8);
    assert_int_equal(t->plan.pp, 16);
    assert_int_equal(t->plan.dp, 128);
    assert_int_equal(t->plan.cp, 1);
    assert_int_equal(t->gpus, 16384);
    assert_int_equal(t->plan.sharding, SHARD_FSDP);
    assert_true(t->checkpoint.interval_auto);
    assert_true(t->tokens == 15.6e12);
    assert_int_equal(t->steps, (int64_t)ceil(15.6e12 / (2048.0 * 8192.0)));  /* 929,833 */
    assert_true(s->duration_s == 54 * 86400.0);
    assert_int_equal(s->spares_warm, 48);
    assert_int_equal(s->n_failures, 1);
    assert_string_equal(s->failures[0].profile, "llama3");
    assert_string_equal(s->failures[0].distribution, "exponential");
    scenario_free(s);
}

/* ---- derived plan sizes --------------------------------------------------- */

/* gpus left out: tp*pp*dp*cp. */
static void test_gpus_default(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload><training name=\"x\" tp=\"2\" pp=\"2\" dp=\"3\" cp=\"2\" steps=\"10\">"
        "<model preset=\"llama3-8b\"/></training></workload>");
    assert_int_equal(s->training[0].gpus, 24);
    assert_int_equal(s->training[0].plan.dp, 3);
    assert_int_equal(s->training[0].steps, 10);
    scenario_free(s);
}

/* dp left out: gpus / (tp*pp*cp). */
static void test_dp_from_gpus(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload><training name=\"x\" gpus=\"32\" tp=\"8\" pp=\"2\" steps=\"10\">"
        "<model preset=\"llama3-8b\"/></training></workload>");
    assert_int_equal(s->training[0].gpus, 32);
    assert_int_equal(s->training[0].plan.dp, 2);
    assert_int_equal(s->training[0].plan.cp, 1);
    scenario_free(s);
}

/* tokens -> steps rounds up: 1M tokens in 8 x 4096 = 32,768-token steps is
 * 30.52 steps, so 31; an exact multiple does not round. */
static void test_tokens_to_steps(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload>"
        "<training name=\"a\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"1M\">"
        "<model preset=\"llama3-8b\"/></training>"
        "<training name=\"b\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"327680\">"
        "<model preset=\"llama3-8b\"/></training>"
        "</workload>");
    assert_int_equal(s->training[0].steps, (int64_t)ceil(1e6 / (8.0 * 4096)));
    assert_int_equal(s->training[0].steps, 31);
    assert_int_equal(s->training[1].steps, 10);
    scenario_free(s);
}

/* ---- every unit in scenario attributes ------------------------------------ */

static double duration_of(const char *value) {
    char attrs[128];
    snprintf(attrs, sizeof attrs, "duration=\"%s\"", value);
    scenario *s = load_parts(attrs, "", "");
    double v = s->duration_s;
    scenario_free(s);
    return v;
}

static void test_duration_units(void **state) {
    (void)state;
    assert_close(duration_of("1.2y"), 1.2 * 365 * 86400, 1e-15, "1.2y");
    assert_close(duration_of("2w"), 2 * 7 * 86400.0, 1e-15, "2w");
    assert_close(duration_of("54d"), 54 * 86400.0, 1e-15, "54d");
    assert_close(duration_of("3h"), 3 * 3600.0, 1e-15, "3h");
    assert_close(duration_of("90min"), 90 * 60.0, 1e-15, "90min");
    assert_true(duration_of("90s") == 90);
    assert_true(duration_of("250ms") == 0.25);
    assert_true(duration_of("10us") == 10e-6);
    assert_true(duration_of("5ns") == 5e-9);
    assert_true(duration_of("3600") == 3600);            /* plain number = seconds */
    assert_true(duration_of(" 2.5e3 s ") == 2500);       /* blanks around, exponent */
}

static const sc_storage *storage_of(scenario **sp, const char *attrs) {
    char extra[256];
    snprintf(extra, sizeof extra, "<storage name=\"st\" kind=\"object\" %s/>", attrs);
    *sp = load_parts("", extra, "");
    assert_int_equal((*sp)->n_storage, 1);
    return &(*sp)->storage[0];
}

static void test_size_units(void **state) {
    (void)state;
    static const struct { const char *z; double want; int exact; } t[] = {
        { "80GB", 80e9, 1 }, { "1.5TB", 1.5e12, 1 }, { "130e9B", 130e9, 1 },
        { "4096", 4096, 1 }, { "2PB", 2e15, 1 }, { "512MiB", 512.0 * 1048576, 0 },
        { "1GiB", 1073741824.0, 0 }, { "8Gb", 1e9, 0 }, { "3KB", 3000, 1 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char attrs[64];
        scenario *s;
        snprintf(attrs, sizeof attrs, "capacity=\"%s\"", t[i].z);
        const sc_storage *st = storage_of(&s, attrs);
        if (t[i].exact && st->capacity_bytes != t[i].want)
            print_error("capacity=\"%s\": got %.17g want %.17g\n", t[i].z, st->capacity_bytes, t[i].want);
        if (t[i].exact) assert_true(st->capacity_bytes == t[i].want);
        else assert_close(st->capacity_bytes, t[i].want, 1e-15, t[i].z);
        scenario_free(s);
    }
}

static void test_bandwidth_units(void **state) {
    (void)state;
    static const struct { const char *z; double want; int exact; } t[] = {
        { "400Gb/s", 50e9, 0 }, { "3.35TB/s", 3.35e12, 1 }, { "25GB/s", 25e9, 1 },
        { "100MiB/s", 100.0 * 1048576, 0 }, { "1e9", 1e9, 1 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char attrs[64];
        scenario *s;
        snprintf(attrs, sizeof attrs, "bandwidth=\"%s\"", t[i].z);
        const sc_storage *st = storage_of(&s, attrs);
        if (t[i].exact) assert_true(st->bw_bytes_per_s == t[i].want);
        else assert_close(st->bw_bytes_per_s, t[i].want, 1e-15, t[i].z);
        scenario_free(s);
    }
}

static void test_rate_units(void **state) {
    (void)state;
    static const struct { const char *z; double want; } t[] = {
        { "10/s", 10 }, { "600/min", 10 }, { "6/h", 6.0 / 3600 }, { "2/d", 2.0 / 86400 },
        { "1/w", 1.0 / (7 * 86400) }, { "5/ms", 5000 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "<workload><jobs name=\"j\" count=\"3\" rate=\"%s\" gpus=\"1\" duration=\"1h\"/></workload>",
                 t[i].z);
        scenario *s = load_parts("", "", body);
        assert_close(s->jobs[0].rate_per_s, t[i].want, 1e-15, t[i].z);
        scenario_free(s);
    }
}

/* Counts: node counts and job counts take k/M suffixes; tokens take T/B. */
static void test_count_units(void **state) {
    (void)state;
    scenario *s = load_parts("", "",
        "<workload><jobs name=\"j\" count=\"4k\" arrivals=\"fixed\" gpus=\"1\" duration=\"1h\"/>"
        "<jobs name=\"k\" count=\"2M\" arrivals=\"fixed\" gpus=\"8\" duration=\"1h\"/>"
        "<training name=\"a\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"15.6T\">"
        "<model preset=\"llama3-8b\"/></training>"
        "<training name=\"b\" gpus=\"8\" dp=\"8\" global-batch=\"8\" seq-len=\"4096\" tokens=\"5B\">"
        "<model preset=\"llama3-8b\"/></training>"
        "<training name=\"c\" gpus=\"8\" dp=\"8\" steps=\"1.5k\">"
        "<model preset=\"llama3-8b\"/></training></workload>");
    assert_int_equal(s->jobs[0].count, 4000);
    assert_int_equal(s->jobs[1].count, 2000000);
    assert_true(s->training[0].tokens == 15.6e12);
    assert_true(s->training[1].tokens == 5e9);
    assert_int_equal(s->training[2].steps, 1500);
    scenario_free(s);

    s = load_text("<scenario name=\"n\"><cluster><nodes type=\"hgx-h200\" count=\"1k\"/></cluster></scenario>");
    assert_int_equal(s->nodes[0].count, 1000);
    assert_int_equal(scenario_gpus(s), 8000);
    scenario_free(s);
}

/* Plain numbers: oversubscription, Weibull shape, percentile; and the
 * durations of failures, checkpoints and SLOs. */
static void test_number_and_other_units(void **state) {
    (void)state;
    scenario *s = load_parts("",
        "<network topology=\"rail-optimized\" oversubscription=\"2.5\" nic-mode=\"overlay\"/>",
        "<failures><failure component=\"node\" mtbf=\"1.2y\" distribution=\"weibull\" shape=\"0.8\" mttr=\"4h\"/></failures>"
        "<workload><inference name=\"chat\" model=\"llama3-70b\" precision=\"fp8\" tp=\"2\" replicas=\"2\">"
        "<arrivals process=\"poisson\" rate=\"20/s\" count=\"20k\"/>"
        "<requests input-tokens=\"1k\" output-tokens=\"200\"/>"
        "<slo ttft=\"1s\" tpot=\"50ms\" percentile=\"99.9\"/></inference></workload>");
    assert_true(s->network.oversubscription == 2.5);
    assert_int_equal(s->network.topology, TOPO_RAIL_OPTIMIZED);
    assert_int_equal(s->network.nic_mode, NIC_OVERLAY);
    assert_true(s->failures[0].shape == 0.8);
    assert_close(s->failures[0].mtbf_s, 1.2 * 365 * 86400, 1e-15, "mtbf 1.2y");
    assert_true(s->failures[0].mttr_s == 4 * 3600.0);
    const sc_inference *f = &s->inference[0];
    assert_true(f->rate_per_s == 20);
    assert_int_equal(f->count, 20000);
    assert_int_equal(f->input_tokens, 1000);
    assert_true(f->slo_ttft_s == 1);
    assert_true(f->slo_tpot_s == 0.05);
    assert_true(f->slo_percentile == 99.9);
    assert_int_equal(f->precision, PREC_FP8);
    scenario_free(s);
}

/* Microbenchmark sizes: min/max-size with units, factor a plain number.
 * As in nccl-tests, 1KB means 1024 bytes here (CONTRACT.md's example prints
 * 1073741824 for a 1 GB all-reduce); binary units stay binary. */
static void test_microbench_sizes(void **state) {
    (void)state;
    scenario *s = load_text(
        "<scenario name=\"nccl\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
        "<microbenchmarks>"
        "<collective op=\"allreduce\" ranks=\"8\" min-size=\"1KB\" max-size=\"8GB\" factor=\"2\"/>"
        "<copy kind=\"h2d\" min-size=\"1MiB\" max-size=\"1GiB\" factor=\"4\"/>"
        "<storage-write size=\"1GB\" files=\"4\"/>"
        "</microbenchmarks></scenario>");
    assert_int_equal(s->n_microbench, 3);
    assert_int_equal(s->microbench[0].kind, MB_COLLECTIVE);
    assert_int_equal(s->microbench[0].op, COLL_ALLREDUCE);
    assert_true(s->microbench[0].min_bytes == 1024);
    assert_true(s->microbench[0].max_bytes == 8589934592.0);
    assert_true(s->microbench[0].factor == 2);
    assert_true(s->microbench[1].min_bytes == 1048576);
    assert_true(s->microbench[1].max_bytes == 1073741824);
    assert_string_equal(s->microbench[1].copy_kind, "h2d");
    assert_true(s->microbench[2].size_bytes == 1073741824.0);
    assert_int_equal(s->microbench[2].files, 4);
    scenario_free(s);
}

/* ---- scenario_load_memory ------------------------------------------------- */

static void test_load_memory(void **state) {
    (void)state;
    static const char text[] =
        "<?xml version=\"1.0\"?>\n"
        "<scenario name=\"mem\" seed=\"42\" duration=\"2w\">\n"
        "  <cluster><nodes type=\"dgx-a100-80gb\" count=\"3\"/></cluster>\n"
        "</scenario>\n";
    scenario *s = load_text(text);
    assert_string_equal(s->file, "inline.xml");
    assert_string_equal(s->name, "mem");
    assert_int_equal(s->seed, 42);
    assert_true(s->duration_s == 14 * 86400.0);
    assert_int_equal(scenario_gpus(s), 24);
    assert_int_equal(s->xml_len, strlen(text));
    assert_memory_equal(s->xml_text, text, strlen(text));
    scenario_free(s);

    /* Errors name the given file name and the line in the text; the text
     * need not be NUL-terminated. */
    static const char bad[] =
        "<scenario name=\"mem\">\n"
        "  <cluster>\n"
        "    <nodes type=\"dgx-h100\" count=\"0\"/>\n"
        "  </cluster>\n"
        "</scenario>\nTRAILING";
    char err[512];
    s = &sentinel;
    assert_int_equal(scenario_load_memory(bad, sizeof bad - 1 - strlen("TRAILING"), "mem.xml", &s,
                                          err, sizeof err), -1);
    assert_null(s);
    check_error(err, "mem.xml:3: ", "<nodes count=\"0\">: count must be a whole number from 1");

    s = &sentinel;
    assert_int_equal(scenario_load_memory("", 0, "empty.xml", &s, err, sizeof err), -1);
    assert_null(s);
    check_error(err, "empty.xml:1: ", "empty file");
}

int main(void) {
    if (read_expected() < 0) return 1;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_complete),
        cmocka_unit_test(test_directory_and_missing_file),
        cmocka_unit_test(test_special_files_refused),
        cmocka_unit_test(test_many_elements),
        cmocka_unit_test(test_short_error_buffer),
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_examples_load),
        cmocka_unit_test(test_default_values),
        cmocka_unit_test(test_llama3_405b_values),
        cmocka_unit_test(test_gpus_default),
        cmocka_unit_test(test_dp_from_gpus),
        cmocka_unit_test(test_tokens_to_steps),
        cmocka_unit_test(test_duration_units),
        cmocka_unit_test(test_size_units),
        cmocka_unit_test(test_bandwidth_units),
        cmocka_unit_test(test_rate_units),
        cmocka_unit_test(test_count_units),
        cmocka_unit_test(test_number_and_other_units),
        cmocka_unit_test(test_microbench_sizes),
        cmocka_unit_test(test_load_memory),
        cmocka_unit_test(test_unreadable_file),
        cmocka_unit_test(test_huge_file),
    };
    int failed = cmocka_run_group_tests_name("scenario", tests, NULL, NULL);

    /* One test per corpus case, named by its file. */
    static struct CMUnitTest bad[MAX_CASES];
    for (int i = 0; i < n_cases; i++)
        bad[i] = (struct CMUnitTest){ .name = cases[i].file, .test_func = test_bad_case,
                                      .initial_state = &cases[i] };
    failed += _cmocka_run_group_tests("tests/bad", bad, (size_t)n_cases, NULL, NULL);
    return failed ? 1 : 0;
}
