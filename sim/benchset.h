/*
 * benchset: the microbenchmark registry of hardware mode. The scenario's
 * <microbenchmarks> expanded over their size sweeps into cases, each with
 * the models' prediction, and, once a hardware backend has run them
 * (hw/, cli/hwrun.c), the measured figures, a note per case, the host
 * profile used to price the cases and the hardware the measurements came
 * from. The world builds one (world_benchset) but never reads it: the
 * simulation does not depend on it.
 */
#ifndef CT_BENCHSET_H
#define CT_BENCHSET_H

#include "models/collective.h"
#include "models/host.h"
#include "models/microbench.h"
#include "scenarios/scenario.h"

typedef struct benchset benchset;

/* The scenario's cases priced on fabric f (NULL: no fabric, collectives
 * are not priced) and on the scenario's first storage; re-priced with the
 * scenario's <host-profile> when it has one. The scenario must outlive the
 * set. Returns NULL when out of memory. */
benchset *benchset_new(const scenario *s, const fabric *f);
void benchset_free(benchset *b);                 /* NULL is a no-op */

int benchset_count(const benchset *b);
const mb_case *benchset_case(const benchset *b, int i);
const mb_prediction *benchset_prediction(const benchset *b, int i);   /* NULL: not priced */

/* Re-price every case with the host model h (the twin of the cpu and mpi
 * backends): a case h cannot price loses its prediction and keeps the
 * reason as its note. h is copied. Out of memory leaves the set as it was. */
void benchset_use_host(benchset *b, const host_profile *h);
const host_profile *benchset_host(const benchset *b);      /* NULL: GPU models */

/* Record the measurement of case i from a hardware backend (m NULL: not
 * measured, and note says why). Returns 0, or -1 for an index out of range. */
int benchset_set_measured(benchset *b, int i, const mb_measurement *m, const char *note);
const mb_measurement *benchset_measured(const benchset *b, int i);   /* NULL: not measured */
const char *benchset_note(const benchset *b, int i);                /* "" when none */

/* Where the measurements were taken (copied); NULL until set. */
void benchset_set_hardware(benchset *b, const mb_hardware *hw);
const mb_hardware *benchset_hardware(const benchset *b);

#endif
