/*
 * fit-failures: a failure profile fitted to a cluster's own history
 * (Slurm's node events and NODE_FAIL job ends, DCGM telemetry), by
 * component, with exact confidence intervals (models/failfit.h,
 * scenarios/failhist.h, docs/fit-failures.md).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/units.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "models/confidence.h"
#include "models/failfit.h"
#include "reports/fileout.h"
#include "reports/json.h"
#include "scenarios/dcgm.h"
#include "scenarios/failhist.h"
#include "scenarios/profile.h"

static const char help[] =
    "usage: clustertwin fit-failures --out PROFILE.xml [--sacct F | --sacct-text F] [--events F] [--sinfo F]\n"
    "                                [--dcgm F] [--dcgm-text F] [--nodes N] [--gpus-per-node G]\n"
    "                                [--nics-per-node K] [--window DURATION] [--merge-window DURATION]\n"
    "                                [--json PATH|-] [--quiet]\n"
    "\n"
    "Fit a failure profile to a cluster's own history: node down and drain events with\n"
    "their reasons, NODE_FAIL job ends and GPU telemetry (XIDs, double-bit ECC, row remap\n"
    "failures), each classified to a component (gpu, hbm, nic, switch, node, storage,\n"
    "software). One failure seen by several sources is counted once. Prints each component's\n"
    "MTBF per instance with its exact 95% confidence interval (Garwood, chi-square) and writes\n"
    "the <failures> a scenario takes (docs/fit-failures.md).\n"
    "  --sacct F           sacct --json (any data parser from v0.0.38): NODE_FAIL job ends\n"
    "  --sacct-text F      sacct -P -X -D --format=JobID,State,Start,End,NodeList\n"
    "  --events F          sacctmgr show event -P (NodeName, TimeStart, TimeEnd, Reason)\n"
    "  --sinfo F           sinfo --json (Slurm 22.05 to 25.05) or scontrol show nodes --json: nodes\n"
    "                      down or drained now, the node count and GPUs per node\n"
    "  --dcgm F            DCGM-exporter metrics as a Prometheus query_range answer (JSON)\n"
    "  --dcgm-text F       one scrape of DCGM-exporter in the text format (samples without\n"
    "                      a timestamp are taken at the end of the window)\n"
    "  --nodes N           nodes watched (default: the most of sinfo's count, the nodes named\n"
    "                      by the inputs, the telemetry's hosts)\n"
    "  --gpus-per-node G   default: sinfo's GRES, else the telemetry's GPU indices\n"
    "  --nics-per-node K   compute NICs per node (default: one per GPU)\n"
    "  --window DURATION   the observation window (default: the inputs' first to last time)\n"
    "  --merge-window D    events on one node closer than D are one failure (default 10min)\n"
    "  --out FILE          the <failures> profile to write (whole or not at all)\n"
    "  --json PATH         the fit as JSON ('-' = stdout)\n"
    "Exit status: 0 ok, 1 a file could not be written, 2 bad input.\n";

typedef struct fit_opts {
    const char *sacct, *sacct_text, *events, *sinfo, *dcgm, *dcgm_text, *nodes, *gpus, *nics, *window, *merge;
    const char *out, *json;
    int quiet;
} fit_opts;

/* The Slurm inputs into h. A status. */
static int read_slurm(const fit_opts *o, failhist *h) {
    char err[1024];
    int rc = 0;
    if (o->sacct) rc = failhist_read_sacct_json(h, o->sacct, err, sizeof err);
    if (rc == 0 && o->sacct_text) rc = failhist_read_sacct_text(h, o->sacct_text, err, sizeof err);
    if (rc == 0 && o->events) rc = failhist_read_events(h, o->events, err, sizeof err);
    if (rc == 0 && o->sinfo) rc = failhist_read_sinfo(h, o->sinfo, err, sizeof err);
    if (rc == 0) return EXIT_OK;
    fprintf(stderr, "%s\n", err);
    return EXIT_BAD_INPUT;
}

/* The telemetry into h, its fleet into *fl. A status. */
static int read_dcgm(const fit_opts *o, failhist *h, dcgm_fleet *fl) {
    char err[1024];
    dcgm_data d;
    memset(&d, 0, sizeof d);
    memset(fl, 0, sizeof *fl);
    double now = h->t_last_s > 0 ? h->t_last_s : (double)time(NULL);
    int rc = 0;
    if (o->dcgm) rc = dcgm_read_prom_json(&d, o->dcgm, err, sizeof err);
    if (rc == 0 && o->dcgm_text) rc = dcgm_read_text(&d, o->dcgm_text, now, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err);
        dcgm_free(&d);
        return EXIT_BAD_INPUT;
    }
    dcgm_event *ev = NULL;
    int n = dcgm_events(&d, &ev);
    int oom = n < 0 || dcgm_fleet_of(&d, fl) < 0 || failhist_add_dcgm(h, ev, n) < 0;
    if (d.n > 0 && !oom) h->t_first_s = h->t_first_s > 0 && h->t_first_s < fl->t_first_s ? h->t_first_s : fl->t_first_s;
    free(ev);
    dcgm_free(&d);
    if (oom) fprintf(stderr, "clustertwin fit-failures: out of memory\n");
    return oom ? EXIT_RUN_FAILED : EXIT_OK;
}

/* The fleet and window: the options, else what the inputs show. A status. */
static int fleet_of(const fit_opts *o, const failhist *h, const dcgm_fleet *fl, failfit_fleet *f) {
    long nodes = h->sinfo_nodes > h->n_nodes ? h->sinfo_nodes : h->n_nodes, gpus, nics;
    if (fl->hosts > nodes) nodes = fl->hosts;
    gpus = h->sinfo_gpus_per_node ? h->sinfo_gpus_per_node : fl->gpus_per_host;
    int rc = cli_parse_count("fit-failures", "--nodes", o->nodes, 1, 10000000, &nodes);
    if (rc == EXIT_OK) rc = cli_parse_count("fit-failures", "--gpus-per-node", o->gpus, 1, 1024, &gpus);
    nics = gpus;
    if (rc == EXIT_OK) rc = cli_parse_count("fit-failures", "--nics-per-node", o->nics, 0, 1024, &nics);
    if (rc != EXIT_OK) return rc;
    if (nodes < 1) return cli_usage_error("fit-failures", "no node named by the inputs; give --nodes N");
    if (gpus < 1) return cli_usage_error("fit-failures", "the inputs do not say how many GPUs a node has; give --gpus-per-node G");
    double window = h->t_last_s - h->t_first_s;
    char why[256];
    if (o->window && units_parse(o->window, UNIT_DURATION, &window, why, sizeof why) < 0)
        return cli_usage_error("fit-failures", "--window %s: %s", o->window, why);
    if (!(window > 0))
        return cli_usage_error("fit-failures", "the inputs span no time (one instant or none); give --window DURATION");
    double t_end = h->t_first_s > 0 ? h->t_first_s + window : 0;   /* the window runs from the first time read */
    *f = (failfit_fleet){ window, (int)nodes, (int)gpus, (int)nics, t_end };
    return EXIT_OK;
}

/* "1,234 h [567 h, 8,900 h]" style cells, in hours. */
static void hours(char *buf, size_t len, double s) {
    if (isinf(s)) snprintf(buf, len, "inf");
    else snprintf(buf, len, "%.4g h", s / 3600);
}

static void put_row(FILE *t, const char *name, const failfit_row *r, const failfit_fleet *f) {
    char m[32], lo[32], hi[32], mttr[32], cell[100];
    hours(m, sizeof m, r->r.mtbf_s), hours(lo, sizeof lo, r->r.mtbf_lo_s), hours(hi, sizeof hi, r->r.mtbf_hi_s);
    double per_node = r->instances / f->nodes, k = 1000 * 86400.0 * per_node;
    if (r->r.events > 0) units_format(r->mttr_s, UNIT_DURATION, mttr, sizeof mttr);
    else snprintf(mttr, sizeof mttr, "-");
    snprintf(cell, sizeof cell, "%s [%s, %s]", m, lo, hi);
    fprintf(t, "%-36.36s %9.0f %8.0f  %-38s %6.3g [%.3g, %.3g]  %s\n", name, r->instances, r->r.events, cell,
            r->r.rate_per_s * k, r->r.rate_lo_per_s * k, r->r.rate_hi_per_s * k, mttr);
}

/* Each component's Weibull fit of the time between one node's failures. */
static void put_weibull(FILE *t, const failfit_row *comp) {
    int any = 0;
    for (int c = 0; c < REL_COMPONENT_COUNT; c++) {
        const failfit_row *r = &comp[c];
        if (!r->has_wb) continue;
        char hi[32];
        snprintf(hi, sizeof hi, "%.3g", r->wb.shape_hi);
        fprintf(t, "%s time between failures: Weibull shape %.3g [%.3g, %s] (95%%, profile likelihood), scale %.4g h, "
                   "%d gaps + %d censored; exponential: LR %.3g, p %.3g%s\n",
                rel_component_name((rel_component)c), r->wb.shape, r->wb.shape_lo, isinf(r->wb.shape_hi) ? "inf" : hi,
                r->wb.scale / 3600, r->wb.complete, r->wb.censored, r->wb.lr, r->wb.p_exponential,
                r->weibull ? "; written as weibull" : "");
        any = 1;
    }
    if (!any)
        fprintf(t, "time between failures: no component has %d gaps between failures of one node; the profile is "
                   "exponential\n", FAILFIT_WEIBULL_MIN_GAPS);
}

/* The table: per component, then its causes. malloc'd (NULL: out of memory). */
static char *report_text(const failfit_fleet *f, const failfit_counts *k, const failfit_row *rows, int nr,
                         const failfit_row *comp) {
    char *txt = NULL, win[32];
    size_t len = 0;
    FILE *t = open_memstream(&txt, &len);
    if (!t) return NULL;
    units_format(f->window_s, UNIT_DURATION, win, sizeof win);
    fprintf(t, "fit-failures: %s of %d nodes (%d GPUs, %d NICs each); %d events -> %d failures (%d merged as one, "
               "%d planned, %d application faults, %d informational)\n",
            win, f->nodes, f->gpus_per_node, f->nics_per_node, k->events_in, k->failures, k->merged, k->planned,
            k->app, k->info);
    fprintf(t, "%-36s %9s %8s  %-38s %-25s %s\n", "component / cause", "instances", "failures",
            "MTBF per instance [95% CI]", "per 1000 node-days [CI]", "MTTR");
    for (int c = 0; c < REL_COMPONENT_COUNT; c++) {
        if (comp[c].instances <= 0) continue;
        put_row(t, rel_component_name((rel_component)c), &comp[c], f);
        for (int i = 0; i < nr; i++) {
            if (rows[i].component != c) continue;
            char name[64];
            snprintf(name, sizeof name, "  %s", rows[i].cause);
            put_row(t, name, &rows[i], f);
        }
    }
    put_weibull(t, comp);
    if (fclose(t) != 0) free(txt), txt = NULL;
    return txt;
}

static void json_rate(json *j, const failfit_row *r) {
    json_num(j, "instances", r->instances);
    json_num(j, "failures", r->r.events);
    json_num(j, "mtbf_s", r->r.mtbf_s);
    json_num(j, "mtbf_lo_s", r->r.mtbf_lo_s);
    json_num(j, "mtbf_hi_s", r->r.mtbf_hi_s);
    json_num(j, "mttr_s", r->r.events > 0 ? r->mttr_s : NAN);
}

/* A component's Weibull fit ("weibull": null without one). */
static void json_weibull(json *j, const failfit_row *r) {
    if (!r->has_wb) {
        json_null(j, "weibull");
        return;
    }
    json_object(j, "weibull");
    json_int(j, "gaps", r->wb.complete), json_int(j, "censored", r->wb.censored);
    json_num(j, "shape", r->wb.shape);
    json_num(j, "shape_lo", r->wb.shape_lo), json_num(j, "shape_hi", r->wb.shape_hi);
    json_num(j, "scale_s", r->wb.scale);
    json_num(j, "lr", r->wb.lr), json_num(j, "p_exponential", r->wb.p_exponential);
    json_bool(j, "written", r->weibull);
    json_end(j);
}

/* The fit as JSON to path. A status. */
static int write_json(const char *path, const failfit_fleet *f, const failfit_counts *k, const failfit_row *rows,
                      int nr, const failfit_row *comp) {
    json *j = json_new();
    json_object(j, NULL);
    json_num(j, "window_s", f->window_s);
    json_int(j, "nodes", f->nodes), json_int(j, "gpus_per_node", f->gpus_per_node);
    json_int(j, "nics_per_node", f->nics_per_node);
    json_num(j, "confidence_level", CONFIDENCE_LEVEL);
    json_int(j, "events", k->events_in), json_int(j, "failures", k->failures), json_int(j, "merged", k->merged);
    json_int(j, "planned", k->planned), json_int(j, "application", k->app), json_int(j, "informational", k->info);
    json_array(j, "components");
    for (int c = 0; c < REL_COMPONENT_COUNT; c++) {
        json_object(j, NULL);
        json_str(j, "component", rel_component_name((rel_component)c));
        json_rate(j, &comp[c]);
        json_weibull(j, &comp[c]);
        json_array(j, "causes");
        for (int i = 0; i < nr; i++)
            if (rows[i].component == c) {
                json_object(j, NULL);
                json_str(j, "cause", rows[i].cause);
                json_rate(j, &rows[i]);
                json_str(j, "distribution", rows[i].weibull ? "weibull" : "exponential");
                if (rows[i].weibull) json_num(j, "shape", rows[i].wb.shape);
                json_end(j);
            }
        json_end(j);
        json_end(j);
    }
    json_end(j);
    json_end(j);
    char err[1024];
    int rc = json_text(j, NULL) && json_write_file(j, path, err, sizeof err) == 0 ? EXIT_OK : EXIT_RUN_FAILED;
    if (rc != EXIT_OK) fprintf(stderr, "clustertwin fit-failures: %s\n", json_text(j, NULL) ? err : "out of memory");
    json_free(j);
    return rc;
}

/* The profile, written whole or not at all. A status. */
static int write_profile(const char *out, const failfit_row *rows, int nr, const char *txt) {
    char err[2048];
    cli_mkdir_parent(out);
    fileout fo;
    int wrc = fileout_open(&fo, out, 0, 0666, err, sizeof err);
    if (wrc == 0 && profile_write_failures(fo.f, rows, nr, txt, err, sizeof err) < 0) {
        fileout_abort(&fo);
        wrc = EXIT_RUN_FAILED;
    }
    if (wrc == 0 && fileout_close(&fo, err, sizeof err) != 0) wrc = EXIT_RUN_FAILED;
    if (wrc == 0) return EXIT_OK;
    fprintf(stderr, "clustertwin fit-failures: %s\n", err);
    return wrc == EXIT_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
}

/* Fit h over f, print, write. A status. */
static int fit_and_write(const fit_opts *o, failhist *h, const failfit_fleet *f, double merge_s) {
    failfit_row comp[REL_COMPONENT_COUNT], *rows = malloc(((size_t)h->n + 1) * sizeof *rows);
    failfit_counts k;
    int nr = rows ? failfit_fit(h->ev, h->n, f, merge_s, CONFIDENCE_LEVEL, rows, h->n + 1, comp, &k) : -1;
    char *txt = nr >= 0 ? report_text(f, &k, rows, nr, comp) : NULL;
    int rc = txt ? EXIT_OK : EXIT_RUN_FAILED;
    if (!txt) fprintf(stderr, "clustertwin fit-failures: out of memory\n");
    if (rc == EXIT_OK) rc = write_profile(o->out, rows, nr, txt);
    if (rc == EXIT_OK && o->json) rc = write_json(o->json, f, &k, rows, nr, comp);
    if (rc == EXIT_OK && !o->quiet && !(o->json && !strcmp(o->json, "-"))) printf("%swrote %s\n", txt, o->out);
    free(txt);
    free(rows);
    return rc;
}

int cmd_fit_failures(int argc, char **argv) {
    fit_opts o;
    memset(&o, 0, sizeof o);
    const cli_option opts[] = {
        { "--sacct", NULL, CLI_VALUE, &o.sacct, "sacct --json" },
        { "--sacct-text", NULL, CLI_VALUE, &o.sacct_text, "sacct -P text" },
        { "--events", NULL, CLI_VALUE, &o.events, "sacctmgr show event -P" },
        { "--sinfo", NULL, CLI_VALUE, &o.sinfo, "sinfo --json" },
        { "--dcgm", NULL, CLI_VALUE, &o.dcgm, "DCGM metrics, Prometheus query_range JSON" },
        { "--dcgm-text", NULL, CLI_VALUE, &o.dcgm_text, "DCGM metrics, text exposition format" },
        { "--nodes", NULL, CLI_VALUE, &o.nodes, "nodes watched" },
        { "--gpus-per-node", NULL, CLI_VALUE, &o.gpus, "GPUs per node" },
        { "--nics-per-node", NULL, CLI_VALUE, &o.nics, "compute NICs per node" },
        { "--window", NULL, CLI_VALUE, &o.window, "the observation window" },
        { "--merge-window", NULL, CLI_VALUE, &o.merge, "events closer than this on one node are one failure" },
        { "--out", NULL, CLI_VALUE, &o.out, "the failure profile to write" },
        { "--json", NULL, CLI_VALUE, &o.json, "the fit as JSON" },
        { "--quiet", "-q", CLI_FLAG, &o.quiet, "print nothing" },
        { NULL },
    };
    cli_spec spec = { "fit-failures", help, opts, CLI_NONE, NULL, NULL };
    int rc = cli_parse(&spec, argc, argv);
    if (rc != CLI_GO) return rc;
    if (!o.out) return cli_usage_error("fit-failures", "missing --out PROFILE.xml");
    if (!o.sacct && !o.sacct_text && !o.events && !o.sinfo && !o.dcgm && !o.dcgm_text)
        return cli_usage_error("fit-failures", "no history given (--sacct, --sacct-text, --events, --sinfo, --dcgm, "
                                               "--dcgm-text)");
    double merge_s = FAILFIT_SAME_FAILURE_S;
    char why[256];
    if (o.merge && units_parse(o.merge, UNIT_DURATION, &merge_s, why, sizeof why) < 0)
        return cli_usage_error("fit-failures", "--merge-window %s: %s", o.merge, why);
    failhist h;
    memset(&h, 0, sizeof h);
    dcgm_fleet fl;
    failfit_fleet f;
    rc = read_slurm(&o, &h);
    if (rc == EXIT_OK) rc = read_dcgm(&o, &h, &fl);
    if (rc == EXIT_OK) rc = fleet_of(&o, &h, &fl, &f);
    if (rc == EXIT_OK) rc = fit_and_write(&o, &h, &f, merge_s);
    failhist_free(&h);
    return rc;
}
