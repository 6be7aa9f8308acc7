/*
 * test_scenario_bad: the scenario loader on bad input; tests/test_scenario.c
 * holds the good.
 *
 * Bad input is the corpus in tests/bad/, one file per mistake, with the line
 * and a piece of the message each must give in tests/bad/expected.txt
 * ("FILE|LINE|SUBSTRING[|world]"). Every case is its own cmocka test: the
 * load fails, leaves *out NULL, prints nothing, and the one-line error starts
 * with "tests/bad/FILE:LINE: " and contains SUBSTRING. Cases marked "world"
 * are plans the loader accepts and world_new() refuses (memory fit, which
 * needs the training model); for those the same is checked of world_new().
 * Files that are not scenarios (a directory, a FIFO, a device, an unreadable
 * or huge file) are refused by what they are, at line 0 or 1.
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


#include "tests/scenariofix.h"

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

int main(void) {
    if (read_expected() < 0) return 1;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_complete),
        cmocka_unit_test(test_directory_and_missing_file),
        cmocka_unit_test(test_special_files_refused),
        cmocka_unit_test(test_short_error_buffer),
        cmocka_unit_test(test_unreadable_file),
        cmocka_unit_test(test_huge_file),
    };
    int failed = cmocka_run_group_tests_name("scenario_bad", tests, NULL, NULL);

    /* One test per corpus case, named by its file. */
    static struct CMUnitTest bad[MAX_CASES];
    for (int i = 0; i < n_cases; i++)
        bad[i] = (struct CMUnitTest){ .name = cases[i].file, .test_func = test_bad_case,
                                      .initial_state = &cases[i] };
    failed += _cmocka_run_group_tests("tests/bad", bad, (size_t)n_cases, NULL, NULL);
    return failed ? 1 : 0;
}
