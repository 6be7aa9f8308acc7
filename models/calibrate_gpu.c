/*
 * calibrate_gpu: the GPU groups of calibrate (see calibrate_gpu.h).
 */
#include "models/calibrate_gpu.h"
#include "models/gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* "gpu.gemm.<precision>" for every precision, then the copies. */
static const char *gemm_group(precision p) {
    static char names[PREC_COUNT][24];
    if (p < 0 || p >= PREC_COUNT) return NULL;
    if (!names[p][0]) snprintf(names[p], sizeof names[p], "gpu.gemm.%s", precision_name(p));
    return names[p];
}

const char *const *calibrate_gpu_groups(void) {
    static const char *order[PREC_COUNT + 3];
    if (!order[0]) {
        order[0] = "gpu.copy";
        order[1] = "gpu.pcie";
        for (int p = 0; p < PREC_COUNT; p++) order[2 + p] = gemm_group((precision)p);
    }
    return order;
}

const char *calibrate_gpu_group(const mb_case *c) {
    /* A grouped GEMM checks the law the single GEMMs fit; it is not fitted. */
    if (c->kind == MBC_GEMM) return mb_groups(c) > 1 ? NULL : gemm_group(c->precision);
    if (c->kind != MBC_COPY) return NULL;
    return c->copy == COPY_D2D ? "gpu.copy" : c->copy == COPY_H2D || c->copy == COPY_D2H ? "gpu.pcie" : NULL;
}

double calibrate_gpu_predict_s(const cal_target *t, const mb_case *c) {
    fabric f;
    memset(&f, 0, sizeof f);
    f.gpu = &t->gpu;
    f.node = &t->node;
    mb_env env = { &f, NULL, 0 };
    mb_prediction p;
    return mb_predict(c, &env, &p) == 0 ? p.time_s : -1;
}

static double flops_of(const mb_case *c) { return mb_gemm_flops(c); }

/* gpu.gemm.P: eff from the largest GEMM, half_dim from the catalog's. */
static int gemm_params(const char *g, const cal_point *hi, const cal_target *t, const char **names, double *x0,
                       int *levels, int *nlevels) {
    static char buf[2][48];
    precision p = hi->c.precision;
    double peak = gpu_peak_flops(&t->gpu, p);
    double half = t->gpu.gemm_half_dim_by_prec[p] > 0 ? t->gpu.gemm_half_dim_by_prec[p]
                  : t->gpu.gemm_half_dim > 0      ? t->gpu.gemm_half_dim
                                                  : 256;
    snprintf(buf[0], sizeof buf[0], "%s.eff", g);
    snprintf(buf[1], sizeof buf[1], "%s.half_dim", g);
    names[0] = buf[0], x0[0] = peak > 0 ? flops_of(&hi->c) / hi->time_s / peak : 0.5;
    names[1] = buf[1], x0[1] = half;
    levels[0] = 0x1, levels[1] = 0x3, *nlevels = 2;
    return 2;
}

int calibrate_gpu_params(const char *g, const cal_point **pts, int n, const cal_target *t, const char **names,
                         double *x0, int *levels, int *nlevels) {
    const cal_point *lo = pts[0], *hi = pts[n - 1];
    *nlevels = 0;
    if (!strncmp(g, "gpu.gemm.", 9)) return gemm_params(g, hi, t, names, x0, levels, nlevels);
    if (!strcmp(g, "gpu.copy")) {
        double bw = t->gpu.hbm_bw_bytes_per_s > 0 ? t->gpu.hbm_bw_bytes_per_s : 1e12;
        names[0] = "gpu.hbm.eff", x0[0] = 2 * hi->c.size_bytes / hi->time_s / bw;
        names[1] = "gpu.copy.latency_s", x0[1] = lo->time_s * 0.5;
    } else if (!strcmp(g, "gpu.pcie")) {
        names[0] = "gpu.pcie.bw", x0[0] = hi->c.size_bytes / hi->time_s;
        names[1] = "gpu.pcie.latency_s", x0[1] = lo->time_s * 0.5;
    } else {
        return 0;
    }
    levels[0] = 0x3, *nlevels = 1;
    return 2;
}

int calibrate_gpu_check(const char *name, double v, char *why, size_t whylen) {
    const char *u = gpu_param_unit(name);
    double lo = 0, hi = CAL_MAX_EFF;                   /* .eff: above 0 */
    if (!strcmp(u, "s")) lo = CAL_MIN_LATENCY_S, hi = CAL_MAX_LATENCY_S;
    else if (!strcmp(u, "B/s")) lo = CAL_MIN_BW, hi = CAL_MAX_BW;
    else if (strstr(name, ".half_dim")) lo = CAL_MIN_HALF_DIM, hi = CAL_MAX_HALF_DIM;
    if ((lo > 0 ? v >= lo : v > 0) && v <= hi) return 1;
    if (lo == 0) snprintf(why, whylen, "above 0 and at most %g", hi);
    else snprintf(why, whylen, "from %g to %g%s%s", lo, hi, *u ? " " : "", u);
    return 0;
}

/* ---- which catalog GPU a device is ---------------------------------------- */

/* 1 when word (len n) occurs in z as a whole word (bounded by non-alnum). */
static int has_word(const char *z, const char *word, size_t n) {
    for (const char *p = z; (p = strstr(p, word)) != NULL; p++) {
        int before = p == z || !isalnum((unsigned char)p[-1]);
        if (before && (n == 0 || !isalnum((unsigned char)p[n]))) return 1;
    }
    return 0;
}

/* Whether catalog GPU name passes filter stage k for device text dev. */
static int passes(const char *name, const char *dev, int k) {
    if (k == 0) {                                      /* the family is a word of the device */
        size_t fam = strcspn(name, "-");
        char f[64];
        snprintf(f, sizeof f, "%.*s", (int)fam, name);
        return fam > 0 && has_word(dev, f, fam);
    }
    if (k == 1) {                                      /* the form factor */
        int nvl = has_word(dev, "NVL", 3), pcie = has_word(dev, "PCIe", 4);
        int n_nvl = strstr(name, "-NVL-") != NULL, n_pcie = strstr(name, "-PCIe-") != NULL;
        return nvl ? n_nvl : pcie ? n_pcie : !n_nvl && !n_pcie;
    }
    const char *gb = strrchr(name, '-');               /* the memory: "-80GB" against "80GB" */
    return gb && has_word(dev, gb + 1, strlen(gb + 1));
}

int calibrate_gpu_of_device(const catalog *cat, const char *devices, char *name, size_t len, char *err,
                            size_t errlen) {
    int n = catalog_count(cat, "gpu"), keep[64], nk = 0;
    for (int i = 0; i < n && nk < 64; i++)
        if (passes(((const gpu_spec *)catalog_at(cat, "gpu", i))->name, devices, 0)) keep[nk++] = i;
    for (int k = 1; k <= 2 && nk > 1; k++) {
        int m = 0;
        for (int i = 0; i < nk; i++)
            if (passes(((const gpu_spec *)catalog_at(cat, "gpu", keep[i]))->name, devices, k)) keep[m++] = keep[i];
        if (m > 0) nk = m;                             /* a filter that leaves none says nothing */
    }
    if (nk == 1) {
        snprintf(name, len, "%s", ((const gpu_spec *)catalog_at(cat, "gpu", keep[0]))->name);
        return 0;
    }
    char list[512] = "";
    for (int i = 0; i < nk; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", ((const gpu_spec *)catalog_at(cat, "gpu", keep[i]))->name);
    }
    snprintf(err, errlen, "device \"%.120s\" is %s of the catalog's GPUs%s%s: name it with --gpu", devices,
             nk ? "several" : "none", nk ? ": " : "", list);
    return -1;
}
