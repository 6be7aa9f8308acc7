/*
 * results: the contract's JSON view of a finished run (CONTRACT.md). The
 * terminal's views are results_summary and results_microbench.
 */
#include "reports/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "scenarios/jobtrace.h"

/* The results say "not yet" (a time not reached) and "not measured" (a latency
 * with no request behind it) with a negative number; JSON says both with null. */
static void num_or_null(json *j, const char *key, double v) {
    if (v < 0) json_null(j, key);
    else json_num(j, key, v);
}

/* A NAN (a statistic with too few jobs behind it) is null. */
static void num_or_nan(json *j, const char *key, double v) {
    if (isnan(v)) json_null(j, key);
    else json_num(j, key, v);
}

/* A trace job's fields from a live cluster's snapshot (docs/cluster-state.md),
 * each only when the trace has its column. */
static void snapshot_json(json *j, const scenario *s, const sc_trace_job *t) {
    static const char *const states[] = { "pending", "running", "held" };
    unsigned c = s->trace_columns;
    if (c & SC_TCOL_ID) json_str(j, "id", t->id != SC_NO_TEXT ? scenario_trace_text(s, t->id) : "");
    if (c & SC_TCOL_USER) json_str(j, "user", t->user != SC_NO_TEXT ? scenario_trace_text(s, t->user) : "");
    if (c & SC_TCOL_ACCOUNT) json_str(j, "account", t->account != SC_NO_TEXT ? scenario_trace_text(s, t->account) : "");
    if (c & SC_TCOL_STATE) json_str(j, "state_at_snapshot", states[t->state]);
    if (c & SC_TCOL_ACTUAL_START) num_or_nan(j, "actual_start_s", t->actual_start_s);
}

static void job_json(json *j, const scenario *s, const job_result *r, double sim_end, double gpu_hours,
                     double cost_usd) {
    const sc_trace_job *t = r->trace_row >= 0 ? &s->trace_jobs[r->trace_row] : NULL;
    json_object(j, NULL);
    json_str(j, "name", r->name);
    if (t) snapshot_json(j, s, t);
    json_str(j, "kind", job_kind_name(r->kind));
    json_int(j, "gpus", r->gpus);
    json_str(j, "queue", r->queue);
    json_str(j, "state", job_state_name(r->state));
    json_int(j, "preemptions", r->preemptions);
    json_num(j, "submit_s", r->submit_s);
    if (t && t->state == SC_JOB_RUNNING) json_num(j, "start_s", r->start_s);   /* -elapsed: it ran before t = 0 */
    else num_or_null(j, "start_s", r->start_s);
    num_or_null(j, "end_s", r->end_s);
    num_or_null(j, "queue_wait_s", r->queue_wait_s);
    json_num(j, "gpu_hours", gpu_hours);       /* its own, and their price: not the cluster's */
    json_num(j, "cost_usd", cost_usd);
    if (r->kind == JOB_TRAINING) {
        const train_result *p = r->perf;
        json_num(j, "step_time_s", p->step_s);
        json_int(j, "steps_total", (long long)r->steps_total);
        json_int(j, "steps_done", (long long)r->steps_done);
        json_num(j, "tokens_done", r->tokens_done);
        json_num(j, "model_tflops_per_gpu", p->model_tflops_per_gpu);
        json_num(j, "hardware_tflops_per_gpu", p->hardware_tflops_per_gpu);
        json_num(j, "mfu", p->mfu);
        json_num(j, "tokens_per_s_per_gpu", p->tokens_per_s_per_gpu);
        json_num(j, "params", p->params);
        json_num(j, "total_params", p->params);
        json_num(j, "active_params", p->active_params);    /* model FLOPs count these (6 per token) */
        json_int(j, "ep", p->ep);
        json_int(j, "micro_batches", p->micro_batches);
        json_int(j, "micro_batch", p->micro_batch);                 /* as chosen when not given */
        json_str(j, "pipeline_schedule", pp_schedule_name(p->schedule));
        json_int(j, "virtual_stages", p->virtual_stages);
        json_str(j, "stack", p->stack);                             /* as auto chose when not given */
        json_object(j, "breakdown");
        json_num(j, "compute_s", p->t.compute_s);
        json_num(j, "tp_comm_s", p->t.tp_comm_s);
        json_num(j, "pp_bubble_s", p->t.pp_bubble_s);
        json_num(j, "dp_comm_s", p->t.dp_comm_s);
        json_num(j, "optimizer_s", p->t.optimizer_s);
        json_num(j, "other_s", p->t.other_s);
        json_num(j, "ep_comm_s", p->t.ep_comm_s);
        json_end(j);
        double elapsed = (r->end_s >= 0 ? r->end_s : sim_end) - r->start_s;
        json_int(j, "interruptions", r->interruptions);
        json_int(j, "planned_interruptions", r->planned_interruptions);
        json_num(j, "lost_work_s", r->time.redone_s);
        json_num(j, "lost_work_after_failures_s", r->time.redone_failures_s);
        json_num(j, "lost_work_after_preemption_s", r->time.redone_preemption_s);
        json_num(j, "checkpoint_size_bytes", r->checkpoint_size_bytes);
        json_num(j, "checkpoint_write_s", r->checkpoint_write_s);
        json_num(j, "checkpoint_stall_s", r->time.checkpoint_stall_s);
        json_num(j, "checkpoint_interval_s", r->checkpoint_interval_s);
        json_int(j, "checkpoints", r->checkpoints);
        json_int(j, "shrinks", r->shrinks);
        json_int(j, "grows", r->grows);
        json_int(j, "leaf_groups", r->leaf_groups);
        if (r->start_s >= 0 && elapsed > 0) json_num(j, "ettr", r->time.kept_s / elapsed);
        else json_null(j, "ettr");
        json_object(j, "time");
        json_num(j, "elapsed_s", r->start_s >= 0 ? elapsed : 0);
        json_num(j, "training_kept_s", r->time.kept_s);
        json_num(j, "redone_s", r->time.redone_s);
        json_num(j, "redone_after_failures_s", r->time.redone_failures_s);
        json_num(j, "redone_after_preemption_s", r->time.redone_preemption_s);
        json_num(j, "checkpoint_stall_s", r->time.checkpoint_stall_s);
        json_num(j, "restart_s", r->time.restart_s);
        json_num(j, "waiting_for_nodes_s", r->time.waiting_s);
        json_end(j);
        json_object(j, "memory_per_gpu");
        json_num(j, "weights_bytes", p->mem.weights_bytes);
        json_num(j, "grads_bytes", p->mem.grads_bytes);
        json_num(j, "optimizer_bytes", p->mem.optimizer_bytes);
        json_num(j, "activations_bytes", p->mem.activations_bytes);
        json_num(j, "other_bytes", p->mem.other_bytes);
        json_num(j, "total_bytes", p->mem.total_bytes);
        json_end(j);
    }
    json_end(j);
}

/* One case: predicted figures, and measured ones as null until a hardware
 * backend fills them (CONTRACT.md). */
static void microbench_json(json *j, const mb_case *c, const mb_prediction *p, const mb_measurement *m,
                            const char *note) {
    static const char *ops[] = { "collective", "gemm", "copy", "storage-write" };
    json_object(j, NULL);
    json_str(j, "op", c->kind == MBC_COLLECTIVE ? coll_op_name(c->op) : ops[c->kind]);
    const char *rate = c->kind == MBC_GEMM ? "tflops" : c->kind == MBC_COLLECTIVE ? "busbw_GBps" : "GBps";
    char pk[40], mk[40];
    snprintf(pk, sizeof pk, "predicted_%s", rate);
    snprintf(mk, sizeof mk, "measured_%s", rate);
    switch (c->kind) {
    case MBC_COLLECTIVE:
        json_int(j, "ranks", c->ranks);
        json_num(j, "size_bytes", c->size_bytes);
        break;
    case MBC_GEMM:
        json_int(j, "m", c->m);
        json_int(j, "n", c->n);
        json_int(j, "k", c->k);
        json_str(j, "precision", precision_name(c->precision));
        break;
    case MBC_COPY:
        json_str(j, "kind", copy_kind_name(c->copy));
        json_num(j, "size_bytes", c->size_bytes);
        break;
    case MBC_STORAGE:
        json_num(j, "size_bytes", c->size_bytes);
        json_int(j, "files", c->files);
        break;
    }
    if (p) {
        json_num(j, "predicted_s", p->time_s);
        if (c->kind == MBC_GEMM) json_num(j, pk, p->tflops);
        else if (c->kind == MBC_COLLECTIVE) json_num(j, pk, p->busbw_bytes_per_s / 1e9);
        else json_num(j, pk, p->algbw_bytes_per_s / 1e9);
        if (c->kind == MBC_COLLECTIVE) json_num(j, "predicted_algbw_GBps", p->algbw_bytes_per_s / 1e9);
        json_str(j, "model", p->detail ? p->detail : "");
        if (c->kind == MBC_COLLECTIVE && p->algo != COLL_AUTO) {   /* AUTO: a host profile priced it */
            json_str(j, "algorithm", coll_algo_name(p->algo));
            json_str(j, "protocol", coll_proto_name(p->proto));
            json_bool(j, "algorithm_fallback", p->fallback);
        }
    } else {
        json_null(j, "predicted_s");
        json_null(j, pk);
    }
    if (m) {
        json_num(j, "measured_s", m->time_s);
        if (c->kind == MBC_GEMM) json_num(j, mk, m->tflops);
        else if (c->kind == MBC_COLLECTIVE) json_num(j, mk, m->busbw_bytes_per_s / 1e9);
        else json_num(j, mk, m->algbw_bytes_per_s / 1e9);
        if (p && m->time_s > 0) json_num(j, "error_pct", mb_error_pct(p->time_s, m->time_s));
        else json_null(j, "error_pct");
        if (c->kind == MBC_COLLECTIVE) json_num(j, "measured_algbw_GBps", m->algbw_bytes_per_s / 1e9);
        json_num(j, "measured_min_s", m->min_s);
        json_num(j, "measured_median_s", m->median_s);
        json_num(j, "measured_q1_s", m->q1_s);
        json_num(j, "measured_q3_s", m->q3_s);
        json_num(j, "measured_max_s", m->max_s);
        json_int(j, "warmup", m->warmup);
        json_int(j, "reps", m->reps);
        json_int(j, "iters", m->iters);
        if (c->kind == MBC_STORAGE && m->read_s > 0) {
            json_num(j, "measured_read_s", m->read_s);
            json_num(j, "measured_read_GBps", c->size_bytes / m->read_s / 1e9);
        }
    } else {
        json_null(j, "measured_s");
        json_null(j, mk);
        json_null(j, "error_pct");
    }
    if (note && *note) json_str(j, "note", note);
    json_end(j);
}

/* Where the measurements were taken. */
static void hardware_json(json *j, const world *w) {
    const mb_hardware *h = benchset_hardware(world_benchset(w));
    const host_profile *hp = benchset_host(world_benchset(w));
    if (!h && !hp) return;
    json_object(j, "hardware");
    if (h) {
        json_str(j, "backend", h->backend);
        json_str(j, "host", h->host);
        json_str(j, "cpu", h->cpu);
        json_str(j, "devices", h->devices);
        json_str(j, "libraries", h->libraries);
        json_int(j, "ranks", h->ranks);
        json_str(j, "statistic", h->statistic[0] ? h->statistic : "min");
        if (h->peak_fp64_flops > 0) json_num(j, "peak_fp64_flops", h->peak_fp64_flops);
        if (h->peak_fp32_flops > 0) json_num(j, "peak_fp32_flops", h->peak_fp32_flops);
        if (h->gemm_operands[0]) json_str(j, "gemm_operands", h->gemm_operands);
    }
    if (hp) {
        json_str(j, "profile", hp->name);
        json_str(j, "profile_source", hp->source);
    }
    json_end(j);
}

/* Failure counts grouped by component (by = 0) or cause (by = 1), in the
 * order kinds were declared; kinds sharing a name are summed. */
static void failures_by(json *j, const world *w, int by) {
    int n = world_failure_kinds(w);
    for (int i = 0; i < n; i++) {
        const char *comp, *cause, *key;
        int count, dup = 0, sum = 0;
        world_failure_kind(w, i, &comp, &cause, &count);
        key = by ? cause : comp;
        for (int k = 0; k < i && !dup; k++) {
            const char *c2, *z2;
            int n2;
            world_failure_kind(w, k, &c2, &z2, &n2);
            dup = !strcmp(by ? z2 : c2, key);
        }
        if (dup) continue;
        for (int k = i; k < n; k++) {
            const char *c2, *z2;
            int n2;
            world_failure_kind(w, k, &c2, &z2, &n2);
            if (!strcmp(by ? z2 : c2, key)) sum += n2;
        }
        json_int(j, key, sum);
    }
}

/* The cost model's parts and the parameters it used (models/cost.h). */
static void cost_json(json *j, const cost_result *c) {
    json_object(j, "cost");
    json_bool(j, "owned", c->params.owned);
    json_num(j, "compute_usd", c->compute_usd);
    json_num(j, "storage_usd", c->storage_usd);
    json_num(j, "cloud_usd", c->cloud_usd);
    json_num(j, "electricity_usd", c->electricity_usd);
    json_num(j, "cloud_gpu_hours", c->cloud_gpu_hours);
    json_num(j, "storage_tb_months", c->storage_tb_months);
    json_num(j, "gpu_kwh", c->gpu_kwh);
    json_num(j, "overhead_kwh", c->overhead_kwh);
    json_num(j, "it_kwh", c->it_kwh);
    json_num(j, "avg_it_power_kw", c->avg_it_power_w / 1e3);
    json_num(j, "avg_power_kw", c->avg_power_w / 1e3);
    json_num(j, "pue", c->params.pue);
    json_num(j, "carbon_kg_per_kwh", c->params.carbon_kg_per_kwh);
    json_num(j, "electricity_usd_per_kwh", c->params.electricity_usd_per_kwh);
    json_end(j);
}

/* A disaggregated service's own figures (docs/disaggregated-serving.md);
 * nothing for a co-located one, whose output is as before. */
static void disagg_json(json *j, const service_result *r) {
    if (!r->disaggregated) return;
    json_bool(j, "disaggregated", 1);
    num_or_null(j, "kv_transfer_p50_s", r->kv_transfer_p50_s);
    num_or_null(j, "kv_transfer_p99_s", r->kv_transfer_p99_s);
    num_or_null(j, "kv_transfer_mean_s", r->kv_transfer_mean_s);
    json_num(j, "kv_transfer_bytes_mean", r->kv_transfer_bytes_mean);
    json_int(j, "kv_transfers_nvlink", (long long)r->kv_transfers_nvlink);
    json_int(j, "kv_transfers_network", (long long)r->kv_transfers_network);
    static const char *const names[2] = { "prefill", "decode" };
    for (int k = 0; k < 2; k++) {
        const service_pool_result *p = &r->pool[k];
        json_object(j, names[k]);
        json_int(j, "replicas", p->replicas);
        json_int(j, "replicas_peak", p->replicas_peak);
        json_int(j, "tp", p->tp);
        json_int(j, "ep", p->ep);
        json_int(j, "gpus_peak", p->gpus_peak);
        json_int(j, "max_batch", p->max_batch);
        json_num(j, "busy_fraction", p->busy_fraction);
        json_num(j, "gpu_hours", p->gpu_hours);
        json_num(j, "kv_utilization", p->kv_utilization_mean);
        json_num(j, "batch_mean", p->batch_mean);
        json_int(j, "iterations", (long long)p->iterations);
        json_end(j);
    }
}

/* One class's or one multiplexed model's requests (docs/serving-slo.md),
 * under the service's names for the same figures; a class also says its
 * share, priority and SLO (null: no bound). */
static void part_json(json *j, const service_part_result *p, int is_class) {
    json_object(j, NULL);
    json_str(j, "name", p->name);
    json_num(j, "share", p->share);
    if (is_class) {
        json_int(j, "priority", p->priority);
        json_object(j, "slo");
        num_or_null(j, "ttft_s", p->slo.ttft_s > 0 ? p->slo.ttft_s : -1);
        num_or_null(j, "tpot_s", p->slo.tpot_s > 0 ? p->slo.tpot_s : -1);
        num_or_null(j, "e2e_s", p->slo.e2e_s > 0 ? p->slo.e2e_s : -1);
        json_num(j, "percentile", p->slo.percentile);
        json_end(j);
    }
    json_int(j, "requests", (long long)p->requests);
    json_int(j, "submitted", (long long)p->submitted);
    json_num(j, "output_tokens_per_s", p->output_tokens_per_s);
    json_num(j, "requests_per_s", p->requests_per_s);
    json_num(j, "input_tokens", p->input_tokens);
    json_num(j, "output_tokens", p->output_tokens);
    const char *names[12] = { "ttft_p50_s", "ttft_p99_s", "ttft_mean_s", "tpot_p50_s", "tpot_p99_s", "tpot_mean_s",
                              "e2e_p50_s", "e2e_p99_s", "e2e_mean_s", "queue_p50_s", "queue_p99_s", "queue_mean_s" };
    const double v[12] = { p->ttft_p50_s, p->ttft_p99_s, p->ttft_mean_s, p->tpot_p50_s, p->tpot_p99_s, p->tpot_mean_s,
                           p->e2e_p50_s, p->e2e_p99_s, p->e2e_mean_s, p->queue_p50_s, p->queue_p99_s, p->queue_mean_s };
    for (int k = 0; k < 12; k++) num_or_null(j, names[k], v[k]);
    json_num(j, "slo_attainment", p->slo_attainment);
    json_bool(j, "slo_met", p->slo_met);
    json_num(j, "goodput_requests_per_s", p->goodput_requests_per_s);
    json_end(j);
}

/* A service's classes and models (none without them: the output is as before). */
static void parts_json(json *j, const service_result *r) {
    if (r->n_classes > 0) {
        json_array(j, "classes");
        for (int k = 0; k < r->n_classes; k++) part_json(j, &r->classes[k], 1);
        json_end(j);
    }
    if (r->n_by_model > 0) {
        json_array(j, "by_model");
        for (int k = 0; k < r->n_by_model; k++) part_json(j, &r->by_model[k], 0);
        json_end(j);
    }
}

/* Inference services (CONTRACT.md services[]; sim/serving.h says what each
 * figure means). */
static void services_json(json *j, const world *w) {
    json_array(j, "services");
    for (int i = 0; i < world_service_count(w); i++) {
        const service_result *r = world_service(w, i);
        json_object(j, NULL);
        json_str(j, "name", r->name);
        json_str(j, "models", r->models);
        json_int(j, "requests", (long long)r->requests);
        json_int(j, "submitted", (long long)r->submitted);
        json_int(j, "replicas", r->replicas);
        json_int(j, "replicas_peak", r->replicas_peak);
        json_num(j, "replicas_mean", r->replicas_mean);
        json_int(j, "tp", r->tp);
        json_int(j, "ep", r->ep);
        json_int(j, "gpus_peak", r->gpus_peak);
        json_num(j, "active_params", r->active_params);
        json_num(j, "total_params", r->total_params);
        json_num(j, "output_tokens_per_s", r->output_tokens_per_s);
        json_num(j, "requests_per_s", r->requests_per_s);
        json_num(j, "input_tokens", r->input_tokens);
        json_num(j, "output_tokens", r->output_tokens);
        num_or_null(j, "ttft_p50_s", r->ttft_p50_s);
        num_or_null(j, "ttft_p99_s", r->ttft_p99_s);
        num_or_null(j, "ttft_mean_s", r->ttft_mean_s);
        num_or_null(j, "ttft_admit_p50_s", r->ttft_admit_p50_s);
        num_or_null(j, "ttft_admit_p99_s", r->ttft_admit_p99_s);
        num_or_null(j, "tpot_p50_s", r->tpot_p50_s);
        num_or_null(j, "tpot_p99_s", r->tpot_p99_s);
        num_or_null(j, "tpot_mean_s", r->tpot_mean_s);
        num_or_null(j, "e2e_p50_s", r->e2e_p50_s);
        num_or_null(j, "e2e_p99_s", r->e2e_p99_s);
        num_or_null(j, "e2e_mean_s", r->e2e_mean_s);
        num_or_null(j, "queue_p50_s", r->queue_p50_s);
        num_or_null(j, "queue_p99_s", r->queue_p99_s);
        num_or_null(j, "queue_mean_s", r->queue_mean_s);
        json_num(j, "slo_attainment", r->slo_attainment);
        json_bool(j, "slo_met", r->slo_met);
        /* SLO goodput: completed requests that met every objective per second (over requests_per_s's span) */
        json_num(j, "goodput_requests_per_s", r->requests_per_s * r->slo_attainment);
        json_int(j, "preemptions", (long long)r->preemptions);
        json_int(j, "swaps", (long long)r->swaps);
        json_num(j, "kv_utilization", r->kv_utilization_mean);
        json_num(j, "kv_utilization_peak", r->kv_utilization_peak);
        json_num(j, "kv_capacity_tokens", r->kv_capacity_tokens);
        json_num(j, "weights_bytes_per_gpu", r->weight_bytes_per_gpu);
        if (r->spec_draft_tokens > 0) {          /* <speculative> only: other services' JSON unchanged */
            json_str(j, "spec_method", r->spec_method);
            json_int(j, "spec_draft_tokens", r->spec_draft_tokens);
            json_num(j, "spec_tokens_per_step", r->spec_tokens_per_step);
            json_num(j, "spec_acceptance", r->spec_acceptance);
        }
        json_num(j, "batch_mean", r->batch_mean);
        json_int(j, "iterations", (long long)r->iterations);
        json_num(j, "busy_fraction", r->busy_fraction);
        json_num(j, "gpu_hours", r->gpu_hours);
        json_object(j, "gpu_hours_by_activity");
        double idle_s = r->gpu_hours * 3600 - r->gpu_prefill_s - r->gpu_decode_s - r->gpu_loading_s;
        json_num(j, "prefill", r->gpu_prefill_s / 3600);
        json_num(j, "decode", r->gpu_decode_s / 3600);
        json_num(j, "idle", idle_s > 0 ? idle_s / 3600 : 0);
        json_num(j, "loading", r->gpu_loading_s / 3600);
        json_end(j);
        json_num(j, "energy_kwh", r->energy_kwh);
        json_num(j, "co2_kg", r->co2_kg);
        json_num(j, "avg_gpu_power_w", r->avg_gpu_power_w);
        num_or_null(j, "energy_per_output_token_j", r->energy_per_output_token_j);
        num_or_null(j, "kwh_per_million_output_tokens",
                    r->energy_per_output_token_j >= 0 ? r->energy_per_output_token_j / 3.6 : -1);
        json_num(j, "cost_usd", r->cost_usd);
        num_or_null(j, "cost_per_million_tokens_usd", r->cost_per_million_tokens_usd);
        json_int(j, "model_loads", (long long)r->model_loads);
        json_int(j, "model_unloads", (long long)r->model_unloads);
        json_int(j, "scale_ups", r->scale_ups);
        json_int(j, "scale_downs", r->scale_downs);
        json_int(j, "scale_blocked", r->scale_blocked);
        json_int(j, "replica_losses", (long long)r->replica_losses);
        json_int(j, "requests_restarted", (long long)r->requests_restarted);
        disagg_json(j, r);
        if (r->prefix_caching) {                   /* docs/prefix-caching.md */
            json_num(j, "prefix_hit_rate", r->prefix_hit_rate);
            json_num(j, "prefill_tokens_saved", r->prefill_tokens_saved);
            json_int(j, "prefix_evictions", (long long)r->prefix_evictions);
        }
        parts_json(j, r);
        json_object(j, "latency_cdf");
        json_array(j, "percentiles");
        for (int k = 0; k < SERVICE_CDF_POINTS; k++) json_num(j, NULL, service_cdf_percentiles[k]);
        json_end(j);
        const char *names[3] = { "ttft_s", "tpot_s", "e2e_s" };
        const double *v[3] = { r->ttft_cdf, r->tpot_cdf, r->e2e_cdf };
        for (int m = 0; m < 3; m++) {
            json_array(j, names[m]);
            for (int k = 0; k < SERVICE_CDF_POINTS; k++) num_or_null(j, NULL, v[m][k]);
            json_end(j);
        }
        json_end(j);
        json_end(j);
    }
    json_end(j);
}

/* The simulated starts against the real scheduler's (actual_start). */
static void replay_json(json *j, const world *w) {
    world_replay r = world_get_replay(w);
    json_object(j, "replay");
    json_int(j, "jobs", r.jobs);
    num_or_nan(j, "wait_error_median_s", r.wait_error_median_s);
    num_or_nan(j, "wait_error_p90_s", r.wait_error_p90_s);
    num_or_nan(j, "start_order_kendall_tau", r.start_order_kendall_tau);
    json_end(j);
}

/* How a public job trace was read (<trace format>, scenarios/jobtrace.h):
 * its format, data rows, jobs replayed and rows skipped, by why. */
static void trace_json(json *j, const scenario *s) {
    const sc_trace_read *tr = &s->trace_read;
    json_object(j, "trace");
    json_str(j, "href", s->trace_href);
    json_str(j, "format", tr->format_read);
    json_int(j, "rows", tr->rows);
    json_int(j, "jobs", s->n_trace_jobs);
    json_int(j, "skipped", tr->skipped_not_run + tr->skipped_no_gpus + tr->skipped_too_big + tr->skipped_status);
    json_int(j, "skipped_not_run", tr->skipped_not_run);
    json_int(j, "skipped_no_gpus", tr->skipped_no_gpus);
    json_int(j, "skipped_too_big", tr->skipped_too_big);
    json_int(j, "skipped_status", tr->skipped_status);
    json_end(j);
}

void results_json(json *j, const scenario *s, const world *w, double wall_s) {
    world_totals t = world_get_totals(w);
    json_object(j, NULL);
    json_str(j, "scenario", s->name);
    json_int(j, "seed", (long long)s->seed);
    if (s->snapshot_time[0]) json_str(j, "snapshot_time", s->snapshot_time);
    json_str(j, "version", CT_VERSION);
    json_num(j, "simulated_s", t.simulated_s);
    json_num(j, "wall_s", wall_s);
    json_int(j, "events", (long long)t.events);
    if (jobtrace_reported(s)) trace_json(j, s);

    json_object(j, "cluster");
    json_int(j, "nodes", t.nodes);
    json_int(j, "gpus", t.gpus);
    /* gpu_utilization is allocation (kept for the scripts that read it);
     * productive counts only work kept (world_totals). */
    double alloc = t.gpu_hours > 0 ? t.gpu_busy_s / 3600.0 / t.gpu_hours : 0;
    json_num(j, "gpu_utilization", alloc);
    json_num(j, "gpu_utilization_allocated", alloc);
    json_num(j, "gpu_utilization_productive", t.gpu_hours > 0 ? t.gpu_productive_s / 3600.0 / t.gpu_hours : 0);
    json_num(j, "gpu_productive_hours", t.gpu_productive_s / 3600.0);
    json_num(j, "gpu_hours", t.gpu_hours);
    json_num(j, "gpu_busy_hours", t.gpu_busy_s / 3600.0);
    json_num(j, "cost_usd", t.cost_usd);
    json_num(j, "energy_kwh", t.cost.energy_kwh);
    json_num(j, "co2_kg", t.cost.co2_kg);
    cost_json(j, &t.cost);
    json_object(j, "gpu_hours_by_state");
    json_num(j, "training", t.gpu_training_s / 3600);
    json_num(j, "checkpoint", t.gpu_checkpoint_s / 3600);
    json_num(j, "restarting", t.gpu_restarting_s / 3600);
    json_num(j, "batch", t.gpu_batch_s / 3600);
    json_num(j, "serving", t.gpu_serving_s / 3600);
    json_num(j, "idle", t.gpu_hours - (t.gpu_training_s + t.gpu_checkpoint_s + t.gpu_restarting_s + t.gpu_batch_s +
                                       t.gpu_serving_s) / 3600);
    json_end(j);
    json_int(j, "nodes_drained", t.nodes_drained);
    if (s->n_unavailable > 0) json_int(j, "nodes_unavailable_at_start", t.nodes_unavailable_at_start);
    int draining = 0;
    for (int u = 0; u < s->n_unavailable; u++) draining |= s->unavailable[u].draining;
    if (draining) json_int(j, "nodes_draining_at_start", t.nodes_draining_at_start);
    json_num(j, "fragmented_gpu_hours", t.fragmented_gpu_hours);
    json_num(j, "fragmentation", t.gpu_hours > 0 ? t.fragmented_gpu_hours / t.gpu_hours : 0);
    json_num(j, "cloud_node_hours", t.cloud_node_hours);
    json_num(j, "cloud_cost_usd", t.cloud_cost_usd);
    json_end(j);

    json_object(j, "failures");
    json_int(j, "total", t.failures);
    json_object(j, "by_component");
    failures_by(j, w, 0);
    json_end(j);
    json_object(j, "by_cause");
    failures_by(j, w, 1);
    json_end(j);
    json_end(j);

    if (benchset_count(world_benchset(w)) > 0) {
        json_array(j, "microbenchmarks");
        for (int i = 0; i < benchset_count(world_benchset(w)); i++)
            microbench_json(j, benchset_case(world_benchset(w), i), benchset_prediction(world_benchset(w), i),
                            benchset_measured(world_benchset(w), i), benchset_note(world_benchset(w), i));
        json_end(j);
        hardware_json(j, w);
    }

    json_array(j, "queues");
    for (int i = 0; i < world_queue_count(w); i++) {
        queue_result q = world_queue(w, i);
        json_object(j, NULL);
        json_str(j, "name", q.name);
        json_int(j, "quota_gpus", q.quota_gpus);
        json_int(j, "jobs", q.jobs);
        json_int(j, "started", q.started);
        json_int(j, "waiting", q.waiting);
        json_num(j, "gpu_hours", q.gpu_hours);
        json_num(j, "quota_share", q.quota_share);
        json_num(j, "mean_wait_s", q.mean_wait_s);
        json_num(j, "p95_wait_s", q.p95_wait_s);
        json_num(j, "slowdown", q.slowdown);
        json_end(j);
    }
    json_end(j);

    json_array(j, "jobs");
    for (int i = 0; i < world_job_count(w); i++)
        job_json(j, s, world_job(w, i), t.simulated_s, world_job_gpu_hours(w, i), world_job_cost_usd(w, i));
    json_end(j);
    services_json(j, w);
    if (s->trace_columns & SC_TCOL_ACTUAL_START) replay_json(j, w);
    json_end(j);
}
