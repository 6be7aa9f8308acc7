/*
 * layout: where each panel of the dashboard goes, as a pure function of
 * the terminal's size (no terminal needed; tests/test_tui.c).
 *
 *  narrow (80..119 columns)          wide (120 columns and more)
 *  +---------------------------+     +-------------+---------------+
 *  | header (2 lines)          |     | header                      |
 *  +-------------+-------------+     +-------------+---------------+
 *  | map         | detail      |     | map         | jobs          |
 *  +-------------+-------------+     |             |               |
 *  | jobs                      |     +-------------+               |
 *  +---------------------------+     | detail      +---------------+
 *  | sparklines                |     +-------------+ log           |
 *  +---------------------------+     | sparklines  |               |
 *  | log                       |     |             |               |
 *  +---------------------------+     +-------------+---------------+
 *  | status (1 line)           |     | status                      |
 *
 * Panels never overlap and stay inside the screen; below 80x24 nothing is
 * laid out (ok = 0) and the dashboard says the terminal is too small.
 */
#ifndef CT_LAYOUT_H
#define CT_LAYOUT_H

#define LAYOUT_MIN_ROWS 24
#define LAYOUT_MIN_COLS 80
#define LAYOUT_WIDE_COLS 120

typedef struct rect { int y, x, h, w; } rect;

typedef struct layout {
    int ok;                            /* 0: terminal too small, no panel set */
    int wide;
    rect header, map, detail, jobs, sparks, log, status;
} layout;

layout layout_compute(int rows, int cols);

/* How the map draws n nodes in a rect of h rows (the first is its title)
 * and w columns: per_cell nodes per cell (1, or grouped: a divisor or a
 * multiple of the leaf-switch group when nodes_per_leaf > 0, else a power
 * of two), cell_w columns per cell (2 when room allows, else 1), cols
 * cells per row, cells in all. */
typedef struct map_grid { int per_cell, cell_w, cols, cells; } map_grid;
map_grid layout_map_grid(int nodes, int nodes_per_leaf, int h, int w);

#endif
