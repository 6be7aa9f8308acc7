/*
 * bench_engine: the engine's event rate in the classic hold model, against a
 * bare binary heap doing the same work.
 *
 * Hold model: fill the queue with N events at exponential random times, then
 * repeatedly take the earliest and schedule one more at its time plus an
 * exponential random increment, so the queue stays at N. The increments are
 * drawn once into an array, so both loops see the same numbers in the same
 * order and RNG cost is left out. Both order by (time, insertion sequence),
 * so they pop the same events; a checksum of the popped times proves it.
 *
 * The bare heap is what a hand-written simulator would have: an array-based
 * binary min-heap of (time, seq), no handlers, no ids, no cancel. The engine
 * pays for all of those, through its public API: engine_run() dispatching a
 * handler that calls engine_after(). It wins them back with its 4-ary,
 * cache-line-aligned layout and its prefetches (sim/engine.c), which is why
 * its ratio can exceed 1 once the queue outgrows the caches.
 *
 * Output, one line per N, and exit status 1 if any ratio is under 0.70:
 *   engine hold N=1000: 45.1 M events/s, bare heap 52.3 M events/s, ratio 0.86 (target >= 0.70) ok
 * Each rate is the best of 3 repetitions (the two loops alternate).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/engine.h"
#include "sim/rng.h"

#define TARGET 0.70
#define REPS 3
#define NINCR (1u << 20)            /* precomputed increments, reused cyclically */
#define MEAN_INCR_NS 1000.0

static sim_time incr[NINCR];

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- bare binary heap ------------------------------------------------- */

typedef struct bent {
    int64_t t;
    uint64_t seq;
} bent;

static inline int bless(bent a, bent b) {
    return a.t < b.t || (a.t == b.t && a.seq < b.seq);
}

typedef struct bheap {
    bent *v;                        /* v[0..n) */
    size_t n;
    uint64_t seq;
} bheap;

static void bheap_push(bheap *h, int64_t t) {
    bent x = { t, h->seq++ };
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!bless(x, h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
}

static bent bheap_pop(bheap *h) {
    bent top = h->v[0];
    bent x = h->v[--h->n];
    size_t n = h->n, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && bless(h->v[c + 1], h->v[c]))
            c++;
        if (!bless(h->v[c], x))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n > 0)
        h->v[i] = x;
    return top;
}

/* Returns events/s; *sum gets the checksum of popped times. */
static double bare_hold(size_t n, uint64_t ops, uint64_t *sum) {
    bheap h = { malloc((n + 1) * sizeof(bent)), 0, 0 };
    if (!h.v) {
        fprintf(stderr, "bench_engine: out of memory\n");
        exit(2);
    }
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++)
        bheap_push(&h, incr[k++ & (NINCR - 1)]);
    uint64_t s = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < ops; i++) {
        bent top = bheap_pop(&h);
        s += (uint64_t)top.t;
        bheap_push(&h, top.t + incr[k++ & (NINCR - 1)]);
    }
    double dt = now_s() - t0;
    free(h.v);
    *sum = s;
    return (double)ops / dt;
}

/* ---- the engine ------------------------------------------------------- */

typedef struct hold {
    uint64_t left;                  /* events still to dispatch */
    uint32_t k;                     /* next increment */
    uint64_t sum;
} hold;

static void hold_fn(engine *e, void *arg) {
    hold *p = arg;
    p->sum += (uint64_t)engine_now(e);
    engine_after(e, incr[p->k++ & (NINCR - 1)], hold_fn, p);
    if (--p->left == 0)
        engine_stop(e);
}

static double engine_hold(size_t n, uint64_t ops, uint64_t *sum) {
    engine *e = engine_new();
    if (!e) {
        fprintf(stderr, "bench_engine: out of memory\n");
        exit(2);
    }
    hold h = { ops, 0, 0 };
    for (size_t i = 0; i < n; i++)
        if (!engine_schedule(e, incr[h.k++ & (NINCR - 1)], hold_fn, &h)) {
            fprintf(stderr, "bench_engine: out of memory\n");
            exit(2);
        }
    double t0 = now_s();
    uint64_t ran = engine_run(e, SIM_FOREVER);
    double dt = now_s() - t0;
    engine_free(e);
    if (ran != ops) {
        fprintf(stderr, "bench_engine: ran %llu events, wanted %llu\n",
                (unsigned long long)ran, (unsigned long long)ops);
        exit(2);
    }
    *sum = h.sum;
    return (double)ops / dt;
}

/* With arguments "N OPS", one configuration only (for profiling). */
int main(int argc, char **argv) {
    rng *r = rng_new(1, "bench/hold", 0);
    if (!r) {
        fprintf(stderr, "bench_engine: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < NINCR; i++)
        incr[i] = (sim_time)(rng_exponential(r, MEAN_INCR_NS) + 0.5);
    rng_free(r);

    struct { size_t n; uint64_t ops; } runs[] = {
        { 1000, 10000000 },
        { 100000, 10000000 },
        { 1000000, 5000000 },
    };
    size_t nruns = sizeof runs / sizeof runs[0];
    if (argc == 3) {
        runs[0].n = strtoull(argv[1], NULL, 10);
        runs[0].ops = strtoull(argv[2], NULL, 10);
        nruns = 1;
    }
    int fail = 0;
    for (size_t j = 0; j < nruns; j++) {
        double best_e = 0, best_b = 0;
        for (int rep = 0; rep < REPS; rep++) {
            uint64_t se, sb;
            double re = engine_hold(runs[j].n, runs[j].ops, &se);
            double rb = bare_hold(runs[j].n, runs[j].ops, &sb);
            if (se != sb) {
                fprintf(stderr, "bench_engine: N=%zu: engine and bare heap popped "
                        "different events (checksums %llu, %llu)\n", runs[j].n,
                        (unsigned long long)se, (unsigned long long)sb);
                return 2;
            }
            if (re > best_e)
                best_e = re;
            if (rb > best_b)
                best_b = rb;
        }
        double ratio = best_e / best_b;
        int ok = ratio >= TARGET;
        fail |= !ok;
        printf("engine hold N=%zu: %.1f M events/s, bare heap %.1f M events/s, "
               "ratio %.2f (target >= %.2f) %s\n", runs[j].n, best_e / 1e6,
               best_b / 1e6, ratio, TARGET, ok ? "ok" : "FAIL");
        fflush(stdout);
    }
    return fail;
}
