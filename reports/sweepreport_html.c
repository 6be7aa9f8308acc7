/*
 * sweepreport_html: the HTML page of a sweep, in the run report's style
 * (reports/report_html.h): a title, the best points in sentences where
 * the page opens, then per varying metric its name, its best point, its
 * heatmap (two varied paths), its chart and its table; the metrics that
 * did not vary last.
 */
#include "reports/sweepreport_int.h"

#include <math.h>
#include <string.h>

#include "reports/fileout.h"
#include "reports/report_html.h"

static void html_table(FILE *f, const sdata *d, int m) {
    const rd_sweep *s = &d->s;
    const char *cols[RD_SWEEP_AXES + 8];
    char numeric[RD_SWEEP_AXES + 8];
    int nc = 0;
    for (int a = 0; a < s->n_axes; a++) cols[nc] = sweep_short_path(s->axes[a]), numeric[nc++] = 't';
    static const char *const stat_cols[] = { "runs", "mean", "95% CI of the mean", "p10", "p90", "min", "max" };
    for (int i = 0; i < 7; i++) cols[nc] = stat_cols[i], numeric[nc++] = 'n';
    cols[nc] = NULL;
    numeric[nc] = 0;
    html_th(f, cols, numeric);
    for (int p = 0; p < s->n_points; p++) {
        const goal_stats *g = sd_stat(d, p, m);
        char b[6][64], ci[160];
        fputs("<tr>", f);
        for (int a = 0; a < s->n_axes; a++) html_td(f, s->val[p][a], 0);
        if (s->unfit[p]) {
            fputs("<td class=\"n\">0</td><td colspan=\"6\">does not fit: ", f);
            html_text(f, s->unfit[p]);
            fputs("</td></tr>\n", f);
            continue;
        }
        snprintf(b[5], sizeof b[5], "%d%s", g->n, g->missing ? "*" : "");
        html_td(f, b[5], 1);
        html_td(f, sweep_fmt(&d->m[m], g->mean, b[0], 64), 1);
        html_td(f, sweep_ci_text(&d->m[m], g, ci, sizeof ci), 1);
        html_td(f, sweep_fmt(&d->m[m], g->p10, b[1], 64), 1);
        html_td(f, sweep_fmt(&d->m[m], g->p90, b[2], 64), 1);
        html_td(f, sweep_fmt(&d->m[m], g->min, b[3], 64), 1);
        html_td(f, sweep_fmt(&d->m[m], g->max, b[4], 64), 1);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

/* The title and what the sweep is: scenario, points, replicas, paths. */
static void html_intro(FILE *f, const sdata *d, const char *db_path) {
    const rd_sweep *s = &d->s;
    char title[256];
    snprintf(title, sizeof title, "Sweep of %s: clustertwin report", s->scenario);
    html_head(f, title);
    fputs("<h1>Sweep of ", f);
    html_text(f, s->scenario);
    fprintf(f, " <small>sweep %lld, %d points x %d replicas</small></h1>\n", (long long)s->id, s->n_points,
            s->replicas);
    fputs("<p class=\"meta\">Scenario ", f);
    html_text(f, s->file);
    fputs("; database ", f);
    html_text(f, db_path);
    fprintf(f, "; sweep %lld: %d points, %d replicas each (seeds derived from the scenario's seed and the replica). "
               "Varied: ", (long long)s->id, s->n_points, s->replicas);
    for (int a = 0; a < s->n_axes; a++) {
        fprintf(f, "%s<code>", a ? ", " : "");
        html_text(f, s->axes[a]);
        fputs("</code>", f);
    }
    if (strcmp(s->sets, "[]")) {
        fputs(". Fixed: <code>", f);
        html_text(f, s->sets);
        fputs("</code>", f);
    }
    fputs(". Each table gives the metric across the replicas of each point: mean, the 95% confidence "
          "interval of the mean (Student t), 10th and 90th percentile (linear interpolation; the spread of the "
          "runs, not an interval), min and max; * marks points where some runs have no value (a job that "
          "never ended).</p>\n", f);
}

/* The best point of every metric with a direction, where the page opens. */
static void html_best(FILE *f, const sdata *d) {
    int any = 0;
    for (int m = 0; m < d->n_metrics; m++) {
        char b[2048];
        if (sweep_best_sentence(d, m, b, sizeof b) < 0) continue;
        if (!any++) fputs("<ul class=\"best\">\n", f);
        fputs("<li>", f);
        html_text(f, b);
        fputs("</li>\n", f);
    }
    if (any) fputs("</ul>\n", f);
}

static void html_unfit(FILE *f, const sdata *d) {
    const rd_sweep *s = &d->s;
    if (!s->n_unfit) return;
    html_h2(f, "unfit", "Points that do not fit");
    fputs("<p>Recorded and not run:</p>\n<ul>\n", f);
    for (int p = 0; p < s->n_points; p++) {
        if (!s->unfit[p]) continue;
        char label[1024];
        sweep_point_label(d, p, label, sizeof label);
        fputs("<li><code>", f);
        html_text(f, label);
        fputs("</code>: ", f);
        html_text(f, s->unfit[p]);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

/* One varying metric: its name (the path beside it), best point, heatmap,
 * chart and table. */
static void html_metric(FILE *f, const sdata *d, int m, int charted, const char *dir) {
    char name[256], id[16], b[2048], hm[64];
    int named = sweep_metric_name(&d->m[m], name, sizeof name);
    snprintf(id, sizeof id, "m%d", m);
    fprintf(f, "<h2 id=\"%s\">", id);
    html_text(f, name);
    if (named) {
        fputs(" <code class=\"path\">", f);
        html_text(f, d->m[m].text);
        fputs("</code>", f);
    }
    fputs("</h2>\n", f);
    if (sweep_best_sentence(d, m, b, sizeof b) >= 0) {
        fputs("<p class=\"best\">", f);
        html_text(f, b);
        fputs("</p>\n", f);
    }
    if (sweep_heatmap(d, m, dir, hm, sizeof hm) == 0) {
        chart c = { "heatmap", "", "", "" };
        snprintf(c.file, sizeof c.file, "%s", hm);
        snprintf(c.title, sizeof c.title, "%.80s by point", name);
        snprintf(c.caption, sizeof c.caption, "The mean of each point of the grid, %s across and %s down.",
                 sweep_short_path(d->s.axes[0]), sweep_short_path(d->s.axes[1]));
        html_figure(f, &c);
    }
    if (charted) fprintf(f, "<p><img src=\"m%d.svg\" alt=\"chart\" width=\"720\" height=\"360\"/></p>\n", m);
    html_table(f, d, m);
}

/* The metrics with the same value at every point, in one paragraph. */
static void html_same(FILE *f, const sdata *d) {
    char same[8192] = "";
    size_t sn = 0;
    for (int m = 0; m < d->n_metrics; m++) {
        char v[64], name[256];
        if (d->varies[m] || !d->s.n_points || !d->stat[m].n) continue;
        sweep_metric_name(&d->m[m], name, sizeof name);
        int w = snprintf(same + sn, sizeof same - sn, "%s%s = %s", sn ? "; " : "", name,
                         sweep_fmt(&d->m[m], d->stat[m].mean, v, sizeof v));
        if (w > 0 && (size_t)w < sizeof same - sn) sn += (size_t)w;
    }
    if (!sn) return;
    html_h2(f, "same", "The same at every point");
    fputs("<p>", f);
    html_text(f, same);
    fputs("</p>\n", f);
}

int sweep_write_html(const sdata *d, const char *dir, const char *db_path, char *note, size_t notelen, char *path,
                     size_t pathlen, char *err, size_t errlen) {
    int drawn[MAX_METRICS];
    int nd = sweep_draw_charts(d, dir, drawn, note, notelen);
    snprintf(path, pathlen, "%s/index.html", dir);
    fileout o;
    if (fileout_open(&o, path, 0, 0666, err, errlen) != 0) return -1;
    FILE *f = o.f;
    html_intro(f, d, db_path);
    html_best(f, d);
    html_unfit(f, d);
    if (note[0]) {
        fputs("<p class=\"warn\">", f);
        html_text(f, note);
        fputs("</p>\n", f);
    }
    for (int m = 0; m < d->n_metrics; m++) {
        if (!d->varies[m]) continue;
        int charted = 0;
        for (int i = 0; i < nd; i++) charted |= drawn[i] == m;
        html_metric(f, d, m, charted, dir);
    }
    html_same(f, d);
    fputs("<p class=\"meta\">Written by <code>clustertwin report</code>. The charts' data and gnuplot script "
          "(sweep.gp) are in this directory; --format csv gives every point's statistics.</p>\n</body>\n</html>\n", f);
    return fileout_close(&o, err, errlen) ? -1 : 0;
}
