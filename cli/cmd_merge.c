/*
 * merge: combine results databases into one (the databases of a sweep's
 * Slurm tasks, or any runs): `clustertwin merge OUT.db IN.db...`.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "reports/fileout.h"
#include "reports/store.h"
#include "reports/sweepdb.h"

static const char help[] =
    "usage: clustertwin merge OUT.db IN.db [IN.db ...]\n"
    "\n"
    "Copy every run of the IN databases into OUT (created when missing), with new run\n"
    "ids. The replicas of a sweep join OUT's sweep of the same scenario and paths; a\n"
    "replica OUT already holds is skipped, so merging twice adds nothing. OUT is written\n"
    "to a temporary copy and renamed at the end: on any error it is left as it was.\n"
    "Exit status: 0 ok, 1 a read or write failed, 2 bad input (an IN that is not a\n"
    "results database).\n";

/* Append the bytes of src to f. 0 or -1 with errno. */
static int copy_into(const char *src, FILE *f) {
    FILE *a = fopen(src, "rb");
    if (!a) return -1;
    char buf[65536];
    size_t n;
    int bad = 0;
    while (!bad && (n = fread(buf, 1, sizeof buf, a)) > 0) bad = fwrite(buf, 1, n, f) != n;
    bad |= ferror(a) != 0;
    fclose(a);
    bad |= fflush(f) != 0;
    return bad ? -1 : 0;
}

int cmd_merge(int argc, char **argv) {
    const char *out = NULL;
    const char **in = calloc((size_t)argc + 1, sizeof *in);
    int n_in = 0;
    if (!in) return EXIT_RUN_FAILED;
    const cli_option opts[] = { { NULL } };
    cli_spec spec = { "merge", help, opts, CLI_MANY, in, &n_in };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) {
        free(in);
        return prc;
    }
    if (n_in > 0) {                               /* OUT first, then the INs */
        out = in[0];
        memmove(in, in + 1, (size_t)--n_in * sizeof *in);
    }
    if (!out || n_in == 0) {
        free(in);
        return cli_usage_error("merge", "expected OUT.db and at least one IN.db");
    }
    char err[2048], tmp[FILEOUT_PATH_MAX + 64];
    /* every input is read first: bad input stops before anything is written */
    for (int i = 0; i < n_in; i++) {
        store *chk = NULL;
        int s = store_open(in[i], STORE_READ, &chk, err, sizeof err);
        store_close(chk);
        if (s != STORE_OK) {
            fprintf(stderr, "clustertwin merge: %s\n", err);
            free(in);
            return s;
        }
        if (!strcmp(in[i], out)) {
            free(in);
            return cli_usage_error("merge", "%s is both the output and an input", out);
        }
    }
    /* OUT by reports/fileout's rule: a symlink is followed, a device or FIFO
     * refused (SQLite cannot work on one), and the merge is done in a
     * temporary copy renamed over the target at the end. */
    fileout o;
    int orc = fileout_open(&o, out, FILEOUT_REGULAR, 0666, err, sizeof err);
    if (orc != 0) {
        fprintf(stderr, "clustertwin merge: %s\n", err);
        free(in);
        return orc == 2 ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
    }
    for (int i = 0; i < n_in; i++) {
        char t[FILEOUT_PATH_MAX];
        int ex;
        unsigned md;
        if (fileout_resolve(in[i], t, sizeof t, &ex, &md) == 0 && !strcmp(t, o.target)) {
            fileout_abort(&o);
            free(in);
            return cli_usage_error("merge", "%s is both the output and an input", out);
        }
    }
    struct stat sb;
    if (stat(o.target, &sb) == 0 && copy_into(o.target, o.f) < 0) {
        fprintf(stderr, "clustertwin merge: cannot copy %s: %s\n", out, strerror(errno));
        fileout_abort(&o);
        free(in);
        return EXIT_RUN_FAILED;
    }
    snprintf(tmp, sizeof tmp, "%s", o.tmp);
    store *st = NULL;
    int rc = store_open(tmp, STORE_WRITE, &st, err, sizeof err);
    int added = 0, skipped = 0;
    for (int i = 0; i < n_in && rc == STORE_OK; i++) {
        int a = 0, s = 0;
        rc = sweepdb_merge(st, in[i], &a, &s, err, sizeof err);
        added += a;
        skipped += s;
    }
    store_close(st);
    if (rc == STORE_OK && fileout_close(&o, err, sizeof err) != 0) rc = STORE_FAILED;
    if (rc != STORE_OK) {
        fprintf(stderr, "clustertwin merge: %s (%s left as it was)\n", err, out);
        fileout_abort(&o);
        char j[FILEOUT_PATH_MAX + 128];
        snprintf(j, sizeof j, "%s-journal", tmp);
        unlink(j);
        free(in);
        return rc;
    }
    printf("merged %d databases into %s: %d runs added, %d already there skipped\n", n_in, out, added, skipped);
    free(in);
    return EXIT_OK;
}
