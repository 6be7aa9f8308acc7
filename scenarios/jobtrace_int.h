/*
 * jobtrace_int: what the public job-trace readers share (scenarios/jobtrace.c)
 * and each format's reader (jobtrace_swf.c, jobtrace_helios.c, jobtrace_pai.c,
 * jobtrace_openb.c, jobtrace_philly.c). Not for use outside them.
 *
 * A reader parses each row of its format into a jt_row (times on the
 * trace's own clock, in seconds) and hands it to jt_add, which counts it,
 * skips what cannot run and keeps the rest; jobtrace.c then orders the kept
 * jobs by submit time, applies skip, count and time-scale and appends them
 * to the scenario (trace_add_batch).
 */
#ifndef CT_JOBTRACE_INT_H
#define CT_JOBTRACE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/errmsg.h"
#include "scenarios/csv.h"
#include "scenarios/jobtrace.h"

/* One row as read. */
typedef struct jt_row {
    double submit_s;               /* on the trace's own clock; NAN: none recorded */
    double run_s;                  /* run time; <= 0 or not finite: none */
    long long gpus;                /* whole GPUs it holds (0: a CPU-only row) */
    int started;                   /* 0: the trace says it never ran */
    int other_status;              /* swf: a status the replay does not take */
    const char *queue;             /* its queue or virtual cluster ("" none) */
    const char *name;              /* its id in the trace */
    /* What the trace says beyond the run (NULL or "", 0 or NAN: it does
     * not say; docs/job-traces-public.md has each format's column): */
    const char *user, *account;    /* who ran it, and the group it is charged to */
    double limit_s;                /* the time limit it asked for (0: none) */
    double wait_s;                 /* its real wait: start minus submit (NAN: none) */
    const char *after;             /* the id of the job it waited for (swf) */
} jt_row;

/* A kept job, until it is ordered and appended. */
typedef struct jt_job {
    double submit_s, run_s, limit_s, wait_s;
    int gpus, queue;
    uint32_t name;                 /* offset into jt_build.names */
    uint32_t user, account, after; /* offsets into jt_build.names; JT_NONE: none */
    long line;
} jt_job;

#define JT_NONE UINT32_MAX

/* A trace being read. */
typedef struct jt_build {
    scenario *s;
    const char *path;
    jobtrace_format format;
    int line;                      /* the <trace> element's, in the scenario */
    int cluster_gpus;
    jt_job *jobs;
    size_t n_jobs, cap_jobs;
    char *names;
    size_t names_len, names_cap;
    double first_submit_s;         /* the earliest submit of any row: the trace's time 0 */
    int have_first;
    const char *last_queue;        /* the previous row's queue name and its index (a cache) */
    int last_queue_index;
    char last_queue_name[SC_NAME_MAX];
} jt_build;

/* err = "PATH:LINE: message"; returns -1. */
#define jt_fail(b, line, err, errlen, ...) errmsg_at((err), (errlen), (b)->path, (line), __VA_ARGS__)

/* Count the row read at line and keep it, or skip it (counted by why).
 * 0, or -1 with err (out of memory). */
int jt_add(jt_build *b, long line, const jt_row *r, char *err, size_t errlen);

/* A finite number of z's whole text (a sign allowed, no inf/nan/hex): 0
 * with *out, or -1. */
int jt_number(const char *z, double *out);

/* Does the header rec name every one of names[0..n)? */
int jt_header_has(const csv_record *rec, const char *const *names, int n);

/* A CSV format's row parser: rec's fields (at the columns idx) into *q. */
typedef int (*jt_parse_fn)(const csv *r, const csv_record *rec, const int *idx, jt_row *q, char *err, size_t errlen);

/* Every row after the header through parse and jt_add. 0, or -1 with err. */
int jt_read_rows(csv *r, jt_build *b, const int *idx, jt_parse_fn parse, char *err, size_t errlen);

/* Each format's rows. The CSV readers take the open reader and its first
 * record (the header; pai: maybe the first row). 0, or -1 with err. */
int jt_read_swf(FILE *fp, jt_build *b, char *err, size_t errlen);
int jt_read_philly(const char *text, size_t len, jt_build *b, char *err, size_t errlen);
int jt_read_helios(csv *r, const csv_record *header, jt_build *b, char *err, size_t errlen);
int jt_read_pai(csv *r, const csv_record *first, jt_build *b, char *err, size_t errlen);
int jt_read_openb(csv *r, const csv_record *header, jt_build *b, char *err, size_t errlen);

/* Sniffing: is the line (NUL-terminated, blanks allowed) an SWF job line
 * of 18 numbers? Does the first record name format f's columns? */
int jt_is_swf_line(const char *line);
int jt_is_helios(const csv_record *rec);
int jt_is_acme(const csv_record *rec);
int jt_is_openb(const csv_record *rec);
int jt_is_pai(const csv_record *rec);

#endif
