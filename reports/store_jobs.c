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
#include "reports/json.h"
#include "reports/results.h"
#include "reports/store_int.h"
#include "base/decimal.h"
#include "base/grow.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* A value of a row read, to be bound by the writer: NULL (type 0), an
 * integer, a double, or text in the document (z) or in the block's arena
 * (off: unescaped strings, extra objects). */
typedef struct cell {
    char type;                         /* 0, 'i', 'd', 't' (z), 'a' (off) */
    int n;                             /* text length */
    union {
        sqlite3_int64 i;
        double d;
        const char *z;
        size_t off;
    } v;
} cell;

/* Rows read and not yet written: JOB_BLOCK rows of ncols cells (column c
 * of row r is cells[r * ncols + c], parameter c + 1 of the INSERT). */
typedef struct job_block {
    cell *cells;
    unsigned char *narrow;             /* per row: fills only narrow_cols */
    int rows, ncols;
    char *arena;
    size_t arena_n, arena_cap;
    sqlite3_stmt *many, *one;          /* INSERT of every column */
    sqlite3_stmt *nmany, *none;        /* INSERT of narrow_cols (NULL: none) */
    const int *narrow_col;             /* parameter p of nmany/none -> cell column */
    int n_narrow;
} job_block;

/* The fields every job fills; a batch job (99% of a job trace's rows) fills
 * no other. A row that fills these alone is inserted through an INSERT of
 * these columns only (the rest are NULL by default): the same row, with
 * 14 parameters bound and copied instead of 59. Measured (SQLite 3.40,
 * 100,000 such rows, 32 a statement, gcc -O2): 1.58 us a row through the
 * INSERT of every column, 1.21 through this one. */
static const char *const narrow_fields[] = { "name", "kind", "gpus", "queue", "state", "preemptions",
                                             "submit_s", "start_s", "end_s", "queue_wait_s", "gpu_hours",
                                             "cost_usd", NULL };
#define N_NARROW (2 + (int)(sizeof narrow_fields / sizeof *narrow_fields) - 1)

/* Rows per block handed to the writer: the reader fills one block while
 * the writer inserts the other. 16 statements of STORE_BATCH_ROWS rows;
 * ~0.9 MB of cells per block for the 57 columns. */
#define JOB_BLOCK (16 * STORE_BATCH_ROWS)

/* The scan of one document: the text, the row being read, its extra. */
typedef struct jscan {
    const char *z;
    size_t i, n;
    job_block *blk;
    cell *row;                         /* the row's cells in blk */
    const char *const *fields;
    int nf, hint;                      /* hint: the last field matched */
    int *next_of;                      /* column -> the column matched after it last time, -1 none */
    char *extra, *tmp;                 /* extra object; unescaped strings */
    size_t extra_n, extra_cap, tmp_cap;
    int n_extra;
    int bad;                           /* SQLite code of the first failure */
    /* whether each job can be rebuilt from its row (store_doc.c) */
    int *key_of;                       /* column -> results_job_keys index, -1 none */
    int cols_a, cols_t;                /* columns of keys there always, for training */
    int kind_col;                      /* the cell of "kind", -1 none */
    int at, seen_a, seen_t;            /* the job's last key; its columns seen */
    int odd;                           /* sticky: a job that cannot be rebuilt */
} jscan;

/* ---- can a job be rebuilt from its row? ------------------------------------
 * A run's document is kept in runs.results_json without its jobs when the
 * jobs table holds every job in a form store_doc.c turns back into the
 * same text: each job's keys in the order of results_job_keys, each there
 * when the list says, strings where it says strings, integers where it
 * says json_int, numbers that come back as json_num wrote them (an
 * integer literal below 1e15, or a decimal that is not a whole number
 * below 2^63: %.10g of 28744100555.6 is 2.874410056e+10, which the REAL
 * column gives back as the whole number 28744100560, which json_num
 * writes by %.0f; a whole number 20468203520 is written so too, and the
 * table cannot tell the two apart), no empty object, no array, no true
 * or false. A job that is not so (another
 * writer's text, a key added to results.c but not to the list) sets odd,
 * and the run's document is kept whole, as before. */

static int key_index(const char *path) {
    for (int t = 0; results_job_keys[t].path; t++)
        if (!strcmp(results_job_keys[t].path, path)) return t;
    return -1;
}

/* key_of and the column counts for s->fields. 0, or -1 out of memory. */
static int keys_setup(jscan *s) {
    free(s->key_of);
    free(s->next_of);
    s->next_of = malloc((size_t)(s->nf + 1) * sizeof *s->next_of);
    if (!(s->key_of = malloc((size_t)(s->nf + 1) * sizeof *s->key_of)) || !s->next_of) return -1;
    for (int k = 0; k <= s->nf; k++) s->next_of[k] = -1;
    s->cols_a = s->cols_t = 0;
    s->kind_col = -1;
    for (int k = 0; k < s->nf; k++) {
        if (!strcmp(s->fields[k], "kind")) s->kind_col = k + 2;
        int t = s->key_of[k] = key_index(s->fields[k]);
        if (t >= 0 && results_job_keys[t].when == 'a') s->cols_a++;
        if (t >= 0 && results_job_keys[t].when == 't') s->cols_t++;
    }
    return 0;
}

/* A leaf at path (column k, or -1) whose text starts with c, read into
 * cl (NULL for a leaf kept in extra). */
static void key_check(jscan *s, const char *path, int k, char c, const cell *cl) {
    int t = k >= 0 ? s->key_of[k] : key_index(path);
    if (t <= s->at || (k >= 0 && results_job_keys[t].when == 'o')) {
        s->odd = 1;
        return;
    }
    s->at = t;
    if (k >= 0) s->seen_a += results_job_keys[t].when == 'a', s->seen_t += results_job_keys[t].when == 't';
    if (c == 'n') return;              /* null: either type */
    char type = results_job_keys[t].type;
    if (c == 't' || c == 'f' || (c == '"') != (type == 's')) {
        s->odd = 1;
        return;
    }
    if (!cl || c == '"') return;
    /* what store_doc.c writes for the value SQLite gives back: json_int's
     * text for an integer key, json_num's for a number */
    if (cl->type == 'd') s->odd |= type == 'i' || (cl->v.d == floor(cl->v.d) && fabs(cl->v.d) < 9.2e18);
    else s->odd |= type == 'n' && fabs((double)cl->v.i) >= 1e15;
}

/* At the end of a job (kind its kind cell): every key the list says is
 * there was there. */
static void keys_done(jscan *s, const cell *row, const char *arena) {
    if (s->kind_col < 0) {
        s->odd = 1;
        return;
    }
    const cell *kind = &row[s->kind_col];
    const char *z = kind->type == 't' ? kind->v.z : kind->type == 'a' ? arena + kind->v.off : NULL;
    int training = z && kind->n == 8 && !memcmp(z, "training", 8);
    if (s->seen_a != s->cols_a || s->seen_t != (training ? s->cols_t : 0)) s->odd = 1;
}

static void ws(jscan *s) {
    while (s->i < s->n && (s->z[s->i] == ' ' || s->z[s->i] == '\n' || s->z[s->i] == '\r' || s->z[s->i] == '\t'))
        s->i++;
}

/* The end of the string literal opening at z[i] (past its closing quote).
 * Most have no backslash: the first quote closes them (memchr, a third of
 * the scan's time when looked for a byte at a time). */
static size_t string_end(const jscan *s, size_t i, int *escaped) {
    const char *p = s->z + i + 1, *q = i + 1 < s->n ? memchr(p, '"', s->n - i - 1) : NULL;
    if (q && !memchr(p, '\\', (size_t)(q - p))) return (size_t)(q - s->z) + 1;
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

/* The column of path, or -1. First the column that followed the last
 * match the time before (a batch job's 12 keys come in the same order
 * every time, but gpu_hours, a column added later, is 43 places after
 * queue_wait_s in the list: a scan from the last match took ~55 strcmp a
 * batch job, now 12), then a scan from after the last match: the writer
 * emits a job's fields in nearly the order of the list. */
static int field_of(jscan *s, const char *path) {
    int was = s->hint, k = s->next_of[was];
    if (k >= 0 && !strcmp(s->fields[k], path)) return s->hint = k;
    for (int j = 0; j < s->nf; j++) {
        k = (was + 1 + j) % s->nf;
        if (!strcmp(s->fields[k], path)) return s->next_of[was] = k, s->hint = k;
    }
    return -1;
}

/* The number z[0, len) as SQLite's JSON functions read it, into c: an integer
 * literal that fits as an integer, anything else (or an integer past
 * int64) as the nearest double, by strtod. (Bound as text, the column's
 * affinity would convert it with sqlite3AtoF, which in SQLite 3.40 is one
 * unit in the last place off for some inputs: 541.0223388.) Most of a
 * job's numbers take decimal_read's exact fast path, the same values. */
static int number(cell *c, const char *z, size_t len) {
    char buf[64], *end;
    int64_t i;
    double d;
    int fast = decimal_read(z, len, &i, &d);
    if (fast == 'i') return c->type = 'i', c->v.i = i, SQLITE_OK;
    if (fast == 'd') return c->type = 'd', c->v.d = d, SQLITE_OK;
    if (len >= sizeof buf) return SQLITE_MISMATCH;
    memcpy(buf, z, len);
    buf[len] = 0;
    if (!strpbrk(buf, ".eE")) {
        errno = 0;
        long long v = strtoll(buf, &end, 10);
        if (*end == 0 && end > buf && errno == 0) return c->type = 'i', c->v.i = v, SQLITE_OK;
    }
    d = strtod(buf, &end);
    if (*end != 0 || end == buf) return SQLITE_MISMATCH;
    return c->type = 'd', c->v.d = d, SQLITE_OK;
}

/* Text z[0, len) copied into the block's arena as cell c. */
static int owned_text(job_block *b, cell *c, const char *z, size_t len) {
    if (GROW(b->arena, b->arena_cap, b->arena_n + len + 1)) return SQLITE_NOMEM;
    memcpy(b->arena + b->arena_n, z, len);
    c->type = 'a';
    c->v.off = b->arena_n;
    c->n = (int)len;
    b->arena_n += len;
    return SQLITE_OK;
}

/* A leaf z[a, b) at path: its column's cell, or added to extra. */
static void leaf(jscan *s, const char *path, size_t a, size_t b, int escaped) {
    int k = field_of(s, path);
    if (k < 0) {                       /* "path":value, as written */
        key_check(s, path, -1, s->z[a], NULL);
        if (!put(s, s->n_extra++ ? ",\"" : "{\"", 2) && !put(s, path, strlen(path)) && !put(s, "\":", 2))
            put(s, s->z + a, b - a);
        return;
    }
    cell *cl = &s->row[k + 2];
    int rc = SQLITE_OK;
    char c = s->z[a];
    if (c == 'n') cl->type = 0;
    else if (c == 't' || c == 'f') cl->type = 'i', cl->v.i = c == 't';
    else if (c != '"') rc = number(cl, s->z + a, b - a);
    else if (!escaped) cl->type = 't', cl->v.z = s->z + a + 1, cl->n = (int)(b - a - 2);
    else {
        long len = unescape(s, a, b);
        rc = len < 0 ? s->bad : owned_text(s->blk, cl, s->tmp, (size_t)len);
    }
    if (rc != SQLITE_OK && !s->bad) s->bad = rc;
    key_check(s, path, k, c, cl);
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
    if (s->z[s->i - 1] != close || s->z[s->i - 2] == (close == '}' ? '{' : '[') || close == ']') s->odd = 1;
}

/* Does c end a number, true, false or null? */
static int value_end(char c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
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
        while (b < s->n && !value_end(s->z[b])) b++;
    if (b <= a) {
        s->bad = SQLITE_MISMATCH;
        return;
    }
    s->i = b;
    leaf(s, path, a, b, escaped);
}

/* One element of jobs[] at s->i as the block's next row, index idx. */
static int job_row(jscan *s, sqlite3_int64 run, sqlite3_int64 idx) {
    char path[256] = "";
    job_block *b = s->blk;
    s->row = b->cells + (size_t)b->rows * (size_t)b->ncols;
    memset(s->row, 0, (size_t)b->ncols * sizeof *s->row);
    s->row[0] = (cell){ .type = 'i', .v.i = run };
    s->row[1] = (cell){ .type = 'i', .v.i = idx };
    s->extra_n = 0;
    s->n_extra = 0;
    s->at = -1;
    s->seen_a = s->seen_t = 0;
    if (s->z[s->i] != '{') return SQLITE_MISMATCH;
    container(s, path, 0, sizeof path);
    if (!s->bad) keys_done(s, s->row, b->arena);
    if (!s->bad && s->n_extra && !put(s, "}", 1)) s->bad = owned_text(b, &s->row[s->nf + 2], s->extra, s->extra_n);
    if (s->bad) return s->bad;
    int filled = 0;                    /* cells filled beyond the narrow columns */
    for (int c = 0; c < b->ncols; c++) filled += s->row[c].type != 0;
    for (int p = 0; p < b->n_narrow; p++) filled -= s->row[b->narrow_col[p]].type != 0;
    b->narrow[b->rows++] = b->n_narrow > 0 && filled == 0;
    return SQLITE_OK;
}

/* Rows [from, from + n) of a block, all narrow or all not. */
typedef struct block_run {
    const job_block *b;
    int from, n, narrow;
} block_run;

/* Row i of a run (a store_row_fn): every cell, or the narrow columns'. */
static int run_row(void *ctx, sqlite3_stmt *q, int base, int64_t i) {
    const block_run *r = ctx;
    const job_block *b = r->b;
    if (i >= r->n) return SQLITE_DONE;
    const cell *row = b->cells + (size_t)(r->from + i) * (size_t)b->ncols;
    int np = r->narrow ? b->n_narrow : b->ncols, rc = SQLITE_OK;
    for (int p = 0; p < np && rc == SQLITE_OK; p++) {
        const cell *x = &row[r->narrow ? b->narrow_col[p] : p];
        if (x->type == 'i') rc = sqlite3_bind_int64(q, base + p + 1, x->v.i);
        else if (x->type == 'd') rc = sqlite3_bind_double(q, base + p + 1, x->v.d);
        else if (x->type == 't') rc = sqlite3_bind_text(q, base + p + 1, x->v.z, x->n, SQLITE_STATIC);
        else if (x->type == 'a') rc = sqlite3_bind_text(q, base + p + 1, b->arena + x->v.off, x->n, SQLITE_STATIC);
    }
    return rc;
}

/* The writer's job: a block's rows in order, each run of narrow rows
 * through the narrow INSERT, each run of others through the full one. */
static int write_block(void *p) {
    job_block *b = p;
    int rc = SQLITE_OK;
    for (int i = 0, j; i < b->rows && rc == SQLITE_OK; i = j) {
        for (j = i + 1; j < b->rows && b->narrow[j] == b->narrow[i];) j++;
        block_run r = { b, i, j - i, b->narrow[i] };
        rc = store_batch_insert(r.narrow ? b->nmany : b->many, r.narrow ? b->none : b->one, run_row, &r, NULL);
    }
    return rc;
}

/* The narrow INSERTs (one row, many rows) and the cell column of each of
 * their parameters; 0 without them (a field list lacking one of
 * narrow_fields: every row then goes through the full INSERT). */
static int narrow_statements(store *st, const char *const *fields, job_block *b, int *col) {
    char head[512], one[1024];
    int n = snprintf(head, sizeof head, "INSERT INTO jobs(run_id, idx"), k = 2;
    col[0] = 0, col[1] = 1;
    for (; narrow_fields[k - 2]; k++) {
        int f = 0;
        while (fields[f] && strcmp(fields[f], narrow_fields[k - 2])) f++;
        if (!fields[f]) return SQLITE_OK;
        col[k] = f + 2;
        n += snprintf(head + n, sizeof head - (size_t)n, ", %s", narrow_fields[k - 2]);
    }
    snprintf(head + n, sizeof head - (size_t)n, ")");
    n = snprintf(one, sizeof one, "%s VALUES (?", head);
    for (int p = 1; p < k; p++) n += snprintf(one + n, sizeof one - (size_t)n, ", ?");
    snprintf(one + n, sizeof one - (size_t)n, ")");
    int rc = store_kept(st, KEPT_JOBS_NARROW, one, &b->none);
    if (rc == SQLITE_OK) rc = store_kept_batch(st, KEPT_JOBS_NARROW_MANY, head, k, &b->nmany);
    if (rc == SQLITE_OK) b->n_narrow = k;
    return rc;
}

/* Read up to JOB_BLOCK rows into b (emptied first), from row idx on;
 * *end set at the array's end. */
static int read_block(jscan *s, job_block *b, sqlite3_int64 run, sqlite3_int64 idx, int *end) {
    b->rows = 0;
    b->arena_n = 0;
    s->blk = b;
    int rc = SQLITE_OK;
    while (rc == SQLITE_OK && b->rows < JOB_BLOCK) {
        ws(s);
        if (s->i < s->n && s->z[s->i] == ',') s->i++, ws(s);
        if (s->i >= s->n || s->z[s->i] == ']') {
            *end = 1;
            break;
        }
        rc = job_row(s, run, idx + b->rows);
    }
    return rc;
}

static void block_free(job_block *b) {
    free(b->cells);
    free(b->narrow);
    free(b->arena);
}

static void scan_free(jscan *s) {
    free(s->key_of);
    free(s->next_of);
    free(s->extra);
    free(s->tmp);
}

int store_jobs_insert(store *st, sqlite3_stmt *many, sqlite3_stmt *one, const char *const *fields, const char *z,
                      size_t a, size_t n, size_t *b) {
    jscan s = { .z = z, .i = a + 1, .n = n, .fields = fields };
    while (fields[s.nf]) s.nf++;
    int col[N_NARROW];
    job_block nb = { .ncols = s.nf + 3, .many = many, .one = one, .narrow_col = col };
    int rc = keys_setup(&s) < 0 ? SQLITE_NOMEM : narrow_statements(st, fields, &nb, col), end = 0;
    job_block blk[2] = { nb, nb };
    for (int k = 0; k < 2; k++)
        if (!(blk[k].cells = malloc(JOB_BLOCK * (size_t)blk[k].ncols * sizeof(cell))) ||
            !(blk[k].narrow = malloc(JOB_BLOCK)))
            rc = SQLITE_NOMEM;
    sqlite3_int64 idx = 0;
    for (int fill = 0; rc == SQLITE_OK && !end; fill = !fill) {
        rc = read_block(&s, &blk[fill], st->run, idx, &end);
        idx += blk[fill].rows;
        if (rc == SQLITE_OK && blk[fill].rows) rc = store_writer_give(st->writer, 1, write_block, &blk[fill]);
    }
    int last = store_writer_wait(st->writer);
    if (rc == SQLITE_OK) rc = last;
    if (rc == SQLITE_OK && s.i < n) *b = s.i + 1;
    else if (rc == SQLITE_OK) rc = SQLITE_MISMATCH;
    st->jobs_odd |= s.odd;
    for (int k = 0; k < 2; k++) block_free(&blk[k]);
    scan_free(&s);
    return rc;
}

/* ---- jobs read while the JSON is written (store_run_watch) ----------------
 * The JSON writer tells the store of each job's object as it closes
 * (json_watch); its text is copied into a block of JOB_BLOCK jobs, and a
 * full block is queued for the writer thread, which parses it into cells
 * and inserts the rows, in the run's last transaction, while the rest of
 * the document is written: the jobs' INSERTs no longer wait for the whole
 * document. The simulating thread pays one copy of the text. */

/* Text blocks the watch cycles through (one filled, the others queued). */
#define JOB_TEXTS 8

/* The text of up to JOB_BLOCK consecutive jobs, "{...},{...},". */
typedef struct job_text {
    job_feed *feed;
    char *z;
    size_t n, cap;
    int rows;
    sqlite3_int64 idx0;                /* jobs[] index of the first */
} job_text;

struct job_feed {
    store *st;
    json *j;
    job_text t[JOB_TEXTS];
    int fill;
    sqlite3_int64 jobs;                /* jobs watched */
    size_t first, last_end;            /* the first's start, the last's end, in the document */
    int broken;                        /* a job not right after the one before */
    /* the writer's side, ready after its first block */
    int ready;
    jscan s;
    job_block blk;
    int col[N_NARROW];
};

/* Prepared on the writer: the statements and the cells of a block. */
static int feed_prepare(job_feed *f) {
    sqlite3_stmt *many = NULL, *one = NULL;
    const char *const *fields;
    int rc = store_jobs_statements(f->st, &many, &one, &fields);
    if (rc != SQLITE_OK) return rc;
    f->s.fields = fields;
    for (f->s.nf = 0; fields[f->s.nf];) f->s.nf++;
    f->blk = (job_block){ .ncols = f->s.nf + 3, .many = many, .one = one, .narrow_col = f->col };
    rc = keys_setup(&f->s) < 0 ? SQLITE_NOMEM : narrow_statements(f->st, fields, &f->blk, f->col);
    if (rc == SQLITE_OK && (!(f->blk.cells = malloc(JOB_BLOCK * (size_t)f->blk.ncols * sizeof(cell))) ||
                            !(f->blk.narrow = malloc(JOB_BLOCK))))
        rc = SQLITE_NOMEM;
    f->ready = rc == SQLITE_OK;
    return rc;
}

/* The writer's job: a block's jobs parsed and inserted. */
static int feed_block(void *p) {
    job_text *t = p;
    job_feed *f = t->feed;
    int rc = store_final_begin(f->st), end = 0;
    if (rc == SQLITE_OK && !f->ready) rc = feed_prepare(f);
    f->s.z = t->z;
    f->s.i = 0;
    f->s.n = t->n;
    if (rc == SQLITE_OK) rc = read_block(&f->s, &f->blk, f->st->run, t->idx0, &end);
    if (rc == SQLITE_OK && f->blk.rows != t->rows) rc = SQLITE_MISMATCH;
    f->st->jobs_odd |= f->s.odd;       /* read by finish after its wait */
    if (rc == SQLITE_OK) rc = write_block(&f->blk);
    if (rc != SQLITE_OK) {
        char why[256];
        snprintf(f->st->writer_why, sizeof f->st->writer_why, "%s: cannot write the jobs: %s", f->st->path,
                 rc == SQLITE_MISMATCH ? "the results are not our JSON" : store_db_why(f->st->db, rc, why, sizeof why));
    }
    return rc;
}

/* The block being filled, queued for the writer; the next one filled. */
static void feed_give(job_feed *f) {
    job_text *t = &f->t[f->fill];
    if (!t->rows) return;
    t->idx0 = f->jobs - t->rows;
    if (store_writer_give(f->st->writer, JOB_TEXTS - 1, feed_block, t) != SQLITE_OK) {
        f->broken = 1;                 /* the writer failed: finish says why */
        f->st->failed = 1;
        snprintf(f->st->why, sizeof f->st->why, "%s", f->st->writer_why);
    }
    f->fill = (f->fill + 1) % JOB_TEXTS;
    f->t[f->fill].n = 0;
    f->t[f->fill].rows = 0;
}

static int blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* A value closed in a member of the document (a json_watch_fn). */
static void on_value(void *ctx, const char *member, const char *text, size_t from, size_t to) {
    job_feed *f = ctx;
    if (f->broken || f->st->failed || f->st->finished || strcmp(member, "jobs") != 0) return;
    if (f->jobs == 0) f->first = from;
    else {                             /* only ", " between it and the one before */
        size_t i = f->last_end;
        while (i < from && blank(text[i])) i++;
        if (i < from && text[i] == ',') i++;
        while (i < from && blank(text[i])) i++;
        if (i != from) f->broken = 1;
    }
    job_text *t = &f->t[f->fill];
    if (!f->broken && GROW(t->z, t->cap, t->n + (to - from) + 2)) {
        f->st->failed = 1;
        snprintf(f->st->why, sizeof f->st->why, "%s: out of memory", f->st->path);
    }
    if (f->broken || f->st->failed) {
        f->broken = 1;
        return;
    }
    memcpy(t->z + t->n, text + from, to - from);
    t->n += to - from;
    t->z[t->n++] = ',';
    t->z[t->n] = 0;
    t->rows++;
    f->jobs++;
    f->last_end = to;
    if (t->rows == JOB_BLOCK) feed_give(f);
}

void store_run_watch(store *st, json *j) {
    if (!st || !j || !st->run || st->finished || st->failed || st->feed) return;
    job_feed *f = calloc(1, sizeof *f);
    if (!f) return;                    /* no watch: finish reads the jobs from the text */
    f->st = st;
    f->j = j;
    for (int k = 0; k < JOB_TEXTS; k++) f->t[k].feed = f;
    st->feed = f;
    json_watch(j, on_value, f);
}

void store_jobs_feed_end(store *st) {
    job_feed *f = st->feed;
    if (!f) return;
    json_watch(f->j, NULL, NULL);
    f->j = NULL;
    if (!f->broken && !st->failed) feed_give(f);
}

int store_jobs_watched(store *st, const char *z, size_t a, size_t n, size_t *b) {
    job_feed *f = st->feed;
    if (!f || !f->jobs) return 0;
    size_t i = a + 1;
    while (i < n && blank(z[i])) i++;
    if (f->broken || i != f->first || f->last_end > n) return -1;
    for (i = f->last_end; i < n && blank(z[i]);) i++;
    if (i >= n || z[i] != ']') return -1;
    *b = i + 1;
    return 1;
}

void store_jobs_feed_free(store *st) {
    job_feed *f = st->feed;
    if (!f) return;
    if (f->j) json_watch(f->j, NULL, NULL);
    for (int k = 0; k < JOB_TEXTS; k++) free(f->t[k].z);
    block_free(&f->blk);
    scan_free(&f->s);
    free(f);
    st->feed = NULL;
}
