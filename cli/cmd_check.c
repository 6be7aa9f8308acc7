/*
 * check: validate a scenario (schema, units, references, whether each
 * training plan fits its GPUs) and print what it describes.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "scenarios/jobtrace.h"
#include "scenarios/scenario.h"
#include "base/units.h"
#include "sim/metrics.h"
#include "sim/world.h"

static const char help[] =
    "usage: clustertwin check FILE\n"
    "\n"
    "Validate the scenario in FILE and print a summary: nodes and GPUs by type,\n"
    "network, storage, failures, jobs, services and microbenchmarks. Training plans\n"
    "are evaluated, so a plan that does not fit in GPU memory fails the check.\n"
    "Exit status: 0 valid, 2 not valid (the error names file, line and element).\n";

int cmd_check(int argc, char **argv) {
    const char *file = NULL;
    const cli_option opts[] = { { NULL } };
    cli_spec spec = { "check", help, opts, CLI_ONE_FILE_SHORT, &file, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (!file) return cli_usage_error("check", "missing scenario FILE");

    char err[2048], a[64], b[64];
    scenario *s = NULL;
    if (scenario_load(file, &s, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    fputs(s->warnings, stderr);
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        fprintf(stderr, "%s\n", bus ? err : "out of memory");
        metrics_free(bus);
        scenario_free(s);
        return EXIT_BAD_INPUT;
    }

    printf("%s: valid scenario '%s', seed %llu", file, s->name, (unsigned long long)s->seed);
    if (s->duration_s > 0) printf(", duration %s", units_format(s->duration_s, UNIT_DURATION, a, sizeof a));
    printf("\ncluster: %d nodes, %d GPUs\n", scenario_node_count(s), scenario_gpus(s));
    for (int i = 0; i < s->n_nodes; i++) {
        const node_spec *n = scenario_node_spec(s, i);
        const nic_spec *nic = catalog_nic(s->cat, n->nic);
        printf("  %d x %s: %d x %s each, %d x %s NICs (%s)\n", s->nodes[i].count, n->name, n->gpus,
               n->gpu, n->nics, n->nic, nic ? units_format(nic->bw_bytes_per_s, UNIT_BANDWIDTH, a, sizeof a) : "?");
    }
    static const char *topo[] = { "fat-tree", "rail-optimized", "single-switch" };
    printf("  network: %s, oversubscription %g:1, %s NIC access\n", topo[s->network.topology],
           s->network.oversubscription, s->network.nic_mode == NIC_OVERLAY ? "overlay" : "direct");
    for (int i = 0; i < s->n_storage; i++) {
        const storage_spec *st = catalog_storage(s->cat, s->storage[i].kind);
        double bw = s->storage[i].bw_bytes_per_s > 0 ? s->storage[i].bw_bytes_per_s : st->bw_bytes_per_s;
        printf("  storage %s: %s, %s\n", s->storage[i].name, s->storage[i].kind,
               units_format(bw, UNIT_BANDWIDTH, a, sizeof a));
    }
    if (s->spares_warm) printf("  warm spares: %d nodes\n", s->spares_warm);
    if (s->has_cloud) printf("  cloud: up to %d x %s, provisioned in %s\n", s->cloud_max_nodes,
                             s->cloud_node_type, units_format(s->cloud_provision_s, UNIT_DURATION, a, sizeof a));
    for (int i = 0; i < s->n_failures; i++) {
        const sc_failure *f = &s->failures[i];
        if (f->profile[0]) printf("failures: profile %s\n", f->profile);
        else printf("failures: %s mtbf %.6g h (%s%s)\n", f->component,
                    f->mtbf_s / 3600, f->distribution,
                    strcmp(f->distribution, "weibull") ? "" : ", shaped");
    }
    for (int i = 0; i < s->n_queues; i++)
        printf("queue %s: quota %d GPUs\n", s->queues[i].name, s->queues[i].quota_gpus);
    for (int i = 0; i < world_job_count(w); i++) {
        job_result jr;
        const job_result *r = world_job(w, i, &jr);
        if (r->kind != JOB_TRAINING) continue;
        if (i == 20) {
            printf("... and %d more training jobs\n", s->n_training - 20);
            break;
        }
        const sc_training *t = &s->training[i];
        printf("training %s: %d GPUs (tp %d, pp %d, dp %d, cp %d, %s), %s, %lld steps of %d x %d tokens\n",
               t->name, t->gpus, t->plan.tp, t->plan.pp, t->plan.dp, t->plan.cp, sharding_name(t->plan.sharding),
               t->preset[0] ? t->preset : "custom model", (long long)t->steps, t->plan.global_batch, t->plan.seq_len);
        printf("  fits: %.1f GB per GPU; step %.3f s, MFU %.1f%%, runs %s\n", r->perf->mem.total_bytes / 1e9,
               r->perf->step_s, 100 * r->perf->mfu,
               units_format(r->perf->step_s * (double)t->steps, UNIT_DURATION, b, sizeof b));
        /* What the model chose where the scenario left it open (README: <training>). */
        int v = r->perf->virtual_stages;
        printf("  micro-batch %d%s (%d per step per pipeline), pipeline schedule %s%s\n", r->perf->micro_batch,
               t->plan.micro_batch > 0 ? "" : " (chosen: the fastest that fits)", r->perf->micro_batches,
               v > 1 ? "interleaved" : "1f1b", t->plan.pp == 1 ? "" : t->plan.virtual_stages > 0 ? "" : " (chosen)");
        if (v > 1) printf("  virtual stages %d\n", v);
    }
    if (s->trace_href[0]) printf("trace %s: %d batch jobs\n", s->trace_href, s->n_trace_jobs);
    if (jobtrace_reported(s)) {         /* a public format: what was read and skipped */
        char said[512];
        jobtrace_describe(s, said, sizeof said);
        printf("  %s\n", said);
    }
    for (int i = 0; i < s->n_jobs; i++)
        printf("jobs %s: %d jobs of %d GPUs, %s arrivals, %s %s each\n", s->jobs[i].name, s->jobs[i].count,
               s->jobs[i].gpus, s->jobs[i].arrivals, s->jobs[i].duration_distribution,
               units_format(s->jobs[i].duration_s, UNIT_DURATION, a, sizeof a));
    for (int i = 0; i < s->n_inference; i++)
        printf("service %s: %s %s, tp %d x %d replicas, max batch %d\n", s->inference[i].name,
               s->inference[i].model, precision_name(s->inference[i].precision), s->inference[i].tp,
               s->inference[i].replicas, s->inference[i].max_batch);
    if (s->n_microbench) printf("microbenchmarks: %d cases\n", s->n_microbench);
    world_free(w);
    metrics_free(bus);
    scenario_free(s);
    return EXIT_OK;
}
