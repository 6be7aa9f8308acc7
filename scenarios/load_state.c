/*
 * load_state: the scenario as a snapshot of a live cluster (issue 22,
 * docs/cluster-state.md): <scenario snapshot-time>, node names (<nodes
 * names=>, Slurm hostlists read by base/hostlist), <unavailable> nodes at
 * t = 0, a queue's node set (<queue nodes=>, a partition's nodes), and
 * <runtime-history> (run time / time limit samples that trace
 * jobs with a limit and no duration draw from). Everything here is
 * optional and changes nothing when absent.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hostlist.h"
#include "base/units.h"
#include "scenarios/load.h"

/* snapshot-time="2026-11-26T09:30:00Z": ISO 8601 in UTC, to the second. */
void load_snapshot_time(loader *L, const xmlNode *root) {
    scenario *s = L->s;
    if (attr_str(&L->x, root, "snapshot-time", s->snapshot_time, sizeof s->snapshot_time, 0) <= 0) return;
    const char *z = s->snapshot_time, *shape = "dddd-dd-ddTdd:dd:ddZ";
    int ok = strlen(z) == strlen(shape);
    for (size_t i = 0; ok && shape[i]; i++)
        ok = shape[i] == 'd' ? isdigit((unsigned char)z[i]) != 0 : z[i] == shape[i];
    int mon = ok ? atoi(z + 5) : 0, day = ok ? atoi(z + 8) : 0, h = ok ? atoi(z + 11) : 0;
    int mi = ok ? atoi(z + 14) : 0, sec = ok ? atoi(z + 17) : 0;
    if (!ok || mon < 1 || mon > 12 || day < 1 || day > 31 || h > 23 || mi > 59 || sec > 60)
        xml_fail(&L->x, root, "snapshot-time", "expected a UTC time like 2026-11-26T09:30:00Z");
}

/* ---- node names -------------------------------------------------------- */

typedef struct name_sink {
    loader *L;
    int group, k, count;
} name_sink;

static int add_node_name(void *ctx, const char *name) {
    name_sink *ns = ctx;
    scenario *s = ns->L->s;
    if (ns->k >= ns->count) return 1;           /* more names than nodes: counted by the caller */
    size_t n = strlen(name) + 1;
    if (s->node_text_len + n > UINT32_MAX - 1 || GROW(s->node_text, s->node_text_cap, s->node_text_len + n)) return 1;
    memcpy(s->node_text + s->node_text_len, name, n);
    s->node_name[scenario_node_index(s, ns->group, ns->k++)] = (uint32_t)s->node_text_len;
    s->node_text_len += n;
    return 0;
}

static const scenario *sort_s;
static int cmp_node_name(const void *a, const void *b) {
    return strcmp(sort_s->node_text + sort_s->node_name[*(const int *)a],
                  sort_s->node_text + sort_s->node_name[*(const int *)b]);
}

/* names= of <nodes> entry g (element e): expanded, one per node. */
static void group_names(loader *L, const xmlNode *e, int g, const char *list) {
    scenario *s = L->s;
    char why[256];
    long n = hostlist_expand(list, NULL, NULL, why, sizeof why);
    if (n < 0) FAIL_RETURN(L, e, "names", "%s", why);
    /* Fewer names than nodes: the first nodes are named and the rest are
     * not, so a what-if can add nodes to a named group (forecast --vary
     * 'cluster/nodes/@count=20'); more names than nodes is a mistake. */
    if (n > s->nodes[g].count)
        FAIL_RETURN(L, e, "names", "%ld names for count=\"%d\" nodes; expected at most one name per node", n,
                    s->nodes[g].count);
    name_sink ns = { L, g, 0, s->nodes[g].count };
    if (hostlist_expand(list, add_node_name, &ns, why, sizeof why) < 0) FAIL_RETURN(L, e, NULL, "out of memory");
}

/* The named nodes sorted by name; two nodes of one name are an error at
 * the second's <nodes>. */
static void index_names(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    int nodes = scenario_node_count(s) + (s->has_cloud ? s->cloud_max_nodes : 0);
    s->node_by_name = malloc(((size_t)nodes + 1) * sizeof *s->node_by_name);
    if (!s->node_by_name) FAIL_RETURN(L, sec, NULL, "out of memory");
    for (int i = 0; i < nodes; i++)
        if (s->node_name[i] != SC_NO_TEXT) s->node_by_name[s->n_named++] = i;
    sort_s = s;
    qsort(s->node_by_name, (size_t)s->n_named, sizeof *s->node_by_name, cmp_node_name);
    for (int i = 1; i < s->n_named; i++) {
        const char *a = s->node_text + s->node_name[s->node_by_name[i - 1]];
        if (!strcmp(a, s->node_text + s->node_name[s->node_by_name[i]]))
            FAIL_RETURN(L, sec, NULL, "node name %s is given to two nodes; expected each name once", a);
    }
}

void load_node_names(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    int any = 0, g = 0;
    for (const xmlNode *e = sec->children; e; e = e->next) any |= xml_is(e, "nodes") && xmlHasProp(e, (const xmlChar *)"names");
    if (!any) return;
    int nodes = scenario_node_count(s) + (s->has_cloud ? s->cloud_max_nodes : 0);
    s->node_name = malloc(((size_t)nodes + 1) * sizeof *s->node_name);
    if (!s->node_name) FAIL_RETURN(L, sec, NULL, "out of memory");
    for (int i = 0; i < nodes; i++) s->node_name[i] = SC_NO_TEXT;
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next) {
        if (!xml_is(e, "nodes")) continue;
        xmlChar *v = xmlGetProp(e, (const xmlChar *)"names");
        if (v) group_names(L, e, g, (const char *)v);
        xmlFree(v);
        g++;
    }
    if (!L->x.failed) index_names(L, sec);
}

/* ---- node sets: <unavailable nodes=>, <queue nodes=> ------------------- */

typedef struct node_sink {
    loader *L;
    const xmlNode *e;
    const char *attr;
    int *nodes, n;
    size_t cap;
} node_sink;

static int add_set_node(void *ctx, const char *name) {
    node_sink *ns = ctx;
    int n = scenario_node_by_name(ns->L->s, name);
    if (n < 0) {
        xml_fail(&ns->L->x, ns->e, ns->attr, "no node is named %s; expected names from <nodes names=\"...\">", name);
        return 1;
    }
    if (GROW(ns->nodes, ns->cap, (size_t)ns->n + 1)) {
        xml_fail(&ns->L->x, ns->e, NULL, "out of memory");
        return 1;
    }
    ns->nodes[ns->n++] = n;
    return 0;
}

int load_node_set(loader *L, const xmlNode *e, const char *attr, int **out, int *n) {
    xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
    char why[256];
    node_sink ns = { L, e, attr, NULL, 0, 0 };
    if (!L->x.failed && !L->s->node_name) xml_fail(&L->x, e, attr, "the cluster's <nodes> have no names= to refer to");
    if (!L->x.failed && hostlist_expand((const char *)v, NULL, NULL, why, sizeof why) < 0)
        xml_fail(&L->x, e, attr, "%s", why);
    if (!L->x.failed) hostlist_expand((const char *)v, add_set_node, &ns, why, sizeof why);
    xmlFree(v);
    *out = ns.nodes;
    *n = ns.n;
    return L->x.failed ? -1 : 0;
}

enum { STATE_DOWN, STATE_DRAINED, STATE_DRAINING };
static int parse_node_state(const char *z) {
    return !strcmp(z, "down") ? STATE_DOWN : !strcmp(z, "drained") ? STATE_DRAINED : !strcmp(z, "draining") ? STATE_DRAINING : -1;
}

void load_unavailable(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_unavailable *u = PUSH(L, s->unavailable, s->n_unavailable, e);
    if (!u) return;
    u->line = xml_line(&L->x, e);
    int state = STATE_DOWN;
    if (attr_enum(&L->x, e, "state", parse_node_state, "down, drained, draining", &state) < 0) return;
    u->drained = state != STATE_DOWN;
    u->draining = state == STATE_DRAINING;
    attr_str(&L->x, e, "reason", u->reason, sizeof u->reason, 0);
    attr_unit(&L->x, e, "repair", UNIT_DURATION, &u->repair_s, 0, 1);
    load_node_set(L, e, "nodes", &u->nodes, &u->n);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Slurm's partition Nodes= (slurm.conf(5)): its jobs run only there. */
void load_queue_nodes(loader *L, const xmlNode *e, sc_queue *q) {
    if (!xmlHasProp(e, (const xmlChar *)"nodes")) return;
    if (load_node_set(L, e, "nodes", &q->nodes, &q->n_nodes) < 0) return;
    if (q->n_nodes == 0) FAIL_RETURN(L, e, "nodes", "expected at least one node name, like gpu[01-08]");
    qsort(q->nodes, (size_t)q->n_nodes, sizeof *q->nodes, cmp_int);
    int k = 1;                                   /* a name given twice counts once */
    for (int i = 1; i < q->n_nodes; i++)
        if (q->nodes[i] != q->nodes[k - 1]) q->nodes[k++] = q->nodes[i];
    q->n_nodes = k;
}

/* ---- runtime history ------------------------------------------------------ */

/* values="0.05 0.4 1": each in (0, 1]. */
static void read_ratio_values(loader *L, const xmlNode *e, sc_ratios *r) {
    xmlChar *v = xmlGetProp(e, (const xmlChar *)"values");
    size_t cap = 0;
    char *end;
    for (const char *p = (const char *)v; p && !L->x.failed;) {
        while (isspace((unsigned char)*p) || *p == ',') p++;
        if (!*p) break;
        double x = strtod(p, &end);
        if (end == p || !(x > 0 && x <= 1)) {
            xml_fail(&L->x, e, "values", "expected ratios of run time to time limit, each above 0 and at most 1");
            break;
        }
        if (r->n >= 10000000 || GROW(r->values, cap, (size_t)r->n + 1)) {
            xml_fail(&L->x, e, "values", "out of memory or more than 10,000,000 values");
            break;
        }
        r->values[r->n++] = x;
        p = end;
    }
    xmlFree(v);
    if (!L->x.failed && r->n == 0) xml_fail(&L->x, e, "values", "expected at least one ratio, like \"0.2 0.9 1\"");
}

static void load_ratios(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_ratios *r = PUSH(L, s->ratios, s->n_ratios, e);
    if (!r) return;
    r->line = xml_line(&L->x, e);
    int user = attr_str(&L->x, e, "user", r->who, sizeof r->who, 0);
    int account = user ? 0 : attr_str(&L->x, e, "account", r->who, sizeof r->who, 0);
    if (user > 0 && xmlHasProp(e, (const xmlChar *)"account"))
        FAIL_RETURN(L, e, "account", "give user or account, not both");
    r->by = user > 0 ? SC_RATIOS_USER : account > 0 ? SC_RATIOS_ACCOUNT : SC_RATIOS_CLUSTER;
    for (int i = 0; i < s->n_ratios - 1; i++)
        if (s->ratios[i].by == r->by && !strcmp(s->ratios[i].who, r->who))
            FAIL_RETURN(L, e, NULL, "the same %s's ratios are already on line %d",
                        r->by == SC_RATIOS_USER ? "user" : r->by == SC_RATIOS_ACCOUNT ? "account" : "cluster",
                        s->ratios[i].line);
    read_ratio_values(L, e, r);
}

void load_runtime_history(loader *L, const xmlNode *e) {
    for (const xmlNode *c = e->children; c && !L->x.failed; c = c->next)
        if (xml_is(c, "ratios")) load_ratios(L, c);
}
