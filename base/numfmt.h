/*
 * numfmt: numbers for people. The terminal summary, the HTML and Markdown
 * reports, the sweep report and the dashboard all print through these, so a
 * quantity reads the same everywhere. JSON, CSV and the database keep full
 * precision and never come here.
 *
 *   nf_count(368640)          "368,640"      thousands separators, 3 significant
 *   nf_count(0.0007291)       "0.000729"     digits below 1000
 *   nf_qty(1, "node","nodes") "1 node"       with the noun in the right number
 *   nf_si(2.43e10, "Wh")      "24.3 GWh"     SI prefix, 3 significant digits
 *   nf_usd(1.102e6)           "$1.10M"       money: k, M, B; cents below $10
 *   nf_mass_kg(0.7291)        "729 g"        g, kg or t
 *   nf_energy_kwh(2.43e7)     "24.3 GWh"
 *   nf_pct(0.9697)            "97.0%"        a fraction as a percentage
 *   nf_duration(396000)       "4.58 d"       ns..years, 3 significant digits
 *
 * Every function writes into buf (always terminated, truncated if len is
 * short), returns buf, never allocates, and prints "-" for NaN and "inf"
 * for infinities.
 */
#ifndef CT_NUMFMT_H
#define CT_NUMFMT_H

#include <stddef.h>

char *nf_count(double v, char *buf, size_t len);
char *nf_qty(double v, const char *one, const char *many, char *buf, size_t len);
char *nf_si(double v, const char *unit, char *buf, size_t len);
char *nf_usd(double v, char *buf, size_t len);
char *nf_mass_kg(double kg, char *buf, size_t len);
char *nf_energy_kwh(double kwh, char *buf, size_t len);
char *nf_pct(double frac, char *buf, size_t len);
char *nf_duration(double s, char *buf, size_t len);

#endif
