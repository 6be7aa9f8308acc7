/*
 * reliability: failure processes of a cluster's components, as pure data
 * and arithmetic for sim/failures.c to instantiate.
 *
 * A failure process belongs to one component instance (a GPU, a node, a
 * NIC, ...): it draws times to failure from an exponential or Weibull
 * distribution with the instance's mean time between failures (MTBF), and
 * says how the job finds out (a crash now, or a hang until a watchdog
 * timeout) and what it takes to put the instance back (a restart only, or
 * the node out of service for mttr_s). The simulator makes one process per
 * instance; this module says which processes a scenario's <failure>
 * elements or a built-in profile imply, and gives the rates, means and
 * conversions to check them with.
 *
 *   scenario <failure> ──► rel_spec ──► rel_expand() ──► rel_process[]
 *                                                          │ one per cause
 *                          node_spec ──► rel_instances_per_node()
 *                                                          │
 *                                  sim: one RNG stream per instance
 *
 * Fleet profiles are catalog entries (<failure-profile> in
 * models/catalog/reliability.xml, read by scenarios/catalog_xml.c; a
 * scenario's <catalog> may add its own; docs/failure-profiles.md):
 * published failure counts by cause over an observed exposure, each cause
 * charged to the component class it names, with a per-instance MTBF chosen
 * so that the observed fleet sees exactly that cause's count in its window.
 * "llama3" (the default of the project's scenarios): the 419 unexpected
 * interruptions of a 54-day Llama 3 405B pre-training snapshot on 16,384
 * H100 GPUs (Llama 3 Herd of Models, 2024, section 3.3.4 and Table 5), a
 * mean time to interruption of 3.09 h. Others: Meta's RSC-1 and RSC-2 A100
 * research clusters, OPT-175B's 2021 cloud A100 run, BLOOM-176B on Jean
 * Zay's A100s.
 *
 * Pure functions; nothing allocates; profiles are looked up in the catalog
 * a caller passes.
 */
#ifndef CT_RELIABILITY_H
#define CT_RELIABILITY_H

#include <stddef.h>

#include "models/catalog.h"

/* Component classes: what a failure takes out. */
typedef enum rel_component {
    REL_GPU,        /* the GPU die, its SRAM, GSP, thermal interface */
    REL_HBM,        /* the GPU's HBM stacks */
    REL_NODE,       /* host: CPU, DRAM, PSU, chassis, boards, unplanned maintenance */
    REL_NIC,        /* a compute-fabric NIC */
    REL_SWITCH,     /* network switch or cable: the node's links and its share of switch ports */
    REL_STORAGE,    /* the node's local storage (SSD) */
    REL_SOFTWARE,   /* software bug, dependency, unexplained hang (per rank) */
    REL_COMPONENT_COUNT
} rel_component;

int rel_component_parse(const char *z);          /* "gpu" -> REL_GPU; -1 when unknown */
const char *rel_component_name(rel_component c);

/* What one instance of a component class is counted against. */
typedef enum rel_scope { REL_PER_GPU, REL_PER_NODE, REL_PER_NIC } rel_scope;

/* gpu, hbm, software: per GPU (software per rank, one rank per GPU);
 * nic: per compute NIC; node, switch, storage: per node. */
rel_scope rel_component_scope(rel_component c);

/* Instances of a component class on one node of this type (gpus, nics or
 * 1). Returns 0 when n is NULL. */
int rel_instances_per_node(rel_component c, const node_spec *n);

/* How a job notices a failure. */
typedef enum rel_detection {
    REL_DETECT_CRASH,     /* a process dies or NCCL reports an error: seconds */
    REL_DETECT_WATCHDOG   /* the job hangs until the collective watchdog times out */
} rel_detection;
const char *rel_detection_name(rel_detection d);   /* "crash" | "watchdog" */
int rel_detection_parse(const char *z);            /* the names above; -1 unknown */

typedef enum rel_dist { REL_EXPONENTIAL, REL_WEIBULL } rel_dist;
int rel_dist_parse(const char *z);               /* NULL or "" -> exponential; -1 unknown */
const char *rel_dist_name(rel_dist d);

/* ---- Named defaults --------------------------------------------------- */

/* Detection delays. */
#define REL_CRASH_DETECT_S    30.0    /* crash -> every rank torn down: NCCL async error
                                         handling aborts communicators and the launcher
                                         (torchrun/Slurm) notices the exit; engineering
                                         estimate, tens of seconds at 16K ranks */
#define REL_WATCHDOG_S       600.0    /* hang -> watchdog abort: PyTorch ProcessGroupNCCL
                                         default timeout, 10 min since PyTorch 2.2
                                         (pytorch/pytorch PR #110947) */

/* Time a failed instance keeps its node out of service (MTTR). Engineering
 * estimates, not published figures: Meta, Alibaba and Microsoft report
 * failure counts and job-level impact but not component repair times.
 * With a warm spare the job does not wait for these: the spare takes the
 * node's place in REL_SPARE_SWAP_S and the failed node rejoins the pool
 * after its repair. */
#define REL_MTTR_GPU_SWAP_S  (3 * 86400.0)  /* GPU/HBM replaced: vendor advance replacement
                                               (next business day) + field service + burn-in */
#define REL_MTTR_NODE_PART_S (1 * 86400.0)  /* a host part from local stock (PSU, DIMM, SSD,
                                               CPU, IO board, thermal interface) + burn-in */
#define REL_MTTR_LINK_S      (4 * 3600.0)   /* cable/optic or NIC swap from local stock */
#define REL_MTTR_REBOOT_S    (15 * 60.0)    /* node reboot and health checks (GPU reset,
                                               GSP hang, row remap pending) */
#define REL_SPARE_SWAP_S     (5 * 60.0)     /* a warm spare replaces a drained node: scheduler
                                               reassignment and container start */

/* A profile cause's repair by name (models/catalog/reliability.xml repair=):
 * "restart" (the job only restarts: *needs_repair 0, *mttr_s 0), or the
 * node drained for one of the times above: "gpu-swap", "node-part", "link",
 * "reboot". Returns 0, or -1 for another name (outputs unchanged). */
int rel_repair_parse(const char *z, int *needs_repair, double *mttr_s);
#define REL_REPAIR_NAMES "restart, gpu-swap, node-part, link, reboot"

/* Default MTTR of a component class when a scenario gives none: GPU and
 * HBM a GPU swap, node and storage a host part, NIC and switch a link
 * repair, software 0 (restart only). */
double rel_mttr_default_s(rel_component c);

/* ---- Processes -------------------------------------------------------- */

#define REL_CAUSE_MAX 48

/* One failure process per instance of `component` (rel_instances_per_node
 * per node). Times to failure are exponential with mean mtbf_s, or Weibull
 * with the given shape and scale_s (scale_s = mtbf_s / Γ(1 + 1/shape), so
 * the mean stays mtbf_s). */
typedef struct rel_process {
    rel_component component;
    rel_scope scope;
    char cause[REL_CAUSE_MAX];      /* "faulty GPU", "gpu", ... */
    double mtbf_s;                  /* mean time between failures of one instance */
    rel_dist distribution;
    double shape;                   /* Weibull k (1 for exponential) */
    double scale_s;                 /* Weibull λ; = mtbf_s for exponential */
    double mttr_s;                  /* node out of service after the failure; 0: none */
    rel_detection detection;
    double detect_s;                /* failure -> job notices (REL_CRASH_DETECT_S or
                                       REL_WATCHDOG_S) */
    int needs_repair;               /* 1: the node is drained for mttr_s (or replaced by
                                       a spare); 0: the job only restarts */
} rel_process;

/* What a <failure> element says (scenarios/scenario.h sc_failure, as plain
 * strings so models/ does not depend on scenarios/). NULL and "" mean
 * "not given" for strings, 0 for numbers. */
typedef struct rel_spec {
    const char *component;          /* without profile: required; with one: keep only
                                       the profile's causes of this class */
    const char *profile;            /* a catalog profile name (rel_profile_find) or not
                                       given */
    double mtbf_s;                  /* per instance; with a profile: 0 keeps the published
                                       rates, > 0 rescales every cause so the profile's
                                       per-GPU equivalent MTBF (rel_profile_gpu_mtbf_s)
                                       becomes this */
    const char *distribution;       /* exponential (default) | weibull */
    double shape;                   /* Weibull shape, (0, 20]; ignored for exponential */
    double mttr_s;                  /* 0: the cause's or the class's default */
    const char *cause;              /* label; default: the component name (ignored with
                                       a profile: its causes keep their labels) */
} rel_spec;

/* The processes n specs imply, in order (a profile, looked up in catalog c,
 * expands to one process per cause). Writes at most max into out (out may be NULL when max is 0)
 * and returns how many the specs imply, so a caller can size its array with
 * a first call. Returns -1 on invalid input (unknown component, profile or
 * distribution, mtbf <= 0 without a profile, mtbf under REL_MIN_MTBF_S, a Weibull shape outside
 * (0, 20] or one too small for its mtbf (rel_weibull_check), negative
 * mttr) with one line in why; out may then be partly
 * written. */
int rel_expand(const catalog *c, const rel_spec *s, int n, rel_process *out, int max, char *why,
               size_t len);

/* Fill p for one instance class: the scale from mtbf and shape, the
 * detection delay from the detection kind. Returns 0, or -1 when mtbf_s is
 * not positive or a Weibull shape is outside (0, 20] or fails
 * rel_weibull_check (p unchanged). */
int rel_process_init(rel_process *p, rel_component c, const char *cause, double mtbf_s,
                     rel_dist d, double shape, double mttr_s, rel_detection det,
                     int needs_repair);

/* ---- Profiles --------------------------------------------------------- */

/* A fleet profile is data: what a published study saw (failure counts by
 * cause, each charged to a component class) over an exposure (a window
 * times the GPUs, nodes and NICs observed). One conversion serves every
 * profile: a cause seen n times in a window T by I instances of its class
 * has the per-instance MTBF T·I/n (rel_profile_cause_mtbf_s). Profiles are
 * catalog entries ("failure-profile"): the built-in ones and their sources
 * are in models/catalog/reliability.xml and docs/failure-profiles.md. */

/* Causes one profile may list (the Llama 3 table has 18). */
#define REL_PROFILE_MAX_CAUSES 32

/* One cause of a published failure table. */
typedef struct rel_cause {
    char label[REL_CAUSE_MAX];
    rel_component component;
    double count;                   /* failures in the profile's exposure; a study that
                                       publishes a mean rate (6.50 per 1000 node-days,
                                       "1-2 a week") gives a fractional count */
    rel_detection detection;
    int needs_repair;
    double mttr_s;                  /* the named repair's time (rel_repair_parse) */
} rel_cause;

typedef struct rel_profile {
    char name[CATALOG_NAME_MAX];    /* "llama3", "rsc1-a100", ... (first: the catalog's key) */
    char source[192];               /* paper and table or section the counts come from */
    char fleet[160];                /* what was observed, in words */
    double window_s;                /* observation window */
    int gpus, nodes, nics;          /* instances observed over the window (the exposure:
                                       window × instances; the divisor of each rate) */
    rel_cause causes[REL_PROFILE_MAX_CAUSES];
    int n_causes;                   /* at least 1 (scenarios/catalog_cause.c) */
} rel_profile;

/* The attributes of <failure-profile> (generated from models/catalog_fields.txt;
 * its <cause> children are read by scenarios/catalog_cause.c). */
extern const catalog_field catalog_fields_failure_profile[];

/* The profile of that name in catalog c; NULL when unknown (or c is NULL). */
const rel_profile *rel_profile_find(const catalog *c, const char *name);

/* c's profiles in catalog order: i in [0, rel_profile_count(c)). */
int rel_profile_count(const catalog *c);
const rel_profile *rel_profile_at(const catalog *c, int i);   /* NULL out of range */

/* The names, ", "-separated, in catalog order ("llama3, rsc1-a100, ..."),
 * for an error message; truncated to fit len. Returns out. */
char *rel_profile_names(const catalog *c, char *out, size_t len);

/* Failures in the profile's exposure (sum of the counts). */
double rel_profile_total(const rel_profile *p);

/* Per-instance MTBF of cause i: window · instances of its scope / count. */
double rel_profile_cause_mtbf_s(const rel_profile *p, int i);

/* The MTBF per GPU if every interruption is charged to the GPU count:
 * window · gpus / total (Llama 3: about 50,700 h). */
double rel_profile_gpu_mtbf_s(const rel_profile *p);

/* What a validation row measures (tests/validation/failures.csv metric). */
typedef enum rel_metric {
    REL_METRIC_MTTI_H,              /* "mtti_h": mean time to interruption of one job, h */
    REL_METRIC_PER_1000_NODE_DAYS   /* "failures_per_1000_node_days": the job's rate per
                                       node, per 1000 node-days */
} rel_metric;
int rel_metric_parse(const char *z);                     /* -1 when unknown */

/* The processes of profile p at its published rates (exponential, each
 * cause's own detection and repair): what a <failure profile="..."/> with
 * no other attribute expands to. Writes at most max into out and returns
 * how many p implies, or -1 (why set) for a profile that gives none. */
int rel_profile_processes(const rel_profile *p, rel_process *out, int max, char *why, size_t len);

/* Profile p's prediction of metric m for a job of `gpus` GPUs on nodes of
 * type n (gpus / n->gpus nodes, n->nics NICs each), with every cause at
 * its published rate. Returns 0, or -1 on a NULL argument, gpus < 1 or a
 * node type without GPUs (*out unchanged). */
int rel_profile_predict(const rel_profile *p, const node_spec *n, int gpus, rel_metric m, double *out);

/* ---- Rates and conversions ------------------------------------------- */

/* Instances a job (or a cluster) has of each scope. */
typedef struct rel_fleet { double gpus, nodes, nics; } rel_fleet;

/* nodes nodes of type n. Returns 0, or -1 when n is NULL or nodes < 0. */
int rel_fleet_of(rel_fleet *f, const node_spec *n, int nodes);

/* Instances of scope s in fleet f (0 when f is NULL). */
double rel_fleet_instances(const rel_fleet *f, rel_scope s);

/* Instances of p's component in fleet f. */
double rel_instances(const rel_process *p, const rel_fleet *f);

/* Failure rate of a fleet: Σ instances / mtbf over the processes (the
 * long-run renewal rate, also for Weibull: 1/mean per instance). */
double rel_job_rate_per_s(const rel_process *p, int n, const rel_fleet *f);

/* Σ count[i] / mtbf_s[i]: rate of a job from per-instance MTBFs and
 * instance counts. mtbf_s[i] <= 0 entries are skipped. */
double rel_rate_per_s(const double *count, const double *mtbf_s, int n);

/* Mean interruptions of N instances over t: N·t / MTBF (0 when mtbf <= 0). */
double rel_mean_interruptions(double instances, double t_s, double mtbf_s);

/* Mean time to interruption for a rate (INFINITY for rate <= 0). */
double rel_mtti_s(double rate_per_s);

/* Weibull: mean = scale·Γ(1 + 1/shape); scale = mean / Γ(1 + 1/shape),
 * computed in log space (no overflow, no GSL). Return NAN for a shape or
 * argument that is not positive; a mean beyond a double is +inf, a scale
 * below one is 0. */
double rel_weibull_mean_s(double scale_s, double shape);
double rel_weibull_scale_s(double mean_s, double shape);

/* Weibull survival S(t) = exp(-(t/scale)^shape): the share of instances
 * still working at age t. NAN for a scale or shape that is not positive. */
double rel_weibull_survival(double scale_s, double shape, double t_s);

/* Residual life: the time to failure of a Weibull instance that has
 * survived to age_s, by inversion of the conditional survival
 * S(age + t) / S(age) = u, u in (0, 1]:
 *
 *     t = scale · ((age/scale)^shape − ln u)^(1/shape) − age
 *
 * computed as age · expm1(log1p(−ln u / (age/scale)^shape) / shape) when
 * the age matters, so an old instance's short residual does not cancel
 * away. age_s = 0 is the plain draw scale · (−ln u)^(1/shape). With
 * shape < 1 (infant mortality) the hazard falls with age and an aged fleet
 * fails less; shape > 1 (wear-out), more. NAN on bad arguments. */
double rel_weibull_residual_s(double scale_s, double shape, double age_s, double u);

/* The least Weibull scale a process may have: the simulated clock's
 * resolution. Below it nearly every sampled time to failure rounds to 0
 * and the failures of an instance land at one instant without end. */
#define REL_MIN_SCALE_S 1e-9

/* The least mtbf a <failure> may give (per instance, or per GPU with a
 * profile): at mtbf="1e-20s" every gap rounded to 0 ns and the failures ran
 * at one instant without end. One second is far below any real part's. */
#define REL_MIN_MTBF_S 1.0

/* The largest Weibull shape: the scenario loader caps the shape at 20
 * (beyond it the distribution is a near-constant lifetime); the processes
 * keep the same range. */
#define REL_SHAPE_MAX 20.0

/* 0 when a Weibull process of this mean and shape has a scale of at least
 * REL_MIN_SCALE_S; else -1 with one line in why (why may be NULL) that
 * names the shape, the mean and the least shape that would do. */
int rel_weibull_check(double mean_s, double shape, char *why, size_t len);

/* The least shape in (0, 1] whose scale for this mean is at least
 * REL_MIN_SCALE_S; NAN when even shape 1 is too small or mean_s is not a
 * finite positive number. */
double rel_weibull_min_shape(double mean_s);

#endif
