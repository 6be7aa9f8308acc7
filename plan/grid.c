/*
 * grid: the points of a sweep (see grid.h): the axes and fixed overrides
 * as given, each point's edited scenario text, its key and values, and the
 * check that loads it and builds its world once. Cheap next to the runs:
 * editing the text is a string copy; a load costs ~90 ms on a 16K-GPU
 * scenario (libxml2's RELAX NG validation), which is why checked points
 * are kept.
 */
#include "plan/grid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "plan/pool.h"
#include "sim/metrics.h"
#include "sim/rng.h"
#include "sim/world.h"

int sweep_silent;

void sweep_say(const char *fmt, ...) {
    if (sweep_silent) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

int sweep_init(sweep *sw, const char *cmd, const char *file) {
    memset(sw, 0, sizeof *sw);
    sw->file = file;
    sw->replicas = 1;
    char err[2048];
    if (scenario_load(file, &sw->base, err, sizeof err) < 0) {
        sweep_say("%s\n", err);
        return PLAN_BAD_INPUT;
    }
    sw->len = sw->base->xml_len;
    sw->xml = malloc(sw->len + 1);
    if (!sw->xml) {
        sweep_say("clustertwin %s: out of memory\n", cmd);
        return PLAN_FAILED;
    }
    memcpy(sw->xml, sw->base->xml_text, sw->len + 1);
    return PLAN_OK;
}

void sweep_free(sweep *sw) {
    pool_stop(sw->pool, 1);
    for (int a = 0; a < sw->n_axes; a++) {
        free(sw->axes[a].path);
        override_values_free(sw->axes[a].values, sw->axes[a].n);
    }
    for (int i = 0; i < sw->n_sets; i++) free(sw->set_text[i]);
    for (int p = 0; p < sw->n_points; p++) {
        if (sw->loaded) scenario_free(sw->loaded[p]);
        if (sw->unfit) free(sw->unfit[p]);
        if (sw->text) free(sw->text[p]);
        if (sw->key) free(sw->key[p]);
        if (sw->x) free(sw->x[p]);
    }
    free(sw->loaded);
    free(sw->unfit);
    free(sw->text);
    free(sw->text_len);
    free(sw->key);
    free(sw->x);
    free(sw->xml);
    scenario_free(sw->base);
    memset(sw, 0, sizeof *sw);
}

/* Check that the path names something in the scenario, before any value
 * is tried, so a typo reads as such and not as a bad value. */
static int check_path(sweep *sw, const char *cmd, const char *path, const char *value) {
    override ov = { path, value };
    char *t = NULL, err[2048];
    if (override_apply(sw->xml, sw->len, sw->file, &ov, 1, &t, NULL, err, sizeof err) < 0) {
        sweep_say("clustertwin %s: %s\n", cmd, err);
        return PLAN_BAD_INPUT;
    }
    free(t);
    return PLAN_OK;
}

int sweep_parse_vary(sweep *sw, const char *cmd, const char *arg, int int_range) {
    char buf[2048];
    const char *path, *values;
    if (sw->n_axes == SWEEP_MAX_AXES) {
        sweep_say("clustertwin %s: at most %d --vary\n", cmd, SWEEP_MAX_AXES);
        return PLAN_BAD_INPUT;
    }
    if (override_split(arg, buf, sizeof buf, &path, &values) < 0 || !*path || !*values) {
        sweep_say("clustertwin %s: --vary %s: expected PATH=VALUES, like cluster/nodes/@count=64,128,256\n", cmd, arg);
        return PLAN_BAD_INPUT;
    }
    for (int a = 0; a < sw->n_axes; a++)
        if (!strcmp(sw->axes[a].path, path)) {
            sweep_say("clustertwin %s: --vary %s: this path is varied twice\n", cmd, path);
            return PLAN_BAD_INPUT;
        }
    char err[512];
    sweep_axis *ax = &sw->axes[sw->n_axes];
    ax->n = override_values(values, int_range, &ax->values, err, sizeof err);
    if (ax->n < 0) {
        ax->n = 0;
        sweep_say("clustertwin %s: --vary %s: %s\n", cmd, path, err);
        return PLAN_BAD_INPUT;
    }
    ax->path = strdup(path);
    sw->n_axes++;
    if (!ax->path) return PLAN_FAILED;
    return check_path(sw, cmd, path, ax->values[0]);
}

int sweep_add_set(sweep *sw, const char *cmd, const char *arg) {
    if (sw->n_sets == SWEEP_MAX_SETS) {
        sweep_say("clustertwin %s: at most %d --set\n", cmd, SWEEP_MAX_SETS);
        return PLAN_BAD_INPUT;
    }
    size_t n = strlen(arg) + 1;
    char *b = malloc(n);
    if (!b) return PLAN_FAILED;
    const char *path, *value;
    if (override_split(arg, b, n, &path, &value) < 0 || !*path || !*value) {
        free(b);
        sweep_say("clustertwin %s: --set %s: expected PATH=VALUE, like cluster/spares/@warm=8\n", cmd, arg);
        return PLAN_BAD_INPUT;
    }
    sw->set_text[sw->n_sets] = b;
    sw->sets[sw->n_sets].path = path;
    sw->sets[sw->n_sets].value = value;
    sw->n_sets++;
    return strchr(value, '{') ? PLAN_OK : check_path(sw, cmd, path, value);
}

/* JSON string of z appended to b. */
static void js(char **b, size_t *n, size_t *cap, const char *z) {
    if (GROW(*b, *cap, *n + 2 * strlen(z) + 8) < 0) return;
    char *w = *b + *n;
    *w++ = '"';
    for (const char *p = z; *p; p++) {
        if (*p == '"' || *p == '\\') *w++ = '\\';
        *w++ = (unsigned char)*p < 0x20 ? ' ' : *p;
    }
    *w++ = '"';
    *w = 0;
    *n = (size_t)(w - *b);
}

static void raw(char **b, size_t *n, size_t *cap, const char *z) {
    size_t k = strlen(z);
    if (GROW(*b, *cap, *n + k + 1) < 0) return;
    memcpy(*b + *n, z, k + 1);
    *n += k;
}

char *sweep_params_json(const sweep *sw) {
    char *b = NULL;
    size_t n = 0, cap = 0;
    raw(&b, &n, &cap, "[");
    for (int a = 0; a < sw->n_axes; a++) {
        if (a) raw(&b, &n, &cap, ",");
        js(&b, &n, &cap, sw->axes[a].path);
    }
    raw(&b, &n, &cap, "]");
    return b;
}

char *sweep_sets_json(const sweep *sw) {
    char *b = NULL;
    size_t n = 0, cap = 0;
    raw(&b, &n, &cap, "[");
    for (int i = 0; i < sw->n_sets; i++) {
        char one[2048];
        snprintf(one, sizeof one, "%s=%s", sw->sets[i].path, sw->sets[i].value);
        if (i) raw(&b, &n, &cap, ",");
        js(&b, &n, &cap, one);
    }
    raw(&b, &n, &cap, "]");
    return b;
}

int sweep_point_of(const sweep *sw, const int *idx) {
    int p = 0;
    for (int a = 0; a < sw->n_axes; a++) p = p * sw->axes[a].n + idx[a];
    return p;
}

const char *sweep_value(const sweep *sw, int p, int a) {
    for (int b = sw->n_axes - 1; b > a; b--) p /= sw->axes[b].n;
    return sw->axes[a].values[p % sw->axes[a].n];
}

int sweep_points(sweep *sw, const char *cmd) {
    long long n = 1;
    for (int a = 0; a < sw->n_axes; a++) n *= sw->axes[a].n;
    if (n > SWEEP_MAX_POINTS) {
        sweep_say("clustertwin %s: the grid has %lld points; at most %d\n", cmd, n, SWEEP_MAX_POINTS);
        return PLAN_BAD_INPUT;
    }
    sw->n_points = (int)n;
    sw->text = calloc((size_t)n, sizeof *sw->text);
    sw->text_len = calloc((size_t)n, sizeof *sw->text_len);
    sw->key = calloc((size_t)n, sizeof *sw->key);
    sw->x = calloc((size_t)n, sizeof *sw->x);
    sw->loaded = calloc((size_t)n, sizeof *sw->loaded);
    sw->unfit = calloc((size_t)n, sizeof *sw->unfit);
    if (!sw->text || !sw->text_len || !sw->key || !sw->x || !sw->loaded || !sw->unfit) return PLAN_FAILED;
    for (int p = 0; p < sw->n_points; p++) {
        char *kb = NULL, *xb = NULL;
        size_t kn = 0, kc = 0, xn = 0, xc = 0;
        raw(&kb, &kn, &kc, "[");
        raw(&xb, &xn, &xc, "[");
        for (int a = 0; a < sw->n_axes; a++) {
            const char *v = sweep_value(sw, p, a);
            if (a) raw(&kb, &kn, &kc, ","), raw(&xb, &xn, &xc, ",");
            js(&kb, &kn, &kc, v);
            double x;
            char num[64];
            if (override_number(v, &x) == 0) snprintf(num, sizeof num, "%.17g", x);
            else snprintf(num, sizeof num, "null");
            raw(&xb, &xn, &xc, num);
        }
        raw(&kb, &kn, &kc, "]");
        raw(&xb, &xn, &xc, "]");
        sw->key[p] = kb;
        sw->x[p] = xb;
        if (!kb || !xb) return PLAN_FAILED;
    }
    return PLAN_OK;
}

/* The overrides of point p: the axes' values, then the --set ones. */
static int point_overrides(const sweep *sw, int p, override *ov) {
    int k = 0;
    for (int a = 0; a < sw->n_axes; a++) {
        ov[k].path = sw->axes[a].path;
        ov[k++].value = sweep_value(sw, p, a);
    }
    for (int i = 0; i < sw->n_sets; i++) ov[k++] = sw->sets[i];
    return k;
}

/* Load point p and build its world once: the check of everything that can
 * be wrong with it. On success *out is the loaded scenario (the caller
 * owns it) and, when text is not NULL and *text is NULL, *text its edited
 * text. On error returns 1 (bad input: the scenario does not load, or no
 * memory) or 2 (it does not fit: the scenario loads but its world is
 * refused), with *msg the message (malloc'd). */
int sweep_check_point(const sweep *sw, int p, scenario **out, char **text, char **msg) {
    override ov[SWEEP_MAX_AXES + SWEEP_MAX_SETS];
    char err[4096];
    *out = NULL;
    *msg = NULL;
    int k = point_overrides(sw, p, ov);
    scenario *s = NULL;
    char *t = NULL;
    if (override_load(sw->xml, sw->len, sw->file, ov, k, &s, text && !*text ? &t : NULL, err, sizeof err) < 0) {
        *msg = strdup(err);
        return 1;
    }
    /* what the world refuses (a plan that does not fit in GPU memory, a
     * job larger than the cluster, a run past the clock's horizon) is a
     * configuration that does not fit: found now rather than in the middle
     * of the runs, and recorded rather than fatal; running out of memory
     * here is a failure */
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        int oom = !bus || strstr(err, "out of memory") != NULL;
        *msg = strdup(bus ? err : "out of memory");
        metrics_free(bus);
        scenario_free(s);
        free(t);
        return oom ? 1 : 2;
    }
    world_free(w);
    metrics_free(bus);
    if (t) *text = t;
    *out = s;
    return 0;
}

/* The edited text of every point (cheap: no validation). Path and
 * expression errors show here, before any point is loaded. */
int sweep_point_texts(sweep *sw, const char *cmd) {
    override ov[SWEEP_MAX_AXES + SWEEP_MAX_SETS];
    char err[4096];
    for (int p = 0; p < sw->n_points; p++) {
        if (sw->text[p]) continue;
        int k = point_overrides(sw, p, ov);
        if (override_apply(sw->xml, sw->len, sw->file, ov, k, &sw->text[p], &sw->text_len[p], err, sizeof err) < 0) {
            sweep_say("clustertwin %s: %s\n", cmd, err);
            return PLAN_BAD_INPUT;
        }
    }
    return PLAN_OK;
}

int sweep_fits(const sweep *sw, int p) { return !sw->unfit || !sw->unfit[p]; }

int sweep_prepare_point(sweep *sw, const char *cmd, int p) {
    if (sw->loaded[p] || sw->unfit[p]) return PLAN_OK;
    char *msg = NULL;
    scenario *s = NULL;
    int st = sweep_check_point(sw, p, &s, &sw->text[p], &msg);
    if (st == 2 && msg) {
        sw->unfit[p] = msg;
        return PLAN_OK;
    }
    if (st != 0) {
        sweep_say("clustertwin %s: %s\n", cmd, msg ? msg : "out of memory");
        free(msg);
        return PLAN_BAD_INPUT;
    }
    sw->text_len[p] = strlen(sw->text[p]);
    sw->loaded[p] = s;
    return PLAN_OK;
}

uint64_t sweep_seed(uint64_t base, int replica) {
    if (replica == 0) return base;
    /* below 2^53, so `run --seed` and JSON numbers carry it exactly */
    return rng_derive_seed(base, "sweep-replica", (uint64_t)replica) & ((1ULL << 53) - 1);
}

