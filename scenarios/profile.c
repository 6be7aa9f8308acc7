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

#include "models/calibrate_gpu.h"
#include "scenarios/infile.h"
#include "scenarios/xml.h"

#define MAX_DEPTH_HREF 1                /* a profile file may not itself refer to another */

/* Values are at most HOST_PARAM_MAX (models/host.h). */
#define PROFILE_MAX_VALUE HOST_PARAM_MAX

/* A profile number: plain decimal ("1.5e10", "0.25", "3", "-0"): no "+", no
 * hex ("0x10" was read as 16), no inf or nan ("NaN" was accepted as a
 * stderr), finite and from 0 to PROFILE_MAX_VALUE ("1e309" is not), no
 * blanks. Returns 0 with *out set, or -1. */
static int profile_number(const char *z, double *out) {
    const char *p = z;
    int digits = 0;
    if (*p == '-') p++;                   /* "-0" as a writer may print zero; below 0 is refused */
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++) digits++;
    if (!digits) return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return -1;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p) return -1;
    errno = 0;
    double v = strtod(z, NULL);
    if (!isfinite(v) || v < 0 || v > PROFILE_MAX_VALUE || (errno == ERANGE && v != 0)) return -1;
    *out = v + 0.0;                       /* -0 is 0 */
    return 0;
}

/* An element's line; libxml2 gives -1 when it has none. */
static long line_no(const xmlNode *e) {
    long n = xmlGetLineNo(e);
    return n < 1 ? 1 : n;
}

static int from_element(const xmlNode *root, const char *file, const char *base_dir, host_profile *out,
                        gpu_profile *gout, char *err, size_t errlen, int depth);

static int load_file(const char *path, host_profile *h, gpu_profile *g, char *err, size_t errlen, int depth) {
    /* scenarios/infile.c: a regular file of at most 1 MiB; a FIFO or device
     * is refused, never waited on. */
    char *text;
    size_t len;
    if (infile_load(path, INFILE_PROFILE_MAX_BYTES, "a host profile XML file", &text, &len, err, errlen) < 0)
        return -1;
    /* Its messages go to whoever captures them now (a scenario naming
     * the file with href= does); ours says what is expected. */
    xmlDoc *doc = xml_parse(text, len, path, XML_PARSE_NOWARNING | XML_PARSE_NOERROR, NULL, NULL);
    free(text);
    if (!doc) {
        snprintf(err, errlen, "%s:1: malformed XML; expected a <host-profile> document", path);
        return -1;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    int rc;
    if (!root || !xml_is(root, "host-profile")) {
        snprintf(err, errlen, "%s:%ld: <%s>: expected <host-profile> as the root element", path,
                 root ? line_no(root) : 1L, root ? (const char *)root->name : "");
        rc = -1;
    } else {
        char dir[512];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
        rc = from_element(root, path, dir, h, g, err, errlen, depth);
    }
    xmlFreeDoc(doc);
    return rc;
}

/* One <param name= value= [unit=] [stderr=]> of the host model (gpu 0) or
 * of a <gpu-profile> (gpu 1): the name known, the numbers plain decimals
 * from 0 to PROFILE_MAX_VALUE, the unit the parameter's. 0 with name, *v
 * and *sd (NaN when not given) set, or -1 with err. */
static int read_param(const xmlNode *e, const char *file, int gpu, char *name, size_t namelen, double *v,
                      double *sd, char *err, size_t errlen) {
    char *pn = xml_prop(e, "name"), *pv = xml_prop(e, "value"), *pu = xml_prop(e, "unit"), *ps = xml_prop(e, "stderr");
    host_profile any;
    int known = pn && (gpu ? gpu_param_known(pn) : host_param(&any, pn) != NULL);
    const char *unit = !pn ? "" : gpu ? gpu_param_unit(pn) : host_param_unit(pn);
    int rc = -1;
    *sd = NAN;
    if (!pn || !pv)
        snprintf(err, errlen, "%s:%ld: <param>: expected name and value attributes", file, line_no(e));
    else if (!known)
        snprintf(err, errlen, "%s:%ld: <param name=\"%s\">: unknown parameter (known: %s)", file, line_no(e), pn,
                 gpu ? "gpu.gemm.<precision>.eff, gpu.gemm.<precision>.half_dim, gpu.hbm.eff, gpu.copy.latency_s, "
                       "gpu.pcie.bw, gpu.pcie.latency_s; see models/gpu_profile.h"
                     : "copy.*, gemm.fp64.*, gemm.fp32.*, storage.*, coll.<op>.*; see models/host.h");
    else if (profile_number(pv, v) < 0)
        snprintf(err, errlen, "%s:%ld: <param name=\"%s\" value=\"%.60s\">: value must be a decimal number from 0 to "
                              "%g in SI units (%s)", file, line_no(e), pn, pv, PROFILE_MAX_VALUE, *unit ? unit : "a ratio");
    else if (ps && profile_number(ps, sd) < 0)
        snprintf(err, errlen, "%s:%ld: <param name=\"%s\" stderr=\"%.60s\">: stderr must be a decimal number from 0 "
                              "to %g in the value's units", file, line_no(e), pn, ps, PROFILE_MAX_VALUE);
    else if (pu && strcmp(pu, unit))
        snprintf(err, errlen, "%s:%ld: <param name=\"%s\" unit=\"%.60s\">: unit must be %s%s%s (values are in SI "
                              "units)", file, line_no(e), pn, pu, *unit ? "\"" : "empty", unit, *unit ? "\"" : "");
    else
        rc = 0;
    if (rc == 0) snprintf(name, namelen, "%s", pn);
    xmlFree(pn);
    xmlFree(pv);
    xmlFree(pu);
    xmlFree(ps);
    return rc;
}

/* <gpu-profile gpu="CATALOG-GPU"> and its <param name="gpu.*"> children,
 * each within the physical bounds a fit must meet (models/calibrate_gpu.h). */
static int read_gpu_profile(const xmlNode *ge, const char *file, gpu_profile *g, char *err, size_t errlen) {
    char *name = xml_prop(ge, "gpu");
    int ok = name && *name && strlen(name) < sizeof g->gpu;
    if (ok) snprintf(g->gpu, sizeof g->gpu, "%s", name);
    xmlFree(name);
    g->line = (int)line_no(ge);
    if (!ok) {
        snprintf(err, errlen, "%s:%ld: <gpu-profile>: expected gpu=\"NAME\", the catalog GPU it was measured on "
                              "(e.g. H200-SXM-141GB)", file, line_no(ge));
        return -1;
    }
    for (const xmlNode *e = ge->children; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE) continue;
        char pn[48], why[96];
        double v, sd;
        if (!xml_is(e, "param")) {
            snprintf(err, errlen, "%s:%ld: <%s>: expected <param name=\"gpu.*\" value=...> in <gpu-profile>", file,
                     line_no(e), (const char *)e->name);
            return -1;
        }
        if (read_param(e, file, 1, pn, sizeof pn, &v, &sd, err, errlen) < 0) return -1;
        if (!calibrate_gpu_check(pn, v, why, sizeof why)) {
            snprintf(err, errlen, "%s:%ld: <param name=\"%s\" value=\"%g\">: value must be %s", file, line_no(e), pn,
                     v, why);
            return -1;
        }
        if (gpu_profile_set(g, pn, v, sd) < 0) {
            snprintf(err, errlen, "%s:%ld: <param name=\"%s\">: too many parameters", file, line_no(e), pn);
            return -1;
        }
    }
    return 0;
}

/* <host-profile href="FILE">: the file, relative to base_dir. */
static int from_href(const xmlNode *root, char *href, const char *file, const char *base_dir, host_profile *out,
                     gpu_profile *gout, char *err, size_t errlen, int depth) {
    host_profile h;
    gpu_profile g;
    memset(&g, 0, sizeof g);
    host_profile_default(&h);
    int rc = -1;
    if (depth >= MAX_DEPTH_HREF) {
        snprintf(err, errlen, "%s:%ld: <host-profile href=\"%s\">: a profile file cannot refer to another",
                 file, line_no(root), href);
    } else if (root->children && xmlFirstElementChild((xmlNode *)root)) {
        snprintf(err, errlen, "%s:%ld: <host-profile href=\"%s\">: either href or <param> children, not both",
                 file, line_no(root), href);
    } else {
        char path[1024];
        if (href[0] == '/' || !base_dir || !*base_dir) snprintf(path, sizeof path, "%s", href);
        else snprintf(path, sizeof path, "%s/%s", base_dir, href);
        char sub[1024];
        rc = load_file(path, &h, &g, sub, sizeof sub, depth + 1);
        if (rc < 0)
            snprintf(err, errlen, "%s:%ld: <host-profile href=\"%s\">: %s", file, line_no(root), href, sub);
    }
    if (rc == 0) *out = h;
    if (rc == 0 && gout) *gout = g;
    return rc;
}

static int from_element(const xmlNode *root, const char *file, const char *base_dir, host_profile *out, gpu_profile *gout,
                        char *err, size_t errlen, int depth) {
    char *href = xml_prop(root, "href");
    if (href) {
        int rc = from_href(root, href, file, base_dir, out, gout, err, errlen, depth);
        xmlFree(href);
        return rc;
    }
    host_profile h;
    gpu_profile g;
    memset(&g, 0, sizeof g);
    host_profile_default(&h);
    char *name = xml_prop(root, "name"), *source = xml_prop(root, "source");
    if (name) snprintf(h.name, sizeof h.name, "%s", name);
    snprintf(h.source, sizeof h.source, "%s", source ? source : file);
    xmlFree(name);
    xmlFree(source);
    for (const xmlNode *e = root->children; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE) continue;
        if (xml_is(e, "gpu-profile")) {
            if (g.line) {
                snprintf(err, errlen, "%s:%ld: <gpu-profile>: one <gpu-profile> per profile (the first is at line %d)",
                         file, line_no(e), g.line);
                return -1;
            }
            if (read_gpu_profile(e, file, &g, err, errlen) < 0) return -1;
            continue;
        }
        if (!xml_is(e, "param")) {
            snprintf(err, errlen, "%s:%ld: <%s>: expected <param name=... value=...> or <gpu-profile gpu=...> in "
                                  "<host-profile>", file, line_no(e), (const char *)e->name);
            return -1;
        }
        char pn[48];
        double v, sd;
        if (read_param(e, file, 0, pn, sizeof pn, &v, &sd, err, errlen) < 0) return -1;
        *host_param(&h, pn) = v;
    }
    if (gout) *gout = g;
    *out = h;
    return 0;
}

int profile_load(const char *path, host_profile *h, char *err, size_t errlen) {
    return load_file(path, h, NULL, err, errlen, 0);
}

int profile_load_gpu(const char *path, host_profile *h, gpu_profile *g, char *err, size_t errlen) {
    return load_file(path, h, g, err, errlen, 0);
}

int profile_from_element(const void *node, const char *file, const char *base_dir, host_profile *h, gpu_profile *g,
                         char *err, size_t errlen) {
    return from_element(node, file, base_dir, h, g, err, errlen, 0);
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

/* The XML declaration and the comment (NULL: none) of a written profile. */
static void put_prolog(FILE *f, const char *comment) {
    fprintf(f, "<?xml version=\"1.0\"?>\n");
    if (comment) {
        fputs("<!--\n", f);
        put_xml(f, comment, 0);
        fputs("\n-->\n", f);
    }
}

/* <gpu-profile gpu="..."> with each of g's parameters (none when g is NULL
 * or empty). */
static void write_gpu(FILE *f, const gpu_profile *g) {
    if (!g || !g->gpu[0] || g->n == 0) return;
    fputs("  <gpu-profile gpu=\"", f);
    put_xml(f, g->gpu, 1);
    fputs("\">\n", f);
    for (int i = 0; i < g->n; i++) {
        const char *unit = gpu_param_unit(g->name[i]);
        fprintf(f, "    <param name=\"%s\" value=\"%.6g\"", g->name[i], g->value[i]);
        if (*unit) fprintf(f, " unit=\"%s\"", unit);
        if (isfinite(g->stderr_[i]) && g->stderr_[i] >= 0 && g->stderr_[i] <= PROFILE_MAX_VALUE)
            fprintf(f, " stderr=\"%.3g\"", g->stderr_[i]);
        fputs("/>\n", f);
    }
    fputs("  </gpu-profile>\n", f);
}

int profile_write(FILE *f, const host_profile *h, const double *stderr_of, const gpu_profile *g, const char *comment,
                  char *err, size_t errlen) {
    const char *const *names = host_param_names();
    for (int i = 0; names[i]; i++)
        if (!(host_param_get(h, names[i]) >= 0 && host_param_get(h, names[i]) <= HOST_PARAM_MAX)) {
            snprintf(err, errlen, "profile %s: parameter %s is %g, not a number from 0 to %g", h->name, names[i],
                     host_param_get(h, names[i]), HOST_PARAM_MAX);
            return -1;
        }
    put_prolog(f, comment);
    fputs("<host-profile name=\"", f);
    put_xml(f, h->name, 1);
    fputs("\" source=\"", f);
    put_xml(f, h->source, 1);
    fputs("\">\n", f);
    for (int i = 0; names[i]; i++) {
        const char *unit = host_param_unit(names[i]);
        fprintf(f, "  <param name=\"%s\" value=\"%.6g\"", names[i], host_param_get(h, names[i]));
        if (*unit) fprintf(f, " unit=\"%s\"", unit);
        /* a standard error past what the reader takes says only "unknown" */
        if (stderr_of && isfinite(stderr_of[i]) && stderr_of[i] >= 0 && stderr_of[i] <= HOST_PARAM_MAX)
            fprintf(f, " stderr=\"%.3g\"", stderr_of[i]);
        fputs("/>\n", f);
    }
    write_gpu(f, g);
    fputs("</host-profile>\n", f);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot write the profile: %s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int profile_write_failures(FILE *f, const failfit_row *rows, int n, const char *comment, char *err, size_t errlen) {
    put_prolog(f, comment);
    fputs("<failures>\n", f);
    for (int i = 0; i < n; i++) {
        const failfit_row *r = &rows[i];
        if (!(r->r.events > 0) || !isfinite(r->r.mtbf_s)) continue;
        fprintf(f, "  <failure component=\"%s\" cause=\"", rel_component_name((rel_component)r->component));
        put_xml(f, r->cause, 1);
        if (r->weibull)
            fprintf(f, "\" mtbf=\"%.6gs\" distribution=\"weibull\" shape=\"%.3g\"", r->wb_mtbf_s, r->wb.shape);
        else
            fprintf(f, "\" mtbf=\"%.6gs\"", r->r.mtbf_s);
        if (r->needs_repair && r->mttr_s > 0) fprintf(f, " mttr=\"%.6gs\"", r->mttr_s);
        fputs("/>\n", f);
    }
    fputs("</failures>\n", f);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot write the failure profile: %s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int profile_apply_gpu(scenario *s, const gpu_profile *g, char *err, size_t errlen) {
    if (!g || !g->gpu[0]) return 0;
    const gpu_spec *cat = catalog_gpu(s->cat, g->gpu);
    int used = 0;
    for (int i = 0; i < s->n_nodes && !used; i++) {
        const node_spec *nd = scenario_node_spec(s, i);
        used = nd && !strcmp(nd->gpu, g->gpu);
    }
    if (!cat || !used) {
        const node_spec *nd = s->n_nodes > 0 ? scenario_node_spec(s, 0) : NULL;
        snprintf(err, errlen, "<gpu-profile gpu=\"%s\">: %s%s%s", g->gpu,
                 !cat ? "no GPU of that name in the catalog" : "the scenario has no node with this GPU",
                 nd ? "; its nodes have " : "", nd ? nd->gpu : "");
        return -1;
    }
    gpu_spec spec = *cat;
    gpu_profile_apply(g, &spec, NULL);
    int rc = catalog_put_gpu(s->cat, &spec);
    for (int i = 0; rc == 0 && i < catalog_count(s->cat, "node"); i++) {
        node_spec nd = *(const node_spec *)catalog_at(s->cat, "node", i);
        if (strcmp(nd.gpu, g->gpu)) continue;
        gpu_profile_apply(g, NULL, &nd);
        rc = catalog_put_node(s->cat, &nd);
    }
    if (rc < 0) snprintf(err, errlen, "out of memory");
    return rc;
}
