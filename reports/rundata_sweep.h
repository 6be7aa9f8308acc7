/*
 * rundata_sweep: a sweep read back for its report (reports/sweepreport.h):
 * the varied paths, the points in the order of their values, why a point
 * does not fit, the names of the training jobs, services and queues of one
 * of its runs (for the metrics), and a metric's value in each replica of a
 * point. Reads only, through the reader (reports/rundata.h).
 */
#ifndef CT_RUNDATA_SWEEP_H
#define CT_RUNDATA_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "reports/goal.h"
#include "reports/rundata.h"

#define RD_SWEEP_AXES 8
#define RD_SWEEP_NAMES 8             /* of each kind, at most */

enum { RD_SWEEP_JOBS, RD_SWEEP_SERVICES, RD_SWEEP_QUEUES, RD_SWEEP_KINDS };

typedef struct rd_sweep {
    int64_t id;
    char scenario[128], file[512], sets[1024];
    int replicas;
    int n_axes;
    char axes[RD_SWEEP_AXES][256];            /* the varied paths */
    int n_points;
    char **key;                                /* per point: its values as a JSON array */
    char (*val)[RD_SWEEP_AXES][64];            /* per point and axis: the value as written */
    double (*x)[RD_SWEEP_AXES];                /* ... in SI units, NAN for a word */
    char **unfit;                              /* per point: why it does not fit, or NULL */
    int n_unfit;
    /* the training jobs, services and queues of one complete run */
    int n_names[RD_SWEEP_KINDS];
    char names[RD_SWEEP_KINDS][RD_SWEEP_NAMES][96];
} rd_sweep;

/* 1 when the database has a sweep; *sweep the latest one's id. */
int rundata_sweep_latest(rundata_db *rd, int64_t *sweep);

/* Read sweep (0: the latest) into *s. Returns 0; 2 (no sweep) or 1 (a
 * read failed) with err naming the database. *s is to be freed with
 * rundata_sweep_free whatever the status. */
int rundata_sweep_load(rundata_db *rd, int64_t sweep, rd_sweep *s, char *err, size_t errlen);
void rundata_sweep_free(rd_sweep *s);

/* The metric's value in each stored replica of point p, in replica order
 * (NAN when the run has no such value): *v malloc'd, *n its length.
 * Statuses as store.h. */
int rundata_sweep_values(rundata_db *rd, const rd_sweep *s, int p, const metric_path *m, double **v, int *n,
                         char *err, size_t errlen);

#endif
