/*
 * datetime: a calendar date and time of day as written in the public trace
 * files (the Azure LLM inference traces, SenseTime Helios, Shanghai AI Lab
 * Acme, Microsoft Philly), read into seconds since 1970-01-01 UTC.
 *
 *   2020-06-09 18:41:01               (Helios, Philly: no time zone)
 *   2023-03-01 00:18:22+08:00         (Acme: an offset from UTC, applied)
 *   2023-11-16 18:17:03.9799600       (Azure 2023: a fraction of any length)
 *   2024-05-10T00:00:00.009930Z
 *
 * That is YYYY-MM-DD, a space or T, HH:MM:SS, an optional fraction, and an
 * optional Z or +HH:MM / -HH:MM. A time with no zone is read as UTC: the
 * traces count times from their first row, so only differences matter.
 * Pure functions, no allocation.
 */
#ifndef CT_DATETIME_H
#define CT_DATETIME_H

#include <stdint.h>

/* The whole text z as a date and time: whole seconds since 1970 (UTC) in
 * *sec and the fraction of a second in *frac; *has_zone when it carried an
 * offset or Z. 0, or -1 when z is not one (fields out of range: month 13,
 * 31 April, 24:00:00, anything after the zone). */
int datetime_parse(const char *z, int64_t *sec, double *frac, int *has_zone);

/* Days from 1970-01-01 to the proleptic Gregorian date y-m-d (m 1..12). */
int64_t datetime_days_from_civil(int y, int m, int d);

#endif
