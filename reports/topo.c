/*
 * topo: a Graphviz drawing of a scenario's cluster (see topo.h).
 *
 * Layout of the graph, top to bottom:
 *
 *            [storage]   [spine / core]   [cloud burst]
 *                 \        /   |   \
 *               [leaf 1] [leaf ×64] [leaf (16 nodes)]     one per leaf, or per
 *                  |        |          |                  run of identical leaves
 *             [32 × dgx] [×64 groups] [16 × dgx]          the nodes under them
 *                  :
 *            [warm spares ×48]                             dashed: held out
 *
 * Each <nodes> entry fills its own leaves (a leaf holds one node type):
 * count / nodes-per-leaf full leaves and one partial leaf for the rest.
 * A few hundred graph nodes at most, so the layout takes milliseconds.
 */
#define _GNU_SOURCE   /* dladdr */

#include "reports/topo.h"
#include "reports/fileout.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer's hook (sanitizer/lsan_interface.h), in the ASan build only:
 * dot's layout of cluster subgraphs (the racks) loses virtual nodes it
 * allocates in its own allocator, gmalloc, and gvFreeLayout never frees
 * them (Graphviz issue 65, "Memory leak in virtual_node when dot lays out
 * clusters", and issue 649, both open). That memory is Graphviz's, not
 * ours: leaks from libgvc alone are not reported. Our own misuse (a graph
 * never closed) leaks from libcgraph's agopen and is still reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libgvc.so\n"; }
#endif

#include <cgraph.h>
#include <gvc.h>

#include "models/collective.h"
#include "sim/cluster.h"
#include "base/units.h"

#define LABEL_MAX 512

typedef struct topo {
    Agraph_t *g;
    int n_graph_nodes;
    char *err;
    size_t errlen;
    int failed;
} topo;

/* ---- Small helpers -------------------------------------------------------- */

static void fail(topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(topo *t, const char *fmt, ...) {
    if (t->failed) return;
    t->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, t->errlen, fmt, ap);
    va_end(ap);
}

/* cgraph takes char * for names and values it copies: pass copies, never
 * cast away const. */
static void set(void *obj, const char *name, const char *value) {
    char n[32], v[LABEL_MAX];
    snprintf(n, sizeof n, "%s", name);
    snprintf(v, sizeof v, "%s", value);
    char def[1] = "";
    agsafeset(obj, n, v, def);
}

static Agnode_t *node(topo *t, const char *id, const char *label, const char *style) {
    if (t->failed) return NULL;
    char name[64];
    snprintf(name, sizeof name, "%s", id);
    Agnode_t *n = agnode(t->g, name, 1);
    if (!n) {
        fail(t, "Graphviz: cannot add node %s", id);
        return NULL;
    }
    t->n_graph_nodes++;
    set(n, "label", label);
    if (style && *style) set(n, "style", style);
    return n;
}

static void edge(topo *t, Agnode_t *a, Agnode_t *b, const char *label, const char *style) {
    if (t->failed || !a || !b) return;
    Agedge_t *e = agedge(t->g, a, b, NULL, 1);
    if (!e) {
        fail(t, "Graphviz: cannot add an edge");
        return;
    }
    if (label && *label) set(e, "label", label);
    if (style && *style) set(e, "style", style);
}

/* Bits per second for network people: "400 Gb/s", "12.8 Tb/s". */
static const char *bits(double bytes_per_s, char *buf, size_t len) {
    double b = bytes_per_s * 8;
    static const char *unit[] = { "b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s", "Pb/s" };
    int i = 0;
    while (b >= 1000 && i < 5) {
        b /= 1000;
        i++;
    }
    snprintf(buf, len, "%.3g %s", b, unit[i]);
    return buf;
}

/* 16384 -> "16,384". */
static const char *commas(long long v, char *buf, size_t len) {
    char raw[32];
    snprintf(raw, sizeof raw, "%lld", v < 0 ? -v : v);
    size_t n = strlen(raw), o = 0;
    if (v < 0 && o + 1 < len) buf[o++] = '-';
    for (size_t i = 0; i < n && o + 1 < len; i++) {
        if (i && (n - i) % 3 == 0 && o + 2 < len) buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = 0;
    return buf;
}

/* ---- The cluster ---------------------------------------------------------- */

static const char *topology_name(topology_kind k) {
    switch (k) {
    case TOPO_FAT_TREE: return "fat-tree";
    case TOPO_RAIL_OPTIMIZED: return "rail-optimized";
    case TOPO_SINGLE_SWITCH: return "single switch";
    }
    return "?";
}

/* One node type's NIC figures, for labels. */
typedef struct nics {
    int per_node;
    double bw_bytes_per_s;        /* per NIC */
    const char *name;
} nics;

static nics nics_of(const scenario *s, const node_spec *ns) {
    nics r = { ns->nics, 0, ns->nic };
    const nic_spec *nic = catalog_nic(s->cat, ns->nic);
    if (nic) r.bw_bytes_per_s = nic->bw_bytes_per_s;
    return r;
}

/* Label of a group of `nodes` nodes of one type, `times` such groups. */
static void group_label(const scenario *s, const node_spec *ns, int nodes, int times, char *buf, size_t len) {
    char a[32], b[32], c[32], d[32];
    nics n = nics_of(s, ns);
    long long gpus = (long long)nodes * ns->gpus * times;
    int off = 0;
    if (times > 1)
        off = snprintf(buf, len, "×%d groups of %s × %s\\n%s %s in all", times, commas(nodes, a, sizeof a), ns->name,
                       commas(gpus, b, sizeof b), ns->gpu);
    else
        off = snprintf(buf, len, "%s × %s\\n%s × %s", commas(nodes, a, sizeof a), ns->name, commas(gpus, b, sizeof b),
                       ns->gpu);
    if (off < 0 || (size_t)off >= len) return;
    snprintf(buf + off, len - off, "\\n%d × %s NIC (%s) per node%s%s", n.per_node, n.name,
             bits(n.bw_bytes_per_s, c, sizeof c), ns->storage_nic_bw_bytes_per_s > 0 ? "\\nstorage link " : "",
             ns->storage_nic_bw_bytes_per_s > 0 ? bits(ns->storage_nic_bw_bytes_per_s, d, sizeof d) : "");
}

/* Edge label leaf -> group: nodes × NICs × speed. */
static void down_label(const scenario *s, const node_spec *ns, int nodes, char *buf, size_t len) {
    char a[32];
    nics n = nics_of(s, ns);
    snprintf(buf, len, "%d × %d × %s%s", nodes, n.per_node, bits(n.bw_bytes_per_s, a, sizeof a),
             s->network.nic_mode == NIC_OVERLAY ? "\\n(overlay network)" : "");
}

/* Edge label spine -> leaf: the leaf's uplink (downlink / oversubscription). */
static void up_label(const scenario *s, const node_spec *ns, int nodes, int times, char *buf, size_t len) {
    char a[32];
    nics n = nics_of(s, ns);
    double over = s->network.oversubscription >= 1 ? s->network.oversubscription : 1;
    double up = nodes * n.per_node * n.bw_bytes_per_s / over;
    if (times > 1) snprintf(buf, len, "×%d, %s each", times, bits(up, a, sizeof a));
    else snprintf(buf, len, "%s", bits(up, a, sizeof a));
}

static int nodes_per_leaf(const scenario *s) {
    if (s->network.nodes_per_leaf > 0) return s->network.nodes_per_leaf;
    fabric f;
    fabric_defaults(&f);
    return f.nodes_per_leaf > 0 ? f.nodes_per_leaf : 32;
}

static int leaves_of(int count, int npl) { return count / npl + (count % npl != 0); }

/* The racks around a node group, as a Graphviz cluster: "N racks of M
 * nodes" and the NVLink domain (a rack of an NVL72's trays, or the node). */
static void racks(topo *t, const node_spec *ns, int nodes, int times, int id, Agnode_t *g) {
    if (t->failed || !g) return;
    char name[32], label[LABEL_MAX], a[32], b[32];
    int per = cluster_rack_nodes(ns), domain = ns->nvlink_domain > ns->gpus ? ns->nvlink_domain : ns->gpus;
    long long all = (long long)nodes * times, n = (all + per - 1) / per;
    snprintf(name, sizeof name, "cluster_racks%d", id);
    Agraph_t *sub = agsubg(t->g, name, 1);
    if (!sub || !agsubnode(sub, g, 1)) {
        fail(t, "Graphviz: cannot add the racks of group %d", id);
        return;
    }
    if (domain > ns->gpus)
        snprintf(label, sizeof label, "%s rack%s of %d × %s: NVLink domain of %d GPUs per rack (%s per GPU)",
                 commas(n, a, sizeof a), n == 1 ? "" : "s", per, ns->name, domain,
                 units_format(ns->nvlink_bw_bytes_per_s, UNIT_BANDWIDTH, b, sizeof b));
    else
        snprintf(label, sizeof label, "%s rack%s of up to %d × %s: NVLink domain = the node (%d GPUs)",
                 commas(n, a, sizeof a), n == 1 ? "" : "s", per, ns->name, domain);
    set(sub, "label", label);
    set(sub, "style", "dashed");
}

/* A leaf box (or a run of `times` identical leaves) with its node group. */
static Agnode_t *leaf_group(topo *t, const scenario *s, Agnode_t *top, const node_spec *ns, int nodes, int times,
                            int id, const char *leaf_name) {
    char name[32], label[LABEL_MAX], el[128];
    const char *rail = s->network.topology == TOPO_RAIL_OPTIMIZED ? "\\n(one switch per NIC rail)" : "";
    Agnode_t *leaf = NULL;
    if (s->network.topology != TOPO_SINGLE_SWITCH) {
        snprintf(name, sizeof name, "leaf%d", id);
        snprintf(label, sizeof label, "%s%s", leaf_name, rail);
        leaf = node(t, name, label, "rounded,filled");
        if (leaf) set(leaf, "fillcolor", "#dbe8f6");
        up_label(s, ns, nodes, times, el, sizeof el);
        edge(t, top, leaf, el, NULL);
    }
    snprintf(name, sizeof name, "group%d", id);
    group_label(s, ns, nodes, times, label, sizeof label);
    Agnode_t *g = node(t, name, label, "filled");
    if (g) set(g, "fillcolor", "#e8f4e0");
    racks(t, ns, nodes, times, id, g);
    down_label(s, ns, nodes, el, sizeof el);
    edge(t, leaf ? leaf : top, g, el, NULL);
    return g;
}

/* The graph's own attributes and its title: the scenario's name and size. */
static void graph_style(topo *t, const scenario *s) {
    char a[32], b[32], label[LABEL_MAX];
    snprintf(label, sizeof label, "%s: %s nodes, %s GPUs", s->name, commas(scenario_node_count(s), a, sizeof a),
             commas(scenario_gpus(s), b, sizeof b));
    set(t->g, "label", label);
    set(t->g, "labelloc", "t");
    set(t->g, "fontname", "Helvetica");
    set(t->g, "rankdir", "TB");
    set(t->g, "nodesep", "0.3");
    char shape[] = "shape", boxv[] = "box", fontname[] = "fontname", helv[] = "Helvetica", fontsize[] = "fontsize",
         ten[] = "10", nine[] = "9";
    agattr(t->g, AGNODE, shape, boxv);
    agattr(t->g, AGNODE, fontname, helv);
    agattr(t->g, AGNODE, fontsize, ten);
    agattr(t->g, AGEDGE, fontname, helv);
    agattr(t->g, AGEDGE, fontsize, nine);
}

/* The top of the fabric: one switch, or the spine with its leaves' count. */
static Agnode_t *fabric_top(topo *t, const scenario *s, int total_leaves, int npl) {
    char a[32], label[LABEL_MAX], over[32];
    snprintf(over, sizeof over, "%g:1", s->network.oversubscription >= 1 ? s->network.oversubscription : 1);
    if (s->network.topology == TOPO_SINGLE_SWITCH)
        snprintf(label, sizeof label, "switch (single switch)\\n%s NIC access",
                 s->network.nic_mode == NIC_OVERLAY ? "overlay" : "direct");
    else
        snprintf(label, sizeof label, "spine (%s, oversubscription %s)\\n%s leaves of %d nodes, %s NIC access",
                 topology_name(s->network.topology), over, commas(total_leaves, a, sizeof a), npl,
                 s->network.nic_mode == NIC_OVERLAY ? "overlay" : "direct");
    Agnode_t *top = node(t, "spine", label, "rounded,filled");
    if (top) set(top, "fillcolor", "#c6d9ee");
    return top;
}

/* The leaves and node groups of the first drawn_types node types: one by
 * one when there are few leaves, else the full leaves of a type as one
 * box and its partly filled leaf as another. Returns the first group
 * drawn (the spares hang from it); *next_leaf is the number after the
 * last leaf. */
static Agnode_t *leaves(topo *t, const scenario *s, Agnode_t *top, int drawn_types, int npl, int one_by_one,
                        int *next_leaf) {
    char label[LABEL_MAX];
    int id = 0, first_leaf = 1;
    Agnode_t *first_group = NULL;
    for (int i = 0; i < drawn_types && !t->failed; i++) {
        const node_spec *ns = scenario_node_spec(s, i);
        int count = s->nodes[i].count, full = count / npl, rest = count % npl;
        if (one_by_one) {
            for (int k = 0; k < full + (rest > 0); k++) {
                int n = k < full ? npl : rest;
                snprintf(label, sizeof label, "leaf %d", first_leaf + k);
                Agnode_t *g = leaf_group(t, s, top, ns, n, 1, id++, label);
                if (!first_group) first_group = g;
            }
        } else {
            if (full > 0) {
                if (full > 1) snprintf(label, sizeof label, "leaf ×%d\\n(leaves %d-%d)", full, first_leaf, first_leaf + full - 1);
                else snprintf(label, sizeof label, "leaf %d", first_leaf);
                Agnode_t *g = leaf_group(t, s, top, ns, npl, full, id++, label);
                if (!first_group) first_group = g;
            }
            if (rest > 0) {
                snprintf(label, sizeof label, "leaf %d\\n(partly filled)", first_leaf + full);
                Agnode_t *g = leaf_group(t, s, top, ns, rest, 1, id++, label);
                if (!first_group) first_group = g;
            }
        }
        first_leaf += full + (rest > 0);
    }
    *next_leaf = first_leaf;
    return first_group;
}

/* The node types past the first drawn_types, as one dashed box. */
static void more_types(topo *t, const scenario *s, Agnode_t *top, int drawn_types, int first_leaf,
                       int total_leaves) {
    char a[32], b[32], label[LABEL_MAX];
    long long nodes = 0, gpus = 0;
    for (int i = drawn_types; i < s->n_nodes; i++) {
        nodes += s->nodes[i].count;
        gpus += (long long)s->nodes[i].count * scenario_node_spec(s, i)->gpus;
    }
    snprintf(label, sizeof label, "%d more node types\\n%s nodes, %s GPUs\\n(leaves %d-%d)",
             s->n_nodes - drawn_types, commas(nodes, a, sizeof a), commas(gpus, b, sizeof b), first_leaf,
             total_leaves);
    Agnode_t *more = node(t, "more_nodes", label, "filled,dashed");
    if (more) set(more, "fillcolor", "#e8f4e0");
    edge(t, top, more, "", NULL);
}

/* Storage systems (the first TOPO_MAX_STORAGE - 1 when there are more),
 * each linked to the fabric at its aggregate bandwidth. */
static void storage(topo *t, const scenario *s, Agnode_t *top) {
    char a[32], label[LABEL_MAX], name[32];
    int drawn_storage = s->n_storage;
    if (drawn_storage > TOPO_MAX_STORAGE) drawn_storage = TOPO_MAX_STORAGE - 1;
    for (int i = 0; i < drawn_storage && !t->failed; i++) {
        const sc_storage *st = &s->storage[i];
        const storage_spec *k = catalog_storage(s->cat, st->kind);
        double bw = st->bw_bytes_per_s > 0 ? st->bw_bytes_per_s : k ? k->bw_bytes_per_s : 0;
        char cap[48] = "";
        if (st->capacity_bytes > 0) {
            char c[32];
            snprintf(cap, sizeof cap, "\\n%s", units_format(st->capacity_bytes, UNIT_SIZE, c, sizeof c));
        }
        snprintf(label, sizeof label, "storage %s\\n%s, %s aggregate%s", st->name, st->kind,
                 units_format(bw, UNIT_BANDWIDTH, a, sizeof a), cap);
        snprintf(name, sizeof name, "storage%d", i);
        Agnode_t *n = node(t, name, label, "filled");
        if (n) {
            set(n, "shape", "cylinder");
            set(n, "fillcolor", "#f6ecd0");
        }
        edge(t, n, top, units_format(bw, UNIT_BANDWIDTH, a, sizeof a), NULL);
    }
    if (drawn_storage < s->n_storage && !t->failed) {
        snprintf(label, sizeof label, "%d more storage systems", s->n_storage - drawn_storage);
        Agnode_t *n = node(t, "more_storage", label, "dashed");
        if (n) set(n, "shape", "cylinder");
        edge(t, n, top, "", NULL);
    }
}

static void build(topo *t, const scenario *s) {
    char a[32], label[LABEL_MAX];
    int npl = nodes_per_leaf(s), total_leaves = 0, drawn_types = s->n_nodes;
    if (drawn_types > TOPO_MAX_NODE_TYPES) drawn_types = TOPO_MAX_NODE_TYPES - 1;
    for (int i = 0; i < s->n_nodes; i++) total_leaves += leaves_of(s->nodes[i].count, npl);
    graph_style(t, s);
    Agnode_t *top = fabric_top(t, s, total_leaves, npl);
    int first_leaf;
    Agnode_t *first_group = leaves(t, s, top, drawn_types, npl, total_leaves <= TOPO_LEAVES_DRAWN, &first_leaf);
    if (drawn_types < s->n_nodes && !t->failed) more_types(t, s, top, drawn_types, first_leaf, total_leaves);

    /* Warm spares: nodes of the first type held out of the pool. */
    if (s->spares_warm > 0 && s->n_nodes > 0 && !t->failed) {
        snprintf(label, sizeof label, "warm spares ×%d\\n%s, held out of the pool\\n(in the leaves above)",
                 s->spares_warm, s->nodes[0].type);
        Agnode_t *sp = node(t, "spares", label, "dashed");
        edge(t, first_group ? first_group : top, sp, "", "dashed");
    }
    storage(t, s, top);

    /* Cloud burst nodes. */
    if (s->has_cloud && !t->failed) {
        snprintf(label, sizeof label, "cloud burst\\nup to %d × %s\\n%s to provision", s->cloud_max_nodes,
                 s->cloud_node_type, units_format(s->cloud_provision_s, UNIT_DURATION, a, sizeof a));
        Agnode_t *n = node(t, "cloud", label, "dashed,rounded");
        edge(t, top, n, "on demand", "dashed");
    }
    if (!t->failed && t->n_graph_nodes > TOPO_MAX_GRAPH_NODES)
        fail(t, "internal: %d graph nodes, more than %d", t->n_graph_nodes, TOPO_MAX_GRAPH_NODES);
}

/* ---- Graphviz rendering ------------------------------------------------------ */

/* The plugins we need (dot layout; core: the SVG renderer and device),
 * loaded from the directory next to libgvc, as builtins: no configuration
 * file needed, and no other plugins (pango, cairo) loaded. They stay
 * loaded for the life of the process, as in Graphviz's own dot: the dot
 * layout keeps work buffers in static variables between layouts (unloading
 * it would leak them). Not thread-safe: one drawing at a time. */
static lt_symlist_t builtins[3];
static int builtins_tried;

static void *plugin_open(const char *dir, const char *lib) {
    char file[1100];
    int n = snprintf(file, sizeof file, "%s/graphviz/%s", dir, lib);
    if (n < 0 || (size_t)n >= sizeof file) return NULL;
    return dlopen(file, RTLD_NOW | RTLD_LOCAL);
}

static void load_builtins(void) {
    if (builtins_tried) return;
    builtins_tried = 1;
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, "gvContext");
    if (!sym || !dladdr(sym, &info) || !info.dli_fname) return;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = 0;
    void *h_core = plugin_open(dir, "libgvplugin_core.so.6");
    void *h_dot = plugin_open(dir, "libgvplugin_dot_layout.so.6");
    void *core = h_core ? dlsym(h_core, "gvplugin_core_LTX_library") : NULL;
    void *dot = h_dot ? dlsym(h_dot, "gvplugin_dot_layout_LTX_library") : NULL;
    if (core && dot) {
        builtins[0] = (lt_symlist_t){ "gvplugin_core_LTX_library", core };
        builtins[1] = (lt_symlist_t){ "gvplugin_dot_layout_LTX_library", dot };
        builtins[2] = (lt_symlist_t){ NULL, NULL };
        return;
    }
    if (h_dot) dlclose(h_dot);
    if (h_core) dlclose(h_core);
}

static GVC_t *context(void) {
    load_builtins();
    if (builtins[0].name) return gvContextPlugins(builtins, 0);
    return gvContext();   /* the plugin configuration of `dot -c` */
}

static int render_svg(topo *t, FILE *f) {
    GVC_t *gvc = context();
    int rc = -1;
    if (!gvc) {
        fail(t, "Graphviz: cannot create a context");
    } else if (gvLayout(gvc, t->g, "dot") != 0) {
        fail(t, "Graphviz: the dot layout is not available (install the graphviz package, or run 'dot -c' as root)");
    } else {
        if (gvRender(gvc, t->g, "svg", f) != 0) fail(t, "Graphviz: the SVG renderer is not available");
        else rc = 0;
        gvFreeLayout(gvc, t->g);
    }
    if (gvc) gvFreeContext(gvc);
    return rc;
}

typedef enum format { FMT_DOT, FMT_SVG } format;

static int format_of(const char *file, format *f) {
    const char *dot = strrchr(file, '.'), *slash = strrchr(file, '/');
    if (!dot || (slash && dot < slash)) return -1;
    if (!strcmp(dot, ".dot") || !strcmp(dot, ".gv")) *f = FMT_DOT;
    else if (!strcmp(dot, ".svg")) *f = FMT_SVG;
    else return -1;
    return 0;
}

int topo_write(const scenario *s, const char *file, char *err, size_t errlen) {
    format fmt;
    if (!s || !file || !*file) {
        snprintf(err, errlen, "topo: no scenario or no output file");
        return -1;
    }
    if (format_of(file, &fmt) < 0) {
        const char *dot = strrchr(file, '.'), *slash = strrchr(file, '/');
        if (dot && (!slash || dot > slash))
            snprintf(err, errlen, "%s: unknown output type '%s': expected .dot, .gv or .svg", file, dot);
        else
            snprintf(err, errlen, "%s: no file extension: expected .dot, .gv or .svg", file);
        return -1;
    }
    topo t = { .err = err, .errlen = errlen };
    char gname[] = "topology";
    t.g = agopen(gname, Agdirected, NULL);
    if (!t.g) {
        snprintf(err, errlen, "Graphviz: cannot create a graph");
        return -1;
    }
    build(&t, s);

    fileout o;
    int orc = t.failed ? -1 : fileout_open(&o, file, 0, 0666, err, errlen);
    if (orc > 0) t.failed = 1;                        /* err says why */
    if (orc == 0) {
        if (fmt == FMT_DOT) {
            if (agwrite(t.g, o.f) == EOF) fail(&t, "%s: cannot write: %s", file, strerror(errno));
        } else {
            render_svg(&t, o.f);
        }
        if (t.failed) fileout_abort(&o);
        else if (fileout_close(&o, err, errlen) != 0) t.failed = 1;
    }
    agclose(t.g);
    return t.failed ? -1 : 0;
}
