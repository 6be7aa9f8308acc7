/*
 * reqtrace_burstgpt: the BurstGPT trace (HPMLL/BurstGPT, README.md
 * "Schema"; data/BurstGPT_1.csv):
 *
 *   Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
 *   5,ChatGPT,472,18,490,Conversation log
 *
 * Columns are found by their header names, in any order; later releases
 * add Session ID (a conversation; only conversation-mode rows have one)
 * and Elapsed time. Timestamp is the submission time in seconds from 0:00
 * of the trace's first day (kept as it is: the time of day is part of the
 * trace); Request and Response tokens the prompt and output lengths.
 * Model (ChatGPT, GPT-4) goes to the service's model of that name when it
 * serves one, else to its first model. Total tokens, Log Type and Elapsed
 * time are not used. A row with 0 Response tokens is a failed request (the
 * README: BurstGPT_N.csv holds failures "that Response tokens are 0s",
 * BurstGPT_without_fails_N.csv is the same trace without them): it is
 * dropped and counted, so both files replay the same requests.
 */
#include <string.h>

#include "scenarios/reqtrace_int.h"

enum { COL_TIME, COL_IN, COL_OUT, COL_MODEL, COL_SESSION, N_COLS };
static const char *const burst_cols[N_COLS] = { "Timestamp", "Request tokens", "Response tokens", "Model",
                                                "Session ID" };

int rt_is_burstgpt_header(const csv_record *rec) {
    int found = 0;
    for (int i = COL_TIME; i <= COL_OUT; i++)
        for (int c = 0; c < rec->n && c < CSV_MAX_FIELDS; c++)
            if (!strcmp(rec->f[c], burst_cols[i])) {
                found++;
                break;
            }
    return found == 3;
}

static int parse_row(const csv *r, const csv_record *rec, const int *idx, const reqtrace_models *sm, rt_req *q,
                     char *err, size_t errlen) {
    const char *z = csv_field(rec, idx[COL_TIME]);
    *q = (rt_req){ .session = -1, .cls = -1 };
    if (rt_number(z, &q->t_s) < 0)
        return csv_fail(r, err, errlen, "Timestamp '%s' must be a number of seconds >= 0", z);
    z = csv_field(rec, idx[COL_IN]);
    if (rt_whole(z, &q->input) < 0) return csv_fail(r, err, errlen, "Request tokens '%s' must be a whole number", z);
    z = csv_field(rec, idx[COL_OUT]);
    if (rt_whole(z, &q->output) < 0) return csv_fail(r, err, errlen, "Response tokens '%s' must be a whole number", z);
    q->model = rt_model(sm, csv_field(rec, idx[COL_MODEL]));
    if (q->model < 0) q->model = 0;
    q->session = rt_session(csv_field(rec, idx[COL_SESSION]));
    return 0;
}

int rt_read_burstgpt(csv *r, const csv_record *header, rt_build *b, char *err, size_t errlen) {
    int idx[N_COLS];
    if (csv_header(r, header, burst_cols, N_COLS, 3, idx, "BurstGPT", err, errlen) < 0) return -1;
    b->col_in = "Request tokens";
    b->col_out = "Response tokens";
    b->drop_zero_output = 1;
    csv_record rec;
    int got;
    while ((got = csv_next(r, &rec, err, errlen)) > 0) {
        rt_req q;
        if (parse_row(r, &rec, idx, b->sm, &q, err, errlen) < 0 || rt_add(b, rec.line, &q, err, errlen) < 0) return -1;
    }
    return got;
}
