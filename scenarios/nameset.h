/*
 * nameset: a set of names kept in an array of structs, the name a char[]
 * field at the same offset in each element (the scenario's queues,
 * storage, jobs...). Open addressing over element indices, so a
 * duplicate-name check or a lookup is O(1): a linear search per element
 * was quadratic (100,000 queues took 92 s to load).
 *
 * The set stores indices, not names: each call passes the array's current
 * base address and stride (NAMES(arr, field)), so the array may move
 * between calls.
 */
#ifndef CT_NAMESET_H
#define CT_NAMESET_H

#include <stddef.h>

typedef struct name_set {
    int *slot;                     /* element index + 1; 0 = empty */
    size_t cap, n;
} name_set;

/* NAMES(arr, field): the base and stride of a name field of an array. */
#define NAMES(arr, field) (const char *)(arr)[0].field, sizeof *(arr)

/* The index of the element whose name (at base + i * stride) is z, or -1. */
int nameset_find(const name_set *h, const char *base, size_t stride, const char *z);

/* Add element i. Returns 0, or -1 when out of memory (the set is unchanged). */
int nameset_add(name_set *h, const char *base, size_t stride, int i);

void nameset_free(name_set *h);    /* empty again; a zeroed set needs no free */

#endif
