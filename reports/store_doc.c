/*
 * store_doc: a recorded run's JSON results given back whole (store.h:
 * store_run_json).
 *
 * store_run_finish keeps runs.results_json without its jobs ("jobs":[])
 * when the jobs table holds every job in a form that gives back the same
 * text (reports/store_jobs.c checks each as it reads it): the 10K-GPU
 * year's document is 33 MB, nearly all of it its 100,000 jobs, which the
 * file held twice. Here each job's object is written again from its row
 * by the JSON writer that wrote it (reports/json.c, the same depth, so
 * the same indentation), its keys in the order of results_job_keys
 * (reports/results.c): a column where the list says the key is there (a
 * training job's keys only for a training job), a key without a column
 * from the row's extra object, where it was kept as written. A number
 * comes back as SQLite stores it: an integer by json_int, a real by
 * json_num. json_num writes a whole number below 1e15 by %.0f and
 * anything else by %.10g, and %.10g of a value read from %.10g text is
 * that text (10 digits are well inside a double's 15); a value %.10g
 * wrote as a whole number (2.874410056e+10) would come back by %.0f, and
 * store_jobs.c keeps the document whole when a job holds one. tests/test_store.c compares the
 * rebuilt document with the original byte for byte.
 */
#include "reports/store.h"
#include "reports/json.h"
#include "reports/results.h"
#include "reports/store_int.h"
#include "base/errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* The next "path":value of a row's extra object (our own text: keys
 * unescaped paths, values atoms as written), from *at; 0 at its end. */
typedef struct extra_item {
    const char *key, *val;
    size_t klen, vlen;
} extra_item;

static int extra_next(const char *z, size_t *at, extra_item *it) {
    size_t i = *at;
    if (!z || !z[i] || z[i] == '}' || !z[i + 1]) return 0;
    i++;                                          /* '{' or ',' */
    if (z[i] != '"') return 0;
    it->key = z + i + 1;
    const char *q = strchr(it->key, '"');
    if (!q || q[1] != ':') return 0;
    it->klen = (size_t)(q - it->key);
    i = (size_t)(q - z) + 2;
    it->val = z + i;
    if (z[i] == '"')
        for (i++; z[i] && z[i] != '"'; i++)
            if (z[i] == '\\' && z[i + 1]) i++;
    for (; z[i] && z[i] != ',' && z[i] != '}'; i++) {}
    it->vlen = (size_t)(z + i - it->val);
    *at = i;
    return 1;
}

/* Column c of the row as a value of j under key. */
static void column_value(json *j, const char *key, sqlite3_stmt *q, int c) {
    switch (sqlite3_column_type(q, c)) {
    case SQLITE_INTEGER: json_int(j, key, sqlite3_column_int64(q, c)); break;
    case SQLITE_FLOAT: json_num(j, key, sqlite3_column_double(q, c)); break;
    case SQLITE_TEXT: json_str(j, key, (const char *)sqlite3_column_text(q, c)); break;
    default: json_null(j, key);
    }
}

/* The object named by path's part before its '.' opened in j (open: the
 * one open now, "" none); the key in it returned. */
static const char *enter(json *j, const char *path, char *open, size_t len) {
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : 0;
    if (strlen(open) != n || strncmp(open, path, n)) {
        if (*open) json_end(j);
        snprintf(open, len, "%.*s", (int)n, path);
        if (n) json_object(j, open);
    }
    return dot ? dot + 1 : path;
}

/* The job of the current row (columns col_of[key], the extra object in
 * column extra_col) as an element of j's open array. */
static void job_object(json *j, sqlite3_stmt *q, const int *col_of, int kind_col, int extra_col) {
    const char *kind = (const char *)sqlite3_column_text(q, kind_col);
    int training = kind && !strcmp(kind, "training");
    const char *extra = (const char *)sqlite3_column_text(q, extra_col);
    size_t at = 0;
    extra_item it;
    int have = extra_next(extra, &at, &it);
    char open[64] = "";
    json_object(j, NULL);
    for (int t = 0; results_job_keys[t].path; t++) {
        const results_key *k = &results_job_keys[t];
        int c = col_of[t];
        if (c >= 0 && (k->when == 'a' || (k->when == 't' && training)))
            column_value(j, enter(j, k->path, open, sizeof open), q, c);
        else if (c < 0 && have && it.klen == strlen(k->path) && !strncmp(it.key, k->path, it.klen)) {
            json_raw(j, enter(j, k->path, open, sizeof open), it.val, it.vlen);
            have = extra_next(extra, &at, &it);
        }
    }
    if (*open) json_end(j);
    json_end(j);
}

/* SELECT of the run's jobs in order: a column per key of results_job_keys
 * that has one (col_of[key], -1 none), then kind and extra. */
static int jobs_query(store *st, sqlite3_stmt **q, int *col_of, int *kind_col, int *extra_col) {
    const char *const *paths = store_job_paths();
    char sql[4096];
    size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT ");
    int c = 0;
    for (int t = 0; results_job_keys[t].path; t++) {
        col_of[t] = -1;
        for (int f = 0; paths[f] && n < sizeof sql - 128; f++) {
            if (strcmp(paths[f], results_job_keys[t].path)) continue;
            n += (size_t)snprintf(sql + n, sizeof sql - n, "%s", c ? ", " : "");
            for (const char *p = paths[f]; *p; p++) sql[n++] = *p == '.' ? '_' : *p;
            col_of[t] = c++;
        }
    }
    snprintf(sql + n, sizeof sql - n, "%skind, extra FROM jobs WHERE run_id = ?1 ORDER BY idx", c ? ", " : "");
    *kind_col = c;
    *extra_col = c + 1;
    return sqlite3_prepare_v2(st->db, sql, -1, q, NULL);
}

/* The jobs of run as the text of a jobs[] array at the document's depth
 * ("[" ... "]"), into *out (malloc'd). An SQLite code. */
static int jobs_text(store *st, int64_t run, char **out) {
    int col_of[128], kind_col, extra_col, nk = 0;
    while (results_job_keys[nk].path) nk++;
    if (nk > 128) return SQLITE_INTERNAL;
    sqlite3_stmt *q = NULL;
    int rc = jobs_query(st, &q, col_of, &kind_col, &extra_col);
    json *j = rc == SQLITE_OK ? json_new() : NULL;
    if (rc == SQLITE_OK && !j) rc = SQLITE_NOMEM;
    if (j) {
        json_object(j, NULL);
        json_array(j, "jobs");
        sqlite3_bind_int64(q, 1, run);
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) job_object(j, q, col_of, kind_col, extra_col);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        json_end(j);
        json_end(j);
    }
    sqlite3_finalize(q);
    const char *z = rc == SQLITE_OK ? json_text(j, NULL) : NULL;
    const char *a = z ? strchr(z, '[') : NULL, *b = z ? strrchr(z, ']') : NULL;
    if (rc == SQLITE_OK && !(a && b && (*out = strndup(a, (size_t)(b - a) + 1)))) rc = SQLITE_NOMEM;
    json_free(j);
    return rc;
}

/* doc with the text of the jobs of run in place of its empty jobs[] at
 * doc[a] ("[]"), into *out. An SQLite code. */
static int splice_jobs(store *st, int64_t run, const char *doc, size_t a, char **out) {
    char *jobs = NULL;
    int rc = jobs_text(st, run, &jobs);
    if (rc != SQLITE_OK) return rc;
    size_t n = strlen(doc), k = strlen(jobs);
    if ((*out = malloc(n - 2 + k + 1))) {
        memcpy(*out, doc, a);
        memcpy(*out + a, jobs, k);
        memcpy(*out + a + k, doc + a + 2, n - a - 2 + 1);
    } else rc = SQLITE_NOMEM;
    free(jobs);
    return rc;
}

int store_run_json(store *st, int64_t run, char **out, char *err, size_t errlen) {
    *out = NULL;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(st->db, "SELECT results_json, (SELECT count(*) FROM jobs WHERE run_id = ?1) "
                                        "FROM runs WHERE id = ?1", -1, &q, NULL);
    if (rc == SQLITE_OK) sqlite3_bind_int64(q, 1, run);
    if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *doc = (const char *)sqlite3_column_text(q, 0);
        size_t a = 0, n = doc ? strlen(doc) : 0;
        int empty = doc && store_find_array(doc, n, "jobs", &a) == 0 && a + 1 < n && doc[a + 1] == ']';
        rc = SQLITE_OK;
        if (empty && sqlite3_column_int64(q, 1) > 0) rc = splice_jobs(st, run, doc, a, out);
        else if (doc && !(*out = strdup(doc))) rc = SQLITE_NOMEM;
    } else if (rc == SQLITE_DONE) {
        errmsg_set(err, errlen, "%s: no run %lld", st->path, (long long)run);
        sqlite3_finalize(q);
        return STORE_BAD_INPUT;
    }
    if (rc != SQLITE_OK) errmsg_set(err, errlen, "%s: cannot read run %lld: %s", st->path, (long long)run,
                                    rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(st->db));
    sqlite3_finalize(q);
    return rc == SQLITE_OK ? STORE_OK : store_sql_status(rc);
}
