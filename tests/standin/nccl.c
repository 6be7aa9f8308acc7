/*
 * Stand-in for NCCL, built only for tests as build/tests/libstandin-nccl.so.
 * It is not NVIDIA's library: it runs on host memory, no GPU is involved,
 * and it implements only the entry points hw/nccl.c uses. Collectives
 * issued between ncclGroupStart and ncclGroupEnd are queued and carried out
 * at ncclGroupEnd, when every rank's part is known (float32 sums; send and
 * recv matched by peer), so the data moves as nccl-tests sizes it.
 *
 * One process: ncclCommInitAll makes communicators over this process's
 * "GPUs".
 *
 * Across processes (one machine): ncclGetUniqueId returns a new random id
 * on every call, and ncclCommInitRank(comm, nranks, id, rank) joins the
 * communicator the id names through files in CT_STANDIN_NCCL_DIR (else
 * $TMPDIR, else /tmp): a control block (mmap'd, C11 atomics) where ranks
 * register and meet at barriers, and one data file per rank. Init waits
 * (inside a group: at ncclGroupEnd) until all nranks distinct ranks have
 * joined, so ranks holding different ids (a missing broadcast) never meet
 * and fail after CT_STANDIN_NCCL_TIMEOUT_S seconds (default 10). An id this
 * library did not make, a rank out of range, a rank joining twice or a
 * different nranks fail at once (and make the others fail at their next
 * wait). Collectives on such communicators combine the ranks' data for
 * real: each rank writes its part to its data file, all meet, each reads
 * what it needs (sums, gathered parts, the root's buffer, its peers'
 * sends), all meet again. Every rank must issue the same collectives in the
 * same order, as with NCCL; a mismatch is an error. CT_STANDIN_NCCL_WRONG=1
 * makes the one-process sums wrong by 1 at float 0 (a faulty library, for
 * testing the backend's result check). ncclGetErrorString
 * returns the last error's message. The last rank to leave removes the
 * files.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ncclResult_t values */
enum { E_OK = 0, E_SYSTEM = 2, E_INTERNAL = 3, E_INVALID = 4, E_USAGE = 5, E_REMOTE = 6 };

static char last_error[512];

static int fail_with(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_with(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(last_error, sizeof last_error, "stand-in NCCL: ");
    vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

#define ID_BYTES 128
typedef struct ncclUniqueId { char internal[ID_BYTES]; } ncclUniqueId;
#define ID_MAGIC "ct-standin-nccl-id:"

#define MAXR 64                      /* ranks of one communicator */
#define MAXE (2 * MAXR + 8)          /* operations of one rank in one group */

typedef struct entry { int kind, peer, root; long long count, off, bytes; } entry;

/* The control block every rank of a communicator maps. */
typedef struct shared {
    atomic_int nranks, joined, left, failed, count, gen;
    atomic_int taken[MAXR];
    int nent[MAXR];                  /* written by the rank, read by others after a barrier */
    entry ent[MAXR][MAXE];
} shared;

/* One communicator as this process sees it (shared by its local ranks). */
typedef struct world {
    char base[256];                  /* files' path prefix */
    shared *S;
    int refs;
    int fd[MAXR];                    /* data files (own: read-write), -1 until opened */
    struct world *next;
} world;
static world *worlds;

typedef struct comm { int rank, n; world *w; } comm;
enum { AR, AG, RS, BC, SEND, RECV };
typedef struct op { int kind, rank, peer, root; const void *s; void *r; size_t count; comm *c; } op;
static op q[4096], sq[4096];
static int nq, depth;
static comm *pending[256];           /* ncclCommInitRank inside a group: waited for at ncclGroupEnd */
static int npending;

int ncclGetVersion(int *v) { *v = 22304; return 0; }
const char *ncclGetErrorString(int e) { return e == 0 ? "no error" : last_error[0] ? last_error : "stand-in NCCL error"; }
int ncclCommInitAll(void **comms, int n, const int *devs) {
    (void)devs;
    for (int i = 0; i < n; i++) {
        comm *c = calloc(1, sizeof *c);
        if (!c) return E_SYSTEM;
        c->rank = i;
        c->n = n;
        comms[i] = c;
    }
    return 0;
}
int ncclGroupStart(void) { depth++; return 0; }

static int push(int kind, const void *s, void *r, size_t count, int peer, int root, void *c) {
    if (!c) return fail_with(E_INVALID, "NULL communicator");
    if (nq >= 4096) return fail_with(E_INTERNAL, "more than 4096 operations queued");
    q[nq++] = (op){ kind, ((comm *)c)->rank, peer, root, s, r, count, c };
    return 0;
}

/* ---- across processes ------------------------------------------------------ */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double timeout_s(void) {
    const char *z = getenv("CT_STANDIN_NCCL_TIMEOUT_S");
    return z && atof(z) > 0 ? atof(z) : 10;
}

/* Wait until *v >= want (or S->failed, or the time-out). */
static int wait_for(shared *S, atomic_int *v, int want, const char *what, const char *base) {
    double end = now() + timeout_s();
    struct timespec nap = { 0, 50000 };
    while (atomic_load(v) < want) {
        if (atomic_load(&S->failed))
            return fail_with(E_REMOTE, "%s: another rank of communicator %s failed", what, base);
        if (now() > end) {
            atomic_store(&S->failed, 1);
            return fail_with(E_SYSTEM, "%s: timed out after %g s with %d of %d ranks of communicator %s there "
                             "(do all ranks hold the id rank 0's ncclGetUniqueId made?)",
                             what, timeout_s(), atomic_load(&S->joined), atomic_load(&S->nranks), base);
        }
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* All nranks meet; `arrive` local ranks arrive at once. */
static int barrier(world *W, int arrive, const char *what) {
    shared *S = W->S;
    int g = atomic_load(&S->gen), n = atomic_load(&S->nranks);
    if (atomic_load(&S->failed)) return fail_with(E_REMOTE, "%s: another rank of communicator %s failed", what, W->base);
    if (atomic_fetch_add(&S->count, arrive) + arrive >= n) {
        atomic_store(&S->count, 0);
        atomic_fetch_add(&S->gen, 1);
        return 0;
    }
    /* wait for the generation to move on: gen >= g + 1 */
    return wait_for(S, &S->gen, g + 1, what, W->base);
}

static world *world_get(const char *key, int *code) {
    const char *dir = getenv("CT_STANDIN_NCCL_DIR");
    if (!dir || !*dir) dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    char base[256];
    snprintf(base, sizeof base, "%s/ct-standin-nccl-%s", dir, key);
    for (world *W = worlds; W; W = W->next)
        if (!strcmp(W->base, base)) {
            W->refs++;
            return W;
        }
    world *W = calloc(1, sizeof *W);
    if (!W) {
        *code = fail_with(E_SYSTEM, "out of memory");
        return NULL;
    }
    snprintf(W->base, sizeof W->base, "%s", base);
    char path[300];
    snprintf(path, sizeof path, "%s.ctl", base);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)sizeof(shared)) < 0) {
        *code = fail_with(E_SYSTEM, "cannot create %s", path);
        if (fd >= 0) close(fd);
        free(W);
        return NULL;
    }
    void *p = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        *code = fail_with(E_SYSTEM, "cannot map %s", path);
        free(W);
        return NULL;
    }
    W->S = p;
    W->refs = 1;
    for (int i = 0; i < MAXR; i++) W->fd[i] = -1;
    W->next = worlds;
    worlds = W;
    return W;
}

static void world_put(world *W) {
    if (--W->refs > 0) return;
    for (world **pp = &worlds; *pp; pp = &(*pp)->next)
        if (*pp == W) {
            *pp = W->next;
            break;
        }
    for (int i = 0; i < MAXR; i++)
        if (W->fd[i] >= 0) close(W->fd[i]);
    munmap(W->S, sizeof(shared));
    free(W);
}

static void data_path(const world *W, int rank, char *buf, size_t len) { snprintf(buf, len, "%s.r%d", W->base, rank); }

int ncclGetUniqueId(ncclUniqueId *id) {
    static unsigned long long calls;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
                 (++calls * 0xBF58476D1CE4E5B9ull);
    x ^= x >> 31;                     /* splitmix64's finaliser */
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, ID_MAGIC "%016llx", (unsigned long long)x);
    return 0;
}

int ncclCommDestroy(void *p);

int ncclCommInitRank(void **out, int nranks, ncclUniqueId id, int rank) {
    *out = NULL;
    size_t ml = strlen(ID_MAGIC);
    if (strncmp(id.internal, ID_MAGIC, ml) || !memchr(id.internal, 0, ID_BYTES) || strlen(id.internal) != ml + 16)
        return fail_with(E_INVALID, "ncclCommInitRank(rank %d): the id was not made by this stand-in's "
                         "ncclGetUniqueId (was it broadcast to this rank?)", rank);
    if (nranks < 1 || nranks > MAXR)
        return fail_with(E_INVALID, "ncclCommInitRank: nranks=%d (the stand-in handles 1 to %d)", nranks, MAXR);
    if (rank < 0 || rank >= nranks)
        return fail_with(E_INVALID, "ncclCommInitRank: rank %d is out of range for nranks=%d", rank, nranks);
    if (npending >= 256) return fail_with(E_INTERNAL, "more than 256 ncclCommInitRank in one group");
    int code = 0;
    world *W = world_get(id.internal + ml, &code);
    if (!W) return code;
    shared *S = W->S;
    int expect = 0;
    if (!atomic_compare_exchange_strong(&S->nranks, &expect, nranks) && expect != nranks) {
        atomic_store(&S->failed, 1);
        world_put(W);
        return fail_with(E_INVALID, "ncclCommInitRank: rank %d joins with nranks=%d but communicator %s has "
                         "nranks=%d", rank, nranks, id.internal + ml, expect);
    }
    expect = 0;
    if (!atomic_compare_exchange_strong(&S->taken[rank], &expect, 1)) {
        atomic_store(&S->failed, 1);
        world_put(W);
        return fail_with(E_INVALID, "ncclCommInitRank: rank %d joins communicator %s twice", rank, id.internal + ml);
    }
    char path[300];
    data_path(W, rank, path, sizeof path);
    W->fd[rank] = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
    comm *c = calloc(1, sizeof *c);
    if (W->fd[rank] < 0 || !c) {
        free(c);
        atomic_store(&S->failed, 1);
        world_put(W);
        return fail_with(E_SYSTEM, "cannot create %s", path);
    }
    c->rank = rank;
    c->n = nranks;
    c->w = W;
    atomic_fetch_add(&S->joined, 1);
    if (depth) {
        pending[npending++] = c;
    } else {
        int rc = wait_for(S, &S->joined, nranks, "ncclCommInitRank", id.internal + ml);
        if (rc) {
            ncclCommDestroy(c);      /* leaves, removing its files when it was the last */
            return rc;
        }
    }
    *out = c;
    return 0;
}

int ncclCommDestroy(void *p) {
    comm *c = p;
    if (!c) return 0;
    for (int i = 0; i < npending; i++)
        if (pending[i] == c) pending[i] = pending[--npending];
    world *W = c->w;
    if (W) {
        char path[300];
        data_path(W, c->rank, path, sizeof path);
        unlink(path);
        if (atomic_fetch_add(&W->S->left, 1) + 1 == atomic_load(&W->S->joined)) {
            snprintf(path, sizeof path, "%s.ctl", W->base);
            unlink(path);
        }
        world_put(W);
    }
    free(c);
    return 0;
}

static int io_all(int fd, void *buf, size_t n, long long off, int wr) {
    char *p = buf;
    while (n) {
        ssize_t k = wr ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

static int read_from(world *W, int rank, void *buf, size_t n, long long off) {
    if (W->fd[rank] < 0) {
        char path[300];
        data_path(W, rank, path, sizeof path);
        W->fd[rank] = open(path, O_RDONLY);
        if (W->fd[rank] < 0) return fail_with(E_SYSTEM, "rank %d's data %s cannot be opened", rank, path);
    }
    if (io_all(W->fd[rank], buf, n, off, 0) < 0) return fail_with(E_SYSTEM, "cannot read rank %d's data", rank);
    return 0;
}

static const char *kind_name(int k) {
    static const char *const names[] = { "allreduce", "allgather", "reducescatter", "broadcast", "send", "recv" };
    return k >= 0 && k <= RECV ? names[k] : "?";
}

/* The k-th collective of rank j in this group. */
static const entry *nth_coll(const shared *S, int j, int k) {
    for (int i = 0; i < S->nent[j]; i++)
        if (S->ent[j][i].kind != SEND && S->ent[j][i].kind != RECV && k-- == 0) return &S->ent[j][i];
    return NULL;
}

/* The m-th send from rank p to rank r in this group. */
static const entry *nth_send(const shared *S, int p, int r, int m) {
    for (int i = 0; i < S->nent[p]; i++)
        if (S->ent[p][i].kind == SEND && S->ent[p][i].peer == r && m-- == 0) return &S->ent[p][i];
    return NULL;
}

static int consume_coll(world *W, const op *o, int k) {
    const shared *S = W->S;
    int n = o->c->n, r = o->c->rank;
    size_t bytes = o->count * sizeof(float);
    for (int j = 0; j < n; j++) {
        const entry *e = nth_coll(S, j, k);
        if (!e || e->kind != o->kind || e->count != (long long)o->count || e->root != o->root)
            return fail_with(E_USAGE, "collective %d of this group: rank %d issued %s of %zu floats, rank %d %s%s",
                             k, r, kind_name(o->kind), o->count, j, e ? kind_name(e->kind) : "nothing",
                             e ? " of another size or root" : "");
    }
    if (o->kind == AR || o->kind == RS) {
        float *sum = calloc(o->count ? o->count : 1, sizeof *sum), *tmp = malloc(bytes ? bytes : 1);
        int rc = sum && tmp ? 0 : fail_with(E_SYSTEM, "out of memory");
        for (int j = 0; j < n && !rc; j++) {
            const entry *e = nth_coll(S, j, k);
            rc = read_from(W, j, tmp, bytes, e->off + (o->kind == RS ? (long long)r * (long long)bytes : 0));
            for (size_t i = 0; i < o->count && !rc; i++) sum[i] += tmp[i];
        }
        if (!rc) memcpy(o->r, sum, bytes);
        free(sum);
        free(tmp);
        return rc;
    }
    if (o->kind == AG) {
        for (int j = 0; j < n; j++) {
            int rc = read_from(W, j, (char *)o->r + (size_t)j * bytes, bytes, nth_coll(S, j, k)->off);
            if (rc) return rc;
        }
        return 0;
    }
    /* BC */
    return read_from(W, o->root, o->r, bytes, nth_coll(S, o->root, k)->off);
}

static int consume_recv(world *W, const op *o, int m) {
    int r = o->c->rank;
    if (o->peer < 0 || o->peer >= o->c->n) return fail_with(E_INVALID, "rank %d: recv from peer %d of %d", r, o->peer, o->c->n);
    const entry *e = nth_send(W->S, o->peer, r, m);
    if (!e) return fail_with(E_USAGE, "rank %d expects a message from rank %d that it did not send", r, o->peer);
    if (e->bytes != (long long)o->count)
        return fail_with(E_USAGE, "rank %d receives %zu bytes from rank %d, which sent %lld", r, o->count, o->peer, e->bytes);
    return read_from(W, o->peer, o->r, o->count, e->off);
}

/* Carry out one communicator's operations of a group (ops in issue order). */
static int run_world(world *W, op *ops, int nops) {
    shared *S = W->S;
    int nl = 0, rc = 0;
    comm *loc[MAXR];
    for (int i = 0; i < nops; i++) {
        int seen = 0;
        for (int j = 0; j < nl; j++) seen |= loc[j] == ops[i].c;
        if (!seen && nl < MAXR) loc[nl++] = ops[i].c;
    }
    long long used[MAXR] = { 0 };
    for (int j = 0; j < nl; j++) S->nent[loc[j]->rank] = 0;
    for (int i = 0; i < nops && !rc; i++) {          /* publish this process's parts */
        op *o = &ops[i];
        int r = o->c->rank, n = o->c->n;
        if (S->nent[r] >= MAXE) {
            rc = fail_with(E_USAGE, "rank %d: more than %d operations in one group", r, MAXE);
            break;
        }
        if (o->kind == SEND && (o->peer < 0 || o->peer >= n)) {
            rc = fail_with(E_INVALID, "rank %d: send to peer %d of %d", r, o->peer, n);
            break;
        }
        size_t fl = o->count * sizeof(float);
        size_t size = o->kind == AR || o->kind == AG ? fl : o->kind == RS ? fl * (size_t)n
                      : o->kind == BC ? (r == o->root ? fl : 0) : o->kind == SEND ? o->count : 0;
        entry e = { o->kind, o->peer, o->root, (long long)o->count, used[r], (long long)size };
        if (size && io_all(W->fd[r], (void *)o->s, size, used[r], 1) < 0) {
            rc = fail_with(E_SYSTEM, "cannot write rank %d's data", r);
            break;
        }
        used[r] += (long long)size;
        S->ent[r][S->nent[r]++] = e;
    }
    if (rc) {
        atomic_store(&S->failed, 1);
        return rc;
    }
    if ((rc = barrier(W, nl, "collective")) != 0) return rc;
    for (int j = 0; j < nl && !rc; j++) {               /* each local rank takes its results */
        int k = 0, from[MAXR] = { 0 };
        for (int i = 0; i < nops && !rc; i++) {
            op *o = &ops[i];
            if (o->c != loc[j]) continue;
            if (o->kind == RECV) rc = consume_recv(W, o, from[o->peer >= 0 && o->peer < MAXR ? o->peer : 0]++);
            else if (o->kind != SEND) rc = consume_coll(W, o, k++);
        }
    }
    if (rc) {
        atomic_store(&S->failed, 1);
        return rc;
    }
    return barrier(W, nl, "collective");
}

/* ---- one process (ncclCommInitAll) --------------------------------------- */

static void run(void) {
    int n = 0;
    for (int i = 0; i < nq; i++) if (q[i].rank + 1 > n) n = q[i].rank + 1;
    for (int i = 0; i < nq; i++) {
        op *o = &q[i];
        if (o->kind == AR || o->kind == RS) {        /* sum over the ranks' ops of this kind, in order */
            int kind = o->kind;                      /* o's own kind is cleared below */
            size_t total = kind == AR ? o->count : o->count * (size_t)n;
            float *sum = calloc(total ? total : 1, sizeof *sum);
            int k = 0;
            for (int j = i; j < nq && k < n; j++)
                if (q[j].kind == kind) {
                    for (size_t e = 0; e < total; e++) sum[e] += ((const float *)q[j].s)[e];
                    k++;
                }
            const char *z = getenv("CT_STANDIN_NCCL_WRONG");   /* a faulty library, for the tests */
            if (z && *z == '1' && total) sum[0] += 1;
            k = 0;
            for (int j = i; j < nq && k < n; j++)
                if (q[j].kind == kind) {
                    if (kind == AR) memcpy(q[j].r, sum, total * sizeof *sum);
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

/* Everything queued: first the waits of ncclCommInitRank in the group, then
 * this process's own communicators, then each shared communicator's part. */
static int flush(void) {
    int rc = 0;
    for (int i = 0; i < npending && !rc; i++) {     /* the first error's message stays */
        world *W = pending[i]->w;
        rc = wait_for(W->S, &W->S->joined, atomic_load(&W->S->nranks), "ncclCommInitRank", W->base);
    }
    npending = 0;
    int ns = 0, nl = 0;
    for (int i = 0; i < nq; i++) {
        if (q[i].c->w) sq[ns++] = q[i];
        else q[nl++] = q[i];
    }
    nq = nl;
    run();
    while (ns > 0) {                 /* one communicator at a time, in issue order */
        world *W = sq[0].c->w;
        static op mine[4096];
        int nm = 0, rest = 0;
        for (int i = 0; i < ns; i++) {
            if (sq[i].c->w == W) mine[nm++] = sq[i];
            else sq[rest++] = sq[i];
        }
        ns = rest;
        int e = rc ? rc : run_world(W, mine, nm);
        if (!rc) rc = e;
    }
    return rc;
}

int ncclGroupEnd(void) {
    if (depth <= 0) return fail_with(E_USAGE, "ncclGroupEnd without ncclGroupStart");
    if (--depth == 0) return flush();
    return 0;
}
int ncclAllReduce(const void *s, void *r, size_t count, int dt, int op_, void *c, void *st) {
    (void)st; (void)op_;
    if (dt != 7) return fail_with(E_INVALID, "only float32 (7) is summed");
    int rc = push(AR, s, r, count, 0, 0, c);
    return rc || depth ? rc : flush();
}
int ncclAllGather(const void *s, void *r, size_t count, int dt, void *c, void *st) {
    (void)st;
    if (dt != 7) return fail_with(E_INVALID, "only float32 (7) is gathered");
    int rc = push(AG, s, r, count, 0, 0, c);
    return rc || depth ? rc : flush();
}
int ncclReduceScatter(const void *s, void *r, size_t count, int dt, int op_, void *c, void *st) {
    (void)st; (void)op_;
    if (dt != 7) return fail_with(E_INVALID, "only float32 (7) is summed");
    int rc = push(RS, s, r, count, 0, 0, c);
    return rc || depth ? rc : flush();
}
int ncclBroadcast(const void *s, void *r, size_t count, int dt, int root, void *c, void *st) {
    (void)st;
    if (dt != 7) return fail_with(E_INVALID, "only float32 (7) is broadcast");
    int rc = push(BC, s, r, count, 0, root, c);
    return rc || depth ? rc : flush();
}
int ncclSend(const void *s, size_t count, int dt, int peer, void *c, void *st) {
    (void)st; (void)dt;
    return push(SEND, s, NULL, count, peer, 0, c);
}
int ncclRecv(void *r, size_t count, int dt, int peer, void *c, void *st) {
    (void)st; (void)dt;
    return push(RECV, NULL, r, count, peer, 0, c);
}
