/*
 * report_compare: the HTML report of two runs, A and B: both answers, the
 * headline figures with B - A, the training jobs they share and the
 * failures by cause, then the charts of both overlaid on shared axes
 * (reports/charts_compare.c), their topologies and scenarios.
 */
#include "reports/report_int.h"

#include <math.h>
#include <string.h>

#include "reports/report_html.h"

/* One row of a comparison table: label cells, A, B and B - A. */
static void diff_row(FILE *f, const char *first, const char *label, fmt fm, double x, double y) {
    char xs[64], ys[64], d[96];
    int sign;
    diff_text(fm, x, y, d, sizeof d, &sign);
    fputs("<tr>", f);
    if (first) html_td(f, first, 0);
    html_td(f, label, 0);
    html_td(f, fmt_value(fm, x, xs, sizeof xs), 1);
    html_td(f, fmt_value(fm, y, ys, sizeof ys), 1);
    html_td(f, d, 1);
    fputs("</tr>\n", f);
}

/* The title, both answers and both runs' particulars. */
static void compare_header(FILE *f, rundata_db *rd, const rundata *a, const rundata *b, const figures *ma,
                           const figures *mb, const charts *ch, const char *db_path) {
    char sa[1024], sb[1024], title[256];
    answer(rd, a, ma, sa, sizeof sa);
    answer(rd, b, mb, sb, sizeof sb);
    snprintf(title, sizeof title, "%s run %lld vs %s run %lld: clustertwin report", a->scenario, (long long)a->id,
             b->scenario, (long long)b->id);
    html_head(f, title);
    fputs("<h1>", f);
    html_textf(f, "Run %lld vs run %lld", (long long)a->id, (long long)b->id);
    fputs(" <small>", f);
    html_textf(f, "%s (seed %lld) and %s (seed %lld)", a->scenario, a->seed, b->scenario, b->seed);
    fputs("</small></h1>\n", f);
    fprintf(f, "<p class=\"answer\"><b>A (run %lld):</b> ", (long long)a->id);
    html_text(f, sa);
    fprintf(f, "<br/><b>B (run %lld):</b> ", (long long)b->id);
    html_text(f, sb);
    fputs("</p>\n", f);
    report_html_meta(f, a, db_path);
    report_html_meta(f, b, db_path);
    if (ch->note[0]) {
        fputs("<p class=\"warn\">", f);
        html_text(f, ch->note);
        fputs("</p>\n", f);
    }
}

static void compare_headline(FILE *f, const figures *ma, const figures *mb) {
    html_h2(f, "headline", "Headline");
    static const char *const cols[] = { "figure", "A", "B", "B - A", NULL };
    html_th(f, cols, "tnnn");
    for (int i = 0; i < NM; i++) diff_row(f, NULL, mdef[i].label, mdef[i].f, ma->v[i], mb->v[i]);
    fputs("</table></div>\n", f);
}

/* Training jobs present in both, by name. */
static void compare_training(FILE *f, const rundata *a, const rundata *b) {
    int header = 0;
    for (int i = 0; i < a->n_jobs; i++) {
        const rd_job *ja = &a->jobs[i], *jb = NULL;
        if (strcmp(ja->kind, "training")) continue;
        for (int k = 0; k < b->n_jobs && !jb; k++)
            if (!strcmp(b->jobs[k].name, ja->name)) jb = &b->jobs[k];
        if (!jb) continue;
        if (!header++) {
            html_h2(f, "training", "Training jobs in both runs");
            static const char *const c2[] = { "job", "figure", "A", "B", "B - A", NULL };
            html_th(f, c2, "ttnnn");
        }
        struct { const char *label; fmt f_; double x, y; } rows[] = {
            { "finished at", F_DUR, ja->end_s, jb->end_s },
            { "step time", F_SECONDS, ja->step_time_s, jb->step_time_s },
            { "MFU", F_PCT, ja->mfu, jb->mfu },
            { "ETTR", F_PCT, ja->ettr, jb->ettr },
            { "interruptions", F_COUNT, ja->interruptions, jb->interruptions },
            { "lost and redone", F_DUR, ja->lost_work_s, jb->lost_work_s },
            { "checkpoint stalls", F_DUR, ja->checkpoint_stall_s, jb->checkpoint_stall_s },
            { "restarting", F_DUR, ja->restart_s, jb->restart_s },
            { "waiting for nodes", F_DUR, ja->waiting_s, jb->waiting_s },
        };
        for (size_t r = 0; r < sizeof rows / sizeof *rows; r++)
            diff_row(f, r ? "" : ja->name, rows[r].label, rows[r].f_, rows[r].x, rows[r].y);
    }
    if (header) fputs("</table></div>\n", f);
}

/* Failures by cause: the kinds of A (with B's count), then those only B has. */
static void compare_failures(FILE *f, const rundata *a, const rundata *b) {
    html_h2(f, "failures", "Failures by cause");
    static const char *const c3[] = { "cause", "component", "A", "B", "B - A", NULL };
    html_th(f, c3, "ttnnn");
    for (int pass = 0; pass < 2; pass++) {
        const rundata *r = pass ? b : a, *o = pass ? a : b;
        for (int i = 0; i < r->n_kinds; i++) {
            const rd_kind *k = &r->kinds[i];
            const rd_kind *ko = NULL;
            for (int t = 0; t < o->n_kinds && !ko; t++)
                if (!strcmp(o->kinds[t].cause, k->cause) && !strcmp(o->kinds[t].component, k->component)) ko = &o->kinds[t];
            if (pass && ko) continue;                /* listed in the first pass */
            double x = pass ? (ko ? ko->count : 0) : k->count, y = pass ? k->count : (ko ? ko->count : 0);
            if (x == 0 && y == 0) continue;
            diff_row(f, k->cause, k->component, F_COUNT, x, y);
        }
    }
    fputs("</table></div>\n", f);
}

/* The charts, one per quantity, both runs on the same axes. */
static void compare_charts(FILE *f, const rundata *a, const rundata *b, const charts *ch) {
    static const char *const keys[] = { "util", "cost", "failures", "progress", "steps", "waits", "latency" };
    html_h2(f, "charts", "Overlaid");
    fputs("<p class=\"caption\">", f);
    html_textf(f, "Both runs on the same axes: A (run %lld) in blue, B (run %lld) in orange.", (long long)a->id,
               (long long)b->id);
    fputs("</p>\n", f);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const chart *c = charts_find(ch, keys[i]);
        if (c) html_figure(f, c);
    }
}

static void compare_topologies(FILE *f, const rundata *a, const rundata *b, const char *ta, const char *tb) {
    if (!ta && !tb) return;
    fputs("<div class=\"pair\">\n", f);
    for (int k = 0; k < 2; k++) {
        const char *t = k ? tb : ta;
        fputs("<div>", f);
        if (t) {
            chart c = { "topology", "", "Cluster topology", "" };
            snprintf(c.caption, sizeof c.caption, "Run %lld.", (long long)(k ? b->id : a->id));
            snprintf(c.file, sizeof c.file, "%s", t);
            html_figure(f, &c);
        }
        fputs("</div>\n", f);
    }
    fputs("</div>\n", f);
}

void report_html_compare(FILE *f, rundata_db *rd, const rundata *a, const rundata *b, const charts *ch,
                         const char *ta, const char *tb, const char *db_path) {
    figures ma, mb;
    figures_of(a, &ma);
    figures_of(b, &mb);
    compare_header(f, rd, a, b, &ma, &mb, ch, db_path);
    compare_headline(f, &ma, &mb);
    compare_training(f, a, b);
    compare_failures(f, a, b);
    compare_charts(f, a, b, ch);
    compare_topologies(f, a, b, ta, tb);
    report_html_scenario(f, a);
    report_html_scenario(f, b);
    fputs("</body>\n</html>\n", f);
}
