/*
 * snapshot_history: the cluster's finished jobs as <runtime-history>
 * ratios of run time to time limit (snapshot_int.h; the element is
 * docs/cluster-state.md's).
 *
 * A ratio comes from a job that ended COMPLETED, TIMEOUT or FAILED (the
 * outcomes of a job that ran its course; CANCELLED, NODE_FAIL and
 * PREEMPTED jobs were cut short by someone or something else) with a time
 * limit and a run time > 0; a run past its limit (Slurm's OverTimeLimit,
 * the kill's grace) counts as 1. Each user and account keeps its most
 * recent SNAPSHOT_RATIOS_PER_KEY (by start time), the cluster its most
 * recent SNAPSHOT_RATIOS_CLUSTER; users and accounts in name order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/snapshot_int.h"
#include "reports/fileout.h"

static int counts(const live_history *h) {
    return h->limit_s > 0 && h->run_s > 0 &&
           (!strcmp(h->state, "COMPLETED") || !strcmp(h->state, "TIMEOUT") || !strcmp(h->state, "FAILED"));
}

static double ratio(const live_history *h) { return h->run_s >= h->limit_s ? 1.0 : h->run_s / h->limit_s; }

/* Sorted by (key, start time), newest last. */
typedef struct by_key {
    const char *key;
    double start;
    const live_history *h;
} by_key;

static int cmp_key(const void *x, const void *y) {
    const by_key *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    if (c) return c;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* values="..." of entries [from, to), the newest max of them. */
static void write_values(FILE *f, const by_key *e, int from, int to, int max) {
    if (to - from > max) from = to - max;
    fprintf(f, " values=\"");
    for (int i = from; i < to; i++) fprintf(f, "%s%.4g", i > from ? " " : "", ratio(e[i].h));
    fprintf(f, "\"/>\n");
}

/* One <ratios attr=KEY> per distinct key of the history's jobs that count. */
static int write_keyed(FILE *f, const live_cluster *c, const char *attr, by_key *e) {
    int n = 0;
    for (int i = 0; i < c->n_history; i++) {
        const live_history *h = &c->history[i];
        const char *key = !strcmp(attr, "user") ? h->user : h->account;
        if (counts(h) && key[0]) e[n++] = (by_key){ key, h->start_unix_s, h };
    }
    qsort(e, (size_t)n, sizeof *e, cmp_key);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !strcmp(e[j].key, e[i].key)) j++;
        fprintf(f, "      <ratios %s=\"", attr);
        fileout_html(f, e[i].key);
        fprintf(f, "\"");
        write_values(f, e, i, j, SNAPSHOT_RATIOS_PER_KEY);
        i = j;
    }
    return n;
}

int snap_write_history(FILE *f, const snap_plan *p, snapshot_summary *sum) {
    const live_cluster *c = p->c;
    by_key *e = malloc(((size_t)c->n_history + 1) * sizeof *e);
    if (!e) return -1;
    int n = 0;
    for (int i = 0; i < c->n_history; i++)
        if (counts(&c->history[i])) e[n++] = (by_key){ "", c->history[i].start_unix_s, &c->history[i] };
    sum->history_jobs = n;
    if (n) {
        qsort(e, (size_t)n, sizeof *e, cmp_key);
        fprintf(f, "    <!-- Run time / time limit of %d finished jobs (sacct: COMPLETED, TIMEOUT, FAILED). -->\n", n);
        fprintf(f, "    <runtime-history>\n      <ratios");
        write_values(f, e, 0, n, SNAPSHOT_RATIOS_CLUSTER);
        write_keyed(f, c, "user", e);
        write_keyed(f, c, "account", e);
        fprintf(f, "    </runtime-history>\n");
    }
    free(e);
    return 0;
}
