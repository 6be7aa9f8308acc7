/*
 * fuzz.h: checks shared by the libFuzzer harnesses in tests/fuzz/ (each
 * harness is also compiled into tests/test_fuzz.c, which replays the seed
 * and regression corpora in `make test` without clang).
 */
#ifndef CT_FUZZ_H
#define CT_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Abort with a message: libFuzzer saves the input as a crash. */
static inline void fuzz_fail(const char *why) {
    fprintf(stderr, "fuzz property violated: %s\n", why);
    abort();
}

/* An error must be one line "PREFIXLINE: text" (LINE a number >= 0). */
static inline void fuzz_check_error(const char *err, const char *prefix) {
    size_t k = strlen(prefix);
    if (strncmp(err, prefix, k) != 0) {
        fprintf(stderr, "error: %s\n", err);
        fuzz_fail("error does not start with the file name");
    }
    const char *p = err + k;
    if (*p < '0' || *p > '9') {
        fprintf(stderr, "error: %s\n", err);
        fuzz_fail("error has no line number");
    }
    while (*p >= '0' && *p <= '9') p++;
    if (strncmp(p, ": ", 2) != 0 || !p[2]) {
        fprintf(stderr, "error: %s\n", err);
        fuzz_fail("error is not 'file:line: text'");
    }
    if (strchr(err, '\n')) {
        fprintf(stderr, "error: %s\n", err);
        fuzz_fail("error is more than one line");
    }
}

#endif
