/*
 * world_int: the world's private state, shared by the files that make it up
 * (never included outside sim/world*.c).
 *
 *   world.c         new, free, run, the dispatch pass, the scheduler's
 *                   callbacks, the hooks below, closing the books
 *   world_build.c   the jobs built from the scenario (training plans,
 *                   checkpoints, <jobs> groups, the trace)
 *   world_snapshot.c the cluster as a live one stood at t = 0: nodes out of
 *                   service, jobs already running (issue 22)
 *   world_cloud.c   cloud autoscaling: renting and releasing nodes
 *   world_job.c     the job state machine: start, phases, checkpoints,
 *                   interruption, elastic shrink and grow, finish
 *   world_hold.c    GPUs held for inference services (the serving_host)
 *   world_repair.c  failure processes, detection, repair, lemon nodes,
 *                   injected failures and drains
 *   world_core.c    the helpers all of them use: events, GPU states, a
 *                   pool's fabric, scheduler ids' names, input times
 *   world_view.c    read-only views for reports and the dashboard
 *
 * The files call each other in this order only, each one the files below
 * it (world_view.c stands above them all: it reads, and nothing calls it):
 *
 *   world.c > world_build.c > world_snapshot.c > world_cloud.c > world_job.c, world_hold.c
 *           > world_repair.c > world_core.c
 *
 * A call up the order goes through a pointer that world.c sets: the
 * dispatch pass (w->dispatch; w->submit, a submission and its pass) and
 * what runs on a node (w->on_node), as failures reaches the repair file
 * through its failure_fn.
 *
 * Per node the world keeps one node_rec (w->node[0 .. nodes-1]); the
 * cluster keeps the node's service state and free GPUs.
 */
#ifndef CT_WORLD_INT_H
#define CT_WORLD_INT_H

#include <stdarg.h>

#include "models/training.h"
#include "scenarios/scenario.h"
#include "sim/benchset.h"
#include "sim/cluster.h"
#include "sim/engine.h"
#include "sim/failures.h"
#include "sim/metrics.h"
#include "sim/rng.h"
#include "sim/sched.h"
#include "sim/serving.h"
#include "sim/world_types.h"

#define REPORT_S 3600.0            /* a running job reports progress hourly */

typedef enum phase {
    PH_QUEUED, PH_RUNNING, PH_CHECKPOINT, PH_DOWN, PH_WAITING, PH_RESTART, PH_DONE
} phase;

/* GPU states for utilisation time series (CONTRACT: by state). */
enum { GS_TRAINING, GS_CHECKPOINT, GS_RESTARTING, GS_BATCH, GS_SERVING, GS_COUNT };

/* A training job's own state and the training half of its outcome (steps,
 * checkpoints, where its time went): one per training job (w->train[k]),
 * reached from its core through job.tr. Batch jobs, nearly all the jobs of
 * a trace, have none. */
typedef struct job_train {
    const sc_training *t;
    train_result *perf;            /* the world's perf[] entry */
    double step_s;                 /* current step time (grows when a job shrinks) */
    double progress;               /* steps done as of run_since */
    sim_time run_since;
    double durable;                /* steps saved by the last completed checkpoint */
    double inflight;               /* steps an async write in flight will save; -1 none */
    event_id ev_write;
    double ckpt_every;             /* steps between checkpoints; 0 = none */
    double next_ckpt;              /* progress at which the next checkpoint is due */
    double stall_s, background_s, load_s;
    char *ckpt_note;               /* said at each checkpoint_start (NULL none): a streamed gather; owned */
    double fail_progress;          /* progress when the current interruption hit */
    int planned;                   /* the current interruption was planned (health check) */
    metric_id m_progress;
    /* job_result's training fields, as world_job gives them */
    int64_t steps_total, steps_done;
    double tokens_done;
    int planned_interruptions, shrinks, grows, leaf_groups, waited_for_nodes;
    int checkpoints, checkpoints_skipped;
    double checkpoint_size_bytes, checkpoint_write_s, checkpoint_stall_s, checkpoint_interval_s;
    job_time time;
} job_train;

/* A job's core: what the scheduler's callbacks and the state machine touch
 * for every job, and the fields of job_result every job has (world_job
 * assembles the record from it and job.tr). Issue 23 asks for at most 256
 * bytes (docs/performance.md, "The job record"); test_world checks it. A
 * job's texts are pointers into tables shared by all jobs: the scenario's
 * (training names, queue names, the trace's name pool) or the world's
 * chunks of generated names ("group-17"). */
typedef struct job {
    world *w;
    const char *name;              /* job_result.name */
    const char *queue_name;        /* job_result.queue: owned by the scenario */
    job_train *tr;                 /* a training job's side record; NULL for a batch job */
    int *nodes;                    /* nodes held (-1: a lost node not yet replaced); &node1 for one node */
    sim_time ph_since;
    event_id ev_phase;             /* the phase's pending event */
    event_id ev_timeout;
    double submit_s, start_s, end_s, queue_wait_s;   /* job_result's; -1 = not yet */
    double duration_s;             /* batch */
    double timeout_s;              /* per start; 0 = none */
    double run_s;                  /* time spent running (kept + redone) */
    double gpu_s, held_s;          /* GPU-seconds held, and time holding GPUs */
    int index;
    int pool;
    int gpus;                      /* job_result.gpus: held while running (an elastic job's shrink lowers it) */
    int n_nodes;
    int node1;                     /* nodes[] of a one-node job: no allocation of its own */
    int gpus_per_node;             /* GPUs used on each node */
    int n_held;                    /* entries of nodes[] >= 0: a phase change is O(1), not O(nodes) */
    int lost_nodes;                /* nodes to replace before a restart */
    int queue;                     /* scheduler queue */
    int priority;
    int line;                      /* of its element, for messages */
    int after;                     /* a job it waits for (trace after); -1 none */
    int dep_head, dep_next;        /* jobs waiting for this one: a list through dep_next; -1 ends it */
    int trace_row;                 /* job_result.trace_row: its row of scenario.trace_jobs; -1 none */
    int preemptions, interruptions;   /* job_result's */
    unsigned char kind;            /* job_kind */
    unsigned char state;           /* job_state */
    unsigned char ph;              /* phase */
    unsigned char started_once;    /* has held GPUs (a later queue stretch is waiting) */
} job;

/* What the world keeps about one node, in two records. node_use: what a
 * job's start and end touch on each of its nodes (~230 million times in
 * the 1M-GPU year, the nodes spread over the cluster: 16 bytes, four to a
 * cache line, so that the 128,200 nodes' records take 2 MB, not 8).
 * node_rec: the rest; &w->node[i] is the argument of the node's repair
 * event and of its cloud release check. */
typedef struct node_use {
    int job;                       /* a job running on it, -1 none */
    int drain;                     /* draining (<unavailable state="draining">): 1 + its index in
                                      scenario.unavailable; drained when its last job ends. 0 none */
    short jobs;                    /* how many jobs use it */
    short replicas;                /* service replicas placed on it */
    short latent;                  /* 1 + failure kind of a fault nobody saw on the idle node; 0 none */
} node_use;

typedef struct node_rec {
    world *w;
    int index;
    short replaced;                /* the pending repair is a cold replacement */
    event_id repair_ev;            /* the pending repair; 0 none */
    double idle_since_s;           /* when it last became idle (cloud release) */
    double lemon_since_s;          /* start of its failure-count window */
    int lemon_count;               /* failures in that window */
} node_rec;

/* A service replica's GPUs (world_hold.c). */
enum { H_FREE, H_QUEUED, H_HELD };
typedef struct holding {
    int *nodes;
    int n, gpus_each, gpus;
    int state;                     /* H_FREE, H_QUEUED, H_HELD */
    int svc, tag;                  /* the service and its replica number */
    double since_s;                /* submit time of the current request */
} holding;
typedef struct svc_host { world *w; int index; int pool; int queue; serving *sv; } svc_host;

/* How the files below world.c reach the files above them: through
 * pointers that world.c sets when it builds the world, never by a direct
 * call (failures reaches the repair file the same way, by its failure_fn). */
typedef struct node_hooks {
    /* A fault (planned: found by a health check, or a drain) on the node:
     * jobs and replicas there are interrupted (the repair file's call). */
    void (*hit)(world *w, int node, const failure_proc *p, int planned);
    /* The node is back in service (repaired: by a repair, else undrained):
     * waiting jobs restart, shrunk jobs grow back (repaired only), and the
     * scheduler runs (the repair file's call). */
    void (*back)(world *w, int node, int repaired);
    /* Nothing runs on the rented node any more: the cloud file's release
     * check (the job file's call). */
    void (*idle)(world *w, int node);
} node_hooks;

struct world {
    const scenario *s;
    engine *e;
    const sim_time *clock;         /* engine_clock(e): now_of() without a call */
    metric_bus *bus;
    cluster *c;
    failures *f;
    sched *q;                      /* queues, policies, backfill, preemption */
    node_rec *node;                /* one per node */
    node_use *use;                 /* one per node: jobs and replicas on it */
    node_hooks on_node;
    void (*dispatch)(world *w);    /* world.c's dispatch pass (the job, hold and cloud files' call) */
    void (*submit)(world *w, const sched_job *v);   /* world.c's: sched_submit, then the pass */
    rng *r_health;                 /* health-check coverage draws */
    /* jobs */
    job *jobs;                     /* cores, one per job */
    int n_jobs;
    uint64_t *active;              /* bit per job: in a phase other than PH_QUEUED and PH_DONE (set_phase
                                      keeps it): the jobs the run's end closes, found without reading
                                      every job (20 MB of cores in the 10K-GPU year) */
    job_train *train;              /* one per training job (job.tr points here) */
    struct world_flow *flow;       /* <network model="flow">: the shared fabric (world_flow.c); NULL otherwise */
    train_result *perf;            /* one per training job (job_train.perf points here) */
    struct name_chunk *names;      /* generated job names ("group-17"), freed with the world */
    struct name_chunk *node_arrays;   /* multi-node jobs' nodes[], carved the same way */
    int unfinished;
    int n_waiting;                 /* jobs in PH_WAITING (for nodes after a failure) */
    int n_shrunk;                  /* elastic jobs that ever shrank (repairs look for growth) */
    int in_dispatch, redispatch;   /* dispatch is not re-entered from its callbacks */
    /* GPU states and work lost */
    int gpus_state[GS_COUNT];
    double gpu_state_s[GS_COUNT];
    sim_time state_since;
    double redone_gpu_s;           /* training GPU-seconds of steps lost and done again */
    double batch_lost_gpu_s;       /* batch GPU-seconds of runs cut short */
    double frag_gpu_s;             /* integral of fragmented free GPUs */
    int frag_now;
    sim_time frag_since;
    metric_id m_state[GS_COUNT], m_queue, m_failed, m_frag;
    /* failures */
    int n_fail_total;
    int *fail_by_proc;
    int drained;
    int injected;                  /* failures injected from the dashboard */
    int unavailable_at_start;      /* nodes out of service at t = 0 (<unavailable>) */
    int draining_at_start;         /* nodes draining at t = 0 (<unavailable state="draining">) */
    int trace_first;               /* w->jobs index of the trace's first batch job */
    int trace_running;             /* trace rows running at t = 0 (a live cluster's snapshot) */
    int trace_plain;               /* every trace row pending and waiting for none: a submission
                                      need not read its row again (build_submit) */
    /* cloud autoscaling */
    int cloud_pool;                /* pool of the cloud node type, -1 none */
    int where_kept;                /* sched_where_kept() when built: 0, a job's nodes need not be told one by one */
    int too_big;                   /* the first job bigger than its node type, as index + 1 (0: none): build_submit's error */
    int any_latent;                /* a node ever had a hidden fault (node_use.latent): a start looks for one */
    int cloud_pending;             /* nodes being provisioned */
    event_id ev_scale;             /* pending scale-up check */
    double cloud_node_s;           /* rented node-seconds */
    sim_time cloud_since;
    /* inference services (sim/serving) and the GPUs their replicas hold */
    svc_host *svc;
    int n_svc;
    holding *hold;                 /* replicas' GPU requests (scheduler ids n_jobs + index) */
    int n_hold;
    size_t cap_hold;
    int acquiring;                 /* holding being asked for in svc_acquire, -1 none */
    benchset *bench;               /* the scenario's microbenchmarks (hardware mode) */
    int closed;                    /* books closed (world_finish) */
};

static inline sim_time now_of(const world *w) { return *w->clock; }
static inline double now_s(const world *w) { return sim_to_s(*w->clock); }
/* A scheduler id above the jobs is a service replica's holding. */
static inline int is_hold(const world *w, int id) { return id >= w->n_jobs; }

/* ---- world_core.c ---- */
/* An event on the metric bus at the current time; fmt is a string literal
 * (a sink may keep it and format the text later: metrics_eventv). */
void world_event(world *w, const char *entity, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void world_add_state(world *w, int gs, int gpus);      /* gpus more (or fewer) in state gs */
void world_integrate_states(world *w);                  /* GPU-seconds by state up to now */
int world_fabric(const world *w, int pool, fabric *f);   /* 0, or -1: no GPU or NIC */
const char *world_entry_name(const world *w, int id);    /* a job's or a service's name */
/* An input time that must be a clock value (engine_check_s). 0, or -1
 * with err set naming the element. */
int world_input_time(const scenario *s, int line, const char *elem, const char *attr, double t_s, char *err,
                     size_t errlen);

/* ---- world_repair.c ---- */
/* The <unavailable> nodes out of service at t = 0, back after their repair
 * (or never: said once in the events). */
void repair_unavailable(world *w);
/* t = 0, once the running jobs of named nodes hold them: the draining
 * nodes close to new jobs (an empty one is drained at once). */
void repair_begin_draining(world *w);
/* A job or replica left node n: a draining node left empty is drained. */
void repair_node_left(world *w, int n);
int repair_build_failures(world *w, char *err, size_t errlen);   /* 0; -1 out of memory; -2 err set */
void repair_node_down(world *w, int node, const failure_proc *p);
int repair_inject(world *w, int node);                  /* world_inject_failure */
int repair_drain(world *w, int node, int on);           /* world_drain */

/* ---- world_job.c ---- */
void job_on_submit(engine *e, void *arg);               /* the job enters the scheduler's queue */
void job_start(job *j);                                 /* the scheduler started it */
void job_preempt(job *j, const char *by);               /* the scheduler evicts it */
sched_job job_sched_view(const job *j);
void job_release_node(job *j, int i);
void job_hit_node(world *w, int node, const failure_proc *p, int planned);
void job_node_back(world *w, int repaired);             /* waiting jobs restart, shrunk ones grow */
double job_progress_now(const job *j);
void job_close(job *j);                                 /* account the current phase up to now */
/* A trace job running at t = 0 (a live cluster's snapshot): on its named
 * nodes (nodes != NULL) or placed as the scheduler places; started
 * elapsed_s ago. 0, or -1 when its GPUs are not free (nothing changed). */
int job_start_running(job *j, const int *nodes, double elapsed_s);

/* ---- world_hold.c ---- */
int hold_build_services(world *w, char *err, size_t errlen);   /* 0, or -1 with err set */
void hold_free(world *w);
void hold_start(world *w, int k);
void hold_lost(world *w, int k, const char *why);
sched_job hold_view(const world *w, int k);
void hold_hit_node(world *w, int node, const failure_proc *p);

/* ---- world_cloud.c ---- */
void cloud_autoscale(world *w);
void cloud_node_idle(world *w, int node);               /* a rented node has nothing on it now */

/* ---- world_snapshot.c ---- */
/* The cluster as it stood at t = 0 (issue 22): checks the running jobs'
 * named nodes, and queues the event at t = 0, ahead of every submission,
 * that takes the unavailable nodes out and starts the running jobs. 0;
 * -1 out of memory; -2 with err set. */
int snapshot_build(world *w, char *err, size_t errlen);
/* Whether trace job j never becomes eligible: held, or waiting (through
 * after) for a held job. */
int snapshot_never_eligible(const world *w, const job *j);

/* ---- world_build.c ---- */
/* The jobs of the scenario (training, <jobs> groups, the trace), queued for
 * submission once the metrics exist (build_submit). 0; -1 out of memory;
 * -2 with err set. */
int build_jobs(world *w, char *err, size_t errlen);
int build_submit(world *w, char *err, size_t errlen);
void build_free(world *w);
size_t build_names_bytes(const world *w);               /* the generated names' chunks */

/* world_flow.c: the fabric shared between training jobs (<network
 * model="flow">). world_flow_reprice puts every running training job's
 * traffic on it and calls apply(job, step_s) with each one's step time at
 * its share; nothing without the flow model. */
typedef void (*world_flow_apply)(job *j, double step_s);
void world_flow_reprice(world *w, world_flow_apply apply);
void world_flow_free(world *w);

#endif
