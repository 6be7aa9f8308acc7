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
 */
#include "reports/store_int.h"
#include "base/grow.h"

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
    if (arena_put(b, entity ? entity : "", &e->entity) < 0 || arena_put(b, kind ? kind : "", &e->kind) < 0 ||
        arena_put(b, detail ? detail : "", &e->detail) < 0) {
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
