/*
 * json: streaming JSON writer (see json.h). Pretty-printed, two spaces per
 * level; depth is bounded by the caller's structure (a handful of levels).
 */
#include "reports/json.h"
#include "base/grow.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/fileout.h"

#define MAX_DEPTH 64

struct json {
    char *buf;
    size_t len, cap;
    int oom;
    int depth;
    int count[MAX_DEPTH];      /* values written at each level (for commas) */
    char kind[MAX_DEPTH];      /* the closing bracket of each open level */
    size_t start[MAX_DEPTH];   /* where each open level's bracket is */
    const char *key[MAX_DEPTH];   /* the key each open level was opened with */
    json_watch_fn watch;
    void *watch_ctx;
};

json *json_new(void) { return calloc(1, sizeof(json)); }

void json_free(json *j) {
    if (!j) return;
    free(j->buf);
    free(j);
}

static void put(json *j, const char *z, size_t n) {
    if (j->oom) return;
    if (GROW(j->buf, j->cap, j->len + n + 1)) {
        j->oom = 1;
        return;
    }
    memcpy(j->buf + j->len, z, n);
    j->len += n;
    j->buf[j->len] = 0;
}

static void puts_(json *j, const char *z) { put(j, z, strlen(z)); }

static void printf_(json *j, const char *fmt, ...) {
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) put(j, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void indent(json *j) {
    put(j, "\n", 1);
    for (int i = 0; i < j->depth; i++) put(j, "  ", 2);
}

static void string(json *j, const char *z) {
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(z ? z : ""); *p; p++) {
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20) {
                printf_(j, "\\u%04x", *p);
            } else if (*p < 0x80) {
                put(j, (const char *)p, 1);
            } else {                                   /* valid UTF-8 as it is; a bad byte as U+FFFD */
                int n = fileout_utf8_len(p);
                if (n > 1) {
                    put(j, (const char *)p, (size_t)n);
                    p += n - 1;
                } else {
                    puts_(j, "\xEF\xBF\xBD");
                }
            }
        }
    }
    put(j, "\"", 1);
}

/* Comma, newline, indentation and "key": before a value. */
static void begin_value(json *j, const char *key) {
    if (j->depth > 0) {
        if (j->count[j->depth]++) put(j, ",", 1);
        indent(j);
    }
    if (key) {
        string(j, key);
        put(j, ": ", 2);
    }
}

static void open_(json *j, const char *key, const char *bracket) {
    begin_value(j, key);
    size_t at = j->len;
    puts_(j, bracket);
    if (j->depth + 1 < MAX_DEPTH) j->depth++;
    else j->oom = 1;
    j->count[j->depth] = 0;
    j->kind[j->depth] = bracket[0] == '{' ? '}' : ']';
    j->start[j->depth] = at;
    j->key[j->depth] = key;
}

void json_watch(json *j, json_watch_fn fn, void *ctx) {
    j->watch = fn;
    j->watch_ctx = ctx;
}

void json_object(json *j, const char *key) { open_(j, key, "{"); }
void json_array(json *j, const char *key) { open_(j, key, "["); }

void json_end(json *j) {
    if (j->depth == 0) return;
    int had = j->count[j->depth];
    char close = j->kind[j->depth];
    size_t at = j->start[j->depth];
    j->depth--;
    if (had) indent(j);
    put(j, &close, 1);
    /* depth 1: the top-level object; 2: its member; this value was in it */
    if (j->watch && j->depth == 2 && !j->oom && j->key[2]) j->watch(j->watch_ctx, j->key[2], j->buf, at, j->len);
}

void json_num(json *j, const char *key, double v) {
    begin_value(j, key);
    if (!isfinite(v)) puts_(j, "null");
    else if (v == floor(v) && fabs(v) < 1e15) printf_(j, "%.0f", v == 0 ? 0.0 : v);
    else printf_(j, "%.10g", v);
}

void json_raw(json *j, const char *key, const char *z, size_t n) {
    begin_value(j, key);
    put(j, z, n);
}

void json_int(json *j, const char *key, long long v) {
    begin_value(j, key);
    printf_(j, "%lld", v);
}

double json_field_num(const void *base, const json_field *f) {
    double v;
    memcpy(&v, (const char *)base + f->off, sizeof v);
    return v;
}

void json_nums(json *j, const void *base, const json_field *f, size_t n) {
    for (size_t i = 0; i < n; i++) json_num(j, f[i].key, json_field_num(base, &f[i]));
}

void json_ints(json *j, const void *base, const json_field *f, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int v;
        memcpy(&v, (const char *)base + f[i].off, sizeof v);
        json_int(j, f[i].key, v);
    }
}

void json_strs(json *j, const void *base, const json_field *f, size_t n) {
    for (size_t i = 0; i < n; i++) json_str(j, f[i].key, (const char *)base + f[i].off);
}

void json_str(json *j, const char *key, const char *z) {
    begin_value(j, key);
    string(j, z);
}

void json_bool(json *j, const char *key, int v) {
    begin_value(j, key);
    puts_(j, v ? "true" : "false");
}

void json_null(json *j, const char *key) {
    begin_value(j, key);
    puts_(j, "null");
}

const char *json_text(const json *j, size_t *len) {
    if (j->oom) return NULL;
    if (len) *len = j->len;
    return j->buf ? j->buf : "";
}

int json_write_file(const json *j, const char *path, char *err, size_t errlen) {
    size_t n;
    const char *z = json_text(j, &n);
    if (!z) {
        snprintf(err, errlen, "%s: out of memory building the JSON", path);
        return -1;
    }
    fileout o;
    if (fileout_open(&o, path, FILEOUT_STDOUT, 0666, err, errlen) != 0) return -1;
    if (fwrite(z, 1, n, o.f) != n || fputc('\n', o.f) == EOF) {
        int e = errno;
        fileout_abort(&o);
        snprintf(err, errlen, "%s: cannot write: %s", o.how == FILEOUT_TO_STDOUT ? "stdout" : path, strerror(e));
        return -1;
    }
    return fileout_close(&o, err, errlen) == 0 ? 0 : -1;
}
