/*
 * measure: a standard microbenchmark sweep of this machine with one
 * backend, stored in a results database for `clustertwin calibrate`.
 *
 * The sweep is written as a scenario (the same <microbenchmarks> a user
 * writes) and measured like `run FILE --backend B`, so the database holds
 * it as a run with its cases, predictions and measurements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "hw/backend.h"
#include "scenarios/scenario.h"

static const char help[] =
    "usage: clustertwin measure --backend cpu|mpi|cuda|nccl [--cases FILE] [--db PATH] [--json PATH|-]\n"
    "                           [--dir DIR] [--ranks N] [--statistic min|median] [--quick] [--quiet]\n"
    "\n"
    "Measure this machine with a hardware backend and store the measurements (with the\n"
    "host model's predictions) as a run in the results database, for 'clustertwin calibrate'.\n"
    "  --backend B   cpu: host memcpy 4 KiB..256 MiB by sqrt(2), fp32 and fp64 GEMM 32..512, storage\n"
    "                write+fsync and read 1..128 MiB by sqrt(2) in DIR; mpi (under mpirun -np N): the six\n"
    "                collectives 1 KiB..64 MiB by factor 2 across the N ranks; cuda: GEMM and\n"
    "                d2d/h2d/d2h copies; nccl: the collectives on this node's GPUs, or under\n"
    "                mpirun -np N (one process per node: --map-by node) on all N x G GPUs of\n"
    "                the N processes, MPI bootstrapping one NCCL communicator (every process\n"
    "                must see the same G GPUs; only rank 0 writes)\n"
    "  --cases FILE  measure the <microbenchmarks> of scenario FILE instead of the sweep\n"
    "  --db PATH     results database (default out/measure-<backend>.db)\n"
    "  --json PATH   also write the results JSON ('-' = stdout)\n"
    "  --dir DIR     storage cases write in DIR (default out/ckpt-bench)\n"
    "  --ranks N     collectives' ranks (default: mpirun's -np for mpi; for nccl every GPU of\n"
    "                every process, N x G, or 8 when no GPU is seen)\n"
    "  --statistic S what measured_s is, and what calibrate fits: min, the fastest repetition\n"
    "                (default), or median\n"
    "  --quick       a short sweep (fewer, smaller sizes: for tests)\n"
    "  --quiet       no table, no progress\n"
    "The cuda sweep's GEMMs are bf16, fp32 and fp8, 8192^3 (--quick: 128^3), its copies\n"
    "1 MiB..1 GiB; fp8 runs through cuBLASLt on compute capability 8.9+ (Ada/Hopper) and is\n"
    "a note ('not measured: ...') on older GPUs or without libcublasLt.\n"
    "Each case is measured in CT_HW_ROUNDS rounds (default 3), the rounds one after the other,\n"
    "so a case's repetitions spread over the whole sweep and a burst of load from other\n"
    "programs weighs one round; each round: CT_HW_WARMUP untimed runs (default 2), then up to\n"
    "CT_HW_REPS timed repetitions (default 9, at least 3) within the case's share of\n"
    "CT_HW_BUDGET_S seconds (default 2). Recorded: the fastest repetition of all rounds, the\n"
    "median of the rounds' medians, their quartiles, and the slowest repetition.\n"
    "Exit status: 0 ok, 1 a measurement failed, 2 bad input or the backend is unavailable.\n";

/* MPI ranks of this launch, from the launcher's environment (1 outside). */
static int launch_size(void) {
    const char *vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *z = getenv(vars[i]);
        if (z && atoi(z) > 0) return atoi(z);
    }
    return 1;
}

/* The standard sweep of a backend as scenario XML (malloc'd). */
static char *sweep_xml(const char *backend, const char *dir, int quick, int ranks) {
    size_t cap = 8192, n = 0;
    char *z = malloc(cap);
    if (!z) return NULL;
#define ADD(...) n += (size_t)snprintf(z + n, n < cap ? cap - n : 0, __VA_ARGS__)
    int r = 0;                       /* collectives' ranks */
    if (!strcmp(backend, "mpi") || !strcmp(backend, "nccl")) {
        int g = !strcmp(backend, "nccl") ? hw_local_gpus() : 1;
        r = ranks > 0 ? ranks : g > 0 ? launch_size() * g : 8;
        if (r < 2) r = 2;
    }
    ADD("<?xml version=\"1.0\"?>\n<scenario name=\"measure-%s\" seed=\"1\">\n"
        "  <cluster><nodes type=\"dgx-h100\" count=\"%d\"/></cluster>\n  <microbenchmarks>\n", backend,
        r > 8 ? (r + 7) / 8 : 1);
    if (!strcmp(backend, "cpu")) {
        /* Copies by sqrt(2): cheap to measure, and the caches' knees are steep,
         * so a calibration holding out every other size still fits on a
         * factor-2 grid and is checked halfway between. */
        ADD("    <copy kind=\"host\" min-size=\"4KiB\" max-size=\"%s\" factor=\"%s\"/>\n", quick ? "4MiB" : "256MiB",
            quick ? "2" : "1.4142135623730951");
        static const int sizes[] = { 32, 48, 64, 96, 128, 192, 256, 384, 512 };
        int ns = quick ? 4 : (int)(sizeof sizes / sizeof *sizes);
        for (int p = 0; p < 2; p++)
            for (int i = 0; i < ns; i++)
                ADD("    <gemm m=\"%d\" n=\"%d\" k=\"%d\" precision=\"%s\"/>\n", sizes[i], sizes[i], sizes[i],
                    p ? "fp64" : "fp32");
        /* Storage by sqrt(2) too (whole KiB): measured here, the read back's
         * bandwidth climbs from 1.4 to 2.6 GB/s over the whole range, and
         * 4 fitted sizes left the held-out ones 21-23% off; 8 leave 9%. */
        int maxkb = quick ? 4096 : 131072;
        double step = quick ? 2 : 1.4142135623730951;
        for (double kb = 1024; kb <= maxkb * (1 + 1e-9); kb *= step)
            ADD("    <storage-write size=\"%.0fKiB\" files=\"1\" path=\"%s\"/>\n", kb, dir);
    } else if (!strcmp(backend, "mpi") || !strcmp(backend, "nccl")) {
        static const char *ops[] = { "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "sendrecv" };
        for (int i = 0; i < 6; i++)
            ADD("    <collective op=\"%s\" ranks=\"%d\" min-size=\"1KiB\" max-size=\"%s\" factor=\"2\"/>\n", ops[i],
                r, quick ? "256KiB" : "64MiB");
    } else {
        int g = quick ? 128 : 8192;
        const char *mx = quick ? "4MiB" : "1GiB";
        for (int i = 0; i < 3; i++)       /* fp8 through cuBLASLt: a note below compute capability 8.9 */
            ADD("    <gemm m=\"%d\" n=\"%d\" k=\"%d\" precision=\"%s\"/>\n", g, g, g,
                (const char *[]){ "bf16", "fp32", "fp8" }[i]);
        for (int i = 0; i < 3; i++)
            ADD("    <copy kind=\"%s\" min-size=\"1MiB\" max-size=\"%s\" factor=\"4\"/>\n",
                (const char *[]){ "d2d", "h2d", "d2h" }[i], mx);
    }
    ADD("  </microbenchmarks>\n</scenario>\n");
#undef ADD
    if (n >= cap) {
        free(z);
        return NULL;
    }
    return z;
}

int cmd_measure(int argc, char **argv) {
    const char *backend = NULL, *cases = NULL, *db = NULL, *json_path = NULL, *dir = "out/ckpt-bench", *ranks_z = NULL,
               *statistic = NULL;
    int quick = 0, quiet = 0;
    const cli_option opts[] = {
        { "--backend", NULL, CLI_VALUE, &backend, "cpu, mpi, cuda or nccl" },
        { "--cases", NULL, CLI_VALUE, &cases, "measure the <microbenchmarks> of scenario FILE" },
        { "--db", NULL, CLI_VALUE, &db, "results database" },
        { "--json", NULL, CLI_VALUE, &json_path, "also write the results JSON ('-': stdout)" },
        { "--dir", NULL, CLI_VALUE, &dir, "where storage cases write" },
        { "--ranks", NULL, CLI_VALUE, &ranks_z, "the collectives' ranks" },
        { "--statistic", NULL, CLI_VALUE, &statistic, "what measured_s is: min or median" },
        { "--quick", NULL, CLI_FLAG, &quick, "a short sweep (for tests)" },
        { "--quiet", "-q", CLI_FLAG, &quiet, "no table, no progress" },
        { NULL },
    };
    cli_spec spec = { "measure", help, opts, CLI_NONE, NULL, NULL };
    int prc = cli_parse(&spec, argc, argv);
    if (prc != CLI_GO) return prc;
    if (!backend) return cli_usage_error("measure", "missing --backend cpu|mpi|cuda|nccl");
    const char *const known[] = { "cpu", "mpi", "cuda", "nccl" };
    int ok = 0;
    for (int i = 0; i < 4; i++) ok |= !strcmp(backend, known[i]);
    if (!ok) return cli_usage_error("measure", "--backend %s: expected cpu, mpi, cuda or nccl", backend);
    if (db && !*db) return cli_usage_error("measure", "--db needs a path");
    if (cli_check_statistic("measure", statistic) != EXIT_OK) return EXIT_BAD_INPUT;
    int ranks = 0;
    if (ranks_z && ((ranks = atoi(ranks_z)) < 2 || ranks > 4096))
        return cli_usage_error("measure", "--ranks %s: expected 2 to 4096", ranks_z);

    char err[2048], default_db[64];
    scenario *s = NULL;
    if (cases) {
        if (scenario_load(cases, &s, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            return EXIT_BAD_INPUT;
        }
    } else {
        char *xml = sweep_xml(backend, dir, quick, ranks);
        char name[64];
        snprintf(name, sizeof name, "<measure --backend %s>", backend);
        int rc = xml ? scenario_load_memory(xml, strlen(xml), name, &s, err, sizeof err) : -1;
        free(xml);
        if (rc < 0) {
            fprintf(stderr, "clustertwin measure: %s\n", xml ? err : "out of memory");
            return EXIT_BAD_INPUT;
        }
    }
    if (!db) {
        snprintf(default_db, sizeof default_db, "out/measure-%s.db", backend);
        cli_mkdir_parent(default_db);
        db = default_db;
    }
    int rc = cli_hw_session("measure", s, backend, NULL, statistic, json_path, db, !quiet, !quiet);
    scenario_free(s);
    return rc;
}
