/*
 * nccl: the collectives on this node's GPUs from one process (one
 * communicator per GPU by ncclCommInitAll, each collective issued for
 * every GPU inside ncclGroupStart/End), sized and reported as nccl-tests
 * does: float32 sums; the size is the buffer one rank holds. A repetition
 * is timed on the host from issue until every GPU's stream is done.
 *
 * libnccl is loaded at run time: CT_NCCL_LIB, else libnccl.so.2. Across
 * nodes (MPI bootstrapping ncclCommInitRank) is not built yet: a case with
 * more ranks than local GPUs is reported as unsupported.
 *
 * Load: two buffers of the case's size on each GPU of the case.
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

typedef struct nccl_impl {
    cudalib L;
    void *lib;
    int (*GetVersion)(int *);
    int (*CommInitAll)(void **, int, const int *);
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
} nccl_impl;

static int nccl_open(hw_backend *b, char *err, size_t errlen) {
    nccl_impl *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char tried[512], missing[64] = "";
    static const char *const names[] = { "libnccl.so.2", "libnccl.so", NULL };
    /* libnccl first: "no libnccl" is the answer whether or not a GPU is here. */
    if (!(x->lib = cudalib_open_any("CT_NCCL_LIB", names, tried, sizeof tried))) {
        snprintf(err, errlen, "no libnccl: %s cannot be loaded (install NVIDIA's libnccl2)", tried);
        free(x);
        return -1;
    }
#define NSYM(field, name)                                                          \
    do {                                                                           \
        void *p_ = dlsym(x->lib, name);                                            \
        if (!p_ && !*missing) snprintf(missing, sizeof missing, "%s", name);       \
        memcpy(&x->field, &p_, sizeof p_);                                         \
    } while (0)
    NSYM(GetVersion, "ncclGetVersion");
    NSYM(CommInitAll, "ncclCommInitAll");
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
        free(x);
        return -1;
    }
    if (cudalib_load(&x->L, err, errlen) < 0) {
        dlclose(x->lib);
        free(x);
        return -1;
    }
    int v = 0;
    x->GetVersion(&v);
    b->impl = x;
    b->env.ranks = x->L.devices;
    snprintf(b->env.devices, sizeof b->env.devices, "%s", x->L.names);
    snprintf(b->env.libraries, sizeof b->env.libraries, "NCCL %d.%d.%d, CUDA runtime %d.%d", v / 10000,
             v / 100 % 100, v % 100, x->L.runtime_version / 1000, x->L.runtime_version % 1000 / 10);
    return 0;
}

static void nccl_close(hw_backend *b) {
    nccl_impl *x = b->impl;
    if (!x) return;
    cudalib_unload(&x->L);
    dlclose(x->lib);
    free(x);
    b->impl = NULL;
}

#define MAX_GPUS 64

typedef struct coll_run {
    nccl_impl *x;
    coll_op op;
    int n;
    size_t bytes;
    void *comm[MAX_GPUS], *stream[MAX_GPUS], *send[MAX_GPUS], *recv[MAX_GPUS];
    double t0;
} coll_run;

static int coll_once(void *p) {
    coll_run *r = p;
    nccl_impl *x = r->x;
    size_t per = r->bytes / (size_t)r->n;
    int rc = x->GroupStart();
    for (int i = 0; i < r->n && rc == 0; i++) {
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
            for (int j = 0; j < r->n && rc == 0; j++) {
                rc = x->Send((char *)r->send[i] + per * (size_t)j, per, NCCL_INT8, j, r->comm[i], r->stream[i]);
                if (rc == 0)
                    rc = x->Recv((char *)r->recv[i] + per * (size_t)j, per, NCCL_INT8, j, r->comm[i], r->stream[i]);
            }
            break;
        case COLL_SENDRECV:
            rc = x->Send(r->send[i], r->bytes, NCCL_INT8, (i + 1) % r->n, r->comm[i], r->stream[i]);
            if (rc == 0) rc = x->Recv(r->recv[i], r->bytes, NCCL_INT8, (i + r->n - 1) % r->n, r->comm[i], r->stream[i]);
            break;
        default: rc = -1;
        }
    }
    int end = x->GroupEnd();
    return rc == 0 && end == 0 ? 0 : -1;
}

static void sync_all(coll_run *r) {
    for (int i = 0; i < r->n; i++) r->x->L.cudaStreamSynchronize(r->stream[i]);
}

static void host_start(void *p) {
    coll_run *r = p;
    sync_all(r);
    r->t0 = comm_wtime();
}

static double host_stop(void *p) {
    coll_run *r = p;
    sync_all(r);
    return comm_wtime() - r->t0;
}

static int nccl_measure(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    nccl_impl *x = b->impl;
    cudalib *L = &x->L;
    if (c->kind != MBC_COLLECTIVE) {
        snprintf(why, whylen, "the nccl backend measures collectives; use --backend cuda (GEMM, copies) or cpu");
        return HW_UNSUPPORTED;
    }
    if (c->ranks > L->devices || c->ranks > MAX_GPUS) {
        snprintf(why, whylen, "the case has ranks=%d but this node has %d GPU(s); across nodes is not built yet",
                 c->ranks, L->devices);
        return HW_UNSUPPORTED;
    }
    coll_run r = { .x = x, .op = c->op, .n = c->ranks };
    size_t unit = 4 * (size_t)r.n;
    r.bytes = (size_t)c->size_bytes / unit * unit;
    if (r.bytes < unit) r.bytes = unit;
    int devs[MAX_GPUS], rc = HW_OK;
    for (int i = 0; i < r.n; i++) devs[i] = i;
    int e = x->CommInitAll(r.comm, r.n, devs);
    if (e != 0) {
        snprintf(why, whylen, "ncclCommInitAll(%d GPUs): %s", r.n, x->GetErrorString(e));
        return HW_FAILED;
    }
    for (int i = 0; i < r.n && rc == HW_OK; i++) {
        L->cudaSetDevice(i);
        if (L->cudaMalloc(&r.send[i], r.bytes) != 0 || L->cudaMalloc(&r.recv[i], r.bytes) != 0 ||
            L->cudaStreamCreate(&r.stream[i]) != 0) {
            snprintf(why, whylen, "cannot allocate 2 x %zu bytes on GPU %d", r.bytes, i);
            rc = HW_FAILED;
        } else {
            L->cudaMemset(r.send[i], 0, r.bytes);
        }
    }
    hw_timer tm = { host_start, host_stop, &r };
    if (rc == HW_OK && hw_time(b, coll_once, &r, &tm, m) < 0) {
        snprintf(why, whylen, "NCCL %s failed", coll_op_name(c->op));
        rc = HW_FAILED;
    }
    for (int i = 0; i < r.n; i++) {
        L->cudaSetDevice(i);
        if (r.send[i]) L->cudaFree(r.send[i]);
        if (r.recv[i]) L->cudaFree(r.recv[i]);
        if (r.stream[i]) L->cudaStreamDestroy(r.stream[i]);
        if (r.comm[i]) x->CommDestroy(r.comm[i]);
    }
    L->cudaSetDevice(0);
    return rc;
}

const hw_ops hw_nccl_ops = { "nccl", nccl_open, nccl_measure, nccl_close };
