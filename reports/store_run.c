/*
 * store_run: recording a run as it is simulated (store.h: store_run_begin,
 * store_run_finish). The store subscribes a sink to the metric bus:
 *
 *   events    buffered (store_events.c) and written EVENT_BATCH at a
 *             time, each batch in a short transaction of its own, by the
 *             writer thread (store_writer.c) while the sink fills another
 *             buffer; 32 rows per INSERT kept prepared (store_batch.c)
 *   samples   resampled in memory (reports/series.h) and written once, at
 *             the end: at most STORE_MAX_POINTS points per series, a job's
 *             or service's without the buckets that repeat the one before
 *
 * The run's last transaction writes the remaining events, the series, the
 * failure kinds and the rows of the JSON results (store_rows.c), then
 * marks the run 'complete'. A failure during the run is sticky (st->failed)
 * and reported by store_run_finish, which then leaves the run 'incomplete'.
 */
#include "reports/store.h"
#include "reports/store_int.h"
#include "base/errmsg.h"
#include "base/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "reports/series.h"

static const char *const busy_names[N_BUSY] = { "gpus_training", "gpus_checkpoint", "gpus_restarting",
                                                "gpus_batch", "gpus_serving" };

int64_t store_run_id(const store *st) { return st ? st->run : 0; }

/* ---- the sink ----------------------------------------------------------- */

static void sink_fail(store *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sink_fail(store *st, const char *fmt, ...) {
    if (st->failed) return;
    st->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->why, sizeof st->why, fmt, ap);
    va_end(ap);
}

/* A new series named (entity, name); its index or -1 (failed set). */
static int new_series(store *st, const char *entity, const char *name, double initial) {
    size_t need = (size_t)st->n_names + 1;
    if (GROW(st->series_entity, st->cap_entity, need) || GROW(st->series_name, st->cap_name, need)) {
        sink_fail(st, "%s: out of memory", st->path);
        return -1;
    }
    char *e = strdup(entity), *m = strdup(name);
    int i = e && m ? series_add(st->ss, initial) : -1;
    if (i < 0) {
        free(e);
        free(m);
        sink_fail(st, "%s: out of memory", st->path);
        return -1;
    }
    st->series_entity[st->n_names] = e;
    st->series_name[st->n_names++] = m;
    return i;
}

static void on_register(void *ctx, metric_id id, const char *entity, const char *name) {
    store *st = ctx;
    if (st->failed || st->finished || id < 0) return;
    if ((size_t)id >= st->n_of) {
        size_t n = st->n_of;
        if (GROW(st->series_of, st->n_of, (size_t)id + 1)) {
            sink_fail(st, "%s: out of memory", st->path);
            return;
        }
        for (; n < st->n_of; n++) st->series_of[n] = -1;
    }
    int i = new_series(st, entity, name, 0);
    st->series_of[id] = i;
    if (i >= 0 && !strcmp(entity, "cluster"))
        for (int k = 0; k < N_BUSY; k++)
            if (!strcmp(name, busy_names[k])) st->busy_of[k] = i;
}

static void on_sample(void *ctx, metric_id id, sim_time t, double value) {
    store *st = ctx;
    if (st->failed || st->finished || id < 0 || (size_t)id >= st->n_of || st->series_of[id] < 0) return;
    int i = st->series_of[id];
    double t_s = sim_to_s(t);
    if (series_put(st->ss, i, t_s, value) < 0) sink_fail(st, "%s: out of memory", st->path);
    for (int k = 0; k < N_BUSY; k++) {
        if (st->busy_of[k] != i) continue;
        st->busy_value[k] = value;
        double busy = 0;
        for (int q = 0; q < N_BUSY; q++) busy += st->busy_value[q];
        if (series_put(st->ss, st->idle, t_s, st->gpus - busy) < 0) sink_fail(st, "%s: out of memory", st->path);
    }
}

static void on_event(void *ctx, sim_time t, const char *entity, const char *kind, const char *detail) {
    store *st = ctx;
    if (st->failed || st->finished) return;
    if (store_events_add(st, sim_to_s(t), entity, kind, detail) < 0) sink_fail(st, "%s", st->writer_why);
}

static void on_eventv(void *ctx, sim_time t, const char *entity, const char *kind, const char *fmt, va_list ap) {
    store *st = ctx;
    if (st->failed || st->finished) return;
    if (store_events_addv(st, sim_to_s(t), entity, kind, fmt, ap) < 0) sink_fail(st, "%s", st->writer_why);
}

static void on_close(void *ctx, sim_time t) {
    store *st = ctx;
    if (st->failed || st->finished) return;
    if (series_close(st->ss, sim_to_s(t)) < 0) sink_fail(st, "%s: out of memory", st->path);
}

/* ---- a run ------------------------------------------------------------- */

/* Foreign keys checked (on) or not. Every row a run writes (events,
 * series, points, jobs, ...) refers to the run's own row, inserted and
 * committed by this connection before any of them, or to a series row
 * written just before its points; checking each against its parent is
 * one more B-tree search per row (10-15% of an event's insert, measured).
 * So the checks are off from the run's row to the end of store_run_finish
 * (PRAGMA foreign_keys: a connection's setting, changed outside a
 * transaction only; ON DELETE CASCADE is unaffected for later deletes). */
static int check_references(store *st, int on) {
    return store_exec(st->db, on ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF");
}

int store_run_begin(store *st, const scenario *s, metric_bus *bus, char *err, size_t errlen) {
    if (st->run) {
        errmsg_set(err, errlen, "%s: a run is already being recorded", st->path);
        return STORE_FAILED;
    }
    st->ss = series_new(STORE_MAX_POINTS);
    st->gpus = scenario_gpus(s);
    if (!st->ss || store_events_start(st) < 0 || (st->idle = new_series(st, "cluster", "gpus_idle", st->gpus)) < 0) {
        errmsg_set(err, errlen, "%s: out of memory", st->path);
        return STORE_FAILED;
    }
    int rc = store_insert_run_row(st, s, &st->run);   /* autocommit: the row is durable now */
    if (rc == SQLITE_OK) rc = check_references(st, 0);
    if (rc != SQLITE_OK) {
        char why[256];
        errmsg_set(err, errlen, "%s: cannot write: %s", st->path, store_db_why(st->db, rc, why, sizeof why));
        return store_sql_status(rc);
    }
    /* Once subscribed the store must stay open while the bus publishes, so
     * a failure from here on (out of memory in on_register) is reported by
     * store_run_finish. */
    metric_sink sink = { st, on_register, on_sample, on_event, on_close, on_eventv };
    if (metrics_subscribe(bus, &sink) < 0) {
        errmsg_set(err, errlen, "%s: out of memory", st->path);
        return STORE_FAILED;
    }
    st->writer = store_writer_start();
    return STORE_OK;
}

static int write_failure_kinds(store *st, const world *w) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(st->db, "INSERT INTO failure_kinds(run_id, idx, component, cause, count) "
                                        "VALUES (?, ?, ?, ?, ?)", -1, &q, NULL);
    for (int i = 0; rc == SQLITE_OK && i < world_failure_kinds(w); i++) {
        const char *comp, *cause;
        int count;
        world_failure_kind(w, i, &comp, &cause, &count);
        store_bind(q, "Iitti", st->run, i, comp, cause, count);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rc;
}

void store_run_interrupted(store *st) {
    if (st) st->interrupted = 1;
}

int store_final_begin(store *st) {
    if (st->final_open) return SQLITE_OK;
    int rc = store_exec(st->db, "BEGIN IMMEDIATE");
    st->final_open = rc == SQLITE_OK;
    return rc;
}

/* The run written or given up: the writer thread ends, a transaction
 * left open rolls back, checks are back. */
static void end_writing(store *st, int rollback) {
    store_writer_stop(st->writer);
    st->writer = NULL;
    if (rollback && st->final_open) store_exec(st->db, "ROLLBACK");
    st->final_open = 0;
    store_jobs_feed_free(st);
    check_references(st, 1);
}

int store_run_finish(store *st, const world *w, const char *results_json, char *err, size_t errlen) {
    if (!st->run || st->finished) {
        errmsg_set(err, errlen, "%s: no run being recorded", st->path);
        return STORE_FAILED;
    }
    world_totals tot = world_get_totals(w);
    store_jobs_feed_end(st);
    if (store_writer_wait(st->writer) != SQLITE_OK) sink_fail(st, "%s", st->writer_why);
    if (!st->failed && series_close(st->ss, tot.simulated_s) < 0) sink_fail(st, "%s: out of memory", st->path);
    if (!results_json) sink_fail(st, "%s: out of memory", st->path);
    if (st->failed) {
        errmsg_set(err, errlen, "%s (run %lld left incomplete)", st->why, (long long)st->run);
        st->finished = 1;
        end_writing(st, 1);
        return STORE_FAILED;
    }
    st->finished = 1;
    const char *step = "begin";
    int rc = store_final_begin(st);
    if (rc == SQLITE_OK) step = "events", rc = store_events_write_last(st);
    if (rc == SQLITE_OK) step = "series", rc = store_series_write(st, tot.simulated_s, tot.cost_usd);
    if (rc == SQLITE_OK) step = "failures", rc = write_failure_kinds(st, w);
    if (rc == SQLITE_OK) rc = store_insert_results(st, results_json, series_bucket_s(st->ss), &step);
    if (rc == SQLITE_OK) step = "commit", rc = store_exec(st->db, "COMMIT");
    if (rc != SQLITE_OK) {
        char why[256];
        errmsg_set(err, errlen, "%s: cannot write the run (%s): %s (run %lld left incomplete)", st->path, step,
               store_db_why(st->db, rc, why, sizeof why), (long long)st->run);
    }
    end_writing(st, rc != SQLITE_OK);
    return rc == SQLITE_OK ? STORE_OK : STORE_FAILED;
}
