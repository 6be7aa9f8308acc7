/*
 * outputs: where a simulated run's results go, shared by `run` and `dash`
 * (the dashboard's `q` writes exactly what `run` writes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "reports/json.h"
#include "reports/results.h"
#include "reports/store.h"
#include "scenarios/scenario.h"
#include "base/units.h"
#include "sim/metrics.h"
#include "sim/world.h"

int cli_parse_seed(const char *cmd, const char *z, double *seed) {
    char why[128];
    *seed = -1;
    if (z && (units_parse(z, UNIT_NUMBER, seed, why, sizeof why) < 0 || *seed < 0 ||
              *seed != (double)(unsigned long long)*seed))
        return cli_usage_error(cmd, "--seed %s: expected a whole number >= 0", z);
    return EXIT_OK;
}

int cli_world_build(const char *file, double seed, const char *profile, scenario **s, metric_bus **bus, world **w) {
    char err[2048];
    *bus = NULL;
    *w = NULL;
    if (scenario_load(file, s, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    fputs((*s)->warnings, stderr);
    if (cli_apply_profile("run", *s, profile) != EXIT_OK) return EXIT_BAD_INPUT;
    if (seed >= 0) (*s)->seed = (unsigned long long)seed;
    *bus = metrics_new();
    *w = *bus ? world_new(*s, *bus, err, sizeof err) : NULL;
    if (*w) return EXIT_OK;
    fprintf(stderr, "%s\n", *bus ? err : "out of memory");
    return *bus ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
}

int cli_parse_count(const char *cmd, const char *opt, const char *z, long lo, long hi, long *out) {
    if (!z) return EXIT_OK;
    char *end;
    errno = 0;
    long v = strtol(z, &end, 10);
    if (end == z || *end || errno || v < lo || v > hi)
        return cli_usage_error(cmd, "%s %s: expected a whole number from %ld to %ld", opt, z, lo, hi);
    *out = v;
    return EXIT_OK;
}

void cli_default_db(const char *name, const char *suffix, char *buf, size_t len) {
    snprintf(buf, len, "out/%s%s.db", name, suffix);
    for (char *p = buf + 4; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            *p = '_';
}

int cli_store_begin(const char *cmd, const char *db_path, const scenario *s, metric_bus *bus, store **st) {
    char err[2048], default_db[SC_NAME_MAX + 16];
    *st = NULL;
    int given = db_path != NULL;
    if (!given) {
        cli_default_db(s->name, "", default_db, sizeof default_db);
        mkdir("out", 0777);
        db_path = default_db;
    }
    int src = store_open(db_path, STORE_WRITE, st, err, sizeof err);
    if (src == STORE_OK) src = store_run_begin(*st, s, bus, err, sizeof err);
    if (src == STORE_OK) return EXIT_OK;
    store_close(*st);
    *st = NULL;
    if (given) {
        fprintf(stderr, "clustertwin %s: %s\n", cmd, err);
        return src == STORE_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
    }
    fprintf(stderr, "clustertwin %s: warning: results not stored: %s (--db PATH or --no-db)\n", cmd, err);
    return EXIT_OK;
}

int cli_write_results(const char *cmd, const scenario *s, const world *w, double wall_s, const char *json_path,
                      store *st) {
    if (!json_path && !st) return EXIT_OK;
    char err[2048];
    int rc = EXIT_OK;
    json *j = json_new();
    if (j && st) store_run_watch(st, j);   /* the store writes the jobs while the rest is built */
    if (j) results_json(j, s, w, wall_s);
    if (json_path && (!j || json_write_file(j, json_path, err, sizeof err) < 0)) {
        fprintf(stderr, "clustertwin %s: %s\n", cmd, j ? err : "out of memory");
        rc = EXIT_RUN_FAILED;
    }
    if (st && store_run_finish(st, w, j ? json_text(j, NULL) : NULL, err, sizeof err) != STORE_OK) {
        fprintf(stderr, "clustertwin %s: %s\n", cmd, err);
        rc = EXIT_RUN_FAILED;
    }
    json_free(j);
    return rc;
}
