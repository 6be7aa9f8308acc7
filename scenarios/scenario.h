/*
 * scenario: a validated scenario as plain config structs.
 *
 * scenario_load() (scenarios/load.c) parses the XML with libxml2 (no
 * network, no external entities, bounded nesting and size), validates it
 * against the RELAX NG schema scenarios/scenario.rng (compiled into the
 * program), then checks its meaning (units, ranges, references to catalog
 * names, tp*pp*dp*cp = gpus) and fills these structs. Values are in SI base units: bytes, bytes/s,
 * seconds, events/s. Every struct keeps the line of its element for later
 * messages ("scenarios/x.xml:14: ...").
 *
 * The scenario owns everything it points to; scenario_free() releases it.
 */
#ifndef CT_SCENARIO_H
#define CT_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "models/catalog.h"
#include "models/checkpoint.h"
#include "models/collective.h"
#include "models/host.h"
#include "models/serving_spec.h"
#include "models/train_plan.h"

#define SC_NAME_MAX 64

typedef struct sc_nodes {
    char type[CATALOG_NAME_MAX];     /* node_spec name */
    int count;
    int line;
} sc_nodes;

typedef struct sc_network {
    topology_kind topology;
    double oversubscription;         /* >= 1 */
    nic_mode nic_mode;
    int nodes_per_leaf;              /* 0 = default (the fabric's choice) */
    unsigned nccl_algo_mask;         /* nccl-algo: forced algorithms (coll_algo_mask_parse); 0 = auto */
    unsigned nccl_proto_mask;        /* nccl-proto: forced protocols; 0 = auto */
    int sharp;                       /* sharp="true": SHARP switches (CollNet, NVLS across nodes) */
    int flow;                        /* model="flow": the flow-level fabric shared between jobs
                                        (docs/flow-fabric.md); 0 = "closed-form" */
    int line;
} sc_network;

typedef struct sc_storage {
    char name[SC_NAME_MAX];
    char kind[CATALOG_NAME_MAX];     /* storage_spec name: nfs | parallel-fs | object */
    double bw_bytes_per_s;           /* aggregate; 0 = the kind's default */
    double capacity_bytes;           /* 0 = not given */
    int line;
} sc_storage;

typedef struct sc_failure {
    char component[16];              /* gpu | hbm | node | nic | switch | storage | software */
    char profile[32];                /* "" or a built-in profile name, e.g. llama3 */
    double mtbf_s;                   /* per component instance; 0 with a profile */
    char distribution[16];           /* exponential | weibull */
    double shape;                    /* weibull shape (1 for exponential) */
    double mttr_s;                   /* time to repair; 0 = not given */
    char cause[SC_NAME_MAX];
    int line;
} sc_failure;

/* <failures> attributes: detection, recovery, health checks, lemons. */
typedef struct sc_failures_cfg {
    double watchdog_s;               /* a hang is seen after the collective watchdog (10 min) */
    double crash_detect_s;           /* a crash is seen after this (30 s) */
    double restart_s;                /* reschedule + process start, before loading (5 min) */
    int health_at_start;             /* check nodes before a job uses them (true) */
    double health_coverage;          /* share of hardware faults periodic checks catch first (0) */
    int lemon_threshold;             /* failures in the window that drain a node (0 = never) */
    double lemon_window_s;           /* (30 d) */
    double fleet_age_s;              /* hardware's age at t = 0 (0: new); Weibull residual life */
} sc_failures_cfg;

typedef struct sc_queue {
    char name[SC_NAME_MAX];
    int quota_gpus;
    double max_time_s;               /* max-time: the partition's time limit, a job's default; 0 none */
    int *nodes;                      /* nodes=: the partition's nodes (cluster indices, increasing, each
                                        once); NULL: every node */
    int n_nodes;
    int line;
} sc_queue;

/* <cluster><unavailable>: nodes out of service at t = 0 (a snapshot of a
 * live cluster, docs/cluster-state.md). */
typedef struct sc_unavailable {
    int *nodes;                      /* cluster node indices (scenario_node_index order) */
    int n;
    int drained;                     /* state="drained" (an admin resumes it); 0: "down" */
    int draining;                    /* state="draining": keeps its running jobs, takes no new one and is
                                        drained (drained = 1 too) when its last job ends */
    char reason[SC_NAME_MAX];
    double repair_s;                 /* repair=: back after this; 0: not given */
    int line;
} sc_unavailable;

/* <runtime-history><ratios>: samples of run time / time limit from the
 * cluster's history, for trace jobs with a limit and no duration. */
enum { SC_RATIOS_CLUSTER, SC_RATIOS_USER, SC_RATIOS_ACCOUNT };
typedef struct sc_ratios {
    int by;                          /* SC_RATIOS_* */
    char who[SC_NAME_MAX];           /* the user or account ("" cluster-wide) */
    double *values;                  /* each in (0, 1] */
    int n;
    int line;
} sc_ratios;

typedef struct sc_checkpoint {
    int present;
    int interval_auto;               /* interval="auto" (Young/Daly) */
    double interval_s;               /* when !interval_auto; 0 = never */
    char mode[8];                    /* sync | async */
    char layout[16];                 /* sharded | fully-parallel | rank0 */
    int streaming_gather;            /* gather="streaming": rank 0 writes chunks as they
                                        arrive; "memory" (default): the gather must fit
                                        rank 0's host memory */
    ckpt_choice contents;            /* weights=, master-weights=, optimizer= (each
                                        CKPT_CHOICE_DEFAULT when not given) */
    int line;
} sc_checkpoint;

typedef struct sc_training {
    char name[SC_NAME_MAX];
    int gpus;
    train_plan plan;
    llm_spec model;                  /* resolved (preset or explicit) */
    char preset[CATALOG_NAME_MAX];   /* "" when given explicitly */
    double tokens;                   /* 0 when steps given */
    int64_t steps;                   /* 0 when tokens given */
    char storage[SC_NAME_MAX];       /* sc_storage name, "" for none */
    char node_type[CATALOG_NAME_MAX];/* node type to run on ("" = the first <nodes>) */
    char queue[SC_NAME_MAX];
    int priority;
    double submit_s;
    int elastic;                     /* may shrink (drop DP replicas) when nodes are lost */
    double timeout_s;                /* time limit per start; 0 = none */
    int after;                       /* after=: 1 + the index of the earlier <training>
                                        it waits for (eligible once that one ends); 0
                                        none, so a zeroed one (a trace's) waits for none */
    sc_checkpoint checkpoint;
    int line;
} sc_training;

typedef struct sc_jobs {
    char name[SC_NAME_MAX];
    int count;
    char arrivals[16];               /* poisson | fixed */
    double rate_per_s;
    int gpus;
    double duration_s;
    char duration_distribution[16];  /* fixed | exponential | lognormal */
    char queue[SC_NAME_MAX];
    int priority;
    double timeout_s;                /* time limit per start; 0 = none */
    double submit_s;                 /* first arrival no earlier than this */
    int n_sizes;                     /* gpus="1:0.6,8:0.3,64:0.1": sizes and weights */
    int sizes[16];
    double size_weights[16];
    int line;
} sc_jobs;

/* A trace job's state at t = 0 (the trace's state column). */
enum { SC_JOB_PENDING, SC_JOB_RUNNING, SC_JOB_HELD };
#define SC_NO_TEXT UINT32_MAX        /* an offset that names nothing */
/* Optional trace columns present (scenario.trace_columns): what the JSON reports. */
enum { SC_TCOL_ID = 1, SC_TCOL_STATE = 2, SC_TCOL_USER = 4, SC_TCOL_ACCOUNT = 8, SC_TCOL_ACTUAL_START = 16 };
/* How a job trace is read (<trace format time-scale skip count
 * procs-per-gpu>, scenarios/jobtrace.h) and what reading it found. The
 * defaults (format csv, nothing else given) are the project's own CSV as
 * scenarios/trace.c reads it. */
typedef struct sc_trace_read {
    char format[16];                 /* as given: csv (default) | auto | swf | philly | helios | acme | pai | openb */
    char format_read[16];            /* what it was read as (auto told) */
    double time_scale;               /* arrivals this many times faster than recorded (1) */
    double skip_s;                   /* replay from this far into the trace's own clock (0) */
    long count;                      /* replay at most this many jobs (0: all) */
    double procs_per_gpu;            /* swf: processors that make one GPU (1) */
    long rows;                       /* data rows read */
    long skipped_no_gpus;            /* rows that ask for no GPU (CPU-only jobs) */
    long skipped_not_run;            /* rows that never started or have no run time */
    long skipped_too_big;            /* rows that need more GPUs than the cluster has */
    long skipped_status;             /* swf: a status the replay does not take (not 0, 1, 5 or -1) */
} sc_trace_read;

/* One batch job of a job trace (<trace href>), kept compact because a trace
 * may hold ten million rows (scenarios/trace.c's limit): 88 bytes a row plus
 * its texts, against 424 for a <jobs> group. Its name is at trace_names +
 * name; id, user and account likewise (SC_NO_TEXT: none). */
typedef struct sc_trace_job {
    double submit_s;                 /* may be negative: submitted before t = 0 */
    double duration_s;               /* 0: drawn from <runtime-history> (limit_s > 0) */
    double limit_s;                  /* time limit (its own, else its queue's max-time); 0 none */
    double elapsed_s;                /* running at t = 0: time it has run */
    double actual_start_s;           /* actual_start (replay); NAN: not given */
    int gpus;
    int priority;
    int queue;                       /* index into scenario.queues; -1: "default" (no queues) */
    int line;                        /* of the CSV file */
    int after;                       /* the trace job (index) it waits for; -1 none */
    int ratios;                      /* scenario.ratios it draws its duration from; -1 none */
    uint32_t name, id, user, account;   /* offsets into scenario.trace_names */
    uint32_t nodes;                  /* running on named nodes: offset into trace_nodes; SC_NO_TEXT */
    int n_nodes;                     /* how many */
    unsigned char state;             /* SC_JOB_PENDING | SC_JOB_RUNNING | SC_JOB_HELD */
} sc_trace_job;

typedef struct sc_inference {
    char name[SC_NAME_MAX];
    char model[CATALOG_NAME_MAX];    /* llm preset */
    precision precision;
    char gpu[CATALOG_NAME_MAX];      /* gpu_spec name ("" = the cluster's) */
    int tp;
    int ep;                          /* expert parallelism: a replica holds max(tp, ep) GPUs (1) */
    char fp4_recipe[8];              /* what fp4 weights/KV mean: nvfp4 (default) | mxfp4 */
    int replicas;
    int max_batch;
    char arrival_process[16];        /* poisson | offline */
    double rate_per_s;
    int64_t count;
    int input_tokens;
    int output_tokens;
    double slo_ttft_s, slo_tpot_s;   /* 0 = none */
    double slo_percentile;           /* e.g. 99 */
    int line;
    char queue[SC_NAME_MAX];         /* scheduler queue its replicas' GPU requests go to ("" = first) */
    int priority;                    /* of those requests (preemption, priority policy) */
    /* Serving stack (sim/serving.h says what each does; README "Inference serving"). */
    precision kv_precision;          /* KV cache elements (default: fp8 with fp8 weights, else bf16) */
    char node_type[CATALOG_NAME_MAX];/* pool to run on ("" = the first whose GPU is gpu) */
    char batching[16];               /* continuous | static */
    int chunked_prefill;             /* 1: prompts split to fill the token budget */
    int prefill_alone;               /* 1: without chunking, prompts run in iterations of their own
                                        and the decoding sequences wait (vLLM V0's default policy) */
    int token_budget;                /* tokens per iteration (8192) */
    char kv_allocation[16];          /* reserve (whole request at admission) | on-demand (paged, preempts) */
    char kv_preemption[16];          /* recompute | swap (on-demand only) */
    char fp8_act_quant[8];           /* kernel: each bf16 input of an FP8 GEMM pays a quantisation
                                        kernel (TensorRT-LLM's PyTorch backend) | fused (default;
                                        docs/fp4-serving-path.md) */
    char fused_moe[16];              /* cutlass: the routed experts run TensorRT-LLM's CUTLASS
                                        fused MoE, priced by the GPU's measured law | roofline
                                        (default; docs/moe-serving.md) */
    char context_fmha[16];           /* trtllm: prefill attention runs TensorRT-LLM's context
                                        FMHA, priced by the GPU's measured law | roofline
                                        (default; docs/serving.md) */
    char mla_decode[16];             /* trtllm: an MLA model's decode attention runs TensorRT-LLM's
                                        MLA generation call, priced by the GPU's measured law |
                                        roofline (default; docs/moe-serving.md) */
    char moe_comm[16];               /* auto | alltoall | allgather: the MoE communication of an
                                        attention-DP replica (serve_moe_comm_parse; auto default) */
    char attn_dp_limits[16];         /* replica (default): max_batch and token_budget bound the whole
                                        replica | per-rank: they bound each attention-DP rank, so a
                                        replica with attn_dp groups admits attn_dp times them
                                        (TensorRT-LLM; docs/moe-serving.md) */
    char cuda_graph_sizes[160];      /* the decode batch sizes captured as CUDA graphs, "1,2,4,8-248/8"
                                        (serve_graph_sizes_parse): the engine's, or the attribute's;
                                        "" none (docs/serving-engines.md) */
    int block_tokens;                /* KV block size in tokens (16) */
    double kv_memory_fraction;       /* 0 = default 0.9 */
    char engine[CATALOG_NAME_MAX];   /* serving engine profile (models/catalog/engines.xml); "" = the
                                        ideal engine (docs/serving-engines.md) */
    char router[24];                 /* round-robin | least-tokens | random | power-of-two |
                                        prefix-aware | kv-aware | cache-aware (docs/prefix-caching.md) */
    double model_load_s;             /* multiplexing: load time; 0 = weights / PCIe */
    /* <arrivals> beyond process/rate/count */
    double arrival_cv;               /* bursty: gamma inter-arrivals' coefficient of variation */
    double arrival_start_s;          /* first arrival not before this */
    double arrival_duration_s;       /* stop arriving after start + this; 0 = count only */
    double diurnal_amplitude;        /* rate·(1 + a·cos(2π(t - peak)/period)), a in [0, 1] */
    double diurnal_period_s, diurnal_peak_s;
    char trace_href[512];            /* process="trace": trace path, relative to the scenario */
    char trace_format[16];           /* auto | csv | azure-2023 | azure-2024 | burstgpt | mooncake (scenarios/reqtrace.h) */
    double trace_time_scale;         /* replay this many times faster than recorded (1) */
    double trace_skip_s;             /* replay from this time of the trace's own clock (0) */
    int closed_users;                /* process="closed": concurrent users, each sending its next
                                        request when the last one ends plus a think time */
    double think_time_s;             /* closed: mean think time (0: none) */
    char think_dist[16];             /* closed: fixed | exponential (think-distribution) */
    int arrivals_line;
    /* <requests> length distributions (mean = input-tokens / output-tokens) */
    char input_dist[16], output_dist[16];   /* fixed | exponential | lognormal | gamma | uniform */
    double input_cv, output_cv;      /* lognormal / gamma (1 default) */
    /* <autoscale> */
    int autoscale;
    char autoscale_metric[16];       /* queue | concurrency | latency */
    int min_replicas, max_replicas;
    double autoscale_target;         /* queue: waiting requests per replica; concurrency: waiting +
                                        running per replica; latency: mean TTFT, seconds */
    double autoscale_interval_s, autoscale_startup_s, autoscale_cooldown_s;
    int autoscale_line;
    /* <model> children: several models multiplexed on the same replicas */
    struct sc_serve_model *models;
    int n_models;
    /* disaggregated="true": prompts prefilled on one pool of replicas, their KV
     * cache moved to another that decodes (docs/disaggregated-serving.md) */
    int disaggregated;
    int disaggregated_given;         /* disaggregated= was written (="false" keeps <prefill>/<decode>, unused) */
    char kv_transfer[16];            /* after (the whole cache once the prompt ends) | layerwise */
    struct sc_serve_pool {           /* <prefill> and <decode>: each pool's replicas and parallelism */
        int replicas, tp, ep, max_batch, token_budget;
        int line;                    /* 0: the element is not given (the service's values) */
    } prefill, decode;
    /* Prefix caching (docs/prefix-caching.md): prefix-caching= of <inference>,
     * and the shared prefixes and conversations of <requests> */
    int prefix_caching;              /* 1: each replica caches the KV blocks of prompts it served */
    int prefix_tokens;               /* shared system prompt ahead of a request's input (0: none) */
    int prefixes;                    /* distinct shared prompts (1) */
    double prefix_share;             /* share of requests that carry one (1) */
    double prefix_zipf;              /* popularity of the prompts: Zipf exponent, 0 = uniform (0) */
    char prefix_order[12];           /* drawn (each request draws its prompt) | shuffled | grouped */
    int sessions;                    /* conversations open at once (0: none) */
    int turns;                       /* turns of a conversation before a new one starts */
    /* <speculative> (docs/speculative-decoding.md); spec_method "" = none */
    char spec_method[8];             /* draft | mtp | eagle */
    char spec_draft[CATALOG_NAME_MAX];/* method="draft": the draft model's preset */
    int spec_tokens;                 /* guesses per step (vLLM num_speculative_tokens) */
    double spec_accept[SPEC_MAX_TOKENS];   /* acceptance of each guess given the ones before */
    int spec_line;
    /* <slo e2e=>: end-to-end latency objective (0 = none) */
    double slo_e2e_s;
    /* <class> children: request classes, each with its share, lengths,
     * admission priority and SLO (docs/serving-slo.md); none: one class,
     * the service's <requests> and <slo> */
    struct sc_serve_class *classes;
    int n_classes;
} sc_inference;

/* An <slo>'s bounds (0: none) and the percentile of requests that must meet them. */
typedef struct sc_slo {
    double ttft_s, tpot_s, e2e_s;
    double percentile;
} sc_slo;

/* One request class of an <inference> (<class name= share= priority= ...>
 * with an optional <slo>). Lengths and SLO left out are the service's
 * <requests> and <slo>. */
typedef struct sc_serve_class {
    char name[SC_NAME_MAX];
    double share;                    /* relative share of the requests (1) */
    int priority;                    /* admission: higher first, arrival order within (0) */
    int input_tokens, output_tokens; /* means */
    char input_dist[16], output_dist[16];
    double input_cv, output_cv;
    sc_slo slo;                      /* its own <slo>, else the service's */
    int line;
} sc_serve_class;

/* One model of a multiplexed <inference> (<model preset= precision= share=>). */
typedef struct sc_serve_model {
    char model[CATALOG_NAME_MAX];    /* llm preset */
    precision precision;
    precision kv_precision;
    double share;                    /* relative share of the requests */
    int line;
} sc_serve_model;

typedef enum mb_kind { MB_COLLECTIVE, MB_GEMM, MB_COPY, MB_STORAGE_WRITE } mb_kind;

typedef struct sc_microbench {
    mb_kind kind;
    coll_op op;                      /* MB_COLLECTIVE */
    int ranks;
    unsigned algo_mask, proto_mask;  /* MB_COLLECTIVE algo=, protocol= (0 = the network's) */
    double min_bytes, max_bytes, factor;
    int m, n, k;                     /* MB_GEMM */
    int groups;                      /* MB_GEMM: GEMMs in one batched call (1: one) */
    precision precision;
    char copy_kind[8];               /* MB_COPY: d2d | h2d | d2h | host */
    double size_bytes;               /* MB_STORAGE_WRITE */
    int files;
    char path[256];
    int line;
} sc_microbench;

/* <cost>: prices and energy beyond the catalog's list prices. 0 = default. */
typedef struct sc_cost {
    double pue;                      /* power usage effectiveness of the facility (1.0-2.0) */
    double carbon_kg_per_kwh;        /* grid carbon intensity */
    double electricity_usd_per_kwh;  /* energy price (owned clusters pay it on top) */
    int owned;                       /* 1: nodes are owned: compute cost = amortised capex
                                        (catalog price-per-hour) + electricity; 0: cloud
                                        on-demand price, energy included */
    int line;
} sc_cost;

typedef struct scenario {
    char file[512];                  /* as given on the command line */
    char name[SC_NAME_MAX];
    uint64_t seed;
    double duration_s;               /* 0 = until the workload finishes */
    char warnings[1024];             /* "file:line: warning: ...\n" lines for stderr; "" none */
    char *xml_text;                  /* the file's bytes, for the results store */
    size_t xml_len;
    catalog *cat;                    /* builtin catalog + the scenario's <catalog> */

    sc_nodes *nodes;            int n_nodes;
    sc_network network;
    sc_storage *storage;        int n_storage;
    int spares_warm;
    double cold_provision_s;         /* <spares cold-provision>: a failed node replaced after this; 0 = repair only */
    int has_cloud;
    char cloud_node_type[CATALOG_NAME_MAX];
    int cloud_max_nodes;
    double cloud_provision_s;
    double cloud_scale_up_after_s;   /* a job waiting this long rents nodes (5 min) */
    double cloud_idle_release_s;     /* a rented node idle this long goes back (30 min) */
    sc_failure *failures;       int n_failures;
    sc_failures_cfg failure_cfg;
    char sched_policy[16];           /* fifo | priority | fair */
    int sched_preemption;
    char sched_backfill[16];         /* none | easy */
    int sched_backfill_depth;        /* jobs a scheduling pass considers (0 = 500, Slurm's bf_max_job_test) */
    char sched_placement[16];        /* pack | spread */
    sc_queue *queues;           int n_queues;
    sc_training *training;      int n_training;
    sc_jobs *jobs;              int n_jobs;
    char trace_href[512];
    sc_trace_job *trace_jobs;   int n_trace_jobs;   /* the trace's batch jobs, in file order */
    int trace_after;                 /* they come after this many <jobs> groups (document order) */
    char *trace_names;               /* their names, ids, users, accounts, each ending in NUL */
    size_t trace_names_len, trace_names_cap;
    unsigned trace_columns;          /* SC_TCOL_* bits: optional columns the trace has */
    int *trace_nodes;                /* node indices of running jobs' nodes columns */
    size_t n_trace_nodes, cap_trace_nodes;
    char snapshot_time[32];          /* <scenario snapshot-time>: wall clock of t = 0; "" none */
    sc_unavailable *unavailable; int n_unavailable;
    sc_ratios *ratios;          int n_ratios;       /* <runtime-history> */
    /* Node names (<nodes names=>): node i (cluster order) is named
     * node_text + node_name[i] (SC_NO_TEXT: unnamed); node_by_name holds
     * the named nodes' indices sorted by name. NULL: no names given. */
    char *node_text;
    size_t node_text_len, node_text_cap;
    uint32_t *node_name;
    int *node_by_name;
    int n_named;
    sc_trace_read trace_read;        /* <trace format=...>: how it was read */
    sc_inference *inference;    int n_inference;
    sc_microbench *microbench;  int n_microbench;
    host_profile *host_profile;      /* <microbenchmarks><host-profile>: price the cases on
                                        this host model (models/host.h); NULL = GPU models */
    sc_cost cost;
} scenario;

/* Load and check a scenario file. On success returns 0 and *out owns a new
 * scenario. On error returns -1, *out is NULL and err holds one line
 * "file:line: <element attr="value">: what was expected". Never prints. */
int scenario_load(const char *path, scenario **out, char *err, size_t errlen);

/* Same, from bytes in memory; `name` is used as the file in messages. */
int scenario_load_memory(const char *data, size_t len, const char *name,
                         scenario **out, char *err, size_t errlen);

void scenario_free(scenario *s);                 /* NULL is a no-op */

/* Total GPUs and nodes of the cluster. */
int scenario_gpus(const scenario *s);
int scenario_node_count(const scenario *s);

/* The cluster's index of the k-th node of <nodes> entry g, in sim/cluster.c's
 * order: node types in order of first appearance, each type's entries in
 * document order, then its cloud nodes. */
int scenario_node_index(const scenario *s, int g, int k);

/* The node named name (<nodes names=>), or -1. O(log nodes). */
int scenario_node_by_name(const scenario *s, const char *name);

/* The text at offset off of trace_names; NULL for SC_NO_TEXT. */
const char *scenario_trace_text(const scenario *s, uint32_t off);

/* The resolved node type of a <nodes> entry and its GPU. */
const node_spec *scenario_node_spec(const scenario *s, int i);

/* Append a zeroed element of size bytes to one of the scenario's arrays
 * (*arr holding *n elements; the arrays have no capacity field: room
 * doubles when the count is 0 or a power of two). Returns the element, or
 * NULL when out of memory (*arr and *n unchanged). */
void *scenario_push(void **arr, int *n, size_t size);

/* The path of a file a scenario names (a trace's href): an absolute href as
 * it is, a relative one against the folder of the scenario file, so a
 * scenario reads its files from wherever it is run (an installed copy
 * included). 0, or -1 when the path does not fit in len (buf then holds
 * an empty string). */
int scenario_path(const char *scenario_file, const char *href, char *buf, size_t len);

/* v escaped for an XML attribute value quoted with q ('"' or '\''): &, <
 * and q as entities. The caller frees the result; NULL when out of memory.
 * For tools that write scenario text (override, plan's published cases). */
char *xml_attr_escape(const char *v, char q);

#endif
