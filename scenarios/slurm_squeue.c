/*
 * slurm_squeue: `squeue --json` into the live record's jobs (slurm.h).
 *
 * Fields (22.05: openapi/v0.0.38 jobs.c _job_info_to_data; 23.02+:
 * PARSER_ARRAY(JOB_INFO) in data_parser/v0.0.NN/parsers.c): job_id,
 * array_job_id, array_task_id, array_task_string, name, user_name,
 * account, partition, job_state, state_reason, hold (v0.0.40+),
 * dependency, submit_time, start_time, time_limit (minutes), priority,
 * node_count, nodes, tres_alloc_str, tres_req_str, tres_per_job,
 * tres_per_node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/slurm.h"
#include "scenarios/slurm_int.h"

typedef struct sq_job {
    const char *name, *user, *account, *reason, *dependency, *nodes, *array_str;
    char partition[128], after[64];
    int state, gpus, node_count;
    double job_id, array_job_id, array_task_id, submit, start, limit_s, priority;
    int has_task;
} sq_job;

/* The first job id a dependency names: "afterok:123(unfulfilled)",
 * "afterany:12_3:14,afterok:15", "singleton" (none). */
static void first_after(const char *dep, char *id, size_t len) {
    id[0] = 0;
    for (const char *p = dep; p && *p; p += strcspn(p, ",?"), p += (*p != 0)) {
        if (strncmp(p, "after", 5)) continue;
        const char *colon = strchr(p, ':');
        size_t stop = strcspn(p, ",?");
        if (!colon || colon >= p + stop) continue;
        size_t n = strcspn(colon + 1, ":(+,?");
        snprintf(id, len, "%.*s", (int)n, colon + 1);
        if (id[0]) return;
    }
}

static int read_gpus(const slurm_rec *r, sq_job *j) {
    char model[64];
    if (j->state == LIVE_RUNNING && slurm_tres_gpus(r, "tres_alloc_str", &j->gpus, model, sizeof model) < 0) return -1;
    if (!j->gpus && slurm_tres_gpus(r, "tres_req_str", &j->gpus, model, sizeof model) < 0) return -1;
    if (!j->gpus && slurm_tres_gpus(r, "tres_per_job", &j->gpus, model, sizeof model) < 0) return -1;
    if (!j->gpus) {
        int per_node = 0;
        if (slurm_tres_gpus(r, "tres_per_node", &per_node, model, sizeof model) < 0) return -1;
        j->gpus = per_node * (j->node_count > 0 ? j->node_count : 1);
    }
    return 0;
}

static int read_times(const slurm_rec *r, sq_job *j) {
    double x;
    int k;
    if (slurm_num(r, "submit_time", &j->submit) < 0 || slurm_num(r, "start_time", &j->start) < 0) return -1;
    if ((k = slurm_num(r, "time_limit", &x)) < 0) return -1;
    j->limit_s = slurm_minutes_s(k, x);
    if ((k = slurm_num(r, "priority", &j->priority)) < 0) return -1;
    if ((k = slurm_num(r, "node_count", &x)) < 0) return -1;
    j->node_count = (int)x;
    if (slurm_num(r, "job_id", &j->job_id) < 0 || slurm_num(r, "array_job_id", &j->array_job_id) < 0) return -1;
    if ((k = slurm_num(r, "array_task_id", &j->array_task_id)) < 0) return -1;
    j->has_task = k == SLURM_SET;
    return 0;
}

static int read_job(const slurm_rec *r, sq_job *j) {
    char words[256];
    const char *part;
    memset(j, 0, sizeof *j);
    if (slurm_state_words(r, "job_state", 40, words, sizeof words) < 0) return -1;
    j->state = slurm_job_state(words);
    if (j->state == -2)
        return slurm_fail(r, slurm_field(r, "job_state"), "job_state", "expected Slurm job states (PENDING, RUNNING, ...), not%s",
                          words);
    if (j->state == -1) return 0;
    if (slurm_str(r, "name", &j->name) || slurm_str(r, "user_name", &j->user) || slurm_str(r, "account", &j->account) ||
        slurm_str(r, "partition", &part) || slurm_str(r, "state_reason", &j->reason) ||
        slurm_str(r, "dependency", &j->dependency) || slurm_str(r, "nodes", &j->nodes) ||
        slurm_str(r, "array_task_string", &j->array_str) || read_times(r, j) < 0 || read_gpus(r, j) < 0)
        return -1;
    snprintf(j->partition, sizeof j->partition, "%.*s", (int)strcspn(part, ","), part);
    first_after(j->dependency, j->after, sizeof j->after);
    if (j->state == LIVE_PENDING &&
        (!strncmp(j->reason, "JobHeld", 7) || !strcmp(j->reason, "DependencyNeverSatisfied") ||
         jv_is_true(slurm_field(r, "hold"))))
        j->state = LIVE_HELD;
    return 0;
}

static int add_job(live_cluster *c, const sq_job *j, const char *id, double at) {
    live_job *o = live_add_job(c);
    if (!o) return -1;
    if (live_set(&o->id, id) || live_set(&o->name, j->name) || live_set(&o->user, j->user) ||
        live_set(&o->account, j->account) || live_set(&o->partition, j->partition) ||
        live_set(&o->reason, j->reason) || live_set(&o->node_list, j->state == LIVE_RUNNING ? j->nodes : "") ||
        live_set(&o->after, j->after))
        return -1;
    o->state = (live_job_state)j->state;
    o->gpus = j->gpus;
    o->nodes = j->node_count;
    o->submit_s = j->submit > 0 ? j->submit - at : 0;
    if (o->submit_s > 0) o->submit_s = 0;
    o->start_s = j->state == LIVE_RUNNING && j->start > 0 ? j->start - at : 0;
    if (o->start_s > 0) o->start_s = 0;
    o->limit_s = j->limit_s;
    o->priority = j->priority;
    return 0;
}

/* "5-9", "1,3,8-15:2", "0-99%4" (the throttle after % is ignored): each task id. */
static int expand_tasks(const slurm_rec *r, live_cluster *c, const sq_job *j, double at) {
    char id[64];
    long total = 0;
    for (const char *p = j->array_str; *p && *p != '%';) {
        char *e;
        long lo = strtol(p, &e, 10), hi = lo, step = 1;
        if (e == p || lo < 0) goto bad;
        if (*e == '-') {
            p = e + 1, hi = strtol(p, &e, 10);
            if (e == p || hi < lo) goto bad;
        }
        if (*e == ':') {
            p = e + 1, step = strtol(p, &e, 10);
            if (e == p || step < 1) goto bad;
        }
        if (*e && *e != ',' && *e != '%') goto bad;
        for (long t = lo; t <= hi; t += step) {
            if (++total > SLURM_ARRAY_MAX_TASKS)
                return slurm_fail(r, slurm_field(r, "array_task_string"), "array_task_string", "expected at most %d tasks",
                                  SLURM_ARRAY_MAX_TASKS);
            snprintf(id, sizeof id, "%.0f_%ld", j->array_job_id, t);
            if (add_job(c, j, id, at) < 0) return slurm_fail(r, NULL, NULL, "out of memory");
        }
        p = *e == ',' ? e + 1 : e;
    }
    return 0;
bad:
    return slurm_fail(r, slurm_field(r, "array_task_string"), "array_task_string",
                      "\"%s\": expected task ids like 5-9, 1,3,8-15:2 or 0-99%%4", j->array_str);
}

int slurm_squeue(const jsonin *d, double at_unix_s, live_cluster *c, char *err, size_t errlen) {
    slurm_doc sd;
    const jv *jobs;
    if (slurm_doc_open(&sd, d, "jobs", &jobs, err, errlen) < 0) return -1;
    for (int i = 0; i < jv_len(jobs); i++) {
        slurm_rec r = { &sd, "jobs", i, jv_at(jobs, i) };
        sq_job j;
        if (jv_kind(r.obj) != JV_OBJ) return slurm_fail(&r, r.obj, NULL, "expected a job object");
        if (read_job(&r, &j) < 0) return -1;
        if (j.state < 0) continue;
        if (j.gpus <= 0) {
            c->jobs_without_gpus++;
            continue;
        }
        char id[64];
        if (j.array_job_id > 0 && !j.has_task && j.array_str[0]) {
            if (expand_tasks(&r, c, &j, at_unix_s) < 0) return -1;
            continue;
        }
        if (j.array_job_id > 0 && j.has_task) snprintf(id, sizeof id, "%.0f_%.0f", j.array_job_id, j.array_task_id);
        else snprintf(id, sizeof id, "%.0f", j.job_id);
        if (add_job(c, &j, id, at_unix_s) < 0) return slurm_fail(&r, NULL, NULL, "out of memory");
    }
    return slurm_doc_source(&sd, c) < 0 ? slurm_fail(&(slurm_rec){ &sd, "jobs", 0, jobs }, NULL, NULL, "out of memory") : 0;
}
