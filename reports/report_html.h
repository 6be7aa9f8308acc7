/*
 * report_html: the pieces of an XHTML page that the run report, the
 * compare report and the sweep report share, so they read alike: the head
 * with its inline style sheet, escaped text, headings, tables and figures.
 * Every text goes through fileout_html (escaped, valid UTF-8).
 */
#ifndef CT_REPORT_HTML_H
#define CT_REPORT_HTML_H

#include <stdio.h>

#include "reports/charts.h"

/* The XML declaration, doctype, <head> with title and style, <body>. */
void html_head(FILE *f, const char *title);

/* Text escaped for XHTML (also inside attribute values); printf-style. */
void html_text(FILE *f, const char *z);
void html_textf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void html_h2(FILE *f, const char *id, const char *title);

/* A table in a div that scrolls sideways when wider than the page:
 * html_th opens both with a header row (numeric[i] 'n': right-aligned),
 * html_td writes a cell, "</table></div>" closes. */
void html_th(FILE *f, const char *const *cols, const char *numeric);
void html_td(FILE *f, const char *z, int numeric);

/* A chart (sized: gnuplot's 960x360) or a drawing (key "topology", "heatmap")
 * at its own size, with its caption. */
void html_figure(FILE *f, const chart *c);

#endif
