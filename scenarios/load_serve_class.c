/*
 * load_serve_class: the request classes of an <inference>
 * (docs/serving-slo.md):
 *
 *   <class name="chat" share="0.7" priority="1" input-tokens="800" output-tokens="200">
 *     <slo ttft="1s" tpot="50ms" percentile="99"/>
 *   </class>
 *
 * Each request belongs to one class, drawn by share (or named by a trace's
 * class column). A class's lengths default to the service's <requests>, its
 * SLO to the service's <slo>; an <slo> inside the class replaces the
 * service's bounds as a whole (a bound it leaves out is none).
 */
#include <stdio.h>

#include "scenarios/load.h"

/* More classes than this is a mistake, not a workload (reports list each). */
#define CLASSES_MAX 64

void load_slo_bounds(loader *L, const xmlNode *c, double *ttft_s, double *tpot_s, double *e2e_s, double *percentile) {
    attr_unit(&L->x, c, "ttft", UNIT_DURATION, ttft_s, 0, 1);
    attr_unit(&L->x, c, "tpot", UNIT_DURATION, tpot_s, 0, 1);
    attr_unit(&L->x, c, "e2e", UNIT_DURATION, e2e_s, 0, 1);
    if (attr_unit(&L->x, c, "percentile", UNIT_NUMBER, percentile, 0, 1) > 0 && *percentile > 100)
        xml_fail(&L->x, c, "percentile", "percentile must be in (0, 100]");
}

/* The class's lengths: the service's unless given. */
static void class_lengths(loader *L, const xmlNode *c, sc_serve_class *k) {
    load_length_fields o = { &k->input_tokens, &k->output_tokens, &k->input_dist, &k->output_dist, &k->input_cv,
                             &k->output_cv };
    load_lengths(L, c, &o);
}

/* The class's requests must fit every model it may be served by. */
static void class_fits(loader *L, const xmlNode *c, const sc_inference *f, const sc_serve_class *k) {
    long long len = (long long)f->prefix_tokens + k->input_tokens + k->output_tokens;
    for (int m = 0; m < (f->n_models ? f->n_models : 1); m++) {
        const char *name = f->n_models ? f->models[m].model : f->model;
        const llm_spec *ls = catalog_llm(L->s->cat, name);
        if (ls && len > ls->max_context)
            FAIL_RETURN(L, c, NULL, "%sinput + output tokens (%lld) exceed %s's context of %d",
                        f->prefix_tokens ? "prefix + " : "", len, name, ls->max_context);
    }
}

/* A new class with the service's defaults, its name checked unique. */
static sc_serve_class *new_class(loader *L, const xmlNode *c, sc_inference *f, name_set *names) {
    if (f->n_classes == CLASSES_MAX) {
        xml_fail(&L->x, c, NULL, "at most %d <class> elements in one <inference>", CLASSES_MAX);
        return NULL;
    }
    sc_serve_class *k = PUSH(L, f->classes, f->n_classes, c);
    if (!k) return NULL;
    k->line = xml_line(&L->x, c);
    k->share = 1;
    k->input_tokens = f->input_tokens;
    k->output_tokens = f->output_tokens;
    snprintf(k->input_dist, sizeof k->input_dist, "%s", f->input_dist);
    snprintf(k->output_dist, sizeof k->output_dist, "%s", f->output_dist);
    k->input_cv = f->input_cv;
    k->output_cv = f->output_cv;
    k->slo = (sc_slo){ f->slo_ttft_s, f->slo_tpot_s, f->slo_e2e_s, f->slo_percentile };
    if (attr_str(&L->x, c, "name", k->name, sizeof k->name, 1) < 0) return NULL;
    int dup = nameset_find(names, NAMES(f->classes, name), k->name);
    if (dup >= 0) {
        xml_fail(&L->x, c, "name", "a <class> of this name is on line %d", f->classes[dup].line);
        return NULL;
    }
    if (nameset_add(names, NAMES(f->classes, name), f->n_classes - 1) < 0) {
        xml_fail(&L->x, c, NULL, "out of memory");
        return NULL;
    }
    return k;
}

/* <class>: share, priority, lengths, and its own <slo> when it has one. */
static void load_class(loader *L, const xmlNode *c, sc_inference *f, name_set *names) {
    sc_serve_class *k = new_class(L, c, f, names);
    if (!k) return;
    attr_unit(&L->x, c, "share", UNIT_NUMBER, &k->share, 0, 1);
    attr_int(&L->x, c, "priority", &k->priority, 0, -1000000, 1000000);
    class_lengths(L, c, k);
    if (L->x.failed) return;
    class_fits(L, c, f, k);
    for (const xmlNode *s = c->children; s && !L->x.failed; s = s->next) {
        if (!xml_is(s, "slo")) continue;
        k->slo.ttft_s = k->slo.tpot_s = k->slo.e2e_s = 0;
        load_slo_bounds(L, s, &k->slo.ttft_s, &k->slo.tpot_s, &k->slo.e2e_s, &k->slo.percentile);
    }
}

void load_serve_classes(loader *L, const xmlNode *e, sc_inference *f) {
    name_set names = { 0 };
    for (const xmlNode *c = e->children; c && !L->x.failed; c = c->next)
        if (xml_is(c, "class")) load_class(L, c, f, &names);
    nameset_free(&names);
}
