/*
 * results_summary: the human summary `clustertwin run` prints after a run,
 * read from the finished world (which it never changes).
 *
 * Every number goes through base/numfmt, so the terminal reads as the
 * reports do: "368,640 GPU-hours", "$1.1M", "729 g CO2", "1 node", "97.0%".
 * The JSON (reports/results.c) keeps full precision; nothing parses this.
 */
#include "reports/results_summary.h"

#include <string.h>

#include "base/numfmt.h"
#include "reports/results_microbench.h"

/* A formatted number: NF(nf_count, x) formats into a compound literal of
 * its own, which lives until the end of the enclosing block, so one
 * printf may hold several. */
#define NF_LEN 48
#define NF(fn, ...) fn(__VA_ARGS__, (char[NF_LEN]){ 0 }, NF_LEN)

/* A time that has not happened yet prints as "-". */
static const char *dur(double s, char *buf, size_t len) {
    if (s < 0) return "-";
    return nf_duration(s, buf, len);
}
#define DUR(s) dur((s), (char[NF_LEN]){ 0 }, NF_LEN)

/* The scenario, the simulated span, the cluster's use and its cost. */
static void cluster_summary(FILE *f, const scenario *s, const world_totals *t, double wall_s) {
    fprintf(f, "scenario %s (seed %llu): %s on %s\n", s->name, (unsigned long long)s->seed,
            NF(nf_qty, t->gpus, "GPU", "GPUs"), NF(nf_qty, t->nodes, "node", "nodes"));
    fprintf(f, "simulated %s in %s wall, %s\n", DUR(t->simulated_s), NF(nf_duration, wall_s),
            NF(nf_qty, (double)t->events, "event", "events"));
    fprintf(f, "cluster: GPU utilisation %s allocated, %s productive (work kept), %s GPU-hours, cost %s\n",
            NF(nf_pct, t->gpu_hours > 0 ? t->gpu_busy_s / 3600.0 / t->gpu_hours : 0),
            NF(nf_pct, t->gpu_hours > 0 ? t->gpu_productive_s / 3600.0 / t->gpu_hours : 0),
            NF(nf_count, t->gpu_hours), NF(nf_usd, t->cost_usd));
    const cost_result *c = &t->cost;
    char parts[256] = "";
    const struct { const char *name; double usd; } part[] = {
        { "compute", c->compute_usd }, { "storage", c->storage_usd },
        { "cloud burst", c->cloud_usd }, { "electricity", c->electricity_usd },
    };
    for (size_t i = 0, o = 0; i < sizeof part / sizeof part[0] && o < sizeof parts; i++)
        if (part[i].usd > 0)
            o += snprintf(parts + o, sizeof parts - o, "%s%s %s", o ? ", " : "", part[i].name,
                          NF(nf_usd, part[i].usd));
    fprintf(f, "cost and energy: %s at %s prices (%s), %s at PUE %.2g (%s average), %s CO2\n",
            NF(nf_usd, c->cost_usd), c->params.owned ? "owned" : "cloud", parts, NF(nf_energy_kwh, c->energy_kwh),
            c->params.pue, NF(nf_si, c->avg_power_w, "W"), NF(nf_mass_kg, c->co2_kg));
}

/* Where a training job's elapsed time went, and what it lost. */
static void training_time(FILE *f, const job_result *r, double simulated_s) {
    double el = (r->end_s >= 0 ? r->end_s : simulated_s) - r->start_s;
    const job_time *T = &r->time;
    if (el > 0)
        fprintf(f, "  time: %s training kept (ETTR), %s redone after failures, %s redone after "
                   "preemption, %s checkpoint stalls, %s detecting and restarting, %s waiting for nodes\n",
                NF(nf_pct, T->kept_s / el), NF(nf_pct, T->redone_failures_s / el),
                NF(nf_pct, T->redone_preemption_s / el), NF(nf_pct, T->checkpoint_stall_s / el),
                NF(nf_pct, T->restart_s / el), NF(nf_pct, T->waiting_s / el));
    fprintf(f, "  work lost and redone: %s after failures, %s after preemption\n", DUR(T->redone_failures_s),
            DUR(T->redone_preemption_s));
    fprintf(f, "  %s (%d more caught by health checks), %s, %s of %s every %s (%s to write)%s\n",
            NF(nf_qty, r->interruptions, "interruption", "interruptions"), r->planned_interruptions,
            NF(nf_qty, r->preemptions, "preemption", "preemptions"),
            NF(nf_qty, r->checkpoints, "checkpoint", "checkpoints"), NF(nf_si, r->checkpoint_size_bytes, "B"),
            r->checkpoint_interval_s > 0 ? DUR(r->checkpoint_interval_s) : "never",
            NF(nf_duration, r->checkpoint_write_s), r->shrinks ? ", shrank to fit the nodes left" : "");
}

/* One paragraph per training job: steps, speed, where the step goes,
 * where the time went, memory. */
static void training_summary(FILE *f, const job_result *r, double simulated_s) {
    const train_result *p = r->perf;
    fprintf(f, "\ntraining %s: %s, %s, %s/%s steps, start %s, end %s\n", r->name,
            NF(nf_qty, r->gpus, "GPU", "GPUs"), job_state_name(r->state), NF(nf_count, (double)r->steps_done),
            NF(nf_count, (double)r->steps_total), DUR(r->start_s), DUR(r->end_s));
    fprintf(f, "  step %s: model %s per GPU (MFU %s), hardware %s, %s tokens/s per GPU\n",
            NF(nf_duration, p->step_s), NF(nf_si, p->model_tflops_per_gpu * 1e12, "FLOP/s"), NF(nf_pct, p->mfu),
            NF(nf_si, p->hardware_tflops_per_gpu * 1e12, "FLOP/s"), NF(nf_count, p->tokens_per_s_per_gpu));
    double st = p->step_s > 0 ? p->step_s : 1;
    fprintf(f, "  step breakdown: compute %s, TP comm %s, pipeline bubble %s, DP/FSDP comm %s, optimizer %s, "
               "other %s\n",
            NF(nf_pct, p->t.compute_s / st), NF(nf_pct, p->t.tp_comm_s / st), NF(nf_pct, p->t.pp_bubble_s / st),
            NF(nf_pct, p->t.dp_comm_s / st), NF(nf_pct, p->t.optimizer_s / st), NF(nf_pct, p->t.other_s / st));
    if (r->start_s >= 0) training_time(f, r, simulated_s);
    fprintf(f, "  memory per GPU %s (weights %s, grads %s, optimizer %s, activations %s)\n",
            NF(nf_si, p->mem.total_bytes, "B"), NF(nf_si, p->mem.weights_bytes, "B"),
            NF(nf_si, p->mem.grads_bytes, "B"), NF(nf_si, p->mem.optimizer_bytes, "B"),
            NF(nf_si, p->mem.activations_bytes, "B"));
}

static void failures_summary(FILE *f, const world *w, const world_totals *t) {
    if (!t->failures) return;
    fprintf(f, "\nfailures: %s", NF(nf_count, t->failures));
    for (int i = 0; i < world_failure_kinds(w); i++) {
        const char *comp, *cause;
        int count;
        world_failure_kind(w, i, &comp, &cause, &count);
        if (count) fprintf(f, "%s %s %s", i ? "," : ":", cause, NF(nf_count, count));
    }
    fprintf(f, "\n");
    if (t->nodes_drained)
        fprintf(f, "  %s drained\n", NF(nf_qty, t->nodes_drained, "lemon node", "lemon nodes"));
}

static void queues_summary(FILE *f, const world *w, const world_totals *t) {
    fprintf(f, "\nqueues:\n");
    for (int i = 0; i < world_queue_count(w); i++) {
        queue_result q = world_queue(w, i);
        fprintf(f, "  %-12s %10s (%s waiting at the end), %s GPU-hours", q.name, NF(nf_qty, q.jobs, "job", "jobs"),
                NF(nf_count, q.waiting), NF(nf_count, q.gpu_hours));
        if (q.quota_gpus) fprintf(f, " = %s of its %d-GPU quota", NF(nf_pct, q.quota_share), q.quota_gpus);
        fprintf(f, "\n               wait mean %s, p95 %s, slowdown %s\n", DUR(q.mean_wait_s), DUR(q.p95_wait_s),
                NF(nf_count, q.slowdown));
    }
    if (t->fragmented_gpu_hours > 0)
        fprintf(f, "  fragmentation: %s of GPU-hours free but unusable by the queued jobs\n",
                NF(nf_pct, t->fragmented_gpu_hours / t->gpu_hours));
    if (t->cloud_node_hours > 0)
        fprintf(f, "  cloud: %s node-hours rented, %s\n", NF(nf_count, t->cloud_node_hours),
                NF(nf_usd, t->cloud_cost_usd));
}

/* A disaggregated service's pools and KV copies (one line; none when co-located). */
static void disagg_summary(FILE *f, const service_result *r) {
    if (!r->disaggregated) return;
    const service_pool_result *p = &r->pool[0], *d = &r->pool[1];
    fprintf(f, "  disaggregated: prefill %d x tp %d (%s busy), decode %d x tp %d (%s busy); KV copy p50 %s p99 %s, "
               "%s over NVLink, %s over the network\n",
            p->replicas, p->tp, NF(nf_pct, p->busy_fraction), d->replicas, d->tp, NF(nf_pct, d->busy_fraction),
            NF(nf_duration, r->kv_transfer_p50_s), NF(nf_duration, r->kv_transfer_p99_s),
            NF(nf_count, (double)r->kv_transfers_nvlink), NF(nf_count, (double)r->kv_transfers_network));
}

/* One line per class or multiplexed model: requests, latency tails, SLO
 * and SLO goodput (docs/serving-slo.md). */
static void part_summary(FILE *f, const char *kind, const service_part_result *p, int is_class) {
    char prio[32] = "";
    if (is_class) snprintf(prio, sizeof prio, " (priority %d)", p->priority);
    fprintf(f, "  %s %s%s: %s/%s requests; TTFT p99 %s, TPOT p99 %s, end-to-end p99 %s; SLO %s (%s at p%g), "
               "goodput %s requests/s\n", kind, p->name, prio, NF(nf_count, (double)p->requests), NF(nf_count, (double)p->submitted),
            NF(nf_duration, p->ttft_p99_s), NF(nf_duration, p->tpot_p99_s), NF(nf_duration, p->e2e_p99_s),
            NF(nf_pct, p->slo_attainment), p->slo_met ? "met" : "missed", p->slo.percentile,
            NF(nf_count, p->goodput_requests_per_s));
}

/* One paragraph per inference service. */
static void service_summary(FILE *f, const service_result *r) {
    fprintf(f, "\nservice %s: %s, %d x tp %d (peak %d, mean %s replicas), %s/%s requests\n", r->name, r->models,
            r->replicas, r->tp, r->replicas_peak, NF(nf_count, r->replicas_mean), NF(nf_count, (double)r->requests),
            NF(nf_count, (double)r->submitted));
    disagg_summary(f, r);
    fprintf(f, "  %s output tokens/s, %s requests/s; batch %s sequences, KV cache %s used (peak %s), %s\n",
            NF(nf_count, r->output_tokens_per_s), NF(nf_count, r->requests_per_s), NF(nf_count, r->batch_mean),
            NF(nf_pct, r->kv_utilization_mean), NF(nf_pct, r->kv_utilization_peak),
            NF(nf_qty, (double)r->preemptions, "preemption", "preemptions"));
    fprintf(f, "  TTFT p50 %s p99 %s; TPOT p50 %s p99 %s; end-to-end p99 %s; queue p99 %s\n",
            NF(nf_duration, r->ttft_p50_s), NF(nf_duration, r->ttft_p99_s), NF(nf_duration, r->tpot_p50_s),
            NF(nf_duration, r->tpot_p99_s), NF(nf_duration, r->e2e_p99_s), NF(nf_duration, r->queue_p99_s));
    fprintf(f, "  SLO attainment %s (%s), goodput %s requests/s; %s GPU-hours, %s, %s per million output tokens\n",
            NF(nf_pct, r->slo_attainment), r->slo_met ? "met" : "missed",
            NF(nf_count, r->requests_per_s * r->slo_attainment), NF(nf_count, r->gpu_hours),
            NF(nf_usd, r->cost_usd), NF(nf_usd, r->cost_per_million_tokens_usd));
    for (int k = 0; k < r->n_classes; k++) part_summary(f, "class", &r->classes[k], 1);
    for (int k = 0; k < r->n_by_model; k++) part_summary(f, "model", &r->by_model[k], 0);
    double held = r->gpu_hours * 3600;
    if (held > 0)
        fprintf(f, "  GPUs %s prefill, %s decode, %s loading, the rest idle; %s per GPU, %s, %s per output token\n",
                NF(nf_pct, r->gpu_prefill_s / held), NF(nf_pct, r->gpu_decode_s / held),
                NF(nf_pct, r->gpu_loading_s / held), NF(nf_si, r->avg_gpu_power_w, "W"),
                NF(nf_energy_kwh, r->energy_kwh), NF(nf_si, r->energy_per_output_token_j, "J"));
    if (r->scale_ups || r->scale_downs || r->scale_blocked || r->model_loads)
        fprintf(f, "  %s, %s, %d waited in the scheduler's queue; %s, %s\n",
                NF(nf_qty, r->scale_ups, "scale-up", "scale-ups"), NF(nf_qty, r->scale_downs, "scale-down", "scale-downs"),
                r->scale_blocked, NF(nf_qty, (double)r->model_loads, "model load", "model loads"),
                NF(nf_qty, (double)r->model_unloads, "unload", "unloads"));
    if (r->replica_losses)
        fprintf(f, "  %s lost their GPUs (failures, preemption); %s recomputed\n",
                NF(nf_qty, (double)r->replica_losses, "replica", "replicas"),
                NF(nf_qty, (double)r->requests_restarted, "sequence", "sequences"));
}

void results_summary(FILE *f, const scenario *s, const world *w, double wall_s) {
    world_totals t = world_get_totals(w);
    cluster_summary(f, s, &t, wall_s);
    int n = world_job_count(w), batch = 0, batch_done = 0;
    double wait = 0;
    for (int i = 0; i < n; i++) {
        job_result jr;
        const job_result *r = world_job(w, i, &jr);
        if (r->kind != JOB_BATCH) {
            training_summary(f, r, t.simulated_s);
            continue;
        }
        batch++;
        if (r->state == JOB_DONE) batch_done++;
        if (r->queue_wait_s >= 0) wait += r->queue_wait_s;
    }
    failures_summary(f, w, &t);
    if (world_queue_count(w) > 1 || batch) queues_summary(f, w, &t);
    if (batch)
        fprintf(f, "\nbatch jobs: %s/%s done, mean queue wait %s\n", NF(nf_count, batch_done), NF(nf_count, batch),
                DUR(wait / batch));
    for (int i = 0; i < world_service_count(w); i++) service_summary(f, world_service(w, i));
    results_microbench_table(f, w);
}
