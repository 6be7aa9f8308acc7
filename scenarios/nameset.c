/*
 * nameset: a hash set of element indices keyed by a name field (see
 * nameset.h). FNV-1a, linear probing, at most half full.
 */
#include "scenarios/nameset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t name_hash(const char *z) {
    uint64_t h = 1469598103934665603ull;            /* FNV-1a */
    for (; *z; z++) h = (h ^ (unsigned char)*z) * 1099511628211ull;
    return (size_t)h;
}

int nameset_find(const name_set *h, const char *base, size_t stride, const char *z) {
    if (!h->cap) return -1;
    for (size_t k = name_hash(z) & (h->cap - 1);; k = (k + 1) & (h->cap - 1)) {
        int i = h->slot[k] - 1;
        if (i < 0) return -1;
        if (!strcmp(base + (size_t)i * stride, z)) return i;
    }
}

int nameset_add(name_set *h, const char *base, size_t stride, int i) {
    if (2 * (h->n + 1) > h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        int *slot = calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t k = 0; k < h->cap; k++) {
            if (!h->slot[k]) continue;
            size_t j = name_hash(base + (size_t)(h->slot[k] - 1) * stride) & (cap - 1);
            while (slot[j]) j = (j + 1) & (cap - 1);
            slot[j] = h->slot[k];
        }
        free(h->slot);
        h->slot = slot;
        h->cap = cap;
    }
    size_t j = name_hash(base + (size_t)i * stride) & (h->cap - 1);
    while (h->slot[j]) j = (j + 1) & (h->cap - 1);
    h->slot[j] = i + 1;
    h->n++;
    return 0;
}

void nameset_free(name_set *h) {
    free(h->slot);
    memset(h, 0, sizeof *h);
}
