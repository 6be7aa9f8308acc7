/*
 * bench_sweep: a sweep on two MPI ranks against the same sweep in one
 * process, as a speed-up next to its target, with two local worker
 * processes beside it for reference.
 *
 *   800 runs of scenarios/llama3-405b-spares.xml (4 spare counts x 200
 *   replicas, ~6 s in one process: long enough that starting mpirun and
 *   loading the points do not dominate), through the program as a person
 *   runs it:
 *     build/clustertwin sweep S --jobs 1          one process
 *     build/clustertwin sweep S --jobs 2          two local workers (reference)
 *     mpirun -np 2 build/clustertwin sweep S      two ranks
 *   Target (issue 23): at least 1.8x on a quiet 2-core machine (rank 0
 *   deals the runs as the ranks ask and stores every result between its
 *   own runs; a waiting rank sleeps, it does not poll a core). Skipped
 *   without mpirun.
 *
 * Output (MISSED is printed, not failed: a loaded machine has no second
 * core to give; compare the two ranks with --jobs 2, measured in the same
 * window):
 *   MPI sweep, 2 ranks vs --jobs 1, 800 runs: 5.76 s vs 3.13 s: 1.84x (target >= 1.8x) ok; --jobs 2: 3.10 s (1.86x)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define SWEEP "build/clustertwin sweep scenarios/llama3-405b-spares.xml --vary cluster/spares/@warm=0,16,32,64 " \
              "--replicas 200 --quiet"

static double timed(const char *cmd) {
    double t0 = now_s();
    int rc = system(cmd);
    return rc == 0 ? now_s() - t0 : -1;
}

int main(void) {
    if (system("command -v mpirun >/dev/null 2>&1") != 0) {
        printf("MPI sweep, 2 ranks vs --jobs 1: skipped (no mpirun; Debian: openmpi-bin)\n");
        return 0;
    }
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);            /* OpenMPI refuses root without both */
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    const double target = 1.8;
    double one = timed("rm -f /tmp/bench_sweep1.db && " SWEEP " --jobs 1 --db /tmp/bench_sweep1.db");
    double two = timed("rm -f /tmp/bench_sweep2.db && mpirun -np 2 " SWEEP " --db /tmp/bench_sweep2.db >/dev/null");
    double local = timed("rm -f /tmp/bench_sweep3.db && " SWEEP " --jobs 2 --db /tmp/bench_sweep3.db");
    if (system("rm -f /tmp/bench_sweep1.db /tmp/bench_sweep2.db /tmp/bench_sweep3.db") != 0 || one < 0 || two < 0 ||
        local < 0) {
        fprintf(stderr, "bench_sweep: a sweep failed\n");
        return 1;
    }
    printf("MPI sweep, 2 ranks vs --jobs 1, 800 runs: %.2f s vs %.2f s: %.2fx (target >= %.1fx) %s; --jobs 2: %.2f s "
           "(%.2fx)\n",
           one, two, one / two, target, one / two >= target ? "ok" : "MISSED", local, one / local);
    return 0;
}
