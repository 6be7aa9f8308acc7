/*
 * rundata_doc: a stored run's JSON results document given back whole
 * (rundata.h: rundata_document), for `clustertwin report --format json`.
 *
 * The run is chosen as rundata_load chooses it (0: the latest complete
 * run, else the latest); the text is the store's (store_run_json,
 * reports/store_doc.c), which rebuilds jobs[] from the jobs table when
 * runs.results_json was kept without them.
 */
#include "reports/rundata.h"
#include "reports/rundata_int.h"
#include "base/errmsg.h"

#include <stdlib.h>

/* The id and status of run id (0: the latest complete, else the latest).
 * SQLITE_ROW, SQLITE_DONE (no such run) or the read's error. */
static int run_of(sqlite3 *db, int64_t id, rd_document *d) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, id > 0 ? "SELECT id, status FROM runs WHERE id = ?"
                                           : "SELECT id, status FROM runs " RD_DEFAULT_RUN,
                                -1, &q, NULL);
    if (rc != SQLITE_OK) return rc;
    if (id > 0) sqlite3_bind_int64(q, 1, id);
    if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        d->id = sqlite3_column_int64(q, 0);
        rd_col_text(q, 1, d->status, sizeof d->status);
    }
    sqlite3_finalize(q);
    return rc;
}

int rundata_document(rundata_db *rd, int64_t id, rd_document *out, char *err, size_t errlen) {
    *out = (rd_document){ 0 };
    int rc = run_of(rd->db, id, out);
    if (rc == SQLITE_DONE) {
        if (id > 0) errmsg_set(err, errlen, "%s: no run %lld in the database", rundata_path(rd), (long long)id);
        else errmsg_set(err, errlen, "%s: no runs in the database", rundata_path(rd));
        return 2;
    }
    if (rc != SQLITE_ROW) {
        errmsg_set(err, errlen, "%s: cannot read the database: %s", rundata_path(rd), sqlite3_errmsg(rd->db));
        return 1;
    }
    if ((rc = store_run_json(rd->st, out->id, &out->text, err, errlen)) != STORE_OK) return rc;
    if (!out->text) {
        errmsg_set(err, errlen, "%s: run %lld has no JSON results (status %s: it did not finish)", rundata_path(rd),
                   (long long)out->id, out->status);
        return 2;
    }
    return 0;
}

void rundata_document_free(rd_document *d) {
    free(d->text);
    d->text = NULL;
}
