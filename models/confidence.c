/*
 * confidence: intervals for a mean and a quantile (see confidence.h).
 * O(n) for the mean; the quantile interval walks the binomial CDF once,
 * O(n) calls to GSL. A plan looks at tens to hundreds of runs per point.
 */
#include "models/confidence.h"

#include <math.h>
#include <stddef.h>

#include <gsl/gsl_cdf.h>

#include "models/numerics.h"

int confidence_mean(const double *x, int n, double level, double *lo, double *hi) {
    *lo = *hi = NAN;
    if (n < 2 || !(level > 0 && level < 1)) return -1;
    double sum = 0;
    int pinf = 0, ninf = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(x[i])) return -1;
        if (isinf(x[i])) x[i] > 0 ? pinf++ : ninf++;
        else sum += x[i];
    }
    if (pinf || ninf) {
        if (pinf && ninf) return -1;
        *lo = *hi = pinf ? INFINITY : -INFINITY;
        return 0;
    }
    double mean = sum / n, ss = 0;
    for (int i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    double sd = sqrt(ss / (n - 1));
    numerics_gsl_install();
    double t = gsl_cdf_tdist_Pinv(1 - (1 - level) / 2, (double)(n - 1));
    if (!isfinite(t)) return -1;
    double half = t * sd / sqrt((double)n);
    *lo = mean - half;
    *hi = mean + half;
    return 0;
}

/* The ranks (1-based) of the interval's ends; 0 / n + 1 where none. */
static void ranks(int n, double q, double level, int *l, int *u) {
    double a = (1 - level) / 2;
    *l = 0;
    *u = n + 1;
    /* B(k) = P(K <= k), K ~ Bin(n, q): the lower end is x(l) for the
     * largest l with B(l - 1) <= a, the upper x(u) for the smallest u with
     * B(u - 1) >= 1 - a */
    for (int k = 0; k < n; k++) {
        double b = gsl_cdf_binomial_P((unsigned)k, q, (unsigned)n);
        if (b <= a) *l = k + 1;
        if (b >= 1 - a && *u == n + 1) *u = k + 1;
    }
}

int confidence_quantile(const double *x, int n, double q, double level, double *lo, double *hi, int *l, int *u) {
    *lo = *hi = NAN;
    if (n < 1 || !(q > 0 && q < 1) || !(level > 0 && level < 1)) return -1;
    numerics_gsl_install();
    int rl, ru;
    ranks(n, q, level, &rl, &ru);
    *lo = rl >= 1 ? x[rl - 1] : -INFINITY;
    *hi = ru <= n ? x[ru - 1] : INFINITY;
    if (l) *l = rl;
    if (u) *u = ru;
    return 0;
}

int confidence_quantile_min_runs(double q, double level, int max_n) {
    if (!(q > 0 && q < 1) || !(level > 0 && level < 1)) return max_n + 1;
    numerics_gsl_install();
    /* both ends exist once (1-q)^n <= a and q^n <= a: solve, then check */
    double a = (1 - level) / 2;
    double need = fmax(log(a) / log(q), log(a) / log(1 - q));
    int n = (int)floor(need) - 1;
    if (n < 1) n = 1;
    for (; n <= max_n; n++) {
        int l, u;
        ranks(n, q, level, &l, &u);
        if (l >= 1 && u <= n) return n;
    }
    return max_n + 1;
}
