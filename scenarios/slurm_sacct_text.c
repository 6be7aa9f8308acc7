/*
 * slurm_sacct_text: `sacct -P` (or -p) text into the live record's
 * history (slurm.h).
 *
 *   JobID|JobName|User|Account|Partition|State|Submit|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|NodeList|ExitCode|Reason
 *   1001|train|alice|ml|gpu|COMPLETED|2026-11-25T08:00:00|2026-11-25T08:00:05|2026-11-25T09:00:05|01:00:00|02:00:00|billing=8,cpu=8,gres/gpu=8,mem=64G,node=1|...
 *   1001.batch|batch||ml||COMPLETED|...                       (a step: skipped)
 *
 * Columns are found by the header's names (sacct's --format field names,
 * any order, any case); a row must have as many fields as the header.
 * Times are ISO 8601 without a zone (sacct prints the cluster's local
 * time; read as UTC: only differences are used), "Unknown" or "None" for
 * none. Elapsed and Timelimit are [D-][HH:]MM:SS; Timelimit may be
 * UNLIMITED or Partition_Limit (no limit known). State's first word counts
 * ("CANCELLED by 1000" is CANCELLED). ExitCode and Reason are not read:
 * a job's outcome is its state (slurm.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "base/errmsg.h"
#include "scenarios/infile.h"
#include "scenarios/slurm.h"
#include "scenarios/slurm_int.h"

#define SACCT_MAX_FIELDS 64

enum { C_JOBID, C_NAME, C_USER, C_ACCOUNT, C_PARTITION, C_STATE, C_SUBMIT, C_START, C_END, C_ELAPSED, C_LIMIT,
       C_ALLOC, C_REQ, C_NODES, N_COLS };
static const char *const col_names[N_COLS] = { "JobID", "JobName", "User", "Account", "Partition", "State", "Submit",
                                               "Start", "End", "Elapsed", "Timelimit", "AllocTRES", "ReqTRES", "NodeList" };

typedef struct sacct_text {
    const char *path;
    int line, n_fields, col[N_COLS];
    int bar_ends;                    /* the header ends in '|' (sacct -p): so do the rows */
    unsigned need;                   /* SLURM_SACCT_FOR_*: the columns the caller needs */
    char *field[SACCT_MAX_FIELDS];
    char *err;
    size_t errlen;
} sacct_text;

static int fail(sacct_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(sacct_text *t, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    errmsg_set(t->err, t->errlen, "%s:%d: %s", t->path, t->line, msg);
    return -1;
}

/* Split line (modified) at '|' into t->field; with sacct -p a trailing '|' ends it. */
static int split(sacct_text *t, char *line) {
    size_t n = strlen(line);
    if (t->bar_ends && n && line[n - 1] == '|') line[n - 1] = 0;
    int k = 0;
    for (char *p = line;; k++) {
        if (k == SACCT_MAX_FIELDS) return fail(t, "expected at most 64 fields separated by |");
        t->field[k] = p;
        char *bar = strchr(p, '|');
        if (!bar) break;
        *bar = 0, p = bar + 1;
    }
    return k + 1;
}

/* Column c is in the header (else the message naming it). */
static int need_col(sacct_text *t, int c) {
    if (t->col[c] >= 0) return 0;
    return fail(t, "expected a header naming %s (sacct -P --format=JobID,...,%s,...)", col_names[c], col_names[c]);
}

static int read_header(sacct_text *t, char *line) {
    size_t len = strlen(line);
    t->bar_ends = len && line[len - 1] == '|';
    int n = split(t, line);
    if (n < 0) return -1;
    for (int c = 0; c < N_COLS; c++) t->col[c] = -1;
    for (int k = 0; k < n; k++)
        for (int c = 0; c < N_COLS; c++)
            if (!strcasecmp(t->field[k], col_names[c])) t->col[c] = k;
    t->n_fields = n;
    if (need_col(t, C_JOBID) || need_col(t, C_STATE) || need_col(t, C_START) || need_col(t, C_END)) return -1;
    if ((t->need & SLURM_SACCT_FOR_FAILURES) && need_col(t, C_NODES)) return -1;
    if (!(t->need & SLURM_SACCT_FOR_HISTORY)) return 0;
    if (need_col(t, C_LIMIT)) return -1;
    if (t->col[C_ALLOC] < 0 && t->col[C_REQ] < 0) return fail(t, "expected a header naming AllocTRES or ReqTRES");
    return 0;
}

static const char *get(const sacct_text *t, int c) { return t->col[c] >= 0 ? t->field[t->col[c]] : ""; }

/* "[D-][HH:]MM:SS" as seconds; -1 when not one. */
static double clock_s(const char *z) {
    long d = 0, v[3] = { 0, 0, 0 };
    int n = 0;
    const char *p = z, *dash = strchr(z, '-');
    char *e;
    if (dash) {
        d = strtol(z, &e, 10);
        if (e != dash || e == z || d < 0) return -1;
        p = dash + 1;
    }
    for (;; p = e + 1) {
        if (n == 3 || !isdigit((unsigned char)*p)) return -1;
        v[n++] = strtol(p, &e, 10);
        if (*e != ':') break;
    }
    if (*e || n < 2) return -1;
    long h = n == 3 ? v[0] : 0, m = v[n - 2], s = v[n - 1];
    if (m > 59 || s > 59) return -1;
    return (double)(((d * 24 + h) * 60 + m) * 60 + s);
}

static int read_time(sacct_text *t, int c, double *x) {
    const char *z = get(t, c);
    int64_t sec;
    double frac;
    int zone;
    *x = 0;
    if (!*z || !strcmp(z, "Unknown") || !strcmp(z, "None")) return 0;
    if (datetime_parse(z, &sec, &frac, &zone) < 0)
        return fail(t, "%s \"%s\": expected a time like 2026-11-25T08:00:00, Unknown or None", col_names[c], z);
    *x = (double)sec + frac;
    return 0;
}

static int read_durations(sacct_text *t, slurm_ended *e) {
    const char *el = get(t, C_ELAPSED), *lim = get(t, C_LIMIT);
    e->elapsed_s = *el ? clock_s(el) : 0;
    if (e->elapsed_s < 0) return fail(t, "Elapsed \"%s\": expected [D-]HH:MM:SS", el);
    if (!*lim || !strcmp(lim, "UNLIMITED") || !strcmp(lim, "Partition_Limit")) return e->limit_s = 0, 0;
    if ((e->limit_s = clock_s(lim)) < 0)
        return fail(t, "Timelimit \"%s\": expected [D-]HH:MM:SS, UNLIMITED or Partition_Limit", lim);
    return 0;
}

static int read_gpus(sacct_text *t, slurm_ended *e) {
    char why[256];
    long g = slurm_gpus_in(get(t, C_ALLOC), NULL, 0, why, sizeof why);
    if (g == 0) g = slurm_gpus_in(get(t, C_REQ), NULL, 0, why, sizeof why);
    if (g < 0) return fail(t, "TRES %s", why);
    e->gpus = (int)g;
    return 0;
}

/* One row: 1 skipped (a step, or not ended), 0 read into e, -1 bad. */
static int read_row(sacct_text *t, char *line, slurm_ended *e, char *state, size_t statelen) {
    int n = split(t, line);
    if (n < 0) return -1;
    if (n != t->n_fields) {
        return fail(t, "expected %d fields separated by | as in the header, found %d", t->n_fields, n);
    }
    memset(e, 0, sizeof *e);
    e->id = get(t, C_JOBID);
    if (!*e->id) return fail(t, "JobID: expected a job id");
    if (strchr(e->id, '.')) return 1;
    char words[80];
    snprintf(state, statelen, "%.*s", (int)strcspn(get(t, C_STATE), " "), get(t, C_STATE));
    snprintf(words, sizeof words, " %s ", state);
    int st = slurm_job_state(words);
    if (st == -2) return fail(t, "State \"%s\": expected a Slurm job state (COMPLETED, TIMEOUT, ...)", get(t, C_STATE));
    e->name = get(t, C_NAME), e->user = get(t, C_USER), e->account = get(t, C_ACCOUNT);
    e->partition = get(t, C_PARTITION), e->nodes = get(t, C_NODES), e->state = state;
    if (!strcmp(e->nodes, "None assigned")) e->nodes = "";
    if (read_time(t, C_SUBMIT, &e->submit) || read_time(t, C_START, &e->start) || read_time(t, C_END, &e->end) ||
        read_durations(t, e) || read_gpus(t, e))
        return -1;
    return st >= 0 && strcmp(state, "REQUEUED") ? 1 : 0;
}

/* One line (modified) of the text: the header, or a row to fn. */
static int read_line(sacct_text *t, char *p, int *have_header, slurm_ended_fn fn, void *ctx) {
    slurm_ended e;
    char state[64], why[256];
    int rc;
    if (!*have_header) return *have_header = 1, read_header(t, p);
    if ((rc = read_row(t, p, &e, state, sizeof state)) == 1) return 0;
    if (rc == 0 && fn(ctx, &e, why, sizeof why) < 0) return fail(t, "%s", why);
    return rc;
}

int slurm_sacct_text_each(const char *text, size_t len, const char *path, unsigned need, slurm_ended_fn fn, void *ctx,
                          char *err, size_t errlen) {
    sacct_text t = { .path = path, .need = need, .err = err, .errlen = errlen };
    char *buf = malloc(len + 1);
    if (!buf) return errmsg_set(err, errlen, "%s:0: out of memory", path), -1;
    memcpy(buf, text, len);
    buf[len] = 0;
    int rc = 0, have_header = 0;
    for (char *p = buf, *nl; rc == 0 && p < buf + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(buf + len - p));
        if (!nl) nl = buf + len;
        *nl = 0;
        t.line++;
        size_t n = strlen(p);
        if (n && p[n - 1] == '\r') p[--n] = 0;
        if (n != (size_t)(nl - p) && n + 1 != (size_t)(nl - p)) rc = fail(&t, "expected text, found a NUL byte");
        else if (infile_utf8_valid(p, n) != n) rc = fail(&t, "expected UTF-8 text");
        else if (n) rc = read_line(&t, p, &have_header, fn, ctx);
    }
    if (rc == 0 && !have_header) t.line = 1, rc = fail(&t, "expected a header line JobID|...|State|...");
    free(buf);
    return rc;
}

int slurm_sacct_text(const char *text, size_t len, const char *path, live_cluster *c, char *err, size_t errlen) {
    slurm_history_sink k = { c, { NULL, 0, 0 } };
    int rc = slurm_sacct_text_each(text, len, path, SLURM_SACCT_FOR_HISTORY, slurm_history_add, &k, err, errlen);
    slurm_index_free(&k.ids);
    if (rc == 0 && (!c->source || !c->source[0]) && live_set(&c->source, "Slurm (sacct -P text)") < 0)
        return errmsg_set(err, errlen, "%s:0: out of memory", path), -1;
    return rc;
}
