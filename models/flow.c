/*
 * flow: max-min fair sharing of links among flows (progressive filling),
 * and an event-driven run of flows to their ends. See flow.h for the model,
 * its sources and its cost.
 *
 * A solve builds, for every link, the set of live flows through it (a
 * compressed array: counts, prefix sums, members), then fills: the link
 * with the smallest fair share (remaining capacity / unfrozen flows) is
 * taken off a heap, its unfrozen flows are frozen at that share, and the
 * other links of those flows lose the share from their capacity and one
 * flow from their count. A link's share never falls while filling (a flow
 * frozen at the smallest share takes at most its share from each other
 * link), so the heap is lazy: an entry whose link's share has grown since
 * it was pushed is pushed again with the new share.
 */
#include "models/flow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct flow_rec {
    int path[FLOW_PATH_MAX];
    int len;
    double size, left, rate, end_s;
    int done;
} flow_rec;

typedef struct heap_ent { double key; int link; } heap_ent;

struct flow_net {
    double *cap;                 /* per link */
    int n_links, links_cap;
    flow_rec *f;
    int n_flows, flows_cap;
    /* Scratch of a solve, sized to the links and flows. */
    int *cnt, *start, *pos, *members, *live;
    double *rem;
    unsigned char *frozen;
    heap_ent *heap;
    int scratch_links, scratch_flows, heap_cap;
};

/* A relative tolerance for "this flow has ended" and "this share grew":
 * far above double rounding (1e-16) after the thousands of subtractions a
 * large solve makes, far below any figure reported (4 significant digits). */
#define FLOW_REL_EPS 1e-9

flow_net *flow_net_new(void) {
    return calloc(1, sizeof(flow_net));
}

void flow_net_free(flow_net *n) {
    if (!n) return;
    free(n->cap);
    free(n->f);
    free(n->cnt);
    free(n->start);
    free(n->pos);
    free(n->members);
    free(n->live);
    free(n->rem);
    free(n->frozen);
    free(n->heap);
    free(n);
}

/* Grow *p (elements of size sz, capacity *cap) to hold need: 0, or -1. */
static int grow(void **p, int *cap, int need, size_t sz) {
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * sz);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

int flow_link_add(flow_net *n, double cap_bytes_per_s) {
    if (!n || !(cap_bytes_per_s > 0) || !isfinite(cap_bytes_per_s)) return -1;
    if (grow((void **)&n->cap, &n->links_cap, n->n_links + 1, sizeof *n->cap) < 0) return -1;
    n->cap[n->n_links] = cap_bytes_per_s;
    return n->n_links++;
}

int flow_link_count(const flow_net *n) { return n ? n->n_links : 0; }

double flow_link_cap(const flow_net *n, int link) {
    return n && link >= 0 && link < n->n_links ? n->cap[link] : 0;
}

int flow_add(flow_net *n, const int *path, int len, double bytes) {
    if (!n || !path || len < 1 || len > FLOW_PATH_MAX || !(bytes >= 0) || !isfinite(bytes)) return -1;
    for (int i = 0; i < len; i++)
        if (path[i] < 0 || path[i] >= n->n_links) return -1;
    if (grow((void **)&n->f, &n->flows_cap, n->n_flows + 1, sizeof *n->f) < 0) return -1;
    flow_rec *r = &n->f[n->n_flows];
    memset(r, 0, sizeof *r);
    memcpy(r->path, path, (size_t)len * sizeof *path);
    r->len = len;
    r->size = r->left = bytes;
    return n->n_flows++;
}

int flow_count(const flow_net *n) { return n ? n->n_flows : 0; }

void flow_clear(flow_net *n) {
    if (n) n->n_flows = 0;
}

double flow_rate(const flow_net *n, int flow) {
    return n && flow >= 0 && flow < n->n_flows ? n->f[flow].rate : 0;
}

double flow_end_s(const flow_net *n, int flow) {
    return n && flow >= 0 && flow < n->n_flows ? n->f[flow].end_s : 0;
}

/* Scratch arrays for the current links and flows: 0, or -1. */
static int scratch(flow_net *n) {
    int L = n->n_links, F = n->n_flows;
    if (L > n->scratch_links) {
        int *a = realloc(n->cnt, (size_t)L * sizeof *a), *b = a ? realloc(n->start, (size_t)(L + 1) * sizeof *b) : NULL;
        if (a) n->cnt = a;
        if (b) n->start = b;
        int *c = b ? realloc(n->pos, (size_t)L * sizeof *c) : NULL;
        if (c) n->pos = c;
        double *d = c ? realloc(n->rem, (size_t)L * sizeof *d) : NULL;
        if (!d) return -1;
        n->rem = d;
        n->scratch_links = L;
    }
    if (F > n->scratch_flows) {
        int *m = realloc(n->members, (size_t)F * FLOW_PATH_MAX * sizeof *m);
        if (m) n->members = m;
        int *l = m ? realloc(n->live, (size_t)F * sizeof *l) : NULL;
        if (l) n->live = l;
        unsigned char *z = l ? realloc(n->frozen, (size_t)F) : NULL;
        if (!z) return -1;
        n->frozen = z;
        n->scratch_flows = F;
    }
    return grow((void **)&n->heap, &n->heap_cap, L + F + 1, sizeof *n->heap);
}

/* ---- a binary min-heap of (share, link), ties to the lower link --------- */

static int ent_less(heap_ent a, heap_ent b) {
    return a.key < b.key || (a.key == b.key && a.link < b.link);
}

static void heap_push(heap_ent *h, int *size, heap_ent e) {
    int i = (*size)++;
    while (i > 0 && ent_less(e, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static heap_ent heap_pop(heap_ent *h, int *size) {
    heap_ent top = h[0], last = h[--(*size)];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *size) break;
        if (c + 1 < *size && ent_less(h[c + 1], h[c])) c++;
        if (!ent_less(h[c], last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*size > 0) h[i] = last;
    return top;
}

/* ---- the solve -------------------------------------------------------------- */

/* The per-link sets of the nf live flows n->live[0..nf-1]. */
static void link_sets(flow_net *n, int nf) {
    int L = n->n_links;
    memset(n->cnt, 0, (size_t)L * sizeof *n->cnt);
    for (int i = 0; i < nf; i++) {
        const flow_rec *r = &n->f[n->live[i]];
        for (int k = 0; k < r->len; k++) n->cnt[r->path[k]]++;
    }
    n->start[0] = 0;
    for (int l = 0; l < L; l++) {
        n->start[l + 1] = n->start[l] + n->cnt[l];
        n->pos[l] = n->start[l];
        n->rem[l] = n->cap[l];
    }
    for (int i = 0; i < nf; i++) {
        int id = n->live[i];
        const flow_rec *r = &n->f[id];
        for (int k = 0; k < r->len; k++) n->members[n->pos[r->path[k]]++] = id;
        n->frozen[id] = 0;
    }
}

/* Freeze the unfrozen flows of link l at share s. */
static void freeze_link(flow_net *n, int l, double s) {
    for (int m = n->start[l]; m < n->start[l + 1]; m++) {
        int id = n->members[m];
        if (n->frozen[id]) continue;
        flow_rec *r = &n->f[id];
        n->frozen[id] = 1;
        r->rate = s;
        for (int k = 0; k < r->len; k++) {
            int o = r->path[k];
            n->rem[o] = n->rem[o] > s ? n->rem[o] - s : 0;
            n->cnt[o]--;
        }
    }
}

/* Rates of the nf flows in n->live. */
static void fill(flow_net *n, int nf) {
    link_sets(n, nf);
    int hs = 0;
    for (int l = 0; l < n->n_links; l++)
        if (n->cnt[l] > 0) heap_push(n->heap, &hs, (heap_ent){ n->rem[l] / n->cnt[l], l });
    while (hs > 0) {
        heap_ent e = heap_pop(n->heap, &hs);
        int l = e.link;
        if (n->cnt[l] <= 0) continue;
        double share = n->rem[l] / n->cnt[l];
        if (share > e.key * (1 + FLOW_REL_EPS)) {   /* grew since pushed */
            heap_push(n->heap, &hs, (heap_ent){ share, l });
            continue;
        }
        freeze_link(n, l, share);
    }
}

/* Collect the flows not done into n->live: how many. */
static int collect_live(flow_net *n) {
    int nf = 0;
    for (int i = 0; i < n->n_flows; i++)
        if (!n->f[i].done) n->live[nf++] = i;
    return nf;
}

int flow_solve(flow_net *n) {
    if (!n || scratch(n) < 0) return -1;
    fill(n, collect_live(n));
    return 0;
}

/* Advance the nf live flows by dt to time t; flows that end leave the
 * live list. The new count. */
static int advance(flow_net *n, int nf, double dt, double t) {
    int kept = 0;
    for (int i = 0; i < nf; i++) {
        flow_rec *r = &n->f[n->live[i]];
        r->left -= r->rate * dt;
        if (r->left <= r->size * FLOW_REL_EPS) {
            r->left = 0;
            r->done = 1;
            r->end_s = t;
        } else {
            n->live[kept++] = n->live[i];
        }
    }
    return kept;
}

double flow_run(flow_net *n, int *events) {
    if (events) *events = 0;
    if (!n || scratch(n) < 0) return -1;
    for (int i = 0; i < n->n_flows; i++) {
        flow_rec *r = &n->f[i];
        r->left = r->size;
        r->done = !(r->size > 0);
        r->end_s = r->rate = 0;
    }
    int nf = collect_live(n);
    double t = 0;
    while (nf > 0) {
        fill(n, nf);
        if (events) (*events)++;
        double dt = INFINITY;
        for (int i = 0; i < nf; i++) {
            const flow_rec *r = &n->f[n->live[i]];
            double d = r->left / r->rate;
            if (d < dt) dt = d;
        }
        t += dt;
        nf = advance(n, nf, dt, t);
    }
    return t;
}
