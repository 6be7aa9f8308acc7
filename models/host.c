/*
 * host: the host machine's cost model (see host.h for the formulas).
 */
#include "models/host.h"
#include "models/paramtab.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Named parameters, each name made from its member by one rule:
 * "group.member" is host_profile's group_member, and "group.KEY.member" the
 * element [index of KEY] of the array group_member (a CBLAS precision, an
 * MPI collective). The unit is the name's (paramtab_unit). */
typedef paramtab_def pdef;

#define P(group, m) { #group "." #m, 0, offsetof(host_profile, group##_##m) }
#define AT(group, key, idx, m) { #group "." key "." #m, 0, offsetof(host_profile, group##_##m[idx]) }
#define GEMM(key, idx) AT(gemm, key, idx, latency_s), AT(gemm, key, idx, peak_flops), AT(gemm, key, idx, eff)
#define COLL(key, idx) \
    AT(coll, key, idx, alpha_s), AT(coll, key, idx, bw), AT(coll, key, idx, cache_bw), \
    AT(coll, key, idx, cache_bytes), AT(coll, key, idx, rndv_alpha_s), AT(coll, key, idx, eager_bytes), \
    AT(coll, key, idx, cache_k), AT(coll, key, idx, eager_bw)

static const pdef params[] = {
    P(copy, latency_s), P(copy, cache_bw), P(copy, dram_bw), P(copy, cache_bytes),
    P(copy, l1_bw), P(copy, l1_bytes), P(copy, cache_k),
    GEMM("fp64", PREC_FP64), GEMM("fp32", PREC_FP32),
    P(storage, latency_s), P(storage, write_bw), P(storage, read_bw), P(storage, read_latency_s),
    P(storage, write_start_bw), P(storage, write_ramp_bytes), P(storage, read_start_bw), P(storage, read_ramp_bytes),
    COLL("allreduce", COLL_ALLREDUCE), COLL("allgather", COLL_ALLGATHER),
    COLL("reducescatter", COLL_REDUCESCATTER), COLL("alltoall", COLL_ALLTOALL),
    COLL("broadcast", COLL_BROADCAST), COLL("sendrecv", COLL_SENDRECV),
};
#define N_PARAMS (sizeof params / sizeof *params)

const char *const *host_param_names(void) {
    static const char *names[N_PARAMS + 1];
    return paramtab_names(params, N_PARAMS, names);
}

static const pdef *find(const char *z) { return paramtab_find(params, N_PARAMS, z); }

double *host_param(host_profile *h, const char *z) {
    const pdef *d = find(z);
    return d ? (double *)((char *)h + d->off) : NULL;
}

double host_param_get(const host_profile *h, const char *z) {
    const pdef *d = find(z);
    return d ? *(const double *)((const char *)h + d->off) : NAN;
}

const char *host_param_unit(const char *z) { return find(z) ? paramtab_unit(z) : ""; }

void host_profile_default(host_profile *h) {
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "generic-host");
    snprintf(h->source, sizeof h->source, "built-in generic host (uncalibrated; see 'clustertwin calibrate')");
    h->copy_latency_s = 1e-6;
    h->copy_cache_bw = 40e9;
    h->copy_dram_bw = 10e9;
    h->copy_cache_bytes = 2 << 20;
    h->copy_l1_bw = 80e9;
    h->copy_l1_bytes = 16 << 10;
    h->copy_cache_k = 4;
    h->gemm_peak_flops[PREC_FP64] = 48e9;
    h->gemm_peak_flops[PREC_FP32] = 96e9;
    for (int p = 0; p < PREC_COUNT; p++) {
        h->gemm_latency_s[p] = 1e-6;
        h->gemm_eff[p] = h->gemm_peak_flops[p] > 0 ? 0.05 : 0;
    }
    h->storage_latency_s = 2e-3;
    h->storage_write_bw = 1e9;
    h->storage_read_bw = 2e9;
    h->storage_read_latency_s = 1e-3;
    for (int o = 0; o < COLL_OP_COUNT; o++) {
        h->coll_alpha_s[o] = 5e-6;
        h->coll_bw[o] = 5e9;
        h->coll_cache_bw[o] = 10e9;
        h->coll_cache_bytes[o] = 1 << 20;
        h->coll_rndv_alpha_s[o] = 0;
        h->coll_eager_bytes[o] = 4096;
        h->coll_cache_k[o] = 4;
    }
}

double host_cache_share(double bytes, double cache_bytes, double k) {
    if (!(cache_bytes > 0)) return 0;
    if (!(k > 0)) k = 4;
    return 1 / (1 + pow(bytes / cache_bytes, k));
}

/* Seconds per byte through a cache of `cache_bytes` at cache_bw backed by
 * memory at bw. */
static double inv_bw(double bytes, double cache_bytes, double k, double cache_bw, double bw) {
    if (!(cache_bw > 0)) return 1 / bw;             /* no cache level */
    double f = host_cache_share(bytes, cache_bytes, k);
    return f / cache_bw + (1 - f) / bw;
}

/* Seconds per byte of a stream of s bytes that starts at start_bw and
 * ramps up to bw over about ramp bytes (no ramp when either is 0). */
static double ramp_spb(double s, double bw, double start_bw, double ramp) {
    if (!(start_bw > 0) || !(ramp > 0)) return 1 / bw;
    double g = 1 / (1 + s / ramp);
    return g / start_bw + (1 - g) / bw;
}

int host_predict(const host_profile *h, const mb_case *c, mb_prediction *p, char *why, size_t whylen) {
    mb_prediction r = { 0 };
    switch (c->kind) {
    case MBC_COPY:
        if (c->copy != COPY_HOST) {
            snprintf(why, whylen, "a %s copy needs a GPU; the host model prices host copies only",
                     copy_kind_name(c->copy));
            return -1;
        }
        if (!(h->copy_dram_bw > 0)) {
            snprintf(why, whylen, "the host profile has no copy.dram_bw");
            return -1;
        }
        {
            /* f1 <= f2: the first level is the smaller cache of the two. */
            double S = c->size_bytes, k = h->copy_cache_k;
            double f1 = h->copy_l1_bw > 0 ? host_cache_share(S, h->copy_l1_bytes, k) : 0;
            double f2 = h->copy_cache_bw > 0 ? host_cache_share(S, h->copy_cache_bytes, k) : 0;
            if (f1 > f2) f2 = f1;
            double spb = (f1 > 0 ? f1 / h->copy_l1_bw : 0) + (f2 > f1 ? (f2 - f1) / h->copy_cache_bw : 0) +
                         (1 - f2) / h->copy_dram_bw;
            r.time_s = h->copy_latency_s + S * spb;
        }
        r.algbw_bytes_per_s = c->size_bytes / r.time_s;
        r.detail = "host memcpy";
        break;
    case MBC_GEMM: {
        double rate = h->gemm_peak_flops[c->precision] * h->gemm_eff[c->precision];
        if (!(rate > 0)) {
            snprintf(why, whylen, "no %s GEMM on the host (CBLAS runs fp32 and fp64)", precision_name(c->precision));
            return -1;
        }
        double flops = mb_gemm_flops(c);   /* a grouped case: one CBLAS call per group */
        r.time_s = mb_groups(c) * h->gemm_latency_s[c->precision] + flops / rate;
        r.tflops = flops / r.time_s / 1e12;
        r.detail = "host CBLAS";
        break;
    }
    case MBC_STORAGE:
        if (!(h->storage_write_bw > 0) || c->files < 1) {
            snprintf(why, whylen, "the host profile has no storage.write_bw");
            return -1;
        }
        r.time_s = h->storage_latency_s * c->files +
                   c->size_bytes * ramp_spb(c->size_bytes / c->files, h->storage_write_bw, h->storage_write_start_bw,
                                            h->storage_write_ramp_bytes);
        r.algbw_bytes_per_s = c->size_bytes / r.time_s;
        r.detail = "local files + fsync";
        break;
    case MBC_COLLECTIVE: {
        int o = c->op;
        if (o < 0 || o >= COLL_OP_COUNT || !(h->coll_bw[o] > 0) || c->ranks < 1) {
            snprintf(why, whylen, "the host profile has no coll.%s.bw", coll_op_name(c->op));
            return -1;
        }
        double moved = c->size_bytes * coll_busbw_factor(c->op, c->ranks);
        int eager = c->size_bytes <= h->coll_eager_bytes[o];
        double spb = eager && h->coll_eager_bw[o] > 0 ? 1 / h->coll_eager_bw[o]
                                                      : inv_bw(c->size_bytes, h->coll_cache_bytes[o], h->coll_cache_k[o],
                                                               h->coll_cache_bw[o], h->coll_bw[o]);
        r.time_s = c->ranks > 1 ? h->coll_alpha_s[o] + (eager ? 0 : h->coll_rndv_alpha_s[o]) + moved * spb : 0;
        r.algbw_bytes_per_s = r.time_s > 0 ? c->size_bytes / r.time_s : 0;
        r.busbw_bytes_per_s = r.algbw_bytes_per_s * coll_busbw_factor(c->op, c->ranks);
        r.detail = "host MPI alpha-beta";
        break;
    }
    }
    *p = r;
    return 0;
}

double host_storage_read_s(const host_profile *h, const mb_case *c) {
    if (c->kind != MBC_STORAGE || !(h->storage_read_bw > 0) || c->files < 1) return -1;
    return h->storage_read_latency_s * c->files +
           c->size_bytes * ramp_spb(c->size_bytes / c->files, h->storage_read_bw, h->storage_read_start_bw,
                                    h->storage_read_ramp_bytes);
}
