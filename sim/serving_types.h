/*
 * serving_types: the values the serving API passes (sim/serving.h says what
 * a service does): the handle, what a service takes from its host
 * (serving_host) and what it gives back (service_result). Apart from
 * serving.h so that the serving files below its entry points
 * (serving_int.h) can hold them without reaching up to the API.
 */
#ifndef CT_SERVING_TYPES_H
#define CT_SERVING_TYPES_H

#include <stdint.h>

#include "scenarios/scenario.h"

typedef struct serving serving;

/* Percentiles of a latency kept for the results (CDF points). */
#define SERVICE_CDF_POINTS 11
extern const double service_cdf_percentiles[SERVICE_CDF_POINTS];

/* One pool of a disaggregated service (prefill or decode). */
typedef struct service_pool_result {
    int replicas, replicas_peak, tp, ep, gpus_peak, max_batch;
    double busy_fraction;            /* time iterating / time held */
    double gpu_hours, kv_utilization_mean, batch_mean;
    int64_t iterations;
} service_pool_result;

/* The requests of one class, or of one model of a multiplexed service
 * (docs/serving-slo.md): the request-level figures of a service_result
 * under the same names. Rates are over the service's span (its first
 * arrival to its last completion), so the classes' rates add up to the
 * service's. A latency with no sample is -1. */
typedef struct service_part_result {
    char name[SC_NAME_MAX];          /* the class's, or the model's preset */
    int priority;                    /* classes: admission priority (higher first) */
    double share;                    /* of the requests, as given */
    sc_slo slo;                      /* classes: their SLO; models: the service's percentile */
    int64_t requests, submitted;
    double input_tokens, output_tokens;
    double output_tokens_per_s, requests_per_s;
    double ttft_p50_s, ttft_p99_s, ttft_mean_s;
    double tpot_p50_s, tpot_p99_s, tpot_mean_s;
    double e2e_p50_s, e2e_p99_s, e2e_mean_s;
    double queue_p50_s, queue_p99_s, queue_mean_s;   /* of the completed requests */
    double slo_attainment;           /* share of completed requests that met their class's SLO */
    int slo_met;                     /* attainment >= percentile / 100 */
    double goodput_requests_per_s;   /* completed requests that met their SLO, per second */
} service_part_result;

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
    int ep;                          /* expert parallelism (1: none); GPUs per replica max(tp, ep) */
    int gpus_peak;                   /* GPUs held at once at most (replicas_peak x GPUs per replica;
                                        disaggregated: both pools') */
    double input_tokens, output_tokens;
    double output_tokens_per_s;      /* output tokens / (last completion - first arrival) */
    double requests_per_s;
    double ttft_p50_s, ttft_p99_s, ttft_mean_s;
    double ttft_admit_p50_s, ttft_admit_p99_s; /* first token from admission (arrival to
                                        admission is the queue time) */
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
    double active_params, total_params;   /* models/transformer.h: per token, and stored */
    int kv_blocks_per_replica;
    /* Disaggregated serving (docs/disaggregated-serving.md); all 0 when
     * co-located. The figures above then cover both pools (replicas,
     * GPU-hours, energy, cost: their sums; tp, ep, KV figures: the decode
     * pool's), the latencies every request. */
    int disaggregated;
    service_pool_result pool[2];     /* [0] prefill, [1] decode */
    double kv_transfer_p50_s, kv_transfer_p99_s, kv_transfer_mean_s;   /* prompt done to KV at the decode replica */
    double kv_transfer_bytes_mean;   /* per request */
    int64_t kv_transfers_nvlink, kv_transfers_network;
    /* prefix caching (docs/prefix-caching.md); all 0 without it */
    int prefix_caching;              /* <inference prefix-caching="true"> */
    double prefix_hit_rate;          /* prompt tokens served from the cache / prompt tokens admitted */
    double prefill_tokens_saved;     /* prompt tokens not computed because they were cached */
    int64_t prefix_evictions;        /* cached blocks evicted to make room for running requests */
    /* speculative decoding (docs/speculative-decoding.md); spec_draft_tokens 0: none */
    char spec_method[8];             /* draft | mtp | eagle */
    int spec_draft_tokens;           /* guesses per step */
    double spec_tokens_per_step;     /* expected tokens a step gives a sequence */
    double spec_acceptance;          /* share of guesses accepted: (tokens per step - 1) / guesses */
    /* request classes (<class>) and, when multiplexed, each model's
     * requests; owned by the service, complete after serving_close. With
     * classes, slo_attainment counts each request against its class's SLO
     * and slo_met means every class met its own percentile. */
    const service_part_result *classes, *by_model;
    int n_classes, n_by_model;
} service_result;

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
    /* Whether the GPUs of two held requests (handles) share one NVLink
     * domain (a disaggregated service's KV cache then moves over NVLink).
     * May be NULL: they do not. */
    int (*same_domain)(void *ctx, int handle_a, int handle_b);
} serving_host;

#endif
