/*
 * serving: LLM inference services, simulated one batch iteration at a time.
 *
 * A service (<inference>) is a set of replicas, each a tensor-parallel group
 * of tp GPUs holding one or more models, behind a router; requests arrive
 * by a process (offline, Poisson, bursty, diurnal, trace). Per replica, one
 * engine event per batch iteration; the iteration's duration comes from
 * models/serving (roofline of the kernels, TP all-reduces). Between
 * iterations the scheduler (vLLM/Orca continuous batching) admits waiting
 * requests up to max-batch sequences and a token budget per iteration,
 * mixing prompt chunks and decode tokens; static batching runs fixed
 * batches to completion as a baseline. The KV cache is paged: reserve
 * allocation (TensorRT-LLM's guaranteed-no-evict) holds a request's whole
 * length from admission; on-demand allocation (vLLM) grows block by block
 * and, when the cache is full, preempts the youngest sequence, which is
 * recomputed later or swapped to host memory.
 *
 * Cost per iteration is O(1) in the batch size: sequences that decode are
 * not touched each iteration. Their context sum, block growth and finish
 * times are kept as aggregates (Σ of start offsets, residue buckets of
 * block boundaries, a heap of finish iterations), so an iteration costs
 * O(admissions + completions · log batch). 1M requests run in about a
 * second (tests/bench_serving.c).
 *
 *   request: QUEUED ─admit─► PREFILL ─prompt done─► DECODE ─last token─► done
 *                ▲              │ preempted (recompute)  │
 *                └──────────────┴────────────────────────┘
 *                               DECODE ─preempted (swap)─► SWAPPED ─► DECODE
 *
 * The service gets GPUs from its host (the world), whose scheduler treats a
 * replica like a job (queue, priority, preemption); an autoscaler asks for
 * replicas (ready a start-up time after the GPUs are granted) when the queue
 * or the latency is over its target and gives them back when under it. A
 * replica whose node fails or which the scheduler preempts loses its
 * sequences' KV cache; they are recomputed on the other replicas.
 *
 * Metric bus (entity = service name): samples queue_length, running,
 * replicas, kv_utilization, output_tokens_per_s every 10 simulated seconds
 * while the service runs, and ttft_p99_s, tpot_p99_s (of the requests
 * completed in those 10 s; the last 1024 of them) when any completed;
 * events service_start, service_end, replica_ready, replica_stop,
 * replica_lost, scale_up, scale_down, scale_blocked, model_load,
 * model_unload.
 */
#ifndef CT_SERVING_H
#define CT_SERVING_H

#include <stddef.h>
#include <stdint.h>

#include "models/serving.h"
#include "scenarios/scenario.h"
#include "sim/engine.h"
#include "sim/metrics.h"

/* Percentiles of a latency kept for the results (CDF points). */
#define SERVICE_CDF_POINTS 11
extern const double service_cdf_percentiles[SERVICE_CDF_POINTS];

/* One service's outcome (CONTRACT.md services[] and more). Times in
 * seconds; a latency with no sample is -1. */
typedef struct service_result {
    char name[SC_NAME_MAX];
    char models[256];                /* "llama3-70b" or "a, b, c" when multiplexed */
    int64_t requests;                /* completed */
    int64_t submitted;               /* arrived */
    int replicas;                    /* at the start */
    int replicas_peak;
    double replicas_mean;            /* time-weighted over the service's life */
    int tp;
    double input_tokens, output_tokens;
    double output_tokens_per_s;      /* output tokens / (last completion - first arrival) */
    double requests_per_s;
    double ttft_p50_s, ttft_p99_s, ttft_mean_s;
    double tpot_p50_s, tpot_p99_s, tpot_mean_s;
    double e2e_p50_s, e2e_p99_s, e2e_mean_s;
    double queue_p50_s, queue_p99_s, queue_mean_s;   /* arrival to admission */
    double ttft_cdf[SERVICE_CDF_POINTS], tpot_cdf[SERVICE_CDF_POINTS], e2e_cdf[SERVICE_CDF_POINTS];
    double slo_attainment;           /* share of completed requests meeting every given SLO
                                        (1 when none is given) */
    int slo_met;                     /* attainment >= percentile / 100 */
    int64_t preemptions;             /* sequences preempted (recomputed or swapped) */
    int64_t swaps;                   /* of them swapped to host memory */
    double kv_utilization_mean;      /* KV cache in use over capacity, mean over busy time */
    double kv_utilization_peak;
    double batch_mean;               /* sequences per iteration */
    int64_t iterations;
    double busy_fraction;            /* replica time spent iterating / replica time held */
    double gpu_hours;                /* GPUs held by the replicas × time */
    /* Of those GPUs' time, GPU-seconds spent (models/cost.h serving states;
     * idle is gpu_hours · 3600 minus the three): prefill and decode are an
     * iteration's time split into what its decode tokens alone would take
     * and the rest (prompt compute); loading is start-up, model loads and
     * KV swaps over PCIe. Kept up to date while the service runs. */
    double gpu_prefill_s, gpu_decode_s, gpu_loading_s;
    double energy_kwh;               /* facility energy of the replicas' GPUs and their share of
                                        the nodes (cost model, PUE included); after serving_close */
    double co2_kg;
    double avg_gpu_power_w;          /* mean power of one held GPU */
    double energy_per_output_token_j;   /* energy_kwh per output token, in J; -1 without tokens */
    double cost_usd;                 /* gpu_hours × the node's price per GPU-hour */
    double cost_per_million_tokens_usd;   /* per million output tokens */
    int64_t model_loads, model_unloads;
    int scale_ups, scale_downs, scale_blocked;   /* blocked: scale-ups that had to queue for GPUs */
    int64_t replica_losses;          /* replicas that lost their GPUs (node failure, preemption) */
    int64_t requests_restarted;      /* sequences recomputed because their replica was lost */
    double first_arrival_s, last_completion_s;
    /* the model (first model of the service) on one replica */
    double weight_bytes_per_gpu, kv_capacity_tokens, kv_bytes_per_token;
    int kv_blocks_per_replica;
} service_result;

typedef struct serving serving;

/* How a service takes and gives back GPUs: the world implements it over
 * its cluster and scheduler. */
typedef struct serving_host {
    void *ctx;
    /* Ask for `gpus` GPUs for the replica numbered tag. The request goes
     * to the cluster scheduler like a job. When they are held at once,
     * *granted is set to 1; otherwise to 0, and the host calls
     * serving_granted(sv, tag) when the scheduler starts the request.
     * Returns a handle >= 0, or -1 when the request cannot be made. */
    int (*acquire)(void *ctx, int gpus, int tag, int *granted);
    /* Withdraw a request, or give back the GPUs it holds. */
    void (*release)(void *ctx, int handle);
    /* The service has completed every request it will get. May be NULL. */
    void (*finished)(void *ctx);
} serving_host;

/* The host holds the GPUs replica tag asked for: it starts. */
void serving_granted(serving *sv, int tag);

/* The host took replica tag's GPUs away (a node failed, the scheduler
 * preempted it) and queued its request again: its sequences lose their
 * KV cache and are recomputed elsewhere; it restarts when granted again. */
void serving_replica_lost(serving *sv, int tag, const char *why);

/* Build a service for cfg (an <inference> of s) on nodes of type node and
 * take its initial replicas from the host. Loads a trace when the arrival
 * process is "trace". Schedules the first arrival. The scenario, node and
 * host must outlive the service. Returns NULL with err set to
 * "file:line: <inference name="...">: ..." when the model does not fit the
 * GPUs, the replicas' GPUs are not free, or the trace is bad (then
 * "trace.csv:line: ..."); nothing is left allocated. */
serving *serving_new(engine *e, metric_bus *bus, const scenario *s, const sc_inference *cfg,
                     const node_spec *node, const serving_host *host, char *err, size_t errlen);

/* Close the books at the end of the run (now): time-weighted figures and
 * percentiles. Safe to call more than once; the service does not run after. */
void serving_close(serving *sv);

/* The results, complete after serving_close(). */
const service_result *serving_result(const serving *sv);

/* 1 when every request has completed. */
int serving_done(const serving *sv);

/* Sorted samples of a latency for CDF plots ("ttft", "tpot", "e2e",
 * "queue"), after serving_close(). Returns the count (at most the
 * reservoir, 4M); *x points into the service. 0 for an unknown name. */
size_t serving_samples(const serving *sv, const char *which, const double **x);

void serving_free(serving *sv);                  /* NULL is a no-op */

#endif
