/*
 * jobtrace_swf: the Standard Workload Format (SWF) version 2.2 of the
 * Parallel Workloads Archive (D. Feitelson et al.,
 * https://www.cs.huji.ac.il/labs/parallel/workload/swf.html, "The Data
 * Fields"):
 *
 *   ; MaxProcs: 128
 *   ; UnixStartTime: 1041379200
 *   1  0   12  3600  64  -1 -1  64  7200 -1  1  3  1  -1  1  1  -1  -1
 *
 * One job a line, 18 whitespace-separated numbers, -1 where a field is
 * unknown; lines starting with ';' are header comments (MaxNodes,
 * MaxProcs, UnixStartTime, Queues, Note ...), read as comments. The fields
 * this reader uses (1-based, as the standard numbers them):
 *
 *    1 Job Number            the job's name
 *    2 Submit Time           seconds; the log's earliest time is 0
 *    4 Run Time              seconds (end minus start); -1: never ran
 *    5 Allocated Processors  the job's size; -1: field 8 is used
 *    8 Requested Processors
 *   11 Status                1 completed, 0 failed, 5 cancelled, -1 not
 *                            recorded; "if information about checkpointing
 *                            or swapping is included, other values are
 *                            also possible": rows with other values are
 *                            skipped and counted, so a job split into
 *                            partial executions is not replayed twice
 *   15 Queue Number          the <queue> of that name, else the first
 *    3 Wait Time             "the difference between the job's submit
 *                            time and the time at which it actually began
 *                            to run": the trace job's actual start is its
 *                            submit plus this wait (the JSON's replay)
 *    9 Requested Time        the job's time limit ("in many logs this
 *                            field is used for the user runtime estimate
 *                            (or upper bound) used in backfilling"); read
 *                            as wall-clock seconds; a job that ran
 *                            longer than it asked keeps no limit
 *   12 User ID               the job's user
 *   13 Group ID              its account ("some systems control resource
 *                            usage by groups rather than by individual
 *                            users")
 *   17 Preceding Job Number  "the current job can only start after the
 *                            termination of this preceding job": after,
 *                            when that job is replayed before this one
 *
 * -1 in any of these means the log does not say. The archive's logs count
 * processors, not GPUs: a job holds ceil(processors / procs-per-gpu) GPUs
 * (<trace procs-per-gpu>, default 1: one processor is one GPU). CPU time,
 * memory, executable, partition and think time (field 18: the delay from
 * the preceding job's end to this job's submit; the twin's after has no
 * delay) are not used.
 */
#include <math.h>
#include <string.h>

#include "scenarios/jobtrace_int.h"

#define SWF_FIELDS 18

/* Split line into at most max blank-separated tokens (NUL-terminating them
 * in place); the count, which may exceed max (the rest are not kept). */
static int split_blanks(char *line, char **tok, int max) {
    int n = 0;
    for (char *p = line;;) {
        p += strspn(p, " \t\r\n");
        if (!*p) return n;
        char *end = p + strcspn(p, " \t\r\n");
        if (n < max) tok[n] = p;
        n++;
        if (!*end) return n;
        *end = 0;
        p = end + 1;
    }
}

int jt_is_swf_line(const char *line) {
    char copy[CSV_MAX_LINE], *tok[SWF_FIELDS];
    snprintf(copy, sizeof copy, "%s", line);
    if (split_blanks(copy, tok, SWF_FIELDS) != SWF_FIELDS) return 0;
    double v;
    for (int i = 0; i < SWF_FIELDS; i++)
        if (jt_number(tok[i], &v) < 0) return 0;
    return 1;
}

/* The 18 fields of a job line as numbers (v) and text (tok). */
static int parse_fields(jt_build *b, long line, char *text, char **tok, double *v, char *err, size_t errlen) {
    int n = split_blanks(text, tok, SWF_FIELDS);
    if (n != SWF_FIELDS)
        return jt_fail(b, line, err, errlen, "expected the %d numbers of an SWF job line (or a ';' comment), got %d "
                       "fields", SWF_FIELDS, n);
    for (int i = 0; i < SWF_FIELDS; i++)
        if (jt_number(tok[i], &v[i]) < 0)
            return jt_fail(b, line, err, errlen, "field %d must be a number (-1 when unknown)", i + 1);
    return 0;
}

/* One job line into a row. */
static int parse_job(jt_build *b, long line, char *text, char *err, size_t errlen) {
    char *tok[SWF_FIELDS];
    double v[SWF_FIELDS];
    if (parse_fields(b, line, text, tok, v, err, errlen) < 0) return -1;
    if (v[1] < 0) return jt_fail(b, line, err, errlen, "Submit Time (field 2) '%s' must be seconds >= 0", tok[1]);
    double procs = v[4] > 0 ? v[4] : v[7] > 0 ? v[7] : 0;
    double per_gpu = b->s->trace_read.procs_per_gpu > 0 ? b->s->trace_read.procs_per_gpu : 1;
    int st = (int)v[10];
    jt_row r = { .submit_s = v[1], .run_s = v[3], .gpus = (long long)ceil(fmin(procs / per_gpu, 1e9)),
                 .started = v[3] >= 0, .other_status = v[10] != st || (st != 1 && st != 0 && st != 5 && st != -1),
                 .queue = v[14] >= 0 ? tok[14] : "", .name = tok[0], .user = v[11] >= 0 ? tok[11] : NULL,
                 .account = v[12] >= 0 ? tok[12] : NULL, .limit_s = v[8], .wait_s = v[2] >= 0 ? v[2] : NAN,
                 .after = v[16] > 0 ? tok[16] : NULL };
    return jt_add(b, line, &r, err, errlen);
}

int jt_read_swf(FILE *fp, jt_build *b, char *err, size_t errlen) {
    char text[CSV_MAX_LINE];
    long line = 0;
    while (fgets(text, sizeof text, fp)) {
        line++;
        size_t n = strlen(text);
        if (n == sizeof text - 1 && text[n - 1] != '\n' && !feof(fp))
            return jt_fail(b, line, err, errlen, "line longer than %d bytes", CSV_MAX_LINE - 1);
        const char *p = text + strspn(text, " \t\r\n");
        if (!*p || *p == ';') continue;
        if (parse_job(b, line, text, err, errlen) < 0) return -1;
    }
    if (ferror(fp)) return jt_fail(b, line, err, errlen, "read error");
    if (b->s->trace_read.rows == 0)
        return jt_fail(b, line ? line : 1, err, errlen, "no job lines; expected 18 numbers a line (SWF)");
    return 0;
}
