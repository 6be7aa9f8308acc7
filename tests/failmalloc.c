/*
 * failmalloc: an LD_PRELOAD shim for tests that makes one allocation fail.
 *
 *   CT_FAIL_MALLOC=N   the Nth call (1-based, counting malloc, calloc,
 *                      realloc, posix_memalign and aligned_alloc together)
 *                      returns NULL with errno ENOMEM; all others succeed
 *   CT_FAIL_MALLOC=0   fail nothing; print "failmalloc: C calls" to stderr
 *                      at exit, so a driver knows the range of N to try
 *
 * Built only for tests (build/tests/libfailmalloc.so) and used by
 * tests/cli_oom.sh. Passes through to glibc's __libc_* allocator, so it
 * needs no dlsym (which itself allocates). Not for ASan builds: ASan owns
 * malloc.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static long calls;
static long fail_at = -1;            /* -1: not read yet; 0: count only */

static int fail_now(void) {
    if (fail_at < 0) {
        const char *z = getenv("CT_FAIL_MALLOC");
        fail_at = z ? atol(z) : 0;
    }
    if (++calls == fail_at) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fail_now() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fail_now() ? NULL : __libc_realloc(p, n); }
void *aligned_alloc(size_t align, size_t n) { return fail_now() ? NULL : __libc_memalign(align, n); }

int posix_memalign(void **out, size_t align, size_t n) {
    if (fail_now()) return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

__attribute__((destructor)) static void report(void) {
    if (fail_at == 0) {
        char buf[64];
        int k = snprintf(buf, sizeof buf, "failmalloc: %ld calls\n", calls);
        if (k > 0 && write(2, buf, (size_t)k) < 0) { /* nothing to do */ }
    }
}
