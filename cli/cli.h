/*
 * cli: the command table and what the commands share.
 *
 * One file per command (cli/cmd_<name>.c, cmd_<name>()), like git's
 * builtin/. A command returns the process exit status: 0 ok, 1 the run
 * failed, 2 bad input (usage, scenario errors). Only main() exits.
 */
#ifndef CT_CLI_H
#define CT_CLI_H

#include <stdio.h>

#define EXIT_OK 0
#define EXIT_RUN_FAILED 1
#define EXIT_BAD_INPUT 2

int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dash(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_measure(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_forecast(int argc, char **argv);
int cmd_fit_failures(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);

/* Print "clustertwin CMD: message" to stderr; returns EXIT_BAD_INPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Hardware mode (cli/hwrun.c). cli_hw_measure: price w's microbenchmark
 * cases on the host model when the backend is cpu or mpi (profile file,
 * else the scenario's <host-profile>, else the built-in generic host), then
 * measure them with the backend, measured_s being `statistic` ("min" or
 * "median", NULL = min); *rank = this process's rank (only rank 0
 * writes). Returns an exit status: 2 when the backend or profile is
 * unavailable (message printed), 1 when a case failed to measure.
 * cli_hw_session: the same on a new world of s, then the results JSON
 * (json_path, NULL = none), the database (db_path, NULL = none) and the
 * predicted-vs-measured table on stdout (table) from rank 0. */
struct world;
int cli_check_statistic(const char *cmd, const char *statistic);   /* NULL ok; else min|median */
int cli_hw_measure(const char *cmd, const char *backend, const char *profile, const char *statistic,
                   struct world *w, int verbose, int *rank);
struct scenario;
/* --profile P on run and validate: P's <gpu-profile> (the GPU's calibrated
 * values, docs/gpu-calibration.md) written into s's catalog GPU and nodes
 * before the world is built, so the microbenchmarks and the training and
 * serving models of that GPU use them. NULL: nothing to do. Returns an exit
 * status (2: the profile cannot be read or is for a GPU s does not have). */
int cli_apply_profile(const char *cmd, struct scenario *s, const char *profile);
int cli_hw_session(const char *cmd, struct scenario *s, const char *backend, const char *profile,
                   const char *statistic, const char *json_path, const char *db_path, int table, int verbose);

/* A simulated run's set-up and results (cli/outputs.c), shared by run and
 * dash. cli_parse_seed: --seed's value (z NULL: *seed = -1, none); a usage
 * error otherwise. cli_world_build: load FILE, apply seed (>= 0) and the
 * --profile (cli_apply_profile; NULL: none), make the
 * metric bus and the world; prints the error and returns an exit status
 * (2 bad input, 1 out of memory), leaving what it made in *s, *bus, *w for
 * the caller to free.
 * cli_store_begin: open the results database db_path (NULL: the default
 * out/<scenario>.db, skipped with a warning when it cannot be written) and
 * start recording the run on bus; *st = NULL when not recording. Returns
 * an exit status (an explicit db_path that cannot be written: 1 or 2).
 * cli_write_results: the JSON (json_path, NULL = none; written whole or
 * not at all) and the run's rows in st (NULL = none). Messages are
 * prefixed "clustertwin <cmd>:". Returns EXIT_OK or EXIT_RUN_FAILED. */
struct metric_bus;
struct store;
int cli_parse_seed(const char *cmd, const char *z, double *seed);
/* A whole-number option: z NULL leaves *out as it is; else lo <= z <= hi,
 * or a usage error ("--jobs 0: expected a whole number from 1 to 4096"). */
int cli_parse_count(const char *cmd, const char *opt, const char *z, long lo, long hi, long *out);
/* out/<name><suffix>.db, the name reduced to characters safe in a file name. */
void cli_default_db(const char *name, const char *suffix, char *buf, size_t len);
int cli_world_build(const char *file, double seed, const char *profile, struct scenario **s, struct metric_bus **bus,
                    struct world **w);
int cli_store_begin(const char *cmd, const char *db_path, const struct scenario *s, struct metric_bus *bus,
                    struct store **st);
int cli_write_results(const char *cmd, const struct scenario *s, const struct world *w, double wall_s,
                      const char *json_path, struct store *st);

/* Create the directories above path (errors ignored: the open that
 * follows reports them). */
void cli_mkdir_parent(const char *path);

/* Monotonic wall clock in seconds. */
double cli_wall_s(void);

#endif
