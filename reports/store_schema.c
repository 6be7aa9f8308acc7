/*
 * store_schema: the results database's schema, from reports/schema.sql as
 * compiled into the program (tools/embed.sh), and its version.
 *
 * A file is ours when its application_id is 'CTR1'; PRAGMA user_version is
 * its schema version. A new file gets section @base (version 1) and then,
 * like an older file opened by a writer, each section @v2 ... @vN up to
 * STORE_SCHEMA_VERSION in the writer's transaction; a reader opens a file
 * of version STORE_READ_OLDEST or later as it is. The sections are found
 * by scanning the text (a few kilobytes) when a file is opened.
 */
#include "reports/store_names.h"
#include "reports/store_int.h"
#include "base/errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "scenarios/embedded.h"

/* 'CTR1' in the file header: tells our databases from other SQLite files. */
#define STORE_APPLICATION_ID 0x43545231

#define SCHEMA_FILE "reports/schema.sql"

static const char *schema_text(void) {
    for (const embedded_file *f = embedded_files; f->path; f++)
        if (!strcmp(f->path, SCHEMA_FILE)) return f->data;
    return NULL;
}

/* The text of section @name: from the line after "-- @name" to the next
 * "-- @" line or the end; *n its length. NULL when there is none. */
static const char *section(const char *name, size_t *n) {
    const char *z = schema_text();
    size_t len = strlen(name);
    for (const char *p = z; p && (p = strstr(p, "-- @")) != NULL; p += 4) {
        if (p != z && p[-1] != '\n') continue;
        if (strncmp(p + 4, name, len) || (p[4 + len] != '\n' && p[4 + len] != '\r')) continue;
        const char *a = strchr(p, '\n') + 1, *b = a;
        while ((b = strstr(b, "-- @")) != NULL && b[-1] != '\n') b += 4;
        *n = b ? (size_t)(b - a) : strlen(a);
        return a;
    }
    return NULL;
}

int store_schema_run(store *st, const char *name) {
    size_t n;
    const char *a = section(name, &n);
    if (!a) return SQLITE_INTERNAL;
    char *sql = strndup(a, n);
    if (!sql) return SQLITE_NOMEM;
    int rc = store_exec(st->db, sql);
    free(sql);
    return rc;
}

static int int_pragma(sqlite3 *db, const char *sql, int *out) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* A new, empty file: the first version's tables and our identity. */
static int create_schema(store *st, char *err, size_t errlen) {
    char pragmas[128];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = 1;", STORE_APPLICATION_ID);
    int rc = store_schema_run(st, "base");
    if (rc == SQLITE_OK) rc = store_exec(st->db, pragmas);
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot create the schema: %s", st->path,
                   rc == SQLITE_INTERNAL ? "no @base section compiled in" : sqlite3_errmsg(st->db));
        return store_sql_status(rc);
    }
    return STORE_OK;
}

/* Take a file of version ver to STORE_SCHEMA_VERSION, a section at a time. */
static int migrate(store *st, int ver, char *err, size_t errlen) {
    for (int v = ver; v < STORE_SCHEMA_VERSION; v++) {
        char name[16], bump[64];
        snprintf(name, sizeof name, "v%d", v + 1);
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d;", v + 1);
        int rc = store_schema_run(st, name);
        if (rc == SQLITE_OK) rc = store_exec(st->db, bump);
        if (rc != SQLITE_OK) {
            errmsg_set(err, errlen, "%s: cannot upgrade the results schema from version %d: %s", st->path, v,
                       rc == SQLITE_INTERNAL ? "no such section compiled in" : sqlite3_errmsg(st->db));
            return STORE_FAILED;
        }
    }
    return STORE_OK;
}

int store_schema_check(store *st, store_mode mode, char *err, size_t errlen) {
    sqlite3 *db = st->db;
    int app = 0, ver = 0, tables = 0, rc;
    if ((rc = int_pragma(db, "PRAGMA application_id", &app)) != SQLITE_OK ||
        (rc = int_pragma(db, "PRAGMA user_version", &ver)) != SQLITE_OK ||
        (rc = int_pragma(db, "SELECT count(*) FROM sqlite_schema", &tables)) != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: %s", st->path,
               store_sql_status(rc) == STORE_BAD_INPUT ? "not an SQLite database (clustertwin results database expected)"
                                                 : sqlite3_errmsg(db));
        return store_sql_status(rc);
    }
    if (app != STORE_APPLICATION_ID && (app != 0 || tables > 0)) {
        errmsg_set(err, errlen, "%s: an SQLite database of another program, not clustertwin results", st->path);
        return STORE_BAD_INPUT;
    }
    if (app == 0) {                                    /* a new, empty file */
        if (mode == STORE_READ) {
            errmsg_set(err, errlen, "%s: an empty database, no runs in it", st->path);
            return STORE_BAD_INPUT;
        }
        int status = create_schema(st, err, errlen);
        if (status != STORE_OK) return status;
        ver = 1;                                       /* migrated below to the current version */
    }
    if (ver > STORE_SCHEMA_VERSION) {
        errmsg_set(err, errlen, "%s: written by a newer clustertwin (results schema version %d; this one "
                            "reads versions up to %d)", st->path, ver, STORE_SCHEMA_VERSION);
        return STORE_BAD_INPUT;
    }
    if (ver == STORE_SCHEMA_VERSION) return STORE_OK;
    if (ver < 1) {
        errmsg_set(err, errlen, "%s: results schema version %d is not supported (this clustertwin "
                            "reads version %d)", st->path, ver, STORE_SCHEMA_VERSION);
        return STORE_BAD_INPUT;
    }
    if (mode == STORE_READ && ver >= STORE_READ_OLDEST) return STORE_OK;   /* read as it is */
    if (mode == STORE_READ) {
        errmsg_set(err, errlen, "%s: results schema version %d is older than this clustertwin's %d; "
                            "store a run in it once (run --db) to upgrade it", st->path, ver,
               STORE_SCHEMA_VERSION);
        return STORE_BAD_INPUT;
    }
    return migrate(st, ver, err, errlen);
}
