/*
 * xml: the one way scenarios/ reads XML with libxml2 (the only folder that
 * links it): the scenario, catalog files, host profiles, the override
 * editor and the schema table all parse through xml_parse().
 *
 * Safety. xml_parse() never reaches the network (XML_PARSE_NONET), never
 * loads a DTD, never expands an entity and never follows an XInclude: those
 * options are masked off whatever the caller asks. Whether a DOCTYPE is
 * refused outright is each reader's call (xml_doctype_line); the scenario
 * refuses one before libxml2 even sees the text.
 *
 * Errors. libxml2 reports through process-wide handlers; while an xml_*
 * function parses or validates, they write into an xml_errors (never to
 * stderr) and the handlers in place before are put back afterwards. The
 * first message (a warning included) and the first error are kept.
 *
 * Sources with line numbers. An xml_src is a document being read: its file
 * name, its text with every line ending made LF, the line of each start tag
 * (libxml2 records where a start tag ends, which for a tag spread over
 * several lines is not where a reader looks) and the caller's error buffer.
 * xml_fail() writes the one-line message every reader of a scenario gives:
 *
 *   scenarios/x.xml:14: <gpu hbm="-3GB">: hbm must be a positive size
 *
 * and the attribute readers of scenarios/attr.h build on it.
 */
#ifndef CT_XML_H
#define CT_XML_H

#include <stddef.h>

#include <libxml/tree.h>
#include <libxml/xmlerror.h>

/* One message of libxml2, copied when it was reported. */
typedef struct xml_report {
    char msg[512];                 /* libxml2's text as given ("malformed XML" when it gave none) */
    int line;                      /* libxml2's line: 0 or -1 when it had none */
} xml_report;

typedef struct xml_errors {
    int n;                         /* messages seen, warnings included */
    xml_report first;              /* the first of them */
    int n_errors;                  /* those of level error or fatal */
    xml_report first_error;        /* the first of those */
    int oom;                       /* one of them was libxml2 running out of memory */
} xml_errors;

/* libxml2's process-wide handlers, as they were before a capture. */
typedef struct xml_handlers {
    xmlGenericErrorFunc generic;
    void *generic_ctx;
    xmlStructuredErrorFunc structured;
    void *structured_ctx;
} xml_handlers;

/* Send libxml2's messages into e (zeroed by the caller; generic ones are
 * dropped) until xml_errors_end(the value returned), which puts the
 * previous handlers back. Scopes nest. */
xml_handlers xml_errors_begin(xml_errors *e);
void xml_errors_end(xml_handlers previous);

/* The handler itself (ctx: an xml_errors), for libxml2 contexts that take
 * their own (a RELAX NG validation context). */
void xml_errors_capture(void *ctx, xmlErrorPtr x);

/* Parse len bytes of XML named file (messages, base URL) with libxml2's
 * options (XML_PARSE_*; NONET is added, NOENT, DTDLOAD, DTDATTR, DTDVALID
 * and XINCLUDE are removed). Returns the document (the caller frees it with
 * xmlFreeDoc), or NULL: not well-formed, out of memory (e->oom, or no
 * message at all), or more than INT_MAX bytes (*too_large = 1 when
 * too_large is not NULL). libxml2's messages are added to e (not cleared
 * first); e NULL: to whoever captures them now (xml_src_begin). */
xmlDoc *xml_parse(const char *text, size_t len, const char *file, int options, xml_errors *e, int *too_large);

/* The line of the document's DOCTYPE, 1 when it has only an external one,
 * 0 when it has none. */
int xml_doctype_line(const xmlDoc *doc);

/* ---- a document being read ------------------------------------------------ */

typedef struct xml_src {
    const char *file;              /* as named in messages */
    char *err;                     /* the caller's buffer for the one message */
    size_t errlen;
    int failed;                    /* a message is in err; later ones are dropped */
    char *text;                    /* the text as parsed (line endings made LF), owned */
    size_t text_len;
    int lines;                     /* lines in the text */
    int *tag_line;                 /* line of the k-th start tag, in document order */
    int n_tags;
    size_t tag_cap;
    xml_handlers saved;            /* libxml2's handlers before xml_src_begin */
} xml_src;

/* Keep a copy of the text with every line ending (CR LF, a lone CR, LF)
 * made one LF, as XML's end-of-line handling reads it (libxml2 then counts
 * lines the way a reader does: a file with CR-only line endings was all
 * "line 1"), and count its lines (a final line ending does not start one). 0, or -1 when out of memory
 * (nothing else changed). */
int xml_src_set_text(xml_src *x, const char *data, size_t len);

/* Index the start tags of x->text (in one pass over the well-formed text)
 * and number root's elements in document order (_private = k + 1), so
 * xml_line() is O(1). A text whose tags and elements do not agree falls
 * back to libxml2's lines. 0, or -1 when out of memory. Depth must have
 * been bounded by the caller. */
int xml_src_index(xml_src *x, xmlNode *root);

/* Until xml_src_end, every message of libxml2 is an error of x
 * (xml_src_error), whichever comes first in time being the one the user
 * reads, as with x's own; xml_src_end puts the previous handlers back. */
void xml_src_begin(xml_src *x);
void xml_src_end(xml_src *x);

/* The handler (ctx: an xml_src), also for libxml2 contexts that take their
 * own (a RELAX NG validation context): out of memory, a RELAX NG validity
 * error at its element's line, or "malformed XML: ...". */
void xml_src_error(void *ctx, xmlErrorPtr e);

void xml_src_free(xml_src *x);   /* the text and the index; not the file or err */

/* The line where an element's start tag begins (libxml2's line when the
 * text was not indexed). */
int xml_line(const xml_src *x, const xmlNode *e);

/* "file:line: " and the message into x->err, made one line; only the first
 * failure of a source is kept. A line past the text (an "end of data"
 * error) is its last line. */
void xml_fail_at(xml_src *x, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* As xml_fail_at at e's line, after "<elem attr="value">: " (the value cut
 * to 92 characters), or "<elem name="...">: " when attr is NULL or absent
 * and e has a name, else "<elem>: ". */
void xml_fail(xml_src *x, const xmlNode *e, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- tree helpers ------------------------------------------------------------ */

/* e is an element named name. */
int xml_is(const xmlNode *e, const char *name);

/* Children of e that are elements named name. */
int xml_count_children(const xmlNode *e, const char *name);

/* The value of attribute name of e (entities resolved), or NULL when
 * absent; the caller frees it with xmlFree. */
char *xml_prop(const xmlNode *e, const char *name);

#endif
