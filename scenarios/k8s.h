/*
 * k8s: a Kubernetes cluster's GPU work and nodes, as `kubectl get -o json`
 * lists them, into the plain record of a live cluster (scenarios/live.h),
 * for `clustertwin snapshot --from k8s` (issue 22; docs/live-k8s.md).
 *
 * Fields read, each from its project's own API types:
 * - Pods (kubernetes/api core/v1/types.go): metadata name, namespace,
 *   creationTimestamp, labels, ownerReferences; spec.nodeName,
 *   spec.priority, spec.activeDeadlineSeconds, spec.containers[] and
 *   spec.initContainers[] resources.requests / limits "nvidia.com/gpu" (the
 *   NVIDIA device plugin's extended resource); status.phase,
 *   status.startTime.
 * - Nodes (same file): status.allocatable "nvidia.com/gpu",
 *   spec.unschedulable (cordoned: drained), the Ready condition (status
 *   not "True": down, with its reason, message and lastTransitionTime),
 *   the label nvidia.com/gpu.product that NVIDIA GPU Feature Discovery sets
 *   ("NVIDIA-H100-80GB-HBM3").
 * - Kueue Workloads, kueue.x-k8s.io/v1beta1 (kubernetes-sigs/kueue
 *   apis/kueue/v1beta1/workload_types.go): spec.queueName, spec.priority,
 *   spec.active, spec.maximumExecutionTimeSeconds, spec.podSets[].count and
 *   .template, status.admission.podSetAssignments[].count, status.conditions
 *   QuotaReserved, Admitted, Finished, Evicted with lastTransitionTime.
 * - AppWrappers, workload.codeflare.dev/v1beta2 (project-codeflare/appwrapper
 *   api/v1beta2/appwrapper_types.go): status.phase (Suspended, Resuming,
 *   Running, Resetting, Suspending, Succeeded, Failed, Terminating),
 *   status.conditions (QuotaReserved, ResourcesDeployed), the label
 *   kueue.x-k8s.io/queue-name, and the GPUs of the pod templates inside
 *   spec.components[].template, each times its replicas / parallelism.
 *
 * One job is one Workload, one AppWrapper, or the pods of one owner: the
 * pods of an AppWrapper (label workload.codeflare.dev/appwrapper), of a
 * JobSet (label jobset.sigs.k8s.io/jobset-name), of a Kueue pod group
 * (label kueue.x-k8s.io/pod-group-name) or of their controller (the
 * ownerReference a Workload names as its owner too). Its id is
 * "namespace/name" of that owner; the account is the namespace, the
 * partition the Kueue queue. Finished work is left out, and jobs that ask
 * for no GPU are counted in jobs_without_gpus.
 */
#ifndef CT_K8S_H
#define CT_K8S_H

#include <stddef.h>

#include "scenarios/live.h"

/* Read the lists (any path may be NULL) into c, times relative to
 * now_unix_s (the moment they were read, Unix seconds: required).
 * 0, or -1 with err "path:line: items[3].spec.containers[0]...: what was
 * expected" (c may then hold part of the lists: live_free it). */
int k8s_read(live_cluster *c, const char *pods_json, const char *nodes_json, const char *workloads_json,
             const char *appwrappers_json, double now_unix_s, char *err, size_t errlen);

/* The lists, each as the text kubectl printed (no file between:
 * `snapshot --from k8s` without files). */
enum { K8S_PODS, K8S_NODES, K8S_WORKLOADS, K8S_APPWRAPPERS, K8S_LISTS };
typedef struct k8s_text {
    const char *text;                /* NULL: not given (a CRD the cluster does not serve) */
    size_t len;
    const char *name;                /* what messages call it ("kubectl get pods"), as a path */
} k8s_text;

/* k8s_read of lists[K8S_PODS .. K8S_APPWRAPPERS] as text. */
int k8s_read_text(live_cluster *c, const k8s_text lists[K8S_LISTS], double now_unix_s, char *err, size_t errlen);

#endif
