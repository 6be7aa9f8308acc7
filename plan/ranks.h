/*
 * ranks: a sweep over MPI ranks (hw/comm.h). The points are checked, then
 * run, the same way (ranks_run): rank 0 deals the list (the points, then
 * the point-major list of runs the database does not hold, which it
 * broadcasts) in shrinking chunks as the ranks ask, each rank starting
 * from its own contiguous share so that it loads few points
 * (plan/guided.h); rank 0 runs tasks itself between deals and records
 * every answer as it comes, so it knows every point's verdict (and names
 * the first bad one for all) and stores every run; only rank 0 opens the
 * database.
 *
 * The waits that may be long (rank 0 for the others' last results, the
 * others for rank 0's verdict, list and database writes) sleep between polls
 * (hw/comm.h: comm_wait_idle, comm_bcast_idle, comm_barrier_idle): a
 * waiting rank leaves its core to the ones still running. ranks_init also
 * sets OMPI_MCA_mpi_yield_when_idle=1 (unless the environment says
 * otherwise) for the short blocking calls that remain.
 */
#ifndef CT_PLAN_RANKS_H
#define CT_PLAN_RANKS_H

#include <stddef.h>

#include "plan/grid.h"
#include "plan/pool.h"

/* One run: replica r of point p. */
typedef struct ranks_task {
    int p, r;
} ranks_task;

/* Start MPI when launched by mpirun (comm_init), idle ranks yielding.
 * 0, or -1 with err set. */
int ranks_init(char *err, size_t errlen);

/* Rank 0's status and first bad point to every rank. */
void ranks_bcast_verdict(int *rc, int *bad);

/* Rank 0's list of runs (*todo, *nt; *nt < 0: rank 0 failed) to every
 * rank; the others allocate *todo. 0, or -1 when MPI failed. */
int ranks_bcast_tasks(ranks_task **todo, int *nt);

/* How a rank runs tasks of the list, for ranks_run (the sweep's side). */
typedef void (*ranks_reply_fn)(void *ctx, const pool_msg *h, const char *payload);
typedef struct ranks_work {
    int nt;                          /* tasks 0..nt of the list every rank holds */
    int jobs;                        /* tasks a rank runs at once (its workers; the same on every rank) */
    int n_points;                    /* a result's point is below this */
    const char *cmd;                 /* for messages */
    /* run tasks [lo, hi) here, each answer to reply(reply_ctx, ...), handing
     * out no more once *stop is set; 0, or -1 when this rank cannot go on */
    int (*run)(void *run_ctx, int lo, int hi, ranks_reply_fn reply, void *reply_ctx, volatile int *stop);
    void *run_ctx;
    ranks_reply_fn record;           /* rank 0: record one answer, its own or another rank's */
    void *record_ctx;
    volatile int *stop;              /* rank 0: set when recording failed: deal nothing more */
} ranks_work;

/* Run tasks 0..nt over every rank, dealt as they go in shrinking chunks
 * (plan/guided.h): rank 0 runs tasks too, one round of its workers at a
 * time, and between rounds deals to the ranks that ask and records their
 * results as they come; a rank asks before its chunk is done. A failing
 * or interrupted rank stops the dealing (what finished is recorded).
 * Every rank calls it. 0, or -1 when this rank failed, or (rank 0) another
 * one did (said), or MPI failed. */
int ranks_run(const ranks_work *w);

#endif
