/*
 * published_html: the published-case report as one self-contained XHTML
 * page (reports/published_report.h): the summaries, then one table per set
 * (calibration first, then held-out, then any other), each case's row
 * coloured by its |error| against its tolerance. Text goes through
 * report_html's escaping; the page is written by reports/fileout's rule.
 */
#include <math.h>
#include <string.h>

#include "base/numfmt.h"
#include "reports/fileout.h"
#include "reports/published_report.h"
#include "reports/report_html.h"

/* Row colours: within tolerance green, up to twice it amber, beyond red,
 * no result grey (GitHub Primer's subtle backgrounds, as the reports'
 * style sheet uses Primer's greys). */
static const char *row_colour(const pubrep_case *c) {
    double e = fabs(pubrep_error_pct(c)), tol = isnan(c->tolerance_pct) ? 10 : c->tolerance_pct;
    if (isnan(e)) return "#eaeef2";
    if (e <= tol) return "#dafbe1";
    return e <= 2 * tol ? "#fff8c5" : "#ffebe9";
}

static void td_num(FILE *f, double v, const char *fmt) {
    char b[48];
    if (isnan(v)) snprintf(b, sizeof b, "-");
    else snprintf(b, sizeof b, fmt, v);
    html_td(f, b, 1);
}

static void html_case(FILE *f, const pubrep_case *c) {
    fprintf(f, "<tr style=\"background:%s\">", row_colour(c));
    html_td(f, c->file, 0);
    html_td(f, c->id, 0);
    html_td(f, c->metric, 0);
    char b[32];
    html_td(f, nf_count(c->expected, b, sizeof b), 1);
    html_td(f, nf_count(c->predicted, b, sizeof b), 1);
    td_num(f, pubrep_error_pct(c), "%+.1f%%");
    td_num(f, c->tolerance_pct, "%.0f%%");
    html_td(f, c->mechanism[0] ? c->mechanism : "-", 0);
    html_td(f, c->note[0] ? c->note : c->source, 0);
    fputs("</tr>\n", f);
}

static void html_set(FILE *f, const pubrep *r, const char *set, int index) {
    static const char *const cols[] = { "file", "id", "metric", "published", "predicted", "error", "tolerance",
                                        "mechanism", "source (or why no result)", NULL };
    char id[32], title[96];
    snprintf(id, sizeof id, "set-%d", index);
    snprintf(title, sizeof title, "Set: %s", set);
    html_h2(f, id, title);
    html_th(f, cols, "...nnnn..");
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->cases[i].set, set)) html_case(f, &r->cases[i]);
    fputs("</table></div>\n", f);
}

static void html_summary(FILE *f, const pubrep *r) {
    static const char *const cols[] = { "group", "cases", "no result", "median |error|", "max |error|",
                                        "median error", NULL };
    html_h2(f, "summary", "Summary");
    html_th(f, cols, ".nnnnn");
    for (size_t i = 0; i < r->n_groups; i++) {
        const pubrep_summary *g = &r->groups[i];
        fputs("<tr>", f);
        html_td(f, g->group, 0);
        td_num(f, g->n, "%.0f");
        td_num(f, g->no_result, "%.0f");
        td_num(f, g->median_abs_error_pct, "%.1f%%");
        td_num(f, g->max_abs_error_pct, "%.1f%%");
        td_num(f, g->median_signed_error_pct, "%+.1f%%");
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

static void html_notes(FILE *f, const pubrep *r) {
    if (!r->n_notes) return;
    fputs("<ul class=\"note\">\n", f);
    for (size_t i = 0; i < r->n_notes; i++) {
        fputs("<li>", f);
        html_text(f, r->notes[i]);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

/* Has a case before i the same set? */
static int set_seen(const pubrep *r, size_t i) {
    for (size_t k = 0; k < i; k++)
        if (!strcmp(r->cases[k].set, r->cases[i].set)) return 1;
    return 0;
}

int pubrep_html(const pubrep *r, const char *path, char *err, size_t errlen) {
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return -1;
    FILE *f = o.f;
    html_head(f, "Published cases: predicted vs published");
    fputs("<h1>Published cases <small>predicted vs published</small></h1>\n<p class=\"meta\">Each row is a "
          "published measurement replayed through the models; error = 100 (predicted - published) / published. "
          "Green: within the case's tolerance; amber: within twice it; red: beyond; grey: no result.</p>\n", f);
    html_summary(f, r);
    int index = 0;
    static const char *const first[] = { "calibration", "heldout" };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < r->n; i++)
            if (!strcmp(r->cases[i].set, first[k]) && !set_seen(r, i)) html_set(f, r, first[k], index++);
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->cases[i].set, first[0]) && strcmp(r->cases[i].set, first[1]) && !set_seen(r, i))
            html_set(f, r, r->cases[i].set, index++);
    html_notes(f, r);
    fputs("<p class=\"meta\">Written by <code>clustertwin validate --published</code> "
          "(docs/validation.md).</p>\n</body>\n</html>\n", f);
    return fileout_close(&o, err, errlen) ? -1 : 0;
}
