/*
 * published_report: the cases, their summaries, the terminal table and the
 * JSON (see published_report.h). The HTML page is reports/published_html.c.
 */
#include "reports/published_report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/numfmt.h"
#include "reports/json.h"

static const char *const kind_names[] = { "training", "collectives", "failures", "inference" };

const char *pubrep_kind_name(pubrep_kind k) { return kind_names[k]; }

int pubrep_kind_parse(const char *z) {
    for (int k = 0; k < (int)(sizeof kind_names / sizeof kind_names[0]); k++)
        if (z && !strcmp(z, kind_names[k])) return k;
    return -1;
}

double pubrep_error_pct(const pubrep_case *c) {
    if (isnan(c->predicted) || !(c->expected != 0)) return NAN;
    return 100 * (c->predicted - c->expected) / c->expected;
}

int pubrep_within(const pubrep_case *c) {
    double e = pubrep_error_pct(c);
    if (isnan(e) || isnan(c->tolerance_pct)) return -1;
    return fabs(e) <= c->tolerance_pct;
}

int pubrep_add(pubrep *r, const pubrep_case *c) {
    if (GROW(r->cases, r->cap, r->n + 1)) return -1;
    r->cases[r->n++] = *c;
    return 0;
}

int pubrep_note(pubrep *r, const char *fmt, ...) {
    if (GROW(r->notes, r->cap_notes, r->n_notes + 1)) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->n_notes++], PUBREP_TEXT_MAX, fmt, ap);
    va_end(ap);
    return 0;
}

void pubrep_free(pubrep *r) {
    free(r->cases);
    free(r->notes);
    free(r->groups);
    memset(r, 0, sizeof *r);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pubrep_median(double *v, size_t n) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- Summaries ------------------------------------------------------------ */

/* Does tag occur in the '+'-separated list tags? ("none" for an empty list.) */
static int has_tag(const char *tags, const char *tag) {
    if (!*tags) return !strcmp(tag, "none");
    size_t n = strlen(tag);
    for (const char *p = tags; p; p = strchr(p, '+'), p = p ? p + 1 : NULL)
        if (!strncmp(p, tag, n) && (p[n] == '+' || !p[n])) return 1;
    return 0;
}

/* Is case c in group g ("all", "file:", "set:", "mechanism:", or a kind
 * and a set: "training:heldout")? */
static int in_group(const pubrep_case *c, const char *g) {
    const char *colon = strchr(g, ':');
    char kind[32];
    if (colon && (size_t)(colon - g) < sizeof kind) {
        snprintf(kind, sizeof kind, "%.*s", (int)(colon - g), g);
        int k = pubrep_kind_parse(kind);
        if (k >= 0) return c->kind == (pubrep_kind)k && !strcmp(c->set, colon + 1);
    }
    if (!strncmp(g, "file:", 5)) return !strcmp(c->file, g + 5);
    if (!strncmp(g, "set:", 4)) return !strcmp(c->set, g + 4);
    if (!strncmp(g, "mechanism:", 10)) return has_tag(c->mechanism, g + 10);
    return 1;
}

static int group_stats(pubrep *r, const char *g, double *abs_e, double *signed_e) {
    if (GROW(r->groups, r->cap_groups, r->n_groups + 1)) return -1;
    pubrep_summary *s = &r->groups[r->n_groups++];
    memset(s, 0, sizeof *s);
    snprintf(s->group, sizeof s->group, "%s", g);
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!in_group(&r->cases[i], g)) continue;
        double e = pubrep_error_pct(&r->cases[i]);
        if (isnan(e)) {
            s->no_result++;
            continue;
        }
        abs_e[n] = fabs(e);
        signed_e[n++] = e;
    }
    s->n = (int)n;
    s->median_abs_error_pct = pubrep_median(abs_e, n);
    s->max_abs_error_pct = n ? abs_e[n - 1] : NAN;   /* sorted by the median */
    s->median_signed_error_pct = pubrep_median(signed_e, n);
    return 0;
}

/* Has a group of this name been made already? */
static int have_group(const pubrep *r, const char *g) {
    for (size_t i = 0; i < r->n_groups; i++)
        if (!strcmp(r->groups[i].group, g)) return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The mechanism groups, tags sorted: each case's tags cut out of a copy. */
static int mechanism_groups(pubrep *r, double *abs_e, double *signed_e) {
    char (*copy)[128] = malloc((r->n ? r->n : 1) * sizeof *copy);
    char **tags = malloc((r->n * 64 + 1) * sizeof *tags);
    size_t nt = 0;
    int rc = copy && tags ? 0 : -1;
    for (size_t i = 0; !rc && i < r->n; i++) {
        snprintf(copy[i], sizeof copy[i], "%s", r->cases[i].mechanism[0] ? r->cases[i].mechanism : "none");
        for (char *save = NULL, *t = strtok_r(copy[i], "+", &save); t && nt < r->n * 64;
             t = strtok_r(NULL, "+", &save))
            tags[nt++] = t;
    }
    if (!rc) qsort(tags, nt, sizeof *tags, cmp_str);
    char g[192];
    for (size_t i = 0; !rc && i < nt; i++) {
        snprintf(g, sizeof g, "mechanism:%s", tags[i]);
        if (!have_group(r, g)) rc = group_stats(r, g, abs_e, signed_e);
    }
    free(copy);
    free(tags);
    return rc;
}

int pubrep_summarize(pubrep *r) {
    r->n_groups = 0;
    double *abs_e = malloc((r->n + 1) * sizeof *abs_e), *signed_e = malloc((r->n + 1) * sizeof *signed_e);
    int rc = abs_e && signed_e ? group_stats(r, "all", abs_e, signed_e) : -1;
    char g[192];
    for (size_t i = 0; !rc && i < r->n; i++) {          /* files in order of their first case */
        snprintf(g, sizeof g, "file:%s", r->cases[i].file);
        if (!have_group(r, g)) rc = group_stats(r, g, abs_e, signed_e);
    }
    static const char *const sets[] = { "set:calibration", "set:heldout" };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; !rc && i < r->n; i++)
            if (!strcmp(r->cases[i].set, sets[k] + 4) && !have_group(r, sets[k]))
                rc = group_stats(r, sets[k], abs_e, signed_e);
    for (size_t i = 0; !rc && i < r->n; i++) {          /* each kind within each set: the targets' groups */
        snprintf(g, sizeof g, "%s:%s", pubrep_kind_name(r->cases[i].kind), r->cases[i].set);
        if (!have_group(r, g)) rc = group_stats(r, g, abs_e, signed_e);
    }
    if (!rc) rc = mechanism_groups(r, abs_e, signed_e);
    free(abs_e);
    free(signed_e);
    return rc;
}

/* ---- Terminal --------------------------------------------------------------- */

static const char *num(double v, const char *fmt, char *buf, size_t len) {
    if (isnan(v)) snprintf(buf, len, "-");
    else snprintf(buf, len, fmt, v);
    return buf;
}

static void table_case(FILE *f, const pubrep_case *c) {
    char e[32], p[32], x[32], t[32];
    int w = pubrep_within(c);
    fprintf(f, "  %-4s %-11s %-30s %-26s %12s %12s %8s %5s  %-18s %s\n",
            w < 0 ? (isnan(c->predicted) ? "n/a" : "-") : w ? "ok" : "miss", c->set, c->id, c->metric,
            nf_count(c->expected, x, sizeof x), nf_count(c->predicted, p, sizeof p),
            num(pubrep_error_pct(c), "%+.1f%%", e, sizeof e), num(c->tolerance_pct, "%.0f%%", t, sizeof t),
            c->mechanism[0] ? c->mechanism : "-", c->source);
    if (c->note[0]) fprintf(f, "       no result: %s\n", c->note);
}

static void table_summary(FILE *f, const pubrep *r) {
    char a[32], m[32], s[32];
    fprintf(f, "\nsummary (|error| over the cases with a result)\n  %-36s %5s %9s %14s %14s %16s\n", "group", "n",
            "no result", "median |error|", "max |error|", "median error");
    for (size_t i = 0; i < r->n_groups; i++) {
        const pubrep_summary *g = &r->groups[i];
        fprintf(f, "  %-36s %5d %9d %14s %14s %16s\n", g->group, g->n, g->no_result,
                num(g->median_abs_error_pct, "%.1f%%", a, sizeof a), num(g->max_abs_error_pct, "%.1f%%", m, sizeof m),
                num(g->median_signed_error_pct, "%+.1f%%", s, sizeof s));
    }
}

void pubrep_table(FILE *f, const pubrep *r) {
    const char *file = NULL;
    for (size_t i = 0; i < r->n; i++) {
        const pubrep_case *c = &r->cases[i];
        if (!file || strcmp(file, c->file)) {
            file = c->file;
            fprintf(f, "%s%s (%s)\n  %-4s %-11s %-30s %-26s %12s %12s %8s %5s  %-18s %s\n", i ? "\n" : "", file,
                    pubrep_kind_name(c->kind), "", "set", "id", "metric", "published", "predicted", "error", "tol",
                    "mechanism", "source");
        }
        table_case(f, c);
    }
    for (size_t i = 0; i < r->n_notes; i++) fprintf(f, "%snote: %s\n", i ? "" : "\n", r->notes[i]);
    table_summary(f, r);
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_case(json *j, const pubrep_case *c) {
    json_object(j, NULL);
    json_str(j, "file", c->file);
    json_str(j, "id", c->id);
    json_str(j, "kind", pubrep_kind_name(c->kind));
    json_str(j, "set", c->set);
    json_str(j, "mechanism", c->mechanism);
    json_str(j, "source", c->source);
    json_str(j, "metric", c->metric);
    json_num(j, "expected", c->expected);
    json_num(j, "predicted", c->predicted);          /* NaN: null */
    json_num(j, "error_pct", pubrep_error_pct(c));
    json_num(j, "tolerance_pct", c->tolerance_pct);
    int w = pubrep_within(c);
    if (w < 0) json_null(j, "within");
    else json_bool(j, "within", w);
    if (c->note[0]) json_str(j, "note", c->note);
    json_end(j);
}

/* A group's statistics under their own names. */
#define SUMMARY(m) JSON_MEMBER(pubrep_summary, m)
static const json_field summary_counts[] = { SUMMARY(n), SUMMARY(no_result) };
static const json_field summary_errors[] = {
    SUMMARY(median_abs_error_pct), SUMMARY(max_abs_error_pct), SUMMARY(median_signed_error_pct),
};

int pubrep_json(const pubrep *r, const char *path, char *err, size_t errlen) {
    json *j = json_new();
    if (!j) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    json_object(j, NULL);
    json_array(j, "cases");
    for (size_t i = 0; i < r->n; i++) json_case(j, &r->cases[i]);
    json_end(j);
    json_array(j, "summary");
    for (size_t i = 0; i < r->n_groups; i++) {
        const pubrep_summary *g = &r->groups[i];
        json_object(j, NULL);
        json_str(j, "group", g->group);
        json_ints(j, g, JSON_FIELDS(summary_counts));
        json_nums(j, g, JSON_FIELDS(summary_errors));
        json_end(j);
    }
    json_end(j);
    json_array(j, "notes");
    for (size_t i = 0; i < r->n_notes; i++) json_str(j, NULL, r->notes[i]);
    json_end(j);
    json_end(j);
    int rc = json_write_file(j, path, err, errlen);
    json_free(j);
    return rc;
}
