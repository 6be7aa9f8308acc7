/*
 * cpu: the host backend. Host memcpy across sizes, GEMM through CBLAS (the
 * GSL's reference CBLAS the program links: one core, fp32 and fp64), and
 * storage: `files` files of size/files bytes written in 1 MiB blocks and
 * fsync'd in a directory, then read back after dropping them from the page
 * cache (posix_fadvise DONTNEED on the clean pages), so the read goes to
 * the device.
 *
 * Load: a copy case touches 2x its size of memory; a GEMM m x n x k holds
 * (mk + kn + mn) elements; a storage case writes its size on every
 * repetition (warm-up 1, at least 3 timed) and removes its files after.
 */
#include "hw/backend_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_version.h>

#include "hw/comm.h"
#include "hw/cpupeak.h"

/* The CBLAS the GEMMs call: GSL's reference CBLAS, which the program
 * links, or the library CT_CBLAS_LIB names (OpenBLAS, BLIS, MKL: any
 * CBLAS), loaded at run time and held to one thread, so the measurement is
 * of one core either way. */
typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int, float,
                         const float *, int, const float *, int, float, float *, int);
typedef void (*dgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int, double,
                         const double *, int, const double *, int, double, double *, int);

typedef struct cpu_impl {
    void *lib;                       /* NULL: GSL's CBLAS */
    sgemm_fn sgemm;
    dgemm_fn dgemm;
} cpu_impl;

static int open_cblas(hw_backend *b, cpu_impl *x, char *err, size_t errlen) {
    const char *z = getenv("CT_CBLAS_LIB");
    x->sgemm = cblas_sgemm;
    x->dgemm = cblas_dgemm;
    if (!z || !*z || !strcmp(z, "gsl")) {
        snprintf(b->env.libraries, sizeof b->env.libraries, "GSL CBLAS %s", gsl_version);
        return 0;
    }
    if (!(x->lib = dlopen(z, RTLD_NOW | RTLD_LOCAL))) {
        const char *e = dlerror();
        snprintf(err, errlen, "CT_CBLAS_LIB=%s cannot be loaded: %s", z, e ? e : "unknown error");
        return -1;
    }
    void *s = dlsym(x->lib, "cblas_sgemm"), *d = dlsym(x->lib, "cblas_dgemm");
    if (!s || !d) {
        snprintf(err, errlen, "CT_CBLAS_LIB=%s has no cblas_sgemm/cblas_dgemm: not a CBLAS library", z);
        dlclose(x->lib);
        x->lib = NULL;
        return -1;
    }
    memcpy(&x->sgemm, &s, sizeof s);                 /* object to function pointer: POSIX dlsym */
    memcpy(&x->dgemm, &d, sizeof d);
    /* One thread, whichever library it is. */
    static const char *const setters[] = { "openblas_set_num_threads", "bli_thread_set_num_threads",
                                           "MKL_Set_Num_Threads", NULL };
    for (int i = 0; setters[i]; i++) {
        void *f = dlsym(x->lib, setters[i]);
        if (!f) continue;
        void (*set)(int);
        memcpy(&set, &f, sizeof f);
        set(1);
    }
    void *cfg = dlsym(x->lib, "openblas_get_config");
    const char *what = z;
    if (cfg) {
        char *(*get)(void);
        memcpy(&get, &cfg, sizeof cfg);
        what = get();
    }
    snprintf(b->env.libraries, sizeof b->env.libraries, "%s (CT_CBLAS_LIB=%s, 1 thread)", what, z);
    return 0;
}

static int cpu_open(hw_backend *b, char *err, size_t errlen) {
    cpu_impl *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (open_cblas(b, x, err, errlen) < 0) {
        free(x);
        return -1;
    }
    b->impl = x;
    /* The core's peak, so a GEMM's efficiency is measured against what the
     * core can do rather than a nominal figure. */
    char isa[32] = "";
    if (cpupeak_measure(&b->env.peak_fp64_flops, &b->env.peak_fp32_flops, isa, sizeof isa) == 0)
        snprintf(b->env.devices, sizeof b->env.devices,
                 "host CPU and memory (one core for GEMM; its peak, measured: %.1f / %.1f GFLOP/s fp64 / fp32 "
                 "with %s)", b->env.peak_fp64_flops / 1e9, b->env.peak_fp32_flops / 1e9, isa);
    else
        snprintf(b->env.devices, sizeof b->env.devices, "host CPU and memory (one core for GEMM)");
    return 0;
}

static void cpu_close(hw_backend *b) {
    cpu_impl *x = b->impl;
    if (x && x->lib) dlclose(x->lib);
    free(x);
    b->impl = NULL;
}

/* ---- copies ---------------------------------------------------------------- */

typedef struct copy_ctx {
    char *src, *dst;
    size_t n;
} copy_ctx;

static int copy_once(void *p) {
    copy_ctx *c = p;
    memcpy(c->dst, c->src, c->n);
    /* Let the next copy read what this one wrote, so no copy can be elided. */
    c->src[0] = c->dst[c->n - 1];
    return 0;
}

static char *aligned_buf(size_t n) {
    void *p = NULL;
    return posix_memalign(&p, 4096, n) == 0 ? p : NULL;
}

static int measure_copy(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    if (c->copy != COPY_HOST) {
        snprintf(why, whylen, "a %s copy needs a GPU: the cpu backend measures host copies (kind=\"host\"); "
                              "use --backend cuda on a machine with one", copy_kind_name(c->copy));
        return HW_UNSUPPORTED;
    }
    size_t n = (size_t)c->size_bytes;
    if (n < 1) n = 1;
    /* Both buffers page-aligned: with malloc's placement, source and
     * destination could sit a few bytes apart modulo 4 KiB, where the CPU
     * takes each load for a clash with a recent store (4K aliasing) and a
     * small copy runs 3x slower in one session than the next. */
    copy_ctx x = { aligned_buf(n), aligned_buf(n), n };
    if (!x.src || !x.dst) {
        free(x.src);
        free(x.dst);
        snprintf(why, whylen, "cannot allocate 2 x %zu bytes", n);
        return HW_FAILED;
    }
    memset(x.src, 1, n);          /* touch every page before timing */
    memset(x.dst, 2, n);
    int rc = hw_time(b, copy_once, &x, NULL, m);
    free(x.src);
    free(x.dst);
    if (rc < 0) {
        snprintf(why, whylen, "the copy failed");
        return HW_FAILED;
    }
    return HW_OK;
}

/* ---- GEMM -------------------------------------------------------------------- */

typedef struct gemm_ctx {
    int m, n, k;
    precision prec;
    void *a, *b, *c;
    const cpu_impl *x;
} gemm_ctx;

static int gemm_once(void *p) {
    gemm_ctx *g = p;
    if (g->prec == PREC_FP64)
        g->x->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0, g->a, g->k, g->b, g->n, 0.0,
                    g->c, g->n);
    else
        g->x->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n,
                    0.0f, g->c, g->n);
    return 0;
}

/* A[i][k] = (i*K + k) % 7 / 4 and B[k][j] = (k*N + j) % 5 / 2: every product
 * and sum is a multiple of 1/8 far below 2^21, exact in fp32 and fp64, so
 * C must equal the sum to the last bit. A few entries of C are checked
 * (corners and the middle): a library that got the layout or the
 * arguments wrong fails the case rather than timing the wrong thing. */
static int gemm_check(const gemm_ctx *g, char *why, size_t whylen) {
    const int pick[3][2] = { { 0, 0 }, { g->m - 1, g->n - 1 }, { g->m / 2, g->n / 3 } };
    for (int t = 0; t < 3; t++) {
        int i = pick[t][0], j = pick[t][1];
        double want = 0;
        for (int k = 0; k < g->k; k++)
            want += (double)(((size_t)i * g->k + k) % 7) * 0.25 * (double)(((size_t)k * g->n + j) % 5) * 0.5;
        size_t at = (size_t)i * g->n + j;
        double got = g->prec == PREC_FP64 ? ((const double *)g->c)[at] : ((const float *)g->c)[at];
        if (got != want) {
            snprintf(why, whylen, "the GEMM gave a wrong result: C[%d][%d] = %.17g, expected %.17g", i, j, got, want);
            return -1;
        }
    }
    return 0;
}

static int measure_gemm(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    if (c->precision != PREC_FP32 && c->precision != PREC_FP64) {
        snprintf(why, whylen, "a %s GEMM needs a GPU: CBLAS on the CPU runs fp32 and fp64; "
                              "use --backend cuda on a machine with one", precision_name(c->precision));
        return HW_UNSUPPORTED;
    }
    if (mb_groups(c) > 1) {
        snprintf(why, whylen, "a grouped GEMM (%d GEMMs in one batched call, as a GPU runs a mixture-of-experts "
                              "layer) is measured by --backend cuda", c->groups);
        return HW_UNSUPPORTED;
    }
    size_t w = c->precision == PREC_FP64 ? 8 : 4;
    size_t na = (size_t)c->m * c->k, nb = (size_t)c->k * c->n, nc = (size_t)c->m * c->n;
    if ((na + nb + nc) * w > ((size_t)1 << 34)) {
        snprintf(why, whylen, "GEMM %dx%dx%d needs more than 16 GiB of host memory", c->m, c->n, c->k);
        return HW_UNSUPPORTED;
    }
    gemm_ctx g = { c->m, c->n, c->k, c->precision, malloc(na * w), malloc(nb * w), malloc(nc * w), b->impl };
    int rc = HW_OK;
    if (!g.a || !g.b || !g.c) {
        snprintf(why, whylen, "cannot allocate the GEMM's matrices");
        rc = HW_FAILED;
        goto out;
    }
    for (size_t i = 0; i < na; i++) {
        if (w == 8) ((double *)g.a)[i] = (double)(i % 7) * 0.25;
        else ((float *)g.a)[i] = (float)(i % 7) * 0.25f;
    }
    for (size_t i = 0; i < nb; i++) {
        if (w == 8) ((double *)g.b)[i] = (double)(i % 5) * 0.5;
        else ((float *)g.b)[i] = (float)(i % 5) * 0.5f;
    }
    memset(g.c, 0, nc * w);
    if (hw_time(b, gemm_once, &g, NULL, m) < 0) {
        snprintf(why, whylen, "the GEMM failed");
        rc = HW_FAILED;
    } else if (gemm_check(&g, why, whylen) < 0) {
        rc = HW_FAILED;
    }
out:
    free(g.a);
    free(g.b);
    free(g.c);
    return rc;
}

/* ---- storage ------------------------------------------------------------------- */

#define BLOCK (1 << 20)

typedef struct storage_ctx {
    char dir[512];
    int files;
    size_t per_file;
    char *buf;
    int failed_errno;
    const char *failed_op;
} storage_ctx;

static void file_name(const storage_ctx *s, int i, char *out, size_t len) {
    snprintf(out, len, "%s/ct-bench-%ld-%d.dat", s->dir, (long)getpid(), i);
}

static int fail_io(storage_ctx *s, const char *op) {
    if (!s->failed_errno) {
        s->failed_errno = errno ? errno : EIO;
        s->failed_op = op;
    }
    return -1;
}

static int write_once(void *p) {
    storage_ctx *s = p;
    for (int i = 0; i < s->files; i++) {
        char path[600];
        file_name(s, i, path, sizeof path);
        /* Our own file: never through a link, never a FIFO or device that
         * happens to have its name (open would block or write into it). */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
        if (fd < 0) return fail_io(s, "open");
        struct stat sb;
        int e = fstat(fd, &sb) != 0 ? errno : !S_ISREG(sb.st_mode) ? EINVAL : fcntl(fd, F_SETFL, 0) != 0 ? errno : 0;
        if (e) {
            close(fd);
            errno = e;
            return fail_io(s, "open");
        }
        for (size_t done = 0; done < s->per_file;) {
            size_t n = s->per_file - done < BLOCK ? s->per_file - done : BLOCK;
            ssize_t k = write(fd, s->buf, n);
            if (k <= 0) {
                close(fd);
                return fail_io(s, "write");
            }
            done += (size_t)k;
        }
        if (fsync(fd) < 0) {
            close(fd);
            return fail_io(s, "fsync");
        }
        if (close(fd) < 0) return fail_io(s, "close");
    }
    return 0;
}

/* Drop the files' pages from the cache (untimed, before each read). */
static void drop_cache(storage_ctx *s) {
    for (int i = 0; i < s->files; i++) {
        char path[600];
        file_name(s, i, path, sizeof path);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
}

static int read_once(void *p) {
    storage_ctx *s = p;
    for (int i = 0; i < s->files; i++) {
        char path[600];
        file_name(s, i, path, sizeof path);
        int fd = open(path, O_RDONLY);
        if (fd < 0) return fail_io(s, "open");
        ssize_t k;
        size_t total = 0;
        while ((k = read(fd, s->buf, BLOCK)) > 0) total += (size_t)k;
        close(fd);
        if (k < 0 || total != s->per_file) return fail_io(s, "read");
    }
    return 0;
}

/* The read loop times each read separately: the cache is dropped between. */
static int read_time(hw_backend *b, storage_ctx *s, double *out_s) {
    double x[16];
    int reps = b->opts.reps < 16 ? b->opts.reps : 16;
    double spent = 0;
    int n = 0;
    for (; n < reps; n++) {
        drop_cache(s);
        double t0 = comm_wtime();
        if (read_once(s) < 0) return -1;
        x[n] = comm_wtime() - t0;
        spent += x[n];
        if (n >= 2 && spent > b->opts.budget_s) {
            n++;
            break;
        }
    }
    mb_measurement m = { 0 };
    hw_stats(x, n, b->opts.statistic, &m);
    *out_s = m.time_s;
    return 0;
}

static int mkdirs(const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "%s", dir);
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        if (mkdir(p, 0777) < 0 && errno != EEXIST) return -1;
        *q = '/';
    }
    return mkdir(p, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

static int measure_storage(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    storage_ctx s = { .files = c->files > 0 ? c->files : 1 };
    const char *dir = b->opts.storage_dir ? b->opts.storage_dir : c->path ? c->path : "out/ckpt-bench";
    snprintf(s.dir, sizeof s.dir, "%s", dir);
    s.per_file = (size_t)(c->size_bytes / s.files);
    if (s.per_file < 1) s.per_file = 1;
    if (mkdirs(s.dir) < 0) {
        snprintf(why, whylen, "%s: cannot create the directory: %s", s.dir, strerror(errno));
        return HW_FAILED;
    }
    s.buf = malloc(BLOCK);
    if (!s.buf) {
        snprintf(why, whylen, "out of memory");
        return HW_FAILED;
    }
    for (size_t i = 0; i < BLOCK; i++) s.buf[i] = (char)(i * 131 + 7);
    /* One warm-up: a storage write is long and its first run allocates. */
    hw_opts saved = b->opts;
    b->opts.warmup = saved.warmup > 1 ? 1 : saved.warmup;
    b->opts.min_rep_s = 0;
    int rc = hw_time(b, write_once, &s, NULL, m);
    b->opts = saved;
    double rd = 0;
    if (rc == 0 && read_time(b, &s, &rd) == 0) m->read_s = rd;
    else if (rc == 0) rc = -1;
    for (int i = 0; i < s.files; i++) {
        char path[600];
        file_name(&s, i, path, sizeof path);
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(path);   /* ours; a FIFO of that name is not */
    }
    free(s.buf);
    if (rc < 0) {
        snprintf(why, whylen, "%s: %s failed: %s", s.dir, s.failed_op ? s.failed_op : "I/O",
                 strerror(s.failed_errno ? s.failed_errno : EIO));
        return HW_FAILED;
    }
    return HW_OK;
}

static int cpu_measure(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    switch (c->kind) {
    case MBC_COPY: return measure_copy(b, c, m, why, whylen);
    case MBC_GEMM: return measure_gemm(b, c, m, why, whylen);
    case MBC_STORAGE: return measure_storage(b, c, m, why, whylen);
    case MBC_COLLECTIVE:
        snprintf(why, whylen, "a %s needs several processes: use --backend mpi under mpirun (or nccl)",
                 coll_op_name(c->op));
        return HW_UNSUPPORTED;
    }
    return HW_UNSUPPORTED;
}

const hw_ops hw_cpu_ops = { "cpu", cpu_open, cpu_measure, cpu_close };
