/*
 * load_failref: <failures href="P.xml"/>, a scenario's failure processes
 * taken from a failure profile file (what `clustertwin fit-failures`
 * writes: a <failures> root of <failure> elements, docs/fit-failures.md)
 * instead of copies of its lines.
 *
 * The path is relative to the scenario's folder (scenario_path). The file
 * is read with the scenario's own rules (scenarios/infile.c: a regular
 * file, here of at most 1 MiB; no DOCTYPE; xml.c's safe parse), checked
 * against the same grammar as a <failures> written in place, and each
 * <failure> read by the same loader (load_failure). Every message names
 * the profile file and its line; a file that cannot be read is said at the
 * scenario's <failures> line. The profile holds <failure> elements only:
 * detection and recovery times (watchdog=, restart=, ...) stay on the
 * scenario's <failures>, and a profile does not refer to another.
 * The scenario's own <failure> children, if any, come after the file's.
 */
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "models/reliability.h"
#include "scenarios/infile.h"
#include "scenarios/load.h"
#include "scenarios/validate.h"

/* The profile's root: <failures>, no attributes, <failure> children
 * without children (so the depth is bounded before indexing). NULL with y
 * failed otherwise. */
static xmlNode *profile_root(xml_src *y, xmlDoc *doc) {
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!doc) xml_fail_at(y, 1, "malformed XML");             /* when libxml2 said nothing */
    else if (xml_doctype_line(doc))
        xml_fail_at(y, xml_doctype_line(doc), "<!DOCTYPE>: document type declarations are not allowed");
    else if (!root || strcmp((const char *)root->name, "failures"))
        xml_fail_at(y, root ? (int)xmlGetLineNo(root) : 1,
                    "<%s>: expected <failures> as the root element (a failure profile, as fit-failures writes)",
                    root ? (const char *)root->name : "");
    else if (root->properties)
        xml_fail(y, root, (const char *)root->properties->name,
                 "a failure profile holds <failure> elements only; set detection and recovery on the "
                 "scenario's <failures>, and a profile may not refer to another");
    for (const xmlNode *e = root && !y->failed ? root->children : NULL; e && !y->failed; e = e->next)
        for (const xmlNode *c = e->children; c && !y->failed; c = c->next)
            if (c->type == XML_ELEMENT_NODE) xml_fail(y, c, NULL, "expected no element inside <%s>", e->name);
    if (!y->failed && xml_src_index(y, root) < 0) xml_fail_at(y, 1, "out of memory");
    return y->failed ? NULL : root;
}

/* Check the profile against the grammar: its <failures> under a
 * <scenario> of its own, as in a scenario file. */
static void profile_validate(xml_src *y, xmlDoc *doc, xmlNode *root) {
    xmlNode *wrap = xmlNewDocNode(doc, NULL, BAD_CAST "scenario", NULL);
    if (!wrap || !xmlNewProp(wrap, BAD_CAST "name", BAD_CAST "failure-profile")) {
        xmlFreeNode(wrap);
        xml_fail_at(y, 1, "out of memory");
        return;
    }
    xmlDocSetRootElement(doc, wrap);
    xmlAddChild(wrap, root);
    validate_scenario(y, doc);
}

/* Each <failure> of the profile, read on y as if in place; line: the
 * scenario's <failures> line, where the world's later messages point. */
static void profile_load(loader *L, xml_src *y, const xmlNode *root, int line) {
    xml_src scen = L->x;
    L->x = *y;
    for (const xmlNode *e = root->children; e && !L->x.failed; e = e->next) {
        if (!xml_is(e, "failure")) continue;
        load_failure(L, e, line);
        if (L->x.failed) break;
        const sc_failure *f = &L->s->failures[L->s->n_failures - 1];
        rel_spec spec = { f->component, f->profile, f->mtbf_s, f->distribution, f->shape, f->mttr_s, f->cause };
        char why[256];
        if (rel_expand(L->s->cat, &spec, 1, NULL, 0, why, sizeof why) < 0) xml_fail(&L->x, e, NULL, "%s", why);
    }
    *y = L->x;
    L->x = scen;
    L->x.failed |= y->failed;
}

void load_failures_href(loader *L, const xmlNode *sec) {
    char href[512], path[1024], *text = NULL;
    size_t len = 0;
    infile_err ie;
    if (attr_str(&L->x, sec, "href", href, sizeof href, 1) < 0) return;
    if (scenario_path(L->s->file, href, path, sizeof path) < 0)
        FAIL_RETURN(L, sec, "href", "the path is longer than %zu bytes", sizeof path - 1);
    if (infile_read(path, INFILE_PROFILE_MAX_BYTES, "a failure profile XML file", &text, &len, &ie) < 0)
        FAIL_RETURN(L, sec, "href", "%s: %s", path, ie.why);
    xml_src y = { .file = path, .err = L->x.err, .errlen = L->x.errlen };
    xmlDoc *doc = NULL;
    xmlNode *root = NULL;
    if (len == 0) xml_fail_at(&y, 1, "empty file; expected a <failures> document");
    else if (xml_src_set_text(&y, text, len) < 0) xml_fail_at(&y, 1, "out of memory");
    free(text);
    if (!y.failed) {
        xml_src_begin(&y);                  /* libxml2's messages are the profile's */
        doc = xml_parse(y.text, y.text_len, path, XML_PARSE_NOCDATA | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES,
                        NULL, NULL);
        root = profile_root(&y, doc);
        if (root) profile_validate(&y, doc, root);
        xml_src_end(&y);
    }
    if (root && !y.failed) profile_load(L, &y, root, xml_line(&L->x, sec));
    L->x.failed |= y.failed;
    xml_src_free(&y);
    xmlFreeDoc(doc);
}
