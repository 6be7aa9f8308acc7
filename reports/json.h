/*
 * json: a small streaming JSON writer into a memory buffer.
 *
 * The whole document is built in memory and written out at once by the
 * caller (through reports/fileout: atomically where the target is a file), so a run that fails
 * half-way never leaves half a JSON file. Numbers are printed with %.10g;
 * NaN and infinities become null. Keys are given with each value; pass NULL
 * inside arrays. Out of memory sets a flag that json_text() reports.
 */
#ifndef CT_JSON_H
#define CT_JSON_H

#include <stddef.h>

typedef struct json json;

json *json_new(void);                 /* NULL when out of memory */
void json_free(json *j);              /* NULL is a no-op */

void json_object(json *j, const char *key);   /* begin { */
void json_array(json *j, const char *key);    /* begin [ */
void json_end(json *j);                       /* close the innermost } or ] */
void json_num(json *j, const char *key, double v);
void json_int(json *j, const char *key, long long v);
void json_str(json *j, const char *key, const char *z);
void json_bool(json *j, const char *key, int v);
void json_null(json *j, const char *key);
/* A value whose JSON text z[0, n) the caller made (a number as json_num
 * or json_int wrote it, a string literal with its quotes and escapes). */
void json_raw(json *j, const char *key, const char *z, size_t n);

/* Members of a struct written in order under their keys: a table of keys
 * and offsetof, doubles by json_nums, ints by json_ints, char arrays by
 * json_strs (the table says nothing of the member's type: list only
 * members of that type).
 * JSON_MEMBER(type, m) keys member m by its own name. */
typedef struct json_field {
    const char *key;
    size_t off;
} json_field;
#define JSON_MEMBER(type, m) { #m, offsetof(type, m) }
#define JSON_FIELDS(table) (table), (sizeof (table) / sizeof *(table))
void json_nums(json *j, const void *base, const json_field *f, size_t n);
double json_field_num(const void *base, const json_field *f);   /* the double f names */
void json_ints(json *j, const void *base, const json_field *f, size_t n);
void json_strs(json *j, const void *base, const json_field *f, size_t n);

/* A function told of each object or array that closes directly inside a
 * member of the document's top-level object (an element of "jobs": [...]):
 * member is the key that member was opened with, [from, to) the value's
 * text in text, the document so far (valid until the next write). It is
 * how the results store reads a run's jobs while the rest of the document
 * is still being written (reports/store_jobs.c). */
typedef void (*json_watch_fn)(void *ctx, const char *member, const char *text, size_t from, size_t to);

/* Call fn for each such value written from now on (fn NULL: no more). */
void json_watch(json *j, json_watch_fn fn, void *ctx);

/* The text so far (NUL-terminated), or NULL when out of memory. */
const char *json_text(const json *j, size_t *len);

/* Write the text to path by reports/fileout's rule ("-" = stdout; a
 * device or FIFO in place; a file atomically). Returns 0, or -1 with err
 * set; on error a target file is left as it was. */
int json_write_file(const json *j, const char *path, char *err, size_t errlen);

#endif
