/*
 * jobtrace_openb: Alibaba's GPU-sharing cluster trace of 2023, the pods of
 * the "Beware of Fragmentation" paper (USENIX ATC '23) (alibaba/clusterdata,
 * cluster-trace-gpu-v2023/README.md "openb_pod_list_default.csv";
 * csv/openb_pod_list_*.csv):
 *
 *   name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
 *   openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497
 *
 * Columns are found by their header names. Used: name (the job's name),
 * num_gpu ("integers from 0 to 8"), qos (LS, BE, Burstable, Guaranteed:
 * the <queue> of that name, else the first), creation_time (the submit),
 * scheduled_time (the start) and deletion_time (the end), "timestamp ...
 * (in seconds)". The run time is deletion_time - scheduled_time. A pod
 * with no scheduled_time (pod_phase Pending) never ran and is skipped and
 * counted, as is a CPU-only pod (num_gpu 0). gpu_milli is the share of one
 * GPU a GPU-sharing pod asks for; the simulated cluster does not share a
 * GPU between jobs, so such a pod holds one whole GPU. scheduled_time is
 * also the pod's real start, for the replay's comparison of waits.
 * cpu_milli, memory_mib, gpu_spec and pod_phase are not used; the list has
 * no user, time limit or dependency.
 */
#include <math.h>
#include <string.h>

#include "scenarios/jobtrace_int.h"

enum { O_NAME, O_GPUS, O_CREATED, O_DELETED, O_SCHEDULED, O_QOS, O_COLS };
static const char *const openb_cols[O_COLS] = { "name", "num_gpu", "creation_time", "deletion_time",
                                                "scheduled_time", "qos" };

int jt_is_openb(const csv_record *rec) { return jt_header_has(rec, openb_cols, 3); }

/* Column col as seconds >= 0; "" is *set = 0. 0, or -1 with err. */
static int seconds(const csv *r, const csv_record *rec, const int *idx, int col, double *v, int *set, char *err,
                   size_t errlen) {
    const char *z = csv_field(rec, idx[col]);
    *set = z[0] != 0;
    if (*set && (jt_number(z, v) < 0 || *v < 0))
        return csv_fail(r, err, errlen, "%s '%s' must be a number of seconds >= 0", openb_cols[col], z);
    return 0;
}

static int parse_row(const csv *r, const csv_record *rec, const int *idx, jt_row *q, char *err, size_t errlen) {
    const char *z = csv_field(rec, idx[O_GPUS]);
    double gpus, created, deleted = 0, scheduled = 0;
    int has_created, has_deleted, has_scheduled;
    if (jt_number(z, &gpus) < 0 || gpus < 0 || gpus != floor(gpus) || gpus > 1e9)
        return csv_fail(r, err, errlen, "num_gpu '%s' must be a whole number >= 0", z);
    if (seconds(r, rec, idx, O_CREATED, &created, &has_created, err, errlen) < 0 ||
        seconds(r, rec, idx, O_DELETED, &deleted, &has_deleted, err, errlen) < 0 ||
        seconds(r, rec, idx, O_SCHEDULED, &scheduled, &has_scheduled, err, errlen) < 0)
        return -1;
    if (!has_created) return csv_fail(r, err, errlen, "creation_time is empty; expected seconds");
    *q = (jt_row){ .submit_s = created, .run_s = has_deleted && has_scheduled ? deleted - scheduled : -1,
                   .gpus = (long long)gpus, .started = has_scheduled, .queue = csv_field(rec, idx[O_QOS]),
                   .name = csv_field(rec, idx[O_NAME]), .wait_s = has_scheduled ? scheduled - created : NAN };
    return 0;
}

int jt_read_openb(csv *r, const csv_record *header, jt_build *b, char *err, size_t errlen) {
    int idx[O_COLS];
    if (csv_header(r, header, openb_cols, O_COLS, O_QOS, idx, "openb pod list", err, errlen) < 0) return -1;
    return jt_read_rows(r, b, idx, parse_row, err, errlen);
}
