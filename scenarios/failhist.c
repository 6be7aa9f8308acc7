/*
 * failhist: a cluster's failure history from Slurm's records and GPU
 * telemetry (failhist.h).
 */
#include "scenarios/failhist.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "base/errmsg.h"
#include "base/grow.h"
#include "base/hostlist.h"
#include "scenarios/infile.h"
#include "scenarios/slurm.h"

static void add_time(failhist *h, double t) {
    if (!(t > 0)) return;
    if (h->t_first_s == 0 || t < h->t_first_s) h->t_first_s = t;
    if (t > h->t_last_s) h->t_last_s = t;
}

/* name into the set of nodes seen. 0, or -1 when memory runs out. */
static int add_node(failhist *h, const char *name) {
    if (!name[0] || (h->n_nodes && nameset_find(&h->node_set, NAMES(h->nodes, name), name) >= 0)) return 0;
    if (GROW(h->nodes, h->cap_nodes, (size_t)h->n_nodes + 1)) return -1;
    snprintf(h->nodes[h->n_nodes].name, sizeof h->nodes[0].name, "%s", name);
    if (nameset_add(&h->node_set, NAMES(h->nodes, name), h->n_nodes) < 0) return -1;
    h->n_nodes++;
    return 0;
}

/* Room for one more event (zeroed), or NULL. */
static failfit_event *new_event(failhist *h) {
    if (GROW(h->ev, h->cap, (size_t)h->n + 1)) return NULL;
    memset(&h->ev[h->n], 0, sizeof h->ev[0]);
    return &h->ev[h->n++];
}

/* The nodes of a hostlist, each added to h's set and the first
 * FAILFIT_NODES_MAX kept in an event. */
typedef struct node_sink { failhist *h; failfit_event *e; int oom; } node_sink;

static int sink_node(void *ctx, const char *name) {
    node_sink *s = ctx;
    if (add_node(s->h, name) < 0) return s->oom = 1;
    if (s->e && s->e->n_nodes < FAILFIT_NODES_MAX)
        snprintf(s->e->node[s->e->n_nodes++], FAILFIT_NODE_MAX, "%s", name);
    return 0;
}

/* Expand list into e's nodes (e may be NULL: only the set). 0, or -1 with
 * *why ("out of memory" or the hostlist's complaint). */
static int expand_nodes(failhist *h, failfit_event *e, const char *list, char *why, size_t len) {
    node_sink s = { h, e, 0 };
    if (!list[0] || !strcmp(list, "None assigned") || !strcmp(list, "(null)")) return 0;
    long n = hostlist_expand(list, sink_node, &s, why, len);
    if (s.oom) snprintf(why, len, "out of memory");
    return n < 0 || s.oom ? -1 : 0;
}

/* A Slurm time as text, "2026-11-03T14:20:11" read as UTC. 0 for none
 * ("Unknown", "None", empty); -1 when it is none of these. */
static double slurm_time_text(const char *z) {
    int64_t sec;
    double frac;
    int zone;
    if (!z[0] || !strcasecmp(z, "Unknown") || !strcasecmp(z, "None") || !strcmp(z, "0")) return 0;
    return datetime_parse(z, &sec, &frac, &zone) == 0 ? (double)sec + frac : -1;
}

void failhist_free(failhist *h) {
    if (!h) return;
    free(h->ev);
    free(h->nodes);
    nameset_free(&h->node_set);
    memset(h, 0, sizeof *h);
}

/* ---- Pipe-separated text (sacctmgr -P) --------------------- */

#define PIPE_MAX_COLS 8

typedef int (*row_fn)(failhist *h, char *const *field, int line, const char *path, char *err, size_t errlen);

/* The header's column of each wanted name (case-insensitive; -1 absent).
 * 0, or -1 when a required one (required: a bit per wanted name) is absent. */
static int pipe_header(char *line, const char *const *want, int n_want, unsigned required, int *col) {
    for (int w = 0; w < n_want; w++) col[w] = -1;
    int c = 0;
    for (char *tok = line, *next; tok; tok = next, c++) {
        next = strchr(tok, '|');
        if (next) *next++ = 0;
        for (int w = 0; w < n_want; w++)
            if (!strcasecmp(tok, want[w]) && col[w] < 0) col[w] = c;
    }
    for (int w = 0; w < n_want; w++)
        if ((required >> w & 1) && col[w] < 0) return -1;
    return 0;
}

/* The row's fields by wanted name (NULL when its column is absent). */
static void pipe_row(char *line, const int *col, int n_want, char **field) {
    char *cell[64];
    int n = 0;
    for (char *tok = line, *next; tok && n < 64; tok = next) {
        next = strchr(tok, '|');
        if (next) *next++ = 0;
        cell[n++] = tok;
    }
    for (int w = 0; w < n_want; w++) field[w] = col[w] >= 0 && col[w] < n ? cell[col[w]] : NULL;
}

static int read_pipe(failhist *h, const char *path, const char *const *want, int n_want, unsigned required,
                     const char *what, row_fn fn, char *err, size_t errlen) {
    infile_err e;
    FILE *f = infile_open(path, INFILE_TRACE_MAX_BYTES, what, &e);
    if (!f) {
        infile_say(&e, path, err, errlen);
        return -1;
    }
    char *line = NULL, *field[PIPE_MAX_COLS];
    size_t cap = 0;
    ssize_t len;
    int ln = 0, rc = 0, col[PIPE_MAX_COLS], header = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        ln++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!line[0]) continue;
        if (!header) {
            header = 1;
            if (pipe_header(line, want, n_want, required, col) < 0) {
                char names[256] = "";
                for (int w = 0; w < n_want; w++)
                    if (required >> w & 1) snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                                                    names[0] ? ", " : "", want[w]);
                errmsg_set(err, errlen, "%s:%d: expected a header line naming the columns %s (%s)", path, ln, names,
                           what);
                rc = -1;
            }
            continue;
        }
        pipe_row(line, col, n_want, field);
        rc = fn(h, field, ln, path, err, errlen);
    }
    if (rc == 0 && !header) rc = -1, errmsg_set(err, errlen, "%s:1: expected a header line (%s); the file is empty",
                                                path, what);
    free(line);
    fclose(f);
    return rc;
}

/* A time field of row ln; -1 with err when it is not one. */
static double row_time(const char *z, const char *col, int ln, const char *path, char *err, size_t errlen) {
    double t = slurm_time_text(z ? z : "");
    if (t < 0) errmsg_set(err, errlen, "%s:%d: %s \"%s\": expected a time like 2026-11-03T14:20:11 or Unknown", path, ln,
                          col, z);
    return t;
}

/* sacctmgr show event -P: NodeName|TimeStart|TimeEnd|State|Reason. */
static int event_row(failhist *h, char *const *f, int ln, const char *path, char *err, size_t errlen) {
    if (!f[0] || !f[0][0]) return 0;                       /* a cluster event */
    double t0 = row_time(f[1], "TimeStart", ln, path, err, errlen), t1;
    if (t0 < 0 || (t1 = row_time(f[2], "TimeEnd", ln, path, err, errlen)) < 0) return -1;
    if (t0 == 0) {
        errmsg_set(err, errlen, "%s:%d: TimeStart: expected the time the node went down", path, ln);
        return -1;
    }
    add_time(h, t0), add_time(h, t1);
    failfit_event proto;
    memset(&proto, 0, sizeof proto);
    char why[160];
    if (expand_nodes(h, &proto, f[0], why, sizeof why) < 0) {
        errmsg_set(err, errlen, "%s:%d: NodeName \"%s\": %s", path, ln, f[0], why);
        return -1;
    }
    for (int i = 0; i < proto.n_nodes; i++) {
        failfit_event *e = new_event(h);
        if (!e) return errmsg_set(err, errlen, "%s:0: out of memory", path), -1;
        e->t_s = t0, e->down_s = t1 > t0 ? t1 - t0 : 0, e->source = FAILFIT_SRC_REASON;
        e->c = failfit_reason(f[4] ? f[4] : "");
        e->n_nodes = 1;
        snprintf(e->node[0], FAILFIT_NODE_MAX, "%s", proto.node[i]);
    }
    return 0;
}

int failhist_read_events(failhist *h, const char *path, char *err, size_t errlen) {
    static const char *const want[] = { "NodeName", "TimeStart", "TimeEnd", "State", "Reason" };
    return read_pipe(h, path, want, 5, 0x17, "sacctmgr show event -P", event_row, err, errlen);
}

/* One ended job of sacct (slurm_sacct_each): its nodes are watched; a
 * NODE_FAIL end is an event on its first nodes. */
static int sacct_job(void *ctx, const slurm_ended *j, char *why, size_t whylen) {
    failhist *h = ctx;
    h->jobs++;
    add_time(h, j->start), add_time(h, j->end);
    int nf = !strcmp(j->state, "NODE_FAIL") && j->end > 0;
    failfit_event *e = nf ? new_event(h) : NULL;
    char list_why[160];
    if (nf && !e) return snprintf(why, whylen, "out of memory"), -1;
    if (expand_nodes(h, e, j->nodes, list_why, sizeof list_why) < 0)
        return snprintf(why, whylen, "NodeList \"%s\": %s", j->nodes, list_why), -1;
    if (!e) return 0;
    h->node_fail_jobs++;
    e->t_s = j->end, e->source = FAILFIT_SRC_NODE_FAIL;
    e->c = (failfit_class){ REL_NODE, "node failure (NODE_FAIL job end)", 1, REL_MTTR_REBOOT_S };
    return 0;
}

int failhist_read_sacct_json(failhist *h, const char *path, char *err, size_t errlen) {
    return slurm_sacct_file_each(path, 0, SLURM_SACCT_FOR_FAILURES, sacct_job, h, err, errlen);
}

int failhist_read_sacct_text(failhist *h, const char *path, char *err, size_t errlen) {
    return slurm_sacct_file_each(path, 1, SLURM_SACCT_FOR_FAILURES, sacct_job, h, err, errlen);
}

/* ---- Nodes now (sinfo --json, scontrol show nodes --json) ------------- */

/* Slurm's one sinfo reader (slurm_sinfo.c, every data parser): each node
 * is watched, its GPUs give the fleet's, and a node down or drained with
 * a reason is an event at the time the reason was set. */
int failhist_read_sinfo(failhist *h, const char *path, char *err, size_t errlen) {
    live_cluster c;
    memset(&c, 0, sizeof c);
    int rc = slurm_read_file(path, SLURM_SINFO, 0, &c, err, errlen);
    for (int i = 0; rc == 0 && i < c.n_nodes; i++) {
        const live_node *nd = &c.nodes[i];
        int down = nd->state != LIVE_UP && nd->reason[0] && nd->since_unix_s > 0;
        failfit_event *e = NULL;
        if (add_node(h, nd->name) < 0 || (down && !(e = new_event(h)))) {
            errmsg_set(err, errlen, "%s:0: out of memory", path);
            rc = -1;
            break;
        }
        if (nd->gpus > h->sinfo_gpus_per_node) h->sinfo_gpus_per_node = nd->gpus;
        if (!e) continue;
        e->t_s = nd->since_unix_s, e->source = FAILFIT_SRC_REASON, e->c = failfit_reason(nd->reason), e->n_nodes = 1;
        snprintf(e->node[0], FAILFIT_NODE_MAX, "%s", nd->name);
        add_time(h, nd->since_unix_s);
    }
    if (rc == 0 && c.n_nodes > h->sinfo_nodes) h->sinfo_nodes = c.n_nodes;
    live_free(&c);
    return rc;
}

/* ---- Telemetry --------------------------------------------------------- */

int failhist_add_dcgm(failhist *h, const dcgm_event *ev, int n) {
    for (int i = 0; i < n; i++) {
        failfit_event *e = new_event(h);
        if (!e || add_node(h, ev[i].host) < 0) return -1;
        int xid = ev[i].metric == DCGM_XID ? ev[i].xid : ev[i].metric == DCGM_ECC_DBE ? 48 : 64;
        e->t_s = ev[i].t_s, e->source = FAILFIT_SRC_XID, e->c = failfit_xid(xid), e->n_nodes = 1;
        snprintf(e->node[0], FAILFIT_NODE_MAX, "%s", ev[i].host);
        add_time(h, ev[i].t_s);
    }
    return 0;
}
