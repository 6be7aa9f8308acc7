/*
 * report_html: XHTML page pieces shared by the run, compare and sweep
 * reports (see report_html.h). The style sheet is inline: a report is one
 * file and its images, readable offline.
 */
#include "reports/report_html.h"

#include <stdarg.h>
#include <string.h>

#include "reports/fileout.h"

void html_text(FILE *f, const char *z) { fileout_html(f, z); }

void html_textf(FILE *f, const char *fmt_, ...) {
    char b[2048];
    va_list ap;
    va_start(ap, fmt_);
    vsnprintf(b, sizeof b, fmt_, ap);
    va_end(ap);
    html_text(f, b);
}

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1f2328;"
    "max-width:1120px;margin:0 auto;padding:24px 20px 60px;line-height:1.45}\n"
    "h1{font-size:1.7em;margin:0 0 4px}h1 small{color:#656d76;font-weight:normal;font-size:0.6em}\n"
    "h2{font-size:1.25em;margin:36px 0 8px;border-bottom:1px solid #d8dee4;padding-bottom:4px}\n"
    "p.answer{font-size:1.3em;margin:12px 0 18px;padding:14px 18px;background:#f0f6ff;"
    "border-left:5px solid #0969da;border-radius:4px}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px;margin:8px 0 6px}\n"
    ".card{border:1px solid #d8dee4;border-radius:6px;padding:10px 12px;background:#fff}\n"
    ".card .label{color:#656d76;font-size:0.85em;text-transform:uppercase;letter-spacing:0.04em}\n"
    ".card .value{font-size:1.6em;font-weight:600;margin:2px 0}\n"
    ".card .note{color:#656d76;font-size:0.8em}\n"
    ".meta,.caption,.note{color:#656d76;font-size:0.9em}\n"
    ".warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:4px;padding:8px 12px}\n"
    "figure{margin:10px 0 18px}figure img{max-width:100%;height:auto;border:1px solid #eaeef2}\n"
    "figcaption{color:#656d76;font-size:0.9em}\n"
    ".pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}\n"
    "table{border-collapse:collapse;margin:8px 0 14px;font-size:0.92em}\n"
    "th,td{border-bottom:1px solid #eaeef2;padding:4px 10px;text-align:left;vertical-align:top}\n"
    "th{background:#f6f8fa;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.n{white-space:nowrap}.scroll{overflow-x:auto}\n"
    "tr:nth-child(even) td{background:#fbfcfd}\n"
    ".up{color:#1a7f37}.down{color:#cf222e}\n"
    "pre{background:#f6f8fa;padding:12px;overflow:auto;font-size:0.85em}\n"
    "details{margin:8px 0}summary{cursor:pointer;color:#0969da}\n"
    "p.best{margin:4px 0 10px;padding:8px 12px;background:#f0f6ff;border-left:4px solid #0969da}\n"
    "ul.best{font-size:1.1em;margin:8px 0 18px;padding:10px 30px;background:#f0f6ff;"
    "border-left:5px solid #0969da;border-radius:4px}\n"
    "code.path{color:#656d76;font-size:0.8em;font-weight:normal}\n";

void html_head(FILE *f, const char *title) {
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
          "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\" xml:lang=\"en\">\n<head>\n"
          "<meta charset=\"UTF-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
          "<title>", f);
    html_text(f, title);
    fprintf(f, "</title>\n<style type=\"text/css\">\n%s</style>\n</head>\n<body>\n", css);
}

/* A chart (sized: gnuplot's 960x360) or a drawing at its own size. */
void html_figure(FILE *f, const chart *c) {
    int sized = strcmp(c->key, "topology") && strcmp(c->key, "heatmap");
    fputs("<figure><img src=\"", f);
    html_text(f, c->file);
    fputs("\" alt=\"", f);
    html_text(f, c->title);
    fputs(sized ? "\" width=\"960\" height=\"360\"/><figcaption><b>" : "\"/><figcaption><b>", f);
    html_text(f, c->title);
    fputs(".</b> ", f);
    html_text(f, c->caption);
    fputs("</figcaption></figure>\n", f);
}

/* A table opens in a div that scrolls sideways when it is wider than the
 * page; tend() closes both. */
void html_th(FILE *f, const char *const *cols, const char *numeric) {
    fputs("<div class=\"scroll\"><table>\n<tr>", f);
    for (int i = 0; cols[i]; i++) {
        fprintf(f, "<th%s>", numeric[i] == 'n' ? " class=\"n\"" : "");
        html_text(f, cols[i]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
}

void html_td(FILE *f, const char *z, int numeric) {
    fprintf(f, "<td%s>", numeric ? " class=\"n\"" : "");
    html_text(f, z);
    fputs("</td>", f);
}


void html_h2(FILE *f, const char *id, const char *title) {
    fprintf(f, "<h2 id=\"%s\">", id);
    html_text(f, title);
    fputs("</h2>\n", f);
}

