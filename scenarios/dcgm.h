/*
 * dcgm: GPU telemetry as NVIDIA's DCGM exporter publishes it, read from a
 * file in either of the two forms people keep it in:
 *
 * - a Prometheus HTTP API answer (`/api/v1/query_range`, resultType
 *   "matrix"; "vector" from `/api/v1/query` too): {"status": "success",
 *   "data": {"resultType": "matrix", "result": [{"metric": {labels},
 *   "values": [[unix_s, "value"], ...]}]}} (Prometheus documentation,
 *   "HTTP API", section "Range queries" and "Expression query result
 *   formats");
 * - the text exposition format of one scrape of the exporter's /metrics
 *   (Prometheus documentation, "Exposition formats", text-based format:
 *   `# HELP` and `# TYPE` comments, then `name{label="value",...} value
 *   [timestamp_ms]`, label values escaped with \\, \" and \n).
 *
 * The metrics read are those of dcgm-exporter's default counters
 * (NVIDIA/dcgm-exporter etc/default-counters.csv: DCGM_FI_DEV_XID_ERRORS, a
 * gauge, "value of the last XID error encountered"; DCGM_FI_DEV_GPU_UTIL;
 * DCGM_FI_DEV_POWER_USAGE; DCGM_FI_DEV_ROW_REMAP_FAILURE, and the
 * commented-out DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter), plus
 * DCGM_FI_DEV_ROW_REMAP_PENDING; other series are counted and skipped.
 * Labels: `Hostname` (older exporters) or `hostname`, else Prometheus's
 * `instance` without its port; `gpu` (the index), `UUID`, `modelName`.
 */
#ifndef CT_DCGM_H
#define CT_DCGM_H

#include <stddef.h>

typedef enum dcgm_metric {
    DCGM_XID,                     /* DCGM_FI_DEV_XID_ERRORS: the last XID code (gauge) */
    DCGM_ECC_DBE,                 /* DCGM_FI_DEV_ECC_DBE_VOL_TOTAL: double-bit ECC errors (counter) */
    DCGM_REMAP_FAILURE,           /* DCGM_FI_DEV_ROW_REMAP_FAILURE: 1 when row remapping failed */
    DCGM_REMAP_PENDING,           /* DCGM_FI_DEV_ROW_REMAP_PENDING: 1 when a remap waits for a reset */
    DCGM_GPU_UTIL,                /* DCGM_FI_DEV_GPU_UTIL: % */
    DCGM_POWER,                   /* DCGM_FI_DEV_POWER_USAGE: W */
    DCGM_METRIC_COUNT
} dcgm_metric;

const char *dcgm_metric_name(dcgm_metric m);   /* "DCGM_FI_DEV_XID_ERRORS", ... */

#define DCGM_HOST_MAX 64

typedef struct dcgm_sample {
    dcgm_metric metric;
    char host[DCGM_HOST_MAX];     /* "" when the series names none */
    int gpu;                      /* -1 when the series names none */
    double t_s;                   /* Unix seconds */
    double value;
    int line;                     /* where it was read */
} dcgm_sample;

typedef struct dcgm_data {
    dcgm_sample *s;
    int n;
    size_t cap;
    int n_series;                 /* series read (JSON results, or text lines) */
    int skipped_series;           /* series of other metrics */
    char model[64];               /* the first modelName seen ("" none) */
} dcgm_data;

/* Add a Prometheus query answer's samples to d. 0, or -1 with err
 * "path:line: what was expected" (d keeps what it had). */
int dcgm_read_prom_json(dcgm_data *d, const char *path, char *err, size_t errlen);

/* Add one scrape in the text exposition format to d; samples without a
 * timestamp are taken at now_s. 0, or -1 with err "path:line: ...". */
int dcgm_read_text(dcgm_data *d, const char *path, double now_s, char *err, size_t errlen);

void dcgm_free(dcgm_data *d);

/* What the telemetry says failed, one event per change: an XID gauge that
 * takes a new non-zero value (the first sample of a series counts when it
 * is non-zero: the XID happened by then), a double-bit counter that grows
 * (a counter that falls was reset: its new value is the growth), a row
 * remap failure flag that becomes 1. */
typedef struct dcgm_event {
    dcgm_metric metric;           /* DCGM_XID, DCGM_ECC_DBE or DCGM_REMAP_FAILURE */
    char host[DCGM_HOST_MAX];
    int gpu;
    double t_s;
    int xid;                      /* DCGM_XID: the code */
    double count;                 /* DCGM_ECC_DBE: errors added */
} dcgm_event;

/* The events of d (d's samples sorted by metric, host, GPU and time on
 * the way; *ev malloc'd, NULL when none).
 * Returns how many, or -1 when memory runs out. */
int dcgm_events(dcgm_data *d, dcgm_event **ev);

/* The fleet the telemetry shows: distinct hosts, the most GPUs one host
 * reported, the first and last sample times, the mean GPU utilisation (%,
 * NAN without samples), the mean power (W, NAN without samples). 0, or -1
 * when memory runs out. */
typedef struct dcgm_fleet {
    int hosts, gpus_per_host;
    double t_first_s, t_last_s, util_mean_pct, power_mean_w;
} dcgm_fleet;
int dcgm_fleet_of(const dcgm_data *d, dcgm_fleet *f);

#endif
