/*
 * catalog: the hardware and model data every cost model reads. GPUs, node
 * types, NICs, storage kinds and LLM architectures, as plain structs.
 *
 * The data lives in models/catalog/ (XML) (compiled into the program) and a
 * scenario may add or override entries with the same elements inside
 * <catalog>. Each struct's attributes are described by a field table
 * (catalog_fields_*) that the XML loader and calibration use to set a field
 * by name. The tables are generated at build time from one declaration per
 * attribute in models/catalog_fields.txt (tools/fields.sh): to add a
 * figure, add a member and a line there.
 *
 * Every figure that is not a vendor peak is an efficiency with a name, a
 * default in the table and its source in the XML comment beside it.
 */
#ifndef CT_CATALOG_H
#define CT_CATALOG_H

#include <stddef.h>

#define CATALOG_NAME_MAX 48

typedef enum precision {
    PREC_FP64, PREC_FP32, PREC_TF32, PREC_BF16, PREC_FP16, PREC_FP8, PREC_INT8, PREC_INT4,
    PREC_FP6, PREC_FP4,               /* Blackwell/CDNA4 microscaling types (element bits;
                                         block scales are the format's, see precision_bytes) */
    PREC_COUNT
} precision;

/* "bf16" -> PREC_BF16; returns -1 for an unknown name. */
int precision_parse(const char *z);
const char *precision_name(precision p);
/* Bytes per element, block scales not counted: fp32 4, bf16 2, fp8 1,
 * fp6 0.75, int4 and fp4 0.5. */
double precision_bytes(precision p);

typedef struct gpu_spec {
    char name[CATALOG_NAME_MAX];
    char vendor[16];
    char arch[16];                    /* ampere | hopper | blackwell | cdna3 | cdna4; "" when not given */
    double tflops[PREC_COUNT];        /* dense tensor peak by precision, TFLOP/s; 0 = none */
    double vector_tflops;             /* non-tensor FP32 peak, TFLOP/s */
    double hbm_bytes;
    double hbm_bw_bytes_per_s;
    double l2_bytes;
    int sms;                          /* streaming multiprocessors / compute units */
    double tdp_w;
    double idle_w;
    double price_per_hour_usd;        /* on-demand cloud list price per GPU-hour */
    /* Efficiencies (fractions of the peaks above). */
    double eff_gemm;                  /* achievable fraction of tensor peak, large GEMMs */
    double eff_hbm;                   /* achievable fraction of HBM bandwidth (stream copy) */
    double eff_attention;             /* fused attention kernels vs tensor peak */
    double gemm_half_dim;             /* GEMM size (geometric mean of m,n,k) at which
                                         efficiency is half of eff_gemm */
    /* Calibrated per precision (a hardware profile's gpu.gemm.P.*, docs/gpu-calibration.md):
     * 0 = eff_gemm / gemm_half_dim, shared by every precision. */
    double eff_gemm_by_prec[PREC_COUNT];
    double gemm_half_dim_by_prec[PREC_COUNT];
    double copy_latency_s;            /* launch + sync of one timed device copy; 0 = the
                                         microbenchmark default (models/microbench.c) */
    double eff_sustained;             /* fraction of the benchmark rates above held in a
                                         long run at the power limit (clock throttling) */
    /* Power limits (models/power.c). tdp_w is the limit the board runs at. */
    double max_power_w;               /* highest limit the board accepts; 0 = tdp_w */
    double eff_sustained_power_w;     /* limit eff_sustained was measured at; 0 = tdp_w */
    /* Fused attention by pass, where measured (0 = eff_attention):
     * forward of causal-masked kernels, forward of unmasked blocks (the
     * ring's off-diagonal blocks under context parallelism), backward. */
    double eff_attention_fwd_causal;
    double eff_attention_fwd_full;
    double eff_attention_bwd;
    /* FP8 and BF16/FP16 dense GEMMs bound by their weight read (small M,
     * serving's linear layers; docs/small-batch-gemm.md): the fraction of
     * the HBM peak the weights stream at (0 = eff_hbm) and the fixed time
     * of one call beyond that stream, the graph-replay gap before it
     * included (0 = none). */
    double eff_hbm_gemm_fp8;
    double gemm_call_fp8_s;
    double eff_hbm_gemm_bf16;
    double gemm_call_bf16_s;
    /* Softmax exponentials (models/gpu.c, gpu_attention_pass_s): dense
     * bf16 tensor FLOPs per SFU exponential in the same time, this GPU's
     * and that of the GPU its attention efficiencies were measured on
     * (0 = not modelled; 0 for the reference = this GPU's own). */
    double bf16_flops_per_exp;
    double eff_attention_flops_per_exp;
    /* TensorRT-LLM's CUTLASS fused-MoE layer (serving's routed experts;
     * docs/moe-serving.md "The CUTLASS fused MoE"), by expert precision
     * (fp4, fp8, bf16): its fixed time per layer, its time per local
     * expert the batch touches, and the rate of its routing kernels'
     * traffic as a fraction of the HBM peak; all fitted to NVIDIA's
     * measured layer times. 0 = not measured: the layer is priced from
     * its grouped GEMMs at the copy rate. */
    double cutlass_moe_fp4_s, cutlass_moe_expert_fp4_s, eff_cutlass_moe_route_fp4;
    double cutlass_moe_fp8_s, cutlass_moe_expert_fp8_s, eff_cutlass_moe_route_fp8;
    double cutlass_moe_bf16_s, cutlass_moe_expert_bf16_s, eff_cutlass_moe_route_bf16;
    /* TensorRT-LLM's context-attention call (serving's prefill attention;
     * docs/serving.md "Prefill attention, measured"): its fixed time per
     * layer, and by compute precision (bf16, fp8) its time per 64-row query
     * tile and head and the rate of its causal work as a fraction of that
     * precision's peak; fitted to NVIDIA's measured call times. 0 = not
     * measured: prefill attention is its causal FLOPs at
     * eff_prefill_attention of the bf16 peak. */
    double ctx_fmha_s;
    double ctx_fmha_tile_bf16_s, eff_ctx_fmha_bf16;
    double ctx_fmha_tile_fp8_s, eff_ctx_fmha_fp8;
    /* TensorRT-LLM's MLA generation call (an MLA model's decode attention;
     * docs/moe-serving.md "MLA decode, measured"), by KV-cache precision:
     * its fixed time per layer, time per sequence and per sequence and
     * query head, and the rates of its absorbed (query, key) work and of
     * its latent-cache read as fractions of the compute and HBM peaks;
     * fitted to NVIDIA's measured call times. 0 = not measured. */
    double mla_gen_fp8_s, mla_gen_seq_fp8_s, mla_gen_head_fp8_s, eff_mla_gen_fp8, eff_mla_gen_hbm_fp8;
    double mla_gen_bf16_s, mla_gen_seq_bf16_s, mla_gen_head_bf16_s, eff_mla_gen_bf16, eff_mla_gen_hbm_bf16;
} gpu_spec;

typedef struct nic_spec {
    char name[CATALOG_NAME_MAX];
    char kind[16];                    /* infiniband | roce | efa | ethernet (descriptive) */
    double bw_bytes_per_s;            /* per direction */
    double latency_s;                 /* one-way small-message latency, host to host */
    double eff_bw;                    /* achievable fraction of line rate for large transfers */
    /* NCCL's network transport (models/collective.c). */
    double eff_coll;                  /* fraction of line rate collectives reach per NIC */
    double hop_ll_s;                  /* per-hop proxy/transport latency beyond latency_s, LL */
    double hop_ll128_s;               /* ... LL128 */
    double hop_simple_s;              /* ... Simple */
} nic_spec;

typedef struct node_spec {
    char name[CATALOG_NAME_MAX];
    char gpu[CATALOG_NAME_MAX];       /* gpu_spec name */
    int gpus;                         /* GPUs per node */
    double nvlink_bw_bytes_per_s;     /* per GPU, per direction, into the NVLink fabric */
    int nvswitch;                     /* 1: all-to-all through NVSwitch */
    int nvls;                         /* 1: NVLink SHARP (in-switch reduction) available */
    double nvlink_latency_s;
    int nvlink_domain;                /* GPUs in one NVLink (scale-up) domain: a multiple of
                                         gpus spanning nvlink_domain/gpus nodes (GB200 NVL72:
                                         72 GPUs over 18 4-GPU trays); 0 = the node's gpus */
    char nic[CATALOG_NAME_MAX];       /* nic_spec name of the compute-fabric NICs */
    int nics;                         /* compute-fabric NICs per node */
    double pcie_bw_bytes_per_s;       /* host<->GPU per GPU, per direction */
    double pcie_latency_s;            /* DMA set-up of one host<->GPU copy; 0 = the
                                         microbenchmark default (models/microbench.c) */
    double host_s_per_seq;            /* serving: host (CPU) time per sequence of a batch
                                         iteration; 0 = the serving model's default
                                         (models/serving.c, docs/moe-serving.md) */
    double host_mem_bytes;
    double host_mem_bw_bytes_per_s;
    double nvme_bytes;
    double nvme_bw_bytes_per_s;
    double storage_nic_bw_bytes_per_s;/* front-end (storage) network per node */
    double overhead_w;                /* CPUs, fans, NICs: node power beyond its GPUs at load */
    double price_per_hour_usd;        /* whole node, cloud on-demand */
    double eff_nvlink;                /* achievable fraction of NVLink bandwidth */
    /* Collectives on this node type (models/collective.c; NCCL's tuning model). */
    double eff_nvls;                  /* NVLS all-reduce: fraction of the ideal multicast rate */
    double eff_tree;                  /* tree bandwidth relative to ring */
    double eff_ll;                    /* LL protocol bandwidth relative to Simple */
    double eff_ll128;                 /* LL128 protocol bandwidth relative to Simple */
    int coll_channels;                /* NCCL channels (parallel rings/trees) at full size */
    double coll_window_bytes;         /* Simple: bytes per channel per pipeline step */
    double ll_channel_bytes;          /* LL/LL128: bytes per rank a channel needs before
                                         another channel is added */
    double coll_launch_s;             /* per collective: launch and host enqueue */
    double coll_base_ll_s;            /* per collective base latency by protocol */
    double coll_base_ll128_s;
    double coll_base_simple_s;
    double nvlink_hop_ll_s;           /* per NVLink hop (pipeline step) by protocol */
    double nvlink_hop_ll128_s;
    double nvlink_hop_simple_s;
    double nvls_latency_s;            /* NVLS operation latency inside the node */
} node_spec;

typedef struct storage_spec {
    char name[CATALOG_NAME_MAX];      /* nfs | parallel-fs | object (the kinds) */
    double bw_bytes_per_s;            /* default aggregate bandwidth of a system */
    double per_client_bw_bytes_per_s; /* ceiling per client node */
    double latency_s;                 /* per request / metadata operation */
    double price_per_tb_month_usd;
    /* The bandwidths above are for writing; models/checkpoint.c reads these. */
    double read_bw_ratio;             /* read over write bandwidth (aggregate and per client) */
    double part_size_bytes;           /* bytes per request of a large transfer (object
                                         multipart part); 0: one request per file */
    int max_requests;                 /* requests one writing process keeps in flight */
    double per_connection_bw_bytes_per_s; /* what one request stream (one TCP connection)
                                         carries; a process reaches max_requests times
                                         this (0: not a limit) */
} storage_spec;

typedef struct llm_spec {
    char name[CATALOG_NAME_MAX];
    int layers;
    int hidden;
    int ffn_hidden;
    int heads;
    int kv_heads;
    int vocab;
    int max_context;                  /* tokens */
    int experts;                      /* routed experts per MoE layer; 0 or 1: dense */
    int experts_per_token;            /* routed experts each token goes to (top-k) */
    int gated_ffn;                    /* 1: SwiGLU-style three matrices */
    int tied_embeddings;
    /* Mixture of experts (models/transformer.h says how each one counts). */
    int shared_experts;               /* experts every token passes through besides its top-k */
    int expert_ffn_hidden;            /* FFN inner size of one expert; 0 = ffn_hidden */
    int dense_layers;                 /* the first layers keep a dense FFN of ffn_hidden */
    int moe_every;                    /* after them, every n-th layer is MoE (1: all; 2: every
                                         other, Llama 4 Maverick); 0 = 1 */
    char router[16];                  /* gate over the experts: softmax | sigmoid */
    /* Attention variants. */
    int head_dim;                     /* per head; 0 = hidden/heads */
    int q_lora_rank;                  /* MLA: query down-projection rank; 0: full-rank query */
    int kv_lora_rank;                 /* MLA: compressed key/value rank; > 0 turns MLA on */
    int rope_head_dim;                /* MLA: decoupled rotary key dimension per head */
    int v_head_dim;                   /* MLA: value dimension per head; 0 = head_dim */
    int attn_window;                  /* sliding-window or chunked attention span, tokens;
                                         0: every layer attends to the whole context */
    int global_every;                 /* with attn_window: every n-th layer attends to the
                                         whole context (GPT-OSS 2, Llama 4 4); 0: none does */
    int attn_chunked;                 /* 1: the local layers attend within fixed chunks of
                                         attn_window tokens (Llama 4's attention_chunk_size),
                                         not to a window sliding with the query */
    int mtp_depth;                    /* multi-token prediction modules (DeepSeek-V3: 1) */
    int fp8_block_scales;             /* 1: its FP8 checkpoint scales weights in 128x128 blocks
                                         (DeepSeek-V3's own release); 0: per tensor (ModelOpt) */
} llm_spec;

/* A serving engine's defaults (models/catalog/engines.xml; docs/serving-engines.md):
 * what an <inference engine="..."> runs with unless its own attributes say
 * otherwise. The host figures feed models/serving (serve_params). */
typedef struct engine_spec {
    char name[CATALOG_NAME_MAX];
    char scheduler[16];               /* overlap: the host prepares iteration i+1 while the
                                         GPUs run i (an iteration lasts the longer of the
                                         two); sync: host work and GPU work add up */
    double host_step_s;               /* host time of every iteration besides its sequences'
                                         share (scheduling, input preparation, output
                                         processing, API server where it shares the process) */
    double host_s_per_seq;            /* host time per sequence of an iteration; 0 = the
                                         serving model's default (models/serving.c) */
    double gemm_efficiency;           /* fraction of the serving model's GEMM rate the engine's
                                         kernels reach; 0 = all of it (1) */
    double kv_read_efficiency;        /* fraction of the serving model's KV-cache read rate the
                                         engine's decode attention kernel reaches; 0 = all (1) */
    char cuda_graph_sizes[160];       /* captured decode batch sizes: "1,2,4,8-248/8,256-512/16";
                                         a decode-only batch is padded up to the next one,
                                         larger ones run at their size; "" = none */
    int max_batch;                    /* max_num_seqs / max_batch_size; 0 = the scenario default */
    int token_budget;                 /* max_num_batched_tokens / chunked prefill size; 0 = default */
    int chunked_prefill;              /* 1: prompts split to fill the token budget */
    int prefill_alone;                /* 1: without chunking, an iteration that runs prompts runs
                                         no decode step (vLLM V0's default scheduler) */
    int block_size;                   /* KV block (page) tokens; 0 = default (16) */
    char kv_allocation[16];           /* reserve | on-demand; "" = default (reserve) */
    char kv_preemption[16];           /* recompute | swap; "" = default (recompute) */
    char fp8_act_quant[8];            /* kernel | fused; "" = default (fused) */
    char fused_moe[16];               /* cutlass | roofline; "" = default (roofline) */
    char context_fmha[16];            /* trtllm | roofline; "" = default (roofline) */
    char mla_decode[16];              /* trtllm | roofline; "" = default (roofline) */
    char moe_comm[16];                /* auto | alltoall | allgather; "" = default (auto) */
    char attn_dp_limits[16];          /* replica | per-rank; "" = default (replica) */
} engine_spec;

typedef struct catalog catalog;

catalog *catalog_new(void);                     /* empty; NULL when out of memory */
void catalog_free(catalog *c);                  /* NULL is a no-op */

/* Add an entry, replacing one of the same name. Copies the struct.
 * Returns 0, or -1 when out of memory (catalog unchanged). */
int catalog_put_gpu(catalog *c, const gpu_spec *g);
int catalog_put_nic(catalog *c, const nic_spec *n);
int catalog_put_node(catalog *c, const node_spec *n);
int catalog_put_storage(catalog *c, const storage_spec *s);
int catalog_put_llm(catalog *c, const llm_spec *m);
int catalog_put_engine(catalog *c, const engine_spec *e);

/* Lookup by exact name; NULL when absent. Pointers stay valid until the
 * next put of the same kind or catalog_free(). */
const gpu_spec *catalog_gpu(const catalog *c, const char *name);
const nic_spec *catalog_nic(const catalog *c, const char *name);
const node_spec *catalog_node(const catalog *c, const char *name);
const storage_spec *catalog_storage(const catalog *c, const char *name);
const llm_spec *catalog_llm(const catalog *c, const char *name);
const engine_spec *catalog_engine(const catalog *c, const char *name);

/* Iteration: count and i-th entry (in insertion order). */
int catalog_count(const catalog *c, const char *kind);  /* "gpu" "nic" "node" "storage" "llm" "stack" "engine"
                                                           "failure-profile" (models/reliability.h) */
const void *catalog_at(const catalog *c, const char *kind, int i);

/* Comma-separated names of one kind, for "expected one of" messages. */
void catalog_names(const catalog *c, const char *kind, char *buf, size_t len);

/* ---- Field tables: attribute name -> member --------------------------- */

typedef enum field_type {
    FIELD_STR,        /* char[size] */
    FIELD_INT,        /* int; a count (units "count") */
    FIELD_BOOL,       /* int 0/1; "true"/"false"/"1"/"0"/"yes"/"no" */
    FIELD_NUMBER,     /* double, plain number */
    FIELD_SIZE,       /* double, bytes */
    FIELD_BW,         /* double, bytes/s */
    FIELD_DURATION,   /* double, seconds */
    FIELD_FRACTION    /* double in (0, 1] */
} field_type;

typedef struct catalog_field {
    const char *attr;      /* XML attribute name, e.g. "hbm-bw" */
    field_type type;
    size_t offset;         /* offsetof in the struct */
    size_t size;           /* for FIELD_STR: buffer size */
    int required;          /* 1: an entry without it is an error */
    double def;            /* default for numbers when absent */
    const char *doc;       /* one line of documentation (models/catalog_fields.txt) */
} catalog_field;

/* Generated from models/catalog_fields.txt (build/gen/catalog_fields.c).
 * Each table ends with an entry whose attr is NULL. */
extern const catalog_field catalog_fields_gpu[];
extern const catalog_field catalog_fields_nic[];
extern const catalog_field catalog_fields_node[];
extern const catalog_field catalog_fields_storage[];
extern const catalog_field catalog_fields_llm[];
extern const catalog_field catalog_fields_engine[];

/* Table for an XML element name ("gpu", "nic", "node", "storage", "llm", "stack", "engine",
 * "failure-profile");
 * NULL for an unknown element. *struct_size receives sizeof the struct. */
const catalog_field *catalog_fields_for(const char *element, size_t *struct_size);

/* Set every numeric field of an entry to its table default (strings empty). */
void catalog_defaults(const catalog_field *fields, void *entry);

/* Put an entry of element kind ("gpu", ...) built from a field table. */
int catalog_put(catalog *c, const char *element, const void *entry);

#endif
