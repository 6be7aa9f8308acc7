/*
 * profile: read and write hardware profile XML (see profile.h).
 */
#include "scenarios/profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define MAX_DEPTH_HREF 1                /* a profile file may not itself refer to another */

static char *prop(const xmlNode *e, const char *name) {
    return (char *)xmlGetProp(e, (const xmlChar *)name);
}

static int is_elem(const xmlNode *e, const char *name) {
    return e->type == XML_ELEMENT_NODE && !strcmp((const char *)e->name, name);
}

static int from_element(const xmlNode *root, const char *file, const char *base_dir, host_profile *out, char *err,
                        size_t errlen, int depth);

static int load_file(const char *path, host_profile *h, char *err, size_t errlen, int depth) {
    xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR);
    if (!doc) {
        if (access(path, R_OK) != 0) snprintf(err, errlen, "%s:0: cannot open: %s", path, strerror(errno));
        else snprintf(err, errlen, "%s:1: malformed XML; expected a <host-profile> document", path);
        return -1;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    int rc;
    if (!root || !is_elem(root, "host-profile")) {
        snprintf(err, errlen, "%s:%ld: <%s>: expected <host-profile> as the root element", path,
                 root ? xmlGetLineNo(root) : 1L, root ? (const char *)root->name : "");
        rc = -1;
    } else {
        char dir[512];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
        rc = from_element(root, path, dir, h, err, errlen, depth);
    }
    xmlFreeDoc(doc);
    return rc;
}

static int from_element(const xmlNode *root, const char *file, const char *base_dir, host_profile *out, char *err,
                        size_t errlen, int depth) {
    host_profile h;
    host_profile_default(&h);
    char *href = prop(root, "href");
    if (href) {
        int rc = -1;
        if (depth >= MAX_DEPTH_HREF) {
            snprintf(err, errlen, "%s:%ld: <host-profile href=\"%s\">: a profile file cannot refer to another",
                     file, xmlGetLineNo(root), href);
        } else if (root->children && xmlFirstElementChild((xmlNode *)root)) {
            snprintf(err, errlen, "%s:%ld: <host-profile href=\"%s\">: either href or <param> children, not both",
                     file, xmlGetLineNo(root), href);
        } else {
            char path[1024];
            if (href[0] == '/' || !base_dir || !*base_dir) snprintf(path, sizeof path, "%s", href);
            else snprintf(path, sizeof path, "%s/%s", base_dir, href);
            char sub[1024];
            rc = load_file(path, &h, sub, sizeof sub, depth + 1);
            if (rc < 0)
                snprintf(err, errlen, "%s:%ld: <host-profile href=\"%s\">: %s", file, xmlGetLineNo(root), href, sub);
        }
        xmlFree(href);
        if (rc == 0) *out = h;
        return rc;
    }
    char *name = prop(root, "name"), *source = prop(root, "source");
    if (name) snprintf(h.name, sizeof h.name, "%s", name);
    snprintf(h.source, sizeof h.source, "%s", source ? source : file);
    xmlFree(name);
    xmlFree(source);
    for (const xmlNode *e = root->children; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE) continue;
        if (!is_elem(e, "param")) {
            snprintf(err, errlen, "%s:%ld: <%s>: expected <param name=... value=...> in <host-profile>", file,
                     xmlGetLineNo(e), (const char *)e->name);
            return -1;
        }
        char *pn = prop(e, "name"), *pv = prop(e, "value");
        int rc = 0;
        double *slot = pn ? host_param(&h, pn) : NULL;
        if (!pn || !pv) {
            snprintf(err, errlen, "%s:%ld: <param>: expected name and value attributes", file, xmlGetLineNo(e));
            rc = -1;
        } else if (!slot) {
            snprintf(err, errlen, "%s:%ld: <param name=\"%s\">: unknown parameter (known: copy.*, gemm.fp64.*, "
                                  "gemm.fp32.*, storage.*, coll.<op>.*; see models/host.h)",
                     file, xmlGetLineNo(e), pn);
            rc = -1;
        } else {
            char *end;
            errno = 0;
            double v = strtod(pv, &end);
            if (end == pv || *end || errno || !isfinite(v) || v < 0) {
                snprintf(err, errlen, "%s:%ld: <param name=\"%s\" value=\"%s\">: value must be a number >= 0 "
                                      "in SI units (%s)",
                         file, xmlGetLineNo(e), pn, pv, *host_param_unit(pn) ? host_param_unit(pn) : "a ratio");
                rc = -1;
            } else {
                *slot = v;
            }
        }
        xmlFree(pn);
        xmlFree(pv);
        if (rc < 0) return -1;
    }
    *out = h;
    return 0;
}

int profile_load(const char *path, host_profile *h, char *err, size_t errlen) {
    return load_file(path, h, err, errlen, 0);
}

int profile_from_element(const void *node, const char *file, const char *base_dir, host_profile *h, char *err,
                         size_t errlen) {
    return from_element(node, file, base_dir, h, err, errlen, 0);
}

/* The length of the valid UTF-8 sequence at p (2 to 4), or 0. */
static int utf8_seq(const unsigned char *p) {
    unsigned c = p[0], cp;
    int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!n) return 0;
    cp = c & (0x7Fu >> n);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* z as XML text: in an attribute (attr) & < > " escaped; in a comment "--"
 * broken up. Control characters but newline (comments) as spaces and
 * invalid UTF-8 as U+FFFD, so the file is well-formed whatever z holds. */
static void put_xml(FILE *f, const char *z, int attr) {
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
        if (*p >= 0x80) {
            int n = utf8_seq(p);
            if (n) fwrite(p, 1, (size_t)n, f), p += n - 1;
            else fputs("\xEF\xBF\xBD", f);
        } else if (attr && *p == '&') fputs("&amp;", f);
        else if (attr && *p == '<') fputs("&lt;", f);
        else if (attr && *p == '>') fputs("&gt;", f);
        else if (attr && *p == '"') fputs("&quot;", f);
        else if (!attr && *p == '-' && p[1] == '-') fputc('=', f);        /* "--" may not appear in a comment */
        else if (*p < 0x20 && !(*p == '\n' && !attr)) fputc(' ', f);
        else fputc(*p, f);
    }
}

int profile_write(FILE *f, const host_profile *h, const double *stderr_of, const char *comment, char *err,
                  size_t errlen) {
    const char *const *names = host_param_names();
    for (int i = 0; names[i]; i++)
        if (!isfinite(host_param_get(h, names[i]))) {
            snprintf(err, errlen, "profile %s: parameter %s is not a finite number", h->name, names[i]);
            return -1;
        }
    fprintf(f, "<?xml version=\"1.0\"?>\n");
    if (comment) {
        fputs("<!--\n", f);
        put_xml(f, comment, 0);
        fputs("\n-->\n", f);
    }
    fputs("<host-profile name=\"", f);
    put_xml(f, h->name, 1);
    fputs("\" source=\"", f);
    put_xml(f, h->source, 1);
    fputs("\">\n", f);
    for (int i = 0; names[i]; i++) {
        const char *unit = host_param_unit(names[i]);
        fprintf(f, "  <param name=\"%s\" value=\"%.6g\"", names[i], host_param_get(h, names[i]));
        if (*unit) fprintf(f, " unit=\"%s\"", unit);
        if (stderr_of && isfinite(stderr_of[i])) fprintf(f, " stderr=\"%.3g\"", stderr_of[i]);
        fputs("/>\n", f);
    }
    fputs("</host-profile>\n", f);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot write the profile: %s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}
