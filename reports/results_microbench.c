/*
 * results_microbench: microbenchmark cases for the terminal (see
 * results_microbench.h). Collectives as nccl-tests prints them:
 *
 *   # allreduce, 8 ranks: busbw = algbw x 2(n-1)/n
 *   #       size         count      type     time   algbw   busbw  model
 *   #        (B)    (elements)               (us)  (GB/s)  (GB/s)
 *            1024           256     float    25.32    0.04    0.07  ring/LL
 *
 * size is the nccl-tests size (the whole buffer of an all-gather), count
 * its elements of nccl-tests' default type, float (the model prices bytes,
 * not types), time in microseconds with nccl-tests' precision, GB = 1e9
 * bytes. With a backend's measurements a measured block (time, algbw,
 * busbw) and the error follow the predicted one.
 */
#include "reports/results_microbench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "sim/benchset.h"

#define NCCL_TYPE "float"
#define NCCL_TYPE_BYTES 4.0

static int cmp_abs(const void *a, const void *b) {
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

int results_microbench_errors(const world *w, double *median_abs_pct, double *max_abs_pct) {
    const benchset *b = world_benchset(w);
    int n = benchset_count(b), k = 0;
    double *e = n > 0 ? malloc((size_t)n * sizeof *e) : NULL;
    *median_abs_pct = *max_abs_pct = 0;
    for (int i = 0; e && i < n; i++) {
        const mb_prediction *p = benchset_prediction(b, i);
        const mb_measurement *m = benchset_measured(b, i);
        if (p && m && m->time_s > 0) e[k++] = fabs(mb_error_pct(p->time_s, m->time_s));
    }
    if (k > 0) {
        qsort(e, (size_t)k, sizeof *e, cmp_abs);
        *median_abs_pct = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
        *max_abs_pct = e[k - 1];
    }
    free(e);
    return k;
}

/* ---- Collectives: nccl-tests columns ------------------------------------ */

/* nccl-tests' time column: fewer decimals as the time grows. */
static const char *usec(double s, char *buf, size_t len) {
    double us = s * 1e6;
    snprintf(buf, len, us >= 10000.0 ? "%.0f" : us >= 100.0 ? "%.1f" : "%.2f", us);
    return buf;
}

static const char *gbps(double bytes_per_s, char *buf, size_t len) {
    snprintf(buf, len, "%.2f", bytes_per_s / 1e9);
    return buf;
}

/* The bus-bandwidth factor as nccl-tests' PERFORMANCE.md writes it
 * (models/collective.c coll_busbw_factor computes it). */
static const char *busbw_rule(coll_op op) {
    switch (op) {
    case COLL_ALLREDUCE: return "2(n-1)/n";
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER:
    case COLL_ALLTOALL: return "(n-1)/n";
    default: return "1";
    }
}

static void collective_header(FILE *f, const mb_case *c, int measured) {
    fprintf(f, "\n# %s, %d ranks: busbw = algbw x %s = %.3g x algbw\n", coll_op_name(c->op), c->ranks,
            busbw_rule(c->op), coll_busbw_factor(c->op, c->ranks));
    if (measured) {
        fprintf(f, "# %10s  %12s  %8s  %-23s  %s\n", "", "", "", "       predicted", "       measured");
        fprintf(f, "# %10s  %12s  %8s  %7s  %6s  %6s  %7s  %6s  %6s  %6s  %s\n", "size", "count", "type", "time",
                "algbw", "busbw", "time", "algbw", "busbw", "error", "model");
        fprintf(f, "# %10s  %12s  %8s  %7s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "(us)",
                "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "(GB/s)", "(%)");
    } else {
        fprintf(f, "# %10s  %12s  %8s  %7s  %6s  %6s  %s\n", "size", "count", "type", "time", "algbw", "busbw",
                "model");
        fprintf(f, "# %10s  %12s  %8s  %7s  %6s  %6s\n", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)");
    }
}

static void collective_row(FILE *f, const benchset *b, int i, int measured) {
    const mb_case *c = benchset_case(b, i);
    const mb_prediction *p = benchset_prediction(b, i);
    const mb_measurement *m = benchset_measured(b, i);
    const char *note = benchset_note(b, i);
    char pt[32] = "-", pa[32] = "-", pb[32] = "-", mt[32] = "-", ma[32] = "-", mbw[32] = "-", er[32] = "-";
    if (p) {
        usec(p->time_s, pt, sizeof pt);
        gbps(p->algbw_bytes_per_s, pa, sizeof pa);
        gbps(p->busbw_bytes_per_s, pb, sizeof pb);
    }
    if (m && m->time_s > 0) {
        usec(m->time_s, mt, sizeof mt);
        gbps(m->algbw_bytes_per_s, ma, sizeof ma);
        gbps(m->busbw_bytes_per_s, mbw, sizeof mbw);
        if (p) snprintf(er, sizeof er, "%+.1f", mb_error_pct(p->time_s, m->time_s));
    }
    fprintf(f, "%12.0f  %12.0f  %8s  %7s  %6s  %6s", c->size_bytes, floor(c->size_bytes / NCCL_TYPE_BYTES),
            NCCL_TYPE, pt, pa, pb);
    if (measured) fprintf(f, "  %7s  %6s  %6s  %6s", mt, ma, mbw, er);
    const char *model = p && p->detail ? p->detail : "";
    fprintf(f, "  %s%s%s%s\n", model, p && p->fallback ? " (fallback: forced algorithm not offered)" : "",
            *note ? (*model ? "; " : "") : "", note);
}

/* One block per run of consecutive cases of the same op and ranks, as
 * nccl-tests prints one per binary and rank count. */
static void collectives(FILE *f, const benchset *b, int measured) {
    const mb_case *prev = NULL;
    for (int i = 0; i < benchset_count(b); i++) {
        const mb_case *c = benchset_case(b, i);
        if (c->kind != MBC_COLLECTIVE) continue;
        if (!prev || prev->op != c->op || prev->ranks != c->ranks) collective_header(f, c, measured);
        collective_row(f, b, i, measured);
        prev = c;
    }
}

/* ---- GEMMs, copies, storage ---------------------------------------------- */

/* The rate of a case as a person reads it: FLOP/s for a GEMM, bytes per
 * second otherwise. */
static const char *rate(const mb_case *c, double algbw, double tflops, char *buf, size_t len) {
    return c->kind == MBC_GEMM ? nf_si(tflops * 1e12, "FLOP/s", buf, len) : nf_si(algbw, "B/s", buf, len);
}

/* z right-aligned in width columns: numfmt writes "µ", two bytes in one
 * column, which printf's widths count twice. */
static void cell(FILE *f, const char *z, int width) {
    int cols = 0;
    for (const char *s = z; *s; s++) cols += ((unsigned char)*s & 0xC0) != 0x80;
    fprintf(f, " %*s%s", width > cols ? width - cols : 0, "", z);
}

static void others(FILE *f, const benchset *b, int measured) {
    int n = benchset_count(b), header = 0;
    for (int i = 0; i < n; i++) {
        const mb_case *c = benchset_case(b, i);
        if (c->kind == MBC_COLLECTIVE) continue;
        if (!header) {
            fprintf(f, "\n%-32s %12s %14s", "case", "predicted", "rate");
            if (measured) fprintf(f, " %12s %14s %8s", "measured", "rate", "error");
            fprintf(f, "  %s\n", "model / note");
            header = 1;
        }
        const mb_prediction *p = benchset_prediction(b, i);
        const mb_measurement *m = benchset_measured(b, i);
        char label[96], ps[32] = "-", ms[32] = "-", pr[32] = "-", mr[32] = "-", er[32] = "-";
        mb_case_label(c, label, sizeof label);
        if (p) {
            nf_duration(p->time_s, ps, sizeof ps);
            rate(c, p->algbw_bytes_per_s, p->tflops, pr, sizeof pr);
        }
        if (m && m->time_s > 0) {
            nf_duration(m->time_s, ms, sizeof ms);
            rate(c, m->algbw_bytes_per_s, m->tflops, mr, sizeof mr);
            if (p) snprintf(er, sizeof er, "%+.1f%%", mb_error_pct(p->time_s, m->time_s));
        }
        fprintf(f, "%-32s", label);
        cell(f, ps, 12);
        cell(f, pr, 14);
        if (measured) {
            cell(f, ms, 12);
            cell(f, mr, 14);
            cell(f, er, 8);
        }
        const char *note = benchset_note(b, i), *model = p && p->detail ? p->detail : "";
        fprintf(f, "  %s%s%s\n", model, *note ? (*model ? "; " : "") : "", note);
    }
}

/* ---- Errors --------------------------------------------------------------- */

/* The error summary over every kind, then by kind when there is more than
 * one. */
static void error_summary(FILE *f, const world *w) {
    const benchset *b = world_benchset(w);
    int n = benchset_count(b);
    double med, mx;
    int k = results_microbench_errors(w, &med, &mx);
    if (k == 0) return;
    fprintf(f, "\n%d cases predicted and measured: median |error| %.1f%%, max |error| %.1f%%\n", k, med, mx);
    static const char *const kinds[] = { "collectives", "GEMM", "copies", "storage" };
    double *e = malloc((size_t)n * sizeof *e);
    for (int kind = 0; e && kind < 4; kind++) {
        int ne = 0;
        for (int i = 0; i < n; i++) {
            const mb_case *c = benchset_case(b, i);
            const mb_prediction *p = benchset_prediction(b, i);
            const mb_measurement *m = benchset_measured(b, i);
            if ((int)c->kind == kind && p && m && m->time_s > 0) e[ne++] = mb_error_pct(p->time_s, m->time_s);
        }
        if (ne == 0) continue;
        if (ne == k) break;            /* one kind only: the line above says it */
        qsort(e, (size_t)ne, sizeof *e, cmp_abs);
        double md = ne % 2 ? fabs(e[ne / 2]) : (fabs(e[ne / 2 - 1]) + fabs(e[ne / 2])) / 2;
        fprintf(f, "  %-12s %3d cases: median |error| %.1f%%, max |error| %.1f%%\n", kinds[kind], ne, md,
                fabs(e[ne - 1]));
    }
    free(e);
}

void results_microbench_table(FILE *f, const world *w) {
    const benchset *b = world_benchset(w);
    int n = benchset_count(b), measured = 0;
    if (n == 0) return;
    for (int i = 0; i < n && !measured; i++) measured = benchset_measured(b, i) != NULL;
    char z[64];
    fprintf(f, "\nmicrobenchmarks: %s, %s\n", nf_qty(n, "case", "cases", z, sizeof z),
            measured ? "predicted by the cost models and measured" : "predicted by the cost models");
    collectives(f, b, measured);
    others(f, b, measured);
    error_summary(f, w);
}
