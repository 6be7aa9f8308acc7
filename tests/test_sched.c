/*
 * test_sched: the shared-cluster scheduler (issue 6) through the world.
 *
 * - M/M/c: single-GPU jobs with Poisson arrivals and exponential durations
 *   under FIFO on c GPUs form an M/M/c queue; the mean wait must match
 *   Erlang C, Wq = C(c, a) / (c mu - lambda), within 10% over seeds.
 * - EASY backfill lets a short job jump ahead only when it does not delay
 *   the head job's reservation.
 * - Preemption by priority; quota reclaim of borrowed GPUs; time limits;
 *   cloud autoscaling; pack vs spread placement; property runs over random
 *   workloads (every job ends, gang starts, no GPU double-allocated: the
 *   cluster asserts it on every change).
 * - The queue's own order (sim/sched_queue.c: per class, both ends moving)
 *   against a plain list, and the cluster's fit limit against
 *   cluster_can_alloc, over random changes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/simrun.h"

#include "scenarios/scenario.h"
#include "sim/cluster.h"
#include "sim/metrics.h"
#include "sim/rng.h"
#include "sim/sched.h"
#include "sim/world.h"


static const job_result *by_name(run *r, const char *name) {
    for (int i = 0; i < world_job_count(r->w); i++)
        if (!strcmp(run_job(r, i)->name, name)) return run_job(r, i);
    fail_msg("no job %s", name);
    return NULL;
}

/* Erlang C: probability of waiting in M/M/c with offered load a. */
static double erlang_c(int c, double a) {
    double sum = 0, term = 1;
    for (int k = 0; k < c; k++) {
        if (k > 0) term *= a / k;
        sum += term;
    }
    double last = term * a / c;                      /* a^c / c! */
    double top = last * c / (c - a);
    return top / (sum + top);
}

static void test_mmc_matches_erlang_c(void **state) {
    (void)state;
    const int c = 8;
    const double mu = 1.0 / 3600, lambda = 6.0 / 3600;  /* rho = 0.75 */
    double a = lambda / mu, wq = erlang_c(c, a) / (c * mu - lambda);
    char xml[1024];
    snprintf(xml, sizeof xml,
             "<scenario name=\"mmc\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
             "<scheduler policy=\"fifo\"/><workload><jobs name=\"j\" count=\"20000\" arrivals=\"poisson\""
             " rate=\"6/h\" gpus=\"1\" duration=\"1h\" duration-distribution=\"exponential\"/></workload></scenario>");
    double sum = 0;
    const int R = 5;
    for (int seed = 1; seed <= R; seed++) {
        run r = simulate(xml, (unsigned long long)seed);
        queue_result q = world_queue(r.w, 0);
        assert_int_equal(q.waiting, 0);
        sum += q.mean_wait_s;
        done(&r);
    }
    double mean = sum / R;
    printf("  M/M/8 at rho 0.75: mean wait %.0f s, Erlang C %.0f s\n", mean, wq);
    assert_true(fabs(mean - wq) / wq < 0.10);
}

static const char *two_nodes =
    "<scenario name=\"bf\"><cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
    "<scheduler policy=\"fifo\" backfill=\"%s\"/><workload>"
    "<jobs name=\"a\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"10h\"/>"
    "<jobs name=\"b\" count=\"1\" arrivals=\"fixed\" gpus=\"16\" duration=\"1h\"/>"
    "<jobs name=\"c\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"2h\"/>"
    "<jobs name=\"d\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"20h\"/>"
    "</workload></scenario>";

static void test_easy_backfill(void **state) {
    (void)state;
    char xml[2048];
    snprintf(xml, sizeof xml, two_nodes, "easy");
    run r = simulate(xml, 1);
    /* All submitted at 0 in order a, b, c, d. a runs; b (16 GPUs) waits for
     * a: its reservation is 10 h. c (2 h) fits now and ends before 10 h:
     * backfilled. d (20 h) would delay b: not. */
    assert_true(by_name(&r, "a-0")->start_s == 0);
    assert_true(by_name(&r, "c-0")->start_s == 0);
    assert_true(fabs(by_name(&r, "b-0")->start_s - 36000) < 1);
    assert_true(by_name(&r, "d-0")->start_s >= by_name(&r, "b-0")->end_s - 1);
    done(&r);
    snprintf(xml, sizeof xml, two_nodes, "none");
    run f = simulate(xml, 1);
    assert_true(fabs(by_name(&f, "b-0")->start_s - 36000) < 1);   /* the head is not delayed either way */
    assert_true(by_name(&f, "c-0")->start_s >= by_name(&f, "b-0")->start_s);
    done(&f);
}

/* The running jobs' heap by expected end (sim/sched_run.c) is left
 * loose while no reservation reads it, and ordered again by the next one.
 * a holds node 0 for 10 h; the s jobs churn on node 1 (a minute each,
 * every two minutes, with nothing queued: no reservation), so the heap
 * goes loose with a first. At 62.5 min h (24 GPUs) waits: its reservation
 * is a's end (10 h), past s-31's end (63 min), so c (2 h), behind h,
 * starts at once on node 2. Read unordered, the walk would take a first
 * and reserve at 63 min, and c would wait. (The sanitized build also
 * checks the heap's order at every reservation.) */
static void test_reservation_after_churn(void **state) {
    (void)state;
    char csv[64], xml[512];
    snprintf(csv, sizeof csv, "/tmp/ct-loose-test-%d.csv", (int)getpid());
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fputs("submit,gpus,duration,name\n0,8,10h,a\n", f);
    for (int k = 0; k < 100; k++) {
        if (k == 32) fputs("3750,24,1h,h\n3756,8,2h,c\n", f);
        fprintf(f, "%d,8,1min,s-%d\n", 120 * k, k);
    }
    fclose(f);
    snprintf(xml, sizeof xml,
             "<scenario name=\"loose\"><cluster><nodes type=\"dgx-h100\" count=\"3\"/></cluster>"
             "<scheduler policy=\"fifo\" backfill=\"easy\"/><workload><trace href=\"%s\"/></workload></scenario>",
             csv);
    run r = simulate(xml, 1);
    remove(csv);
    assert_true(by_name(&r, "s-31")->end_s == 3780);
    assert_true(by_name(&r, "c")->start_s == 3756);
    assert_true(by_name(&r, "h")->start_s == 36000);
    done(&r);
}

/* The backfill scan looks at most backfill-depth jobs behind the head (as
 * Slurm's bf_max_job_test): a short job behind three that cannot backfill
 * starts at once with the default depth, and only after the head with a
 * depth of 2. */
static const char *three_nodes =
    "<scenario name=\"bf\"><cluster><nodes type=\"dgx-h100\" count=\"3\"/></cluster>"
    "<scheduler policy=\"fifo\" backfill=\"easy\"%s/><workload>"
    "<jobs name=\"a\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"10h\"/>"
    "<jobs name=\"b\" count=\"1\" arrivals=\"fixed\" gpus=\"24\" duration=\"1h\"/>"
    "<jobs name=\"d\" count=\"3\" arrivals=\"fixed\" gpus=\"8\" duration=\"20h\"/>"
    "<jobs name=\"c\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"2h\"/>"
    "</workload></scenario>";

static void test_backfill_depth(void **state) {
    (void)state;
    char xml[2048];
    snprintf(xml, sizeof xml, three_nodes, "");
    run r = simulate(xml, 1);
    assert_true(by_name(&r, "c-0")->start_s == 0);
    assert_true(fabs(by_name(&r, "b-0")->start_s - 36000) < 1);
    done(&r);
    snprintf(xml, sizeof xml, three_nodes, " backfill-depth=\"2\"");
    run f = simulate(xml, 1);
    assert_true(by_name(&f, "c-0")->start_s >= by_name(&f, "b-0")->start_s);
    assert_true(fabs(by_name(&f, "b-0")->start_s - 36000) < 1);
    done(&f);
}

static void test_priority_preemption(void **state) {
    (void)state;
    const char *fmt =
        "<scenario name=\"pre\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>"
        "<scheduler policy=\"priority\" preemption=\"%s\"/><workload>"
        "<jobs name=\"low\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"10h\" priority=\"0\"/>"
        "<training name=\"high\" gpus=\"8\" dp=\"8\" sharding=\"fsdp\" global-batch=\"8\" seq-len=\"4096\""
        " steps=\"1000\" priority=\"10\" submit=\"1h\"><model preset=\"llama3-8b\"/></training>"
        "</workload></scenario>";
    char xml[2048];
    snprintf(xml, sizeof xml, fmt, "true");
    run r = simulate(xml, 1);
    const job_result *hi = by_name(&r, "high"), *lo = by_name(&r, "low-0");
    assert_true(fabs(hi->start_s - 3600) < 1);
    assert_int_equal(lo->preemptions, 1);
    assert_string_equal(job_state_name(lo->state), "done");
    assert_true(lo->end_s > hi->end_s);
    done(&r);
    snprintf(xml, sizeof xml, fmt, "false");
    run n = simulate(xml, 1);
    assert_true(fabs(by_name(&n, "high")->start_s - 36000) < 1);
    assert_int_equal(by_name(&n, "low-0")->preemptions, 0);
    done(&n);
}

/* Issue 17: the preemption livelock of shared-512, in small. research (2 x
 * 8 GPUs, quota 8) borrows; product runs 24 GPUs over its quota of 16, so
 * under fair share product sorts between research at 16 GPUs (share 2) and
 * research at 8 (share 1). Three 5-GPU infra jobs leave 9 GPUs free,
 * scattered. A 16-GPU product job of higher priority needs two whole
 * nodes. Counting GPUs, one research victim looked enough (9 + 8 >= 16):
 * it was evicted, the job still did not fit, research fell back to its
 * quota (no more victims), research sorted first in the next pass and
 * restarted on the freed node, and the product job evicted it again, at
 * every pass the 1-GPU "tick" jobs cause: dozens of evictions of one job.
 * Now victims are chosen by node: two whole nodes would take research below
 * its quota, so nothing is evicted and the product job waits. */
static void test_preemption_no_livelock(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"livelock\"><cluster><nodes type=\"dgx-h100\" count=\"8\"/></cluster>"
        "<scheduler policy=\"fair\" preemption=\"true\" backfill=\"easy\">"
        "<queue name=\"research\" quota-gpus=\"8\"/><queue name=\"product\" quota-gpus=\"16\"/>"
        "<queue name=\"infra\" quota-gpus=\"40\"/><queue name=\"tick\"/></scheduler><workload>"
        "<jobs name=\"research\" count=\"2\" arrivals=\"fixed\" gpus=\"8\" duration=\"100h\" queue=\"research\" priority=\"1\"/>"
        "<jobs name=\"run\" count=\"1\" arrivals=\"fixed\" gpus=\"24\" duration=\"100h\" queue=\"product\" priority=\"1\"/>"
        "<jobs name=\"infra\" count=\"3\" arrivals=\"fixed\" gpus=\"5\" duration=\"100h\" queue=\"infra\" priority=\"1\"/>"
        "<training name=\"p\" gpus=\"16\" dp=\"16\" sharding=\"fsdp\" global-batch=\"16\" seq-len=\"4096\""
        " steps=\"100\" queue=\"product\" priority=\"2\" submit=\"1h\"><model preset=\"llama3-8b\"/></training>"
        "<jobs name=\"tick\" count=\"200\" rate=\"6/h\" gpus=\"1\" duration=\"1min\" queue=\"tick\" priority=\"0\"/>"
        "</workload></scenario>";
    run r = simulate(xml, 1);
    int total = 0;
    for (int i = 0; i < world_job_count(r.w); i++) {
        const job_result *j = run_job(&r, i);
        assert_string_equal(job_state_name(j->state), "done");
        if (!strncmp(j->name, "research", 8)) assert_true(j->preemptions <= 1);
        total += j->preemptions;
    }
    printf("  livelock scenario: %d preemptions in all\n", total);
    assert_true(total <= 2);
    done(&r);
}

/* A preemptor starts in the pass that evicts for it, on the GPUs its
 * victims freed, and evicts each victim once: a 16-GPU job of priority 10
 * on two nodes held by four 4-GPU jobs and a 1-GPU job of priority 0
 * (fewest victims: the whole cluster), while 1-GPU jobs of priority 0 keep
 * arriving and would take a freed GPU if they could. */
static void test_preemptor_starts_at_once(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"hold\"><cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
        "<scheduler policy=\"priority\" preemption=\"true\" backfill=\"easy\"/><workload>"
        "<jobs name=\"low\" count=\"4\" arrivals=\"fixed\" gpus=\"4\" duration=\"10h\"/>"
        "<training name=\"high\" gpus=\"16\" dp=\"16\" sharding=\"fsdp\" global-batch=\"16\" seq-len=\"4096\""
        " steps=\"100\" priority=\"10\" submit=\"1h\"><model preset=\"llama3-8b\"/></training>"
        "<jobs name=\"small\" count=\"50\" rate=\"20/h\" gpus=\"1\" duration=\"30min\"/>"
        "</workload></scenario>";
    run r = simulate(xml, 1);
    const job_result *hi = by_name(&r, "high");
    assert_true(fabs(hi->start_s - 3600) < 1e-6);
    int victims = 0;
    for (int i = 0; i < world_job_count(r.w); i++) {
        const job_result *j = run_job(&r, i);
        assert_true(j->preemptions <= 1);
        victims += j->preemptions;
    }
    assert_true(victims >= 4);                   /* the four low jobs, and small ones on the nodes */
    done(&r);
}

static void test_quota_reclaim(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"quota\"><cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
        "<scheduler policy=\"fair\"><queue name=\"a\" quota-gpus=\"8\"/><queue name=\"b\" quota-gpus=\"8\"/>"
        "</scheduler><workload>"
        "<jobs name=\"big\" count=\"2\" arrivals=\"fixed\" gpus=\"8\" duration=\"10h\" queue=\"b\"/>"
        "<training name=\"own\" gpus=\"8\" dp=\"8\" sharding=\"fsdp\" global-batch=\"8\" seq-len=\"4096\""
        " steps=\"100\" queue=\"a\" submit=\"1h\"><model preset=\"llama3-8b\"/></training>"
        "</workload></scenario>";
    run r = simulate(xml, 1);
    /* b borrowed a's 8 GPUs; a's job reclaims them at once. */
    assert_true(fabs(by_name(&r, "own")->start_s - 3600) < 1);
    int pre = by_name(&r, "big-0")->preemptions + by_name(&r, "big-1")->preemptions;
    assert_int_equal(pre, 1);
    done(&r);
}

static void test_timeout(void **state) {
    (void)state;
    const char *xml =
        "<scenario name=\"to\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster><workload>"
        "<jobs name=\"long\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"2h\" timeout=\"1h\"/>"
        "<jobs name=\"next\" count=\"1\" arrivals=\"fixed\" gpus=\"8\" duration=\"1h\"/>"
        "</workload></scenario>";
    run r = simulate(xml, 1);
    const job_result *j = by_name(&r, "long-0");
    assert_string_equal(job_state_name(j->state), "timeout");
    assert_true(fabs(j->end_s - j->start_s - 3600) < 1);
    assert_true(fabs(by_name(&r, "next-0")->start_s - 3600) < 1);
    done(&r);
}

static void test_cloud_autoscaling(void **state) {
    (void)state;
    const char *fmt =
        "<scenario name=\"cloud\"><cluster><nodes type=\"dgx-h100\" count=\"1\"/>%s</cluster><workload>"
        "<jobs name=\"j\" count=\"4\" arrivals=\"fixed\" gpus=\"8\" duration=\"2h\"/>"
        "</workload></scenario>";
    char xml[2048];
    snprintf(xml, sizeof xml, fmt,
             "<cloud node-type=\"dgx-h100\" max-nodes=\"2\" provision-time=\"10min\" scale-up-after=\"5min\""
             " idle-release=\"30min\"/>");
    run r = simulate(xml, 1);
    world_totals t = world_get_totals(r.w);
    double last = 0;
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "j-%d", i);
        if (by_name(&r, name)->end_s > last) last = by_name(&r, name)->end_s;
    }
    printf("  cloud: %.2f node-hours rented ($%.0f), last job ends at %.2f h\n", t.cloud_node_hours,
           t.cloud_cost_usd, last / 3600);
    assert_true(t.cloud_node_hours > 3 && t.cloud_node_hours < 6);    /* 2 nodes x ~2.3 h */
    assert_true(t.cloud_cost_usd > 0);
    assert_true(last < 5 * 3600);                                       /* 8 h on one node */
    done(&r);
    snprintf(xml, sizeof xml, fmt, "");
    run n = simulate(xml, 1);
    assert_true(fabs(by_name(&n, "j-3")->end_s - 8 * 3600) < 1);
    done(&n);
}

static void test_pack_and_spread(void **state) {
    (void)state;
    for (int spread = 0; spread <= 1; spread++) {
        const char *xml = "<scenario name=\"p\"><cluster><nodes type=\"dgx-h100\" count=\"64\"/></cluster></scenario>";
        scenario *s = NULL;
        char err[512];
        assert_int_equal(scenario_load_memory(xml, strlen(xml), "p.xml", &s, err, sizeof err), 0);
        cluster *c = cluster_new(s);
        cluster_set_spread(c, spread, 32);
        int a[1], b[1], big[4];
        assert_int_equal(cluster_alloc(c, 0, 4, a, 1), 1);
        assert_int_equal(cluster_alloc(c, 0, 4, b, 1), 1);
        assert_int_equal(cluster_alloc(c, 0, 32, big, 4), 4);
        if (!spread) {
            assert_int_equal(a[0], b[0]);             /* filled one node */
            assert_int_equal(big[3] - big[0], 3);     /* consecutive: one leaf */
        } else {
            assert_true(a[0] != b[0]);
            int leaves = 0;                           /* one per leaf group, round robin */
            for (int i = 0; i < 4; i++) leaves |= 1 << (big[i] / 32);
            assert_int_equal(leaves, 3);
        }
        cluster_free(c);
        scenario_free(s);
    }
}

/* A job spread over more leaf switches than it needs pays the
 * oversubscribed spine for its data-parallel traffic. */
static void test_spread_slows_training(void **state) {
    (void)state;
    const char *fmt =
        "<scenario name=\"sp\"><cluster><nodes type=\"dgx-a100-80gb\" count=\"64\"/>"
        "<network oversubscription=\"4\" nodes-per-leaf=\"8\"/></cluster>"
        "<scheduler placement=\"%s\"/><workload><training name=\"t\" gpus=\"64\" tp=\"1\" dp=\"64\""
        " sharding=\"zero1\" global-batch=\"64\" seq-len=\"2048\" steps=\"100\"><model preset=\"llama2-7b\"/></training>"
        "</workload></scenario>";
    char xml[1024];
    snprintf(xml, sizeof xml, fmt, "pack");
    run a = simulate(xml, 1);
    snprintf(xml, sizeof xml, fmt, "spread");
    run b = simulate(xml, 1);
    printf("  8-node job: pack %d leaf group(s), step %.3f s; spread %d, step %.3f s\n",
           by_name(&a, "t")->leaf_groups, by_name(&a, "t")->perf->step_s, by_name(&b, "t")->leaf_groups,
           by_name(&b, "t")->perf->step_s);
    assert_int_equal(by_name(&a, "t")->leaf_groups, 1);
    assert_int_equal(by_name(&b, "t")->leaf_groups, 8);
    assert_true(by_name(&b, "t")->perf->step_s > 1.02 * by_name(&a, "t")->perf->step_s);
    done(&a);
    done(&b);
}

/* Random workloads: every job ends, starts after its submission, and gets
 * its full duration (no failures here); the cluster asserts no GPU is ever
 * double-allocated. */
static void test_random_workloads(void **state) {
    (void)state;
    rng *r = rng_new(7, "test-sched", 0);
    static const char *policies[] = { "fifo", "priority", "fair" };
    for (int round = 0; round < 30; round++) {
        char xml[4096];
        int n = snprintf(xml, sizeof xml,
                         "<scenario name=\"rand\"><cluster><nodes type=\"dgx-h100\" count=\"%d\"/></cluster>"
                         "<scheduler policy=\"%s\" preemption=\"%s\" backfill=\"%s\">"
                         "<queue name=\"q0\" quota-gpus=\"16\"/><queue name=\"q1\" quota-gpus=\"8\"/></scheduler><workload>",
                         4 + (int)rng_uniform_int(r, 8), policies[rng_uniform_int(r, 3)],
                         rng_uniform_int(r, 2) ? "true" : "false", rng_uniform_int(r, 2) ? "easy" : "none");
        int groups = 1 + (int)rng_uniform_int(r, 4);
        for (int g = 0; g < groups; g++) {
            static const int sizes[] = { 1, 2, 4, 8, 16, 32 };
            n += snprintf(xml + n, sizeof xml - (size_t)n,
                          "<jobs name=\"g%d\" count=\"%d\" rate=\"%d/h\" gpus=\"%d\" duration=\"%dmin\""
                          " duration-distribution=\"exponential\" queue=\"q%d\" priority=\"%d\"/>",
                          g, 20 + (int)rng_uniform_int(r, 60), 1 + (int)rng_uniform_int(r, 20),
                          sizes[rng_uniform_int(r, 6)], 10 + (int)rng_uniform_int(r, 200), g % 2,
                          (int)rng_uniform_int(r, 3));
        }
        snprintf(xml + n, sizeof xml - (size_t)n, "</workload></scenario>");
        run x = simulate(xml, (unsigned long long)round + 1);
        for (int i = 0; i < world_job_count(x.w); i++) {
            const job_result *j = run_job(&x, i);
            assert_string_equal(job_state_name(j->state), "done");
            assert_true(j->start_s >= j->submit_s - 1e-9);
            if (j->preemptions == 0) assert_true(j->end_s > j->start_s);
        }
        done(&x);
    }
    rng_free(r);
}

/* Preemption walks an index of where jobs run (sim/sched_where.c) kept
 * as the world places and releases them; the sanitized build
 * (-DCT_SCHED_CROSSCHECK) checks every walk against the choice made on
 * the gathered nodes of every candidate, and the index against the jobs'
 * nodes. Random mixes of sub-node jobs sharing nodes and multi-node ones,
 * two priorities, quotas (reclaim) and node failures with repairs (a
 * failing node's batch jobs requeue after it left service, so none starts
 * on it again; the sanitized build aborts on a node whose jobs list more
 * GPUs than it uses): preemptions happen, no job is left running. */
static void test_preempt_walk(void **state) {
    (void)state;
    rng *r = rng_new(11, "test-preempt-walk", 0);
    int preempted = 0;
    for (int round = 0; round < 12; round++) {
        char xml[4096];
        int n = snprintf(xml, sizeof xml,
                         "<scenario name=\"walk\"><cluster><nodes type=\"dgx-h100\" count=\"%d\"/>"
                         "</cluster><failures><failure component=\"gpu\" mtbf=\"%dh\" cause=\"faulty GPU\"/></failures>"
                         "<scheduler policy=\"fair\" preemption=\"true\" backfill=\"easy\">"
                         "<queue name=\"q0\" quota-gpus=\"32\"/><queue name=\"q1\" quota-gpus=\"16\"/>"
                         "<queue name=\"q2\"/></scheduler><workload>",
                         8 + (int)rng_uniform_int(r, 8), 20 + (int)rng_uniform_int(r, 200));
        for (int g = 0; g < 5; g++) {
            static const int sizes[] = { 1, 2, 3, 8, 16, 24, 40 };
            n += snprintf(xml + n, sizeof xml - (size_t)n,
                          "<jobs name=\"g%d\" count=\"%d\" rate=\"%d/h\" gpus=\"%d\" duration=\"%dmin\""
                          " duration-distribution=\"exponential\" queue=\"q%d\" priority=\"%d\"/>",
                          g, 30 + (int)rng_uniform_int(r, 60), 2 + (int)rng_uniform_int(r, 20),
                          sizes[rng_uniform_int(r, 7)], 20 + (int)rng_uniform_int(r, 300), g % 3,
                          g == 4 ? 5 : (int)rng_uniform_int(r, 2));
        }
        snprintf(xml + n, sizeof xml - (size_t)n, "</workload></scenario>");
        run x = simulate(xml, (unsigned long long)round + 1);
        for (int i = 0; i < world_job_count(x.w); i++) {
            job_result jr;
            const job_result *j = world_job(x.w, i, &jr);
            /* done, or never started when failures keep too few nodes up */
            assert_true(!strcmp(job_state_name(j->state), "done") || !strcmp(job_state_name(j->state), "pending"));
            preempted += j->preemptions;
        }
        done(&x);
    }
    printf("  preemption walk: %d preemptions in 12 runs\n", preempted);
    assert_true(preempted > 0);
    rng_free(r);
}

/* A job trace: batch rows and a training row (tokens of a preset), and
 * errors that name the CSV file and line. */
static void test_trace(void **state) {
    (void)state;
    FILE *f = fopen("/tmp/ct-trace-test.csv", "w");
    assert_non_null(f);
    fputs("# test trace\nsubmit,queue,priority,gpus,duration,tokens,model,name\n"
          "0,,0,8,2h,,,first\n600,,5,16,,2B,llama3-8b,ft\n1h,,0,4,30min,,,\n", f);
    fclose(f);
    const char *xml = "<scenario name=\"t\"><cluster><nodes type=\"dgx-h100\" count=\"4\"/></cluster>"
                      "<workload><trace href=\"/tmp/ct-trace-test.csv\"/></workload></scenario>";
    run r = simulate(xml, 1);
    assert_int_equal(world_job_count(r.w), 3);
    assert_true(by_name(&r, "first")->end_s == 7200);
    const job_result *ft = by_name(&r, "ft");
    assert_int_equal(ft->kind, JOB_TRAINING);
    assert_true(ft->start_s == 600);
    assert_string_equal(job_state_name(ft->state), "done");
    assert_true(by_name(&r, "trace-5")->start_s == 3600);
    done(&r);
    static const struct { const char *csv, *want; } bad[] = {
        { "submit,gpus,duration\n0,8,1h\n-5,8,1h\n", "ct-trace-test.csv:3: submit \"-5\"" },
        { "submit,gpus,duration\n10,8,1h\n5,8,1h\n", "ct-trace-test.csv:3: submit \"5\": submit times must not decrease" },
        { "submit,gpus,duration\n0,0,1h\n", "ct-trace-test.csv:2: gpus \"0\"" },
        { "submit,gpus,tokens,model\n0,8,1B,gpt5\n", "ct-trace-test.csv:2: model \"gpt5\"" },
        { "submit,gpus,colour\n", "ct-trace-test.csv:1: unknown column \"colour\"" },
        { "submit,gpus,duration\n0,8,\n", "ct-trace-test.csv:2: give a duration" },
        { "", "ct-trace-test.csv:1: empty trace" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen("/tmp/ct-trace-test.csv", "w");
        fputs(bad[i].csv, f);
        fclose(f);
        scenario *s = NULL;
        char err[1024];
        assert_int_equal(scenario_load_memory(xml, strlen(xml), "t.xml", &s, err, sizeof err), -1);
        if (!strstr(err, bad[i].want)) fail_msg("got %s, want %s", err, bad[i].want);
    }
    remove("/tmp/ct-trace-test.csv");
}

static scenario *load_xml(const char *xml) {
    scenario *s = NULL;
    char err[512];
    assert_int_equal(scenario_load_memory(xml, strlen(xml), "q.xml", &s, err, sizeof err), 0);
    return s;
}

/* cluster_fit_limit is the largest g that cluster_can_alloc accepts, as
 * jobs of random sizes come and go (the backfill scan skips every job
 * above it, so it must never be below a size that fits). */
static void test_fit_limit(void **state) {
    (void)state;
    scenario *s = load_xml("<scenario name=\"f\"><cluster><nodes type=\"dgx-h100\" count=\"12\"/></cluster></scenario>");
    cluster *c = cluster_new(s);
    rng *r = rng_new(3, "test-fit-limit", 0);
    int nodes[64][12], n_of[64], each[64], live = 0;
    for (int step = 0; step < 4000; step++) {
        if (live > 0 && (live == 64 || rng_uniform_int(r, 2))) {
            int k = (int)rng_uniform_int(r, (unsigned long long)live);
            cluster_release(c, nodes[k], n_of[k], each[k]);
            live--;
            memcpy(nodes[k], nodes[live], sizeof nodes[k]);
            n_of[k] = n_of[live];
            each[k] = each[live];
        } else {
            static const int sizes[] = { 1, 2, 3, 4, 8, 16, 24 };
            int g = sizes[rng_uniform_int(r, 7)];
            int n = cluster_alloc(c, 0, g, nodes[live], 12);
            if (n > 0) {
                n_of[live] = n;
                each[live++] = g < 8 ? g : 8;
            }
        }
        int most = 0;
        for (int g = 1; g <= 12 * 8; g++)
            if (cluster_can_alloc(c, 0, g)) most = g;
        assert_int_equal(cluster_fit_limit(c, 0), most);
    }
    rng_free(r);
    cluster_free(c);
    scenario_free(s);
}

static void no_start(void *ctx, int job) { (void)ctx, (void)job; }
static void no_preempt(void *ctx, int job, int by) { (void)ctx, (void)job, (void)by; }

/* The queue keeps (submit, id) order per class through submits in any
 * order (requeued jobs land before the head, new ones after the tail) and
 * withdrawals anywhere: sched_oldest is the earliest live job of the pool
 * in a plain list, after every change. */
static void test_queue_order(void **state) {
    (void)state;
    scenario *s = load_xml("<scenario name=\"q\"><cluster><nodes type=\"dgx-h100\" count=\"2\"/></cluster>"
                           "<scheduler policy=\"priority\"/></scenario>");
    cluster *c = cluster_new(s);
    sched_ops ops = { NULL, no_start, no_preempt, NULL };
    sched *q = sched_new(s, c, &ops);
    rng *r = rng_new(5, "test-queue-order", 0);
    enum { N = 3000 };
    static double submit[N];
    static int in[N];
    int n_in = 0;
    for (int step = 0; step < 40000; step++) {
        int id = (int)rng_uniform_int(r, N);
        if (!in[id]) {
            /* mostly increasing times, with requeues of older ones */
            submit[id] = rng_uniform_int(r, 4) ? step : (double)rng_uniform_int(r, (unsigned long long)step + 1);
            if (rng_uniform_int(r, 8) == 0) submit[id] = 7;      /* ties: by id */
            sched_job j = { .id = id, .queue = 0, .priority = id % 3, .pool = 0, .gpus = 1,
                            .submit_s = submit[id], .expected_end_s = 60 };
            sched_submit(q, &j);
            in[id] = 1;
            n_in++;
        } else {
            assert_int_equal(sched_withdraw(q, id), 1);
            in[id] = 0;
            n_in--;
        }
        assert_int_equal(sched_withdraw(q, N + 1), 0);
        int want = -1;
        for (int k = 0; k < N; k++)
            if (in[k] && (want < 0 || submit[k] < submit[want])) want = k;   /* k ascending: ties by id */
        assert_int_equal(sched_oldest(q, 0), want);
        assert_int_equal(sched_queued(q), n_in);
    }
    /* Drained oldest first: the whole order, not only the heads. */
    for (double last = -1; n_in > 0; n_in--) {
        int id = sched_oldest(q, 0);
        assert_true(id >= 0 && in[id]);
        for (int k = 0; k < N; k++)
            if (in[k] && k != id) assert_true(submit[k] > submit[id] || (submit[k] == submit[id] && k > id));
        assert_true(submit[id] >= last);
        last = submit[id];
        assert_int_equal(sched_withdraw(q, id), 1);
        in[id] = 0;
    }
    assert_int_equal(sched_oldest(q, 0), -1);
    rng_free(r);
    sched_free(q);
    cluster_free(c);
    scenario_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mmc_matches_erlang_c),
        cmocka_unit_test(test_easy_backfill),
        cmocka_unit_test(test_backfill_depth),
        cmocka_unit_test(test_reservation_after_churn),
        cmocka_unit_test(test_priority_preemption),
        cmocka_unit_test(test_quota_reclaim),
        cmocka_unit_test(test_preemption_no_livelock),
        cmocka_unit_test(test_preemptor_starts_at_once),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_cloud_autoscaling),
        cmocka_unit_test(test_pack_and_spread),
        cmocka_unit_test(test_random_workloads),
        cmocka_unit_test(test_preempt_walk),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_spread_slows_training),
        cmocka_unit_test(test_fit_limit),
        cmocka_unit_test(test_queue_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
