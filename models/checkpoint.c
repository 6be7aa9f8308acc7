/*
 * checkpoint: size, write/load time and interval of training checkpoints.
 *
 * Load: evaluated once per job (and again when a job is resized); a few
 * hundred floating-point operations, no allocation.
 *
 * The write model, per save:
 *
 *   GPU ──PCIe──► host DRAM ──storage NIC──► storage clients ──► system
 *   per GPU        host-mem-bw/2             per-client ceiling   aggregate
 *                  (in and out)              + per-request latency
 *
 * the busiest writing node moves node_bytes at the least of its bounds,
 * the system moves written_bytes at its aggregate, each process pays the
 * latency of its requests over those it keeps in flight; the slowest of
 * the three sets the time (they overlap: a save is a stream, not phases).
 */
#include "models/checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/transformer.h"

/* ---- Names ------------------------------------------------------------ */

static const char *const optimizer_names[] = { "adam", "sgd", "adafactor", "none" };
static const char *const layout_names[] = { "sharded", "fully-parallel", "rank0" };
static const char *const mode_names[] = { "sync", "async" };

static int find(const char *const *names, int n, const char *z) {
    for (int i = 0; z && i < n; i++)
        if (strcmp(z, names[i]) == 0) return i;
    return -1;
}

int ckpt_optimizer_parse(const char *z) { return find(optimizer_names, 4, z); }
const char *ckpt_optimizer_name(ckpt_optimizer o) { return (unsigned)o < 4 ? optimizer_names[o] : "?"; }
int ckpt_layout_parse(const char *z) { return find(layout_names, 3, z); }
const char *ckpt_layout_name(ckpt_layout l) { return (unsigned)l < 3 ? layout_names[l] : "?"; }
int ckpt_mode_parse(const char *z) { return find(mode_names, 2, z); }
const char *ckpt_mode_name(ckpt_mode m) { return (unsigned)m < 2 ? mode_names[m] : "?"; }

/* ---- Size ------------------------------------------------------------- */

/* fp32 master weights and moments: 4 bytes per element. */
#define FP32_BYTES 4.0

void ckpt_contents_default(ckpt_contents *c, precision compute) {
    memset(c, 0, sizeof *c);
    switch (compute) {
    case PREC_FP64:
    case PREC_FP32:
    case PREC_TF32:
        c->weights_precision = PREC_FP32;
        c->master_weights = 0;
        break;
    case PREC_FP16:
        c->weights_precision = PREC_FP16;
        c->master_weights = 1;
        break;
    default:      /* bf16; fp8 and int training keep bf16 weights and fp32 master state */
        c->weights_precision = PREC_BF16;
        c->master_weights = 1;
        break;
    }
    c->save_weights = 1;
    c->optimizer = CKPT_OPT_ADAM;
    c->state_bytes_per_param = -1;
    c->loader_bytes_per_rank = CKPT_LOADER_BYTES_PER_RANK;
}

void ckpt_choice_default(ckpt_choice *ch) {
    ch->weights = ch->master_weights = ch->optimizer = CKPT_CHOICE_DEFAULT;
}

int ckpt_weights_parse(const char *z) {
    if (z && strcmp(z, "none") == 0) return CKPT_WEIGHTS_NONE;
    int p = precision_parse(z);
    return p == PREC_BF16 || p == PREC_FP16 || p == PREC_FP32 ? p : -1;
}

static int choice_fail(char *why, size_t len, const char *msg) {
    if (why && len) snprintf(why, len, "%s", msg);
    return -1;
}

int ckpt_contents_choose(ckpt_contents *c, precision compute, const ckpt_choice *ch, char *why,
                         size_t len) {
    if (!c) return choice_fail(why, len, "no contents");
    ckpt_contents k;
    ckpt_contents_default(&k, compute);
    if (ch) {
        if (ch->master_weights != CKPT_CHOICE_DEFAULT) k.master_weights = ch->master_weights ? 1 : 0;
        if (ch->optimizer != CKPT_CHOICE_DEFAULT) {
            if (ch->optimizer < CKPT_OPT_ADAM || ch->optimizer > CKPT_OPT_NONE)
                return choice_fail(why, len, "unknown optimizer");
            k.optimizer = (ckpt_optimizer)ch->optimizer;
        }
        if (ch->weights == CKPT_WEIGHTS_NONE) {
            if (!k.master_weights)
                return choice_fail(why, len, "weights=\"none\" without an fp32 master copy leaves the "
                                   "checkpoint no weights; give master-weights=\"true\" or a weights precision");
            k.save_weights = 0;
        } else if (ch->weights != CKPT_CHOICE_DEFAULT) {
            if (ch->weights != PREC_BF16 && ch->weights != PREC_FP16 && ch->weights != PREC_FP32)
                return choice_fail(why, len, "checkpoint weights must be bf16, fp16, fp32 or none");
            k.weights_precision = (precision)ch->weights;
            k.save_weights = 1;
        }
    }
    *c = k;
    return 0;
}

/* Moments per parameter by optimizer kind (Adafactor's factored state is
 * not per parameter: see adafactor_elems). */
static double moments_bytes_per_param(ckpt_optimizer o) {
    switch (o) {
    case CKPT_OPT_ADAM: return 2 * FP32_BYTES;     /* m and v */
    case CKPT_OPT_SGD: return FP32_BYTES;          /* momentum buffer */
    default: return 0;
    }
}

/* Adafactor (Shazeer & Stern 2018, default β1 = 0: no first moment) keeps
 * for each r×c matrix a row and a column accumulator (r + c elements) and
 * a full accumulator for vectors (norm weights). */
static double adafactor_elems(const llm_spec *m) {
    tf_dims d;
    tf_dims_of(m, &d);
    double experts = m->experts > 1 ? m->experts : 1;
    double attn = (d.h + d.q_dim) + 2 * (d.h + d.kv_dim) + (d.q_dim + d.h);   /* Q, K, V, O */
    double ffn = experts * ((d.gated ? 2 : 1) * (d.h + d.f) + (d.f + d.h));
    double layer = attn + ffn + 2 * d.h;                                       /* two norms */
    double emb = d.vocab + d.h;
    return d.layers * layer + emb + (m->tied_embeddings ? 0 : emb) + d.h;
}

static int size_with(double params, double factored_elems, const ckpt_contents *c, int ranks,
                     ckpt_size *z) {
    if (!c || !z || !(params > 0) || !isfinite(params) || ranks < 1) return -1;
    ckpt_size s;
    memset(&s, 0, sizeof s);
    s.params = params;
    s.ranks = ranks;
    if (c->master_weights) {
        s.master_bytes = FP32_BYTES * params;
        s.weights_bytes = c->save_weights ? precision_bytes(c->weights_precision) * params : 0;
    } else {
        /* The weights are the master copy: always saved. */
        s.weights_bytes = precision_bytes(c->weights_precision) * params;
    }
    if (c->state_bytes_per_param >= 0)
        s.optimizer_bytes = c->state_bytes_per_param * params;
    else if (c->optimizer == CKPT_OPT_ADAFACTOR)
        s.optimizer_bytes = FP32_BYTES * factored_elems;
    else
        s.optimizer_bytes = moments_bytes_per_param(c->optimizer) * params;
    s.loader_bytes = (c->loader_bytes_per_rank > 0 ? c->loader_bytes_per_rank : 0) * ranks;
    s.model_bytes = s.weights_bytes + s.master_bytes + s.optimizer_bytes;
    s.total_bytes = s.model_bytes + s.loader_bytes;
    s.bytes_per_param = s.model_bytes / params;
    *z = s;
    return 0;
}

int ckpt_size_params(double params, const ckpt_contents *c, int ranks, ckpt_size *z) {
    return size_with(params, 0, c, ranks, z);
}

int ckpt_size_of(const llm_spec *m, const ckpt_contents *c, int ranks, ckpt_size *z) {
    if (!m || m->layers < 1 || m->hidden < 1) return -1;
    ckpt_contents def;
    if (!c) {
        ckpt_contents_default(&def, PREC_BF16);
        c = &def;
    }
    tf_param_counts pc;
    tf_param_counts_of(m, &pc);
    return size_with(pc.total, adafactor_elems(m), c, ranks, z);
}

int ckpt_job_size(const llm_spec *m, const train_plan *p, ckpt_size *z) {
    return ckpt_job_size_with(m, p, NULL, z);
}

int ckpt_job_size_with(const llm_spec *m, const train_plan *p, const ckpt_choice *ch, ckpt_size *z) {
    if (!p || p->tp < 1 || p->pp < 1 || p->dp < 1 || p->cp < 0) return -1;
    ckpt_contents c;
    if (ckpt_contents_choose(&c, p->precision, ch, NULL, 0) < 0) return -1;
    int cp = p->cp > 0 ? p->cp : 1;
    return ckpt_size_of(m, &c, p->tp * p->pp * p->dp * cp, z);
}

/* ---- I/O -------------------------------------------------------------- */

void ckpt_io_params_default(ckpt_io_params *q) {
    /* The fraction of line rate large RDMA/TCP transfers reach: the
     * catalog's compute-NIC default (nic_spec eff-bw 0.92). */
    q->storage_nic_eff = 0.92;
    /* Pinned snapshot buffers may take half of host DRAM; the rest holds
     * the data loader's workers, the page cache and the OS (engineering
     * estimate). */
    q->host_mem_fraction = 0.5;
    /* torch DCP and Megatron-Core dist-ckpt write one data file per rank
     * (per writer thread; one thread by default). */
    q->files_per_rank = 1;
    /* Save planning (DCP gathers every rank's plan to the coordinator and
     * scatters the global plan back) and the barriers around a save: under
     * a second at thousands of ranks (engineering estimate). */
    q->setup_s = 1.0;
    /* After the last rank finishes, the coordinator writes the metadata
     * index and the "latest" marker: two dependent requests. */
    q->commit_requests = 2;
}

static double min2(double a, double b) { return a < b ? a : b; }
static double max2(double a, double b) { return a > b ? a : b; }
static double pos_or_inf(double x) { return x > 0 ? x : INFINITY; }

double ckpt_client_bw(const storage_spec *st, double processes) {
    if (!st) return INFINITY;
    double bw = pos_or_inf(st->per_client_bw_bytes_per_s);
    if (st->per_connection_bw_bytes_per_s > 0) {
        double conns = (st->max_requests > 0 ? st->max_requests : 1) * (processes >= 1 ? processes : 1);
        bw = min2(bw, conns * st->per_connection_bw_bytes_per_s);
    }
    return bw;
}

/* The path of one storage kind, resolved. */
typedef struct path {
    const storage_spec *st;
    double agg_bw;          /* system aggregate (write) */
    double nic_bw;          /* node's storage-network bandwidth, achieved */
    int shared_nic;         /* 1: no storage network; the compute NICs carry it */
    double pcie_bw;         /* per GPU */
    double host_mem_bw;
    double read_ratio;
    double latency_s;
    double part_bytes;      /* 0: one request per file */
    double inflight;        /* requests per process in flight */
} path;

static int path_init(path *p, const ckpt_job *j, const ckpt_io_params *q) {
    const node_spec *nd = j->fabric->node;
    const nic_spec *nic = j->fabric->nic;
    const storage_spec *st = j->storage;
    p->agg_bw = j->storage_bw_bytes_per_s > 0 ? j->storage_bw_bytes_per_s : st->bw_bytes_per_s;
    if (!(p->agg_bw > 0)) return -1;
    p->st = st;
    p->shared_nic = !(nd->storage_nic_bw_bytes_per_s > 0);
    if (p->shared_nic) {
        double eff = nic->eff_bw > 0 ? nic->eff_bw : q->storage_nic_eff;
        p->nic_bw = pos_or_inf(nd->nics * nic->bw_bytes_per_s * eff);
    } else {
        p->nic_bw = nd->storage_nic_bw_bytes_per_s * q->storage_nic_eff;
    }
    p->pcie_bw = pos_or_inf(nd->pcie_bw_bytes_per_s);
    p->host_mem_bw = pos_or_inf(nd->host_mem_bw_bytes_per_s);
    p->read_ratio = st->read_bw_ratio > 0 ? st->read_bw_ratio : 1;
    p->latency_s = st->latency_s > 0 ? st->latency_s : 0;
    p->part_bytes = st->part_size_bytes > 0 ? st->part_size_bytes : 0;
    p->inflight = st->max_requests > 0 ? st->max_requests : 1;
    return 0;
}

/* Latency of one process's requests for `bytes` in `files` files: one
 * request to create each file, and for an object store one to start the
 * multipart upload, one per part (parts grow past the 10,000-part limit)
 * and one to complete it; `inflight` at a time, plus the first round trip. */
static double request_time(const path *p, double bytes, double files) {
    if (!(bytes > 0) || !(p->latency_s > 0)) return 0;
    if (!(files >= 1)) files = 1;
    double reqs = files;
    if (p->part_bytes > 0) {
        double per_file = bytes / files;
        double part = max2(p->part_bytes, per_file / CKPT_OBJECT_MAX_PARTS);
        reqs += files * (ceil(per_file / part) + 1);
    }
    return p->latency_s + reqs * p->latency_s / p->inflight;
}

/* Slowest of the three bounds, and which one it is. */
static double bounded(double t_node, const char *node_bound, double t_agg, double t_lat,
                      const char **bound) {
    double t = t_node;
    *bound = node_bound;
    if (t_agg > t) { t = t_agg; *bound = "aggregate"; }
    if (t_lat > t) { t = t_lat; *bound = "latency"; }
    return t;
}

/* The node bandwidth for k GPUs' data (written by k processes, one per
 * GPU) crossing host memory `crossings` times, and its limiting stage. */
static double node_bw(const path *p, double k, int crossings, int read, const char **bound) {
    double client = ckpt_client_bw(p->st, k);
    if (read) client *= p->read_ratio;
    double bw = p->nic_bw;
    *bound = "storage-nic";
    if (client < bw) { bw = client; *bound = "client"; }
    if (k * p->pcie_bw < bw) { bw = k * p->pcie_bw; *bound = "pcie"; }
    if (crossings > 0 && p->host_mem_bw / crossings < bw) { bw = p->host_mem_bw / crossings; *bound = "host-memory"; }
    return bw;
}

/* Slowdown of the job while a background write moves `bytes` from one node
 * in `t` seconds over NICs it shares with training: the network-bound part
 * of a step stretches by B/(B − b), at most 2x (fair sharing gives training
 * at least half of the link). */
static double shared_slowdown(const ckpt_job *j, const path *p, double bytes, double t) {
    if (!p->shared_nic || !(t > 0) || !(j->net_busy_fraction > 0)) return 0;
    double frac = bytes / t / p->nic_bw;
    double stretch = frac < 0.5 ? frac / (1 - frac) : 1;
    return j->net_busy_fraction * stretch;
}

/* The job's shape as the I/O model sees it: ranks, nodes, and what each
 * writes. */
typedef struct job_shape {
    double tp, pp;
    double R;               /* ranks */
    double g;               /* ranks holding one copy of the model */
    double reps;            /* data-parallel replicas */
    double gpn;             /* GPUs per node */
    double N;               /* nodes of the job */
    double per_node;        /* ranks on a full node */
    double lpr;             /* loader bytes per rank */
    double W, O;            /* weights; master copy and optimizer state */
    double total;           /* bytes of one checkpoint */
    double spread_nat;      /* split over all ranks by the sharding */
    double rep_nat;         /* replicated per replica by the sharding */
    double spread, rep;     /* the same under the layout written */
    double nw, rw;          /* replica 0's nodes, and its ranks per node */
    int has_spread, has_rep;
} job_shape;

static void shape_of(const ckpt_job *j, const ckpt_size *z, job_shape *s) {
    const train_plan *pl = j->plan;
    const int cp = pl->cp > 0 ? pl->cp : 1;
    s->tp = pl->tp;
    s->pp = pl->pp;
    s->R = s->tp * s->pp * pl->dp * cp;
    s->g = s->tp * s->pp;
    s->reps = (double)pl->dp * cp;
    s->gpn = j->fabric->node->gpus;
    s->N = ceil(s->R / s->gpn);
    s->per_node = min2(s->gpn, s->R);
    s->lpr = z->loader_bytes / z->ranks;
    s->W = z->weights_bytes;
    s->O = z->master_bytes + z->optimizer_bytes;
    s->total = z->model_bytes + s->lpr * s->R;

    /* What the sharding leaves split over all ranks vs replicated per
     * replica (written by replica 0 under the sharded layout). */
    double W = s->W, O = s->O;
    s->spread_nat = pl->sharding == SHARD_FSDP ? W + O : pl->sharding == SHARD_NONE ? 0 : O;
    s->rep_nat = W + O - s->spread_nat;
    s->spread = j->layout == CKPT_FULLY_PARALLEL ? W + O : s->spread_nat;
    s->rep = W + O - s->spread;

    /* Replica 0: its tp ranks of each pipeline stage sit on one node when
     * tp <= GPUs per node (Megatron's rank order tp-cp-dp-pp), else on
     * tp/gpn nodes. */
    s->nw = min2(s->N, s->pp * ceil(s->tp / s->gpn));
    s->rw = min2(s->gpn, ceil(s->g / s->nw));
    s->has_spread = s->spread > 0;
    s->has_rep = s->rep > 0;
}

/* Save under the sharded and fully-parallel layouts: every writer rank
 * writes its own files; sync stalls for the write, async for a snapshot
 * into host memory. */
static void parallel_write(const ckpt_job *j, const path *P, const ckpt_io_params *q, const job_shape *s,
                           ckpt_io *r) {
    const node_spec *nd = j->fabric->node;
    const char *nb;
    double gpu_bytes = s->spread / s->R + s->lpr + (s->has_rep ? s->rep / s->g : 0);
    double node_bytes = s->per_node * (s->spread / s->R + s->lpr) + (s->has_rep ? s->rep / s->nw : 0);
    double k = s->has_spread ? s->per_node : s->rw;       /* GPUs writing on the busiest node */
    double t_agg = s->total / P->agg_bw;
    double t_lat = request_time(P, gpu_bytes, q->files_per_rank);
    double commit = q->commit_requests * P->latency_s;
    r->node_bytes = node_bytes;
    r->d2h_s = gpu_bytes / P->pcie_bw;
    if (j->mode == CKPT_SYNC) {
        double bw = node_bw(P, k, 2, 0, &nb);
        double t = bounded(node_bytes / bw, nb, t_agg, t_lat, &r->bound);
        r->node_bw_bytes_per_s = bw;
        r->write_s = r->stall_s = q->setup_s + t + commit;
        r->host_fits = 1;
    } else {
        /* Snapshot: each GPU copies its shard to pinned host memory. */
        double snap = max2(r->d2h_s, node_bytes / P->host_mem_bw);
        double bw = node_bw(P, k, 1, 0, &nb);
        double t = bounded(node_bytes / bw, nb, t_agg, t_lat, &r->bound);
        r->node_bw_bytes_per_s = bw;
        r->stall_s = q->setup_s + snap;
        r->background_s = t + commit;
        r->write_s = r->stall_s + r->background_s;
        r->slowdown = shared_slowdown(j, P, node_bytes, t);
        r->host_fits = !(nd->host_mem_bytes > 0) || node_bytes <= q->host_mem_fraction * nd->host_mem_bytes;
    }
}

/* Load under the sharded and fully-parallel layouts: every rank reads what
 * it holds; fully parallel then all-gathers the replicated part. */
static void parallel_load(const ckpt_job *j, const path *P, const ckpt_io_params *q, const job_shape *s,
                          ckpt_io *r) {
    const char *rb;
    double t_lat_read;
    if (j->layout == CKPT_SHARDED) {
        double rank_bytes = s->spread_nat / s->R + s->rep_nat / s->g + s->lpr;
        double node_read = s->per_node * rank_bytes;
        double bw = node_bw(P, s->per_node, 2, 1, &rb);
        t_lat_read = request_time(P, rank_bytes, q->files_per_rank);
        r->loaded_bytes = s->R * rank_bytes;
        r->load_s = q->setup_s + bounded(node_read / bw, rb, r->loaded_bytes / (P->agg_bw * P->read_ratio),
                                         t_lat_read, &rb);
        return;
    }
    /* Fully parallel: 1/R each, then an all-gather of the replicated
     * part inside each data-parallel group (ranks at stride tp). */
    double rank_bytes = (s->W + s->O) / s->R + s->lpr;
    double bw = node_bw(P, s->per_node, 2, 1, &rb);
    t_lat_read = request_time(P, rank_bytes, q->files_per_rank);
    r->loaded_bytes = s->total;
    r->load_s = q->setup_s + bounded(s->per_node * rank_bytes / bw, rb,
                                     s->total / (P->agg_bw * P->read_ratio), t_lat_read, &rb);
    if (s->rep_nat > 0 && s->reps > 1) {
        coll_group cg;
        double rpn = s->tp < s->gpn ? min2(s->reps, floor(s->gpn / s->tp)) : 1;
        if (rpn < 1) rpn = 1;
        cg.ranks = (int)s->reps;
        cg.ranks_per_node = (int)rpn;
        cg.concurrent_per_node = (int)max2(1, floor(s->per_node / rpn));
        coll_result cr;
        if (coll_time(j->fabric, COLL_ALLGATHER, s->rep_nat / s->g, &cg, COLL_AUTO, &cr) == 0)
            r->load_s += cr.time_s;
    }
}

/* rank0 save: gather everything into one GPU, through its NIC (or NVLink
 * on a one-node job) and its PCIe link to host memory, then one client.
 * Returns -1 when the network has no path for the gather. */
static int rank0_write(const ckpt_job *j, const path *P, const ckpt_io_params *q, const job_shape *s,
                       ckpt_io *r) {
    const node_spec *nd = j->fabric->node;
    const char *nb;
    double S = s->total;
    double d2h = S / P->pcie_bw;
    double net = 0;
    if (s->R > 1) {
        net = p2p_time_s(j->fabric, S, s->N == 1, 1);
        if (net < 0) return -1;
    }
    r->gather_s = max2(net, d2h);
    r->d2h_s = d2h;
    r->node_bytes = S;
    r->writer_ranks = 1;
    r->writer_nodes = 1;
    double bw = node_bw(P, 1, 1, 0, &nb);
    r->node_bw_bytes_per_s = bw;
    double t = bounded(S / bw, nb, S / P->agg_bw, request_time(P, S, q->files_per_rank), &r->bound);
    double commit = q->commit_requests * P->latency_s;
    r->host_budget_bytes = nd->host_mem_bytes > 0 ? q->host_mem_fraction * nd->host_mem_bytes : 0;
    r->host_fits = !(r->host_budget_bytes > 0) || S <= r->host_budget_bytes;
    if (j->streaming_gather) {
        /* Streaming: chunks of half the budget, double-buffered (one
         * arrives while the other is written): n chunks of g = G/n to
         * gather and w = T/n to write take g + (n-1)·max(g, w) + w =
         * max(G, T) + min(g, w). The gather ends when the last chunk is in:
         * with the buffer full it waits for the writer, so not before the
         * write has drained all but the budget, T·(S − B)/S. Unknown DRAM:
         * one chunk, no overlap. */
        double chunk = r->host_budget_bytes > 0 ? min2(S, r->host_budget_bytes / 2) : S;
        double n = chunk > 0 ? ceil(S / chunk) : 1;
        double pipe = max2(r->gather_s, t) + min2(r->gather_s, t) / n;
        double in = r->host_budget_bytes > 0 && S > r->host_budget_bytes
                        ? max2(r->gather_s, t * (S - r->host_budget_bytes) / S) : r->gather_s;
        r->stream_chunks = (int)n;
        if (j->mode == CKPT_SYNC) {
            r->write_s = r->stall_s = q->setup_s + pipe + commit;
        } else {
            r->stall_s = q->setup_s + in;
            r->background_s = pipe - in + commit;
            r->write_s = r->stall_s + r->background_s;
            r->slowdown = shared_slowdown(j, P, S, t);
        }
    } else if (j->mode == CKPT_SYNC) {
        r->write_s = r->stall_s = q->setup_s + r->gather_s + t + commit;
    } else {
        r->stall_s = q->setup_s + r->gather_s;
        r->background_s = t + commit;
        r->write_s = r->stall_s + r->background_s;
        r->slowdown = shared_slowdown(j, P, S, t);
    }
    return 0;
}

/* rank0 load: rank 0 reads it back through one client, then sends each
 * rank its part (a pipelined broadcast/scatter from rank 0: about S leaves
 * its GPU, as in the gather). */
static void rank0_load(const path *P, const ckpt_io_params *q, const job_shape *s, ckpt_io *r) {
    const char *rb;
    double S = s->total;
    double rbw = node_bw(P, 1, 1, 1, &rb);
    r->loaded_bytes = S;
    r->load_s = q->setup_s + bounded(S / rbw, rb, S / (P->agg_bw * P->read_ratio),
                                     request_time(P, S, q->files_per_rank), &rb) + r->gather_s;
}

int ckpt_io_time(const ckpt_job *j, const ckpt_size *z, const ckpt_io_params *q, ckpt_io *io) {
    if (!j || !z || !io || !j->plan || !j->fabric || !j->fabric->node || !j->fabric->nic || !j->storage)
        return -1;
    const train_plan *pl = j->plan;
    const node_spec *nd = j->fabric->node;
    if (pl->tp < 1 || pl->pp < 1 || pl->dp < 1 || pl->cp < 0 || nd->gpus < 1) return -1;
    if ((unsigned)j->layout > CKPT_RANK0 || (unsigned)j->mode > CKPT_ASYNC) return -1;
    if (!(z->model_bytes >= 0) || z->ranks < 1) return -1;
    ckpt_io_params qd;
    if (!q) {
        ckpt_io_params_default(&qd);
        q = &qd;
    }
    path P;
    if (path_init(&P, j, q) < 0) return -1;

    ckpt_io r;
    memset(&r, 0, sizeof r);
    job_shape s;
    shape_of(j, z, &s);
    r.written_bytes = s.total;
    r.writer_ranks = (int)(s.has_spread || !s.has_rep ? s.R : s.g);
    r.writer_nodes = (int)(s.has_spread || !s.has_rep ? s.N : s.nw);
    if (j->layout != CKPT_RANK0) {
        parallel_write(j, &P, q, &s, &r);
        parallel_load(j, &P, q, &s, &r);
    } else {
        if (rank0_write(j, &P, q, &s, &r) < 0) return -1;
        rank0_load(&P, q, &s, &r);
    }
    *io = r;
    return 0;
}

int ckpt_host_check(const ckpt_job *j, const ckpt_io *io, char *why, size_t whylen) {
    if (!j || !io || j->layout != CKPT_RANK0 || j->streaming_gather || io->host_fits) return 0;
    const node_spec *nd = j->fabric && j->fabric->node ? j->fabric->node : NULL;
    snprintf(why, whylen,
             "rank 0 gathers the whole checkpoint, %.3g TB, into its host memory before writing it (a "
             "torch.save of a gathered state dict holds it all), but a %s node has %.3g TB of DRAM, of "
             "which %.3g TB may hold it; give gather=\"streaming\" (a writer that writes chunks as they "
             "arrive), layout=\"sharded\", or a node type with more host memory",
             io->written_bytes / 1e12, nd ? nd->name : "?", nd ? nd->host_mem_bytes / 1e12 : 0,
             io->host_budget_bytes / 1e12);
    return -1;
}

/* ---- Interval --------------------------------------------------------- */

double ckpt_young_s(double cost_s, double mtti_s) {
    if (!(mtti_s > 0)) return NAN;
    return cost_s > 0 ? sqrt(2 * cost_s * mtti_s) : 0;
}

double ckpt_daly_s(double cost_s, double mtti_s) {
    if (!(mtti_s > 0)) return NAN;
    if (!(cost_s > 0)) return 0;
    if (cost_s >= 2 * mtti_s) return mtti_s;
    double x = cost_s / (2 * mtti_s);
    return sqrt(2 * cost_s * mtti_s) * (1 + sqrt(x) / 3 + x / 9) - cost_s;
}

double ckpt_auto_interval_s(const ckpt_io *io, double mtti_s) {
    if (!io) return NAN;
    double t = ckpt_daly_s(io->stall_s, mtti_s);
    return max2(t, io->background_s);
}

double ckpt_expected_lost_s(double interval_s, double stall_s, double commit_delay_s) {
    double t = interval_s > 0 ? interval_s : 0, d = stall_s > 0 ? stall_s : 0;
    double w = commit_delay_s > 0 ? commit_delay_s : 0;
    if (t + d <= 0) return 0;
    return (t * t / 2 + t * (d + w)) / (t + d);
}

double ckpt_ettr(double interval_s, double stall_s, double commit_delay_s,
                 double mtti_s, double recovery_s) {
    if (!(interval_s > 0) || !(mtti_s > 0)) return 0;
    double d = stall_s > 0 ? stall_s : 0;
    double cycle = interval_s + d;
    double lost_wall = ckpt_expected_lost_s(interval_s, d, commit_delay_s) * cycle / interval_s;
    double e = interval_s / cycle * (1 - ((recovery_s > 0 ? recovery_s : 0) + lost_wall) / mtti_s);
    return e < 0 ? 0 : e > 1 ? 1 : e;
}
