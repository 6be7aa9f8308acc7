/*
 * published_report: the published-case report of `clustertwin validate
 * --published DIR` (docs/validation.md). Each case is one published figure
 * (a row of a validation CSV) beside the models' prediction of it; the
 * summaries group the cases by file, by set (calibration | heldout) and by
 * mechanism tag, so a reader sees where the twin is trustworthy and where
 * not. plan/published fills the cases; this module summarises them and
 * writes the terminal table, the JSON (docs/results.md, "Published-case
 * report") and the self-contained HTML page.
 *
 * Error convention, as everywhere in clustertwin: 100 (predicted -
 * expected) / expected, signed (+ = the twin over-predicts).
 */
#ifndef CT_PUBLISHED_REPORT_H
#define CT_PUBLISHED_REPORT_H

#include <stddef.h>
#include <stdio.h>

#define PUBREP_TEXT_MAX 512

/* What a case measures, from its file's header columns. */
typedef enum pubrep_kind { PUBREP_TRAINING, PUBREP_COLLECTIVE, PUBREP_FAILURE, PUBREP_INFERENCE } pubrep_kind;

/* "training" "collectives" "failures" "inference" (--only's values). */
const char *pubrep_kind_name(pubrep_kind k);
int pubrep_kind_parse(const char *z);            /* -1 when unknown */

typedef struct pubrep_case {
    char file[128];                  /* the CSV's name in DIR */
    long line;                       /* its line in the file */
    char id[128];
    pubrep_kind kind;
    char set[32];                    /* calibration | heldout (no column: calibration) */
    char mechanism[128];             /* tags joined by '+'; "" none */
    char source[PUBREP_TEXT_MAX];
    char metric[48];
    double expected;
    double predicted;                /* NaN: no result (note says why) */
    double tolerance_pct;            /* NaN: the file gives none */
    char note[PUBREP_TEXT_MAX];      /* "" or why there is no result */
} pubrep_case;

/* 100 (predicted - expected) / expected; NaN without a result. */
double pubrep_error_pct(const pubrep_case *c);
/* 1 within tolerance, 0 not, -1 unknown (no result or no tolerance). */
int pubrep_within(const pubrep_case *c);

/* One group's statistics over its cases with a result. */
typedef struct pubrep_summary {
    char group[192];                 /* "all", "file:NAME", "set:NAME", "mechanism:TAG" */
    int n;                           /* cases with a result */
    int no_result;                   /* cases without one */
    double median_abs_error_pct, max_abs_error_pct, median_signed_error_pct;   /* NaN when n = 0 */
} pubrep_summary;

typedef struct pubrep {
    pubrep_case *cases;
    size_t n, cap;
    char (*notes)[PUBREP_TEXT_MAX];  /* skipped files, one line each */
    size_t n_notes, cap_notes;
    pubrep_summary *groups;          /* after pubrep_summarize */
    size_t n_groups, cap_groups;
} pubrep;

/* Append a case or a note (copied). 0, or -1 when out of memory. */
int pubrep_add(pubrep *r, const pubrep_case *c);
int pubrep_note(pubrep *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pubrep_free(pubrep *r);                     /* the arrays; r itself is the caller's */

/* Median of v[0..n) (sorts v); NaN when n is 0. */
double pubrep_median(double *v, size_t n);

/* Fill r->groups: "all", then each file, each set (calibration, heldout),
 * each mechanism tag (tags sorted by name; a case without a tag under
 * "mechanism:none"), in that order; a group without a case is left out.
 * 0, or -1 when out of memory. */
int pubrep_summarize(pubrep *r);

/* The terminal view: one table per file, then the summaries. */
void pubrep_table(FILE *f, const pubrep *r);

/* The JSON document ("-" = stdout) and the HTML page, written by
 * reports/fileout's rule (never half a file; a link followed, a FIFO or
 * device written in place). 0, or -1 with err naming the path. */
int pubrep_json(const pubrep *r, const char *path, char *err, size_t errlen);
int pubrep_html(const pubrep *r, const char *path, char *err, size_t errlen);

#endif
