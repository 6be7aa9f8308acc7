/*
 * published_predict: the models' figure for one published case (see
 * published.h). Training, collective and inference rows become scenario
 * XML text, loaded with scenario_load_memory and built (and, for jobs and
 * services, run) as `clustertwin run` does; failure rows are arithmetic on
 * models/reliability. A case whose scenario does not load or fit gets no
 * result and the reason, never an exit.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "models/reliability.h"
#include "plan/published_int.h"
#include "scenarios/scenario.h"
#include "sim/metrics.h"
#include "sim/world.h"

/* Offline requests of an inference case without a `count` column:
 * tests/cli_serving.sh's count, enough that the last, partial batch weighs
 * little. A row that gives `count` (the benchmark's own $num_requests)
 * runs that many. */
#define INFERENCE_REQUESTS 3000
/* Training steps simulated per case: tests/replay-training's (the step
 * time is the same every step; a few keep the run short). */
#define TRAINING_STEPS 3

/* ---- Scenario text ----------------------------------------------------------- */

typedef struct xbuf {
    char b[8192];
    size_t n;
    int oom;                 /* an attribute could not be escaped */
} xbuf;

static void xput(xbuf *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xput(xbuf *x, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = x->n < sizeof x->b ? vsnprintf(x->b + x->n, sizeof x->b - x->n, fmt, ap) : 0;
    va_end(ap);
    x->n += k > 0 ? (size_t)k : 0;
}

/* ' name="value"', the value escaped for an XML attribute; nothing when
 * value is empty (an optional column left blank). */
static void xattr(xbuf *x, const char *name, const char *value) {
    if (!*value) return;
    char *esc = xml_attr_escape(value, '"');
    if (esc) xput(x, " %s=\"%s\"", name, esc);
    else x->oom = 1;
    free(esc);
}

static void xattr_long(xbuf *x, const char *name, long v) {
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    xattr(x, name, b);
}

/* <scenario> and <cluster><nodes .../></cluster>: gpu= only when the row's
 * GPU is not the node type's own (a catalog variant), power-cap= only when
 * given. */
static void xcluster(xbuf *x, const pubfile *pf, const pubrep_case *c, const char *type, const char *gpu,
                     long nodes, const char *power_cap_w) {
    const node_spec *ns = catalog_node(pf->cat, type);
    xput(x, "<?xml version=\"1.0\"?>\n<scenario");
    xattr(x, "name", c->id);
    xput(x, " seed=\"1\">\n  <cluster>\n    <nodes");
    xattr(x, "type", type);
    xattr_long(x, "count", nodes);
    xattr(x, "gpu", ns && strcmp(ns->gpu, gpu) ? gpu : "");
    char cap[64] = "";
    if (*power_cap_w) snprintf(cap, sizeof cap, "%sW", power_cap_w);
    xattr(x, "power-cap", cap);
    xput(x, "/>\n  </cluster>\n");
}

/* ---- Simulation ---------------------------------------------------------------- */

typedef struct pubsim {
    scenario *s;
    metric_bus *bus;
    world *w;
} pubsim;

static void sim_free(pubsim *ps) {
    world_free(ps->w);
    metrics_free(ps->bus);
    scenario_free(ps->s);
}

/* Load x, build its world and (run) run it. 0, or -1 with c->note saying
 * why (the loader's message names the generated scenario). */
static int simulate(const xbuf *x, pubrep_case *c, int run, pubsim *ps) {
    char name[384], err[2048];
    memset(ps, 0, sizeof *ps);
    if (x->oom) {
        snprintf(c->note, sizeof c->note, "out of memory");
        return -1;
    }
    if (x->n >= sizeof x->b) {
        snprintf(c->note, sizeof c->note, "the case's scenario is longer than %zu bytes", sizeof x->b);
        return -1;
    }
    snprintf(name, sizeof name, "%s:%ld (scenario of case %s)", c->file, c->line, c->id);
    if (scenario_load_memory(x->b, x->n, name, &ps->s, err, sizeof err) == 0) {
        ps->bus = metrics_new();
        ps->w = ps->bus ? world_new(ps->s, ps->bus, err, sizeof err) : NULL;
        if (!ps->bus) snprintf(err, sizeof err, "out of memory");
    }
    if (!ps->w) {
        errmsg_set(c->note, sizeof c->note, "%s", err);
        sim_free(ps);
        return -1;
    }
    if (run) world_run(ps->w, 0);
    return 0;
}

static int metric_error(const pubfile *pf, const pubrep_case *c, const char *allowed) {
    return csv_fail(pf->r, pf->err, pf->errlen, "column metric: expected %s, got '%s'", allowed, c->metric);
}

/* ---- Training ------------------------------------------------------------------- */

static const char *const train_metrics[] = { "hardware_tflops_per_gpu", "model_tflops_per_gpu",
                                             "tokens_per_s_per_gpu", "mfu" };

static double train_metric(const train_result *p, int m) {
    const double v[] = { p->hardware_tflops_per_gpu, p->model_tflops_per_gpu, p->tokens_per_s_per_gpu, p->mfu };
    return v[m];
}

/* The <training> element, as tests/replay-training writes it. */
static void xtraining(xbuf *x, const pubfile *pf, const csv_record *rec, const pubrep_case *c, const long *v,
                      long cp) {
    static const char *const attrs[] = { "gpus", "tp", "pp", "dp" };
    const char *prec = published_col(pf, rec, "precision");
    xput(x, "  <workload>\n    <training");
    xattr(x, "name", c->id);
    for (int i = 0; i < 4; i++) xattr_long(x, attrs[i], v[i]);
    xattr_long(x, "cp", cp);
    xattr(x, "sharding", published_col(pf, rec, "sharding"));
    xattr(x, "global-batch", published_col(pf, rec, "global_batch_seqs"));
    xattr(x, "micro-batch", published_col(pf, rec, "micro_batch"));
    xattr(x, "seq-len", published_col(pf, rec, "seq_len"));
    xattr(x, "precision", *prec ? prec : "bf16");
    xattr(x, "recompute", published_col(pf, rec, "recompute"));
    xattr(x, "stack", published_col(pf, rec, "stack"));
    xattr(x, "ep", published_col(pf, rec, "ep"));
    /* attrs: further <training> attributes, written verbatim (the loader
     * checks them as it checks any scenario's). */
    const char *more = published_col(pf, rec, "attrs");
    if (*more) xput(x, " %s", more);
    xattr_long(x, "steps", TRAINING_STEPS);
    xput(x, ">\n      <model");
    /* model: a catalog preset whose architecture replaces the shape
     * columns (MoE rows, tests/validation/training_moe.csv). */
    const char *preset = published_col(pf, rec, "model");
    static const char *const model[][2] = { { "layers", "layers" }, { "hidden", "hidden" },
        { "ffn-hidden", "ffn_hidden" }, { "heads", "heads" }, { "kv-heads", "kv_heads" }, { "vocab", "vocab" } };
    if (*preset) xattr(x, "preset", preset);
    else
        for (int i = 0; i < 6; i++) xattr(x, model[i][0], published_col(pf, rec, model[i][1]));
    xput(x, "/>\n    </training>\n  </workload>\n</scenario>\n");
}

int published_training(const pubfile *pf, const csv_record *rec, pubrep_case *c) {
    static const char *const counts[] = { "gpus", "tp", "pp", "dp", "layers", "hidden", "ffn_hidden", "heads",
                                          "kv_heads", "vocab", "seq_len", "global_batch_seqs" };
    long v[12], cp, mb;
    double cap_w;
    /* With a model preset the shape columns (layers .. vocab) may be empty. */
    int preset = *published_col(pf, rec, "model") != 0;
    for (int i = 0; i < 12; i++) {
        v[i] = 0;
        if ((!preset || i < 4 || i > 9 || *published_col(pf, rec, counts[i])) &&
            published_count(pf, rec, counts[i], 0, &v[i]) < 0)
            return -1;
    }
    if (preset && !catalog_llm(pf->cat, published_col(pf, rec, "model"))) {
        return csv_fail(pf->r, pf->err, pf->errlen, "column model: no model preset '%s' in the catalog",
                        published_col(pf, rec, "model"));
    }
    long ep;
    if (*published_col(pf, rec, "ep") && published_count(pf, rec, "ep", 1, &ep) < 0) return -1;
    if (published_count(pf, rec, "cp", 1, &cp) < 0 || published_count(pf, rec, "micro_batch", 1, &mb) < 0) return -1;
    const char *cap = published_col(pf, rec, "power_cap_w");
    if (*cap && published_positive(pf, rec, "power_cap_w", &cap_w) < 0) return -1;
    int m = 0;
    while (m < 4 && strcmp(c->metric, train_metrics[m])) m++;
    if (m == 4) return metric_error(pf, c, "hardware_tflops_per_gpu, model_tflops_per_gpu, tokens_per_s_per_gpu or mfu");
    xbuf x = { .n = 0 };
    const node_spec *ns = catalog_node(pf->cat, published_col(pf, rec, "node_type"));
    long gpn = ns && ns->gpus > 0 ? ns->gpus : 8;
    xcluster(&x, pf, c, published_col(pf, rec, "node_type"), published_col(pf, rec, "gpu"),
             v[0] / gpn > 1 ? v[0] / gpn : 1, cap);
    xtraining(&x, pf, rec, c, v, cp);
    pubsim ps;
    if (simulate(&x, c, 1, &ps) < 0) return 0;
    job_result jr;
    const job_result *j = world_job_count(ps.w) > 0 ? world_job(ps.w, 0, &jr) : NULL;
    if (j && j->perf) c->predicted = train_metric(j->perf, m);
    else snprintf(c->note, sizeof c->note, "the job has no step-time figures");
    sim_free(&ps);
    return 0;
}

/* ---- Collectives ----------------------------------------------------------------- */

/* An op of size_bytes over nodes x gpn ranks, priced as `run` prices a
 * <microbenchmarks><collective>; metric busbw_GBps or algbw_GBps. */
static void collective_predict(const pubfile *pf, const char *type, const char *gpu, long nodes, long gpn,
                               const char *op, double size_bytes, pubrep_case *c) {
    const node_spec *ns = catalog_node(pf->cat, type);
    if (ns && nodes > 1 && gpn != ns->gpus) {
        snprintf(c->note, sizeof c->note, "%ld GPUs per node of %s's %d: a collective's ranks fill whole nodes",
                 gpn, type, ns->gpus);
        return;
    }
    xbuf x = { .n = 0 };
    char size[32];
    snprintf(size, sizeof size, "%.0f", size_bytes);
    xcluster(&x, pf, c, type, gpu, nodes, "");
    xput(&x, "  <microbenchmarks>\n    <collective");
    xattr(&x, "op", op);
    xattr_long(&x, "ranks", nodes * gpn);
    xattr(&x, "min-size", size);
    xattr(&x, "max-size", size);
    xput(&x, "/>\n  </microbenchmarks>\n</scenario>\n");
    pubsim ps;
    if (simulate(&x, c, 0, &ps) < 0) return;
    const benchset *b = world_benchset(ps.w);
    const mb_prediction *p = b && benchset_count(b) > 0 ? benchset_prediction(b, 0) : NULL;
    if (p) c->predicted = (strcmp(c->metric, "algbw_GBps") ? p->busbw_bytes_per_s : p->algbw_bytes_per_s) / 1e9;
    else snprintf(c->note, sizeof c->note, "the collective is not priced: %s", b ? benchset_note(b, 0) : "no case");
    sim_free(&ps);
}

int published_collective(const pubfile *pf, const csv_record *rec, pubrep_case *c) {
    long nodes, gpn;
    double size;
    if (published_count(pf, rec, "nodes", 0, &nodes) < 0 || published_count(pf, rec, "gpus_per_node", 0, &gpn) < 0 ||
        published_positive(pf, rec, "size_bytes", &size) < 0)
        return -1;
    if (strcmp(c->metric, "busbw_GBps") && strcmp(c->metric, "algbw_GBps"))
        return metric_error(pf, c, "busbw_GBps or algbw_GBps");
    collective_predict(pf, published_col(pf, rec, "node_type"), published_col(pf, rec, "gpu"), nodes, gpn,
                       published_col(pf, rec, "op"), size, c);
    return 0;
}

/* The single-curve file: an all-reduce over one DGX H100's 8 GPUs (the
 * file's own header comment says so). */
void published_curve_point(const pubfile *pf, double size_bytes, pubrep_case *c) {
    collective_predict(pf, "dgx-h100", "", 1, 8, "allreduce", size_bytes, c);
}

/* ---- Failures --------------------------------------------------------------------- */

int published_failure(const pubfile *pf, const csv_record *rec, pubrep_case *c) {
    long gpus;
    if (published_count(pf, rec, "gpus", 0, &gpus) < 0) return -1;
    int m = rel_metric_parse(c->metric);
    if (m < 0) return metric_error(pf, c, "mtti_h or failures_per_1000_node_days");
    const char *type = published_col(pf, rec, "node_type"), *profile = published_col(pf, rec, "profile");
    const node_spec *ns = catalog_node(pf->cat, type);
    const rel_profile *p = rel_profile_find(pf->cat, profile);
    if (!ns || ns->gpus <= 0) {
        snprintf(c->note, sizeof c->note, "unknown node type '%s'", type);
        return 0;
    }
    if (!p) {
        snprintf(c->note, sizeof c->note, "unknown failure profile '%s'", profile);
        return 0;
    }
    /* a job holds whole nodes; the prediction is the one tests/test_reliability.c
     * replays (the expansion a scenario's <failure profile=...> gets) */
    long nodes = (gpus + ns->gpus - 1) / ns->gpus;
    double v;
    if (nodes > INT_MAX / ns->gpus || rel_profile_predict(p, ns, (int)(nodes * ns->gpus), (rel_metric)m, &v) < 0)
        snprintf(c->note, sizeof c->note, "profile %s gives no prediction for %ld GPUs", profile, gpus);
    else if (v > 0 && isfinite(v)) c->predicted = v;
    else snprintf(c->note, sizeof c->note, "profile %s gives no failures", profile);
    return 0;
}

/* ---- Inference --------------------------------------------------------------------- */

/* A latency row (tests/validation/inference_latency.csv: engine and users
 * columns): one replica of the row's engine under a closed loop of `users`
 * users without think time, `count` requests, as tests/cli_engines.sh
 * replays it; the metric a TTFT or TPOT mean or median. A throughput row's
 * metric is the service's output tokens/s, or output_tokens_per_s_per_gpu
 * (trtllm-bench's "Per GPU Output Throughput"): that over the GPUs the
 * service held, one replica's here. */
static double service_metric(const service_result *r, const char *metric) {
    double gpus = r->gpus_peak > 0 ? r->gpus_peak : 1;
    return !strcmp(metric, "tpot_mean_s") ? r->tpot_mean_s : !strcmp(metric, "ttft_mean_s") ? r->ttft_mean_s
         : !strcmp(metric, "tpot_p50_s")  ? r->tpot_p50_s  : !strcmp(metric, "ttft_p50_s") ? r->ttft_p50_s
         : !strcmp(metric, "output_tokens_per_s_per_gpu") ? r->output_tokens_per_s / gpus
                                          : r->output_tokens_per_s;
}

/* Close an inference case's scenario with its request lengths, run it and
 * take the case's metric from its one service. */
static int simulate_service(xbuf *x, pubrep_case *c, long in, long out) {
    xput(x, "/>\n      <requests");
    xattr_long(x, "input-tokens", in);
    xattr_long(x, "output-tokens", out);
    xput(x, "/>\n    </inference>\n  </workload>\n</scenario>\n");
    pubsim ps;
    if (simulate(x, c, 1, &ps) < 0) return 0;
    if (world_service_count(ps.w) > 0) c->predicted = service_metric(world_service(ps.w, 0), c->metric);
    else snprintf(c->note, sizeof c->note, "the scenario has no service");
    sim_free(&ps);
    return 0;
}

static int published_latency(const pubfile *pf, const csv_record *rec, pubrep_case *c, long tp, long in, long out) {
    long users, count;
    if (published_count(pf, rec, "users", 0, &users) < 0 || published_count(pf, rec, "count", 100, &count) < 0)
        return -1;
    if (strcmp(c->metric, "tpot_mean_s") && strcmp(c->metric, "ttft_mean_s") && strcmp(c->metric, "tpot_p50_s") &&
        strcmp(c->metric, "ttft_p50_s"))
        return metric_error(pf, c, "tpot_mean_s, ttft_mean_s, tpot_p50_s or ttft_p50_s");
    xbuf x = { .n = 0 };
    const node_spec *ns = catalog_node(pf->cat, published_col(pf, rec, "node_type"));
    long gpn = ns && ns->gpus > 0 ? ns->gpus : 8;
    xcluster(&x, pf, c, published_col(pf, rec, "node_type"), "", (tp + gpn - 1) / gpn, "");
    xput(&x, "  <workload>\n    <inference");
    xattr(&x, "name", c->id);
    static const char *const cols[] = { "model", "precision", "gpu", "engine" };
    for (int i = 0; i < 4; i++) xattr(&x, cols[i], published_col(pf, rec, cols[i]));
    xattr_long(&x, "tp", tp);
    xput(&x, " replicas=\"1\">\n      <arrivals process=\"closed\"");
    xattr_long(&x, "users", users);
    xattr_long(&x, "count", count);
    return simulate_service(&x, c, in, out);
}

int published_inference(const pubfile *pf, const csv_record *rec, pubrep_case *c) {
    long tp, ep, in, out, count;
    if (published_count(pf, rec, "tp", 0, &tp) < 0 || published_count(pf, rec, "ep", 1, &ep) < 0 ||
        published_count(pf, rec, "input_tokens", 0, &in) < 0 || published_count(pf, rec, "output_tokens", 0, &out) < 0)
        return -1;
    if (*published_col(pf, rec, "engine") && *published_col(pf, rec, "users"))
        return published_latency(pf, rec, c, tp, in, out);
    if (strcmp(c->metric, "output_tokens_per_s") && strcmp(c->metric, "output_tokens_per_s_per_gpu"))
        return metric_error(pf, c, "output_tokens_per_s or output_tokens_per_s_per_gpu");
    if (published_count(pf, rec, "count", INFERENCE_REQUESTS, &count) < 0) return -1;
    xbuf x = { .n = 0 };
    long gpus = ep > tp ? ep : tp;            /* a replica: max(tp, ep) GPUs (models/serving.h) */
    const node_spec *ns = catalog_node(pf->cat, published_col(pf, rec, "node_type"));
    long gpn = ns && ns->gpus > 0 ? ns->gpus : 8;   /* a GB200 tray holds 4 */
    xcluster(&x, pf, c, published_col(pf, rec, "node_type"), "", (gpus + gpn - 1) / gpn, "");
    xput(&x, "  <workload>\n    <inference");
    xattr(&x, "name", c->id);
    static const char *const cols[] = { "model", "precision", "gpu" };
    for (int i = 0; i < 3; i++) xattr(&x, cols[i], published_col(pf, rec, cols[i]));
    xattr_long(&x, "tp", tp);
    if (ep > 1) xattr_long(&x, "ep", ep);
    /* tests/cli_serving.sh: trtllm-bench's LLM-API defaults, max batch 2048, 8192 tokens,
     * on the PyTorch backend, whose FP8 GEMM inputs pay a quantisation kernel
     * (fp8-act-quant, docs/fp4-serving-path.md) and whose MoE backend is
     * CUTLASS unless set (fused-moe, docs/moe-serving.md), and whose prompts run
     * TensorRT-LLM's context attention (context-fmha, docs/serving.md) and
     * an MLA model's decode its MLA generation call (mla-decode, docs/moe-serving.md);
     * under attention DP the limits are each rank's (attn-dp-limits, docs/moe-serving.md);
     * decode steps replay the CUDA graphs the page's llm_options capture, with padding
     * (cuda_graph_config, every model of perf-overview.md at 00f37686 and 03e27c7d;
     * docs/serving-engines.md "CUDA graphs under attention DP") */
    xput(&x, " replicas=\"1\" max-batch=\"2048\" token-budget=\"8192\" fp8-act-quant=\"kernel\"\n"
             "       fused-moe=\"cutlass\" context-fmha=\"trtllm\" mla-decode=\"trtllm\" attn-dp-limits=\"per-rank\"\n"
             "       cuda-graph-sizes=\"1,2,4,8,16,32,64,128,256,384,512,1024,2048,4096,8192\"");
    /* attrs: further <inference> attributes (the checkpoint's fp4-recipe, the
     * KV cache's precision), written verbatim as for training rows */
    const char *more = published_col(pf, rec, "attrs");
    if (*more) xput(&x, " %s", more);
    xput(&x, ">\n      <arrivals process=\"offline\"");
    xattr_long(&x, "count", count);
    return simulate_service(&x, c, in, out);
}
