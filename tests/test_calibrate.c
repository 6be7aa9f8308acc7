/*
 * test_calibrate: the host model (models/host.c) and its calibration
 * (models/calibrate.c), and the cpu measurement backend (hw/cpu.c).
 *
 * What it checks and where the expected figures come from:
 *   - host_predict() by hand: a 1 GiB memcpy at 10 GB/s DRAM (caches far
 *     smaller) takes 1 us + 0.1074 s; a 512^3 fp64 GEMM at 48 GFLOP/s x
 *     0.05 takes 2*512^3/2.4e9 = 0.1118 s; 2 files of 64 MiB at 1 GB/s
 *     with 2 ms each take 4 ms + 67.1 ms; a 2-rank all-reduce of 64 MiB at
 *     5 GB/s bus bandwidth moves 64 MiB x 2(n-1)/n = 64 MiB: 5 us + 13.4 ms.
 *   - Calibration recovers known parameters: cases priced by a "true"
 *     profile, times multiplied by log-normal noise of 3% (seeded), fitted
 *     from the generic profile. The well-determined parameters (bandwidths,
 *     efficiencies, the storage latency) come back within 10%, the fit's
 *     residuals are about the noise, and held-out sizes are predicted
 *     within 5% (median).
 *   - Without noise the fit is exact (parameters within 1%).
 *   - Model choice: a collective without cache knee or protocol step gets
 *     no cache level (AIC), its bandwidth within 5%.
 *   - Nothing to fit is an error; too few points fit fewer parameters.
 *   - The cpu backend measures a host copy, a small GEMM and a storage write
 *     with repetitions, quartiles in order and rates that match the time;
 *     it refuses d2d copies, bf16 GEMM and collectives with a reason.
 *   - Nothing here asserts how fast this machine is: measured times and
 *     rates (the copy, the core's peak) are checked for being positive and
 *     finite only, so a busy machine or valgrind cannot fail the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "hw/backend.h"
#include "hw/cpupeak.h"
#include "models/calibrate.h"
#include "models/host.h"
#include "scenarios/profile.h"

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

/* calibrate_fit of host measurements alone: the host model of h, no GPU. */
static int fit_host(const cal_point *pts, int n, int hold_out, host_profile *h, double *stderr_of, cal_report *rep,
                    cal_residual *res, char *err, size_t errlen) {
    cal_target t;
    memset(&t, 0, sizeof t);
    t.host = *h;
    int rc = calibrate_fit(pts, n, hold_out, &t, stderr_of, rep, res, err, errlen);
    *h = t.host;
    return rc;
}

static void test_predict_by_hand(void **state) {
    (void)state;
    host_profile h;
    host_profile_default(&h);
    mb_prediction p;
    char why[160];
    mb_case c = { .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = 1073741824.0 };
    assert_int_equal(host_predict(&h, &c, &p, why, sizeof why), 0);
    assert_true(rel(p.time_s, 1e-6 + 0.1073741824) < 1e-3);   /* cache shares ~ 4e-6 and 2e-10 */
    mb_case g = { .kind = MBC_GEMM, .m = 512, .n = 512, .k = 512, .precision = PREC_FP64 };
    assert_int_equal(host_predict(&h, &g, &p, why, sizeof why), 0);
    assert_true(rel(p.time_s, 1e-6 + 2.0 * 512 * 512 * 512 / 2.4e9) < 1e-9);
    mb_case s = { .kind = MBC_STORAGE, .size_bytes = 128.0 * 1048576, .files = 2 };
    assert_int_equal(host_predict(&h, &s, &p, why, sizeof why), 0);
    assert_true(rel(p.time_s, 4e-3 + 128.0 * 1048576 / 1e9) < 1e-9);
    mb_case a = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = 64.0 * 1048576 };
    assert_int_equal(host_predict(&h, &a, &p, why, sizeof why), 0);
    assert_true(rel(p.time_s, 5e-6 + 64.0 * 1048576 / 5e9) < 1e-3);
    assert_true(rel(p.busbw_bytes_per_s, 64.0 * 1048576 / p.time_s) < 1e-9);
    /* No host meaning: a reason, p unchanged. */
    mb_prediction q = { .time_s = 42 };
    mb_case d = { .kind = MBC_COPY, .copy = COPY_D2D, .size_bytes = 1e6 };
    assert_int_equal(host_predict(&h, &d, &q, why, sizeof why), -1);
    assert_non_null(strstr(why, "GPU"));
    mb_case b = { .kind = MBC_GEMM, .m = 8, .n = 8, .k = 8, .precision = PREC_BF16 };
    assert_int_equal(host_predict(&h, &b, &q, why, sizeof why), -1);
    assert_non_null(strstr(why, "bf16"));
    assert_true(q.time_s == 42);
    /* Every parameter name resolves. */
    for (const char *const *z = host_param_names(); *z; z++) assert_non_null(host_param(&h, *z));
    assert_null(host_param(&h, "copy.nope"));
    /* A name is its member's ("coll.alltoall.cache_bytes" is
     * coll_cache_bytes[COLL_ALLTOALL]) and its unit is the name's. */
    assert_ptr_equal(host_param(&h, "coll.alltoall.cache_bytes"), &h.coll_cache_bytes[COLL_ALLTOALL]);
    assert_ptr_equal(host_param(&h, "gemm.fp32.peak_flops"), &h.gemm_peak_flops[PREC_FP32]);
    assert_ptr_equal(host_param(&h, "storage.read_ramp_bytes"), &h.storage_read_ramp_bytes);
    assert_string_equal(host_param_unit("coll.alltoall.cache_bytes"), "B");
    assert_string_equal(host_param_unit("gemm.fp32.peak_flops"), "FLOP/s");
    assert_string_equal(host_param_unit("copy.dram_bw"), "B/s");
    assert_string_equal(host_param_unit("storage.read_latency_s"), "s");
    assert_string_equal(host_param_unit("coll.sendrecv.cache_k"), "");
    assert_string_equal(host_param_unit("copy.nope"), "");
}

/* The "true" machine the synthetic measurements come from. */
static void truth(host_profile *t) {
    host_profile_default(t);
    t->copy_latency_s = 3e-7;
    t->copy_dram_bw = 11e9;
    t->copy_cache_bw = 45e9;
    t->copy_cache_bytes = 16e6;
    t->copy_l1_bw = 90e9;
    t->copy_l1_bytes = 32e3;
    t->gemm_eff[PREC_FP32] = 0.04;
    t->gemm_latency_s[PREC_FP32] = 2e-6;
    t->gemm_eff[PREC_FP64] = 0.07;
    t->gemm_latency_s[PREC_FP64] = 3e-6;
    t->storage_latency_s = 1.5e-3;
    t->storage_write_bw = 1.3e9;
    t->storage_read_bw = 2.2e9;
    for (int o = 0; o < COLL_OP_COUNT; o++) {
        t->coll_alpha_s[o] = (4 + o) * 1e-6;
        t->coll_bw[o] = (2 + 0.5 * o) * 1e9;
        t->coll_cache_bw[o] = 3 * t->coll_bw[o];
        t->coll_cache_bytes[o] = 256e3;
    }
}

/* Synthetic measurements of the sweep `measure --backend cpu|mpi` runs. */
static int synth(const host_profile *t, double noise, cal_point *pts, int cap) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    int n = 0;
    mb_prediction p;
    char why[64];
    for (double s = 4096; s <= 268435456.0 && n < cap; s *= 2) {
        cal_point *q = &pts[n++];
        q->c = (mb_case){ .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = s };
        host_predict(t, &q->c, &p, why, sizeof why);
        q->time_s = p.time_s * exp(gsl_ran_gaussian(r, noise));
    }
    static const int dims[] = { 32, 48, 64, 96, 128, 192, 256, 384, 512 };
    for (int pr = 0; pr < 2; pr++)
        for (int i = 0; i < 9 && n < cap; i++) {
            cal_point *q = &pts[n++];
            q->c = (mb_case){ .kind = MBC_GEMM, .m = dims[i], .n = dims[i], .k = dims[i],
                              .precision = pr ? PREC_FP64 : PREC_FP32 };
            host_predict(t, &q->c, &p, why, sizeof why);
            q->time_s = p.time_s * exp(gsl_ran_gaussian(r, noise));
        }
    for (double s = 1048576; s <= 134217728.0 && n < cap; s *= 2) {
        cal_point *q = &pts[n++];
        q->c = (mb_case){ .kind = MBC_STORAGE, .size_bytes = s, .files = 1 };
        host_predict(t, &q->c, &p, why, sizeof why);
        q->time_s = p.time_s * exp(gsl_ran_gaussian(r, noise));
        q->read_s = host_storage_read_s(t, &q->c) * exp(gsl_ran_gaussian(r, noise));
    }
    for (int o = 0; o < COLL_OP_COUNT; o++)
        for (double s = 1024; s <= 67108864.0 && n < cap; s *= 2) {
            cal_point *q = &pts[n++];
            q->c = (mb_case){ .kind = MBC_COLLECTIVE, .op = (coll_op)o, .ranks = 2, .size_bytes = s };
            host_predict(t, &q->c, &p, why, sizeof why);
            q->time_s = p.time_s * exp(gsl_ran_gaussian(r, noise));
        }
    gsl_rng_free(r);
    return n;
}

static const char *const well_determined[] = {
    "copy.dram_bw", "gemm.fp32.eff", "gemm.fp64.eff", "storage.write_bw", "storage.read_bw", "storage.latency_s",
    "coll.allreduce.bw", "coll.allreduce.alpha_s", "coll.alltoall.bw", "coll.sendrecv.bw", "coll.sendrecv.alpha_s", NULL
};

static void recover(double noise, double tol, double held_tol) {
    host_profile t, h;
    truth(&t);
    host_profile_default(&h);
    cal_point pts[400] = { 0 };
    int n = synth(&t, noise, pts, 400);
    double se[128];
    cal_report rep;
    char err[256];
    int ng = fit_host(pts, n, 1, &h, se, &rep, NULL, err, sizeof err);
    assert_int_equal(ng, 11);          /* copy, 2 gemm, storage write/read, 6 collectives */
    for (int i = 0; well_determined[i]; i++) {
        double got = host_param_get(&h, well_determined[i]), want = host_param_get(&t, well_determined[i]);
        if (rel(got, want) > tol) fail_msg("%s: fitted %g, true %g (noise %g)", well_determined[i], got, want, noise);
    }
    for (int g = 0; g < rep.n_groups; g++) {
        const cal_group *c = &rep.group[g];
        assert_true(c->ok);
        assert_true(c->n_held > 0 && c->n_fit > c->n_held - 1);
        if (!(c->held_median_pct <= held_tol))
            fail_msg("%s: held-out median |error| %.2f%% (noise %g)", c->name, c->held_median_pct, noise);
        /* 3x the noise: the acceptance rules turn down the copy's L1 level
         * when 3% noise leaves its latency undetermined (standard error
         * above the value), and the 4-parameter copy model that remains
         * misses the smallest sizes by more (8.1% RMS; held out 1.7%). */
        assert_true(c->fit_rms_pct <= 100 * noise * 3 + 0.5);
        for (int k = 0; k < c->n_params; k++) assert_true(isfinite(c->stderr_[k]) && c->stderr_[k] >= 0);
    }
    /* stderr: reported for fitted parameters only. */
    const char *const *names = host_param_names();
    for (int i = 0; names[i]; i++) {
        if (!strcmp(names[i], "gemm.fp32.peak_flops")) assert_true(isnan(se[i]));
        if (!strcmp(names[i], "storage.write_bw")) assert_true(isfinite(se[i]) && se[i] > 0);
    }
}

static void test_recover_noisy(void **state) {
    (void)state;
    recover(0.03, 0.10, 5.0);
}

static void test_recover_exact(void **state) {
    (void)state;
    recover(1e-9, 0.01, 0.1);
}

/* Model choice: a plain alpha-beta collective (no cache knee, no protocol
 * step) is fitted with 2 parameters; a knee the data show is kept. */
static void test_model_choice(void **state) {
    (void)state;
    host_profile t, h;
    host_profile_default(&t);
    t.coll_cache_bw[COLL_ALLREDUCE] = 0;               /* no cache level */
    t.coll_alpha_s[COLL_ALLREDUCE] = 8e-6;
    t.coll_bw[COLL_ALLREDUCE] = 3e9;
    cal_point pts[40] = { 0 };
    int n = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    mb_prediction p;
    char why[64], err[128];
    for (double s = 1024; s <= 67108864.0; s *= 2, n++) {
        pts[n].c = (mb_case){ .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = s };
        host_predict(&t, &pts[n].c, &p, why, sizeof why);
        pts[n].time_s = p.time_s * exp(gsl_ran_gaussian(r, 0.03));
    }
    gsl_rng_free(r);
    cal_report rep;
    host_profile_default(&h);
    assert_int_equal(fit_host(pts, n, 1, &h, NULL, &rep, NULL, err, sizeof err), 1);
    /* No cache knee is invented; AIC may keep a small protocol step the
     * noise suggests (it errs towards one parameter too many). */
    assert_true(rep.group[0].n_params <= 3);
    assert_non_null(strstr(rep.group[0].note, "AIC"));
    assert_true(h.coll_cache_bw[COLL_ALLREDUCE] == 0);
    assert_true(h.coll_rndv_alpha_s[COLL_ALLREDUCE] < 4e-6);
    assert_true(rel(h.coll_bw[COLL_ALLREDUCE], 3e9) < 0.05);
    assert_true(rep.group[0].held_median_pct < 5);
}

/* A protocol step and a sharp cache knee, as shared-memory MPI shows: the
 * eager limit is placed between the two sizes around it, the eager and
 * rendezvous bandwidths come back, and held-out sizes are predicted. */
static void test_protocol_step(void **state) {
    (void)state;
    host_profile t;
    host_profile_default(&t);
    coll_op o = COLL_BROADCAST;
    t.coll_alpha_s[o] = 1e-6;
    t.coll_rndv_alpha_s[o] = 3e-6;
    t.coll_eager_bytes[o] = 6000;              /* between the 4 KiB and 8 KiB points */
    t.coll_eager_bw[o] = 1.5e9;
    t.coll_bw[o] = 5e9;
    t.coll_cache_bw[o] = 12e9;
    t.coll_cache_bytes[o] = 6 << 20;
    t.coll_cache_k[o] = 6;
    cal_point pts[40] = { 0 };
    int n = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    mb_prediction p;
    char why[64], err[128];
    for (double s = 1024; s <= 67108864.0; s *= 2, n++) {
        pts[n].c = (mb_case){ .kind = MBC_COLLECTIVE, .op = o, .ranks = 2, .size_bytes = s };
        assert_int_equal(host_predict(&t, &pts[n].c, &p, why, sizeof why), 0);
        pts[n].time_s = p.time_s * exp(gsl_ran_gaussian(r, 0.02));
    }
    gsl_rng_free(r);
    cal_report rep;
    host_profile h;
    host_profile_default(&h);
    assert_int_equal(fit_host(pts, n, 0, &h, NULL, &rep, NULL, err, sizeof err), 1);
    assert_true(h.coll_eager_bytes[o] > 4096 && h.coll_eager_bytes[o] < 8192);
    assert_non_null(strstr(rep.group[0].note, "eager limit placed at"));
    assert_true(rel(h.coll_eager_bw[o], 1.5e9) < 0.15);
    assert_true(rel(h.coll_bw[o], 5e9) < 0.10);
    assert_true(rel(h.coll_cache_bw[o], 12e9) < 0.15);
    assert_true(rep.group[0].fit_rms_pct < 4);
    host_profile_default(&h);
    cal_residual res[40];
    assert_int_equal(fit_host(pts, n, 1, &h, NULL, &rep, res, err, sizeof err), 1);
    assert_true(rep.group[0].held_median_pct < 6);
    int held = 0;
    for (int i = 0; i < n; i++) {
        assert_int_equal(res[i].group, 0);
        assert_true(res[i].measured_s == pts[i].time_s && res[i].predicted_s > 0);
        held += res[i].held;
    }
    assert_int_equal(held, rep.group[0].n_held);
}

/* A collective measured only where it is all latency (the same 20 us at
 * 4 KiB to 64 KiB, as a busy machine's --quick sweep gave): its bandwidth
 * is a term the data cannot see, and the fit drove it to 4.5e38 B/s, a
 * value the profile reader refuses, so `validate` could not read the
 * profile `calibrate` wrote. It is now held at HOST_PARAM_MAX and the
 * profile it writes reads back. */
static void test_unseen_bandwidth(void **state) {
    (void)state;
    cal_point pts[8] = { 0 };
    int n = 0;
    for (double s = 4096; s <= 65536; s *= 2, n++) {
        pts[n] = (cal_point){ .c = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = s } };
        pts[n].time_s = 20e-6 * (1 + 0.001 * (n % 2));
    }
    host_profile h;
    host_profile_default(&h);
    cal_report rep;
    char err[256];
    double se[128];                          /* one per host_param_names() */
    fit_host(pts, n, 0, &h, se, &rep, NULL, err, sizeof err);
    const char *const *names = host_param_names();
    for (int i = 0; names[i]; i++)
        assert_true(host_param_get(&h, names[i]) >= 0 && host_param_get(&h, names[i]) <= HOST_PARAM_MAX);
    char path[] = "/tmp/ct-unseen-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(profile_write(f, &h, se, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(fclose(f), 0);
    host_profile back;
    int rc = profile_load(path, &back, err, sizeof err);
    if (rc != 0) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    unlink(path);
}

/* Every fitted value within its unit's physical bounds and larger than
 * its standard error (models/calibrate.h). */
static void assert_sane(const cal_report *rep) {
    for (int g = 0; g < rep->n_groups; g++)
        for (int k = 0; k < rep->group[g].n_params; k++) {
            const char *z = rep->group[g].param[k], *u = host_param_unit(z);
            double v = rep->group[g].value[k], se = rep->group[g].stderr_[k];
            if (!strcmp(u, "s") && !(v >= CAL_MIN_LATENCY_S && v <= CAL_MAX_LATENCY_S))
                fail_msg("%s = %g s", z, v);
            if (!strcmp(u, "B/s") && !(v >= CAL_MIN_BW && v <= CAL_MAX_BW)) fail_msg("%s = %g B/s", z, v);
            if (!(se <= v)) fail_msg("%s = %g +- %g", z, v, se);
        }
}

/* A copy measured from 64 KiB, where the call's fixed cost is lost in the
 * transfer: the latency is a term the data cannot see, and the fit drove
 * it to 3.2e-17 s (a real sweep gave 6.5e-47 s), below any clock cycle.
 * It is rejected with a message and the copy is fitted without it. */
static void test_absurd_copy_latency(void **state) {
    (void)state;
    host_profile t, h;
    host_profile_default(&t);
    t.copy_latency_s = 0;
    t.copy_l1_bw = 0;
    t.copy_cache_bw = 40e9;
    t.copy_cache_bytes = 8e6;
    t.copy_dram_bw = 10e9;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    cal_point pts[64] = { 0 };
    mb_prediction p;
    char why[64], err[128];
    for (unsigned long seed = 1; seed <= 3; seed++) {   /* seeds 2 and 3 gave 4e-16 and 3.2e-17 s */
        gsl_rng_set(r, seed);
        int n = 0;
        for (double s = 65536; s <= 268435456.0; s *= 1.4142135623730951, n++) {
            pts[n] = (cal_point){ .c = { .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = floor(s) } };
            assert_int_equal(host_predict(&t, &pts[n].c, &p, why, sizeof why), 0);
            pts[n].time_s = p.time_s * exp(gsl_ran_gaussian(r, 0.03));
        }
        cal_report rep;
        host_profile_default(&h);
        assert_int_equal(fit_host(pts, n, 1, &h, NULL, &rep, NULL, err, sizeof err), 1);
        printf("seed %lu: copy.latency_s %g, dram %g; %s\n", seed, h.copy_latency_s, h.copy_dram_bw, rep.group[0].note);
        assert_true(h.copy_latency_s == 0 || h.copy_latency_s >= CAL_MIN_LATENCY_S);
        assert_sane(&rep);
        assert_true(rel(h.copy_dram_bw, 10e9) < 0.10);
        assert_true(rep.group[0].held_median_pct < 5);
        if (seed >= 2) assert_non_null(strstr(rep.group[0].note, "rejected copy.latency_s"));
    }
    gsl_rng_free(r);
}

/* A send/recv whose rate falls past a knee near the top of the sweep (a
 * 40 MB cache, 6 GB/s inside, 2 GB/s behind it, 1 KiB..64 MiB, 4% noise):
 * for seed 6 the fit put the "cache" beyond every measured size and the
 * bandwidth behind it at a few hundred kB/s, which predicts hours for
 * 1 GiB (1.5e4 s; a real sweep gave 300 kB/s and 2,898 s) although every
 * measured size ran at GB/s. Such a model leaves the measured envelope and
 * is rejected; the one kept predicts 1 GiB at between 1/4 and 2x the
 * largest measured size's rate, or, when no model passes, the group keeps
 * the starting profile's values and says so. */
static void test_absurd_sendrecv_bandwidth(void **state) {
    (void)state;
    host_profile t, h;
    host_profile_default(&t);
    coll_op o = COLL_SENDRECV;
    t.coll_alpha_s[o] = 3e-6;
    t.coll_bw[o] = 2e9;
    t.coll_cache_bw[o] = 6e9;
    t.coll_cache_bytes[o] = 40e6;
    t.coll_cache_k[o] = 6;
    t.coll_rndv_alpha_s[o] = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    cal_point pts[40] = { 0 };
    mb_prediction p;
    char why[64], err[128];
    for (unsigned long seed = 1; seed <= 12; seed++) {   /* 6, 10, 11 and 12 gave 800-18,000 s for 1 GiB */
        gsl_rng_set(r, seed);
        int n = 0;
        for (double s = 1024; s <= 67108864.0; s *= 2, n++) {
            pts[n] = (cal_point){ .c = { .kind = MBC_COLLECTIVE, .op = o, .ranks = 2, .size_bytes = s } };
            assert_int_equal(host_predict(&t, &pts[n].c, &p, why, sizeof why), 0);
            pts[n].time_s = p.time_s * exp(gsl_ran_gaussian(r, 0.04));
        }
        double top_rate = pts[n - 1].c.size_bytes / pts[n - 1].time_s;
        cal_report rep;
        host_profile_default(&h);
        assert_int_equal(fit_host(pts, n, 1, &h, NULL, &rep, NULL, err, sizeof err), 1);
        mb_case big = { .kind = MBC_COLLECTIVE, .op = o, .ranks = 2, .size_bytes = 1073741824.0 };
        assert_int_equal(host_predict(&h, &big, &p, why, sizeof why), 0);
        printf("seed %lu: 1 GiB %.3g s (measured top rate %.3g B/s), bw %.3g; %s\n", seed, p.time_s, top_rate,
               h.coll_bw[o], rep.group[0].note);
        assert_true(p.time_s <= CAL_ENVELOPE * big.size_bytes / top_rate);
        /* A fitted model is no faster than 2x either; when every model
         * fails the checks the group keeps the starting profile's 5 GB/s
         * (the "catalog value"), which the note says. */
        int kept = strstr(rep.group[0].note, "kept the starting profile's values") != NULL;
        if (!kept) assert_true(p.time_s >= big.size_bytes / top_rate / CAL_ENVELOPE_UP);
        assert_true(h.coll_bw[o] >= CAL_MIN_BW);
        assert_sane(&rep);
        if (!kept) assert_true(rep.group[0].held_median_pct < 8);
    }
    gsl_rng_free(r);
}

/* A copy whose last-level cache falls off over 2x in size: the cache
 * level's sharpness is fitted, and the default generic k = 4 is kept when
 * the data do not call for another. */
static void test_sharp_cache(void **state) {
    (void)state;
    host_profile t, h;
    host_profile_default(&t);
    t.copy_l1_bw = 0;                          /* one cache level */
    t.copy_cache_bw = 45e9;
    t.copy_cache_bytes = 12 << 20;
    t.copy_dram_bw = 11e9;
    t.copy_cache_k = 7;
    t.copy_latency_s = 5e-8;
    cal_point pts[40] = { 0 };
    int n = 0;
    mb_prediction p;
    char why[64], err[128];
    for (double s = 4096; s <= 268435456.0; s *= 2, n++) {
        pts[n].c = (mb_case){ .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = s };
        assert_int_equal(host_predict(&t, &pts[n].c, &p, why, sizeof why), 0);
        pts[n].time_s = p.time_s;
    }
    cal_report rep;
    host_profile_default(&h);
    assert_int_equal(fit_host(pts, n, 0, &h, NULL, &rep, NULL, err, sizeof err), 1);
    assert_true(rel(h.copy_cache_k, 7) < 0.10);
    assert_true(rel(h.copy_cache_bytes, 12 << 20) < 0.05);
    assert_true(rep.group[0].fit_max_pct < 1);
}

/* Storage that starts slow and ramps up: the ramp is fitted when it ends
 * inside the measured sizes, and refused when the climb goes on past the
 * largest (its end bandwidth would be a guess). */
static void storage_points(const host_profile *t, cal_point *pts, int *n, unsigned long seed) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    mb_prediction p;
    char why[64];
    *n = 0;
    for (double kb = 1024; kb <= 131072 * (1 + 1e-9); kb *= 1.4142135623730951, (*n)++) {
        pts[*n].c = (mb_case){ .kind = MBC_STORAGE, .size_bytes = floor(kb + 0.5) * 1024, .files = 1 };
        assert_int_equal(host_predict(t, &pts[*n].c, &p, why, sizeof why), 0);
        pts[*n].time_s = p.time_s * exp(gsl_ran_gaussian(r, 0.02));
        pts[*n].read_s = host_storage_read_s(t, &pts[*n].c) * exp(gsl_ran_gaussian(r, 0.02));
    }
    gsl_rng_free(r);
}

static void test_storage_ramp(void **state) {
    (void)state;
    host_profile t, h;
    host_profile_default(&t);
    t.storage_latency_s = 2e-4;
    t.storage_write_bw = 1.4e9;                  /* a plain line */
    t.storage_read_latency_s = 1e-4;
    t.storage_read_bw = 3e9;
    t.storage_read_start_bw = 1.2e9;
    t.storage_read_ramp_bytes = 6e6;             /* ends well inside 1..128 MiB */
    cal_point pts[20] = { 0 };
    int n;
    storage_points(&t, pts, &n, 3);
    cal_report rep;
    char err[128];
    host_profile_default(&h);
    assert_int_equal(fit_host(pts, n, 1, &h, NULL, &rep, NULL, err, sizeof err), 2);
    assert_string_equal(rep.group[1].name, "storage.read");
    assert_true(h.storage_read_start_bw > 0);   /* the ramp was fitted */
    assert_true(rel(h.storage_read_bw, 3e9) < 0.15);
    assert_true(rep.group[1].held_median_pct < 4);
    assert_true(h.storage_write_start_bw == 0);  /* no ramp in the write: AIC keeps the line */
    assert_true(rel(h.storage_write_bw, 1.4e9) < 0.05);
    /* The groups are independent: a collective fitted after the storage
     * ramp is not judged by the ramp's sizes (a regression: every
     * collective fit was refused after a storage ramp was kept). */
    cal_point mix[40] = { 0 };
    memcpy(mix, pts, (size_t)n * sizeof *pts);
    int m = n;
    mb_prediction p;
    char why[64];
    for (double sz = 1024; sz <= 16777216.0; sz *= 4, m++) {
        mix[m] = (cal_point){ .c = { .kind = MBC_COLLECTIVE, .op = COLL_ALLGATHER, .ranks = 2, .size_bytes = sz } };
        assert_int_equal(host_predict(&t, &mix[m].c, &p, why, sizeof why), 0);
        mix[m].time_s = p.time_s;
    }
    host_profile_default(&h);
    assert_int_equal(fit_host(mix, m, 0, &h, NULL, &rep, NULL, err, sizeof err), 3);
    assert_true(h.storage_read_start_bw > 0);
    assert_string_equal(rep.group[2].name, "coll.allgather");
    assert_true(rep.group[2].ok);
    assert_true(rel(h.coll_bw[COLL_ALLGATHER], t.coll_bw[COLL_ALLGATHER]) < 0.05 ||
                rel(h.coll_cache_bw[COLL_ALLGATHER], t.coll_cache_bw[COLL_ALLGATHER]) < 0.05);
    /* A climb that has not levelled off by 128 MiB: no ramp, a line. */
    t.storage_read_ramp_bytes = 2e9;
    t.storage_read_bw = 20e9;
    storage_points(&t, pts, &n, 4);
    host_profile_default(&h);
    assert_int_equal(fit_host(pts, n, 0, &h, NULL, &rep, NULL, err, sizeof err), 2);
    assert_true(h.storage_read_start_bw == 0);
    assert_true(h.storage_read_bw < 3e9);       /* the bandwidth measured, not a guessed asymptote */
}

/* Several sessions of the same cases: the fastest of each case is kept,
 * reads too, distinct cases untouched and in their order. */
static void test_best_of(void **state) {
    (void)state;
    mb_case a = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = 1048576 };
    mb_case b = a, s = { .kind = MBC_STORAGE, .size_bytes = 1 << 20, .files = 1 };
    b.size_bytes = 2097152;
    cal_point p[] = {
        { .c = a, .time_s = 6e-4 }, { .c = b, .time_s = 3e-4 }, { .c = s, .time_s = 1e-3, .read_s = 5e-4 },
        { .c = a, .time_s = 1.4e-4 }, { .c = b, .time_s = 3.5e-4 }, { .c = s, .time_s = 2e-3, .read_s = 4e-4 },
    };
    assert_int_equal(calibrate_best_of(p, 6), 3);
    assert_true(p[0].c.size_bytes == 1048576 && p[0].time_s == 1.4e-4);
    assert_true(p[1].c.size_bytes == 2097152 && p[1].time_s == 3e-4);
    assert_true(p[2].time_s == 1e-3 && p[2].read_s == 4e-4);
    assert_int_equal(calibrate_best_of(p, 0), 0);
}

static void test_nothing_to_fit(void **state) {
    (void)state;
    host_profile h, before;
    host_profile_default(&h);
    before = h;
    cal_report rep;
    char err[256];
    cal_point p = { .c = { .kind = MBC_COPY, .copy = COPY_D2D, .size_bytes = 1e6 }, .time_s = 1e-4 };
    assert_int_equal(fit_host(&p, 1, 1, &h, NULL, &rep, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "no measured case"));
    assert_memory_equal(&h, &before, sizeof h);
    assert_int_equal(fit_host(NULL, 0, 1, &h, NULL, &rep, NULL, err, sizeof err), -1);
}

static void test_few_points(void **state) {
    (void)state;
    host_profile t, h;
    truth(&t);
    host_profile_default(&h);
    cal_point pts[3] = { 0 };
    mb_prediction p;
    char why[64], err[128];
    for (int i = 0; i < 3; i++) {
        pts[i].c = (mb_case){ .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = 1e8 * (i + 1) };
        host_predict(&t, &pts[i].c, &p, why, sizeof why);
        pts[i].time_s = p.time_s;
    }
    cal_report rep;
    assert_int_equal(fit_host(pts, 3, 0, &h, NULL, &rep, NULL, err, sizeof err), 1);
    assert_true(rep.group[0].n_params < 6);
    assert_non_null(strstr(rep.group[0].note, "fitted"));
    assert_true(rel(h.copy_dram_bw, t.copy_dram_bw) < 0.02);
}

/* ---- the cpu backend, for real ----------------------------------------- */

static void check_measurement(const mb_measurement *m) {
    assert_true(m->reps >= 3);
    assert_true(m->min_s > 0);
    assert_true(m->min_s <= m->q1_s && m->q1_s <= m->median_s && m->median_s <= m->q3_s && m->q3_s <= m->max_s);
    assert_true(m->time_s == m->min_s);          /* the default statistic: the fastest repetition */
}

static void test_cpu_backend(void **state) {
    (void)state;
    hw_opts o;
    hw_opts_default(&o);
    o.reps = 3;
    o.warmup = 1;
    o.budget_s = 0.05;
    o.min_rep_s = 1e-3;
    hw_backend *b;
    char err[256], why[256];
    assert_int_equal(hw_open("cpu", &o, &b, err, sizeof err), 0);
    const hw_env *e = hw_environment(b);
    assert_string_equal(e->backend, "cpu");
    assert_true(e->host[0] && e->cpu[0] && strstr(e->libraries, "CBLAS"));
    assert_int_equal(hw_rank(b), 0);

    mb_measurement m;
    mb_case c = { .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = 1 << 20 };
    assert_int_equal(hw_measure(b, &c, &m, why, sizeof why), HW_OK);
    check_measurement(&m);
    assert_true(m.iters >= 1);
    assert_true(rel(m.algbw_bytes_per_s, c.size_bytes / m.time_s) < 1e-9);
    /* a rate, measured: finite and positive (how high depends on the machine's load) */
    assert_true(isfinite(m.algbw_bytes_per_s) && m.algbw_bytes_per_s > 0);

    mb_case g = { .kind = MBC_GEMM, .m = 64, .n = 48, .k = 32, .precision = PREC_FP32 };
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_OK);
    check_measurement(&m);
    assert_true(rel(m.tflops, 2.0 * 64 * 48 * 32 / m.time_s / 1e12) < 1e-9);
    g.precision = PREC_FP64;
    assert_int_equal(hw_measure(b, &g, &m, why, sizeof why), HW_OK);

    char dir[64];
    snprintf(dir, sizeof dir, "build/tests/tmp-storage-%ld", (long)getpid());
    mb_case s = { .kind = MBC_STORAGE, .size_bytes = 2 << 20, .files = 2, .path = dir };
    assert_int_equal(hw_measure(b, &s, &m, why, sizeof why), HW_OK);
    check_measurement(&m);
    assert_true(m.read_s > 0);
    assert_int_equal(rmdir(dir), 0);          /* the files were removed */

    mb_measurement keep = { .time_s = 7 };
    mb_case d = { .kind = MBC_COPY, .copy = COPY_H2D, .size_bytes = 1 << 20 };
    assert_int_equal(hw_measure(b, &d, &keep, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "needs a GPU"));
    mb_case bf = { .kind = MBC_GEMM, .m = 8, .n = 8, .k = 8, .precision = PREC_BF16 };
    assert_int_equal(hw_measure(b, &bf, &keep, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "fp32 and fp64"));
    mb_case a = { .kind = MBC_COLLECTIVE, .op = COLL_ALLREDUCE, .ranks = 2, .size_bytes = 1024 };
    assert_int_equal(hw_measure(b, &a, &keep, why, sizeof why), HW_UNSUPPORTED);
    assert_non_null(strstr(why, "mpi"));
    assert_true(keep.time_s == 7);
    mb_case bad = { .kind = MBC_STORAGE, .size_bytes = 4096, .files = 1, .path = "/proc/no/such/dir" };
    assert_int_equal(hw_measure(b, &bad, &keep, why, sizeof why), HW_FAILED);
    assert_non_null(strstr(why, "/proc/no/such/dir"));
    hw_close(b);
    hw_close(NULL);
}

static void test_backends_unavailable(void **state) {
    (void)state;
    hw_backend *b = (hw_backend *)1;
    char err[256];
    assert_int_equal(hw_open("tpu", NULL, &b, err, sizeof err), -1);
    assert_null(b);
    assert_non_null(strstr(err, "unknown backend"));
    /* Not started by mpirun: the mpi backend says how to run it. */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK")) {
        assert_int_equal(hw_open("mpi", NULL, &b, err, sizeof err), -1);
        assert_non_null(strstr(err, "mpi"));
    }
}

static void test_stats(void **state) {
    (void)state;
    double x[] = { 5, 1, 4, 2, 3 };
    mb_measurement m = { 0 };
    hw_stats(x, 5, HW_STAT_MEDIAN, &m);
    assert_true(m.min_s == 1 && m.q1_s == 2 && m.time_s == 3 && m.q3_s == 4 && m.max_s == 5 && m.reps == 5);
    assert_true(m.median_s == 3);
    double x2[] = { 5, 1, 4, 2, 3 };
    hw_stats(x2, 5, HW_STAT_MIN, &m);
    assert_true(m.time_s == 1 && m.median_s == 3);
    double y[] = { 4, 1, 3, 2 };
    hw_stats(y, 4, HW_STAT_MEDIAN, &m);
    assert_true(m.time_s == 2.5 && m.q1_s == 1.75 && m.q3_s == 3.25);
    /* Rounds: a slow round (a burst of load) moves the median little and
     * the fastest repetition not at all. */
    mb_measurement r[3] = {
        { .time_s = 1.0, .median_s = 1.0, .min_s = 0.9, .q1_s = 0.95, .q3_s = 1.1, .max_s = 1.2, .reps = 5,
          .read_s = 2.0 },
        { .time_s = 9.0, .median_s = 9.0, .min_s = 8.0, .q1_s = 8.5, .q3_s = 9.5, .max_s = 10, .reps = 3,
          .read_s = 7.0 },
        { .time_s = 1.1, .median_s = 1.1, .min_s = 1.0, .q1_s = 1.05, .q3_s = 1.2, .max_s = 1.3, .reps = 4,
          .read_s = 2.5 },
    };
    mb_case c = { .kind = MBC_COPY, .copy = COPY_HOST, .size_bytes = 2e9 };
    hw_combine(r, 3, &c, HW_STAT_MEDIAN, &m);
    assert_true(m.time_s == 1.1 && m.median_s == 1.1 && m.min_s == 0.9 && m.max_s == 10 && m.reps == 12);
    assert_true(m.q1_s == 1.05 && m.q3_s == 1.2 && m.read_s == 2.5);
    assert_true(rel(m.algbw_bytes_per_s, 2e9 / 1.1) < 1e-12);
    hw_combine(r, 3, &c, HW_STAT_MIN, &m);
    assert_true(m.time_s == 0.9 && m.median_s == 1.1 && m.min_s == 0.9 && m.read_s == 2.0);
    assert_true(rel(m.algbw_bytes_per_s, 2e9 / 0.9) < 1e-12);
    assert_int_equal(hw_statistic_parse("min"), HW_STAT_MIN);
    assert_int_equal(hw_statistic_parse("median"), HW_STAT_MEDIAN);
    assert_int_equal(hw_statistic_parse("mean"), -1);
    assert_string_equal(hw_statistic_name(HW_STAT_MIN), "min");
    /* The core's peak: measured, never judged. How fast a timing loop runs
     * depends on the machine and on what else runs on it (a busy 2-core
     * machine, valgrind), so only what does not depend on speed is
     * asserted: both rates positive and finite, an instruction set named.
     * The fp32/fp64 ratio (about 2 on x86 vectors) is printed. */
    double p64 = 0, p32 = 0;
    char isa[32];
    assert_int_equal(cpupeak_measure(&p64, &p32, isa, sizeof isa), 0);
    assert_true(isfinite(p64) && p64 > 0 && isfinite(p32) && p32 > 0 && isa[0]);
    printf("cpupeak: %s, fp64 %.3g FLOP/s, fp32 %.3g FLOP/s, fp32/fp64 %.2f (measured, not asserted)\n", isa, p64,
           p32, p32 / p64);
    /* Linux: the load average per core is known and not negative. */
    assert_true(hw_load_per_core() >= 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict_by_hand),
        cmocka_unit_test(test_recover_noisy),
        cmocka_unit_test(test_recover_exact),
        cmocka_unit_test(test_model_choice),
        cmocka_unit_test(test_protocol_step),
        cmocka_unit_test(test_unseen_bandwidth),
        cmocka_unit_test(test_absurd_copy_latency),
        cmocka_unit_test(test_absurd_sendrecv_bandwidth),
        cmocka_unit_test(test_sharp_cache),
        cmocka_unit_test(test_storage_ramp),
        cmocka_unit_test(test_best_of),
        cmocka_unit_test(test_nothing_to_fit),
        cmocka_unit_test(test_few_points),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_cpu_backend),
        cmocka_unit_test(test_backends_unavailable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
