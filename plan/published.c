/*
 * published: the folder, its files and their rows (see published.h); the
 * scenario of each case and the models' figure are published_predict.c.
 */
#include "plan/published.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/grow.h"
#include "plan/published_int.h"
#include "plan/status.h"
#include "scenarios/catalog_xml.h"

/* The single-curve file's rows have no tolerance of their own; these are
 * tests/test_collective.c's for the same curve: 35% below 1 MB, where one
 * launch and a few microseconds of latency decide the figure, 15% above. */
#define CURVE_SMALL_BYTES 1048576.0
#define CURVE_SMALL_TOL_PCT 35.0
#define CURVE_TOL_PCT 15.0

/* What each kind's header must hold (the rest of its columns are optional). */
static const char *const training_cols[] = { "id", "source", "node_type", "gpu", "gpus", "tp", "pp", "dp", "cp",
    "sharding", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "seq_len", "global_batch_seqs",
    "micro_batch", "recompute", "metric", "expected", "tolerance_pct", NULL };
static const char *const collective_cols[] = { "id", "source", "node_type", "gpu", "nodes", "gpus_per_node", "op",
    "size_bytes", "metric", "expected", "tolerance_pct", NULL };
static const char *const failure_cols[] = { "id", "source", "profile", "gpus", "node_type", "metric", "expected",
    "tolerance_pct", NULL };
static const char *const inference_cols[] = { "id", "model", "precision", "gpu", "node_type", "tp", "input_tokens",
    "output_tokens", "metric", "expected", "tolerance_pct", NULL };
static const char *const curve_cols[] = { "size_bytes", "busbw_GBps", NULL };

enum { FILE_UNKNOWN = -1, FILE_CURVE = 100 };

static int col_index(const pubfile *pf, const char *name) {
    for (int i = 0; i < pf->nh; i++)
        if (!strcmp(pf->hdr[i], name)) return i;
    return -1;
}

const char *published_col(const pubfile *pf, const csv_record *rec, const char *name) {
    int i = col_index(pf, name);
    return i >= 0 && i < rec->n && i < CSV_MAX_FIELDS ? rec->f[i] : "";
}

static int has_all(const pubfile *pf, const char *const *cols) {
    for (int i = 0; cols[i]; i++)
        if (col_index(pf, cols[i]) < 0) return 0;
    return 1;
}

/* The file's kind from its header (the curve file: exactly its 2 columns). */
static int classify(const pubfile *pf) {
    if (has_all(pf, training_cols)) return PUBREP_TRAINING;
    if (has_all(pf, collective_cols)) return PUBREP_COLLECTIVE;
    if (has_all(pf, failure_cols)) return PUBREP_FAILURE;
    if (has_all(pf, inference_cols)) return PUBREP_INFERENCE;
    if (pf->nh == 2 && has_all(pf, curve_cols)) return FILE_CURVE;
    return FILE_UNKNOWN;
}

int published_count(const pubfile *pf, const csv_record *rec, const char *name, long dflt, long *out) {
    const char *z = published_col(pf, rec, name);
    char *end;
    errno = 0;
    if (!*z && dflt > 0) {
        *out = dflt;
        return 0;
    }
    long v = strtol(z, &end, 10);
    if (*z && !*end && !errno && v >= 1 && v <= 100000000) {
        *out = v;
        return 0;
    }
    return csv_fail(pf->r, pf->err, pf->errlen, "column %s: expected a whole number from 1 to 100000000, got '%s'",
                    name, z);
}

int published_positive(const pubfile *pf, const csv_record *rec, const char *name, double *out) {
    const char *z = published_col(pf, rec, name);
    char *end;
    double v = strtod(z, &end);
    if (*z && !*end && isfinite(v) && v > 0) {
        *out = v;
        return 0;
    }
    return csv_fail(pf->r, pf->err, pf->errlen, "column %s: expected a number > 0, got '%s'", name, z);
}

/* The columns every case file has: id, source (empty: the file's source,
 * `source`), set, mechanism, metric, expected, tolerance_pct. */
static int row_common(const pubfile *pf, const csv_record *rec, int kind, const char *source, pubrep_case *c) {
    memset(c, 0, sizeof *c);
    snprintf(c->file, sizeof c->file, "%s", pf->name);
    c->line = rec->line;
    c->kind = (pubrep_kind)kind;
    const char *set = published_col(pf, rec, "set"), *id = published_col(pf, rec, "id");
    if (!*id) return csv_fail(pf->r, pf->err, pf->errlen, "column id: expected a case name, got ''");
    if (*set && strcmp(set, "calibration") && strcmp(set, "heldout"))
        return csv_fail(pf->r, pf->err, pf->errlen, "column set: expected calibration or heldout, got '%s'", set);
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->set, sizeof c->set, "%s", *set ? set : "calibration");
    snprintf(c->mechanism, sizeof c->mechanism, "%s", published_col(pf, rec, "mechanism"));
    const char *own = published_col(pf, rec, "source");
    snprintf(c->source, sizeof c->source, "%s", *own ? own : source);
    snprintf(c->metric, sizeof c->metric, "%s", published_col(pf, rec, "metric"));
    if (published_positive(pf, rec, "expected", &c->expected) < 0) return -1;
    const char *tol = published_col(pf, rec, "tolerance_pct");
    char *end;
    c->tolerance_pct = *tol ? strtod(tol, &end) : NAN;
    if (*tol && (*end || !(c->tolerance_pct >= 0) || !isfinite(c->tolerance_pct)))
        return csv_fail(pf->r, pf->err, pf->errlen, "column tolerance_pct: expected a number >= 0, got '%s'", tol);
    c->predicted = NAN;
    return 0;
}

/* A row of the single-curve file: an all-reduce over one dgx-h100 node. */
static int curve_row(const pubfile *pf, const csv_record *rec, const char *source, pubrep_case *c) {
    double size = 0;
    memset(c, 0, sizeof *c);
    if (published_positive(pf, rec, "size_bytes", &size) < 0 ||
        published_positive(pf, rec, "busbw_GBps", &c->expected) < 0)
        return -1;
    snprintf(c->file, sizeof c->file, "%s", pf->name);
    c->line = rec->line;
    c->kind = PUBREP_COLLECTIVE;
    snprintf(c->id, sizeof c->id, "allreduce-8gpu-%.0f", size);
    snprintf(c->set, sizeof c->set, "calibration");
    snprintf(c->source, sizeof c->source, "%s", source);
    snprintf(c->metric, sizeof c->metric, "busbw_GBps");
    c->tolerance_pct = size < CURVE_SMALL_BYTES ? CURVE_SMALL_TOL_PCT : CURVE_TOL_PCT;
    published_curve_point(pf, size, c);
    return 0;
}

/* One row into out, unless the filter leaves it out. */
static int one_row(const pubfile *pf, const csv_record *rec, int kind, const char *source,
                   const published_filter *flt, pubrep *out) {
    pubrep_case c;
    int rc;
    if (kind == FILE_CURVE) {
        rc = flt->set && strcmp(flt->set, "calibration") ? 0 : curve_row(pf, rec, source, &c);
        if (rc < 0 || (flt->set && strcmp(flt->set, "calibration"))) return rc;
    } else {
        if (row_common(pf, rec, kind, source, &c) < 0) return -1;
        if (flt->set && strcmp(flt->set, c.set)) return 0;
        rc = kind == PUBREP_TRAINING      ? published_training(pf, rec, &c)
             : kind == PUBREP_COLLECTIVE  ? published_collective(pf, rec, &c)
             : kind == PUBREP_FAILURE     ? published_failure(pf, rec, &c)
                                          : published_inference(pf, rec, &c);
        if (rc < 0) return -1;
    }
    if (pubrep_add(out, &c) == 0) return 0;
    errmsg_set(pf->err, pf->errlen, "out of memory");
    return -2;
}

/* The text after "# source:" in the file's leading comment lines (the
 * source of every row that names none), or the file's name when it has none. */
static void file_source(const char *path, const char *name, char *out, size_t len) {
    infile_err ie;
    FILE *fp = infile_open(path, INFILE_TRACE_MAX_BYTES, "a CSV file", &ie);
    char line[CSV_MAX_LINE];
    snprintf(out, len, "%s", name);
    while (fp && fgets(line, sizeof line, fp) && line[0] == '#') {
        const char *p = line + 1 + strspn(line + 1, " \t");
        if (strncmp(p, "source:", 7)) continue;
        p += 7 + strspn(p + 7, " \t");
        snprintf(out, len, "%.*s", (int)strcspn(p, "\r\n"), p);
        break;
    }
    if (fp) fclose(fp);
}

/* The header (the first record) into pf->hdr. 0, or -1 with pf->err set
 * (an empty file is a file of no kind: 1). */
static int read_header(pubfile *pf) {
    csv_record rec;
    int rc = csv_next(pf->r, &rec, pf->err, pf->errlen);
    if (rc <= 0) return rc < 0 ? -1 : 1;
    pf->nh = rec.n < CSV_MAX_FIELDS ? rec.n : CSV_MAX_FIELDS;
    for (int i = 0; i < pf->nh; i++) snprintf(pf->hdr[i], sizeof pf->hdr[i], "%s", rec.f[i]);
    return 0;
}

/* Every row of one file; a file of no known kind is a note. */
static int read_rows(pubfile *pf, const char *path, const published_filter *flt, pubrep *out) {
    int hrc = read_header(pf), kind = hrc ? FILE_UNKNOWN : classify(pf);
    if (hrc < 0) return PLAN_BAD_INPUT;
    if (kind == FILE_UNKNOWN)
        return pubrep_note(out, "%s: skipped: its header is none of the case formats (docs/validation.md)",
                           pf->name) ? PLAN_FAILED : PLAN_OK;
    int as = kind == FILE_CURVE ? PUBREP_COLLECTIVE : kind;
    if (flt->kind >= 0 && flt->kind != as) return PLAN_OK;
    char source[PUBREP_TEXT_MAX];                 /* for rows that cite none of their own */
    file_source(path, pf->name, source, sizeof source);
    csv_record rec;
    int rc;
    while ((rc = csv_next(pf->r, &rec, pf->err, pf->errlen)) > 0) {
        if ((rc = one_row(pf, &rec, kind, source, flt, out)) < 0) return rc == -2 ? PLAN_FAILED : PLAN_BAD_INPUT;
    }
    if (rc == 0 && csv_errno(pf->r)) {
        errmsg_set(pf->err, pf->errlen, "%s: read error: %s", path, strerror(csv_errno(pf->r)));
        return PLAN_BAD_INPUT;
    }
    return rc < 0 ? PLAN_BAD_INPUT : PLAN_OK;
}

static int read_file(const char *dir, const char *name, const catalog *cat, const published_filter *flt,
                     pubrep *out, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    infile_err ie;
    pubfile pf = { .name = name, .cat = cat, .err = err, .errlen = errlen };
    pf.r = csv_open(path, "a CSV file", &ie);
    if (!pf.r) {
        infile_say(&ie, path, err, errlen);
        return PLAN_BAD_INPUT;
    }
    int rc = read_rows(&pf, path, flt, out);
    csv_close(pf.r);
    return rc;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names of dir's *.csv files, sorted (the caller frees each and the
 * array). -1 with err when the folder cannot be read. */
static int list_csv(const char *dir, char ***names, size_t *n, char *err, size_t errlen) {
    DIR *d = opendir(dir);
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    if (!d) {
        errmsg_set(err, errlen, "%s: cannot read the folder: %s", dir, strerror(errno));
        return -1;
    }
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") || len >= sizeof((pubrep_case *)0)->file) continue;
        char *copy = strdup(e->d_name);
        if (!copy || GROW(*names, cap, *n + 1)) {
            free(copy);
            errmsg_set(err, errlen, "out of memory");
            closedir(d);
            return -1;
        }
        (*names)[(*n)++] = copy;
    }
    closedir(d);
    if (*n) qsort(*names, *n, sizeof **names, cmp_name);
    return 0;
}

int published_run(const char *dir, const published_filter *flt, pubrep *out, char *err, size_t errlen) {
    char **names;
    size_t n;
    if (list_csv(dir, &names, &n, err, errlen) < 0) return PLAN_BAD_INPUT;
    catalog *cat = catalog_new();
    int rc = cat && catalog_load_builtin(cat, err, errlen) == 0 ? PLAN_OK : PLAN_FAILED;
    if (!cat) errmsg_set(err, errlen, "out of memory");
    for (size_t i = 0; rc == PLAN_OK && i < n; i++) rc = read_file(dir, names[i], cat, flt, out, err, errlen);
    if (rc == PLAN_OK && n == 0) rc = pubrep_note(out, "%s: no .csv files", dir) ? PLAN_FAILED : PLAN_OK;
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    catalog_free(cat);
    return rc;
}
