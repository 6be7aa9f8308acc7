/*
 * sched_int: the scheduler's private state, shared by its files and
 * included by nothing else (the contract is sim/sched.h). The files call
 * each other in one order only:
 *
 *   sched.c          queues, the policy's order, the dispatch pass, EASY backfill
 *     -> sched_queue.c     the queued jobs, per class in submit order
 *     -> sched_run.c       the running set: by id, per pool by expected end
 *     -> sched_preempt.c   which running jobs to evict for a blocked head
 *          -> sched_where.c    where running jobs hold GPUs: per node, and
 *                              per pool nodes by (priority, GPUs used, queues)
 *     -> sched_hold.c      holds: what-if placement of preemptors' claims,
 *                          and whether a job can start beside them
 *   sched_part.c     partitions' node sets: may a queue use a node, room
 *                    and the reservation inside a set (used by the others)
 */
#ifndef CT_SCHED_INT_H
#define CT_SCHED_INT_H

#include <stddef.h>
#include <stdint.h>

#include "scenarios/scenario.h"   /* SC_NAME_MAX */
#include "sim/cluster.h"
#include "sim/sched_types.h"

/* Jobs a scheduling pass considers (the head, and behind it the EASY
 * backfill scan), as Slurm's bf_max_job_test (default 500). */
#define SCHED_DEFAULT_DEPTH 500
#define SMALL_MAX 64                     /* per-pool job-size counts below a node's GPUs */

/* A queued preemptor's claim on the GPUs its victims freed; victims[]
 * are the jobs it evicted (it never evicts one twice while it waits). */
typedef struct hold {
    int id, pool, gpus;
    int *victims;
    int n_victims;
    size_t cap_victims;
} hold;

/* A multiset of ints with few distinct values: the values in increasing
 * order, each with its count (kept at 0 once seen). */
typedef struct cset {
    int n;
    struct cval { int key, count; } *v;
    size_t cap;
} cset;

/* sched_where.c: a job on a node, and a node's record. */
/* A node's record is 32 bytes, aligned to them (sched_where_init): the
 * 1M-GPU year places and releases ~230 million (node, job) pairs on nodes
 * spread over the cluster, and a 40-byte record crossed a cache line
 * every other node. */
struct went { int id, prio; short gpus, queue; };
typedef struct wnode {
    struct went one;               /* the scheduler jobs holding GPUs on it: the first here */
    int n;                         /* (a whole-node job is alone: one cache miss, not two) */
    int bucket;                    /* 1 + its bucket; 0: none (no job on it); -1 - its place in q->odd */
    int cap;                       /* room in more */
    struct went *more;             /* the others (jobs sharing the node) */
} wnode;
static inline const struct went *sched_went(const wnode *w, int i) { return i == 0 ? &w->one : &w->more[i - 1]; }

/* Nodes of one pool with the same (highest priority of their jobs, GPUs
 * used, set of their jobs' queues): a bitmap over the pool's nodes, and
 * one bit per non-empty word of it. */
#define WHERE_OTHER 63             /* the queue bit of queues >= 63 and of jobs not running */
typedef struct wbucket {
    int pool, prio, used;
    uint64_t qmask;
    int count;
    uint64_t *bits, *top;
} wbucket;

/* A queued job's place: slot i of class c. */
typedef struct qref { int c, i; } qref;

/* A class: the queued jobs of one (queue, priority), in (submit time, id)
 * order in slots v[head..n), with room below head (sched_queue.c). */
/* bmin: per block of QBLOCK slots, at most the fewest GPUs a queued job of
 * the block asks for (exact after each change, sched_queue.c): the
 * backfill scan passes over a block whose every job is above the pools'
 * fit limits without reading its jobs. */
#define QBLOCK_SHIFT 5
#define QBLOCK (1 << QBLOCK_SHIFT)
typedef struct sclass {
    int queue, prio;
    int count;                     /* queued jobs: n - head */
    int head;
    sched_job *v;
    int n;
    size_t cap;
    int *bmin;                     /* per block of v: the least GPUs of its queued jobs (INT_MAX: none) */
    size_t cap_bmin;
} sclass;

typedef struct queue {
    char name[SC_NAME_MAX];
    int quota;                     /* guaranteed GPUs; 0 = none */
    int used;
    const int *set;                /* <queue nodes=>: its nodes, increasing (the scenario's); NULL: all */
    int n_set;
    unsigned char *in_set;         /* per node: 1 in the set (NULL: no set) */
} queue;

struct sched {
    cluster *c;
    sched_ops ops;
    sched_policy policy;
    int backfill, preemption;
    int evicts;                    /* preemption or a queue with a quota: a running job may be evicted (else
                                      no index of where jobs run, no counts of running priorities) */
    int spread;                    /* placement: sub-node jobs go to the emptiest node */
    queue *queues;
    int n_queues;
    int total_gpus;
    int n_pools;                   /* the cluster's (it may be freed before the scheduler) */
    int n_queued;                  /* over all classes */
    sched_job *running;            /* sched_run.c: swap-removed; by id in run_of, per pool by end in rheap */
    int n_running;
    size_t cap_running;
    int *run_of;                   /* job id -> index in running, -1 none */
    size_t cap_run_of;
    int *run_hpos;                 /* parallel to running: position in its pool's heap */
    size_t cap_run_hpos;
    /* Per pool: running indices, min-heap by expected end; each entry
     * carries its end (as an ordered integer key, sched_run.c) so that a
     * sift reads the heap alone. A heap whose order nobody read for a
     * while is left loose (unordered) until the next read (sched_run.c). */
    struct rheap {
        struct rent { uint64_t end_key; int r; } *v;
        int n;
        size_t cap;
        int loose;                 /* 1: v is in no order; the next reservation heapifies it */
        int churn;                 /* changes since the order was last read */
    } *rheap;
    int *front, n_front, *group;   /* scratch of the reservation walk */
    size_t cap_front, cap_group;
    qref *order;                   /* the pass's order (kept true as jobs come and go) */
    int n_order;
    size_t cap_order;
    /* Classes: (queue, priority) pairs seen, each with its queued jobs. The
     * pass builds its order from them lazily (see take_order). */
    sclass *classes;
    int n_cls;
    size_t cap_classes;
    int *small;                    /* queued jobs per (pool, GPUs < a node's): fragmentation */
    /* Per pool: queued jobs, and their sizes: whether any queued job could
     * fit the pool's free GPUs is then O(sizes), not O(queued). */
    struct psizes { int n_queued; cset sizes; } *psz;
    /* Per (pool, queue), index pool * n_queues + queue: the running jobs'
     * priorities, so that a preemption attempt with no candidate at all
     * (173,000 of the 177,000 attempts in the 100K-GPU year) costs
     * O(queues x priorities), not a scan of the running set. */
    cset *rprio;
    int *lim;                      /* per pool: cluster_fit_limit, as of the backfill scan's last start */
    int depth;                     /* jobs a pass considers: the head and the backfill scan */
    int *cs, n_cs;                 /* the classes with jobs, in the policy's order (sort_classes) */
    double *cs_share;
    int *cs_pos;                   /* per class: the next slot a level's merge reads */
    size_t cap_cs, cap_cs_share, cap_cs_pos;
    double now;
    int *node_loc;                 /* per node: -1 (scratch of a preemption attempt, kept -1 between) */
    int *held;                     /* jobs evicted during this dispatch pass: they */
    int n_held;                    /* wait for the next pass (no evict-restart ping-pong) */
    size_t cap_held;
    hold *holds;                   /* in creation order: earlier holds are placed first */
    int n_holds;
    size_t cap_holds;
    /* sched_where.c: where running jobs hold GPUs (the world tells), for
     * preemption's walk of the nodes that may yield victims. */
    wnode *where;                  /* per node */
    int n_where;                   /* nodes (the cluster's: it may be freed before the scheduler) */
    wbucket *wb;
    int n_wb;
    size_t cap_wb;
    int *pool_first, *pool_nodes;  /* per pool: its first node and how many (contiguous) */
    int *odd, n_odd;               /* over-listed nodes (their jobs hold more GPUs than the cluster */
    size_t cap_odd;                /* counts used): in no bucket, the walk keys them as gathering does */
    int where_ok;                  /* 0: out of memory once; preemption gathers nodes instead */
    unsigned char *mark;           /* scratch of a walk: per running index, chosen (0 between walks) */
    size_t cap_mark;
    int *touched, n_touched;       /* scratch of a walk: nodes whose what-if free GPUs are in node_loc */
    size_t cap_touched;
    int *wscratch;                 /* scratch of a walk: a job's nodes, then the chosen */
    size_t cap_wscratch;
    int *part_nodes;               /* sched_part.c scratch: a running job's nodes (NULL: no node sets) */
    struct part_end { double end_s; int id, gpus; } *part_ends;
    size_t cap_part_ends;
};

/* sched_queue.c */
/* Both keep q->order[0..n_order) pointing at the same jobs (the one
 * removed excepted). */
int sched_queue_add(sched *q, const sched_job *j);      /* 0, or -1 when out of memory (nothing changes) */
void sched_queue_remove(sched *q, qref r);
int sched_queue_class(sched *q, const sched_job *j);   /* j's class, made when first seen; -1 when out of memory */
qref sched_queue_find(const sched *q, int id);          /* c -1: not queued. O(queued) */
static inline sched_job *sched_queue_at(const sched *q, qref r) { return &q->classes[r.c].v[r.i]; }

/* sched_run.c */
int sched_cset_add(cset *s, int key, int delta);       /* 0, or -1 when out of memory (nothing changes) */
int sched_run_add(sched *q, const sched_job *j);        /* 0, or -1 when out of memory */
void sched_run_remove(sched *q, int i);                 /* running[i] leaves; the last job takes slot i */
int sched_run_index(const sched *q, int id);           /* -1: not running */
void sched_run_set_end(sched *q, int i, double end_s);
double sched_run_reservation(sched *q, int pool, int gpus, double now_s, int *extra);

/* sched_hold.c */
int sched_hold_index(const sched *q, int id);          /* -1: the job holds nothing */
void sched_drop_hold(sched *q, int id);                /* the job started or left the queue */
int sched_fits_after_holds(const sched *q, const sched_job *j, int *cnt, int upto);
int sched_can_start(const sched *q, const sched_job *j);

/* sched_part.c */
int sched_part_init(sched *q, const scenario *s);       /* 0, or -1 when out of memory */
void sched_part_free(sched *q);
int sched_may_use(const sched *q, int qi, int node);   /* may queue qi's jobs use node (no set: yes) */
int sched_part_overlap(const sched *q, int a, int b);  /* do queues a and b share a node */
int sched_room(const sched *q, const sched_job *j);     /* cluster room for j now, inside its queue's set */
double sched_part_reservation(sched *q, const sched_job *head, double now_s, int *extra);

/* sched_where.c */
int sched_where_init(sched *q);                        /* 0, or -1 when out of memory */
void sched_where_free(sched *q);
int sched_where_next(const sched *q, int b, int from); /* bucket b's first node >= from; -1 none */
int sched_where_buckets(const sched *q, int pool, int *out);   /* non-empty, by (prio, used) */

/* sched_preempt.c */
int sched_try_preempt(sched *q, const sched_job *head);

#endif
