/*
 * guided: dealing a list of n items to P takers in shrinking chunks, for a
 * sweep spread over MPI ranks (plan/ranks.h).
 *
 * Each taker has a home region, the contiguous share [n*k/P, n*(k+1)/P)
 * that a static split would give it, so that in a point-major list of
 * runs it meets few points and loads few scenarios (loading is most of a
 * short run's cost; the checks of the points, dealt the same way, loaded
 * the same ones when the list is the whole grid). A taker is dealt the next items from the front of its own
 * region; when that is empty it takes from the back of the region with
 * the most left, far from where that region's owner is working.
 *
 * Chunk size: guided self-scheduling (C. D. Polychronopoulos and D. J.
 * Kuck, "Guided self-scheduling: a practical scheduling scheme for
 * parallel supercomputers", IEEE Trans. Computers C-36(12), 1987) deals
 * ceil(R/P) of the R items left; factoring (S. F. Hummel, E. Schonberg and
 * L. E. Flynn, "Factoring: a method for scheduling parallel loops", CACM
 * 35(8), 1992) deals half that, ceil(R/(2P)), so the last chunks are small
 * enough that the takers finish together even when one of them (a sweep's
 * rank 0, which also stores every result) goes slower. guided_size gives
 * that size, at least min.
 */
#ifndef CT_PLAN_GUIDED_H
#define CT_PLAN_GUIDED_H

typedef struct guided {
    int parts;
    long long *lo, *hi;              /* each taker's home region not yet dealt */
    long long left;                  /* items not yet dealt */
} guided;

/* n items for parts takers. 0, or -1 out of memory. */
int guided_init(guided *g, long long n, int parts);
void guided_free(guided *g);

/* ceil(left / (2 parts)), at least min (and at most left). */
long long guided_size(const guided *g, long long min);

/* Deal up to want items to taker k: [*lo, *hi), from the front of its
 * region, else from the back of the fullest one. 1, or 0 when nothing is
 * left (*lo == *hi). */
int guided_take(guided *g, int k, long long want, long long *lo, long long *hi);

#endif
