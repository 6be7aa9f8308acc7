/*
 * reqtrace: a request trace (<arrivals process="trace" href="..." format=>
 * of an <inference>) read into rows the service replays (sim/serving).
 *
 * Formats (docs/request-traces.md says each one's columns, units and
 * sources; docs/traces.md the CSV dialect, scenarios/csv.h's):
 *
 *   csv         time,input_tokens,output_tokens[,model[,session[,class]]]
 *               (reqtrace_csv.c): time a duration (90s, 2min; plain = s)
 *   azure-2023  Azure LLM inference trace 2023 and 2024: a header
 *   azure-2024  TIMESTAMP,ContextTokens,GeneratedTokens, TIMESTAMP a date
 *               and time (reqtrace_azure.c); times from the first row
 *   burstgpt    BurstGPT: Timestamp (s), Model, Request tokens, Response
 *               tokens, [Session ID], ... (reqtrace_burstgpt.c); failed
 *               rows (0 response tokens) are dropped and counted
 *   mooncake    Mooncake FAST'25 JSON lines: timestamp (ms), input_length,
 *               output_length, hash_ids (prefix blocks of 512 tokens)
 *               (reqtrace_mooncake.c)
 *   auto        by the file's shape: a first line starting '{' is
 *               mooncake; a header with TIMESTAMP, ContextTokens and
 *               GeneratedTokens is azure; with Timestamp, Request tokens and
 *               Response tokens, burstgpt; anything else csv
 *
 * Every format: times must not go backwards from one row to the next (the
 * published traces are sorted; a file that is not was cut or joined by
 * mistake, so it is refused at the row, not silently sorted); lengths are
 * whole numbers >= 1; input + output must fit the row's model's context.
 * Errors name the file and line: "req.csv:12: input_tokens '1k' must be a
 * whole number".
 */
#ifndef CT_REQTRACE_H
#define CT_REQTRACE_H

#include <stddef.h>
#include <stdint.h>

/* A trace row: arrival time (seconds from the start of the arrivals), input
 * tokens, output tokens, model index in the service's models; the
 * conversation or user it belongs to (session, -1: none) and the hashes of
 * its prompt's leading KV blocks (Mooncake's hash_ids: a block's hash names
 * the whole prefix up to it), which the prefix cache matches: entries
 * block_off .. block_off + n_blocks - 1 of the trace's block pool (none:
 * n_blocks 0). */
typedef struct reqtrace_row {
    double t_s;
    int input, output, model;
    int cls;                       /* request class named by the row; -1: none (drawn by share) */
    int64_t session;
    int64_t block_off;
    int n_blocks;
} reqtrace_row;

typedef enum reqtrace_format {
    REQTRACE_AUTO, REQTRACE_CSV, REQTRACE_AZURE_2023, REQTRACE_AZURE_2024, REQTRACE_BURSTGPT, REQTRACE_MOONCAKE
} reqtrace_format;

#define REQTRACE_FORMATS "auto, csv, azure-2023, azure-2024, burstgpt, mooncake"

/* The format named z (one of REQTRACE_FORMATS), or -1. */
int reqtrace_format_parse(const char *z);
const char *reqtrace_format_name(reqtrace_format f);

/* How a trace is replayed: its format, how much faster than recorded
 * (time_scale 2: every time halved; 0 counts as 1), and where on the
 * trace's own clock the replay begins (skip_s: earlier rows are dropped,
 * later times are counted from it). */
typedef struct reqtrace_opts {
    reqtrace_format format;
    double time_scale;
    double skip_s;
} reqtrace_opts;

/* The service a trace is read for: model names and each one's context in
 * tokens. A row's model is named by the trace (csv: must be one of them;
 * burstgpt: that model when the service serves one of that name, else the
 * first); rows that name none go to the first. The service's request
 * classes (docs/serving-slo.md; n_classes 0: none): csv's class column
 * must name one of them. */
typedef struct reqtrace_models {
    const char *const *names;
    const int *max_context;
    int n;
    const char *const *classes;
    int n_classes;
} reqtrace_models;

/* A trace read: its rows in arrival order, the prefix block pool the rows
 * point into (NULL when the format has none) and its block size in tokens
 * (Mooncake: 512; 0: none), the format it was read as (auto resolved), and
 * rows read but not replayed: failed requests (burstgpt) and rows before
 * skip_s. */
typedef struct reqtrace {
    reqtrace_row *rows;
    long n;
    uint32_t *blocks;
    int64_t n_blocks;
    int block_tokens;
    reqtrace_format format;
    long n_failed, n_skipped;
} reqtrace;

/* Read the request trace at path for the service's models. Returns 0 with
 * *t filled (the caller frees it with reqtrace_free), or -1 with *t empty
 * and err "path:line: what was expected"; nothing is left allocated. */
int reqtrace_read(const char *path, const reqtrace_opts *o, const reqtrace_models *sm, reqtrace *t, char *err,
                  size_t errlen);

void reqtrace_free(reqtrace *t);

/* reqtrace_read with the format told by the file, at recorded speed, rows
 * only: returns the row count and *rows (the caller frees them), or -1 with
 * *rows NULL and err. */
long reqtrace_load(const char *path, const char *const *models, const int *max_context, int n_models,
                   reqtrace_row **rows, char *err, size_t errlen);

#endif
