/*
 * mpi: the collectives between MPI ranks, through hw/comm.h only (no MPI
 * type here), as nccl-tests runs them: float32 sums, the size being the
 * whole buffer one rank holds (for all-gather and reduce-scatter the
 * gathered buffer), bus bandwidth by the nccl-tests factors. Every rank
 * times the same loop; a repetition lasts as long as its slowest rank.
 *
 *   allreduce      MPI_Allreduce of size/4 floats
 *   allgather      MPI_Allgather of size/n bytes per rank
 *   reducescatter  MPI_Reduce_scatter_block, size/(4n) floats per rank
 *   alltoall       MPI_Alltoall, size/n bytes to each rank
 *   broadcast      MPI_Bcast of size bytes from rank 0
 *   sendrecv       each rank sends size bytes to rank+1 and receives from rank-1
 *
 * Load: three buffers of the case's size per rank.
 */
#include "hw/backend_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/comm.h"

static int mpi_open(hw_backend *b, char *err, size_t errlen) {
    if (!comm_built()) {
        snprintf(err, errlen, "this clustertwin was built without MPI (install Debian's libopenmpi-dev and rebuild)");
        return -1;
    }
    if (!comm_launched()) {
        snprintf(err, errlen, "the mpi backend runs under an MPI launcher: mpirun -np 2 clustertwin ... --backend mpi");
        return -1;
    }
    if (comm_init(0, err, errlen) < 0) return -1;
    if (comm_size() < 2) {
        comm_finalize();
        snprintf(err, errlen, "the mpi backend needs at least 2 ranks (mpirun -np 2 ...); this run has %d",
                 comm_size());
        return -1;
    }
    b->rank = comm_rank();
    b->sync = 1;
    b->env.ranks = comm_size();
    comm_host(b->env.host, sizeof b->env.host);
    snprintf(b->env.devices, sizeof b->env.devices, "%d MPI ranks", comm_size());
    comm_library_version(b->env.libraries, sizeof b->env.libraries);
    return 0;
}

static void mpi_close(hw_backend *b) {
    (void)b;
    comm_finalize();
}

typedef struct coll_ctx {
    coll_op op;
    size_t bytes;                /* the case's size, rounded to whole floats */
    int n, rank;
    char *send, *recv;
} coll_ctx;

static int coll_once(void *p) {
    coll_ctx *x = p;
    size_t per = x->bytes / (size_t)x->n;
    switch (x->op) {
    case COLL_ALLREDUCE: return comm_allreduce_f32((const float *)x->send, (float *)x->recv, x->bytes / 4);
    case COLL_ALLGATHER: return comm_allgather(x->send, x->recv, per);
    case COLL_REDUCESCATTER: return comm_reduce_scatter_f32((const float *)x->send, (float *)x->recv, per / 4);
    case COLL_ALLTOALL: return comm_alltoall(x->send, x->recv, per);
    case COLL_BROADCAST: return comm_bcast(x->send, x->bytes, 0);
    case COLL_SENDRECV:
        return comm_sendrecv(x->send, x->recv, x->bytes, (x->rank + 1) % x->n, (x->rank + x->n - 1) % x->n, 7);
    default: return -1;
    }
}

/* Page-aligned and zeroed: a reduction's speed must not depend on where
 * malloc put the buffers. */
static void *page_buf(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, n) != 0) return NULL;
    memset(p, 0, n);
    return p;
}

static int mpi_measure(hw_backend *b, const mb_case *c, mb_measurement *m, char *why, size_t whylen) {
    if (c->kind != MBC_COLLECTIVE) {
        snprintf(why, whylen, "the mpi backend measures collectives; use --backend cpu for copies, GEMM and storage");
        return HW_UNSUPPORTED;
    }
    int n = comm_size();
    if (c->ranks != n) {
        snprintf(why, whylen, "the case has ranks=%d but mpirun started %d ranks", c->ranks, n);
        return HW_UNSUPPORTED;
    }
    /* Whole floats per rank's share, as nccl-tests rounds counts. */
    size_t unit = 4 * (size_t)n;
    size_t bytes = (size_t)c->size_bytes / unit * unit;
    if (bytes < unit) bytes = unit;
    coll_ctx x = { c->op, bytes, n, comm_rank(), page_buf(bytes), page_buf(bytes) };
    int rc = HW_OK;
    if (!x.send || !x.recv) {
        snprintf(why, whylen, "cannot allocate 2 x %zu bytes", bytes);
        rc = HW_FAILED;
    }
    /* Every rank must agree before entering a collective. */
    if (comm_max_double(rc != HW_OK) > 0) {
        if (rc == HW_OK) snprintf(why, whylen, "another rank could not allocate its buffers");
        rc = HW_FAILED;
    }
    if (rc == HW_OK) {
        for (size_t i = 0; i < bytes / 4; i++) ((float *)x.send)[i] = 1.0f;
        if (hw_time(b, coll_once, &x, NULL, m) < 0) {
            snprintf(why, whylen, "MPI %s failed", coll_op_name(c->op));
            rc = HW_FAILED;
        }
    }
    free(x.send);
    free(x.recv);
    return rc;
}

const hw_ops hw_mpi_ops = { "mpi", mpi_open, mpi_measure, mpi_close };
