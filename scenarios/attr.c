/*
 * attr: typed attribute readers over an xml_src (see attr.h).
 */
#include "scenarios/attr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int attr_str(xml_src *x, const xmlNode *e, const char *attr, char *out, size_t len, int required) {
    char *v = xml_prop(e, attr);
    if (!v) {
        if (required) xml_fail(x, e, NULL, "missing attribute %s", attr);
        return required ? -1 : 0;
    }
    size_t n = strlen(v);
    if (n == 0 || n >= len) {
        xml_fail(x, e, attr, "%s must be 1 to %zu characters", attr, len - 1);
        xmlFree(v);
        return -1;
    }
    memcpy(out, v, n + 1);
    xmlFree(v);
    return 1;
}

int attr_unit(xml_src *x, const xmlNode *e, const char *attr, unit_kind kind, double *out, int required,
              int positive) {
    char *v = xml_prop(e, attr);
    if (!v) {
        if (required) xml_fail(x, e, NULL, "missing attribute %s (%s)", attr, units_expected(kind));
        return required ? -1 : 0;
    }
    char why[128] = "";
    double d = 0;
    int rc = units_parse(v, kind, &d, why, sizeof why);
    xmlFree(v);
    if (rc < 0) {
        char *cut = strstr(why, "; expected");      /* we say what is expected ourselves */
        if (cut) *cut = 0;
        xml_fail(x, e, attr, "%s must be %s (%s)", attr, units_expected(kind), why);
        return -1;
    }
    if (positive && !(d > 0)) {
        xml_fail(x, e, attr, "%s must be greater than zero", attr);
        return -1;
    }
    *out = d;
    return 1;
}

int attr_int(xml_src *x, const xmlNode *e, const char *attr, int *out, int required, long long lo, long long hi) {
    double d;
    int rc = attr_unit(x, e, attr, UNIT_COUNT, &d, required, 0);
    if (rc <= 0) return rc;
    if (d != floor(d) || d < (double)lo || d > (double)hi) {
        xml_fail(x, e, attr, "%s must be a whole number from %lld to %lld", attr, lo, hi);
        return -1;
    }
    *out = (int)d;
    return 1;
}

int attr_i64(xml_src *x, const xmlNode *e, const char *attr, int64_t *out, int required, long long lo, double hi) {
    double d;
    int rc = attr_unit(x, e, attr, UNIT_COUNT, &d, required, 0);
    if (rc <= 0) return rc;
    if (d != floor(d) || d < (double)lo || d > hi) {
        xml_fail(x, e, attr, "%s must be a whole number from %lld to %.0f", attr, lo, hi);
        return -1;
    }
    *out = (int64_t)d;
    return 1;
}

int attr_bool(xml_src *x, const xmlNode *e, const char *attr, int *out) {
    char z[16];
    int rc = attr_str(x, e, attr, z, sizeof z, 0);
    if (rc <= 0) return rc;
    if (!strcmp(z, "true") || !strcmp(z, "1") || !strcmp(z, "yes")) *out = 1;
    else if (!strcmp(z, "false") || !strcmp(z, "0") || !strcmp(z, "no")) *out = 0;
    else {
        xml_fail(x, e, attr, "%s must be true or false", attr);
        return -1;
    }
    return 1;
}

int attr_enum(xml_src *x, const xmlNode *e, const char *attr, int (*parse)(const char *), const char *choices,
              int *out) {
    char z[32];
    int rc = attr_str(x, e, attr, z, sizeof z, 0);
    if (rc <= 0) return rc;
    int v = parse(z);
    if (v < 0) {
        xml_fail(x, e, attr, "%s must be one of %s", attr, choices);
        return -1;
    }
    *out = v;
    return 1;
}

int attr_word(xml_src *x, const xmlNode *e, const char *attr, int (*parse)(const char *), const char *choices,
              int *value, char *out, size_t len, int required) {
    int v;
    int rc = attr_enum(x, e, attr, parse, choices, &v);
    if (rc < 0) return -1;
    if (rc > 0 && value) *value = v;
    return attr_str(x, e, attr, out, len, required);
}
