/*
 * override: change attributes of a scenario before it is built, by path.
 *
 * A path names attributes the way XPath does, relative to <scenario>:
 *
 *   cluster/nodes/@count
 *   workload/training[@name="pretrain"]/checkpoint/@interval
 *   cluster/nodes[2]/@count            (the second <nodes> of <cluster>)
 *   @seed                              (an attribute of <scenario> itself)
 *
 * A step may carry predicates [@attr="value"] and [N] (1-based position
 * among the siblings that passed the name test and earlier predicates).
 * A path that selects several elements sets the attribute on all of them.
 * A leading "/", "scenario/" or "/scenario/" is accepted and ignored.
 *
 * An override edits the scenario's text in place (the value between the
 * quotes, or a new attribute before the tag's end), so line numbers in
 * messages stay those of the file; the edited text then goes through the
 * ordinary loader, which checks the new value like any other (a duration
 * where a count belongs is an error). A value may be an expression over
 * other attributes: "{cluster/nodes/@count}/4" (numbers with units, + - * /
 * and parentheses; a referenced attribute reads as its value in SI units).
 *
 * VALUES of a sweep axis (override_values):
 *   64,128,256          a list (any words: nfs,parallel-fs,object)
 *   30min..4h*2         geometric: 30min, 60min, 120min, 240min
 *   256..1024+256       linear:    256, 512, 768, 1024
 *   256..4096           every whole number between (only where allowed)
 * Generated values keep the unit of the first ("60min").
 */
#ifndef CT_OVERRIDE_H
#define CT_OVERRIDE_H

#include <stddef.h>

#include "scenarios/scenario.h"

typedef struct override {
    const char *path;
    const char *value;
} override;

/* Apply overrides to the scenario text xml (len bytes, file names it in
 * messages). On success returns 0 and *out is a new NUL-terminated text
 * (the caller frees it) of *outlen bytes. On error returns -1, *out is
 * NULL and err says which path matched nothing (with the closest paths
 * that exist) or which expression could not be evaluated. Never prints. */
int override_apply(const char *xml, size_t len, const char *file, const override *ov, int n, char **out,
                   size_t *outlen, char *err, size_t errlen);

/* override_apply, then load the result (scenario_load_memory). An error in
 * the edited scenario is prefixed with the overrides ("cluster/nodes/@count=abc:
 * x.xml:8: <nodes count="abc">: count must be ..."). On success *text, when
 * not NULL, receives the edited text (caller frees). */
int override_load(const char *xml, size_t len, const char *file, const override *ov, int n, scenario **out,
                  char **text, char *err, size_t errlen);

/* Up to max paths of existing attributes closest to path (edit distance),
 * as one string "a, b, c" in buf. Returns the number found. */
int override_closest(const char *xml, size_t len, const char *path, int max, char *buf, size_t buflen);

/* Expand VALUES into *out (an array of n malloc'd strings; free with
 * override_values_free). int_range: "a..b" without a step means every whole
 * number from a to b (else it is an error). Returns n >= 1, or -1 with err set. */
int override_values(const char *spec, int int_range, char ***out, char *err, size_t errlen);
void override_values_free(char **v, int n);

/* The value of an attribute text as a number in SI units, whatever its
 * kind ("30min" = 1800, "2TB/s" = 2e12, "4k" = 4000). 0, or -1 when it is
 * not a number. */
int override_number(const char *z, double *out);

/* v as an override writes a number: whole numbers below 9e15 without a
 * fraction ("256"), others to 10 significant digits. */
void override_format(double v, char *buf, size_t len);

/* Split "PATH=VALUES" at the '=' that is not inside brackets or quotes.
 * Returns 0 with path/values pointing into a copy in buf, -1 when there is
 * no such '='. */
int override_split(const char *arg, char *buf, size_t buflen, const char **path, const char **values);

#endif
