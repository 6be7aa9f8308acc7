/*
 * reqtrace: a request-trace CSV (<arrivals process="trace" href="req.csv"/>
 * of an <inference>) read into rows the service replays (sim/serving).
 *
 * Format (docs/traces.md; the CSV dialect is scenarios/csv.h's): one request
 * per line, an optional header line, '#' comments, blank lines skipped:
 *
 *   time,input_tokens,output_tokens[,model]
 *   0,512,128
 *   1.5s,2048,256,llama3-70b
 *
 *   time           from the start of the arrivals (plain number = seconds;
 *                  units allowed: 90s, 2min); not decreasing
 *   input_tokens   whole number >= 1
 *   output_tokens  whole number >= 1
 *   model          one of the service's models (empty or absent = the first)
 *
 * input + output must fit the model's context. Errors name the CSV file and
 * line: "req.csv:12: input_tokens '1k' must be a whole number".
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
    int64_t session;
    int64_t block_off;
    int n_blocks;
} reqtrace_row;

/* Read the request trace at path against the service's models (n_models
 * names, and the context of each in tokens). Returns the row count and
 * *rows (the caller frees them), or -1 with *rows NULL and err
 * "path:line: what was expected"; nothing is left allocated. */
long reqtrace_load(const char *path, const char *const *models, const int *max_context, int n_models,
                   reqtrace_row **rows, char *err, size_t errlen);

#endif
