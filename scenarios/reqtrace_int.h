/*
 * reqtrace_int: what the request-trace readers share (scenarios/reqtrace.c)
 * and each format's reader (reqtrace_csv.c, reqtrace_azure.c,
 * reqtrace_burstgpt.c, reqtrace_mooncake.c). Not for use outside them.
 *
 * A reader parses its format's row into an rt_req and hands it to rt_add,
 * which checks what every format must satisfy (sorted times, lengths >= 1,
 * the model's context), applies skip and time-scale and appends the row.
 */
#ifndef CT_REQTRACE_INT_H
#define CT_REQTRACE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/errmsg.h"
#include "scenarios/csv.h"
#include "scenarios/reqtrace.h"

/* A trace being read. */
typedef struct rt_build {
    const char *path;
    const reqtrace_opts *o;
    const reqtrace_models *sm;
    reqtrace *t;
    size_t cap_rows, cap_blocks;
    const char *col_in, *col_out;  /* the format's names of the two lengths, for errors */
    int drop_zero_output;          /* burstgpt: 0 output tokens = a failed request, dropped */
    long n_read;                   /* rows read, dropped ones included */
    double last_t;                 /* the previous row's time on the trace's own clock */
    long end_line;                 /* the reader's last line, for an empty trace's error */
} rt_build;

/* One row as read: its time on the trace's own clock (seconds), lengths,
 * model, session (-1: none) and its prefix blocks, the last n_blocks
 * entries pushed on the pool (rt_block). */
typedef struct rt_req {
    double t_s;
    long long input, output;
    int model;
    int cls;                       /* -1: none */
    int64_t session;
    int n_blocks;
} rt_req;

/* err = "PATH:LINE: message"; returns -1. */
#define rt_fail(b, line, err, errlen, ...) errmsg_at((err), (errlen), (b)->path, (line), __VA_ARGS__)

/* Check req (read at line), then append it, or drop it (before skip_s, or
 * a failed request): 0, or -1 with err. */
int rt_add(rt_build *b, long line, const rt_req *req, char *err, size_t errlen);

/* Push one prefix block hash on the pool: 0, or -1 when out of memory. */
int rt_block(rt_build *b, uint32_t hash);

/* A whole number (digits, optional sign, optional ".0" as pandas writes
 * them; |x| <= 1e12): 0 with *out, or -1. */
int rt_whole(const char *z, long long *out);

/* A non-negative finite decimal number of z's whole text: 0 with *out, or -1. */
int rt_number(const char *z, double *out);

/* A session column: empty = -1 (none), a whole number >= 0 = itself,
 * other text = a 62-bit hash of it (FNV-1a), so names work as identities. */
int64_t rt_session(const char *z);

/* The service model named z, or -1 (NULL or empty z: 0, the first). */
int rt_model(const reqtrace_models *sm, const char *z);

/* Each format's rows. The CSV-family readers take the open reader and its
 * first record (the header, or the plain csv's first row). 0, or -1 with
 * err. */
int rt_read_csv(csv *r, const csv_record *first, rt_build *b, char *err, size_t errlen);
int rt_read_azure(csv *r, const csv_record *header, rt_build *b, char *err, size_t errlen);
int rt_read_burstgpt(csv *r, const csv_record *header, rt_build *b, char *err, size_t errlen);
int rt_read_mooncake(const char *path, rt_build *b, char *err, size_t errlen);

/* Does the header record rec name the columns of format f (azure:
 * TIMESTAMP, ContextTokens, GeneratedTokens; burstgpt: Timestamp, Request
 * tokens, Response tokens)? */
int rt_is_azure_header(const csv_record *rec);
int rt_is_burstgpt_header(const csv_record *rec);

#endif
