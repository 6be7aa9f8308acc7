/*
 * jobtrace_helios: the Slurm job logs of SenseTime's Helios clusters and of
 * Shanghai AI Lab's Acme clusters, which share one schema.
 *
 * helios  S-Lab-System-Group/HeliosData, README.md "cluster_log.csv"
 *         (data/<cluster>/cluster_log.csv, clusters Earth, Saturn, Uranus,
 *         Venus):
 *           job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,
 *           start_time,end_time,duration,queue
 *           1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,
 *           2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0
 * acme    InternLM/AcmeTrace, README.md "1. Job Trace"
 *         (data/job_trace/trace_seren.csv, trace_kalos.csv): the same
 *         columns without vc, with type and gpu_time (kalos also
 *         mem_per_pod_GB, shared_mem_per_pod, fail_time, stop_time), times
 *         with a UTC offset (2023-03-01 00:18:22+08:00)
 *
 * Columns are found by their header names, in any order. Used: job_id (the
 * job's name), gpu_num ("number of GPUs required for the job"), vc (the
 * virtual cluster: the <queue> of that name, else the first), submit_time,
 * start_time and end_time (base/datetime.h), duration ("calculated from the
 * difference between end_time and start_time", seconds; when empty,
 * end_time - start_time is used). A row with no start_time never ran and
 * is skipped and counted. user ("hashed id for the user") is the job's
 * user; vc ("hashed id for the virtual cluster") also its account (Acme
 * has no vc: no account). start_time is the job's real start, for the
 * replay's comparison of waits. state (COMPLETED, CANCELLED, FAILED,
 * TIMEOUT, NODE_FAIL) is not used: every state that started ran for its
 * duration. Neither trace has a time limit or a dependency column.
 * Note: both READMEs' `queue` column is the job's queueing TIME in seconds
 * ("calculated from the difference between start_time and submit_time"),
 * not a queue: start_time gives the same wait; the simulated scheduler
 * makes its own.
 */
#include <math.h>
#include <string.h>

#include "base/datetime.h"
#include "scenarios/jobtrace_int.h"

enum { COL_ID, COL_GPUS, COL_SUBMIT, COL_START, COL_END, COL_DURATION, COL_VC, COL_USER, N_COLS };
static const char *const slurm_cols[N_COLS] = { "job_id", "gpu_num", "submit_time", "start_time", "end_time",
                                                "duration", "vc", "user" };

int jt_is_helios(const csv_record *rec) {
    static const char *const want[] = { "job_id", "vc", "gpu_num", "submit_time" };
    return jt_header_has(rec, want, 4);
}

int jt_is_acme(const csv_record *rec) {
    static const char *const want[] = { "job_id", "gpu_num", "submit_time", "start_time" };
    return jt_header_has(rec, want, 4) && !jt_is_helios(rec);
}

/* A date and time column into seconds; "" is *set = 0. 0, or -1 with err. */
static int read_time(const csv *r, const csv_record *rec, int col, const char *name, double *t_s, int *set,
                     char *err, size_t errlen) {
    const char *z = csv_field(rec, col);
    int64_t sec;
    double frac;
    int zone;
    *set = z[0] != 0;
    if (!*set) return 0;
    if (datetime_parse(z, &sec, &frac, &zone) < 0)
        return csv_fail(r, err, errlen, "%s '%s' must be a date and time like 2020-06-09 18:41:01 (optionally "
                        "+08:00)", name, z);
    *t_s = (double)sec + frac;
    return 0;
}

/* The run time: the duration column, else end - start. */
static int read_run(const csv *r, const csv_record *rec, const int *idx, double start_s, double *run_s, char *err,
                    size_t errlen) {
    const char *z = csv_field(rec, idx[COL_DURATION]);
    double end_s;
    int has_end;
    *run_s = -1;
    if (z[0]) {
        if (jt_number(z, run_s) < 0) return csv_fail(r, err, errlen, "duration '%s' must be a number of seconds", z);
        return 0;
    }
    if (read_time(r, rec, idx[COL_END], "end_time", &end_s, &has_end, err, errlen) < 0) return -1;
    if (has_end) *run_s = end_s - start_s;
    return 0;
}

static int parse_row(const csv *r, const csv_record *rec, const int *idx, jt_row *q, char *err, size_t errlen) {
    const char *z = csv_field(rec, idx[COL_GPUS]);
    double gpus, start_s = 0;
    int has_submit;
    if (jt_number(z, &gpus) < 0 || gpus < 0 || gpus != floor(gpus) || gpus > 1e9)
        return csv_fail(r, err, errlen, "gpu_num '%s' must be a whole number >= 0", z);
    *q = (jt_row){ .gpus = (long long)gpus, .run_s = -1, .queue = csv_field(rec, idx[COL_VC]),
                   .name = csv_field(rec, idx[COL_ID]), .user = csv_field(rec, idx[COL_USER]),
                   .account = csv_field(rec, idx[COL_VC]), .wait_s = NAN };
    if (read_time(r, rec, idx[COL_SUBMIT], "submit_time", &q->submit_s, &has_submit, err, errlen) < 0 ||
        read_time(r, rec, idx[COL_START], "start_time", &start_s, &q->started, err, errlen) < 0)
        return -1;
    if (!has_submit) return csv_fail(r, err, errlen, "submit_time is empty; expected a date and time");
    if (q->started) q->wait_s = start_s - q->submit_s;
    return q->started ? read_run(r, rec, idx, start_s, &q->run_s, err, errlen) : 0;
}

int jt_read_helios(csv *r, const csv_record *header, jt_build *b, char *err, size_t errlen) {
    int idx[N_COLS];
    const char *what = b->format == JOBTRACE_ACME ? "AcmeTrace" : "Helios";
    if (csv_header(r, header, slurm_cols, N_COLS, COL_DURATION, idx, what, err, errlen) < 0) return -1;
    return jt_read_rows(r, b, idx, parse_row, err, errlen);
}
