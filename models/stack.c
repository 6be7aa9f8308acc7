/*
 * stack: names, defaults and FP8 recipe figures of the software stack
 * profiles (see stack.h). The profiles themselves are data:
 * models/catalog/stacks.xml; their attributes and defaults are declared in
 * models/catalog_fields.txt (catalog_fields_stack).
 */
#include "models/stack.h"

#include <stdio.h>
#include <string.h>

/* ---- Names ------------------------------------------------------------------ */

static const char *attention_names[ATTN_COUNT] = { "unfused", "fused-softmax", "flash2", "flash3" };
static const char *recipe_names[FP8_COUNT] = { "none", "delayed", "tensorwise", "rowwise", "mxfp8",
                                                "blockwise" };
static const char *elementwise_names[ELEM_COUNT] = { "fused", "eager" };
static const char *selective_names[SELECTIVE_COUNT] = { "auto", "attention", "layers", "ops", "modules" };
#define SCHEDULES_DEFAULT "1f1b,interleaved"

static int lookup(const char *z, const char *const *names, int n) {
    for (int i = 0; z && i < n; i++)
        if (strcmp(z, names[i]) == 0) return i;
    return -1;
}

/* An empty name is the default: flash2, and the delayed recipe. */
int stack_attention_parse(const char *z) {
    return z && !*z ? ATTN_FLASH2 : lookup(z, attention_names, ATTN_COUNT);
}
const char *stack_attention_name(stack_attention a) {
    return (a >= 0 && a < ATTN_COUNT) ? attention_names[a] : "?";
}
int fp8_recipe_parse(const char *z) { return z && !*z ? FP8_DELAYED : lookup(z, recipe_names, FP8_COUNT); }
const char *fp8_recipe_name(fp8_recipe r) { return (r >= 0 && r < FP8_COUNT) ? recipe_names[r] : "?"; }
int stack_elementwise_parse(const char *z) {
    return z && !*z ? ELEM_FUSED : lookup(z, elementwise_names, ELEM_COUNT);
}
int selective_kind_parse(const char *z) {
    return z && !*z ? SELECTIVE_AUTO : lookup(z, selective_names, SELECTIVE_MODULES);
}
int recompute_modules_parse(const char *z) {
    static const char *names[] = { "layernorm", "moe_act" };
    int mask = 0;
    while (z && *z) {
        size_t n = strcspn(z, " ,");
        int k = -1;
        for (int i = 0; i < 2 && k < 0; i++)
            if (n == strlen(names[i]) && !strncmp(z, names[i], n)) k = i;
        if (n > 0 && k < 0) return -1;
        if (n > 0) mask |= 1 << k;
        z += n + (z[n] != 0);
    }
    return mask ? mask : -1;
}
const char *selective_kind_name(selective_kind k) {
    return (k >= 0 && k < SELECTIVE_COUNT) ? selective_names[k] : "?";
}

/* Each comma-separated name of pipeline-schedules is a pp_schedule name
 * (models/train_plan.c spells them: 1f1b, interleaved) and 1f1b is among
 * them; *interleaved says whether interleaved is. -1 when a name is not. */
static int schedules_scan(const char *list, int *interleaved) {
    char buf[sizeof ((stack_spec *)0)->pipeline_schedules];
    snprintf(buf, sizeof buf, "%s", *list ? list : SCHEDULES_DEFAULT);
    int one = 0;
    *interleaved = 0;
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (strcmp(t, "1f1b") == 0) one = 1;
        else if (strcmp(t, "interleaved") == 0) *interleaved = 1;
        else return -1;
    }
    return one ? 0 : -1;
}

int stack_runs_interleaved(const stack_spec *s) {
    int il;
    return schedules_scan(s->pipeline_schedules, &il) == 0 && il;
}

void stack_defaults(stack_spec *s) {
    catalog_defaults(catalog_fields_stack, s);
    snprintf(s->attention, sizeof s->attention, "%s", attention_names[ATTN_FLASH2]);
    snprintf(s->fp8_recipe, sizeof s->fp8_recipe, "%s", recipe_names[FP8_DELAYED]);
    snprintf(s->pipeline_schedules, sizeof s->pipeline_schedules, "%s", SCHEDULES_DEFAULT);
    snprintf(s->elementwise, sizeof s->elementwise, "%s", elementwise_names[ELEM_FUSED]);
}

const stack_spec *stack_find(const catalog *c, const char *name) {
    int n = c && name ? catalog_count(c, "stack") : 0;
    for (int i = 0; i < n; i++) {
        const stack_spec *s = catalog_at(c, "stack", i);
        if (strcmp(s->name, name) == 0) return s;
    }
    return NULL;
}

int stack_check(const stack_spec *s, char *why, size_t len) {
    if (stack_attention_parse(s->attention) < 0) {
        snprintf(why, len, "stack %s: attention \"%s\" is not one of unfused, fused-softmax, flash2, flash3",
                 s->name, s->attention);
        return -1;
    }
    if (fp8_recipe_parse(s->fp8_recipe) <= FP8_NONE) {
        snprintf(why, len, "stack %s: fp8-recipe \"%s\" is not one of delayed, tensorwise, rowwise, mxfp8",
                 s->name, s->fp8_recipe);
        return -1;
    }
    int il;
    if (schedules_scan(s->pipeline_schedules, &il) < 0) {
        snprintf(why, len, "stack %s: pipeline-schedules \"%s\" is not a list of 1f1b and interleaved "
                 "that holds 1f1b", s->name, s->pipeline_schedules);
        return -1;
    }
    if (stack_elementwise_parse(s->elementwise) < 0) {
        snprintf(why, len, "stack %s: elementwise \"%s\" is not one of fused, eager", s->name, s->elementwise);
        return -1;
    }
    if (selective_kind_parse(s->selective) < 0) {
        snprintf(why, len, "stack %s: selective \"%s\" is not one of auto, attention, layers, ops",
                 s->name, s->selective);
        return -1;
    }
    if (s->tp_overlap > 1 || s->dp_overlap > 1 || s->p2p_overlap > 1) {
        snprintf(why, len, "stack %s: tp-overlap, dp-overlap and p2p-overlap are fractions (0 to 1)", s->name);
        return -1;
    }
    return 0;
}

/* ---- FP8 recipes -------------------------------------------------------------
 * Per element quantized: the bf16 reads, then FP8 writes of the tensor in
 * both orientations (Hopper FP8 GEMMs take only the TN layout, so the
 * backward needs the transpose: Transformer Engine's cast-transpose, TE
 * user guide "Using FP8 with Transformer Engine"). Reads per cast: one under
 * delayed scaling (the scale comes from the amax history), two under
 * current (tensorwise) scaling, an amax pass and the cast (TE docs, "FP8
 * Delayed Scaling": "reduces tensor reads per quantization from two to
 * one"). Rowwise scales each orientation along its own axis, so each
 * orientation takes its own amax pass and cast: four reads (torchao
 * float8, axiswise scaling). MXFP8 finds each 32-element block's amax in
 * the casting kernel (one read) and writes an 8-bit scale per block in
 * each orientation (OCP Microscaling Formats spec v1.0). */

double fp8_cast_bytes(fp8_recipe r) {
    static const double reads[FP8_COUNT] = { 0, 1, 2, 4, 1, 1 };
    if (r <= FP8_NONE || r >= FP8_COUNT) return 0;
    /* Block scales: MXFP8 one E8M0 byte per 32 elements (and the
     * transpose's), blockwise one FP32 per 1x128 tile. */
    double scales = r == FP8_MXFP8 ? 2.0 / 32 : r == FP8_BLOCKWISE ? 4.0 / 128 : 0;
    return 2 * reads[r] + 2 * 1 + scales;
}

/* Transformer Engine keeps each weight's FP8 copy and its transpose between
 * micro-batches (the weight workspaces reused when is_first_microbatch is
 * false): one byte each, plus MXFP8's block scales. */
double fp8_weight_bytes(fp8_recipe r) {
    if (r <= FP8_NONE || r >= FP8_COUNT) return 0;
    return 2 + (r == FP8_MXFP8 ? 2.0 / 32 : r == FP8_BLOCKWISE ? 2 * 4.0 / (128 * 128) : 0);
}
