/*
 * catalog: tables of hardware and model entries, found by name.
 *
 * Small: tens of entries per kind, looked up while a scenario is built, not
 * during a run, so lookup is a linear scan. Each kind is a growable array of
 * fixed-size structs; an entry keeps its insertion position when replaced.
 */
#include "models/catalog.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "models/stack.h"

typedef struct table {
    char *items;       /* n * size bytes */
    size_t size;       /* sizeof one entry; its first member is char name[] */
    int n;
    size_t cap;        /* entries allocated */
} table;

struct catalog {
    table gpu, nic, node, storage, llm, stack, engine;   /* stack: models/stack.h */
};

static const char *prec_names[PREC_COUNT] = {
    "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp6", "fp4"
};
static const double prec_bytes[PREC_COUNT] = { 8, 4, 4, 2, 2, 1, 1, 0.5, 0.75, 0.5 };

int precision_parse(const char *z) {
    for (int i = 0; i < PREC_COUNT; i++)
        if (z && strcmp(z, prec_names[i]) == 0) return i;
    return -1;
}

const char *precision_name(precision p) {
    return (p >= 0 && p < PREC_COUNT) ? prec_names[p] : "?";
}

double precision_bytes(precision p) {
    return (p >= 0 && p < PREC_COUNT) ? prec_bytes[p] : 0;
}

catalog *catalog_new(void) {
    catalog *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->gpu.size = sizeof(gpu_spec);
    c->nic.size = sizeof(nic_spec);
    c->node.size = sizeof(node_spec);
    c->storage.size = sizeof(storage_spec);
    c->llm.size = sizeof(llm_spec);
    c->stack.size = sizeof(stack_spec);
    c->engine.size = sizeof(engine_spec);
    return c;
}

void catalog_free(catalog *c) {
    if (!c) return;
    free(c->gpu.items);
    free(c->nic.items);
    free(c->node.items);
    free(c->storage.items);
    free(c->llm.items);
    free(c->stack.items);
    free(c->engine.items);
    free(c);
}

/* Every entry struct starts with its name, so a table can compare names
 * without knowing the struct. */
static void *find(const table *t, const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < t->n; i++) {
        char *p = t->items + (size_t)i * t->size;
        if (strcmp(p, name) == 0) return p;
    }
    return NULL;
}

static int put(table *t, const void *entry) {
    void *p = find(t, (const char *)entry);
    if (p) {
        memcpy(p, entry, t->size);
        return 0;
    }
    /* Entries are t->size bytes, known at run time: grow_array is GROW
     * with the size given. */
    if (grow_array((void **)&t->items, &t->cap, (size_t)t->n + 1, t->size) < 0) return -1;
    memcpy(t->items + (size_t)t->n * t->size, entry, t->size);
    t->n++;
    return 0;
}

static table *table_of(const catalog *c, const char *kind) {
    catalog *m = (catalog *)c;
    if (!kind) return NULL;
    if (strcmp(kind, "gpu") == 0) return &m->gpu;
    if (strcmp(kind, "nic") == 0) return &m->nic;
    if (strcmp(kind, "node") == 0) return &m->node;
    if (strcmp(kind, "storage") == 0) return &m->storage;
    if (strcmp(kind, "llm") == 0) return &m->llm;
    if (strcmp(kind, "stack") == 0) return &m->stack;
    if (strcmp(kind, "engine") == 0) return &m->engine;
    return NULL;
}

int catalog_put_gpu(catalog *c, const gpu_spec *g) { return put(&c->gpu, g); }
int catalog_put_nic(catalog *c, const nic_spec *n) { return put(&c->nic, n); }
int catalog_put_node(catalog *c, const node_spec *n) { return put(&c->node, n); }
int catalog_put_storage(catalog *c, const storage_spec *s) { return put(&c->storage, s); }
int catalog_put_llm(catalog *c, const llm_spec *m) { return put(&c->llm, m); }
int catalog_put_engine(catalog *c, const engine_spec *e) { return put(&c->engine, e); }

const gpu_spec *catalog_gpu(const catalog *c, const char *z) { return find(&c->gpu, z); }
const nic_spec *catalog_nic(const catalog *c, const char *z) { return find(&c->nic, z); }
const node_spec *catalog_node(const catalog *c, const char *z) { return find(&c->node, z); }
const storage_spec *catalog_storage(const catalog *c, const char *z) { return find(&c->storage, z); }
const llm_spec *catalog_llm(const catalog *c, const char *z) { return find(&c->llm, z); }
const engine_spec *catalog_engine(const catalog *c, const char *z) { return find(&c->engine, z); }

int catalog_count(const catalog *c, const char *kind) {
    table *t = table_of(c, kind);
    return t ? t->n : 0;
}

const void *catalog_at(const catalog *c, const char *kind, int i) {
    table *t = table_of(c, kind);
    if (!t || i < 0 || i >= t->n) return NULL;
    return t->items + (size_t)i * t->size;
}

void catalog_names(const catalog *c, const char *kind, char *buf, size_t len) {
    table *t = table_of(c, kind);
    size_t used = 0;
    if (len == 0) return;
    buf[0] = 0;
    for (int i = 0; t && i < t->n && used + 1 < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                         t->items + (size_t)i * t->size);
        if (w < 0) break;
        used += (size_t)w;
    }
}

int catalog_put(catalog *c, const char *element, const void *entry) {
    table *t = table_of(c, element);
    return t ? put(t, entry) : -1;
}

/* ---- Field tables ------------------------------------------------------
 * Defaults for efficiencies are the fall-back when a catalog entry does not
 * give its own; models/catalog/ (XML) gives each GPU's measured figures. */

#define S(st, m) offsetof(st, m), sizeof(((st *)0)->m)
#define N(st, m) offsetof(st, m), 0

const catalog_field catalog_fields_gpu[] = {
    { "name", FIELD_STR, S(gpu_spec, name), 1, 0, "catalog name, e.g. H100-SXM5-80GB" },
    { "vendor", FIELD_STR, S(gpu_spec, vendor), 0, 0, "nvidia | amd" },
    { "arch", FIELD_STR, S(gpu_spec, arch), 0, 0, "architecture: ampere | hopper | blackwell | cdna3 | cdna4 (kernels that exist for one only, e.g. FlashAttention-3 on hopper)" },
    { "fp64-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_FP64]), 0, 0, "dense FP64 tensor peak, TFLOP/s" },
    { "fp32-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_FP32]), 0, 0, "FP32 peak (no tensor cores), TFLOP/s" },
    { "tf32-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_TF32]), 0, 0, "dense TF32 tensor peak, TFLOP/s" },
    { "bf16-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_BF16]), 1, 0, "dense BF16 tensor peak, TFLOP/s" },
    { "fp16-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_FP16]), 0, 0, "dense FP16 tensor peak, TFLOP/s" },
    { "fp8-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_FP8]), 0, 0, "dense FP8 tensor peak, TFLOP/s (0: none)" },
    { "int8-tops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_INT8]), 0, 0, "dense INT8 tensor peak, TOP/s" },
    { "int4-tops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_INT4]), 0, 0, "dense INT4 tensor peak, TOP/s (0: none)" },
    { "fp6-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_FP6]), 0, 0, "dense FP6 tensor peak, TFLOP/s (0: none)" },
    { "fp4-tflops", FIELD_NUMBER, N(gpu_spec, tflops[PREC_FP4]), 0, 0, "dense FP4 tensor peak, TFLOP/s (0: none)" },
    { "vector-tflops", FIELD_NUMBER, N(gpu_spec, vector_tflops), 0, 0, "non-tensor FP32 peak, TFLOP/s" },
    { "hbm", FIELD_SIZE, N(gpu_spec, hbm_bytes), 1, 0, "HBM capacity" },
    { "hbm-bw", FIELD_BW, N(gpu_spec, hbm_bw_bytes_per_s), 1, 0, "HBM bandwidth" },
    { "l2", FIELD_SIZE, N(gpu_spec, l2_bytes), 0, 0, "L2 cache size" },
    { "sms", FIELD_INT, N(gpu_spec, sms), 0, 0, "streaming multiprocessors (compute units)" },
    { "tdp", FIELD_NUMBER, N(gpu_spec, tdp_w), 1, 0, "board power limit, W" },
    { "idle-power", FIELD_NUMBER, N(gpu_spec, idle_w), 0, 0, "idle power, W" },
    { "price-per-hour", FIELD_NUMBER, N(gpu_spec, price_per_hour_usd), 0, 0, "on-demand price per GPU-hour, USD" },
    { "eff-gemm", FIELD_FRACTION, N(gpu_spec, eff_gemm), 0, 0.75, "achievable fraction of tensor peak on large GEMMs" },
    { "eff-hbm", FIELD_FRACTION, N(gpu_spec, eff_hbm), 0, 0.85, "achievable fraction of HBM bandwidth" },
    { "eff-attention", FIELD_FRACTION, N(gpu_spec, eff_attention), 0, 0.55, "fused attention throughput vs tensor peak" },
    { "gemm-half-dim", FIELD_NUMBER, N(gpu_spec, gemm_half_dim), 0, 256, "GEMM dimension at half of eff-gemm" },
    { "eff-sustained", FIELD_FRACTION, N(gpu_spec, eff_sustained), 0, 1, "fraction of benchmark throughput held in long runs at the power limit" },
    /* Power limits: the DVFS law of models/power.c scales eff-sustained from
     * the limit it was measured at to the limit the board runs at (tdp). */
    { "max-power", FIELD_NUMBER, N(gpu_spec, max_power_w), 0, 0, "highest power limit the board accepts, W (0: tdp)" },
    { "eff-sustained-power", FIELD_NUMBER, N(gpu_spec, eff_sustained_power_w), 0, 0, "power limit eff-sustained was measured at, W (0: tdp)" },
    /* Attention by pass (models/gpu.c gpu_attention_pass_s; docs/attention-passes.md). */
    { "eff-attention-fwd-causal", FIELD_FRACTION, N(gpu_spec, eff_attention_fwd_causal), 0, 0, "causal attention forward vs tensor peak (0: eff-attention)" },
    { "eff-attention-fwd-full", FIELD_FRACTION, N(gpu_spec, eff_attention_fwd_full), 0, 0, "unmasked attention forward vs tensor peak (0: eff-attention)" },
    { "eff-attention-bwd", FIELD_FRACTION, N(gpu_spec, eff_attention_bwd), 0, 0, "attention backward vs tensor peak (0: eff-attention)" },
    { NULL, 0, 0, 0, 0, 0, NULL }
};

const catalog_field catalog_fields_nic[] = {
    { "name", FIELD_STR, S(nic_spec, name), 1, 0, "catalog name, e.g. ndr-400" },
    { "kind", FIELD_STR, S(nic_spec, kind), 0, 0, "infiniband | roce | efa | ethernet (descriptive)" },
    { "bandwidth", FIELD_BW, N(nic_spec, bw_bytes_per_s), 1, 0, "line rate per direction" },
    { "latency", FIELD_DURATION, N(nic_spec, latency_s), 0, 2e-6, "one-way small-message latency" },
    { "eff-bw", FIELD_FRACTION, N(nic_spec, eff_bw), 0, 0.92, "achievable fraction of line rate" },
    /* Collective figures (models/collective.c): NCCL 2.18-2.21 src/graph/tuning.cc
     * hwLat[NET] ring LL/LL128/Simple is 2.7/4.0/14 us per hop including ~1 us of
     * wire latency; nccl-tests multi-node all-reduce reaches ~92% of line rate. */
    { "eff-coll", FIELD_FRACTION, N(nic_spec, eff_coll), 0, 0.92, "fraction of line rate NCCL collectives reach per NIC" },
    { "hop-ll", FIELD_DURATION, N(nic_spec, hop_ll_s), 0, 1.7e-6, "NCCL per-hop network latency beyond the wire, LL protocol" },
    { "hop-ll128", FIELD_DURATION, N(nic_spec, hop_ll128_s), 0, 3.0e-6, "NCCL per-hop network latency beyond the wire, LL128" },
    { "hop-simple", FIELD_DURATION, N(nic_spec, hop_simple_s), 0, 13e-6, "NCCL per-hop network latency beyond the wire, Simple" },
    { NULL, 0, 0, 0, 0, 0, NULL }
};

const catalog_field catalog_fields_node[] = {
    { "name", FIELD_STR, S(node_spec, name), 1, 0, "catalog name, e.g. dgx-h100" },
    { "gpu", FIELD_STR, S(node_spec, gpu), 1, 0, "GPU catalog name" },
    { "gpus", FIELD_INT, N(node_spec, gpus), 1, 0, "GPUs per node" },
    { "nvlink-bw", FIELD_BW, N(node_spec, nvlink_bw_bytes_per_s), 0, 0, "NVLink bandwidth per GPU per direction" },
    { "nvswitch", FIELD_BOOL, N(node_spec, nvswitch), 0, 0, "GPUs connected all-to-all through NVSwitch" },
    { "nvls", FIELD_BOOL, N(node_spec, nvls), 0, 0, "NVLink SHARP in-switch reduction" },
    { "nvlink-latency", FIELD_DURATION, N(node_spec, nvlink_latency_s), 0, 2e-6, "GPU-to-GPU small-message latency" },
    { "nvlink-domain", FIELD_INT, N(node_spec, nvlink_domain), 0, 0, "GPUs in one NVLink domain (a multiple of gpus; 0: the node)" },
    { "nic", FIELD_STR, S(node_spec, nic), 1, 0, "compute-fabric NIC catalog name" },
    { "nics", FIELD_INT, N(node_spec, nics), 1, 0, "compute-fabric NICs per node" },
    { "pcie-bw", FIELD_BW, N(node_spec, pcie_bw_bytes_per_s), 0, 0, "host-GPU bandwidth per GPU per direction" },
    { "host-s-per-seq", FIELD_DURATION, N(node_spec, host_s_per_seq), 0, 0,
      "serving: host (CPU) time per sequence of a batch iteration (0: the serving model's default)" },
    { "host-memory", FIELD_SIZE, N(node_spec, host_mem_bytes), 0, 0, "host DRAM" },
    { "host-memory-bw", FIELD_BW, N(node_spec, host_mem_bw_bytes_per_s), 0, 0, "host DRAM bandwidth" },
    { "nvme", FIELD_SIZE, N(node_spec, nvme_bytes), 0, 0, "local NVMe capacity" },
    { "nvme-bw", FIELD_BW, N(node_spec, nvme_bw_bytes_per_s), 0, 0, "local NVMe write bandwidth" },
    { "storage-nic-bw", FIELD_BW, N(node_spec, storage_nic_bw_bytes_per_s), 0, 0, "front-end (storage) network per node" },
    { "overhead-power", FIELD_NUMBER, N(node_spec, overhead_w), 0, 0, "node power beyond its GPUs at load, W" },
    { "price-per-hour", FIELD_NUMBER, N(node_spec, price_per_hour_usd), 0, 0, "node on-demand price per hour, USD" },
    { "eff-nvlink", FIELD_FRACTION, N(node_spec, eff_nvlink), 0, 0.80, "achievable fraction of NVLink bandwidth" },
    /* Collective figures (models/collective.c). Latencies and protocol factors are
     * NCCL's own tuning model (src/graph/tuning.cc, 2.18-2.21); sources per node in
     * models/catalog/nodes.xml. */
    { "eff-nvls", FIELD_FRACTION, N(node_spec, eff_nvls), 0, 0.68, "NVLS all-reduce: fraction of the ideal NVLink multicast rate" },
    { "eff-tree", FIELD_FRACTION, N(node_spec, eff_tree), 0, 0.92, "tree algorithm bandwidth relative to ring" },
    { "eff-ll", FIELD_FRACTION, N(node_spec, eff_ll), 0, 0.25, "NCCL LL protocol bandwidth relative to Simple" },
    { "eff-ll128", FIELD_FRACTION, N(node_spec, eff_ll128), 0, 0.92, "NCCL LL128 protocol bandwidth relative to Simple" },
    { "coll-channels", FIELD_INT, N(node_spec, coll_channels), 0, 16, "NCCL channels at full size" },
    { "coll-window", FIELD_SIZE, N(node_spec, coll_window_bytes), 0, 524288, "Simple protocol bytes per channel per pipeline step" },
    { "ll-channel-bytes", FIELD_SIZE, N(node_spec, ll_channel_bytes), 0, 4096, "LL bytes per rank per channel before NCCL adds a channel" },
    { "coll-launch-latency", FIELD_DURATION, N(node_spec, coll_launch_s), 0, 10e-6, "per collective launch and host enqueue time" },
    { "coll-base-ll", FIELD_DURATION, N(node_spec, coll_base_ll_s), 0, 6.6e-6, "collective base latency, LL protocol" },
    { "coll-base-ll128", FIELD_DURATION, N(node_spec, coll_base_ll128_s), 0, 14e-6, "collective base latency, LL128 protocol" },
    { "coll-base-simple", FIELD_DURATION, N(node_spec, coll_base_simple_s), 0, 8.4e-6, "collective base latency, Simple protocol" },
    { "nvlink-hop-ll", FIELD_DURATION, N(node_spec, nvlink_hop_ll_s), 0, 0.6e-6, "per NVLink hop latency, LL protocol" },
    { "nvlink-hop-ll128", FIELD_DURATION, N(node_spec, nvlink_hop_ll128_s), 0, 1.9e-6, "per NVLink hop latency, LL128 protocol" },
    { "nvlink-hop-simple", FIELD_DURATION, N(node_spec, nvlink_hop_simple_s), 0, 3.4e-6, "per NVLink hop latency, Simple protocol" },
    { "nvls-latency", FIELD_DURATION, N(node_spec, nvls_latency_s), 0, 23e-6, "NVLink SHARP operation latency inside the node" },
    { NULL, 0, 0, 0, 0, 0, NULL }
};

const catalog_field catalog_fields_storage[] = {
    { "name", FIELD_STR, S(storage_spec, name), 1, 0, "storage kind: nfs | parallel-fs | object" },
    { "bandwidth", FIELD_BW, N(storage_spec, bw_bytes_per_s), 1, 0, "default aggregate bandwidth" },
    { "per-client-bw", FIELD_BW, N(storage_spec, per_client_bw_bytes_per_s), 0, 0, "ceiling per client node" },
    { "latency", FIELD_DURATION, N(storage_spec, latency_s), 0, 1e-3, "per request" },
    { "price-per-tb-month", FIELD_NUMBER, N(storage_spec, price_per_tb_month_usd), 0, 0, "USD per TB-month" },
    /* Checkpoint I/O (models/checkpoint.c); sources per kind in models/catalog/storage.xml. */
    { "read-bw-ratio", FIELD_NUMBER, N(storage_spec, read_bw_ratio), 0, 1, "read over write bandwidth (aggregate and per client)" },
    { "part-size", FIELD_SIZE, N(storage_spec, part_size_bytes), 0, 0, "bytes per request of a large transfer (object multipart part); 0: one request per file" },
    { "max-requests", FIELD_INT, N(storage_spec, max_requests), 0, 1, "requests one writing process keeps in flight" },
    { "per-connection-bw", FIELD_BW, N(storage_spec, per_connection_bw_bytes_per_s), 0, 0, "what one request stream (connection) carries; a writing process reaches max-requests times this; 0: not a limit" },
    { NULL, 0, 0, 0, 0, 0, NULL }
};

const catalog_field catalog_fields_llm[] = {
    { "name", FIELD_STR, S(llm_spec, name), 1, 0, "preset name, e.g. llama3-70b" },
    { "layers", FIELD_INT, N(llm_spec, layers), 1, 0, "transformer layers" },
    { "hidden", FIELD_INT, N(llm_spec, hidden), 1, 0, "hidden size" },
    { "ffn-hidden", FIELD_INT, N(llm_spec, ffn_hidden), 1, 0, "FFN inner size" },
    { "heads", FIELD_INT, N(llm_spec, heads), 1, 0, "attention heads" },
    { "kv-heads", FIELD_INT, N(llm_spec, kv_heads), 0, 0, "key/value heads (GQA); 0 = heads" },
    { "vocab", FIELD_INT, N(llm_spec, vocab), 1, 0, "vocabulary size" },
    { "max-context", FIELD_INT, N(llm_spec, max_context), 0, 4096, "context length, tokens" },
    { "experts", FIELD_INT, N(llm_spec, experts), 0, 0, "MoE experts (0: dense)" },
    { "experts-per-token", FIELD_INT, N(llm_spec, experts_per_token), 0, 0, "MoE experts active per token" },
    { "gated-ffn", FIELD_BOOL, N(llm_spec, gated_ffn), 0, 1, "SwiGLU-style gated FFN (three matrices)" },
    { "tied-embeddings", FIELD_BOOL, N(llm_spec, tied_embeddings), 0, 0, "input and output embeddings shared" },
    { "shared-experts", FIELD_INT, N(llm_spec, shared_experts), 0, 0, "MoE experts every token also passes through" },
    { "expert-ffn-hidden", FIELD_INT, N(llm_spec, expert_ffn_hidden), 0, 0, "FFN inner size of one expert; 0 = ffn-hidden" },
    { "dense-layers", FIELD_INT, N(llm_spec, dense_layers), 0, 0, "first layers with a dense FFN before the MoE layers" },
    { "moe-every", FIELD_INT, N(llm_spec, moe_every), 0, 1, "after the dense layers, every n-th layer is MoE" },
    { "router", FIELD_STR, S(llm_spec, router), 0, 0, "MoE gate: softmax or sigmoid" },
    { "head-dim", FIELD_INT, N(llm_spec, head_dim), 0, 0, "dimension per attention head; 0 = hidden/heads" },
    { "q-lora-rank", FIELD_INT, N(llm_spec, q_lora_rank), 0, 0, "MLA query down-projection rank; 0: full rank" },
    { "kv-lora-rank", FIELD_INT, N(llm_spec, kv_lora_rank), 0, 0, "MLA compressed key/value rank; > 0: MLA" },
    { "rope-head-dim", FIELD_INT, N(llm_spec, rope_head_dim), 0, 0, "MLA decoupled rotary key dimension per head" },
    { "v-head-dim", FIELD_INT, N(llm_spec, v_head_dim), 0, 0, "MLA value dimension per head; 0 = head-dim" },
    { "attn-window", FIELD_INT, N(llm_spec, attn_window), 0, 0, "sliding-window/chunked attention span, tokens; 0: none" },
    { "global-every", FIELD_INT, N(llm_spec, global_every), 0, 0, "with attn-window: every n-th layer attends globally" },
    { "mtp-depth", FIELD_INT, N(llm_spec, mtp_depth), 0, 0, "multi-token prediction modules" },
    { NULL, 0, 0, 0, 0, 0, NULL }
};

/* Serving engines (models/catalog/engines.xml, sources beside each entry). */
const catalog_field catalog_fields_engine[] = {
    { "name", FIELD_STR, S(engine_spec, name), 1, 0, "engine name, e.g. vllm" },
    { "scheduler", FIELD_STR, S(engine_spec, scheduler), 0, 0,
      "overlap (host work hidden behind the previous iteration) or sync (added to it)" },
    { "host-step", FIELD_DURATION, N(engine_spec, host_step_s), 0, 0, "host time of every iteration" },
    { "host-per-seq", FIELD_DURATION, N(engine_spec, host_s_per_seq), 0, 0,
      "host time per sequence of an iteration; 0: the serving model's default" },
    { "gemm-efficiency", FIELD_FRACTION, N(engine_spec, gemm_efficiency), 0, 0,
      "fraction of the serving model's GEMM rate the engine's kernels reach; left out: 1" },
    { "cuda-graph-sizes", FIELD_STR, S(engine_spec, cuda_graph_sizes), 0, 0,
      "captured decode batch sizes, e.g. 1,2,4,8-248/8,256-512/16 (first-last/step)" },
    { "max-batch", FIELD_INT, N(engine_spec, max_batch), 0, 0, "default sequences per iteration; 0: the scenario's" },
    { "token-budget", FIELD_INT, N(engine_spec, token_budget), 0, 0, "default tokens per iteration; 0: the scenario's" },
    { "chunked-prefill", FIELD_BOOL, N(engine_spec, chunked_prefill), 0, 0, "prompts split to fill the token budget" },
    { "block-size", FIELD_INT, N(engine_spec, block_size), 0, 0, "KV block (page) tokens; 0: 16" },
    { "kv-allocation", FIELD_STR, S(engine_spec, kv_allocation), 0, 0, "reserve or on-demand" },
    { "kv-preemption", FIELD_STR, S(engine_spec, kv_preemption), 0, 0, "recompute or swap" },
    { NULL, 0, 0, 0, 0, 0, NULL }
};

const catalog_field *catalog_fields_for(const char *element, size_t *struct_size) {
    static const struct { const char *z; const catalog_field *f; size_t n; } map[] = {
        { "gpu", catalog_fields_gpu, sizeof(gpu_spec) },
        { "nic", catalog_fields_nic, sizeof(nic_spec) },
        { "node", catalog_fields_node, sizeof(node_spec) },
        { "storage", catalog_fields_storage, sizeof(storage_spec) },
        { "llm", catalog_fields_llm, sizeof(llm_spec) },
        { "stack", catalog_fields_stack, sizeof(stack_spec) },
        { "engine", catalog_fields_engine, sizeof(engine_spec) },
    };
    for (size_t i = 0; element && i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(element, map[i].z) == 0) {
            if (struct_size) *struct_size = map[i].n;
            return map[i].f;
        }
    }
    return NULL;
}

void catalog_defaults(const catalog_field *f, void *entry) {
    char *base = entry;
    for (; f->attr; f++) {
        switch (f->type) {
        case FIELD_STR: base[f->offset] = 0; break;
        case FIELD_INT:
        case FIELD_BOOL: *(int *)(base + f->offset) = (int)f->def; break;
        default: *(double *)(base + f->offset) = f->def; break;
        }
    }
}
