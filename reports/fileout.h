/*
 * fileout: what the report writers share to put files on disk: mkdir -p,
 * a file written through a temporary one renamed into place (so a failed
 * write leaves no half-written report), and text escaped for XHTML and CSV.
 */
#ifndef CT_FILEOUT_H
#define CT_FILEOUT_H

#include <stddef.h>
#include <stdio.h>

/* mkdir -p DIR; 0, or -1 with errno (ENOTDIR when DIR is a file). */
int fileout_mkdirs(const char *dir);

/* Open PATH.tmp.PID for writing (its name into tmp); NULL with errno. */
FILE *fileout_open(const char *path, char *tmp, size_t len);

/* Close f and rename tmp over path; 0, or -1 with errno (tmp removed). */
int fileout_close(FILE *f, const char *tmp, const char *path);

/* z escaped for XHTML text and attribute values (control characters but
 * newline and tab dropped). */
void fileout_html(FILE *f, const char *z);

/* z as one CSV field, quoted when it holds a comma, quote or line break. */
void fileout_csv(FILE *f, const char *z);

#endif
