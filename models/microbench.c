/*
 * microbench: model predictions for single microbenchmark cases.
 */
#include "models/microbench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/checkpoint.h"
#include "models/flow_coll.h"
#include "models/gpu.h"
#include "base/units.h"

/* Launch and synchronisation cost of one timed copy or GEMM call as
 * cudaEvent timing sees it (a few microseconds on H100/A100 with CUDA 12;
 * nvbandwidth and cuBLAS benchmark small-size plateaus). */
#define KERNEL_LAUNCH_S 5e-6
/* A host<->device copy pays a DMA set-up on top (~10 us small-copy floor
 * in CUDA bandwidthTest). */
#define DMA_SETUP_S 10e-6

static const char *copy_names[] = { "d2d", "h2d", "d2h", "host" };

int copy_kind_parse(const char *z) {
    for (int i = 0; i < 4; i++)
        if (z && !strcmp(z, copy_names[i])) return i;
    return -1;
}

const char *copy_kind_name(copy_kind k) { return (k >= 0 && k <= COPY_HOST) ? copy_names[k] : "?"; }

int mb_sizes(double min_bytes, double max_bytes, double factor, double *out, int cap) {
    int n = 0;
    if (!(min_bytes > 0) || max_bytes < min_bytes) return 0;
    for (double s = min_bytes; s <= max_bytes * (1 + 1e-12) && n < cap; s *= factor) {
        out[n++] = floor(s + 0.5);
        if (!(factor > 1)) break;
    }
    return n;
}

static const char *algo_detail(coll_algo a, coll_proto p) {
    static const char *z[COLL_ALGO_COUNT][COLL_PROTO_COUNT] = {
        { "auto/LL", "auto/LL128", "auto/Simple" },
        { "ring/LL", "ring/LL128", "ring/Simple" },
        { "tree/LL", "tree/LL128", "tree/Simple" },
        { "nvls/LL", "nvls/LL128", "nvls/Simple" },
        { "nvls-tree/LL", "nvls-tree/LL128", "nvls-tree/Simple" },
        { "collnet-direct/LL", "collnet-direct/LL128", "collnet-direct/Simple" },
        { "collnet-chain/LL", "collnet-chain/LL128", "collnet-chain/Simple" },
        { "pat/LL", "pat/LL128", "pat/Simple" },
    };
    return (a >= 0 && a < COLL_ALGO_COUNT && p >= 0 && p < COLL_PROTO_COUNT) ? z[a][p] : "";
}

/* The case's own algo=/protocol= replace the fabric's forcing. */
static int predict_collective(const mb_case *c, const mb_env *env, mb_prediction *p) {
    if (!env->fabric || !env->fabric->node || c->ranks < 1) return -1;
    fabric f = *env->fabric;
    if (c->algo_mask) f.algo_mask = c->algo_mask;
    if (c->proto_mask) f.proto_mask = c->proto_mask;
    coll_group g = { c->ranks, c->ranks < f.node->gpus ? c->ranks : f.node->gpus, 1 };
    coll_result r;
    if (coll_time(&f, c->op, c->size_bytes, &g, COLL_AUTO, &r) < 0) return -1;
    flow_coll_result fr;
    if (f.flow_model && flow_coll_packed(&f, c->op, c->size_bytes, &g, &fr) == 0 && fr.time_s > 0) {
        r.time_s = fr.time_s;   /* the algorithm and protocol stay NCCL's choice */
        r.algbw_bytes_per_s = c->size_bytes / r.time_s;
        r.busbw_bytes_per_s = r.algbw_bytes_per_s * coll_busbw_factor(c->op, c->ranks);
    }
    p->time_s = r.time_s;
    p->algbw_bytes_per_s = r.algbw_bytes_per_s;
    p->busbw_bytes_per_s = r.busbw_bytes_per_s;
    p->detail = algo_detail(r.algo, r.proto);
    p->algo = r.algo;
    p->proto = r.proto;
    p->fallback = r.fallback;
    return 0;
}

static int predict_gemm(const mb_case *c, const mb_env *env, mb_prediction *p) {
    const gpu_spec *g = env->fabric ? env->fabric->gpu : NULL;
    if (!g || c->m < 1 || c->n < 1 || c->k < 1) return -1;
    double m = c->m, n = c->n, k = c->k, groups = mb_groups(c);
    double flops = mb_gemm_flops(c);
    double rate = gpu_peak_flops(g, c->precision) * gpu_gemm_eff(g, c->precision, m, n, k);
    double w = precision_bytes(c->precision);
    double bytes = ((m * k + k * n) * w + m * n * (w < 2 ? 2 : w)) * groups;
    double t_compute = rate > 0 ? flops / rate : INFINITY;
    double t_memory = bytes / (g->hbm_bw_bytes_per_s * (g->eff_hbm > 0 ? g->eff_hbm : 0.85));
    p->time_s = KERNEL_LAUNCH_S + (t_compute > t_memory ? t_compute : t_memory);
    p->tflops = flops / p->time_s / 1e12;
    p->detail = t_compute > t_memory ? "compute-bound" : "memory-bound";
    return 0;
}

static int predict_copy(const mb_case *c, const mb_env *env, mb_prediction *p) {
    const fabric *f = env->fabric;
    if (!f || !f->node || !f->gpu || !(c->size_bytes > 0)) return -1;
    const node_spec *nd = f->node;
    double t;
    switch (c->copy) {
    case COPY_D2D:      /* read and write each byte in HBM */
        t = (f->gpu->copy_latency_s > 0 ? f->gpu->copy_latency_s : KERNEL_LAUNCH_S) + 2 * c->size_bytes /
            (f->gpu->hbm_bw_bytes_per_s * (f->gpu->eff_hbm > 0 ? f->gpu->eff_hbm : 0.85));
        p->detail = "HBM read+write";
        break;
    case COPY_H2D:
    case COPY_D2H:
        if (!(nd->pcie_bw_bytes_per_s > 0)) return -1;
        t = (nd->pcie_latency_s > 0 ? nd->pcie_latency_s : DMA_SETUP_S) + c->size_bytes / nd->pcie_bw_bytes_per_s;
        p->detail = "PCIe";
        break;
    default:            /* host memcpy: read and write through DRAM */
        if (!(nd->host_mem_bw_bytes_per_s > 0)) return -1;
        t = 1e-6 + 2 * c->size_bytes / nd->host_mem_bw_bytes_per_s;
        p->detail = "host DRAM read+write";
        break;
    }
    p->time_s = t;
    p->algbw_bytes_per_s = c->size_bytes / t;
    return 0;
}

static int predict_storage(const mb_case *c, const mb_env *env, mb_prediction *p) {
    const fabric *f = env->fabric;
    if (!f || !f->node || !(c->size_bytes > 0) || c->files < 1) return -1;
    double bw, latency;
    if (env->storage) {
        double agg = env->storage_bw_bytes_per_s > 0 ? env->storage_bw_bytes_per_s : env->storage->bw_bytes_per_s;
        bw = agg;
        double client = ckpt_client_bw(env->storage, 1);      /* one writing process */
        if (client < bw) bw = client;
        if (f->node->storage_nic_bw_bytes_per_s > 0 && f->node->storage_nic_bw_bytes_per_s < bw)
            bw = f->node->storage_nic_bw_bytes_per_s;
        latency = env->storage->latency_s;
        p->detail = env->storage->name;
    } else {
        bw = f->node->nvme_bw_bytes_per_s;
        latency = 1e-4;            /* open + fsync of a local file */
        p->detail = "local NVMe";
    }
    if (!(bw > 0)) return -1;
    /* Files are written in parallel; each pays its open/close/fsync latency. */
    p->time_s = latency * 2 + c->size_bytes / bw;
    p->algbw_bytes_per_s = c->size_bytes / p->time_s;
    return 0;
}

int mb_predict(const mb_case *c, const mb_env *env, mb_prediction *p) {
    mb_prediction r = { 0 };
    int rc = -1;
    switch (c->kind) {
    case MBC_COLLECTIVE: rc = predict_collective(c, env, &r); break;
    case MBC_GEMM: rc = predict_gemm(c, env, &r); break;
    case MBC_COPY: rc = predict_copy(c, env, &r); break;
    case MBC_STORAGE: rc = predict_storage(c, env, &r); break;
    }
    if (rc == 0) *p = r;
    return rc;
}

void mb_measurement_rates(const mb_case *c, mb_measurement *m) {
    double t = m->time_s;
    m->algbw_bytes_per_s = m->busbw_bytes_per_s = m->tflops = 0;
    if (!(t > 0)) return;
    switch (c->kind) {
    case MBC_COLLECTIVE:
        m->algbw_bytes_per_s = c->size_bytes / t;
        m->busbw_bytes_per_s = m->algbw_bytes_per_s * coll_busbw_factor(c->op, c->ranks);
        break;
    case MBC_GEMM:
        m->tflops = mb_gemm_flops(c) / t / 1e12;
        break;
    default:
        m->algbw_bytes_per_s = c->size_bytes / t;
        break;
    }
}

double mb_error_pct(double predicted_s, double measured_s) {
    return measured_s > 0 ? 100.0 * (predicted_s - measured_s) / measured_s : NAN;
}

/* "allreduce 2r 1 MiB", "gemm fp32 512x512x512", "gemm bf16 32 x 64x4096x7168" (32
 * groups), "copy host 4 MiB", "storage 64 MiB/2 files". */
void mb_case_label(const mb_case *c, char *buf, size_t len) {
    char z[64];
    switch (c->kind) {
    case MBC_COLLECTIVE:
        snprintf(buf, len, "%s %dr %s", coll_op_name(c->op), c->ranks,
                 units_format(c->size_bytes, UNIT_SIZE, z, sizeof z));
        break;
    case MBC_GEMM:
        if (mb_groups(c) > 1)
            snprintf(buf, len, "gemm %s %d x %dx%dx%d", precision_name(c->precision), c->groups, c->m, c->n, c->k);
        else
            snprintf(buf, len, "gemm %s %dx%dx%d", precision_name(c->precision), c->m, c->n, c->k);
        break;
    case MBC_COPY:
        snprintf(buf, len, "copy %s %s", copy_kind_name(c->copy), units_format(c->size_bytes, UNIT_SIZE, z, sizeof z));
        break;
    case MBC_STORAGE:
        snprintf(buf, len, "storage-write %s/%d", units_format(c->size_bytes, UNIT_SIZE, z, sizeof z), c->files);
        break;
    }
}
