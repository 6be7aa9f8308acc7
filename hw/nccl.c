/*
 * nccl: the collectives on GPUs through NCCL, sized and reported as
 * nccl-tests does: float32 sums; the size is the buffer one rank holds; bus
 * bandwidth with nranks = every GPU taking part. A repetition is timed on
 * the host from issue until every local GPU's stream is done.
 *
 *   one process      every GPU of this node: one communicator per GPU by
 *                    ncclCommInitAll (a case of ranks=k uses GPUs 0..k-1),
 *                    made per case.
 *   under mpirun     N processes (one per node: mpirun -np N --map-by node),
 *                    each with the same G GPUs: one communicator of N*G ranks
 *                    made when the backend opens. Rank 0 calls
 *                    ncclGetUniqueId, the id is broadcast through hw/comm.h,
 *                    and each process, inside ncclGroupStart/End, calls
 *                    cudaSetDevice(d) and ncclCommInitRank(N*G, id,
 *                    rank*G + d) for each of its GPUs. A case must have
 *                    ranks = N*G (else it is unsupported, with the reason).
 *                    Every process times the same loop after a barrier and a
 *                    repetition lasts as long as the slowest process; only
 *                    rank 0 writes results. Processes that see different GPU
 *                    counts, or one that cannot load the libraries, stop the
 *                    backend from opening with the hosts and counts named.
 *
 * Each collective is issued for every local GPU inside ncclGroupStart/End.
 * Before a case is timed it is checked once, as nccl-tests' -c does: every
 * rank sends its global rank + 1 and the received buffers must hold the
 * sums, the gathered parts, the root's buffer or the peer's values.
 *
 * libnccl is loaded at run time: CT_NCCL_LIB, else libnccl.so.2 (see
 * hw/cudalib.h for the CUDA libraries).
 *
 * Load: two buffers of the case's size on each local GPU of the case, and
 * one host buffer of that size for the check.
 */
#include "hw/backend_impl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/comm.h"
#include "hw/cudalib.h"

#define NCCL_FLOAT32 7
#define NCCL_INT8 0
#define NCCL_SUM 0
#define MAX_GPUS 64

typedef struct nccl_id { char internal[128]; } nccl_id;      /* ncclUniqueId */

typedef struct nccl_impl {
    cudalib L;
    void *lib;
    int (*GetVersion)(int *);
    int (*GetUniqueId)(nccl_id *);
    int (*CommInitAll)(void **, int, const int *);
    int (*CommInitRank)(void **, int, nccl_id, int);
    int (*CommDestroy)(void *);
    int (*GroupStart)(void);
    int (*GroupEnd)(void);
    int (*AllReduce)(const void *, void *, size_t, int, int, void *, void *);
    int (*AllGather)(const void *, void *, size_t, int, void *, void *);
    int (*ReduceScatter)(const void *, void *, size_t, int, int, void *, void *);
    int (*Broadcast)(const void *, void *, size_t, int, int, void *, void *);
    int (*Send)(const void *, size_t, int, int, void *, void *);
    int (*Recv)(void *, size_t, int, int, void *, void *);
    const char *(*GetErrorString)(int);
    int mpi;                         /* we initialised MPI (finalise on close) */
    int procs, gpus, rank;           /* processes, GPUs per process, this process's rank */
    void *world[MAX_GPUS];           /* procs > 1: this process's ranks of the one communicator */
} nccl_impl;

/* Load libnccl and the CUDA libraries. 0, or -1 with err (nothing loaded). */
static int nccl_load(nccl_impl *x, char *err, size_t errlen) {
    char tried[512], missing[64] = "";
    static const char *const names[] = { "libnccl.so.2", "libnccl.so", NULL };
    /* libnccl first: "no libnccl" is the answer whether or not a GPU is here. */
    if (!(x->lib = cudalib_open_any("CT_NCCL_LIB", names, tried, sizeof tried))) {
        snprintf(err, errlen, "no libnccl: %s cannot be loaded (install NVIDIA's libnccl2)", tried);
        return -1;
    }
#define NSYM(field, name)                                                          \
    do {                                                                           \
        void *p_ = dlsym(x->lib, name);                                            \
        if (!p_ && !*missing) snprintf(missing, sizeof missing, "%s", name);       \
        memcpy(&x->field, &p_, sizeof p_);                                         \
    } while (0)
    NSYM(GetVersion, "ncclGetVersion");
    NSYM(GetUniqueId, "ncclGetUniqueId");
    NSYM(CommInitAll, "ncclCommInitAll");
    NSYM(CommInitRank, "ncclCommInitRank");
    NSYM(CommDestroy, "ncclCommDestroy");
    NSYM(GroupStart, "ncclGroupStart");
    NSYM(GroupEnd, "ncclGroupEnd");
    NSYM(AllReduce, "ncclAllReduce");
    NSYM(AllGather, "ncclAllGather");
    NSYM(ReduceScatter, "ncclReduceScatter");
    NSYM(Broadcast, "ncclBroadcast");
    NSYM(Send, "ncclSend");
    NSYM(Recv, "ncclRecv");
    NSYM(GetErrorString, "ncclGetErrorString");
#undef NSYM
    if (*missing) {
        snprintf(err, errlen, "libnccl %s lacks %s", tried, missing);
        dlclose(x->lib);
        x->lib = NULL;
        return -1;
    }
    if (cudalib_load(&x->L, err, errlen) < 0) {
        dlclose(x->lib);
        x->lib = NULL;
        return -1;
    }
    return 0;
}

static void nccl_unload(nccl_impl *x) {
    for (int d = 0; d < MAX_GPUS; d++)
        if (x->world[d]) {
            x->CommDestroy(x->world[d]);
            x->world[d] = NULL;
        }
    if (x->lib) {
        cudalib_unload(&x->L);
        dlclose(x->lib);
        x->lib = NULL;
    }
}

/* What each process tells the others before the communicator is made. */
typedef struct proc_info {
    int ok, gpus;
    char host[64];
    char err[400];
} proc_info;

/* Under mpirun with procs > 1: agree on the GPUs per process and make the
 * communicator of procs*gpus ranks (see the header). Collective over the
 * processes: every one returns 0, or every one -1 with err. */
static int nccl_join(nccl_impl *x, int loaded, char *err, size_t errlen) {
    int n = comm_size(), me = comm_rank();
    proc_info mine = { loaded, loaded ? x->L.devices : 0, "", "" };
    comm_host(mine.host, sizeof mine.host);
    if (!loaded) snprintf(mine.err, sizeof mine.err, "%s", err);
    proc_info *all = calloc((size_t)n, sizeof *all);
    if (comm_max_double(!all) > 0) {            /* all processes agree, so none waits alone */
        snprintf(err, errlen, "out of memory in %s to exchange the GPU counts", all ? "another process" : mine.host);
        free(all);
        return -1;
    }
    if (comm_allgather(&mine, all, sizeof mine) < 0) {
        snprintf(err, errlen, "the processes could not exchange their GPU counts (MPI_Allgather failed)");
        free(all);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        if (!all[i].ok) {
            snprintf(err, errlen, "process %d of %d (%s): %s", i, n, all[i].host, all[i].err);
            rc = -1;
        }
    int same = 1;
    for (int i = 1; i < n; i++) same &= all[i].gpus == all[0].gpus;
    if (!rc && !same) {
        size_t k = (size_t)snprintf(err, errlen, "NCCL across processes needs the same GPU count in every process; "
                                                 "GPUs per process:");
        for (int i = 0; i < n && k < errlen; i++)
            k += (size_t)snprintf(err + k, errlen - k, "%s rank %d on %s: %d", i ? "," : "", i, all[i].host, all[i].gpus);
        rc = -1;
    }
    int g = all[0].gpus;
    if (!rc && (g > MAX_GPUS || (long)n * g > 1 << 20)) {
        snprintf(err, errlen, "%d GPUs per process: at most %d are supported", g, MAX_GPUS);
        rc = -1;
    }
    free(all);
    if (rc) return -1;
    x->procs = n;
    x->gpus = g;
    x->rank = me;
    /* Rank 0 makes the id; its status travels with it. */
    struct { int rc; nccl_id id; } boot;
    memset(&boot, 0, sizeof boot);
    if (me == 0) boot.rc = x->GetUniqueId(&boot.id);
    if (comm_bcast(&boot, sizeof boot, 0) < 0) {
        snprintf(err, errlen, "broadcasting the NCCL id failed (MPI_Bcast)");
        return -1;
    }
    if (boot.rc != 0) {
        snprintf(err, errlen, "ncclGetUniqueId on rank 0: %s", me == 0 ? x->GetErrorString(boot.rc) : "failed");
        return -1;
    }
    int e = x->GroupStart(), cuda = 0;
    for (int d = 0; d < g && !e && !cuda; d++) {
        if ((cuda = x->L.cudaSetDevice(d)) != 0) break;
        e = x->CommInitRank(&x->world[d], n * g, boot.id, me * g + d);
    }
    int end = x->GroupEnd();
    x->L.cudaSetDevice(0);
    int bad = cuda || e || end;
    if (cuda)
        snprintf(err, errlen, "cudaSetDevice on %s: %s", mine.host, x->L.cudaGetErrorString(cuda));
    else if (bad)
        snprintf(err, errlen, "ncclCommInitRank(%d ranks; ranks %d..%d on %s): %s", n * g, me * g, me * g + g - 1,
                 mine.host, x->GetErrorString(e ? e : end));
    if (comm_max_double(bad) > 0) {
        if (!bad) snprintf(err, errlen, "ncclCommInitRank failed in another process (its message names it)");
        return -1;
    }
    return 0;
}

static int nccl_open(hw_backend *b, char *err, size_t errlen) {
    nccl_impl *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    x->procs = 1;
    if (comm_launched()) {               /* under mpirun: one communicator across the processes */
        if (comm_init(0, err, errlen) < 0) {
            free(x);
            return -1;
        }
        x->mpi = 1;
    }
    int loaded = nccl_load(x, err, errlen) == 0;
    int rc = loaded ? 0 : -1;
    if (x->mpi && comm_size() > 1) rc = nccl_join(x, loaded, err, errlen);
    if (rc < 0) {
        nccl_unload(x);
        if (x->mpi) comm_finalize();
        free(x);
        return -1;
    }
    if (x->procs == 1) x->gpus = x->L.devices;
    int v = 0;
    x->GetVersion(&v);
    b->impl = x;
    b->rank = x->rank;
    b->sync = x->procs > 1;
    b->env.ranks = x->procs * x->gpus;
    if (x->procs == 1) {
        snprintf(b->env.devices, sizeof b->env.devices, "%s", x->L.names);
    } else {
        char name[128] = "GPU";
        x->L.cuDeviceGetName(name, (int)sizeof name, 0);
        name[sizeof name - 1] = 0;
        snprintf(b->env.devices, sizeof b->env.devices, "%d processes x %d GPUs (%s; %d NCCL ranks)", x->procs,
                 x->gpus, name, x->procs * x->gpus);
    }
    snprintf(b->env.libraries, sizeof b->env.libraries, "NCCL %d.%d.%d, CUDA runtime %d.%d%s", v / 10000,
             v / 100 % 100, v % 100, x->L.runtime_version / 1000, x->L.runtime_version % 1000 / 10,
             x->procs > 1 ? ", bootstrapped over MPI" : "");
    return 0;
}

static void nccl_close(hw_backend *b) {
    nccl_impl *x = b->impl;
    if (!x) return;
    nccl_unload(x);
    if (x->mpi) comm_finalize();
    free(x);
    b->impl = NULL;
}

typedef struct coll_run {
    nccl_impl *x;
    coll_op op;
    int n;                           /* local GPUs taking part */
    int nranks, base;                /* ranks of the communicator; global rank of local GPU 0 */
    int sync;                        /* several processes: barrier before, slowest after */
    int err;                         /* the last NCCL error */
    size_t bytes;
    void **comm;
    void *own[MAX_GPUS], *stream[MAX_GPUS], *send[MAX_GPUS], *recv[MAX_GPUS];
    double t0;
} coll_run;

static int coll_once(void *p) {
    coll_run *r = p;
    nccl_impl *x = r->x;
    int n = r->nranks;
    size_t per = r->bytes / (size_t)n;
    int rc = x->GroupStart();
    for (int i = 0; i < r->n && rc == 0; i++) {
        int g = r->base + i;
        switch (r->op) {
        case COLL_ALLREDUCE:
            rc = x->AllReduce(r->send[i], r->recv[i], r->bytes / 4, NCCL_FLOAT32, NCCL_SUM, r->comm[i], r->stream[i]);
            break;
        case COLL_ALLGATHER:
            rc = x->AllGather(r->send[i], r->recv[i], per / 4, NCCL_FLOAT32, r->comm[i], r->stream[i]);
            break;
        case COLL_REDUCESCATTER:
            rc = x->ReduceScatter(r->send[i], r->recv[i], per / 4, NCCL_FLOAT32, NCCL_SUM, r->comm[i], r->stream[i]);
            break;
        case COLL_BROADCAST:
            rc = x->Broadcast(r->send[i], r->recv[i], r->bytes / 4, NCCL_FLOAT32, 0, r->comm[i], r->stream[i]);
            break;
        case COLL_ALLTOALL:
            for (int j = 0; j < n && rc == 0; j++) {
                rc = x->Send((char *)r->send[i] + per * (size_t)j, per, NCCL_INT8, j, r->comm[i], r->stream[i]);
                if (rc == 0)
                    rc = x->Recv((char *)r->recv[i] + per * (size_t)j, per, NCCL_INT8, j, r->comm[i], r->stream[i]);
            }
            break;
        case COLL_SENDRECV:
            rc = x->Send(r->send[i], r->bytes, NCCL_INT8, (g + 1) % n, r->comm[i], r->stream[i]);
            if (rc == 0) rc = x->Recv(r->recv[i], r->bytes, NCCL_INT8, (g + n - 1) % n, r->comm[i], r->stream[i]);
            break;
        default: rc = -1;
        }
    }
    int end = x->GroupEnd();
    if (rc || end) r->err = rc ? rc : end;
    return rc == 0 && end == 0 ? 0 : -1;
}

static void sync_all(coll_run *r) {
    for (int i = 0; i < r->n; i++) r->x->L.cudaStreamSynchronize(r->stream[i]);
}

static void host_start(void *p) {
    coll_run *r = p;
    sync_all(r);
    if (r->sync) comm_barrier();
    r->t0 = comm_wtime();
}

static double host_stop(void *p) {
    coll_run *r = p;
    sync_all(r);
    double dt = comm_wtime() - r->t0;
    return r->sync ? comm_max_double(dt) : dt;   /* every process gets the same time: the slowest */
}

/* What global rank g's receive buffer holds at float e after one operation
 * when every rank sent its global rank + 1 (nccl-tests' -c, simplified). */
static float expected(const coll_run *r, int g, size_t e) {
    int n = r->nranks;
    size_t per = r->bytes / (size_t)n / 4;
    switch (r->op) {
    case COLL_ALLREDUCE:
    case COLL_REDUCESCATTER: return (float)n * (float)(n + 1) / 2;
    case COLL_ALLGATHER:
    case COLL_ALLTOALL: return (float)(e / per + 1);
    case COLL_BROADCAST: return 1;
    case COLL_SENDRECV: return (float)((g + n - 1) % n + 1);
    default: return 0;
    }
}

/* Run the case once on known data and check every local rank's result.
 * 0, or -1 with why. */
static int check_once(coll_run *r, char *why, size_t whylen) {
    cudalib *L = &r->x->L;
    size_t nf = r->bytes / 4, got = r->op == COLL_REDUCESCATTER ? nf / (size_t)r->nranks : nf;
    float *h = malloc(r->bytes);
    if (!h) {
        snprintf(why, whylen, "cannot allocate %zu bytes on the host to check the results", r->bytes);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < r->n && !rc; i++) {
        for (size_t e = 0; e < nf; e++) h[e] = (float)(r->base + i + 1);
        L->cudaSetDevice(i);
        rc = L->cudaMemcpy(r->send[i], h, r->bytes, CT_H2D) || L->cudaMemset(r->recv[i], 0xff, r->bytes);
    }
    if (rc) {
        snprintf(why, whylen, "cannot fill the buffers to check NCCL %s", coll_op_name(r->op));
    } else if (coll_once(r) < 0) {
        snprintf(why, whylen, "NCCL %s: %s", coll_op_name(r->op), r->x->GetErrorString(r->err));
        rc = -1;
    }
    sync_all(r);
    for (int i = 0; i < r->n && !rc; i++) {
        L->cudaSetDevice(i);
        if (L->cudaMemcpy(h, r->recv[i], got * 4, CT_D2H) != 0) {
            snprintf(why, whylen, "cannot copy NCCL %s's result back from GPU %d", coll_op_name(r->op), i);
            rc = -1;
        }
        for (size_t e = 0; e < got && !rc; e++) {
            float want = expected(r, r->base + i, e);
            if (!(h[e] == want)) {
                snprintf(why, whylen, "NCCL %s gave wrong results: rank %d holds %g at float %zu, expected %g",
                         coll_op_name(r->op), r->base + i, (double)h[e], e, (double)want);
                rc = -1;
            }
        }
    }
    free(h);
    return rc;
}

/* Several processes: 1 when any of them had `bad`, the same answer in all. */
static int any_bad(const coll_run *r, int bad) { return r->sync ? comm_max_double(bad) > 0 : bad; }

static int nccl_measure(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    nccl_impl *x = b->impl;
    cudalib *L = &x->L;
    if (c->kind != MBC_COLLECTIVE) {
        snprintf(why, whylen, "the nccl backend measures collectives; use --backend cuda (GEMM, copies) or cpu");
        return HW_UNSUPPORTED;
    }
    coll_run r = { .x = x, .op = c->op };
    r.comm = r.own;
    if (x->procs > 1) {
        if (c->ranks != x->procs * x->gpus) {
            snprintf(why, whylen, "the case has ranks=%d but this launch has %d processes x %d GPUs = %d NCCL ranks",
                     c->ranks, x->procs, x->gpus, x->procs * x->gpus);
            return HW_UNSUPPORTED;
        }
        r.n = x->gpus;
        r.nranks = x->procs * x->gpus;
        r.base = x->rank * x->gpus;
        r.sync = 1;
        r.comm = x->world;
    } else {
        if (c->ranks > L->devices || c->ranks > MAX_GPUS) {
            snprintf(why, whylen, "the case has ranks=%d but this node has %d GPU(s); across nodes, run one process "
                     "per node under mpirun", c->ranks, L->devices);
            return HW_UNSUPPORTED;
        }
        r.n = r.nranks = c->ranks;
    }
    size_t unit = 4 * (size_t)r.nranks;
    r.bytes = (size_t)c->size_bytes / unit * unit;
    if (r.bytes < unit) r.bytes = unit;
    int rc = HW_OK;
    if (x->procs == 1) {
        int devs[MAX_GPUS];
        for (int i = 0; i < r.n; i++) devs[i] = i;
        int e = x->CommInitAll(r.own, r.n, devs);
        if (e != 0) {
            snprintf(why, whylen, "ncclCommInitAll(%d GPUs): %s", r.n, x->GetErrorString(e));
            return HW_FAILED;
        }
    }
    for (int i = 0; i < r.n && rc == HW_OK; i++) {
        L->cudaSetDevice(i);
        if (L->cudaMalloc(&r.send[i], r.bytes) != 0 || L->cudaMalloc(&r.recv[i], r.bytes) != 0 ||
            L->cudaStreamCreate(&r.stream[i]) != 0) {
            snprintf(why, whylen, "cannot allocate 2 x %zu bytes on GPU %d", r.bytes, i);
            rc = HW_FAILED;
        }
    }
    /* Every process must agree before entering a collective. */
    if (any_bad(&r, rc != HW_OK) && rc == HW_OK) {
        snprintf(why, whylen, "another process could not allocate its buffers");
        rc = HW_FAILED;
    }
    if (rc == HW_OK) {
        int bad = check_once(&r, why, whylen) < 0;
        if (any_bad(&r, bad)) {
            if (!bad) snprintf(why, whylen, "NCCL %s gave wrong results in another process", coll_op_name(c->op));
            rc = HW_FAILED;
        }
    }
    hw_timer tm = { host_start, host_stop, &r };
    if (rc == HW_OK && hw_time(b, coll_once, &r, &tm, m) < 0) {
        snprintf(why, whylen, "NCCL %s failed: %s", coll_op_name(c->op), r.err ? x->GetErrorString(r.err) : "in another process");
        rc = HW_FAILED;
    }
    for (int i = 0; i < r.n; i++) {
        L->cudaSetDevice(i);
        if (r.send[i]) L->cudaFree(r.send[i]);
        if (r.recv[i]) L->cudaFree(r.recv[i]);
        if (r.stream[i]) L->cudaStreamDestroy(r.stream[i]);
        if (r.own[i]) x->CommDestroy(r.own[i]);
    }
    L->cudaSetDevice(0);
    return rc;
}

const hw_ops hw_nccl_ops = { "nccl", nccl_open, nccl_measure, nccl_close };
