/*
 * published_int: what plan/published.c (the folder, the files, the rows'
 * common columns) and plan/published_predict.c (a scenario per case, the
 * models' figure) share. Private to plan/published*.c.
 */
#ifndef CT_PLAN_PUBLISHED_INT_H
#define CT_PLAN_PUBLISHED_INT_H

#include <stddef.h>

#include "models/catalog.h"
#include "reports/published_report.h"
#include "scenarios/csv.h"

/* One CSV being read: its header's column names and where errors go. */
typedef struct pubfile {
    csv *r;
    const char *name;                /* the file's name in the folder */
    char hdr[CSV_MAX_FIELDS][64];
    int nh;
    const catalog *cat;              /* the built-in catalog */
    char *err;
    size_t errlen;
} pubfile;

/* Column `name` of rec: its text, "" when the file has no such column or
 * the row is short. */
const char *published_col(const pubfile *pf, const csv_record *rec, const char *name);

/* Column `name` as a whole number >= 1 (empty: *out = dflt when dflt > 0,
 * else an error) or as a number > 0. 0, or -1 with pf->err "PATH:LINE:
 * column NAME: expected ..., got 'TEXT'". */
int published_count(const pubfile *pf, const csv_record *rec, const char *name, long dflt, long *out);
int published_positive(const pubfile *pf, const csv_record *rec, const char *name, double *out);

/* The models' figure for one row of each kind: c->predicted, or NaN with
 * c->note saying why. c's common columns are filled already. 0, or -1 for
 * a malformed row (pf->err set). */
int published_training(const pubfile *pf, const csv_record *rec, pubrep_case *c);
int published_collective(const pubfile *pf, const csv_record *rec, pubrep_case *c);
int published_failure(const pubfile *pf, const csv_record *rec, pubrep_case *c);
int published_inference(const pubfile *pf, const csv_record *rec, pubrep_case *c);

/* An all-reduce of size_bytes over one node of node_type's GPUs
 * (the single-curve file), metric busbw_GBps. */
void published_curve_point(const pubfile *pf, double size_bytes, pubrep_case *c);

#endif
