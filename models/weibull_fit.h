/*
 * weibull_fit: the maximum-likelihood Weibull fit of lifetimes, some of
 * them right-censored (still running when the observation ended), with a
 * profile-likelihood interval for the shape and the likelihood-ratio test
 * of the exponential (shape 1) against it. Pure; GSL supplies the root
 * finder and the chi-square quantiles. Used by fit-failures on the times
 * between one instance's failures (models/failfit.h).
 *
 * With r complete lifetimes x_i, censored ones c_j, and S(k) = Σ x_i^k +
 * Σ c_j^k over all of them, the scale that maximises the likelihood for a
 * shape k is λ(k)^k = S(k) / r, and the profile log-likelihood is
 *
 *     ℓ(k) = r ln k − r ln(S(k) / r) + (k − 1) Σ ln x_i − r
 *
 * The MLE k̂ solves dℓ/dk = r/k − r S'(k)/S(k) + Σ ln x_i = 0 (A. C. Cohen,
 * "Maximum likelihood estimation in the Weibull distribution based on
 * complete and on censored samples", Technometrics 7(4), 1965), whose left
 * side falls with k: one root. The shape's interval at level 1 − α is the
 * profile-likelihood interval {k : 2(ℓ(k̂) − ℓ(k)) ≤ χ²(1 − α; 1)}, chosen
 * over the Fisher-information normal approximation because it stays
 * asymmetric, as the shape's likelihood is, at the few gaps a month of a
 * cluster gives (J. F. Lawless, "Statistical Models and Methods for
 * Lifetime Data", 2nd ed., Wiley 2003, on likelihood-ratio intervals for
 * the Weibull). The exponential is shape 1, so 2(ℓ(k̂) − ℓ(1)) is the
 * likelihood-ratio statistic, χ² with one degree of freedom under it: its
 * p-value is below α exactly when the interval leaves 1 out.
 */
#ifndef CT_WEIBULL_FIT_H
#define CT_WEIBULL_FIT_H

/* The shapes searched: from a hazard falling almost as 1/t to a sharp
 * wear-out (the simulator takes shapes in (0, 20], models/reliability.h). */
#define WEIBULL_FIT_SHAPE_MIN 0.02
#define WEIBULL_FIT_SHAPE_MAX 50.0

typedef struct weibull_fit {
    int complete, censored;          /* lifetimes used */
    double shape, scale;             /* the MLE (scale in the lifetimes' unit) */
    double shape_lo, shape_hi;       /* profile-likelihood interval; 0 / INFINITY when past the searched range */
    double lr;                       /* 2(ℓ(k̂) − ℓ(1)): the likelihood-ratio statistic against the exponential */
    double p_exponential;            /* its p-value (χ², 1 degree of freedom) */
} weibull_fit;

/* Fit n_x complete lifetimes x (> 0) and n_c censored ones c (> 0; c may
 * be NULL when n_c is 0) at level (0 < level < 1). 0, or -1 (*out
 * unchanged) when there are fewer than 2 complete lifetimes, a lifetime is
 * not positive and finite, or the maximum lies outside the searched shapes
 * (all complete lifetimes equal). */
int weibull_fit_mle(const double *x, int n_x, const double *c, int n_c, double level, weibull_fit *out);

#endif
