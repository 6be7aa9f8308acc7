/*
 * serving: iteration time and KV capacity of an inference server (see
 * serving.h).
 *
 * serve_model_init does the architecture arithmetic once; serve_iter_s is
 * the hot path of the serving simulation (one call per simulated batch
 * iteration): five GEMM rooflines, two attention terms, one elementwise
 * term and, with tensor parallelism, two collective lookups.
 */
#include "models/serving.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/gpu.h"
#include "models/transformer.h"

/* Defaults of serve_params, each with where it comes from. */
const serve_param_doc serve_param_docs[] = {
    { "kv_memory_fraction", 0.90,
      "vLLM gpu_memory_utilization and TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction both default to 0.9" },
    { "runtime_reserve_bytes", 2e9,
      "CUDA context (~0.5 GB), cuBLAS/cuBLASLt workspaces, NCCL buffers and captured CUDA graphs: vLLM's "
      "start-up memory profile reports 1-3 GiB of non-torch and graph memory per H100" },
    { "block_tokens", 16, "vLLM's default KV block size (Kwon et al. 2023, PagedAttention)" },
    { "kernel_gap_s", 2e-6,
      "launch plus tail between dependent kernels replayed from a CUDA graph, ~1.5-3 us on Hopper and Ampere "
      "(estimate from Nsight Systems traces of decode steps; not fitted to the validation rows)" },
    { "kernels_per_layer", 12,
      "input norm, QKV GEMM, rotary + KV write, attention, output GEMM, all-reduce, residual + norm, "
      "gate/up GEMM, activation, down GEMM, all-reduce, residual" },
    { "eff_fp8_gemm", 0.70 / 0.75,
      "hardware_peaks.csv: cuBLASLt FP8 GEMMs reach 0.70 of the H100 FP8 peak against the 0.75 BF16 eff-gemm "
      "of models/catalog/gpus.xml" },
    { "eff_prefill_attention", 0.50,
      "FlashAttention-3 causal forward, head dim 128, BF16 on H100: 400-640 TFLOP/s from 1K to 16K tokens "
      "(Shah et al. 2024, Fig. 5), about half the tensor peak; TensorRT-LLM's Hopper FMHA and FlashInfer are "
      "of the same design" },
    { "host_s_per_seq", 45.11e-3 / 1536,
      "NVIDIA/TensorRT-LLM pull request #10273 (Dec 2025): GB200, GPT-OSS-120B, attention DP 2 with "
      "max_batch_size 1536 per rank at 3072 concurrency, ISL/OSL 1k/1k: average host_step_time 45.11 ms per "
      "iteration, i.e. 29.4 us per sequence (PyTorch backend; hidden behind the GPU by the overlap scheduler "
      "until it is the longer)" },
    { "moe_kernels_per_layer", 6,
      "TensorRT-LLM's CUTLASS fused MoE (cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu): "
      "router GEMM, top-k routing, fusedBuildExpertMapsSortFirstToken, computeStridesTmaWarpSpecialized, "
      "expandInputRows (permute), grouped FC1, activation, grouped FC2, finalizeMoeRouting (unpermute): 9 "
      "kernels where a dense FFN has 3 (gate/up GEMM, activation, down GEMM)" },
    { NULL, 0, NULL }
};

void serve_params_default(serve_params *p) {
    p->kv_memory_fraction = serve_param_docs[0].def;
    p->runtime_reserve_bytes = serve_param_docs[1].def;
    p->block_tokens = (int)serve_param_docs[2].def;
    p->kernel_gap_s = serve_param_docs[3].def;
    p->kernels_per_layer = serve_param_docs[4].def;
    p->eff_fp8_gemm = serve_param_docs[5].def;
    p->eff_prefill_attention = serve_param_docs[6].def;
    p->host_s_per_seq = serve_param_docs[7].def;
    p->moe_kernels_per_layer = serve_param_docs[8].def;
    p->host_step_s = 0;
    p->engine_gemm_eff = 1;
    p->engine_kv_eff = 1;
    p->host_sync = 0;
    p->act_quant_fp8 = 0;
    p->n_graph_sizes = 0;
    p->graph_rank_limit = 0;
    p->cutlass_moe = 0;
    p->trtllm_fmha = 0;
    p->trtllm_mla = 0;
    p->moe_comm = SERVE_MOE_COMM_AUTO;
}

int serve_moe_comm_parse(const char *z) {
    return !z ? -1 : !strcmp(z, "auto") ? SERVE_MOE_COMM_AUTO : !strcmp(z, "alltoall") ? SERVE_MOE_COMM_ALLTOALL
         : !strcmp(z, "allgather") ? SERVE_MOE_COMM_ALLGATHER : -1;
}

/* One item of a graph-size list: "n" or "first-last/step". 0, or -1. */
static int graph_item(const char *z, long *first, long *last, long *step) {
    char *end;
    *first = strtol(z, &end, 10);
    *last = *first;
    *step = 1;
    if (*end == '-') {
        *last = strtol(end + 1, &end, 10);
        if (*end != '/') return -1;
        *step = strtol(end + 1, &end, 10);
    }
    return (*end == ',' || *end == 0) && *first >= 1 && *last >= *first && *step >= 1 ? 0 : -1;
}

int serve_graph_sizes_parse(const char *z, serve_params *p, char *why, size_t whylen) {
    int n = 0;
    for (const char *c = z; c && *c;) {
        long a, b, st;
        if (graph_item(c, &a, &b, &st) < 0) {
            snprintf(why, whylen, "expected sizes like 1,2,4,8-248/8 (a size or first-last/step), not '%s'", c);
            return -1;
        }
        for (long v = a; v <= b; v += st) {
            if (n == SERVE_GRAPH_SIZES_MAX || v > 1000000 || (n > 0 && v <= p->graph_sizes[n - 1])) {
                if (n == SERVE_GRAPH_SIZES_MAX) snprintf(why, whylen, "more than %d sizes", SERVE_GRAPH_SIZES_MAX);
                else snprintf(why, whylen, "sizes must ascend and be at most 1000000");
                return -1;
            }
            p->graph_sizes[n++] = (int)v;
        }
        c = strchr(c, ',');
        if (c) c++;
    }
    p->n_graph_sizes = n;
    return 0;
}

double serve_graph_rows(const serve_model *sm, double seqs) {
    const serve_params *p = &sm->p;
    if (p->n_graph_sizes == 0 || !(seqs > 0)) return seqs;
    double dp = sm->attn_dp > 1 ? sm->attn_dp : 1;
    double rank = ceil(seqs / dp);
    double g = serve_graph_batch(p, rank);
    if (rank > p->graph_sizes[p->n_graph_sizes - 1] || (p->graph_rank_limit > 0 && g > p->graph_rank_limit))
        return seqs;
    return g * dp;
}

double serve_graph_batch(const serve_params *p, double n) {
    int lo = 0, hi = p->n_graph_sizes;
    if (hi == 0 || n > p->graph_sizes[hi - 1]) return n;
    while (lo < hi) {                        /* first captured size >= n */
        int mid = (lo + hi) / 2;
        if (p->graph_sizes[mid] < n) lo = mid + 1;
        else hi = mid;
    }
    return p->graph_sizes[lo];
}

/* Rows of logits the activation workspace holds: vLLM profiles its sampler
 * with max_num_seqs (256) dummy sequences. */
#define LOGIT_ROWS 256.0

/* Bytes per element of activations entering a linear layer: W8A8 schemes
 * quantise them to one byte, W4A4 (fp4 tensor cores) to fp4, the others
 * keep bf16. */
static double act_in_bytes(precision compute) {
    if (compute == PREC_FP4) return serve_elem_bytes(PREC_FP4, FP4_NVFP4);
    return (compute == PREC_FP8 || compute == PREC_INT8) ? 1 : 2;
}

/* The tensor precision linear layers run at for a weight precision on g:
 * fp4 on FP4 tensor cores where g has them, else dequantised to bf16 in the
 * kernel (W4A16, as Marlin and Triton's MXFP4 kernels run GPT-OSS on
 * Hopper). */
static precision compute_of(precision w, const gpu_spec *g) {
    switch (w) {
    case PREC_FP8: return PREC_FP8;
    case PREC_INT8: return PREC_INT8;
    case PREC_FP16: return PREC_FP16;
    case PREC_FP4: return g->tflops[PREC_FP4] > 0 ? PREC_FP4 : PREC_BF16;
    default: return PREC_BF16;          /* bf16, and int4 weight-only (W4A16) */
    }
}

/* NVFP4 activation quantisation (docs/fp4-serving-path.md). An NVFP4 GEMM
 * of TensorRT-LLM runs on fp4 activations: NVFP4LinearMethod._input_prepare
 * (tensorrt_llm/_torch/modules/linear.py) quantises a bf16 input with
 * torch.ops.trtllm.fp4_quantize, a kernel of its own that reads the bf16
 * row and writes E2M1 values with one E4M3 scale per 16 (scaling_vector_size
 * 16), and the fused MoE does the same to its input before the permute
 * (fc31_input_scale). The attention output alone comes quantised from the
 * attention kernel (modules/attention.py, _use_quantize_output), so the
 * output projection pays no pass. Per token of the attention group the
 * passes quantise: with fp4 linear layers, the QKV input (hidden) of every
 * layer and, in each dense FFN, the gate/up input (hidden) and the down
 * input (ffn/tp: modules/gated_mlp.py applies swiglu and hands down_proj a
 * bf16 tensor); with fp4 experts, the MoE input (hidden) of each MoE layer
 * and the shared experts' gate/up and down inputs. MXFP4 and the other
 * precisions keep today's pricing (no pass). */
static int nvfp4_act(const serve_model *s, precision c) { return c == PREC_FP4 && s->fp4 != FP4_MXFP4; }

/* FP8 activation quantisation of TensorRT-LLM's PyTorch backend
 * (docs/fp4-serving-path.md; NVIDIA/TensorRT-LLM at its v1.0 perf-overview,
 * commit 00f37686, as near as the stored sources go). An FP8 (per-tensor,
 * ModelOpt) GEMM runs on fp8 inputs: FP8QDQLinearMethod.apply
 * (tensorrt_llm/_torch/modules/linear.py) turns a bf16 input into fp8 with
 * torch.ops.tensorrt_llm.static_quantize_e4m3_per_tensor, a kernel of its
 * own reading 2 bytes and writing 1 an element (one scalar scale), and the
 * CUTLASS fused MoE does the same to its input before the permute
 * (static_quantize_e4m3_per_tensor with fc31_input_dequant). Fused, so not
 * priced: the attention kernel writes the o_proj input in fp8
 * (Attention._use_quantize_output, modules/attention.py), and SwiGLU writes
 * the down_proj input in fp8 (GatedMLP._apply_activation, quant_scale =
 * down_proj.input_scale; NVIDIA/TensorRT-LLM pull request #6540). At tp > 1
 * the decoder layer folds RMSNorm and the quantisation into the all-reduce
 * (AllReduceFusionOp.RESIDUAL_RMS_NORM_QUANT_FP8: the gate/up input of a
 * dense FFN after the attention's all-reduce, the next layer's QKV input
 * after the FFN's; modeling_llama.py LlamaDecoderLayer, Llama4DecoderLayer)
 * while the message fits the fused kernel's workspace; the first layer's QKV
 * input (after a plain RMSNorm) and the MoE's and shared experts' inputs
 * (the pre-MoE all-reduce fuses no quantisation) always pay. Only with the
 * engine's act_quant_fp8, on a GPU with FP8 tensor cores. */
static int fp8_act(const serve_model *s, precision c) {
    return s->p.act_quant_fp8 && c == PREC_FP8 && s->g.tflops[PREC_FP8] > 0;
}

/* The fused all-reduce's workspace: 16 MB at two ranks or fewer, 8 MB above
 * (getMaxRequiredWorkspaceSize, cpp/tensorrt_llm/common/customAllReduceUtils.h);
 * a larger message falls back to NCCL and runs the norm and the quantisation
 * after it (AllreduceOp ifFallbackToNCCL, cpp/tensorrt_llm/thop/allreduceOp.cpp). */
static double ar_fusion_workspace_bytes(int tp) { return tp <= 2 ? 16e6 : 8e6; }

static void init_fp8_act_quant(serve_model *s, int dense_ffn, double *e, double *k) {
    double h = s->hidden;
    if (fp8_act(s, s->compute)) {
        double fusable = (s->layers - 1) + dense_ffn;   /* QKV after layer 1, gate/up */
        *e += h;                                       /* layer 1's QKV input */
        *k += 1;
        if (s->tp > 1) {
            s->act_quant_ar_elems = h * fusable;
            s->act_quant_ar_kernels = fusable;
            s->act_quant_ar_tokens = floor(ar_fusion_workspace_bytes(s->tp) / (h * 2));
        } else {
            *e += h * fusable;
            *k += fusable;
        }
    }
    if (s->moe_layers > 0 && fp8_act(s, s->compute_expert)) {
        double passes = s->moe_layers * (s->shared_experts > 0 ? 2.0 : 1.0);   /* MoE, shared gate/up */
        *e += h * passes;
        *k += passes;
    }
}

/* A routed expert's FFN width (the dense FFN's where the model gives none). */
static double expert_ffn(const serve_model *s, const tf_dims *d) {
    return s->m.expert_ffn_hidden > 0 ? s->m.expert_ffn_hidden : d->f;
}

/* Bytes one token row's expert activation moves: reads gate and up (or the
 * one input), writes the product, in bf16. */
static double expert_act_bytes(const serve_model *s, const tf_dims *d) {
    return (d->gated ? 3 : 2) * expert_ffn(s, d) * 2;
}

static void init_act_quant(serve_model *s, const tf_dims *d) {
    double h = s->hidden, fe = expert_ffn(s, d);
    int dense_ffn = s->moe_layers > 0 ? s->dense_layers : s->layers;
    double e = 0, k = 0;
    if (nvfp4_act(s, s->compute)) {
        e += s->layers * h + dense_ffn * (h + d->f / s->tp);
        k += s->layers + 2.0 * dense_ffn;
    }
    if (s->moe_layers > 0 && nvfp4_act(s, s->compute_expert)) {
        int sh = s->shared_experts;
        e += s->moe_layers * (h + (sh > 0 ? h + fe * sh / s->tp : 0));
        k += s->moe_layers * (sh > 0 ? 3.0 : 1.0);
    }
    init_fp8_act_quant(s, dense_ffn, &e, &k);
    s->act_quant_elems = e;
    s->act_quant_kernels = k;
}

/* Bytes one quantisation pass moves per element: the bf16 read and the
 * fp4 write with its scales, or the fp8 write (one scalar scale). */
static double act_quant_pass_bytes(const serve_model *s) { return 2 + act_in_bytes(s->compute_expert); }

/* The MoE input arrives quantised (a pass of its own above). */
static int moe_input_quantised(const serve_model *s) {
    return nvfp4_act(s, s->compute_expert) || fp8_act(s, s->compute_expert);
}

double serve_elem_bytes(precision p, fp4_recipe fmt) {
    /* NVFP4 4.5 bits, MXFP4 4.25: sources at fp4_recipe (train_plan.h). */
    return p == PREC_FP4 ? fp4_element_bytes(fmt) : precision_bytes(p);
}

int serve_layout_gpus(const serve_layout *l) { return l->ep > l->tp ? l->ep : l->tp; }

static int valid_prec(precision p) {
    return p == PREC_BF16 || p == PREC_FP16 || p == PREC_FP8 || p == PREC_INT8 || p == PREC_INT4 || p == PREC_FP4;
}

/* What serve_model_init_layout refuses: NULL when the input is good. */
static const char *check_input(const llm_spec *m, const gpu_spec *g, const fabric *f, const serve_layout *l,
                               precision w, precision kv, int token_budget, char *why, size_t len) {
#define BAD(...) do { snprintf(why, len, __VA_ARGS__); return why; } while (0)
    int tp = l->tp, ep = l->ep, gpus = serve_layout_gpus(l);
    if (!m || !g) BAD("no model or GPU");
    if (tp < 1) BAD("tp must be at least 1");
    if (ep < 1) BAD("ep must be at least 1");
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->vocab < 1) BAD("model %s has no shape", m->name);
    if (m->heads % tp != 0) BAD("tp %d must divide %s's %d attention heads", tp, m->name, m->heads);
    if (ep > 1 && !tf_is_moe(m)) BAD("ep %d needs a mixture-of-experts model; %s is dense", ep, m->name);
    if (ep > 1 && m->experts % ep != 0) BAD("ep %d must divide %s's %d experts", ep, m->name, m->experts);
    if (gpus % tp != 0 || gpus % ep != 0) BAD("one of tp %d and ep %d must divide the other", tp, ep);
    if (!valid_prec(w)) BAD("weights must be bf16, fp16, fp8, int8, int4 or fp4, not %s", precision_name(w));
    if (!valid_prec(kv))
        BAD("the KV cache must be bf16, fp16, fp8, int8, int4 or fp4, not %s", precision_name(kv));
    if (gpus > 1 && (!f || !f->node)) BAD("tp %d, ep %d needs the node's fabric", tp, ep);
    if (!(g->hbm_bytes > 0 && g->hbm_bw_bytes_per_s > 0)) BAD("GPU %s has no HBM figures", g->name);
    if (token_budget < 1) BAD("the token budget must be at least 1");
#undef BAD
    return NULL;
}

/* One layer's linear weights on one GPU of a MoE or MLA model (mean over
 * the layers): attention and dense FFNs over tp; per MoE layer the shared
 * experts over tp, experts/ep routed experts each sliced etp ways, and the
 * router (bf16, replicated: GPT-OSS and DeepSeek-V3's FP8 checkpoint keep
 * it unquantised). */
static double moe_layer_bytes(const serve_model *s, const tf_param_counts *pc) {
    double tp = s->tp, we = s->w_expert_bytes;
    double attn = pc->attn * s->w_bytes / tp;
    double dense = pc->dense_ffn * s->w_bytes / tp;
    double moe = s->shared_experts * s->expert_params * we / tp +
                 (double)s->experts / s->ep * s->expert_params * we / s->etp + pc->router * 2;
    return attn + (s->dense_layers * dense + s->moe_layers * moe) / s->layers;
}

/* Architecture and layout figures of s (its m, g, tp and precisions set). */
static void init_shape(serve_model *s, const serve_layout *lay, const tf_dims *d) {
    const llm_spec *m = &s->m;
    s->q_dim = d->q_dim;
    s->kv_dim = d->kv_dim;
    s->hidden = d->h;
    s->vocab = d->vocab;
    s->layers = d->layers;
    s->experts = m->experts > 1 ? m->experts : 1;
    s->experts_per_token = s->experts > 1 ? (m->experts_per_token > 0 ? m->experts_per_token : 2) : 1;
    s->kv_heads_per_gpu = ceil(d->kv_heads / s->tp);      /* tp > kv_heads replicates heads */
    s->fp4 = lay->fp4;
    s->ep = lay->ep;
    s->gpus = serve_layout_gpus(lay);
    s->attn_dp = s->gpus / s->tp;
    s->etp = s->gpus / s->ep;
    /* auto: TensorRT-LLM 1.2's choice under attention DP (CutlassFusedMoE.
     * select_alltoall_method_type after NVIDIA/TensorRT-LLM #8950): its NVLink
     * all-to-all wherever MnnvlMemory.supports_mnnvl() holds, which asks only
     * that every NVLink be up (since #6645 also on x86 nodes, over POSIX file
     * descriptors), so on any replica inside one NVLink domain; its memory
     * cannot span the domain (#18785), so a replica across domains falls back
     * to NCCL all-gather and reduce-scatter (DeepEP being opt-in) */
    int mode = s->p.moe_comm;
    if (mode == SERVE_MOE_COMM_AUTO)
        mode = s->has_fabric && s->gpus > fabric_domain_gpus(&s->f) ? SERVE_MOE_COMM_ALLGATHER
                                                                    : SERVE_MOE_COMM_ALLTOALL;
    s->moe_allgather = s->has_fabric && s->ep > 1 && s->attn_dp > 1 && mode == SERVE_MOE_COMM_ALLGATHER;
    s->moe_layers = tf_moe_layers(m);
    s->dense_layers = tf_dense_layers(m);
    s->shared_experts = tf_is_moe(m) && m->shared_experts > 0 ? m->shared_experts : 0;
    tf_param_counts pc;
    tf_param_counts_of(m, &pc);
    s->expert_params = tf_is_moe(m) ? pc.expert_ffn : 0;
    s->total_params = pc.total;
    s->active_params = pc.active;
    s->attn_params = pc.attn;
    /* fp4 on a MoE model: the experts only, the rest bf16 (GPT-OSS's MXFP4
     * checkpoint; NVIDIA's DeepSeek-R1-FP4 quantises the MoE layers' linear
     * weights only) */
    int experts_only = s->weights == PREC_FP4 && tf_is_moe(m);
    s->w_expert_bytes = serve_elem_bytes(s->weights, s->fp4);
    s->w_bytes = experts_only ? 2 : s->w_expert_bytes;
    s->compute_expert = s->compute;
    /* MXFP4 experts on FP4 tensor cores run W4A8: the engines quantise the
     * MoE input to MXFP8 (NVIDIA/TensorRT-LLM examples/models/core/gpt_oss/
     * README.md, "MoE Support Matrix": Blackwell, mxfp8 activation, mxfp4
     * weight, UTCQMMA), and a mixed fp4 x fp8 MMA runs at the FP8 rate
     * (tcgen05.mma kind::mxf8f6f4: 2x Hopper FP8; only kind::mxf4 and
     * mxf4nvf4, both operands fp4, run at 4x: NVIDIA/cutlass
     * media/docs/cpp/blackwell_functionality.md). NVFP4 checkpoints quantise
     * the input to fp4 and keep the FP4 rate. */
    if (experts_only && s->fp4 == FP4_MXFP4 && s->compute == PREC_FP4) s->compute_expert = PREC_FP8;
    if (experts_only) s->compute = PREC_BF16;
}

/* Weights, KV cache per token and activation workspace per GPU. */
static void init_memory(serve_model *s, const tf_dims *d, precision kv, int token_budget) {
    const llm_spec *m = &s->m;
    int plain = !tf_is_moe(m) && m->kv_lora_rank <= 0;
    double wb = s->w_bytes;
    tf_param_counts pc;
    tf_param_counts_of(m, &pc);
    double attn_params = d->h * (d->q_dim + 2 * d->kv_dim) + d->q_dim * d->h;
    double ffn_params = (d->gated ? 3 : 2) * d->h * d->f;
    s->layer_weight_bytes = plain ? (attn_params + ffn_params) * wb / s->tp : moe_layer_bytes(s, &pc);
    double emb = pc.embedding * 2 / s->tp;      /* vocab-parallel, kept in bf16 */
    double head = pc.output * 2 / s->tp;
    double norms = plain ? (2.0 * d->h * d->layers + d->h) * 2
                         : (pc.total - d->layers * pc.layer_matmul - pc.embedding - pc.output) * 2;
    s->weight_bytes = s->layer_weight_bytes * d->layers + emb + head + norms;
    double kvb = serve_elem_bytes(kv, s->fp4);
    /* MLA caches its latent and rotary key whole on every tp rank; under
     * attention data parallelism a token's cache lives in one group */
    s->kv_bytes_per_token = m->kv_lora_rank > 0 ? d->layers * tf_kv_elems_per_layer(m) * kvb / s->attn_dp
                                                : 2.0 * d->layers * s->kv_heads_per_gpu * d->head_dim * kvb /
                                                      s->attn_dp;
    double fe = expert_ffn(s, d);
    double ffn_act = tf_is_moe(m) ? (d->gated ? 2 : 1) * fe * (s->experts_per_token + s->shared_experts)
                                  : (d->gated ? 2 : 1) * d->f;
    s->activation_bytes = token_budget / s->attn_dp * ((d->q_dim + 2 * d->kv_dim) / s->tp + ffn_act / s->tp +
                                                       2 * d->h) * 2 +
                          LOGIT_ROWS * d->vocab / s->tp * 4;
}

/* A dense GEMM's weight stream and fixed call time when bound by its
 * weight read (docs/small-batch-gemm.md): the GPU's measured fraction of
 * the HBM peak (0: the copy rate) and call time less the launch gap every
 * kernel already pays (serve_params kernel_gap_s: the measurements replayed
 * a CUDA graph, so their fixed time holds that gap). */
static void small_m_gemm(const serve_model *s, const gpu_spec *g, double eff, double call_s, double *bw_bytes_per_s,
                         double *out_call_s) {
    *bw_bytes_per_s = eff > 0 ? g->hbm_bw_bytes_per_s * eff : s->hbm_bytes_per_s;
    *out_call_s = call_s > s->p.kernel_gap_s ? call_s - s->p.kernel_gap_s : 0;
}

/* FP8 (gpus.xml eff-hbm-gemm-fp8, gemm-call-latency-fp8) and BF16/FP16
 * (eff-hbm-gemm-bf16, gemm-call-latency-bf16) dense GEMMs; other GEMMs
 * keep the copy rate. */
static void init_small_m_gemm(serve_model *s, const gpu_spec *g) {
    /* An engine with its own measured step profile (engines.xml
     * gemm-efficiency, kv-read-efficiency: vllm-v0.2.3 from DistServe's
     * profile) had that profile fitted against the copy-rate weight stream,
     * so its fit already holds what the GPU's small-M tables measure: it
     * keeps the copy rate, or the two would count the same time twice. */
    if (s->p.engine_gemm_eff != 1 || s->p.engine_kv_eff != 1) {
        small_m_gemm(s, g, 0, 0, &s->fp8_gemm_bytes_per_s, &s->fp8_gemm_call_s);
        small_m_gemm(s, g, 0, 0, &s->bf16_gemm_bytes_per_s, &s->bf16_gemm_call_s);
        return;
    }
    small_m_gemm(s, g, g->eff_hbm_gemm_fp8, g->gemm_call_fp8_s, &s->fp8_gemm_bytes_per_s, &s->fp8_gemm_call_s);
    small_m_gemm(s, g, g->eff_hbm_gemm_bf16, g->gemm_call_bf16_s, &s->bf16_gemm_bytes_per_s, &s->bf16_gemm_call_s);
}

/* The CUTLASS fused-MoE law (docs/moe-serving.md "The CUTLASS fused MoE"):
 * NVIDIA's measured layer times (ai-dynamo/aiconfigurator moe_perf tables)
 * fitted per GPU and expert precision as a fixed time, a time per local
 * expert touched and a rate for the routing kernels' traffic, beside the
 * grouped GEMMs' own price (tiled_linear_s). On when the engine runs that
 * kernel and the GPU has the figures for the experts' precision. */
static void init_cutlass_moe(serve_model *s, const gpu_spec *g) {
    /* resolve_moe_backend sends FP8 block-scale checkpoints to TRTLLM on
     * Blackwell (SM100): not CUTLASS. MXFP4 ones (GPT-OSS) run CUTLASS on
     * Blackwell as the perf overview sets it, through the NVFP4 path's
     * block-scaled weights (MXFP4WeightCutlassFusedMoEMethod): the NVFP4
     * figures; TRITON on Hopper, no figures (docs/moe-serving.md). */
    s->cmoe_route_bytes_per_s = s->hbm_bytes_per_s;
    int blackwell = !strcmp(g->arch, "blackwell");
    int mxfp4 = s->weights == PREC_FP4 && s->fp4 == FP4_MXFP4;
    if (!s->p.cutlass_moe || s->moe_layers == 0 || (mxfp4 && !blackwell) ||
        (s->weights == PREC_FP8 && s->m.fp8_block_scales && blackwell))
        return;
    double layer = 0, expert = 0, route = 0;
    switch (mxfp4 ? PREC_FP4 : s->compute_expert) {
    case PREC_FP4: layer = g->cutlass_moe_fp4_s, expert = g->cutlass_moe_expert_fp4_s,
                   route = g->eff_cutlass_moe_route_fp4; break;
    case PREC_FP8: layer = g->cutlass_moe_fp8_s, expert = g->cutlass_moe_expert_fp8_s,
                   route = g->eff_cutlass_moe_route_fp8; break;
    case PREC_BF16:
    case PREC_FP16: layer = g->cutlass_moe_bf16_s, expert = g->cutlass_moe_expert_bf16_s,
                    route = g->eff_cutlass_moe_route_bf16; break;
    default: break;
    }
    if (!(layer > 0)) return;
    s->cmoe_layer_s = layer;
    s->cmoe_expert_s = expert;
    if (route > 0) s->cmoe_route_bytes_per_s = g->hbm_bw_bytes_per_s * route;
}

int serve_model_init(serve_model *sm, const llm_spec *m, const gpu_spec *g, const fabric *f, int tp,
                     precision w, precision kv, int token_budget, const serve_params *p, char *why,
                     size_t whylen) {
    serve_layout lay = { tp, 1, FP4_NVFP4 };
    return serve_model_init_layout(sm, m, g, f, &lay, w, kv, token_budget, p, why, whylen);
}

int serve_model_init_layout(serve_model *sm, const llm_spec *m, const gpu_spec *g, const fabric *f,
                            const serve_layout *lay, precision w, precision kv, int token_budget,
                            const serve_params *p, char *why, size_t whylen) {
    char buf[256];
    const char *bad = !sm || !lay ? "no model or layout"
                                  : check_input(m, g, f, lay, w, kv, token_budget, buf, sizeof buf);
    if (bad) {
        if (why) snprintf(why, whylen, "%s", bad);
        return -1;
    }
    serve_model s;
    memset(&s, 0, sizeof s);
    s.m = *m;
    s.g = *g;
    if (f) {
        s.f = *f;
        s.has_fabric = 1;
    }
    s.tp = lay->tp;
    s.weights = w;
    s.compute = compute_of(w, g);
    s.kv = kv;
    if (p) s.p = *p;
    else serve_params_default(&s.p);
    if (s.p.block_tokens < 1) s.p.block_tokens = 16;
    s.token_budget = token_budget;

    tf_dims d;
    tf_dims_of(m, &d);
    init_shape(&s, lay, &d);
    init_act_quant(&s, &d);
    init_memory(&s, &d, kv, token_budget);
    double left = g->hbm_bytes - s.weight_bytes - s.activation_bytes - s.p.runtime_reserve_bytes;
    s.kv_capacity_bytes = left * s.p.kv_memory_fraction;
    double block_bytes = s.kv_bytes_per_token * s.p.block_tokens;
    s.kv_blocks = s.kv_capacity_bytes > 0 ? (long long)floor(s.kv_capacity_bytes / block_bytes) : 0;
    s.kv_capacity_tokens = (double)s.kv_blocks * s.p.block_tokens;
    s.hbm_bytes_per_s = gpu_hbm_bytes_per_s(g);
    init_small_m_gemm(&s, g);
    init_cutlass_moe(&s, g);
    serve_attn_init(&s, g);
    *sm = s;
    return 0;
}

int serve_fits(const serve_model *sm, double tokens) {
    return sm->kv_blocks > 0 && sm->kv_capacity_tokens >= tokens;
}

double serve_model_bytes(const serve_model *sm) { return sm->weight_bytes * sm->gpus; }

precision serve_default_kv(precision w) {
    /* ModelOpt's PTQ (examples/llm_ptq/hf_ptq.py, --kv_cache_qformat,
     * default fp8) quantises the KV cache of its FP8 and NVFP4 checkpoints
     * to FP8 */
    if (w == PREC_FP8 || w == PREC_FP4) return PREC_FP8;
    if (w == PREC_FP16) return PREC_FP16;
    return PREC_BF16;
}

double serve_pcie_s(const node_spec *node, double bytes) {
    double bw = node && node->pcie_bw_bytes_per_s > 0 ? node->pcie_bw_bytes_per_s : 25e9;
    return bytes > 0 ? bytes / bw : 0;
}

/* Tensor rate for a GEMM shape at the model's compute precision. */
static double gemm_rate(const serve_model *sm, precision c, double m, double n, double k) {
    double r = gpu_gemm_flops_per_s(&sm->g, c, m, n, k) * sm->p.engine_gemm_eff;
    if (c == PREC_FP8 && sm->g.tflops[PREC_FP8] > 0) r *= sm->p.eff_fp8_gemm;
    return r;
}

/* Rows of the smallest M tile of TensorRT-LLM's CUTLASS grouped GEMMs on
 * Hopper and Blackwell (cutlass_extensions/gemm_configs.h: the SM90 and
 * SM100 grouped-GEMM CTA shapes start at 64×N): each expert's rows are
 * run in whole tiles, so an expert with 20 rows costs 64 rows of tensor
 * work (its weights are read once either way). */
#define SERVE_GROUPED_M_TILE 64.0

/* `count` GEMMs of m×k by k×n on one GPU, weights read once each at
 * bw_bytes_per_s, each call call_s more when bound by that read; the
 * tensor work counts mt ≥ m rows (tile padding). */
static double gemm_group_s(const serve_model *sm, precision c, double wbytes, double m, double mt, double n,
                           double k, double count, double bw_bytes_per_s, double call_s) {
    if (!(m > 0)) return 0;
    double flops = 2 * mt * n * k * count;
    double rate = gemm_rate(sm, c, m, n, k);
    double bytes = (n * k * wbytes + m * k * act_in_bytes(c) + m * n * 2) * count;
    double tc = rate > 0 ? flops / rate : 0;
    double tm = bytes / bw_bytes_per_s + call_s * count;
    return tc > tm ? tc : tm;
}

/* One grouped linear layer (the routed experts: CUTLASS grouped GEMMs,
 * priced at the copy rate; the small-M figures of the dense FP8 and BF16
 * GEMMs were not measured for them, docs/small-batch-gemm.md). */
static double tiled_linear_s(const serve_model *sm, precision c, double wbytes, double m, double mt, double n,
                             double k, double count) {
    return gemm_group_s(sm, c, wbytes, m, mt, n, k, count, sm->hbm_bytes_per_s, 0);
}

/* One dense linear layer: an FP8 one (fp8 weights and tensor work:
 * cuBLASLt's FP8 GEMM) or a BF16/FP16 one (16-bit weights and tensor work:
 * cuBLAS through torch's F.linear in TensorRT-LLM, vLLM and SGLang alike)
 * streams its weights at the GPU's measured dense-GEMM rate for that
 * precision and pays its fixed call time (docs/small-batch-gemm.md);
 * others (weight-only quantised, fp4) read at the copy rate. */
static double linear_s(const serve_model *sm, precision c, double wbytes, double m, double n, double k,
                       double count) {
    if (c == PREC_FP8 && wbytes == 1)
        return gemm_group_s(sm, c, wbytes, m, m, n, k, count, sm->fp8_gemm_bytes_per_s, sm->fp8_gemm_call_s);
    if ((c == PREC_BF16 || c == PREC_FP16) && wbytes == 2)
        return gemm_group_s(sm, c, wbytes, m, m, n, k, count, sm->bf16_gemm_bytes_per_s, sm->bf16_gemm_call_s);
    return gemm_group_s(sm, c, wbytes, m, m, n, k, count, sm->hbm_bytes_per_s, 0);
}

/* A collective over `ranks` GPUs of the replica, as many of them inside
 * one NVLink domain as it holds (models/collective.h fabric_domain_gpus);
 * where the collective model does not yet price a domain wider than the
 * node, the node's GPUs. */
static double group_coll_s(const serve_model *sm, coll_op op, int ranks, double bytes) {
    if (ranks <= 1 || !(bytes > 0) || !sm->has_fabric) return 0;
    int dom = fabric_domain_gpus(&sm->f), node = sm->f.node->gpus;
    coll_group grp = { ranks, ranks < dom ? ranks : dom, 1 };
    coll_result r;
    if (coll_time(&sm->f, op, bytes, &grp, COLL_AUTO, &r) == 0) return r.time_s;
    grp.ranks_per_node = ranks < node ? ranks : node;
    return coll_time(&sm->f, op, bytes, &grp, COLL_AUTO, &r) == 0 ? r.time_s : 0;
}

static double collective_s(const serve_model *sm, coll_op op, double bytes) {
    return group_coll_s(sm, op, sm->tp, bytes);
}

double serve_experts_touched(double E, double k, double B) {
    double used = E * (1 - pow(1 - k / E, B));
    return used < 1 ? 1 : used;
}

/* Attention projections of one layer for ta tokens on one GPU (MLA: its
 * down and up projections priced as one GEMM of the same weights). */
static double attn_linear_s(const serve_model *s, double ta, const tf_gemm *gm) {
    double wb = s->w_bytes;
    if (s->m.kv_lora_rank > 0)
        return linear_s(s, s->compute, wb, ta, s->attn_params / s->hidden / s->tp, s->hidden, 1);
    return linear_s(s, s->compute, wb, gm[0].m, gm[0].n, gm[0].k, 1) +
           linear_s(s, s->compute, wb, gm[1].m, gm[1].n, gm[1].k, 1);
}

/* The routed experts of one MoE layer on one GPU: the experts the
 * replica's `tokens` touch, used/ep of them on this GPU, each read once and
 * run on tokens·k/used rows; under the CUTLASS fused-MoE law its fixed and
 * per-expert time too (its routing traffic is moe_route_bytes'). */
static double routed_experts_s(const serve_model *s, const tf_dims *d, double tokens) {
    double fe = expert_ffn(s, d), up = (d->gated ? 2 : 1) * fe;
    double k = s->experts_per_token, used = serve_experts_touched(s->experts, k, tokens);
    double per = tokens * k / used, count = used / s->ep;
    double tiled = ceil(per / SERVE_GROUPED_M_TILE) * SERVE_GROUPED_M_TILE;
    double t = s->cmoe_layer_s > 0 ? s->cmoe_layer_s + s->cmoe_expert_s * count : 0;
    return t + tiled_linear_s(s, s->compute_expert, s->w_expert_bytes, per, tiled, up / s->etp, s->hidden, count) +
           tiled_linear_s(s, s->compute_expert, s->w_expert_bytes, per, tiled, s->hidden, fe / s->etp, count);
}

/* One MoE layer's FFN on one GPU: the router and the shared experts on the
 * ta tokens of its attention group, and the routed experts. */
static double moe_ffn_s(const serve_model *s, double tokens, double ta) {
    tf_dims d;
    tf_dims_of(&s->m, &d);
    double fe = expert_ffn(s, &d), up = (d.gated ? 2 : 1) * fe;
    double we = s->w_expert_bytes, h = s->hidden, sh = s->shared_experts;
    precision c = s->compute_expert;
    double t = linear_s(s, PREC_BF16, 2, ta, s->experts, h, 1);
    if (sh > 0) t += linear_s(s, c, we, ta, up * sh / s->tp, h, 1) + linear_s(s, c, we, ta, h, fe * sh / s->tp, 1);
    return t + routed_experts_s(s, &d, tokens);
}

/* Bytes per element of the rows the MoE's communication carries to the
 * experts: the experts' activation precision (the input is quantised before
 * it is sent: FP8 per tensor, NVFP4 with its scales), but bf16 for an FP8
 * block-scaled checkpoint, whose MoE quantises after the gather
 * (CutlassFusedMoE.forward_chunk, has_deepseek_fp8_block_scales). */
static double moe_send_bytes(const serve_model *s) {
    if (s->weights == PREC_FP8 && s->m.fp8_block_scales) return 2;
    return act_in_bytes(s->compute_expert);
}

/* Expert-parallel dispatch and combine of one MoE layer. All-to-all: every
 * GPU sends its share of the tokens to their k experts' GPUs (hidden-size
 * rows, at the experts' activation precision: FP8 dispatch as DeepEP's
 * kernels) and gets the expert outputs back in bf16. All-gather
 * (moe_allgather): every GPU gathers all the replica's tokens with their k
 * expert ids (int32) and weights (fp32), and the bf16 outputs, partial sums
 * over each GPU's experts, are reduce-scattered back to their attention
 * groups. Exposed: decode leaves little compute to hide it behind
 * (docs/moe-serving.md). */
static double a2a_s(const serve_model *s, double tokens) {
    if (s->ep <= 1) return 0;
    if (s->moe_allgather) {
        double row = s->hidden * moe_send_bytes(s) + s->experts_per_token * 8.0;
        return group_coll_s(s, COLL_ALLGATHER, s->gpus, tokens * row) +
               group_coll_s(s, COLL_REDUCESCATTER, s->gpus, tokens * s->hidden * 2);
    }
    double rows = tokens * s->experts_per_token * s->hidden / s->gpus;
    return group_coll_s(s, COLL_ALLTOALL, s->ep, rows * act_in_bytes(s->compute_expert)) +
           group_coll_s(s, COLL_ALLTOALL, s->ep, rows * 2);
}

/* The linear layers of one iteration on one GPU. */
static double linear_all_s(const serve_model *s, double tokens, double ta) {
    tf_gemm gm[4];
    tf_layer_gemms(&s->m, ta, s->tp, gm);
    double wb = s->w_bytes;
    double dense = linear_s(s, s->compute, wb, gm[2].m, gm[2].n, gm[2].k, 1) +
                   linear_s(s, s->compute, wb, gm[3].m, gm[3].n, gm[3].k, 1);
    double attn = attn_linear_s(s, ta, gm);
    if (s->moe_layers == 0) return (attn + dense) * s->layers;
    return attn * s->layers + dense * s->dense_layers + moe_ffn_s(s, tokens, ta) * s->moe_layers;
}

/* Bytes one MoE layer's routing kernels move on one GPU for `tokens`
 * tokens of the replica, ta of them in this GPU's attention group:
 * TensorRT-LLM's CUTLASS fused MoE (moe_kernels.cu) permutes each token
 * into its k expert rows (expandInputRows: reads the token's bf16 row,
 * writes k rows at the experts' activation precision), runs the gated
 * activation on every routed row between the two grouped GEMMs
 * (doActivation: reads gate and up, writes their product, as a dense
 * FFN's activation does per row) and sums each token's k expert outputs
 * back (finalizeMoeRouting: reads k bf16 rows, writes one; with the
 * FINALIZE epilogue fusion the same rows are atomically added instead).
 * A GPU runs tokens·k/ep of those rows (each etp-sliced). The GEMMs' own
 * reads and writes are tiled_linear_s's. */
static double moe_route_bytes(const serve_model *s, const tf_dims *d, double tokens, double ta) {
    double act = expert_act_bytes(s, d), h = s->hidden, rows = tokens * s->experts_per_token / s->ep;
    double per_row = h * act_in_bytes(s->compute_expert) + h * 2 + act / s->etp;
    /* the permute reads the token's row as the MoE got it: fp4 or fp8 after
     * an input quantisation pass (init_act_quant), else bf16 */
    double row_in = moe_input_quantised(s) ? act_in_bytes(s->compute_expert) : 2;
    /* gathered (moe_allgather): the permute reads every token of the
     * replica and the finalize writes every token's bf16 row, into an
     * output zeroed first (the MoeOutputMemset stream) */
    if (s->moe_allgather) return tokens * (h * row_in + 2 * h * 2) + rows * per_row;
    return ta * (h * row_in + h * 2) + rows * per_row;
}

/* Bytes of the shared experts' activation on the ta tokens of one GPU's
 * attention group, one MoE layer: a kernel of the shared experts' own
 * FFN, outside the fused MoE. */
static double moe_shared_act_bytes(const serve_model *s, const tf_dims *d, double ta) {
    return ta * s->shared_experts * expert_act_bytes(s, d) / s->tp;
}

double serve_moe_layer_s(const serve_model *sm, double tokens) {
    if (sm->moe_layers == 0 || !(tokens > 0)) return 0;
    tf_dims d;
    tf_dims_of(&sm->m, &d);
    return routed_experts_s(sm, &d, tokens) +
           moe_route_bytes(sm, &d, tokens, tokens / sm->attn_dp) / sm->cmoe_route_bytes_per_s;
}

/* Elementwise bytes per token of the attention group outside the MoE
 * routing: every layer's norms, residual adds and rotary embedding; the
 * dense layers' activation. A dense model keeps its one expression. */
static double token_elementwise_bytes(const serve_model *s, const tf_dims *d) {
    tf_elementwise e;
    tf_layer_elementwise(&s->m, 2, &e);
    double tail = s->kv_bytes_per_token + 2 * s->hidden;     /* KV write, embedding row */
    if (s->moe_layers == 0) return s->layers * (e.hidden_bytes + e.split_bytes / s->tp) + tail;
    double act = (d->gated ? 3 : 2) * d->f * 2;
    return s->layers * (e.hidden_bytes + (e.split_bytes - act) / s->tp) + s->dense_layers * act / s->tp + tail;
}

void serve_tokens_part(const serve_model *sm, double tokens, serve_tok_part *p) {
    const serve_model *s = sm;
    double ta = tokens / s->attn_dp;                 /* per attention group */
    p->linear_s = linear_all_s(s, tokens, ta);
    tf_dims d;
    tf_dims_of(&s->m, &d);
    /* past the fused all-reduce's workspace its absorbed passes run alone */
    int ar_fallback = ta > s->act_quant_ar_tokens;
    double q_elems = s->act_quant_elems + (ar_fallback ? s->act_quant_ar_elems : 0);
    p->quant_kernels = s->act_quant_kernels + (ar_fallback ? s->act_quant_ar_kernels : 0);
    double bytes = ta * (token_elementwise_bytes(s, &d) + q_elems * act_quant_pass_bytes(s));
    double route = 0;
    if (s->moe_layers > 0) {
        route = s->moe_layers * moe_route_bytes(s, &d, tokens, ta);
        bytes += s->moe_layers * moe_shared_act_bytes(s, &d, ta);
    }
    /* the routing kernels move their bytes at the CUTLASS fused-MoE law's
     * measured rate, else the copy rate */
    p->elementwise_s = bytes / s->hbm_bytes_per_s + route / s->cmoe_route_bytes_per_s;
    p->allreduce_s = s->tp > 1 ? 2 * s->layers * collective_s(s, COLL_ALLREDUCE, ta * s->hidden * 2) : 0;
    p->a2a_s = s->moe_layers * a2a_s(s, tokens);
}

void serve_rows_part(const serve_model *sm, double rows, serve_row_part *p) {
    const serve_model *s = sm;
    double ra = rows / s->attn_dp;                   /* per attention group */
    p->lm_head_s = linear_s(s, PREC_BF16, 2, ra, s->vocab / s->tp, s->hidden, 1);
    p->allgather_s = s->tp > 1 && ra > 0 ? collective_s(s, COLL_ALLGATHER, ra * s->vocab * 2) : 0;
}

double serve_tokens_sum(const serve_model *sm, const serve_tok_part *tp, const serve_row_part *rp,
                        serve_breakdown *bd) {
    const serve_model *s = sm;
    /* an absent all-gather adds +0, which leaves the all-reduce's time as it is */
    double comm = tp->allreduce_s + rp->allgather_s + tp->a2a_s;
    /* under the CUTLASS fused-MoE law its fixed time holds the gaps of the
     * layer's kernels but the router GEMM's: the dense FFN's three and the
     * routed FFN's further moe_kernels_per_layer, less that one */
    double moe_kernels = s->cmoe_layer_s > 0 ? 1 - 3 : s->p.moe_kernels_per_layer;
    double launch = s->p.kernel_gap_s * (s->p.kernels_per_layer * s->layers + moe_kernels * s->moe_layers + 4 +
                                         tp->quant_kernels);
    if (bd) {
        bd->linear_s = tp->linear_s;
        bd->lm_head_s = rp->lm_head_s;
        bd->elementwise_s = tp->elementwise_s;
        bd->comm_s = comm;
        bd->a2a_s = tp->a2a_s;
        bd->launch_s = launch;
    }
    return tp->linear_s + rp->lm_head_s + tp->elementwise_s + comm + launch;
}

double serve_tokens_s(const serve_model *sm, double tokens, double rows, serve_breakdown *bd) {
    serve_tok_part tp = { 0 };
    serve_row_part rp = { 0 };
    if (!(tokens > 0)) {
        if (bd) bd->linear_s = bd->lm_head_s = bd->elementwise_s = bd->comm_s = bd->a2a_s = bd->launch_s = 0;
        return 0;
    }
    serve_tokens_part(sm, tokens, &tp);
    serve_rows_part(sm, rows, &rp);
    return serve_tokens_sum(sm, &tp, &rp, bd);
}

double serve_iter_s(const serve_model *sm, const serve_batch *b, serve_breakdown *bd) {
    double tokens = b->prefill_tokens + b->decode_seqs;
    serve_breakdown z;
    memset(&z, 0, sizeof z);
    double t = 0, rows = b->decode_seqs + b->prefill_done;
    if (b->prefill_tokens <= 0 && b->decode_seqs > 0)       /* a decode-only batch replays a graph */
        tokens = rows = serve_graph_rows(sm, b->decode_seqs);
    if (tokens > 0) {
        t = serve_tokens_s(sm, tokens, rows, &z) +
            serve_context_local_s(sm, b->prefill_pairs, b->prefill_tiles, b->decode_ctx, b->decode_seqs,
                                  b->local_known ? b->decode_local : -1, &z);
        z.host_s = serve_host_s(sm, b->decode_seqs + b->prefill_done);
        t = serve_pace_s(&sm->p, t, z.host_s);
    }
    z.total_s = t;
    if (bd) *bd = z;
    return t;
}

double serve_host_s(const serve_model *sm, double seqs) {
    /* Under attention data parallelism each group's rank runs its own
     * executor loop over its share of the sequences, in parallel with the
     * others (TensorRT-LLM's enable_attention_dp: a PyExecutor per rank, each
     * scheduling its own requests; SGLang's DP attention: a scheduler per DP
     * rank). The per-sequence figure is per rank: PR #10273 measured it at
     * 1536 sequences per rank under attention DP 2. */
    return seqs > 0 ? sm->p.host_step_s + sm->p.host_s_per_seq * seqs / sm->attn_dp : 0;
}

double serve_pace_s(const serve_params *p, double gpu_s, double host_s) {
    if (p->host_sync) return gpu_s + host_s;
    return host_s > gpu_s ? host_s : gpu_s;
}

double serve_weight_floor_s(const serve_model *sm) {
    /* Decode of one token reads every layer's weights (MoE: the non-expert
     * ones and, on average over the GPUs, k/ep of the routed experts) and
     * the lm head. */
    double layer = sm->layer_weight_bytes;
    if (sm->experts > 1) {
        double expert = sm->expert_params * sm->w_expert_bytes / sm->etp;
        double unread = (double)sm->experts / sm->ep - (double)sm->experts_per_token / sm->ep;
        layer -= expert * unread * sm->moe_layers / sm->layers;
    }
    double head = sm->vocab * sm->hidden * 2 / sm->tp;
    return (layer * sm->layers + head) / sm->g.hbm_bw_bytes_per_s;
}
