/*
 * trace_int: the job-trace reader's private state, shared by trace.c (the
 * header, what every row has, batch and training rows) and trace_state.c
 * (the columns of a live cluster's snapshot: id, state, elapsed, limit,
 * user, account, after, nodes, actual_start; docs/cluster-state.md).
 * Included by nothing else.
 */
#ifndef CT_TRACE_INT_H
#define CT_TRACE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "scenarios/csv.h"
#include "scenarios/nameset.h"
#include "scenarios/scenario.h"
#include "scenarios/trace.h"

/* A job trace has at most 24 columns (docs/traces.md: 17 named ones); the
 * CSV reader keeps more for the validation files (plan/published.c). */
#define TRACE_MAX_FIELDS 24

enum {
    C_SUBMIT, C_QUEUE, C_PRIORITY, C_GPUS, C_DURATION, C_TOKENS, C_MODEL, C_NAME,
    C_ID, C_STATE, C_ELAPSED, C_LIMIT, C_USER, C_ACCOUNT, C_AFTER, C_NODES, C_ACTUAL_START, C_COUNT
};
extern const char *const trace_col_names[C_COUNT];

/* One trace being read into a scenario. */
typedef struct job_reader {
    scenario *s;
    csv *csv;
    int line;                      /* the <trace> element's line in the scenario */
    const char **queues;           /* the queue names, sorted: O(log queues) per row */
    int cluster_gpus;              /* counted once */
    int first_type_nodes;          /* on-premises nodes of the first type: trace jobs run there */
    int col[C_COUNT];              /* each column's field, -1 when the header lacks it */
    const char *field_names[CSV_MAX_FIELDS];   /* each field's column, for UTF-8 errors */
    double last_submit;
    long rows;
    uint32_t *after;               /* per batch row: its after text in trace_names (SC_NO_TEXT none) */
    int *row_line;                 /* per batch row: its CSV line (for after's errors) */
    size_t cap_after, cap_row_line;
    int *ratios_sorted;            /* s->ratios by (by, who) */
    /* Users and accounts seen, by their offsets in s->trace_names: each
     * text is kept once however many rows repeat it (interned). */
    name_set people;
    char *err;
    size_t errlen;
} job_reader;

/* One row's fields, checked: what every job has. */
typedef struct job_row {
    double submit_s, gpus, priority;
    const char *queue;
    char name[SC_NAME_MAX];
} job_row;

/* Column c of the record: "" when the header lacks it or the row is short. */
static inline const char *field(const job_reader *jr, const csv_record *rec, int c) {
    int k = jr->col[c];
    return k >= 0 && k < rec->n && k < CSV_MAX_FIELDS ? rec->f[k] : "";
}

/* ---- trace_state.c ---- */
/* A time that may be negative ("-2h": before t = 0). 0, or -1 with why. */
int trace_signed_time(const char *z, double *out, char *why, size_t len);
unsigned trace_column_bit(int c);                 /* SC_TCOL_* of a column, 0 none */
int trace_any_max_time(const scenario *s);        /* some queue has a max-time */
double trace_queue_max_time(const scenario *s, int queue);   /* 0: none */
int trace_first_type_nodes(const scenario *s);
/* The snapshot columns of batch row t (just appended). 0, or -1 with err set. */
int trace_read_state(job_reader *jr, const csv_record *rec, sc_trace_job *t);
/* A training row: the snapshot columns must be empty (it starts pending). */
int trace_training_plain(job_reader *jr, const csv_record *rec);
/* After the last row: each after names a job (by id, else by name); no cycles. */
int trace_resolve_after(job_reader *jr);
void trace_reader_free(job_reader *jr);

#endif
