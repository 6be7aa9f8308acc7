/*
 * rng: one seeded GSL random stream per simulated component.
 *
 * A stream's seed is derived from the scenario seed, the component's kind
 * and its index (rng_derive_seed), so adding a component never shifts the
 * numbers another component draws, and the same scenario and seed give the
 * same draws on every machine.
 */
#ifndef CT_RNG_H
#define CT_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng rng;

/* Mix a scenario seed, a component kind ("gpu", "arrivals/chat") and an
 * index into a 64-bit stream seed (splitmix64 over FNV-1a of the name). */
uint64_t rng_derive_seed(uint64_t seed, const char *component, uint64_t index);

/* A stream for (seed, component, index). Returns NULL when out of memory. */
rng *rng_new(uint64_t seed, const char *component, uint64_t index);
void rng_free(rng *r);                          /* NULL is a no-op */

/* Counter-based draws, for very many streams that each draw a few numbers:
 * a failure clock per component instance is a million streams at 100,000
 * GPUs, where a gsl_rng each would cost an allocation and ~100 bytes. The
 * n-th number of the stream keyed `key` (an rng_derive_seed value) is a
 * pure function of (key, n), in (0, 1): the caller keeps only n. */
double rng_counter_uniform_pos(uint64_t key, uint64_t n);

double rng_uniform(rng *r);                     /* [0, 1) */
double rng_uniform_pos(rng *r);                 /* (0, 1) */
uint64_t rng_uniform_int(rng *r, uint64_t n);   /* [0, n), n >= 1 */

/* Continuous distributions; all parameters must be > 0 (asserted). */
double rng_exponential(rng *r, double mean);
double rng_weibull(rng *r, double scale, double shape);
/* Weibull with the given mean (scale = mean / Gamma(1 + 1/shape)). */
double rng_weibull_mean(rng *r, double mean, double shape);
double rng_lognormal(rng *r, double mu, double sigma);
/* Lognormal with the given mean and coefficient of variation. */
double rng_lognormal_mean_cv(rng *r, double mean, double cv);
double rng_gamma(rng *r, double shape, double scale);
/* Gamma with the given mean and coefficient of variation (shape = 1/cv^2). */
double rng_gamma_mean_cv(rng *r, double mean, double cv);
unsigned int rng_poisson(rng *r, double mean);

/* Discrete choice: index i drawn with probability w[i] / sum(w). */
typedef struct rng_discrete rng_discrete;
rng_discrete *rng_discrete_new(const double *w, size_t n);   /* NULL on error */
void rng_discrete_free(rng_discrete *d);
size_t rng_discrete_draw(rng *r, const rng_discrete *d);

/* Empirical continuous distribution from samples: inverse of the piecewise
 * linear empirical CDF. The samples are copied and sorted. NULL on error
 * (n == 0, a NaN, out of memory). */
typedef struct rng_empirical rng_empirical;
rng_empirical *rng_empirical_new(const double *x, size_t n);
void rng_empirical_free(rng_empirical *p);
double rng_empirical_draw(rng *r, const rng_empirical *p);

#endif
