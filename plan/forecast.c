/*
 * forecast: the variants of a forecast (see forecast.h): the options
 * parsed, each variant's scenario edited, loaded, its job what-ifs applied
 * and its world built once to list the jobs as the snapshot has them.
 * Running the replicas: forecast_run.c; the statistics and JSON:
 * forecast_json.c.
 */
#include "plan/forecast.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "sim/world.h"

#define CMD "forecast"
#define DAY_S 86400.0
/* A run stops at 30 days unless --horizon says otherwise: a held job never
 * ends, so without a limit a scenario with failures would run to the
 * clock's 100-year horizon. A choice, not a measurement. */
#define DEFAULT_HORIZON_S (30 * DAY_S)
#define DEFAULT_REPLICAS 20          /* the interface of issue 22 */
#define DEFAULT_DAYS 7               /* "utilisation over the next days": a week */
#define PRIORITY_MAX 1000000         /* as a trace's priority column (scenarios/trace.c) */

int forecast_init(forecast *f, const char *file) {
    memset(f, 0, sizeof *f);
    f->replicas = DEFAULT_REPLICAS;
    f->days = DEFAULT_DAYS;
    f->horizon_s = DEFAULT_HORIZON_S;
    return sweep_init(&f->sw, CMD, file);
}

static void job_set_free(forecast_job_set *js) {
    free(js->values);
    free(js->text);
}

void forecast_free(forecast *f) {
    for (int v = 0; v < f->n_variants; v++) {
        forecast_variant *x = &f->v[v];
        scenario_free(x->s);
        free(x->jobs);
        free(x->start_s);
        free(x->drain_s);
        free(x->util);
    }
    free(f->v);
    for (int i = 0; i < f->n_job_sets; i++) job_set_free(&f->job_sets[i]);
    for (int a = 0; a < f->n_axes; a++) job_set_free(&f->axes[a].job);
    sweep_free(&f->sw);
    memset(f, 0, sizeof *f);
}

/* ---- job what-ifs: jobs[NAME].priority=V ---------------------------------- */

/* Whether path is a job what-if; then its job's name into js. -1: it is
 * one but malformed (printed). */
static int job_path(const char *opt, const char *arg, const char *path, forecast_job_set *js) {
    if (strncmp(path, "jobs[", 5)) return 0;
    const char *close = strchr(path + 5, ']');
    if (!close || close == path + 5 || strcmp(close, "].priority") || (size_t)(close - path - 5) >= SC_NAME_MAX) {
        sweep_say("clustertwin %s: %s %s: expected jobs[NAME].priority=VALUE (NAME a job's id or name)\n", CMD, opt,
                  arg);
        return -1;
    }
    snprintf(js->name, sizeof js->name, "%.*s", (int)(close - path - 5), path + 5);
    return 1;
}

/* The whole numbers of a what-if ("5" or "0,10,20"). */
static int job_values(const char *opt, const char *arg, const char *values, forecast_job_set *js) {
    char **v = NULL, err[512];
    int n = override_values(values, 0, &v, err, sizeof err);
    if (n < 0) {
        sweep_say("clustertwin %s: %s %s: %s\n", CMD, opt, arg, err);
        return PLAN_BAD_INPUT;
    }
    js->values = calloc((size_t)n, sizeof *js->values);
    js->text = strdup(arg);
    int rc = js->values && js->text ? PLAN_OK : PLAN_FAILED;
    for (int i = 0; i < n && rc == PLAN_OK; i++) {
        char *end = NULL;
        errno = 0;
        long x = strtol(v[i], &end, 10);
        if (errno || end == v[i] || *end || x < -PRIORITY_MAX || x > PRIORITY_MAX) {
            sweep_say("clustertwin %s: %s %s: priority \"%s\": expected a whole number from %d to %d\n", CMD, opt,
                      arg, v[i], -PRIORITY_MAX, PRIORITY_MAX);
            rc = PLAN_BAD_INPUT;
        }
        js->values[js->n++] = x;
    }
    override_values_free(v, n);
    return rc;
}

/* A job what-if from "--set|--vary ARG": 1 when ARG is one (parsed into js,
 * *rc its status), 0 when it is an attribute path. */
static int job_arg(const char *opt, const char *arg, forecast_job_set *js, int *rc) {
    char buf[2048];
    const char *path, *values;
    if (override_split(arg, buf, sizeof buf, &path, &values) < 0) return 0;
    int k = job_path(opt, arg, path, js);
    if (k == 0) return 0;
    *rc = k < 0 ? PLAN_BAD_INPUT : job_values(opt, arg, values, js);
    if (*rc == PLAN_OK && !strcmp(opt, "--set") && js->n != 1) {
        sweep_say("clustertwin %s: --set %s: one value (--vary takes several)\n", CMD, arg);
        *rc = PLAN_BAD_INPUT;
    }
    return 1;
}

int forecast_add_set(forecast *f, const char *arg) {
    forecast_job_set js;
    memset(&js, 0, sizeof js);
    int rc = PLAN_OK;
    if (!job_arg("--set", arg, &js, &rc)) return sweep_add_set(&f->sw, CMD, arg);
    if (rc == PLAN_OK && f->n_job_sets == FORECAST_MAX_JOB_SETS) {
        sweep_say("clustertwin %s: at most %d job --set\n", CMD, FORECAST_MAX_JOB_SETS);
        rc = PLAN_BAD_INPUT;
    }
    if (rc == PLAN_OK) f->job_sets[f->n_job_sets++] = js;
    else job_set_free(&js);
    return rc;
}

int forecast_add_vary(forecast *f, const char *arg) {
    if (f->n_axes == SWEEP_MAX_AXES) {
        sweep_say("clustertwin %s: at most %d --vary\n", CMD, SWEEP_MAX_AXES);
        return PLAN_BAD_INPUT;
    }
    forecast_axis *ax = &f->axes[f->n_axes];
    int rc = PLAN_OK;
    ax->axis = -1;
    if (job_arg("--vary", arg, &ax->job, &rc)) {
        f->n_axes++;
        return rc;
    }
    ax->axis = f->sw.n_axes;
    rc = sweep_parse_vary(&f->sw, CMD, arg, 0);
    if (rc == PLAN_OK) f->n_axes++;
    return rc;
}

/* Set the priority of every trace and training job called name (its id or
 * name). 0, or -1 when none is. */
static int set_priority(scenario *s, const char *name, long prio) {
    int found = 0;
    for (int i = 0; i < s->n_training; i++)
        if (!strcmp(s->training[i].name, name)) s->training[i].priority = (int)prio, found = 1;
    for (int i = 0; i < s->n_trace_jobs; i++) {
        const char *id = scenario_trace_text(s, s->trace_jobs[i].id);
        if (!strcmp(s->trace_names + s->trace_jobs[i].name, name) || (id && !strcmp(id, name)))
            s->trace_jobs[i].priority = (int)prio, found = 1;
    }
    return found ? 0 : -1;
}

static int apply_job_set(scenario *s, const char *opt, const forecast_job_set *js, long value) {
    if (set_priority(s, js->name, value) == 0) return PLAN_OK;
    sweep_say("clustertwin %s: %s %s: no trace or training job is named %s\n", CMD, opt, js->text, js->name);
    return PLAN_BAD_INPUT;
}

/* ---- the variants ------------------------------------------------------------ */

/* The overrides and job what-if of variant (axis a, value i); a < 0: the
 * baseline. The varied attribute comes first, so a --set expression may
 * read it (as in a sweep). Returns the number of overrides. */
static int variant_overrides(const forecast *f, int a, int i, override *ov, char *label, size_t len) {
    int k = 0;
    snprintf(label, len, "baseline");
    if (a >= 0 && f->axes[a].axis >= 0) {
        const sweep_axis *sa = &f->sw.axes[f->axes[a].axis];
        ov[k++] = (override){ sa->path, sa->values[i] };
        snprintf(label, len, "%s=%s", sa->path, sa->values[i]);
    } else if (a >= 0) {
        snprintf(label, len, "jobs[%s].priority=%ld", f->axes[a].job.name, f->axes[a].job.values[i]);
    }
    for (int j = 0; j < f->sw.n_sets; j++) ov[k++] = f->sw.sets[j];
    return k;
}

/* Whether trace row `row` is held, or waits (through `after`) for a held
 * job: the world never starts such a job (sim/world_snapshot.c). */
static int held_chain(const scenario *s, int row) {
    for (int k = 0; row >= 0 && k <= s->n_trace_jobs; k++) {
        if (s->trace_jobs[row].state == SC_JOB_HELD) return 1;
        row = s->trace_jobs[row].after;
    }
    return 0;
}

/* The jobs of a built world as the snapshot has them: a trace job's id,
 * user and state from its row (scenarios/scenario.h, sc_trace_job); any
 * other job, and a trace job without a state, is pending when submitted at
 * or before t = 0 and "later" after it. A pending job counts in the drain
 * unless it can never start (held, or waiting for a held job). */
static void list_jobs(forecast_variant *x, const world *w) {
    const scenario *s = x->s;
    for (int i = 0; i < x->n_jobs; i++) {
        job_result jr;
        const job_result *r = world_job(w, i, &jr);
        const sc_trace_job *t = r->trace_row >= 0 ? &s->trace_jobs[r->trace_row] : NULL;
        const char *id = t ? scenario_trace_text(s, t->id) : NULL, *user = t ? scenario_trace_text(s, t->user) : NULL;
        forecast_job *j = &x->jobs[i];
        snprintf(j->name, sizeof j->name, "%s", r->name);
        snprintf(j->id, sizeof j->id, "%s", id ? id : r->name);
        snprintf(j->user, sizeof j->user, "%s", user ? user : "");
        j->gpus = r->gpus;
        if (t && t->state == SC_JOB_RUNNING) j->state = "running";
        else if (t && t->state == SC_JOB_HELD) j->state = "held";
        else j->state = r->submit_s > 0 ? "later" : "pending";
        j->waiting = !strcmp(j->state, "pending") && !(t && held_chain(s, r->trace_row));
    }
}

/* Build variant x's world once: the check, and its jobs. */
static int build_variant(const forecast *f, forecast_variant *x) {
    char err[4096];
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(x->s, bus, err, sizeof err) : NULL;
    int rc = PLAN_OK;
    if (!w) {
        if (bus) sweep_say("clustertwin %s: %s: %s\n", CMD, x->label, err);
        rc = bus ? PLAN_BAD_INPUT : PLAN_FAILED;
    } else {
        x->n_jobs = world_job_count(w);
        x->gpus = world_get_totals(w).gpus;
        size_t nj = (size_t)x->n_jobs + 1, nr = (size_t)f->replicas;
        x->jobs = calloc(nj, sizeof *x->jobs);
        x->start_s = calloc(nj * nr, sizeof *x->start_s);
        x->drain_s = calloc(nr, sizeof *x->drain_s);
        x->util = calloc(((size_t)f->days + 1) * nr, sizeof *x->util);
        if (x->jobs && x->start_s && x->drain_s && x->util) list_jobs(x, w);
        else rc = PLAN_FAILED;
    }
    world_free(w);
    metrics_free(bus);
    return rc;
}

/* Load variant (a, i) into x and apply the job what-ifs. */
static int load_variant(forecast *f, int a, int i, forecast_variant *x) {
    override ov[SWEEP_MAX_SETS + 1];
    char err[4096];
    int k = variant_overrides(f, a, i, ov, x->label, sizeof x->label);
    /* no override: the text as it is (override_load's splice would qsort
     * an empty, NULL array: undefined behaviour that UBSan reports) */
    int bad = k ? override_load(f->sw.xml, f->sw.len, f->sw.file, ov, k, &x->s, NULL, err, sizeof err)
                : scenario_load_memory(f->sw.xml, f->sw.len, f->sw.file, &x->s, err, sizeof err);
    if (bad < 0) {
        sweep_say("%s%s\n", k ? "clustertwin " CMD ": " : "", err);
        return PLAN_BAD_INPUT;
    }
    int rc = PLAN_OK;
    for (int j = 0; j < f->n_job_sets && rc == PLAN_OK; j++)
        rc = apply_job_set(x->s, "--set", &f->job_sets[j], f->job_sets[j].values[0]);
    if (rc == PLAN_OK && a >= 0 && f->axes[a].axis < 0)
        rc = apply_job_set(x->s, "--vary", &f->axes[a].job, f->axes[a].job.values[i]);
    x->seed0 = f->has_seed ? f->seed : x->s->seed;
    return rc == PLAN_OK ? build_variant(f, x) : rc;
}

static int axis_len(const forecast *f, int a) {
    return f->axes[a].axis >= 0 ? f->sw.axes[f->axes[a].axis].n : f->axes[a].job.n;
}

int forecast_prepare(forecast *f) {
    int n = 1;
    for (int a = 0; a < f->n_axes; a++) n += axis_len(f, a);
    if (n > FORECAST_MAX_VARIANTS) {
        sweep_say("clustertwin %s: %d variants; at most %d (the baseline and one per --vary value)\n", CMD, n,
                  FORECAST_MAX_VARIANTS);
        return PLAN_BAD_INPUT;
    }
    f->v = calloc((size_t)n, sizeof *f->v);
    if (!f->v) return PLAN_FAILED;
    int rc = PLAN_OK;
    for (int a = -1; a < f->n_axes && rc == PLAN_OK; a++)
        for (int i = 0; i < (a < 0 ? 1 : axis_len(f, a)) && rc == PLAN_OK; i++)
            rc = load_variant(f, a, i, &f->v[f->n_variants++]);
    return rc;
}

const char *forecast_snapshot_time(const forecast *f) {
    const scenario *s = f->n_variants ? f->v[0].s : f->sw.base;
    return s && s->snapshot_time[0] ? s->snapshot_time : NULL;
}
