#include "base/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* NaN and infinities, the same in every formatter. Returns 1 when handled. */
static int not_finite(double v, char *buf, size_t len) {
    if (isnan(v)) snprintf(buf, len, "-");
    else if (isinf(v)) snprintf(buf, len, v < 0 ? "-inf" : "inf");
    else return 0;
    return 1;
}

/* v (|v| < 1000 after scaling) with 3 significant digits and no trailing
 * zeros after the point: 24.3, 1.1, 512, 0.729. */
static void sig3(double v, char *buf, size_t len) {
    double a = fabs(v);
    int dec = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a > 0 ? 2 - (int)floor(log10(a)) : 0;
    if (dec > 12) dec = 12;
    snprintf(buf, len, "%.*f", dec, v);
    if (dec > 0 && strchr(buf, '.')) {
        char *e = buf + strlen(buf) - 1;
        while (*e == '0') *e-- = '\0';
        if (*e == '.') *e = '\0';
    }
    if (strcmp(buf, "-0") == 0) snprintf(buf, len, "0");
}

char *nf_count(double v, char *buf, size_t len) {
    if (!len || not_finite(v, buf, len)) return buf;
    double a = fabs(v);
    if (a < 999.5 && (a != floor(a) || a == 0)) { sig3(v, buf, len); return buf; }
    if (a >= 1e18) { snprintf(buf, len, "%.3g", v); return buf; }
    char digits[32], out[48];
    snprintf(digits, sizeof digits, "%.0f", a);
    size_t nd = strlen(digits), k = 0;
    if (v < 0 && a >= 0.5) out[k++] = '-';
    for (size_t i = 0; i < nd; i++) {
        if (i > 0 && (nd - i) % 3 == 0) out[k++] = ',';
        out[k++] = digits[i];
    }
    out[k] = '\0';
    snprintf(buf, len, "%s", out);
    return buf;
}

char *nf_qty(double v, const char *one, const char *many, char *buf, size_t len) {
    char n[48];
    nf_count(v, n, sizeof n);
    snprintf(buf, len, "%s %s", n, v == 1 ? one : many);
    return buf;
}

char *nf_si(double v, const char *unit, char *buf, size_t len) {
    static const char *const up[] = { "", "k", "M", "G", "T", "P", "E" };
    static const char *const down[] = { "", "m", "\xc2\xb5", "n", "p" };
    if (!len || not_finite(v, buf, len)) return buf;
    double a = fabs(v), x = v;
    const char *p = "";
    if (a >= 999.5) {
        int i = 0;
        while (fabs(x) >= 999.5 && i < 6) { x /= 1000; i++; }
        p = up[i];
    } else if (a > 0 && a < 1) {
        int i = 0;
        while (fabs(x) < 0.9995 && i < 4) { x *= 1000; i++; }
        p = down[i];
    }
    char n[32];
    sig3(x, n, sizeof n);
    snprintf(buf, len, "%s %s%s", n, p, unit ? unit : "");
    size_t l = strlen(buf);
    if (l && buf[l - 1] == ' ') buf[l - 1] = '\0';
    return buf;
}

char *nf_usd(double v, char *buf, size_t len) {
    if (!len || not_finite(v, buf, len)) return buf;
    const char *sign = v < 0 ? "-" : "";
    double a = fabs(v);
    char n[32];
    if (a < 10) snprintf(n, sizeof n, "%.2f", a);
    else if (a < 999.5) snprintf(n, sizeof n, "%.0f", a);
    else {
        static const char *const sfx[] = { "k", "M", "B", "T" };
        int i = -1;
        while (a >= 999.5 && i < 3) { a /= 1000; i++; }
        char m[24];
        sig3(a, m, sizeof m);
        snprintf(n, sizeof n, "%s%s", m, sfx[i]);
    }
    snprintf(buf, len, "%s$%s", sign, n);
    return buf;
}

char *nf_mass_kg(double kg, char *buf, size_t len) {
    if (!len || not_finite(kg, buf, len)) return buf;
    double a = fabs(kg);
    char n[32];
    if (a >= 999.5) {
        double t = kg / 1000;
        if (fabs(t) < 999.5) sig3(t, n, sizeof n);
        else nf_count(floor(t + 0.5), n, sizeof n);
        snprintf(buf, len, "%s t", n);
    }
    else if (a >= 0.9995 || a == 0) { sig3(kg, n, sizeof n); snprintf(buf, len, "%s kg", n); }
    else { sig3(kg * 1000, n, sizeof n); snprintf(buf, len, "%s g", n); }
    return buf;
}

char *nf_energy_kwh(double kwh, char *buf, size_t len) {
    return nf_si(kwh * 1000, "Wh", buf, len);
}

char *nf_pct(double frac, char *buf, size_t len) {
    if (!len || not_finite(frac, buf, len)) return buf;
    double p = frac * 100, a = fabs(p);
    snprintf(buf, len, a >= 10 || a == 0 ? "%.1f%%" : a >= 0.1 ? "%.2f%%" : "%.2g%%", p);
    return buf;
}

char *nf_duration(double s, char *buf, size_t len) {
    static const struct { double s; const char *u; } u[] = {
        { 365.0 * 86400, "y" }, { 86400, "d" }, { 3600, "h" }, { 60, "min" },
        { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "\xc2\xb5s" }, { 1e-9, "ns" } };
    if (!len || not_finite(s, buf, len)) return buf;
    double a = fabs(s);
    size_t i = 0, n = sizeof u / sizeof u[0];
    if (a == 0) i = 4;
    else while (i + 1 < n && a < u[i].s * 0.9995) i++;
    char v[32];
    sig3(s / u[i].s, v, sizeof v);
    snprintf(buf, len, "%s %s", v, u[i].u);
    return buf;
}
