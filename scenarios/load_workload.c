/*
 * load_workload: the <workload> section's batch work. <training> (a model
 * preset or explicit shape, the parallel plan, length in steps or tokens,
 * where it runs, <checkpoint>), <jobs> (groups of generic batch jobs with
 * an arrival process) and one <trace> (a job-trace CSV, read by
 * scenarios/trace.c). <inference> services are read by load_inference.c.
 *
 * Elements load in document order: a <trace>'s jobs come between the
 * <jobs> groups before it and those after (scenario.trace_after).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenarios/load.h"
#include "scenarios/jobtrace.h"
#include "scenarios/trace.h"

static void load_model(loader *L, const xmlNode *e, sc_training *t) {
    scenario *s = L->s;
    llm_spec *m = &t->model;
    catalog_defaults(catalog_fields_llm, m);
    if (attr_str(&L->x, e, "preset", t->preset, sizeof t->preset, 0) > 0) {
        const llm_spec *p = catalog_llm(s->cat, t->preset);
        if (!p) {
            char names[1024];
            catalog_names(s->cat, "llm", names, sizeof names);
            xml_fail(&L->x, e, "preset", "unknown model preset; expected one of: %s", names);
            return;
        }
        *m = *p;
    } else {
        snprintf(m->name, sizeof m->name, "%.*s", (int)sizeof m->name - 1, t->name);
    }
    int req = t->preset[0] == 0;
    attr_int(&L->x, e, "layers", &m->layers, req, 1, 100000);
    attr_int(&L->x, e, "hidden", &m->hidden, req, 1, 10000000);
    attr_int(&L->x, e, "ffn-hidden", &m->ffn_hidden, req, 1, 100000000);
    attr_int(&L->x, e, "heads", &m->heads, req, 1, 100000);
    if (attr_int(&L->x, e, "kv-heads", &m->kv_heads, 0, 1, 100000) == 0 && req) m->kv_heads = m->heads;
    attr_int(&L->x, e, "vocab", &m->vocab, req, 1, 100000000);
    /* Not given on a model without a preset: -1, and models/transformer.c
     * infers it (gated unless ffn-hidden = 4 x hidden). */
    if (attr_bool(&L->x, e, "gated-ffn", &m->gated_ffn) == 0 && req) m->gated_ffn = -1;
    if (L->x.failed) return;
    if (m->kv_heads == 0) m->kv_heads = m->heads;
    if (m->hidden % m->heads != 0)
        xml_fail(&L->x, e, "heads", "hidden (%d) must be a multiple of heads", m->hidden);
    else if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
        xml_fail(&L->x, e, "kv-heads", "heads (%d) must be a multiple of kv-heads", m->heads);
}

/* weights=, master-weights=, optimizer=: what the checkpoint holds, over
 * the defaults for the run's precision (models/checkpoint.h). */
static void load_checkpoint_contents(loader *L, const xmlNode *e, ckpt_choice *ch, precision compute) {
    ckpt_choice_default(ch);
    int v;
    if (attr_enum(&L->x, e, "weights", ckpt_weights_parse, "bf16, fp16, fp32, none", &v) > 0) ch->weights = v;
    if (attr_enum(&L->x, e, "optimizer", ckpt_optimizer_parse, "adam, sgd, adafactor, none", &v) > 0) ch->optimizer = v;
    if (attr_bool(&L->x, e, "master-weights", &v) > 0) ch->master_weights = v;
    ckpt_contents k;
    char why[200];
    if (!L->x.failed && ckpt_contents_choose(&k, compute, ch, why, sizeof why) < 0)
        xml_fail(&L->x, e, "weights", "%s", why);
}

static void load_checkpoint(loader *L, const xmlNode *e, sc_checkpoint *c, precision compute) {
    char z[32];
    c->present = 1;
    c->line = xml_line(&L->x, e);
    strcpy(c->mode, "sync");
    strcpy(c->layout, "sharded");
    c->interval_auto = 1;
    if (attr_str(&L->x, e, "interval", z, sizeof z, 0) > 0 && strcmp(z, "auto") != 0) {
        c->interval_auto = 0;
        attr_unit(&L->x, e, "interval", UNIT_DURATION, &c->interval_s, 0, 1);
    }
    attr_str(&L->x, e, "mode", c->mode, sizeof c->mode, 0);
    attr_str(&L->x, e, "layout", c->layout, sizeof c->layout, 0);
    if (attr_str(&L->x, e, "gather", z, sizeof z, 0) > 0) c->streaming_gather = !strcmp(z, "streaming");
    load_checkpoint_contents(L, e, &c->contents, compute);
}

static int parse_attention(const char *z) {
    if (!strcmp(z, "fused")) return 0;
    if (!strcmp(z, "unfused")) return 1;
    return -1;
}

/* stack="NAME" (a <stack> of the catalog; "auto" or absent: inferred,
 * train_plan_auto_stack) and fp8-recipe= (only with precision="fp8"). */
static void read_stack(loader *L, const xmlNode *e, train_plan *p) {
    char z[CATALOG_NAME_MAX], why[256];
    if (attr_str(&L->x, e, "stack", z, sizeof z, 0) > 0 && strcmp(z, "auto") != 0) {
        const stack_spec *k = stack_find(L->s->cat, z);
        if (!k) {
            char names[1024];
            catalog_names(L->s->cat, "stack", names, sizeof names);
            xml_fail(&L->x, e, "stack", "unknown software stack \"%s\"; expected auto or one of: %s", z, names);
            return;
        }
        if (stack_check(k, why, sizeof why) < 0) {
            xml_fail(&L->x, e, "stack", "%s", why);
            return;
        }
        p->stack = *k;
        p->stack_given = 1;
    }
    int v;
    if (attr_enum(&L->x, e, "fp8-recipe", fp8_recipe_parse, "delayed, tensorwise, rowwise, mxfp8, blockwise", &v) > 0) {
        if (v == FP8_NONE) xml_fail(&L->x, e, "fp8-recipe", "expected delayed, tensorwise, rowwise, mxfp8 or blockwise");
        else if (p->precision != PREC_FP8)
            xml_fail(&L->x, e, "fp8-recipe", "an FP8 recipe needs precision=\"fp8\" (precision is %s)",
                     precision_name(p->precision));
        else p->fp8_recipe = v;
    }
}

/* recompute-modules="layernorm moe_act": Megatron-Core's --recompute-modules
 * (models/stack.h, SELECTIVE_MODULES), under recompute="selective" only. */
static void read_recompute_modules(loader *L, const xmlNode *e, train_plan *p) {
    char z[64];
    if (attr_str(&L->x, e, "recompute-modules", z, sizeof z, 0) <= 0) return;
    int mask = recompute_modules_parse(z);
    if (mask < 0)
        xml_fail(&L->x, e, "recompute-modules", "expected layernorm, moe_act or both (Megatron-Core's module names)");
    else if (p->recompute != RECOMPUTE_SELECTIVE)
        xml_fail(&L->x, e, "recompute-modules", "recompute modules need recompute=\"selective\" (recompute is %s)",
                 recompute_name(p->recompute));
    else {
        p->selective = SELECTIVE_MODULES;
        p->recompute_modules = mask;
    }
}

/* Expert parallelism (models/train_moe.h): ep=, etp=, expert-imbalance=,
 * capacity-factor=, route-nodes=, moe-overlap=, moe-dispatcher=; and fp4-recipe= (only with
 * precision="fp4"). Checked against the model by train_plan_check. */
static void read_moe(loader *L, const xmlNode *e, train_plan *p) {
    int v;
    p->moe_overlap = (moe_overlap)-1;       /* not given: train_plan_defaults decides */
    attr_int(&L->x, e, "ep", &p->ep, 0, 1, 1000000);
    attr_int(&L->x, e, "etp", &p->etp, 0, 1, 1024);
    if (attr_unit(&L->x, e, "expert-imbalance", UNIT_COUNT, &p->expert_imbalance, 0, 1) > 0 &&
        p->expert_imbalance < 1)
        xml_fail(&L->x, e, "expert-imbalance", "expected tokens of the busiest expert GPU over the mean: 1 or more");
    attr_unit(&L->x, e, "capacity-factor", UNIT_COUNT, &p->capacity_factor, 0, 1);
    attr_int(&L->x, e, "route-nodes", &p->route_nodes, 0, 1, 100000);
    if (attr_enum(&L->x, e, "moe-overlap", moe_overlap_parse, "none, a2a, dualpipe", &v) > 0)
        p->moe_overlap = (moe_overlap)v;
    if (attr_enum(&L->x, e, "moe-dispatcher", moe_dispatcher_parse, "flex, alltoall", &v) > 0)
        p->moe_dispatcher = (moe_dispatcher)v;
    read_recompute_modules(L, e, p);
    if (attr_enum(&L->x, e, "fp4-recipe", fp4_recipe_parse, "nvfp4, mxfp4", &v) > 0) {
        if (p->precision != PREC_FP4)
            xml_fail(&L->x, e, "fp4-recipe", "an FP4 recipe needs precision=\"fp4\" (precision is %s)",
                     precision_name(p->precision));
        else p->fp4_recipe = v;
    }
}

/* A new <training>'s name, checked unique. NULL with L failed. */
static sc_training *new_training(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_training *t = PUSH(L, s->training, s->n_training, e);
    if (!t) return NULL;
    t->line = xml_line(&L->x, e);
    if (attr_str(&L->x, e, "name", t->name, sizeof t->name, 1) < 0) return NULL;
    int dup = nameset_find(&L->training_names, NAMES(s->training, name), t->name);
    if (dup >= 0) {
        xml_fail(&L->x, e, "name", "a training job of this name is on line %d", s->training[dup].line);
        return NULL;
    }
    if (nameset_add(&L->training_names, NAMES(s->training, name), s->n_training - 1) < 0) {
        xml_fail(&L->x, e, NULL, "out of memory");
        return NULL;
    }
    return t;
}

/* after="name": a <training> earlier in the document that this one waits
 * for (Slurm's afterany, as a trace's after column: eligible once it ends,
 * however it ends). Earlier only, so no chain can wait for itself. */
static void read_after(loader *L, const xmlNode *e, sc_training *t) {
    scenario *s = L->s;
    char name[SC_NAME_MAX];
    if (attr_str(&L->x, e, "after", name, sizeof name, 0) <= 0) return;
    int k = nameset_find(&L->training_names, NAMES(s->training, name), name);
    if (k < 0 || k == s->n_training - 1)
        xml_fail(&L->x, e, "after", "expected the name of a <training> earlier in <workload>, got \"%s\"", name);
    else
        t->after = k + 1;
}

/* Which of the attributes that size a job were given (1), absent (0) or
 * wrong (-1). */
typedef struct given {
    int dp, gpus, tokens, steps;
} given;

/* The plan and the job's attributes, over the defaults of a plan not
 * given (train_plan_defaults decides what stays -1 or 0 here). */
static given read_training_attrs(loader *L, const xmlNode *e, sc_training *t) {
    train_plan *p = &t->plan;
    given g;
    p->tp = p->pp = p->cp = 1;
    p->dp = 0;
    p->micro_batch = 0;                     /* not given: the model picks (train_step) */
    p->precision = PREC_BF16;
    p->sharding = SHARD_NONE;
    p->recompute = RECOMPUTE_NONE;
    p->schedule = PP_1F1B;
    p->virtual_stages = 0;                  /* the model picks the interleaving */
    p->sequence_parallel = -1;              /* decided by train_plan_defaults */
    p->attn_unfused = -1;                   /* decided by train_plan_defaults */
    int v;
    attr_int(&L->x, e, "tp", &p->tp, 0, 1, 1024);
    attr_int(&L->x, e, "pp", &p->pp, 0, 1, 4096);
    attr_int(&L->x, e, "cp", &p->cp, 0, 1, 4096);
    g.dp = attr_int(&L->x, e, "dp", &p->dp, 0, 1, 10000000);
    g.gpus = attr_int(&L->x, e, "gpus", &t->gpus, 0, 1, 100000000);
    if (attr_enum(&L->x, e, "sharding", sharding_parse, "none, zero1, zero2, fsdp", &v) > 0) p->sharding = (sharding)v;
    if (attr_enum(&L->x, e, "recompute", recompute_parse, "none, selective, full", &v) > 0) p->recompute = (recompute)v;
    if (attr_enum(&L->x, e, "precision", precision_parse, "bf16, fp16, fp8, fp4, fp32, tf32", &v) > 0) p->precision = (precision)v;
    if (attr_enum(&L->x, e, "pipeline-schedule", pp_schedule_parse, "1f1b, interleaved, dualpipe", &v) > 0) {
        p->schedule = (pp_schedule)v;
        if (p->schedule != PP_INTERLEAVED) p->virtual_stages = 1;
    }
    attr_int(&L->x, e, "virtual-stages", &p->virtual_stages, 0, 1, 1024);
    attr_bool(&L->x, e, "sequence-parallel", &p->sequence_parallel);
    /* async-tp: 1 on, -1 off (vanilla TP); absent, 0: the stack's TP overlap. */
    int async_tp = 0;
    if (attr_bool(&L->x, e, "async-tp", &async_tp) > 0) p->async_tp = async_tp ? 1 : -1;
    if (attr_enum(&L->x, e, "attention", parse_attention, "fused, unfused", &v) > 0) p->attn_unfused = v;
    read_stack(L, e, p);
    read_moe(L, e, p);
    attr_int(&L->x, e, "micro-batch", &p->micro_batch, 0, 1, 1000000);
    attr_int(&L->x, e, "seq-len", &p->seq_len, 0, 1, 100000000);
    g.tokens = attr_unit(&L->x, e, "tokens", UNIT_COUNT, &t->tokens, 0, 1);
    g.steps = attr_i64(&L->x, e, "steps", &t->steps, 0, 1, 1e15);
    attr_str(&L->x, e, "storage", t->storage, sizeof t->storage, 0);
    attr_str(&L->x, e, "node-type", t->node_type, sizeof t->node_type, 0);
    load_queue_ref(L, e, t->queue, sizeof t->queue, &t->priority);
    attr_unit(&L->x, e, "submit", UNIT_DURATION, &t->submit_s, 0, 0);
    attr_bool(&L->x, e, "elastic", &t->elastic);
    attr_unit(&L->x, e, "timeout", UNIT_DURATION, &t->timeout_s, 0, 1);
    read_after(L, e, t);
    return g;
}

/* gpus = tp*pp*dp*cp: dp from gpus when only gpus is given; the job's
 * length given one way. 0, or -1 with L failed. */
static int size_plan(loader *L, const xmlNode *e, sc_training *t, given g) {
    train_plan *p = &t->plan;
    int tpc = p->tp * p->pp * p->cp;
    if (!g.dp && !g.gpus) {
        xml_fail(&L->x, e, NULL, "give gpus or dp (gpus = tp*pp*dp*cp)");
        return -1;
    }
    if (!g.dp) {
        if (t->gpus % tpc != 0) {
            xml_fail(&L->x, e, "gpus", "gpus must be a multiple of tp*pp*cp = %d", tpc);
            return -1;
        }
        p->dp = t->gpus / tpc;
    }
    long long prod = (long long)tpc * p->dp;
    if (prod > 100000000) xml_fail(&L->x, e, "dp", "tp*pp*dp*cp = %lld GPUs is too many", prod);
    else if (g.gpus && prod != t->gpus)
        xml_fail(&L->x, e, "gpus", "gpus must equal tp*pp*dp*cp = %d*%d*%d*%d = %lld", p->tp, p->pp, p->dp, p->cp, prod);
    if (L->x.failed) return -1;
    t->gpus = (int)prod;

    if (g.tokens > 0 && g.steps > 0) xml_fail(&L->x, e, "steps", "give steps or tokens, not both");
    else if (g.tokens <= 0 && g.steps <= 0)
        xml_fail(&L->x, e, NULL, "give the job's length as steps=\"N\" or tokens=\"15.6T\"");
    return L->x.failed ? -1 : 0;
}

/* Sequence length (the model's context up to 4K by default; longer is a
 * warning) and global batch (a multiple of dp * micro-batch). 0, or -1
 * with L failed. */
static int size_batch(loader *L, const xmlNode *e, sc_training *t) {
    scenario *s = L->s;
    train_plan *p = &t->plan;
    if (!p->seq_len) p->seq_len = t->model.max_context < 4096 ? t->model.max_context : 4096;
    if (t->model.max_context > 0 && p->seq_len > t->model.max_context) {
        /* A warning, not an error: training past the pretrained context is
         * what context extension does (Llama 3.1 went from 8K to 128K in
         * continued pretraining), and the step model still holds; but a
         * planner who meant the published model should know. */
        size_t n = strlen(s->warnings);
        snprintf(s->warnings + n, sizeof s->warnings - n,
                 "%s:%d: warning: <training name=\"%s\" seq-len=\"%d\">: longer than the context of %s (%d "
                 "tokens); that is context extension, not the published model\n",
                 L->x.file, xml_line(&L->x, e), t->name, p->seq_len, t->model.name, t->model.max_context);
    }
    int has_gb = attr_int(&L->x, e, "global-batch", &p->global_batch, 0, 1, 100000000);
    if (has_gb < 0) return -1;
    int mb = p->micro_batch > 0 ? p->micro_batch : 1;
    if (!has_gb) p->global_batch = p->dp * mb * (p->pp > 1 ? 4 * p->pp : 1);
    if (p->global_batch % (p->dp * mb) != 0)
        xml_fail(&L->x, e, "global-batch", "global-batch must be a multiple of dp*micro-batch = %d", p->dp * mb);
    else if (p->schedule == PP_1F1B && p->virtual_stages > 1)
        xml_fail(&L->x, e, "virtual-stages", "virtual-stages > 1 needs pipeline-schedule=\"interleaved\"");
    return L->x.failed ? -1 : 0;
}

/* Where it runs: a node type of the cluster (the first <nodes>' by
 * default) with GPUs enough (or a cloud of that type to rent from), and
 * storage for its checkpoints. 0, or -1 with L failed. */
static int place_training(loader *L, const xmlNode *e, sc_training *t) {
    scenario *s = L->s;
    if (!t->node_type[0] && s->n_nodes > 0) snprintf(t->node_type, sizeof t->node_type, "%s", s->nodes[0].type);
    if (s->n_nodes == 0) {
        xml_fail(&L->x, e, NULL, "the cluster has no <nodes> to run on");
        return -1;
    }
    if (!loader_known_node(L, e, "node-type", t->node_type)) return -1;
    long long avail = loader_gpus_of_type(L, t->node_type);
    if (t->gpus > avail && !(s->has_cloud && !strcmp(s->cloud_node_type, t->node_type)))
        xml_fail(&L->x, e, "gpus", "needs %d GPUs of node type %s, the cluster has %lld", t->gpus, t->node_type, avail);
    else if (t->checkpoint.present && !t->storage[0] && s->n_storage == 0)
        xml_fail(&L->x, e, NULL, "<checkpoint> needs somewhere to write: a <storage> in <cluster> (and storage=\"name\" here)");
    else if (t->storage[0] &&
             (!s->n_storage || nameset_find(&L->storage_names, NAMES(s->storage, name), t->storage) < 0))
        xml_fail(&L->x, e, "storage", "no <storage name=\"%s\"> in <cluster>", t->storage);
    return L->x.failed ? -1 : 0;
}

/* <training>: read, sized, placed, its length in steps and tokens, and the
 * plan checked against the model (train_plan_check). */
static void load_training(loader *L, const xmlNode *e) {
    sc_training *t = new_training(L, e);
    if (!t) return;
    train_plan *p = &t->plan;
    given g = read_training_attrs(L, e, t);
    if (L->x.failed) return;
    for (const xmlNode *c = e->children; c && !L->x.failed; c = c->next) {
        if (xml_is(c, "model")) load_model(L, c, t);
        else if (xml_is(c, "checkpoint")) load_checkpoint(L, c, &t->checkpoint, p->precision);
    }
    if (L->x.failed || size_plan(L, e, t, g) < 0 || size_batch(L, e, t) < 0 || place_training(L, e, t) < 0) return;
    if (g.tokens > 0) {
        double per_step = (double)p->global_batch * p->seq_len;
        double steps = ceil(t->tokens / per_step);
        if (steps > 1e15) FAIL_RETURN(L, e, "tokens", "tokens give more than 1e15 steps");
        t->steps = (int64_t)steps;
    } else {
        t->tokens = (double)t->steps * p->global_batch * p->seq_len;
    }
    train_plan_model_defaults(p, &t->model);
    train_plan_defaults(p);
    char why[256];
    if (train_plan_check(&t->model, p, why, sizeof why) < 0) xml_fail(&L->x, e, NULL, "%s", why);
}

/* gpus="1:0.6,8:0.3,64:0.1": a size distribution (the weights need not
 * sum to 1). Returns 1 when the attribute is such a list (parsed or
 * failed), 0 when it is a plain count. j->gpus becomes the largest size. */
static int load_gpu_sizes(loader *L, const xmlNode *e, sc_jobs *j) {
    xmlChar *v = xmlGetProp(e, (const xmlChar *)"gpus");
    if (!v || !strchr((const char *)v, ':')) {
        xmlFree(v);
        return 0;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", (const char *)v);
    xmlFree(v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *colon = strchr(tok, ':');
        double size = 0, w = 0;
        char why[64];
        if (!colon || j->n_sizes == 16) goto bad;
        *colon = 0;
        if (units_parse(tok, UNIT_COUNT, &size, why, sizeof why) < 0 || size < 1 || size != floor(size) || size > 1e7 ||
            units_parse(colon + 1, UNIT_NUMBER, &w, why, sizeof why) < 0 || !(w > 0))
            goto bad;
        j->sizes[j->n_sizes] = (int)size;
        j->size_weights[j->n_sizes++] = w;
        if (size > j->gpus) j->gpus = (int)size;
    }
    if (j->n_sizes > 0) return 1;
bad:
    xml_fail(&L->x, e, "gpus", "gpus must be a count, or sizes with weights like \"1:0.6,8:0.3,64:0.1\" (at most 16)");
    return 1;
}

static void load_jobs(loader *L, const xmlNode *e) {
    scenario *s = L->s;
    sc_jobs *j = PUSH(L, s->jobs, s->n_jobs, e);
    if (!j) return;
    j->line = xml_line(&L->x, e);
    strcpy(j->arrivals, "poisson");
    strcpy(j->duration_distribution, "fixed");
    if (attr_str(&L->x, e, "name", j->name, sizeof j->name, 1) < 0) return;
    int dup = nameset_find(&L->jobs_names, NAMES(s->jobs, name), j->name);
    if (dup >= 0) FAIL_RETURN(L, e, "name", "a <jobs> of this name is on line %d", s->jobs[dup].line);
    if (nameset_add(&L->jobs_names, NAMES(s->jobs, name), s->n_jobs - 1) < 0) FAIL_RETURN(L, e, NULL, "out of memory");
    attr_int(&L->x, e, "count", &j->count, 1, 1, 10000000);
    attr_str(&L->x, e, "arrivals", j->arrivals, sizeof j->arrivals, 0);
    int has_rate = attr_unit(&L->x, e, "rate", UNIT_RATE, &j->rate_per_s, 0, 1);
    if (!load_gpu_sizes(L, e, j)) attr_int(&L->x, e, "gpus", &j->gpus, 1, 1, 100000000);
    attr_unit(&L->x, e, "duration", UNIT_DURATION, &j->duration_s, 1, 1);
    attr_str(&L->x, e, "duration-distribution", j->duration_distribution, sizeof j->duration_distribution, 0);
    load_queue_ref(L, e, j->queue, sizeof j->queue, &j->priority);
    attr_unit(&L->x, e, "timeout", UNIT_DURATION, &j->timeout_s, 0, 1);
    if (!L->x.failed && has_rate == 0 && strcmp(j->arrivals, "poisson") == 0)
        xml_fail(&L->x, e, NULL, "arrivals=\"poisson\" needs a rate (e.g. rate=\"6/h\")");
    if (!L->x.failed && j->gpus > L->cluster_gpus && !s->has_cloud)
        xml_fail(&L->x, e, "gpus", "a job needs %d GPUs, the cluster has %lld", j->gpus, L->cluster_gpus);
}


/* <trace>'s reading options (scenarios/jobtrace.h): format, time-scale,
 * skip, count, procs-per-gpu; all absent: the project's CSV as ever. 0, or
 * -1 with L failed. */
static int load_trace_read(loader *L, const xmlNode *e) {
    sc_trace_read *tr = &L->s->trace_read;
    int count = 0;
    attr_word(&L->x, e, "format", jobtrace_format_parse, JOBTRACE_FORMATS, NULL, tr->format, sizeof tr->format, 0);
    attr_unit(&L->x, e, "time-scale", UNIT_NUMBER, &tr->time_scale, 0, 1);
    attr_unit(&L->x, e, "skip", UNIT_DURATION, &tr->skip_s, 0, 0);
    if (attr_int(&L->x, e, "count", &count, 0, 1, 10000000) > 0) tr->count = count;
    if (attr_unit(&L->x, e, "procs-per-gpu", UNIT_NUMBER, &tr->procs_per_gpu, 0, 1) > 0 && !L->x.failed &&
        strcmp(tr->format, "swf") && strcmp(tr->format, "auto"))
        xml_fail(&L->x, e, "procs-per-gpu", "procs-per-gpu applies to format=\"swf\" (the Parallel Workloads "
                 "Archive's processors) only");
    return L->x.failed ? -1 : 0;
}

void load_workload(loader *L, const xmlNode *sec) {
    scenario *s = L->s;
    /* The history first: the trace's jobs look up their user's ratios. */
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next)
        if (xml_is(e, "runtime-history")) load_runtime_history(L, e);
    for (const xmlNode *e = sec->children; e && !L->x.failed; e = e->next) {
        if (xml_is(e, "training")) load_training(L, e);
        else if (xml_is(e, "jobs")) load_jobs(L, e);
        else if (xml_is(e, "inference")) load_inference(L, e);
        else if (xml_is(e, "trace")) {
            if (s->trace_href[0]) FAIL_RETURN(L, e, NULL, "only one <trace> per workload");
            if (attr_str(&L->x, e, "href", s->trace_href, sizeof s->trace_href, 1) < 0) return;
            if (load_trace_read(L, e) < 0) return;
            if (s->n_nodes == 0) FAIL_RETURN(L, e, NULL, "the cluster has no <nodes> to run the trace on");
            if (trace_load(s, s->trace_href, xml_line(&L->x, e), L->x.err, L->x.errlen) < 0) {
                L->x.failed = 1;
                return;
            }
        }
    }
}
