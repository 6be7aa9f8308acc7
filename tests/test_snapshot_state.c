/*
 * test_snapshot_state: a scenario that starts from a live cluster's state
 * (issue 22, docs/cluster-state.md): a running job ends at duration -
 * elapsed; an unavailable node is not used until its repair; a draining
 * node keeps its running job, takes no new one and is drained (then
 * resumed after repair=) when that job ends; a held job
 * never starts; a dependency waits; run times drawn from the history are
 * deterministic and above the time already run; the replay's Kendall tau
 * is 1 when the simulated order is the actual one; node names map to the
 * cluster's node order; users and accounts repeated by rows are kept
 * once.
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
#include <unistd.h>

#include "models/rankstat.h"
#include "simrun.h"

static char trace_path[128];

/* A 2-node DGX H100 cluster named n1, n2 (extra: more <cluster> children;
 * history: <runtime-history> children) around a trace of these rows. */
static run run_trace(const char *extra, const char *history, const char *rows, unsigned long long seed) {
    snprintf(trace_path, sizeof trace_path, "/tmp/ct_snapstate_%ld.csv", (long)getpid());
    FILE *f = fopen(trace_path, "w");
    assert_non_null(f);
    fputs(rows, f);
    fclose(f);
    static char xml[4096];
    snprintf(xml, sizeof xml,
             "<scenario name=\"snap\" snapshot-time=\"2026-11-26T09:30:00Z\">\n"
             "<cluster><nodes type=\"dgx-h100\" count=\"2\" names=\"n[1-2]\"/>%s</cluster>\n"
             "<scheduler policy=\"fifo\"/>\n"
             "<workload><runtime-history>%s</runtime-history><trace href=\"%s\"/></workload>\n"
             "</scenario>\n", extra, history, trace_path);
    run r = simulate(xml, seed);
    unlink(trace_path);
    return r;
}

static const job_result *job_named(run *r, const char *name) {
    for (int i = 0; i < world_job_count(r->w); i++)
        if (!strcmp(run_job(r, i)->name, name)) return run_job(r, i);
    fail_msg("no job %s", name);
    return NULL;
}

static void test_running_job_ends_at_duration_minus_elapsed(void **state) {
    (void)state;
    run r = run_trace("", "", "id,submit,gpus,duration,state,elapsed,nodes\n"
                               "7,-2h,8,3h,running,1h,n2\n", 1);
    const job_result *j = job_named(&r, "7");
    assert_int_equal(j->state, JOB_DONE);
    assert_true(fabs(j->start_s + 3600) < 1e-6);
    assert_true(fabs(j->end_s - 7200) < 1e-6);
    assert_true(fabs(j->queue_wait_s - 3600) < 1e-6);         /* submitted 2h before, started 1h before */
    done(&r);
}

static void test_unavailable_node_waits_for_repair(void **state) {
    (void)state;
    run r = run_trace("<unavailable nodes=\"n2\" state=\"down\" reason=\"XID 79\" repair=\"2h\"/>", "",
                      "submit,gpus,duration,name\n0,8,1h,small\n0,16,1h,both\n", 1);
    assert_true(fabs(job_named(&r, "small")->start_s) < 1e-6);   /* n1 is up */
    assert_true(fabs(job_named(&r, "both")->start_s - 7200) < 1e-6);
    assert_int_equal(world_get_totals(r.w).nodes_unavailable_at_start, 1);
    done(&r);
    /* Drained with no repair: never back; the run ends without the job. */
    r = run_trace("<unavailable nodes=\"n1\" state=\"drained\"/>", "", "submit,gpus,duration,name\n0,16,1h,both\n", 1);
    assert_int_equal(job_named(&r, "both")->state, JOB_PENDING);
    done(&r);
}

/* n1 draining under job a (ends at 2h), n2 busy with b until 5h: c (8
 * GPUs) would start at 2h on n1 were n1 open; it waits for n2. n1 is
 * drained at 2h and resumed 10h later, when d (16 GPUs) starts. */
static void test_draining_node_keeps_its_job_only(void **state) {
    (void)state;
    run r = run_trace("<unavailable nodes=\"n1\" state=\"draining\" reason=\"kernel\" repair=\"10h\"/>", "",
                      "id,submit,gpus,duration,state,elapsed,nodes\n"
                      "a,-1h,8,3h,running,1h,n1\nb,-1h,8,6h,running,1h,n2\nc,0,8,1h,pending,,\nd,0,16,1h,pending,,\n", 1);
    const job_result *a = job_named(&r, "a");
    assert_int_equal(a->state, JOB_DONE);
    assert_true(fabs(a->start_s + 3600) < 1e-6 && fabs(a->end_s - 7200) < 1e-6);   /* ran on where it was */
    assert_true(fabs(job_named(&r, "c")->start_s - 18000) < 1e-6);                 /* not on n1 at 2h */
    assert_true(fabs(job_named(&r, "d")->start_s - 43200) < 1e-6);                 /* n1 back at 2h + 10h */
    assert_int_equal(world_get_totals(r.w).nodes_draining_at_start, 1);
    assert_int_equal(world_get_totals(r.w).nodes_unavailable_at_start, 0);
    done(&r);
    /* Draining with nothing on it: drained at once, and without repair= never back. */
    r = run_trace("<unavailable nodes=\"n1\" state=\"draining\"/>", "", "submit,gpus,duration,name\n0,8,1h,small\n0,16,1h,both\n", 1);
    assert_true(fabs(job_named(&r, "small")->start_s) < 1e-6);
    assert_int_equal(job_named(&r, "both")->state, JOB_PENDING);
    done(&r);
}

static void test_held_never_starts_and_dependency_waits(void **state) {
    (void)state;
    run r = run_trace("", "", "id,submit,gpus,duration,state,after\n"
                               "a,0,8,2h,pending,\n"
                               "b,0,8,1h,pending,a\n"
                               "h,0,8,1h,held,\n"
                               "c,0,8,1h,pending,h\n", 1);
    assert_true(fabs(job_named(&r, "a")->start_s) < 1e-6);
    assert_true(fabs(job_named(&r, "b")->start_s - 7200) < 1e-6);   /* GPUs were free: it waited for a */
    assert_int_equal(job_named(&r, "h")->state, JOB_PENDING);
    assert_true(job_named(&r, "h")->start_s < 0);
    assert_int_equal(job_named(&r, "c")->state, JOB_PENDING);       /* waits for a held job */
    assert_true(world_get_totals(r.w).simulated_s <= 3 * 3600.0 + 1e-6);   /* the run did not wait for them */
    done(&r);
}

static double drawn_s(unsigned long long seed) {
    run r = run_trace("", "<ratios user=\"al\" values=\"0.1 0.2 0.6 0.9\"/>",
                      "id,submit,gpus,limit,state,elapsed,user\nx,-6h,8,10h,running,5h,al\n", seed);
    const job_result *j = job_named(&r, "x");
    double d = j->end_s - j->start_s;
    assert_int_equal(j->state, JOB_DONE);
    done(&r);
    return d;
}

static void test_runtime_history_draws(void **state) {
    (void)state;
    for (unsigned long long seed = 1; seed <= 6; seed++) {
        double d = drawn_s(seed);
        assert_true(fabs(d - drawn_s(seed)) < 1e-9);                /* the same seed, the same draw */
        assert_true(fabs(d - 6 * 3600.0) < 1e-6 || fabs(d - 9 * 3600.0) < 1e-6);   /* above elapsed 5h */
    }
    /* No samples: the run time is the limit. */
    run r = run_trace("", "", "id,submit,gpus,limit\ny,0,8,3h\n", 1);
    assert_true(fabs(job_named(&r, "y")->end_s - 3 * 3600.0) < 1e-6);
    done(&r);
}

/* Users and accounts are interned: rows that repeat one share its text. */
static void test_users_interned(void **state) {
    (void)state;
    run r = run_trace("", "", "id,submit,gpus,duration,user,account\nu,0,8,1h,al,ml\nv,0,8,1h,bo,ml\n"
                      "w,0,8,1h,al,cv\nx,0,8,1h,al,al\n", 1);
    const scenario *s = r.s;
    const sc_trace_job *t = s->trace_jobs;
    assert_int_equal(s->n_trace_jobs, 4);
    assert_true(t[0].user == t[2].user && t[0].user == t[3].user && t[0].user != t[1].user);
    assert_true(t[0].account == t[1].account && t[0].account != t[2].account);
    assert_true(t[3].account == t[0].user);                        /* the same text, user or account */
    assert_string_equal(scenario_trace_text(s, t[2].user), "al");
    assert_string_equal(scenario_trace_text(s, t[1].user), "bo");
    assert_string_equal(scenario_trace_text(s, t[2].account), "cv");
    assert_string_equal(scenario_trace_text(s, t[1].account), "ml");
    done(&r);
}

static void test_replay_tau(void **state) {
    (void)state;
    const char *rows[2] = { "id,submit,gpus,duration,actual_start\np,0,16,1h,0\nq,0,16,1h,1h\nr,0,16,1h,2h\n",
                            "id,submit,gpus,duration,actual_start\np,0,16,1h,2h\nq,0,16,1h,1h\nr,0,16,1h,0\n" };
    for (int k = 0; k < 2; k++) {
        run r = run_trace("", "", rows[k], 1);
        world_replay p = world_get_replay(r.w);
        assert_int_equal(p.jobs, 3);
        assert_true(fabs(p.start_order_kendall_tau - (k ? -1 : 1)) < 1e-12);
        assert_true(fabs(p.wait_error_median_s - (k ? 7200 : 0)) < 1e-6);
        assert_true(fabs(p.wait_error_p90_s - (k ? 7200 : 0)) < 1e-6);
        done(&r);
    }
}

static void test_rankstat(void **state) {
    (void)state;
    double x[] = { 1, 2, 3, 4 }, y[] = { 1, 3, 2, 4 };
    assert_true(fabs(rankstat_kendall_tau_b(x, y, 4) - 4.0 / 6) < 1e-12);
    double xt[] = { 1, 1, 2, 3 }, yt[] = { 1, 2, 2, 3 };
    assert_true(fabs(rankstat_kendall_tau_b(xt, yt, 4) - 0.8) < 1e-12);   /* tau-b: 4 / sqrt(5 x 5) */
    assert_true(isnan(rankstat_kendall_tau_b(x, y, 1)));
    double v[] = { 5, 1, 4, 2, 3 };
    assert_true(rankstat_quantile(v, 5, 0.5) == 3);
    assert_true(rankstat_quantile(v, 5, 0.9) == 5);
}

static void test_node_names_follow_cluster_order(void **state) {
    (void)state;
    const char *xml = "<scenario name=\"n\"><cluster>"
                      "<nodes type=\"dgx-h100\" count=\"2\" names=\"a[1-2]\"/>"
                      "<nodes type=\"dgx-b200\" count=\"1\" names=\"b1\"/>"
                      "<nodes type=\"dgx-h100\" count=\"1\" names=\"a9\"/>"
                      "</cluster></scenario>";
    scenario *s = NULL;
    char err[512];
    assert_int_equal(scenario_load_memory(xml, strlen(xml), "t.xml", &s, err, sizeof err), 0);
    assert_int_equal(scenario_node_by_name(s, "a1"), 0);
    assert_int_equal(scenario_node_by_name(s, "a2"), 1);
    assert_int_equal(scenario_node_by_name(s, "a9"), 2);      /* the H100 pool comes first */
    assert_int_equal(scenario_node_by_name(s, "b1"), 3);
    assert_int_equal(scenario_node_by_name(s, "zz"), -1);
    scenario_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_job_ends_at_duration_minus_elapsed),
        cmocka_unit_test(test_unavailable_node_waits_for_repair),
        cmocka_unit_test(test_draining_node_keeps_its_job_only),
        cmocka_unit_test(test_held_never_starts_and_dependency_waits),
        cmocka_unit_test(test_runtime_history_draws),
        cmocka_unit_test(test_users_interned),
        cmocka_unit_test(test_replay_tau),
        cmocka_unit_test(test_rankstat),
        cmocka_unit_test(test_node_names_follow_cluster_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
