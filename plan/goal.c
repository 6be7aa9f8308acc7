/*
 * goal: the planner's goals over metrics and their check across replicas
 * (see goal.h). Pure functions, no I/O.
 */
#include "plan/goal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/confidence.h"
#include "scenarios/override.h"

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
        goal_sort(v, n);
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
