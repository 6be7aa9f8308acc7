/*
 * reqtrace: request-trace CSV reader (format in reqtrace.h, dialect in
 * csv.h).
 *
 * One pass over the file, O(rows) time and 16 bytes per row; a
 * million-request trace reads in about a second.
 */
#include "scenarios/reqtrace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/units.h"
#include "models/numerics.h"
#include "scenarios/csv.h"

/* What a row is checked against. */
typedef struct service_models {
    const char *const *names;
    const int *max_context;
    int n;
} service_models;

static int parse_whole(const char *z, long long *out) {
    if (!*z) return -1;
    char *end;
    errno = 0;
    double x = strtod(z, &end);
    if (errno || *end || x != floor(x) || !isfinite(x) || fabs(x) > 1e12) return -1;
    *out = (long long)x;
    return 0;
}

/* A header line comes before the first row, and only there: a first field
 * that does not start like a number. 1 when rec is the header, 0 when it is
 * a row, -1 with err when it is neither. */
static int is_header(const csv *r, const csv_record *rec, long rows, char *err, size_t errlen) {
    const char *z = rec->f[0];
    if (rows > 0 || isdigit((unsigned char)z[0]) || z[0] == '.' || z[0] == '-' || z[0] == '+') return 0;
    if (strcmp(z, "time") && strcmp(z, "time_s") && strcmp(z, "timestamp"))
        return csv_fail(r, err, errlen,
                        "expected a header 'time,input_tokens,output_tokens[,model]' or a first row of numbers, got '%s'",
                        z);
    return 1;
}

/* The arrival time of a row: a duration, not negative, on the clock, not
 * before the previous row's (last; rows > 0). */
static int parse_time(const csv *r, const char *z, long rows, double last, double *t, char *err, size_t errlen) {
    char why[128];
    if (units_parse(z, UNIT_DURATION, t, why, sizeof why) < 0) return csv_fail(r, err, errlen, "time '%s': %s", z, why);
    if (*t < 0) return csv_fail(r, err, errlen, "time '%s' must not be negative", z);
    /* The clock's range (sim/engine.h engine_check_s, in its words): the
     * reader sits below the engine. */
    if (*t > NUMERICS_MAX_TIME_S)
        return csv_fail(r, err, errlen, "time '%s' is beyond the simulated clock's horizon of 100 years (%.4g s)", z,
                        NUMERICS_MAX_TIME_S);
    if (!(*t <= NUMERICS_MAX_TIME_S)) return csv_fail(r, err, errlen, "time '%s' is not a finite time of at least 0 s", z);
    if (rows > 0 && *t < last) return csv_fail(r, err, errlen, "times must be sorted: %s comes after %.9g", z, last);
    return 0;
}

/* The row's model: the named one of the service, or the first when the
 * column is absent or empty. */
static int parse_model(const csv *r, const csv_record *rec, const service_models *sm, int *model, char *err,
                       size_t errlen) {
    *model = 0;
    if (rec->n < 4 || !rec->f[3][0]) return 0;
    for (int m = 0; m < sm->n; m++)
        if (!strcmp(rec->f[3], sm->names[m])) {
            *model = m;
            return 0;
        }
    char names[512] = "";
    size_t o = 0;
    for (int m = 0; m < sm->n && o < sizeof names; m++)
        o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", m ? ", " : "", sm->names[m]);
    return csv_fail(r, err, errlen, "unknown model '%s'; this service serves: %s", rec->f[3], names);
}

/* One request row: its time, lengths and model, checked. */
static int parse_row(const csv *r, const csv_record *rec, const service_models *sm, long rows, double last,
                     reqtrace_row *row, char *err, size_t errlen) {
    if (csv_columns(r, rec, 3, 4, "3 or 4 columns (time,input_tokens,output_tokens[,model])", err, errlen) < 0)
        return -1;
    double t;
    if (parse_time(r, rec->f[0], rows, last, &t, err, errlen) < 0) return -1;
    long long in, out;
    if (parse_whole(rec->f[1], &in) < 0)
        return csv_fail(r, err, errlen, "input_tokens '%s' must be a whole number", rec->f[1]);
    if (parse_whole(rec->f[2], &out) < 0)
        return csv_fail(r, err, errlen, "output_tokens '%s' must be a whole number", rec->f[2]);
    if (in < 1) return csv_fail(r, err, errlen, "input_tokens must be at least 1, got %lld", in);
    if (out < 1) return csv_fail(r, err, errlen, "output_tokens must be at least 1, got %lld", out);
    int model;
    if (parse_model(r, rec, sm, &model, err, errlen) < 0) return -1;
    if (in + out > sm->max_context[model])
        return csv_fail(r, err, errlen, "input + output tokens (%lld) exceed %s's context of %d", in + out,
                        sm->names[model], sm->max_context[model]);
    *row = (reqtrace_row){ .t_s = t, .input = (int)in, .output = (int)out, .model = model, .session = -1 };
    return 0;
}

/* Every row of r, appended to *v (*n rows, cap allocated). 0, or -1 with
 * err; *v may hold rows either way. */
static int read_rows(csv *r, const service_models *sm, reqtrace_row **v, size_t *n, char *err, size_t errlen) {
    size_t cap = 0;
    csv_record rec;
    int got;
    while ((got = csv_next(r, &rec, err, errlen)) > 0) {
        int header = is_header(r, &rec, (long)*n, err, errlen);
        if (header < 0) return -1;
        if (header) continue;
        reqtrace_row row;
        if (parse_row(r, &rec, sm, (long)*n, *n ? (*v)[*n - 1].t_s : 0, &row, err, errlen) < 0) return -1;
        if (GROW(*v, cap, *n + 1)) return csv_fail(r, err, errlen, "out of memory");
        (*v)[(*n)++] = row;
    }
    if (got < 0) return -1;
    if (csv_errno(r)) return csv_fail(r, err, errlen, "read error");
    if (*n == 0) {                                /* an empty file: its first line */
        snprintf(err, errlen, "%s:%ld: the trace has no requests", csv_path(r), csv_line(r) ? csv_line(r) : 1);
        return -1;
    }
    return 0;
}

long reqtrace_load(const char *path, const char *const *models, const int *max_context, int n_models,
                   reqtrace_row **rows, char *err, size_t errlen) {
    *rows = NULL;
    infile_err ie;                               /* never a FIFO or device: scenarios/infile.h */
    csv *r = csv_open(path, "a CSV request trace", &ie);
    if (!r) {
        infile_say(&ie, path, err, errlen);
        return -1;
    }
    const service_models sm = { models, max_context, n_models };
    reqtrace_row *v = NULL;
    size_t n = 0;
    int rc = read_rows(r, &sm, &v, &n, err, errlen);
    csv_close(r);
    if (rc < 0) {
        free(v);
        return -1;
    }
    *rows = v;
    return (long)n;
}
