/*
 * paramtab: a table of named double parameters inside plain structs (the
 * host profile's, models/host.c, and the GPU profile's, models/gpu_profile.c):
 * each entry a name, which struct it lives in (part, the owner's choice), its
 * offset there and its unit. The lookups both tables share.
 */
#ifndef CT_PARAMTAB_H
#define CT_PARAMTAB_H

#include <stddef.h>
#include <string.h>

typedef struct paramtab_def {
    const char *name;
    int part;                    /* which struct of the owner's (0 when it has one) */
    size_t off;
    const char *unit;            /* "s", "B/s", "B", "FLOP/s" or "" */
} paramtab_def;

/* The entry named z of the n in t, or NULL. */
static inline const paramtab_def *paramtab_find(const paramtab_def *t, size_t n, const char *z) {
    for (size_t i = 0; z && i < n; i++)
        if (!strcmp(t[i].name, z)) return &t[i];
    return NULL;
}

/* names (n + 1 long, static in the caller) filled with t's names once,
 * NULL-terminated. */
static inline const char *const *paramtab_names(const paramtab_def *t, size_t n, const char **names) {
    if (!names[0])
        for (size_t i = 0; i < n; i++) names[i] = t[i].name;
    return names;
}

#endif
