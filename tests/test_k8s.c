/*
 * test_k8s: the Kubernetes reader (scenarios/k8s.c) on the lists in
 * tests/k8s/, written from the projects' API types (core/v1 Pod and Node,
 * Kueue v1beta1 Workload, AppWrapper v1beta2) and read at
 * 2026-11-26T09:30:00Z. What each job must be was worked out by hand:
 *
 *   ml/train-a   Job, Workload admitted, 2 pods of 8 GPUs running on gpu-node-1,2
 *                since 06:00:10 (the first pod's start), limit 1 d
 *   ml/ft-b      PyTorchJob, Workload waiting for quota: 1 x 4 + 3 x 4 GPUs,
 *                priority 100, queue team-b; its pending pod joins it
 *   ml/paused    Job, Workload inactive (spec.active false): held, 8 GPUs
 *   ml/aw-c      AppWrapper running, Workload admitted: 1 x 8 + 3 x 8 GPUs on
 *                gpu-node-5,6 since its first pod's start 07:01:00
 *   research/aw-d AppWrapper suspended: a Job of parallelism 2, 4 GPUs each by
 *                limits only
 *   ml/notebook-abc a bare pod, 1 GPU, priority 10, running since 09:00
 *   ml/sweep     JobSet: two pending pods of 2 GPUs
 *
 * and left out: a finished Workload and its Succeeded pod, a Succeeded
 * AppWrapper, a CPU-only Deployment pod (counted). Malformed lists are
 * refused naming file, line and field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenarios/k8s.h"

#define NOW 1795685400.0              /* 2026-11-26T09:30:00Z */
#define D "tests/k8s/"

static const live_job *job(const live_cluster *c, const char *id) {
    for (int i = 0; i < c->n_jobs; i++)
        if (!strcmp(c->jobs[i].id, id)) return &c->jobs[i];
    fail_msg("no job %s", id);
    return NULL;
}

static void test_jobs(void **state) {
    (void)state;
    live_cluster c;
    memset(&c, 0, sizeof c);
    char err[512] = "";
    if (k8s_read(&c, D "pods.json", D "nodes.json", D "workloads.json", D "appwrappers.json", NOW, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_int_equal(c.n_jobs, 7);
    assert_int_equal(c.jobs_without_gpus, 1);
    assert_true(c.snapshot_unix_s == NOW);
    const live_job *j = job(&c, "ml/train-a");
    assert_true(j->state == LIVE_RUNNING && j->gpus == 16 && j->nodes == 2);
    assert_string_equal(j->node_list, "gpu-node-1,gpu-node-2");
    assert_true(j->start_s == -(3 * 3600 + 29 * 60 + 50) && j->submit_s == -(3 * 3600 + 31 * 60));
    assert_true(j->limit_s == 86400);
    assert_string_equal(j->partition, "team-a");
    assert_string_equal(j->account, "ml");
    j = job(&c, "ml/ft-b");
    assert_true(j->state == LIVE_PENDING && j->gpus == 16 && j->priority == 100 && j->submit_s == -3600);
    assert_string_equal(j->partition, "team-b");
    assert_string_equal(j->node_list, "");
    j = job(&c, "ml/paused");
    assert_true(j->state == LIVE_HELD && j->gpus == 8);
    j = job(&c, "ml/aw-c");
    assert_true(j->state == LIVE_RUNNING && j->gpus == 32 && j->start_s == -(2 * 3600 + 29 * 60));
    assert_string_equal(j->node_list, "gpu-node-5,gpu-node-6");
    j = job(&c, "research/aw-d");
    assert_true(j->state == LIVE_PENDING && j->gpus == 8 && j->submit_s == -1800);
    j = job(&c, "ml/notebook-abc");
    assert_true(j->state == LIVE_RUNNING && j->gpus == 1 && j->priority == 10 && j->start_s == -1800);
    j = job(&c, "ml/sweep");
    assert_true(j->state == LIVE_PENDING && j->gpus == 4 && j->submit_s == -1200);
    assert_int_equal(c.n_parts, 2);
    assert_string_equal(c.parts[0].name, "team-a");
    assert_string_equal(c.parts[1].name, "team-b");
    live_free(&c);
}

static void test_nodes(void **state) {
    (void)state;
    live_cluster c;
    memset(&c, 0, sizeof c);
    char err[512] = "";
    if (k8s_read(&c, NULL, D "nodes.json", NULL, NULL, NOW, err, sizeof err) < 0) fail_msg("%s", err);
    assert_int_equal(c.n_nodes, 7);
    assert_int_equal(c.n_jobs, 0);
    assert_true(c.nodes[0].gpus == 8 && c.nodes[0].state == LIVE_UP);
    assert_string_equal(c.nodes[0].gpu_model, "NVIDIA-H100-80GB-HBM3");
    assert_true(c.nodes[2].state == LIVE_DRAINED);
    assert_string_equal(c.nodes[2].reason, "cordoned (spec.unschedulable)");
    assert_true(c.nodes[3].state == LIVE_DOWN && c.nodes[3].since_s == -7200);
    assert_string_equal(c.nodes[3].reason, "NodeStatusUnknown: Kubelet stopped posting node status.");
    assert_true(c.nodes[6].gpus == 0);
    assert_string_equal(c.nodes[6].gpu_model, "");
    live_free(&c);
}

static void refused(const char *pods, const char *nodes, const char *want) {
    live_cluster c;
    memset(&c, 0, sizeof c);
    char err[512] = "";
    assert_int_equal(k8s_read(&c, pods, nodes, NULL, NULL, NOW, err, sizeof err), -1);
    assert_string_equal(err, want);
    live_free(&c);
}

static void test_malformed(void **state) {
    (void)state;
    refused(D "pods-bad-gpu.json", NULL,
            D "pods-bad-gpu.json:89: items[1].spec.containers[0].resources.requests: expected a whole number of GPUs "
              "(\"nvidia.com/gpu\")");
    refused(NULL, D "nodes-bad-time.json",
            D "nodes-bad-time.json:48: items[0].status.conditions.Ready.lastTransitionTime: expected an RFC 3339 time");
    refused(D "not-a-list.json", NULL,
            D "not-a-list.json:1: items: expected the array of a list (kubectl get ... -o json)");
    refused(D "nope.json", NULL, D "nope.json:0: cannot open: No such file or directory");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
