/*
 * paramtab: a table of named double parameters inside plain structs (the
 * host profile's, models/host.c, and the GPU profile's, models/gpu_profile.c):
 * each entry a name, which struct it lives in (part, the owner's choice) and
 * its offset there. The unit is the name's, by the project's rule that a
 * quantity's name carries its unit (paramtab_unit). The lookups both tables
 * share.
 */
#ifndef CT_PARAMTAB_H
#define CT_PARAMTAB_H

#include <stddef.h>
#include <string.h>

typedef struct paramtab_def {
    const char *name;
    int part;                    /* which struct of the owner's (0 when it has one) */
    size_t off;
} paramtab_def;

/* The entry named z of the n in t, or NULL. */
static inline const paramtab_def *paramtab_find(const paramtab_def *t, size_t n, const char *z) {
    for (size_t i = 0; z && i < n; i++)
        if (!strcmp(t[i].name, z)) return &t[i];
    return NULL;
}

/* 1 when z ends with suffix. */
static inline int paramtab_ends(const char *z, const char *suffix) {
    size_t n = strlen(z), k = strlen(suffix);
    return n >= k && strcmp(z + n - k, suffix) == 0;
}

/* The unit a parameter's name gives: "..._s" seconds, "...bw" bytes per
 * second, "...bytes" bytes, "...flops" FLOP/s; anything else ("eff",
 * "cache_k", "half_dim") is a ratio or a plain number: "". */
static inline const char *paramtab_unit(const char *z) {
    if (!z) return "";
    if (paramtab_ends(z, "_s")) return "s";
    if (paramtab_ends(z, "bw")) return "B/s";
    if (paramtab_ends(z, "bytes")) return "B";
    if (paramtab_ends(z, "flops")) return "FLOP/s";
    return "";
}

/* names (n + 1 long, static in the caller) filled with t's names once,
 * NULL-terminated. */
static inline const char *const *paramtab_names(const paramtab_def *t, size_t n, const char **names) {
    if (!names[0])
        for (size_t i = 0; i < n; i++) names[i] = t[i].name;
    return names;
}

#endif
