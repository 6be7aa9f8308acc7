/*
 * trace: job-trace CSV reader (format in trace.h).
 *
 * Load: one pass over the file, O(rows); a 100K-job trace is a few MB and
 * reads in well under a second. Training rows evaluate the step model for
 * up to a handful of candidate plans to find one that fits in memory.
 */
#include "scenarios/trace.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "scenarios/infile.h"
#include "models/numerics.h"
#include "base/units.h"

#define MAX_LINE 4096
#define MAX_ROWS 10000000

enum { C_SUBMIT, C_QUEUE, C_PRIORITY, C_GPUS, C_DURATION, C_TOKENS, C_MODEL, C_NAME, C_COUNT };
static const char *col_names[C_COUNT] = { "submit", "queue", "priority", "gpus", "duration", "tokens",
                                          "model", "name" };

typedef struct reader {
    const char *file;
    int line;
    char *err;
    size_t errlen;
} reader;

static int bad(reader *r, const char *fmt, const char *a, const char *b) {
    int n = snprintf(r->err, r->errlen, "%s:%d: ", r->file, r->line);
    if (n >= 0 && (size_t)n < r->errlen) snprintf(r->err + n, r->errlen - (size_t)n, fmt, a, b);
    return -1;
}

/* Split a line at commas into at most max fields (no quoting: names and
 * queues do not contain commas). Trims blanks. Returns the field count. */
static int split(char *z, char **f, int max) {
    int n = 0;
    char *p = z;
    for (;;) {
        char *c = strchr(p, ',');
        if (c) *c = 0;
        while (*p == ' ' || *p == '\t') p++;
        char *e = p + strlen(p);
        while (e > p && strchr(" \t\r\n", e[-1])) *--e = 0;
        if (n < max) f[n] = p;
        n++;
        if (!c) break;
        p = c + 1;
    }
    return n;
}

/* Append one zeroed element. The array grows to the next power of two when
 * its count reaches one, so a 100K-row trace costs O(rows) copying (the
 * scenario's arrays have no capacity field: a count that is 0 or a power of
 * two means full). */
static int push(void **arr, int *n, size_t size) {
    if (*n == 0 || (*n & (*n - 1)) == 0) {
        size_t cap = *n == 0 ? 1 : (size_t)*n * 2;
        void *p = realloc(*arr, cap * size);
        if (!p) return -1;
        *arr = p;
    }
    void *p = *arr;
    memset((char *)p + (size_t)*n * size, 0, size);
    (*n)++;
    return 0;
}

/* A plan for a trace training job on `gpus` GPUs of the first node type:
 * FSDP over data parallel first; tensor parallel inside the node and then
 * pipeline stages when the model does not fit. Returns 0 with t filled. */
static int plan_training(scenario *s, sc_training *t, const llm_spec *m, int gpus, char *why, size_t len) {
    const node_spec *node = scenario_node_spec(s, 0);
    fabric f;
    if (!node || fabric_init(&f, s->cat, node, scenario_node_count(s)) < 0) {
        snprintf(why, len, "the cluster has no node type to run on");
        return -1;
    }
    static const int shapes[][2] = { { 1, 1 }, { 2, 1 }, { 4, 1 }, { 8, 1 }, { 8, 2 }, { 8, 4 }, { 8, 8 }, { 8, 16 } };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int tp = shapes[i][0], pp = shapes[i][1];
        if (tp > node->gpus || gpus % (tp * pp) != 0 || m->heads % tp != 0 || m->layers < pp) continue;
        train_plan p = { 0 };
        p.tp = tp;
        p.pp = pp;
        p.cp = 1;
        p.dp = gpus / (tp * pp);
        p.sharding = SHARD_FSDP;
        p.seq_len = m->max_context < 4096 ? m->max_context : 4096;
        p.precision = PREC_BF16;
        p.recompute = RECOMPUTE_SELECTIVE;
        p.sequence_parallel = -1;
        p.attn_unfused = -1;
        /* About 4M tokens per step, at least one sequence per replica and
         * enough micro-batches to fill a pipeline. */
        int per = (int)ceil((4 << 20) / (double)p.seq_len / p.dp);
        if (pp > 1 && per < 4 * pp) per = 4 * pp;
        p.global_batch = p.dp * (per > 0 ? per : 1);
        train_plan_defaults(&p);
        if (train_plan_check(m, &p, why, len) < 0) continue;
        train_result r;
        if (train_step(m, &p, &f, &r) < 0 || !r.fits) continue;
        t->plan = p;
        return 0;
    }
    snprintf(why, len, "no plan of %s on %d GPUs fits in memory (tried FSDP with tp up to 8 and pp up to 16)",
             m->name, gpus);
    return -1;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Whether z names a queue, by binary search in the sorted names (a linear
 * search per row was rows x queues). */
static int has_queue(const scenario *s, const char **sorted, const char *z) {
    if (!z[0] || s->n_queues == 0) return 1;
    return bsearch(&z, sorted, (size_t)s->n_queues, sizeof *sorted, cmp_name) != NULL;
}

/* The trace job's queue as an index into s->queues: the named one (found
 * in the sorted names, which point into s->queues), else the first, else
 * -1 (no <scheduler> queues: the scheduler's "default"). */
static int queue_index(const scenario *s, const char **sorted, const char *z) {
    const char **hit = z[0] && s->n_queues ? bsearch(&z, sorted, (size_t)s->n_queues, sizeof *sorted, cmp_name) : NULL;
    if (hit) return (int)((const sc_queue *)(const void *)(*hit - offsetof(sc_queue, name)) - s->queues);
    return s->n_queues ? 0 : -1;
}

/* Append name (with its NUL) to s->trace_names, growing it by doubling;
 * its offset, or -1 when out of memory or past 4 GiB of names (s unchanged). */
static long add_name(scenario *s, const char *name) {
    size_t n = strlen(name) + 1;
    if (s->trace_names_len + n > UINT32_MAX) return -1;
    if (s->trace_names_len + n > s->trace_names_cap) {
        size_t cap = s->trace_names_cap ? s->trace_names_cap : 4096;
        while (cap < s->trace_names_len + n) cap *= 2;
        char *p = realloc(s->trace_names, cap);
        if (!p) return -1;
        s->trace_names = p;
        s->trace_names_cap = cap;
    }
    memcpy(s->trace_names + s->trace_names_len, name, n);
    s->trace_names_len += n;
    return (long)(s->trace_names_len - n);
}

int trace_load(scenario *s, const char *href, int line, char *err, size_t errlen) {
    char path[1024];
    if (scenario_path(s->file, href, path, sizeof path) < 0) {
        snprintf(err, errlen, "%s:%d: <trace href=\"%s\">: the path is longer than %zu bytes", s->file, line, href,
                 sizeof path - 1);
        return -1;
    }
    infile_err ie;
    FILE *fp = infile_open(path, INFILE_TRACE_MAX_BYTES, "a CSV file", &ie);
    if (!fp) {
        snprintf(err, errlen, "%s:%d: <trace href=\"%s\">: %s: %s", s->file, line, href, path, ie.why);
        return -1;
    }
    reader r = { path, 0, err, errlen };
    /* Per row, in O(log queues) and O(1): the queue names sorted, the
     * cluster's GPUs counted once. */
    const char **queues = malloc((size_t)(s->n_queues ? s->n_queues : 1) * sizeof *queues);
    if (!queues) {
        fclose(fp);
        snprintf(err, errlen, "%s:%d: <trace href=\"%s\">: out of memory", s->file, line, href);
        return -1;
    }
    for (int i = 0; i < s->n_queues; i++) queues[i] = s->queues[i].name;
    qsort(queues, (size_t)s->n_queues, sizeof *queues, cmp_name);
    const int cluster_gpus = scenario_gpus(s);
    s->trace_after = s->n_jobs;
    int col[C_COUNT];
    for (int i = 0; i < C_COUNT; i++) col[i] = -1;
    int have_header = 0, rc = -1, rows = 0;
    double last_submit = 0;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&buf, &cap, fp)) > 0) {
        r.line++;
        if (len > MAX_LINE - 1) {
            bad(&r, "line longer than %s characters%s", "4095", "");
            goto out;
        }
        if (memchr(buf, 0, (size_t)len)) {
            bad(&r, "binary data (a NUL byte); expected a CSV text file%s%s", "", "");
            goto out;
        }
        for (ssize_t i = 0; i < len; i++) {
            unsigned char ch = (unsigned char)buf[i];
            if ((ch < ' ' && ch != '\t' && ch != '\r' && ch != '\n') || ch == 0x7f) {
                char code[8];
                snprintf(code, sizeof code, "0x%02x", ch);
                bad(&r, "binary data (control character %s); expected a CSV text file%s", code, "");
                goto out;
            }
        }
        char *p = buf;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == 0) continue;
        /* Names reach JSON and HTML outputs: text must be UTF-8 (comments
         * are not read). The message names the column, never echoes the bytes. */
        size_t ok = infile_utf8_valid(buf, (size_t)len);
        if (ok < (size_t)len) {
            int field = 0;
            for (size_t i = 0; i < ok; i++) field += buf[i] == ',';
            const char *what = "a field";
            char at[48];
            for (int c = 0; c < C_COUNT && have_header; c++)
                if (col[c] == field) what = col_names[c];
            if (!have_header) what = "the header";
            snprintf(at, sizeof at, " (byte 0x%02x, character %zu of the line)", (unsigned char)buf[ok], ok + 1);
            bad(&r, "%s is not valid UTF-8%s", what, at);
            goto out;
        }
        char *f[16];
        int n = split(p, f, 16);
        if (n > 16) {
            bad(&r, "too many columns (at most %s)%s", "16", "");
            goto out;
        }
        if (!have_header) {
            for (int i = 0; i < n; i++) {
                int k = -1;
                for (int c = 0; c < C_COUNT; c++)
                    if (!strcmp(f[i], col_names[c])) k = c;
                if (k < 0) {
                    bad(&r, "unknown column \"%s\"; expected %s",
                        f[i], "submit, queue, priority, gpus, duration, tokens, model, name");
                    goto out;
                }
                if (col[k] >= 0) {
                    bad(&r, "column \"%s\" appears twice in the header%s", f[i], "");
                    goto out;
                }
                col[k] = i;
            }
            if (col[C_SUBMIT] < 0 || col[C_GPUS] < 0 || (col[C_DURATION] < 0 && col[C_TOKENS] < 0)) {
                bad(&r, "the header needs columns submit, gpus and duration (or tokens and model)%s%s", "", "");
                goto out;
            }
            have_header = 1;
            continue;
        }
        if (++rows > MAX_ROWS) {
            bad(&r, "more than %s jobs%s", "10000000", "");
            goto out;
        }
#define FIELD(c) (col[c] >= 0 && col[c] < n ? f[col[c]] : "")
        char why[256];
        double submit, gpus_d, prio = 0, dur = 0, tokens = 0;
        if (units_parse(FIELD(C_SUBMIT), UNIT_DURATION, &submit, why, sizeof why) < 0) {
            bad(&r, "submit \"%s\": expected a time like 3600 or 2h (%s)", FIELD(C_SUBMIT), why);
            goto out;
        }
        if (submit < last_submit) {
            bad(&r, "submit \"%s\": submit times must not decrease (the previous job is at a later time)%s",
                FIELD(C_SUBMIT), "");
            goto out;
        }
        if (!(submit <= NUMERICS_MAX_TIME_S)) {
            bad(&r, "submit \"%s\": beyond the simulated clock's horizon of 100 years%s", FIELD(C_SUBMIT), "");
            goto out;
        }
        last_submit = submit;
        if (units_parse(FIELD(C_GPUS), UNIT_COUNT, &gpus_d, why, sizeof why) < 0 || gpus_d < 1 ||
            gpus_d != floor(gpus_d) || gpus_d > 1e7) {
            bad(&r, "gpus \"%s\": gpus must be a whole number >= 1%s", FIELD(C_GPUS), "");
            goto out;
        }
        if (gpus_d > cluster_gpus && !s->has_cloud) {
            char have[32];
            snprintf(have, sizeof have, "%d", cluster_gpus);
            bad(&r, "gpus \"%s\": a job needs more GPUs than the cluster has (%s)", FIELD(C_GPUS), have);
            goto out;
        }
        if (FIELD(C_PRIORITY)[0] && (units_parse(FIELD(C_PRIORITY), UNIT_NUMBER, &prio, why, sizeof why) < 0 ||
                                     prio != floor(prio) || fabs(prio) > 1e6)) {
            bad(&r, "priority \"%s\": expected a whole number%s", FIELD(C_PRIORITY), "");
            goto out;
        }
        const char *queue = FIELD(C_QUEUE);
        if (!has_queue(s, queues, queue) || strlen(queue) >= SC_NAME_MAX) {
            bad(&r, "queue \"%s\": no <queue name=\"%s\"> in <scheduler>", queue, queue);
            goto out;
        }
        int is_training = FIELD(C_TOKENS)[0] != 0;
        if (is_training == (FIELD(C_DURATION)[0] != 0)) {
            bad(&r, "give a duration (a batch job) or tokens and model (a training job), not %s%s",
                is_training ? "both" : "neither", "");
            goto out;
        }
        char name[SC_NAME_MAX];
        if (FIELD(C_NAME)[0]) snprintf(name, sizeof name, "%.*s", SC_NAME_MAX - 1, FIELD(C_NAME));
        else snprintf(name, sizeof name, "trace-%d", r.line);
        if (!is_training) {
            if (units_parse(FIELD(C_DURATION), UNIT_DURATION, &dur, why, sizeof why) < 0) {
                bad(&r, "duration \"%s\": expected a positive time like 2h (%s)", FIELD(C_DURATION), why);
                goto out;
            }
            if (!(dur > 0)) {
                bad(&r, "duration \"%s\": expected a positive time like 2h%s", FIELD(C_DURATION), "");
                goto out;
            }
            if (!(dur <= NUMERICS_MAX_TIME_S)) {
                bad(&r, "duration \"%s\": beyond the simulated clock's horizon of 100 years%s", FIELD(C_DURATION), "");
                goto out;
            }
            if (push((void **)&s->trace_jobs, &s->n_trace_jobs, sizeof *s->trace_jobs) < 0) goto oom;
            sc_trace_job *j = &s->trace_jobs[s->n_trace_jobs - 1];
            long off = add_name(s, name);
            if (off < 0) goto oom;
            j->name = (uint32_t)off;
            j->gpus = (int)gpus_d;
            j->duration_s = dur;
            j->submit_s = submit;
            j->priority = (int)prio;
            j->line = line;
            j->queue = queue_index(s, queues, queue);
        } else {
            if (units_parse(FIELD(C_TOKENS), UNIT_COUNT, &tokens, why, sizeof why) < 0 ||
                (!(tokens > 0) && snprintf(why, sizeof why, "zero") > 0)) {
                bad(&r, "tokens \"%s\": expected a count like 50B (%s)", FIELD(C_TOKENS), why);
                goto out;
            }
            const llm_spec *m = catalog_llm(s->cat, FIELD(C_MODEL));
            if (!m) {
                bad(&r, "model \"%s\": not a catalog model preset%s", FIELD(C_MODEL), "");
                goto out;
            }
            if (push((void **)&s->training, &s->n_training, sizeof *s->training) < 0) goto oom;
            sc_training *t = &s->training[s->n_training - 1];
            snprintf(t->name, sizeof t->name, "%s", name);
            t->model = *m;
            snprintf(t->preset, sizeof t->preset, "%s", m->name);
            if (plan_training(s, t, m, (int)gpus_d, why, sizeof why) < 0) {
                s->n_training--;
                bad(&r, "%s%s", why, "");
                goto out;
            }
            t->gpus = (int)gpus_d;
            t->tokens = tokens;
            t->steps = (int64_t)ceil(tokens / ((double)t->plan.global_batch * t->plan.seq_len));
            t->submit_s = submit;
            t->priority = (int)prio;
            t->line = line;
            snprintf(t->node_type, sizeof t->node_type, "%s", s->nodes[0].type);
            snprintf(t->queue, sizeof t->queue, "%s", queue[0] ? queue : (s->n_queues ? s->queues[0].name : "default"));
        }
#undef FIELD
    }
    if (ferror(fp)) {
        snprintf(err, errlen, "%s:%d: read error: %s", path, r.line, strerror(errno));
        goto out;
    }
    if (!have_header) {
        snprintf(err, errlen, "%s:1: empty trace; expected a header line (submit,queue,priority,gpus,duration,...)", path);
        goto out;
    }
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "%s:%d: out of memory", path, r.line);
out:
    free(queues);
    free(buf);
    fclose(fp);
    return rc;
}
