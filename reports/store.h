/*
 * store: the SQLite results database. One file holds many runs; each run
 * keeps its scenario (the XML text), its JSON results, its jobs, every event
 * published on the metric bus, its failure counts and its time series
 * resampled to at most STORE_MAX_POINTS points per series (reports/series.h).
 *
 * Writing a run, as `clustertwin run FILE --db PATH` does it:
 *
 *   store_open(path, STORE_WRITE)   create or migrate the schema
 *   world_new(s, bus)
 *   store_run_begin(st, s, bus)     insert the run as 'incomplete', commit;
 *                                   subscribe the sink to the bus
 *   world_run(w)                    events are written in batched
 *                                   transactions as they come
 *   store_run_finish(st, w, json)   one transaction: the remaining events,
 *                                   the series, the jobs, the failure counts,
 *                                   the cluster figures; status 'complete'
 *
 * A process killed at any point leaves earlier runs intact and its own run
 * marked 'incomplete' (SQLite's rollback journal undoes a half-written
 * transaction when the file is next opened). The schema is reports/schema.sql
 * (compiled in); docs/database.md describes the tables, the versions and
 * who writes and reads them.
 *
 * Errors: functions return STORE_OK, STORE_FAILED (a write or read failed:
 * I/O, disk full, locked, out of memory) or STORE_BAD_INPUT (the path is a
 * directory, not a database, a database of another program or of a newer
 * schema); err then holds one line naming the path. These equal the CLI's
 * exit statuses 0, 1 and 2.
 */
#ifndef CT_STORE_H
#define CT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

#include "reports/store_names.h"   /* statuses, schema version, modes */

/* Open (or create) the results database at path. On success *out owns a
 * new store. On error *out is NULL, nothing is created (a file that did
 * not exist is not left behind) and err says why. */
int store_open(const char *path, store_mode mode, store **out, char *err, size_t errlen);

/* Close; a run begun and not finished stays 'incomplete'. NULL is a no-op. */
void store_close(store *st);

/* Start recording a run of s: insert its row ('incomplete') and commit,
 * then subscribe a sink to bus. Call after world_new() (so the world's
 * metrics are registered) and before world_run(). The scenario and the bus
 * must outlive the store's use of them (until store_run_finish). */
int store_run_begin(store *st, const scenario *s, metric_bus *bus, char *err, size_t errlen);

/* The id of the run begun (runs.id), or 0. */
int64_t store_run_id(const store *st);

/* Read the run's jobs from j, its JSON results about to be built
 * (results_json), as each job's object is written: the writer thread
 * parses and inserts them, in the run's last transaction, while the rest
 * of the document is built, and store_run_finish then finds them written.
 * j must be the document then given to store_run_finish, and live until
 * it returns. Optional: without it store_run_finish reads the jobs from
 * the text. */
struct json;                       /* reports/json.h */
void store_run_watch(store *st, struct json *j);

/* Write the rest of the run in one transaction and mark it 'complete'.
 * results_json is the run's JSON results (reports/results.h, NULL when
 * they could not be made); jobs, queues, services and cluster figures are taken
 * from it so the database and the JSON agree field for field; failure
 * kinds and the run's length come from the world. On error the run stays
 * 'incomplete' and the earlier rows are kept. */
int store_run_finish(store *st, const world *w, const char *results_json, char *err, size_t errlen);

/* The JSON results of run (runs.id) as the run wrote them, into *out
 * (malloc'd, the caller frees): runs.results_json, whose jobs[] is left
 * empty when the jobs table holds the jobs in a form that gives back the
 * same text (store_run_finish decides; reports/store_doc.c). NULL in *out
 * when the run has no document (it did not finish). */
int store_run_json(store *st, int64_t run, char **out, char *err, size_t errlen);

/* Record a finished run from its JSON results alone (no events, time
 * series or failure kinds: a sweep's replicas, simulated elsewhere): the
 * runs row ('complete') and its jobs, queues and services, exactly as
 * store_run_finish fills them from the same JSON. s gives the scenario's
 * name, file and text (the text as run, overrides applied). Makes no
 * transaction of its own: call it inside the caller's BEGIN/COMMIT so the
 * rows land together. *run_id (may be NULL) receives runs.id. */
int store_run_insert(store *st, const scenario *s, const char *results_json, int64_t *run_id, char *err,
                     size_t errlen);

/* A measured microbenchmark case read back for calibration. */
typedef struct store_measurement {
    mb_case c;                       /* c.path is NULL */
    double time_s;                   /* measured (the run's statistic) */
    double read_s;                   /* storage read back, 0 = none */
    int64_t run_id;
    char backend[16];
    char host[128];
    char devices[256];                         /* the run's hardware.devices ("NVIDIA H200 x1 ...") */
    double peak_fp64_flops, peak_fp32_flops;   /* the run's measured core peak, 0 = none */
    char statistic[8];                         /* what time_s is: "min" or "median" */
} store_measurement;

/* Every measured case of every complete run (of backend, when not NULL),
 * oldest run first. *out is malloc'd (caller frees), *n its length
 * (0 is not an error). */
int store_measurements(store *st, const char *backend, store_measurement **out, int *n, char *err, size_t errlen);

/* Record a run from a results JSON with measurements that another machine
 * wrote (`validate --json`, `run --backend ... --json`): its runs row
 * ('complete', scenario named by the JSON's "scenario", file = source), its
 * microbenchmarks and its hardware row, in one transaction, as the run
 * itself would have stored them. Fails (nothing written) when json_text is
 * not JSON or has no hardware object. *run_id (may be NULL) gets runs.id. */
int store_import_results(store *st, const char *json_text, const char *source, int64_t *run_id, char *err,
                         size_t errlen);

/* Mark the run being recorded as interrupted (SIGINT): store_run_finish
 * then writes everything it has, results so far included, but leaves the
 * status 'incomplete', so reports do not take it for a finished run.
 * NULL is a no-op. */
void store_run_interrupted(store *st);

/* The path the store was opened with. */
const char *store_path(const store *st);

/* Tests only: lower SQLite's longest value (SQLITE_LIMIT_LENGTH) on the
 * store's connection to bytes, as if a run's JSON were too long for one. */
void store_test_max_value_bytes(store *st, int bytes);

#endif
