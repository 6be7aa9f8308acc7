/*
 * reqtrace_azure: the Azure LLM inference traces 2023 and 2024
 * (Azure/AzurePublicDataset, AzureLLMInferenceDataset2023.md and
 * AzureLLMInferenceDataset2024.md; data/AzureLLMInferenceTrace_code.csv):
 *
 *   TIMESTAMP,ContextTokens,GeneratedTokens
 *   2023-11-16 18:17:03.9799600,4808,10              (2023: no time zone)
 *   2024-05-10 00:00:00.009930+00:00,2162,5          (2024: UTC offset;
 *   2024-05-12 00:00:00+00:00,1452,3                  a whole second has
 *                                                     no fraction)
 *
 * TIMESTAMP is the invocation time (a date and time: YYYY-MM-DD, a space
 * or T, HH:MM:SS, an optional fraction of any length, an optional Z or
 * +HH:MM / -HH:MM offset, applied); ContextTokens the prompt and
 * GeneratedTokens the output, in tokens. Times become seconds from the
 * first row. Both releases share the schema, so both format names read
 * both; auto names a file by its first row (an offset: 2024).
 */
#include <stdint.h>
#include <string.h>

#include "scenarios/reqtrace_int.h"

static const char *const azure_cols[] = { "TIMESTAMP", "ContextTokens", "GeneratedTokens" };

int rt_is_azure_header(const csv_record *rec) {
    int idx[3], found = 0;
    for (int i = 0; i < 3; i++) {
        idx[i] = -1;
        for (int c = 0; c < rec->n && c < CSV_MAX_FIELDS; c++)
            if (!strcmp(rec->f[c], azure_cols[i])) idx[i] = c;
        found += idx[i] >= 0;
    }
    return found == 3;
}

/* n decimal digits at *p into *v; advances *p. 0, or -1. */
static int digits(const char **p, int n, int *v) {
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9') return -1;
        *v = *v * 10 + (**p - '0');
    }
    return 0;
}

/* Days from 1970-01-01 to the proleptic Gregorian date y-m-d: the days of
 * the whole 400-year eras since year 0 (146097 each) and of the years and
 * months into the current one, the year taken to start on 1 March so the
 * leap day falls last. */
static int64_t days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m) {
    static const int n[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return n[m - 1] + (m == 2 && leap);
}

/* The offset from UTC at *p: Z, +HH:MM, -HH:MM, or none. 0 with *off_s and
 * *has_zone, or -1. */
static int parse_zone(const char *p, int *off_s, int *has_zone) {
    *off_s = 0;
    *has_zone = *p != 0;
    if (!*p) return 0;
    if (!strcmp(p, "Z")) return 0;
    int sign = *p == '+' ? 1 : *p == '-' ? -1 : 0, hh, mm;
    if (!sign) return -1;
    p++;
    if (digits(&p, 2, &hh) < 0 || *p++ != ':' || digits(&p, 2, &mm) < 0 || *p || hh > 23 || mm > 59) return -1;
    *off_s = sign * (hh * 3600 + mm * 60);
    return 0;
}

/* A TIMESTAMP: whole seconds since 1970 (UTC) in *sec and the fraction in
 * *frac; *has_zone when it carried an offset. 0, or -1. */
static int parse_datetime(const char *z, int64_t *sec, double *frac, int *has_zone) {
    const char *p = z;
    int y, mo, d, h, mi, s, off;
    if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' || digits(&p, 2, &d) < 0)
        return -1;
    if ((*p != ' ' && *p != 'T') || (p++, digits(&p, 2, &h)) < 0 || *p++ != ':' || digits(&p, 2, &mi) < 0 ||
        *p++ != ':' || digits(&p, 2, &s) < 0)
        return -1;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59) return -1;
    *frac = 0;
    if (*p == '.') {
        double unit = 0.1;
        if (*++p < '0' || *p > '9') return -1;
        for (; *p >= '0' && *p <= '9'; p++, unit /= 10) *frac += (*p - '0') * unit;
    }
    if (parse_zone(p, &off, has_zone) < 0) return -1;
    *sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off;
    return 0;
}

/* The first row's time, from which every row's is counted. */
typedef struct azure_clock {
    int set;
    int64_t sec0;
    double frac0;
} azure_clock;

static int parse_row(const csv *r, const csv_record *rec, const int *idx, azure_clock *ck, rt_build *b, rt_req *q,
                     char *err, size_t errlen) {
    const char *z = rt_field(rec, idx[0]);
    int64_t sec;
    double frac;
    int zone;
    *q = (rt_req){ .session = -1, .cls = -1 };
    if (parse_datetime(z, &sec, &frac, &zone) < 0)
        return csv_fail(r, err, errlen, "TIMESTAMP '%s' must be a date and time like 2023-11-16 18:17:03.9799600 "
                                        "(optionally +00:00)", z);
    if (!ck->set) {
        *ck = (azure_clock){ 1, sec, frac };
        if (zone && b->t->format == REQTRACE_AZURE_2023 && b->o->format == REQTRACE_AUTO)
            b->t->format = REQTRACE_AZURE_2024;
    }
    q->t_s = (double)(sec - ck->sec0) + (frac - ck->frac0);
    if (rt_whole(rt_field(rec, idx[1]), &q->input) < 0)
        return csv_fail(r, err, errlen, "ContextTokens '%s' must be a whole number", rt_field(rec, idx[1]));
    if (rt_whole(rt_field(rec, idx[2]), &q->output) < 0)
        return csv_fail(r, err, errlen, "GeneratedTokens '%s' must be a whole number", rt_field(rec, idx[2]));
    return 0;
}

int rt_read_azure(csv *r, const csv_record *header, rt_build *b, char *err, size_t errlen) {
    int idx[3];
    if (rt_header(r, header, azure_cols, 3, 3, idx, "Azure LLM inference trace", err, errlen) < 0) return -1;
    b->col_in = "ContextTokens";
    b->col_out = "GeneratedTokens";
    azure_clock ck = { 0 };
    csv_record rec;
    int got;
    while ((got = csv_next(r, &rec, err, errlen)) > 0) {
        rt_req q;
        if (parse_row(r, &rec, idx, &ck, b, &q, err, errlen) < 0 || rt_add(b, rec.line, &q, err, errlen) < 0) return -1;
    }
    return got;
}
