/*
 * test_cost: money, energy and CO2 of a run (models/cost.c).
 *
 * What it models: a cluster's node pools provisioned for a time, their
 * GPUs' time by state (training, checkpoint, restarting, batch, serving
 * prefill, decode, idle and loading, idle), the
 * GPUs' power from idle to TDP by activity, the nodes' non-GPU overhead,
 * the facility's PUE, the grid's carbon intensity, cloud vs owned pricing
 * and storage by the TB-month.
 *
 * Expected figures and where they come from (hand arithmetic in each test):
 *   - One GPU at its 700 W TDP for an hour is 0.7 kWh; at PUE 1.2, 0.84 kWh
 *     from the grid; at 0.39 kg/kWh (EIA, US 2022), 0.3276 kg CO2.
 *   - A DGX H100 training for an hour: 8 × (70 + 630 × 0.9) W + 2800 W ×
 *     (0.5 + 0.5 × 0.9) = 5096 + 2660 = 7756 Wh, against 7.75 kW measured
 *     on 8-GPU H100 nodes training (76% of the 10.2 kW rating, Newkirk et
 *     al. 2025) and at most 8.4 kW (Latif et al. 2025): held within 2% of
 *     the first and below the second.
 *   - Cloud: a DGX H100 hour at the catalog's $23.92; owned: half of that
 *     plus the facility's kWh at $0.08.
 *   - 10 PB of parallel file system at $140/TB-month for 730 h: $1.4M.
 *   - The default and the 16K-GPU scenarios: every figure positive, parts
 *     summing to the total, and facility energy between the all-idle floor
 *     and the all-at-TDP ceiling (GPUs · TDP · time + nodes · overhead ·
 *     time) · PUE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/cost.h"
#include "reports/json.h"
#include "reports/results.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

#define HOUR 3600.0

static void near(double got, double want, double rel, const char *what) {
    double tol = rel * fabs(want) + 1e-12;
    if (!(fabs(got - want) <= tol)) fail_msg("%s: got %.10g, want %.10g (+- %.3g)", what, got, want, tol);
}

/* One DGX H100 (catalog figures) provisioned for `hours`, nothing running. */
static cost_pool dgx_h100(double hours) {
    cost_pool p = { .gpus_per_node = 8, .node_s = hours * HOUR, .gpu_idle_w = 70, .gpu_tdp_w = 700,
                    .node_overhead_w = 2800, .price_per_gpu_hour_usd = 23.92 / 8 };
    return p;
}

static cost_result one(const cost_params *prm, const cost_pool *p) {
    cost_result r;
    assert_int_equal(cost_init(&r, prm), 0);
    assert_int_equal(cost_add_pool(&r, p), 0);
    return r;
}

/* ---- The power curve ------------------------------------------------------ */

static void test_power_curve(void **state) {
    (void)state;
    near(cost_gpu_power_w(70, 700, 0), 70, 1e-12, "idle");
    near(cost_gpu_power_w(70, 700, 1), 700, 1e-12, "full activity is the TDP");
    near(cost_gpu_power_w(70, 700, 2), 700, 1e-12, "capped at the TDP");
    near(cost_gpu_power_w(70, 700, -1), 70, 1e-12, "never below idle");
    near(cost_gpu_power_w(70, 700, NAN), 70, 1e-12, "NaN activity is idle");
    /* Training an LLM: ~0.9 of TDP (600-700 W on an H100). */
    double train = cost_gpu_power_w(70, 700, cost_activity(COST_TRAINING));
    near(train, 637, 1e-12, "H100 training");
    assert_true(train >= 600 && train <= 700);
    /* Stalled and restarting GPUs are near idle; batch jobs in between. */
    assert_true(cost_activity(COST_CHECKPOINT) <= 0.2);
    assert_true(cost_activity(COST_RESTARTING) <= cost_activity(COST_CHECKPOINT));
    assert_true(cost_activity(COST_BATCH) > cost_activity(COST_CHECKPOINT));
    assert_true(cost_activity(COST_BATCH) < cost_activity(COST_TRAINING));
    assert_true(cost_activity((cost_state)99) == 0);
    assert_string_equal(cost_state_name(COST_TRAINING), "training");
    assert_string_equal(cost_state_name((cost_state)-1), "?");
}

static void test_price_per_gpu_hour(void **state) {
    (void)state;
    node_spec n = { .gpus = 8, .price_per_hour_usd = 23.92 };
    gpu_spec g = { .price_per_hour_usd = 2.50 };
    near(cost_price_per_gpu_hour(&n, &g), 2.99, 1e-12, "node price / GPUs");
    n.price_per_hour_usd = 0;
    near(cost_price_per_gpu_hour(&n, &g), 2.50, 1e-12, "the GPU's price without a node price");
    assert_true(cost_price_per_gpu_hour(&n, NULL) == 0);
    assert_true(cost_price_per_gpu_hour(NULL, NULL) == 0);
}

/* ---- Hand-computed cases -------------------------------------------------- */

/* One GPU drawing its 700 W TDP for an hour (idle = TDP: a flat curve, so
 * the state does not matter): 0.7 kWh IT, 0.84 kWh at PUE 1.2, 0.3276 kg. */
static void test_one_gpu_hour_at_tdp(void **state) {
    (void)state;
    cost_pool p = { .gpus_per_node = 1, .node_s = HOUR, .gpu_idle_w = 700, .gpu_tdp_w = 700 };
    p.gpu_state_s[COST_TRAINING] = HOUR;
    cost_params prm = { .simulated_s = HOUR };
    cost_result r = one(&prm, &p);
    near(r.gpu_kwh, 0.7, 1e-12, "GPU kWh");
    near(r.overhead_kwh, 0, 1e-12, "no overhead");
    near(r.it_kwh, 0.7, 1e-12, "IT kWh");
    near(r.params.pue, 1.2, 0, "default PUE");
    near(r.energy_kwh, 0.84, 1e-12, "facility kWh");
    near(r.params.carbon_kg_per_kwh, 0.39, 0, "default carbon");
    near(r.co2_kg, 0.84 * 0.39, 1e-12, "CO2");
    near(r.avg_it_power_w, 700, 1e-12, "average IT power");
    near(r.avg_power_w, 840, 1e-12, "average facility power");
    near(r.gpu_hours, 1, 1e-12, "GPU-hours");
}

/* A DGX H100 training for an hour against the published node measurements. */
static void test_dgx_h100_training_hour(void **state) {
    (void)state;
    cost_pool p = dgx_h100(1);
    p.gpu_state_s[COST_TRAINING] = 8 * HOUR;
    cost_params prm = { .simulated_s = HOUR, .pue = 1 };
    cost_result r = one(&prm, &p);
    near(r.gpu_kwh, 8 * 0.637, 1e-12, "GPUs: 8 x 637 W");
    near(r.overhead_kwh, 2.8 * 0.95, 1e-12, "overhead: 2800 W x (0.5 + 0.5 x 0.9)");
    near(r.avg_it_power_w, 7756, 1e-12, "node power");
    near(r.avg_it_power_w, 0.76 * 10200, 0.02, "Newkirk et al.: 76% of 10.2 kW");
    assert_true(r.avg_it_power_w < 8400);   /* Latif et al.: max observed 8.4 kW */
    near(r.energy_kwh, r.it_kwh, 1e-12, "PUE 1");
}

/* Idle nodes still draw: 8 x 70 W + half the overhead. */
static void test_idle_node(void **state) {
    (void)state;
    cost_pool p = dgx_h100(10);
    cost_params prm = { .simulated_s = 10 * HOUR, .pue = 1 };
    cost_result r = one(&prm, &p);
    near(r.avg_it_power_w, 8 * 70 + 1400, 1e-12, "idle DGX H100");
    near(r.it_kwh, 19.6, 1e-12, "10 idle hours");
}

/* Each state at its activity: eight GPUs of one node held one hour, one
 * hour in each state (training, checkpoint, restarting, batch, serving
 * prefill, decode, idle, loading). GPU: 8 x 70 + 630 x (0.9 + 0.1 + 0.05 +
 * 0.5 + 0.9 + 0.35 + 0.05 + 0.1) = 560 + 630 x 2.95 = 2418.5 Wh; overhead
 * 1000 W x (0.5 + 0.5 x 2.95 / 8) = 684.375 Wh. */
static void test_states(void **state) {
    (void)state;
    cost_pool p = { .gpus_per_node = COST_STATE_COUNT, .node_s = HOUR, .gpu_idle_w = 70, .gpu_tdp_w = 700,
                    .node_overhead_w = 1000 };
    for (int i = 0; i < COST_STATE_COUNT; i++) p.gpu_state_s[i] = HOUR;
    cost_params prm = { .simulated_s = HOUR, .pue = 1 };
    cost_result r = one(&prm, &p);
    near(r.gpu_kwh, 2.4185, 1e-12, "GPU energy by state");
    near(r.overhead_kwh, 0.684375, 1e-12, "overhead by mean activity");
}

/* Serving power by what a replica does (cost.c sources): prompt compute
 * near TDP like training (Splitwise, ISCA 2024), decode memory-bound at
 * 137-300 W of a 700 W GPU (Ma et al. 2026), a loaded idle replica and one
 * loading weights a little above idle. On an H100 (70 W idle, 700 W TDP). */
static void test_serving_states(void **state) {
    (void)state;
    double pre = cost_gpu_power_w(70, 700, cost_activity(COST_SERVING_PREFILL));
    double dec = cost_gpu_power_w(70, 700, cost_activity(COST_SERVING_DECODE));
    double idle = cost_gpu_power_w(70, 700, cost_activity(COST_SERVING_IDLE));
    double load = cost_gpu_power_w(70, 700, cost_activity(COST_SERVING_LOADING));
    assert_true(pre >= 0.9 * 700 && pre <= 700);
    assert_true(dec >= 137 && dec <= 300);
    assert_true(idle > 70 && idle < dec && load < dec);
    near(pre, cost_gpu_power_w(70, 700, cost_activity(COST_TRAINING)), 0, "prefill draws what training draws");
    assert_string_equal(cost_state_name(COST_SERVING_DECODE), "serving-decode");
}

static void test_pue_and_carbon(void **state) {
    (void)state;
    cost_pool p = dgx_h100(1);
    p.gpu_state_s[COST_TRAINING] = 8 * HOUR;
    cost_params prm = { .simulated_s = HOUR, .pue = 1.5, .carbon_kg_per_kwh = 0.1 };
    cost_result r = one(&prm, &p);
    near(r.energy_kwh, 7.756 * 1.5, 1e-12, "PUE 1.5");
    near(r.co2_kg, 7.756 * 1.5 * 0.1, 1e-12, "0.1 kg/kWh");
    near(r.avg_power_w, 7756 * 1.5, 1e-12, "facility power");
}

/* Cloud: list price, energy included. Owned: half the list price plus
 * the facility's energy at the electricity price. */
static void test_owned_vs_cloud(void **state) {
    (void)state;
    cost_pool p = dgx_h100(1);
    p.gpu_state_s[COST_TRAINING] = 8 * HOUR;
    cost_params cloud = { .simulated_s = HOUR };
    cost_result c = one(&cloud, &p);
    near(c.compute_usd, 23.92, 1e-12, "cloud: node-hour at list price");
    near(c.electricity_usd, 0, 0, "cloud: energy in the price");
    near(c.cost_usd, 23.92, 1e-12, "cloud total");

    cost_params owned = { .simulated_s = HOUR, .owned = 1 };
    cost_result o = one(&owned, &p);
    near(o.params.electricity_usd_per_kwh, 0.08, 0, "default electricity price");
    near(o.compute_usd, 23.92 * COST_OWNED_CAPEX_FRACTION, 1e-12, "owned: amortised");
    near(o.electricity_usd, 7.756 * 1.2 * 0.08, 1e-12, "owned: facility kWh x price");
    near(o.cost_usd, 11.96 + 7.756 * 1.2 * 0.08, 1e-12, "owned total");
    near(o.energy_kwh, c.energy_kwh, 1e-12, "same energy either way");
    assert_true(o.cost_usd < c.cost_usd);

    owned.electricity_usd_per_kwh = 0.2;
    o = one(&owned, &p);
    near(o.electricity_usd, 7.756 * 1.2 * 0.2, 1e-12, "given electricity price");
}

/* Storage: decimal TB x $/TB-month x months of 730 h. */
static void test_storage(void **state) {
    (void)state;
    cost_result r;
    cost_params prm = { .simulated_s = 730 * HOUR };
    assert_int_equal(cost_init(&r, &prm), 0);
    cost_storage s = { 10e15, 140, 730 * HOUR };
    assert_int_equal(cost_add_storage(&r, &s), 0);
    near(r.storage_tb_months, 10000, 1e-12, "10 PB for a month");
    near(r.storage_usd, 1.4e6, 1e-12, "$1.4M");
    near(r.cost_usd, 1.4e6, 1e-12, "total");
    cost_storage s2 = { 1e12, 23, 54 * 24 * HOUR };   /* 1 TB of object storage for 54 days */
    assert_int_equal(cost_add_storage(&r, &s2), 0);
    near(r.storage_usd, 1.4e6 + 23 * 54 * 24 / 730.0, 1e-12, "54 days");
    assert_true(r.energy_kwh == 0);   /* storage power is not modelled */
}

/* Cloud burst nodes: on-demand price even in an owned cluster, no
 * electricity bill, energy and CO2 counted. */
static void test_cloud_burst(void **state) {
    (void)state;
    cost_pool own = dgx_h100(2), burst = dgx_h100(2);
    own.gpu_state_s[COST_TRAINING] = 16 * HOUR;
    burst.gpu_state_s[COST_TRAINING] = 16 * HOUR;
    burst.cloud_burst = 1;
    cost_params prm = { .simulated_s = 2 * HOUR, .owned = 1 };
    cost_result r;
    assert_int_equal(cost_init(&r, &prm), 0);
    assert_int_equal(cost_add_pool(&r, &own), 0);
    double elec = r.electricity_usd;
    assert_int_equal(cost_add_pool(&r, &burst), 0);
    near(r.cloud_usd, 2 * 23.92, 1e-12, "burst at list price");
    near(r.cloud_gpu_hours, 16, 1e-12, "burst GPU-hours");
    near(r.gpu_hours, 16, 1e-12, "own GPU-hours");
    near(r.electricity_usd, elec, 1e-12, "no electricity for cloud nodes");
    near(r.it_kwh, 2 * 2 * 7.756, 1e-12, "both pools' energy");
    near(r.cost_usd, r.compute_usd + r.storage_usd + r.cloud_usd + r.electricity_usd, 1e-12, "parts");
}

/* cost_compute over arrays equals the parts added one by one, and a pool
 * split in two gives the same figures (the model is linear). */
static void test_compute_is_sum(void **state) {
    (void)state;
    cost_pool whole = dgx_h100(4);
    whole.gpu_state_s[COST_TRAINING] = 20 * HOUR;
    whole.gpu_state_s[COST_BATCH] = 6 * HOUR;
    cost_pool half = whole;
    half.node_s /= 2;
    for (int i = 0; i < COST_STATE_COUNT; i++) half.gpu_state_s[i] /= 2;
    cost_pool halves[2] = { half, half };
    cost_storage st = { 1e15, 140, 4 * HOUR };
    cost_params prm = { .simulated_s = 4 * HOUR, .pue = 1.3, .carbon_kg_per_kwh = 0.2,
                        .electricity_usd_per_kwh = 0.1, .owned = 1 };
    cost_input a = { .params = prm, .pools = &whole, .n_pools = 1, .storage = &st, .n_storage = 1 };
    cost_input b = { .params = prm, .pools = halves, .n_pools = 2, .storage = &st, .n_storage = 1 };
    cost_result ra, rb;
    assert_int_equal(cost_compute(&a, &ra), 0);
    assert_int_equal(cost_compute(&b, &rb), 0);
    near(rb.cost_usd, ra.cost_usd, 1e-12, "cost");
    near(rb.energy_kwh, ra.energy_kwh, 1e-12, "energy");
    near(rb.co2_kg, ra.co2_kg, 1e-12, "CO2");
    near(rb.avg_power_w, ra.avg_power_w, 1e-12, "power");
    near(ra.energy_kwh, ra.it_kwh * 1.3, 1e-12, "given PUE");
}

static void test_invalid(void **state) {
    (void)state;
    cost_result r, keep;
    cost_params prm = { .simulated_s = HOUR };
    assert_int_equal(cost_init(&r, &prm), 0);
    cost_params badp = { .simulated_s = HOUR, .pue = 0.5 };
    assert_int_equal(cost_init(&r, &badp), -1);
    badp.pue = NAN;
    assert_int_equal(cost_init(&r, &badp), -1);
    badp = (cost_params){ .simulated_s = -1 };
    assert_int_equal(cost_init(&r, &badp), -1);
    assert_int_equal(cost_init(NULL, &prm), -1);
    assert_int_equal(cost_init(&r, NULL), -1);

    keep = r;
    cost_pool p = dgx_h100(1);
    p.gpu_state_s[COST_TRAINING] = 9 * HOUR;          /* more than 8 GPU-hours held */
    assert_int_equal(cost_add_pool(&r, &p), -1);
    p = dgx_h100(1);
    p.gpu_tdp_w = 50;                                 /* below idle */
    assert_int_equal(cost_add_pool(&r, &p), -1);
    p = dgx_h100(1);
    p.gpus_per_node = 0;
    assert_int_equal(cost_add_pool(&r, &p), -1);
    p = dgx_h100(1);
    p.gpu_state_s[COST_BATCH] = -1;
    assert_int_equal(cost_add_pool(&r, &p), -1);
    p = dgx_h100(INFINITY);
    assert_int_equal(cost_add_pool(&r, &p), -1);
    cost_storage s = { -1, 140, HOUR };
    assert_int_equal(cost_add_storage(&r, &s), -1);
    assert_memory_equal(&r, &keep, sizeof r);         /* unchanged */

    cost_input in = { prm, NULL, 1, NULL, 0 };
    cost_result out = keep;
    assert_int_equal(cost_compute(&in, &out), -1);
    cost_pool pools[2] = { dgx_h100(1), dgx_h100(1) };
    pools[1].gpu_tdp_w = 1;
    in = (cost_input){ prm, pools, 2, NULL, 0 };
    assert_int_equal(cost_compute(&in, &out), -1);
    assert_memory_equal(&out, &keep, sizeof out);     /* unchanged */
    assert_int_equal(cost_compute(NULL, &out), -1);

    /* An empty cluster costs nothing. */
    in = (cost_input){ prm, NULL, 0, NULL, 0 };
    assert_int_equal(cost_compute(&in, &out), 0);
    assert_true(out.cost_usd == 0 && out.energy_kwh == 0 && out.co2_kg == 0);
}

/* ---- Whole scenarios ------------------------------------------------------ */

typedef struct run {
    scenario *s;
    metric_bus *bus;
    world *w;
} run;

static run simulate_file(const char *path, const char *xml) {
    run r = { 0 };
    char err[2048] = "";
    int rc = xml ? scenario_load_memory(xml, strlen(xml), "test.xml", &r.s, err, sizeof err)
                 : scenario_load(path, &r.s, err, sizeof err);
    if (rc != 0) fail_msg("scenario does not load: %s", err);
    r.bus = metrics_new();
    r.w = world_new(r.s, r.bus, err, sizeof err);
    if (!r.w) fail_msg("world does not build: %s", err);
    world_run(r.w, 0);
    return r;
}

static void done(run *r) {
    world_free(r->w);
    metrics_free(r->bus);
    scenario_free(r->s);
}

/* Positive figures, parts summing to the total, energy between the all-idle
 * floor and the all-at-TDP ceiling (H100: 70 W idle, 700 W TDP; DGX H100
 * overhead 2800 W). */
static void check_consistent(const world_totals *t, const char *what) {
    const cost_result *c = &t->cost;
    double h = t->simulated_s / HOUR, pue = c->params.pue;
    double ceiling = (t->gpus * 0.700 + t->nodes * 2.8) * h * pue;
    double floor_ = (t->gpus * 0.070 + t->nodes * 1.4) * h * pue;
    print_message("%s: %.0f h, cost $%.4g (compute %.4g, storage %.4g, electricity %.4g), "
                  "%.4g MWh facility (%.4g MWh IT), %.4g t CO2, %.3g MW average\n",
                  what, h, c->cost_usd, c->compute_usd, c->storage_usd, c->electricity_usd,
                  c->energy_kwh / 1e3, c->it_kwh / 1e3, c->co2_kg / 1e3, c->avg_power_w / 1e6);
    assert_true(t->simulated_s > 0);
    assert_true(c->cost_usd > 0 && c->energy_kwh > 0 && c->co2_kg > 0 && c->avg_power_w > 0);
    near(t->cost_usd, c->cost_usd, 0, "totals.cost_usd is the model's");
    near(c->cost_usd, c->compute_usd + c->storage_usd + c->cloud_usd + c->electricity_usd, 1e-12, "parts");
    near(c->it_kwh, c->gpu_kwh + c->overhead_kwh, 1e-12, "IT = GPUs + overhead");
    near(c->energy_kwh, c->it_kwh * pue, 1e-12, "facility = IT x PUE");
    near(c->co2_kg, c->energy_kwh * c->params.carbon_kg_per_kwh, 1e-12, "CO2");
    near(c->gpu_hours, t->gpu_hours, 1e-12, "GPU-hours");
    assert_true(c->energy_kwh <= ceiling);
    assert_true(c->energy_kwh >= floor_);
    near(c->avg_power_w * t->simulated_s / 3.6e6, c->energy_kwh, 1e-9, "average power x time");
}

/* The default scenario: 128 DGX H100s on cloud prices: compute is the
 * provisioned node-hours at $23.92. */
static void test_default_scenario(void **state) {
    (void)state;
    run r = simulate_file("scenarios/default.xml", NULL);
    world_totals t = world_get_totals(r.w);
    check_consistent(&t, "default");
    assert_int_equal(t.cost.params.owned, 0);
    near(t.cost.compute_usd, 128 * 23.92 * t.simulated_s / HOUR, 1e-9, "node-hours x price");
    /* Utilisation is 76%: the average power sits between idle and training. */
    double per_node_w = t.cost.avg_it_power_w / t.nodes;
    assert_true(per_node_w > 1960 && per_node_w < 7756);

    /* The JSON carries the contract's names and the parts. */
    json *j = json_new();
    assert_non_null(j);
    results_json(j, r.s, r.w, 0);
    const char *z = json_text(j, NULL);
    assert_non_null(z);
    for (const char *const *k = (const char *const[]){ "\"energy_kwh\"", "\"co2_kg\"", "\"cost_usd\"",
                                                       "\"cost\"", "\"compute_usd\"", "\"storage_usd\"",
                                                       "\"cloud_usd\"", "\"electricity_usd\"", NULL };
         *k; k++)
        if (!strstr(z, *k)) fail_msg("results JSON lacks %s", *k);
    json_free(j);
    done(&r);
}

/* The Llama 3 405B scenario: 2,096 DGX H100s for 54 days. */
static void test_llama3_16k_scenario(void **state) {
    (void)state;
    run r = simulate_file("scenarios/llama3-405b-16k.xml", NULL);
    world_totals t = world_get_totals(r.w);
    check_consistent(&t, "llama3-405b-16k");
    near(t.simulated_s, 54 * 86400, 1e-12, "54 days");
    /* ~98% of GPU time held by the job, mostly training: 7-7.8 kW per node. */
    double per_node_w = t.cost.avg_it_power_w / t.nodes;
    assert_true(per_node_w > 7000 && per_node_w < 7756);
    done(&r);
}

/* <cost owned pue carbon-per-kwh electricity-price> in a scenario, with a
 * storage capacity: the figures follow the attributes. */
static void test_scenario_cost_section(void **state) {
    (void)state;
    static const char xml_fmt[] =
        "<scenario name=\"c\" seed=\"1\" duration=\"10h\">"
        "<cluster><nodes type=\"dgx-h100\" count=\"2\"/>"
        "<storage name=\"ckpt\" kind=\"parallel-fs\" capacity=\"1PB\"/></cluster>"
        "<workload><jobs name=\"b\" count=\"1\" arrivals=\"fixed\" rate=\"1/h\" gpus=\"8\" duration=\"100h\""
        " duration-distribution=\"fixed\"/></workload>%s</scenario>";
    char xml[2048];
    snprintf(xml, sizeof xml, xml_fmt, "");
    run a = simulate_file(NULL, xml);
    snprintf(xml, sizeof xml, xml_fmt,
             "<cost owned=\"true\" pue=\"1.5\" carbon-per-kwh=\"0.05\" electricity-price=\"0.12\"/>");
    run b = simulate_file(NULL, xml);
    world_totals ta = world_get_totals(a.w), tb = world_get_totals(b.w);
    near(ta.simulated_s, 10 * HOUR, 1e-12, "10 h");
    /* Storage: 1000 TB x $140 x 10/730 months. */
    near(ta.cost.storage_usd, 1000 * 140 * 10 / 730.0, 1e-9, "storage");
    near(tb.cost.storage_usd, ta.cost.storage_usd, 1e-12, "storage either way");
    /* Same energy at the IT level; the facility figures follow the PUE. */
    near(tb.cost.it_kwh, ta.cost.it_kwh, 1e-12, "same IT energy");
    near(tb.cost.energy_kwh, ta.cost.it_kwh * 1.5, 1e-12, "PUE 1.5");
    near(tb.cost.co2_kg, tb.cost.energy_kwh * 0.05, 1e-12, "0.05 kg/kWh");
    near(tb.cost.electricity_usd, tb.cost.energy_kwh * 0.12, 1e-12, "owned electricity");
    near(tb.cost.compute_usd, ta.cost.compute_usd * COST_OWNED_CAPEX_FRACTION, 1e-12, "owned compute");
    /* One node running the batch job from t = 0, one idle: hand check of
     * the IT energy over the 10 h: 16 GPUs idle + 80 GPU-hours at 0.5, and
     * the two nodes' overhead from half up with the busy one's activity:
     * 11.2 + 25.2 + 28 + 7 = 71.4 kWh. */
    double batch_h = ta.gpu_batch_s / HOUR;
    near(ta.cost.it_kwh, 71.4, 1e-9, "IT energy by hand");
    near(batch_h, 80, 1e-12, "one 8-GPU job for the 10 h");
    check_consistent(&ta, "cloud");
    check_consistent(&tb, "owned");
    done(&a);
    done(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_curve),
        cmocka_unit_test(test_price_per_gpu_hour),
        cmocka_unit_test(test_one_gpu_hour_at_tdp),
        cmocka_unit_test(test_dgx_h100_training_hour),
        cmocka_unit_test(test_idle_node),
        cmocka_unit_test(test_states),
        cmocka_unit_test(test_serving_states),
        cmocka_unit_test(test_pue_and_carbon),
        cmocka_unit_test(test_owned_vs_cloud),
        cmocka_unit_test(test_storage),
        cmocka_unit_test(test_cloud_burst),
        cmocka_unit_test(test_compute_is_sum),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_default_scenario),
        cmocka_unit_test(test_llama3_16k_scenario),
        cmocka_unit_test(test_scenario_cost_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
