/*
 * guided: shrinking chunks over home regions (see guided.h). Cost: O(P) a
 * chunk.
 */
#include "plan/guided.h"

#include <stdlib.h>

int guided_init(guided *g, long long n, int parts) {
    g->parts = parts > 0 ? parts : 1;
    g->left = n > 0 ? n : 0;
    g->lo = malloc((size_t)g->parts * sizeof *g->lo);
    g->hi = malloc((size_t)g->parts * sizeof *g->hi);
    if (!g->lo || !g->hi) {
        guided_free(g);
        return -1;
    }
    for (int k = 0; k < g->parts; k++) {          /* the static split */
        g->lo[k] = g->left * k / g->parts;
        g->hi[k] = g->left * (k + 1) / g->parts;
    }
    return 0;
}

void guided_free(guided *g) {
    free(g->lo);
    free(g->hi);
    g->lo = g->hi = NULL;
    g->left = 0;
}

long long guided_size(const guided *g, long long min) {
    long long two_p = 2LL * g->parts, n = (g->left + two_p - 1) / two_p;
    if (n < min) n = min;
    return n < g->left ? n : g->left;
}

int guided_take(guided *g, int k, long long want, long long *lo, long long *hi) {
    *lo = *hi = 0;
    if (g->left <= 0 || want <= 0 || k < 0 || k >= g->parts) return 0;
    if (g->hi[k] > g->lo[k]) {
        long long n = g->hi[k] - g->lo[k] < want ? g->hi[k] - g->lo[k] : want;
        *lo = g->lo[k];
        *hi = g->lo[k] += n;
    } else {
        int j = 0;                                /* the fullest region: its back */
        for (int i = 1; i < g->parts; i++)
            if (g->hi[i] - g->lo[i] > g->hi[j] - g->lo[j]) j = i;
        long long n = g->hi[j] - g->lo[j] < want ? g->hi[j] - g->lo[j] : want;
        *hi = g->hi[j];
        *lo = g->hi[j] -= n;
    }
    g->left -= *hi - *lo;
    return *hi > *lo;
}
