/*
 * rng: seeded random streams, one per simulated component, drawing through
 * GSL (gsl_rng + gsl_ran_*).
 *
 * The generator is xoshiro256** (Blackman and Vigna, 2018), plugged into GSL
 * as a gsl_rng_type. GSL's own generators (mt19937, taus2, ranlxd...) use only
 * 32 bits of the seed, so the 64-bit stream seeds of rng_derive_seed would
 * collapse to 2^32 streams: among 80,000 components, two identical streams
 * would be more likely than not. xoshiro256** takes all 64 bits (expanded to
 * its 256-bit state with splitmix64), has period 2^256 - 1, and every output
 * bit passes BigCrush. It is plain integer arithmetic, so a seed gives the same
 * numbers on every machine (the distributions' floating point aside).
 *
 * Errors: parameters out of range are asserted (a bug in the caller). The
 * constructors return NULL on bad input or when malloc fails. GSL reports its
 * own allocation failures through gsl_error(), whose default handler aborts;
 * a program that wants NULL instead calls gsl_set_error_handler_off() in main.
 *
 * Cost: a draw is a few ns (uniform) to a few tens of ns (gamma, lognormal).
 */
#include "sim/rng.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

/* gsl_rng_type passes seeds and outputs as unsigned long. */
_Static_assert(sizeof(unsigned long) == 8, "rng needs a 64-bit unsigned long");

struct rng {
    gsl_rng *g;
};

struct rng_discrete {
    gsl_ran_discrete_t *t;
};

struct rng_empirical {
    size_t n;
    double x[];                      /* n samples, ascending */
};

/* ---- seeds ------------------------------------------------------------ */

static uint64_t splitmix64_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t x) {
    return splitmix64_next(&x);
}

static uint64_t fnv1a64(const char *z) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *z; z++) {
        h ^= (unsigned char)*z;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Each step is a bijection of the running value, so two seeds never give the
 * same stream seed for the same (component, index), and likewise two indexes
 * for the same (seed, component). A NULL component counts as "". */
uint64_t rng_derive_seed(uint64_t seed, const char *component, uint64_t index) {
    uint64_t z = splitmix64(seed);
    z = splitmix64(z ^ fnv1a64(component ? component : ""));
    return splitmix64(z ^ index);
}

/* Two rounds of the splitmix64 finaliser over (key, n): a hash whose
 * outputs for consecutive n pass as independent uniforms (the finaliser is
 * the output function of SplitMix64, which passes BigCrush; Steele, Lea and
 * Flood, 2014). The top 53 bits, offset by half a step, give (0, 1). */
double rng_counter_uniform_pos(uint64_t key, uint64_t n) {
    uint64_t z = splitmix64(key ^ splitmix64(n));
    return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}

/* ---- xoshiro256** as a gsl_rng_type ----------------------------------- */

typedef struct xoshiro_state {
    uint64_t s[4];
} xoshiro_state;

static inline uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

static unsigned long xoshiro_get(void *vstate) {
    uint64_t *s = ((xoshiro_state *)vstate)->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* The top 53 bits as a double in [0, 1). */
static double xoshiro_get_double(void *vstate) {
    return (double)(xoshiro_get(vstate) >> 11) * 0x1.0p-53;
}

/* The state is four successive splitmix64 outputs: never all zero, since
 * splitmix64 is a bijection of its counter and at most one output is 0. */
static void xoshiro_set(void *vstate, unsigned long seed) {
    uint64_t *s = ((xoshiro_state *)vstate)->s;
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++)
        s[i] = splitmix64_next(&sm);
}

static const gsl_rng_type xoshiro256ss_type = {
    "xoshiro256**",
    UINT64_MAX,                      /* max */
    0,                               /* min */
    sizeof(xoshiro_state),
    xoshiro_set,
    xoshiro_get,
    xoshiro_get_double,
};

/* ---- streams ---------------------------------------------------------- */

rng *rng_new(uint64_t seed, const char *component, uint64_t index) {
    rng *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    /* GSL's default error handler aborts when the allocation fails; for
     * this call only, let it return NULL so the caller reports it. */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    r->g = gsl_rng_alloc(&xoshiro256ss_type);
    gsl_set_error_handler(old);
    if (!r->g) {
        free(r);
        return NULL;
    }
    gsl_rng_set(r->g, rng_derive_seed(seed, component, index));
    return r;
}

void rng_free(rng *r) {
    if (!r)
        return;
    gsl_rng_free(r->g);
    free(r);
}

double rng_uniform(rng *r) {
    return gsl_rng_uniform(r->g);
}

double rng_uniform_pos(rng *r) {
    return gsl_rng_uniform_pos(r->g);
}

uint64_t rng_uniform_int(rng *r, uint64_t n) {
    assert(n >= 1);
    return gsl_rng_uniform_int(r->g, n);
}

/* ---- continuous distributions ----------------------------------------- */

double rng_exponential(rng *r, double mean) {
    assert(mean > 0);
    return gsl_ran_exponential(r->g, mean);
}

double rng_weibull(rng *r, double scale, double shape) {
    assert(scale > 0 && shape > 0);
    return gsl_ran_weibull(r->g, scale, shape);
}

double rng_weibull_mean(rng *r, double mean, double shape) {
    assert(mean > 0 && shape > 0);
    /* mean / Γ(1+1/shape) in log space: Γ overflows a double (and GSL
     * reports an error) for shape < 0.0059. */
    return gsl_ran_weibull(r->g, exp(log(mean) - lgamma(1.0 + 1.0 / shape)), shape);
}

double rng_lognormal(rng *r, double mu, double sigma) {
    assert(sigma > 0);               /* mu is a log, any sign */
    return gsl_ran_lognormal(r->g, mu, sigma);
}

/* mean = exp(mu + sigma^2/2), cv^2 = exp(sigma^2) - 1. */
double rng_lognormal_mean_cv(rng *r, double mean, double cv) {
    assert(mean > 0 && cv > 0);
    double s2 = log1p(cv * cv);
    return gsl_ran_lognormal(r->g, log(mean) - 0.5 * s2, sqrt(s2));
}

double rng_gamma(rng *r, double shape, double scale) {
    assert(shape > 0 && scale > 0);
    return gsl_ran_gamma(r->g, shape, scale);
}

/* mean = shape * scale, cv^2 = 1 / shape. */
double rng_gamma_mean_cv(rng *r, double mean, double cv) {
    assert(mean > 0 && cv > 0);
    double shape = 1.0 / (cv * cv);
    return gsl_ran_gamma(r->g, shape, mean / shape);
}

/* mean 0 is allowed and always gives 0. */
unsigned int rng_poisson(rng *r, double mean) {
    assert(mean >= 0);
    return gsl_ran_poisson(r->g, mean);
}

/* ---- discrete choice -------------------------------------------------- */

/* Walker's alias table (gsl_ran_discrete_preproc): O(n) to build, O(1) to
 * draw. NULL when n == 0, a weight is negative or not finite, or all are 0. */
rng_discrete *rng_discrete_new(const double *w, size_t n) {
    if (n == 0 || !w)
        return NULL;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(w[i] >= 0) || !isfinite(w[i]))
            return NULL;
        sum += w[i];
    }
    if (!(sum > 0) || !isfinite(sum))
        return NULL;
    rng_discrete *d = malloc(sizeof *d);
    if (!d)
        return NULL;
    d->t = gsl_ran_discrete_preproc(n, w);
    if (!d->t) {
        free(d);
        return NULL;
    }
    return d;
}

void rng_discrete_free(rng_discrete *d) {
    if (!d)
        return;
    gsl_ran_discrete_free(d->t);
    free(d);
}

size_t rng_discrete_draw(rng *r, const rng_discrete *d) {
    return gsl_ran_discrete(r->g, d->t);
}

/* ---- empirical distribution ------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorted samples x[0] <= ... <= x[n-1] sit at CDF levels 0, 1/(n-1), ..., 1
 * with straight lines between, so draws stay in [x[0], x[n-1]] and u = 0.5
 * gives the sample median. Infinite samples are refused like NaNs. */
rng_empirical *rng_empirical_new(const double *x, size_t n) {
    if (n == 0 || !x || n > (SIZE_MAX - sizeof(rng_empirical)) / sizeof(double))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return NULL;
    rng_empirical *p = malloc(sizeof *p + n * sizeof(double));
    if (!p)
        return NULL;
    p->n = n;
    memcpy(p->x, x, n * sizeof(double));
    qsort(p->x, n, sizeof(double), cmp_double);
    return p;
}

void rng_empirical_free(rng_empirical *p) {
    free(p);
}

double rng_empirical_draw(rng *r, const rng_empirical *p) {
    if (p->n == 1)
        return p->x[0];
    double pos = gsl_rng_uniform(r->g) * (double)(p->n - 1);
    size_t i = (size_t)pos;
    if (i >= p->n - 1)               /* rounding at the top end */
        return p->x[p->n - 1];
    double frac = pos - (double)i;
    double v = p->x[i] + frac * (p->x[i + 1] - p->x[i]);
    return v > p->x[i + 1] ? p->x[i + 1] : v;
}
