/*
 * slurm_gres: GPUs named in Slurm's TRES and GRES strings (slurm.h).
 *
 *   TRES (tres_req_str, tres_alloc_str, AllocTRES):  cpu=2,mem=16G,node=1,gres/gpu=8,gres/gpu:h100=8
 *   tres_per_node / tres_per_job:                    gres:gpu:8 (22.05), gres/gpu:h100:8 (23.02+), gres/gpu
 *   a node's GRES (sinfo gres, gres/total):          gpu:h100:8(S:0-1),gpu:a100:2(S:1)
 *
 * Formats: Slurm's src/common/slurmdb_defs.c (slurmdb_make_tres_string),
 * src/common/gres.c (gres_sock_str, the "(S:..)" suffix) and the
 * tres_per_* fields of PARSER_ARRAY(JOB_INFO) (data_parser parsers.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "scenarios/slurm.h"
#include "scenarios/slurm_int.h"

typedef struct gpu_sum {
    long untyped, typed;
    char *model;
    size_t modellen;
} gpu_sum;

static int all_digits(const char *z, size_t n) {
    if (n == 0 || n > 9) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)z[i])) return 0;
    return 1;
}

/* One item (no parenthesised suffix): "gres/gpu:h100=8", "gpu:8", "gres:gpu". */
static int one_item(gpu_sum *g, const char *it, size_t n, char *why, size_t whylen) {
    const char *whole = it;
    size_t whole_n = n;
    if (n > 5 && (!strncmp(it, "gres/", 5) || !strncmp(it, "gres:", 5))) it += 5, n -= 5;
    if (n < 3 || strncmp(it, "gpu", 3) || (n > 3 && it[3] != ':' && it[3] != '=')) return 0;
    const char *p = it + 3, *end = it + n;
    const char *type = NULL, *count = NULL;
    size_t type_n = 0;
    while (p < end) {                        /* tokens after ':' or '=' (a count after '=') */
        int after_eq = *p == '=';
        const char *t = ++p;
        while (p < end && *p != ':' && *p != '=') p++;
        if (all_digits(t, (size_t)(p - t)) && !count) count = t;
        else if (!type && !count && !after_eq) type = t, type_n = (size_t)(p - t);
        else return errmsg_set(why, whylen, "\"%.*s\": expected gpu[:TYPE][:=]COUNT with a whole COUNT", (int)whole_n, whole), -1;
    }
    long k = count ? strtol(count, NULL, 10) : 1;
    if (type && type_n) {
        g->typed += k;
        if (g->model && !g->model[0]) snprintf(g->model, g->modellen, "%.*s", (int)type_n, type);
    } else {
        g->untyped += k;
    }
    return 0;
}

long slurm_gpus_in(const char *list, char *model, size_t modellen, char *why, size_t whylen) {
    gpu_sum g = { 0, 0, model, modellen };
    if (model && modellen) model[0] = 0;
    for (const char *p = list ? list : ""; *p;) {
        const char *it = p;
        size_t n = 0;
        while (p[n] && p[n] != ',' && p[n] != '(') n++;
        const char *q = p + n;
        if (*q == '(') {                       /* "(S:0-1)" or "(IDX:0,2)": skip to its ')' */
            while (*q && *q != ')') q++;
            if (*q == ')') q++;
        }
        if (one_item(&g, it, n, why, whylen) < 0) return -1;
        p = *q == ',' ? q + 1 : q;
        if (*q && *q != ',') return errmsg_set(why, whylen, "\"%s\": expected items separated by commas", list), -1;
    }
    if (g.untyped > 1000000 || g.typed > 1000000)
        return errmsg_set(why, whylen, "\"%s\": expected at most 1,000,000 GPUs", list), -1;
    return g.untyped > 0 ? g.untyped : g.typed;
}

/* sacct's TRES list: [{"type":"gres","name":"gpu" or "gpu:h100","count":8}]. */
static int tres_list_gpus(const slurm_rec *r, const char *key, const jv *v, int *gpus, char *model, size_t modellen) {
    long untyped = 0, typed = 0;
    for (int i = 0; i < jv_len(v); i++) {
        const jv *t = jv_at(v, i), *cnt = jv_get(t, "count");
        if (jv_kind(t) != JV_OBJ) return slurm_fail(r, t, key, "expected TRES objects {\"type\",\"name\",\"count\"}");
        if (strcmp(jv_str(jv_get(t, "type"), ""), "gres")) continue;
        const char *name = jv_str(jv_get(t, "name"), "");
        if (strncmp(name, "gpu", 3) || (name[3] && name[3] != ':')) continue;
        if (jv_kind(cnt) != JV_NUM || jv_num(cnt, -1) < 0 || jv_num(cnt, 0) > 1e6)
            return slurm_fail(r, cnt ? cnt : t, key, "%s: expected a count of 0 to 1,000,000", name);
        if (name[3] == ':') {
            typed += (long)jv_num(cnt, 0);
            if (model && !model[0]) snprintf(model, modellen, "%s", name + 4);
        } else {
            untyped += (long)jv_num(cnt, 0);
        }
    }
    *gpus = (int)(untyped > 0 ? untyped : typed);
    return 0;
}

int slurm_tres_gpus(const slurm_rec *r, const char *key, int *gpus, char *model, size_t modellen) {
    const jv *v = slurm_field(r, key);
    *gpus = 0;
    if (model && modellen) model[0] = 0;
    if (jv_kind(v) == JV_ARR) return tres_list_gpus(r, key, v, gpus, model, modellen);
    const char *z;
    if (slurm_str(r, key, &z) < 0) return -1;
    char why[256];
    long n = slurm_gpus_in(z, model, modellen, why, sizeof why);
    if (n < 0) return slurm_fail(r, v, key, "%s", why);
    *gpus = (int)n;
    return 0;
}
