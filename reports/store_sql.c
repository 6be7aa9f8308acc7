/*
 * store_sql: SQLite's result codes in the store's words: the status a code
 * means (a file that is not our database is bad input; anything else a
 * failed read or write) and the one-line reason a message gives. Every
 * file of the store reports SQLite errors through these two, runs a
 * statement without results through store_exec and binds a row's values
 * through store_bind.
 */
#include "reports/store_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

const char *store_db_why(sqlite3 *db, int rc, char *buf, size_t len) {
    if ((rc & 0xff) == SQLITE_NOMEM || (!db && rc != SQLITE_OK)) {
        snprintf(buf, len, "out of memory");
        return buf;
    }
    if (sqlite3_errcode(db) == SQLITE_OK) {   /* the handle's error was reset: the code says it */
        snprintf(buf, len, "%s", sqlite3_errstr(rc));
        return buf;
    }
    int e = sqlite3_system_errno(db);
    if (e) snprintf(buf, len, "%s (%s)", sqlite3_errmsg(db), strerror(e));
    else snprintf(buf, len, "%s", sqlite3_errmsg(db));
    return buf;
}

int store_sql_status(int rc) {
    return (rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT ? STORE_BAD_INPUT : STORE_FAILED;
}

int store_exec(sqlite3 *db, const char *sql) {
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static int bind_one(sqlite3_stmt *q, int i, char type, va_list *ap) {
    switch (type) {
    case 'i': return sqlite3_bind_int(q, i, va_arg(*ap, int));
    case 'I': return sqlite3_bind_int64(q, i, (sqlite3_int64)va_arg(*ap, int64_t));
    case 'd': return sqlite3_bind_double(q, i, va_arg(*ap, double));
    case 'n': {
        double v = va_arg(*ap, double);
        return isfinite(v) ? sqlite3_bind_double(q, i, v) : sqlite3_bind_null(q, i);
    }
    case 't': {
        const char *z = va_arg(*ap, const char *);
        return z ? sqlite3_bind_text(q, i, z, -1, SQLITE_STATIC) : sqlite3_bind_null(q, i);
    }
    default: return SQLITE_MISUSE;
    }
}

int store_bind(sqlite3_stmt *q, const char *types, ...) {
    va_list ap;
    va_start(ap, types);
    int rc = SQLITE_OK;
    for (int i = 0; types[i] && rc == SQLITE_OK; i++) rc = bind_one(q, i + 1, types[i], &ap);
    va_end(ap);
    return rc;
}
