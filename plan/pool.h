/*
 * pool: forked worker processes that do numbered items and send back a
 * text each, over one pipe each way; and the interruption (SIGINT,
 * SIGTERM) of a run of items.
 *
 * Messages between a worker and its parent:
 *
 *   parent -> worker   pool_item: int32 op (0 or EOF stop, else the
 *                      caller's), int32 p, int32 r, int32 0
 *   worker -> parent   pool_msg: int32 p, int32 r, int32 status, int32 op,
 *                      uint64 n, then n bytes (the caller's text: results
 *                      JSON, an error message)
 *
 * The same framing carries results from MPI ranks (plan/ranks.h). A worker
 * inherits its parent's memory at the fork (what the parent has loaded)
 * and keeps what it loads itself: an idle worker is handed the next item,
 * preferring one whose point p it has had (affinity), so each point is
 * loaded by few workers. Waiting is poll(2): no busy loop.
 */
#ifndef CT_PLAN_POOL_H
#define CT_PLAN_POOL_H

#include <stddef.h>
#include <stdint.h>

enum { POOL_STOP = 0 };

typedef struct pool_item {
    int32_t op, p, r, pad;
} pool_item;

typedef struct pool_msg {
    int32_t p, r, status, op;
    uint64_t n;
} pool_msg;

/* What the items are: work runs in a worker (or in this process when there
 * is no pool) and returns a status with *payload a malloc'd text (or
 * NULL); reply gets each answer in this process; died tells that the
 * worker doing `it` ended (wait_status as waitpid gives it). */
typedef struct pool_job {
    int (*work)(void *ctx, const pool_item *it, char **payload);
    void *work_ctx;
    void (*reply)(void *ctx, const pool_msg *h, const char *payload);
    void *reply_ctx;
    void (*died)(void *ctx, const pool_item *it, int wait_status);
} pool_job;

typedef struct pool pool;

/* Fork n workers doing job's work; had[0..n_points) (NULL: none) marks the
 * points this process has loaded already, which the workers inherit.
 * NULL when none could be started: err says why ("" when out of memory). */
pool *pool_start(int n, int n_points, const unsigned char *had, const pool_job *job, char *err, size_t errlen);

/* Close the pipes and wait for the workers; kill_busy: SIGTERM those that
 * are doing an item. NULL is a no-op. */
void pool_stop(pool *pl, int kill_busy);

/* Do items[0..n) on the pool (in this process when pl is NULL), calling
 * job->reply for each as it comes back. Stops handing out when *stop is
 * set or the run is interrupted. 0, or -1 when a worker died (job->died
 * told) or a pipe failed. */
int pool_do(pool *pl, const pool_item *items, int n, const pool_job *job, volatile int *stop);

/* Whole writes and reads on a descriptor, retried on EINTR. pool_write_all:
 * 0 or -1. pool_read_all: 0 ok, 1 end of file before anything, -1 error or
 * end of file in the middle. */
int pool_write_all(int fd, const void *buf, size_t n);
int pool_read_all(int fd, void *buf, size_t n);

/* SIGINT and SIGTERM set the interrupted flag (and SIGPIPE is ignored: a
 * dead worker's pipe is an error, not a signal) until pool_signals_restore. */
typedef struct pool_signals pool_signals;
pool_signals *pool_signals_catch(void);           /* NULL when out of memory: signals left as they are */
void pool_signals_restore(pool_signals *saved);   /* NULL is a no-op */
int pool_interrupted(void);

#endif
