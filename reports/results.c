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

/* num_or_null over a table of a struct's doubles (reports/json.h). */
static void nums_or_null(json *j, const void *base, const json_field *f, size_t n) {
    for (size_t i = 0; i < n; i++) num_or_null(j, f[i].key, json_field_num(base, &f[i]));
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

/* The members each part of a job's JSON writes, in the order and under the
 * keys of CONTRACT.md jobs[]. */
#define TRAIN(key, m) { key, offsetof(train_result, m) }
static const json_field train_rates[] = {
    TRAIN("model_tflops_per_gpu", model_tflops_per_gpu), TRAIN("hardware_tflops_per_gpu", hardware_tflops_per_gpu),
    TRAIN("mfu", mfu), TRAIN("tokens_per_s_per_gpu", tokens_per_s_per_gpu), TRAIN("params", params),
    TRAIN("total_params", params),
    TRAIN("active_params", active_params),      /* model FLOPs count these (6 per token) */
};
static const json_field train_sizes[] = {
    TRAIN("ep", ep), TRAIN("micro_batches", micro_batches),
    TRAIN("micro_batch", micro_batch),          /* as chosen when not given */
};
#define STEP(m) JSON_MEMBER(step_breakdown, m)
static const json_field step_parts[] = {
    STEP(compute_s), STEP(tp_comm_s), STEP(pp_bubble_s), STEP(dp_comm_s), STEP(optimizer_s), STEP(other_s),
    STEP(ep_comm_s),
};
#define JOB(key, m) { key, offsetof(job_result, m) }
static const json_field job_losses[] = {
    JOB("lost_work_s", time.redone_s), JOB("lost_work_after_failures_s", time.redone_failures_s),
    JOB("lost_work_after_preemption_s", time.redone_preemption_s), JOB("checkpoint_size_bytes", checkpoint_size_bytes),
    JOB("checkpoint_write_s", checkpoint_write_s), JOB("checkpoint_stall_s", time.checkpoint_stall_s),
    JOB("checkpoint_interval_s", checkpoint_interval_s),
};
static const json_field job_events[] = {
    JOB("checkpoints", checkpoints), JOB("shrinks", shrinks), JOB("grows", grows), JOB("leaf_groups", leaf_groups),
};
#define TIME(key, m) { key, offsetof(job_time, m) }
static const json_field time_parts[] = {
    TIME("training_kept_s", kept_s), TIME("redone_s", redone_s), TIME("redone_after_failures_s", redone_failures_s),
    TIME("redone_after_preemption_s", redone_preemption_s), TIME("checkpoint_stall_s", checkpoint_stall_s),
    TIME("restart_s", restart_s), TIME("waiting_for_nodes_s", waiting_s),
};
#define MEM(m) JSON_MEMBER(memory_breakdown, m)
static const json_field memory_parts[] = {
    MEM(weights_bytes), MEM(grads_bytes), MEM(optimizer_bytes), MEM(activations_bytes), MEM(other_bytes),
    MEM(total_bytes),
};

/* A training job's figures: its step, where the step's time goes, what
 * failures and checkpoints cost it, where its time went, its memory. */
static void train_json(json *j, const job_result *r, double sim_end) {
    const train_result *p = r->perf;
    json_num(j, "step_time_s", p->step_s);
    json_int(j, "steps_total", (long long)r->steps_total);
    json_int(j, "steps_done", (long long)r->steps_done);
    json_num(j, "tokens_done", r->tokens_done);
    json_nums(j, p, JSON_FIELDS(train_rates));
    json_ints(j, p, JSON_FIELDS(train_sizes));
    json_str(j, "pipeline_schedule", pp_schedule_name(p->schedule));
    json_int(j, "virtual_stages", p->virtual_stages);
    json_str(j, "stack", p->stack);                             /* as auto chose when not given */
    json_object(j, "breakdown");
    json_nums(j, &p->t, JSON_FIELDS(step_parts));
    json_end(j);
    double elapsed = (r->end_s >= 0 ? r->end_s : sim_end) - r->start_s;
    json_int(j, "interruptions", r->interruptions);
    json_int(j, "planned_interruptions", r->planned_interruptions);
    json_nums(j, r, JSON_FIELDS(job_losses));
    json_ints(j, r, JSON_FIELDS(job_events));
    if (r->start_s >= 0 && elapsed > 0) json_num(j, "ettr", r->time.kept_s / elapsed);
    else json_null(j, "ettr");
    json_object(j, "time");
    json_num(j, "elapsed_s", r->start_s >= 0 ? elapsed : 0);
    json_nums(j, &r->time, JSON_FIELDS(time_parts));
    json_end(j);
    json_object(j, "memory_per_gpu");
    json_nums(j, &p->mem, JSON_FIELDS(memory_parts));
    json_end(j);
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
    if (r->kind == JOB_TRAINING) train_json(j, r, sim_end);
    json_end(j);
}

/* job_json's keys in its order (results.h); keep the two in step: the
 * results store keeps a run's document without its jobs only when every
 * job's keys follow this list, and tests/test_store.c rebuilds them. */
const results_key results_job_keys[] = {
    { "name", 'a', 's' }, { "id", 'o', 's' }, { "user", 'o', 's' }, { "account", 'o', 's' },
    { "state_at_snapshot", 'o', 's' }, { "actual_start_s", 'o', 'n' }, { "kind", 'a', 's' }, { "gpus", 'a', 'i' },
    { "queue", 'a', 's' }, { "state", 'a', 's' }, { "preemptions", 'a', 'i' }, { "submit_s", 'a', 'n' },
    { "start_s", 'a', 'n' }, { "end_s", 'a', 'n' }, { "queue_wait_s", 'a', 'n' }, { "gpu_hours", 'a', 'n' },
    { "cost_usd", 'a', 'n' },
    /* train_json */
    { "step_time_s", 't', 'n' }, { "steps_total", 't', 'i' }, { "steps_done", 't', 'i' }, { "tokens_done", 't', 'n' },
    { "model_tflops_per_gpu", 't', 'n' }, { "hardware_tflops_per_gpu", 't', 'n' }, { "mfu", 't', 'n' },
    { "tokens_per_s_per_gpu", 't', 'n' }, { "params", 't', 'n' }, { "total_params", 't', 'n' },
    { "active_params", 't', 'n' }, { "ep", 't', 'i' }, { "micro_batches", 't', 'i' }, { "micro_batch", 't', 'i' },
    { "pipeline_schedule", 't', 's' }, { "virtual_stages", 't', 'i' }, { "stack", 't', 's' },
    { "breakdown.compute_s", 't', 'n' }, { "breakdown.tp_comm_s", 't', 'n' }, { "breakdown.pp_bubble_s", 't', 'n' },
    { "breakdown.dp_comm_s", 't', 'n' }, { "breakdown.optimizer_s", 't', 'n' }, { "breakdown.other_s", 't', 'n' },
    { "breakdown.ep_comm_s", 't', 'n' }, { "interruptions", 't', 'i' }, { "planned_interruptions", 't', 'i' },
    { "lost_work_s", 't', 'n' }, { "lost_work_after_failures_s", 't', 'n' },
    { "lost_work_after_preemption_s", 't', 'n' }, { "checkpoint_size_bytes", 't', 'n' },
    { "checkpoint_write_s", 't', 'n' }, { "checkpoint_stall_s", 't', 'n' }, { "checkpoint_interval_s", 't', 'n' },
    { "checkpoints", 't', 'i' }, { "shrinks", 't', 'i' }, { "grows", 't', 'i' }, { "leaf_groups", 't', 'i' },
    { "ettr", 't', 'n' }, { "time.elapsed_s", 't', 'n' }, { "time.training_kept_s", 't', 'n' },
    { "time.redone_s", 't', 'n' }, { "time.redone_after_failures_s", 't', 'n' },
    { "time.redone_after_preemption_s", 't', 'n' }, { "time.checkpoint_stall_s", 't', 'n' },
    { "time.restart_s", 't', 'n' }, { "time.waiting_for_nodes_s", 't', 'n' },
    { "memory_per_gpu.weights_bytes", 't', 'n' }, { "memory_per_gpu.grads_bytes", 't', 'n' },
    { "memory_per_gpu.optimizer_bytes", 't', 'n' }, { "memory_per_gpu.activations_bytes", 't', 'n' },
    { "memory_per_gpu.other_bytes", 't', 'n' }, { "memory_per_gpu.total_bytes", 't', 'n' }, { NULL, 0, 0 },
};

/* A measurement's spread over its repetitions, and how it was repeated. */
#define MEASURED(key, m) { key, offsetof(mb_measurement, m) }
static const json_field measured_spread[] = {
    MEASURED("measured_min_s", min_s), MEASURED("measured_median_s", median_s), MEASURED("measured_q1_s", q1_s),
    MEASURED("measured_q3_s", q3_s), MEASURED("measured_max_s", max_s),
};
static const json_field measured_counts[] = {
    JSON_MEMBER(mb_measurement, warmup), JSON_MEMBER(mb_measurement, reps), JSON_MEMBER(mb_measurement, iters),
};

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
        if (mb_groups(c) > 1) json_int(j, "groups", c->groups);
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
        json_nums(j, m, JSON_FIELDS(measured_spread));
        json_ints(j, m, JSON_FIELDS(measured_counts));
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
#define HARDWARE(m) JSON_MEMBER(mb_hardware, m)
static const json_field hardware_names[] = {
    HARDWARE(backend), HARDWARE(host), HARDWARE(cpu), HARDWARE(devices), HARDWARE(libraries),
};

static void hardware_json(json *j, const world *w) {
    const mb_hardware *h = benchset_hardware(world_benchset(w));
    const host_profile *hp = benchset_host(world_benchset(w));
    if (!h && !hp) return;
    json_object(j, "hardware");
    if (h) {
        json_strs(j, h, JSON_FIELDS(hardware_names));
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
#define COST(m) JSON_MEMBER(cost_result, m)
static const json_field cost_parts[] = {
    COST(compute_usd), COST(storage_usd), COST(cloud_usd), COST(electricity_usd), COST(cloud_gpu_hours),
    COST(storage_tb_months), COST(gpu_kwh), COST(overhead_kwh), COST(it_kwh),
};
#define RATE(m) JSON_MEMBER(cost_params, m)
static const json_field cost_rates[] = { RATE(pue), RATE(carbon_kg_per_kwh), RATE(electricity_usd_per_kwh) };

static void cost_json(json *j, const cost_result *c) {
    json_object(j, "cost");
    json_bool(j, "owned", c->params.owned);
    json_nums(j, c, JSON_FIELDS(cost_parts));
    json_num(j, "avg_it_power_kw", c->avg_it_power_w / 1e3);
    json_num(j, "avg_power_kw", c->avg_power_w / 1e3);
    json_nums(j, &c->params, JSON_FIELDS(cost_rates));
    json_end(j);
}

/* A pool's members under the service's names for them. */
#define POOL(m) JSON_MEMBER(service_pool_result, m)
static const json_field pool_sizes[] = {
    POOL(replicas), POOL(replicas_peak), POOL(tp), POOL(ep), POOL(gpus_peak), POOL(max_batch),
};
static const json_field pool_usage[] = {
    POOL(busy_fraction), POOL(gpu_hours), { "kv_utilization", offsetof(service_pool_result, kv_utilization_mean) },
    POOL(batch_mean),
};

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
        json_ints(j, p, JSON_FIELDS(pool_sizes));
        json_nums(j, p, JSON_FIELDS(pool_usage));
        json_int(j, "iterations", (long long)p->iterations);
        json_end(j);
    }
}

/* A class's or a model's members under the service's names for them. */
#define PART(m) JSON_MEMBER(service_part_result, m)
static const json_field part_volumes[] = {
    PART(output_tokens_per_s), PART(requests_per_s), PART(input_tokens), PART(output_tokens),
};
static const json_field part_latencies[] = {         /* -1: no request behind it (null) */
    PART(ttft_p50_s), PART(ttft_p99_s), PART(ttft_mean_s), PART(tpot_p50_s), PART(tpot_p99_s), PART(tpot_mean_s),
    PART(e2e_p50_s), PART(e2e_p99_s), PART(e2e_mean_s), PART(queue_p50_s), PART(queue_p99_s), PART(queue_mean_s),
};

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
    json_nums(j, p, JSON_FIELDS(part_volumes));
    nums_or_null(j, p, JSON_FIELDS(part_latencies));
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

/* A service's members written under their own names (CONTRACT.md services[]). */
#define SERVICE(m) JSON_MEMBER(service_result, m)
static const json_field service_sizes[] = { SERVICE(tp), SERVICE(ep), SERVICE(gpus_peak) };
static const json_field service_volumes[] = {
    SERVICE(active_params), SERVICE(total_params), SERVICE(output_tokens_per_s), SERVICE(requests_per_s),
    SERVICE(input_tokens), SERVICE(output_tokens),
};
static const json_field service_latencies[] = {      /* -1: no request behind it (null) */
    SERVICE(ttft_p50_s), SERVICE(ttft_p99_s), SERVICE(ttft_mean_s), SERVICE(ttft_admit_p50_s),
    SERVICE(ttft_admit_p99_s), SERVICE(tpot_p50_s), SERVICE(tpot_p99_s), SERVICE(tpot_mean_s), SERVICE(e2e_p50_s),
    SERVICE(e2e_p99_s), SERVICE(e2e_mean_s), SERVICE(queue_p50_s), SERVICE(queue_p99_s), SERVICE(queue_mean_s),
};
static const json_field service_kv[] = {
    { "kv_utilization", offsetof(service_result, kv_utilization_mean) }, SERVICE(kv_utilization_peak),
    SERVICE(kv_capacity_tokens), { "weights_bytes_per_gpu", offsetof(service_result, weight_bytes_per_gpu) },
};
static const json_field service_energy[] = { SERVICE(energy_kwh), SERVICE(co2_kg), SERVICE(avg_gpu_power_w) };
static const json_field service_scaling[] = { SERVICE(scale_ups), SERVICE(scale_downs), SERVICE(scale_blocked) };

/* Its latency percentiles over the CDF points (null: no request behind one). */
static void service_cdf_json(json *j, const service_result *r) {
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
}

/* What its GPUs did, used and cost, and how it scaled. */
static void service_usage_json(json *j, const service_result *r) {
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
    json_nums(j, r, JSON_FIELDS(service_energy));
    num_or_null(j, "energy_per_output_token_j", r->energy_per_output_token_j);
    num_or_null(j, "kwh_per_million_output_tokens",
                r->energy_per_output_token_j >= 0 ? r->energy_per_output_token_j / 3.6 : -1);
    json_num(j, "cost_usd", r->cost_usd);
    num_or_null(j, "cost_per_million_tokens_usd", r->cost_per_million_tokens_usd);
    json_int(j, "model_loads", (long long)r->model_loads);
    json_int(j, "model_unloads", (long long)r->model_unloads);
    json_ints(j, r, JSON_FIELDS(service_scaling));
    json_int(j, "replica_losses", (long long)r->replica_losses);
    json_int(j, "requests_restarted", (long long)r->requests_restarted);
}

/* One inference service (sim/serving.h says what each figure means). */
static void service_json(json *j, const service_result *r) {
    json_object(j, NULL);
    json_str(j, "name", r->name);
    json_str(j, "models", r->models);
    json_int(j, "requests", (long long)r->requests);
    json_int(j, "submitted", (long long)r->submitted);
    json_int(j, "replicas", r->replicas);
    json_int(j, "replicas_peak", r->replicas_peak);
    json_num(j, "replicas_mean", r->replicas_mean);
    json_ints(j, r, JSON_FIELDS(service_sizes));
    json_nums(j, r, JSON_FIELDS(service_volumes));
    nums_or_null(j, r, JSON_FIELDS(service_latencies));
    json_num(j, "slo_attainment", r->slo_attainment);
    json_bool(j, "slo_met", r->slo_met);
    /* SLO goodput: completed requests that met every objective per second (over requests_per_s's span) */
    json_num(j, "goodput_requests_per_s", r->requests_per_s * r->slo_attainment);
    json_int(j, "preemptions", (long long)r->preemptions);
    json_int(j, "swaps", (long long)r->swaps);
    json_nums(j, r, JSON_FIELDS(service_kv));
    if (r->spec_draft_tokens > 0) {          /* <speculative> only: other services' JSON unchanged */
        json_str(j, "spec_method", r->spec_method);
        json_int(j, "spec_draft_tokens", r->spec_draft_tokens);
        json_num(j, "spec_tokens_per_step", r->spec_tokens_per_step);
        json_num(j, "spec_acceptance", r->spec_acceptance);
    }
    service_usage_json(j, r);
    disagg_json(j, r);
    if (r->prefix_caching) {                   /* docs/prefix-caching.md */
        json_num(j, "prefix_hit_rate", r->prefix_hit_rate);
        json_num(j, "prefill_tokens_saved", r->prefill_tokens_saved);
        json_int(j, "prefix_evictions", (long long)r->prefix_evictions);
    }
    parts_json(j, r);
    service_cdf_json(j, r);
    json_end(j);
}

/* Inference services (CONTRACT.md services[]). */
static void services_json(json *j, const world *w) {
    json_array(j, "services");
    for (int i = 0; i < world_service_count(w); i++) service_json(j, world_service(w, i));
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

/* A scheduler queue's members under their own names (CONTRACT.md queues[]). */
#define QUEUE(m) JSON_MEMBER(queue_result, m)
static const json_field queue_counts[] = { QUEUE(quota_gpus), QUEUE(jobs), QUEUE(started), QUEUE(waiting) };
static const json_field queue_figures[] = {
    QUEUE(gpu_hours), QUEUE(quota_share), QUEUE(mean_wait_s), QUEUE(p95_wait_s), QUEUE(slowdown),
};

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
        json_ints(j, &q, JSON_FIELDS(queue_counts));
        json_nums(j, &q, JSON_FIELDS(queue_figures));
        json_end(j);
    }
    json_end(j);

    json_array(j, "jobs");
    for (int i = 0; i < world_job_count(w); i++) {
        job_result r;
        job_json(j, s, world_job(w, i, &r), t.simulated_s, world_job_gpu_hours(w, i), world_job_cost_usd(w, i));
    }
    json_end(j);
    services_json(j, w);
    if (s->trace_columns & SC_TCOL_ACTUAL_START) replay_json(j, w);
    json_end(j);
}
