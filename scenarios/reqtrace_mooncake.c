/*
 * reqtrace_mooncake: the Mooncake FAST'25 traces (kvcache-ai/Mooncake,
 * FAST25-release/README.md "Trace Format"; traces/conversation_trace.jsonl),
 * JSON lines, one request an object:
 *
 *   {"timestamp": 27482, "input_length": 6955, "output_length": 52,
 *    "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354]}
 *
 * timestamp is the arrival in milliseconds from the trace's start,
 * input_length and output_length are tokens, hash_ids the remapped hashes
 * of the prompt's blocks of 512 tokens (equal ids: a shared prefix). The
 * first three are required, hash_ids may be absent (no blocks); a row has
 * at most ceil(input_length / 512) ids (the published traces have exactly
 * that many). Keys may come in any order; other keys are skipped (any JSON
 * value). Blank lines are skipped; every other line is one object.
 *
 * A line is at most 65535 bytes (a 1M-token prompt's 1954 ids of up to 10
 * digits take 24 KB), with no NUL or control byte and valid UTF-8.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/reqtrace_int.h"

#define MC_MAX_LINE 65536
#define MC_BLOCK_TOKENS 512         /* FAST25-release/README.md: "The block size is 512 tokens" */
#define MC_MAX_DEPTH 32             /* nesting of a skipped value */

/* One line being parsed. */
typedef struct mc_line {
    rt_build *b;
    long line;
    const char *s, *p;               /* the line and where parsing is */
    char *err;
    size_t errlen;
} mc_line;

static int mc_fail(mc_line *m, const char *what) {
    return rt_fail(m->b, m->line, m->err, m->errlen, "expected %s at column %ld", what, (long)(m->p - m->s) + 1);
}

static void ws(mc_line *m) {
    while (*m->p == ' ' || *m->p == '\t' || *m->p == '\r') m->p++;
}

/* A JSON number: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?. 0 with *x, or -1. */
static int number(mc_line *m, double *x) {
    const char *p = m->p, *start = p;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return mc_fail(m, "a number");
    if (*p == '.') {
        if (*++p < '0' || *p > '9') return mc_fail(m, "a digit after '.'");
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        if (*++p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') return mc_fail(m, "an exponent");
        while (*p >= '0' && *p <= '9') p++;
    }
    errno = 0;
    *x = strtod(start, NULL);
    m->p = p;
    if (!isfinite(*x)) return mc_fail(m, "a finite number");
    return 0;
}

/* A JSON string; its first keylen - 1 bytes (unescaped as far as plain
 * text goes: a key is compared, never output) into key when not NULL. */
static int string(mc_line *m, char *key, size_t keylen) {
    size_t n = 0;
    if (*m->p != '"') return mc_fail(m, "a string");
    for (m->p++; *m->p != '"'; m->p++) {
        unsigned char c = (unsigned char)*m->p;
        if (!c) return mc_fail(m, "a closing '\"'");
        if (c == '\\') {
            const char *e = ++m->p;
            if (*e == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", e[i]) || !e[i]) return mc_fail(m, "4 hex digits after \\u");
                m->p += 4;
            } else if (!*e || !strchr("\"\\/bfnrt", *e)) {
                return mc_fail(m, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            }
        }
        if (key && n + 1 < keylen) key[n++] = (char)c;
    }
    m->p++;
    if (key) key[n] = 0;
    return 0;
}

static int value(mc_line *m, int depth);

/* Past the character c at m->p (a closing bracket): 1, else 0. */
static int eat(mc_line *m, char c) {
    if (*m->p != c) return 0;
    m->p++;
    return 1;
}

/* An array or object (open '[' or '{') of skipped values. */
static int container(mc_line *m, int depth) {
    char close = *m->p++ == '[' ? ']' : '}';
    ws(m);
    if (eat(m, close)) return 0;
    for (;;) {
        if (close == '}') {
            if (string(m, NULL, 0) < 0) return -1;
            ws(m);
            if (!eat(m, ':')) return mc_fail(m, "':'");
            ws(m);
        }
        if (value(m, depth + 1) < 0) return -1;
        ws(m);
        if (eat(m, close)) return 0;
        if (!eat(m, ',')) return mc_fail(m, close == ']' ? "',' or ']'" : "',' or '}'");
        ws(m);
    }
}

/* Any JSON value, skipped. */
static int value(mc_line *m, int depth) {
    double x;
    if (depth > MC_MAX_DEPTH) return mc_fail(m, "values nested at most 32 deep");
    if (*m->p == '"') return string(m, NULL, 0);
    if (*m->p == '[' || *m->p == '{') return container(m, depth);
    static const char *const lit[] = { "true", "false", "null" };
    for (int i = 0; i < 3; i++)
        if (!strncmp(m->p, lit[i], strlen(lit[i]))) {
            m->p += strlen(lit[i]);
            return 0;
        }
    return number(m, &x);
}

/* A whole number in [lo, hi] (a key's value, named for errors). */
static int whole(mc_line *m, const char *key, double lo, double hi, long long *v) {
    double x;
    const char *at = m->p;
    if (number(m, &x) < 0) return -1;
    if (x != floor(x) || x < lo || x > hi) {
        m->p = at;
        char what[96];
        snprintf(what, sizeof what, "%s to be a whole number from %.0f to %.0f", key, lo, hi);
        return mc_fail(m, what);
    }
    *v = (long long)x;
    return 0;
}

/* hash_ids: [id, ...], each pushed on the block pool; *n counts them. */
static int hash_ids(mc_line *m, int *n) {
    if (!eat(m, '[')) return mc_fail(m, "hash_ids to be a list of block ids [1, 2, ...]");
    ws(m);
    if (eat(m, ']')) return 0;
    for (;;) {
        long long id;
        if (whole(m, "a hash id", 0, 4294967295.0, &id) < 0) return -1;
        if (rt_block(m->b, (uint32_t)id) < 0) return rt_fail(m->b, m->line, m->err, m->errlen, "out of memory");
        (*n)++;
        ws(m);
        if (eat(m, ']')) return 0;
        if (!eat(m, ',')) return mc_fail(m, "',' or ']' in hash_ids");
        ws(m);
    }
}

/* The keys of a request: timestamp, input_length, output_length, hash_ids. */
enum { K_TIME, K_IN, K_OUT, K_HASH, N_KEYS };
static const char *const mc_keys[N_KEYS] = { "timestamp", "input_length", "output_length", "hash_ids" };

/* One key's value into q; seen[k] set. */
static int member(mc_line *m, const char *key, int *seen, rt_req *q) {
    int k = 0;
    while (k < N_KEYS && strcmp(key, mc_keys[k])) k++;
    if (k == N_KEYS) return value(m, 1);
    if (seen[k]) return rt_fail(m->b, m->line, m->err, m->errlen, "key \"%s\" is given twice", key);
    seen[k] = 1;
    double ms;
    switch (k) {
    case K_TIME:
        if (number(m, &ms) < 0) return -1;
        q->t_s = ms / 1000;                   /* milliseconds (the README) */
        return 0;
    case K_IN: return whole(m, "input_length", 0, 1e9, &q->input);
    case K_OUT: return whole(m, "output_length", 0, 1e9, &q->output);
    default: return hash_ids(m, &q->n_blocks);
    }
}

/* The request object of one line into q. */
static int parse_object(mc_line *m, rt_req *q) {
    int seen[N_KEYS] = { 0 };
    char key[64];
    *q = (rt_req){ .session = -1, .cls = -1 };
    ws(m);
    if (!eat(m, '{')) return mc_fail(m, "a JSON object {\"timestamp\": ms, \"input_length\": n, \"output_length\": n, ...}");
    ws(m);
    if (!eat(m, '}'))
        for (;;) {
            if (string(m, key, sizeof key) < 0) return -1;
            ws(m);
            if (!eat(m, ':')) return mc_fail(m, "':'");
            ws(m);
            if (member(m, key, seen, q) < 0) return -1;
            ws(m);
            if (eat(m, '}')) break;
            if (!eat(m, ',')) return mc_fail(m, "',' or '}'");
            ws(m);
        }
    ws(m);
    if (*m->p) return mc_fail(m, "the end of the line after the object");
    for (int k = K_TIME; k <= K_OUT; k++)
        if (!seen[k]) return rt_fail(m->b, m->line, m->err, m->errlen, "the request has no \"%s\"", mc_keys[k]);
    return 0;
}

/* The next line of f into buf (NUL-terminated, newline dropped): its
 * length, -1 at the end of the file, or -2 with err (too long, binary). */
static long next_line(FILE *f, char *buf, rt_build *b, long line, char *err, size_t errlen) {
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == 0) return rt_fail(b, line, err, errlen, "binary data (a NUL byte); expected a JSON lines text file"), -2;
        if (c < 0x20 && c != '\t' && c != '\r')
            return rt_fail(b, line, err, errlen, "binary data (control character 0x%02x); expected a JSON lines text file",
                           c), -2;
        if (n == MC_MAX_LINE - 1) return rt_fail(b, line, err, errlen, "line longer than %d characters", MC_MAX_LINE - 1), -2;
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    if (c == EOF && n == 0) return ferror(f) ? (rt_fail(b, line, err, errlen, "read error"), -2) : -1;
    size_t ok = infile_utf8_valid(buf, (size_t)n);
    if (ok < (size_t)n)
        return rt_fail(b, line, err, errlen, "the line is not valid UTF-8 (byte 0x%02x at column %zu)",
                       (unsigned char)buf[ok], ok + 1), -2;
    return n;
}

/* One line's request, checked and added. */
static int add_line(rt_build *b, long line, const char *s, char *err, size_t errlen) {
    mc_line m = { b, line, s, s, err, errlen };
    rt_req q;
    if (parse_object(&m, &q) < 0) return -1;
    long long need = (q.input + MC_BLOCK_TOKENS - 1) / MC_BLOCK_TOKENS;
    if (q.n_blocks > need)
        return rt_fail(b, line, err, errlen, "hash_ids has %d blocks of %d tokens; input_length %lld fills at most %lld",
                       q.n_blocks, MC_BLOCK_TOKENS, q.input, need);
    return rt_add(b, line, &q, err, errlen);
}

int rt_read_mooncake(const char *path, rt_build *b, char *err, size_t errlen) {
    infile_err ie;
    FILE *f = infile_open(path, INFILE_TRACE_MAX_BYTES, "a JSON lines request trace", &ie);
    if (!f) {
        infile_say(&ie, path, err, errlen);
        return -1;
    }
    char *buf = malloc(MC_MAX_LINE);
    if (!buf) {
        fclose(f);
        return rt_fail(b, 1, err, errlen, "out of memory");
    }
    b->col_in = "input_length";
    b->col_out = "output_length";
    long line = 0, n;
    int rc = 0;
    while (rc == 0 && (n = next_line(f, buf, b, ++line, err, errlen)) != -1) {
        if (n == -2) rc = -1;
        else if (strspn(buf, " \t\r") < (size_t)n) rc = add_line(b, line, buf, err, errlen);
    }
    b->end_line = line - (rc == 0);
    free(buf);
    fclose(f);
    return rc;
}
