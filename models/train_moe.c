/*
 * train_moe: the routed FFN of a MoE layer in training (see train_moe.h)
 * and the GEMM and collective helpers of the step model.
 *
 * A handful of roofline and collective-model calls per plan.
 */
#include "models/train_moe.h"

#include <math.h>

#include "models/gpu.h"
#include "models/transformer.h"

#define ACT_BYTES 2.0           /* BF16 activations and gradients */
/* FP8 dispatch: one byte per element and one FP32 scale per 1x128 tile
 * (DeepSeek-V3 sections 3.3.1 and 3.3.3). */
#define FP8_TILE_BYTES (1.0 + 4.0 / 128)

double train_gemm_s(const gpu_spec *g, const train_plan *p, double m, double n, double k) {
    if (p->precision != PREC_FP8 && p->precision != PREC_FP4)
        return gpu_gemm_s(g, p->precision, m, n, k, 1);
    gpu_spec lo = *g;
    double ratio = gpu_peak_flops(g, p->precision) / gpu_peak_flops(g, PREC_BF16);
    lo.gemm_half_dim = (g->gemm_half_dim > 0 ? g->gemm_half_dim : 256) * ratio;
    return gpu_gemm_s(&lo, p->precision, m, n, k, 1);
}

double train_coll_s(const fabric *f, coll_op op, double bytes, int ranks, int per_node, int conc) {
    if (ranks <= 1 || !(bytes > 0)) return 0;
    coll_group g = { ranks, per_node < 1 ? 1 : per_node, conc < 1 ? 1 : conc };
    coll_result r;
    if (coll_time(f, op, bytes, &g, COLL_AUTO, &r) < 0) return 0;
    return r.time_s;
}

double train_cast_bytes_per_elem(const train_plan *p) {
    if (p->precision == PREC_FP8) return fp8_cast_bytes((fp8_recipe)p->fp8_recipe);
    if (p->precision != PREC_FP4) return 0;
    double reads = p->fp4_recipe == FP4_MXFP4 ? 1 : 2;
    return 2 * reads + 2 * fp4_element_bytes((fp4_recipe)p->fp4_recipe);
}

int train_domain_gpus(const fabric *f) {
    int d = fabric_domain_gpus(f);
    return d > 0 ? d : 8;
}

int train_per_node(int ranks, int stride, int gpn) {
    if (stride >= gpn) return 1;
    int k = gpn / stride;
    return ranks < k ? ranks : k;
}

/* Bytes per element the dispatch sends: FP8 tiles where the stack
 * dispatches in FP8 and the GEMMs run in FP8 or FP4, else BF16. */
static double dispatch_bytes(const train_plan *p) {
    int low = p->precision == PREC_FP8 || p->precision == PREC_FP4;
    return low && p->stack.fp8_activations ? FP8_TILE_BYTES : ACT_BYTES;
}

/* Expected number of the groups (nodes) that a token's k experts fall in,
 * the experts spread evenly over the groups and a token's k distinct
 * experts chosen uniformly (balanced routing): groups times the chance
 * that a group holds at least one of them, 1 - C(E - E/g, k) / C(E, k). */
double train_moe_groups_hit(double experts, double k, double groups) {
    if (!(groups > 1)) return 1;
    double out = experts - experts / groups, miss = 1;   /* P(no chosen expert in a given group) */
    for (int i = 0; i < (int)k && miss > 0; i++) miss *= fmax(0, (out - i) / (experts - i));
    return fmax(1, groups * (1 - miss));
}

/* One all-to-all of S bytes per GPU over the EP group on its placement
 * (train_moe.h): inside a node, inside a wider NVLink domain (every GPU at
 * its NVLink bandwidth through the switches), or across NICs. Across NICs
 * a token crosses them once per node it targets and fans out over NVLink
 * there when the routing limits its nodes (route_nodes) or the flex
 * dispatcher forwards it (DeepEP, HybridEP); the alltoall dispatcher sends
 * every one of its k copies through the NICs. */
static double ep_alltoall_s(const llm_spec *m, const train_plan *p, const fabric *fab, double S) {
    int ep = train_plan_ep(p), etp = train_plan_etp(p);
    if (ep <= 1 || !(S > 0)) return 0;
    fabric a2a = *fab, *f = &a2a;           /* the flow fabric's share of the NICs for the all-to-all */
    if (fab->a2a_net_share > 0) a2a.net_share = fab->a2a_net_share;
    int gpn = f->node->gpus > 0 ? f->node->gpus : 8;
    int domain = train_domain_gpus(f);
    long span = (long)ep * etp;
    if (span <= gpn) return train_coll_s(f, COLL_ALLTOALL, S, ep, ep, gpn / ep);
    if (span <= domain) return p2p_time_s(f, S * (ep - 1) / ep, 1, 1);
    int rpn = train_per_node(ep, etp, domain), conc = domain / rpn;
    int nodes = ep / rpn;
    double k = m->experts_per_token;
    int limited = p->route_nodes > 0 && p->route_nodes < k;
    if (!limited && p->moe_dispatcher == MOE_DISPATCHER_ALLTOALL)
        return train_coll_s(f, COLL_ALLTOALL, S, ep, rpn, conc);
    /* One copy per target node through the NICs, the fan-out to the
     * experts' GPUs over NVLink at the same time. */
    double copies = limited ? (p->route_nodes < nodes ? p->route_nodes : nodes)
                            : train_moe_groups_hit(m->experts, k, nodes);
    double ib = train_coll_s(f, COLL_ALLTOALL, S * copies / k, ep, rpn, conc);
    double nvl = train_coll_s(f, COLL_ALLTOALL, S, rpn, rpn, conc);
    return fmax(ib, nvl);
}

/* Expert tensor parallelism: the rows an etp group's GPUs received are
 * gathered to all of them before the experts and reduce-scattered after
 * (Megatron-Core's alltoall dispatcher with expert TP). One direction. */
static double etp_gather_s(const train_plan *p, const fabric *f, double rows, double h) {
    int etp = train_plan_etp(p);
    if (etp <= 1) return 0;
    int gpn = train_domain_gpus(f);
    int rpn = etp < gpn ? etp : gpn;
    double bytes = rows * etp * h * ACT_BYTES;
    return train_coll_s(f, COLL_ALLGATHER, bytes, etp, rpn, gpn / rpn) +
           train_coll_s(f, COLL_REDUCESCATTER, bytes, etp, rpn, gpn / rpn);
}

/* FP8 (FP4) casts of the routed experts' GEMM operands per micro-batch,
 * on the convention the step model uses for every other GEMM (training.c,
 * fp8_cast_s): the forward quantizes each GEMM's input (and the weights,
 * unless the stack keeps low-precision weight copies between
 * micro-batches), the backward each output gradient. Transformer Engine's
 * GroupedLinear, which Megatron-Core's grouped-GEMM experts run on, does
 * exactly this per expert: tex.split_quantize of the input by m_splits in
 * its forward, of grad_output in its backward, the weights through
 * get_weight_workspace, refreshed on the first micro-batch only
 * (NVIDIA/TransformerEngine transformer_engine/pytorch/module/
 * grouped_linear.py, _GroupedLinear). rows: the GPU's routed rows; fe: the
 * expert FFN width on this GPU. Returns the forward's time, *bwd the
 * backward's; 0 in BF16. */
static double expert_casts_s(const gpu_spec *g, const train_plan *p, double rows, double experts, double h,
                             double fe, int gated, double *bwd) {
    *bwd = 0;
    double per = train_cast_bytes_per_elem(p);
    if (!(per > 0)) return 0;
    double up = (gated ? 2 : 1) * fe;                   /* fc1's output width */
    double w = p->stack.fp8_weight_cache ? 0 : experts * (up + fe) * h;
    *bwd = gpu_memory_s(g, rows * (up + h) * per);
    return gpu_memory_s(g, (rows * (h + fe) + w) * per);
}

void moe_ffn_costs(const llm_spec *m, const train_plan *p, const fabric *f, double tokens,
                   moe_ffn_cost *c) {
    const gpu_spec *g = f->gpu;
    double h = m->hidden, tp = p->tp > 0 ? p->tp : 1;
    double ep = train_plan_ep(p), etp = train_plan_etp(p);
    double fe = m->expert_ffn_hidden > 0 ? m->expert_ffn_hidden : m->ffn_hidden;
    double k = m->experts_per_token, imb = train_plan_imbalance(p);
    tf_dims d;
    tf_dims_of(m, &d);
    double tok_sp = tokens / tp;                        /* sequence-parallel share */
    double rows_mean = tok_sp * k;                      /* dispatched rows per GPU */
    double rows = rows_mean * etp * imb;                /* the busiest GPU's expert rows */
    c->local_experts = m->experts / ep;
    c->expert_rows = rows / c->local_experts;

    double fe_loc = fe / etp;
    double experts = c->local_experts * (train_gemm_s(g, p, c->expert_rows, (d.gated ? 2 : 1) * fe_loc, h) +
                                         train_gemm_s(g, p, c->expert_rows, h, fe_loc));
    double shared = 0, shared_b = 0, shared_b2 = 0;   /* shared experts: GEMMs, casts fwd, bwd */
    if (m->shared_experts > 0) {
        tf_gemm sg[2];
        tf_ffn_gemms(m, tokens, m->shared_experts * fe, p->tp, sg);
        for (int i = 0; i < 2; i++) shared += train_gemm_s(g, p, sg[i].m, sg[i].n, sg[i].k);
        shared_b = expert_casts_s(g, p, sg[1].m, 1, h, sg[1].k, d.gated, &shared_b2);
    }
    double router = gpu_gemm_s(g, PREC_BF16, tok_sp, m->experts, h, 1);
    /* Permute and unpermute read and write each row; the gated activation
     * reads two and writes one expert-width vector per row. */
    double mem = gpu_memory_s(g, rows * (2 * 2 * h + (d.gated ? 3 : 2) * fe_loc) * ACT_BYTES);
    double cast_b, cast_f = expert_casts_s(g, p, rows, c->local_experts, h, fe_loc, d.gated, &cast_b);
    c->fwd = router + experts + shared + mem + cast_f + shared_b;
    c->bwd = 2 * (router + experts + shared + mem) + cast_b + shared_b2;

    double S = rows_mean * h;                           /* elements each GPU sends */
    double disp = ep_alltoall_s(m, p, f, S * imb * dispatch_bytes(p));
    double comb = ep_alltoall_s(m, p, f, S * imb * ACT_BYTES);
    double gather = etp_gather_s(p, f, rows_mean * imb, h);
    c->a2a_fwd = disp + comb + gather;
    c->a2a_bwd = 2 * ep_alltoall_s(m, p, f, S * imb * ACT_BYTES) + gather;
}

double train_moe_dispatch_sync_s(const train_plan *p, const fabric *f) {
    if (p->moe_dispatcher != MOE_DISPATCHER_ALLTOALL || !f->node) return 0;
    return f->node->coll_launch_s;
}
