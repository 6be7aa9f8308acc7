/*
 * reliability: failure processes per component instance, their expansion
 * from a scenario's <failure> elements and the catalog's fleet profiles
 * (reliability_profiles.c), and the rate arithmetic to check them with.
 *
 * Load: called a handful of times per scenario when the world is built;
 * nothing here is on the event path.
 */
#include "models/reliability.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const component_names[REL_COMPONENT_COUNT] = {
    "gpu", "hbm", "node", "nic", "switch", "storage", "software"
};

int rel_component_parse(const char *z) {
    for (int i = 0; z && i < REL_COMPONENT_COUNT; i++)
        if (strcmp(z, component_names[i]) == 0) return i;
    return -1;
}

const char *rel_component_name(rel_component c) {
    return (unsigned)c < REL_COMPONENT_COUNT ? component_names[c] : "?";
}

rel_scope rel_component_scope(rel_component c) {
    switch (c) {
    case REL_NIC: return REL_PER_NIC;
    case REL_NODE:
    case REL_SWITCH:
    case REL_STORAGE: return REL_PER_NODE;
    default: return REL_PER_GPU;
    }
}

int rel_instances_per_node(rel_component c, const node_spec *n) {
    if (!n) return 0;
    switch (rel_component_scope(c)) {
    case REL_PER_GPU: return n->gpus;
    case REL_PER_NIC: return n->nics;
    default: return 1;
    }
}

const char *rel_detection_name(rel_detection d) {
    return d == REL_DETECT_WATCHDOG ? "watchdog" : "crash";
}

int rel_detection_parse(const char *z) {
    if (z && strcmp(z, "crash") == 0) return REL_DETECT_CRASH;
    if (z && strcmp(z, "watchdog") == 0) return REL_DETECT_WATCHDOG;
    return -1;
}

int rel_repair_parse(const char *z, int *needs_repair, double *mttr_s) {
    static const struct { const char *z; double mttr_s; } repairs[] = {
        { "restart", 0 }, { "gpu-swap", REL_MTTR_GPU_SWAP_S }, { "node-part", REL_MTTR_NODE_PART_S },
        { "link", REL_MTTR_LINK_S }, { "reboot", REL_MTTR_REBOOT_S },
    };
    for (size_t i = 0; z && i < sizeof repairs / sizeof repairs[0]; i++) {
        if (strcmp(z, repairs[i].z) != 0) continue;
        *needs_repair = i > 0;
        *mttr_s = repairs[i].mttr_s;
        return 0;
    }
    return -1;
}

int rel_dist_parse(const char *z) {
    if (!z || !*z || strcmp(z, "exponential") == 0) return REL_EXPONENTIAL;
    if (strcmp(z, "weibull") == 0) return REL_WEIBULL;
    return -1;
}

const char *rel_dist_name(rel_dist d) {
    return d == REL_WEIBULL ? "weibull" : "exponential";
}

double rel_mttr_default_s(rel_component c) {
    switch (c) {
    case REL_GPU:
    case REL_HBM: return REL_MTTR_GPU_SWAP_S;
    case REL_NODE:
    case REL_STORAGE: return REL_MTTR_NODE_PART_S;
    case REL_NIC:
    case REL_SWITCH: return REL_MTTR_LINK_S;
    default: return 0;
    }
}

/* How a class is detected and repaired when a scenario names only the
 * class: a dead link or switch port usually leaves NCCL waiting on a peer
 * until the watchdog fires (the IB transport retries for a while before
 * reporting); everything else crashes. Software needs no repair. */
static rel_detection default_detection(rel_component c) {
    return c == REL_SWITCH ? REL_DETECT_WATCHDOG : REL_DETECT_CRASH;
}

static int default_needs_repair(rel_component c) {
    return c != REL_SOFTWARE;
}

/* ---- Weibull ---------------------------------------------------------- */

/* In log space: Γ(1 + 1/shape) overflows a double for shape < 0.0059
 * (GSL's gamma aborted the program there), its logarithm does not. An
 * overflowing mean is +inf, an underflowing scale 0; never NaN for positive
 * arguments. */
double rel_weibull_mean_s(double scale_s, double shape) {
    if (!(scale_s > 0) || !(shape > 0)) return NAN;
    return exp(log(scale_s) + lgamma(1 + 1 / shape));
}

double rel_weibull_scale_s(double mean_s, double shape) {
    if (!(mean_s > 0) || !(shape > 0)) return NAN;
    return exp(log(mean_s) - lgamma(1 + 1 / shape));
}

double rel_weibull_survival(double scale_s, double shape, double t_s) {
    if (!(scale_s > 0) || !(shape > 0) || !(t_s >= 0)) return NAN;
    return exp(-pow(t_s / scale_s, shape));
}

/* Where the residual life switches from the log1p form to the direct
 * inversion: r, the cumulative hazard still to run over the hazard already
 * run. Above 1e12 the age is a negligible part of the result (t is about
 * age · r^(1/shape), so subtracting the age loses nothing), while
 * age · r^(1/shape) could overflow for small shapes; below it the log1p
 * form keeps the digits the direct form would cancel. A numerical switch,
 * not a model parameter: any value from about 1e6 to 1e15 gives the same
 * draws to rounding (tests/test_reliability.c checks the inversion to 1e-9). */
#define RESIDUAL_DIRECT_RATIO 1e12

double rel_weibull_residual_s(double scale_s, double shape, double age_s, double u) {
    if (!(scale_s > 0) || !(shape > 0) || !(age_s >= 0) || !(u > 0 && u <= 1)) return NAN;
    double e = -log(u);                               /* cumulative hazard still to run */
    if (!(age_s > 0)) return scale_s * pow(e, 1 / shape);
    /* r = e / (age/scale)^shape, the hazard still to run over the hazard
     * already run, in logs so that neither overflows for any age. */
    double r = exp(log(e) - shape * log(age_s / scale_s));
    if (r > RESIDUAL_DIRECT_RATIO) {
        /* A young instance: the direct form is exact enough, and the
         * log1p form would overflow. */
        double t = scale_s * pow(pow(age_s / scale_s, shape) + e, 1 / shape) - age_s;
        return t > 0 ? t : 0;
    }
    return age_s * expm1(log1p(r) / shape);
}

/* log of the Weibull scale for a mean and shape; -inf when it underflows. */
static double log_scale(double mean_s, double shape) {
    return log(mean_s) - lgamma(1 + 1 / shape);
}

double rel_weibull_min_shape(double mean_s) {
    if (!(mean_s > 0) || !isfinite(mean_s)) return NAN;
    double lo = 1e-6, hi = 1.0, floor_log = log(REL_MIN_SCALE_S);
    if (log_scale(mean_s, hi) < floor_log) return NAN;           /* mean under 1 ns */
    for (int i = 0; i < 100; i++) {       /* log_scale rises with shape on (0, 1] */
        double mid = 0.5 * (lo + hi);
        if (log_scale(mean_s, mid) >= floor_log) hi = mid;
        else lo = mid;
    }
    return hi;
}

int rel_weibull_check(double mean_s, double shape, char *why, size_t len) {
    if (!(mean_s > 0) || !isfinite(mean_s) || !(shape > 0) || !isfinite(shape)) {
        if (why && len) snprintf(why, len, "a Weibull process needs a finite positive mtbf and shape");
        return -1;
    }
    double ls = log_scale(mean_s, shape);
    if (ls >= log(REL_MIN_SCALE_S)) return 0;
    if (why && len) {
        double min = rel_weibull_min_shape(mean_s);
        snprintf(why, len,
                 "a Weibull shape of %g with a mean time between failures of %.4g s puts the distribution's "
                 "scale at 1e%.0f s, below the clock's resolution of 1 ns (nearly every failure would land "
                 "at the same instant); use a shape of at least %.2g",
                 shape, mean_s, floor(ls / log(10)), isnan(min) ? 1.0 : min);
    }
    return -1;
}

int rel_process_init(rel_process *p, rel_component c, const char *cause, double mtbf_s,
                     rel_dist d, double shape, double mttr_s, rel_detection det,
                     int needs_repair) {
    if (!p || (unsigned)c >= REL_COMPONENT_COUNT || !(mtbf_s > 0) || !isfinite(mtbf_s)) return -1;
    if (d == REL_WEIBULL && !(shape > 0 && shape <= REL_SHAPE_MAX)) return -1;
    if (d == REL_WEIBULL && rel_weibull_check(mtbf_s, shape, NULL, 0) < 0) return -1;
    if (!(mttr_s >= 0)) return -1;
    rel_process q;
    memset(&q, 0, sizeof q);
    q.component = c;
    q.scope = rel_component_scope(c);
    snprintf(q.cause, sizeof q.cause, "%s", cause && *cause ? cause : rel_component_name(c));
    q.mtbf_s = mtbf_s;
    q.distribution = d;
    q.shape = d == REL_WEIBULL ? shape : 1;
    q.scale_s = d == REL_WEIBULL ? rel_weibull_scale_s(mtbf_s, shape) : mtbf_s;
    q.mttr_s = mttr_s;
    q.detection = det;
    q.detect_s = det == REL_DETECT_WATCHDOG ? REL_WATCHDOG_S : REL_CRASH_DETECT_S;
    q.needs_repair = needs_repair ? 1 : 0;
    *p = q;
    return 0;
}

/* ---- Expansion -------------------------------------------------------- */

static int set_why(char *why, size_t len, const char *fmt, const char *arg) {
    if (why && len) snprintf(why, len, fmt, arg ? arg : "");
    return -1;
}

/* The checks every <failure> gets: the component (comp, -1 when not
 * given), the distribution (d), shape, mtbf and mttr. 0 or -1 with why. */
static int check_spec(const rel_spec *s, int *comp, int *d, char *why, size_t len) {
    *comp = -1;
    if (s->component && *s->component) {
        *comp = rel_component_parse(s->component);
        if (*comp < 0)
            return set_why(why, len, "unknown component \"%s\"; expected gpu, hbm, node, nic, "
                           "switch, storage or software", s->component);
    }
    *d = rel_dist_parse(s->distribution);
    if (*d < 0)
        return set_why(why, len, "unknown distribution \"%s\"; expected exponential or weibull",
                       s->distribution);
    if (*d == REL_WEIBULL && !(s->shape > 0 && s->shape <= REL_SHAPE_MAX))
        return set_why(why, len, "a Weibull shape must be in (0, 20]%s", NULL);
    if (!(s->mttr_s >= 0) || !(s->mtbf_s >= 0))
        return set_why(why, len, "mtbf and mttr must not be negative%s", NULL);
    if (s->mtbf_s > 0 && s->mtbf_s < REL_MIN_MTBF_S) {
        if (why && len)
            snprintf(why, len, "mtbf=\"%g s\" must be at least %g s: a failure stream that fast rounds its gaps "
                     "to the clock's 1 ns and never lets the run end", s->mtbf_s, REL_MIN_MTBF_S);
        return -1;
    }
    return 0;
}

/* A <failure> without a profile: one process of its component. */
static int expand_plain(const rel_spec *s, int comp, int d, rel_process *out, int room, char *why,
                        size_t len) {
    if (comp < 0) return set_why(why, len, "a failure needs a component or a profile%s", NULL);
    if (!(s->mtbf_s > 0)) return set_why(why, len, "mtbf must be positive%s", NULL);
    if (d == REL_WEIBULL && rel_weibull_check(s->mtbf_s, s->shape, why, len) < 0) return -1;
    if (room > 0) {
        double mttr = s->mttr_s > 0 ? s->mttr_s : rel_mttr_default_s(comp);
        if (rel_process_init(out, comp, s->cause, s->mtbf_s, d, s->shape, mttr,
                             default_detection(comp), default_needs_repair(comp)) < 0)
            return set_why(why, len, "invalid failure process%s", NULL);
    }
    return 1;
}

/* A <failure profile=...> of profile p: one process per cause (of comp
 * only, when given), every fleet profile through the same conversion. */
static int expand_profile(const rel_profile *p, const rel_spec *s, int comp, int d, rel_process *out, int room,
                          char *why, size_t len) {
    /* mtbf given with a profile: scale every cause by the same factor so the
     * per-GPU equivalent MTBF becomes mtbf (the mix is kept). */
    double k = s->mtbf_s > 0 ? s->mtbf_s / rel_profile_gpu_mtbf_s(p) : 1;
    int n = 0;
    for (int i = 0; i < p->n_causes; i++) {
        const rel_cause *c = &p->causes[i];
        if ((comp >= 0 && c->component != (rel_component)comp) || !(c->count > 0)) continue;
        double mtbf = k * rel_profile_cause_mtbf_s(p, i);
        if (d == REL_WEIBULL && rel_weibull_check(mtbf, s->shape, why, len) < 0) return -1;
        if (n < room) {
            double mttr = s->mttr_s > 0 ? s->mttr_s : c->mttr_s;
            if (rel_process_init(&out[n], c->component, c->label, mtbf, d, s->shape, mttr,
                                 c->detection, c->needs_repair) < 0)
                return set_why(why, len, "invalid failure process for cause \"%s\"", c->label);
        }
        n++;
    }
    if (n == 0 && comp >= 0) {
        if (why && len)
            snprintf(why, len, "failure profile \"%s\" has no cause of component \"%s\"", p->name,
                     rel_component_name(comp));
        return -1;
    }
    return n;
}

static int expand_one(const catalog *c, const rel_spec *s, rel_process *out, int room, char *why, size_t len) {
    int comp, d;
    if (check_spec(s, &comp, &d, why, len) < 0) return -1;
    if (!s->profile || !*s->profile) return expand_plain(s, comp, d, out, room, why, len);
    const rel_profile *p = rel_profile_find(c, s->profile);
    if (!p) {
        char names[256];
        if (why && len)
            snprintf(why, len, "unknown failure profile \"%s\"; expected one of: %s", s->profile,
                     rel_profile_names(c, names, sizeof names));
        return -1;
    }
    return expand_profile(p, s, comp, d, out, room, why, len);
}

int rel_profile_processes(const rel_profile *p, rel_process *out, int max, char *why, size_t len) {
    if (!p || max < 0 || (max > 0 && !out)) return set_why(why, len, "invalid arguments%s", NULL);
    rel_spec spec = { .profile = p->name };
    return expand_profile(p, &spec, -1, REL_EXPONENTIAL, out, max, why, len);
}

int rel_expand(const catalog *c, const rel_spec *s, int n, rel_process *out, int max, char *why, size_t len) {
    if (why && len) why[0] = 0;
    if (n < 0 || (n > 0 && !s) || max < 0 || (max > 0 && !out))
        return set_why(why, len, "invalid arguments%s", NULL);
    int total = 0;
    for (int i = 0; i < n; i++) {
        int room = max - total > 0 ? max - total : 0;
        int k = expand_one(c, &s[i], room ? out + total : NULL, room, why, len);
        if (k < 0) return -1;
        total += k;
    }
    return total;
}

/* ---- Rates ------------------------------------------------------------ */

int rel_fleet_of(rel_fleet *f, const node_spec *n, int nodes) {
    if (!f || !n || nodes < 0) return -1;
    f->nodes = nodes;
    f->gpus = (double)nodes * n->gpus;
    f->nics = (double)nodes * n->nics;
    return 0;
}

double rel_fleet_instances(const rel_fleet *f, rel_scope s) {
    if (!f) return 0;
    switch (s) {
    case REL_PER_NIC: return f->nics;
    case REL_PER_NODE: return f->nodes;
    default: return f->gpus;
    }
}

double rel_instances(const rel_process *p, const rel_fleet *f) {
    return p ? rel_fleet_instances(f, p->scope) : 0;
}

double rel_job_rate_per_s(const rel_process *p, int n, const rel_fleet *f) {
    double r = 0;
    for (int i = 0; p && f && i < n; i++)
        if (p[i].mtbf_s > 0) r += rel_instances(&p[i], f) / p[i].mtbf_s;
    return r;
}

double rel_rate_per_s(const double *count, const double *mtbf_s, int n) {
    double r = 0;
    for (int i = 0; count && mtbf_s && i < n; i++)
        if (mtbf_s[i] > 0) r += count[i] / mtbf_s[i];
    return r;
}

double rel_mean_interruptions(double instances, double t_s, double mtbf_s) {
    return mtbf_s > 0 ? instances * t_s / mtbf_s : 0;
}

double rel_mtti_s(double rate_per_s) {
    return rate_per_s > 0 ? 1 / rate_per_s : INFINITY;
}
