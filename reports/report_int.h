/*
 * report_int: what the run report's files share (reports/report*.c), and
 * no one else: the headline figures and how each is read, the per-queue
 * and per-service figures, and the writers report_write dispatches to.
 *
 *   report_figures.c   the figures, the answer sentence, the number styles
 *   report_html.c      XHTML page pieces (also the sweep report's)
 *   report_run.c       the HTML report of one run
 *   report_compare.c   the HTML report of two runs, charts overlaid
 *   report_md.c        the Markdown report
 *   report_csv.c       the CSV files
 */
#ifndef CT_REPORT_INT_H
#define CT_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "reports/charts.h"
#include "reports/rundata.h"

/* How a figure reads (base/numfmt.h does the work; NAN reads "n/a"). */
typedef enum fmt { F_DUR, F_USD, F_GPUH, F_KWH, F_KG, F_PCT, F_COUNT, F_SECONDS, F_RPS } fmt;
const char *fmt_value(fmt f, double v, char *b, size_t n);

/* "+1.2 d (+3.4%)": b - a in a's style with the relative change; sign is
 * the direction of the change (0 when either is not known). */
void diff_text(fmt f, double a, double b, char *out, size_t n, int *sign);

/* ---- the headline figures ------------------------------------------------ */

enum { M_FINISH, M_COST, M_GPU_HOURS, M_ENERGY, M_CO2, M_UTIL, M_ETTR, M_FAILURES, M_INTERRUPTIONS, M_LOST,
       M_STEP, M_MFU, M_JOBS_DONE, M_WAIT, M_SIMULATED, M_GOODPUT, NM };

typedef struct mdef_t {
    const char *key, *label;
    fmt f;
    int card;                        /* a card in the HTML headline: 1 always, 2 when the run has services */
} mdef_t;
extern const mdef_t mdef[NM];

typedef struct figures {
    double v[NM];
    char note[NM][192];
} figures;

void figures_of(const rundata *r, figures *m);

/* The scenario's question answered in one sentence (two when a run has
 * both jobs and services). Reads the cost series of the run. */
void answer(rundata_db *rd, const rundata *r, const figures *m, char *b, size_t n);

/* ---- per-queue figures ---------------------------------------------------- */

typedef struct qstat {
    char name[96];
    int jobs, done, started;
    double gpu_hours, mean_wait_s, p50_wait_s, p95_wait_s, max_wait_s;
    double quota_gpus, slowdown;       /* from the world's queues[]; NAN without */
} qstat;

/* The scheduler's queues, then any other a job names; *out malloc'd.
 * Returns the count or -1 (out of memory). */
int queue_stats(const rundata *r, qstat **out);

/* ---- inference services -------------------------------------------------- */

enum { SV_NAME, SV_REQUESTS, SV_REPLICAS, SV_TOKENS, SV_TTFT50, SV_TTFT99, SV_TPOT50, SV_TPOT99, SV_E2E99, SV_SLO,
       SV_GOODPUT, SV_COST, SV_N };      /* SV_COST last: left out when nothing is priced */
extern const char *const sv_cols[SV_N + 1];
extern const char sv_numeric[];
int sv_ncols(const rundata *r);
const char *sv_cell(const rd_service *v, int col, char *b, size_t n);

/* ---- the writers ---------------------------------------------------------- */

/* The HTML page of one run: its charts ch, its topology drawing topo (NULL
 * with topo_why when not drawn). */
void report_html_run(FILE *f, rundata_db *rd, const rundata *r, const charts *ch, const char *topo,
                     const char *topo_why, const char *db_path);

/* The HTML page of two runs: the overlaid charts ch (reports/charts.h,
 * charts_compare), their topologies ta, tb (NULL when not drawn). */
void report_html_compare(FILE *f, rundata_db *rd, const rundata *a, const rundata *b, const charts *ch,
                         const char *ta, const char *tb, const char *db_path);

void report_md_run(FILE *f, rundata_db *rd, const rundata *r);
void report_md_compare(FILE *f, rundata_db *rd, const rundata *a, const rundata *b);

/* The CSV files of run a (and b, compared) into dir. 0, or 1 with err. */
int report_csv(rundata_db *rd, const char *dir, const rundata *a, const rundata *b, char *err, size_t errlen);

/* The paragraph under the title: which run, of what, when; a warning when
 * the run is incomplete. The scenario's text, folded. */
void report_html_meta(FILE *f, const rundata *r, const char *db_path);
void report_html_scenario(FILE *f, const rundata *r);

/* Draw the run's cluster to DIR/PREFIXtopology.svg from its stored
 * scenario. Returns 1 when drawn; else 0 with why set. */
int report_topology(const rundata *r, const char *dir, const char *prefix, char *file, size_t flen, char *why,
                    size_t wlen);

#endif
