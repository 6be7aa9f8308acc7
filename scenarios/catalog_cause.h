/*
 * catalog_cause: the <cause> children of a catalog <failure-profile>
 * (models/catalog/reliability.xml; models/reliability.h rel_cause):
 *
 *   <failure-profile name="llama3" window="54d" gpus="16384" nodes="2048" nics="16384" ...>
 *     <cause label="faulty GPU" component="gpu" count="148" detection="crash" repair="gpu-swap"/>
 *   </failure-profile>
 *
 * The profile's own attributes go through the field table like every other
 * catalog entry (scenarios/catalog_xml.c); this reads the rows beneath it.
 */
#ifndef CT_CATALOG_CAUSE_H
#define CT_CATALOG_CAUSE_H

#include <stddef.h>

#include <libxml/tree.h>

#include "models/reliability.h"

/* Read the <cause> children of e into p, whose attributes are already read.
 * Any <cause> replaces p's list; with from_base and none, p keeps the
 * causes of the entry it was copied from. Every attribute is required:
 * label, component (rel_component_parse), count (> 0), detection (crash |
 * watchdog), repair (rel_repair_parse). Returns 0, or -1 with err set to
 * one line "file:line: <cause ...>: what was expected" (p then partly
 * written: the caller drops it). */
int catalog_cause_read(const xmlNode *e, rel_profile *p, int from_base, const char *file, char *err,
                       size_t errlen);

#endif
