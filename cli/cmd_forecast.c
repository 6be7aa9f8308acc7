/*
 * forecast: run a snapshot of a cluster forward many times and say when
 * each waiting job starts, when the queue drains and how busy the GPUs
 * are, for the cluster as it is and for what-ifs (the engine:
 * plan/forecast.h; the guide: docs/forecast.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/numfmt.h"
#include "base/units.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "plan/forecast.h"
#include "reports/json.h"
#include "sim/engine.h"

static const char help[] =
    "usage: clustertwin forecast FILE [--replicas R] [--seed N] [--json PATH|-] [--set PATH=VALUE ...]\n"
    "                            [--vary PATH=VALUES ...] [--jobs N] [--horizon DURATION] [--days N]\n"
    "                            [--quiet]\n"
    "\n"
    "Run the snapshot in FILE (a scenario whose time 0 is now) forward R times and\n"
    "say when each waiting job starts (p10, p50, p90 over the runs), when today's\n"
    "queue drains and how busy the GPUs are each day; the same for each what-if.\n"
    "  --replicas R    runs per variant (default 20); run r uses seed N + r\n"
    "  --seed N        the first run's seed (default: the scenario's)\n"
    "  --json PATH     also write the forecast as JSON ('-': stdout, then no table)\n"
    "  --set PATH=VALUE  a change to every variant: an attribute path\n"
    "                  (cluster/nodes/@count=20, as in sweep) or jobs[NAME].priority=V\n"
    "  --vary PATH=VALUES  one variant per value beside the baseline:\n"
    "                  cluster/nodes/@count=18,20 | jobs[train-7].priority=0,100\n"
    "  --jobs N        local worker processes (default 1); the results do not depend on N\n"
    "  --horizon D     stop each run at D (default 30d): a job not started by then\n"
    "                  counts as not started\n"
    "  --days N        utilisation for the first N days (default 7; at most the horizon)\n"
    "  --quiet         no table\n"
    "A percentile is '-' (null in the JSON) when fewer than that share of the runs\n"
    "started the job within the horizon; 'started' says how often it did.\n"
    "Exit status: 0 ok, 1 a run or a write failed, 2 bad input.\n";

/* Jobs listed in the table per variant (the JSON has them all): a queue of
 * thousands would bury the drain and utilisation lines. A choice. */
#define TABLE_ROWS 40

typedef struct forecast_args {
    const char *file, *json, *rep_z, *seed_z, *jobs_z, *horizon_z, *days_z;
    const char *vary[SWEEP_MAX_AXES], *sets[SWEEP_MAX_SETS + FORECAST_MAX_JOB_SETS];
    cli_list vary_l, set_l;
    int quiet;
    long replicas, jobs, days;
    double seed, horizon_s;
} forecast_args;

static int parse_numbers(forecast_args *a) {
    char why[128];
    a->replicas = 20, a->jobs = 1, a->days = 7, a->horizon_s = 30 * 86400.0;
    if (cli_parse_count("forecast", "--replicas", a->rep_z, 1, 100000, &a->replicas) != EXIT_OK ||
        cli_parse_count("forecast", "--jobs", a->jobs_z, 1, 4096, &a->jobs) != EXIT_OK ||
        cli_parse_count("forecast", "--days", a->days_z, 1, 3660, &a->days) != EXIT_OK ||
        cli_parse_seed("forecast", a->seed_z, &a->seed) != EXIT_OK)
        return EXIT_BAD_INPUT;
    if (a->horizon_z && (units_parse(a->horizon_z, UNIT_DURATION, &a->horizon_s, why, sizeof why) < 0 ||
                         engine_check_s(a->horizon_s, why, sizeof why) < 0))
        return cli_usage_error("forecast", "--horizon %s: %s", a->horizon_z, why);
    if (!(a->horizon_s > 0)) return cli_usage_error("forecast", "--horizon %s: expected a duration > 0", a->horizon_z);
    if (a->days * 86400.0 > a->horizon_s)
        return cli_usage_error("forecast", "--days %ld: longer than the horizon (%s); give a longer --horizon",
                               a->days, a->horizon_z ? a->horizon_z : "30d");
    if (a->json && !*a->json) return cli_usage_error("forecast", "--json needs a path ('-': stdout)");
    return CLI_GO;
}

static int parse_args(forecast_args *a, int argc, char **argv) {
    a->vary_l = (cli_list){ a->vary, 0, SWEEP_MAX_AXES };
    a->set_l = (cli_list){ a->sets, 0, SWEEP_MAX_SETS + FORECAST_MAX_JOB_SETS };
    const cli_option opts[] = {
        { "--replicas", NULL, CLI_VALUE, &a->rep_z, "runs per variant" },
        { "--seed", NULL, CLI_VALUE, &a->seed_z, "the first run's seed" },
        { "--json", NULL, CLI_VALUE, &a->json, "write the forecast as JSON to PATH ('-': stdout)" },
        { "--set", NULL, CLI_LIST, &a->set_l, "a change to every variant (PATH=VALUE)" },
        { "--vary", NULL, CLI_LIST, &a->vary_l, "one variant per value (PATH=VALUES)" },
        { "--jobs", NULL, CLI_VALUE, &a->jobs_z, "local worker processes" },
        { "--horizon", NULL, CLI_VALUE, &a->horizon_z, "stop each run at this time" },
        { "--days", NULL, CLI_VALUE, &a->days_z, "utilisation for the first N days" },
        { "--quiet", "-q", CLI_FLAG, &a->quiet, "no table" },
        { NULL },
    };
    cli_spec spec = { "forecast", help, opts, CLI_ONE_FILE, &a->file, NULL };
    int rc = cli_parse(&spec, argc, argv);
    if (rc != CLI_GO) return rc;
    if (!a->file) return cli_usage_error("forecast", "missing scenario FILE");
    return parse_numbers(a);
}

/* ---- the table ------------------------------------------------------------------ */

/* A time from now as a person reads it, and as a UTC wall-clock time when
 * the snapshot has one ("2.00 h, 11-26 11:30Z"). NaN: "-". */
static char *when(double t_s, time_t snap, int has_snap, char *buf, size_t len) {
    if (isnan(t_s)) return snprintf(buf, len, "-"), buf;
    char d[24];
    if (t_s <= 0) snprintf(d, sizeof d, "now");
    else nf_duration(t_s, d, sizeof d);
    if (!has_snap) return snprintf(buf, len, "%s", d), buf;
    time_t at = snap + (time_t)llround(t_s);
    struct tm tm;
    char clock[24];
    gmtime_r(&at, &tm);
    strftime(clock, sizeof clock, "%m-%d %H:%MZ", &tm);
    snprintf(buf, len, "%s, %s", d, clock);
    return buf;
}

/* The snapshot-time ("2026-11-26T09:30:00Z") as seconds since the epoch:
 * 1, or 0 when there is none. */
static int snapshot_epoch(const char *z, time_t *out) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    char zulu = 0, extra = 0;
    if (!z || sscanf(z, "%4d-%2d-%2dT%2d:%2d:%2d%c%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                     &tm.tm_sec, &zulu, &extra) != 7 || zulu != 'Z')
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *out = timegm(&tm);
    return 1;
}

static void print_jobs(const forecast *f, int v, time_t snap, int has_snap) {
    const forecast_variant *x = &f->v[v];
    int shown = 0, waiting = 0, running = 0;
    char a[64], b[64], c[64], share[32];
    printf("  %-14s %-20s %-10s %5s  %-8s  %-22s %-22s %-22s %s\n", "job", "name", "user", "GPUs", "state",
           "start p10", "p50", "p90", "started");
    for (int i = 0; i < x->n_jobs; i++) {
        const forecast_job *j = &x->jobs[i];
        if (!strcmp(j->state, "running")) {
            running++;
            continue;
        }
        if (++waiting > TABLE_ROWS) continue;
        shown++;
        printf("  %-14.14s %-20.20s %-10.10s %5d  %-8s  %-22s %-22s %-22s %s\n", j->id, j->name,
               j->user[0] ? j->user : "-", j->gpus, j->state, when(forecast_start(f, v, i, 10), snap, has_snap, a, 64),
               when(forecast_start(f, v, i, 50), snap, has_snap, b, 64),
               when(forecast_start(f, v, i, 90), snap, has_snap, c, 64),
               nf_pct(forecast_started_share(f, v, i), share, sizeof share));
    }
    if (waiting > shown) printf("  ... and %d more (all in --json)\n", waiting - shown);
    if (running) printf("  (%d running at the snapshot)\n", running);
}

static void print_variant(const forecast *f, int v, time_t snap, int has_snap) {
    const forecast_variant *x = &f->v[v];
    char a[64], b[64], c[64], g[32];
    printf("\n%s (%s)\n", x->label, nf_qty(x->gpus, "GPU", "GPUs", g, sizeof g));
    print_jobs(f, v, snap, has_snap);
    printf("  queue of now drains: p10 %s | p50 %s | p90 %s\n", when(forecast_drain(f, v, 10), snap, has_snap, a, 64),
           when(forecast_drain(f, v, 50), snap, has_snap, b, 64), when(forecast_drain(f, v, 90), snap, has_snap, c, 64));
    printf("  GPU utilisation by day:");
    for (int k = 0; k < f->days; k++) printf(" %s%s", k ? "| " : "", nf_pct(forecast_util(f, v, k), a, sizeof a));
    printf("\n");
}

static void print_forecast(const forecast *f) {
    time_t snap = 0;
    const char *t = forecast_snapshot_time(f);
    int has_snap = snapshot_epoch(t, &snap);
    char h[32];
    printf("forecast %s: %d variant%s x %d replicas (seeds %llu..), each run to %s", f->sw.base->name,
           f->n_variants, f->n_variants == 1 ? "" : "s", f->replicas,
           (unsigned long long)f->v[0].seed0, nf_duration(f->horizon_s, h, sizeof h));
    if (has_snap) printf("; snapshot at %s (times: from now, then UTC)", t);
    printf("\n");
    for (int v = 0; v < f->n_variants; v++) print_variant(f, v, snap, has_snap);
}

/* ---- the command ------------------------------------------------------------------ */

static int write_json(const forecast *f, const char *path) {
    json *j = json_new();
    if (!j) return EXIT_RUN_FAILED;
    forecast_json(f, j);
    char err[1024];
    int rc = EXIT_OK;
    if (json_write_file(j, path, err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin forecast: %s\n", err);
        rc = EXIT_RUN_FAILED;
    }
    json_free(j);
    return rc;
}

int cmd_forecast(int argc, char **argv) {
    forecast_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    if (rc != CLI_GO) return rc;
    forecast f;
    rc = forecast_init(&f, a.file);
    f.replicas = (int)a.replicas;
    f.days = (int)a.days;
    f.horizon_s = a.horizon_s;
    f.has_seed = a.seed >= 0;
    f.seed = f.has_seed ? (uint64_t)a.seed : 0;
    for (int i = 0; i < a.set_l.n && rc == EXIT_OK; i++) rc = forecast_add_set(&f, a.sets[i]);
    for (int i = 0; i < a.vary_l.n && rc == EXIT_OK; i++) rc = forecast_add_vary(&f, a.vary[i]);
    if (rc == EXIT_OK) rc = forecast_prepare(&f);
    if (rc == EXIT_OK) rc = forecast_run(&f, (int)a.jobs);
    if (rc == EXIT_OK && a.json) rc = write_json(&f, a.json);
    if (rc == EXIT_OK && !a.quiet && !(a.json && !strcmp(a.json, "-"))) print_forecast(&f);
    forecast_free(&f);
    return rc;
}
