/*
 * slurm: Slurm's own reports of a cluster, read natively into the plain
 * record of a live cluster (scenarios/live.h):
 *
 *   squeue --json   jobs running and waiting          slurm_squeue.c
 *   sinfo --json    nodes, their state, partitions    slurm_sinfo.c
 *   sacct --json    the finished jobs (history)       slurm_sacct.c
 *   sacct -P --format=JobID,JobName,User,Account,Partition,State,Submit,
 *         Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,NodeList,ExitCode,Reason
 *                   the same history as text          slurm_sacct_text.c
 *
 * The JSON's shape depends on the Slurm release; each document is read by
 * the version its "meta" names (slurm_common.c): Slurm 22.05's OpenAPI
 * plugin v0.0.38 (meta.plugin.type "openapi/v0.0.38" or "openapi/dbv0.0.38",
 * meta.Slurm.release), and the data_parser plugins v0.0.39 (23.02:
 * meta.plugins.data_parser), v0.0.40 (23.11), v0.0.41 (24.05), v0.0.42
 * (24.11) and v0.0.43 (25.05) (meta.plugin.data_parser, meta.slurm.release).
 * Field lists are Slurm's source (github.com/SchedMD/slurm, tags
 * slurm-22-05-8-1 ... slurm-25-05-8-1):
 *   22.05  src/plugins/openapi/v0.0.38/jobs.c (squeue: _job_info_to_data),
 *          src/plugins/openapi/v0.0.38/nodes.c (sinfo: _add_node),
 *          src/plugins/openapi/dbv0.0.38/parse.c (sacct: parse_job[]),
 *          src/plugins/openapi/v0.0.38/api.c (meta: populate_response_format)
 *   23.02+ src/plugins/data_parser/v0.0.NN/parsers.c: PARSER_ARRAY(JOB_INFO)
 *          (squeue "jobs"), PARSER_ARRAY(SINFO_DATA) and (PARTITION_INFO)
 *          (sinfo "sinfo"), PARSER_ARRAY(JOB) (sacct "jobs"),
 *          PARSER_ARRAY(OPENAPI_META); src/interfaces/data_parser.c (23.02's
 *          CLI meta: _populate_cli_response_meta)
 * What differs (docs/live-cluster.md has the table):
 *   - job_state: a string up to v0.0.39, an array of strings (base state
 *     then flags) from v0.0.40;
 *   - numbers that may be unset or infinite (time_limit, priority,
 *     array_task_id; from v0.0.40 also squeue's submit_time and
 *     start_time) are {"set","infinite","number"} objects from v0.0.39
 *     (DUMP_FUNC(UINT32_NO_VAL)), plain numbers or null before: both are
 *     read wherever a number is expected;
 *   - sinfo: v0.0.38 lists "nodes" one by one (state a lower-case string
 *     plus state_flags); later versions list "sinfo" node groups (one per
 *     partition and state) with nodes.nodes a list of names, node.state an
 *     array and the partition's limits;
 *   - exit codes: v0.0.38 and v0.0.39 dump {"status","return_code"} and
 *     report any normal exit as SUCCESS with return code 0 (the dump tests
 *     WIFEXITED before the status), so `sacct -P`'s ExitCode 3:0 reads as
 *     SUCCESS in their JSON; v0.0.40+ dump {"status":[..],"return_code":
 *     {set,infinite,number},"signal":..}. Exit codes are therefore not
 *     read at all: a job's outcome is its state.
 *
 * GPUs come from TRES strings ("gres/gpu=16", "gres/gpu:h100=8"), sacct's
 * TRES lists ([{"type":"gres","name":"gpu","count":8}]), a job's
 * tres_per_node/tres_per_job ("gres:gpu:8" in 22.05, "gres/gpu:8" later)
 * or a node's GRES ("gpu:h100:8(S:0-1)"). Jobs without GPUs are counted
 * (live_cluster.jobs_without_gpus) and left out.
 *
 * Every reader returns 0, or -1 with err = one line "PATH:LINE: where:
 * expected ..." (the line of the JSON value, or of the text row).
 */
#ifndef CT_SLURM_READ_H
#define CT_SLURM_READ_H

#include <stddef.h>

#include "scenarios/jsonin.h"
#include "scenarios/live.h"

#define SLURM_ARRAY_MAX_TASKS 100000      /* tasks one pending array record may expand to */

/* squeue --json: the jobs pending, held and running (finished ones still
 * listed are left out) into c->jobs, times relative to at_unix_s (the
 * snapshot's wall-clock time). A pending array record ("1234_[5-9%2]") is
 * expanded into one job per task ("1234_5" ...; the %2 throttle is not
 * modelled). Sets c->source when it is unset. */
int slurm_squeue(const jsonin *d, double at_unix_s, live_cluster *c, char *err, size_t errlen);

/* sinfo --json: the nodes (each once, its partitions joined) into
 * c->nodes and, from v0.0.39 on, the partitions with their limits into
 * c->parts (v0.0.38's sinfo has none: partitions are named from the
 * nodes'). since_s relative to at_unix_s. */
int slurm_sinfo(const jsonin *d, double at_unix_s, live_cluster *c, char *err, size_t errlen);

/* One job record of sacct that ended (strings borrowed for the call). */
typedef struct slurm_ended {
    const char *id, *name, *user, *account, *partition, *state, *nodes;
    double submit, start, end, elapsed_s, limit_s;   /* Unix seconds; start 0: never ran */
    int gpus;
} slurm_ended;

/* Called by the sacct readers with each record that ended, every
 * attempt of a requeued job included (job steps, and jobs still pending,
 * held or running, are not given). 0, or -1 with why set ("nodes \"x[\":
 * expected ..."): the reader says it at the record's file and line. */
typedef int (*slurm_ended_fn)(void *ctx, const slurm_ended *e, char *why, size_t whylen);

/* What a caller of the sacct -P reader needs besides JobID, State, Start
 * and End (the header must name those columns). */
enum {
    SLURM_SACCT_FOR_HISTORY = 1,         /* Timelimit, and AllocTRES or ReqTRES (slurm_sacct_text) */
    SLURM_SACCT_FOR_FAILURES = 2,        /* NodeList (fit-failures: scenarios/failhist.c) */
};

/* The one sacct reader: each ended record of sacct --json (any data
 * parser above) or of sacct -P text (`need`: SLURM_SACCT_FOR_*) to fn. */
int slurm_sacct_each(const jsonin *d, slurm_ended_fn fn, void *ctx, char *err, size_t errlen);
int slurm_sacct_text_each(const char *text, size_t len, const char *path, unsigned need, slurm_ended_fn fn, void *ctx,
                          char *err, size_t errlen);
/* The same from a regular file (scenarios/infile.h rules): sacct -P text
 * when text is 1, else sacct --json. */
int slurm_sacct_file_each(const char *path, int text, unsigned need, slurm_ended_fn fn, void *ctx, char *err,
                          size_t errlen);

/* sacct --json: every job that ended (and, for replay, its times) into
 * c->history; a job listed more than once (requeued attempts) is kept
 * once, its last attempt, with attempts counting them. Array records
 * never started and jobs still pending or running are left out. */
int slurm_sacct(const jsonin *d, live_cluster *c, char *err, size_t errlen);

/* sacct -P text with a header line naming (at least) JobID, State,
 * Start, End and Timelimit, and AllocTRES or ReqTRES; the others above are
 * optional. Job steps (1234.batch, 1234.0) are skipped. Times without a
 * zone are read as UTC (base/datetime.h): only differences are used. */
int slurm_sacct_text(const char *text, size_t len, const char *path, live_cluster *c, char *err, size_t errlen);

/* Which report a text is. */
typedef enum slurm_kind { SLURM_SQUEUE, SLURM_SINFO, SLURM_SACCT, SLURM_SACCT_TEXT } slurm_kind;

/* Parse len bytes of a report of this kind (name names it in messages:
 * a path, or "squeue --json" for a command's output) into c
 * (slurm_read.c). */
int slurm_read_text(const char *text, size_t len, const char *name, slurm_kind kind, double at_unix_s, live_cluster *c,
                    char *err, size_t errlen);
/* The same from a regular file (scenarios/infile.h rules; JSON at most
 * JSONIN_MAX_BYTES). */
int slurm_read_file(const char *path, slurm_kind kind, double at_unix_s, live_cluster *c, char *err, size_t errlen);

/* GPUs in a TRES, GRES or tres_per_* string: the sum of its gpu items
 * (untyped "gres/gpu=8" wins over typed ones naming the same GPUs), the
 * first type into model (may be NULL). 0 when it has none; -1 when a gpu
 * item's count is not a whole number (why set). */
long slurm_gpus_in(const char *list, char *model, size_t modellen, char *why, size_t whylen);

#endif
