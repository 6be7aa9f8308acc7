/*
 * schema: precise structural diagnostics driven by the RELAX NG schema.
 *
 * libxml2's RELAX NG validator says *that* a document is wrong ("Extra
 * element workload in interleave") but rarely *where* and *what*. This
 * module reads the same schema (scenarios/scenario.rng, the one source of
 * truth) into a table of elements, their allowed children and attributes,
 * required ones and value choices, and checks a document against it first,
 * so a user reads "unknown attribute 'gpus-per-node'; expected one of: type,
 * count" at the element's own line. The RELAX NG validation still runs
 * afterwards as the backstop for what the table does not express.
 *
 * Supported RELAX NG subset: element/attribute with a name, optional,
 * zeroOrMore, oneOrMore, interleave, group, choice, ref/define, value; an
 * element or attribute named by <anyName>/<name> choices is "open" (its
 * content is checked elsewhere, e.g. <catalog> by the catalog loader).
 */
#ifndef CT_SCHEMA_H
#define CT_SCHEMA_H

#include <stddef.h>

typedef struct schema schema;

/* Build the table from RELAX NG text. NULL with err set on failure. */
schema *schema_new(const char *rng, size_t len, char *err, size_t errlen);
void schema_free(schema *s);                        /* NULL is a no-op */

/* Check the tree under root (an xmlNode*). Returns 0 when it conforms to
 * the table, or -1 with msg set to what was expected, *bad the offending
 * node (an xmlNode*) and *bad_attr the offending attribute name or NULL. */
int schema_check(const schema *s, const void *root, char *msg, size_t len,
                 const void **bad, const char **bad_attr);

#endif
