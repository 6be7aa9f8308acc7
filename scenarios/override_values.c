/*
 * override_values: the values of a sweep axis ("64,128,256", "30min..4h*2",
 * "256..1024+256"), numbers read whatever their unit, and "PATH=VALUES"
 * split (see override.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/units.h"
#include "scenarios/override.h"

void override_format(double v, char *buf, size_t len) {
    if (v == floor(v) && fabs(v) < 9e15) snprintf(buf, len, "%.0f", v);
    else snprintf(buf, len, "%.10g", v);
}

int override_number(const char *z, double *out) {
    static const unit_kind kinds[] = { UNIT_NUMBER, UNIT_COUNT, UNIT_DURATION, UNIT_SIZE, UNIT_BANDWIDTH, UNIT_RATE };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (units_parse(z, kinds[i], out, NULL, 0) == 0) return 0;
    return -1;
}

void override_values_free(char **v, int n) {
    if (!v) return;
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

static int push_value(char ***v, int *n, size_t *cap, const char *z, size_t len) {
    if (GROW(*v, *cap, (size_t)*n + 1)) return -1;
    char *d = malloc(len + 1);
    if (!d) return -1;
    memcpy(d, z, len);
    d[len] = 0;
    (*v)[(*n)++] = d;
    return 0;
}

/* The unit text after the number in z ("30min" -> "min"), and the factor
 * from the number as written to SI (60). */
static void unit_of(const char *z, double si, char *unit, size_t len, double *factor) {
    const char *p = z;
    while (*p && (isdigit((unsigned char)*p) || strchr(".+-eE", *p))) {
        if ((*p == 'e' || *p == 'E') && !isdigit((unsigned char)p[1]) && p[1] != '-' && p[1] != '+') break;
        p++;
    }
    snprintf(unit, len, "%.*s", (int)(len - 1), p);
    double bare = strtod(z, NULL);
    *factor = bare != 0 ? si / bare : 1;
    if (!*unit) *factor = 1;
}

#define MAX_VALUES 100000

int override_values(const char *spec, int int_range, char ***out, char *err, size_t errlen) {
    *out = NULL;
    char **v = NULL;
    int n = 0;
    size_t cap = 0;
    const char *dots = strstr(spec, "..");
    if (!dots) {                                   /* a list */
        const char *s = spec;
        for (;;) {
            const char *c = strchr(s, ',');
            size_t k = c ? (size_t)(c - s) : strlen(s);
            while (k && isspace((unsigned char)*s)) s++, k--;
            while (k && isspace((unsigned char)s[k - 1])) k--;
            if (k == 0) {
                snprintf(err, errlen, "'%s': an empty value in the list", spec);
                override_values_free(v, n);
                return -1;
            }
            if (push_value(&v, &n, &cap, s, k) < 0) goto oom;
            if (!c) break;
            s = c + 1;
        }
        *out = v;
        return n;
    }
    char lo_z[64], hi_z[64], step_z[64] = "";
    char op = 0;
    snprintf(lo_z, sizeof lo_z, "%.*s", (int)(dots - spec), spec);
    const char *rest = dots + 2;
    const char *o = strpbrk(rest, "*+");
    /* '+' can be an exponent sign (1e+3): take the last '*' or '+' not after an 'e' digit */
    while (o && *o == '+' && o > rest && (o[-1] == 'e' || o[-1] == 'E') && isdigit((unsigned char)o[-2]))
        o = strpbrk(o + 1, "*+");
    if (o) {
        op = *o;
        snprintf(hi_z, sizeof hi_z, "%.*s", (int)(o - rest), rest);
        snprintf(step_z, sizeof step_z, "%s", o + 1);
    } else {
        snprintf(hi_z, sizeof hi_z, "%s", rest);
    }
    double lo, hi, st = 0;
    if (override_number(lo_z, &lo) < 0 || override_number(hi_z, &hi) < 0) {
        snprintf(err, errlen, "'%s': a range reads lo..hi*factor or lo..hi+step with numbers (30min..4h*2)", spec);
        return -1;
    }
    if (hi < lo) {
        snprintf(err, errlen, "'%s': the range's end is below its start", spec);
        return -1;
    }
    char unit[32];
    double factor;
    unit_of(lo_z, lo, unit, sizeof unit, &factor);
    if (op == '*') {
        if (units_parse(step_z, UNIT_NUMBER, &st, NULL, 0) < 0 || !(st > 1) || !(lo > 0)) {
            snprintf(err, errlen, "'%s': a geometric range needs lo > 0 and a factor > 1 (30min..4h*2)", spec);
            return -1;
        }
    } else if (op == '+') {
        if (override_number(step_z, &st) < 0 || !(st > 0)) {
            snprintf(err, errlen, "'%s': a linear range needs a step > 0 (256..1024+256)", spec);
            return -1;
        }
    } else {
        if (!int_range) {
            snprintf(err, errlen, "'%s': give the range a step: lo..hi*factor (geometric) or lo..hi+step (linear)", spec);
            return -1;
        }
        if (lo != floor(lo) || hi != floor(hi)) {
            snprintf(err, errlen, "'%s': a range without a step is of whole numbers", spec);
            return -1;
        }
        op = '+';
        st = 1;
        factor = 1;
        unit[0] = 0;
    }
    double tol = 1e-9 * (fabs(hi) > 1 ? fabs(hi) : 1);
    for (int i = 0;; i++) {
        double x = op == '*' ? lo * pow(st, i) : lo + st * i;
        if (x > hi + tol) break;
        if (n >= MAX_VALUES) {
            snprintf(err, errlen, "'%s': more than %d values", spec, MAX_VALUES);
            override_values_free(v, n);
            return -1;
        }
        char buf[96], numz[64];
        override_format(x / factor, numz, sizeof numz);
        snprintf(buf, sizeof buf, "%s%s", numz, unit);
        if (push_value(&v, &n, &cap, buf, strlen(buf)) < 0) goto oom;
    }
    *out = v;
    return n;
oom:
    override_values_free(v, n);
    snprintf(err, errlen, "out of memory");
    return -1;
}

int override_split(const char *arg, char *buf, size_t buflen, const char **path_z, const char **values) {
    size_t n = strlen(arg);
    if (n + 1 > buflen) return -1;
    memcpy(buf, arg, n + 1);
    int depth = 0;
    char q = 0;
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (q) {
            if (c == q) q = 0;
        } else if (c == '"' || c == '\'') {
            q = c;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == '=' && depth == 0) {
            buf[i] = 0;
            *path_z = buf;
            *values = buf + i + 1;
            return 0;
        }
    }
    return -1;
}
