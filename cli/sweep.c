/*
 * sweep: grids of scenario variants run as Monte Carlo replicas over
 * worker processes and MPI ranks (see sweep.h).
 *
 * Messages between a worker and its parent (one pipe each way):
 *
 *   parent -> worker   item: int32 op (1 check point p, 2 run replica r of
 *                      point p, 0 or EOF stop), int32 p, int32 r, int32 0
 *   worker -> parent   int32 point, int32 replica, int32 status (0 ok,
 *                      1 failed), int32 op, uint64 n, then n bytes: the
 *                      results JSON, or the error message
 *
 * The same framing carries results from MPI ranks to rank 0, one message
 * each. Cost: a 16K-GPU scenario loads in ~90 ms (nearly all of it libxml2's
 * RELAX NG validation) and runs in ~80 ms, so loads are shared: a point is
 * loaded by the worker that checked it and by few others.
 */
#include "cli/sweep.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/testpause.h"
#include "hw/comm.h"
#include "reports/json.h"
#include "reports/results.h"
#include "reports/sweepdb.h"
#include "sim/metrics.h"
#include "sim/rng.h"
#include "sim/world.h"

#define TAG_COUNT 7101
#define TAG_RESULT 7102
#define SWEEP_KEEP_LOADED 128         /* points whose checked scenario is kept */

typedef struct task {
    int p, r;
} task;

typedef struct msg_hdr {
    int32_t p, r, status, pad;
    uint64_t n;
} msg_hdr;

static volatile sig_atomic_t interrupted;

int sweep_silent;

/* Messages for the user: from rank 0 only under MPI (sweep_silent). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
    if (sweep_silent) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

/* ---- setting up ------------------------------------------------------------ */

int sweep_init(sweep *sw, const char *cmd, const char *file) {
    memset(sw, 0, sizeof *sw);
    sw->file = file;
    sw->replicas = 1;
    char err[2048];
    if (scenario_load(file, &sw->base, err, sizeof err) < 0) {
        say("%s\n", err);
        return EXIT_BAD_INPUT;
    }
    sw->len = sw->base->xml_len;
    sw->xml = malloc(sw->len + 1);
    if (!sw->xml) {
        say("clustertwin %s: out of memory\n", cmd);
        return EXIT_RUN_FAILED;
    }
    memcpy(sw->xml, sw->base->xml_text, sw->len + 1);
    return EXIT_OK;
}

static void pool_stop(sweep_pool *pl, int kill_busy);

void sweep_free(sweep *sw) {
    pool_stop(sw->pool, 1);
    for (int a = 0; a < sw->n_axes; a++) {
        free(sw->axes[a].path);
        override_values_free(sw->axes[a].values, sw->axes[a].n);
    }
    for (int i = 0; i < sw->n_sets; i++) free(sw->set_text[i]);
    for (int p = 0; p < sw->n_points; p++) {
        if (sw->loaded) scenario_free(sw->loaded[p]);
        if (sw->unfit) free(sw->unfit[p]);
        if (sw->text) free(sw->text[p]);
        if (sw->key) free(sw->key[p]);
        if (sw->x) free(sw->x[p]);
    }
    free(sw->loaded);
    free(sw->unfit);
    free(sw->text);
    free(sw->text_len);
    free(sw->key);
    free(sw->x);
    free(sw->xml);
    scenario_free(sw->base);
    memset(sw, 0, sizeof *sw);
}

/* Check that the path names something in the scenario, before any value
 * is tried, so a typo reads as such and not as a bad value. */
static int check_path(sweep *sw, const char *cmd, const char *path, const char *value) {
    override ov = { path, value };
    char *t = NULL, err[2048];
    if (override_apply(sw->xml, sw->len, sw->file, &ov, 1, &t, NULL, err, sizeof err) < 0) {
        say("clustertwin %s: %s\n", cmd, err);
        return EXIT_BAD_INPUT;
    }
    free(t);
    return EXIT_OK;
}

int sweep_parse_vary(sweep *sw, const char *cmd, const char *arg, int int_range) {
    char buf[2048];
    const char *path, *values;
    if (sw->n_axes == SWEEP_MAX_AXES) {
        say("clustertwin %s: at most %d --vary\n", cmd, SWEEP_MAX_AXES);
        return EXIT_BAD_INPUT;
    }
    if (override_split(arg, buf, sizeof buf, &path, &values) < 0 || !*path || !*values) {
        say("clustertwin %s: --vary %s: expected PATH=VALUES, like cluster/nodes/@count=64,128,256\n", cmd, arg);
        return EXIT_BAD_INPUT;
    }
    for (int a = 0; a < sw->n_axes; a++)
        if (!strcmp(sw->axes[a].path, path)) {
            say("clustertwin %s: --vary %s: this path is varied twice\n", cmd, path);
            return EXIT_BAD_INPUT;
        }
    char err[512];
    sweep_axis *ax = &sw->axes[sw->n_axes];
    ax->n = override_values(values, int_range, &ax->values, err, sizeof err);
    if (ax->n < 0) {
        ax->n = 0;
        say("clustertwin %s: --vary %s: %s\n", cmd, path, err);
        return EXIT_BAD_INPUT;
    }
    ax->path = strdup(path);
    sw->n_axes++;
    if (!ax->path) return EXIT_RUN_FAILED;
    return check_path(sw, cmd, path, ax->values[0]);
}

int sweep_add_set(sweep *sw, const char *cmd, const char *arg) {
    if (sw->n_sets == SWEEP_MAX_SETS) {
        say("clustertwin %s: at most %d --set\n", cmd, SWEEP_MAX_SETS);
        return EXIT_BAD_INPUT;
    }
    size_t n = strlen(arg) + 1;
    char *b = malloc(n);
    if (!b) return EXIT_RUN_FAILED;
    const char *path, *value;
    if (override_split(arg, b, n, &path, &value) < 0 || !*path || !*value) {
        free(b);
        say("clustertwin %s: --set %s: expected PATH=VALUE, like cluster/spares/@warm=8\n", cmd, arg);
        return EXIT_BAD_INPUT;
    }
    sw->set_text[sw->n_sets] = b;
    sw->sets[sw->n_sets].path = path;
    sw->sets[sw->n_sets].value = value;
    sw->n_sets++;
    return strchr(value, '{') ? EXIT_OK : check_path(sw, cmd, path, value);
}

/* JSON string of z appended to b. */
static void js(char **b, size_t *n, size_t *cap, const char *z) {
    size_t need = *n + 2 * strlen(z) + 8;
    if (need > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < need) c *= 2;
        char *p = realloc(*b, c);
        if (!p) return;
        *b = p;
        *cap = c;
    }
    char *w = *b + *n;
    *w++ = '"';
    for (const char *p = z; *p; p++) {
        if (*p == '"' || *p == '\\') *w++ = '\\';
        *w++ = (unsigned char)*p < 0x20 ? ' ' : *p;
    }
    *w++ = '"';
    *w = 0;
    *n = (size_t)(w - *b);
}

static void raw(char **b, size_t *n, size_t *cap, const char *z) {
    size_t k = strlen(z);
    if (*n + k + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < *n + k + 1) c *= 2;
        char *p = realloc(*b, c);
        if (!p) return;
        *b = p;
        *cap = c;
    }
    memcpy(*b + *n, z, k + 1);
    *n += k;
}

char *sweep_params_json(const sweep *sw) {
    char *b = NULL;
    size_t n = 0, cap = 0;
    raw(&b, &n, &cap, "[");
    for (int a = 0; a < sw->n_axes; a++) {
        if (a) raw(&b, &n, &cap, ",");
        js(&b, &n, &cap, sw->axes[a].path);
    }
    raw(&b, &n, &cap, "]");
    return b;
}

char *sweep_sets_json(const sweep *sw) {
    char *b = NULL;
    size_t n = 0, cap = 0;
    raw(&b, &n, &cap, "[");
    for (int i = 0; i < sw->n_sets; i++) {
        char one[2048];
        snprintf(one, sizeof one, "%s=%s", sw->sets[i].path, sw->sets[i].value);
        if (i) raw(&b, &n, &cap, ",");
        js(&b, &n, &cap, one);
    }
    raw(&b, &n, &cap, "]");
    return b;
}

int sweep_point_of(const sweep *sw, const int *idx) {
    int p = 0;
    for (int a = 0; a < sw->n_axes; a++) p = p * sw->axes[a].n + idx[a];
    return p;
}

const char *sweep_value(const sweep *sw, int p, int a) {
    for (int b = sw->n_axes - 1; b > a; b--) p /= sw->axes[b].n;
    return sw->axes[a].values[p % sw->axes[a].n];
}

int sweep_points(sweep *sw, const char *cmd) {
    long long n = 1;
    for (int a = 0; a < sw->n_axes; a++) n *= sw->axes[a].n;
    if (n > SWEEP_MAX_POINTS) {
        say("clustertwin %s: the grid has %lld points; at most %d\n", cmd, n, SWEEP_MAX_POINTS);
        return EXIT_BAD_INPUT;
    }
    sw->n_points = (int)n;
    sw->text = calloc((size_t)n, sizeof *sw->text);
    sw->text_len = calloc((size_t)n, sizeof *sw->text_len);
    sw->key = calloc((size_t)n, sizeof *sw->key);
    sw->x = calloc((size_t)n, sizeof *sw->x);
    sw->loaded = calloc((size_t)n, sizeof *sw->loaded);
    sw->unfit = calloc((size_t)n, sizeof *sw->unfit);
    if (!sw->text || !sw->text_len || !sw->key || !sw->x || !sw->loaded || !sw->unfit) return EXIT_RUN_FAILED;
    for (int p = 0; p < sw->n_points; p++) {
        char *kb = NULL, *xb = NULL;
        size_t kn = 0, kc = 0, xn = 0, xc = 0;
        raw(&kb, &kn, &kc, "[");
        raw(&xb, &xn, &xc, "[");
        for (int a = 0; a < sw->n_axes; a++) {
            const char *v = sweep_value(sw, p, a);
            if (a) raw(&kb, &kn, &kc, ","), raw(&xb, &xn, &xc, ",");
            js(&kb, &kn, &kc, v);
            double x;
            char num[64];
            if (override_number(v, &x) == 0) snprintf(num, sizeof num, "%.17g", x);
            else snprintf(num, sizeof num, "null");
            raw(&xb, &xn, &xc, num);
        }
        raw(&kb, &kn, &kc, "]");
        raw(&xb, &xn, &xc, "]");
        sw->key[p] = kb;
        sw->x[p] = xb;
        if (!kb || !xb) return EXIT_RUN_FAILED;
    }
    return EXIT_OK;
}

/* The overrides of point p: the axes' values, then the --set ones. */
static int point_overrides(const sweep *sw, int p, override *ov) {
    int k = 0;
    for (int a = 0; a < sw->n_axes; a++) {
        ov[k].path = sw->axes[a].path;
        ov[k++].value = sweep_value(sw, p, a);
    }
    for (int i = 0; i < sw->n_sets; i++) ov[k++] = sw->sets[i];
    return k;
}

/* Load point p and build its world once: the check of everything that can
 * be wrong with it. On success *out is the loaded scenario (the caller
 * owns it) and, when text is not NULL and *text is NULL, *text its edited
 * text. On error returns 1 (bad input: the scenario does not load, or no
 * memory) or 2 (it does not fit: the scenario loads but its world is
 * refused), with *msg the message (malloc'd). */
static int check_point(const sweep *sw, int p, scenario **out, char **text, char **msg) {
    override ov[SWEEP_MAX_AXES + SWEEP_MAX_SETS];
    char err[4096];
    *out = NULL;
    *msg = NULL;
    int k = point_overrides(sw, p, ov);
    scenario *s = NULL;
    char *t = NULL;
    if (override_load(sw->xml, sw->len, sw->file, ov, k, &s, text && !*text ? &t : NULL, err, sizeof err) < 0) {
        *msg = strdup(err);
        return 1;
    }
    /* what the world refuses (a plan that does not fit in GPU memory, a
     * job larger than the cluster, a run past the clock's horizon) is a
     * configuration that does not fit: found now rather than in the middle
     * of the runs, and recorded rather than fatal; running out of memory
     * here is a failure */
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        int oom = !bus || strstr(err, "out of memory") != NULL;
        *msg = strdup(bus ? err : "out of memory");
        metrics_free(bus);
        scenario_free(s);
        free(t);
        return oom ? 1 : 2;
    }
    world_free(w);
    metrics_free(bus);
    if (t) *text = t;
    *out = s;
    return 0;
}

/* The edited text of every point (cheap: no validation). Path and
 * expression errors show here, before any point is loaded. */
static int point_texts(sweep *sw, const char *cmd) {
    override ov[SWEEP_MAX_AXES + SWEEP_MAX_SETS];
    char err[4096];
    for (int p = 0; p < sw->n_points; p++) {
        if (sw->text[p]) continue;
        int k = point_overrides(sw, p, ov);
        if (override_apply(sw->xml, sw->len, sw->file, ov, k, &sw->text[p], &sw->text_len[p], err, sizeof err) < 0) {
            say("clustertwin %s: %s\n", cmd, err);
            return EXIT_BAD_INPUT;
        }
    }
    return EXIT_OK;
}

int sweep_fits(const sweep *sw, int p) { return !sw->unfit || !sw->unfit[p]; }

int sweep_prepare_point(sweep *sw, const char *cmd, int p) {
    if (sw->loaded[p] || sw->unfit[p]) return EXIT_OK;
    char *msg = NULL;
    scenario *s = NULL;
    int st = check_point(sw, p, &s, &sw->text[p], &msg);
    if (st == 2 && msg) {
        sw->unfit[p] = msg;
        return EXIT_OK;
    }
    if (st != 0) {
        say("clustertwin %s: %s\n", cmd, msg ? msg : "out of memory");
        free(msg);
        return EXIT_BAD_INPUT;
    }
    sw->text_len[p] = strlen(sw->text[p]);
    sw->loaded[p] = s;
    return EXIT_OK;
}

uint64_t sweep_seed(uint64_t base, int replica) {
    if (replica == 0) return base;
    /* below 2^53, so `run --seed` and JSON numbers carry it exactly */
    return rng_derive_seed(base, "sweep-replica", (uint64_t)replica) & ((1ULL << 53) - 1);
}

int sweep_shell_quote(char *b, size_t cap, const char *z) {
    size_t n = strlen(b), n0 = n;
    for (const char *c = z; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F) return -1;      /* a line break would split the script's line */
    if (n + 3 > cap) return -1;
    b[n++] = '\'';
    for (; *z; z++) {
        if (n + 6 > cap) {
            b[n0] = 0;                                 /* b as it was */
            return -1;
        }
        if (*z == '\'') {
            memcpy(b + n, "'\\''", 4);
            n += 4;
        } else {
            b[n++] = *z;
        }
    }
    b[n++] = '\'';
    b[n] = 0;
    return 0;
}

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
    double t0 = cli_wall_s();
    metric_bus *bus = metrics_new();
    world *w = bus ? world_new(s, bus, err, sizeof err) : NULL;
    if (!w) {
        *out = strdup(bus ? err : "out of memory");
        metrics_free(bus);
        return 1;
    }
    world_run(w, 0);
    json *j = json_new();
    if (j) results_json(j, s, w, cli_wall_s() - t0);
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
    int st = check_point(sw, p, &s, NULL, msg);
    if (st != 0) return st;
    if (sw->n_points <= SWEEP_KEEP_LOADED) sw->loaded[p] = s;
    else scenario_free(s);
    return 0;
}

/* ---- I/O helpers -------------------------------------------------------------- */

static int write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* 0 ok, 1 EOF before anything, -1 error or EOF in the middle */
static int read_all(int fd, void *buf, size_t n) {
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, p + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) return got == 0 ? 1 : -1;
        got += (size_t)k;
    }
    return 0;
}

/* ---- progress ---------------------------------------------------------------- */

typedef struct progress {
    int on;
    int total, done, failed;
    double t0, last;
} progress;

static void progress_draw(progress *pg, int final) {
    if (!pg->on) return;
    double now = cli_wall_s();
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
    /* ranks other than 0 keep their results to send at the end */
    int keep;
    char **buf;
    size_t *len;
    int n, cap;
} result_sink;

static void on_result(result_sink *rs, int p, int r, int status, const char *payload, size_t n) {
    sweep *sw = rs->sw;
    if (rs->keep) {
        if (rs->n == rs->cap) {
            int c = rs->cap ? 2 * rs->cap : 16;
            char **b = realloc(rs->buf, (size_t)c * sizeof *b);
            if (b) rs->buf = b;
            size_t *l = b ? realloc(rs->len, (size_t)c * sizeof *l) : NULL;
            if (l) rs->len = l;
            if (!b || !l) {
                rs->write_failed = 1;
                return;
            }
            rs->cap = c;
        }
        msg_hdr h = { p, r, status, 0, n };
        char *m = malloc(sizeof h + n);
        if (!m) {
            rs->write_failed = 1;
            return;
        }
        memcpy(m, &h, sizeof h);
        memcpy(m + sizeof h, payload, n);
        rs->buf[rs->n] = m;
        rs->len[rs->n++] = sizeof h + n;
        rs->pg->done++;
        progress_draw(rs->pg, 0);
        return;
    }
    rs->pg->done++;
    if (status != 0) {
        rs->ex->failed++;
        rs->pg->failed++;
        if (rs->pg->on) fputc('\n', stderr);
        say("clustertwin %s: point %s replica %d failed: %.*s\n", rs->ex->cmd, sw->key[p], r, (int)n, payload);
        progress_draw(rs->pg, 0);
        return;
    }
    rs->ex->ran++;
    if (!rs->ex->st || rs->write_failed) return;
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
    if (!z) {
        rs->write_failed = 1;
        return;
    }
    memcpy(z, payload, n);
    z[n] = 0;
    double now = cli_wall_s();
    if (!rs->in_batch && sweepdb_batch(rs->ex->st, 1, err, sizeof err) == STORE_OK) {
        rs->in_batch = 1;
        rs->batch_t0 = now;
    }
    int bad = sweepdb_record(rs->ex->st, sw->id, sw->key[p], r, &s, z, err, sizeof err) != STORE_OK;
    /* Test-only (cli/testpause.h): each run committed at once, so a test
     * paused after its Nth run finds N runs in the database. */
    if (!bad && rs->in_batch && (now - rs->batch_t0 >= 0.5 || testpause_active())) {
        rs->in_batch = 0;
        bad = sweepdb_batch(rs->ex->st, 0, err, sizeof err) != STORE_OK;
    }
    if (bad) {
        say("%sclustertwin %s: %s\n", rs->pg->on ? "\n" : "", rs->ex->cmd, err);
        rs->write_failed = 1;
    }
    free(z);
    progress_draw(rs->pg, 0);
    if (!bad) testpause_tick();
}

/* ---- the pool ------------------------------------------------------------------ */

enum { OP_STOP = 0, OP_CHECK = 1, OP_RUN = 2 };

typedef struct item {
    int32_t op, p, r, pad;
} item;

typedef struct worker {
    pid_t pid;
    int to, from;                    /* fds */
    int busy;                        /* item index + 1, 0 idle */
    unsigned char *has;              /* points this worker has loaded */
} worker;

struct sweep_pool {
    worker *w;
    int n;
};

static void worker_main(sweep *sw, int in, int out) {
    for (;;) {
        item it;
        if (read_all(in, &it, sizeof it) != 0 || it.op == OP_STOP) break;
        char *payload = NULL;
        int st = it.op == OP_CHECK ? check_one(sw, it.p, &payload) : run_one(sw, it.p, it.r, &payload);
        size_t n = payload ? strlen(payload) : 0;
        msg_hdr h = { it.p, it.r, st, it.op, n };
        int bad = write_all(out, &h, sizeof h) < 0 || (n && write_all(out, payload, n) < 0);
        free(payload);
        if (bad) break;
    }
}

static void pool_stop(sweep_pool *pl, int kill_busy) {
    if (!pl) return;
    for (int k = 0; k < pl->n; k++) {
        close(pl->w[k].to);
        if (kill_busy && pl->w[k].pid && pl->w[k].busy) kill(pl->w[k].pid, SIGTERM);
    }
    for (int k = 0; k < pl->n; k++) {
        if (pl->w[k].pid) waitpid(pl->w[k].pid, NULL, 0);
        close(pl->w[k].from);
        free(pl->w[k].has);
    }
    free(pl->w);
    free(pl);
}

/* Fork n workers (they inherit sw: the point texts and whatever the parent
 * has loaded). NULL when none could be started. */
static sweep_pool *pool_start(sweep *sw, int n, const char *cmd) {
    sweep_pool *pl = calloc(1, sizeof *pl);
    if (!pl || !(pl->w = calloc((size_t)n, sizeof *pl->w))) {
        free(pl);
        return NULL;
    }
    fflush(NULL);
    for (; pl->n < n; pl->n++) {
        int a[2], b[2];
        worker *w = &pl->w[pl->n];
        if (!(w->has = calloc((size_t)sw->n_points + 1, 1))) break;
        for (int p = 0; p < sw->n_points; p++) w->has[p] = sw->loaded[p] != NULL;
        if (pipe(a) < 0) break;
        if (pipe(b) < 0) {
            close(a[0]);
            close(a[1]);
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            close(a[0]), close(a[1]), close(b[0]), close(b[1]);
            break;
        }
        if (pid == 0) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGPIPE, SIG_DFL);
            close(a[1]);
            close(b[0]);
            for (int k = 0; k < pl->n; k++) close(pl->w[k].to), close(pl->w[k].from);
            worker_main(sw, a[0], b[1]);
            _exit(0);
        }
        close(a[0]);
        close(b[1]);
        w->pid = pid;
        w->to = a[1];
        w->from = b[0];
    }
    if (pl->n == 0) {
        say("clustertwin %s: cannot start worker processes: %s\n", cmd, strerror(errno));
        free(pl->w[0].has);
        free(pl->w);
        free(pl);
        return NULL;
    }
    return pl;
}

typedef void (*reply_fn)(void *ctx, const msg_hdr *h, const char *payload);

/* Do items[0..n) on the pool (or in this process when pl is NULL), calling
 * reply for each as it comes back. A worker given a run prefers one of the
 * points it has loaded (it checked or ran it), so each point is loaded by
 * few workers. Stops handing out when *stop is set. 0, or -1 when a worker
 * died (message printed). */
static int pool_do(sweep_pool *pl, sweep *sw, const item *items, int n, reply_fn reply, void *ctx,
                   volatile int *stop, const char *cmd) {
    if (n == 0) return 0;
    if (!pl) {
        for (int i = 0; i < n && !interrupted && !*stop; i++) {
            char *payload = NULL;
            int st = items[i].op == OP_CHECK ? check_one(sw, items[i].p, &payload)
                                             : run_one(sw, items[i].p, items[i].r, &payload);
            msg_hdr h = { items[i].p, items[i].r, st, items[i].op, payload ? strlen(payload) : 0 };
            reply(ctx, &h, payload ? payload : "");
            free(payload);
        }
        return 0;
    }
    unsigned char *given = calloc((size_t)n, 1);
    struct pollfd *pf = calloc((size_t)pl->n, sizeof *pf);
    int *who = calloc((size_t)pl->n, sizeof *who);
    int first = 0, busy = 0, rc = given && pf && who ? 0 : -1;
    while (rc == 0) {
        for (int k = 0; k < pl->n && !interrupted && !*stop; k++) {
            worker *w = &pl->w[k];
            if (w->busy || w->pid == 0) continue;
            while (first < n && given[first]) first++;
            if (first >= n) break;
            int pick = first;
            for (int i = first; i < n && i < first + 256; i++)          /* affinity */
                if (!given[i] && w->has[items[i].p]) {
                    pick = i;
                    break;
                }
            if (write_all(w->to, &items[pick], sizeof items[pick]) < 0) {
                rc = -1;
                break;
            }
            given[pick] = 1;
            w->has[items[pick].p] = 1;
            w->busy = pick + 1;
            busy++;
        }
        if (busy == 0 || rc) break;
        int np = 0;
        for (int k = 0; k < pl->n; k++)
            if (pl->w[k].busy) {
                pf[np].fd = pl->w[k].from;
                pf[np].events = POLLIN;
                pf[np].revents = 0;
                who[np++] = k;
            }
        int ready = poll(pf, (nfds_t)np, interrupted ? 0 : 1000);
        if (ready < 0 && errno == EINTR) {
            if (interrupted) break;
            continue;
        }
        if (ready == 0 && interrupted) break;
        for (int i = 0; i < np && ready > 0; i++) {
            if (!pf[i].revents) continue;
            worker *w = &pl->w[who[i]];
            msg_hdr h;
            int got = read_all(w->from, &h, sizeof h);
            char *payload = NULL;
            if (got == 0 && h.n < ((uint64_t)1 << 36)) {
                payload = malloc(h.n + 1);
                if (!payload || (h.n && read_all(w->from, payload, h.n) != 0)) got = -1;
                else payload[h.n] = 0;
            } else if (got == 0) {
                got = -1;
            }
            if (got != 0) {
                free(payload);
                if (!interrupted) {
                    int ws = 0;
                    waitpid(w->pid, &ws, 0);
                    const item *t = &items[w->busy - 1];
                    say("\nclustertwin %s: a worker died %s point %s replica %d (%s %d)\n", cmd,
                        t->op == OP_CHECK ? "checking" : "running", sw->key[t->p], t->r,
                        WIFSIGNALED(ws) ? "signal" : "exit status", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
                    w->pid = 0;
                    rc = -1;
                }
                w->busy = 0;
                busy--;
                continue;
            }
            reply(ctx, &h, payload);
            free(payload);
            w->busy = 0;
            busy--;
        }
    }
    /* what is still out (interrupted, or a worker died): stop it */
    for (int k = 0; busy && k < pl->n; k++)
        if (pl->w[k].busy && pl->w[k].pid) {
            kill(pl->w[k].pid, SIGTERM);
            waitpid(pl->w[k].pid, NULL, 0);
            pl->w[k].pid = 0;
            pl->w[k].busy = 0;
        }
    free(given);
    free(pf);
    free(who);
    return rc;
}

/* ---- checking ---------------------------------------------------------------------- */

typedef struct check_ctx {
    int bad;                         /* the first failing point, or -1 */
    char *msg;
    sweep *sw;                       /* its unfit[] gets the points that do not fit */
} check_ctx;

static void on_check(void *ctx, const msg_hdr *h, const char *payload) {
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

/* The points the MPI rank k of size runs (a contiguous share of the
 * point-major runs, so a rank loads only its own points). */
static void share_of(long long total, int k, int size, long long *lo, long long *hi) {
    *lo = total * k / size;
    *hi = total * (k + 1) / size;
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

int sweep_check(sweep *sw, const char *cmd, int jobs) {
    int rc = sweep_points(sw, cmd);
    if (rc == EXIT_OK) rc = point_texts(sw, cmd);
    int rank = comm_rank(), size = comm_size();
    item *items = NULL;
    int n = 0;
    check_ctx c = { -1, NULL, sw };
    if (rc == EXIT_OK) {
        items = calloc((size_t)sw->n_points + 1, sizeof *items);
        if (!items) rc = EXIT_RUN_FAILED;
    }
    if (rc == EXIT_OK) {
        long long total = (long long)sw->n_points * sw->replicas, lo = 0, hi = total;
        if (size > 1) share_of(total, rank, size, &lo, &hi);
        for (int p = 0; p < sw->n_points; p++) {
            long long a = (long long)p * sw->replicas, b = a + sw->replicas;
            if (b > lo && a < hi) items[n++] = (item){ OP_CHECK, p, 0, 0 };
        }
        if (jobs > 1 && n > 1 && !sw->pool) sw->pool = pool_start(sw, jobs < n ? jobs : n, cmd);
        volatile int stop = 0;
        if (pool_do(sw->pool, sw, items, n, on_check, &c, &stop, cmd) < 0) rc = EXIT_RUN_FAILED;
    }
    free(items);
    if (size > 1) {
        /* every rank's verdict to rank 0, which names the first bad point,
         * and the points that do not fit (int32 point, then the reason);
         * then the outcome to all */
        int32_t mine[2] = { rc != EXIT_OK ? -2 : c.bad, 0 };
        for (int p = 0; p < sw->n_points; p++) mine[1] += sw->unfit[p] != NULL;
        if (rank != 0) {
            comm_send(mine, sizeof mine, 0, TAG_COUNT);
            if (mine[0] >= 0) comm_send(c.msg ? c.msg : "", strlen(c.msg ? c.msg : "") + 1, 0, TAG_RESULT);
            for (int p = 0; p < sw->n_points; p++) {
                if (!sw->unfit[p]) continue;
                size_t k = strlen(sw->unfit[p]) + 1;
                char *m = malloc(sizeof(int32_t) + k);
                if (!m) comm_abort(1);
                int32_t p32 = p;
                memcpy(m, &p32, sizeof p32);
                memcpy(m + sizeof p32, sw->unfit[p], k);
                comm_send(m, sizeof p32 + k, 0, TAG_RESULT);
                free(m);
            }
        } else {
            for (int src = 1; src < size; src++) {
                int32_t theirs[2];
                if (comm_recv(theirs, sizeof theirs, src, TAG_COUNT) < 0) theirs[0] = -2, theirs[1] = 0;
                if (theirs[0] == -2 && rc == EXIT_OK) rc = EXIT_RUN_FAILED;
                if (theirs[0] >= 0) {
                    void *m = NULL;
                    if (comm_recv_any_size(&m, src, TAG_RESULT) >= 0 && (c.bad < 0 || theirs[0] < c.bad)) {
                        free(c.msg);
                        c.msg = m;
                        c.bad = theirs[0];
                    } else {
                        free(m);
                    }
                }
                for (int i = 0; i < theirs[1]; i++) {
                    void *m = NULL;
                    long got = comm_recv_any_size(&m, src, TAG_RESULT);
                    int32_t p32 = -1;
                    if (got > (long)sizeof p32) memcpy(&p32, m, sizeof p32);
                    if (p32 >= 0 && p32 < sw->n_points && !sw->unfit[p32] && ((char *)m)[got - 1] == 0)
                        sw->unfit[p32] = strdup((char *)m + sizeof p32);
                    else if (p32 < 0 && rc == EXIT_OK)
                        rc = EXIT_RUN_FAILED;
                    free(m);
                }
            }
            all_unfit(sw, &c);
        }
        int32_t out[2] = { rc, c.bad };
        comm_bcast(out, sizeof out, 0);
        rc = out[0];
        c.bad = out[1];
    }
    if (size <= 1) all_unfit(sw, &c);
    if (rc == EXIT_OK && c.bad >= 0) {
        say("clustertwin %s: %s\n", cmd, c.msg ? c.msg : "bad input");
        rc = EXIT_BAD_INPUT;
    }
    free(c.msg);
    if (rc != EXIT_OK) {
        pool_stop(sw->pool, 1);
        sw->pool = NULL;
    }
    return rc;
}

int sweep_prepare(sweep *sw, const char *cmd) { return sweep_check(sw, cmd, 1); }

/* ---- the whole sweep ------------------------------------------------------------ */

static void on_run(void *ctx, const msg_hdr *h, const char *payload) {
    on_result(ctx, h->p, h->r, h->status, payload, h->n);
}

int sweep_execute(sweep *sw, const int *pts, int np, sweep_exec *ex) {
    int rank = comm_rank(), size = comm_size();
    ex->ran = ex->skipped = ex->failed = ex->unfit = 0;
    double t0 = cli_wall_s();
    task *todo = NULL;
    int nt = 0, status = EXIT_OK;
    char err[2048];
    if (rank == 0) {
        char *params = sweep_params_json(sw), *sets = sweep_sets_json(sw);
        int src = params && sets ? STORE_OK : STORE_FAILED;
        if (src == STORE_OK && !sw->id)
            src = sweepdb_begin(ex->st, sw->base->name, sw->file, sw->xml, params, sets, sw->replicas, &sw->id, err,
                                sizeof err);
        free(params);
        free(sets);
        todo = malloc(((size_t)np * (size_t)sw->replicas + 1) * sizeof *todo);
        unsigned char *done = malloc((size_t)sw->replicas + 1);
        if (!todo || !done) src = STORE_FAILED, snprintf(err, sizeof err, "out of memory");
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
                todo[nt].p = p;
                todo[nt++].r = r;
            }
        }
        free(done);
        if (src != STORE_OK) {
            say("clustertwin %s: %s\n", ex->cmd, err);
            status = src == STORE_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
            nt = -1;
        }
    }
    if (size > 1) {
        int32_t n32 = nt;
        if (comm_bcast(&n32, sizeof n32, 0) < 0) return EXIT_RUN_FAILED;
        nt = n32;
        if (rank != 0 && nt > 0 && !(todo = malloc((size_t)nt * sizeof *todo))) comm_abort(1);
        if (nt > 0 && comm_bcast(todo, (size_t)nt * sizeof *todo, 0) < 0) {
            free(todo);
            return EXIT_RUN_FAILED;
        }
    }
    if (nt < 0) {
        free(todo);
        return status == EXIT_OK ? EXIT_RUN_FAILED : status;
    }
    /* this rank's share: a contiguous block of the point-major list */
    long long lo = 0, hi = nt;
    if (size > 1) share_of(nt, rank, size, &lo, &hi);
    int mine = (int)(hi - lo);
    item *share = malloc(((size_t)mine + 1) * sizeof *share);
    if (!share) {
        free(todo);
        return EXIT_RUN_FAILED;
    }
    for (int i = 0; i < mine; i++) share[i] = (item){ OP_RUN, todo[lo + i].p, todo[lo + i].r, 0 };
    progress pg = { .on = ex->progress && rank == 0, .total = size > 1 ? mine : nt, .t0 = cli_wall_s() };
    result_sink rs = { .sw = sw, .ex = ex, .pg = &pg, .keep = rank != 0 };
    interrupted = 0;
    struct sigaction sa, ign, old_int, old_term, old_pipe;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    ign = sa;
    ign.sa_handler = SIG_IGN;                 /* a dead worker's pipe: an error, not a signal */
    sigaction(SIGPIPE, &ign, &old_pipe);
    progress_draw(&pg, 0);
    int own = !sw->pool && ex->jobs > 1 && mine > 1;      /* a pool started here is stopped here */
    if (own) sw->pool = pool_start(sw, ex->jobs < mine ? ex->jobs : mine, ex->cmd);
    int prc = own && !sw->pool ? -1 : pool_do(sw->pool, sw, share, mine, on_run, &rs, &rs.write_failed, ex->cmd);
    if (own || interrupted || prc < 0) {
        pool_stop(sw->pool, 1);
        sw->pool = NULL;
    }
    progress_draw(&pg, 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (size > 1) {
        if (rank != 0) {
            int32_t k = rs.n;
            if (comm_send(&k, sizeof k, 0, TAG_COUNT) < 0) prc = -1;
            for (int i = 0; i < rs.n && prc == 0; i++)
                if (comm_send(rs.buf[i], rs.len[i], 0, TAG_RESULT) < 0) prc = -1;
        } else {
            for (int src = 1; src < size; src++) {
                int32_t k = 0;
                if (comm_recv(&k, sizeof k, src, TAG_COUNT) < 0) {
                    prc = -1;
                    break;
                }
                for (int i = 0; i < k; i++) {
                    void *m = NULL;
                    long got = comm_recv_any_size(&m, src, TAG_RESULT);
                    if (got < (long)sizeof(msg_hdr)) {
                        free(m);
                        prc = -1;
                        break;
                    }
                    msg_hdr h;
                    memcpy(&h, m, sizeof h);
                    if (h.p >= 0 && h.p < sw->n_points && h.n == (uint64_t)(got - (long)sizeof h))
                        on_result(&rs, h.p, h.r, h.status, (char *)m + sizeof h, h.n);
                    else
                        prc = -1;
                    free(m);
                }
            }
        }
    }
    if (rs.in_batch && sweepdb_batch(ex->st, 0, err, sizeof err) != STORE_OK) {
        say("clustertwin %s: %s\n", ex->cmd, err);
        rs.write_failed = 1;
    }
    for (int i = 0; i < rs.n; i++) free(rs.buf[i]);
    free(rs.buf);
    free(rs.len);
    free(share);
    free(todo);
    ex->wall_s = cli_wall_s() - t0;
    if (rank != 0) return prc == 0 ? EXIT_OK : EXIT_RUN_FAILED;
    if (interrupted) {
        say("clustertwin %s: interrupted: %d runs stored in %s; run the same command again to resume\n",
            ex->cmd, ex->ran, store_path(ex->st));
        return EXIT_RUN_FAILED;
    }
    if (prc < 0 || rs.write_failed || ex->failed) return EXIT_RUN_FAILED;
    return EXIT_OK;
}
