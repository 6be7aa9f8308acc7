/*
 * host: cost model of one host machine (CPU, DRAM, local storage, MPI
 * between processes on it), the twin of what hw/'s cpu and mpi backends
 * measure. Pure functions of a plain struct: no I/O.
 *
 * A host profile is a list of named parameters (host_param_names()), each
 * a number in SI units. `clustertwin calibrate` fits them to measurements
 * and writes them as a hardware profile XML (scenarios/profile.h); a
 * scenario includes one with <host-profile href="..."/> in
 * <microbenchmarks>. Without one, host_profile_default() gives a generic
 * server's figures (uncalibrated: expect errors of 2x, not 10%).
 *
 * The models, one per case kind (S = bytes, F = 2mnk FLOPs):
 *
 *   copy host    t = copy.latency_s + S * (f1 / copy.l1_bw + (f2 - f1) / copy.cache_bw
 *                                            + (1 - f2) / copy.dram_bw)
 *                f1 = share(S, copy.l1_bytes), f2 = share(S, copy.cache_bytes),
 *                share(S, C) = 1 / (1 + (S / C)^k), k = copy.cache_k: the part
 *                served by a cache of C bytes (the core's own caches, then the
 *                shared last level). A buffer streamed again and again stays
 *                in an LRU cache while it fits and is evicted whole once it
 *                does not, so the fall is steep: k near 4-6 on real machines
 *                (measured here: 4x in size takes the hit rate from 0.99 to
 *                0.04), where k = 2 would spread it over 10x
 *   gemm P       t = gemm.P.latency_s + F / (gemm.P.peak_flops * gemm.P.eff)
 *                P = fp64 | fp32 (one core: the CBLAS the cpu backend links)
 *   storage      t = storage.latency_s * files + S / bw_w(S / files)
 *                (write + fsync); the read back (page cache dropped):
 *                storage.read_latency_s * files + S / bw_r(S / files), where a
 *                file's stream ramps up: 1/bw(s) = g / start_bw + (1 - g) / bw,
 *                g = 1 / (1 + s / ramp_bytes) (storage.write_start_bw,
 *                storage.write_ramp_bytes; storage.read_start_bw,
 *                storage.read_ramp_bytes; 0 = no ramp, a plain line): the
 *                first bytes of a stream go slower than the rest while the
 *                kernel's read-ahead and write-back windows and the device's
 *                queue fill (measured here: a read back climbs from 1.4 GB/s
 *                at 1 MiB to 2.6 GB/s at 128 MiB)
 *   collective   t = coll.OP.alpha_s + [S > coll.OP.eager_bytes] coll.OP.rndv_alpha_s
 *                    + S * busfactor(OP, n) / bw(S)
 *                1/bw(S) = 1 / coll.OP.eager_bw up to the eager limit when
 *                          eager_bw > 0 (eager messages are copied in and out
 *                          of shared buffers, rendezvous ones once: the two
 *                          protocols move bytes at different speeds), else
 *                1/bw(S) = f / coll.OP.cache_bw + (1 - f) / coll.OP.bw,
 *                f = 1 / (1 + (S / coll.OP.cache_bytes)^coll.OP.cache_k)
 *                (nccl-tests bus bandwidth: shared-memory MPI on one host
 *                is an alpha-beta model with a cache knee, and a second
 *                latency above the eager limit where MPI switches to its
 *                rendezvous protocol; OpenMPI's shared-memory eager limit is
 *                4 KiB, the default of coll.OP.eager_bytes, which calibrate
 *                places between two measured sizes by a discrete search)
 *
 * Cases with no host meaning (d2d/h2d/d2h copies, bf16/fp8 GEMM) are not
 * priced: host_predict() returns -1 and says why.
 */
#ifndef CT_HOST_H
#define CT_HOST_H

#include <stddef.h>

#include "models/collective.h"
#include "models/microbench.h"

/* The largest value a host profile parameter may hold: the largest real
 * ones (bandwidths in B/s, cache sizes in B) are below 1e15; past this a fit
 * has found a term the measurements cannot see (a bandwidth of 4.5e38 B/s:
 * all latency), and products of values stay finite. The profile reader
 * refuses more, the writer never writes more, calibration never fits more. */
#define HOST_PARAM_MAX 1e18

typedef struct host_profile {
    char name[64];                   /* e.g. "twin-myhost" */
    char source[128];                /* "built-in generic host" or "calibrated 2026-..." */
    double copy_latency_s, copy_cache_bw, copy_dram_bw, copy_cache_bytes, copy_l1_bw, copy_l1_bytes, copy_cache_k;
    double gemm_latency_s[PREC_COUNT], gemm_peak_flops[PREC_COUNT], gemm_eff[PREC_COUNT];
    double storage_latency_s, storage_write_bw, storage_read_bw, storage_read_latency_s;
    double storage_write_start_bw, storage_write_ramp_bytes, storage_read_start_bw, storage_read_ramp_bytes;
    double coll_alpha_s[COLL_OP_COUNT], coll_bw[COLL_OP_COUNT], coll_cache_bw[COLL_OP_COUNT];
    double coll_cache_bytes[COLL_OP_COUNT];
    double coll_rndv_alpha_s[COLL_OP_COUNT], coll_eager_bytes[COLL_OP_COUNT], coll_cache_k[COLL_OP_COUNT];
    double coll_eager_bw[COLL_OP_COUNT];         /* 0: the same bandwidth as rendezvous */
} host_profile;

/* A generic 2020s server core: DRAM memcpy 10 GB/s, caches 40 GB/s up to
 * 2 MiB, one core of 3 GHz AVX2 (48 / 96 GFLOP/s fp64 / fp32 peak) at 5%
 * efficiency through a reference CBLAS, an NVMe-class disk at 1 GB/s, and
 * shared-memory MPI at 5 us and 5 GB/s. */
void host_profile_default(host_profile *h);

/* The parameter names, NULL-terminated ("copy.dram_bw", ...). */
const char *const *host_param_names(void);

/* The parameter named z, or NULL when there is none. */
double *host_param(host_profile *h, const char *z);
double host_param_get(const host_profile *h, const char *z);   /* NaN when unknown */

/* The unit of a parameter: "s", "B/s", "B", "FLOP/s" or "" (a ratio). */
const char *host_param_unit(const char *z);

/* Price one case on the host. Returns 0, or -1 with why set (p unchanged)
 * for a case the host cannot run or the profile cannot price. */
int host_predict(const host_profile *h, const mb_case *c, mb_prediction *p, char *why, size_t whylen);

/* Time of a storage read back of c (read_bw), seconds; -1 when unknown. */
double host_storage_read_s(const host_profile *h, const mb_case *c);

/* The share of a transfer served from caches, f above (k <= 0: 4). */
double host_cache_share(double bytes, double cache_bytes, double k);

#endif
