/*
 * infile: the one way an input file named by the user is opened (scenarios,
 * catalog files, host profiles, job traces, request traces).
 *
 * The file is opened with O_NONBLOCK|O_NOCTTY|O_CLOEXEC, so a FIFO or a
 * terminal never blocks the open; the opened descriptor is then checked
 * with fstat (no stat-then-open race): anything but a regular file (a
 * directory, FIFO, socket, character or block device) is refused, as is a
 * file over the caller's size cap. Only then is O_NONBLOCK cleared and the
 * file read. A symlink is followed to its target like any path.
 *
 * Errors come back in an infile_err, without the path, so each caller says
 * where the path came from ("x.xml:0: ...", "<trace href=\"a.csv\">: a.csv: ...").
 */
#ifndef CT_INFILE_H
#define CT_INFILE_H

#include <stddef.h>
#include <stdio.h>

/* Size caps of the inputs, in bytes. A scenario or catalog is hand-written
 * (a catalog file may gather a whole site's parts: 64 MiB);
 * a trace holds up to 10 million rows of up to 4095 characters (in practice
 * about 50), so 4 GiB bounds it without refusing any trace a row limit allows. */
#define INFILE_SCENARIO_MAX_BYTES (16ull << 20)
#define INFILE_CATALOG_MAX_BYTES (64ull << 20)
#define INFILE_PROFILE_MAX_BYTES (1ull << 20)
#define INFILE_TRACE_MAX_BYTES (4ull << 30)

typedef struct infile_err {
    int line;                 /* 0: the file as a whole; 1: its size (its first line) */
    char why[256];            /* "cannot open: No such file or directory",
                                 "is a directory; expected a CSV file",
                                 "not a regular file (a FIFO); expected a CSV file",
                                 "file is N bytes; a CSV file may be at most M bytes" */
} infile_err;

/* Read the whole regular file at path (at most max_bytes) into *data,
 * NUL-terminated (the caller frees it), and its length into *len. what names
 * the kind of file for messages ("a scenario XML file"). Returns 0, or -1
 * with e filled and *data NULL. Never blocks on a FIFO or device, never prints. */
int infile_read(const char *path, unsigned long long max_bytes, const char *what, char **data, size_t *len,
                infile_err *e);

/* infile_read for a file named on its own (not from inside another file):
 * a refusal is said in err as "path:line: why". Returns 0, or -1 with err
 * filled and *data NULL. */
int infile_load(const char *path, unsigned long long max_bytes, const char *what, char **data, size_t *len,
                char *err, size_t errlen);

/* e said as "path:line: why" in err (errlen bytes): how a file named on its
 * own reports that it cannot be read. */
void infile_say(const infile_err *e, const char *path, char *err, size_t errlen);

/* Open the regular file at path for line-by-line reading (its size at open
 * at most max_bytes). Returns the stream (the caller fcloses it), or NULL
 * with e filled. Same refusals as infile_read. */
FILE *infile_open(const char *path, unsigned long long max_bytes, const char *what, infile_err *e);

/* The length of the valid UTF-8 sequence at p[0..n) (1 to 4), or 0 when
 * the bytes there are not one: a stray continuation byte, an overlong form,
 * a surrogate, a code point past U+10FFFF, or a sequence cut short. Bytes
 * are read in order and reading stops at the first that does not fit, so
 * a NUL-terminated string may be given n = 4 at any point. The project's
 * one UTF-8 decoder: the readers refuse with it, the writers (reports/)
 * replace with it. */
int infile_utf8_len(const unsigned char *p, size_t n);

/* The length of the longest prefix of z[0..n) that is valid UTF-8 (no
 * overlong forms, surrogates or code points past U+10FFFF): n when all of
 * it is. For readers to refuse text that would reach an output (JSON, HTML)
 * as invalid UTF-8. */
size_t infile_utf8_valid(const char *z, size_t n);

#endif
