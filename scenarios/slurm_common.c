/*
 * slurm_common: the version of a Slurm JSON document and the field readers
 * the Slurm readers share (see slurm_int.h; shapes in slurm.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "scenarios/slurm.h"
#include "scenarios/slurm_int.h"

#define SLURM_PARSER_MIN 38              /* Slurm 22.05's OpenAPI plugin (Debian 12) */
#define SLURM_PARSER_MAX 43              /* Slurm 25.05's newest data_parser */
#define SLURM_NO_VAL32 4294967294.0      /* NO_VAL, slurm/slurm.h.in: 0xfffffffe */
#define SLURM_INFINITE32 4294967295.0    /* INFINITE, slurm/slurm.h.in: 0xffffffff */

/* "data_parser/v0.0.41", "openapi/dbv0.0.38", "v0.0.43+complex": the NN of v0.0.NN; 0 none. */
static int parser_of(const char *z) {
    const char *p = z ? strstr(z, "v0.0.") : NULL;
    if (!p || !isdigit((unsigned char)p[5]) || !isdigit((unsigned char)p[6])) return 0;
    return (p[5] - '0') * 10 + (p[6] - '0');
}

static void read_release(slurm_doc *sd, const jv *meta) {
    const jv *rel = jv_path(meta, "Slurm", "release", NULL);
    if (!rel) rel = jv_path(meta, "slurm", "release", NULL);
    snprintf(sd->release, sizeof sd->release, "%s", jv_str(rel, ""));
}

int slurm_doc_open(slurm_doc *sd, const jsonin *d, const char *key, const jv **arr, char *err, size_t errlen) {
    memset(sd, 0, sizeof *sd);
    sd->d = d, sd->err = err, sd->errlen = errlen;
    const jv *root = jsonin_root(d), *meta = jv_get(root, "meta");
    const char *path = jsonin_path(d);
    if (jv_kind(root) != JV_OBJ)
        return errmsg_set(err, errlen, "%s:%d: expected a JSON object with \"meta\" and \"%s\" (Slurm's --json output)",
                      path, jv_line(root), key), -1;
    if (jv_kind(meta) != JV_OBJ)
        return errmsg_set(err, errlen, "%s:%d: meta: expected an object naming the Slurm version (is this Slurm's --json output?)",
                      path, jv_line(root)), -1;
    sd->parser = parser_of(jv_str(jv_path(meta, "plugin", "data_parser", NULL), NULL));
    if (!sd->parser) sd->parser = parser_of(jv_str(jv_path(meta, "plugins", "data_parser", NULL), NULL));
    if (!sd->parser) sd->parser = parser_of(jv_str(jv_path(meta, "plugin", "type", NULL), NULL));
    if (sd->parser < SLURM_PARSER_MIN || sd->parser > SLURM_PARSER_MAX)
        return errmsg_set(err, errlen,
                      "%s:%d: meta: expected plugin.data_parser (or 22.05's plugin.type) naming v0.0.%d to v0.0.%d "
                      "(Slurm 22.05 to 25.05)%s",
                      path, jv_line(meta), SLURM_PARSER_MIN, SLURM_PARSER_MAX,
                      sd->parser ? "; this version is not read" : ""), -1;
    read_release(sd, meta);
    return key ? slurm_doc_array(sd, key, arr) : 0;
}

int slurm_doc_array(slurm_doc *sd, const char *key, const jv **arr) {
    const jv *root = jsonin_root(sd->d);
    *arr = jv_get(root, key);
    if (jv_kind(*arr) != JV_ARR)
        return errmsg_set(sd->err, sd->errlen, "%s:%d: %s: expected an array (%s) for data parser v0.0.%d",
                          jsonin_path(sd->d), jv_line(*arr ? *arr : root), key,
                          *arr ? jv_kind_name(jv_kind(*arr)) : "absent", sd->parser), -1;
    return 0;
}

int slurm_doc_source(const slurm_doc *sd, live_cluster *c) {
    if (c->source && *c->source) return 0;
    char b[96];
    snprintf(b, sizeof b, "Slurm %s (data parser v0.0.%d)", sd->release[0] ? sd->release : "?", sd->parser);
    return live_set(&c->source, b);
}

int slurm_fail(const slurm_rec *r, const jv *v, const char *key, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = jv_line(v ? v : r->obj);
    errmsg_set(r->sd->err, r->sd->errlen, "%s:%d: %s[%d]%s%s: %s", jsonin_path(r->sd->d), line, r->arr, r->i,
           key ? "." : "", key ? key : "", msg);
    return -1;
}

const jv *slurm_field(const slurm_rec *r, const char *key) {
    const jv *v = r->obj;
    char part[64];
    for (const char *p = key; v && *p;) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        v = jv_get(v, part);
        p += n + (p[n] == '.');
    }
    return v;
}

int slurm_num(const slurm_rec *r, const char *key, double *x) {
    const jv *v = slurm_field(r, key);
    *x = 0;
    switch (jv_kind(v)) {
    case JV_NULL: return SLURM_UNSET;
    case JV_NUM:                             /* 22.05 dumps a uint32's NO_VAL and INFINITE as numbers */
        if (jv_num(v, 0) == SLURM_NO_VAL32) return SLURM_UNSET;
        if (jv_num(v, 0) == SLURM_INFINITE32) return SLURM_INFINITE;
        *x = jv_num(v, 0);
        return SLURM_SET;
    case JV_OBJ: {
        const jv *set = jv_get(v, "set"), *inf = jv_get(v, "infinite"), *num = jv_get(v, "number");
        if (jv_kind(num) != JV_NUM && jv_kind(num) != JV_NULL)
            return slurm_fail(r, v, key, "expected {\"set\",\"infinite\",\"number\"} with a number");
        if (jv_is_true(inf)) return SLURM_INFINITE;
        if (set && !jv_is_true(set)) return SLURM_UNSET;
        *x = jv_num(num, 0);
        return SLURM_SET;
    }
    default:
        return slurm_fail(r, v, key, "expected a number, null or {\"set\",\"infinite\",\"number\"}, not %s",
                          jv_kind_name(jv_kind(v)));
    }
}

int slurm_str(const slurm_rec *r, const char *key, const char **z) {
    const jv *v = slurm_field(r, key);
    *z = "";
    if (jv_kind(v) == JV_NULL) return 0;
    if (jv_kind(v) != JV_STR) return slurm_fail(r, v, key, "expected a string, not %s", jv_kind_name(jv_kind(v)));
    *z = jv_str(v, "");
    return 0;
}

static int add_word(char *words, size_t len, const char *w) {
    size_t n = strlen(words);
    if (n == 0 && len > 1) words[n++] = ' ', words[n] = 0;
    if (n + strlen(w) + 2 > len) return -1;
    for (; *w; w++) words[n++] = (char)toupper((unsigned char)*w);
    words[n++] = ' ';
    words[n] = 0;
    return 0;
}

int slurm_state_words(const slurm_rec *r, const char *key, int array_from, char *words, size_t len) {
    const jv *v = slurm_field(r, key);
    int want_array = r->sd->parser >= array_from;
    words[0] = 0;
    if (!want_array && jv_kind(v) == JV_STR) {
        if (add_word(words, len, jv_str(v, "")) < 0) return slurm_fail(r, v, key, "expected a shorter state");
        return 0;
    }
    if (!want_array || jv_kind(v) != JV_ARR || jv_len(v) == 0)
        return slurm_fail(r, v, key, "expected %s for data parser v0.0.%d", want_array ? "a non-empty array of state strings" : "a state string",
                          r->sd->parser);
    for (int i = 0; i < jv_len(v); i++) {
        const jv *w = jv_at(v, i);
        if (jv_kind(w) != JV_STR) return slurm_fail(r, w, key, "expected state strings, not %s", jv_kind_name(jv_kind(w)));
        if (add_word(words, len, jv_str(w, "")) < 0) return slurm_fail(r, w, key, "expected fewer states");
    }
    return 0;
}

int slurm_has_word(const char *words, const char *w) {
    char b[64];
    snprintf(b, sizeof b, " %s ", w);
    return strstr(words, b) != NULL;
}

/* Slurm's job states and flags (PARSER_FLAG_ARRAY(JOB_STATE), data_parser
 * v0.0.43 parsers.c; job_state_string, src/common/slurm_protocol_defs.c). */
static const char *const job_ended[] = { "COMPLETED", "COMPLETING", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
                                         "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "LAUNCH_FAILED",
                                         "STOPPED", "RECONFIG_FAIL", "REVOKED", "SIGNALING", "STAGE_OUT" };
static const char *const job_running[] = { "RUNNING", "CONFIGURING", "RESIZING", "SUSPENDED", "POWER_UP_NODE" };
static const char *const job_held[] = { "REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD" };
static const char *const job_pending[] = { "PENDING", "REQUEUED", "REQUEUE_FED", "UPDATE_DB", "EXPEDITING" };

static int any_of(const char *words, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (slurm_has_word(words, list[i])) return 1;
    return 0;
}

#define ANY(words, list) any_of(words, list, sizeof list / sizeof list[0])

int slurm_job_state(const char *words) {
    for (const char *p = words; *p;) {          /* every word must be a job state */
        while (*p == ' ') p++;
        size_t n = strcspn(p, " ");
        if (!n) break;
        char w[64];
        snprintf(w, sizeof w, " %.*s ", (int)(n < 60 ? n : 60), p);
        if (!ANY(w, job_ended) && !ANY(w, job_running) && !ANY(w, job_held) && !ANY(w, job_pending)) return -2;
        p += n;
    }
    if (ANY(words, job_held)) return LIVE_HELD;
    if (slurm_has_word(words, "COMPLETING") || ANY(words, job_ended)) return -1;
    if (ANY(words, job_running)) return LIVE_RUNNING;
    if (ANY(words, job_pending)) return LIVE_PENDING;
    return -2;
}

double slurm_minutes_s(int kind, double minutes) { return kind == SLURM_SET && minutes > 0 ? minutes * 60.0 : 0.0; }

static size_t name_hash(const char *z) {
    size_t h = 1469598103934665603ull;           /* FNV-1a, 64-bit */
    for (; *z; z++) h = (h ^ (unsigned char)*z) * 1099511628211ull;
    return h;
}

int slurm_index_find(const slurm_index *x, const char *z, slurm_name_fn name, const void *ctx) {
    if (!x->cap) return -1;
    for (size_t k = name_hash(z) & (x->cap - 1); x->slot[k]; k = (k + 1) & (x->cap - 1))
        if (!strcmp(name(ctx, x->slot[k] - 1), z)) return x->slot[k] - 1;
    return -1;
}

static void index_put(int *slot, size_t cap, const char *z, int i) {
    size_t k = name_hash(z) & (cap - 1);
    while (slot[k]) k = (k + 1) & (cap - 1);
    slot[k] = i + 1;
}

int slurm_index_add(slurm_index *x, int i, slurm_name_fn name, const void *ctx) {
    if (2 * (x->n + 1) > x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 1024;
        int *slot = calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t k = 0; k < x->cap; k++)
            if (x->slot[k]) index_put(slot, cap, name(ctx, x->slot[k] - 1), x->slot[k] - 1);
        free(x->slot);
        x->slot = slot, x->cap = cap;
    }
    index_put(x->slot, x->cap, name(ctx, i), i);
    x->n++;
    return 0;
}

void slurm_index_free(slurm_index *x) {
    free(x->slot);
    memset(x, 0, sizeof *x);
}

static const char *history_id(const void *ctx, int i) { return ((const live_cluster *)ctx)->history[i].id; }

static int history_set(live_history *h, const slurm_ended *e) {
    if (live_set(&h->id, e->id) || live_set(&h->name, e->name) || live_set(&h->user, e->user) ||
        live_set(&h->account, e->account) || live_set(&h->partition, e->partition) || live_set(&h->state, e->state) ||
        live_set(&h->node_list, e->nodes))
        return -1;
    h->submit_unix_s = e->submit, h->start_unix_s = e->start;
    h->run_s = e->elapsed_s > 0 ? e->elapsed_s : (e->end > e->start ? e->end - e->start : 0);
    h->limit_s = e->limit_s;
    h->gpus = e->gpus;
    return 0;
}

static int history_add(live_cluster *c, slurm_index *ids, const slurm_ended *e) {
    if (e->start <= 0 || e->gpus <= 0) return 0;
    int i = slurm_index_find(ids, e->id, history_id, c);
    if (i >= 0) {
        live_history *h = &c->history[i];
        h->attempts++;
        return e->start >= h->start_unix_s ? history_set(h, e) : 0;
    }
    live_history *h = live_add_history(c);
    if (!h || history_set(h, e) < 0) return -1;
    h->attempts = 1;
    return slurm_index_add(ids, c->n_history - 1, history_id, c);
}

int slurm_history_add(void *ctx, const slurm_ended *e, char *why, size_t whylen) {
    slurm_history_sink *k = ctx;
    if (history_add(k->c, &k->ids, e) == 0) return 0;
    snprintf(why, whylen, "out of memory");
    return -1;
}
