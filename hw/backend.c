/*
 * backend: the dispatch table and the timing loop every backend shares.
 */
#include "hw/backend_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/comm.h"
#include "hw/cudalib.h"

static const hw_ops *const all_ops[] = { &hw_cpu_ops, &hw_mpi_ops, &hw_cuda_ops, &hw_nccl_ops };
#define N_OPS (sizeof all_ops / sizeof *all_ops)

const char *const *hw_backend_names(void) {
    static const char *const names[] = { "cpu", "mpi", "cuda", "nccl", NULL };
    return names;
}

const char *hw_statistic_name(hw_statistic s) { return s == HW_STAT_MEDIAN ? "median" : "min"; }

int hw_statistic_parse(const char *z) {
    if (z && !strcmp(z, "min")) return HW_STAT_MIN;
    if (z && !strcmp(z, "median")) return HW_STAT_MEDIAN;
    return -1;
}

void hw_opts_default(hw_opts *o) {
    memset(o, 0, sizeof *o);
    o->warmup = 2;
    o->reps = 9;
    o->min_rep_s = 5e-3;
    o->budget_s = 2;
}

int hw_open(const char *name, const hw_opts *o, hw_backend **out, char *err, size_t errlen) {
    *out = NULL;
    const hw_ops *ops = NULL;
    for (size_t i = 0; i < N_OPS; i++)
        if (name && !strcmp(all_ops[i]->name, name)) ops = all_ops[i];
    if (!ops) {
        snprintf(err, errlen, "unknown backend '%s' (expected cpu, mpi, cuda or nccl)", name ? name : "");
        return -1;
    }
    hw_backend *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->ops = ops;
    if (o) b->opts = *o;
    else hw_opts_default(&b->opts);
    if (b->opts.reps < 3) b->opts.reps = 3;
    if (b->opts.warmup < 0) b->opts.warmup = 0;
    if (!(b->opts.budget_s > 0)) b->opts.budget_s = 2;
    snprintf(b->env.backend, sizeof b->env.backend, "%s", ops->name);
    b->env.ranks = 1;
    snprintf(b->env.statistic, sizeof b->env.statistic, "%s", hw_statistic_name(b->opts.statistic));
    hw_host_info(&b->env);
    if (ops->open(b, err, errlen) < 0) {
        free(b);
        return -1;
    }
    *out = b;
    return 0;
}

int hw_measure(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    mb_measurement r = { 0 };
    why[0] = 0;
    /* Every backend turns the size into a size_t (buffers, files, counts):
     * a size past what a machine holds, or not a number, would wrap there
     * (1e30 B became 1 byte and a 1.4e26 GB/s "measurement"). Refused here,
     * before any backend converts it, on every rank alike. */
    if (c->kind != MBC_GEMM && !(c->size_bytes >= 0 && c->size_bytes <= HW_MAX_CASE_BYTES)) {
        snprintf(why, whylen, "size %.6g B is not one a machine can hold: a case measures at most %.0e B",
                 c->size_bytes, HW_MAX_CASE_BYTES);
        return HW_FAILED;
    }
    int rc = b->ops->measure(b, c, &r, why, whylen);
    if (rc == HW_OK) {
        mb_measurement_rates(c, &r);
        *m = r;
    }
    return rc;
}

const hw_env *hw_environment(const hw_backend *b) { return &b->env; }
const char *hw_name(const hw_backend *b) { return b->ops->name; }
int hw_rank(const hw_backend *b) { return b ? b->rank : 0; }

void hw_close(hw_backend *b) {
    if (!b) return;
    b->ops->close(b);
    free(b);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *x, int n, double q) {
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1) return x[n - 1];
    return x[i] + (pos - i) * (x[i + 1] - x[i]);
}

void hw_stats(double *x, int n, hw_statistic stat, mb_measurement *m) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    m->min_s = x[0];
    m->max_s = x[n - 1];
    m->q1_s = quantile(x, n, 0.25);
    m->median_s = quantile(x, n, 0.5);
    m->q3_s = quantile(x, n, 0.75);
    m->time_s = stat == HW_STAT_MEDIAN ? m->median_s : m->min_s;
    m->reps = n;
}

static double median_of(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return quantile(x, n, 0.5);
}

void hw_combine(const mb_measurement *r, int n, const mb_case *c, hw_statistic stat, mb_measurement *out) {
    double t[64], q1[64], q3[64], rd[64];
    mb_measurement m = r[0];
    if (n > 64) n = 64;
    int nr = 0;
    m.reps = 0;
    for (int i = 0; i < n; i++) {
        t[i] = r[i].median_s > 0 ? r[i].median_s : r[i].time_s;
        q1[i] = r[i].q1_s;
        q3[i] = r[i].q3_s;
        if (r[i].read_s > 0) rd[nr++] = r[i].read_s;
        if (r[i].min_s < m.min_s) m.min_s = r[i].min_s;
        if (r[i].max_s > m.max_s) m.max_s = r[i].max_s;
        m.reps += r[i].reps;
    }
    m.median_s = median_of(t, n);
    m.q1_s = median_of(q1, n);
    m.q3_s = median_of(q3, n);
    if (m.q1_s > m.median_s) m.q1_s = m.median_s;
    if (m.q3_s < m.median_s) m.q3_s = m.median_s;
    if (m.q1_s < m.min_s) m.q1_s = m.min_s;
    m.time_s = stat == HW_STAT_MEDIAN ? m.median_s : m.min_s;
    /* each round's read time is already that round's statistic */
    m.read_s = 0;
    for (int i = 0; i < nr; i++)
        if (stat == HW_STAT_MIN && (m.read_s == 0 || rd[i] < m.read_s)) m.read_s = rd[i];
    if (stat == HW_STAT_MEDIAN && nr) m.read_s = median_of(rd, nr);
    mb_measurement_rates(c, &m);
    *out = m;
}

/* ---- the timing loop ------------------------------------------------------ */

static void wall_start(hw_backend *b, double *t0) {
    if (b->sync) comm_barrier();
    *t0 = comm_wtime();
}

static double wall_stop(hw_backend *b, double t0) {
    double dt = comm_wtime() - t0;
    return b->sync ? comm_max_double(dt) : dt;
}

/* Seconds for `iters` operations, or -1 when one failed (on any rank). */
static double timed(hw_backend *b, int (*fn)(void *), void *ctx, const hw_timer *tm, long iters) {
    double t0 = 0;
    int bad = 0;
    if (tm) tm->start(tm->ctx);
    else wall_start(b, &t0);
    for (long i = 0; i < iters && !bad; i++) bad = fn(ctx) < 0;
    double dt = tm ? tm->stop(tm->ctx) : wall_stop(b, t0);
    if (b->sync) bad = comm_max_double(bad) > 0;
    return bad ? -1 : dt;
}

int hw_time(hw_backend *b, int (*fn)(void *ctx), void *ctx, const hw_timer *tm, mb_measurement *m) {
    const hw_opts *o = &b->opts;
    for (int i = 0; i < o->warmup; i++)
        if (timed(b, fn, ctx, tm, 1) < 0) return -1;
    double one = timed(b, fn, ctx, tm, 1);
    if (one < 0) return -1;
    if (!(one > 1e-9)) one = 1e-9;
    long iters = (long)ceil(o->min_rep_s / one);
    if (iters < 1) iters = 1;
    if (iters > 1000000) iters = 1000000;
    int reps = o->reps;
    double per_rep = one * (double)iters;
    if (reps * per_rep > o->budget_s) reps = (int)(o->budget_s / per_rep);
    if (reps < 3) reps = 3;
    double *x = malloc((size_t)reps * sizeof *x);
    if (!x) return -1;
    for (int r = 0; r < reps; r++) {
        double dt = timed(b, fn, ctx, tm, iters);
        if (dt < 0) {
            free(x);
            return -1;
        }
        x[r] = dt / (double)iters;
    }
    hw_stats(x, reps, o->statistic, m);
    m->warmup = o->warmup;
    m->iters = (int)iters;
    free(x);
    return 0;
}

double hw_load_per_core(void) {
    FILE *f = fopen("/proc/loadavg", "r");
    double one = -1;
    if (f) {
        if (fscanf(f, "%lf", &one) != 1) one = -1;
        fclose(f);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return one >= 0 && cores > 0 ? one / (double)cores : -1;
}

void hw_host_info(hw_env *e) {
    comm_host(e->host, sizeof e->host);
    char model[128] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "model name", 10)) {
                char *p = strchr(line, ':');
                if (p) {
                    p++;
                    while (*p == ' ' || *p == '\t') p++;
                    p[strcspn(p, "\n")] = 0;
                    snprintf(model, sizeof model, "%s", p);
                }
                break;
            }
        }
        fclose(f);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(e->cpu, sizeof e->cpu, "%s, %ld cores", model, cores);
}

int hw_local_gpus(void) {
    cudalib L;
    char err[512];
    if (cudalib_load(&L, err, sizeof err) < 0) return 0;
    int n = L.devices;
    cudalib_unload(&L);
    return n;
}
