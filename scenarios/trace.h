/*
 * trace: a job-trace CSV (<trace href="jobs.csv"/>) read into the
 * scenario's workload.
 *
 * Format (one job per line; blank lines and lines starting with # are
 * skipped; the header line is required and names the columns, in any
 * order; unknown columns are errors):
 *
 *   submit,queue,priority,gpus,duration,tokens,model,name
 *   0,research,0,8,2h,,,
 *   3600,prod,10,64,,50B,llama3-8b,finetune-1
 *
 *   submit    duration from the start of the run (plain number = seconds)
 *   queue     a <queue> of the scheduler ("" = the first)
 *   priority  integer (default 0)
 *   gpus      count, >= 1
 *   duration  a batch job of this length, or
 *   tokens + model  a training job of that many tokens of a catalog model
 *             preset; its plan is FSDP over the GPUs (tensor and pipeline
 *             parallel added when the model does not fit), 4K sequences
 *   name      optional (default: trace-<line>)
 *
 * <trace format="..."> reads the public job traces instead
 * (scenarios/jobtrace.h). Submit times must not decrease. Errors name the CSV file and line:
 * "jobs.csv:12: gpus "0": gpus must be a whole number >= 1".
 */
#ifndef CT_TRACE_H
#define CT_TRACE_H

#include <stddef.h>

#include "scenarios/scenario.h"

/* Read the CSV at path (relative paths are taken from the scenario file's
 * directory) and append its jobs to s (batch jobs to
 * s->trace_jobs, compact; training jobs to s->training).
 * Returns 0, or -1 with err set (s may hold some of the jobs; the caller
 * frees it). */
int trace_load(scenario *s, const char *href, int line, char *err, size_t errlen);

/* Append one checked batch job (gpus >= 1, 0 < duration and submit within
 * the clock's horizon; queue an index into s->queues or -1) to
 * s->trace_jobs, its name copied (up to SC_NAME_MAX - 1 bytes); line is the
 * <trace> element's. The public job-trace readers' way in
 * (scenarios/jobtrace.c). 0, or -1 when out of memory. */
int trace_add_batch(scenario *s, const char *name, double submit_s, double duration_s, int gpus, int queue, int line);

/* Append text (with its NUL) to s->trace_names (a trace job's name, id,
 * user or account); its offset, or -1 when out of memory or past 4 GiB of
 * names (s unchanged). */
long trace_add_name(scenario *s, const char *name);

#endif
