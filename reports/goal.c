/*
 * goal: metric paths, goals and replica statistics (see goal.h). Pure
 * functions, no I/O; a sweep has tens of replicas per point, so sorting a
 * copy per statistic costs nothing.
 */
#include "reports/goal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/confidence.h"
#include "scenarios/override.h"

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

const char *goal_op_text(goal_op op) {
    switch (op) {
    case GOAL_LE: return "<=";
    case GOAL_LT: return "<";
    case GOAL_GE: return ">=";
    case GOAL_GT: return ">";
    }
    return "?";
}

int goal_parse(const char *z, goal *g, char *err, size_t errlen) {
    memset(g, 0, sizeof *g);
    g->confidence = 0.5;
    const char *op = strpbrk(z, "<>");
    if (!op) {
        snprintf(err, errlen, "'%s': expected METRIC <= VALUE [@ p90], like \"jobs[pretrain].end_s <= 90d @ p90\"", z);
        return -1;
    }
    char metric[256];
    snprintf(metric, sizeof metric, "%.*s", (int)(op - z), z);
    if (goal_metric_parse(metric, &g->metric, err, errlen) < 0) return -1;
    const char *v = op + 1;
    if (*v == '=') {
        g->op = op[0] == '<' ? GOAL_LE : GOAL_GE;
        v++;
    } else {
        g->op = op[0] == '<' ? GOAL_LT : GOAL_GT;
    }
    const char *at = strchr(v, '@');
    char val[64];
    snprintf(val, sizeof val, "%.*s", (int)(at ? (size_t)(at - v) : strlen(v)), v);
    char *p = val;
    while (isspace((unsigned char)*p)) p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1])) p[--n] = 0;
    if (override_number(p, &g->value) < 0) {
        snprintf(err, errlen, "'%s': '%s' is not a number (with a unit: 90d, 1s, 2TB/s)", z, p);
        return -1;
    }
    snprintf(g->value_text, sizeof g->value_text, "%s", p);
    if (at) {
        const char *c = at + 1;
        while (isspace((unsigned char)*c)) c++;
        char conf[32];
        snprintf(conf, sizeof conf, "%s", c);
        n = strlen(conf);
        while (n && isspace((unsigned char)conf[n - 1])) conf[--n] = 0;
        char *end = NULL;
        double q = 0;
        if (!strcmp(conf, "mean")) {
            g->use_mean = 1;
        } else if (conf[0] == 'p' && (q = strtod(conf + 1, &end), end && end != conf + 1 && !*end) && q > 0 && q < 100) {
            g->confidence = q / 100;
        } else {
            snprintf(err, errlen, "'%s': after '@' expected a percentile p1..p99 (p90: holds in 90%% of the runs) or mean", z);
            return -1;
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

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
    qsort(v, (size_t)k, sizeof *v, cmp_double);
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

/* Whether x meets the goal's comparison. */
static int holds(const goal *g, double x) {
    switch (g->op) {
    case GOAL_LE: return x <= g->value;
    case GOAL_LT: return x < g->value;
    case GOAL_GE: return x >= g->value;
    case GOAL_GT: return x > g->value;
    }
    return 0;
}

int goal_met(const goal *g, double *v, int n, double *stat) {
    if (n <= 0) {
        *stat = NAN;
        return 0;
    }
    int upper = g->op == GOAL_LE || g->op == GOAL_LT;
    /* a missing value counts against the goal: the worst possible */
    for (int i = 0; i < n; i++)
        if (isnan(v[i])) v[i] = upper ? INFINITY : -INFINITY;
    if (g->use_mean) {
        double sum = 0;
        for (int i = 0; i < n; i++) sum += v[i];
        *stat = sum / n;
    } else {
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        *stat = goal_quantile(v, n, upper ? g->confidence : 1 - g->confidence);
    }
    return holds(g, *stat);
}

double goal_statistic(const goal *g, char *b, size_t n) {
    int upper = g->op == GOAL_LE || g->op == GOAL_LT;
    if (g->use_mean) {
        snprintf(b, n, "mean");
        return -1;
    }
    double q = upper ? g->confidence : 1 - g->confidence;
    snprintf(b, n, "p%.0f", 100 * q);
    return q;
}

void goal_check(const goal *g, double *v, int n, double level, goal_check_result *out) {
    memset(out, 0, sizeof *out);
    out->lo = out->hi = NAN;
    out->meets = goal_met(g, v, n, &out->stat);     /* v now sorted, missing as +-inf */
    if (n <= 0) return;
    char name[16];
    double q = goal_statistic(g, name, sizeof name);
    if (q < 0) confidence_mean(v, n, level, &out->lo, &out->hi);
    else confidence_quantile(v, n, q, level, &out->lo, &out->hi, NULL, NULL);
    if (isnan(out->lo) || isnan(out->hi)) return;
    /* every value the interval allows meets the goal, or none does; the
     * comparison is monotone in the statistic, so the ends decide */
    int lo_ok = holds(g, out->lo), hi_ok = holds(g, out->hi);
    if (lo_ok == hi_ok) {
        out->decided = 1;
        out->meets = lo_ok;
    }
}
