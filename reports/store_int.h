/*
 * store_int: the results store's private state, shared by the store's own
 * files and by nothing else (the public contract is reports/store.h and
 * reports/sweepdb.h):
 *
 *   store.c          opening a file: its kind, its integrity, the connection
 *   store_sql.c      SQLite result codes as the store's statuses and reasons
 *   store_schema.c   the schema (reports/schema.sql, compiled in): creating
 *                    it, checking its version, migrating an older file
 *   store_run.c      a run: begin, the metric bus's sink (events buffered,
 *                    samples resampled), finish
 *   store_series.c   a run's time series as rows (series, points)
 *   store_rows.c     the JSON results as rows: jobs, queues, services,
 *                    microbenchmarks, the run's figures
 *   store_jobs.c     a run's own jobs[] as rows, scanned from its text
 *   store_doc.c      a run's document rebuilt: its jobs[] from their rows
 *   store_batch.c    many rows per INSERT statement (events, jobs)
 *   store_events.c   a run's events: buffered, handed to the writer
 *   store_writer.c   the thread that writes event batches during a run
 *   store_measure.c  the measured microbenchmarks read back (calibration)
 *   store_sweep.c    the sweep tables and merging databases (sweepdb.h)
 *
 * Statements run for every job, event or sweep replica are prepared once
 * and kept for the store's life (store_kept): reset after each use,
 * finalized by store_close.
 */
#ifndef CT_STORE_INT_H
#define CT_STORE_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "reports/series.h"
#include "reports/store_names.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"

#define EVENT_BATCH 16384              /* events buffered before a write */

/* Event buffers the sink cycles through: one filled, the others queued
 * for the writer. The 10K-GPU year publishes its ~310,000 events (19
 * batches) faster than SQLite writes them; with 2 buffers the simulating
 * thread waited for the writer (store_writer.c). 16 let the writer fall
 * 15 batches behind (about 1.5 MB a buffer) and catch up while the
 * results are built. */
#define EVENT_BUFS 16

/* Rows per multi-row INSERT (store_batch.c), fewer when the table's
 * columns times this pass SQLite's limit on parameters. Measured with
 * SQLite 3.40 (the events table, 300,000 rows in one transaction, gcc -O2):
 * 0.86 us a row one at a time, 0.60 with 8 rows a statement, 0.51 with
 * 32, 0.49 with 100. */
#define STORE_BATCH_ROWS 32

/* The job and service states whose sum, taken from the cluster's GPUs, is
 * idle (busy_names in store_run.c). */
#define N_BUSY 5

/* An event waiting to be written: its strings are offsets into the arena;
 * with fmt, detail is the offset of its arguments, packed (store_events.c),
 * and the writer makes the text. */
typedef struct pending_event {
    double t_s;
    size_t entity, kind, detail;
    const char *fmt;
} pending_event;

/* Events buffered for one batch: the sink fills one while the writer
 * thread writes others (store_events.c). */
typedef struct event_buf {
    struct store *st;
    pending_event *ev;
    int n;
    char *arena;
    size_t arena_n, arena_cap;
    int64_t seq0;                      /* events.seq of ev[0] */
} event_buf;

typedef struct store_writer store_writer;
typedef struct job_feed job_feed;

/* The statements kept prepared (store_kept). */
typedef enum kept_stmt {
    KEPT_EVENT,                        /* INSERT INTO events */
    KEPT_EVENT_MANY,                   /* the same, STORE_BATCH_ROWS rows */
    KEPT_JOBS_MANY,                    /* INSERT INTO jobs, STORE_BATCH_ROWS rows */
    KEPT_JOBS_NARROW,                  /* INSERT INTO jobs, the columns every job fills */
    KEPT_JOBS_NARROW_MANY,             /* the same, STORE_BATCH_ROWS rows */
    KEPT_POINTS_MANY,                  /* INSERT INTO points, STORE_BATCH_ROWS rows */
    KEPT_RUN_ROW,                      /* INSERT INTO runs ('incomplete') */
    KEPT_UPDATE_RUN,                   /* the run's figures from its JSON */
    KEPT_ROWS_INSERT,                  /* + table: INSERT INTO jobs, queues, ... */
    KEPT_ROWS_TREE = KEPT_ROWS_INSERT + 4,   /* + table: json_tree over its array */
    KEPT_SWEEP_POINT = KEPT_ROWS_TREE + 4,
    KEPT_SWEEP_DONE,
    KEPT_SWEEP_RUN,
    KEPT_SWEEP_UNFIT,
    KEPT_SWEEP_STAT,
    KEPT_N
} kept_stmt;

struct store {
    sqlite3 *db;
    char *path;
    int64_t run;
    int finished;
    int interrupted;                   /* store_run_interrupted(): finish leaves it 'incomplete' */
    int failed;                        /* sticky: a write during the run failed */
    char why[512];
    /* the sink (store_run.c) */
    series_set *ss;
    int *series_of;                    /* metric id -> series index, -1 none */
    size_t n_of;
    char **series_entity, **series_name;
    int n_names;
    size_t cap_entity, cap_name;
    int busy_of[N_BUSY];               /* busy_names[i] -> series, -1 none */
    double busy_value[N_BUSY];
    int idle;                          /* series of gpus_idle */
    int gpus;
    event_buf buf[EVENT_BUFS];
    int fill;                          /* the buffer the sink fills */
    store_writer *writer;              /* NULL: batches written in place */
    char writer_why[384];              /* why the writer's last batch failed */
    int64_t seq;                       /* events.seq of the next event */
    job_feed *feed;                    /* jobs read as the JSON is written (store_run_watch) */
    int jobs_odd;                      /* a job its row cannot rebuild (store_jobs.c): keep the document whole */
    int final_open;                    /* the run's last transaction is open */
    sqlite3_stmt *kept[KEPT_N];
};

/* sqlite3_exec without callbacks. */
int store_exec(sqlite3 *db, const char *sql);

/* Bind the statement's parameters 1, 2, ... from the arguments, one type
 * letter per parameter: 'i' int, 'I' int64_t, 'd' double, 'n' double
 * stored as NULL when not finite (a missing or infinite estimate), 't'
 * text (NULL binds NULL; the text must outlive the step). Returns the
 * first SQLite code that is not SQLITE_OK, or SQLITE_OK; a parameter after
 * a failed one is left unbound. */
int store_bind(sqlite3_stmt *q, const char *types, ...);

/* The statement of slot k, prepared from sql the first time (sql is not
 * read after that). The caller resets it after use. Returns an SQLite code. */
int store_kept(store *st, kept_stmt k, const char *sql, sqlite3_stmt **q);

/* Reset a kept statement and drop its bindings (they may point at text the
 * caller frees). */
void store_kept_done(sqlite3_stmt *q);

/* A row source for store_batch_insert: bind row i's values to q's
 * parameters base + 1 ... (a parameter left unbound is NULL). Returns
 * SQLITE_OK, SQLITE_DONE when there is no row i, or an SQLite code. Rows
 * are asked for in order, except that once row i is not there, up to
 * STORE_BATCH_ROWS rows before it are asked for again, in order. */
typedef int (*store_row_fn)(void *ctx, sqlite3_stmt *q, int base, int64_t i);

/* Insert every row of a source (store_batch.c): many rows a statement
 * through many (from store_kept_batch), the last ones through one (the
 * same INSERT for one row). Inside the caller's transaction; *n (may be
 * NULL) receives the rows written. Returns an SQLite code. */
int store_batch_insert(sqlite3_stmt *many, sqlite3_stmt *one, store_row_fn row, void *ctx, int64_t *n);

/* The kept statement of slot k: head ("INSERT INTO t(a, b)") with the
 * VALUES of store_batch_rows rows of ncols parameters, prepared the first
 * time. Returns an SQLite code. */
int store_kept_batch(store *st, kept_stmt k, const char *head, int ncols, sqlite3_stmt **q);

/* The rows per statement of a table of ncols columns: STORE_BATCH_ROWS,
 * or fewer under the connection's limit on parameters. */
int store_batch_rows(sqlite3 *db, int ncols);

/* A thread that runs one job at a time on the store's connection
 * (store_writer.c), or NULL when one cannot be started. */
store_writer *store_writer_start(void);

/* Wait until fewer than room jobs of this function are queued (the one
 * running included; a caller cycling through room + 1 buffers, each job
 * the next); queue job(arg) and return SQLITE_OK, or, when a job before failed,
 * return its code and queue nothing. Jobs run in the order given. With w
 * NULL, run job(arg) here and return its code. */
int store_writer_give(store_writer *w, int room, int (*job)(void *), void *arg);

/* Wait until every job queued is done; the code of the first that failed
 * since the last wait (SQLITE_OK when none). w may be NULL. */
int store_writer_wait(store_writer *w);

/* Wait, end the thread and free w (NULL is a no-op); the last job's code. */
int store_writer_stop(store_writer *w);

/* The event buffers made ready (store_events.c); 0, or -1 when out of
 * memory. */
int store_events_start(store *st);

/* An event into the buffer being filled; a full buffer is queued for the
 * writer. 0, or -1 with st->writer_why set (out of memory, or a batch
 * before failed). */
int store_events_add(store *st, double t_s, const char *entity, const char *kind, const char *detail);

/* The same, the detail as a printf format (a string literal) and its
 * arguments: packed as they are, formatted by the writer. */
int store_events_addv(store *st, double t_s, const char *entity, const char *kind, const char *fmt, va_list ap);

/* Every series of the run and its points (the cluster's cost so far
 * worked out from the run's cost when the world published none), inside
 * the caller's transaction (store_series.c). An SQLite code. */
int store_series_write(store *st, double simulated_s, double cost_usd);

/* The buffer being filled written inside the caller's transaction. An
 * SQLite code; on failure st->writer_why says why. */
int store_events_write_last(store *st);

/* The event buffers freed. */
void store_events_free(store *st);

/* The wall clock now, UTC, ISO 8601 ("2025-01-31T12:00:00Z"), into buf. */
void store_utc_now(char *buf, size_t len);

/* SQLite's message with the OS error behind it, e.g. "disk I/O error (File
 * too large)": SQLite's own words rarely say that the disk is full. */
const char *store_db_why(sqlite3 *db, int rc, char *buf, size_t len);

/* Check the file's identity and version; create or migrate the schema when
 * writing (store_schema.c). Runs inside the writer's BEGIN IMMEDIATE. */
int store_schema_check(store *st, store_mode mode, char *err, size_t errlen);

/* Run the section @name of reports/schema.sql. Returns an SQLite code
 * (SQLITE_INTERNAL when the compiled-in schema has no such section). */
int store_schema_run(store *st, const char *name);

/* The runs row of a new run, status 'incomplete', stamped with the wall
 * clock; *id receives runs.id. Returns an SQLite code (store_rows.c). */
int store_insert_run_row(store *st, const scenario *s, int64_t *id);

/* The rows of a run's JSON results (store_rows.c), inside the caller's
 * transaction: jobs (a slice at a time), queues, services,
 * microbenchmarks, the hardware row; then the run row's figures and its
 * status (bucket_s: the series' grid). *step names what failed. Returns
 * an SQLite code. */
int store_insert_results(store *st, const char *results_json, double bucket_s, const char **step);

/* The rows of the jobs array that opens at z[a] ('['), our own JSON
 * writer's output (n: the document's length), through the jobs table's
 * INSERT (run_id, idx, a column per path of fields, extra: store_rows.c)
 * for many rows (many, store_kept_batch) and for one (one), in the
 * caller's transaction (store_jobs.c): read here, written by st->writer
 * when there is one. *b receives the array's end (past its ']'). Returns
 * an SQLite code (SQLITE_MISMATCH: the text is not what the writer
 * writes). */
int store_jobs_insert(store *st, sqlite3_stmt *many, sqlite3_stmt *one, const char *const *fields, const char *z,
                      size_t a, size_t n, size_t *b);

/* The jobs table's INSERTs of every column (many rows, store_kept_batch;
 * one row) and its JSON paths, one per column after run_id and idx
 * (store_rows.c). Returns an SQLite code. */
int store_jobs_statements(store *st, sqlite3_stmt **many, sqlite3_stmt **one, const char *const **fields);

/* The run's last transaction begun, unless it is open already (by the
 * writer, for the jobs watched: store_run.c). Returns an SQLite code. */
int store_final_begin(store *st);

/* The jobs watched (store_run_watch) and not yet handed over: queued for
 * the writer; the watch ends (store_jobs.c). Call before the wait that
 * precedes store_run_finish's own writes. */
void store_jobs_feed_end(store *st);

/* Jobs were watched: whether the array opening at z[a] (n: the
 * document's length) is the one they were read from, its end in *b. 1
 * when it is, 0 when no jobs were watched, -1 when it is not (the text is
 * not the document watched). */
int store_jobs_watched(store *st, const char *z, size_t a, size_t n, size_t *b);

/* The watch's buffers freed (NULL feed: nothing). */
void store_jobs_feed_free(store *st);

/* Where the top-level member key (an array) of the document z[0, n)
 * opens: 0 with *a at its '[', -1 when there is none (store_rows.c). */
int store_find_array(const char *z, size_t n, const char *key, size_t *a);

/* The JSON paths of the jobs table's columns after run_id and idx, in
 * their order, NULL-ended ('.' -> '_' names the column: store_rows.c). */
const char *const *store_job_paths(void);

/* The hardware row, when the JSON has a hardware object (store_hw.c). */
int store_insert_hardware(store *st, const char *json_text);

#endif
