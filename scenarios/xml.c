/*
 * xml: safe parsing, libxml2's messages captured, and documents with the
 * line of every start tag (see xml.h).
 *
 * Line numbers. libxml2 records the line where a start tag ends; a reader
 * looks where it begins. One pass over the (well-formed) text finds every
 * start tag's line, and the elements are numbered in document order, so an
 * element's line is one array read: scanning the text per element was
 * quadratic in a file of many elements (60,000 <nodes> took 21 s).
 *
 *   text:      <scenario ...>\n  <cluster>\n    <nodes\n      count="4"/>
 *   tag_line:  [ 1,              2,             3 ]
 *   elements:  scenario._private = 1, cluster = 2, nodes = 3
 */
#include "scenarios/xml.h"
#include "scenarios/scenario.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/globals.h>
#include <libxml/parser.h>

#include "base/grow.h"

/* ---- libxml2's messages ------------------------------------------------------- */

static void silent(void *ctx, const char *fmt, ...) {
    (void)ctx;
    (void)fmt;
}

static void report_of(xml_report *r, const xmlError *x) {
    snprintf(r->msg, sizeof r->msg, "%s", x->message ? x->message : "malformed XML");
    r->line = x->line;
}

void xml_errors_capture(void *ctx, xmlErrorPtr x) {
    xml_errors *e = ctx;
    if (!e || !x) return;
    if (x->code == XML_ERR_NO_MEMORY) e->oom = 1;
    if (e->n++ == 0) report_of(&e->first, x);
    if (x->level >= XML_ERR_ERROR && e->n_errors++ == 0) report_of(&e->first_error, x);
}

xml_handlers xml_errors_begin(xml_errors *e) {
    xml_handlers h = { xmlGenericError, xmlGenericErrorContext, xmlStructuredError, xmlStructuredErrorContext };
    xmlSetGenericErrorFunc(NULL, silent);     /* (NULL, NULL) would restore the printer to stderr */
    xmlSetStructuredErrorFunc(e, xml_errors_capture);
    return h;
}

void xml_errors_end(xml_handlers h) {
    xmlSetGenericErrorFunc(h.generic_ctx, h.generic);
    xmlSetStructuredErrorFunc(h.structured_ctx, h.structured);
}

/* ---- parsing ---------------------------------------------------------------- */

xmlDoc *xml_parse(const char *text, size_t len, const char *file, int options, xml_errors *e, int *too_large) {
    if (too_large) *too_large = 0;
    if (len > INT_MAX) {
        if (too_large) *too_large = 1;
        return NULL;
    }
    /* Nothing outside the text is read, no entity is expanded. */
    options |= XML_PARSE_NONET;
    options &= ~(XML_PARSE_NOENT | XML_PARSE_DTDLOAD | XML_PARSE_DTDATTR | XML_PARSE_DTDVALID | XML_PARSE_XINCLUDE);
    xml_errors none = { 0 };
    if (!e) e = &none;                  /* the caller captures: only oom is seen here */
    int oom_before = e->oom;
    xml_handlers h = { 0 };
    if (e != &none) h = xml_errors_begin(e);
    xmlParserCtxt *ctxt = xmlNewParserCtxt();
    xmlDoc *doc = ctxt ? xmlCtxtReadMemory(ctxt, text, (int)len, file, NULL, options) : NULL;
    if (e != &none) xml_errors_end(h);
    if (!ctxt) e->oom = 1;
    if (doc && (!ctxt->wellFormed || (e->oom && !oom_before))) {    /* a partial tree is no tree */
        xmlFreeDoc(doc);
        doc = NULL;
    }
    xmlFreeParserCtxt(ctxt);
    return doc;
}

int xml_doctype_line(const xmlDoc *doc) {
    if (doc->intSubset) {
        long n = xmlGetLineNo((xmlNode *)doc->intSubset);
        return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
    }
    return doc->extSubset ? 1 : 0;
}

/* ---- a document being read ------------------------------------------------------ */

int xml_src_set_text(xml_src *x, const char *z, size_t len) {
    char *t = malloc(len + 1);
    if (!t) return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (z[i] == '\r') {
            t[n++] = '\n';
            if (i + 1 < len && z[i + 1] == '\n') i++;
        } else {
            t[n++] = z[i];
        }
    }
    t[n] = 0;
    long long lines = 1;
    for (size_t i = 0; i < n; i++) lines += t[i] == '\n' && i + 1 < n;
    free(x->text);
    x->text = t;
    x->text_len = n;
    x->lines = lines > INT_MAX ? INT_MAX : (int)lines;
    return 0;
}

/* The line of every start tag, in document order: a '<' outside comments,
 * processing instructions and CDATA that is followed by a name character
 * starts an element ('<' cannot appear in attribute values or text). */
static int index_tags(xml_src *x) {
    const char *p = x->text, *end = x->text + x->text_len;
    int line = 1;
    for (; p < end; p++) {
        if (*p == '\n') {
            line++;
            continue;
        }
        if (*p != '<' || end - p < 2) continue;
        const char *close = NULL;
        if (end - p >= 4 && !memcmp(p, "<!--", 4)) close = "-->";
        else if (end - p >= 9 && !memcmp(p, "<![CDATA[", 9)) close = "]]>";
        else if (p[1] == '?') close = "?>";
        if (close) {
            size_t k = strlen(close);
            for (p += 2; p < end && !((size_t)(end - p) >= k && !memcmp(p, close, k)); p++) line += *p == '\n';
            p += k - 1;
            continue;
        }
        if (p[1] == '/' || p[1] == '!') continue;
        if (GROW(x->tag_line, x->tag_cap, (size_t)x->n_tags + 1)) return -1;
        x->tag_line[x->n_tags++] = line;
    }
    return 0;
}

/* Number the elements in document order (e->_private = k + 1, the index of
 * its start tag in tag_line). Returns the count so far. */
static int number_elements(xmlNode *e, int k) {
    for (; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE) continue;
        e->_private = (void *)(intptr_t)(++k);
        k = number_elements(e->children, k);
    }
    return k;
}

/* Forget the start tags' lines: xml_line falls back to libxml2's. */
static void drop_tag_lines(xml_src *x) {
    free(x->tag_line);
    x->tag_line = NULL;
    x->n_tags = 0;
    x->tag_cap = 0;
}

int xml_src_index(xml_src *x, xmlNode *root) {
    if (index_tags(x) < 0) return -1;
    if (number_elements(root, 0) != x->n_tags) drop_tag_lines(x);   /* not as expected: libxml2's lines */
    return 0;
}

void xml_src_begin(xml_src *x) {
    x->saved.generic = xmlGenericError;
    x->saved.generic_ctx = xmlGenericErrorContext;
    x->saved.structured = xmlStructuredError;
    x->saved.structured_ctx = xmlStructuredErrorContext;
    xmlSetGenericErrorFunc(NULL, silent);
    xmlSetStructuredErrorFunc(x, xml_src_error);
}

void xml_src_end(xml_src *x) {
    xml_errors_end(x->saved);
}

void xml_src_free(xml_src *x) {
    free(x->text);
    x->text = NULL;
    drop_tag_lines(x);
}

int xml_line(const xml_src *x, const xmlNode *e) {
    long n = xmlGetLineNo(e);
    if (e && e->type == XML_ELEMENT_NODE && e->_private && x->tag_line) {
        intptr_t k = (intptr_t)e->_private - 1;
        if (k >= 0 && k < x->n_tags) return x->tag_line[k];
    }
    return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

void xml_src_error(void *ctx, xmlErrorPtr e) {
    xml_src *x = ctx;
    if (x->failed || !e) return;
    char msg[400];
    snprintf(msg, sizeof msg, "%s", e->message ? e->message : "malformed XML");
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
    const xmlNode *node = e->node;
    const char *elem = node && node->type == XML_ELEMENT_NODE ? (const char *)node->name : NULL;
    int line = e->line > 0 ? e->line : (node ? (int)xmlGetLineNo(node) : 1);
    if (e->code == XML_ERR_NO_MEMORY) {
        xml_fail_at(x, line, "out of memory (reading the XML)");
    } else if (e->domain == XML_FROM_RELAXNGV) {
        if (elem) line = xml_line(x, node);
        xml_fail_at(x, line, "<%s>: %s (see the schema in README.md)", elem ? elem : "scenario", msg);
    } else {
        xml_fail_at(x, line, "malformed XML: %s", msg);
    }
}

void xml_fail_at(xml_src *x, int line, const char *fmt, ...) {
    if (x->failed) return;
    x->failed = 1;
    if (x->lines > 0 && line > x->lines) line = x->lines;   /* "end of data" errors */
    if (line < 1) line = 1;             /* libxml2 gives -1 for nodes it has no line for */
    int n = snprintf(x->err, x->errlen, "%s:%d: ", x->file, line);
    if (n < 0 || (size_t)n >= x->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* One line: libxml2 messages and attribute values may hold newlines. */
    for (char *p = x->err; *p; p++)
        if ((unsigned char)*p < ' ') *p = ' ';
}

/* "<training tp="3">" or "<training>" for messages. */
static const char *show(const xmlNode *e, const char *attr, char *buf, size_t len) {
    xmlChar *v = attr ? xmlGetProp(e, (const xmlChar *)attr) : NULL;
    if (v) {
        char val[96];
        snprintf(val, sizeof val, "%s", (const char *)v);
        if (strlen((const char *)v) >= sizeof val) strcpy(val + sizeof val - 4, "...");
        snprintf(buf, len, "<%s %s=\"%s\">", (const char *)e->name, attr, val);
        xmlFree(v);
    } else if ((v = xmlGetProp(e, (const xmlChar *)"name")) != NULL) {
        snprintf(buf, len, "<%s name=\"%.60s\">", (const char *)e->name, (const char *)v);
        xmlFree(v);
    } else {
        snprintf(buf, len, "<%s>", (const char *)e->name);
    }
    return buf;
}

void xml_fail(xml_src *x, const xmlNode *e, const char *attr, const char *fmt, ...) {
    if (x->failed) return;
    char what[512], tag[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    xml_fail_at(x, xml_line(x, e), "%s: %s", show(e, attr, tag, sizeof tag), what);
}

/* ---- tree helpers ---------------------------------------------------------------- */

int xml_is(const xmlNode *e, const char *name) {
    return e->type == XML_ELEMENT_NODE && strcmp((const char *)e->name, name) == 0;
}

int xml_count_children(const xmlNode *e, const char *name) {
    int n = 0;
    for (const xmlNode *c = e->children; c; c = c->next) n += xml_is(c, name);
    return n;
}

char *xml_prop(const xmlNode *e, const char *name) {
    return (char *)xmlGetProp(e, (const xmlChar *)name);
}

char *xml_attr_escape(const char *v, char q) {
    size_t n = 0;
    for (const char *p = v; *p; p++) n += *p == '&' ? 5 : *p == '<' ? 4 : *p == q ? 6 : 1;
    char *o = malloc(n + 1), *w = o;
    if (!o) return NULL;
    for (const char *p = v; *p; p++) {
        if (*p == '&') w += sprintf(w, "&amp;");
        else if (*p == '<') w += sprintf(w, "&lt;");
        else if (*p == q) w += sprintf(w, q == '"' ? "&quot;" : "&apos;");
        else *w++ = *p;
    }
    *w = 0;
    return o;
}
