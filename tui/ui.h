/*
 * ui: the dashboard's state and what each key does to it. No terminal and
 * no world here: a key handler changes this state and returns flags saying
 * what the loop must do (redraw, quit, step one event, inject a failure on
 * the selected node, drain it); it never draws and never touches the
 * world (htop's Action.h). tests/test_tui.c drives it with key scripts.
 */
#ifndef CT_UI_H
#define CT_UI_H

enum ui_flag {
    UI_HANDLED = 1,       /* the key meant something */
    UI_REDRAW = 2,        /* state changed: draw again */
    UI_QUIT = 4,          /* finish the run, write the results, leave */
    UI_STEP = 8,          /* dispatch one event (paused) */
    UI_INJECT = 16,       /* inject a failure on the selected node */
    UI_DRAIN = 32,        /* drain or undrain the selected node */
    UI_RESIZE = 64        /* the terminal changed size: lay out again */
};

/* Keys beyond characters (the terminal layer maps its codes to these). */
enum ui_key {
    UI_KEY_UP = 0x10000, UI_KEY_DOWN, UI_KEY_LEFT, UI_KEY_RIGHT, UI_KEY_TAB, UI_KEY_BTAB,
    UI_KEY_PGUP, UI_KEY_PGDN, UI_KEY_HOME, UI_KEY_END, UI_KEY_RESIZE
};

typedef enum ui_panel { UI_MAP, UI_JOBS, UI_LOG, UI_PANELS } ui_panel;

typedef enum ui_sort {
    SORT_ORDER, SORT_NAME, SORT_STATE, SORT_GPUS, SORT_PROGRESS, SORT_ETA, SORT_INTERRUPTIONS, SORT_ETTR,
    SORT_COUNT
} ui_sort;
const char *ui_sort_name(ui_sort s);

#define UI_SPEED_MIN 1e-3          /* simulated seconds per wall second */
#define UI_SPEED_MAX 1e9

typedef struct ui_state {
    int paused;
    int help;                      /* the help screen is shown */
    double speed;                  /* simulated seconds per wall second */
    ui_panel focus;
    int node;                      /* selected node: the first of its map cell */
    int job_row, job_top;          /* selected row of the jobs table, first row shown */
    int log_top;                   /* log lines scrolled back */
    ui_sort sort;
    char msg[160];                 /* one-line message on the status line */
} ui_state;

/* The sizes a key handler needs (from the last frame drawn). */
typedef struct ui_view {
    int nodes, per_cell, map_cols; /* map: nodes, nodes per cell, cells per row */
    int jobs, job_rows;            /* jobs, table rows shown */
    int log_lines, log_rows;       /* log lines held, rows shown */
} ui_view;

void ui_init(ui_state *u, double speed, int paused);

/* Apply one key (a character or a UI_KEY_*). Returns ui_flag bits; 0 for
 * a key that means nothing. */
int ui_key(ui_state *u, int key, const ui_view *v);

#endif
