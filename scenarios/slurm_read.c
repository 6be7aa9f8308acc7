/*
 * slurm_read: a Slurm report, from a file or a command's output, to its
 * reader (slurm.h).
 */
#include <stdlib.h>

#include "scenarios/infile.h"
#include "scenarios/slurm.h"

static int read_json(const jsonin *d, slurm_kind kind, double at_unix_s, live_cluster *c, char *err, size_t errlen) {
    switch (kind) {
    case SLURM_SQUEUE: return slurm_squeue(d, at_unix_s, c, err, errlen);
    case SLURM_SINFO: return slurm_sinfo(d, at_unix_s, c, err, errlen);
    default: return slurm_sacct(d, c, err, errlen);
    }
}

int slurm_read_text(const char *text, size_t len, const char *name, slurm_kind kind, double at_unix_s, live_cluster *c,
                    char *err, size_t errlen) {
    if (kind == SLURM_SACCT_TEXT) return slurm_sacct_text(text, len, name, c, err, errlen);
    jsonin *d = jsonin_parse(text, len, name, err, errlen);
    if (!d) return -1;
    int rc = read_json(d, kind, at_unix_s, c, err, errlen);
    jsonin_free(d);
    return rc;
}

int slurm_read_file(const char *path, slurm_kind kind, double at_unix_s, live_cluster *c, char *err, size_t errlen) {
    char *text = NULL;
    size_t len = 0;
    const char *what = kind == SLURM_SACCT_TEXT ? "sacct -P text" : "Slurm JSON";
    if (infile_load(path, JSONIN_MAX_BYTES, what, &text, &len, err, errlen) < 0) return -1;
    int rc = slurm_read_text(text, len, path, kind, at_unix_s, c, err, errlen);
    free(text);
    return rc;
}

int slurm_sacct_file_each(const char *path, int text, unsigned need, slurm_ended_fn fn, void *ctx, char *err,
                          size_t errlen) {
    char *data = NULL;
    size_t len = 0;
    if (infile_load(path, JSONIN_MAX_BYTES, text ? "sacct -P text" : "Slurm JSON", &data, &len, err, errlen) < 0)
        return -1;
    int rc = -1;
    if (text) rc = slurm_sacct_text_each(data, len, path, need, fn, ctx, err, errlen);
    else {
        jsonin *d = jsonin_parse(data, len, path, err, errlen);
        if (d) rc = slurm_sacct_each(d, fn, ctx, err, errlen);
        jsonin_free(d);
    }
    free(data);
    return rc;
}
