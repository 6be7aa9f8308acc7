/*
 * comm: the few MPI calls clustertwin needs, behind one small interface.
 *
 * Built with MPI when the Makefile finds OpenMPI's mpicc (CT_HAVE_MPI);
 * without it every process is rank 0 of 1 and comm_init() says MPI is not
 * built in. A process takes part in MPI only when it was started by an MPI
 * launcher (mpirun sets OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK) or
 * when a caller asks for it with comm_init(..., 1): a plain `clustertwin run`
 * never initialises MPI.
 *
 * Used by the mpi measurement backend (hw/) and by `sweep` to spread points
 * over ranks (rank 0 deals the runs and records every result, plan/ranks.h).
 */
#ifndef CT_COMM_H
#define CT_COMM_H

#include <stddef.h>

/* 1 when this binary was built with MPI. */
int comm_built(void);

/* 1 when an MPI launcher started this process (environment only; MPI is
 * not initialised by asking). */
int comm_launched(void);

/* Initialise MPI when launched by mpirun, or always when force is set.
 * Returns 0 (also when not launched and not forced: a world of one), or -1
 * with err set when MPI is wanted but not built in or fails to start. */
int comm_init(int force, char *err, size_t errlen);

/* Finalise MPI if comm_init started it. Safe to call more than once. */
void comm_finalize(void);

int comm_rank(void);                 /* 0 outside MPI */
int comm_size(void);                 /* 1 outside MPI */
int comm_active(void);               /* MPI initialised and size >= 1 */

/* Host name of this rank (MPI_Get_processor_name, else gethostname). */
void comm_host(char *buf, size_t len);

/* MPI library version string ("" outside MPI). */
void comm_library_version(char *buf, size_t len);

int comm_barrier(void);              /* 0, or -1 on error; no-op outside MPI */

/* Point to point, bytes. Return 0, -1 on error. */
int comm_send(const void *buf, size_t n, int dest, int tag);
int comm_recv(void *buf, size_t n, int src, int tag);

/* Broadcast n bytes from root. */
int comm_bcast(void *buf, size_t n, int root);

/* Collectives over all ranks, as nccl-tests sizes them (bytes are the
 * whole buffer a rank holds; float32 sums). Return 0, or -1 on error or
 * outside MPI (except comm_max_double, which returns x outside MPI).
 *   allreduce       count floats in, count floats out (in place when send == recv)
 *   allgather       send bytes_per_rank, recv size * bytes_per_rank
 *   reduce_scatter  send size * recvcount floats, recv recvcount floats
 *   alltoall        send and recv size * bytes_per_rank
 *   sendrecv        send n bytes to dest, receive n bytes from src */
int comm_allreduce_f32(const float *send, float *recv, size_t count);
int comm_allgather(const void *send, void *recv, size_t bytes_per_rank);
int comm_reduce_scatter_f32(const float *send, float *recv, size_t recvcount);
int comm_alltoall(const void *send, void *recv, size_t bytes_per_rank);
int comm_sendrecv(const void *send, void *recv, size_t n, int dest, int src, int tag);
double comm_max_double(double x);

/* Wall clock (MPI_Wtime inside MPI, else CLOCK_MONOTONIC), seconds. */
double comm_wtime(void);

/* Abort every rank (after an error on one). */
void comm_abort(int code);

/* Waits that sleep between polls (50 us doubling to 10 ms) instead of
 * busy-polling a core, for waits that may last as long as a simulation
 * (a sweep's ranks): comm_bcast and comm_barrier. 0, or -1 on an MPI
 * error. */
int comm_bcast_idle(void *buf, size_t n, int root);
int comm_barrier_idle(void);

/* Without waiting, for a rank that checks between pieces of its own work
 * (a sweep's rank 0 between runs):
 *   comm_probe   is a message from src (COMM_ANY_SOURCE: any) with tag
 *                there to receive? 1 with *from and *bytes set (either may
 *                be NULL), 0 not yet, -1 error
 *   comm_isend   start sending n bytes (buf untouched until done)
 *   comm_irecv   start receiving n bytes (buf unread until done)
 *   comm_test    1 done (req freed), 0 under way, -1 error (req freed)
 * comm_isend and comm_irecv return 0 with *req set, or -1 with *req NULL.
 * MPI moves a message only inside MPI calls, so a rank with operations
 * under way calls comm_test or comm_probe between its pieces of work. */
#define COMM_ANY_SOURCE (-1)
typedef struct comm_req comm_req;
int comm_probe(int src, int tag, int *from, size_t *bytes);
int comm_isend(const void *buf, size_t n, int dest, int tag, comm_req **req);
int comm_irecv(void *buf, size_t n, int src, int tag, comm_req **req);
int comm_test(comm_req *req);

/* Call ready(ctx) until it returns non-zero (which is returned), sleeping
 * between calls as the waits above do (50 us doubling to 10 ms): for a
 * wait on several things at once (ready probes and tests them). */
int comm_wait_idle(int (*ready)(void *ctx), void *ctx);

#endif
