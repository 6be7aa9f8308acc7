/*
 * slurm: a sweep written as a Slurm job array (see slurm.h). A task line
 * is at most 16 KB; the array has at most as many tasks as runs.
 */
#include "plan/slurm.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/fileout.h"

#define LINE_MAX_BYTES 16384

int sweep_shell_quote(char *b, size_t cap, const char *z) {
    size_t n = strlen(b), n0 = n;
    for (const char *c = z; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F) return -1;      /* a line break would split the script's line */
    if (n + 3 > cap) return -1;
    b[n++] = '\'';
    for (; *z; z++) {
        if (n + 6 > cap) {
            b[n0] = 0;                                 /* b as it was */
            return -1;
        }
        if (*z == '\'') {
            memcpy(b + n, "'\\''", 4);
            n += 4;
        } else {
            b[n++] = *z;
        }
    }
    b[n++] = '\'';
    b[n] = 0;
    return 0;
}

/* Write text to path by reports/fileout's rule; 0, or -1 with the message
 * printed. */
static int write_file(const char *path, const char *text, unsigned perm) {
    char err[4400];
    if (fileout_write(path, 0, perm, text, strlen(text), err, sizeof err) == 0) return 0;
    fprintf(stderr, "clustertwin sweep: %s\n", err);
    return -1;
}

/* z for a comment or an #SBATCH line of a generated script: a line break
 * there would end the comment and run the rest, so control characters
 * become '?'. */
static void comment_safe(char *b, size_t cap, const char *z) {
    size_t n = 0;
    for (; *z && n + 1 < cap; z++, n++) b[n] = (unsigned char)*z < 0x20 || *z == 0x7F ? '?' : *z;
    b[n] = 0;
}

/* Append z to b (cap bytes) when it fits; a line that would not fit is
 * caught by the length check after it is built. */
static void add(char *b, size_t cap, const char *z) {
    size_t n = strlen(b), k = strlen(z);
    if (n + k < cap) memcpy(b + n, z, k + 1);
}

/* The paths the scripts name, absolute, and as shell words. */
typedef struct where {
    char bin[PATH_MAX], file[PATH_MAX], adir[PATH_MAX], adb[PATH_MAX + 64];
    char qtasks[2 * PATH_MAX], qbin[2 * PATH_MAX], qdb[2 * PATH_MAX + 72], qdir[2 * PATH_MAX];
    char qsbatch[2 * PATH_MAX], qmerge[2 * PATH_MAX];
} where;

/* A line break in a path cannot be carried: refused before anything is made. */
static int refuse_control(const char *dir, const char *db, const char *file) {
    const char *given[] = { dir, db, file };
    for (int i = 0; i < 3; i++)
        for (const char *c = given[i]; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7F) {
                fprintf(stderr, "clustertwin sweep: --emit-slurm: %s holds a line break or other control character, "
                                "which a Slurm script cannot carry\n",
                        i == 0 ? "the directory" : i == 1 ? "the --db path" : "the scenario path");
                return PLAN_BAD_INPUT;
            }
    return PLAN_OK;
}

/* Make dir and find the absolute paths (the program, the scenario, dir, db). */
static int resolve(const char *dir, const char *db, const char *scenario_file, where *wh) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "clustertwin sweep: cannot create %s: %s\n", dir, strerror(errno));
        return PLAN_FAILED;
    }
    ssize_t k = readlink("/proc/self/exe", wh->bin, sizeof wh->bin - 1);
    if (k <= 0) snprintf(wh->bin, sizeof wh->bin, "clustertwin");
    else wh->bin[k] = 0;
    if (!realpath(scenario_file, wh->file) || !realpath(dir, wh->adir)) {
        fprintf(stderr, "clustertwin sweep: %s: %s\n", scenario_file, strerror(errno));
        return PLAN_FAILED;
    }
    if (db[0] == '/') snprintf(wh->adb, sizeof wh->adb, "%s", db);
    else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
        snprintf(wh->adb, sizeof wh->adb, "%s/%s", cwd, db);
    }
    return PLAN_OK;
}

/* Every path generated into shell as one single-quoted word. */
static int quote_paths(const char *dir, where *wh) {
    char path[PATH_MAX + 32];
    int bad = 0;
    snprintf(path, sizeof path, "%s/tasks.txt", wh->adir);
    bad |= sweep_shell_quote(wh->qtasks, sizeof wh->qtasks, path);
    snprintf(path, sizeof path, "%s/sweep.sbatch", wh->adir);
    bad |= sweep_shell_quote(wh->qsbatch, sizeof wh->qsbatch, path);
    snprintf(path, sizeof path, "%s/merge.sh", wh->adir);
    bad |= sweep_shell_quote(wh->qmerge, sizeof wh->qmerge, path);
    bad |= sweep_shell_quote(wh->qbin, sizeof wh->qbin, wh->bin);
    bad |= sweep_shell_quote(wh->qdb, sizeof wh->qdb, wh->adb);
    bad |= sweep_shell_quote(wh->qdir, sizeof wh->qdir, wh->adir);
    if (!bad) return PLAN_OK;
    fprintf(stderr, "clustertwin sweep: --emit-slurm %s: a path (the directory, --db, the program) holds a line "
                    "break or other control character, which a Slurm script cannot carry\n", dir);
    return PLAN_BAD_INPUT;
}

/* Task t's command line in one (LINE_MAX_BYTES). PLAN_OK or PLAN_BAD_INPUT
 * (printed). */
static int task_line(const sweep *sw, const where *wh, int t, int tasks, const char *const *vary, int n_vary,
                     const char *const *sets, int n_set, char *one) {
    one[0] = 0;
    int qbad = sweep_shell_quote(one, LINE_MAX_BYTES, wh->bin);
    add(one, LINE_MAX_BYTES, " sweep ");
    qbad |= sweep_shell_quote(one, LINE_MAX_BYTES, wh->file);
    for (int i = 0; i < n_vary; i++) {
        add(one, LINE_MAX_BYTES, " --vary ");
        qbad |= sweep_shell_quote(one, LINE_MAX_BYTES, vary[i]);
    }
    for (int i = 0; i < n_set; i++) {
        add(one, LINE_MAX_BYTES, " --set ");
        qbad |= sweep_shell_quote(one, LINE_MAX_BYTES, sets[i]);
    }
    char tail[PATH_MAX + 256], dbk[PATH_MAX + 64];
    snprintf(dbk, sizeof dbk, "%s/task-%d.db", wh->adir, t);
    snprintf(tail, sizeof tail, " --replicas %d --part %d/%d --jobs \"${SLURM_CPUS_PER_TASK:-1}\" --quiet --db ",
             sw->replicas, t, tasks);
    add(one, LINE_MAX_BYTES, tail);
    qbad |= sweep_shell_quote(one, LINE_MAX_BYTES, dbk);
    if (!qbad && strlen(one) + 64 < LINE_MAX_BYTES) return PLAN_OK;
    fprintf(stderr, "clustertwin sweep: --emit-slurm: %s\n",
            strlen(one) + 64 >= LINE_MAX_BYTES ? "a task's command line would be longer than 16 KB"
                                               : "a --vary or --set value or a path holds a line break or other "
                                                 "control character, which a Slurm task line cannot carry");
    return PLAN_BAD_INPUT;
}

/* Every task's line (malloc'd in *out). */
static int task_lines(const sweep *sw, const where *wh, int tasks, const char *const *vary, int n_vary,
                      const char *const *sets, int n_set, char **out) {
    size_t cap = (size_t)tasks * 4096 + 4096, used = 0;
    char *lines = malloc(cap), *one = malloc(LINE_MAX_BYTES);
    *out = NULL;
    if (!lines || !one) {
        free(lines);
        free(one);
        return PLAN_FAILED;
    }
    lines[0] = 0;
    for (int t = 0; t < tasks; t++) {
        if (task_line(sw, wh, t, tasks, vary, n_vary, sets, n_set, one) != PLAN_OK) {
            free(one);
            free(lines);
            return PLAN_BAD_INPUT;
        }
        int w = snprintf(lines + used, cap - used, "%s\n", one);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
    free(one);
    *out = lines;
    return PLAN_OK;
}

/* The array script and the merge script. Comments and #SBATCH lines are
 * read by sbatch, not the shell: no line break may reach them, and the job
 * name keeps to [A-Za-z0-9._-]. */
static int write_scripts(const sweep *sw, const where *wh, int tasks) {
    char cfile[PATH_MAX], cdir[PATH_MAX], cqsbatch[2 * PATH_MAX], cqmerge[2 * PATH_MAX], name[SC_NAME_MAX + 1];
    char path[PATH_MAX + 32];
    comment_safe(cfile, sizeof cfile, sw->file);
    comment_safe(cdir, sizeof cdir, wh->adir);
    comment_safe(cqsbatch, sizeof cqsbatch, wh->qsbatch);
    comment_safe(cqmerge, sizeof cqmerge, wh->qmerge);
    snprintf(name, sizeof name, "%s", sw->base->name);
    for (char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-'))
            *c = '_';
    size_t tcap = 16384 + 8 * PATH_MAX;
    char *text = malloc(tcap);
    if (!text) {
        fprintf(stderr, "clustertwin sweep: out of memory\n");
        return PLAN_FAILED;
    }
    int rc = PLAN_OK;
    snprintf(text, tcap,
             "#!/bin/bash\n"
             "# clustertwin sweep of %s as a Slurm job array: task K runs line K+1 of\n"
             "# tasks.txt (its share of the %d points x %d replicas) into its own\n"
             "# database task-K.db. When every task is done, merge.sh combines them:\n"
             "#   jid=$(sbatch --parsable %s)\n"
             "#   sbatch --dependency=afterok:$jid %s\n"
             "#SBATCH --job-name=ct-sweep-%s\n"
             "#SBATCH --array=0-%d\n"
             "#SBATCH --ntasks=1\n"
             "#SBATCH --cpus-per-task=1\n"
             "#SBATCH --output=%s/task-%%a.log\n"
             "set -eu\n"
             "task=${SLURM_ARRAY_TASK_ID:?run this with sbatch (or set SLURM_ARRAY_TASK_ID)}\n"
             "line=$(sed -n \"$((task + 1))p\" %s)\n"
             "[ -n \"$line\" ] || { echo \"no task $task in \"%s >&2; exit 2; }\n"
             "eval \"$line\"\n",
             cfile, sw->n_points, sw->replicas, cqsbatch, cqmerge, name, tasks - 1, cdir, wh->qtasks, wh->qtasks);
    snprintf(path, sizeof path, "%s/sweep.sbatch", wh->adir);
    if (write_file(path, text, 0777) < 0) rc = PLAN_FAILED;
    if (rc == PLAN_OK) {
        snprintf(text, tcap,
                 "#!/bin/sh\n"
                 "# Combine the tasks' databases into one (clustertwin merge OUT IN...).\n"
                 "#SBATCH --job-name=ct-merge-%s\n"
                 "#SBATCH --output=%s/merge.log\n"
                 "set -eu\n"
                 "exec %s merge %s %s/task-*.db\n",
                 name, cdir, wh->qbin, wh->qdb, wh->qdir);
        snprintf(path, sizeof path, "%s/merge.sh", wh->adir);
        if (write_file(path, text, 0777) < 0) rc = PLAN_FAILED;
    }
    free(text);
    return rc;
}

int slurm_emit(const sweep *sw, const char *dir, int tasks, const char *db, const char *const *vary, int n_vary,
               const char *const *sets, int n_set) {
    int rc = refuse_control(dir, db, sw->file);
    if (rc != PLAN_OK) return rc;
    where *wh = calloc(1, sizeof *wh);
    if (!wh) return PLAN_FAILED;
    char *lines = NULL, path[PATH_MAX + 32];
    rc = resolve(dir, db, sw->file, wh);
    if (rc == PLAN_OK) rc = quote_paths(dir, wh);
    if (rc == PLAN_OK) rc = task_lines(sw, wh, tasks, vary, n_vary, sets, n_set, &lines);
    if (rc == PLAN_OK) {
        snprintf(path, sizeof path, "%s/tasks.txt", wh->adir);
        if (write_file(path, lines, 0666) < 0) rc = PLAN_FAILED;
    }
    if (rc == PLAN_OK) rc = write_scripts(sw, wh, tasks);
    if (rc == PLAN_OK)
        printf("wrote %s/sweep.sbatch (%d array tasks), %s/tasks.txt and %s/merge.sh\n"
               "submit: jid=$(sbatch --parsable %s) && sbatch --dependency=afterok:$jid %s\n"
               "results: %s\n",
               wh->adir, tasks, wh->adir, wh->adir, wh->qsbatch, wh->qmerge, wh->adb);
    free(lines);
    free(wh);
    return rc;
}
