/*
 * hostlist: Slurm node-name lists expanded and compressed (hostlist.h).
 * Both are one pass over the text: a 10,000-node list is a few hundred
 * KB of names, produced without building them all in memory.
 */
#include "base/hostlist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"

#define MAX_DIGITS 18                     /* a bound below 10^18 fits an unsigned long long */

static int name_char(char c) {
    return c > ' ' && c != ',' && c != '[' && c != ']' && c != 0x7f;
}

static size_t name_run(const char *p) {
    size_t n = 0;
    while (name_char(p[n])) n++;
    return n;
}

static size_t digit_run(const char *p) {
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9') n++;
    return n;
}

/* One range "lo" or "lo-hi" at p: its bounds and the width of lo. Returns
 * the characters read, or 0 when it is not one. */
static size_t read_range(const char *p, unsigned long long *lo, unsigned long long *hi, int *width) {
    size_t a = digit_run(p);
    if (a == 0 || a > MAX_DIGITS) return 0;
    *lo = *hi = strtoull(p, NULL, 10);
    *width = (int)a;
    if (p[a] != '-') return a;
    size_t b = digit_run(p + a + 1);
    if (b == 0 || b > MAX_DIGITS) return 0;
    *hi = strtoull(p + a + 1, NULL, 10);
    return a + 1 + b;
}

/* One name's parts: prefix, the bracket's inside (NULL: none) and suffix. */
typedef struct item {
    const char *pre, *in, *suf;
    size_t n_pre, n_in, n_suf;
} item;

/* The item at p: checked (ranges well formed, lo <= hi); *len its length.
 * 0, or -1 with why set. */
static int read_item(const char *p, item *it, size_t *len, char *why, size_t whylen) {
    memset(it, 0, sizeof *it);
    it->pre = p;
    it->n_pre = name_run(p);
    const char *q = p + it->n_pre;
    if (*q == '[') {
        it->in = q + 1;
        const char *r = it->in;
        for (;;) {
            unsigned long long lo, hi;
            int w;
            size_t k = read_range(r, &lo, &hi, &w);
            if (k == 0) {
                errmsg_set(why, whylen, "expected a number or a range like 01-16 inside [...] (at \"%.20s\")", r);
                return -1;
            }
            if (lo > hi) {
                errmsg_set(why, whylen, "range %.*s goes down; expected lo-hi with lo <= hi", (int)k, r);
                return -1;
            }
            r += k;
            if (*r == ']') break;
            if (*r != ',') {
                errmsg_set(why, whylen, "expected ',' or ']' after a range (at \"%.20s\")", r);
                return -1;
            }
            r++;
        }
        it->n_in = (size_t)(r - it->in);
        it->suf = r + 1;
        it->n_suf = name_run(it->suf);
        q = it->suf + it->n_suf;
    }
    if (*q == '[') {
        errmsg_set(why, whylen, "one [...] group per name (at \"%.20s\")", q);
        return -1;
    }
    if (*q && *q != ',') {
        errmsg_set(why, whylen, "unexpected character '%c'; expected a node name like gpu[01-16]", *q);
        return -1;
    }
    if (it->n_pre + it->n_suf == 0 && !it->in) {
        errmsg_set(why, whylen, "an empty name; expected names separated by single commas");
        return -1;
    }
    *len = (size_t)(q - p);
    return 0;
}

/* Call fn for the item's names; *count goes up by each. 0, -1 (why set), -2 (fn stopped). */
static int emit_item(const item *it, hostlist_fn fn, void *ctx, long *count, char *why, size_t whylen) {
    char name[HOSTLIST_NAME_MAX];
    if (!it->in) {
        if (it->n_pre >= sizeof name) goto too_long;
        (*count)++;
        snprintf(name, sizeof name, "%.*s", (int)it->n_pre, it->pre);
        return fn && fn(ctx, name) ? -2 : 0;
    }
    for (const char *r = it->in; r < it->in + it->n_in;) {
        unsigned long long lo, hi;
        int w;
        r += read_range(r, &lo, &hi, &w) + 1;     /* checked by read_item; +1: the ',' or ']' */
        for (unsigned long long v = lo;; v++) {
            if (++*count > HOSTLIST_MAX_NAMES) {
                errmsg_set(why, whylen, "more than %d names", HOSTLIST_MAX_NAMES);
                return -1;
            }
            int n = snprintf(name, sizeof name, "%.*s%0*llu%.*s", (int)it->n_pre, it->pre, w, v, (int)it->n_suf,
                             it->suf);
            if (n < 0 || (size_t)n >= sizeof name) goto too_long;
            if (fn && fn(ctx, name)) return -2;
            if (v == hi) break;
        }
    }
    return 0;
too_long:
    errmsg_set(why, whylen, "a name longer than %d characters", HOSTLIST_NAME_MAX - 1);
    return -1;
}

long hostlist_expand(const char *list, hostlist_fn fn, void *ctx, char *why, size_t whylen) {
    long count = 0;
    const char *p = list;
    if (!*p) {
        errmsg_set(why, whylen, "an empty list; expected node names like gpu[01-16]");
        return -1;
    }
    for (;;) {
        item it;
        size_t len;
        if (read_item(p, &it, &len, why, whylen) < 0) return -1;
        int rc = emit_item(&it, fn, ctx, &count, why, whylen);
        if (rc < 0) return rc;
        p += len;
        if (!*p) return count;
        p++;                                    /* the ',' */
    }
}

/* ---- compress --------------------------------------------------------- */

/* A name split as prefix + trailing digits (n_digits 0: none). */
static size_t digits_at_end(const char *z, size_t n) {
    size_t k = 0;
    while (k < n && k < MAX_DIGITS && z[n - 1 - k] >= '0' && z[n - 1 - k] <= '9') k++;
    return k;
}

/* Append text to buf at *at; -1 when it does not fit. */
static int put(char *buf, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int put(char *buf, size_t len, size_t *at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *at) return -1;
    *at += (size_t)n;
    return 0;
}

/* Names i.. sharing name i's prefix (before its digits) as one item:
 * "pre[a-b,c]" or the plain name. Returns the index after the group. */
static size_t compress_group(const char *const *names, size_t n, size_t i, char *buf, size_t len, size_t *at,
                             int *fail) {
    size_t ln = strlen(names[i]), nd = digits_at_end(names[i], ln), np = ln - nd;
    size_t e = i + 1;
    while (nd && e < n) {
        size_t l2 = strlen(names[e]), d2 = digits_at_end(names[e], l2);
        if (!d2 || l2 - d2 != np || memcmp(names[e], names[i], np)) break;
        e++;
    }
    if (e == i + 1) {
        *fail |= put(buf, len, at, "%s", names[i]);
        return e;
    }
    *fail |= put(buf, len, at, "%.*s[", (int)np, names[i]);
    for (size_t k = i; k < e;) {
        const char *lo = names[k] + np;
        int w = (int)strlen(lo);
        unsigned long long v = strtoull(lo, NULL, 10);
        size_t r = k + 1;
        char next[MAX_DIGITS + 2];
        while (r < e) {
            snprintf(next, sizeof next, "%0*llu", w, v + (r - k));
            if (strcmp(next, names[r] + np)) break;
            r++;
        }
        *fail |= put(buf, len, at, "%s%s", k > i ? "," : "", lo);
        if (r - k > 1) *fail |= put(buf, len, at, "-%s", names[r - 1] + np);
        k = r;
    }
    *fail |= put(buf, len, at, "]");
    return e;
}

long hostlist_compress(const char *const *names, size_t n, char *buf, size_t len) {
    if (len == 0) return -1;
    buf[0] = 0;
    size_t at = 0;
    int fail = 0;
    for (size_t i = 0; i < n && !fail; i++) fail = !names[i][0] || name_run(names[i]) != strlen(names[i]);
    for (size_t i = 0; i < n && !fail;) {
        if (i > 0) fail |= put(buf, len, &at, ",");
        i = compress_group(names, n, i, buf, len, &at, &fail);
    }
    if (fail) {
        buf[0] = 0;
        return -1;
    }
    return (long)at;
}
