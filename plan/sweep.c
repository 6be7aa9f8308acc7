/*
 * sweep: running a grid's points as replicas on workers and ranks, and
 * recording them (see sweep.h). Cost: a 16K-GPU scenario loads in ~90 ms
 * (nearly all of it libxml2's RELAX NG validation) and runs in ~80 ms, so
 * loads are shared: a point is loaded by the worker that checked it and by
 * few others.
 */
#include "plan/sweep.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/grow.h"
#include "hw/comm.h"
#include "plan/pool.h"
#include "plan/ranks.h"
#include "reports/json.h"
#include "reports/results.h"
#include "reports/sweepdb.h"
#include "sim/metrics.h"
#include "sim/world.h"

#define SWEEP_KEEP_LOADED 128         /* points whose checked scenario is kept */
#define BATCH_S 0.5                   /* runs stored in one transaction, at most this long */

enum { OP_CHECK = 1, OP_RUN = 2 };

/* ---- one run ----------------------------------------------------------------- */

/* A process's loaded scenarios by point: the parent's sw->loaded, or a
 * worker's own (its copy of sw->loaded after fork, plus what it loads). On
 * a grid too large to keep every point, only the last loaded is kept. */
static scenario *cached(sweep *sw, int p, char **msg) {
    if (sw->loaded[p]) return sw->loaded[p];
    if (sw->n_points > SWEEP_KEEP_LOADED)
        for (int q = 0; q < sw->n_points; q++)
            if (sw->loaded[q]) {
                scenario_free(sw->loaded[q]);
                sw->loaded[q] = NULL;
            }
    char err[2048];
    if (scenario_load_memory(sw->text[p], sw->text_len[p], sw->file, &sw->loaded[p], err, sizeof err) < 0) {
        *msg = strdup(err);
        return NULL;
    }
    return sw->loaded[p];
}

/* Run replica r of point p. Returns 0 with *out the JSON (malloc'd), or 1
 * with *out the error message (malloc'd). */
static int run_one(sweep *sw, int p, int r, char **out) {
    char err[2048];
    *out = NULL;
    scenario *s = cached(sw, p, out);
    if (!s) return 1;
    s->seed = sweep_seed(sw->base->seed, r);
    double t0 = comm_wtime();
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        *out = strdup(bus ? err : "out of memory");
        metrics_free(bus);
        return 1;
    }
    world_run(w, 0);
    json *j = json_new();
    if (j) results_json(j, s, w, comm_wtime() - t0);
    const char *t = j ? json_text(j, NULL) : NULL;
    *out = strdup(t ? t : "out of memory");
    int st = t && *out ? 0 : 1;
    json_free(j);
    world_free(w);
    metrics_free(bus);
    return st;
}

/* Check point p in this process, keeping what it loads. 0, or 1 (bad
 * input) or 2 (does not fit) with *msg why. */
static int check_one(sweep *sw, int p, char **msg) {
    if (sw->loaded[p]) return 0;
    scenario *s = NULL;
    int st = sweep_check_point(sw, p, &s, NULL, msg);
    if (st != 0) return st;
    if (sw->n_points <= SWEEP_KEEP_LOADED) sw->loaded[p] = s;
    else scenario_free(s);
    return 0;
}

/* The pool's work: a check or a run. */
static int work(void *ctx, const pool_item *it, char **payload) {
    return it->op == OP_CHECK ? check_one(ctx, it->p, payload) : run_one(ctx, it->p, it->r, payload);
}

static const char *died_cmd;          /* the command, for the message below */

static void died(void *ctx, const pool_item *t, int ws) {
    const sweep *sw = ctx;
    sweep_say("\nclustertwin %s: a worker died %s point %s replica %d (%s %d)\n", died_cmd,
              t->op == OP_CHECK ? "checking" : "running", sw->key[t->p], t->r,
              WIFSIGNALED(ws) ? "signal" : "exit status", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
}

/* Start n workers for sw's points (they inherit what this process loaded). */
static pool *start_pool(sweep *sw, int n, const char *cmd, const pool_job *job) {
    unsigned char *had = calloc((size_t)sw->n_points + 1, 1);
    if (!had) return NULL;
    for (int p = 0; p < sw->n_points; p++) had[p] = sw->loaded[p] != NULL;
    char err[256];
    pool *pl = pool_start(n, sw->n_points, had, job, err, sizeof err);
    if (!pl && err[0]) sweep_say("clustertwin %s: %s\n", cmd, err);
    free(had);
    return pl;
}

/* ---- progress ---------------------------------------------------------------- */

typedef struct progress {
    int on;
    int total, done, failed;
    double t0, last;
} progress;

static void progress_draw(progress *pg, int final) {
    if (!pg->on) return;
    double now = comm_wtime();
    if (!final && now - pg->last < 0.1 && pg->done < pg->total) return;
    pg->last = now;
    int width = 30, fill = pg->total ? pg->done * width / pg->total : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '-';
    bar[width] = 0;
    double el = now - pg->t0, eta = pg->done ? el / pg->done * (pg->total - pg->done) : 0;
    char etaz[32];
    if (pg->done) snprintf(etaz, sizeof etaz, "%d:%02d", (int)eta / 60, (int)eta % 60);
    else snprintf(etaz, sizeof etaz, "?");
    char failed[32] = "";
    if (pg->failed) snprintf(failed, sizeof failed, ", %d failed", pg->failed);
    fprintf(stderr, "\r[%s] %d/%d runs%s  %.1f s  ETA %s ", bar, pg->done, pg->total, failed, el, etaz);
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

/* ---- results ------------------------------------------------------------------- */

typedef struct result_sink {
    sweep *sw;
    sweep_exec *ex;
    progress *pg;
    int write_failed;
    int in_batch;                    /* a database transaction is open */
    double batch_t0;
} result_sink;

/* Store the results JSON of replica r of point p (runs in transactions of
 * at most BATCH_S, or one each when ex->commit_each). 0 or -1 (printed). */
static int store_result(result_sink *rs, int p, int r, const char *payload, size_t n) {
    sweep *sw = rs->sw;
    /* the scenario as run, for the runs row (its name and seed are taken
     * from the JSON by the store) */
    scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", sw->base->name);
    snprintf(s.file, sizeof s.file, "%s", sw->file);
    s.xml_text = sw->text[p];
    s.xml_len = sw->text_len[p];
    s.seed = sweep_seed(sw->base->seed, r);
    char err[1024];
    char *z = malloc(n + 1);
    if (!z) return -1;
    memcpy(z, payload, n);
    z[n] = 0;
    double now = comm_wtime();
    if (!rs->in_batch && sweepdb_batch(rs->ex->st, 1, err, sizeof err) == STORE_OK) {
        rs->in_batch = 1;
        rs->batch_t0 = now;
    }
    int bad = sweepdb_record(rs->ex->st, sw->id, sw->key[p], r, &s, z, err, sizeof err) != STORE_OK;
    if (!bad && rs->in_batch && (now - rs->batch_t0 >= BATCH_S || rs->ex->commit_each)) {
        rs->in_batch = 0;
        bad = sweepdb_batch(rs->ex->st, 0, err, sizeof err) != STORE_OK;
    }
    if (bad) sweep_say("%sclustertwin %s: %s\n", rs->pg->on ? "\n" : "", rs->ex->cmd, err);
    free(z);
    return bad ? -1 : 0;
}

static void on_result(void *ctx, const pool_msg *h, const char *payload) {
    result_sink *rs = ctx;
    rs->pg->done++;
    if (h->status != 0) {
        rs->ex->failed++;
        rs->pg->failed++;
        if (rs->pg->on) fputc('\n', stderr);
        sweep_say("clustertwin %s: point %s replica %d failed: %.*s\n", rs->ex->cmd, rs->sw->key[h->p], h->r,
                  (int)h->n, payload);
        progress_draw(rs->pg, 0);
        return;
    }
    rs->ex->ran++;
    if (!rs->ex->st || rs->write_failed) return;
    int bad = store_result(rs, h->p, h->r, payload, h->n) < 0;
    if (bad) rs->write_failed = 1;
    progress_draw(rs->pg, 0);
    if (!bad && rs->ex->on_stored) rs->ex->on_stored();
}

/* ---- checking ---------------------------------------------------------------------- */

typedef struct check_ctx {
    int bad;                         /* the first failing point, or -1 */
    char *msg;
    sweep *sw;                       /* its unfit[] gets the points that do not fit */
} check_ctx;

static void on_check(void *ctx, const pool_msg *h, const char *payload) {
    check_ctx *c = ctx;
    if (h->status == 0) return;
    if (h->status == 2) {
        if (h->p >= 0 && h->p < c->sw->n_points && !c->sw->unfit[h->p]) c->sw->unfit[h->p] = strdup(payload);
        return;
    }
    if (c->bad < 0 || h->p < c->bad) {                 /* the first in grid order: deterministic */
        free(c->msg);
        c->bad = h->p;
        c->msg = strdup(payload);
    }
}

/* No point fits (rank 0, which knows them all): the first one's reason
 * becomes the error, as for bad input. */
static void all_unfit(sweep *sw, check_ctx *c) {
    if (c->bad >= 0 || sw->n_points == 0) return;
    for (int p = 0; p < sw->n_points; p++)
        if (!sw->unfit[p]) return;
    char *m = malloc(strlen(sw->unfit[0]) + strlen(sw->key[0]) + 64);
    if (!m) return;
    sprintf(m, "no point of the grid fits; at %s: %s", sw->key[0], sw->unfit[0]);
    free(c->msg);
    c->msg = m;
    c->bad = 0;
}

/* A list of items for this rank (ranks_run's run): checks of points lo..hi
 * (todo NULL), or runs todo[lo..hi). */
typedef struct item_list {
    sweep *sw;
    int op;
    const ranks_task *todo;
} item_list;

/* Do items [lo, hi) of the list on the pool (or here), answers to reply.
 * 0, or -1 (a worker died). */
static int do_items(void *ctx, int lo, int hi, ranks_reply_fn reply, void *reply_ctx, volatile int *stop) {
    const item_list *l = ctx;
    pool_item *items = malloc(((size_t)(hi - lo) + 1) * sizeof *items);
    if (!items) return -1;
    for (int i = lo; i < hi; i++)
        items[i - lo] = l->todo ? (pool_item){ l->op, l->todo[i].p, l->todo[i].r, 0 } : (pool_item){ l->op, i, 0, 0 };
    pool_job job = { work, l->sw, reply, reply_ctx, died };
    int rc = pool_do(l->sw->pool, items, hi - lo, &job, stop);
    free(items);
    return rc;
}

/* Check every point, on jobs workers (started here and kept for the runs)
 * and over the MPI ranks (dealt as they ask, each from its own share;
 * rank 0 learns every verdict). */
static int check_all(sweep *sw, const char *cmd, int jobs, check_ctx *c) {
    int n = sw->n_points;
    pool_job job = { work, sw, on_check, c, died };
    died_cmd = cmd;
    if (jobs > 1 && n > 1 && !sw->pool) sw->pool = start_pool(sw, jobs < n ? jobs : n, cmd, &job);
    volatile int stop = 0;
    item_list l = { sw, OP_CHECK, NULL };
    ranks_work w = { n, jobs, n, cmd, do_items, &l, on_check, c, &stop };
    int rc = comm_size() > 1 ? ranks_run(&w) : do_items(&l, 0, n, on_check, c, &stop);
    return rc < 0 ? PLAN_FAILED : PLAN_OK;
}

int sweep_check(sweep *sw, const char *cmd, int jobs) {
    int rc = sweep_points(sw, cmd);
    if (rc == PLAN_OK) rc = sweep_point_texts(sw, cmd);
    check_ctx c = { -1, NULL, sw };
    if (rc == PLAN_OK) rc = check_all(sw, cmd, jobs, &c);
    if (comm_rank() == 0) all_unfit(sw, &c);
    if (comm_size() > 1) ranks_bcast_verdict(&rc, &c.bad);        /* rank 0 knows every point's */
    if (rc == PLAN_OK && c.bad >= 0) {
        sweep_say("clustertwin %s: %s\n", cmd, c.msg ? c.msg : "bad input");
        rc = PLAN_BAD_INPUT;
    }
    free(c.msg);
    if (rc != PLAN_OK) {
        pool_stop(sw->pool, 1);
        sw->pool = NULL;
    }
    return rc;
}

int sweep_prepare(sweep *sw, const char *cmd) { return sweep_check(sw, cmd, 1); }

/* ---- the whole sweep ------------------------------------------------------------ */

/* Rank 0: record the sweep and its points, and list the runs the database
 * does not hold yet (this part's, under --part) in *todo, *nt. A point that
 * does not fit is recorded as such. PLAN_OK, or a status (printed). */
static int list_runs(sweep *sw, const int *pts, int np, sweep_exec *ex, ranks_task **todo, int *nt) {
    char err[2048];
    char *params = sweep_params_json(sw), *sets = sweep_sets_json(sw);
    int src = params && sets ? STORE_OK : STORE_FAILED;
    if (src == STORE_OK && !sw->id)
        src = sweepdb_begin(ex->st, sw->base->name, sw->file, sw->xml, params, sets, sw->replicas, &sw->id, err,
                            sizeof err);
    free(params);
    free(sets);
    *todo = malloc(((size_t)np * (size_t)sw->replicas + 1) * sizeof **todo);
    unsigned char *done = malloc((size_t)sw->replicas + 1);
    if (!*todo || !done) src = STORE_FAILED, snprintf(err, sizeof err, "out of memory");
    for (int i = 0; i < np && src == STORE_OK; i++) {
        int p = pts[i];
        src = sweepdb_point(ex->st, sw->id, sw->key[p], sw->x[p], err, sizeof err);
        if (src == STORE_OK && sw->unfit[p]) {
            src = sweepdb_unfit(ex->st, sw->id, sw->key[p], sw->unfit[p], err, sizeof err);
            ex->unfit++;
            continue;
        }
        if (src == STORE_OK) src = sweepdb_done(ex->st, sw->id, sw->key[p], sw->replicas, done, err, sizeof err);
        for (int r = 0; r < sw->replicas && src == STORE_OK; r++) {
            long long t = (long long)i * sw->replicas + r;        /* the run's place in the full list */
            if (ex->part_n > 1 && t % ex->part_n != ex->part_k) continue;
            if (done[r]) {
                ex->skipped++;
                continue;
            }
            (*todo)[*nt].p = p;
            (*todo)[(*nt)++].r = r;
        }
    }
    free(done);
    if (src == STORE_OK) return PLAN_OK;
    sweep_say("clustertwin %s: %s\n", ex->cmd, err);
    *nt = -1;
    return src == STORE_BAD_INPUT ? PLAN_BAD_INPUT : PLAN_FAILED;
}

/* Run todo[0..nt) on this process's pool, or over the MPI ranks (dealt as
 * they go, plan/ranks.h), results to rs (rank 0 records them all). 0, or
 * -1 (a worker or a rank failed). */
static int run_list(sweep *sw, const ranks_task *todo, int nt, sweep_exec *ex, result_sink *rs) {
    int rank = comm_rank(), size = comm_size();
    rs->pg->on = ex->progress && rank == 0;
    rs->pg->total = nt;
    rs->pg->t0 = comm_wtime();
    pool_signals *sig = pool_signals_catch();
    progress_draw(rs->pg, 0);
    pool_job job = { work, sw, on_result, rs, died };
    int own = !sw->pool && ex->jobs > 1 && nt > 1;      /* a pool started here is stopped here */
    if (own) sw->pool = start_pool(sw, ex->jobs < nt ? ex->jobs : nt, ex->cmd, &job);
    item_list l = { sw, OP_RUN, todo };
    ranks_work w = { nt, ex->jobs, sw->n_points, ex->cmd, do_items, &l, on_result, rs, &rs->write_failed };
    died_cmd = ex->cmd;
    int prc = own && !sw->pool ? -1 : size > 1 ? ranks_run(&w) : do_items(&l, 0, nt, on_result, rs, &rs->write_failed);
    if (own || pool_interrupted() || prc < 0) {
        pool_stop(sw->pool, 1);
        sw->pool = NULL;
    }
    progress_draw(rs->pg, 1);
    pool_signals_restore(sig);
    return prc;
}

int sweep_execute(sweep *sw, const int *pts, int np, sweep_exec *ex) {
    int rank = comm_rank(), size = comm_size();
    ex->ran = ex->skipped = ex->failed = ex->unfit = 0;
    double t0 = comm_wtime();
    ranks_task *todo = NULL;
    int nt = 0, status = PLAN_OK;
    char err[2048];
    if (rank == 0) status = list_runs(sw, pts, np, ex, &todo, &nt);
    if (size > 1 && ranks_bcast_tasks(&todo, &nt) < 0) {
        free(todo);
        return PLAN_FAILED;
    }
    if (nt < 0) {
        free(todo);
        return status == PLAN_OK ? PLAN_FAILED : status;
    }
    progress pg = { 0 };
    result_sink rs = { .sw = sw, .ex = ex, .pg = &pg };
    int prc = run_list(sw, todo, nt, ex, &rs);
    if (rs.in_batch && sweepdb_batch(ex->st, 0, err, sizeof err) != STORE_OK) {
        sweep_say("clustertwin %s: %s\n", ex->cmd, err);
        rs.write_failed = 1;
    }
    free(todo);
    ex->wall_s = comm_wtime() - t0;
    if (rank != 0) return prc == 0 ? PLAN_OK : PLAN_FAILED;
    if (pool_interrupted()) {
        sweep_say("clustertwin %s: interrupted: %d runs stored in %s; run the same command again to resume\n",
                  ex->cmd, ex->ran, store_path(ex->st));
        return PLAN_FAILED;
    }
    if (prc < 0 || rs.write_failed || ex->failed) return PLAN_FAILED;
    return PLAN_OK;
}
