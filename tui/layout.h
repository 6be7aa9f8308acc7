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
 * layout_compute gives each panel its share of the screen; layout_fit then
 * cuts the panels to what the run has to show and gives the rows freed to
 * the event log, so a tall terminal shows more events, not empty rows.
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

/* What a run has to show: nodes on the map (and the leaf-switch group the
 * map groups them by), jobs in the table, sparkline rows. */
typedef struct layout_content { int nodes, nodes_per_leaf, jobs, sparks; } layout_content;

/* layout_compute(rows, cols) with each panel no taller than its content
 * needs (and never below its minimum: the map band 6 rows, the jobs 5, the
 * sparklines 3), the rows freed going to the event log. Narrow: the map
 * band, the jobs and the sparklines shrink, the log below them grows; wide:
 * the jobs shrink and the log under them grows (the left column keeps its
 * shares). The map's grid (layout_map_grid) is the same in the fitted map as
 * in the share it was cut from. */
layout layout_fit(int rows, int cols, layout_content c);

/* How the map draws n nodes in a rect of h rows (the first is its title)
 * and w columns: per_cell nodes per cell (1, or grouped: a divisor or a
 * multiple of the leaf-switch group when nodes_per_leaf > 0, else a power
 * of two), cell_w columns per cell (2 when room allows, else 1), cols
 * cells per row, cells in all. */
typedef struct map_grid { int per_cell, cell_w, cols, cells; } map_grid;
map_grid layout_map_grid(int nodes, int nodes_per_leaf, int h, int w);

#endif
