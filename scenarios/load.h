/*
 * load: what the scenario's section loaders share (private to scenarios/
 * load*.c; nothing else includes it).
 *
 * scenario_load() (load.c) reads the text, parses it (xml.c), checks it
 * against the grammar (validate.c) and calls one loader per section, in
 * dependency order, the cluster before what runs on it:
 *
 *   load_cluster, load_scheduler, load_failures   load_cluster.c
 *     <failures href>: a failure profile file      load_failref.c
 *     node names, unavailable nodes, runtime history  load_state.c
 *   load_workload: training, jobs, trace          load_workload.c
 *     load_inference                              load_inference.c
 *   load_microbenchmarks, load_cost               load_bench.c
 *
 * A loader reads attributes with scenarios/attr.h, reports the first
 * error on L->x (later ones are dropped) and returns; callers test
 * L->x.failed.
 */
#ifndef CT_LOAD_H
#define CT_LOAD_H

#include <stddef.h>

#include "scenarios/attr.h"
#include "scenarios/nameset.h"
#include "scenarios/scenario.h"
#include "scenarios/xml.h"

typedef struct loader {
    xml_src x;                     /* the document, its lines and the one error */
    scenario *s;
    long long cluster_gpus;        /* GPUs of all <nodes>, once <cluster> is read */
    name_set queue_names, storage_names, training_names, jobs_names, inference_names;
    name_set node_types;           /* s->nodes by type: the first <nodes> of each type */
    name_set served;               /* the models of the <inference> being read */
    long long *type_gpus;          /* GPUs of each type, at its first <nodes>' index */
} loader;

#define FAIL_RETURN(L, ...) do { xml_fail(&(L)->x, __VA_ARGS__); return; } while (0)

/* A new zeroed element at the end of a scenario array (scenario_push),
 * or NULL with L failed: more than 100,000 of one element, or out of memory. */
void *loader_push(loader *L, void **arr, int *n, size_t size, const xmlNode *e);
#define PUSH(L, arr, n, e) loader_push((L), (void **)&(arr), &(n), sizeof *(arr), (e))

/* Sections (each is given its element). */
void load_cluster(loader *L, const xmlNode *sec);
void load_scheduler(loader *L, const xmlNode *sec);
void load_failures(loader *L, const xmlNode *sec);
/* One <failure> into s->failures; line: its line for later messages (0:
 * its own; a referenced file's: the line of the <failures href> naming it). */
void load_failure(loader *L, const xmlNode *e, int line);
/* <failures href="P.xml">: the <failure> elements of a failure profile
 * file (what fit-failures writes; path relative to the scenario), read as
 * if written in place, each message naming that file and line
 * (load_failref.c). */
void load_failures_href(loader *L, const xmlNode *sec);
void load_workload(loader *L, const xmlNode *sec);
void load_inference(loader *L, const xmlNode *e);
void load_microbenchmarks(loader *L, const xmlNode *sec);
void load_cost(loader *L, const xmlNode *e);

/* The live cluster's state (load_state.c, docs/cluster-state.md):
 * <scenario snapshot-time>, <nodes names=> (after the whole <cluster>:
 * node indices need every pool), <unavailable>, <runtime-history>. */
void load_snapshot_time(loader *L, const xmlNode *root);
void load_node_names(loader *L, const xmlNode *sec);
void load_unavailable(loader *L, const xmlNode *e);
/* Attribute attr of e, a hostlist of <nodes names=> names, into *out (a
 * new array of cluster node indices) and *n. 0; -1 on error (reported). */
int load_node_set(loader *L, const xmlNode *e, const char *attr, int **out, int *n);
/* <queue nodes=>: the partition's nodes, sorted, each once; at least one. */
void load_queue_nodes(loader *L, const xmlNode *e, sc_queue *q);
void load_runtime_history(loader *L, const xmlNode *e);

/* The <class> children of an <inference> whose other children are read
 * (their defaults are its <requests> and <slo>; load_serve_class.c). */
void load_serve_classes(loader *L, const xmlNode *e, sc_inference *f);
/* An <slo>'s ttft, tpot, e2e (durations) and percentile (0, 100]. */
void load_slo_bounds(loader *L, const xmlNode *c, double *ttft_s, double *tpot_s, double *e2e_s, double *percentile);
/* Where input-tokens, output-tokens, input-distribution, output-distribution,
 * input-cv and output-cv go (<requests> into the service, <class> into the
 * class): load_lengths reads them in that order. */
typedef struct load_length_fields {
    int *input_tokens, *output_tokens;
    char (*input_dist)[16], (*output_dist)[16];
    double *input_cv, *output_cv;
} load_length_fields;
void load_lengths(loader *L, const xmlNode *c, const load_length_fields *o);
/* attr_enum parser of a length distribution, and its choices for the message. */
int load_parse_length_dist(const char *z);
#define LOAD_LENGTH_DISTS "fixed, exponential, lognormal, gamma, uniform"

/* queue= and priority= of a job or service: the queue must be declared in
 * <scheduler> (none declared: one implicit "default"); "" becomes the first. */
void load_queue_ref(loader *L, const xmlNode *e, char *queue, size_t len, int *priority);

/* GPUs of the cluster's nodes of this type (0: none). */
long long loader_gpus_of_type(const loader *L, const char *type);

/* e's attr names a catalog node type, or L fails with the types there are. */
int loader_known_node(loader *L, const xmlNode *e, const char *attr, const char *type);
/* attr_enum parsers of NCCL forcing names (models/collective.h masks as
 * int; -1 when unknown), and the algorithm names for messages. */
int loader_parse_nccl_algo(const char *z);
int loader_parse_nccl_proto(const char *z);
#define NCCL_ALGO_CHOICES "auto, ring, tree, nvls, nvls-tree, collnet, collnet-direct, collnet-chain, pat"

#endif
