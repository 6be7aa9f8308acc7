/*
 * checkpoint: how big a training job's checkpoint is, how long writing and
 * loading it take on a storage system, and how often to take one.
 *
 * Pure functions of plain structs (the model, the parallel plan, the
 * fabric, the storage kind); the simulator asks once per job and then
 * schedules checkpoint events. Sizes in bytes, times in seconds.
 *
 * What is saved (ckpt_contents; defaults from ckpt_contents_default, a
 * scenario's <checkpoint weights= master-weights= optimizer=> over them
 * through ckpt_contents_choose):
 *
 *   per parameter, mixed-precision Adam       bytes
 *   ─────────────────────────────────────────  ─────
 *   model weights in the training precision    2   (bf16; fp16 runs fp16; fp8
 *                                                   runs keep bf16 weights)
 *   fp32 master weights                        4
 *   fp32 first moment (m)                      4
 *   fp32 second moment (v)                     4
 *   ─────────────────────────────────────────  ─────
 *   optimizer state alone (README's "12 B")    12
 *   with the bf16 weights (the default)        14  Megatron-LM, DeepSpeed and
 *                                                  BLOOM save both
 *
 * plus per rank the data-loader and RNG state (kilobytes). fp32 training
 * has no separate master: 4 + 8 = 12. SGD with momentum keeps one moment,
 * Adafactor a factored second moment (rows + columns per matrix).
 *
 * Who writes (ckpt_layout), with R = tp·pp·dp·cp ranks and one copy of the
 * model split tp·pp ways, replicated over the dp·cp data-parallel replicas:
 *
 *   sharded          every rank writes its own shard files in parallel.
 *                    What is replicated is written by replica 0 only:
 *                    sharding none -> weights and optimizer by the tp·pp
 *                    ranks of replica 0 (Megatron without the distributed
 *                    optimizer); zero1/zero2 -> optimizer state by all R
 *                    ranks (it is split over DP), weights by replica 0
 *                    (DeepSpeed ZeRO: the mp_rank files); fsdp -> all R.
 *   fully-parallel   as sharded, but replicated state is spread over the
 *                    replicas too, so all R ranks write 1/R of everything
 *                    (Megatron-Core dist-ckpt fully parallel save, torch
 *                    DCP's deduplicating planner). Loading reads 1/R per
 *                    rank and all-gathers the replicated part over DP.
 *   rank0            everything is gathered to rank 0 over the compute
 *                    network (one GPU's NIC and PCIe link: FSDP
 *                    FULL_STATE_DICT with rank0_only and offload_to_cpu,
 *                    or torch.save of a gathered state dict) and written
 *                    by that one node through one storage client, one
 *                    process. The gathered state must fit rank 0's host
 *                    memory (host_mem_fraction of the node's DRAM) unless
 *                    the gather streams (ckpt_job.streaming_gather): rank 0
 *                    then receives and writes it in chunks of half that
 *                    budget, double-buffered, so a save takes
 *                    max(gather, write) plus one chunk's shorter stage
 *                    instead of gather + write. ckpt_host_check() says
 *                    when an in-memory gather does not fit.
 *
 * A writing node is bounded by the least of its storage NIC (node_spec
 * storage_nic_bw_bytes_per_s x storage_nic_eff; the compute NICs when the
 * node has no separate storage network), its client bandwidth
 * (ckpt_client_bw: the kind's per-client ceiling, and for a kind with a
 * per-connection-bw, each writing process's max-requests connections at
 * that rate), its GPUs' PCIe links and half its host memory bandwidth (data
 * crosses DRAM twice); the whole write by the system's aggregate
 * bandwidth; and each writing process by per-request latency: files (and
 * object-store multipart parts, at most 10,000 per object) over the
 * requests it keeps in flight. Loading reads the same way at
 * storage_spec read_bw_ratio times the write bandwidths.
 *
 * Mode: sync stalls training for the whole write. async stalls only for
 * the snapshot into pinned host memory (the busiest GPU's shard over its
 * PCIe link); the write then runs behind training. It shares the node's
 * NICs with training only when the node has no separate storage network,
 * and then slows the job's network-bound time in proportion (slowdown).
 */
#ifndef CT_CHECKPOINT_H
#define CT_CHECKPOINT_H

#include "models/catalog.h"
#include "models/collective.h"
#include "models/train_plan.h"

typedef enum ckpt_optimizer { CKPT_OPT_ADAM, CKPT_OPT_SGD, CKPT_OPT_ADAFACTOR, CKPT_OPT_NONE } ckpt_optimizer;
typedef enum ckpt_layout { CKPT_SHARDED, CKPT_FULLY_PARALLEL, CKPT_RANK0 } ckpt_layout;
typedef enum ckpt_mode { CKPT_SYNC, CKPT_ASYNC } ckpt_mode;

/* Names: "adam" "sgd" "adafactor" "none"; "sharded" "fully-parallel"
 * "rank0"; "sync" "async". Parsers return -1 for an unknown name. */
int ckpt_optimizer_parse(const char *z);
const char *ckpt_optimizer_name(ckpt_optimizer o);
int ckpt_layout_parse(const char *z);
const char *ckpt_layout_name(ckpt_layout l);
int ckpt_mode_parse(const char *z);
const char *ckpt_mode_name(ckpt_mode m);

/* Data-loader and RNG state per rank: Python and NumPy Mersenne Twister
 * states (2.5 KB each), torch CPU and CUDA generators, a stateful loader's
 * per-worker offsets: kilobytes; rounded up to 64 KiB (engineering
 * estimate). */
#define CKPT_LOADER_BYTES_PER_RANK 65536.0

/* S3 multipart upload limit: at most 10,000 parts per object (Amazon S3
 * user guide, "multipart upload limits"); larger objects need larger parts. */
#define CKPT_OBJECT_MAX_PARTS 10000.0

/* ---- Size ------------------------------------------------------------- */

/* What a checkpoint holds. */
typedef struct ckpt_contents {
    precision weights_precision;     /* model weights as trained: bf16, fp16, or fp32 */
    int save_weights;                /* 1: weights saved in weights_precision too (beside
                                        the fp32 master when there is one) */
    int master_weights;              /* 1: an fp32 master copy exists and is saved (mixed
                                        precision); 0: the weights are the master (fp32) */
    ckpt_optimizer optimizer;
    double state_bytes_per_param;    /* optimizer moments per parameter; < 0: by kind
                                        (adam 8, sgd 4, adafactor factored, none 0) */
    double loader_bytes_per_rank;    /* data loader + RNG state per rank */
} ckpt_contents;

/* Defaults for a run computing in `compute`: fp32/tf32 -> fp32 weights, no
 * separate master; fp16 -> fp16 weights + fp32 master; bf16, fp8 and the
 * rest -> bf16 weights + fp32 master (fp8 training keeps bf16 weights and
 * fp32 master state: Transformer Engine casts to fp8 per GEMM). Adam,
 * weights saved, CKPT_LOADER_BYTES_PER_RANK. */
void ckpt_contents_default(ckpt_contents *c, precision compute);

/* What a scenario's <checkpoint> chooses over those defaults
 * (weights="bf16|fp16|fp32|none", master-weights="true|false",
 * optimizer="adam|sgd|adafactor|none"); CKPT_CHOICE_DEFAULT (-1) in a
 * field keeps the default for the run's precision. */
#define CKPT_CHOICE_DEFAULT (-1)
#define CKPT_WEIGHTS_NONE   PREC_COUNT  /* weights="none": the weights in the training
                                           precision are not saved (the fp32 master is);
                                           past every precision, so parsers return it
                                           as a valid, non-negative choice */
typedef struct ckpt_choice {
    int weights;                     /* a precision (bf16, fp16, fp32), CKPT_WEIGHTS_NONE
                                        or CKPT_CHOICE_DEFAULT */
    int master_weights;              /* 1, 0 or CKPT_CHOICE_DEFAULT */
    int optimizer;                   /* a ckpt_optimizer or CKPT_CHOICE_DEFAULT */
} ckpt_choice;

/* Every field CKPT_CHOICE_DEFAULT. */
void ckpt_choice_default(ckpt_choice *ch);

/* "bf16" "fp16" "fp32" -> that precision; "none" -> CKPT_WEIGHTS_NONE; -1
 * for anything else (a checkpoint keeps weights in one of those three). */
int ckpt_weights_parse(const char *z);

/* The defaults for `compute` (ckpt_contents_default) with ch's choices
 * over them (ch NULL: the defaults). Returns 0, or -1 with one line in why
 * when the choices leave no copy of the weights (weights="none" without a
 * master copy) or a field is out of range (c then unchanged). */
int ckpt_contents_choose(ckpt_contents *c, precision compute, const ckpt_choice *ch, char *why,
                         size_t len);

typedef struct ckpt_size {
    double params;
    double weights_bytes;            /* weights in weights_precision (0 when not saved) */
    double master_bytes;             /* fp32 master weights */
    double optimizer_bytes;          /* moments */
    double loader_bytes;             /* all ranks */
    double model_bytes;              /* weights + master + optimizer */
    double total_bytes;              /* model + loader */
    double bytes_per_param;          /* model_bytes / params */
    int ranks;
} ckpt_size;

/* Size for a parameter count (Adafactor's factored state counted as 0: it
 * needs the shapes; use ckpt_size_of). Returns 0, or -1 when c is NULL,
 * params is not positive or ranks < 1 (z unchanged). */
int ckpt_size_params(double params, const ckpt_contents *c, int ranks, ckpt_size *z);

/* Size for a model (params: tf_param_counts' total). c NULL: the bf16 defaults. */
int ckpt_size_of(const llm_spec *m, const ckpt_contents *c, int ranks, ckpt_size *z);

/* The checkpoint of a job: contents defaults from the plan's precision,
 * ranks = tp·pp·dp·cp. Returns 0 or -1 on invalid input. */
int ckpt_job_size(const llm_spec *m, const train_plan *p, ckpt_size *z);

/* As ckpt_job_size, with the scenario's choices over the defaults (ch
 * NULL: the defaults). -1 also when ckpt_contents_choose rejects ch. */
int ckpt_job_size_with(const llm_spec *m, const train_plan *p, const ckpt_choice *ch, ckpt_size *z);

/* ---- Write and load time --------------------------------------------- */

/* Figures of the I/O path that are software, not hardware. Each default
 * says where it comes from in ckpt_io_params_default(). */
typedef struct ckpt_io_params {
    double storage_nic_eff;          /* achievable fraction of the storage network line rate */
    double host_mem_fraction;        /* host DRAM an async snapshot (or rank 0's gather)
                                        may use */
    double files_per_rank;           /* files each writing rank creates */
    double setup_s;                  /* per save: plan exchange and barriers */
    double commit_requests;          /* metadata requests after the barrier (index, marker) */
} ckpt_io_params;

void ckpt_io_params_default(ckpt_io_params *q);

/* One job's checkpoint path. */
typedef struct ckpt_job {
    const train_plan *plan;          /* tp, pp, dp, cp, sharding */
    const fabric *fabric;            /* node (GPUs, PCIe, storage NIC, host memory), NIC */
    const storage_spec *storage;     /* the kind */
    double storage_bw_bytes_per_s;   /* this system's aggregate write bandwidth; 0: the
                                        kind's default */
    ckpt_layout layout;
    ckpt_mode mode;
    double net_busy_fraction;        /* fraction of a step the job's inter-node traffic is
                                        on the wire (for the async slowdown); 0: unknown */
    int streaming_gather;            /* rank0: 1 = rank 0 writes the gather in chunks as
                                        they arrive (a streaming writer); 0 = the whole
                                        state dict is gathered into host memory first
                                        (torch.save of a gathered state dict) */
} ckpt_job;

typedef struct ckpt_io {
    double stall_s;                  /* training stops this long per checkpoint */
    double write_s;                  /* start of the save -> durable on storage */
    double background_s;             /* async: the write behind training (0 for sync) */
    double slowdown;                 /* async: fractional step-time increase while the
                                        background write runs (0 when none) */
    double d2h_s;                    /* GPU -> host copy of the busiest GPU's shard */
    double gather_s;                 /* rank0: collecting the state to rank 0 */
    double load_s;                   /* reading it back on restart (incl. rank0 scatter /
                                        fully-parallel all-gather) */
    double written_bytes;            /* total */
    double node_bytes;               /* the busiest writing node */
    double node_bw_bytes_per_s;      /* its write bandwidth */
    double loaded_bytes;             /* total read on restart (replicas read their copy) */
    int writer_ranks, writer_nodes;  /* ranks and nodes that write model state */
    int host_fits;                   /* 1: the snapshot (async) or rank 0's gathered state
                                        fits host_mem_fraction of host memory */
    double host_budget_bytes;        /* host_mem_fraction x the node's DRAM (0: unknown) */
    int stream_chunks;               /* rank0 streaming: chunks of the pipeline (0: not
                                        streamed) */
    const char *bound;               /* what limits the write: "aggregate", "client",
                                        "storage-nic", "pcie", "host-memory", "latency" */
} ckpt_io;

/* Evaluate one save and one load. Returns 0, or -1 on invalid input (NULL
 * pointers, a fabric without node or NIC, a storage kind without bandwidth,
 * a plan with a zero dimension) with io unchanged. Pure; about 1 us. */
int ckpt_io_time(const ckpt_job *j, const ckpt_size *z, const ckpt_io_params *q, ckpt_io *io);

/* A rank0 layout that gathers in host memory (streaming_gather 0) needs
 * the whole checkpoint in rank 0's host memory budget. Returns 0 when it
 * fits (or the layout is not rank0, or streams, or the node's DRAM is
 * unknown), else -1 with why naming the sizes and the ways out. */
int ckpt_host_check(const ckpt_job *j, const ckpt_io *io, char *why, size_t whylen);

/* Write bandwidth of one client node whose `processes` processes write in
 * parallel: the kind's per-client ceiling (per-client-bw), and when the
 * kind gives a per-connection-bw, processes x max-requests connections at
 * that rate (an object store's single TCP stream carries 85-90 MB/s:
 * models/catalog/storage.xml). INFINITY when neither bounds it. */
double ckpt_client_bw(const storage_spec *st, double processes);

/* ---- Interval --------------------------------------------------------- */

/* Young (1974): τ = √(2δM) for checkpoint cost δ and mean time to
 * interruption M. */
double ckpt_young_s(double cost_s, double mtti_s);

/* Daly (2006): τ = √(2δM)·[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ for δ < 2M, else
 * M. Returns 0 for δ <= 0 and NAN for M <= 0. */
double ckpt_daly_s(double cost_s, double mtti_s);

/* interval="auto": Daly with δ = the stall (for async the snapshot, not the
 * write), but never shorter than the background write (a save waits for the
 * previous one). */
double ckpt_auto_interval_s(const ckpt_io *io, double mtti_s);

/* Expected training time redone per failure for a fixed interval τ of
 * training between checkpoints, a stall δ per checkpoint and a commit
 * delay w (async: the background write; sync: 0), failures uniform over
 * the cycle (rare against the interval):
 *     (τ²/2 + τ(δ + w)) / (τ + δ)
 * τ/2 when δ = w = 0 (BLOOM: 3 h interval, 1.5 h lost on average). */
double ckpt_expected_lost_s(double interval_s, double stall_s, double commit_delay_s);

/* First-order effective training time ratio: training kept over elapsed,
 *     τ/(τ+δ) · (1 − (R + L·(τ+δ)/τ) / M)
 * with L = ckpt_expected_lost_s and R the recovery time per failure
 * (detection, restart, load). Clamped to [0, 1]. */
double ckpt_ettr(double interval_s, double stall_s, double commit_delay_s,
                 double mtti_s, double recovery_s);

#endif
