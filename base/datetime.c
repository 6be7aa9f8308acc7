/*
 * datetime: dates and times of the trace files (datetime.h).
 */
#include "base/datetime.h"

#include <string.h>

/* n decimal digits at *p into *v; advances *p. 0, or -1. */
static int digits(const char **p, int n, int *v) {
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9') return -1;
        *v = *v * 10 + (**p - '0');
    }
    return 0;
}

/* The days of the whole 400-year eras since year 0 (146097 each) and of the
 * years and months into the current one, the year taken to start on 1 March
 * so the leap day falls last (H. Hinnant, "chrono-Compatible Low-Level Date
 * Algorithms", days_from_civil). */
int64_t datetime_days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m) {
    static const int n[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return n[m - 1] + (m == 2 && leap);
}

/* The offset from UTC at *p: Z, +HH:MM, -HH:MM, or none. 0 with *off_s and
 * *has_zone, or -1. */
static int parse_zone(const char *p, int *off_s, int *has_zone) {
    *off_s = 0;
    *has_zone = *p != 0;
    if (!*p) return 0;
    if (!strcmp(p, "Z")) return 0;
    int sign = *p == '+' ? 1 : *p == '-' ? -1 : 0, hh, mm;
    if (!sign) return -1;
    p++;
    if (digits(&p, 2, &hh) < 0 || *p++ != ':' || digits(&p, 2, &mm) < 0 || *p || hh > 23 || mm > 59) return -1;
    *off_s = sign * (hh * 3600 + mm * 60);
    return 0;
}

int datetime_parse(const char *z, int64_t *sec, double *frac, int *has_zone) {
    const char *p = z;
    int y, mo, d, h, mi, s, off;
    if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' || digits(&p, 2, &d) < 0)
        return -1;
    if ((*p != ' ' && *p != 'T') || (p++, digits(&p, 2, &h)) < 0 || *p++ != ':' || digits(&p, 2, &mi) < 0 ||
        *p++ != ':' || digits(&p, 2, &s) < 0)
        return -1;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59) return -1;
    *frac = 0;
    if (*p == '.') {
        double unit = 0.1;
        if (*++p < '0' || *p > '9') return -1;
        for (; *p >= '0' && *p <= '9'; p++, unit /= 10) *frac += (*p - '0') * unit;
    }
    if (parse_zone(p, &off, has_zone) < 0) return -1;
    *sec = datetime_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off;
    return 0;
}
