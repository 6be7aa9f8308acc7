/*
 * catalog: tables of hardware and model entries, found by name.
 *
 * Small: tens of entries per kind, looked up while a scenario is built, not
 * during a run, so lookup is a linear scan. Each kind is a growable array of
 * fixed-size structs; an entry keeps its insertion position when replaced.
 */
#include "models/catalog.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "models/reliability.h"
#include "models/stack.h"

typedef struct table {
    char *items;       /* n * size bytes */
    size_t size;       /* sizeof one entry; its first member is char name[] */
    int n;
    size_t cap;        /* entries allocated */
} table;

struct catalog {
    table gpu, nic, node, storage, llm, stack, engine;   /* stack: models/stack.h */
    table profile;                                       /* failure-profile: models/reliability.h */
};

static const char *prec_names[PREC_COUNT] = {
    "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp6", "fp4"
};
static const double prec_bytes[PREC_COUNT] = { 8, 4, 4, 2, 2, 1, 1, 0.5, 0.75, 0.5 };

int precision_parse(const char *z) {
    for (int i = 0; i < PREC_COUNT; i++)
        if (z && strcmp(z, prec_names[i]) == 0) return i;
    return -1;
}

const char *precision_name(precision p) {
    return (p >= 0 && p < PREC_COUNT) ? prec_names[p] : "?";
}

double precision_bytes(precision p) {
    return (p >= 0 && p < PREC_COUNT) ? prec_bytes[p] : 0;
}

catalog *catalog_new(void) {
    catalog *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->gpu.size = sizeof(gpu_spec);
    c->nic.size = sizeof(nic_spec);
    c->node.size = sizeof(node_spec);
    c->storage.size = sizeof(storage_spec);
    c->llm.size = sizeof(llm_spec);
    c->stack.size = sizeof(stack_spec);
    c->engine.size = sizeof(engine_spec);
    c->profile.size = sizeof(rel_profile);
    return c;
}

void catalog_free(catalog *c) {
    if (!c) return;
    free(c->gpu.items);
    free(c->nic.items);
    free(c->node.items);
    free(c->storage.items);
    free(c->llm.items);
    free(c->stack.items);
    free(c->engine.items);
    free(c->profile.items);
    free(c);
}

/* Every entry struct starts with its name, so a table can compare names
 * without knowing the struct. */
static void *find(const table *t, const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < t->n; i++) {
        char *p = t->items + (size_t)i * t->size;
        if (strcmp(p, name) == 0) return p;
    }
    return NULL;
}

static int put(table *t, const void *entry) {
    void *p = find(t, (const char *)entry);
    if (p) {
        memcpy(p, entry, t->size);
        return 0;
    }
    /* Entries are t->size bytes, known at run time: grow_array is GROW
     * with the size given. */
    if (grow_array((void **)&t->items, &t->cap, (size_t)t->n + 1, t->size) < 0) return -1;
    memcpy(t->items + (size_t)t->n * t->size, entry, t->size);
    t->n++;
    return 0;
}

static table *table_of(const catalog *c, const char *kind) {
    catalog *m = (catalog *)c;
    if (!kind) return NULL;
    if (strcmp(kind, "gpu") == 0) return &m->gpu;
    if (strcmp(kind, "nic") == 0) return &m->nic;
    if (strcmp(kind, "node") == 0) return &m->node;
    if (strcmp(kind, "storage") == 0) return &m->storage;
    if (strcmp(kind, "llm") == 0) return &m->llm;
    if (strcmp(kind, "stack") == 0) return &m->stack;
    if (strcmp(kind, "engine") == 0) return &m->engine;
    if (strcmp(kind, "failure-profile") == 0) return &m->profile;
    return NULL;
}

int catalog_put_gpu(catalog *c, const gpu_spec *g) { return put(&c->gpu, g); }
int catalog_put_nic(catalog *c, const nic_spec *n) { return put(&c->nic, n); }
int catalog_put_node(catalog *c, const node_spec *n) { return put(&c->node, n); }
int catalog_put_storage(catalog *c, const storage_spec *s) { return put(&c->storage, s); }
int catalog_put_llm(catalog *c, const llm_spec *m) { return put(&c->llm, m); }
int catalog_put_engine(catalog *c, const engine_spec *e) { return put(&c->engine, e); }

const gpu_spec *catalog_gpu(const catalog *c, const char *z) { return find(&c->gpu, z); }
const nic_spec *catalog_nic(const catalog *c, const char *z) { return find(&c->nic, z); }
const node_spec *catalog_node(const catalog *c, const char *z) { return find(&c->node, z); }
const storage_spec *catalog_storage(const catalog *c, const char *z) { return find(&c->storage, z); }
const llm_spec *catalog_llm(const catalog *c, const char *z) { return find(&c->llm, z); }
const engine_spec *catalog_engine(const catalog *c, const char *z) { return find(&c->engine, z); }

int catalog_count(const catalog *c, const char *kind) {
    table *t = table_of(c, kind);
    return t ? t->n : 0;
}

const void *catalog_at(const catalog *c, const char *kind, int i) {
    table *t = table_of(c, kind);
    if (!t || i < 0 || i >= t->n) return NULL;
    return t->items + (size_t)i * t->size;
}

void catalog_names(const catalog *c, const char *kind, char *buf, size_t len) {
    table *t = table_of(c, kind);
    size_t used = 0;
    if (len == 0) return;
    buf[0] = 0;
    for (int i = 0; t && i < t->n && used + 1 < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                         t->items + (size_t)i * t->size);
        if (w < 0) break;
        used += (size_t)w;
    }
}

int catalog_put(catalog *c, const char *element, const void *entry) {
    table *t = table_of(c, element);
    return t ? put(t, entry) : -1;
}

/* ---- Field tables ------------------------------------------------------
 * The tables themselves (catalog_fields_gpu, ...) are generated from their
 * declarations in models/catalog_fields.txt by tools/fields.sh. */

const catalog_field *catalog_fields_for(const char *element, size_t *struct_size) {
    static const struct { const char *z; const catalog_field *f; size_t n; } map[] = {
        { "gpu", catalog_fields_gpu, sizeof(gpu_spec) },
        { "nic", catalog_fields_nic, sizeof(nic_spec) },
        { "node", catalog_fields_node, sizeof(node_spec) },
        { "storage", catalog_fields_storage, sizeof(storage_spec) },
        { "llm", catalog_fields_llm, sizeof(llm_spec) },
        { "stack", catalog_fields_stack, sizeof(stack_spec) },
        { "engine", catalog_fields_engine, sizeof(engine_spec) },
        { "failure-profile", catalog_fields_failure_profile, sizeof(rel_profile) },
    };
    for (size_t i = 0; element && i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(element, map[i].z) == 0) {
            if (struct_size) *struct_size = map[i].n;
            return map[i].f;
        }
    }
    return NULL;
}

void catalog_defaults(const catalog_field *f, void *entry) {
    char *base = entry;
    for (; f->attr; f++) {
        switch (f->type) {
        case FIELD_STR: base[f->offset] = 0; break;
        case FIELD_INT:
        case FIELD_BOOL: *(int *)(base + f->offset) = (int)f->def; break;
        default: *(double *)(base + f->offset) = f->def; break;
        }
    }
}
