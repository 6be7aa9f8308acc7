/*
 * sweepreport_charts: the pictures of a sweep report.
 *
 *   charts    one gnuplot SVG per varying metric (mN.svg): x = the first
 *             path's values, the mean as a line with p10..p90 bars, one
 *             line per combination of the other paths' values; all drawn
 *             by one gnuplot process from sweep.gp and mN.dat
 *   heatmaps  for a sweep of exactly two paths, one SVG per varying metric
 *             (hmN.svg) written here, no gnuplot: the grid of points, the
 *             first path across and the second down, each cell coloured by
 *             the mean (green good, red bad where the metric has a
 *             direction; light to dark blue where it has none) with the
 *             value printed in it
 */
#include "reports/sweepreport_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/charts.h"
#include "reports/fileout.h"

static int ends(const char *z, const char *suf) {
    size_t n = strlen(z), k = strlen(suf);
    return n >= k && !strcmp(z + n - k, suf);
}

/* ---- gnuplot charts -------------------------------------------------------- */

/* y scale for a metric: seconds shown in the unit its largest value reads best in */
static double y_unit(const sdata *d, int m, const char **name) {
    double mx = 0;
    for (int p = 0; p < d->s.n_points; p++) {
        double v = sd_stat(d, p, m)->p90;
        if (isfinite(v) && fabs(v) > mx) mx = fabs(v);
    }
    *name = "";
    if (ends(d->m[m].field, "_s") && !ends(d->m[m].field, "_per_s")) {
        if (mx >= 2 * 86400) return *name = "days", 86400;
        if (mx >= 2 * 3600) return *name = "hours", 3600;
        if (mx >= 120) return *name = "minutes", 60;
        return *name = "seconds", 1;
    }
    if (ends(d->m[m].field, "_usd")) {
        if (mx >= 1e6) return *name = "million US$", 1e6;
        return *name = "US$", 1;
    }
    return 1;
}

/* z as gnuplot text: control characters (a line break would end a comment
 * or a command) as spaces, invalid UTF-8 as U+FFFD; in a single-quoted
 * string (quoted) ' doubled, gnuplot's escape there. */
static void gp_put(FILE *f, const char *z, int quoted) {
    for (const unsigned char *p = (const unsigned char *)z; *p; p++) {
        int n = *p < 0x80 ? 1 : fileout_utf8_len(p);
        if (n > 1) {
            fwrite(p, 1, (size_t)n, f);
            p += n - 1;
        } else if (n == 0) {
            fputs("\xEF\xBF\xBD", f);
        } else if (*p == '\'' && quoted) {
            fputs("''", f);
        } else {
            fputc(*p < 0x20 || *p == 0x7F ? ' ' : *p, f);
        }
    }
}

/* z then tail as one gnuplot single-quoted string that nothing in them
 * can end. */
static void gp_str(FILE *f, const char *z, const char *tail) {
    fputc('\'', f);
    gp_put(f, z, 1);
    gp_put(f, tail, 1);
    fputc('\'', f);
}

/* The x axis and the lines of the charts: the first path's distinct values
 * (first[] their first point, xi[p] the index of point p's), and the
 * combinations of the other paths' values (sfirst[], series[p]). */
typedef struct layout {
    int numeric;                     /* every first-path value is a number */
    double xmin, xmax;
    int nd, *first, *xi;
    int ns, *sfirst, *series;
} layout;

static void layout_free(layout *l) {
    free(l->first);
    free(l->xi);
    free(l->sfirst);
    free(l->series);
}

static int layout_of(const sdata *d, layout *l) {
    const rd_sweep *s = &d->s;
    memset(l, 0, sizeof *l);
    l->numeric = 1;
    l->xmin = INFINITY, l->xmax = -INFINITY;
    for (int p = 0; p < s->n_points; p++) {
        double x = s->x[p][0];
        if (isnan(x)) l->numeric = 0;
        else l->xmin = fmin(l->xmin, x), l->xmax = fmax(l->xmax, x);
    }
    size_t n = (size_t)s->n_points + 1;
    l->first = calloc(n, sizeof *l->first), l->xi = calloc(n, sizeof *l->xi);
    l->sfirst = calloc(n, sizeof *l->sfirst), l->series = calloc(n, sizeof *l->series);
    if (!l->first || !l->xi || !l->sfirst || !l->series) return -1;
    for (int p = 0; p < s->n_points; p++) {
        int k = 0;
        while (k < l->nd && strcmp(s->val[l->first[k]][0], s->val[p][0])) k++;
        if (k == l->nd) l->first[l->nd++] = p;
        l->xi[p] = k;
        for (k = 0; k < l->ns; k++) {
            int same = 1;
            for (int a = 1; a < s->n_axes; a++) same &= !strcmp(s->val[l->sfirst[k]][a], s->val[p][a]);
            if (same) break;
        }
        if (k == l->ns) l->sfirst[l->ns++] = p;
        l->series[p] = k;
    }
    return 0;
}

/* The script's head: the terminal, the x axis and its tics. */
static void chart_head(FILE *gp, const sdata *d, const layout *l) {
    fprintf(gp, "# Charts of sweep %lld (", (long long)d->s.id);
    gp_put(gp, d->s.scenario, 0);
    fprintf(gp, "), drawn by `clustertwin report`: gnuplot sweep.gp\n"
                "set terminal svg size 720,360 fixed noenhanced font 'Helvetica,12' background rgb 'white'\n"
                "set encoding utf8\nset grid\nset key outside right top\nset xlabel ");
    gp_str(gp, d->s.axes[0], "");
    fprintf(gp, "\n");
    if (l->numeric && l->xmin > 0 && l->xmax / l->xmin >= 8) fprintf(gp, "set logscale x 2\n");
    fprintf(gp, "set xtics (");
    for (int k = 0; k < l->nd; k++) {
        fputs(k ? ", " : "", gp);
        gp_str(gp, d->s.val[l->first[k]][0], "");
        fprintf(gp, " %.17g", l->numeric ? d->s.x[l->first[k]][0] : (double)k);
    }
    fprintf(gp, ")\n");
    if (!l->numeric) fprintf(gp, "set xrange [-0.5:%d.5]\n", l->nd - 1);
}

/* Metric m's data (mM.dat: one block per line) and its plot. 0, or -1
 * when its data could not be written (the chart is left out). */
static int chart_metric(FILE *gp, const sdata *d, const layout *l, int m, const char *dir) {
    char dat[4200], why[1024];
    snprintf(dat, sizeof dat, "%s/m%d.dat", dir, m);
    fileout dout;
    if (fileout_open(&dout, dat, 0, 0666, why, sizeof why) != 0) return -1;
    const char *unit;
    double u = y_unit(d, m, &unit);
    for (int s = 0; s < l->ns; s++) {
        fprintf(dout.f, "# series %d\n", s);
        for (int p = 0; p < d->s.n_points; p++) {
            const goal_stats *g = sd_stat(d, p, m);
            if (l->series[p] != s || g->n == 0) continue;
            fprintf(dout.f, "%.17g %.17g %.17g %.17g\n", l->numeric ? d->s.x[p][0] : (double)l->xi[p], g->mean / u,
                    g->p10 / u, g->p90 / u);
        }
        fprintf(dout.f, "\n\n");
    }
    if (fileout_close(&dout, why, sizeof why) != 0) return -1;
    char name[256], tail[64];
    sweep_metric_name(&d->m[m], name, sizeof name);
    fprintf(gp, "\nset output 'm%d.svg'\nset title ", m);
    snprintf(tail, sizeof tail, ": mean, p10..p90 of %d replicas", d->s.replicas);
    gp_str(gp, name, tail);
    fputs("\nset ylabel ", gp);
    gp_str(gp, unit, "");
    fputs("\nplot ", gp);
    for (int s = 0; s < l->ns; s++) {
        char label[512] = "";
        size_t k = 0;
        for (int a = 1; a < d->s.n_axes; a++) {
            int w = snprintf(label + k, sizeof label - k, "%s%s=%s", a > 1 ? ", " : "", sweep_short_path(d->s.axes[a]),
                             d->s.val[l->sfirst[s]][a]);
            if (w > 0 && (size_t)w < sizeof label - k) k += (size_t)w;
        }
        fprintf(gp, "%s'm%d.dat' index %d using 1:2:3:4 with yerrorlines lw 2 title ", s ? ", \\\n     " : "", m, s);
        gp_str(gp, d->s.n_axes > 1 ? label : "mean (bars: p10..p90)", "");
    }
    fprintf(gp, "\n");
    return 0;
}

/* Run gnuplot on the planned charts; keep in drawn[] those it finished. */
static int chart_run(const char *dir, int *drawn, int planned, char *note, size_t notelen) {
    for (int i = 0; i < planned; i++) {
        char svg[32];
        snprintf(svg, sizeof svg, "m%d.svg", drawn[i]);
        if (!charts_svg_target_ok(dir, svg)) {
            snprintf(note, notelen, "charts not drawn: %.600s/%s is not a regular file (gnuplot would wait on it "
                     "or replace it)", dir, svg);
            return 0;
        }
    }
    int rc = charts_gnuplot(dir, "sweep.gp", "sweep-charts.log"), ok = 0;
    for (int i = 0; i < planned; i++) {
        char svg[32];
        snprintf(svg, sizeof svg, "m%d.svg", drawn[i]);
        if (charts_svg_complete(dir, svg)) drawn[ok++] = drawn[i];
    }
    if (rc == 127 && ok == 0)
        snprintf(note, notelen, "Charts are not drawn: gnuplot could not be run (install Debian's gnuplot-nox, or "
                                "point CLUSTERTWIN_GNUPLOT at gnuplot); their data and script are in %.600s.", dir);
    else if (ok < planned)
        snprintf(note, notelen, "gnuplot drew %d of %d charts (exit status %d; its messages are in %.600s/sweep-charts.log).",
                 ok, planned, rc, dir);
    return ok;
}

int sweep_draw_charts(const sdata *d, const char *dir, int *drawn, char *note, size_t notelen) {
    char path[4200], why[1024];
    snprintf(path, sizeof path, "%s/sweep.gp", dir);
    fileout go;
    if (fileout_open(&go, path, 0, 0666, why, sizeof why) != 0) {
        snprintf(note, notelen, "charts not drawn: %.900s", why);
        return 0;
    }
    layout l;
    int planned = 0;
    if (layout_of(d, &l) == 0) {
        chart_head(go.f, d, &l);
        for (int m = 0; m < d->n_metrics; m++)
            if (d->varies[m] && chart_metric(go.f, d, &l, m, dir) == 0) drawn[planned++] = m;
    }
    layout_free(&l);
    fprintf(go.f, "\nunset output\n");
    if (fileout_close(&go, why, sizeof why) != 0) {
        snprintf(note, notelen, "charts not drawn: %.900s", why);
        return 0;
    }
    return planned ? chart_run(dir, drawn, planned, note, notelen) : 0;
}

/* ---- heatmaps ---------------------------------------------------------------- */

#define HM_CELL_W 110
#define HM_CELL_H 44
#define HM_LEFT 170
#define HM_TOP 64

/* The colour of share t (0..1) of the way from good to bad: green, yellow,
 * red; or, without a direction (dir 0), light to dark blue. */
static void hm_colour(double t, int dir, char *b, size_t n) {
    static const double good[3] = { 0x1a, 0x98, 0x50 }, mid[3] = { 0xfe, 0xe0, 0x8b }, bad[3] = { 0xd7, 0x30, 0x27 };
    static const double lo[3] = { 0xde, 0xeb, 0xf7 }, hi[3] = { 0x4f, 0x8f, 0xc8 };
    double c[3];
    for (int i = 0; i < 3; i++)
        c[i] = dir ? (t < 0.5 ? good[i] + (mid[i] - good[i]) * 2 * t : mid[i] + (bad[i] - mid[i]) * (2 * t - 1))
                   : lo[i] + (hi[i] - lo[i]) * t;
    snprintf(b, n, "#%02x%02x%02x", (int)c[0], (int)c[1], (int)c[2]);
}

/* The index of value z among the distinct values vals[] of an axis (in
 * point order), added when new. */
static int hm_index(const char *z, const char **vals, int *nv) {
    for (int k = 0; k < *nv; k++)
        if (!strcmp(vals[k], z)) return k;
    vals[*nv] = z;
    return (*nv)++;
}

static void hm_text(FILE *f, double x, double y, const char *anchor, const char *weight, const char *z) {
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"%s\" font-weight=\"%s\">", x, y, anchor, weight);
    fileout_html(f, z);
    fputs("</text>\n", f);
}

/* One cell: coloured by where its mean lies between the best and the worst. */
static void hm_cell(FILE *f, const sdata *d, int m, int p, double x, double y, double lo, double hi, int dir) {
    const goal_stats *s = sd_stat(d, p, m);
    char fill[16] = "#eeeeee", v[64];
    const char *text = "n/a";
    if (d->s.unfit[p]) text = "does not fit";
    else if (s->n > 0 && !isnan(s->mean)) {
        double t = hi > lo ? (s->mean - lo) / (hi - lo) : 0.5;
        hm_colour(dir > 0 ? 1 - t : t, dir, fill, sizeof fill);
        text = sweep_fmt(&d->m[m], s->mean, v, sizeof v);
    }
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#ffffff\"/>\n", x, y,
            HM_CELL_W, HM_CELL_H, fill);
    hm_text(f, x + HM_CELL_W / 2.0, y + HM_CELL_H / 2.0 + 5, "middle", "normal", text);
}

int sweep_heatmap(const sdata *d, int m, const char *dir, char *file, size_t flen) {
    const rd_sweep *s = &d->s;
    if (s->n_axes != 2 || s->n_points < 1) return -1;
    const char **cols = calloc((size_t)s->n_points, sizeof *cols), **rows = calloc((size_t)s->n_points, sizeof *rows);
    int nc = 0, nr = 0, rc = -1;
    double lo = INFINITY, hi = -INFINITY;
    for (int p = 0; cols && rows && p < s->n_points; p++) {
        hm_index(s->val[p][0], cols, &nc);
        hm_index(s->val[p][1], rows, &nr);
        const goal_stats *g = sd_stat(d, p, m);
        if (!s->unfit[p] && g->n > 0 && !isnan(g->mean)) lo = fmin(lo, g->mean), hi = fmax(hi, g->mean);
    }
    char path[4200], name[256];
    snprintf(file, flen, "hm%d.svg", m);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    fileout o;
    if (!cols || !rows || fileout_open(&o, path, 0, 0666, NULL, 0) != 0) goto out;
    FILE *f = o.f;
    int w = HM_LEFT + nc * HM_CELL_W + 20, h = HM_TOP + nr * HM_CELL_H + 40, better = sweep_metric_better(&d->m[m]);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", w, h, w, h);
    sweep_metric_name(&d->m[m], name, sizeof name);
    hm_text(f, 10, 20, "start", "bold", name);
    hm_text(f, HM_LEFT + nc * HM_CELL_W / 2.0, 42, "middle", "normal", sweep_short_path(s->axes[0]));
    hm_text(f, 10, HM_TOP - 6, "start", "normal", sweep_short_path(s->axes[1]));
    for (int c = 0; c < nc; c++) hm_text(f, HM_LEFT + (c + 0.5) * HM_CELL_W, HM_TOP - 6, "middle", "bold", cols[c]);
    for (int r = 0; r < nr; r++) hm_text(f, HM_LEFT - 8, HM_TOP + (r + 0.5) * HM_CELL_H + 5, "end", "bold", rows[r]);
    for (int p = 0; p < s->n_points; p++) {
        int c = hm_index(s->val[p][0], cols, &nc), r = hm_index(s->val[p][1], rows, &nr);
        hm_cell(f, d, m, p, HM_LEFT + c * HM_CELL_W, HM_TOP + r * HM_CELL_H, lo, hi, better);
    }
    hm_text(f, 10, h - 12, "start", "normal",
            better ? "green: better, red: worse (the mean over the replicas)" : "the mean over the replicas");
    fputs("</svg>\n", f);
    rc = fileout_close(&o, NULL, 0) == 0 ? 0 : -1;
out:
    free(cols);
    free(rows);
    return rc;
}
