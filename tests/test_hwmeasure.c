/*
 * test_hwmeasure: what hw_measure refuses before any backend sees a case.
 *
 * Every backend turns a case's size into a size_t (buffer lengths, file
 * sizes, element counts). A size of 1e30 B, which no machine holds, used
 * to wrap there: the cpu backend wrote 1 byte and reported 1.4e26 GB/s.
 * hw_measure refuses any copy, collective or storage size that is not a
 * number from 0 to HW_MAX_CASE_BYTES (1 PB) with HW_FAILED and a reason,
 * and nothing is written or allocated for it. The cpu backend is opened
 * with the storage directory pointed at a temporary one that must stay
 * empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/backend.h"

static int entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_sizes_beyond_a_machine(void **state) {
    (void)state;
    char dir[] = "/tmp/ct-hwmeasure-XXXXXX";
    assert_non_null(mkdtemp(dir));
    hw_opts o;
    hw_opts_default(&o);
    o.storage_dir = dir;
    hw_backend *b = NULL;
    char err[512];
    assert_int_equal(hw_open("cpu", &o, &b, err, sizeof err), 0);
    const double sizes[] = { 1e30, 1.0000001e15, INFINITY, NAN, -1 };
    const mb_case_kind kinds[] = { MBC_STORAGE, MBC_COPY, MBC_COLLECTIVE };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            mb_case c = { .kind = kinds[k], .size_bytes = sizes[i], .files = 1, .copy = COPY_HOST, .ranks = 1 };
            mb_measurement m = { .time_s = 42 };
            char why[256];
            assert_int_equal(hw_measure(b, &c, &m, why, sizeof why), HW_FAILED);
            assert_non_null(strstr(why, "at most 1e+15 B"));
            assert_true(m.time_s == 42);           /* m unchanged */
        }
    assert_int_equal(entries(dir), 0);             /* nothing written */
    hw_close(b);
    rmdir(dir);
}

/* The storage case writes its own files, ct-bench-PID-I.dat. A FIFO that
 * has the name already (made by someone else) was opened for writing and
 * blocked forever; now the case fails, the FIFO stays a FIFO. alarm() is a
 * hang guard, not a timing. */
static void test_storage_file_not_ours(void **state) {
    (void)state;
    char dir[] = "/tmp/ct-hwmeasure-XXXXXX", fifo[128];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/ct-bench-%ld-0.dat", dir, (long)getpid());
    assert_int_equal(mkfifo(fifo, 0600), 0);
    hw_opts o;
    hw_opts_default(&o);
    o.storage_dir = dir;
    o.reps = 3;
    hw_backend *b = NULL;
    char err[512], why[256];
    assert_int_equal(hw_open("cpu", &o, &b, err, sizeof err), 0);
    mb_case c = { .kind = MBC_STORAGE, .size_bytes = 4096, .files = 1 };
    mb_measurement m;
    alarm(120);
    assert_int_equal(hw_measure(b, &c, &m, why, sizeof why), HW_FAILED);
    alarm(0);
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    hw_close(b);
    unlink(fifo);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_beyond_a_machine),
        cmocka_unit_test(test_storage_file_not_ours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
