/*
 * slurm: a sweep as a Slurm job array. `sweep --emit-slurm DIR` writes
 * DIR/tasks.txt (task K's command line: its interleaved share --part K/T of
 * the runs, into its own database DIR/task-K.db), DIR/sweep.sbatch (the
 * array: task K runs line K+1) and DIR/merge.sh (clustertwin merge of the
 * tasks' databases), and runs nothing.
 *
 * Everything generated into shell is one single-quoted word; what cannot
 * be (a line break in a path or value) is refused as bad input.
 */
#ifndef CT_PLAN_SLURM_H
#define CT_PLAN_SLURM_H

#include <stddef.h>

#include "plan/grid.h"

/* Write the three files for sw (its points checked) in dir: tasks shares,
 * each run into the database db (relative paths made absolute), the task
 * lines repeating the --vary and --set arguments as given. Prints what it
 * wrote on stdout, or the error ("clustertwin sweep: ..."); returns a
 * plan/status.h status. */
int slurm_emit(const sweep *sw, const char *dir, int tasks, const char *db, const char *const *vary, int n_vary,
               const char *const *sets, int n_set);

/* Append z to b (cap bytes) as one shell word in single quotes (' as
 * '\''), safe in any shell context. Returns 0, or -1 when z holds a control
 * character (a line break cannot be kept on one script line) or the word
 * does not fit; b is then not a usable command line. */
int sweep_shell_quote(char *b, size_t cap, const char *z);

#endif
