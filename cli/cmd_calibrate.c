/*
 * calibrate: fit the host model to the measurements in a results database
 * and write a hardware profile (models/calibrate.h, scenarios/profile.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "reports/fileout.h"
#include "models/calibrate.h"
#include "models/calibrate_gpu.h"
#include "reports/store.h"
#include "scenarios/catalog_xml.h"
#include "scenarios/infile.h"
#include "scenarios/profile.h"

static const char help[] =
    "usage: clustertwin calibrate --db PATH --out PROFILE.xml [--backend B] [--from PROFILE]\n"
    "                             [--from-json RESULTS.json] [--gpu NAME] [--all] [--name NAME]\n"
    "                             [--residuals] [--quiet]\n"
    "\n"
    "Fit the host model's named parameters (memcpy latency and bandwidths, GEMM efficiency,\n"
    "storage latency and bandwidths, per-collective alpha-beta) to the cpu and mpi\n"
    "measurements in the results database, and the GPU's (GEMM efficiency and half dimension\n"
    "per precision, HBM efficiency, copy latency, PCIe bandwidth and latency) to the cuda\n"
    "ones (GSL nonlinear least squares on log(predicted/measured)), and write a hardware\n"
    "profile that scenarios include (<host-profile href=\"PROFILE.xml\"/>) and 'validate\n"
    "--profile' and 'run --profile' use (docs/gpu-calibration.md). NCCL measurements are\n"
    "not fitted yet (counted in the report). Prints each fitted value with its standard error, the fit's\n"
    "residuals and, by default, the error on held-out sizes (every other size of each kind\n"
    "is kept out of the fit and predicted by it). A case measured in several runs (sessions)\n"
    "by its fastest repetition is fitted at the fastest run's figure.\n"
    "  --db PATH       results database with measurements (clustertwin measure, run --backend)\n"
    "  --out FILE      the profile to write (written whole or not at all)\n"
    "  --backend B     only measurements of backend B\n"
    "  --from FILE     start from this profile (its GEMM peaks are kept); default the\n"
    "                  built-in generic host\n"
    "  --from-json F   first import the results JSON F (validate --json on another\n"
    "                  machine) into the database as a run, then fit\n"
    "  --gpu NAME      the catalog GPU the cuda measurements were taken on (default: the\n"
    "                  one hardware.devices names, e.g. \"NVIDIA H200\" -> H200-SXM-141GB)\n"
    "  --all           fit every size (no held-out validation)\n"
    "  --name NAME     the profile's name (default twin-<host>)\n"
    "  --residuals     also print every point: group, fit or held out, predicted and\n"
    "                  measured time, error\n"
    "Exit status: 0 ok, 1 a fit failed, 2 bad input (no database, no measurements).\n";

/* Every point, grouped as fitted: the fit's residuals and the held-out errors. */
static void print_residuals(const cal_point *pts, const cal_residual *res, int n, const cal_report *rep) {
    printf("%-20s %-34s %-5s %12s %12s %9s\n", "group", "case", "", "predicted s", "measured s", "error");
    for (int g = 0; g < rep->n_groups; g++)
        for (int i = 0; i < n; i++) {
            const cal_residual *r = &res[i];
            int rd = r->read_group == g;
            if (r->group != g && !rd) continue;
            char label[96];
            mb_case_label(&pts[i].c, label, sizeof label);
            double p = rd ? r->read_predicted_s : r->predicted_s, m = rd ? r->read_measured_s : r->measured_s;
            printf("%-20s %-34s %-5s %12.4g %12.4g %+8.1f%%\n", rep->group[g].name, label, r->held ? "held" : "fit", p,
                   m, mb_error_pct(p, m));
        }
    printf("\n");
}

/* The measurements in the database as fit points (*pts, *n, or NULL
 * when there are none), with the host, the measured core peaks (the
 * latest run that has them) and how many are medians. */
typedef struct cal_input {
    cal_point *pts;
    int n, n_all;
    char host[128];
    char devices[256];           /* of the latest cuda run */
    double peak64, peak32;
    int medians, n_cuda;
} cal_input;

static int read_points(const char *db, const char *backend, cal_input *in) {
    char err[2048];
    store *st = NULL;
    int rc = store_open(db, STORE_READ, &st, err, sizeof err);
    if (rc != STORE_OK) {
        fprintf(stderr, "clustertwin calibrate: %s\n", err);
        return rc;
    }
    store_measurement *ms = NULL;
    int n = 0;
    rc = store_measurements(st, backend, &ms, &n, err, sizeof err);
    store_close(st);
    if (rc != STORE_OK) {
        fprintf(stderr, "clustertwin calibrate: %s\n", err);
        return rc;
    }
    in->pts = n > 0 ? calloc((size_t)n, sizeof *in->pts) : NULL;
    snprintf(in->host, sizeof in->host, "host");
    for (int i = 0; in->pts && i < n; i++) {
        in->medians += strcmp(ms[i].statistic, "min") != 0;
        in->pts[i].c = ms[i].c;
        in->pts[i].time_s = ms[i].time_s;
        in->pts[i].read_s = ms[i].read_s;
        snprintf(in->pts[i].backend, sizeof in->pts[i].backend, "%s", ms[i].backend);
        if (!strcmp(ms[i].backend, "cuda")) in->n_cuda++, snprintf(in->devices, sizeof in->devices, "%s", ms[i].devices);
        if (ms[i].host[0]) snprintf(in->host, sizeof in->host, "%s", ms[i].host);
        if (ms[i].peak_fp64_flops > 0 && ms[i].peak_fp32_flops > 0)
            in->peak64 = ms[i].peak_fp64_flops, in->peak32 = ms[i].peak_fp32_flops;
    }
    free(ms);
    /* The same case measured in several sessions, each by its fastest
     * repetition: the fastest session's figure. Medians are fitted as they
     * are (the median of medians would be the consistent reduction; a mix
     * of the two is fitted point by point and said). */
    in->n = in->n_all = n;
    if (in->pts && in->medians == 0) in->n = calibrate_best_of(in->pts, n);
    return EXIT_OK;
}

/* What the report says of the GPU groups' reference and of the points
 * left out. */
static void report_gpu(char *txt, size_t cap, size_t *len, const cal_target *t, const cal_report *rep) {
#define ADD(...) do { if (txt && *len < cap) *len += (size_t)snprintf(txt + *len, cap - *len, __VA_ARGS__); } while (0)
    if (t->has_gpu)
        ADD("GPU groups (gpu.*) against the catalog's %s: dense peaks %.4g / %.4g / %.4g / %.4g TFLOP/s fp32 / tf32 / "
            "bf16 / fp8, HBM %.4g TB/s\n", t->gpu.name, t->gpu.tflops[PREC_FP32], t->gpu.tflops[PREC_TF32],
            t->gpu.tflops[PREC_BF16], t->gpu.tflops[PREC_FP8], t->gpu.hbm_bw_bytes_per_s / 1e12);
    if (rep->left_nccl)
        ADD("%d NCCL measurements left out: the collective model's NCCL figures are not calibrated yet\n",
            rep->left_nccl);
    if (rep->left_no_gpu) ADD("%d GPU measurements left out: no catalog GPU to fit them to\n", rep->left_no_gpu);
    if (rep->left_other) ADD("%d measurements left out: no calibrated model of their backend prices them\n",
                             rep->left_other);
#undef ADD
}

/* The report: printed, and kept in the profile as a comment (malloc'd;
 * NULL when out of memory). *failed: a group's fit failed. */
static char *report_text(const cal_input *in, const char *db, int all, const char *from, int measured_peak,
                         const cal_target *t, const cal_report *rep, int *failed) {
    size_t cap = 16384, len = 0;
    char *txt = malloc(cap);
    const host_profile *h = &t->host;
    *failed = 0;
#define ADD(...) do { if (txt && len < cap) len += (size_t)snprintf(txt + len, cap - len, __VA_ARGS__); } while (0)
    ADD("clustertwin calibrate: %d measurements from %s, %s\n", in->n_all, db,
        all ? "every size fitted" : "every other size held out for validation");
    if (in->n < in->n_all)
        ADD("%d cases measured in several sessions: the fastest session's figure fitted (%d points)\n",
            in->n_all - in->n, in->n);
    if (in->medians > 0 && in->medians < in->n_all)
        ADD("warning: %d of %d measurements are medians and the rest fastest repetitions: fitted as they are "
            "(measure with one --statistic)\n", in->medians, in->n_all);
    ADD("GEMM efficiency (gemm.P.eff) against %s core peak: %.4g / %.4g GFLOP/s fp64 / fp32\n",
        measured_peak ? "the measured" : from ? "the --from profile's" : "a nominal (no measured peak in the database)",
        h->gemm_peak_flops[PREC_FP64] / 1e9, h->gemm_peak_flops[PREC_FP32] / 1e9);
    report_gpu(txt, cap, &len, t, rep);
    ADD("%-20s %5s %5s %10s %10s %12s %12s  %s\n", "group", "fit", "held", "fit rms", "fit max", "held median",
        "held max", "parameters (value +- stderr)");
    for (int g = 0; g < rep->n_groups; g++) {
        const cal_group *c = &rep->group[g];
        char hm[24] = "-", hx[24] = "-";
        if (!isnan(c->held_median_pct)) snprintf(hm, sizeof hm, "%.1f%%", c->held_median_pct);
        if (!isnan(c->held_max_pct)) snprintf(hx, sizeof hx, "%.1f%%", c->held_max_pct);
        ADD("%-20s %5d %5d %9.1f%% %9.1f%% %12s %12s ", c->name, c->n_fit, c->n_held, c->fit_rms_pct, c->fit_max_pct,
            hm, hx);
        for (int k = 0; k < c->n_params; k++) ADD(" %s=%.4g+-%.2g", c->param[k], c->value[k], c->stderr_[k]);
        if (c->note[0]) ADD("  (%s)", c->note);
        ADD("\n");
        *failed |= !c->ok;
    }
#undef ADD
    return txt;
}

/* The GPU's fitted parameters (those with a standard error, infinite when
 * exactly determined: the groups that were fitted) as the profile's
 * <gpu-profile>. */
static void gpu_part(const cal_target *t, const double *se, gpu_profile *g) {
    memset(g, 0, sizeof *g);
    if (!t->has_gpu) return;
    snprintf(g->gpu, sizeof g->gpu, "%s", t->gpu.name);
    const char *const *names = calibrate_param_names();
    cal_target c = *t;
    for (int i = 0; names[i]; i++) {
        double *v = gpu_param_known(names[i]) ? gpu_param(&c.gpu, &c.node, names[i]) : NULL;
        if (v && !isnan(se[i])) gpu_profile_set(g, names[i], *v, isfinite(se[i]) ? se[i] : NAN);
    }
}

/* The profile, written whole or not at all. A status (printed). */
static int write_profile(const char *out, const cal_target *t, const double *se, const char *txt) {
    char err[2048];
    gpu_profile g;
    gpu_part(t, se, &g);
    cli_mkdir_parent(out);
    fileout fo;
    int wrc = fileout_open(&fo, out, 0, 0666, err, sizeof err);
    if (wrc == 0 && profile_write(fo.f, &t->host, se, &g, txt, err, sizeof err) < 0) {
        if (ferror(fo.f)) snprintf(err, sizeof err, "%s: cannot write: %s", out, strerror(errno ? errno : EIO));
        fileout_abort(&fo);
        wrc = EXIT_RUN_FAILED;
    }
    if (wrc == 0 && fileout_close(&fo, err, sizeof err) != 0) wrc = EXIT_RUN_FAILED;
    if (wrc == 0) return EXIT_OK;
    fprintf(stderr, "clustertwin calibrate: %s\n", err);
    return wrc == EXIT_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
}

/* The profile's name and where it came from. */
static void name_profile(host_profile *h, const char *name, const char *host, const char *db, int n_all) {
    if (name) snprintf(h->name, sizeof h->name, "%s", name);
    else snprintf(h->name, sizeof h->name, "twin-%.50s", host);
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    snprintf(h->source, sizeof h->source, "calibrated %s from %.60s (%d measurements)", when, db, n_all);
}

/* --from-json F: the results JSON imported into db as a run (at most
 * 64 MiB: a measured run's JSON is tens of kB). A status. */
static int import_json(const char *db, const char *path) {
    char err[2048];
    char *text = NULL;
    size_t n = 0;
    if (infile_load(path, INFILE_CATALOG_MAX_BYTES, "a results JSON file", &text, &n, err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin calibrate: --from-json %s\n", err);
        return EXIT_BAD_INPUT;
    }
    store *st = NULL;
    cli_mkdir_parent(db);
    int rc = store_open(db, STORE_WRITE, &st, err, sizeof err);
    if (rc == STORE_OK) rc = store_import_results(st, text, path, NULL, err, sizeof err);
    if (rc != STORE_OK) fprintf(stderr, "clustertwin calibrate: %s\n", err);
    store_close(st);
    free(text);
    return rc;
}

/* The catalog GPU (and a node holding it) the cuda measurements were taken
 * on: --gpu, else the one their hardware.devices names. A status. */
static int choose_gpu(const cal_input *in, const char *gpu, cal_target *t) {
    char err[1024], name[64];
    catalog *cat = catalog_new();
    int rc = cat && catalog_load_builtin(cat, err, sizeof err) == 0 ? EXIT_OK : EXIT_RUN_FAILED;
    if (rc != EXIT_OK) fprintf(stderr, "clustertwin calibrate: %s\n", cat ? err : "out of memory");
    if (rc == EXIT_OK && gpu) snprintf(name, sizeof name, "%s", gpu);
    if (rc == EXIT_OK && !gpu && calibrate_gpu_of_device(cat, in->devices, name, sizeof name, err, sizeof err) < 0) {
        fprintf(stderr, "clustertwin calibrate: the cuda measurements' %s\n", err);
        rc = EXIT_BAD_INPUT;
    }
    const gpu_spec *g = rc == EXIT_OK ? catalog_gpu(cat, name) : NULL;
    if (rc == EXIT_OK && !g) {
        char known[2048];
        catalog_names(cat, "gpu", known, sizeof known);
        fprintf(stderr, "clustertwin calibrate: --gpu %s: no such catalog GPU (known: %s)\n", name, known);
        rc = EXIT_BAD_INPUT;
    }
    for (int i = 0; g && i < catalog_count(cat, "node"); i++) {
        const node_spec *nd = catalog_at(cat, "node", i);
        if (!strcmp(nd->gpu, name)) {
            t->node = *nd;
            break;
        }
    }
    if (g) t->gpu = *g, t->has_gpu = 1;
    catalog_free(cat);
    return rc;
}

/* Fit, report and write the profile. A status. */
static int fit_and_write(cal_input *in, cal_target *t, const char *db, const char *out, const char *name,
                         const char *from, int measured_peak, int all, int residuals, int quiet) {
    char err[2048];
    int np = 0;
    for (const char *const *z = calibrate_param_names(); *z; z++) np++;
    double *se = calloc((size_t)np, sizeof *se);
    cal_report rep;
    cal_residual *res = calloc((size_t)in->n, sizeof *res);
    int ng = se && res ? calibrate_fit(in->pts, in->n, !all, t, se, &rep, res, err, sizeof err) : -1;
    int rc = EXIT_OK;
    if (ng < 0) {
        fprintf(stderr, "clustertwin calibrate: %s: %s\n", db, se && res ? err : "out of memory");
        rc = se && res ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
    }
    if (rc == EXIT_OK && residuals && !quiet) print_residuals(in->pts, res, in->n, &rep);
    int failed = 0;
    char *txt = NULL;
    if (rc == EXIT_OK) {
        name_profile(&t->host, name, in->host, db, in->n_all);
        txt = report_text(in, db, all, from, measured_peak, t, &rep, &failed);
        rc = write_profile(out, t, se, txt);
    }
    if (rc == EXIT_OK && !quiet && txt) fputs(txt, stdout);
    if (rc == EXIT_OK && !quiet) printf("wrote %s (profile %s)\n", out, t->host.name);
    free(txt);
    free(se);
    free(res);
    return rc == EXIT_OK && failed ? EXIT_RUN_FAILED : rc;
}

int cmd_calibrate(int argc, char **argv) {
    const char *db = NULL, *out = NULL, *backend = NULL, *from = NULL, *name = NULL, *json = NULL, *gpu = NULL;
    int all = 0, quiet = 0, residuals = 0;
    const cli_option opts[] = {
        { "--db", NULL, CLI_VALUE, &db, "results database with measurements" },
        { "--out", NULL, CLI_VALUE, &out, "the profile to write" },
        { "--backend", NULL, CLI_VALUE, &backend, "only measurements of backend B" },
        { "--from", NULL, CLI_VALUE, &from, "start from this profile" },
        { "--from-json", NULL, CLI_VALUE, &json, "first import this results JSON into the database" },
        { "--gpu", NULL, CLI_VALUE, &gpu, "the catalog GPU the cuda measurements were taken on" },
        { "--name", NULL, CLI_VALUE, &name, "the profile's name" },
        { "--all", NULL, CLI_FLAG, &all, "fit every size (no held-out validation)" },
        { "--residuals", NULL, CLI_FLAG, &residuals, "also print every point" },
        { "--quiet", "-q", CLI_FLAG, &quiet, "print nothing" },
        { NULL },
    };
    cli_spec spec = { "calibrate", help, opts, CLI_NONE, NULL, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (!db) return cli_usage_error("calibrate", "missing --db PATH");
    if (!out) return cli_usage_error("calibrate", "missing --out PROFILE.xml");

    char err[2048];
    cal_target t;
    memset(&t, 0, sizeof t);
    host_profile_default(&t.host);
    if (from && profile_load(from, &t.host, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    if (json && (prc = import_json(db, json)) != EXIT_OK) return prc;
    cal_input in;
    memset(&in, 0, sizeof in);
    int rc = read_points(db, backend, &in);
    if (rc != EXIT_OK) return rc;
    /* GEMM efficiency against the core's measured peak, unless a --from
     * profile says what the peak is. */
    int measured_peak = !from && in.peak64 > 0;
    if (measured_peak) {
        t.host.gemm_peak_flops[PREC_FP64] = in.peak64;
        t.host.gemm_peak_flops[PREC_FP32] = in.peak32;
    }
    if (in.n == 0) {
        fprintf(stderr, "clustertwin calibrate: %s: no measurements%s%s (clustertwin measure --backend B --db %s)\n",
                db, backend ? " of backend " : "", backend ? backend : "", db);
        free(in.pts);
        return EXIT_BAD_INPUT;
    }
    if (!in.pts) {
        fprintf(stderr, "clustertwin calibrate: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    if (in.n_cuda > 0) rc = choose_gpu(&in, gpu, &t);
    if (rc == EXIT_OK) rc = fit_and_write(&in, &t, db, out, name, from, measured_peak, all, residuals, quiet);
    free(in.pts);
    return rc;
}
