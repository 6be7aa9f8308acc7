/*
 * store_jobs: the jobs[] array of a run's own JSON results as rows of the
 * jobs table, read straight from the text (store_int.h: store_jobs_insert).
 *
 * A run of a job trace has 100,000 to millions of jobs. Read through
 * SQLite's json_tree, each leaf of each job was a row of a virtual table
 * (its full key formatted and parsed back, its atom converted): 85% of
 * writing the 10K-GPU year's 100,000 jobs. Here one pass over the text
 * binds each leaf to its column as SQLite's JSON functions read it: a
 * number as an integer or the nearest double, a string unescaped, true and
 * false as 1 and 0, null as NULL; a leaf with no column goes into the row's extra object
 * under its path ("a.b", "a[2]"), copied as written. The text is our own
 * JSON writer's (reports/json.c: strings escaped, no comments); anything
 * else is refused (SQLITE_MISMATCH) rather than guessed at.
 */
#include "reports/store.h"
#include "reports/store_int.h"
#include "base/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* The scan of one document: the text, the statement, the row's extra. */
typedef struct jscan {
    const char *z;
    size_t i, n;
    sqlite3_stmt *ins;
    int base;                          /* ins's parameters of this row: base + 1, ... */
    const char *const *fields;
    int nf, hint;                      /* hint: the last field matched */
    sqlite3_int64 run, next;           /* next: the first row not yet read */
    size_t at[STORE_BATCH_ROWS + 1];   /* where the rows last read start (row % this) */
    char *extra, *tmp;                 /* extra object; unescaped strings */
    size_t extra_n, extra_cap, tmp_cap;
    int n_extra;
    int bad;                           /* SQLite code of the first failure */
} jscan;

static void ws(jscan *s) {
    while (s->i < s->n && (s->z[s->i] == ' ' || s->z[s->i] == '\n' || s->z[s->i] == '\r' || s->z[s->i] == '\t'))
        s->i++;
}

/* The end of the string literal opening at z[i] (past its closing quote). */
static size_t string_end(const jscan *s, size_t i, int *escaped) {
    for (i++; i < s->n && s->z[i] != '"'; i++)
        if (s->z[i] == '\\') {
            *escaped = 1;
            i++;
        }
    return i < s->n ? i + 1 : 0;
}

static int put(jscan *s, const char *p, size_t len) {
    if (GROW(s->extra, s->extra_cap, s->extra_n + len + 1)) return s->bad = SQLITE_NOMEM;
    memcpy(s->extra + s->extra_n, p, len);
    s->extra_n += len;
    return 0;
}

/* \uXXXX at p (4 hex digits): its value, or -1. */
static long hex4(const char *p) {
    long v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t utf8(char *o, long c) {
    if (c < 0x80) return o[0] = (char)c, 1;
    if (c < 0x800) return o[0] = (char)(0xC0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3F)), 2;
    if (c < 0x10000)
        return o[0] = (char)(0xE0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3F)), o[2] = (char)(0x80 | (c & 0x3F)), 3;
    o[0] = (char)(0xF0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 0x3F)), o[2] = (char)(0x80 | (c >> 6 & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* The text of the string literal z[a, b) (quotes included) unescaped into
 * s->tmp; its length, or -1. */
static long unescape(jscan *s, size_t a, size_t b) {
    if (GROW(s->tmp, s->tmp_cap, b - a + 1)) return s->bad = SQLITE_NOMEM, -1;
    size_t o = 0;
    for (size_t i = a + 1; i + 1 < b; i++) {
        char c = s->z[i];
        if (c != '\\') {
            s->tmp[o++] = c;
            continue;
        }
        c = s->z[++i];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *at = c ? strchr(from, c) : NULL;
        if (at) {
            s->tmp[o++] = to[at - from];
            continue;
        }
        long u = c == 'u' && i + 4 < b ? hex4(s->z + i + 1) : -1;
        if (u < 0) return s->bad = SQLITE_MISMATCH, -1;
        i += 4;
        if (u >= 0xD800 && u < 0xDC00 && i + 6 < b && s->z[i + 1] == '\\' && s->z[i + 2] == 'u') {
            long lo = hex4(s->z + i + 3);
            if (lo >= 0xDC00 && lo < 0xE000) {
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
        }
        o += utf8(s->tmp + o, u);     /* at most 4 bytes for the 6 or 12 read */
    }
    return (long)o;
}

/* The column of path, or -1. The search starts after the last match: the
 * writer emits a job's fields in nearly the order of the list. */
static int field_of(jscan *s, const char *path) {
    for (int j = 0; j < s->nf; j++) {
        int k = (s->hint + 1 + j) % s->nf;
        if (!strcmp(s->fields[k], path)) return s->hint = k;
    }
    return -1;
}

/* The number z[0, len) as SQLite's JSON functions read it: an integer
 * literal that fits as an integer, anything else (or an integer past
 * int64) as the nearest double, by strtod. (Bound as text, the column's
 * affinity would convert it with sqlite3AtoF, which in SQLite 3.40 is one
 * unit in the last place off for some inputs: 541.0223388.) */
static int bind_number(sqlite3_stmt *q, int col, const char *z, size_t len) {
    char buf[64], *end;
    if (len >= sizeof buf) return SQLITE_MISMATCH;
    memcpy(buf, z, len);
    buf[len] = 0;
    if (!strpbrk(buf, ".eE")) {
        errno = 0;
        long long v = strtoll(buf, &end, 10);
        if (*end == 0 && end > buf && errno == 0) return sqlite3_bind_int64(q, col, v);
    }
    double d = strtod(buf, &end);
    return *end == 0 && end > buf ? sqlite3_bind_double(q, col, d) : SQLITE_MISMATCH;
}

/* A leaf z[a, b) at path: bound to its column, or added to extra. */
static void leaf(jscan *s, const char *path, size_t a, size_t b, int escaped) {
    int k = field_of(s, path);
    if (k < 0) {                       /* "path":value, as written */
        if (!put(s, s->n_extra++ ? ",\"" : "{\"", 2) && !put(s, path, strlen(path)) && !put(s, "\":", 2))
            put(s, s->z + a, b - a);
        return;
    }
    sqlite3_stmt *q = s->ins;
    int rc, col = s->base + k + 3;
    char c = s->z[a];
    if (c == 'n') rc = sqlite3_bind_null(q, col);
    else if (c == 't' || c == 'f') rc = sqlite3_bind_int(q, col, c == 't');
    else if (c != '"') rc = bind_number(q, col, s->z + a, b - a);
    else if (!escaped) rc = sqlite3_bind_text(q, col, s->z + a + 1, (int)(b - a - 2), SQLITE_STATIC);
    else {
        long len = unescape(s, a, b);
        rc = len < 0 ? s->bad : sqlite3_bind_text(q, col, s->tmp, (int)len, SQLITE_TRANSIENT);
    }
    if (rc != SQLITE_OK && !s->bad) s->bad = rc;
}

static void value(jscan *s, char *path, size_t len, size_t cap);

/* The members of the object or the elements of the array opening at
 * s->i, each a value at path + ".key" or path + "[i]". */
static void container(jscan *s, char *path, size_t len, size_t cap) {
    char close = s->z[s->i] == '{' ? '}' : ']';
    s->i++;
    ws(s);
    for (long idx = 0; !s->bad && s->i < s->n && s->z[s->i] != close; idx++) {
        size_t add;
        if (close == '}') {
            int esc = 0;
            size_t k0 = s->i, k1 = s->z[k0] == '"' ? string_end(s, k0, &esc) : 0;
            if (!k1) {
                s->bad = SQLITE_MISMATCH;
                return;
            }
            size_t klen = k1 - k0 - 2;
            add = (len ? 1 : 0) + klen;
            if (len + add < cap) {         /* path "." key */
                if (len) path[len] = '.';
                memcpy(path + len + (len ? 1 : 0), s->z + k0 + 1, klen);
                path[len + add] = 0;
            }
            s->i = k1;
            ws(s);
            if (s->i >= s->n || s->z[s->i] != ':') {
                s->bad = SQLITE_MISMATCH;
                return;
            }
            s->i++;
        } else {
            add = (size_t)snprintf(path + len, cap - len, "[%ld]", idx);
        }
        if (len + add >= cap) {
            s->bad = SQLITE_MISMATCH;
            return;
        }
        ws(s);
        value(s, path, len + add, cap);
        path[len] = 0;
        ws(s);
        if (s->i < s->n && s->z[s->i] == ',') s->i++, ws(s);
    }
    if (s->i >= s->n) s->bad = SQLITE_MISMATCH;
    else s->i++;
}

static void value(jscan *s, char *path, size_t len, size_t cap) {
    if (s->i >= s->n) {
        s->bad = SQLITE_MISMATCH;
        return;
    }
    char c = s->z[s->i];
    if (c == '{' || c == '[') {
        container(s, path, len, cap);
        return;
    }
    size_t a = s->i, b = a;
    int escaped = 0;
    if (c == '"') b = string_end(s, a, &escaped);
    else
        while (b < s->n && !strchr(",}] \n\r\t", s->z[b])) b++;
    if (b <= a) {
        s->bad = SQLITE_MISMATCH;
        return;
    }
    s->i = b;
    leaf(s, path, a, b, escaped);
}

/* One element of jobs[] at s->i as row idx, bound to s->ins from s->base. */
static int job_row(jscan *s, sqlite3_int64 idx) {
    char path[256] = "";
    s->extra_n = 0;
    s->n_extra = 0;
    int rc = sqlite3_bind_int64(s->ins, s->base + 1, s->run);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s->ins, s->base + 2, idx);
    if (rc == SQLITE_OK && s->z[s->i] != '{') rc = SQLITE_MISMATCH;
    if (rc == SQLITE_OK) container(s, path, 0, sizeof path);
    if (rc == SQLITE_OK && s->bad) rc = s->bad;
    if (rc == SQLITE_OK && s->n_extra && !put(s, "}", 1))
        rc = sqlite3_bind_text(s->ins, s->base + s->nf + 3, s->extra, (int)s->extra_n, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK && s->bad) rc = s->bad;
    return rc;
}

/* Row i of the jobs (a store_row_fn): the next element of the array, or
 * one of the last read again from where it starts. */
static int job_source(void *ctx, sqlite3_stmt *q, int base, int64_t i) {
    jscan *s = ctx;
    size_t slots = sizeof s->at / sizeof s->at[0];
    if (i < s->next) s->i = s->at[i % slots];
    else {
        ws(s);
        if (s->i < s->n && s->z[s->i] == ',') s->i++, ws(s);
        if (s->i >= s->n || s->z[s->i] == ']') return SQLITE_DONE;
        s->at[i % slots] = s->i;
        s->next = i + 1;
    }
    s->ins = q;
    s->base = base;
    return job_row(s, i);
}

int store_jobs_insert(store *st, sqlite3_stmt *many, sqlite3_stmt *one, const char *const *fields, const char *z,
                      size_t a, size_t b) {
    jscan s = { .z = z, .i = a + 1, .n = b, .fields = fields, .run = st->run };
    while (fields[s.nf]) s.nf++;
    int rc = store_batch_insert(many, one, job_source, &s, NULL);
    free(s.extra);
    free(s.tmp);
    return rc;
}
