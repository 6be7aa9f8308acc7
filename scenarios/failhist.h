/*
 * failhist: a cluster's failure history, read from what Slurm and the GPU
 * telemetry keep, into the events models/failfit.h fits (issue 22,
 * `clustertwin fit-failures`). Each reader takes only the few fields it
 * needs; job records come through the full sacct reader of
 * scenarios/slurm*.c.
 *
 * - node events: `sacctmgr show event -P` (Slurm's default event format
 *   Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User, column names
 *   from the header: SchedMD/slurm src/sacctmgr/event_functions.c and
 *   common.c). A row with a NodeName is one node down or drained with its
 *   reason from TimeStart to TimeEnd ("Unknown": not back yet); cluster
 *   rows (no NodeName) are skipped.
 * - NODE_FAIL job ends: Slurm's one sacct reader (scenarios/slurm.h,
 *   slurm_sacct_each: `sacct --json` of every data parser v0.0.38 to
 *   v0.0.43, or `sacct -P` text whose header names JobID, State, Start,
 *   End and NodeList). Each ended record (every attempt of a requeued
 *   job) counts; a NODE_FAIL end is an event at its End on its first
 *   FAILFIT_NODES_MAX nodes. Every job's nodes are also the fleet that
 *   was watched.
 * - nodes down or drained now: Slurm's one sinfo reader
 *   (scenarios/slurm.h, slurm_sinfo: `sinfo --json` of every data parser
 *   v0.0.38 to v0.0.43, or `scontrol show nodes --json`). A node down or
 *   drained with a reason is an event at the time the reason was set; the
 *   nodes also give the node count and GPUs per node.
 * - telemetry: the events of scenarios/dcgm.h.
 *
 * Times without a zone (sacct and sacctmgr print the cluster's local time)
 * are read as UTC: run them with TZ=UTC when their events are to be merged
 * with telemetry, whose times are Unix seconds.
 */
#ifndef CT_FAILHIST_H
#define CT_FAILHIST_H

#include <stddef.h>

#include "models/failfit.h"
#include "scenarios/dcgm.h"
#include "scenarios/nameset.h"

typedef struct failhist_node { char name[FAILFIT_NODE_MAX]; } failhist_node;

typedef struct failhist {
    failfit_event *ev;
    int n;
    size_t cap;
    double t_first_s, t_last_s;        /* the span of every time read (0, 0: none) */
    failhist_node *nodes;              /* every node named (jobs, events, sinfo, telemetry) */
    int n_nodes;
    size_t cap_nodes;
    name_set node_set;
    int sinfo_nodes, sinfo_gpus_per_node;  /* from sinfo (0: not read) */
    int jobs, node_fail_jobs;          /* ended sacct records read, and NODE_FAIL among them */
} failhist;

/* Each reader adds to h and returns 0, or -1 with err "path:line: what was
 * expected" (h may then hold part of the file: free it). */
int failhist_read_events(failhist *h, const char *path, char *err, size_t errlen);
int failhist_read_sacct_json(failhist *h, const char *path, char *err, size_t errlen);
int failhist_read_sacct_text(failhist *h, const char *path, char *err, size_t errlen);
int failhist_read_sinfo(failhist *h, const char *path, char *err, size_t errlen);

/* The telemetry's events, classified by their XID (failfit_xid), a
 * double-bit error as XID 48 and a row remap failure as XID 64 would be.
 * 0, or -1 when memory runs out. */
int failhist_add_dcgm(failhist *h, const dcgm_event *ev, int n);

void failhist_free(failhist *h);

#endif
