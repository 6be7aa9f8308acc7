/*
 * comm: MPI behind a small interface (see comm.h). Everything that touches
 * MPI types lives in this file.
 */
#include "hw/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CT_HAVE_MPI
#include <mpi.h>
#endif

static int started;                  /* we called MPI_Init */
static int rank_, size_ = 1;

int comm_built(void) {
#ifdef CT_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int comm_launched(void) {
    const char *vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

int comm_init(int force, char *err, size_t errlen) {
    if (started) return 0;
    if (!force && !comm_launched()) return 0;
#ifdef CT_HAVE_MPI
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init failed");
        return -1;
    }
    started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    return 0;
#else
    snprintf(err, errlen, "this clustertwin was built without MPI (install Debian's libopenmpi-dev and rebuild)");
    return -1;
#endif
}

void comm_finalize(void) {
#ifdef CT_HAVE_MPI
    if (started) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin) MPI_Finalize();
    }
#endif
    started = 0;
    rank_ = 0;
    size_ = 1;
}

int comm_rank(void) { return rank_; }
int comm_size(void) { return size_; }
int comm_active(void) { return started; }

void comm_host(char *buf, size_t len) {
    if (!len) return;
    buf[0] = 0;
#ifdef CT_HAVE_MPI
    if (started) {
        char name[MPI_MAX_PROCESSOR_NAME];
        int n = 0;
        if (MPI_Get_processor_name(name, &n) == MPI_SUCCESS) {
            snprintf(buf, len, "%.*s", n, name);
            return;
        }
    }
#endif
    if (gethostname(buf, len) != 0) snprintf(buf, len, "unknown");
    buf[len - 1] = 0;
}

void comm_library_version(char *buf, size_t len) {
    if (!len) return;
    buf[0] = 0;
#ifdef CT_HAVE_MPI
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(v, &n) == MPI_SUCCESS) {
        /* first line only: "Open MPI v4.1.4, package: ..." */
        int k = 0;
        while (k < n && v[k] != '\n' && v[k] != ',') k++;
        snprintf(buf, len, "%.*s", k, v);
    }
#endif
}

int comm_barrier(void) {
#ifdef CT_HAVE_MPI
    if (started) return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#endif
    return 0;
}

int comm_send(const void *buf, size_t n, int dest, int tag) {
#ifdef CT_HAVE_MPI
    if (started && n <= (size_t)0x7fffffff)
        return MPI_Send(buf, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#else
    (void)buf; (void)n; (void)dest; (void)tag;
#endif
    return -1;
}

int comm_recv(void *buf, size_t n, int src, int tag) {
#ifdef CT_HAVE_MPI
    if (started && n <= (size_t)0x7fffffff)
        return MPI_Recv(buf, (int)n, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -1;
#else
    (void)buf; (void)n; (void)src; (void)tag;
#endif
    return -1;
}

int comm_bcast(void *buf, size_t n, int root) {
#ifdef CT_HAVE_MPI
    if (started && n <= (size_t)0x7fffffff)
        return MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
    if (started) return -1;
#else
    (void)buf; (void)n; (void)root;
#endif
    return 0;
}

/* Sleep between polls of a wait that may be long (a sweep's rank waiting
 * for its next chunk or for the others' last results, up to hours): 50 us
 * at first, doubling to 10 ms, so a wait costs a few hundred polls per
 * second at most instead of a core busy-polling (OpenMPI's blocking calls
 * poll; its mpi_yield_when_idle only adds sched_yield() between polls,
 * which returns at once on an idle core). A message is then seen at most
 * 10 ms late, nothing beside a run of a simulation. */
static void idle_sleep(long *ns) {
    struct timespec ts = { 0, *ns };
    nanosleep(&ts, NULL);
    if (*ns < 10000000) *ns *= 2;
}

#ifdef CT_HAVE_MPI
static int idle_request(MPI_Request *r) {
    long ns = 50000;
    for (;;) {
        int done = 0;
        if (MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
        if (done) return 0;
        idle_sleep(&ns);
    }
}
#endif

int comm_wait_idle(int (*ready)(void *ctx), void *ctx) {
    long ns = 50000;
    for (;;) {
        int r = ready(ctx);
        if (r != 0) return r;
        idle_sleep(&ns);
    }
}

int comm_probe(int src, int tag, int *from, size_t *bytes) {
#ifdef CT_HAVE_MPI
    if (!started) return -1;
    int there = 0, n = 0;
    MPI_Status st;
    if (MPI_Iprobe(src == COMM_ANY_SOURCE ? MPI_ANY_SOURCE : src, tag, MPI_COMM_WORLD, &there, &st) != MPI_SUCCESS)
        return -1;
    if (!there) return 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    if (from) *from = st.MPI_SOURCE;
    if (bytes) *bytes = n > 0 ? (size_t)n : 0;
    return 1;
#else
    (void)src; (void)tag; (void)from; (void)bytes;
    return -1;
#endif
}

struct comm_req {
#ifdef CT_HAVE_MPI
    MPI_Request r;
#else
    int unused;
#endif
};

/* Start a send (out) or a receive of n bytes; *req set, or NULL and -1. */
static int start_req(int out, void *buf, size_t n, int peer, int tag, comm_req **req) {
    *req = NULL;
#ifdef CT_HAVE_MPI
    comm_req *q = started && n <= (size_t)0x7fffffff ? malloc(sizeof *q) : NULL;
    if (!q) return -1;
    int rc = out ? MPI_Isend(buf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q->r)
                 : MPI_Irecv(buf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q->r);
    if (rc != MPI_SUCCESS) {
        free(q);
        return -1;
    }
    *req = q;
    return 0;
#else
    (void)out; (void)buf; (void)n; (void)peer; (void)tag;
    return -1;
#endif
}

int comm_isend(const void *buf, size_t n, int dest, int tag, comm_req **req) {
    return start_req(1, (void *)buf, n, dest, tag, req);
}

int comm_irecv(void *buf, size_t n, int src, int tag, comm_req **req) { return start_req(0, buf, n, src, tag, req); }

int comm_test(comm_req *req) {
#ifdef CT_HAVE_MPI
    int done = 0;
    if (MPI_Test(&req->r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) done = -1;
    if (done) free(req);
    return done;
#else
    free(req);
    return -1;
#endif
}

int comm_bcast_idle(void *buf, size_t n, int root) {
#ifdef CT_HAVE_MPI
    MPI_Request r;
    if (started && n <= (size_t)0x7fffffff)
        return MPI_Ibcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD, &r) == MPI_SUCCESS ? idle_request(&r) : -1;
    if (started) return -1;
#else
    (void)buf; (void)n; (void)root;
#endif
    return 0;
}

int comm_barrier_idle(void) {
#ifdef CT_HAVE_MPI
    MPI_Request r;
    if (started) return MPI_Ibarrier(MPI_COMM_WORLD, &r) == MPI_SUCCESS ? idle_request(&r) : -1;
#endif
    return 0;
}

#ifdef CT_HAVE_MPI
#define FITS(n) ((n) <= (size_t)0x7fffffff)
#endif

int comm_allreduce_f32(const float *send, float *recv, size_t count) {
#ifdef CT_HAVE_MPI
    if (started && FITS(count))
        return MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, MPI_FLOAT, MPI_SUM,
                             MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#else
    (void)send; (void)recv; (void)count;
#endif
    return -1;
}

int comm_allgather(const void *send, void *recv, size_t bytes_per_rank) {
#ifdef CT_HAVE_MPI
    if (started && FITS(bytes_per_rank))
        return MPI_Allgather(send, (int)bytes_per_rank, MPI_BYTE, recv, (int)bytes_per_rank, MPI_BYTE,
                             MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#else
    (void)send; (void)recv; (void)bytes_per_rank;
#endif
    return -1;
}

int comm_reduce_scatter_f32(const float *send, float *recv, size_t recvcount) {
#ifdef CT_HAVE_MPI
    if (started && FITS(recvcount))
        return MPI_Reduce_scatter_block(send, recv, (int)recvcount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) ==
                       MPI_SUCCESS ? 0 : -1;
#else
    (void)send; (void)recv; (void)recvcount;
#endif
    return -1;
}

int comm_alltoall(const void *send, void *recv, size_t bytes_per_rank) {
#ifdef CT_HAVE_MPI
    if (started && FITS(bytes_per_rank))
        return MPI_Alltoall(send, (int)bytes_per_rank, MPI_BYTE, recv, (int)bytes_per_rank, MPI_BYTE,
                            MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#else
    (void)send; (void)recv; (void)bytes_per_rank;
#endif
    return -1;
}

int comm_sendrecv(const void *send, void *recv, size_t n, int dest, int src, int tag) {
#ifdef CT_HAVE_MPI
    if (started && FITS(n))
        return MPI_Sendrecv(send, (int)n, MPI_BYTE, dest, tag, recv, (int)n, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -1;
#else
    (void)send; (void)recv; (void)n; (void)dest; (void)src; (void)tag;
#endif
    return -1;
}

double comm_max_double(double x) {
#ifdef CT_HAVE_MPI
    double y = x;
    if (started && MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS) return y;
#endif
    return x;
}

double comm_wtime(void) {
#ifdef CT_HAVE_MPI
    if (started) return MPI_Wtime();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void comm_abort(int code) {
#ifdef CT_HAVE_MPI
    if (started) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    exit(code);
}
