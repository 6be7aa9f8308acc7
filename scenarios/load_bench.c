/*
 * load_bench: <microbenchmarks> (collectives, GEMMs, copies and storage
 * writes to price, nccl-tests style, optionally on a <host-profile> of a
 * calibrated host instead of the catalog's GPUs) and <cost> (PUE, carbon,
 * electricity, owned or rented).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/load.h"
#include "scenarios/profile.h"

/* Microbenchmark sizes follow nccl-tests and CUDA samples, where 1K, 1M, 1G
 * mean 1024, 1024^2, 1024^3: "1KB" .. "8GB" give 1024 .. 8589934592 bytes
 * (CONTRACT.md's example prints 1073741824 for 1GB). Elsewhere KB is 1000. */
static int attr_bench_size(loader *L, const xmlNode *e, const char *attr, double *out, int required) {
    int rc = attr_unit(&L->x, e, attr, UNIT_SIZE, out, required, 1);
    if (rc <= 0) return rc;
    xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
    size_t n = v ? strlen((const char *)v) : 0;
    while (n && strchr(" \t", v[n - 1])) n--;
    static const char pre[] = "KMGTP";
    if (n >= 2 && v[n - 1] == 'B' && strchr(pre, v[n - 2]) && v[n - 2]) {
        int k = (int)(strchr(pre, v[n - 2]) - pre) + 1;
        *out = floor(*out * pow(1.024, k) + 0.5);
    }
    xmlFree(v);
    return rc;
}

/* The largest size a microbenchmark may move: 1 PB (1e15 bytes), far more
 * than any machine holds, and exact as a double and as a size_t. */
#define MAX_BENCH_BYTES 1e15

static void load_sizes(loader *L, const xmlNode *e, sc_microbench *b, double def_min, double def_max) {
    b->min_bytes = def_min;
    b->factor = 2;
    int has_min = attr_bench_size(L, e, "min-size", &b->min_bytes, 0);
    b->max_bytes = has_min > 0 ? b->min_bytes : def_max;
    attr_bench_size(L, e, "max-size", &b->max_bytes, 0);
    attr_unit(&L->x, e, "factor", UNIT_NUMBER, &b->factor, 0, 1);
    if (L->x.failed) return;
    if (b->max_bytes < b->min_bytes) xml_fail(&L->x, e, "max-size", "max-size must be >= min-size");
    else if (b->max_bytes > MAX_BENCH_BYTES) xml_fail(&L->x, e, "max-size", "max-size must be at most 1PB");
    else if (b->max_bytes > b->min_bytes && b->factor <= 1.0001)
        xml_fail(&L->x, e, "factor", "factor must be greater than 1");
    else if (b->max_bytes > b->min_bytes && log(b->max_bytes / b->min_bytes) / log(b->factor) > 200)
        xml_fail(&L->x, e, "factor", "more than 200 sizes from min-size to max-size; use a larger factor");
}

static int parse_coll_op(const char *z) { return coll_op_parse(z); }

/* algo= on a <collective>: at least one of the algorithms it forces must
 * serve the op on the case's group (ranks packed into the scenario's first
 * node type, as the prediction places them) on the cluster's network. */
static void check_case_algo(loader *L, const xmlNode *e, const sc_microbench *b) {
    const scenario *s = L->s;
    if (!b->algo_mask || !s->n_nodes || L->x.failed) return;
    const node_spec *nd = catalog_node(s->cat, s->nodes[0].type);
    fabric f;
    if (fabric_init(&f, s->cat, nd, (b->ranks + nd->gpus - 1) / nd->gpus) < 0) return;
    f.sharp = s->network.sharp;
    coll_group g = { b->ranks, b->ranks < nd->gpus ? b->ranks : nd->gpus, 1 };
    char why[160] = "", first[160] = "";
    for (int a = COLL_RING; a < COLL_ALGO_COUNT; a++) {
        if (!(b->algo_mask & (1u << a))) continue;
        if (coll_offered(&f, b->op, &g, (coll_algo)a, why, sizeof why)) return;
        if (!first[0]) snprintf(first, sizeof first, "%s", why);
    }
    xml_fail(&L->x, e, "algo", "%s (%s, %d ranks, %d per %s node)", first, coll_op_name(b->op), b->ranks,
             g.ranks_per_node, nd->name);
}

static void load_collective(loader *L, const xmlNode *e, sc_microbench *b) {
    scenario *s = L->s;
    int v;
    b->kind = MB_COLLECTIVE;
    if (attr_enum(&L->x, e, "op", parse_coll_op, "allreduce, allgather, reducescatter, alltoall, broadcast, sendrecv", &v) > 0)
        b->op = (coll_op)v;
    int node_gpus = s->n_nodes ? catalog_node(s->cat, s->nodes[0].type)->gpus : 8;
    b->ranks = node_gpus;
    attr_int(&L->x, e, "ranks", &b->ranks, 0, 2, 100000000);
    if (!L->x.failed && !s->host_profile && b->ranks > L->cluster_gpus)
        xml_fail(&L->x, e, "ranks", "ranks must be at most the cluster's %lld GPUs", L->cluster_gpus);
    if (attr_enum(&L->x, e, "algo", loader_parse_nccl_algo, NCCL_ALGO_CHOICES, &v) > 0)
        b->algo_mask = (unsigned)v;
    if (attr_enum(&L->x, e, "protocol", loader_parse_nccl_proto, "auto, ll, ll128, simple", &v) > 0)
        b->proto_mask = (unsigned)v;
    if (!s->host_profile) check_case_algo(L, e, b);
    load_sizes(L, e, b, 8, 128 << 20);
}

void load_cost(loader *L, const xmlNode *e) {
    sc_cost *c = &L->s->cost;
    c->line = xml_line(&L->x, e);
    if (attr_unit(&L->x, e, "pue", UNIT_NUMBER, &c->pue, 0, 1) > 0 && (c->pue < 1 || c->pue > 3))
        xml_fail(&L->x, e, "pue", "pue must be from 1 (no overhead) to 3");
    attr_unit(&L->x, e, "carbon-per-kwh", UNIT_NUMBER, &c->carbon_kg_per_kwh, 0, 0);
    if (!L->x.failed && c->carbon_kg_per_kwh > 2)
        xml_fail(&L->x, e, "carbon-per-kwh", "carbon-per-kwh is kg CO2 per kWh, from 0 to 2 (coal is about 1)");
    attr_unit(&L->x, e, "electricity-price", UNIT_NUMBER, &c->electricity_usd_per_kwh, 0, 0);
    if (!L->x.failed && c->electricity_usd_per_kwh > 5)
        xml_fail(&L->x, e, "electricity-price", "electricity-price is USD per kWh, from 0 to 5");
    attr_bool(&L->x, e, "owned", &c->owned);
}

/* <host-profile>: the cases run on a host (models/host.h), not on GPUs. */
static void load_host_profile(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    if (s->host_profile) FAIL_RETURN(L, e, NULL, "one <host-profile> per scenario");
    if (!(s->host_profile = malloc(sizeof *s->host_profile))) FAIL_RETURN(L, e, NULL, "out of memory");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", L->x.file);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    gpu_profile g;
    if (profile_from_element(e, L->x.file, dir, s->host_profile, &g, L->x.err, L->x.errlen) < 0) {
        L->x.failed = 1;
        return;
    }
    char why[400];                   /* a profile file's <gpu-profile>: the GPU's calibrated values */
    if (profile_apply_gpu(s, &g, why, sizeof why) < 0) {
        if (xmlHasProp(e, BAD_CAST "href")) FAIL_RETURN(L, e, "href", "%s", why);     /* the line is in the other file */
        xml_fail_at(&L->x, g.line, "%s", why);
    }
}

void load_microbenchmarks(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next)
        if (xml_is(e, "host-profile")) load_host_profile(L, e);
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next) {
        if (e->type != XML_ELEMENT_NODE || xml_is(e, "host-profile")) continue;
        sc_microbench *b = PUSH(L, s->microbench, s->n_microbench, e);
        if (!b) return;
        int v;
        b->line = xml_line(&L->x, e);
        b->precision = PREC_BF16;
        if (xml_is(e, "collective")) {
            load_collective(L, e, b);
        } else if (xml_is(e, "gemm")) {
            b->kind = MB_GEMM;
            attr_int(&L->x, e, "m", &b->m, 1, 1, 1 << 20);
            attr_int(&L->x, e, "n", &b->n, 1, 1, 1 << 20);
            attr_int(&L->x, e, "k", &b->k, 1, 1, 1 << 20);
            b->groups = 1;
            attr_int(&L->x, e, "groups", &b->groups, 0, 1, 4096);
            if (attr_enum(&L->x, e, "precision", precision_parse, "fp64, fp32, tf32, bf16, fp16, fp8", &v) > 0)
                b->precision = (precision)v;
        } else if (xml_is(e, "copy")) {
            b->kind = MB_COPY;
            attr_str(&L->x, e, "kind", b->copy_kind, sizeof b->copy_kind, 1);
            load_sizes(L, e, b, 1 << 20, 1 << 20);
        } else if (xml_is(e, "storage-write")) {
            b->kind = MB_STORAGE_WRITE;
            attr_bench_size(L, e, "size", &b->size_bytes, 1);
            b->files = 1;
            attr_int(&L->x, e, "files", &b->files, 0, 1, 4096);
            /* The size becomes a byte count of memory and disk (hw/): 1e30B
             * wrapped to 1 byte and reported 1.4e26 GB/s. */
            if (!L->x.failed && b->size_bytes > MAX_BENCH_BYTES)
                xml_fail(&L->x, e, "size", "size must be at most 1PB (a machine holds no more)");
            else if (!L->x.failed && b->size_bytes < b->files)
                xml_fail(&L->x, e, "size", "size must be at least one byte per file (%d files)", b->files);
            strcpy(b->path, "out/ckpt-bench");
            attr_str(&L->x, e, "path", b->path, sizeof b->path, 0);
        }
    }
}
