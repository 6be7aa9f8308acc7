/*
 * series: power-of-two buckets shared by every series of a run.
 *
 * Representation (one series):
 *
 *   value, last_s   the value held since last_s (time accounted up to last_s)
 *   lead, lead_v    buckets 0..lead-1 held lead_v throughout (not stored)
 *   b[4j .. 4j+3]   bucket k = lead + j = [k*W, (k+1)*W): integral of value
 *                   dt, time covered, min, max; buckets lead..lead+n-1 are
 *                   contiguous because a series is always advanced from its
 *                   last time
 *   tail_s          after series_close: the value held from last_s (a
 *                   bucket edge) to tail_s (not stored)
 *
 * A job's progress is 0 until it starts and 1 after it ends: held, bucket
 * after bucket, for most of a long run. Those buckets are not stored but
 * worked out when read, by the arithmetic that filling them would have
 * done (sum = value * dt, covered = dt, min = max = value), so every bucket
 * read is the same to the bit; at 962 jobs' progress in a 10K-GPU year the
 * stored buckets fell from 62 MB to a few.
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
    int lead;
    double lead_v, tail_s;
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

/* Bucket k of s as stored or held (lead, tail), into q[NF]; empty (no
 * time covered) past both. */
static void bucket(const series_set *ss, const sr *s, int k, double q[NF]) {
    double w = ss->w, v = k < s->lead ? s->lead_v : s->value, dt = 0;
    if (k >= s->lead && k - s->lead < s->n) {
        memcpy(q, s->b + (size_t)(k - s->lead) * NF, NF * sizeof *q);
        return;
    }
    if (k < s->lead) dt = w;
    else if (s->tail_s > s->last_s && k * w < s->tail_s)   /* the value held to tail_s */
        dt = fmin((k + 1) * w, s->tail_s) - k * w;
    q[SUM] = dt > 0 ? 0 + v * dt : 0;
    q[COV] = dt;
    q[MIN] = dt > 0 ? v : INFINITY;
    q[MAX] = dt > 0 ? v : -INFINITY;
}

static int advance(series_set *ss, sr *s, double t);

/* Store the held tail of a closed series (before the grid changes or the
 * series goes on). */
static int settle_tail(series_set *ss, sr *s) {
    double t = s->tail_s;
    s->tail_s = 0;
    return t > s->last_s ? advance(ss, s, t) : 0;
}

/* Double W: buckets 2j and 2j+1 become bucket j in every series; the lead
 * halves, its odd last bucket merged into the first stored one. */
static int merge(series_set *ss) {
    for (int i = 0; i < ss->n; i++) {
        sr *s = &ss->s[i];
        if (settle_tail(ss, s) < 0) return -1;
        int lead = s->lead / 2, end = (s->lead + s->n + 1) / 2;
        if (end - lead > s->n && reserve(s, end - lead - 1) < 0) return -1;   /* an odd lead's last bucket */
        for (int j = lead; j < end; j++) {
            double a[NF], c[NF], *d = s->b + (size_t)(j - lead) * NF;
            bucket(ss, s, 2 * j, a);
            bucket(ss, s, 2 * j + 1, c);
            d[SUM] = a[SUM] + c[SUM];
            d[COV] = a[COV] + c[COV];
            d[MIN] = fmin(a[MIN], c[MIN]);
            d[MAX] = fmax(a[MAX], c[MAX]);
        }
        s->lead = lead;
        s->n = end - lead;
    }
    ss->w *= 2;
    return 0;
}

/* Widen the grid until [0, t) fits in max buckets. */
static int fit(series_set *ss, double t) {
    while (ceil(t / ss->w) > ss->max)
        if (merge(ss) < 0) return -1;
    return 0;
}

/* Account the held value from last_s up to t. While nothing is stored,
 * whole buckets held at the lead's value join the lead. */
static int advance(series_set *ss, sr *s, double t) {
    double w = ss->w;
    if (s->tail_s > s->last_s && settle_tail(ss, s) < 0) return -1;
    if (s->n == 0 && s->last_s == s->lead * w && (s->lead == 0 || !memcmp(&s->value, &s->lead_v, sizeof s->value))) {
        double whole = floor(t / w);
        if (whole > s->lead) {
            s->lead = (int)whole;
            s->lead_v = s->value;
            s->last_s = whole * w;
        }
    }
    while (s->last_s < t) {
        int k = (int)floor(s->last_s / w);
        double end = (k + 1) * w;
        if (end > t) end = t;
        assert(end > s->last_s && k >= s->lead);
        if (reserve(s, k - s->lead) < 0) return -1;
        double *q = s->b + (size_t)(k - s->lead) * NF, dt = end - s->last_s;
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
    if (fit(ss, t_s) < 0 || advance(ss, s, t_s) < 0) return -1;
    if (isfinite(v)) s->value = v;
    return 0;
}

/* Every series ends at t_end_s: its bucket in progress is stored to its
 * edge, the value held after that edge is its tail (bucket()). */
int series_close(series_set *ss, double t_end_s) {
    int rc = 0;
    if (!(t_end_s > 0)) return 0;
    if (fit(ss, t_end_s) < 0) return -1;
    for (int i = 0; i < ss->n; i++) {
        sr *s = &ss->s[i];
        /* Closed at this time already (the store closes when the bus does
         * and again at its finish): the tail stays held, not stored. Storing
         * it was 962 progress series filled to their last bucket, 59 of the
         * 10K-GPU year's simulating thread's 1,107 perf samples ("The
         * results store, sixth round", docs/performance.md); bucket()
         * reads the same bits. */
        if (s->tail_s == t_end_s && s->tail_s > s->last_s) continue;
        double edge = ceil(s->last_s / ss->w) * ss->w;
        if (advance(ss, s, fmin(t_end_s, edge)) < 0) rc = -1;
        else if (t_end_s > s->last_s && t_end_s > s->tail_s) s->tail_s = t_end_s;
    }
    return rc;
}

int series_points(const series_set *ss, int i) {
    assert(i >= 0 && i < ss->n);
    const sr *s = &ss->s[i];
    int n = s->lead + s->n;
    if (s->tail_s > s->last_s) n = (int)ceil(s->tail_s / ss->w);
    return n;
}

/* bucket(): below the lead every bucket is [k*W, (k+1)*W) at lead_v;
 * from lead + n to the bucket holding tail_s, each but that last is a whole
 * bucket at value (k*W and (k+1)*W are exact, W a power of two). */
void series_runs(const series_set *ss, int i, int *lead, int *held) {
    assert(i >= 0 && i < ss->n);
    const sr *s = &ss->s[i];
    *lead = s->lead;
    *held = s->lead + s->n;
}

void series_point(const series_set *ss, int i, int k, double *t_s, double *dt_s,
                  double *mean, double *min, double *max) {
    assert(i >= 0 && i < ss->n && k >= 0 && k < series_points(ss, i));
    double q[NF];
    bucket(ss, &ss->s[i], k, q);
    *t_s = k * ss->w;
    *dt_s = q[COV];
    *mean = q[COV] > 0 ? q[SUM] / q[COV] : 0;
    *min = q[COV] > 0 ? q[MIN] : 0;
    *max = q[COV] > 0 ? q[MAX] : 0;
}
