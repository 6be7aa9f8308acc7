/*
 * ranks: a sweep over MPI ranks (see ranks.h): the broadcasts from rank 0
 * (the verdict of the checks, the list of runs) and ranks_run, which deals
 * the checks and the runs as the ranks ask.
 *
 * Rank 0 deals (plan/guided.h) and runs tasks itself, one round of its
 * workers at a time, checking for messages between rounds; the others run
 * the chunks they are dealt. Messages, int32 fields:
 *
 *   k -> 0  TAG_ASK     {0}: deal me more (sent while the last two rounds
 *                       of a chunk run, so the answer is there when needed)
 *   0 -> k  TAG_GIVE    {lo, hi}: tasks [lo, hi) of the list; lo == hi:
 *                       none (rank 0 answers every ask)
 *   k -> 0  TAG_RESULT  a pool_msg then its text, one per task run, sent
 *                       without waiting (comm_isend) while rank k runs on
 *   k -> 0  TAG_DONE    {status, results sent}: nothing more from rank k
 *                       (status 0, 1 failed, 2 interrupted)
 *
 * Every rank knows the first chunks without a message: each computes the
 * same deal for ranks 1.. from a fresh state, so no rank waits for rank 0
 * to finish a run before starting. Nothing waits busy: rank 0 receives
 * results with comm_irecv and tests them between its runs, the others
 * send with comm_isend and test between theirs; waits with nothing to do
 * sleep between polls (comm_wait_idle).
 */
#include "plan/ranks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "hw/comm.h"
#include "plan/guided.h"

int ranks_init(char *err, size_t errlen) {
    if (comm_launched()) {
        /* OpenMPI busy-polls in a blocking receive unless told to yield */
        setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
        /* OpenMPI's own point-to-point layer (ob1) rather than UCX's: a
         * sweep sends a few kilobytes a run, and choosing UCX at MPI_Init
         * (it opens and probes its transports) cost 0.19 s of 0.23 s on the
         * 2-core machine of docs/performance.md, against 0.04 s with ob1 */
        setenv("OMPI_MCA_pml", "ob1", 0);
    }
    return comm_init(0, err, errlen);
}

void ranks_bcast_verdict(int *rc, int *bad) {
    int32_t out[2] = { *rc, *bad };
    comm_bcast_idle(out, sizeof out, 0);
    *rc = out[0];
    *bad = out[1];
}

int ranks_bcast_tasks(ranks_task **todo, int *nt) {
    int32_t n32 = *nt;
    if (comm_bcast_idle(&n32, sizeof n32, 0) < 0) return -1;
    *nt = n32;
    if (comm_rank() != 0 && *nt > 0 && !(*todo = malloc((size_t)*nt * sizeof **todo))) comm_abort(1);
    if (*nt > 0 && comm_bcast_idle(*todo, (size_t)*nt * sizeof **todo, 0) < 0) return -1;
    return 0;
}

/* ---- dealing ----------------------------------------------------------------------- */

#define TAG_ASK 7111
#define TAG_GIVE 7112
#define TAG_RESULT 7113
#define TAG_DONE 7114
#define AHEAD_ROUNDS 2                /* ask for more when this many rounds of a chunk are left */

/* A message under way: its request and its buffer. */
typedef struct inflight {
    comm_req *req;
    char *buf;
    size_t n;
    int from;
} inflight;

/* Rank k's first chunk, the same on every rank: ranks 1.. dealt in turn
 * from a fresh g. */
static void deal_first(guided *g, int size, int jobs, int k, long long *lo, long long *hi) {
    *lo = *hi = 0;
    for (int j = 1; j < size; j++) {
        long long a, b;
        guided_take(g, j, guided_size(g, jobs), &a, &b);
        if (j == k) *lo = a, *hi = b;
    }
}

/* ---- ranks other than 0 ------------------------------------------------------------ */

typedef struct taker {
    const ranks_work *w;
    int left;                        /* tasks of the chunk not answered yet */
    int asked;                       /* an ask is out, its answer not read */
    int bad;                         /* a message failed: stop */
    int32_t sent;
    inflight *out;
    int n;
    size_t cap;
} taker;

static void ask(taker *t) {
    int32_t z = 0;
    if (comm_send(&z, sizeof z, 0, TAG_ASK) < 0) t->bad = 1;
    else t->asked = 1;
}

/* Forget the sends that are done. */
static void flush_sends(taker *t) {
    int m = 0;
    for (int i = 0; i < t->n; i++) {
        int d = comm_test(t->out[i].req);
        if (d == 0) {
            t->out[m++] = t->out[i];
            continue;
        }
        if (d < 0) t->bad = 1;
        free(t->out[i].buf);
    }
    t->n = m;
}

/* One answer of this rank's runs: on its way to rank 0; ask for more
 * when the chunk is nearly done. */
static void taker_reply(void *ctx, const pool_msg *h, const char *payload) {
    taker *t = ctx;
    t->left--;
    size_t n = sizeof *h + h->n;
    char *m = malloc(n);
    comm_req *q = NULL;
    if (m) {
        memcpy(m, h, sizeof *h);
        memcpy(m + sizeof *h, payload, h->n);
    }
    if (!m || GROW(t->out, t->cap, (size_t)t->n + 1) < 0 || comm_isend(m, n, 0, TAG_RESULT, &q) < 0) {
        free(m);
        t->bad = 1;
    } else {
        t->out[t->n++] = (inflight){ q, m, n, 0 };
        t->sent++;
    }
    if (!t->asked && !t->bad && !pool_interrupted() && t->left <= AHEAD_ROUNDS * t->w->jobs) ask(t);
    flush_sends(t);
}

static int give_there(void *ctx) {
    flush_sends(ctx);
    return comm_probe(0, TAG_GIVE, NULL, NULL);
}

static int sends_done(void *ctx) {
    taker *t = ctx;
    flush_sends(t);
    return t->n == 0;
}

/* Wait for rank 0's answer to the ask that is out: the next chunk. */
static void read_give(taker *t, long long *lo, long long *hi) {
    int32_t give[2] = { 0, 0 };
    if (comm_wait_idle(give_there, t) < 0 || comm_recv(give, sizeof give, 0, TAG_GIVE) < 0) t->bad = 1;
    t->asked = 0;
    *lo = give[0];
    *hi = give[1] > give[0] ? give[1] : give[0];
}

static int take(const ranks_work *w, long long lo, long long hi) {
    taker t = { .w = w };
    int failed = 0;
    while (lo < hi && !t.bad && !failed && !pool_interrupted()) {
        t.left = (int)(hi - lo);
        if (t.left <= AHEAD_ROUNDS * w->jobs) ask(&t);
        failed = w->run(w->run_ctx, (int)lo, (int)hi, taker_reply, &t, &t.bad) < 0;
        if (failed || t.bad || pool_interrupted()) break;
        if (!t.asked) ask(&t);
        read_give(&t, &lo, &hi);
    }
    if (t.asked) read_give(&t, &lo, &hi);    /* stopping: not run, and the status below stops the sweep */
    int32_t done[2] = { failed || t.bad ? 1 : pool_interrupted() ? 2 : 0, t.sent };
    if (comm_send(done, sizeof done, 0, TAG_DONE) < 0) done[0] = 1;
    comm_wait_idle(sends_done, &t);
    free(t.out);
    return done[0] == 0 && !t.bad ? 0 : -1;
}

/* ---- rank 0 ----------------------------------------------------------------------- */

typedef struct dealer {
    const ranks_work *w;
    guided g;
    int size;
    int32_t *expect;                 /* by rank: results it sent, -1 until its TAG_DONE */
    int32_t *got;                    /* by rank: results recorded */
    int stopping;                    /* deal nothing more */
    int failed;                      /* a rank failed, or a message was broken */
    int broken;                      /* MPI failed: stop waiting */
    inflight *in;
    int n;
    size_t cap;
} dealer;

static void answer_ask(dealer *d, int from) {
    int32_t z, give[2] = { 0, 0 };
    long long lo = 0, hi = 0;
    if (comm_recv(&z, sizeof z, from, TAG_ASK) < 0) d->broken = 1;
    if (!d->stopping && !*d->w->stop && !pool_interrupted())
        guided_take(&d->g, from, guided_size(&d->g, d->w->jobs), &lo, &hi);
    give[0] = (int32_t)lo;
    give[1] = (int32_t)hi;
    if (comm_send(give, sizeof give, from, TAG_GIVE) < 0) d->broken = 1;
}

static void start_recv(dealer *d, int from, size_t n) {
    char *m = malloc(n + 1);
    comm_req *q = NULL;
    if (!m || GROW(d->in, d->cap, (size_t)d->n + 1) < 0 || comm_irecv(m, n, from, TAG_RESULT, &q) < 0) {
        free(m);
        d->broken = d->failed = 1;
        return;
    }
    d->in[d->n++] = (inflight){ q, m, n, from };
}

/* A result that came in: check its frame and record it. */
static void record(dealer *d, const inflight *m) {
    pool_msg h;
    if (m->n < sizeof h) {
        d->failed = 1;
        return;
    }
    memcpy(&h, m->buf, sizeof h);
    m->buf[m->n] = 0;
    if (h.p >= 0 && h.p < d->w->n_points && h.n == m->n - sizeof h)
        d->w->record(d->w->record_ctx, &h, m->buf + sizeof h);
    else
        d->failed = 1;
    d->got[m->from]++;
}

/* Record the receives that are done; the number. */
static int finish_recvs(dealer *d) {
    int m = 0, did = 0;
    for (int i = 0; i < d->n; i++) {
        int k = comm_test(d->in[i].req);
        if (k == 0) {
            d->in[m++] = d->in[i];
            continue;
        }
        if (k < 0) d->broken = d->failed = 1;
        else record(d, &d->in[i]);
        free(d->in[i].buf);
        did++;
    }
    d->n = m;
    return did;
}

static void read_done(dealer *d, int from) {
    int32_t done[2] = { 1, 0 };
    if (comm_recv(done, sizeof done, from, TAG_DONE) < 0) d->broken = 1;
    d->expect[from] = done[1] > 0 ? done[1] : 0;
    if (done[0] == 0) return;
    d->stopping = d->failed = 1;
    if (!pool_interrupted())
        sweep_say("clustertwin %s: rank %d %s; the sweep stops\n", d->w->cmd, from,
                  done[0] == 2 ? "was interrupted" : "failed (a worker died or a message was lost)");
}

/* What the other ranks sent: asks first (a rank waiting for work waits
 * least), then results, then ends. The number of things done. */
static int serve(dealer *d) {
    int did = 0, from = 0;
    size_t n = 0;
    for (; !d->broken && comm_probe(COMM_ANY_SOURCE, TAG_ASK, &from, &n) == 1; did++) answer_ask(d, from);
    for (; !d->broken && comm_probe(COMM_ANY_SOURCE, TAG_RESULT, &from, &n) == 1; did++) start_recv(d, from, n);
    did += finish_recvs(d);
    for (; !d->broken && comm_probe(COMM_ANY_SOURCE, TAG_DONE, &from, &n) == 1; did++) read_done(d, from);
    return did;
}

static int finished(const dealer *d) {
    if (d->broken) return 1;
    for (int k = 1; k < d->size; k++)
        if (d->expect[k] < 0 || d->got[k] < d->expect[k]) return 0;
    return 1;
}

static int serve_ready(void *ctx) {
    int did = serve(ctx);
    return finished(ctx) || did > 0;
}

/* Rank 0's own answers: recorded, then the others served. */
static void dealer_reply(void *ctx, const pool_msg *h, const char *payload) {
    dealer *d = ctx;
    d->w->record(d->w->record_ctx, h, payload);
    serve(d);
}

static int deal(dealer *d) {
    const ranks_work *w = d->w;
    long long lo, hi;
    deal_first(&d->g, d->size, w->jobs, 0, &lo, &hi);
    int rc = 0;
    serve(d);
    while (!d->stopping && !*w->stop && !pool_interrupted() && guided_take(&d->g, 0, w->jobs, &lo, &hi))
        if (w->run(w->run_ctx, (int)lo, (int)hi, dealer_reply, d, w->stop) < 0) rc = -1, d->stopping = 1;
    d->stopping |= rc < 0 || *w->stop || pool_interrupted();
    while (!finished(d)) comm_wait_idle(serve_ready, d);
    for (int i = 0; i < d->n; i++) free(d->in[i].buf);       /* only when MPI broke */
    return rc < 0 || d->failed || d->broken ? -1 : 0;
}

int ranks_run(const ranks_work *w) {
    int size = comm_size(), rank = comm_rank();
    dealer d = { .w = w, .size = size };
    if (guided_init(&d.g, w->nt, size) < 0) comm_abort(1);
    if (rank != 0) {
        long long lo, hi;
        deal_first(&d.g, size, w->jobs, rank, &lo, &hi);
        guided_free(&d.g);
        return take(w, lo, hi);
    }
    d.expect = malloc((size_t)size * sizeof *d.expect);
    d.got = calloc((size_t)size, sizeof *d.got);
    if (!d.expect || !d.got) comm_abort(1);
    for (int k = 0; k < size; k++) d.expect[k] = k == 0 ? 0 : -1;
    int rc = deal(&d);
    guided_free(&d.g);
    free(d.expect);
    free(d.got);
    free(d.in);
    return rc;
}
