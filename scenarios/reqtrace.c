/*
 * reqtrace: request-trace reading common to every format (reqtrace.h):
 * telling the format, the checks each row must pass (rt_add), skip and
 * time-scale, and the rows and prefix block pool that come back.
 *
 * One pass over the file, O(rows) time; 32 bytes per row plus 4 per prefix
 * block.
 */
#include "scenarios/reqtrace_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/grow.h"
#include "models/numerics.h"

static const char *const format_names[] = { "auto", "csv", "azure-2023", "azure-2024", "burstgpt", "mooncake" };

int reqtrace_format_parse(const char *z) {
    for (int i = 0; i < (int)(sizeof format_names / sizeof *format_names); i++)
        if (!strcmp(z, format_names[i])) return i;
    return -1;
}

const char *reqtrace_format_name(reqtrace_format f) { return format_names[f]; }

int rt_whole(const char *z, long long *out) {
    if (!*z) return -1;
    char *end;
    errno = 0;
    double x = strtod(z, &end);
    if (errno || *end || x != floor(x) || !isfinite(x) || fabs(x) > 1e12) return -1;
    *out = (long long)x;
    return 0;
}

int rt_number(const char *z, double *out) {
    if (!*z || !(z[0] == '.' || (z[0] >= '0' && z[0] <= '9'))) return -1;   /* no sign, inf, nan, hex */
    char *end;
    errno = 0;
    double x = strtod(z, &end);
    if (errno || *end || !isfinite(x) || z[1] == 'x' || z[1] == 'X') return -1;
    *out = x;
    return 0;
}

int64_t rt_session(const char *z) {
    long long v;
    if (!*z) return -1;
    if (rt_whole(z, &v) == 0 && v >= 0) return (int64_t)v;
    uint64_t h = 14695981039346656037ull;        /* FNV-1a, 64 bits (Fowler, Noll, Vo) */
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (int64_t)(h >> 2);                     /* 62 bits: never -1 */
}

int rt_model(const reqtrace_models *sm, const char *z) {
    if (!z || !*z) return 0;
    for (int m = 0; m < sm->n; m++)
        if (!strcmp(z, sm->names[m])) return m;
    return -1;
}


int rt_block(rt_build *b, uint32_t hash) {
    reqtrace *t = b->t;
    if (GROW(t->blocks, b->cap_blocks, (size_t)t->n_blocks + 1)) return -1;
    t->blocks[t->n_blocks++] = hash;
    return 0;
}

/* The row's time against the previous one and the clock. */
static int check_time(rt_build *b, long line, double t, char *err, size_t errlen) {
    if (b->n_read > 0 && t < b->last_t)
        return rt_fail(b, line, err, errlen, "times must be sorted: %.9g comes after %.9g", t, b->last_t);
    if (!(t >= 0)) return rt_fail(b, line, err, errlen, "time %.9g s must not be negative", t);
    /* The clock's range (sim/engine.h engine_check_s, in its words): the
     * reader sits below the engine. */
    if (!(t <= NUMERICS_MAX_TIME_S))
        return rt_fail(b, line, err, errlen, "time %.9g s is beyond the simulated clock's horizon of 100 years (%.4g s)",
                       t, NUMERICS_MAX_TIME_S);
    return 0;
}

static int check_lengths(const rt_build *b, long line, const rt_req *q, char *err, size_t errlen) {
    const reqtrace_models *sm = b->sm;
    if (q->input < 1) return rt_fail(b, line, err, errlen, "%s must be at least 1, got %lld", b->col_in, q->input);
    if (q->output < 1) return rt_fail(b, line, err, errlen, "%s must be at least 1, got %lld", b->col_out, q->output);
    if (q->input + q->output > sm->max_context[q->model])
        return rt_fail(b, line, err, errlen, "input + output tokens (%lld) exceed %s's context of %d",
                       q->input + q->output, sm->names[q->model], sm->max_context[q->model]);
    return 0;
}

int rt_add(rt_build *b, long line, const rt_req *q, char *err, size_t errlen) {
    reqtrace *t = b->t;
    if (check_time(b, line, q->t_s, err, errlen) < 0) return -1;
    int failed = b->drop_zero_output && q->output == 0;
    if (!failed && check_lengths(b, line, q, err, errlen) < 0) return -1;
    b->n_read++;
    b->last_t = q->t_s;
    if (failed || q->t_s < b->o->skip_s) {
        *(failed ? &t->n_failed : &t->n_skipped) += 1;
        t->n_blocks -= q->n_blocks;                   /* its blocks off the pool again */
        return 0;
    }
    double scale = b->o->time_scale > 0 ? b->o->time_scale : 1;
    double ts = (q->t_s - b->o->skip_s) / scale;
    if (!(ts <= NUMERICS_MAX_TIME_S))
        return rt_fail(b, line, err, errlen, "time %.9g s, at time-scale %g, is beyond the simulated clock's horizon of 100 years",
                       q->t_s, scale);
    if (GROW(t->rows, b->cap_rows, (size_t)t->n + 1)) return rt_fail(b, line, err, errlen, "out of memory");
    t->rows[t->n++] = (reqtrace_row){ .t_s = ts, .input = (int)q->input, .output = (int)q->output, .model = q->model,
                                      .cls = q->cls, .session = q->session, .block_off = t->n_blocks - q->n_blocks,
                                      .n_blocks = q->n_blocks };
    return 0;
}

/* Does the file's first non-blank byte open a JSON object (Mooncake's JSON
 * lines)? Reads at most 64 KiB of blanks; 0 when it cannot tell. */
static int starts_like_json(const char *path) {
    infile_err ie;
    FILE *f = infile_open(path, INFILE_TRACE_MAX_BYTES, "a request trace", &ie);
    if (!f) return 0;
    int c, n = 0;
    while ((c = getc(f)) != EOF && (c == ' ' || c == '\t' || c == '\r' || c == '\n') && n++ < 65536) {}
    fclose(f);
    return c == '{';
}

/* The format of the CSV whose first record is rec (auto). */
static reqtrace_format csv_format(const csv_record *rec) {
    if (rt_is_azure_header(rec)) return REQTRACE_AZURE_2023;   /* the reader tells 2024 by its time zone */
    if (rt_is_burstgpt_header(rec)) return REQTRACE_BURSTGPT;
    return REQTRACE_CSV;
}

/* A CSV-family trace: its first record tells the format when auto. */
static int read_csv_family(rt_build *b, char *err, size_t errlen) {
    infile_err ie;
    csv *r = csv_open(b->path, "a CSV request trace", &ie);
    if (!r) {
        infile_say(&ie, b->path, err, errlen);
        return -1;
    }
    csv_record rec;
    int rc = csv_next(r, &rec, err, errlen);
    if (rc > 0) {
        if (b->t->format == REQTRACE_AUTO) b->t->format = csv_format(&rec);
        switch (b->t->format) {
        case REQTRACE_AZURE_2023:
        case REQTRACE_AZURE_2024: rc = rt_read_azure(r, &rec, b, err, errlen); break;
        case REQTRACE_BURSTGPT: rc = rt_read_burstgpt(r, &rec, b, err, errlen); break;
        default: rc = rt_read_csv(r, &rec, b, err, errlen); break;
        }
    }
    if (rc == 0 && csv_errno(r)) rc = csv_fail(r, err, errlen, "read error");
    b->end_line = csv_line(r);
    csv_close(r);
    return rc < 0 ? -1 : 0;
}

/* No rows to replay: say why, at the last line read. */
static int say_empty(const rt_build *b, char *err, size_t errlen) {
    const reqtrace *t = b->t;
    long line = b->end_line ? b->end_line : 1;
    if (t->n_skipped > 0)
        return rt_fail(b, line, err, errlen, "no requests at or after skip=%.9g s (the last is at %.9g s)", b->o->skip_s,
                       b->last_t);
    if (t->n_failed > 0)
        return rt_fail(b, line, err, errlen, "the trace has no requests but %ld failed ones (0 response tokens)",
                       t->n_failed);
    return rt_fail(b, line, err, errlen, "the trace has no requests");
}

int reqtrace_read(const char *path, const reqtrace_opts *o, const reqtrace_models *sm, reqtrace *t, char *err,
                  size_t errlen) {
    memset(t, 0, sizeof *t);
    t->format = o->format;
    rt_build b = { .path = path, .o = o, .sm = sm, .t = t };
    if (t->format == REQTRACE_AUTO && starts_like_json(path)) t->format = REQTRACE_MOONCAKE;
    int rc;
    if (t->format == REQTRACE_MOONCAKE) {
        t->block_tokens = 512;          /* FAST25-release/README.md of kvcache-ai/Mooncake: "The block size is 512 tokens" */
        rc = rt_read_mooncake(path, &b, err, errlen);
    } else {
        rc = read_csv_family(&b, err, errlen);
    }
    if (rc == 0 && t->n == 0) rc = say_empty(&b, err, errlen);
    if (rc < 0) {
        reqtrace_free(t);
        return -1;
    }
    if (t->n_blocks == 0) {
        free(t->blocks);
        t->blocks = NULL;
    }
    return 0;
}

void reqtrace_free(reqtrace *t) {
    free(t->rows);
    free(t->blocks);
    reqtrace_format f = t->format;
    memset(t, 0, sizeof *t);
    t->format = f;
}

long reqtrace_load(const char *path, const char *const *models, const int *max_context, int n_models,
                   reqtrace_row **rows, char *err, size_t errlen) {
    const reqtrace_opts o = { REQTRACE_AUTO, 1, 0 };
    const reqtrace_models sm = { models, max_context, n_models, NULL, 0 };
    reqtrace t;
    *rows = NULL;
    if (reqtrace_read(path, &o, &sm, &t, err, errlen) < 0) return -1;
    free(t.blocks);
    *rows = t.rows;
    return t.n;
}
