/*
 * sched: the cluster scheduler. It decides which queued job starts next,
 * where, and which running jobs to evict; the world carries it out.
 *
 *   policy    fifo      submit order
 *             priority  higher priority first, then submit order
 *             fair      the queue with the lowest dominant share
 *                       (GPUs used / quota, or / cluster GPUs without a
 *                       quota) goes first, then its own order
 *   quotas    a queue is guaranteed quota-gpus; above it a job borrows
 *             idle GPUs, and borrowed GPUs are reclaimable: a job of a
 *             queue below its quota may evict borrowing jobs of others
 *   gang      a job starts only when all its GPUs are free at once
 *   backfill  easy: when the head job cannot start, it gets a reservation
 *             (the earliest time enough GPUs free up as running jobs end);
 *             a later job may start now only if it fits now and ends
 *             before that reservation
 *   preempt   with preemption on, a job may evict running jobs of lower
 *             priority when that lets it start. Victims are chosen node by
 *             node (the whole nodes, or the one node, the job will get),
 *             and nothing is evicted unless the job then fits. The GPUs
 *             freed are held for the job that preempted until it starts:
 *             no other job (its victims included, nor backfill) starts on
 *             them, and it never evicts the same job twice while it waits.
 *
 * The scheduler keeps the queued jobs (per (queue, priority) class, in
 * submit order) and the running ones (by id, and per pool by expected
 * end); a dispatch pass
 * looks at the head and at most `backfill-depth` jobs behind it and at
 * the running jobs that end before the head's reservation, whatever the
 * backlog (sim/sched.c says what each step costs).
 */
#ifndef CT_SCHED_H
#define CT_SCHED_H

#include "scenarios/scenario.h"
#include "sim/cluster.h"

#include "sim/sched_types.h"   /* sched, sched_job, sched_ops, sched_policy */

sched *sched_new(const scenario *s, cluster *c, const sched_ops *ops);
void sched_free(sched *q);

/* Queue index of a queue name ("" or unknown: 0). */
int sched_queue_of(const sched *q, const char *name);
int sched_queue_count(const sched *q);
const char *sched_queue_name(const sched *q, int i);
int sched_queue_quota(const sched *q, int i);
int sched_queue_used(const sched *q, int i);     /* GPUs held by its running jobs */

/* gpus GPUs of pool for a job of queue qi: inside the queue's node set
 * (<queue nodes=>, a partition's nodes), else as cluster_alloc. */
int sched_alloc(const sched *q, int qi, int pool, int gpus, int *nodes_out, int cap);

/* A job enters the queue (new, requeued after preemption or failure). */
void sched_submit(sched *q, const sched_job *j);
/* A job submitted to an empty queue (nothing held) that the next pass
 * would start at once, as its head, starts now without joining the queue;
 * now_s is the time. 1 when it did (the same as sched_submit and the
 * pass's first start); 0 with nothing changed: submit it. The caller
 * keeps the pass's frame: callbacks then ask for another pass. */
int sched_start_alone(sched *q, const sched_job *j, double now_s);
/* Take a queued job out of the queue (it no longer wants to run).
 * Returns 1 when it was queued, 0 otherwise (nothing changes). */
int sched_withdraw(sched *q, int job);
/* A job already running when the run starts (a live cluster's snapshot):
 * the world placed it; the scheduler counts it as running, ending at
 * j->expected_end_s (an absolute time), against its queue's quota. */
void sched_adopt(sched *q, const sched_job *j);
/* Where a job holds GPUs, as the world places it: `gpus` GPUs on node
 * (a start, a replacement node, a grown job), and the node given up
 * (a release, a lost node). Preemption walks the nodes by what runs on
 * them (sim/sched_where.c); every change of a running job's nodes must be
 * told, or victims are chosen from a stale picture. */
void sched_placed(sched *q, int job, int node, int gpus);
void sched_unplaced(sched *q, int job, int node);
/* A hint that node's record will be read soon (a job's nodes are spread
 * over the cluster: each is a cache miss otherwise). No effect on results. */
void sched_where_prefetch(const sched *q, int node);
/* Whether the index of where jobs run is kept (preemption or quotas):
 * when it is not, sched_placed and sched_unplaced do nothing, and a caller
 * that places a node per call may skip them (0 never turns 1). */
int sched_where_kept(const sched *q);
/* A running job ended (done, failed, preempted): its GPUs are free. */
void sched_finished(sched *q, int job);
/* A running job's expected end changed. */
void sched_update_end(sched *q, int job, double expected_end_s);

/* Start what can start now (and preempt if needed). now_s is the time. */
void sched_dispatch(sched *q, double now_s);

int sched_queued(const sched *q);
/* Queued jobs holding GPUs freed by their preemptions (0 almost always:
 * a preemptor starts in the pass that evicts for it). */
int sched_holds(const sched *q);
/* The earliest-submitted queued job of a pool (-1: none). O(queued). */
int sched_oldest(const sched *q, int pool);
/* Free GPUs no queued job can use now (whole nodes count as usable by any
 * multi-node job; partly used nodes only by jobs that fit inside). */
int sched_fragmented_gpus(const sched *q);

#endif
