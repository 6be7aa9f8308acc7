/*
 * trace_state: the job-trace columns of a live cluster's snapshot (issue
 * 22; docs/traces.md and docs/cluster-state.md): id, state (pending,
 * running, held), elapsed, limit, user, account, after, nodes and
 * actual_start. Texts go to the scenario's name pool (offsets, not
 * buffers: a trace may hold ten million rows); a running job's named
 * nodes go to scenario.trace_nodes; after is resolved once every row is
 * read (a job may wait for a later row).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hostlist.h"
#include "base/units.h"
#include "models/numerics.h"
#include "scenarios/trace_int.h"

long trace_add_name(scenario *s, const char *name) {
    size_t n = strlen(name) + 1;
    if (s->trace_names_len + n >= UINT32_MAX) return -1;       /* UINT32_MAX is SC_NO_TEXT */
    if (GROW(s->trace_names, s->trace_names_cap, s->trace_names_len + n)) return -1;
    memcpy(s->trace_names + s->trace_names_len, name, n);
    s->trace_names_len += n;
    return (long)(s->trace_names_len - n);
}

int trace_signed_time(const char *z, double *out, char *why, size_t len) {
    int neg = z[0] == '-';
    if (units_parse(z + neg, UNIT_DURATION, out, why, len) < 0) return -1;
    if (neg) *out = -*out;
    return 0;
}

unsigned trace_column_bit(int c) {
    switch (c) {
    case C_ID: return SC_TCOL_ID;
    case C_STATE: return SC_TCOL_STATE;
    case C_USER: return SC_TCOL_USER;
    case C_ACCOUNT: return SC_TCOL_ACCOUNT;
    case C_ACTUAL_START: return SC_TCOL_ACTUAL_START;
    default: return 0;
    }
}

int trace_any_max_time(const scenario *s) {
    for (int i = 0; i < s->n_queues; i++)
        if (s->queues[i].max_time_s > 0) return 1;
    return 0;
}

double trace_queue_max_time(const scenario *s, int queue) { return queue >= 0 ? s->queues[queue].max_time_s : 0; }

int trace_first_type_nodes(const scenario *s) {
    int n = 0;
    for (int i = 0; i < s->n_nodes; i++)
        if (!strcmp(s->nodes[i].type, s->nodes[0].type)) n += s->nodes[i].count;
    return n;
}

static int oom(const job_reader *jr) { return csv_fail(jr->csv, jr->err, jr->errlen, "out of memory"); }

/* Column c as an offset into the name pool (SC_NO_TEXT when empty). */
static int text_col(job_reader *jr, const csv_record *rec, int c, uint32_t *out) {
    const char *z = field(jr, rec, c);
    *out = SC_NO_TEXT;
    if (!z[0]) return 0;
    long off = trace_add_name(jr->s, z);
    if (off < 0) return oom(jr);
    *out = (uint32_t)off;
    return 0;
}

/* A user or an account: a text seen before is shared, not appended again
 * (a cluster has far fewer users than jobs). Offsets past INT_MAX, which
 * the set cannot hold, are appended each time. */
static int person_col(job_reader *jr, const csv_record *rec, int c, uint32_t *out) {
    const char *z = field(jr, rec, c);
    int seen = z[0] ? nameset_find(&jr->people, jr->s->trace_names, 1, z) : -1;
    if (seen >= 0) {
        *out = (uint32_t)seen;
        return 0;
    }
    if (text_col(jr, rec, c, out) < 0) return -1;
    if (*out == SC_NO_TEXT || *out > INT_MAX) return 0;
    return nameset_add(&jr->people, jr->s->trace_names, 1, (int)*out) < 0 ? oom(jr) : 0;
}

static int read_state_value(job_reader *jr, const csv_record *rec, sc_trace_job *t) {
    const char *z = field(jr, rec, C_STATE);
    if (!z[0] || !strcmp(z, "pending")) t->state = SC_JOB_PENDING;
    else if (!strcmp(z, "running")) t->state = SC_JOB_RUNNING;
    else if (!strcmp(z, "held")) t->state = SC_JOB_HELD;
    else return csv_fail(jr->csv, jr->err, jr->errlen, "state \"%s\": expected pending, running or held", z);
    return 0;
}

/* elapsed (running jobs only), limit (its own, else the queue's max-time), actual_start. */
static int read_times(job_reader *jr, const csv_record *rec, sc_trace_job *t) {
    char why[256];
    const char *z = field(jr, rec, C_ELAPSED);
    if (z[0] && t->state != SC_JOB_RUNNING)
        return csv_fail(jr->csv, jr->err, jr->errlen, "elapsed \"%s\": only a running job has run (state is %s)", z,
                        t->state == SC_JOB_HELD ? "held" : "pending");
    if (z[0] && (units_parse(z, UNIT_DURATION, &t->elapsed_s, why, sizeof why) < 0 ||
                 !(t->elapsed_s <= NUMERICS_MAX_TIME_S)))
        return csv_fail(jr->csv, jr->err, jr->errlen, "elapsed \"%s\": expected a time like 90min (%s)", z,
                        t->elapsed_s > 0 ? "beyond the clock's horizon" : why);
    z = field(jr, rec, C_LIMIT);
    t->limit_s = trace_queue_max_time(jr->s, t->queue);
    if (z[0] && (units_parse(z, UNIT_DURATION, &t->limit_s, why, sizeof why) < 0 || !(t->limit_s > 0) ||
                 !(t->limit_s <= NUMERICS_MAX_TIME_S)))
        return csv_fail(jr->csv, jr->err, jr->errlen, "limit \"%s\": expected a positive time like 4h", z);
    z = field(jr, rec, C_ACTUAL_START);
    t->actual_start_s = NAN;
    if (z[0] && (trace_signed_time(z, &t->actual_start_s, why, sizeof why) < 0 ||
                 !(fabs(t->actual_start_s) <= NUMERICS_MAX_TIME_S)))
        return csv_fail(jr->csv, jr->err, jr->errlen, "actual_start \"%s\": expected a time from t = 0 like 2h", z);
    return 0;
}

/* ---- the nodes a running job holds ------------------------------------- */

typedef struct node_ctx {
    job_reader *jr;
    sc_trace_job *t;
    const char *list;
} node_ctx;

static int add_job_node(void *ctx, const char *name) {
    node_ctx *c = ctx;
    job_reader *jr = c->jr;
    scenario *s = jr->s;
    int n = scenario_node_by_name(s, name);
    if (n < 0)
        return csv_fail(jr->csv, jr->err, jr->errlen, "nodes \"%s\": no node is named %s (names come from <nodes names=>)",
                        c->list, name), 1;
    if (n >= jr->first_type_nodes)
        return csv_fail(jr->csv, jr->err, jr->errlen, "nodes \"%s\": node %s is not a %s node, the type trace jobs run on",
                        c->list, name, s->nodes[0].type), 1;
    for (int i = 0; i < c->t->n_nodes; i++)
        if (s->trace_nodes[c->t->nodes + (uint32_t)i] == n)
            return csv_fail(jr->csv, jr->err, jr->errlen, "nodes \"%s\": node %s is named twice", c->list, name), 1;
    if (s->n_trace_nodes >= UINT32_MAX - 1 || GROW(s->trace_nodes, s->cap_trace_nodes, s->n_trace_nodes + 1))
        return oom(jr), 1;
    s->trace_nodes[s->n_trace_nodes++] = n;
    c->t->n_nodes++;
    return 0;
}

static int read_nodes(job_reader *jr, const csv_record *rec, sc_trace_job *t) {
    const char *z = field(jr, rec, C_NODES);
    t->nodes = SC_NO_TEXT;
    if (!z[0]) return 0;
    if (t->state != SC_JOB_RUNNING)
        return csv_fail(jr->csv, jr->err, jr->errlen, "nodes \"%s\": only a running job holds nodes", z);
    if (!jr->s->node_name)
        return csv_fail(jr->csv, jr->err, jr->errlen, "nodes \"%s\": the cluster's <nodes> have no names=", z);
    char why[256];
    if (hostlist_expand(z, NULL, NULL, why, sizeof why) < 0)
        return csv_fail(jr->csv, jr->err, jr->errlen, "nodes \"%s\": %s", z, why);
    t->nodes = (uint32_t)jr->s->n_trace_nodes;
    node_ctx c = { jr, t, z };
    if (hostlist_expand(z, add_job_node, &c, why, sizeof why) < 0) return -1;
    int per = scenario_node_spec(jr->s, 0)->gpus;
    int need = t->gpus < per ? 1 : (t->gpus + per - 1) / per;
    if (t->n_nodes != need)
        return csv_fail(jr->csv, jr->err, jr->errlen, "nodes \"%s\": %d nodes for %d GPUs of %d-GPU nodes; expected %d",
                        z, t->n_nodes, t->gpus, per, need);
    return 0;
}

/* ---- runtime history: the samples a job's duration is drawn from ---------- */

static const scenario *sort_s;
static int cmp_ratios(const void *a, const void *b) {
    const sc_ratios *x = &sort_s->ratios[*(const int *)a], *y = &sort_s->ratios[*(const int *)b];
    return x->by != y->by ? x->by - y->by : strcmp(x->who, y->who);
}

static int find_ratios(const job_reader *jr, int by, const char *who) {
    int lo = 0, hi = jr->s->n_ratios;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const sc_ratios *r = &jr->s->ratios[jr->ratios_sorted[mid]];
        int c = r->by != by ? r->by - by : strcmp(r->who, who);
        if (c == 0) return jr->ratios_sorted[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* The job's user's samples, else its account's, else the cluster's. */
static int pick_ratios(job_reader *jr, const csv_record *rec, sc_trace_job *t) {
    t->ratios = -1;
    if (t->duration_s > 0 || jr->s->n_ratios == 0) return 0;
    if (!jr->ratios_sorted) {
        jr->ratios_sorted = malloc((size_t)jr->s->n_ratios * sizeof *jr->ratios_sorted);
        if (!jr->ratios_sorted) return oom(jr);
        for (int i = 0; i < jr->s->n_ratios; i++) jr->ratios_sorted[i] = i;
        sort_s = jr->s;
        qsort(jr->ratios_sorted, (size_t)jr->s->n_ratios, sizeof *jr->ratios_sorted, cmp_ratios);
    }
    const char *user = field(jr, rec, C_USER), *account = field(jr, rec, C_ACCOUNT);
    if (user[0]) t->ratios = find_ratios(jr, SC_RATIOS_USER, user);
    if (t->ratios < 0 && account[0]) t->ratios = find_ratios(jr, SC_RATIOS_ACCOUNT, account);
    if (t->ratios < 0) t->ratios = find_ratios(jr, SC_RATIOS_CLUSTER, "");
    return 0;
}

/* The row's after text and line, kept until every row is read. */
static int remember_row(job_reader *jr, const csv_record *rec) {
    if (jr->col[C_AFTER] < 0 && jr->col[C_ID] < 0) return 0;
    size_t row = (size_t)jr->s->n_trace_jobs - 1;
    if (GROW(jr->after, jr->cap_after, row + 1) || GROW(jr->row_line, jr->cap_row_line, row + 1)) return oom(jr);
    jr->row_line[row] = (int)rec->line;
    return text_col(jr, rec, C_AFTER, &jr->after[row]);
}

int trace_read_state(job_reader *jr, const csv_record *rec, sc_trace_job *t) {
    t->after = -1;
    t->n_nodes = 0;
    if (text_col(jr, rec, C_ID, &t->id) < 0 || person_col(jr, rec, C_USER, &t->user) < 0 ||
        person_col(jr, rec, C_ACCOUNT, &t->account) < 0 || read_state_value(jr, rec, t) < 0 ||
        read_times(jr, rec, t) < 0 || read_nodes(jr, rec, t) < 0 || pick_ratios(jr, rec, t) < 0)
        return -1;
    if (t->duration_s == 0 && !(t->limit_s > 0))
        return csv_fail(jr->csv, jr->err, jr->errlen, "no duration and no limit to draw one under");
    return remember_row(jr, rec);
}

int trace_training_plain(job_reader *jr, const csv_record *rec) {
    static const int cols[] = { C_STATE, C_ELAPSED, C_LIMIT, C_AFTER, C_NODES, C_ACTUAL_START };
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        const char *z = field(jr, rec, cols[i]);
        if (z[0] && strcmp(z, "pending"))
            return csv_fail(jr->csv, jr->err, jr->errlen,
                            "%s \"%s\": a training row (tokens and model) starts pending; the snapshot columns "
                            "(state, elapsed, limit, after, nodes, actual_start) are for batch rows", trace_col_names[cols[i]], z);
    }
    return 0;
}
