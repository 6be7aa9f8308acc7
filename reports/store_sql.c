/*
 * store_sql: SQLite's result codes in the store's words: the status a code
 * means (a file that is not our database is bad input; anything else a
 * failed read or write) and the one-line reason a message gives. Every
 * file of the store reports SQLite errors through these two, and runs a
 * statement without results through store_exec.
 */
#include "reports/store_int.h"

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
