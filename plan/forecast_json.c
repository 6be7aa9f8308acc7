/*
 * forecast_json: a forecast's statistics over its replicas and its JSON
 * (see forecast.h; the names are those of issue 22's interface, section 4).
 */
#include <math.h>
#include <string.h>

#include "plan/forecast.h"
#include "plan/forecast_stats.h"

double forecast_start(const forecast *f, int v, int i, double p) {
    const forecast_variant *x = &f->v[v];
    if (!strcmp(x->jobs[i].state, "running")) return NAN;     /* started before the snapshot */
    return forecast_stats_percentile(x->start_s + (size_t)i * f->replicas, f->replicas, p);
}

double forecast_started_share(const forecast *f, int v, int i) {
    return forecast_stats_share(f->v[v].start_s + (size_t)i * f->replicas, f->replicas);
}

double forecast_drain(const forecast *f, int v, double p) {
    return forecast_stats_percentile(f->v[v].drain_s, f->replicas, p);
}

double forecast_util(const forecast *f, int v, int k) {
    const double *u = f->v[v].util + (size_t)k * f->replicas;
    double sum = 0;
    int n = 0;
    for (int r = 0; r < f->replicas; r++)
        if (!isnan(u[r])) sum += u[r], n++;
    return n ? sum / n : NAN;
}

static void job_json(json *j, const forecast *f, int v, int i) {
    const forecast_job *b = &f->v[v].jobs[i];
    json_object(j, NULL);
    json_str(j, "id", b->id);
    json_str(j, "name", b->name);
    if (b->user[0]) json_str(j, "user", b->user);
    else json_null(j, "user");
    json_int(j, "gpus", b->gpus);
    json_str(j, "state_at_snapshot", b->state);
    json_num(j, "start_p10_s", forecast_start(f, v, i, 10));
    json_num(j, "start_p50_s", forecast_start(f, v, i, 50));
    json_num(j, "start_p90_s", forecast_start(f, v, i, 90));
    json_num(j, "started_share", forecast_started_share(f, v, i));
    json_end(j);
}

static void variant_json(json *j, const forecast *f, int v) {
    const forecast_variant *x = &f->v[v];
    json_object(j, NULL);
    json_str(j, "label", x->label);
    json_int(j, "gpus", x->gpus);
    json_num(j, "drain_p10_s", forecast_drain(f, v, 10));
    json_num(j, "drain_p50_s", forecast_drain(f, v, 50));
    json_num(j, "drain_p90_s", forecast_drain(f, v, 90));
    json_num(j, "drained_share", forecast_stats_share(x->drain_s, f->replicas));
    json_array(j, "utilization_by_day");
    for (int k = 0; k < f->days; k++) json_num(j, NULL, forecast_util(f, v, k));
    json_end(j);
    json_array(j, "jobs");
    for (int i = 0; i < x->n_jobs; i++) job_json(j, f, v, i);
    json_end(j);
    json_end(j);
}

void forecast_json(const forecast *f, json *j) {
    json_object(j, NULL);
    json_str(j, "scenario", f->sw.base->name);
    json_int(j, "replicas", f->replicas);
    json_int(j, "seed", (long long)(f->n_variants ? f->v[0].seed0 : f->sw.base->seed));
    json_num(j, "horizon_s", f->horizon_s);
    const char *t = forecast_snapshot_time(f);
    if (t) json_str(j, "snapshot_time", t);
    else json_null(j, "snapshot_time");
    json_array(j, "variants");
    for (int v = 0; v < f->n_variants; v++) variant_json(j, f, v);
    json_end(j);
    json_end(j);
}
