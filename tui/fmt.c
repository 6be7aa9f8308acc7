/*
 * fmt: the dashboard's words and glyphs (see fmt.h). Called for every cell
 * of every frame, so nothing here allocates.
 */
#include "tui/fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

char *fmt_duration(double s, char *buf, size_t n) {
    if (!(s >= 0) || isinf(s)) {
        snprintf(buf, n, "-");
        return buf;
    }
    long long t = (long long)(s + 0.5);
    if (t < 60) snprintf(buf, n, "%llds", t);
    else if (t < 3600) snprintf(buf, n, "%lldm%02llds", t / 60, t % 60);
    else if (t < 86400) snprintf(buf, n, "%lldh%02lldm", t / 3600, t % 3600 / 60);
    else if (t < 100LL * 86400) snprintf(buf, n, "%lldd%02lldh", t / 86400, t % 86400 / 3600);
    else if (t < 365LL * 86400) snprintf(buf, n, "%lldd", t / 86400);
    else snprintf(buf, n, "%.1fy", s / (365.0 * 86400));
    return buf;
}

char *fmt_clock(double s, char *buf, size_t n) {
    if (!(s >= 0)) s = 0;
    long long t = (long long)s;
    snprintf(buf, n, "d%lld %02lld:%02lld:%02lld", t / 86400, t % 86400 / 3600, t % 3600 / 60, t % 60);
    return buf;
}

char *fmt_speed(double v, char *buf, size_t n) {
    static const struct { double s; const char *unit; } u[] = {
        { 365.0 * 86400, "y" }, { 86400, "d" }, { 3600, "h" }, { 60, "m" }, { 1, "s" } };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        if (v < u[i].s && i + 1 < sizeof u / sizeof u[0]) continue;
        double x = v / u[i].s;
        if (fabs(x - floor(x + 0.5)) < 1e-9 * (x > 1 ? x : 1)) snprintf(buf, n, "%.0f%s/s", x, u[i].unit);
        else if (x < 10) snprintf(buf, n, "%.2g%s/s", x, u[i].unit);
        else snprintf(buf, n, "%.0f%s/s", x, u[i].unit);
        return buf;
    }
    return buf;
}

char *fmt_sparkline(const double *v, int n_vals, double lo, double hi, int utf8, char *buf, size_t n) {
    static const char *const blocks[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588" };
    static const char ascii[8] = { '_', '.', '-', ':', '=', '+', '*', '#' };
    size_t at = 0;
    if (n == 0) return buf;
    for (int i = 0; i < n_vals; i++) {
        int level = 0;
        int blank = isnan(v[i]);
        if (!blank && hi > lo) {
            double f = (v[i] - lo) / (hi - lo);
            level = (int)floor(f * 8);
            if (level < 0) level = 0;
            if (level > 7) level = 7;
        }
        const char *g = blank ? " " : utf8 ? blocks[level] : (const char[]){ ascii[level], 0 };
        size_t len = strlen(g);
        if (at + len + 1 > n) break;
        memcpy(buf + at, g, len);
        at += len;
    }
    buf[at] = 0;
    return buf;
}

char *fmt_bar(double frac, int width, char *buf, size_t n) {
    if (n == 0) return buf;
    if (!(frac >= 0)) frac = 0;
    if (frac > 1) frac = 1;
    if (width > (int)n - 1) width = (int)n - 1;
    int full = (int)floor(frac * width + 0.5);
    for (int i = 0; i < width; i++) buf[i] = i < full ? '#' : '.';
    buf[width > 0 ? width : 0] = 0;
    return buf;
}
