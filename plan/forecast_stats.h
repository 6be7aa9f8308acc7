/*
 * forecast_stats: the statistics of a forecast (plan/forecast.h) as pure
 * functions of the replicas' numbers: no world, no I/O.
 *
 *   forecast_stats_percentile   a start time's or drain time's pNN over the
 *                               replicas, null when too few replicas have one
 *   forecast_stats_share        how often it happened at all
 *   forecast_stats_drain        one replica's drain time: when the last job
 *                               waiting at the snapshot started
 *   forecast_days_*             GPUs held, integrated into whole days, and
 *                               each day's utilisation
 *
 * A replica where something did not happen within the run (a job that never
 * started, a queue that never drained) holds INFINITY. Percentiles use the
 * inverse of the empirical distribution (Hyndman and Fan, "Sample quantiles
 * in statistical packages", The American Statistician 50(4), 1996,
 * definition 1): the pNN of n replicas is the k-th smallest value with
 * k = ceil(n * NN / 100). So a pNN exists exactly when at least NN% of the
 * replicas have a value, which is the rule the forecast's JSON states ("null
 * when fewer than the percentile's share of replicas started it"); the
 * interpolating definition used by sweeps (R's type 7) would need a value
 * beyond that share.
 */
#ifndef CT_PLAN_FORECAST_STATS_H
#define CT_PLAN_FORECAST_STATS_H

/* The p-th percentile (0 < p <= 100) of v[0..n) as above; NaN when n is 0
 * or the k-th smallest is INFINITY (fewer than p% of the replicas have a
 * value). v is not changed. */
double forecast_stats_percentile(const double *v, int n, double p);

/* The share (0..1) of v[0..n) that is finite; 0 when n is 0. */
double forecast_stats_share(const double *v, int n);

/* One replica's drain time: the latest start_s[i] over the jobs i with
 * counts[i] set (those waiting at the snapshot); INFINITY when one of them
 * did not start (start_s[i] INFINITY); 0 when none counts. */
double forecast_stats_drain(const double *start_s, const unsigned char *counts, int n);

/* The GPUs held over time, integrated per day from t = 0: feed each change
 * of the level in time order (forecast_days_level), then close at the end
 * of what is known (forecast_days_close: the level holds until then). */
typedef struct forecast_days {
    int n_days;
    double day_s;                    /* the length of a bin (86400 s) */
    double *gpu_s;                   /* [n_days]: GPU-seconds held in each */
    double level, t_s;               /* GPUs held since t_s */
    double known_s;                  /* after close: the end of what is known */
} forecast_days;

/* 0, or -1 when out of memory. */
int forecast_days_init(forecast_days *d, int n_days, double day_s);
void forecast_days_free(forecast_days *d);
/* The level is `gpus` from t_s on (t_s not before the last change). */
void forecast_days_level(forecast_days *d, double t_s, double gpus);
/* The level holds until known_s; nothing is known after it. */
void forecast_days_close(forecast_days *d, double known_s);
/* Day k's utilisation: GPU-seconds held / (cluster_gpus x the part of the
 * day that is known); NaN when none of the day is known. */
double forecast_days_util(const forecast_days *d, int k, int cluster_gpus);

#endif
