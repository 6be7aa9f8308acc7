/*
 * numerics: a GSL error handler that records instead of aborting.
 */
#include "models/numerics.h"

#include <math.h>
#include <stdio.h>

#include <gsl/gsl_errno.h>

static unsigned long n_errors;
static char last[256];

/* Never aborts, never prints (library code): keeps the last error for
 * numerics_gsl_last_error(). */
static void record(const char *reason, const char *file, int line, int gsl_errno) {
    n_errors++;
    snprintf(last, sizeof last, "%s:%d: %s (gsl_errno %d)", file ? file : "?", line,
             reason ? reason : "?", gsl_errno);
}

void numerics_gsl_install(void) {
    gsl_set_error_handler(record);
}

unsigned long numerics_gsl_error_count(void) { return n_errors; }

const char *numerics_gsl_last_error(void) { return last; }
