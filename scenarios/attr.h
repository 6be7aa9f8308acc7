/*
 * attr: the typed attribute readers of the scenario's loaders. Each reads
 * one attribute of an element, checks it and, when it is wrong, reports on
 * the xml_src (scenarios/xml.h) in the one form a user reads:
 *
 *   x.xml:14: <nodes count="4.5">: count must be a whole number from 1 to 1000000
 *
 * Each returns 1 when the attribute was present and valid (*out set), 0
 * when it is absent and not required (*out unchanged), -1 on error (the
 * source has failed; *out unchanged). Values with units are in SI base
 * units (base/units.h).
 */
#ifndef CT_ATTR_H
#define CT_ATTR_H

#include <stddef.h>
#include <stdint.h>

#include "base/units.h"
#include "scenarios/xml.h"

/* Text of 1 to len - 1 characters. */
int attr_str(xml_src *x, const xmlNode *e, const char *attr, char *out, size_t len, int required);

/* A value with a unit of this kind; positive: it must be > 0. */
int attr_unit(xml_src *x, const xmlNode *e, const char *attr, unit_kind kind, double *out, int required,
              int positive);

/* A whole count in [lo, hi] (counts accept 4k, 2M). */
int attr_int(xml_src *x, const xmlNode *e, const char *attr, int *out, int required, long long lo, long long hi);
int attr_i64(xml_src *x, const xmlNode *e, const char *attr, int64_t *out, int required, long long lo, double hi);

/* true/false, 1/0, yes/no. */
int attr_bool(xml_src *x, const xmlNode *e, const char *attr, int *out);

/* One of a fixed set of words: parse returns its value or -1; choices
 * lists them for the message ("fat-tree, rail-optimized"). */
int attr_enum(xml_src *x, const xmlNode *e, const char *attr, int (*parse)(const char *), const char *choices,
              int *out);

/* A word of attr_enum's set kept as written in out (1 to len - 1
 * characters); its value in *value when value is not NULL. Absent and
 * required: "missing attribute". Returns as attr_str does. */
int attr_word(xml_src *x, const xmlNode *e, const char *attr, int (*parse)(const char *), const char *choices,
              int *value, char *out, size_t len, int required);

#endif
