/*
 * catalog_xml: read catalog entries from XML into a catalog.
 *
 * Three sources share one element syntax: the .xml files in models/catalog/
 * (compiled into the program), a catalog file of the user's, and the
 * <catalog> section of a scenario. Under a <catalog> element each child is
 * one entry:
 *
 *   <catalog>
 *     <gpu name="H100-SXM5-80GB" bf16-tflops="989" hbm="80GB" hbm-bw="3.35TB/s" tdp="700"/>
 *     <gpu name="H100-slow" base="H100-SXM5-80GB" hbm-bw="2TB/s"/>
 *     <node name="dgx-h100" gpu="H100-SXM5-80GB" gpus="8" nic="ndr-400" nics="8"/>
 *   </catalog>
 *
 * Elements are gpu, nic, node, storage, llm, stack, engine and
 * failure-profile; their attributes are the field tables declared in
 * models/catalog_fields.txt, values in units.h syntax. A failure-profile
 * holds <cause> rows (scenarios/catalog_cause.h); other entries are empty. An entry whose
 * name exists replaces it. With base="NAME" an entry starts as a copy of the
 * entry NAME of the same kind (earlier in the same load, or already in the
 * catalog) and its attributes override only those figures; without base it
 * starts from the table defaults and must give every required attribute.
 * Required numeric attributes must be positive; a node's gpu and nic must
 * name entries that exist once the whole load is read.
 *
 * Each call is one load: every entry is read and checked before any is
 * added, so on error the catalog is unchanged (except when memory runs out
 * while adding). Errors are written to err as one line naming the file, the
 * line, the element with the offending attribute and what was expected:
 *
 *   models/catalog/gpus.xml:14: <gpu hbm="-3GB">: hbm must be a positive size like 80GB
 *
 * XML is parsed by scenarios/xml.c: without network access, without
 * loading DTDs or expanding external entities; libxml2 prints nothing
 * (its messages go to err).
 */
#ifndef CT_CATALOG_XML_H
#define CT_CATALOG_XML_H

#include <stddef.h>

#include "models/catalog.h"

/* Load every embedded .xml file under models/catalog/, in the order of the
 * embedded table (sorted by path), as one load: references may point
 * across files. Returns 0, or -1 with err set. */
int catalog_load_builtin(catalog *c, char *err, size_t errlen);

/* Load one catalog file (root element <catalog>). Returns 0, or -1 with err
 * set (a missing or unreadable file, bad XML, a bad entry). */
int catalog_load_file(catalog *c, const char *path, char *err, size_t errlen);

/* As catalog_load_file, from len bytes of XML in memory; file names the
 * text in messages (NULL: "<memory>"). */
int catalog_load_memory(catalog *c, const char *xml, size_t len, const char *file,
                        char *err, size_t errlen);

/* Load the children of xml_node, an xmlNode* of a <catalog> element in a
 * document the caller owns (a scenario's own <catalog> section). file names
 * the document in messages. Returns 0, or -1 with err set. */
int catalog_load_element(catalog *c, const void *xml_node, const char *file,
                         char *err, size_t errlen);

#endif
