/*
 * csv: the one CSV reader of the trace files, shared by the job-trace
 * reader (scenarios/trace.c, <trace href>) and the request-trace reader
 * (scenarios/reqtrace.c, <arrivals process="trace" href>). The dialect is
 * documented for users in docs/traces.md:
 *
 *   - one record per line, LF or CRLF line ends, the last line's end optional;
 *   - fields separated by commas; blanks (spaces, tabs) around a field are
 *     dropped;
 *   - a field may be double-quoted (RFC 4180): inside the quotes a comma is
 *     text and "" is one quote; the quotes are dropped, what is between them
 *     is kept as it is. A quoted field must close on its own line (records
 *     do not span lines): an unterminated quote is an error at its line.
 *     A quote inside an unquoted field is an ordinary character;
 *   - a line that is blank, or whose first non-blank character is '#', is
 *     skipped (a comment);
 *   - each line, comments included, is at most 4095 bytes with no NUL byte
 *     and no control character but tab, CR and LF; every other line must be
 *     valid UTF-8 (names reach JSON and HTML outputs).
 *
 * Which line is a header, and what the columns mean, is the caller's
 * business; the caller also says how many columns it takes (csv_columns).
 *
 * Errors are one line, "PATH:LINE: what was expected", with no echo of
 * bytes that are not text. Cost: O(bytes) per line, one buffer reused for
 * the whole file.
 */
#ifndef CT_CSV_H
#define CT_CSV_H

#include <stddef.h>

#include "scenarios/infile.h"

#define CSV_MAX_LINE 4096          /* a line, its newline included, is shorter than this */
#define CSV_MAX_FIELDS 32          /* fields kept per record (all are counted) */

typedef struct csv csv;

/* One record: n fields on the line (may exceed CSV_MAX_FIELDS; only the
 * first CSV_MAX_FIELDS are kept). Each f[i] is NUL-terminated, unquoted and
 * trimmed, and points into the reader's line buffer: valid until the next
 * csv_next or csv_close. */
typedef struct csv_record {
    long line;                     /* its line number, from 1 */
    int n;
    char *f[CSV_MAX_FIELDS];
} csv_record;

/* Open the regular file at path (infile_open, INFILE_TRACE_MAX_BYTES; kind
 * names the file in its refusals: "a CSV file"). Returns the reader (the
 * caller closes it), or NULL with *ie filled ("out of memory" when that is
 * why). */
csv *csv_open(const char *path, const char *kind, infile_err *ie);

void csv_close(csv *r);            /* NULL is a no-op */

/* How a line that is not valid UTF-8 is named in the error: field i by
 * names[i] when i < n (the header's column names), else by otherwise ("the
 * line", "the header", "a field"). The strings must outlive their use.
 * Until called: "the line". */
void csv_name_fields(csv *r, const char *const *names, int n, const char *otherwise);

/* Read the next record, skipping blank and comment lines. Returns 1 with
 * *rec filled; 0 at the end of the file (or on a read error: csv_errno says
 * which); -1 with err "PATH:LINE: ..." when the line breaks the dialect
 * (too long, NUL byte, control character, not UTF-8, unterminated quote). */
int csv_next(csv *r, csv_record *rec, char *err, size_t errlen);

/* The path the reader was opened on. */
const char *csv_path(const csv *r);

/* Lines read so far (the last line read, 0 before the first). */
long csv_line(const csv *r);

/* The errno of a read error that ended csv_next, or 0. */
int csv_errno(const csv *r);

/* Fill err with "PATH:LINE: " (the last line read) and the formatted
 * message; returns -1. */
int csv_fail(const csv *r, char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The record's column count against what the format takes: 0 when
 * min <= rec->n <= max; else -1 with err "PATH:LINE: expected EXPECTED, got
 * N", or, when expected is NULL, "PATH:LINE: too many columns (at most MAX)". */
int csv_columns(const csv *r, const csv_record *rec, int min, int max, const char *expected, char *err,
                size_t errlen);

/* The field at column i of rec: "" when the row is shorter or i < 0. */
const char *csv_field(const csv_record *rec, int i);

/* The columns of a file with a header: idx[i] = the column named names[i]
 * in rec, or -1. The first n_req names are required; a name given twice is
 * an error. format names the file's kind in messages ("BurstGPT header: no
 * column 'Timestamp'"). 0, or -1 with err naming what the header lacks. */
int csv_header(const csv *r, const csv_record *rec, const char *const *names, int n_names, int n_req, int *idx,
               const char *format, char *err, size_t errlen);

#endif
