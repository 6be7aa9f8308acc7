/*
 * store_writer: a second thread that writes a run's event batches while
 * the simulation goes on (store_int.h: store_writer_*).
 *
 * The 10K-GPU year publishes ~300,000 events, 19 batches of EVENT_BATCH;
 * written on the simulating thread they were a third of what the store
 * added to the run (perf, this work). Here the sink hands a full batch to
 * the writer and goes on filling the other of two buffers; it waits only
 * when the writer has not finished the batch before. One batch at a time,
 * in order, each in its own transaction as before: the file holds the same
 * rows, and a run killed at any moment leaves whole batches only.
 *
 * The connection is used by one thread at a time: the writer between a
 * hand-off and the wait that follows it, the caller otherwise (the mutex
 * orders the two). A writer that cannot be started is no error: the job
 * then runs on the caller's thread.
 */
#include "reports/store_int.h"

#include <pthread.h>
#include <stdlib.h>

#include <sqlite3.h>

struct store_writer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int (*job)(void *);                /* the job handed over, NULL when idle */
    void *arg;
    int rc;                            /* the last job's result */
    int quit;
};

static void *writer_main(void *p) {
    store_writer *w = p;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->job && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->job) break;
        int (*job)(void *) = w->job;
        pthread_mutex_unlock(&w->mu);
        int rc = job(w->arg);
        pthread_mutex_lock(&w->mu);
        w->rc = rc;
        w->job = NULL;
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
    while (w->job) pthread_cond_wait(&w->cv, &w->mu);
    int rc = w->rc;
    w->rc = SQLITE_OK;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Tell the idle writer: a job (job(arg)), or to end (job NULL). */
static void post(store_writer *w, int (*job)(void *), void *arg) {
    pthread_mutex_lock(&w->mu);
    w->job = job;
    w->arg = arg;
    w->quit = !job;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

int store_writer_give(store_writer *w, int (*job)(void *), void *arg) {
    if (!w) return job(arg);
    int rc = store_writer_wait(w);
    if (rc == SQLITE_OK) post(w, job, arg);
    return rc;
}

int store_writer_stop(store_writer *w) {
    if (!w) return SQLITE_OK;
    int rc = store_writer_wait(w);
    post(w, NULL, NULL);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return rc;
}
