/*
 * jobtrace: the public job traces, read in their own published formats
 * into a scenario's trace jobs (<trace href="..." format="...">). What each
 * format's columns mean, their units and sources: docs/job-traces-public.md;
 * each reader's header comment cites its publisher's repository and file.
 *
 *   csv     the project's own job-trace CSV (scenarios/trace.c; the default)
 *   swf     the Standard Workload Format of the Parallel Workloads Archive:
 *           18 whitespace-separated numbers a line, ';' comments
 *           (jobtrace_swf.c)
 *   philly  Microsoft Philly cluster_job_log (JSON) (jobtrace_philly.c)
 *   helios  SenseTime Helios cluster_log.csv (jobtrace_helios.c)
 *   acme    Shanghai AI Lab AcmeTrace trace_seren.csv / trace_kalos.csv
 *           (jobtrace_helios.c: the same Slurm-log schema, more columns)
 *   pai     Alibaba cluster-trace-gpu-v2020 pai_task_table.csv, header-less
 *           (jobtrace_pai.c)
 *   openb   Alibaba cluster-trace-gpu-v2023 openb_pod_list_*.csv
 *           (jobtrace_openb.c)
 *   auto    told by the file's shape (jobtrace.c: jobtrace_sniff); the run
 *           says which in an event
 *
 * Every format becomes batch jobs: submit counted from the trace's first
 * submit, the trace's own run time as the duration, its own GPU count, its
 * queue (vc) kept when the scenario has a <queue> of that name, else the
 * first. Rows that cannot run here (no GPU, never started, no or negative
 * run time, more GPUs than the cluster) are skipped and counted
 * (scenario.trace_read); a row that breaks its format is an error
 * "PATH:LINE: what was expected".
 */
#ifndef CT_JOBTRACE_H
#define CT_JOBTRACE_H

#include <stddef.h>

#include "scenarios/infile.h"
#include "scenarios/scenario.h"

typedef enum jobtrace_format {
    JOBTRACE_CSV, JOBTRACE_AUTO, JOBTRACE_SWF, JOBTRACE_PHILLY, JOBTRACE_HELIOS, JOBTRACE_ACME, JOBTRACE_PAI,
    JOBTRACE_OPENB
} jobtrace_format;

#define JOBTRACE_FORMATS "csv, auto, swf, philly, helios, acme, pai, openb"

/* The format named z (one of JOBTRACE_FORMATS; "" is csv), or -1. */
int jobtrace_format_parse(const char *z);
const char *jobtrace_format_name(jobtrace_format f);

/* The format of the file at path by its shape (auto): JOBTRACE_CSV when it
 * is none of the public ones (trace.c then reads it, or refuses it at its
 * line). -2 with *ie when the file cannot be opened. */
int jobtrace_sniff(const char *path, infile_err *ie);

/* Read the trace at path (resolved) in format f (not csv, not auto) into s's
 * trace jobs with s->trace_read's options, and fill its counts. line is the
 * <trace> element's. 0; -1 with err "PATH:LINE: ..." (s may hold some of
 * the jobs; the caller frees it); -2 with *ie when the file cannot be
 * opened. */
int jobtrace_load(scenario *s, const char *path, jobtrace_format f, int line, infile_err *ie, char *err,
                  size_t errlen);

/* Whether the run reports how its trace was read (an event and the JSON
 * `trace` object): when <trace format> names anything but csv. */
int jobtrace_reported(const scenario *s);

/* What reading the trace found, for the run's event: "jobs.swf read as swf
 * (told by its shape): 1200 rows, 1100 jobs, 100 skipped (...)". */
void jobtrace_describe(const scenario *s, char *buf, size_t len);

#endif
