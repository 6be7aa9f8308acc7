/*
 * snapshot_jobs: the scheduler's queues and the snapshot's trace rows
 * (snapshot_int.h).
 *
 * Priority: Slurm's backfill scheduler orders jobs by their partition's
 * PriorityTier, then their job priority (slurm.conf(5), PriorityTier;
 * priority/multifactor). The trace's priority must lie within +-10^6
 * (docs/traces.md) while Slurm's are 32-bit, so each job gets the rank of
 * its (tier, priority) among the trace's jobs, 1 the lowest: the order is
 * kept exactly (scaled down only past 10^6 distinct values).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/snapshot_int.h"
#include "reports/fileout.h"

#define SNAP_PRIORITY_MAX 1000000            /* the trace's bound, docs/traces.md */

double snap_partition_limit_s(const live_cluster *c, const char *name) {
    for (int i = 0; i < c->n_parts; i++)
        if (!strcmp(c->parts[i].name, name)) return c->parts[i].max_time_s;
    return 0;
}

static double partition_tier(const live_cluster *c, const char *name) {
    for (int i = 0; i < c->n_parts; i++)
        if (!strcmp(c->parts[i].name, name)) return c->parts[i].priority_tier;
    return 0;
}

void snap_duration(char *b, size_t n, double s) { snprintf(b, n, "%.0fs", s); }

static int listed(const char *const *names, int n, const char *z) {
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], z)) return 1;
    return 0;
}

void snap_write_scheduler(FILE *f, const snap_plan *p) {
    const live_cluster *c = p->c;
    int cap = c->n_parts + (p->o->replay ? c->n_history : c->n_jobs), n = 0;
    const char **names = malloc(((size_t)cap + 1) * sizeof *names);
    for (int i = 0; names && i < c->n_parts; i++) names[n++] = c->parts[i].name;
    for (int i = 0; names && !p->o->replay && i < c->n_jobs; i++)
        if (c->jobs[i].partition[0] && !listed(names, n, c->jobs[i].partition)) names[n++] = c->jobs[i].partition;
    for (int i = 0; names && p->o->replay && i < c->n_history; i++)
        if (c->history[i].partition[0] && !listed(names, n, c->history[i].partition)) names[n++] = c->history[i].partition;
    fprintf(f, "  <!-- Priority order with EASY backfill: Slurm's defaults (sched/backfill,\n"
               "       priority/multifactor); Kueue's BestEffortFIFO also admits by priority and\n"
               "       lets smaller workloads past a head that does not fit. -->\n");
    fprintf(f, "  <scheduler policy=\"priority\" backfill=\"easy\"%s\n", n ? ">" : "/>");
    for (int i = 0; i < n; i++) {
        double limit = snap_partition_limit_s(c, names[i]);
        char d[64];
        fprintf(f, "    <queue name=\"");
        fileout_html(f, names[i]);
        fprintf(f, "\"");
        if (limit > 0) snap_duration(d, sizeof d, limit), fprintf(f, " max-time=\"%s\"", d);
        if (!p->o->replay) snap_write_partition_nodes(f, p, names[i]);
        fprintf(f, "/>\n");
    }
    if (n) fprintf(f, "  </scheduler>\n");
    free(names);
}

typedef struct prio_key {
    double tier, priority;
    int job;
} prio_key;

static int cmp_prio(const void *x, const void *y) {
    const prio_key *a = x, *b = y;
    if (a->tier != b->tier) return a->tier < b->tier ? -1 : 1;
    if (a->priority != b->priority) return a->priority < b->priority ? -1 : 1;
    return a->job - b->job;
}

/* rank[i]: job i's priority rank (1 the lowest) among the jobs kept. */
static int priority_ranks(const live_cluster *c, const char *keep, int *rank) {
    prio_key *k = malloc(((size_t)c->n_jobs + 1) * sizeof *k);
    if (!k) return -1;
    int n = 0, distinct = 0;
    for (int i = 0; i < c->n_jobs; i++)
        if (keep[i]) k[n++] = (prio_key){ partition_tier(c, c->jobs[i].partition), c->jobs[i].priority, i };
    qsort(k, (size_t)n, sizeof *k, cmp_prio);
    for (int i = 0; i < n; i++) {
        if (i == 0 || k[i].tier != k[i - 1].tier || k[i].priority != k[i - 1].priority) distinct++;
        rank[k[i].job] = distinct;
    }
    if (distinct > SNAP_PRIORITY_MAX)
        for (int i = 0; i < n; i++) rank[k[i].job] = (int)(((long long)rank[k[i].job] * SNAP_PRIORITY_MAX + distinct - 1) / distinct);
    free(k);
    return 0;
}

/* Its own limit, else its partition's, else --default-limit (0: none). */
static double job_limit_s(const live_cluster *c, const snapshot_opts *o, const live_job *j) {
    double part = snap_partition_limit_s(c, j->partition);
    return j->limit_s > 0 ? j->limit_s : part > 0 ? part : o->default_limit_s;
}

typedef struct row_order {
    double submit_s;
    int job;
} row_order;

static int cmp_row(const void *x, const void *y) {
    const row_order *a = x, *b = y;
    if (a->submit_s != b->submit_s) return a->submit_s < b->submit_s ? -1 : 1;
    return a->job - b->job;
}

static int cmp_id(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

static void write_row(FILE *f, const snap_plan *p, int *held, const live_job *j, int rank, const char *const *ids, int n_ids) {
    const char *st[] = { "pending", "running", "held" };
    const char *after = j->after;
    if (*after && !bsearch(&after, ids, (size_t)n_ids, sizeof *ids, cmp_id)) after = "";   /* ended, or left out */
    fileout_csv(f, j->id);
    fprintf(f, ",%.0f,", j->submit_s);
    fileout_csv(f, j->partition);
    fprintf(f, ",%d,%d,,%.0f,%s,", rank, j->gpus, job_limit_s(p->c, p->o, j), st[j->state]);
    /* a job that started at the snapshot's own second has start_s 0: its
     * elapsed is 0, not the "-0" that negating it would print */
    if (j->state == LIVE_RUNNING) fprintf(f, "%.0f", j->start_s < 0 ? -j->start_s : 0.0);
    fputc(',', f), fileout_csv(f, j->user), fputc(',', f), fileout_csv(f, j->account), fputc(',', f);
    fileout_csv(f, after), fputc(',', f);
    if (j->state == LIVE_RUNNING && snap_claim(p, held, j->node_list, j->gpus)) fileout_csv(f, j->node_list);
    fputc(',', f), fileout_csv(f, j->name), fputc('\n', f);
}

/* Which jobs can be written (keep[i]), counting those that cannot. */
static int choose(const snap_plan *p, char *keep, snapshot_summary *sum) {
    int n = 0;
    for (int i = 0; i < p->c->n_jobs; i++) {
        const live_job *j = &p->c->jobs[i];
        keep[i] = 0;
        if (job_limit_s(p->c, p->o, j) <= 0) sum->left_out_no_limit++;
        else if (j->gpus > p->cluster_gpus) sum->left_out_too_big++;
        else keep[i] = 1, n++;
    }
    return n;
}

int snap_write_jobs(FILE *f, const snap_plan *p, snapshot_summary *sum) {
    const live_cluster *c = p->c;
    size_t n_all = (size_t)c->n_jobs + 1;
    char *keep = malloc(n_all);
    int *rank = malloc(n_all * sizeof *rank);
    row_order *rows = malloc(n_all * sizeof *rows);
    const char **ids = malloc(n_all * sizeof *ids);
    int *held = calloc((size_t)p->n_up + 1, sizeof *held);
    int rc = -1;
    if (!keep || !rank || !rows || !ids || !held) goto done;
    int n = choose(p, keep, sum);
    if (priority_ranks(c, keep, rank) < 0) goto done;
    for (int i = 0, k = 0; i < c->n_jobs; i++)
        if (keep[i]) rows[k] = (row_order){ c->jobs[i].submit_s, i }, ids[k++] = c->jobs[i].id;
    qsort(rows, (size_t)n, sizeof *rows, cmp_row);
    qsort(ids, (size_t)n, sizeof *ids, cmp_id);
    fprintf(f, "id,submit,queue,priority,gpus,duration,limit,state,elapsed,user,account,after,nodes,name\n");
    for (int k = 0; k < n; k++) {
        const live_job *j = &c->jobs[rows[k].job];
        write_row(f, p, held, j, rank[rows[k].job], ids, n);
        sum->running += j->state == LIVE_RUNNING, sum->pending += j->state == LIVE_PENDING, sum->held += j->state == LIVE_HELD;
    }
    rc = 0;
done:
    free(keep), free(rank), free(rows), free(ids), free(held);
    return rc;
}
