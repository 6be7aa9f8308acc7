/*
 * calibrate: nonlinear least squares fits of the host model (see calibrate.h).
 *
 * Cost: a group of a few dozen points and <= 4 parameters converges in tens
 * of iterations of a finite-difference Jacobian, each a handful of
 * host_predict() calls per point: well under a millisecond.
 */
#include "models/calibrate.h"
#include "models/calibrate_gpu.h"
#include "models/numerics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

/* One group's points and parameters while fitting. */
typedef struct fit_ctx {
    const cal_point **pt;
    int n;
    int read;                    /* storage.read: fit the read times */
    int gpu;                     /* a GPU group: priced by calibrate_gpu_predict_s */
    cal_target base;
    const char *param[CAL_MAX_PARAMS];
    int p;
} fit_ctx;

/* cpu and mpi measurements go to the host groups, cuda ones to the GPU
 * groups; nccl ones to none yet (a GEMM the cuda backend timed is the GPU's,
 * whatever its precision: an SGEMM of 8192^3 fitted as the host core's
 * gemm.fp32 gave it an efficiency of 528). */
const char *calibrate_group_of(const mb_case *c, const char *backend) {
    if (backend && !strcmp(backend, "cuda")) return calibrate_gpu_group(c);
    if (backend && *backend && strcmp(backend, "cpu") && strcmp(backend, "mpi")) return NULL;
    static const char *coll[COLL_OP_COUNT] = { "coll.allreduce", "coll.allgather", "coll.reducescatter",
                                               "coll.alltoall", "coll.broadcast", "coll.sendrecv" };
    switch (c->kind) {
    case MBC_COPY: return c->copy == COPY_HOST ? "copy" : NULL;
    case MBC_GEMM:   /* a grouped GEMM checks the law the single ones fit, and is not fitted */
        if (mb_groups(c) > 1) return NULL;
        return c->precision == PREC_FP32 ? "gemm.fp32" : c->precision == PREC_FP64 ? "gemm.fp64" : NULL;
    case MBC_STORAGE: return "storage.write";
    case MBC_COLLECTIVE: return c->op >= 0 && c->op < COLL_OP_COUNT && c->ranks > 1 ? coll[c->op] : NULL;
    }
    return NULL;
}

/* A parameter of the host model or (gpu.*) of the GPU: NULL when unknown. */
static double *cal_param(cal_target *t, const char *z) {
    return gpu_param_known(z) ? gpu_param(&t->gpu, &t->node, z) : host_param(&t->host, z);
}

static const char *cal_param_unit(const char *z) {
    return gpu_param_known(z) ? gpu_param_unit(z) : host_param_unit(z);
}

const char *const *calibrate_param_names(void) {
    static const char *names[512];
    if (!names[0]) {
        int k = 0;
        for (const char *const *h = host_param_names(); *h && k < 510; h++) names[k++] = *h;
        for (const char *const *g = gpu_param_names(); *g && k < 510; g++) names[k++] = *g;
    }
    return names;
}

/* The target with the group's parameters set to exp(x). */
static void apply(const fit_ctx *f, const double *x, cal_target *h) {
    *h = f->base;
    for (int k = 0; k < f->p; k++) *cal_param(h, f->param[k]) = exp(x[k]);
}

static double model_s(const fit_ctx *f, const cal_target *h, const cal_point *q) {
    if (f->gpu) return calibrate_gpu_predict_s(h, &q->c);
    if (f->read) return host_storage_read_s(&h->host, &q->c);
    mb_prediction p;
    char why[8];
    return host_predict(&h->host, &q->c, &p, why, sizeof why) == 0 ? p.time_s : -1;
}

static double measured_s(const fit_ctx *f, const cal_point *q) { return f->read ? q->read_s : q->time_s; }

static int resid(const gsl_vector *x, void *params, gsl_vector *r) {
    const fit_ctx *f = params;
    cal_target h;
    double xv[CAL_MAX_PARAMS];
    for (int k = 0; k < f->p; k++) xv[k] = gsl_vector_get(x, (size_t)k);
    apply(f, xv, &h);
    for (int i = 0; i < f->n; i++) {
        double t = model_s(f, &h, f->pt[i]);
        gsl_vector_set(r, (size_t)i, t > 0 && isfinite(t) ? log(t / measured_s(f, f->pt[i])) : 1e3);
    }
    return GSL_SUCCESS;
}

/* Size of a point for ordering: bytes, or FLOPs for GEMM. */
static double size_of(const cal_point *q) {
    return q->c.kind == MBC_GEMM ? mb_gemm_flops(&q->c) : q->c.size_bytes;
}

static int cmp_size(const void *a, const void *b) {
    double x = size_of(*(const cal_point *const *)a), y = size_of(*(const cal_point *const *)b);
    return (x > y) - (x < y);
}

static int cmp_abs(const void *a, const void *b) {
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

/* The storage groups' parameters, [0] the write, [1] the read back: the
 * bandwidth, the latency per file, and the ramp's start and length. */
static const char *const storage_params[2][4] = {
    { "storage.write_bw", "storage.latency_s", "storage.write_start_bw", "storage.write_ramp_bytes" },
    { "storage.read_bw", "storage.read_latency_s", "storage.read_start_bw", "storage.read_ramp_bytes" },
};

/* Parameters of a group, starting values from the data (pts sorted by
 * size, n >= 1), and the nested models to try as bit masks over names
 * (bit k: names[k] is fitted; the rest are switched off or kept). */
static int group_params(const char *g, const cal_point **pts, int n, int read, const cal_target *t,
                        const char **names, double *x0, int *levels, int *nlevels) {
    static char buf[CAL_MAX_PARAMS][48];
    const host_profile *h = &t->host;
    *nlevels = 0;
    if (!strncmp(g, "gpu.", 4)) return calibrate_gpu_params(g, pts, n, t, names, x0, levels, nlevels);
    const cal_point *lo = pts[0], *hi = pts[n - 1];
    double t_lo = read ? lo->read_s : lo->time_s, t_hi = read ? hi->read_s : hi->time_s;
    if (!strcmp(g, "copy")) {
        double best = 0, at = 1 << 20;
        for (int i = 0; i < n; i++)
            if (pts[i]->c.size_bytes / pts[i]->time_s > best) best = pts[i]->c.size_bytes / pts[i]->time_s, at = pts[i]->c.size_bytes;
        names[0] = "copy.dram_bw", x0[0] = hi->c.size_bytes / t_hi;
        names[1] = "copy.latency_s", x0[1] = t_lo * 0.5;
        names[2] = "copy.cache_bw", x0[2] = best * 1.2;
        names[3] = "copy.cache_bytes", x0[3] = at * 2;
        names[4] = "copy.l1_bw", x0[4] = best * 2;
        names[5] = "copy.l1_bytes", x0[5] = lo->c.size_bytes * 2;
        names[6] = "copy.cache_k", x0[6] = 4;
        levels[0] = 0x3, levels[1] = 0xf, levels[2] = 0x4f, levels[3] = 0x3f, levels[4] = 0x7f, *nlevels = 5;
        return 7;
    }
    if (!strncmp(g, "gemm.", 5)) {
        precision p = !strcmp(g, "gemm.fp64") ? PREC_FP64 : PREC_FP32;
        double peak = h->gemm_peak_flops[p] > 0 ? h->gemm_peak_flops[p] : 1e11;
        snprintf(buf[0], sizeof buf[0], "%s.eff", g);
        snprintf(buf[1], sizeof buf[1], "%s.latency_s", g);
        names[0] = buf[0], x0[0] = size_of(hi) / t_hi / peak;
        names[1] = buf[1], x0[1] = t_lo * 0.1;
        levels[0] = 0x3, *nlevels = 1;
        return 2;
    }
    if (!strncmp(g, "storage.", 8)) {
        const char *const *sp = storage_params[read];
        for (int k = 0; k < 4; k++) names[k] = sp[k];
        x0[0] = hi->c.size_bytes / t_hi;
        x0[1] = t_lo * 0.3;
        x0[2] = lo->c.size_bytes / t_lo;
        x0[3] = sqrt(lo->c.size_bytes * hi->c.size_bytes);
        levels[0] = 0x3, levels[1] = 0xf, *nlevels = 2;
        return 4;
    }
    /* coll.OP */
    coll_op op = lo->c.op;
    double fac = coll_busbw_factor(op, lo->c.ranks), best = 0;
    for (int i = 0; i < n; i++) {
        double bw = pts[i]->c.size_bytes * fac / pts[i]->time_s;
        if (bw > best) best = bw;
    }
    static const char *const part[] = { "bw", "alpha_s", "rndv_alpha_s", "cache_bw", "cache_bytes", "cache_k",
                                        "eager_bw" };
    for (int k = 0; k < 7; k++) snprintf(buf[k], sizeof buf[k], "%s.%s", g, part[k]);
    names[0] = buf[0], x0[0] = hi->c.size_bytes * fac / t_hi;
    names[1] = buf[1], x0[1] = t_lo * 0.8;
    names[2] = buf[2], x0[2] = t_lo;
    names[3] = buf[3], x0[3] = best * 1.5;
    names[4] = buf[4], x0[4] = 512 << 10;
    names[5] = buf[5], x0[5] = 4;
    const cal_point *small = pts[n > 2 ? 2 : n - 1];     /* eager bandwidth: from the small sizes */
    names[6] = buf[6], x0[6] = small->c.size_bytes * fac / (read ? small->read_s : small->time_s);
    static const int lv[] = { 0x3, 0x7, 0x47, 0x1b, 0x1f, 0x5f, 0x3b, 0x3f, 0x7f };
    for (size_t k = 0; k < sizeof lv / sizeof *lv; k++) levels[k] = lv[k];
    *nlevels = (int)(sizeof lv / sizeof *lv);
    return 7;
}

static double median_abs(double *e, int n) {
    if (n == 0) return NAN;
    qsort(e, (size_t)n, sizeof *e, cmp_abs);
    return n % 2 ? fabs(e[n / 2]) : (fabs(e[n / 2 - 1]) + fabs(e[n / 2])) / 2;
}

/* One least-squares fit of f's p parameters from x0 (values, not logs). */
typedef struct fit_out {
    int status;                  /* GSL_SUCCESS, GSL_EMAXITER, or an error */
    int iterations;
    double x[CAL_MAX_PARAMS];    /* log values */
    double se_log[CAL_MAX_PARAMS];
    double rss;                  /* sum of squared log residuals */
} fit_out;

static int run_fit(fit_ctx *f, const double *x0, fit_out *o) {
    int p = f->p, n = f->n;
    gsl_multifit_nlinear_fdf fdf = { .f = resid, .df = NULL, .fvv = NULL, .n = (size_t)n, .p = (size_t)p, .params = f };
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, (size_t)n, (size_t)p);
    gsl_vector *x = gsl_vector_alloc((size_t)p);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)p, (size_t)p);
    o->status = GSL_ENOMEM;
    if (w && x && cov) {
        for (int k = 0; k < p; k++) gsl_vector_set(x, (size_t)k, log(x0[k] > 0 && isfinite(x0[k]) ? x0[k] : 1e-6));
        int info = 0;
        int st = gsl_multifit_nlinear_init(x, &fdf, w);
        if (st == GSL_SUCCESS) st = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
        o->status = st;
        o->iterations = (int)gsl_multifit_nlinear_niter(w);
        if (st == GSL_SUCCESS || st == GSL_EMAXITER) {
            const gsl_vector *xs = gsl_multifit_nlinear_position(w);
            const gsl_vector *r = gsl_multifit_nlinear_residual(w);
            gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, cov);
            double chi = gsl_blas_dnrm2(r);
            int dof = n - p;
            /* The residuals are log ratios of unknown spread: the
             * covariance is scaled by their variance, chi^2/dof (flooring
             * the scale at 1, as GSL's example does for residuals already
             * divided by a known sigma, read every residual as a 100%
             * error and overstated every standard error ~30x at 3% noise). */
            double scale = dof > 0 ? chi / sqrt(dof) : 1.0;
            o->rss = chi * chi;
            for (int k = 0; k < p; k++) {
                /* A term the measurements cannot see runs off to infinity
                 * (a bandwidth of 4.5e38 B/s when every size is all
                 * latency): it is held at the most a profile holds
                 * (models/host.h), where it is as negligible, and its
                 * standard error, as large, is not written. */
                o->x[k] = fmin(gsl_vector_get(xs, (size_t)k), log(HOST_PARAM_MAX));
                o->se_log[k] = scale * sqrt(fabs(gsl_matrix_get(cov, (size_t)k, (size_t)k)));
            }
        }
    }
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_matrix_free(cov);
    return o->status == GSL_SUCCESS || o->status == GSL_EMAXITER ? 0 : -1;
}

/* A model level the fit leaves out (a cache level, the rendezvous latency)
 * is switched off (its bandwidth or latency 0), not left at the starting
 * profile's values. */
static int ends_with(const char *z, const char *tail) {
    size_t n = strlen(z), k = strlen(tail);
    return n >= k && !strcmp(z + n - k, tail);
}


/* A cache is faster than what backs it: a fit that puts a "cache" below
 * memory's bandwidth has fitted a bump in the noise, not a level. A
 * storage ramp climbs (its start is slower than its end) and ends inside
 * the measured sizes (by half the largest), so the bandwidth a large
 * checkpoint will see was measured, not extrapolated from a climb that
 * had not levelled off. */
static int fitted(const fit_ctx *f, const char *name) {
    for (int k = 0; k < f->p; k++)
        if (!strcmp(f->param[k], name)) return 1;
    return 0;
}

static int levels_ordered(const fit_ctx *f, const double *x) {
    cal_target t;
    apply(f, x, &t);
    const host_profile h = t.host;
    /* Only the group's own levels: the profile also holds the groups
     * fitted before this one. */
    static const char *const pairs[][2] = { { "copy.cache_bw", "copy.dram_bw" }, { "copy.l1_bw", "copy.cache_bw" } };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        double fast = host_param_get(&h, pairs[i][0]), slow = host_param_get(&h, pairs[i][1]);
        if (fitted(f, pairs[i][0]) && fast > 0 && slow > 0 && fast <= slow) return 0;
    }
    for (int o = 0; o < COLL_OP_COUNT; o++) {
        char name[48];
        snprintf(name, sizeof name, "coll.%s.cache_bw", coll_op_name((coll_op)o));
        if (fitted(f, name) && h.coll_cache_bw[o] > 0 && h.coll_cache_bw[o] <= h.coll_bw[o]) return 0;
    }
    double largest = 0;
    for (int i = 0; i < f->n; i++)
        if (f->pt[i]->c.kind == MBC_STORAGE && f->pt[i]->c.size_bytes / f->pt[i]->c.files > largest)
            largest = f->pt[i]->c.size_bytes / f->pt[i]->c.files;
    for (int rd = 0; rd < 2; rd++) {
        const char *const *sp = storage_params[rd];
        if (fitted(f, sp[2]) && (host_param_get(&h, sp[2]) >= host_param_get(&h, sp[0]) ||
                                 host_param_get(&h, sp[3]) > largest / 2))
            return 0;
    }
    return 1;
}

/* ---- Acceptance (calibrate.h) ------------------------------------------ */

static void param_bounds(const char *name, double *lo, double *hi) {
    const char *u = cal_param_unit(name);
    if (!strcmp(u, "s")) *lo = CAL_MIN_LATENCY_S, *hi = CAL_MAX_LATENCY_S;
    else if (!strcmp(u, "B/s")) *lo = CAL_MIN_BW, *hi = CAL_MAX_BW;
    else if (!strcmp(u, "B")) *lo = CAL_MIN_BYTES, *hi = CAL_MAX_BYTES;
    else if (ends_with(name, "cache_k")) *lo = CAL_MIN_K, *hi = CAL_MAX_K;
    else if (ends_with(name, ".eff")) *lo = 0, *hi = CAL_MAX_EFF;
    else if (ends_with(name, ".half_dim")) *lo = CAL_MIN_HALF_DIM, *hi = CAL_MAX_HALF_DIM;
    else *lo = 0, *hi = HOST_PARAM_MAX;
}

/* A case like q, CAL_ENVELOPE_X times larger (GEMM: each dimension doubled). */
static mb_case scaled(const mb_case *q) {
    mb_case c = *q;
    if (c.kind == MBC_GEMM) c.m *= 2, c.n *= 2, c.k *= 2;
    else c.size_bytes *= CAL_ENVELOPE_X;
    return c;
}

/* Whether a fit (f's parameters at o) is acceptable; pts sorted by size.
 * On rejection, why says so and *bad is the parameter at fault (-1: the
 * model as a whole). */
static int acceptable(const fit_ctx *f, const fit_out *o, char *why, size_t n, int *bad) {
    *bad = -1;
    for (int k = 0; k < f->p; k++) {
        double v = exp(o->x[k]), lo, hi;
        const char *u = cal_param_unit(f->param[k]);
        param_bounds(f->param[k], &lo, &hi);
        if (!(v >= lo && v <= hi)) {
            snprintf(why, n, "%s = %.3g%s%s is %s %.3g%s%s", f->param[k], v, *u ? " " : "", u,
                     v < lo ? "below" : "above", v < lo ? lo : hi, *u ? " " : "", u);
            *bad = k;
            return 0;
        }
        /* A GPU group with as many points as parameters (one 8192^3 GEMM of
         * a precision) is exactly determined: no residual to estimate an
         * error from. (A host group's models compete by AIC, which an exact
         * fit would win by default: there the error decides.) */
        if (!(f->gpu && f->n == f->p) && !(o->se_log[k] <= 1)) {
            snprintf(why, n, "%s = %.3g%s%s has a standard error of %.3g, larger than itself", f->param[k], v,
                     *u ? " " : "", u, v * o->se_log[k]);
            *bad = k;
            return 0;
        }
    }
    cal_target h;
    apply(f, o->x, &h);
    const cal_point *top = f->pt[f->n - 1];
    double top_rate = size_of(top) / measured_s(f, top);
    cal_point big = *top;
    big.c = scaled(&top->c);
    double t = model_s(f, &h, &big), rate = size_of(&big) / t;
    if (!(t > 0) || !(rate >= top_rate / CAL_ENVELOPE && rate <= top_rate * CAL_ENVELOPE_UP)) {
        snprintf(why, n, "it predicts %.3g s for %.3g %s, a rate of %.3g against %.3g measured at the largest size",
                 t, size_of(&big), big.c.kind == MBC_GEMM ? "FLOP" : "B", rate, top_rate);
        return 0;
    }
    return 1;
}

/* The mask without parameter k, and without what is meaningless without
 * it: a cache level's bandwidth and size go together (the sharpness k is
 * shared and keeps its starting value alone). */
static int without(const char *const *names, int want, int mask, const char *name) {
    static const char *const pairs[][2] = { { "cache_bw", "cache_bytes" }, { "l1_bw", "l1_bytes" },
                                            { "start_bw", "ramp_bytes" } };
    for (int k = 0; k < want; k++)
        if (!strcmp(names[k], name)) mask &= ~(1 << k);
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        for (int a = 0; a < 2; a++)
            if (ends_with(name, pairs[i][a]))
                for (int k = 0; k < want; k++)
                    if (ends_with(names[k], pairs[i][1 - a]) &&
                        !strncmp(names[k], name, strlen(name) - strlen(pairs[i][a])))
                        mask &= ~(1 << k);
    return mask;
}

static void note_add(char *note, size_t n, const char *fmt, const char *z) {
    size_t k = strlen(note);
    if (k < n) snprintf(note + k, n - k, fmt, k ? "; " : "", z);
}

/* The candidate models of one group and what became of them. */
typedef struct model_search {
    const char *names[CAL_MAX_PARAMS];   /* the group's parameters, in nesting order */
    double x0[CAL_MAX_PARAMS];           /* their starting values */
    int want;                            /* how many */
    int cand[64], nc;                    /* candidate models: bit k set fits names[k] */
    int few;                             /* candidates were dropped for too few points */
    fit_ctx best_f;                      /* the model with the least AIC so far */
    fit_out best;
    double best_aic;                     /* INFINITY while none passed */
    char rejected[320], first_why[200];  /* shorter than the note they join */
    int n_rejected;
} model_search;

/* Hold out every other distinct size (several runs may repeat one); all
 * sorted by size. Fills fit and held (each n_all long). */
static void split_held(const cal_point **all, int n_all, int hold_out, const cal_point **fit, int *nf,
                       const cal_point **held, int *nh) {
    int rank = -1;
    double last = -1;
    *nf = *nh = 0;
    for (int i = 0; i < n_all; i++) {
        if (size_of(all[i]) != last) rank++, last = size_of(all[i]);
        if (hold_out && rank % 2 == 1) held[(*nh)++] = all[i];
        else fit[(*nf)++] = all[i];
    }
}

/* The group's parameters and the candidate models nf points can fit: a
 * model needs nf > p + 1 points; too few fit the bandwidth (and latency)
 * only. */
static void candidates(const cal_group *g, const cal_point **fit, int nf, int read, const cal_target *h,
                       model_search *s) {
    s->nc = 0;
    s->want = group_params(g->name, fit, nf, read, h, s->names, s->x0, s->cand, &s->nc);
    int kept = 0;
    for (int ci = 0; ci < s->nc; ci++)
        if (__builtin_popcount((unsigned)s->cand[ci]) + 1 < nf) s->cand[kept++] = s->cand[ci];
    s->few = kept < s->nc;
    s->nc = kept;
    if (s->nc == 0) s->cand[s->nc++] = nf >= 3 && s->want >= 2 ? 0x3 : 0x1;
}

/* The fit of candidate model mask: its parameters, their starting values
 * in xs0, and the levels it leaves out zeroed in its base profile. */
static void candidate_ctx(const model_search *s, int mask, const cal_point **fit, int nf, int read,
                          const cal_target *h, fit_ctx *f, double *xs0) {
    *f = (fit_ctx){ .pt = fit, .n = nf, .read = read, .gpu = !strncmp(s->names[0], "gpu.", 4), .base = *h };
    for (int k = 0; k < s->want; k++) {
        const char *name = s->names[k];
        if (mask >> k & 1) {
            xs0[f->p] = s->x0[k];
            f->param[f->p++] = name;
        } else if (f->gpu) {
            continue;                                  /* a GPU parameter not fitted keeps the catalog's value */
        } else if (ends_with(name, "cache_bw") || ends_with(name, "l1_bw") ||
                   ends_with(name, "rndv_alpha_s") || ends_with(name, "eager_bw") ||
                   ends_with(name, "start_bw") || ends_with(name, "latency_s") ||
                   ends_with(name, "alpha_s")) {
            *host_param(&f->base.host, name) = 0;          /* the level (or latency) is left out */
        }
    }
}

/* The name of a group's eager limit in the host profile. */
static void eager_param(const char *group, char *z, size_t n) {
    snprintf(z, n, "%s.eager_bytes", group);
}

/* Least squares of f from xs0, restarted where a start matters: a cache
 * knee is a local feature, so it starts at several of the sizes; the
 * eager limit is a step, not a slope (least squares cannot move it), so it
 * is placed between each two neighbouring measured sizes in turn (at their
 * geometric mean). Keeps in o the best fit whose levels are ordered
 * (o->rss INFINITY when none), and the eager limit of that fit in
 * f->base. Returns 1 when the model places an eager limit. */
static int fit_restarts(const char *group, fit_ctx *f, double *xs0, fit_out *o) {
    const cal_point **fit = f->pt;
    int nf = f->n, p = f->p;
    int knee = -1, step = 0;
    for (int k = 0; k < p; k++) {
        if (ends_with(f->param[k], "cache_bytes") || ends_with(f->param[k], "ramp_bytes")) knee = k;
        if (ends_with(f->param[k], "rndv_alpha_s")) step = 1;
    }
    char eager_name[48];
    eager_param(group, eager_name, sizeof eager_name);
    double *eager = step ? host_param(&f->base.host, eager_name) : NULL;
    double eager_at = eager ? *eager : 0;
    fit_out t;
    *o = (fit_out){ .status = -1 };
    o->rss = INFINITY;
    for (int e = 1; e < (eager ? nf : 2); e++) {
        if (eager) {
            if (size_of(fit[e]) == size_of(fit[e - 1])) continue;
            *eager = sqrt(size_of(fit[e - 1]) * size_of(fit[e]));
        }
        for (int s0 = 0; s0 < (knee >= 0 ? nf : 1); s0 += 2) {
            if (knee >= 0) xs0[knee] = size_of(fit[s0]) * 1.5;
            if (run_fit(f, xs0, &t) == 0 && t.rss < o->rss && levels_ordered(f, t.x)) {
                *o = t;
                if (eager) eager_at = *eager;
            }
        }
    }
    if (eager) *eager = eager_at;
    return eager != NULL;
}

/* Note a rejected fit (once per parameter, at most three) and queue the
 * model without the parameter that failed, unless already queued. */
static void reject(model_search *s, const fit_ctx *f, int mask, const char *why, int bad) {
    if (!s->first_why[0]) snprintf(s->first_why, sizeof s->first_why, "%s", why);
    const char *who = bad >= 0 ? f->param[bad] : "the model";
    char key[64];
    snprintf(key, sizeof key, "%s ", who);
    if (!strstr(s->rejected, key) && s->n_rejected < 3) {
        note_add(s->rejected, sizeof s->rejected, "%srejected %s", why);
        s->n_rejected++;
    }
    if (bad >= 0) {
        int m = without(s->names, s->want, mask, f->param[bad]);
        int seen = m == 0;
        for (int c2 = 0; c2 < s->nc && !seen; c2++) seen = s->cand[c2] == m;
        if (!seen && s->nc < (int)(sizeof s->cand / sizeof *s->cand)) s->cand[s->nc++] = m;
    }
}

/* Fit every candidate (the queue grows as rejections drop parameters) and
 * keep in s the acceptable one with the least AIC. */
static void search_models(const cal_group *g, const cal_point **fit, int nf, int read, const cal_target *h,
                          model_search *s) {
    s->best_f = (fit_ctx){ 0 };
    s->best = (fit_out){ .status = -1 };
    s->best_aic = INFINITY;
    s->rejected[0] = s->first_why[0] = '\0';
    s->n_rejected = 0;
    for (int ci = 0; ci < s->nc; ci++) {
        fit_ctx f;
        double xs0[CAL_MAX_PARAMS];
        candidate_ctx(s, s->cand[ci], fit, nf, read, h, &f, xs0);
        int p = f.p;
        if (nf < p) continue;
        fit_out o;
        int placed = fit_restarts(g->name, &f, xs0, &o);
        if (!(o.rss < INFINITY)) continue;
        char why[200];
        int bad;
        if (!acceptable(&f, &o, why, sizeof why, &bad)) {
            reject(s, &f, s->cand[ci], why, bad);
            continue;
        }
        double rss = fmax(o.rss, 1e-300);
        double aic = nf * log(rss / nf) + 2.0 * (p + placed);   /* the placed limit counts */
        if (aic < s->best_aic) s->best_aic = aic, s->best = o, s->best_f = f;
    }
}

/* The fitted values and their standard errors into g (and stderr_of). */
static void record_params(cal_group *g, const fit_ctx *f, const fit_out *o, double *stderr_of) {
    const char *const *all_names = calibrate_param_names();
    g->n_params = f->p;
    for (int k = 0; k < f->p; k++) {
        snprintf(g->param[k], sizeof g->param[k], "%s", f->param[k]);
        g->value[k] = exp(o->x[k]);
        g->stderr_[k] = f->gpu && f->n == f->p ? INFINITY : g->value[k] * o->se_log[k];   /* exactly determined */
        for (int i = 0; stderr_of && all_names[i]; i++)
            if (!strcmp(all_names[i], f->param[k])) stderr_of[i] = g->stderr_[k];
    }
}

/* Errors of the fitted profile h on the fitted and the held-out points,
 * into g, and each point's prediction into res (indexed from base). err:
 * scratch of nh doubles. */
static void record_errors(cal_group *g, int gi, const fit_ctx *f, const cal_target *h, const cal_point **fit,
                          int nf, const cal_point **held, int nh, double *err, const cal_point *base,
                          cal_residual *res) {
    double ss = 0, mx = 0;
    for (int i = 0; i < nf; i++) {
        double t = model_s(f, h, fit[i]), m = measured_s(f, fit[i]);
        double e = 100 * (t / m - 1);
        ss += e * e;
        mx = fmax(mx, fabs(e));
    }
    g->fit_rms_pct = sqrt(ss / nf);
    g->fit_max_pct = mx;
    int ne = 0;
    for (int i = 0; i < nh; i++) {
        double t = model_s(f, h, held[i]), m = measured_s(f, held[i]);
        if (t > 0 && m > 0) err[ne++] = 100 * (t - m) / m;
    }
    g->held_median_pct = median_abs(err, ne);
    for (int i = 0; res && i < nf + nh; i++) {
        const cal_point *q = i < nf ? fit[i] : held[i - nf];
        cal_residual *r = &res[q - base];
        double t = model_s(f, h, q), m = measured_s(f, q);
        if (f->read) r->read_group = gi, r->read_predicted_s = t, r->read_measured_s = m;
        else r->group = gi, r->predicted_s = t, r->measured_s = m, r->held = i >= nf;
    }
    g->held_max_pct = ne ? fabs(err[ne - 1]) : NAN;
}

/* g's note: fallback or how many parameters were fitted, the rejections,
 * the eager limit placed and an iteration limit reached. */
static void write_note(cal_group *g, const model_search *s, const cal_target *h, int fallback) {
    int p = s->best_f.p;
    if (fallback)
        snprintf(g->note, sizeof g->note, "no model passed the checks: kept the starting profile's values");
    else if (p < s->want)
        snprintf(g->note, sizeof g->note, "fitted %d of %d parameters (%s)", p, s->want,
                 s->few ? "too few points for more" : "AIC");
    if (!fallback && s->best_f.gpu && s->best_f.n == p) note_add(g->note, sizeof g->note, "%s%s", "as many points as parameters: "
                                                 "exactly determined, no standard error, nothing held out");
    if (s->rejected[0]) note_add(g->note, sizeof g->note, "%s%s", s->rejected);
    char eager_name[48];
    eager_param(g->name, eager_name, sizeof eager_name);
    for (int k = 0; k < p; k++)
        if (ends_with(s->best_f.param[k], "rndv_alpha_s")) {
            size_t k0 = strlen(g->note);
            snprintf(g->note + k0, sizeof g->note - k0, "%seager limit placed at %.0f B", k0 ? "; " : "",
                     host_param_get(&h->host, eager_name));
        }
    if (s->best.status == GSL_EMAXITER) {
        size_t k = strlen(g->note);
        snprintf(g->note + k, sizeof g->note - k, "%sstopped at the iteration limit (200)", k ? "; " : "");
    }
}

/* Fit one group; g->name set. Updates h and stderr_of on success.
 *
 * Model choice: the group's model is nested (bandwidth and latency, then
 * the rendezvous latency or a cache level, then another); each is fitted
 * and the one with the least Akaike criterion (AIC = n ln(RSS/n) + 2p on
 * the log residuals) kept, so a cache knee the data do not show is not
 * invented (its parameters would run off and extrapolate badly). On this
 * project's 2-core test machine the small-sample correction (AICc) kept
 * the 2-parameter models and doubled the held-out errors of the
 * collectives against plain AIC, so plain AIC it is. */
static void fit_group(cal_group *g, int gi, const cal_point **all, int n_all, int read, int hold_out, cal_target *h,
                      double *stderr_of, const cal_point *base, cal_residual *res) {
    qsort(all, (size_t)n_all, sizeof *all, cmp_size);
    const cal_point **fit = malloc((size_t)n_all * sizeof *fit), **held = malloc((size_t)n_all * sizeof *held);
    double *err = malloc((size_t)n_all * sizeof *err);
    model_search search, *s = &search;
    if (!fit || !held || !err) {
        snprintf(g->note, sizeof g->note, "out of memory");
        goto out;
    }
    int nf, nh;
    split_held(all, n_all, hold_out, fit, &nf, held, &nh);
    g->n_fit = nf;
    g->n_held = nh;
    candidates(g, fit, nf, read, h, s);
    search_models(g, fit, nf, read, h, s);
    int fallback = 0;
    if (!(s->best_aic < INFINITY) && s->first_why[0]) {
        /* Every model was rejected: the group keeps the starting values. */
        fallback = 1;
        s->best_f = (fit_ctx){ .pt = fit, .n = nf, .read = read, .gpu = !strncmp(g->name, "gpu.", 4), .base = *h };
        s->best = (fit_out){ .status = GSL_SUCCESS };
    } else if (!(s->best_aic < INFINITY)) {
        if (nf < 1 + (s->cand[0] > 1)) snprintf(g->note, sizeof g->note, "%d points: too few to fit", nf);
        else snprintf(g->note, sizeof g->note, "the fit failed: %s", gsl_strerror(s->best.status));
        goto out;
    }
    g->iterations = s->best.iterations;
    apply(&s->best_f, s->best.x, h);
    record_params(g, &s->best_f, &s->best, stderr_of);
    record_errors(g, gi, &s->best_f, h, fit, nf, held, nh, err, base, res);
    g->ok = 1;          /* at the iteration limit the fit is still the best found: noted */
    write_note(g, s, h, fallback);
out:
    free(fit);
    free(held);
    free(err);
}

static int same_case(const cal_point *p, const cal_point *q) {
    const mb_case *a = &p->c, *b = &q->c;
    return !strcmp(p->backend, q->backend) && a->kind == b->kind && a->op == b->op && a->ranks == b->ranks && a->size_bytes == b->size_bytes &&
           a->m == b->m && a->n == b->n && a->k == b->k && a->precision == b->precision && a->copy == b->copy &&
           a->files == b->files;
}

int calibrate_best_of(cal_point *pts, int n) {
    int out = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < out && !same_case(&pts[j], &pts[i])) j++;
        if (j == out) {
            pts[out++] = pts[i];
            continue;
        }
        if (pts[i].time_s > 0 && pts[i].time_s < pts[j].time_s) pts[j].time_s = pts[i].time_s;
        if (pts[i].read_s > 0 && (pts[j].read_s <= 0 || pts[i].read_s < pts[j].read_s)) pts[j].read_s = pts[i].read_s;
    }
    return out;
}

/* The groups in fitting order: the host's, then the GPU's. */
static int group_order(const char **order, int cap) {
    static const char *host[] = { "copy", "gemm.fp32", "gemm.fp64", "storage.write", "storage.read",
                                  "coll.allreduce", "coll.allgather", "coll.reducescatter", "coll.alltoall",
                                  "coll.broadcast", "coll.sendrecv" };
    int n = 0;
    for (size_t i = 0; i < sizeof host / sizeof *host && n < cap; i++) order[n++] = host[i];
    for (const char *const *g = calibrate_gpu_groups(); *g && n < cap; g++) order[n++] = *g;
    return n;
}

/* Count the measured points no group fits, by reason. */
static void count_left_out(const cal_point *pts, int n, int has_gpu, cal_report *rep) {
    for (int i = 0; i < n; i++) {
        if (!(pts[i].time_s > 0)) continue;
        const char *g = calibrate_group_of(&pts[i].c, pts[i].backend);
        if (!strcmp(pts[i].backend, "nccl")) rep->left_nccl++;
        else if (!g) rep->left_other++;
        else if (!strncmp(g, "gpu.", 4) && !has_gpu) rep->left_no_gpu++;
    }
}

int calibrate_fit(const cal_point *pts, int n, int hold_out, cal_target *t, double *stderr_of, cal_report *rep,
                  cal_residual *res, char *err, size_t errlen) {
    const char *order[CAL_MAX_GROUPS];
    int n_order = group_order(order, CAL_MAX_GROUPS);
    memset(rep, 0, sizeof *rep);
    const char *const *names = calibrate_param_names();
    for (int i = 0; stderr_of && names[i]; i++) stderr_of[i] = NAN;
    numerics_gsl_install();          /* GSL errors come back as codes, never abort */
    for (int i = 0; res && i < n; i++) res[i] = (cal_residual){ .group = -1, .read_group = -1 };
    count_left_out(pts, n, t->has_gpu, rep);
    cal_target out = *t;
    const cal_point **sel = n > 0 ? malloc((size_t)n * sizeof *sel) : NULL;
    if (n > 0 && !sel) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int gi = 0; gi < n_order; gi++) {
        int read = !strcmp(order[gi], "storage.read"), k = 0;
        if (!strncmp(order[gi], "gpu.", 4) && !t->has_gpu) continue;
        for (int i = 0; i < n; i++) {
            const char *g = calibrate_group_of(&pts[i].c, pts[i].backend);
            if (!g || !(pts[i].time_s > 0)) continue;
            if (read ? (!strcmp(g, "storage.write") && pts[i].read_s > 0) : !strcmp(g, order[gi])) sel[k++] = &pts[i];
        }
        if (k == 0 || rep->n_groups == CAL_MAX_GROUPS) continue;
        cal_group *g = &rep->group[rep->n_groups++];
        snprintf(g->name, sizeof g->name, "%s", order[gi]);
        g->held_median_pct = g->held_max_pct = NAN;
        fit_group(g, rep->n_groups - 1, sel, k, read, hold_out, &out, stderr_of, pts, res);
    }
    free(sel);
    if (rep->n_groups == 0) {
        snprintf(err, errlen, "no measured case a calibrated model prices (cpu/mpi: host copies, fp32/fp64 GEMM, "
                              "storage, collectives of >= 2 ranks; cuda: GEMM and copies, on a catalog GPU)");
        return -1;
    }
    *t = out;
    return rep->n_groups;
}
