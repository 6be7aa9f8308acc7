/*
 * catalog_cause: the causes of a catalog failure profile (see
 * catalog_cause.h).
 */
#include "scenarios/catalog_cause.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"

static const char *const attrs[] = { "label", "component", "count", "detection", "repair" };
#define NATTRS ((int)(sizeof attrs / sizeof attrs[0]))

/* "file:line: " and the message; returns -1. */
static int fail(char *err, size_t errlen, const char *file, const xmlNode *e, const char *fmt, ...) {
    if (!err || !errlen) return -1;
    int w = snprintf(err, errlen, "%s:%ld: ", file, xmlGetLineNo(e));
    if (w < 0 || (size_t)w >= errlen) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + w, errlen - (size_t)w, fmt, ap);
    va_end(ap);
    return -1;
}

/* Set attribute i of cause c from its text z; NULL, or what was expected. */
static const char *set_attr(rel_cause *c, int i, const char *z) {
    double v;
    char detail[128];
    switch (i) {
    case 0:
        if (!*z || strlen(z) >= sizeof c->label) return "a non-empty label of at most 47 characters";
        snprintf(c->label, sizeof c->label, "%s", z);
        return NULL;
    case 1:
        if ((v = rel_component_parse(z)) < 0) return "one of gpu, hbm, node, nic, switch, storage, software";
        c->component = (rel_component)v;
        return NULL;
    case 2:
        if (units_parse(z, UNIT_NUMBER, &v, detail, sizeof detail) != 0 || !(v > 0))
            return "a positive number (failures in the profile's window; a mean rate may give a fraction)";
        c->count = v;
        return NULL;
    case 3:
        if ((v = rel_detection_parse(z)) < 0) return "crash or watchdog";
        c->detection = (rel_detection)v;
        return NULL;
    default:
        return rel_repair_parse(z, &c->needs_repair, &c->mttr_s) < 0 ? "one of " REL_REPAIR_NAMES : NULL;
    }
}

/* One <cause> element into c. */
static int read_cause(const xmlNode *e, rel_cause *c, const char *file, char *err, size_t errlen) {
    int given[NATTRS] = { 0 };
    for (xmlAttr *a = e->properties; a; a = a->next) {
        int i = 0;
        while (i < NATTRS && (a->ns || strcmp((const char *)a->name, attrs[i]) != 0)) i++;
        xmlChar *z = xmlNodeListGetString(e->doc, a->children, 1);
        if (!z) z = xmlStrdup((const xmlChar *)"");          /* an empty value, or out of memory */
        if (!z) return fail(err, errlen, file, e, "out of memory");
        const char *v = (const char *)z;
        const char *want = i < NATTRS ? set_attr(c, i, v) : NULL;
        if (i == NATTRS)
            fail(err, errlen, file, e, "<cause %s=\"%.80s\">: unknown attribute '%s'; expected one of: label, "
                 "component, count, detection, repair", (const char *)a->name, v, (const char *)a->name);
        else if (want)
            fail(err, errlen, file, e, "<cause %s=\"%.80s\">: %s must be %s", attrs[i], v, attrs[i], want);
        xmlFree(z);
        if (i == NATTRS || want) return -1;
        given[i] = 1;
    }
    for (int i = 0; i < NATTRS; i++)
        if (!given[i]) return fail(err, errlen, file, e, "<cause>: missing required attribute '%s'", attrs[i]);
    return 0;
}

/* Comments and blanks may stand between causes; nothing else. */
static int skippable(const xmlNode *ch) {
    return ch->type == XML_COMMENT_NODE || ch->type == XML_PI_NODE ||
           ((ch->type == XML_TEXT_NODE || ch->type == XML_CDATA_SECTION_NODE) && xmlIsBlankNode((xmlNode *)ch));
}

int catalog_cause_read(const xmlNode *e, rel_profile *p, int from_base, const char *file, char *err,
                       size_t errlen) {
    int n = 0;
    for (const xmlNode *ch = e->children; ch; ch = ch->next) {
        if (skippable(ch)) continue;
        if (ch->type != XML_ELEMENT_NODE || strcmp((const char *)ch->name, "cause") != 0)
            return fail(err, errlen, file, ch->type == XML_ELEMENT_NODE ? ch : e,
                        "<failure-profile name=\"%s\">: unexpected %s%s%s inside it; expected <cause> elements",
                        p->name, ch->type == XML_ELEMENT_NODE ? "element <" : "text",
                        ch->type == XML_ELEMENT_NODE ? (const char *)ch->name : "",
                        ch->type == XML_ELEMENT_NODE ? ">" : "");
        if (n == REL_PROFILE_MAX_CAUSES)
            return fail(err, errlen, file, ch, "<failure-profile name=\"%s\">: more than %d causes", p->name,
                        REL_PROFILE_MAX_CAUSES);
        rel_cause c = { .label = "" };
        if (read_cause(ch, &c, file, err, errlen) < 0) return -1;
        if (c.component == REL_NIC && p->nics < 1)
            return fail(err, errlen, file, ch, "<cause component=\"nic\">: failure profile %s observed no NICs; "
                        "give its nics= to charge a cause to them", p->name);
        p->causes[n++] = c;
    }
    if (n > 0 || !from_base) p->n_causes = n;
    if (p->n_causes == 0)
        return fail(err, errlen, file, e, "<failure-profile name=\"%s\">: a failure profile needs at least one <cause>",
                    p->name);
    return 0;
}
