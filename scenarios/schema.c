/*
 * schema: a table of elements and attributes read from the RELAX NG
 * grammar, and a checker that names exactly what is wrong.
 *
 * Representation: a flat array of element declarations; each knows its
 * parent declaration (so the same name may mean different things in
 * different places), whether it may repeat, whether it is required, and its
 * attributes with their value choices ("fat-tree|rail-optimized|..."). The
 * scenario schema has ~30 elements, so lookups are linear scans.
 */
#include "scenarios/schema.h"

#include "base/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "scenarios/xml.h"

#define NAME_MAX_ 48
#define MAX_ATTRS 48
#define MAX_DEFINE_DEPTH 16

typedef struct attr_decl {
    char name[NAME_MAX_];
    int required;
    char values[400];            /* "a|b|c" or "" for any value */
} attr_decl;

typedef struct elem_decl {
    char name[NAME_MAX_];
    int parent;                  /* index of the parent declaration, -1 for the root */
    int required;                /* must appear at least once in its parent */
    int repeat;                  /* may appear more than once */
    int open_attrs;              /* any attribute allowed (checked elsewhere) */
    int open_children;           /* children checked elsewhere */
    attr_decl attrs[MAX_ATTRS];
    int n_attrs;
} elem_decl;

struct schema {
    xmlDoc *doc;                 /* the grammar, for <define> lookups while building */
    elem_decl *e;
    int n;
    size_t cap;
    int failed;
};

static void prop(const xmlNode *n, const char *attr, char *buf, size_t len) {
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    snprintf(buf, len, "%s", v ? (const char *)v : "");
    xmlFree(v);
}

static const xmlNode *find_define(const schema *s, const char *name) {
    const xmlNode *g = xmlDocGetRootElement(s->doc);
    char z[NAME_MAX_];
    for (const xmlNode *c = g ? g->children : NULL; c; c = c->next) {
        if (!xml_is(c, "define")) continue;
        prop(c, "name", z, sizeof z);
        if (!strcmp(z, name)) return c;
    }
    return NULL;
}

/* Append every <value> under n (following refs) to out as "a|b|c". */
static void collect_values(const schema *s, const xmlNode *n, char *out, size_t len, int depth) {
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (xml_is(c, "value")) {
            xmlChar *v = xmlNodeGetContent(c);
            size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%s", used ? "|" : "", v ? (const char *)v : "");
            xmlFree(v);
        } else if (xml_is(c, "ref") && depth < MAX_DEFINE_DEPTH) {
            char z[NAME_MAX_];
            prop(c, "name", z, sizeof z);
            const xmlNode *d = find_define(s, z);
            if (d) collect_values(s, d, out, len, depth + 1);
        } else if (c->type == XML_ELEMENT_NODE) {
            collect_values(s, c, out, len, depth);
        }
    }
}

static int add_elem(schema *s, const char *name, int parent, int required, int repeat) {
    if (GROW(s->e, s->cap, (size_t)s->n + 1)) {
        s->failed = 1;
        return -1;
    }
    elem_decl *d = &s->e[s->n];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->parent = parent;
    d->required = required;
    d->repeat = repeat;
    return s->n++;
}

static void walk(schema *s, const xmlNode *n, int parent, int required, int repeat, int depth) {
    if (depth > MAX_DEFINE_DEPTH * 8 || s->failed) return;
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        char z[NAME_MAX_];
        if (xml_is(c, "element")) {
            prop(c, "name", z, sizeof z);
            if (!z[0]) {                   /* name class (<choice><name>...): open content */
                if (parent >= 0) s->e[parent].open_children = 1;
                continue;
            }
            int i = add_elem(s, z, parent, required, repeat);
            if (i >= 0) walk(s, c, i, 1, 0, depth + 1);
        } else if (xml_is(c, "attribute")) {
            if (parent < 0) continue;
            elem_decl *d = &s->e[parent];
            prop(c, "name", z, sizeof z);
            if (!z[0]) {
                d->open_attrs = 1;
                continue;
            }
            if (d->n_attrs == MAX_ATTRS) {
                s->failed = 1;
                return;
            }
            attr_decl *a = &d->attrs[d->n_attrs++];
            snprintf(a->name, sizeof a->name, "%s", z);
            a->required = required;
            a->values[0] = 0;
            collect_values(s, c, a->values, sizeof a->values, 0);
        } else if (xml_is(c, "optional")) {
            walk(s, c, parent, 0, repeat, depth + 1);
        } else if (xml_is(c, "zeroOrMore")) {
            walk(s, c, parent, 0, 1, depth + 1);
        } else if (xml_is(c, "oneOrMore")) {
            walk(s, c, parent, required, 1, depth + 1);
        } else if (xml_is(c, "choice")) {
            walk(s, c, parent, 0, repeat, depth + 1);
        } else if (xml_is(c, "interleave") || xml_is(c, "group") || xml_is(c, "start")) {
            walk(s, c, parent, required, repeat, depth + 1);
        } else if (xml_is(c, "ref")) {
            prop(c, "name", z, sizeof z);
            const xmlNode *d = find_define(s, z);
            if (d) walk(s, d, parent, required, repeat, depth + 1);
        }
    }
}

schema *schema_new(const char *rng, size_t len, char *err, size_t errlen) {
    schema *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    xml_errors e = { 0 };
    s->doc = xml_parse(rng, len, "scenario.rng", XML_PARSE_NOBLANKS, &e, NULL);
    if (!s->doc && e.oom) {
        snprintf(err, errlen, "out of memory");
        schema_free(s);
        return NULL;
    }
    const xmlNode *g = s->doc ? xmlDocGetRootElement(s->doc) : NULL;
    const xmlNode *start = NULL;
    for (const xmlNode *c = g ? g->children : NULL; c; c = c->next)
        if (xml_is(c, "start")) start = c;
    if (start) walk(s, start, -1, 1, 0, 0);
    if (!start || s->failed || s->n == 0) {
        snprintf(err, errlen, "the scenario schema does not load");
        schema_free(s);
        return NULL;
    }
    xmlFreeDoc(s->doc);
    s->doc = NULL;
    return s;
}

void schema_free(schema *s) {
    if (!s) return;
    xmlFreeDoc(s->doc);
    free(s->e);
    free(s);
}

/* ---- checking ----------------------------------------------------------- */

static int find_child(const schema *s, int parent, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (s->e[i].parent == parent && !strcmp(s->e[i].name, name)) return i;
    return -1;
}

static void list_children(const schema *s, int parent, char *buf, size_t len) {
    buf[0] = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->e[i].parent != parent) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s<%s>", used ? ", " : "", s->e[i].name);
    }
}

static void list_attrs(const elem_decl *d, char *buf, size_t len) {
    buf[0] = 0;
    for (int i = 0; i < d->n_attrs; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", d->attrs[i].name);
    }
}

static int value_allowed(const char *values, const char *v) {
    size_t n = strlen(v);
    for (const char *p = values; *p;) {
        const char *bar = strchr(p, '|');
        size_t k = bar ? (size_t)(bar - p) : strlen(p);
        if (k == n && !strncmp(p, v, n)) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

typedef struct check_ctx {
    const schema *s;
    char *msg;
    size_t len;
    const void **bad;
    const char **bad_attr;
} check_ctx;

static int report(check_ctx *c, const xmlNode *n, const char *attr, const char *fmt, const char *a1,
                  const char *a2) {
    snprintf(c->msg, c->len, fmt, a1, a2);
    *c->bad = n;
    *c->bad_attr = attr;
    return -1;
}

static int check_node(check_ctx *c, const xmlNode *n, int di) {
    const schema *s = c->s;
    const elem_decl *d = &s->e[di];
    char list[1024];

    if (!d->open_attrs) {
        for (const xmlAttr *a = n->properties; a; a = a->next) {
            const char *an = (const char *)a->name;
            const attr_decl *ad = NULL;
            for (int i = 0; i < d->n_attrs; i++)
                if (!strcmp(d->attrs[i].name, an)) ad = &d->attrs[i];
            if (!ad) {
                list_attrs(d, list, sizeof list);
                return report(c, n, NULL, "unknown attribute '%s'; expected one of: %s", an, list);
            }
            if (ad->values[0]) {
                xmlChar *v = xmlGetProp(n, a->name);
                int ok = v && value_allowed(ad->values, (const char *)v);
                xmlFree(v);
                if (!ok) {
                    snprintf(list, sizeof list, "%s", ad->values);
                    for (char *p = list; *p; p++)
                        if (*p == '|') *p = ',';
                    return report(c, n, ad->name, "%s must be one of: %s", ad->name, list);
                }
            }
        }
        for (int i = 0; i < d->n_attrs; i++)
            if (d->attrs[i].required && !xmlHasProp(n, (const xmlChar *)d->attrs[i].name))
                return report(c, n, NULL, "missing attribute %s%s", d->attrs[i].name, "");
    }
    if (d->open_children) return 0;

    for (const xmlNode *ch = n->children; ch; ch = ch->next) {
        if (ch->type == XML_TEXT_NODE || ch->type == XML_CDATA_SECTION_NODE) {
            const xmlChar *t = ch->content;
            while (t && *t && strchr(" \t\r\n", *t)) t++;
            if (t && *t) {
                char snippet[40];
                snprintf(snippet, sizeof snippet, "%.30s", (const char *)t);
                for (char *p = snippet; *p; p++)
                    if (*p == '\n' || *p == '\r') *p = ' ';
                return report(c, n, NULL, "unexpected text '%s' inside <%s>", snippet, (const char *)n->name);
            }
            continue;
        }
        if (ch->type != XML_ELEMENT_NODE) continue;
        int ci = find_child(s, di, (const char *)ch->name);
        if (ci < 0) {
            list_children(s, di, list, sizeof list);
            char what[200];
            snprintf(what, sizeof what, "unknown element <%s> in <%s>", (const char *)ch->name, d->name);
            if (list[0]) return report(c, ch, NULL, "%s; expected one of: %s", what, list);
            return report(c, ch, NULL, "%s; <%s> has no child elements", what, d->name);
        }
        if (!s->e[ci].repeat) {
            for (const xmlNode *p = n->children; p && p != ch; p = p->next)
                if (p->type == XML_ELEMENT_NODE && !strcmp((const char *)p->name, (const char *)ch->name))
                    return report(c, ch, NULL, "<%s> may appear only once in <%s>", s->e[ci].name, d->name);
        }
        if (check_node(c, ch, ci) < 0) return -1;
    }
    for (int i = 0; i < s->n; i++) {
        if (s->e[i].parent != di || !s->e[i].required) continue;
        int seen = 0;
        for (const xmlNode *ch = n->children; ch && !seen; ch = ch->next)
            seen = ch->type == XML_ELEMENT_NODE && !strcmp((const char *)ch->name, s->e[i].name);
        if (!seen) return report(c, n, NULL, "missing element <%s> inside <%s>", s->e[i].name, d->name);
    }
    return 0;
}

int schema_check(const schema *s, const void *root, char *msg, size_t len, const void **bad,
                 const char **bad_attr) {
    const xmlNode *r = root;
    check_ctx c = { s, msg, len, bad, bad_attr };
    int ri = find_child(s, -1, (const char *)r->name);
    if (ri < 0) {
        char list[256];
        list_children(s, -1, list, sizeof list);
        return report(&c, r, NULL, "expected %s as the root element%s", list, "");
    }
    return check_node(&c, r, ri);
}
