/*
 * fmt: the dashboard's words and glyphs: compact durations (for columns
 * six characters wide), the simulated clock, speeds, sparklines and bars.
 * Numbers people read (counts, money, percentages, SI quantities) go
 * through base/numfmt.h, as in every other output. Pure functions of their
 * arguments (no terminal), each writing into the caller's buffer, always
 * NUL-terminated and cut to fit; each returns buf.
 */
#ifndef CT_FMT_H
#define CT_FMT_H

#include <stddef.h>

/* A duration in at most 6 characters: "45s", "12m05s", "3h20m", "5d04h",
 * "123d" (under a year), "1.2y"; "-" when negative or not a number. */
char *fmt_duration(double s, char *buf, size_t n);

/* Simulated time since the start as "d12 03:45:10" (day 0 first). */
char *fmt_clock(double s, char *buf, size_t n);

/* Simulated seconds per wall second as "1h/s", "30m/s", "2d/s", "0.5s/s". */
char *fmt_speed(double sim_per_s, char *buf, size_t n);

/* One glyph per value, scaled from lo (lowest) to hi (highest); a NaN
 * value (no data) is a space. utf8: block glyphs "▁..█" (3 bytes each),
 * else ASCII "_.-:=+*#". When hi <= lo every value is the lowest glyph.
 * Writes at most n_vals glyphs that fit; returns buf. */
char *fmt_sparkline(const double *v, int n_vals, double lo, double hi, int utf8, char *buf, size_t n);

/* A bar of width cells filled to frac (clamped 0..1): "####......". */
char *fmt_bar(double frac, int width, char *buf, size_t n);

#endif
