#include "base/grow.h"

#include <stdint.h>
#include <stdlib.h>

int grow_array(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    if (elem == 0) return -1;
    size_t c = *cap < 8 ? 8 : *cap;
    while (c < need) {
        if (c > SIZE_MAX / 2) { c = need; break; }
        c *= 2;
    }
    if (c > SIZE_MAX / elem) return -1;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}
