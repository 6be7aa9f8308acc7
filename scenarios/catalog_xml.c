/*
 * catalog_xml: the catalog loader (see catalog_xml.h).
 *
 * A load reads entries into a staging list first and adds them to the
 * catalog only when all of them are good, so a bad file leaves the catalog
 * as it was:
 *
 *   XML ──► read_catalog ──► staged[] ──► check_refs ──► commit ──► catalog
 *           (units, ranges,   (copies of    (node gpu/nic   (catalog_put,
 *            base=, required)  the structs)  exist)          in order)
 *
 * The catalog is small (tens of entries per kind) and read once per run, so
 * lookups scan the staging list and the catalog linearly.
 */
#include "scenarios/catalog_xml.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "base/grow.h"
#include "base/units.h"
#include "scenarios/catalog_cause.h"
#include "scenarios/embedded.h"
#include "scenarios/infile.h"
#include "scenarios/xml.h"

#define CATALOG_DIR "models/catalog/"
#define MAX_FIELDS 64

static const char *const kinds[] = { "gpu", "nic", "node", "storage", "llm", "stack", "engine", "failure-profile" };
#define KIND_PROFILE 7     /* the one kind with children: its <cause> rows (catalog_cause.c) */
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

/* One entry read and checked but not yet in the catalog. */
typedef struct staged {
    int kind;              /* index into kinds[] */
    void *entry;           /* a gpu_spec, nic_spec... (its first member is the name) */
    const char *file;      /* borrowed; outlives the load */
    long line;
} staged;

typedef struct load {
    catalog *c;
    staged *v;
    int n;
    size_t cap;
    char *err;
    size_t errlen;
} load;

/* ---- Errors ---------------------------------------------------------------- */

/* Write "file:line: message" (or "file: message" without a line) to the
 * load's err. Returns -1 so callers can `return fail(...)`. */
static int failv(char *err, size_t errlen, const char *file, long line, const char *fmt, va_list ap) {
    int w;
    if (!err || errlen == 0) return -1;
    if (line > 0) w = snprintf(err, errlen, "%s:%ld: ", file ? file : "<memory>", line);
    else w = snprintf(err, errlen, "%s: ", file ? file : "<memory>");
    if (w < 0 || (size_t)w >= errlen) return -1;
    vsnprintf(err + w, errlen - (size_t)w, fmt, ap);
    return -1;
}

static int fail(load *l, const char *file, long line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    failv(l->err, l->errlen, file, line, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_raw(char *err, size_t errlen, const char *file, long line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    failv(err, errlen, file, line, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- Staging --------------------------------------------------------------- */

static void load_init(load *l, catalog *c, char *err, size_t errlen) {
    memset(l, 0, sizeof *l);
    l->c = c;
    l->err = err;
    l->errlen = errlen;
    if (err && errlen) err[0] = 0;
}

static void load_free(load *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i].entry);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* Takes ownership of entry (freed on failure). */
static int stage(load *l, int kind, void *entry, const char *file, long line) {
    if (GROW(l->v, l->cap, (size_t)l->n + 1)) {
        free(entry);
        return fail(l, file, line, "out of memory");
    }
    l->v[l->n++] = (staged){ kind, entry, file, line };
    return 0;
}

static int kind_index(const char *z) {
    for (int i = 0; i < NKINDS; i++)
        if (strcmp(z, kinds[i]) == 0) return i;
    return -1;
}

/* The entry of this kind and name as the load would leave it: the latest
 * staged one, else the catalog's. NULL when there is none. */
static const void *lookup(const load *l, int kind, const char *name) {
    for (int i = l->n - 1; i >= 0; i--)
        if (l->v[i].kind == kind && strcmp(l->v[i].entry, name) == 0) return l->v[i].entry;
    int n = catalog_count(l->c, kinds[kind]);
    for (int i = 0; i < n; i++) {
        const char *p = catalog_at(l->c, kinds[kind], i);
        if (p && strcmp(p, name) == 0) return p;
    }
    return NULL;
}

/* Names of one kind in the catalog and the load, for "expected one of". */
static void names(const load *l, int kind, char *buf, size_t len) {
    int ncat = catalog_count(l->c, kinds[kind]);
    size_t used;
    catalog_names(l->c, kinds[kind], buf, len);
    used = strlen(buf);
    for (int i = 0; i < l->n && used + 1 < len; i++) {
        const char *z = l->v[i].entry;
        int dup = 0;
        if (l->v[i].kind != kind) continue;
        for (int j = 0; j < ncat && !dup; j++) dup = strcmp(catalog_at(l->c, kinds[kind], j), z) == 0;
        for (int j = 0; j < i && !dup; j++) dup = l->v[j].kind == kind && strcmp(l->v[j].entry, z) == 0;
        if (dup) continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", z);
        if (w < 0) break;
        used += (size_t)w;
        if (used >= len) used = len - 1;
    }
    if (used == 0) snprintf(buf, len, "(none)");
}

/* ---- Fields ---------------------------------------------------------------- */

static unit_kind unit_of(field_type t) {
    switch (t) {
    case FIELD_SIZE: return UNIT_SIZE;
    case FIELD_BW: return UNIT_BANDWIDTH;
    case FIELD_DURATION: return UNIT_DURATION;
    case FIELD_INT: return UNIT_COUNT;
    default: return UNIT_NUMBER;
    }
}

/* What a good value of this field looks like: "a positive size like 80GB".
 * Required numeric fields must be positive (a GPU without HBM, a node
 * without GPUs); optional ones may be 0 ("not given"). */
static void expectation(const catalog_field *f, char *buf, size_t len) {
    const char *pos = f->required ? "positive " : "";
    const char *z;
    switch (f->type) {
    case FIELD_STR:
        snprintf(buf, len, "%s of at most %zu characters",
                 f->required ? "a non-empty name" : "a string", f->size - 1);
        break;
    case FIELD_INT:
        snprintf(buf, len, f->required ? "a positive whole number" : "a whole number >= 0");
        break;
    case FIELD_BOOL: snprintf(buf, len, "true or false"); break;
    case FIELD_NUMBER:
        snprintf(buf, len, f->required ? "a positive number" : "a number >= 0");
        break;
    case FIELD_FRACTION: snprintf(buf, len, "a fraction in (0, 1] like 0.75"); break;
    case FIELD_SIZE:
    case FIELD_BW:
    case FIELD_DURATION:
        z = units_expected(unit_of(f->type));
        assert(strncmp(z, "a ", 2) == 0);
        snprintf(buf, len, "a %s%s", pos, z + 2);
        break;
    }
}

static int parse_bool(const char *z, int *out) {
    static const struct { const char *z; int v; } t[] = {
        { "true", 1 }, { "false", 0 }, { "1", 1 }, { "0", 0 }, { "yes", 1 }, { "no", 0 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcmp(z, t[i].z) == 0) {
            *out = t[i].v;
            return 0;
        }
    }
    return -1;
}

/* Set field f of entry from the attribute text. On error returns -1 with
 * why = "hbm must be a positive size like 80GB" and the entry unchanged. */
static int set_field(const catalog_field *f, void *entry, const char *value, char *why, size_t whylen) {
    char *p = (char *)entry + f->offset;
    char detail[160] = "", want[96];
    double v = 0;
    int ok = 1, b;

    switch (f->type) {
    case FIELD_STR: {
        size_t n = strlen(value);
        if (n >= f->size || (f->required && n == 0)) {
            ok = 0;
            if (n >= f->size) snprintf(detail, sizeof detail, "%zu characters", n);
        } else {
            memcpy(p, value, n + 1);
        }
        break;
    }
    case FIELD_BOOL:
        if (parse_bool(value, &b) == 0) *(int *)p = b;
        else ok = 0;
        break;
    case FIELD_INT:
        if (units_parse(value, UNIT_COUNT, &v, detail, sizeof detail) != 0) ok = 0;
        else if (v > INT_MAX) { ok = 0; snprintf(detail, sizeof detail, "too large"); }
        else if (f->required && v == 0) ok = 0;
        else *(int *)p = (int)v;
        break;
    case FIELD_NUMBER:
    case FIELD_FRACTION:
        if (units_parse(value, UNIT_NUMBER, &v, detail, sizeof detail) != 0) ok = 0;
        else if (f->type == FIELD_FRACTION ? !(v > 0 && v <= 1) : (v < 0 || (f->required && v == 0))) ok = 0;
        else *(double *)p = v;
        break;
    case FIELD_SIZE:
    case FIELD_BW:
    case FIELD_DURATION:
        if (units_parse(value, unit_of(f->type), &v, detail, sizeof detail) != 0) ok = 0;
        else if (f->required && v == 0) ok = 0;
        else *(double *)p = v;
        break;
    }
    if (ok) return 0;

    /* units.c writes "reason; expected a size like 80GB": keep the reason
     * only, since the message below says what is expected. */
    char *cut = strstr(detail, "; expected");
    if (cut) *cut = 0;
    if (strncmp(detail, "expected", 8) == 0 || strncmp(detail, "empty", 5) == 0 ||
        (strncmp(detail, "negative", 8) == 0 && f->required))
        detail[0] = 0;
    expectation(f, want, sizeof want);
    snprintf(why, whylen, "%s must be %s%s%s%s", f->attr, want,
             *detail ? " (" : "", detail, *detail ? ")" : "");
    return -1;
}

static void attr_list(const catalog_field *fields, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (const catalog_field *f = fields; f->attr && used + 1 < len; f++) {
        int w = snprintf(buf + used, len - used, "%s, ", f->attr);
        if (w < 0) break;
        used += (size_t)w;
    }
    snprintf(buf + (used < len ? used : len - 1), len - (used < len ? used : len - 1), "base");
}

/* ---- Elements -------------------------------------------------------------- */

static char *attr_value(xmlNode *e, xmlAttr *a) {
    xmlChar *z = xmlNodeListGetString(e->doc, a->children, 1);
    return z ? (char *)z : (char *)xmlStrdup((const xmlChar *)"");
}

/* An entry element may hold comments and blanks, nothing else. */
static int check_empty(load *l, xmlNode *e, const char *file) {
    for (xmlNode *ch = e->children; ch; ch = ch->next) {
        if (ch->type == XML_COMMENT_NODE || ch->type == XML_PI_NODE) continue;
        if ((ch->type == XML_TEXT_NODE || ch->type == XML_CDATA_SECTION_NODE) && xmlIsBlankNode(ch)) continue;
        if (ch->type == XML_ELEMENT_NODE)
            return fail(l, file, xmlGetLineNo(ch), "<%s>: unexpected element <%s> inside <%s>; catalog entries have no children",
                        (const char *)ch->name, (const char *)ch->name, (const char *)e->name);
        return fail(l, file, xmlGetLineNo(e), "<%s>: unexpected text inside <%s>", (const char *)e->name,
                    (const char *)e->name);
    }
    return 0;
}

/* Read one entry element (<gpu>, <nic>...) into the staging list. */
static int read_entry(load *l, xmlNode *e, const char *file) {
    const char *el = (const char *)e->name;
    long line = xmlGetLineNo(e);
    int kind = kind_index(el);
    size_t size = 0, nfields = 0;
    const catalog_field *fields = kind >= 0 ? catalog_fields_for(el, &size) : NULL;
    unsigned char given[MAX_FIELDS] = { 0 };
    char *base = NULL, *value = NULL;
    char why[512], list[1024];
    void *entry = NULL;
    int rc = -1;

    if (!fields)
        return fail(l, file, line, "<%s>: unknown element; expected one of: gpu, nic, node, storage, llm, stack, "
                    "engine, failure-profile", el);
    if (kind != KIND_PROFILE && check_empty(l, e, file) != 0) return -1;
    while (fields[nfields].attr) nfields++;
    assert(nfields <= MAX_FIELDS);

    entry = calloc(1, size);
    if (!entry) return fail(l, file, line, "out of memory");
    base = (char *)xmlGetNoNsProp(e, (const xmlChar *)"base");
    if (base) {
        const void *from = lookup(l, kind, base);
        if (!from) {
            names(l, kind, list, sizeof list);
            fail(l, file, line, "<%s base=\"%s\">: base '%s' is not a %s in the catalog; expected one of: %s",
                 el, base, base, el, list);
            goto done;
        }
        memcpy(entry, from, size);
    } else {
        catalog_defaults(fields, entry);
    }

    for (xmlAttr *a = e->properties; a; a = a->next) {
        const char *name = (const char *)a->name;
        const char *prefix = a->ns && a->ns->prefix ? (const char *)a->ns->prefix : NULL;
        const catalog_field *f = NULL;
        xmlFree(value);
        value = attr_value(e, a);
        if (!value) { fail(l, file, line, "out of memory"); goto done; }
        if (!a->ns && strcmp(name, "base") == 0) continue;
        for (size_t i = 0; i < nfields && !f && !a->ns; i++)
            if (strcmp(fields[i].attr, name) == 0) f = &fields[i];
        if (!f) {
            char qname[128];
            snprintf(qname, sizeof qname, "%s%s%s", prefix ? prefix : "", prefix ? ":" : "", name);
            attr_list(fields, list, sizeof list);
            fail(l, file, line, "<%s %s=\"%.80s\">: unknown attribute '%s'; expected one of: %s", el, qname,
                 value, qname, list);
            goto done;
        }
        if (set_field(f, entry, value, why, sizeof why) != 0) {
            fail(l, file, line, "<%s %s=\"%.80s\">: %s", el, name, value, why);
            goto done;
        }
        given[f - fields] = 1;
    }

    for (size_t i = 0; i < nfields; i++) {
        const catalog_field *f = &fields[i];
        if (given[i] || !f->required || (base && strcmp(f->attr, "name") != 0)) continue;
        expectation(f, why, sizeof why);
        if (given[0] && strcmp(fields[0].attr, "name") == 0)
            fail(l, file, line, "<%s name=\"%s\">: missing required attribute '%s' (%s)", el,
                 (const char *)entry, f->attr, why);
        else
            fail(l, file, line, "<%s>: missing required attribute '%s' (%s)", el, f->attr, why);
        goto done;
    }
    if (kind == KIND_PROFILE && catalog_cause_read(e, entry, base != NULL, file, l->err, l->errlen) != 0) goto done;

    rc = stage(l, kind, entry, file, line);
    entry = NULL;   /* owned by the load now, or freed by stage() */
done:
    free(entry);
    xmlFree(base);
    xmlFree(value);
    return rc;
}

/* Read every entry under a <catalog> element. */
static int read_catalog(load *l, xmlNode *cat, const char *file) {
    if (!cat || cat->type != XML_ELEMENT_NODE || strcmp((const char *)cat->name, "catalog") != 0)
        return fail(l, file, cat ? xmlGetLineNo(cat) : 0, "<%s>: expected a <catalog> element",
                    cat && cat->name ? (const char *)cat->name : "?");
    if (cat->properties)
        return fail(l, file, xmlGetLineNo(cat), "<catalog %s=...>: unknown attribute '%s'; <catalog> takes none",
                    (const char *)cat->properties->name, (const char *)cat->properties->name);
    for (xmlNode *e = cat->children; e; e = e->next) {
        if (e->type == XML_ELEMENT_NODE) {
            if (read_entry(l, e, file) != 0) return -1;
        } else if (e->type == XML_COMMENT_NODE || e->type == XML_PI_NODE ||
                   ((e->type == XML_TEXT_NODE || e->type == XML_CDATA_SECTION_NODE) && xmlIsBlankNode(e))) {
            continue;
        } else {
            return fail(l, file, xmlGetLineNo(e) > 0 ? xmlGetLineNo(e) : xmlGetLineNo(cat),
                        "<catalog>: unexpected text; expected only gpu, nic, node, storage, llm, stack, engine, "
                        "failure-profile elements");
        }
    }
    return 0;
}

/* A node's gpu and nic must name entries of the catalog or of this load. */
static int check_refs(load *l) {
    static const struct { const char *attr; size_t offset; int kind; } refs[] = {
        { "gpu", offsetof(node_spec, gpu), 0 },
        { "nic", offsetof(node_spec, nic), 1 },
    };
    char list[1024];
    for (int i = 0; i < l->n; i++) {
        if (strcmp(kinds[l->v[i].kind], "node") != 0) continue;
        for (size_t r = 0; r < sizeof refs / sizeof refs[0]; r++) {
            const char *z = (const char *)l->v[i].entry + refs[r].offset;
            if (lookup(l, refs[r].kind, z)) continue;
            names(l, refs[r].kind, list, sizeof list);
            return fail(l, l->v[i].file, l->v[i].line, "<node %s=\"%s\">: %s '%s' is not in the catalog; expected one of: %s",
                        refs[r].attr, z, refs[r].attr, z, list);
        }
    }
    return 0;
}

static int commit(load *l) {
    for (int i = 0; i < l->n; i++)
        if (catalog_put(l->c, kinds[l->v[i].kind], l->v[i].entry) != 0)
            return fail(l, l->v[i].file, l->v[i].line, "out of memory");
    return 0;
}

static int finish(load *l) {
    int rc = check_refs(l) == 0 && commit(l) == 0 ? 0 : -1;
    load_free(l);
    return rc;
}

/* ---- Parsing --------------------------------------------------------------- */

/* Parse len bytes of XML (scenarios/xml.c: nothing outside the text is
 * read, entities stay unexpanded). Returns the document (the caller frees
 * it with xmlFreeDoc), or NULL with err set. */
static xmlDoc *parse(const char *xml, size_t len, const char *file, char *err, size_t errlen) {
    xml_errors e = { 0 };
    int too_large;
    xmlDoc *doc = xml_parse(xml, len, file, XML_PARSE_NOBLANKS | XML_PARSE_BIG_LINES, &e, &too_large);
    if (too_large) {
        fail_raw(err, errlen, file, 0, "file too large");
    } else if (e.oom) {
        fail_raw(err, errlen, file, 0, "out of memory");
    } else if (!doc) {
        char msg[256];
        snprintf(msg, sizeof msg, "%.*s", (int)sizeof msg - 1, e.n_errors ? e.first_error.msg : "");
        size_t n = strlen(msg);
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
        fail_raw(err, errlen, file, e.n_errors ? e.first_error.line : 0, "malformed XML: %s", n ? msg : "cannot parse");
    } else if (doc->intSubset) {
        fail_raw(err, errlen, file, 0, "a DOCTYPE is not allowed in a catalog file");
        xmlFreeDoc(doc);
        doc = NULL;
    }
    return doc;
}

static int read_doc(load *l, const char *xml, size_t len, const char *file) {
    xmlDoc *doc = parse(xml, len, file, l->err, l->errlen);
    int rc;
    if (!doc) return -1;
    rc = read_catalog(l, xmlDocGetRootElement(doc), file);
    xmlFreeDoc(doc);
    return rc;
}

/* ---- Public ---------------------------------------------------------------- */

int catalog_load_memory(catalog *c, const char *xml, size_t len, const char *file, char *err, size_t errlen) {
    load l;
    if (!file) file = "<memory>";
    load_init(&l, c, err, errlen);
    if (read_doc(&l, xml, len, file) != 0) {
        load_free(&l);
        return -1;
    }
    return finish(&l);
}

int catalog_load_file(catalog *c, const char *path, char *err, size_t errlen) {
    char *buf;
    size_t n;
    infile_err e;
    if (err && errlen) err[0] = 0;
    if (infile_read(path, INFILE_CATALOG_MAX_BYTES, "a catalog XML file", &buf, &n, &e) < 0)
        return fail_raw(err, errlen, path, e.line, "%s", e.why);
    int rc = catalog_load_memory(c, buf, n, path, err, errlen);
    free(buf);
    return rc;
}

int catalog_load_element(catalog *c, const void *xml_node, const char *file, char *err, size_t errlen) {
    load l;
    if (!file) file = "<memory>";
    load_init(&l, c, err, errlen);
    if (read_catalog(&l, (xmlNode *)xml_node, file) != 0) {
        load_free(&l);
        return -1;
    }
    return finish(&l);
}

int catalog_load_builtin(catalog *c, char *err, size_t errlen) {
    static const size_t dirlen = sizeof CATALOG_DIR - 1;
    load l;
    int files = 0;
    load_init(&l, c, err, errlen);
    for (const embedded_file *f = embedded_files; f->path; f++) {
        size_t n = strlen(f->path);
        if (strncmp(f->path, CATALOG_DIR, dirlen) != 0 || n < 4 || strcmp(f->path + n - 4, ".xml") != 0) continue;
        files++;
        if (read_doc(&l, f->data, f->size, f->path) != 0) {
            load_free(&l);
            return -1;
        }
    }
    if (files == 0) {
        load_free(&l);
        return fail_raw(err, errlen, "catalog", 0, "no " CATALOG_DIR "*.xml files are compiled into the program");
    }
    return finish(&l);
}
