/*
 * test_slurm: the Slurm readers (scenarios/slurm.h). One cluster state
 * written in the shape of each data-parser version (tests/slurm/<release>/:
 * 22.05 v0.0.38 ... 25.05 v0.0.43, field lists from Slurm's source, see
 * slurm.h) must read to the same record; sacct -P text to the same history
 * as sacct --json; GPUs from each TRES and GRES form; every malformed
 * report in tests/slurm/bad/ refused with its expected file:line message.
 * tests/slurm/22.05-real/ is real output of Debian 12's Slurm 22.05.8
 * (squeue/sinfo/sacct --json, sacct -P with and without -D, and at.txt, the
 * Unix time it was read), captured from a private 4-node cluster started
 * as tests/cli_slurm.sh starts one: two jobs running, one pending for
 * resources, one held, one waiting on a dependency, an array 0-3%2, a
 * CPU-only job, node04 drained "XID 79 GPU fell off the bus", and a
 * history of a completed, a failed (exit 3), a timed-out and a requeued job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/slurm.h"

#define AT 1764149400.0                 /* 2025-11-26T09:30:00Z: the fixtures' snapshot */

static const char *const releases[] = { "22.05", "23.02", "23.11", "24.05", "24.11", "25.05" };
static const int parsers[] = { 38, 39, 40, 41, 42, 43 };

static void read_ok(const char *rel, const char *file, slurm_kind kind, live_cluster *c) {
    char path[128], err[512] = "";
    snprintf(path, sizeof path, "tests/slurm/%s/%s", rel, file);
    if (slurm_read_file(path, kind, AT, c, err, sizeof err) < 0) fail_msg("%s", err);
}

static const live_job *job(const live_cluster *c, const char *id) {
    for (int i = 0; i < c->n_jobs; i++)
        if (!strcmp(c->jobs[i].id, id)) return &c->jobs[i];
    return NULL;
}

static const live_node *node(const live_cluster *c, const char *name) {
    for (int i = 0; i < c->n_nodes; i++)
        if (!strcmp(c->nodes[i].name, name)) return &c->nodes[i];
    return NULL;
}

static const live_history *hist(const live_cluster *c, const char *id) {
    for (int i = 0; i < c->n_history; i++)
        if (!strcmp(c->history[i].id, id)) return &c->history[i];
    return NULL;
}

static void check_jobs(const live_cluster *c) {
    assert_int_equal(c->n_jobs, 9);               /* 101 108 102 103 104 105_0..3; 106 CPU-only, 107 ended */
    assert_int_equal(c->jobs_without_gpus, 1);
    assert_null(job(c, "107"));
    const live_job *j = job(c, "101");
    assert_non_null(j);
    assert_int_equal(j->state, LIVE_RUNNING);
    assert_int_equal(j->gpus, 16);                /* untyped gres/gpu=16, not 16 + the typed 16 */
    assert_int_equal(j->nodes, 2);
    assert_string_equal(j->node_list, "gpu[01-02]");
    assert_true(j->start_s == -7200 && j->submit_s == -8000 && j->limit_s == 86400 && j->priority == 5000);
    assert_string_equal(j->user, "alice");
    assert_string_equal(j->account, "ml");
    assert_int_equal(job(c, "102")->state, LIVE_PENDING);
    assert_true(job(c, "102")->start_s == 0 && job(c, "102")->limit_s == 7200);
    assert_string_equal(job(c, "102")->node_list, "");
    assert_int_equal(job(c, "103")->state, LIVE_HELD);
    assert_string_equal(job(c, "104")->after, "101");
    assert_string_equal(job(c, "104")->reason, "Dependency");
    for (int t = 0; t < 4; t++) {
        char id[16];
        snprintf(id, sizeof id, "105_%d", t);
        assert_non_null(job(c, id));
        assert_string_equal(job(c, id)->partition, "debug");   /* the first of "debug,gpu" */
        assert_int_equal(job(c, id)->gpus, 8);
    }
    assert_null(job(c, "105_4"));
}

static void check_nodes(const live_cluster *c, int parser) {
    assert_int_equal(c->n_nodes, 6);
    const live_node *n = node(c, "gpu01");
    assert_int_equal(n->state, LIVE_UP);
    assert_int_equal(n->gpus, 8);
    assert_string_equal(n->gpu_model, "h100");
    assert_non_null(strstr(n->partitions, "gpu"));
    assert_non_null(strstr(n->partitions, "debug"));
    n = node(c, "gpu05");
    assert_int_equal(n->state, LIVE_DRAINED);
    assert_string_equal(n->reason, "XID 79 GPU fell off the bus");
    assert_true(n->since_s == -3600);
    assert_int_equal(node(c, "gpu06")->state, LIVE_DOWN);
    assert_int_equal(node(c, "gpu03")->state, LIVE_UP);
    if (parser == 38) {
        assert_int_equal(c->n_parts, 0);          /* 22.05's sinfo --json has no partitions */
        return;
    }
    assert_int_equal(c->n_parts, 2);
    assert_string_equal(c->parts[0].name, "gpu");
    assert_true(c->parts[0].max_time_s == 2880 * 60 && c->parts[0].priority_tier == 1);
    assert_true(c->parts[1].max_time_s == 3600 && c->parts[1].priority_tier == 2);
}

static void check_history(const live_cluster *c) {
    assert_int_equal(c->n_history, 6);            /* 93 never ran, 96 had no GPUs */
    assert_null(hist(c, "93"));
    assert_null(hist(c, "96"));
    const live_history *h = hist(c, "90");
    assert_true(h->run_s == 3600 && h->limit_s == 7200 && h->gpus == 8);
    assert_string_equal(h->state, "COMPLETED");
    assert_string_equal(h->user, "alice");
    assert_true(h->submit_unix_s == AT - 10 * 86400 && h->start_unix_s == AT - 10 * 86400 + 60);
    h = hist(c, "94");                            /* requeued: the last attempt, both counted */
    assert_int_equal(h->attempts, 2);
    assert_true(h->run_s == 1800);
    assert_string_equal(h->state, "COMPLETED");
    assert_string_equal(h->node_list, "gpu04");
    assert_non_null(hist(c, "95_1"));
    assert_string_equal(hist(c, "91")->state, "TIMEOUT");
    assert_int_equal(hist(c, "92")->gpus, 16);
}

static void test_versions(void **state) {
    (void)state;
    for (size_t v = 0; v < sizeof releases / sizeof releases[0]; v++) {
        live_cluster c = { 0 };
        read_ok(releases[v], "squeue.json", SLURM_SQUEUE, &c);
        read_ok(releases[v], "sinfo.json", SLURM_SINFO, &c);
        read_ok(releases[v], "sacct.json", SLURM_SACCT, &c);
        char want[64];
        snprintf(want, sizeof want, "(data parser v0.0.%d)", parsers[v]);
        assert_non_null(strstr(c.source, want));
        assert_non_null(strstr(c.source, releases[v]));
        check_jobs(&c);
        check_nodes(&c, parsers[v]);
        check_history(&c);
        live_free(&c);
    }
}

static void test_sacct_text(void **state) {
    (void)state;
    live_cluster c = { 0 };
    read_ok("22.05", "sacct.txt", SLURM_SACCT_TEXT, &c);
    check_history(&c);
    assert_string_equal(hist(&c, "92")->node_list, "gpu[01-02]");
    live_free(&c);
}

static void test_gpus_in(void **state) {
    (void)state;
    char model[32], why[256];
    static const struct { const char *z; long gpus; const char *model; } cases[] = {
        { "cpu=8,mem=64G,node=1,billing=8,gres/gpu=8", 8, "" },
        { "cpu=8,gres/gpu:h100=8,gres/gpu=8", 8, "h100" },       /* untyped wins: the same GPUs */
        { "gres/gpu:h100=4,gres/gpu:a100=2", 6, "h100" },
        { "gres:gpu:8", 8, "" },                                 /* 22.05 tres_per_node */
        { "gres/gpu:h200:4", 4, "h200" },
        { "gres/gpu", 1, "" },
        { "gpu:h100:8(S:0-1)", 8, "h100" },                      /* a node's GRES */
        { "gpu:a100:4(S:0),gpu:a100:4(S:1),nvme:1", 8, "a100" },
        { "gpu:8(S:0,1)", 8, "" },
        { "cpu=4,mem=8G,gres/shard=2", 0, "" },
        { "", 0, "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long n = slurm_gpus_in(cases[i].z, model, sizeof model, why, sizeof why);
        if (n != cases[i].gpus) fail_msg("%s: %ld GPUs, want %ld (%s)", cases[i].z, n, cases[i].gpus, n < 0 ? why : "");
        assert_string_equal(model, cases[i].model);
    }
    assert_int_equal(slurm_gpus_in("gres/gpu=eight", NULL, 0, why, sizeof why), -1);
    assert_non_null(strstr(why, "gres/gpu=eight"));
    assert_int_equal(slurm_gpus_in("gpu:h100:8:9", NULL, 0, why, sizeof why), -1);
}

static void test_real_2205(void **state) {
    (void)state;
    FILE *f = fopen("tests/slurm/22.05-real/at.txt", "r");
    double at = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lf", &at), 1);
    fclose(f);
    static const slurm_kind kinds[] = { SLURM_SQUEUE, SLURM_SINFO, SLURM_SACCT };
    static const char *const files[] = { "squeue.json", "sinfo.json", "sacct.json" };
    live_cluster c = { 0 };
    for (int k = 0; k < 3; k++) {
        char path[128], err[512] = "";
        snprintf(path, sizeof path, "tests/slurm/22.05-real/%s", files[k]);
        if (slurm_read_file(path, kinds[k], at, &c, err, sizeof err) < 0) fail_msg("%s", err);
    }
    assert_string_equal(c.source, "Slurm 22.05.8 (data parser v0.0.38)");
    assert_int_equal(c.n_jobs, 9);                /* 5 6 7 8 9 and the array 10_0..10_3; 11 is CPU-only */
    assert_int_equal(c.jobs_without_gpus, 1);
    assert_int_equal(job(&c, "5")->state, LIVE_RUNNING);
    assert_int_equal(job(&c, "5")->gpus, 16);
    assert_string_equal(job(&c, "5")->node_list, "node[01-02]");
    assert_true(job(&c, "5")->limit_s == 3600 && job(&c, "5")->start_s < 0);
    assert_int_equal(job(&c, "8")->state, LIVE_HELD);
    assert_string_equal(job(&c, "9")->after, "5");
    assert_non_null(job(&c, "10_3"));
    assert_int_equal(c.n_nodes, 4);
    assert_int_equal(node(&c, "node04")->state, LIVE_DRAINED);
    assert_string_equal(node(&c, "node04")->reason, "XID 79 GPU fell off the bus");
    assert_int_equal(node(&c, "node01")->gpus, 8);
    assert_string_equal(node(&c, "node01")->gpu_model, "");       /* Gres=gpu:8 names no type */
    assert_int_equal(c.n_history, 4);
    assert_string_equal(hist(&c, "2")->state, "FAILED");        /* its JSON exit_code says SUCCESS 0 */
    assert_int_equal(hist(&c, "4")->attempts, 2);               /* requeued once */
    assert_string_equal(hist(&c, "4")->state, "COMPLETED");
    assert_true(hist(&c, "3")->run_s > hist(&c, "3")->limit_s);   /* TIMEOUT runs past its limit */
    live_free(&c);
    live_cluster t = { 0 };                                     /* sacct -P -D: the same history */
    char err[512] = "";
    if (slurm_read_file("tests/slurm/22.05-real/sacct-D.txt", SLURM_SACCT_TEXT, at, &t, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_int_equal(t.n_history, 4);
    assert_int_equal(hist(&t, "4")->attempts, 2);
    assert_true(hist(&t, "3")->run_s == 87 && hist(&t, "3")->limit_s == 60);
    live_free(&t);
}

/* Each malformed report in tests/slurm/bad/ gives its expected message. */
static void test_bad(void **state) {
    (void)state;
    FILE *f = fopen("tests/slurm/bad/expected.txt", "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *file = strtok(line, "|"), *lno = strtok(NULL, "|"), *want = lno + strlen(lno) + 1;
        slurm_kind kind = !strncmp(file, "squeue", 6) ? SLURM_SQUEUE
                          : !strncmp(file, "sinfo", 5) ? SLURM_SINFO
                          : strstr(file, ".txt")      ? SLURM_SACCT_TEXT
                                                      : SLURM_SACCT;
        char path[256], err[1024] = "", head[300];
        snprintf(path, sizeof path, "tests/slurm/bad/%s", file);
        live_cluster c = { 0 };
        int rc = slurm_read_file(path, kind, AT, &c, err, sizeof err);
        live_free(&c);
        snprintf(head, sizeof head, "%s:%s: ", path, lno);
        if (rc != -1 || strncmp(err, head, strlen(head)) || !strstr(err, want) || strchr(err, '\n'))
            fail_msg("%s: got rc %d \"%s\"; want \"%s...%s\"", file, rc, err, head, want);
        n++;
    }
    fclose(f);
    assert_true(n >= 20);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_sacct_text),
        cmocka_unit_test(test_gpus_in),
        cmocka_unit_test(test_real_2205),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
