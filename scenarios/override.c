/*
 * override: set scenario attributes by path (see override.h).
 *
 * Two views of the same text. libxml2 parses it to match paths against the
 * element tree; a small scanner finds the byte span of every start tag, in
 * document order, which is the tree's pre-order. Element k of the tree is
 * tag k of the text (the loader has already refused DOCTYPEs, so no entity
 * can make an element the text does not show), and an edit is a splice of
 * bytes inside that tag:
 *
 *   <nodes type="dgx-h100" count="132"/>        set count=256
 *                                 ^^^ value span replaced by "256"
 *   <spares/>                                   set warm=8 (absent)
 *          ^ " warm=\"8\"" inserted before "/>"
 *
 * Edits are applied from the end of the text backwards so earlier offsets
 * stay valid. Cost: one parse and one scan per call, O(text + matches).
 */
#include "scenarios/override.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "base/units.h"

#define MAX_STEPS 16
#define MAX_PREDS 4
#define MAX_MATCH 4096

/* ---- paths ---------------------------------------------------------------- */

typedef struct pred {
    int pos;                         /* [N]: N >= 1; 0 for an attribute test */
    char attr[64], value[128];
} pred;

typedef struct step {
    char name[64];                   /* "*" matches any element */
    pred preds[MAX_PREDS];
    int n_preds;
} step;

typedef struct path {
    step steps[MAX_STEPS];
    int n;
    char attr[64];
} path;

static int word_char(int c) { return isalnum(c) || c == '-' || c == '_' || c == '.' || c == ':'; }

/* Parse a path; -1 with err saying what was expected where. */
static int path_parse(const char *z, path *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    const char *s = z;
    if (*s == '/') s++;
    if (!strncmp(s, "scenario/", 9)) s += 9;
    for (;;) {
        if (*s == '@') {
            s++;
            size_t k = 0;
            while (word_char((unsigned char)s[k])) k++;
            if (k == 0 || k >= sizeof p->attr || s[k]) {
                snprintf(err, errlen, "%s: expected an attribute name after '@' at the end of the path", z);
                return -1;
            }
            memcpy(p->attr, s, k);
            return 0;
        }
        if (p->n == MAX_STEPS) {
            snprintf(err, errlen, "%s: more than %d steps", z, MAX_STEPS);
            return -1;
        }
        step *st = &p->steps[p->n++];
        size_t k = 0;
        if (*s == '*') k = 1;
        else while (word_char((unsigned char)s[k])) k++;
        if (k == 0 || k >= sizeof st->name) {
            snprintf(err, errlen, "%s: expected an element name or '@attribute' at '%s' "
                                  "(a path reads like cluster/nodes/@count)", z, s);
            return -1;
        }
        memcpy(st->name, s, k);
        s += k;
        while (*s == '[') {
            if (st->n_preds == MAX_PREDS) {
                snprintf(err, errlen, "%s: more than %d predicates on one step", z, MAX_PREDS);
                return -1;
            }
            pred *q = &st->preds[st->n_preds++];
            s++;
            if (isdigit((unsigned char)*s)) {
                char *end;
                long v = strtol(s, &end, 10);
                if (v < 1 || *end != ']') {
                    snprintf(err, errlen, "%s: expected [N] with N >= 1", z);
                    return -1;
                }
                q->pos = (int)v;
                s = end + 1;
                continue;
            }
            if (*s != '@') {
                snprintf(err, errlen, "%s: expected [@attr=\"value\"] or [N] at '%s'", z, s - 1);
                return -1;
            }
            s++;
            k = 0;
            while (word_char((unsigned char)s[k])) k++;
            if (k == 0 || k >= sizeof q->attr || s[k] != '=') {
                snprintf(err, errlen, "%s: expected [@attr=\"value\"]", z);
                return -1;
            }
            memcpy(q->attr, s, k);
            s += k + 1;
            char quote = *s;
            const char *v0 = s + 1, *v1;
            if (quote == '"' || quote == '\'') {
                v1 = strchr(v0, quote);
                if (!v1 || v1[1] != ']') {
                    snprintf(err, errlen, "%s: unterminated [@%s=%c...%c]", z, q->attr, quote, quote);
                    return -1;
                }
                s = v1 + 2;
            } else {                            /* unquoted: up to ']' */
                v0 = s;
                v1 = strchr(v0, ']');
                if (!v1) {
                    snprintf(err, errlen, "%s: unterminated [@%s=...]", z, q->attr);
                    return -1;
                }
                s = v1 + 1;
            }
            if ((size_t)(v1 - v0) >= sizeof q->value) {
                snprintf(err, errlen, "%s: predicate value too long", z);
                return -1;
            }
            memcpy(q->value, v0, (size_t)(v1 - v0));
        }
        if (*s != '/') {
            snprintf(err, errlen, "%s: expected '/' at '%s' (a path ends with /@attribute)", z, s);
            return -1;
        }
        s++;
    }
}

static int is_elem(const xmlNode *e) { return e && e->type == XML_ELEMENT_NODE; }

static int prop_eq(const xmlNode *e, const char *attr, const char *value) {
    xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
    int eq = v && !strcmp((const char *)v, value);
    xmlFree(v);
    return eq;
}

/* The elements the steps select, in document order. Returns the count (at
 * most max). */
static int path_match(const path *p, xmlNode *root, xmlNode **out, int max) {
    xmlNode *cur[MAX_MATCH], *next[MAX_MATCH];
    int n = 1, m;
    cur[0] = root;
    for (int i = 0; i < p->n; i++) {
        const step *st = &p->steps[i];
        m = 0;
        for (int j = 0; j < n; j++) {
            xmlNode *kids[MAX_MATCH];
            int nk = 0;
            for (xmlNode *c = cur[j]->children; c; c = c->next)
                if (is_elem(c) && (!strcmp(st->name, "*") || !strcmp((const char *)c->name, st->name)) &&
                    nk < MAX_MATCH)
                    kids[nk++] = c;
            for (int q = 0; q < st->n_preds; q++) {
                const pred *pr = &st->preds[q];
                int w = 0;
                if (pr->pos) {
                    if (pr->pos <= nk) kids[w++] = kids[pr->pos - 1];
                } else {
                    for (int k = 0; k < nk; k++)
                        if (prop_eq(kids[k], pr->attr, pr->value)) kids[w++] = kids[k];
                }
                nk = w;
            }
            for (int k = 0; k < nk && m < MAX_MATCH; k++) next[m++] = kids[k];
        }
        memcpy(cur, next, (size_t)m * sizeof *cur);
        n = m;
        if (n == 0) break;
    }
    if (n > max) n = max;
    memcpy(out, cur, (size_t)n * sizeof *out);
    return n;
}

/* ---- the canonical paths of a document, for suggestions ------------------ */

typedef struct strs {
    char **v;
    int n, cap;
} strs;

static void strs_add(strs *s, const char *z) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        char **v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) return;
        s->v = v;
        s->cap = cap;
    }
    char *d = strdup(z);
    if (d) s->v[s->n++] = d;
}

static void strs_free(strs *s) {
    for (int i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

/* Every attribute of every element under e as a path from the root: an
 * element is named by its name="" when it has one, by [k] when siblings
 * share its name. */
static void collect(const xmlNode *e, const char *prefix, strs *out) {
    char buf[1024];
    for (const xmlAttr *a = e->properties; a; a = a->next) {
        snprintf(buf, sizeof buf, "%s%s@%s", prefix, *prefix ? "/" : "", (const char *)a->name);
        strs_add(out, buf);
    }
    for (const xmlNode *c = e->children; c; c = c->next) {
        if (!is_elem(c)) continue;
        int same = 0, pos = 0;
        for (const xmlNode *d = e->children; d; d = d->next)
            if (is_elem(d) && !strcmp((const char *)d->name, (const char *)c->name)) {
                same++;
                if (d == c) pos = same;
            }
        xmlChar *nm = xmlGetProp(c, (const xmlChar *)"name");
        char pfx[1024];
        if (nm) snprintf(pfx, sizeof pfx, "%s%s%s[@name=\"%s\"]", prefix, *prefix ? "/" : "", (const char *)c->name, (const char *)nm);
        else if (same > 1) snprintf(pfx, sizeof pfx, "%s%s%s[%d]", prefix, *prefix ? "/" : "", (const char *)c->name, pos);
        else snprintf(pfx, sizeof pfx, "%s%s%s", prefix, *prefix ? "/" : "", (const char *)c->name);
        xmlFree(nm);
        collect(c, pfx, out);
    }
}

static size_t lev(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    size_t *row = malloc((m + 1) * sizeof *row);
    if (!row) return (size_t)-1;
    for (size_t j = 0; j <= m; j++) row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[m];
    free(row);
    return d;
}

static xmlDoc *parse(const char *xml, size_t len, const char *file) {
    xmlSetGenericErrorFunc(NULL, NULL);
    xmlSetStructuredErrorFunc(NULL, NULL);
    return xmlReadMemory(xml, (int)len, file, NULL,
                         XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
}

static int closest_doc(xmlDoc *doc, const char *want, int max, char *buf, size_t buflen) {
    strs all = { 0 };
    xmlNode *root = xmlDocGetRootElement(doc);
    if (root) collect(root, "", &all);
    const char *w = want;
    if (*w == '/') w++;
    if (!strncmp(w, "scenario/", 9)) w += 9;
    if (buflen) buf[0] = 0;
    int found = 0;
    size_t used = 0;
    int *taken = calloc((size_t)all.n + 1, sizeof *taken);
    size_t *d = calloc((size_t)all.n + 1, sizeof *d);
    for (int i = 0; d && i < all.n; i++) d[i] = lev(w, all.v[i]);
    for (int k = 0; taken && d && k < max; k++) {
        int best = -1;
        for (int i = 0; i < all.n; i++)
            if (!taken[i] && (best < 0 || d[i] < d[best])) best = i;
        if (best < 0) break;
        taken[best] = 1;
        int wrote = snprintf(buf + used, used < buflen ? buflen - used : 0, "%s%s", found ? ", " : "", all.v[best]);
        if (wrote > 0) used += (size_t)wrote;
        if (used >= buflen) used = buflen ? buflen - 1 : 0;
        found++;
    }
    free(taken);
    free(d);
    strs_free(&all);
    return found;
}

int override_closest(const char *xml, size_t len, const char *want, int max, char *buf, size_t buflen) {
    xmlDoc *doc = parse(xml, len, "scenario");
    if (buflen) buf[0] = 0;
    if (!doc) return 0;
    int n = closest_doc(doc, want, max, buf, buflen);
    xmlFreeDoc(doc);
    return n;
}

/* ---- start tags in the text ------------------------------------------------ */

typedef struct tag {
    size_t start, end;               /* '<' .. one past '>' */
} tag;

/* The start tags of the text in order; -1 when out of memory or the text
 * is not what libxml2 accepted. */
static int scan_tags(const char *z, size_t n, tag **out, int *count) {
    tag *v = NULL;
    int nv = 0, cap = 0;
    size_t i = 0;
    *out = NULL;
    *count = 0;
    while (i < n) {
        if (z[i] != '<') {
            i++;
            continue;
        }
        const char *p = z + i;
        const char *stop = NULL;
        size_t skip = 0;
        if (n - i >= 4 && !memcmp(p, "<!--", 4)) stop = "-->", skip = 4;
        else if (n - i >= 9 && !memcmp(p, "<![CDATA[", 9)) stop = "]]>", skip = 9;
        else if (n - i >= 2 && p[1] == '?') stop = "?>", skip = 2;
        else if (n - i >= 2 && (p[1] == '!' || p[1] == '/')) stop = ">", skip = 2;
        if (stop) {
            size_t k = strlen(stop);
            i += skip;
            while (i + k <= n && memcmp(z + i, stop, k)) i++;
            i += k;
            continue;
        }
        size_t j = i + 1;                          /* a start tag: quotes may hold '>' */
        while (j < n && z[j] != '>') {
            if (z[j] == '"' || z[j] == '\'') {
                char q = z[j++];
                while (j < n && z[j] != q) j++;
            }
            j++;
        }
        if (j >= n) break;
        if (nv == cap) {
            cap = cap ? 2 * cap : 64;
            tag *t = realloc(v, (size_t)cap * sizeof *t);
            if (!t) {
                free(v);
                return -1;
            }
            v = t;
        }
        v[nv].start = i;
        v[nv].end = j + 1;
        nv++;
        i = j + 1;
    }
    *out = v;
    *count = nv;
    return 0;
}

/* The value span of attribute attr inside tag t, or where to insert it
 * (*vs = *ve = insertion point, returns 0). Returns 1 when present. */
static int find_attr(const char *z, tag t, const char *attr, size_t *vs, size_t *ve, char *quote) {
    size_t i = t.start + 1, end = t.end - 1;      /* end: the '>' */
    while (i < end && word_char((unsigned char)z[i])) i++;   /* the name */
    size_t an = strlen(attr);
    for (;;) {
        while (i < end && isspace((unsigned char)z[i])) i++;
        if (i >= end || z[i] == '/') break;
        size_t a0 = i;
        while (i < end && z[i] != '=' && !isspace((unsigned char)z[i])) i++;
        size_t a1 = i;
        while (i < end && isspace((unsigned char)z[i])) i++;
        if (i >= end || z[i] != '=') break;
        i++;
        while (i < end && isspace((unsigned char)z[i])) i++;
        if (i >= end || (z[i] != '"' && z[i] != '\'')) break;
        char q = z[i++];
        size_t v0 = i;
        while (i < end && z[i] != q) i++;
        if (a1 - a0 == an && !memcmp(z + a0, attr, an)) {
            *vs = v0;
            *ve = i;
            *quote = q;
            return 1;
        }
        i++;
    }
    size_t ins = end;                              /* before "/>" or ">" */
    if (ins > t.start && z[ins - 1] == '/') ins--;
    while (ins > t.start + 1 && isspace((unsigned char)z[ins - 1])) ins--;
    *vs = *ve = ins;
    *quote = '"';
    return 0;
}

/* ---- expressions ------------------------------------------------------------ */

typedef struct expr {
    const char *s;
    const char *err;
    char errbuf[256];
    /* reference resolution */
    xmlNode *root;
    const override *ov;
    char (*resolved)[64];            /* values of ov[0..n_ov) as numbers when expressions */
    int n_ov;
    int depth;                       /* nesting of '(' and unary '-' now open */
} expr;

/* Parentheses and unary minus recurse: a --set value is user input, so
 * nesting is bounded (a person writes 3 or 4 levels; 30,000 overflowed the
 * stack). Deeper is an error, never a crash. */
#define EX_MAX_DEPTH 64

static double ex_sum(expr *x);

static void ex_blank(expr *x) {
    while (isspace((unsigned char)*x->s)) x->s++;
}

/* The value text of path: the latest override of that path, else the
 * first matching element's attribute. */
static int ref_value(expr *x, const char *pz, double *out) {
    for (int i = x->n_ov - 1; i >= 0; i--)
        if (!strcmp(x->ov[i].path, pz))
            return override_number(x->resolved[i][0] ? x->resolved[i] : x->ov[i].value, out) == 0 ? 0 : -1;
    path p;
    char e[256];
    if (path_parse(pz, &p, e, sizeof e) < 0) return -1;
    xmlNode *m[1];
    if (path_match(&p, x->root, m, 1) < 1) return -1;
    xmlChar *v = xmlGetProp(m[0], (const xmlChar *)p.attr);
    int rc = v && override_number((const char *)v, out) == 0 ? 0 : -1;
    xmlFree(v);
    return rc;
}

/* One operand. On error sets x->err and returns 0 (the caller stops). */
static double ex_atom(expr *x) {
    ex_blank(x);
    if (x->err) return 0;
    if ((*x->s == '(' || *x->s == '-') && x->depth >= EX_MAX_DEPTH) {
        snprintf(x->errbuf, sizeof x->errbuf, "expression nested more than %d deep (parentheses or signs)", EX_MAX_DEPTH);
        x->err = x->errbuf;
        return 0;
    }
    if (*x->s == '(') {
        x->s++;
        x->depth++;
        double v = ex_sum(x);
        x->depth--;
        ex_blank(x);
        if (x->err) return 0;
        if (*x->s != ')') x->err = "expected ')'";
        else x->s++;
        return v;
    }
    if (*x->s == '-') {
        x->s++;
        x->depth++;
        double v = -ex_atom(x);
        x->depth--;
        return v;
    }
    if (*x->s == '{') {
        const char *e = strchr(x->s, '}');
        if (!e) {
            x->err = "expected '}'";
            return 0;
        }
        char pz[512];
        snprintf(pz, sizeof pz, "%.*s", (int)(e - x->s - 1), x->s + 1);
        x->s = e + 1;
        double v = 0;
        if (ref_value(x, pz, &v) < 0) {
            snprintf(x->errbuf, sizeof x->errbuf, "{%.200s} names no attribute with a numeric value", pz);
            x->err = x->errbuf;
        }
        return v;
    }
    /* a number with an optional unit: up to an operator or blank */
    const char *s0 = x->s;
    while (*x->s && !strchr("+*()", *x->s) && !isspace((unsigned char)*x->s) &&
           !(*x->s == '-' && x->s > s0 && !strchr("eE", x->s[-1])) &&
           !(*x->s == '/' && !isalpha((unsigned char)x->s[1])))
        x->s++;
    char num[64];
    snprintf(num, sizeof num, "%.*s", (int)(x->s - s0), s0);
    double v = 0;
    if (x->s == s0 || override_number(num, &v) < 0) {
        snprintf(x->errbuf, sizeof x->errbuf, "expected a number at '%s'", s0);
        x->err = x->errbuf;
    }
    return v;
}

static double ex_prod(expr *x) {
    double v = ex_atom(x);
    for (;;) {
        ex_blank(x);
        if (x->err || (*x->s != '*' && *x->s != '/')) return v;
        char op = *x->s++;
        double r = ex_atom(x);
        v = op == '*' ? v * r : v / r;
    }
}

static double ex_sum(expr *x) {
    double v = ex_prod(x);
    for (;;) {
        ex_blank(x);
        if (x->err || (*x->s != '+' && *x->s != '-')) return v;
        char op = *x->s++;
        double r = ex_prod(x);
        v = op == '+' ? v + r : v - r;
    }
}

/* ---- applying ---------------------------------------------------------------- */

typedef struct edit {
    size_t vs, ve;
    int tag;
    char attr[64];
    char *text;                      /* what goes in [vs, ve): the value, or ' attr="value"' */
    int order;
} edit;

static int edit_cmp(const void *a, const void *b) {
    const edit *x = a, *y = b;
    if (x->vs != y->vs) return x->vs < y->vs ? 1 : -1;     /* from the end backwards */
    return x->order < y->order ? 1 : -1;
}

/* value escaped for an attribute quoted with q; NULL when out of memory */
static char *escape(const char *v, char q) {
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

static void number_elements(xmlNode *e, int *k) {
    e->_private = (void *)(intptr_t)(++*k);
    for (xmlNode *c = e->children; c; c = c->next)
        if (is_elem(c)) number_elements(c, k);
}

static void format_number(double v, char *buf, size_t len) {
    if (v == floor(v) && fabs(v) < 9e15) snprintf(buf, len, "%.0f", v);
    else snprintf(buf, len, "%.10g", v);
}

int override_apply(const char *xml, size_t len, const char *file, const override *ov, int n, char **out,
                   size_t *outlen, char *err, size_t errlen) {
    *out = NULL;
    if (outlen) *outlen = 0;
    xmlDoc *doc = parse(xml, len, file);
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    tag *tags = NULL;
    int ntags = 0, rc = -1, nedit = 0;
    edit *ed = NULL;
    char (*resolved)[64] = NULL;
    if (!root) {
        snprintf(err, errlen, "%s:1: malformed XML (check it with 'clustertwin check')", file);
        goto out;
    }
    if (scan_tags(xml, len, &tags, &ntags) < 0) {
        snprintf(err, errlen, "%s: out of memory", file);
        goto out;
    }
    /* pre-order numbering of the elements = order of start tags */
    {
        int k = 0;
        number_elements(root, &k);
        if (k != ntags) {
            snprintf(err, errlen, "%s: the text and the XML tree disagree (%d start tags, %d elements)", file,
                     ntags, k);
            goto out;
        }
    }
    resolved = calloc((size_t)(n > 0 ? n : 1), sizeof *resolved);
    ed = calloc((size_t)(n > 0 ? n : 1) * 64, sizeof *ed);
    int cap_edit = (n > 0 ? n : 1) * 64;
    if (!ed || !resolved) {
        snprintf(err, errlen, "%s: out of memory", file);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        path p;
        char why[512];
        if (path_parse(ov[i].path, &p, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s", why);
            goto out;
        }
        xmlNode *m[MAX_MATCH];
        int nm = path_match(&p, root, m, MAX_MATCH);
        if (nm == 0) {
            char close[1024];
            closest_doc(doc, ov[i].path, 3, close, sizeof close);
            snprintf(err, errlen, "%s: matches nothing in %s; closest paths: %s", ov[i].path, file,
                     close[0] ? close : "(none)");
            goto out;
        }
        const char *value = ov[i].value;
        char num[64];
        if (strchr(value, '{')) {
            expr x = { .s = value, .root = root, .ov = ov, .resolved = resolved, .n_ov = i };
            double v = ex_sum(&x);
            ex_blank(&x);
            if (!x.err && *x.s) x.err = "unexpected text after the expression";
            if (!x.err && !isfinite(v)) x.err = "the expression is not a finite number";
            if (x.err) {
                /* the value may be long (a hostile one is): the reason must survive */
                snprintf(err, errlen, "%s=%.80s%s: %s", ov[i].path, value, strlen(value) > 80 ? "..." : "", x.err);
                goto out;
            }
            format_number(v, num, sizeof num);
            snprintf(resolved[i], sizeof resolved[i], "%s", num);
            value = num;
        }
        for (int k = 0; k < nm; k++) {
            int t = (int)(intptr_t)m[k]->_private - 1;
            /* a later override of the same attribute replaces an earlier one */
            int j = 0;
            while (j < nedit && !(ed[j].tag == t && !strcmp(ed[j].attr, p.attr))) j++;
            if (j == nedit) {
                if (nedit == cap_edit) {
                    edit *g = realloc(ed, (size_t)cap_edit * 2 * sizeof *g);
                    if (!g) {
                        snprintf(err, errlen, "%s: out of memory", file);
                        goto out;
                    }
                    ed = g;
                    cap_edit *= 2;
                }
                memset(&ed[nedit++], 0, sizeof *ed);
            }
            edit *e = &ed[j];
            free(e->text);
            char q;
            int present = find_attr(xml, tags[t], p.attr, &e->vs, &e->ve, &q);
            char *esc = escape(value, q);
            if (!esc) {
                snprintf(err, errlen, "%s: out of memory", file);
                goto out;
            }
            if (present) {
                e->text = esc;
            } else {
                size_t sz = strlen(p.attr) + strlen(esc) + 5;
                e->text = malloc(sz);
                if (e->text) snprintf(e->text, sz, " %s=\"%s\"", p.attr, esc);
                free(esc);
                if (!e->text) {
                    snprintf(err, errlen, "%s: out of memory", file);
                    goto out;
                }
            }
            e->tag = t;
            e->order = i;
            snprintf(e->attr, sizeof e->attr, "%s", p.attr);
        }
    }
    qsort(ed, (size_t)nedit, sizeof *ed, edit_cmp);
    size_t total = len;
    for (int j = 0; j < nedit; j++) total += strlen(ed[j].text) - (ed[j].ve - ed[j].vs);
    char *o = malloc(total + 1);
    if (!o) {
        snprintf(err, errlen, "%s: out of memory", file);
        goto out;
    }
    /* copy forward: edits sorted backwards, so walk them in reverse */
    size_t r = 0, w = 0;
    for (int j = nedit - 1; j >= 0; j--) {
        memcpy(o + w, xml + r, ed[j].vs - r);
        w += ed[j].vs - r;
        size_t k = strlen(ed[j].text);
        memcpy(o + w, ed[j].text, k);
        w += k;
        r = ed[j].ve;
    }
    memcpy(o + w, xml + r, len - r);
    w += len - r;
    o[w] = 0;
    *out = o;
    if (outlen) *outlen = w;
    rc = 0;
out:
    for (int j = 0; ed && j < nedit; j++) free(ed[j].text);
    free(ed);
    free(resolved);
    free(tags);
    xmlFreeDoc(doc);
    return rc;
}

int override_load(const char *xml, size_t len, const char *file, const override *ov, int n, scenario **out,
                  char **text, char *err, size_t errlen) {
    *out = NULL;
    if (text) *text = NULL;
    char *t = NULL;
    size_t tn = 0;
    if (override_apply(xml, len, file, ov, n, &t, &tn, err, errlen) < 0) return -1;
    char why[2048];
    if (scenario_load_memory(t, tn, file, out, why, sizeof why) < 0) {
        size_t used = 0;
        if (errlen) err[0] = 0;
        for (int i = 0; i < n && used < errlen; i++) {
            int k = snprintf(err + used, errlen - used, "%s%s=%s", i ? ", " : "", ov[i].path, ov[i].value);
            if (k > 0) used += (size_t)k;
        }
        if (used < errlen) snprintf(err + used, errlen - used, "%s%s", n ? ": " : "", why);
        used = strlen(err);
        /* an attribute the file does not have: perhaps a misspelt one */
        xmlDoc *doc = parse(xml, len, file);
        xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
        for (int i = 0; root && i < n && used + 1 < errlen; i++) {
            path p;
            char e[256], close[1024];
            if (path_parse(ov[i].path, &p, e, sizeof e) < 0) continue;
            xmlNode *m[MAX_MATCH];
            int nm = path_match(&p, root, m, MAX_MATCH), has = 0;
            for (int k = 0; k < nm; k++) has |= xmlHasProp(m[k], (const xmlChar *)p.attr) != NULL;
            if (has || !closest_doc(doc, ov[i].path, 3, close, sizeof close)) continue;
            int w = snprintf(err + used, errlen - used, "; %s is not in %s; closest paths: %s", ov[i].path, file, close);
            if (w > 0) used += (size_t)w;
            if (used >= errlen) used = errlen - 1;
        }
        xmlFreeDoc(doc);
        free(t);
        return -1;
    }
    if (text) *text = t;
    else free(t);
    return 0;
}

/* ---- values ------------------------------------------------------------------ */

int override_number(const char *z, double *out) {
    static const unit_kind kinds[] = { UNIT_NUMBER, UNIT_COUNT, UNIT_DURATION, UNIT_SIZE, UNIT_BANDWIDTH, UNIT_RATE };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (units_parse(z, kinds[i], out, NULL, 0) == 0) return 0;
    return -1;
}

void override_values_free(char **v, int n) {
    if (!v) return;
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

static int push_value(char ***v, int *n, int *cap, const char *z, size_t len) {
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        char **p = realloc(*v, (size_t)c * sizeof *p);
        if (!p) return -1;
        *v = p;
        *cap = c;
    }
    char *d = malloc(len + 1);
    if (!d) return -1;
    memcpy(d, z, len);
    d[len] = 0;
    (*v)[(*n)++] = d;
    return 0;
}

/* The unit text after the number in z ("30min" -> "min"), and the factor
 * from the number as written to SI (60). */
static void unit_of(const char *z, double si, char *unit, size_t len, double *factor) {
    const char *p = z;
    while (*p && (isdigit((unsigned char)*p) || strchr(".+-eE", *p))) {
        if ((*p == 'e' || *p == 'E') && !isdigit((unsigned char)p[1]) && p[1] != '-' && p[1] != '+') break;
        p++;
    }
    snprintf(unit, len, "%.*s", (int)(len - 1), p);
    double bare = strtod(z, NULL);
    *factor = bare != 0 ? si / bare : 1;
    if (!*unit) *factor = 1;
}

#define MAX_VALUES 100000

int override_values(const char *spec, int int_range, char ***out, char *err, size_t errlen) {
    *out = NULL;
    char **v = NULL;
    int n = 0, cap = 0;
    const char *dots = strstr(spec, "..");
    if (!dots) {                                   /* a list */
        const char *s = spec;
        for (;;) {
            const char *c = strchr(s, ',');
            size_t k = c ? (size_t)(c - s) : strlen(s);
            while (k && isspace((unsigned char)*s)) s++, k--;
            while (k && isspace((unsigned char)s[k - 1])) k--;
            if (k == 0) {
                snprintf(err, errlen, "'%s': an empty value in the list", spec);
                override_values_free(v, n);
                return -1;
            }
            if (push_value(&v, &n, &cap, s, k) < 0) goto oom;
            if (!c) break;
            s = c + 1;
        }
        *out = v;
        return n;
    }
    char lo_z[64], hi_z[64], step_z[64] = "";
    char op = 0;
    snprintf(lo_z, sizeof lo_z, "%.*s", (int)(dots - spec), spec);
    const char *rest = dots + 2;
    const char *o = strpbrk(rest, "*+");
    /* '+' can be an exponent sign (1e+3): take the last '*' or '+' not after an 'e' digit */
    while (o && *o == '+' && o > rest && (o[-1] == 'e' || o[-1] == 'E') && isdigit((unsigned char)o[-2]))
        o = strpbrk(o + 1, "*+");
    if (o) {
        op = *o;
        snprintf(hi_z, sizeof hi_z, "%.*s", (int)(o - rest), rest);
        snprintf(step_z, sizeof step_z, "%s", o + 1);
    } else {
        snprintf(hi_z, sizeof hi_z, "%s", rest);
    }
    double lo, hi, st = 0;
    if (override_number(lo_z, &lo) < 0 || override_number(hi_z, &hi) < 0) {
        snprintf(err, errlen, "'%s': a range reads lo..hi*factor or lo..hi+step with numbers (30min..4h*2)", spec);
        return -1;
    }
    if (hi < lo) {
        snprintf(err, errlen, "'%s': the range's end is below its start", spec);
        return -1;
    }
    char unit[32];
    double factor;
    unit_of(lo_z, lo, unit, sizeof unit, &factor);
    if (op == '*') {
        if (units_parse(step_z, UNIT_NUMBER, &st, NULL, 0) < 0 || !(st > 1) || !(lo > 0)) {
            snprintf(err, errlen, "'%s': a geometric range needs lo > 0 and a factor > 1 (30min..4h*2)", spec);
            return -1;
        }
    } else if (op == '+') {
        if (override_number(step_z, &st) < 0 || !(st > 0)) {
            snprintf(err, errlen, "'%s': a linear range needs a step > 0 (256..1024+256)", spec);
            return -1;
        }
    } else {
        if (!int_range) {
            snprintf(err, errlen, "'%s': give the range a step: lo..hi*factor (geometric) or lo..hi+step (linear)", spec);
            return -1;
        }
        if (lo != floor(lo) || hi != floor(hi)) {
            snprintf(err, errlen, "'%s': a range without a step is of whole numbers", spec);
            return -1;
        }
        op = '+';
        st = 1;
        factor = 1;
        unit[0] = 0;
    }
    double tol = 1e-9 * (fabs(hi) > 1 ? fabs(hi) : 1);
    for (int i = 0;; i++) {
        double x = op == '*' ? lo * pow(st, i) : lo + st * i;
        if (x > hi + tol) break;
        if (n >= MAX_VALUES) {
            snprintf(err, errlen, "'%s': more than %d values", spec, MAX_VALUES);
            override_values_free(v, n);
            return -1;
        }
        char buf[96], numz[64];
        format_number(x / factor, numz, sizeof numz);
        snprintf(buf, sizeof buf, "%s%s", numz, unit);
        if (push_value(&v, &n, &cap, buf, strlen(buf)) < 0) goto oom;
    }
    *out = v;
    return n;
oom:
    override_values_free(v, n);
    snprintf(err, errlen, "out of memory");
    return -1;
}

int override_split(const char *arg, char *buf, size_t buflen, const char **path_z, const char **values) {
    size_t n = strlen(arg);
    if (n + 1 > buflen) return -1;
    memcpy(buf, arg, n + 1);
    int depth = 0;
    char q = 0;
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (q) {
            if (c == q) q = 0;
        } else if (c == '"' || c == '\'') {
            q = c;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == '=' && depth == 0) {
            buf[i] = 0;
            *path_z = buf;
            *values = buf + i + 1;
            return 0;
        }
    }
    return -1;
}
