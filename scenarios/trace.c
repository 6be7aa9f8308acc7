/*
 * trace: job-trace CSV reader (format in trace.h, CSV dialect in csv.h).
 *
 * Load: one pass over the file, O(rows); a 100K-job trace is a few MB and
 * reads in well under a second. Training rows evaluate the step model for
 * up to a handful of candidate plans to find one that fits in memory.
 */
#include "scenarios/trace.h"

#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/units.h"
#include "models/numerics.h"
#include "models/train_auto.h"
#include "scenarios/csv.h"
#include "scenarios/jobtrace.h"
#include "scenarios/trace_int.h"

#define MAX_ROWS 10000000

const char *const trace_col_names[C_COUNT] = { "submit", "queue", "priority", "gpus", "duration", "tokens", "model",
                                               "name", "id", "state", "elapsed", "limit", "user", "account",
                                               "after", "nodes", "actual_start" };

/* A plan for a trace training job on `gpus` GPUs of the first node type
 * (the search is models/train_auto.c's). Returns 0 with t->plan filled. */
static int plan_training(scenario *s, sc_training *t, const llm_spec *m, int gpus, char *why, size_t len) {
    const node_spec *node = scenario_node_spec(s, 0);
    fabric f;
    if (!node || fabric_init(&f, s->cat, node, scenario_node_count(s)) < 0) {
        snprintf(why, len, "the cluster has no node type to run on");
        return -1;
    }
    return train_auto_plan(m, &f, node->gpus, gpus, &t->plan, why, len);
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

/* The header: known column names, each once, enough of them to say what
 * a job is. Sets jr->col and names the fields for UTF-8 errors. */
static int read_header(job_reader *jr, const csv_record *rec) {
    for (int i = 0; i < rec->n; i++) {
        int k = -1;
        for (int c = 0; c < C_COUNT; c++)
            if (!strcmp(rec->f[i], trace_col_names[c])) k = c;
        if (k < 0)
            return csv_fail(jr->csv, jr->err, jr->errlen, "unknown column \"%s\"; expected %s", rec->f[i],
                            "submit, queue, priority, gpus, duration, tokens, model, name, id, state, elapsed, "
                            "limit, user, account, after, nodes, actual_start");
        if (jr->col[k] >= 0)
            return csv_fail(jr->csv, jr->err, jr->errlen, "column \"%s\" appears twice in the header", rec->f[i]);
        jr->col[k] = i;
        jr->field_names[i] = trace_col_names[k];
    }
    if (jr->col[C_SUBMIT] < 0 || jr->col[C_GPUS] < 0 ||
        (jr->col[C_DURATION] < 0 && jr->col[C_TOKENS] < 0 && jr->col[C_LIMIT] < 0 && !trace_any_max_time(jr->s)))
        return csv_fail(jr->csv, jr->err, jr->errlen,
                        "the header needs columns submit, gpus and duration (or tokens and model), or a limit");
    for (int c = C_ID; c < C_COUNT; c++)
        if (jr->col[c] >= 0) jr->s->trace_columns |= trace_column_bit(c);
    csv_name_fields(jr->csv, jr->field_names, rec->n, "a field");
    return 0;
}

/* What every job has: submit time (not decreasing, on the clock), GPUs
 * (that the cluster has, unless it can rent more), priority, queue and
 * name; and exactly one of a duration and tokens. */
static int read_common(job_reader *jr, const csv_record *rec, job_row *j) {
    const scenario *s = jr->s;
    const csv *r = jr->csv;
    char why[256];
    const char *z = field(jr, rec, C_SUBMIT);
    if (trace_signed_time(z, &j->submit_s, why, sizeof why) < 0)
        return csv_fail(r, jr->err, jr->errlen, "submit \"%s\": expected a time like 3600 or 2h (%s)", z, why);
    if (j->submit_s < jr->last_submit)
        return csv_fail(r, jr->err, jr->errlen,
                        "submit \"%s\": submit times must not decrease (the previous job is at a later time)", z);
    if (!(fabs(j->submit_s) <= NUMERICS_MAX_TIME_S))
        return csv_fail(r, jr->err, jr->errlen, "submit \"%s\": beyond the simulated clock's horizon of 100 years", z);
    jr->last_submit = j->submit_s;
    z = field(jr, rec, C_GPUS);
    if (units_parse(z, UNIT_COUNT, &j->gpus, why, sizeof why) < 0 || j->gpus < 1 || j->gpus != floor(j->gpus) ||
        j->gpus > 1e7)
        return csv_fail(r, jr->err, jr->errlen, "gpus \"%s\": gpus must be a whole number >= 1", z);
    if (j->gpus > jr->cluster_gpus && !s->has_cloud)
        return csv_fail(r, jr->err, jr->errlen, "gpus \"%s\": a job needs more GPUs than the cluster has (%d)", z,
                        jr->cluster_gpus);
    z = field(jr, rec, C_PRIORITY);
    j->priority = 0;
    if (z[0] && (units_parse(z, UNIT_NUMBER, &j->priority, why, sizeof why) < 0 || j->priority != floor(j->priority) ||
                 fabs(j->priority) > 1e6))
        return csv_fail(r, jr->err, jr->errlen, "priority \"%s\": expected a whole number", z);
    j->queue = field(jr, rec, C_QUEUE);
    if (!has_queue(s, jr->queues, j->queue) || strlen(j->queue) >= SC_NAME_MAX)
        return csv_fail(r, jr->err, jr->errlen, "queue \"%s\": no <queue name=\"%s\"> in <scheduler>", j->queue,
                        j->queue);
    int is_training = field(jr, rec, C_TOKENS)[0] != 0, has_duration = field(jr, rec, C_DURATION)[0] != 0;
    int has_limit = field(jr, rec, C_LIMIT)[0] != 0 || trace_queue_max_time(s, queue_index(s, jr->queues, j->queue)) > 0;
    if (is_training ? has_duration : !has_duration && !has_limit)
        return csv_fail(r, jr->err, jr->errlen,
                        "give a duration (a batch job) or tokens and model (a training job), not %s%s",
                        is_training ? "both" : "neither", is_training ? "" : " (or a limit to draw a duration under)");
    z = field(jr, rec, C_NAME);
    const char *id = field(jr, rec, C_ID);
    if (z[0]) snprintf(j->name, sizeof j->name, "%.*s", SC_NAME_MAX - 1, z);
    else if (id[0]) snprintf(j->name, sizeof j->name, "%.*s", SC_NAME_MAX - 1, id);
    else snprintf(j->name, sizeof j->name, "trace-%ld", rec->line);
    return 0;
}

static int out_of_memory(const job_reader *jr) { return csv_fail(jr->csv, jr->err, jr->errlen, "out of memory"); }

int trace_add_batch(scenario *s, const char *name, double submit_s, double duration_s, int gpus, int queue, int line) {
    long off = trace_add_name(s, name);
    if (off < 0 || !scenario_push((void **)&s->trace_jobs, &s->n_trace_jobs, sizeof *s->trace_jobs)) return -1;
    /* a job as the snapshot columns leave one they do not name: pending,
     * no id, user, account, nodes, dependency, history or actual start */
    s->trace_jobs[s->n_trace_jobs - 1] = (sc_trace_job){
        .submit_s = submit_s, .duration_s = duration_s, .gpus = gpus, .queue = queue, .line = line,
        .name = (uint32_t)off, .id = SC_NO_TEXT, .user = SC_NO_TEXT, .account = SC_NO_TEXT, .nodes = SC_NO_TEXT,
        .after = -1, .ratios = -1, .actual_start_s = NAN, .state = SC_JOB_PENDING };
    return 0;
}

/* A batch job: the row's duration, appended to s->trace_jobs. */
static int add_batch(job_reader *jr, const csv_record *rec, const job_row *j) {
    scenario *s = jr->s;
    char why[256];
    double dur = 0;
    const char *z = field(jr, rec, C_DURATION);
    if (!z[0]) {
        /* drawn from <runtime-history> under its limit when the world is built */
    } else if (units_parse(z, UNIT_DURATION, &dur, why, sizeof why) < 0)
        return csv_fail(jr->csv, jr->err, jr->errlen, "duration \"%s\": expected a positive time like 2h (%s)", z, why);
    else if (!(dur > 0)) return csv_fail(jr->csv, jr->err, jr->errlen, "duration \"%s\": expected a positive time like 2h", z);
    else if (!(dur <= NUMERICS_MAX_TIME_S))
        return csv_fail(jr->csv, jr->err, jr->errlen, "duration \"%s\": beyond the simulated clock's horizon of 100 years",
                        z);
    if (trace_add_batch(s, j->name, j->submit_s, dur, (int)j->gpus, queue_index(s, jr->queues, j->queue), jr->line) < 0)
        return out_of_memory(jr);
    sc_trace_job *t = &s->trace_jobs[s->n_trace_jobs - 1];
    t->priority = (int)j->priority;
    return trace_read_state(jr, rec, t);
}

/* A training job: tokens of a catalog model, with a plan that fits,
 * appended to s->training. */
static int add_training(job_reader *jr, const csv_record *rec, const job_row *j) {
    scenario *s = jr->s;
    char why[256];
    double tokens;
    const char *z = field(jr, rec, C_TOKENS);
    if (units_parse(z, UNIT_COUNT, &tokens, why, sizeof why) < 0 ||
        (!(tokens > 0) && snprintf(why, sizeof why, "zero") > 0))
        return csv_fail(jr->csv, jr->err, jr->errlen, "tokens \"%s\": expected a count like 50B (%s)", z, why);
    if (trace_training_plain(jr, rec) < 0) return -1;
    const llm_spec *m = catalog_llm(s->cat, field(jr, rec, C_MODEL));
    if (!m)
        return csv_fail(jr->csv, jr->err, jr->errlen, "model \"%s\": not a catalog model preset",
                        field(jr, rec, C_MODEL));
    if (!scenario_push((void **)&s->training, &s->n_training, sizeof *s->training)) return out_of_memory(jr);
    sc_training *t = &s->training[s->n_training - 1];
    snprintf(t->name, sizeof t->name, "%s", j->name);
    t->model = *m;
    snprintf(t->preset, sizeof t->preset, "%s", m->name);
    if (plan_training(s, t, m, (int)j->gpus, why, sizeof why) < 0) {
        s->n_training--;
        return csv_fail(jr->csv, jr->err, jr->errlen, "%s", why);
    }
    t->gpus = (int)j->gpus;
    t->tokens = tokens;
    t->steps = (int64_t)ceil(tokens / ((double)t->plan.global_batch * t->plan.seq_len));
    t->submit_s = j->submit_s;
    t->priority = (int)j->priority;
    t->line = jr->line;
    snprintf(t->node_type, sizeof t->node_type, "%s", s->nodes[0].type);
    snprintf(t->queue, sizeof t->queue, "%s",
             j->queue[0] ? j->queue : (s->n_queues ? s->queues[0].name : "default"));
    return 0;
}

/* The header, then one job per row. 0, or -1 with jr->err set. */
static int read_jobs(job_reader *jr) {
    csv_record rec;
    int got, have_header = 0;
    csv_name_fields(jr->csv, NULL, 0, "the header");
    while ((got = csv_next(jr->csv, &rec, jr->err, jr->errlen)) > 0) {
        if (csv_columns(jr->csv, &rec, 0, TRACE_MAX_FIELDS, NULL, jr->err, jr->errlen) < 0) return -1;
        if (!have_header) {
            if (read_header(jr, &rec) < 0) return -1;
            have_header = 1;
            continue;
        }
        if (++jr->rows > MAX_ROWS) return csv_fail(jr->csv, jr->err, jr->errlen, "more than %d jobs", MAX_ROWS);
        job_row j;
        if (read_common(jr, &rec, &j) < 0) return -1;
        int rc = field(jr, &rec, C_TOKENS)[0] ? add_training(jr, &rec, &j) : add_batch(jr, &rec, &j);
        if (rc < 0) return -1;
    }
    if (got < 0) return -1;
    if (csv_errno(jr->csv) == 0 && have_header && trace_resolve_after(jr) < 0) return -1;
    if (csv_errno(jr->csv))
        return csv_fail(jr->csv, jr->err, jr->errlen, "read error: %s", strerror(csv_errno(jr->csv)));
    if (!have_header) {
        snprintf(jr->err, jr->errlen,
                 "%s:1: empty trace; expected a header line (submit,queue,priority,gpus,duration,...)",
                 csv_path(jr->csv));
        return -1;
    }
    return 0;
}

/* The format to read href in (<trace format>, auto told by the file's
 * shape): a jobtrace_format; -2 with *ie when the file cannot be opened; -1
 * with err when the public formats' options are given for the project's
 * CSV. */
static int trace_format(scenario *s, const char *href, int line, const char *path, infile_err *ie, char *err,
                        size_t errlen) {
    sc_trace_read *tr = &s->trace_read;
    int f = jobtrace_format_parse(tr->format);
    if (f == JOBTRACE_AUTO) f = jobtrace_sniff(path, ie);
    if (f == JOBTRACE_CSV && (tr->time_scale > 0 || tr->skip_s > 0 || tr->count > 0 || tr->procs_per_gpu > 0)) {
        snprintf(err, errlen, "%s:%d: <trace href=\"%s\">: time-scale, skip, count and procs-per-gpu apply to the "
                 "public trace formats (format=\"swf\", ...); this is the project's CSV", s->file, line, href);
        return -1;
    }
    if (f == JOBTRACE_CSV) snprintf(tr->format_read, sizeof tr->format_read, "csv");
    return f;
}

int trace_load(scenario *s, const char *href, int line, char *err, size_t errlen) {
    char path[1024];
    if (scenario_path(s->file, href, path, sizeof path) < 0) {
        snprintf(err, errlen, "%s:%d: <trace href=\"%s\">: the path is longer than %zu bytes", s->file, line, href,
                 sizeof path - 1);
        return -1;
    }
    infile_err ie;
    s->trace_after = s->n_jobs;
    int f = trace_format(s, href, line, path, &ie, err, errlen);
    if (f == -1) return -1;
    job_reader jr = { .s = s, .line = line, .err = err, .errlen = errlen };
    if (f == JOBTRACE_CSV) jr.csv = csv_open(path, "a CSV file", &ie);
    else if (f >= 0 && (f = jobtrace_load(s, path, (jobtrace_format)f, line, &ie, err, errlen)) != -2) return f;
    if (!jr.csv) {
        snprintf(err, errlen, "%s:%d: <trace href=\"%s\">: %s: %s", s->file, line, href, path, ie.why);
        return -1;
    }
    jr.queues = malloc((size_t)(s->n_queues ? s->n_queues : 1) * sizeof *jr.queues);
    if (!jr.queues) {
        csv_close(jr.csv);
        snprintf(err, errlen, "%s:%d: <trace href=\"%s\">: out of memory", s->file, line, href);
        return -1;
    }
    for (int i = 0; i < s->n_queues; i++) jr.queues[i] = s->queues[i].name;
    qsort(jr.queues, (size_t)s->n_queues, sizeof *jr.queues, cmp_name);
    jr.cluster_gpus = scenario_gpus(s);
    jr.first_type_nodes = trace_first_type_nodes(s);
    jr.last_submit = -HUGE_VAL;                 /* a submit may be before t = 0 */
    for (int c = 0; c < C_COUNT; c++) jr.col[c] = -1;
    int rc = read_jobs(&jr);
    trace_reader_free(&jr);
    free(jr.queues);
    csv_close(jr.csv);
    return rc;
}
