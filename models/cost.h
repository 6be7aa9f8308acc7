/*
 * cost: what a run costs in money, energy and CO2.
 *
 * Pure functions of plain structs: the caller says how long each node pool
 * was provisioned and how its GPUs spent that time (GPU-seconds by state);
 * the model prices it. Linear in everything, so a result is a sum of parts:
 * cost_add_pool() and cost_add_storage() accumulate into one cost_result,
 * cost_compute() does the whole input at once. Money in USD, energy in kWh,
 * power in W, time in seconds.
 *
 * Power of one GPU in a state (idle_w and tdp_w from the catalog):
 *
 *   P_gpu(state) = idle_w + (tdp_w - idle_w) · activity(state)
 *
 *   state        activity  H100 (70 W idle, 700 W TDP)
 *   ───────────  ────────  ───────────────────────────
 *   training       0.90     637 W = 0.91 TDP
 *   checkpoint     0.10     133 W   (stalled on the copy to host memory)
 *   restarting     0.05     102 W   (down, waiting, restarting, loading)
 *   batch          0.50     385 W   (generic research jobs)
 *   serving, by what the replica does (sim/serving.c integrates each):
 *     prefill      0.90     637 W   (prompt tokens: compute-bound GEMMs)
 *     decode       0.35     291 W   (output tokens: memory-bound weight and KV reads)
 *     idle         0.05     102 W   (weights loaded, waiting for requests)
 *     loading      0.10     133 W   (start-up, model loads, KV swaps over PCIe)
 *   idle           0        70 W    (also failed and spare nodes)
 *
 * Node overhead (CPUs, memory, NICs, fans: node_spec overhead_w, quoted at
 * load) scales with the node's mean GPU activity a from half at idle:
 *
 *   P_node = gpus · mean P_gpu + overhead_w · (0.5 + 0.5 · a)
 *
 * A DGX H100 training: 8 × 637 + 2800 × 0.95 = 7.76 kW, against 7.75 kW
 * measured (76% of its 10.2 kW rating, Newkirk et al. 2025). IT energy is
 * the sum over the nodes; facility energy is IT × PUE; CO2 is facility
 * energy × the grid's intensity.
 *
 * Money:
 *   cloud (default)  compute = provisioned GPU-hours × on-demand price per
 *                    GPU-hour (node price / GPUs, else the GPU's price);
 *                    energy is in the price (electricity_usd = 0).
 *   owned            compute = the same GPU-hours × COST_OWNED_CAPEX_FRACTION
 *                    of that price (amortised purchase), plus electricity =
 *                    facility kWh × the electricity price.
 *   storage          capacity (decimal TB) × $/TB-month × months held
 *                    (a month is 730 h = 365 d / 12).
 *   cloud burst      pools rented on demand (cost_pool.cloud_burst) are
 *                    priced on demand in either case, into cloud_usd.
 * Storage systems' and switches' own power is not modelled.
 */
#ifndef CT_COST_H
#define CT_COST_H

#include "models/catalog.h"

/* Defaults, used where a parameter is 0 (sources in models/cost.c). */
#define COST_DEFAULT_PUE 1.2
#define COST_DEFAULT_CARBON_KG_PER_KWH 0.39
#define COST_DEFAULT_ELECTRICITY_USD_PER_KWH 0.08
#define COST_OWNED_CAPEX_FRACTION 0.5
#define COST_HOURS_PER_MONTH 730.0

/* What a GPU held by a job is doing; idle is what is left of the
 * provisioned time. */
typedef enum cost_state {
    COST_TRAINING,      /* training steps (kept or redone) */
    COST_CHECKPOINT,    /* training stopped for a checkpoint */
    COST_RESTARTING,    /* a job down, waiting for nodes, restarting, loading */
    COST_BATCH,         /* generic batch jobs */
    COST_SERVING_PREFILL,   /* a serving replica computing prompt tokens */
    COST_SERVING_DECODE,    /* a serving replica generating output tokens */
    COST_SERVING_IDLE,      /* a serving replica loaded and waiting for requests */
    COST_SERVING_LOADING,   /* a serving replica starting, loading a model, swapping KV */
    COST_STATE_COUNT
} cost_state;

const char *cost_state_name(cost_state s);      /* "training", "serving-prefill", ...; "?" out of range */

/* Activity in [0, 1] of a GPU in state s (the table above); 0 out of range. */
double cost_activity(cost_state s);

/* Power of one GPU at activity a (clamped to [0, 1]): the line from idle_w
 * to tdp_w. */
double cost_gpu_power_w(double idle_w, double tdp_w, double activity);

/* On-demand price of one GPU-hour of a node type: node price / GPUs when
 * the node has a price, else the GPU's price (gpu may be NULL). 0 when
 * neither has one. */
double cost_price_per_gpu_hour(const node_spec *node, const gpu_spec *gpu);

/* One node pool (a node type, or the cloud nodes of one type). */
typedef struct cost_pool {
    int gpus_per_node;
    double node_s;                         /* provisioned node-seconds (nodes × time held) */
    double gpu_state_s[COST_STATE_COUNT];  /* GPU-seconds held by jobs in each state;
                                              their sum <= node_s · gpus_per_node */
    double gpu_idle_w, gpu_tdp_w;          /* catalog gpu_spec idle_w, tdp_w */
    double node_overhead_w;                /* catalog node_spec overhead_w */
    double price_per_gpu_hour_usd;         /* on-demand (cost_price_per_gpu_hour) */
    int cloud_burst;                       /* 1: rented on demand (cloud_usd) */
} cost_pool;

/* The facility and the contract. 0 = default for the three numbers. */
typedef struct cost_params {
    double simulated_s;                    /* for average power; > 0 to get it */
    double pue;                            /* facility energy / IT energy, >= 1 */
    double carbon_kg_per_kwh;              /* grid carbon intensity */
    double electricity_usd_per_kwh;        /* paid by owned clusters */
    int owned;                             /* 1: owned (amortised capex + electricity) */
} cost_params;

typedef struct cost_storage {
    double capacity_bytes;
    double price_per_tb_month_usd;
    double held_s;                         /* seconds the capacity is paid for */
} cost_storage;

typedef struct cost_input {
    cost_params params;
    const cost_pool *pools;     int n_pools;
    const cost_storage *storage; int n_storage;
} cost_input;

typedef struct cost_result {
    cost_params params;            /* as used: defaults filled in */
    double cost_usd;               /* compute + storage + cloud + electricity */
    double compute_usd;            /* the cluster's own nodes */
    double storage_usd;
    double cloud_usd;              /* cloud burst nodes, on demand */
    double electricity_usd;        /* owned only */
    double gpu_hours;              /* provisioned, own nodes */
    double cloud_gpu_hours;        /* provisioned, cloud burst nodes */
    double storage_tb_months;
    double gpu_kwh;                /* GPUs */
    double overhead_kwh;           /* the rest of the nodes */
    double it_kwh;                 /* gpu + overhead */
    double energy_kwh;             /* facility: it × PUE */
    double co2_kg;
    double avg_it_power_w;         /* it_kwh over simulated time; 0 without it */
    double avg_power_w;            /* facility */
} cost_result;

/* Start an empty result: copies p with defaults filled in. Returns 0, or
 * -1 when p is invalid (NULL, negative or non-finite figures, pue < 1 when
 * given); r is then left unchanged. */
int cost_init(cost_result *r, const cost_params *p);

/* Add a pool's energy and money to r. Returns 0, or -1 on invalid input
 * (negative or non-finite figures, gpus_per_node < 1 with node_s > 0,
 * tdp_w < idle_w, GPU states summing beyond the provisioned GPU-seconds by
 * more than 1e-9 relative); r is then unchanged. */
int cost_add_pool(cost_result *r, const cost_pool *p);

/* Add one storage system. Returns 0, or -1 on negative or non-finite
 * figures (r unchanged). */
int cost_add_storage(cost_result *r, const cost_storage *s);

/* The whole input: cost_init, then every pool and storage system. Returns
 * 0, or -1 on invalid input (out unchanged). Allocation-free. */
int cost_compute(const cost_input *in, cost_result *out);

#endif
