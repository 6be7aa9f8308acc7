/*
 * cost: money, energy and CO2 of a run (the model is described in cost.h).
 *
 * Every constant below is named with its source. Where no measurement
 * exists the figure is marked as an engineering estimate; the defaults can
 * be changed per scenario (<cost pue= carbon-per-kwh= electricity-price=
 * owned=>) and per hardware (<catalog> tdp, idle-power, overhead-power,
 * price-per-hour).
 *
 * Cost: a few multiplications per pool; no allocation, no I/O.
 */
#include "models/cost.h"

#include <math.h>
#include <string.h>

/* ---- Sources of the defaults (cost.h) -------------------------------------
 *
 * COST_DEFAULT_PUE 1.2: a modern, purpose-built AI facility. Hyperscale fleets
 *   report 1.08-1.12 (Google's fleet trailing-twelve-month PUE ~1.10 in
 *   2021-2023); the industry average is 1.58 (Uptime Institute Global Data
 *   Center Survey 2023), held flat at 1.55-1.59 since 2020.
 * COST_DEFAULT_CARBON_KG_PER_KWH 0.39: US average, 2022: 1.65 billion metric
 *   tons of CO2 for 4.23 trillion kWh from utility-scale plants, 0.86 lb/kWh
 *   (EIA FAQ "How much carbon dioxide is produced per kilowatthour of U.S.
 *   electricity generation?"; 0.81 lb = 0.37 kg for 2023).
 * COST_DEFAULT_ELECTRICITY_USD_PER_KWH 0.08: US industrial average retail
 *   price, 8.06 cents/kWh in 2023 (EIA Electric Power Annual / Electric Power
 *   Monthly table 5.3).
 * COST_OWNED_CAPEX_FRACTION 0.5 (engineering estimate): an 8-GPU H100 server
 *   costs ~$300-400K, ~$400K with its share of the fabric and storage;
 *   straight-line over 4 years that is 400000 / (4 · 8760 · 8) = $1.43 per
 *   GPU-hour, 0.48 of the $2.99 on-demand list price, ~0.5 with support
 *   contracts. Facility (space, cooling plant) is in the PUE and the
 *   electricity price, not here.
 * COST_HOURS_PER_MONTH 730: 365 d × 24 h / 12, the convention cloud storage
 *   prices per GB-month use (AWS bills 730 hours a month).
 */

/* Activity of a GPU in each state (P = idle + (TDP - idle) · activity).
 *
 * ACTIVITY_TRAINING 0.9 (0.91 of TDP on an H100): dense LLM training holds
 *   the GPUs near their power limit; an 8-GPU H100 node training measured
 *   at most 8.4 kW (Latif et al., "Empirical Measurements
 *   of AI Training Power Demand on a GPU-Accelerated Node", IEEE Access
 *   2025, arXiv:2412.08602), compute-intensive work at 76% of the 10.2 kW
 *   rating = 7.75 kW (Newkirk et al., arXiv:2506.14551, 2025). With 0.9,
 *   8 × 637 W + 2800 W × 0.95 = 7.76 kW.
 * ACTIVITY_CHECKPOINT 0.1 (engineering estimate): during a checkpoint stall
 *   the SMs wait while copy engines move the shard to host memory or
 *   storage; HBM and PCIe are busy, the tensor cores are not.
 * ACTIVITY_RESTARTING 0.05 (engineering estimate): GPUs held by a job that
 *   is down, waiting for nodes, starting processes or loading a checkpoint:
 *   contexts allocated and clocks up, no kernels: a little above idle.
 * ACTIVITY_BATCH 0.5: generic research jobs on shared clusters keep their
 *   GPUs about half busy (Jeon et al., "Analysis of Large-Scale
 *   Multi-Tenant GPU Clusters for DNN Training Workloads", ATC 2019, on
 *   Microsoft's Philly; Gao et al., "An Empirical Study on Low GPU
 *   Utilization of Deep Learning Jobs", ICSE 2024).
 *
 * Serving replicas (LLM inference) draw what their work draws; sim/serving.c
 * integrates each replica's GPU-seconds in four activities, splitting a
 * mixed iteration into what its decode tokens alone would take and the rest
 * (the prompt tokens' compute):
 * ACTIVITY_SERVING_PREFILL 0.9 (637 W on an H100): prompt computation is
 *   compute-bound like training's GEMMs; on a DGX H100 the prompt phase of
 *   Llama2-70B and BLOOM-176B draws close to the 700 W TDP and slows down
 *   when power is capped (Patel et al., "Splitwise: Efficient Generative
 *   LLM Inference Using Phase Splitting", ISCA 2024, section III, power).
 * ACTIVITY_SERVING_DECODE 0.35 (291 W on an H100): token generation is
 *   bound by HBM reads of weights and KV cache and leaves the tensor cores
 *   mostly idle; Splitwise measures the token phase well below TDP and
 *   insensitive to a power cap at 50% of TDP (350 W), and decode on an H200
 *   (700 W TDP) draws 137-300 W across GQA, MLA and linear-attention models
 *   (Ma, Afzal, Eitzinger and Wellein, "The Illusion of Power Capping in LLM
 *   Decode", 2026). 0.35 is the top of that range: a loaded service decodes
 *   large batches.
 * ACTIVITY_SERVING_IDLE 0.05 (engineering estimate, as a job's restarting
 *   state): weights resident, CUDA context and graphs held, clocks up, no
 *   kernels while no request is in the replica: a little above idle_w.
 * ACTIVITY_SERVING_LOADING 0.1 (engineering estimate, as a checkpoint
 *   stall): start-up, a model load or a KV swap moves bytes over PCIe into
 *   HBM while the SMs wait.
 */
#define ACTIVITY_TRAINING 0.9
#define ACTIVITY_CHECKPOINT 0.1
#define ACTIVITY_RESTARTING 0.05
#define ACTIVITY_BATCH 0.5
#define ACTIVITY_SERVING_PREFILL 0.9
#define ACTIVITY_SERVING_DECODE 0.35
#define ACTIVITY_SERVING_IDLE 0.05
#define ACTIVITY_SERVING_LOADING 0.1

/* NODE_IDLE_FRACTION 0.5: a server doing no work still draws about half its
 * full power (Barroso and Hölzle, "The Case for Energy-Proportional
 * Computing", IEEE Computer 2007, Fig. 2). Applied to the node's non-GPU
 * overhead, which the catalog quotes at load. */
#define NODE_IDLE_FRACTION 0.5

#define J_PER_KWH 3.6e6
#define BYTES_PER_TB 1e12

static const double activity[COST_STATE_COUNT] = {
    [COST_TRAINING] = ACTIVITY_TRAINING,
    [COST_CHECKPOINT] = ACTIVITY_CHECKPOINT,
    [COST_RESTARTING] = ACTIVITY_RESTARTING,
    [COST_BATCH] = ACTIVITY_BATCH,
    [COST_SERVING_PREFILL] = ACTIVITY_SERVING_PREFILL,
    [COST_SERVING_DECODE] = ACTIVITY_SERVING_DECODE,
    [COST_SERVING_IDLE] = ACTIVITY_SERVING_IDLE,
    [COST_SERVING_LOADING] = ACTIVITY_SERVING_LOADING,
};

static const char *const state_names[COST_STATE_COUNT] = {
    "training", "checkpoint", "restarting", "batch", "serving-prefill", "serving-decode", "serving-idle",
    "serving-loading"
};

const char *cost_state_name(cost_state s) {
    return ((int)s >= 0 && s < COST_STATE_COUNT) ? state_names[s] : "?";
}

double cost_activity(cost_state s) {
    return ((int)s >= 0 && s < COST_STATE_COUNT) ? activity[s] : 0;
}

double cost_gpu_power_w(double idle_w, double tdp_w, double a) {
    if (!(a > 0)) a = 0;
    if (a > 1) a = 1;
    return idle_w + (tdp_w - idle_w) * a;
}

double cost_price_per_gpu_hour(const node_spec *node, const gpu_spec *gpu) {
    if (node && node->price_per_hour_usd > 0 && node->gpus > 0)
        return node->price_per_hour_usd / node->gpus;
    if (gpu && gpu->price_per_hour_usd > 0) return gpu->price_per_hour_usd;
    return 0;
}

/* A figure that must be finite and >= 0. */
static int bad(double x) { return !isfinite(x) || x < 0; }

/* Recompute the figures derived from the sums (all linear in the parts). */
static void derive(cost_result *r) {
    const cost_params *p = &r->params;
    r->it_kwh = r->gpu_kwh + r->overhead_kwh;
    r->energy_kwh = r->it_kwh * p->pue;
    r->co2_kg = r->energy_kwh * p->carbon_kg_per_kwh;
    /* Cloud burst energy is paid inside the cloud price; electricity_usd
     * accumulates only the owned pools' share (cost_add_pool). */
    r->cost_usd = r->compute_usd + r->storage_usd + r->cloud_usd + r->electricity_usd;
    double t = p->simulated_s;
    r->avg_it_power_w = t > 0 ? r->it_kwh * J_PER_KWH / t : 0;
    r->avg_power_w = t > 0 ? r->energy_kwh * J_PER_KWH / t : 0;
}

int cost_init(cost_result *r, const cost_params *p) {
    if (!r || !p) return -1;
    if (bad(p->simulated_s) || bad(p->pue) || bad(p->carbon_kg_per_kwh) || bad(p->electricity_usd_per_kwh))
        return -1;
    if (p->pue > 0 && p->pue < 1) return -1;
    memset(r, 0, sizeof *r);
    r->params = *p;
    r->params.owned = p->owned != 0;
    if (r->params.pue == 0) r->params.pue = COST_DEFAULT_PUE;
    if (r->params.carbon_kg_per_kwh == 0) r->params.carbon_kg_per_kwh = COST_DEFAULT_CARBON_KG_PER_KWH;
    if (r->params.electricity_usd_per_kwh == 0)
        r->params.electricity_usd_per_kwh = COST_DEFAULT_ELECTRICITY_USD_PER_KWH;
    return 0;
}

int cost_add_pool(cost_result *r, const cost_pool *p) {
    if (!r || !p) return -1;
    if (bad(p->node_s) || bad(p->gpu_idle_w) || bad(p->gpu_tdp_w) || bad(p->node_overhead_w) ||
        bad(p->price_per_gpu_hour_usd) || p->gpu_tdp_w < p->gpu_idle_w)
        return -1;
    if (p->node_s > 0 && p->gpus_per_node < 1) return -1;
    if (p->gpus_per_node < 0) return -1;
    double gpu_s = p->node_s * p->gpus_per_node, held_s = 0, active_s = 0;
    for (int i = 0; i < COST_STATE_COUNT; i++) {
        if (bad(p->gpu_state_s[i])) return -1;
        held_s += p->gpu_state_s[i];
        active_s += p->gpu_state_s[i] * activity[i];   /* GPU-seconds at full activity */
    }
    if (held_s > gpu_s * (1 + 1e-9) + 1e-6) return -1;

    /* Energy: GPUs from idle up by their activity; node overhead from half
     * at idle up with the mean activity of its GPUs. */
    double gpu_j = p->gpu_idle_w * gpu_s + (p->gpu_tdp_w - p->gpu_idle_w) * active_s;
    double load_node_s = p->gpus_per_node > 0 ? active_s / p->gpus_per_node : 0;
    double over_j = p->node_overhead_w * (NODE_IDLE_FRACTION * p->node_s + (1 - NODE_IDLE_FRACTION) * load_node_s);
    double gpu_kwh = gpu_j / J_PER_KWH, over_kwh = over_j / J_PER_KWH;
    r->gpu_kwh += gpu_kwh;
    r->overhead_kwh += over_kwh;

    /* Money. */
    double gpu_h = gpu_s / 3600.0, list_usd = gpu_h * p->price_per_gpu_hour_usd;
    if (p->cloud_burst) {
        r->cloud_gpu_hours += gpu_h;
        r->cloud_usd += list_usd;
    } else {
        r->gpu_hours += gpu_h;
        if (r->params.owned) {
            r->compute_usd += list_usd * COST_OWNED_CAPEX_FRACTION;
            r->electricity_usd += (gpu_kwh + over_kwh) * r->params.pue * r->params.electricity_usd_per_kwh;
        } else {
            r->compute_usd += list_usd;
        }
    }
    derive(r);
    return 0;
}

int cost_add_storage(cost_result *r, const cost_storage *s) {
    if (!r || !s) return -1;
    if (bad(s->capacity_bytes) || bad(s->price_per_tb_month_usd) || bad(s->held_s)) return -1;
    double tb_months = s->capacity_bytes / BYTES_PER_TB * (s->held_s / 3600.0 / COST_HOURS_PER_MONTH);
    r->storage_tb_months += tb_months;
    r->storage_usd += tb_months * s->price_per_tb_month_usd;
    derive(r);
    return 0;
}

int cost_compute(const cost_input *in, cost_result *out) {
    if (!in || !out || in->n_pools < 0 || in->n_storage < 0) return -1;
    if ((in->n_pools > 0 && !in->pools) || (in->n_storage > 0 && !in->storage)) return -1;
    cost_result r;
    if (cost_init(&r, &in->params) < 0) return -1;
    for (int i = 0; i < in->n_pools; i++)
        if (cost_add_pool(&r, &in->pools[i]) < 0) return -1;
    for (int i = 0; i < in->n_storage; i++)
        if (cost_add_storage(&r, &in->storage[i]) < 0) return -1;
    *out = r;
    return 0;
}
