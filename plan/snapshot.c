/*
 * snapshot: write a live cluster's state as a scenario and its trace,
 * checked by loading it, then put in place (snapshot.h).
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/errmsg.h"
#include "plan/snapshot_int.h"
#include "plan/status.h"
#include "reports/fileout.h"
#include "scenarios/scenario.h"

typedef struct snap_paths {
    char xml[FILEOUT_PATH_MAX], csv[FILEOUT_PATH_MAX];          /* the targets (symlinks followed) */
    char dir[FILEOUT_PATH_MAX], tmp[FILEOUT_PATH_MAX + 32];     /* their folder; the new folder in it */
    char tmp_xml[3 * FILEOUT_PATH_MAX], tmp_csv[3 * FILEOUT_PATH_MAX];
    char name[128], href[FILEOUT_PATH_MAX];                     /* scenario name; the trace's file name */
} snap_paths;

/* The scenario's name from the file's: an XML name (letters, digits, . - _; not starting with a digit). */
static void scenario_name(char *b, size_t n, const char *file) {
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".xml")) len -= 4;
    int prefix = !len || !((base[0] >= 'A' && base[0] <= 'Z') || (base[0] >= 'a' && base[0] <= 'z') || base[0] == '_');
    snprintf(b, n, "%s%.*s", prefix ? "snapshot-" : "", (int)len, base);
    for (char *p = b; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("._-", *p))) *p = '-';
}

/* Refuse a target that exists and is not a regular file. */
static int regular_or_new(const char *path, char *target, char *err, size_t errlen) {
    int exists = 0;
    unsigned mode = 0;
    if (fileout_resolve(path, target, FILEOUT_PATH_MAX, &exists, &mode) < 0)
        return errmsg_set(err, errlen, "%s: %s", path, strerror(errno)), PLAN_BAD_INPUT;
    if (exists && !S_ISREG(mode))
        return errmsg_set(err, errlen, "%s: not a regular file; the snapshot is written only over regular files", path),
               PLAN_BAD_INPUT;
    return 0;
}

static int make_paths(snap_paths *sp, const char *out, char *err, size_t errlen) {
    size_t len = strlen(out);
    if (len < 5 || strcmp(out + len - 4, ".xml") || len + 16 > FILEOUT_PATH_MAX)
        return errmsg_set(err, errlen, "--out %s: expected a path ending in .xml", out), PLAN_BAD_INPUT;
    char csv[FILEOUT_PATH_MAX];
    snprintf(csv, sizeof csv, "%.*s.jobs.csv", (int)(len - 4), out);
    int rc = regular_or_new(out, sp->xml, err, errlen);
    if (!rc) rc = regular_or_new(csv, sp->csv, err, errlen);
    if (rc) return rc;
    char d[FILEOUT_PATH_MAX];
    snprintf(d, sizeof d, "%s", sp->xml);
    snprintf(sp->dir, sizeof sp->dir, "%s", dirname(d));
    scenario_name(sp->name, sizeof sp->name, sp->xml);
    const char *slash = strrchr(sp->csv, '/');
    snprintf(sp->href, sizeof sp->href, "%s", slash ? slash + 1 : sp->csv);
    snprintf(sp->tmp, sizeof sp->tmp, "%s/.ct-snapshot-XXXXXX", sp->dir);
    if (!mkdtemp(sp->tmp)) return errmsg_set(err, errlen, "%s: cannot make a folder: %s", sp->dir, strerror(errno)), PLAN_FAILED;
    snprintf(sp->tmp_xml, sizeof sp->tmp_xml, "%s/%s.xml", sp->tmp, sp->name);
    snprintf(sp->tmp_csv, sizeof sp->tmp_csv, "%s/%s", sp->tmp, sp->href);
    return 0;
}

static void iso_time(char *b, size_t n, double unix_s) {
    time_t t = (time_t)unix_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(b, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The replay's t = 0: its first job's submit time. */
static double replay_t0(const live_cluster *c) {
    double t0 = 0;
    for (int i = 0; i < c->n_history; i++) {
        const live_history *h = &c->history[i];
        if (h->start_unix_s > 0 && h->submit_unix_s > 0 && (t0 == 0 || h->submit_unix_s < t0)) t0 = h->submit_unix_s;
    }
    return t0;
}

/* Text inside an XML comment: no "--" (XML 1.0 section 2.5), escaped as attribute text. */
static void comment_text(FILE *f, const char *z) {
    char b[256];
    size_t n = 0;
    for (; *z && n + 3 < sizeof b; z++) {
        b[n++] = *z;
        if (*z == '-' && (z[1] == '-' || z[1] == 0)) b[n++] = ' ';
    }
    b[n] = 0;
    fileout_html(f, b);
}

static void write_head(FILE *f, const snap_plan *p, const snapshot_summary *sum, const snap_paths *sp) {
    char when[64];
    const live_cluster *c = p->c;
    double t0 = p->o->replay ? replay_t0(c) : p->o->at_unix_s;
    iso_time(when, sizeof when, t0);
    fprintf(f, "<?xml version=\"1.0\"?>\n<!-- clustertwin snapshot%s of ", p->o->replay ? " (replay)" : "");
    comment_text(f, c->source && c->source[0] ? c->source : "a live cluster");
    fprintf(f, "; t = 0 is %s.\n     %d GPU nodes (%d out of service", when, sum->nodes, sum->nodes_unavailable);
    if (sum->nodes_draining) fprintf(f, ", %d draining", sum->nodes_draining);
    fprintf(f, "); ");
    if (p->o->replay) fprintf(f, "%d finished jobs replayed (%s).\n", sum->pending, sp->href);
    else fprintf(f, "%d running, %d pending and %d held jobs (%s).\n", sum->running, sum->pending, sum->held, sp->href);
    fprintf(f, "     Left out: %d nodes without GPUs, %d jobs without GPUs, %d without a time limit, %d larger than "
               "the cluster. -->\n",
            sum->nodes_without_gpus, c->jobs_without_gpus, sum->left_out_no_limit, sum->left_out_too_big);
    fprintf(f, "<scenario name=\"%s\" seed=\"1\"", sp->name);
    if (t0 > 0) fprintf(f, " snapshot-time=\"%s\"", when);
    fprintf(f, ">\n");
}

/* Both files into the new folder. 0, or 1 with err. */
static int write_files(const snap_plan *p, snapshot_summary *sum, const snap_paths *sp, char *err, size_t errlen) {
    FILE *f = fopen(sp->tmp_csv, "w");
    int bad = !f || (p->o->replay ? snap_write_replay(f, p, sum) : snap_write_jobs(f, p, sum)) < 0;
    if (f && (ferror(f) | fclose(f))) bad = 1;
    if (bad) return errmsg_set(err, errlen, "%s: cannot write: %s", sp->csv, strerror(errno ? errno : ENOMEM)), PLAN_FAILED;
    if (!(f = fopen(sp->tmp_xml, "w")))
        return errmsg_set(err, errlen, "%s: cannot write: %s", sp->xml, strerror(errno)), PLAN_FAILED;
    write_head(f, p, sum, sp);
    snap_write_cluster(f, p);
    snap_write_scheduler(f, p);
    fprintf(f, "  <workload>\n");
    if (!p->o->replay && snap_write_history(f, p, sum) < 0) bad = 1;
    fprintf(f, "    <trace href=\"");
    fileout_html(f, sp->href);
    fprintf(f, "\"/>\n  </workload>\n</scenario>\n");
    if (ferror(f) | fclose(f)) bad = 1;
    if (bad) return errmsg_set(err, errlen, "%s: cannot write: %s", sp->xml, strerror(errno ? errno : ENOMEM)), PLAN_FAILED;
    return 0;
}

/* Load what was written; then rename it into place. */
static int check_and_place(const snap_paths *sp, char *err, size_t errlen) {
    scenario *s = NULL;
    char why[2048];
    if (scenario_load(sp->tmp_xml, &s, why, sizeof why) < 0)
        return errmsg_set(err, errlen, "the snapshot does not load (nothing written): %s", why), PLAN_BAD_INPUT;
    scenario_free(s);
    if (rename(sp->tmp_csv, sp->csv) < 0 || rename(sp->tmp_xml, sp->xml) < 0)
        return errmsg_set(err, errlen, "%s: cannot write: %s", sp->xml, strerror(errno)), PLAN_FAILED;
    return 0;
}

int snapshot_write(const live_cluster *c, const snapshot_opts *o, snapshot_summary *sum, char *err, size_t errlen) {
    snap_plan p = { .c = c, .o = o };
    snap_paths *sp = calloc(1, sizeof *sp);
    memset(sum, 0, sizeof *sum);
    if (!sp) return errmsg_set(err, errlen, "out of memory"), PLAN_FAILED;
    int rc = snap_nodes(&p, sum, err, errlen);
    if (rc == 0) rc = make_paths(sp, o->out, err, errlen);
    if (rc == 0) {
        rc = write_files(&p, sum, sp, err, errlen);
        if (rc == 0) rc = check_and_place(sp, err, errlen);
        unlink(sp->tmp_xml), unlink(sp->tmp_csv), rmdir(sp->tmp);
        snprintf(sum->csv, sizeof sum->csv, "%s", sp->csv);
    }
    snap_plan_free(&p);
    free(sp);
    return rc;
}
