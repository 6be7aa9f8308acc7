/*
 * Stand-in for NCCL, built only for tests as build/tests/libstandin-nccl.so:
 * one process, ncclCommInitAll communicators over host memory. Collectives
 * issued between ncclGroupStart and ncclGroupEnd are queued and carried out
 * at ncclGroupEnd, when every rank's part is known (float32 sums; send and
 * recv matched by peer). Enough for the nccl backend's logic and to check
 * that the data moves as nccl-tests sizes it.
 */
#include <stdlib.h>
#include <string.h>

typedef struct comm { int rank, n; } comm;
enum { AR, AG, RS, BC, SEND, RECV };
typedef struct op { int kind, rank, peer, root; const void *s; void *r; size_t count; } op;
static op q[4096];
static int nq, depth;

int ncclGetVersion(int *v) { *v = 22304; return 0; }
const char *ncclGetErrorString(int e) { return e ? "stand-in NCCL error" : "no error"; }
int ncclCommInitAll(void **comms, int n, const int *devs) {
    (void)devs;
    for (int i = 0; i < n; i++) {
        comm *c = malloc(sizeof *c);
        if (!c) return 1;
        c->rank = i;
        c->n = n;
        comms[i] = c;
    }
    return 0;
}
int ncclCommDestroy(void *c) { free(c); return 0; }
int ncclGroupStart(void) { depth++; return 0; }

static int push(int kind, const void *s, void *r, size_t count, int peer, int root, void *c) {
    if (nq >= 4096) return 1;
    q[nq++] = (op){ kind, ((comm *)c)->rank, peer, root, s, r, count };
    return 0;
}

static void run(void) {
    int n = 0;
    for (int i = 0; i < nq; i++) if (q[i].rank + 1 > n) n = q[i].rank + 1;
    for (int i = 0; i < nq; i++) {
        op *o = &q[i];
        if (o->kind == AR || o->kind == RS) {        /* sum over the ranks' ops of this kind, in order */
            size_t total = o->kind == AR ? o->count : o->count * (size_t)n;
            float *sum = calloc(total ? total : 1, sizeof *sum);
            int k = 0;
            for (int j = i; j < nq && k < n; j++)
                if (q[j].kind == o->kind) {
                    for (size_t e = 0; e < total; e++) sum[e] += ((const float *)q[j].s)[e];
                    k++;
                }
            k = 0;
            for (int j = i; j < nq && k < n; j++)
                if (q[j].kind == o->kind) {
                    if (o->kind == AR) memcpy(q[j].r, sum, total * sizeof *sum);
                    else memcpy(q[j].r, sum + (size_t)q[j].rank * o->count, o->count * sizeof *sum);
                    q[j].kind = -1;
                    k++;
                }
            free(sum);
        } else if (o->kind == AG) {
            int k = 0;
            for (int j = i; j < nq && k < n; j++)
                if (q[j].kind == AG) {
                    for (int m = i; m < nq; m++)
                        if (q[m].kind == AG)
                            memcpy((float *)q[j].r + (size_t)q[m].rank * q[m].count, q[m].s, q[m].count * sizeof(float));
                    k++;
                }
            for (int j = i; j < nq; j++) if (q[j].kind == AG) q[j].kind = -1;
        } else if (o->kind == BC) {
            const void *src = NULL;
            for (int j = i; j < nq; j++) if (q[j].kind == BC && q[j].rank == q[j].root) src = q[j].s;
            for (int j = i; j < nq; j++)
                if (q[j].kind == BC) {
                    if (src) memmove(q[j].r, src, q[j].count * sizeof(float));
                    q[j].kind = -1;
                }
        } else if (o->kind == SEND) {
            for (int j = 0; j < nq; j++)
                if (q[j].kind == RECV && q[j].rank == o->peer && q[j].peer == o->rank) {
                    memcpy(q[j].r, o->s, o->count);
                    q[j].kind = -1;
                    break;
                }
            o->kind = -1;
        }
    }
    nq = 0;
}

int ncclGroupEnd(void) {
    if (--depth == 0) run();
    return 0;
}
int ncclAllReduce(const void *s, void *r, size_t count, int dt, int op_, void *c, void *st) {
    (void)st; (void)op_;
    if (dt != 7) return 2;
    int rc = push(AR, s, r, count, 0, 0, c);
    if (!depth) run();
    return rc;
}
int ncclAllGather(const void *s, void *r, size_t count, int dt, void *c, void *st) {
    (void)st;
    if (dt != 7) return 2;
    int rc = push(AG, s, r, count, 0, 0, c);
    if (!depth) run();
    return rc;
}
int ncclReduceScatter(const void *s, void *r, size_t count, int dt, int op_, void *c, void *st) {
    (void)st; (void)op_;
    if (dt != 7) return 2;
    int rc = push(RS, s, r, count, 0, 0, c);
    if (!depth) run();
    return rc;
}
int ncclBroadcast(const void *s, void *r, size_t count, int dt, int root, void *c, void *st) {
    (void)st;
    if (dt != 7) return 2;
    int rc = push(BC, s, r, count, 0, root, c);
    if (!depth) run();
    return rc;
}
int ncclSend(const void *s, size_t count, int dt, int peer, void *c, void *st) {
    (void)st; (void)dt;
    return push(SEND, s, NULL, count, peer, 0, c);
}
int ncclRecv(void *r, size_t count, int dt, int peer, void *c, void *st) {
    (void)st; (void)dt;
    return push(RECV, NULL, r, count, peer, 0, c);
}
