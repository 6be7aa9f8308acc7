/*
 * failfit: a cluster's own failure rates from its history (issue 22,
 * `clustertwin fit-failures`). Pure functions: what a reason or an XID says
 * about which part failed, and the rate of k failures seen over an exposure
 * of T instance-seconds with its exact confidence interval.
 *
 * The interval is Garwood's exact Poisson interval (F. Garwood, "Fiducial
 * limits for the Poisson distribution", Biometrika 28, 1936; the same as
 * the chi-square bounds of a time-terminated reliability test, MIL-HDBK-781A
 * section 5.9): for k events in exposure T at level 1 - α,
 *
 *     rate_lo = χ²(α/2; 2k) / (2T)          (0 when k = 0)
 *     rate_hi = χ²(1 - α/2; 2k + 2) / (2T)
 *
 * and the MTBF interval is their inverse (1/rate_hi, 1/rate_lo; the upper
 * end is infinite when k = 0). With k = 0 the upper rate is 3.689/T at 95%
 * (the "rule of 3.7"). GSL supplies the chi-square quantile.
 */
#ifndef CT_FAILFIT_H
#define CT_FAILFIT_H

#include <stddef.h>

#include "models/reliability.h"
#include "models/weibull_fit.h"

/* What a reason or an XID is: a component class (rel_component, >= 0), or
 * one of these (not a failure of the fleet). */
#define FAILFIT_PLANNED  (-1)     /* maintenance, upgrades, reservations: not a failure */
#define FAILFIT_APP      (-2)     /* the application's own fault (XID 13, 31, 43, 45): the GPU is healthy */
#define FAILFIT_INFO     (-3)     /* informational: nothing failed (XID 63 row remap recorded, 92 rising SBE) */

/* The class of one reason, and what fixes it. */
typedef struct failfit_class {
    int component;                /* rel_component or FAILFIT_* */
    const char *cause;            /* a short label: "GPU fell off the bus (XID 79)", "NIC or IB link" */
    int needs_repair;             /* 1: a part is replaced; 0: a reboot or restart clears it */
    double mttr_s;                /* what that takes when the history gives no down time (REL_MTTR_*) */
} failfit_class;

/* The class of NVIDIA XID code xid (NVIDIA's Xid catalogue; see
 * failfit.c). An XID the table does not name is a GPU fault that a
 * reboot clears ("GPU, other XID"). */
failfit_class failfit_xid(int xid);

/* The class of a free-text reason (a Slurm drain or down reason, a
 * Kubernetes node condition's message): "XID 79" (and "Xid: 48") go
 * through failfit_xid; otherwise the first rule of the table in failfit.c
 * whose words the reason holds (case-insensitive); else a node failure of
 * cause "other (unclassified reason)". */
failfit_class failfit_reason(const char *reason);

/* A rate from k events over exposure_s instance-seconds, with Garwood's
 * interval at level (0 < level < 1). */
typedef struct failfit_rate {
    double events, exposure_s;
    double rate_per_s, rate_lo_per_s, rate_hi_per_s;
    double mtbf_s, mtbf_lo_s, mtbf_hi_s;   /* mtbf_s, mtbf_hi_s infinite when k = 0 */
} failfit_rate;

/* 0, or -1 when k < 0, exposure_s <= 0 or level is not in (0, 1) (*out
 * unchanged). */
int failfit_poisson(double k, double exposure_s, double level, failfit_rate *out);

/* ---- Fitting a history ------------------------------------------------ */

/* Where an event was seen, most specific first: an XID names the part, a
 * node event carries an operator's or the system's reason, a NODE_FAIL
 * job end says only that a node failed under a job. */
typedef enum failfit_source { FAILFIT_SRC_XID, FAILFIT_SRC_REASON, FAILFIT_SRC_NODE_FAIL } failfit_source;

#define FAILFIT_NODE_MAX 64
#define FAILFIT_NODES_MAX 8               /* nodes of one event (a NODE_FAIL job's first ones) */

typedef struct failfit_event {
    double t_s;                           /* when (Unix seconds) */
    double down_s;                        /* how long the node was out of service; 0 unknown */
    char node[FAILFIT_NODES_MAX][FAILFIT_NODE_MAX];   /* the node(s) it may be on; "" unknown */
    int n_nodes;
    failfit_class c;
    failfit_source source;
} failfit_event;

/* The same failure seen twice: events on one node closer than this are one
 * failure (an XID, the drain it caused, the NODE_FAIL of the job on it).
 * Twice Slurm's default SlurmdTimeout (300 s, slurm.conf(5)), the time
 * after which slurmctld declares a silent node DOWN and ends its jobs with
 * NODE_FAIL, so the job end and the node event of one failure fall in it. */
#define FAILFIT_SAME_FAILURE_S 600.0

/* The fleet the history was seen on. */
typedef struct failfit_fleet {
    double window_s;                      /* the observation window */
    int nodes, gpus_per_node, nics_per_node;
    double t_end_s;                       /* when the window ends (Unix s): the Weibull fit's censoring; 0 none */
} failfit_fleet;

/* Time between failures. Each counted failure is charged to one node (the
 * first its most specific sighting names) and, per component, the time
 * from a node's failure (plus its measured down time: the simulator renews
 * a part when it is repaired, sim/failures.h) to that node's next failure
 * of the component is one lifetime; from its last failure to t_end_s is a
 * censored one. The fit (models/weibull_fit.h) is made from
 * FAILFIT_WEIBULL_MIN_GAPS complete lifetimes on, and the profile takes its
 * shape and mean (distribution="weibull": the renewal process the
 * simulator runs per instance, with the fit's mean scale·Γ(1 + 1/shape)
 * rather than the count's MTBF, which on a young fleet also holds the
 * early failures the shape describes) from FAILFIT_WEIBULL_WRITE_GAPS on, when
 * the likelihood-ratio test rejects the exponential at the fit's level and
 * the simulator accepts the shape for each cause's MTBF
 * (rel_weibull_check). Why two counts: below 10 lifetimes the test's χ²
 * approximation rejects a true exponential at 5% in 7% to 11% of samples
 * (measured: tests/test_weibull_fit.c, test_small_sample_size). For parts
 * of which a node has several (GPUs, NICs) a node's sequence merges its
 * parts' renewal processes, which pulls the shape towards 1 (a
 * superposition of independent renewal processes tends to Poisson:
 * Palm-Khintchine), so the departure from the exponential is understated,
 * never invented. */
#define FAILFIT_WEIBULL_MIN_GAPS 5
#define FAILFIT_WEIBULL_WRITE_GAPS 10

/* One cause of the fitted profile. */
typedef struct failfit_row {
    int component;                        /* rel_component */
    char cause[REL_CAUSE_MAX];
    double instances;                     /* of the component's scope in the fleet */
    failfit_rate r;                       /* events over window x instances */
    double mttr_s;                        /* mean measured down time, else the class's */
    int n_down;                           /* events with a measured down time */
    int needs_repair;
    int has_wb;                           /* wb holds the component's Weibull fit (FAILFIT_WEIBULL_MIN_GAPS) */
    weibull_fit wb;                       /* time between one node's failures of the component, in s */
    double wb_mtbf_s;                     /* the fit's mean per instance for this cause: the node's mean gap
                                             x instances per node x the cause's share of the component */
    int weibull;                          /* 1: the profile writes this cause as Weibull: wb.shape, wb_mtbf_s */
} failfit_row;

/* What the merging did. */
typedef struct failfit_counts {
    int events_in, failures, merged, planned, app, info;
} failfit_counts;

/* Merge the events (sorted in place) into failures, count them by
 * (component, cause) into rows (at most max; sorted by component, then by
 * count, most first) and by component into by_comp[REL_COMPONENT_COUNT]
 * (every component, even with 0 events; cause ""), each with its rate and
 * interval at level, and each component's Weibull fit of the time between
 * failures (above; copied to its causes' rows). Returns the number of
 * rows, or -1 when the fleet is empty, the window not positive or memory
 * runs out. */
int failfit_fit(failfit_event *ev, int n, const failfit_fleet *f, double merge_s, double level, failfit_row *rows,
                int max, failfit_row *by_comp, failfit_counts *counts);

#endif
