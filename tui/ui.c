/*
 * ui: keys to state changes and commands (see ui.h).
 */
#include "tui/ui.h"

#include <stdio.h>
#include <string.h>

const char *ui_sort_name(ui_sort s) {
    static const char *z[] = { "order", "name", "state", "gpus", "progress", "eta", "interruptions", "ettr" };
    return (s >= 0 && s < SORT_COUNT) ? z[s] : "?";
}

void ui_init(ui_state *u, double speed, int paused) {
    memset(u, 0, sizeof *u);
    u->speed = speed > UI_SPEED_MAX ? UI_SPEED_MAX : speed < UI_SPEED_MIN ? UI_SPEED_MIN : speed;
    u->paused = paused;
    u->focus = UI_MAP;
    u->sort = SORT_STATE;              /* trouble first, then running, queued, done */
}

static int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Keep the selected row on screen. */
static void follow(ui_state *u, const ui_view *v) {
    int rows = v->job_rows > 0 ? v->job_rows : 1;
    u->job_row = clampi(u->job_row, 0, v->jobs > 0 ? v->jobs - 1 : 0);
    if (u->job_row < u->job_top) u->job_top = u->job_row;
    if (u->job_row >= u->job_top + rows) u->job_top = u->job_row - rows + 1;
    u->job_top = clampi(u->job_top, 0, v->jobs > rows ? v->jobs - rows : 0);
}

static int move(ui_state *u, const ui_view *v, int dy, int dx, int page) {
    switch (u->focus) {
    case UI_MAP: {
        int per = v->per_cell > 0 ? v->per_cell : 1, cols = v->map_cols > 0 ? v->map_cols : 1;
        if (v->nodes <= 0) return UI_HANDLED;
        int cell = u->node / per, cells = (v->nodes + per - 1) / per;
        cell += dx + dy * cols * (page ? 4 : 1);
        if (page && dy == 0) cell = dx < 0 ? 0 : cells - 1;
        cell = clampi(cell, 0, cells - 1);
        u->node = cell * per;
        break;
    }
    case UI_JOBS: {
        int step = page ? (v->job_rows > 1 ? v->job_rows - 1 : 1) : 1;
        if (page && dy == 0) u->job_row = dx < 0 ? 0 : v->jobs - 1;
        else u->job_row += dy * step;
        follow(u, v);
        break;
    }
    case UI_LOG: {
        int step = page ? (v->log_rows > 1 ? v->log_rows - 1 : 1) : 1;
        int max = v->log_lines > v->log_rows ? v->log_lines - v->log_rows : 0;
        if (page && dy == 0) u->log_top = dx < 0 ? 0 : max;
        else u->log_top = clampi(u->log_top + dy * step, 0, max);
        break;
    }
    default: break;
    }
    return UI_HANDLED | UI_REDRAW;
}

int ui_key(ui_state *u, int key, const ui_view *v) {
    if (key == UI_KEY_RESIZE) return UI_HANDLED | UI_REDRAW | UI_RESIZE;
    if (u->help) {                     /* any key closes the help; q still quits */
        u->help = 0;
        return (key == 'q' || key == 'Q') ? UI_HANDLED | UI_QUIT : UI_HANDLED | UI_REDRAW;
    }
    switch (key) {
    case 'q':
    case 'Q': return UI_HANDLED | UI_QUIT;
    case ' ':
        u->paused = !u->paused;
        snprintf(u->msg, sizeof u->msg, "%s", u->paused ? "paused: space resumes, '.' steps one event" : "");
        return UI_HANDLED | UI_REDRAW;
    case '+':
    case '=':
        u->speed = u->speed * 2 > UI_SPEED_MAX ? UI_SPEED_MAX : u->speed * 2;
        return UI_HANDLED | UI_REDRAW;
    case '-':
    case '_':
        u->speed = u->speed / 2 < UI_SPEED_MIN ? UI_SPEED_MIN : u->speed / 2;
        return UI_HANDLED | UI_REDRAW;
    case '.':
        if (!u->paused) {
            snprintf(u->msg, sizeof u->msg, "'.' steps one event when paused (space pauses)");
            return UI_HANDLED | UI_REDRAW;
        }
        return UI_HANDLED | UI_REDRAW | UI_STEP;
    case '\t':
    case UI_KEY_TAB: u->focus = (ui_panel)((u->focus + 1) % UI_PANELS); return UI_HANDLED | UI_REDRAW;
    case UI_KEY_BTAB: u->focus = (ui_panel)((u->focus + UI_PANELS - 1) % UI_PANELS); return UI_HANDLED | UI_REDRAW;
    case 'j':
    case UI_KEY_DOWN: return move(u, v, 1, 0, 0);
    case 'k':
    case UI_KEY_UP: return move(u, v, -1, 0, 0);
    case 'h':
    case UI_KEY_LEFT: return u->focus == UI_MAP ? move(u, v, 0, -1, 0) : UI_HANDLED;
    case 'l':
    case UI_KEY_RIGHT: return u->focus == UI_MAP ? move(u, v, 0, 1, 0) : UI_HANDLED;
    case UI_KEY_PGDN: return move(u, v, 1, 0, 1);
    case UI_KEY_PGUP: return move(u, v, -1, 0, 1);
    case 'g':
    case UI_KEY_HOME: return move(u, v, 0, -1, 1);
    case 'G':
    case UI_KEY_END: return move(u, v, 0, 1, 1);
    case 's':
        u->sort = (ui_sort)((u->sort + 1) % SORT_COUNT);
        snprintf(u->msg, sizeof u->msg, "jobs sorted by %s", ui_sort_name(u->sort));
        return UI_HANDLED | UI_REDRAW;
    case 'f': return v->nodes > 0 ? UI_HANDLED | UI_REDRAW | UI_INJECT : UI_HANDLED;
    case 'd': return v->nodes > 0 ? UI_HANDLED | UI_REDRAW | UI_DRAIN : UI_HANDLED;
    case '?':
        u->help = 1;
        return UI_HANDLED | UI_REDRAW;
    default: return 0;
    }
}
