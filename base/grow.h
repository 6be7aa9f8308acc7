/*
 * grow: the one way a growable array gets room.
 *
 *   item *v = NULL; size_t n = 0, cap = 0;
 *   if (GROW(v, cap, n + 1)) return -1;   // out of memory: v and cap unchanged
 *   v[n++] = x;
 *
 * Capacity doubles (at least 8 items), so appending n items costs O(n); a
 * count that would overflow size_t is refused like an allocation failure.
 * New room is not cleared.
 */
#ifndef CT_GROW_H
#define CT_GROW_H

#include <stddef.h>

/* Make *p hold at least need items of elem bytes, *cap items now. Returns 0,
 * or -1 with *p and *cap untouched when memory (or size_t) runs out. */
int grow_array(void **p, size_t *cap, size_t need, size_t elem);

/* grow_array with its common case, room enough already, inline: the
 * scheduler asks ~10 million times in the 1M-GPU year, nearly always
 * with room. */
static inline int grow_if_needed(void **p, size_t *cap, size_t need, size_t elem) {
    return need <= *cap ? 0 : grow_array(p, cap, need, elem);
}

/* GROW(ptr, cap, need): ptr an lvalue pointer, cap an lvalue size_t. */
#define GROW(ptr, cap, need) grow_if_needed((void **)&(ptr), &(cap), (need), sizeof *(ptr))

#endif
