/*
 * trace_after: dependencies between trace jobs (the after column, Slurm's
 * --dependency=afterany). Resolved once every row is read, since a job
 * may wait for a later row: after names a job's id (an id is unique), else
 * its name (the first row of that name). Unknown names, a job waiting for
 * itself and cycles (which could never start) are errors at the row's line.
 * O(rows log rows).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/trace_int.h"

static const scenario *sort_s;
static int sort_by_id;

/* Rows by (id or name, row). */
static int cmp_rows(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    const sc_trace_job *tx = &sort_s->trace_jobs[x], *ty = &sort_s->trace_jobs[y];
    int c = strcmp(sort_s->trace_names + (sort_by_id ? tx->id : tx->name),
                   sort_s->trace_names + (sort_by_id ? ty->id : ty->name));
    return c ? c : (x > y) - (x < y);
}

/* The first row in idx (n rows sorted by cmp_rows) whose text is z; -1. */
static int find_row(const scenario *s, const int *idx, int n, int by_id, const char *z) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const sc_trace_job *t = &s->trace_jobs[idx[mid]];
        if (strcmp(s->trace_names + (by_id ? t->id : t->name), z) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < n) {
        const sc_trace_job *t = &s->trace_jobs[idx[lo]];
        if (!strcmp(s->trace_names + (by_id ? t->id : t->name), z)) return idx[lo];
    }
    return -1;
}

static int fail_row(job_reader *jr, int row, const char *what) {
    const char *after = jr->after[row] != SC_NO_TEXT ? jr->s->trace_names + jr->after[row] : "";
    snprintf(jr->err, jr->errlen, "%s:%d: after \"%s\": %s", csv_path(jr->csv), jr->row_line[row], after, what);
    return -1;
}

/* Sorted row indices: those with an id (by_id) or every row (by name). */
static int *sorted_rows(const scenario *s, int by_id, int *n) {
    int *idx = malloc(((size_t)s->n_trace_jobs + 1) * sizeof *idx);
    *n = 0;
    if (!idx) return NULL;
    for (int i = 0; i < s->n_trace_jobs; i++)
        if (!by_id || s->trace_jobs[i].id != SC_NO_TEXT) idx[(*n)++] = i;
    sort_s = s;
    sort_by_id = by_id;
    qsort(idx, (size_t)*n, sizeof *idx, cmp_rows);
    return idx;
}

/* A job that waits, through its chain, for itself never starts. Colours:
 * 0 unseen, 1 on the chain being walked, 2 done. */
static int check_cycles(job_reader *jr) {
    scenario *s = jr->s;
    unsigned char *mark = calloc((size_t)s->n_trace_jobs + 1, 1);
    if (!mark) return -2;
    int rc = 0;
    for (int i = 0; i < s->n_trace_jobs && rc == 0; i++) {
        int k = i;
        while (k >= 0 && mark[k] == 0) {
            mark[k] = 1;
            k = s->trace_jobs[k].after;
        }
        if (k >= 0 && mark[k] == 1) rc = fail_row(jr, k, "a cycle of dependencies: these jobs would wait for each other for ever");
        for (k = i; k >= 0 && mark[k] == 1; k = s->trace_jobs[k].after) mark[k] = 2;
    }
    free(mark);
    return rc;
}

int trace_resolve_after(job_reader *jr) {
    scenario *s = jr->s;
    if (jr->col[C_AFTER] < 0 && jr->col[C_ID] < 0) return 0;
    int n_id, n_name;
    int *by_id = sorted_rows(s, 1, &n_id), *by_name = sorted_rows(s, 0, &n_name);
    int rc = by_id && by_name ? 0 : -2;
    for (int i = 1; i < n_id && rc == 0; i++) {
        const char *id = s->trace_names + s->trace_jobs[by_id[i]].id;
        if (strcmp(s->trace_names + s->trace_jobs[by_id[i - 1]].id, id)) continue;
        snprintf(jr->err, jr->errlen, "%s:%d: id \"%s\": the id of an earlier row too; expected each id once",
                 csv_path(jr->csv), jr->row_line[by_id[i]], id);
        rc = -1;
    }
    for (int i = 0; i < s->n_trace_jobs && rc == 0 && jr->col[C_AFTER] >= 0; i++) {
        if (jr->after[i] == SC_NO_TEXT) continue;
        const char *z = s->trace_names + jr->after[i];
        int k = find_row(s, by_id, n_id, 1, z);
        if (k < 0) k = find_row(s, by_name, n_name, 0, z);
        if (k < 0) rc = fail_row(jr, i, "no job of the trace has this id or name");
        else if (k == i) rc = fail_row(jr, i, "a job cannot wait for itself");
        else s->trace_jobs[i].after = k;
    }
    if (rc == 0) rc = check_cycles(jr);
    free(by_id);
    free(by_name);
    if (rc == -2) snprintf(jr->err, jr->errlen, "%s: out of memory", csv_path(jr->csv));
    return rc < 0 ? -1 : 0;
}

void trace_reader_free(job_reader *jr) {
    free(jr->after);
    free(jr->row_line);
    free(jr->ratios_sorted);
    nameset_free(&jr->people);
}
