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
 * first row (base/datetime.c reads them). Both releases share the schema, so both format names read
 * both; auto names a file by its first row (an offset: 2024).
 */
#include <stdint.h>
#include <string.h>

#include "base/datetime.h"
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

/* The first row's time, from which every row's is counted. */
typedef struct azure_clock {
    int set;
    int64_t sec0;
    double frac0;
} azure_clock;

static int parse_row(const csv *r, const csv_record *rec, const int *idx, azure_clock *ck, rt_build *b, rt_req *q,
                     char *err, size_t errlen) {
    const char *z = csv_field(rec, idx[0]);
    int64_t sec;
    double frac;
    int zone;
    *q = (rt_req){ .session = -1, .cls = -1 };
    if (datetime_parse(z, &sec, &frac, &zone) < 0)
        return csv_fail(r, err, errlen, "TIMESTAMP '%s' must be a date and time like 2023-11-16 18:17:03.9799600 "
                                        "(optionally +00:00)", z);
    if (!ck->set) {
        *ck = (azure_clock){ 1, sec, frac };
        if (zone && b->t->format == REQTRACE_AZURE_2023 && b->o->format == REQTRACE_AUTO)
            b->t->format = REQTRACE_AZURE_2024;
    }
    q->t_s = (double)(sec - ck->sec0) + (frac - ck->frac0);
    if (rt_whole(csv_field(rec, idx[1]), &q->input) < 0)
        return csv_fail(r, err, errlen, "ContextTokens '%s' must be a whole number", csv_field(rec, idx[1]));
    if (rt_whole(csv_field(rec, idx[2]), &q->output) < 0)
        return csv_fail(r, err, errlen, "GeneratedTokens '%s' must be a whole number", csv_field(rec, idx[2]));
    return 0;
}

int rt_read_azure(csv *r, const csv_record *header, rt_build *b, char *err, size_t errlen) {
    int idx[3];
    if (csv_header(r, header, azure_cols, 3, 3, idx, "Azure LLM inference trace", err, errlen) < 0) return -1;
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
