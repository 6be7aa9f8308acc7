/*
 * serving: LLM inference services, simulated one batch iteration at a time.
 *
 * A service (<inference>) is a set of replicas, each a tensor-parallel group
 * of tp GPUs holding one or more models, behind a router; requests arrive
 * by a process (offline, Poisson, bursty, diurnal, trace). Per replica, one
 * engine event per batch iteration; the iteration's duration comes from
 * models/serving (roofline of the kernels, TP all-reduces). Between
 * iterations the scheduler (vLLM/Orca continuous batching) admits waiting
 * requests up to max-batch sequences and a token budget per iteration,
 * mixing prompt chunks and decode tokens; static batching runs fixed
 * batches to completion as a baseline. The KV cache is paged: reserve
 * allocation (TensorRT-LLM's guaranteed-no-evict) holds a request's whole
 * length from admission; on-demand allocation (vLLM) grows block by block
 * and, when the cache is full, preempts the youngest sequence, which is
 * recomputed later or swapped to host memory.
 *
 * Cost per iteration is O(1) in the batch size: sequences that decode are
 * not touched each iteration. Their context sum, block growth and finish
 * times are kept as aggregates (Σ of start offsets, residue buckets of
 * block boundaries, a heap of finish iterations), so an iteration costs
 * O(admissions + completions · log batch). 1M requests run in about a
 * second (tests/bench_serving.c).
 *
 *   request: QUEUED ─admit─► PREFILL ─prompt done─► DECODE ─last token─► done
 *                ▲              │ preempted (recompute)  │
 *                └──────────────┴────────────────────────┘
 *                               DECODE ─preempted (swap)─► SWAPPED ─► DECODE
 *
 * The service gets GPUs from its host (the world), whose scheduler treats a
 * replica like a job (queue, priority, preemption); an autoscaler asks for
 * replicas (ready a start-up time after the GPUs are granted) when the queue
 * or the latency is over its target and gives them back when under it. A
 * replica whose node fails or which the scheduler preempts loses its
 * sequences' KV cache; they are recomputed on the other replicas.
 *
 * Metric bus (entity = service name): samples queue_length, running,
 * replicas, kv_utilization, output_tokens_per_s every 10 simulated seconds
 * while the service runs, and ttft_p99_s, tpot_p99_s (of the requests
 * completed in those 10 s; the last 1024 of them) when any completed;
 * events service_start, service_end, replica_ready, replica_stop,
 * replica_lost, scale_up, scale_down, scale_blocked, model_load,
 * model_unload.
 */
#ifndef CT_SERVING_H
#define CT_SERVING_H

#include <stddef.h>
#include <stdint.h>

#include "models/serving.h"
#include "scenarios/scenario.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/serving_types.h"

/* The host holds the GPUs replica tag asked for: it starts. */
void serving_granted(serving *sv, int tag);

/* The host took replica tag's GPUs away (a node failed, the scheduler
 * preempted it) and queued its request again: its sequences lose their
 * KV cache and are recomputed elsewhere; it restarts when granted again. */
void serving_replica_lost(serving *sv, int tag, const char *why);

/* Build a service for cfg (an <inference> of s) on nodes of type node and
 * take its initial replicas from the host. Loads a trace when the arrival
 * process is "trace". Schedules the first arrival. The scenario, node and
 * host must outlive the service. Returns NULL with err set to
 * "file:line: <inference name="...">: ..." when the model does not fit the
 * GPUs, the replicas' GPUs are not free, or the trace is bad (then
 * "trace.csv:line: ..."); nothing is left allocated. */
serving *serving_new(engine *e, metric_bus *bus, const scenario *s, const sc_inference *cfg,
                     const node_spec *node, const serving_host *host, char *err, size_t errlen);

/* Close the books at the end of the run (now): time-weighted figures and
 * percentiles. Safe to call more than once; the service does not run after. */
void serving_close(serving *sv);

/* The results, complete after serving_close(). */
const service_result *serving_result(const serving *sv);

/* 1 when every request has completed. */
int serving_done(const serving *sv);

/* The samples of a latency ("ttft", "tpot", "e2e", "queue"), after
 * serving_close(), in no particular order (the percentiles are selected
 * in place, not sorted: base/select.h); sort a copy for a CDF plot.
 * Returns the count (at most the reservoir, 4M); *x points into the
 * service. 0 for an unknown name. */
size_t serving_samples(const serving *sv, const char *which, const double **x);

void serving_free(serving *sv);                  /* NULL is a no-op */

#endif
