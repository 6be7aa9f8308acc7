/*
 * snapshot_replay: the history of a cluster (sacct) as a replay trace
 * (snapshot_int.h): each job that ran, submitted at its submit time, with
 * its GPUs, its real run time as its duration, its limit, and the time the
 * real scheduler started it as actual_start; t = 0 is the first submit.
 * Priorities are 0 (sacct -P has none): jobs queue in submit order. A
 * requeued job is replayed as its last attempt (slurm.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hostlist.h"
#include "plan/snapshot_int.h"
#include "reports/fileout.h"

typedef struct replay_row {
    double submit;
    int i;
} replay_row;

static int cmp_row(const void *x, const void *y) {
    const replay_row *a = x, *b = y;
    if (a->submit != b->submit) return a->submit < b->submit ? -1 : 1;
    return a->i - b->i;
}

static void write_row(FILE *f, const live_history *h, double t0) {
    char part[128];
    snprintf(part, sizeof part, "%.*s", (int)strcspn(h->partition, ","), h->partition);
    fileout_csv(f, h->id);
    fprintf(f, ",%.0f,", h->submit_unix_s - t0);
    fileout_csv(f, part);
    fprintf(f, ",0,%d,%.0f,", h->gpus, h->run_s >= 1 ? h->run_s : 1);
    if (h->limit_s > 0) fprintf(f, "%.0f", h->limit_s);
    fputc(',', f), fileout_csv(f, h->user), fputc(',', f), fileout_csv(f, h->account), fputc(',', f);
    fileout_csv(f, h->name);
    fprintf(f, ",%.0f\n", h->start_unix_s - t0);
}

int snap_write_replay(FILE *f, const snap_plan *p, snapshot_summary *sum) {
    const live_cluster *c = p->c;
    replay_row *r = malloc(((size_t)c->n_history + 1) * sizeof *r);
    if (!r) return -1;
    int n = 0;
    for (int i = 0; i < c->n_history; i++) {
        const live_history *h = &c->history[i];
        if (h->gpus > p->cluster_gpus) sum->left_out_too_big++;
        else if (h->start_unix_s > 0 && h->submit_unix_s > 0) r[n++] = (replay_row){ h->submit_unix_s, i };
    }
    qsort(r, (size_t)n, sizeof *r, cmp_row);
    fprintf(f, "id,submit,queue,priority,gpus,duration,limit,user,account,name,actual_start\n");
    for (int k = 0; k < n; k++) write_row(f, &c->history[r[k].i], r[0].submit);
    sum->pending = n;
    free(r);
    return 0;
}

/* Each distinct name of s as a node with per_node GPUs. */
static int add_nodes(live_cluster *c, snap_names *s, int per_node) {
    snap_names_sort(s);
    for (size_t i = 0; i < s->n; i++) {
        if (i && !strcmp(s->v[i], s->v[i - 1])) continue;
        live_node *n = live_add_node(c);
        if (!n || live_set(&n->name, s->v[i]) || live_set(&n->gpu_model, "") || live_set(&n->reason, "") ||
            live_set(&n->partitions, ""))
            return -1;
        n->gpus = per_node;
    }
    return 0;
}

int snapshot_infer_nodes(live_cluster *c, char *err, size_t errlen) {
    snap_names s = { 0 };
    char why[256];
    int rc = 0, per_node = 0;          /* the most GPUs a job held per node */
    for (int i = 0; i < c->n_history && rc == 0; i++) {
        const live_history *h = &c->history[i];
        if (!h->node_list[0]) continue;
        long n = hostlist_expand(h->node_list, snap_names_add, &s, why, sizeof why);
        if (n == -2) rc = 1, snprintf(err, errlen, "out of memory");
        else if (n < 0) rc = 2, snprintf(err, errlen, "job %s: node list \"%s\": %s", h->id, h->node_list, why);
        else if (n > 0 && (h->gpus + n - 1) / n > per_node) per_node = (int)((h->gpus + n - 1) / n);
    }
    if (rc == 0 && add_nodes(c, &s, per_node) < 0) rc = 1, snprintf(err, errlen, "out of memory");
    snap_names_free(&s);
    return rc;
}
