/*
 * layout: panel rectangles from the terminal size (see layout.h).
 */
#include "tui/layout.h"

static rect mk(int y, int x, int h, int w) { return (rect){ y, x, h, w }; }

layout layout_compute(int rows, int cols) {
    layout L = { 0 };
    if (rows < LAYOUT_MIN_ROWS || cols < LAYOUT_MIN_COLS) return L;
    L.ok = 1;
    L.header = mk(0, 0, 2, cols);
    L.status = mk(rows - 1, 0, 1, cols);
    int y = 2, body = rows - 3;
    if (cols < LAYOUT_WIDE_COLS) {
        int top = body * 30 / 100, jobs = body * 35 / 100;
        if (top < 6) top = 6;
        if (jobs < 7) jobs = 7;
        int rest = body - top - jobs;
        int sparks = rest / 2;
        if (sparks > 8) sparks = 8;
        int mapw = cols / 2;
        L.map = mk(y, 0, top, mapw);
        L.detail = mk(y, mapw + 1, top, cols - mapw - 1);
        L.jobs = mk(y + top, 0, jobs, cols);
        L.sparks = mk(y + top + jobs, 0, sparks, cols);
        L.log = mk(y + top + jobs + sparks, 0, rest - sparks, cols);
        return L;
    }
    L.wide = 1;
    int left = cols * 45 / 100, right = cols - left - 1;
    int detail = 5, maph = (body - detail) * 55 / 100;
    L.map = mk(y, 0, maph, left);
    L.detail = mk(y + maph, 0, detail, left);
    L.sparks = mk(y + maph + detail, 0, body - maph - detail, left);
    int jobs = body * 55 / 100;
    L.jobs = mk(y, left + 1, jobs, right);
    L.log = mk(y + jobs, left + 1, body - jobs, right);
    return L;
}

/* Rows a panel keeps: what it needs, within [least, share]. */
static int keep(int need, int least, int share) {
    if (need > share) need = share;
    return need > least ? need : least < share ? least : share;
}

/* Rows the map needs: its title and the rows of its grid at its share. */
static int map_need(rect share, layout_content c) {
    map_grid g = layout_map_grid(c.nodes, c.nodes_per_leaf, share.h, share.w);
    return 1 + (g.cells + g.cols - 1) / g.cols;
}

layout layout_fit(int rows, int cols, layout_content c) {
    layout L = layout_compute(rows, cols);
    if (!L.ok) return L;
    int jobs = keep(1 + c.jobs, 5, L.jobs.h);
    if (L.wide) {
        L.log.y -= L.jobs.h - jobs;
        L.log.h += L.jobs.h - jobs;
        L.jobs.h = jobs;
        return L;
    }
    int top = keep(map_need(L.map, c), 6, L.map.h), sparks = keep(c.sparks, 3, L.sparks.h);
    int freed = (L.map.h - top) + (L.jobs.h - jobs) + (L.sparks.h - sparks);
    L.map.h = L.detail.h = top;
    L.jobs = mk(L.map.y + top, 0, jobs, cols);
    L.sparks = mk(L.jobs.y + jobs, 0, sparks, cols);
    L.log = mk(L.sparks.y + sparks, 0, L.log.h + freed, cols);
    return L;
}

map_grid layout_map_grid(int nodes, int nodes_per_leaf, int h, int w) {
    map_grid g = { 1, 1, w > 0 ? w : 1, nodes > 0 ? nodes : 0 };
    int rows = h - 1;
    if (rows < 1) rows = 1;
    if (nodes <= 0 || w <= 0) return g;
    long cap = (long)rows * w;
    if (w >= 2 && (long)nodes <= (long)rows * (w / 2)) {
        g.cell_w = 2;
        g.cols = w / 2;
        return g;
    }
    if (nodes <= cap) return g;
    int need = (int)((nodes + cap - 1) / cap);
    int per = 1;
    if (nodes_per_leaf > 0) {
        /* the smallest divisor of the leaf group, or multiple of it, >= need */
        per = 0;
        for (int d = 1; d <= nodes_per_leaf && !per; d++)
            if (nodes_per_leaf % d == 0 && d >= need) per = d;
        if (!per) per = (need + nodes_per_leaf - 1) / nodes_per_leaf * nodes_per_leaf;
    } else {
        while (per < need) per *= 2;
    }
    g.per_cell = per;
    g.cells = (nodes + per - 1) / per;
    return g;
}
