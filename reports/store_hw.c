/*
 * store_hw: hardware mode in the results database. A run with --backend
 * has a hardware row (where it was measured: backend, host, devices,
 * libraries, the statistic and the cpu's measured peak) beside its
 * microbenchmarks rows (store_rows.c); `calibrate` reads the measured
 * cases of every complete run back (store_measurements).
 */
#include "reports/store.h"
#include "reports/store_int.h"
#include "base/errmsg.h"
#include "base/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* The hardware row, when the JSON has a hardware object. */
int store_insert_hardware(store *st, const char *json_text) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(st->db, "INSERT INTO hardware(run_id, backend, host, cpu, devices, libraries, ranks, profile, "
                         "profile_source, statistic, peak_fp64_flops, peak_fp32_flops) "
                         "SELECT ?1, json_extract(?2, '$.hardware.backend'), "
                         "json_extract(?2, '$.hardware.host'), json_extract(?2, '$.hardware.cpu'), "
                         "json_extract(?2, '$.hardware.devices'), json_extract(?2, '$.hardware.libraries'), "
                         "json_extract(?2, '$.hardware.ranks'), json_extract(?2, '$.hardware.profile'), "
                         "json_extract(?2, '$.hardware.profile_source'), json_extract(?2, '$.hardware.statistic'), "
                         "json_extract(?2, '$.hardware.peak_fp64_flops'), json_extract(?2, '$.hardware.peak_fp32_flops') "
                         "WHERE json_type(?2, '$.hardware') = 'object'", -1, &q, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, st->run);
        sqlite3_bind_text(q, 2, json_text, -1, SQLITE_STATIC);
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(q);
    return rc;
}

/* ---- measurements read back (calibration) ------------------------------- */

int store_measurements(store *st, const char *backend, store_measurement **out, int *n, char *err, size_t errlen) {
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = NULL;
    static const char *sql = "SELECT m.op, m.ranks, m.size_bytes, m.m, m.n, m.k, m.precision, m.kind, m.files, "
                             "m.measured_s, m.measured_read_s, m.run_id, h.backend, h.host, h.peak_fp64_flops, "
                             "h.peak_fp32_flops, h.statistic, h.devices, %s "
                             "FROM microbenchmarks m JOIN runs r ON r.id = m.run_id "
                             "JOIN hardware h ON h.run_id = m.run_id "
                             "WHERE r.status = 'complete' AND m.measured_s > 0 AND (?1 IS NULL OR h.backend = ?1) "
                             "ORDER BY m.run_id, m.idx";
    char full[640];
    /* A version 3 or 4 file, read as it is, has no groups column: its GEMMs are single. */
    snprintf(full, sizeof full, sql, "m.groups");
    int rc = sqlite3_prepare_v2(st->db, full, -1, &q, NULL);
    if (rc != SQLITE_OK) {
        snprintf(full, sizeof full, sql, "NULL");
        rc = sqlite3_prepare_v2(st->db, full, -1, &q, NULL);
    }
    if (rc == SQLITE_OK && backend) sqlite3_bind_text(q, 1, backend, -1, SQLITE_STATIC);
    store_measurement *v = NULL;
    int cnt = 0;
    size_t cap = 0;
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        const char *op = (const char *)sqlite3_column_text(q, 0);
        const char *prec = (const char *)sqlite3_column_text(q, 6), *kind = (const char *)sqlite3_column_text(q, 7);
        store_measurement x;
        memset(&x, 0, sizeof x);
        if (!op) continue;
        if (!strcmp(op, "gemm")) {
            x.c.kind = MBC_GEMM;
            x.c.m = sqlite3_column_int(q, 3);
            x.c.n = sqlite3_column_int(q, 4);
            x.c.k = sqlite3_column_int(q, 5);
            x.c.groups = sqlite3_column_int(q, 18);   /* NULL reads as 0: one GEMM */
            int p = prec ? precision_parse(prec) : -1;
            if (p < 0) continue;
            x.c.precision = (precision)p;
        } else if (!strcmp(op, "copy")) {
            int k = kind ? copy_kind_parse(kind) : -1;
            if (k < 0) continue;
            x.c.kind = MBC_COPY;
            x.c.copy = (copy_kind)k;
        } else if (!strcmp(op, "storage-write")) {
            x.c.kind = MBC_STORAGE;
            x.c.files = sqlite3_column_int(q, 8);
        } else {
            int o = coll_op_parse(op);
            if (o < 0) continue;
            x.c.kind = MBC_COLLECTIVE;
            x.c.op = (coll_op)o;
            x.c.ranks = sqlite3_column_int(q, 1);
        }
        x.c.size_bytes = sqlite3_column_double(q, 2);
        x.time_s = sqlite3_column_double(q, 9);
        x.read_s = sqlite3_column_double(q, 10);
        x.run_id = sqlite3_column_int64(q, 11);
        snprintf(x.backend, sizeof x.backend, "%s", sqlite3_column_text(q, 12) ? (const char *)sqlite3_column_text(q, 12) : "");
        snprintf(x.host, sizeof x.host, "%s", sqlite3_column_text(q, 13) ? (const char *)sqlite3_column_text(q, 13) : "");
        x.peak_fp64_flops = sqlite3_column_double(q, 14);      /* NULL reads as 0: not measured */
        x.peak_fp32_flops = sqlite3_column_double(q, 15);
        snprintf(x.devices, sizeof x.devices, "%s", sqlite3_column_text(q, 17) ? (const char *)sqlite3_column_text(q, 17) : "");
        snprintf(x.statistic, sizeof x.statistic, "%s",
                 sqlite3_column_text(q, 16) ? (const char *)sqlite3_column_text(q, 16) : "median");   /* before v3: median */
        if (GROW(v, cap, (size_t)cnt + 1)) {
            rc = SQLITE_NOMEM;
            break;
        }
        v[cnt++] = x;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(q);
    if (rc != SQLITE_OK) {
        free(v);
        errmsg_set(err, errlen, "%s: cannot read the measurements: %s", st->path, sqlite3_errmsg(st->db));
        return STORE_FAILED;
    }
    *out = v;
    *n = cnt;
    return STORE_OK;
}
