/*
 * store_import: a run recorded from a results JSON that another machine
 * wrote (store_import_results in store.h): `calibrate --from-json` brings
 * measurements taken elsewhere (a GPU machine) into a database here, so
 * they are fitted as the machine's own run would be.
 */
#include "reports/store.h"
#include "reports/store_int.h"
#include "base/errmsg.h"

#include <stdio.h>

#include <sqlite3.h>

/* 1 when text is JSON with a hardware object, 0 when not, or an SQLite error. */
static int has_hardware(store *st, const char *json_text, int *rc) {
    sqlite3_stmt *q = NULL;
    int yes = 0;
    *rc = sqlite3_prepare_v2(st->db, "SELECT json_valid(?1) AND json_type(?1, '$.hardware') = 'object'", -1, &q, NULL);
    if (*rc == SQLITE_OK) {
        sqlite3_bind_text(q, 1, json_text, -1, SQLITE_STATIC);
        *rc = sqlite3_step(q);
        if (*rc == SQLITE_ROW) yes = sqlite3_column_int(q, 0), *rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    return yes;
}

/* The runs row: scenario, seed and version from the JSON, file = source. */
static int insert_run(store *st, const char *json_text, const char *source) {
    char when[32];
    store_utc_now(when, sizeof when);
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(st->db,
                                "INSERT INTO runs(status, scenario, scenario_file, scenario_xml, seed, version, "
                                "wall_started_at) SELECT 'incomplete', coalesce(json_extract(?1, '$.scenario'), "
                                "'imported'), ?2, '', coalesce(json_extract(?1, '$.seed'), 0), "
                                "coalesce(json_extract(?1, '$.version'), ?3), ?4",
                                -1, &q, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(q, 1, json_text, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, source, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, CT_VERSION, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 4, when, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        if (rc == SQLITE_OK) st->run = sqlite3_last_insert_rowid(st->db);
    }
    sqlite3_finalize(q);
    return rc;
}

int store_import_results(store *st, const char *json_text, const char *source, int64_t *run_id, char *err,
                         size_t errlen) {
    int rc;
    if (!has_hardware(st, json_text, &rc)) {
        if (rc == SQLITE_OK)
            errmsg_set(err, errlen, "%s: not a results JSON with measurements (expected a \"hardware\" object and "
                                    "\"microbenchmarks\", as validate --json writes)", source);
        else errmsg_set(err, errlen, "%s: cannot read it: %s", st->path, sqlite3_errmsg(st->db));
        return rc == SQLITE_OK ? STORE_BAD_INPUT : STORE_FAILED;
    }
    const char *step = "begin";
    rc = store_exec(st->db, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) step = "run", rc = insert_run(st, json_text, source);
    if (rc == SQLITE_OK) rc = store_insert_results(st, json_text, 0, &step);
    if (rc == SQLITE_OK) step = "commit", rc = store_exec(st->db, "COMMIT");
    if (rc != SQLITE_OK) {
        char why[256];
        errmsg_set(err, errlen, "%s: cannot import %s (%s): %s", st->path, source, step,
                   store_db_why(st->db, rc, why, sizeof why));
        store_exec(st->db, "ROLLBACK");
        st->run = 0;
        return STORE_FAILED;
    }
    if (run_id) *run_id = st->run;
    return STORE_OK;
}
