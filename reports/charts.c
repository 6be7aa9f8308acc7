/*
 * charts: data files and one gnuplot script per report, run once.
 *
 * A chart costs O(points) to write (at most 2,000 buckets per series, so
 * a few hundred KB at most); gnuplot draws them all in one process in
 * about 0.2 s. Every chart is a fixed-size SVG (960x360) that the HTML
 * scales down with CSS. This file holds the plan every chart goes through
 * and runs gnuplot; the charts themselves are in charts_run.c (one run)
 * and charts_compare.c (two runs overlaid).
 */
#include "reports/charts_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *charts_time_unit(double simulated_s, double *unit_s) {
    if (!(simulated_s >= 2 * 3600)) {
        *unit_s = 60;
        return "minutes";
    }
    if (simulated_s < 3 * 86400) {
        *unit_s = 3600;
        return "hours";
    }
    *unit_s = 86400;
    return "days";
}

const chart *charts_find(const charts *c, const char *key) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->c[i].key, key)) return &c->c[i];
    return NULL;
}

/* Open DIR/PREFIX NAME EXT through fileout (the chart functions hold one
 * data file at a time, in p->dat); NULL when it cannot be written. */
FILE *open_in(plan *p, const char *name, const char *ext) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s%s", p->dir, p->prefix, name, ext);
    return fileout_open(&p->dat, path, 0, 0666, NULL, 0) == 0 ? p->dat.f : NULL;
}

/* Finish the data file open_in gave; 0, or -1 when it could not be
 * written (the chart is then left out). */
int close_in(plan *p) { return fileout_close(&p->dat, NULL, 0) == 0 ? 0 : -1; }

/* One character of z at *p for a chart's script or data: valid UTF-8 as
 * it is, an invalid byte as U+FFFD (gnuplot copies it into the SVG, which
 * must stay well-formed), control characters dropped; *p advanced past it. */
static void put_char(FILE *f, const char **p) {
    const unsigned char *u = (const unsigned char *)*p;
    if (*u < 0x80) {
        if (*u >= 0x20 && *u != 0x7F) fputc(*u, f);
        return;
    }
    int n = fileout_utf8_len(u);
    if (n > 1) {
        fwrite(u, 1, (size_t)n, f);
        *p += n - 1;
    } else {
        fputs("\xEF\xBF\xBD", f);
    }
}

/* gnuplot single-quoted string: ' doubled; the rest is literal. */
void gp_quote(FILE *f, const char *z) {
    fputc('\'', f);
    for (; *z; z++) {
        if (*z == '\'') fputc('\'', f);
        put_char(f, &z);
    }
    fputc('\'', f);
}

/* Data file string: double-quoted, with " and \\ dropped. */
void dat_quote(FILE *f, const char *z) {
    fputc('"', f);
    for (; *z; z++)
        if (*z != '"' && *z != '\\') put_char(f, &z);
    fputc('"', f);
}

/* Start a chart: its output file in the script and its entry. */
void begin(plan *p, const char *key, const char *title, const char *caption) {
    chart *c = &p->planned[p->n++];
    snprintf(c->key, sizeof c->key, "%s", key);
    snprintf(c->file, sizeof c->file, "%s%s.svg", p->prefix, key);
    snprintf(c->title, sizeof c->title, "%s", title);
    snprintf(c->caption, sizeof c->caption, "%s", caption);
    fprintf(p->gp, "\nreset\nset output '%s'\n", c->file);
    fprintf(p->gp, "set border 3\nset tics nomirror\nset grid ytics lc rgb '#dddddd'\n"
                   "set key outside top center horizontal\n");
}

/* ---- running gnuplot ----------------------------------------------------- */

/* Run PROGRAM script in dir with its output in log. Returns the exit
 * status (127: could not be started). */
static int run_gnuplot(const char *prog, const char *dir, const char *script, const char *log) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);                      /* the CLI ignores it; gnuplot gets the default */
        if (chdir(dir) != 0) _exit(126);
        /* O_NONBLOCK: a FIFO without a reader in place of the log is no log, not a wait */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644), nul = open("/dev/null", O_RDONLY);
        if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        if (nul >= 0) {
            dup2(nul, 0);
            close(nul);
        }
        execlp(prog, prog, script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The SVG exists and ends with </svg> (gnuplot finished it). */
static int svg_complete(const char *dir, const char *file) {
    char path[4096], tail[65] = "";
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int ok = 0;
    if (fseek(f, -64, SEEK_END) == 0 || fseek(f, 0, SEEK_SET) == 0) {
        size_t n = fread(tail, 1, 64, f);
        tail[n] = 0;
        ok = strstr(tail, "</svg>") != NULL;
    }
    fclose(f);
    return ok;
}

/* ---- the plan ------------------------------------------------------------ */

int plan_start(plan *p, charts *out, const char *dir, const char *prefix, const char *title) {
    memset(out, 0, sizeof *out);
    memset(p, 0, sizeof *p);
    p->out = out;
    p->dir = dir;
    p->prefix = prefix;
    snprintf(p->script, sizeof p->script, "%scharts.gp", prefix);
    snprintf(p->log, sizeof p->log, "%scharts.log", prefix);
    char gpath[4096], why[1024];
    snprintf(gpath, sizeof gpath, "%s/%s", dir, p->script);
    if (fileout_open(&p->gpo, gpath, 0, 0666, why, sizeof why) != 0) {
        snprintf(out->note, sizeof out->note, "charts not drawn: %.400s", why);
        return -1;
    }
    p->gp = p->gpo.f;
    fputs("# Charts of ", p->gp);
    for (const char *z = title; *z; z++)          /* a line break would end the comment */
        fputc((unsigned char)*z < 0x20 ? ' ' : *z, p->gp);
    fprintf(p->gp, ", drawn by `clustertwin report`: gnuplot %s\n"
                   "set terminal svg size 960,360 fixed noenhanced font 'Helvetica,12' background rgb 'white'\n"
                   "set encoding utf8\n",
            p->script);
    return 0;
}

void plan_finish(plan *p) {
    charts *out = p->out;
    const char *dir = p->dir;
    char why[1024];
    fprintf(p->gp, "\nunset output\n");
    if (fileout_close(&p->gpo, why, sizeof why) != 0) {
        snprintf(out->note, sizeof out->note, "charts not drawn: %.400s", why);
        return;
    }
    if (p->n == 0) {                          /* nothing to draw (no time simulated, no jobs) */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, p->script);
        unlink(path);
        return;
    }

    for (int i = 0; i < p->n; i++)
        if (!charts_svg_target_ok(dir, p->planned[i].file)) {
            snprintf(out->note, sizeof out->note, "charts not drawn: %.300s/%s is not a regular file (gnuplot would "
                     "wait on it or replace it)", dir, p->planned[i].file);
            return;
        }
    const char *prog = getenv("CLUSTERTWIN_GNUPLOT");
    if (!prog || !*prog) prog = "gnuplot";
    int st = run_gnuplot(prog, dir, p->script, p->log);
    for (int i = 0; i < p->n; i++)
        if (svg_complete(dir, p->planned[i].file)) out->c[out->n++] = p->planned[i];
    if (st == 127 && out->n == 0)
        snprintf(out->note, sizeof out->note, "Charts are not drawn: %s could not be run (install Debian's "
                 "gnuplot-nox, or point CLUSTERTWIN_GNUPLOT at gnuplot); their data and script are in %s "
                 "(%s).", prog, dir, p->script);
    else if (st != 0 || out->n < p->n)
        snprintf(out->note, sizeof out->note, "gnuplot drew %d of %d charts (exit status %d; its messages are in "
                 "%s/%s).", out->n, p->n, st, dir, p->log);
    char logpath[4096];
    struct stat sb;
    snprintf(logpath, sizeof logpath, "%s/%s", dir, p->log);
    if (st == 0 && stat(logpath, &sb) == 0 && sb.st_size == 0) unlink(logpath);
}


int charts_gnuplot(const char *dir, const char *script, const char *log) {
    const char *prog = getenv("CLUSTERTWIN_GNUPLOT");
    if (!prog || !*prog) prog = "gnuplot";
    return run_gnuplot(prog, dir, script, log);
}

int charts_svg_complete(const char *dir, const char *file) { return svg_complete(dir, file); }

int charts_svg_target_ok(const char *dir, const char *file) {
    char path[4096], target[FILEOUT_PATH_MAX];
    int exists;
    unsigned mode;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (fileout_resolve(path, target, sizeof target, &exists, &mode) != 0) return 0;
    return !exists || S_ISREG(mode);
}
