/*
 * test_catalog: the built-in catalog and the XML loader (scenarios/catalog_xml).
 *
 * The built-in data must hold the names CONTRACT.md promises and the vendor
 * peaks of /work/shared/validation/hardware_peaks.csv (NVIDIA datasheets),
 * copied here so the test runs without that file:
 *
 *   gpu             bf16  fp8   HBM GB  HBM TB/s  NVLink GB/s total  TDP W
 *   A100-SXM4-40GB  312   -     40      1.555     600                400
 *   A100-SXM4-80GB  312   -     80      2.039     600                400
 *   H100-SXM5-80GB  989   1979  80      3.35      900                700
 *   H200-SXM-141GB  989   1979  141     4.8       900                700
 *
 * (NVLink totals are both directions; node_spec stores one direction.) The
 * catalog holds HBM as the driver reports it (nvidia-smi memory.total in MiB:
 * 40960, 81920, 81559, 143771), the marketed "GB" being binary; parts with no
 * such listing keep the marketed figure in decimal GB.
 * The loader's error cases run on small XML texts; each must fail with the
 * file, the line, the element and what was expected, and leave the catalog
 * as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "models/catalog.h"
#include "scenarios/catalog_xml.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MIB 1048576.0 /* nvidia-smi lists memory.total in MiB (models/catalog/gpus.xml "hbm") */
static const char *const kinds[] = { "gpu", "nic", "node", "storage", "llm" };

static catalog *builtin(void) {
    catalog *c = catalog_new();
    char err[1024] = "";
    assert_non_null(c);
    if (catalog_load_builtin(c, err, sizeof err) != 0) {
        print_error("catalog_load_builtin: %s\n", err);
        fail();
    }
    return c;
}

static int load(catalog *c, const char *xml, char *err, size_t errlen) {
    return catalog_load_memory(c, xml, strlen(xml), "t.xml", err, errlen);
}

static void load_ok(catalog *c, const char *xml) {
    char err[1024] = "";
    if (load(c, xml, err, sizeof err) != 0) {
        print_error("load failed: %s\n", err);
        fail();
    }
}

/* The load must fail with an err containing every one of want[] (up to a
 * NULL) and leave the catalog with the same entries. */
static void load_bad(const char *xml, const char *want, const char *want2) {
    catalog *c = builtin();
    int before[N(kinds)];
    char err[2048] = "";
    for (size_t k = 0; k < N(kinds); k++) before[k] = catalog_count(c, kinds[k]);
    const gpu_spec *h = catalog_gpu(c, "H100-SXM5-80GB");
    gpu_spec h100 = *h;

    int rc = load(c, xml, err, sizeof err);
    if (rc == 0) print_error("accepted:\n%s\n", xml);
    assert_int_equal(rc, -1);
    if (strncmp(err, "t.xml:", 6) != 0 || (want && !strstr(err, want)) || (want2 && !strstr(err, want2))) {
        print_error("err \"%s\"\n  want \"%s\" and \"%s\"\n", err, want, want2 ? want2 : "");
        fail();
    }
    for (size_t k = 0; k < N(kinds); k++) assert_int_equal(catalog_count(c, kinds[k]), before[k]);
    assert_memory_equal(catalog_gpu(c, "H100-SXM5-80GB"), &h100, sizeof h100);
    assert_null(catalog_gpu(c, "new-gpu"));
    catalog_free(c);
}

/* A valid GPU entry with one attribute's text replaced, for error cases. */
#define GPU_OK "name=\"new-gpu\" bf16-tflops=\"100\" hbm=\"16GB\" hbm-bw=\"1TB/s\" tdp=\"300\""

/* ---- The built-in catalog ------------------------------------------------ */

static void test_builtin_names(void **state) {
    (void)state;
    catalog *c = builtin();
    static const char *gpus[] = { "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB" };
    static const char *nodes[] = { "dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "hgx-h200" };
    static const char *llms[] = { "gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b",
                                  "llama3-70b", "llama3-405b", "llama3.1-8b", "llama3.3-70b", "mixtral-8x7b",
                                  "opt-13b" };
    static const char *nics[] = { "hdr-200", "ndr-400", "eth-100g", "eth-200g" };
    static const char *storage[] = { "nfs", "parallel-fs", "object" };
    for (size_t i = 0; i < N(gpus); i++) assert_non_null(catalog_gpu(c, gpus[i]));
    for (size_t i = 0; i < N(nodes); i++) {
        const node_spec *n = catalog_node(c, nodes[i]);
        assert_non_null(n);
        assert_int_equal(n->gpus, 8);     /* CONTRACT.md: 8 GPUs each */
    }
    for (size_t i = 0; i < N(llms); i++) assert_non_null(catalog_llm(c, llms[i]));
    for (size_t i = 0; i < N(nics); i++) assert_non_null(catalog_nic(c, nics[i]));
    for (size_t i = 0; i < N(storage); i++) assert_non_null(catalog_storage(c, storage[i]));

    /* B200 and MI300X, whatever their exact suffix. */
    int b200 = 0, mi300x = 0;
    for (int i = 0; i < catalog_count(c, "gpu"); i++) {
        const gpu_spec *g = catalog_at(c, "gpu", i);
        b200 += strncmp(g->name, "B200", 4) == 0;
        mi300x += strncmp(g->name, "MI300X", 6) == 0;
    }
    assert_true(b200 >= 1);
    assert_true(mi300x >= 1);
    catalog_free(c);
}

static void test_builtin_peaks(void **state) {
    (void)state;
    static const struct {
        const char *gpu, *node;
        double bf16, fp8, hbm, hbm_tbps, nvlink_total_gbps, tdp;
    } t[] = {
        { "A100-SXM4-40GB", "dgx-a100-40gb", 312, 0, 40960 * MIB, 1.555, 600, 400 },
        { "A100-SXM4-80GB", "dgx-a100-80gb", 312, 0, 81920 * MIB, 2.039, 600, 400 },
        { "H100-SXM5-80GB", "dgx-h100", 989, 1979, 81559 * MIB, 3.35, 900, 700 },
        { "H200-SXM-141GB", "hgx-h200", 989, 1979, 143771 * MIB, 4.8, 900, 700 },
    };
    catalog *c = builtin();
    for (size_t i = 0; i < N(t); i++) {
        const gpu_spec *g = catalog_gpu(c, t[i].gpu);
        const node_spec *n = catalog_node(c, t[i].node);
        assert_non_null(g);
        assert_non_null(n);
        /* Units are parsed exactly: "3.35TB/s" is the double nearest 3.35e12. */
        assert_true(g->tflops[PREC_BF16] == t[i].bf16);
        assert_true(g->tflops[PREC_FP8] == t[i].fp8);
        assert_true(g->hbm_bytes == t[i].hbm);
        assert_true(fabs(g->hbm_bw_bytes_per_s - t[i].hbm_tbps * 1e12) <= 1e-12 * g->hbm_bw_bytes_per_s);
        assert_true(g->tdp_w == t[i].tdp);
        assert_true(fabs(n->nvlink_bw_bytes_per_s - t[i].nvlink_total_gbps / 2 * 1e9) < 1);
        assert_string_equal(n->gpu, t[i].gpu);
        assert_true(g->eff_gemm > 0 && g->eff_gemm <= 1);
        assert_true(g->eff_hbm > 0 && g->eff_hbm <= 1);
    }
    /* The brief's figures, spelled out. */
    const gpu_spec *h = catalog_gpu(c, "H100-SXM5-80GB");
    assert_true(h->tflops[PREC_BF16] == 989);
    assert_true(h->hbm_bw_bytes_per_s == 3.35e12);
    assert_true(h->hbm_bytes == 81559 * MIB);
    catalog_free(c);
}

/* Hopper variants (models/catalog/gpus.xml gives each figure's source):
 * gpu, node, bf16 dense, HBM GB and TB/s, default limit and board max (W),
 * NVLink total GB/s (0: no node type). Every board's default limit is at
 * most its max, and a board whose default is below the limit its
 * eff-sustained was measured at is the 96 GB SXM5's 500 of 700 W. */
static void test_builtin_variants(void **state) {
    (void)state;
    static const struct {
        const char *gpu, *node;
        double bf16, hbm, hbm_tbps, tdp, max_w, nvlink_total_gbps;
    } t[] = {
        { "H100-SXM5-96GB", "hgx-h100-96gb", 989, 96e9, 2.4, 500, 700, 900 },
        { "H100-NVL-94GB", NULL, 835.5, 94e9, 3.9, 400, 400, 0 },
        { "H100-PCIe-80GB", NULL, 756, 80e9, 2.0, 350, 350, 0 },
        { "H800-SXM5-80GB", "hgx-h800", 989, 81559 * MIB, 3.35, 700, 0, 400 },
        { "H20-96GB", "hgx-h20", 148, 96e9, 4.0, 400, 400, 900 },
    };
    catalog *c = builtin();
    for (size_t i = 0; i < N(t); i++) {
        const gpu_spec *g = catalog_gpu(c, t[i].gpu);
        assert_non_null(g);
        assert_true(g->tflops[PREC_BF16] == t[i].bf16);
        assert_true(g->hbm_bytes == t[i].hbm);
        assert_true(fabs(g->hbm_bw_bytes_per_s - t[i].hbm_tbps * 1e12) <= 1e-12 * g->hbm_bw_bytes_per_s);
        assert_true(g->tdp_w == t[i].tdp && g->max_power_w == t[i].max_w);
        if (!t[i].node) continue;
        const node_spec *n = catalog_node(c, t[i].node);
        assert_non_null(n);
        assert_string_equal(n->gpu, t[i].gpu);
        assert_int_equal(n->gpus, 8);
        assert_int_equal(n->nics, 8);            /* one compute NIC per GPU */
        assert_true(fabs(n->nvlink_bw_bytes_per_s - t[i].nvlink_total_gbps / 2 * 1e9) < 1);
    }
    for (int i = 0; i < catalog_count(c, "gpu"); i++) {
        const gpu_spec *g = catalog_at(c, "gpu", i);
        assert_true(g->max_power_w == 0 || g->max_power_w >= g->tdp_w);
        double ref = g->eff_sustained_power_w > 0 ? g->eff_sustained_power_w : g->tdp_w;
        if (ref != g->tdp_w) assert_string_equal(g->name, "H100-SXM5-96GB");
    }
    catalog_free(c);
}

/* Model presets against their papers / model cards (CONTRACT.md's
 * llama3-405b example; Llama 2 paper; GPT-3 paper Table 2.1). */
static void test_builtin_presets(void **state) {
    (void)state;
    catalog *c = builtin();
    const llm_spec *m = catalog_llm(c, "llama3-405b");
    assert_int_equal(m->layers, 126);
    assert_int_equal(m->hidden, 16384);
    assert_int_equal(m->ffn_hidden, 53248);
    assert_int_equal(m->heads, 128);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->vocab, 128256);
    m = catalog_llm(c, "llama2-7b");
    assert_int_equal(m->layers, 32);
    assert_int_equal(m->hidden, 4096);
    assert_int_equal(m->ffn_hidden, 11008);
    assert_int_equal(m->vocab, 32000);
    m = catalog_llm(c, "gpt3-175b");
    assert_int_equal(m->layers, 96);
    assert_int_equal(m->hidden, 12288);
    assert_int_equal(m->heads, 96);
    m = catalog_llm(c, "mixtral-8x7b");
    assert_int_equal(m->experts, 8);
    assert_int_equal(m->experts_per_token, 2);
    catalog_free(c);
}

/* Every node's gpu and nic are entries of the catalog; every figure the
 * loader checks holds for the data as shipped. */
static void test_builtin_consistent(void **state) {
    (void)state;
    catalog *c = builtin();
    for (int i = 0; i < catalog_count(c, "node"); i++) {
        const node_spec *n = catalog_at(c, "node", i);
        if (!catalog_gpu(c, n->gpu) || !catalog_nic(c, n->nic))
            print_error("node %s: gpu %s nic %s\n", n->name, n->gpu, n->nic);
        assert_non_null(catalog_gpu(c, n->gpu));
        assert_non_null(catalog_nic(c, n->nic));
        assert_true(n->gpus > 0);
        assert_true(n->eff_nvlink > 0 && n->eff_nvlink <= 1);
    }
    for (int i = 0; i < catalog_count(c, "gpu"); i++) {
        const gpu_spec *g = catalog_at(c, "gpu", i);
        assert_true(g->tflops[PREC_BF16] > 0 && g->hbm_bytes > 0 && g->hbm_bw_bytes_per_s > 0 && g->tdp_w > 0);
    }
    for (int i = 0; i < catalog_count(c, "nic"); i++) {
        const nic_spec *n = catalog_at(c, "nic", i);
        assert_true(n->bw_bytes_per_s > 0 && n->eff_bw > 0 && n->eff_bw <= 1);
    }
    for (int i = 0; i < catalog_count(c, "llm"); i++) {
        const llm_spec *m = catalog_at(c, "llm", i);
        assert_true(m->hidden % m->heads == 0);
        assert_true(m->kv_heads == 0 || m->heads % m->kv_heads == 0);
    }
    /* Loading twice replaces every entry in place: same counts. */
    int n = catalog_count(c, "gpu");
    char err[512];
    assert_int_equal(catalog_load_builtin(c, err, sizeof err), 0);
    assert_int_equal(catalog_count(c, "gpu"), n);
    catalog_free(c);
}

/* ---- The 2026 fleet (the XML in models/catalog cites each figure) --------------- */

/* Datasheet spot checks, dense TFLOP/s (NVIDIA's "with sparsity" halved):
 * gpu, arch, bf16, fp8, fp6, fp4, HBM GB and TB/s, power limit W. */
static void test_2026_gpus(void **state) {
    (void)state;
    static const struct {
        const char *gpu, *arch;
        double bf16, fp8, fp6, fp4, hbm, hbm_tbps, tdp;
    } t[] = {
        { "B200-SXM-180GB", "blackwell", 2250, 4500, 4500, 9000, 183359 * MIB, 7.7, 1000 },
        { "B300-SXM-288GB", "blackwell", 2250, 4500, 4500, 13500, 288e9, 8, 1100 },
        { "GB200-B200-186GB", "blackwell", 2500, 5000, 5000, 10000, 189471 * MIB, 8, 1200 },
        { "GB300-B300-288GB", "blackwell", 2500, 5000, 5000, 15000, 288e9, 8, 1400 },
        { "H200-NVL-141GB", "hopper", 835.5, 1670.5, 0, 0, 141e9, 4.8, 600 },
        { "MI325X-256GB", "cdna3", 1307.4, 2614.9, 0, 0, 256e9, 6, 1000 },
        { "MI355X-288GB", "cdna4", 2516.6, 5033.2, 10066.3, 10066.3, 288e9, 8, 1400 },
    };
    catalog *c = builtin();
    for (size_t i = 0; i < N(t); i++) {
        const gpu_spec *g = catalog_gpu(c, t[i].gpu);
        if (!g) print_error("missing gpu %s\n", t[i].gpu);
        assert_non_null(g);
        assert_string_equal(g->arch, t[i].arch);
        assert_true(g->tflops[PREC_BF16] == t[i].bf16);
        assert_true(g->tflops[PREC_FP8] == t[i].fp8);
        assert_true(g->tflops[PREC_FP6] == t[i].fp6);
        assert_true(g->tflops[PREC_FP4] == t[i].fp4);
        assert_true(g->hbm_bytes == t[i].hbm);
        assert_true(fabs(g->hbm_bw_bytes_per_s - t[i].hbm_tbps * 1e12) <= 1e-12 * g->hbm_bw_bytes_per_s);
        assert_true(g->tdp_w == t[i].tdp);
    }
    /* Blackwell Ultra cut INT8 and FP64 (HGX B300: 2 POPS sparse, 10 TF per 8 GPUs). */
    const gpu_spec *b300 = catalog_gpu(c, "B300-SXM-288GB");
    assert_true(b300->tflops[PREC_INT8] == 125 && b300->tflops[PREC_FP64] == 1.25);
    catalog_free(c);
}

/* Every GPU's peaks are ordered as the hardware is: each narrower type at
 * least as fast as the wider (fp4 >= fp6 >= fp8 > bf16 > tf32 where the part
 * has them), efficiencies are fractions, and arch is one the docs name. */
static void test_2026_peak_order(void **state) {
    (void)state;
    static const char *arches[] = { "", "ampere", "hopper", "blackwell", "cdna3", "cdna4" };
    catalog *c = builtin();
    for (int i = 0; i < catalog_count(c, "gpu"); i++) {
        const gpu_spec *g = catalog_at(c, "gpu", i);
        const double *p = g->tflops;
        int known = 0;
        for (size_t a = 0; a < N(arches); a++) known |= strcmp(g->arch, arches[a]) == 0;
        if (!known) print_error("gpu %s: arch %s\n", g->name, g->arch);
        assert_true(known);
        assert_true(p[PREC_TF32] == 0 || p[PREC_TF32] < p[PREC_BF16]);
        assert_true(p[PREC_FP8] == 0 || p[PREC_FP8] > p[PREC_BF16]);
        assert_true(p[PREC_FP6] == 0 || (p[PREC_FP8] > 0 && p[PREC_FP6] >= p[PREC_FP8]));
        assert_true(p[PREC_FP4] == 0 || (p[PREC_FP6] > 0 && p[PREC_FP4] >= p[PREC_FP6]));
        assert_true(p[PREC_FP4] == 0 || p[PREC_FP4] > p[PREC_FP8]);
        assert_true(g->eff_gemm > 0 && g->eff_gemm <= 1 && g->eff_hbm > 0 && g->eff_hbm <= 1);
        assert_true(g->eff_attention > 0 && g->eff_attention <= 1);
        assert_true(g->eff_sustained > 0 && g->eff_sustained <= 1);
    }
    catalog_free(c);
}

/* The 2026 node types: gpu, GPUs per node, NVLink domain, NVLink total GB/s
 * per GPU, NVSwitch, compute NIC, NIC count and the node's NIC total in Gb/s
 * (AWS: p5 3,200 Gbps of EFA; Google: A3 Mega 1,600, A4X 4 x CX-7 = 1,600,
 * A4X Max 4 x CX-8 = 3,200). */
static void test_2026_nodes(void **state) {
    (void)state;
    static const struct {
        const char *node, *gpu;
        int gpus, domain;
        double nvlink_total_gbps;
        int nvswitch;
        const char *nic;
        int nics;
        double nic_total_gbps;
    } t[] = {
        { "hgx-b200", "B200-SXM-180GB", 8, 0, 1800, 1, "ndr-400", 8, 3200 },
        { "hgx-b300", "B300-SXM-288GB", 8, 0, 1800, 1, "cx8-800", 8, 6400 },
        { "gb200-nvl72", "GB200-B200-186GB", 4, 72, 1800, 1, "ndr-400", 4, 1600 },
        { "gb300-nvl72", "GB300-B300-288GB", 4, 72, 1800, 1, "cx8-800", 4, 3200 },
        { "gb200-nvl36x2", "GB200-B200-186GB", 4, 72, 1800, 1, "ndr-400", 4, 1600 },
        { "h200-nvl", "H200-NVL-141GB", 4, 0, 900, 0, "spectrum-x-400", 2, 800 },
        { "mi325x-8", "MI325X-256GB", 8, 0, 896, 0, "eth-400g", 8, 3200 },
        { "mi355x-8", "MI355X-288GB", 8, 0, 1075.2, 0, "eth-400g", 8, 3200 },
        { "aws-p5", "H100-SXM5-80GB", 8, 0, 900, 1, "efa-v2-100", 32, 3200 },
        { "gcp-a3-mega", "H100-SXM5-80GB", 8, 0, 900, 1, "tcpxo-200", 8, 1600 },
    };
    catalog *c = builtin();
    for (size_t i = 0; i < N(t); i++) {
        const node_spec *n = catalog_node(c, t[i].node);
        if (!n) print_error("missing node %s\n", t[i].node);
        assert_non_null(n);
        assert_string_equal(n->gpu, t[i].gpu);
        assert_int_equal(n->gpus, t[i].gpus);
        assert_int_equal(n->nvlink_domain, t[i].domain);
        assert_true(fabs(n->nvlink_bw_bytes_per_s - t[i].nvlink_total_gbps / 2 * 1e9) < 1);
        assert_int_equal(n->nvswitch, t[i].nvswitch);
        assert_string_equal(n->nic, t[i].nic);
        assert_int_equal(n->nics, t[i].nics);
        const nic_spec *k = catalog_nic(c, n->nic);
        assert_true(fabs(n->nics * k->bw_bytes_per_s * 8 / 1e9 - t[i].nic_total_gbps) < 1e-6);
    }
    /* NVLink SHARP only where there is a switch to do it in. */
    for (int i = 0; i < catalog_count(c, "node"); i++) {
        const node_spec *n = catalog_at(c, "node", i);
        assert_true(!n->nvls || n->nvswitch);
        /* An NVLink domain is the node or whole nodes (collective.h fabric_domain_gpus). */
        assert_true(n->nvlink_domain == 0 || (n->nvlink_domain >= n->gpus && n->nvlink_domain % n->gpus == 0));
    }
    /* A GB200 NVL72 rack is 18 trays; a tray is priced as CoreWeave's gb200-4x. */
    const node_spec *nvl = catalog_node(c, "gb200-nvl72");
    assert_int_equal(nvl->nvlink_domain / nvl->gpus, 18);
    assert_true(nvl->price_per_hour_usd == 42.0);
    catalog_free(c);
}

/* ---- Every field of every table ------------------------------------------ */

/* Set each attribute of each element kind to a sample text and check the
 * member it lands in: the tables' offsets and types against the loader. */
static void test_every_field(void **state) {
    (void)state;
    catalog *c = builtin();
    for (size_t k = 0; k < N(kinds); k++) {
        size_t size = 0;
        const catalog_field *fields = catalog_fields_for(kinds[k], &size);
        char xml[4096], name[32];
        size_t used = 0;
        assert_non_null(fields);
        snprintf(name, sizeof name, "t-%s", kinds[k]);
        used += (size_t)snprintf(xml + used, sizeof xml - used, "<catalog><%s", kinds[k]);
        for (const catalog_field *f = fields; f->attr; f++) {
            const char *v = "abc";
            switch (f->type) {
            case FIELD_STR:
                if (strcmp(f->attr, "name") == 0) v = name;
                else if (strcmp(kinds[k], "node") == 0 && strcmp(f->attr, "gpu") == 0) v = "H100-SXM5-80GB";
                else if (strcmp(kinds[k], "node") == 0 && strcmp(f->attr, "nic") == 0) v = "ndr-400";
                break;
            case FIELD_INT: v = "7"; break;
            case FIELD_BOOL: v = f->def ? "no" : "yes"; break;
            case FIELD_NUMBER: v = "2.5"; break;
            case FIELD_SIZE: v = "3GiB"; break;
            case FIELD_BW: v = "400Gb/s"; break;
            case FIELD_DURATION: v = "250ms"; break;
            case FIELD_FRACTION: v = "0.5"; break;
            }
            used += (size_t)snprintf(xml + used, sizeof xml - used, " %s=\"%s\"", f->attr, v);
        }
        snprintf(xml + used, sizeof xml - used, "/></catalog>");
        load_ok(c, xml);

        const char *e = NULL;
        for (int i = 0; i < catalog_count(c, kinds[k]); i++) {
            const char *p = catalog_at(c, kinds[k], i);
            if (strcmp(p, name) == 0) e = p;
        }
        assert_non_null(e);
        for (const catalog_field *f = fields; f->attr; f++) {
            const char *p = e + f->offset;
            switch (f->type) {
            case FIELD_STR:
                if (strcmp(f->attr, "name") == 0) assert_string_equal(p, name);
                else if (strcmp(kinds[k], "node") == 0 && strcmp(f->attr, "gpu") == 0) assert_string_equal(p, "H100-SXM5-80GB");
                else if (strcmp(kinds[k], "node") == 0 && strcmp(f->attr, "nic") == 0) assert_string_equal(p, "ndr-400");
                else assert_string_equal(p, "abc");
                break;
            case FIELD_INT: assert_int_equal(*(const int *)p, 7); break;
            case FIELD_BOOL: assert_int_equal(*(const int *)p, f->def ? 0 : 1); break;
            case FIELD_NUMBER: assert_true(*(const double *)p == 2.5); break;
            case FIELD_SIZE: assert_true(*(const double *)p == 3.0 * 1073741824); break;
            case FIELD_BW: assert_true(*(const double *)p == 50e9); break;
            case FIELD_DURATION: assert_true(*(const double *)p == 0.25); break;
            case FIELD_FRACTION: assert_true(*(const double *)p == 0.5); break;
            }
        }
    }
    catalog_free(c);
}

/* Absent optional attributes take the table's default. */
static void test_defaults(void **state) {
    (void)state;
    catalog *c = catalog_new();
    load_ok(c, "<catalog><gpu " GPU_OK "/>"
               "<nic name=\"n\" bandwidth=\"100Gb/s\"/>"
               "<llm name=\"m\" layers=\"2\" hidden=\"64\" ffn-hidden=\"256\" heads=\"4\" vocab=\"32k\"/></catalog>");
    const gpu_spec *g = catalog_gpu(c, "new-gpu");
    assert_non_null(g);
    assert_true(g->eff_gemm == 0.75);
    assert_true(g->eff_hbm == 0.85);
    assert_true(g->gemm_half_dim == 256);
    assert_true(g->tflops[PREC_FP8] == 0);
    assert_string_equal(g->vendor, "");
    const nic_spec *n = catalog_nic(c, "n");
    assert_true(n->latency_s == 2e-6);
    assert_true(n->eff_bw == 0.92);
    const llm_spec *m = catalog_llm(c, "m");
    assert_int_equal(m->vocab, 32000);
    assert_int_equal(m->max_context, 4096);
    assert_int_equal(m->gated_ffn, 1);
    assert_int_equal(m->kv_heads, 0);
    catalog_free(c);
}

/* ---- Replacing and base= ------------------------------------------------- */

static void test_replace(void **state) {
    (void)state;
    catalog *c = builtin();
    int n = catalog_count(c, "gpu"), at = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(((const gpu_spec *)catalog_at(c, "gpu", i))->name, "H100-SXM5-80GB") == 0) at = i;
    /* Without base the entry starts from defaults: eff-gemm back to 0.75,
     * fp8 peak gone. */
    load_ok(c, "<catalog><gpu name=\"H100-SXM5-80GB\" bf16-tflops=\"1000\" hbm=\"80GB\" hbm-bw=\"3TB/s\" tdp=\"700\"/></catalog>");
    assert_int_equal(catalog_count(c, "gpu"), n);
    const gpu_spec *g = catalog_at(c, "gpu", at);
    assert_string_equal(g->name, "H100-SXM5-80GB");
    assert_true(g->tflops[PREC_BF16] == 1000);
    assert_true(g->tflops[PREC_FP8] == 0);
    assert_true(g->hbm_bw_bytes_per_s == 3e12);
    assert_true(g->eff_gemm == 0.75);
    catalog_free(c);
}

static void test_base(void **state) {
    (void)state;
    catalog *c = builtin();
    const gpu_spec *h = catalog_gpu(c, "H100-SXM5-80GB");
    gpu_spec h100 = *h;
    int n = catalog_count(c, "gpu");

    /* A new entry from a catalog entry, then one from that new entry in
     * the same load; a node may use a GPU defined after it. */
    load_ok(c, "<catalog>\n"
               "  <node name=\"dgx-h100-slow\" base=\"dgx-h100\" gpu=\"H100-slow\"/>\n"
               "  <gpu name=\"H100-slow\" base=\"H100-SXM5-80GB\" hbm-bw=\"2TB/s\" eff-gemm=\"0.5\"/>\n"
               "  <gpu name=\"H100-slow-cheap\" base=\"H100-slow\" price-per-hour=\"0.5\"/>\n"
               "</catalog>\n");
    assert_int_equal(catalog_count(c, "gpu"), n + 2);
    const gpu_spec *s = catalog_gpu(c, "H100-slow");
    assert_non_null(s);
    assert_true(s->hbm_bw_bytes_per_s == 2e12);
    assert_true(s->eff_gemm == 0.5);
    assert_true(s->tflops[PREC_BF16] == h100.tflops[PREC_BF16]);
    assert_true(s->tflops[PREC_FP8] == h100.tflops[PREC_FP8]);
    assert_true(s->hbm_bytes == h100.hbm_bytes);
    assert_true(s->eff_hbm == h100.eff_hbm);
    assert_string_equal(s->vendor, h100.vendor);
    const gpu_spec *s2 = catalog_gpu(c, "H100-slow-cheap");
    assert_true(s2->price_per_hour_usd == 0.5);
    assert_true(s2->hbm_bw_bytes_per_s == 2e12);
    assert_true(s2->eff_gemm == 0.5);
    const node_spec *nd = catalog_node(c, "dgx-h100-slow");
    const node_spec *base = catalog_node(c, "dgx-h100");
    assert_string_equal(nd->gpu, "H100-slow");
    assert_string_equal(nd->nic, base->nic);
    assert_int_equal(nd->gpus, base->gpus);
    assert_true(nd->nvlink_bw_bytes_per_s == base->nvlink_bw_bytes_per_s);
    /* The original is untouched. */
    assert_memory_equal(catalog_gpu(c, "H100-SXM5-80GB"), &h100, sizeof h100);

    /* base naming the entry itself overrides in place. */
    load_ok(c, "<catalog><gpu name=\"H100-SXM5-80GB\" base=\"H100-SXM5-80GB\" price-per-hour=\"1.5\"/></catalog>");
    const gpu_spec *o = catalog_gpu(c, "H100-SXM5-80GB");
    assert_true(o->price_per_hour_usd == 1.5);
    assert_true(o->eff_gemm == h100.eff_gemm);
    assert_true(o->hbm_bw_bytes_per_s == h100.hbm_bw_bytes_per_s);
    assert_int_equal(catalog_count(c, "gpu"), n + 2);
    catalog_free(c);
}

/* A scenario's <catalog> section, given as an xmlNode. */
static void test_load_element(void **state) {
    (void)state;
    static const char doc_text[] =
        "<scenario name=\"s\">\n"
        "  <catalog>\n"
        "    <!-- a cheaper H100 -->\n"
        "    <gpu name=\"H100-SXM5-80GB\" base=\"H100-SXM5-80GB\" price-per-hour=\"2\"/>\n"
        "    <nic name=\"my-nic\" bandwidth=\"100Gb/s\"/>\n"
        "    <node name=\"my-node\" base=\"dgx-h100\" nic=\"my-nic\" nics=\"4\"/>\n"
        "  </catalog>\n"
        "  <catalog>\n"
        "    <node name=\"bad-node\" base=\"dgx-h100\" nic=\"no-such-nic\"/>\n"
        "  </catalog>\n"
        "</scenario>\n";
    xmlDoc *doc = xmlReadMemory(doc_text, (int)strlen(doc_text), "s.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOBLANKS);
    assert_non_null(doc);
    xmlNode *root = xmlDocGetRootElement(doc), *first = NULL, *second = NULL;
    for (xmlNode *e = root->children; e; e = e->next)
        if (e->type == XML_ELEMENT_NODE) { if (!first) first = e; else second = e; }
    assert_non_null(second);

    catalog *c = builtin();
    char err[1024] = "";
    assert_int_equal(catalog_load_element(c, first, "s.xml", err, sizeof err), 0);
    assert_true(catalog_gpu(c, "H100-SXM5-80GB")->price_per_hour_usd == 2);
    assert_int_equal(catalog_node(c, "my-node")->nics, 4);
    assert_string_equal(catalog_node(c, "my-node")->nic, "my-nic");

    assert_int_equal(catalog_load_element(c, second, "s.xml", err, sizeof err), -1);
    assert_string_equal(err, "s.xml:9: <node nic=\"no-such-nic\">: nic 'no-such-nic' is not in the catalog; "
                             "expected one of: hdr-200, ndr-400, xdr-800, eth-100g, eth-200g, eth-400g, eth-25g, cx8-800, "
                             "spectrum-x-800, spectrum-x-400, efa-v2-100, efa-v3-200, tcpxo-200, my-nic");
    assert_null(catalog_node(c, "bad-node"));

    /* Not a <catalog> element. */
    assert_int_equal(catalog_load_element(c, root, "s.xml", err, sizeof err), -1);
    assert_non_null(strstr(err, "s.xml:1: <scenario>: expected a <catalog> element"));
    catalog_free(c);
    xmlFreeDoc(doc);
}

/* ---- Files --------------------------------------------------------------- */

static void test_load_file(void **state) {
    (void)state;
    char path[] = "/tmp/test_catalog_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char text[] = "<?xml version=\"1.0\"?>\n<catalog>\n  <gpu " GPU_OK "/>\n"
                               "  <gpu name=\"bad\" bf16-tflops=\"1\" hbm=\"-3GB\" hbm-bw=\"1TB/s\" tdp=\"1\"/>\n</catalog>\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);

    catalog *c = catalog_new();
    char err[1024] = "", want[1024];
    assert_int_equal(catalog_load_file(c, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:4: <gpu hbm=\"-3GB\">: hbm must be a positive size like 80GB", path);
    assert_string_equal(err, want);
    assert_int_equal(catalog_count(c, "gpu"), 0);   /* nothing from a bad file */

    /* Fixed, it loads. */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    static const char good[] = "<catalog>\n  <gpu " GPU_OK "/>\n</catalog>\n";
    assert_int_equal(write(fd, good, sizeof good - 1), (ssize_t)(sizeof good - 1));
    close(fd);
    assert_int_equal(catalog_load_file(c, path, err, sizeof err), 0);
    assert_non_null(catalog_gpu(c, "new-gpu"));
    unlink(path);

    assert_int_equal(catalog_load_file(c, "/nonexistent/cat.xml", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/cat.xml: cannot open"));
    catalog_free(c);
}

/* ---- Errors -------------------------------------------------------------- */

static void test_error_units(void **state) {
    (void)state;
    /* The exact message for the house-style example. */
    catalog *c = catalog_new();
    char err[1024];
    assert_int_equal(load(c, "<catalog>\n  <gpu name=\"X\" bf16-tflops=\"1\" hbm=\"-3GB\" hbm-bw=\"1TB/s\" tdp=\"1\"/>\n</catalog>",
                          err, sizeof err), -1);
    assert_string_equal(err, "t.xml:2: <gpu hbm=\"-3GB\">: hbm must be a positive size like 80GB");
    catalog_free(c);

    load_bad("<catalog><gpu name=\"new-gpu\" bf16-tflops=\"100\" hbm=\"16GB\" hbm-bw=\"3h\" tdp=\"300\"/></catalog>",
             "t.xml:1: <gpu hbm-bw=\"3h\">: hbm-bw must be a positive bandwidth like 400Gb/s", "'h' is a duration unit");
    load_bad("<catalog><gpu name=\"new-gpu\" bf16-tflops=\"100\" hbm=\"16 GiBs\" hbm-bw=\"1TB/s\" tdp=\"300\"/></catalog>",
             "<gpu hbm=\"16 GiBs\">: hbm must be a positive size like 80GB", "unknown unit 'GiBs'");
    load_bad("<catalog><gpu " GPU_OK " l2=\"-1MB\"/></catalog>", "<gpu l2=\"-1MB\">: l2 must be a size like 80GB", "negative");
    load_bad("<catalog><gpu name=\"new-gpu\" bf16-tflops=\"100\" hbm=\"0\" hbm-bw=\"1TB/s\" tdp=\"300\"/></catalog>",
             "hbm must be a positive size", NULL);
    load_bad("<catalog><gpu name=\"new-gpu\" bf16-tflops=\"-100\" hbm=\"16GB\" hbm-bw=\"1TB/s\" tdp=\"300\"/></catalog>",
             "<gpu bf16-tflops=\"-100\">: bf16-tflops must be a positive number", NULL);
    load_bad("<catalog><gpu " GPU_OK " idle-power=\"-1\"/></catalog>", "idle-power must be a number >= 0", NULL);
    load_bad("<catalog><gpu name=\"new-gpu\" bf16-tflops=\"100\" hbm=\"16GB\" hbm-bw=\"1TB/s\" tdp=\"inf\"/></catalog>",
             "<gpu tdp=\"inf\">: tdp must be a positive number", "not a number");
    load_bad("<catalog><gpu name=\"new-gpu\" bf16-tflops=\"nan\" hbm=\"16GB\" hbm-bw=\"1TB/s\" tdp=\"300\"/></catalog>",
             "bf16-tflops must be a positive number", "not a number");
    load_bad("<catalog><gpu " GPU_OK " eff-gemm=\"1.5\"/></catalog>", "<gpu eff-gemm=\"1.5\">: eff-gemm must be a fraction in (0, 1]", NULL);
    load_bad("<catalog><gpu " GPU_OK " eff-gemm=\"0\"/></catalog>", "eff-gemm must be a fraction", NULL);
    load_bad("<catalog><gpu " GPU_OK " eff-hbm=\"90%\"/></catalog>", "eff-hbm must be a fraction", NULL);
    load_bad("<catalog><gpu " GPU_OK " sms=\"-1\"/></catalog>", "<gpu sms=\"-1\">: sms must be a whole number >= 0", NULL);
    load_bad("<catalog><gpu " GPU_OK " sms=\"13.5\"/></catalog>", "sms must be a whole number", "not a whole number");
    load_bad("<catalog><gpu " GPU_OK " sms=\"3G\"/></catalog>", "sms must be a whole number", "too large");
    load_bad("<catalog><node name=\"n\" gpu=\"H100-SXM5-80GB\" gpus=\"0\" nic=\"ndr-400\" nics=\"8\"/></catalog>",
             "<node gpus=\"0\">: gpus must be a positive whole number", NULL);
    load_bad("<catalog><node name=\"n\" gpu=\"H100-SXM5-80GB\" gpus=\"8\" nic=\"ndr-400\" nics=\"8\" nvswitch=\"maybe\"/></catalog>",
             "<node nvswitch=\"maybe\">: nvswitch must be true or false", NULL);
    load_bad("<catalog><nic name=\"n\" bandwidth=\"100Gb/s\" latency=\"2GB\"/></catalog>",
             "latency must be a duration like 90min", "'GB' is a size unit");
    load_bad("<catalog><nic name=\"n\" bandwidth=\"100Gb/s\" kind=\"infiniband-hdr-x\"/></catalog>",
             "kind must be a string of at most 15 characters", NULL);
    load_bad("<catalog><gpu name=\"\" bf16-tflops=\"100\" hbm=\"16GB\" hbm-bw=\"1TB/s\" tdp=\"300\"/></catalog>",
             "<gpu name=\"\">: name must be a non-empty name", NULL);
    load_bad("<catalog><gpu name=\"a-very-long-name-that-does-not-fit-in-forty-seven-chars\" "
             "bf16-tflops=\"100\" hbm=\"16GB\" hbm-bw=\"1TB/s\" tdp=\"300\"/></catalog>", "at most 47 characters", NULL);
}

static void test_error_structure(void **state) {
    (void)state;
    load_bad("<catalog>\n<gpu " GPU_OK " hbm_bw=\"3TB/s\"/></catalog>",
             "t.xml:2: <gpu hbm_bw=\"3TB/s\">: unknown attribute 'hbm_bw'; expected one of: name, vendor,", "hbm-bw");
    load_bad("<catalog xmlns:x=\"urn:x\"><gpu " GPU_OK " x:tdp=\"1\"/></catalog>", "unknown attribute 'x:tdp'", NULL);
    load_bad("<catalog>\n\n<gpu name=\"new-gpu\" bf16-tflops=\"100\" hbm=\"16GB\" tdp=\"300\"/></catalog>",
             "t.xml:3: <gpu name=\"new-gpu\">: missing required attribute 'hbm-bw' (a positive bandwidth like 400Gb/s)", NULL);
    load_bad("<catalog><gpu bf16-tflops=\"100\" hbm=\"16GB\" hbm-bw=\"1TB/s\" tdp=\"300\"/></catalog>",
             "<gpu>: missing required attribute 'name'", NULL);
    load_bad("<catalog><gpu base=\"H100-SXM5-80GB\" hbm=\"94GB\"/></catalog>", "missing required attribute 'name'", NULL);
    load_bad("<catalog><llm name=\"m\" layers=\"2\" hidden=\"64\" heads=\"4\" vocab=\"100\"/></catalog>",
             "missing required attribute 'ffn-hidden'", NULL);
    load_bad("<catalog>\n  <tpu name=\"x\"/>\n</catalog>",
             "t.xml:2: <tpu>: unknown element; expected one of: gpu, nic, node, storage, llm", NULL);
    load_bad("<catalog><gpu " GPU_OK "><hbm>80GB</hbm></gpu></catalog>", "unexpected element <hbm> inside <gpu>", NULL);
    load_bad("<catalog><gpu " GPU_OK ">80GB</gpu></catalog>", "unexpected text inside <gpu>", NULL);
    load_bad("<catalog>hello<gpu " GPU_OK "/></catalog>", "<catalog>: unexpected text", NULL);
    load_bad("<catalog version=\"2\"><gpu " GPU_OK "/></catalog>", "unknown attribute 'version'", NULL);
    load_bad("<gpus><gpu " GPU_OK "/></gpus>", "t.xml:1: <gpus>: expected a <catalog> element", NULL);
    load_bad("<catalog>\n<gpu " GPU_OK "/>\n<gpu name=\"x\"\n</catalog>", "t.xml:4: malformed XML", NULL);
    load_bad("", "malformed XML", NULL);

    /* References, checked once the whole load is read. */
    load_bad("<catalog>\n  <gpu " GPU_OK "/>\n  <node name=\"n\" gpu=\"H100-XYZ\" gpus=\"8\" nic=\"ndr-400\" nics=\"8\"/>\n</catalog>",
             "t.xml:3: <node gpu=\"H100-XYZ\">: gpu 'H100-XYZ' is not in the catalog; expected one of: A100-SXM4-40GB",
             "new-gpu");
    load_bad("<catalog><node name=\"n\" gpu=\"H100-SXM5-80GB\" gpus=\"8\" nic=\"ndr-4000\" nics=\"8\"/></catalog>",
             "<node nic=\"ndr-4000\">: nic 'ndr-4000' is not in the catalog; expected one of: hdr-200, ndr-400", NULL);
    load_bad("<catalog><node name=\"n\" base=\"dgx-h100\" gpu=\"nope\"/></catalog>", "gpu 'nope' is not in the catalog", NULL);
    load_bad("<catalog><gpu name=\"new-gpu\" base=\"H100-SXM5-81GB\"/></catalog>",
             "<gpu base=\"H100-SXM5-81GB\">: base 'H100-SXM5-81GB' is not a gpu in the catalog; expected one of:", "H100-SXM5-80GB");
    load_bad("<catalog><gpu name=\"new-gpu\" base=\"dgx-h100\"/></catalog>", "base 'dgx-h100' is not a gpu", NULL);
    /* A base later in the same load is not yet there. */
    load_bad("<catalog><gpu name=\"new-gpu\" base=\"later\"/><gpu name=\"later\" base=\"H100-SXM5-80GB\"/></catalog>",
             "base 'later' is not a gpu", NULL);
}

/* libxml2 prints nothing, whatever the input; external entities are not
 * read (the DOCTYPE is refused). */
static void test_quiet_and_safe(void **state) {
    (void)state;
    static const char *texts[] = {
        "<catalog><gpu name=\"x\"</catalog>",
        "<?xml version=\"1.0\"?><!DOCTYPE catalog [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>"
        "<catalog><gpu name=\"&e;\" bf16-tflops=\"1\" hbm=\"1GB\" hbm-bw=\"1TB/s\" tdp=\"1\"/></catalog>",
        "<?xml version=\"1.0\"?><!DOCTYPE catalog SYSTEM \"http://example.com/catalog.dtd\"><catalog/>",
        "<?xml version=\"1.0\"?><!DOCTYPE catalog [<!ENTITY e \"H100\">]><catalog><gpu name=\"&e;\"/></catalog>",
        "<catalog>&undefined;</catalog>",
        "\xff\xfe<\x00",
    };
    char path[] = "/tmp/test_catalog_err_XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    assert_true(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    for (size_t i = 0; i < N(texts); i++) {
        catalog *c = catalog_new();
        char err[1024] = "";
        int rc = catalog_load_memory(c, texts[i], strlen(texts[i]), "t.xml", err, sizeof err);
        assert_int_equal(rc, -1);
        assert_true(strncmp(err, "t.xml", 5) == 0);
        assert_int_equal(catalog_count(c, "gpu"), 0);
        catalog_free(c);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    close(fd);
    unlink(path);
    if (st.st_size != 0) print_error("libxml2 wrote %ld bytes to stderr\n", (long)st.st_size);
    assert_int_equal(st.st_size, 0);
}

/* A small or absent err buffer is safe. */
static void test_err_buffers(void **state) {
    (void)state;
    catalog *c = catalog_new();
    char small[16];
    memset(small, 'x', sizeof small);
    assert_int_equal(load(c, "<catalog><tpu/></catalog>", small, sizeof small), -1);
    assert_true(memchr(small, 0, sizeof small) != NULL);
    assert_int_equal(load(c, "<catalog><tpu/></catalog>", NULL, 0), -1);
    assert_int_equal(catalog_load_file(c, "/nonexistent", NULL, 0), -1);
    catalog_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_names),
        cmocka_unit_test(test_builtin_peaks),
        cmocka_unit_test(test_builtin_presets),
        cmocka_unit_test(test_builtin_consistent),
        cmocka_unit_test(test_builtin_variants),
        cmocka_unit_test(test_2026_gpus),
        cmocka_unit_test(test_2026_peak_order),
        cmocka_unit_test(test_2026_nodes),
        cmocka_unit_test(test_every_field),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_replace),
        cmocka_unit_test(test_base),
        cmocka_unit_test(test_load_element),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_error_units),
        cmocka_unit_test(test_error_structure),
        cmocka_unit_test(test_quiet_and_safe),
        cmocka_unit_test(test_err_buffers),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    xmlCleanupParser();
    return rc;
}
