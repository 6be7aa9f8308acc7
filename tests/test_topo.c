/*
 * test_topo: the cluster drawing (reports/topo.c).
 *
 * What it draws: a scenario's fabric (spine, leaves, node groups, NICs and
 * link speeds), storage, spares and cloud nodes, summarised for large
 * clusters. What we expect:
 *   - .dot output parses back with cgraph's agread, and the figures on it
 *     are the catalog's: a DGX H100 has 8 ndr-400 NICs at 400 Gb/s, so a
 *     32-node leaf has 32 × 8 × 400 Gb/s down and, at 1:1, 102 Tb/s up.
 *   - .svg output is well-formed XML (libxml2) with the leaf-group labels.
 *   - the 16K-GPU scenario (2,096 nodes, 32 per leaf: 65 full leaves and one
 *     of 16) is a handful of boxes: "leaf ×65", and under a dozen nodes.
 *   - any cluster stays under TOPO_MAX_GRAPH_NODES (100K GPUs in 40 node
 *     types, 20 storage systems).
 *   - an unknown extension is an error naming it, and writes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cgraph.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "reports/topo.h"
#include "scenarios/scenario.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ct-topo-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static scenario *load(const char *path, const char *xml) {
    scenario *s = NULL;
    char err[2048] = "";
    int rc = xml ? scenario_load_memory(xml, strlen(xml), "test.xml", &s, err, sizeof err)
                 : scenario_load(path, &s, err, sizeof err);
    if (rc != 0) fail_msg("scenario does not load: %s", err);
    return s;
}

static void out_path(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

static void draw(const scenario *s, const char *file) {
    char err[1024] = "";
    if (topo_write(s, file, err, sizeof err) != 0) fail_msg("topo_write %s: %s", file, err);
}

/* Read a .dot file back with cgraph. The caller agclose()s it. */
static Agraph_t *read_dot(const char *file) {
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    Agraph_t *g = agread(f, NULL);
    fclose(f);
    if (!g) fail_msg("%s does not parse as a graph", file);
    return g;
}

static const char *attr(void *obj, const char *name) {
    char n[32];
    snprintf(n, sizeof n, "%s", name);
    const char *v = agget(obj, n);
    return v ? v : "";
}

/* A node whose label contains z, or NULL. */
static Agnode_t *labelled(Agraph_t *g, const char *z) {
    for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
        if (strstr(attr(n, "label"), z)) return n;
    return NULL;
}

/* The default scenario: 128 DGX H100s, 4 leaves of 32, each drawn. */
static void test_default_dot(void **state) {
    (void)state;
    scenario *s = load("scenarios/default.xml", NULL);
    char file[128];
    out_path(file, sizeof file, "default.dot");
    draw(s, file);
    Agraph_t *g = read_dot(file);
    assert_non_null(agnode(g, "spine", 0));
    for (int i = 1; i <= 4; i++) {
        char z[32];
        snprintf(z, sizeof z, "leaf %d", i);
        if (!labelled(g, z)) fail_msg("no box labelled '%s'", z);
    }
    assert_null(labelled(g, "leaf 5"));
    Agnode_t *grp = labelled(g, "32 × dgx-h100");
    assert_non_null(grp);
    assert_non_null(strstr(attr(grp, "label"), "8 × ndr-400 NIC (400 Gb/s) per node"));
    /* The link speeds on the edges: down to the nodes, up to the spine. */
    Agedge_t *down = agfstin(g, grp);
    assert_non_null(down);
    assert_string_equal(attr(down, "label"), "32 × 8 × 400 Gb/s");
    Agedge_t *up = agfstin(g, agtail(down));
    assert_non_null(up);
    assert_string_equal(attr(up, "label"), "102 Tb/s");
    /* Storage with its bandwidth. */
    Agnode_t *st = labelled(g, "storage ckpt");
    assert_non_null(st);
    assert_non_null(strstr(attr(st, "label"), "400 GB/s"));
    /* The warm spares, drawn apart from the pool they are held out of. */
    assert_non_null(labelled(g, "warm spares ×4"));
    assert_int_equal(agnnodes(g), 1 + 4 + 4 + 1 + 1);
    agclose(g);
    scenario_free(s);
}

/* Collect the text of every <text> element of an SVG document. */
static void svg_text(xmlNode *n, char *buf, size_t len) {
    for (; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, (const xmlChar *)"text")) {
            xmlChar *z = xmlNodeGetContent(n);
            if (z) {
                size_t o = strlen(buf);
                snprintf(buf + o, len - o, "%s\n", (const char *)z);
                xmlFree(z);
            }
        }
        svg_text(n->children, buf, len);
    }
}

/* The 16K-GPU scenario as SVG: well-formed XML, with the summarised leaf
 * groups' labels. */
static void test_llama3_svg(void **state) {
    (void)state;
    scenario *s = load("scenarios/llama3-405b-16k.xml", NULL);
    char file[128];
    out_path(file, sizeof file, "llama3.svg");
    draw(s, file);
    xmlDoc *doc = xmlReadFile(file, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) fail_msg("%s is not well-formed XML", file);
    xmlNode *root = xmlDocGetRootElement(doc);
    assert_non_null(root);
    assert_string_equal((const char *)root->name, "svg");
    static char text[1 << 16];
    text[0] = 0;
    svg_text(root, text, sizeof text);
    static const char *const want[] = {
        "leaf ×65", "(leaves 1-65)", "leaf 66", "×65 groups of 32 × dgx-h100", "16 × dgx-h100",
        "warm spares ×48", "storage ckpt", "×65, 102 Tb/s each", "51.2 Tb/s", "2,096 nodes, 16,768 GPUs",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i])) fail_msg("SVG lacks '%s'; its text:\n%s", want[i], text);
    xmlFreeDoc(doc);
    scenario_free(s);
}

/* The same as .dot: a handful of boxes, not 2,096 nodes. */
static void test_llama3_dot_small(void **state) {
    (void)state;
    scenario *s = load("scenarios/llama3-405b-16k.xml", NULL);
    char file[128];
    out_path(file, sizeof file, "llama3.gv");
    draw(s, file);
    Agraph_t *g = read_dot(file);
    /* spine, leaf ×65 + group, leaf 66 + group, spares, storage */
    assert_int_equal(agnnodes(g), 7);
    assert_non_null(labelled(g, "leaf ×65"));
    agclose(g);
    scenario_free(s);
}

/* 100K GPUs in 40 node types with odd counts, a rail-optimized overlay
 * fabric, 20 storage systems and cloud nodes: still under the bound. */
static void test_huge_cluster_bounded(void **state) {
    (void)state;
    static char xml[1 << 15];
    size_t o = 0;
    o += snprintf(xml + o, sizeof xml - o, "<scenario name=\"huge\" seed=\"1\"><cluster>");
    static const char *const types[] = { "dgx-h100", "hgx-h200", "dgx-a100-80gb", "dgx-b200" };
    for (int i = 0; i < 40; i++)
        o += snprintf(xml + o, sizeof xml - o, "<nodes type=\"%s\" count=\"%d\"/>", types[i % 4], 300 + i);
    o += snprintf(xml + o, sizeof xml - o,
                  "<network topology=\"rail-optimized\" oversubscription=\"2\" nic-mode=\"overlay\"/>");
    for (int i = 0; i < 20; i++)
        o += snprintf(xml + o, sizeof xml - o, "<storage name=\"s%d\" kind=\"object\" capacity=\"%dPB\"/>", i, i + 1);
    o += snprintf(xml + o, sizeof xml - o,
                  "<spares warm=\"16\"/><cloud node-type=\"dgx-h100\" max-nodes=\"64\" provision-time=\"15min\"/>"
                  "</cluster></scenario>");
    scenario *s = load(NULL, xml);
    assert_true(scenario_gpus(s) > 100000);
    char file[128];
    out_path(file, sizeof file, "huge.dot");
    draw(s, file);
    Agraph_t *g = read_dot(file);
    print_message("%d GPUs drawn as %d graph nodes\n", scenario_gpus(s), agnnodes(g));
    assert_true(agnnodes(g) <= TOPO_MAX_GRAPH_NODES);
    assert_non_null(labelled(g, "more node types"));
    assert_non_null(labelled(g, "more storage systems"));
    assert_non_null(labelled(g, "cloud burst"));
    assert_non_null(labelled(g, "one switch per NIC rail"));
    Agnode_t *spine = agnode(g, "spine", 0);
    assert_non_null(spine);
    assert_non_null(strstr(attr(spine, "label"), "oversubscription 2:1"));
    assert_non_null(strstr(attr(spine, "label"), "overlay NIC access"));
    agclose(g);

    /* And it lays out and renders. */
    out_path(file, sizeof file, "huge.svg");
    draw(s, file);
    xmlDoc *doc = xmlReadFile(file, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    assert_non_null(doc);
    xmlFreeDoc(doc);
    scenario_free(s);
}

/* A single-switch node: no leaves, the groups hang off the switch. */
static void test_single_switch(void **state) {
    (void)state;
    scenario *s = load(NULL, "<scenario name=\"one\" seed=\"1\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/>"
                             "<network topology=\"single-switch\"/></cluster></scenario>");
    char file[128];
    out_path(file, sizeof file, "one.dot");
    draw(s, file);
    Agraph_t *g = read_dot(file);
    assert_int_equal(agnnodes(g), 2);
    assert_non_null(labelled(g, "switch (single switch)"));
    assert_non_null(labelled(g, "1 × dgx-h100"));
    agclose(g);
    scenario_free(s);
}

/* Bad extensions and unwritable paths: an error, nothing written, and an
 * existing file left as it was. */
static void test_errors(void **state) {
    (void)state;
    scenario *s = load("scenarios/default.xml", NULL);
    char file[128], err[512];
    out_path(file, sizeof file, "topo.png");
    assert_int_equal(topo_write(s, file, err, sizeof err), -1);
    assert_non_null(strstr(err, "'.png'"));
    assert_non_null(strstr(err, "expected .dot, .gv or .svg"));
    assert_int_equal(access(file, F_OK), -1);

    out_path(file, sizeof file, "noext");
    assert_int_equal(topo_write(s, file, err, sizeof err), -1);
    assert_non_null(strstr(err, "no file extension"));
    assert_int_equal(topo_write(s, "out.d/topo", err, sizeof err), -1);   /* the dot is in a directory name */

    out_path(file, sizeof file, "missing-dir/topo.svg");
    assert_int_equal(topo_write(s, file, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot write"));

    /* A failed write leaves an existing file alone. */
    out_path(file, sizeof file, "keep.dot");
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    char bad[160];
    snprintf(bad, sizeof bad, "%s.png", file);
    assert_int_equal(topo_write(s, bad, err, sizeof err), -1);
    f = fopen(file, "r");
    char buf[8] = "";
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "old");
    scenario_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_dot),
        cmocka_unit_test(test_llama3_svg),
        cmocka_unit_test(test_llama3_dot_small),
        cmocka_unit_test(test_huge_cluster_bounded),
        cmocka_unit_test(test_single_switch),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
