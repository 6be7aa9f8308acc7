/*
 * benchset: the microbenchmark registry of hardware mode (see benchset.h).
 * One record per case, in scenario order, each size of a sweep its own
 * case; a few hundred cases at most.
 */
#include "sim/benchset.h"

#include <stdio.h>
#include <stdlib.h>

#define MAX_SIZES 256

typedef struct entry {
    mb_case c;
    mb_prediction pred;
    int priced;                    /* pred holds a prediction */
    int measured;                  /* meas holds a measurement */
    mb_measurement meas;
    char note[256];
} entry;

struct benchset {
    entry *v;
    int n;
    host_profile *host;            /* NULL: cases priced by the GPU models */
    mb_hardware *hw;
};

static int sweeps(const sc_microbench *b) { return b->kind == MB_COLLECTIVE || b->kind == MB_COPY; }

/* The cases of one <microbenchmark> element before its sizes: *sizes gets
 * the sizes it sweeps, and the count is returned. */
static int case_of(const sc_microbench *b, mb_case *c, double *sizes) {
    *c = (mb_case){ 0 };
    c->precision = b->precision;
    sizes[0] = b->size_bytes;
    switch (b->kind) {
    case MB_COLLECTIVE:
        c->kind = MBC_COLLECTIVE;
        c->op = b->op;
        c->ranks = b->ranks;
        c->algo_mask = b->algo_mask;
        c->proto_mask = b->proto_mask;
        break;
    case MB_GEMM:
        c->kind = MBC_GEMM;
        c->m = b->m;
        c->n = b->n;
        c->k = b->k;
        c->groups = b->groups;
        break;
    case MB_COPY:
        c->kind = MBC_COPY;
        c->copy = (copy_kind)copy_kind_parse(b->copy_kind);
        break;
    case MB_STORAGE_WRITE:
        c->kind = MBC_STORAGE;
        c->files = b->files;
        c->path = b->path;
        break;
    }
    return sweeps(b) ? mb_sizes(b->min_bytes, b->max_bytes, b->factor, sizes, MAX_SIZES) : 1;
}

benchset *benchset_new(const scenario *s, const fabric *f) {
    benchset *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    double sizes[MAX_SIZES];
    int n = 0;
    for (int i = 0; i < s->n_microbench; i++) {
        const sc_microbench *m = &s->microbench[i];
        n += sweeps(m) ? mb_sizes(m->min_bytes, m->max_bytes, m->factor, sizes, MAX_SIZES) : 1;
    }
    if (n == 0) return b;
    if (!(b->v = calloc((size_t)n, sizeof *b->v))) {
        free(b);
        return NULL;
    }
    mb_env env = { f, NULL, 0 };
    if (s->n_storage > 0) {
        env.storage = catalog_storage(s->cat, s->storage[0].kind);
        env.storage_bw_bytes_per_s = s->storage[0].bw_bytes_per_s;
    }
    for (int i = 0; i < s->n_microbench; i++) {
        mb_case c;
        int ns = case_of(&s->microbench[i], &c, sizes);
        for (int k = 0; k < ns; k++) {
            entry *e = &b->v[b->n++];
            e->c = c;
            e->c.size_bytes = sizes[k];
            e->priced = mb_predict(&e->c, &env, &e->pred) == 0;
        }
    }
    if (s->host_profile) benchset_use_host(b, s->host_profile);
    return b;
}

void benchset_free(benchset *b) {
    if (!b) return;
    free(b->v);
    free(b->host);
    free(b->hw);
    free(b);
}

static int in_range(const benchset *b, int i) { return i >= 0 && i < b->n; }

int benchset_count(const benchset *b) { return b->n; }

const mb_case *benchset_case(const benchset *b, int i) { return in_range(b, i) ? &b->v[i].c : NULL; }

const mb_prediction *benchset_prediction(const benchset *b, int i) {
    return in_range(b, i) && b->v[i].priced ? &b->v[i].pred : NULL;
}

void benchset_use_host(benchset *b, const host_profile *h) {
    if (!b->host && !(b->host = malloc(sizeof *b->host))) return;
    *b->host = *h;
    for (int i = 0; i < b->n; i++) {
        entry *e = &b->v[i];
        e->note[0] = 0;
        e->priced = host_predict(h, &e->c, &e->pred, e->note, sizeof e->note) == 0;
    }
}

const host_profile *benchset_host(const benchset *b) { return b->host; }

int benchset_set_measured(benchset *b, int i, const mb_measurement *m, const char *note) {
    if (!in_range(b, i)) return -1;
    entry *e = &b->v[i];
    e->measured = m != NULL;
    if (m) e->meas = *m;
    if (note) snprintf(e->note, sizeof e->note, "%s", note);
    return 0;
}

const mb_measurement *benchset_measured(const benchset *b, int i) {
    return in_range(b, i) && b->v[i].measured ? &b->v[i].meas : NULL;
}

const char *benchset_note(const benchset *b, int i) { return in_range(b, i) ? b->v[i].note : ""; }

void benchset_set_hardware(benchset *b, const mb_hardware *hw) {
    if (!b->hw && !(b->hw = malloc(sizeof *b->hw))) return;
    *b->hw = *hw;
}

const mb_hardware *benchset_hardware(const benchset *b) { return b->hw; }
