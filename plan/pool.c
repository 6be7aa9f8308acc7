/*
 * pool: forked workers and their pipe framing (see pool.h). Cost: one
 * fork per worker per sweep; a message is a 24-byte header and the text.
 */
#include "plan/pool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define POOL_MAX_MSG ((uint64_t)1 << 36)     /* a larger header is a broken pipe */
#define AFFINITY_WINDOW 256                  /* items looked ahead for a loaded point */

typedef struct worker {
    pid_t pid;
    int to, from;                    /* fds */
    int busy;                        /* item index + 1, 0 idle */
    unsigned char *has;              /* points this worker has loaded */
} worker;

struct pool {
    worker *w;
    int n;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

int pool_interrupted(void) { return interrupted != 0; }

struct pool_signals {
    struct sigaction old_int, old_term, old_pipe;
};

pool_signals *pool_signals_catch(void) {
    pool_signals *s = malloc(sizeof *s);
    if (!s) return NULL;
    interrupted = 0;
    struct sigaction sa, ign;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
    ign = sa;
    ign.sa_handler = SIG_IGN;                 /* a dead worker's pipe: an error, not a signal */
    sigaction(SIGPIPE, &ign, &s->old_pipe);
    return s;
}

void pool_signals_restore(pool_signals *s) {
    if (!s) return;
    sigaction(SIGINT, &s->old_int, NULL);
    sigaction(SIGTERM, &s->old_term, NULL);
    sigaction(SIGPIPE, &s->old_pipe, NULL);
    free(s);
}

int pool_write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int pool_read_all(int fd, void *buf, size_t n) {
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, p + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) return got == 0 ? 1 : -1;
        got += (size_t)k;
    }
    return 0;
}

/* Do one item and frame its answer. */
static void answer(const pool_job *job, const pool_item *it, pool_msg *h, char **payload) {
    *payload = NULL;
    int st = job->work(job->work_ctx, it, payload);
    *h = (pool_msg){ it->p, it->r, st, it->op, *payload ? strlen(*payload) : 0 };
}

static void worker_main(const pool_job *job, int in, int out) {
    for (;;) {
        pool_item it;
        if (pool_read_all(in, &it, sizeof it) != 0 || it.op == POOL_STOP) break;
        pool_msg h;
        char *payload;
        answer(job, &it, &h, &payload);
        int bad = pool_write_all(out, &h, sizeof h) < 0 || (h.n && pool_write_all(out, payload, h.n) < 0);
        free(payload);
        if (bad) break;
    }
}

void pool_stop(pool *pl, int kill_busy) {
    if (!pl) return;
    for (int k = 0; k < pl->n; k++) {
        close(pl->w[k].to);
        if (kill_busy && pl->w[k].pid && pl->w[k].busy) kill(pl->w[k].pid, SIGTERM);
    }
    for (int k = 0; k < pl->n; k++) {
        if (pl->w[k].pid) waitpid(pl->w[k].pid, NULL, 0);
        close(pl->w[k].from);
        free(pl->w[k].has);
    }
    free(pl->w);
    free(pl);
}

/* Fork worker k with its two pipes. 0, or -1 (nothing left open). */
static int fork_worker(pool *pl, worker *w, const pool_job *job) {
    int a[2], b[2];
    if (pipe(a) < 0) return -1;
    if (pipe(b) < 0) {
        close(a[0]);
        close(a[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(a[0]), close(a[1]), close(b[0]), close(b[1]);
        return -1;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        close(a[1]);
        close(b[0]);
        for (int k = 0; k < pl->n; k++) close(pl->w[k].to), close(pl->w[k].from);
        worker_main(job, a[0], b[1]);
        _exit(0);
    }
    close(a[0]);
    close(b[1]);
    w->pid = pid;
    w->to = a[1];
    w->from = b[0];
    return 0;
}

pool *pool_start(int n, int n_points, const unsigned char *had, const pool_job *job, char *err, size_t errlen) {
    err[0] = 0;
    pool *pl = calloc(1, sizeof *pl);
    if (!pl || !(pl->w = calloc((size_t)n, sizeof *pl->w))) {
        free(pl);
        return NULL;
    }
    fflush(NULL);
    for (; pl->n < n; pl->n++) {
        worker *w = &pl->w[pl->n];
        if (!(w->has = calloc((size_t)n_points + 1, 1))) break;
        if (had) memcpy(w->has, had, (size_t)n_points);
        if (fork_worker(pl, w, job) < 0) break;
    }
    if (pl->n == 0) {
        snprintf(err, errlen, "cannot start worker processes: %s", strerror(errno));
        free(pl->w[0].has);
        free(pl->w);
        free(pl);
        return NULL;
    }
    return pl;
}

/* The items without a pool: one after the other in this process. */
static int do_here(const pool_item *items, int n, const pool_job *job, volatile int *stop) {
    for (int i = 0; i < n && !interrupted && !*stop; i++) {
        pool_msg h;
        char *payload;
        answer(job, &items[i], &h, &payload);
        job->reply(job->reply_ctx, &h, payload ? payload : "");
        free(payload);
    }
    return 0;
}

/* The state of one pool_do: which items were handed out, the poll set. */
typedef struct round {
    pool *pl;
    const pool_item *items;
    int n;
    const pool_job *job;
    unsigned char *given;
    struct pollfd *pf;
    int *who;
    int first, busy;
} round;

/* Give every idle worker an item, preferring a point it has loaded. 0 or
 * -1 (a pipe failed). */
static int hand_out(round *rd, volatile int *stop) {
    for (int k = 0; k < rd->pl->n && !interrupted && !*stop; k++) {
        worker *w = &rd->pl->w[k];
        if (w->busy || w->pid == 0) continue;
        while (rd->first < rd->n && rd->given[rd->first]) rd->first++;
        if (rd->first >= rd->n) break;
        int pick = rd->first;
        for (int i = rd->first; i < rd->n && i < rd->first + AFFINITY_WINDOW; i++)          /* affinity */
            if (!rd->given[i] && w->has[rd->items[i].p]) {
                pick = i;
                break;
            }
        if (pool_write_all(w->to, &rd->items[pick], sizeof rd->items[pick]) < 0) return -1;
        rd->given[pick] = 1;
        w->has[rd->items[pick].p] = 1;
        w->busy = pick + 1;
        rd->busy++;
    }
    return 0;
}

/* Read worker w's answer and pass it on. 0, or -1 when the worker died
 * (told through job->died unless interrupted). */
static int take_answer(round *rd, worker *w) {
    pool_msg h;
    int got = pool_read_all(w->from, &h, sizeof h);
    char *payload = NULL;
    if (got == 0 && h.n < POOL_MAX_MSG) {
        payload = malloc(h.n + 1);
        if (!payload || (h.n && pool_read_all(w->from, payload, h.n) != 0)) got = -1;
        else payload[h.n] = 0;
    } else if (got == 0) {
        got = -1;
    }
    int rc = 0;
    if (got != 0) {
        if (!interrupted) {
            int ws = 0;
            waitpid(w->pid, &ws, 0);
            rd->job->died(rd->job->work_ctx, &rd->items[w->busy - 1], ws);
            w->pid = 0;
            rc = -1;
        }
    } else {
        rd->job->reply(rd->job->reply_ctx, &h, payload);
    }
    free(payload);
    w->busy = 0;
    rd->busy--;
    return rc;
}

/* Wait (poll, at most a second) for the busy workers and take what came.
 * 1 go on, 0 stop (interrupted), -1 a worker died. */
static int wait_answers(round *rd) {
    int np = 0;
    for (int k = 0; k < rd->pl->n; k++)
        if (rd->pl->w[k].busy) {
            rd->pf[np].fd = rd->pl->w[k].from;
            rd->pf[np].events = POLLIN;
            rd->pf[np].revents = 0;
            rd->who[np++] = k;
        }
    int ready = poll(rd->pf, (nfds_t)np, interrupted ? 0 : 1000);
    if (ready < 0 && errno == EINTR) return interrupted ? 0 : 1;
    if (ready == 0 && interrupted) return 0;
    int rc = 1;
    for (int i = 0; i < np && ready > 0; i++) {
        if (!rd->pf[i].revents) continue;
        if (take_answer(rd, &rd->pl->w[rd->who[i]]) < 0) rc = -1;
    }
    return rc;
}

int pool_do(pool *pl, const pool_item *items, int n, const pool_job *job, volatile int *stop) {
    if (n == 0) return 0;
    if (!pl) return do_here(items, n, job, stop);
    round rd = { .pl = pl, .items = items, .n = n, .job = job };
    rd.given = calloc((size_t)n, 1);
    rd.pf = calloc((size_t)pl->n, sizeof *rd.pf);
    rd.who = calloc((size_t)pl->n, sizeof *rd.who);
    int rc = rd.given && rd.pf && rd.who ? 0 : -1;
    while (rc == 0) {
        if (hand_out(&rd, stop) < 0) rc = -1;
        if (rd.busy == 0 || rc) break;
        int w = wait_answers(&rd);
        if (w == 0) break;
        if (w < 0) rc = -1;
    }
    /* what is still out (interrupted, or a worker died): stop it */
    for (int k = 0; rd.busy && k < pl->n; k++)
        if (pl->w[k].busy && pl->w[k].pid) {
            kill(pl->w[k].pid, SIGTERM);
            waitpid(pl->w[k].pid, NULL, 0);
            pl->w[k].pid = 0;
            pl->w[k].busy = 0;
        }
    free(rd.given);
    free(rd.pf);
    free(rd.who);
    return rc;
}
