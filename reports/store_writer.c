/*
 * store_writer: a second thread that writes a run's rows while the
 * simulation goes on (store_int.h: store_writer_*).
 *
 * The 10K-GPU year publishes ~300,000 events, 19 batches of EVENT_BATCH;
 * written on the simulating thread they were a third of what the store
 * added to the run (perf, the second round). Here the sink hands a full
 * batch to the writer and goes on filling another buffer. Jobs wait in a
 * queue, run one at a time in the order given, each batch in its own
 * transaction as before: the file holds the same rows, and a run killed at
 * any moment leaves whole batches only. A job that fails drops the ones
 * queued behind it (a later batch must not land without an earlier one).
 *
 * The queue is deep because the writer is slower than the simulation on
 * its busiest stretch: the 10K-GPU year's ~310,000 event rows take SQLite
 * 0.13-0.15 s and the simulation publishes them in 0.09 s, so with two
 * buffers the simulating thread waited for the writer most of the run
 * (0.17-0.33 s of wall time against 0.16 s of its CPU, "The results store,
 * fourth round" in docs/performance.md). A caller says how many jobs may
 * be in flight when it gives one (room), which is how many buffers it
 * cycles through less one: jobs of the same function only, so that the
 * event batches still queued when the run ends do not hold back the
 * jobs' blocks that the JSON hands over behind them (the simulating
 * thread waited there for the batches queued before its first block:
 * "The results store, sixth round" in docs/performance.md).
 *
 * The connection is used by one thread at a time: the writer while jobs
 * are queued, the caller after a wait that emptied the queue (the mutex
 * orders the two). A writer that cannot be started is no error: the jobs
 * then run on the caller's thread.
 */
#include "reports/store_int.h"

#include <pthread.h>
#include <stdlib.h>

#include <sqlite3.h>

/* Jobs queued at most: more than any two callers' rooms together (the
 * event batches still queued when the jobs' blocks come). */
#define WRITER_QUEUE 64

struct store_writer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct {
        int (*job)(void *);
        void *arg;
    } q[WRITER_QUEUE];                 /* the jobs given and not yet done, from head */
    int head, n;
    int rc;                            /* the first failure since the last wait */
    int quit;
};

static void *writer_main(void *p) {
    store_writer *w = p;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->n && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->n) break;
        int (*job)(void *) = w->q[w->head].job;
        void *arg = w->q[w->head].arg;
        int skip = w->rc != SQLITE_OK;            /* one before it failed */
        pthread_mutex_unlock(&w->mu);
        int rc = skip ? SQLITE_OK : job(arg);
        pthread_mutex_lock(&w->mu);
        if (rc != SQLITE_OK) w->rc = rc;
        w->head = (w->head + 1) % WRITER_QUEUE;
        w->n--;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

store_writer *store_writer_start(void) {
    store_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        return NULL;
    }
    if (pthread_cond_init(&w->cv, NULL) != 0 || pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

int store_writer_wait(store_writer *w) {
    if (!w) return SQLITE_OK;
    pthread_mutex_lock(&w->mu);
    while (w->n) pthread_cond_wait(&w->cv, &w->mu);
    int rc = w->rc;
    w->rc = SQLITE_OK;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Jobs of function job queued (the one running included); under w->mu. */
static int queued(const store_writer *w, int (*job)(void *)) {
    int n = 0;
    for (int k = 0; k < w->n; k++) n += w->q[(w->head + k) % WRITER_QUEUE].job == job;
    return n;
}

int store_writer_give(store_writer *w, int room, int (*job)(void *), void *arg) {
    if (!w) return job(arg);
    if (room < 1) room = 1;
    if (room > WRITER_QUEUE) room = WRITER_QUEUE;
    pthread_mutex_lock(&w->mu);
    while (queued(w, job) >= room || w->n == WRITER_QUEUE) pthread_cond_wait(&w->cv, &w->mu);
    int rc = w->rc;
    w->rc = SQLITE_OK;
    if (rc == SQLITE_OK) {
        int k = (w->head + w->n++) % WRITER_QUEUE;
        w->q[k].job = job;
        w->q[k].arg = arg;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int store_writer_stop(store_writer *w) {
    if (!w) return SQLITE_OK;
    int rc = store_writer_wait(w);
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return rc;
}
