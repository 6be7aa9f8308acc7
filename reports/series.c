/*
 * series: power-of-two buckets shared by every series of a run.
 *
 * Representation (one series):
 *
 *   value, last_s   the value held since last_s (time accounted up to last_s)
 *   b[4k .. 4k+3]   bucket k = [k*W, (k+1)*W): integral of value dt, time
 *                   covered, min, max; buckets 0..n-1 are contiguous because
 *                   a series is always advanced from its last time
 *
 * W is a power of two, so t / W and k * W are exact in binary floating
 * point and a time on a bucket edge always falls in the same bucket.
 */
#include "reports/series.h"
#include "base/grow.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SUM, COV, MIN, MAX, NF };

typedef struct sr {
    double value, last_s;
    int n, cap;
    double *b;
} sr;

struct series_set {
    int max;
    double w;
    int n;
    size_t cap;
    sr *s;
};

series_set *series_new(int max_points) {
    assert(max_points >= 2 && max_points % 2 == 0);
    series_set *ss = calloc(1, sizeof *ss);
    if (!ss) return NULL;
    ss->max = max_points;
    ss->w = ldexp(1.0, -10);
    return ss;
}

void series_free(series_set *ss) {
    if (!ss) return;
    for (int i = 0; i < ss->n; i++) free(ss->s[i].b);
    free(ss->s);
    free(ss);
}

int series_add(series_set *ss, double initial) {
    if (GROW(ss->s, ss->cap, (size_t)ss->n + 1)) return -1;
    sr *s = &ss->s[ss->n];
    memset(s, 0, sizeof *s);
    s->value = isfinite(initial) ? initial : 0;
    return ss->n++;
}

int series_count(const series_set *ss) { return ss->n; }

double series_bucket_s(const series_set *ss) { return ss->w; }

/* Make bucket k exist (fresh buckets are empty). */
static int reserve(sr *s, int k) {
    if (k < s->n) return 0;
    if (k >= s->cap) {
        int n = s->cap ? s->cap : 64;
        while (n <= k) n *= 2;
        double *p = realloc(s->b, (size_t)n * NF * sizeof *p);
        if (!p) return -1;
        s->b = p;
        s->cap = n;
    }
    for (int j = s->n; j <= k; j++) {
        double *q = s->b + (size_t)j * NF;
        q[SUM] = q[COV] = 0;
        q[MIN] = INFINITY;
        q[MAX] = -INFINITY;
    }
    s->n = k + 1;
    return 0;
}

/* Double W: buckets 2j and 2j+1 become bucket j in every series. */
static void merge(series_set *ss) {
    for (int i = 0; i < ss->n; i++) {
        sr *s = &ss->s[i];
        int n = (s->n + 1) / 2;
        for (int j = 0; j < n; j++) {
            double *a = s->b + (size_t)(2 * j) * NF, *d = s->b + (size_t)j * NF;
            double sum = a[SUM], cov = a[COV], mn = a[MIN], mx = a[MAX];
            if (2 * j + 1 < s->n) {
                const double *c = a + NF;
                sum += c[SUM];
                cov += c[COV];
                mn = fmin(mn, c[MIN]);
                mx = fmax(mx, c[MAX]);
            }
            d[SUM] = sum;
            d[COV] = cov;
            d[MIN] = mn;
            d[MAX] = mx;
        }
        s->n = n;
    }
    ss->w *= 2;
}

/* Widen the grid until [0, t) fits in max buckets. */
static void fit(series_set *ss, double t) {
    while (ceil(t / ss->w) > ss->max) merge(ss);
}

/* Account the held value from last_s up to t. */
static int advance(series_set *ss, sr *s, double t) {
    double w = ss->w;
    while (s->last_s < t) {
        int k = (int)floor(s->last_s / w);
        double end = (k + 1) * w;
        if (end > t) end = t;
        assert(end > s->last_s);
        if (reserve(s, k) < 0) return -1;
        double *q = s->b + (size_t)k * NF, dt = end - s->last_s;
        q[SUM] += s->value * dt;
        q[COV] += dt;
        if (s->value < q[MIN]) q[MIN] = s->value;
        if (s->value > q[MAX]) q[MAX] = s->value;
        s->last_s = end;
    }
    return 0;
}

int series_put(series_set *ss, int i, double t_s, double v) {
    assert(i >= 0 && i < ss->n);
    sr *s = &ss->s[i];
    if (!(t_s > s->last_s)) t_s = s->last_s;       /* also catches NaN */
    fit(ss, t_s);
    if (advance(ss, s, t_s) < 0) return -1;
    if (isfinite(v)) s->value = v;
    return 0;
}

int series_close(series_set *ss, double t_end_s) {
    int rc = 0;
    if (!(t_end_s > 0)) return 0;
    fit(ss, t_end_s);
    for (int i = 0; i < ss->n; i++)
        if (advance(ss, &ss->s[i], t_end_s) < 0) rc = -1;
    return rc;
}

int series_points(const series_set *ss, int i) {
    assert(i >= 0 && i < ss->n);
    return ss->s[i].n;
}

void series_point(const series_set *ss, int i, int k, double *t_s, double *dt_s,
                  double *mean, double *min, double *max) {
    assert(i >= 0 && i < ss->n && k >= 0 && k < ss->s[i].n);
    const double *q = ss->s[i].b + (size_t)k * NF;
    *t_s = k * ss->w;
    *dt_s = q[COV];
    *mean = q[COV] > 0 ? q[SUM] / q[COV] : 0;
    *min = q[COV] > 0 ? q[MIN] : 0;
    *max = q[COV] > 0 ? q[MAX] : 0;
}
