/*
 * power: the SM clock a GPU holds under a board power limit, and from it
 * the fraction of its quoted tensor peak it sustains (mechanism "power").
 *
 * Law (dynamic voltage and frequency scaling, DVFS). A GPU running dense
 * tensor work at its power limit lowers its SM clock f until the board's
 * draw meets the limit. Board power at clock f:
 *
 *   P(f) = P_idle + (P_ref - P_idle) · (f / f_ref)^alpha
 *
 * P_ref is the limit at which the catalog's eff_sustained was measured (the
 * clock f_ref), P_idle the board's idle draw (static power, HBM and board
 * overheads that do not scale with the SM clock). Solving for f at a limit P:
 *
 *   f / f_ref = ((P - P_idle) / (P_ref - P_idle))^(1/alpha)
 *
 * alpha = 3 (POWER_DVFS_ALPHA): CMOS dynamic power is C·V²·f, and over the
 * DVFS range the voltage is lowered in step with the clock, so power goes
 * with f³ (Hennessy and Patterson, Computer Architecture: A Quantitative
 * Approach, 6th ed., section 1.5, "Trends in Power and Energy": a 15% lower
 * voltage and frequency leaves 0.85³ = 0.61 of the dynamic power).
 * Where the voltage is already at its floor power goes with f alone, so at
 * deep caps (well under half the default limit) this law keeps more clock
 * than real boards do (docs/power-and-variants.md says what is known).
 *
 * Tensor throughput follows the SM clock; HBM bandwidth has its own clock
 * and power capping the SMs does not change it (models/gpu.c).
 * Pure functions; power in W.
 */
#ifndef CT_POWER_H
#define CT_POWER_H

#include "models/catalog.h"

#define POWER_DVFS_ALPHA 3.0

/* Board power at clock ratio r = f/f_ref under the law. */
double power_at_clock_w(double idle_w, double ref_w, double clock_ratio);

/* Clock ratio f(limit)/f(ref) the law gives: 1 when limit equals ref, or
 * when ref is not above idle (a spec without power figures: no law).
 * 0 for a limit at or below idle. */
double power_clock_ratio(double idle_w, double ref_w, double limit_w);

/* The power limit g's eff_sustained was measured at: eff_sustained_power_w,
 * or tdp_w when that is 0. */
double power_ref_w(const gpu_spec *g);

/* Highest power limit the board accepts: max_power_w, or tdp_w when 0. */
double power_max_w(const gpu_spec *g);

/* Fraction of the quoted tensor peak g sustains at its limit tdp_w:
 * eff_sustained (default 1) times the clock ratio from power_ref_w to
 * tdp_w, at most 1 (the quoted peak is the boost clock's). */
double power_sustained_fraction(const gpu_spec *g);

/* A copy of g whose power limit is cap_w, named "<g.name>@<cap>W"; the
 * reference limit stays g's, so the law scales its clock. Returns 0, or
 * -1 with why[] set when the cap is above the board's max or not above its
 * idle power, or the name would not fit. */
int power_cap_gpu(const gpu_spec *g, double cap_w, gpu_spec *out, char *why, size_t whylen);

#endif
