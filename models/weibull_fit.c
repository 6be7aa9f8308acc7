/*
 * weibull_fit: maximum-likelihood Weibull shape and scale of lifetimes
 * with right-censoring, the shape's profile-likelihood interval and the
 * likelihood-ratio test of the exponential (weibull_fit.h).
 */
#include "models/weibull_fit.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

/* Bisection steps on ln k: the bracket [ln 0.02, ln 50] (7.8 wide) halves
 * to below 1e-15 relative in shape in 60 steps; 100 leave margin. */
#define WEIBULL_FIT_STEPS 100

/* The lifetimes as logarithms of lifetime / the largest one (all <= 0),
 * so that every power w^k = exp(k ln w) stays in (0, 1] and S(k) >= 1. */
typedef struct wdata {
    double *l;                       /* n: the complete ones first */
    int n, r;                        /* all lifetimes; complete ones */
    double sum_l;                    /* Σ ln x over the complete ones */
    double max;                      /* the largest lifetime */
} wdata;

/* S(k) = Σ w^k and S'(k) = Σ w^k ln w over all lifetimes. */
static void sums(const wdata *d, double k, double *s0, double *s1) {
    *s0 = *s1 = 0;
    for (int i = 0; i < d->n; i++) {
        double p = exp(k * d->l[i]);
        *s0 += p, *s1 += p * d->l[i];
    }
}

/* The profile log-likelihood ℓ(k), up to a constant. */
static double loglik(const wdata *d, double k) {
    double s0, s1;
    sums(d, k, &s0, &s1);
    return d->r * log(k) - d->r * log(s0 / d->r) + (k - 1) * d->sum_l - d->r;
}

/* dℓ/dk: falls with k (S'/S is the w^k-weighted mean of ln w, which rises). */
static double score(const wdata *d, double k) {
    double s0, s1;
    sums(d, k, &s0, &s1);
    return d->r / k - d->r * s1 / s0 + d->sum_l;
}

/* The root of f(k) - target on [lo, hi] (ln-bisection), f monotone with
 * f(lo) - target and f(hi) - target of opposite signs. */
static double root(const wdata *d, double (*f)(const wdata *, double), double target, double lo, double hi) {
    int rising = f(d, hi) > f(d, lo);
    double a = log(lo), b = log(hi);
    for (int i = 0; i < WEIBULL_FIT_STEPS; i++) {
        double m = 0.5 * (a + b);
        if ((f(d, exp(m)) < target) == rising) a = m;
        else b = m;
    }
    return exp(0.5 * (a + b));
}

/* The lifetimes into d (logs scaled by the largest); -1 when one is not
 * positive and finite, or memory runs out. */
static int load(wdata *d, const double *x, int n_x, const double *c, int n_c) {
    double m = 0;
    for (int i = 0; i < n_x + n_c; i++) {
        double v = i < n_x ? x[i] : c[i - n_x];
        if (!(v > 0) || !isfinite(v)) return -1;
        if (v > m) m = v;
    }
    d->n = n_x + n_c, d->r = n_x, d->sum_l = 0, d->max = m;
    if (!(d->l = malloc((size_t)d->n * sizeof *d->l))) return -1;
    for (int i = 0; i < d->n; i++) {
        d->l[i] = log((i < n_x ? x[i] : c[i - n_x]) / m);
        if (i < n_x) d->sum_l += d->l[i];
    }
    return 0;
}

int weibull_fit_mle(const double *x, int n_x, const double *c, int n_c, double level, weibull_fit *out) {
    wdata d;
    if (n_x < 2 || n_c < 0 || (n_c > 0 && !c) || !(level > 0 && level < 1) || load(&d, x, n_x, c, n_c) < 0) return -1;
    const double lo = WEIBULL_FIT_SHAPE_MIN, hi = WEIBULL_FIT_SHAPE_MAX;
    int rc = -1;
    if (score(&d, lo) > 0 && score(&d, hi) < 0) {
        weibull_fit w = { .complete = n_x, .censored = n_c };
        w.shape = root(&d, score, 0, lo, hi);
        double top = loglik(&d, w.shape), half = 0.5 * gsl_cdf_chisq_Pinv(level, 1), s0, s1;
        w.shape_lo = loglik(&d, lo) < top - half ? root(&d, loglik, top - half, lo, w.shape) : 0;
        w.shape_hi = loglik(&d, hi) < top - half ? root(&d, loglik, top - half, w.shape, hi) : INFINITY;
        w.lr = fmax(0, 2 * (top - loglik(&d, 1)));
        w.p_exponential = gsl_cdf_chisq_Q(w.lr, 1);
        sums(&d, w.shape, &s0, &s1);
        w.scale = d.max * pow(s0 / n_x, 1 / w.shape);      /* λ^k = S(k) / r */
        *out = w;
        rc = 0;
    }
    free(d.l);
    return rc;
}
