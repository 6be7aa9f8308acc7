/*
 * validate: the scenario's structure checked against its grammar,
 * scenarios/scenario.rng (compiled into the program), in two passes:
 *
 *   1. the schema table (schema.c) names exactly what is wrong and where:
 *      "unknown attribute 'gpus-per-node'; expected one of: type, count";
 *   2. libxml2's RELAX NG validator, the backstop for what the table does
 *      not express, its message at the offending element.
 */
#include "scenarios/validate.h"

#include <stdlib.h>
#include <string.h>

#include <libxml/relaxng.h>

#include "base/grow.h"
#include "scenarios/embedded.h"
#include "scenarios/schema.h"

static const char *embedded(const char *path) {
    for (const embedded_file *f = embedded_files; f->path; f++)
        if (!strcmp(f->path, path)) return f->data;
    return NULL;
}

static void check_structure(xml_src *x, xmlNode *root) {
    const char *rng = embedded("scenarios/scenario.rng");
    char msg[1024];
    schema *sc = rng ? schema_new(rng, strlen(rng), msg, sizeof msg) : NULL;
    if (!sc) {
        xml_fail_at(x, 1, rng && !strcmp(msg, "out of memory") ? "out of memory (loading the schema)"
                                                             : "internal error: the schema does not load");
        return;
    }
    const void *bad = NULL;
    const char *bad_attr = NULL;
    if (schema_check(sc, root, msg, sizeof msg, &bad, &bad_attr) < 0)
        xml_fail(x, (const xmlNode *)bad, bad_attr, "%s", msg);
    schema_free(sc);
}

/* libxml2 validates a repeated element (<zeroOrMore> in a content model
 * with attributes) by keeping one state per position and comparing each new
 * state with all kept ones: quadratic in the run's length (100,000 <queue>
 * took 6 s of the load after everything else was linear). Long runs of
 * same-named siblings are therefore validated in batches: the run's first
 * element stays in place and the others are linked after it BATCH at a time,
 * one validation per batch; then the run is put back in order. check_structure
 * (schema.c) has already refused a repeat the grammar does not allow, and a
 * run of one repeatable element is valid exactly when each batch is. */
#define RNG_BATCH 256

typedef struct run {
    xmlNode *first, *after;        /* the run's first element; what follows the run */
    xmlNode **all;                 /* every node after first up to the run's last element */
    int n_all;
    xmlNode **elem;                /* the elements among them */
    int n_elem;
} run;

typedef struct runs {
    run *r;
    int n;
    size_t cap;
    int oom;
} runs;

/* Between the elements of a run: blanks, comments, processing instructions. */
static int filler(const xmlNode *x) {
    return x->type == XML_COMMENT_NODE || x->type == XML_PI_NODE || (x->type == XML_TEXT_NODE && xmlIsBlankNode((xmlNode *)x));
}

/* Collect runs of more than RNG_BATCH + 1 same-named sibling elements under
 * e (depth bounded by the loader). On failure sets R->oom. */
static void find_runs(runs *R, xmlNode *e) {
    for (xmlNode *c = e->children; c && !R->oom;) {
        if (c->type != XML_ELEMENT_NODE) {
            c = c->next;
            continue;
        }
        int n = 0, all = 0, k = 0;
        xmlNode *d = c;
        for (xmlNode *x = c; x; x = x->next, k++) {
            if (x->type != XML_ELEMENT_NODE) {
                if (!filler(x)) break;
                continue;
            }
            if (strcmp((const char *)x->name, (const char *)c->name) || x->ns != c->ns) break;
            n++;
            d = x;
            all = k;
        }
        if (n > RNG_BATCH + 1) {
            if (GROW(R->r, R->cap, (size_t)R->n + 1)) {
                R->oom = 1;
                return;
            }
            run *r = &R->r[R->n];
            r->all = malloc((size_t)all * sizeof *r->all);
            r->elem = malloc((size_t)n * sizeof *r->elem);
            if (!r->all || !r->elem) {
                free(r->all);
                free(r->elem);
                R->oom = 1;
                return;
            }
            R->n++;
            r->first = c;
            r->after = d->next;
            r->n_all = r->n_elem = 0;
            for (xmlNode *x = c->next; x != d->next; x = x->next) {
                r->all[r->n_all++] = x;
                if (x->type == XML_ELEMENT_NODE) r->elem[r->n_elem++] = x;
            }
        }
        /* Inside a batched run, nested runs are not batched: an element
         * is linked in one round only, its children must be whole then. */
        for (xmlNode *x = c; n <= RNG_BATCH + 1 && x != d->next; x = x->next)
            if (x->type == XML_ELEMENT_NODE) find_runs(R, x);
        c = d->next;
    }
}

/* Link mid[0..n) between first and after, by hand (xmlAddNextSibling would
 * merge adjacent text nodes). */
static void relink(xmlNode *first, xmlNode **mid, int n, xmlNode *after) {
    xmlNode *prev = first;
    for (int i = 0; i < n; i++) {
        mid[i]->prev = prev;
        mid[i]->parent = first->parent;
        prev->next = mid[i];
        prev = mid[i];
    }
    prev->next = after;
    if (after) after->prev = prev;
    else first->parent->last = prev;
}

/* Compile the built-in grammar and a validation context for it. The
 * grammar is valid (tests load it), so any message while compiling is a
 * failed allocation: NULL then. */
static xmlRelaxNGValidCtxtPtr compile_grammar(const char *rng, xmlRelaxNGParserCtxtPtr *pc, xmlRelaxNGPtr *grammar) {
    xml_errors e = { 0 };
    xml_handlers h = xml_errors_begin(&e);
    *pc = xmlRelaxNGNewMemParserCtxt(rng, (int)strlen(rng));
    if (*pc) xmlRelaxNGSetParserStructuredErrors(*pc, xml_errors_capture, &e);
    *grammar = *pc ? xmlRelaxNGParse(*pc) : NULL;
    xmlRelaxNGValidCtxtPtr vc = *grammar && !e.n ? xmlRelaxNGNewValidCtxt(*grammar) : NULL;
    xml_errors_end(h);
    return vc;
}

/* Validate doc one batch of every long run at a time; libxml2's first
 * message is the error. */
static void validate_batches(xml_src *x, xmlDoc *doc, xmlRelaxNGValidCtxtPtr vc, const runs *R) {
    xmlRelaxNGSetValidStructuredErrors(vc, xml_src_error, x);
    int batches = 1;
    for (int i = 0; i < R->n; i++)
        if ((R->r[i].n_elem + RNG_BATCH - 1) / RNG_BATCH > batches) batches = (R->r[i].n_elem + RNG_BATCH - 1) / RNG_BATCH;
    for (int b = 0; b < batches && !x->failed; b++) {
        for (int i = 0; i < R->n; i++) {
            run *r = &R->r[i];
            int k = b * RNG_BATCH < r->n_elem ? b * RNG_BATCH : r->n_elem;
            int m = r->n_elem - k < RNG_BATCH ? r->n_elem - k : RNG_BATCH;
            relink(r->first, r->elem + k, m, r->after);
        }
        if (xmlRelaxNGValidateDoc(vc, doc) != 0) xml_fail_at(x, 1, "the document does not match the scenario grammar");
    }
    for (int i = 0; i < R->n; i++)              /* the runs back as written */
        relink(R->r[i].first, R->r[i].all, R->r[i].n_all, R->r[i].after);
}

static void check_grammar(xml_src *x, xmlDoc *doc) {
    const char *rng = embedded("scenarios/scenario.rng");
    if (!rng) {
        xml_fail_at(x, 1, "internal error: the grammar is not compiled in");
        return;
    }
    xmlRelaxNGParserCtxtPtr pc;
    xmlRelaxNGPtr grammar;
    xmlRelaxNGValidCtxtPtr vc = compile_grammar(rng, &pc, &grammar);
    runs R = { 0 };
    if (vc) find_runs(&R, xmlDocGetRootElement(doc));
    if (!vc || R.oom)
        xml_fail_at(x, 1, R.oom ? "out of memory (validating the scenario)" : "out of memory (compiling the scenario grammar)");
    else
        validate_batches(x, doc, vc, &R);
    for (int i = 0; i < R.n; i++) {
        free(R.r[i].all);
        free(R.r[i].elem);
    }
    free(R.r);
    xmlRelaxNGFreeValidCtxt(vc);
    xmlRelaxNGFree(grammar);
    xmlRelaxNGFreeParserCtxt(pc);
}

void validate_scenario(xml_src *x, xmlDoc *doc) {
    check_structure(x, xmlDocGetRootElement(doc));
    if (!x->failed) check_grammar(x, doc);
}
