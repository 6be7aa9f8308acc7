/*
 * slurm_int: what the Slurm readers share (slurm_common.c; private to
 * scenarios/slurm*.c): the document's version from its "meta", and field
 * readers that accept each version's shape and name the place of a bad
 * value ("squeue.json:41: jobs[3].job_state: expected ...").
 */
#ifndef CT_SLURM_INT_H
#define CT_SLURM_INT_H

#include <stddef.h>

#include "scenarios/jsonin.h"
#include "scenarios/live.h"

typedef struct slurm_doc {
    const jsonin *d;
    int parser;                      /* data-parser version: 38 (22.05's OpenAPI plugin) .. 43 */
    char release[32];                /* "22.05.8"; "" unknown */
    char *err;
    size_t errlen;
} slurm_doc;

/* One record of an array of the document: "jobs"[i]. */
typedef struct slurm_rec {
    slurm_doc *sd;
    const char *arr;
    int i;
    const jv *obj;
} slurm_rec;

/* What a number field holds. */
enum { SLURM_UNSET = 0, SLURM_SET = 1, SLURM_INFINITE = 2 };

/* Read meta's version (error when it names none this reader knows), and
 * the root's array `key` (key NULL: none) into *arr. */
int slurm_doc_open(slurm_doc *sd, const jsonin *d, const char *key, const jv **arr, char *err, size_t errlen);
/* The root's array `key` into *arr (error when absent or not an array). */
int slurm_doc_array(slurm_doc *sd, const char *key, const jv **arr);
/* "Slurm 22.05.8 (data parser v0.0.38)" into c->source when unset; -1 out of memory. */
int slurm_doc_source(const slurm_doc *sd, live_cluster *c);
/* err = "PATH:LINE: arr[i].key: " + fmt; returns -1. v: the value at fault (its line). */
int slurm_fail(const slurm_rec *r, const jv *v, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The field at a dotted path ("time.limit"); NULL when absent. */
const jv *slurm_field(const slurm_rec *r, const char *key);
/* A number: a JSON number, null/absent (unset) or {"set","infinite",
 * "number"}. Returns SLURM_UNSET (*x = 0), SLURM_SET, SLURM_INFINITE, or -1. */
int slurm_num(const slurm_rec *r, const char *key, double *x);
/* A string: "" when absent or null; -1 when another type. */
int slurm_str(const slurm_rec *r, const char *key, const char **z);
/* A state: a string (v0.0.38-39 jobs, v0.0.38 nodes) or, from v0.0.40
 * (nodes: v0.0.39), an array of strings, into words (upper-cased, each
 * ending in a space: " RUNNING COMPLETING "). -1 on a shape the version
 * does not have. */
int slurm_state_words(const slurm_rec *r, const char *key, int array_from, char *words, size_t len);
/* 1 when words holds the state word w. */
int slurm_has_word(const char *words, const char *w);

/* GPUs from a TRES field: a string (squeue) or sacct's list of
 * {"type","name","count"}; *model gets a gpu type when one is named. */
int slurm_tres_gpus(const slurm_rec *r, const char *key, int *gpus, char *model, size_t modellen);

/* A job's record from its state words: LIVE_PENDING/RUNNING/HELD, or -1
 * when it has ended (left out); -2 when a word is no Slurm job state. */
int slurm_job_state(const char *words);

/* Slurm's time limit (minutes) as seconds: 0 when unset or infinite. */
double slurm_minutes_s(int kind, double minutes);

/* Names (of nodes, of jobs) to their index in an array: open addressing
 * over indices; name(ctx, i) gives element i's name. */
typedef const char *(*slurm_name_fn)(const void *ctx, int i);
typedef struct slurm_index {
    int *slot;                       /* index + 1; 0 empty */
    size_t cap, n;
} slurm_index;
int slurm_index_find(const slurm_index *x, const char *z, slurm_name_fn name, const void *ctx);   /* -1: absent */
int slurm_index_add(slurm_index *x, int i, slurm_name_fn name, const void *ctx);                 /* -1: out of memory */
void slurm_index_free(slurm_index *x);

/* What slurm_sacct and slurm_sacct_text give slurm_history_add. */
typedef struct slurm_history_sink { live_cluster *c; slurm_index ids; } slurm_history_sink;

/* A slurm_ended_fn (ctx: a slurm_history_sink): add e to c->history, or,
 * when its id is there already (a requeued job's attempts), keep the later
 * attempt (by start time, then order) and count both. Jobs that never
 * started or without GPUs are left out. -1 with why: out of memory. */
int slurm_history_add(void *ctx, const slurm_ended *e, char *why, size_t whylen);

#endif
