/*
 * jsonin: JSON read into a tree, for the inputs people hand the twin in
 * JSON (Slurm's `squeue/sinfo/sacct --json`, `kubectl get -o json`,
 * Prometheus query results). Results JSON the twin writes is reports/json.c's.
 *
 * RFC 8259, strictly: one value (any type) with only blanks around it; no
 * comments, no trailing commas, no NaN; strings valid UTF-8 with no raw
 * control characters, escapes (\uXXXX surrogate pairs included) decoded to
 * UTF-8 (a \u0000 is refused: names are C strings). Nesting is at most
 * JSONIN_MAX_DEPTH deep. Every value remembers the line it starts on, so a
 * reader's message names the place: "squeue.json:41: jobs[3].job_state:
 * expected a string or an array of strings".
 *
 * Parsing is one pass, O(bytes); the tree lives in one arena freed at once.
 * Duplicate keys in an object are kept; jsonin_get returns the first.
 *
 *   jsonin *d = jsonin_read_file("squeue.json", err, sizeof err);
 *   const jv *jobs = jv_get(jsonin_root(d), "jobs");
 *   for (int i = 0; i < jv_len(jobs); i++) puts(jv_str(jv_get(jv_at(jobs, i), "name"), "?"));
 *   jsonin_free(d);
 */
#ifndef CT_JSONIN_H
#define CT_JSONIN_H

#include <stddef.h>

#define JSONIN_MAX_DEPTH 256
#define JSONIN_MAX_BYTES (1ull << 30)      /* a sacct of a year of a big cluster is ~100s of MB */

typedef enum jv_type { JV_NULL, JV_FALSE, JV_TRUE, JV_NUM, JV_STR, JV_ARR, JV_OBJ } jv_type;

typedef struct jv jv;
typedef struct jsonin jsonin;

/* Parse len bytes of text (need not be NUL-terminated). path names the
 * text in messages. NULL with err "PATH:LINE: expected ..." on bad JSON,
 * "PATH:0: out of memory" when memory runs out. */
jsonin *jsonin_parse(const char *text, size_t len, const char *path, char *err, size_t errlen);
/* Read and parse a regular file (scenarios/infile.h rules: no FIFOs,
 * devices or directories; at most JSONIN_MAX_BYTES). */
jsonin *jsonin_read_file(const char *path, char *err, size_t errlen);
void jsonin_free(jsonin *d);
const jv *jsonin_root(const jsonin *d);
const char *jsonin_path(const jsonin *d);

/* Queries: each takes NULL (an absent value) and answers as for absent. */
jv_type jv_kind(const jv *v);                 /* JV_NULL for NULL */
int jv_line(const jv *v);                     /* 0 for NULL */
int jv_len(const jv *v);                      /* items of an array or members of an object; else 0 */
const jv *jv_at(const jv *v, int i);          /* array item or object member value; NULL out of range */
const char *jv_key(const jv *v, int i);       /* object member i's key; NULL otherwise */
const jv *jv_get(const jv *v, const char *key);   /* first member named key; NULL if none or not an object */
/* jv_path(v, "meta", "plugin", "name", NULL): jv_get down a chain of keys. */
const jv *jv_path(const jv *v, ...);
double jv_num(const jv *v, double otherwise);          /* a number's value */
const char *jv_str(const jv *v, const char *otherwise);   /* a string's text (decoded, NUL-terminated) */
int jv_is_true(const jv *v);                  /* 1 for true, 0 otherwise */
/* The name of a type for messages: "null", "a number", "an object", ... */
const char *jv_kind_name(jv_type t);

#endif
