/*
 * goal: metric paths and replica statistics (see goal.h). Pure functions,
 * no I/O; a sweep has tens of replicas per point, so sorting a copy per
 * statistic costs nothing.
 */
#include "reports/goal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/confidence.h"

int goal_metric_parse(const char *z, metric_path *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    while (isspace((unsigned char)*z)) z++;
    size_t n = strlen(z);
    while (n && isspace((unsigned char)z[n - 1])) n--;
    if (n == 0 || n >= sizeof m->text) {
        snprintf(err, errlen, "expected a metric like jobs[pretrain].end_s, services[chat].ttft_p99_s or cluster.cost_usd");
        return -1;
    }
    memcpy(m->text, z, n);
    const char *s = m->text;
    const char *br = strchr(s, '[');
    if (br) {
        const char *close = strchr(br, ']');
        size_t an = (size_t)(br - s);
        if (!close || close[1] != '.' || !close[2] || an == 0 || an >= sizeof m->array ||
            (size_t)(close - br - 1) >= sizeof m->elem || close == br + 1) {
            snprintf(err, errlen, "%s: expected ARRAY[NAME].field, like jobs[pretrain].end_s", m->text);
            return -1;
        }
        memcpy(m->array, s, an);
        if (strcmp(m->array, "jobs") && strcmp(m->array, "services") && strcmp(m->array, "queues")) {
            snprintf(err, errlen, "%s: '%s[...]' is not in the results; expected jobs[...], services[...] or queues[...]",
                     m->text, m->array);
            return -1;
        }
        const char *e0 = br + 1;
        size_t en = (size_t)(close - e0);
        if (en >= 2 && (e0[0] == '"' || e0[0] == '\'') && e0[en - 1] == e0[0]) e0++, en -= 2;
        memcpy(m->elem, e0, en);
        snprintf(m->field, sizeof m->field, "%s", close + 2);
    } else {
        snprintf(m->field, sizeof m->field, "%s", s);
    }
    for (const char *p = m->field; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.')) {
            snprintf(err, errlen, "%s: a field name has letters, digits, '_' and '.' only", m->text);
            return -1;
        }
    if (!m->field[0] || m->field[0] == '.' || m->field[strlen(m->field) - 1] == '.') {
        snprintf(err, errlen, "%s: expected a field name after the dot", m->text);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void goal_sort(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_double); }

double goal_quantile(const double *x, int n, double q) {
    if (n <= 0) return NAN;
    double h = (n - 1) * q;
    int lo = (int)floor(h);
    if (lo >= n - 1) return x[n - 1];
    double f = h - lo;
    if (f == 0 || x[lo] == x[lo + 1]) return x[lo];      /* also keeps inf - inf out */
    return x[lo] + f * (x[lo + 1] - x[lo]);
}

/* Move the NaNs to the end; returns how many values are not NaN. */
static int compact(double *v, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) {
            double t = v[k];
            v[k++] = v[i];
            v[i] = t;
        }
    return k;
}

void goal_stats_of(double *v, int n, goal_stats *s) {
    memset(s, 0, sizeof *s);
    int k = compact(v, n);
    s->n = k;
    s->missing = n - k;
    if (k == 0) {
        s->mean = s->p10 = s->p50 = s->p90 = s->min = s->max = s->mean_lo = s->mean_hi = NAN;
        return;
    }
    goal_sort(v, k);
    double sum = 0;
    for (int i = 0; i < k; i++) sum += v[i];
    s->mean = sum / k;
    s->min = v[0];
    s->max = v[k - 1];
    s->p10 = goal_quantile(v, k, 0.1);
    s->p50 = goal_quantile(v, k, 0.5);
    s->p90 = goal_quantile(v, k, 0.9);
    confidence_mean(v, k, CONFIDENCE_LEVEL, &s->mean_lo, &s->mean_hi);
}
