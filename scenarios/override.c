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

#include "base/grow.h"
#include "scenarios/xml.h"

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
    int n;
    size_t cap;
} strs;

static void strs_add(strs *s, const char *z) {
    if (GROW(s->v, s->cap, (size_t)s->n + 1)) return;
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

/* The text's tree; libxml2's messages are dropped (the loader, which
 * reads the text next, says what is wrong with it). NULL when malformed. */
static xmlDoc *parse(const char *xml, size_t len, const char *file) {
    xml_errors ignored = { 0 };
    return xml_parse(xml, len, file, XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES, &ignored, NULL);
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
    int nv = 0;
    size_t cap = 0, i = 0;
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
        if (GROW(v, cap, (size_t)nv + 1)) {
            free(v);
            return -1;
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

static void number_elements(xmlNode *e, int *k) {
    e->_private = (void *)(intptr_t)(++*k);
    for (xmlNode *c = e->children; c; c = c->next)
        if (is_elem(c)) number_elements(c, k);
}

/* The edits an application collects, one per (tag, attribute). */
typedef struct edits {
    edit *v;
    int n;
    size_t cap;
} edits;

static void edits_free(edits *E) {
    for (int j = 0; j < E->n; j++) free(E->v[j].text);
    free(E->v);
}

/* The text as a tree whose k-th element is the k-th start tag (elements
 * numbered in pre-order, _private = k + 1). 0, or -1 with err set. */
static int open_text(const char *xml, size_t len, const char *file, xmlDoc **doc, tag **tags, int *ntags, char *err,
                     size_t errlen) {
    *doc = parse(xml, len, file);
    xmlNode *root = *doc ? xmlDocGetRootElement(*doc) : NULL;
    if (!root) {
        snprintf(err, errlen, "%s:1: malformed XML (check it with 'clustertwin check')", file);
        return -1;
    }
    if (scan_tags(xml, len, tags, ntags) < 0) {
        snprintf(err, errlen, "%s: out of memory", file);
        return -1;
    }
    int k = 0;
    number_elements(root, &k);
    if (k != *ntags) {
        snprintf(err, errlen, "%s: the text and the XML tree disagree (%d start tags, %d elements)", file, *ntags, k);
        return -1;
    }
    return 0;
}

/* The value override i writes: its text, or the number its expression
 * "{path}..." gives (kept in resolved[i] for later references; num holds
 * it). NULL with err set. */
static const char *value_of(const override *ov, int i, xmlNode *root, char (*resolved)[64], char *num, size_t numlen,
                            char *err, size_t errlen) {
    const char *value = ov[i].value;
    if (!strchr(value, '{')) return value;
    expr x = { .s = value, .root = root, .ov = ov, .resolved = resolved, .n_ov = i };
    double v = ex_sum(&x);
    ex_blank(&x);
    if (!x.err && *x.s) x.err = "unexpected text after the expression";
    if (!x.err && !isfinite(v)) x.err = "the expression is not a finite number";
    if (x.err) {
        /* the value may be long (a hostile one is): the reason must survive */
        snprintf(err, errlen, "%s=%.80s%s: %s", ov[i].path, value, strlen(value) > 80 ? "..." : "", x.err);
        return NULL;
    }
    override_format(v, num, numlen);
    snprintf(resolved[i], sizeof resolved[i], "%s", num);
    return num;
}

/* Set attr to value in start tag t: replace the value between its quotes,
 * or insert ' attr="value"' before the tag's end. A later override of the
 * same attribute of the same tag replaces an earlier one. 0, or -1 when
 * out of memory. */
static int add_edit(edits *E, const char *xml, const tag *tags, int t, const char *attr, const char *value, int order) {
    int j = 0;
    while (j < E->n && !(E->v[j].tag == t && !strcmp(E->v[j].attr, attr))) j++;
    if (j == E->n) {
        if (GROW(E->v, E->cap, (size_t)E->n + 1)) return -1;
        memset(&E->v[E->n++], 0, sizeof *E->v);
    }
    edit *e = &E->v[j];
    free(e->text);
    e->text = NULL;
    char q;
    int present = find_attr(xml, tags[t], attr, &e->vs, &e->ve, &q);
    char *esc = xml_attr_escape(value, q);
    if (!esc) return -1;
    if (present) {
        e->text = esc;
    } else {
        size_t sz = strlen(attr) + strlen(esc) + 5;
        e->text = malloc(sz);
        if (e->text) snprintf(e->text, sz, " %s=\"%s\"", attr, esc);
        free(esc);
        if (!e->text) return -1;
    }
    e->tag = t;
    e->order = order;
    snprintf(e->attr, sizeof e->attr, "%s", attr);
    return 0;
}

/* The text with the edits spliced in (sorted from the end backwards, so
 * walked in reverse to copy forward). NULL when out of memory. */
static char *splice(const char *xml, size_t len, edits *E, size_t *outlen) {
    if (E->n > 1) qsort(E->v, (size_t)E->n, sizeof *E->v, edit_cmp);   /* no edits: v may be NULL */
    size_t total = len;
    for (int j = 0; j < E->n; j++) total += strlen(E->v[j].text) - (E->v[j].ve - E->v[j].vs);
    char *o = malloc(total + 1);
    if (!o) return NULL;
    size_t r = 0, w = 0;
    for (int j = E->n - 1; j >= 0; j--) {
        memcpy(o + w, xml + r, E->v[j].vs - r);
        w += E->v[j].vs - r;
        size_t k = strlen(E->v[j].text);
        memcpy(o + w, E->v[j].text, k);
        w += k;
        r = E->v[j].ve;
    }
    memcpy(o + w, xml + r, len - r);
    w += len - r;
    o[w] = 0;
    *outlen = w;
    return o;
}

/* Override i: its path's elements, each given an edit. 0, or -1 with err set. */
static int apply_one(const char *xml, const char *file, xmlDoc *doc, const tag *tags, const override *ov, int i,
                     char (*resolved)[64], edits *E, char *err, size_t errlen) {
    xmlNode *root = xmlDocGetRootElement(doc);
    path p;
    char why[512];
    if (path_parse(ov[i].path, &p, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    xmlNode *m[MAX_MATCH];
    int nm = path_match(&p, root, m, MAX_MATCH);
    if (nm == 0) {
        char close[1024];
        closest_doc(doc, ov[i].path, 3, close, sizeof close);
        snprintf(err, errlen, "%s: matches nothing in %s; closest paths: %s", ov[i].path, file, close[0] ? close : "(none)");
        return -1;
    }
    char num[64];
    const char *value = value_of(ov, i, root, resolved, num, sizeof num, err, errlen);
    if (!value) return -1;
    for (int k = 0; k < nm; k++)
        if (add_edit(E, xml, tags, (int)(intptr_t)m[k]->_private - 1, p.attr, value, i) < 0) {
            snprintf(err, errlen, "%s: out of memory", file);
            return -1;
        }
    return 0;
}

int override_apply(const char *xml, size_t len, const char *file, const override *ov, int n, char **out,
                   size_t *outlen, char *err, size_t errlen) {
    *out = NULL;
    if (outlen) *outlen = 0;
    xmlDoc *doc = NULL;
    tag *tags = NULL;
    int ntags = 0, rc = -1;
    edits E = { 0 };
    char (*resolved)[64] = NULL;
    if (open_text(xml, len, file, &doc, &tags, &ntags, err, errlen) < 0) goto out;
    resolved = calloc((size_t)(n > 0 ? n : 1), sizeof *resolved);
    if (!resolved) {
        snprintf(err, errlen, "%s: out of memory", file);
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (apply_one(xml, file, doc, tags, ov, i, resolved, &E, err, errlen) < 0) goto out;
    size_t w = 0;
    if (!(*out = splice(xml, len, &E, &w))) {
        snprintf(err, errlen, "%s: out of memory", file);
        goto out;
    }
    if (outlen) *outlen = w;
    rc = 0;
out:
    edits_free(&E);
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

