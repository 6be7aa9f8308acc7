/*
 * jobtrace_philly: Microsoft's Philly cluster trace of August to December
 * 2017 (msr-fiddle/philly-traces, README.md "cluster_job_log"; the
 * definitions below are those of its analysis notebook,
 * analysis/Philly Trace Analysis.ipynb, class Job). cluster_job_log is one
 * JSON array of jobs (the notebook reads it with json.load):
 *
 *   [{"status": "Pass", "vc": "ee9e8c", "jobid": "application_1506638472019_14199",
 *     "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
 *                   "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1"]}]}, ...],
 *     "submitted_time": "2017-10-07 01:11:39", "user": "ce2f4c"}, ...]
 *
 * A job's GPUs are the GPUs of its first attempt, summed over the servers
 * of its detail; its run time is from the first attempt's start_time to the
 * last attempt's end_time (retries included, as the notebook counts it);
 * its submit time is submitted_time. Times are "YYYY-MM-DD HH:MM:SS"; a
 * missing time is null, "" or "None". A job with no attempts, no first
 * start or no last end (still running when the trace was taken) has no run
 * time and is skipped and counted. jobid names the job; vc (the virtual
 * cluster) is the <queue> of that name, else the first, and the job's
 * account; user is its user. Its real start, for the replay's comparison
 * of waits, is the first attempt's start_time. status (Pass, Killed,
 * Failed) is not used; the trace has no time limit and no dependency.
 */
#include <math.h>
#include <string.h>

#include "base/datetime.h"
#include "scenarios/jobtrace_int.h"
#include "scenarios/jsonin.h"

/* A time member of v (key): seconds in *t_s, or NAN when it is missing,
 * null, "" or "None". 0, or -1 with err. */
static int read_time(jt_build *b, const jv *v, const char *key, long job, double *t_s, char *err, size_t errlen) {
    const jv *x = jv_get(v, key);
    *t_s = NAN;
    if (!x || jv_kind(x) == JV_NULL) return 0;
    const char *z = jv_str(x, NULL);
    if (!z) return jt_fail(b, jv_line(x), err, errlen, "jobs[%ld].%s: expected a string, got %s", job, key,
                           jv_kind_name(jv_kind(x)));
    if (!z[0] || !strcmp(z, "None")) return 0;
    int64_t sec;
    double frac;
    int zone;
    if (datetime_parse(z, &sec, &frac, &zone) < 0)
        return jt_fail(b, jv_line(x), err, errlen, "jobs[%ld].%s '%s': expected a date and time like 2017-10-07 "
                       "01:12:09", job, key, z);
    *t_s = (double)sec + frac;
    return 0;
}

/* The GPUs of an attempt: its detail's gpus lists, summed. */
static int attempt_gpus(jt_build *b, const jv *attempt, long job, long long *gpus, char *err, size_t errlen) {
    const jv *detail = jv_get(attempt, "detail");
    *gpus = 0;
    if (detail && jv_kind(detail) != JV_ARR)
        return jt_fail(b, jv_line(detail), err, errlen, "jobs[%ld].attempts[0].detail: expected an array", job);
    for (int i = 0; i < jv_len(detail); i++) {
        const jv *g = jv_get(jv_at(detail, i), "gpus");
        if (g && jv_kind(g) != JV_ARR)
            return jt_fail(b, jv_line(g), err, errlen, "jobs[%ld].attempts[0].detail[%d].gpus: expected an array",
                           job, i);
        *gpus += jv_len(g);
    }
    return 0;
}

/* A text member of v (key), "" when missing or null. */
static int text(jt_build *b, const jv *v, const char *key, long job, const char **out, char *err, size_t errlen) {
    const jv *x = jv_get(v, key);
    *out = jv_str(x, "");
    if (x && jv_kind(x) != JV_STR && jv_kind(x) != JV_NULL)
        return jt_fail(b, jv_line(x), err, errlen, "jobs[%ld].%s: expected a string, got %s", job, key,
                       jv_kind_name(jv_kind(x)));
    return 0;
}

static int read_job(jt_build *b, const jv *v, long job, char *err, size_t errlen) {
    if (jv_kind(v) != JV_OBJ)
        return jt_fail(b, jv_line(v), err, errlen, "jobs[%ld]: expected an object, got %s", job,
                       jv_kind_name(jv_kind(v)));
    const jv *att = jv_get(v, "attempts");
    if (att && jv_kind(att) != JV_ARR)
        return jt_fail(b, jv_line(att), err, errlen, "jobs[%ld].attempts: expected an array", job);
    int n = jv_len(att);
    double start = NAN, end = NAN;
    jt_row r = { .started = n > 0 };
    if (read_time(b, v, "submitted_time", job, &r.submit_s, err, errlen) < 0 ||
        text(b, v, "jobid", job, &r.name, err, errlen) < 0 || text(b, v, "vc", job, &r.queue, err, errlen) < 0 ||
        text(b, v, "user", job, &r.user, err, errlen) < 0)
        return -1;
    r.account = r.queue;
    if (n > 0 && (attempt_gpus(b, jv_at(att, 0), job, &r.gpus, err, errlen) < 0 ||
                  read_time(b, jv_at(att, 0), "start_time", job, &start, err, errlen) < 0 ||
                  read_time(b, jv_at(att, n - 1), "end_time", job, &end, err, errlen) < 0))
        return -1;
    r.run_s = end - start;                                  /* NAN when either is missing */
    r.wait_s = start - r.submit_s;                          /* likewise */
    return jt_add(b, jv_line(v), &r, err, errlen);
}

int jt_read_philly(const char *textbuf, size_t len, jt_build *b, char *err, size_t errlen) {
    jsonin *d = jsonin_parse(textbuf, len, b->path, err, errlen);
    if (!d) return -1;
    const jv *root = jsonin_root(d);
    int rc = 0;
    if (jv_kind(root) != JV_ARR)
        rc = jt_fail(b, jv_line(root), err, errlen, "expected the Philly cluster_job_log: an array of jobs, got %s",
                     jv_kind_name(jv_kind(root)));
    for (int i = 0; rc == 0 && i < jv_len(root); i++) rc = read_job(b, jv_at(root, i), i, err, errlen);
    jsonin_free(d);
    return rc;
}
