/*
 * rankstat: Kendall's tau-b (Knight's algorithm) and nearest-rank
 * quantiles. Sources: M. G. Kendall, "The treatment of ties in ranking
 * problems", Biometrika 33 (1945); W. R. Knight, "A computer method for
 * calculating Kendall's tau with ungrouped data", JASA 61 (1966).
 */
#include "models/rankstat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair { double x, y; } pair;

static int cmp_xy(const void *a, const void *b) {
    const pair *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { TIE_X, TIE_Y, TIE_XY };

/* Pairs tied (in x, y or both) in runs of neighbours: sum of t(t-1)/2 over
 * the runs (p sorted so that tied pairs are neighbours). */
static double tied_pairs(const pair *p, size_t n, int mode) {
    double ties = 0, run = 1;
    for (size_t i = 1; i <= n; i++) {
        int same = i < n && (mode == TIE_Y || p[i].x == p[i - 1].x) && (mode == TIE_X || p[i].y == p[i - 1].y);
        if (same) run++;
        else {
            ties += run * (run - 1) / 2;
            run = 1;
        }
    }
    return ties;
}

/* Merge sort of p by y, counting the pairs out of order (y strictly greater first). */
static double sort_count(pair *p, pair *tmp, size_t n) {
    if (n < 2) return 0;
    size_t h = n / 2;
    double swaps = sort_count(p, tmp, h) + sort_count(p + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (p[j].y < p[i].y) {
            swaps += (double)(h - i);
            tmp[k++] = p[j++];
        } else {
            tmp[k++] = p[i++];
        }
    }
    while (i < h) tmp[k++] = p[i++];
    while (j < n) tmp[k++] = p[j++];
    memcpy(p, tmp, n * sizeof *p);
    return swaps;
}

double rankstat_kendall_tau_b(const double *x, const double *y, size_t n) {
    if (n < 2) return NAN;
    pair *p = malloc(n * sizeof *p), *tmp = malloc(n * sizeof *tmp);
    double tau = NAN;
    if (p && tmp) {
        for (size_t i = 0; i < n; i++) p[i] = (pair){ x[i], y[i] };
        qsort(p, n, sizeof *p, cmp_xy);
        double n0 = (double)n * (double)(n - 1) / 2;
        double n1 = tied_pairs(p, n, TIE_X), n3 = tied_pairs(p, n, TIE_XY);
        double swaps = sort_count(p, tmp, n);
        double n2 = tied_pairs(p, n, TIE_Y);
        double den = sqrt((n0 - n1) * (n0 - n2));
        if (den > 0) tau = (n0 - n1 - n2 + n3 - 2 * swaps) / den;
    }
    free(p);
    free(tmp);
    return tau;
}

double rankstat_quantile(double *v, size_t n, double q) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)ceil(q * (double)n);
    return v[k > 0 ? k - 1 : 0];
}
