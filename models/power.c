/*
 * power: DVFS clock under a power limit (see power.h for the law and its
 * source).
 */
#include "models/power.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double power_at_clock_w(double idle_w, double ref_w, double r) {
    if (!(r > 0)) return idle_w;
    return idle_w + (ref_w - idle_w) * pow(r, POWER_DVFS_ALPHA);
}

double power_clock_ratio(double idle_w, double ref_w, double limit_w) {
    if (!(ref_w > idle_w) || limit_w == ref_w) return 1;
    if (!(limit_w > idle_w)) return 0;
    return pow((limit_w - idle_w) / (ref_w - idle_w), 1 / POWER_DVFS_ALPHA);
}

double power_ref_w(const gpu_spec *g) {
    return g->eff_sustained_power_w > 0 ? g->eff_sustained_power_w : g->tdp_w;
}

double power_max_w(const gpu_spec *g) {
    return g->max_power_w > 0 ? g->max_power_w : g->tdp_w;
}

double power_sustained_fraction(const gpu_spec *g) {
    double eff = g->eff_sustained > 0 ? g->eff_sustained : 1.0;
    double ref = power_ref_w(g);
    if (ref == g->tdp_w) return eff;      /* measured at this limit: no law to apply */
    double f = eff * power_clock_ratio(g->idle_w, ref, g->tdp_w);
    return f < 1 ? f : 1;
}

int power_cap_gpu(const gpu_spec *g, double cap_w, gpu_spec *out, char *why, size_t whylen) {
    double max_w = power_max_w(g);
    if (!(cap_w <= max_w) || !(cap_w > g->idle_w)) {
        snprintf(why, whylen, "a power cap of %g W is %s %s's %s of %g W (expected more than %g W and at most %g W)",
                 cap_w, cap_w > max_w ? "above" : "not above", g->name,
                 cap_w > max_w ? "maximum power limit" : "idle power", cap_w > max_w ? max_w : g->idle_w,
                 g->idle_w, max_w);
        return -1;
    }
    gpu_spec c = *g;
    int n = snprintf(c.name, sizeof c.name, "%s@%gW", g->name, cap_w);
    if (n < 0 || (size_t)n >= sizeof c.name) {
        snprintf(why, whylen, "the capped GPU's name %s@%gW is longer than %zu characters", g->name, cap_w,
                 sizeof c.name - 1);
        return -1;
    }
    c.eff_sustained_power_w = power_ref_w(g);
    c.tdp_w = cap_w;
    *out = c;
    return 0;
}
