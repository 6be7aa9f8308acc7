/*
 * forecast_stats: percentiles over replicas, drain times, utilisation by
 * day (see forecast_stats.h).
 */
#include "plan/forecast_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double forecast_stats_percentile(const double *v, int n, double p) {
    if (n <= 0 || !(p > 0) || p > 100) return NAN;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    /* k = ceil(n p / 100), computed on whole numbers so that p = 90 of 20
     * replicas is exactly the 18th (no rounding up to the 19th) */
    long long num = (long long)llround(p * 1e6) * n, den = 100000000LL;
    long long k = (num + den - 1) / den;
    if (k < 1) k = 1;
    if (k > n) k = n;
    double x = s[k - 1];
    free(s);
    return isinf(x) ? NAN : x;
}

double forecast_stats_share(const double *v, int n) {
    if (n <= 0) return 0;
    int k = 0;
    for (int i = 0; i < n; i++) k += isfinite(v[i]) != 0;
    return (double)k / n;
}

double forecast_stats_drain(const double *start_s, const unsigned char *counts, int n) {
    double last = 0;
    for (int i = 0; i < n; i++) {
        if (!counts[i]) continue;
        if (!isfinite(start_s[i])) return INFINITY;
        if (start_s[i] > last) last = start_s[i];
    }
    return last;
}

int forecast_days_init(forecast_days *d, int n_days, double day_s) {
    memset(d, 0, sizeof *d);
    d->n_days = n_days;
    d->day_s = day_s;
    d->known_s = INFINITY;
    d->gpu_s = calloc((size_t)n_days + 1, sizeof *d->gpu_s);
    return d->gpu_s ? 0 : -1;
}

void forecast_days_free(forecast_days *d) {
    free(d->gpu_s);
    d->gpu_s = NULL;
}

/* Add the current level from d->t_s to t_s into the bins it crosses. */
static void integrate(forecast_days *d, double t_s) {
    double a = d->t_s > 0 ? d->t_s : 0;
    for (int k = (int)(a / d->day_s); k < d->n_days && a < t_s; k++) {
        double end = (k + 1) * d->day_s, b = t_s < end ? t_s : end;
        if (b > a) d->gpu_s[k] += d->level * (b - a);
        a = b;
    }
    if (t_s > d->t_s) d->t_s = t_s;
}

void forecast_days_level(forecast_days *d, double t_s, double gpus) {
    integrate(d, t_s);
    d->level = gpus;
}

void forecast_days_close(forecast_days *d, double known_s) {
    integrate(d, known_s);
    d->known_s = known_s;
}

double forecast_days_util(const forecast_days *d, int k, int cluster_gpus) {
    if (k < 0 || k >= d->n_days || cluster_gpus <= 0) return NAN;
    double lo = k * d->day_s, hi = lo + d->day_s;
    double known = (d->known_s < hi ? d->known_s : hi) - lo;
    if (!(known > 0)) return NAN;
    return d->gpu_s[k] / ((double)cluster_gpus * known);
}
