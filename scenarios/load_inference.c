/*
 * load_inference: <inference> services of the workload. A service names
 * a model (model= or several <model> children multiplexed on the same
 * replicas), its serving stack (batching, KV cache, router), the
 * <arrivals> of requests (offline, poisson, bursty, diurnal or a request
 * trace), their <requests> lengths, an <slo> and an <autoscale> policy.
 * sim/serving.h says what each setting does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving.h"
#include "models/serving_spec.h"
#include "scenarios/infile.h"
#include "scenarios/load.h"
#include "scenarios/reqtrace.h"

static int parse_batching(const char *z) { return !strcmp(z, "continuous") ? 0 : !strcmp(z, "static") ? 1 : -1; }
static int parse_prefix_order(const char *z) {
    return !strcmp(z, "drawn") ? 0 : !strcmp(z, "shuffled") ? 1 : !strcmp(z, "grouped") ? 2 : -1;
}
static int parse_kv_allocation(const char *z) { return !strcmp(z, "reserve") ? 0 : !strcmp(z, "on-demand") ? 1 : -1; }
static int parse_kv_preemption(const char *z) { return !strcmp(z, "recompute") ? 0 : !strcmp(z, "swap") ? 1 : -1; }
static int parse_fp8_act_quant(const char *z) { return !strcmp(z, "fused") ? 0 : !strcmp(z, "kernel") ? 1 : -1; }
static int parse_fused_moe(const char *z) { return !strcmp(z, "roofline") ? 0 : !strcmp(z, "cutlass") ? 1 : -1; }
static int parse_context_fmha(const char *z) { return !strcmp(z, "roofline") ? 0 : !strcmp(z, "trtllm") ? 1 : -1; }
static int parse_mla_decode(const char *z) { return parse_context_fmha(z); }   /* the same two words */
static int parse_attn_dp_limits(const char *z) { return !strcmp(z, "replica") ? 0 : !strcmp(z, "per-rank") ? 1 : -1; }
static int parse_router(const char *z) {
    static const char *k[] = { "round-robin", "least-tokens", "random", "power-of-two", "prefix-aware", "kv-aware",
                               "cache-aware" };
    for (int i = 0; i < 7; i++)
        if (!strcmp(z, k[i])) return i;
    return -1;
}
static int parse_scale_metric(const char *z) {
    return !strcmp(z, "queue") ? 0 : !strcmp(z, "concurrency") ? 1 : !strcmp(z, "latency") ? 2 : -1;
}
int load_parse_length_dist(const char *z) {
    static const char *k[] = { "fixed", "exponential", "lognormal", "gamma", "uniform" };
    for (int i = 0; i < 5; i++)
        if (!strcmp(z, k[i])) return i;
    return -1;
}
static int parse_arrival_process(const char *z) {
    static const char *k[] = { "offline", "poisson", "bursty", "diurnal", "trace", "closed" };
    for (int i = 0; i < 6; i++)
        if (!strcmp(z, k[i])) return i;
    return -1;
}

/* A serving precision (weights or KV cache). */
static int attr_serve_precision(loader *L, const xmlNode *e, const char *attr, precision *out) {
    int v;
    int rc = attr_enum(&L->x, e, attr, precision_parse, "bf16, fp16, fp8, int8, int4, fp4", &v);
    if (rc > 0) {
        if (!(v == PREC_BF16 || v == PREC_FP16 || v == PREC_FP8 || v == PREC_INT8 || v == PREC_INT4 ||
              v == PREC_FP4)) {
            xml_fail(&L->x, e, attr, "%s must be one of bf16, fp16, fp8, int8, int4, fp4", attr);
            return -1;
        }
        *out = (precision)v;
    }
    return rc;
}

static int known_llm(loader *L, const xmlNode *e, const char *attr, const char *name) {
    if (catalog_llm(L->s->cat, name)) return 1;
    char names[1024];
    catalog_names(L->s->cat, "llm", names, sizeof names);
    xml_fail(&L->x, e, attr, "unknown model; expected one of: %s", names);
    return 0;
}

/* <model preset= precision= kv-precision= share=>: one model of a multiplexed service. */
static void load_serve_model(loader *L, const xmlNode *c, sc_inference *f, name_set *served) {
    sc_serve_model *m = PUSH(L, f->models, f->n_models, c);
    if (!m) return;
    m->line = xml_line(&L->x, c);
    m->precision = f->precision;
    m->share = 1;
    if (attr_str(&L->x, c, "preset", m->model, sizeof m->model, 1) < 0 || !known_llm(L, c, "preset", m->model)) return;
    int dup = nameset_find(served, NAMES(f->models, model), m->model);
    if (dup >= 0)
        FAIL_RETURN(L, c, "preset", "model %s is already served by this <inference> (line %d)", m->model, f->models[dup].line);
    if (nameset_add(served, NAMES(f->models, model), f->n_models - 1) < 0) FAIL_RETURN(L, c, NULL, "out of memory");
    attr_serve_precision(L, c, "precision", &m->precision);
    m->kv_precision = serve_default_kv(m->precision);
    attr_serve_precision(L, c, "kv-precision", &m->kv_precision);
    attr_unit(&L->x, c, "share", UNIT_NUMBER, &m->share, 0, 1);
}

/* A file named by href (relative to the scenario's directory) must be a
 * readable regular file (scenarios/infile.c: never a FIFO or device), so a
 * missing or wrong trace is reported at the element that names it. The file
 * is only opened here, not read. Returns 0, or -1 with L->x.failed set. */
static int check_href(loader *L, const xmlNode *e, const char *href) {
    char path[1024];
    if (scenario_path(L->s->file, href, path, sizeof path) < 0) {
        xml_fail(&L->x, e, "href", "the path is longer than %zu bytes", sizeof path - 1);
        return -1;
    }
    infile_err ie;
    FILE *f = infile_open(path, INFILE_TRACE_MAX_BYTES, "a CSV file", &ie);
    if (!f) {
        xml_fail(&L->x, e, "href", "%s: %s", path, ie.why);
        return -1;
    }
    fclose(f);
    return 0;
}

/* A new <inference> with the defaults of what it leaves out, its name
 * checked unique. NULL with L failed. */
static sc_inference *new_service(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_inference *f = PUSH(L, s->inference, s->n_inference, e);
    if (!f) return NULL;
    f->line = xml_line(&L->x, e);
    f->precision = PREC_BF16;
    f->tp = 1;
    f->ep = 1;
    strcpy(f->fp4_recipe, "nvfp4");
    f->replicas = 1;
    f->max_batch = 2048;                    /* TensorRT-LLM's default max_batch_size */
    f->input_tokens = 1000;
    f->output_tokens = 200;
    f->slo_percentile = 99;
    strcpy(f->arrival_process, "offline");
    strcpy(f->trace_format, "auto");
    f->trace_time_scale = 1;
    strcpy(f->batching, "continuous");
    f->token_budget = 8192;
    strcpy(f->kv_allocation, "reserve");
    strcpy(f->kv_preemption, "recompute");
    strcpy(f->fp8_act_quant, "fused");
    strcpy(f->fused_moe, "roofline");
    strcpy(f->context_fmha, "roofline");
    strcpy(f->mla_decode, "roofline");
    strcpy(f->moe_comm, "auto");
    strcpy(f->attn_dp_limits, "replica");
    f->block_tokens = 16;
    strcpy(f->router, "least-tokens");
    f->prefixes = 1;
    f->prefix_share = 1;
    strcpy(f->prefix_order, "drawn");
    strcpy(f->input_dist, "fixed");
    strcpy(f->output_dist, "fixed");
    f->input_cv = f->output_cv = 1;
    f->diurnal_amplitude = 0.5;
    f->diurnal_period_s = 86400;
    f->diurnal_peak_s = 14 * 3600.0;
    if (attr_str(&L->x, e, "name", f->name, sizeof f->name, 1) < 0) return NULL;
    int dup = nameset_find(&L->inference_names, NAMES(s->inference, name), f->name);
    if (dup >= 0) {
        xml_fail(&L->x, e, "name", "an <inference> service of this name is on line %d", s->inference[dup].line);
        return NULL;
    }
    if (nameset_add(&L->inference_names, NAMES(s->inference, name), s->n_inference - 1) < 0) {
        xml_fail(&L->x, e, NULL, "out of memory");
        return NULL;
    }
    return f;
}

/* The model, where it runs: model= (a catalog preset), precisions, gpu=
 * and node-type= (which must agree). Returns has_model as attr_str does:
 * 1 given, 0 not, -1 with L failed. */
static int read_service_target(loader *L, const xmlNode *e, sc_inference *f) {
    scenario *s = L->s;
    int has_model = attr_str(&L->x, e, "model", f->model, sizeof f->model, 0);
    if (has_model < 0 || (has_model > 0 && !known_llm(L, e, "model", f->model))) return -1;
    if (attr_serve_precision(L, e, "precision", &f->precision) < 0) return -1;
    f->kv_precision = serve_default_kv(f->precision);
    attr_serve_precision(L, e, "kv-precision", &f->kv_precision);
    if (attr_str(&L->x, e, "gpu", f->gpu, sizeof f->gpu, 0) > 0 && !catalog_gpu(s->cat, f->gpu)) {
        char names[1024];
        catalog_names(s->cat, "gpu", names, sizeof names);
        xml_fail(&L->x, e, "gpu", "unknown GPU; expected one of: %s", names);
        return -1;
    }
    if (attr_str(&L->x, e, "node-type", f->node_type, sizeof f->node_type, 0) > 0) {
        const node_spec *ns = catalog_node(s->cat, f->node_type);
        if (!ns || !loader_gpus_of_type(L, f->node_type))
            xml_fail(&L->x, e, "node-type", "no <nodes type=\"%s\"> in <cluster>", f->node_type);
        else if (f->gpu[0] && strcmp(ns->gpu, f->gpu))
            xml_fail(&L->x, e, "node-type", "node type %s has %s GPUs, not gpu=\"%s\"", f->node_type, ns->gpu, f->gpu);
        if (L->x.failed) return -1;
    }
    return has_model;
}

/* engine="NAME": the engine's defaults (models/catalog/engines.xml) in
 * place of the ideal engine's, before the attributes that override them.
 * The engine's own figures are checked here, so a bad catalog entry is
 * reported at the <inference> that uses it. */
static void read_service_engine(loader *L, const xmlNode *e, sc_inference *f) {
    if (attr_str(&L->x, e, "engine", f->engine, sizeof f->engine, 0) <= 0) return;
    const engine_spec *en = catalog_engine(L->s->cat, f->engine);
    char why[256];
    serve_params p;
    if (!en) {
        char names[1024];
        catalog_names(L->s->cat, "engine", names, sizeof names);
        FAIL_RETURN(L, e, "engine", "unknown engine; expected one of: %s", names);
    }
    if (strcmp(en->scheduler, "sync") && strcmp(en->scheduler, "overlap") && en->scheduler[0])
        FAIL_RETURN(L, e, "engine", "engine %s: scheduler must be sync or overlap", en->name);
    if (serve_graph_sizes_parse(en->cuda_graph_sizes, &p, why, sizeof why) < 0)
        FAIL_RETURN(L, e, "engine", "engine %s: cuda-graph-sizes: %s", en->name, why);
    if ((en->kv_allocation[0] && parse_kv_allocation(en->kv_allocation) < 0) ||
        (en->kv_preemption[0] && parse_kv_preemption(en->kv_preemption) < 0))
        FAIL_RETURN(L, e, "engine", "engine %s: kv-allocation must be reserve or on-demand, kv-preemption "
                    "recompute or swap", en->name);
    if (en->fp8_act_quant[0] && parse_fp8_act_quant(en->fp8_act_quant) < 0)
        FAIL_RETURN(L, e, "engine", "engine %s: fp8-act-quant must be kernel or fused", en->name);
    if (en->fused_moe[0] && parse_fused_moe(en->fused_moe) < 0)
        FAIL_RETURN(L, e, "engine", "engine %s: fused-moe must be cutlass or roofline", en->name);
    if (en->context_fmha[0] && parse_context_fmha(en->context_fmha) < 0)
        FAIL_RETURN(L, e, "engine", "engine %s: context-fmha must be trtllm or roofline", en->name);
    if (en->mla_decode[0] && parse_mla_decode(en->mla_decode) < 0)
        FAIL_RETURN(L, e, "engine", "engine %s: mla-decode must be trtllm or roofline", en->name);
    if (en->moe_comm[0] && serve_moe_comm_parse(en->moe_comm) < 0)
        FAIL_RETURN(L, e, "engine", "engine %s: moe-comm must be auto, alltoall or allgather", en->name);
    if (en->attn_dp_limits[0] && parse_attn_dp_limits(en->attn_dp_limits) < 0)
        FAIL_RETURN(L, e, "engine", "engine %s: attn-dp-limits must be replica or per-rank", en->name);
    if (en->max_batch > 0) f->max_batch = en->max_batch;
    if (en->token_budget > 0) f->token_budget = en->token_budget;
    if (en->block_size > 0) f->block_tokens = en->block_size;
    f->chunked_prefill = en->chunked_prefill;
    f->prefill_alone = en->prefill_alone;
    if (en->kv_allocation[0]) snprintf(f->kv_allocation, sizeof f->kv_allocation, "%s", en->kv_allocation);
    if (en->kv_preemption[0]) snprintf(f->kv_preemption, sizeof f->kv_preemption, "%s", en->kv_preemption);
    if (en->fp8_act_quant[0]) snprintf(f->fp8_act_quant, sizeof f->fp8_act_quant, "%s", en->fp8_act_quant);
    if (en->fused_moe[0]) snprintf(f->fused_moe, sizeof f->fused_moe, "%s", en->fused_moe);
    if (en->context_fmha[0]) snprintf(f->context_fmha, sizeof f->context_fmha, "%s", en->context_fmha);
    if (en->mla_decode[0]) snprintf(f->mla_decode, sizeof f->mla_decode, "%s", en->mla_decode);
    if (en->moe_comm[0]) snprintf(f->moe_comm, sizeof f->moe_comm, "%s", en->moe_comm);
    if (en->attn_dp_limits[0]) snprintf(f->attn_dp_limits, sizeof f->attn_dp_limits, "%s", en->attn_dp_limits);
    snprintf(f->cuda_graph_sizes, sizeof f->cuda_graph_sizes, "%s", en->cuda_graph_sizes);
}

/* cuda-graph-sizes="1,2,4,8-248/8" (or "none"): the captured decode batch
 * sizes in place of the engine's, checked as the engine's are. */
static void read_graph_sizes(loader *L, const xmlNode *e, sc_inference *f) {
    char z[sizeof f->cuda_graph_sizes], why[256];
    serve_params p;
    if (attr_str(&L->x, e, "cuda-graph-sizes", z, sizeof z, 0) <= 0) return;
    if (!strcmp(z, "none")) z[0] = 0;
    if (serve_graph_sizes_parse(z, &p, why, sizeof why) < 0)
        FAIL_RETURN(L, e, "cuda-graph-sizes", "%s, or none", why);
    snprintf(f->cuda_graph_sizes, sizeof f->cuda_graph_sizes, "%s", z);
}

/* The serving stack: replicas, batching, KV cache, router, queue. */
static void read_service_stack(loader *L, const xmlNode *e, sc_inference *f) {
    attr_int(&L->x, e, "tp", &f->tp, 0, 1, 64);
    attr_int(&L->x, e, "ep", &f->ep, 0, 1, 1024);
    attr_word(&L->x, e, "fp4-recipe", fp4_recipe_parse, "nvfp4, mxfp4", NULL, f->fp4_recipe, sizeof f->fp4_recipe, 0);
    attr_int(&L->x, e, "replicas", &f->replicas, 0, 1, 1000000);
    attr_int(&L->x, e, "max-batch", &f->max_batch, 0, 1, 1000000);
    attr_int(&L->x, e, "token-budget", &f->token_budget, 0, 1, 100000000);
    attr_word(&L->x, e, "batching", parse_batching, "continuous, static", NULL, f->batching, sizeof f->batching, 0);
    attr_bool(&L->x, e, "chunked-prefill", &f->chunked_prefill);
    attr_bool(&L->x, e, "prefill-alone", &f->prefill_alone);
    attr_word(&L->x, e, "kv-allocation", parse_kv_allocation, "reserve, on-demand", NULL, f->kv_allocation,
              sizeof f->kv_allocation, 0);
    attr_word(&L->x, e, "kv-preemption", parse_kv_preemption, "recompute, swap", NULL, f->kv_preemption,
              sizeof f->kv_preemption, 0);
    attr_word(&L->x, e, "fp8-act-quant", parse_fp8_act_quant, "kernel, fused", NULL, f->fp8_act_quant,
              sizeof f->fp8_act_quant, 0);
    attr_word(&L->x, e, "fused-moe", parse_fused_moe, "cutlass, roofline", NULL, f->fused_moe, sizeof f->fused_moe, 0);
    attr_word(&L->x, e, "context-fmha", parse_context_fmha, "trtllm, roofline", NULL, f->context_fmha,
              sizeof f->context_fmha, 0);
    attr_word(&L->x, e, "mla-decode", parse_mla_decode, "trtllm, roofline", NULL, f->mla_decode, sizeof f->mla_decode, 0);
    attr_word(&L->x, e, "moe-comm", serve_moe_comm_parse, "auto, alltoall, allgather", NULL, f->moe_comm,
              sizeof f->moe_comm, 0);
    attr_word(&L->x, e, "attn-dp-limits", parse_attn_dp_limits, "replica, per-rank", NULL, f->attn_dp_limits,
              sizeof f->attn_dp_limits, 0);
    read_graph_sizes(L, e, f);
    attr_int(&L->x, e, "block-size", &f->block_tokens, 0, 1, 1024);
    if (attr_unit(&L->x, e, "kv-memory-fraction", UNIT_NUMBER, &f->kv_memory_fraction, 0, 1) > 0 &&
        f->kv_memory_fraction > 1)
        xml_fail(&L->x, e, "kv-memory-fraction", "kv-memory-fraction must be a fraction in (0, 1]");
    attr_word(&L->x, e, "router", parse_router,
              "round-robin, least-tokens, random, power-of-two, prefix-aware, kv-aware, cache-aware",
              NULL, f->router, sizeof f->router, 0);
    attr_bool(&L->x, e, "prefix-caching", &f->prefix_caching);
    attr_unit(&L->x, e, "model-load-time", UNIT_DURATION, &f->model_load_s, 0, 1);
    load_queue_ref(L, e, f->queue, sizeof f->queue, &f->priority);
}

/* Which attributes of <arrivals> were given (attr_* results). */
typedef struct arrivals_given {
    int rate, count, duration, cv, amplitude, period, peak, href, format, time_scale, skip, users, think;
} arrivals_given;

/* <arrivals process="trace">'s own attributes: format, time-scale, skip
 * (scenarios/reqtrace.h). Returns how many were given, -1 with L failed. */
static int load_trace_options(loader *L, const xmlNode *c, sc_inference *f, arrivals_given *g) {
    g->format = attr_word(&L->x, c, "format", reqtrace_format_parse, REQTRACE_FORMATS, NULL, f->trace_format,
                          sizeof f->trace_format, 0);
    g->time_scale = attr_unit(&L->x, c, "time-scale", UNIT_NUMBER, &f->trace_time_scale, 0, 1);
    g->skip = attr_unit(&L->x, c, "skip", UNIT_DURATION, &f->trace_skip_s, 0, 0);
    if (L->x.failed) return -1;
    return (g->format > 0) + (g->time_scale > 0) + (g->skip > 0);
}

/* process="closed" (genai-perf's and vLLM bench's fixed concurrency, with
 * think time): users= is required and only closed takes users, think-time
 * and think-distribution. 0, or -1 with L failed. */
static int check_closed(loader *L, const xmlNode *c, const sc_inference *f, arrivals_given g) {
    int closed = !strcmp(f->arrival_process, "closed");
    if (closed && g.users == 0)
        xml_fail(&L->x, c, NULL, "process=\"closed\" needs the number of concurrent users (e.g. users=\"32\")");
    else if (!closed && (g.users > 0 || g.think > 0))
        xml_fail(&L->x, c, g.users > 0 ? "users" : "think-time",
                 "users, think-time and think-distribution apply to process=\"closed\" only");
    return L->x.failed ? -1 : 0;
}

/* Each attribute of <arrivals> belongs to some processes only. 0, or -1
 * with L failed. */
static int check_arrivals(loader *L, const xmlNode *c, const sc_inference *f, arrivals_given g) {
    const char *z = f->arrival_process;
    int timed = !strcmp(z, "poisson") || !strcmp(z, "bursty") || !strcmp(z, "diurnal");
    if (timed && g.rate == 0) xml_fail(&L->x, c, NULL, "process=\"%s\" needs a rate (e.g. rate=\"20/s\")", z);
    else if (!timed && g.rate > 0) xml_fail(&L->x, c, "rate", "rate applies to poisson, bursty and diurnal arrivals");
    else if (!timed && strcmp(z, "trace") && g.duration > 0)
        xml_fail(&L->x, c, "duration", "duration applies to poisson, bursty, diurnal and trace arrivals");
    else if (!strcmp(z, "bursty") && g.cv == 0)
        xml_fail(&L->x, c, NULL, "process=\"bursty\" needs the coefficient of variation of inter-arrival times (e.g. cv=\"3\")");
    else if (strcmp(z, "bursty") && g.cv > 0) xml_fail(&L->x, c, "cv", "cv applies to process=\"bursty\" only");
    else if (strcmp(z, "diurnal") && (g.amplitude > 0 || g.period > 0 || g.peak > 0))
        xml_fail(&L->x, c, g.amplitude > 0 ? "amplitude" : g.period > 0 ? "period" : "peak",
                 "amplitude, period and peak apply to process=\"diurnal\" only");
    else if (f->diurnal_amplitude > 1) xml_fail(&L->x, c, "amplitude", "amplitude must be a fraction from 0 to 1");
    else if (!strcmp(z, "trace") && g.href == 0)
        xml_fail(&L->x, c, NULL, "process=\"trace\" needs href=\"requests.csv\" (time,input_tokens,output_tokens[,model])");
    else if (strcmp(z, "trace") && g.href > 0) xml_fail(&L->x, c, "href", "href applies to process=\"trace\" only");
    else if (strcmp(z, "trace") && (g.format > 0 || g.time_scale > 0 || g.skip > 0))
        xml_fail(&L->x, c, g.format > 0 ? "format" : g.time_scale > 0 ? "time-scale" : "skip",
                 "format, time-scale and skip apply to process=\"trace\" only");
    else if (g.href > 0) check_href(L, c, f->trace_href);
    return L->x.failed ? -1 : 0;
}

static int parse_think_dist(const char *z) { return !strcmp(z, "fixed") ? 0 : !strcmp(z, "exponential") ? 1 : -1; }

/* The closed-loop attributes of <arrivals>: users, think-time,
 * think-distribution (exponential by default). */
static void load_closed(loader *L, const xmlNode *c, sc_inference *f, arrivals_given *g) {
    strcpy(f->think_dist, "exponential");
    g->users = attr_int(&L->x, c, "users", &f->closed_users, 0, 1, 10000000);
    g->think = attr_unit(&L->x, c, "think-time", UNIT_DURATION, &f->think_time_s, 0, 0);
    if (attr_word(&L->x, c, "think-distribution", parse_think_dist, "fixed, exponential", NULL, f->think_dist,
                  sizeof f->think_dist, 0) > 0)
        g->think = 1;
}

/* <arrivals>: the process and its parameters; the request count when not
 * given (every row of a trace; until the duration ends; else 1000). */
static void load_arrivals(loader *L, const xmlNode *c, sc_inference *f) {
    arrivals_given g;
    f->arrivals_line = xml_line(&L->x, c);
    if (attr_word(&L->x, c, "process", parse_arrival_process, "offline, poisson, bursty, diurnal, trace, closed", NULL,
                  f->arrival_process, sizeof f->arrival_process, 1) < 0)
        return;
    g.rate = attr_unit(&L->x, c, "rate", UNIT_RATE, &f->rate_per_s, 0, 1);
    g.count = attr_i64(&L->x, c, "count", &f->count, 0, 1, 1e9);
    attr_unit(&L->x, c, "start", UNIT_DURATION, &f->arrival_start_s, 0, 0);
    g.duration = attr_unit(&L->x, c, "duration", UNIT_DURATION, &f->arrival_duration_s, 0, 1);
    g.cv = attr_unit(&L->x, c, "cv", UNIT_NUMBER, &f->arrival_cv, 0, 1);
    g.amplitude = attr_unit(&L->x, c, "amplitude", UNIT_NUMBER, &f->diurnal_amplitude, 0, 0);
    g.period = attr_unit(&L->x, c, "period", UNIT_DURATION, &f->diurnal_period_s, 0, 1);
    g.peak = attr_unit(&L->x, c, "peak", UNIT_DURATION, &f->diurnal_peak_s, 0, 0);
    g.href = attr_str(&L->x, c, "href", f->trace_href, sizeof f->trace_href, 0);
    load_closed(L, c, f, &g);
    if (L->x.failed || load_trace_options(L, c, f, &g) < 0 || check_closed(L, c, f, g) < 0 ||
        check_arrivals(L, c, f, g) < 0)
        return;
    if (!g.count && !strcmp(f->arrival_process, "trace")) f->count = 0;   /* every row */
    else if (!g.count && !g.duration) f->count = 1000;
    else if (!g.count) f->count = 0;                                     /* until the duration ends */
}

/* <requests>' shared prefixes and conversations (docs/prefix-caching.md):
 * each attribute but prefix-tokens and sessions refines one of them. */
static void load_request_prefixes(loader *L, const xmlNode *c, sc_inference *f) {
    int pt = attr_int(&L->x, c, "prefix-tokens", &f->prefix_tokens, 0, 1, 100000000);
    int np = attr_int(&L->x, c, "prefixes", &f->prefixes, 0, 1, 100000000);
    int sh = attr_unit(&L->x, c, "prefix-share", UNIT_NUMBER, &f->prefix_share, 0, 0);
    int zf = attr_unit(&L->x, c, "prefix-zipf", UNIT_NUMBER, &f->prefix_zipf, 0, 0);
    int ns = attr_int(&L->x, c, "sessions", &f->sessions, 0, 1, 10000000);
    int nt = attr_int(&L->x, c, "turns", &f->turns, 0, 1, 1000000);
    int order = 0;
    attr_word(&L->x, c, "prefix-order", parse_prefix_order, "drawn, shuffled, grouped", &order, f->prefix_order,
              sizeof f->prefix_order, 0);
    if (L->x.failed) return;
    if (sh > 0 && f->prefix_share > 1) xml_fail(&L->x, c, "prefix-share", "prefix-share must be a fraction from 0 to 1");
    else if (zf > 0 && f->prefix_zipf > 10) xml_fail(&L->x, c, "prefix-zipf", "prefix-zipf must be from 0 to 10");
    else if (!pt && (np > 0 || sh > 0 || zf > 0))
        xml_fail(&L->x, c, np > 0 ? "prefixes" : sh > 0 ? "prefix-share" : "prefix-zipf",
                 "prefixes, prefix-share and prefix-zipf need prefix-tokens (the shared prompt's length)");
    else if (!ns && nt > 0) xml_fail(&L->x, c, "turns", "turns needs sessions (conversations open at once)");
    else if (order > 0 && (!pt || ns > 0 || f->prefix_share < 1 || f->prefix_zipf > 0))
        xml_fail(&L->x, c, "prefix-order", "prefix-order=\"%s\" deals every request one of the prompts: it needs "
                 "prefix-tokens, and no sessions, prefix-share or prefix-zipf", f->prefix_order);
    else if (ns > 0 && !nt) xml_fail(&L->x, c, NULL, "sessions needs turns (turns of a conversation, e.g. turns=\"4\")");
}

void load_lengths(loader *L, const xmlNode *c, const load_length_fields *o) {
    attr_int(&L->x, c, "input-tokens", o->input_tokens, 0, 1, 100000000);
    attr_int(&L->x, c, "output-tokens", o->output_tokens, 0, 1, 100000000);
    attr_word(&L->x, c, "input-distribution", load_parse_length_dist, LOAD_LENGTH_DISTS, NULL, *o->input_dist,
              sizeof *o->input_dist, 0);
    attr_word(&L->x, c, "output-distribution", load_parse_length_dist, LOAD_LENGTH_DISTS, NULL, *o->output_dist,
              sizeof *o->output_dist, 0);
    attr_unit(&L->x, c, "input-cv", UNIT_NUMBER, o->input_cv, 0, 1);
    attr_unit(&L->x, c, "output-cv", UNIT_NUMBER, o->output_cv, 0, 1);
}

/* <requests>: prompt and output lengths and their distributions. */
static void load_requests(loader *L, const xmlNode *c, sc_inference *f) {
    load_length_fields o = { &f->input_tokens, &f->output_tokens, &f->input_dist, &f->output_dist, &f->input_cv,
                             &f->output_cv };
    load_lengths(L, c, &o);
    load_request_prefixes(L, c, f);
    long long len = (long long)f->prefix_tokens + f->input_tokens + f->output_tokens;
    if (!L->x.failed && f->model[0]) {
        const llm_spec *m = catalog_llm(L->s->cat, f->model);
        if (len > m->max_context)
            xml_fail(&L->x, c, NULL, "%sinput + output tokens (%lld) exceed %s's context of %d",
                     f->prefix_tokens ? "prefix + " : "", len, f->model, m->max_context);
    }
}

static void load_slo(loader *L, const xmlNode *c, sc_inference *f) {
    load_slo_bounds(L, c, &f->slo_ttft_s, &f->slo_tpot_s, &f->slo_e2e_s, &f->slo_percentile);
}

/* acceptance="0.8,0.6,0.5": one probability for every guess, or one per
 * guess (position i given the ones before were accepted). The count of
 * values given, or -1 with L failed. */
static int parse_acceptance(loader *L, const xmlNode *c, const char *z, double *a) {
    int n = 0;
    for (const char *p = z;; n++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0 && v <= 1) || n == SPEC_MAX_TOKENS) {
            xml_fail(&L->x, c, "acceptance", "acceptance must be up to %d probabilities from 0 to 1, comma-separated",
                     SPEC_MAX_TOKENS);
            return -1;
        }
        a[n] = v;
        while (*end == ' ') end++;
        if (*end == '\0') return n + 1;
        if (*end != ',') {
            xml_fail(&L->x, c, "acceptance", "acceptance must be probabilities separated by commas");
            return -1;
        }
        p = end + 1;
    }
}

/* <speculative method= draft-model= tokens= acceptance=>: speculative
 * decoding (docs/speculative-decoding.md). tokens defaults to the model's
 * MTP depth for mtp (vLLM reads n_predict from the checkpoint); a single
 * acceptance holds for every guess. The model checks wait for
 * check_speculative. */
static void load_speculative(loader *L, const xmlNode *c, sc_inference *f) {
    int v;
    char acc[256];
    f->spec_line = xml_line(&L->x, c);
    if (attr_word(&L->x, c, "method", spec_method_parse, "draft, mtp, eagle", &v, f->spec_method, sizeof f->spec_method,
                  1) < 0)
        return;
    int has_draft = attr_str(&L->x, c, "draft-model", f->spec_draft, sizeof f->spec_draft, 0);
    if (has_draft < 0 || (has_draft > 0 && !known_llm(L, c, "draft-model", f->spec_draft))) return;
    if (v == SPEC_DRAFT && !has_draft)
        FAIL_RETURN(L, c, NULL, "method=\"draft\" needs draft-model=\"...\" (a catalog preset, e.g. llama3.2-1b)");
    if (v != SPEC_DRAFT && has_draft)
        FAIL_RETURN(L, c, "draft-model", "draft-model applies to method=\"draft\" only");
    int has_k = attr_int(&L->x, c, "tokens", &f->spec_tokens, v != SPEC_MTP, 1, SPEC_MAX_TOKENS);
    if (has_k < 0 || attr_str(&L->x, c, "acceptance", acc, sizeof acc, 1) < 0) return;
    int n = parse_acceptance(L, c, acc, f->spec_accept);
    if (n < 0) return;
    if (!has_k) f->spec_tokens = n > 1 ? n : 0;          /* mtp: the model's depth (check_speculative) */
    if (n > 1 && f->spec_tokens && n != f->spec_tokens)
        FAIL_RETURN(L, c, "acceptance", "acceptance gives %d values for %d tokens; give one, or one per token", n,
                    f->spec_tokens);
    for (int i = n; n == 1 && i < SPEC_MAX_TOKENS; i++) f->spec_accept[i] = f->spec_accept[0];
}

/* <speculative> against the service: one model, continuous batching, an
 * MTP module for mtp, a draft that shares the target's vocabulary. */
static void check_speculative(loader *L, const xmlNode *e, sc_inference *f) {
    const xmlNode *c = e->children;
    while (c && !xml_is(c, "speculative")) c = c->next;
    const llm_spec *m = catalog_llm(L->s->cat, f->model);
    if (f->n_models > 1)
        FAIL_RETURN(L, c, NULL, "speculative decoding serves one model (model=), not %d <model> children", f->n_models);
    if (!strcmp(f->batching, "static")) FAIL_RETURN(L, c, NULL, "speculative decoding needs batching=\"continuous\"");
    if (!strcmp(f->spec_method, "mtp") && m->mtp_depth < 1)
        FAIL_RETURN(L, c, "method", "%s has no multi-token-prediction module (mtp-depth); use draft or eagle", f->model);
    if (!strcmp(f->spec_method, "mtp") && !f->spec_tokens) f->spec_tokens = m->mtp_depth;
    const llm_spec *d = f->spec_draft[0] ? catalog_llm(L->s->cat, f->spec_draft) : NULL;
    if (d && d->vocab != m->vocab)
        FAIL_RETURN(L, c, "draft-model", "%s's vocabulary (%d) is not %s's (%d); a draft must share the target's tokenizer",
                    f->spec_draft, d->vocab, f->model, m->vocab);
}

/* <autoscale>: replicas between min and max, following a metric. */
static void load_autoscale(loader *L, const xmlNode *c, sc_inference *f) {
    f->autoscale = 1;
    f->autoscale_line = xml_line(&L->x, c);
    strcpy(f->autoscale_metric, "queue");
    f->min_replicas = 1;
    f->max_replicas = f->replicas;
    f->autoscale_interval_s = 30;
    f->autoscale_startup_s = 120;
    f->autoscale_cooldown_s = 300;
    attr_word(&L->x, c, "metric", parse_scale_metric, "queue, concurrency, latency", NULL, f->autoscale_metric,
              sizeof f->autoscale_metric, 0);
    attr_int(&L->x, c, "min-replicas", &f->min_replicas, 0, 1, 1000000);
    attr_int(&L->x, c, "max-replicas", &f->max_replicas, 1, 1, 1000000);
    if (attr_unit(&L->x, c, "target", !strcmp(f->autoscale_metric, "latency") ? UNIT_DURATION : UNIT_NUMBER,
                  &f->autoscale_target, 1, 1) < 0)
        return;
    attr_unit(&L->x, c, "interval", UNIT_DURATION, &f->autoscale_interval_s, 0, 1);
    attr_unit(&L->x, c, "startup", UNIT_DURATION, &f->autoscale_startup_s, 0, 0);
    attr_unit(&L->x, c, "cooldown", UNIT_DURATION, &f->autoscale_cooldown_s, 0, 0);
    if (!L->x.failed && f->min_replicas > f->max_replicas)
        xml_fail(&L->x, c, "min-replicas", "min-replicas (%d) must not exceed max-replicas (%d)", f->min_replicas,
                 f->max_replicas);
}

/* ep= on a mixture-of-experts model: it shards the routed experts, so it
 * must divide them, and a replica of max(tp, ep) GPUs needs one of tp and
 * ep to divide the other (models/serving.h). */
static void check_ep(loader *L, const xmlNode *e, const sc_inference *f, const char *name, const llm_spec *m) {
    if (m->experts <= 1)
        xml_fail(&L->x, e, "ep", "ep shards a mixture of experts' experts; %s is a dense model (use tp)", name);
    else if (m->experts % f->ep != 0)
        xml_fail(&L->x, e, "ep", "ep must divide %s's %d experts", name, m->experts);
    else if (f->tp % f->ep != 0 && f->ep % f->tp != 0)
        xml_fail(&L->x, e, "ep", "one of tp (%d) and ep (%d) must divide the other", f->tp, f->ep);
}

/* The models served, once the children are read: model= or <model>
 * children (one child is the plain case), each with heads tp divides
 * and a context the requests fit. */
static void check_models(loader *L, const xmlNode *e, sc_inference *f, int has_model) {
    if (!has_model && f->n_models == 0)
        FAIL_RETURN(L, e, NULL, "give the model to serve: model=\"llama3-70b\" or <model preset=\"...\"/> children");
    if (has_model > 0 && f->n_models > 0) FAIL_RETURN(L, e, "model", "give model= or <model> children, not both");
    if (f->n_models == 1) {
        snprintf(f->model, sizeof f->model, "%s", f->models[0].model);
        f->precision = f->models[0].precision;
        f->kv_precision = f->models[0].kv_precision;
        f->n_models = 0;
    } else if (!f->model[0]) {
        snprintf(f->model, sizeof f->model, "%s", f->models[0].model);
    }
    for (int i = 0; i < (f->n_models ? f->n_models : 1) && !L->x.failed; i++) {
        const char *name = f->n_models ? f->models[i].model : f->model;
        const llm_spec *m = catalog_llm(L->s->cat, name);
        if (m->heads % f->tp != 0)
            xml_fail(&L->x, e, "tp", "tp must divide the model's %d attention heads", m->heads);
        else if (f->ep > 1)
            check_ep(L, e, f, name, m);
        else if (f->n_models && f->input_tokens + f->output_tokens > m->max_context)
            xml_fail(&L->x, e, NULL, "input + output tokens (%d) exceed %s's context of %d",
                     f->input_tokens + f->output_tokens, name, m->max_context);
    }
}

static int parse_kv_transfer(const char *z) { return !strcmp(z, "after") ? 0 : !strcmp(z, "layerwise") ? 1 : -1; }

/* disaggregated= and kv-transfer=; both pools start as the service's own
 * replicas, tp, ep, max-batch and token-budget (docs/disaggregated-serving.md). */
static void read_disagg(loader *L, const xmlNode *e, sc_inference *f) {
    strcpy(f->kv_transfer, "after");
    f->disaggregated_given = attr_bool(&L->x, e, "disaggregated", &f->disaggregated) > 0;
    int given = attr_word(&L->x, e, "kv-transfer", parse_kv_transfer, "after, layerwise", NULL, f->kv_transfer,
                          sizeof f->kv_transfer, 0);
    if (given > 0 && !f->disaggregated_given)
        xml_fail(&L->x, e, "kv-transfer", "kv-transfer applies to a disaggregated=\"true\" service");
    struct sc_serve_pool d = { f->replicas, f->tp, f->ep, f->max_batch, f->token_budget, 0 };
    f->prefill = f->decode = d;
}

/* <prefill> or <decode>: one pool of a disaggregated service. */
static void load_serve_pool(loader *L, const xmlNode *c, sc_inference *f) {
    const char *what = xml_is(c, "prefill") ? "prefill" : "decode";
    struct sc_serve_pool *p = xml_is(c, "prefill") ? &f->prefill : &f->decode;
    /* disaggregated="false" keeps the pools for a comparison (plan, sweep) and ignores them */
    if (!f->disaggregated_given)
        FAIL_RETURN(L, c, NULL, "<%s> needs disaggregated=\"true\" on its <inference>", what);
    p->line = xml_line(&L->x, c);
    attr_int(&L->x, c, "replicas", &p->replicas, 0, 1, 1000000);
    attr_int(&L->x, c, "tp", &p->tp, 0, 1, 64);
    attr_int(&L->x, c, "ep", &p->ep, 0, 1, 1024);
    attr_int(&L->x, c, "max-batch", &p->max_batch, 0, 1, 1000000);
    attr_int(&L->x, c, "token-budget", &p->token_budget, 0, 1, 100000000);
}

/* Once the model is known: each pool's tp and ep must split it as the
 * service's would (check_models), and what a disaggregated service does not
 * model yet is refused. */
static void check_disagg(loader *L, const xmlNode *e, sc_inference *f) {
    if (!f->disaggregated) return;
    if (f->autoscale)
        FAIL_RETURN(L, e, "disaggregated", "a disaggregated service does not autoscale; size its <prefill> and <decode> pools");
    if (f->n_models > 1)
        FAIL_RETURN(L, e, "disaggregated", "a disaggregated service serves one model, not %d <model> children", f->n_models);
    if (!strcmp(f->batching, "static"))
        FAIL_RETURN(L, e, "disaggregated", "a disaggregated service needs batching=\"continuous\"");
    const llm_spec *m = catalog_llm(L->s->cat, f->model);
    for (const xmlNode *c = e->children; c && !L->x.failed; c = c->next) {
        if (!xml_is(c, "prefill") && !xml_is(c, "decode")) continue;
        const struct sc_serve_pool *p = xml_is(c, "prefill") ? &f->prefill : &f->decode;
        sc_inference t = *f;
        t.tp = p->tp;
        t.ep = p->ep;
        if (m->heads % p->tp != 0) xml_fail(&L->x, c, "tp", "tp must divide the model's %d attention heads", m->heads);
        else if (p->ep > 1) check_ep(L, c, &t, f->model, m);
    }
}

void load_inference(loader *L, const xmlNode *e) {
    sc_inference *f = new_service(L, e);
    if (!f) return;
    int has_model = read_service_target(L, e, f);
    if (has_model < 0) return;
    read_service_engine(L, e, f);
    if (L->x.failed) return;
    read_service_stack(L, e, f);
    read_disagg(L, e, f);
    if (L->x.failed) return;
    int has_arrivals = 0;
    const xmlNode *rq = NULL;
    nameset_free(&L->served);                /* f->models by preset: this service's */
    for (const xmlNode *c = e->children; c && !L->x.failed; c = c->next) {
        if (xml_is(c, "arrivals")) {
            load_arrivals(L, c, f);
            has_arrivals = 1;
        } else if (xml_is(c, "requests")) {
            load_requests(L, c, f);
            rq = c;
        }
        else if (xml_is(c, "slo")) load_slo(L, c, f);
        else if (xml_is(c, "autoscale")) load_autoscale(L, c, f);
        else if (xml_is(c, "model")) load_serve_model(L, c, f, &L->served);
        else if (xml_is(c, "speculative")) load_speculative(L, c, f);
        else if (xml_is(c, "prefill") || xml_is(c, "decode")) load_serve_pool(L, c, f);
    }
    if (L->x.failed) return;
    if (!has_arrivals) f->count = 1000;
    if (rq && strcmp(f->prefix_order, "drawn") && (f->count <= 0 || !strcmp(f->arrival_process, "trace")))
        FAIL_RETURN(L, rq, "prefix-order", "prefix-order=\"%s\" deals a known number of requests: it needs "
                    "<arrivals count=> (and no trace)", f->prefix_order);
    check_models(L, e, f, has_model);
    if (!L->x.failed) load_serve_classes(L, e, f);
    if (!L->x.failed && f->spec_method[0]) check_speculative(L, e, f);
    if (!L->x.failed) check_disagg(L, e, f);
}
