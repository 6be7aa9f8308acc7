/*
 * ranks: a sweep over MPI ranks (hw/comm.h). Rank 0 decides which runs
 * remain and broadcasts them; each rank runs a contiguous share of that
 * point-major list (with its own worker processes), so it loads only its
 * own points, and sends its results to rank 0 when done; only rank 0 opens
 * the database. The checks go the same way: each rank checks the points of
 * its share and rank 0 names the first bad one for all.
 *
 * The waits that may be long (rank 0 for the others' shares, the others
 * for rank 0's checks, tasks and database writes) sleep between polls
 * (hw/comm.h: comm_wait_message, comm_bcast_idle, comm_barrier_idle): a
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

/* The share [*lo, *hi) of total items that rank k of size runs. */
void ranks_share(long long total, int k, int size, long long *lo, long long *hi);

/* Every rank's check verdict to rank 0 (rc a status, *bad the first bad
 * point or -1 with *msg why, sw->unfit[] the points that do not fit):
 * rank 0 keeps the first bad point in grid order and learns every rank's
 * misfits. Returns the status rank 0 sees (PLAN_FAILED when a rank failed). */
int ranks_gather_checks(sweep *sw, int rc, int *bad, char **msg);

/* Rank 0's status and first bad point to every rank. */
void ranks_bcast_verdict(int *rc, int *bad);

/* Rank 0's list of runs (*todo, *nt; *nt < 0: rank 0 failed) to every
 * rank; the others allocate *todo. 0, or -1 when MPI failed. */
int ranks_bcast_tasks(ranks_task **todo, int *nt);

/* A rank's framed results (pool_msg then the text, as kept by the sweep)
 * to rank 0. 0 or -1. */
int ranks_send_results(char *const *buf, const size_t *len, int n);

/* Rank 0: every other rank's results, each passed to on (the pool's reply
 * shape). 0, or -1 when a message was broken or MPI failed. */
int ranks_recv_results(int n_points, void (*on)(void *ctx, const pool_msg *h, const char *payload), void *ctx);

#endif
