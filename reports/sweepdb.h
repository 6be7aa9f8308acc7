/*
 * sweepdb: sweeps in the results database, and merging databases.
 *
 * Added to the store's schema on first use (section @sweeps of
 * reports/schema.sql, CREATE TABLE IF NOT EXISTS: a database without sweeps
 * stays as it was, and older readers ignore the new tables). The functions
 * are the store's (reports/store_sweep.c):
 *
 *   sweeps        one row per (scenario text, varied paths, fixed overrides):
 *                 rerunning the same sweep, or one with more values or
 *                 replicas, finds it and adds to it
 *   sweep_points  one row per point: its values as written (a JSON array,
 *                 the key) and in SI units (JSON array, null for words)
 *   sweep_runs    (sweep, point, replica) -> seed and runs.id: a replica
 *                 is done when its row exists (written with the run in one
 *                 transaction), which is what a resumed sweep skips
 *   sweep_unfit   one row per point that does not fit (its world cannot be
 *                 built: GPU memory, more GPUs than the cluster) and why;
 *                 such a point has no runs
 *   sweep_stats   per (point, metric, statistic): the estimate over the
 *                 replicas and its confidence interval (models/confidence.h),
 *                 written when a sweep or plan ends, so SQL reads them
 *                 without recomputing; derived data, replaced each time
 *
 * Each replica's run is a runs row (store_run_insert: its JSON, jobs,
 * queues and services; no events or time series).
 *
 * Errors as store.h: STORE_OK, STORE_FAILED, STORE_BAD_INPUT with err set.
 */
#ifndef CT_SWEEPDB_H
#define CT_SWEEPDB_H

#include <stddef.h>
#include <stdint.h>

#include "reports/goal.h"
#include "reports/store.h"

/* Find the sweep of (xml, params, sets) or add it; replicas is raised to
 * at least the given count. params and sets are JSON arrays of strings. */
int sweepdb_begin(store *st, const char *scenario_name, const char *file, const char *xml, const char *params,
                  const char *sets, int replicas, int64_t *sweep, char *err, size_t errlen);

/* Add a point (nothing when it exists). key: JSON array of the values as
 * written; x: JSON array of numbers/nulls. */
int sweepdb_point(store *st, int64_t sweep, const char *key, const char *x, char *err, size_t errlen);

/* done[r] = 1 for each replica r < replicas of the point already stored. */
int sweepdb_done(store *st, int64_t sweep, const char *key, int replicas, unsigned char *done, char *err,
                 size_t errlen);

/* Store one replica's run and its sweep_runs row, together or not at all
 * (a savepoint: inside a batch, or a transaction of its own). s is
 * the scenario as run (overrides applied, seed set). */
int sweepdb_record(store *st, int64_t sweep, const char *key, int replica, const scenario *s, const char *json,
                   char *err, size_t errlen);

/* Group the following records in one transaction (begin = 1) or commit
 * them (begin = 0; a no-op outside a batch). A sweep of fast runs commits
 * every half second instead of after every run: one journal sync per batch.
 * A process killed mid-batch loses that batch only (it reruns on resume). */
int sweepdb_batch(store *st, int begin, char *err, size_t errlen);

/* The metric's value in each stored replica of the point, in replica order
 * (NaN when the run has no such value): *v malloc'd, *n its length. */
int sweepdb_values(store *st, int64_t sweep, const char *key, const metric_path *m, double **v, int *n, char *err,
                   size_t errlen);

/* Copy every run of the database at src_path into st, with new ids, and
 * its sweeps (joined to st's sweep of the same scenario and paths). A
 * sweep replica st already has is skipped with its run. Counts what was
 * added and skipped. One transaction per source: on error st is as before. */
int sweepdb_merge(store *st, const char *src_path, int *added, int *skipped, char *err, size_t errlen);

/* Record that a point does not fit, and why (replacing an older reason). */
int sweepdb_unfit(store *st, int64_t sweep, const char *key, const char *reason, char *err, size_t errlen);

/* Why the point does not fit (malloc'd), or NULL when it fits, is not
 * recorded, or the database predates the table. */
char *sweepdb_unfit_reason(store *st, int64_t sweep, const char *key);

/* Record (replace) a statistic of a point's metric: statistic "mean" or
 * "p90"..., its value and confidence interval at ci_level; NaN or infinite
 * numbers are stored as null. */
int sweepdb_stat(store *st, int64_t sweep, const char *key, const char *metric, const char *statistic, int runs,
                 int missing, double value, double ci_low, double ci_high, double ci_level, char *err, size_t errlen);

/* 1 when the database has at least one sweep; the latest sweep's id. */
int sweepdb_latest(store *st, int64_t *sweep);

#endif
