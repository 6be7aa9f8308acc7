/*
 * ranks: the MPI messages of a sweep's checks and its list of runs (see
 * ranks.h; the runs themselves: ranks_run.c). A few messages per rank per
 * sweep: a count, then one message per misfit.
 */
#include "plan/ranks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/comm.h"

#define TAG_COUNT 7101
#define TAG_RESULT 7102

int ranks_init(char *err, size_t errlen) {
    /* OpenMPI busy-polls in a blocking receive unless told to yield */
    if (comm_launched()) setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    return comm_init(0, err, errlen);
}

void ranks_share(long long total, int k, int size, long long *lo, long long *hi) {
    *lo = total * k / size;
    *hi = total * (k + 1) / size;
}

/* A rank other than 0: its verdict, its first bad point's message, and
 * each misfit (int32 point, then the reason). */
static void send_checks(const sweep *sw, const int32_t mine[2], const char *msg) {
    comm_send(mine, 2 * sizeof *mine, 0, TAG_COUNT);
    if (mine[0] >= 0) comm_send(msg ? msg : "", strlen(msg ? msg : "") + 1, 0, TAG_RESULT);
    for (int p = 0; p < sw->n_points; p++) {
        if (!sw->unfit[p]) continue;
        size_t k = strlen(sw->unfit[p]) + 1;
        char *m = malloc(sizeof(int32_t) + k);
        if (!m) comm_abort(1);
        int32_t p32 = p;
        memcpy(m, &p32, sizeof p32);
        memcpy(m + sizeof p32, sw->unfit[p], k);
        comm_send(m, sizeof p32 + k, 0, TAG_RESULT);
        free(m);
    }
}

/* Rank 0: rank src's misfits into sw->unfit. Returns rc, PLAN_FAILED
 * when a message was broken. */
static int recv_misfits(sweep *sw, int src, int count, int rc) {
    for (int i = 0; i < count; i++) {
        void *m = NULL;
        long got = comm_recv_any_size(&m, src, TAG_RESULT);
        int32_t p32 = -1;
        if (got > (long)sizeof p32) memcpy(&p32, m, sizeof p32);
        if (p32 >= 0 && p32 < sw->n_points && !sw->unfit[p32] && ((char *)m)[got - 1] == 0)
            sw->unfit[p32] = strdup((char *)m + sizeof p32);
        else if (p32 < 0 && rc == PLAN_OK)
            rc = PLAN_FAILED;
        free(m);
    }
    return rc;
}

int ranks_gather_checks(sweep *sw, int rc, int *bad, char **msg) {
    int32_t mine[2] = { rc != PLAN_OK ? -2 : *bad, 0 };
    for (int p = 0; p < sw->n_points; p++) mine[1] += sw->unfit[p] != NULL;
    if (comm_rank() != 0) {
        send_checks(sw, mine, *msg);
        return rc;
    }
    for (int src = 1; src < comm_size(); src++) {
        int32_t theirs[2];
        if (comm_wait_message(src, TAG_COUNT) < 0 || comm_recv(theirs, sizeof theirs, src, TAG_COUNT) < 0)
            theirs[0] = -2, theirs[1] = 0;
        if (theirs[0] == -2 && rc == PLAN_OK) rc = PLAN_FAILED;
        if (theirs[0] >= 0) {
            void *m = NULL;
            if (comm_recv_any_size(&m, src, TAG_RESULT) >= 0 && (*bad < 0 || theirs[0] < *bad)) {
                free(*msg);
                *msg = m;
                *bad = theirs[0];
            } else {
                free(m);
            }
        }
        rc = recv_misfits(sw, src, theirs[1], rc);
    }
    return rc;
}

void ranks_bcast_verdict(int *rc, int *bad) {
    int32_t out[2] = { *rc, *bad };
    comm_bcast_idle(out, sizeof out, 0);
    *rc = out[0];
    *bad = out[1];
}

int ranks_bcast_tasks(ranks_task **todo, int *nt) {
    int32_t n32 = *nt;
    if (comm_bcast_idle(&n32, sizeof n32, 0) < 0) return -1;
    *nt = n32;
    if (comm_rank() != 0 && *nt > 0 && !(*todo = malloc((size_t)*nt * sizeof **todo))) comm_abort(1);
    if (*nt > 0 && comm_bcast_idle(*todo, (size_t)*nt * sizeof **todo, 0) < 0) return -1;
    return 0;
}
