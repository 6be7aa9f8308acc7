/*
 * numerics: the program's GSL error handler, and the bound on every time
 * an input or a model gives (the world checks each against it).
 *
 * GSL's default error handler prints and calls abort(): a gamma function
 * that overflows (a Weibull shape of 0.005 asks for Γ(201)) used to end the
 * program with exit 134. numerics_gsl_install() replaces it with one that
 * only records the error; the GSL function then returns its documented
 * error value (an infinity, a NaN, NULL) and the caller's range check turns
 * that into a message naming the input. Library code never aborts.
 */
#ifndef CT_NUMERICS_H
#define CT_NUMERICS_H

#include <stddef.h>

/* Install the recording handler. Idempotent, cannot fail. Called by the
 * library's entry points that reach GSL (world_new, calibrate_fit) and by
 * main; a program that set its own handler after this keeps it. */
void numerics_gsl_install(void);

/* GSL errors recorded since the program started, and the last one as
 * "file:line: reason (gsl_errno N)" ("" when none). */
unsigned long numerics_gsl_error_count(void);
const char *numerics_gsl_last_error(void);

/* The longest time an input or a model may give: the simulated clock's
 * horizon, 100 years (SIM_HORIZON_S in sim/engine.h, which world.c checks
 * is the same number; the engine does not include models/). */
#define NUMERICS_MAX_TIME_S 3155760000.0

#endif
