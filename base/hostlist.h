/*
 * hostlist: Slurm's compact lists of node names, both ways.
 *
 *   "gpu[01-04,07],login1"  <->  gpu01 gpu02 gpu03 gpu04 gpu07 login1
 *
 * Syntax (Slurm's, one dimension): names separated by commas; a name may
 * hold one bracket group of comma-separated numbers and ranges lo-hi, with
 * text before and after it ("rack[1-2]-a"). A range is written with the
 * digits of its lower bound: "[08-10]" is 08 09 10, "[8-10]" is 8 9 10
 * (Slurm's hostlist_create, src/common/hostlist.c). Names keep the order
 * written: the n-th name of a <nodes names=> list is the group's n-th node.
 * Spaces, empty names, a bound with more than 18 digits, lo > hi and more
 * than HOSTLIST_MAX_NAMES names are refused.
 */
#ifndef CT_HOSTLIST_H
#define CT_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_NAME_MAX 64              /* longest node name, with its NUL */
#define HOSTLIST_MAX_NAMES 10000000       /* names in one list (the largest cluster: 10M GPUs) */

/* Called with each name in order; a non-zero return stops the expansion
 * and is returned by hostlist_expand. */
typedef int (*hostlist_fn)(void *ctx, const char *name);

/* Expand list, calling fn (may be NULL: only count and check) for each
 * name. Returns the number of names, -1 with why set ("expected ..."),
 * or fn's non-zero return when it stopped the expansion (as -2). */
long hostlist_expand(const char *list, hostlist_fn fn, void *ctx, char *why, size_t whylen);

/* The names (in order) as one hostlist into buf: runs of consecutive
 * numbers after a common prefix become ranges, in the order given, so the
 * expansion gives back the same names in the same order. Returns the
 * length written, or -1 when it does not fit in len bytes (buf then "").
 * A name holding ',', '[' or ']' cannot be written (-1). */
long hostlist_compress(const char *const *names, size_t n, char *buf, size_t len);

#endif
