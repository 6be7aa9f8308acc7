/*
 * series: step functions resampled onto one shared grid of at most
 * max_points buckets, for the results store's time series.
 *
 * The world publishes a sample when a value changes; a value holds until
 * the next sample. The grid is buckets [i*W, (i+1)*W) with W a power of two
 * seconds (2^-10 s at first). A bucket keeps the time-weighted mean of the
 * value over the time it covers, and the least and greatest value held for
 * a positive time within it. When a time would need bucket max_points, W
 * doubles and every series merges its buckets pairwise (2j, 2j+1) -> j,
 * which is exact for the mean, min and max, so the grid never depends on
 * knowing the run's length in advance: a run that ends at T has the
 * smallest W >= 2^-10 s with ceil(T/W) <= max_points.
 *
 * Costs: a sample is O(buckets it spans) (amortised O(1) over a run); a
 * merge is O(points) per series and happens at most ~log2(T * 1024) times.
 * Memory: 4 doubles per bucket per series, grown on demand, except the
 * buckets held at the series' first value before its first change and
 * those after series_close: worked out when read (series.c).
 */
#ifndef CT_SERIES_H
#define CT_SERIES_H

typedef struct series_set series_set;

/* max_points >= 2 and even. NULL when out of memory. */
series_set *series_new(int max_points);
void series_free(series_set *ss);                /* NULL is a no-op */

/* Add a series whose value is `initial` from time 0 until its first
 * sample. Returns its index, or -1 when out of memory (set unchanged). */
int series_add(series_set *ss, double initial);
int series_count(const series_set *ss);

/* The series' value is v from t_s on. Times are non-decreasing per series
 * (an earlier t is taken as the series' latest time). Returns 0, or -1 when
 * out of memory (the series then stops at its previous time). */
int series_put(series_set *ss, int i, double t_s, double v);

/* End every series at t_end_s (again at the same time: nothing more is
 * done). Returns 0 or -1 (out of memory). */
int series_close(series_set *ss, double t_end_s);

/* The bucket width W in seconds. */
double series_bucket_s(const series_set *ss);

/* Buckets of series i that hold time (after series_close: all of them,
 * ceil(t_end / W)). */
int series_points(const series_set *ss, int i);

/* Runs of buckets of series i equal bit for bit without being read: 1 ..
 * *lead - 1 are bucket 0 (the value held from the start; none when *lead
 * <= 1), and *held + 1 .. series_points - 2 are bucket *held (the value
 * held after the last stored bucket to the close). */
void series_runs(const series_set *ss, int i, int *lead, int *held);

/* Bucket k of series i: its start t_s = k*W, the time it covers dt_s
 * (W except for the last bucket of a closed run), and the value's mean,
 * min and max over it. */
void series_point(const series_set *ss, int i, int k, double *t_s, double *dt_s,
                  double *mean, double *min, double *max);

#endif
