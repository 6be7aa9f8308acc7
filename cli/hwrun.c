/*
 * hwrun: what run --backend, measure and validate share: open a hardware
 * backend, measure a world's microbenchmark cases on it, and write the
 * results (JSON, database) from rank 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "hw/backend.h"
#include "reports/results.h"
#include "reports/store.h"
#include "scenarios/profile.h"
#include "sim/metrics.h"

/* Environment knobs: CT_HW_REPS, CT_HW_BUDGET_S, CT_HW_WARMUP, CT_HW_ROUNDS
 * (rounds per case, default 3; the budget is per case, over all rounds). */
static void opts_from_env(hw_opts *o) {
    hw_opts_default(o);
    const char *z;
    if ((z = getenv("CT_HW_REPS")) && atoi(z) >= 3) o->reps = atoi(z);
    if ((z = getenv("CT_HW_BUDGET_S")) && atof(z) > 0) o->budget_s = atof(z);
    if ((z = getenv("CT_HW_WARMUP")) && atoi(z) >= 0) o->warmup = atoi(z);
}

int cli_check_statistic(const char *cmd, const char *statistic) {
    if (!statistic || hw_statistic_parse(statistic) >= 0) return EXIT_OK;
    return cli_usage_error(cmd, "--statistic %s: expected min (the fastest repetition) or median", statistic);
}

int cli_apply_profile(const char *cmd, scenario *s, const char *profile) {
    char err[2048], why[512];
    host_profile h;
    gpu_profile g;
    if (!profile) return EXIT_OK;
    if (profile_load_gpu(profile, &h, &g, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    if (profile_apply_gpu(s, &g, why, sizeof why) < 0) {
        fprintf(stderr, "clustertwin %s: %s:%d: %s\n", cmd, profile, g.line, why);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* cpu and mpi cases run on the host: a profile's host parameters price them. */
static int host_backend(const char *backend) { return !strcmp(backend, "cpu") || !strcmp(backend, "mpi"); }

int cli_hw_measure(const char *cmd, const char *backend, const char *profile, const char *statistic, world *w,
                   int verbose, int *rank) {
    char err[1024];
    *rank = 0;
    int stat = statistic ? hw_statistic_parse(statistic) : HW_STAT_MIN;
    if (stat < 0) {
        fprintf(stderr, "clustertwin %s: --statistic %s: expected min or median\n", cmd, statistic);
        return EXIT_BAD_INPUT;
    }
    host_profile hp;
    if (profile && host_backend(backend)) {
        if (profile_load(profile, &hp, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            return EXIT_BAD_INPUT;
        }
        benchset_use_host(world_benchset(w), &hp);
    } else if (host_backend(backend) && !benchset_host(world_benchset(w))) {
        host_profile_default(&hp);
        benchset_use_host(world_benchset(w), &hp);
    }
    hw_opts o;
    opts_from_env(&o);
    o.statistic = (hw_statistic)stat;
    /* Rounds: every case is measured once per round, the rounds one after
     * the other, so each case's repetitions are spread over the session. */
    const char *z = getenv("CT_HW_ROUNDS");
    int rounds = z && atoi(z) >= 1 && atoi(z) <= 64 ? atoi(z) : 3;
    o.budget_s /= rounds;                   /* the case's budget is shared by its rounds */
    hw_backend *b = NULL;
    if (hw_open(backend, &o, &b, err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin %s: backend %s unavailable: %s\n", cmd, backend, err);
        return EXIT_BAD_INPUT;
    }
    *rank = hw_rank(b);
    benchset_set_hardware(world_benchset(w), hw_environment(b));
    int failed = 0, n = benchset_count(world_benchset(w));
    if (n == 0 && *rank == 0)
        fprintf(stderr, "clustertwin %s: warning: the scenario has no <microbenchmarks>: nothing to measure\n", cmd);
    /* Our own ranks are not running yet (they wait in hw_open's MPI_Init
     * or here), so the load is other programs'. */
    double load = hw_load_per_core();
    if (n > 0 && *rank == 0 && load > 0.5)
        fprintf(stderr, "clustertwin %s: warning: this machine is busy (load average %.1f per core): the "
                        "measurements run beside other work and will be slower and vary more than on an idle "
                        "machine\n", cmd, load);
    mb_measurement *got = n ? calloc((size_t)n * (size_t)rounds, sizeof *got) : NULL;
    int *status = n ? calloc((size_t)n, sizeof *status) : NULL;
    if (n && (!got || !status)) {
        free(got);
        free(status);
        hw_close(b);
        fprintf(stderr, "clustertwin %s: out of memory\n", cmd);
        return EXIT_RUN_FAILED;
    }
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            if (status[i] != HW_OK) continue;          /* unsupported or failed in an earlier round */
            const mb_case *c = benchset_case(world_benchset(w), i);
            char why[200], note[240];
            double t0 = cli_wall_s();
            int rc = hw_measure(b, c, &got[(size_t)i * rounds + r], why, sizeof why);
            if (rc != HW_OK) {
                status[i] = rc;
                snprintf(note, sizeof note, "%s%s", rc == HW_FAILED ? "measurement failed: " : "not measured: ", why);
                benchset_set_measured(world_benchset(w), i, NULL, note);
                failed += rc == HW_FAILED;
            }
            if (verbose && *rank == 0)
                fprintf(stderr, "  round %d/%d [%d/%d] %s case %d: %s (%.2f s)\n", r + 1, rounds, i + 1, n, backend, i,
                        rc == HW_OK ? "measured" : rc == HW_FAILED ? "FAILED" : "skipped", cli_wall_s() - t0);
        }
    }
    for (int i = 0; i < n; i++) {
        if (status[i] != HW_OK) continue;
        mb_measurement m;
        hw_combine(&got[(size_t)i * rounds], rounds, benchset_case(world_benchset(w), i), o.statistic, &m);
        benchset_set_measured(world_benchset(w), i, &m, NULL);
    }
    free(got);
    free(status);
    hw_close(b);
    if (failed && *rank == 0) fprintf(stderr, "clustertwin %s: %d case(s) failed to measure\n", cmd, failed);
    return failed ? EXIT_RUN_FAILED : EXIT_OK;
}

int cli_hw_session(const char *cmd, scenario *s, const char *backend, const char *profile, const char *statistic,
                   const char *json_path, const char *db_path, int table, int verbose) {
    char err[2048];
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    store *st = NULL;
    int rc = EXIT_OK, rank = 0;
    if (!w) {
        fprintf(stderr, "%s\n", bus ? err : "out of memory");
        rc = bus ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
        goto out;
    }
    double t0 = cli_wall_s();
    rc = cli_hw_measure(cmd, backend, profile, statistic, w, verbose, &rank);
    if (rc == EXIT_BAD_INPUT || rank != 0) goto out;
    if (db_path) {
        int src = cli_store_begin(cmd, db_path, s, bus, &st);
        if (src != EXIT_OK) {
            rc = src;
            goto out;
        }
    }
    world_run(w, 0);
    if (cli_write_results(cmd, s, w, cli_wall_s() - t0, json_path, st) != EXIT_OK) rc = EXIT_RUN_FAILED;
    if (table && !(json_path && !strcmp(json_path, "-"))) {
        const mb_hardware *h = benchset_hardware(world_benchset(w));
        const host_profile *hp = benchset_host(world_benchset(w));
        if (h)
            printf("measured with %s on %s (%s; %s; %s); measured_s = the %s\n", h->backend, h->host, h->cpu,
                   h->devices, h->libraries, !strcmp(h->statistic, "median") ? "median" : "fastest repetition");
        if (hp) printf("predicted by host profile %s (%s)\n", hp->name, hp->source);
        else if (profile) printf("predicted by the GPU models with the GPU profile of %s\n", profile);
        results_microbench_table(stdout, w);
        if (st) printf("stored as run %lld in %s\n", (long long)store_run_id(st), store_path(st));
    }
out:
    store_close(st);
    world_free(w);
    metrics_free(bus);
    return rc;
}

void cli_mkdir_parent(const char *path) {
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        mkdir(p, 0777);
        *q = '/';
    }
}
