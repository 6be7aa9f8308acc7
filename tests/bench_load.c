/*
 * bench_load: how the scenario loader's time grows with the file.
 *
 * Loading was quadratic (issue 16): 60,000 <nodes> took 21 s and 100,000
 * <queue> 92 s. For each kind of element, a scenario of N and one of 8N are
 * loaded (best of 3 each); a linear loader takes about 8x as long for 8x
 * the elements, a quadratic one 64x. The check is on the ratio, not on a
 * time, so a slow or busy machine does not fail it; the limit (32x) leaves
 * room for caches (measured: up to 2.3x more per element once the document no
 * longer fits in them) and noise.
 *
 * Output, and exit status 1 when a ratio is over the limit:
 *   <nodes> 12500 -> 100000: 0.010 s -> 0.120 s, x12.0 (limit x32) ok
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenarios/scenario.h"

#define GROWTH 8                 /* the larger file has GROWTH times the elements */
#define RATIO_LIMIT 32.0         /* linear: 8x, measured 10-18x as the tree outgrows the caches; quadratic: 64x */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct kind {
    const char *label;
    const char *head, *tail;
    const char *line;            /* printf format with one %d */
    int n;                       /* the smaller count; the larger is GROWTH * n */
} kind;

static const kind kinds[] = {
    { "<nodes>", "<?xml version=\"1.0\"?>\n<scenario name=\"b\">\n  <cluster>\n", "  </cluster>\n</scenario>\n",
      "    <nodes type=\"dgx-h100\" count=\"1\"/><!-- %d -->\n", 12500 },
    { "<queue>", "<?xml version=\"1.0\"?>\n<scenario name=\"b\">\n  <scheduler>\n",
      "  </scheduler>\n  <cluster><nodes type=\"dgx-h100\" count=\"1\"/></cluster>\n</scenario>\n",
      "    <queue name=\"q%d\" quota-gpus=\"8\"/>\n", 12500 },
    { "<storage>", "<?xml version=\"1.0\"?>\n<scenario name=\"b\">\n  <cluster>\n    <nodes type=\"dgx-h100\" count=\"1\"/>\n",
      "  </cluster>\n</scenario>\n", "    <storage name=\"s%d\" kind=\"nfs\"/>\n", 10000 },
};

/* Best of 3 load times of n elements of kind k, or a negative value on error. */
static double load_time(const kind *k, int n) {
    size_t cap = strlen(k->head) + strlen(k->tail) + (size_t)n * 80 + 1, len = 0;
    char *t = malloc(cap);
    if (!t) return -1;
    len += (size_t)snprintf(t, cap, "%s", k->head);
    for (int i = 0; i < n; i++) len += (size_t)snprintf(t + len, cap - len, k->line, i + 1);
    len += (size_t)snprintf(t + len, cap - len, "%s", k->tail);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        scenario *s = NULL;
        char err[1024];
        double t0 = now_s();
        int rc = scenario_load_memory(t, len, "bench.xml", &s, err, sizeof err);
        double dt = now_s() - t0;
        scenario_free(s);
        if (rc < 0) {
            fprintf(stderr, "bench_load: %s\n", err);
            free(t);
            return -1;
        }
        if (dt < best) best = dt;
    }
    free(t);
    return best;
}

int main(void) {
    int fail = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const kind *k = &kinds[i];
        double a = load_time(k, k->n), b = load_time(k, GROWTH * k->n);
        if (a < 0 || b < 0) {
            fail = 1;
            continue;
        }
        double ratio = b / (a > 1e-6 ? a : 1e-6);
        int ok = ratio <= RATIO_LIMIT;
        printf("%s %d -> %d: %.3f s -> %.3f s, x%.1f (limit x%.0f) %s\n", k->label, k->n, GROWTH * k->n, a, b, ratio,
               RATIO_LIMIT, ok ? "ok" : "MISSED");
        fail |= !ok;
    }
    return fail;
}
