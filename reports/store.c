/*
 * store: the SQLite results database (see store.h for the life of a run,
 * store_int.h for the store's files). This file opens one: what the path
 * is (a directory, a FIFO, a symlink, a file of another program), whether
 * the file is intact, the connection's settings; store_schema.c then
 * checks, creates or migrates the schema.
 *
 * Load: a 54-day 16K-GPU run publishes ~90,000 events (mostly checkpoint
 * start/end) and ~50,000 samples. Events are buffered and written 16,384 at
 * a time in short transactions (a prepared INSERT each, ~1-2 us), so the
 * write lock is held for tens of milliseconds, not for the whole run.
 * Samples go to the in-memory resampler (reports/series.h) and are written
 * once, at the end, as at most STORE_MAX_POINTS rows per series. Measured:
 * that run takes 0.26 s without the store and 0.52 s with it; a run of
 * 60,000 batch jobs (180,000 events) 0.15 s and ~1.5 s, most of it writing
 * the jobs and the 15 MB JSON text. A run adds ~0.4 MB of series points and
 * ~60 bytes per event to the file.
 *
 * Journal: SQLite's default rollback journal, not WAL. A results file is
 * copied around, kept next to scenarios, often on NFS home directories of
 * cluster login nodes where WAL's shared memory does not work; with the
 * rollback journal the database is one file at rest. Its cost, readers
 * blocked while a batch commits, is a few milliseconds per batch.
 * A killed writer leaves a hot journal that the next connection (the
 * report's too: it opens read-write for that reason) rolls back.
 */
#include "reports/store.h"
#include "reports/store_int.h"
#include "reports/fileout.h"
#include "base/errmsg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

int store_kept(store *st, kept_stmt k, const char *sql, sqlite3_stmt **q) {
    int rc = SQLITE_OK;
    if (!st->kept[k]) rc = sqlite3_prepare_v2(st->db, sql, -1, &st->kept[k], NULL);
    *q = st->kept[k];
    return rc;
}

void store_utc_now(char *buf, size_t len) {
    time_t now = time(NULL);
    struct tm tm;
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
}

void store_kept_done(sqlite3_stmt *q) {
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
}

/* ---- opening ------------------------------------------------------------- */

/* PRAGMA quick_check on an existing file before anything reads or writes
 * it: a corrupt database is refused (STORE_BAD_INPUT, err naming the file
 * and what the check found) rather than written into or reported on. A
 * file that is not SQLite at all keeps its own message; a busy or failing
 * read is STORE_FAILED. */
static int quick_check(sqlite3 *db, const char *path, char *err, size_t errlen) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &q, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(q);
    int status = STORE_OK;
    if (rc == SQLITE_ROW) {
        const char *z = (const char *)sqlite3_column_text(q, 0);
        if (!z || strcmp(z, "ok")) {
            errmsg_set(err, errlen, "%s: the database is corrupt (quick_check: %.300s)", path, z ? z : "no answer");
            status = STORE_BAD_INPUT;
        }
    } else if ((rc & 0xff) == SQLITE_CORRUPT) {
        errmsg_set(err, errlen, "%s: the database is corrupt (quick_check: %.300s)", path, sqlite3_errmsg(db));
        status = STORE_BAD_INPUT;
    } else if ((rc & 0xff) == SQLITE_NOTADB) {
        errmsg_set(err, errlen, "%s: not an SQLite database (clustertwin results database expected)", path);
        status = STORE_BAD_INPUT;
    } else if (rc != SQLITE_DONE) {
        status = store_sql_status(rc);
        errmsg_set(err, errlen, "%s: cannot read: %s", path, sqlite3_errmsg(db));
    }
    sqlite3_finalize(q);
    return status;
}

/* Where the database is: a symlink is followed (the link stays a link) to
 * target; *existed says whether the target is there. Refuses what is not
 * a results file to be (a directory, a FIFO), a missing file for reading
 * and a new file in a directory it cannot be created in. */
static int locate(const char *path, store_mode mode, char *target, size_t len, int *existed, char *err,
                  size_t errlen) {
    unsigned tmode;
    if (fileout_resolve(path, target, len, existed, &tmode) != 0) {
        errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return errno == ELOOP ? STORE_BAD_INPUT : STORE_FAILED;
    }
    struct stat sb = { .st_mode = (mode_t)tmode };
    if (*existed && S_ISDIR(sb.st_mode)) {
        errmsg_set(err, errlen, "%s: is a directory (a results database file expected)", path);
        return STORE_BAD_INPUT;
    }
    if (*existed && !S_ISREG(sb.st_mode)) {
        errmsg_set(err, errlen, "%s: not a regular file (a results database file expected)", path);
        return STORE_BAD_INPUT;
    }
    if (!*existed && mode == STORE_READ) {
        errmsg_set(err, errlen, "%s: no such file", path);
        return STORE_BAD_INPUT;
    }
    if (!*existed && mode == STORE_WRITE) {
        /* A new file needs a writable directory; say so plainly (SQLite
         * would report its last fallback, often "No such file"). */
        char dir[4096];
        const char *slash = strrchr(target, '/');
        if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - target) + (slash == target), target);
        else snprintf(dir, sizeof dir, ".");
        if (access(dir, W_OK | X_OK) != 0) {
            errmsg_set(err, errlen, "%s: cannot open: cannot create the file: %s", path, strerror(errno));
            return STORE_FAILED;
        }
    }
    return STORE_OK;
}

/* The connection to target, checked intact (an existing file) and set up. */
static int connect_db(store *st, const char *target, store_mode mode, int existed, char *err, size_t errlen) {
    const char *path = st->path;
    /* Read-write even for reading: a run killed mid-transaction leaves a
     * hot journal that only a writer can roll back. NOMUTEX: one thread
     * uses the connection at a time (store_writer.c hands it over under
     * its own mutex), so SQLite's lock around every call, 4% of the
     * 10K-GPU year's samples in the binds alone (perf, "The results store,
     * fifth round" in docs/performance.md), guards nothing. */
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (mode == STORE_WRITE ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(target, &st->db, flags, NULL), status;
    if (rc != SQLITE_OK) {
        int e = st->db ? sqlite3_system_errno(st->db) : ENOMEM;
        errmsg_set(err, errlen, "%s: cannot open: %s", path, e ? strerror(e) : sqlite3_errmsg(st->db));
        return STORE_FAILED;
    }
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_timeout(st->db, 30000);
    if (mode == STORE_WRITE && sqlite3_db_readonly(st->db, "main") == 1) {
        errmsg_set(err, errlen, "%s: cannot write (permission denied)", path);
        return STORE_FAILED;
    }
    /* First of all, before a pragma reads the schema: is it intact? */
    if (existed && (status = quick_check(st->db, path, err, errlen)) != STORE_OK) return status;
    /* A run's last transaction can be tens of MB (60,000 jobs and their
     * JSON); a cache that holds it avoids spilling pages mid-transaction,
     * each spill an extra journal sync. */
    if ((rc = store_exec(st->db, "PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536")) != SQLITE_OK) {
        status = store_sql_status(rc);
        errmsg_set(err, errlen, "%s: %s", path, status == STORE_BAD_INPUT ? "not an SQLite database" : sqlite3_errmsg(st->db));
        return status;
    }
    return STORE_OK;
}

/* The schema checked, and for a writer created or migrated, in one
 * transaction: two processes creating the same new file do not both
 * create it. */
static int settle_schema(store *st, store_mode mode, char *err, size_t errlen) {
    int rc, status;
    if (mode == STORE_WRITE && (rc = store_exec(st->db, "BEGIN IMMEDIATE")) != SQLITE_OK) {
        status = store_sql_status(rc);
        errmsg_set(err, errlen, "%s: %s", st->path,
               status == STORE_BAD_INPUT ? "not an SQLite database (clustertwin results database expected)"
                                         : sqlite3_errmsg(st->db));
        return status;
    }
    status = store_schema_check(st, mode, err, errlen);
    if (mode == STORE_WRITE) {
        if (status == STORE_OK && (rc = store_exec(st->db, "COMMIT")) != SQLITE_OK) {
            status = store_sql_status(rc);
            char why[256];
            errmsg_set(err, errlen, "%s: cannot write: %s", st->path, store_db_why(st->db, rc, why, sizeof why));
        }
        if (status != STORE_OK) store_exec(st->db, "ROLLBACK");
    }
    return status;
}

int store_open(const char *path, store_mode mode, store **out, char *err, size_t errlen) {
    *out = NULL;
    if (!path || !*path) {
        errmsg_set(err, errlen, "results database: empty path");
        return STORE_BAD_INPUT;
    }
    char target[FILEOUT_PATH_MAX];
    int existed;
    int status = locate(path, mode, target, sizeof target, &existed, err, errlen);
    if (status != STORE_OK) return status;
    store *st = calloc(1, sizeof *st);
    if (!st || !(st->path = strdup(path))) {
        free(st);
        errmsg_set(err, errlen, "%s: out of memory", path);
        return STORE_FAILED;
    }
    st->idle = -1;
    for (int i = 0; i < N_BUSY; i++) st->busy_of[i] = -1;
    status = connect_db(st, target, mode, existed, err, errlen);
    if (status == STORE_OK) status = settle_schema(st, mode, err, errlen);
    if (status == STORE_OK) {
        *out = st;
        return STORE_OK;
    }
    /* the target is removed only when this call made it */
    sqlite3_close(st->db);
    st->db = NULL;
    if (!existed && mode == STORE_WRITE) {
        char j[FILEOUT_PATH_MAX + 16];
        unlink(target);
        snprintf(j, sizeof j, "%s-journal", target);
        unlink(j);
    }
    store_close(st);
    return status;
}

void store_close(store *st) {
    if (!st) return;
    store_writer_stop(st->writer);    /* before the connection goes */
    store_jobs_feed_free(st);
    for (int i = 0; i < KEPT_N; i++) sqlite3_finalize(st->kept[i]);
    sqlite3_close(st->db);
    series_free(st->ss);
    for (int i = 0; i < st->n_names; i++) {
        free(st->series_entity[i]);
        free(st->series_name[i]);
    }
    free(st->series_entity);
    free(st->series_name);
    free(st->series_of);
    store_events_free(st);
    free(st->path);
    free(st);
}

const char *store_path(const store *st) { return st->path; }


void store_test_max_value_bytes(store *st, int bytes) {
    sqlite3_limit(st->db, SQLITE_LIMIT_LENGTH, bytes);
}
