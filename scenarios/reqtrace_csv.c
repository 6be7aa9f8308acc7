/*
 * reqtrace_csv: the plain request-trace CSV (reqtrace.h, docs/traces.md):
 *
 *   time,input_tokens,output_tokens[,model[,session[,class]]]
 *   0,512,128
 *   1.5s,2048,256,llama3-70b,17
 *   2s,800,200,,,chat
 *
 * An optional header line (first field time, time_s or timestamp) comes
 * first; time is a duration (plain number = seconds; 90s, 2min); model is
 * one of the service's (empty or absent: the first); session a
 * conversation or user (empty or absent: none; rt_session); class one of
 * the service's request classes (docs/serving-slo.md; empty or absent:
 * drawn by the classes' shares).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"
#include "scenarios/reqtrace_int.h"

/* A header line comes before the first row, and only there: a first field
 * that does not start like a number. 1 when rec is the header, 0 when it is
 * a row, -1 with err when it is neither. */
static int is_header(const csv *r, const csv_record *rec, long rows, char *err, size_t errlen) {
    const char *z = rec->f[0];
    if (rows > 0 || isdigit((unsigned char)z[0]) || z[0] == '.' || z[0] == '-' || z[0] == '+') return 0;
    if (strcmp(z, "time") && strcmp(z, "time_s") && strcmp(z, "timestamp"))
        return csv_fail(r, err, errlen,
                        "expected a header 'time,input_tokens,output_tokens[,model[,session[,class]]]' or a first row of numbers, "
                        "got '%s'",
                        z);
    return 1;
}

/* The arrival time of a row: a duration, not negative (rt_add checks the
 * rest). */
static int parse_time(const csv *r, const char *z, double *t, char *err, size_t errlen) {
    char why[128];
    if (units_parse(z, UNIT_DURATION, t, why, sizeof why) < 0) return csv_fail(r, err, errlen, "time '%s': %s", z, why);
    if (*t < 0) return csv_fail(r, err, errlen, "time '%s' must not be negative", z);
    return 0;
}

/* The row's model: the named one of the service, or the first when the
 * column is absent or empty. */
static int parse_model(const csv *r, const char *z, const reqtrace_models *sm, int *model, char *err, size_t errlen) {
    *model = rt_model(sm, z);
    if (*model >= 0) return 0;
    char names[512] = "";
    size_t o = 0;
    for (int m = 0; m < sm->n && o < sizeof names; m++)
        o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", m ? ", " : "", sm->names[m]);
    return csv_fail(r, err, errlen, "unknown model '%s'; this service serves: %s", z, names);
}

/* The row's request class: one of the service's, or none (-1) when the
 * column is absent or empty. */
static int parse_class(const csv *r, const char *z, const reqtrace_models *sm, int *cls, char *err, size_t errlen) {
    *cls = -1;
    if (!*z) return 0;
    for (int k = 0; k < sm->n_classes; k++)
        if (!strcmp(z, sm->classes[k])) return *cls = k, 0;
    if (sm->n_classes == 0)
        return csv_fail(r, err, errlen, "class '%s': this service has no <class> elements", z);
    char names[512] = "";
    size_t o = 0;
    for (int k = 0; k < sm->n_classes && o < sizeof names; k++)
        o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", k ? ", " : "", sm->classes[k]);
    return csv_fail(r, err, errlen, "unknown class '%s'; this service's classes: %s", z, names);
}

/* One request row: its time, lengths, model, session and class. */
static int parse_row(const csv *r, const csv_record *rec, const reqtrace_models *sm, rt_req *q, char *err,
                     size_t errlen) {
    if (csv_columns(r, rec, 3, 6,
                    "3 or 4 columns (time,input_tokens,output_tokens[,model]), 5 (...,model,session) or 6 (...,session,class)", err, errlen) < 0)
        return -1;
    *q = (rt_req){ .session = -1, .cls = -1 };
    if (parse_time(r, rec->f[0], &q->t_s, err, errlen) < 0) return -1;
    if (rt_whole(rec->f[1], &q->input) < 0)
        return csv_fail(r, err, errlen, "input_tokens '%s' must be a whole number", rec->f[1]);
    if (rt_whole(rec->f[2], &q->output) < 0)
        return csv_fail(r, err, errlen, "output_tokens '%s' must be a whole number", rec->f[2]);
    if (parse_model(r, csv_field(rec, 3), sm, &q->model, err, errlen) < 0) return -1;
    q->session = rt_session(csv_field(rec, 4));
    return parse_class(r, csv_field(rec, 5), sm, &q->cls, err, errlen);
}

int rt_read_csv(csv *r, const csv_record *first, rt_build *b, char *err, size_t errlen) {
    b->col_in = "input_tokens";
    b->col_out = "output_tokens";
    csv_record rec = *first;
    int got = 1;
    for (; got > 0; got = csv_next(r, &rec, err, errlen)) {
        int header = is_header(r, &rec, b->n_read, err, errlen);
        if (header < 0) return -1;
        if (header) continue;
        rt_req q;
        if (parse_row(r, &rec, b->sm, &q, err, errlen) < 0 || rt_add(b, rec.line, &q, err, errlen) < 0) return -1;
    }
    return got;
}
