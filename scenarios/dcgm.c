/*
 * dcgm: DCGM-exporter telemetry from a Prometheus answer or a scrape
 * (dcgm.h).
 */
#include "scenarios/dcgm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/grow.h"
#include "scenarios/infile.h"
#include "scenarios/jsonin.h"

static const char *const metric_names[DCGM_METRIC_COUNT] = {
    "DCGM_FI_DEV_XID_ERRORS",      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    "DCGM_FI_DEV_ROW_REMAP_PENDING", "DCGM_FI_DEV_GPU_UTIL",        "DCGM_FI_DEV_POWER_USAGE",
};

const char *dcgm_metric_name(dcgm_metric m) { return m < DCGM_METRIC_COUNT ? metric_names[m] : "?"; }

static int metric_of(const char *name) {
    for (int m = 0; m < DCGM_METRIC_COUNT; m++)
        if (!strcmp(name, metric_names[m])) return m;
    return -1;
}

/* The series' identity from its labels: the host (Hostname, hostname, or
 * instance without ":port"), the GPU index, the model. */
typedef struct series_key { char host[DCGM_HOST_MAX]; int gpu; char model[64]; } series_key;

static void key_label(series_key *k, const char *name, const char *value, int *have_host) {
    if (!strcmp(name, "Hostname") || !strcmp(name, "hostname")) {
        snprintf(k->host, sizeof k->host, "%s", value);
        *have_host = 1;
    } else if (!strcmp(name, "instance") && !*have_host) {
        snprintf(k->host, sizeof k->host, "%.*s", (int)strcspn(value, ":"), value);
    } else if (!strcmp(name, "gpu")) {
        char *end;
        long g = strtol(value, &end, 10);
        k->gpu = *value && !*end && g >= 0 && g < 1000000 ? (int)g : -1;
    } else if (!strcmp(name, "modelName")) {
        snprintf(k->model, sizeof k->model, "%s", value);
    }
}

static int add_sample(dcgm_data *d, int metric, const series_key *k, double t_s, double v, int line) {
    if (GROW(d->s, d->cap, (size_t)d->n + 1)) return -1;
    dcgm_sample *s = &d->s[d->n++];
    s->metric = (dcgm_metric)metric;
    snprintf(s->host, sizeof s->host, "%s", k->host);
    s->gpu = k->gpu, s->t_s = t_s, s->value = v, s->line = line;
    if (!d->model[0] && k->model[0]) snprintf(d->model, sizeof d->model, "%s", k->model);
    return 0;
}

/* A sample's value as Prometheus writes it: a decimal string ("79",
 * "1.5e3", "NaN", "+Inf"). 0, or -1. */
static int parse_value(const char *z, double *v) {
    char *end;
    if (!z || !*z) return -1;
    *v = strtod(z, &end);
    return *end ? -1 : 0;
}

void dcgm_free(dcgm_data *d) {
    if (!d) return;
    free(d->s);
    memset(d, 0, sizeof *d);
}

/* ---- Prometheus HTTP API answer ------------------------------------- */

/* One [unix_s, "value"] pair of result i. 0, or -1 with err. */
static int json_pair(dcgm_data *d, int metric, const series_key *k, const jv *p, const char *path, const char *where,
                     char *err, size_t errlen) {
    double v;
    if (jv_kind(p) != JV_ARR || jv_len(p) != 2 || jv_kind(jv_at(p, 0)) != JV_NUM ||
        parse_value(jv_str(jv_at(p, 1), NULL), &v) < 0) {
        errmsg_set(err, errlen, "%s:%d: %s: expected [unix_time, \"value\"] (a number and a numeric string)", path,
                   jv_line(p), where);
        return -1;
    }
    if (add_sample(d, metric, k, jv_num(jv_at(p, 0), 0), v, jv_line(p)) < 0) {
        errmsg_set(err, errlen, "%s:0: out of memory", path);
        return -1;
    }
    return 0;
}

/* Result i: its labels and its values (matrix) or value (vector). */
static int json_result(dcgm_data *d, const jv *r, int i, const char *path, char *err, size_t errlen) {
    const jv *m = jv_get(r, "metric");
    if (jv_kind(m) != JV_OBJ) {
        errmsg_set(err, errlen, "%s:%d: data.result[%d].metric: expected an object of labels", path, jv_line(r), i);
        return -1;
    }
    int metric = metric_of(jv_str(jv_get(m, "__name__"), ""));
    d->n_series++;
    if (metric < 0) return d->skipped_series++, 0;
    series_key k = { "", -1, "" };
    int have_host = 0;
    for (int j = 0; j < jv_len(m); j++) key_label(&k, jv_key(m, j), jv_str(jv_at(m, j), ""), &have_host);
    char where[64];
    const jv *vals = jv_get(r, "values");
    if (!vals && jv_get(r, "value")) {
        snprintf(where, sizeof where, "data.result[%d].value", i);
        return json_pair(d, metric, &k, jv_get(r, "value"), path, where, err, errlen);
    }
    if (jv_kind(vals) != JV_ARR) {
        errmsg_set(err, errlen, "%s:%d: data.result[%d]: expected \"values\" (an array of [unix_time, \"value\"])",
                   path, jv_line(r), i);
        return -1;
    }
    for (int j = 0; j < jv_len(vals); j++) {
        snprintf(where, sizeof where, "data.result[%d].values[%d]", i, j);
        if (json_pair(d, metric, &k, jv_at(vals, j), path, where, err, errlen) < 0) return -1;
    }
    return 0;
}

static int json_answer(dcgm_data *d, const jv *root, const char *path, char *err, size_t errlen) {
    const char *status = jv_str(jv_get(root, "status"), NULL);
    if (!status || strcmp(status, "success")) {
        errmsg_set(err, errlen, "%s:%d: status: expected \"success\" (the query's error: %s)", path,
                   jv_line(jv_get(root, "status")) ? jv_line(jv_get(root, "status")) : jv_line(root),
                   jv_str(jv_get(root, "error"), status ? status : "no status"));
        return -1;
    }
    const jv *data = jv_get(root, "data"), *res = jv_get(data, "result");
    const char *type = jv_str(jv_get(data, "resultType"), "");
    if (strcmp(type, "matrix") && strcmp(type, "vector")) {
        errmsg_set(err, errlen, "%s:%d: data.resultType: expected \"matrix\" (query_range) or \"vector\" (query)", path,
                   jv_line(data) ? jv_line(data) : jv_line(root));
        return -1;
    }
    if (jv_kind(res) != JV_ARR) {
        errmsg_set(err, errlen, "%s:%d: data.result: expected an array", path, jv_line(data));
        return -1;
    }
    for (int i = 0; i < jv_len(res); i++)
        if (json_result(d, jv_at(res, i), i, path, err, errlen) < 0) return -1;
    return 0;
}

int dcgm_read_prom_json(dcgm_data *d, const char *path, char *err, size_t errlen) {
    jsonin *doc = jsonin_read_file(path, err, errlen);
    if (!doc) return -1;
    int n0 = d->n, s0 = d->n_series, k0 = d->skipped_series;
    int rc = json_answer(d, jsonin_root(doc), path, err, errlen);
    jsonin_free(doc);
    if (rc < 0) d->n = n0, d->n_series = s0, d->skipped_series = k0;
    return rc;
}

/* ---- Text exposition format ------------------------------------------ */

static const char *skip_blank(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* A name [a-zA-Z_:][a-zA-Z0-9_:]* at p into out; the end, or NULL. */
static const char *text_name(const char *p, char *out, size_t len) {
    size_t n = 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == ':' ||
           (n > 0 && *p >= '0' && *p <= '9')) {
        if (n + 1 < len) out[n++] = *p;
        p++;
    }
    out[n] = 0;
    return n ? p : NULL;
}

/* A quoted label value with \\, \" and \n escapes; the end, or NULL. */
static const char *text_quoted(const char *p, char *out, size_t len) {
    size_t n = 0;
    if (*p++ != '"') return NULL;
    for (; *p && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            c = *++p;
            if (c == 'n') c = '\n';
            else if (c != '\\' && c != '"') return NULL;
        }
        if (n + 1 < len) out[n++] = c;
    }
    out[n] = 0;
    return *p == '"' ? p + 1 : NULL;
}

/* {name="value",...} at p into k; the end, or NULL with *what set. */
static const char *text_labels(const char *p, series_key *k, const char **what) {
    int have_host = 0;
    p = skip_blank(p + 1);
    while (*p != '}') {
        char name[128], value[256];
        const char *q = text_name(p, name, sizeof name);
        if (!q || *(q = skip_blank(q)) != '=') return *what = "a label name=\"value\"", NULL;
        if (!(q = text_quoted(skip_blank(q + 1), value, sizeof value))) return *what = "a quoted label value", NULL;
        key_label(k, name, value, &have_host);
        p = skip_blank(q);
        if (*p == ',') p = skip_blank(p + 1);
        else if (*p != '}') return *what = "',' or '}' after a label", NULL;
    }
    return p + 1;
}

/* One sample line. 0, or -1 with err. */
static int text_line(dcgm_data *d, const char *line, int ln, double now_s, const char *path, char *err,
                     size_t errlen) {
    char name[128], num[64], ts[64];
    series_key k = { "", -1, "" };
    const char *what = "a metric name", *p = text_name(line, name, sizeof name);
    if (p && *p == '{') p = text_labels(p, &k, &what);
    double v = 0, t_ms = 0;
    int nf = 0;
    if (p) {
        what = "a value and an optional timestamp in milliseconds";
        nf = sscanf(p, "%63s %63s", num, ts);
        char tail[2];
        if (nf < 1 || parse_value(num, &v) < 0 || (nf == 2 && parse_value(ts, &t_ms) < 0) ||
            sscanf(p, "%*s %*s %1s", tail) == 1)
            p = NULL;
    }
    if (!p) {
        errmsg_set(err, errlen, "%s:%d: expected %s (Prometheus text format: name{label=\"value\"} value [ms])", path,
                   ln, what);
        return -1;
    }
    int metric = metric_of(name);
    d->n_series++;
    if (metric < 0) return d->skipped_series++, 0;
    if (add_sample(d, metric, &k, nf == 2 ? t_ms / 1000 : now_s, v, ln) < 0) {
        errmsg_set(err, errlen, "%s:0: out of memory", path);
        return -1;
    }
    return 0;
}

int dcgm_read_text(dcgm_data *d, const char *path, double now_s, char *err, size_t errlen) {
    infile_err e;
    FILE *f = infile_open(path, INFILE_TRACE_MAX_BYTES, "a metrics text file", &e);
    if (!f) {
        infile_say(&e, path, err, errlen);
        return -1;
    }
    int n0 = d->n, s0 = d->n_series, k0 = d->skipped_series, ln = 0, rc = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        ln++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        const char *p = skip_blank(line);
        if (*p && *p != '#') rc = text_line(d, p, ln, now_s, path, err, errlen);
    }
    if (rc == 0 && ferror(f)) rc = -1, errmsg_set(err, errlen, "%s:%d: read error", path, ln);
    free(line);
    fclose(f);
    if (rc < 0) d->n = n0, d->n_series = s0, d->skipped_series = k0;
    return rc;
}

/* ---- Events and fleet ------------------------------------------------ */

static int by_series_time(const void *a, const void *b) {
    const dcgm_sample *x = a, *y = b;
    if (x->metric != y->metric) return (int)x->metric - (int)y->metric;
    int c = strcmp(x->host, y->host);
    if (c) return c;
    if (x->gpu != y->gpu) return x->gpu - y->gpu;
    if (x->t_s != y->t_s) return x->t_s < y->t_s ? -1 : 1;
    return x->line - y->line;
}

static int same_series(const dcgm_sample *a, const dcgm_sample *b) {
    return a->metric == b->metric && a->gpu == b->gpu && !strcmp(a->host, b->host);
}

/* The event sample s (prev: the series' sample before it, or NULL) makes;
 * 0 when none. */
static int event_of(const dcgm_sample *s, const dcgm_sample *prev, dcgm_event *e) {
    double before = prev ? prev->value : 0;
    memset(e, 0, sizeof *e);
    e->metric = s->metric, e->gpu = s->gpu, e->t_s = s->t_s;
    snprintf(e->host, sizeof e->host, "%s", s->host);
    if (!isfinite(s->value)) return 0;
    switch (s->metric) {
    case DCGM_XID:
        e->xid = (int)s->value;
        return s->value > 0 && s->value != before;
    case DCGM_ECC_DBE:
        e->count = s->value >= before ? s->value - before : s->value;   /* fell: a reset */
        return e->count > 0;
    case DCGM_REMAP_FAILURE:
        return s->value > 0 && !(before > 0);
    default:
        return 0;
    }
}

int dcgm_events(dcgm_data *d, dcgm_event **ev) {
    *ev = NULL;
    if (d->n > 0) qsort(d->s, (size_t)d->n, sizeof *d->s, by_series_time);
    size_t cap = 0;
    int n = 0;
    for (int i = 0; i < d->n; i++) {
        const dcgm_sample *prev = i > 0 && same_series(&d->s[i - 1], &d->s[i]) ? &d->s[i - 1] : NULL;
        dcgm_event e;
        if (!event_of(&d->s[i], prev, &e)) continue;
        if (GROW(*ev, cap, (size_t)n + 1)) {
            free(*ev), *ev = NULL;
            return -1;
        }
        (*ev)[n++] = e;
    }
    return n;
}

static int by_host_gpu(const void *a, const void *b) {
    const dcgm_sample *x = *(const dcgm_sample *const *)a, *y = *(const dcgm_sample *const *)b;
    int c = strcmp(x->host, y->host);
    return c ? c : x->gpu - y->gpu;
}

/* Hosts and the most GPUs one host reported, from the samples sorted by
 * host. -1 when memory runs out. */
static int count_hosts(const dcgm_data *d, dcgm_fleet *f) {
    if (d->n <= 0) return 0;
    const dcgm_sample **p = malloc((size_t)d->n * sizeof *p);
    if (!p) return -1;
    for (int i = 0; i < d->n; i++) p[i] = &d->s[i];
    qsort(p, (size_t)d->n, sizeof *p, by_host_gpu);
    for (int i = 0; i < d->n; i++) {
        int first = i == 0 || strcmp(p[i - 1]->host, p[i]->host);
        f->hosts += first && p[i]->host[0];
        if (p[i]->gpu + 1 > f->gpus_per_host) f->gpus_per_host = p[i]->gpu + 1;
    }
    free(p);
    return 0;
}

int dcgm_fleet_of(const dcgm_data *d, dcgm_fleet *f) {
    memset(f, 0, sizeof *f);
    f->util_mean_pct = f->power_mean_w = NAN;
    double util = 0, power = 0;
    int nu = 0, np = 0;
    for (int i = 0; i < d->n; i++) {
        const dcgm_sample *s = &d->s[i];
        if (i == 0 || s->t_s < f->t_first_s) f->t_first_s = s->t_s;
        if (i == 0 || s->t_s > f->t_last_s) f->t_last_s = s->t_s;
        if (s->metric == DCGM_GPU_UTIL && isfinite(s->value)) util += s->value, nu++;
        if (s->metric == DCGM_POWER && isfinite(s->value)) power += s->value, np++;
    }
    if (nu) f->util_mean_pct = util / nu;
    if (np) f->power_mean_w = power / np;
    return count_hosts(d, f);
}
