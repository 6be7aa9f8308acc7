/*
 * validate: a parsed scenario checked against the grammar
 * scenarios/scenario.rng (see validate.c).
 */
#ifndef CT_VALIDATE_H
#define CT_VALIDATE_H

#include "scenarios/xml.h"

/* Check doc's structure; on error x fails at the offending element. x
 * must be capturing libxml2's messages (xml_src_begin) and its elements
 * numbered (xml_src_index) for the lines to be the start tags'. */
void validate_scenario(xml_src *x, xmlDoc *doc);

#endif
