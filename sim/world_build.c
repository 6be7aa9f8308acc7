/*
 * world_build: the jobs of a scenario, built once when the world is made.
 *
 * Training jobs come first (one per <training>, in order), then the batch
 * jobs of each <jobs> group (arrivals, durations and sizes drawn from the
 * group's own random streams), with the trace's batch jobs where its
 * <trace> stands among the groups. Every input time and every time a
 * model gives (a step, a checkpoint write) must be a clock value: a bad
 * one is refused here, by element and line, rather than run for ever.
 * Generated names ("group-17") and multi-node jobs' node arrays live in
 * chunks freed with the world.
 */
#include "sim/world_int.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "models/checkpoint.h"
#include "scenarios/jobtrace.h"

/* Generated job names and node arrays live in chunks freed with the
 * world: a job's name is a pointer, so ten million jobs do not each carry
 * a fixed buffer, and the 66,000 multi-node jobs of the 10K-GPU year do
 * not each make a malloc (2% of the SimPy peer's workload in bench_sched,
 * and as much again in world_free). */
typedef struct name_chunk {
    struct name_chunk *next;
    size_t used, cap;
    char text[];                   /* 8-byte aligned: after three 8-byte fields */
} name_chunk;

#define CHUNK_BYTES 65536

/* n bytes from the first chunk of *list (a new one when it has no room);
 * NULL when out of memory. A list carves one kind of item, so its items
 * stay aligned to their size (n a multiple of it). */
static void *carve(name_chunk **list, size_t n) {
    name_chunk *c = *list;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = *list;
        c->used = 0;
        c->cap = cap;
        *list = c;
    }
    void *z = c->text + c->used;
    c->used += n;
    return z;
}

static size_t chunks_bytes(const name_chunk *c) {
    size_t n = 0;
    for (; c; c = c->next) n += sizeof *c + c->cap;
    return n;
}

static void chunks_free(name_chunk **list) {
    while (*list) {
        name_chunk *c = *list;
        *list = c->next;
        free(c);
    }
}

/* A job's nodes[]: a one-node job's is its node1 (most jobs of a trace),
 * a bigger job's carved from the world's chunks. */
static int alloc_nodes(job *j) {
    const node_spec *ns = cluster_pool_spec(j->w->c, j->pool);
    j->n_nodes = j->gpus < ns->gpus ? 1 : (j->gpus + ns->gpus - 1) / ns->gpus;
    j->gpus_per_node = j->gpus < ns->gpus ? j->gpus : ns->gpus;
    j->nodes = j->n_nodes == 1 ? &j->node1 : carve(&j->w->node_arrays, (size_t)j->n_nodes * sizeof *j->nodes);
    if (!j->nodes) return -1;
    for (int i = 0; i < j->n_nodes; i++) j->nodes[i] = -1;
    return 0;
}

/* Checkpoint size and costs from models/checkpoint, and the interval
 * (fixed, or Daly's optimum for the job's own failure rate). */
static int plan_checkpoints(world *w, job *j, const fabric *f, char *err, size_t errlen) {
    job_train *tr = j->tr;
    const sc_training *t = tr->t;
    const scenario *s = w->s;
    tr->inflight = -1;
    if (!t->checkpoint.present) return 0;
    const sc_storage *st = NULL;
    for (int i = 0; i < s->n_storage; i++)
        if (!strcmp(s->storage[i].name, t->storage)) st = &s->storage[i];
    if (!st && s->n_storage > 0) st = &s->storage[0];
    ckpt_size z;
    ckpt_io io;
    ckpt_io_params q;
    ckpt_io_params_default(&q);
    int layout = ckpt_layout_parse(t->checkpoint.layout), mode = ckpt_mode_parse(t->checkpoint.mode);
    ckpt_job cj = { &t->plan, f, st ? catalog_storage(s->cat, st->kind) : NULL, st ? st->bw_bytes_per_s : 0,
                    layout < 0 ? CKPT_SHARDED : (ckpt_layout)layout, mode < 0 ? CKPT_SYNC : (ckpt_mode)mode, 0,
                    t->checkpoint.streaming_gather };
    if (ckpt_job_size_with(&t->model, &t->plan, &t->checkpoint.contents, &z) < 0 ||
        ckpt_io_time(&cj, &z, &q, &io) < 0)
        return 0;
    char why[512];
    if (ckpt_host_check(&cj, &io, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s:%d: <checkpoint layout=\"rank0\">: %s", s->file, t->checkpoint.line, why);
        return -1;
    }
    if (io.stream_chunks > 0) {
        char note[128];
        snprintf(note, sizeof note, "; rank 0 streams the %.3g TB gather through %.3g TB of host memory in %d chunks",
                 io.written_bytes / 1e12, io.host_budget_bytes / 1e12, io.stream_chunks);
        if (!(tr->ckpt_note = strdup(note))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    tr->checkpoint_size_bytes = z.total_bytes;
    tr->checkpoint_write_s = io.write_s;
    tr->checkpoint_stall_s = tr->stall_s = io.stall_s;
    tr->background_s = io.background_s;
    tr->load_s = io.load_s;
    double interval_s = t->checkpoint.interval_s;
    if (t->checkpoint.interval_auto) {
        double rate = w->f ? failures_rate_per_s(w->f, j->n_nodes) : 0;
        interval_s = rate > 0 ? ckpt_auto_interval_s(&io, 1.0 / rate) : 0;
    }
    tr->checkpoint_interval_s = interval_s;
    tr->ckpt_every = interval_s > 0 ? interval_s / tr->step_s : 0;
    if (tr->ckpt_every > 0 && tr->ckpt_every < 1) tr->ckpt_every = 1;     /* at most every step */
    tr->next_ckpt = tr->ckpt_every;
    return 0;
}

/* A rate whose mean gap, 1/rate, must be a clock value: rate="1e-300/s"
 * puts the first arrival 1e300 s away. 0, or -1 with err set. */
static int input_rate(const scenario *s, int line, const char *elem, double rate_per_s, char *err, size_t errlen) {
    char why[160];
    if (engine_check_s(1.0 / rate_per_s, why, sizeof why) == 0) return 0;
    snprintf(err, errlen, "%s:%d: <%s rate=\"%g/s\">: the mean time between arrivals, 1/rate = %g s, %s", s->file,
             line, elem, rate_per_s, 1.0 / rate_per_s, why);
    return -1;
}

/* A model's output that becomes a time (a step, a checkpoint write) must
 * be positive (or 0 when zero_ok) and a clock value; an infinite or NaN
 * one came from a catalog figure such as hbm-bw="1e-300B/s" and used to run
 * forever. 0, or -1 with err naming the job and the figures of its GPU,
 * NIC and storage. */
static int model_time(const scenario *s, const sc_training *t, const fabric *f, const char *what, double t_s,
                      int zero_ok, double storage_bw, char *err, size_t errlen) {
    char why[160];
    if ((t_s > 0 || (zero_ok && t_s == 0)) && engine_check_s(t_s, why, sizeof why) == 0) return 0;
    if (!(t_s > 0)) snprintf(why, sizeof why, "is not a positive finite time");
    t_s = isnan(t_s) ? fabs(t_s) : t_s;         /* "nan", not "-nan" */
    char st[64] = "";
    if (storage_bw > 0) snprintf(st, sizeof st, ", storage bandwidth %g B/s", storage_bw);
    snprintf(err, errlen,
             "%s:%d: <training name=\"%s\">: the model gives %s of %g s, which %s; check the catalog figures it "
             "used: GPU %s (hbm-bw=%g B/s, bf16-tflops=%g), NIC %s (bandwidth=%g B/s)%s",
             s->file, t->line, t->name, what, t_s, why, f->gpu ? f->gpu->name : "?",
             f->gpu ? f->gpu->hbm_bw_bytes_per_s : 0, f->gpu ? f->gpu->tflops[PREC_BF16] : 0,
             f->nic ? f->nic->name : "none", f->nic ? f->nic->bw_bytes_per_s : 0, st);
    return -1;
}

static int build_training(world *w, const sc_training *t, job *j, char *err, size_t errlen) {
    const scenario *s = w->s;
    job_train *tr = j->tr;
    tr->t = t;
    j->pool = cluster_pool_of_type(w->c, t->node_type);
    fabric f;
    if (j->pool < 0 || world_fabric(w, j->pool, &f) < 0) {
        snprintf(err, errlen, "%s:%d: <training name=\"%s\">: node type %s has no GPU or NIC in the catalog",
                 s->file, t->line, t->name, t->node_type);
        return -1;
    }
    if (train_step(&t->model, &t->plan, &f, tr->perf) < 0 || !tr->perf->fits) {
        snprintf(err, errlen, "%s:%d: <training name=\"%s\">: %s", s->file, t->line, t->name, tr->perf->why);
        return -1;
    }
    if (model_time(s, t, &f, "a step time", tr->perf->step_s, 0, 0, err, errlen) < 0 ||
        (engine_check_s((double)t->steps * tr->perf->step_s, NULL, 0) < 0 &&
         snprintf(err, errlen, "%s:%d: <training name=\"%s\">: %lld steps of %g s take %g s, beyond the simulated "
                  "clock's horizon of 100 years (%.4g s); give fewer steps or tokens", s->file, t->line, t->name,
                  (long long)t->steps, tr->perf->step_s, (double)t->steps * tr->perf->step_s, SIM_HORIZON_S) > 0) ||
        world_input_time(s, t->line, "training", "submit", t->submit_s, err, errlen) < 0 ||
        world_input_time(s, t->line, "training", "timeout", t->timeout_s, err, errlen) < 0 ||
        (t->checkpoint.present && !t->checkpoint.interval_auto &&
         world_input_time(s, t->checkpoint.line, "checkpoint", "interval", t->checkpoint.interval_s, err, errlen) < 0))
        return -1;
    j->kind = JOB_TRAINING;
    j->gpus = t->gpus;
    tr->steps_total = t->steps;
    j->submit_s = t->submit_s;
    tr->step_s = tr->perf->step_s;
    j->name = t->name;
    j->queue_name = t->queue;
    j->queue = sched_queue_of(w->q, t->queue);
    j->priority = t->priority;
    j->timeout_s = t->timeout_s;
    j->after = t->after - 1;        /* training jobs come first: job i is <training> i */
    j->line = t->line;
    if (alloc_nodes(j) < 0) {
        snprintf(err, errlen, "%s:%d: out of memory building the world", s->file, t->line);
        return -1;
    }
    if (plan_checkpoints(w, j, &f, err, errlen) < 0) return -1;
    double st_bw = 0;
    for (int i = 0; i < s->n_storage; i++)
        if (!strcmp(s->storage[i].name, t->storage) || (!t->storage[0] && i == 0)) st_bw = s->storage[i].bw_bytes_per_s;
    if (model_time(s, t, &f, "a checkpoint stall", tr->stall_s, 1, st_bw, err, errlen) < 0 ||
        model_time(s, t, &f, "a background checkpoint write", tr->background_s, 1, st_bw, err, errlen) < 0 ||
        model_time(s, t, &f, "a checkpoint load", tr->load_s, 1, st_bw, err, errlen) < 0 ||
        model_time(s, t, &f, "a checkpoint interval", tr->checkpoint_interval_s, 1, st_bw, err, errlen) < 0)
        return -1;
    return 0;
}

/* A copy of "prefix-k" owned by the world; NULL when out of memory. */
static const char *numbered_name(world *w, const char *prefix, int k) {
    int n = snprintf(NULL, 0, "%s-%d", prefix, k) + 1;
    char *z = carve(&w->names, (size_t)n);
    if (z) snprintf(z, (size_t)n, "%s-%d", prefix, k);
    return z;
}

/* Job j (zeroed by calloc: PH_QUEUED, JOB_PENDING) as every job starts:
 * its index, no trace row, no job it waits for or that waits for it, not
 * started, not ended. Set as each job is made, not in passes of their own
 * over the whole array (20 MB for the 10K-GPU year: each pass a cache
 * miss per job). */
_Static_assert(PH_QUEUED == 0 && JOB_PENDING == 0, "a calloc'd job is queued and pending");

static void fresh_job(world *w, job *j) {
    j->w = w;
    j->index = (int)(j - w->jobs);
    j->trace_row = j->after = j->dep_head = j->dep_next = -1;
    j->start_s = j->end_s = j->queue_wait_s = -1;
}

/* The next job of w->jobs as a batch job (kind, GPUs, queue by name and
 * by the scheduler's index, priority, line); its name, submit time and
 * duration are the caller's to set. Returns it, or NULL when out of
 * memory (w->n_jobs then counts it, and world_free frees what it holds). */
static void note_size(world *w, const job *j);

static job *add_batch_job(world *w, int gpus, const char *queue, int qi, int priority, double timeout_s, int line) {
    job *j = &w->jobs[w->n_jobs];
    fresh_job(w, j);
    w->n_jobs++;
    j->kind = JOB_BATCH;
    j->gpus = gpus;
    j->pool = 0;
    j->queue_name = queue;
    j->queue = qi;
    j->priority = priority;
    j->timeout_s = timeout_s;
    j->line = line;
    note_size(w, j);
    return alloc_nodes(j) < 0 ? NULL : j;
}

/* Draws per trace job before its duration is the limit itself
 * (docs/cluster-state.md, "Run times from history"). */
#define RUNTIME_TRIES 16

/* A trace job's run time. Given, it is that; with only a limit, the limit
 * times a ratio drawn uniformly from its user's samples (else its
 * account's, else the cluster's: the trace reader chose them), redrawn
 * while not above the time it has already run; after RUNTIME_TRIES draws,
 * or with no samples, the limit. Stream "trace/runtime" keyed by the row. */
static double trace_duration(const scenario *s, const sc_trace_job *t, int row) {
    if (t->duration_s > 0) return t->duration_s;
    if (t->ratios < 0) return t->limit_s;
    const sc_ratios *r = &s->ratios[t->ratios];
    uint64_t key = rng_derive_seed(s->seed, "trace/runtime", (uint64_t)row);
    for (uint64_t n = 0; n < RUNTIME_TRIES; n++) {
        int k = (int)(rng_counter_uniform_pos(key, n) * r->n);
        double d = t->limit_s * r->values[k < r->n ? k : r->n - 1];
        if (d > t->elapsed_s) return d;
    }
    return t->limit_s;
}

/* The trace's batch jobs (scenario.trace_jobs), in file order. Each
 * scenario queue's scheduler index is looked up once, not per row. */
static int add_trace_jobs(world *w) {
    const scenario *s = w->s;
    int *qi = malloc(((size_t)s->n_queues + 1) * sizeof *qi);
    if (!qi) return -1;
    for (int k = 0; k < s->n_queues; k++) qi[k] = sched_queue_of(w->q, s->queues[k].name);
    qi[s->n_queues] = sched_queue_of(w->q, "default");
    w->trace_first = w->n_jobs;
    w->trace_plain = 1;
    for (int i = 0; i < s->n_trace_jobs; i++) {
        const sc_trace_job *t = &s->trace_jobs[i];
        w->trace_running += t->state == SC_JOB_RUNNING;
        w->trace_plain &= t->state == SC_JOB_PENDING && t->after < 0;
        int k = t->queue >= 0 ? t->queue : s->n_queues;
        const char *queue = t->queue >= 0 ? s->queues[t->queue].name : "default";
        job *j = add_batch_job(w, t->gpus, queue, qi[k], t->priority, t->limit_s, t->line);
        if (!j) {
            free(qi);
            return -1;
        }
        j->name = s->trace_names + t->name;
        j->submit_s = t->submit_s;
        j->trace_row = i;
        j->after = t->after >= 0 ? w->trace_first + t->after : -1;
        j->duration_s = trace_duration(s, t, i);
    }
    free(qi);
    return 0;
}

/* The jobs of <jobs> group i: arrivals, durations and sizes drawn from
 * the group's own streams. 0; -1 when out of memory; -2 with err set when
 * one of its times is not a clock value. */
static int add_group_jobs(world *w, int i, char *err, size_t errlen) {
    const scenario *s = w->s;
    const sc_jobs *g = &s->jobs[i];
    rng *ra = rng_new(s->seed, "jobs/arrivals", (uint64_t)i);
    rng *rd = rng_new(s->seed, "jobs/durations", (uint64_t)i);
    rng *rs = rng_new(s->seed, "jobs/sizes", (uint64_t)i);
    rng_discrete *sizes = g->n_sizes ? rng_discrete_new(g->size_weights, (size_t)g->n_sizes) : NULL;
    int rc = !ra || !rd || !rs || (g->n_sizes && !sizes) ? -1 : 0;
    if (rc == 0 && (world_input_time(s, g->line, "jobs", "submit", g->submit_s, err, errlen) < 0 ||
                    world_input_time(s, g->line, "jobs", "duration", g->duration_s, err, errlen) < 0 ||
                    world_input_time(s, g->line, "jobs", "timeout", g->timeout_s, err, errlen) < 0 ||
                    (g->rate_per_s > 0 && input_rate(s, g->line, "jobs", g->rate_per_s, err, errlen) < 0)))
        rc = -2;
    double t = g->submit_s;
    int qi = sched_queue_of(w->q, g->queue);
    for (int k = 0; k < g->count && rc == 0; k++) {
        int gpus = sizes ? g->sizes[rng_discrete_draw(rs, sizes)] : g->gpus;
        job *j = add_batch_job(w, gpus, g->queue, qi, g->priority, g->timeout_s, g->line);
        if (!j || !(j->name = numbered_name(w, g->name, k))) {
            rc = -1;
            break;
        }
        if (!strcmp(g->arrivals, "poisson")) t += rng_exponential(ra, 1.0 / g->rate_per_s);
        else if (g->rate_per_s > 0) t = g->submit_s + k / g->rate_per_s;
        j->submit_s = t;
        if (!strcmp(g->duration_distribution, "exponential"))
            j->duration_s = rng_exponential(rd, g->duration_s);
        else if (!strcmp(g->duration_distribution, "lognormal"))
            j->duration_s = rng_lognormal_mean_cv(rd, g->duration_s, 1.0);
        else
            j->duration_s = g->duration_s;
    }
    rng_free(ra);
    rng_free(rd);
    rng_free(rs);
    rng_discrete_free(sizes);
    return rc;
}


/* The training jobs, in scenario order. 0, or -2 with err set. */
static int add_training_jobs(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    for (int i = 0; i < s->n_training; i++) {
        job *j = &w->jobs[w->n_jobs];
        fresh_job(w, j);
        j->tr = &w->train[i];
        j->tr->perf = &w->perf[i];
        if (build_training(w, &s->training[i], j, err, errlen) < 0) {
            free(j->tr->ckpt_note);     /* not yet counted in n_jobs: build_free misses it */
            j->tr->ckpt_note = NULL;
            return -2;
        }
        note_size(w, j);
        w->n_jobs++;
    }
    return 0;
}

int build_jobs(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    long long n = (long long)s->n_training + s->n_trace_jobs;
    for (int i = 0; i < s->n_jobs; i++) n += s->jobs[i].count;
    if (n >= INT_MAX) {
        errmsg_set(err, errlen, "%s:0: %lld jobs; at most %d", s->file, n, INT_MAX - 1);
        return -2;
    }
    w->jobs = calloc((size_t)n + 1, sizeof *w->jobs);
    w->active = calloc((size_t)n / 64 + 1, sizeof *w->active);
    w->perf = calloc((size_t)s->n_training + 1, sizeof *w->perf);
    w->train = calloc((size_t)s->n_training + 1, sizeof *w->train);
    if (!w->jobs || !w->active || !w->perf || !w->train) return -1;
    int rc = add_training_jobs(w, err, errlen);
    /* Generic batch jobs: arrivals and durations from their own streams;
     * the trace's batch jobs where its <trace> stands among the groups. */
    for (int i = 0; i <= s->n_jobs && rc == 0; i++) {
        if (i == s->trace_after && add_trace_jobs(w) < 0) return -1;
        if (i < s->n_jobs) rc = add_group_jobs(w, i, err, errlen);
    }
    return rc;
}

/* Job j fits in its node type (warm spares held back). 0, or -1 with err set. */
static int check_size(const world *w, const job *j, char *err, size_t errlen) {
    const scenario *s = w->s;
    int capacity = cluster_pool_capacity(w->c, j->pool);
    int spare_gpus = j->pool == 0 ? s->spares_warm * cluster_pool_spec(w->c, 0)->gpus : 0;
    if (j->gpus <= capacity - spare_gpus) return 0;
    if (!err) return -1;
    errmsg_set(err, errlen, "%s:%d: job %s needs %d GPUs, the cluster has %d of its node type%s%s", s->file, j->line,
               j->name, j->gpus, capacity - spare_gpus, spare_gpus ? " once its warm spares are held back" : "",
               w->cloud_pool == j->pool ? " (cloud nodes included)" : "");
    return -1;
}

/* The first job bigger than its node type is noted as the jobs are made
 * (in index order, with what check_size reads fixed by then: the job's
 * GPUs and pool, the cluster) and reported by build_submit where its
 * pass over every job reported it before. */
static void note_size(world *w, const job *j) {
    if (!w->too_big && check_size(w, j, NULL, 0) < 0) w->too_big = j->index + 1;
}

/* How many jobs ahead the submissions' pass asks for the job's fields
 * it reads (submit time; kind, trace row): the job array (208 bytes a
 * job, 20 MB for the 10K-GPU year) was last written as the jobs were
 * made, and each job's two lines are otherwise cache misses waited for
 * one after the other. */
#define SUBMIT_AHEAD 16

static void prefetch_job(const job *j) {
    __builtin_prefetch(&j->submit_s);
    __builtin_prefetch(&j->trace_row);
}

/* Each job enters the queue at its submit time (a job submitted before
 * t = 0 at t = 0, keeping its submit time for its place in the queue);
 * the snapshot's running jobs start at t = 0 instead, and held jobs (and
 * those waiting for one) never do: the run does not wait for them. */
int build_submit(world *w, char *err, size_t errlen) {
    const scenario *s = w->s;
    int never = 0;
    if (jobtrace_reported(s)) {      /* how a public job trace was read (scenarios/jobtrace.h) */
        char said[256];
        jobtrace_describe(s, said, sizeof said);
        world_event(w, "trace", "trace_read", "%s", said);
    }
    if (w->too_big && check_size(w, &w->jobs[w->too_big - 1], err, errlen) < 0) return -2;
    int rc = snapshot_build(w, err, errlen);
    if (rc < 0) return rc;
    if (engine_reserve(w->e, (size_t)w->n_jobs) < 0) return -1;     /* the submissions, at once */
    for (int i = 0; i < w->n_jobs; i++) {
        job *j = &w->jobs[i];
        if (i + SUBMIT_AHEAD < w->n_jobs) prefetch_job(j + SUBMIT_AHEAD);
        int row = w->trace_plain ? -1 : j->trace_row;    /* a plain trace's rows are all submitted */
        if (j->kind == JOB_TRAINING) j->tr->m_progress = metrics_register(w->bus, j->name, "progress");
        int held = row >= 0 && snapshot_never_eligible(w, j);
        never += held;
        if (row >= 0 && (s->trace_jobs[row].state != SC_JOB_PENDING || held)) continue;
        double at = j->submit_s > 0 ? j->submit_s : 0;
        if (!engine_schedule(w->e, sim_from_s(at), job_on_submit, j)) return -1;
    }
    w->unfinished = w->n_jobs - never;
    return 0;
}

size_t build_names_bytes(const world *w) { return chunks_bytes(w->names); }

void build_free(world *w) {
    for (int i = 0; i < w->n_jobs; i++)
        if (w->jobs[i].tr) free(w->jobs[i].tr->ckpt_note);
    free(w->jobs);
    free(w->active);
    free(w->train);
    free(w->perf);
    chunks_free(&w->names);
    chunks_free(&w->node_arrays);
}
