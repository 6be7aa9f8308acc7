/*
 * jobtrace: what every public job-trace format shares (jobtrace.h): the
 * format names, telling a file's format by its shape, the checks and counts
 * of each row (jt_add), and the kept jobs ordered by submit time, cut by
 * skip and count, scaled by time-scale and appended to the scenario.
 *
 * One pass over the file, O(rows); then a sort of the kept jobs,
 * O(jobs log jobs), since some published traces are not in submit order
 * (pai_task_table is not).
 */
#include "scenarios/jobtrace_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/grow.h"
#include "models/numerics.h"
#include "scenarios/jsonin.h"
#include "scenarios/trace.h"

/* A job trace holds at most 10 million rows, as the project's CSV
 * (scenarios/trace.c, docs/traces.md): the whole trace is built before the
 * run starts. */
#define JT_MAX_ROWS 10000000

static const char *const format_names[] = { "csv", "auto", "swf", "philly", "helios", "acme", "pai", "openb" };

int jobtrace_format_parse(const char *z) {
    if (!z[0]) return JOBTRACE_CSV;
    for (int i = 0; i < (int)(sizeof format_names / sizeof *format_names); i++)
        if (!strcmp(z, format_names[i])) return i;
    return -1;
}

const char *jobtrace_format_name(jobtrace_format f) { return format_names[f]; }

int jt_number(const char *z, double *out) {
    const char *d = z + (*z == '-' || *z == '+');
    if (!(*d == '.' || (*d >= '0' && *d <= '9')) || d[1] == 'x' || d[1] == 'X') return -1;   /* no inf, nan, hex */
    char *end;
    errno = 0;
    double x = strtod(z, &end);
    if (errno || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

int jt_header_has(const csv_record *rec, const char *const *names, int n) {
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int c = 0; c < rec->n && c < CSV_MAX_FIELDS && !found; c++) found = !strcmp(rec->f[c], names[i]);
        if (!found) return 0;
    }
    return 1;
}

/* The <queue> named z: its index, else the first queue (0), else -1 (the
 * scheduler's "default"). The previous row's answer is kept: rows of one
 * queue come in runs, and a scenario has a handful of queues. */
static int queue_of(jt_build *b, const char *z) {
    if (b->last_queue && !strcmp(z, b->last_queue_name)) return b->last_queue_index;
    const scenario *s = b->s;
    int q = s->n_queues ? 0 : -1;
    for (int i = 0; z[0] && i < s->n_queues; i++)
        if (!strcmp(s->queues[i].name, z)) q = i;
    snprintf(b->last_queue_name, sizeof b->last_queue_name, "%s", z);
    b->last_queue = b->last_queue_name;
    b->last_queue_index = q;
    return q;
}

/* Append name (NUL included) to the build's name pool: its offset, or -1. */
static long add_name(jt_build *b, const char *name) {
    size_t n = strnlen(name, SC_NAME_MAX - 1);
    if (b->names_len + n + 1 > UINT32_MAX || GROW(b->names, b->names_cap, b->names_len + n + 1)) return -1;
    memcpy(b->names + b->names_len, name, n);
    b->names[b->names_len + n] = 0;
    b->names_len += n + 1;
    return (long)(b->names_len - n - 1);
}

/* z (NULL or "": none) into the pool: *off, or JT_NONE. 0, or -1 when
 * out of memory. */
static int add_text(jt_build *b, const char *z, uint32_t *off) {
    long o = z && z[0] ? add_name(b, z) : (long)JT_NONE;
    *off = (uint32_t)o;
    return o < 0 ? -1 : 0;
}

int jt_add(jt_build *b, long line, const jt_row *r, char *err, size_t errlen) {
    sc_trace_read *tr = &b->s->trace_read;
    if (++tr->rows > JT_MAX_ROWS) return jt_fail(b, line, err, errlen, "more than %d rows", JT_MAX_ROWS);
    if (isfinite(r->submit_s) && (!b->have_first || r->submit_s < b->first_submit_s)) {
        b->first_submit_s = r->submit_s;
        b->have_first = 1;
    }
    if (r->other_status) return tr->skipped_status++, 0;
    if (!r->started || !(r->run_s > 0) || !isfinite(r->run_s) || !isfinite(r->submit_s))
        return tr->skipped_not_run++, 0;
    if (r->gpus < 1) return tr->skipped_no_gpus++, 0;
    if (r->gpus > b->cluster_gpus && !b->s->has_cloud) return tr->skipped_too_big++, 0;
    if (r->run_s > NUMERICS_MAX_TIME_S)
        return jt_fail(b, line, err, errlen, "run time %.9g s is beyond the simulated clock's horizon of 100 years",
                       r->run_s);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "trace-%ld", line);
    long off = add_name(b, r->name && r->name[0] ? r->name : fallback);
    jt_job j = { .submit_s = r->submit_s, .run_s = r->run_s, .gpus = (int)r->gpus, .queue = queue_of(b, r->queue),
                 .name = (uint32_t)off, .line = line, .limit_s = r->limit_s > 0 ? r->limit_s : 0,
                 .wait_s = isfinite(r->wait_s) && r->wait_s >= 0 ? r->wait_s : NAN };
    if (off < 0 || add_text(b, r->user, &j.user) < 0 || add_text(b, r->account, &j.account) < 0 ||
        add_text(b, r->after, &j.after) < 0 || GROW(b->jobs, b->cap_jobs, b->n_jobs + 1))
        return jt_fail(b, line, err, errlen, "out of memory");
    b->jobs[b->n_jobs++] = j;
    return 0;
}

int jt_read_rows(csv *r, jt_build *b, const int *idx, jt_parse_fn parse, char *err, size_t errlen) {
    csv_record rec;
    int got;
    while ((got = csv_next(r, &rec, err, errlen)) > 0) {
        jt_row q;
        if (parse(r, &rec, idx, &q, err, errlen) < 0 || jt_add(b, rec.line, &q, err, errlen) < 0) return -1;
    }
    return got;
}

/* Submit order; rows of one submit time keep the file's order (the name
 * offsets grow with it), so the order is the same on every machine. */
static int cmp_job(const void *pa, const void *pb) {
    const jt_job *a = pa, *b = pb;
    if (a->submit_s != b->submit_s) return a->submit_s < b->submit_s ? -1 : 1;
    return a->name < b->name ? -1 : a->name > b->name;
}

/* What the trace says of the job beyond its run, onto the trace job t
 * submitted at t_s: its user and account, its limit, and its real start
 * (t_s plus the trace's wait). A job that ran longer than the limit it
 * asked for was not stopped there (a grace time, or a log whose request is
 * CPU time): it keeps no limit, so the replay runs it as long as it ran. A
 * job that ran exactly its limit ends as timeout, as it most likely did.
 * 0, or -1 out of memory. */
static int add_facts(jt_build *b, const jt_job *j, sc_trace_job *t, double t_s) {
    scenario *s = b->s;
    long user = j->user != JT_NONE ? trace_add_name(s, b->names + j->user) : (long)SC_NO_TEXT;
    long account = j->account != JT_NONE ? trace_add_name(s, b->names + j->account) : (long)SC_NO_TEXT;
    if (user < 0 || account < 0) return -1;
    t->user = (uint32_t)user, t->account = (uint32_t)account;
    t->limit_s = j->limit_s >= j->run_s ? j->limit_s : 0;
    if (isfinite(j->wait_s) && t_s + j->wait_s <= NUMERICS_MAX_TIME_S) t->actual_start_s = t_s + j->wait_s;
    s->trace_columns |= (t->user != SC_NO_TEXT ? SC_TCOL_USER : 0u) | (t->account != SC_NO_TEXT ? SC_TCOL_ACCOUNT : 0u) |
                        (isfinite(t->actual_start_s) ? SC_TCOL_ACTUAL_START : 0u);
    return 0;
}

/* A kept job's name and its trace index, to find the job another waits for. */
typedef struct jt_named { const char *name; int at; } jt_named;

static int cmp_named(const void *pa, const void *pb) {
    const jt_named *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

/* Each kept job that names the job it waited for (kept[k]: its job in
 * b->jobs; trace index first + k) waits for the first kept job of that
 * name (after: Slurm's afterany) when that one is replayed before it; a
 * job outside the window, or not before it, is no dependency (so no
 * cycle). 0, or -1 out of memory. */
static int link_after(jt_build *b, const size_t *kept, int n, int first) {
    int any = 0;
    for (int k = 0; k < n && !any; k++) any = b->jobs[kept[k]].after != JT_NONE;
    if (!any) return 0;
    jt_named *by = malloc((size_t)n * sizeof *by);
    if (!by) return -1;
    for (int k = 0; k < n; k++) by[k] = (jt_named){ b->names + b->jobs[kept[k]].name, first + k };
    qsort(by, (size_t)n, sizeof *by, cmp_named);
    for (int k = 0; k < n; k++) {
        const jt_job *j = &b->jobs[kept[k]];
        if (j->after == JT_NONE) continue;
        jt_named key = { b->names + j->after, -1 };
        size_t lo = 0, hi = (size_t)n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_named(&by[mid], &key) < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < (size_t)n && !strcmp(by[lo].name, key.name) && by[lo].at < first + k)
            b->s->trace_jobs[first + k].after = by[lo].at;
    }
    free(by);
    return 0;
}

/* The kept jobs in submit order, from skip_s on the trace's clock, at most
 * count of them, times divided by time_scale, appended to the scenario. */
static int finish(jt_build *b, char *err, size_t errlen) {
    const sc_trace_read *tr = &b->s->trace_read;
    double scale = tr->time_scale > 0 ? tr->time_scale : 1;
    if (b->n_jobs) qsort(b->jobs, b->n_jobs, sizeof *b->jobs, cmp_job);
    size_t *kept = malloc((b->n_jobs + 1) * sizeof *kept);
    int n = 0, first = b->s->n_trace_jobs, rc = kept ? 0 : jt_fail(b, 0, err, errlen, "out of memory");
    for (size_t i = 0; rc == 0 && i < b->n_jobs && (tr->count == 0 || n < tr->count); i++) {
        const jt_job *j = &b->jobs[i];
        double t = j->submit_s - b->first_submit_s - tr->skip_s;
        if (t < 0) continue;
        t /= scale;
        if (!(t <= NUMERICS_MAX_TIME_S))
            rc = jt_fail(b, j->line, err, errlen,
                         "submit %.9g s after the trace's first is beyond the simulated clock's horizon of 100 years", t);
        else if (trace_add_batch(b->s, b->names + j->name, t, j->run_s, j->gpus, j->queue, b->line) < 0 ||
                 add_facts(b, j, &b->s->trace_jobs[b->s->n_trace_jobs - 1], t) < 0)
            rc = jt_fail(b, j->line, err, errlen, "out of memory");
        else kept[n++] = i;
    }
    if (rc == 0 && link_after(b, kept, n, first) < 0) rc = jt_fail(b, 0, err, errlen, "out of memory");
    free(kept);
    return rc;
}

/* The public CSV formats by their first record (the header; pai's may be
 * its first row), else csv. */
static int sniff_csv(const char *path, infile_err *ie) {
    csv *r = csv_open(path, "a CSV file", ie);
    if (!r) return -2;
    char err[256];
    csv_record rec;
    int f = JOBTRACE_CSV;
    if (csv_next(r, &rec, err, sizeof err) > 0) {
        if (jt_is_helios(&rec)) f = JOBTRACE_HELIOS;
        else if (jt_is_acme(&rec)) f = JOBTRACE_ACME;
        else if (jt_is_openb(&rec)) f = JOBTRACE_OPENB;
        else if (jt_is_pai(&rec)) f = JOBTRACE_PAI;
    }
    csv_close(r);
    return f;
}

int jobtrace_sniff(const char *path, infile_err *ie) {
    FILE *fp = infile_open(path, INFILE_TRACE_MAX_BYTES, "a job trace", ie);
    if (!fp) return -2;
    char line[CSV_MAX_LINE];
    int f = -1;
    size_t n = strlen(path);
    if (n > 4 && !strcmp(path + n - 4, ".swf")) f = JOBTRACE_SWF;
    while (f < 0 && fgets(line, sizeof line, fp)) {
        const char *p = line + strspn(line, " \t\r\n");
        if (!*p) continue;
        f = *p == ';' || jt_is_swf_line(p) ? JOBTRACE_SWF : *p == '[' || *p == '{' ? JOBTRACE_PHILLY : JOBTRACE_CSV;
    }
    fclose(fp);
    return f == JOBTRACE_SWF || f == JOBTRACE_PHILLY ? f : sniff_csv(path, ie);
}

/* The CSV formats: the first record to the format's reader. */
static int read_csv_family(jt_build *b, infile_err *ie, char *err, size_t errlen) {
    csv *r = csv_open(b->path, "a CSV file", ie);
    if (!r) return -2;
    csv_record first;
    int got = csv_next(r, &first, err, errlen), rc = got;
    if (got == 0) rc = jt_fail(b, csv_line(r) ? csv_line(r) : 1, err, errlen, "empty trace; expected the %s header",
                               jobtrace_format_name(b->format));
    else if (got > 0 && b->format == JOBTRACE_OPENB) rc = jt_read_openb(r, &first, b, err, errlen);
    else if (got > 0 && b->format == JOBTRACE_PAI) rc = jt_read_pai(r, &first, b, err, errlen);
    else if (got > 0) rc = jt_read_helios(r, &first, b, err, errlen);
    if (rc >= 0 && csv_errno(r)) rc = csv_fail(r, err, errlen, "read error: %s", strerror(csv_errno(r)));
    csv_close(r);
    return rc < 0 ? -1 : 0;
}

/* Philly's one JSON document, read whole. */
static int read_json(jt_build *b, infile_err *ie, char *err, size_t errlen) {
    char *text;
    size_t len;
    if (infile_read(b->path, JSONIN_MAX_BYTES, "a JSON file", &text, &len, ie) < 0) return -2;
    int rc = jt_read_philly(text, len, b, err, errlen);
    free(text);
    return rc;
}

int jobtrace_load(scenario *s, const char *path, jobtrace_format f, int line, infile_err *ie, char *err,
                  size_t errlen) {
    jt_build b = { .s = s, .path = path, .format = f, .line = line, .cluster_gpus = scenario_gpus(s) };
    snprintf(s->trace_read.format_read, sizeof s->trace_read.format_read, "%s", jobtrace_format_name(f));
    if (f != JOBTRACE_SWF && s->trace_read.procs_per_gpu > 0) {
        snprintf(err, errlen, "%s:%d: <trace procs-per-gpu=\"%g\">: applies to SWF traces; %s was read as %s", s->file,
                 line, s->trace_read.procs_per_gpu, s->trace_href, jobtrace_format_name(f));
        return -1;
    }
    int rc;
    if (f == JOBTRACE_SWF) {
        FILE *fp = infile_open(path, INFILE_TRACE_MAX_BYTES, "a job trace", ie);
        rc = fp ? jt_read_swf(fp, &b, err, errlen) : -2;
        if (fp) fclose(fp);
    } else if (f == JOBTRACE_PHILLY) rc = read_json(&b, ie, err, errlen);
    else rc = read_csv_family(&b, ie, err, errlen);
    if (rc == 0) rc = finish(&b, err, errlen);
    free(b.jobs);
    free(b.names);
    return rc;
}

int jobtrace_reported(const scenario *s) { return s->trace_href[0] && jobtrace_format_parse(s->trace_read.format) > 0; }

void jobtrace_describe(const scenario *s, char *buf, size_t len) {
    const sc_trace_read *tr = &s->trace_read;
    long skipped = tr->skipped_no_gpus + tr->skipped_not_run + tr->skipped_too_big + tr->skipped_status;
    snprintf(buf, len,
             "%s read as %s%s: %ld rows, %d jobs, %ld skipped (%ld never ran, %ld without a GPU, %ld larger than the "
             "cluster, %ld other status)",
             s->trace_href, tr->format_read, strcmp(tr->format, "auto") ? "" : " (told by its shape)", tr->rows,
             s->n_trace_jobs, skipped, tr->skipped_not_run, tr->skipped_no_gpus, tr->skipped_too_big,
             tr->skipped_status);
}
