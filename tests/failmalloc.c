/*
 * failmalloc: an LD_PRELOAD shim for tests that makes one allocation fail.
 *
 *   CT_FAIL_MALLOC=N   the Nth call (1-based, counting malloc, calloc,
 *                      realloc, posix_memalign and aligned_alloc together)
 *                      returns NULL with errno ENOMEM; all others succeed
 *   CT_FAIL_MALLOC=0   fail nothing; print "failmalloc: C calls" to stderr
 *                      at exit, so a driver knows the range of N to try
 *
 * The marker for a known library bug: libxml2 2.9.14 corrupts its heap or
 * dereferences NULL after a failed allocation inside its RELAX NG code
 * (compiling the grammar: xmlRelaxNGParse -> xmlSchemaGetPredefinedType),
 * and the program then dies of a signal that is not ours to fix. So the
 * shim wraps the two RELAX NG entry points the program calls
 * (xmlRelaxNGParse, xmlRelaxNGValidateDoc) and, when the failing
 * allocation happens inside one of them, writes at once (before any
 * crash) "failmalloc: allocation N failed inside libxml2 RELAX NG (FN)"
 * to stderr. In count-only mode it also prints "failmalloc: RELAX NG
 * allocations A..B" (the first and last inside), when there were any.
 * tests/cli_oom.sh skips a crash only with that marker; every other
 * allocation, and every clean failure inside RELAX NG, is still checked.
 *
 * Built only for tests (build/tests/libfailmalloc.so) and used by
 * tests/cli_oom.sh. Passes through to glibc's __libc_* allocator, so
 * malloc needs no dlsym (which itself allocates); the RELAX NG wrappers
 * find the real functions with dlsym(RTLD_NEXT) on their first call.
 * Not for ASan builds: ASan owns malloc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
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
static const char *in_rng;           /* the RELAX NG function we are inside, or NULL */
static long rng_first, rng_last;     /* allocations inside RELAX NG (count-only mode) */

/* write(2) of a formatted line: no stdio buffer, so it is out before a crash. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...) {
    char buf[160];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (k > 0 && write(2, buf, (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1) < 0) { /* nothing to do */ }
}

static int fail_now(void) {
    if (fail_at < 0) {
        const char *z = getenv("CT_FAIL_MALLOC");
        fail_at = z ? atol(z) : 0;
    }
    ++calls;
    if (in_rng) {
        if (!rng_first) rng_first = calls;
        rng_last = calls;
    }
    if (calls == fail_at) {
        if (in_rng) say("failmalloc: allocation %ld failed inside libxml2 RELAX NG (%s)\n", calls, in_rng);
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

/* The RELAX NG entry points, marked (see the top). Prototypes with void *
 * so the shim needs no libxml2 headers; the ABI is the same (pointers).
 * When the real function cannot be found the wrapper returns failure
 * (NULL, -1), as libxml2 does on error. */
void *xmlRelaxNGParse(void *ctxt);
int xmlRelaxNGValidateDoc(void *ctxt, void *doc);

void *xmlRelaxNGParse(void *ctxt) {
    static void *(*real)(void *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "xmlRelaxNGParse");
    if (!real) return NULL;
    const char *outer = in_rng;
    in_rng = "xmlRelaxNGParse";
    void *r = real(ctxt);
    in_rng = outer;
    return r;
}

int xmlRelaxNGValidateDoc(void *ctxt, void *doc) {
    static int (*real)(void *, void *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "xmlRelaxNGValidateDoc");
    if (!real) return -1;
    const char *outer = in_rng;
    in_rng = "xmlRelaxNGValidateDoc";
    int r = real(ctxt, doc);
    in_rng = outer;
    return r;
}

__attribute__((destructor)) static void report(void) {
    if (fail_at == 0) {
        say("failmalloc: %ld calls\n", calls);
        if (rng_first) say("failmalloc: RELAX NG allocations %ld..%ld\n", rng_first, rng_last);
    }
}
