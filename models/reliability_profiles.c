/*
 * reliability_profiles: the built-in fleet failure profiles, as data, and
 * the one conversion from a profile's counts to per-instance MTBFs.
 *
 * A profile is what a published study saw: failures by cause, each
 * charged to a component class (GPU, HBM, node, NIC, switch, storage,
 * software), over an exposure (a window times the GPUs, nodes and NICs
 * observed). A cause seen n times in a window T by a fleet with I
 * instances of its class has, under a Poisson process per instance,
 *
 *     λ = n / (T · I),   MTBF = T · I / n,
 *
 * so the observed fleet expects exactly n such failures in T, and any
 * other job sees the cause at a rate proportional to its own instance
 * count. I is the GPU count for GPU, HBM and software causes (software per
 * rank: a bug's chance to fire grows with the ranks running it), the
 * compute-NIC count for NICs, and the node count for host, SSD and network
 * switch/cable causes (a node's links and its share of switch ports).
 *
 * Where a study gives only a total rate (failures per node-day, or "per
 * week" for a fleet), its profile is a single cause of the class the rate
 * is counted against, with that rate: the study's mix of causes is not
 * published, so it is not invented. The mean time to repair of each cause
 * is an engineering estimate (REL_MTTR_*, reliability.h): no study below
 * publishes component repair times.
 *
 * docs/failure-profiles.md lists each profile with its numbers and source;
 * tests/validation/failures.csv checks each against its own source
 * (calibration) and against the other studies (held out).
 */
#include "models/reliability.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DAY_S 86400.0

/* ---- llama3: 16,384 H100, 2024 ----------------------------------------- */

/*
 * The Llama 3 Herd of Models (2024), section 3.3.4 and Table 5: a 54-day
 * snapshot of Llama 3 405B pre-training on up to 16,384 H100 GPUs had 466
 * interruptions, 47 planned and 419 unexpected. The 419, by root cause,
 * are the rows below. The window is taken as 54 days of the full 16,384
 * GPUs (the paper says "up to"; no finer split is published): 2,048 DGX
 * H100 nodes, 16,384 compute NICs (eight per node). The job expects 419
 * interruptions in 54 days, a mean time to interruption of 54·24 h / 419 =
 * 3.09 h; charging every cause to the GPUs gives one per-GPU MTBF of
 * 16,384 · 54 · 24 h / 419 = 50,676 h; per node, 3.79 failures per 1000
 * node-days.
 *
 * Detection: crashes (Xid errors, ECC, NCCL errors, process exits) are
 * seen within seconds; a hang waits for the watchdog: the NCCL watchdog
 * timeouts themselves, GPU system processor (GSP) hangs, network switch
 * or cable faults (NCCL waits on the lost peer) and silent data
 * corruption (no error at all: found later by loss/gradient checks;
 * charged the watchdog delay as the nearest stand-in).
 *
 * Repair: software bugs, dependency failures and unexplained watchdog
 * timeouts only restart the job; every hardware cause and unplanned host
 * maintenance drains the node for the cause's MTTR.
 */
static const rel_cause llama3_causes[] = {
    { "faulty GPU",             REL_GPU,      148, REL_DETECT_CRASH,    1, REL_MTTR_GPU_SWAP_S },
    { "GPU HBM3 memory",        REL_HBM,       72, REL_DETECT_CRASH,    1, REL_MTTR_GPU_SWAP_S },
    { "software bug",           REL_SOFTWARE,  54, REL_DETECT_CRASH,    0, 0 },
    { "network switch/cable",   REL_SWITCH,    35, REL_DETECT_WATCHDOG, 1, REL_MTTR_LINK_S },
    { "host maintenance",       REL_NODE,      32, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
    { "GPU SRAM memory",        REL_GPU,       19, REL_DETECT_CRASH,    1, REL_MTTR_GPU_SWAP_S },
    { "GPU system processor",   REL_GPU,       17, REL_DETECT_WATCHDOG, 1, REL_MTTR_REBOOT_S },
    { "NIC",                    REL_NIC,        7, REL_DETECT_CRASH,    1, REL_MTTR_LINK_S },
    { "NCCL watchdog timeout",  REL_SOFTWARE,   7, REL_DETECT_WATCHDOG, 0, 0 },
    { "silent data corruption", REL_GPU,        6, REL_DETECT_WATCHDOG, 1, REL_MTTR_GPU_SWAP_S },
    { "GPU thermal interface",  REL_GPU,        6, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
    { "SSD",                    REL_STORAGE,    3, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
    { "power supply",           REL_NODE,       3, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
    { "server chassis",         REL_NODE,       2, REL_DETECT_CRASH,    1, REL_MTTR_GPU_SWAP_S },
    { "IO expansion board",     REL_NODE,       2, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
    { "dependency",             REL_SOFTWARE,   2, REL_DETECT_CRASH,    0, 0 },
    { "CPU",                    REL_NODE,       2, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
    { "system memory",          REL_NODE,       2, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
};

/* ---- rsc1-a100, rsc2-a100: Meta's A100 research clusters, 2022-23 ----- */

/*
 * Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning
 * Research Clusters", arXiv 2410.21680 (2024; HPCA 2025): 11 months of
 * two multi-tenant A100 clusters, RSC-1 (16k GPUs) and RSC-2 (8k GPUs),
 * 8 GPUs per node. Its failure model charges a job of N nodes the rate
 * N · r_f, with r_f = 6.50 failures per 1000 node-days on RSC-1 and 2.34
 * on RSC-2; from r_f it projects a mean time to failure of 1.8 h at 16,384
 * GPUs and 0.23 h at 131,072. Only the total per-node rate is published as
 * a number (the causes are shown as shares in figures), so each profile is
 * one node-class cause at that rate: an exposure of 1000 node-days (one
 * node, 8 GPUs, 8 compute NICs, for 1000 days) with 6.50 (2.34) failures.
 * Detected as crashes (the clusters run health checks every few minutes)
 * and repaired as a host part.
 */
static const rel_cause rsc1_causes[] = {
    { "any failure (per node)", REL_NODE, 6.50, REL_DETECT_CRASH, 1, REL_MTTR_NODE_PART_S },
};
static const rel_cause rsc2_causes[] = {
    { "any failure (per node)", REL_NODE, 2.34, REL_DETECT_CRASH, 1, REL_MTTR_NODE_PART_S },
};

/* ---- opt175b-a100: OPT-175B on 992 A100 80GB in a cloud, 2021 ---------- */

/*
 * Zhang et al., "OPT: Open Pre-trained Transformer Language Models", arXiv
 * 2205.01068 (2022): section 2.4, 992 80GB A100 GPUs (124 nodes of 8);
 * section 2.5, "Hardware Failures": hardware failures caused "at least 35
 * manual restarts" and "the cycling of over 100 hosts over the course of 2
 * months"; from the hosts cycled the authors "estimate 70+ automatic
 * restarts due to hardware failures". The profile: 35 manual and 70
 * automatic restarts in 60 days of 124 nodes (both counts are lower
 * bounds), charged per node (the paper does not split them by component):
 * 14.1 failures per 1000 node-days, a mean time to interruption of 13.7 h
 * for the 992-GPU job. A manual restart was a run paused and diagnosed by
 * people (detection charged the watchdog delay, the nearest stand-in); an
 * automatic one a crash. Either way the bad nodes were cordoned (repair).
 */
static const rel_cause opt175b_causes[] = {
    { "hardware, manual restart",    REL_NODE, 35, REL_DETECT_WATCHDOG, 1, REL_MTTR_NODE_PART_S },
    { "hardware, automatic restart", REL_NODE, 70, REL_DETECT_CRASH,    1, REL_MTTR_NODE_PART_S },
};

/* ---- bloom176b-a100: BLOOM-176B on Jean Zay's A100s, 2022 -------------- */

/*
 * BLOOM-176B trained on 48 nodes of 8 A100 80GB GPUs (384 GPUs) of the
 * Jean Zay supercomputer (BigScience, bigscience/bloom model card,
 * "Compute infrastructure"). Bekman, "The Technology Behind BLOOM
 * Training" (Hugging Face blog, 2022, section "Training Difficulties"):
 * "a new cluster with about 400 GPUs, on average we were getting 1-2 GPU
 * failures a week"; the sysadmins replaced the faulty GPUs while backup
 * nodes stood in. The profile: 1.5 GPU failures (the middle of "1-2") per
 * week of the 384 GPUs the job ran on, one GPU-class cause: a per-GPU MTBF
 * of 384 · 7 · 24 h / 1.5 = 43,008 h, 4.46 failures per 1000 node-days.
 * The node's NICs are not published and no cause is charged to them.
 */
static const rel_cause bloom176b_causes[] = {
    { "GPU failure", REL_GPU, 1.5, REL_DETECT_CRASH, 1, REL_MTTR_GPU_SWAP_S },
};

#define N_OF(a) ((int)(sizeof (a) / sizeof (a)[0]))

static const rel_profile profiles[] = {
    { "llama3", "The Llama 3 Herd of Models (2024), section 3.3.4, Table 5",
      "Llama 3 405B pre-training, 16,384 H100 (2,048 nodes), 54 days, 2024",
      54 * DAY_S, 16384, 2048, 16384, llama3_causes, N_OF(llama3_causes) },
    { "rsc1-a100", "Kokolis et al., Revisiting Reliability in Large-Scale ML Research Clusters, "
      "arXiv 2410.21680 (2024), failure model r_f",
      "Meta RSC-1, 16k A100 research cluster, 11 months: 6.50 failures per 1000 node-days",
      1000 * DAY_S, 8, 1, 8, rsc1_causes, N_OF(rsc1_causes) },
    { "rsc2-a100", "Kokolis et al., Revisiting Reliability in Large-Scale ML Research Clusters, "
      "arXiv 2410.21680 (2024), failure model r_f",
      "Meta RSC-2, 8k A100 research cluster, 11 months: 2.34 failures per 1000 node-days",
      1000 * DAY_S, 8, 1, 8, rsc2_causes, N_OF(rsc2_causes) },
    { "opt175b-a100", "Zhang et al., OPT: Open Pre-trained Transformer Language Models, "
      "arXiv 2205.01068 (2022), sections 2.4 and 2.5",
      "OPT-175B, 992 A100 80GB (124 nodes) in a cloud, 2 months, 2021",
      60 * DAY_S, 992, 124, 992, opt175b_causes, N_OF(opt175b_causes) },
    { "bloom176b-a100", "Bekman, The Technology Behind BLOOM Training (Hugging Face blog, 2022), "
      "Training Difficulties; bigscience/bloom model card",
      "BLOOM-176B, 384 A100 80GB (48 nodes) on Jean Zay, 2022: 1-2 GPU failures a week",
      7 * DAY_S, 384, 48, 0, bloom176b_causes, N_OF(bloom176b_causes) },
};

int rel_profile_count(void) { return N_OF(profiles); }

const rel_profile *rel_profile_at(int i) {
    return i >= 0 && i < N_OF(profiles) ? &profiles[i] : NULL;
}

const rel_profile *rel_profile_find(const char *name) {
    for (int i = 0; name && i < N_OF(profiles); i++)
        if (strcmp(name, profiles[i].name) == 0) return &profiles[i];
    return NULL;
}

char *rel_profile_names(char *out, size_t len) {
    size_t used = 0;
    if (!out || !len) return out;
    out[0] = 0;
    for (int i = 0; i < N_OF(profiles) && used < len; i++) {
        int k = snprintf(out + used, len - used, "%s%s", i ? ", " : "", profiles[i].name);
        if (k < 0) break;
        used += (size_t)k;
    }
    return out;
}

double rel_profile_total(const rel_profile *p) {
    double n = 0;
    for (int i = 0; p && i < p->n_causes; i++) n += p->causes[i].count;
    return n;
}

/* The profile's observed fleet as instance counts. */
static rel_fleet observed(const rel_profile *p) {
    return (rel_fleet){ p->gpus, p->nodes, p->nics };
}

double rel_profile_cause_mtbf_s(const rel_profile *p, int i) {
    if (!p || i < 0 || i >= p->n_causes || !(p->causes[i].count > 0)) return INFINITY;
    const rel_cause *c = &p->causes[i];
    rel_fleet f = observed(p);
    return p->window_s * rel_fleet_instances(&f, rel_component_scope(c->component)) / c->count;
}

double rel_profile_gpu_mtbf_s(const rel_profile *p) {
    double n = rel_profile_total(p);
    return n > 0 ? p->window_s * p->gpus / n : INFINITY;
}

/* ---- Predictions -------------------------------------------------------- */

static const char *const metric_names[] = { "mtti_h", "failures_per_1000_node_days" };

int rel_metric_parse(const char *z) {
    for (int i = 0; z && i < N_OF(metric_names); i++)
        if (strcmp(z, metric_names[i]) == 0) return i;
    return -1;
}

/* Processes one profile expands to at most (llama3 has 18 causes). */
#define PREDICT_MAX_CAUSES 64

int rel_profile_predict(const rel_profile *p, const node_spec *n, int gpus, rel_metric m, double *out) {
    if (!p || !n || !out || gpus < 1 || n->gpus < 1) return -1;
    /* The same expansion a scenario's <failure profile=...> gets, so a
     * validation row checks what the simulator runs. */
    rel_process proc[PREDICT_MAX_CAUSES];
    rel_spec spec = { .profile = p->name };
    char why[160];
    int k = rel_expand(&spec, 1, proc, PREDICT_MAX_CAUSES, why, sizeof why);
    if (k < 0 || k > PREDICT_MAX_CAUSES) return -1;
    double nodes = (double)gpus / n->gpus;
    rel_fleet f = { gpus, nodes, nodes * n->nics };
    double rate = rel_job_rate_per_s(proc, k, &f);
    switch (m) {
    case REL_METRIC_MTTI_H: *out = rel_mtti_s(rate) / 3600.0; return 0;
    case REL_METRIC_PER_1000_NODE_DAYS: *out = rate / nodes * 1000 * DAY_S; return 0;
    default: return -1;
    }
}
