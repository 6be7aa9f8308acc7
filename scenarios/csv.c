/*
 * csv: the trace files' CSV reader (the dialect is in csv.h).
 *
 * A line is read whole (getline into one reused buffer), checked as text,
 * then split in two passes: the first finds each field's span without
 * touching the buffer (so a UTF-8 error can name the field it is in, quotes
 * and all), the second writes each field in place, unquoted and
 * NUL-terminated. A field is never longer than its span, so the in-place
 * copy only moves bytes left within it:
 *
 *   line:   ␠3600␠,"a,""b"""␠,x\n
 *   spans:  [─f0──][───f1────][f2]
 *   fields: "3600"  a,"b"      x
 */
#include "scenarios/csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct csv {
    FILE *fp;
    const char *path;
    long line;
    int read_errno;
    char *buf;
    size_t cap;
    const char *const *names;      /* csv_name_fields */
    int n_names;
    const char *otherwise;
};

/* A field's place in the line: [start, end) after blanks are trimmed; for
 * a quoted field start is its opening quote and end is one past the
 * closing one. */
typedef struct span { size_t start, end; int quoted; } span;

/* What went wrong splitting a line: the field where, and how. */
enum { SPLIT_OK, SPLIT_UNTERMINATED, SPLIT_AFTER_QUOTE };

csv *csv_open(const char *path, const char *kind, infile_err *ie) {
    FILE *fp = infile_open(path, INFILE_TRACE_MAX_BYTES, kind, ie);
    if (!fp) return NULL;
    csv *r = calloc(1, sizeof *r);
    if (!r) {
        fclose(fp);
        ie->line = 0;
        snprintf(ie->why, sizeof ie->why, "out of memory");
        return NULL;
    }
    r->fp = fp;
    r->path = path;
    r->otherwise = "the line";
    return r;
}

void csv_close(csv *r) {
    if (!r) return;
    fclose(r->fp);
    free(r->buf);
    free(r);
}

void csv_name_fields(csv *r, const char *const *names, int n, const char *otherwise) {
    r->names = names;
    r->n_names = n < CSV_MAX_FIELDS ? n : CSV_MAX_FIELDS;
    r->otherwise = otherwise;
}

const char *csv_path(const csv *r) { return r->path; }

long csv_line(const csv *r) { return r->line; }

int csv_errno(const csv *r) { return r->read_errno; }

static int vfail(const csv *r, char *err, size_t errlen, const char *fmt, va_list ap) {
    int k = snprintf(err, errlen, "%s:%ld: ", r->path, r->line);
    if (k >= 0 && (size_t)k < errlen) vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    return -1;
}

int csv_fail(const csv *r, char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(r, err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int csv_columns(const csv *r, const csv_record *rec, int min, int max, const char *expected, char *err,
                size_t errlen) {
    if (rec->n >= min && rec->n <= max) return 0;
    if (!expected) return csv_fail(r, err, errlen, "too many columns (at most %d)", max);
    return csv_fail(r, err, errlen, "expected %s, got %d", expected, rec->n);
}

static int blank(char c) { return c == ' ' || c == '\t'; }

static int trailing_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* The line's text checks, in the order the errors are given: length, NUL
 * byte, control characters. Comments are checked too. 0 or -1 with err. */
static int check_text(const csv *r, const char *z, size_t len, char *err, size_t errlen) {
    if (len > CSV_MAX_LINE - 1) return csv_fail(r, err, errlen, "line longer than %d characters", CSV_MAX_LINE - 1);
    if (memchr(z, 0, len)) return csv_fail(r, err, errlen, "binary data (a NUL byte); expected a CSV text file");
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)z[i];
        if ((ch < ' ' && ch != '\t' && ch != '\r' && ch != '\n') || ch == 0x7f)
            return csv_fail(r, err, errlen, "binary data (control character 0x%02x); expected a CSV text file", ch);
    }
    return 0;
}

/* Find the fields of z[at..len) (len excludes nothing: a trailing newline
 * is a trailing blank). Fills s[0..min(n, max)) and *n; returns SPLIT_OK
 * or what stopped the split, with *bad the field (from 0) it stopped in. */
static int split_spans(const char *z, size_t at, size_t len, span *s, int max, int *n, int *bad) {
    size_t i = at;
    for (int k = 0;; k++) {
        while (i < len && blank(z[i])) i++;
        span f = { i, i, 0 };
        if (i < len && z[i] == '"') {
            f.quoted = 1;
            for (i++; i < len && z[i] != '\n'; i++) {        /* to the closing quote */
                if (z[i] != '"') continue;
                if (i + 1 < len && z[i + 1] == '"') i++;      /* "" is one quote */
                else break;
            }
            int why = SPLIT_OK;
            if (i >= len || z[i] != '"') {
                why = SPLIT_UNTERMINATED;
                f.end = len;
            } else {
                f.end = ++i;
                while (i < len && trailing_blank(z[i])) i++;
                if (i < len && z[i] != ',') why = SPLIT_AFTER_QUOTE;
            }
            if (why != SPLIT_OK) {
                if (k < max) s[k] = f;
                *n = k + 1;
                *bad = k;
                return why;
            }
        } else {
            while (i < len && z[i] != ',') i++;
            f.end = i;
            while (f.end > f.start && trailing_blank(z[f.end - 1])) f.end--;
        }
        if (k < max) s[k] = f;
        if (i >= len) {
            *n = k + 1;
            return SPLIT_OK;
        }
        i++;                                     /* past the comma */
    }
}

/* The field (from 0) that byte offset `at` of the line falls in. */
static int field_of(const span *s, int n, size_t at) {
    int k = 0;
    while (k + 1 < n && s[k + 1].start <= at) k++;
    return k;
}

/* Write the fields in place: unquoted, "" made ", NUL-terminated. */
static void cut_fields(char *z, const span *s, int n, char **f) {
    for (int k = 0; k < n; k++) {
        if (!s[k].quoted) {
            z[s[k].end] = 0;
            f[k] = z + s[k].start;
            continue;
        }
        char *out = z + s[k].start;
        f[k] = out;
        for (size_t i = s[k].start + 1; i < s[k].end - 1; i++) {
            *out++ = z[i];
            if (z[i] == '"') i++;                /* "" inside: one quote */
        }
        *out = 0;
    }
}

/* Name the field a UTF-8 error is in (csv_name_fields). */
static const char *field_name(const csv *r, int k) {
    return k < r->n_names && r->names[k] ? r->names[k] : r->otherwise;
}

int csv_next(csv *r, csv_record *rec, char *err, size_t errlen) {
    ssize_t got;
    while ((got = getline(&r->buf, &r->cap, r->fp)) > 0) {
        size_t len = (size_t)got;
        char *z = r->buf;
        r->line++;
        if (check_text(r, z, len, err, errlen) < 0) return -1;
        size_t at = 0;
        while (at < len && (blank(z[at]) || z[at] == '\r')) at++;
        if (at == len || z[at] == '\n' || z[at] == '#') continue;
        /* Spans for every field, so an error can name the one it is in;
         * fields past CSV_MAX_FIELDS are counted, not kept. */
        span s[CSV_MAX_FIELDS + 1];
        int n = 0, bad = 0;
        int split = split_spans(z, at, len, s, CSV_MAX_FIELDS + 1, &n, &bad);
        size_t ok = infile_utf8_valid(z, len);
        if (ok < len) {
            int k = field_of(s, n < CSV_MAX_FIELDS + 1 ? n : CSV_MAX_FIELDS + 1, ok);
            return csv_fail(r, err, errlen, "%s is not valid UTF-8 (byte 0x%02x, character %zu of the line)",
                            field_name(r, k), (unsigned char)z[ok], ok + 1);
        }
        if (split == SPLIT_UNTERMINATED)
            return csv_fail(r, err, errlen,
                            "column %d: a quoted field is not closed on its line; expected a closing \" (a field "
                            "may not span lines)", bad + 1);
        if (split == SPLIT_AFTER_QUOTE)
            return csv_fail(r, err, errlen,
                            "column %d: text after the closing quote; expected a comma or the end of the line "
                            "(a quote inside a quoted field is written \"\")", bad + 1);
        rec->line = r->line;
        rec->n = n;
        cut_fields(z, s, n < CSV_MAX_FIELDS ? n : CSV_MAX_FIELDS, rec->f);
        return 1;
    }
    if (ferror(r->fp)) r->read_errno = errno ? errno : EIO;
    return 0;
}

const char *csv_field(const csv_record *rec, int i) {
    return i >= 0 && i < rec->n && i < CSV_MAX_FIELDS ? rec->f[i] : "";
}

int csv_header(const csv *r, const csv_record *rec, const char *const *names, int n_names, int n_req, int *idx,
               const char *format, char *err, size_t errlen) {
    for (int i = 0; i < n_names; i++) idx[i] = -1;
    for (int c = 0; c < rec->n && c < CSV_MAX_FIELDS; c++)
        for (int i = 0; i < n_names; i++) {
            if (strcmp(rec->f[c], names[i])) continue;
            if (idx[i] >= 0) return csv_fail(r, err, errlen, "%s header: column '%s' is named twice", format, names[i]);
            idx[i] = c;
        }
    for (int i = 0; i < n_req; i++)
        if (idx[i] < 0) return csv_fail(r, err, errlen, "%s header: no column '%s'", format, names[i]);
    return 0;
}
