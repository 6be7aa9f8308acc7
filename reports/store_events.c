/*
 * store_events: a run's events from the metric bus to the events table
 * (store_int.h: store_events_*).
 *
 * The sink copies each event into a buffer of EVENT_BATCH events (its
 * texts in one arena, no allocation per event once the arena has grown);
 * a full buffer is handed to the writer thread (store_writer.c), which
 * writes it in a transaction of its own, 32 rows an INSERT
 * (store_batch.c), while the sink fills the next of EVENT_BUFS buffers.
 * The simulating thread waits only when all of them are queued. The last,
 * partial buffer is written inside the run's last transaction.
 *
 * The world's events come as a printf format and its arguments
 * (metrics_eventv): the sink packs the arguments as they are, and the
 * writer makes the text, one conversion at a time by snprintf with the
 * conversion's own specification, which is what vsnprintf makes of the
 * whole (each conversion is independent of the others: C11 7.21.6.1),
 * cut as the world cut it (METRICS_DETAIL_MAX). Formatting the 10K-GPU
 * year's 310,000 details (their %.0f above all) on the simulating thread
 * was most of what the sink cost it ("The results store, fourth round",
 * docs/performance.md).
 */
#include "reports/store_int.h"
#include "base/decimal.h"
#include "base/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* "node 12: ..." -> 12; -1 when the detail does not start so. */
static long node_of(const char *detail) {
    if (strncmp(detail, "node ", 5) != 0) return -1;
    char *end;
    long n = strtol(detail + 5, &end, 10);
    return end > detail + 5 && n >= 0 ? n : -1;
}

/* ---- arguments packed by the sink, formatted by the writer ---- */

/* A conversion specification at f ('%' ... conversion): its length, its
 * conversion letter in *conv and its length modifier in *mod ('l' long,
 * 'L' long long, 'z' size_t, 0 none); 0 when the packer does not know it
 * ('*' widths, %n, %p, long double, wide strings). */
static int is_fp(char c) { return c == 'f' || c == 'e' || c == 'E' || c == 'g' || c == 'G'; }

/* A conversion letter the packer takes with length modifier mod. */
static int known(char c, char mod) {
    switch (c) {
    case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': return 1;
    case 'c': case 'f': case 'e': case 'E': case 'g': case 'G': case 's': case '%': return !mod;
    default: return 0;
    }
}

static size_t conversion(const char *f, char *conv, char *mod) {
    size_t i = 1;
    while (f[i] == '-' || f[i] == '+' || f[i] == ' ' || f[i] == '#' || f[i] == '0') i++;
    while (f[i] && ((f[i] >= '0' && f[i] <= '9') || f[i] == '.')) i++;
    *mod = 0;
    if (f[i] == 'z') *mod = 'z', i++;
    else if (f[i] == 'l' && f[i + 1] == 'l') *mod = 'L', i += 2;
    else if (f[i] == 'l') *mod = 'l', i++;
    *conv = f[i];
    if (!known(f[i], *mod)) return 0;
    return i + 1;
}

/* Can the packer take every conversion of fmt? */
static int packable(const char *fmt) {
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
        char conv, mod;
        size_t n = conversion(p, &conv, &mod);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

static int arena_add(event_buf *b, const void *p, size_t n) {
    if (GROW(b->arena, b->arena_cap, b->arena_n + n)) return -1;
    memcpy(b->arena + b->arena_n, p, n);
    b->arena_n += n;
    return 0;
}

/* The arguments of fmt from ap into the arena, in order: an integer as
 * 8 bytes (signed or not as its conversion reads it), a double as 8, a
 * string with its NUL. 0, or -1 when out of memory. */
static int pack(event_buf *b, const char *fmt, va_list ap) {
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
        char conv, mod;
        p += conversion(p, &conv, &mod);
        int64_t i = 0;
        double d;
        int rc = 0;
        if (conv == '%') continue;
        if (conv == 's') {
            const char *z = va_arg(ap, const char *);
            rc = arena_add(b, z ? z : "(null)", strlen(z ? z : "(null)") + 1);
        } else if (is_fp(conv)) {
            d = va_arg(ap, double);
            rc = arena_add(b, &d, sizeof d);
        } else {
            int sign = conv == 'd' || conv == 'i' || conv == 'c';
            if (mod == 'z') i = (int64_t)va_arg(ap, size_t);
            else if (mod == 'L') i = sign ? (int64_t)va_arg(ap, long long) : (int64_t)va_arg(ap, unsigned long long);
            else if (mod == 'l') i = sign ? (int64_t)va_arg(ap, long) : (int64_t)va_arg(ap, unsigned long);
            else i = sign ? (int64_t)va_arg(ap, int) : (int64_t)va_arg(ap, unsigned);
            rc = arena_add(b, &i, sizeof i);
        }
        if (rc < 0) return -1;
    }
    return 0;
}

/* Text z[0, n) into out (room bytes) as snprintf puts it: cut to room -
 * 1 bytes and ended; returns n. */
static int put_cut(char *out, size_t room, const char *z, size_t n) {
    size_t k = n < room ? n : room - 1;
    memcpy(out, z, k);
    out[k] = 0;
    return (int)n;
}

/* The conversions of the world's details without flags, width or
 * precision but "%.0f" (the times above all): their text made here, the
 * same as snprintf's (base/decimal.h); -1 for any other (snprintf's). A
 * signed conversion's argument was packed as its int64_t value. */
static int convert_plain(char *out, size_t room, const char *spec, size_t n, const char *a) {
    char t[DECIMAL_MAX];
    int64_t i;
    double d;
    if (n == 2 && spec[1] == 's') return put_cut(out, room, a, strlen(a));
    if ((n == 2 && spec[1] == 'd') || (n == 3 && spec[1] == 'z' && spec[2] == 'd') ||
        (n == 4 && !memcmp(spec, "%lld", 4))) {
        memcpy(&i, a, 8);
        return put_cut(out, room, t, (size_t)decimal_int(t, i));
    }
    if (n == 4 && !memcmp(spec, "%.0f", 4)) {
        memcpy(&d, a, 8);
        int k = decimal_whole(t, d);
        return k < 0 ? -1 : put_cut(out, room, t, (size_t)k);
    }
    return -1;
}

/* One conversion (spec[0, n), its letter conv and length modifier mod)
 * of the argument at *a into out (room bytes); *a moves past the
 * argument. Returns what snprintf returns. */
static int convert(char *out, size_t room, const char *spec, size_t n, char conv, char mod, const char **a) {
    if (conv == '%') return snprintf(out, room, "%%");
    const char *arg = *a;
    int k = convert_plain(out, room, spec, n, arg);
    *a += conv == 's' ? strlen(arg) + 1 : 8;
    char f[32];
    if (k >= 0 || n >= sizeof f) return k;
    memcpy(f, spec, n);
    f[n] = 0;
    if (conv == 's') return snprintf(out, room, f, arg);
    int64_t i;
    double d;
    memcpy(is_fp(conv) ? (void *)&d : (void *)&i, arg, 8);
    if (is_fp(conv)) return snprintf(out, room, f, d);
    if (mod == 'z') return snprintf(out, room, f, (size_t)i);
    if (mod == 'L') return snprintf(out, room, f, (long long)i);
    if (mod == 'l') return snprintf(out, room, f, (long)i);
    if (conv == 'd' || conv == 'i' || conv == 'c') return snprintf(out, room, f, (int)i);
    return snprintf(out, room, f, (unsigned)i);
}

/* The text of fmt with the arguments packed at a, cut to
 * METRICS_DETAIL_MAX - 1 bytes as vsnprintf cuts it, into out; its
 * length. */
static size_t unpack(char out[METRICS_DETAIL_MAX], const char *fmt, const char *a) {
    size_t o = 0, room = METRICS_DETAIL_MAX;
    for (const char *p = fmt; *p && o + 1 < room;) {
        if (*p != '%') {
            out[o++] = *p++;
            continue;
        }
        char conv, mod;
        size_t n = conversion(p, &conv, &mod);
        int k = n ? convert(out + o, room - o, p, n, conv, mod, &a) : -1;
        if (k < 0) break;
        o += (size_t)k < room - o ? (size_t)k : room - o - 1;
        p += n;
    }
    out[o] = 0;
    return o;
}

/* The details of b's packed events made, in its arena (the writer). 0,
 * or -1 when out of memory. */
static int make_details(event_buf *b) {
    char text[METRICS_DETAIL_MAX];
    for (int i = 0; i < b->n; i++) {
        pending_event *e = &b->ev[i];
        if (!e->fmt) continue;
        size_t n = unpack(text, e->fmt, b->arena + e->detail), at = b->arena_n;
        if (arena_add(b, text, n + 1) < 0) return -1;
        e->detail = at;
        e->fmt = NULL;
    }
    return 0;
}

/* Row i of a batch (a store_row_fn). */
static int event_row(void *ctx, sqlite3_stmt *q, int base, int64_t i) {
    const event_buf *b = ctx;
    if (i >= b->n) return SQLITE_DONE;
    const pending_event *e = &b->ev[i];
    const char *arena = b->arena, *detail = arena + e->detail;
    long node = node_of(detail);
    int rc = sqlite3_bind_int64(q, base + 1, b->st->run);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(q, base + 2, b->seq0 + i);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(q, base + 3, e->t_s);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(q, base + 4, arena + e->entity, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(q, base + 5, arena + e->kind, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && node >= 0) rc = sqlite3_bind_int64(q, base + 6, node);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(q, base + 7, detail, -1, SQLITE_STATIC);
    return rc;
}

/* Write the events of b; in a transaction of its own unless txn (then
 * inside the caller's). On failure st->writer_why says why. */
static int write_events(event_buf *b, int txn) {
    static const char head[] = "INSERT INTO events(run_id, seq, t_s, entity, kind, node, detail)";
    store *st = b->st;
    sqlite3_stmt *one = NULL, *many = NULL;
    int rc = store_kept(st, KEPT_EVENT, "INSERT INTO events(run_id, seq, t_s, entity, kind, node, detail) "
                                        "VALUES (?, ?, ?, ?, ?, ?, ?)", &one);
    if (rc == SQLITE_OK) rc = store_kept_batch(st, KEPT_EVENT_MANY, head, 7, &many);
    if (rc == SQLITE_OK && make_details(b) < 0) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK && !txn) rc = store_exec(st->db, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) rc = store_batch_insert(many, one, event_row, b, NULL);
    if (rc == SQLITE_OK && !txn) rc = store_exec(st->db, "COMMIT");
    if (rc != SQLITE_OK) {
        char why[256];
        snprintf(st->writer_why, sizeof st->writer_why, "%s: cannot write events: %s", st->path,
                 store_db_why(st->db, rc, why, sizeof why));
        if (!txn) store_exec(st->db, "ROLLBACK");
    }
    return rc;
}

/* The writer's job: a full batch, in its own transaction. */
static int write_batch(void *p) { return write_events(p, 0); }

/* Buffer k made ready to fill (its event array allocated the first time).
 * 0, or -1 when out of memory. */
static int buf_ready(store *st, int k) {
    event_buf *b = &st->buf[k];
    if (!b->ev && !(b->ev = malloc(EVENT_BATCH * sizeof *b->ev))) return -1;
    b->st = st;
    b->n = 0;
    b->arena_n = 0;
    return 0;
}

int store_events_start(store *st) {
    st->fill = 0;
    return buf_ready(st, 0);
}

/* The buffer being filled, full: queued for the writer, and the next one
 * (written by now: the queue holds EVENT_BUFS - 1 at most) filled from now
 * on. */
static int hand_off(store *st) {
    event_buf *full = &st->buf[st->fill];
    full->seq0 = st->seq;
    st->seq += full->n;
    if (store_writer_give(st->writer, EVENT_BUFS - 1, write_batch, full) != SQLITE_OK) return -1;
    st->fill = (st->fill + 1) % EVENT_BUFS;
    if (buf_ready(st, st->fill) < 0) {
        snprintf(st->writer_why, sizeof st->writer_why, "%s: out of memory", st->path);
        return -1;
    }
    return 0;
}

static int arena_put(event_buf *b, const char *z, size_t *off) {
    size_t n = strlen(z) + 1;
    if (GROW(b->arena, b->arena_cap, b->arena_n + n)) return -1;
    memcpy(b->arena + b->arena_n, z, n);
    *off = b->arena_n;
    b->arena_n += n;
    return 0;
}

int store_events_add(store *st, double t_s, const char *entity, const char *kind, const char *detail) {
    event_buf *b = &st->buf[st->fill];
    pending_event *e = &b->ev[b->n];
    e->t_s = t_s;
    e->fmt = NULL;
    if (arena_put(b, entity ? entity : "", &e->entity) < 0 || arena_put(b, kind ? kind : "", &e->kind) < 0 ||
        arena_put(b, detail ? detail : "", &e->detail) < 0) {
        snprintf(st->writer_why, sizeof st->writer_why, "%s: out of memory", st->path);
        return -1;
    }
    return ++b->n == EVENT_BATCH ? hand_off(st) : 0;
}

int store_events_addv(store *st, double t_s, const char *entity, const char *kind, const char *fmt, va_list ap) {
    if (!packable(fmt)) {              /* a conversion the packer does not know: the text now */
        char detail[METRICS_DETAIL_MAX];
        vsnprintf(detail, sizeof detail, fmt, ap);
        return store_events_add(st, t_s, entity, kind, detail);
    }
    event_buf *b = &st->buf[st->fill];
    pending_event *e = &b->ev[b->n];
    e->t_s = t_s;
    e->fmt = fmt;
    if (arena_put(b, entity ? entity : "", &e->entity) < 0 || arena_put(b, kind ? kind : "", &e->kind) < 0 ||
        (e->detail = b->arena_n, pack(b, fmt, ap) < 0)) {
        snprintf(st->writer_why, sizeof st->writer_why, "%s: out of memory", st->path);
        return -1;
    }
    return ++b->n == EVENT_BATCH ? hand_off(st) : 0;
}

int store_events_write_last(store *st) {
    event_buf *b = &st->buf[st->fill];
    b->seq0 = st->seq;
    return write_events(b, 1);
}

void store_events_free(store *st) {
    for (int i = 0; i < EVENT_BUFS; i++) {
        free(st->buf[i].ev);
        free(st->buf[i].arena);
    }
}
