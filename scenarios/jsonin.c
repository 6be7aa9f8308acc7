/*
 * jsonin: JSON read into a tree (see jsonin.h). A recursive-descent parser
 * over the text with an explicit depth bound; values, keys and decoded
 * strings are bump-allocated from one arena of chunks, so freeing is one
 * walk over the chunks. Members of an array or object are gathered on a
 * scratch stack while their container is open and copied into the arena
 * when it closes (the count is known only then).
 */
#include "scenarios/jsonin.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/grow.h"
#include "scenarios/infile.h"

#define CHUNK_BYTES (256u << 10)

struct jv {
    jv_type t;
    int line;
    int n;                            /* items or members */
    double num;
    const char *str;                  /* JV_STR: decoded text */
    const jv **items;                 /* JV_ARR / JV_OBJ: values */
    const char **keys;                /* JV_OBJ: keys */
};

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
} chunk;

struct jsonin {
    chunk *chunks;
    const jv *root;
    char *path;
};

/* A parse in progress. */
typedef struct parser {
    jsonin *d;
    const char *p, *end;
    int line, depth;
    const jv **stack;   size_t n_stack, cap_stack;    /* open containers' members */
    const char **kstack; size_t n_kstack, cap_kstack; /* open objects' keys */
    char *err;
    size_t errlen;
    int failed;
} parser;

static void *arena(jsonin *d, size_t bytes) {
    bytes = (bytes + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    chunk *c = d->chunks;
    if (!c || c->cap - c->used < bytes) {
        size_t cap = bytes > CHUNK_BYTES ? bytes : CHUNK_BYTES;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = d->chunks, c->used = 0, c->cap = cap;
        d->chunks = c;
    }
    void *r = (char *)c->data + c->used;
    c->used += bytes;
    return r;
}

static int fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *ps, const char *fmt, ...) {
    if (ps->failed) return -1;
    ps->failed = 1;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    errmsg_set(ps->err, ps->errlen, "%s:%d: %s", ps->d->path, ps->line, what);
    return -1;
}

static int oom(parser *ps) {
    ps->line = 0;
    return fail(ps, "out of memory");
}

static void blanks(parser *ps) {
    for (; ps->p < ps->end; ps->p++) {
        if (*ps->p == '\n') ps->line++;
        else if (*ps->p != ' ' && *ps->p != '\t' && *ps->p != '\r') break;
    }
}

static jv *new_value(parser *ps, jv_type t) {
    jv *v = arena(ps->d, sizeof *v);
    if (!v) { oom(ps); return NULL; }
    memset(v, 0, sizeof *v);
    v->t = t, v->line = ps->line;
    return v;
}

static int literal(parser *ps, const char *word, jv_type t, const jv **out) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return fail(ps, "expected a JSON value");
    ps->p += n;
    return (*out = new_value(ps, t)) ? 0 : -1;
}

static int digits(const char **p, const char *end) {
    const char *s = *p;
    while (*p < end && **p >= '0' && **p <= '9') (*p)++;
    return *p > s;
}

/* -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
static int number(parser *ps, const jv **out) {
    const char *p = ps->p, *s = p;
    if (p < ps->end && *p == '-') p++;
    if (p < ps->end && *p == '0') p++;
    else if (!digits(&p, ps->end)) return fail(ps, "expected a JSON value");
    if (p < ps->end && *p == '.' && (p++, !digits(&p, ps->end))) return fail(ps, "expected a digit after '.'");
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < ps->end && (*p == '+' || *p == '-')) p++;
        if (!digits(&p, ps->end)) return fail(ps, "expected a digit in the exponent");
    }
    char buf[64];
    size_t n = (size_t)(p - s);
    if (n >= sizeof buf) return fail(ps, "a number of more than 63 characters");
    memcpy(buf, s, n);
    buf[n] = 0;
    jv *v = new_value(ps, JV_NUM);
    if (!v) return -1;
    v->num = strtod(buf, NULL);
    ps->p = p;
    *out = v;
    return 0;
}

static int hex4(parser *ps, const char *p, unsigned *u) {
    *u = 0;
    for (int i = 0; i < 4; i++) {
        if (p + i >= ps->end) return fail(ps, "expected 4 hex digits after \\u");
        char c = p[i];
        unsigned h = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (h == 16) return fail(ps, "expected 4 hex digits after \\u");
        *u = *u << 4 | h;
    }
    return 0;
}

static size_t put_utf8(char *o, unsigned u) {
    if (u < 0x80) { o[0] = (char)u; return 1; }
    if (u < 0x800) { o[0] = (char)(0xC0 | u >> 6); o[1] = (char)(0x80 | (u & 0x3F)); return 2; }
    if (u < 0x10000) {
        o[0] = (char)(0xE0 | u >> 12); o[1] = (char)(0x80 | (u >> 6 & 0x3F)); o[2] = (char)(0x80 | (u & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | u >> 18); o[1] = (char)(0x80 | (u >> 12 & 0x3F));
    o[2] = (char)(0x80 | (u >> 6 & 0x3F)); o[3] = (char)(0x80 | (u & 0x3F));
    return 4;
}

/* A \u escape at p (p at the 'u'), a surrogate pair taken whole: the code
 * point in *u and the bytes read in *used. */
static int unicode_escape(parser *ps, const char *p, unsigned *u, size_t *used) {
    if (hex4(ps, p + 1, u) < 0) return -1;
    *used = 5;
    if (*u >= 0xDC00 && *u <= 0xDFFF) return fail(ps, "a lone low surrogate \\u%04X in a string", *u);
    if (*u >= 0xD800 && *u <= 0xDBFF) {
        unsigned lo;
        if (p + 6 >= ps->end || p[5] != '\\' || p[6] != 'u' || hex4(ps, p + 7, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
            return fail(ps, "expected a low surrogate after \\u%04X", *u);
        *u = 0x10000 + ((*u - 0xD800) << 10) + (lo - 0xDC00);
        *used = 11;
    }
    if (*u == 0) return fail(ps, "\\u0000 in a string (names are C strings)");
    return 0;
}

/* The string at ps->p (its opening quote), decoded into the arena. Escapes
 * only shrink text (\u is 6 bytes for at most 3, a pair 12 for 4), so the
 * raw length bounds the decoded one. */
static int string(parser *ps, const char **out) {
    const char *p = ps->p + 1;
    const char *close = p;
    while (close < ps->end && *close != '"') close += *close == '\\' && close + 1 < ps->end ? 2 : 1;
    if (close >= ps->end) return fail(ps, "a string is not closed; expected '\"'");
    char *o = arena(ps->d, (size_t)(close - p) + 1), *o0 = o;
    if (!o) return oom(ps);
    while (p < close) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20) return fail(ps, "a control character (0x%02x) in a string; expected it escaped", c);
        if (c != '\\') {
            int n = infile_utf8_len((const unsigned char *)p, (size_t)(close - p));
            if (n == 0) return fail(ps, "a string is not valid UTF-8 (byte 0x%02x)", c);
            memcpy(o, p, (size_t)n), o += n, p += n;
            continue;
        }
        const char *esc = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *hit = strchr(esc, p[1]);
        if (p[1] && hit) { *o++ = to[hit - esc]; p += 2; continue; }
        if (p[1] != 'u') return fail(ps, "an unknown escape \\%c in a string", p[1] >= 0x20 ? p[1] : '?');
        unsigned u;
        size_t used;
        if (unicode_escape(ps, p + 1, &u, &used) < 0) return -1;
        o += put_utf8(o, u), p += 1 + used;
    }
    *o = 0;
    ps->p = close + 1;
    *out = o0;
    return 0;
}

static int value(parser *ps, const jv **out);

/* The members gathered since `base` on the scratch stacks, copied into v. */
static int close_container(parser *ps, jv *v, size_t base, int with_keys) {
    size_t n = ps->n_stack - base;
    if (n > INT32_MAX) return fail(ps, "more than 2^31 members in one array or object");
    v->n = (int)n;
    if (n) {
        v->items = arena(ps->d, n * sizeof *v->items);
        if (!v->items) return oom(ps);
        memcpy(v->items, ps->stack + base, n * sizeof *v->items);
        if (with_keys) {
            v->keys = arena(ps->d, n * sizeof *v->keys);
            if (!v->keys) return oom(ps);
            memcpy(v->keys, ps->kstack + ps->n_kstack - n, n * sizeof *v->keys);
            ps->n_kstack -= n;
        }
    }
    ps->n_stack = base;
    return 0;
}

static int push(parser *ps, const jv *item) {
    if (GROW(ps->stack, ps->cap_stack, ps->n_stack + 1)) return oom(ps);
    ps->stack[ps->n_stack++] = item;
    return 0;
}

static int member_key(parser *ps) {
    const char *key;
    blanks(ps);
    if (ps->p >= ps->end || *ps->p != '"') return fail(ps, "expected a member name in double quotes");
    if (string(ps, &key) < 0) return -1;
    blanks(ps);
    if (ps->p >= ps->end || *ps->p != ':') return fail(ps, "expected ':' after the member name \"%.64s\"", key);
    ps->p++;
    if (GROW(ps->kstack, ps->cap_kstack, ps->n_kstack + 1)) return oom(ps);
    ps->kstack[ps->n_kstack++] = key;
    return 0;
}

/* An array or an object at ps->p (its opening bracket). */
static int container(parser *ps, const jv **out) {
    int is_obj = *ps->p == '{';
    char close = is_obj ? '}' : ']';
    if (++ps->depth > JSONIN_MAX_DEPTH) return fail(ps, "nesting deeper than %d", JSONIN_MAX_DEPTH);
    jv *v = new_value(ps, is_obj ? JV_OBJ : JV_ARR);
    if (!v) return -1;
    size_t base = ps->n_stack;
    ps->p++;
    blanks(ps);
    if (ps->p < ps->end && *ps->p == close) ps->p++;
    else
        for (;;) {
            const jv *item;
            if ((is_obj && member_key(ps) < 0) || value(ps, &item) < 0 || push(ps, item) < 0) return -1;
            blanks(ps);
            if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
            if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
            return fail(ps, "expected ',' or '%c'", close);
        }
    ps->depth--;
    *out = v;
    return close_container(ps, v, base, is_obj);
}

static int value(parser *ps, const jv **out) {
    blanks(ps);
    if (ps->p >= ps->end) return fail(ps, "expected a JSON value; the text ends");
    switch (*ps->p) {
    case '{': case '[': return container(ps, out);
    case 't': return literal(ps, "true", JV_TRUE, out);
    case 'f': return literal(ps, "false", JV_FALSE, out);
    case 'n': return literal(ps, "null", JV_NULL, out);
    case '"': {
        jv *v = new_value(ps, JV_STR);
        if (!v || string(ps, &v->str) < 0) return -1;
        *out = v;
        return 0;
    }
    default: return number(ps, out);
    }
}

void jsonin_free(jsonin *d) {
    if (!d) return;
    for (chunk *c = d->chunks, *next; c; c = next) next = c->next, free(c);
    free(d->path);
    free(d);
}

jsonin *jsonin_parse(const char *text, size_t len, const char *path, char *err, size_t errlen) {
    jsonin *d = calloc(1, sizeof *d);
    if (d) d->path = strdup(path ? path : "JSON");
    if (!d || !d->path) {
        errmsg_set(err, errlen, "%s:0: out of memory", path ? path : "JSON");
        jsonin_free(d);
        return NULL;
    }
    parser ps = { .d = d, .p = text, .end = text + len, .line = 1, .err = err, .errlen = errlen };
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ps.p += 3;     /* a byte-order mark */
    int rc = value(&ps, &d->root);
    if (rc == 0) {
        blanks(&ps);
        if (ps.p < ps.end) rc = fail(&ps, "expected the end of the text after the JSON value");
    }
    free(ps.stack);
    free(ps.kstack);
    if (rc < 0) {
        jsonin_free(d);
        return NULL;
    }
    return d;
}

jsonin *jsonin_read_file(const char *path, char *err, size_t errlen) {
    char *data;
    size_t len;
    if (infile_load(path, JSONIN_MAX_BYTES, "a JSON file", &data, &len, err, errlen) < 0) return NULL;
    jsonin *d = jsonin_parse(data, len, path, err, errlen);
    free(data);
    return d;
}

const jv *jsonin_root(const jsonin *d) { return d ? d->root : NULL; }
const char *jsonin_path(const jsonin *d) { return d ? d->path : ""; }

jv_type jv_kind(const jv *v) { return v ? v->t : JV_NULL; }
int jv_line(const jv *v) { return v ? v->line : 0; }
int jv_len(const jv *v) { return v && (v->t == JV_ARR || v->t == JV_OBJ) ? v->n : 0; }

const jv *jv_at(const jv *v, int i) { return i >= 0 && i < jv_len(v) ? v->items[i] : NULL; }

const char *jv_key(const jv *v, int i) { return v && v->t == JV_OBJ && i >= 0 && i < v->n ? v->keys[i] : NULL; }

const jv *jv_get(const jv *v, const char *key) {
    if (!v || v->t != JV_OBJ) return NULL;
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0) return v->items[i];
    return NULL;
}

const jv *jv_path(const jv *v, ...) {
    va_list ap;
    va_start(ap, v);
    for (const char *k; v && (k = va_arg(ap, const char *)) != NULL;) v = jv_get(v, k);
    va_end(ap);
    return v;
}

double jv_num(const jv *v, double otherwise) { return v && v->t == JV_NUM ? v->num : otherwise; }
const char *jv_str(const jv *v, const char *otherwise) { return v && v->t == JV_STR ? v->str : otherwise; }
int jv_is_true(const jv *v) { return v && v->t == JV_TRUE; }

const char *jv_kind_name(jv_type t) {
    static const char *names[] = { "null", "false", "true", "a number", "a string", "an array", "an object" };
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}
