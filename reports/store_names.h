/*
 * store_names: the names the results store shares with its callers and
 * among its own files: statuses (equal to the CLI's exit statuses), the
 * schema version, the ways to open a file. reports/store.h is the store's
 * contract and includes this; the store's lower files (the schema, the
 * SQLite error words) need only these names, so they depend on nothing
 * above them.
 */
#ifndef CT_STORE_NAMES_H
#define CT_STORE_NAMES_H

#define STORE_OK 0
#define STORE_FAILED 1
#define STORE_BAD_INPUT 2

#define STORE_SCHEMA_VERSION 5       /* 2: microbenchmarks and hardware tables; 3: statistic;
                                        4: productive utilisation, lost work by cause,
                                           serving GPU-hours, SLO goodput, a job's own cost;
                                        5: a grouped GEMM case's groups */
/* The oldest version a reader opens as it is (STORE_READ), without the
 * upgrade a writer makes: the versions after it only added columns, which
 * readers take as not known (NULL). An older file is refused for reading
 * until a run is written to it. */
#define STORE_READ_OLDEST 3
#define STORE_MAX_POINTS 2000        /* rows per time series per run, at most */

typedef struct store store;

typedef enum store_mode {
    STORE_WRITE,                     /* create the file and schema when missing */
    STORE_READ                       /* the file must exist and be a results database */
} store_mode;

/* A store status for an SQLite result code: STORE_BAD_INPUT for a file
 * that is not (our) database, else STORE_FAILED. */
int store_sql_status(int rc);

#endif
