/*
 * test_gpubackends: the cuda and nccl backends (hw/cuda.c, hw/nccl.c,
 * hw/cudalib.c) against stand-in vendor libraries built only for tests
 * (tests/standin/NAME.c built as build/tests/libstandin-NAME.so), selected with the
 * CT_*_LIB environment variables. The stand-ins run on host memory: what
 * is checked is the backends' logic, not GPU speed.
 *
 *   - Missing pieces are named: no driver (the driver library cannot be
 *     loaded), no device (the driver reports 0 GPUs), no libnccl.
 *   - cuda: d2d/h2d/d2h copies and fp64, fp32, tf32, bf16 and fp16 GEMMs
 *     measured through events, with the environment (device names,
 *     versions, "random" operands) recorded; a GEMM whose result the check
 *     rejects (the stand-in reading B transposed) or whose type cuBLAS
 *     refuses is a failure with the reason; storage, host copies and
 *     collectives are unsupported with a reason.
 *   - nccl: the six collectives over the stand-in's two GPUs, each checked
 *     once on known data; a case with more ranks than GPUs is unsupported;
 *     non-collectives are refused.
 *   - The stand-in NCCL's bootstrap across processes (what makes the
 *     mpirun tests in tests/cli_nccl.sh able to fail): ranks of processes
 *     given the same id meet and sum each other's data; ranks given their
 *     own ids (no broadcast) time out; a rank out of range, a rank joining
 *     twice and an id the stand-in did not make are errors; the files are
 *     removed when the communicator is destroyed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/backend.h"
#include "tests/standins.h"

static void test_missing(void **state) {
    (void)state;
    standins();
    hw_opts o = quick();
    hw_backend *b = NULL;
    char err[512];
    setenv("CT_CUDA_DRIVER_LIB", "build/tests/no-such-libcuda.so", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), -1);
    assert_null(b);
    assert_non_null(strstr(err, "no NVIDIA driver"));
    assert_int_equal(hw_open("nccl", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no NVIDIA driver"));
    standins();
    setenv("CT_STANDIN_GPUS", "0", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no CUDA device"));
    standins();
    setenv("CT_NCCL_LIB", "build/tests/no-such-libnccl.so", 1);
    assert_int_equal(hw_open("nccl", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no libnccl"));
    standins();
    setenv("CT_CUDART_LIB", "build/tests/no-such-libcudart.so", 1);
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "no CUDA runtime"));
    standins();
}

static void check(const mb_measurement *m) {
    assert_true(m->reps >= 3 && m->min_s > 0);
    assert_true(m->min_s <= m->time_s && m->time_s <= m->max_s);
}

/* GEMMs of every cuBLAS type on random operands, each result checked at 16
 * entries by hw/cuda.c: measured on the honest stand-in; failed, with the
 * check's note, when the stand-in reads B transposed; failed, naming the
 * call, when it refuses the type. */
static void cuda_gemms(hw_backend *b) {
    static const precision types[] = { PREC_FP64, PREC_FP32, PREC_TF32, PREC_BF16, PREC_FP16 };
    static const int shapes[][3] = { { 32, 16, 8 }, { 48, 40, 96 } };
    mb_measurement m;
    char why[256];
    for (int misread = 0; misread <= 1; misread++) {
        if (misread) setenv("CT_STANDIN_BLAS_MISREAD", "1", 1);
        for (size_t t = 0; t < sizeof types / sizeof *types; t++)
            for (int s = 0; s < 2; s++) {
                mb_case g = { .kind = MBC_GEMM, .m = shapes[s][0], .n = shapes[s][1], .k = shapes[s][2],
                              .precision = types[t] };
                int rc = hw_measure(b, &g, &m, why, sizeof why);
                if (!misread && rc != HW_OK) fail_msg("%s: %s", precision_name(types[t]), why);
                if (misread && (rc != HW_FAILED || !strstr(why, "(layout or transpose wrong?)")))
                    fail_msg("%s misread: rc %d, %s", precision_name(types[t]), rc, why);
                if (!misread) check(&m), assert_true(m.tflops > 0);
            }
        unsetenv("CT_STANDIN_BLAS_MISREAD");
    }
    setenv("CT_STANDIN_BLAS_REFUSE", "14", 1);     /* CUDA_R_16BF */
    mb_case g = { .kind = MBC_GEMM, .m = 32, .n = 16, .k = 8, .precision = PREC_BF16 };
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_FAILED);
    assert_non_null(strstr(why, "cublasGemmEx (bf16 32x16x8) failed"));
    unsetenv("CT_STANDIN_BLAS_REFUSE");
}

static void test_cuda(void **state) {
    (void)state;
    standins();
    hw_opts o = quick();
    hw_backend *b = NULL;
    char err[512], why[256];
    assert_int_equal(hw_open("cuda", &o, &b, err, sizeof err), 0);
    const hw_env *e = hw_environment(b);
    assert_string_equal(e->backend, "cuda");
    assert_non_null(strstr(e->devices, "Stand-in GPU 0 (not a GPU) x2"));
    assert_non_null(strstr(e->libraries, "CUDA runtime 13.0"));
    mb_measurement m;
    for (int k = COPY_D2D; k <= COPY_D2H; k++) {
        mb_case c = { .kind = MBC_COPY, .copy = (copy_kind)k, .size_bytes = 1 << 20 };
        assert_int_equal(hw_measure(b, &c, &m, why, sizeof why), HW_OK);
        check(&m);
        assert_true(m.algbw_bytes_per_s > 0);
    }
    cuda_gemms(b);
    mb_case h = { .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = 4096 };
    assert_int_equal(hw_measure(b, &h, &m, why, sizeof why), HW_UNSUPPORTED);
    mb_case s = { .kind = MBC_STORAGE, .size_bytes = 4096, .files = 1 };
    assert_int_equal(hw_measure(b, &s, &m, why, sizeof why), HW_UNSUPPORTED);
    mb_case a = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = 4096 };
    assert_int_equal(hw_measure(b, &a, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "nccl"));
    /* Device memory that cannot be had is a failure, not a crash. */
    setenv("CT_STANDIN_FAIL_MALLOC", "1", 1);
    mb_case d = { .kind = MBC_COPY, .copy = COPY_D2D, .size_bytes = 1 << 20 };
    assert_int_equal(hw_measure(b, &d, &m, why, sizeof why), HW_FAILED);
    assert_non_null(strstr(why, "cannot allocate"));
    unsetenv("CT_STANDIN_FAIL_MALLOC");
    hw_close(b);
}

static void test_nccl(void **state) {
    (void)state;
    standins();
    hw_opts o = quick();
    hw_backend *b = NULL;
    char err[512], why[256];
    assert_int_equal(hw_open("nccl", &o, &b, err, sizeof err), 0);
    const hw_env *e = hw_environment(b);
    assert_int_equal(e->ranks, 2);
    assert_non_null(strstr(e->libraries, "NCCL 2.23.4"));
    mb_measurement m;
    for (int op = 0; op < COLL_OP_COUNT; op++) {
        mb_case c = { .kind = MBC_COLLECTIVE, .op = (coll_op)op, .ranks = 2, .size_bytes = 65536 };
        int rc = hw_measure(b, &c, &m, why, sizeof why);
        if (rc != HW_OK) fail_msg("%s: %s", coll_op_name((coll_op)op), why);
        check(&m);
        assert_true(m.busbw_bytes_per_s > 0);
    }
    /* A library that sums wrongly fails the check made before timing. */
    setenv("CT_STANDIN_NCCL_WRONG", "1", 1);
    mb_case w = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = 4096 };
    assert_int_equal(hw_measure(b, &w, &m, why, sizeof why), HW_FAILED);
    assert_non_null(strstr(why, "NCCL allreduce gave wrong results: rank 0 holds 4 at float 0, expected 3"));
    unsetenv("CT_STANDIN_NCCL_WRONG");
    mb_case big = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 8, .size_bytes = 65536 };
    assert_int_equal(hw_measure(b, &big, &m, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "2 GPU(s)"));
    mb_case g = { .kind = MBC_GEMM, .m = 8, .n = 8, .k = 8, .precision = PREC_FP32 };
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_UNSUPPORTED);
    hw_close(b);
}

/* ---- the stand-in NCCL across processes ----------------------------------- */

typedef struct sid { char internal[128]; } sid;
static struct {
    void *lib;
    int (*GetUniqueId)(sid *);
    int (*CommInitRank)(void **, int, sid, int);
    int (*CommDestroy)(void *);
    int (*GroupStart)(void);
    int (*GroupEnd)(void);
    int (*AllReduce)(const void *, void *, size_t, int, int, void *, void *);
    const char *(*GetErrorString)(int);
} S;

static void load_standin(void) {
    S.lib = dlopen("build/tests/libstandin-nccl.so", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(S.lib);
#define SSYM(f, name)                          \
    do {                                       \
        void *p_ = dlsym(S.lib, name);         \
        assert_non_null(p_);                   \
        memcpy(&S.f, &p_, sizeof p_);          \
    } while (0)
    SSYM(GetUniqueId, "ncclGetUniqueId");
    SSYM(CommInitRank, "ncclCommInitRank");
    SSYM(CommDestroy, "ncclCommDestroy");
    SSYM(GroupStart, "ncclGroupStart");
    SSYM(GroupEnd, "ncclGroupEnd");
    SSYM(AllReduce, "ncclAllReduce");
    SSYM(GetErrorString, "ncclGetErrorString");
#undef SSYM
}

static int dir_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* One rank in a child process: join (id, or its own id when id is NULL),
 * then all-reduce 64 floats of rank + 1. Exit 0: joined and the sum of
 * nranks ranks arrived; 3: the join failed with `want` in the message. */
static void child_rank(const sid *id, int nranks, int rank, const char *want) {
    sid own;
    if (!id) {
        S.GetUniqueId(&own);
        id = &own;
    }
    void *c = NULL;
    int e = S.CommInitRank(&c, nranks, *id, rank);
    if (e) {
        S.CommDestroy(c);
        _exit(want && strstr(S.GetErrorString(e), want) ? 3 : 4);
    }
    float in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = (float)(rank + 1);
    e = S.AllReduce(in, out, 64, 7, 0, c, NULL);
    int ok = e == 0;
    for (int i = 0; i < 64 && ok; i++) ok = out[i] == (float)nranks * (float)(nranks + 1) / 2;
    S.CommDestroy(c);
    _exit(ok ? 0 : 5);
}

static void run_children(const sid *id, int nranks, const char *want, int expect) {
    pid_t pid[4];
    for (int r = 0; r < nranks; r++) {
        pid[r] = fork();
        assert_true(pid[r] >= 0);
        if (pid[r] == 0) child_rank(id, nranks, r, want);
    }
    for (int r = 0; r < nranks; r++) {
        int st = 0;
        assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
        assert_true(WIFEXITED(st));
        if (WEXITSTATUS(st) != expect) fail_msg("rank %d of %d exited %d, expected %d", r, nranks, WEXITSTATUS(st), expect);
    }
}

static void test_standin_bootstrap(void **state) {
    (void)state;
    char dir[] = "/tmp/ct-standin-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("CT_STANDIN_NCCL_DIR", dir, 1);
    /* The stand-in's time-out: a hang guard (300 s) where ranks must meet,
     * however slow a busy machine or valgrind makes them; 1 s only where
     * the time-out is the expected outcome (ranks that never meet). */
    setenv("CT_STANDIN_NCCL_TIMEOUT_S", "300", 1);
    load_standin();
    sid a, b;
    assert_int_equal(S.GetUniqueId(&a), 0);
    assert_int_equal(S.GetUniqueId(&b), 0);
    assert_memory_not_equal(&a, &b, sizeof a);              /* a new id on every call */
    run_children(&a, 3, NULL, 0);                           /* one id for all: they meet and sum */
    assert_int_equal(dir_entries(dir), 0);                  /* and leave no file behind */
    setenv("CT_STANDIN_NCCL_TIMEOUT_S", "1", 1);
    run_children(NULL, 2, "timed out", 3);                  /* each its own id: they never meet */
    setenv("CT_STANDIN_NCCL_TIMEOUT_S", "300", 1);
    /* Two ranks of one process, inside a group as hw/nccl.c makes them. */
    void *c[2] = { NULL, NULL };
    S.GetUniqueId(&a);
    S.GroupStart();
    assert_int_equal(S.CommInitRank(&c[0], 2, a, 0), 0);
    assert_int_equal(S.CommInitRank(&c[1], 2, a, 1), 0);
    assert_int_equal(S.GroupEnd(), 0);
    float in[2][8], out[2][8];
    for (int i = 0; i < 8; i++) in[0][i] = 1, in[1][i] = 10;
    S.GroupStart();
    for (int r = 0; r < 2; r++) assert_int_equal(S.AllReduce(in[r], out[r], 8, 7, 0, c[r], NULL), 0);
    assert_int_equal(S.GroupEnd(), 0);
    assert_true(out[0][0] == 11 && out[1][7] == 11);
    /* A collective that not every rank issues cannot complete. */
    setenv("CT_STANDIN_NCCL_TIMEOUT_S", "1", 1);
    int e = S.AllReduce(in[0], out[0], 8, 7, 0, c[0], NULL);
    assert_int_not_equal(e, 0);
    assert_non_null(strstr(S.GetErrorString(e), "timed out"));
    S.CommDestroy(c[0]);
    S.CommDestroy(c[1]);
    /* Errors at once. */
    void *x = NULL;
    S.GetUniqueId(&a);
    e = S.CommInitRank(&x, 2, a, 2);
    assert_int_not_equal(e, 0);
    assert_non_null(strstr(S.GetErrorString(e), "out of range"));
    sid zero;
    memset(&zero, 0, sizeof zero);
    e = S.CommInitRank(&x, 2, zero, 1);
    assert_int_not_equal(e, 0);
    assert_non_null(strstr(S.GetErrorString(e), "not made by"));
    S.GetUniqueId(&a);
    S.GroupStart();
    assert_int_equal(S.CommInitRank(&c[0], 2, a, 0), 0);
    e = S.CommInitRank(&c[1], 2, a, 0);
    assert_int_not_equal(e, 0);
    assert_non_null(strstr(S.GetErrorString(e), "twice"));
    assert_int_not_equal(S.GroupEnd(), 0);                  /* rank 1 never came */
    S.CommDestroy(c[0]);
    dlclose(S.lib);
    assert_int_equal(dir_entries(dir), 0);
    rmdir(dir);
    unsetenv("CT_STANDIN_NCCL_DIR");
    unsetenv("CT_STANDIN_NCCL_TIMEOUT_S");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_cuda),
        cmocka_unit_test(test_nccl),
        cmocka_unit_test(test_standin_bootstrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
