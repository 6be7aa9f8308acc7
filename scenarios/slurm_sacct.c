/*
 * slurm_sacct: `sacct --json` into the live record's history (slurm.h).
 *
 * Fields (22.05: openapi/dbv0.0.38 parse.c parse_job[]; 23.02+:
 * PARSER_ARRAY(JOB) in data_parser/v0.0.NN/parsers.c): job_id, name,
 * user, account, partition, nodes, array.job_id, array.task_id,
 * state.current (a string up to v0.0.39, an array from v0.0.40),
 * time.submission, time.start, time.end (Unix seconds: plain numbers in
 * every version), time.elapsed (seconds), time.limit (minutes; a
 * {set,infinite,number} from v0.0.39), tres.allocated and tres.requested
 * (lists of {"type","name","id","count"}). exit_code is not read (slurm.h
 * says why). Jobs still pending or running are left out. slurm_sacct_each
 * gives each ended record to its caller (the history below, fit-failures'
 * NODE_FAIL ends in scenarios/failhist.c).
 */
#include <stdio.h>
#include <string.h>

#include "scenarios/slurm.h"
#include "scenarios/slurm_int.h"

static int read_ended(const slurm_rec *r, slurm_ended *e, char *id, size_t idlen, char *state, size_t statelen) {
    double job_id, array_id, task_id, minutes;
    int task_kind, limit_kind;
    char words[256], model[64];
    if (slurm_state_words(r, "state.current", 40, words, sizeof words) < 0) return -1;
    if (slurm_job_state(words) == -2)
        return slurm_fail(r, slurm_field(r, "state.current"), "state.current",
                          "expected Slurm job states (COMPLETED, TIMEOUT, ...), not%s", words);
    snprintf(state, statelen, "%.*s", (int)strcspn(words + 1, " "), words + 1);
    if (slurm_str(r, "name", &e->name) || slurm_str(r, "user", &e->user) || slurm_str(r, "account", &e->account) ||
        slurm_str(r, "partition", &e->partition) || slurm_str(r, "nodes", &e->nodes))
        return -1;
    if (slurm_num(r, "job_id", &job_id) < 0 || slurm_num(r, "array.job_id", &array_id) < 0 ||
        (task_kind = slurm_num(r, "array.task_id", &task_id)) < 0 || slurm_num(r, "time.submission", &e->submit) < 0 ||
        slurm_num(r, "time.start", &e->start) < 0 || slurm_num(r, "time.end", &e->end) < 0 ||
        slurm_num(r, "time.elapsed", &e->elapsed_s) < 0 || (limit_kind = slurm_num(r, "time.limit", &minutes)) < 0)
        return -1;
    e->limit_s = slurm_minutes_s(limit_kind, minutes);
    if (array_id > 0 && task_kind == SLURM_SET) snprintf(id, idlen, "%.0f_%.0f", array_id, task_id);
    else snprintf(id, idlen, "%.0f", job_id);
    e->id = id, e->state = state;
    if (slurm_tres_gpus(r, "tres.allocated", &e->gpus, model, sizeof model) < 0) return -1;
    if (!e->gpus && slurm_tres_gpus(r, "tres.requested", &e->gpus, model, sizeof model) < 0) return -1;
    return slurm_job_state(words) >= 0 && strcmp(state, "REQUEUED") ? 1 : 0;   /* 1: not ended */
}

/* Each ended record of the open document's jobs to fn. */
static int each_job(slurm_doc *sd, const jv *jobs, slurm_ended_fn fn, void *ctx) {
    int rc = 0;
    for (int i = 0; i < jv_len(jobs) && rc == 0; i++) {
        slurm_rec r = { sd, "jobs", i, jv_at(jobs, i) };
        slurm_ended e;
        char id[64], state[64], why[256];
        memset(&e, 0, sizeof e);
        if (jv_kind(r.obj) != JV_OBJ) rc = slurm_fail(&r, r.obj, NULL, "expected a job object");
        else if ((rc = read_ended(&r, &e, id, sizeof id, state, sizeof state)) == 1) rc = 0;
        else if (rc == 0 && fn(ctx, &e, why, sizeof why) < 0) rc = slurm_fail(&r, NULL, NULL, "%s", why);
    }
    return rc;
}

int slurm_sacct_each(const jsonin *d, slurm_ended_fn fn, void *ctx, char *err, size_t errlen) {
    slurm_doc sd;
    const jv *jobs;
    if (slurm_doc_open(&sd, d, "jobs", &jobs, err, errlen) < 0) return -1;
    return each_job(&sd, jobs, fn, ctx);
}

int slurm_sacct(const jsonin *d, live_cluster *c, char *err, size_t errlen) {
    slurm_doc sd;
    const jv *jobs;
    if (slurm_doc_open(&sd, d, "jobs", &jobs, err, errlen) < 0) return -1;
    slurm_history_sink k = { c, { NULL, 0, 0 } };
    int rc = each_job(&sd, jobs, slurm_history_add, &k);
    slurm_index_free(&k.ids);
    if (rc == 0 && slurm_doc_source(&sd, c) < 0) rc = slurm_fail(&(slurm_rec){ &sd, "jobs", 0, jobs }, NULL, NULL, "out of memory");
    return rc;
}
