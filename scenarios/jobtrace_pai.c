/*
 * jobtrace_pai: Alibaba PAI's GPU cluster trace of July and August 2020
 * (alibaba/clusterdata, cluster-trace-gpu-v2020/README.md "pai_task_table";
 * the column order is data/pai_task_table.header). pai_task_table.csv has
 * no header line; a first line naming the columns (the .header file put in
 * front) is allowed:
 *
 *   job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type
 *   4f057009a5d481acec67b088,tensorflow,1.0,Terminated,1739162.0,1739200.0,600.0,29.296875,50.0,MISC
 *
 * One task a row (a job has one task or more: ps, worker, evaluator). Each
 * GPU task becomes a job named job_name/task_name: inst_num instances,
 * each asking for plan_gpu percent of a GPU ("50.0 is 50% GPU"); the
 * simulated cluster does not share a GPU between jobs, so each instance
 * holds ceil(plan_gpu / 100) whole GPUs (a 50% instance holds one). A task
 * with no plan_gpu (empty, or 0: parameter servers, CPU jobs) is skipped
 * and counted. start_time is the task's launch time and end_time its
 * completion, in seconds ("deducted by a constant number for
 * desensitization"); the run time is end_time - start_time. The task
 * table has no submit time (that is pai_job_table's start_time, a separate
 * file), so a task arrives at its launch time: the replay's queueing is
 * the simulated scheduler's alone. status: Terminated, Failed, Running,
 * Waiting; a row with no start or end time (Waiting, or Running when the
 * trace ended) has no run time and is skipped and counted. plan_cpu,
 * plan_mem and gpu_type are not used. The task table names no user (that
 * is pai_job_table's), no time limit and no dependency, and its one time
 * before the run is the launch: there is no real wait to compare with.
 */
#include <math.h>
#include <string.h>

#include "scenarios/jobtrace_int.h"

enum { P_JOB, P_TASK, P_INST, P_STATUS, P_START, P_END, P_CPU, P_MEM, P_GPU, P_TYPE, P_COLS };

static const char *const pai_statuses[] = { "Terminated", "Failed", "Running", "Waiting" };

int jt_is_pai(const csv_record *rec) {
    if (rec->n != P_COLS) return 0;
    if (!strcmp(rec->f[P_JOB], "job_name") && !strcmp(rec->f[P_TASK], "task_name")) return 1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(rec->f[P_STATUS], pai_statuses[i])) return 1;
    return 0;
}

/* A number column that may be empty (NaN as pandas writes it): *v = 0 and
 * *set = 0. 0, or -1 with err. */
static int number_or_empty(const csv *r, const csv_record *rec, int col, const char *name, double *v, int *set,
                           char *err, size_t errlen) {
    const char *z = rec->f[col];
    *v = 0;
    *set = z[0] != 0;
    if (*set && (jt_number(z, v) < 0 || *v < 0))
        return csv_fail(r, err, errlen, "%s '%s' must be a number >= 0 (or empty)", name, z);
    return 0;
}

static int parse_row(const csv *r, const csv_record *rec, jt_row *q, char *name, size_t name_len, char *err,
                     size_t errlen) {
    double inst, start_s, end_s, plan_gpu;
    int has_inst, has_start, has_end, has_gpu;
    if (number_or_empty(r, rec, P_INST, "inst_num", &inst, &has_inst, err, errlen) < 0 ||
        number_or_empty(r, rec, P_START, "start_time", &start_s, &has_start, err, errlen) < 0 ||
        number_or_empty(r, rec, P_END, "end_time", &end_s, &has_end, err, errlen) < 0 ||
        number_or_empty(r, rec, P_GPU, "plan_gpu", &plan_gpu, &has_gpu, err, errlen) < 0)
        return -1;
    if (inst != floor(inst) || inst > 1e6) return csv_fail(r, err, errlen, "inst_num '%s' must be a whole number",
                                                           rec->f[P_INST]);
    snprintf(name, name_len, "%s/%s", rec->f[P_JOB], rec->f[P_TASK]);
    *q = (jt_row){ .submit_s = has_start ? start_s : NAN, .run_s = has_start && has_end ? end_s - start_s : -1,
                   .gpus = (long long)(inst * ceil(fmin(plan_gpu, 1e9) / 100)), .started = has_start,
                   .queue = "", .name = name, .wait_s = NAN };
    return 0;
}

int jt_read_pai(csv *r, const csv_record *first, jt_build *b, char *err, size_t errlen) {
    csv_record rec = *first;
    int got = 1;
    char name[SC_NAME_MAX];
    if (rec.n == P_COLS && !strcmp(rec.f[P_JOB], "job_name")) got = csv_next(r, &rec, err, errlen);   /* the header */
    for (; got > 0; got = csv_next(r, &rec, err, errlen)) {
        if (csv_columns(r, &rec, P_COLS, P_COLS,
                        "the 10 columns of pai_task_table (job_name,task_name,inst_num,status,start_time,end_time,"
                        "plan_cpu,plan_mem,plan_gpu,gpu_type)", err, errlen) < 0)
            return -1;
        jt_row q;
        if (parse_row(r, &rec, &q, name, sizeof name, err, errlen) < 0 || jt_add(b, rec.line, &q, err, errlen) < 0)
            return -1;
    }
    return got;
}
