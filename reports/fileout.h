/*
 * fileout: how every output file of clustertwin reaches the disk, and what
 * the report writers share (mkdir -p, text escaped for XHTML, CSV and
 * Markdown).
 *
 * The one rule for an output path (fileout_open):
 *   "-"                      stdout, where the caller allows it;
 *   a symlink                followed to its final target (a dangling link
 *                            names the file to create); the link survives;
 *   a new path or an         written to a temporary file in the target's
 *   existing regular file    directory, flushed, synced and renamed over the
 *                            target: a failed write leaves it as it was;
 *   any other existing file  (character or block device, FIFO, socket)
 *                            opened and written in place: never truncated,
 *                            renamed over or unlinked. A FIFO without a
 *                            reader is an error, not a wait.
 * A write error (a full disk, /dev/full) is reported naming the path, and no
 * temporary file is left behind.
 */
#ifndef CT_FILEOUT_H
#define CT_FILEOUT_H

#include <stddef.h>
#include <stdio.h>

#define FILEOUT_PATH_MAX 4096

/* fileout_open flags */
#define FILEOUT_STDOUT 1              /* "-" means stdout */
#define FILEOUT_REGULAR 2             /* refuse a device, FIFO or socket (status 2) */

typedef enum fileout_how {
    FILEOUT_TO_STDOUT,
    FILEOUT_REPLACE,                  /* through tmp, renamed over target */
    FILEOUT_IN_PLACE                  /* a device, FIFO or socket written as it is */
} fileout_how;

typedef struct fileout {
    FILE *f;                          /* write here */
    fileout_how how;
    char path[FILEOUT_PATH_MAX];      /* as given (for messages) */
    char target[FILEOUT_PATH_MAX];    /* after symlinks */
    char tmp[FILEOUT_PATH_MAX + 64];  /* FILEOUT_REPLACE: the temporary file */
} fileout;

/* Resolve path's symlinks (the last component, repeatedly; at most 40)
 * into target. *exists: 1 when the target exists (its mode in *mode), 0
 * when not (a new file or a dangling link). 0, or -1 with errno (ELOOP,
 * ENAMETOOLONG, or lstat's). */
int fileout_resolve(const char *path, char *target, size_t len, int *exists, unsigned *mode);

/* Open path for writing by the rule above; perm is a new file's mode
 * before the umask (0666 for data, 0777 for scripts). Returns 0 (o->f
 * open), 1 (cannot write: no directory, no permission, a FIFO without a
 * reader) or 2 (a directory; with FILEOUT_REGULAR, not a regular file);
 * on error err holds one line naming the path, errno is set, nothing was
 * created. */
int fileout_open(fileout *o, const char *path, int flags, unsigned perm, char *err, size_t errlen);

/* Finish: flush, sync and rename (REPLACE), flush (IN_PLACE, STDOUT).
 * Returns 0, or 1 with err naming the path and errno set; the temporary
 * file is removed and the target left as it was. err may be NULL. */
int fileout_close(fileout *o, char *err, size_t errlen);

/* Give up: close and remove the temporary file; the target is untouched.
 * A fileout not open (f NULL) is a no-op. */
void fileout_abort(fileout *o);

/* Write n bytes of text to path by the rule; 0, 1 or 2 as fileout_open,
 * err set on error. */
int fileout_write(const char *path, int flags, unsigned perm, const char *text, size_t n, char *err,
                  size_t errlen);

/* mkdir -p DIR (a symlink to a directory counts); 0, or -1 with errno
 * (ENOTDIR when DIR is a file). */
int fileout_mkdirs(const char *dir);

/* The length of the valid UTF-8 sequence at p (1 to 4) in a NUL-terminated
 * string, or 0 when the bytes there are not one: infile_utf8_len
 * (scenarios/infile.h), the project's one decoder. */
int fileout_utf8_len(const unsigned char *p);

/* z escaped for XHTML text and attribute values: & < > " as entities,
 * control characters but newline and tab dropped, each invalid UTF-8 byte
 * as U+FFFD. */
void fileout_html(FILE *f, const char *z);

/* z as one CSV text field: invalid UTF-8 as U+FFFD; a field that begins
 * with = + - @ tab or CR gets a leading ' (so a spreadsheet does not run it
 * as a formula: OWASP's CSV injection advice), unless it is a whole decimal
 * number such as -3 or +2.5e-3; quoted when it holds a comma, quote or line
 * break. Numbers from the code are written with printf, not through here. */
void fileout_csv(FILE *f, const char *z);

/* z as Markdown text (also inside a table cell): & < > as entities (no raw
 * HTML), \ ` * | ~ backslash-escaped, _ too unless inside a word (end_s
 * stays as it is: no emphasis there), ] before ( [ or : escaped (no link or
 * image), line breaks and other control characters as spaces, invalid
 * UTF-8 as U+FFFD. */
void fileout_md(FILE *f, const char *z);

#endif
